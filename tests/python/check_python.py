#!/usr/bin/python3
"""The Python package against `perfmark report --format json`, exactly.

usage: /usr/bin/python3 tests/python/check_python.py BUILD_DIR

With BUILD_DIR/python first on sys.path (the package as the build lays it
out, with the schema.json the C build wrote), for every valid fixture of
tests/report/make_fixture.py and for files of real runs (`perfmark run -e
sw` of nested_regions; 2-rank mpi_omp_demo and mpi_poll jobs under mpirun)
and for two bench/gen_synthetic job files (the larger one read in several
blocks):

- every number summary(), by_rank() (its spread across ranks), mpi(), mpi_share(), omp_wait(), ipc(), flags(), threads(),
  thread_totals(), rank_totals(), measuring(), perfmark_reads(),
  series() and process_series() (runs with --interval: rows add up to the
  totals exactly, the report's bins to the rows),
  to_hatchet_literal(),
  events(), messages() and metadata give equals the report's JSON to the
  last digit (the report prints %.17g: a round trip of the double), null
  where the report prints null;
- cells() adds up to the report's raw totals, and its flag columns to the
  flag summary;
- integer columns of every frame are int64 or Int64, and query() works;
- each bad fixture (newer schema, foreign, truncated, garbage, wrong shape,
  broken tree), a missing file and a directory raise PerfmarkError with the
  reason, and nothing else; so do 40 damaged copies of a valid file, or
  they read (each in its own interpreter: a crash would be a failure);
- files of every revision of the schema, and files each without one entry,
  follow the table's rule (needed: PerfmarkError naming it; default: read,
  numbers equal the report's);
- the schema table made from pm_schema.def by the package's own generator
  (what `pip install ./python` uses) equals the C build's schema.json, entry
  by entry, field by field.

/usr/bin/python3 because the `python3` on PATH has no h5py. Exit 0 = pass,
1 = mismatches (each printed).
"""
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(SRC, "tests", "report"))
import make_fixture  # noqa: E402
from check_report import BAD_VARIANTS, GOOD_VARIANTS  # noqa: E402

MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_mpi_yield_when_idle": "1", "OMP_NUM_THREADS": "2"}
# checked once more with PERFMARK_REPORT_BLOCK=1 (many blocks, joined)
BLOCK_VARIANTS = ["full", "ranks_shuffled", "omp", "throttle"]
# bench/gen_synthetic job files (ranks, threads per rank, regions, events):
# the second is 1024 thread rows, four blocks of the report's own size
SYNTHETIC = [(4, 3, 20, 3), (64, 16, 128, 8)]
QS = ["visits", "wall_ns", "bytes", "bytes_unknown"]


class Checker:
    def __init__(self):
        self.errors, self.checks, self.scope = [], 0, ""

    def finish(self):
        """Print the failures (the first 200) and the count; the exit status."""
        for e in self.errors[:200]:
            print("FAIL " + e)
        print("%d checks, %d failed" % (self.checks, len(self.errors)))
        return 1 if self.errors else 0

    def ok(self, cond, msg):
        self.checks += 1
        if not cond:
            self.errors.append(self.scope + msg)
        return cond

    def same(self, got, want, where):
        """want from the JSON (None = null); got from a frame (NaN, <NA> or
        -1 positions mean none). Numbers must be equal, not close."""
        import pandas as pd
        none = got is None or got is pd.NA or (isinstance(got, float) and math.isnan(got))
        if want is None:
            return self.ok(none, "%s: %r, report null" % (where, got))
        if none:
            return self.ok(False, "%s: none, report %r" % (where, want))
        if isinstance(want, bool):
            return self.ok(bool(got) == want, "%s: %r, report %r" % (where, got, want))
        if isinstance(want, (int, float)):
            return self.ok(float(got) == float(want) if abs(want) < 2 ** 53 else int(got) == want,
                           "%s: %r, report %r" % (where, got, want))
        return self.ok(got == want, "%s: %r, report %r" % (where, got, want))


def build_arg(doc):
    """BUILD_DIR from the command line, with BUILD_DIR/python (the package as
    the build lays it out) first on sys.path; None after printing the usage."""
    if len(sys.argv) != 2:
        sys.stderr.write(doc)
        return None
    build = os.path.abspath(sys.argv[1])
    sys.path.insert(0, os.path.join(build, "python"))
    return build


