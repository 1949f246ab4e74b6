#!/usr/bin/python3
"""The HTML page's flame graph (issue 43), against a call tree held constant.

usage: /usr/bin/python3 tests/report/check_flame.py BUILD_DIR

sample_calltree (-O2, no frame pointers) runs 500 ms in a region whose name
is built to break out of HTML, sampled at cpu-clock 1 ms with DWARF call
paths. Its tree by construction: under main, calltree_a 100 % (about 25 %
its own), calltree_b about 75 % (25 %), calltree_leaf about 50 %; the
program prints the CPU-time split it measured of its loops, which the
frames must show within sampling error.

The page, parsed: one script, allowed by its SHA-256 in the page's
Content-Security-Policy and nothing else; the hostile name only as text;
every frame's samples add up (a node holds at least its children), the
frames under the region equal the folded stacks', the tree's shares hold,
and each frame's width is its share of 1200 px.

Then in headless Chromium, with a probe allowed by its own hash: no console
message (a blocked script logs one), no script error; a click on
calltree_b zooms (it spans the width, calltree_leaf two thirds of it, its
ancestors stay, frames not under it hide); searching "leaf" marks
calltree_leaf alone and says its share; "reset zoom" restores the widths;
the hostile name made no element. Exit 77: no chromium (the static checks
ran and passed).
"""
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import check_html  # noqa: E402

HOSTILE = "<script>alert(1)</script>&\"'<b>bold</b>"
W = 1200.0


def fail(msg):
    print("FAIL report_flame_html: " + msg)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


PROBE_HEAD = ("window.__pmErrors=[];window.addEventListener('error',function(e){"
              "window.__pmErrors.push(String(e.message));});")
PROBE_TAIL = r"""(function(){var out={errors:window.__pmErrors};
var svg=document.querySelector('svg.flame');var gs=[].slice.call(svg.querySelectorAll('g.fg'));
function nm(g){return g.firstElementChild.textContent.split('\n')[0];}
function one(n){return gs.filter(function(g){return nm(g)===n;})[0];}
function w(g){return +g.querySelector('rect').getAttribute('width');}
var a=one('calltree_a'),b=one('calltree_b'),leaf=one('calltree_leaf');
out.before={a:w(a),b:w(b),leaf:w(leaf)};
b.dispatchEvent(new MouseEvent('click',{bubbles:true}));
out.after={a:w(a),b:w(b),leaf:w(leaf),a_shown:a.getAttribute('display')!=='none',
 hidden:gs.filter(function(g){return g.getAttribute('display')==='none';}).length,
 zoom:svg.getAttribute('data-zoom'),label:b.querySelector('text')?b.querySelector('text').textContent:''};
var box=document.getElementById(svg.id+'-search');box.value='leaf';
box.dispatchEvent(new Event('input'));
out.search={info:document.getElementById(svg.id+'-info').textContent,
 hits:gs.filter(function(g){return g.getAttribute('class')==='fg fg-hit';}).map(nm)};
document.getElementById(svg.id+'-reset').dispatchEvent(new MouseEvent('click',{bubbles:true}));
out.reset={b:w(b),hidden:gs.filter(function(g){return g.getAttribute('display')==='none';}).length};
out.scripts=document.querySelectorAll('script').length;
out.bold=document.querySelectorAll('b').length;
var d=document.createElement('div');d.id='probe-result';d.textContent=JSON.stringify(out);
document.body.appendChild(d);})();"""


def frames(page):
    """The flame graph's frames: (depth, start, samples, name, width)."""
    out = []
    els = page.elements
    for i, el in enumerate(els):
        if el[0] == "g" and "fg" in (el[1].get("class") or "").split():
            title = next(e for e in els[i + 1:] if e[0] == "title")
            rect = next(e for e in els[i + 1:] if e[0] == "rect")
            out.append((int(el[1]["data-d"]), int(el[1]["data-s"]), int(el[1]["data-n"]),
                        title[2].split("\n")[0], float(rect[1]["width"])))
    return out


