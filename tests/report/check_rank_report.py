#!/usr/bin/python3
"""The report across ranks on real MPI jobs: run mpi_calls (4 ranks, every
wrapped MPI function, several from more than one call path) and mpi_omp_demo
(3 ranks of 2 OpenMP threads) under `perfmark run`, then check every format
of `perfmark report` against numbers recomputed from the file with h5py (the
same independent recomputation as check_report.py uses for its fixtures).

usage: /usr/bin/python3 tests/report/check_rank_report.py BUILD_DIR
Exit 0 = pass, 77 = skipped (no mpirun or MPI programs not built), 1 = failure.
"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import check_report  # noqa: E402

SKIP = 77
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_mpi_yield_when_idle": "1"}
MPIRUN = ["mpirun", "--oversubscribe", "--bind-to", "none"]


def measure(perfmark, out, np_, prog, env, cwd):
    """`perfmark run -e sw -o OUT -- mpirun -np N PROG`; None when it worked."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("PERFMARK_")}
    full.update(MPI_ENV, **env)
    cmd = [perfmark, "run", "-e", "sw", "-o", out, "--"] + MPIRUN + ["-np", str(np_), prog]
    p = subprocess.run(cmd, env=full, cwd=cwd, capture_output=True, text=True,
                       errors="replace", timeout=600)
    if p.returncode != 0 or not os.path.exists(out):
        return "%s exited %d\n%s%s" % (" ".join(cmd), p.returncode, p.stdout[-2000:],
                                       p.stderr[-2000:])
    return None


def check_job(ck, x, np_, name):
    """What a real job file must show beyond matching h5py."""
    xr = x["xr"]
    ck.ok(xr["multi"] and xr["ranks"] == list(range(np_)),
          "%s: ranks %r, expected 0..%d" % (name, xr["ranks"], np_ - 1))
    ck.ok(xr["functions"] != [], "%s: no MPI function in the report" % name)
    for s in xr["share"]:
        ck.ok(s["share"] is not None and 0 < s["share"],
              "%s: rank %d has MPI share %r" % (name, s["rank"], s["share"]))


def main():
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    build = os.path.abspath(sys.argv[1])
    perfmark = os.path.join(build, "bin", "perfmark")
    jobs = [  # (name, ranks, program, environment)
        ("mpi_calls", 4, os.path.join(build, "tests", "mpi_calls"), {}),
        ("mpi_omp_demo", 3, os.path.join(build, "bin", "mpi_omp_demo"), {"OMP_NUM_THREADS": "2"}),
    ]
    if not shutil.which("mpirun"):
        print("SKIP: no mpirun on PATH")
        return SKIP
    missing = [prog for _, _, prog, _ in jobs if not os.path.exists(prog)]
    if missing:  # built with the suite always: missing is a broken build
        print("FAIL: not built: %s" % " ".join(missing))
        return 1

    ck = check_report.Checker()
    tmp = tempfile.mkdtemp(prefix="pm-rank-report-")
    try:
        for name, np_, prog, env in jobs:
            out = os.path.join(tmp, name + ".h5")
            err = measure(perfmark, out, np_, prog, env, tmp)
            if not ck.ok(err is None, "%s: %s" % (name, err)):
                continue
            x = check_report.check_file(ck, [perfmark, "report"], out, name)
            check_job(ck, x, np_, name)
            if name == "mpi_calls":
                # the same function from several call paths is one row
                send = [f for f in x["xr"]["functions"] if f["name"] == "MPI_Send"]
                ck.ok(send and len(send[0]["regions"]) > 1,
                      "mpi_calls: MPI_Send is not summed over its call paths: %r" % send)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if ck.errors:
        print("check_rank_report: %d of %d checks FAILED:" % (len(ck.errors), ck.checks))
        for e in ck.errors[:200]:
            print("  " + e)
        return 1
    print("check_rank_report: all %d checks passed" % ck.checks)
    return 0


if __name__ == "__main__":
    sys.exit(main())
