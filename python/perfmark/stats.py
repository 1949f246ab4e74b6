"""Running statistics in the report's order of arithmetic.

The report (analysis/model/report_count.c, report_ranks.c) adds cells one thread
row at a time, in row order, and ranks one at a time, in ascending order;
its standard deviation is Welford's, and blocks of thread rows are joined
with Chan's pairwise update. Doubles are not associative, so the package
does the same operations in the same order — vectorised over regions and
events, sequential over threads and ranks — and its numbers are the
report's to the last digit, not merely close to them.
"""
import numpy as np


class Spread:
    """min/mean/max/sd and where the min and max are, over values added in
    order (an array of independent spreads of any shape). Ties keep the
    first position added: the report's strict comparisons."""

    def __init__(self, shape):
        self.n = np.zeros(shape, np.int64)
        self.sum = np.zeros(shape)
        self.mean = np.zeros(shape)  # Welford's running mean: not the mean reported
        self.m2 = np.zeros(shape)
        self.min = np.zeros(shape)
        self.max = np.zeros(shape)
        self.min_at = np.full(shape, -1, np.int64)
        self.max_at = np.full(shape, -1, np.int64)

    def add(self, v, mask, at):
        """Value v where mask holds, at position `at` (a thread row, a rank)."""
        first = self.n == 0
        lo = mask & (first | (v < self.min))
        hi = mask & (first | (v > self.max))
        self.min = np.where(lo, v, self.min)
        self.min_at = np.where(lo, at, self.min_at)
        self.max = np.where(hi, v, self.max)
        self.max_at = np.where(hi, at, self.max_at)
        self.n = self.n + mask
        self.sum = np.where(mask, self.sum + v, self.sum)
        delta = v - self.mean
        mean = self.mean + delta / np.maximum(self.n, 1)
        self.m2 = np.where(mask, self.m2 + delta * (v - mean), self.m2)
        self.mean = np.where(mask, mean, self.mean)

    def merge(self, b):
        """The spread of later positions (a later block) joined in."""
        a_empty, b_some = self.n == 0, b.n > 0
        lo = b_some & (a_empty | (b.min < self.min))
        hi = b_some & (a_empty | (b.max > self.max))
        self.min = np.where(lo, b.min, self.min)
        self.min_at = np.where(lo, b.min_at, self.min_at)
        self.max = np.where(hi, b.max, self.max)
        self.max_at = np.where(hi, b.max_at, self.max_at)
        self.sum = self.sum + b.sum
        n = (self.n + b.n).astype(float)
        delta = b.mean - self.mean
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = self.mean + delta * (b.n / n)
            m2 = self.m2 + (b.m2 + delta * delta * (self.n.astype(float) * b.n / n))
        both = b_some & ~a_empty
        self.mean = np.where(both, mean, np.where(a_empty, b.mean, self.mean))
        self.m2 = np.where(both, m2, np.where(a_empty, b.m2, self.m2))
        self.n = self.n + b.n

    def result(self):
        """{min, mean, max, sd, imbalance, min_at, max_at}: NaN (and -1
        positions) where nothing was added; imbalance = max/mean, NaN where
        the mean is not above 0."""
        some = self.n > 0
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(some, self.sum / self.n, np.nan)
            sd = np.where(some, np.sqrt(self.m2 / self.n), np.nan)
            imb = np.where(some & (mean > 0), self.max / mean, np.nan)
        return {"min": np.where(some, self.min, np.nan), "mean": mean,
                "max": np.where(some, self.max, np.nan), "sd": sd, "imbalance": imb,
                "min_at": self.min_at, "max_at": self.max_at, "n": self.n}


