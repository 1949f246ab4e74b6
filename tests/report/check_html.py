#!/usr/bin/python3
"""`perfmark report --format html`: the page checked against the file and in a
real browser.

usage: /usr/bin/python3 tests/report/check_html.py BUILD_DIR [--keep DIR]

Files: synthetic fixtures of make_fixture.py (flags, hostile names, ranks,
MPI, TopDown, empty), one with names, host, command and an event built to
break out of HTML (`<script>`, quotes, `&`, control characters, invalid
UTF-8, a 5000-character name), and real files made by running mpi_omp_demo
(2 ranks x 2 OpenMP threads, MPI) and omp_work (4 OpenMP threads) under
`perfmark run -e sw`.

Each page is parsed with html.parser and checked:
  - numbers: every region row of the table (visits, threads, time total and
    min/mean/max per thread, each event's total, estimate and share counted,
    untrusted, flags), the flag summary, the heat map cells, the MPI table
    and share bars, the TopDown table equal what this script recomputes from
    the HDF5 file with h5py (check_report.expected, the same independent
    recomputation the other formats are checked against); the human-unit
    text of each time cell agrees with its exact value;
  - safety: only expected tags, no script, no on* attribute, no reference to
    anything outside the page (src, href other than #..., url(), //, http),
    the Content-Security-Policy present; user data appears as text, cleaned
    exactly as specified (U+FFFD for invalid bytes and control characters).
Then in headless Chromium: --dump-dom with console logging (no console
message at all: a script error or a blocked load would log one; the SVG
elements survive parsing), a copy with a probe script that records script
errors and each chart's rendered size into the DOM, and a 1400x2000
screenshot that must be a non-blank PNG. The probe and the blank check are
first shown to fail on a page built to fail.

Exit 0 = pass, 77 = skipped (chromium cannot start here), 1 = failure.
"""
import base64
import hashlib
import html.parser
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import check_report  # noqa: E402
import make_fixture  # noqa: E402

import h5py  # noqa: E402
import numpy as np  # noqa: E402

SKIP = 77
MAX_CHARS = 2000  # PM_HTML_MAX_CHARS
VOID = {"meta", "br", "img", "input", "link", "hr", "area", "base", "col", "embed",
        "source", "track", "wbr"}
TAGS = {"html", "head", "meta", "title", "style", "body", "header", "h1", "h2", "dl", "dt",
        "dd", "div", "strong", "table", "tr", "th", "td", "span", "small", "section", "nav",
        "a", "p", "details", "summary", "pre", "svg", "rect", "text", "line"}
CHROME_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run"]
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_mpi_yield_when_idle": "1"}
HOSTILE = ["<script>alert(1)</script>", "\" onmouseover=\"alert(2)", "'><svg onload=alert(3)>",
           "a & b &amp; c", "</title></svg></table><img src=x onerror=alert(4)>",
           "tab\there\x01\x7f\xc2\x85 bidi\u202eevil", b"raw\xff\xfebytes\xe2\x82",
           "long" + "<&>\"'" * 1000, "<!-- comment -->", "<![CDATA[ x ]]>"]


# ---------------------------------------------------------------- parsing

