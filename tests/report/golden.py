#!/usr/bin/python3
"""Golden outputs of `perfmark report` and `perfmark diff`: every output a
user sees, byte for byte, on every fixture.

usage:
  golden.py check  PERFMARK MANIFEST [--gen GEN_SYNTHETIC] [-j N]
  golden.py update PERFMARK MANIFEST [--gen GEN_SYNTHETIC] [-j N]
  golden.py against OLD_PERFMARK NEW_PERFMARK [--real BUILD_DIR]
                    [--gen GEN_SYNTHETIC] [-j N] [FILE.h5 ...]

In a temporary directory: every variant of make_fixture.py (valid files and
bad ones), two small synthetic job files of bench/gen_synthetic (default:
gen_synthetic next to PERFMARK), a few hand-made bad inputs (zero bytes, a
directory, a cut superblock, a missing file, per-rank files given together).
Then a fixed matrix of commands (`matrix()` below): report in every format,
--by rank|thread in every format, --region, --top, --metric, -o, a few
PERFMARK_REPORT_BLOCK sizes, usage errors and help texts; diff in every
format on pairs of files, with --metric, --threshold, --region, -o; bad
files. Each command runs with the temporary directory as its cwd and
relative file names, LC_ALL=C, TZ=UTC, no inherited PERFMARK_* or MPI
launcher variable, stdin /dev/null, stdout and stderr pipes, in a session of
its own (no controlling terminal). Its result is the SHA-256 of its exit
status, stdout, stderr and the file it wrote with -o.

check   compares each result with MANIFEST (a line per command: hash, two
        spaces, the command), prints every command whose hash differs, that
        the manifest lacks or that the manifest lists but was not run; exit 1
        on any, 0 when all match.
update  rewrites MANIFEST from PERFMARK's results.
against runs the matrix with both binaries on the same files and compares
        the bytes; each mismatch is printed with a unified diff (first 40
        lines). FILE.h5 arguments are added to the files (report matrix on
        each, diff of each with itself and with the next); --real BUILD_DIR
        first writes real files with BUILD_DIR/bin/perfmark run, the way the
        suite's checks do (omp_work, mpi_omp_demo and mpi_calls under
        mpirun, overhead_regions throttle, mpi_poll, pagefaults), once, for
        both binaries. Exit 1 on any mismatch.

What would make an output depend on time or the machine is left out: a read
stopped by the stall budget or PERFMARK_REPORT_TIMEOUT (--read-timeout only
with budgets no read here comes near), `list`, `check`, `selftest`, `run`.
Run with /usr/bin/python3 (h5py, for make_fixture.py).
"""
import argparse
import concurrent.futures
import difflib
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_fixture  # noqa: E402

# The bad variants: what check_report.py expects a one-line error for.
BAD_VARIANTS = ["newer", "foreign", "truncated", "garbage", "badshape", "badtree", "badthrottle"]
GOOD_VARIANTS = [v for v in make_fixture.VARIANTS if v not in BAD_VARIANTS]
# Hand-made inputs that are not one good perfmark file (check_report.py's
# check_robustness and check_bad).
ODD_FILES = ["zero-bytes.h5", "a-directory.h5", "cut-superblock.h5", "does-not-exist.h5"]
# bench/gen_synthetic: OUT RANKS THREADS_PER_RANK REGIONS EVENTS (deterministic numbers)
SYNTHETIC = {"synthetic.h5": ["3", "2", "12", "8"], "synthetic1.h5": ["1", "4", "6", "1"]}

FORMATS = ["text", "csv", "json", "html"]
DIFF_FORMATS = ["text", "csv", "json"]
BYS = ["rank", "thread"]

# Fixtures the selection options run on: (--region by name, --region by
# path, the first event key): names that exist in them.
OPTION_FILES = {
    "full.h5": ("solve", "main/io", "page-faults"),
    "ranks.h5": ("MPI_Send", "main/solve", "page-faults"),
    "ranks_shuffled.h5": ("MPI_Send", "main/solve", "page-faults"),
    "omp.h5": ("omp taskwait", "main/omp parallel f+0x10 (4 threads)", "page-faults"),
    "throttle.h5": ("compute", "main/MPI_Test", "task-clock"),
    "synthetic.h5": ("region_2", "region_0/region_1", "cycles"),
}
# Files read again a few thread rows at a time (PERFMARK_REPORT_BLOCK):
# deterministic, and a separate code path of the model.
BLOCK_FILES = {"throttle.h5": ["1"], "ranks_shuffled.h5": ["1"], "omp.h5": ["1"],
               "synthetic.h5": ["1", "4"]}

