"""TopDown per region and for the whole run, as the report makes it.

The file stores raw counts per (thread, region) cell, never percentages. A
region's breakdown sums the TopDown events over its cells (each scaled by
the counting model), converts the sums with the method's arithmetic
(runtime/count/pm_topdown.c: perf_metrics, skylake, zen4, arm, atom) and divides
by the summed level-1 slots: a ratio of sums. Cells flagged NOT_COUNTED,
LOST_GENERATION or SHORT, or with an event never counted, are left out and
counted. The rules and the order of arithmetic are
analysis/model/report_topdown.c's: exact counts summed as integers, scaled
ones as doubles thread row by thread row, a block of thread rows at a time
(the report's blocks), so that every number equals the report's JSON.
"""
import math

import numpy as np

from . import models, stats
from .aggregate import block_rows
from .stats import ESTIMATE, EXACT, NONE

M64 = (1 << 64) - 1
U64MAX = np.uint64(M64)
# the file's flag bits (analysis/read/h5read.h), in the order a cell counts
# under: missing counts before coarse ones
LEFT_OUT = (("NOT_COUNTED", 0x02), ("LOST_GENERATION", 0x04), ("SHORT", 0x20))
METHODS = ("perf_metrics", "skylake", "zen4", "arm", "atom")
ZEN4_L1_EVENTS = 6  # Zen 4/5: level-1 events, then level 2's (PM_TD_ZEN4_L1_EVENTS)
# the kernel's PERF_METRICS encodings: slots is raw config 0x400, metric k
# the pseudo event 0x8000 + 0x100 k (matched by encoding: libpfm4 has no names)
RAW_TYPE, RAW_SLOTS = 4, 0x400
PM_NAMES = ("slots", "topdown-retiring", "topdown-bad-spec", "topdown-fe-bound",
            "topdown-be-bound", "topdown-heavy-ops", "topdown-br-mispredict",
            "topdown-fetch-lat", "topdown-mem-bound")
# slot categories (enum pm_td_metric) and nodes (enum pm_td_node)
RETIRING, BAD_SPEC, FE_BOUND, BE_BOUND = 0, 1, 2, 3
HEAVY_OPS, BR_MISPREDICT, FETCH_LAT, MEM_BOUND, SMT = 4, 5, 6, 7, 8
LEVEL1 = ("retiring", "bad_speculation", "frontend_bound", "backend_bound", "smt_contention")
LEVEL1_METRIC = (RETIRING, BAD_SPEC, FE_BOUND, BE_BOUND, SMT)
# level 2: (measured child, derived sibling = parent - child, child metric, parent)
PAIRS = (("heavy_operations", "light_operations", HEAVY_OPS, RETIRING),
         ("branch_mispredicts", "machine_clears", BR_MISPREDICT, BAD_SPEC),
         ("fetch_latency", "fetch_bandwidth", FETCH_LAT, FE_BOUND),
         ("memory_bound", "core_bound", MEM_BOUND, BE_BOUND))
NODES = LEVEL1 + tuple(n for p in PAIRS for n in p[:2])


def _cstr(s, n):
    """printf's "%.Ns": at most n bytes of s."""
    return s.encode("utf-8", "surrogateescape")[:n].decode("utf-8", "surrogateescape")


def _sat(a, b):
    return min(a + b, M64)


def _sub0(a, b):
    return a - b if a > b else 0


# ------------------------------------------------------ the methods' arithmetic

def from_skylake(v):
    cycles, idq, issued, retired, recovery = v
    m = [0] * 9
    slots = (4 * cycles) & M64
    m[FE_BOUND] = idq
    m[BAD_SPEC] = _sub0((issued + 4 * recovery) & M64, retired)
    m[RETIRING] = retired
    m[BE_BOUND] = _sub0(slots, (m[FE_BOUND] + m[BAD_SPEC] + m[RETIRING]) & M64)
    return slots, m, 1


def _share_of(a, b, c):
    """a x b / c with b capped at c, 0 where c is 0 (pm_td_share_of)."""
    return 0 if c == 0 else a * min(b, c) // c


