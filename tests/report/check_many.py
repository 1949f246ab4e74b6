#!/usr/bin/python3
"""`perfmark report A B ...`: several files in one command (issue 22, point 5).

usage: check_many.py PERFMARK

On fixtures of make_fixture.py (a plain file, a multi-rank job file whose
CSV has more columns, a file that does not exist, a damaged file), in every
format, each output is checked against the single-file reports of the same
files:
- text: the reports in turn, a blank line between them, the failed ones left
  out; json: an array of the report objects, a failed file as {file, error};
  csv: one table, `file` first, then the union of the columns by name, every
  row of every file with its own values under its own column names; html:
  one page, a link and a section per file, every report's body inside, no
  id used twice;
- exit status 1 when any file failed (after reporting the others), 0 when
  none did; one line on stderr per failed file, naming it;
- the options apply to each file (--by rank) and -o writes the whole output.
"""
import csv
import io
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
FAILED = []


def ok(cond, what):
    if not cond:
        FAILED.append(what)
        print("FAIL: " + what)


def run(perfmark, args, cwd):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PERFMARK_")}
    return subprocess.run([perfmark, "report"] + args, cwd=cwd, env=env, capture_output=True,
                          text=True, errors="surrogateescape", timeout=120)


def main():
    perfmark = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        for v in ("full", "ranks", "truncated"):
            subprocess.run(["/usr/bin/python3", os.path.join(HERE, "make_fixture.py"),
                            os.path.join(tmp, v + ".h5"), v], check=True)
        good = ["full.h5", "ranks.h5"]
        mixed = ["full.h5", "missing.h5", "ranks.h5", "truncated.h5"]
        single = {}
        for fmt in ("text", "json", "csv", "html"):
            for f in good:
                p = run(perfmark, [f, "--format", fmt], tmp)
                ok(p.returncode == 0, "single %s %s: exit %d" % (f, fmt, p.returncode))
                single[f, fmt] = p.stdout
        # ---- exit status and messages
        p = run(perfmark, good, tmp)
        ok(p.returncode == 0 and p.stderr == "", "two good files: exit %d, stderr %r"
           % (p.returncode, p.stderr))
        for fmt in ("text", "json", "csv", "html"):
            p = run(perfmark, mixed + ["--format", fmt], tmp)
            lines = p.stderr.splitlines()
            ok(p.returncode == 1, "%s with failing files: exit %d" % (fmt, p.returncode))
            ok(len(lines) == 2 and "missing.h5" in lines[0] and "truncated.h5" in lines[1],
               "%s: stderr %r, want one line per failed file in order" % (fmt, lines))
            out = p.stdout
            if fmt == "text":
                want = single["full.h5", "text"] + "\n" + single["ranks.h5", "text"]
                ok(out == want, "text: not the two reports with a blank line between")
            elif fmt == "json":
                j = json.loads(out)
                ok(isinstance(j, list) and len(j) == 4, "json: not an array of 4")
                ok(j[0] == json.loads(single["full.h5", "json"]) and
                   j[2] == json.loads(single["ranks.h5", "json"]),
                   "json: the report objects differ from the single reports")
                ok(set(j[1]) == {"file", "error"} and j[1]["file"] == "missing.h5" and
                   j[3]["file"] == "truncated.h5" and j[3]["error"],
                   "json: failed files %r %r" % (j[1], j[3]))
            elif fmt == "csv":
                rows = list(csv.reader(io.StringIO(out)))
                head = rows[0]
                ok(head[0] == "file", "csv: first column %r" % head[0])
                ok(len(head) == len(set(head)), "csv: a column twice")
                for f in good:
                    one = list(csv.reader(io.StringIO(single[f, "csv"])))
                    mine = [r for r in rows[1:] if r[0] == f]
                    ok(len(mine) == len(one) - 1, "csv: %s has %d rows, single %d"
                       % (f, len(mine), len(one) - 1))
                    for a, b in zip(mine, one[1:]):
                        got = {head[i]: a[i] for i in range(1, len(head))}
                        want = dict(zip(one[0], b))
                        ok(all(got[k] == want[k] for k in want) and
                           all(got[k] == "" for k in got if k not in want),
                           "csv: a row of %s differs from its single report" % f)
                        if FAILED:
                            break
                ok(not [r for r in rows[1:] if r[0] not in good], "csv: rows of failed files")
            else:
                ok(out.count("<html") == 1 and out.count("</html>") == 1, "html: not one page")
                ids = re.findall(r' id="([^"]*)"', out)
                ok(len(ids) == len(set(ids)), "html: an id used twice")
                for k, f in enumerate(mixed):
                    ok('<a href="#f%d">%s</a>' % (k, f) in out, "html: no link to %s" % f)
                    ok('<section id="f%d">' % k in out, "html: no section for %s" % f)
                for k, f in ((0, "full.h5"), (2, "ranks.h5")):
                    body = single[f, "html"].split("<body>", 1)[1].split("</body>", 1)[0]
                    body = re.sub(r' (id="|href="#)', lambda m: " " + m.group(1) + "f%d-" % k,
                                  body)
                    ok(body in out, "html: the body of %s is not in its section" % f)
                hrefs = re.findall(r'href="#([^"]*)"', out)
                ok(all(h in ids for h in hrefs), "html: a link to no anchor")
        # ---- options apply to each file; -o takes the whole output
        p = run(perfmark, good + ["--by", "rank"], tmp)
        want = "\n".join(run(perfmark, [f, "--by", "rank"], tmp).stdout for f in good)
        ok(p.returncode == 0 and p.stdout == want, "--by rank: not each file's --by report")
        out = os.path.join(tmp, "out.json")
        p = run(perfmark, good + ["--format", "json", "-o", out], tmp)
        with open(out) as fh:
            ok(p.returncode == 0 and p.stdout == "" and len(json.load(fh)) == 2,
               "-o: the array not written to the file")
    print("FAILED: %d" % len(FAILED) if FAILED else "OK")
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
