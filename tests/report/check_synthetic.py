#!/usr/bin/python3
"""The synthetic-file generator and the report at small scale (issue 6).

usage: /usr/bin/python3 tests/report/check_synthetic.py GEN_SYNTHETIC PERFMARK

Writes a job file of 6 ranks x 3 threads x 40 regions x 8 events with
bench/gen_synthetic, checks that it is a schema-1 file h5py reads as such
(shapes, tree), then checks every number of its text, CSV and JSON report
against h5py with check_report.py's recomputation. The large run and its
timings are bench/run_report_scale.sh (timings are never asserted here).
"""
import os
import subprocess
import sys
import tempfile

import h5py

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_report  # noqa: E402

RANKS, TPR, R, E = 6, 3, 40, 8


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    gen, perfmark = argv[1], argv[2]
    ck = check_report.Checker()
    with tempfile.TemporaryDirectory(prefix="pm-synthetic-") as tmp:
        path = os.path.join(tmp, "synthetic.h5")
        r = subprocess.run([gen, path, str(RANKS), str(TPR), str(R), str(E)],
                           capture_output=True, timeout=120)
        if r.returncode != 0:
            print("gen_synthetic failed: %r" % r.stderr)
            return 1
        with h5py.File(path, "r") as f:
            T = RANKS * TPR
            ck.ok(f.attrs["schema_version"] == 1 and f.attrs["rank"] == -1 and
                  f.attrs["ranks"] == RANKS, "root attributes")
            ck.ok(f["region/counts"].shape == (T, R, E), "counts shape %r" % (f["region/counts"].shape,))
            ck.ok(f["region/enabled_ns"].shape == (T, R, 1), "enabled_ns shape")
            ck.ok(list(f["threads"]["rank"]) == [t // TPR for t in range(T)], "thread ranks")
            parents = list(f["regions"]["parent"])
            ck.ok(all(p < r for r, p in enumerate(parents)), "parents come first")
        x = check_report.check_file(ck, [perfmark, "report"], path, "synthetic")
        # the generator's own promises, seen through the report
        ck.ok(any(reg["flags"] for reg in x["regions"]), "no MULTIPLEXED cell")
        ck.ok(all(reg["by_thread"]["exclusive_ns"]["total"] > 0 for reg in x["regions"]),
              "a parent not longer than its children")
        ck.ok(all(reg["ipc"] is not None for reg in x["regions"]), "IPC missing")
    if ck.errors:
        print("check_synthetic: %d of %d checks FAILED:" % (len(ck.errors), ck.checks))
        for e in ck.errors[:100]:
            print("  " + e)
        return 1
    print("check_synthetic: all %d checks passed" % ck.checks)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
