#!/usr/bin/python3
"""Every thread from its birth (issue "Every thread"): threads that never call
a marker get their own row and totals, checked against what they did by
construction (pages first touched: exact; CPU time: within 10 %).

usage: /usr/bin/python3 check_threads.py BUILD_DIR CASE
  workers_from_birth   3 pthreads workers, no markers in them: a row each,
                       page-faults exact, task-clock within 10 % of their
                       CLOCK_THREAD_CPUTIME_ID, their totals the kernel's
                       record at their exit (totals_from 1)
  still_running        workers still running at the write, never in a
                       region: totals from /proc (totals_from 3), as exact
  still_running_region such workers whose spin is their first region: their
                       own counters' totals from it (totals_from 2), and the
                       report says the difference holds their start
  own_counters         PERFMARK_THREADS=own: such workers by counters of
                       their own from birth (totals_from 0), exact, said
  creations_100k       10^5 threads started and joined one after the other
                       (bench/thread_create): a row each, every one's totals
                       the kernel's record, none lost, their sum the
                       process's but for perfmark's own part
  sum_equals_process   the threads' sum equals the process's own total but
                       for perfmark's own part (small and said so)
  excluded_by_name     PERFMARK_THREADS_EXCLUDE='helper-[13],keep*': those rows
                       left out, said once, the others numbered 0..n
  markers_mode         PERFMARK_THREADS=markers: the workers have no row (as
                       before every thread was counted), said in the file
  running_before_start a thread a library's constructor started before
                       perfmark's: adopted at start, its pages exact
  exit_during_write    threads still starting and ending while the file is
                       written: a whole file, every worker exact
  std_thread           C++ std::thread workers
  c11_thread           C11 thrd_create workers (glibc starts them past
                       pthread_create)
Exit 0 = pass, 1 = failure, 77 = skipped (reason printed).
"""
import os
import re
import subprocess
import sys

import h5py

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from cases import SKIP, check, clean_env, run_cases  # noqa: E402

BUILD = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else ""
PERFMARK = os.path.join(BUILD, "bin", "perfmark")


def prog(name):
    return os.path.join(BUILD, "tests", name)


def measure(tmp, argv, env=None, expect=3):
    out = os.path.join(tmp, "out.h5")
    p = subprocess.run([PERFMARK, "run", "-e", "sw", "-o", out, "--"] + argv,
                       env=clean_env(env), cwd=tmp, capture_output=True, text=True, timeout=100)
    check(expect is None or p.returncode == expect, "%s exited %d, want %s:\n%s" % (
        argv[0], p.returncode, expect, p.stderr[-2000:]))
    check(os.path.exists(out), "no file: %s" % p.stderr[-2000:])
    return p, out


class File:
    """The file's thread rows and their totals, by tid."""

    def __init__(self, path):
        with h5py.File(path, "r") as f:
            self.attrs = dict(f.attrs)
            self.threads = f["threads"][:]
            self.events = [e.decode() if isinstance(e, bytes) else e for e in f["events"]["name"]]
            self.counts = f["thread/counts"][:]
            self.rank = f["rank/counts"][:] if "rank" in f and "counts" in f["rank"] else None
            self.messages = [m.decode() if isinstance(m, bytes) else m
                             for m in (f["messages"][:] if "messages" in f else [])]
        self.by_tid = {int(t["tid"]): i for i, t in enumerate(self.threads)}

    def total(self, row, event):
        return int(self.counts[row, self.events.index(event)])

    def seen(self):
        s = self.attrs.get("threads", b"")
        return s.decode() if isinstance(s, bytes) else s

    def by_kernel(self):
        """Whether threads are counted by the kernel at their exit here (else
        each by its own counters, and the file says why)."""
        if "by the kernel at their exit" in self.seen():
            return True
        check("not available here" in self.seen(), "threads attribute %r" % self.seen())
        print("NOTE: the kernel's exit records are not available here: %s" % self.seen())
        return False

    def totals_from(self, row):
        return int(self.threads["totals_from"][row])

    def name(self, row):
        n = self.threads["name"][row]
        return n.decode().rstrip("\0") if isinstance(n, bytes) else n


def workers_said(stdout):
    """{tid: (pages, cputime_ns)} as the workers printed them."""
    said = {}
    for line in stdout.splitlines():
        w = line.split()
        if len(w) == 8 and w[0] == "worker":
            said[int(w[3])] = (int(w[5]), int(w[7]))
    return said