def report_json(perfmark, path):
    p = subprocess.run([perfmark, "report", path, "--format", "json"], capture_output=True,
                       timeout=300)
    if p.returncode != 0:
        raise RuntimeError("perfmark report %s: exit %d: %s" % (path, p.returncode,
                                                                 p.stderr.decode()[-500:]))
    return json.loads(p.stdout.decode("utf-8"))


def row_of(df, **kw):
    m = None
    for k, v in kw.items():
        c = df[k] == v
        m = c if m is None else m & c
    rows = df[m]
    assert len(rows) == 1, kw
    return rows.iloc[0]


def check_regions(ck, run, j):
    s = run.summary()
    flags = run.flags()
    for reg in j["regions"]:
        i = reg["index"]
        w = "regions[%d]" % i
        ck.same(row_of(s, index=i, quantity="visits")["total"], reg["visits"], w + ".visits")
        ck.same(row_of(s, index=i, quantity="visits")["threads"], reg["threads_visited"],
                w + ".threads_visited")
        wall = row_of(s, index=i, quantity="wall_ns")
        for k in ("total", "min", "mean", "max"):
            ck.same(wall[k], reg["wall_ns"][k], "%s.wall_ns.%s" % (w, k))
        bt = reg["by_thread"]
        for k in ("total", "min", "mean", "max", "sd", "imbalance", "min_thread", "max_thread"):
            ck.same(wall[k], bt["wall_ns"][k], "%s.by_thread.wall_ns.%s" % (w, k))
            ck.same(row_of(s, index=i, quantity="exclusive_ns")[k], bt["exclusive_ns"][k],
                    "%s.by_thread.exclusive_ns.%s" % (w, k))
        for key, ev in reg["events"].items():
            got = row_of(s, index=i, quantity=key)
            for k in ("raw", "total", "min", "mean", "max", "estimate", "counted_share",
                      "untrusted", "threads_na"):
                ck.same(got[k], ev[k], "%s.events[%s].%s" % (w, key, k))
            for k in ("sd", "imbalance", "max_thread"):
                ck.same(got[k], bt["events"][key][k], "%s.by_thread.events[%s].%s" % (w, key, k))
        here = flags[flags["index"] == i]
        mine = dict(zip(here["flag"], here["threads"]))
        ck.ok(mine == reg["flags"], "%s.flags: %r, report %r" % (w, mine, reg["flags"]))
    ck.ok(len(j["regions"]) * (5 + len(j["events"])) == len(s),
          "summary has %d rows for %d regions" % (len(s), len(j["regions"])))


def check_omp(ck, run, j):
    """OpenMP wait: over threads, and across ranks where the file has ranks;
    and IPC."""
    ipc = run.ipc()
    for reg in j["regions"]:
        ck.same(ipc.iloc[reg["index"]]["ipc"], reg["ipc"], "regions[%d].ipc" % reg["index"])
    o = run.omp_wait()
    for reg in j["regions"]:
        got = o.iloc[reg["index"]]
        ck.same(got["wait_ns"], reg["omp_wait_ns"], "regions[%d].omp_wait_ns" % reg["index"])
        ck.same(got["share"], reg["omp_wait_share"], "regions[%d].omp_wait_share"
                % reg["index"])
    for x in j.get("regions_by_rank", []):
        got, want = o.iloc[x["index"]], x["omp_wait_share"]
        for k in ("min", "mean", "max", "sd", "max_rank"):
            ck.same(got[k if k == "max_rank" else "rank_" + k],
                    None if want is None else want[k],
                    "regions_by_rank[%d].omp_wait_share.%s" % (x["index"], k))


def check_xstat(ck, got, want, where, keys=("total", "min", "mean", "max", "imbalance",
                                             "max_rank", "sd")):
    names = {"total": "rank_total", "min": "rank_min", "mean": "rank_mean", "max": "rank_max",
             "imbalance": "rank_imbalance", "sd": "rank_sd", "max_rank": "max_rank",
             "estimate": "rank_estimate", "untrusted": "rank_untrusted", "ranks_na": "ranks_na"}
    for k in keys:
        ck.same(got[names[k]], want[k], "%s.%s" % (where, k))


