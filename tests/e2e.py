#!/usr/bin/python3
"""End-to-end tests: run real programs under `perfmark run` on the real
kernel and check the HDF5 file against ground truth known by construction.

usage: /usr/bin/python3 e2e.py BUILD_DIR CASE
Each CASE is a function below named case_<CASE>. Exit 0 = pass, 77 = skipped
(missing capability, reason printed), anything else = failure.
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

BUILD = os.path.abspath(sys.argv[1])
PERFMARK = os.path.join(BUILD, "bin", "perfmark")
PROGS = os.path.join(BUILD, "tests")
SKIP = 77
FLAGS = {"MULTIPLEXED": 0x01, "NOT_COUNTED": 0x02, "LOST_GENERATION": 0x04,
         "MIGRATED": 0x08, "UNBALANCED": 0x10, "SHORT": 0x20, "PARTIAL": 0x40,
         "TIMER_ONLY": 0x80, "THROTTLED": 0x100, "OVERHEAD": 0x200}


class Failure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failure(msg)


def text(x):
    return x.decode("utf-8", "replace") if isinstance(x, bytes) else str(x)


def run(args, env=None, cwd=None, expect=0):
    full_env = dict(os.environ)
    for k in list(full_env):
        if k.startswith("PERFMARK_"):
            del full_env[k]
    full_env.update(env or {})
    p = subprocess.run(args, env=full_env, cwd=cwd, capture_output=True, text=True,
                       errors="replace", timeout=600)
    if expect is not None and p.returncode != expect:
        raise Failure("%s exited %d, want %d\nstdout: %s\nstderr: %s" % (
            " ".join(args), p.returncode, expect, p.stdout[-2000:], p.stderr[-2000:]))
    return p


class Measured:
    """One perfmark file, with helpers to look cells up by region path."""

    def __init__(self, path):
        self.path = path
        self.f = h5py.File(path, "r")
        self.events = [text(e) for e in self.f["events"]["name"]]
        self.groups = list(self.f["events"]["group"])
        self.paths = [text(p) for p in self.f["regions"]["path"]]
        self.visits = self.f["region/visits"][:]
        self.wall = self.f["region/wall_ns"][:]
        self.counts = self.f["region/counts"][:]
        self.enabled = self.f["region/enabled_ns"][:]
        self.running = self.f["region/running_ns"][:]
        self.flags = self.f["region/flags"][:]
        self.threads = self.f["threads"][:]
        self.messages = [text(m) for m in self.f["messages"][:]]

    def attr(self, name):
        return text(self.f.attrs[name])

    def region(self, path):
        check(path in self.paths, "region %r not in file (have %r)" % (path, self.paths[:20]))
        return self.paths.index(path)

    def event(self, name):
        check(name in self.events, "event %r not measured (have %r)" % (name, self.events))
        return self.events.index(name)

    def rows_visiting(self, path):
        r = self.region(path)
        return [t for t in range(self.visits.shape[0]) if self.visits[t, r] > 0]

    def count(self, t, path, event):
        return int(self.counts[t, self.region(path), self.event(event)])

    def flag_names(self, t, path):
        v = int(self.flags[t, self.region(path)])
        return {n for n, b in FLAGS.items() if v & b}


def perfmark_run(tmp, prog_args, events="sw", env=None, expect=0, name="out.h5", opts=()):
    out = os.path.join(tmp, name)
    e = {"TMPDIR": tmp}
    e.update(env or {})
    cmd = [PERFMARK, "run", "-e", events, "-o", out] + list(opts) + ["--"] + prog_args
    p = run(cmd, env=e, cwd=tmp, expect=expect)
    return p, out


def program_rows(m, program):
    """The thread rows of the program's own threads: its main thread (no start
    routine) and those it started itself, not a library's (an MPI's progress
    threads). Files before every thread had a row: all rows."""
    if "start" not in (m.threads.dtype.names or ()):
        return list(range(len(m.threads)))
    return [t for t in range(len(m.threads)) if text(m.threads["start"][t]) == "" or
            program in text(m.threads["start"][t])]


def prog(name):
    if name == "nested_regions":  # the demo lives with the examples
        return os.path.join(BUILD, "bin", name)
    return os.path.join(PROGS, name)


def perfmark_lines(stderr):
    return [l for l in stderr.splitlines() if l.startswith("perfmark: ")]


# ---- ground truth from the kernel ---------------------------------------------

def pagefaults(pages, threads):
    with tempfile.TemporaryDirectory() as tmp:
        _, out = perfmark_run(tmp, [prog("pagefaults"), str(pages), str(threads)])
        m = Measured(out)
        rows = m.rows_visiting("touch")
        check(len(rows) == threads, "%d threads visited 'touch', want %d" % (len(rows), threads))
        for t in rows:
            pf = m.count(t, "touch", "page-faults")
            check(pages <= pf <= pages + 8,
                  "thread row %d: %d page-faults for %d pages touched" % (t, pf, pages))
            check(m.visits[t, m.region("touch")] == 1, "visits != 1")
            check(not m.flag_names(t, "touch") - {"MIGRATED"},
                  "unexpected flags %s" % m.flag_names(t, "touch"))
        print("page-faults per thread:", [m.count(t, "touch", "page-faults") for t in rows])


def case_pagefaults_1k_1t():
    pagefaults(1000, 1)


def case_pagefaults_100k_1t():
    pagefaults(100000, 1)


def case_pagefaults_1k_4t():
    pagefaults(1000, 4)


def case_pagefaults_100k_4t():
    pagefaults(100000, 4)


def case_taskclock():
    with tempfile.TemporaryDirectory() as tmp:
        p, out = perfmark_run(tmp, [prog("taskclock"), "200", "2"])
        truth = {}
        for line in p.stdout.splitlines():
            if line.startswith("cputime_ns"):
                _, tid, ns = line.split()
                truth[int(tid)] = int(ns)
        check(len(truth) == 2, "program printed %r" % p.stdout)
        m = Measured(out)
        rows = m.rows_visiting("spin")
        measured = sorted(m.count(t, "spin", "task-clock") for t in rows)
        expected = sorted(truth.values())
        check(len(measured) == len(expected), "%d thread rows visited spin, the program ran %d "
              "threads" % (len(measured), len(expected)))
        for got, want in zip(measured, expected):
            check(abs(got - want) <= 0.10 * want,
                  "task-clock %d ns vs CLOCK_THREAD_CPUTIME_ID %d ns: more than 10%% apart"
                  % (got, want))
            # wall time of a spinning region is at least its CPU time
            print("task-clock %.1f ms, thread CPU time %.1f ms" % (got / 1e6, want / 1e6))
        for t in rows:
            r = m.region("spin")
            check(m.wall[t, r] >= 0.9 * min(expected), "wall %d ns below CPU time" % m.wall[t, r])


def case_visits():
    reps = 1000000
    with tempfile.TemporaryDirectory() as tmp:
        _, out = perfmark_run(tmp, [prog("visits"), str(reps)])
        m = Measured(out)
        for path in ("outer", "outer/inner", "h_outer", "h_outer/h_inner"):
            v = int(m.visits[:, m.region(path)].sum())
            check(v == reps, "%s: %d visits, want %d" % (path, v, reps))
        check(int(m.visits[:, m.region("cycle")].sum()) == 1, "cycle visits")
        for k in range(100):
            path = "cycle/name%02d" % k
            v = int(m.visits[:, m.region(path)].sum())
            check(v == reps // 100, "%s: %d visits, want %d" % (path, v, reps // 100))
        check(len(m.paths) == 5 + 100, "%d regions, want 105" % len(m.paths))
        # MIGRATED is real under load (the scheduler moves the thread); these
        # empty regions are throttled after their warm-up and are mostly
        # perfmark's own reads (OVERHEAD); nothing else may be set
        allowed = FLAGS["MIGRATED"] | FLAGS["THROTTLED"] | FLAGS["OVERHEAD"]
        check(not (m.flags & ~allowed).any(), "flags set: %s" % m.flags[m.flags != 0])
        # nesting: inner's time is inside outer's
        check(m.wall[:, m.region("outer/inner")].sum() < m.wall[:, m.region("outer")].sum(),
              "inner wall time not below outer")


def case_migrate():
    cpus = sorted(os.sched_getaffinity(0))  # the CPUs this process may use, any numbers
    if len(cpus) < 2:
        print("SKIP: needs 2 allowed CPUs to migrate a thread between them (have %r)" % cpus)
        return SKIP
    a, b = cpus[0], cpus[1]
    with tempfile.TemporaryDirectory() as tmp:
        p, out = perfmark_run(tmp, [prog("migrate"), "60", str(a), str(b)],
                              events="task-clock,page-faults", opts=["--bind-cpu", str(a)])
        truth = dict((k, int(v)) for k, v in (l.split() for l in p.stdout.splitlines()))
        m = Measured(out)
        check(int(m.f.attrs["bind_cpu"]) == a, "bind_cpu attribute not recorded")
        t = m.rows_visiting("half")[0]
        half, away = m.region("half"), m.region("away")
        ena, run_ = int(m.enabled[t, half, 0]), int(m.running[t, half, 0])
        check({"MULTIPLEXED", "MIGRATED"} <= m.flag_names(t, "half"),
              "half: flags %s, want MULTIPLEXED and MIGRATED" % m.flag_names(t, "half"))
        check(0 < run_ < ena, "half: running %d enabled %d" % (run_, ena))
        share = run_ / ena
        want = truth["half_on_cpu0_ns"] / (truth["half_on_cpu0_ns"] + truth["half_on_cpu1_ns"])
        check(abs(share - want) < 0.15, "half: counted share %.2f, ground truth %.2f" % (share, want))
        # running time is the time on CPU 0, enabled the time on both
        check(abs(run_ - truth["half_on_cpu0_ns"]) < 0.15 * truth["half_on_cpu0_ns"],
              "half: running %d vs %d ns on CPU 0" % (run_, truth["half_on_cpu0_ns"]))
        tc = int(m.counts[t, half, m.event("task-clock")])
        check(abs(tc - run_) < 0.15 * run_, "raw task-clock %d vs running %d" % (tc, run_))
        check("NOT_COUNTED" in m.flag_names(t, "away"),
              "away: flags %s, want NOT_COUNTED" % m.flag_names(t, "away"))
        check(int(m.running[t, away, 0]) == 0 and int(m.enabled[t, away, 0]) > 0,
              "away: running %d enabled %d" % (m.running[t, away, 0], m.enabled[t, away, 0]))
        print("half: enabled %.1f ms running %.1f ms (share %.2f, truth %.2f); away not counted"
              % (ena / 1e6, run_ / 1e6, share, want))


def case_fork():
    pages = 1000
    with tempfile.TemporaryDirectory() as tmp:
        p, out = perfmark_run(tmp, [prog("forker"), str(pages)])
        child_pid = int(p.stdout.split()[1])
        parent = Measured(out)
        t = parent.rows_visiting("span")[0]
        check(parent.flag_names(t, "span") <= {"MIGRATED"},
              "parent span flags %s" % parent.flag_names(t, "span"))
        check(parent.flag_names(t, "before") <= {"MIGRATED"}, "parent before flagged")
        check(pages <= parent.count(t, "before", "page-faults") <= pages + 8, "parent before pf")
        # the parent's own touch after fork is inside span: at least `pages` faults
        # (copy-on-write of its stack adds a few)
        check(parent.count(t, "span", "page-faults") >= pages, "parent span pf")
        check("child_work" not in parent.paths, "child region leaked into the parent file")
        child_files = glob.glob(os.path.join(tmp, "out.child-%d.h5" % child_pid))
        check(child_files, "no child file (have %s)" % os.listdir(tmp))
        child = Measured(child_files[0])
        ct = child.rows_visiting("span/child_work")[0]
        pf = child.count(ct, "span/child_work", "page-faults")
        check(pages <= pf <= pages + 8, "child_work: %d page-faults for %d pages" % (pf, pages))
        check(child.flag_names(ct, "span/child_work") <= {"MIGRATED"}, "child_work flagged")
        check("LOST_GENERATION" in child.flag_names(ct, "span"),
              "child span flags %s, want LOST_GENERATION" % child.flag_names(ct, "span"))
        check(child.count(ct, "span", "page-faults") == 0, "lost span still has counts")
        check(int(child.visits[ct, child.region("before")]) == 0,
              "child file repeats the parent's regions")


# ---- events: hardware requested where there is no PMU ---------------------------

def no_pmu():
    devs = os.listdir("/sys/bus/event_source/devices")
    return not any(d == "cpu" or d.startswith("cpu_") or d.startswith("armv") for d in devs)


def hw_fallback(events, env=None):
    if not no_pmu():
        print("SKIP: this machine has a hardware PMU; the fallback path is not taken")
        return SKIP
    with tempfile.TemporaryDirectory() as tmp:
        p, out = perfmark_run(tmp, [prog("pagefaults"), "1000", "1"], events=events, env=env)
        lines = [l for l in perfmark_lines(p.stderr) if "wrote" not in l]
        fallback = [l for l in lines if "none of the requested events" in l]
        check(len(fallback) == 1, "want one fallback message, got %r" % lines)
        check("'sw' group" in fallback[0], "message does not say what was done: %r" % fallback[0])
        m = Measured(out)
        check(m.attr("events_requested") == events, "requested %r" % m.attr("events_requested"))
        check(m.attr("events_measured") == "task-clock,page-faults,context-switches,cpu-migrations",
              "measured %r" % m.attr("events_measured"))
        check("none of the requested" in m.attr("fallback"), "fallback attr %r" % m.attr("fallback"))
        check("no hardware PMU" in m.attr("fallback"), "the reason is not given: %r" % m.attr("fallback"))
        check(any("none of the requested" in x for x in m.messages), "message not in the file")
        t = m.rows_visiting("touch")[0]
        check(1000 <= m.count(t, "touch", "page-faults") <= 1008, "data not measured after fallback")
        print(fallback[0])


def case_hw_fallback():
    return hw_fallback("cycles,instructions")


def case_topdown_fallback():
    """-e topdown where there is no PMU: one message, sw measured instead."""
    if not no_pmu():
        print("SKIP: this machine has a hardware PMU; the fallback path is not taken")
        return SKIP
    with tempfile.TemporaryDirectory() as tmp:
        p, out = perfmark_run(tmp, [prog("pagefaults"), "1000", "1"], events="topdown")
        lines = [l for l in perfmark_lines(p.stderr) if "wrote" not in l and "user space only" not in l]
        check(len(lines) == 1 and "group 'topdown'" in lines[0] and "no hardware PMU" in lines[0]
              and "'sw' group" in lines[0], "want one clear message, got %r" % lines)
        m = Measured(out)
        check(m.attr("events_requested") == "topdown", "requested %r" % m.attr("events_requested"))
        check(m.attr("event_group") == "sw" and m.attr("topdown_method") == "",
              "measured %r, method %r" % (m.attr("event_group"), m.attr("topdown_method")))
        check("windows" in m.f["region"], "no /region/windows")
        check(m.attr("topdown_read") == "none", "topdown_read %r" % m.attr("topdown_read"))
        t = m.rows_visiting("touch")[0]
        check(1000 <= m.count(t, "touch", "page-faults") <= 1008, "data not measured")
    with tempfile.TemporaryDirectory() as tmp:  # a bad PERFMARK_TOPDOWN_READ: said once, auto
        p, out = perfmark_run(tmp, [prog("pagefaults"), "1000", "1"], events="topdown",
                              env={"PERFMARK_TOPDOWN_READ": "sometimes"})
        bad = [l for l in perfmark_lines(p.stderr) if "PERFMARK_TOPDOWN_READ" in l]
        check(len(bad) == 1 and "'sometimes'" in bad[0] and "auto" in bad[0],
              "want one message on PERFMARK_TOPDOWN_READ, got %r" % perfmark_lines(p.stderr))
        m = Measured(out)
        t = m.rows_visiting("touch")[0]
        check(1000 <= m.count(t, "touch", "page-faults") <= 1008, "data not measured")


# ---- the fallback rule, on every CPU (PERFMARK_TEST_CPU) -------------------------
#
# A group that needs a table perfmark lacks, or a PMU the machine lacks,
# measures the 'sw' group; one message names the group, the reason and what
# is measured instead; the file records the request, what was measured, the
# message and the cause words. The expectations come from what the CPU is by
# construction (a model with tables, or a model no table can know), never
# from the wording of one vendor's case.

SW_EVENTS = "task-clock,page-faults,context-switches,cpu-migrations"
# (override, has tables for every model group): rows perfmark has, and
# identities that are no CPU perfmark can know (Intel family 6 model 1, an
# AMD K10, an Arm Cortex-A53)
FALLBACK_CPUS = [("amd:0x19:0x11", True), ("intel:6:0x8f", True), ("intel:6:0x6a", True),
                 ("intel:6:0x55:4", True), ("intel:6:0x01", False), ("amd:0x10:0x02", False),
                 ("arm:0x41:0xd03", False), ("amd:0x1a:0x02", True), ("arm:0x41:0xd4f", True),
                 ("intel:6:0xaf", True)]
# a row without the group: Zen 2 has no TopDown events
TOPDOWN_LESS_CPUS = [("amd:0x17:0x31", False), ("arm:0x41:0xd0c", False)]


def fallback_rule(tmp, cpu, has_tables, groups):
    env = {"PERFMARK_TEST_CPU": cpu} if cpu else {}
    p, out = perfmark_run(tmp, [prog("pagefaults"), "1000", "1"], events=",".join(groups),
                          env=env, name="fb-%s-%s.h5" % ((cpu or "real").replace(":", "_"), "_".join(groups)))
    m = Measured(out)
    cause = m.attr("fallback_cause").split()
    check(("no_pmu" in cause) == no_pmu(), "cause %r, but no PMU is %s" % (cause, no_pmu()))
    if has_tables is not None:
        check(("no_tables" in cause) == (not has_tables), "cause %r for %s" % (cause, cpu))
    if cpu:
        check("[PERFMARK_TEST_CPU]" not in m.attr("cpu") and m.attr("cpu") != "",
              "cpu attr %r" % m.attr("cpu"))
        seen = run([PERFMARK, "check"], env=env).stdout
        check("PERFMARK_TEST_CPU" in seen and m.attr("cpu") in seen,
              "check and the file disagree on the CPU: %r vs %r" % (m.attr("cpu"), seen[:300]))
    lines = [l for l in perfmark_lines(p.stderr)
             if "wrote" not in l and "PERFMARK_TEST_CPU" not in l and "user space only" not in l]
    check(m.attr("events_requested") == ",".join(groups), "requested %r" % m.attr("events_requested"))
    if not cause:  # a PMU and tables: the group itself is measured
        check(m.attr("fallback") == "" and not lines, "fallback without a cause: %r" % lines)
        return
    said = [l for l in lines if "'sw' group instead" in l]
    check(len(said) == 1 and len(lines) == 1, "want one message, got %r" % lines)
    for g in groups:
        check("group '%s'" % g in said[0], "message does not name %s: %r" % (g, said[0]))
    check(said[0] == "perfmark: " + m.attr("fallback"), "file and stderr differ: %r" % said[0])
    check(any(m.attr("fallback") in x for x in m.messages), "message not in /messages")
    check(m.attr("events_measured") == SW_EVENTS, "measured %r" % m.attr("events_measured"))
    if len(groups) == 1:
        check(m.attr("event_group") == "sw", "event_group %r" % m.attr("event_group"))
    check(m.attr("topdown_method") == "", "topdown method %r" % m.attr("topdown_method"))
    t = m.rows_visiting("touch")[0]
    check(1000 <= m.count(t, "touch", "page-faults") <= 1008, "sw not measured after fallback")
    print("%-16s %-14s cause %-18s %s" % (cpu or "(this CPU)", ",".join(groups), " ".join(cause),
                                          said[0][:150]))


def case_fallback_rule():
    """The same rule for every CPU model perfmark knows or does not know."""
    with tempfile.TemporaryDirectory() as tmp:
        fallback_rule(tmp, None, None, ["topdown"])
        for cpu, tables in FALLBACK_CPUS:
            if tables and not no_pmu():  # another CPU's codes would be opened on this PMU
                print("%s: not run on a machine with a PMU" % cpu)
                continue
            fallback_rule(tmp, cpu, tables, ["topdown"])
        for cpu, tables in TOPDOWN_LESS_CPUS:
            fallback_rule(tmp, cpu, tables, ["topdown"])
        for cpu, tables in (FALLBACK_CPUS[0], FALLBACK_CPUS[4]) if no_pmu() else FALLBACK_CPUS[4:5]:
            fallback_rule(tmp, cpu, tables, ["cache"])
            fallback_rule(tmp, cpu, tables, ["topdown", "mem"])


def case_cli_cpu_override():
    """perfmark list/check see the CPU PERFMARK_TEST_CPU names, with its table."""
    for cpu, row, event in (("amd:0x19:0x11", "amd64_fam19h_zen4", "amd64_fam19h_zen4::RETIRED_OPS"),
                            ("intel:6:0x8f", "spr", "spr::TOPDOWN:SLOTS"),
                            ("intel:6:0x55:7", "clx", "clx::INST_RETIRED:ANY_P"),
                            ("amd:0x1a:0x02", "amd64_fam1ah_zen5", "perf_raw::r1000001a0"),
                            ("arm:0x41:0xd4f", "arm_v2", "perf_raw::r3e")):
        out = run([PERFMARK, "list"], env={"PERFMARK_TEST_CPU": cpu}).stdout
        check("[PERFMARK_TEST_CPU" in out.splitlines()[0], "list does not say the CPU is set: %r"
              % out[:200])
        check("here: %s tables" % row in out, "%s: no %s tables in list" % (cpu, row))
        check(event in out, "%s: %s not listed" % (cpu, event))
        if no_pmu():  # encoded, and refused by the kernel for the right reason
            check("no hardware PMU" in out.split(event)[1].splitlines()[0],
                  "%s: %r" % (event, out.split(event)[1].splitlines()[0]))
        chk = run([PERFMARK, "check"], env={"PERFMARK_TEST_CPU": cpu}).stdout
        check("CPU model %s " % row in chk, "check does not use the %s row: %r" % (row, chk))
    out = run([PERFMARK, "list"], env={"PERFMARK_TEST_CPU": "intel:6:0x01"}).stdout
    check(out.count("here: no tables for Intel family 0x6 model 0x01") == 4,
          "unknown model not said per group: %r" % out)
    chk = run([PERFMARK, "check"], env={"PERFMARK_TEST_CPU": "intel:6:0x01"}).stdout
    check("TopDown:      not available" in chk, "check: %r" % chk)
    for bad in ("intel:6", "amd:0x19:0x11:99", "sparc:1:2", "arm:", "intel:x:1"):
        p = run([PERFMARK, "list"], env={"PERFMARK_TEST_CPU": bad})
        head = p.stdout.splitlines()[:2]
        check("[PERFMARK_TEST_CPU" not in head[0] and "is not intel:FAMILY:MODEL" in head[1],
              "bad %r: %r" % (bad, head))
    with tempfile.TemporaryDirectory() as tmp:  # a run: said once, this CPU used
        p, out = perfmark_run(tmp, [prog("pagefaults"), "10", "1"], env={"PERFMARK_TEST_CPU": "x"})
        said = [l for l in perfmark_lines(p.stderr) if "PERFMARK_TEST_CPU" in l]
        check(len(said) == 1 and "this machine's CPU" in said[0], "said %r" % said)
        check("PERFMARK_TEST_CPU" not in Measured(out).attr("cpu"), "override used")


# ---- perfmark selftest ------------------------------------------------------------

def selftest_rows(out):
    rows = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 7 and f[0] in ("touch", "spin", "sleep", "hop", "loop", "chase_large",
                                    "chase_small"):
            rows[(f[0], f[1])] = f
    return rows


def case_selftest():
    """perfmark selftest on this machine: the software events pass against the
    kernels' own truth; hardware checks run where a PMU exists, else are
    skipped with the reason; perf's column is filled where perf is installed."""
    p = run([PERFMARK, "selftest"])
    print(p.stdout)
    rows = selftest_rows(p.stdout)
    check(len(rows) >= 8, "rows %r" % list(rows))
    for ev in ("page-faults", "task-clock", "context-switches"):
        r = [f for k, f in rows.items() if k[1] == ev][0]
        if ev == "context-switches" and user_only():
            # counted in kernel mode: 0 in user space, so not judged, with the reason
            check("skip:" in r and "kernel mode" in " ".join(r), "%s: %r" % (ev, r))
            continue
        check(r[-1] == "PASS" or "PASS" in r, "%s: %r" % (ev, r))
        check(r[4] != "-", "%s: perfmark measured nothing" % ev)
    pages = [f for k, f in rows.items() if k == ("touch", "page-faults")][0]
    check(4000 <= int(pages[4]) <= 4008, "page faults %s" % pages[4])
    if shutil.which("perf"):
        check(pages[5] != "-", "perf installed but not used: %r" % pages)
    if no_pmu():
        check("no hardware PMU" in p.stdout.split("PMU:")[1].splitlines()[0], "PMU line")
        hw = [f for k, f in rows.items() if k[0] in ("loop", "chase_large", "chase_small")]
        check(hw and all("skip:" in " ".join(f) for f in hw), "hardware rows not skipped: %r" % hw)
    check("perfmark selftest: PASS" in p.stdout, "verdict: %r" % p.stdout[-200:])


