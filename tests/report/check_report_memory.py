#!/usr/bin/python3
"""The report's memory is bounded by a block of threads, not by the file
(issue 6, scale).

usage: /usr/bin/python3 tests/report/check_report_memory.py GEN_SYNTHETIC PERFMARK

Writes two job files with bench/gen_synthetic, SMALL and LARGE ranks x 16
threads x 128 regions x 8 events (the large one 16 times the threads and
cells; both larger than an HDF5 chunk, 512 threads here, so that both runs
hold the same chunk-sized buffers), runs `perfmark report` on each in every
format, with --by rank and --by thread, and `perfmark diff` of each file
with itself, and compares the peak resident memory of the two runs: the
large one may use at most LIMIT_KB more (LIMIT_DIFF_KB for diff). No timing
is measured.

The peak is the largest maximum resident set size among the processes of
one run (the report's crash-isolating child included): getrusage of the
children of a small wrapper process started for that run alone, since the
counter never decreases within one process.

What may still grow with the threads is the per-thread totals (/thread)
and each row's rank and thread number, about 250 bytes per thread
(docs/design.md, "The report stage: streaming and mpirun").
"""
import os
import subprocess
import sys
import tempfile

SMALL, LARGE, TPR, R, E = 64, 1024, 16, 128, 8
# 15,360 more threads: about 250 bytes each remain (the /thread totals, the
# rank and thread number of each /threads row, HDF5's own metadata: about
# 4 MB; the /threads rows themselves are read a block at a time when
# printed), plus for html and --by rank one number per (region, rank)
# (about 1 MB): measured +3.8 to +4.8 MB. Per-thread statistics and per-rank
# sums kept for the whole file cost about 40 MB.
LIMIT_KB = 6 * 1024
LIMIT_DIFF_KB = 2 * LIMIT_KB  # diff holds the /thread totals of two files

# one run in a fresh process: prints its children's peak RSS in kB
WRAPPER = r"""
import resource, subprocess, sys
r = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
print(r.returncode, len(r.stdout), resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.stderr.write(r.stderr.decode("utf-8", "replace"))
"""

CASES = [
    ("text", ["report", "{f}"]),
    ("json", ["report", "{f}", "--format", "json"]),
    ("csv", ["report", "{f}", "--format", "csv"]),
    ("html", ["report", "{f}", "--format", "html"]),
    ("--by rank", ["report", "{f}", "--by", "rank"]),
    ("--by thread", ["report", "{f}", "--by", "thread"]),
    ("diff", ["diff", "{f}", "{f}"]),
]


def peak(perfmark, args, path):
    cmd = [sys.executable, "-c", WRAPPER, perfmark] + [a.format(f=path) for a in args]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    rc, nbytes, kb = (int(x) for x in r.stdout.split())
    return rc, nbytes, kb, r.stderr


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    gen, perfmark = argv[1], argv[2]
    failed = 0
    with tempfile.TemporaryDirectory(prefix="pm-memory-") as tmp:
        files = {}
        for ranks in (SMALL, LARGE):
            files[ranks] = os.path.join(tmp, "job%d.h5" % ranks)
            r = subprocess.run([gen, files[ranks], str(ranks), str(TPR), str(R), str(E)],
                               capture_output=True, timeout=120)
            if r.returncode != 0:
                print("gen_synthetic failed: %r" % r.stderr)
                return 1
        for name, args in CASES:
            got = {}
            for ranks in (SMALL, LARGE):
                rc, nbytes, kb, err = peak(perfmark, args, files[ranks])
                if rc != 0 or nbytes == 0 or err:
                    print("FAIL %s on %d ranks: exit %d, %d bytes out, stderr %r"
                          % (name, ranks, rc, nbytes, err))
                    failed += 1
                got[ranks] = (kb, nbytes)
            grow = got[LARGE][0] - got[SMALL][0]
            limit = LIMIT_DIFF_KB if name == "diff" else LIMIT_KB
            ok = grow < limit
            failed += not ok
            print("%s %-12s peak RSS %6d kB at %4d threads, %6d kB at %5d threads: %+6d kB "
                  "(limit %d kB; %.0f B per added thread; output %d -> %d bytes)"
                  % ("ok  " if ok else "FAIL", name, got[SMALL][0], SMALL * TPR, got[LARGE][0],
                     LARGE * TPR, grow, limit, grow * 1024.0 / ((LARGE - SMALL) * TPR),
                     got[SMALL][1], got[LARGE][1]))
    print("%d failure(s)" % failed if failed else "all bounded")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
