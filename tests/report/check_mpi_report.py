#!/usr/bin/python3
"""`perfmark report` under mpirun (issue 6): the cells are read a block of
thread rows at a time, the blocks shared among the ranks, and rank 0 joins
them in block order, so np 1 and np 4 must print the same bytes.

usage: /usr/bin/python3 tests/report/check_mpi_report.py BUILD_DIR

Checks, on a synthetic job file (bench/gen_synthetic) and on a real one
(mpi_omp_demo run under `perfmark run`):
  - text, JSON and CSV of `mpirun -np 1` and `mpirun -np 4` (and of MPICH's
    `mpiexec.mpich -n 3`, where installed) are identical, and identical to a
    plain `perfmark report` (no MPI) with the same blocks;
  - the np 4 report's numbers against h5py (check_report.py's recomputation);
  - a bad file under mpirun: exit status 1 and one message, from rank 0.
PERFMARK_REPORT_BLOCK makes the blocks small, so that every rank gets some.
Exit 0 = pass, 77 = skipped (no mpirun, or the programs are not built).
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


def env_with(**extra):
    e = {k: v for k, v in os.environ.items() if not k.startswith("PERFMARK_")}
    e.update(MPI_ENV, **extra)
    return e


def report(cmd, env):
    return subprocess.run(cmd, env=env, capture_output=True, timeout=300)


def same_everywhere(ck, perfmark, path, name, block):
    """np 1, np 4 and no MPI: the same bytes in every format."""
    env = env_with(PERFMARK_REPORT_BLOCK=str(block))
    launchers = [("serial", []), ("np1", MPIRUN + ["-np", "1"]), ("np4", MPIRUN + ["-np", "4"])]
    if shutil.which("mpiexec.mpich"):  # MPICH's Hydra: the report built on MPICH
        launchers.append(("mpich np3", ["mpiexec.mpich", "-n", "3"]))
    for fmt in ("text", "json", "csv"):
        outs = {}
        for label, pre in launchers:
            r = report(pre + [perfmark, "report", path, "--format", fmt], env)
            if ck.ok(r.returncode == 0, "%s %s %s: exit %d, %r" % (name, fmt, label, r.returncode,
                                                                   r.stderr[-500:])):
                outs[label] = r.stdout
        if len(outs) == len(launchers):
            ck.ok(outs["np1"] == outs["np4"], "%s --format %s: np 1 and np 4 differ" % (name, fmt))
            ck.ok("mpich np3" not in outs or outs["mpich np3"] == outs["np4"],
                  "%s --format %s: mpiexec.mpich -n 3 and mpirun -np 4 differ" % (name, fmt))
            ck.ok(outs["serial"] == outs["np1"],
                  "%s --format %s: plain and np 1 differ" % (name, fmt))
            ck.ok(len(outs["np4"]) > 1000, "%s --format %s: report too short" % (name, fmt))


def real_job(ck, build, perfmark, tmp):
    demo = os.path.join(build, "bin", "mpi_omp_demo")
    if not ck.ok(os.path.exists(demo), "real job: %s not built" % demo):
        return
    out = os.path.join(tmp, "demo.h5")
    cmd = [perfmark, "run", "-e", "sw", "-o", out, "--"] + MPIRUN + ["-np", "3", demo]
    p = subprocess.run(cmd, env=env_with(OMP_NUM_THREADS="2"), cwd=tmp, capture_output=True,
                       timeout=300)
    if not ck.ok(p.returncode == 0 and os.path.exists(out),
                 "real job: %s exited %d: %r" % (" ".join(cmd), p.returncode, p.stderr[-1000:])):
        return
    # one thread per block: the 3 ranks' threads are spread over all 4 readers
    same_everywhere(ck, perfmark, out, "real job", 1)


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    build = os.path.abspath(argv[1])
    perfmark = os.path.join(build, "bin", "perfmark")
    gen = os.path.join(build, "bin", "gen_synthetic")
    if shutil.which("mpirun") is None:
        print("SKIP: no mpirun on PATH")
        return SKIP
    if not (os.path.exists(perfmark) and os.path.exists(gen)):
        # built with the suite always: missing is a broken build
        print("FAIL: perfmark or gen_synthetic not built in %s" % build)
        return 1
    ck = check_report.Checker()
    with tempfile.TemporaryDirectory(prefix="pm-mpi-report-") as tmp:
        path = os.path.join(tmp, "synthetic.h5")
        r = subprocess.run([gen, path, "24", "4", "30", "8"], capture_output=True, timeout=120)
        if r.returncode != 0:
            print("gen_synthetic failed: %r" % r.stderr)
            return 1
        # 96 threads in blocks of 5: 20 blocks, 5 per rank at np 4, and the
        # 4 threads of a job rank often split between two blocks and readers
        same_everywhere(ck, perfmark, path, "synthetic", 5)
        # the np 4 numbers themselves, against h5py
        os.environ.update(MPI_ENV, PERFMARK_REPORT_BLOCK="5")
        check_report.check_file(ck, MPIRUN + ["-np", "4", perfmark, "report"], path,
                                "synthetic np 4")
        del os.environ["PERFMARK_REPORT_BLOCK"]
        real_job(ck, build, perfmark, tmp)
        # a file that is no perfmark file: one message (rank 0's), exit 1
        bad = os.path.join(tmp, "bad.h5")
        with open(bad, "wb") as f:
            f.write(b"not hdf5\n" * 100)
        r = report(MPIRUN + ["-np", "4", perfmark, "report", bad], env_with())
        err = r.stderr.decode("utf-8", "replace")
        ck.ok(r.returncode != 0 and err.count("perfmark report: ") == 1 and
              "not a perfmark file" in err and r.stdout == b"",
              "bad file under mpirun: exit %d, stderr %r" % (r.returncode, err[-800:]))
    if ck.errors:
        print("check_mpi_report: %d of %d checks FAILED:" % (len(ck.errors), ck.checks))
        for e in ck.errors[:50]:
            print("  " + e)
        return 1
    print("check_mpi_report: all %d checks passed" % ck.checks)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