def from_zen4(v, width, levels=1):
    cycles, fe, be, smt, dispatched, retired = v[:6]
    width = width or 6
    m = [0] * 9
    slots = (width * cycles) & M64
    m[FE_BOUND], m[BE_BOUND], m[SMT] = fe, be, smt
    m[BAD_SPEC] = _sub0(dispatched, retired)
    m[RETIRING] = retired
    if levels < 2 or len(v) < 12:
        return slots, m, 1
    fe_all, misp, resyncs, load, any_nc, ucode = v[6:12]
    m[FETCH_LAT] = min((width * fe_all) & M64, fe)
    m[BR_MISPREDICT] = _share_of(m[BAD_SPEC], misp, (misp + resyncs) & M64)
    m[MEM_BOUND] = _share_of(be, load, any_nc)
    m[HEAVY_OPS] = min(ucode, retired)
    return slots, m, 2


def from_arm(v, width, mispred_cycles):
    cycles, st_fe, st_be, stall, op_spec, op_retired = v[:6]
    br_mis_pred = v[6] if len(v) > 6 else 0
    m = [0] * 9
    slots = (width * cycles) & M64
    used = _sub0(slots, stall)
    retiring = used if op_spec == 0 or op_retired >= op_spec else used * op_retired // op_spec
    moved = min((mispred_cycles * width * br_mis_pred) & M64, st_fe)
    m[RETIRING] = retiring
    m[BAD_SPEC] = (used - retiring + moved) & M64
    m[FE_BOUND] = st_fe - moved
    m[BE_BOUND] = st_be
    return slots, m, 1


def from_atom(v, width):
    cycles, retiring, bad_spec, fe, be = v
    m = [0] * 9
    m[RETIRING], m[BAD_SPEC], m[FE_BOUND], m[BE_BOUND] = retiring, bad_spec, fe, be
    return (width * cycles) & M64, m, 1


def from_group_values(v, levels):
    m = [0] * 9
    for i in range(len(v) - 1):
        m[i] = v[1 + i]
    return v[0], m, levels


def node_slots(m, levels, node):
    """Slot count of a node; derived level-2 nodes are parent - child,
    clamped at 0 (8-bit quantisation can make a child exceed its parent)."""
    if node in LEVEL1:
        return m[LEVEL1_METRIC[LEVEL1.index(node)]]
    if levels < 2:
        return 0
    for child, sibling, metric, parent in PAIRS:
        if node == child:
            return m[metric]
        if node == sibling:
            return _sub0(m[parent], m[metric])
    return 0


# -------------------------------------------------------------- the setup