class Page(html.parser.HTMLParser):
    """Every element with its attributes and its own text, in document order."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.elements = []   # [tag, attrs dict, text, parent index]
        self.stack = []
        self.comments = []
        self.decls = []

    def handle_starttag(self, tag, attrs):
        parent = self.stack[-1] if self.stack else -1
        self.elements.append([tag, dict(attrs), "", parent, attrs])
        if tag not in VOID:
            self.stack.append(len(self.elements) - 1)

    def handle_startendtag(self, tag, attrs):
        parent = self.stack[-1] if self.stack else -1
        self.elements.append([tag, dict(attrs), "", parent, attrs])

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, -1, -1):
            if self.elements[self.stack[i]][0] == tag:
                del self.stack[i:]
                return

    def handle_data(self, data):
        if self.stack:
            self.elements[self.stack[-1]][2] += data

    def handle_comment(self, data):
        self.comments.append(data)

    def unknown_decl(self, data):
        self.decls.append(data)


def parse(text):
    p = Page()
    p.feed(text)
    p.close()
    return p


def children(page, i, tag=None):
    return [k for k, el in enumerate(page.elements) if el[3] == i and (tag is None or el[0] == tag)]


def full_text(page, i):
    """The text of element i and everything inside it."""
    out = page.elements[i][2]
    for k in children(page, i):
        out += full_text(page, k)
    return out


def by_id(page, ident):
    for k, el in enumerate(page.elements):
        if el[1].get("id") == ident:
            return k
    return None


def clean(b, limit=MAX_CHARS, empty_quoted=True):
    """User data as the page must show it: invalid UTF-8 and controls, line
    separators, bidi overrides and noncharacters as U+FFFD, cut at `limit`
    characters with an ellipsis."""
    s = check_report.raw(b).decode("utf-8", "replace")
    if s == "" and empty_quoted:
        return '""'
    out = []
    for ch in s:
        cp = ord(ch)
        bad = (cp < 0x20 or 0x7F <= cp <= 0x9F or cp in (0x2028, 0x2029) or
               0x202A <= cp <= 0x202E or 0x2066 <= cp <= 0x2069 or 0xFDD0 <= cp <= 0xFDEF or
               (cp & 0xFFFE) == 0xFFFE)
        out.append("\ufffd" if bad else ch)
    if len(out) > limit:
        out = out[:limit] + ["\u2026"]
    return "".join(out)


UNITS = {"ns": 1, "\u00b5s": 1e3, "ms": 1e6, "s": 1e9, "": 1, "k": 1e3, "M": 1e6, "G": 1e9,
         "T": 1e12, "P": 1e15, "E": 1e18}


def human(text):
    """The number shown in a cell ("~12.3 ms!", "4.56 G") in base units."""
    m = re.match(r"^~?(-?[0-9.]+) ?(ns|\u00b5s|ms|s|k|M|G|T|P|E|)!?", text.strip())
    return None if not m else float(m.group(1)) * UNITS[m.group(2)]


def num(v):
    return None if v in (None, "") else float(v)


# ----------------------------------------------------------------- checks

def check_static(ck, page, text):
    """Nothing that runs, nothing loaded, nothing but the expected markup."""
    tags = {el[0] for el in page.elements}
    ck.ok(tags <= TAGS, "unexpected elements: %r" % sorted(tags - TAGS))
    ck.ok(not page.comments and not page.decls, "comments or declarations in the page")
    for tag, attrs, _, _, pairs in page.elements:
        names = [a for a, _ in pairs]
        ck.ok(len(names) == len(set(names)), "<%s> repeats an attribute: %r" % (tag, names))
        for a, v in pairs:
            v = v or ""
            ck.ok(not a.startswith("on"), "event handler attribute %s on <%s>" % (a, tag))
            ck.ok(a not in ("src", "srcset", "action", "formaction", "poster", "xlink:href",
                            "background"), "external reference attribute %s=%r" % (a, v))
            if a == "href":
                ck.ok(v.startswith("#"), "link out of the page: %r" % v)
            if a in ("style", "href", "content", "fill", "stroke"):
                ck.ok("url(" not in v and "//" not in v and "javascript" not in v.lower(),
                      "reference in %s=%r" % (a, v))
    ck.ok(not re.search(r"(?i)https?:|url\(|@import|<script|javascript:", text),
          "a network reference or script in the page source")
    csp = [el for el in page.elements if el[0] == "meta" and
           el[1].get("http-equiv") == "Content-Security-Policy"]
    ck.ok(len(csp) == 1 and "default-src 'none'" in csp[0][1].get("content", ""),
          "no Content-Security-Policy default-src 'none'")
    styles = [el[2] for el in page.elements if el[0] == "style"]
    ck.ok(all("url(" not in s and "@import" not in s for s in styles), "url() in the CSS")


def region_rows(page):
    table = by_id(page, "region-table")
    rows = {}
    for tr in children(page, table, "tr"):
        attrs = page.elements[tr][1]
        if "data-row" not in attrs:
            continue
        cells = {}
        name = None
        flags = {}
        for td in children(page, tr, "td"):
            a = page.elements[td][1]
            if "data-k" in a:
                cells[a["data-k"]] = (a, page.elements[td][2], full_text(page, td))
            elif "name" in (a.get("class") or "").split():
                name = (page.elements[td][2], a.get("title"))
            for sp in children(page, td, "span"):
                sa = page.elements[sp][1]
                if "data-flag" in sa:
                    flags[sa["data-flag"]] = int(sa["data-v"])
        rows[int(attrs["data-row"])] = {"index": int(attrs["data-index"]), "cells": cells,
                                        "name": name, "flags": flags}
    return rows


def check_time_text(ck, where, a, text):
    v = num(a.get("data-v"))
    if v is None:
        return
    h = human(text)
    ck.ok(h is not None and abs(h - v) <= max(0.006 * abs(v), 0.5),
          "%s: shows %r for %r" % (where, text, v))


def check_regions(ck, page, m, x):
    rows = region_rows(page)
    ck.ok(sorted(rows) == sorted(range(m["R"])), "region rows %r, expected %d" %
          (sorted(rows)[:20], m["R"]))
    for reg in x["regions"]:
        r = reg["row"]
        got = rows.get(r)
        if not ck.ok(got is not None, "region row %d missing" % r):
            continue
        where = "region %r" % reg["path"][:60]
        ck.ok(got["index"] == reg["index"], "%s: at %d, tree order says %d" %
              (where, got["index"], reg["index"]))
        name, title = got["name"]
        ck.ok(name == clean(m["regions"][r]["name"]),
              "%s: name shown as %r, expected %r" % (where, name[:80],
                                                       clean(m["regions"][r]["name"])[:80]))
        ck.ok(title == clean(m["regions"][r]["path"]), "%s: path tooltip %r" % (where, title))
        c = got["cells"]
        want = {"visits": reg["visits"], "threads": reg["threads_visited"],
                "wall_total": reg["wall_ns"]["total"], "wall_min": reg["wall_ns"]["min"],
                "wall_mean": reg["wall_ns"]["mean"], "wall_max": reg["wall_ns"]["max"]}
        for k, v in want.items():
            g = num(c[k][0].get("data-v")) if k in c else "missing"
            ck.ok(check_report.close(g, v), "%s: %s = %r, expected %r" % (where, k, g, v))
            if k.startswith("wall") and k in c:
                check_time_text(ck, where + " " + k, c[k][0], c[k][1])
        for e, ev in enumerate(reg["events"]):
            k = "ev%d" % e
            if not ck.ok(k in c, "%s: no cell for event %d" % (where, e)):
                continue
            a, text, whole = c[k]
            ck.ok(check_report.close(num(a.get("data-v")), ev["total"]),
                  "%s event %d: total %r, expected %r" % (where, e, a.get("data-v"), ev["total"]))
            if reg["timer_only"]:  # no counter read there by design
                ck.ok(text == "timer only" and a.get("data-timer-only") == "1",
                      "%s event %d: shows %r, not timer only" % (where, e, text))
                continue
            ck.ok(("*" in text) == bool(reg["measuring"]["throttled"]) and
                  (a.get("data-partial") == "1") == bool(reg["measuring"]["throttled"]),
                  "%s event %d: throttled marking %r" % (where, e, text))
            if ev["total"] is None:
                ck.ok(text.startswith("n/a"), "%s event %d: shows %r, not n/a" % (where, e, text))
                continue
            ck.ok(a.get("data-est") == str(int(ev["estimate"])),
                  "%s event %d: estimate %r" % (where, e, a.get("data-est")))
            ck.ok(("~" in text) == ev["estimate"] and
                  ("est" in a.get("class", "").split()) == ev["estimate"],
                  "%s event %d: estimate marking %r" % (where, e, text))
            ck.ok(a.get("data-untrusted") == str(int(ev["untrusted"])) and
                  ("!" in text) == ev["untrusted"],
                  "%s event %d: untrusted marking %r" % (where, e, text))
            ck.ok(check_report.close(num(a.get("data-share")), ev["counted_share"]),
                  "%s event %d: share %r, expected %r" % (where, e, a.get("data-share"),
                                                         ev["counted_share"]))
            if ev["counted_share"] is not None and ev["counted_share"] < 0.9995:
                ck.ok("counted" in whole, "%s event %d: share counted not shown: %r" %
                      (where, e, whole))
            h = human(text)
            ck.ok(h is not None and abs(h - ev["total"]) <= 0.006 * abs(ev["total"]) + 0.5,
                  "%s event %d: shows %r for %r" % (where, e, text, ev["total"]))
        ck.ok(got["flags"] == {clean(k, 100): v for k, v in reg["flags"].items()},
              "%s: flags %r, expected %r" % (where, got["flags"], reg["flags"]))
        for k in ("wall_total", "wall_max"):  # a sampled time is an estimate
            if k in c and c[k][0].get("data-v"):
                ck.ok(c[k][1].startswith("~") == reg["time_est"] and
                      ("est" in c[k][0].get("class", "").split()) == reg["time_est"],
                      "%s %s: estimate marking %r" % (where, k, c[k][1]))
        cost = reg["measuring"]["perfmark_cpu_ns"]
        ck.ok(("own_cpu" in c) == (cost is not None) and
              (cost is None or check_report.close(num(c["own_cpu"][0].get("data-v")), cost)),
              "%s: perfmark est %r, expected %r" % (where, c.get("own_cpu", [{}])[0], cost))


def check_flags(ck, page, x):
    sec = by_id(page, "flags")
    boxes = [k for k in children(page, sec, "div")]
    if not ck.ok(len(boxes) == 1, "flag summary box missing"):
        return
    a = page.elements[boxes[0]][1]
    ck.ok(int(a["data-flagged"]) == x["flagged_cells"] and int(a["data-cells"]) == x["cells"],
          "flag summary %r, expected %d of %d" % (a, x["flagged_cells"], x["cells"]))
    text = full_text(page, boxes[0])
    if x["flagged_cells"] == 0:
        ck.ok("clean" in a.get("class", "") and "All numbers clean" in text,
              "clean file not said to be clean: %r" % text)
        return
    ck.ok("dirty" in a.get("class", ""), "flagged file not marked")
    table = by_id(page, "flag-table")
    got = {}
    for tr in children(page, table, "tr")[1:]:
        tds = children(page, tr, "td")
        got[full_text(page, tds[0])] = int(page.elements[tds[1]][1]["data-v"])
        # "where": the regions named carry the flag in that many threads
        for sp in children(page, tds[2], "span"):
            sa = page.elements[sp][1]
            name = full_text(page, tds[0])
            reg = next(rg for rg in x["regions"] if rg["row"] == int(sa["data-row"]))
            ck.ok({clean(k, 100): v for k, v in reg["flags"].items()}.get(name) ==
                  int(sa["data-n"]), "flag %s where: %r" % (name, sa))
    want = {clean(k, 100): v for k, v in x["flags_summary"].items() if v}
    ck.ok(got == want, "flag table %r, expected %r" % (got, want))


def check_heatmap(ck, page, m, x):
    svg = by_id(page, "heatmap-chart")
    if m["R"] == 0 or m["T"] == 0:
        ck.ok(svg is None, "heat map without regions")
        return
    if not ck.ok(svg is not None, "no heat map"):
        return
    ranks = x["xr"]["ranks"]
    by_rank = len(ranks) > 1
    cols = len(ranks) if by_rank else m["T"]
    W = m["time"]  # the report's time: sampled cells extrapolated
    n = 0
    for k, el in enumerate(page.elements):
        a = el[1]
        if el[0] != "rect" or "data-r" not in a:
            continue
        n += 1
        r, c = int(a["data-r"]), int(a["data-c"])
        members = [t for t in range(m["T"]) if m["threads"][t]["rank"] == ranks[c]] \
            if by_rank else [c]
        want = sum(W[t][r] or 0 for t in members)
        ck.ok(check_report.close(float(a["data-v"]), want),
              "heat map r%d c%d: %s, expected %r" % (r, c, a["data-v"], want))
    ck.ok(n == min(m["R"], 60) * min(cols, 1024), "heat map has %d cells" % n)


def check_mpi(ck, page, x):
    funcs = x["xr"]["functions"] if x["xr"]["multi"] else []
    table = by_id(page, "mpi-table")
    if not funcs:
        ck.ok(table is None, "MPI table without MPI functions")
        return
    if not ck.ok(table is not None, "no MPI table"):
        return
    trs = [tr for tr in children(page, table, "tr") if "data-f" in page.elements[tr][1]]
    ck.ok(len(trs) == len(funcs), "MPI table has %d rows, expected %d" % (len(trs), len(funcs)))
    for tr, f in zip(trs, funcs):
        c = {}
        tds = children(page, tr, "td")
        for td in tds:
            a = page.elements[td][1]
            if "data-k" in a:
                c[a["data-k"]] = num(a["data-v"])
        ck.ok(page.elements[tds[0]][2] == clean(f["raw_name"]), "MPI function name %r" %
              page.elements[tds[0]][2])
        want = {"ranks": f["ranks_entered"], "calls": f["calls"]["total"],
                "bytes": f["bytes"]["total"], "bytes_unknown": f["bytes_unknown"]["total"],
                "wall": f["wall_ns"]["total"], "min": f["wall_ns"]["min"],
                "mean": f["wall_ns"]["mean"], "max": f["wall_ns"]["max"],
                "imbalance": f["wall_ns"]["imbalance"], "max_rank": f["wall_ns"]["max_rank"]}
        for k, v in want.items():
            ck.ok(check_report.close(c.get(k), v), "MPI %s %s = %r, expected %r" %
                  (f["name"], k, c.get(k), v))
    bars = {int(el[1]["data-rank"]): int(el[1]["data-v"]) for el in page.elements
            if el[0] == "rect" and "data-rank" in el[1]}
    want = {s["rank"]: s["mpi_ns"] for s in x["xr"]["share"][:256]}
    ck.ok(bars == want, "MPI share bars %r, expected %r" % (bars, want))


def check_topdown(ck, page, x):
    td = x["td"]
    sec = by_id(page, "topdown")
    if td is None:
        ck.ok(sec is None, "TopDown section without TopDown")
        return
    if not ck.ok(sec is not None, "no TopDown section"):
        return
    if "regions" not in td:  # no breakdown: said so
        ck.ok("No breakdown" in full_text(page, sec), "TopDown problem not said")
        return
    ck.ok(by_id(page, "topdown-chart") is not None, "no TopDown chart")
    table = by_id(page, "topdown-table")
    stats = {str(x["regions"][i]["row"]): st for i, st in enumerate(td["regions"])}
    stats["run"] = td["run"]
    seen = 0
    for tr in children(page, table, "tr"):
        row = page.elements[tr][1].get("data-row")
        if row is None:
            continue
        seen += 1
        st = stats[row]
        c = {page.elements[k][1]["data-k"]: num(page.elements[k][1]["data-v"])
             for k in children(page, tr, "td") if "data-k" in page.elements[k][1]}
        ck.ok(c["slots"] == st["slots"]["slots"], "TopDown %s slots %r, expected %r" %
              (row, c["slots"], st["slots"]["slots"]))
        ck.ok(c["used"] == st["cells_used"] and
              c["left_out"] == sum(st["cells_left_out"].values()),
              "TopDown %s cells %r" % (row, c))
        for node in td["nodes"]:
            want = st["ratios"][node] if st["ratios"] else None
            ck.ok(check_report.close(c.get(node), want),
                  "TopDown %s %s = %r, expected %r" % (row, node, c.get(node), want))
    ck.ok(seen == min(len(td["regions"]), 60) + 1, "TopDown table has %d rows" % seen)


def check_charts(ck, page, m, x):
    ids = {el[1].get("id") for el in page.elements if el[0] == "svg"}
    want = set()
    if m["R"] and m["T"]:
        want.add("heatmap-chart")
    if any(reg["threads_visited"] for reg in x["regions"]):
        want.add("thread-bars-0")
    if x["xr"]["multi"] and x["xr"]["functions"]:
        want |= {"mpi-functions-chart", "mpi-ranks-chart"}
    if x["td"] is not None and "regions" in x["td"]:
        want.add("topdown-chart")
    ck.ok(want <= ids, "charts missing: %r" % sorted(want - ids))
    for k, el in enumerate(page.elements):
        if el[0] == "svg":
            kids = children(page, k)
            ck.ok(kids and page.elements[kids[0]][0] == "title",
                  "chart %s has no <title> first" % el[1].get("id"))
            texts = [page.elements[i][2] for i in kids if page.elements[i][0] == "text"]
            ck.ok(len(texts) >= 3, "chart %s has no labels" % el[1].get("id"))


def check_hostile(ck, page, m):
    """Each hostile region name is text: in the table cell, as a cut SVG label."""
    labels = [el[2] for el in page.elements if el[0] == "text"]
    titles = [el[2] for el in page.elements if el[0] == "title"]
    for r, g in enumerate(m["regions"]):
        nm = clean(g["name"])
        cut = clean(g["path"], 38)
        ck.ok(any(lb == cut for lb in labels),
              "hostile path %r not shown as an SVG label" % cut[:60])
        ck.ok(any(t.startswith(clean(g["path"], 200)) for t in titles),
              "hostile path %r not in a tooltip" % nm[:60])
    host = clean(m["threads"][0]["host"], 200)
    ck.ok(any(el[0] == "td" and el[2] == host for el in page.elements),
          "hostile host name not shown as text")


def check_measuring(ck, page, m, x):
    """perfmark's reads over the run in the header (files that record a cost)."""
    got = {el[1]["data-k"]: num(el[1]["data-v"]) for el in page.elements
           if el[0] == "span" and el[1].get("data-k") in ("reads_ns", "reads_share", "reads")}
    run = x["run_reads"]
    if not (m["has_read_cost"] and run["ns"] is not None):
        ck.ok(got == {}, "perfmark's reads shown without a read cost: %r" % got)
        return
    want = {"reads_ns": run["ns"], "reads_share": run["share"], "reads": run["reads"]}
    ck.ok(set(got) == set(want) and all(check_report.close(got[k], v) for k, v in want.items()),
          "perfmark's reads %r, expected %r" % (got, want))


