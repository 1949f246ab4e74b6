#!/usr/bin/python3
"""Write a synthetic perfmark HDF5 file (schema 1, docs/hdf5-schema.md).

usage: /usr/bin/python3 make_fixture.py OUT.h5 [VARIANT]

Variants:
  full       (default) nested regions, 3 threads with different visits,
             one cell each of MULTIPLEXED (running = enabled/2), NOT_COUNTED,
             LOST_GENERATION, MIGRATED, UNBALANCED; hostile region names
             (comma, quote, newline, =cmd, +, -, @, UTF-8, control
             characters, invalid UTF-8, a long name); 25 messages; /rank row.
  clean      no flags, running = enabled everywhere, /rank and /messages
             with zero rows, empty fallback.
  empty      one thread, no regions (zero-size [T,R] arrays).
  newer      `full` with schema_version = 2.
  foreign    an HDF5 file without the schema_version attribute.
  truncated  the first half of the bytes of a `full` file.
  garbage    not an HDF5 file at all.
  badshape   `full` with /region/counts one event too wide.
  badtree    `full` with a region whose parent comes after it.
  extras     reader robustness: two events with the same name, fixed-length
             string attributes, a flag bit named only by its /region/flags
             attribute and one named nowhere, two /rank rows (ranks 0 and 1),
             counts in a cell without a completed visit, no /messages dataset.
  ranks      a job file of 3 ranks with 1, 2 and 3 threads: user and MPI
             regions (MPI_Send under two paths, a user region named MPI_Send,
             an MPI call inside another, MPI outside any user region), a region
             only ranks 0 and 2 enter (rank 1 has counts there without a
             visit), bytes and bytes_unknown, ties for the max, a rank whose
             only cell has no estimate, a region where no rank has one, a
             region of zero time, MULTIPLEXED, NOT_COUNTED and
             LOST_GENERATION cells, two threads of one rank in MPI at once.
  ranks_shuffled  `ranks` with its thread rows out of rank order (ranks 2,
             0, 2, 1, 2, 1): the report must not rely on the order perfmark
             writes them in.
  manyranks  a job file of 20 ranks of one thread each (the text lists the 3
             highest MPI shares instead of every rank); one rank has no time.
  rankfile   a per-rank file (root rank = 2, ranks = 4) holding one rank.
  omp        a job file of 2 ranks of 2 threads with OpenMP regions: waits
             (omp barrier, omp taskwait) below a parallel region and a user
             region, a taskwait inside a barrier (counted once above it), a
             user region named "omp barrier" (not a wait), a child longer
             than its parent (exclusive time clamps at 0), equal large counts
             (stddev 0), a region one thread never enters.
  topdown_icl   TopDown by PERF_METRICS, level 1 (cpu_model icl): /events =
             slots + 4 topdown-* metrics (kernel group 0) + page-faults; a
             region whose every cell is SHORT, one with one SHORT cell, one
             with a MULTIPLEXED cell, one with LOST_GENERATION and
             NOT_COUNTED cells, one never entered; no /thread/flags.
  topdown_spr   the same at level 2 (cpu_model spr), plus a region whose heavy
             ops exceed retiring (light ops clamp at 0), a multiplexed thread
             and one LOST_GENERATION thread in /thread.
  topdown_skl   TopDown by the Skylake formulas (cpu_model skx), the events
             named as the skx table gives them, in two kernel groups (the
             multiplexed cell has them scaled differently); decoys that must
             not match (RECOVERY_CYCLES_ANY, RECOVERY_CYCLES with c=1) and
             UOPS_ISSUED:ANY under another spelling (found by pfm_name); a
             region where bad speculation and backend clamp at 0.
  topdown_zen4  TopDown by AMD's pipeline utilization (cpu_model
             amd64_fam19h_zen4), SMT contention included; cells account for
             every slot (perf's ratios agree) except a region where fewer ops
             were dispatched than retired (bad speculation clamps at 0).
  topdown_zen5  the same method on Zen 5 (cpu_model amd64_fam1ah_zen5, raw
             perf_raw::r<config> events): 8 slots per cycle, from the model row.
  topdown_zen4_l2  Zen 4 at level 2: the six PipelineL2 events in a second
             kernel group (the cmask=6 frontend event by its libpfm4 name
             with c=6, beside the plain one); the skew region's children
             above their parents (clamped).
  topdown_zen5_l2  the same on Zen 5 (raw, cmask 8).
  topdown_zen4_nol2  Zen 4 level 2 without ex_no_retire.load_not_complete:
             level 1 only, said why.
  topdown_arm   Arm slot accounting (cpu_model arm_v1, raw events): 8 slots,
             4 cycles per BR_MIS_PRED moved from frontend to bad speculation; a
             region with more ops retired than speculated (retiring clamps).
  topdown_atom  Intel E-core TOPDOWN_*.ALL_P (cpu_model srf, raw events), 6
             slots per cycle; the four events account every slot.
  topdown_missing  perf_metrics without topdown-fe-bound: no breakdown.
  topdown_nol2  spr without topdown-mem-bound: level 1 only, said why.
  branch_icl    full's cells with /events the icl branch group (instructions,
             branches, mispredicted): the report's derived branch metrics.
  topdown_adl   level 2 on a hybrid CPU (cpu_model adl_glc): thread t's TopDown
             group ran on P-cores 1, 3/4, 1/2 of its time (running < enabled,
             MULTIPLEXED); the report gives the P-core share.
  throttle   a job file of 2 ranks (2 and 1 threads) as the throttle writes it
             (throttle attribute, /region/reads, timer_visits, timed_visits,
             throttled_from, /thread/reads, read_cost_ns, all ten flags named):
             MPI polls TIMER_ONLY with sampled time (timed < visits) on two
             threads and every call timed on the third, a poll cell with no
             timed visit (time unknown) beside one with time, a poll region no
             thread has a time for, a short region THROTTLED from different
             visits on two threads (OVERHEAD), an empty region (OVERHEAD),
             read costs that differ by rank.
  throttle_old  the same cells as an older perfmark wrote them: none of the
             new datasets, no throttle attribute, the seven older flag names
             and bits only; the report must treat it like any older file.
  throttle_none  like `throttle` with -e none: no events, no read cost, no
             reads, no timer visits, no flags; poll times still sampled.
  badthrottle  `throttle` with /region/timed_visits one region too wide.

Values are chosen here; tests/report/check_report.py never relies on them: it
recomputes everything it expects from the file with h5py.
Needs h5py: run with /usr/bin/python3 on Debian.
"""
import os
import sys
import tempfile

import h5py
import numpy as np

FLAGS = {"MULTIPLEXED": 0x01, "NOT_COUNTED": 0x02, "LOST_GENERATION": 0x04,
         "MIGRATED": 0x08, "UNBALANCED": 0x10, "SHORT": 0x20, "PARTIAL": 0x40}

STR = h5py.string_dtype("utf-8")

EVENT_DT = np.dtype([("name", STR), ("pfm_name", STR), ("group", "<i4"),
                     ("type", "<u4"), ("config", "<u8"), ("config1", "<u8"),
                     ("config2", "<u8"), ("exclude_user", "u1"),
                     ("exclude_kernel", "u1")])
REGION_DT = np.dtype([("name", STR), ("parent", "<i4"), ("depth", "<i4"),
                      ("kind", STR), ("path", STR)])
THREAD_DT = np.dtype([("rank", "<i4"), ("thread", "<i4"), ("pid", "<i8"),
                      ("tid", "<i8"), ("host", STR), ("cpu_first", "<i4"),
                      ("cpu_last", "<i4"), ("exited", "u1"),
                      ("open_at_end", "<i4")])

EVENTS = [  # name, pfm_name, group, type, config
    ("page-faults", "perf::PERF_COUNT_SW_PAGE_FAULTS:u", 0, 1, 2),
    ("cycles", "perf::PERF_COUNT_HW_CPU_CYCLES:u", 1, 0, 0),
    ("instructions", "perf::PERF_COUNT_HW_INSTRUCTIONS:u", 1, 0, 1),
]