class Setup:
    """Which method, how many levels, which /events rows (report_topdown.c,
    pm_td_setup): `on` when the file names a method; `problem` why there is
    no breakdown, `note` what it lacks that the file announced."""

    def __init__(self, f):
        self.method_attr = f.attr("TOPDOWN_METHOD")
        self.cpu_model = f.attr("CPU_MODEL")
        self.file_levels = int(f.attr("TOPDOWN_LEVELS"))
        self.on = self.method_attr != ""
        self.problem, self.note = "", ""
        # levels stay 0 until the method is known (the report's zeroed state)
        self.method, self.levels, self.ev = None, 0, []
        self.hybrid, self.width, self.mispred = False, 0, 0
        self.ok = False
        if not self.on:
            return
        self.names = list(f.field("EVENTS_NAME"))
        self.pfm_names = list(f.field("EVENTS_PFM_NAME"))
        self.types = f.field("EVENTS_TYPE")
        self.configs = f.field("EVENTS_CONFIG")
        self.ok = self._setup()
        if not self.ok:
            self.ev = []  # no partial event list

    def _set_problem(self, text):
        self.problem = _cstr(text, 199)

    def _setup(self):
        if self.method_attr not in METHODS:
            self._set_problem("TopDown method '%s' is unknown to this reader" %
                              _cstr(self.method_attr, 60))
            return False
        self.method = self.method_attr
        model = models.find(self.cpu_model)
        self.hybrid = bool(model and model["hybrid"])
        # slots per cycle from the model's row; a file whose cpu_model has no
        # row is refused below (methods other than perf_metrics)
        self.width = model["td_slots_per_cycle"] if model else 0
        self.mispred = model["td_fe_mispred_cycles"] if model else 0
        self.levels = 2 if self.method in ("perf_metrics", "zen4") and self.file_levels >= 2 else 1
        if self.method == "perf_metrics":
            return self._find_perf_metrics()
        return self._find_model(model)

    def _find_raw(self, config):
        for e in range(len(self.names)):
            if int(self.types[e]) == RAW_TYPE and int(self.configs[e]) == config:
                return e
        return None

    def _find_perf_metrics(self):
        ev = []
        for i in range(1 + 4 * self.levels):
            config = RAW_SLOTS if i == 0 else 0x8000 + 0x100 * (i - 1)
            e = self._find_raw(config)
            if e is not None:
                ev.append(e)
                continue
            if i < 5:
                self._set_problem("no event of raw config %s (%s) in /events" %
                                  (hex(config), PM_NAMES[i]))
                return False
            self.note = _cstr("level 2 not shown: no event of raw config %s (%s) in /events" %
                              (hex(config), PM_NAMES[i]), 199)
            self.levels = 1
        self.ev = ev[:1 + 4 * self.levels]
        return True

    def _find_model(self, model):
        g = model["groups"]["topdown"] if model else None
        n = len(g["events"]) if g else 0
        bad = (not g or model["td_method"] != self.method or
               (self.method == "arm" and (model["td_slots_per_cycle"] <= 0 or
                                          n != (7 if model["td_fe_mispred_cycles"] else 6))) or
               (self.method == "atom" and (model["td_slots_per_cycle"] <= 0 or n != 5)))
        if bad:
            self._set_problem("this reader has no %s TopDown table for cpu_model '%s'" %
                              (self.method_attr, _cstr(self.cpu_model, 40)))
            return False
        # Zen 4/5: six level-1 events, then six level-2 ones read only when
        # the file announced level 2; a missing one of those leaves level 1
        need = ZEN4_L1_EVENTS if self.method == "zen4" else n
        want = n if self.levels >= 2 else need
        for i, ev in enumerate(g["events"][:want]):
            q = ev["qualified"]
            e = models.event_row(q, self.names, self.pfm_names)
            if e is not None:
                self.ev.append(e)
            elif i < need:
                self._set_problem("event %s is not in /events" % _cstr(q or "", 150))
                return False
            else:
                self.note = _cstr("level 2 not shown: %s is not in /events" %
                                  _cstr(ev["label"], 60), 199)
                self.levels = 1
                self.ev = self.ev[:need]
                break
        return True

    def shown(self, node):
        """Does the report show this node: the level-1 categories (SMT
        contention on zen4 only), level 2 when measured."""
        if node == "smt_contention":
            return self.method == "zen4"
        return node in LEVEL1 or self.levels >= 2

    def convert(self, v):
        """(slots, categories, levels) of summed event counts."""
        if self.method == "skylake":
            return from_skylake(v)
        if self.method == "zen4":
            return from_zen4(v, self.width, self.levels)
        if self.method == "arm":
            return from_arm(v, self.width, self.mispred)
        if self.method == "atom":
            return from_atom(v, self.width)
        return from_group_values(v, self.levels)


# --------------------------------------------------------------- the sums

