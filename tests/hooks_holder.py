#!/usr/bin/python3
"""The holder `perfmark run` started for a process (its pidfd names that
process), as that process sees it: run inside a job under `perfmark run`.

As a program it prints the holder as JSON (null when there is none).
Used by tests/e2e.py (case_cli_perf_hooks) and tests/package (an installed
perfmark's holder)."""
import json
import os
import sys
import time


def holder_of(me):
    """pid, open files, comm, parent, executable and environment names of
    the process holding a pidfd of `me`, or None."""
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == me:
            continue
        try:
            fds = {f: os.readlink("/proc/%s/fd/%s" % (d, f)) for f in os.listdir("/proc/%s/fd" % d)}
            for f, link in fds.items():
                if link == "anon_inode:[pidfd]" and \
                        "Pid:\t%d\n" % me in open("/proc/%s/fdinfo/%s" % (d, f)).read():
                    comm = open("/proc/%s/comm" % d).read().strip()
                    ppid = int(open("/proc/%s/stat" % d).read().rsplit(")", 1)[1].split()[1])
                    exe = os.readlink("/proc/%s/exe" % d)
                    env = open("/proc/%s/environ" % d, "rb").read().decode(errors="replace")
                    return {"pid": int(d), "fds": sorted(fds.values()), "comm": comm, "ppid": ppid,
                            "exe": exe, "environ": [v.split("=")[0] for v in env.split("\0") if v]}
        except OSError:
            continue
    return None


def holder(timeout=20):
    """This process's holder once it holds its perf event (it exists from
    before the job's exec, so None at first means none), or None."""
    me = os.getpid()
    h = holder_of(me)
    end = time.time() + timeout
    while h and "anon_inode:[perf_event]" not in h["fds"] and time.time() < end:
        time.sleep(0.01)
        h = holder_of(me) or h
    return h


if __name__ == "__main__":
    print(json.dumps(holder()))
    sys.exit(0)