def case_selftest_detects():
    """A counting setup that cannot see the thread (counters bound to another
    CPU than the one the kernels run on): the selftest fails, exit 1."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        print("SKIP: needs two allowed CPUs (have %r)" % cpus)
        return SKIP
    p = run(["taskset", "-c", str(cpus[0]), PERFMARK, "selftest", "--no-perf"],
            env={"PERFMARK_BIND_CPU": str(cpus[1])}, expect=1)
    rows = selftest_rows(p.stdout)
    check(rows[("touch", "page-faults")][6].startswith("FAIL"), "page-faults row %r" % rows[("touch", "page-faults")])
    check("perfmark selftest: FAIL" in p.stdout, "verdict %r" % p.stdout[-200:])
    print(p.stdout)


def case_hw_fallback_spr():
    return hw_fallback("spr::INST_RETIRED:ANY_P,spr::TOPDOWN:SLOTS",
                       env={"LIBPFM_ENCODE_INACTIVE": "1"})


# ---- bad input: one clear message, app runs on, exit status kept, file written ----

def misuse(mode, events="sw", env=None, expect_file=True):
    tmp = tempfile.mkdtemp()
    p, out = perfmark_run(tmp, [prog("misuse"), mode], events=events, env=env, expect=3)
    check("misuse %s done" % mode in p.stdout, "application did not run on: %r" % p.stdout)
    if expect_file:
        check(os.path.exists(out), "no file written (%s)" % os.listdir(tmp))
    return p, (Measured(out) if expect_file else None), tmp


def case_bad_unknown_event():
    p, m, _ = misuse("plain", events="page-fault,task-clock")
    lines = perfmark_lines(p.stderr)
    bad = [l for l in lines if "unknown event 'page-fault'" in l]
    check(len(bad) == 1, "want one message, got %r" % lines)
    check("did you mean page-faults" in bad[0], "no suggestion: %r" % bad[0])
    check(m.attr("events_measured") == "task-clock", "measured %r" % m.attr("events_measured"))


def case_bad_modifier():
    p, m, _ = misuse("plain", events="page-faults:x,task-clock")
    bad = [l for l in perfmark_lines(p.stderr) if "bad modifier" in l]
    check(len(bad) == 1 and "page-faults:x" in bad[0], "messages %r" % perfmark_lines(p.stderr))
    check(m.attr("events_measured") == "task-clock", "measured %r" % m.attr("events_measured"))


def user_only():
    """A normal user at perf_event_paranoid >= 2 counts user space only."""
    with open("/proc/sys/kernel/perf_event_paranoid") as f:
        return os.geteuid() != 0 and int(f.read()) >= 2


def case_bad_too_many_events():
    names = ["page-faults", "task-clock", "cpu-clock", "minor-faults", "major-faults",
             "context-switches", "cpu-migrations", "PERF_COUNT_SW_CPU_CLOCK",
             "PERF_COUNT_SW_TASK_CLOCK"]
    spellings = [n + mod for mod in ("", ":u", ":k", ":u:k") for n in names]  # 36 distinct
    p, m, _ = misuse("plain", events=",".join(spellings))
    lines = perfmark_lines(p.stderr)
    limit = [l for l in lines if "more than 32 events requested" in l]
    check(len(limit) == 1, "want one limit message: %r" % lines)
    want = spellings[:32]
    if user_only():  # the kernel-mode spellings are then dropped, each with its reason
        want = [s for s in want if ":k" not in s]
    check(len(m.events) == len(want), "%d events measured, want %d" % (len(m.events), len(want)))
    check(m.events == want, "the first 32 requested are not the ones measured")


def case_bad_unwritable_output():
    """perfmark run refuses an output directory it cannot write, before
    anything starts; under a bare LD_PRELOAD the runtime says so at start
    and the data goes to the fallback at the end."""
    tmp = tempfile.mkdtemp()
    out = "/proc/perfmark-nonexistent/out.h5"
    p = run([PERFMARK, "run", "-e", "sw", "-o", out, "--", prog("misuse"), "plain"],
            env={"TMPDIR": tmp}, expect=2)
    check("misuse plain done" not in p.stdout, "the program ran")
    check(len(p.stderr.strip().splitlines()) == 1 and "/proc/perfmark-nonexistent" in p.stderr,
          "want one message naming the directory: %r" % p.stderr)
    lib = os.path.join(BUILD, "lib", "libperfmark.so")
    p = run([prog("misuse"), "plain"], env={"TMPDIR": tmp, "LD_PRELOAD": lib,
                                            "PERFMARK_EVENTS": "sw", "PERFMARK_OUTPUT": out},
            expect=3)
    lines = perfmark_lines(p.stderr)
    where = os.path.join(tmp, "out.h5")
    msg = [l for l in lines if "instead" in l and out in l]
    check(len(msg) == 1 and where in msg[0], "want one message naming %s: %r" % (where, lines))
    check(os.path.exists(where), "fallback file missing")
    Measured(where)


def case_bad_existing_output():
    tmp = tempfile.mkdtemp()
    out = os.path.join(tmp, "out.h5")
    with open(out, "w") as f:
        f.write("precious")
    p, _ = perfmark_run(tmp, [prog("misuse"), "plain"], expect=3)
    check(open(out).read() == "precious", "existing file was clobbered")
    check(os.path.exists(os.path.join(tmp, "out.1.h5")), "no numbered file: %s" % os.listdir(tmp))
    check(any("never overwrites" in l for l in perfmark_lines(p.stderr)), "no message")


def case_bad_end_without_begin():
    p, m, _ = misuse("end_without_begin")
    check(any("without a matching begin" in l for l in perfmark_lines(p.stderr)), "no message")
    check("UNBALANCED" in m.flag_names(0, "never_begun"), "never_begun not flagged")
    check(int(m.visits[0, m.region("never_begun")]) == 0, "phantom visit counted")
    # an empty region is mostly perfmark's own reads: OVERHEAD is right there
    check(m.flag_names(0, "fine") <= {"MIGRATED", "OVERHEAD"} and
          int(m.visits[0, m.region("fine")]) == 1, "a later good region was disturbed")


def case_bad_mismatched():
    p, m, _ = misuse("mismatched")
    check(any("still open inside it" in l for l in perfmark_lines(p.stderr)), "no message")
    check("UNBALANCED" in m.flag_names(0, "outer/inner"), "inner not flagged")
    check(int(m.visits[0, m.region("outer")]) == 1, "outer not closed")
    check(int(m.visits[0, m.region("after")]) == 1, "stack not recovered: 'after' is not top level")


def case_bad_open_at_exit():
    p, m, _ = misuse("open_at_exit")
    check(any("left_open" in l and "process exit" in l for l in perfmark_lines(p.stderr)),
          "no message: %r" % perfmark_lines(p.stderr))
    check("UNBALANCED" in m.flag_names(0, "left_open"), "not flagged")
    check(int(m.visits[0, m.region("left_open")]) == 1, "open region's time was dropped")
    check(int(m.threads["open_at_end"][0]) == 1, "open_at_end not recorded")


def case_bad_thread_exit_inside():
    p, m, _ = misuse("thread_exit_inside")
    check(any("exited inside region" in l for l in perfmark_lines(p.stderr)), "no message")
    rows = m.rows_visiting("thread_region")
    check(len(rows) == 1, "thread row missing")
    t = rows[0]
    check("UNBALANCED" in m.flag_names(t, "thread_region/thread_inner"), "inner not flagged")
    check(int(m.threads["exited"][t]) == 1 and int(m.threads["open_at_end"][t]) == 2,
          "thread row %r" % (m.threads[t],))


def case_bad_many_names():
    p, m, _ = misuse("many_names")
    check(len(m.paths) == 100000, "%d regions, want 100000" % len(m.paths))
    check(int(m.visits.sum()) == 100000, "visits %d" % m.visits.sum())


def case_bad_odd_names():
    p, m, _ = misuse("odd_names")
    names = [m.f["regions"]["name"][i] for i in range(len(m.paths))]
    raw = [n if isinstance(n, bytes) else n.encode() for n in names]
    check(b"" in raw, "empty name missing")
    check("Ünïcödé ✓ 测量".encode() in raw, "UTF-8 name not kept byte for byte")
    check(b"a/b" in raw and b'quote"comma,' in raw, "names with / or quotes lost")
    longest = max(len(n) for n in raw)
    check(longest == 1024, "long name stored with %d bytes, want truncation to 1024" % longest)
    check(any("truncated" in l for l in perfmark_lines(p.stderr)), "no truncation message")
    check(int(m.visits.sum()) == 5, "visits %d" % m.visits.sum())


def case_errno_kept():
    p, m, _ = misuse("errno")
    check(int(m.visits[:, m.region("deep0")].sum()) == 1, "deep0 not measured")
    check(int(m.visits[:, m.region("picked_up")].sum()) == 1, "thread region not measured")


# ---- inert outside perfmark -----------------------------------------------------

def case_inert_without_perfmark():
    tmp = tempfile.mkdtemp()
    p = run([prog("nested_regions")], cwd=tmp)
    check("measured: no" in p.stdout, "markers active outside perfmark: %r" % p.stdout)
    check(not p.stderr.strip(), "printed %r" % p.stderr)
    check(not os.listdir(tmp), "files written: %s" % os.listdir(tmp))


def case_libpfm_on_demand():
    """libpfm4 is mapped only into processes that encode event names it must
    decide (runtime/count/pm_events.c): not into a -e none process, nor into one
    measured with -e sw (the kernel's software events come from perfmark's
    own table, runtime/count/pm_sw_events.c), nor a shell; it is in a process
    measured with an event only libpfm4 knows how to spell (a modifier)."""
    def maps_of(events, cmd):
        with tempfile.TemporaryDirectory() as tmp:
            p, out = perfmark_run(tmp, cmd, events=events)
            return p.stdout
    none = maps_of("none", ["/bin/cat", "/proc/self/maps"])
    check("libperfmark" in none, "-e none: libperfmark.so not preloaded?")
    check("libpfm" not in none, "-e none: libpfm4 mapped into a process that counts nothing")
    sw = maps_of("sw", ["/bin/cat", "/proc/self/maps"])
    check("libperfmark" in sw and "libpfm" not in sw,
          "-e sw: libpfm4 loaded though the software table encodes every sw event")
    modified = maps_of("task-clock:u", ["/bin/cat", "/proc/self/maps"])
    check("libpfm" in modified, "-e task-clock:u: libpfm4 not loaded where it encoded the event")
    # `; true` keeps sh from exec'ing cat: these are the shell's own maps
    shell = maps_of("task-clock:u", ["/bin/sh", "-c", "cat /proc/$$/maps; true"])
    check("libperfmark" in shell and "libpfm" not in shell,
          "a shell (never measured) has libpfm4 mapped")


def case_writer_on_demand():
    """perfmark encodes a file itself unless its datasets are large enough to
    be chunked and compressed: HDF5 is never mapped while a program is
    measured, not loaded at all for a small file (the loader's own account,
    LD_DEBUG=files), and loaded at the write for a large one (runtime/file/
    pm_writer.h). Which encoder wrote a file shows in its superblock's
    version (2: perfmark's; 0: the HDF5 library's, earliest format)."""
    def loaded(tmp):
        names = set()
        for name in os.listdir(tmp):
            if name.startswith("ld."):
                with open(os.path.join(tmp, name), errors="replace") as f:
                    for line in f:
                        if "file=" in line and ("needed by" in line or "dynamically loaded by" in line):
                            names.add(os.path.basename(line.split("file=", 1)[1].split()[0]))
        return names

    def superblock(path):
        with open(path, "rb") as f:
            head = f.read(9)
        check(head[:8] == b"\x89HDF\r\n\x1a\n", "%s is not an HDF5 file" % path)
        return head[8]

    with tempfile.TemporaryDirectory() as tmp:
        p, _ = perfmark_run(tmp, ["/bin/cat", "/proc/self/maps"])
        check("libperfmark" in p.stdout, "libperfmark.so not preloaded?")
        check("libhdf5" not in p.stdout and "libperfmark_writer" not in p.stdout,
              "HDF5 mapped into a measured program while it runs")
        p, out = perfmark_run(tmp, [prog("pagefaults"), "1000", "2"], name="small.h5",
                              env={"LD_DEBUG": "files", "LD_DEBUG_OUTPUT": os.path.join(tmp, "ld")})
        libs = loaded(tmp)
        check(any(n.startswith("libperfmark.so") for n in libs),
              "the loader's account lacks libperfmark.so: LD_DEBUG not honoured? %s" % sorted(libs))
        check(not any(n.startswith(("libhdf5", "libperfmark_writer")) for n in libs),
              "HDF5 loaded for a small file: %s" % sorted(n for n in libs if "hdf5" in n or "writer" in n))
        check(superblock(out) == 2, "a small file not written by perfmark's encoder")
        m = Measured(out)
        check(m.f["region/counts"].chunks is None, "a small dataset chunked")
        t = m.rows_visiting("touch")
        check(len(t) == 2 and all(1000 <= m.count(r, "touch", "page-faults") <= 1008 for r in t),
              "page faults of the small file's regions")
    with tempfile.TemporaryDirectory() as tmp:
        p, out = perfmark_run(tmp, [prog("misuse"), "many_names"], expect=3,
                              env={"LD_DEBUG": "files", "LD_DEBUG_OUTPUT": os.path.join(tmp, "ld")})
        libs = loaded(tmp)
        check(any(n.startswith("libperfmark_writer") for n in libs),
              "the HDF5 writer not loaded for a large file: %s" % sorted(libs))
        check(superblock(out) == 0, "a large file not written by the HDF5 library")
        m = Measured(out)
        d = m.f["region/visits"]
        check(d.shape[1] == 100000 and d.chunks is not None and d.compression == "gzip",
              "visits %s not chunked and compressed" % (d.shape,))
        check(int(m.visits.sum()) == 100000, "visits %d" % m.visits.sum())
    print("small file: perfmark's encoder, no HDF5 loaded; 100000 regions: the HDF5 library")


def case_two_copies():
    """App linked with one libperfmark, another copy preloaded: one file, from
    the copy the program's calls reach."""
    import shutil
    tmp = tempfile.mkdtemp()
    copy = os.path.join(tmp, "copy")
    os.mkdir(copy)
    shutil.copy(os.path.join(BUILD, "lib", "libperfmark.so.0"), os.path.join(copy, "libperfmark.so"))
    # an install puts the HDF5 writer beside the runtime (runtime/file/pm_writer.h)
    shutil.copy(os.path.join(BUILD, "lib", "libperfmark_writer.so"), copy)
    out = os.path.join(tmp, "out.h5")
    run([prog("pagefaults"), "100", "1"], cwd=tmp,
        env={"LD_PRELOAD": os.path.join(copy, "libperfmark.so"), "PERFMARK_ENABLE": "1",
             "PERFMARK_EVENTS": "sw", "PERFMARK_OUTPUT": out})
    files = [f for f in os.listdir(tmp) if f.endswith(".h5")]
    check(files == ["out.h5"], "want exactly one file, got %s" % files)
    m = Measured(out)
    t = m.rows_visiting("touch")[0]
    check(100 <= m.count(t, "touch", "page-faults") <= 108, "region not measured")


