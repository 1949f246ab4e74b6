#!/usr/bin/python3
"""OpenMP tests: run omp_work (see the comment at the top of omp_work.c)
under `perfmark run -e sw` and check the file with h5py.

usage: /usr/bin/python3 check_omp.py BUILD_DIR CASE
  clang_pages    clang/libomp: `omp parallel pm_pages+.. (4 threads)` on 4 rows,
                 "touch" under it with (t+1)*N page faults on OpenMP thread t,
                 `omp barrier` under it on every row
  clang_teams    num_threads 2 then 3: one region per construct, 2 and 3 rows
  clang_nested   2 x 2 nested teams: inner construct under the outer one in
                 all 4 implicit tasks; the outer visited by its 2 members only
  clang_no_tool_unmeasured  the program linked with libperfmark, run without
                 perfmark or with PERFMARK_ENABLE=0: libomp starts no tool
  gcc_pages      gcc/libgomp (no OMPT, its entry points): the same as clang_pages,
                 the construct named `pm_pages at omp_work.c:LINE`
  gcc_teams, gcc_nested  the clang cases on libgomp
  gfortran_pages, gfortran_mpi_2x2  the same from omp_work.F90 (gfortran)
  gcc_on_libomp  the gcc binary run on libomp (as libgomp.so.1): omp regions
                 named after pm_pages though it has no dynamic symbol (no
                 -rdynamic): the symbol table names it
  clang_mpi_2x2, clang_mpi_1x4, gcc_mpi_2x2 (gcc: with omp regions)
                 omp_mpi (MPI + OpenMP) under mpirun, RANKS x THREADS: one job
                 file; on rank r OpenMP thread t has (t+1)(r+1)N page faults in
                 "touch"; placement recorded on every row
  pin_threads    PERFMARK_PIN=threads: thread k bound to PU k of the share; the
                 CPUs the threads report equal the recorded PU and binding
  pin_threads_oversubscribed  more threads than PUs: wraps, said, never fails
  pin_ranks      PERFMARK_PIN=ranks under mpirun: disjoint shares of cores
  pin_ranks_from_mpi_init     the same with the launcher's local-rank
                 variables removed: the local rank comes from MPI_Init
  pin_taskset    --pin ranks|threads under a narrower affinity (taskset): shares
                 from those CPUs only
  pin_ranks_inside_launcher   mpirun --bind-to core ... perfmark run --pin ranks:
                 the launcher's binding of each rank does not narrow its share
  pin_keep_launcher_binding   mpirun --bind-to core, no PERFMARK_PIN: the
                 launcher's binding is kept and recorded
Exit 0 = pass, 77 = skipped (reason printed), anything else = failure.
"""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # tests/: e2e helpers
import e2e  # noqa: E402  (reads BUILD_DIR from argv like this script)

from e2e import SKIP, Measured, check, perfmark_run, text  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
CLANG_PROG = os.path.join(BUILD, "tests", "omp_work_clang")
GCC_PROG = os.path.join(BUILD, "tests", "omp_work_gcc")
CLANG_MPI = os.path.join(BUILD, "tests", "omp_mpi_clang")
GCC_MPI = os.path.join(BUILD, "tests", "omp_mpi_gcc")
PAGES = 500
UNBALANCED = e2e.FLAGS["UNBALANCED"]


def need(path, why):
    if not os.path.exists(path):
        print("SKIP: %s not built (%s)" % (os.path.basename(path), why))
        sys.exit(SKIP)


def threads_of(stdout):
    """tid -> (OpenMP thread number, level) from the program's lines."""
    seen = {}
    for line in stdout.splitlines():
        if line.startswith("thread "):
            _, tid, num, level = line.split()
            seen[int(tid)] = (int(num), int(level))
    return seen


