#!/usr/bin/python3
"""The schema table (schema/pm_schema.def, as the build's schema.json), the
docs and the files agree.

usage: check_schema.py BUILD_DIR SOURCE_DIR

1. The table holds together: unique paths, fields and attributes under an
   object of the table, `needed` only in revision 1, revisions 1..revision
   each used, dimension names known.
2. docs/hdf5-schema.md names exactly the table's entries, with the same
   shapes and types where it gives them.
3. A file the runtime writes (one process; a 2-rank MPI job file when
   mpirun works) holds exactly the table's entries: nothing missing, nothing
   undeclared, each with the table's shape (dimension names resolved from
   the file) and type.
4. The reader takes every revision: a file of each revision r, written here
   from the table with exactly the entries since <= r, is reported in every
   format; without any one `needed` entry a file is refused with a message
   naming it; without any one other entry it is read.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import h5py
import numpy as np

SKIP = 77
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_mpi_yield_when_idle": "1"}
MPIRUN = ["mpirun", "--oversubscribe", "--bind-to", "none"]
FORMATS = ["text", "csv", "json", "html"]


class Check:
    def __init__(self):
        self.failed = 0

    def ok(self, cond, what):
        if not cond:
            self.failed += 1
            print("FAIL: " + what)
        return cond


def parent_of(e):
    """The object a field or attribute hangs on; the group above a dataset."""
    p = e["path"]
    if e["kind"] == "attribute":
        return p.split("@")[0]
    if e["kind"] == "field":
        return p.split(".")[0]
    up = p.rsplit("/", 1)[0]
    return up if up else "/"


# ---------------------------------------------------------------- 1. table

def check_table(ck, schema):
    entries = schema["entries"]
    paths = [e["path"] for e in entries]
    ck.ok(len(paths) == len(set(paths)), "table: duplicate paths")
    known = {e["path"] for e in entries if e["kind"] in ("group", "dataset")}
    revs = set()
    for e in entries:
        revs.add(e["since"])
        if e["path"] != "/":
            ck.ok(parent_of(e) in known, "table: %s hangs on %s, not in the table"
                  % (e["path"], parent_of(e)))
        ck.ok(e["rule"] != "needed" or e["since"] == 1,
              "table: %s is needed but came in revision %d (older files lack it)"
              % (e["path"], e["since"]))
        ck.ok(1 <= e["since"] <= schema["revision"], "table: %s since %d" % (e["path"], e["since"]))
        ck.ok(all(d in schema["dims"] for d in e["dims"]), "table: %s dims %r" % (e["path"], e["dims"]))
        ck.ok((e["kind"] == "dataset") or not e["dims"], "table: %s has dims but is no dataset" % e["path"])
        ck.ok(e["meaning"].strip() != "", "table: %s has no meaning" % e["path"])
    ck.ok(revs == set(range(1, schema["revision"] + 1)),
          "table: revisions used %s, expected 1..%d" % (sorted(revs), schema["revision"]))


# ---------------------------------------------------------------- 2. docs

DOC_TYPE = {"int32": "int32", "uint8": "uint8", "uint32": "uint32", "int64": "int64",
            "uint64": "uint64", "float64": "float64", "string": "string",
            "string64": "string, fixed 64"}


def doc_entries(text):
    """{path: {"type": cell or None, "shape": cell or None}} from the
    markdown: root attribute rows, fields of `/x` sections, datasets of `/x/*`
    sections, the /region/flags attribute table."""
    out = {}
    section = None
    header = None
    for line in text.splitlines():
        if line.startswith("## "):
            header = None
            m = re.search(r"`(/[a-z_]*(?:/[a-z_]+)*?)(/\*)?`", line)
            if line.startswith("## Root attributes"):
                section = ("attr", "/")
                out["/"] = {}
            elif m and m.group(2):
                section = ("group", m.group(1))
                out[m.group(1)] = {}
            elif m:
                section = ("fields", m.group(1))
                shape = re.search(r"`\[([A-Z,]*)\]`", line)
                kind = re.search(r"— (\w+)", line)
                out[m.group(1)] = {"shape": shape.group(1) if shape else None,
                                   "type": kind.group(1) if kind else None}
            else:
                section = None
            continue
        if not line.startswith("|"):
            header = None  # a table ends at its first other line
            continue
        if section is None:
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = cells
            continue
        if set(cells[0]) <= set("-: "):
            continue
        col = header[0]
        names = re.findall(r"`([A-Za-z_0-9]+)`", cells[0])
        typ = cells[header.index("type")] if "type" in header else None
        shape = cells[header.index("shape")] if "shape" in header else None
        if shape:
            shape = shape.strip("`[]")
        for n in names:
            if col == "flag":
                out["/region/flags@*"] = {"type": "uint32", "shape": None}
            elif section[0] == "attr" and col == "name":
                out["/@" + n] = {"type": typ, "shape": None}
            elif section[0] == "group" and col == "attribute":
                out[section[1] + "@" + n] = {"type": typ, "shape": None}
            elif section[0] == "fields" and col == "field":
                out[section[1] + "." + n] = {"type": typ, "shape": None}
            elif section[0] == "group" and col == "dataset":
                out[section[1] + "/" + n] = {"type": typ, "shape": shape}
    return out


def check_docs(ck, schema, doc_path):
    with open(doc_path, encoding="utf-8") as f:
        doc = doc_entries(f.read())
    table = {e["path"]: e for e in schema["entries"]}
    for p in sorted(set(table) - set(doc)):
        ck.ok(False, "docs/hdf5-schema.md does not name %s (in the table)" % p)
    for p in sorted(set(doc) - set(table)):
        ck.ok(False, "docs/hdf5-schema.md names %s, which the table lacks" % p)
    for p in sorted(set(doc) & set(table)):
        e, d = table[p], doc[p]
        if d.get("type") and e["type"] in DOC_TYPE:
            ck.ok(d["type"].startswith(DOC_TYPE[e["type"]]),
                  "docs: %s type %r, table %s" % (p, d["type"], e["type"]))
        if d.get("shape") is not None and e["kind"] == "dataset":
            ck.ok(d["shape"] == ",".join(e["dims"]),
                  "docs: %s shape [%s], table [%s]" % (p, d["shape"], ",".join(e["dims"])))
    return len(doc)


# ---------------------------------------------------------------- 3. files

def h5_type_name(t):
    """The table's type name of an HDF5 datatype."""
    if t.get_class() == h5py.h5t.STRING:
        return "string" if t.is_variable_str() else "string%d" % t.get_size()
    if t.get_class() == h5py.h5t.COMPOUND:
        return "compound"
    if t.get_class() == h5py.h5t.FLOAT:
        return "float%d" % (8 * t.get_size())
    if t.get_class() == h5py.h5t.INTEGER:
        signed = t.get_sign() == h5py.h5t.SGN_2
        return "%sint%d" % ("" if signed else "u", 8 * t.get_size())
    return "?"


