"""Build hook of the perfmark Python package (pyproject.toml has the rest).

The package reads every path of the HDF5 file from schema.json, which is
made from the schema table, schema/pm_schema.def, never kept as a copy: here
perfmark/_schema_def.py turns the table into the JSON inside the built
package (CMake builds copy the JSON the C tool wrote instead; a test checks
that both are the same). The version is the CMake project's.

TopDown and the derived metrics need models.json, the CPU-model tables of
runtime/count/pm_cpu_models.c: C data, so it is made by compiling the
table's generator (runtime/count/pm_models_json.c) with the C compiler ($CC,
else cc) and running it. Without a compiler the package is built without
it, says so, and raises PerfmarkError when TopDown or derived metrics are
asked for.
"""
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA = os.path.join(HERE, os.pardir, "schema")
RUNTIME = os.path.join(HERE, os.pardir, "runtime")
# the generator and the table's own sources (no libpfm4): runtime/CMakeLists.txt
MODELS_SOURCES = ["count/pm_models_json.c", "count/pm_cpu_models.c", "count/pm_cpu_id.c",
                  "count/pm_cpu_match.c"]


def _generator():
    """perfmark/_schema_def.py, loaded by path: importing the package would
    need numpy, pandas and h5py at build time."""
    spec = importlib.util.spec_from_file_location(
        "_schema_def", os.path.join(HERE, "perfmark", "_schema_def.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _version():
    with open(os.path.join(HERE, os.pardir, "CMakeLists.txt"), encoding="utf-8") as f:
        m = re.search(r"project\(perfmark VERSION ([0-9.]+)", f.read())
    return m.group(1) if m else "0"


class BuildWithSchema(build_py):
    def run(self):
        super().run()
        table = os.path.join(SCHEMA, "pm_schema.def")
        if not os.path.exists(table):
            raise SystemExit("perfmark: %s not found: build the package from perfmark's "
                             "source tree (python/ next to schema/)" % table)
        out = os.path.join(self.build_lib, "perfmark", "schema.json")
        _generator().write(table, os.path.join(SCHEMA, "pm_schema.h"), out)
        why = _models_json(os.path.join(self.build_lib, "perfmark", "models.json"))
        if why:
            sys.stderr.write("perfmark: building without models.json (%s): TopDown and "
                             "derived metrics will raise PerfmarkError\n" % why)


def _models_json(out):
    """Compile and run runtime/count/pm_models_json.c into out: None, or why not."""
    cc = os.environ.get("CC") or "cc"
    sources = [os.path.join(RUNTIME, f) for f in MODELS_SOURCES]
    missing = [f for f in sources if not os.path.exists(f)]
    if missing:
        return "%s not found: build from perfmark's source tree" % missing[0]
    if not shutil.which(cc.split()[0]):
        return "no C compiler (%s)" % cc
    # runtime/'s headers are included by bare name: every folder of it (and
    # runtime/ itself), as PM_RUNTIME_INCLUDE_DIRS in CMakeLists.txt
    inc = ["-I", RUNTIME]
    for d in sorted(os.listdir(RUNTIME)):
        if os.path.isdir(os.path.join(RUNTIME, d)):
            inc += ["-I", os.path.join(RUNTIME, d)]
    with tempfile.TemporaryDirectory(prefix="perfmark-models-") as tmp:
        exe = os.path.join(tmp, "pm_models_json")
        try:
            cmd = cc.split() + ["-std=gnu11", "-O1"] + inc + ["-o", exe] + sources + \
                ["-pthread"]
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            if p.returncode != 0:
                return "%s failed: %s" % (cc, p.stderr.strip()[-500:])
            p = subprocess.run([exe, out], capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.SubprocessError) as e:
            return str(e)
        if p.returncode != 0:
            if os.path.exists(out):  # never half a table
                os.remove(out)
            return "pm_models_json failed: %s" % p.stderr.strip()[-500:]
    return None


setup(version=_version(), cmdclass={"build_py": BuildWithSchema})