class Sum:
    """TopDown over a set of cells (pm_tdstat with its pm_td_sum), vectorised
    over n independent sets (the regions)."""

    def __init__(self, n, nev):
        self.used = np.zeros(n, np.int64)
        self.left_out = np.zeros((n, len(LEFT_OUT)), np.int64)
        self.estimate = np.zeros(n, bool)
        self.exact = np.zeros((n, nev), np.uint64)
        self.scaled = stats.zeros((n, nev))  # exact sums (stats.py)
        self.enabled = np.zeros(n, np.uint64)
        self.running = np.zeros(n, np.uint64)

    def add(self, visited, flags, cnt, en, run):
        """One thread row's cells ([n], [n, nev] each); en, run of each
        event's kernel group."""
        present = visited | (cnt > 0).any(1) | (en > 0).any(1)
        rest = present.copy()
        for k, (_, bit) in enumerate(LEFT_OUT):
            out = rest & ((flags & bit) != 0)
            self.left_out[:, k] += out
            rest &= ~out
        val, kind = stats.cell_value(cnt, en, run)
        never = rest & (kind == NONE).any(1)
        self.left_out[:, 0] += never
        use = rest & ~never
        est = use[:, None] & (kind == ESTIMATE)
        self.scaled = stats.add_sum(self.scaled, np.where(est, stats.fix(val), 0))
        self.exact = _sat_add(self.exact, np.where(use[:, None] & (kind == EXACT), cnt, 0))
        self.estimate |= est.any(1)
        # the group of the first event: on a hybrid CPU running/enabled is the
        # share of time the breakdown describes (P-cores)
        self.enabled = _sat_add(self.enabled, np.where(use, en[:, 0], 0))
        self.running = _sat_add(self.running, np.where(use, run[:, 0], 0))
        self.used += use

    def merge(self, b):
        """A later block's sums joined in."""
        self.used += b.used
        self.left_out += b.left_out
        self.estimate |= b.estimate
        self.exact = _sat_add(self.exact, b.exact)
        self.scaled = stats.add_sum(self.scaled, b.scaled)
        self.enabled = _sat_add(self.enabled, b.enabled)
        self.running = _sat_add(self.running, b.running)

    def finish(self, setup, i):
        """The stat of set i as the report prints it (pm_td_finish_stat)."""
        v = []
        for k in range(self.exact.shape[1]):
            r = math.floor(float(stats.value(self.scaled[i, k])) + 0.5)
            v.append(_sat(int(self.exact[i, k]), M64 if r >= 2 ** 64 else r))
        slots, m, levels = setup.convert(v)
        total = (m[RETIRING] + m[BAD_SPEC] + m[FE_BOUND] + m[BE_BOUND] + m[SMT]) & M64
        shown = [n for n in NODES if setup.shown(n)]
        counts = {n: node_slots(m, levels, n) for n in shown}
        has_ratios = self.used[i] > 0 and total != 0
        ratios = {n: float(counts[n]) / float(total) if has_ratios else None for n in shown}
        en, run = int(self.enabled[i]), int(self.running[i])
        has_pcore = setup.hybrid and en > 0
        return {"cells_used": int(self.used[i]), "slots": slots, "node_slots": counts,
                "ratios": ratios if has_ratios else None,
                "cells_left_out": {name: int(self.left_out[i, k])
                                   for k, (name, _) in enumerate(LEFT_OUT)},
                "estimate": bool(self.estimate[i]),
                "pcore_share": (float(run) / float(en) if has_pcore else None)
                if setup.hybrid else None}


def _sat_add(a, b):
    """uint64 a + b saturating at 2^64 - 1, as pm_add_sat."""
    b = np.asarray(b, np.uint64)
    s = a + b
    return np.where(s < a, U64MAX, s)


def regions(f, setup):
    """[R] stats: each region's cells, a block of thread rows at a time."""
    T, R = f.sizes["T"], f.sizes["R"]
    ev = np.array(setup.ev, np.int64)
    group = f.field("EVENTS_GROUP").astype(np.int64)[ev]
    total = Sum(R, len(ev))
    B = block_rows(f) or 1
    for t0 in range(0, T, B):
        t1 = min(t0 + B, T)
        V = f.array("REGION_VISITS", t0, t1)
        F = f.array("REGION_FLAGS", t0, t1)
        C = f.array("REGION_COUNTS", t0, t1)[:, :, ev]
        EN = f.array("REGION_ENABLED_NS", t0, t1)[:, :, group]
        RUN = f.array("REGION_RUNNING_NS", t0, t1)[:, :, group]
        part = Sum(R, len(ev))  # each block from zero, joined in order
        for i in range(t1 - t0):
            part.add(V[i] > 0, F[i], C[i], EN[i], RUN[i])
        total.merge(part)
    return [total.finish(setup, r) for r in range(R)]


def whole_run(f, setup):
    """The whole run: every thread's /thread totals (outside regions too),
    in thread-row order."""
    ev = np.array(setup.ev, np.int64)
    group = f.field("EVENTS_GROUP").astype(np.int64)[ev]
    C = f.array("THREAD_COUNTS")[:, ev]
    EN = f.array("THREAD_ENABLED_NS")[:, group]
    RUN = f.array("THREAD_RUNNING_NS")[:, group]
    F = f.array("THREAD_FLAGS")
    s = Sum(1, len(ev))
    for t in range(f.sizes["T"]):
        s.add(np.ones(1, bool), F[t:t + 1], C[t:t + 1], EN[t:t + 1], RUN[t:t + 1])
    return s.finish(setup, 0)