class Omp(Measured):
    def __init__(self, path):
        super().__init__(path)
        self.kinds = [text(k) for k in self.f["regions"]["kind"]]
        self.tids = [int(t) for t in self.threads["tid"]]

    def omp_paths(self):
        return [p for p, k in zip(self.paths, self.kinds) if k == "omp"]

    def construct(self, func, n, under=""):
        """The path of the parallel region of `func` with a team of n."""
        pat = re.compile(re.escape(under) + r"omp parallel %s(#\d+)?( at [^ :]+:\d+)? "
                         r"\(%d threads\)$" % (re.escape(func), n))
        hits = [p for p in self.paths if pat.match(p)]
        check(len(hits) == 1, "want one region for %s (%d threads) under %r, have %r"
              % (func, n, under, self.omp_paths()))
        check(self.kinds[self.region(hits[0])] == "omp", "%s: kind %s" % (hits[0], self.kinds))
        return hits[0]

    def visitors(self, path, want_rows):
        """The rows that visited `path`: want_rows of them, once each."""
        rows = self.rows_visiting(path)
        visits = list(self.visits[:, self.region(path)])
        check(len(rows) == want_rows, "%s: visited on %d thread rows, want %d (visits %s)"
              % (path, len(rows), want_rows, visits))
        check(all(visits[t] == 1 for t in rows), "%s: visits %s, want 1 each" % (path, visits))
        return rows

    def no_unbalanced(self):
        bad = [(self.paths[r], t) for t in range(self.flags.shape[0])
               for r in range(self.flags.shape[1]) if self.flags[t, r] & UNBALANCED]
        check(not bad, "UNBALANCED cells: %s; messages %s" % (bad[:5], self.messages))


def run_prog(tmp, prog, args, env=None):
    p, out = perfmark_run(tmp, [prog] + args, env=env)
    return p, Omp(out)


def check_pool_totals(m, touch):
    """libgomp's pool threads are still running when the file is written:
    counted by the kernel from birth, their totals are their own counters'
    from their first construct (totals_from 2), which hold what they did in
    it; or, where the kernel writes no exit records, their own from birth
    (0)."""
    totals = m.f["thread/counts"][:]
    pf, r = m.event("page-faults"), m.region(touch)
    froms = set()
    for t in m.rows_visiting(touch):
        if t == 0:
            continue  # the main thread: its own counters, always
        froms.add(int(m.threads["totals_from"][t]))
        check(int(totals[t, pf]) >= int(m.counts[t, r, pf]),
              "OpenMP thread row %d: %d page-faults in its totals, %d in its construct"
              % (t, int(totals[t, pf]), int(m.counts[t, r, pf])))
    check(froms in ({2}, {0}), "pool threads' totals_from %s" % froms)
    print("pool threads' totals: %s, each holding its construct's page-faults"
          % ("their own counters from their first construct" if froms == {2} else
             "their own counters from birth"))


def check_pages(m, tids, parent, barrier=True):
    """"touch" under `parent` on 4 rows, (t+1)*PAGES faults on OpenMP thread t."""
    touch = parent + "touch"
    rows = m.visitors(touch, 4)
    for t in rows:
        num = tids.get(m.tids[t], (None,))[0]
        check(num is not None, "row %d (tid %d) is not one of the program's threads %s"
              % (t, m.tids[t], tids))
        pf = m.count(t, touch, "page-faults")
        want = (num + 1) * PAGES
        check(want <= pf <= want + 8, "OpenMP thread %d: %d page-faults, want %d"
              % (num, pf, want))
    print("page-faults per OpenMP thread:",
          sorted((tids[m.tids[t]][0], m.count(t, touch, "page-faults")) for t in rows))
    if barrier:
        b = parent + "omp barrier"
        for t in m.visitors(parent.rstrip("/"), 4):
            check(m.visits[t, m.region(b)] >= 1, "row %d: no barrier visit" % t)
        print("barrier wall ms per row:", [round(m.wall[t, m.region(b)] / 1e6, 3) for t in rows])


def case_clang_pages():
    need(CLANG_PROG, "no clang")
    with tempfile.TemporaryDirectory() as tmp:
        p, m = run_prog(tmp, CLANG_PROG, ["pages", str(PAGES)])
        par = m.construct("pm_pages", 4)
        check_pages(m, threads_of(p.stdout), par + "/")
        m.visitors(par + "/after", 4)
        check(set(m.omp_paths()) == {par, par + "/omp barrier"},
              "omp regions: %s" % m.omp_paths())
        m.no_unbalanced()
        check(m.attr("openmp").startswith("OMPT active"), "openmp attr %r" % m.attr("openmp"))
        check(not any("not visible" in x for x in m.messages), "wrong 'not visible' message")