DIFF_PAIRS = [
    ("full.h5", "full.h5"), ("full.h5", "clean.h5"), ("clean.h5", "full.h5"),
    ("throttle.h5", "throttle_old.h5"), ("throttle_old.h5", "throttle.h5"),
    ("throttle.h5", "throttle_none.h5"), ("throttle.h5", "throttle.h5"),
    ("ranks.h5", "ranks_shuffled.h5"), ("ranks_shuffled.h5", "ranks.h5"),
    ("topdown_icl.h5", "topdown_spr.h5"), ("topdown_skl.h5", "topdown_zen4.h5"),
    ("topdown_zen5.h5", "topdown_arm.h5"), ("topdown_atom.h5", "topdown_adl.h5"),
    ("topdown_missing.h5", "topdown_nol2.h5"), ("branch_icl.h5", "full.h5"),
    ("omp.h5", "ranks.h5"), ("empty.h5", "full.h5"), ("manyranks.h5", "ranks.h5"),
    ("rankfile.h5", "ranks.h5"), ("extras.h5", "full.h5"),
    ("synthetic.h5", "synthetic.h5"), ("synthetic.h5", "synthetic1.h5"),
]

MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_mpi_yield_when_idle": "1"}
MPIRUN = ["mpirun", "--oversubscribe", "--bind-to", "none"]
LAUNCHER_VARS = ("OMPI_", "PMIX_", "PMI_", "SLURM_", "PBS_")
RUN_TIMEOUT = 120


class Cmd:
    """One command: perfmark ARGS, with ENV added, writing OUT with -o."""

    def __init__(self, args, env=None, out=None):
        self.args = list(args)
        self.env = dict(env or {})
        self.out = out
        self.key = " ".join(["%s=%s" % (k, quote(v)) for k, v in sorted(self.env.items())] +
                            ["perfmark"] + [quote(a) for a in self.args])


def quote(a):
    """A stable one-line ASCII spelling of an argument."""
    if re.fullmatch(r"[A-Za-z0-9_@%+=:,./-]+", a):
        return a
    return json.dumps(a, ensure_ascii=True)


def report_matrix(f):
    """Every format, and --by rank|thread in every format."""
    cmds = []
    for fmt in FORMATS:
        cmds.append(Cmd(["report", f, "--format", fmt]))
    for by in BYS:
        for fmt in FORMATS:
            cmds.append(Cmd(["report", f, "--format", fmt, "--by", by]))
    return cmds


def option_matrix(f, name, path, event):
    cmds = []
    for region in (name, path):
        for fmt in FORMATS:
            cmds.append(Cmd(["report", f, "--format", fmt, "--region", region]))
    for metric in ("time", "excl", "visits", event):
        for fmt in FORMATS:
            cmds.append(Cmd(["report", f, "--format", fmt, "--top", "3", "--metric", metric]))
    for fmt in ("text", "json"):
        cmds.append(Cmd(["report", f, "--format", fmt, "--by", "rank", "--metric", "visits"]))
        cmds.append(Cmd(["report", f, "--format", fmt, "--by", "thread", "--metric", event]))
        cmds.append(Cmd(["report", f, "--format", fmt, "--by", "thread", "--metric", "excl",
                         "--top", "2"]))
    for fmt in ("text", "csv"):
        cmds.append(Cmd(["report", f, "--format", fmt, "--region", name, "--top", "2",
                         "--metric", "excl"]))
    cmds.append(Cmd(["report", f, "--by", "rank", "--region", path, "--top", "2"]))
    cmds.append(Cmd(["report", f, "--metric", "no-such-event"]))
    cmds.append(Cmd(["report", f, "--region", "no such region"]))
    return cmds


def diff_matrix(a, b):
    return [Cmd(["diff", a, b, "--format", fmt]) for fmt in DIFF_FORMATS]