def check_ranks(ck, run, j):
    if "regions_by_rank" not in j:
        return
    s = run.summary()
    for x in j["regions_by_rank"]:
        i = x["index"]
        w = "regions_by_rank[%d]" % i
        ck.same(row_of(s, index=i, quantity="visits")["ranks_entered"], x["ranks_entered"],
                w + ".ranks_entered")
        for q in QS + ["exclusive_ns"]:
            check_xstat(ck, row_of(s, index=i, quantity=q), x[q], "%s.%s" % (w, q))
        if "time_estimate" in x:
            ck.same(row_of(s, index=i, quantity="wall_ns")["rank_estimate"], x["time_estimate"],
                    w + ".time_estimate")
        for key, ev in x["events"].items():
            check_xstat(ck, row_of(s, index=i, quantity=key), ev, "%s.events[%s]" % (w, key),
                        keys=("total", "min", "mean", "max", "imbalance", "max_rank", "sd",
                              "estimate", "untrusted", "ranks_na"))
    check_by_rank(ck, run, j)
    m = run.mpi()
    ck.ok(len(m) == 4 * len(j["mpi_functions"]),
          "mpi(): %d rows for %d functions" % (len(m), len(j["mpi_functions"])))
    names = list(dict.fromkeys(m["function"]))
    for k, fx in enumerate(j["mpi_functions"]):
        w = "mpi_functions[%d]" % k
        if not ck.ok(k < len(names) and names[k] == fx["name"],
                     "%s: %r, report %r" % (w, names[k:k + 1], fx["name"])):
            continue
        for q, jq in zip(["calls", "wall_ns", "bytes", "bytes_unknown"],
                         ["calls", "wall_ns", "bytes", "bytes_unknown"]):
            got = row_of(m, function=fx["name"], quantity=q)
            ck.same(got["ranks_entered"], fx["ranks_entered"], w + ".ranks_entered")
            ck.ok(list(got["regions"]) == fx["regions"], w + ".regions")
            for key in ("total", "min", "mean", "max", "imbalance", "max_rank", "sd"):
                ck.same(got[key], fx[jq][key], "%s.%s.%s" % (w, jq, key))
            if q == "wall_ns" and "time_estimate" in fx:
                ck.same(got["estimate"], fx["time_estimate"], w + ".time_estimate")
    sh, js = run.mpi_share(), j["mpi_share"]
    ck.ok(len(sh) == len(js["ranks"]), "mpi_share: %d ranks, report %d" % (len(sh),
                                                                         len(js["ranks"])))
    for (_, got), want in zip(sh.iterrows(), js["ranks"]):
        for k in ("rank", "mpi_ns", "total_ns", "share", "estimate"):
            if k in want:
                ck.same(got[k], want[k], "mpi_share.ranks[%d].%s" % (want["rank"], k))
    st = run.mpi_share_stats()
    for k in ("min", "mean", "max", "min_rank", "max_rank"):
        ck.same(st[k], js[k], "mpi_share.%s" % k)


def check_by_rank(ck, run, j):
    """by_rank(): each rank's own values, whose spread across ranks (in
    ascending rank order, as the report folds them) is regions_by_rank's."""
    b = run.by_rank()
    groups = {k: g for k, g in b.groupby(["index", "quantity"], sort=False)}
    for x in j["regions_by_rank"]:
        i = x["index"]
        wants = [(q, x[q]) for q in QS + ["exclusive_ns"]] + list(x["events"].items())
        for q, want in wants:
            w = "by_rank[%d].%s" % (i, q)
            g = groups.get((i, q))
            if not ck.ok(g is not None and list(g["rank"]) == sorted(g["rank"]), w + ": rows"):
                continue
            ck.same(int(g["entered"].sum()), x["ranks_entered"], w + ".entered")
            used = g[g["entered"] & g["value"].notna()]
            vals = [float(v) for v in used["value"]]
            if not vals:
                ck.same(None, want.get("max"), w + ".max")
                continue
            total = 0.0
            for v in vals:
                total += v
            top = max(vals)
            ck.same(min(vals), want["min"], w + ".min")
            ck.same(top, want["max"], w + ".max")
            ck.same(total / len(vals), want["mean"], w + ".mean")
            ck.same(int(used["rank"].iloc[vals.index(top)]), want["max_rank"], w + ".max_rank")


