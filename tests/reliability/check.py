#!/usr/bin/python3
"""Reliability (issue 8): faults, hostile inputs, security, on the real
kernel. Each case asserts the data that must survive (page faults == pages
touched, by construction of tests/progs/faults.c and mpi_faults.c), the flags
and attributes that must be set, and what `perfmark report` says.

usage: /usr/bin/python3 check.py BUILD_DIR CASE   (exit 0 pass, 77 skip)
The table of cases and outcomes is docs/reliability.md.
"""
import ctypes
import glob
import json
import os
import pwd
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import e2e  # noqa: E402  (BUILD from argv[1], helpers, Measured)
from e2e import (Failure, Measured, MPI_ENV, MPIRUN, PERFMARK, SKIP, check,  # noqa: E402
                 perfmark_lines, perfmark_run, prog, run)

FAULTS = prog("faults")


def env_for(out, **extra):
    """The environment for a program linked with libperfmark, measured
    directly (no `perfmark run`), with no PERFMARK_* from outside."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PERFMARK_")}
    env.update(PERFMARK_ENABLE="1", PERFMARK_EVENTS="sw", PERFMARK_OUTPUT=out)
    env.update(extra)
    return env


def start(args, env, cwd=None, stdin=None):
    p = subprocess.Popen(args, env=env, cwd=cwd, stdin=stdin, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, errors="replace")
    line = p.stdout.readline()
    if not line.startswith("ready"):
        p.kill()
        raise Failure("program did not start: %r %r" % (line, p.stderr.read()))
    return p, int(line.split()[1])


def touch_exact(m, t, path, pages):
    pf = m.count(t, path, "page-faults")
    check(pages <= pf <= pages + 8, "%s: %d page-faults for %d pages touched" % (path, pf, pages))


def report_text(path):
    return run([PERFMARK, "report", path]).stdout


def check_partial_file(out, open_region="waiting", pages=500, sig=None):
    """The emergency file: exact data before the signal, PARTIAL everywhere,
    the open region UNBALANCED, and the report saying so."""
    check(os.path.exists(out), "no file %s (have %s)" % (out, os.listdir(os.path.dirname(out))))
    m = Measured(out)
    touch_exact(m, 0, "touch%d" % pages, pages)
    check("PARTIAL" in m.flag_names(0, "touch%d" % pages), "completed region not PARTIAL")
    check(int(m.f.attrs["partial"]) == 1, "root attribute partial not set")
    check("UNBALANCED" in m.flag_names(0, open_region), "open region %s not UNBALANCED"
          % open_region)
    # the open region keeps its counts up to the signal: the 200 pages of
    # the completed touch200 inside it, and one visit
    check({"PARTIAL", "UNBALANCED"} <= m.flag_names(0, open_region), "open region flags %s"
          % m.flag_names(0, open_region))
    check(int(m.visits[0, m.region(open_region)]) == 1, "open region's visit not kept")
    pf = m.count(0, open_region, "page-faults")
    check(200 <= pf <= 216, "open region %s: %d page faults, want the 200 before the signal"
          % (open_region, pf))
    check(int(m.wall[0, m.region(open_region)]) >= int(m.wall[0, m.region(open_region + "/touch200")]),
          "open region's time not kept")
    if sig:
        check(any("signal %d" % sig in x for x in m.messages), "no message naming signal %d: %r"
              % (sig, m.messages))
    rep = report_text(out)
    check("PARTIAL" in rep and "UNBALANCED" in rep, "report does not show the flags:\n" + rep[:1500])
    check(not glob.glob(out + ".tmp-*"), "temporary file left behind")
    return m, rep


# ---- signals, single process ------------------------------------------------------

def signalled(mode, sig, want_rc, want_stdout=None):
    tmp = tempfile.mkdtemp()
    out = os.path.join(tmp, "out.h5")
    p, _ = start([FAULTS, mode], env_for(out))
    time.sleep(0.2)
    p.send_signal(sig)
    stdout, stderr = p.communicate(timeout=60)
    check(p.returncode == want_rc, "exit status %d, want %d\n%s" % (p.returncode, want_rc, stderr))
    if want_stdout:
        check(want_stdout in stdout, "program output %r lacks %r" % (stdout, want_stdout))
    return tmp, out, stderr


def case_sigterm_own_sigaction():
    """The program installs its own SIGTERM handler with sigaction() after
    perfmark started: perfmark still dumps, then the program's handler runs
    (it exits 42)."""
    _, out, _ = signalled("own_sigaction", signal.SIGTERM, 42, "own handler ran")
    check_partial_file(out, sig=signal.SIGTERM)


def case_sigterm_own_signal():
    """The same with signal() (glibc's signal() bypasses sigaction's PLT)."""
    _, out, _ = signalled("own_signal", signal.SIGTERM, 42, "own handler ran")
    check_partial_file(out, sig=signal.SIGTERM)


def case_sigterm_ignored():
    """SIG_IGN set by the program after start: SIGTERM does nothing, no
    dump; the file is written normally at exit, not PARTIAL."""
    _, out, stderr = signalled("ignore", signal.SIGTERM, 3, "faults ignore done")
    m = Measured(out)
    check(int(m.f.attrs["partial"]) == 0, "file flagged partial for an ignored signal")
    touch_exact(m, 0, "touch500", 500)
    check("PARTIAL" not in m.flag_names(0, "touch500"), "PARTIAL set")
    check(not any("stopped the program" in l for l in perfmark_lines(stderr)), "dump message")


def case_sigint_single():
    _, out, _ = signalled("wait", signal.SIGINT, -signal.SIGINT)
    check_partial_file(out, sig=signal.SIGINT)


# ---- crashes --------------------------------------------------------------------

def crash(mode, sig):
    """A crash inside a region: the status is the crash's, as without
    perfmark; the data before it is saved, PARTIAL."""
    tmp = tempfile.mkdtemp()
    out = os.path.join(tmp, "out.h5")
    plain = run([FAULTS, mode], env={"PERFMARK_ENABLE": "0"}, cwd=tmp, expect=None)
    check(plain.returncode == -sig, "without perfmark: status %d, want %d" % (plain.returncode, -sig))
    p = run([FAULTS, mode], env=env_for(out), cwd=tmp, expect=None)
    check(p.returncode == -sig, "with perfmark: status %d, want death by signal %d\n%s"
          % (p.returncode, sig, p.stderr))
    m, rep = check_partial_file(out, open_region="crashing", sig=sig)
    check("partial" in rep.lower() or "PARTIAL" in rep, "report: %s" % rep[:800])
    print("status %d with and without perfmark; %s saved" % (p.returncode, out))


def case_crash_segv():
    crash("segv", signal.SIGSEGV)


def case_crash_abort():
    crash("abort", signal.SIGABRT)


def case_crash_fpe():
    crash("fpe", signal.SIGFPE)


# ---- exit, exec, helpers, threads ------------------------------------------------

def case_exit_from_thread():
    """exit(5) from a worker inside a region while main is inside another:
    status 5, the file written at exit, both open regions UNBALANCED, the
    worker's completed region exact."""
    tmp = tempfile.mkdtemp()
    p, out = perfmark_run(tmp, [FAULTS, "exit_thread"], expect=5)
    m = Measured(out)
    check(int(m.f.attrs["partial"]) == 0, "partial set by a normal exit")
    w = m.rows_visiting("touch300")
    check(len(w) == 1, "worker row missing")
    touch_exact(m, w[0], "touch300", 300)
    check("UNBALANCED" in m.flag_names(w[0], "worker_open"), "worker_open not UNBALANCED")
    # the main thread was still running: its open visit cannot be closed
    # from outside, but it is counted up to the exit and flagged
    main = [t for t in range(len(m.threads)) if t not in w][0]
    check({"UNBALANCED", "PARTIAL"} <= m.flag_names(main, "main_open"),
          "main_open flags %s" % m.flag_names(main, "main_open"))
    check(int(m.visits[main, m.region("main_open")]) == 1, "main_open's open visit not kept")
    check(int(m.wall[main, m.region("main_open")]) > 0, "main_open's time not kept")
    check(int(m.visits[w[0], m.region("worker_open")]) == 1, "worker_open visit dropped")