def case_disabled_markers():
    """-DPERFMARK_DISABLE (C, C++), the no-op Fortran module, LIKWID's header
    without -DLIKWID_PERFMON: every form of the API does nothing, gives the
    documented results, and the programs need no perfmark or LIKWID library,
    to link or to run (run here with an empty LD_LIBRARY_PATH and no
    LD_PRELOAD)."""
    want = {"disabled_markers": "disabled markers: ok",
            "disabled_markers_cxx": "disabled markers (C++): ok",
            "disabled_markers_f": "disabled markers (Fortran): ok",
            "disabled_likwid": "disabled likwid markers: ok"}
    ran = []
    for name, line in want.items():
        path = prog(name)
        if not os.path.exists(path):
            print("%s not built (no compiler or header for it)" % name)
            continue
        libs = subprocess.run(["ldd", path], capture_output=True, text=True).stdout
        check("perfmark" not in libs and "likwid" not in libs,
              "%s needs a library it should not:\n%s" % (name, libs))
        p = run([path], env={"LD_LIBRARY_PATH": "", "LD_PRELOAD": ""})
        check(line in p.stdout, "%s printed %r" % (name, p.stdout))
        ran.append(name)
    check("disabled_markers" in ran, "the C program was not built")
    print("no library needed, every form a no-op: %s" % ", ".join(ran))


