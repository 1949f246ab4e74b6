#!/usr/bin/python3
"""OpenMP construct names that survive a rebuild (issue 22, point 1).

usage: check_names.py BUILD_DIR

omp_names.c holds two `omp parallel for` constructs in a static function
(stencil_sweep) called inside the user region `solve`, built with clang -O2
-fopenmp and no -rdynamic three times: `a` and `b` differ only in the size
of an unrelated function placed before it, `g` adds -g. Each runs under
`perfmark run -e sw` with 3 threads. Checked:
- every omp parallel region is named after stencil_sweep (the symbol table,
  not an offset into the executable): `stencil_sweep+0xOFF` in a and b,
  `stencil_sweep at omp_names.c:LINE` in g, with the two constructs' lines;
- the two constructs are two regions, each one row at solve/NAME whose
  cells hold all 3 threads' 20 visits (one tree per job: the workers are
  placed under solve without visiting it, solve has one visit);
- a and b name them identically, and `perfmark diff` of the two pairs every
  region (nothing only in one file).
Exit 77 when clang's builds are absent.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import h5py

SWEEPS = 20
THREADS = 3


def text(v):
    return v.decode() if isinstance(v, bytes) else v


def names_of(path):
    """{(kind, name): [(path, visits per thread row)]}"""
    with h5py.File(path, "r") as f:
        reg = f["regions"][:]
        visits = f["region/visits"][:]
        out = {}
        for r, row in enumerate(reg):
            out.setdefault((text(row["kind"]), text(row["name"])), []).append(
                (text(row["path"]), [int(x) for x in visits[:, r]]))
        return out


def main():
    build = os.path.abspath(sys.argv[1])
    progs = {v: os.path.join(build, "tests", "omp_names_" + v) for v in "abg"}
    if not all(os.path.exists(p) for p in progs.values()):
        print("SKIP: omp_names builds absent (no clang)")
        return 77
    perfmark = os.path.join(build, "bin", "perfmark")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PERFMARK_")}
    env["OMP_NUM_THREADS"] = str(THREADS)
    failed = []

    def ok(cond, what):
        if not cond:
            failed.append(what)
            print("FAIL: " + what)

    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for v, prog in progs.items():
            out = os.path.join(tmp, v + ".h5")
            p = subprocess.run([perfmark, "run", "-e", "sw", "-o", out, "--", prog, str(SWEEPS)],
                               env=env, capture_output=True, text=True, timeout=120)
            ok(p.returncode == 0 and os.path.exists(out),
               "%s: exit %d %s" % (v, p.returncode, p.stderr[-400:]))
            files[v] = out
        if failed:
            return 1
        omp = {}
        for v, path in files.items():
            names = names_of(path)
            par = sorted(n for k, n in names if k == "omp" and n.startswith("omp parallel"))
            omp[v] = par
            print("%s: %s" % (v, par))
            ok(len(par) == 2, "%s: %d omp parallel regions, expected 2" % (v, len(par)))
            for n in par:
                if v == "g":
                    ok(re.fullmatch(r"omp parallel stencil_sweep at omp_names\.c:\d+ \(3 threads\)", n)
                       is not None, "%s: %r is not 'stencil_sweep at omp_names.c:LINE'" % (v, n))
                else:
                    ok(re.fullmatch(r"omp parallel stencil_sweep\+0x[0-9a-f]+ \(3 threads\)", n)
                       is not None, "%s: %r is not 'stencil_sweep+0xOFF'" % (v, n))
                # one tree per job: one row, under the user region the team
                # was forked in, holding every member
                rows = names[("omp", n)]
                ok(len(rows) == 1, "%s: %r is %d regions (%s), expected one"
                   % (v, n, len(rows), [p for p, _ in rows]))
                path, per_thread = rows[0]
                ok(path == "solve/" + n, "%s: %r is at %r, expected under solve/" % (v, n, path))
                ok(sorted(per_thread) == sorted([SWEEPS] * THREADS + [0] * (len(per_thread) - THREADS)),
                   "%s: %r visits per thread %s, expected %d on each of %d threads"
                   % (v, n, per_thread, SWEEPS, THREADS))
            solve = names[("user", "solve")]
            ok(len(solve) == 1 and sorted(x for x in solve[0][1] if x) == [1],
               "%s: solve %s, expected one visit on one thread (workers are placed, not visiting)"
               % (v, solve))
        ok(omp.get("a") == omp.get("b"), "a and b name their constructs differently: %r vs %r"
           % (omp.get("a"), omp.get("b")))
        lines = [re.search(r":(\d+)", n) for n in omp.get("g", [])]
        ok(len({m.group(1) for m in lines if m}) == 2, "g: the two constructs share a line")
        p = subprocess.run([perfmark, "diff", files["a"], files["b"], "--format", "json"],
                           env=env, capture_output=True, text=True, timeout=120)
        ok(p.returncode == 0, "diff a b: exit %d %s" % (p.returncode, p.stderr[-300:]))
        if p.returncode == 0:
            j = json.loads(p.stdout)
            ok(j["only_in_a"] == [] and j["only_in_b"] == [],
               "diff a b: unpaired regions %r / %r" % (j["only_in_a"], j["only_in_b"]))
    print("FAILED: %d" % len(failed) if failed else "OK")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
