"""perfmark.diff(a, b): `perfmark diff A.h5 B.h5` as a DataFrame, with the
same verdicts.

The rules are analysis/model/diff_model.c's, in its order of arithmetic:

  unit   = a rank when either file holds more than one rank, else a thread;
  value  = the metric over every thread's cell of the region (the report's
           counting rules: events scaled per cell, estimates and untrusted
           totals marked), summed thread by thread within a unit, units in
           ascending order;
  mean   = over the units that entered the region and have a value;
  spread = the larger of (max - min) over those units in A and in B; the
           change is beyond it when |mean(B) - mean(A)| > spread;
  regression (with a threshold) = an increase of more than the threshold in
           percent of A (time, visits, events; from 0 to a value at any
           threshold), a decrease for ipc.

A timer-only cell (MPI polls: no counter read by design) adds no count; a
region whose every visiting cell is timer-only has no count ("timer only");
a THROTTLED cell's counts are those before the throttle ("throttled").
Cells are read a block of thread rows at a time; memory is one block plus
the sums of the units not yet complete.
"""
import numpy as np
import pandas as pd

from . import stats
from .aggregate import LOST_GENERATION_BIT, TIMER_ONLY_BIT, block_rows
from .stats import ESTIMATE, EXACT, NONE

THROTTLED_BIT = 0x100
TIME, VISITS, EVENT, IPC = "time", "visits", "event", "ipc"
SIDE_COLUMNS = ("value", "estimate", "untrusted", "units", "mean", "min", "max",
                "timer_only", "throttled")


class _Metric:
    """What is compared: quantity rows qa (and qb for ipc: instructions /
    cycles) of each file's quantities (0 time, 1 visits, 2 + e event e)."""

    def __init__(self, kind, name, qa=(0, 0), qb=(-1, -1)):
        self.kind, self.name, self.qa, self.qb = kind, name, qa, qb


def _metrics(fa, fb):
    """time, visits, every event of A also in B (the first of a repeated
    name), ipc when both have instructions and cycles."""
    ea, eb = list(fa.field("EVENTS_NAME")), list(fb.field("EVENTS_NAME"))
    out = [_Metric(TIME, "time", (0, 0)), _Metric(VISITS, "visits", (1, 1))]
    for e, name in enumerate(ea):
        if name in eb and ea.index(name) == e:
            out.append(_Metric(EVENT, name, (2 + e, 2 + eb.index(name))))
    if all(n in names for names in (ea, eb) for n in ("instructions", "cycles")):
        out.append(_Metric(IPC, "ipc", (2 + ea.index("instructions"), 2 + eb.index("instructions")),
                           (2 + ea.index("cycles"), 2 + eb.index("cycles"))))
    return out


def _measuring(f):
    """Whether the file says which visits read counters (the throttle)."""
    return f.attr("THROTTLE") != "" or any(
        f.has(i) for i in ("REGION_READS", "REGION_TIMER_VISITS", "REGION_TIMED_VISITS",
                           "REGION_THROTTLED_FROM"))


class _Unit:
    """One unit's running sums of every (region + the whole run, quantity)."""

    def __init__(self, shape):
        self.S = stats.zeros(shape)  # exact sums (stats.py)
        self.nvals = np.zeros(shape, np.int64)
        self.n_na = np.zeros(shape, np.int64)
        self.estimate = np.zeros(shape, bool)
        self.entered = np.zeros(shape[0], bool)

    @property
    def total(self):
        return stats.value(self.S)


