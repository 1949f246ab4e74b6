#!/usr/bin/python3
"""docs/python.md's worked session, run as written and checked.

usage: /usr/bin/python3 tests/python/check_python_docs.py BUILD_DIR

Every ```sh and ```python block between <!-- session:begin --> and
<!-- session:end --> runs in order, in a fresh directory where `build` is
BUILD_DIR (the page's commands name build/bin/...): the shell blocks with
bash -e, the Python blocks in one namespace, with BUILD_DIR/python first on
sys.path. Then its results are checked against the C tool on the files the
session itself measured:

- `worst` is the region `perfmark report --format json` shows with the
  largest wall-time max/mean across ranks (ranks_entered > 1; the first in
  tree order on a tie), with the report's max rank;
- time_per_rank.png is a PNG, and its bars are the entered ranks' wall time
  of that region: as many as the report's ranks_entered, summing to the
  report's total, the largest being the report's max;
- the flags printed are those of the report's flags_summary;
- `d` has the regressions `perfmark diff job.h5 job-1thread.h5 --metric
  time --threshold 10 --format json` counts, and its exit status agrees.
- the guide's Python example and the schema page's raw-h5py one run on the
  session's files, the raw one printing the report's page-fault totals.
A page without the markers, or with fewer blocks than the session needs,
fails. Exit 0 = pass, 1 = failures (each printed).
"""
import contextlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
DOC = os.path.join(SRC, "docs", "python.md")
sys.path.insert(0, HERE)
from check_python import MPI_ENV, Checker, build_arg  # noqa: E402


def session_blocks(text):
    """[(language, code)] of the fenced blocks between the markers."""
    m = re.search(r"<!-- session:begin -->(.*?)<!-- session:end -->", text, re.S)
    if not m:
        return []
    return re.findall(r"```(sh|python)\n(.*?)```", m.group(1), re.S)


def run_session(ck, blocks, tmp, env):
    ns = {"__name__": "__session__"}
    out = io.StringIO()
    for lang, code in blocks:
        if lang == "sh":
            p = subprocess.run(["bash", "-e", "-c", code], cwd=tmp, env=env,
                               capture_output=True, timeout=600)
            if not ck.ok(p.returncode == 0, "sh block exit %d: %s\n%s" % (
                    p.returncode, code, p.stderr.decode()[-800:])):
                return None, out.getvalue()
            continue
        cwd = os.getcwd()
        os.chdir(tmp)
        try:
            with contextlib.redirect_stdout(out):
                exec(compile(code, DOC, "exec"), ns)  # noqa: S102 - the page's own code
        except Exception as e:  # noqa: BLE001 - any failure of the page is the finding
            ck.ok(False, "python block raised %s: %s\n%s" % (type(e).__name__, e, code))
            return None, out.getvalue()
        finally:
            os.chdir(cwd)
    return ns, out.getvalue()


def report(build, path, *opts):
    p = subprocess.run([os.path.join(build, "bin", "perfmark")] + list(opts) + [path],
                       capture_output=True, timeout=300)
    return p.returncode, p.stdout.decode()


def check_results(ck, build, tmp, ns, printed):
    perfmark = os.path.join(build, "bin", "perfmark")
    job = os.path.join(tmp, "job.h5")
    j = json.loads(subprocess.run([perfmark, "report", job, "--format", "json"],
                                  capture_output=True, timeout=300).stdout.decode())
    # the most imbalanced region, as the report sees it
    best = None
    for x in j["regions_by_rank"]:
        imb = x["wall_ns"]["imbalance"]
        if x["ranks_entered"] > 1 and imb is not None and (best is None or
                                                           imb > best["wall_ns"]["imbalance"]):
            best = x
    if not ck.ok(best is not None, "the report has no region entered by two ranks"):
        return
    worst = ns["worst"]
    ck.same(worst.path, best["path"], "worst.path")
    ck.same(float(worst.rank_imbalance), best["wall_ns"]["imbalance"], "worst.rank_imbalance")
    ck.same(int(worst.max_rank), best["wall_ns"]["max_rank"], "worst.max_rank")
    ck.ok(("most imbalanced: %s" % best["path"]) in printed, "the printed verdict names it")
    # the plot
    png = os.path.join(tmp, "time_per_rank.png")
    ck.ok(os.path.exists(png) and open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
          and os.path.getsize(png) > 1000, "time_per_rank.png is a PNG")
    heights = [b.get_height() for b in ns["ax"].patches]
    ck.same(len(heights), best["ranks_entered"], "bars")
    if heights:
        ck.ok(abs(sum(heights) * 1e6 - best["wall_ns"]["total"]) <= 1e-6 * best["wall_ns"]["total"],
              "bars sum to %r ms, report %r ns" % (sum(heights), best["wall_ns"]["total"]))
        ck.ok(abs(max(heights) * 1e6 - best["wall_ns"]["max"]) <= 1e-6 * best["wall_ns"]["max"],
              "tallest bar %r ms, report max %r ns" % (max(heights), best["wall_ns"]["max"]))
    # the flags
    where = [flag for flag, n in j["flags_summary"].items() if n]
    if where:
        for flag in where:
            ck.ok(flag in printed, "flag %s printed" % flag)
    else:
        ck.ok("all cells clean" in printed, "'all cells clean' printed")
    # the comparison
    p = subprocess.run([perfmark, "diff", job, os.path.join(tmp, "job-1thread.h5"),
                        "--metric", "time", "--threshold", "10", "--format", "json"],
                       capture_output=True, timeout=300)
    dj = json.loads(p.stdout.decode())
    d = ns["d"]
    ck.same(len(d.regressions), dj["regressions"], "d.regressions")
    ck.same(p.returncode, 1 if dj["regressions"] else 0, "perfmark diff exit status")
    ck.same(len(d.table), sum(len(r["metrics"]) for r in dj["regions"]), "d.table rows")
    ck.ok(("regions slower by more than 10 %% (units: %s)" % dj["unit"]) in printed,
          "the comparison's verdict printed")
    ck.same(d.only_in_a, dj["only_in_a"], "d.only_in_a")


