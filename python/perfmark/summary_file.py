"""A summary file's statistics over every rank (PERFMARK_DETAIL=summary).

The job's rank 0 ran the report's engine over every rank and wrote what it
finished as tables of named columns under /summary (docs/hdf5-schema.md,
"/summary"): a row per (region, quantity), per region, per (MPI function,
quantity), the whole run and each rank's MPI share. Their columns carry
the names and the conventions of this package's frames (NaN no value, -1 no
thread, rank or row, 1/0 yes/no; integers that pass 2^53 in uint64
tables), so Run reads them instead of aggregating cells, which a summary
file holds only for its kept ranks.
"""
import numpy as np

from .aggregate import QUANTITIES


def _columns(f, ident, dtype=float):
    """A table as {column name: numpy array of its rows} (1-D tables: a
    value each)."""
    e = f.schema[ident]
    if not f.has(ident):
        return {}
    with f.guard(e.path):
        data = np.asarray(f._h5[e.path][()], dtype=dtype)
        names = f._h5[f.schema[ident + "_COLUMNS"].owner].attrs.get(
            f.schema[ident + "_COLUMNS"].name, b"")
    names = names.decode("utf-8") if isinstance(names, bytes) else str(names)
    names = names.split(",") if names else []
    width = data.shape[-1] if data.ndim else 0
    if len(names) != width:
        f.fail("%s: %d columns, %d names" % (e.path, width, len(names)))
    if data.ndim == 1:
        return {k: data[i] for i, k in enumerate(names)}
    return {k: data[:, i] for i, k in enumerate(names)}


def _need(f, cols, ident, names):
    missing = [k for k in names if k not in cols]
    if missing:
        f.fail("%s lacks the columns %s" % (f.schema[ident].path, ", ".join(missing)))


STAT = ["total", "raw", "estimate", "untrusted", "threads_na", "counted_share", "threads", "min",
        "mean", "max", "sd", "imbalance", "min_thread", "max_thread", "ranks_entered",
        "rank_total", "rank_min", "rank_mean", "rank_max", "rank_sd", "rank_imbalance",
        "min_rank", "max_rank", "ranks_na", "rank_estimate", "rank_untrusted"]
# summary()'s order: over threads, across ranks, the ranks that entered
ORDER = [k for k in STAT if k != "ranks_entered"] + ["ranks_entered"]
BOOLS = ("estimate", "untrusted", "rank_estimate", "rank_untrusted")
INTS = ("ranks", "raw", "threads_na", "threads", "min_thread", "max_thread", "ranks_entered",
        "min_rank", "max_rank", "ranks_na")


def _typed(k, v):
    if k in BOOLS:
        return np.asarray(v) != 0
    if k in INTS:
        return np.asarray(v).astype(np.int64)
    return np.asarray(v, float)


class Tables:
    """The finished statistics of a summary file, shaped as Aggregate's
    results (summary_columns, flag counts, MPI functions, ...)."""

    def __init__(self, f, event_keys):
        self.f = f
        n = f.sizes
        self.R, self.E = n["R"], n["E"]
        nq = len(QUANTITIES) + 1 + self.E
        reg = _columns(f, "SUMMARY_REGION_STAT")
        _need(f, reg, "SUMMARY_REGION_STAT", ["row", "quantity", "ranks"] + STAT)
        if len(reg["row"]) != self.R * nq:
            f.fail("%s: %d rows for %d regions x %d quantities" % (
                f.schema["SUMMARY_REGION_STAT"].path, len(reg["row"]), self.R, nq))
        # [R, quantity] in the summary's order: visits, wall_ns,
        # exclusive_ns, bytes, bytes_unknown, the events
        self.stat = {k: _typed(k, v).reshape(self.R, nq) for k, v in reg.items()}
        self.keys = ["visits", "wall_ns", "exclusive_ns", "bytes", "bytes_unknown"] + \
            list(event_keys)
        self.more = _columns(f, "SUMMARY_REGION_MORE")
        if len(self.more.get("row", [])) != self.R:
            f.fail("%s: not a row per region" % f.schema["SUMMARY_REGION_MORE"].path)
        self.bits = np.stack([self.more["flag_%d" % b].astype(np.int64) for b in range(32)], 1)
        self.run = _columns(f, "SUMMARY_RUN_STAT")
        self.mpi = {k: _typed(k, v) for k, v in _columns(f, "SUMMARY_MPI_STAT").items()}
        self.share = _columns(f, "SUMMARY_RANK_SHARE")
        self.count = _columns(f, "SUMMARY_REGION_COUNT", np.uint64)
        self.run_count = _columns(f, "SUMMARY_RUN_COUNT", np.uint64)
        _need(f, self.count, "SUMMARY_REGION_COUNT", ["wall_ns_raw", "reads", "omp_wait_ns"])
        _need(f, self.run_count, "SUMMARY_RUN_COUNT", ["reads", "thread_ns"])
        _need(f, self.more, "SUMMARY_REGION_MORE", ["omp_wait_share", "flag_31"])
        self.td = _columns(f, "SUMMARY_TOPDOWN")
        self.td_slots = _columns(f, "SUMMARY_TOPDOWN_SLOTS", np.uint64)

    def summary_columns(self):
        """(quantity, is_event, {column: [R] by region row}) as
        Aggregate.summary_columns gives them."""
        for q, key in enumerate(self.keys):
            yield key, q >= 5, {k: self.stat[k][:, q] for k in ORDER}

    def topdown(self, setup, nodes, left_out):
        """([R] region stats, the whole run's) as topdown.regions and
        topdown.whole_run give them, or None when the job wrote none."""
        t, k = self.td, self.td_slots
        if len(t.get("row", [])) != self.R + 1 or len(k.get("slots", [])) != self.R + 1:
            return None
        shown = [n for n in nodes if setup.shown(n)]

        def stat(i):
            ratios = {n: float(t[n][i]) for n in shown}
            has = bool(shown) and not np.isnan(ratios[shown[0]])
            pcore = t["pcore_share"][i]
            return {"cells_used": int(t["cells_used"][i]), "slots": int(k["slots"][i]),
                    "node_slots": {n: int(k["slots_" + n][i]) for n in shown},
                    "ratios": ratios if has else None,
                    "cells_left_out": {nm: int(t["left_out_" + nm][i]) for nm in left_out},
                    "estimate": bool(t["estimate"][i]),
                    "pcore_share": None if np.isnan(pcore) or not setup.hybrid
                    else float(pcore)}
        return [stat(i) for i in range(self.R)], stat(self.R)

    def seen(self):
        """The flag bits some region's cells carry."""
        return sum(1 << b for b in range(32) if self.bits[:, b].any())

    def functions(self, names):
        """MPI functions in the report's order: name, the region rows of the
        name, ranks entered, and the across-ranks columns of calls, wall_ns,
        bytes, bytes_unknown (rank_total, rank_min, ...)."""
        out = []
        m = self.mpi
        for i in range(0, len(m.get("row", [])), 4):
            row = int(m["row"][i])
            nm = names[row] if 0 <= row < len(names) else ""
            cols = {k: m[k][i:i + 4] for k in STAT if k.startswith(("rank_", "min_rank",
                                                                     "max_rank", "ranks_na"))}
            out.append({"name": nm, "entered": int(m["ranks_entered"][i]), "columns": cols})
        return out
