#!/usr/bin/python3
"""End-to-end check of the perfmark report stage against h5py.

usage: /usr/bin/python3 tests/report/check_report.py [--keep DIR] [--fuzz N] COMMAND...

COMMAND... is any command prefix that accepts `FILE --format F [-o OUT]`:
    build/bin/perfmark report
    /tmp/report_driver
    valgrind -q --leak-check=full --errors-for-leak-kinds=definite build/bin/perfmark report

The fixtures come from make_fixture.py (same directory). Every expected number
is recomputed here from the HDF5 file with h5py, following
docs/hdf5-schema.md and the rules in tests/report/README.md; nothing is
hard-coded. Exits 0 when everything matches, 1 with the list of mismatches.
"""
import argparse
import csv
import io
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile

import h5py

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_fixture  # noqa: E402

BUILTIN_FLAGS = {0x01: "MULTIPLEXED", 0x02: "NOT_COUNTED", 0x04: "LOST_GENERATION",
                 0x08: "MIGRATED", 0x10: "UNBALANCED", 0x20: "SHORT", 0x40: "PARTIAL"}
LOST_GENERATION = 0x04
UNSEEN_LABEL = "work of threads perfmark never saw (or before/after their first marker)"
# files whose every thread has a row from its start (`threads` attribute)
UNSEEN_BORN_LABEL = ("the part before perfmark started, perfmark's own work (its start-up and "
                     "its threads), and threads left out by name")
# and some of them were still running at the write with totals from their
# first region, or their exit record was lost (revision 12)
UNSEEN_FIRST_REGION_LABEL = (
    "the part before perfmark started, perfmark's own work (its start-up and its threads), "
    "threads left out by name, what threads still running at the end did before their first "
    "region or construct (all of it for events /proc does not count), and threads whose counts "
    "the kernel lost")


def unseen_label(f):
    """The report's words for a /rank row's difference, for file f (h5py)."""
    seen = f.attrs.get("threads", b"")
    seen = seen.decode() if isinstance(seen, bytes) else str(seen)
    if not seen.startswith("every thread from its start"):
        return UNSEEN_LABEL
    m = re.search(r"; totals: (\d+) by the kernel at their exit, (\d+) still running by their own "
                  r"counters from their first region, (\d+) still running never in a region "
                  r"from /proc, (\d+) lost", seen)
    if m and (int(m.group(2)) > 0 or int(m.group(3)) > 0 or int(m.group(4)) > 0):
        return UNSEEN_FIRST_REGION_LABEL
    return UNSEEN_BORN_LABEL
TEXT_WIDTH = 100
RUN_TIMEOUT = 300

JSON_KEYS = ["schema_version", "json_format", "file", "perfmark_version", "command", "host",
             "start_time", "clock", "events_requested", "event_group", "fallback",
             "fallback_cause", "cpu", "pid", "duration_ns", "kernel_groups", "bind_cpu", "partial", "events_measured",
             "events", "threads_count", "cells", "flagged_cells", "flags_summary", "messages",
             "regions", "threads", "rank_totals", "rank_difference_means"]
REGION_JSON_KEYS = ["index", "row", "path", "name", "parent", "depth", "kind", "visits",
                    "threads_visited", "wall_ns", "events", "flags"]
CSV_HEADER = ["index", "row", "parent", "depth", "path", "name", "kind", "visits",
              "threads_visited", "wall_total_ns", "wall_min_ns", "wall_mean_ns", "wall_max_ns",
              "flags", "event", "event_group", "raw_total", "total", "min", "mean", "max",
              "estimate", "counted_share", "untrusted", "threads_na"]
CSV_STRING_COLUMNS = ["path", "name", "kind", "flags", "event"]
# files of several ranks only: appended JSON keys and CSV columns
RANK_JSON_KEYS = ["ranks", "job_ranks", "regions_by_rank", "mpi_functions", "mpi_share"]
QUANTITIES = ["visits", "wall_ns", "bytes", "bytes_unknown"]
SPREAD = ["rank_min", "rank_mean", "rank_max", "imbalance", "max_rank"]
CSV_RANK_HEADER = (["ranks_entered", "bytes_total", "bytes_unknown_total"] +
                   ["%s_%s" % (q, k) for q in QUANTITIES + ["event"] for k in SPREAD] +
                   ["event_ranks_na"])
SHARE_RANKS = 16  # the text lists ranks one by one up to this many
# issue 6: appended to every file's JSON, region objects and CSV rows
MORE_JSON_KEYS = ["flags_where", "selection"]
MORE_REGION_KEYS = ["by_thread", "ipc", "omp_wait_ns", "omp_wait_share"]
# files since the throttle only: appended JSON keys, region keys and CSV columns
MEASURING_JSON_KEYS = ["throttle", "perfmark_reads"]
MEASURING_KEYS = ["wall_ns_raw", "time_estimate", "threads_time_na", "exclusive_estimate",
                  "exclusive_untrusted", "timed_visits", "timer_visits", "timer_only",
                  "throttled", "reads", "perfmark_cpu_ns", "perfmark_wall_ns",
                  "perfmark_cpu_share"]
CSV_MEASURING_HEADER = ["wall_raw_ns", "time_estimate", "threads_time_na", "excl_estimate",
                        "timed_visits", "timer_visits", "timer_only", "throttled_threads",
                        "throttled_from_min", "throttled_from_max", "reads", "perfmark_cpu_ns",
                        "perfmark_wall_ns", "perfmark_cpu_share", "run_perfmark_reads_ns",
                        "run_perfmark_reads_share"]
CSV_MORE_HEADER = ["excl_total_ns", "excl_min_ns", "excl_mean_ns", "excl_max_ns", "excl_sd_ns",
                   "wall_thread_sd_ns", "wall_thread_imbalance", "wall_max_thread",
                   "event_thread_sd", "event_thread_imbalance", "event_max_thread", "ipc", "omp_wait_ns",
                   "omp_wait_share"]
OMP_WAITS = (b"omp barrier", b"omp taskwait", b"omp taskgroup", b"omp critical")
FLAG_WHERE = 3  # cells named per flag

GOOD_VARIANTS = ["full", "clean", "empty", "extras", "ranks", "ranks_shuffled", "manyranks",
                 "rankfile", "omp", "topdown_icl", "topdown_spr", "topdown_skl", "topdown_zen4", "topdown_zen5",
                 "topdown_zen4_l2", "topdown_zen5_l2", "topdown_zen4_nol2",
                 "topdown_arm", "topdown_atom", "topdown_missing",
                 "topdown_nol2", "topdown_adl", "branch_icl", "throttle", "throttle_old",
                 "throttle_none"]
BAD_VARIANTS = {  # variant: what the one-line message must contain
    "newer": ["written by a newer perfmark (schema 2)", "this reader knows 1"],
    "foreign": ["not a perfmark file (no schema_version attribute)"],
    "truncated": ["truncated"],
    "garbage": ["not a perfmark file"],
    "badshape": ["/region/counts"],
    "badtree": ["parent"],
    "badthrottle": ["/region/timed_visits"],
}


class Checker:
    def __init__(self):
        self.errors = []
        self.checks = 0
        self.scope = ""  # the fixture being checked, prefixed to messages

    def ok(self, cond, msg):
        self.checks += 1
        if not cond:
            self.errors.append(self.scope + msg)
        return cond


# ------------------------------------------------------------------ model

def raw(x):
    """A string from h5py as bytes (vlen strings come back as bytes or str)."""
    if isinstance(x, bytes):
        return x
    if isinstance(x, str):
        return x.encode("utf-8")
    return bytes(x)


def txt(b):
    return raw(b).decode("utf-8", "replace")


def attr_str(attrs, name):
    return txt(attrs[name]) if name in attrs else ""


def attr_int(attrs, name, default=0):
    return int(attrs[name]) if name in attrs else default


def cell_value(rawc, en, run):
    """(value, estimate) per the counting model; value None = no estimate."""
    if run == 0 and en > 0:
        return None, False
    if run >= en:
        return float(rawc), False
    return float(rawc) * (float(en) / float(run)), True


def aggregate(cells):
    """cells: (raw, enabled, running, visited, lost) -> stats dict."""
    st = {"raw": 0, "total": 0.0, "estimate": False, "untrusted": False, "threads_na": 0}
    en_sum = run_sum = nvals = 0
    spread = []
    for rawc, en, run, visited, lost in cells:
        st["raw"] += rawc
        en_sum += en
        run_sum += run
        if lost:
            st["untrusted"] = True
        if not visited and rawc == 0 and en == 0:
            continue
        v, est = cell_value(rawc, en, run)
        if v is None:
            st["threads_na"] += 1
            continue
        st["estimate"] |= est
        st["total"] += v
        nvals += 1
        if visited:
            spread.append(v)
    if st["threads_na"] and nvals == 0:
        st["total"] = None
    st["untrusted"] |= st["threads_na"] > 0
    st["min"] = min(spread) if spread else None
    st["max"] = max(spread) if spread else None
    st["mean"] = (sum(spread) / len(spread)) if spread else None
    st["counted_share"] = float(run_sum) / float(en_sum) if en_sum > 0 else None
    return st


def load(path):
    with h5py.File(path, "r") as f:
        a = f.attrs
        m = {"schema_version": int(a["schema_version"]), "G": int(a["kernel_groups"])}
        for k in ("perfmark_version", "command", "host", "start_time", "clock",
                  "events_requested", "event_group", "fallback", "fallback_cause", "cpu"):
            m[k] = attr_str(a, k)
        m["pid"] = attr_int(a, "pid")
        m["duration_ns"] = attr_int(a, "duration_ns")
        m["bind_cpu"] = attr_int(a, "bind_cpu", -1)
        m["partial"] = bool(attr_int(a, "partial"))
        m["unseen"] = unseen_label(f)
        m["events"] = [{"name": raw(e["name"]), "pfm_name": raw(e["pfm_name"]),
                        "group": int(e["group"]), "type": int(e["type"]),
                        "config": int(e["config"])} for e in f["events"][()]]
        m["topdown_method"] = attr_str(a, "topdown_method")
        m["topdown_levels"] = attr_int(a, "topdown_levels")
        m["cpu_model"] = attr_str(a, "cpu_model")
        m["regions"] = [{"name": raw(r["name"]), "parent": int(r["parent"]),
                         "depth": int(r["depth"]), "kind": raw(r["kind"]), "path": raw(r["path"])}
                        for r in f["regions"][()]]
        m["threads"] = [{k: (raw(t[k]) if k == "host" else int(t[k])) for k in
                         ("rank", "thread", "pid", "tid", "host", "cpu_first", "cpu_last",
                          "exited", "open_at_end")} for t in f["threads"][()]]
        for name in ("visits", "wall_ns", "flags", "counts", "enabled_ns", "running_ns"):
            m["region/" + name] = f["region/" + name][()].tolist()
        for name in ("bytes", "bytes_unknown"):  # optional: older writers have none
            m["region/" + name] = f["region/" + name][()].tolist() if "region/" + name in f \
                else [[0] * len(row) for row in m["region/visits"]]
        # since the throttle (optional too): absent, every visit was timed
        visit_data = ("reads", "timer_visits", "timed_visits", "throttled_from")
        m["has_visit_data"] = any("region/" + n in f for n in visit_data)
        for name in visit_data:
            m["region/" + name] = f["region/" + name][()].tolist() if "region/" + name in f \
                else [list(row) if name == "timed_visits" else [0] * len(row)
                      for row in m["region/visits"]]
        m["throttle"] = attr_str(a, "throttle")
        m["rank_attr"] = attr_int(a, "rank")
        m["ranks_attr"] = attr_int(a, "ranks")
        for name in ("wall_ns", "counts", "enabled_ns", "running_ns"):
            m["thread/" + name] = f["thread/" + name][()].tolist()
        m["thread/flags"] = f["thread/flags"][()].tolist() if "thread/flags" in f \
            else [0] * len(m["thread/wall_ns"])
        m["has_read_cost"] = "thread/read_cost_ns" in f
        m["thread/reads"] = f["thread/reads"][()].tolist() if "thread/reads" in f \
            else [0] * len(m["thread/wall_ns"])
        m["thread/read_cost_ns"] = [float(c) for c in f["thread/read_cost_ns"][()]] \
            if m["has_read_cost"] else [0.0] * len(m["thread/wall_ns"])
        m["N"] = 0
        if "rank" in f and "counts" in f["rank"]:
            for name in ("counts", "enabled_ns", "running_ns"):
                m["rank/" + name] = f["rank/" + name][()].tolist()
            m["N"] = len(m["rank/counts"])
        m["messages"] = [raw(x) for x in f["messages"][()]] if "messages" in f else []
        m["flag_attrs"] = sorted((k, int(v)) for k, v in f["region/flags"].attrs.items())
    m["T"], m["R"], m["E"] = len(m["threads"]), len(m["regions"]), len(m["events"])
    # the throttle's flags count only where the file names them so
    # (the `extras` fixture uses 0x80 for something else)
    attrs = dict(m["flag_attrs"])
    m["timer_only_bit"] = 0x80 if attrs.get("TIMER_ONLY") == 0x80 else 0
    m["throttled_bit"] = 0x100 if attrs.get("THROTTLED") == 0x100 else 0
    m["measuring"] = m["has_visit_data"] or m["has_read_cost"] or m["throttle"] != ""
    times(m)
    return m


