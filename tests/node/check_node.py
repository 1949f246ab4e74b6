#!/usr/bin/env python3
"""Node mode against CPUs whose occupants are known by construction.

usage: check_node.py BUILD_DIR CASE

The job spins on one CPU, a foreign process on another; `perfmark run
--node` must put the foreign time on the second CPU and only there.
Needs two CPUs and root (or perf_event_paranoid <= 0): skips otherwise.
Exit 0 pass, 1 fail, 77 skip.
"""
import json
import os
import shutil
import subprocess
import sys
import time

import h5py

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from cases import Skip, check, clean_env, run_cases  # noqa: E402

MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def paranoid():
    with open("/proc/sys/kernel/perf_event_paranoid") as f:
        return int(f.read())


def needs_watch():
    if os.geteuid() != 0 and paranoid() > 0:
        raise Skip("node mode needs root or perf_event_paranoid <= 0")


def two_cpus():
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        raise Skip("one CPU only: no CPU to keep the foreign process apart")
    return cpus[0], cpus[1]


def run(cmd, env=None, expect=0):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=90, env=clean_env(env))
    check(p.returncode == expect, "%s exited %d: %s" % (" ".join(cmd), p.returncode,
                                                       p.stderr[-2000:]))
    return p


def node_rows(f):
    n = f["node"]
    return {int(c): {"own": int(o), "others": int(x), "idle": int(i), "span": int(s)}
            for c, o, x, i, s in zip(n["cpu"][()], n["cpu_own_ns"][()], n["cpu_foreign_ns"][()],
                                     n["cpu_idle_ns"][()], n["cpu_span_ns"][()])}


def cpu_ns(pid):
    """The CPU time of process pid so far (its threads' /proc schedstat)."""
    total = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
            total += int(f.read().split()[0])
    return total


def job_and_foreign(build, tmp, extra=()):
    """The job spins 1 s on CPU a under `perfmark run --node`, a foreign
    process 2 s on CPU b around it. Also returns the foreign process's share
    of a CPU over the perfmark run (its CPU time / the wall time), the
    ground truth its time on b is judged against: other load on the machine
    (a concurrent build) lowers both alike."""
    a, b = two_cpus()
    spin = os.path.join(build, "tests", "node_spin")
    foreign = subprocess.Popen([spin, "2.0", str(b)], env=clean_env())
    time.sleep(0.2)
    out = os.path.join(tmp, "n.h5")
    c0, w0 = cpu_ns(foreign.pid), time.monotonic_ns()
    p = run([os.path.join(build, "bin", "perfmark"), "run", "-e", "sw", "--node"] + list(extra) +
            ["-o", out, "--", spin, "1.0", str(a)])
    share = (cpu_ns(foreign.pid) - c0) / (time.monotonic_ns() - w0)
    foreign.wait(timeout=30)
    return out, a, b, foreign.pid, share


def process_rows(f):
    """{(cpu, pid): (comm, ns)} from the per-CPU other-process rows."""
    n = f["node"]
    return {(int(c), int(p)): (m.decode(), int(t))
            for c, p, m, t in zip(n["process_cpu"][()], n["process_pid"][()],
                                  n["process_comm"][()], n["process_ns"][()])}