def case_clang_no_tool_unmeasured():
    """libomp gets perfmark's OMPT tool only in a process perfmark measures:
    omp_work_clang is linked with libperfmark, and run without perfmark (or
    with PERFMARK_ENABLE=0) it must run as without it, without a tool that
    makes libomp pay at every construct. libomp's own account
    (OMP_TOOL_VERBOSE_INIT) says whether a tool was started."""
    need(CLANG_PROG, "clang with OpenMP not found")
    env = {"OMP_TOOL_VERBOSE_INIT": "stdout", "OMP_NUM_THREADS": "2"}

    def started(stdout):
        check("START LOGGING OF TOOL REGISTRATION" in stdout,
              "libomp gave no account of its tool (OMP_TOOL_VERBOSE_INIT): %r" % stdout[:400])
        return "Tool was started and is using the OMPT interface" in stdout

    plain = e2e.run([CLANG_PROG, "pages", "50"], env=env)
    check(not started(plain.stdout), "a tool was started in a program run without perfmark:\n"
          + plain.stdout[:600])
    off = e2e.run([CLANG_PROG, "pages", "50"], env=dict(env, PERFMARK_ENABLE="0"))
    check(not started(off.stdout), "a tool was started with PERFMARK_ENABLE=0")
    with tempfile.TemporaryDirectory() as tmp:
        p, m = run_prog(tmp, CLANG_PROG, ["pages", "50"], env=env)
        check(started(p.stdout), "no tool under perfmark run:\n" + p.stdout[:600])
        check(m.omp_paths(), "no omp regions under perfmark run")
    print("tool: none without perfmark or with PERFMARK_ENABLE=0, started under perfmark run")


def teams_case(prog):
    with tempfile.TemporaryDirectory() as tmp:
        _, m = run_prog(tmp, prog, ["teams"])
        two, three = m.construct("pm_two", 2), m.construct("pm_three", 3)
        m.visitors(two, 2)
        m.visitors(two + "/two", 2)
        m.visitors(three, 3)
        m.visitors(three + "/three", 3)
        check("two" not in m.paths and "three" not in m.paths,
              "user regions at top level: %s" % m.paths)
        m.no_unbalanced()


def case_clang_teams():
    need(CLANG_PROG, "no clang")
    teams_case(CLANG_PROG)


def case_gcc_teams():
    need(GCC_PROG, "the C compiler is not gcc with OpenMP")
    teams_case(GCC_PROG)


def nested_case(prog):
    with tempfile.TemporaryDirectory() as tmp:
        p, m = run_prog(tmp, prog, ["nested"])
        levels = {lv for _, lv in threads_of(p.stdout).values()}
        check(levels == {2}, "inner team members report levels %s, want 2 (nesting off?)"
              % levels)
        outer = m.construct("pm_outer", 2)
        inner = m.construct("pm_inner", 2, under=outer + "/")
        # the 2 outer members visit the outer region; the 2 inner-team workers
        # are placed under it (no visit) so that the inner region is one
        # path; libomp may reuse one thread for both inner teams' workers,
        # one after the other: count visits, not rows.
        for path, want in ((outer, 2), (outer + "/outer_work", 2), (inner, 4),
                           (inner + "/inner_work", 4)):
            v = int(m.visits[:, m.region(path)].sum())
            check(v == want, "%s: %d visits, want %d" % (path, v, want))
        check(not [x for x in m.paths if x.endswith("inner_work") and not x.startswith(inner)],
              "inner_work outside the nested path: %s" % m.paths)
        m.no_unbalanced()


def case_clang_nested():
    need(CLANG_PROG, "no clang")
    nested_case(CLANG_PROG)


def case_gcc_nested():
    need(GCC_PROG, "the C compiler is not gcc with OpenMP")
    nested_case(GCC_PROG)


def fortran_pages(m, stdout, ranks=1):
    """omp_work.F90: pm_fpages' construct (gfortran names it pm_fpages_), its
    4 threads per rank each with (t+1)*PAGES page faults in it, exact."""
    par = m.construct("pm_fpages_", 4)
    tids = threads_of(stdout)
    rows = m.visitors(par, 4 * ranks)
    for t in rows:
        num = tids.get(m.tids[t], (None,))[0]
        check(num is not None, "row %d (tid %d) is not a thread the program named" % (t, m.tids[t]))
        pf = m.count(t, par, "page-faults")
        want = (num + 1) * PAGES
        check(want <= pf <= want + 16, "Fortran OpenMP thread %d: %d page-faults in %s, want %d"
              % (num, pf, par, want))
    print("gfortran: %s, page-faults per thread exact on %d rows" % (par, len(rows)))