# ---- CLI --------------------------------------------------------------------------

def case_cli_help():
    top = run([PERFMARK, "--help"]).stdout
    for cmd in ("run", "report", "list", "check"):
        check(cmd in top, "%s missing from --help" % cmd)
        sub = run([PERFMARK, cmd, "--help"]).stdout
        check(sub.startswith("usage: perfmark %s" % cmd), "%s --help: %r" % (cmd, sub[:80]))
    run([PERFMARK, "frobnicate"], expect=2)
    run([PERFMARK, "run"], expect=2)
    # -h after the command (no `--`) is the command's, not run's: run goes on
    # to exec the command (one that does not exist: nothing is preloaded into
    # a program the sanitizer builds did not instrument)
    with tempfile.TemporaryDirectory() as tmp:
        p = run([PERFMARK, "run", "-q", "-e", "none", "-o", os.path.join(tmp, "h.h5"),
                 "./no-such-program", "-h"], cwd=tmp, expect=127)
        check("cannot run './no-such-program'" in p.stderr and "usage" not in p.stdout,
              "perfmark run ./no-such-program -h: %r %r" % (p.stdout[:80], p.stderr[:200]))
    check(run([PERFMARK, "run", "-e", "none", "-h"]).stdout.startswith("usage: perfmark run"),
          "perfmark run -e none -h is not run's help")


