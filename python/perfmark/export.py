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


def _sampled_frames(run, event, metric_keys):
    """{region row: [frame node, ...]}: each region's own samples as the
    tree of their call paths (samples.py), frames {"name", "type":
    "function"}, with "samples (inc)" and "samples" (stacks ending there);
    the region's metrics are None on frames."""
    names = list(run.sample_events()["name"])
    if event is True:
        event = names[0] if names else None
    if event is None:
        return {}
    df = run.samples(event)
    out = {}
    for region, path, fn, n in zip(df["region"], df["path"], df["function"], df["samples"]):
        frames = path.split(" > ") if path else [fn]
        level = out.setdefault(int(region), {})
        for k, name in enumerate(frames):
            node = level.get(name)
            if node is None:
                node = level[name] = {"frame": {"name": name, "type": "function"},
                                      "metrics": dict.fromkeys(metric_keys),
                                      "children": {}}
                node["metrics"]["samples (inc)"] = 0
                node["metrics"]["samples"] = 0
            node["metrics"]["samples (inc)"] += int(n)
            if k == len(frames) - 1:
                node["metrics"]["samples"] += int(n)
            level = node["children"]

    def listed(level):
        nodes = []
        for name in sorted(level):
            node = level[name]
            node["children"] = listed(node["children"])
            nodes.append(node)
        return nodes
    return {r: listed(level) for r, level in out.items()}


def hatchet_literal(run, stat="total", samples=None):
    """[root, ...] with metrics "time (inc)" (wall_ns), "time" (exclusive_ns),
    "visits" and "EVENT (inc)" for each event key; values are the summary()
    column `stat` ("total", or "max", "mean", "rank_max", "rank_mean", ...),
    times in ns. With `samples` (True: the first sampled event, or an
    event's name), every node also has "samples (inc)" and "samples", and
    each region holds the call paths of its own samples as frame nodes
    (their region metrics None); samples outside every region are left
    out."""
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
    if samples is None or samples is False:
        return roots
    keys = list(nodes[0]["metrics"]) if nodes else []
    frames = _sampled_frames(run, samples, keys)
    for node, row in zip(nodes, reg["row"]):
        own = frames.get(int(row), [])
        node["metrics"]["samples"] = 0
        node["children"].extend(own)
        node["metrics"]["samples (inc)"] = sum(f["metrics"]["samples (inc)"] for f in own)

    def inclusive(node):  # a region's samples and those of the regions inside it
        for c in node["children"]:
            if c["frame"].get("type") != "function":
                node["metrics"]["samples (inc)"] += inclusive(c)
        return node["metrics"]["samples (inc)"]
    for r in roots:
        inclusive(r)
    return roots