def matrix(have_synthetic):
    """The commands of check/update/against on the generated files."""
    cmds = []
    good = [v + ".h5" for v in GOOD_VARIANTS]
    if have_synthetic:
        good += sorted(SYNTHETIC)
    for f in good:
        cmds += report_matrix(f)
    for f, (name, path, event) in OPTION_FILES.items():
        if f in good:
            cmds += option_matrix(f, name, path, event)
    for f, blocks in BLOCK_FILES.items():
        if f not in good:
            continue
        for n in blocks:
            env = {"PERFMARK_REPORT_BLOCK": n}
            for fmt in ("text", "csv", "json"):
                cmds.append(Cmd(["report", f, "--format", fmt], env))
            cmds.append(Cmd(["report", f, "--by", "rank"], env))
    # the other spellings, -o, usage errors, help texts
    cmds += [
        Cmd(["report", "full.h5"]),
        Cmd(["report", "full.h5", "--by", "region"]),
        Cmd(["report", "full.h5", "--format=json"]),
        Cmd(["report", "-f", "csv", "full.h5"]),
        Cmd(["report", "full.h5", "--format", "json", "-o", "out-report.json"], out="out-report.json"),
        Cmd(["report", "omp.h5", "--format", "html", "-o", "out-report.html"], out="out-report.html"),
        Cmd(["report", "ranks.h5", "--by", "thread", "-o", "out-report.txt"], out="out-report.txt"),
        Cmd(["report", "full.h5", "-o", "no-such-dir/out.txt"]),
        Cmd(["report", "full.h5", "--region", "\u00dc\u00f1\u00ef"]),
        Cmd(["report", "full.h5", "--format", "csv", "--region", "=cmd"]),
        Cmd(["report", "full.h5", "--format", "json", "--region", "main/solve/halo, \"x\"\nnext"]),
        Cmd(["report", "full.h5", "--top", "1", "--metric", "instructions"]),
        Cmd(["report", "full.h5", "--top", "100"]),
        Cmd(["report", "job.rank0.h5", "job.rank1.h5"]),
        Cmd(["report", "job.rank0.h5"]),
        Cmd(["report", "full.h5", "clean.h5"]),
        Cmd(["report"]),
        Cmd(["report", "full.h5", "--format", "xml"]),
        Cmd(["report", "full.h5", "--by", "node"]),
        Cmd(["report", "full.h5", "--top", "0"]),
        Cmd(["report", "full.h5", "--top", "-1"]),
        Cmd(["report", "full.h5", "--top", "x"]),
        Cmd(["report", "full.h5", "--no-such-option"]),
        Cmd(["report", "full.h5", "--format"]),
        Cmd(["report", "full.h5", "--read-timeout", "0"]),
        Cmd(["report", "ranks.h5", "--format", "json", "--read-timeout", "60"]),
        Cmd(["report", "full.h5", "--read-timeout", "-1"]),
        Cmd(["report", "full.h5", "--read-timeout", "soon"]),
        Cmd(["report", "--help"]),
        Cmd(["diff", "--help"]),
        Cmd(["help"]),
        Cmd(["help", "report"]),
        Cmd(["help", "diff"]),
        Cmd(["--help"]),
        Cmd([]),
    ]
    # bad inputs: exit status and the one-line message
    for f in [v + ".h5" for v in BAD_VARIANTS] + ODD_FILES:
        for fmt in FORMATS:
            cmds.append(Cmd(["report", f, "--format", fmt]))
        cmds.append(Cmd(["report", f, "--by", "rank"]))
        cmds.append(Cmd(["diff", "full.h5", f]))
        cmds.append(Cmd(["diff", f, "full.h5", "--format", "json"]))
    # diff
    pairs = [(a, b) for a, b in DIFF_PAIRS if a in good and b in good]
    for a, b in pairs:
        cmds += diff_matrix(a, b)
    for fmt in DIFF_FORMATS:
        cmds += [
            Cmd(["diff", "full.h5", "clean.h5", "--format", fmt, "--metric", "page-faults"]),
            Cmd(["diff", "full.h5", "clean.h5", "--format", fmt, "--metric", "ipc"]),
            Cmd(["diff", "full.h5", "clean.h5", "--format", fmt, "--threshold", "0"]),
            Cmd(["diff", "ranks.h5", "ranks_shuffled.h5", "--format", fmt, "--region",
                 "main/solve"]),
            Cmd(["diff", "throttle_old.h5", "throttle.h5", "--format", fmt, "--metric",
                 "task-clock", "--threshold", "1"]),
        ]
    cmds += [
        Cmd(["diff", "full.h5", "clean.h5", "--threshold", "5", "--metric", "time"]),
        Cmd(["diff", "full.h5", "clean.h5", "--threshold", "5%"]),
        Cmd(["diff", "clean.h5", "full.h5", "--metric", "instructions", "--threshold", "1"]),
        Cmd(["diff", "full.h5", "clean.h5", "--region", "solve", "--threshold", "0"]),
        Cmd(["diff", "full.h5", "clean.h5", "--region", "\u00dc\u00f1\u00ef"]),
        Cmd(["diff", "-f", "json", "full.h5", "clean.h5"]),
        Cmd(["diff", "full.h5", "clean.h5", "--format", "json", "-o", "out-diff.json"],
            out="out-diff.json"),
        Cmd(["diff", "full.h5", "clean.h5", "--threshold", "0", "-o", "out-diff.txt"],
            out="out-diff.txt"),
        Cmd(["diff", "full.h5", "clean.h5", "-o", "no-such-dir/out.txt"]),
        Cmd(["diff", "full.h5", "clean.h5", "--metric", "no-such-event"]),
        Cmd(["diff", "full.h5", "clean.h5", "--region", "no such region"]),
        Cmd(["diff", "full.h5", "clean.h5", "--threshold", "-1"]),
        Cmd(["diff", "full.h5", "clean.h5", "--threshold", "abc"]),
        Cmd(["diff", "full.h5", "clean.h5", "--format", "html"]),
        Cmd(["diff", "full.h5", "clean.h5", "--no-such-option"]),
        Cmd(["diff", "full.h5", "clean.h5", "--metric"]),
        Cmd(["diff", "full.h5", "clean.h5", "--read-timeout", "0"]),
        Cmd(["diff", "full.h5", "clean.h5", "--read-timeout", "soon"]),
        Cmd(["diff", "full.h5"]),
        Cmd(["diff", "full.h5", "clean.h5", "ranks.h5"]),
        Cmd(["diff"]),
    ]
    return cmds


