"""The report's numbers: every region over its threads and across ranks,
MPI functions, MPI share — one pass over the cells, a block of thread rows
at a time (memory bounded by one block and the per-rank sums).

The rules are tests/report/README.md's ("Counting rules", "Across ranks",
the throttle's times); the order of arithmetic is the report's (stats.py),
including its blocks: the same number of thread rows per block
(block_rows), each block summed on its own and joined in order, so that
results equal `perfmark report --format json` digit for digit.
"""
import os

import numpy as np

from . import stats
from .stats import ESTIMATE, EXACT, NONE, Across, Spread, Total

BLOCK_BYTES = 4 << 20  # cell bytes per block, about: analysis/model/report_stream.c
OMP_WAITS = ("omp barrier", "omp taskwait", "omp taskgroup", "omp critical")
# The quantities compared across ranks before the events: the report's
# PM_Q_* order; "exclusive_ns" comes after the events.
QUANTITIES = ["visits", "wall_ns", "bytes", "bytes_unknown"]
TIMER_ONLY_BIT, LOST_GENERATION_BIT = 0x80, 0x04


def block_rows(f):
    """Thread rows per block, as analysis/model/report_stream.c (pm_block_rows)
    picks them from the file alone; PERFMARK_REPORT_BLOCK=N overrides it."""
    n = f.sizes
    has_visit_data = any(f.has(i) for i in ("REGION_READS", "REGION_TIMER_VISITS",
                                            "REGION_TIMED_VISITS", "REGION_THROTTLED_FROM"))
    row = n["R"] * (n["E"] + 2 * n["G"] + 5 + (4 if has_visit_data else 0)) * 8
    want = max(BLOCK_BYTES // row if row else n["T"], 1)
    c = f.chunk_rows("REGION_COUNTS")
    if c > 0:
        want = c if want < c else want // c * c
    env = os.environ.get("PERFMARK_REPORT_BLOCK", "")
    if env.isdigit() and int(env) > 0:
        want = int(env)
    return min(want, n["T"]) if n["T"] > 0 else want


class Aggregate:
    """Everything summary() and mpi() show, computed once per Run."""

    def __init__(self, f):
        self.f = f
        n = f.sizes
        self.T, self.R, self.E, self.G = n["T"], n["R"], n["E"], n["G"]
        self.parent = f.field("REGIONS_PARENT")
        self.kind = f.field("REGIONS_KIND")
        self.name = f.field("REGIONS_NAME")
        self.group = f.field("EVENTS_GROUP").astype(np.int64)
        thr_rank = f.field("THREADS_RANK").astype(np.int64)
        self.ranks = np.unique(thr_rank)
        self.rank_of = np.searchsorted(self.ranks, thr_rank)
        self.nq = len(QUANTITIES) + self.E + 1  # ..., events, exclusive
        self._wait_pairs()
        self._mpi_rows()
        self._flag_bits()
        self._pass()
        self._across_ranks()

    # ----------------------------------------------------------- setup

    def _wait_pairs(self):
        """(region above, wait region below) for the OpenMP wait: up to and
        including the nearest wait above (it already holds the inner one)."""
        is_wait = [k == "omp" and nm in OMP_WAITS for k, nm in zip(self.kind, self.name)]
        self.has_omp_wait = any(is_wait)
        self.wait_pairs = []
        for w in range(self.R):
            if not is_wait[w]:
                continue
            a = self.parent[w]
            while a >= 0:
                self.wait_pairs.append((int(a), w))
                if is_wait[a]:
                    break
                a = self.parent[a]

    def _mpi_rows(self):
        """MPI regions, and those with no MPI region above (a rank's MPI time)."""
        self.is_mpi = np.array([k == "mpi" for k in self.kind], bool)
        outer = np.ones(self.R, bool)
        for r in range(self.R):
            p = self.parent[r]
            outer[r] = not (p >= 0 and (self.is_mpi[p] or not outer[p]))
        self.mpi_outer = self.is_mpi & outer

    def _flag_bits(self):
        names = self.f.flag_names()
        self.flag_names = names
        self.timer_only_bit = TIMER_ONLY_BIT if names.get(TIMER_ONLY_BIT) == "TIMER_ONLY" else 0

    # ------------------------------------------------------ the cell pass

    def _times(self, ns, kind):
        """Exclusive time of every cell of a block: its time minus its
        children's (clamped at 0), none without a time of its own; marked an
        estimate when it or a child is, `bad` when a child has no time."""
        excl = np.zeros_like(ns)
        ekind = np.full(kind.shape, EXACT)
        bad = np.zeros(kind.shape, bool)
        for r in range(self.R - 1, -1, -1):  # parents come first: children are in
            child_est = ekind[:, r] == ESTIMATE
            none = kind[:, r] == NONE
            mine = ns[:, r]
            excl[:, r] = np.where(none | (mine <= excl[:, r]), 0, mine - excl[:, r])
            ekind[:, r] = np.where(none, NONE,
                                   np.where((kind[:, r] == ESTIMATE) | child_est, ESTIMATE, EXACT))
            p = self.parent[r]
            if p >= 0:
                excl[:, p] += mine
                ekind[:, p] = np.where(kind[:, r] == ESTIMATE, ESTIMATE, ekind[:, p])
                bad[:, p] |= none
        return excl, ekind, bad

    def _read_block(self, t0, t1):
        f = self.f
        c = {k: f.array("REGION_" + k.upper(), t0, t1) for k in
             ("visits", "wall_ns", "flags", "counts", "enabled_ns", "running_ns", "bytes",
              "bytes_unknown", "reads", "timer_visits", "throttled_from")}
        # absent in files before the throttle: every visit was timed
        c["timed"] = (f.array("REGION_TIMED_VISITS", t0, t1) if f.has("REGION_TIMED_VISITS")
                      else c["visits"])
        return c

    def _pass(self):
        T, R, E = self.T, self.R, self.E
        self.B = block_rows(self.f)
        self.visits = np.zeros(R, np.uint64)
        self.wall_total = np.zeros(R, np.uint64)
        self.excl_total = np.zeros(R, np.uint64)
        self.wall_sum = np.zeros(R, np.uint64)  # over visiting threads with a time
        self.nvisited = np.zeros(R, np.int64)
        self.time_na = np.zeros(R, np.int64)
        self.time_est = np.zeros(R, np.int64)
        self.bits = np.zeros((R, 32), np.int64)
        self.seen = 0
        self.cells = self.flagged = 0
        self.raw = np.zeros((R, E), np.uint64)
        self.en = np.zeros((R, E), np.uint64)
        self.run_ns = np.zeros((R, E), np.uint64)
        self.omp_wait_ns = np.zeros(R, np.uint64)
        # which visits were measured, and perfmark's own part (the throttle)
        self.wall_raw = np.zeros(R, np.uint64)
        self.timed = np.zeros(R, np.uint64)
        self.timer = np.zeros(R, np.uint64)
        self.reads = np.zeros(R, np.uint64)
        self.excl_est = np.zeros(R, np.int64)
        self.excl_bad = np.zeros(R, np.int64)
        self.thr_cells = np.zeros(R, np.int64)
        self.thr_min = np.zeros(R, np.uint64)
        self.thr_max = np.zeros(R, np.uint64)
        self.own_cpu_S = stats.zeros(R)  # exact sums (stats.py)
        self.own_wall_S = stats.zeros(R)
        self.cost = self._read_costs()
        self.ev = Total((R, E))
        self.ev_spread = Spread((R, E))
        self.wall = Spread(R)
        self.excl = Spread(R)
        nr = len(self.ranks)
        self.rq = [None] * nr          # per rank: Total over [R, nq]
        # per rank: some cell has a value (report --by rank's rule: a
        # timer-only cell has no count, a cell never counted none)
        self.rhas = np.zeros((nr, R, self.nq), bool)
        self.omp_t = np.zeros((nr, R), np.uint64)
        self.omp_w = np.zeros((nr, R), np.uint64)
        self.mpi_ns = np.zeros(nr, np.uint64)
        self.mpi_est = np.zeros(nr, bool)
        for t0 in range(0, T, self.B or 1):
            self._block(t0, min(t0 + self.B, T))

    def _block(self, t0, t1):
        R, E = self.R, self.E
        c = self._read_block(t0, t1)
        V, F = c["visits"], c["flags"]
        ns, kind = stats.cell_time(c["wall_ns"], V, c["timed"])
        excl, ekind, ebad = self._times(ns, kind)
        visited = V > 0
        en = c["enabled_ns"][:, :, self.group]
        run = c["running_ns"][:, :, self.group]
        raw = c["counts"]
        val, vkind = stats.cell_value(raw, en, run)
        counted = visited[:, :, None] | (raw != 0) | (en != 0)
        lost = (F & LOST_GENERATION_BIT) != 0
        # integers: order does not matter
        self.visits += V.sum(0, dtype=np.uint64)
        self.wall_total += ns.sum(0, dtype=np.uint64)
        self.excl_total += excl.sum(0, dtype=np.uint64)
        has_w = visited & (kind != NONE)
        self.wall_sum += np.where(has_w, ns, 0).sum(0, dtype=np.uint64)
        self.nvisited += visited.sum(0)
        self.time_na += (kind == NONE).sum(0)
        self.time_est += (kind == ESTIMATE).sum(0)
        for b in range(32):
            self.bits[:, b] += ((F >> np.uint32(b)) & 1).sum(0).astype(np.int64)
        self.seen |= int(np.bitwise_or.reduce(F, axis=None)) if F.size else 0
        self.cells += int((visited | (F != 0)).sum())
        self.flagged += int((F != 0).sum())
        self.raw += raw.sum(0, dtype=np.uint64)
        self.en += en.sum(0, dtype=np.uint64)
        self.run_ns += run.sum(0, dtype=np.uint64)
        self._measuring(c, ekind, ebad)
        # exact sums (stats.py), thread by thread
        own_cpu, own_wall = stats.zeros(R), stats.zeros(R)
        counted_visits = np.where(V > c["timer_visits"], V - c["timer_visits"], 0)
        ev, ev_sp = Total((R, E)), Spread((R, E))
        ev.untrusted |= lost.any(0)[:, None]
        wall, ex = Spread(R), Spread(R)
        rq = {}
        q_val, q_kind, q_counted = self._rank_quantities(c, ns, kind, excl, ekind, val, vkind,
                                                         counted)
        # the event quantities of a visited timer-only cell: no count there
        q_timer = np.zeros(q_val.shape, bool)
        if self.timer_only_bit:
            q_timer[:, :, len(QUANTITIES):-1] = (visited & ((F & self.timer_only_bit) != 0))[:, :, None]
        for i in range(t1 - t0):
            t = t0 + i
            ev.add(val[i], vkind[i], counted[i])
            ev_sp.add(val[i], visited[i][:, None] & (vkind[i] != NONE), t)
            wall.add(ns[i].astype(float), has_w[i], t)
            ex.add(excl[i].astype(float), visited[i] & (ekind[i] != NONE), t)
            k = self.rank_of[t]
            if k not in rq:
                rq[k] = Total((R, self.nq))
            rq[k].add(q_val[i], q_kind[i], q_counted[i])
            self.rhas[k] |= q_counted[i] & (q_kind[i] != NONE) & ~q_timer[i]
            rq[k].untrusted[:, len(QUANTITIES):-1] |= lost[i][:, None]
            rq[k].untrusted[:, -1] |= ebad[i]
            self.omp_t[k] += ns[i]
            for a, w in self.wait_pairs:
                self.omp_wait_ns[a] += ns[i, w]
                self.omp_w[k, a] += ns[i, w]
            self.mpi_ns[k] += ns[i][self.mpi_outer].sum(dtype=np.uint64)
            self.mpi_est[k] |= bool((kind[i][self.mpi_outer] == ESTIMATE).any())
            cost = self.cost[t]
            own_cpu = stats.add_sum(own_cpu, stats.fix(
                (c["reads"][i] + counted_visits[i]).astype(float) * cost))
            own_wall = stats.add_sum(own_wall, stats.fix(c["reads"][i].astype(float) * cost))
        self.ev.merge(ev)
        self.ev_spread.merge(ev_sp)
        self.wall.merge(wall)
        self.excl.merge(ex)
        self.own_cpu_S = stats.add_sum(self.own_cpu_S, own_cpu)
        self.own_wall_S = stats.add_sum(self.own_wall_S, own_wall)
        self.own_cpu, self.own_wall = stats.value(self.own_cpu_S), stats.value(self.own_wall_S)
        for k, tot in rq.items():
            if self.rq[k] is None:
                self.rq[k] = Total((R, self.nq))
            self.rq[k].merge(tot)

    def _rank_quantities(self, c, ns, kind, excl, ekind, val, vkind, counted):
        """Per cell, the values added to its rank's sums: visits, time,
        bytes, bytes of unknown size, each event, exclusive time; counted
        where the cell is evidence (visited, or not 0)."""
        visited = c["visits"] > 0
        ints = [c["visits"], ns, c["bytes"], c["bytes_unknown"]]
        kinds = [np.full(ns.shape, EXACT), kind, np.full(ns.shape, EXACT), np.full(ns.shape, EXACT)]
        v = np.concatenate([np.stack([x.astype(float) for x in ints], 2), val,
                            excl.astype(float)[:, :, None]], 2)
        k = np.concatenate([np.stack(kinds, 2), vkind, ekind[:, :, None]], 2)
        cnt = np.concatenate([np.stack([visited | (x != 0) for x in ints], 2), counted,
                              (visited | (excl != 0))[:, :, None]], 2)
        return v, k, cnt

    def _read_costs(self):
        """Each thread's measured cost of one reading, 0 where there is none
        (NaN or not above 0); `has_cost`: threads whose cost counts for the
        whole run (finite as well), as report_stream.c and pm_measure_thread
        take them."""
        cost = self.f.array("THREAD_READ_COST_NS").astype(float)
        self.has_cost = np.isfinite(cost) & (cost > 0)
        return np.where(cost > 0, cost, 0.0)

    def _measuring(self, c, ekind, ebad):
        """The integer sums of which visits were measured (report_measure.c)."""
        self.wall_raw += c["wall_ns"].sum(0, dtype=np.uint64)
        self.timed += c["timed"].sum(0, dtype=np.uint64)
        self.timer += c["timer_visits"].sum(0, dtype=np.uint64)
        self.reads += c["reads"].sum(0, dtype=np.uint64)
        self.excl_est += (ekind == ESTIMATE).sum(0)
        self.excl_bad += ebad.sum(0)
        tf = c["throttled_from"]
        thr = tf > 0
        first = self.thr_cells == 0
        some = thr.any(0)
        lo = np.where(thr, tf, np.iinfo(np.uint64).max).min(0) if len(tf) else self.thr_min
        hi = np.where(thr, tf, 0).max(0) if len(tf) else self.thr_max
        self.thr_min = np.where(some & (first | (lo < self.thr_min)), lo, self.thr_min)
        self.thr_max = np.where(some & (first | (hi > self.thr_max)), hi, self.thr_max)
        self.thr_cells += thr.sum(0)

    # ---------------------------------------------------- across ranks

    def _rank_total(self, k):
        return self.rq[k] if self.rq[k] is not None else Total((self.R, self.nq))

    def _across_ranks(self):
        """Each rank folded in ascending order (stats.Across), regions and
        MPI functions; the OpenMP wait share of each rank."""
        R = self.R
        self.entered = np.zeros(R, np.int64)
        self.x = Across((R, self.nq))
        self.xomp = Spread(R, stats.FRAC_SHARE)
        for k, rank in enumerate(self.ranks):
            s = self._rank_total(k)
            entered = s.total[:, 0] > 0  # some of its threads visited
            self.entered += entered
            self.x.add(s, entered[:, None], rank)
            tns, wns = self.omp_t[k], self.omp_w[k]
            with np.errstate(invalid="ignore", divide="ignore"):
                share = np.where(tns > 0, wns.astype(float) / tns.astype(float), 0.0)
            self.xomp.add_fixed(stats.fix(share, stats.FRAC_SHARE), entered & (tns > 0), rank,
                                share)
        self._mpi_functions()
        self._mpi_share()

    def _mpi_functions(self):
        """Each MPI function summed over every path it was called from, per
        rank (rows in row order), then across ranks; most time first."""
        names = list(dict.fromkeys(self.name[r] for r in range(self.R) if self.is_mpi[r]))
        nq = len(QUANTITIES)
        self.functions = []
        for nm in names:
            rows = [r for r in range(self.R) if self.is_mpi[r] and self.name[r] == nm]
            fx = {"name": nm, "rows": rows, "entered": 0, "across": Across(nq)}
            for k, rank in enumerate(self.ranks):
                s = self._rank_total(k)
                t = Total(nq)
                for r in rows:
                    t.S = stats.add_sum(t.S, s.S[r, :nq])
                    t.nvals = t.nvals + s.nvals[r, :nq]
                    t.n_na = t.n_na + s.n_na[r, :nq]
                    t.estimate |= s.estimate[r, :nq]
                    t.untrusted |= s.untrusted[r, :nq]
                entered = bool((s.total[rows, 0] > 0).any())
                fx["entered"] += entered
                fx["across"].add(t, entered, rank)
            self.functions.append(fx)
        # most total time first, ties by name (bytewise, as strcmp)
        self.functions.sort(key=lambda fx: (-fx["across"].sum.total[1],
                                            fx["name"].encode("utf-8", "surrogateescape")))

    def _mpi_share(self):
        """A rank's MPI time over its longest thread's /thread/wall_ns."""
        wall = self.f.array("THREAD_WALL_NS")
        self.total_ns = np.zeros(len(self.ranks), np.uint64)
        for k in range(len(self.ranks)):
            self.total_ns[k] = wall[self.rank_of == k].max()
        has = self.total_ns > 0
        with np.errstate(invalid="ignore", divide="ignore"):
            self.share = np.where(has, self.mpi_ns.astype(float) / self.total_ns.astype(float),
                                  np.nan)
        # every rank counts (no MPI at all is a share of 0); none without time
        self.share_spread = Spread((), stats.FRAC_SHARE)
        for k, rank in enumerate(self.ranks):
            v = np.where(has[k], self.share[k], 0.0)
            self.share_spread.add_fixed(stats.fix(v, stats.FRAC_SHARE), np.bool_(has[k]), rank, v)

    # ------------------------------------------------------ the results

    def timer_only(self):
        """Regions whose every visiting cell is TIMER_ONLY (MPI polls): their
        zeros are no count of the region, so their event statistics have no
        value."""
        if not self.timer_only_bit:
            return np.zeros(self.R, bool)
        b = self.timer_only_bit.bit_length() - 1
        return (self.nvisited > 0) & (self.bits[:, b] >= self.nvisited)


    # ------------------------------------------------- the summary table

    def _blank(self):
        """Every summary column of one quantity, [R] each, as "none"."""
        R = self.R
        nan, none = np.full(R, np.nan), np.full(R, -1, np.int64)
        zero, false = np.zeros(R, np.int64), np.zeros(R, bool)
        return {"total": nan, "raw": none, "estimate": false, "untrusted": false,
                "threads_na": zero, "counted_share": nan, "threads": zero,
                "min": nan, "mean": nan, "max": nan, "sd": nan, "imbalance": nan,
                "min_thread": none, "max_thread": none}

    def _over_threads(self, keys):
        """(quantity, columns over threads) in the summary's order: visits,
        wall_ns, exclusive_ns, bytes, bytes_unknown, the events."""
        has_wall = ~((self.time_na > 0) & (self.wall.n == 0))
        w, x = self.wall.result(), self.excl.result()
        with np.errstate(invalid="ignore", divide="ignore"):
            # the report's mean of a time: its integer sum over the count
            wall_mean = np.where(self.wall.n > 0, self.wall_sum.astype(float) / self.wall.n,
                                 np.nan)

        def spread(s, **more):
            return dict(min=s["min"], mean=s["mean"], max=s["max"], sd=s["sd"],
                        imbalance=s["imbalance"], min_thread=s["min_at"],
                        max_thread=s["max_at"], threads=s["n"], **more)

        yield "visits", dict(total=self.visits.astype(float), threads=self.nvisited)
        yield "wall_ns", dict(spread(w), total=np.where(has_wall, self.wall_total, np.nan),
                              mean=wall_mean, estimate=self.time_est > 0,
                              untrusted=self.time_na > 0, threads_na=self.time_na)
        yield "exclusive_ns", spread(x, total=np.where(has_wall, self.excl_total, np.nan))
        # bytes: integers, so the sum over ranks is the sum over threads
        yield "bytes", dict(total=self.x.sum.total[:, 2])
        yield "bytes_unknown", dict(total=self.x.sum.total[:, 3])
        es, has = self.ev_spread.result(), self.ev.has_total()
        with np.errstate(invalid="ignore", divide="ignore"):
            share = np.where(self.en > 0, self.run_ns.astype(float) / self.en.astype(float),
                             np.nan)
        off = self.timer_only()  # no count of the region's own: no value
        for e, key in enumerate(keys):
            cols = spread({k: v[:, e] for k, v in es.items()}, total=self.ev.total[:, e],
                          raw=self.raw[:, e], estimate=self.ev.estimate[:, e],
                          untrusted=self.ev.untrusted[:, e] | (self.ev.n_na[:, e] > 0),
                          threads_na=self.ev.n_na[:, e], counted_share=share[:, e])
            cols["total"] = np.where(has[:, e], cols["total"], np.nan)
            yield key, _none_where(cols, off, keep=("raw",))

    def _across_ranks_columns(self, j, off):
        """Columns across ranks of quantity j (PM_Q_* order, exclusive last)."""
        cols = {k: v[:, j] for k, v in self.x.columns().items()}
        cols["ranks_entered"] = self.entered
        return _none_where(cols, off, keep=("ranks_entered",))

    def summary_columns(self, keys):
        """(quantity, is_event, {column: [R] by region row}) of the summary."""
        across = {"visits": 0, "wall_ns": 1, "bytes": 2, "bytes_unknown": 3,
                  "exclusive_ns": self.nq - 1}
        across.update({k: len(QUANTITIES) + e for e, k in enumerate(keys)})
        off, nothing = self.timer_only(), np.zeros(self.R, bool)
        for q, cols in self._over_threads(keys):
            is_event = q not in ("visits", "wall_ns", "exclusive_ns", "bytes", "bytes_unknown")
            out = self._blank()
            out.update(cols)
            out.update(self._across_ranks_columns(across[q], off if is_event else nothing))
            yield q, is_event, out

    def rank_values(self, keys):
        """(quantity, is_event, {column: [ranks, R]}) of each rank's own value
        of every region (the sum over its threads, rq): value (NaN: none),
        estimate, untrusted, entered; the quantities in summary() order. A
        rank has a value where some cell of it has one (report --by rank's
        rule: a timer-only cell has no count, a never-counted cell none)."""
        at = {"visits": 0, "wall_ns": 1, "exclusive_ns": self.nq - 1, "bytes": 2,
              "bytes_unknown": 3}
        at.update({k: len(QUANTITIES) + e for e, k in enumerate(keys)})
        nr = len(self.ranks)
        tot = [self._rank_total(k) for k in range(nr)]
        entered = np.array([s.total[:, 0] > 0 for s in tot]).reshape(nr, self.R)
        for q, j in at.items():
            is_event = j >= len(QUANTITIES) and j < self.nq - 1
            has = self.rhas[:, :, j]
            val = np.array([s.total[:, j] for s in tot]).reshape(nr, self.R)
            yield q, is_event, {
                "value": np.where(has, val, np.nan),
                "estimate": np.array([s.estimate[:, j] for s in tot]).reshape(nr, self.R),
                "untrusted": np.array([s.untrusted[:, j] | (s.n_na[:, j] > 0)
                                       for s in tot]).reshape(nr, self.R),
                "entered": entered}


def _none_where(cols, mask, keep=()):
    """Columns with "no value" where mask: NaN, -1 positions, 0 counts, False."""
    out = {}
    for k, v in cols.items():
        v = np.asarray(v)
        if k in keep:
            out[k] = v
        elif v.dtype == bool:
            out[k] = v & ~mask
        elif v.dtype.kind == "f":
            out[k] = np.where(mask, np.nan, v)
        elif k.endswith(("_thread", "_rank")):
            out[k] = np.where(mask, -1, v)
        else:
            out[k] = np.where(mask, 0, v)
    return out
