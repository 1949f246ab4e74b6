#!/usr/bin/env python3
"""perfmark attach against a program whose page-fault rate is known.

usage: check_attach.py BUILD_DIR CASE

busy.c writes BURST fresh pages every 100 ms (one page fault each) and,
after a while, starts a second thread writing BURST/2; `perfmark attach`
counts it from outside. Software events only. Exit 0 pass, 1 fail, 77 skip.
"""
import os
import shutil
import signal
import subprocess
import sys
import time

import h5py

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from cases import check, clean_env, run_cases  # noqa: E402

BURST = 2000


class Busy:
    """busy.c running; its stdout lines as they come."""

    def __init__(self, build, run_ms, after_ms, burst=BURST, wait=False):
        """wait: no page is written before go()."""
        self.spawned = time.monotonic()  # before busy's own start, always
        self.p = subprocess.Popen([os.path.join(build, "tests", "attach_busy"), str(run_ms),
                                   str(after_ms), str(burst)] + (["wait"] if wait else []),
                                  stdout=subprocess.PIPE, stdin=subprocess.PIPE if wait else None,
                                  text=True, env=clean_env())
        first = self.p.stdout.readline().split()
        check(first and first[0] == "ready", "busy did not start: %r" % first)
        self.pid = int(first[1])
        self.tids = [int(self.p.stdout.readline().split()[1])]

    def go(self):
        self.p.stdin.write("go\n")
        self.p.stdin.flush()

    def finish(self):
        lines = self.p.stdout.read().split("\n")
        rc = self.p.wait(timeout=60)
        for l in lines:
            if l.startswith("tid "):
                self.tids.append(int(l.split()[1]))
        done = [l for l in lines if l.startswith("done ")]
        return rc, done


def attach(build, pid, args, out, expect=0, env=None):
    p = subprocess.run([os.path.join(build, "bin", "perfmark"), "attach", str(pid), "-e", "sw",
                        "-o", out] + args, capture_output=True, text=True, timeout=60,
                       env=clean_env(env))
    check(p.returncode == expect, "attach exited %d, want %d: %s" % (p.returncode, expect,
                                                                    p.stderr))
    return p


def attach_started(build, pid, args, out):
    """perfmark-attach in the background, returned once it says it counts
    (its signal handlers are in place by then); the lines it said so far."""
    p = subprocess.Popen([os.path.join(build, "bin", "perfmark-attach"), str(pid), "-e", "sw",
                          "-o", out] + args, stderr=subprocess.PIPE, text=True, env=clean_env())
    said = []
    while True:
        line = p.stderr.readline()
        check(line, "attach ended before counting: %s" % "".join(said))
        said.append(line)
        if line.startswith("perfmark attach: counting process"):
            return p, said


def page_faults(f, row):
    names = [e["name"].decode() for e in f["events"][()]]
    return int(f["thread/counts"][()][row, names.index("page-faults")])


def case_counts(build, tmp):
    """1 s attached to a thread writing 2000 pages per 100 ms: ~20000 page
    faults (bursts are short: 10 of them, one more or less at the edges);
    the program runs on unharmed and ends normally."""
    b = Busy(build, 2500, 10000)
    out = os.path.join(tmp, "a.h5")
    t0 = time.time()
    attach(build, b.pid, ["--duration", "1"], out)
    took = time.time() - t0
    check(b.p.poll() is None, "the program did not survive the attach")
    rc, done = b.finish()
    check(rc == 0 and done, "the program ended badly: %d %s" % (rc, done))
    with h5py.File(out) as f:
        check(f["threads"].shape[0] == 1, "%d thread rows" % f["threads"].shape[0])
        check(int(f["threads"]["tid"][0]) == b.tids[0], "tid %d, want %d" % (
            f["threads"]["tid"][0], b.tids[0]))
        pf = page_faults(f, 0)
        wall = int(f["thread/wall_ns"][0]) / 1e9
    bursts = wall / 0.1
    lo, hi = (bursts - 2.5) * BURST, (bursts + 1.5) * BURST
    check(lo <= pf <= hi, "%d page faults in %.2f s attached, want %d..%d" % (pf, wall, lo, hi))
    check(0.9 <= wall <= took + 0.2, "attached for %.2f s (the command took %.2f)" % (wall, took))
    print("counts: %d page faults in %.2f s (%.0f/s; the program writes %d/s)" % (
        pf, wall, pf / wall, BURST * 10))