def case_gfortran_pages():
    prog = os.path.join(e2e.BUILD, "tests", "omp_work_f")
    need(prog if os.path.exists(prog) else None, "no gfortran with OpenMP")
    with tempfile.TemporaryDirectory() as tmp:
        p, m = run_prog(tmp, prog, [str(PAGES)])
        fortran_pages(m, p.stdout)
        m.no_unbalanced()


def case_gfortran_mpi_2x2():
    prog = os.path.join(e2e.BUILD, "tests", "omp_work_f_mpi")
    need(prog if os.path.exists(prog) else None, "no gfortran with OpenMP and Open MPI")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.h5")
        p = e2e.run([e2e.PERFMARK, "run", "-e", "sw", "-o", out, "--"] + e2e.MPIRUN +
                    ["-np", "2", prog, str(PAGES)], env=e2e.MPI_ENV, cwd=tmp)
        m = Omp(out)
        fortran_pages(m, p.stdout, ranks=2)
        m.no_unbalanced()


def case_gcc_pages():
    need(GCC_PROG, "the C compiler is not gcc with OpenMP")
    with tempfile.TemporaryDirectory() as tmp:
        p, m = run_prog(tmp, GCC_PROG, ["pages", str(PAGES)])
        # libgomp has no OMPT: its constructs come from its own entry points,
        # with the same regions OMPT gives libomp's (wrappers/gomp)
        par = m.construct("pm_pages", 4)
        check(par == "omp parallel pm_pages at omp_work.c:%d (4 threads)" % pages_line(),
              "construct named %r" % par)
        check_pages(m, threads_of(p.stdout), par + "/")
        m.visitors(par + "/after", 4)
        check(set(m.omp_paths()) == {par, par + "/omp barrier"},
              "omp regions %s" % m.omp_paths())
        m.no_unbalanced()
        check_pool_totals(m, par + "/touch")
        check("libgomp" in m.attr("openmp") and "measured" in m.attr("openmp"),
              "openmp attr %r" % m.attr("openmp"))
        check(not any("not visible" in x for x in m.messages), "messages %r" % m.messages)


def libomp():
    """The libomp the clang build uses, from ldd."""
    if os.path.exists(CLANG_PROG):
        ldd = subprocess.run(["ldd", CLANG_PROG], capture_output=True, text=True).stdout
        for line in ldd.splitlines():
            parts = line.split()
            if parts and parts[0] == "libomp.so.5" and len(parts) >= 3:
                return os.path.realpath(parts[2])
    for path in ("/usr/lib/x86_64-linux-gnu/libomp.so.5", "/usr/lib/llvm-14/lib/libomp.so.5"):
        if os.path.exists(path):
            return path
    return None


def case_gcc_on_libomp():
    need(GCC_PROG, "the C compiler is not gcc with OpenMP")
    lib = libomp()
    if not lib:
        print("SKIP: no LLVM libomp.so.5 here")
        return SKIP
    with tempfile.TemporaryDirectory() as tmp:
        # libomp implements the GOMP_* entry points: offered as libgomp.so.1,
        # it runs the gcc-built program, with OMPT.
        gomp = os.path.join(tmp, "gomp")
        os.mkdir(gomp)
        os.symlink(lib, os.path.join(gomp, "libgomp.so.1"))
        env = {"LD_LIBRARY_PATH": gomp}
        ldd = subprocess.run(["ldd", GCC_PROG], capture_output=True, text=True,
                             env=dict(os.environ, **env)).stdout
        check(gomp in ldd, "libgomp.so.1 not taken from %s:\n%s" % (gomp, ldd))
        p, m = run_prog(tmp, GCC_PROG, ["pages", str(PAGES)], env=env)
        # no -rdynamic: no dynamic symbol, but the symbol table names the function
        par = m.construct("pm_pages", 4)
        check_pages(m, threads_of(p.stdout), par + "/")
        m.no_unbalanced()


# ---- MPI + OpenMP, and placement ------------------------------------------------

MPI_PAGES = 300