def extra_matrix(files, tmp):
    """Real and given files (against mode only): names read from each file."""
    cmds = []
    for f in files:
        cmds += report_matrix(f)
        name, event = first_names(os.path.join(tmp, f))
        metrics = ["time", "excl", "visits"] + ([event] if event else [])
        for metric in metrics:
            for fmt in ("text", "csv", "json"):
                cmds.append(Cmd(["report", f, "--format", fmt, "--top", "3", "--metric", metric]))
        if name is not None:
            for fmt in ("text", "csv", "json"):
                cmds.append(Cmd(["report", f, "--format", fmt, "--region", name]))
        env = {"PERFMARK_REPORT_BLOCK": "1"}
        for fmt in ("text", "json"):
            cmds.append(Cmd(["report", f, "--format", fmt], env))
        cmds += diff_matrix(f, f)
    return cmds


def first_names(path):
    """The name of the file's second region (else first) and its first event."""
    try:
        import h5py
        with h5py.File(path, "r") as h:
            names = [n.decode("utf-8", "replace") if isinstance(n, bytes) else str(n)
                     for n in h["regions"]["name"]]
            events = [n.decode("utf-8", "replace") if isinstance(n, bytes) else str(n)
                      for n in h["events"]["name"]]
    except Exception:  # a bad or foreign file: the plain matrix only
        return None, None
    name = names[1] if len(names) > 1 else (names[0] if names else None)
    return name, (events[0] if events else None)


# ------------------------------------------------------------------ files

def write_files(tmp, gen):
    """Every fixture variant, the synthetic files, the odd inputs; returns
    whether the synthetic files were written."""
    for v in make_fixture.VARIANTS:
        make_fixture.write(os.path.join(tmp, v + ".h5"), v)
    open(os.path.join(tmp, "zero-bytes.h5"), "wb").close()
    os.mkdir(os.path.join(tmp, "a-directory.h5"))
    with open(os.path.join(tmp, "full.h5"), "rb") as src:
        head = src.read(40)
    with open(os.path.join(tmp, "cut-superblock.h5"), "wb") as f:
        f.write(head)
    for r in range(2):
        make_fixture.write(os.path.join(tmp, "job.rank%d.h5" % r), "rankfile")
    if not gen:
        return False
    for name, args in SYNTHETIC.items():
        p = subprocess.run([gen, name] + args, cwd=tmp, capture_output=True, timeout=RUN_TIMEOUT)
        if p.returncode != 0:
            raise SystemExit("golden: %s %s failed: %s" % (gen, name, p.stderr.decode(errors="replace")))
    return True


