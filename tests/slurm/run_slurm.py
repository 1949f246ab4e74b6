#!/usr/bin/python3
"""The batch scripts under a real Slurm on this machine.

usage: /usr/bin/python3 run_slurm.py BUILD_DIR CASE
       CASE: batch | mpich | scancel | signal_before_limit | time_limit | pbs_local

Starts munged (only if none answers), slurmctld and slurmd on loopback with
slurm.conf.in (state, spool, logs and pid files under
BUILD_DIR/tests/slurm/CASE), submits jobs/slurm/perfmark.sbatch with sbatch,
polls squeue, checks the HDF5 files with h5py and the report files, and
stops the daemons it started, also on failure.

  batch       the bundled MPI + OpenMP demo, launched by srun (the site's
              default PMI, and PERFMARK_SRUN_MPI=pmix) and by mpirun:
              one job file, every rank and region with the visits the demo
              makes by construction, not PARTIAL; the report files.
  scancel     a long job (mpirun) cancelled while it runs (SIGTERM to every
              process, SIGKILL after KillWait): each rank's PARTIAL file
              with the data collected so far, and its report.
  signal_before_limit
              a long job (srun) with --time=1: the script's --signal warning
              makes it end before the limit, data saved (10 to 30 s).
  time_limit  a long job (mpirun) killed by a real time limit (--time=1,
              the script without its --signal line). Slurm counts limits in
              minutes and checks them every 30 s: 60 to 90 s.
  mpich       an MPICH program, launched by Hydra (PERFMARK_LAUNCHER=mpiexec)
              and by srun --mpi=pmi2: one job file, every rank's MPI calls
              equal to its own count.
  pbs_local   jobs/pbs/perfmark.pbs without PBS (none here), as a plain
              script with PBS's variables: the demo, and a kill that only the
              script receives and must pass on.

Exit 0 = pass, 77 = skipped (no Slurm here, or slurmd cannot start: the
reason is printed), anything else = failure.
"""
import glob
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

import h5py

# the checkers' shared check(), Failure, Skip and SKIP (tests/cases.py)
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from cases import SKIP, Failure, Skip, check  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
CASE = sys.argv[2]
SRC = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(SRC))
# PERFMARK_TEST_SBATCH: another script to submit (e.g. a copy with set -x, to debug).
SCRIPT = os.environ.get("PERFMARK_TEST_SBATCH", os.path.join(REPO, "jobs", "slurm", "perfmark.sbatch"))
PERFMARK = os.path.join(BUILD, "bin", "perfmark")
LONG_APP = os.path.join(BUILD, "tests", "slurm_long")
DIR = os.path.join(BUILD, "tests", "slurm", CASE)
CONF = os.path.join(DIR, "slurm.conf")
KILLWAIT = 10  # seconds from SIGTERM to SIGKILL: ample for writing the files
PAGES = 500    # slurm_long: rank r touches (r+1) x PAGES pages
PARTIAL = 0x40
STEPS = 20     # mpi_omp_demo's steps


def log(msg):
    print("run_slurm: " + msg, flush=True)


def env():
    e = dict(os.environ, SLURM_CONF=CONF)
    for k in list(e):
        if k.startswith(("PERFMARK_", "SLURM_", "SBATCH_", "OMPI_")) and k != "SLURM_CONF":
            del e[k]
    return e


def run(args, timeout=60, **kw):
    return subprocess.run(args, env=kw.pop("env", env()), capture_output=True, text=True,
                          errors="replace", timeout=timeout, **kw)


def tail(path, n=15):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError as e:
        return "(%s)" % e


# ---- daemons -------------------------------------------------------------------