class _Side:
    """One file's sides of every (region + the whole run, metric) while its
    units are folded in, in ascending unit order."""

    def __init__(self, f, metrics, fi):
        self.f, self.fi = f, fi
        n = f.sizes
        self.T, self.R, self.E = n["T"], n["R"], n["E"]
        R1, M = self.R + 1, len(metrics)
        self.shape = (R1, 2 + self.E)
        self.qa = np.array([m.qa[fi] for m in metrics], np.int64)
        qb = np.array([m.qb[fi] for m in metrics], np.int64)
        self.ratio = qb >= 0
        self.qb = np.where(self.ratio, qb, self.qa)
        self.counts = np.array([m.kind in (EVENT, IPC) for m in metrics], bool)
        self.visits_m = np.array([m.kind == VISITS for m in metrics], bool)
        self.total = np.zeros(self.shape)
        self.vals = np.zeros(self.shape, np.int64)
        self.na = np.zeros(self.shape, np.int64)
        z = np.zeros((R1, M))
        self.estimate, self.untrusted = z.astype(bool), z.astype(bool)
        self.units = z.astype(np.int64)
        self.min, self.max, self.sum = z.copy(), z.copy(), z.copy()
        self.lost = np.zeros(R1, bool)
        self.timer_cells = np.zeros(R1, np.int64)
        self.counted_cells = np.zeros(R1, np.int64)
        self.partial = np.zeros(R1, bool)
        names = f.flag_names()
        self.timer_bit = TIMER_ONLY_BIT if names.get(TIMER_ONLY_BIT) == "TIMER_ONLY" else 0
        self.thr_bit = THROTTLED_BIT if names.get(THROTTLED_BIT) == "THROTTLED" else 0
        self.group = f.field("EVENTS_GROUP").astype(np.int64)

    # ------------------------------------------------------- the cells

    def _block(self, t0, t1):
        """(value, kind, put, visited) [nt, R + 1, Q] of threads t0:t1: the
        regions' cells, then the thread's whole-run totals (/thread)."""
        f, g, R = self.f, self.group, self.R
        V = f.array("REGION_VISITS", t0, t1)
        F = f.array("REGION_FLAGS", t0, t1)
        wall = f.array("REGION_WALL_NS", t0, t1)
        timed = f.array("REGION_TIMED_VISITS", t0, t1) if f.has("REGION_TIMED_VISITS") else V
        raw = f.array("REGION_COUNTS", t0, t1)
        en = f.array("REGION_ENABLED_NS", t0, t1)[:, :, g]
        run = f.array("REGION_RUNNING_NS", t0, t1)[:, :, g]
        traw = f.array("THREAD_COUNTS", t0, t1)[:, None, :]
        ten = f.array("THREAD_ENABLED_NS", t0, t1)[:, g][:, None, :]
        trun = f.array("THREAD_RUNNING_NS", t0, t1)[:, g][:, None, :]
        twall = f.array("THREAD_WALL_NS", t0, t1)[:, None]
        tflags = f.array("THREAD_FLAGS", t0, t1)[:, None]
        nt = t1 - t0
        visited = np.concatenate([V > 0, np.ones((nt, 1), bool)], 1)
        flags = np.concatenate([F, tflags], 1)
        ns, tkind = stats.cell_time(wall, V, timed)
        time_v = np.concatenate([ns, twall], 1).astype(float)
        time_k = np.concatenate([tkind, np.full((nt, 1), EXACT)], 1)
        time_put = visited | (np.concatenate([ns, twall], 1) != 0)
        vis_v = np.concatenate([V.astype(float), np.zeros((nt, 1))], 1)
        vis_put = np.concatenate([V > 0, np.zeros((nt, 1), bool)], 1)  # the whole run: none
        raw = np.concatenate([raw, traw], 1)
        en = np.concatenate([en, ten], 1)
        run = np.concatenate([run, trun], 1)
        ev_v, ev_k = stats.cell_value(raw, en, run)
        ev_put = visited[:, :, None] | (raw != 0) | (en != 0)
        # a timer-only visiting cell read no counter: its zeros are no count
        timer = np.zeros((nt, R + 1), bool)
        if self.timer_bit:
            timer[:, :R] = (V > 0) & ((F & self.timer_bit) != 0)
        ev_put &= ~timer[:, :, None]
        value = np.concatenate([time_v[:, :, None], vis_v[:, :, None], ev_v], 2)
        kind = np.concatenate([time_k[:, :, None], np.full((nt, R + 1, 1), EXACT), ev_k], 2)
        put = np.concatenate([time_put[:, :, None], vis_put[:, :, None], ev_put], 2)
        # what marks the counts of a region (not the whole run)
        vis_r = np.zeros((nt, R + 1), bool)
        vis_r[:, :R] = V > 0
        self.lost |= ((flags & LOST_GENERATION_BIT) != 0).any(0)
        self.timer_cells += timer.sum(0)
        self.counted_cells += (vis_r & ~timer).sum(0)
        if self.thr_bit:
            self.partial |= (vis_r & ~timer & ((flags & self.thr_bit) != 0)).any(0)
        return value, kind, put, visited

    def add_thread(self, u, value, kind, put, visited):
        """One thread's cells into its unit (pm_acc_put: a cell that is no
        evidence adds nothing; one without a value counts as n/a)."""
        has = put & (kind != NONE)
        u.S = stats.add_sum(u.S, np.where(has, stats.fix(value), 0))
        u.nvals += has
        u.n_na += put & (kind == NONE)
        u.estimate |= put & (kind == ESTIMATE)
        u.entered |= visited

    def fold_unit(self, u):
        """A unit whose every thread is in, into the sides."""
        self.total = self.total + u.total
        self.vals += u.nvals
        self.na += u.n_na
        a, b = self.qa, self.qb
        self.estimate |= u.estimate[:, a] | (self.ratio & u.estimate[:, b])
        self.untrusted |= (u.n_na[:, a] > 0) | (self.ratio & (u.n_na[:, b] > 0))
        has_total = ~((u.n_na > 0) & (u.nvals == 0))
        has = has_total[:, a] & (~self.ratio | (has_total[:, b] & (u.total[:, b] > 0)))
        has &= u.entered[:, None]
        with np.errstate(invalid="ignore", divide="ignore"):
            v = np.where(self.ratio, u.total[:, a] / u.total[:, b], u.total[:, a])
        first = self.units == 0
        self.min = np.where(has & (first | (v < self.min)), v, self.min)
        self.max = np.where(has & (first | (v > self.max)), v, self.max)
        self.sum = np.where(has, self.sum + v, self.sum)
        self.units += has

    def finish(self):
        """{column: array [R + 1, M]} of every side (pm_side_finish)."""
        a, b = self.qa, self.qb
        no_val = (self.na > 0) & (self.vals == 0)
        has = ~no_val[:, a] & (~self.ratio | (~no_val[:, b] & (self.total[:, b] > 0)))
        timer_only = self.counts & ((self.timer_cells > 0) & (self.counted_cells == 0))[:, None]
        has &= ~timer_only
        units = np.where(timer_only, 0, self.units)
        has[self.R] &= ~self.visits_m  # the whole run has no visit count
        units[self.R] = np.where(self.visits_m, 0, units[self.R])
        with np.errstate(invalid="ignore", divide="ignore"):
            total = np.where(self.ratio & has, self.total[:, a] / self.total[:, b],
                             self.total[:, a])
            mean = np.where(units > 0, self.sum / np.maximum(units, 1), np.nan)
        some = units > 0
        return {"has": has, "_total": total, "value": np.where(has & np.isfinite(total), total, np.nan),
                "estimate": self.estimate, "untrusted": self.untrusted | (self.counts & self.lost[:, None]),
                "units": units, "mean": mean,
                "min": np.where(some, self.min, np.nan), "max": np.where(some, self.max, np.nan),
                "timer_only": timer_only, "throttled": self.counts & self.partial[:, None]}

    # ------------------------------------------------------- one pass

    def run(self, unit):
        """Every thread, a block at a time; each unit folded in as soon as it
        is complete and every lower unit is (ascending unit order)."""
        last = {}
        for t, k in enumerate(unit):
            last[k] = t
        open_units, done, nxt = {}, set(), 0
        B = block_rows(self.f) or 1
        for t0 in range(0, self.T, B):
            t1 = min(t0 + B, self.T)
            value, kind, put, visited = self._block(t0, t1)
            for i in range(t1 - t0):
                t, k = t0 + i, unit[t0 + i]
                u = open_units.setdefault(k, _Unit(self.shape))
                self.add_thread(u, value[i], kind[i], put[i], visited[i])
                if last[k] == t:
                    done.add(k)
                while nxt in done:
                    self.fold_unit(open_units.pop(nxt))
                    done.discard(nxt)
                    nxt += 1
        return self.finish()