def run_env(extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("PERFMARK_") and not k.startswith(LAUNCHER_VARS) and
           not k.startswith("LC_") and k not in ("LANG", "LANGUAGE", "TZ")}
    env.update(LC_ALL="C", TZ="UTC")
    env.update(extra)
    return env


def run_one(perfmark, cmd, cwd):
    """(exit status, stdout, stderr, bytes written to cmd.out or None)."""
    out = os.path.join(cwd, cmd.out) if cmd.out else None
    if out and os.path.exists(out):
        os.unlink(out)
    p = subprocess.Popen([perfmark] + cmd.args, cwd=cwd, env=run_env(cmd.env),
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True)
    try:
        so, se = p.communicate(timeout=RUN_TIMEOUT)
        status = p.returncode
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        so, se = p.communicate()
        status = "timeout"
    data = None
    if out and os.path.isfile(out):
        with open(out, "rb") as f:
            data = f.read()
        os.unlink(out)
    return (status, so, se, data)


def digest(res):
    status, so, se, data = res
    h = hashlib.sha256()
    h.update(b"exit %s\n" % str(status).encode())
    h.update(b"stdout %d\n" % len(so) + so)
    h.update(b"stderr %d\n" % len(se) + se)
    if data is None:
        h.update(b"no file\n")
    else:
        h.update(b"file %d\n" % len(data) + data)
    return h.hexdigest()


def run_all(perfmark, cmds, cwd, jobs):
    """{key: result}, in the matrix's order. Commands writing with -o run
    one at a time after the others (their files share the directory)."""
    results = {}
    plain = [c for c in cmds if not c.out]
    if jobs > 1:
        with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
            for c, r in zip(plain, ex.map(lambda c: run_one(perfmark, c, cwd), plain)):
                results[c.key] = r
    else:
        for c in plain:
            results[c.key] = run_one(perfmark, c, cwd)
    for c in cmds:
        if c.out:
            results[c.key] = run_one(perfmark, c, cwd)
    return {c.key: results[c.key] for c in cmds}


def check_unique(cmds):
    seen = set()
    for c in cmds:
        if c.key in seen:
            raise SystemExit("golden: the matrix runs %r twice" % c.key)
        seen.add(c.key)


def find_gen(opt, *perfmarks):
    if opt:
        return os.path.abspath(opt)  # the commands run in the temporary directory
    for p in perfmarks:
        g = os.path.join(os.path.dirname(os.path.abspath(p)), "gen_synthetic")
        if os.path.exists(g):
            return g
    return None


# ---------------------------------------------------------- check / update

def read_manifest(path):
    want = {}
    with open(path, encoding="ascii") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            h, sep, key = line.partition("  ")
            if not sep or not re.fullmatch(r"[0-9a-f]{64}", h) or key in want:
                raise SystemExit("golden: %s:%d: not 'SHA256  COMMAND' or a repeated command"
                                 % (path, n))
            want[key] = h
    return want


def write_manifest(path, got):
    with open(path, "w", encoding="ascii") as f:
        f.write("# perfmark report/diff golden outputs: SHA-256 of (exit status, stdout, stderr,\n"
                "# -o file) per command; tests/report/golden.py, tests/report/README.md.\n"
                "# Regenerate: /usr/bin/python3 tests/report/golden.py update BUILD/bin/perfmark "
                "tests/report/golden.sha256\n")
        for key, h in got.items():
            f.write("%s  %s\n" % (h, key))


def show(res, lines=3):
    status, so, se, data = res
    s = "exit %s, %d bytes stdout, %d bytes stderr" % (status, len(so), len(se))
    if se:
        s += ": " + " | ".join(se.decode("utf-8", "replace").splitlines()[:lines])
    return s


