#!/usr/bin/python3
"""Readable everywhere: perfmark's files read by a reader of its own as well
as by the HDF5 library.

usage: /usr/bin/python3 tests/readers/check_readers.py BUILD_DIR

Writes, in a temporary directory:
- real files of `BUILD_DIR/bin/perfmark run -e sw` (perfmark's own encoder,
  runtime/file/pm_h5enc.c): one process (tests/pagefaults), threads
  (tests/thread_workers); with mpirun, an MPI job file of 2 ranks
  (tests/mpi_calls), and the same job written collectively by the HDF5
  library (PERFMARK_JOB_GATHER_MAX=1: the parallel writer);
- the report's fixtures (tests/report/make_fixture.py, h5py), every variant
  that is an HDF5 file;
- job files of bench/gen_synthetic (the HDF5 library), one small and one
  whose datasets are chunked, shuffled and deflated.
Then reads each with jsfive (tests/readers/read_jsfive.js under node: a
pure-JavaScript reader, no HDF5 library) and with h5py (libhdf5), and
compares what they found: the same groups, datasets and attributes, the same
shapes, every attribute value and every dataset value jsfive decodes
(numbers as doubles, strings as UTF-8 without trailing NULs). jsfive decodes
no compound type: those datasets are compared by shape and attributes only,
and must be exactly h5py's compound datasets.

Where jsfive is: $PERFMARK_JSFIVE_DIR if set, else
/usr/local/lib/perfmark-node (where scripts/install-deps.sh puts it with
`npm install --prefix`); either an npm prefix holding node_modules/jsfive or
the jsfive package directory itself.

Exit 0 = pass, 77 = skipped (no node, or no jsfive: said why), 1 = failure.
"""
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "report"))
import make_fixture  # noqa: E402

SKIP = 77
DEFAULT_PREFIX = "/usr/local/lib/perfmark-node"
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_mpi_yield_when_idle": "1"}
MPIRUN = ["mpirun", "--oversubscribe", "--bind-to", "none"]
NOT_HDF5 = {"truncated", "garbage"}  # fixtures that are no HDF5 file at all


def find_jsfive():
    """The jsfive package directory, or (None, why)."""
    where = os.environ.get("PERFMARK_JSFIVE_DIR") or DEFAULT_PREFIX
    for d in (os.path.join(where, "node_modules", "jsfive"), where):
        try:
            with open(os.path.join(d, "package.json")) as f:
                if json.load(f).get("name") == "jsfive":
                    return d, None
        except (OSError, ValueError):
            pass
    how = ("PERFMARK_JSFIVE_DIR=%s" % where if os.environ.get("PERFMARK_JSFIVE_DIR")
           else "%s (scripts/install-deps.sh installs it; PERFMARK_JSFIVE_DIR overrides)"
           % DEFAULT_PREFIX)
    return None, "no jsfive package in %s" % how