def case_exec_inside():
    """exec() inside a region: failed execs return what they would without
    perfmark and measurement goes on; the successful exec writes the old
    image's file first; the new image writes its own."""
    tmp = tempfile.mkdtemp()
    p, out = perfmark_run(tmp, [FAULTS, "exec"], expect=3)
    check("execvp missing: rc -1 errno No such file or directory" in p.stdout, p.stdout)
    check("execl noexec: rc -1 errno Permission denied" in p.stdout, p.stdout)
    check("faults after_exec done" in p.stdout, "the exec'd image did not run: %r" % p.stdout)
    old = Measured(out)
    touch_exact(old, 0, "touch400", 400)
    touch_exact(old, 0, "exec_region/touch100", 100)
    check("UNBALANCED" in old.flag_names(0, "exec_region"), "exec_region not UNBALANCED")
    check(any("exec of" in x for x in old.messages), "no exec message in %r" % old.messages)
    new = Measured(os.path.join(tmp, "out.1.h5"))
    touch_exact(new, 0, "touch700", 700)
    check("touch400" not in new.paths, "the new image repeats the old one's data")
    check(not glob.glob(os.path.join(tmp, "*.tmp-*")), "temporary file left behind")
    check("exec_region" in report_text(out), "report")


def case_helpers_not_measured():
    """system() and fork+exec of helpers inside a region: one file, the
    parent's data exact, the helpers not measured."""
    tmp = tempfile.mkdtemp()
    p, out = perfmark_run(tmp, [FAULTS, "helpers"], expect=3)
    check("system 0 fork+exec 0" in p.stdout, "helpers failed: %r" % p.stdout)
    files = sorted(f for f in os.listdir(tmp) if f.endswith(".h5"))
    check(files == ["out.h5"], "files %s: a helper was measured" % files)
    m = Measured(out)
    touch_exact(m, 0, "touch200", 200)
    touch_exact(m, 0, "touch250", 250)
    check(int(m.visits[0, m.region("with_helpers")]) == 1, "with_helpers visits")
    check(m.flag_names(0, "with_helpers") <= {"MIGRATED"}, "with_helpers flags %s"
          % m.flag_names(0, "with_helpers"))


