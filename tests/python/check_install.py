#!/usr/bin/python3
"""The Python package installed the two ways a user installs it, offline.

usage: /usr/bin/python3 tests/python/check_install.py BUILD_DIR PYTHON_DIR

1. `pip install --no-build-isolation --no-deps --no-index --target TMP ./python`
   from a copy of the source tree (python/, schema/, CMakeLists.txt: pip
   builds in the tree, and the real one must stay clean): setup.py makes
   schema.json from schema/pm_schema.def; the installed package must carry
   it, equal to the C build's, and read a file with it.
2. `cmake --install BUILD_DIR --prefix TMP/prefix`: the package lands in
   TMP/prefix/PYTHON_DIR (PERFMARK_PYTHON_DIR) with the C build's
   schema.json, and reads a file with PYTHONPATH pointing there.

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
# schema.json, and one file read through it.
PROBE = r"""
import json, os, sys
import perfmark
pkg = os.path.dirname(perfmark.__file__)
with open(os.path.join(pkg, "schema.json"), encoding="utf-8") as f:
    table = json.load(f)
with perfmark.open(sys.argv[1]) as run:
    s = run.summary()
    wall = float(s.query("quantity == 'wall_ns' and depth == 0")["total"].sum())
print(json.dumps({"package": pkg, "schema": table, "regions": int(run.sizes["R"]),
                  "wall": wall}))
"""


def fail(msg):
    print("FAIL " + msg)
    return 1


def probe(site, fixture, label):
    """The probe under PYTHONPATH=site only; (result, None) or (None, why)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["PYTHONPATH"] = site
    p = subprocess.run([sys.executable, "-s", "-c", PROBE, fixture], env=env,
                       cwd=tempfile.gettempdir(), capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        return None, "%s: import/read failed (exit %d): %s" % (label, p.returncode,
                                                               p.stderr[-1500:])
    return json.loads(p.stdout), None


def check(res, site, c_schema, label):
    errors = []
    if not os.path.realpath(res["package"]).startswith(os.path.realpath(site) + os.sep):
        errors.append("%s: perfmark imported from %s, not from %s" % (label, res["package"], site))
    if res["schema"] != c_schema:
        errors.append("%s: the installed schema.json differs from the C build's" % label)
    if res["regions"] <= 0 or not res["wall"] > 0:
        errors.append("%s: read nothing from the fixture: %r" % (label, res))
    return errors


def pip_install(tmp, fixture, c_schema):
    """(errors, skipped reason)."""
    p = subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True, text=True)
    if p.returncode != 0:
        return [], "pip is not installed for %s (Debian: python3-pip)" % sys.executable
    tree = os.path.join(tmp, "src")
    ignore = shutil.ignore_patterns("build", "*.egg-info", "__pycache__", "schema.json")
    shutil.copytree(os.path.join(SRC, "python"), os.path.join(tree, "python"), ignore=ignore)
    shutil.copytree(os.path.join(SRC, "schema"), os.path.join(tree, "schema"))
    shutil.copy(os.path.join(SRC, "CMakeLists.txt"), tree)
    site = os.path.join(tmp, "pip-site")
    env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    cmd = [sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-deps",
           "--no-index", "--target", site, "./python"]
    p = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        return ["pip: %s exited %d:\n%s%s" % (" ".join(cmd), p.returncode, p.stdout[-2000:],
                                              p.stderr[-2000:])], None
    res, err = probe(site, fixture, "pip")
    return ([err] if err else check(res, site, c_schema, "pip")), None


def cmake_install(build, pydir, tmp, fixture, c_schema):
    prefix = os.path.join(tmp, "prefix")
    p = subprocess.run(["cmake", "--install", build, "--prefix", prefix], capture_output=True,
                       text=True, timeout=600)
    if p.returncode != 0:
        return ["cmake --install exited %d: %s" % (p.returncode, p.stderr[-2000:])]
    site = pydir if os.path.isabs(pydir) else os.path.join(prefix, pydir)
    if not os.path.isfile(os.path.join(site, "perfmark", "__init__.py")):
        return ["cmake --install: no perfmark package in %s" % site]
    res, err = probe(site, fixture, "cmake --install")
    return [err] if err else check(res, site, c_schema, "cmake --install")


def main():
    if len(sys.argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    build, pydir = os.path.abspath(sys.argv[1]), sys.argv[2]
    sys.path.insert(0, os.path.join(SRC, "tests", "report"))
    import make_fixture
    with open(os.path.join(build, "share", "perfmark", "schema.json"), encoding="utf-8") as f:
        c_schema = json.load(f)
    with tempfile.TemporaryDirectory(prefix="pm-pyinstall-") as tmp:
        fixture = os.path.join(tmp, "ranks.h5")
        make_fixture.write(fixture, "ranks")
        errors = cmake_install(build, pydir, tmp, fixture, c_schema)
        perrors, skipped = pip_install(tmp, fixture, c_schema)
        errors += perrors
    for e in errors:
        print("FAIL " + e)
    if errors:
        return 1
    print("cmake --install: the package reads files with the C build's schema.json")
    if skipped:
        print("SKIP pip: " + skipped)
        return SKIP
    print("pip install --no-build-isolation --target: the package carries a schema.json "
          "made from pm_schema.def, equal to the C build's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