def cell_time(wall, visits, timed):
    """(time, kind) of a cell: wall_ns holds its timed visits; where fewer
    were timed than made, the time is wall x visits / timed rounded to the ns
    (an estimate); no timed visit: no time (None)."""
    if timed >= visits:
        return wall, "exact"
    if timed == 0:
        return None, "none"
    return int(math.floor(float(wall) * float(visits) / float(timed) + 0.5)), "est"


def times(m):
    """Every cell's time and exclusive time (its time minus its children's
    with a time, clamped at 0) with what they rest on, from the file alone:
    m["time"][t][r] (None: unknown), m["time_kind"], m["excl"], m["excl_kind"]
    ("exact", "est": it or a child is an estimate, "none"), m["excl_bad"] (a
    child without a time)."""
    T, R = m["T"], m["R"]
    V, W, TV = m["region/visits"], m["region/wall_ns"], m["region/timed_visits"]
    parent = [g["parent"] for g in m["regions"]]
    kids = {r: [c for c in range(R) if parent[c] == r] for r in range(R)}
    m["time"], m["time_kind"], m["excl"], m["excl_kind"], m["excl_bad"] = [], [], [], [], []
    for t in range(T):
        tc = [cell_time(W[t][r], V[t][r], TV[t][r]) for r in range(R)]
        ex, ek, eb = [], [], []
        for r in range(R):
            ns, kind = tc[r]
            ch = [tc[c] for c in kids[r]]
            if ns is None:
                ex.append(None)
                ek.append("none")
            else:
                ex.append(max(0, ns - sum(c for c, _ in ch if c is not None)))
                ek.append("est" if kind == "est" or any(k == "est" for _, k in ch)
                          else "exact")
            eb.append(any(k == "none" for _, k in ch))
        m["time"].append([ns for ns, _ in tc])
        m["time_kind"].append([k for _, k in tc])
        m["excl"].append(ex)
        m["excl_kind"].append(ek)
        m["excl_bad"].append(eb)


def time_total(vals):
    """(value, n_na, n_vals) of a sum of cell times (value, visited): None
    only when some visited cell has no time and no cell has one."""
    total, na, n = 0, 0, 0
    for v, visited in vals:
        if v is None:
            na += 1
        elif visited or v != 0:
            total += v
            n += 1
    return (None if na and not n else total), na, n


def flag_table(m):
    seen = 0
    for row in m["region/flags"]:
        for f in row:
            seen |= f
    names = dict(BUILTIN_FLAGS)
    for name, bit in m["flag_attrs"]:  # by name, as HDF5 iterates them
        if bit > 0 and bit & (bit - 1) == 0 and bit <= 0x80000000 and bit not in names:
            names[bit] = name
    table = []
    for b in range(32):
        bit = 1 << b
        if bit in names:
            table.append((bit, names[bit]))
        elif seen & bit:
            table.append((bit, "0x%x" % bit))
    return table


def tree_order(m):
    children = {}
    for r, g in enumerate(m["regions"]):
        children.setdefault(g["parent"], []).append(r)
    order = []
    stack = list(reversed(children.get(-1, [])))
    while stack:
        r = stack.pop()
        order.append(r)
        stack.extend(reversed(children.get(r, [])))
    return order


def event_keys(m):
    keys = []
    for e, ev in enumerate(m["events"]):
        dup = any(m["events"][k]["name"] == ev["name"] for k in range(e))
        keys.append(txt(ev["name"]) + ("#%d" % e if dup else ""))
    return keys


# The branch group's derived metrics (runtime/count/pm_cpu_models.c PM_DERIVED_BRANCH):
# name -> (numerator label, denominator label, scale), over the event totals.
BRANCH_EVENTS = {"instructions": "INST_RETIRED:ANY_P", "branches": "BR_INST_RETIRED:ALL_BRANCHES",
                 "mispredicted": "BR_MISP_RETIRED:ALL_BRANCHES"}
BRANCH_DERIVED = [("branch_miss_ratio", "mispredicted", "branches", 1.0),
                  ("branch_mpki", "mispredicted", "instructions", 1000.0),
                  ("branches_per_kinst", "branches", "instructions", 1000.0)]


def derived_of(m, reg):
    """name -> (value, estimate, untrusted) when the file holds the branch group."""
    names = [txt(e["name"]) for e in m["events"]]
    rows = {k: next((i for i, n in enumerate(names) if n.endswith("::" + v)), None)
            for k, v in BRANCH_EVENTS.items()}
    if None in rows.values():
        return None
    out = {}
    for name, num, den, scale in BRANCH_DERIVED:
        a, b = reg["events"][rows[num]], reg["events"][rows[den]]
        if a["total"] is None or b["total"] is None or b["total"] <= 0:
            out[name] = (None, False, False)
        else:
            out[name] = (scale * a["total"] / b["total"], a["estimate"] or b["estimate"],
                         a["untrusted"] or b["untrusted"])
    return out


def expected(m, path):
    T, R, E = m["T"], m["R"], m["E"]
    V, W, F = m["region/visits"], m["region/wall_ns"], m["region/flags"]
    C, EN, RUN = m["region/counts"], m["region/enabled_ns"], m["region/running_ns"]
    flags = flag_table(m)
    order = tree_order(m)
    pos = {r: i for i, r in enumerate(order)}
    keys = event_keys(m)
    x = {"order": order, "keys": keys, "flags": flags}
    x["cells"] = sum(1 for t in range(T) for r in range(R) if V[t][r] > 0 or F[t][r] != 0)
    x["flagged_cells"] = sum(1 for t in range(T) for r in range(R) if F[t][r] != 0)
    x["flags_summary"] = {name: sum(1 for t in range(T) for r in range(R) if F[t][r] & bit)
                          for bit, name in flags}
    TT, TK = m["time"], m["time_kind"]
    regions = []
    for i, r in enumerate(order):
        g = m["regions"][r]
        visited = [t for t in range(T) if V[t][r] > 0]
        walls = [TT[t][r] for t in visited if TT[t][r] is not None]
        total, na, _ = time_total((TT[t][r], V[t][r] > 0) for t in range(T))
        reg = {"index": i, "row": r, "path": txt(g["path"]), "name": txt(g["name"]),
               "parent": -1 if g["parent"] < 0 else pos[g["parent"]], "depth": g["depth"],
               "kind": txt(g["kind"]), "visits": sum(V[t][r] for t in range(T)),
               "threads_visited": len(visited),
               "wall_ns": {"total": total,
                           "min": min(walls) if walls else None,
                           "mean": sum(walls) / len(walls) if walls else None,
                           "max": max(walls) if walls else None},
               "time_est": any(TK[t][r] == "est" for t in range(T)), "time_na": na,
               "flags": {}}
        for bit, name in flags:
            n = sum(1 for t in range(T) if F[t][r] & bit)
            if n:
                reg["flags"][name] = n
        # timer only: every visiting cell read no counter by design
        to = m["timer_only_bit"]
        reg["timer_only"] = bool(to and visited and
                                 sum(1 for t in range(T) if F[t][r] & to) >= len(visited))
        reg["events"] = []
        for e in range(E):
            gr = m["events"][e]["group"]
            ev = aggregate((C[t][r][e], EN[t][r][gr], RUN[t][r][gr], V[t][r] > 0,
                            bool(F[t][r] & LOST_GENERATION)) for t in range(T))
            if reg["timer_only"]:  # its zeros are no count of the region
                ev = {"raw": ev["raw"], "total": None, "min": None, "mean": None, "max": None,
                      "estimate": False, "untrusted": False, "threads_na": 0,
                      "counted_share": None}
            reg["events"].append(ev)
        reg["measuring"] = expected_measuring(m, r, reg)
        regions.append(reg)
    x["regions"] = regions
    threads = []
    for t in range(T):
        evs = []
        for e in range(E):
            gr = m["events"][e]["group"]
            evs.append(aggregate([(m["thread/counts"][t][e], m["thread/enabled_ns"][t][gr],
                                   m["thread/running_ns"][t][gr], True, False)]))
        threads.append(evs)
    x["threads"] = threads
    ranks = []
    for n in range(m["N"]):
        members = [t for t in range(T) if m["N"] == 1 or m["threads"][t]["rank"] == n]
        evs = []
        for e in range(E):
            gr = m["events"][e]["group"]
            proc = aggregate([(m["rank/counts"][n][e], m["rank/enabled_ns"][n][gr],
                               m["rank/running_ns"][n][gr], True, False)])
            vals = [threads[t][e] for t in members]
            have = [v for v in vals if v["total"] is not None]
            na = len(vals) - len(have)
            tsum = None if (na and not have) else sum(v["total"] for v in have)
            evs.append({"process_raw": proc["raw"], "process": proc["total"],
                        "process_estimate": proc["estimate"],
                        "counted_share": proc["counted_share"], "threads_sum": tsum,
                        "threads_estimate": any(v["estimate"] for v in have),
                        "threads_na": na,
                        "difference": None if proc["total"] is None or tsum is None
                        else proc["total"] - tsum})
        ranks.append({"row": n, "threads": members, "events": evs})
    x["ranks"] = ranks
    x["run_reads"] = expected_run_reads(m)
    x["xr"] = expected_ranks(m, x)
    x["td"] = expected_topdown(m, x)
    expected_more(m, x)
    return x


def cpu_time_event(m):
    """task-clock, else cpu-clock: what perfmark's reads add to shows there."""
    for name in (b"task-clock", b"cpu-clock"):
        for e, ev in enumerate(m["events"]):
            if ev["name"] == name:
                return e
    return None


def expected_measuring(m, r, reg):
    """Which visits of region row r were measured, and perfmark's estimated
    part in it (docs/hdf5-schema.md, "What measuring costs")."""
    T = m["T"]
    V, W = m["region/visits"], m["region/wall_ns"]
    RD, TMV = m["region/reads"], m["region/timer_visits"]
    TV, TF = m["region/timed_visits"], m["region/throttled_from"]
    cost = m["thread/read_cost_ns"]
    has_cost = any(c > 0 for c in cost)
    thr = [TF[t][r] for t in range(T) if TF[t][r] > 0]
    cpu = sum((RD[t][r] + max(0, V[t][r] - TMV[t][r])) * cost[t] for t in range(T)
              if cost[t] > 0)
    wall = sum(RD[t][r] * cost[t] for t in range(T) if cost[t] > 0)
    e = cpu_time_event(m)
    base = reg["events"][e]["total"] if e is not None else None
    return {"wall_ns_raw": sum(W[t][r] for t in range(T)),
            "time_estimate": reg["time_est"], "threads_time_na": reg["time_na"],
            "exclusive_estimate": any(m["excl_kind"][t][r] == "est" for t in range(T)),
            "exclusive_untrusted": reg["time_na"] > 0 or any(m["excl_bad"][t][r]
                                                              for t in range(T)),
            "timed_visits": sum(TV[t][r] for t in range(T)),
            "timer_visits": sum(TMV[t][r] for t in range(T)),
            "timer_only": reg["timer_only"],
            "throttled": {"threads": len(thr), "from_min": min(thr), "from_max": max(thr)}
            if thr else None,
            "reads": sum(RD[t][r] for t in range(T)),
            "perfmark_cpu_ns": cpu if has_cost else None,
            "perfmark_wall_ns": wall if has_cost else None,
            "perfmark_cpu_share": cpu / base if has_cost and base and not reg["timer_only"]
            else None}


def expected_run_reads(m):
    """perfmark's reads over the whole run: Σ /thread/reads x read_cost_ns and
    its share of Σ /thread/wall_ns."""
    cost = m["thread/read_cost_ns"]
    costs = [c for c in cost if c > 0]
    ns = sum(n * c for n, c in zip(m["thread/reads"], cost) if c > 0)
    wall = sum(m["thread/wall_ns"])
    return {"reads": sum(m["thread/reads"]), "ns": ns if costs else None, "thread_ns": wall,
            "share": ns / wall if costs and wall > 0 else None,
            "cost_ns_min": min(costs) if costs else None,
            "cost_ns_max": max(costs) if costs else None}


def pstdev(vals):
    """Population standard deviation, two passes."""
    if not vals:
        return None
    mean = sum(vals) / len(vals)
    return math.sqrt(sum((v - mean) ** 2 for v in vals) / len(vals))


def thread_spread(pairs):
    """(value, thread row) of the threads behind a spread, by ascending row:
    min/mean/max/sd, imbalance = max/mean, the lowest row holding min/max."""
    if not pairs:
        return {"min": None, "mean": None, "max": None, "sd": None, "imbalance": None,
                "min_thread": None, "max_thread": None}
    vals = [v for v, _ in pairs]
    lo, hi, mean = min(vals), max(vals), sum(vals) / len(vals)
    return {"min": lo, "mean": mean, "max": hi, "sd": pstdev(vals),
            "imbalance": hi / mean if mean > 0 else None,
            "min_thread": min(t for v, t in pairs if v == lo),
            "max_thread": min(t for v, t in pairs if v == hi)}


def find_event(m, name):
    for e, ev in enumerate(m["events"]):
        if ev["name"] == name or ev["name"].startswith(name + b":"):
            return e
    return None