def check_workers(f, said, cpu=True):
    for tid, (pages, cpu_ns) in sorted(said.items()):
        check(tid in f.by_tid, "worker tid %d has no row (rows: %s)" % (tid, sorted(f.by_tid)))
        row = f.by_tid[tid]
        faults = f.total(row, "page-faults")
        # exact: the pages it touched, and a few of its own (stack, the print)
        check(pages <= faults <= pages + 16, "tid %d: %d page-faults, touched %d pages"
              % (tid, faults, pages))
        if cpu:
            clock = f.total(row, "task-clock")
            check(abs(clock - cpu_ns) <= 0.10 * cpu_ns, "tid %d: task-clock %d ns, its CPU time "
                  "%d ns: more than 10 %% apart" % (tid, clock, cpu_ns))
    print("%d workers without markers: a row each, page-faults exact%s" % (
        len(said), ", task-clock within 10 % of their CPU time" if cpu else ""))


def case_workers_from_birth(tmp):
    p, out = measure(tmp, [prog("thread_workers"), "3", "1000", "60"])
    said = workers_said(p.stdout)
    check(len(said) == 3, "the program said %r" % p.stdout)
    f = File(out)
    check(len(f.threads) == 4, "%d thread rows, want main + 3 workers" % len(f.threads))
    check(list(f.threads["thread"]) == [0, 1, 2, 3], "thread numbers %s" % list(f.threads["thread"]))
    check_workers(f, said)
    seen = f.seen()
    check(seen.startswith("every thread from its start"), "threads attribute %r" % seen)
    want = 1 if f.by_kernel() else 0
    froms = [f.totals_from(f.by_tid[tid]) for tid in said]
    check(froms == [want] * 3 and f.totals_from(f.by_tid[min(f.by_tid)]) == 0,
          "totals_from: workers %s (want %d), main %d" % (froms, want,
                                                         f.totals_from(f.by_tid[min(f.by_tid)])))
    if want:
        check("3 by the kernel at their exit" in seen, "threads attribute %r" % seen)
        print("the workers' totals: the kernel's record at their exit")


def case_still_running(tmp):
    p, out = measure(tmp, [prog("thread_workers"), "3", "800", "40", "linger"])
    said = workers_said(p.stdout)
    check(len(said) == 3, "the program said %r" % p.stdout)
    f = File(out)
    # -e sw's cpu-migrations comes from /proc/TID/sched (CONFIG_SCHED_DEBUG)
    # and task-clock from schedstat: without them the group is not counted
    proc_has = all(os.path.exists("/proc/self/" + n) for n in ("sched", "schedstat"))
    if f.by_kernel() and not proc_has:
        froms = [f.totals_from(f.by_tid[tid]) for tid in said]
        check(froms == [4] * 3, "totals_from %s without /proc sched files, want 4" % froms)
        print("NOTE: this kernel has no /proc/TID/sched or schedstat: such workers read not "
              "counted, as they should")
        return
    check_workers(f, said)
    want = 3 if f.by_kernel() else 0
    froms = [f.totals_from(f.by_tid[tid]) for tid in said]
    check(froms == [want] * 3, "totals_from of workers running at the write: %s, want %d"
          % (froms, want))
    check(not any(f.threads["exited"][f.by_tid[tid]] for tid in said), "a worker exited")
    if want:
        check("3 still running never in a region from /proc" in f.seen(),
              "threads attribute %r" % f.seen())
        print("workers still running at the write, never in a region: totals from /proc")


def case_own_counters(tmp):
    p, out = measure(tmp, [prog("thread_workers"), "3", "800", "40", "linger-region"],
                     env={"PERFMARK_THREADS": "own"})
    said = workers_said(p.stdout)
    check(len(said) == 3, "the program said %r" % p.stdout)
    f = File(out)
    check_workers(f, said)  # from birth, pages before the region included
    froms = [f.totals_from(f.by_tid[tid]) for tid in said]
    check(froms == [0, 0, 0], "totals_from %s with PERFMARK_THREADS=own" % froms)
    check("each by its own counters (PERFMARK_THREADS=own)" in f.seen(),
          "threads attribute %r" % f.seen())
    print("PERFMARK_THREADS=own: counters of their own from birth, exact")


