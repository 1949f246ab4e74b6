#!/usr/bin/python3
"""The package's TopDown and derived metrics against `perfmark report --format json`.

usage: /usr/bin/python3 tests/python/check_topdown.py BUILD_DIR

With BUILD_DIR/python first on sys.path (the package as the build lays it
out, with the models.json the C build wrote from runtime/count/pm_cpu_models.c),
for every valid fixture of tests/report/make_fixture.py (TopDown by every
method: perf_metrics levels 1 and 2, skylake, zen4, zen5, arm, atom; a
missing level-1 event, a missing level-2 event, a hybrid CPU; the branch
group's derived metrics) and for copies with an unknown cpu_model or
TopDown method:

- topdown_info() equals the report's "topdown" (method, levels,
  file_levels, model, events, problem, note), and a file without TopDown
  gives method None and an empty topdown();
- every region's and the whole run's TopDown (cells used, slot counts,
  ratios, cells left out, estimate, pcore_share) equals the report's to the
  last digit (the report prints %.17g), NaN where it prints null, and the
  frame is empty where the report has no breakdown;
- every derived metric of every region (value, estimate, untrusted) equals
  the report's, and derived() is empty where the report has none;
- the same for a summary file of each TopDown fixture (bench/make_summary:
  the job's TopDown read from /summary's tables);
- the same with PERFMARK_REPORT_BLOCK=1 (blocks of one thread row joined)
  on the fixtures whose sums are doubles;
- a package without models.json raises PerfmarkError saying so wherever
  the tables are needed (topdown() of a file with TopDown, derived()), and
  nothing else; topdown() of a file without TopDown stays empty.

Exit 0 = pass, 1 = mismatches (each printed).
"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(SRC, "tests", "report"))
import make_fixture  # noqa: E402
from check_python import Checker, build_arg, report_json  # noqa: E402
from check_report import GOOD_VARIANTS  # noqa: E402

BLOCK_VARIANTS = ["topdown_spr", "topdown_skl", "topdown_adl", "topdown_arm", "branch_icl"]
# copies of a fixture with one root attribute changed: (name, variant, attr, value)
ALTERED = [("unknown_model", "topdown_zen4", "cpu_model", "no_such_cpu"),
           ("unknown_method", "topdown_icl", "topdown_method", "bogus"),
           ("model_mismatch", "topdown_arm", "cpu_model", "amd64_fam19h_zen4"),
           ("no_model_attr", "branch_icl", "cpu_model", "")]
INFO_KEYS = ("method", "levels", "file_levels", "model", "events", "problem", "note")


def check_stat(ck, got, want, where):
    """One TopDown stat: a row of topdown() against the report's object."""
    ck.same(got["cells_used"], want["cells_used"], where + ".cells_used")
    for node, n in want["slots"].items():
        col = "slots" if node == "slots" else "slots_" + node
        ck.ok(col in got.index, "%s.slots: no column %s" % (where, col)) and \
            ck.same(got[col], n, "%s.slots.%s" % (where, node))
    nodes = [k for k in want["slots"] if k != "slots"]
    for node in nodes:
        ck.same(got[node], None if want["ratios"] is None else want["ratios"][node],
                "%s.ratios.%s" % (where, node))
    shown = [c for c in got.index if c.startswith("slots_")]
    ck.ok(len(shown) == len(nodes), "%s: columns %s, report %s" % (where, shown, nodes))
    for k, n in want["cells_left_out"].items():
        ck.same(got["left_out_" + k], n, "%s.cells_left_out.%s" % (where, k))
    ck.same(got["estimate"], want["estimate"], where + ".estimate")
    if "pcore_share" in want:
        ck.ok("pcore_share" in got.index, where + ": no pcore_share column") and \
            ck.same(got["pcore_share"], want["pcore_share"], where + ".pcore_share")
    else:
        ck.ok("pcore_share" not in got.index, where + ": pcore_share, report has none")


def check_topdown(ck, run, j):
    info = run.topdown_info()
    td = run.topdown()
    want = j.get("topdown")
    if want is None:
        ck.ok(info["method"] is None, "topdown_info: method %r, report has no topdown" %
              info["method"])
        ck.ok(len(td) == 0, "topdown(): %d rows, report has no topdown" % len(td))
        for reg in j["regions"]:
            ck.ok("topdown" not in reg, "regions[%d]: a topdown in the report" % reg["index"])
        return
    for k in INFO_KEYS:
        ck.ok(info[k] == want[k], "topdown.%s: %r, report %r" % (k, info[k], want[k]))
    ck.ok(td.attrs.get("topdown") == info, "topdown().attrs['topdown'] is not topdown_info()")
    if want["whole_run"] is None:
        ck.ok(len(td) == 0, "topdown(): %d rows, report has no breakdown" % len(td))
        for reg in j["regions"]:
            ck.ok(reg["topdown"] is None, "regions[%d].topdown not null" % reg["index"])
        return
    ck.ok(len(td) == len(j["regions"]) + 1, "topdown(): %d rows, report %d regions + 1" %
          (len(td), len(j["regions"])))
    for reg in j["regions"]:
        w = "regions[%d].topdown" % reg["index"]
        rows = td[td["index"] == reg["index"]]
        if ck.ok(len(rows) == 1, w + ": no row"):
            ck.same(rows.iloc[0]["path"], reg["path"], w + ".path")
            ck.same(info["levels"], reg["topdown"]["levels"], w + ".levels")
            check_stat(ck, rows.iloc[0], reg["topdown"], w)
    whole = td[td["index"].isna()]
    if ck.ok(len(whole) == 1, "topdown(): no whole-run row"):
        check_stat(ck, whole.iloc[0], want["whole_run"], "topdown.whole_run")
    for k, dt in (("index", "Int64"), ("row", "Int64"), ("slots", "uint64"),
                  ("cells_used", "int64"), ("estimate", "bool")):
        ck.ok(str(td[k].dtype) == dt, "topdown().%s: dtype %s, not %s" % (k, td[k].dtype, dt))