LONG = "a_really_long_region_name_that_will_not_fit_in_the_name_column_" * 2
# (name, parent row). Row order is first sight: not the tree (DFS) order.
REGIONS = [
    ("main", -1),                       # 0
    ("solve", 0),                       # 1
    ("io", 0),                          # 2
    ('halo, "x"\nnext', 1),             # 3 comma, quote, newline
    ("=cmd", -1),                       # 4 spreadsheet formula
    ("Üñï", 2),                         # 5 UTF-8
    ("a/b", 4),                         # 6 slash inside a name
    (LONG + "\x1b[31m", 1),             # 7 long, with an escape sequence
    (b"bad\xff\xe2\x82utf8", 5),        # 8 invalid UTF-8 (bad byte, cut sequence), depth 3
    ("+plus", 6),                       # 9
    ("-minus", 6),                      # 10
    ("@at", 0),                         # 11
    ("", 4),                            # 12 empty name
]

T = 3
CELL_MUX = (1, 1)       # thread 1, "solve"
CELL_NOTCOUNTED = (2, 2)  # thread 2, "io"
CELL_LOST = (0, 3)      # thread 0, halo
CELL_MIGRATED = (1, 0)  # thread 1, main
CELL_UNBALANCED = (2, 4)  # thread 2, =cmd


def as_bytes(s):
    return s if isinstance(s, bytes) else s.encode("utf-8")


def region_rows():
    rows = []
    for i, (name, parent) in enumerate(REGIONS):
        depth = 0 if parent < 0 else rows[parent][2] + 1
        path = name if parent < 0 else as_bytes(rows[parent][4]) + b"/" + as_bytes(name)
        rows.append((name, parent, depth, "user", path))
    return rows


def zero_cells(T, R, E, G):
    """visits, wall, counts, enabled, running, flags: all zero."""
    return (np.zeros((T, R), "<u8"), np.zeros((T, R), "<u8"), np.zeros((T, R, E), "<u8"),
            np.zeros((T, R, G), "<u8"), np.zeros((T, R, G), "<u8"), np.zeros((T, R), "<u4"))


def cell_values(variant):
    """visits, wall, counts, enabled, running, flags for every (thread, region)."""
    R, E, G = len(REGIONS), len(EVENTS), 2
    visits, wall, counts, enabled, running, flags = zero_cells(T, R, E, G)
    for t in range(T):
        for r in range(R):
            if (t + 2 * r) % 5 == 4:
                continue  # this thread never visited this region
            v = (t + 1) * (r + 2)
            visits[t, r] = v
            wall[t, r] = v * (1500 + 137 * r + 11 * t) * 1000 + 7 * t
            for e in range(E):
                counts[t, r, e] = v * (3 + e * 1000 + r * 17 + t * 5) * (10 ** e)
            enabled[t, r, :] = wall[t, r]
            running[t, r, :] = wall[t, r]
    if variant == "clean":
        return visits, wall, counts, enabled, running, flags
    for t, r in (CELL_MUX, CELL_NOTCOUNTED, CELL_LOST, CELL_MIGRATED, CELL_UNBALANCED):
        assert visits[t, r] > 0, (t, r)
    t, r = CELL_MUX
    running[t, r, 1] = enabled[t, r, 1] // 2
    counts[t, r, 1:] //= 2
    flags[t, r] |= FLAGS["MULTIPLEXED"]
    t, r = CELL_NOTCOUNTED
    for other in range(T):  # its only visitor: the region has no estimate at all
        if other != t:
            visits[other, r] = wall[other, r] = 0
            counts[other, r, :] = enabled[other, r, :] = running[other, r, :] = 0
    running[t, r, 1] = 0
    counts[t, r, 1:] = 0
    flags[t, r] |= FLAGS["NOT_COUNTED"]
    t, r = CELL_LOST
    counts[t, r, :] //= 3
    flags[t, r] |= FLAGS["LOST_GENERATION"]
    flags[CELL_MIGRATED] |= FLAGS["MIGRATED"]
    flags[CELL_UNBALANCED] |= FLAGS["UNBALANCED"]
    return visits, wall, counts, enabled, running, flags


def write_root_attrs(f, variant, schema):
    a = f.attrs
    a.create("schema_version", schema, dtype="<i4")
    a["perfmark_version"] = "0.1.0"
    a["command"] = './app --size 100 "quoted arg"'
    a["host"] = "node-a"
    a.create("pid", 4242, dtype="<i8")
    a["start_time"] = "2024-05-01T12:00:00Z"
    a.create("duration_ns", 2_500_000_123, dtype="<u8")
    a["clock"] = "tsc"
    if variant == "clean":
        a["events_requested"] = "default"
        a["fallback"] = ""
    else:
        a["events_requested"] = "page-faults,cycles,instructions,LLC_MISSES"
        a["fallback"] = ("LLC_MISSES is not supported on this CPU (no such "
                         "event in libpfm4 for the detected PMU); it was dropped "
                         "and the remaining events are measured.")
        a["fallback_cause"] = "not_counted"
        a["cpu"] = "Intel Ice Lake server (Intel family 0x6 model 0x6a stepping 6)"
    a["events_measured"] = ",".join(e[0] for e in EVENTS)
    a["event_group"] = "custom"
    a.create("kernel_groups", 2, dtype="<i4")
    a.create("bind_cpu", -1, dtype="<i4")
    a.create("partial", 0, dtype="u1")


# variant "branch_icl": the same cells, but /events is the icl table's branch
# group (runtime/count/pm_cpu_models.c), so the report derives its metrics
BRANCH_ICL_EVENTS = [
    ("icl::INST_RETIRED:ANY_P", "icl::INST_RETIRED:ANY_P:k=0:u=1:e=0:i=0:c=0:intx=0:intxcp=0",
     0, 4, 0x1c0),
    ("icl::BR_INST_RETIRED:ALL_BRANCHES",
     "icl::BR_INST_RETIRED:ALL_BRANCHES:k=0:u=1:e=0:i=0:c=0:intx=0:intxcp=0", 1, 4, 0xc4),
    ("icl::BR_MISP_RETIRED:ALL_BRANCHES",
     "icl::BR_MISP_RETIRED:ALL_BRANCHES:k=0:u=1:e=0:i=0:c=0:intx=0:intxcp=0", 1, 4, 0xc5),
]


def write_full(path, variant="full", schema=1):
    E, G = len(EVENTS), 2
    events = BRANCH_ICL_EVENTS if variant == "branch_icl" else EVENTS
    with h5py.File(path, "w") as f:
        write_root_attrs(f, variant, schema)
        if variant == "branch_icl":
            f.attrs["events_requested"] = "branch"
            f.attrs["event_group"] = "branch"
            f.attrs["events_measured"] = ",".join(e[0] for e in events)
            f.attrs["cpu_model"] = "icl"
        ev = np.zeros(E, EVENT_DT)
        for i, (name, pfm, group, typ, config) in enumerate(events):
            ev[i] = (name, pfm, group, typ, config, 0, 0, 0, 1)
        f.create_dataset("events", data=ev)

        regions = region_rows()
        if variant == "badtree":
            name, _, depth, kind, p = regions[1]
            regions[1] = (name, 5, depth, kind, p)
        rg = np.zeros(len(regions), REGION_DT)
        for i, row in enumerate(regions):
            rg[i] = row
        f.create_dataset("regions", data=rg)

        th = np.zeros(T, THREAD_DT)
        th[0] = (0, 0, 4242, 4242, "node-a", 0, 0, 0, 0)
        th[1] = (0, 1, 4242, 4243, "node-a", 1, 5, 1, 0)
        th[2] = (0, 2, 4242, 4244, "node-a", 2, 2, 0,
                 0 if variant == "clean" else 1)
        f.create_dataset("threads", data=th)

        visits, wall, counts, enabled, running, flags = cell_values(variant)
        g = f.create_group("region")
        g["visits"] = visits
        g["wall_ns"] = wall
        if variant == "badshape":
            g["counts"] = np.concatenate([counts, counts[:, :, :1]], axis=2)
        else:
            g["counts"] = counts
        g["enabled_ns"] = enabled
        g["running_ns"] = running
        fl = g.create_dataset("flags", data=flags)
        for name, bit in FLAGS.items():
            fl.attrs.create(name, bit, dtype="<u4")

        # whole-thread totals: the top-level regions plus work outside them
        top = [r for r, (_, p) in enumerate(REGIONS) if p < 0]
        tw = wall[:, top].sum(axis=1) + 1_000_000
        tc = counts[:, top, :].sum(axis=1) + 100
        ten = np.repeat(tw[:, None], G, axis=1).astype("<u8")
        trun = ten.copy()
        if variant != "clean":
            trun[1, 1] = ten[1, 1] * 4 // 5   # thread 1's hw group rotated
            tc[1, 1:] = tc[1, 1:] * 4 // 5
        g = f.create_group("thread")
        g["wall_ns"] = tw.astype("<u8")
        g["counts"] = tc.astype("<u8")
        g["enabled_ns"] = ten
        g["running_ns"] = trun

        g = f.create_group("rank")
        if variant == "clean":
            g.create_dataset("counts", shape=(0, E), dtype="<u8")
            g.create_dataset("enabled_ns", shape=(0, G), dtype="<u8")
            g.create_dataset("running_ns", shape=(0, G), dtype="<u8")
        else:
            g["counts"] = (tc.sum(axis=0) + np.array([5000, 7_000_000, 9_000_000]))[None, :].astype("<u8")
            g["enabled_ns"] = np.array([[2_500_000_000, 2_500_000_000]], "<u8")
            g["running_ns"] = np.array([[2_500_000_000, 2_000_000_000]], "<u8")

        if variant == "clean":
            msgs = []
        else:
            msgs = ["perfmark: LLC_MISSES: event not supported, dropped"]
            msgs += ["perfmark: region 'solve' ended twice on thread %d (\x07bell)" % (i % 3)
                     for i in range(23)]
            msgs += ["perfmark: 3 more messages dropped"]
        f.create_dataset("messages", data=np.array(msgs, dtype=object), dtype=STR,
                         shape=(len(msgs),))