def case_cli_list():
    out = run([PERFMARK, "list"]).stdout
    for g in ("default", "sw", "ipc", "none"):
        check("\n%s " % g in "\n" + out, "group %s missing" % g)
    check("task-clock" in out and "counts here" in out, "sw events not shown as counting")
    if no_pmu():
        check("no hardware PMU" in out, "list does not say why cycles fail here")
    for g in ("topdown", "branch", "cache", "mem"):
        check("\n%s " % g in "\n" + out, "group %s missing" % g)


def case_cli_check():
    out = run([PERFMARK, "check"]).stdout
    for key in ("hardware PMU:", "paranoid:", "rdpmc:", "NMI watchdog:", "software:", "TopDown:"):
        check(key in out, "%s missing from check" % key)
    par = open("/proc/sys/kernel/perf_event_paranoid").read().strip()
    check("perf_event_paranoid=%s" % par in out, "paranoid level not reported")
    if no_pmu():
        check("absent" in out and "falls back" in out, "no-PMU consequence not said")


def case_cli_preload_kept():
    """`perfmark run` keeps the user's LD_PRELOAD entries (ours first) and
    adds no second libperfmark when the list already holds one."""
    # any library to preload: the C library's libm, wherever this system
    # keeps it for this architecture (the Python running this links it)
    maps = [l.split()[-1] for l in open("/proc/self/maps")
            if re.search(r"/libm(\.so\.6|-[0-9.]+\.so)$", l.rstrip())]
    check(maps, "no libm.so.6 mapped in this Python")
    libm = maps[0]
    lib = os.path.join(BUILD, "lib", "libperfmark.so")
    for given, want_ours in ((libm, 1), (libm + ":" + lib, 1)):
        with tempfile.TemporaryDirectory() as tmp:
            p, out = perfmark_run(tmp, ["/bin/sh", "-c", 'echo "PRELOAD=$LD_PRELOAD"'],
                                  env={"LD_PRELOAD": given}, events="none")
            seen = [l[8:] for l in p.stdout.splitlines() if l.startswith("PRELOAD=")]
            check(len(seen) == 1, "no PRELOAD line: %r" % p.stdout)
            entries = seen[0].split(":")
            ours = [e for e in entries if os.path.basename(e).startswith("libperfmark.so")]
            check(libm in entries, "the user's entry was dropped: %r" % entries)
            check(len(ours) == want_ours, "libperfmark entries %r" % entries)
            if given == libm:
                check(entries[0] == ours[0], "libperfmark not first: %r" % entries)