def check_by_rank_rows(ck, run, perfmark, path):
    """by_rank(): the (region, rank) pairs with a value are the rows
    `perfmark report --by rank` prints, for time and for the first event
    (timer-only cells have no count there)."""
    keys = run.event_keys()
    b = run.by_rank()
    names = dict(zip(run.regions()["index"], run.regions()["name"]))
    for metric, q in [("time", "wall_ns")] + ([(keys[0], keys[0])] if keys else []):
        if "#" in metric:
            continue
        p = subprocess.run([perfmark, "report", path, "--by", "rank", "--metric", metric],
                           capture_output=True, timeout=300)
        out = p.stdout.decode("utf-8", "replace").splitlines()
        head = [i for i, line in enumerate(out) if line.startswith("region ") and " rank " in line]
        if not ck.ok(p.returncode == 0 and len(head) == 1, "--by rank --metric %s: no table" %
                     metric):
            continue
        got, end = [], out[head[0]].index(" rank") + 5  # the rank column ends there
        for line in out[head[0] + 1:]:
            left = line[:end].rsplit(None, 1)
            if len(left) != 2 or not left[1].isdigit() or line.startswith("share"):
                break
            got.append((left[0].strip(), int(left[1])))
        rows = b[(b["quantity"] == q) & b["value"].notna()]
        want = [(text_name(names[i]), int(r)) for i, r in zip(rows["index"], rows["rank"])]
        same = len(got) == len(want) and all(
            g[1] == w[1] and (w[0] is None or g[0] == w[0]) for g, w in zip(got, want))
        ck.ok(same, "--by rank --metric %s: report rows %r..., by_rank() %r..." %
              (metric, got[:6], want[:6]))


def text_name(name):
    """A region name as the text report prints it; None (any) for a name the
    text shortens or cleans (long, or not plain ASCII)."""
    return name if len(name) <= 30 and name.isascii() and name.isprintable() and \
        name == name.strip() else None


def check_tables(ck, run, j):
    meta = run.metadata
    for k in ("perfmark_version", "command", "host", "start_time", "clock", "events_requested",
              "event_group", "fallback", "fallback_cause", "cpu", "pid", "duration_ns",
              "kernel_groups", "bind_cpu"):
        if k in j:
            ck.same(meta[k], j[k], "metadata[%s]" % k)
    ck.same(bool(meta["partial"]), j["partial"], "metadata[partial]")
    ev = run.events()
    ck.ok(list(ev["key"]) == [e["key"] for e in j["events"]], "events().key")
    ck.ok(list(ev["group"]) == [e["group"] for e in j["events"]], "events().group")
    th = run.threads()
    ck.ok(len(th) == j["threads_count"], "threads(): %d rows, report %d" % (len(th),
                                                                         j["threads_count"]))
    for t in j["threads"]:
        got = th.iloc[t["index"]]
        for k in ("rank", "thread", "pid", "tid", "cpu_first", "cpu_last", "exited",
                  "open_at_end", "wall_ns"):
            ck.same(got[k], t[k], "threads[%d].%s" % (t["index"], k))
    ck.ok(run.messages() == j["messages"] or len(run.messages()) == len(j["messages"]),
          "messages(): %d, report %d" % (len(run.messages()), len(j["messages"])))
    reg = run.regions()
    ck.ok(list(reg["row"]) == [r["row"] for r in j["regions"]], "regions().row (tree order)")
    ck.ok(list(reg["parent_index"]) == [r["parent"] for r in j["regions"]], "regions().parent")
    ck.ok(list(reg["depth"]) == [r["depth"] for r in j["regions"]], "regions().depth")
    ck.ok(list(reg["kind"]) == [r["kind"] for r in j["regions"]], "regions().kind")


def check_totals(ck, run, j):
    """threads[].events and rank_totals against thread_totals(), rank_totals()."""
    tt = run.thread_totals()
    for t in j["threads"]:
        for key, ev in t["events"].items():
            got = row_of(tt, thread_row=t["index"], event=key)
            got = dict(got, total=got["value"])
            for k in ("raw", "total", "estimate", "counted_share"):
                ck.same(got[k], ev[k], "threads[%d].events[%s].%s" % (t["index"], key, k))
    rt = run.rank_totals()
    for r in j["rank_totals"]:
        for key, ev in r["events"].items():
            got = row_of(rt, row=r["row"], event=key)
            ck.ok(list(got["threads"]) == r["threads"], "rank_totals[%d].threads" % r["row"])
            for k in ("process_raw", "process", "process_estimate", "counted_share",
                      "threads_sum", "threads_estimate", "threads_na", "difference"):
                ck.same(got[k], ev[k], "rank_totals[%d].events[%s].%s" % (r["row"], key, k))


def check_measuring(ck, run, j):
    """The throttle's keys, where the report prints them."""
    if "perfmark_reads" not in j:
        return
    got = run.perfmark_reads()
    for k, v in j["perfmark_reads"].items():
        ck.same(got[k], v, "perfmark_reads.%s" % k)
    ms = run.measuring()
    for reg in j["regions"]:
        m, got = reg["measuring"], ms.iloc[reg["index"]]
        w = "regions[%d].measuring" % reg["index"]
        for k, v in m.items():
            if k == "throttled":
                ck.same(got["throttled_threads"], 0 if v is None else v["threads"],
                        w + ".throttled.threads")
                for x in ("from_min", "from_max"):
                    ck.same(got["throttled_" + x], None if v is None else v[x],
                            "%s.throttled.%s" % (w, x))
            else:
                ck.same(got[k], v, "%s.%s" % (w, k))


