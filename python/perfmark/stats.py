"""Running statistics with the report's arithmetic.

The report (analysis/model/report_count.c, report_ranks.c, exact_sum.c)
keeps every total and spread as exact sums in fixed point: a value v is
V = round(v * 2^32) (ties to even; exact for every count and time), ΣV and
ΣV² are integers, and the mean and standard deviation are made of them once
at the end. Sums of integers do not depend on their order, so the report,
the report under mpirun and a summary file made in the job all give the same
bits; the package does the same with Python integers, and its numbers are
the report's to the last digit, not merely close to them.
"""
import math

import numpy as np

FRAC = 32                      # fraction bits (exact_sum.h: PM_FIX_FRAC)
FRAC_SHARE = 60                # a share's (PM_FIX_FRAC_SHARE)
SUM_MAX = (1 << 128) - 1       # ΣV saturates there
SQ_MAX = (1 << 256) - 1        # ΣV² too
_to_int = np.frompyfunc(int, 1, 1)
_to_float = np.frompyfunc(float, 1, 1)


def _obj(x):
    return np.asarray(x, dtype=object)


def _sat(x, top):
    x = _obj(x)
    over = (x > top).astype(bool)
    return np.where(over, top, x) if over.any() else x


def fix(v, frac=FRAC):
    """Values as fixed-point integers (pm_fix_of_frac): round(v * 2^frac),
    ties to even; v <= 0 and NaN are 0, from 2^(127 - frac) up the largest
    sum."""
    v = np.asarray(v, float)
    big = v >= 2.0 ** (127 - frac)
    x = np.rint(np.ldexp(np.where((v > 0) & ~big, v, 0.0), frac))
    out = _obj(_to_int(x))
    return np.where(big, SUM_MAX, out) if big.any() else out


def zeros(shape):
    return np.zeros(shape, dtype=object)


def add_sum(s, f):
    """ΣV + V, saturating as pm_fix_add."""
    return _sat(_obj(s) + f, SUM_MAX)


def value(s, frac=FRAC):
    """A sum as a number (pm_fix_value): correctly rounded."""
    return np.ldexp(np.asarray(_to_float(_obj(s)), float), -frac)


def _mean_one(s, n, frac):
    s, n = int(s), int(n)
    if n <= 0:
        return math.nan
    return s / (n << frac)  # int / int: correctly rounded, as pm_fix_mean


_mean = np.frompyfunc(_mean_one, 3, 1)


def _sd_one(s, q, n, frac):
    s, q, n = int(s), int(q), int(n)
    if n <= 0:
        return math.nan
    d = n * q - s * s
    if d < 0:  # only a saturated ΣV² gets here (pm_fix_sd)
        return 0.0
    return math.ldexp(math.sqrt(float(d)) / n, -frac)


_sd = np.frompyfunc(_sd_one, 4, 1)


class Spread:
    """min/mean/max/sd and where the min and max are, over values added in
    order (an array of independent spreads of any shape). Ties keep the
    first position added, the lowest: the report's rule."""

    def __init__(self, shape, frac=FRAC):
        self.frac = frac        # a share's spread is kept finer (FRAC_SHARE)
        self.n = np.zeros(shape, np.int64)
        self.S = zeros(shape)   # ΣV
        self.Q = zeros(shape)   # ΣV²
        self.min = np.zeros(shape)
        self.max = np.zeros(shape)
        self.min_at = np.full(shape, -1, np.int64)
        self.max_at = np.full(shape, -1, np.int64)

    def add(self, v, mask, at):
        """Value v where mask holds, at position `at` (a thread row, a rank)."""
        self.add_fixed(fix(v, self.frac), mask, at, v)

    def add_fixed(self, f, mask, at, v=None):
        """A value already in fixed point (a rank's exact sum): its number
        for min and max is the sum's (pm_x_add)."""
        v = value(f, self.frac) if v is None else np.asarray(v, float)
        first = self.n == 0
        lo = mask & (first | (v < self.min))
        hi = mask & (first | (v > self.max))
        self.min = np.where(lo, v, self.min)
        self.min_at = np.where(lo, at, self.min_at)
        self.max = np.where(hi, v, self.max)
        self.max_at = np.where(hi, at, self.max_at)
        self.n = self.n + mask
        f = _obj(f)
        self.S = np.where(mask, add_sum(self.S, f), self.S)
        self.Q = np.where(mask, _sat(self.Q + f * f, SQ_MAX), self.Q)

    def merge(self, b):
        """The spread of later positions (a later block) joined in."""
        a_empty, b_some = self.n == 0, b.n > 0
        lo = b_some & (a_empty | (b.min < self.min))
        hi = b_some & (a_empty | (b.max > self.max))
        self.min = np.where(lo, b.min, self.min)
        self.min_at = np.where(lo, b.min_at, self.min_at)
        self.max = np.where(hi, b.max, self.max)
        self.max_at = np.where(hi, b.max_at, self.max_at)
        self.S = add_sum(self.S, b.S)
        self.Q = _sat(self.Q + b.Q, SQ_MAX)
        self.n = self.n + b.n

    def result(self):
        """{min, mean, max, sd, imbalance, min_at, max_at}: NaN (and -1
        positions) where nothing was added; imbalance = max/mean, NaN where
        the mean is not above 0."""
        some = self.n > 0
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.asarray(_mean(_obj(self.S), _obj(self.n), self.frac), float)
            sd = np.asarray(_sd(_obj(self.S), _obj(self.Q), _obj(self.n), self.frac), float)
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
        self.S = zeros(shape)  # exact ΣV of the cells with a value
        self.nvals = np.zeros(shape, np.int64)
        self.n_na = np.zeros(shape, np.int64)
        self.estimate = np.zeros(shape, bool)
        self.untrusted = np.zeros(shape, bool)

    def add(self, v, kind, counted):
        """kind: EXACT, ESTIMATE or NONE per cell; counted: the cell is
        evidence (visited, or holds a count or enabled time)."""
        has = counted & (kind != NONE)
        self.S = add_sum(self.S, np.where(has, fix(v), 0))
        self.nvals = self.nvals + has
        self.n_na = self.n_na + (counted & (kind == NONE))
        self.estimate |= counted & (kind == ESTIMATE)

    @property
    def total(self):
        return value(self.S)

    def merge(self, b):
        self.S = add_sum(self.S, b.S)
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
        t.S = add_sum(t.S, s.S)
        t.nvals = t.nvals + s.nvals
        t.n_na = t.n_na + s.n_na
        t.estimate |= s.estimate
        t.untrusted |= s.untrusted | (s.n_na > 0)
        has = s.has_total()
        self.spread.add_fixed(s.S, entered & has, rank)
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