def case_creations_100k(tmp):
    n = 100000
    p, out = measure(tmp, [os.path.join(BUILD, "bin", "thread_create"), str(n)], expect=0)
    f = File(out)
    check(len(f.threads) == n + 1, "%d thread rows, want %d" % (len(f.threads), n + 1))
    froms = f.threads["totals_from"][1:]
    want = 1 if f.by_kernel() else 0
    check(int((froms == want).sum()) == n, "totals_from of the %d threads: %s" % (
        n, {int(v): int((froms == v).sum()) for v in set(froms.tolist())}))
    if want:
        check("%d by the kernel at their exit" % n in f.seen(), "threads attribute %r" % f.seen())
    clock = f.events.index("task-clock")
    running = f.counts[1:, clock]
    check(int((running > 0).sum()) == n, "%d threads with no task-clock" % int((running == 0).sum()))
    proc, threads = int(f.rank[0, clock]), int(f.counts[:, clock].sum())
    # what is left: perfmark's own start-up, its writing of 10^5 rows, and
    # its thread taking the 10^5 records out (~5 % here, on a VM)
    check(0 <= proc - threads <= max(0.12 * proc, 50e6),
          "task-clock: process %d, threads %d" % (proc, threads))
    print("10^5 threads: a row each, totals from %s; task-clock process %.3f s, threads %.3f s"
          % ("the kernel at their exit" if want else "their own counters", proc / 1e9,
             threads / 1e9))


def run_tid_reuse(tmp, args, env=None):
    """thread_tid_reuse ARGS measured: (the file, the tids given again to a
    reuse thread), or None to skip (not root, or no records)."""
    p, out = measure(tmp, [prog("thread_tid_reuse")] + [str(a) for a in args], env=env,
                     expect=None)
    if p.returncode == 77:
        print("SKIP: %s" % p.stderr.strip())
        return None
    check(p.returncode == 0, "tid_reuse exited %d:\n%s" % (p.returncode, p.stderr[-2000:]))
    f = File(out)
    if not f.by_kernel():
        print("SKIP: no exit records here")
        return None
    reused = {int(w[1]) for w in (line.split() for line in p.stdout.splitlines())
              if len(w) == 2 and w[0] == "reuse"}
    return f, reused