def check_page(ck, text, m, x, hostile=False):
    page = parse(text)
    check_measuring(ck, page, m, x)
    check_static(ck, page, text)
    check_regions(ck, page, m, x)
    check_flags(ck, page, x)
    check_heatmap(ck, page, m, x)
    check_mpi(ck, page, x)
    check_topdown(ck, page, x)
    check_charts(ck, page, m, x)
    if hostile:
        check_hostile(ck, page, m)
    return page


# --------------------------------------------------------------- Chromium

PROBE_HEAD = ("<script>window.__errs=[];window.onerror=function(m){window.__errs.push(String(m))"
              "};</script>")
PROBE_TAIL = """<script>
(function(){var out={errors:window.__errs,charts:[]};
var svgs=document.querySelectorAll('svg');
for(var i=0;i<svgs.length;i++){var b=svgs[i].getBoundingClientRect();
var rs=svgs[i].querySelectorAll('rect'),drawn=0;
for(var k=0;k<rs.length;k++){var rb=rs[k].getBoundingClientRect();if(rb.width>0&&rb.height>0)drawn++;}
out.charts.push({id:svgs[i].id,w:b.width,h:b.height,rects:rs.length,drawn:drawn});}
var t=document.getElementById('region-table');if(t){var w=t.parentNode,th=t.querySelectorAll('th'),
nm=t.querySelectorAll('td.name'),mx=0,clip=0,fs=parseFloat(getComputedStyle(t).fontSize);
for(var j=0;j<nm.length;j++){var nb=nm[j].getBoundingClientRect(),pl=parseFloat(getComputedStyle(nm[j]).paddingLeft);
if(nb.width-pl>mx)mx=nb.width-pl;if(nm[j].scrollWidth-nm[j].clientWidth>clip)clip=nm[j].scrollWidth-nm[j].clientWidth;}
out.table={name_em:mx/fs,clip:clip};}
var d=document.createElement('div');d.id='probe-result';d.textContent=JSON.stringify(out);
document.body.appendChild(d);})();
</script>"""