def file_entries(path):
    """{path: (kind, type name, shape tuple)} of everything in the file."""
    out = {}
    with h5py.File(path, "r") as f:
        def attrs(obj, where):
            for name in obj.attrs:
                a = obj.attrs.get_id(name)
                out["%s@%s" % (where, name)] = ("attribute", h5_type_name(a.get_type()), ())

        out["/"] = ("group", "none", ())
        attrs(f, "/")

        def visit(name, obj):
            p = "/" + name
            if isinstance(obj, h5py.Group):
                out[p] = ("group", "none", ())
            else:
                t = obj.id.get_type()
                out[p] = ("dataset", h5_type_name(t), obj.shape)
                if t.get_class() == h5py.h5t.COMPOUND:
                    for i in range(t.get_nmembers()):
                        out["%s.%s" % (p, t.get_member_name(i).decode())] = (
                            "field", h5_type_name(t.get_member_type(i)), ())
            attrs(obj, p)
        f.visititems(visit)
    return out


def check_file(ck, schema, path, what):
    got = file_entries(path)
    table = {e["path"]: e for e in schema["entries"]}
    flag_attrs = [p for p in got if p.startswith("/region/flags@")]
    ck.ok(flag_attrs != [], "%s: /region/flags has no flag-name attributes" % what)
    for p in flag_attrs:
        kind, typ, _ = got.pop(p)
        ck.ok(typ == "uint32", "%s: %s is %s, table uint32" % (what, p, typ))
    got["/region/flags@*"] = ("attribute", "uint32", ())
    for p in sorted(set(table) - set(got)):
        ck.ok(False, "%s: lacks %s (the table declares it)" % (what, p))
    for p in sorted(set(got) - set(table)):
        ck.ok(False, "%s: holds %s, which the table lacks" % (what, p))
    sizes = {}
    with h5py.File(path, "r") as f:
        sizes["T"] = f["threads"].shape[0]
        sizes["R"] = f["regions"].shape[0]
        sizes["E"] = f["events"].shape[0]
        sizes["G"] = int(f.attrs["kernel_groups"])
        sizes["N"] = f["rank/counts"].shape[0]
        sizes["M"] = f["messages"].shape[0]
        for d, ds in (("S", "samples/events"), ("K", "samples/modules"), ("H", "samples/hits"),
                      ("C", "samples/chains"), ("F", "samples/frames"), ("I", "series/time_ns"),
                      ("J", "series/process_time_ns"), ("P", "node/cpu"),
                      ("Q", "node/process_pid"), ("V", "node/series_time_ns"),
                      ("B", "summary/state"), ("X", "summary/kept_rank"),
                      ("Y", "summary/ref_row")):
            sizes[d] = f[ds].shape[0]
        # the summary's tables (revision 11): rows and columns
        for rows, cols, ds in (("A", "z", "summary/region_stat"), ("D", "l", "summary/region_more"),
                               ("W", "z", "summary/mpi_stat"), ("O", "o", "summary/rank_share"),
                               ("L", "x", "summary/topdown"), ("L", "y", "summary/topdown_slots"),
                               ("D", "k", "summary/region_count")):
            shape = f[ds].shape
            sizes[rows], sizes[cols] = shape[0], shape[1] if len(shape) > 1 else 0
        sizes["u"] = f["summary/run_stat"].shape[0]
        sizes["j"] = f["summary/run_count"].shape[0]
        ck.ok(int(f.attrs["schema_version"]) == schema["schema_version"] and
              int(f.attrs["schema_revision"]) == schema["revision"],
              "%s: schema %s revision %s" % (what, f.attrs["schema_version"],
                                             f.attrs["schema_revision"]))
    for p in sorted(set(got) & set(table)):
        kind, typ, shape = got[p]
        e = table[p]
        want = {"string64": "string64"}.get(e["type"], e["type"])
        ck.ok(kind == e["kind"], "%s: %s is a %s, table: %s" % (what, p, kind, e["kind"]))
        ck.ok(typ == want, "%s: %s is %s, table: %s" % (what, p, typ, want))
        if e["kind"] == "dataset":
            ck.ok(tuple(shape) == tuple(sizes[d] for d in e["dims"]),
                  "%s: %s has shape %s, table [%s] = %s" % (what, p, shape, ",".join(e["dims"]),
                                                          [sizes[d] for d in e["dims"]]))
    return len(got)