def case_threads_10k():
    """10,000 short-lived threads: every visit kept (one row per thread),
    memory and time bounded; figures printed against a run without perfmark."""
    n = 10000
    tmp = tempfile.mkdtemp()
    t0 = time.time()
    base = run([FAULTS, "threads", str(n)], env={"PERFMARK_ENABLE": "0"}, cwd=tmp, expect=3)
    t1 = time.time()
    p, out = perfmark_run(tmp, [FAULTS, "threads", str(n)], expect=3)
    t2 = time.time()
    rss = lambda q: int(q.stdout.split("maxrss_kb")[1].split()[0])
    m = Measured(out)
    rows = m.rows_visiting("short")
    check(len(rows) == n, "%d thread rows visited 'short', want %d" % (len(rows), n))
    check(int(m.visits[:, m.region("short")].sum()) == n, "visits lost")
    check(all(int(x) == 1 for x in m.threads["exited"][rows]), "exited threads not marked")
    size = os.path.getsize(out)
    print("10k threads: max RSS %d KiB with perfmark vs %d KiB without (+%.1f KiB/thread); "
          "%.2f s vs %.2f s; file %.1f MiB"
          % (rss(p), rss(base), (rss(p) - rss(base)) / n, t2 - t1, t1 - t0, size / 2**20))
    # bounded: a fixed cost per thread, not growing with anything else
    check(rss(p) - rss(base) < 64 * n, "more than 64 KiB per exited thread")


def case_output_dir_removed():
    """The output directory vanishes during the run: the file goes to
    $TMPDIR under the same name, with one message naming both places."""
    tmp = tempfile.mkdtemp()
    outdir = os.path.join(tmp, "results")
    fallback = os.path.join(tmp, "fallback")
    os.mkdir(outdir)
    os.mkdir(fallback)
    out = os.path.join(outdir, "out.h5")
    p, _ = start([FAULTS, "wait_stdin"], env_for(out, TMPDIR=fallback), stdin=subprocess.PIPE)
    shutil.rmtree(outdir)
    stdout, stderr = p.communicate("go\n", timeout=60)
    check(p.returncode == 3, "status %d" % p.returncode)
    msgs = [l for l in perfmark_lines(stderr) if "instead" in l]
    where = os.path.join(fallback, "out.h5")
    check(len(msgs) == 1 and where in msgs[0] and out in msgs[0],
          "want one message naming %s and %s: %r" % (out, where, perfmark_lines(stderr)))
    m = Measured(where)
    touch_exact(m, 0, "touch500", 500)
    touch_exact(m, 0, "touch600", 600)
    check(not os.path.exists(outdir), "the removed directory was recreated")
    # -o DIR (a directory for the default name): the file must not take
    # the removed directory's name
    os.mkdir(outdir)
    p, _ = start([FAULTS, "wait_stdin"], env_for(outdir, TMPDIR=fallback), stdin=subprocess.PIPE)
    shutil.rmtree(outdir)
    stdout, stderr = p.communicate("go\n", timeout=60)
    check(p.returncode == 3, "status %d" % p.returncode)
    check(not os.path.exists(outdir), "a file took the removed directory's name")
    got = glob.glob(os.path.join(fallback, "perfmark-*.h5"))
    check(len(got) == 1, "default-named file not in the fallback: %s" % os.listdir(fallback))
    touch_exact(Measured(got[0]), 0, "touch600", 600)


