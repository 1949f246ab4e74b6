#!/usr/bin/python3
"""`perfmark diff` on real runs, checked against h5py.

usage: /usr/bin/python3 check_diff.py BUILD_DIR

- regression: `pagefaults 1000 2` (A) against `pagefaults 3000 2` (B): each
  thread touches that many fresh pages in region "touch", so its page-faults
  are exactly 2,000 in A and 6,000 in B. `--metric page-faults --threshold
  50` must exit 1 and name "touch"; every number of the JSON and CSV output
  is recomputed here from the two files.
- noise: two runs of the same work (`pagefaults 1000 2` twice,
  `taskclock 60 2` twice) stay within a generous threshold on metrics that
  cannot flake (page-faults in "touch" are exact; task-clock of a region that
  spins for a fixed CPU time varies by a few percent): exit 0.
- a synthetic file with estimates and lost counts (make_fixture.py full)
  against itself: the estimate/untrusted marks as h5py derives them, change 0,
  exit 0 at threshold 0.
- the throttle's fixture (make_fixture.py throttle: sampled MPI polls,
  TIMER_ONLY and THROTTLED cells) against itself and against a copy with its
  thread rows shuffled (loaded whole): times of sampled cells are the
  report's estimates (~), timer-only counts are no value ("timer only"),
  throttled counts are marked (*).
- regions in only one file; usage and file errors exit 2 with one line.
Exit 0 = pass, 77 = skipped (programs not built).
"""
import csv
import io
import json
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_fixture  # noqa: E402

BUILD = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else ""
PERFMARK = os.path.join(BUILD, "bin", "perfmark")
PROGS = os.path.join(BUILD, "tests")
LOST_GENERATION = 0x04
errors = []
checks = 0


def ok(cond, msg):
    global checks
    checks += 1
    if not cond:
        errors.append(msg)
    return cond


def run(args, env=None):
    e = {k: v for k, v in os.environ.items() if not k.startswith("PERFMARK_")}
    e.update(env or {})
    return subprocess.run(args, capture_output=True, env=e, timeout=120)


def measure(tmp, name, prog_args):
    out = os.path.join(tmp, name)
    r = run([PERFMARK, "run", "-q", "-e", "sw", "-o", out, "--"] + prog_args, {"TMPDIR": tmp})
    if r.returncode != 0 or not os.path.exists(out):
        raise SystemExit("cannot measure %s: %r" % (prog_args, r.stderr[-500:]))
    return out


def diff(a, b, *opts):
    return run([PERFMARK, "diff", a, b] + list(opts))


def txt(x):
    return x.decode("utf-8", "replace") if isinstance(x, bytes) else str(x)


# ---------------------------------------------------------- ground truth