def case_cli_no_cwd_search():
    """No library perfmark loads is looked for in the job's working
    directory: a build-tree RUNPATH with an empty entry (CMake left a
    trailing ':') made the dynamic loader try a dozen names per library
    there, for the runtime, the writer's ~45 libraries and the report's
    (a storm of failed opens on a parallel file system, and a library
    dropped there would have been loaded). Judged from the loader's own
    account (LD_DEBUG=libs): every file it tried through a RUNPATH has an
    absolute path (an empty entry the user's LD_LIBRARY_PATH may hold is
    not ours to judge); and from the binaries: no RUNPATH in bin/ or lib/
    has an empty entry (the programs and libraries this run does not load:
    the shims, the libexec programs)."""
    with tempfile.TemporaryDirectory() as tmp:
        dbg = os.path.join(tmp, "ld")
        env = {"LD_DEBUG": "libs", "LD_DEBUG_OUTPUT": dbg}
        _, out = perfmark_run(tmp, [prog("pagefaults"), "100", "2"], env=env)
        run([PERFMARK, "report", out], env=env, cwd=tmp)
        found, tried, relative = [], 0, set()
        for name in os.listdir(tmp):
            if not name.startswith("ld."):
                continue
            source = ""
            with open(os.path.join(tmp, name), errors="replace") as f:
                for line in f:
                    if "find library=" in line:
                        found.append(line.split("find library=", 1)[1].split()[0])
                    elif "search path=" in line:
                        source = line.rsplit("(", 1)[-1]
                    elif "trying file=" in line and ("RUNPATH" in source or "RPATH" in source):
                        tried += 1
                        path = line.split("trying file=", 1)[1].strip()
                        if not path.startswith("/"):
                            relative.add(path)
        check(any(x.startswith("libhdf5") for x in found), "the loader's account lacks HDF5, "
              "the writer's (%d libraries looked up): LD_DEBUG not honoured?" % len(found))
        check(not relative, "%d files tried in the working directory through a RUNPATH: %s" % (
            len(relative), sorted(relative)[:8]))
    empty = []
    if shutil.which("readelf"):
        for d in ("bin", "lib"):
            for name in sorted(os.listdir(os.path.join(BUILD, d))):
                path = os.path.join(BUILD, d, name)
                if os.path.islink(path) or not os.path.isfile(path):
                    continue
                with open(path, "rb") as f:
                    if f.read(4) != b"\x7fELF":
                        continue
                dyn = subprocess.run(["readelf", "-d", path], capture_output=True, text=True).stdout
                for m in re.finditer(r"\((?:RUNPATH|RPATH)\)\s+Library (?:runpath|rpath): \[(.*)\]", dyn):
                    if "" in m.group(1).split(":"):
                        empty.append("%s/%s: %s" % (d, name, m.group(1)))
    else:
        print("(no readelf: the binaries' RUNPATHs are not read)")
    check(not empty, "RUNPATH with an empty entry: %s" % empty[:6])
    print("ok: %d library lookups through a RUNPATH, all absolute; no empty RUNPATH entry" % tried)


# The job's side of case_cli_perf_hooks: find the holder `perfmark run`
# started for this process (tests/hooks_holder.py), and report what it
# holds, whether we have a child we did not start, whether SIGCHLD is
# pending for us, and whether we can fork.
HOOKS_JOB = r"""
import json, os, subprocess, sys
sys.path.insert(0, @TESTS@)
from hooks_holder import holder
me = os.getpid()
pending = [l.split()[1] for l in open("/proc/self/status") if l.startswith("ShdPnd:")][0]
h = holder()
try:
    os.waitpid(-1, os.WNOHANG)  # not waiting: a holder that is our child would never end
    waited = "a child"
except ChildProcessError:
    waited = "ECHILD"
forks = subprocess.run(["/bin/true"]).returncode == 0
print("HOOKS " + json.dumps({"me": me, "holder": h, "wait": waited, "forks": forks,
                             "sigchld_pending": bool(int(pending, 16) & (1 << 16))}))
"""

# A launcher that is a child subreaper (PR_SET_CHILD_SUBREAPER survives exec).
SUBREAPER = r"""
import ctypes, os, sys
if ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) != 0:
    sys.exit(77)
os.execv(sys.argv[1], sys.argv[1:])
"""

# A launcher that blocks SIGCHLD (the mask survives exec).
BLOCKS_SIGCHLD = r"""
import os, signal, sys
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGCHLD])
os.execv(sys.argv[1], sys.argv[1:])
"""


def hooks_job(tmp, events, wrap=(), env=None):
    script = os.path.join(tmp, "job.py")
    with open(script, "w") as f:
        f.write(HOOKS_JOB.replace("@TESTS@", repr(os.path.dirname(os.path.abspath(__file__)))))
    cmd = list(wrap) + [PERFMARK, "run", "-q", "-e", events, "-o", os.path.join(tmp, "o.h5"),
                        "--", sys.executable, script]
    e = {"TMPDIR": tmp}
    e.update(env or {})
    p = run(cmd, env=e, cwd=tmp)
    lines = [l[6:] for l in p.stdout.splitlines() if l.startswith("HOOKS ")]
    check(len(lines) == 1, "the job printed no report: %r %r" % (p.stdout, p.stderr[-500:]))
    got = json.loads(lines[0])
    check(got["wait"] == "ECHILD", "the job has a child it did not start: %r" % got)
    check(got["forks"], "the job cannot start a process: %r" % got)
    check(not got["sigchld_pending"], "a SIGCHLD is pending for the job: %r" % got)
    return got


def hooks_wrapped(tmp, source, events="sw"):
    path = os.path.join(tmp, "wrap.py")
    with open(path, "w") as f:
        f.write(source)
    return hooks_job(tmp, events, wrap=(sys.executable, path))


def case_cli_perf_hooks():
    """`perfmark run` keeps the kernel's perf hooks on for the job from a
    holder process: one disabled perf event and the job's pidfd, nothing of
    the job's (no stdio), never the job's child (wait() gives ECHILD), no
    SIGCHLD left pending, gone once the job has exited; its own program
    (perfmark-hooks, no environment), so perfmark stays writable. None for -e none,
    PERFMARK_HOOKS=0, a perfmark run that is one rank of a job, a launcher
    that is a child subreaper or PID 1 (a container), where the holder would
    become the job's child; none under `unshare --pid` without --fork, where
    the job must still be able to start processes."""
    try:
        os.close(os.pidfd_open(os.getpid()))
    except (AttributeError, OSError) as e:
        print("SKIP: no pidfd here (%s): the holder watches the job without one, but this "
              "test finds it by its pidfd" % e)
        return SKIP
    with tempfile.TemporaryDirectory() as tmp:
        got = hooks_job(tmp, "sw")
        m = Measured(os.path.join(tmp, "o.h5"))
        # the suite needs software events everywhere: a job that measured
        # none is a regression here, not a machine without perf events
        check(m.events, "the -e sw job measured no events")
        h = got["holder"]
        check(h is not None, "no holder process names the job (pid %d)" % got["me"])
        check(h["comm"] == "perfmark-hooks", "holder named %r" % h["comm"])
        check(h["fds"] == ["anon_inode:[perf_event]", "anon_inode:[pidfd]"],
              "the holder keeps other files open: %r" % h["fds"])
        check(h["ppid"] != got["me"], "the holder is the job's child")
        # Its own program, not `perfmark`: a running program's file cannot be
        # written (ETXTBSY), and the holder lives as long as the job. And no
        # environment but the loader's search path: no preloaded runtime in it.
        check(os.path.basename(h["exe"]) == "perfmark-hooks",
              "the holder runs %s, keeping it busy for the job" % h["exe"])
        check(set(h["environ"]) <= {"LD_LIBRARY_PATH"},
              "the holder has an environment: %r" % h["environ"])
        # Gone (or a zombie its new parent has not reaped yet) after the job.
        end, state = time.time() + 20, "R"
        while time.time() < end:
            try:
                state = [l.split()[1] for l in open("/proc/%d/status" % h["pid"])
                         if l.startswith("State:")][0]
            except (OSError, IndexError):
                state = "gone"
            if state in ("gone", "Z"):
                break
            time.sleep(0.02)
        check(state in ("gone", "Z"), "the holder still runs after the job: state %s" % state)
        print("holder %d: %s, then %s after the job" % (h["pid"], h["fds"], state))
    with tempfile.TemporaryDirectory() as tmp:
        got = hooks_wrapped(tmp, BLOCKS_SIGCHLD)
        check(got["holder"] is not None, "no holder when the launcher blocks SIGCHLD")
        print("SIGCHLD blocked in the launcher: holder, none pending for the job")
    for why, events, env in (("-e none", "none", None),
                             ("PERFMARK_HOOKS=0", "sw", {"PERFMARK_HOOKS": "0"}),
                             ("one rank of a job", "sw", {"OMPI_COMM_WORLD_RANK": "0"})):
        with tempfile.TemporaryDirectory() as tmp:
            got = hooks_job(tmp, events, env=env)
            check(got["holder"] is None, "a holder for %s: %r" % (why, got["holder"]))
            print("%s: no holder" % why)
    with tempfile.TemporaryDirectory() as tmp:
        got = hooks_wrapped(tmp, SUBREAPER)
        check(got["holder"] is None, "a holder under a subreaper launcher: %r" % got["holder"])
        print("subreaper launcher: no holder")
    unshare = shutil.which("unshare")
    if os.geteuid() != 0 or not unshare:
        print("not checked: PID namespaces (need root and unshare)")
        return 0
    probe = subprocess.run([unshare, "--pid", "--fork", "--mount-proc", "true"],
                           capture_output=True)
    if probe.returncode != 0:
        print("not checked: PID namespaces (unshare --pid failed: %s)"
              % text(probe.stderr).strip()[:200])
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        got = hooks_job(tmp, "sw", wrap=(unshare, "--pid", "--fork", "--mount-proc"))
        check(got["me"] == 1, "the job is not PID 1 of its namespace: %r" % got)
        check(got["holder"] is None, "a holder for a job that is PID 1: %r" % got["holder"])
        print("as PID 1: no holder, the job's wait() gives ECHILD")
    with tempfile.TemporaryDirectory() as tmp:
        got = hooks_job(tmp, "sw", wrap=(unshare, "--pid"))
        check(got["holder"] is None, "a holder under unshare --pid: %r" % got["holder"])
        print("unshare --pid without --fork: no holder, the job starts processes")


