"""Make schema.json from schema/pm_schema.def without a C compiler.

`pip install ./python` from the source tree has no build of the C tools, so
setup.py runs this on the PM_SCHEMA(...) rows of the same table the C code
includes; CMake builds instead copy the JSON that schema/pm_schema_json.c
wrote. tests/python/check_python.py insists that the two are equal, entry by
entry and field by field, so neither can drift from the table.

Standard library only: setup.py imports this file by path, before the
package (and its numpy/pandas/h5py imports) exists.
"""
import json
import re

# pm_schema.c's names for the KIND and TYPE columns.
KINDS = {"GROUP": "group", "DATASET": "dataset", "ATTR": "attribute", "FIELD": "field"}
TYPES = {"NONE": "none", "COMPOUND": "compound", "I32": "int32", "U8": "uint8",
         "U32": "uint32", "I64": "int64", "U64": "uint64", "F64": "float64",
         "STR": "string", "STR64": "string64"}

_CSTR = r'"((?:[^"\\]|\\.)*)"'
_ROW = re.compile(r'^PM_SCHEMA\(\s*(\w+)\s*,\s*(\w+)\s*,\s*' + _CSTR + r'\s*,\s*' + _CSTR +
                  r'\s*,\s*(\w+)\s*,\s*(\d+)\s*,\s*(\w+)\s*,\s*' + _CSTR + r'\s*\)\s*$')


def _unescape(s):
    """A C string literal's body as the compiler sees it (the table only
    uses \\" and \\\\)."""
    return re.sub(r"\\(.)", r"\1", s)


def _name(kind, path):
    """The last component of a path, as pm_schema_name cuts it."""
    sep = {"ATTR": "@", "FIELD": "."}.get(kind, "/")
    cut = path.rfind(sep)
    return path[cut + 1:] if cut >= 0 and cut + 1 < len(path) else path


def _dims_legend(def_text):
    """The dimension letters and what they count, from the table's own
    header comment ("DIMS   dimension names, outermost first: T thread rows,
    R regions, ...") rather than a second copy here."""
    m = re.search(r"DIMS\s+dimension names, outermost first:(.*?)\(", def_text, re.S)
    if not m:
        raise ValueError("pm_schema.def: no DIMS legend in the header comment")
    words = " ".join(w for w in m.group(1).split() if w != "*")
    return {p.strip()[0]: p.strip()[2:] for p in words.split(",") if p.strip()}


def _define(header_text, macro):
    m = re.search(r"^#define\s+%s\s+(\d+)\s*$" % macro, header_text, re.M)
    if not m:
        raise ValueError("pm_schema.h: no #define " + macro)
    return int(m.group(1))


def table(def_text, header_text):
    """The schema as the dict pm_schema_json writes."""
    entries = []
    for line in def_text.splitlines():
        if not line.startswith("PM_SCHEMA("):
            continue
        m = _ROW.match(line)
        if not m:
            raise ValueError("pm_schema.def: cannot parse row: " + line)
        ident, kind, path, dims, typ, since, rule, meaning = m.groups()
        path = _unescape(path)
        entries.append({"id": ident, "kind": KINDS[kind], "path": path, "name": _name(kind, path),
                        "dims": [d for d in _unescape(dims).split(",") if d],
                        "type": TYPES[typ], "since": int(since), "rule": rule.lower(),
                        "meaning": _unescape(meaning)})
    return {"schema_version": _define(header_text, "PM_SCHEMA_VERSION"),
            "revision": _define(header_text, "PM_SCHEMA_REVISION"),
            "dims": _dims_legend(def_text), "entries": entries}


def write(def_path, header_path, out_path):
    with open(def_path, encoding="utf-8") as f:
        def_text = f.read()
    with open(header_path, encoding="utf-8") as f:
        header_text = f.read()
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(table(def_text, header_text), f, indent=1, ensure_ascii=False)
        f.write("\n")
