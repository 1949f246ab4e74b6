#!/usr/bin/python3
"""OpenMP tests: run omp_work (see the comment at the top of omp_work.c)
under `perfmark run -e sw` and check the file with h5py.

usage: /usr/bin/python3 check_omp.py BUILD_DIR CASE
  clang_pages    clang/libomp: `omp parallel pm_pages+.. (4 threads)` on 4 rows,
                 "touch" under it with (t+1)*N page faults on OpenMP thread t,
                 `omp barrier` under it on every row
  clang_teams    num_threads 2 then 3: one region per construct, 2 and 3 rows
  clang_nested   2 x 2 nested teams: inner construct under the outer one in
                 all 4 implicit tasks
  gcc_pages      gcc/libgomp (no OMPT): "touch" at top level, exact, no omp region
  gcc_on_libomp  the gcc binary run on libomp (as libgomp.so.1): omp regions
                 named `omp_work_gcc+0x..` (no dynamic symbol)
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
        pat = re.compile(re.escape(under) + r"omp parallel %s\+0x[0-9a-f]+ \(%d threads\)$"
                         % (re.escape(func), n))
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


def case_clang_teams():
    need(CLANG_PROG, "no clang")
    with tempfile.TemporaryDirectory() as tmp:
        _, m = run_prog(tmp, CLANG_PROG, ["teams"])
        two, three = m.construct("pm_two", 2), m.construct("pm_three", 3)
        m.visitors(two, 2)
        m.visitors(two + "/two", 2)
        m.visitors(three, 3)
        m.visitors(three + "/three", 3)
        check("two" not in m.paths and "three" not in m.paths,
              "user regions at top level: %s" % m.paths)
        m.no_unbalanced()


def case_clang_nested():
    need(CLANG_PROG, "no clang")
    with tempfile.TemporaryDirectory() as tmp:
        p, m = run_prog(tmp, CLANG_PROG, ["nested"])
        levels = {lv for _, lv in threads_of(p.stdout).values()}
        check(levels == {2}, "inner team members report levels %s, want 2 (nesting off?)"
              % levels)
        outer = m.construct("pm_outer", 2)
        inner = m.construct("pm_inner", 2, under=outer + "/")
        # 2 outer members + 2 inner-team workers (who repeat the outer region);
        # libomp may reuse one thread for both inner teams' workers, one
        # after the other: count visits, not rows.
        for path, want in ((outer, 4), (outer + "/outer_work", 2), (inner, 4),
                           (inner + "/inner_work", 4)):
            v = int(m.visits[:, m.region(path)].sum())
            check(v == want, "%s: %d visits, want %d" % (path, v, want))
        check(not [x for x in m.paths if x.endswith("inner_work") and not x.startswith(inner)],
              "inner_work outside the nested path: %s" % m.paths)
        m.no_unbalanced()


def case_gcc_pages():
    need(GCC_PROG, "the C compiler is not gcc with OpenMP")
    with tempfile.TemporaryDirectory() as tmp:
        p, m = run_prog(tmp, GCC_PROG, ["pages", str(PAGES)])
        check_pages(m, threads_of(p.stdout), "", barrier=False)
        m.visitors("after", 4)
        check(not m.omp_paths(), "libgomp has no OMPT, yet omp regions: %s" % m.omp_paths())
        m.no_unbalanced()
        # the user is told why, what it means and what makes constructs visible
        said = [x for x in m.messages if "OpenMP constructs were not visible" in x]
        check(len(said) == 1 and "libgomp" in said[0] and "clang" in said[0],
              "messages %r" % m.messages)
        check("libgomp" in m.attr("openmp"), "openmp attr %r" % m.attr("openmp"))
        check(sum("OpenMP constructs were not visible" in l for l in p.stderr.splitlines()) == 1,
              "not said once on stderr: %r" % p.stderr)


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
        # no -rdynamic: the construct has no dynamic symbol, named by its object
        par = m.construct("omp_work_gcc", 4)
        check_pages(m, threads_of(p.stdout), par + "/")
        m.no_unbalanced()


if __name__ == "__main__":
    # e2e's dispatcher runs case_<CASE> from its own module: hand it ours.
    vars(e2e).update((k, v) for k, v in list(globals().items()) if k.startswith("case_"))
    sys.exit(e2e.main())
