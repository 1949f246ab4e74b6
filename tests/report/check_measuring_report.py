#!/usr/bin/python3
"""The report of real runs that the throttle shaped: every format against
h5py (check_report.check_file, the same independent recomputation as the
fixtures get), and what the report must say about them.

- `overhead_regions throttle 100000`: region big/tiny (100,000 empty visits)
  is THROTTLED from visit 101 and OVERHEAD; its visits are exact; the text
  says so ("from visit 101"), and says what perfmark's reads cost
  ("perfmark's reads: ~X, Y % of the thread time", recomputed here).
- `mpirun -np 2 mpi_poll 1200000`: MPI_Test is TIMER_ONLY on both ranks, its
  1.2 M calls exact, only some timed: its time is the estimate
  wall x visits / timed (~), above the raw sum of the timed calls; its
  counts show as "timer only"; "compute" (1,200 visits, one page each) is
  THROTTLED from 101 on both ranks.

usage: /usr/bin/python3 tests/report/check_measuring_report.py BUILD_DIR
Exit 0 = pass, 77 = skipped (programs not built, or no mpirun), 1 = failure.
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
POLLS = 1200000  # compute: POLLS / 1000 visits, above the warm-up
WARMUP = 100     # runtime/session/pm_config.h


SURE = "warmup=%d,k=1000000" % WARMUP


def measure(cmd, out, cwd):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PERFMARK_")}
    env.update(MPI_ENV)
    p = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, errors="replace",
                       timeout=600)
    if p.returncode != 0 or not os.path.exists(out):
        return "%s exited %d\n%s%s" % (" ".join(cmd), p.returncode, p.stdout[-2000:],
                                       p.stderr[-2000:])
    return None


def region(x, path):
    hit = [reg for reg in x["regions"] if reg["path"] == path]
    return hit[0] if hit else None


def check_throttled(ck, x, path, threads):
    reg = region(x, path)
    if not ck.ok(reg is not None, "no region %s" % path):
        return
    want = {"threads": threads, "from_min": WARMUP + 1, "from_max": WARMUP + 1}
    ck.ok(reg["measuring"]["throttled"] == want, "%s: throttled %r, expected %r" %
          (path, reg["measuring"]["throttled"], want))
    ck.ok(reg["flags"].get("THROTTLED") == threads, "%s: flags %r" % (path, reg["flags"]))


def check_text(ck, prefix, path, needles):
    r = subprocess.run(prefix + [path], capture_output=True, timeout=300)
    text = " ".join(r.stdout.decode("utf-8", "replace").split())
    for n in needles:
        ck.ok(n in text, "text lacks %r" % n)


def main():
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    build = os.path.abspath(sys.argv[1])
    perfmark = os.path.join(build, "bin", "perfmark")
    overhead = os.path.join(build, "tests", "overhead_regions")
    poll = os.path.join(build, "tests", "mpi_poll")
    for p in (perfmark, overhead, poll):
        if not os.path.exists(p):  # built with the suite always: a broken build
            print("FAIL: not built: %s" % p)
            return 1
    if not shutil.which("mpirun"):
        print("SKIP: no mpirun on PATH")
        return SKIP
    prefix = [perfmark, "report"]
    ck = check_report.Checker()
    tmp = tempfile.mkdtemp(prefix="pm-measuring-report-")
    try:
        out = os.path.join(tmp, "throttle.h5")
        # k so large that every region past its warm-up is throttled: what is
        # checked here is the report of it, not the rule (overhead_*), which
        # a preempted warm-up can leave unthrottled with the default k
        err = measure([perfmark, "run", "-q", "-e", "sw", "--throttle", SURE, "-o", out, "--",
                       overhead, "throttle", "100000"], out, tmp)
        if ck.ok(err is None, "overhead_regions: %s" % err):
            x = check_report.check_file(ck, prefix, out, "overhead_regions")
            m = check_report.load(out)
            ck.scope = "overhead_regions: "
            tiny = region(x, "big/tiny")
            ck.ok(tiny and tiny["visits"] == 100000 and tiny["flags"].get("OVERHEAD") == 1,
                  "big/tiny: %r" % ((tiny["visits"], tiny["flags"]) if tiny else None,))
            check_throttled(ck, x, "big/tiny", 1)
            run = x["run_reads"]
            ck.ok(run["ns"] and run["share"] and run["reads"] >= 2 * WARMUP,
                  "perfmark's reads %r" % run)
            check_text(ck, prefix, out, ["(from visit %d)" % (WARMUP + 1), "perfmark's reads: ~%s"
                                         % check_report.fmt_time(run["ns"])])
            ck.ok(m["throttle"].startswith("warmup="), "throttle attribute %r" % m["throttle"])
            ck.scope = ""

        out = os.path.join(tmp, "poll.h5")
        err = measure(["mpirun", "--oversubscribe", "--bind-to", "none", "-np", "2", perfmark,
                       "run", "-q", "-e", "sw", "--throttle", SURE, "-o", out, "--", poll, str(POLLS)],
                      out, tmp)
        if ck.ok(err is None, "mpi_poll: %s" % err):
            x = check_report.check_file(ck, prefix, out, "mpi_poll")
            ck.scope = "mpi_poll: "
            test = region(x, "loop/MPI_Test")
            if ck.ok(test is not None, "no loop/MPI_Test"):
                ms = test["measuring"]
                ck.ok(test["visits"] == 2 * POLLS, "MPI_Test visits %d" % test["visits"])
                ck.ok(test["timer_only"] and test["flags"].get("TIMER_ONLY") == 2,
                      "MPI_Test not timer only: %r" % test["flags"])
                ck.ok(test["time_est"] and 2 * WARMUP <= ms["timed_visits"] < 2 * POLLS,
                      "MPI_Test: %d of %d calls timed, estimate %r" %
                      (ms["timed_visits"], test["visits"], test["time_est"]))
                ck.ok(test["wall_ns"]["total"] > ms["wall_ns_raw"] > 0,
                      "MPI_Test: time %r not above the timed calls' %r" %
                      (test["wall_ns"]["total"], ms["wall_ns_raw"]))
                check_text(ck, prefix, out, [check_report.fmt_time(test["wall_ns"]["total"]) + "~",
                                             "timer only"])
            check_throttled(ck, x, "loop/compute", 2)
            ck.scope = ""
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if ck.errors:
        print("check_measuring_report: %d of %d checks FAILED:" % (len(ck.errors), ck.checks))
        for e in ck.errors[:200]:
            print("  " + e)
        return 1
    print("check_measuring_report: all %d checks passed" % ck.checks)
    return 0


if __name__ == "__main__":
    sys.exit(main())