class File:
    def __init__(self, path):
        f = h5py.File(path, "r")
        self.events = [txt(e) for e in f["events"]["name"]]
        self.group = [int(g) for g in f["events"]["group"]]
        self.paths = [txt(p) for p in f["regions"]["path"]]
        self.kinds = [txt(k) for k in f["regions"]["kind"]]
        self.rank = [int(r) for r in f["threads"]["rank"]]
        self.visits = f["region/visits"][:].astype(np.float64)
        self.wall = f["region/wall_ns"][:].astype(np.float64)
        # sampled visits: the time is wall x visits / timed (absent: all timed)
        self.timed = f["region/timed_visits"][:].astype(np.float64) \
            if "timed_visits" in f["region"] else self.visits
        self.measuring = "timed_visits" in f["region"] or "throttle" in f.attrs
        self.flags = f["region/flags"][:]
        names = {k: int(v) for k, v in f["region/flags"].attrs.items()}
        self.timer_only = 0x80 if names.get("TIMER_ONLY") == 0x80 else 0
        self.throttled = 0x100 if names.get("THROTTLED") == 0x100 else 0
        self.counts = f["region/counts"][:].astype(np.float64)
        self.en = f["region/enabled_ns"][:].astype(np.float64)
        self.run = f["region/running_ns"][:].astype(np.float64)
        self.twall = f["thread/wall_ns"][:].astype(np.float64)
        self.tcounts = f["thread/counts"][:].astype(np.float64)
        self.ten = f["thread/enabled_ns"][:].astype(np.float64)
        self.trun = f["thread/running_ns"][:].astype(np.float64)
        self.tflags = f["thread/flags"][:] if "flags" in f["thread"] else np.zeros(len(self.rank))
        f.close()

    def units(self, by_rank):
        """unit index of each thread"""
        if not by_rank:
            return list(range(len(self.rank)))
        ranks = sorted(set(self.rank))
        return [ranks.index(r) for r in self.rank]

    def time(self, t, r):
        """(time, estimate) of a cell; None: no timed visit"""
        w, v, n = self.wall[t, r], self.visits[t, r], self.timed[t, r]
        if n >= v:
            return w, False
        if n == 0:
            return None, False
        return float(int(w * v / n + 0.5)), True

    def cells(self, r, metric):
        """[(raw, en, run, visited, lost)] per thread; r None = whole run; a
        time without value as (0, 1, 0) (no estimate), an estimated one as
        (ns, 2, 1) (scaled by 1), a timer-only cell's count as None"""
        out = []
        for t in range(len(self.rank)):
            visited = r is None or self.visits[t, r] > 0
            if metric == "time" and r is not None:
                ns, est = self.time(t, r)
                out.append((0.0, 1.0, 0.0, visited, False) if ns is None else
                           (ns / 2, 2.0, 1.0, visited, False) if est else
                           (ns, 0.0, 0.0, visited, False))
                continue
            if metric in ("time", "visits"):
                v = self.twall[t] if r is None else self.visits[t, r]
                out.append((v, 0.0, 0.0, visited, False))
                continue
            if r is not None and visited and int(self.flags[t, r]) & self.timer_only:
                out.append(None)
                continue
            e = self.events.index(metric)
            g = self.group[e]
            if r is None:
                out.append((self.tcounts[t, e], self.ten[t, g], self.trun[t, g], True,
                            bool(int(self.tflags[t]) & LOST_GENERATION)))
            else:
                out.append((self.counts[t, r, e], self.en[t, r, g], self.run[t, r, g], visited,
                            bool(int(self.flags[t, r]) & LOST_GENERATION)))
        return out

    def side(self, r, metric, by_rank):
        """value, estimate, untrusted, per-unit values of the units that entered"""
        if metric == "ipc":  # instructions / cycles, per unit and of the totals
            vi, ei, ui, pi, hi = self.side_sum(r, "instructions", by_rank)
            vc, ec, uc, pc, hc = self.side_sum(r, "cycles", by_rank)
            per = [i / c for i, c, h1, h2 in zip(pi, pc, hi, hc) if h1 and h2 and c > 0]
            v = vi / vc if vi is not None and vc is not None and vc > 0 else None
            return v, ei or ec, ui or uc, per
        v, e, u, per, has = self.side_sum(r, metric, by_rank)
        return v, e, u, [p for p, h in zip(per, has) if h]

    def side_sum(self, r, metric, by_rank):
        """value, estimate, untrusted, per-unit sums and whether each counts
        (entered the region and has a value)"""
        units = self.units(by_rank)
        n = max(units) + 1 if units else 0
        tot = [0.0] * n
        has = [True] * n
        vals = [0] * n
        nas = [0] * n
        entered = [False] * n
        estimate = untrusted = False
        for t, cell in enumerate(self.cells(r, metric)):
            if cell is None:  # a timer-only cell: no count of the region
                continue
            raw, en, run_, visited, lost = cell
            u = units[t]
            entered[u] |= visited
            untrusted |= lost
            if not visited and raw == 0 and en == 0:
                continue
            if run_ == 0 and en > 0:
                nas[u] += 1
                untrusted = True
                continue
            if run_ < en:
                estimate = True
                raw = raw * en / run_
            tot[u] += raw
            vals[u] += 1
        for u in range(n):
            has[u] = not (nas[u] > 0 and vals[u] == 0)
        value = None if (sum(nas) > 0 and sum(vals) == 0) else sum(tot)
        if self.timer_only_side(r, metric):
            value, has = None, [False] * n
        return value, estimate, untrusted, tot, [entered[u] and has[u] for u in range(n)]

    def timer_only_side(self, r, metric):
        """every visiting cell of the region read no counter (TIMER_ONLY)"""
        if r is None or metric in ("time", "visits"):
            return False
        vis = [t for t in range(len(self.rank)) if self.visits[t, r] > 0]
        return bool(vis) and all(int(self.flags[t, r]) & self.timer_only for t in vis)

    def partial_side(self, r, metric):
        """counts of some visiting cell end at the throttle (THROTTLED)"""
        if r is None or metric in ("time", "visits"):
            return False
        return any(int(self.flags[t, r]) & self.throttled and self.visits[t, r] > 0 and
                   not int(self.flags[t, r]) & self.timer_only for t in range(len(self.rank)))