def write_empty(path):
    E, G = 1, 1
    with h5py.File(path, "w") as f:
        write_root_attrs(f, "clean", 1)
        f.attrs["events_measured"] = "page-faults"
        f.attrs.create("kernel_groups", G, dtype="<i4")
        ev = np.zeros(E, EVENT_DT)
        ev[0] = ("page-faults", "perf::PERF_COUNT_SW_PAGE_FAULTS:u", 0, 1, 2, 0, 0, 0, 1)
        f.create_dataset("events", data=ev)
        f.create_dataset("regions", shape=(0,), dtype=REGION_DT)
        th = np.zeros(1, THREAD_DT)
        th[0] = (0, 0, 77, 77, "node-b", 3, 3, 0, 0)
        f.create_dataset("threads", data=th)
        g = f.create_group("region")
        for name, shape, dt in (("visits", (1, 0), "<u8"), ("wall_ns", (1, 0), "<u8"),
                                ("counts", (1, 0, E), "<u8"), ("enabled_ns", (1, 0, G), "<u8"),
                                ("running_ns", (1, 0, G), "<u8"), ("flags", (1, 0), "<u4")):
            g.create_dataset(name, shape=shape, dtype=dt)
        g = f.create_group("thread")
        g["wall_ns"] = np.array([123456], "<u8")
        g["counts"] = np.array([[42]], "<u8")
        g["enabled_ns"] = np.array([[123000]], "<u8")
        g["running_ns"] = np.array([[123000]], "<u8")
        g = f.create_group("rank")
        g["counts"] = np.array([[50]], "<u8")
        g["enabled_ns"] = np.array([[130000]], "<u8")
        g["running_ns"] = np.array([[130000]], "<u8")
        f.create_dataset("messages", shape=(0,), dtype=STR)


def write_extras(path):
    E, G, T2, R2 = 2, 1, 2, 2
    with h5py.File(path, "w") as f:
        write_root_attrs(f, "clean", 1)
        f.attrs.create("kernel_groups", G, dtype="<i4")
        f.attrs.create("command", np.array(b"./fixed --len", dtype="S13"))
        f.attrs.create("clock", np.array(b"monotonic", dtype="S16"))
        f.attrs["events_measured"] = "cycles,cycles"
        ev = np.zeros(E, EVENT_DT)
        ev[0] = ("cycles", "perf::CYCLES:u", 0, 0, 0, 0, 0, 0, 1)
        ev[1] = ("cycles", "perf::CYCLES:k", 0, 0, 0, 0, 0, 1, 0)
        f.create_dataset("events", data=ev)
        rg = np.zeros(R2, REGION_DT)
        rg[0] = ("outer", -1, 0, "user", "outer")
        rg[1] = ("inner", 0, 1, "user", "outer/inner")
        f.create_dataset("regions", data=rg)
        th = np.zeros(T2, THREAD_DT)
        th[0] = (0, 0, 10, 10, "node-a", 0, 0, 0, 0)
        th[1] = (1, 0, 20, 20, "node-b", 1, 1, 0, 0)
        f.create_dataset("threads", data=th)
        g = f.create_group("region")
        g["visits"] = np.array([[1, 2], [3, 0]], "<u8")
        g["wall_ns"] = np.array([[5000, 2000], [9000, 0]], "<u8")
        # thread 1 has counts in "inner" without a completed visit: they count
        # in the total, not in the per-thread min/mean/max
        g["counts"] = np.array([[[10, 20], [30, 40]], [[50, 60], [5, 6]]], "<u8")
        g["enabled_ns"] = np.array([[[5000], [2000]], [[9000], [100]]], "<u8")
        g["running_ns"] = np.array([[[2500], [2000]], [[3000], [100]]], "<u8")
        fl = g.create_dataset("flags", data=np.array([[0x81, 0], [0x100, 0]], "<u4"))
        for name, bit in FLAGS.items():
            fl.attrs.create(name, bit, dtype="<u4")
        fl.attrs.create("FUTURE_FLAG", 0x80, dtype="<u4")
        g = f.create_group("thread")
        g["wall_ns"] = np.array([8000, 9500], "<u8")
        g["counts"] = np.array([[15, 25], [55, 66]], "<u8")
        g["enabled_ns"] = np.array([[8000], [9500]], "<u8")
        g["running_ns"] = np.array([[4000], [9500]], "<u8")
        g = f.create_group("rank")
        g["counts"] = np.array([[40, 50], [60, 70]], "<u8")
        g["enabled_ns"] = np.array([[8000], [9500]], "<u8")
        g["running_ns"] = np.array([[8000], [4750]], "<u8")


# ------------------------------------------------------------ several ranks

# (name, parent row, kind) of the `ranks` variant
RANK_REGIONS = [
    ("main", -1, "user"),           # 0
    ("solve", 0, "user"),           # 1
    ("halo", 1, "user"),            # 2
    ("MPI_Send", 2, "mpi"),         # 3 solve/halo/MPI_Send
    ("MPI_Send", 1, "mpi"),         # 4 solve/MPI_Send: the same function
    ("MPI_Allreduce", 1, "mpi"),    # 5
    ("io", 0, "user"),              # 6 entered by ranks 0 and 2 only
    ("MPI_File_open", 6, "mpi"),    # 7
    ("MPI_Barrier", 7, "mpi"),      # 8 an MPI call inside another
    ("MPI_Send", 0, "user"),        # 9 a user region: not the MPI function
    ("MPI_Recv", -1, "mpi"),        # 10 outside any user region
]
RANK_OF_THREAD = [0, 1, 1, 2, 2, 2]


def rank_region_rows(regions):
    rows = []
    for name, parent, kind in regions:
        depth = 0 if parent < 0 else rows[parent][2] + 1
        path = name if parent < 0 else rows[parent][4] + "/" + name
        rows.append((name, parent, depth, kind, path))
    return rows