def main():
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    build = os.path.abspath(sys.argv[1])
    perfmark = os.path.join(build, "bin", "perfmark")
    prog = os.path.join(build, "tests", "sample_calltree")
    tmp = tempfile.mkdtemp(prefix="pm-flame-")
    out = os.path.join(tmp, "tree.h5")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PERFMARK_")}
    p = subprocess.run([perfmark, "run", "-e", "none", "--sample", "cpu-clock@1ms",
                        "--sample-callchain", "-o", out, "--", prog, "500", HOSTILE],
                       env=env, capture_output=True, text=True, timeout=120)
    check(p.returncode == 0 and os.path.exists(out), "the run failed: %s" % p.stderr[-1500:])
    run_out = p.stdout
    html = os.path.join(tmp, "tree.html")
    p = subprocess.run([perfmark, "report", out, "--format", "html", "-o", html],
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 0 and p.stderr == "", "report: %s" % p.stderr)
    text = open(html, encoding="utf-8").read()
    page = check_html.parse(text)

    # one script, allowed by its hash, and nothing else runs
    scripts = re.findall(r"<script>(.*?)</script>", text, re.S)
    check(len(scripts) == 1, "%d scripts in the page" % len(scripts))
    csp = [el[1]["content"] for el in page.elements if el[0] == "meta" and
           el[1].get("http-equiv") == "Content-Security-Policy"]
    check(len(csp) == 1 and "default-src 'none'" in csp[0] and
          ("script-src %s" % check_html.script_hash(scripts[0])) in csp[0],
          "the CSP does not allow the script by its hash alone: %r" % csp)
    check(text.count("<script") == 1 and "<b>" not in text and not any(
        a.startswith("on") for el in page.elements for a, _ in el[4]),
        "the hostile name left markup or a handler in the page")
    check(any(el[0] == "title" and el[2].startswith(HOSTILE + "\n") for el in page.elements),
          "the hostile region is not a frame's title, as text")

    # the tree: sums, shares, widths
    fr = frames(page)
    check(fr and fr[0][3] == "all" and fr[0][0] == 0, "no root frame")
    total = fr[0][2]
    check(total >= 300, "only %d samples" % total)
    for d, s, n, name, width in fr:
        check(abs(width - max(n / total * W - 0.5, 0.1)) < 0.02,
              "%s: width %.2f for %d of %d samples" % (name, width, n, total))
    for i, (d, s, n, name, _) in enumerate(fr):  # children within their parent, not more
        kids = []
        for d2, s2, n2, _, _ in fr[i + 1:]:
            if d2 <= d:
                break
            if d2 == d + 1:
                kids.append((s2, n2))
        check(sum(k[1] for k in kids) <= n and all(s <= k[0] and k[0] + k[1] <= s + n
                                                   for k in kids),
              "%s: children outside it or holding more samples" % name)
    region = [f for f in fr if f[0] == 1 and f[3] == HOSTILE]
    check(len(region) == 1, "the region's frame is not at depth 1")
    folded = subprocess.run([perfmark, "report", out, "--format", "folded"],
                            capture_output=True, text=True, timeout=60).stdout
    in_region = sum(int(ln.rsplit(" ", 1)[1]) for ln in folded.splitlines()
                    if ln.split(";", 1)[0] == HOSTILE)
    check(region[0][2] == in_region, "region frame %d samples, folded stacks %d" %
          (region[0][2], in_region))
    n_a = sum(f[2] for f in fr if f[3] == "calltree_a")
    n_b = sum(f[2] for f in fr if f[3] == "calltree_b")
    n_leaf = sum(f[2] for f in fr if f[3] == "calltree_leaf")
    check(n_a >= 0.95 * in_region, "calltree_a holds %d of the region's %d" % (n_a, in_region))
    # against the CPU-time split the program measured of its own loops
    m = re.search(r"calltree_cpu_ns a=(\d+) b=(\d+) leaf=(\d+)", run_out)
    check(m, "sample_calltree printed no CPU split: %r" % run_out[-300:])
    ta, tb, tl = (int(x) for x in m.groups())
    want_b, want_leaf = (tb + tl) / float(ta + tb + tl), tl / float(ta + tb + tl)

    def within(k, n, p_):
        # 3 standard errors and 5 points of the timer's bias on a loaded
        # VM (tests/sampling/check_sampling.py: within)
        return abs(k / n - p_) <= 3 * math.sqrt(max(p_ * (1 - p_), 0.01) / n) + 0.05
    check(within(n_b, n_a, want_b) and within(n_leaf, n_a, want_leaf),
          "shares under calltree_a: b %.3f (measured %.3f), leaf %.3f (measured %.3f)" %
          (n_b / n_a, want_b, n_leaf / n_a, want_leaf))

    chrome = check_html.Chrome(tmp)
    if not chrome.exe:
        print("SKIP: no chromium: the page's static checks passed, the browser ones not run")
        return 77
    head, tail = PROBE_HEAD, PROBE_TAIL
    probe = text.replace("script-src ", "script-src %s %s " % (check_html.script_hash(head),
                                                               check_html.script_hash(tail)), 1)
    probe = probe.replace("<head>", "<head><script>%s</script>" % head, 1)
    probe = probe.replace("</body>", "<script>%s</script></body>" % tail, 1)
    path = os.path.join(tmp, "probe.html")
    with open(path, "w", encoding="utf-8") as f:
        f.write(probe)
    rc, dom, err = chrome.dump(path)
    got = check_html.parse(dom)
    k = check_html.by_id(got, "probe-result")
    check(rc == 0 and k is not None, "the probe gave no result: %s" % err[-800:])
    res = json.loads(got.elements[k][2])
    check(check_html.console_lines(err) == [], "console: %r" % check_html.console_lines(err)[:4])
    check(res["errors"] == [], "script errors: %r" % res["errors"])
    check(res["scripts"] == 3 and res["bold"] == 0, "scripts %d, <b> elements %d" %
          (res["scripts"], res["bold"]))
    a, b = res["before"], res["after"]
    check(abs(b["b"] - (W - 0.5)) < 0.6, "zoomed calltree_b is %.1f px wide" % b["b"])
    check(abs(b["leaf"] / b["b"] - n_leaf / n_b) < 0.01,
          "zoomed leaf %.1f of b %.1f, want %.3f" % (b["leaf"], b["b"], n_leaf / n_b))
    check(b["a_shown"] and abs(b["a"] - (W - 0.5)) < 0.6, "calltree_a, an ancestor, %r" % b)
    # hidden: every frame neither an ancestor of the first calltree_b nor in
    # its range below it (how many there are depends on stray samples)
    zd, zs, zn = next((d, s_, n) for d, s_, n, name, _ in fr if name == "calltree_b")
    hide = sum(1 for d, s_, n, _, _ in fr
               if not ((d < zd and s_ <= zs and s_ + n >= zs + zn) or
                       (d >= zd and s_ >= zs and s_ + n <= zs + zn)))
    check(b["hidden"] == hide and b["label"].startswith("calltree_b"),
          "zoom: %r, %d frames to hide" % (b, hide))
    check(res["search"]["hits"] == ["calltree_leaf"], "search hits %r" % res["search"]["hits"])
    share = float(re.search(r"([0-9.]+) % of the samples", res["search"]["info"]).group(1))
    check(abs(share - 100.0 * n_leaf / total) < 0.15, "search says %.1f %%, leaf is %.1f %%" %
          (share, 100.0 * n_leaf / total))
    check(abs(res["reset"]["b"] - a["b"]) < 0.02 and res["reset"]["hidden"] == 0,
          "reset: %r vs %r" % (res["reset"], a))
    print("flame: %d frames, %d samples; a %d, b %d, leaf %d; zoom, search (%.1f %%) and reset "
          "in Chromium" % (len(fr), total, n_a, n_b, n_leaf, share))
    demo_tower(build, perfmark, tmp)
    return 0