# ---- the file without perfmark ------------------------------------------------------

def case_h5dump_readable():
    with tempfile.TemporaryDirectory() as tmp:
        _, out = perfmark_run(tmp, [prog("nested_regions")])
        p = run(["h5dump", "-H", out])
        for name in ("schema_version", "/events", "/regions", "/threads", "region/counts"):
            check(name.split("/")[-1] in p.stdout, "%s not in h5dump output" % name)
        m = Measured(out)
        check(int(m.f.attrs["schema_version"]) == 1, "schema_version")
        check(not glob.glob(os.path.join(tmp, "*.tmp-*")), "temporary file left behind")


def case_report_end_to_end():
    with tempfile.TemporaryDirectory() as tmp:
        _, out = perfmark_run(tmp, [prog("nested_regions")])
        m = Measured(out)
        text_out = run([PERFMARK, "report", out]).stdout
        for path in ("init", "solve", "stencil", "worker", "compute"):
            check(path in text_out, "region %s missing from the text report" % path)
        j = json.loads(run([PERFMARK, "report", out, "--format", "json"]).stdout)
        by_path = {r["path"]: r for r in j["regions"]}
        for r, path in enumerate(m.paths):
            check(path in by_path, "%s missing from JSON" % path)
            check(by_path[path]["visits"] == int(m.visits[:, r].sum()), "%s visits" % path)
            pf = m.event("page-faults")
            rows = [t for t in range(m.visits.shape[0]) if m.visits[t, r] > 0]
            want = int(m.counts[rows, r, pf].sum())
            got = by_path[path]["events"]["page-faults"]["total"]
            check(abs(got - want) <= 1e-6 * max(1, want), "%s page-faults %s vs %s" % (path, got, want))
        csv_path = os.path.join(tmp, "r.csv")
        run([PERFMARK, "report", out, "--format", "csv", "-o", csv_path])
        check(os.path.getsize(csv_path) > 0, "empty CSV")
        run([PERFMARK, "report", os.path.join(tmp, "missing.h5")], expect=1)


# ---- MPI: who is a rank, launch forms ------------------------------------------

MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_mpi_yield_when_idle": "1"}
MPIRUN = ["mpirun", "--oversubscribe", "--bind-to", "none"]


def check_job_file(tmp, np_, pages, stem="out"):
    """One file for the job: thread rows in rank order, exact per-rank counts."""
    files = sorted(f for f in os.listdir(tmp) if f.endswith(".h5"))
    check(files == ["%s.h5" % stem], "files %s, want one job file (a launcher, helper or "
          "rank wrote its own?)" % files)
    m = Measured(os.path.join(tmp, stem + ".h5"))
    check(int(m.f.attrs["ranks"]) == np_ and int(m.f.attrs["rank"]) == -1,
          "rank attrs %s/%s" % (m.f.attrs["rank"], m.f.attrs["ranks"]))
    ranks = [int(x) for x in m.threads["rank"]]
    check(ranks == sorted(ranks) and set(ranks) == set(range(np_)),
          "thread rows by rank %r" % ranks)
    check([int(x) for x in m.f["rank/rank"][:]] == list(range(np_)), "/rank rows")
    for r in range(np_):
        t = ranks.index(r)  # the rank's main thread is its first row
        pf = m.count(t, "touch", "page-faults")
        want_pf = pages * (r + 1)
        check(want_pf <= pf <= want_pf + 8, "rank %d: %d page-faults, want %d" % (r, pf, want_pf))
        check(int(m.visits[t, m.region("comm")]) == 1, "rank %d: comm visits" % r)
    return m


def case_mpi_mpirun_perfmark_run():
    tmp = tempfile.mkdtemp()
    out = os.path.join(tmp, "out.h5")
    p = run(MPIRUN + ["-np", "2", PERFMARK, "run", "-e", "sw", "-o", out, "--", prog("mpi_app"), "500"],
            env=MPI_ENV, cwd=tmp)
    check(p.stdout.count("mpi_app rank") == 2, "application output changed: %r" % p.stdout)
    check_job_file(tmp, 2, 500)


def case_mpi_perfmark_run_mpirun():
    tmp = tempfile.mkdtemp()
    out = os.path.join(tmp, "out.h5")
    run([PERFMARK, "run", "-e", "sw", "-o", out, "--"] + MPIRUN + ["-np", "4", prog("mpi_app"), "300"],
        env=MPI_ENV, cwd=tmp)
    check_job_file(tmp, 4, 300)


def case_mpi_plain_preload():
    tmp = tempfile.mkdtemp()
    lib = os.path.join(BUILD, "lib", "libperfmark.so")
    out = os.path.join(tmp, "out.h5")
    env = dict(MPI_ENV, PERFMARK_OUTPUT=out, PERFMARK_EVENTS="sw")
    run(MPIRUN + ["-np", "2", "-x", "LD_PRELOAD=" + lib, "-x", "PERFMARK_OUTPUT", "-x",
                  "PERFMARK_EVENTS", prog("mpi_app"), "400"], env=env, cwd=tmp)
    check_job_file(tmp, 2, 400)


def case_mpi_launch_tools_inert():
    """A shell around mpirun, and timeout and env between the launcher and
    the rank: none of them is measured; the ranks are, from the start."""
    tmp = tempfile.mkdtemp()
    out = os.path.join(tmp, "out.h5")
    inner = " ".join(MPIRUN + ["-np", "2", "timeout", "120", "env", "PM_TEST=1",
                               prog("mpi_app"), "300"])
    run([PERFMARK, "run", "-e", "sw", "-o", out, "--", "bash", "-c", inner],
        env=MPI_ENV, cwd=tmp)
    check_job_file(tmp, 2, 300)


def case_mpi_helpers_not_measured():
    """system() and shells inside ranks, and mpirun itself, write nothing."""
    tmp = tempfile.mkdtemp()
    out = os.path.join(tmp, "out.h5")
    run([PERFMARK, "run", "-e", "sw", "-o", out, "--"] + MPIRUN +
        ["-np", "2", prog("mpi_app"), "200", "spawn"], env=MPI_ENV, cwd=tmp)
    check_job_file(tmp, 2, 200)
    # the same with plain LD_PRELOAD, where no PERFMARK_PID comes from `perfmark run`
    tmp = tempfile.mkdtemp()
    lib = os.path.join(BUILD, "lib", "libperfmark.so")
    env = dict(MPI_ENV, PERFMARK_OUTPUT=os.path.join(tmp, "out.h5"), PERFMARK_EVENTS="sw")
    run(MPIRUN + ["-np", "2", "-x", "LD_PRELOAD=" + lib, "-x", "PERFMARK_OUTPUT", "-x",
                  "PERFMARK_EVENTS", prog("mpi_app"), "200", "spawn"], env=env, cwd=tmp)
    check_job_file(tmp, 2, 200)


def mpi_job(np_, args, events="sw"):
    tmp = tempfile.mkdtemp()
    out = os.path.join(tmp, "out.h5")
    p = run([PERFMARK, "run", "-e", events, "-o", out, "--"] + MPIRUN +
            ["-np", str(np_), prog("mpi_app")] + args, env=MPI_ENV, cwd=tmp)
    return tmp, p


def case_mpi_job_file_np1():
    tmp, _ = mpi_job(1, ["300"])
    check_job_file(tmp, 1, 300)


def case_mpi_job_file_np8():
    tmp, _ = mpi_job(8, ["100"])
    check_job_file(tmp, 8, 100)


