"""The frame of the checkers that run one case per CTest (tests/attach,
tests/node, tests/series, tests/sampling): check() and its Failure, Skip,
an environment without perfmark's own variables, and run_cases(), which
calls case_<NAME> in a temporary directory and turns the outcome into the
exit status (0 pass, 1 failure, 77 skipped with the reason printed).
"""
import os
import sys
import tempfile

SKIP = 77


class Failure(Exception):
    pass


class Skip(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failure(msg)


def clean_env(extra=None):
    """os.environ without PERFMARK_* and LD_PRELOAD, plus extra."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PERFMARK_") and
           k != "LD_PRELOAD"}
    env.update(extra or {})
    return env


def run_cases(name, cases, doc, setup, nargs=1):
    """argv: nargs arguments, then CASE. setup(args, tmp) gives the
    arguments of cases["case_" + CASE]; a case returning 77 or raising Skip
    is skipped."""
    if len(sys.argv) != nargs + 2:
        sys.stderr.write(doc)
        return 2
    case = sys.argv[-1]
    fn = cases.get("case_" + case)
    if not fn:
        sys.stderr.write("unknown case %s\n" % case)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        try:
            rc = fn(*setup(sys.argv[1:-1], tmp))
        except Skip as e:
            print("skip %s_%s: %s" % (name, case, e))
            return SKIP
        except Failure as e:
            print("FAIL %s_%s: %s" % (name, case, e))
            return 1
    if rc == SKIP:
        return SKIP
    print("PASS %s_%s" % (name, case))
    return 0