def case_foreign(build, tmp):
    """A foreign busy process pinned to CPU b shows as foreign time on b,
    and only there; the job's spinning is the job's time on CPU a. Judged
    on the foreign pid's own rows, so that other load on the machine (a
    concurrent build) cannot fail it."""
    needs_watch()
    out, a, b, fpid, share = job_and_foreign(build, tmp)
    with h5py.File(out) as f:
        rows = node_rows(f)
        procs = process_rows(f)
        names = [x.decode() if isinstance(x, bytes) else x for x in f["events"]["name"]]
        task_clock = int(f["thread/counts"][()][:, names.index("task-clock")].sum())
    check(a in rows and b in rows, "CPUs watched: %s" % sorted(rows))
    ra, rb = rows[a], rows[b]
    on_b = procs.get((b, fpid), ("", 0))
    on_a = procs.get((a, fpid), ("", 0))[1]
    check(on_b[0] == "node_spin", "CPU %d's rows: %s, want pid %d node_spin" % (
        b, sorted((k, v) for k, v in procs.items() if k[0] == b), fpid))
    check(on_b[1] >= 0.85 * share * rb["span"], "CPU %d: the foreign process %.2f s of %.2f s "
          "watched, while it had %.0f%% of a CPU" % (b, on_b[1] / 1e9, rb["span"] / 1e9,
                                                     100 * share))
    check(on_a <= 0.02 * ra["span"], "CPU %d: the foreign process (pinned to %d) has %.3f s" % (
        a, b, on_a / 1e9))
    for c, r in rows.items():
        listed = sum(t for (cc, _), (_, t) in procs.items() if cc == c)
        check(listed <= r["others"], "CPU %d: listed processes %d ns > others %d ns" % (
            c, listed, r["others"]))
        check(r["own"] + r["others"] + r["idle"] <= r["span"] * 1.001 + 1e6,
              "CPU %d: parts exceed the time watched: %s" % (c, r))
    check(ra["own"] + rb["own"] >= 0.95 * task_clock - 5e6, "the job's %.3f s on CPUs %d and "
          "%d, its task-clock %.3f s" % ((ra["own"] + rb["own"]) / 1e9, a, b, task_clock / 1e9))
    check(rb["own"] <= 0.1 * rb["span"], "CPU %d: the job's %.2f s" % (b, rb["own"] / 1e9))
    j = json.loads(run([os.path.join(build, "bin", "perfmark"), "report", out, "--format",
                        "json"]).stdout)
    node = j["node"]["nodes"][0]
    cpu_b = next(c for c in node["cpus"] if c["cpu"] == b)
    check(node["mpi"] is None and cpu_b["mpi"] is None, "report: an MPI phase without MPI")
    check(cpu_b["others"] and cpu_b["others"][0]["pid"] == fpid,
          "report: CPU %d's top other process %r" % (b, cpu_b["others"][:2]))
    check(any(p["pid"] == fpid and p["ns"] >= on_b[1] for p in node["others"]),
          "report: the node's others %r" % node["others"][:3])
    text = run([os.path.join(build, "bin", "perfmark"), "report", out]).stdout
    check("Node mode" in text and "node_spin (pid %d)" % fpid in text, "text: " + text[-2000:])
    print("foreign: pid %d %.0f%% of CPU %d (it had %.0f%% of a CPU), %.1f%% of CPU %d; job "
          "%.3f s on CPU %d, task-clock %.3f s" % (fpid, 100 * on_b[1] / rb["span"], b,
                                                   100 * share, 100 * on_a / ra["span"], a,
                                                   ra["own"] / 1e9, a, task_clock / 1e9))


def case_series(build, tmp):
    """With --interval, the CPUs' interval rows add up to their totals."""
    needs_watch()
    out, a, b, _, _ = job_and_foreign(build, tmp, ["--interval", "100ms"])
    with h5py.File(out) as f:
        n = f["node"]
        cpu = n["series_cpu"][()]
        check(len(cpu) >= 2 * 8, "%d interval rows" % len(cpu))
        for c, row in node_rows(f).items():
            for key, total in (("own", "cpu_own_ns"), ("foreign", "cpu_foreign_ns"),
                               ("idle", "cpu_idle_ns")):
                got = int(n["series_%s_ns" % key][()][cpu == c].sum())
                want = int(n[total][()][list(n["cpu"][()]).index(c)])
                check(got == want, "CPU %d %s: rows sum %d, total %d" % (c, key, got, want))
    j = json.loads(run([os.path.join(build, "bin", "perfmark"), "report", out, "--format",
                        "json"]).stdout)
    node = j["node"]["nodes"][0]
    ser = node["series"]
    check(ser and len(ser["end_ns"]) >= 8, "report: node series %r" % ser)
    for key, total in (("own_ns", "own_ns"), ("others_ns", "others_ns"), ("idle_ns", "idle_ns")):
        check(sum(ser[key]) == node[total], "report: the node's %s over time sums to %d, its "
              "total is %d" % (key, sum(ser[key]), node[total]))
    mid = [x / (x + o + i) for x, o, i in zip(ser["others_ns"], ser["own_ns"], ser["idle_ns"])
           if x + o + i][2:-2]
    check(mid and min(mid) >= 0.35, "report: the foreign process (one CPU of 2) has %s of the "
          "node per reading" % ["%.2f" % m for m in mid])
    print("series: %d rows, sums exact; the others' share per reading %s" % (
        len(cpu), ["%.2f" % m for m in mid]))