def expected_more(m, x):
    """Issue 6: exclusive time per cell, spreads over threads, IPC, OpenMP
    wait, where the flags are, across ranks for the exclusive time and the
    wait share. From the file alone."""
    T, R, E = m["T"], m["R"], m["E"]
    V, W, F = m["region/visits"], m["region/wall_ns"], m["region/flags"]
    C, EN, RUN = m["region/counts"], m["region/enabled_ns"], m["region/running_ns"]
    parent = [g["parent"] for g in m["regions"]]
    TT = m["time"]
    excl = m["excl"]  # None where the cell has no time
    x["excl"] = excl

    def is_wait(r):
        g = m["regions"][r]
        return g["kind"] == b"omp" and g["name"] in OMP_WAITS

    waits = [w for w in range(R) if is_wait(w)]

    def counts_for(r, w):
        """Wait w is below r with no wait in between (that one holds it)."""
        p = parent[w]
        while p >= 0 and p != r:
            if is_wait(p):
                return False
            p = parent[p]
        return p == r

    below = {r: [w for w in waits if counts_for(r, w)] for r in range(R)}
    ins, cyc = find_event(m, b"instructions"), find_event(m, b"cycles")
    for reg in x["regions"]:
        r = reg["row"]
        visited = [t for t in range(T) if V[t][r] > 0]
        more = {"wall_ns": dict(thread_spread([(TT[t][r], t) for t in visited
                                               if TT[t][r] is not None]),
                                total=reg["wall_ns"]["total"]),
                "exclusive_ns": dict(thread_spread([(excl[t][r], t) for t in visited
                                                    if excl[t][r] is not None]),
                                     total=None if reg["wall_ns"]["total"] is None else
                                     sum(excl[t][r] or 0 for t in range(T))),
                "events": []}
        for e in range(E):
            gr = m["events"][e]["group"]
            pairs = []
            for t in visited:
                v, _ = cell_value(C[t][r][e], EN[t][r][gr], RUN[t][r][gr])
                if v is not None and not reg["timer_only"]:
                    pairs.append((v, t))
            st = thread_spread(pairs)
            more["events"].append({"sd": st["sd"], "imbalance": st["imbalance"],
                                   "max_thread": st["max_thread"]})
        reg["by_thread"] = more
        reg["derived"] = derived_of(m, reg)
        reg["ipc"] = None
        if ins is not None and cyc is not None:
            i, c = reg["events"][ins]["total"], reg["events"][cyc]["total"]
            if i is not None and c is not None and c > 0:
                reg["ipc"] = i / c
        wait = sum(TT[t][w] or 0 for t in range(T) for w in below[r])
        reg["omp_wait_ns"] = wait if waits else None
        total = reg["wall_ns"]["total"]
        reg["omp_wait_share"] = wait / total if waits and total > 0 else None
    # where each flag is: the first cells in tree order, then thread order
    x["flags_where"] = {}
    for bit, name in x["flags"]:
        cells = [(i, r, t) for i, r in enumerate(x["order"]) for t in range(T) if F[t][r] & bit]
        x["flags_where"][name] = [{"region": i, "path": txt(m["regions"][r]["path"]),
                                   "thread": t, "rank": m["threads"][t]["rank"]}
                                  for i, r, t in cells[:FLAG_WHERE]]
    x["selection"] = {"by": "region", "region": None, "top": 0, "metric": "time",
                      "regions": list(range(R))}
    xr = x["xr"]
    ranks = xr["ranks"]
    members = {k: [t for t in range(T) if m["threads"][t]["rank"] == k] for k in ranks}
    for q, reg in zip(xr["regions"], x["regions"]):
        r = reg["row"]
        entered = [any(V[t][r] > 0 for t in members[k]) for k in ranks]
        per = [time_total((excl[t][r], V[t][r] > 0) for t in members[k])[0] for k in ranks]
        tot = time_total((excl[t][r], V[t][r] > 0) for t in range(T))[0]
        q["exclusive_ns"] = dict(across(per, entered, ranks), total=tot)
        if not waits:
            q["omp_wait_share"] = None
            continue
        shares, ent = [], []
        for k, en in zip(ranks, entered):
            tns = sum(TT[t][r] or 0 for t in members[k])
            wns = sum(TT[t][w] or 0 for t in members[k] for w in below[r])
            shares.append(wns / tns if tns > 0 else None)
            ent.append(en and tns > 0)
        q["omp_wait_share"] = across(shares, ent, ranks)


def across(values, entered, ranks):
    """min/mean/max over the ranks that entered and have a value (not None);
    imbalance = max/mean (None when mean is 0); ties go to the lowest rank."""
    spread = [(v, k) for v, e, k in zip(values, entered, ranks) if e and v is not None]
    if not spread:
        return {"min": None, "mean": None, "max": None, "imbalance": None, "max_rank": None,
                "min_rank": None, "sd": None, "histogram": []}
    vals = [v for v, _ in spread]
    lo, hi, mean = min(vals), max(vals), sum(vals) / len(vals)
    return {"min": lo, "mean": mean, "max": hi, "imbalance": hi / mean if mean > 0 else None,
            "sd": pstdev(vals),
            "max_rank": min(k for v, k in spread if v == hi),
            "min_rank": min(k for v, k in spread if v == lo),
            "histogram": octaves(vals)}


def octaves(vals):
    """[from, below, ranks] per octave used: values below 1, then [2^(k-1), 2^k)."""
    bins = {}
    for v in vals:
        k = 0 if v < 1 else min(math.frexp(v)[1], 64)
        bins[k] = bins.get(k, 0) + 1
    return [[0.0 if k == 0 else 2.0 ** (k - 1), 2.0 ** k, n] for k, n in sorted(bins.items())]


def expected_ranks(m, x):
    """The across-ranks tables, from the file alone: a rank's value is the sum
    over the /threads rows with that rank."""
    T, R, E = m["T"], m["R"], m["E"]
    V, W, F = m["region/visits"], m["region/wall_ns"], m["region/flags"]
    C, EN, RUN = m["region/counts"], m["region/enabled_ns"], m["region/running_ns"]
    cellq = {"visits": V, "wall_ns": W, "bytes": m["region/bytes"],
             "bytes_unknown": m["region/bytes_unknown"]}
    ranks = sorted({th["rank"] for th in m["threads"]})
    members = {k: [t for t in range(T) if m["threads"][t]["rank"] == k] for k in ranks}
    xr = {"ranks": ranks, "multi": len(ranks) > 1 or m["ranks_attr"] > 1}

    TT, TK = m["time"], m["time_kind"]

    def quantities(rows):
        entered = [any(V[t][r] > 0 for t in members[k] for r in rows) for k in ranks]
        q = {"ranks_entered": sum(entered)}
        for name, a in cellq.items():
            if name == "wall_ns":  # the report's time: sampled cells extrapolated
                per = [time_total((TT[t][r], V[t][r] > 0) for t in members[k] for r in rows)[0]
                       for k in ranks]
                tot, na, _ = time_total((TT[t][r], V[t][r] > 0) for t in range(T) for r in rows)
                q[name] = dict(across(per, entered, ranks), total=tot,
                               estimate=any(TK[t][r] == "est" for t in range(T) for r in rows),
                               untrusted=na > 0)
                continue
            per = [sum(a[t][r] for t in members[k] for r in rows) for k in ranks]
            q[name] = dict(across(per, entered, ranks), total=sum(per))
        return q, entered

    regions = []
    for reg in x["regions"]:
        r = reg["row"]
        q, entered = quantities([r])
        q.update(index=reg["index"], row=r, path=reg["path"], kind=reg["kind"], events=[])
        for e in range(E):
            gr = m["events"][e]["group"]
            per = [aggregate((C[t][r][e], EN[t][r][gr], RUN[t][r][gr], V[t][r] > 0,
                              bool(F[t][r] & LOST_GENERATION)) for t in members[k])["total"]
                   for k in ranks]
            ev = reg["events"][e]  # the region over all threads: total and markers
            if reg["timer_only"]:  # no count is the region's
                per = [None] * len(ranks)
            st = across(per, entered, ranks)
            st.update(total=ev["total"], estimate=ev["estimate"], untrusted=ev["untrusted"],
                      ranks_na=sum(1 for v, en in zip(per, entered) if en and v is None
                                   and not reg["timer_only"]))
            q["events"].append(st)
        regions.append(q)
    xr["regions"] = regions

    pos = {r: i for i, r in enumerate(x["order"])}
    mpi = [r for r in range(R) if m["regions"][r]["kind"] == b"mpi"]
    funcs = []
    for name in dict.fromkeys(m["regions"][r]["name"] for r in mpi):
        rows = [r for r in mpi if m["regions"][r]["name"] == name]
        q, _ = quantities(rows)
        q["calls"] = q.pop("visits")
        q.update(name=txt(name), raw_name=name, regions=sorted(pos[r] for r in rows))
        funcs.append(q)
    funcs.sort(key=lambda f: (-(f["wall_ns"]["total"] or 0), f["raw_name"]))
    xr["functions"] = funcs

    def under_mpi(r):
        p = m["regions"][r]["parent"]
        while p >= 0:
            if m["regions"][p]["kind"] == b"mpi":
                return True
            p = m["regions"][p]["parent"]
        return False

    outer = [r for r in mpi if not under_mpi(r)]
    share = []
    for k in ranks:
        total = max(m["thread/wall_ns"][t] for t in members[k])
        mpi_ns = sum(TT[t][r] or 0 for t in members[k] for r in outer)
        share.append({"rank": k, "mpi_ns": mpi_ns, "total_ns": total,
                      "share": mpi_ns / total if total > 0 else None,
                      "estimate": any(TK[t][r] == "est" for t in members[k] for r in outer)})
    xr["share"] = share
    xr["share_stat"] = across([s["share"] for s in share], [True] * len(ranks), ranks)
    return xr


# ---------------------------------------------------------------- TopDown
#
# Recomputed from the counts with the formulas of docs/topdown.md (perf's
# definitions), never with the C code: the events are found here from the
# schema and the model table, summed over cells, converted, divided.

RAW_TYPE = 4
NOT_COUNTED, SHORT = 0x02, 0x20
TD_OUT = [("NOT_COUNTED", NOT_COUNTED), ("LOST_GENERATION", LOST_GENERATION), ("SHORT", SHORT)]
TD_LEVEL1 = ["retiring", "bad_speculation", "frontend_bound", "backend_bound"]
TD_LEVEL2 = ["heavy_operations", "light_operations", "branch_mispredicts", "machine_clears",
             "fetch_latency", "fetch_bandwidth", "memory_bound", "core_bound"]
TD_NODES = TD_LEVEL1 + ["smt_contention"] + TD_LEVEL2
# The topdown groups of runtime/count/pm_cpu_models.c that are not PERF_METRICS,
# qualified with the model's PMU, in the order the formulas below read them.
SKL_TD_EVENTS = ["CPU_CLK_UNHALTED:THREAD_P", "IDQ_UOPS_NOT_DELIVERED:CORE", "UOPS_ISSUED:ANY",
                 "UOPS_RETIRED:RETIRE_SLOTS", "INT_MISC:RECOVERY_CYCLES"]
ZEN4_TD_EVENTS = ["CYCLES_NOT_IN_HALT", "DISPATCH_STALLS_1:FE_NO_OPS",
                  "DISPATCH_STALLS_1:BE_STALLS", "DISPATCH_STALLS_1:SMT_CONTENTION",
                  "OPS_SOURCE_DISPATCHED_FROM_DECODER:DECODER:OPCACHE:LOOP_BUFFER", "RETIRED_OPS"]
TD_MODELS = {m: ("skylake", [m + "::" + e for e in SKL_TD_EVENTS]) for m in ("skl", "skx", "clx")}
# Zen 4/5 level 2 (amdzen4/5 pipeline.json PipelineL2): no_ops_from_frontend
# at cmask = width, ex_ret_brn_misp, resyncs, ex_no_retire.load_not_complete,
# ex_no_retire.not_complete, ex_ret_ucode_ops
ZEN4_TD_L2_EVENTS = ["DISPATCH_STALLS_1:FE_NO_OPS:c=6", "RETIRED_BRANCH_INSTRUCTIONS_MISPREDICTED",
                     "RESYNCS", "CYCLES_NO_RETIRE:NOT_COMPLETE_MISSING_LOAD",
                     "CYCLES_NO_RETIRE:NOT_COMPLETE_LOAD_AND_ALU", "RETIRED_UCODE_OPS"]
TD_MODELS["amd64_fam19h_zen4"] = ("zen4", ["amd64_fam19h_zen4::" + e for e in ZEN4_TD_EVENTS])
TD_L2_EVENTS = {"amd64_fam19h_zen4": ["amd64_fam19h_zen4::" + e for e in ZEN4_TD_L2_EVENTS],
                "amd64_fam1ah_zen5": ["perf_raw::r%x" % c for c in (
                    0x1080001a0, 0xc3, 0x19f, 0xa2d6, 0x2d6, 0x1000000c2)]}
# Raw rows (runtime/count/pm_cpu_models.c): the configs worked out from the kernel's JSON.
TD_MODELS["amd64_fam1ah_zen5"] = ("zen4", ["perf_raw::r%x" % c for c in (
    0x76, 0x1000001a0, 0x100001ea0, 0x1000060a0, 0x7aa, 0xc1)])
TD_MODELS["arm_v1"] = ("arm", ["perf_raw::r%x" % c for c in (
    0x11, 0x3e, 0x3d, 0x3f, 0x3b, 0x3a, 0x10)])
TD_MODELS["arm_v2"] = ("arm", ["perf_raw::r%x" % c for c in (0x11, 0x3e, 0x3d, 0x3f, 0x3b, 0x3a)])
TD_MODELS["srf"] = ("atom", ["perf_raw::r%x" % c for c in (0x3c, 0x72, 0x73, 0x71, 0x74)])
# Slots per cycle of each model (the kernel's metrics JSON) and, for Arm, the
# cycles per BR_MIS_PRED that neoverse-v1/metrics.json moves from frontend
# bound to bad speculation.
TD_WIDTH = {"amd64_fam19h_zen4": 6, "amd64_fam1ah_zen5": 8, "arm_v1": 8, "arm_v2": 8, "srf": 6}
TD_ARM_MISPRED = {"arm_v1": 4, "arm_v2": 0}


