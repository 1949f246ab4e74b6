"""Build hook of the perfmark Python package (pyproject.toml has the rest).

The package reads every path of the HDF5 file from schema.json, which is
made from the schema table, schema/pm_schema.def, never kept as a copy: here
perfmark/_schema_def.py turns the table into the JSON inside the built
package (CMake builds copy the JSON the C tool wrote instead; a test checks
that both are the same). The version is the CMake project's.
"""
import importlib.util
import os
import re

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA = os.path.join(HERE, os.pardir, "schema")


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


setup(version=_version(), cmdclass={"build_py": BuildWithSchema})