def demo_tower(build, perfmark, tmp):
    """The demo job (2 ranks x 2 OpenMP threads, clang), sampled with call
    paths: the flame graph's hottest tower (from the top, the widest child
    each time) goes through the demo's own function holding the OpenMP
    loop (its body: the loop, or the barrier it waits in when the machine
    is busy), under the region and the construct that run it."""
    demo = os.path.join(build, "bin", "mpi_omp_demo")
    if not shutil.which("mpirun") or not os.path.exists(demo):
        print("note: no mpirun or mpi_omp_demo: the demo's flame graph is not checked")
        return
    out = os.path.join(tmp, "demo.h5")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PERFMARK_")}
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_mpi_yield_when_idle="1", OMP_NUM_THREADS="2")
    p = subprocess.run([perfmark, "run", "--sample", "cpu-clock@1ms", "--sample-callchain", "-o",
                        out, "--", "mpirun", "-np", "2", "--oversubscribe", "--bind-to", "none",
                        demo], env=env, capture_output=True, text=True, timeout=240, cwd=tmp)
    check(p.returncode == 0 and os.path.exists(out), "the demo failed: %s" % p.stderr[-1500:])
    html = os.path.join(tmp, "demo.html")
    subprocess.run([perfmark, "report", out, "--format", "html", "-o", html], check=True,
                   timeout=120)
    fr = frames(check_html.parse(open(html, encoding="utf-8").read()))
    at, tower = 0, [fr[0][3]]
    while True:
        d, s, n = fr[at][0], fr[at][1], fr[at][2]
        kids = [i for i, f in enumerate(fr) if f[0] == d + 1 and s <= f[1] < s + n]
        if not kids:
            break
        at = max(kids, key=lambda i: fr[i][2])
        tower.append(fr[at][3])
    check("main [OpenMP body]" in tower and "solve" in tower and
          any(t.startswith("omp parallel main") for t in tower),
          "the demo's hottest tower: %s" % " ; ".join(tower))
    print("demo: hottest tower %s" % " ; ".join(tower))


if __name__ == "__main__":
    sys.exit(main())