def cmd_check(args, update):
    perfmark = os.path.abspath(args.perfmark)
    gen = find_gen(args.gen, perfmark)
    if not gen or not os.path.exists(gen):
        print("golden: no gen_synthetic (give --gen PATH)")
        return 2
    t0 = time.time()
    tmp = tempfile.mkdtemp(prefix="pm-golden-")
    try:
        write_files(tmp, gen)
        cmds = matrix(True)
        check_unique(cmds)
        res = run_all(perfmark, cmds, tmp, args.jobs)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    got = {k: digest(r) for k, r in res.items()}
    took = time.time() - t0
    if update:
        write_manifest(args.manifest, got)
        print("golden: wrote %d commands to %s (%.1f s)" % (len(got), args.manifest, took))
        return 0
    want = read_manifest(args.manifest)
    bad = 0
    for key, h in got.items():
        if key not in want:
            print("NOT IN MANIFEST: %s\n    %s" % (key, show(res[key])))
            bad += 1
        elif want[key] != h:
            print("MISMATCH: %s\n    %s" % (key, show(res[key])))
            bad += 1
    for key in want:
        if key not in got:
            print("NOT RUN (in the manifest): %s" % key)
            bad += 1
    if bad:
        print("golden: %d of %d commands differ from %s (%.1f s). If the change is intended: "
              "golden.py update; to see it: golden.py against OLD NEW (tests/report/README.md)"
              % (bad, len(got), args.manifest, took))
        return 1
    print("golden: all %d commands match %s (%.1f s)" % (len(got), args.manifest, took))
    return 0


# ----------------------------------------------------------------- against

def measure(tmp, name, cmd, env):
    """`perfmark run` writing NAME into tmp, as the suite's checks do."""
    e = run_env(dict(MPI_ENV, TMPDIR=tmp, **env))
    p = subprocess.run(cmd, cwd=tmp, env=e, stdin=subprocess.DEVNULL, capture_output=True,
                       timeout=600)
    path = os.path.join(tmp, name)
    if p.returncode != 0 or not os.path.exists(path):
        print("real: %s failed (exit %d): %s" % (name, p.returncode,
                                                 p.stderr.decode(errors="replace")[-500:]))
        return False
    return True


def real_files(build, tmp):
    """Write the real files; returns (files, diff pairs)."""
    build = os.path.abspath(build)
    pm = os.path.join(build, "bin", "perfmark")
    tests = os.path.join(build, "tests")
    if not os.path.exists(pm):
        raise SystemExit("golden: no %s" % pm)
    mpirun = shutil.which("mpirun")
    omp_work = next((os.path.join(tests, p) for p in ("omp_work_clang", "omp_work_gcc")
                     if os.path.exists(os.path.join(tests, p))), os.path.join(tests, "omp_work_gcc"))
    sw = [pm, "run", "-q", "-e", "sw", "-o"]
    jobs = [  # name, program, command, environment, needs mpirun
        ("real_omp.h5", omp_work, sw + ["real_omp.h5", "--", omp_work, "pages", "50"],
         {"OMP_NUM_THREADS": "4"}, False),
        ("real_mpi.h5", os.path.join(build, "bin", "mpi_omp_demo"),
         sw + ["real_mpi.h5", "--"] + MPIRUN + ["-np", "2", os.path.join(build, "bin", "mpi_omp_demo")],
         {"OMP_NUM_THREADS": "2"}, True),
        ("real_mpi_calls.h5", os.path.join(tests, "mpi_calls"),
         sw + ["real_mpi_calls.h5", "--"] + MPIRUN + ["-np", "4", os.path.join(tests, "mpi_calls")],
         {}, True),
        ("real_throttle.h5", os.path.join(tests, "overhead_regions"),
         sw + ["real_throttle.h5", "--", os.path.join(tests, "overhead_regions"), "throttle",
               "100000"], {}, False),
        ("real_poll.h5", os.path.join(tests, "mpi_poll"),
         MPIRUN + ["-np", "2"] + sw + ["real_poll.h5", "--", os.path.join(tests, "mpi_poll"),
                                       "1200000"], {}, True),
        ("real_pf_a.h5", os.path.join(tests, "pagefaults"),
         sw + ["real_pf_a.h5", "--", os.path.join(tests, "pagefaults"), "1000", "2"], {}, False),
        ("real_pf_b.h5", os.path.join(tests, "pagefaults"),
         sw + ["real_pf_b.h5", "--", os.path.join(tests, "pagefaults"), "3000", "2"], {}, False),
    ]
    files = []
    for name, prog, cmd, env, mpi in jobs:
        if not os.path.exists(prog):
            print("real: %s skipped: %s is not built" % (name, prog))
            continue
        if mpi and not mpirun:
            print("real: %s skipped: no mpirun on PATH" % name)
            continue
        t0 = time.time()
        if measure(tmp, name, cmd, env):
            files.append(name)
            print("real: %s written (%.1f s)" % (name, time.time() - t0))
    pairs = [(a, b) for a, b in [("real_pf_a.h5", "real_pf_b.h5"), ("real_mpi.h5", "real_mpi_calls.h5"),
                                 ("real_poll.h5", "real_mpi.h5"), ("real_omp.h5", "real_throttle.h5")]
             if a in files and b in files]
    return files, pairs