# ---- MPI jobs ------------------------------------------------------------------------

def mpi_wait_job(np_, pages=200, mpich=False):
    tmp = tempfile.mkdtemp()
    out = os.path.join(tmp, "out.h5")
    env = dict({k: v for k, v in os.environ.items() if not k.startswith("PERFMARK_")}, **MPI_ENV)
    launch = (["mpiexec.mpich", "-n", str(np_), prog("mpi_faults_mpich")] if mpich else
              MPIRUN + ["-np", str(np_), prog("mpi_faults")])
    p = subprocess.Popen([PERFMARK, "run", "-e", "sw", "-o", out, "--"] + launch +
                         [str(pages), "wait"],
                         env=env, cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, errors="replace")
    pids = {}
    while len(pids) < np_:
        line = p.stdout.readline()
        if not line:
            raise Failure("job ended before every rank was ready: %s" % p.stderr.read()[-2000:])
        if line.startswith("ready"):
            _, r, pid = line.split()
            pids[int(r)] = int(pid)
    time.sleep(0.3)
    return tmp, p, pids


def mpi_survivors(tmp, np_, pages, open_region="waiting", lost=()):
    """Every rank not in `lost` wrote out.rankR.h5: its "touch" exact,
    PARTIAL, the open region UNBALANCED; the report says PARTIAL."""
    for r in range(np_):
        path = os.path.join(tmp, "out.rank%d.h5" % r)
        if r in lost:
            continue
        check(os.path.exists(path), "rank %d's data was lost (%s)" % (r, sorted(os.listdir(tmp))))
        m = Measured(path)
        t = m.rows_visiting("touch")[0]
        touch_exact(m, t, "touch", pages * (r + 1))
        check("PARTIAL" in m.flag_names(t, "touch") and int(m.f.attrs["partial"]) == 1,
              "rank %d not PARTIAL" % r)
        if open_region:
            rows = m.rows_visiting(open_region) or [t]
            check("UNBALANCED" in m.flag_names(rows[0], open_region),
                  "rank %d: %s flags %s" % (r, open_region, m.flag_names(rows[0], open_region)))
    check(not glob.glob(os.path.join(tmp, "*.tmp-*")), "temporary file left behind")
    some = sorted(glob.glob(os.path.join(tmp, "out.rank*.h5")))[0]
    rep = report_text(some)
    check("PARTIAL" in rep, "report of %s does not say PARTIAL" % some)


def mpi_signal_job(sig, to_rank=None, np_=3, mpich=False, lost=()):
    tmp, p, pids = mpi_wait_job(np_, mpich=mpich)
    if to_rank is None:
        p.send_signal(sig)  # `perfmark run` exec'd mpirun: this is mpirun
    else:
        os.kill(pids[to_rank], sig)
    try:
        p.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        p.kill()
        raise Failure("the job did not end")
    # Hydra's own status after SIGTERM is 15 or 0 from run to run, with or
    # without perfmark (10 runs of mpi_faults_mpich alone: 0 in 3): only
    # Open MPI's is a fact to hold perfmark to.
    check(mpich or p.returncode != 0, "job status 0 after a signal")
    mpi_survivors(tmp, np_, 200, lost=lost)
    first = min(r for r in range(np_) if r not in lost)
    msgs = Measured(os.path.join(tmp, "out.rank%d.h5" % first)).messages
    print("job status %d; %d per-rank files, all PARTIAL; rank %d: %s" % (
        p.returncode, np_ - len(lost), first, [x for x in msgs if "signal" in x][:1]))


