#!/usr/bin/python3
"""OpenMP construct names that survive a rebuild and an edit (issue 22,
point 1; issue 41, point 3).

usage: check_names.py BUILD_DIR

omp_names.c holds two `omp parallel for` constructs in a static function
(stencil_sweep) called inside the user region `solve`. It is built with
clang (LLVM's libomp: OMPT) and with gcc (GCC's libgomp: its entry points),
-O2 -fopenmp and no -rdynamic, four times each: `a` and `b` differ only in
the size of an unrelated function placed before it, `e` adds code inside
stencil_sweep before its constructs (the user's edit), `g` adds -g. Each
runs under `perfmark run -e sw` with 3 threads. Checked, per compiler:
- a, b and e name the two constructs `stencil_sweep` and `stencil_sweep#1`
  (the function from the symbol table, then the construct's ordinal in it),
  identically; g names them `stencil_sweep at omp_names.c:LINE` and
  `stencil_sweep#1 at omp_names.c:LINE'`, two lines;
- the two constructs are two regions, each one row at solve/NAME whose
  cells hold all 3 threads' 20 visits (one tree per job: the workers are
  placed under solve without visiting it, solve has one visit);
- `perfmark diff` of a and b, and of a and e, pairs every region.
And the clang and gcc builds name them alike. Exit 77 when neither
compiler's builds exist.
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
    tags = [t for t in ("clang", "gcc")
            if all(os.path.exists(os.path.join(build, "tests", "omp_names_%s_%s" % (t, v)))
                   for v in "abeg")]
    if not tags:
        print("SKIP: omp_names builds absent (neither clang nor gcc with OpenMP)")
        return 77
    perfmark = os.path.join(build, "bin", "perfmark")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PERFMARK_")}
    env["OMP_NUM_THREADS"] = str(THREADS)
    failed = []

    def ok(cond, what):
        if not cond:
            failed.append(what)
            print("FAIL: " + what)

    plain = ["omp parallel stencil_sweep (3 threads)", "omp parallel stencil_sweep#1 (3 threads)"]
    by_tag = {}
    with tempfile.TemporaryDirectory() as tmp:
        for tag in tags:
            files, omp = {}, {}
            for v in "abeg":
                prog = os.path.join(build, "tests", "omp_names_%s_%s" % (tag, v))
                out = os.path.join(tmp, "%s_%s.h5" % (tag, v))
                p = subprocess.run([perfmark, "run", "-e", "sw", "-o", out, "--", prog,
                                    str(SWEEPS)], env=env, capture_output=True, text=True,
                                   timeout=120)
                ok(p.returncode == 0 and os.path.exists(out),
                   "%s %s: exit %d %s" % (tag, v, p.returncode, p.stderr[-400:]))
                files[v] = out
            if failed:
                return 1
            for v, path in files.items():
                what = "%s %s" % (tag, v)
                names = names_of(path)
                par = sorted(n for k, n in names if k == "omp" and n.startswith("omp parallel"))
                omp[v] = par
                print("%s: %s" % (what, par))
                if v == "g":
                    ok(len(par) == 2 and re.fullmatch(
                        r"omp parallel stencil_sweep at omp_names\.c:\d+ \(3 threads\)", par[0])
                       and re.fullmatch(r"omp parallel stencil_sweep#1 at omp_names\.c:\d+ "
                                        r"\(3 threads\)", par[1]),
                       "%s: %r are not 'stencil_sweep[#1] at omp_names.c:LINE'" % (what, par))
                else:
                    ok(par == plain, "%s: %r, want %r" % (what, par, plain))
                for n in par:
                    # one tree per job: one row, under the user region the
                    # team was forked in, holding every member
                    rows = names[("omp", n)]
                    ok(len(rows) == 1, "%s: %r is %d regions (%s), expected one"
                       % (what, n, len(rows), [p for p, _ in rows]))
                    path, per_thread = rows[0]
                    ok(path == "solve/" + n, "%s: %r is at %r, expected under solve/"
                       % (what, n, path))
                    want = [SWEEPS] * THREADS + [0] * (len(per_thread) - THREADS)
                    ok(sorted(per_thread) == sorted(want),
                       "%s: %r visits per thread %s, expected %d on each of %d threads"
                       % (what, n, per_thread, SWEEPS, THREADS))
                solve = names[("user", "solve")]
                ok(len(solve) == 1 and sorted(x for x in solve[0][1] if x) == [1],
                   "%s: solve %s, expected one visit on one thread (workers are placed, "
                   "not visiting)" % (what, solve))
            lines = [re.search(r":(\d+)", n) for n in omp.get("g", [])]
            ok(len({m.group(1) for m in lines if m}) == 2,
               "%s g: the two constructs share a line" % tag)
            for other in "be":
                p = subprocess.run([perfmark, "diff", files["a"], files[other], "--format",
                                    "json"], env=env, capture_output=True, text=True,
                                   timeout=120)
                ok(p.returncode == 0, "%s diff a %s: exit %d %s"
                   % (tag, other, p.returncode, p.stderr[-300:]))
                if p.returncode == 0:
                    j = json.loads(p.stdout)
                    ok(j["only_in_a"] == [] and j["only_in_b"] == [],
                       "%s diff a %s: unpaired regions %r / %r"
                       % (tag, other, j["only_in_a"], j["only_in_b"]))
            by_tag[tag] = omp
    if len(by_tag) == 2:
        ok(by_tag["clang"]["a"] == by_tag["gcc"]["a"], "clang and gcc name them differently: "
           "%r vs %r" % (by_tag["clang"]["a"], by_tag["gcc"]["a"]))
    else:
        print("only %s built: the two compilers' names not compared" % tags)
    print("FAILED: %d" % len(failed) if failed else "OK")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