def check_derived(ck, run, j):
    d = run.derived()
    n = 0
    for reg in j["regions"]:
        want = reg.get("derived", {})
        got = d[d["index"] == reg["index"]]
        ck.ok(list(got["metric"]) == list(want), "regions[%d].derived: metrics %s, report %s" %
              (reg["index"], list(got["metric"]), list(want)))
        for _, row in got.iterrows():
            w = "regions[%d].derived.%s" % (reg["index"], row["metric"])
            if not ck.ok(row["metric"] in want, w + ": not in the report"):
                continue
            for k in ("value", "estimate", "untrusted"):
                ck.same(row[k], want[row["metric"]][k], "%s.%s" % (w, k))
        n += len(want)
    ck.ok(len(d) == n, "derived(): %d rows, report %d metrics" % (len(d), n))
    for k, dt in (("index", "int64"), ("value", "float64"), ("estimate", "bool")):
        ck.ok(str(d[k].dtype) == dt, "derived().%s: dtype %s, not %s" % (k, d[k].dtype, dt))


def check_file(ck, perfmark, path, name):
    import perfmark as pm
    ck.scope = name + ": "
    before = ck.checks
    try:
        j = report_json(perfmark, path)
        with pm.open(path) as run:
            check_topdown(ck, run, j)
            check_derived(ck, run, j)
    except Exception as e:  # a crash of one file must not hide the others
        import traceback
        ck.ok(False, "raised %s: %s\n%s" % (type(e).__name__, e, traceback.format_exc()))
    print("%s: %d checks" % (name, ck.checks - before))


def altered(tmp, name, variant, attr, value):
    import h5py
    src = os.path.join(tmp, variant + ".h5")
    path = os.path.join(tmp, name + ".h5")
    shutil.copyfile(src, path)
    with h5py.File(path, "r+") as f:
        f.attrs[attr] = value
    return path


# Run in a child interpreter against a copy of the package without
# models.json: the error must be PerfmarkError, with the reason.
NO_MODELS = r"""
import sys
import perfmark
with perfmark.open(sys.argv[1]) as run:
    run.summary()
    for call in sys.argv[2].split(","):
        try:
            getattr(run, call)()
        except perfmark.PerfmarkError as e:
            assert "models.json" in str(e) and "\n" not in str(e), repr(str(e))
            continue
        raise SystemExit("%s() raised nothing" % call)
    # a file without TopDown needs no table for it
    assert "topdown" in sys.argv[2] or len(run.topdown()) == 0
print("ok")
"""


def check_no_models(ck, build, tmp):
    ck.scope = "without models.json: "
    pkg = os.path.join(tmp, "pkg")
    shutil.copytree(os.path.join(build, "python", "perfmark"), os.path.join(pkg, "perfmark"),
                    ignore=shutil.ignore_patterns("__pycache__", "models.json"))
    env = dict(os.environ, PYTHONPATH=pkg)
    for variant, calls in (("topdown_spr", "topdown,derived,topdown_info"),
                           ("branch_icl", "derived")):
        p = subprocess.run([sys.executable, "-c", NO_MODELS, os.path.join(tmp, variant + ".h5"),
                            calls],
                           capture_output=True, env=env, timeout=120)
        ck.ok(p.returncode == 0 and p.stdout.strip() == b"ok", "%s: exit %d: %s" %
              (variant, p.returncode, (p.stdout + p.stderr).decode()[-800:]))


def main():
    build = build_arg(__doc__)
    if build is None:
        return 2
    os.environ.pop("PERFMARK_REPORT_BLOCK", None)
    perfmark = os.path.join(build, "bin", "perfmark")
    ck = Checker()
    with tempfile.TemporaryDirectory(prefix="pm-topdown-") as tmp:
        for variant in GOOD_VARIANTS:
            path = os.path.join(tmp, variant + ".h5")
            make_fixture.write(path, variant)
            check_file(ck, perfmark, path, variant)
        for name, variant, attr, value in ALTERED:
            check_file(ck, perfmark, altered(tmp, name, variant, attr, value), name)
        # summary files of them (bench/make_summary, the engine a job runs):
        # the job's TopDown from /summary's tables, the report's to the digit
        make = os.path.join(build, "bin", "make_summary")
        for variant in GOOD_VARIANTS:
            if not variant.startswith("topdown_") or not os.path.exists(make):
                continue
            path = os.path.join(tmp, variant + ".h5")
            summ = os.path.join(tmp, variant + "_summary.h5")
            shutil.copy(path, summ)
            p = subprocess.run([make, path, summ], capture_output=True, text=True)
            if ck.ok(p.returncode == 0, "make_summary %s: %s" % (variant, p.stderr[-500:])):
                check_file(ck, perfmark, summ, variant + " (summary)")
        os.environ["PERFMARK_REPORT_BLOCK"] = "1"
        for variant in BLOCK_VARIANTS:
            check_file(ck, perfmark, os.path.join(tmp, variant + ".h5"), variant + " (blocks)")
        del os.environ["PERFMARK_REPORT_BLOCK"]
        check_no_models(ck, build, tmp)
    return ck.finish()


if __name__ == "__main__":
    sys.exit(main())