class Chrome:
    def __init__(self, tmp):
        self.exe = shutil.which("chromium") or shutil.which("chromium-browser")
        self.tmp = tmp
        self.n = 0

    def run(self, args, url):
        self.n += 1
        profile = os.path.join(self.tmp, "profile-%d" % self.n)
        os.mkdir(profile)
        cmd = [self.exe] + CHROME_FLAGS + ["--user-data-dir=" + profile] + args + [url]
        try:
            p = subprocess.run(cmd, capture_output=True, timeout=120)
        finally:
            shutil.rmtree(profile, ignore_errors=True)
        return p

    def dump(self, path):
        p = self.run(["--enable-logging=stderr", "--v=0", "--dump-dom"], "file://" + path)
        return p.returncode, p.stdout.decode("utf-8", "replace"), \
            p.stderr.decode("utf-8", "replace")

    def screenshot(self, path, png):
        p = self.run(["--screenshot=" + png, "--window-size=1400,2000"], "file://" + path)
        return p.returncode, p.stderr.decode("utf-8", "replace")


def console_lines(stderr):
    return [ln for ln in stderr.splitlines() if ":CONSOLE" in ln]


def script_hash(body):
    return "'sha256-%s'" % base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()


def probe(chrome, tmp, name, text, allow=()):
    """Load a copy of the page with the probe scripts added and allowed by
    their hashes in its own Content-Security-Policy (anything else stays
    blocked, and a blocked load logs a console message). Returns the probe's
    JSON (None if it did not run), the dumped DOM and Chromium's stderr."""
    head = PROBE_HEAD[len("<script>"):-len("</script>")]
    tail = PROBE_TAIL[len("<script>"):-len("</script>")]
    hashes = " ".join(script_hash(s) for s in (head, tail) + tuple(allow))
    text = text.replace("default-src 'none';", "default-src 'none'; script-src %s;" % hashes, 1)
    text = text.replace("<head>", "<head>" + PROBE_HEAD, 1)
    text = text.replace("</body>", PROBE_TAIL + "</body>", 1)
    path = os.path.join(tmp, name + ".probe.html")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    rc, dom, err = chrome.dump(path)
    page = parse(dom)
    k = by_id(page, "probe-result")
    if rc != 0 or k is None:
        return None, dom, err
    return json.loads(page.elements[k][2]), dom, err


