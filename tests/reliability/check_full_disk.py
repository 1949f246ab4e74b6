#!/usr/bin/python3
"""A full disk, a missing output directory, a failed write: the application's
fate never changes (issue "Measuring never breaks the job").

usage: /usr/bin/python3 check_full_disk.py BUILD_DIR CASE
  single_KK       one process writing to a real tmpfs (64 KiB) filled to leave
                  KK KiB: the program's exit status and stdout are those of a
                  plain run, no temporary file is left there, and the file is
                  where the output asked for it (if it fits) or in
                  PERFMARK_FALLBACK_DIR, with one message naming it; the
                  report reads it and the page faults are exact
  mpi_KK          the same for a 2-rank job (mpi_app), within a time bound
  demo_12         the project's own demo, 2 ranks x 2 threads, 12 KiB free
                  (this hung the whole job in HDF5's collective close before)
  order           the fallback order: PERFMARK_FALLBACK_DIR, then $TMPDIR
  nowhere         the output, the fallback, $TMPDIR, /tmp and /var/tmp all
                  full: a text summary on stderr names the regions with their
                  visits; status and stdout unchanged; no temporary files
  run_refuses     perfmark run -o /no/such/dir/x.h5: exit 2 and one message
                  before anything starts (the program never runs)
  start_warns     the same directory under a bare LD_PRELOAD: one message at
                  start, the data in the fallback at the end
  single_8_preload  single_8 with the stand-in below, forced
The tmpfs lives in a private mount namespace (`unshare -m`, or `unshare -rm`
without root), so nothing stays mounted. Where neither works (or with
PM_FULL_DISK_MODE=preload), a preloaded stand-in (enospc_preload.c) fails
writes under the "full" directories with ENOSPC after the free size; each
case prints which fault source ran. Exit 0 = pass, 77 = skipped.
"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # tests/: e2e helpers
import e2e  # noqa: E402
from e2e import MPI_ENV, MPIRUN, PERFMARK, Measured, check, perfmark_lines, text  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
FAULTS = os.path.join(BUILD, "tests", "faults")
MPI_APP = os.path.join(BUILD, "tests", "mpi_app")
DEMO = os.path.join(BUILD, "bin", "mpi_omp_demo")
SIZE_KB = 64
# Everything the tests keep lives under the build tree, not /tmp, which the
# `nowhere` case mounts over.
SCRATCH = os.path.join(BUILD, "Testing", "full_disk")


def mkdtemp():
    os.makedirs(SCRATCH, exist_ok=True)
    return tempfile.mkdtemp(dir=SCRATCH)
TIME_BOUND = 120  # seconds: a job that hangs fails here instead of hanging CI


def namespace_prefix():
    """How to get a private mount namespace here, or None (printed why)."""
    for prefix in (["unshare", "-m", "--propagation", "private"],
                   ["unshare", "-rm", "--propagation", "private"]):
        if subprocess.run(prefix + ["true"], capture_output=True).returncode == 0:
            return prefix
    return None


PRELOAD = os.path.join(BUILD, "tests", "libpm_enospc.so")


def in_full_preload(cmd, full, free_kb, env, extra_full=(), cwd=None, timeout=TIME_BOUND):
    """The stand-in: writes under full (and extra_full) fail with ENOSPC
    once free_kb KiB are written there."""
    print("fault source: the ENOSPC preload (%s), after %d KiB" % (PRELOAD, free_kb))
    outside = mkdtemp()
    os.makedirs(full, exist_ok=True)
    for d in extra_full:
        os.makedirs(d, exist_ok=True)
    e = dict(env, PM_ENOSPC_DIRS=":".join((full,) + tuple(extra_full)),
             PM_ENOSPC_AFTER=str(free_kb * 1024),
             LD_PRELOAD=PRELOAD + (":" + env["LD_PRELOAD"] if env.get("LD_PRELOAD") else ""))
    full_env = dict(os.environ)
    for k in list(full_env):
        if k.startswith("PERFMARK_"):
            del full_env[k]
    full_env.update(e)
    p = subprocess.run(cmd, env=full_env, cwd=cwd, timeout=timeout, capture_output=True,
                       text=True, errors="replace")
    listing = os.listdir(full)
    for f in listing:
        if f.endswith(".h5"):
            shutil.copy(os.path.join(full, f), outside)
    return p.returncode, p.stdout, p.stderr, listing, outside


MOUNT_FAILED = 97


def in_full_tmpfs(cmd, full, free_kb, env, extra_full=(), cwd=None, timeout=TIME_BOUND,
                  scratch=None):
    """Run cmd in a private mount namespace where `full` (and each of
    extra_full) is a 64 KiB tmpfs filled to leave free_kb KiB. Returns the
    completed process and the listing and copies of `full` taken inside."""
    prefix = namespace_prefix()
    if prefix is None or os.environ.get("PM_FULL_DISK_MODE") == "preload":
        if any(d in ("/tmp", "/var/tmp") for d in extra_full):
            raise Skip("the preload stand-in cannot fill /tmp for other processes")
        return in_full_preload(cmd, full, free_kb, env, extra_full, cwd, timeout)
    print("fault source: a real %d KiB tmpfs with %d KiB free (%s)"
          % (SIZE_KB, free_kb, " ".join(prefix)))
    outside = tempfile.mkdtemp(dir=scratch) if scratch else mkdtemp()
    os.makedirs(full, exist_ok=True)
    for d in extra_full:
        os.makedirs(d, exist_ok=True)
    fill = []
    for d in (full,) + tuple(extra_full):
        # dd stops at ENOSPC by design; a mount that fails must stop the
        # case (status MOUNT_FAILED), not run it on the real disk
        fill.append("{ mount -t tmpfs -o size=%dk tmpfs %s || exit %d; } && { dd if=/dev/zero "
                    "of=%s/.fill bs=1k count=%d status=none 2>/dev/null; true; }"
                    % (SIZE_KB, d, MOUNT_FAILED, d, SIZE_KB - free_kb))
    script = " && ".join(fill) + (
        ' && { "$@" >%s/stdout 2>%s/stderr; rc=$?; ls -A %s > %s/listing; '
        'cp %s/*.h5 %s/ 2>/dev/null; exit $rc; }' % (outside, outside, full, outside, full, outside))
    full_env = dict(os.environ)
    for k in list(full_env):
        if k.startswith("PERFMARK_"):
            del full_env[k]
    full_env.update(env)
    p = subprocess.run(prefix + ["/bin/sh", "-c", script, "sh"] + cmd, env=full_env, cwd=cwd,
                       timeout=timeout, capture_output=True, text=True)
    check(p.returncode != MOUNT_FAILED or os.path.exists(os.path.join(outside, "stdout")),
          "could not mount the full tmpfs: %s" % p.stderr.strip())
    out = open(os.path.join(outside, "stdout"), errors="replace").read() \
        if os.path.exists(os.path.join(outside, "stdout")) else ""
    err = open(os.path.join(outside, "stderr"), errors="replace").read() \
        if os.path.exists(os.path.join(outside, "stderr")) else p.stderr
    listing = open(os.path.join(outside, "listing")).read().split() \
        if os.path.exists(os.path.join(outside, "listing")) else None
    return p.returncode, out, err, listing, outside


class Skip(Exception):
    pass


def plain(cmd, env=None, cwd=None):
    e = dict(MPI_ENV, **(env or {}))
    return e2e.run(cmd, env=e, cwd=cwd, expect=None)


def check_no_tmp(listing):
    check(listing is not None, "the run did not get as far as listing the full directory")
    left = [f for f in listing if ".tmp-" in f]
    check(not left, "temporary files left where the write failed: %s" % left)


def where_it_went(full, listing, copies, fallback, name, err):
    """The file: in the full directory (copied out) if it fit there, else in
    the fallback with one message naming it."""
    lines = perfmark_lines(err)
    moved = [l for l in lines if "instead" in l]
    if name in listing:
        check(not moved, "the file fit, yet a fallback was said: %r" % moved)
        return os.path.join(copies, name), "in place"
    target = os.path.join(fallback, name)
    check(len(moved) == 1 and target in moved[0], "want one message naming %s: %r"
          % (target, lines))
    check(os.path.exists(target), "no file at %s" % target)
    return target, "fallback"


def report_reads(path):
    p = e2e.run([PERFMARK, "report", path], expect=0)
    check("touch" in p.stdout, "report lacks the regions:\n" + p.stdout[:800])


def single(free_kb):
    tmp = mkdtemp()
    full, fallback = os.path.join(tmp, "full"), os.path.join(tmp, "fallback")
    os.makedirs(fallback)
    ref = plain([FAULTS, "after_exec"])
    rc, out, err, listing, copies = in_full_tmpfs(
        [PERFMARK, "run", "-e", "sw", "-o", os.path.join(full, "out.h5"), "--", FAULTS,
         "after_exec"], full, free_kb, {"PERFMARK_FALLBACK_DIR": fallback, "TMPDIR": tmp})
    check(rc == ref.returncode, "exit status %d, plain %d\n%s" % (rc, ref.returncode, err))
    check(out == ref.stdout, "stdout %r, plain %r" % (out, ref.stdout))
    check_no_tmp(listing)
    path, how = where_it_went(full, listing, copies, fallback, "out.h5", err)
    m = Measured(path)
    pf = m.count(0, "touch700", "page-faults")
    check(700 <= pf <= 708, "touch700: %d page faults" % pf)
    report_reads(path)
    print("%d KiB free: status %d and stdout as plain, file %s (%s)" % (free_kb, rc, path, how))


def mpi(free_kb, prog_args, stem_check=True, env=None):
    tmp = mkdtemp()
    full, fallback = os.path.join(tmp, "full"), os.path.join(tmp, "fallback")
    os.makedirs(fallback)
    cmd = MPIRUN + ["-np", "2"] + prog_args
    ref = plain(cmd, env=env, cwd=tmp)
    e = dict(MPI_ENV, PERFMARK_FALLBACK_DIR=fallback, TMPDIR=tmp, **(env or {}))
    import time
    start = time.time()
    rc, out, err, listing, copies = in_full_tmpfs(
        [PERFMARK, "run", "-e", "sw", "-o", os.path.join(full, "out.h5"), "--"] + cmd,
        full, free_kb, e, cwd=tmp)
    took = time.time() - start
    check(rc == ref.returncode, "exit status %d, plain %d\n%s" % (rc, ref.returncode, err[-2000:]))
    check(sorted(out.splitlines()) == sorted(ref.stdout.splitlines()),
          "stdout %r, plain %r" % (out, ref.stdout))
    check_no_tmp(listing)
    path, how = where_it_went(full, listing, copies, fallback, "out.h5", err)
    m = Measured(path)
    check(sorted(set(int(x) for x in m.threads["rank"])) == [0, 1], "ranks in the file")
    print("%d KiB free: the job ended in %.1f s, status %d and stdout as plain, one file %s (%s)"
          % (free_kb, took, rc, path, how))
    return m


def mpi_app_case(free_kb):
    m = mpi(free_kb, [MPI_APP, "300"])
    for t in m.rows_visiting("touch"):
        rank = int(m.threads["rank"][t])
        pf = m.count(t, "touch", "page-faults")
        want = 300 * (rank + 1)
        check(want <= pf <= want + 8, "rank %d touch: %d page faults, want %d" % (rank, pf, want))
    report_reads(m.path)


def case_demo_12():
    if not os.path.exists(DEMO):
        print("SKIP: the demo was not built")
        return e2e.SKIP
    m = mpi(12, [DEMO], env={"OMP_NUM_THREADS": "2"})
    check(len(m.paths) > 0, "no regions")


def case_order():
    """PERFMARK_FALLBACK_DIR first, then $TMPDIR."""
    tmp = mkdtemp()
    full, fallback, tmpdir = (os.path.join(tmp, x) for x in ("full", "fallback", "tmpdir"))
    os.makedirs(tmpdir)
    cmd = [PERFMARK, "run", "-e", "sw", "-o", os.path.join(full, "out.h5"), "--", FAULTS,
           "after_exec"]
    # the fallback directory full too: $TMPDIR takes it
    rc, out, err, listing, _ = in_full_tmpfs(cmd, full, 4, {"PERFMARK_FALLBACK_DIR": fallback,
                                                           "TMPDIR": tmpdir},
                                             extra_full=(fallback,))
    check(rc == 3, "status %d" % rc)
    check(os.path.exists(os.path.join(tmpdir, "out.h5")), "not in $TMPDIR: %r" % perfmark_lines(err))
    os.makedirs(fallback, exist_ok=True)
    rc, out, err, listing, _ = in_full_tmpfs(cmd, full, 4, {"PERFMARK_FALLBACK_DIR": fallback,
                                                           "TMPDIR": tmpdir})
    check(os.path.exists(os.path.join(fallback, "out.h5")), "not in PERFMARK_FALLBACK_DIR")
    check(not os.path.exists(os.path.join(tmpdir, "out.1.h5")), "written twice")
    print("full fallback directory: $TMPDIR took the file; free one: it did")


def case_nowhere():
    """/tmp and /var/tmp are mounted over, and the build tree may live there
    (a CI clone under /tmp): perfmark, its libraries and the program run
    from a copy in /dev/shm."""
    if not os.path.isdir("/dev/shm"):
        raise Skip("no /dev/shm to run from while /tmp and /var/tmp are full")
    base = tempfile.mkdtemp(dir="/dev/shm", prefix="perfmark-nowhere-")
    try:
        for d in ("bin", "lib", "tests"):
            os.makedirs(os.path.join(base, d))
        shutil.copy2(PERFMARK, os.path.join(base, "bin"))
        shutil.copy2(FAULTS, os.path.join(base, "tests"))
        for so in glob.glob(os.path.join(BUILD, "lib", "libperfmark*.so*")):
            dst = os.path.join(base, "lib", os.path.basename(so))
            if os.path.islink(so):
                os.symlink(os.readlink(so), dst)
            else:
                shutil.copy2(so, dst)
        return nowhere(base)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def nowhere(base):
    full, fallback, tmpdir = (os.path.join(base, x) for x in ("full", "fallback", "tmpdir"))
    perfmark, faults = os.path.join(base, "bin", "perfmark"), os.path.join(base, "tests", "faults")
    ref = plain([FAULTS, "after_exec"])
    rc, out, err, listing, _ = in_full_tmpfs(
        [perfmark, "run", "-e", "sw", "-o", os.path.join(full, "out.h5"), "--", faults,
         "after_exec"], full, 4, {"PERFMARK_FALLBACK_DIR": fallback, "TMPDIR": tmpdir,
                                  "LD_LIBRARY_PATH": os.path.join(base, "lib")},
        extra_full=(fallback, tmpdir, "/tmp", "/var/tmp"), scratch=base, cwd=base)
    check(rc == ref.returncode and out == ref.stdout, "status %d stdout %r (plain %d %r)\n%s"
          % (rc, out, ref.returncode, ref.stdout, err[-1500:]))
    check_no_tmp(listing)
    summary = [l for l in err.splitlines() if l.startswith("perfmark:   ")]
    touch = [l for l in summary if "touch700" in l]
    check(touch and "visits 1" in touch[0] and "page-faults 70" in touch[0],
          "no summary line for touch700 (700 page faults): %r" % err[-1500:])
    check(any("no other place took the data" in l for l in perfmark_lines(err)),
          "no message saying nothing could be written: %r" % perfmark_lines(err))
    print("nowhere to write: status and stdout kept, summary: %s" % touch[0].strip())


def case_run_refuses():
    tmp = mkdtemp()
    marker = os.path.join(tmp, "started")
    p = e2e.run([PERFMARK, "run", "-e", "sw", "-o", "/no/such/dir/x.h5", "--", "/bin/sh", "-c",
                 "touch " + marker], expect=2)
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    check(len(lines) == 1 and "/no/such/dir" in lines[0] and "does not exist" in lines[0],
          "want one message naming the directory: %r" % lines)
    check(not os.path.exists(marker), "the program was started")
    p = e2e.run([PERFMARK, "run", "-e", "sw", "-o", "/etc/passwd/x.h5", "--", "/bin/true"],
                expect=2)
    check("not a directory" in p.stderr, p.stderr)
    print("refused before start: %s" % lines[0])


def case_start_warns():
    tmp = mkdtemp()
    fallback = os.path.join(tmp, "fallback")
    os.makedirs(fallback)
    lib = os.path.join(BUILD, "lib", "libperfmark.so")
    p = e2e.run([FAULTS, "after_exec"], env={"LD_PRELOAD": lib, "PERFMARK_EVENTS": "sw",
                                             "PERFMARK_OUTPUT": "/no/such/dir/x.h5",
                                             "PERFMARK_FALLBACK_DIR": fallback}, expect=3)
    lines = perfmark_lines(p.stderr)
    start = [l for l in lines if "does not exist" in l]
    check(len(start) == 1 and "/no/such/dir" in start[0], "no start message: %r" % lines)
    check(lines.index(start[0]) == 0 or "PMU" in lines[0], "the message did not come at start")
    m = Measured(os.path.join(fallback, "x.h5"))
    check(700 <= m.count(0, "touch700", "page-faults") <= 708, "data lost")
    print("said at start: %s" % start[0])


for kb in (4, 8, 12, 16, 20, 32):
    globals()["case_single_%d" % kb] = (lambda k: lambda: single(k))(kb)
for kb in (8, 12, 16, 20):
    globals()["case_mpi_%d" % kb] = (lambda k: lambda: mpi_app_case(k))(kb)


def case_single_8_preload():
    os.environ["PM_FULL_DISK_MODE"] = "preload"
    return single(8)


def main():
    try:
        return e2e.main()
    except Skip as s:
        print("SKIP: %s" % s)
        return e2e.SKIP


if __name__ == "__main__":
    vars(e2e).update((k, v) for k, v in list(globals().items()) if k.startswith("case_"))
    sys.exit(main())