def case_mpi_sigterm_job():
    mpi_signal_job(signal.SIGTERM)


def case_mpi_sigint_job():
    mpi_signal_job(signal.SIGINT)


def case_mpi_sigterm_one_rank():
    mpi_signal_job(signal.SIGTERM, to_rank=1)


def case_mpich_sigterm_job():
    """The same on MPICH: SIGTERM to mpiexec.mpich (Hydra), which passes it to
    every rank: each writes its PARTIAL file. Hydra SIGKILLs every rank still
    running once one has ended by a signal: a rank lingers after its dump
    (pm_emergency.h), so that none is cut short (without it: 1 run in 4)."""
    if not shutil.which("mpiexec.mpich") or not prog("mpi_faults_mpich"):
        print("SKIP: MPICH not installed (mpich, libmpich-dev)")
        return SKIP
    mpi_signal_job(signal.SIGTERM, mpich=True)


def case_mpich_sigterm_one_rank():
    """SIGTERM to rank 1 of an MPICH job: it writes its PARTIAL file. Hydra then
    ends the others with SIGKILL (its own rule), which nothing can outlive:
    their data is lost, as the guide says."""
    if not shutil.which("mpiexec.mpich") or not prog("mpi_faults_mpich"):
        print("SKIP: MPICH not installed (mpich, libmpich-dev)")
        return SKIP
    mpi_signal_job(signal.SIGTERM, to_rank=1, mpich=True, lost=(0, 2))


def case_mpi_segv_one_rank(env=None):
    """Rank 1 crashes (SIGSEGV) inside a region while ranks 0 and 2 wait in
    MPI_Allreduce: all three write their files, PARTIAL (rank 1 from its
    crash handler, the others when Open MPI SIGTERMs them)."""
    tmp = tempfile.mkdtemp()
    out = os.path.join(tmp, "out.h5")
    p = run([PERFMARK, "run", "-e", "sw", "-o", out, "--"] + MPIRUN +
            ["-np", "3", prog("mpi_faults"), "200", "segv"], env=dict(MPI_ENV, **(env or {})),
            cwd=tmp, expect=None)
    check(p.returncode != 0, "job status 0 after a crash")
    mpi_survivors(tmp, 3, 200, open_region=None)
    m = Measured(os.path.join(tmp, "out.rank1.h5"))
    check("UNBALANCED" in m.flag_names(0, "crashing"), "rank 1: crashing not UNBALANCED")
    check(any("signal 11" in x for x in m.messages), "rank 1: no SIGSEGV message")


def case_mpi_segv_one_rank_summary():
    """The same in a summary job (PERFMARK_DETAIL=summary): the job never
    reaches its collective write, and every rank's own data is still there."""
    case_mpi_segv_one_rank({"PERFMARK_DETAIL": "summary"})


# ---- hostile environment and paths ------------------------------------------------------

def case_env_garbage():
    """Garbage, huge numbers, format strings, very long values, '..' paths:
    one message each, the program runs as without perfmark, data exact."""
    tmp = tempfile.mkdtemp()
    os.mkdir(os.path.join(tmp, "a"))
    out = os.path.join(tmp, "a", "..", "out.h5")  # a path with '..' is used as given
    env = env_for(out, PERFMARK_EVENTS="%n%s%x%n,task-clock,page-faults",
                  PERFMARK_BIND_CPU="99999999999999999999999", PERFMARK_PINNED="%s%s%s",
                  PERFMARK_PIN="../../etc/passwd", PERFMARK_QUIET="maybe%n",
                  PERFMARK_PID="-12", PERFMARK_MAX_REGIONS="1e99")
    p = subprocess.run([FAULTS, "wait_stdin"], env=env, cwd=tmp, input="go\n", text=True,
                       capture_output=True, errors="replace", timeout=60)
    check(p.returncode == 3, "status %d: %s" % (p.returncode, p.stderr))
    lines = perfmark_lines(p.stderr)
    for var in ("PERFMARK_BIND_CPU", "PERFMARK_PINNED", "PERFMARK_PIN", "PERFMARK_QUIET"):
        check(sum((var + "='") in l for l in lines) == 1, "want one message about %s: %r" % (var, lines))
    check(any("%n%s%x%n" in l for l in lines), "the format string was not shown literally: %r"
          % lines)
    m = Measured(os.path.join(tmp, "out.h5"))
    check(m.attr("events_measured") == "task-clock,page-faults", m.attr("events_measured"))
    touch_exact(m, 0, "touch600", 600)
    # very long values: refused with a message, defaults used
    long_out = os.path.join(tmp, "x" * 5000 + ".h5")
    env = env_for(long_out, PERFMARK_EVENTS="page-faults," * 5000)
    p = subprocess.run([FAULTS, "wait_stdin"], env=env, cwd=tmp, input="go\n", text=True,
                       capture_output=True, errors="replace", timeout=60)
    check(p.returncode == 3, "status %d with long values" % p.returncode)
    lines = perfmark_lines(p.stderr)
    check(any("PERFMARK_OUTPUT is" in l and "long" in l for l in lines), "long output: %r" % lines)
    check(any("PERFMARK_EVENTS is" in l and "long" in l for l in lines), "long events: %r" % lines)
    files = glob.glob(os.path.join(tmp, "perfmark-*.h5"))
    check(len(files) == 1, "default-named file missing: %s" % os.listdir(tmp))
    touch_exact(Measured(files[0]), 0, "touch600", 600)
    for l in lines:
        print(l[:160])


