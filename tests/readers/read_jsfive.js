// Read an HDF5 file with jsfive (a pure-JavaScript reader of its own, no
// HDF5 library) and print what it found as JSON: every group, dataset and
// attribute by path, with each dataset's shape and values.
//
// usage: node read_jsfive.js JSFIVE_PACKAGE_DIR FILE.h5
//
// Output: {"reader": "jsfive VERSION", "objects": {PATH: {"kind": "group" |
// "dataset", "attrs": {NAME: VALUE}, "shape": [...], "value": [...]}}}, a
// dataset's values flattened in row-major order. Numbers as JSON numbers
// (NaN and infinities as the strings "NaN", "Infinity", "-Infinity"),
// strings as strings. A compound dataset has "value": null and
// "undecoded": "compound": jsfive decodes no compound type (up to 0.4.2 at
// least, "Compound type not yet implemented!"); its shape and attributes are
// still read. Anything else jsfive cannot read, warnings included (it warns
// and gives null for an attribute type it does not know), is an error: one
// line on stderr, exit 1.
'use strict';
const fs = require('fs');
const path = require('path');

function fail(msg) {
  process.stderr.write('read_jsfive: ' + msg + '\n');
  process.exit(1);
}

if (process.argv.length !== 4)
  fail('usage: node read_jsfive.js JSFIVE_PACKAGE_DIR FILE.h5');
const pkgDir = path.resolve(process.argv[2]);
const file = process.argv[3];
let hdf5, version;
try {
  hdf5 = require(pkgDir);
  version = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8')).version;
} catch (e) {
  fail('cannot load jsfive from ' + pkgDir + ': ' + e);
}

// jsfive's own asserts throw a TypeError ("thing is not a function"): say
// where, from the stack, which is what names the unsupported feature.
function describe(e) {
  const where = e && e.stack ? e.stack.split('\n').slice(1, 3).map((l) => l.trim()).join(' < ') : '';
  return String(e) + (where ? ' (' + where + ')' : '');
}

let current = '/';
console.warn = (...args) => {
  throw new Error('jsfive warned at ' + current + ': ' + args.join(' '));
};

function plain(v) {
  if (typeof v === 'number')
    return Number.isFinite(v) ? v : String(v);
  if (typeof v === 'bigint')
    return Number(v);
  if (Array.isArray(v) || ArrayBuffer.isView(v))
    return Array.from(v, plain);
  if (v === null || v === undefined)
    throw new Error('no value');
  return v;
}

function attrs(obj) {
  const out = {};
  for (const [name, value] of Object.entries(obj.attrs)) {
    current = obj.name + '@' + name;
    out[name] = plain(value);
  }
  return out;
}

const objects = {};
function walk(group) {
  current = group.name;
  objects[group.name] = {kind: 'group', attrs: attrs(group)};
  for (const key of group.keys) {
    current = path.posix.join(group.name, key);
    const obj = group.get(key);
    if (obj instanceof hdf5.Group) {
      walk(obj);
      continue;
    }
    const entry = {kind: 'dataset', attrs: attrs(obj)};
    current = obj.name;
    entry.shape = Array.from(obj.shape, Number);
    let dtype;
    try {
      dtype = obj.dtype;
    } catch (e) {
      if (!String(e).includes('Compound type not yet implemented'))
        throw e;
      entry.value = null;
      entry.undecoded = 'compound';
    }
    if (dtype !== undefined)
      entry.value = plain(obj.value);
    objects[obj.name] = entry;
  }
}

try {
  const buf = fs.readFileSync(file);
  const f = new hdf5.File(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength), file);
  walk(f);
} catch (e) {
  fail(file + ': at ' + current + ': ' + describe(e));
}
process.stdout.write(JSON.stringify({reader: 'jsfive ' + version, objects}) + '\n');