def clean_env(extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PERFMARK_")}
    env.update(extra or {})
    return env


def perfmark_run(build, out, cmd, env=None, ok_status=(0,)):
    """`perfmark run -e sw -o OUT -- CMD` in OUT's directory (mpi_calls writes
    files where it runs): None, or what went wrong."""
    full = [os.path.join(build, "bin", "perfmark"), "run", "-e", "sw", "-o", out, "--"] + cmd
    p = subprocess.run(full, env=clean_env(env), capture_output=True, text=True,
                       errors="replace", timeout=120, stdin=subprocess.DEVNULL,
                       cwd=os.path.dirname(out))
    if p.returncode not in ok_status or not os.path.exists(out):
        return "%s exited %d\n%s%s" % (" ".join(full), p.returncode, p.stdout[-1500:],
                                       p.stderr[-1500:])
    return None


def make_files(build, tmp):
    """[(path, what wrote it)] and [failures]."""
    files, failures = [], []
    tests = os.path.join(build, "tests")
    runs = [
        ("single.h5", [os.path.join(tests, "pagefaults"), "100", "2"], None, (0,),
         "perfmark run, one process"),
        ("threads.h5", [os.path.join(tests, "thread_workers"), "3", "50", "20", "named"], None,
         (3,), "perfmark run, 4 threads"),
    ]
    if shutil.which("mpirun") and os.path.exists(os.path.join(tests, "mpi_calls")):
        job = MPIRUN + ["-np", "2", os.path.join(tests, "mpi_calls")]
        runs.append(("job.h5", job, MPI_ENV, (0,), "perfmark run, MPI job of 2 ranks"))
        runs.append(("job_parallel.h5", job, dict(MPI_ENV, PERFMARK_JOB_GATHER_MAX="1"), (0,),
                     "perfmark run, MPI job of 2 ranks written by parallel HDF5"))
    else:
        print("no mpirun or tests/mpi_calls: no MPI job file")
    for name, cmd, env, ok, what in runs:
        out = os.path.join(tmp, name)
        err = perfmark_run(build, out, cmd, env, ok)
        if err:
            failures.append("%s: %s" % (name, err))
        else:
            files.append((out, what))
    for variant in make_fixture.VARIANTS:
        if variant in NOT_HDF5:
            continue
        out = os.path.join(tmp, "fixture_%s.h5" % variant)
        make_fixture.write(out, variant)
        files.append((out, "make_fixture.py %s (h5py)" % variant))
    gen = os.path.join(build, "bin", "gen_synthetic")
    for name, args, what in [
        ("synthetic.h5", ["2", "2", "5", "3"], "gen_synthetic 2x2 ranks, 5 regions"),
        # 256 thread rows x 300 regions: over 65,536 elements, chunked and deflated
        ("synthetic_chunked.h5", ["64", "4", "300", "2"],
         "gen_synthetic 64x4, 300 regions (chunked, shuffled, deflated)"),
    ]:
        out = os.path.join(tmp, name)
        p = subprocess.run([gen, out] + args, capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            failures.append("%s: gen_synthetic exited %d: %s" % (name, p.returncode,
                                                                 p.stderr[-500:]))
        else:
            files.append((out, what))
    return files, failures


# ---- what h5py finds, in read_jsfive.js's terms ----

def plain(v):
    """A value as JSON would carry it: lists, floats, str."""
    if isinstance(v, np.ndarray):
        return [plain(x) for x in v.reshape(-1)]
    if isinstance(v, (bytes, np.bytes_)):
        return bytes(v).decode("utf-8", "replace")
    if isinstance(v, (np.floating, float)):
        return float(v) if math.isfinite(v) else {math.inf: "Infinity", -math.inf: "-Infinity"}.get(
            float(v), "NaN")
    if isinstance(v, (np.integer, int)):
        return int(v)
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    return v


def h5py_objects(path):
    objects = {}

    def attrs(obj):
        return {name: plain(obj.attrs[name]) for name in obj.attrs}

    def visit(name, obj):
        key = "/" + name
        if isinstance(obj, h5py.Group):
            objects[key] = {"kind": "group", "attrs": attrs(obj)}
            return
        entry = {"kind": "dataset", "attrs": attrs(obj), "shape": list(obj.shape)}
        if obj.dtype.names:
            entry["compound"] = True
        else:
            entry["value"] = plain(obj[()])
        objects[key] = entry

    with h5py.File(path, "r") as f:
        objects["/"] = {"kind": "group", "attrs": attrs(f)}
        f.visititems(visit)
    return objects


def same(a, b):
    """Equal as the readers give them: numbers as doubles (jsfive turns 64-bit
    integers into doubles), strings without trailing NULs (jsfive keeps a
    fixed-length string's padding)."""
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, str) and isinstance(b, str):
        return a.rstrip("\0") == b.rstrip("\0")
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) \
            and not isinstance(a, bool) and not isinstance(b, bool):
        return float(a) == float(b)
    return a == b


