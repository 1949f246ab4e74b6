#!/usr/bin/env python3
"""Which file of analysis/ calls which, read from the object files, with each
file's layer: a map for whoever adds a renderer or a kind of data (not a test).

usage: scripts/layers.py [BUILD_DIR]      (default: build)

Prints one line per file, highest layer first: the files whose functions it
calls. A call that does not go down is marked: up a layer, or sideways
between renderers (render/html/ may call its own charts, render/text/ and
render/json/ their sections); so is a pair of files calling each other. Exit status 1 when any is marked.
The layers (docs/design.md, "analysis/: layers that only look down"):
cli/ -> render/ -> render/common/ -> model/ -> read/ (the reader).
"""
import collections
import glob
import os
import subprocess
import sys

LAYERS = [('cli/', 4), ('render/common/', 2), ('render/', 3), ('model/', 1)]


def name_of(obj):
    """.../pm_analysis.dir/model/report_model.c.o -> model/report_model"""
    p = obj.replace(os.sep, '/')
    for d in ('/pm_analysis.dir/', '/perfmark.dir/'):
        if d in p:
            p = p.split(d, 1)[1]
    return p[:-len('.c.o')] if p.endswith('.c.o') else p


def layer(name):
    for prefix, rank in LAYERS:
        if name.startswith(prefix):
            return rank
    return 0  # read/: the reader


def folder(name):
    return name.rsplit('/', 1)[0] if '/' in name else ''


def goes_down(a, b):
    if layer(b) < layer(a):
        return True
    if layer(b) > layer(a):
        return False
    # within a layer: model, cli and the reader are free; renderers only
    # inside their own folder (render/html/: the page places its charts;
    # render/text/, render/json/: the page prints its sections)
    return layer(a) in (0, 1, 4) or (folder(a) == folder(b) and folder(a) != 'render')


def symbols(obj):
    out = subprocess.run(['nm', obj], capture_output=True, text=True, check=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in 'TDBR':
            defined.add(f[2])
        elif len(f) == 2 and f[0] == 'U':
            used.add(f[1])
    return defined, used


def main(argv):
    build = argv[1] if len(argv) > 1 else 'build'
    objs = [o for d in ('pm_analysis.dir', 'perfmark.dir')
            for o in glob.glob(os.path.join(build, 'analysis/CMakeFiles', d, '**/*.o'),
                               recursive=True)]
    # objects whose source is gone (a file moved or removed) stay in a build
    # tree: leave them out, or they would own their old symbols
    src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'analysis')
    objs = [o for o in objs if os.path.exists(os.path.join(src, name_of(o) + '.c'))]
    if not objs:
        print(f'no object files under {build}/analysis/CMakeFiles (build first)', file=sys.stderr)
        return 2
    defs, uses = {}, {}
    for o in objs:
        defs[name_of(o)], uses[name_of(o)] = symbols(o)
    owner = {s: n for n, d in defs.items() for s in d}
    calls = collections.defaultdict(set)
    for n, used in uses.items():
        for s in used:
            if s in owner and owner[s] != n:
                calls[n].add(owner[s])
    marked = 0
    for n in sorted(defs, key=lambda n: (-layer(n), n)):
        shown = []
        for m in sorted(calls[n]):
            ok = goes_down(n, m) and n not in calls[m]
            shown.append(m if ok else m + ' (NOT DOWN)')
            marked += not ok
        print(n, '->', ' '.join(shown) if shown else '(nothing)')
    print(f'{marked} call(s) not going down')
    return 1 if marked else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