def run(cmd, env=None, cwd=None, timeout=300):
    full = {k: v for k, v in os.environ.items() if not k.startswith("PERFMARK_")}
    full.update(env or {})
    return subprocess.run(cmd, env=full, cwd=cwd, capture_output=True, text=True,
                          errors="replace", timeout=timeout)


def written_files(ck, build, tmp):
    """Files the runtime writes: [(path, what)]."""
    perfmark = os.path.join(build, "bin", "perfmark")
    out = []
    one = os.path.join(tmp, "one.h5")
    # sampling too, so that the /samples rows hold something
    p = run([perfmark, "run", "-e", "sw", "-o", one, "--",
             os.path.join(build, "bin", "nested_regions")],
            env={"PERFMARK_SAMPLE": "cpu-clock@100us,page-faults@8", "PERFMARK_INTERVAL": "1ms",
                 "PERFMARK_NODE": "1"})
    if ck.ok(p.returncode == 0 and os.path.exists(one),
             "perfmark run nested_regions: %d %s" % (p.returncode, p.stderr[-500:])):
        out.append((one, "one-process file"))
    job = os.path.join(tmp, "job.h5")
    prog = os.path.join(build, "bin", "mpi_omp_demo")
    if subprocess.run(["which", "mpirun"], capture_output=True).returncode != 0:
        print("note: no mpirun: the MPI job file is not checked")
        return out
    p = run([perfmark, "run", "-e", "sw", "-o", job, "--"] + MPIRUN + ["-np", "2", prog],
            env=dict(MPI_ENV, OMP_NUM_THREADS="2"))
    if ck.ok(p.returncode == 0 and os.path.exists(job),
             "perfmark run mpirun -np 2 mpi_omp_demo: %d %s" % (p.returncode, p.stderr[-500:])):
        out.append((job, "2-rank job file"))
    return out


# ---------------------------------------------------------------- 4. revisions

SIZES = {"T": 2, "R": 3, "E": 2, "G": 1, "N": 1, "M": 2, "S": 1, "K": 1, "H": 2, "C": 1, "F": 2,
         "I": 4, "J": 2, "P": 2, "Q": 1, "V": 4, "B": 0, "X": 0, "Y": 0,
         "A": 0, "z": 0, "D": 0, "l": 0, "W": 0, "u": 0, "O": 0, "o": 0,
         "L": 0, "x": 0, "y": 0, "k": 0, "j": 0}
