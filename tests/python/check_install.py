#!/usr/bin/python3
"""The Python package installed the two ways a user installs it, offline.

usage: /usr/bin/python3 tests/python/check_install.py BUILD_DIR PYTHON_DIR

1. `pip install --no-build-isolation --no-deps --no-index --target TMP ./python`
   from a copy of the source tree (python/, schema/, CMakeLists.txt: pip
   builds in the tree, and the real one must stay clean): setup.py makes
   schema.json from schema/pm_schema.def and models.json by compiling
   runtime/count/pm_models_json.c with cc; the installed package must carry both,
   equal to the C build's, and read a file with them (its derived metrics
   and TopDown too).
2. `cmake --install BUILD_DIR --prefix TMP/prefix`: the package lands in
   TMP/prefix/PYTHON_DIR (PERFMARK_PYTHON_DIR) with the C build's
   schema.json and models.json (also in TMP/prefix/share/perfmark), and
   reads a file with PYTHONPATH pointing there.
3. The same pip install with CC=false (no usable compiler): it still
   installs, without models.json; the package reads the file, and derived()
   and topdown() of a TopDown file raise PerfmarkError naming models.json.

Each import runs in a fresh interpreter whose only perfmark is the one under
test. Exit 0 = pass, 77 = skipped (pip missing: part 2 still must pass),
1 = failure.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
SKIP = 77

# Run in the installed package's interpreter: where perfmark came from, its
# schema.json and models.json (None when absent), one file read through it,
# and the TopDown and derived metrics of two more (None: PerfmarkError naming
# models.json).
PROBE = r"""
import json, os, sys
import perfmark
pkg = os.path.dirname(perfmark.__file__)
with open(os.path.join(pkg, "schema.json"), encoding="utf-8") as f:
    table = json.load(f)
models = None
if os.path.exists(os.path.join(pkg, "models.json")):
    with open(os.path.join(pkg, "models.json"), encoding="utf-8") as f:
        models = json.load(f)
with perfmark.open(sys.argv[1]) as run:
    s = run.summary()
    wall = float(s.query("quantity == 'wall_ns' and depth == 0")["total"].sum())
    regions = int(run.sizes["R"])


def rows(path, call):
    with perfmark.open(path) as r:
        try:
            return len(getattr(r, call)())
        except perfmark.PerfmarkError as e:
            assert "models.json" in str(e), str(e)
            return None


print(json.dumps({"package": pkg, "schema": table, "models": models, "regions": regions,
                  "wall": wall, "derived": rows(sys.argv[2], "derived"),
                  "topdown": rows(sys.argv[3], "topdown")}))