def check_hatchet(ck, run, j):
    """to_hatchet_literal(): the report's tree and totals, JSON-clean, frames
    unique (Hatchet merges equal frames); read by Hatchet where installed."""
    lit = run.to_hatchet_literal()
    ck.ok(json.loads(json.dumps(lit, allow_nan=False)) == lit, "hatchet literal: not JSON")
    flat = []

    def walk(nodes, parent):
        for n in nodes:
            flat.append((n, parent))
            walk(n["children"], len(flat) - 1)
    walk(lit, -1)
    ck.ok(len(flat) == len(j["regions"]), "hatchet literal: %d nodes, report %d regions"
          % (len(flat), len(j["regions"])))
    frames = [json.dumps(n["frame"], sort_keys=True) for n, _ in flat]
    ck.ok(len(set(frames)) == len(frames), "hatchet literal: equal frames")
    for (n, parent), reg in zip(flat, j["regions"]):
        w = "hatchet literal of regions[%d]" % reg["index"]
        ck.ok(parent == reg["parent"] and n["frame"]["name"] == reg["name"] and
              n["frame"]["type"] == reg["kind"], w + ": tree")
        ck.same(n["metrics"]["time (inc)"], reg["wall_ns"]["total"], w + ": time (inc)")
        ck.same(n["metrics"]["time"], reg["by_thread"]["exclusive_ns"]["total"], w + ": time")
        ck.same(n["metrics"]["visits"], reg["visits"], w + ": visits")
        for key, ev in reg["events"].items():
            ck.same(n["metrics"][key + " (inc)"], ev["total"], "%s: %s" % (w, key))
    try:
        import hatchet
    except ImportError:
        return
    gf = hatchet.GraphFrame.from_literal(lit)
    ck.ok(len(gf.dataframe) == len(j["regions"]), "Hatchet read %d nodes" % len(gf.dataframe))


def check_cells(ck, run, j):
    import pandas as pd
    c = run.cells()
    if len(j["events"]):
        raw = c.groupby(["region", "event"])["raw"].sum()
        for reg in j["regions"]:
            for key, ev in reg["events"].items():
                got = int(raw.get((reg["row"], key), 0))
                ck.ok(got == ev["raw"], "cells(): raw of region row %d %s: %d, report %d"
                      % (reg["row"], key, got, ev["raw"]))
    blocks = list(run.iter_cells())
    ck.ok(pd.concat(blocks, ignore_index=True).equals(c), "iter_cells() differs from cells()")
    for key in [e["key"] for e in j["events"]][:1]:
        ck.ok(run.cells(events=[key]).equals(c[c["event"] == key].reset_index(drop=True)),
              "cells(events=[%s]) differs from cells() of that event" % key)
    per_cell = c.drop_duplicates(["thread_row", "region"])
    for name, n in j["flags_summary"].items():
        if name in per_cell:
            ck.ok(int(per_cell[name].sum()) == n, "cells(): %s on %d cells, report %d"
                  % (name, int(per_cell[name].sum()), n))
    ck.ok(int(((per_cell["visits"] > 0) | (per_cell["flags"] != 0)).sum()) == j["cells"],
          "cells(): cell count")


def check_dtypes(ck, run, name):
    import pandas as pd
    frames = {"regions": run.regions(), "cells": run.cells(), "summary": run.summary(),
              "threads": run.threads(), "events": run.events(), "mpi": run.mpi(),
              "mpi_share": run.mpi_share(), "flags": run.flags(), "omp_wait": run.omp_wait(),
              "ipc": run.ipc(),
              "thread_totals": run.thread_totals(), "rank_totals": run.rank_totals(),
              "measuring": run.measuring()}
    for fname, df in frames.items():
        for col, dt in df.dtypes.items():
            if pd.api.types.is_integer_dtype(dt):
                ck.ok(str(dt) in ("int64", "Int64"), "%s().%s is %s" % (fname, col, dt))
    s = frames["summary"]
    ck.ok(len(s.query("quantity == 'wall_ns' and threads >= 0")) == len(run.regions()),
          "summary().query on wall_ns rows")
    ck.ok(len(frames["cells"].query("visits >= 0")) == len(frames["cells"]), "cells().query")


