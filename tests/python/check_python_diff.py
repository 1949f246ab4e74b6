#!/usr/bin/python3
"""perfmark.diff() against `perfmark diff --format json`, exactly.

usage: /usr/bin/python3 tests/python/check_python_diff.py BUILD_DIR

With BUILD_DIR/python first on sys.path, for every valid report fixture
(tests/report/make_fixture.py) against itself and against the next one, the
option sets the golden diff outputs use (--metric, --threshold, --region,
the throttle's files), and pairs of real runs (`pagefaults 1000 2` against
`pagefaults 3000 2`, a regression by construction; two 2-rank mpi_omp_demo
jobs, units = ranks; nested_regions against the 2-rank demo):

- every region pair, metric and field of the JSON (value, estimate,
  untrusted, units, mean, min, max, timer_only, throttled of both sides;
  change, change_pct, beyond_spread, regression) equals the package's row
  (numbers equal, not close: the report prints %.17g), null where it is;
- the unit, the rows' order, only_in_a / only_in_b and the number of
  regressions are the same, and the exit status agrees with it;
- a metric in neither file and a region in neither raise ValueError.
Exit 0 = pass, 1 = mismatches (each printed).
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(SRC, "tests", "report"))
sys.path.insert(0, HERE)
import make_fixture  # noqa: E402
from check_python import MPI_ENV, Checker, build_arg  # noqa: E402
from check_report import GOOD_VARIANTS  # noqa: E402

SIDE = ("value", "estimate", "untrusted", "units", "mean", "min", "max")
OPTION_SETS = [  # (A, B, options): the golden diff outputs' (tests/report/golden.py)
    ("full", "clean", ["--metric", "page-faults"]),
    ("full", "clean", ["--metric", "ipc"]),
    ("full", "clean", ["--threshold", "0"]),
    ("full", "clean", ["--threshold", "5", "--metric", "time"]),
    ("clean", "full", ["--metric", "instructions", "--threshold", "1"]),
    ("full", "clean", ["--region", "solve", "--threshold", "0"]),
    ("ranks", "ranks_shuffled", ["--region", "main/solve"]),
    ("throttle_old", "throttle", ["--metric", "task-clock", "--threshold", "1"]),
    ("throttle", "throttle_old", []),
    ("ranks_shuffled", "ranks", ["--threshold", "0"]),
]


def kwargs_of(opts):
    kw, names = {}, {"--metric": "metric", "--threshold": "threshold", "--region": "region"}
    for k, v in zip(opts[::2], opts[1::2]):
        kw[names[k]] = float(v) if k == "--threshold" else v
    return kw


def check_pair(ck, perfmark, a, b, opts, name):
    import perfmark as pm
    ck.scope = "%s %s: " % (name, " ".join(opts))
    p = subprocess.run([perfmark, "diff", a, b, "--format", "json"] + opts,
                       capture_output=True, timeout=300)
    if not ck.ok(p.returncode in (0, 1), "perfmark diff exit %d: %s" % (p.returncode,
                                                                        p.stderr[-300:])):
        return
    j = json.loads(p.stdout.decode("utf-8"))
    d = pm.diff(a, b, **kwargs_of(opts))
    ck.same(d.unit, j["unit"], "unit")
    ck.same(d.metric, j["metric"], "metric")
    ck.same(d.threshold, j["threshold_pct"], "threshold_pct")
    ck.same(d.threads, [j["a"]["threads"], j["b"]["threads"]], "threads")
    ck.same(d.units, [j["a"]["units"], j["b"]["units"]], "units")
    ck.same(d.only_in_a, j["only_in_a"], "only_in_a")
    ck.same(d.only_in_b, j["only_in_b"], "only_in_b")
    ck.same(len(d.regressions), j["regressions"], "regressions")
    ck.same(p.returncode, 1 if len(d.regressions) else 0, "exit status")
    want = [(reg, m, x) for reg in j["regions"] for m, x in reg["metrics"].items()]
    if not ck.ok(len(d.table) == len(want), "%d rows, report %d" % (len(d.table), len(want))):
        return
    for (_, row), (reg, m, x) in zip(d.table.iterrows(), want):
        w = "%s [%s]" % (reg["path"], m)
        ck.same(row["path"], reg["path"], w + ".path")
        ck.same(row["kind"], reg["kind"], w + ".kind")
        ck.same(row["whole_run"], reg["whole_run"], w + ".whole_run")
        ck.same(row["metric"], m, w + ".metric")
        for s in "ab":
            keys = SIDE + (("timer_only", "throttled") if "timer_only" in x[s] else ())
            for k in keys:
                ck.same(row["%s_%s" % (s, k)], x[s][k], "%s.%s.%s" % (w, s, k))
        for k in ("change", "change_pct", "beyond_spread", "regression"):
            ck.same(row[k], x[k], "%s.%s" % (w, k))


def check_errors(ck, a, b):
    import perfmark as pm
    ck.scope = "errors: "
    for kw in ({"metric": "no-such-event"}, {"region": "no/such/region"}):
        try:
            pm.diff(a, b, **kw)
            ck.ok(False, "%r: no error" % kw)
        except ValueError as e:
            ck.ok(("no metric" in str(e)) if "metric" in kw else ("no region" in str(e)),
                  "%r: %s" % (kw, e))


def real_pairs(build, tmp):
    """(name, A, B) of real runs; a run that fails is a failure."""
    perfmark = os.path.join(build, "bin", "perfmark")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PERFMARK_")}
    env.update(MPI_ENV)
    files = {}
    runs = {"pf1000": [os.path.join(build, "tests", "pagefaults"), "1000", "2"],
            "pf3000": [os.path.join(build, "tests", "pagefaults"), "3000", "2"],
            "nested": [os.path.join(build, "bin", "nested_regions")]}
    for i in (1, 2):
        runs["demo%d" % i] = ["mpirun", "-np", "2", "--oversubscribe", "--bind-to", "none",
                              os.path.join(build, "bin", "mpi_omp_demo")]
    for name, prog in runs.items():
        f = os.path.join(tmp, name + ".h5")
        p = subprocess.run([perfmark, "run", "-q", "-e", "sw", "-o", f, "--"] + prog, env=env,
                           capture_output=True, timeout=600)
        if p.returncode != 0 or not os.path.exists(f):
            raise SystemExit("cannot measure %s: exit %d: %s" % (name, p.returncode,
                                                                 p.stderr[-500:]))
        files[name] = f
    return [("pagefaults 1000 -> 3000", files["pf1000"], files["pf3000"],
             ["--metric", "page-faults", "--threshold", "50"]),
            ("pagefaults 1000 -> 3000", files["pf1000"], files["pf3000"], []),
            ("mpi_omp_demo twice", files["demo1"], files["demo2"], []),
            ("mpi_omp_demo twice", files["demo1"], files["demo2"], ["--threshold", "1000"]),
            ("nested -> mpi_omp_demo", files["nested"], files["demo1"], [])]


def main():
    build = build_arg(__doc__)
    if build is None:
        return 2
    perfmark = os.path.join(build, "bin", "perfmark")
    ck = Checker()
    with tempfile.TemporaryDirectory(prefix="pm-python-diff-") as tmp:
        path = {}
        for v in GOOD_VARIANTS:
            path[v] = os.path.join(tmp, v + ".h5")
            make_fixture.write(path[v], v)
        for i, v in enumerate(GOOD_VARIANTS):
            nxt = GOOD_VARIANTS[(i + 1) % len(GOOD_VARIANTS)]
            check_pair(ck, perfmark, path[v], path[v], [], v + " itself")
            check_pair(ck, perfmark, path[v], path[nxt], [], "%s -> %s" % (v, nxt))
        for a, b, opts in OPTION_SETS:
            check_pair(ck, perfmark, path[a], path[b], opts, "%s -> %s" % (a, b))
        check_errors(ck, path["full"], path["clean"])
        for name, a, b, opts in real_pairs(build, tmp):
            check_pair(ck, perfmark, a, b, opts, name)
    return ck.finish()


if __name__ == "__main__":
    sys.exit(main())