def render(res):
    status, so, se, data = res
    parts = ["exit status: %s" % status, "--- stdout ---", so.decode("utf-8", "backslashreplace"),
             "--- stderr ---", se.decode("utf-8", "backslashreplace")]
    if data is not None:
        parts += ["--- written file ---", data.decode("utf-8", "backslashreplace")]
    return "\n".join(parts).splitlines()


def cmd_against(args):
    old, new = os.path.abspath(args.old), os.path.abspath(args.new)
    for p in (old, new):
        if not os.path.exists(p):
            print("golden: no %s" % p)
            return 2
    gen = find_gen(args.gen, new, old)
    if args.real and not gen:
        gen = find_gen(None, os.path.join(args.real, "bin", "perfmark"))
    t0 = time.time()
    tmp = tempfile.mkdtemp(prefix="pm-golden-against-")
    try:
        have_syn = write_files(tmp, gen)
        if not have_syn:
            print("note: no gen_synthetic (give --gen PATH): the synthetic files are left out")
        cmds = matrix(have_syn)
        extra, pairs = [], []
        if args.real:
            extra, pairs = real_files(args.real, tmp)
        for i, path in enumerate(args.files):
            name = "extra%d-%s" % (i + 1, os.path.basename(path))
            os.symlink(os.path.abspath(path), os.path.join(tmp, name))
            extra.append(name)
        given = [e for e in extra if e.startswith("extra")]
        pairs += list(zip(given, given[1:]))
        cmds += extra_matrix(extra, tmp)
        for a, b in pairs:
            cmds += diff_matrix(a, b)
        if "real_pf_a.h5" in extra and "real_pf_b.h5" in extra:
            cmds += [Cmd(["diff", "real_pf_a.h5", "real_pf_b.h5", "--format", fmt, "--metric",
                          "page-faults", "--threshold", "50"]) for fmt in DIFF_FORMATS]
        check_unique(cmds)
        t1 = time.time()
        ra = run_all(old, cmds, tmp, args.jobs)
        rb = run_all(new, cmds, tmp, args.jobs)
        t2 = time.time()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    bad = 0
    for c in cmds:
        a, b = ra[c.key], rb[c.key]
        if a == b:
            continue
        bad += 1
        print("MISMATCH: %s" % c.key)
        d = list(difflib.unified_diff(render(a), render(b), "old", "new", lineterm="", n=2))
        for line in d[:40]:
            print("    " + line)
        if len(d) > 40:
            print("    ... %d more diff lines" % (len(d) - 40))
    print("golden against: %d commands (%d on real or given files), %d differ; files %.1f s, "
          "both binaries %.1f s" % (len(cmds), sum(1 for c in cmds if any(
              a in extra for a in c.args)), bad, t1 - t0, t2 - t1))
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="mode", required=True)
    for mode in ("check", "update"):
        p = sub.add_parser(mode)
        p.add_argument("perfmark")
        p.add_argument("manifest")
    p = sub.add_parser("against")
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("--real", metavar="BUILD_DIR")
    p.add_argument("files", nargs="*", metavar="FILE.h5")
    for p in sub.choices.values():
        p.add_argument("--gen", metavar="GEN_SYNTHETIC",
                       help="bench/gen_synthetic (default: next to the perfmark binary)")
        p.add_argument("-j", "--jobs", type=int, default=1, help="commands at a time (default 1)")
    args, rest = ap.parse_known_args()
    if rest and (args.mode != "against" or any(a.startswith("-") for a in rest)):
        ap.error("unrecognized arguments: %s" % " ".join(rest))
    if args.mode == "against":
        args.files += rest  # FILE.h5 arguments after an option
        return cmd_against(args)
    return cmd_check(args, args.mode == "update")


if __name__ == "__main__":
    sys.exit(main())