def case_mpi_uneven_ranks():
    """Ranks with different thread counts and regions only some ranks enter."""
    np_, pages = 4, 200
    tmp, _ = mpi_job(np_, [str(pages), "uneven"])
    m = check_job_file(tmp, np_, pages)
    ranks = [int(x) for x in m.threads["rank"]]
    # every thread has a row (Open MPI's own ones too): count the program's
    own = [ranks[t] for t in program_rows(m, "mpi_app")]
    for r in range(np_):
        check(own.count(r) == 1 + r, "rank %d has %d thread rows of the program, want %d"
              % (r, own.count(r), 1 + r))
    worker_rows = m.rows_visiting("worker")
    check(sorted(ranks[t] for t in worker_rows) == sorted(r for r in range(np_) for _ in range(r)),
          "worker threads by rank: %r" % [ranks[t] for t in worker_rows])
    for t in worker_rows:
        pf = m.count(t, "worker", "page-faults")
        check(pages <= pf <= pages + 8, "worker thread row %d: %d page-faults" % (t, pf))
    even = {ranks[t] for t in m.rows_visiting("even_only")}
    odd = {ranks[t] for t in m.rows_visiting("odd_only")}
    check(even == {0, 2} and odd == {1, 3}, "even_only by %s, odd_only by %s" % (even, odd))
    user = [p for p, k in zip(m.paths, m.f["regions"]["kind"]) if text(k) == "user"]
    check(len(user) == 5, "user regions %r" % user)


def case_mpi_job_file_large():
    """A job file large enough to be chunked and compressed, written by
    4 ranks collectively (parallel filtered writes)."""
    tmp = tempfile.mkdtemp()
    out = os.path.join(tmp, "out.h5")
    bench = os.path.join(BUILD, "bin", "bench_finalize")
    run([PERFMARK, "run", "-e", "sw", "-o", out, "--"] + MPIRUN +
        ["-np", "4", bench, "4", "1100"], env=MPI_ENV, cwd=tmp)
    m = Measured(out)
    d = m.f["region/counts"]
    check(d.chunks is not None and d.compression == "gzip",
          "counts %s not chunked and compressed (chunks %s)" % (d.shape, d.chunks))
    work = [r for r, p in enumerate(m.paths) if p.startswith("region")]
    check(len(work) == 1100, "%d regions" % len(work))
    check(int(m.visits[:, work].sum()) == 4 * 4 * 1100, "visits %d" % m.visits[:, work].sum())


def case_mpi_without_mpi_init():
    """A program that never initialises MPI, under mpirun: each rank its own file."""
    tmp = tempfile.mkdtemp()
    out = os.path.join(tmp, "out.h5")
    run([PERFMARK, "run", "-e", "sw", "-o", out, "--"] + MPIRUN +
        ["-np", "2", prog("pagefaults"), "500", "1"], env=MPI_ENV, cwd=tmp)
    files = sorted(f for f in os.listdir(tmp) if f.endswith(".h5"))
    check(files == ["out.rank0.h5", "out.rank1.h5"], "files %s" % files)
    for r in range(2):
        m = Measured(os.path.join(tmp, "out.rank%d.h5" % r))
        t = m.rows_visiting("touch")[0]
        check(500 <= m.count(t, "touch", "page-faults") <= 508, "rank %d not measured" % r)


def check_survivors(tmp, np_, pages, lost):
    """Every rank but `lost` wrote its own file, flagged PARTIAL, with the
    data it had collected (its "touch" region exact)."""
    for r in range(np_):
        if r == lost:
            continue
        path = os.path.join(tmp, "out.rank%d.h5" % r)
        check(os.path.exists(path), "rank %d's data was lost (%s)" % (r, os.listdir(tmp)))
        m = Measured(path)
        t = m.rows_visiting("touch")[0]
        want = pages * (r + 1)
        check(want <= m.count(t, "touch", "page-faults") <= want + 8, "rank %d touch" % r)
        check("PARTIAL" in m.flag_names(t, "touch") and int(m.f.attrs["partial"]) == 1,
              "rank %d not flagged PARTIAL" % r)
    check(not glob.glob(os.path.join(tmp, "*.tmp-*")), "temporary file left behind")


def case_mpi_abort():
    """MPI_Abort from rank 1: its own data is saved at once; Open MPI then
    SIGTERMs the other ranks, which save theirs (all flagged PARTIAL)."""
    tmp = tempfile.mkdtemp()
    out = os.path.join(tmp, "out.h5")
    run([PERFMARK, "run", "-e", "sw", "-o", out, "--"] + MPIRUN +
        ["-np", "3", prog("mpi_app"), "200", "abort"], env=MPI_ENV, cwd=tmp, expect=None)
    check_survivors(tmp, 3, 200, lost=None)


def case_mpi_rank_killed():
    """Rank 1 dies by SIGKILL (nothing can save its data); Open MPI SIGTERMs
    the others, whose data must survive."""
    tmp = tempfile.mkdtemp()
    out = os.path.join(tmp, "out.h5")
    run([PERFMARK, "run", "-e", "sw", "-o", out, "--"] + MPIRUN +
        ["-np", "3", prog("mpi_app"), "200", "die"], env=MPI_ENV, cwd=tmp, expect=None)
    check_survivors(tmp, 3, 200, lost=1)


def case_sigterm_single():
    """SIGTERM to a single process: the data so far is written, PARTIAL, and
    the process still dies of SIGTERM as it would without perfmark."""
    import signal
    import time
    tmp = tempfile.mkdtemp()
    out = os.path.join(tmp, "out.h5")
    env = dict(os.environ, PERFMARK_ENABLE="1", PERFMARK_EVENTS="sw", PERFMARK_OUTPUT=out)
    p = subprocess.Popen([prog("misuse"), "sleep"], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    check(p.stdout.readline().strip() == "ready", "program did not start")
    time.sleep(0.2)
    p.send_signal(signal.SIGTERM)
    p.communicate(timeout=60)
    check(p.returncode == -signal.SIGTERM, "exit status %d, want death by SIGTERM" % p.returncode)
    m = Measured(out)
    check(int(m.visits[0, m.region("before_sleep")]) == 1, "completed region lost")
    check({"PARTIAL"} <= m.flag_names(0, "before_sleep"), "not PARTIAL")
    check("UNBALANCED" in m.flag_names(0, "sleeping"), "open region not flagged")


def mpi_same_behaviour(mode, np_=2):
    """Run mpi_bad MODE without and with perfmark: the application's own
    output lines and the exit status must be the same. Returns the run dir."""
    tmp = tempfile.mkdtemp()
    cmd = MPIRUN + ["-np", str(np_), prog("mpi_bad"), mode]
    plain = run(cmd, env=MPI_ENV, cwd=tmp, expect=None)
    out = os.path.join(tmp, "out.h5")
    measured = run([PERFMARK, "run", "-e", "sw", "-o", out, "--"] + cmd, env=MPI_ENV, cwd=tmp,
                   expect=None)
    app = lambda p: sorted(l for l in p.stdout.splitlines() if l.startswith("rank "))
    check(app(plain) == app(measured), "output differs:\n%r\n%r" % (app(plain), app(measured)))
    check(plain.returncode == measured.returncode,
          "exit status %d without perfmark, %d with" % (plain.returncode, measured.returncode))
    return tmp, measured


def case_mpi_bad_init_twice():
    mpi_same_behaviour("init_twice")


def case_mpi_bad_after_finalize():
    mpi_same_behaviour("after_finalize")


def case_mpi_bad_no_finalize():
    tmp, _ = mpi_same_behaviour("no_finalize")
    files = sorted(f for f in os.listdir(tmp) if f.endswith(".h5"))
    check(files == ["out.rank0.h5", "out.rank1.h5"], "files %s (want one per rank)" % files)
    for f in files:
        m = Measured(os.path.join(tmp, f))
        check(int(m.visits[:, m.region("work")].sum()) == 1, "%s: work not measured" % f)


def case_mpi_bad_thread_finalize():
    tmp, _ = mpi_same_behaviour("thread_finalize")
    files = sorted(f for f in os.listdir(tmp) if f.endswith(".h5"))
    check(files == ["out.h5"], "files %s (want the job file)" % files)
    m = Measured(os.path.join(tmp, "out.h5"))
    check(int(m.visits[:, m.region("work")].sum()) == 2, "work visits")


def case_mpi_bad_bottom():
    tmp, p = mpi_same_behaviour("bottom")
    check(p.stdout.count("gave 1 2 3") == 2, "MPI_BOTTOM broadcast changed: %r" % p.stdout)
    m = Measured(os.path.join(tmp, "out.h5"))
    r = m.region("MPI_Bcast")
    check(int(m.f["region/bytes"][:, r].sum()) == 2 * 24, "bytes %s" % m.f["region/bytes"][:, r])


def case_mpi_messages_merged():
    """The same message on every rank appears once in the job file."""
    if not no_pmu():
        print("SKIP: needs a machine without a hardware PMU for a message on every rank")
        return SKIP
    tmp, p = mpi_job(4, ["100"], events="cycles")
    m = check_job_file(tmp, 4, 100)
    fallback = [x for x in m.messages if "none of the requested events" in x]
    check(len(fallback) == 1 and fallback[0].startswith("[all 4 ranks]"),
          "messages %r" % m.messages)


def main():
    case = sys.argv[2]
    fn = globals().get("case_" + case)
    if not fn:
        print("unknown case %s" % case)
        return 2
    try:
        rc = fn()
    except Failure as e:
        print("FAIL %s: %s" % (case, e))
        return 1
    if rc == SKIP:
        return SKIP
    print("PASS %s" % case)
    return 0


if __name__ == "__main__":
    sys.exit(main())