def mpi_threads_of(stdout):
    """tid -> (rank, OpenMP thread number, CPU in touch, CPU after spin)."""
    seen = {}
    for line in stdout.splitlines():
        if line.startswith("thread "):
            _, rank, tid, num, cpu, cpu2 = line.split()
            seen[int(tid)] = (int(rank), int(num), int(cpu), int(cpu2))
    return seen


def run_mpi(tmp, prog, ranks, threads, env=None, spin_ms=0, launcher=None, wrapper=()):
    e = dict(e2e.MPI_ENV, OMP_NUM_THREADS=str(threads))
    e.update(env or {})
    mpirun = launcher or e2e.MPIRUN
    p, out = perfmark_run(tmp, mpirun + ["-np", str(ranks)] + list(wrapper)
                          + [prog, str(MPI_PAGES), str(spin_ms)], env=e)
    files = sorted(f for f in os.listdir(tmp) if f.endswith(".h5"))
    check(files == ["out.h5"], "files %s, want one job file" % files)
    m = Omp(out)
    check(int(m.f.attrs["ranks"]) == ranks, "ranks attr %s" % m.f.attrs["ranks"])
    return p, m, mpi_threads_of(p.stdout)


def check_mpi_pages(m, seen, ranks, threads, parent):
    touch = parent + "touch"
    rows = m.rows_visiting(touch)
    check(len(rows) == ranks * threads, "touch on %d rows, want %d" % (len(rows),
          ranks * threads))
    got = []
    for t in rows:
        check(m.tids[t] in seen, "row %d (tid %d) is not a thread of the program" % (t, m.tids[t]))
        rank, num, _, _ = seen[m.tids[t]]
        check(int(m.threads["rank"][t]) == rank, "row %d: rank %d, program says %d"
              % (t, m.threads["rank"][t], rank))
        pf = m.count(t, touch, "page-faults")
        want = (num + 1) * (rank + 1) * MPI_PAGES
        check(want <= pf <= want + 8, "rank %d thread %d: %d page-faults, want %d"
              % (rank, num, pf, want))
        got.append((rank, num, pf))
    print("page-faults per (rank, OpenMP thread):", sorted(got))
    for t in range(len(m.tids)):
        row = m.threads[t]
        check(text(row["host"]) and text(row["binding"]) not in ("", "?"),
              "row %d: host/binding missing: %r" % (t, row))
        for f in ("core_first", "core_last", "package_first", "package_last", "numa_first",
                  "numa_last"):
            check(int(row[f]) >= 0, "row %d: %s = %d" % (t, f, row[f]))
    m.no_unbalanced()


def pages_line():
    """The line of the parallel construct in omp_work.c's pm_pages."""
    with open(os.path.join(HERE, "omp_work.c")) as f:
        lines = f.read().splitlines()
    start = next(i for i, l in enumerate(lines) if "void pm_pages(" in l)
    return next(i for i in range(start, len(lines)) if "#pragma omp parallel" in lines[i]) + 1


def pragma_line():
    """The line of the parallel construct in omp_mpi.c's pm_team."""
    with open(os.path.join(HERE, "omp_mpi.c")) as f:
        lines = f.read().splitlines()
    start = next(i for i, l in enumerate(lines) if "void pm_team(" in l)
    return next(i for i in range(start, len(lines)) if "#pragma omp parallel" in lines[i]) + 1


def mpi_case(prog, ranks, threads, omp):
    need(prog, "no clang" if omp else "the C compiler is not gcc with OpenMP")
    with tempfile.TemporaryDirectory() as tmp:
        _, m, seen = run_mpi(tmp, prog, ranks, threads)
        parent = ""
        if omp:
            parent = m.construct("pm_team", threads) + "/"
            # built with -g: named by the construct's file and line
            want = "omp parallel pm_team at omp_mpi.c:%d (%d threads)" % (pragma_line(), threads)
            check(parent.rstrip("/") == want, "construct named %r, want %r" % (parent, want))
            m.visitors(parent.rstrip("/"), ranks * threads)
        else:
            check(not m.omp_paths(), "libgomp: omp regions %s" % m.omp_paths())
        check_mpi_pages(m, seen, ranks, threads, parent)
        check("MPI_Barrier" in m.paths, "no MPI_Barrier region: %s" % m.paths)


