#!/usr/bin/env python3
"""Counts over time against ground truth known by construction.

usage: check_series.py BUILD_DIR CASE

phases.c alternates page-touching and spinning phases; under
`perfmark run --interval` the file's /series rows must switch the page-fault
rate on and off in step with the regions, and every thread's rows must sum
to its /thread totals exactly (the rows telescope from the totals' base to
their end). Software events only: any machine, PMU or not.
Exit 0 pass, 1 fail, 77 skip.
"""
import json
import os
import shutil
import subprocess
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from cases import Failure, check, run_cases  # noqa: E402

MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
MPIRUN = ["mpirun", "--oversubscribe", "--bind-to", "none"]


def run(args, env=None, expect=0):
    full = {k: v for k, v in os.environ.items() if not k.startswith("PERFMARK_")}
    full.update(env or {})
    p = subprocess.run(args, env=full, capture_output=True, text=True, errors="replace",
                       timeout=240)
    if expect is not None and p.returncode != expect:
        raise Failure("%s exited %d\nstdout: %s\nstderr: %s" % (
            " ".join(args), p.returncode, p.stdout[-2000:], p.stderr[-2000:]))
    return p


def measure(build, tmp, prog_args, interval="100ms", launcher=(), env=None, name="out.h5"):
    out = os.path.join(tmp, name)
    cmd = [os.path.join(build, "bin", "perfmark"), "run", "-e", "sw", "-o", out]
    if interval:
        cmd += ["--interval", interval]
    p = run(cmd + ["--"] + list(launcher) + prog_args, env=env)
    check(os.path.exists(out), "no file: %s" % p.stderr[-2000:])
    return out, p


def report(build, path, fmt="json"):
    p = run([os.path.join(build, "bin", "perfmark"), "report", path, "--format", fmt])
    return json.loads(p.stdout) if fmt == "json" else p.stdout


def event_col(f, name):
    names = [e["name"].decode() for e in f["events"][()]]
    return names.index(name)


def check_sums(f, what):
    """Every thread's rows sum to its totals, exactly; the process rows to
    the rank totals."""
    s = f["series"]
    thread = s["thread"][()]
    counts = s["counts"][()]
    flags = s["flags"][()]
    check(not flags.any(), "%s: rows flagged %s" % (what, np.unique(flags)))
    totals = f["thread/counts"][()]
    for t in range(totals.shape[0]):
        got = counts[thread == t].sum(axis=0)
        check((got == totals[t]).all(), "%s: thread %d rows sum to %s, totals %s" % (
            what, t, got.tolist(), totals[t].tolist()))
    if len(f["rank/counts"]):
        prank = s["process_rank"][()]
        pcounts = s["process_counts"][()]
        ranks = f["rank/rank"][()]
        for row, r in enumerate(ranks):
            got = pcounts[prank == r].sum(axis=0)
            check((got == f["rank/counts"][()][row]).all(), "%s: rank %d process rows %s, "
                  "totals %s" % (what, r, got.tolist(), f["rank/counts"][()][row].tolist()))
    return len(thread)


def case_phases(build, tmp):
    """100 ms intervals over 300 ms phases: the page-fault rate is on in every
    interval spent wholly in touch, off in every one spent wholly in spin."""
    out, _ = measure(build, tmp, [os.path.join(build, "tests", "phases"), "3", "300"])
    with h5py.File(out) as f:
        s = f["series"]
        check(int(s.attrs["asked_ns"]) == 100000000, "asked %r" % s.attrs["asked_ns"])
        paths = [p.decode() for p in f["regions"]["path"][()]]
        region = s["region"][()]
        pf = s["counts"][()][:, event_col(f, "page-faults")]
        names = [paths[r] if r >= 0 else None for r in region]
        on = off = 0
        for i in range(1, len(names)):
            if names[i] == names[i - 1] == "touch":
                check(pf[i] >= 100, "interval %d wholly in touch has %d page faults" % (i, pf[i]))
                on += 1
            elif names[i] == names[i - 1] == "spin":
                check(pf[i] <= 2, "interval %d wholly in spin has %d page faults" % (i, pf[i]))
                off += 1
        check(on >= 3 and off >= 3, "too few whole intervals: %d in touch, %d in spin (%s)" % (
            on, off, names))
        n = check_sums(f, "phases")
    j = report(build, out)
    series = j["series"]
    values = series["ranks"][0]["values"]["page-faults"]
    check(abs(sum(values) - j["threads"][0]["events"]["page-faults"]["total"]) < 1e-6,
          "the report's bins sum to %r" % sum(values))
    text = report(build, out, "text")
    check("Counts over time" in text and "touch" in text, "text: " + text[-2000:])
    html = report(build, out, "html")
    check('id="series"' in html and "<polyline" in html, "no timeline in the HTML")
    print("phases: %d rows, %d intervals on, %d off; sums exact" % (n, on, off))


