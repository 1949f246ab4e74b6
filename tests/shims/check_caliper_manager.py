#!/usr/bin/python3
"""Caliper's ConfigManager and loop macros through perfmark's shim: two
programs set up the way Caliper's own examples are (caliper_manager_c.c,
caliper_manager_cxx.cpp), built against perfmark's Caliper headers and
linked with -lperfmark-caliper, run under `perfmark run -e sw -o F`.
Every run must exit 0: a configuration never stops the program.

usage: /usr/bin/python3 check_caliper_manager.py BUILD_DIR CASE
  manager_c       the C program, config "none", N iterations: the file holds
                  main, main/init, main/mainloop once each,
                  main/mainloop/iteration#mainloop and its child scale N
                  times each, nothing UNBALANCED; no report printed
  manager_cxx     the same for the C++ program (no -P; the loop through
                  CALI_CXX_MARK_LOOP_*, the child nap); -h lists the
                  runtime-report config with its documentation
  runtime_report  runtime-report prints perfmark's text report of the run's
                  file once, after the file is written, identical to
                  `perfmark report F` run afterwards, on stderr by default
                  (C: the default config; C++: -P runtime-report), on stdout
                  with output=stdout, into a file with output=FILE; a report
                  that fails (output not writable) and a run without
                  perfmark each say in one line that there is no report
  runtime_report_mpi  caliper_manager_mpi under mpirun -np 2, both ways
                  round (perfmark run -- mpirun, mpirun -- perfmark run):
                  the job's one file holds both ranks' loops, and the
                  report of that file is printed once (by rank 0), after it
                  is written; exit 0
  config_none     "none" and "" print no report and set no error, in both
  config_unknown  an unknown config or option: error() and error_msg() in
                  Caliper's words, no report, the regions still measured;
                  an unknown key beside runtime-report still reports, as in
                  Caliper
  manager_calls   caliper_manager_calls MODE: never flushed or never started:
                  no report; two managers flushed twice each: one report;
                  output from set_default_parameter (stdout) and from
                  set_default_parameter_for_config (a file); no error: NULL
                  message of length 0. caliper_manager_calls_cxx: the
                  constructor with a config, a copy started and flushed
                  prints the original's report once, add()'s result, the
                  config descriptions
  loops           caliper_loops N M T: a loop nested in another's
                  iterations, a loop with no iteration, on T threads: every
                  loop region once per thread, iterations N and N*M per
                  thread, nothing UNBALANCED
  loops_omp       caliper_loops_omp N on 2 OpenMP threads: the loop region
                  once, the iteration#mainloop regions of both threads N
                  visits together (each thread's on its own path), body N
  loops_cxx       caliper_loops_cxx N: a C++ loop left by break without
                  LOOP_END is closed by its scope (4 iterations counted, 3
                  steps), a loop ended explicitly is closed once
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "package"))
import h5py  # noqa: E402
from pmcheck import SKIP, check, expect_regions, main, needed, run, text  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
PERFMARK = os.path.join(BUILD, "bin", "perfmark")
PROGS = os.path.join(BUILD, "tests", "shims")
C = os.path.join(PROGS, "caliper_manager_c")
CXX = os.path.join(PROGS, "caliper_manager_cxx")
HEADER = "perfmark report: "  # the first line of every text report


def user_regions(path):
    with h5py.File(path, "r") as f:
        paths = [text(x) for x in f["regions"]["path"]]
        kinds = [text(x) for x in f["regions"]["kind"]]
        visits = f["region/visits"][:]
        flags = f["region/flags"][:]
    return {p: (visits[:, r], flags[:, r]) for r, p in enumerate(paths) if kinds[r] == "user"}


def under_perfmark(tmp, args, name="out.h5"):
    """Run args under perfmark run -e sw -o TMP/name (exit 0 required)."""
    out = os.path.join(tmp, name)
    p = run([PERFMARK, "run", "-e", "sw", "-o", out, "--"] + args, env={"TMPDIR": tmp}, cwd=tmp)
    check(os.path.exists(out), "no file %s; stderr: %s" % (out, p.stderr[-2000:]))
    return out, p


def truth(n, leaf):
    it = "main/mainloop/iteration#mainloop"
    return {"main": 1, "main/init": 1, "main/mainloop": 1, it: n, it + "/" + leaf: n}


def no_report(p, what):
    check(HEADER not in p.stdout and HEADER not in p.stderr,
          "%s: a report was printed\nstdout %r\nstderr %r" % (what, p.stdout[-800:], p.stderr[-800:]))
    check("Caliper config error" not in p.stderr, "%s: a config error: %r" % (what, p.stderr))


def linked(prog):
    libs = needed(prog)
    check("libperfmark-caliper.so.0" in libs, "%s does not link the shim: %s" % (prog, libs))
    check(not any(l.startswith("libcaliper") for l in libs), "%s links Caliper: %s" % (prog, libs))


def case_manager(prog, args, leaf):
    # each case is registered only where its program is built
    check(os.path.exists(prog), "%s not built" % prog)
    linked(prog)
    n = 7
    with tempfile.TemporaryDirectory() as tmp:
        out, p = under_perfmark(tmp, [prog] + args + [str(n)])
        expect_regions(user_regions(out), truth(n, leaf))
        check("%d iterations" % n in p.stdout, "program output %r" % p.stdout)
        no_report(p, " ".join(args))


def case_manager_c():
    return case_manager(C, ["none"], "scale")


def case_manager_cxx():
    rc = case_manager(CXX, [], "nap")
    if rc:
        return rc
    h = run([CXX, "-h"])
    check("runtime-report\n Print perfmark's text report" in h.stderr and " output\n" in h.stderr,
          "-h does not document runtime-report: %r" % h.stderr)
    print("help lists runtime-report and its options")


def report_of(out):
    return run([PERFMARK, "report", out]).stdout


def case_runtime_report():
    n = 5
    progs = [(C, [], 4, "scale", "stderr (C, no argument: its default config)"),
             (C, ["runtime-report", str(n)], n, "scale", "stderr (C)")]
    if os.path.exists(CXX):
        progs.append((CXX, ["-P", "runtime-report", str(n)], n, "nap", "stderr (C++)"))
    with tempfile.TemporaryDirectory() as tmp:
        for i, (prog, args, iters, leaf, what) in enumerate(progs):
            out, p = under_perfmark(tmp, [prog] + args, "r%d.h5" % i)
            expect_regions(user_regions(out), truth(iters, leaf))
            want = report_of(out)
            check(p.stderr.count(HEADER) == 1, "%s: %d reports on stderr: %r"
                  % (what, p.stderr.count(HEADER), p.stderr[-1500:]))
            wrote = p.stderr.index("perfmark: wrote %s" % out)
            at = p.stderr.index(HEADER + out)
            check(wrote < at, "%s: the report came before the file was written" % what)
            check(p.stderr[at:].startswith(want), "%s: printed report differs from `perfmark "
                  "report %s`:\n%s\n---\n%s" % (what, out, p.stderr[at:at + 1500], want[:1500]))
            check(HEADER not in p.stdout, "%s: report on stdout too" % what)
            check("iteration#mainloop" in want and "Caliper config error" not in p.stderr,
                  "%s: %r" % (what, p.stderr[-1500:]))
            print("%s: the report of %s, once, after the file" % (what, out))
        # output=stdout: the report after the program's own output, not on stderr
        prog = CXX if os.path.exists(CXX) else C
        cfg = "runtime-report(output=stdout)"
        args = ["-P", cfg] if prog == CXX else [cfg]
        out, p = under_perfmark(tmp, [prog] + args + [str(n)], "s.h5")
        want = report_of(out)
        check(p.stdout.count(HEADER) == 1 and HEADER not in p.stderr,
              "output=stdout: stdout %r stderr %r" % (p.stdout[-800:], p.stderr[-800:]))
        check(p.stdout.index("%d iterations" % n) < p.stdout.index(HEADER),
              "output=stdout: the report before the program's output: %r" % p.stdout[:400])
        check(p.stdout[p.stdout.index(HEADER):] == want, "output=stdout: differs from perfmark "
              "report")
        print("output=stdout: on stdout, after the program's output")
        # output=FILE (relative: the working directory at flush)
        cfg = "runtime-report(output=rr.txt)"
        out, p = under_perfmark(tmp, [C, cfg, str(n)], "f.h5")
        rr = os.path.join(tmp, "rr.txt")
        check(os.path.exists(rr), "output=rr.txt: no file; stderr %r" % p.stderr[-800:])
        with open(rr) as f:
            check(f.read() == report_of(out), "output=rr.txt: differs from perfmark report")
        no_report(p, cfg)
        print("output=rr.txt: the report in the file only")
        # the report itself fails (its output cannot be written): one line, exit 0
        cfg = "runtime-report(output=%s/no-such-dir/rr.txt)" % tmp
        out, p = under_perfmark(tmp, [C, cfg, str(n)], "g.h5")
        lines = [l for l in p.stderr.splitlines() if "runtime-report" in l]
        check(len(lines) == 1 and "exited with status" in lines[0] and out in lines[0],
              "a failing report: %r" % p.stderr[-800:])
        print("failing report: %s" % lines[0])
        # not measured: one line, the program goes on
        p = run([C, "runtime-report", str(n)], cwd=tmp)
        lines = [l for l in p.stderr.splitlines() if "runtime-report" in l]
        check(len(lines) == 1 and "not measured by perfmark" in lines[0] and HEADER not in p.stderr
              and "%d iterations" % n in p.stdout, "unmeasured run: %r %r" % (p.stdout, p.stderr))
        print("unmeasured: %s" % lines[0])


MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_mpi_yield_when_idle": "1"}
MPIRUN = ["mpirun", "--oversubscribe", "--bind-to", "none", "-np", "2"]


def case_runtime_report_mpi():
    prog = [os.path.join(PROGS, "caliper_manager_mpi"), "runtime-report", "6"]
    n, it = 6, "main/mainloop/iteration#mainloop"
    with tempfile.TemporaryDirectory() as tmp:
        for i, how in enumerate(["outside", "inside"]):
            out = os.path.join(tmp, "job%d.h5" % i)
            pm = [PERFMARK, "run", "-e", "sw", "-o", out, "--"]
            args = pm + MPIRUN + prog if how == "outside" else MPIRUN + pm + prog
            p = run(args, env=dict(MPI_ENV, TMPDIR=tmp), cwd=tmp)
            check(os.path.exists(out), "%s: no job file: %r" % (how, p.stderr[-1500:]))
            regions = user_regions(out)
            expect_regions(regions, {"main": 2, "main/mainloop": 2, it: 2 * n,
                                     it + "/exchange": 2 * n}, per_thread={it: n})
            check(p.stderr.count(HEADER) == 1, "%s: %d reports: %r"
                  % (how, p.stderr.count(HEADER), p.stderr[-2000:]))
            at = p.stderr.index(HEADER + out)
            check(p.stderr.index("perfmark: wrote %s" % out) < at, "%s: report before the file"
                  % how)
            want = report_of(out)
            check(p.stderr[at:at + len(want)] == want, "%s: printed report differs from perfmark "
                  "report:\n%s\n---\n%s" % (how, p.stderr[at:at + 1200], want[:1200]))
            print("%s: one report of the 2-rank job file, from rank 0" % how)


def case_config_none():
    runs = [(C, ["none"]), (C, [""])]
    if os.path.exists(CXX):
        runs += [(CXX, []), (CXX, ["-P", "none"]), (CXX, ["-P", ""])]
    with tempfile.TemporaryDirectory() as tmp:
        for i, (prog, args) in enumerate(runs):
            out, p = under_perfmark(tmp, [prog] + args + ["3"], "n%d.h5" % i)
            no_report(p, "%s %s" % (os.path.basename(prog), args))
            expect_regions(user_regions(out), truth(3, "scale" if prog == C else "nap"))
            check(not any("runtime-report" in l for l in p.stderr.splitlines()),
                  "a runtime-report message: %r" % p.stderr)
        print("none / \"\": no report, no error, in %d runs" % len(runs))


def case_config_unknown():
    runs = [(C, "bogus", "Unknown config or parameter: bogus", False),
            (C, "runtime-report(bogus=1)", "Unknown option: bogus", False),
            (C, "runtime-report(output=stdout", "Expected ')'", False),
            (C, "output=", 'Expected value after "output="', False),
            # Caliper's own rule: the first unknown key in sorted order is named,
            # and the known config beside it is still added
            (C, "zz,runtime-report,aa=1", "Unknown config or parameter: aa", True)]
    if os.path.exists(CXX):
        runs += [(CXX, "event-trace", "Unknown config or parameter: event-trace", False),
                 (CXX, "runtime-report(calc.inclusive)", "Unknown option: calc.inclusive",
                  False)]
    with tempfile.TemporaryDirectory() as tmp:
        for i, (prog, cfg, msg, reports) in enumerate(runs):
            args = ["-P", cfg] if prog == CXX else [cfg]
            out, p = under_perfmark(tmp, [prog] + args + ["3"], "u%d.h5" % i)
            said = [l for l in p.stderr.splitlines() if l.startswith("Caliper config error")]
            check(said == ["Caliper config error: " + msg], "%s: error lines %r, want %r"
                  % (cfg, said, msg))
            check((p.stderr.count(HEADER) == 1) == reports, "%s: report %s expected: %r"
                  % (cfg, "" if reports else "not", p.stderr[-800:]))
            expect_regions(user_regions(out), truth(3, "scale" if prog == C else "nap"))
            print("%r -> %s%s" % (cfg, msg, " (and the report)" if reports else ""))


def case_manager_calls():
    prog = os.path.join(PROGS, "caliper_manager_calls")
    with tempfile.TemporaryDirectory() as tmp:
        for i, mode in enumerate(["noflush", "nostart"]):
            out, p = under_perfmark(tmp, [prog, mode], "c%d.h5" % i)
            no_report(p, mode)
            expect_regions(user_regions(out), {"work": 1})
        out, p = under_perfmark(tmp, [prog, "twice"], "t.h5")
        check(p.stderr.count(HEADER) == 1 and HEADER not in p.stdout,
              "twice: %d reports" % p.stderr.count(HEADER))
        out, p = under_perfmark(tmp, [prog, "default"], "d.h5")
        check(p.stdout.count(HEADER) == 1 and HEADER not in p.stderr,
              "default output=stdout: %r" % p.stderr[-600:])
        rr = os.path.join(tmp, "for.txt")
        out, p = under_perfmark(tmp, [prog, "forconfig", rr], "f.h5")
        check(os.path.exists(rr) and open(rr).read() == report_of(out),
              "forconfig: no report in %s: %r" % (rr, p.stderr[-600:]))
        no_report(p, "forconfig")
        out, p = under_perfmark(tmp, [prog, "noerror"], "e.h5")
        check("noerror ok" in p.stdout, "noerror: %r" % p.stdout)
        print("noflush, nostart: none; twice: one; default stdout; for-config file; no error")
        cxx = os.path.join(PROGS, "caliper_manager_calls_cxx")
        if os.path.exists(cxx):
            out, p = under_perfmark(tmp, [cxx], "x.h5")
            check(p.stdout.count(HEADER) == 1 and "add ok" in p.stdout and
                  "description ok" in p.stdout, "C++ calls: %r" % p.stdout[:600])
            expect_regions(user_regions(out), {"work": 1})
            print("C++: constructor with config, shared copies, add(), descriptions")


def case_loops():
    n, m, t = 5, 3, 3
    outer = "outer/iteration#outer"
    inner = outer + "/inner/iteration#inner"
    want = {"outer": 1, outer: n, outer + "/inner": n, inner: n * m, inner + "/body": n * m,
            "empty": 1}
    with tempfile.TemporaryDirectory() as tmp:
        out, p = under_perfmark(tmp, [os.path.join(PROGS, "caliper_loops"), str(n), str(m), str(t)])
        regions = user_regions(out)
        expect_regions(regions, {k: v * t for k, v in want.items()}, per_thread=want)
        check(sum(1 for x in regions["outer"][0] if x > 0) == t, "outer not on %d threads" % t)
        check("Caliper" not in p.stderr, "a shim message: %r" % p.stderr)


def case_loops_omp():
    prog = os.path.join(PROGS, "caliper_loops_omp")
    if not os.path.exists(prog):
        print("SKIP: %s not built (no OpenMP)" % prog)
        return SKIP
    n = 200
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.h5")
        p = run([PERFMARK, "run", "-e", "sw", "-o", out, "--", prog, str(n)],
                env={"TMPDIR": tmp, "OMP_NUM_THREADS": "2"}, cwd=tmp)
        check("on 2 threads" in p.stdout, "program output %r" % p.stdout)
        regions = user_regions(out)

        def total(suffix):
            return sum(int(v.sum()) for path, (v, _) in regions.items()
                       if path == suffix or path.endswith("/" + suffix))
        iters = [p_ for p_ in regions if p_.endswith("iteration#mainloop")]
        check(int(regions["mainloop"][0].sum()) == 1, "mainloop %s" % regions["mainloop"][0])
        check(total("iteration#mainloop") == n and total("iteration#mainloop/body") == n,
              "iterations %d, bodies %d, want %d: %s" % (total("iteration#mainloop"),
                                                       total("iteration#mainloop/body"), n,
                                                       sorted(regions)))
        rows = sum(1 for p_ in iters for x in regions[p_][0] if x > 0)
        check(rows == 2, "iterations on %d thread rows, want 2: %s" % (rows, iters))
        check(not any((fl & 0x10).any() for _, fl in regions.values()), "UNBALANCED")
        print("OpenMP: %d iterations over %s" % (n, iters))


def case_loops_cxx():
    prog = os.path.join(PROGS, "caliper_loops_cxx")
    if not os.path.exists(prog):
        print("SKIP: %s not built" % prog)
        return SKIP
    n = 6
    with tempfile.TemporaryDirectory() as tmp:
        out, p = under_perfmark(tmp, [prog, str(n)])
        expect_regions(user_regions(out), {
            "search": 1, "search/iteration#search": 4, "search/iteration#search/step": 3,
            "again": 1, "again/iteration#again": n})
        check("Caliper" not in p.stderr and "UNBALANCED" not in p.stderr,
              "a message: %r" % p.stderr)


if __name__ == "__main__":
    sys.exit(main({"manager_c": case_manager_c, "manager_cxx": case_manager_cxx,
                   "runtime_report": case_runtime_report,
                   "runtime_report_mpi": case_runtime_report_mpi, "config_none": case_config_none,
                   "config_unknown": case_config_unknown, "loops": case_loops,
                   "manager_calls": case_manager_calls, "loops_omp": case_loops_omp,
                   "loops_cxx": case_loops_cxx}))
