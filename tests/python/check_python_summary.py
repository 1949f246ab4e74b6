#!/usr/bin/python3
"""The Python package on a summary file equals it on the full file of the
same job (issue "Jobs of any size": the package reads summary files).

usage: PYTHONPATH=BUILD/python check_python_summary.py FULL.h5 SUMMARY.h5
       PYTHONPATH=BUILD/python check_python_summary.py --diff PERFMARK A.h5 A_SUM.h5 B.h5 B_SUM.h5

FULL holds every rank's rows; SUMMARY is the same job's summary file
(PERFMARK_SUMMARY_OUTPUT, or bench/make_summary). Every frame the package
makes over every rank (summary, flags, mpi, mpi_share, measuring, omp_wait,
ipc, derived, topdown, the Hatchet literal) is equal to the last bit; so are
perfmark_reads and mpi_share_stats. The rows a summary keeps (threads,
thread totals, cells, rank totals, by_rank) are the full file's rows of the
kept ranks, under the job's thread rows. With --diff: perfmark.diff() of summary files (with each other and
with full files) equals `perfmark diff --format json`, field by field.
Prints what it compared; exits 1 with each difference otherwise.
"""
import os
import sys

import numpy as np
import pandas as pd

import perfmark

FRAMES = ["summary", "flags", "mpi", "mpi_share", "measuring", "omp_wait", "ipc", "derived"]
failed = []


def check(cond, msg):
    if not cond:
        failed.append(msg)
        print("FAIL: " + msg)
    return cond


def same_frame(name, a, b):
    try:
        pd.testing.assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True),
                                      check_exact=True)
        return True
    except AssertionError as e:
        return check(False, "%s differs:\n%s" % (name, str(e)[:1500]))


def main():
    full, summ = perfmark.open(sys.argv[1]), perfmark.open(sys.argv[2])
    check(summ.is_summary and not full.is_summary, "is_summary: full %s, summary %s"
          % (full.is_summary, summ.is_summary))
    kept = summ.kept_ranks()
    check(0 in kept and set(kept) <= set(full.kept_ranks()), "kept ranks %s" % kept)
    rows = 0
    for name in FRAMES:
        a, b = getattr(full, name)(), getattr(summ, name)()
        rows += len(a)
        same_frame(name, a, b)
    s = full.summary()
    # not vacuous: the job has statistics across ranks and values to compare
    check(s["rank_total"].notna().sum() > 0 and (s["ranks_entered"] > 1).any(),
          "the full file has no statistics across ranks")
    for name in ("perfmark_reads", "mpi_share_stats"):
        a, b = getattr(full, name)(), getattr(summ, name)()
        check(a == b, "%s: full %s, summary %s" % (name, a, b))
    check(full.to_hatchet_literal() == summ.to_hatchet_literal(), "to_hatchet_literal differs")
    # the kept ranks' own rows: as the full file has them, thread rows the
    # job's (the numbers summary()'s min_thread and max_thread use)
    for name in ("threads", "thread_totals", "cells", "by_rank"):
        a, b = getattr(full, name)(), getattr(summ, name)()
        same_frame(name + " of the kept ranks", a[a["rank"].isin(kept)], b)
    rt_f, rt_s = full.rank_totals(), summ.rank_totals()
    same_frame("rank_totals of the kept ranks", rt_f[rt_f["row"].isin(kept)], rt_s)
    # a statistic's thread is a row of threads() wherever it is kept
    th = summ.threads().set_index("row")
    ft = full.threads().set_index("row")
    named = s["max_thread"].dropna().astype(int)
    for t in named[named.isin(th.index)]:
        check(th.loc[t, "tid"] == ft.loc[t, "tid"], "thread row %d: tid %s, full %s"
              % (t, th.loc[t, "tid"], ft.loc[t, "tid"]))
    check(summ.topdown_info() == full.topdown_info(), "topdown_info: full %s, summary %s"
          % (full.topdown_info(), summ.topdown_info()))
    same_frame("topdown", full.topdown(), summ.topdown())
    if failed:
        sys.exit(1)
    print("python on the summary: %d frames (%d rows) equal to the full file's; kept ranks %s"
          % (len(FRAMES), rows, kept))


def diffs(perfmark_bin, full_a, summ_a, full_b, summ_b):
    """perfmark.diff() with summary files on either side equals `perfmark
    diff --format json` of the same files, every field of every row
    (check_python_diff.py's comparison)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from check_python import Checker
    from check_python_diff import check_pair
    ck = Checker()
    pairs = [(summ_a, summ_b), (full_a, summ_b), (summ_a, full_b)]
    for a, b in pairs:
        for opts in ([], ["--threshold", "0"], ["--metric", "visits", "--threshold", "1"]):
            check_pair(ck, perfmark_bin, a, b, opts, "%s -> %s" % (os.path.basename(a),
                                                                  os.path.basename(b)))
    d = perfmark.diff(summ_a, summ_b)
    check(len(d.table) > 0 and d.unit == "rank" and d.summary == [True, True],
          "diff of two summaries: %d rows, unit %s" % (len(d.table), d.unit))
    if ck.finish():
        sys.exit(1)
    print("python diff with summary files: %d rows x %d pairs x 3 option sets equal to "
          "perfmark diff's" % (len(d.table), len(pairs)))


if sys.argv[1] == "--diff":
    diffs(*sys.argv[2:7])
else:
    main()