def case_sums(build, tmp):
    """A 10 ms interval over a short run: rows sum to the totals exactly."""
    out, _ = measure(build, tmp, [os.path.join(build, "tests", "phases"), "2", "50"],
                     interval="10ms")
    with h5py.File(out) as f:
        n = check_sums(f, "10ms")
        # phases 2 50 runs ~200 ms by construction: a row per 10 ms, half of
        # them at least (a stalled vCPU merges ticks; the sums above stay
        # exact either way)
        check(n >= 10, "only %d rows for ~200 ms at 10 ms" % n)
    print("sums: %d rows at 10 ms, exact" % n)


def case_threads(build, tmp):
    """Threads that end early get their last row at their end: each thread's
    rows sum to its totals, the page faults of each thread exactly."""
    pages = 20000
    out, _ = measure(build, tmp, [os.path.join(build, "tests", "pagefaults"), str(pages), "4"],
                     interval="5ms")
    with h5py.File(out) as f:
        n = check_sums(f, "4 threads")
        thread = f["series/thread"][()]
        check(len(np.unique(thread)) == f["threads"].shape[0],
              "rows for threads %s of %d" % (np.unique(thread), f["threads"].shape[0]))
    # 64 threads ending while a 1 ms tick reads them: ticks land between a
    # thread's final reading and its end (110 to 184 of 192 threads in
    # three runs summed to more than their totals before the end took the
    # excess back).
    out, _ = measure(build, tmp, [os.path.join(build, "tests", "pagefaults"), "2000", "64"],
                     interval="1ms", name="many.h5")
    with h5py.File(out) as f:
        n += check_sums(f, "64 threads at 1 ms")
    print("threads: %d rows, each thread exact" % n)


def case_mpi(build, tmp):
    """2 ranks: each rank's rows are its own; the report keeps both ranks."""
    if not shutil.which("mpirun"):
        print("skip: no mpirun")
        return 77
    out, _ = measure(build, tmp, [os.path.join(build, "tests", "phases_mpi"), "2", "150"],
                     launcher=MPIRUN + ["-np", "2"], env=MPI_ENV)
    with h5py.File(out) as f:
        check_sums(f, "2 ranks")
        ranks = f["threads"]["rank"][()]
        thread = f["series/thread"][()]
        check(sorted(set(ranks[thread].tolist())) == [0, 1], "rows of ranks %s" %
              sorted(set(ranks[thread].tolist())))
        check(sorted(set(f["series/process_rank"][()].tolist())) == [0, 1],
              "process rows of ranks %s" % sorted(set(f["series/process_rank"][()].tolist())))
    j = report(build, out)
    s = j["series"]
    check([r["rank"] for r in s["ranks"]] == [0, 1], "ranks %s" % [r["rank"] for r in s["ranks"]])
    for k, b in enumerate(s["total"]["page-faults"]):
        got = sum(r["values"]["page-faults"][k] for r in s["ranks"])
        check(abs(got - b) < 1e-6, "bin %d: total %r != %r" % (k, b, got))
        check(s["min"]["page-faults"][k] <= s["max"]["page-faults"][k], "min > max")
    text = report(build, out, "text")
    check("the job" in text and "rank 1" in text, "text lacks per-rank tables")
    print("mpi: %d bins, both ranks" % s["bins"])


def case_bad_input(build, tmp):
    """A bad interval: one message, the run goes on without a series."""
    prog = [os.path.join(build, "tests", "phases"), "1", "20"]
    for value, said in (("abc", "is not an interval"), ("100us", "shorter than 1 ms"),
                        ("5parsecs", "is not an interval")):
        out, p = measure(build, tmp, prog, interval=None, env={"PERFMARK_INTERVAL": value},
                         name="bad.h5")
        msgs = [l for l in p.stderr.splitlines() if said in l]
        check(len(msgs) == 1, "%s: want one message with %r: %s" % (value, said, p.stderr))
        with h5py.File(out) as f:
            check(len(f["series/time_ns"]) == 0, "%s: a series was kept" % value)
        os.unlink(out)
    print("bad input: each one message, no series")


