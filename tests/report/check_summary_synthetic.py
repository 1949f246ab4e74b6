#!/usr/bin/python3
"""Summary files made from synthetic job files (issue "Jobs of any size").

usage: /usr/bin/python3 tests/report/check_summary_synthetic.py BUILD_DIR

1. The same numbers: a synthetic job (bench/gen_synthetic: 64 ranks x 2
   threads x 20 regions x 4 events, MULTIPLEXED cells and threads that skip
   regions) and the summary bench/make_summary makes of it, its state made
   in blocks of 5 thread rows (PERFMARK_REPORT_BLOCK) while the full file's
   report reads it whole: `perfmark report --format json` gives every key
   but the kept rank's own rows the same, and the text its region tables;
   the Python package's frames over every rank (check_python_summary.py)
   equal the full file's to the last bit.
2. The report's memory does not grow with the ranks of a summary file: the
   summaries of 1,000 and 100,000 ranks (1 thread x 10 regions x 4 events
   each) are reported within LIMIT_KB of each other (what grows: 44 bytes a
   rank of MPI shares in the state, and the report's rank list). No timing.
"""
import json
import os
import subprocess
import sys
import tempfile

BUILD = sys.argv[1]
GEN, MAKE = os.path.join(BUILD, "bin", "gen_synthetic"), os.path.join(BUILD, "bin", "make_summary")
PERFMARK = os.path.join(BUILD, "bin", "perfmark")
LIMIT_KB = 16 * 1024
PY_CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python",
                        "check_python_summary.py")
PY_PATH = os.path.join(BUILD, "python")
failed = []


def check(cond, msg):
    if not cond:
        failed.append(msg)
        print("FAIL: " + msg)
    return cond


def run(args, env=None):
    e = {k: v for k, v in os.environ.items() if not k.startswith("PERFMARK_")}
    e.update(env or {})
    p = subprocess.run(args, env=e, capture_output=True, text=True, errors="replace")
    if p.returncode != 0:
        sys.exit("%s exited %d: %s" % (" ".join(args), p.returncode, p.stderr[-2000:]))
    return p.stdout


def summary_of(tmp, name, ranks, tpr, regions, events, block=None):
    full, summ = os.path.join(tmp, name + "_full.h5"), os.path.join(tmp, name + "_sum.h5")
    run([GEN, full, str(ranks), str(tpr), str(regions), str(events)])
    run([GEN, summ, "1", str(tpr), str(regions), str(events)])
    print(run([MAKE, full, summ], env={"PERFMARK_REPORT_BLOCK": str(block)} if block else None)
          .strip())
    return full, summ


def tables(path):
    out = run([PERFMARK, "report", path]).splitlines()
    at = next(i for i, l in enumerate(out) if l.startswith("Regions:"))
    end = next(i for i, l in enumerate(out) if l.startswith("Threads:"))
    return out[at:end]


WRAPPER = r"""
import resource, subprocess, sys
r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def peak_kb(path):
    rc, kb = subprocess.run([sys.executable, "-c", WRAPPER, PERFMARK, "report", path,
                             "--format", "json"], capture_output=True, text=True).stdout.split()
    check(rc == "0", "report of %s exited %s" % (path, rc))
    return int(kb)


with tempfile.TemporaryDirectory() as tmp:
    full, summ = summary_of(tmp, "eq", 64, 2, 20, 4, block=5)
    jf = json.loads(run([PERFMARK, "report", "--format", "json", full]))
    js = json.loads(run([PERFMARK, "report", "--format", "json", summ]))
    check(set(js) - set(jf) == {"summary"} and not set(jf) - set(js),
          "keys differ: %s" % sorted(set(js) ^ set(jf)))
    check(js.get("summary", {}).get("ranks") == 64 and js["summary"]["ranks_kept"] == [0],
          "summary says %s" % js.get("summary"))
    check(jf["flags_summary"].get("MULTIPLEXED", 0) > 0 and len(jf["regions_by_rank"]) == 20,
          "the synthetic job has no MULTIPLEXED cells or no statistics across ranks")
    same = [k for k in jf if k not in ("file", "threads", "rank_totals")]
    for k in same:
        check(js.get(k) == jf[k], "%s differs:\n%s\nvs\n%s" % (k, str(jf[k])[:800],
                                                              str(js.get(k))[:800]))
    check(js["threads"] == [t for t in jf["threads"] if t["rank"] == 0],
          "rank 0's threads differ")
    check(tables(full) == tables(summ), "the text's region and rank tables differ")
    print("64 ranks: %d report sections equal" % len(same))
    # the Python package on the summary: the full file's frames, bit for bit
    print(run([sys.executable, PY_CHECK, full, summ], env={"PYTHONPATH": PY_PATH}).strip())

    small = summary_of(tmp, "small", 1000, 1, 10, 4)[1]
    large = summary_of(tmp, "large", 100000, 1, 10, 4)[1]
    a, b = peak_kb(small), peak_kb(large)
    # and the package reads the 100,000 ranks' summary (its MPI shares: a row a rank)
    got = run([sys.executable, "-c", "import perfmark, sys; r = perfmark.open(sys.argv[1]); "
               "print(len(r.summary()), len(r.mpi_share()), r.summary()['ranks_entered'].max())",
               large], env={"PYTHONPATH": PY_PATH}).split()
    check(got == ["90", "100000", "100000"], "python on 100,000 ranks' summary: %s" % got)
    print("report of a summary of 1,000 ranks: %d kB; of 100,000 ranks: %d kB (%s kB); files "
          "%d and %d bytes" % (a, b, "%+d" % (b - a), os.path.getsize(small),
                               os.path.getsize(large)))
    check(b - a <= LIMIT_KB, "the report of 100,000 ranks' summary took %d kB more than of "
          "1,000 ranks' (limit %d)" % (b - a, LIMIT_KB))

if failed:
    sys.exit("%d check(s) failed" % len(failed))
print("PASS")