def case_output_symlink():
    """A symlink at the output path is never followed to overwrite its
    target: the target keeps its bytes, the link stays, a numbered file is
    written; a dangling link does not create its target."""
    tmp = tempfile.mkdtemp()
    victim = os.path.join(tmp, "victim")
    with open(victim, "w") as f:
        f.write("precious")
    out = os.path.join(tmp, "out.h5")
    os.symlink(victim, out)
    p, _ = perfmark_run(tmp, [FAULTS, "helpers"], expect=3)
    check(open(victim).read() == "precious", "the symlink's target was overwritten")
    check(os.path.islink(out), "the symlink was replaced")
    check(any("never overwrites" in l for l in perfmark_lines(p.stderr)), "no message")
    touch_exact(Measured(os.path.join(tmp, "out.1.h5")), 0, "touch200", 200)
    dangling_target = os.path.join(tmp, "created_through_link")
    out2 = os.path.join(tmp, "out2.h5")
    os.symlink(dangling_target, out2)
    perfmark_run(tmp, [FAULTS, "helpers"], name="out2.h5", expect=3)
    check(not os.path.exists(dangling_target), "a file was created through a dangling symlink")
    check(os.path.exists(os.path.join(tmp, "out2.1.h5")), "no numbered file: %s" % os.listdir(tmp))


def case_tmp_symlink_planted():
    """Symlinks planted at the predictable names in a shared temporary
    directory (the fallback, and the NAME.tmp-PID written before link())
    are not followed."""
    tmp = tempfile.mkdtemp()
    shared = os.path.join(tmp, "shared")
    os.mkdir(shared)
    os.chmod(shared, 0o1777)
    victims = [os.path.join(tmp, "victim%d" % i) for i in range(2)]
    for v in victims:
        with open(v, "w") as f:
            f.write("precious")
    out = "/proc/perfmark-nonexistent/out.h5"  # unwritable: falls back to $TMPDIR
    p, pid = start([FAULTS, "wait_stdin"], env_for(out, TMPDIR=shared), stdin=subprocess.PIPE)
    os.symlink(victims[0], os.path.join(shared, "out.h5"))
    os.symlink(victims[1], os.path.join(shared, "out.h5.tmp-%d" % pid))
    stdout, stderr = p.communicate("go\n", timeout=60)
    check(p.returncode == 3, "status %d" % p.returncode)
    for v in victims:
        check(open(v).read() == "precious", "%s overwritten through a planted symlink" % v)
    check(os.path.islink(os.path.join(shared, "out.h5")), "planted link replaced")
    got = os.path.join(shared, "out.1.h5")
    check(os.path.exists(got) and not os.path.islink(got), "no numbered file: %s"
          % os.listdir(shared))
    touch_exact(Measured(got), 0, "touch600", 600)
    # the same for the .tmp-PID name in the requested directory itself
    d = os.path.join(tmp, "direct")
    os.mkdir(d)
    out = os.path.join(d, "out.h5")
    p, pid = start([FAULTS, "wait_stdin"], env_for(out), stdin=subprocess.PIPE)
    os.symlink(victims[0], out + ".tmp-%d" % pid)
    p.communicate("go\n", timeout=60)
    check(open(victims[0]).read() == "precious", "victim overwritten via NAME.tmp-PID")
    check(os.path.exists(out) and not os.path.islink(out), "file not written: %s" % os.listdir(d))