def td_series_file(path, variant):
    """A TopDown file of tests/report/make_fixture.py (no PMU here: the
    counts are made up as the runtime writes them) with /series rows added:
    10 intervals of 100 ms per thread, the first 5 in the shares of SHARES[0],
    the 6th with nothing run, the last 4 in SHARES[1] (thread 2 multiplexed
    there: its TopDown group ran half the time, its counts halved)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "report"))
    import make_fixture as mf
    mf.write_topdown(path, variant)
    with h5py.File(path, "a") as f:
        ev = f["events"][()]
        E, G, T = len(ev), int(f.attrs["kernel_groups"]), len(f["threads"])
        method = f.attrs["topdown_method"]
        method = method.decode() if isinstance(method, bytes) else method
        levels = int(f.attrs["topdown_levels"])
        if method == "perf_metrics":
            def tdc(slots, shares):
                return mf.perf_metrics_counts(slots, shares, levels, False)
        else:
            def tdc(slots, shares):
                return mf.zen4_counts(slots, shares, False)
        nrows = 10 * T
        time_ns = np.zeros(nrows, "<u8")
        thread = np.zeros(nrows, "<i4")
        region = np.zeros(nrows, "<i4")
        counts = np.zeros((nrows, E), "<u8")
        en = np.zeros((nrows, G), "<u8")
        run_ = np.zeros((nrows, G), "<u8")
        t0 = 1_700_000_000_000_000_000
        for t in range(T):
            for i in range(10):
                k = t * 10 + i
                time_ns[k], thread[k] = t0 + (i + 1) * 100_000_000, t
                region[k] = 1 if i < 5 else 4
                en[k, :] = run_[k, :] = 100_000_000
                if i == 5:
                    continue
                c = tdc(6_000_000 * (t + 1), mf.SHARES[0 if i < 5 else 1])
                if t == 2 and i > 5:
                    c = [x // 2 for x in c]
                    run_[k, int(ev[0]["group"])] = 50_000_000
                counts[k, :len(c)] = c
        g = f.create_group("series")
        g.attrs.create("asked_ns", 100_000_000, dtype="<u8")
        g["thread_interval_ns"] = np.full(T, 100_000_000, "<u8")
        for name, a in (("time_ns", time_ns), ("thread", thread), ("region", region),
                        ("flags", np.zeros(nrows, "<u4")), ("counts", counts),
                        ("enabled_ns", en), ("running_ns", run_),
                        ("process_time_ns", np.zeros(0, "<u8")),
                        ("process_rank", np.zeros(0, "<i4")),
                        ("process_counts", np.zeros((0, E), "<u8")),
                        ("process_enabled_ns", np.zeros((0, G), "<u8")),
                        ("process_running_ns", np.zeros((0, G), "<u8"))):
            g[name] = a
    return mf.SHARES


def case_topdown(build, tmp):
    """TopDown per interval (perf stat -I --topdown): the level-1 shares of
    each interval are those the counts were made from, for Intel's
    PERF_METRICS (level 1 and 2) and AMD's pipeline utilization."""
    names = ["retiring", "bad_speculation", "frontend_bound", "backend_bound"]
    for variant in ("topdown_icl", "topdown_spr", "topdown_zen4"):
        path = os.path.join(tmp, variant + ".h5")
        shares = td_series_file(path, variant)
        j = report(build, path)
        td = j["series"].get("topdown")
        check(td is not None, "%s: no series.topdown in %s" % (variant, sorted(j["series"])))
        for who, ratios in [("the job", td["total"])] + [
                ("rank %d" % r["rank"], r["ratios"]) for r in td["ranks"]]:
            got_names = [n for n in names if n in ratios]
            check(got_names == names, "%s %s: nodes %s" % (variant, who, sorted(ratios)))
            for b in range(10):
                if b == 5:
                    check(all(ratios[n][b] is None for n in names),
                          "%s %s: the idle interval %d has ratios" % (variant, who, b))
                    continue
                want = shares[0 if b < 5 else 1]
                for n, w in zip(names, want):
                    got = ratios[n][b]
                    check(got is not None and abs(got - w) < 0.006,
                          "%s %s interval %d: %s %r, made from %.3f" % (variant, who, b, n,
                                                                       got, w))
            if variant == "topdown_spr":
                check("memory_bound" in ratios, "%s: no level 2 (%s)" % (variant, sorted(ratios)))
        text = report(build, path, "text")
        lines = [l for l in text.splitlines() if l.strip().startswith("0.100 ") or
                 l.strip().startswith("0.600 ")]
        pcts = [float(x[:-1]) / 100 for x in lines[0].split() if x.endswith("%")] if lines else []
        check(len(lines) >= 2 and len(pcts) >= 4 and
              all(abs(g - w) < 0.006 for g, w in zip(pcts, shares[0])) and
              lines[1].split()[-5:-1] == ["-"] * 4,
              "%s text (want %s, then the idle interval's -): %s" % (variant, shares[0], lines))
        html = report(build, path, "html")
        check('id="series-topdown"' in html, "%s: no TopDown timeline in the HTML" % variant)
    print("topdown: level-1 shares per interval as made, for perf_metrics (1, 2) and zen4")


def main():
    return run_cases("series", globals(), __doc__,
                     lambda args, tmp: (os.path.abspath(args[0]), tmp))


if __name__ == "__main__":
    sys.exit(main())