def close(a, b):
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def check_json_against(name, fa, fb, a, b, j):
    """every region/metric of the JSON against h5py"""
    A, B = File(a), File(b)
    by_rank = len(set(A.rank)) > 1 or len(set(B.rank)) > 1
    ok(j["unit"] == ("rank" if by_rank else "thread"), "%s: unit %r" % (name, j["unit"]))
    both = [(p, k) for p, k in zip(A.paths, A.kinds) if (p, k) in set(zip(B.paths, B.kinds))]
    want_only_a = [p for p, k in zip(A.paths, A.kinds) if (p, k) not in set(zip(B.paths, B.kinds))]
    want_only_b = [p for p, k in zip(B.paths, B.kinds) if (p, k) not in set(zip(A.paths, A.kinds))]
    ok(j["only_in_a"] == want_only_a, "%s: only_in_a %r, want %r" % (name, j["only_in_a"], want_only_a))
    ok(j["only_in_b"] == want_only_b, "%s: only_in_b %r, want %r" % (name, j["only_in_b"], want_only_b))
    got_paths = [x["path"] for x in j["regions"]]
    ok(got_paths == [None] + [p for p, _ in both], "%s: regions %r" % (name, got_paths))
    metrics = ["time", "visits"] + [e for i, e in enumerate(A.events)
                                    if e in B.events and A.events.index(e) == i]
    if all(e in F.events for F in (A, B) for e in ("instructions", "cycles")):
        metrics.append("ipc")
    for reg in j["regions"]:
        ra = None if reg["whole_run"] else list(zip(A.paths, A.kinds)).index((reg["path"], reg["kind"]))
        rb = None if reg["whole_run"] else list(zip(B.paths, B.kinds)).index((reg["path"], reg["kind"]))
        want_m = [m for m in metrics if not (ra is None and m == "visits")]
        ok(list(reg["metrics"]) == want_m, "%s %s: metrics %r" % (name, reg["path"], list(reg["metrics"])))
        for m, c in reg["metrics"].items():
            where = "%s %s %s" % (name, reg["path"] or "(whole run)", m)
            sides = []
            for F, r, got in ((A, ra, c["a"]), (B, rb, c["b"])):
                v, est, untr, per = F.side(r, m, by_rank)
                sides.append((v, per))
                ok(close(got["value"], v), "%s: value %r, h5py %r" % (where, got["value"], v))
                ok(got["estimate"] == est, "%s: estimate %r, h5py %r" % (where, got["estimate"], est))
                ok(got["untrusted"] == untr, "%s: untrusted %r, h5py %r" % (where, got["untrusted"], untr))
                ok(got["units"] == len(per), "%s: units %r, h5py %r" % (where, got["units"], len(per)))
                if A.measuring or B.measuring:
                    want = (F.timer_only_side(r, m if m != "ipc" else "cycles"),
                            F.partial_side(r, m if m != "ipc" else "cycles"))
                    ok((got.get("timer_only"), got.get("throttled")) == want,
                       "%s: timer_only/throttled %r, h5py %r" % (where, got, want))
                else:
                    ok("timer_only" not in got, "%s: timer_only in an older pair" % where)
                if per:
                    ok(close(got["mean"], sum(per) / len(per)) and close(got["min"], min(per)) and
                       close(got["max"], max(per)), "%s: mean/min/max %r vs %r" % (where, got, per))
            (va, pa), (vb, pb) = sides
            if va is None or vb is None:
                ok(c["change"] is None, "%s: change without values" % where)
                continue
            ok(close(c["change"], vb - va), "%s: change %r, h5py %r" % (where, c["change"], vb - va))
            if va != 0:
                ok(close(c["change_pct"], 100 * (vb - va) / abs(va)), "%s: change_pct %r" % (where, c["change_pct"]))
            if len(pa) >= 2 or len(pb) >= 2:
                spread = max([max(p) - min(p) for p in (pa, pb) if len(p) >= 2])
                want = abs(sum(pb) / len(pb) - sum(pa) / len(pa)) > spread
                ok(c["beyond_spread"] == want, "%s: beyond_spread %r, want %r" % (where, c["beyond_spread"], want))
            else:
                ok(c["beyond_spread"] is None, "%s: beyond_spread without spread" % where)
    return A, B


