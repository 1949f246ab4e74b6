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


def cell_values(variant):
    """visits, wall, counts, enabled, running, flags for every (thread, region)."""
    R, E, G = len(REGIONS), len(EVENTS), 2
    visits = np.zeros((T, R), "<u8")
    wall = np.zeros((T, R), "<u8")
    counts = np.zeros((T, R, E), "<u8")
    enabled = np.zeros((T, R, G), "<u8")
    running = np.zeros((T, R, G), "<u8")
    flags = np.zeros((T, R), "<u4")
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
    a["events_measured"] = ",".join(e[0] for e in EVENTS)
    a["event_group"] = "custom"
    a.create("kernel_groups", 2, dtype="<i4")
    a.create("bind_cpu", -1, dtype="<i4")
    a.create("partial", 0, dtype="u1")


def write_full(path, variant="full", schema=1):
    E, G = len(EVENTS), 2
    with h5py.File(path, "w") as f:
        write_root_attrs(f, variant, schema)
        ev = np.zeros(E, EVENT_DT)
        for i, (name, pfm, group, typ, config) in enumerate(EVENTS):
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
