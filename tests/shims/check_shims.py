#!/usr/bin/python3
"""The compatibility shims: programs written against LIKWID's, PAPI's and
(our subset of) Caliper's headers, linked against libperfmark-<api>.so instead
of the tool's library, run under `perfmark run`; their regions must be in the
file with the visit counts the programs make by construction.

usage: /usr/bin/python3 check_shims.py BUILD_DIR CASE   (CASE: likwid papi caliper)
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "package"))
from pmcheck import check, expect_regions, main, measure, needed  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
PERFMARK = os.path.join(BUILD, "bin", "perfmark")
PROGS = os.path.join(BUILD, "tests", "shims")


def linked_to_shim(prog, api, real):
    libs = needed(prog)
    check("libperfmark-%s.so.0" % api in libs, "%s does not link the shim: %s" % (prog, libs))
    check(not any(l.startswith(real) for l in libs), "%s links the real %s: %s" % (prog, real, libs))


def case_likwid():
    prog = os.path.join(PROGS, "likwid_app")
    linked_to_shim(prog, "likwid", "liblikwid")
    n, t = 50, 3
    with tempfile.TemporaryDirectory() as tmp:
        regions, out = measure(PERFMARK, tmp, [prog, str(n), str(t)])
        check("0 failures" in out, "program output %r" % out)
        expect_regions(regions, {"compute": n * t, "compute/inner": 2 * n * t, "setup": 1},
                       per_thread={"compute": n, "compute/inner": 2 * n})
        check(sum(1 for x in regions["compute"][0] if x > 0) == t, "compute not on %d threads" % t)


def case_papi():
    prog = os.path.join(PROGS, "papi_app")
    linked_to_shim(prog, "papi", "libpapi")
    n = 20
    with tempfile.TemporaryDirectory() as tmp:
        regions, _ = measure(PERFMARK, tmp, [prog, str(n)])
        expect_regions(regions, {"main_loop": 1, "main_loop/step": n,
                                 "main_loop/step/halo": n, "main_loop/step/solve": n // 2})


def case_caliper():
    prog = os.path.join(PROGS, "caliper_app")
    linked_to_shim(prog, "caliper", "libcaliper")
    n = 30
    with tempfile.TemporaryDirectory() as tmp:
        regions, _ = measure(PERFMARK, tmp, [prog, str(n)])
        expect_regions(regions, {"init": 1, "timestep": n, "timestep/kernel": n,
                                 "timestep/kernel/wrapped": n, "timestep/exchange": n})


if __name__ == "__main__":
    sys.exit(main({"likwid": case_likwid, "papi": case_papi, "caliper": case_caliper}))