def check_file(ck, perfmark, path, name):
    import perfmark as pm
    ck.scope = name + ": "
    before = ck.checks
    try:
        j = report_json(perfmark, path)
        with pm.open(path) as run:
            check_tables(ck, run, j)
            check_regions(ck, run, j)
            check_ranks(ck, run, j)
            if len(set(run.threads()["rank"])) > 1:
                check_by_rank_rows(ck, run, perfmark, path)
            check_omp(ck, run, j)
            check_cells(ck, run, j)
            check_totals(ck, run, j)
            check_measuring(ck, run, j)
            check_hatchet(ck, run, j)
            check_dtypes(ck, run, name)
    except Exception as e:  # a crash of one file must not hide the others
        import traceback
        ck.ok(False, "raised %s: %s\n%s" % (type(e).__name__, e, traceback.format_exc()))
    print("%s: %d checks" % (name, ck.checks - before))


def check_no_fork(ck, path, name):
    """open(check=False) reads the same numbers without the forked child."""
    import perfmark as pm
    ck.scope = name + " (check=False): "
    with pm.open(path) as a, pm.open(path, check=False) as b:
        ck.ok(a.summary().equals(b.summary()), "summary() differs")


def check_bad(ck, path, needles):
    import perfmark as pm
    try:
        with pm.open(path) as run:
            run.summary()
            run.cells()
        ck.ok(False, "opened without an error")
    except pm.PerfmarkError as e:
        ck.ok(all(n in str(e) for n in needles), "message %r lacks %r" % (str(e), needles))
        ck.ok(str(e).startswith(path) and "\n" not in str(e), "message %r: not one line "
              "naming the file" % str(e))
    except Exception as e:
        ck.ok(False, "raised %s, not PerfmarkError: %s" % (type(e).__name__, e))


def check_errors(ck, tmp):
    needles = dict(BAD_VARIANTS)
    needles["badtree"] = ["parent"]
    for variant, want in needles.items():
        ck.scope = variant + ": "
        path = os.path.join(tmp, variant + ".h5")
        make_fixture.write(path, variant)
        check_bad(ck, path, want)
    ck.scope = "missing: "
    check_bad(ck, os.path.join(tmp, "no-such.h5"), ["no such file"])
    ck.scope = "directory: "
    check_bad(ck, tmp, ["directory"])


# Each damaged copy is read in its own interpreter: a crash there is a failure
# of the package (HDF5 crashes on some damage; the package must turn that
# into PerfmarkError), not of this checker.
FUZZ_PROBE = r"""
import sys, perfmark
try:
    with perfmark.open(sys.argv[1]) as r:
        r.summary(); r.cells(); r.threads(); r.mpi(); r.messages(); r.metadata; r.flags()
except perfmark.PerfmarkError as e:
    assert str(e).startswith(sys.argv[1]) and "\n" not in str(e), repr(str(e))
"""


def check_fuzz(ck, build, tmp, count=40, seed=7):
    """Damaged copies of a valid file (cut, or a few bytes changed): a result
    or PerfmarkError, never a crash, a hang or another exception."""
    import random
    src = open(os.path.join(tmp, "full.h5"), "rb").read()
    rnd = random.Random(seed)
    env = dict(os.environ, PYTHONPATH=os.path.join(build, "python"))
    ck.scope = "damaged: "
    for i in range(count):
        b = bytearray(src)
        if i % 3 == 0:
            b = b[:rnd.randrange(len(b))]
        else:
            for _ in range(rnd.randint(1, 8)):
                b[rnd.randrange(len(b))] = rnd.randrange(256)
        path = os.path.join(tmp, "damaged%03d.h5" % i)
        with open(path, "wb") as f:
            f.write(b)
        try:
            p = subprocess.run([sys.executable, "-c", FUZZ_PROBE, path], env=env,
                               capture_output=True, text=True, timeout=120)
            ck.ok(p.returncode == 0, "%s: exit %d: %s" % (path, p.returncode,
                                                         p.stderr.strip()[-600:]))
        except subprocess.TimeoutExpired:
            ck.ok(False, "%s: hung" % path)