def png_rows(path):
    """(width, height, fraction of rows that are not one uniform color)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    pos, idat = 8, b""
    w = h = None
    depth = ctype = None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    bpp = {2: 3, 6: 4, 0: 1, 4: 2}.get(ctype, 4) * (depth // 8)
    raw = zlib.decompress(idat)
    stride = 1 + w * bpp
    if len(raw) != stride * h:
        return None
    rows = np.frombuffer(raw, dtype=np.uint8).reshape(h, stride)[:, 1 + bpp:]
    # a row of one color is uniform after any PNG filter (past its first pixel)
    varied = np.count_nonzero(rows.max(axis=1) != rows.min(axis=1))
    return w, h, varied / h


def check_browser(ck, chrome, tmp, name, path, text, shoot):
    src = parse(text)
    res, dom, err = probe(chrome, tmp, name, text)
    if not ck.ok(res is not None and "</html>" in dom, "%s: the probe gave no result: %s" %
                 (name, err[-500:])):
        return
    ck.ok(console_lines(err) == [], "%s: console messages: %r" % (name, console_lines(err)[:5]))
    ck.ok(res["errors"] == [], "%s: script errors %r" % (name, res["errors"]))
    got = parse(dom)
    for tag in ("svg", "rect", "text", "line", "title", "table", "tr", "td"):
        a = sum(1 for el in src.elements if el[0] == tag)
        b = sum(1 for el in got.elements if el[0] == tag)
        ck.ok(a == b, "%s: %d <%s> in the page, %d after Chromium parsed it" % (name, a, tag, b))
    ck.ok(sum(1 for el in got.elements if el[0] == "script") == 2 and
          not any(el[0] in ("img", "iframe", "object", "embed") for el in got.elements),
          "%s: active elements in the parsed DOM beyond the probe" % name)
    nsvg = sum(1 for el in src.elements if el[0] == "svg")
    ck.ok(len(res["charts"]) == nsvg, "%s: %d charts rendered of %d" %
          (name, len(res["charts"]), nsvg))
    for c in res["charts"]:
        ck.ok(c["w"] > 100 and c["h"] > 30 and c["drawn"] > 0,
              "%s: chart %s not drawn: %r" % (name, c["id"], c))
    if name == "longnames":  # labels wrap in a column of at most 32em: shown whole, and
        t = res.get("table") or {}  # they never widen the table past that
        ck.ok(t and t["clip"] <= 1 and t["name_em"] <= 34,  # 32em + padding and border
              "%s: region names of 200 characters are clipped or widen their column: %r"
              % (name, t))
    if shoot:
        png = os.path.join(tmp, name + ".png")
        rc, err = chrome.screenshot(path, png)
        info = png_rows(png) if os.path.exists(png) else None
        ck.ok(rc == 0 and info is not None and info[:2] == (1400, 2000) and info[2] > 0.2,
              "%s: screenshot blank or missing: %r (%s)" % (name, info, err[-300:]))


def self_test(ck, chrome, tmp):
    """The probe sees a script error and a blocked load; the blank check
    rejects a blank page."""
    bad = ("<!DOCTYPE html><html><head><meta http-equiv=\"Content-Security-Policy\" "
           "content=\"default-src 'none'; style-src 'unsafe-inline'\"><title>x</title></head>"
           "<body><svg id=\"s\" width=\"10\" height=\"10\"></svg><script>undefined_function()"
           ";</script></body></html>")
    res, dom, err = probe(chrome, tmp, "selftest", bad)
    ck.ok(res is not None and res["errors"] == [] and len(console_lines(err)) == 1,
          "self-test: a blocked inline script was not logged: %r %r" % (res, console_lines(err)))
    res, dom, err = probe(chrome, tmp, "selftest2", bad, allow=("undefined_function();",))
    ck.ok(res is not None and len(res["errors"]) == 1,
          "self-test: the probe missed a script error: %r %s" % (res, err[-300:]))
    blank = os.path.join(tmp, "blank.html")
    png = os.path.join(tmp, "blank.png")
    chrome.screenshot(blank, png)
    info = png_rows(png) if os.path.exists(png) else None
    ck.ok(info is not None and info[2] < 0.01, "self-test: blank page judged %r" % (info,))


# ------------------------------------------------------------------ files

def write_hostile(path):
    """`full` with every user string hostile."""
    make_fixture.write_full(path)
    with h5py.File(path, "r+") as f:
        rg = f["regions"][()]
        names = [check_report.raw(h if isinstance(h, bytes) else h.encode("utf-8"))
                 for h in HOSTILE]
        paths = []
        for i in range(len(rg)):
            nm = names[i % len(names)]
            p = int(rg[i]["parent"])
            paths.append(nm if p < 0 else paths[p] + b"/" + nm)
            rg[i]["name"] = nm
            rg[i]["path"] = paths[i]
        del f["regions"]
        f.create_dataset("regions", data=rg)
        th = f["threads"][()]
        for i in range(len(th)):
            th[i]["host"] = b"<b>node</b>&\"'\x07\xff"
        del f["threads"]
        f.create_dataset("threads", data=th)
        ev = f["events"][()]
        ev[0]["name"] = b"<i>pf</i>&\xff"
        del f["events"]
        f.create_dataset("events", data=ev)
        f.attrs["command"] = "<script>alert('cmd')</script> & \"q\" \x1b[31m"
        f.attrs["host"] = "</dd><script>x</script>"


def write_longnames(path):
    """`full` with region names of about 200 characters (a construct named
    by a long function, file and line; one without any space)."""
    make_fixture.write_full(path)
    with h5py.File(path, "r+") as f:
        rg = f["regions"][()]
        long_names = [b"omp parallel stencil_sweep_" + b"y" * 140 + b" at solver.c:1234 (64 threads)",
                      b"z" * 200, b"compute " * 25]
        paths = []
        for i in range(len(rg)):
            nm = long_names[i % len(long_names)] if i % 2 else bytes(rg[i]["name"])
            p = int(rg[i]["parent"])
            paths.append(nm if p < 0 else paths[p] + b"/" + nm)
            rg[i]["name"] = nm
            rg[i]["path"] = paths[i]
        del f["regions"]
        f.create_dataset("regions", data=rg)


def measure(perfmark, out, cmd, env, cwd):
    full = {k: v for k, v in os.environ.items() if not k.startswith("PERFMARK_")}
    full.update(env)
    p = subprocess.run([perfmark, "run", "-e", "sw", "-o", out, "--"] + cmd, env=full, cwd=cwd,
                       capture_output=True, text=True, errors="replace", timeout=300)
    if p.returncode != 0 or not os.path.exists(out):
        return "%s exited %d\n%s%s" % (" ".join(cmd), p.returncode, p.stdout[-1500:],
                                       p.stderr[-1500:])
    return None


def real_files(ck, build, perfmark, tmp):
    files = []
    demo = os.path.join(build, "bin", "mpi_omp_demo")
    if shutil.which("mpirun") and os.path.exists(demo):
        out = os.path.join(tmp, "real_mpi.h5")
        err = measure(perfmark, out, ["mpirun", "--oversubscribe", "--bind-to", "none", "-np",
                                      "2", demo], dict(MPI_ENV, OMP_NUM_THREADS="2"), tmp)
        if ck.ok(err is None, "mpi_omp_demo: %s" % err):
            files.append(("real_mpi", out))
    else:
        print("note: no mpirun or mpi_omp_demo: the real MPI file is not checked")
    for prog in ("omp_work_clang", "omp_work_gcc"):
        exe = os.path.join(build, "tests", prog)
        if os.path.exists(exe):
            out = os.path.join(tmp, "real_omp.h5")
            err = measure(perfmark, out, [exe, "pages", "50"], {"OMP_NUM_THREADS": "4"}, tmp)
            if ck.ok(err is None, "%s: %s" % (prog, err)):
                files.append(("real_omp", out))
            break
    else:
        print("note: omp_work not built: the real OpenMP file is not checked")
    return files


def main():
    args = sys.argv[1:]
    keep = None
    if "--keep" in args:
        i = args.index("--keep")
        keep = args[i + 1]
        del args[i:i + 2]
    if len(args) != 1:
        sys.stderr.write(__doc__)
        return 2
    build = os.path.abspath(args[0])
    perfmark = os.path.join(build, "bin", "perfmark")
    tmp = keep or tempfile.mkdtemp(prefix="pm-html-")
    os.makedirs(tmp, exist_ok=True)
    ck = check_report.Checker()
    chrome = Chrome(tmp)
    try:
        files = []
        for v in ("full", "clean", "extras", "empty", "ranks", "manyranks", "topdown_spr",
                  "topdown_zen4", "topdown_zen5", "topdown_zen4_l2", "topdown_arm", "topdown_atom",
                  "topdown_missing", "throttle", "throttle_none"):
            path = os.path.join(tmp, v + ".h5")
            subprocess.run([sys.executable, os.path.join(HERE, "make_fixture.py"), path, v],
                           check=True)
            files.append((v, path))
        write_hostile(os.path.join(tmp, "hostile.h5"))
        files.append(("hostile", os.path.join(tmp, "hostile.h5")))
        write_longnames(os.path.join(tmp, "longnames.h5"))
        files.append(("longnames", os.path.join(tmp, "longnames.h5")))
        files += real_files(ck, build, perfmark, tmp)

        pages = []
        for name, path in files:
            ck.scope = name + ": "
            out = os.path.join(tmp, name + ".html")
            p = subprocess.run([perfmark, "report", path, "--format", "html", "-o", out],
                               capture_output=True, text=True, errors="replace", timeout=120)
            if not ck.ok(p.returncode == 0 and p.stderr == "" and os.path.exists(out),
                         "perfmark report exited %d: %s" % (p.returncode, p.stderr)):
                continue
            with open(out, "rb") as f:
                data = f.read()
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as e:
                ck.ok(False, "the page is not UTF-8: %s" % e)
                continue
            m = check_report.load(path)
            x = check_report.expected(m, path)
            check_page(ck, text, m, x, hostile=(name == "hostile"))
            # stdout and -o agree
            p = subprocess.run([perfmark, "report", path, "--format", "html"],
                               capture_output=True, timeout=120)
            ck.ok(p.stdout == data, "stdout differs from -o")
            pages.append((name, out, text))
            if name == "full":  # --top chooses the rows of the region table
                p = subprocess.run([perfmark, "report", path, "--format", "html", "--top", "3"],
                                   capture_output=True, text=True, timeout=120)
                rows = list(region_rows(parse(p.stdout)))
                walls = sorted(((-reg["wall_ns"]["total"], reg["row"]) for reg in x["regions"]))
                ck.ok(p.returncode == 0 and rows == [r for _, r in walls[:3]],
                      "--top 3 shows rows %r, expected %r" % (rows, walls[:3]))
        ck.scope = ""

        with open(os.path.join(tmp, "blank.html"), "w") as f:
            f.write("<!DOCTYPE html><html><head><title>b</title></head><body></body></html>")
        if not chrome.exe:
            print("SKIP: no chromium on PATH (Debian package chromium); %d static checks %s" %
                  (ck.checks, "passed" if not ck.errors else "FAILED"))
            return 1 if ck.errors else SKIP
        rc, dom, err = chrome.dump(os.path.join(tmp, "blank.html"))
        if rc != 0 or "<html" not in dom:
            print("SKIP: chromium cannot start here (exit %d): %s" % (rc, err[-800:]))
            return 1 if ck.errors else SKIP
        self_test(ck, chrome, tmp)
        shots = {"hostile", "longnames", "topdown_spr", "real_mpi", "real_omp"}
        for name, path, text in pages:
            ck.scope = name + " (chromium): "
            check_browser(ck, chrome, tmp, name, path, text, name in shots)
        ck.scope = ""
    finally:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)
    if ck.errors:
        print("check_html: %d of %d checks FAILED:" % (len(ck.errors), ck.checks))
        for e in ck.errors[:200]:
            print("  " + e[:600])
        return 1
    print("check_html: all %d checks passed (%d pages, %d chromium runs)" %
          (ck.checks, len(pages), chrome.n))
    return 0


if __name__ == "__main__":
    sys.exit(main())
