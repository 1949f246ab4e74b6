#!/usr/bin/python3
"""Packaging tests. Each installed-package case stages its own install
(`cmake --install BUILD --prefix TMP/stage`), builds a consumer against it and
runs it under the installed `perfmark run`; visit counts are known by
construction (see progs/).

usage: /usr/bin/python3 check_package.py BUILD_DIR CASE
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

from pmcheck import SKIP, check, expect_regions, main, measure, needed, run

BUILD = os.path.abspath(sys.argv[1])
SRC = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(SRC, "..", ".."))
PROGS = os.path.join(BUILD, "tests", "package")
PERFMARK = os.path.join(BUILD, "bin", "perfmark")

N_C = 10
N_CXX = 40
WANT_C = {"outer": N_C, "outer/inner": 3 * N_C}
WANT_CXX = {"work": N_CXX, "work/even": N_CXX // 2, "work/throws": N_CXX // 4, "dyn": N_CXX,
            "dyn/name0": len(range(0, N_CXX, 3)), "dyn/name1": len(range(1, N_CXX, 3)),
            "dyn/name2": len(range(2, N_CXX, 3)), "handle": N_CXX}
WANT_F = {"solve": 7, "solve/halo": 14, "loop": 7}
WANT_PAPI = {"main_loop": 1, "main_loop/step": 20, "main_loop/step/halo": 20,
             "main_loop/step/solve": 10}


def stage(tmp):
    prefix = os.path.join(tmp, "stage")
    run(["cmake", "--install", BUILD, "--prefix", prefix])
    return prefix


def libdir(prefix):
    hits = glob.glob(os.path.join(prefix, "lib*", "**", "libperfmark.so"), recursive=True)
    check(len(hits) == 1, "libperfmark.so in the install: %s" % hits)
    return os.path.dirname(hits[0])


def fortran_built():
    return os.path.exists(os.path.join(BUILD, "fortran", "mod", "perfmark.mod"))


# ---- against the build tree ------------------------------------------------------

def case_cxx_guard():
    with tempfile.TemporaryDirectory() as tmp:
        regions, out = measure(PERFMARK, tmp, [os.path.join(PROGS, "cxx_guard"), str(N_CXX)])
        check("active=1" in out, "guard program output %r" % out)
        expect_regions(regions, WANT_CXX)
    disabled = os.path.join(PROGS, "cxx_guard_disabled")
    check(not any("perfmark" in l for l in needed(disabled)),
          "PERFMARK_DISABLE build still links perfmark: %s" % needed(disabled))
    out = run([disabled, "8"]).stdout
    check("active=0" in out, "disabled guard program output %r" % out)


def case_fortran_module():
    with tempfile.TemporaryDirectory() as tmp:
        regions, out = measure(PERFMARK, tmp, [os.path.join(PROGS, "fortran_module")])
        check("active=T" in out, "fortran program output %r" % out)
        expect_regions(regions, WANT_F)
    # Not under perfmark: runs, measures nothing.
    out = run([os.path.join(PROGS, "fortran_module")]).stdout
    check("active=F" in out, "unmeasured fortran program output %r" % out)


# ---- against a staged install ----------------------------------------------------

# Run under `perfmark run`: prints the holder of the job's perf hooks as JSON.
HOOKS_HOLDER = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                            "hooks_holder.py")


def case_install_layout():
    with tempfile.TemporaryDirectory() as tmp:
        prefix = stage(tmp)
        lib = libdir(prefix)
        rel = os.path.relpath(lib, prefix)
        want = ["bin/perfmark", "include/perfmark.h", "include/perfmark.hpp",
                "include/perfmark/shims/caliper/cali.h",
                rel + "/libperfmark-likwid.so", rel + "/libperfmark-papi.so",
                rel + "/libperfmark-caliper.so", rel + "/libperfmark_cli.so",
                rel + "/cmake/perfmark/perfmarkConfig.cmake",
                rel + "/cmake/perfmark/perfmarkConfigVersion.cmake",
                rel + "/pkgconfig/perfmark.pc", rel + "/pkgconfig/perfmark-papi.pc",
                "libexec/perfmark/mpi_omp_demo", "libexec/perfmark/perfmark-attach",
                "libexec/perfmark/perfmark-hooks", "share/doc/perfmark/README.md",
                "share/doc/perfmark/guide.md", "share/doc/perfmark/hdf5-schema.md"]
        if fortran_built():
            want += ["include/perfmark/fortran/perfmark.mod", rel + "/libperfmark_fortran.so",
                     "share/perfmark/fortran/perfmark.f90", rel + "/pkgconfig/perfmark-fortran.pc"]
        for sub in ("slurm", "pbs"):  # whatever job scripts the tree has
            for f in glob.glob(os.path.join(ROOT, "jobs", sub, "*")):
                want.append("share/perfmark/jobs/%s/%s" % (sub, os.path.basename(f)))
        missing = [w for w in want if not os.path.exists(os.path.join(prefix, w))]
        check(not missing, "not installed: %s" % missing)
        for sub in ("slurm", "pbs"):
            for f in glob.glob(os.path.join(ROOT, "jobs", sub, "*")):
                inst = os.path.join(prefix, "share/perfmark/jobs", sub, os.path.basename(f))
                check(os.access(inst, os.X_OK) == os.access(f, os.X_OK),
                      "%s: executable bit not kept" % inst)
        # The installed CLI preloads the installed library, not the build tree's.
        p = run([os.path.join(prefix, "bin", "perfmark"), "run", "-o",
                 os.path.join(tmp, "env.h5"), "--", "printenv", "LD_PRELOAD"], cwd=tmp)
        got = os.path.realpath(p.stdout.strip().split(":")[0])
        check(got.startswith(os.path.realpath(prefix) + os.sep),
              "installed perfmark preloads %r, not the install's library" % got)
        # Moved installs keep working: everything is relative.
        moved = os.path.join(tmp, "moved")
        shutil.move(prefix, moved)
        p = run([os.path.join(moved, "bin", "perfmark"), "run", "-o",
                 os.path.join(tmp, "env2.h5"), "--", "printenv", "LD_PRELOAD"], cwd=tmp)
        got = os.path.realpath(p.stdout.strip().split(":")[0])
        check(got.startswith(os.path.realpath(moved) + os.sep), "moved install preloads %r" % got)
        # ... and its other commands load the moved install's libperfmark_cli.so
        p = run([os.path.join(moved, "bin", "perfmark"), "report", "--format", "json",
                 os.path.join(tmp, "env2.h5")], cwd=tmp, env={"LD_DEBUG": "files"})
        loaded = [l for l in p.stderr.splitlines() if "libperfmark_cli.so" in l and "file=" in l]
        check(loaded and all(os.path.realpath(moved) in l or moved in l for l in loaded),
              "moved install's perfmark report loaded %r" % loaded)
        check('"regions"' in p.stdout, "moved install's perfmark report printed %r" % p.stdout[:200])
        # ... and `run`'s holder of the perf hooks is the moved install's perfmark-hooks
        # (not a fork of bin/perfmark, which would stay busy for the whole job).
        p = run([os.path.join(moved, "bin", "perfmark"), "run", "-q", "-e", "sw", "-o",
                 os.path.join(tmp, "hooks.h5"), "--", sys.executable, HOOKS_HOLDER], cwd=tmp)
        h = json.loads(p.stdout)
        exe = h["exe"] if h and "anon_inode:[perf_event]" in h["fds"] else "none"
        try:
            os.close(os.pidfd_open(os.getpid()))
            pidfd = True
        except (AttributeError, OSError):
            pidfd = False
        if exe == "none" and not pidfd:  # the suite needs perf events; pidfd may be missing
            print("holder not checked: no pidfd here, which the holder needs to watch the job")
        else:
            check(exe == os.path.join(os.path.realpath(moved), "libexec", "perfmark",
                                      "perfmark-hooks"),
                  "the moved install's holder runs %r" % exe)
            print("holder of the perf hooks:", exe)
        print("installed:", len(want), "files checked; CLI preloads", got)


def case_cmake_consumer():
    with tempfile.TemporaryDirectory() as tmp:
        prefix = stage(tmp)
        b = os.path.join(tmp, "build")
        run(["cmake", "-S", os.path.join(SRC, "cmake_consumer"), "-B", b,
             "-DCMAKE_PREFIX_PATH=" + prefix, "-DCMAKE_BUILD_TYPE=Release"])
        run(["cmake", "--build", b, "-j2"])
        perfmark = os.path.join(prefix, "bin", "perfmark")
        lib = os.path.realpath(libdir(prefix))
        progs = [("consumer_c", [str(N_C)], WANT_C), ("consumer_cxx", [str(N_CXX)], WANT_CXX)]
        if fortran_built():
            progs.append(("consumer_f", [], WANT_F))
        for name, args, want in progs:
            exe = os.path.join(b, name)
            # linked to the staged library, not the build tree's
            ldd = run(["ldd", exe]).stdout
            line = [l for l in ldd.splitlines() if "libperfmark.so" in l]
            check(line and lib in os.path.realpath(line[0].split("=>")[1].split()[0]),
                  "%s resolves libperfmark as %s" % (name, line))
            regions, _ = measure(perfmark, tmp, [exe] + args, name=name + ".h5")
            expect_regions(regions, want)


def case_pkgconfig_consumer():
    if not shutil.which("pkg-config") or not shutil.which("make"):
        print("SKIP: pkg-config or make missing")
        return SKIP
    with tempfile.TemporaryDirectory() as tmp:
        prefix = stage(tmp)
        env = {"PKG_CONFIG_PATH": os.path.join(libdir(prefix), "pkgconfig")}
        cflags = run(["pkg-config", "--cflags", "perfmark"], env=env).stdout.split()
        check(any(os.path.realpath(f[2:]) == os.path.realpath(os.path.join(prefix, "include"))
                  for f in cflags if f.startswith("-I")), "pkg-config --cflags: %s" % cflags)
        out = os.path.join(tmp, "bin")
        os.makedirs(out)
        targets = [os.path.join(out, "consumer_c"), os.path.join(out, "consumer_cxx")]
        have_papi = os.path.exists("/usr/include/papi.h")
        if have_papi:
            targets.append(os.path.join(out, "consumer_papi"))
        run(["make", "-C", os.path.join(SRC, "pkgconfig_consumer"), "OUT=" + out] + targets, env=env)
        perfmark = os.path.join(prefix, "bin", "perfmark")
        cases = [("consumer_c", [str(N_C)], WANT_C), ("consumer_cxx", [str(N_CXX)], WANT_CXX)]
        if have_papi:
            cases.append(("consumer_papi", ["20"], WANT_PAPI))
        for name, args, want in cases:
            regions, _ = measure(perfmark, tmp, [os.path.join(out, name)] + args,
                                 name=name + ".h5")
            expect_regions(regions, want)
        # outside perfmark the program starts (rpath from the .pc libdir) and measures nothing
        check("active=0" in run([os.path.join(out, "consumer_c"), "2"]).stdout, "unmeasured run")


if __name__ == "__main__":
    sys.exit(main({"cxx_guard": case_cxx_guard, "fortran_module": case_fortran_module,
                   "install_layout": case_install_layout, "cmake_consumer": case_cmake_consumer,
                   "pkgconfig_consumer": case_pkgconfig_consumer}))