def case_new_thread(build, tmp):
    """A thread started after the attach is counted from when it appears."""
    b = Busy(build, 2500, 600)
    out = os.path.join(tmp, "a.h5")
    attach(build, b.pid, ["--duration", "1.5"], out)
    ended = time.monotonic()
    rc, done = b.finish()
    check(rc == 0, "the program exit %d" % rc)
    with h5py.File(out) as f:
        tids = [int(t) for t in f["threads"]["tid"][()]]
        check(len(tids) == 2 and set(tids) == set(b.tids), "threads %s, the program's %s" % (
            tids, b.tids))
        row = tids.index(b.tids[1])
        pf = page_faults(f, row)
        wall = int(f["thread/wall_ns"][row]) / 1e9
    check(pf >= BURST // 2 * 3, "the new thread: %d page faults in %.2f s" % (pf, wall))
    # it began at least 0.6 s after busy started, which was after
    # `spawned`, and the attach ended before `ended`: counted longer, it was
    # counted from before it began
    most = ended - b.spawned - 0.6
    check(wall <= most, "the new thread counted for %.2f s, it ran at most %.2f s attached"
          % (wall, most))
    print("new_thread: %d page faults in the %.2f s it ran attached" % (pf, wall))


def case_sigint(build, tmp):
    """Without --duration, SIGINT ends the attach; the file is written."""
    b = Busy(build, 3000, 10000)
    out = os.path.join(tmp, "a.h5")
    p, said = attach_started(build, b.pid, [], out)
    time.sleep(0.3)
    p.send_signal(signal.SIGINT)
    err = "".join(said) + p.communicate(timeout=30)[1]
    check(p.returncode == 0 and os.path.exists(out), "attach after SIGINT: %d %s" % (
        p.returncode, err))
    check("until SIGINT" in err, "no word of SIGINT: %s" % err)
    check(b.p.poll() is None, "SIGINT reached the program")
    b.p.kill()
    b.p.wait()
    print("sigint: written, the program untouched")


def case_exits(build, tmp):
    """The process ends: the attach ends with it, every page it wrote
    counted (it prints its own count)."""
    b = Busy(build, 800, 10000, wait=True)
    out = os.path.join(tmp, "a.h5")
    p, said = attach_started(build, b.pid, [], out)
    b.go()  # every page is written while attached
    err = "".join(said) + p.communicate(timeout=60)[1]
    check(p.returncode == 0, "attach exited %d: %s" % (p.returncode, err))
    rc, done = b.finish()
    written = int(done[0].split()[1])
    check("until the process exited" in err, "why it ended: %s" % err)
    with h5py.File(out) as f:
        pf = page_faults(f, 0)
    check(written <= pf <= written + 50, "%d page faults, the program wrote %d pages"
          % (pf, written))
    print("exits: %d page faults of %d pages written" % (pf, written))


def case_no_such_pid(build, tmp):
    """A pid that does not exist: one clear message, exit 2, no file."""
    out = os.path.join(tmp, "a.h5")
    p = attach(build, 999999999, [], out, expect=2)
    check("no process 999999999" in p.stderr and not os.path.exists(out), p.stderr)
    print("no_such_pid: %s" % p.stderr.strip())


def case_bad_input(build, tmp):
    """A --duration or a pid that does not parse: one message naming it, exit
    2, no file, the process untouched (a typo in --duration once meant "run
    until it exits")."""
    b = Busy(build, 1500, 10000)
    out = os.path.join(tmp, "a.h5")
    for args, pid, said in ((["--duration", "1s"], b.pid, "--duration wants a number of seconds"),
                            (["--duration", "-3"], b.pid, "not '-3'"),
                            (["--duration", "nan"], b.pid, "not 'nan'"),
                            ([], "%dx" % b.pid, "'%dx' is not a process id" % b.pid)):
        p = attach(build, pid, args, out, expect=2)
        check(said in p.stderr and "nothing was counted" in p.stderr, p.stderr)
        check(len(p.stderr.strip().splitlines()) == 1, "one message: %r" % p.stderr)
        check(not os.path.exists(out), "a file was written for %s" % args)
    rc, done = b.finish()
    check(rc == 0 and done, "the program ended badly: %d %s" % (rc, done))
    print("bad_input: one message each, exit 2, no file; the program ran on")


def case_refused(build, tmp):
    """Another user's process: one message naming the settings to change."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        print("skip: needs root and setpriv to be another user")
        return 77
    if subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "test",
                       "-x", os.path.join(build, "bin", "perfmark")]).returncode != 0:
        print("skip: user nobody cannot reach the build tree (%s): a parent directory is "
              "private" % build)
        return 77
    b = Busy(build, 1500, 10000)
    out = os.path.join(tmp, "x.h5")
    os.chmod(tmp, 0o777)
    p = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                        os.path.join(build, "bin", "perfmark"), "attach", str(b.pid), "-e", "sw",
                        "-o", out], capture_output=True, text=True, timeout=60, env=clean_env())
    b.p.kill()
    b.p.wait()
    check(p.returncode == 2 and "perf_event_paranoid" in p.stderr and "ptrace_scope" in p.stderr,
          "exit %d: %s" % (p.returncode, p.stderr))
    check(len(p.stderr.strip().splitlines()) == 1, "more than one line: %s" % p.stderr)
    print("refused: %s" % p.stderr.strip()[:160])


def case_interval(build, tmp):
    """--interval: the attached file has counts over time summing to its
    totals, and perfmark report and diff read it like any other file."""
    b = Busy(build, 2500, 400)
    out = os.path.join(tmp, "a.h5")
    attach(build, b.pid, ["--duration", "1.2", "--interval", "100ms"], out)
    b.finish()
    with h5py.File(out) as f:
        thread = f["series/thread"][()]
        counts = f["series/counts"][()]
        totals = f["thread/counts"][()]
        check(len(thread) >= 8, "%d rows" % len(thread))
        for t in range(totals.shape[0]):
            check((counts[thread == t].sum(axis=0) == totals[t]).all(),
                  "thread %d rows sum %s, totals %s" % (t, counts[thread == t].sum(axis=0),
                                                         totals[t]))
    perfmark = os.path.join(build, "bin", "perfmark")
    for fmt in ("text", "json", "csv", "html"):
        p = subprocess.run([perfmark, "report", out, "--format", fmt], capture_output=True,
                           text=True, env=clean_env())
        check(p.returncode == 0 and p.stdout, "report --format %s: %s" % (fmt, p.stderr))
    p = subprocess.run([perfmark, "diff", out, out], capture_output=True, text=True,
                       env=clean_env())
    check(p.returncode == 0, "diff: %s" % p.stderr)
    print("interval: %d rows, sums exact; report and diff read it" % len(thread))


def main():
    return run_cases("attach", globals(), __doc__,
                     lambda args, tmp: (os.path.abspath(args[0]), tmp))


if __name__ == "__main__":
    sys.exit(main())
