"""The region tree for other tools: Hatchet's literal format.

Hatchet (LLNL) reads a call tree from a list of root dicts, each
{"frame": {...}, "metrics": {...}, "children": [...]}
(GraphFrame.from_literal). Its reader merges nodes whose frames are equal
anywhere in the tree, so each frame carries the region's row besides its
name and kind: MPI_Send under two call paths stays two nodes, as in the
report. Metric names ending in " (inc)" are inclusive for Hatchet; every
node has the same metric keys (Hatchet takes them from the first root).
"""
import math


def _num(v):
    """A summary value as a plain number, None where the report has none."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    try:
        import pandas as pd
        if v is pd.NA:
            return None
    except ImportError:  # pragma: no cover - pandas is a dependency
        pass
    f = float(v)
    return int(f) if f.is_integer() and abs(f) < 2 ** 53 else f


def hatchet_literal(run, stat="total"):
    """[root, ...] with metrics "time (inc)" (wall_ns), "time" (exclusive_ns),
    "visits" and "EVENT (inc)" for each event key; values are the summary()
    column `stat` ("total", or "max", "mean", "rank_max", "rank_mean", ...),
    times in ns."""
    s = run.summary()
    if stat not in s.columns:
        raise ValueError("stat %r: not a summary() column" % (stat,))
    reg = run.regions()
    keys = run.event_keys()
    value = {(i, q): v for i, q, v in zip(s["index"], s["quantity"], s[stat])}
    nodes = []
    for i, row, name, kind in zip(reg["index"], reg["row"], reg["name"], reg["kind"]):
        metrics = {"time (inc)": _num(value[(i, "wall_ns")]),
                   "time": _num(value[(i, "exclusive_ns")]),
                   "visits": _num(value[(i, "visits")])}
        for k in keys:
            metrics[k + " (inc)"] = _num(value[(i, k)])
        nodes.append({"frame": {"name": name, "type": kind, "region": int(row)},
                      "metrics": metrics, "children": []})
    roots = []
    for node, parent in zip(nodes, reg["parent_index"]):
        (roots if parent < 0 else nodes[parent]["children"]).append(node)
    return roots
