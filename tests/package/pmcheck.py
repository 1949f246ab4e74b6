"""Shared by tests/package and tests/shims: run a program under a perfmark
CLI and read the file back with h5py (ground truth is in the callers)."""
import os
import subprocess
import sys

import h5py

SKIP = 77
UNBALANCED = 0x10


class Failure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failure(msg)


def run(args, env=None, cwd=None):
    full = {k: v for k, v in os.environ.items() if not k.startswith("PERFMARK_")}
    full.update(env or {})
    p = subprocess.run(args, env=full, cwd=cwd, capture_output=True, text=True,
                       errors="replace", timeout=300)
    if p.returncode != 0:
        raise Failure("%s exited %d\nstdout: %s\nstderr: %s" % (
            " ".join(args), p.returncode, p.stdout[-3000:], p.stderr[-3000:]))
    return p


def text(x):
    return x.decode("utf-8", "replace") if isinstance(x, bytes) else str(x)


def omp_short(path):
    """A path with each OpenMP construct as `{omp FUNC}`: `omp parallel
    work#1 at a.c:12 (4 threads)/solve` -> `{omp work}/solve` (the callers'
    programs have one construct per function; tests/omp checks full names)."""
    parts = []
    for part in path.split("/"):
        if part.startswith("omp parallel "):
            part = "{omp %s}" % part.split(" ")[2].split("#")[0].split("+")[0]
        parts.append(part)
    return "/".join(parts)


def measure(perfmark, tmp, prog_args, name="out.h5"):
    """Run prog_args under `perfmark run -e sw`; return {path: (visits per
    thread row, flags per thread row)} of the user regions, their paths as
    omp_short() gives them, and the run's stdout."""
    out = os.path.join(tmp, name)
    p = run([perfmark, "run", "-e", "sw", "-o", out, "--"] + prog_args,
            env={"TMPDIR": tmp}, cwd=tmp)
    check(os.path.exists(out), "no file %s written; stderr: %s" % (out, p.stderr[-2000:]))
    with h5py.File(out, "r") as f:
        paths = [text(x) for x in f["regions"]["path"]]
        kinds = [text(x) for x in f["regions"]["kind"]]
        visits = f["region/visits"][:]
        flags = f["region/flags"][:]
    regions = {}
    for r, path in enumerate(paths):
        if kinds[r] == "user":
            regions[omp_short(path)] = (visits[:, r], flags[:, r])
    return regions, p.stdout


def expect_regions(regions, want, per_thread=None):
    """want: {path: total visits}. Exactly these user regions, none
    UNBALANCED. per_thread: {path: visits} each visiting row must have."""
    check(set(regions) == set(want), "regions %s%s, want %s" % (
        sorted(regions)[:20], " ..." if len(regions) > 20 else "", sorted(want)))
    for path, total in want.items():
        v, fl = regions[path]
        check(int(v.sum()) == total, "%s: %d visits, want %d" % (path, int(v.sum()), total))
        check(not (fl & UNBALANCED).any(), "%s flagged UNBALANCED" % path)
    for path, n in (per_thread or {}).items():
        v, _ = regions[path]
        rows = [int(x) for x in v if x > 0]
        check(rows and all(x == n for x in rows), "%s per thread %s, want %d each" % (path, rows, n))
    print("regions ok:", ", ".join("%s=%d" % (p, want[p]) for p in sorted(want)))


def needed(binary):
    """DT_NEEDED entries of an ELF file (readelf, binutils)."""
    p = run(["readelf", "-d", binary])
    return [l.split("[", 1)[1].split("]", 1)[0] for l in p.stdout.splitlines() if "(NEEDED)" in l]


def main(cases):
    name = sys.argv[2]
    try:
        rc = cases[name]()
    except Failure as e:
        print("FAIL:", e)
        return 1
    return rc or 0