def shuffle_threads(src, dst, perm):
    """A copy of src whose thread rows are perm (new row -> old row): every
    [T,...] dataset of /region and /thread, and /threads."""
    with h5py.File(src, "r") as f, h5py.File(dst, "w") as g:
        for k, v in f.attrs.items():
            g.attrs[k] = v
        for name in ("events", "regions", "messages"):
            if name in f:
                f.copy(name, g)
        g["threads"] = f["threads"][()][perm]
        for grp in ("region", "thread"):
            for name, d in f[grp].items():
                g[grp + "/" + name] = d[()][perm]
                for k, v in d.attrs.items():
                    g[grp + "/" + name].attrs[k] = v
        f.copy("rank", g)


def one_line_error(r, where, needle=None):
    ok(r.returncode == 2, "%s: exit %d, want 2 (%r)" % (where, r.returncode, r.stderr[-300:]))
    ok(r.stdout == b"", "%s: wrote to stdout" % where)
    ok(r.stderr.count(b"\n") == 1 and r.stderr.startswith(b"perfmark diff: "),
       "%s: not one 'perfmark diff:' line: %r" % (where, r.stderr))
    if needle:
        ok(needle.encode() in r.stderr, "%s: message lacks %r: %r" % (where, needle, r.stderr))


def main():
    for p in (PERFMARK, os.path.join(PROGS, "pagefaults"), os.path.join(PROGS, "taskclock")):
        if not os.access(p, os.X_OK):
            # built with the suite always: missing is a broken build
            print("FAIL: %s not built" % p)
            return 1
    tmp = tempfile.mkdtemp(prefix="pm-diff-check-")
    a = measure(tmp, "a.h5", [os.path.join(PROGS, "pagefaults"), "1000", "2"])
    b = measure(tmp, "b.h5", [os.path.join(PROGS, "pagefaults"), "3000", "2"])
    a2 = measure(tmp, "a2.h5", [os.path.join(PROGS, "pagefaults"), "1000", "2"])
    t1 = measure(tmp, "t1.h5", [os.path.join(PROGS, "taskclock"), "60", "2"])
    t2 = measure(tmp, "t2.h5", [os.path.join(PROGS, "taskclock"), "60", "2"])

    # ---- a real regression
    r = diff(a, b, "--metric", "page-faults", "--threshold", "50", "--region", "touch")
    ok(r.returncode == 1, "regression: exit %d, want 1 (%r)" % (r.returncode, r.stderr))
    ok(b"regression: page-faults +200.0% (threshold 50%) in 'touch'" in r.stderr,
       "regression: stderr does not name touch: %r" % r.stderr)
    ok(b"REGRESSION" in r.stdout, "regression: text does not mark the row")
    lines = r.stdout.decode().splitlines()
    ok(all(len(l) <= 100 for l in lines), "regression: text wider than 100 columns")
    row = [l for l in lines if l.strip().startswith("page-faults")]
    ok(len(row) == 1 and "2,000" in row[0] and "6,000" in row[0] and "+4,000" in row[0]
       and "yes" in row[0], "regression: text row %r" % row)
    r = diff(a, b, "--format", "json")
    ok(r.returncode == 0, "no threshold: exit %d, want 0" % r.returncode)
    j = json.loads(r.stdout)
    A, B = check_json_against("pagefaults", "a", "b", a, b, j)
    touch = [x for x in j["regions"] if x["path"] == "touch"][0]["metrics"]["page-faults"]
    # ground truth by construction: 2 threads x pages touched
    ok(touch["a"]["value"] == 2000 and touch["b"]["value"] == 6000 and touch["change_pct"] == 200,
       "pagefaults: touch page-faults %r, want 2000 -> 6000" % touch)
    ok(touch["beyond_spread"] is True, "pagefaults: +4000 faults not beyond the spread")
    r = diff(a, b, "--format", "csv", "--metric", "page-faults", "--threshold", "50")
    ok(r.returncode == 1, "csv: exit %d, want 1" % r.returncode)
    rows = list(csv.DictReader(io.StringIO(r.stdout.decode())))
    t = [x for x in rows if x["path"] == "touch"]
    ok(len(t) == 1 and float(t[0]["a"]) == 2000 and float(t[0]["b"]) == 6000 and
       t[0]["regression"] == "1" and t[0]["beyond_spread"] == "1", "csv: touch row %r" % t)
    ok({x["metric"] for x in rows} == {"page-faults"}, "csv: --metric not applied")
    # the total alone regresses too: the whole run is checked without --region
    r = diff(a, b, "--metric", "page-faults", "--threshold", "50")
    ok(r.returncode == 1 and b"in the whole run" in r.stderr, "whole run not checked: %r" % r.stderr)
    # B -> A is an improvement for a cost metric
    r = diff(b, a, "--metric", "page-faults", "--threshold", "1")
    ok(r.returncode == 0, "improvement: exit %d, want 0 (%r)" % (r.returncode, r.stderr))

    # ---- noise: the same work twice
    r = diff(a, a2, "--metric", "page-faults", "--threshold", "25")
    ok(r.returncode == 0, "noise pagefaults: exit %d, want 0 (%r)" % (r.returncode, r.stderr))
    r = diff(a, a2, "--metric", "page-faults", "--threshold", "0", "--region", "touch",
             "--format", "json")
    ok(r.returncode == 0, "noise pagefaults touch at 0%%: exit %d (%r)" % (r.returncode, r.stderr))
    c = json.loads(r.stdout)["regions"][0]["metrics"]["page-faults"]
    ok(c["change"] == 0 and c["beyond_spread"] is False, "noise pagefaults: %r" % c)
    r = diff(t1, t2, "--metric", "task-clock", "--threshold", "50", "--region", "spin")
    ok(r.returncode == 0, "noise taskclock: exit %d, want 0 (%r)" % (r.returncode, r.stderr))
    r = diff(t1, t2, "--format", "json")
    check_json_against("taskclock", "t1", "t2", t1, t2, json.loads(r.stdout))

    # ---- regions in only one file
    r = diff(a, t1, "--format", "json")
    ok(r.returncode == 0, "only-in: exit %d" % r.returncode)
    check_json_against("only-in", "a", "t1", a, t1, json.loads(r.stdout))
    r = diff(a, t1)
    ok(b"regions only in A:\n  touch" in r.stdout and b"regions only in B:\n  spin" in r.stdout,
       "only-in text: %r" % r.stdout[-300:])

    # ---- estimates and untrusted values (synthetic file with every flag)
    full = os.path.join(tmp, "full.h5")
    make_fixture.write(full, "full")
    for m in ("time", "page-faults", "cycles", "ipc"):
        r = diff(full, full, "--threshold", "0", "--metric", m)
        ok(r.returncode == 0, "full vs itself, %s: exit %d (%r)" % (m, r.returncode, r.stderr))
    r = diff(full, full, "--format", "json")
    j = json.loads(r.stdout)
    check_json_against("full", "full", "full", full, full, j)
    flags = [(m, c["a"]["estimate"], c["a"]["untrusted"]) for x in j["regions"]
             for m, c in x["metrics"].items()]
    ok(any(f[1] for f in flags) and any(f[2] for f in flags),
       "full: no estimate or no untrusted value shown")
    # several ranks: units are ranks (a job file, a per-rank file, a mixed pair)
    # (ranks_shuffled: threads out of rank order, which diff loads whole)
    for v in ("ranks", "rankfile", "ranks_shuffled"):
        make_fixture.write(os.path.join(tmp, v + ".h5"), v)
    for x, y in (("ranks", "ranks"), ("ranks", "rankfile"), ("full", "ranks"),
                 ("ranks_shuffled", "ranks"), ("ranks", "ranks_shuffled")):
        px, py = os.path.join(tmp, x + ".h5"), os.path.join(tmp, y + ".h5")
        r = diff(px, py, "--format", "json")
        ok(r.returncode == 0, "%s vs %s: exit %d (%r)" % (x, y, r.returncode, r.stderr))
        if r.returncode == 0:
            check_json_against(x + "-" + y, x, y, px, py, json.loads(r.stdout))
    r = diff(full, full)
    ok(b"~" in r.stdout and b"!" in r.stdout, "full: text lacks ~ or !")
    # the same numbers, in text too, whichever file is out of rank order
    pr, ps = os.path.join(tmp, "ranks.h5"), os.path.join(tmp, "ranks_shuffled.h5")
    body = lambda r: r.stdout.split(b"\n", 2)[2]  # past the A:/B: lines
    r1, r2 = diff(pr, pr), diff(ps, pr)
    ok(r1.returncode == 0 and r2.returncode == 0 and body(r1) == body(r2),
       "ranks_shuffled vs ranks: text differs from ranks vs ranks:\n%s" % r2.stdout[:600])

    # ---- which visits read counters (the throttle's fixture)
    thr = os.path.join(tmp, "throttle.h5")
    make_fixture.write(thr, "throttle")
    shuf = os.path.join(tmp, "throttle_shuffled.h5")
    shuffle_threads(thr, shuf, [2, 0, 1])
    for x, y in ((thr, thr), (shuf, thr), (thr, shuf)):
        r = diff(x, y, "--format", "json")
        ok(r.returncode == 0, "throttle %s: exit %d (%r)" % (y, r.returncode, r.stderr))
        if r.returncode == 0:
            check_json_against("throttle", "x", "y", x, y, json.loads(r.stdout))
    r = diff(thr, thr)
    text = r.stdout.decode()
    test = [l for l in text.splitlines() if l.strip().startswith("time")]
    ok("timer only" in text and "*" in text and any("~" in l for l in test),
       "throttle text lacks 'timer only', * or a time with ~:\n%s" % text[:2000])
    ok(all(len(l) <= 100 for l in text.splitlines()), "throttle: text wider than 100 columns")
    r = diff(thr, thr, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(r.stdout.decode())))
    ok(rows and all(k in rows[0] for k in ("a_timer_only", "b_throttled")) and
       any(x["a_timer_only"] == "1" for x in rows) and any(x["b_throttled"] == "1" for x in rows),
       "throttle csv: timer_only/throttled columns %r" % (rows[:1],))
    r = diff(thr, full, "--format", "csv")
    ok(r.returncode == 0 and all(len(row) == 26 for row in csv.reader(io.StringIO(r.stdout.decode()))),
       "throttle vs full csv: ragged rows")

    # ---- usage and file errors: exit 2, one line
    bad = os.path.join(tmp, "garbage.h5")
    make_fixture.write(bad, "garbage")
    newer = os.path.join(tmp, "newer.h5")
    make_fixture.write(newer, "newer")
    one_line_error(run([PERFMARK, "diff"]), "no files", "two files")
    one_line_error(run([PERFMARK, "diff", a]), "one file", "two files")
    one_line_error(run([PERFMARK, "diff", a, b, a]), "three files", "two files only")
    one_line_error(diff(a, os.path.join(tmp, "missing.h5")), "missing file", "missing.h5")
    one_line_error(diff(a, bad), "garbage file", "not a perfmark file")
    one_line_error(diff(newer, a), "newer schema", "newer perfmark")
    one_line_error(diff(a, b, "--threshold", "abc"), "bad threshold", "--threshold")
    one_line_error(diff(a, b, "--threshold"), "threshold without value", "needs a value")
    one_line_error(diff(a, b, "--metric", "cycles"), "unknown metric", "no metric 'cycles'")
    one_line_error(diff(a, b, "--region", "nosuch"), "unknown region", "nosuch")
    one_line_error(diff(a, b, "--format", "xml"), "bad format", "xml")
    one_line_error(diff(a, b, "--bogus"), "unknown option", "--bogus")
    r = run([PERFMARK, "diff", "--help"])
    ok(r.returncode == 0 and b"--threshold" in r.stdout, "diff --help")
    r = run([PERFMARK, "--help"])
    ok(b"diff A.h5 B.h5" in r.stdout, "top-level usage lacks diff")

    for n in os.listdir(tmp):
        os.unlink(os.path.join(tmp, n))
    os.rmdir(tmp)
    if errors:
        print("check_diff: %d of %d checks FAILED:" % (len(errors), checks))
        for e in errors[:100]:
            print("  " + e)
        return 1
    print("check_diff: all %d checks passed" % checks)
    return 0


if __name__ == "__main__":
    sys.exit(main())