def case_tid_reuse(tmp):
    """A record lost in a burst, its tid given again: the later thread's
    record goes to the later thread, never to the earlier one."""
    page = os.sysconf("SC_PAGE_SIZE")
    # a ring of one page holds page / 120 records; a burst of ~9 pages' worth overflows it
    n, burst, reuse = 300 * max(1, page // 4096), 20, 300
    env = {"PERFMARK_THREAD_RING_KB": str(max(1, page // 1024))}
    run = run_tid_reuse(tmp, [n, burst, reuse], env)
    if run is None:
        return SKIP
    f, reused = run
    rows = {"burst": [], "reuse": []}
    for row in range(len(f.threads)):
        if f.name(row) in rows:
            rows[f.name(row)].append(row)
    check(len(rows["burst"]) == n, "%d burst rows, want %d" % (len(rows["burst"]), n))
    tid = lambda row: int(f.threads["tid"][row])  # noqa: E731
    lost = {tid(r) for r in rows["burst"] if f.totals_from(r) == 4}
    # each row holding its own thread's exit record: its own pages, never the other kind's
    for kind, pages in (("burst", burst), ("reuse", reuse)):
        for r in rows[kind]:
            if f.totals_from(r) == 1:
                faults = f.total(r, "page-faults")
                check(pages <= faults <= pages + 16, "%s thread tid %d: %d page-faults, touched "
                      "%d pages: another thread's record" % (kind, tid(r), faults, pages))
    # a later holder of a lost record's tid, its own record come (rarely its
    # own is lost too, on a busy machine: said, not counted)
    victims = {tid(r) for r in rows["reuse"] if tid(r) in lost & reused and f.totals_from(r) == 1}
    all_lost = sum(1 for r in range(len(f.threads)) if f.totals_from(r) == 4)
    check(re.search(r"\b%d lost\b" % all_lost, f.seen()), "threads attribute %r, %d rows "
          "whose record was lost" % (f.seen(), all_lost))
    if not victims:
        print("SKIP: %d of %d burst records lost, %d tids given again, none of them both: "
              "nothing to tell apart" % (len(lost), n, len(reused)))
        return SKIP
    print("%d of %d burst records lost; %d of their tids given again to a later thread, each "
          "row with its own record (burst %d pages, reuse %d)" % (len(lost), n, len(victims),
                                                                 burst, reuse))


def case_tid_reuse_pending(tmp):
    """Tids given again while their earlier holders' records still wait in
    the ring, none lost: each record goes to its own holder."""
    n, burst, reuse = 50, 20, 300
    run = run_tid_reuse(tmp, [n, burst, reuse, 0])
    if run is None:
        return SKIP
    f, reused = run
    pages = {"burst": burst, "reuse": reuse}
    rows = [r for r in range(len(f.threads)) if f.name(r) in pages]
    bursts = sum(1 for r in rows if f.name(r) == "burst")
    check(bursts == n and len(rows) - n >= len(reused), "%d burst rows (want %d), %d reuse rows "
          "(%d given a burst tid)" % (bursts, n, len(rows) - n, len(reused)))
    for r in rows:
        tid, kind = int(f.threads["tid"][r]), f.name(r)
        check(f.totals_from(r) == 1, "%s thread tid %d: totals_from %d, want its exit record"
              % (kind, tid, f.totals_from(r)))
        faults = f.total(r, "page-faults")
        check(pages[kind] <= faults <= pages[kind] + 16, "%s thread tid %d: %d page-faults, "
              "touched %d pages: another thread's record" % (kind, tid, faults, pages[kind]))
    if not reused:
        print("SKIP: no tid given again (another process took them)")
        return SKIP
    print("%d tids given again while their first holders' records waited: each row its own"
          % len(reused))


def case_still_running_region(tmp):
    pages = 800
    p, out = measure(tmp, [prog("thread_workers"), "3", str(pages), "40", "linger-region"])
    said = workers_said(p.stdout)
    check(len(said) == 3, "the program said %r" % p.stdout)
    f = File(out)
    if not f.by_kernel():
        check_workers(f, said)  # their own counters from birth: exact
        return
    with h5py.File(out, "r") as h:
        names = [n.decode() if isinstance(n, bytes) else n for n in h["regions"]["name"]]
        spin = names.index("worker_spin")
        cells = h["region/counts"][:, spin, :]
    clock, faults = f.events.index("task-clock"), f.events.index("page-faults")
    for tid, (touched, cpu_ns) in sorted(said.items()):
        row = f.by_tid[tid]
        check(f.totals_from(row) == 2, "tid %d: totals_from %d, want 2" % (tid, f.totals_from(row)))
        total, region = f.counts[row], cells[row]
        # from its first region on: the spin is in it, the pages it touched
        # before are not
        check(region[clock] <= total[clock] <= region[clock] + 5e6,
              "tid %d: task-clock total %d, its region %d" % (tid, total[clock], region[clock]))
        check(total[faults] < touched // 2, "tid %d: %d page-faults in its totals, but it touched "
              "its %d pages before its first region" % (tid, total[faults], touched))
    check("3 still running by their own counters from their first region" in f.seen(),
          "threads attribute %r" % f.seen())
    rep = subprocess.run([PERFMARK, "report", out], capture_output=True, text=True,
                         env=clean_env()).stdout
    check("before their first\n" in rep or "before their first region" in rep.replace(
        "\n             ", " "), "the report does not say what the difference holds:\n%s"
          % rep[-1500:])
    print("workers still running, spin in their first region: totals from it, said")


def case_sum_equals_process(tmp):
    p, out = measure(tmp, [prog("thread_workers"), "3", "2000", "80"])
    f = File(out)
    check(f.rank is not None and len(f.rank) == 1, "no /rank row")
    for event in ("task-clock", "page-faults"):
        e = f.events.index(event)
        proc, threads = int(f.rank[0, e]), int(f.counts[:, e].sum())
        diff = proc - threads
        # what is left is perfmark's own work: its start-up before the main
        # thread's set opened, its threads, each new thread's first steps
        limit = {"task-clock": max(0.01 * proc, 2e6), "page-faults": 200}[event]
        check(0 <= diff <= limit, "%s: process %d, threads %d: difference %d beyond %d"
              % (event, proc, threads, diff, limit))
        print("%s: process %d, threads %d, difference %d (%.2f %%)" % (
            event, proc, threads, diff, 100.0 * diff / max(proc, 1)))
    rep = subprocess.run([PERFMARK, "report", out], capture_output=True, text=True,
                         env=clean_env()).stdout
    check("difference = the part before perfmark started, perfmark's own work" in rep,
          "the report does not say what the difference is:\n%s" % rep[-1500:])


def case_excluded_by_name(tmp):
    p, out = measure(tmp, [prog("thread_workers"), "3", "500", "20", "named"],
                     env={"PERFMARK_THREADS_EXCLUDE": "helper-[13],keep*"})
    said = workers_said(p.stdout)
    f = File(out)
    names = sorted(f.name(i) for i in range(len(f.threads)))
    check(names == sorted(["thread_workers", "helper-2"]),
          "rows named %s, want the main thread and helper-2" % names)
    check(list(f.threads["thread"]) == list(range(len(f.threads))),
          "threads not numbered 0..n: %s" % list(f.threads["thread"]))
    kept = {tid: v for tid, v in said.items() if tid in f.by_tid}
    check(len(kept) == 1, "workers with rows: %s" % kept)
    check_workers(f, kept, cpu=False)
    lines = [l for l in p.stderr.splitlines() if "left out by name" in l]
    check(len(lines) == 1 and "3 thread(s)" in lines[0], "want one message: %r" % p.stderr)
    check(any("left out by name" in m for m in f.messages), "message not in the file")
    print("left out: helper-1, helper-3, keeper; said: %s" % lines[0])


def case_markers_mode(tmp):
    p, out = measure(tmp, [prog("thread_workers"), "3", "200", "10"],
                     env={"PERFMARK_THREADS": "markers"})
    f = File(out)
    check(len(f.threads) == 1, "%d thread rows with PERFMARK_THREADS=markers" % len(f.threads))
    seen = f.attrs.get("threads", b"")
    seen = seen.decode() if isinstance(seen, bytes) else seen
    check("PERFMARK_THREADS=markers" in seen, "threads attribute %r" % seen)
    print("markers mode: the main thread only; %s" % seen)


def case_running_before_start(tmp):
    env = {"LD_LIBRARY_PATH": os.path.join(BUILD, "tests")}
    p, out = measure(tmp, [prog("thread_adopt"), "700"], env=env)
    w = [l.split() for l in p.stdout.splitlines() if l.startswith("early tid")]
    check(len(w) == 1, "the program said %r" % p.stdout)
    tid, pages = int(w[0][2]), int(w[0][4])
    f = File(out)
    check(tid in f.by_tid, "the early thread (tid %d) has no row: %s" % (tid, sorted(f.by_tid)))
    faults = f.total(f.by_tid[tid], "page-faults")
    check(pages <= faults <= pages + 16, "early thread: %d page-faults, touched %d pages"
          % (faults, pages))
    seen = f.attrs.get("threads", b"")
    seen = seen.decode() if isinstance(seen, bytes) else seen
    check("1 running before perfmark started" in seen, "threads attribute %r" % seen)
    print("a thread started before perfmark's constructor: adopted, %d page-faults for %d pages"
          % (faults, pages))


def case_exit_during_write(tmp):
    for attempt in range(3):
        p, out = measure(tmp, [prog("thread_workers"), "2", "300", "10", "churn"])
        f = File(out)
        check_workers(f, workers_said(p.stdout), cpu=False)
        check(len(f.threads) >= 3, "%d rows" % len(f.threads))
        os.unlink(out)
    print("threads ending while the file is written: 3 whole files")


def case_std_thread(tmp):
    if not os.path.exists(prog("thread_cxx")):
        print("SKIP: no C++ compiler: thread_cxx not built")
        return SKIP
    p, out = measure(tmp, [prog("thread_cxx"), "3", "800"])
    check_workers(File(out), workers_said(p.stdout), cpu=False)


def case_c11_thread(tmp):
    p, out = measure(tmp, [prog("thread_c11"), "3", "800"])
    check_workers(File(out), workers_said(p.stdout), cpu=False)


if __name__ == "__main__":
    sys.exit(run_cases("threads", globals(), __doc__, lambda args, tmp: (tmp,)))
