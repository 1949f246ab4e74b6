#!/usr/bin/python3
"""Hostile region trees under `perfmark run -e sw`, checked with h5py.

usage: /usr/bin/python3 check_hostile.py BUILD_DIR CASE
  names_1m           10^6 distinct names, default PERFMARK_MAX_REGIONS (100000):
                     the first 100000 names keep their own region with one visit,
                     every later name (and "after") is counted in
                     "[other regions]"; said once; memory bounded; report works
  names_small_limit  PERFMARK_MAX_REGIONS=1000, 5000 names: the same at 1000
  deep_10k           "d" nested 10,000 deep: 10,000 regions, one visit each, at
                     depths 0..9999, parents chained; display paths bounded;
                     the report renders it
  deepnames_10k      "n<i>" nested 10,000 deep: the same with distinct names
  limit_nested       PERFMARK_MAX_REGIONS=2, three threads each open 2000 new
                     names inside "outer", each holding "inner": no crash, the
                     program's status and output kept, every new path counted
                     in outer/[other regions] with exact visits and page faults
  limit_nested_mpirun  the same for two ranks under mpirun, 10^5 names each
Exit 0 = pass, 77 = skipped, anything else = failure.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # tests/: e2e helpers
import e2e  # noqa: E402

from e2e import Measured, check, perfmark_run, run, text  # noqa: E402
import tempfile  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
PROG = os.path.join(BUILD, "tests", "hostile_regions")
OVERFLOW = "[other regions]"
PATH_MAX = 1024  # runtime/file/pm_h5out.c PM_DISPLAY_PATH_MAX


def peak_rss_kb(stdout):
    for line in stdout.splitlines():
        if line.startswith("peak_rss_kb "):
            return int(line.split()[1])
    raise e2e.Failure("no peak_rss_kb line in %r" % stdout[-500:])


def report_ok(out):
    for fmt in ("text", "json", "csv"):
        p = run([e2e.PERFMARK, "report", out, "--format", fmt])
        check(len(p.stdout) > 0, "empty %s report" % fmt)
    return p


def names_case(n, limit):
    env = {} if limit is None else {"PERFMARK_MAX_REGIONS": str(limit)}
    limit = limit or 100000
    with tempfile.TemporaryDirectory() as tmp:
        p, out = perfmark_run(tmp, [PROG, "names", str(n)], env=env)
        m = Measured(out)
        own = [x for x in m.paths if x.startswith("r")]
        check(len(own) == limit, "%d regions of their own, want %d" % (len(own), limit))
        check(set(own) == {"r%d" % i for i in range(limit)}, "not the first %d names" % limit)
        check(all(int(m.visits[0, m.region(x)]) == 1 for x in own[:1000]), "visits of own names")
        check("after" not in m.paths, "'after' got its own region beyond the limit")
        other = int(m.visits[0, m.region(OVERFLOW)])
        check(other == n - limit + 3, "%s: %d visits, want %d" % (OVERFLOW, other, n - limit + 3))
        check(int(m.visits.sum()) == n + 3, "visits %d, want %d" % (m.visits.sum(), n + 3))
        said = [x for x in m.messages if "distinct region names" in x]
        check(len(said) == 1 and "PERFMARK_MAX_REGIONS" in said[0], "messages %r" % m.messages)
        check(len(m.paths) <= limit + 1, "%d regions for a limit of %d" % (len(m.paths), limit))
        rss = peak_rss_kb(p.stdout)
        print("regions %d, overflow visits %d, peak RSS %d KiB" % (len(m.paths), other, rss))
        if n >= 10 ** 6:
            # 10^5 names and paths at ~200 bytes each, not 10^6: well under 200 MiB
            check(rss < 200 * 1024, "peak RSS %d KiB for %d names" % (rss, n))
        report_ok(out)


def deep_case(mode, n):
    with tempfile.TemporaryDirectory() as tmp:
        p, out = perfmark_run(tmp, [PROG, mode, str(n)])
        m = Measured(out)
        regs = m.f["regions"][:]
        chain = [i for i in range(len(regs)) if text(regs["name"][i]) != "after"]
        check(len(chain) == n, "%d nested regions, want %d" % (len(chain), n))
        depth = {int(regs["depth"][i]): i for i in chain}
        check(sorted(depth) == list(range(n)), "depths are not 0..%d" % (n - 1))
        for d in range(1, n):
            check(int(regs["parent"][depth[d]]) == depth[d - 1], "depth %d: wrong parent" % d)
        for d in (0, n // 2, n - 1):
            i = depth[d]
            want = "d" if mode == "deep" else "n%d" % d
            check(text(regs["name"][i]) == want, "depth %d named %r" % (d, regs["name"][i]))
            check(int(m.visits[0, i]) == 1, "depth %d: %d visits" % (d, m.visits[0, i]))
        # inclusive times nest: every level holds the one inside it
        walls = [int(m.wall[0, depth[d]]) for d in range(n)]
        check(all(walls[d] >= walls[d + 1] for d in range(n - 1)), "inclusive time not nested")
        longest = max(len(x.encode()) for x in m.paths)
        check(longest <= PATH_MAX, "display path of %d bytes" % longest)
        check(m.paths[depth[n - 1]].startswith(".../"), "deep path not shortened: %r"
              % m.paths[depth[n - 1]][:60])
        check(int(m.visits[0, m.region("after")]) == 3, "after visits")
        check(not any(int(f) & e2e.FLAGS["UNBALANCED"] for f in m.flags[0]), "UNBALANCED cells")
        size = os.path.getsize(out)
        print("file %d bytes, longest path %d bytes, peak RSS %d KiB"
              % (size, longest, peak_rss_kb(p.stdout)))
        check(size < 64 * 2 ** 20, "file of %d bytes for %d regions" % (size, n))
        report_ok(out)


def limit_nested_check(m, n, threads):
    """One file of `hostile nested n` at PERFMARK_MAX_REGIONS=2."""
    check(sorted(m.paths) == sorted(["after", "outer", "outer/" + OVERFLOW]),
          "regions %r" % m.paths)
    bucket = m.region("outer/" + OVERFLOW)
    rows = m.rows_visiting("outer")
    check(len(rows) == threads, "%d threads visited outer, want %d" % (len(rows), threads))
    for t in rows:
        check(int(m.visits[t, m.region("outer")]) == 1, "outer visits")
        # every x<i> and every inner inside it is one visit of the bucket
        check(int(m.visits[t, bucket]) == 2 * n, "bucket visits %d, want %d"
              % (m.visits[t, bucket], 2 * n))
        # its time is that of its outermost visits, which hold the folded
        # begins: every visit counts as timed (no estimate scales it)
        check(int(m.f["region/timed_visits"][t, bucket]) == 2 * n, "bucket timed visits %d"
              % m.f["region/timed_visits"][t, bucket])
        pf = m.count(t, "outer/" + OVERFLOW, "page-faults")
        check(2 * n <= pf <= 2 * n + 8, "bucket: %d page faults for %d pages" % (pf, 2 * n))
        outer = m.count(t, "outer", "page-faults")
        check(outer >= pf and outer <= pf + 8, "outer %d page faults, bucket %d" % (outer, pf))
        check(int(m.wall[t, m.region("outer")]) >= int(m.wall[t, bucket]), "time not nested")
        check(not m.flag_names(t, "outer/" + OVERFLOW) & {"UNBALANCED", "LOST_GENERATION"},
              "bucket flags %s" % m.flag_names(t, "outer/" + OVERFLOW))
    check(int(m.visits[:, m.region("after")].sum()) == 4, "after visits")
    said = [x for x in m.messages if "region names" in x or "region paths" in x]
    check(len(said) >= 1 and all("PERFMARK_MAX_REGIONS" in x for x in said),
          "messages %r" % m.messages)


def case_limit_nested():
    n = 2000
    with tempfile.TemporaryDirectory() as tmp:
        p, out = perfmark_run(tmp, [PROG, "nested", str(n)], env={"PERFMARK_MAX_REGIONS": "2",
                                                                   "PERFMARK_THROTTLE": "off"})
        check("nested done" in p.stdout, "the program's output is lost: %r" % p.stdout[-300:])
        limit_nested_check(Measured(out), n, 3)
        report_ok(out)


def case_limit_nested_mpirun():
    n = 100000
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.h5")
        env = dict(e2e.MPI_ENV, PERFMARK_MAX_REGIONS="2", PERFMARK_THROTTLE="off", TMPDIR=tmp)
        p = run([e2e.PERFMARK, "run", "-e", "sw", "-o", out, "--"] + e2e.MPIRUN +
                ["-np", "2", PROG, "nested", str(n)], env=env, cwd=tmp)
        check(p.stdout.count("nested done") == 2, "the ranks' output is lost: %r"
              % p.stdout[-300:])
        for r in range(2):
            path = os.path.join(tmp, "out.rank%d.h5" % r)
            limit_nested_check(Measured(path), n, 3)
        report_ok(os.path.join(tmp, "out.rank0.h5"))


def case_names_1m():
    return names_case(10 ** 6, None)


def case_names_small_limit():
    return names_case(5000, 1000)


def case_deep_10k():
    return deep_case("deep", 10000)


def case_deepnames_10k():
    return deep_case("deepnames", 10000)


if __name__ == "__main__":
    vars(e2e).update((k, v) for k, v in list(globals().items()) if k.startswith("case_"))
    sys.exit(e2e.main())