def _summary_side(run, metrics, fi):
    """A summary file's sides (pm_diff_summary_sides): each region's
    statistics across ranks from its tables; the whole run has no value (a
    summary keeps no totals over every thread); IPC is the ratio of the
    totals, without a spread (no rank's own is kept)."""
    tab = run._tables()
    st, thr = tab.stat, tab.more["throttled_threads"] > 0
    timer_only = tab.more["timer_only"] != 0
    R, M = tab.R, len(metrics)
    out = {"has": np.zeros((R + 1, M), bool), "_total": np.zeros((R + 1, M)),
           "units": np.zeros((R + 1, M), np.int64)}
    for c in ("estimate", "untrusted", "timer_only", "throttled"):
        out[c] = np.zeros((R + 1, M), bool)
    for c in ("mean", "min", "max"):
        out[c] = np.full((R + 1, M), np.nan)

    def q_of(x):  # diff quantity (0 time, 1 visits, 2 + e) -> summary's
        return {0: 1, 1: 0}.get(x, 5 + x - 2)
    for j, m in enumerate(metrics):
        qa = q_of(m.qa[fi])
        tot, has = st["rank_total"][:, qa], ~np.isnan(st["rank_total"][:, qa])
        if m.kind == IPC:
            qc = q_of(m.qb[fi])
            ct = st["rank_total"][:, qc]
            has = has & ~np.isnan(ct) & (ct > 0)
            with np.errstate(invalid="ignore", divide="ignore"):
                tot = np.where(has, tot / ct, tot)
            est = st["rank_estimate"][:, qa] | st["rank_estimate"][:, qc]
            unt = st["rank_untrusted"][:, qa] | st["rank_untrusted"][:, qc]
        else:
            est, unt = st["rank_estimate"][:, qa], st["rank_untrusted"][:, qa]
            out["units"][:R, j] = st["ranks"][:, qa]
            for c in ("mean", "min", "max"):
                out[c][:R, j] = st["rank_" + c][:, qa]
        off = timer_only if m.kind in (EVENT, IPC) else np.zeros(R, bool)
        keep = ~off
        out["has"][:R, j] = has & keep
        out["_total"][:R, j] = np.where(keep, np.nan_to_num(tot, nan=0.0), 0.0)
        out["estimate"][:R, j] = est & keep
        out["untrusted"][:R, j] = unt & keep
        out["units"][:R, j] = np.where(keep, out["units"][:R, j], 0)
        for c in ("mean", "min", "max"):
            out[c][:R, j] = np.where(keep, out[c][:R, j], np.nan)
        out["timer_only"][:R, j] = off
        out["throttled"][:R, j] = keep & thr if m.kind in (EVENT, IPC) else False
    total = out["_total"]
    out["value"] = np.where(out["has"] & np.isfinite(total), total, np.nan)
    return out