def section_code(path, heading):
    """The first ```python block after `heading` in a doc page, or None."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if heading not in text:
        return None
    m = re.search(r"```python\n(.*?)```", text[text.index(heading):], re.S)
    return m.group(1) if m else None


def check_snippets(ck, build, tmp, env):
    """The guide's package example and the schema page's raw-h5py one, on
    the session's files; the raw one's totals are the report's."""
    import shutil
    for src, dst in (("job.h5", "perfmark-1234.h5"), ("job.h5", "before.h5"),
                     ("job-1thread.h5", "after.h5")):
        shutil.copy(os.path.join(tmp, src), os.path.join(tmp, dst))
    outs = {}
    for doc, heading in (("guide.md", "## Reading the file from Python"),
                         ("hdf5-schema.md", "## Reading with h5py")):
        code = section_code(os.path.join(SRC, "docs", doc), heading)
        if not ck.ok(code is not None, "%s: no python block under '%s'" % (doc, heading)):
            continue
        p = subprocess.run([sys.executable, "-c", code], cwd=tmp, env=env, capture_output=True,
                           timeout=300)
        ck.ok(p.returncode == 0, "%s's example: exit %d: %s" % (doc, p.returncode,
                                                                p.stderr.decode()[-800:]))
        outs[doc] = p.stdout.decode()
    if "hdf5-schema.md" not in outs:
        return
    j = json.loads(subprocess.run([os.path.join(build, "bin", "perfmark"), "report",
                                   os.path.join(tmp, "perfmark-1234.h5"), "--format", "json"],
                                  capture_output=True, timeout=300).stdout.decode())
    lines = outs["hdf5-schema.md"].splitlines()
    regions = sorted(j["regions"], key=lambda x: x["row"])
    ck.same(len(lines), len(regions), "the raw example's lines")
    for line, reg in zip(lines, regions):
        want = reg["events"]["page-faults"]["total"]
        got = line[len(reg["path"]):].split()
        ck.ok(line.startswith(reg["path"]) and got and float(got[0]) == float(want),
              "raw h5py: %r, report %s %r" % (line, reg["path"], want))


def main():
    build = build_arg(__doc__)
    if build is None:
        return 2
    ck = Checker()
    with open(DOC, encoding="utf-8") as f:
        blocks = session_blocks(f.read())
    langs = [b[0] for b in blocks]
    if not ck.ok(langs.count("sh") >= 1 and langs.count("python") >= 5,
                 "docs/python.md: the session's blocks are missing (%s)" % langs):
        print("FAIL " + ck.errors[0])
        return 1
    env = {k: v for k, v in os.environ.items() if not k.startswith("PERFMARK_")}
    env.update(MPI_ENV)
    env["PYTHONPATH"] = os.path.join(build, "python")
    with tempfile.TemporaryDirectory(prefix="pm-python-docs-") as tmp:
        os.symlink(build, os.path.join(tmp, "build"))
        ns, printed = run_session(ck, blocks, tmp, env)
        sys.stdout.write(printed)
        if ns is not None:
            check_results(ck, build, tmp, ns, printed)
            check_snippets(ck, build, tmp, env)
    return ck.finish()


if __name__ == "__main__":
    sys.exit(main())