def compare(js, py):
    """Differences between jsfive's and h5py's views, and counts."""
    diffs = []
    n = {"groups": 0, "datasets": 0, "values": 0, "compound": 0, "attrs": 0}
    for key in sorted(set(js) | set(py)):
        if key not in js or key not in py:
            diffs.append("%s: only %s sees it" % (key, "h5py" if key in py else "jsfive"))
            continue
        j, p = js[key], py[key]
        if j["kind"] != p["kind"]:
            diffs.append("%s: a %s to jsfive, a %s to h5py" % (key, j["kind"], p["kind"]))
            continue
        n[j["kind"] + "s"] += 1
        if set(j["attrs"]) != set(p["attrs"]):
            diffs.append("%s: attributes %s (jsfive) vs %s (h5py)" % (
                key, sorted(j["attrs"]), sorted(p["attrs"])))
        for name in set(j["attrs"]) & set(p["attrs"]):
            n["attrs"] += 1
            if not same(j["attrs"][name], p["attrs"][name]):
                diffs.append("%s@%s: %r (jsfive) vs %r (h5py)" % (
                    key, name, j["attrs"][name], p["attrs"][name]))
        if j["kind"] != "dataset":
            continue
        if j["shape"] != p["shape"]:
            diffs.append("%s: shape %r (jsfive) vs %r (h5py)" % (key, j["shape"], p["shape"]))
        if j.get("undecoded") == "compound" or p.get("compound"):
            n["compound"] += 1
            if not (j.get("undecoded") == "compound" and p.get("compound")):
                diffs.append("%s: compound to %s only" % (
                    key, "h5py" if p.get("compound") else "jsfive"))
            continue
        n["values"] += 1
        if not same(j["value"], p["value"]):
            first = next((i for i, (x, y) in enumerate(zip(j["value"], p["value"]))
                          if not same(x, y)), min(len(j["value"]), len(p["value"])))
            diffs.append("%s: values differ at element %d of %d/%d: %r (jsfive) vs %r (h5py)" % (
                key, first, len(j["value"]), len(p["value"]),
                j["value"][first] if first < len(j["value"]) else None,
                p["value"][first] if first < len(p["value"]) else None))
    return diffs, n


def header_kind(path):
    with open(path, "rb") as f:
        head = f.read(9)
    return "superblock v%d" % head[8] if len(head) == 9 else "?"


def main():
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    build = os.path.abspath(sys.argv[1])
    node = shutil.which("node") or shutil.which("nodejs")
    if not node:
        print("SKIP: no node on PATH (scripts/install-deps.sh installs nodejs)")
        return SKIP
    jsfive, why = find_jsfive()
    if not jsfive:
        print("SKIP: %s" % why)
        return SKIP
    script = os.path.join(HERE, "read_jsfive.js")
    passed, failed = 0, 0
    with tempfile.TemporaryDirectory(prefix="perfmark-readers.") as tmp:
        files, failures = make_files(build, tmp)
        for f in failures:
            print("FAIL: writing %s" % f)
            failed += 1
        for path, what in files:
            name = os.path.basename(path)
            p = subprocess.run([node, script, jsfive, path], capture_output=True, text=True,
                               errors="replace", timeout=120)
            if p.returncode != 0:
                print("FAIL: %s (%s, %s): jsfive: %s" % (name, what, header_kind(path),
                                                        (p.stderr.strip() or p.stdout)[-1500:]))
                failed += 1
                continue
            try:
                py = h5py_objects(path)
            except Exception as e:  # noqa: BLE001 - any h5py error is the finding
                print("FAIL: %s (%s): h5py: %s" % (name, what, e))
                failed += 1
                continue
            js = json.loads(p.stdout)
            diffs, n = compare(js["objects"], py)
            if diffs:
                print("FAIL: %s (%s): %d difference(s) between %s and h5py:" % (
                    name, what, len(diffs), js["reader"]))
                for d in diffs[:20]:
                    print("  " + d)
                failed += 1
                continue
            print("ok: %s (%s, %s): %d groups, %d datasets (%d compared value by value, "
                  "%d compound by shape), %d attributes: %s = h5py" % (
                      name, what, header_kind(path), n["groups"], n["datasets"], n["values"],
                      n["compound"], n["attrs"], js["reader"]))
            passed += 1
    print("jsfive decodes no compound type: those datasets are compared by shape and "
          "attributes only")
    print("readers: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