NP_TYPE = {"int32": "<i4", "uint8": "u1", "uint32": "<u4", "int64": "<i8", "uint64": "<u8",
           "float64": "<f8"}
VISITS = [[3, 1, 0], [5, 0, 2]]  # [T][R]: ground truth the report must total


def value_of(e):
    """A plausible value for a scalar attribute or a whole dataset."""
    name, typ = e["path"].split("@")[-1].split("/")[-1], e["type"]
    special = {"schema_version": 1, "kernel_groups": SIZES["G"], "rank": 0, "ranks": 1,
               "bind_cpu": -1, "topdown_levels": 0, "partial": 0}
    if e["kind"] == "attribute":
        if typ == "string":
            return {"clock": "monotonic", "event_group": "sw",
                    "events_measured": "page-faults,task-clock"}.get(name, "")
        return np.array(special.get(name, 7), dtype=NP_TYPE[typ])
    shape = tuple(SIZES[d] for d in e["dims"])
    if e["path"] == "/region/visits":
        return np.array(VISITS, dtype="<u8")
    if e["path"] == "/region/timed_visits":
        return np.array(VISITS, dtype="<u8")
    if e["path"] in ("/region/enabled_ns", "/region/running_ns", "/thread/enabled_ns",
                     "/thread/running_ns", "/rank/enabled_ns", "/rank/running_ns"):
        return np.full(shape, 1000, dtype="<u8")
    if e["path"] in ("/series/thread", "/series/process_rank", "/series/region",
                     "/series/flags", "/node/cpu_rank", "/node/process_rank",
                     "/node/series_rank"):
        return np.zeros(shape, dtype=NP_TYPE[typ])
    if e["path"] in ("/region/flags", "/thread/flags", "/region/throttled_from",
                     "/region/timer_visits", "/region/reads", "/thread/reads"):
        return np.zeros(shape, dtype=NP_TYPE[typ])
    if typ == "string":
        return np.array(["message %d" % i for i in range(shape[0])],
                        dtype=h5py.string_dtype("utf-8"))
    if typ == "string64":
        return np.array([b"name%d" % i for i in range(shape[0])], dtype="S64")
    return np.full(shape, 11, dtype=NP_TYPE[typ])


def compound_rows(schema, path, fields):
    n = SIZES[next(e for e in schema["entries"] if e["path"] == path)["dims"][0]]
    dt = []
    for e in fields:
        name = e["path"].split(".")[1]
        dt.append((name, h5py.string_dtype("utf-8") if e["type"] == "string"
                   else "S64" if e["type"] == "string64" else NP_TYPE[e["type"]]))
    rows = np.zeros(n, dtype=dt)
    for i in range(n):
        for e in fields:
            name = e["path"].split(".")[1]
            v = {"/events.name": ["page-faults", "task-clock"][i % 2],
                 "/events.group": 0, "/regions.parent": -1 if i == 0 else i - 1,
                 "/regions.depth": i, "/regions.name": "r%d" % i, "/regions.kind": "user",
                 "/regions.path": "/".join("r%d" % k for k in range(i + 1)),
                 "/threads.rank": 0, "/threads.thread": i, "/threads.host": b"h",
                 "/samples/events.name": "cpu-clock", "/samples/events.unit": "ns",
                 "/samples/events.period": 1000000, "/samples/hits.event": 0,
                 "/samples/hits.module": 0, "/samples/hits.chain": 0,
                 "/samples/hits.region": i % 3 - 1, "/samples/hits.thread": i % 2,
                 "/samples/chains.first": 0, "/samples/chains.length": 2,
                 "/samples/frames.module": 0}.get(e["path"])
            if v is None:
                v = "" if e["type"] == "string" else (b"" if e["type"] == "string64" else 1)
            rows[i][name] = v
    return rows


