"""The CPU-model tables of runtime/count/pm_cpu_models.c, loaded from models.json.

models.json is written from the C table at build time (runtime/count/pm_models_json.c,
by the C build or by setup.py) and shipped inside the package, so the
package keeps no copy of the events and formulas. It also finds the /events
rows that count a table's events, exactly as the report does
(analysis/model/report_topdown.c, pm_event_matches).
"""
import json
import os

from .errors import PerfmarkError

JSON_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "models.json")
# Modifiers that leave what is counted alone: privilege and virtualisation
# filters (report_topdown.c, pm_td_neutral_modifier).
NEUTRAL_FILTERS = ("u", "k", "h", "mg", "mh")

_tables = None


def tables(path=None):
    """{"groups": [...], "models": [...]} of models.json; PerfmarkError when
    the package was installed without it (no C compiler at pip time)."""
    global _tables
    if _tables is None or path is not None:
        p = path or JSON_PATH
        try:
            with open(p, encoding="utf-8") as f:
                t = json.load(f)
        except (OSError, ValueError) as e:
            raise PerfmarkError(p, "the CPU-model tables (models.json) are not in this "
                                "installation of the package, so TopDown and derived "
                                "metrics cannot be computed (%s); build it with perfmark's "
                                "CMake, or pip install with a C compiler (cc) present" %
                                (e.strerror if isinstance(e, OSError) else e)) from None
        if path is not None:
            return t
        _tables = t
    return _tables


def find(name):
    """The model row named `name` (a file's cpu_model attribute), or None."""
    for m in tables()["models"]:
        if m["name"] == name:
            return m
    return None


def _neutral(mod):
    """A libpfm4 "name=value" modifier that counts the same events."""
    if "=" not in mod:
        return False
    key, value = mod.split("=", 1)
    return value == "0" or key in NEUTRAL_FILTERS


def event_matches(qualified, name, pfm_name):
    """Does an /events row (name, pfm_name) count the table event whose
    qualified name is `qualified`? Its name is exactly that, or its
    libpfm4 pfm_name is that followed only by neutral modifiers."""
    if qualified is None:  # the table's name did not fit: the report matches nothing
        return False
    if name == qualified:
        return True
    if not pfm_name.startswith(qualified):
        return False
    rest = pfm_name[len(qualified):]
    if rest == "":
        return True
    if not rest.startswith(":"):
        return False
    return all(_neutral(m) for m in rest[1:].split(":"))


def event_row(qualified, names, pfm_names):
    """The first /events row counting `qualified`, or None."""
    for e, (n, p) in enumerate(zip(names, pfm_names)):
        if event_matches(qualified, n, p):
            return e
    return None