def case_umask_modes():
    """Files are created with the user's umask (0666 & ~umask)."""
    for mask, want in ((0o077, 0o600), (0o022, 0o644), (0o002, 0o664)):
        tmp = tempfile.mkdtemp()
        out = os.path.join(tmp, "out.h5")
        subprocess.run([FAULTS, "helpers"], env=env_for(out), cwd=tmp, capture_output=True,
                       preexec_fn=lambda m=mask: os.umask(m), timeout=60)
        mode = stat.S_IMODE(os.stat(out).st_mode)
        check(mode == want, "umask %03o: mode %03o, want %03o" % (mask, mode, want))
        print("umask %03o -> %03o" % (mask, mode))


def case_report_escapes():
    """Region names and a command line with terminal escapes and control
    characters: the text report shows them replaced, never raw; JSON keeps
    them exactly (escaped)."""
    tmp = tempfile.mkdtemp()
    names = ["\x1b[31mred\x1b[0m", "bell\x07", "new\nline", "c1\u009bcsi", "tab\tx",
             "\x1b]0;title\x07"]
    p, out = perfmark_run(tmp, [FAULTS, "names"] + names, expect=3)
    for bad in ("\x1b", "\x07", "\u009b"):  # the runtime's own messages name regions
        check(bad not in p.stderr, "raw %r in perfmark's messages on stderr" % bad)
    check(any("?[31mred?[0m" in l for l in perfmark_lines(p.stderr)), "unbalanced-end message")
    m = Measured(out)
    stored = [e2e.text(n) for n in m.f["regions"]["name"]]
    for n in names:
        check(n in stored, "name %r not stored byte for byte" % n)
    raw = subprocess.run([PERFMARK, "report", out], capture_output=True, timeout=120)
    check(raw.returncode == 0, "report failed: %r" % raw.stderr[-500:])
    body = raw.stdout
    for bad in (b"\x1b", b"\x07", b"\xc2\x9b", b"\t"):
        check(bad not in body, "raw %r reached the text report" % bad)
    check(b"?[31mred?[0m" in body, "escaped name not shown")
    check(b"new?line" in body, "newline in a name not replaced")
    j = json.loads(run([PERFMARK, "report", out, "--format", "json"]).stdout)
    paths = {r["path"] for r in j["regions"]}
    for n in names:
        check(n in paths, "JSON lost %r" % n)
    rawj = subprocess.run([PERFMARK, "report", out, "--format", "json"], capture_output=True).stdout
    check(b"\x1b" not in rawj and b"\x07" not in rawj, "raw control bytes in JSON")


# ---- perf_event_paranoid as a normal user ---------------------------------------------------

PARANOID = "/proc/sys/kernel/perf_event_paranoid"
USER = "pmrel"


def ensure_user():
    try:
        return pwd.getpwnam(USER)
    except KeyError:
        pass
    if os.geteuid() != 0:
        return None
    subprocess.run(["useradd", "-M", "-r", "-s", "/usr/sbin/nologin", USER], check=False,
                   capture_output=True)
    try:
        return pwd.getpwnam(USER)
    except KeyError:
        return None


PROBE = r"""
import ctypes, platform, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
# perf_event_open's number: 298 on x86-64, 241 on arm64 (asm-generic)
NR = {"x86_64": 298, "aarch64": 241}[platform.machine()]
# perf_event_attr: type=SOFTWARE(1) size=120 config=PAGE_FAULTS(2); flags bit 5 = exclude_kernel
attr = bytearray(120)
struct.pack_into("IIQ", attr, 0, 1, 120, 2)
struct.pack_into("Q", attr, 40, 1 << 5 | 1 << 6)  # exclude_kernel, exclude_hv
buf = (ctypes.c_char * 120).from_buffer(attr)
fd = libc.syscall(NR, buf, 0, -1, -1, 0)
print("open" if fd >= 0 else "refused %d" % ctypes.get_errno())
"""