def check_revisions(ck, perfmark, tmp):
    """Files of every revision of the table, and revision-1 files each
    without one entry (tests/schema/check_schema.py writes them): the
    package follows the table's rule like the report — a needed entry
    missing is a PerfmarkError naming it, any other is read as zeros or ""
    and the numbers still equal the report's."""
    sys.path.insert(0, os.path.join(SRC, "tests", "schema"))
    import check_schema
    with open(os.path.join(os.path.dirname(perfmark), os.pardir, "share", "perfmark",
                           "schema.json"), encoding="utf-8") as f:
        schema = json.load(f)
    for rev in range(1, schema["revision"] + 1):
        path = os.path.join(tmp, "rev%d.h5" % rev)
        check_schema.write_revision(schema, path, rev)
        check_file(ck, perfmark, path, "revision %d" % rev)
    for e in schema["entries"]:
        if e["path"] == "/" or e["since"] > 1:
            continue
        path = os.path.join(tmp, "drop.h5")
        check_schema.write_revision(schema, path, 1, drop=e["path"])
        name = "revision 1 without %s" % e["path"]
        if e["rule"] == "needed":
            ck.scope = name + ": "
            check_bad(ck, path, [re.split(r"[@./]", e["path"])[-1]])
        else:
            check_file(ck, perfmark, path, name)


def check_schema(ck, build):
    """The package's generator (pip's path) against the C build's JSON."""
    from perfmark import _schema_def
    ck.scope = "schema.json: "
    with open(os.path.join(SRC, "schema", "pm_schema.def"), encoding="utf-8") as f:
        d = f.read()
    with open(os.path.join(SRC, "schema", "pm_schema.h"), encoding="utf-8") as f:
        h = f.read()
    mine = _schema_def.table(d, h)
    with open(os.path.join(build, "share", "perfmark", "schema.json"), encoding="utf-8") as f:
        c = json.load(f)
    for k in ("schema_version", "revision", "dims"):
        ck.ok(mine[k] == c[k], "%s: python %r, C %r" % (k, mine[k], c[k]))
    ck.ok(len(mine["entries"]) == len(c["entries"]), "%d entries, C %d"
          % (len(mine["entries"]), len(c["entries"])))
    for a, b in zip(mine["entries"], c["entries"]):
        ck.ok(a == b, "entry %s: python %r, C %r" % (b["id"], a, b))
    ck.ok(list(mine) == list(c), "top-level keys %r, C %r" % (list(mine), list(c)))


def check_series(ck, build, tmp):
    """series() and process_series() on runs with --interval (nested_regions;
    a 2-rank mpi_omp_demo): a thread's rows add up to its /thread totals and a
    process's to its own count, exactly; the report's JSON bins of a rank add
    up to its rows; times never go back; a run without --interval gives
    empty frames."""
    import pandas as pd
    import perfmark as pm
    perfmark = os.path.join(build, "bin", "perfmark")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PERFMARK_")}
    env.update(MPI_ENV)
    runs = [("series nested_regions", [os.path.join(build, "bin", "nested_regions")], "10ms")]
    if shutil.which("mpirun"):
        runs.append(("series mpi_omp_demo", ["mpirun", "-np", "2", "--oversubscribe", "--bind-to",
                                             "none", os.path.join(build, "bin", "mpi_omp_demo")],
                     "20ms"))
    for name, prog, ivl in runs:
        ck.scope = name + ": "
        f = os.path.join(tmp, name.replace(" ", "_") + ".h5")
        p = subprocess.run([perfmark, "run", "-q", "-e", "sw", "--interval", ivl, "-o", f, "--"] +
                           prog, env=env, capture_output=True, timeout=600)
        if not ck.ok(p.returncode == 0 and os.path.exists(f), "the run failed: %s" %
                     p.stderr.decode()[-300:]):
            continue
        with pm.open(f) as run:
            s, ps = run.series(), run.process_series()
            ck.ok(len(s) > 0 and len(ps) > 0, "no series rows")
            got = s.groupby(["thread_row", "event"])["raw"].sum()
            for _, t in run.thread_totals().iterrows():
                ck.same(int(got.get((t["thread_row"], t["event"]), 0)), int(t["raw"]),
                        "thread %d %s: rows' sum" % (t["thread_row"], t["event"]))
            pgot = ps.groupby(["rank", "event"])["raw"].sum()
            ranks = run.rank_totals()
            for _, r in ranks.iterrows():
                ck.same(int(pgot.get((int(r["rank"]), r["event"]), 0)), int(r["process_raw"]),
                        "rank %d %s: process rows' sum" % (r["rank"], r["event"]))
            for t, g in s.groupby("thread_row"):
                ck.ok(g["time_ns"].is_monotonic_increasing, "thread %d: time goes back" % t)
            known = set(run.regions()["path"]) | {None}
            ck.ok(set(s["path"]) <= known, "series paths not in the tree")
            for c in ("time_ns", "thread_row", "rank", "region", "raw"):
                ck.ok(str(s[c].dtype) == "int64", "series().%s is %s" % (c, s[c].dtype))
            j = report_json(perfmark, f)["series"]
            for rj in j["ranks"]:
                rows = s[s["rank"] == rj["rank"]]
                for ev, vals in rj["values"].items():
                    want = float(rows[rows["event"] == ev]["value"].sum())
                    total = sum(v for v in vals if v is not None)
                    ck.ok(abs(total - want) <= 1e-9 * max(1.0, abs(want)),
                          "rank %d %s: report bins add up to %r, rows %r" %
                          (rj["rank"], ev, total, want))
    ck.scope = "series, no --interval: "
    nested = os.path.join(tmp, "nested.h5")
    if os.path.exists(nested):
        with pm.open(nested) as run:
            ck.ok(len(run.series()) == 0 and isinstance(run.series(), pd.DataFrame) and
                  len(run.process_series()) == 0, "series rows without --interval")