def case_clang_mpi_2x2():
    return mpi_case(CLANG_MPI, 2, 2, True)


def case_clang_mpi_1x4():
    return mpi_case(CLANG_MPI, 1, 4, True)


def case_gcc_mpi_2x2():
    return mpi_case(GCC_MPI, 2, 2, True)


def pus():
    return sorted(os.sched_getaffinity(0))


def cores():
    """Core id -> PUs, from sysfs (what hwloc reads), in hwloc's core order:
    package by package (each package's first CPU), then by each core's first
    CPU. On a two-socket machine that numbers CPUs alternately across the
    sockets (0 on one, 1 on the other) this is not the order of the CPUs."""
    by_core, pkg_first = {}, {}
    for cpu in pus():
        base = "/sys/devices/system/cpu/cpu%d/topology/" % cpu
        with open(base + "physical_package_id") as f:
            pkg = int(f.read())
        with open(base + "core_id") as f:
            core = int(f.read())
        by_core.setdefault((pkg, core), []).append(cpu)
        pkg_first[pkg] = min(pkg_first.get(pkg, cpu), cpu)
    return [by_core[k] for k in sorted(by_core, key=lambda k: (pkg_first[k[0]], min(by_core[k])))]


def cpulist(cpus):
    out, cpus = [], sorted(cpus)
    i = 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else "%d-%d" % (cpus[i], cpus[j]))
        i = j + 1
    return ",".join(out)


def check_thread_pins(m, seen, share):
    """The k-th thread of a rank to enter a region or construct (the main
    thread first) is on PU share[k % len(share)], all along. Which thread
    came k-th the file does not say: the main thread is on share[0], and the
    PUs of all such threads are share's in order, each thread on its own.
    Threads that never enter one (Open MPI's own) are not bound."""
    active = [t for t in range(len(m.tids)) if m.visits[t].sum() > 0]
    pus = sorted(int(text(m.threads[t]["binding"])) for t in active
                 if text(m.threads[t]["binding"]).isdigit())
    check(pus == sorted(share[k % len(share)] for k in range(len(active))),
          "threads in regions bound to PUs %s, want %s" % (
              pus, sorted(share[k % len(share)] for k in range(len(active)))))
    for t in active:
        row = m.threads[t]
        k = int(row["thread"])
        want = share[0] if k == 0 else int(text(row["binding"]))
        check(text(row["binding"]) == str(want), "thread %d: binding %r, want %d"
              % (k, text(row["binding"]), want))
        check(int(row["cpu_first"]) == want and int(row["cpu_last"]) == want,
              "thread %d: cpu %d->%d, want %d" % (k, row["cpu_first"], row["cpu_last"], want))
        if m.tids[t] in seen:
            _, _, c1, c2 = seen[m.tids[t]]
            check(c1 == want and c2 == want, "thread %d reports CPUs %d, %d; bound to %d"
                  % (k, c1, c2, want))
        for path in ("touch", "spin"):
            full = [p for p in m.paths if p.endswith(path)]
            for p in full:
                if m.visits[t, m.region(p)]:
                    check("MIGRATED" not in m.flag_names(t, p), "pinned thread %d MIGRATED in %s"
                          % (k, p))


def check_report_placement(m):
    """perfmark report shows each thread's placement as the file has it."""
    import json
    j = json.loads(e2e.run([e2e.PERFMARK, "report", m.path, "--format", "json"]).stdout)
    for t, got in enumerate(j["threads"]):
        row = m.threads[t]
        want = {k: int(row[k]) for k in ("core_first", "core_last", "package_first",
                                         "package_last", "numa_first", "numa_last")}
        want["binding"] = text(row["binding"])
        check(got.get("placement") == want, "report thread %d placement %r, file %r"
              % (t, got.get("placement"), want))
    txt = e2e.run([e2e.PERFMARK, "report", m.path]).stdout
    lines = txt[txt.index("\nThreads:") + 1:].splitlines()[2:2 + len(m.tids)]
    for t, line in enumerate(lines):
        check(text(m.threads[t]["binding"]) in line.split(), "text threads row %r" % line)