def td_same_event(q, ev):
    """The /events row is the table event q: by name, or by libpfm4's pfm_name
    when only modifiers that do not change what is counted follow q."""
    q = q.encode()
    if ev["name"] == q:
        return True
    pfm = ev["pfm_name"]
    if not pfm.startswith(q):
        return False
    rest = pfm[len(q):]
    if rest == b"":
        return True
    if not rest.startswith(b":"):
        return False
    for mod in rest[1:].split(b":"):
        name, eq, value = mod.partition(b"=")
        if not eq or not (value == b"0" or name in (b"u", b"k", b"h", b"mg", b"mh")):
            return False
    return True


def td_events(m):
    """(levels, [event rows]) or (levels, None) when the file lacks one."""
    method = m["topdown_method"]
    if method == "perf_metrics":
        levels = 2 if m["topdown_levels"] >= 2 else 1
        configs = [0x400] + [0x8000 + 0x100 * k for k in range(4 * levels)]
        rows = []
        for k, c in enumerate(configs):
            hit = [e for e, ev in enumerate(m["events"])
                   if ev["type"] == RAW_TYPE and ev["config"] == c]
            if not hit and k < 5:
                return levels, None
            if not hit:  # a level-2 metric missing: level 1 still stands
                return 1, rows[:5]
            rows.append(hit[0])
        return levels, rows
    want = TD_MODELS.get(m["cpu_model"])
    if not want or want[0] != method:
        return 1, None
    rows = []
    for q in want[1]:
        hit = [e for e, ev in enumerate(m["events"]) if td_same_event(q, ev)]
        if not hit:
            return 1, None
        rows.append(hit[0])
    if method == "zen4" and m["topdown_levels"] >= 2:
        for q in TD_L2_EVENTS[m["cpu_model"]]:
            hit = [e for e, ev in enumerate(m["events"]) if td_same_event(q, ev)]
            if not hit:  # a level-2 event missing: level 1 still stands
                return 1, rows[:6]
            rows.append(hit[0])
        return 2, rows
    return 1, rows


def td_slots(method, levels, v, clamps, model=None):
    """Slot counts per node from the summed events v (perf's formulas); every
    difference is clamped at 0 (counted in clamps)."""
    def sub(a, b):
        if a < b:
            clamps.append((a, b))
        return max(0, a - b)

    if method == "perf_metrics":
        s = {"slots": v[0], "retiring": v[1], "bad_speculation": v[2], "frontend_bound": v[3],
             "backend_bound": v[4]}
        if levels == 2:
            for child, sibling, parent, k in (
                    ("heavy_operations", "light_operations", "retiring", 5),
                    ("branch_mispredicts", "machine_clears", "bad_speculation", 6),
                    ("fetch_latency", "fetch_bandwidth", "frontend_bound", 7),
                    ("memory_bound", "core_bound", "backend_bound", 8)):
                s[child] = v[k]
                s[sibling] = sub(s[parent], v[k])
        return s
    if method == "skylake":
        cycles, idq, issued, retired, recovery = v
        slots = 4 * cycles
        bad = sub(issued + 4 * recovery, retired)  # UOPS_ISSUED - RETIRE_SLOTS + 4 x RECOVERY
        return {"slots": slots, "retiring": retired, "bad_speculation": bad, "frontend_bound": idq,
                "backend_bound": sub(slots, idq + bad + retired)}
    if method == "arm":  # arm64/sbsa.json, neoverse-v1/metrics.json
        w = TD_WIDTH[model]
        cycles, ssf, ssb, stall, op_spec, op_retired = v[:6]
        mispred = v[6] if len(v) > 6 else 0
        slots = w * cycles
        used = sub(slots, stall)
        if op_spec == 0 or op_retired >= op_spec:
            if op_retired > op_spec:
                clamps.append((op_spec, op_retired))  # the op ratio capped at 1
            retiring = used
        else:
            retiring = used * op_retired // op_spec
        moved = TD_ARM_MISPRED[model] * w * mispred
        if moved > ssf:
            clamps.append((ssf, moved))
            moved = ssf
        return {"slots": slots, "retiring": retiring, "bad_speculation": used - retiring + moved,
                "frontend_bound": ssf - moved, "backend_bound": ssb}
    if method == "atom":  # sierraforest/srf-metrics.json: TOPDOWN_X.ALL_P / (6 x cycles)
        cycles, ret, bad, fe, be = v
        return {"slots": TD_WIDTH[model] * cycles, "retiring": ret, "bad_speculation": bad,
                "frontend_bound": fe, "backend_bound": be}
    cycles, fe, be, smt, dispatched, retired = v[:6]
    s = {"slots": TD_WIDTH[model] * cycles, "retiring": retired,
         "bad_speculation": sub(dispatched, retired),
         "frontend_bound": fe, "backend_bound": be, "smt_contention": smt}
    if levels == 2:  # amdzen4/5 pipeline.json PipelineL2; d_ratio(a, 0) = 0
        fe_all, misp, resync, load, any_nc, ucode = v[6:12]

        def part(a, b, c):  # a x b / c, b capped at c: a child within its parent
            if b > c:
                clamps.append((c, b))
            return a * min(b, c) // c if c else 0

        lat = TD_WIDTH[model] * fe_all
        if lat > fe:
            clamps.append((fe, lat))
        if ucode > retired:
            clamps.append((retired, ucode))
        for child, sibling, parent, val in (
                ("heavy_operations", "light_operations", "retiring", min(ucode, retired)),
                ("branch_mispredicts", "machine_clears", "bad_speculation",
                 part(s["bad_speculation"], misp, misp + resync)),
                ("fetch_latency", "fetch_bandwidth", "frontend_bound", min(lat, fe)),
                ("memory_bound", "core_bound", "backend_bound", part(be, load, any_nc))):
            s[child] = val
            s[sibling] = s[parent] - val
    return s


def td_stat(m, td, cells):
    """cells: (visited, flags, counts[E], enabled[G], running[G])."""
    out = {name: 0 for name, _ in TD_OUT}
    exact = [0] * len(td["rows"])
    scaled = [0.0] * len(td["rows"])
    used, estimate = 0, False
    en_sum = run_sum = 0
    groups = [m["events"][e]["group"] for e in td["rows"]]
    for visited, flags, counts, en, run in cells:
        if not (visited or any(counts[e] > 0 for e in td["rows"]) or
                any(en[g] > 0 for g in groups)):
            continue
        reason = next((name for name, bit in TD_OUT if flags & bit), None)
        vals = [cell_value(counts[e], en[g], run[g]) for e, g in zip(td["rows"], groups)]
        if reason is None and any(v is None for v, _ in vals):
            reason = "NOT_COUNTED"  # no estimate: the counters never ran
        if reason:
            out[reason] += 1
            continue
        for k, (e, (v, est)) in enumerate(zip(td["rows"], vals)):
            if est:
                scaled[k] += v
                estimate = True
            else:
                exact[k] += counts[e]
        used += 1
        en_sum += int(en[groups[0]])
        run_sum += int(run[groups[0]])
    v = [a + int(math.floor(b + 0.5)) for a, b in zip(exact, scaled)]
    clamps = []
    slots = td_slots(td["method"], td["levels"], v, clamps, m["cpu_model"])
    shown = ["slots"] + td["nodes"]
    slots = {k: slots.get(k, 0) for k in shown}
    total = sum(slots[k] for k in TD_LEVEL1 + ["smt_contention"] if k in slots)
    ratios = {k: slots[k] / total for k in td["nodes"]} if used and total else None
    st = {"method": td["method"], "levels": td["levels"], "cells_used": used, "slots": slots,
          "ratios": ratios, "cells_left_out": out, "estimate": estimate, "clamps": clamps}
    if m["cpu_model"] in HYBRID_MODELS:  # TopDown counted on P-cores only
        st["pcore_share"] = run_sum / en_sum if en_sum else None
    return st


HYBRID_MODELS = {"adl_glc"}  # runtime/count/pm_cpu_models.c rows with hybrid = 1


def expected_topdown(m, x):
    method = m["topdown_method"]
    if not method:
        return None
    levels, rows = td_events(m)
    td = {"method": method, "levels": levels, "rows": rows, "model": m["cpu_model"]}
    if rows is None:
        return td
    td["nodes"] = TD_LEVEL1 + (["smt_contention"] if method == "zen4" else []) + \
        (TD_LEVEL2 if levels == 2 else [])
    T = m["T"]
    V, F, C = m["region/visits"], m["region/flags"], m["region/counts"]
    EN, RUN = m["region/enabled_ns"], m["region/running_ns"]
    td["regions"] = [td_stat(m, td, [(V[t][r] > 0, F[t][r], C[t][r], EN[t][r], RUN[t][r])
                                     for t in range(T)]) for r in x["order"]]
    td["run"] = td_stat(m, td, [(True, m["thread/flags"][t], m["thread/counts"][t],
                                 m["thread/enabled_ns"][t], m["thread/running_ns"][t])
                                for t in range(T)])
    return td


def check_td_stat(ck, where, got, want):
    if want is None or got is None:
        ck.ok(got is None and want is None, "%s: %r, expected %r" % (where, got, want))
        return
    for k in ("method", "levels", "cells_used", "cells_left_out", "estimate"):
        ck.ok(got.get(k) == want[k], "%s: %s = %r, expected %r" % (where, k, got.get(k), want[k]))
    if "pcore_share" in want:
        ck.ok(close(got.get("pcore_share"), want["pcore_share"]) if want["pcore_share"] is not None
              else got.get("pcore_share") is None, "%s: pcore_share %r, expected %r"
              % (where, got.get("pcore_share"), want["pcore_share"]))
    else:
        ck.ok("pcore_share" not in got, "%s: pcore_share on a non-hybrid CPU" % where)
    ck.ok(got.get("slots") == want["slots"] and list(got["slots"]) == list(want["slots"]),
          "%s: slots %r, expected %r" % (where, got.get("slots"), want["slots"]))
    if want["ratios"] is None or got.get("ratios") is None:
        ck.ok(got.get("ratios") is None and want["ratios"] is None,
              "%s: ratios %r, expected %r" % (where, got.get("ratios"), want["ratios"]))
    else:
        ck.ok(list(got["ratios"]) == list(want["ratios"]),
              "%s: ratio keys %r" % (where, list(got["ratios"])))
        for k, v in want["ratios"].items():
            ck.ok(close(got["ratios"].get(k), v), "%s: ratio %s = %r, expected %r" %
                  (where, k, got["ratios"].get(k), v))


def check_json_topdown(ck, m, x, j):
    td = x["td"]
    got = j["topdown"]
    for k, want in (("method", td["method"]), ("levels", td["levels"]),
                    ("file_levels", m["topdown_levels"]), ("model", td["model"])):
        ck.ok(got.get(k) == want, "json topdown: %s = %r, expected %r" % (k, got.get(k), want))
    if td["rows"] is None:
        ck.ok(isinstance(got.get("problem"), str) and got["problem"] and got["events"] == [],
              "json topdown: a file lacking a TopDown event must say why: %r" % got)
        ck.ok(got.get("whole_run") is None, "json topdown: whole_run without a breakdown")
        for reg in j["regions"]:
            ck.ok(reg.get("topdown", "absent") is None, "json region %s: topdown %r, expected null"
                  % (reg["path"], reg.get("topdown", "absent")))
        return
    ck.ok(got.get("problem") is None, "json topdown: problem %r" % got.get("problem"))
    dropped = td["levels"] < m["topdown_levels"]  # the file announced level 2
    ck.ok(isinstance(got.get("note"), str) if dropped else got.get("note") is None,
          "json topdown: note %r when level 2 is %s" % (got.get("note"), "missing" if dropped
                                                         else "complete"))
    ck.ok(got.get("events") == [x["keys"][e] for e in td["rows"]],
          "json topdown: events %r" % got.get("events"))
    check_td_stat(ck, "json topdown whole_run", got.get("whole_run"), td["run"])
    for reg, want in zip(j["regions"], td["regions"]):
        check_td_stat(ck, "json region %s topdown" % reg["path"], reg.get("topdown"), want)


def td_csv_header():
    return (["td_method", "td_levels", "td_cells_used"] +
            ["td_left_out_" + name.lower() for name, _ in TD_OUT] + ["td_estimate", "td_slots"] +
            ["td_%s_slots" % n for n in TD_NODES] + ["td_%s_ratio" % n for n in TD_NODES])


def check_csv_topdown(ck, m, x, c, i, where):
    td = x["td"]
    ck.ok(c["td_method"] == td["method"], "%s: td_method %r" % (where, c["td_method"]))
    if td["rows"] is None:
        ck.ok(c["td_levels"] == str(m["topdown_levels"]), "%s: td_levels" % where)
        ck.ok(all(c[k] == "" for k in td_csv_header()[2:]), "%s: td columns not empty" % where)
        return
    st = td["regions"][i]
    want = {"td_levels": str(td["levels"]), "td_cells_used": str(st["cells_used"]),
            "td_estimate": "true" if st["estimate"] else "false",
            "td_slots": str(st["slots"]["slots"])}
    for name, _ in TD_OUT:
        want["td_left_out_" + name.lower()] = str(st["cells_left_out"][name])
    for n in TD_NODES:
        want["td_%s_slots" % n] = str(st["slots"][n]) if n in td["nodes"] else ""
    for k, v in want.items():
        ck.ok(c[k] == v, "%s: %s = %r, expected %r" % (where, k, c[k], v))
    for n in TD_NODES:
        v = st["ratios"][n] if st["ratios"] is not None and n in td["nodes"] else None
        ck.ok(close(csv_num(c["td_%s_ratio" % n]), v), "%s: td_%s_ratio = %r, expected %r" %
              (where, n, c["td_%s_ratio" % n], v))


