"""A perfmark file as pandas DataFrames: perfmark.open(path) -> Run.

Tables are tidy (one row per thing, one column per variable) and their
integer columns are int64 (or pandas' nullable Int64 where a value can be
missing), so DataFrame.query and groupby work without casts. Nothing is read
before it is asked for; the cells are read a block of thread rows at a time.
"""
import os

import numpy as np
import pandas as pd

from . import derived, export, read, samples as _samples, stats, summary_file, topdown
from .aggregate import LOST_GENERATION_BIT, Aggregate, block_rows
from .stats import ESTIMATE, NONE


def _int(a):
    return np.asarray(a).astype(np.int64)


def _nullable(a, missing):
    """Int64 with <NA> where `missing`."""
    missing = np.asarray(missing, bool)
    return pd.arrays.IntegerArray(np.where(missing, 0, a).astype(np.int64), missing)


def _float(a, missing=None):
    a = np.asarray(a, float)
    return a if missing is None else np.where(missing, np.nan, a)


class Run:
    """One perfmark file. Use as a context manager, or call close()."""

    def __init__(self, path, check=True):
        self._file = read.File(path, check=check)
        self.path = self._file.path
        self._cache = {}

    def close(self):
        self._file.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _once(self, key, make):
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]

    # ------------------------------------------------------------ metadata

    @property
    def metadata(self):
        """Every root attribute the schema names, as written; absent ones
        (older files) as 0 or "", by the table's rule."""
        f = self._file
        return self._once("meta", lambda: {e.name: f.attr(e.id)
                                           for e in f.schema.attributes("/")})

    @property
    def is_summary(self):
        """A summary file (PERFMARK_DETAIL=summary): the statistics over
        every rank (summary(), flags(), mpi(), mpi_share(), measuring(),
        omp_wait(), perfmark_reads(), topdown(), and what is made of them)
        are the job's, made in the job; the
        rows (threads(), cells(), by_rank(), samples, ...) are those of the
        kept ranks only (kept_ranks()). Thread rows are the job's everywhere
        (threads()["row"], cells()["thread_row"], summary()'s min_thread),
        so they join; /rank rows are named by their rank."""
        return bool(self._file.is_summary)

    def kept_ranks(self):
        """The ranks whose rows the file holds: every rank of a full file,
        the kept ones of a summary file."""
        return [int(r) for r in np.unique(self._file.field("THREADS_RANK"))]

    def _job_rows(self):
        """Each /threads row's thread row in the job: itself in a full file;
        in a summary file the kept rank's first row in the job
        (/summary/kept_row) plus its place among that rank's rows, the
        numbers summary()'s min_thread and max_thread use."""
        def make():
            f = self._file
            rank = _int(f.field("THREADS_RANK"))
            rows = np.arange(len(rank), dtype=np.int64)
            if not f.is_summary:
                return rows
            kept = _int(f.array("SUMMARY_KEPT_RANK"))
            first = _int(f.array("SUMMARY_KEPT_ROW"))
            out = rows.copy()
            for k, r in enumerate(kept):
                mine = np.flatnonzero(rank == r)
                if len(mine) and k < len(first):
                    out[mine] = first[k] + (mine - mine[0])
            return out
        return self._once("job_rows", make)

    def _tables(self):
        """A summary file's finished statistics (summary_file.py), else None."""
        if not self._file.is_summary:
            return None
        return self._once("tables", lambda: summary_file.Tables(self._file, self.event_keys()))

    @property
    def sizes(self):
        """T threads, R regions, E events, G kernel groups, N rank rows, M messages."""
        return dict(self._file.sizes)

    def messages(self):
        """Every warning perfmark printed during the run, in order."""
        f = self._file
        return self._once("msg", lambda: list(f.array("MESSAGES")) if f.has("MESSAGES") else [])

    # ---------------------------------------------------------- the tables

    def _paths(self):
        """Each region's path: the file's, or made from the tree where the
        file has none (it is for display, and may be absent)."""
        def make():
            f = self._file
            path = list(f.field("REGIONS_PATH"))
            for r, (nm, p) in enumerate(zip(f.field("REGIONS_NAME"), f.field("REGIONS_PARENT"))):
                if path[r] == "" and not (p < 0 and nm == ""):
                    path[r] = nm if p < 0 else path[p] + "/" + nm
            return np.array(path, dtype=object)
        return self._once("paths", make)

    def _frame(self, ident):
        """A compound table as columns: integers int64, uint8 flags bool."""
        f = self._file
        df = pd.DataFrame({"row": np.arange(len(f.table(ident)[f.schema.fields(ident)[0].name]),
                                            dtype=np.int64)})
        for e in f.schema.fields(ident):
            v = f.table(ident)[e.name]
            df[e.name] = v if e.is_string() else v.astype(bool if e.type == "uint8" else np.int64)
        return df

    def event_keys(self):
        """The report's key of each event: its name, or name#row when an
        earlier event has the same name."""
        names = list(self._file.field("EVENTS_NAME"))
        return [n + ("#%d" % e if n in names[:e] else "") for e, n in enumerate(names)]

    def tree_order(self):
        """Region rows in preorder, siblings in file (first-seen) order."""
        def make():
            parent = self._file.field("REGIONS_PARENT")
            kids = {}
            for r, p in enumerate(parent):
                kids.setdefault(int(p), []).append(r)
            order, stack = [], list(reversed(kids.get(-1, [])))
            while stack:
                r = stack.pop()
                order.append(r)
                stack.extend(reversed(kids.get(r, [])))
            return order
        return self._once("order", make)

    def events(self):
        """/events: one row per event, with the report's `key`."""
        df = self._frame("EVENTS")
        df.insert(1, "key", self.event_keys())
        return df

    def regions(self):
        """The region tree: one row per region in tree order; `row` is its
        row in the file, `parent` the parent's row (-1 at top level),
        `index` its position in tree order (the report's index)."""
        f = self._file
        order = self.tree_order()
        pos = {r: i for i, r in enumerate(order)}
        rows = np.array(order, dtype=np.int64)
        parent = f.field("REGIONS_PARENT").astype(np.int64)[rows]
        return pd.DataFrame({
            "index": np.arange(len(rows), dtype=np.int64), "row": rows,
            "name": f.field("REGIONS_NAME")[rows], "path": self._paths()[rows],
            "kind": f.field("REGIONS_KIND")[rows],
            "depth": _int(f.field("REGIONS_DEPTH")[rows]), "parent": parent,
            "parent_index": np.array([pos[p] if p >= 0 else -1 for p in parent], np.int64)})

    def threads(self):
        """The /threads table with each thread's totals (wall time, flags,
        perfmark's reads and their measured cost). `row`: the thread's row
        in the job (in a summary file, not its /threads row)."""
        f = self._file
        df = self._frame("THREADS")
        df["row"] = self._job_rows()
        for name, ident in (("wall_ns", "THREAD_WALL_NS"), ("flags", "THREAD_FLAGS"),
                            ("reads", "THREAD_READS")):
            df[name] = _int(f.array(ident))
        df["read_cost_ns"] = f.array("THREAD_READ_COST_NS").astype(float)
        return df

    def _thread_values(self):
        """(raw, enabled, running, value, kind) [T, E] of the /thread totals,
        enabled and running those of each event's kernel group."""
        f = self._file
        group = f.field("EVENTS_GROUP").astype(np.int64)
        raw = f.array("THREAD_COUNTS")
        en = f.array("THREAD_ENABLED_NS")[:, group]
        run = f.array("THREAD_RUNNING_NS")[:, group]
        val, kind = stats.cell_value(raw, en, run)
        # a thread's total is a sum of one cell, kept exactly as every sum
        # (stats.py): an estimate to 2^-32
        val = np.where(kind == ESTIMATE, stats.value(stats.fix(val)), val)
        return raw, en, run, val, kind

    def thread_totals(self):
        """One row per (thread, event) of the whole-thread totals (/thread):
        raw, enabled_ns, running_ns, value (NaN: never counted), estimate,
        counted_share — the report's threads[].events."""
        raw, en, run, val, kind = self._thread_values()
        T, E = raw.shape
        f = self._file
        with np.errstate(invalid="ignore", divide="ignore"):
            share = np.where(en > 0, run.astype(float) / en, np.nan)
        return pd.DataFrame({
            "thread_row": np.repeat(self._job_rows(), E),
            "rank": np.repeat(_int(f.field("THREADS_RANK")), E),
            "thread": np.repeat(_int(f.field("THREADS_THREAD")), E),
            "event": np.tile(np.array(self.event_keys(), object), T),
            "raw": _int(raw).ravel(), "enabled_ns": _int(en).ravel(),
            "running_ns": _int(run).ravel(), "value": _float(val, kind == NONE).ravel(),
            "estimate": (kind == ESTIMATE).ravel(), "counted_share": share.ravel()})

    def _series_frame(self, prefix, rows, keys):
        """Rows of /series (prefix "SERIES_") or its process rows
        ("SERIES_PROCESS_"), a block of rows at a time: one row per (series
        row, event), the counting model's value of the interval's counts."""
        f = self._file
        E = f.sizes["E"]
        group = f.field("EVENTS_GROUP").astype(np.int64)
        frames = []
        step = max(1, (4 << 20) // max(1, 8 * (E + 2 * f.sizes["G"] + 4)))
        for i0 in range(0, rows, step):
            i1 = min(i0 + step, rows)
            raw = f.array(prefix + "COUNTS", i0, i1)
            en = f.array(prefix + "ENABLED_NS", i0, i1)[:, group]
            run = f.array(prefix + "RUNNING_NS", i0, i1)[:, group]
            val, kind = stats.cell_value(raw, en, run)
            n = i1 - i0
            df = pd.DataFrame({"row": np.repeat(np.arange(i0, i1, dtype=np.int64), E)})
            for name, col in keys(i0, i1).items():
                df[name] = np.repeat(np.asarray(col), E)
            df["event"] = np.tile(np.array(self.event_keys(), object), n)
            df["raw"], df["enabled_ns"], df["running_ns"] = (_int(raw).ravel(), _int(en).ravel(),
                                                             _int(run).ravel())
            df["value"] = _float(val, kind == NONE).ravel()
            df["estimate"] = (kind == ESTIMATE).ravel()
            frames.append(df)
        if not frames:
            return None
        return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]

    def series(self):
        """Counts over time (`perfmark run --interval`, /series): one row per
        (interval of a thread, event), in the file's order: time_ns (when the
        interval ended, CLOCK_REALTIME ns), thread_row, rank, thread,
        interval_ns (the thread's interval: the asked one, doubled per merge
        when memory ran short), region (the thread's innermost region at the
        reading, row; -1 none) and its path, flags and LOST_GENERATION (the
        counters were reopened: no counts in the row), raw, enabled_ns,
        running_ns, value (scaled when multiplexed; NaN never counted),
        estimate. A thread's rows add up to its /thread totals exactly. Empty
        without --interval."""
        f = self._file
        I = f.sizes["I"]
        cols = ["row", "time_ns", "thread_row", "rank", "thread", "interval_ns", "region", "path",
                "flags", "LOST_GENERATION", "event", "raw", "enabled_ns", "running_ns", "value",
                "estimate"]
        if I == 0 or f.sizes["E"] == 0:
            return pd.DataFrame(columns=cols)
        rank = _int(f.field("THREADS_RANK"))
        num = _int(f.field("THREADS_THREAD"))
        ivl = _int(f.array("SERIES_THREAD_INTERVAL_NS"))
        paths = np.append(self._paths(), None)

        def keys(i0, i1):
            t = _int(f.array("SERIES_THREAD", i0, i1))
            r = _int(f.array("SERIES_REGION", i0, i1))
            fl = _int(f.array("SERIES_FLAGS", i0, i1))
            return {"time_ns": _int(f.array("SERIES_TIME_NS", i0, i1)),
                    "thread_row": self._job_rows()[t],
                    "rank": rank[t], "thread": num[t], "interval_ns": ivl[t], "region": r,
                    "path": paths[np.where(r >= 0, r, len(paths) - 1)], "flags": fl,
                    "LOST_GENERATION": (fl & LOST_GENERATION_BIT) != 0}
        return self._series_frame("SERIES_", I, keys)[cols]

    def process_series(self):
        """The inherited set (the whole process, children included) over
        time: one row per (interval of a process, event): time_ns, rank,
        raw, enabled_ns, running_ns, value, estimate. Empty without
        --interval."""
        f = self._file
        J = f.sizes["J"]
        cols = ["row", "time_ns", "rank", "event", "raw", "enabled_ns", "running_ns", "value",
                "estimate"]
        if J == 0 or f.sizes["E"] == 0:
            return pd.DataFrame(columns=cols)

        def keys(i0, i1):
            return {"time_ns": _int(f.array("SERIES_PROCESS_TIME_NS", i0, i1)),
                    "rank": _int(f.array("SERIES_PROCESS_RANK", i0, i1))}
        return self._series_frame("SERIES_PROCESS_", J, keys)[cols]

    def rank_totals(self):
        """One row per (/rank row, event): the process's own count (the
        inherited set: process_raw, process, process_estimate,
        counted_share) against the sum of its threads' totals (threads_sum,
        threads_estimate, threads_na), and the difference: work of threads
        perfmark never saw. A row's threads: all when there is one row,
        else those whose rank is the row number (in a summary file, `row` is
        the kept rank's number and `threads` the job's thread rows); `rank`
        is the row's rank (/rank/rank). Empty without /rank."""
        f = self._file
        N, E = f.sizes["N"], f.sizes["E"]
        row_rank = _int(f.array("RANK_RANK")) if N else []
        _, _, _, tval, tkind = self._thread_values()
        rank = _int(f.field("THREADS_RANK"))
        group = f.field("EVENTS_GROUP").astype(np.int64)
        rows = []
        if N:
            raw = f.array("RANK_COUNTS")
            en = f.array("RANK_ENABLED_NS")[:, group]
            run = f.array("RANK_RUNNING_NS")[:, group]
            val, kind = stats.cell_value(raw, en, run)
        # row n is rank n; in a summary file the n-th kept rank
        of_row = _int(f.array("SUMMARY_KEPT_RANK")) if f.is_summary else np.arange(N)
        job = self._job_rows()
        for n in range(N):
            members = np.arange(len(rank)) if N == 1 else np.flatnonzero(rank == of_row[n])
            has = tkind[members] != NONE
            # already-scaled thread values, summed exactly (stats.py)
            tsum_s = stats.zeros(E)
            for t in range(len(members)):
                tsum_s = stats.add_sum(tsum_s, np.where(has[t], stats.fix(tval[members[t]]), 0))
            tsum = stats.value(tsum_s)
            na = (~has).sum(0)
            no_sum = (na > 0) & (has.sum(0) == 0)
            for e, key in enumerate(self.event_keys()):
                proc = np.nan if kind[n, e] == NONE else val[n, e]
                ts = np.nan if no_sum[e] else tsum[e]
                rows.append({"row": int(of_row[n]), "rank": int(row_rank[n]), "event": key,
                             "threads": [int(x) for x in job[members]],
                             "process_raw": int(raw[n, e]), "process": proc,
                             "process_estimate": bool(kind[n, e] == ESTIMATE),
                             "counted_share": run[n, e] / en[n, e] if en[n, e] > 0 else np.nan,
                             "threads_sum": ts,
                             "threads_estimate": bool((has[:, e] &
                                                       (tkind[members, e] == ESTIMATE)).any()),
                             "threads_na": int(na[e]), "difference": proc - ts})
        cols = ["row", "rank", "event", "threads", "process_raw", "process", "process_estimate",
                "counted_share", "threads_sum", "threads_estimate", "threads_na", "difference"]
        return pd.DataFrame(rows, columns=cols).astype(
            {"row": np.int64, "rank": np.int64, "process_raw": np.int64, "threads_na": np.int64,
             "process": float, "threads_sum": float, "difference": float,
             "counted_share": float, "process_estimate": bool, "threads_estimate": bool})

    def flag_names(self):
        """{bit: name} of the data-quality flags this file can carry."""
        return dict(sorted(self._file.flag_names().items()))

    # ------------------------------------------------------------- the cells

    def cells(self, events=None):
        """One row per (thread, region, event) of every cell with visits,
        flags, counts or enabled time: raw count, enabled and running time
        of the event's kernel group, the value (`value`, NaN when the cell
        was never counted), `estimate` (scaled by enabled/running),
        `counted_share` (running/enabled), the report's time of the cell
        (`time_ns`, <NA> when no visit was timed) and each flag as a
        boolean column named like the flag. A file without events gives one
        row per cell with the event columns empty. `events`: only these
        event keys (fewer rows to hold). The whole table in memory: for a
        large file, iter_cells() gives it a block of thread rows at a time."""
        parts = list(self.iter_cells(events))
        return (pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0])

    def iter_cells(self, events=None):
        """cells(), one DataFrame per block of thread rows (the report's
        blocks), read as it is asked for: memory bounded by one block."""
        f = self._file
        keys = self.event_keys()
        unknown = set(events or ()) - set(keys)
        if unknown:
            raise ValueError("no such event key: %s" % ", ".join(sorted(unknown)))
        B = block_rows(f) or 1
        blocks = [(t0, min(t0 + B, f.sizes["T"])) for t0 in range(0, f.sizes["T"], B)]
        for t0, t1 in blocks or [(0, 0)]:
            df = self._cell_block(t0, t1)
            if events is not None and keys:
                df = df[df["event"].isin(list(events))].reset_index(drop=True)
            for bit, name in self.flag_names().items():
                df[name] = (df["flags"].to_numpy() & bit) != 0
            yield df

    def _cell_block(self, t0, t1):
        f = self._file
        E = f.sizes["E"]
        group = f.field("EVENTS_GROUP").astype(np.int64)
        V = f.array("REGION_VISITS", t0, t1)
        W = f.array("REGION_WALL_NS", t0, t1)
        F = f.array("REGION_FLAGS", t0, t1)
        C = f.array("REGION_COUNTS", t0, t1)
        EN = f.array("REGION_ENABLED_NS", t0, t1)[:, :, group]
        RUN = f.array("REGION_RUNNING_NS", t0, t1)[:, :, group]
        TV = f.array("REGION_TIMED_VISITS", t0, t1) if f.has("REGION_TIMED_VISITS") else V
        keep = (V > 0) | (F != 0) | (C != 0).any(2) | (EN != 0).any(2)
        ti, ri = np.nonzero(keep)
        ns, kind = stats.cell_time(W[ti, ri], V[ti, ri], TV[ti, ri])
        per = max(E, 1)  # rows per cell

        def each(a):
            return np.repeat(np.asarray(a), per)

        t = ti + t0
        df = pd.DataFrame({
            "thread_row": each(self._job_rows()[t]),
            "rank": each(_int(f.field("THREADS_RANK")[t])),
            "thread": each(_int(f.field("THREADS_THREAD")[t])), "region": each(_int(ri)),
            "path": each(self._paths()[ri]), "kind": each(f.field("REGIONS_KIND")[ri]),
            "event": np.tile(np.array(self.event_keys() or [None], object), len(ti)),
            "visits": each(_int(V[ti, ri])), "wall_ns": each(_int(W[ti, ri]))})
        df["time_ns"] = _nullable(each(ns), each(kind == NONE))
        df["time_estimate"] = each(kind == ESTIMATE)
        if E:
            raw, en, run = C[ti, ri].ravel(), EN[ti, ri].ravel(), RUN[ti, ri].ravel()
            val, vk = stats.cell_value(raw, en, run)
            df["raw"], df["enabled_ns"], df["running_ns"] = _int(raw), _int(en), _int(run)
            df["value"] = _float(val, vk == NONE)
            df["estimate"] = vk == ESTIMATE
            with np.errstate(invalid="ignore", divide="ignore"):
                df["counted_share"] = np.where(en > 0, run.astype(float) / en, np.nan)
        else:
            n = len(df)
            for k in ("raw", "enabled_ns", "running_ns"):
                df[k] = _nullable(np.zeros(n), np.ones(n, bool))
            df["value"], df["estimate"], df["counted_share"] = np.nan, False, np.nan
        df["flags"] = each(_int(F[ti, ri]))
        return df

    # -------------------------------------------------- the report's numbers

    def _agg(self):
        return self._once("agg", lambda: Aggregate(self._file))

    def summary(self):
        """The report's region table, tidy: one row per (region, quantity)
        in tree order, quantity = visits, wall_ns, exclusive_ns, bytes,
        bytes_unknown, then each event key.

        Over threads: total, and min/mean/max/sd/imbalance (max/mean) over
        the threads that visited and have a value, with the thread rows of
        the min and max (`threads` = how many); events add raw, estimate,
        untrusted, threads_na and counted_share. Across ranks (a rank's
        value = the sum over its threads): ranks_entered and rank_total,
        rank_min/mean/max/sd/imbalance over the ranks that entered and have
        a value, min_rank/max_rank (the lowest rank on ties), ranks_na.
        NaN / <NA> where the report prints null."""
        return self._once("summary", self._summary)

    def _summary(self):
        reg = self.regions()
        order = reg["row"].to_numpy()
        frames = []
        tab = self._tables()
        made = tab.summary_columns() if tab else self._agg().summary_columns(self.event_keys())
        for q, is_event, cols in made:
            df = pd.DataFrame({k: np.asarray(v)[order] for k, v in cols.items()})
            df.insert(0, "is_event", is_event)
            df.insert(0, "quantity", q)
            df.insert(0, "index", reg["index"].to_numpy())
            frames.append(df)
        # region by region in tree order, its quantities in the order above
        out = pd.concat(frames, ignore_index=True).sort_values("index", kind="stable",
                                                               ignore_index=True)
        at = out["index"].to_numpy()
        for k in reversed(("row", "path", "name", "kind", "depth", "parent_index")):
            out.insert(1, "parent" if k == "parent_index" else k, reg[k].to_numpy()[at])
        for k in ("raw", "min_thread", "max_thread", "min_rank", "max_rank"):
            v = out[k].to_numpy(dtype=np.int64)
            out[k] = _nullable(v, v < 0)
        for k in ("threads_na", "threads", "ranks_entered", "ranks_na"):
            out[k] = _int(out[k])
        return out

    def flags(self):
        """Per region (tree order) and flag: the threads whose cell carries it
        (flags no cell carries left out)."""
        tab = self._tables()
        bits = tab.bits if tab else self._agg().bits
        reg = self.regions()
        names = self._flag_table()
        rows = []
        for i, r in zip(reg["index"], reg["row"]):
            for bit, name in names:
                n = int(bits[r, bit.bit_length() - 1])
                if n:
                    rows.append((int(i), int(r), reg["path"][i], name, n))
        return pd.DataFrame(rows, columns=["index", "row", "path", "flag", "threads"]).astype(
            {"index": np.int64, "row": np.int64, "threads": np.int64})

    def _flag_table(self):
        """(bit, name) in bit order: named bits, and bits seen without a name
        as 0x.., as the report lists them."""
        tab = self._tables()
        names = self._file.flag_names()
        seen = tab.seen() if tab else self._agg().seen
        return [(1 << b, names.get(1 << b, "0x%x" % (1 << b))) for b in range(32)
                if (1 << b) in names or seen & (1 << b)]

    def mpi(self):
        """MPI functions across ranks (the report's "MPI functions"): one row
        per (function, quantity), quantity = calls, wall_ns, bytes,
        bytes_unknown; a function's value on a rank is summed over every
        call path; most total time first. Empty without MPI regions."""
        rows = []
        pos = {r: i for i, r in enumerate(self.tree_order())}
        for fx in self._functions():
            x = fx["columns"]
            for q, qname in enumerate(["calls", "wall_ns", "bytes", "bytes_unknown"]):
                rows.append({"function": fx["name"], "quantity": qname,
                             "ranks_entered": fx["entered"],
                             "regions": sorted(pos[r] for r in fx["rows"]),
                             "total": x["rank_total"][q], "min": x["rank_min"][q],
                             "mean": x["rank_mean"][q], "max": x["rank_max"][q],
                             "sd": x["rank_sd"][q], "imbalance": x["rank_imbalance"][q],
                             "min_rank": x["min_rank"][q], "max_rank": x["max_rank"][q],
                             "ranks_na": x["ranks_na"][q],
                             "estimate": bool(x["rank_estimate"][q]),
                             "untrusted": bool(x["rank_untrusted"][q])})
        cols = ["function", "quantity", "ranks_entered", "regions", "total", "min", "mean",
                "max", "sd", "imbalance", "min_rank", "max_rank", "ranks_na", "estimate",
                "untrusted"]
        df = pd.DataFrame(rows, columns=cols)
        for k in ("min_rank", "max_rank"):
            v = df[k].to_numpy(dtype=np.int64)
            df[k] = _nullable(v, v < 0)
        for k in ("ranks_entered", "ranks_na"):
            df[k] = df[k].astype(np.int64)
        return df

    def _functions(self):
        """MPI functions in the report's order: name, rows (its regions),
        entered, columns (across ranks: rank_total, rank_min, ...)."""
        tab = self._tables()
        if not tab:
            return [dict(fx, columns=fx["across"].columns()) for fx in self._agg().functions]
        f = self._file
        names, kinds = list(f.field("REGIONS_NAME")), list(f.field("REGIONS_KIND"))
        out = tab.functions(names)
        for fx in out:
            fx["rows"] = [r for r in range(len(names))
                          if kinds[r] == "mpi" and names[r] == fx["name"]]
        return out

    def _event_named(self, name):
        """The key of the first event named NAME or NAME:modifiers, or None."""
        names = list(self._file.field("EVENTS_NAME"))
        for e, n in enumerate(names):
            if n == name or n.startswith(name + ":"):
                return self.event_keys()[e]
        return None

    def ipc(self):
        """Instructions per cycle of each region (tree order): Σinstructions
        / Σcycles of its totals, a ratio of sums; NaN without both events,
        without both totals, or with no cycles. `estimate` / `untrusted`
        when either total is."""
        s = self.summary()
        reg = self.regions()[["index", "row", "path"]].copy()
        ins, cyc = self._event_named("instructions"), self._event_named("cycles")
        if ins is None or cyc is None:
            reg["ipc"], reg["estimate"], reg["untrusted"] = np.nan, False, False
            return reg
        i = s[s["quantity"] == ins].set_index("index").loc[reg["index"]]
        c = s[s["quantity"] == cyc].set_index("index").loc[reg["index"]]
        it, ct = i["total"].to_numpy(), c["total"].to_numpy()
        ok = ~np.isnan(it) & ~np.isnan(ct) & (ct > 0)
        with np.errstate(invalid="ignore", divide="ignore"):
            reg["ipc"] = np.where(ok, it / ct, np.nan)
        reg["estimate"] = ok & (i["estimate"].to_numpy() | c["estimate"].to_numpy())
        reg["untrusted"] = ok & (i["untrusted"].to_numpy() | c["untrusted"].to_numpy())
        return reg

    def measuring(self):
        """Per region (tree order): which visits were measured and what
        measuring cost (docs/hdf5-schema.md, "Which visits read counters",
        "What measuring costs"): wall_ns_raw (as stored: the timed visits),
        time_estimate, threads_time_na, exclusive_estimate,
        exclusive_untrusted, timed_visits, timer_visits, timer_only,
        throttled_threads, throttled_from_min/_max, reads, and perfmark's
        estimated part perfmark_cpu_ns, perfmark_wall_ns (NaN when no thread
        has a measured cost) and perfmark_cpu_share (of the region's
        task-clock, else cpu-clock, total)."""
        if self._tables():
            return self._summary_measuring()
        a = self._agg()
        reg = self.regions()[["index", "row", "path"]].copy()
        rows = reg["row"].to_numpy()
        has_cost = bool(a.has_cost.any())
        names = list(self._file.field("EVENTS_NAME"))
        cpu = next((self.event_keys()[names.index(n)] for n in ("task-clock", "cpu-clock")
                    if n in names), None)
        base = np.full(a.R, np.nan)
        if cpu is not None:
            s = self.summary()
            base[s[s["quantity"] == cpu]["row"].to_numpy()] = \
                s[s["quantity"] == cpu]["total"].to_numpy()
        with np.errstate(invalid="ignore", divide="ignore"):
            share = np.where(has_cost & (base > 0), a.own_cpu / base, np.nan)
        thr = a.thr_cells > 0
        cols = {"wall_ns_raw": _int(a.wall_raw), "time_estimate": a.time_est > 0,
                "threads_time_na": a.time_na, "exclusive_estimate": a.excl_est > 0,
                "exclusive_untrusted": (a.time_na > 0) | (a.excl_bad > 0),
                "timed_visits": _int(a.timed), "timer_visits": _int(a.timer),
                "timer_only": a.timer_only(), "throttled_threads": a.thr_cells,
                "throttled_from_min": _nullable(_int(a.thr_min), ~thr),
                "throttled_from_max": _nullable(_int(a.thr_max), ~thr),
                "reads": _int(a.reads),
                "perfmark_cpu_ns": np.where(has_cost, a.own_cpu, np.nan),
                "perfmark_wall_ns": np.where(has_cost, a.own_wall, np.nan),
                "perfmark_cpu_share": share}
        for k, v in cols.items():
            # nullable columns stay Int64 (np.asarray would make objects)
            reg[k] = v[rows] if isinstance(v, pd.arrays.IntegerArray) else np.asarray(v)[rows]
        return reg

    def _summary_measuring(self):
        m = dict(self._tables().more)
        m.update(self._tables().count)
        reg = self.regions()[["index", "row", "path"]].copy()
        rows = reg["row"].to_numpy()
        for k in ("wall_ns_raw", "time_estimate", "threads_time_na", "exclusive_estimate",
                  "exclusive_untrusted", "timed_visits", "timer_visits", "timer_only",
                  "throttled_threads", "throttled_from_min", "throttled_from_max", "reads",
                  "perfmark_cpu_ns", "perfmark_wall_ns", "perfmark_cpu_share"):
            v = m[k][rows]
            if k.startswith("throttled_from"):
                reg[k] = _nullable(_int(np.maximum(v, 0)), v < 0)
            elif k in ("time_estimate", "exclusive_estimate", "exclusive_untrusted",
                       "timer_only"):
                reg[k] = v != 0
            elif k.startswith("perfmark_"):
                reg[k] = v
            else:
                reg[k] = _int(v)
        return reg

    def perfmark_reads(self):
        """perfmark's readings over the whole run: reads (Σ /thread/reads),
        ns (Σ reads x read_cost_ns over threads with a cost), thread_ns
        (Σ /thread/wall_ns), share = ns / thread_ns, cost_ns_min/_max; ns,
        share and the costs None when no thread has a measured cost."""
        tab = self._tables()
        if tab:
            u = tab.run

            def opt(k):
                return None if np.isnan(u[k]) else float(u[k])
            k = tab.run_count
            return {"reads": int(k["reads"]), "ns": opt("reads_ns"),
                    "thread_ns": int(k["thread_ns"]), "share": opt("reads_share"),
                    "cost_ns_min": opt("cost_ns_min"), "cost_ns_max": opt("cost_ns_max")}
        f = self._file
        reads = f.array("THREAD_READS")
        a = self._agg()
        cost = np.where(a.has_cost, a.cost, 0.0)
        # an exact sum of each thread's reads x cost, as the report adds
        # (its reads joined in any order give the same bits: stats.py)
        ns_sum = 0
        for n, c in zip(reads, cost):
            if c > 0:
                ns_sum = stats.add_sum(ns_sum, stats.fix(float(n) * c))
        ns = float(stats.value(ns_sum))
        wall = int(f.array("THREAD_WALL_NS").sum(dtype=np.uint64))
        has = bool(a.has_cost.any())
        return {"reads": int(reads.sum(dtype=np.uint64)), "ns": ns if has else None,
                "thread_ns": wall, "share": ns / wall if has and wall > 0 else None,
                "cost_ns_min": float(cost[cost > 0].min()) if has else None,
                "cost_ns_max": float(cost[cost > 0].max()) if has else None}

    def omp_wait(self):
        """OpenMP wait per region (tree order): `wait_ns` = the time of the
        wait regions below it (kind omp: barrier, taskwait, taskgroup; a
        wait inside a wait counted once) over every thread, `share` = of
        the region's time; across ranks, each rank's share of its own time
        in the region (rank_min/mean/max/sd, max_rank) over the ranks that
        entered with time. <NA>/NaN everywhere when the file has no wait
        region."""
        if self._tables():
            return self._summary_omp_wait()
        a = self._agg()
        reg = self.regions()
        rows = reg["row"].to_numpy()
        x = a.xomp.result()
        some = a.has_omp_wait & (x["n"] > 0)
        with np.errstate(invalid="ignore", divide="ignore"):
            share = np.where(a.has_omp_wait & (a.wall_total > 0),
                             a.omp_wait_ns.astype(float) / a.wall_total.astype(float), np.nan)
        cols = {"wait_ns": _nullable(_int(a.omp_wait_ns)[rows],
                                     np.full(len(rows), not a.has_omp_wait)),
                "share": share[rows]}
        for k in ("min", "mean", "max", "sd"):
            cols["rank_" + k] = np.where(some, x[k], np.nan)[rows]
        cols["max_rank"] = _nullable(x["max_at"][rows], ~some[rows])
        df = reg[["index", "row", "path"]].copy()
        for k, v in cols.items():
            df[k] = v
        return df

    def _summary_omp_wait(self):
        tab = self._tables()
        m = tab.more
        df = self.regions()[["index", "row", "path"]].copy()
        rows = df["row"].to_numpy()
        ns, at = tab.count["omp_wait_ns"][rows], m["omp_max_rank"][rows]
        df["wait_ns"] = _nullable(_int(ns), np.full(len(rows), not tab.run["omp_wait"]))
        df["share"] = m["omp_wait_share"][rows]
        for k in ("min", "mean", "max", "sd"):
            df["rank_" + k] = m["omp_rank_" + k][rows]
        df["max_rank"] = _nullable(_int(np.maximum(at, 0)), at < 0)
        return df

    def to_hatchet_literal(self, stat="total", samples=None):
        """The region tree in Hatchet's literal format (export.py):
        hatchet.GraphFrame.from_literal(run.to_hatchet_literal()). With
        samples=True (the first sampled event) or an event's name, each
        region also holds the sampled call paths of its own samples as
        frames, with metrics "samples (inc)" and "samples" (in a summary
        file, the kept ranks' samples beside the job's region metrics)."""
        return export.hatchet_literal(self, stat, samples)

    # ------------------------------------------------------------ samples

    def sample_events(self):
        """/samples/events: the sampled events with their periods."""
        if not self._file.sizes["S"]:
            return pd.DataFrame({"row": np.zeros(0, np.int64), "name": [], "requested": [],
                                 "period": np.zeros(0, np.int64), "unit": []})
        return self._frame("SAMPLES_EVENTS")

    def samples(self, event=None):
        """One row per (thread, region, event, instruction, call path) with
        its samples: rank, thread (its row in the job), region (row, -1 outside
        every region), region_path, event, object, offset, function (named
        from the object's symbols: samples.py), samples, and path: the call
        path, outermost caller first, then the function, joined by " > "
        ("" when the sample has no recorded callers). `event`: one event's
        rows (its name or request). Estimates are samples x the event's
        period (sample_events())."""
        return self._once(("samples", event), lambda: self._samples(event))

    def _samples(self, event):
        f = self._file
        cols = ["rank", "thread", "region", "region_path", "event", "object", "offset",
                "function", "samples", "path"]
        if not f.sizes["H"]:
            return pd.DataFrame({c: [] for c in cols})
        ev_names = list(f.field("SAMPLES_EVENTS_NAME"))
        ev_req = list(f.field("SAMPLES_EVENTS_REQUESTED"))
        mods = list(zip(f.field("SAMPLES_MODULES_BUILD_ID"), f.field("SAMPLES_MODULES_PATH")))
        sym = _samples.Symbols(mods)
        thread = _int(f.field("SAMPLES_HITS_THREAD"))
        region = _int(f.field("SAMPLES_HITS_REGION"))
        evt = _int(f.field("SAMPLES_HITS_EVENT"))
        module = _int(f.field("SAMPLES_HITS_MODULE"))
        offset = f.field("SAMPLES_HITS_OFFSET").astype(np.uint64)
        count = _int(f.field("SAMPLES_HITS_COUNT"))
        chain = _int(f.field("SAMPLES_HITS_CHAIN"))
        keep = np.ones(len(thread), bool)
        if event is not None:
            if event not in ev_names and event not in ev_req:
                raise ValueError("no sampled event %r (sampled: %s)" % (event, ", ".join(ev_names)))
            e = ev_names.index(event) if event in ev_names else ev_req.index(event)
            keep = evt == e
        first = _int(f.field("SAMPLES_CHAINS_FIRST")) if f.sizes["C"] else np.zeros(0, np.int64)
        length = _int(f.field("SAMPLES_CHAINS_LENGTH")) if f.sizes["C"] else np.zeros(0, np.int64)
        fmod = _int(f.field("SAMPLES_FRAMES_MODULE")) if f.sizes["F"] else np.zeros(0, np.int64)
        foff = (f.field("SAMPLES_FRAMES_OFFSET").astype(np.uint64) if f.sizes["F"]
                else np.zeros(0, np.uint64))
        names = {}

        def name(m, o):
            k = (m, o)
            if k not in names:
                names[k] = sym.name(m, o)
            return names[k]
        callers = {}

        def caller_names(c):
            if c not in callers:
                fr = range(int(first[c]), int(first[c]) + int(length[c]))
                callers[c] = [name(int(fmod[i]), int(foff[i]) - 1 if int(foff[i]) else 0)
                              for i in reversed(fr) if i < len(fmod)]
            return callers[c]
        rank = _int(f.field("THREADS_RANK"))
        paths = self._paths()
        rows = np.flatnonzero(keep)
        fn = [name(int(module[h]), int(offset[h])) for h in rows]
        pth = [caller_names(int(chain[h])) + [fn[i]] if 0 <= chain[h] < len(first) else []
               for i, h in enumerate(rows)]
        fix = _samples.demangle(set(fn) | {x for p in pth for x in p})
        fn = [fix.get(x, x) for x in fn]
        pth = [" > ".join(fix.get(x, x) for x in p) for p in pth]
        T = len(rank)
        return pd.DataFrame({
            "rank": np.array([rank[t] if 0 <= t < T else -1 for t in thread[rows]], np.int64),
            "thread": np.where((thread[rows] >= 0) & (thread[rows] < T),
                               self._job_rows()[np.clip(thread[rows], 0, max(T - 1, 0))],
                               thread[rows]) if T else thread[rows],
            "region": region[rows],
            "region_path": np.array([paths[r] if r >= 0 else "" for r in region[rows]],
                                    dtype=object),
            "event": np.array([ev_names[e] if 0 <= e < len(ev_names) else "" for e in evt[rows]],
                              dtype=object),
            "object": np.array([os.path.basename(mods[m][1]) if 0 <= m < len(mods) else ""
                                for m in module[rows]], dtype=object),
            "offset": offset[rows], "function": np.array(fn, dtype=object),
            "samples": count[rows], "path": np.array(pth, dtype=object)})

    def sample_paths(self, event=None):
        """The call paths of each innermost region with their samples, most
        first: region, region_path, path, samples (rows of samples() summed;
        samples without callers under path "")."""
        df = self.samples(event)
        if not len(df):
            return pd.DataFrame({"region": [], "region_path": [], "path": [], "samples": []})
        g = df.groupby(["region", "region_path", "path"], as_index=False)["samples"].sum()
        return g.sort_values(["samples", "region", "path"], ascending=[False, True, True],
                             ignore_index=True)

    def by_rank(self, quantities=None):
        """One row per (region, rank, quantity): the rank's own value (the
        sum over its threads: what `perfmark report --by rank` prints, and
        what summary()'s rank_* columns are the spread of), NaN where it has
        none, with estimate, untrusted and entered (some thread of the rank
        visited). Regions in tree order, ranks ascending; quantities as in
        summary(), or only those given. A summary file has the kept ranks'
        only (kept_ranks()); summary()'s rank_* columns are over every rank."""
        reg = self.regions()
        order = reg["row"].to_numpy()
        a = self._agg()
        ranks = a.ranks.astype(np.int64)
        nr, R = len(ranks), len(order)
        keep = None if quantities is None else set(quantities)
        frames = []
        for q, is_event, cols in a.rank_values(self.event_keys()):
            if keep is not None and q not in keep:
                continue
            df = pd.DataFrame({"index": np.repeat(reg["index"].to_numpy(), nr),
                               "rank": np.tile(ranks, R), "quantity": q,
                               "is_event": is_event})
            for k, v in cols.items():
                df[k] = v[:, order].T.ravel()  # region-major
            frames.append(df)
        if not frames:
            return pd.DataFrame(columns=["index", "row", "path", "kind", "rank", "quantity",
                                         "is_event", "value", "estimate", "untrusted", "entered"])
        out = pd.concat(frames, ignore_index=True).sort_values(["index", "rank"], kind="stable",
                                                               ignore_index=True)
        at = out["index"].to_numpy()
        for k in reversed(("row", "path", "kind")):
            out.insert(1, k, reg[k].to_numpy()[at])
        return out

    def mpi_share(self):
        """Per rank: its MPI time (outermost MPI regions, summed over its
        threads), its time (its longest thread) and the share. A summary
        file has every rank's (the job's rank 0 wrote them)."""
        tab = self._tables()
        if tab:
            x = tab.share
            return pd.DataFrame({"rank": _int(x["rank"]), "mpi_ns": _int(x["mpi_ns"]),
                                 "total_ns": _int(x["total_ns"]), "share": x["share"],
                                 "estimate": x["estimate"] != 0})
        a = self._agg()
        return pd.DataFrame({"rank": a.ranks.astype(np.int64), "mpi_ns": _int(a.mpi_ns),
                             "total_ns": _int(a.total_ns), "share": a.share,
                             "estimate": a.mpi_est})

    def mpi_share_stats(self):
        """min/mean/max of the MPI share over the ranks with one (every rank
        counts: no MPI at all is 0), and the lowest ranks holding min and
        max; None for each when no rank has a time."""
        tab = self._tables()
        if tab:
            u = tab.run
            some = not np.isnan(u["share_mean"])
            return {"min": float(u["share_min"]) if some else None,
                    "mean": float(u["share_mean"]) if some else None,
                    "max": float(u["share_max"]) if some else None,
                    "min_rank": int(u["share_min_rank"]) if some else None,
                    "max_rank": int(u["share_max_rank"]) if some else None}
        r = self._agg().share_spread.result()
        some = bool(r["n"] > 0)
        out = {k: float(r[k]) if some else None for k in ("min", "mean", "max")}
        out.update(min_rank=int(r["min_at"]) if some else None,
                   max_rank=int(r["max_at"]) if some else None)
        return out

    # ------------------------------------ TopDown and the derived metrics

    def _topdown(self):
        def make():
            setup = topdown.Setup(self._file)
            if setup.ok and self._file.is_summary:
                # the job's TopDown over every rank, as its rank 0 finished it
                # (its cells are the kept ranks' only)
                made = self._tables().topdown(setup, topdown.NODES,
                                              [n for n, _ in topdown.LEFT_OUT])
                if made:
                    return setup, made[0], made[1]
                setup.ok, setup.ev = False, []
                setup.problem = "a summary file without its TopDown table"
            regs = topdown.regions(self._file, setup) if setup.ok else None
            run = topdown.whole_run(self._file, setup) if setup.ok else None
            return setup, regs, run
        return self._once("topdown", make)

    def topdown_info(self):
        """What the TopDown breakdown rests on (the report's "topdown"):
        method (the file's topdown_method, None without TopDown), levels
        shown, file_levels, model (cpu_model), events (their keys, in the
        method's order), problem (why there is no breakdown, else None),
        note (what it lacks that the file announced, else None)."""
        setup, _, _ = self._topdown()
        keys = self.event_keys()
        return {"method": setup.method_attr or None,
                "levels": setup.levels if setup.on else None,
                "file_levels": setup.file_levels, "model": setup.cpu_model,
                "events": [keys[e] for e in setup.ev], "problem": setup.problem or None,
                "note": setup.note or None, "hybrid": setup.hybrid}

    def topdown(self):
        """TopDown per region (tree order) and for the whole run (last row,
        index and row <NA>, path None): one column per shown level-1 and
        level-2 share (fractions of the summed level-1 slots; NaN where
        there are none), the slot counts (slots, slots_<node>), cells_used,
        the cells left out (left_out_NOT_COUNTED, _LOST_GENERATION,
        _SHORT), estimate, and on hybrid CPUs pcore_share. The frame's
        attrs["topdown"] is topdown_info(). Empty (no rows) when the file
        has no TopDown or its TopDown cannot be evaluated (see the problem)."""
        setup, regs, whole = self._topdown()
        nodes = [n for n in topdown.NODES if setup.shown(n)] if setup.ok else []
        cols = (["index", "row", "path"] + nodes + ["slots"] + ["slots_" + n for n in nodes] +
                ["cells_used"] + ["left_out_" + n for n, _ in topdown.LEFT_OUT] +
                ["estimate"] + (["pcore_share"] if setup.hybrid else []))
        rows = []
        if setup.ok:
            reg = self.regions()
            stats_rows = [(int(i), int(r), p, regs[r])
                          for i, r, p in zip(reg["index"], reg["row"], reg["path"])]
            for i, r, p, s in stats_rows + [(-1, -1, None, whole)]:
                row = {"index": i, "row": r, "path": p, "slots": s["slots"],
                       "cells_used": s["cells_used"], "estimate": s["estimate"]}
                for n in nodes:
                    row[n] = s["ratios"][n] if s["ratios"] else np.nan
                    row["slots_" + n] = s["node_slots"][n]
                for n, k in s["cells_left_out"].items():
                    row["left_out_" + n] = k
                if setup.hybrid:
                    row["pcore_share"] = (np.nan if s["pcore_share"] is None
                                          else s["pcore_share"])
                rows.append(row)
        df = pd.DataFrame(rows, columns=cols)
        for k in cols:
            if k in ("index", "row"):
                v = df[k].to_numpy(dtype=np.int64)
                df[k] = _nullable(v, v < 0)
            elif k in ("path",):
                continue
            elif k == "estimate":
                df[k] = df[k].astype(bool)
            elif k in nodes or k == "pcore_share":
                df[k] = df[k].astype(float)
            elif k == "slots" or k.startswith("slots_"):
                df[k] = df[k].astype(np.uint64)  # slot sums reach 2^63 on large jobs
            else:
                df[k] = df[k].astype(np.int64)
        df.attrs["topdown"] = self.topdown_info()
        return df

    def derived(self):
        """The derived metrics of the CPU-model tables (branch, cache, mem
        groups whose events the file holds): one row per (region in tree
        order, group, metric): model, group, metric, description, value =
        scale x Σnum / Σden of the region's event totals (NaN without both
        totals or with a denominator not above 0), estimate, untrusted.
        Empty when the file holds no whole group."""
        found = derived.find_groups(self._file)
        cols = ["index", "row", "path", "model", "group", "metric", "description", "value",
                "estimate", "untrusted"]
        rows = []
        if found:
            s = self.summary()
            keys = self.event_keys()
            # (region index, event key): (total or None, estimate, untrusted)
            tot = {(int(i), q): (None if np.isnan(t) else float(t), bool(e), bool(u))
                   for i, q, t, e, u in zip(s["index"], s["quantity"], s["total"],
                                            s["estimate"], s["untrusted"])}
            reg = self.regions()
            for i, r, p in zip(reg["index"], reg["row"], reg["path"]):
                for model, g, evrows in found:
                    for d in g["derived"]:
                        num = tot[(int(i), keys[evrows[d["num"]]])]
                        den = tot[(int(i), keys[evrows[d["den"]]])] if d["den"] >= 0 else None
                        v, est, unt = derived.value(d, num, den)
                        rows.append({"index": int(i), "row": int(r), "path": p,
                                     "model": model["name"], "group": g["name"],
                                     "metric": d["name"], "description": d["description"],
                                     "value": np.nan if v is None else v, "estimate": est,
                                     "untrusted": unt})
        return pd.DataFrame(rows, columns=cols).astype(
            {"index": np.int64, "row": np.int64, "value": float, "estimate": bool,
             "untrusted": bool})