def write_rank_file(path, regions, ranks_of_thread, cells, thread_wall, attrs):
    """A file of several ranks: cells(t, r) -> None (not visited) or a dict of
    visits, wall, bytes, unknown, counts [E], enabled [G], running [G], flags."""
    E, G, T, R = len(EVENTS), 2, len(ranks_of_thread), len(regions)
    arrays = {"visits": np.zeros((T, R), "<u8"), "wall_ns": np.zeros((T, R), "<u8"),
              "bytes": np.zeros((T, R), "<u8"), "bytes_unknown": np.zeros((T, R), "<u8"),
              "counts": np.zeros((T, R, E), "<u8"), "enabled_ns": np.zeros((T, R, G), "<u8"),
              "running_ns": np.zeros((T, R, G), "<u8"), "flags": np.zeros((T, R), "<u4")}
    keys = {"visits": "visits", "wall_ns": "wall", "bytes": "bytes", "bytes_unknown": "unknown",
            "counts": "counts", "enabled_ns": "enabled", "running_ns": "running", "flags": "flags"}
    for t in range(T):
        for r in range(R):
            c = cells(t, r)
            if c is None:
                continue
            for name, key in keys.items():
                if key in c:
                    arrays[name][t, r] = c[key]
    with h5py.File(path, "w") as f:
        write_root_attrs(f, "clean", 1)
        for name, value in attrs.items():
            f.attrs.create(name, value, dtype="<i4")
        ev = np.zeros(E, EVENT_DT)
        for i, (name, pfm, group, typ, config) in enumerate(EVENTS):
            ev[i] = (name, pfm, group, typ, config, 0, 0, 0, 1)
        f.create_dataset("events", data=ev)
        rg = np.zeros(R, REGION_DT)
        for i, row in enumerate(rank_region_rows(regions)):
            rg[i] = row
        f.create_dataset("regions", data=rg)
        th = np.zeros(T, THREAD_DT)
        for t, rank in enumerate(ranks_of_thread):
            first = ranks_of_thread.index(rank)
            th[t] = (rank, t - first, 1000 + rank, 1000 + 10 * rank + t - first,
                     "node-%d" % (rank // 2), t, t, 0, 0)
        f.create_dataset("threads", data=th)
        g = f.create_group("region")
        for name, a in arrays.items():
            g.create_dataset(name, data=a)
        for name, bit in FLAGS.items():
            g["flags"].attrs.create(name, bit, dtype="<u4")
        tw = np.array(thread_wall, "<u8")
        g = f.create_group("thread")
        g["wall_ns"] = tw
        g["counts"] = np.array([[7 * (t + 1) * (e + 1) for e in range(E)] for t in range(T)], "<u8")
        g["enabled_ns"] = np.repeat(tw[:, None], G, axis=1)
        g["running_ns"] = np.repeat(tw[:, None], G, axis=1)
        ranks = sorted(set(ranks_of_thread))
        g = f.create_group("rank")
        g["rank"] = np.array(ranks, "<i4")
        g["counts"] = np.array([[100 * (k + 1)] * E for k in ranks], "<u8")
        g["enabled_ns"] = np.array([[10 ** 9] * G for _ in ranks], "<u8")
        g["running_ns"] = np.array([[10 ** 9] * G for _ in ranks], "<u8")
        f.create_dataset("messages", shape=(0,), dtype=STR)


def plain_cell(visits, wall, t, r, bytes_=0, unknown=0):
    counts = [visits * (5 + 3 * r + t) * (10 ** e) for e in range(len(EVENTS))]
    return {"visits": visits, "wall": wall, "bytes": bytes_, "unknown": unknown,
            "counts": counts, "enabled": [wall, wall], "running": [wall, wall]}


def ranks_cell(t, r):
    k = RANK_OF_THREAD[t]
    name, _, kind = RANK_REGIONS[r]
    if r == 6 and k == 1:
        # rank 1 never enters "io", yet its thread 2 has counts there
        return {"counts": [4, 40, 400], "enabled": [0, 0], "running": [0, 0]} if t == 2 else None
    if r in (7, 8) and k == 1:
        return None
    if r == 10 and k != 1:
        return None  # MPI_Recv outside regions: rank 1 only
    if r == 9 and t not in (0, 3):
        return None
    visits = {0: 1, 1: 1, 2: 10, 3: 10, 4: 2, 5: 4, 6: 1, 7: 1, 8: 1, 9: 1, 10: 3}[r]
    # wall: per thread, chosen so that ranks differ and some tie
    wall = (r + 1) * 1_000_000 + [0, 300_000, 100_000, 200_000, 50_000, 25_000][t]
    if r == 5:
        wall = 6_000_000 // (1 + k)  # every rank 6 ms in MPI_Allreduce: a 3-way tie
    if r == 8:
        wall = 400_000    # inside MPI_File_open (wall 8.x ms): not MPI time twice
    if r == 9:
        wall = 0          # too short for the clock: mean 0, no imbalance
    bytes_ = unknown = 0
    if kind == "mpi":
        bytes_ = visits * 8 * (k + 1)
        if name == "MPI_Recv":
            bytes_, unknown = 16, 1  # one receive with MPI_STATUS_IGNORE
        if name in ("MPI_File_open", "MPI_Barrier"):
            bytes_ = 0
    c = plain_cell(visits, wall, t, r, bytes_, unknown)
    if r == 5:
        c["counts"][0] = 6 if k != 1 else 9  # page-faults: ranks 1 and 2 tie at 18
    if (t, r) == (4, 1):      # MULTIPLEXED: the hw group ran half the time
        c["running"][1] = c["enabled"][1] // 2
        c["counts"][1] //= 2
        c["counts"][2] //= 2
        c["flags"] = FLAGS["MULTIPLEXED"]
    if (t, r) == (2, 5):      # NOT_COUNTED: rank 1 still has thread 1's value
        c["running"][1] = 0
        c["counts"][1] = c["counts"][2] = 0
        c["flags"] = FLAGS["NOT_COUNTED"]
    if (t, r) == (0, 6):      # rank 0's only cell in "io": no estimate for the rank
        c["running"][1] = 0
        c["counts"][1] = c["counts"][2] = 0
        c["flags"] = FLAGS["NOT_COUNTED"]
    if r == 10:               # MPI_Recv: the hw group never ran, no rank has a value
        c["running"][1] = 0
        c["counts"][1] = c["counts"][2] = 0
        c["flags"] = FLAGS["NOT_COUNTED"]
    if (t, r) == (1, 2):      # LOST_GENERATION in halo
        c["counts"] = [x // 3 for x in c["counts"]]
        c["flags"] = FLAGS["LOST_GENERATION"]
    return c


def write_ranks(path):
    # rank 2 has three threads of 30 ms, 40 ms, 35 ms: its time is 40 ms, less
    # than its threads spend in MPI together (a share above 100%)
    wall = [50_000_000, 80_000_000, 60_000_000, 30_000_000, 40_000_000, 35_000_000]
    write_rank_file(path, RANK_REGIONS, RANK_OF_THREAD, ranks_cell, wall,
                    {"rank": -1, "ranks": 3})


def write_ranks_shuffled(path):
    perm = [3, 0, 4, 1, 5, 2]  # new row -> `ranks` row
    wall = [50_000_000, 80_000_000, 60_000_000, 30_000_000, 40_000_000, 35_000_000]
    write_rank_file(path, RANK_REGIONS, [RANK_OF_THREAD[p] for p in perm],
                    lambda t, r: ranks_cell(perm[t], r), [wall[p] for p in perm],
                    {"rank": -1, "ranks": 3})


# (name, parent row, kind) of the `omp` variant
OMP_REGIONS = [
    ("main", -1, "user"),                          # 0
    ("omp parallel f+0x10 (4 threads)", 0, "omp"),  # 1
    ("work", 1, "user"),                           # 2
    ("omp barrier", 1, "omp"),                     # 3
    ("omp taskwait", 3, "omp"),                    # 4 a task waiting inside the barrier
    ("omp taskwait", 2, "omp"),                    # 5
    ("inner", 2, "user"),                          # 6 longer than "work" on thread 3
    ("omp barrier", 0, "user"),                    # 7 a user region: not a wait
]
OMP_RANK_OF_THREAD = [0, 0, 1, 1]


def omp_cell(t, r):
    if r == 7 and t != 0:
        return None
    if r == 6 and t == 1:
        return None           # thread 1 never enters "inner"
    wall = {0: 100, 1: 90, 2: 50, 3: 20, 4: 5, 5: 7, 6: 30, 7: 3}[r] * 1000 * (t + 2)
    if (t, r) == (3, 6):
        wall = 200 * 1000 * (t + 2)  # longer than "work" itself
    if r in (3, 4) and OMP_RANK_OF_THREAD[t] == 1:
        wall *= 2             # rank 1 waits longer: shares differ by rank
    c = plain_cell(1 + t, wall, t, r)
    if r == 2:
        c["counts"][0] = 10 ** 15  # every thread the same large count: stddev 0
    return c


def write_omp(path):
    write_rank_file(path, OMP_REGIONS, OMP_RANK_OF_THREAD, omp_cell,
                    [900_000, 800_000, 1_000_000, 700_000], {"rank": -1, "ranks": 2})


def write_manyranks(path):
    n = 20
    regions = [("work", -1, "user"), ("MPI_Barrier", 0, "mpi"), ("MPI_Bcast", -1, "mpi")]

    def cell(t, r):
        if r == 2 and t % 4:
            return None
        # ranks 7 and 13 tie for the highest share; rank 3 has no time at all
        mpi = {7: 9_000_000, 13: 9_000_000}.get(t, 1_000_000 + 100_000 * t)
        wall = {0: 10_000_000, 1: mpi, 2: 500_000}[r]
        return plain_cell(1, wall, t, r, 4 * t)

    wall = [0 if t == 3 else 12_000_000 for t in range(n)]
    write_rank_file(path, regions, list(range(n)), cell, wall, {"rank": -1, "ranks": n})


def write_rankfile(path):
    regions = [("step", -1, "user"), ("MPI_Allreduce", 0, "mpi")]

    def cell(t, r):
        return plain_cell(2 + t, 1_000_000 * (r + 1) + t, t, r, 16)

    write_rank_file(path, regions, [2, 2], cell, [5_000_000, 4_000_000], {"rank": 2, "ranks": 4})


# ------------------------------------------------------------------ TopDown
#
# No PMU here, so the TopDown files are made up, event by event as the
# runtime writes them (docs/topdown.md, runtime/count/pm_cpu_models.c): the kernel's
# PERF_METRICS encodings for perf_metrics, the model table's qualified names
# for skylake and zen4. Cell counts come from a "profile" (slots and the
# share of each category) turned into the raw events the method reads.

RAW = 4  # PERF_TYPE_RAW
ICL_MOD = ":e=0:i=0:c=0:intx=0:intxcp=0:u=1:k=0:excl=0:mg=0:mh=1:hw_smpl=0"
RAW_MOD = ":::u=1:k=0:h=0:precise=0:excl=0:mg=0:mh=1:hw_smpl=0"
SKX_MOD = ":e=0:i=0:c=0:t=0:intx=0:intxcp=0:u=1:k=0:excl=0:mg=0:mh=1"
ZEN_MOD = ":e=0:i=0:c=0:g=0:u=1:k=0:h=0:excl=0:mg=0:mh=1"
PAGE_FAULTS = ("page-faults", "perf::PERF_COUNT_SW_PAGE_FAULTS:u", 1, 1, 2)  # sw, group 1
METRICS = ["retiring", "bad-spec", "fe-bound", "be-bound",
           "heavy-ops", "br-mispredict", "fetch-lat", "mem-bound"]


def perf_metrics_events(pmu, levels):
    """slots + topdown-* as the runtime names them (kernel group 0), page-faults."""
    ev = [("%s::TOPDOWN:SLOTS" % pmu, "%s::TOPDOWN:SLOTS%s" % (pmu, ICL_MOD), 0, RAW, 0x400)]
    for k in range(4 * levels):
        ev.append(("perf_raw::r%x" % (0x8000 + 0x100 * k), "perf_raw" + RAW_MOD, 0, RAW,
                   0x8000 + 0x100 * k))
    return ev + [PAGE_FAULTS]


# Skylake: the skx table's events, in two kernel groups so that multiplexing
# one of them changes the ratios. Two decoys come first: a longer unit mask
# (RECOVERY_CYCLES_ANY) and the same event with a count modifier (c=1) are
# other events and must not be taken for INT_MISC:RECOVERY_CYCLES; and
# UOPS_ISSUED:ANY is requested under another spelling, found by its pfm_name.
SKL_EVENTS = [
    ("skx::INT_MISC:RECOVERY_CYCLES_ANY", "skx::INT_MISC:RECOVERY_CYCLES_ANY" + SKX_MOD, 1, RAW,
     0x20010d),
    ("skx::INT_MISC:RECOVERY_CYCLES:c=1",
     "skx::INT_MISC:RECOVERY_CYCLES" + SKX_MOD.replace(":c=0", ":c=1"), 1, RAW, 0x100010d),
    ("skx::CPU_CLK_UNHALTED:THREAD_P", "skx::CPU_CLK_THREAD_UNHALTED:THREAD_P" + SKX_MOD, 0,
     RAW, 0x3c),
    ("skx::IDQ_UOPS_NOT_DELIVERED:CORE", "skx::IDQ_UOPS_NOT_DELIVERED:CORE" + SKX_MOD, 0, RAW,
     0x19c),
    ("UOPS_ISSUED:ANY:u", "skx::UOPS_ISSUED:ANY" + SKX_MOD, 0, RAW, 0x10e),
    ("skx::UOPS_RETIRED:RETIRE_SLOTS", "skx::UOPS_RETIRED:RETIRE_SLOTS" + SKX_MOD, 1, RAW, 0x2c2),
    ("skx::INT_MISC:RECOVERY_CYCLES", "skx::INT_MISC:RECOVERY_CYCLES" + SKX_MOD, 1, RAW, 0x10d),
    PAGE_FAULTS[:2] + (2,) + PAGE_FAULTS[3:],
]
SKL_TD = [2, 3, 4, 5, 6]  # rows of the topdown events: cycles, idq, issued, retired, recovery

ZEN_PMU = "amd64_fam19h_zen4::"
ZEN_EVENTS = [(ZEN_PMU + n, ZEN_PMU + n + ZEN_MOD, 0, RAW, c) for n, c in (
    ("CYCLES_NOT_IN_HALT", 0x76), ("DISPATCH_STALLS_1:FE_NO_OPS", 0x1000001a0),
    ("DISPATCH_STALLS_1:BE_STALLS", 0x100001ea0), ("DISPATCH_STALLS_1:SMT_CONTENTION", 0x1000060a0),
    ("OPS_SOURCE_DISPATCHED_FROM_DECODER:DECODER:OPCACHE:LOOP_BUFFER", 0x7aa),
    ("RETIRED_OPS", 0xc1))] + [PAGE_FAULTS]

# Rows whose events are raw encodings (no libpfm4 table): named
# perf_raw::r<config> as runtime/count/pm_cpu_models.c writes them.
def raw_events(configs):
    return [("perf_raw::r%x" % c, "perf_raw" + RAW_MOD, 0, RAW, c) for c in configs] + \
        [PAGE_FAULTS]


# Zen 5: Zen 4's events (amdzen5 JSON), 8 slots per cycle
ZEN5_EVENTS = raw_events([0x76, 0x1000001a0, 0x100001ea0, 0x1000060a0, 0x7aa, 0xc1])

# Level 2 on Zen 4 and Zen 5 (amdzen4/5 pipeline.json PipelineL2): six more
# events than the six counters hold, so the runtime's second kernel group
# (group 1; page-faults moves to group 2). Zen 4 by libpfm4 name (the cmask
# event's pfm_name carries c=6), Zen 5 raw (cmask 8).
ZEN_L2 = [("DISPATCH_STALLS_1:FE_NO_OPS:c=6", 0x1060001a0),
          ("RETIRED_BRANCH_INSTRUCTIONS_MISPREDICTED", 0xc3), ("RESYNCS", 0x96),
          ("CYCLES_NO_RETIRE:NOT_COMPLETE_MISSING_LOAD", 0xa2d6),
          ("CYCLES_NO_RETIRE:NOT_COMPLETE_LOAD_AND_ALU", 0x2d6), ("RETIRED_UCODE_OPS", 0x1000000c2)]
PAGE_FAULTS_G2 = PAGE_FAULTS[:2] + (2,) + PAGE_FAULTS[3:]
ZEN_L2_EVENTS = ZEN_EVENTS[:6] + [
    (ZEN_PMU + n, ZEN_PMU + n.split(":c=")[0] + (ZEN_MOD.replace(":c=0", ":c=6")
                                                if ":c=" in n else ZEN_MOD), 1, RAW, c)
    for n, c in ZEN_L2] + [PAGE_FAULTS_G2]
ZEN5_L2_EVENTS = ZEN5_EVENTS[:6] + [
    ("perf_raw::r%x" % c, "perf_raw" + RAW_MOD, 1, RAW, c)
    for c in (0x1080001a0, 0xc3, 0x19f, 0xa2d6, 0x2d6, 0x1000000c2)] + [PAGE_FAULTS_G2]
# Neoverse V1: CPU_CYCLES, STALL_SLOT_FRONTEND, _BACKEND, STALL_SLOT, OP_SPEC,
# OP_RETIRED, BR_MIS_PRED
ARM_EVENTS = raw_events([0x11, 0x3e, 0x3d, 0x3f, 0x3b, 0x3a, 0x10])
# Sierra Forest: CPU_CLK_UNHALTED.CORE_P, TOPDOWN_RETIRING/BAD_SPECULATION/FE_BOUND/BE_BOUND.ALL_P
ATOM_EVENTS = raw_events([0x3c, 0x72, 0x73, 0x71, 0x74])

# (name, parent row)
TD_REGIONS = [
    ("main", -1),     # 0
    ("compute", 0),   # 1 threads of very different size and shape
    ("tiny", 0),      # 2 perf_metrics: every cell SHORT
    ("mixed", 1),     # 3 perf_metrics: thread 0's cell SHORT
    ("mux", 0),       # 4 thread 1's cell MULTIPLEXED (its topdown events ran half the time)
    ("flaky", 0),     # 5 thread 0 LOST_GENERATION, thread 2 NOT_COUNTED
    ("idle", 0),      # 6 never entered
    ("skew", 1),      # 7 sums that the formulas clamp at 0
]
TD_T = 3
# shares of retiring, bad speculation, frontend, backend (and SMT on Zen 4)
SHARES = [(0.45, 0.05, 0.20, 0.30, 0.0), (0.20, 0.10, 0.15, 0.55, 0.0),
          (0.70, 0.02, 0.08, 0.20, 0.0), (0.30, 0.25, 0.35, 0.10, 0.0),
          (0.35, 0.10, 0.15, 0.30, 0.10)]


def profile(t, r, scale=1):
    """Slots and shares of one cell (or, scale > 1, of a whole thread)."""
    visits = (t + 1) * (r + 1)
    slots = visits * (400_000 + 130_000 * t * t + 7_919 * r) * scale
    if r == 2 or (r == 3 and t == 0):
        slots = visits * 700  # under 1024 per window: SHORT with PERF_METRICS
    return visits, slots, SHARES[(t + 2 * r) % len(SHARES)]


def perf_metrics_counts(slots, shares, levels, skew):
    """What the kernel reports for one read window: floor(slots x byte / 255)."""
    b = [int(round(s * 255)) for s in shares[:4]]
    b[3] = 255 - b[0] - b[1] - b[2]
    # level 2: the measured part of each category
    b += [b[0] * 2 // 5, b[1] * 3 // 4, b[2] * 3 // 5, b[3] * 2 // 3][:4 * (levels - 1)]
    m = [slots * x // 255 for x in b]
    if skew and levels == 2:
        m[4] = m[0] + 997  # heavy ops above retiring (8-bit rounding): light ops clamp at 0
    return [slots] + m


def skylake_counts(slots, shares, skew):
    cycles = slots // 4
    slots = 4 * cycles
    ret, bad, fe = (int(x * slots) for x in shares[:3])
    rec = cycles // 50
    issued = bad + ret - 4 * rec
    if skew:  # retired above issued + 4 x recovery: bad spec clamps, and the
        issued, fe = ret // 2, slots  # others exceed slots: backend clamps
    return [cycles, fe, issued, ret, rec]


def zen4_counts(slots, shares, skew):
    cycles = slots // 6
    slots = 6 * cycles
    ret, bad, fe, _, smt = (int(x * slots) for x in shares)
    be = slots - ret - bad - fe - smt  # every slot accounted: perf's ratios agree
    disp = ret + bad
    if skew:
        disp = ret - 12_345  # fewer dispatched than retired: bad spec clamps at 0
    return [cycles, fe, be, smt, disp, ret]


def zen5_counts(slots, shares, skew):
    cycles = slots // 8
    slots = 8 * cycles
    ret, bad, fe, _, smt = (int(x * slots) for x in shares)
    be = slots - ret - bad - fe - smt
    disp = ret - 12_345 if skew else ret + bad  # skew: bad speculation clamps at 0
    return [cycles, fe, be, smt, disp, ret]


def zen_l2_counts(l1, width, skew):
    """The six level-2 events for level-1 counts l1 (zen4_counts/zen5_counts
    order): fetch latency 3/5 of frontend (cycles with no op at cmask=width),
    mispredicts 3 of every 4 flushes, memory 2/3 of the no-retire cycles,
    microcode 1/7 of retired ops. skew: each beyond its parent (clamped)."""
    cycles, fe, _, _, _, ret = l1
    fe_all = fe * 3 // 5 // width
    misp, resync = cycles // 40 + 3, cycles // 120 + 1
    load, any_nc = cycles // 3, cycles // 2
    ucode = ret // 7
    if skew:
        fe_all, load, ucode = fe // width + 1000, any_nc + 777, ret + 4242
    return [fe_all, misp, resync, load, any_nc, ucode]


def arm_counts(slots, shares, skew):
    """Neoverse V1 (8 slots, 4 cycles per BR_MIS_PRED moved from frontend to
    bad speculation): counts whose breakdown is the profile's shares."""
    cycles = slots // 8
    slots = 8 * cycles
    ret, bad, fe = (int(x * slots) for x in shares[:3])
    be = slots - ret - bad - fe
    mispred = bad // 64            # moved = 4 x 8 x mispred = about bad / 2
    moved = 32 * mispred
    ssf = fe + moved               # frontend = STALL_SLOT_FRONTEND - moved
    stall = ssf + be               # used = slots - STALL_SLOT = ret + bad - moved
    used = slots - stall
    op_spec, op_retired = used, ret  # retiring = used x ret / used
    if skew:
        op_retired = op_spec + 12_345  # more retired than speculated: retiring clamps to used
    return [cycles, ssf, be, stall, op_spec, op_retired, mispred]


def atom_counts(slots, shares, skew):
    cycles = slots // 6
    slots = 6 * cycles
    ret, bad, fe = (int(x * slots) for x in shares[:3])
    return [cycles, ret, bad, fe, slots - ret - bad - fe]


def write_topdown(path, variant):
    method, levels, model = {"topdown_icl": ("perf_metrics", 1, "icl"),
                             "topdown_spr": ("perf_metrics", 2, "spr"),
                             "topdown_skl": ("skylake", 1, "skx"),
                             "topdown_zen4": ("zen4", 1, "amd64_fam19h_zen4"),
                             "topdown_missing": ("perf_metrics", 1, "icl"),
                             "topdown_nol2": ("perf_metrics", 2, "spr"),
                             "topdown_adl": ("perf_metrics", 2, "adl_glc"),
                             "topdown_zen5": ("zen4", 1, "amd64_fam1ah_zen5"),
                             "topdown_zen4_l2": ("zen4", 2, "amd64_fam19h_zen4"),
                             "topdown_zen5_l2": ("zen4", 2, "amd64_fam1ah_zen5"),
                             "topdown_zen4_nol2": ("zen4", 2, "amd64_fam19h_zen4"),
                             "topdown_arm": ("arm", 1, "arm_v1"),
                             "topdown_atom": ("atom", 1, "srf")}[variant]
    if method == "perf_metrics":
        events = perf_metrics_events(model, levels)
        td_rows = list(range(1 + 4 * levels))
    elif method == "skylake":
        events, td_rows = SKL_EVENTS, SKL_TD
    elif method == "arm":
        events, td_rows = ARM_EVENTS, list(range(7))
    elif method == "atom":
        events, td_rows = ATOM_EVENTS, list(range(5))
    elif model == "amd64_fam1ah_zen5":
        events, td_rows = (ZEN5_L2_EVENTS, list(range(12))) if levels == 2 else \
            (ZEN5_EVENTS, list(range(6)))
    else:
        events, td_rows = (ZEN_L2_EVENTS, list(range(12))) if levels == 2 else \
            (ZEN_EVENTS, list(range(6)))
    td_index = list(range(len(td_rows)))  # which of the method's counts each row holds
    # an event that could not be opened: topdown-fe-bound (level 1) leaves no
    # breakdown; topdown-mem-bound (level 2) leaves level 1; so does Zen 4's
    # ex_no_retire.load_not_complete
    drop = {"topdown_missing": 3, "topdown_nol2": 8, "topdown_zen4_nol2": 9}.get(variant)
    if drop:
        events = events[:drop] + events[drop + 1:]
        td_rows, td_index = td_rows[:-1], td_index[:drop] + td_index[drop + 1:]
    E, G, R, T = len(events), max(e[2] for e in events) + 1, len(TD_REGIONS), TD_T

    def counts_of(slots, shares, skew):
        if method == "perf_metrics":
            return perf_metrics_counts(slots, shares, levels, skew)
        if method == "skylake":
            return skylake_counts(slots, shares, skew)
        if method == "arm":
            return arm_counts(slots, shares, skew)
        if method == "atom":
            return atom_counts(slots, shares, skew)
        l1 = (zen5_counts if model == "amd64_fam1ah_zen5" else zen4_counts)(slots, shares, skew)
        if levels == 2:
            return l1 + zen_l2_counts(l1, 8 if model == "amd64_fam1ah_zen5" else 6, skew)
        return l1

    def fill(counts_row, slots, shares, skew, visits):
        td = counts_of(slots, shares, skew)
        for k, e in zip(td_index, td_rows):
            counts_row[e] = td[k]
        for e, ev in enumerate(events):  # the rest: page-faults and the decoys
            if e not in td_rows:
                counts_row[e] = visits * (3 + e) * (1000 if ev[3] == RAW else 1)

    visits, wall, counts, enabled, running, flags = zero_cells(T, R, E, G)
    windows = np.zeros((T, R), "<u8")
    td_group = events[td_rows[0]][2]
    for t in range(T):
        for r, (name, _) in enumerate(TD_REGIONS):
            if name == "idle" or (name == "mixed" and t == 2):
                continue
            v, slots, shares = profile(t, r)
            visits[t, r] = windows[t, r] = v
            wall[t, r] = slots // 3 + 1000 * t
            enabled[t, r, :] = running[t, r, :] = wall[t, r]
            fill(counts[t, r], slots, shares, name == "skew", v)
            if method == "perf_metrics" and counts[t, r, td_rows[0]] < 1024 * windows[t, r]:
                flags[t, r] |= FLAGS["SHORT"]
    if variant == "topdown_adl":  # hybrid: each thread's share of time on P-cores
        for t in range(1, T):
            for r in range(R):
                if visits[t, r]:
                    running[t, r, td_group] = enabled[t, r, td_group] * (4 - t) // 4
                    for e in td_rows:
                        counts[t, r, e] = counts[t, r, e] * (4 - t) // 4
                    flags[t, r] |= FLAGS["MULTIPLEXED"]
    t, r = 1, 4  # mux: the topdown group ran half the time (Skylake's second group a quarter)
    part = {td_group: 2, 1: 4} if method == "skylake" else {td_group: 2}
    for grp, k in part.items():
        running[t, r, grp] = enabled[t, r, grp] // k
    for e in td_rows:
        counts[t, r, e] //= part.get(events[e][2], 1)
    flags[t, r] |= FLAGS["MULTIPLEXED"]
    t, r = 0, 5
    counts[t, r, :] //= 3
    flags[t, r] |= FLAGS["LOST_GENERATION"]
    t, r = 2, 5
    running[t, r, td_group] = 0
    for e in td_rows:
        counts[t, r, e] = 0
    flags[t, r] |= FLAGS["NOT_COUNTED"]

    # whole-thread totals: large, each thread its own shape
    tcounts = np.zeros((T, E), "<u8")
    for t in range(T):
        v, slots, shares = profile(t, 0, scale=40)
        fill(tcounts[t], slots, SHARES[(3 * t + 1) % len(SHARES)], False, v)
    tw = np.array([10 ** 9 + t for t in range(T)], "<u8")
    ten = np.repeat(tw[:, None], G, axis=1).astype("<u8")
    trun = ten.copy()
    tflags = np.zeros(T, "<u4")
    if variant == "topdown_spr":
        trun[1, td_group] = ten[1, td_group] // 2  # thread 1 multiplexed over the run
        for e in td_rows:
            tcounts[1, e] //= 2
        tflags[1] |= FLAGS["MULTIPLEXED"]
        tflags[2] |= FLAGS["LOST_GENERATION"]  # left out of the whole run

    with h5py.File(path, "w") as f:
        write_root_attrs(f, "clean", 1)
        f.attrs["events_requested"] = "topdown"
        f.attrs["event_group"] = "topdown"
        f.attrs["events_measured"] = ",".join(e[0] for e in events)
        f.attrs.create("kernel_groups", G, dtype="<i4")
        f.attrs["topdown_method"] = method
        f.attrs.create("topdown_levels", levels, dtype="<i4")
        f.attrs["cpu_model"] = model
        ev = np.zeros(E, EVENT_DT)
        for i, (name, pfm, group, typ, config) in enumerate(events):
            ev[i] = (name, pfm, group, typ, config, 0, 0, 0, 1)
        f.create_dataset("events", data=ev)
        rg = np.zeros(R, REGION_DT)
        for i, row in enumerate(rank_region_rows([(n, p, "user") for n, p in TD_REGIONS])):
            rg[i] = row
        f.create_dataset("regions", data=rg)
        th = np.zeros(T, THREAD_DT)
        for t in range(T):
            th[t] = (0, t, 500, 500 + t, "node-td", t, t, 0, 0)
        f.create_dataset("threads", data=th)
        g = f.create_group("region")
        for name, a in (("visits", visits), ("wall_ns", wall), ("counts", counts),
                        ("enabled_ns", enabled), ("running_ns", running), ("flags", flags),
                        ("windows", windows)):
            g.create_dataset(name, data=a)
        for name, bit in FLAGS.items():
            g["flags"].attrs.create(name, bit, dtype="<u4")
        g = f.create_group("thread")
        g["wall_ns"] = tw
        g["counts"] = tcounts
        g["enabled_ns"] = ten
        g["running_ns"] = trun
        if variant != "topdown_icl":  # older writers have no /thread/flags
            g["flags"] = tflags
        g = f.create_group("rank")
        g["rank"] = np.array([0], "<i4")
        g["counts"] = tcounts.sum(axis=0)[None, :].astype("<u8")
        g["enabled_ns"] = ten[:1]
        g["running_ns"] = ten[:1]
        f.create_dataset("messages", shape=(0,), dtype=STR)


# ---------------------------------------------------------------- throttle
#
# As runtime/file/pm_h5out.c writes a run with PERFMARK_THROTTLE on: which visits
# read counters (docs/hdf5-schema.md, "Which visits read counters") and what
# perfmark's own reads cost. Values are made up; the checker recomputes every
# expected number from the file.

NEW_FLAGS = {"TIMER_ONLY": 0x80, "THROTTLED": 0x100, "OVERHEAD": 0x200}
THR_EVENTS = [("task-clock", "perf::PERF_COUNT_SW_TASK_CLOCK:u=1:k=1", 0, 1, 1),
              ("page-faults", "perf::PERF_COUNT_SW_PAGE_FAULTS:u=1:k=1", 0, 1, 2)]
# (name, parent row, kind)
THR_REGIONS = [
    ("main", -1, "user"),          # 0
    ("compute", 0, "user"),        # 1
    ("tiny", 1, "user"),           # 2 THROTTLED on threads 0 and 2 (from 1001, 1201)
    ("MPI_Test", 0, "mpi"),        # 3 TIMER_ONLY, sampled on threads 0 and 2
    ("MPI_Iprobe", 1, "mpi"),      # 4 TIMER_ONLY: thread 2 has no timed visit
    ("MPI_Testall", 0, "mpi"),     # 5 TIMER_ONLY: its one cell has no timed visit
    ("MPI_Send", 1, "mpi"),        # 6 counted
    ("empty", 0, "user"),          # 7 OVERHEAD: little but perfmark's own reads
]
THR_RANK_OF_THREAD = [0, 0, 1]
THR_COST = {0: 950.0, 1: 1020.5}   # read_cost_ns of each rank's process
# per (thread, region): visits, timed visits (None: all), throttled_from, wall per timed visit
THR_CELLS = {
    (0, 0): (1, None, 0, 200_000_000), (1, 0): (1, None, 0, 150_000_000),
    (2, 0): (1, None, 0, 180_000_000),
    (0, 1): (5, None, 0, 20_000_000), (1, 1): (4, None, 0, 15_000_000),
    (2, 1): (6, None, 0, 19_000_000),
    (0, 2): (100_000, None, 1001, 900), (1, 2): (800, None, 0, 950),
    (2, 2): (60_000, None, 1201, 880),
    (0, 3): (50_000, 2_531, 0, 160), (1, 3): (900, None, 0, 170),
    (2, 3): (20_000, 1_590, 0, 150),
    (0, 4): (40, None, 0, 400), (2, 4): (5_000, 0, 0, 0),
    (1, 5): (12, 0, 0, 0),
    (0, 6): (10, None, 0, 5_000), (2, 6): (3, None, 0, 7_000),
    (0, 7): (500, None, 0, 300), (1, 7): (500, None, 0, 310), (2, 7): (500, None, 0, 290),
}


def write_throttle(path, variant="throttle"):
    events = [] if variant == "throttle_none" else THR_EVENTS
    new = variant != "throttle_old"
    E, G, T, R = len(events), 1, len(THR_RANK_OF_THREAD), len(THR_REGIONS)
    names = ["visits", "wall_ns", "bytes", "bytes_unknown", "reads", "timer_visits",
             "timed_visits", "throttled_from", "windows"]
    a = {n: np.zeros((T, R), "<u8") for n in names}
    counts = np.zeros((T, R, E), "<u8")
    enabled = np.zeros((T, R, G), "<u8")
    flags = np.zeros((T, R), "<u4")
    poll = [kind == "mpi" and name != "MPI_Send" for name, _, kind in THR_REGIONS]
    counted = np.zeros((T, R), "<u8")
    for (t, r), (v, timed, thr, per) in THR_CELLS.items():
        timed = v if timed is None else timed
        a["visits"][t, r], a["timed_visits"][t, r] = v, timed
        a["wall_ns"][t, r] = timed * per + 7 * t
        if E and poll[r]:
            a["timer_visits"][t, r] = v
            flags[t, r] |= NEW_FLAGS["TIMER_ONLY"]
            continue
        if thr and E:  # without counters nothing is worth throttling
            a["throttled_from"][t, r] = thr
            a["timer_visits"][t, r] = v + 1 - thr if E else 0
            flags[t, r] |= NEW_FLAGS["THROTTLED"]
        counted[t, r] = v - a["timer_visits"][t, r]
        if E:
            # CPU time of the counted visits only (a throttled region's later
            # visits are counted in its parent)
            counts[t, r, 0] = counted[t, r] * per * 9 // 10 if not thr else counted[t, r] * 1100
            counts[t, r, 1] = counted[t, r] // 100 + r
            enabled[t, r, 0] = a["wall_ns"][t, r] if not thr else counted[t, r] * per
        a["windows"][t, r] = counted[t, r]
    if E:
        a["bytes"][0, 6], a["bytes"][2, 6] = 8000, 2400
        # readings inside a visit: its descendants' enter and exit
        for t in range(T):
            for r in range(R):
                p = THR_REGIONS[r][1]
                while p >= 0:
                    a["reads"][t, p] += 2 * counted[t, r]
                    p = THR_REGIONS[p][1]
        for t in range(T):
            cost = THR_COST[THR_RANK_OF_THREAD[t]]
            for r in range(R):  # OVERHEAD as runtime/file/pm_h5out.c decides it
                own = (int(a["reads"][t, r]) + int(counted[t, r])) * cost
                if own > 0 and own > 0.1 * counts[t, r, 0]:
                    flags[t, r] |= NEW_FLAGS["OVERHEAD"]
    if not new:  # an older writer sets none of the new bits
        flags &= 0x7f
    tw = np.array([a["wall_ns"][t, 0] + 1_000_000 for t in range(T)], "<u8")
    with h5py.File(path, "w") as f:
        write_root_attrs(f, "clean", 1)
        f.attrs.create("rank", -1, dtype="<i4")
        f.attrs.create("ranks", 2, dtype="<i4")
        f.attrs.create("kernel_groups", G, dtype="<i4")
        f.attrs["events_requested"] = "none" if not E else "sw"
        f.attrs["event_group"] = "none" if not E else "sw"
        f.attrs["events_measured"] = ",".join(e[0] for e in events)
        if new:
            f.attrs["throttle"] = "warmup=1000,k=40"
        ev = np.zeros(E, EVENT_DT)
        for i, (name, pfm, group, typ, config) in enumerate(events):
            ev[i] = (name, pfm, group, typ, config, 0, 0, 0, 0)
        f.create_dataset("events", data=ev)
        rg = np.zeros(R, REGION_DT)
        for i, row in enumerate(rank_region_rows(THR_REGIONS)):
            rg[i] = row
        f.create_dataset("regions", data=rg)
        th = np.zeros(T, THREAD_DT)
        for t, rank in enumerate(THR_RANK_OF_THREAD):
            first = THR_RANK_OF_THREAD.index(rank)
            th[t] = (rank, t - first, 3000 + rank, 3000 + 10 * rank + t - first, "node-t", t, t,
                     0, 0)
        f.create_dataset("threads", data=th)
        g = f.create_group("region")
        if variant == "badthrottle":  # one region too many
            a["timed_visits"] = np.concatenate([a["timed_visits"], a["timed_visits"][:, :1]], 1)
        for n in names:
            if new or n in ("visits", "wall_ns", "bytes", "bytes_unknown", "windows"):
                g.create_dataset(n, data=a[n])
        g.create_dataset("counts", data=counts)
        g.create_dataset("enabled_ns", data=enabled)
        g.create_dataset("running_ns", data=enabled)
        fl = g.create_dataset("flags", data=flags)
        for name, bit in list(FLAGS.items()) + (list(NEW_FLAGS.items()) if new else []):
            fl.attrs.create(name, bit, dtype="<u4")
        g = f.create_group("thread")
        g["wall_ns"] = tw
        g["counts"] = (counts[:, 0, :] + 100).astype("<u8")
        g["enabled_ns"] = tw[:, None].astype("<u8")
        g["running_ns"] = tw[:, None].astype("<u8")
        g["flags"] = np.zeros(T, "<u4")
        if new:
            g["reads"] = np.array([(2 * int(counted[t].sum()) + 4) * (E > 0) for t in range(T)],
                                  "<u8")
            g["read_cost_ns"] = np.array([THR_COST[k] if E else 0.0
                                          for k in THR_RANK_OF_THREAD], "<f8")
        g = f.create_group("rank")
        g["rank"] = np.array([0, 1], "<i4")
        g["counts"] = np.array([[10 ** 9] * E, [2 * 10 ** 8] * E], "<u8").reshape(2, E)
        g["enabled_ns"] = np.array([[4 * 10 ** 8], [2 * 10 ** 8]], "<u8")
        g["running_ns"] = np.array([[4 * 10 ** 8], [2 * 10 ** 8]], "<u8")
        f.create_dataset("messages", shape=(0,), dtype=STR)


def write_foreign(path):
    with h5py.File(path, "w") as f:
        f.attrs["creator"] = "some other tool"
        f["data"] = np.arange(10)


def write_truncated(path):
    fd, tmp = tempfile.mkstemp(suffix=".h5")
    os.close(fd)
    try:
        write_full(tmp)
        with open(tmp, "rb") as src:
            data = src.read()
    finally:
        os.unlink(tmp)
    with open(path, "wb") as dst:
        dst.write(data[: len(data) // 2])


def write_garbage(path):
    with open(path, "wb") as f:
        f.write(b"this is not an HDF5 file\n" * 40)


VARIANTS = {
    "full": lambda p: write_full(p),
    "clean": lambda p: write_full(p, "clean"),
    "empty": write_empty,
    "newer": lambda p: write_full(p, schema=2),
    "foreign": write_foreign,
    "truncated": write_truncated,
    "garbage": write_garbage,
    "badshape": lambda p: write_full(p, "badshape"),
    "badtree": lambda p: write_full(p, "badtree"),
    "extras": write_extras,
    "ranks": write_ranks,
    "ranks_shuffled": write_ranks_shuffled,
    "manyranks": write_manyranks,
    "omp": write_omp,
    "rankfile": write_rankfile,
    "topdown_icl": lambda p: write_topdown(p, "topdown_icl"),
    "topdown_spr": lambda p: write_topdown(p, "topdown_spr"),
    "topdown_skl": lambda p: write_topdown(p, "topdown_skl"),
    "topdown_zen4": lambda p: write_topdown(p, "topdown_zen4"),
    "topdown_missing": lambda p: write_topdown(p, "topdown_missing"),
    "topdown_nol2": lambda p: write_topdown(p, "topdown_nol2"),
    "topdown_adl": lambda p: write_topdown(p, "topdown_adl"),
    "topdown_zen5": lambda p: write_topdown(p, "topdown_zen5"),
    "topdown_zen4_l2": lambda p: write_topdown(p, "topdown_zen4_l2"),
    "topdown_zen5_l2": lambda p: write_topdown(p, "topdown_zen5_l2"),
    "topdown_zen4_nol2": lambda p: write_topdown(p, "topdown_zen4_nol2"),
    "topdown_arm": lambda p: write_topdown(p, "topdown_arm"),
    "topdown_atom": lambda p: write_topdown(p, "topdown_atom"),
    "branch_icl": lambda p: write_full(p, "branch_icl"),
    "throttle": write_throttle,
    "throttle_old": lambda p: write_throttle(p, "throttle_old"),
    "throttle_none": lambda p: write_throttle(p, "throttle_none"),
    "badthrottle": lambda p: write_throttle(p, "badthrottle"),
}


def write(path, variant="full"):
    VARIANTS[variant](path)


def main(argv):
    if len(argv) not in (2, 3) or (len(argv) == 3 and argv[2] not in VARIANTS):
        sys.stderr.write("usage: make_fixture.py OUT.h5 [%s]\n" % "|".join(VARIANTS))
        return 2
    write(argv[1], argv[2] if len(argv) == 3 else "full")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