def _units(fs):
    """Each thread's unit in each file: its rank's index among the file's
    ranks when either file holds several ranks (or is a summary file: its
    statistics are across ranks), else the thread itself."""
    ranks = [f.field("THREADS_RANK").astype(np.int64) for f in fs]
    by_rank = any(len(np.unique(r)) > 1 for r in ranks) or any(f.is_summary for f in fs)
    if by_rank:
        return True, [np.searchsorted(np.unique(r), r) for r in ranks]
    return False, [np.arange(len(r)) for r in ranks]


def _pairs(paths, kinds, names, region):
    """(row in A or None, row in B or None): the whole run first (row -1),
    then A's regions in row order, then those only in B. Regions match by
    (path, kind); a repeated (path, kind) pairs in row order."""
    keys = [{} for _ in range(2)]
    for fi in range(2):
        for r, key in enumerate(zip(paths[fi], kinds[fi])):
            keys[fi].setdefault(key, []).append(r)
    match = [dict(), dict()]
    for key, rows_a in keys[0].items():
        for ra, rb in zip(rows_a, keys[1].get(key, [])):
            match[0][ra], match[1][rb] = rb, ra

    def wanted(fi, r):
        return region is None or region in (names[fi][r], paths[fi][r])

    out = [] if region is not None else [(-1, -1)]
    for r in range(len(paths[0])):
        m = match[0].get(r)
        if wanted(0, r) or (m is not None and wanted(1, m)):
            out.append((r, m))
    for r in range(len(paths[1])):
        if r not in match[1] and wanted(1, r):
            out.append((None, r))
    return out