def td_cell_text(st, node):
    """A TopDown percentage as the text shows it."""
    out = sum(st["cells_left_out"].values())
    if st["ratios"] is not None:
        return "%.1f%%%s" % (st["ratios"][node] * 100.0, "~" if st["estimate"] else "")
    if st["cells_used"] == 0 and out and out == st["cells_left_out"]["SHORT"]:
        return "SHORT"
    return "n/a" if out else "-"


def check_text_topdown(ck, m, x, data):
    td = x["td"]
    lines = data.split("\n")
    if td is None:
        ck.ok("TopDown (" not in data, "text: a TopDown section in a file without TopDown")
        return
    head = "TopDown (%s, level %s, %s)" % (td["method"], "1-2" if td["levels"] == 2 else "1",
                                           td["model"])
    start = [i for i, line in enumerate(lines) if line.startswith(head)]
    if not ck.ok(len(start) == 1, "text: TopDown heading %r missing" % head):
        return
    if td["rows"] is None:
        ck.ok(lines[start[0] + 1].startswith("no breakdown: "), "text: no 'no breakdown' line")
        return
    level1 = [n for n in td["nodes"] if n not in TD_LEVEL2]
    stats = td["regions"] + [td["run"]]
    names = [text_clean(m["regions"][r]["name"]) for r in x["order"]] + \
        ["(whole run: thread totals)"]
    first = start[0] + 1
    if td["levels"] < m["topdown_levels"]:
        ck.ok(lines[first].startswith("level 2 not shown: "), "text: the level-2 note is missing")
        first += 1
    rows = lines[first + 1:first + 1 + len(stats)]
    for line, st, name in zip(rows, stats, names):
        got = fields(line, 0, [36, 8] + [9] * len(level1) + [9])
        slots = "-" if st["cells_used"] == 0 else \
            fmt_count(st["slots"]["slots"]) + ("~" if st["estimate"] else "")
        out = sum(st["cells_left_out"].values())
        want = [name] + [slots] + [td_cell_text(st, n) for n in level1] + [str(out) if out else ""]
        ck.ok(got == want, "text: TopDown row %r, expected %r" % (got, want))
    if td["levels"] == 2:
        at = [i for i, line in enumerate(lines) if line.startswith("TopDown level 2")]
        hdr = [i for i in range(at[0] if at else len(lines), len(lines))
               if lines[i].startswith("region ")] if at else []
        if ck.ok(hdr, "text: the TopDown level-2 table is missing"):
            for line, st, name in zip(lines[hdr[0] + 1:], stats, names):
                got = fields(line, 0, [36] + [8] * 8)
                want = [name] + [td_cell_text(st, n) for n in TD_LEVEL2]
                ck.ok(got == want, "text: TopDown level-2 row %r, expected %r" % (got, want))
    flat = " ".join(data.split())
    by = {name: sum(st["cells_left_out"][name] for st in td["regions"]) for name, _ in TD_OUT}
    if sum(by.values()):
        want = "left out of the sums: %d in all:" % sum(by.values())
        ck.ok(want in flat, "text: TopDown footnote %r missing" % want)
        for name, n in by.items():
            ck.ok(("%s %d" % (name, n) in flat.split("in all:")[1]) == (n > 0),
                  "text: TopDown footnote count of %s" % name)
    if any(st["estimate"] for st in stats):
        ck.ok("~ = some cell was multiplexed" in flat, "text: TopDown estimate footnote missing")
    out = sum(td["run"]["cells_left_out"].values())
    ck.ok(("(whole run: thread totals): %d thread" % out in flat) == (out > 0),
          "text: threads left out of the whole run not said")
    hybrid = "pcore_share" in td["run"]
    at = [i for i, line in enumerate(lines) if line.startswith("TopDown on a hybrid CPU")]
    ck.ok(bool(at) == hybrid, "text: the hybrid P-core table is %s" % ("missing" if hybrid
                                                                      else "shown"))
    if at and hybrid:
        for line, st, name in zip(lines[at[0] + 2:], stats, names):
            got = fields(line, 0, [36, 13, 15])
            share = st["pcore_share"]
            want = [name] + (["%.1f%%" % (100 * share), "%.1f%%" % (100 * (1 - share))]
                             if share is not None else ["-", "-"])
            ck.ok(got == want, "text: P-core row %r, expected %r" % (got, want))


def check_topdown_formulas(ck, m, x):
    """Each TopDown fixture exercises what it is for, and where the events
    account for every slot the ratios are perf's own (X / slots)."""
    td = x["td"]
    if td is None or td["rows"] is None:
        return
    stats = td["regions"] + [td["run"]]
    ck.ok(any(st["ratios"] for st in stats), "topdown: no region has ratios")
    ck.ok(any(st["estimate"] and st["ratios"] for st in stats), "topdown: no scaled cell summed")
    ck.ok(any(sum(st["cells_left_out"].values()) for st in stats), "topdown: nothing left out")
    if td["method"] == "perf_metrics":
        ck.ok(any(st["cells_used"] == 0 and st["cells_left_out"]["SHORT"] for st in stats),
              "topdown: no region where every cell is SHORT")
    if td["method"] not in ("perf_metrics", "atom") or td["levels"] == 2:
        ck.ok(any(st["clamps"] for st in stats), "topdown: no difference clamped at 0")
    exact = 0
    for st in stats:
        s = st["slots"]
        level1 = sum(s[k] for k in td["nodes"] if k not in TD_LEVEL2)
        if td["method"] != "perf_metrics" and st["ratios"] and level1 == s["slots"]:
            exact += 1
            for k in td["nodes"]:
                ck.ok(close(st["ratios"][k], s[k] / s["slots"]), "topdown: %s differs from "
                      "perf's %s / slots" % (k, k))
    ck.ok(exact > 0 or td["method"] == "perf_metrics",
          "topdown: no region accounts for every slot (perf's ratios are not compared)")


# ---------------------------------------------------------------- compare

def close(a, b):
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, list) or isinstance(b, list):
        return isinstance(a, list) and isinstance(b, list) and len(a) == len(b) and \
            all(close(x, y) for x, y in zip(a, b))
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-6)


def strict_json(data):
    def bad_constant(c):
        raise ValueError("non-standard JSON constant " + c)
    return json.loads(data, parse_constant=bad_constant)


def check_stat(ck, where, got, want, keys):
    for k in keys:
        ck.ok(k in got, "%s: missing %s" % (where, k)) and \
            ck.ok(close(got[k], want[k]), "%s.%s = %r, expected %r" % (where, k, got[k], want[k]))


def check_json(ck, m, x, path, data):
    try:
        j = strict_json(data)
    except ValueError as e:
        ck.ok(False, "json: not valid JSON: %s" % e)
        return
    keys = JSON_KEYS + (RANK_JSON_KEYS if x["xr"]["multi"] else []) + \
        (["topdown"] if x["td"] is not None else []) + MORE_JSON_KEYS + \
        (MEASURING_JSON_KEYS if m["measuring"] else [])
    ck.ok(list(j.keys()) == keys, "json: top-level keys %s, expected %s" % (list(j), keys))
    if not isinstance(j, dict) or "regions" not in j:
        return
    if m["measuring"]:
        ck.ok(j.get("throttle") == m["throttle"], "json: throttle %r" % j.get("throttle"))
        got = j.get("perfmark_reads", {})
        ck.ok(list(got) == list(x["run_reads"]), "json: perfmark_reads keys %r" % list(got))
        check_stat(ck, "json perfmark_reads", got, x["run_reads"], tuple(x["run_reads"]))
    if x["xr"]["multi"] and all(k in j for k in RANK_JSON_KEYS):
        check_json_ranks(ck, m, x, j)
    if x["td"] is not None and "topdown" in j:
        check_json_topdown(ck, m, x, j)
    ck.ok(j.get("flags_where") == x["flags_where"],
          "json: flags_where = %r, expected %r" % (j.get("flags_where"), x["flags_where"]))
    ck.ok(j.get("selection") == x["selection"],
          "json: selection = %r, expected %r" % (j.get("selection"), x["selection"]))
    for k in ("schema_version", "perfmark_version", "command", "host", "start_time", "clock",
              "events_requested", "event_group", "fallback", "fallback_cause", "cpu", "pid",
              "duration_ns", "bind_cpu", "partial"):
        ck.ok(j.get(k) == m[k], "json: %s = %r, expected %r" % (k, j.get(k), m[k]))
    ck.ok(j["file"] == path, "json: file = %r, expected %r" % (j["file"], path))
    ck.ok(j["kernel_groups"] == m["G"], "json: kernel_groups")
    ck.ok(j["events_measured"] == [txt(e["name"]) for e in m["events"]], "json: events_measured")
    ck.ok([e["key"] for e in j["events"]] == x["keys"], "json: event keys %r" % [e["key"] for e in j["events"]])
    ck.ok(j["messages"] == [txt(s) for s in m["messages"]], "json: messages differ")
    ck.ok(j["cells"] == x["cells"], "json: cells = %r, expected %r" % (j["cells"], x["cells"]))
    ck.ok(j["flagged_cells"] == x["flagged_cells"], "json: flagged_cells")
    ck.ok(j["flags_summary"] == x["flags_summary"],
          "json: flags_summary = %r, expected %r" % (j["flags_summary"], x["flags_summary"]))
    ck.ok(j["rank_difference_means"] == m["unseen"], "json: rank_difference_means")
    ck.ok(len(j["regions"]) == len(x["regions"]), "json: %d regions, expected %d" % (len(j["regions"]), len(x["regions"])))
    for got, want in zip(j["regions"], x["regions"]):
        where = "json region %d (%s)" % (want["index"], want["path"])
        ck.ok(list(got) == REGION_JSON_KEYS + (["topdown"] if x["td"] is not None else []) +
              MORE_REGION_KEYS + (["derived"] if want.get("derived") is not None else []) +
              (["measuring"] if m["measuring"] else []),
              "%s: keys %r" % (where, list(got)))
        if m["measuring"]:
            g = got.get("measuring", {})
            ck.ok(list(g) == MEASURING_KEYS, "%s: measuring keys %r" % (where, list(g)))
            for k in MEASURING_KEYS:
                w = want["measuring"][k]
                ok = g.get(k) == w if k in ("throttled", "timer_only", "time_estimate",
                                              "exclusive_estimate", "exclusive_untrusted") \
                    else close(g.get(k), w)
                ck.ok(ok, "%s: measuring %s = %r, expected %r" % (where, k, g.get(k), w))
        if want.get("derived") is not None:
            for name, (v, est, bad) in want["derived"].items():
                g = got["derived"].get(name, {})
                ck.ok(close(g.get("value"), v) and g.get("estimate") == est and
                      g.get("untrusted") == bad, "%s: derived %s = %r, expected %r"
                      % (where, name, g, (v, est, bad)))
        check_json_more(ck, x, where, got, want)
        for k in ("index", "row", "path", "name", "parent", "depth", "kind", "visits",
                  "threads_visited", "flags"):
            ck.ok(got.get(k) == want[k], "%s: %s = %r, expected %r" % (where, k, got.get(k), want[k]))
        check_stat(ck, where + " wall_ns", got["wall_ns"], want["wall_ns"], ("total", "min", "mean", "max"))
        ck.ok(list(got["events"]) == x["keys"], "%s: event keys" % where)
        for key, ev in zip(x["keys"], want["events"]):
            if key in got["events"]:
                check_stat(ck, "%s event %s" % (where, key), got["events"][key], ev,
                           ("raw", "total", "min", "mean", "max", "estimate", "counted_share",
                            "untrusted", "threads_na"))
    ck.ok(len(j["threads"]) == m["T"], "json: thread count")
    for t, (got, want) in enumerate(zip(j["threads"], x["threads"])):
        th = m["threads"][t]
        for k in ("rank", "thread", "pid", "tid", "cpu_first", "cpu_last", "open_at_end"):
            ck.ok(got[k] == th[k], "json thread %d: %s" % (t, k))
        ck.ok(got["host"] == txt(th["host"]), "json thread %d: host" % t)
        ck.ok(got["exited"] == bool(th["exited"]), "json thread %d: exited" % t)
        ck.ok(got["wall_ns"] == m["thread/wall_ns"][t], "json thread %d: wall_ns" % t)
        if m["measuring"]:
            ck.ok(got.get("reads") == m["thread/reads"][t] and
                  close(got.get("read_cost_ns"), m["thread/read_cost_ns"][t]),
                  "json thread %d: reads %r, read_cost_ns %r" % (t, got.get("reads"),
                                                                 got.get("read_cost_ns")))
        else:
            ck.ok("reads" not in got, "json thread %d: reads in an older file" % t)
        for key, ev in zip(x["keys"], want):
            check_stat(ck, "json thread %d event %s" % (t, key), got["events"].get(key, {}), ev,
                       ("raw", "total", "estimate", "counted_share"))
    ck.ok(len(j["rank_totals"]) == len(x["ranks"]), "json: rank_totals rows")
    for got, want in zip(j["rank_totals"], x["ranks"]):
        ck.ok(got["row"] == want["row"] and got["threads"] == want["threads"],
              "json rank row %d: threads %r, expected %r" % (want["row"], got["threads"], want["threads"]))
        for key, ev in zip(x["keys"], want["events"]):
            check_stat(ck, "json rank row %d event %s" % (want["row"], key),
                       got["events"].get(key, {}), ev, tuple(ev))