def real_files(build, tmp):
    """(name, path) of files written by real runs; skipped ones named."""
    perfmark = os.path.join(build, "bin", "perfmark")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PERFMARK_")}
    out = []
    f = os.path.join(tmp, "nested.h5")
    p = subprocess.run([perfmark, "run", "-e", "sw", "-o", f, "--",
                        os.path.join(build, "bin", "nested_regions")], env=env,
                       capture_output=True, timeout=300)
    out.append(("nested_regions", f, None if p.returncode == 0 and os.path.exists(f)
                else "exit %d: %s" % (p.returncode, p.stderr.decode()[-500:])))
    if not shutil.which("mpirun"):
        print("SKIP mpi_omp_demo, mpi_poll: no mpirun on PATH")
        return out
    env.update(MPI_ENV)
    # the demo; and MPI_Test polls: TIMER_ONLY, their time sampled (estimates)
    for name, prog in (("mpi_omp_demo", [os.path.join(build, "bin", "mpi_omp_demo")]),
                       ("mpi_poll", [os.path.join(build, "tests", "mpi_poll"), "300000"])):
        f = os.path.join(tmp, name + ".h5")
        p = subprocess.run([perfmark, "run", "-e", "sw", "-o", f, "--", "mpirun", "-np", "2",
                            "--oversubscribe", "--bind-to", "none"] + prog, env=env,
                           capture_output=True, timeout=600)
        out.append((name, f, None if p.returncode == 0 and os.path.exists(f)
                    else "exit %d: %s" % (p.returncode, p.stderr.decode()[-500:])))
    return out


def main():
    build = build_arg(__doc__)
    if build is None:
        return 2
    os.environ.pop("PERFMARK_REPORT_BLOCK", None)
    perfmark = os.path.join(build, "bin", "perfmark")
    ck = Checker()
    check_schema(ck, build)
    with tempfile.TemporaryDirectory(prefix="pm-python-") as tmp:
        for variant in GOOD_VARIANTS:
            path = os.path.join(tmp, variant + ".h5")
            make_fixture.write(path, variant)
            check_file(ck, perfmark, path, variant)
        check_no_fork(ck, os.path.join(tmp, "ranks.h5"), "ranks")
        # blocks of one thread row: both join the blocks the same way
        os.environ["PERFMARK_REPORT_BLOCK"] = "1"
        for variant in BLOCK_VARIANTS:
            check_file(ck, perfmark, os.path.join(tmp, variant + ".h5"), variant + " (blocks)")
        del os.environ["PERFMARK_REPORT_BLOCK"]
        for shape in SYNTHETIC:
            name = "gen_synthetic %s" % " ".join(map(str, shape))
            path = os.path.join(tmp, "synthetic-%s.h5" % "-".join(map(str, shape)))
            p = subprocess.run([os.path.join(build, "bin", "gen_synthetic"), path] +
                               [str(n) for n in shape], capture_output=True, timeout=300)
            ck.scope = name + ": "
            if ck.ok(p.returncode == 0, "exit %d: %s" % (p.returncode, p.stderr[-500:])):
                check_file(ck, perfmark, path, name)
        for name, path, err in real_files(build, tmp):
            ck.scope = name + ": "
            if ck.ok(err is None, "the run failed: %s" % err):
                check_file(ck, perfmark, path, name)
        check_errors(ck, tmp)
        check_revisions(ck, perfmark, tmp)
        check_series(ck, build, tmp)
        check_fuzz(ck, build, tmp)
    return ck.finish()


if __name__ == "__main__":
    sys.exit(main())