"""


def fail(msg):
    print("FAIL " + msg)
    return 1


def probe(site, fixtures, label):
    """The probe under PYTHONPATH=site only; (result, None) or (None, why)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["PYTHONPATH"] = site
    p = subprocess.run([sys.executable, "-s", "-c", PROBE] + fixtures, env=env,
                       cwd=tempfile.gettempdir(), capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        return None, "%s: import/read failed (exit %d): %s" % (label, p.returncode,
                                                               p.stderr[-1500:])
    return json.loads(p.stdout), None


def check(res, site, c_json, label, models=True):
    """models: the install must carry models.json (else: must not, and
    TopDown and derived must raise PerfmarkError)."""
    c_schema, c_models = c_json
    errors = []
    if not os.path.realpath(res["package"]).startswith(os.path.realpath(site) + os.sep):
        errors.append("%s: perfmark imported from %s, not from %s" % (label, res["package"], site))
    if res["schema"] != c_schema:
        errors.append("%s: the installed schema.json differs from the C build's" % label)
    if res["regions"] <= 0 or not res["wall"] > 0:
        errors.append("%s: read nothing from the fixture: %r" % (label, res["regions"]))
    if models:
        if res["models"] != c_models:
            errors.append("%s: the installed models.json %s" % (
                label, "is missing" if res["models"] is None else "differs from the C build's"))
        if not res["derived"] or not res["topdown"]:
            errors.append("%s: no derived metrics (%r) or TopDown rows (%r)" %
                          (label, res["derived"], res["topdown"]))
    else:
        if res["models"] is not None:
            errors.append("%s: models.json installed without a compiler" % label)
        if res["derived"] is not None or res["topdown"] is not None:
            errors.append("%s: derived()/topdown() without models.json gave rows, not "
                          "PerfmarkError" % label)
    return errors


def pip_install(tmp, fixtures, c_json, cc=None):
    """(errors, skipped reason); cc: $CC for setup.py ("false": none that works)."""
    p = subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True, text=True)
    if p.returncode != 0:
        return [], "pip is not installed for %s (Debian: python3-pip)" % sys.executable
    label = "pip" + (" (CC=%s)" % cc if cc else "")
    tree = os.path.join(tmp, "src" + ("-" + cc if cc else ""))
    ignore = shutil.ignore_patterns("build", "*.egg-info", "__pycache__", "schema.json",
                                    "models.json")
    shutil.copytree(os.path.join(SRC, "python"), os.path.join(tree, "python"), ignore=ignore)
    shutil.copytree(os.path.join(SRC, "schema"), os.path.join(tree, "schema"))
    shutil.copytree(os.path.join(SRC, "runtime"), os.path.join(tree, "runtime"))
    shutil.copy(os.path.join(SRC, "CMakeLists.txt"), tree)
    site = os.path.join(tmp, "pip-site" + ("-" + cc if cc else ""))
    env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    if cc:
        env["CC"] = cc
    cmd = [sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-deps",
           "--no-index", "--target", site, "./python"]
    p = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        return ["pip: %s exited %d:\n%s%s" % (" ".join(cmd), p.returncode, p.stdout[-2000:],
                                              p.stderr[-2000:])], None
    res, err = probe(site, fixtures, label)
    return ([err] if err else check(res, site, c_json, label, models=not cc)), None


def cmake_install(build, pydir, tmp, fixtures, c_json):
    prefix = os.path.join(tmp, "prefix")
    p = subprocess.run(["cmake", "--install", build, "--prefix", prefix], capture_output=True,
                       text=True, timeout=600)
    if p.returncode != 0:
        return ["cmake --install exited %d: %s" % (p.returncode, p.stderr[-2000:])]
    site = pydir if os.path.isabs(pydir) else os.path.join(prefix, pydir)
    if not os.path.isfile(os.path.join(site, "perfmark", "__init__.py")):
        return ["cmake --install: no perfmark package in %s" % site]
    errors = []
    if not os.path.isfile(os.path.join(prefix, "share", "perfmark", "models.json")):
        errors.append("cmake --install: no share/perfmark/models.json")
    res, err = probe(site, fixtures, "cmake --install")
    return errors + ([err] if err else check(res, site, c_json, "cmake --install"))


def main():
    if len(sys.argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    build, pydir = os.path.abspath(sys.argv[1]), sys.argv[2]
    sys.path.insert(0, os.path.join(SRC, "tests", "report"))
    import make_fixture
    c_json = []
    for name in ("schema.json", "models.json"):
        with open(os.path.join(build, "share", "perfmark", name), encoding="utf-8") as f:
            c_json.append(json.load(f))
    with tempfile.TemporaryDirectory(prefix="pm-pyinstall-") as tmp:
        fixtures = []
        for variant in ("ranks", "branch_icl", "topdown_spr"):
            fixtures.append(os.path.join(tmp, variant + ".h5"))
            make_fixture.write(fixtures[-1], variant)
        errors = cmake_install(build, pydir, tmp, fixtures, c_json)
        perrors, skipped = pip_install(tmp, fixtures, c_json)
        errors += perrors
        if not skipped:
            errors += pip_install(tmp, fixtures, c_json, cc="false")[0]
    for e in errors:
        print("FAIL " + e)
    if errors:
        return 1
    print("cmake --install: the package reads files with the C build's schema.json and "
          "models.json")
    if skipped:
        print("SKIP pip: " + skipped)
        return SKIP
    print("pip install --no-build-isolation --target: the package carries a schema.json "
          "made from pm_schema.def and a models.json compiled from runtime/, equal to the C "
          "build's; without a compiler it installs without models.json and says so")
    return 0


if __name__ == "__main__":
    sys.exit(main())