class Diff:
    """The change from run A to run B: `table` one row per (region in both,
    metric), `only_in_a` / `only_in_b` the call paths in one file only,
    `regressions` the rows of the checked metric that regress (empty
    without a threshold), `unit` "rank" or "thread", `summary` which of
    the two is a summary file (its sides: the statistics across every rank
    of its job; its whole run: no value)."""

    def __init__(self, a, b, metric=None, threshold=None, region=None):
        from .run import Run
        runs = [x if isinstance(x, Run) else Run(x) for x in (a, b)]
        self._own = [r for r, x in zip(runs, (a, b)) if r is not x]
        try:
            self._build(runs, metric, threshold, region)
        finally:
            for r in self._own:
                r.close()

    def _build(self, runs, metric, threshold, region):
        fs = [r._file for r in runs]
        self.paths = [r.path for r in runs]
        if threshold is not None and (not np.isfinite(threshold) or threshold < 0):
            raise ValueError("threshold takes a percentage >= 0, not %r" % (threshold,))
        if threshold is not None and metric is None:
            metric = "time"
        self.threshold, self.region = threshold, region
        ms = _metrics(*fs)
        self.metrics = [m.name for m in ms]
        if metric is not None and metric not in self.metrics:
            raise ValueError("no metric '%s' in both files (%s)" % (metric, ", ".join(self.metrics)))
        self.metric = metric
        self.measuring = any(_measuring(f) for f in fs)
        by_rank, unit = _units(fs)
        self.unit = "rank" if by_rank else "thread"
        self.threads = [f.sizes["T"] for f in fs]
        self.units = [int(u.max()) + 1 if len(u) else 0 for u in unit]
        # a summary file's sides are its statistics across every rank of
        # the job (its cells are the kept ranks' only)
        self.summary = [f.is_summary for f in fs]
        for i, f in enumerate(fs):
            if f.is_summary and f.attr("RANKS") > 0:
                self.units[i] = int(f.attr("RANKS"))
        sides = [_summary_side(runs[i], ms, i) if fs[i].is_summary else
                 _Side(fs[i], ms, i).run(unit[i]) for i in range(2)]
        paths = [list(r._paths()) for r in runs]
        kinds = [list(f.field("REGIONS_KIND")) for f in fs]
        names = [list(f.field("REGIONS_NAME")) for f in fs]
        pairs = _pairs(paths, kinds, names, region)
        if region is not None and not pairs:
            raise ValueError("no region named '%s' in either file" % region)
        self.only_in_a = [paths[0][ra] for ra, rb in pairs if rb is None]
        self.only_in_b = [paths[1][rb] for ra, rb in pairs if ra is None]
        rows = []
        for ra, rb in pairs:
            if ra is None or rb is None:
                continue
            whole = ra == -1
            at = [fs[i].sizes["R"] if whole else (ra, rb)[i] for i in range(2)]
            for j, m in enumerate(ms):
                if (metric is not None and m.name != metric) or (whole and m.kind == VISITS):
                    continue
                rows.append(self._row(m, j, sides, at, None if whole else paths[0][ra],
                                      "" if whole else kinds[0][ra]))
        self.table = pd.DataFrame(rows, columns=self._columns())
        self.table["beyond_spread"] = self.table["beyond_spread"].astype("boolean")
        for c in ("a_units", "b_units"):
            self.table[c] = self.table[c].astype(np.int64)
        checked = self.table["metric"] == self.metric if self.metric else False
        self.regressions = self.table[checked & self.table["regression"]].reset_index(drop=True)

    @staticmethod
    def _columns():
        return (["path", "kind", "whole_run", "metric"] +
                ["%s_%s" % (s, c) for s in "ab" for c in SIDE_COLUMNS] +
                ["change", "change_pct", "beyond_spread", "regression"])

    def _row(self, m, j, sides, at, path, kind):
        """One (pair, metric): both sides and how B differs (pm_compare)."""
        s = [{c: sides[i][c][at[i], j] for c in ("has",) + SIDE_COLUMNS} for i in range(2)]
        row = {"path": path, "kind": kind, "whole_run": path is None, "metric": m.name}
        for i, side in zip("ab", s):
            for c in SIDE_COLUMNS:
                row["%s_%s" % (i, c)] = side[c].item() if hasattr(side[c], "item") else side[c]
        change = pct = beyond = None
        regressed = False
        a, b = s
        if a["has"] and b["has"]:
            ta, tb = float(sides[0]["_total"][at[0], j]), float(sides[1]["_total"][at[1], j])
            change = tb - ta
            if ta != 0:
                pct, new = 100.0 * change / abs(ta), False
            else:
                pct, new = (0.0, False) if tb == 0 else (None, True)
            ua, ub = int(a["units"]), int(b["units"])
            if (ua >= 2 or ub >= 2) and ua >= 1 and ub >= 1:
                sa = a["max"] - a["min"] if ua >= 2 else 0.0
                sb = b["max"] - b["min"] if ub >= 2 else 0.0
                beyond = bool(abs(b["mean"] - a["mean"]) > max(sa, sb))
            if self.threshold is not None:
                if m.kind != IPC:
                    regressed = change > 0 if new else pct > self.threshold
                else:
                    regressed = pct is not None and pct < -self.threshold
        row.update(change=np.nan if change is None else change,
                   change_pct=np.nan if pct is None else pct,
                   beyond_spread=beyond, regression=bool(regressed))
        return row

    def __repr__(self):
        return "<perfmark.Diff %s -> %s: %d rows, %d regressions>" % (
            self.paths[0], self.paths[1], len(self.table), len(self.regressions))


def diff(a, b, metric=None, threshold=None, region=None):
    """The change from run A to run B, as `perfmark diff A B`: a and b are
    paths or open Runs. metric: keep only that metric (and check it);
    threshold: percent beyond which a change regresses (the checked metric
    is then `time` unless metric names another); region: only regions of
    that name or call path (the whole run is then left out). Raises
    ValueError for a metric not in both files or a region in neither."""
    return Diff(a, b, metric=metric, threshold=threshold, region=region)