def case_pin_threads():
    need(CLANG_MPI, "no clang")
    share = pus()
    n = min(len(share), 4)
    with tempfile.TemporaryDirectory() as tmp:
        _, m, seen = run_mpi(tmp, CLANG_MPI, 1, n, env={"PERFMARK_PIN": "threads"}, spin_ms=30)
        check(m.attr("pinning").startswith("threads: "), "pinning %r" % m.attr("pinning"))
        check_thread_pins(m, seen, share)
        check_mpi_pages(m, seen, 1, n, m.construct("pm_team", n) + "/")
        print("pinning:", m.attr("pinning"))
        check_report_placement(m)


def case_pin_threads_oversubscribed():
    need(CLANG_MPI, "no clang")
    share = pus()
    n = len(share) + 2
    with tempfile.TemporaryDirectory() as tmp:
        p, m, seen = run_mpi(tmp, CLANG_MPI, 1, n, env={"PERFMARK_PIN": "threads"})
        check("oversubscribed" in m.attr("pinning"), "pinning %r" % m.attr("pinning"))
        said = [x for x in m.messages if "more threads than" in x]
        check(len(said) == 1, "messages %r" % m.messages)
        check_thread_pins(m, seen, share)
        check_mpi_pages(m, seen, 1, n, m.construct("pm_team", n) + "/")