def munge_answers():
    try:
        cred = subprocess.run(["munge", "-n"], capture_output=True, timeout=10)
        if cred.returncode != 0:
            return False
        return subprocess.run(["unmunge"], input=cred.stdout, capture_output=True,
                              timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def start_munged():
    """Starts munged as user munge; returns its pid file, None if one was
    already answering (then it is left alone)."""
    if munge_answers():
        return None
    key = "/etc/munge/munge.key"
    if not os.path.exists(key):
        r = subprocess.run(["mungekey", "--create", "--keyfile", key], capture_output=True,
                           text=True)
        if r.returncode != 0:
            raise Skip("cannot create the munge key: " + r.stderr.strip())
        shutil.chown(key, "munge", "munge")
        os.chmod(key, 0o400)
    os.makedirs("/run/munge", exist_ok=True)
    shutil.chown("/run/munge", "munge", "munge")
    r = subprocess.run(["runuser", "-u", "munge", "--", "munged"], capture_output=True,
                       text=True)
    if r.returncode != 0:
        raise Skip("munged does not start: " + (r.stderr or r.stdout).strip())
    for _ in range(50):
        if munge_answers():
            return "/run/munge/munged.pid"
        time.sleep(0.1)
    raise Skip("munged started but does not answer")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


NODE_CPUS = [1]  # CPUs of the test node (write_conf)


def write_conf():
    node = subprocess.run(["slurmd", "-C"], capture_output=True, text=True).stdout
    node = node.splitlines()[0] if node else ""
    check(node.startswith("NodeName="), "slurmd -C printed no node line")
    # PERFMARK_TEST_SLURM_CPUS=1 (tests only): declare a one-CPU node, as a
    # small VM or a shared CI runner has, on any machine
    if os.environ.get("PERFMARK_TEST_SLURM_CPUS") == "1":
        node = re.sub(r"\bCPUs=\d+", "CPUs=1", node)
        for key in ("Boards", "SocketsPerBoard", "CoresPerSocket", "ThreadsPerCore"):
            node = re.sub(r"\b%s=\d+" % key, "%s=1" % key, node)
    m = re.search(r"\bCPUs=(\d+)", node)
    NODE_CPUS[0] = int(m.group(1)) if m else 1
    with open(os.path.join(SRC, "slurm.conf.in")) as f:
        text = f.read()
    ports = free_port(), free_port()
    check(ports[0] != ports[1], "no two free ports")
    fields = {"@DIR@": DIR, "@HOST@": node.split()[0].split("=")[1],
              "@CTLD_PORT@": str(ports[0]), "@SLURMD_PORT@": str(ports[1]),
              "@KILLWAIT@": str(KILLWAIT), "@NODE@": node}
    for k, v in fields.items():
        text = text.replace(k, v)
    with open(CONF, "w") as f:
        f.write(text)


def alive(pid):
    """True while pid runs; a killed daemon nobody reaps stays a zombie."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def stop(pidfile, name):
    try:
        with open(pidfile) as f:
            pid = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        for _ in range(100):
            if not alive(pid):
                return
            time.sleep(0.1)
        log("%s (pid %d) ignored %s" % (name, pid, sig.name))


def start_slurm(started):
    r = run(["slurmctld", "-f", CONF])
    check(r.returncode == 0, "slurmctld: %s\n%s" % (r.stderr, tail(DIR + "/slurmctld.log")))
    started.append((DIR + "/slurmctld.pid", "slurmctld"))
    r = run(["slurmd", "-f", CONF])
    if r.returncode != 0:
        raise Skip("slurmd cannot start: %s\n%s" % (r.stderr, tail(DIR + "/slurmd.log")))
    started.append((DIR + "/slurmd.pid", "slurmd"))
    for _ in range(150):
        s = run(["sinfo", "-h", "-o", "%T"]).stdout.strip()
        if s == "idle":
            return
        time.sleep(0.2)
    raise Skip("slurmd did not register with slurmctld (node state %r):\n%s\n%s" % (
        s, tail(DIR + "/slurmd.log"), tail(DIR + "/slurmctld.log")))


# ---- jobs -------------------------------------------------------------------

def sbatch(opts, app=(), extra_env=None, script=SCRIPT):
    e = env()
    e.update({"PERFMARK_BIN": PERFMARK, "PERFMARK_EVENTS": "sw"})
    e.update(extra_env or {})
    # More tasks than the node has CPUs (a one- or two-CPU machine): Slurm
    # refuses the allocation unless told that tasks may share CPUs.
    tasks = [int(o.split("=")[1]) for o in opts if o.startswith("--ntasks=")]
    if tasks and tasks[0] > NODE_CPUS[0]:
        opts = list(opts) + ["--overcommit"]
    # Submitted from DIR: the script's outputs go to the submit directory.
    r = run(["sbatch", "--parsable"] + list(opts) + [script] + list(app), env=e, cwd=DIR)
    check(r.returncode == 0, "sbatch failed: %s" % r.stderr)
    return r.stdout.strip().split(";")[0]


def job_log(job):
    return os.path.join(DIR, "perfmark-%s.log" % job)


def wait_end(job, timeout):
    """Polls squeue (sbatch --wait polls every 2-10 s) until the job is gone
    from the queue; returns its final state."""
    t0 = time.time()
    while time.time() - t0 < timeout:
        s = run(["squeue", "-h", "-j", job, "-o", "%T"]).stdout.strip()
        if s in ("", "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL"):
            break
        time.sleep(0.2)
    else:
        raise Failure("job %s still %s after %d s; log:\n%s" % (job, s, timeout,
                                                              tail(job_log(job), 40)))
    # A cancelled job is listed as CANCELLED while its batch script still
    # runs (it reports after the signal): done only once the node is idle.
    while time.time() - t0 < timeout:
        if run(["sinfo", "-h", "-o", "%T"]).stdout.strip() == "idle":
            break
        time.sleep(0.2)
    else:
        raise Failure("node not idle %d s after job %s" % (timeout, job))
    out = run(["scontrol", "show", "job", job]).stdout
    state = next((w.split("=")[1] for w in out.split() if w.startswith("JobState=")), "?")
    return state, time.time() - t0


def wait_for_line(job, line, timeout=30):
    t0 = time.time()
    while time.time() - t0 < timeout:
        try:
            with open(job_log(job), errors="replace") as f:
                if line in f.read():
                    return
        except OSError:
            pass
        time.sleep(0.1)
    raise Failure("job %s never printed %r; log:\n%s" % (job, line, tail(job_log(job), 40)))


def check_report(h5, base, job):
    """The text report exists and is exactly what `perfmark report` prints for
    the file; the HTML report exists if this perfmark writes HTML, else the
    script said so in one line and left no file."""
    txt = base + ".txt"
    check(os.path.exists(txt), "%s missing; log:\n%s" % (txt, tail(job_log(job), 40)))
    want = run([PERFMARK, "report", h5])
    check(want.returncode == 0, "perfmark report %s: %s" % (h5, want.stderr))
    with open(txt) as f:
        check(f.read() == want.stdout, "%s differs from `perfmark report %s`" % (txt, h5))
    html_ok = run([PERFMARK, "report", h5, "--format", "html", "-o", os.devnull]).returncode == 0
    if html_ok:
        check(os.path.getsize(base + ".html") > 0 if os.path.exists(base + ".html") else False,
              "%s.html missing though perfmark writes HTML" % base)
    else:
        check(not os.path.exists(base + ".html"), "a failed HTML report left a file")
        with open(job_log(job), errors="replace") as f:
            check("no HTML report" in f.read(), "the log does not say why there is no HTML")


def regions(f):
    paths = [p.decode() for p in f["regions"]["path"]]
    return paths, f["region/visits"][:], f["region/flags"][:], f["threads"][:]


def check_demo_file(h5, ranks, threads):
    """The demo's visits by construction: per rank setup and solve once, 20
    steps of halo (2 Sendrecv) and residual (1 Allreduce), and each of the
    rank's threads in compute once a step."""
    check(os.path.exists(h5), "no job file %s (have %s)" % (h5, os.listdir(DIR)))
    with h5py.File(h5, "r") as f:
        check(int(f.attrs["ranks"]) == ranks, "ranks %s, want %d" % (f.attrs["ranks"], ranks))
        check(int(f.attrs["partial"]) == 0, "job file flagged partial")
        paths, visits, flags, th = regions(f)
        want = {"setup": 1, "solve": 1, "solve/halo": STEPS, "solve/halo/MPI_Sendrecv": 2 * STEPS,
                "solve/residual": STEPS, "solve/residual/MPI_Allreduce": STEPS}
        for r in range(ranks):
            # the rank's threads that took part (every thread has a row, the
            # MPI library's own too)
            rows = [i for i in range(len(th)) if th["rank"][i] == r and visits[i].sum() > 0]
            check(len(rows) == threads, "rank %d: %d thread rows in regions, want %d"
                  % (r, len(rows), threads))
            for p, n in want.items():
                check(p in paths, "region %s missing (have %s)" % (p, paths))
                got = int(visits[rows, paths.index(p)].sum())
                check(got == n, "rank %d %s: %d visits, want %d" % (r, p, got, n))
            compute = sum(int(visits[rows, i].sum()) for i, p in enumerate(paths)
                          if p.split("/")[-1] == "compute")
            check(compute == STEPS * threads, "rank %d compute: %d visits, want %d" % (
                r, compute, STEPS * threads))
        check(not (flags & PARTIAL).any(), "cells flagged PARTIAL in a completed job")


def case_batch():
    # srun with the site's default PMI (this cluster's MpiDefault=pmix), srun
    # with the plugin named by PERFMARK_SRUN_MPI, and mpirun
    for launcher, threads, pmi in (("srun", 2, None), ("srun", 1, "pmix"), ("mpirun", 1, None)):
        env = {"PERFMARK_LAUNCHER": launcher, "OMP_NUM_THREADS": str(threads)}
        if pmi:
            env["PERFMARK_SRUN_MPI"] = pmi
        job = sbatch(["--ntasks=2"], extra_env=env)
        state, took = wait_end(job, 120)
        log("%s job %s: %s in %.1f s" % (launcher, job, state, took))
        check(state == "COMPLETED", "%s job %s %s; log:\n%s" % (launcher, job, state,
                                                                 tail(job_log(job), 40)))
        h5 = os.path.join(DIR, "perfmark-%s.h5" % job)
        check_demo_file(h5, 2, threads)
        check_report(h5, os.path.join(DIR, "report-%s" % job), job)
        check(not glob.glob(os.path.join(DIR, "perfmark-%s.rank*.h5" % job)),
              "per-rank files next to a complete job file")
    # the variable reaches srun: a plugin Slurm does not have fails the step
    job = sbatch(["--ntasks=2"], extra_env={"PERFMARK_LAUNCHER": "srun",
                                            "PERFMARK_SRUN_MPI": "no_such_pmi"})
    state, took = wait_end(job, 120)
    with open(job_log(job), errors="replace") as f:
        text = f.read()
    check(state != "COMPLETED" or "no_such_pmi" in text,
          "PERFMARK_SRUN_MPI=no_such_pmi did not reach srun (%s); log:\n%s"
          % (state, tail(job_log(job), 20)))


def case_mpich():
    """An MPICH program (mpi_count_mpich, which counts its own calls) in a job:
    launched by MPICH's Hydra inside the allocation, and by srun with the PMI
    MPICH speaks (pmi2). One job file, every rank's MPI visits equal to the
    counts it printed, the report files."""
    app = os.path.join(BUILD, "tests", "mpi_count_mpich")
    if not (shutil.which("mpiexec.mpich") and os.path.exists(app)):
        raise Skip("MPICH (mpich, libmpich-dev) not installed")
    for launcher, pmi in (("mpiexec", None), ("srun", "pmi2")):
        e = {"PERFMARK_LAUNCHER": launcher, "PERFMARK_MPIEXEC": "mpiexec.mpich",
             "OMP_NUM_THREADS": "1"}
        if pmi:
            e["PERFMARK_SRUN_MPI"] = pmi
        job = sbatch(["--ntasks=2"], app=[app], extra_env=e)
        state, took = wait_end(job, 120)
        log("MPICH via %s job %s: %s in %.1f s" % (launcher, job, state, took))
        check(state == "COMPLETED", "%s job %s %s; log:\n%s" % (launcher, job, state,
                                                                 tail(job_log(job), 40)))
        said = {}
        with open(job_log(job), errors="replace") as f:
            for line in f:
                if line.startswith("mpi_count rank "):
                    w = line.split()
                    said[int(w[2])] = {w[i]: int(w[i + 1]) for i in range(5, len(w), 2)
                                       if int(w[i + 1])}
        check(sorted(said) == [0, 1], "the ranks' own counts: %s" % tail(job_log(job), 20))
        h5 = os.path.join(DIR, "perfmark-%s.h5" % job)
        check(os.path.exists(h5), "no job file %s (have %s); log:\n%s" % (
            h5, sorted(os.listdir(DIR)), tail(job_log(job), 30)))
        with h5py.File(h5, "r") as f:
            paths, visits, _, th = regions(f)
            kinds = [k.decode() for k in f["regions"]["kind"]]
            for r in (0, 1):
                rows = [i for i in range(len(th)) if th["rank"][i] == r]
                got = {p: int(visits[rows, i].sum()) for i, p in enumerate(paths)
                       if kinds[i] == "mpi" and visits[rows, i].sum()}
                check(got == said[r], "%s, rank %d: %s in the file, %s counted" % (
                    launcher, r, got, said[r]))
        check_report(h5, os.path.join(DIR, "report-%s" % job), job)
        log("MPICH via %s: both ranks' MPI calls exact in one job file" % launcher)


def check_killed(job, ranks, reports=True):
    """Each rank's own file: readable, flagged PARTIAL, with the data it had:
    its "touch" region exact, "step" visited; and a report of each, unless
    Slurm ended the whole job (a hard kill ends the batch script too: with
    mpirun here it did so within a second of the ranks' end, whatever the
    script's traps)."""
    check(not os.path.exists(os.path.join(DIR, "perfmark-%s.h5" % job)),
          "a job file from a killed job")
    check(not glob.glob(os.path.join(DIR, "*.tmp-*")), "temporary file left behind")
    for r in range(ranks):
        h5 = os.path.join(DIR, "perfmark-%s.rank%d.h5" % (job, r))
        check(os.path.exists(h5), "rank %d's data was lost (have %s); log:\n%s" % (
            r, sorted(os.listdir(DIR)), tail(job_log(job), 40)))
        with h5py.File(h5, "r") as f:
            check(int(f.attrs["partial"]) == 1, "rank %d: root attribute partial not set" % r)
            check(int(f.attrs["rank"]) == r, "rank %d's file says rank %s" % (r, f.attrs["rank"]))
            paths, visits, flags, th = regions(f)
            events = [e.decode() for e in f["events"]["name"]]
            counts = f["region/counts"][:]
            for p in ("touch", "step"):
                check(p in paths, "rank %d: region %s missing (have %s)" % (r, p, paths))
            t = next(i for i in range(len(th)) if visits[i, paths.index("touch")] > 0)
            pf = int(counts[t, paths.index("touch"), events.index("page-faults")])
            want = PAGES * (r + 1)
            check(want <= pf <= want + 8, "rank %d touch: %d page-faults, want %d" % (r, pf, want))
            check(flags[t, paths.index("touch")] & PARTIAL, "rank %d touch not PARTIAL" % r)
            steps = int(visits[:, paths.index("step")].sum())
            check(steps >= 1, "rank %d: no completed step saved" % r)
        if reports:
            check_report(h5, os.path.join(DIR, "report-%s.rank%d" % (job, r)), job)
    if reports:
        with open(job_log(job), errors="replace") as f:
            check("was signalled" in f.read(), "the script did not outlive the signal to report")


def start_long(opts, launcher, script=SCRIPT):
    job = sbatch(["--ntasks=2"] + opts, app=[LONG_APP, str(PAGES), "600"], script=script,
                 extra_env={"OMP_NUM_THREADS": "2", "PERFMARK_LAUNCHER": launcher})
    wait_for_line(job, "rank 0 looping")
    wait_for_line(job, "rank 1 looping")
    return job


def case_scancel():
    """A hard cancel: SIGTERM to every process of the job at once. With
    mpirun, which answers it with SIGTERM, 3 s, SIGKILL to the ranks. (srun
    answers it with SIGKILL at once, racing the ranks' writing: the script's
    --signal warning exists for that, see case_signal_before_limit.)"""
    job = start_long([], "mpirun")
    time.sleep(1)  # some steps done
    r = run(["scancel", job])
    check(r.returncode == 0, "scancel: %s" % r.stderr)
    state, took = wait_end(job, 60)
    log("job %s: %s %.1f s after scancel (KillWait %d s)" % (job, state, took, KILLWAIT))
    check(state == "CANCELLED", "job state %s, want CANCELLED" % state)
    check_killed(job, 2, reports=False)


def case_signal_before_limit():
    """srun, --time=1: the script's `--signal=B:TERM@120` reaches the script
    at Slurm's first time check (within 30 s); it signals the job steps'
    tasks only, and the job ends before its limit with the data saved."""
    job = start_long(["--time=1"], "srun")
    state, took = wait_end(job, 100)
    log("job %s: %s %.1f s after it started looping" % (job, state, took))
    check(state not in ("TIMEOUT", "CANCELLED"), "job state %s: it ran into its limit" % state)
    check_killed(job, 2)
    with open(job_log(job), errors="replace") as f:
        check("forcing job termination" not in f.read(), "srun was signalled and killed the tasks")


def case_time_limit():
    """A real time limit, no warning (the script without its --signal line),
    mpirun: Slurm's SIGTERM at the limit, SIGKILL KillWait later."""
    with open(SCRIPT) as f:
        text = "".join(l for l in f if not l.startswith("#SBATCH --signal"))
    script = os.path.join(DIR, "perfmark-nowarning.sbatch")
    with open(script, "w") as f:
        f.write(text)
    job = start_long(["--time=1"], "mpirun", script=script)
    t0 = time.time()
    state, took = wait_end(job, 180)
    log("job %s: %s %.1f s after it started looping" % (job, state, time.time() - t0))
    check(state == "TIMEOUT", "job state %s, want TIMEOUT; log:\n%s" % (state,
                                                                       tail(job_log(job), 40)))
    check_killed(job, 2, reports=False)


def case_pbs_local():
    """No PBS here: the PBS script run as a plain script with the variables
    PBS would set. The demo as in case_batch; then a long run where only the
    script gets SIGTERM (as from a plain kill): it must pass it on to mpirun,
    whose ranks save PARTIAL files, and still write the reports."""
    script = os.path.join(REPO, "jobs", "pbs", "perfmark.pbs")
    e = env()
    # no PBS allocation: 2 ranks even where Open MPI counts 1 slot (1 core, SMT)
    e.update({"PERFMARK_BIN": PERFMARK, "PERFMARK_EVENTS": "sw", "OMP_NUM_THREADS": "2",
              "PBS_O_WORKDIR": DIR, "TMPDIR": DIR, "OMPI_MCA_rmaps_base_oversubscribe": "1"})
    with open(job_log("4242"), "w") as out:
        p = subprocess.run(["bash", script], env=dict(e, PBS_JOBID="4242.pbsserver"),
                           stdout=out, stderr=subprocess.STDOUT, timeout=120)
    check(p.returncode == 0, "perfmark.pbs exited %d; log:\n%s" % (p.returncode,
                                                                 tail(job_log("4242"), 40)))
    h5 = os.path.join(DIR, "perfmark-4242.h5")
    check_demo_file(h5, 2, 2)
    check_report(h5, os.path.join(DIR, "report-4242"), "4242")

    with open(job_log("4343"), "w") as out:
        p = subprocess.Popen(["bash", script, LONG_APP, str(PAGES), "600"],
                             env=dict(e, PBS_JOBID="4343.pbsserver"), stdout=out,
                             stderr=subprocess.STDOUT)
        try:
            wait_for_line("4343", "rank 0 looping")
            wait_for_line("4343", "rank 1 looping")
            time.sleep(1)
            p.send_signal(signal.SIGTERM)
            p.wait(timeout=60)
        finally:
            if p.poll() is None:
                p.kill()
    check(p.returncode != 0, "the killed run exited 0")
    check_killed("4343", 2)


def main():
    if CASE.startswith("pbs_"):
        shutil.rmtree(DIR, ignore_errors=True)
        os.makedirs(DIR)
        try:
            globals()["case_" + CASE]()
        except Failure as e:
            print("FAIL: %s" % e)
            return 1
        print("PASS")
        return 0
    if not all(shutil.which(p) for p in ("slurmctld", "slurmd", "sbatch", "munged")):
        print("SKIP: slurm-wlm or munge not installed (scripts/install-deps.sh installs them)")
        return SKIP
    if os.geteuid() != 0:
        print("SKIP: a private Slurm (SlurmUser=root, slurmd) needs root here")
        return SKIP
    shutil.rmtree(DIR, ignore_errors=True)
    os.makedirs(os.path.join(DIR, "state"))
    os.makedirs(os.path.join(DIR, "spool"))
    started = []
    try:
        munge_pid = start_munged()
        if munge_pid:
            started.append((munge_pid, "munged"))
        write_conf()
        start_slurm(started)
        globals()["case_" + CASE]()
    except Skip as e:
        print("SKIP: %s" % e)
        return SKIP
    except Failure as e:
        print("FAIL: %s" % e)
        return 1
    finally:
        if any(n == "slurmctld" for _, n in started):
            run(["scancel", "--partition=perfmark"], timeout=30)  # jobs a failure left
        for pidfile, name in reversed(started):
            stop(pidfile, name)
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