XSTAT = ("total", "min", "mean", "max", "imbalance", "max_rank", "sd", "min_rank", "histogram")
TSTAT = ("total", "min", "mean", "max", "sd", "imbalance", "min_thread", "max_thread")


def check_json_more(ck, x, where, got, want):
    """The keys issue 6 appended to a region object."""
    bt = got.get("by_thread", {})
    for q in ("wall_ns", "exclusive_ns"):
        check_stat(ck, "%s by_thread %s" % (where, q), bt.get(q, {}), want["by_thread"][q], TSTAT)
    for key, ev in zip(x["keys"], want["by_thread"]["events"]):
        check_stat(ck, "%s by_thread event %s" % (where, key), bt.get("events", {}).get(key, {}),
                   ev, ("sd", "imbalance", "max_thread"))
    for k in ("ipc", "omp_wait_ns", "omp_wait_share"):
        ck.ok(k in got and close(got[k], want[k]),
              "%s: %s = %r, expected %r" % (where, k, got.get(k), want[k]))


def check_json_ranks(ck, m, x, j):
    xr = x["xr"]
    ck.ok(j["ranks"] == len(xr["ranks"]),
          "json: ranks = %r, expected %d" % (j["ranks"], len(xr["ranks"])))
    want = m["ranks_attr"] if m["ranks_attr"] > 0 else None
    ck.ok(j["job_ranks"] == want, "json: job_ranks = %r, expected %r" % (j["job_ranks"], want))
    ck.ok(len(j["regions_by_rank"]) == len(xr["regions"]), "json: regions_by_rank rows")
    for got, want in zip(j["regions_by_rank"], xr["regions"]):
        where = "json regions_by_rank %d (%s)" % (want["index"], want["path"])
        for k in ("index", "row", "path", "kind", "ranks_entered"):
            ck.ok(got.get(k) == want[k], "%s: %s = %r, expected %r" % (where, k, got.get(k), want[k]))
        for q in QUANTITIES:
            check_stat(ck, "%s %s" % (where, q), got.get(q, {}), want[q], XSTAT)
        ck.ok(list(got.get("events", {})) == x["keys"], "%s: event keys" % where)
        for key, ev in zip(x["keys"], want["events"]):
            check_stat(ck, "%s event %s" % (where, key), got["events"].get(key, {}), ev,
                       XSTAT + ("estimate", "untrusted", "ranks_na"))
        check_stat(ck, "%s exclusive_ns" % where, got.get("exclusive_ns", {}),
                   want["exclusive_ns"], XSTAT)
        if want["omp_wait_share"] is None:
            ck.ok(got.get("omp_wait_share", 0) is None, "%s: omp_wait_share not null" % where)
        else:
            check_stat(ck, "%s omp_wait_share" % where, got.get("omp_wait_share") or {},
                       want["omp_wait_share"], ("min", "mean", "max", "sd", "max_rank"))
        ck.ok(got.get("time_estimate", "absent") == (want["wall_ns"]["estimate"]
                                                     if m["measuring"] else "absent"),
              "%s: time_estimate %r" % (where, got.get("time_estimate", "absent")))
    names = [f["name"] for f in j["mpi_functions"]]
    ck.ok(names == [f["name"] for f in xr["functions"]],
          "json: mpi_functions %r, expected %r" % (names, [f["name"] for f in xr["functions"]]))
    for got, want in zip(j["mpi_functions"], xr["functions"]):
        where = "json mpi_functions %s" % want["name"]
        for k in ("ranks_entered", "regions"):
            ck.ok(got.get(k) == want[k], "%s: %s = %r, expected %r" % (where, k, got.get(k), want[k]))
        for q in ["calls"] + QUANTITIES[1:]:
            check_stat(ck, "%s %s" % (where, q), got.get(q, {}), want[q], XSTAT)
        ck.ok(got.get("time_estimate", "absent") == (want["wall_ns"]["estimate"]
                                                     if m["measuring"] else "absent"),
              "%s: time_estimate %r" % (where, got.get("time_estimate", "absent")))
    sh = j["mpi_share"]
    ck.ok(len(sh["ranks"]) == len(xr["share"]), "json: mpi_share ranks")
    for got, want in zip(sh["ranks"], xr["share"]):
        check_stat(ck, "json mpi_share rank %d" % want["rank"], got, want,
                   ("rank", "mpi_ns", "total_ns", "share") +
                   (("estimate",) if m["measuring"] else ()))
        ck.ok(m["measuring"] or "estimate" not in got, "json mpi_share: estimate in an older file")
    check_stat(ck, "json mpi_share", sh, xr["share_stat"],
               ("min", "mean", "max", "min_rank", "max_rank"))


def csv_expect_str(s):
    return "'" + s if s and s[0] in "=+-@\t\r" else s


def csv_num(s):
    return None if s == "" else float(s)