def user_tree(tmp):
    """perfmark, its library and the test program copied under tmp: the
    build tree may sit below a directory the other user cannot enter (a
    `mktemp -d` clone is 0700). Returns (perfmark, faults, env)."""
    libdir = os.path.join(e2e.BUILD, "lib")
    for d in ("bin", "lib"):
        os.makedirs(os.path.join(tmp, d), mode=0o755, exist_ok=True)
    for so in glob.glob(os.path.join(libdir, "libperfmark*.so*")):
        dst = os.path.join(tmp, "lib", os.path.basename(so))
        if os.path.islink(so):
            os.symlink(os.readlink(so), dst)
        else:
            shutil.copy2(so, dst)
    perfmark = shutil.copy2(PERFMARK, os.path.join(tmp, "bin", "perfmark"))
    faults = shutil.copy2(FAULTS, os.path.join(tmp, "bin", "faults"))
    for path in (tmp, os.path.join(tmp, "bin"), os.path.join(tmp, "lib")):
        os.chmod(path, 0o755)
    return perfmark, faults, {"LD_LIBRARY_PATH": os.path.join(tmp, "lib")}


def paranoid_case(level):
    if os.geteuid() != 0:
        print("SKIP: needs root to create a user and set perf_event_paranoid")
        return SKIP
    try:
        old = open(PARANOID).read().strip()
        with open(PARANOID, "w") as f:
            f.write(old)
    except OSError as e:
        print("SKIP: %s is not writable here (%s): a container cannot change it" % (PARANOID, e))
        return SKIP
    user = ensure_user()
    if not user:
        print("SKIP: cannot create user %s" % USER)
        return SKIP
    tree = tempfile.mkdtemp(dir="/tmp")
    perfmark, faults, tree_env = user_tree(tree)
    tmp = tempfile.mkdtemp(dir="/tmp")
    os.chmod(tmp, 0o777)
    out = os.path.join(tmp, "out.h5")
    as_user = ["setpriv", "--reuid", str(user.pw_uid), "--regid", str(user.pw_gid),
               "--clear-groups"]
    try:
        with open(PARANOID, "w") as f:
            f.write(str(level))
        probe = run(as_user + ["/usr/bin/python3", "-c", PROBE], cwd=tmp).stdout.strip()
        p = run(as_user + [perfmark, "run", "-e", "sw", "-o", out, "--", faults, "helpers"],
                expect=3, env=dict(tree_env, TMPDIR=tmp, HOME=tmp), cwd=tmp)
        check_out = run(as_user + [perfmark, "check"], env=tree_env, cwd=tmp).stdout
    finally:
        with open(PARANOID, "w") as f:
            f.write(old)
        shutil.rmtree(tree, ignore_errors=True)
    check(open(PARANOID).read().strip() == old, "paranoid level not restored")
    lines = perfmark_lines(p.stderr)
    m = Measured(out)
    print("paranoid %d as %s: user-space page-fault counter %s; perfmark said %r"
          % (level, USER, probe, [l for l in lines if "wrote" not in l]))
    check("perf_event_paranoid=%d" % level in check_out, "perfmark check does not show the level")
    if probe == "open":
        # user-only counting: every event excludes the kernel, said once
        check(all(int(x) == 1 for x in m.f["events"]["exclude_kernel"]), "kernel not excluded")
        check(sum("counting user space only" in l for l in lines) == 1,
              "want one user-space-only message: %r" % lines)
        touch_exact(m, 0, "touch200", 200)
    else:
        # nothing opens: time only, and one message that says why
        check(m.attr("events_measured") == "", "measured %r" % m.attr("events_measured"))
        msg = [l for l in lines if "none of the requested events" in l]
        check(len(msg) == 1 and "paranoid" in msg[0] and "time only" in msg[0],
              "want one clear message: %r" % lines)
        check(int(m.visits[0, m.region("touch200")]) == 1, "regions not timed")
        check(int(m.wall[0, m.region("touch200")]) > 0, "no wall time")


def case_paranoid_2_user():
    return paranoid_case(2)


def case_paranoid_3_user():
    return paranoid_case(3)


if __name__ == "__main__":
    # e2e's dispatcher runs case_<CASE> from its own module: hand it ours.
    vars(e2e).update((k, v) for k, v in list(globals().items()) if k.startswith("case_"))
    sys.exit(e2e.main())