def case_refused(build, tmp):
    """Where the kernel refuses (another user, paranoid 2): one message, the
    rest of the measurement goes on."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        raise Skip("needs root and setpriv to be an unprivileged user")
    if paranoid() <= 0:
        raise Skip("perf_event_paranoid <= 0: nothing refuses an unprivileged user here")
    if subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "test",
                       "-x", os.path.join(build, "bin", "perfmark")]).returncode != 0:
        raise Skip("user nobody cannot reach the build tree (%s): a parent directory is "
                   "private" % build)
    os.chmod(tmp, 0o777)
    out = os.path.join(tmp, "r.h5")
    p = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                        os.path.join(build, "bin", "perfmark"), "run", "-e", "sw", "--node", "-o",
                        out, "--", os.path.join(build, "tests", "node_spin"), "0.2"],
                       capture_output=True, text=True, timeout=60, env=clean_env())
    check(p.returncode == 0 and os.path.exists(out), "exit %d: %s" % (p.returncode, p.stderr))
    said = [l for l in p.stderr.splitlines() if "node mode" in l]
    check(len(said) == 1 and "perf_event_paranoid" in said[0], "stderr: %s" % p.stderr)
    with h5py.File(out) as f:
        check(len(f["node/cpu"]) == 0, "node rows without the right to watch")
        check(len(f["threads"]) == 1, "the rest of the measurement is missing")
    print("refused: %s" % said[0][:140])


def case_mpi(build, tmp):
    """2 ranks on 2 CPUs: one of them watches the node; both ranks' time is
    the job's. Ground truth: the CPU time each rank's spin took (it says,
    from CLOCK_PROCESS_CPUTIME_ID), all of it inside the MPI phase, where
    every rank is known: the node's job time there must hold it all,
    whatever else ran on the machine meanwhile."""
    needs_watch()
    two_cpus()
    if not shutil.which("mpirun"):
        raise Skip("no mpirun")
    out = os.path.join(tmp, "m.h5")
    p = run([os.path.join(build, "bin", "perfmark"), "run", "-e", "sw", "--node", "-o", out,
             "--", "mpirun", "-np", "2", "--oversubscribe", "--bind-to", "none",
             os.path.join(build, "tests", "node_spin_mpi"), "1.0"], env=MPI_ENV)
    spin = [int(l.split()[3]) for l in p.stdout.splitlines() if "spin_cpu_ns" in l]
    check(len(spin) == 2, "the ranks' spin times: %r" % p.stdout)
    with h5py.File(out) as f:
        check(set(int(r) for r in f["node/cpu_rank"][()]) == {0},
              "watching ranks %s" % sorted(set(f["node/cpu_rank"][()].tolist())))
        rows = node_rows(f)
        n = f["node"]
        mpi = {int(c): (int(s), int(o), int(x), int(i)) for c, s, o, x, i in zip(
            n["cpu"][()], n["cpu_mpi_span_ns"][()], n["cpu_mpi_own_ns"][()],
            n["cpu_mpi_foreign_ns"][()], n["cpu_mpi_idle_ns"][()])}
        pids = set(int(p) for p in n["process_pid"][()])
        ranks = set(int(p) for p in f["threads"]["pid"])
    own = sum(m[1] for m in mpi.values())
    check(own >= 0.97 * sum(spin) - 2e6, "the node's job time in the MPI phase %.3f s < the "
          "ranks' spins %.3f s" % (own / 1e9, sum(spin) / 1e9))
    for c, r in rows.items():
        span, o, others, idle = mpi[c]
        check(1.0e9 <= span <= r["span"], "CPU %d: MPI phase %.2f s of %.2f s watched (the "
              "ranks spin 1 s in it)" % (c, span / 1e9, r["span"] / 1e9))
        check(o + others + idle <= span + 1e6, "CPU %d: MPI phase parts %s" % (c, mpi[c]))
    check(not (pids & ranks), "ranks listed as other processes: %s" % (pids & ranks))
    j = json.loads(run([os.path.join(build, "bin", "perfmark"), "report", out, "--format",
                        "json"]).stdout)
    node = j["node"]["nodes"][0]
    check(node["mpi"] and node["mpi"]["own_ns"] == own, "report: the node's MPI phase %r" %
          node["mpi"])
    print("mpi: job %.3f s in the MPI phase, the ranks' spins %.3f s; %s" % (
        own / 1e9, sum(spin) / 1e9,
        {c: "%.0f%% job" % (100 * m[1] / m[0]) for c, m in mpi.items()}))


def main():
    return run_cases("node", globals(), __doc__,
                     lambda args, tmp: (os.path.abspath(args[0]), tmp))


if __name__ == "__main__":
    sys.exit(main())