def rank_shares(nranks):
    """What PERFMARK_PIN=ranks gives local rank r: a disjoint run of cores."""
    cs = cores()
    if nranks > len(cs):
        return [cs[r % len(cs)] for r in range(nranks)]
    return [sum(cs[r * len(cs) // nranks:(r + 1) * len(cs) // nranks], [])
            for r in range(nranks)]


def check_rank_bindings(m, nranks, shares):
    for t in range(len(m.tids)):
        row = m.threads[t]
        r = int(row["rank"])
        check(text(row["binding"]) == cpulist(shares[r]), "rank %d thread %d: binding %r, want %r"
              % (r, row["thread"], text(row["binding"]), cpulist(shares[r])))
        # a thread born before MPI_Init bound the rank (the main thread, the
        # MPI library's own) may have started elsewhere
        check(int(row["cpu_first"]) in shares[r] or int(row["thread"]) == 0 or
              m.visits[t].sum() == 0,
              "rank %d thread %d started on CPU %d, outside %s" % (r, row["thread"],
                                                                  row["cpu_first"], shares[r]))
        # (one that sleeps since, like the MPI library's, last ran before it)
        check(int(row["cpu_last"]) in shares[r] or m.visits[t].sum() == 0,
              "rank %d thread %d ended on CPU %d, outside %s"
              % (r, row["thread"], row["cpu_last"], shares[r]))


def pin_ranks(wrapper=()):
    need(CLANG_MPI, "no clang")
    shares = rank_shares(2)
    with tempfile.TemporaryDirectory() as tmp:
        _, m, seen = run_mpi(tmp, CLANG_MPI, 2, 2, env={"PERFMARK_PIN": "ranks"}, spin_ms=20,
                             wrapper=wrapper)
        check(m.attr("pinning").startswith("ranks: "), "pinning %r" % m.attr("pinning"))
        check_rank_bindings(m, 2, shares)
        for tid, (rank, num, c1, c2) in seen.items():
            check(c1 in shares[rank] and c2 in shares[rank], "rank %d thread %d ran on %d, %d "
                  "outside its share %s" % (rank, num, c1, c2, shares[rank]))
        check_mpi_pages(m, seen, 2, 2, m.construct("pm_team", 2) + "/")
        print("shares:", shares, "pinning:", m.attr("pinning"))


def case_pin_ranks():
    return pin_ranks()


def case_pin_ranks_from_mpi_init():
    # env is a transparent wrapper: the process after it is still the rank.
    return pin_ranks(wrapper=["env", "-u", "OMPI_COMM_WORLD_LOCAL_RANK", "-u",
                              "OMPI_COMM_WORLD_LOCAL_SIZE"])


def case_pin_taskset():
    """--pin under a narrower affinity around perfmark run (taskset): the
    shares are cut from those CPUs only (PERFMARK_PIN_CPUS, passed on by
    perfmark run), every thread runs there, and the file says so."""
    need(CLANG_MPI, "no clang")
    allowed = pus()
    if len(allowed) < 2:
        print("SKIP: one CPU allowed: no narrower affinity to try")
        sys.exit(SKIP)
    cpu = allowed[-1]
    os.sched_setaffinity(0, {cpu})  # what `taskset -c CPU perfmark run ...` does
    try:
        for mode, ranks in (("ranks", 2), ("threads", 1)):
            with tempfile.TemporaryDirectory() as tmp:
                _, m, seen = run_mpi(tmp, CLANG_MPI, ranks, 2, env={"PERFMARK_PIN": mode},
                                     spin_ms=20)
                pinning = text(m.attr("pinning"))
                check(pinning.startswith(mode + ": ") and
                      ("of CPUs %d (PERFMARK_PIN_CPUS)" % cpu) in pinning,
                      "%s: pinning %r" % (mode, pinning))
                for t in range(len(m.tids)):
                    check(text(m.threads[t]["binding"]) == str(cpu), "%s: thread row %d bound to "
                          "%r, want %d" % (mode, t, text(m.threads[t]["binding"]), cpu))
                for tid, (rank, num, c1, c2) in seen.items():
                    check(c1 == cpu and c2 == cpu, "%s: rank %d thread %d ran on %d, %d, want %d"
                          % (mode, rank, num, c1, c2, cpu))
                check(len(seen) == 2 * ranks, "%s: %d threads reported" % (mode, len(seen)))
                print(mode, "under taskset -c %d:" % cpu, pinning)
    finally:
        os.sched_setaffinity(0, set(allowed))


def case_pin_ranks_inside_launcher():
    """`mpirun --bind-to core ... perfmark run --pin ranks`: each perfmark run
    is a rank, its affinity the launcher's binding of it; the shares still
    come from every core (pinning replaces the launcher's binding)."""
    need(CLANG_MPI, "no clang")
    shares = rank_shares(2)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.h5")
        p = e2e.run(["mpirun", "--oversubscribe", "--bind-to", "core:overload-allowed", "-np", "2",
                     e2e.PERFMARK, "run", "-e", "sw", "--pin", "ranks", "-o", out, "--",
                     CLANG_MPI, str(MPI_PAGES), "20"],
                    env=dict(e2e.MPI_ENV, OMP_NUM_THREADS="2", TMPDIR=tmp), cwd=tmp)
        m = Omp(out)
        pinning = text(m.attr("pinning"))
        check(pinning.startswith("ranks: ") and "PERFMARK_PIN_CPUS" not in pinning,
              "pinning %r" % pinning)
        check_rank_bindings(m, 2, shares)
        print("shares:", shares, "pinning:", pinning, "threads seen:", len(mpi_threads_of(p.stdout)))


def case_pin_keep_launcher_binding():
    need(CLANG_MPI, "no clang")
    launcher = ["mpirun", "--oversubscribe", "--bind-to", "core:overload-allowed"]
    with tempfile.TemporaryDirectory() as tmp:
        _, m, seen = run_mpi(tmp, CLANG_MPI, 2, 2, launcher=launcher)
        check(m.attr("pinning").startswith("keep: "), "pinning %r" % m.attr("pinning"))
        by_rank = {}
        for t in range(len(m.tids)):
            row = m.threads[t]
            by_rank.setdefault(int(row["rank"]), set()).add(text(row["binding"]))
        check(all(len(b) == 1 for b in by_rank.values()), "bindings per rank %s" % by_rank)
        first = {r: next(iter(b)) for r, b in by_rank.items()}
        if len(cores()) >= 2:
            check(first[0] != first[1], "mpirun bound both ranks to %s" % first)
        for tid, (rank, num, c1, c2) in seen.items():
            bound = cpu_list(first[rank])
            check(bound is None or c1 in bound,
                  "rank %d ran on %d, bound to %s" % (rank, c1, first[rank]))
        print("launcher bindings:", first)


def cpu_list(text_):
    """'0-1,4' -> {0, 1, 4}; None for a list cut short ('...'); an empty set
    for an unknown binding ('?')."""
    if text_.endswith("..."):
        return None
    if text_ == "?":
        return set()
    cpus = set()
    for part in text_.split(","):
        lo, _, hi = part.partition("-")
        cpus.update(range(int(lo), int(hi or lo) + 1))
    return cpus


if __name__ == "__main__":
    # e2e's dispatcher runs case_<CASE> from its own module: hand it ours.
    vars(e2e).update((k, v) for k, v in list(globals().items()) if k.startswith("case_"))
    sys.exit(e2e.main())