def check_csv(ck, m, x, data):
    rows = list(csv.reader(io.StringIO(data, newline="")))
    multi = x["xr"]["multi"]
    header = CSV_HEADER + (CSV_RANK_HEADER if multi else []) + \
        (td_csv_header() if x["td"] is not None else []) + CSV_MORE_HEADER + \
        (CSV_MEASURING_HEADER if m["measuring"] else [])
    if not ck.ok(rows and rows[0] == header, "csv: header %r" % (rows[0] if rows else None)):
        return
    body = rows[1:]
    E = m["E"]
    per = max(E, 1)
    ck.ok(len(body) == len(x["regions"]) * per,
          "csv: %d rows, expected %d" % (len(body), len(x["regions"]) * per))
    for k, row in enumerate(body):
        if not ck.ok(len(row) == len(header), "csv row %d: %d fields" % (k + 1, len(row))):
            continue
        c = dict(zip(header, row))
        if multi:
            check_csv_ranks(ck, c, x["xr"]["regions"][k // per], k % per if E else None,
                            "csv row %d" % (k + 1))
        if x["td"] is not None:
            check_csv_topdown(ck, m, x, c, k // per, "csv row %d" % (k + 1))
        check_csv_more(ck, c, x["regions"][k // per], k % per if E else None,
                       "csv row %d" % (k + 1))
        if m["measuring"]:
            check_csv_measuring(ck, c, x["regions"][k // per], x["run_reads"],
                                "csv row %d" % (k + 1))
        for col in CSV_STRING_COLUMNS:
            ck.ok(not c[col] or c[col][0] not in "=+-@\t\r",
                  "csv row %d: %s %r is open to spreadsheet injection" % (k + 1, col, c[col]))
        reg = x["regions"][k // per]
        where = "csv row %d (%s)" % (k + 1, reg["path"])
        for col in ("index", "row", "parent", "depth", "visits", "threads_visited"):
            ck.ok(int(c[col]) == reg[col], "%s: %s = %s, expected %s" % (where, col, c[col], reg[col]))
        for col in ("path", "name", "kind"):
            ck.ok(c[col] == csv_expect_str(reg[col]), "%s: %s = %r, expected %r" % (where, col, c[col], csv_expect_str(reg[col])))
        for col, key in (("wall_total_ns", "total"), ("wall_min_ns", "min"),
                         ("wall_mean_ns", "mean"), ("wall_max_ns", "max")):
            ck.ok(close(csv_num(c[col]), reg["wall_ns"][key]), "%s: %s" % (where, col))
        flags = ";".join("%s:%d" % (n, v) for n, v in reg["flags"].items())
        ck.ok(c["flags"] == csv_expect_str(flags), "%s: flags %r, expected %r" % (where, c["flags"], flags))
        if E == 0:
            ck.ok(all(c[col] == "" for col in CSV_HEADER[14:]), "%s: event fields not empty" % where)
            continue
        e = k % per
        ev = reg["events"][e]
        ck.ok(c["event"] == csv_expect_str(txt(m["events"][e]["name"])), "%s: event name" % where)
        ck.ok(int(c["event_group"]) == m["events"][e]["group"], "%s: event_group" % where)
        ck.ok(int(c["raw_total"]) == ev["raw"], "%s: raw_total" % where)
        for col in ("total", "min", "mean", "max", "counted_share"):
            ck.ok(close(csv_num(c[col]), ev[col]), "%s %s: %s = %r, expected %r" % (where, c["event"], col, c[col], ev[col]))
        for col in ("estimate", "untrusted"):
            ck.ok(c[col] == ("true" if ev[col] else "false"), "%s %s: %s" % (where, c["event"], col))
        ck.ok(int(c["threads_na"]) == ev["threads_na"], "%s: threads_na" % where)


def check_csv_more(ck, c, reg, e, where):
    """The columns issue 6 appended to every row."""
    def num(col, value):
        ck.ok(close(csv_num(c[col]), value), "%s: %s = %r, expected %r" % (where, col, c[col], value))

    bt = reg["by_thread"]
    num("excl_total_ns", bt["exclusive_ns"]["total"])
    for k in ("min", "mean", "max", "sd"):
        num("excl_%s_ns" % k, bt["exclusive_ns"][k])
    num("wall_thread_sd_ns", bt["wall_ns"]["sd"])
    num("wall_thread_imbalance", bt["wall_ns"]["imbalance"])
    num("wall_max_thread", bt["wall_ns"]["max_thread"])
    ev = bt["events"][e] if e is not None else {"sd": None, "imbalance": None, "max_thread": None}
    for k in ("sd", "imbalance"):
        num("event_thread_" + k, ev[k])
    num("event_max_thread", ev["max_thread"])
    for k in ("ipc", "omp_wait_ns", "omp_wait_share"):
        num(k, reg[k])


def check_csv_measuring(ck, c, reg, run, where):
    """The columns appended for files since the throttle."""
    ms = reg["measuring"]
    thr = ms["throttled"] or {}
    want = {"wall_raw_ns": ms["wall_ns_raw"], "threads_time_na": ms["threads_time_na"],
            "timed_visits": ms["timed_visits"], "timer_visits": ms["timer_visits"],
            "throttled_threads": thr.get("threads", 0), "throttled_from_min": thr.get("from_min"),
            "throttled_from_max": thr.get("from_max"), "reads": ms["reads"],
            "perfmark_cpu_ns": ms["perfmark_cpu_ns"], "perfmark_wall_ns": ms["perfmark_wall_ns"],
            "perfmark_cpu_share": ms["perfmark_cpu_share"], "run_perfmark_reads_ns": run["ns"],
            "run_perfmark_reads_share": run["share"]}
    for col, v in want.items():
        ck.ok(close(csv_num(c[col]), v), "%s: %s = %r, expected %r" % (where, col, c[col], v))
    for col, key in (("time_estimate", "time_estimate"), ("excl_estimate", "exclusive_estimate"),
                     ("timer_only", "timer_only")):
        ck.ok(c[col] == ("true" if ms[key] else "false"), "%s: %s = %r" % (where, col, c[col]))


def check_csv_ranks(ck, c, want, e, where):
    """The appended across-ranks columns of one (region, event) row."""
    def num(col, value):
        ck.ok(close(csv_num(c[col]), value), "%s: %s = %r, expected %r" % (where, col, c[col], value))

    num("ranks_entered", want["ranks_entered"])
    num("bytes_total", want["bytes"]["total"])
    num("bytes_unknown_total", want["bytes_unknown"]["total"])
    stats = [(q, want[q]) for q in QUANTITIES]
    if e is not None:
        stats.append(("event", want["events"][e]))
        num("event_ranks_na", want["events"][e]["ranks_na"])
    else:
        ck.ok(all(c["event_" + k] == "" for k in SPREAD + ["ranks_na"]), "%s: event columns" % where)
    for q, st in stats:
        for col, key in zip(SPREAD, ("min", "mean", "max", "imbalance", "max_rank")):
            num("%s_%s" % (q, col), st[key])


def text_clean(s):
    """What the text report may show of user data: controls and bad bytes as '?'."""
    out = []
    for ch in txt(s):
        cp = ord(ch)
        if ch == "\ufffd" or cp < 0x20 or 0x7F <= cp <= 0x9F or cp in (0x2028, 0x2029) \
                or 0x202A <= cp <= 0x202E or 0x2066 <= cp <= 0x2069:
            out.append("?")
        else:
            out.append(ch)
    return "".join(out)


def check_text(ck, m, x, data_bytes):
    try:
        data = data_bytes.decode("utf-8")
    except UnicodeDecodeError as e:
        ck.ok(False, "text: not valid UTF-8: %s" % e)
        return
    for n, line in enumerate(data.split("\n"), 1):
        ck.ok(len(line) <= TEXT_WIDTH, "text line %d is %d columns: %r" % (n, len(line), line))
        ck.ok(not any(ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F for ch in line),
              "text line %d has a control character: %r" % (n, line))
    if x["flagged_cells"] == 0:
        ck.ok("all numbers clean: no cell carries a data-quality flag" in data,
              "text: the clean-flags sentence is missing")
    else:
        flat = " ".join(data.split())
        ck.ok("%d of %d cells" % (x["flagged_cells"], x["cells"]) in flat,
              "text: flag summary '%d of %d cells' missing" % (x["flagged_cells"], x["cells"]))
        for name, n in x["flags_summary"].items():
            if n:
                ck.ok("%s %d" % (name, n) in flat, "text: flag summary lacks '%s %d'" % (name, n))
    any_est = any(ev["estimate"] for r in x["regions"] for ev in r["events"]) or \
        any(ev["estimate"] for th in x["threads"] for ev in th) or \
        any(ev["process_estimate"] or ev["threads_estimate"] for rk in x["ranks"] for ev in rk["events"])
    ck.ok((re.search(r"[0-9kMGTPE]~", data) is not None) == any_est,
          "text: estimate marker '~' %s" % ("missing" if any_est else "present without estimates"))
    if any_est:
        ck.ok("estimate:" in data, "text: the estimate footnote is missing")
    if any(ev["total"] is None for r in x["regions"] for ev in r["events"]
           if not r["timer_only"]):
        ck.ok("n/a" in data, "text: 'n/a' missing for a region without estimate")
    if any(ev["untrusted"] and ev["total"] is not None for r in x["regions"] for ev in r["events"]):
        ck.ok(re.search(r"[0-9kMGTPE]~?!", data) is not None, "text: untrusted marker '!' missing")
    for reg in x["regions"]:
        shown = text_clean(reg["name"])[:15]  # deep or long names are cut
        ck.ok(shown in data, "text: region name %r not shown (as %r)" % (reg["name"], shown))
        # a name too long for the region table keeps its start and its end
        name = text_clean(reg["name"])
        if 40 < len(name) < 1000 and "\n" not in reg["name"] and reg["depth"] < 3:
            room = 36 - 2 * reg["depth"] - 1
            want = name[:room - room // 2] + "\u2026" + name[len(name) - room // 2:]
            ck.ok(want in data, "text: long name %r not cut in the middle as %r" % (name, want))
    if m["N"]:
        ck.ok(m["unseen"] in " ".join(data.split()), "text: the unseen-work label is missing")
    if m["fallback"]:
        ck.ok(" ".join(m["fallback"].split()) in " ".join(data.split()), "text: fallback sentence missing")
    if m["cpu"]:
        ck.ok(" ".join(m["cpu"].split()) in " ".join(data.split()), "text: cpu missing")
    if len(m["messages"]) > 20:
        ck.ok("... %d more" % (len(m["messages"]) - 20) in data, "text: '... N more' missing")
    ck.ok("\x1b" not in data, "text: raw escape character in output")
    lines = data.split("\n")
    for name, cells in x["flags_where"].items():
        if cells:
            ck.ok(any(line.startswith("  " + text_clean(name.encode())[:16]) for line in lines),
                  "text: no 'where' line for flag %s" % name)
    if m["R"]:
        rows = section(lines, "Time per region")
        ck.ok(len(rows) >= m["R"] + 1, "text: time table has %d lines" % len(rows))
        for line, reg in zip(rows[1:], x["regions"]):
            bt, ms = reg["by_thread"], reg["measuring"]
            got = fields(line, 25, [12, 12])
            want = [fmt_time_m(bt["wall_ns"]["total"], reg["time_est"], reg["time_na"] > 0),
                    fmt_time_m(bt["exclusive_ns"]["total"], ms["exclusive_estimate"],
                               ms["exclusive_untrusted"])]
            ck.ok(got == want, "text: time row %r, expected %r" % (got, want))
        rows = [line for line in section(lines, "Regions: ")[1:] if line[:36].strip()]
        for line, reg in zip(rows, x["regions"]):  # (continuation lines of flags left out)
            got = fields(line, 36, [11, 12, 12])
            wall = reg["wall_ns"]
            want = [fmt_count(reg["visits"]),
                    fmt_time_m(wall["total"], reg["time_est"], reg["time_na"] > 0),
                    fmt_time_m(wall["max"], reg["time_est"], reg["time_na"] > 0)
                    if wall["max"] is not None else "-"]
            ck.ok(got == want, "text: region row %r, expected %r" % (got, want))
    check_text_measuring(ck, m, x, data)
    check_text_ranks(ck, m, x, data)
    check_text_topdown(ck, m, x, data)


def check_text_measuring(ck, m, x, data):
    """Files since the throttle: the throttle and perfmark's reads in the
    header, timer-only and throttled rows in the event tables, the notes."""
    flat = " ".join(data.split())
    run = x["run_reads"]
    ck.ok(("perfmark's reads" in data) == m["has_read_cost"],
          "text: 'perfmark's reads' %s" % ("missing" if m["has_read_cost"] else
                                           "in a file that records no read cost"))
    if m["has_read_cost"] and run["ns"] is not None:
        want = "perfmark's reads: ~%s, %s of the thread time (%s reads at ~%s" % (
            fmt_time(run["ns"]), "%.1f %%" % (100 * run["share"]) if run["share"] is not None
            else "n/a", fmt_count(run["reads"]), fmt_time(run["cost_ns_min"]))
        if fmt_time(run["cost_ns_max"]) != fmt_time(run["cost_ns_min"]):
            want += " to ~%s" % fmt_time(run["cost_ns_max"])
        ck.ok(want in flat, "text: %r missing" % want)
    elif m["has_read_cost"]:
        ck.ok("perfmark's reads: none" in flat or "perfmark's reads: their cost was not "
              "measured" in flat, "text: a file without a read cost not said so")
    ck.ok(("throttle  " + m["throttle"]) in data if m["throttle"] else
          "\nthrottle  " not in data, "text: the throttle line")
    lines = data.split("\n")
    for e, ev in enumerate(m["events"] if m["measuring"] else []):
        head = [i for i, line in enumerate(lines) if line.startswith("Event " + txt(ev["name"]))]
        if not ck.ok(len(head) == 1, "text: event table %r" % ev["name"]):
            continue
        for line, reg in zip(lines[head[0] + 2:], x["regions"]):
            total = fields(line, 25, [12])[0]
            if reg["timer_only"]:
                ck.ok(total == "timer only" and "\u2014" in line,
                      "text: timer-only row %r" % line)
            elif reg["measuring"]["throttled"] and reg["events"][e]["total"] is not None:
                ck.ok(total.endswith("*"), "text: throttled row %r lacks *" % line)
            else:
                ck.ok("*" not in line and "timer only" not in line, "text: row %r" % line)
    for reg in x["regions"]:
        thr = reg["measuring"]["throttled"]
        if thr:
            span = "%d" % thr["from_min"] if thr["from_min"] == thr["from_max"] else \
                "%d-%d" % (thr["from_min"], thr["from_max"])
            ck.ok("(from visit %s)" % span in flat, "text: THROTTLED from visit %s not said" % span)
    if any(r["time_est"] for r in x["regions"]):
        ck.ok("on a time: an estimate from sampled visits" in flat, "text: the time ~ note")
    if any(r["timer_only"] for r in x["regions"]) and m["E"]:
        ck.ok("timer only no counter was read" in flat, "text: the timer-only note")


def fmt_prec(a):
    return 2 if a < 9.995 else 1 if a < 99.95 else 0


def thousands(v, top):
    """v divided by 1000 (at most `top` times) until it shows in 3 digits:
    (magnitude, value, times divided), step by step as the C code does."""
    a, i = abs(v), 0
    while a >= 999.5 and i < top:
        a /= 1000
        v /= 1000
        i += 1
    return a, v, i


def fmt_count(v):
    """The text report's counts: 3 significant digits and k, M, G, ..."""
    if abs(v) < 999.5:
        return "%.0f" % v
    a, v, i = thousands(v, 6)
    return "%.*f%s" % (fmt_prec(a), v, ["", "k", "M", "G", "T", "P", "E"][i])


def fmt_time(ns):
    if abs(ns) < 999.5:
        return "%.0f ns" % ns
    a, ns, i = thousands(ns, 3)
    return "%.*f %s" % (0 if a >= 1000 else fmt_prec(a), ns, ["ns", "\u00b5s", "ms", "s"][i])


def fmt_pct(share):
    return "n/a" if share is None else "%.1f%%" % (share * 100.0)


def fmt_time_m(ns, est=False, bad=False):
    """A time with its marks: ~ extrapolated from sampled visits, ! some
    visiting threads without a time; n/a without any."""
    if ns is None:
        return "n/a"
    return fmt_time(ns) + ("~" if est else "") + ("!" if bad else "")


def fmt_spread(st):
    """min, mean, max per rank as times, imbalance, max@rank: as the text shows them."""
    times = [fmt_time(st[k]) + ("~" if st.get("estimate") else "") if st["max"] is not None
             else "-" for k in ("min", "mean", "max")]
    imb = "-" if st["imbalance"] is None else "%.*f" % (fmt_prec(st["imbalance"]), st["imbalance"])
    return times + [imb, "-" if st["max_rank"] is None else str(st["max_rank"])]


def fields(line, start, widths):
    """Fixed-width cells of a table line (user names are cleaned, one column
    per character, so character offsets are columns)."""
    out = []
    for w in widths:
        out.append(line[start:start + w].strip())
        start += w
    return out


def section(lines, title):
    """The table lines of a section: from its column header to the next blank
    line ([] when the section is not there)."""
    starts = ("function ", "region ", "    rank ", "min ", "no rank")
    for i, line in enumerate(lines):
        if line.startswith(title):
            k = i
            while k < len(lines) and lines[k] and not lines[k].startswith(starts):
                k += 1
            end = k
            while end < len(lines) and lines[end] != "":
                end += 1
            return lines[k:end]
    return []


def check_text_ranks(ck, m, x, data):
    xr = x["xr"]
    lines = data.split("\n")
    titles = ["MPI functions across ranks", "MPI time share per rank", "Regions across ranks"]
    if not xr["multi"]:
        for t in titles:
            ck.ok(t not in data, "text: '%s' in a single-rank report" % t)
        return
    for t in titles[:2]:
        ck.ok((t in data) == bool(xr["functions"]), "text: section '%s' %s" %
              (t, "missing" if xr["functions"] else "without MPI functions"))
    if xr["functions"]:
        rows = section(lines, titles[0])[1:-1]  # header, last: the "unknown =" note
        ck.ok(len(rows) == len(xr["functions"]), "text: %d MPI function rows, expected %d" %
              (len(rows), len(xr["functions"])))
        for line, f in zip(rows, xr["functions"]):
            want = [text_clean(f["raw_name"]), fmt_count(f["calls"]["total"]),
                    fmt_count(f["bytes"]["total"]), fmt_count(f["bytes_unknown"]["total"]),
                    fmt_time_m(f["wall_ns"]["total"], f["wall_ns"]["estimate"],
                               f["wall_ns"]["untrusted"])] + fmt_spread(f["wall_ns"])
            got = fields(line, 0, [25, 8, 8, 8, 9, 9, 9, 9, 6, 9])
            ck.ok(got == want, "text: MPI function row %r, expected %r" % (got, want))
        rows = section(lines, titles[1])
        st, share = xr["share_stat"], xr["share"]
        if len(share) <= SHARE_RANKS:
            for line, s in zip(rows[1:], share):
                est = "~" if s["estimate"] else ""
                want = [str(s["rank"]), fmt_time(s["mpi_ns"]) + est, fmt_time(s["total_ns"]),
                        fmt_pct(s["share"]) + (est if s["share"] is not None else "")]
                got = fields(line, 0, [8, 12, 12, 8])
                ck.ok(got == want, "text: MPI share row %r, expected %r" % (got, want))
            rows = rows[1 + len(share):]
        summary = "min %s (rank %s)   mean %s   max %s (rank %s)" % (
            fmt_pct(st["min"]), st["min_rank"], fmt_pct(st["mean"]), fmt_pct(st["max"]),
            st["max_rank"])
        ck.ok(rows and rows[0].startswith(summary), "text: MPI share summary %r, expected %r" %
              (rows[:1], summary))
        na = sum(1 for s in share if s["share"] is None)
        ck.ok(rows and (("n/a: %d rank" % na) in rows[0]) == (na > 0),
              "text: ranks without time not said: %r" % rows[:1])
        if len(share) > SHARE_RANKS:
            top = sorted((s for s in share if s["share"] is not None),
                         key=lambda s: (-s["share"], s["rank"]))[:3]
            want = "highest:" + ",".join(" rank %d %s" % (s["rank"], fmt_pct(s["share"]))
                                         for s in top)
            ck.ok(rows[1:2] == [want], "text: %r, expected %r" % (rows[1:2], want))
    rows = section(lines, titles[2])
    user = [q for q in xr["regions"] if q["kind"] != "mpi"]
    ck.ok(len(rows) - 1 == max(len(user), 1), "text: regions across ranks rows %r" % rows)
    for line, q in zip(rows[1:], user):
        want = [str(q["ranks_entered"]), fmt_count(q["visits"]["total"])] + fmt_spread(q["wall_ns"])
        got = fields(line, 36, [6, 10, 10, 10, 10, 6, 9])
        ck.ok(got == want, "text: regions across ranks row %r: %r, expected %r" % (line, got, want))


# -------------------------------------------------------------------- run

def run(prefix, path, fmt, out=None, env=None):
    cmd = prefix + [path, "--format", fmt] + (["-o", out] if out else [])
    try:
        return subprocess.run(cmd, capture_output=True, timeout=RUN_TIMEOUT, env=env)
    except subprocess.TimeoutExpired:
        return None


def describe(r):
    if r is None:
        return "timed out"
    return "exit %d, stderr %r" % (r.returncode, r.stderr[-400:])


def crashed(r):
    return r is None or r.returncode < 0 or r.returncode >= 128


def one_line(stderr):
    return stderr.endswith(b"\n") and stderr.count(b"\n") == 1 and len(stderr.strip()) > 0


def check_good(ck, prefix, tmp, variant):
    check_file(ck, prefix, os.path.join(tmp, variant + ".h5"), variant)


def check_file(ck, prefix, path, variant):
    """Every format of the report of `path` against h5py; returns the
    expected numbers (for callers that check more)."""
    ck.scope = variant + ": "
    m = load(path)
    x = expected(m, path)
    check_topdown_formulas(ck, m, x)
    outs = {}
    for fmt in ("json", "csv", "text"):
        r = run(prefix, path, fmt)
        if not ck.ok(r is not None and r.returncode == 0 and r.stderr == b"",
                     "%s --format %s: %s" % (variant, fmt, describe(r))):
            continue
        outs[fmt] = r.stdout
    if "json" in outs:
        check_json(ck, m, x, path, outs["json"].decode("utf-8"))
        o = os.path.splitext(path)[0] + ".out.json"
        r = run(prefix, path, "json", out=o)
        ck.ok(r is not None and r.returncode == 0 and open(o, "rb").read() == outs["json"],
              "%s: -o output differs from stdout (%s)" % (variant, describe(r)))
    if "csv" in outs:
        check_csv(ck, m, x, outs["csv"].decode("utf-8"))
    if "text" in outs:
        check_text(ck, m, x, outs["text"])
    ck.scope = ""
    return x


def check_blocks(ck, prefix, tmp, variant):
    """One thread row per block: the new arrays are read and joined a block
    at a time like the others, with the same numbers."""
    path = os.path.join(tmp, variant + ".h5")
    ck.scope = variant + " (one thread per block): "
    m = load(path)
    x = expected(m, path)
    env = dict(os.environ, PERFMARK_REPORT_BLOCK="1")
    for fmt in ("json", "csv"):
        r = run(prefix, path, fmt, env=env)
        if ck.ok(r is not None and r.returncode == 0 and r.stderr == b"",
                 "--format %s: %s" % (fmt, describe(r))):
            (check_json(ck, m, x, path, r.stdout.decode("utf-8")) if fmt == "json"
             else check_csv(ck, m, x, r.stdout.decode("utf-8")))
    ck.scope = ""


def run_opts(prefix, path, fmt, opts):
    try:
        return subprocess.run(prefix + [path, "--format", fmt] + opts, capture_output=True,
                              timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        return None


def check_options(ck, prefix, tmp):
    """--region, --top, --metric and --by against a selection made here."""
    for variant in ("ranks", "ranks_shuffled", "omp", "full", "throttle"):
        path = os.path.join(tmp, variant + ".h5")
        ck.scope = variant + " options: "
        m = load(path)
        x = expected(m, path)
        regs = x["regions"]
        total = {"time": lambda g: g["wall_ns"]["total"] or 0,
                 "excl": lambda g: g["by_thread"]["exclusive_ns"]["total"] or 0,
                 "visits": lambda g: g["visits"]}
        for e, key in enumerate(x["keys"]):
            total[key] = lambda g, e=e: g["events"][e]["total"] or 0
        name = txt(m["regions"][x["order"][1]]["name"])

        def subtree(match):
            out, i = [], 0
            while i < len(regs):
                if match(regs[i]):
                    d = regs[i]["depth"]
                    out.append(i)
                    i += 1
                    while i < len(regs) and regs[i]["depth"] > d:
                        out.append(i)
                        i += 1
                else:
                    i += 1
            return out

        cases = [(["--region", name], subtree(lambda g: g["name"] == name), "time"),
                 (["--region", regs[1]["path"]], subtree(lambda g: g["path"] == regs[1]["path"]),
                  "time")]
        for metric in ["time", "excl", "visits"] + x["keys"][:1]:
            order = sorted(range(len(regs)), key=lambda i: (-total[metric](regs[i]), i))
            cases.append((["--top", "3", "--metric", metric], order[:3], metric))
        for opts, want, metric in cases:
            r = run_opts(prefix, path, "json", opts)
            if not ck.ok(r is not None and r.returncode == 0, "%s: %s" % (opts, describe(r))):
                continue
            sel = strict_json(r.stdout.decode("utf-8"))["selection"]
            ck.ok(sel["regions"] == want, "%s: selection %r, expected %r" % (opts, sel["regions"], want))
            ck.ok(sel["metric"] == metric, "%s: metric %r" % (opts, sel["metric"]))
            r = run_opts(prefix, path, "csv", opts)
            if ck.ok(r is not None and r.returncode == 0, "csv %s: %s" % (opts, describe(r))):
                rows = list(csv.reader(io.StringIO(r.stdout.decode("utf-8"), newline="")))[1:]
                idx = list(dict.fromkeys(int(row[0]) for row in rows))
                ck.ok(idx == want, "csv %s: regions %r, expected %r" % (opts, idx, want))
        for by in ("rank", "thread"):
            r = run_opts(prefix, path, "text", ["--by", by, "--metric", "time"])
            if not ck.ok(r is not None and r.returncode == 0, "--by %s: %s" % (by, describe(r))):
                continue
            lines = r.stdout.decode("utf-8").split("\n")
            ck.ok(all(len(line) <= TEXT_WIDTH for line in lines), "--by %s: line too long" % by)
            rows = section(lines, "inclusive time per %s" % by)[1:]
            want = []
            TT, TK = m["time"], m["time_kind"]
            for g in regs:
                rr = g["row"]
                # a cell is shown when it has a time (sampled ones marked ~)
                if by == "thread":
                    want += [(th["rank"], th["thread"], TT[t][rr], TK[t][rr] == "est")
                             for t, th in enumerate(m["threads"])
                             if TT[t][rr] is not None and (m["region/visits"][t][rr] > 0 or
                                                           TT[t][rr])]
                else:
                    for k in x["xr"]["ranks"]:
                        ts = [t for t in range(m["T"]) if m["threads"][t]["rank"] == k and
                              (m["region/visits"][t][rr] > 0 or TT[t][rr] != 0)]
                        if any(TT[t][rr] is not None for t in ts):
                            want.append((k, None, sum(TT[t][rr] or 0 for t in ts),
                                         any(TK[t][rr] == "est" for t in ts)))
            got = [fields(line, 36, [7, 7, 14]) for line in rows[:len(want)]]
            exp = [[str(k), "" if th is None else str(th), fmt_time(v) + ("~" if est else "")]
                   for k, th, v, est in want]
            foot = next((i for i, line in enumerate(rows) if line.startswith("share = ")), -1)
            ck.ok(foot == len(want) and got == exp,
                  "--by %s: rows %r, expected %r" % (by, got[:5], exp[:5]))
        if variant == "full":  # markers: thread 1's "solve" ran its hw group half the time
            r = run_opts(prefix, path, "text", ["--by", "thread", "--metric", "instructions"])
            if ck.ok(r is not None and r.returncode == 0, "--by thread --metric: %s" % describe(r)):
                rows = [l for l in r.stdout.decode("utf-8").split("\n")
                        if l.startswith("  solve ") and l.split()[1:3] == ["0", "1"]]
                ck.ok(len(rows) == 1 and rows[0].split()[3].endswith("~"),
                      "--by thread: the multiplexed cell is not marked ~: %r" % rows)
        for opts, needle in ((["--metric", "no-such-event"], "no metric 'no-such-event'"),
                             (["--region", "no such region"], "no region named")):
            r = run_opts(prefix, path, "text", opts)
            ck.ok(r is not None and r.returncode != 0 and r.stdout == b"" and one_line(r.stderr)
                  and needle in r.stderr.decode("utf-8", "replace"),
                  "%s: %s" % (opts, describe(r)))
    ck.scope = ""


def check_bad(ck, prefix, path, needles):
    for fmt in ("text", "json"):
        r = run(prefix, path, fmt)
        where = "%s --format %s" % (os.path.basename(path), fmt)
        if not ck.ok(not crashed(r), "%s: crashed or hung (%s)" % (where, describe(r))):
            continue
        ck.ok(r.returncode != 0, "%s: exit status 0 for a bad file" % where)
        ck.ok(r.stdout == b"", "%s: wrote %d bytes of report for a bad file" % (where, len(r.stdout)))
        ck.ok(one_line(r.stderr), "%s: message is not exactly one line: %r" % (where, r.stderr))
        msg = r.stderr.decode("utf-8", "replace")
        for needle in needles + [os.path.basename(path)]:
            ck.ok(needle in msg, "%s: message %r lacks %r" % (where, msg.strip(), needle))


def check_fuzz(ck, prefix, tmp, count, seed):
    """Damaged copies of a valid file: a report or a one-line error, never a crash."""
    src = open(os.path.join(tmp, "full.h5"), "rb").read()
    rnd = random.Random(seed)
    env = dict(os.environ, PERFMARK_REPORT_TIMEOUT="20")
    for i in range(count):
        b = bytearray(src)
        if i % 3 == 0:
            b = b[:rnd.randrange(len(b))]
        else:
            for _ in range(rnd.randint(1, 8)):
                b[rnd.randrange(len(b))] = rnd.randrange(256)
        path = os.path.join(tmp, "fuzz%03d.h5" % i)
        with open(path, "wb") as f:
            f.write(b)
        r = run(prefix, path, "json", env=env)
        if not ck.ok(not crashed(r), "fuzz %s: crashed or hung (%s)" % (path, describe(r))):
            continue
        if r.returncode == 0:
            try:
                strict_json(r.stdout.decode("utf-8"))
            except (ValueError, UnicodeDecodeError) as e:
                ck.ok(False, "fuzz %s: exit 0 but invalid JSON: %s" % (path, e))
        else:
            ck.ok(one_line(r.stderr) and r.stdout == b"",
                  "fuzz %s: failure is not one line: %r" % (path, r.stderr[:300]))
        if ck.errors and ck.errors[-1].startswith("fuzz " + path):
            continue
        os.unlink(path)


def check_robustness(ck, prefix, tmp):
    """Inputs that are not one good perfmark file: an empty file, a directory,
    a file cut inside the superblock, and a set of per-rank fallback files
    given together (each is reported alone, as its rank's share of the job)."""
    empty = os.path.join(tmp, "zero-bytes.h5")
    open(empty, "wb").close()
    check_bad(ck, prefix, empty, ["not a perfmark file"])
    sub = os.path.join(tmp, "a-directory.h5")
    os.makedirs(sub, exist_ok=True)
    check_bad(ck, prefix, sub, ["directory"])
    os.rmdir(sub)
    cut = os.path.join(tmp, "cut-superblock.h5")
    with open(cut, "wb") as f:
        f.write(open(os.path.join(tmp, "full.h5"), "rb").read()[:40])
    check_bad(ck, prefix, cut, [])
    ranks = []
    for r in range(2):
        p = os.path.join(tmp, "job.rank%d.h5" % r)
        make_fixture.write(p, "rankfile")
        ranks.append(p)
    # a job's per-rank files in one command: each reported in turn
    # (tests/report/check_many.py checks every format)
    r = subprocess.run(prefix + ranks, capture_output=True, timeout=RUN_TIMEOUT)
    ck.ok(r.returncode == 0 and r.stderr == b"" and
          all(("perfmark report: " + p).encode() in r.stdout for p in ranks),
          "per-rank set: want each file reported in turn: %s" % describe(r))
    for p in ranks:
        r = run(prefix, p, "text")
        ck.ok(r is not None and r.returncode == 0 and b"rank of the job's 4" in r.stdout,
              "%s alone: not reported as one rank of the job (%s)" % (p, describe(r)))
        os.unlink(p)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--keep", metavar="DIR", help="write fixtures into DIR and keep them")
    ap.add_argument("--fuzz", type=int, default=40, metavar="N",
                    help="damaged copies of a valid file to try (default 40, 0 = none)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("command", nargs=argparse.REMAINDER,
                    help="command prefix taking FILE --format F [-o OUT]")
    args = ap.parse_args()
    prefix = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not prefix:
        ap.error("give the command prefix, e.g. build/bin/perfmark report")

    tmp = args.keep or tempfile.mkdtemp(prefix="pm-report-check-")
    os.makedirs(tmp, exist_ok=True)
    for variant in make_fixture.VARIANTS:
        make_fixture.write(os.path.join(tmp, variant + ".h5"), variant)

    ck = Checker()
    for variant in GOOD_VARIANTS:
        check_good(ck, prefix, tmp, variant)
    check_blocks(ck, prefix, tmp, "throttle")
    check_options(ck, prefix, tmp)
    for variant, needles in BAD_VARIANTS.items():
        check_bad(ck, prefix, os.path.join(tmp, variant + ".h5"), needles)
    check_bad(ck, prefix, os.path.join(tmp, "does-not-exist.h5"), [])
    check_fuzz(ck, prefix, tmp, args.fuzz, args.seed)
    check_robustness(ck, prefix, tmp)

    if not args.keep:
        for name in os.listdir(tmp):
            os.unlink(os.path.join(tmp, name))
        os.rmdir(tmp)
    if ck.errors:
        print("check_report: %d of %d checks FAILED:" % (len(ck.errors), ck.checks))
        for e in ck.errors[:200]:
            print("  " + e)
        if len(ck.errors) > 200:
            print("  ... %d more" % (len(ck.errors) - 200))
        return 1
    print("check_report: all %d checks passed (%s)" % (ck.checks, " ".join(prefix)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