def write_revision(schema, path, rev, drop=None):
    """A file with exactly the table's entries since <= rev (minus `drop`)."""
    entries = [e for e in schema["entries"] if e["since"] <= rev and e["path"] != drop]
    have = {"/"} if drop != "/" else set()  # what has been created
    with h5py.File(path, "w") as f:
        for e in entries:
            if e["kind"] == "group" and e["path"] != "/":
                f.create_group(e["path"])
                have.add(e["path"])
        for e in entries:
            if e["kind"] != "dataset" or parent_of(e) not in have:
                continue
            have.add(e["path"])
            if e["type"] == "compound":
                fields = [x for x in entries if x["kind"] == "field" and parent_of(x) == e["path"]]
                f.create_dataset(e["path"], data=compound_rows(schema, e["path"], fields))
            else:
                f.create_dataset(e["path"], data=value_of(e))
        for e in entries:
            if e["kind"] != "attribute" or parent_of(e) not in have:
                continue
            obj, name = e["path"].split("@")
            if name == "*":  # the flag names
                for flag, bit in (("MULTIPLEXED", 1), ("NOT_COUNTED", 2)):
                    f[obj].attrs.create(flag, bit, dtype="<u4")
            elif e["type"] == "string":
                f[obj].attrs.create(name, value_of(e), dtype=h5py.string_dtype("utf-8"))
            else:
                f[obj].attrs[name] = value_of(e)


def check_revisions(ck, schema, perfmark, tmp):
    n = 0
    for rev in range(1, schema["revision"] + 1):
        path = os.path.join(tmp, "rev%d.h5" % rev)
        write_revision(schema, path, rev)
        for fmt in FORMATS:
            p = run([perfmark, "report", path, "--format", fmt])
            n += 1
            ck.ok(p.returncode == 0 and p.stdout and not p.stderr,
                  "revision %d, --format %s: exit %d, %s" % (rev, fmt, p.returncode,
                                                             p.stderr.strip()[:300]))
        p = run([perfmark, "report", path, "--format", "json"])
        if p.returncode == 0:
            j = json.loads(p.stdout)
            got = sorted(r["visits"] for r in j["regions"])
            want = sorted(sum(VISITS[t][r] for t in range(SIZES["T"])) for r in range(SIZES["R"]))
            ck.ok(got == want, "revision %d: visits %s, expected %s" % (rev, got, want))
    # the policy: needed entries refused by name, the others read
    for e in schema["entries"]:
        if e["path"] in ("/",) or e["since"] > 1:
            continue
        path = os.path.join(tmp, "drop.h5")
        write_revision(schema, path, 1, drop=e["path"])
        p = run([perfmark, "report", path, "--format", "json"])
        n += 1
        leaf = re.split(r"[@./]", e["path"])[-1]
        if e["rule"] == "needed":
            ck.ok(p.returncode != 0 and leaf in p.stderr and p.stdout == "",
                  "without needed %s: exit %d, stderr %r" % (e["path"], p.returncode,
                                                             p.stderr.strip()[:200]))
        elif e["path"] == "/rank/counts":
            ck.ok(p.returncode == 0, "without %s: exit %d %s" % (e["path"], p.returncode,
                                                                 p.stderr.strip()[:200]))
        else:
            ck.ok(p.returncode == 0 and not p.stderr,
                  "without %s (%s): exit %d, stderr %r" % (e["path"], e["rule"], p.returncode,
                                                          p.stderr.strip()[:200]))
    newer = os.path.join(tmp, "newer.h5")
    write_revision(schema, newer, schema["revision"])
    with h5py.File(newer, "a") as f:
        f.attrs["schema_version"] = np.int32(schema["schema_version"] + 1)
    p = run([perfmark, "report", newer])
    ck.ok(p.returncode != 0 and "newer" in p.stderr, "schema_version + 1 not refused: %r"
          % p.stderr.strip()[:200])
    return n


def main():
    if len(sys.argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    build, src = (os.path.abspath(a) for a in sys.argv[1:])
    with open(os.path.join(build, "share", "perfmark", "schema.json"), encoding="utf-8") as f:
        schema = json.load(f)
    ck = Check()
    check_table(ck, schema)
    ndoc = check_docs(ck, schema, os.path.join(src, "docs", "hdf5-schema.md"))
    print("table: %d entries, revision %d; docs name %d" % (len(schema["entries"]),
                                                          schema["revision"], ndoc))
    with tempfile.TemporaryDirectory() as tmp:
        for path, what in written_files(ck, build, tmp):
            n = check_file(ck, schema, path, what)
            print("%s: %d entries checked" % (what, n))
        n = check_revisions(ck, schema, os.path.join(build, "bin", "perfmark"), tmp)
        print("revisions 1..%d and the reader's policy: %d reports" % (schema["revision"], n))
    print("FAILED: %d" % ck.failed if ck.failed else "OK")
    return 1 if ck.failed else 0


if __name__ == "__main__":
    sys.exit(main())