class Total:
    """A sum of cell values with the report's markers: `nvals` cells with a
    value, `n_na` without one (no estimate, no time), `estimate` some value
    was scaled. No value at all only when some cell lacks one and none has
    one."""

    def __init__(self, shape):
        self.total = np.zeros(shape)
        self.nvals = np.zeros(shape, np.int64)
        self.n_na = np.zeros(shape, np.int64)
        self.estimate = np.zeros(shape, bool)
        self.untrusted = np.zeros(shape, bool)

    def add(self, v, kind, counted):
        """kind: EXACT, ESTIMATE or NONE per cell; counted: the cell is
        evidence (visited, or holds a count or enabled time)."""
        has = counted & (kind != NONE)
        self.total = self.total + np.where(has, v, 0.0)
        self.nvals = self.nvals + has
        self.n_na = self.n_na + (counted & (kind == NONE))
        self.estimate |= counted & (kind == ESTIMATE)

    def merge(self, b):
        self.total = self.total + b.total
        self.nvals = self.nvals + b.nvals
        self.n_na = self.n_na + b.n_na
        self.estimate |= b.estimate
        self.untrusted |= b.untrusted

    def has_total(self):
        return ~((self.n_na > 0) & (self.nvals == 0))


class Across:
    """A quantity across ranks, each rank's sums (a Total) folded in
    ascending rank order: the total and the markers over every rank, so
    that the total is the sum over threads; the spread over the ranks that
    entered and have a value; `na` = ranks that entered without one."""

    def __init__(self, shape):
        self.sum = Total(shape)
        self.spread = Spread(shape)
        self.na = np.zeros(shape, np.int64)

    def add(self, s, entered, rank):
        t = self.sum
        t.total = t.total + s.total
        t.nvals = t.nvals + s.nvals
        t.n_na = t.n_na + s.n_na
        t.estimate |= s.estimate
        t.untrusted |= s.untrusted | (s.n_na > 0)
        has = s.has_total()
        self.spread.add(s.total, entered & has, rank)
        self.na = self.na + (entered & ~has)

    def columns(self):
        """rank_total (NaN: no value), rank_min/mean/max/sd/imbalance,
        min_rank/max_rank (-1: none), ranks_na, rank_estimate,
        rank_untrusted."""
        r = self.spread.result()
        some = r["n"] > 0
        return {"rank_total": np.where(self.sum.has_total(), self.sum.total, np.nan),
                "rank_min": r["min"], "rank_mean": r["mean"], "rank_max": r["max"],
                "rank_sd": r["sd"], "rank_imbalance": r["imbalance"],
                "min_rank": np.where(some, r["min_at"], -1),
                "max_rank": np.where(some, r["max_at"], -1),
                "ranks_na": self.na, "rank_estimate": self.sum.estimate,
                "rank_untrusted": self.sum.untrusted}


EXACT, ESTIMATE, NONE = 0, 1, 2


def cell_value(raw, en, run):
    """(value, kind) of cells under the counting model: raw where running >=
    enabled, raw x (enabled / running) where 0 < running < enabled (an
    estimate), none where running = 0 < enabled (never counted)."""
    raw_f, en_f, run_f = raw.astype(float), en.astype(float), run.astype(float)
    none = (run == 0) & (en > 0)
    exact = ~none & (run >= en)
    with np.errstate(invalid="ignore", divide="ignore"):
        scaled = raw_f * (en_f / run_f)
    v = np.where(exact, raw_f, np.where(none, 0.0, scaled))
    kind = np.where(none, NONE, np.where(exact, EXACT, ESTIMATE))
    return v, kind


def cell_time(wall, visits, timed):
    """(ns, kind) of cells: wall_ns holds the timed visits only; where fewer
    were timed than made the time is wall x visits / timed rounded (an
    estimate); none when no visit was timed."""
    exact = timed >= visits
    none = ~exact & (timed == 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        est = wall.astype(float) * visits.astype(float) / timed.astype(float) + 0.5
    est = np.where(exact | none, 0.0, est)
    est_ns = np.where(est >= 18446744073709551615.0, np.iinfo(np.uint64).max,
                      est.astype(np.uint64))
    ns = np.where(exact, wall, np.where(none, 0, est_ns)).astype(np.uint64)
    kind = np.where(exact, EXACT, np.where(none, NONE, ESTIMATE))
    return ns, kind
