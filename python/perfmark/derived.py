"""The derived metrics of the CPU-model tables (branch, cache and mem groups
of runtime/count/pm_cpu_models.c), as analysis/model/report_derived.c makes them.

A metric is scale x Σnum / Σden of the region's event totals (the summary's
totals: estimates where counts were multiplexed), a ratio of sums over
threads and ranks, never a mean of per-thread ratios. A group counts when
the file holds every one of its events: first the file's own model
(cpu_model attribute), then the first table row whose group matches, so
that files written before the attribute still find theirs.
"""
from . import models

GROUPS = ("branch", "cache", "mem")  # the report's order (group ids)


def _rows(model, group, names, pfm_names):
    """The /events row of every event of the group, or None."""
    rows = []
    for ev in group["events"]:
        e = models.event_row(ev["qualified"], names, pfm_names)
        if e is None:
            return None
        rows.append(e)
    return rows or None


def find_groups(f):
    """[(model row, group, /events rows)] of the groups the file holds, in
    group order."""
    names, pfm_names = list(f.field("EVENTS_NAME")), list(f.field("EVENTS_PFM_NAME"))
    own = models.find(f.attr("CPU_MODEL"))
    found = []
    for gid in GROUPS:
        g = own["groups"][gid] if own else None
        rows = _rows(own, g, names, pfm_names) if g else None
        model = own
        if rows is None:
            model = None
            for m in models.tables()["models"]:
                g = m["groups"][gid]
                rows = _rows(m, g, names, pfm_names) if g else None
                if rows is not None:
                    model = m
                    break
        if model is not None:
            found.append((model, g, rows))
    return found


def value(d, num, den):
    """(value or None, estimate, untrusted) of metric d from the (total,
    estimate, untrusted) of its numerator and denominator (den None: a
    scaled count); total None = no value."""
    if num[0] is None or (den is not None and (den[0] is None or not den[0] > 0)):
        return None, False, False
    v = d["scale"] * num[0] / (den[0] if den is not None else 1.0)
    return v, bool(num[1] or (den is not None and den[1])), \
        bool(num[2] or (den is not None and den[2]))
