#!/usr/bin/env python3
"""check_layers.py: the include graph of the C sources, for issue 21's
layering. Lists (1) include cycles between modules (a module is a .c/.h
pair, e.g. solver/ilp_model), as strongly connected components, and (2)
wrong-way includes: a file of an inner folder that includes a header of an
outer one, by the order below (a folder may include its own and inner
folders' headers, never outer ones):

    src (core) < formats < heuristics < solver < runtime < src/cli (CLI)

The CLI files (src/main.c, cli, cmd_*) are the outermost layer even though
they still sit in src/. Not yet a test: the tree has cycles and upward
includes today; it is the yardstick for moving files.

Usage: tests/check_layers.py [--strict]   (--strict: exit 1 on any finding)
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLI = re.compile(r"^src/(main|cli|cmd_[a-z_]+)\.[ch]$")
ORDER = ["src", "formats", "heuristics", "solver", "runtime", "cli"]


def layer(path):
    if CLI.match(path):
        return "cli"
    top = path.split("/", 1)[0]
    return top if top in ORDER else None


def sources():
    out = subprocess.run(["git", "ls-files", "*.c", "*.h", "*.cu"],
                         cwd=ROOT, capture_output=True, text=True).stdout
    return [p for p in out.split() if layer(p)]


def main():
    files = sources()
    by_name = {}
    for p in files:
        if p.endswith(".h"):
            by_name.setdefault(os.path.basename(p), p)
    edges = {}
    upward = []
    for p in files:
        deps = set()
        for line in open(os.path.join(ROOT, p), errors="replace"):
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if not m or os.path.basename(m.group(1)) not in by_name:
                continue
            h = by_name[os.path.basename(m.group(1))]
            deps.add(h)
            if ORDER.index(layer(h)) > ORDER.index(layer(p)):
                upward.append((p, h))
        edges[p] = deps
    # Modules: a .c and its .h are one node.
    mod = {p: os.path.splitext(p)[0] for p in files}
    g = {}
    for p, deps in edges.items():
        g.setdefault(mod[p], set()).update(mod[d] for d in deps
                                           if mod[d] != mod[p])
    # Tarjan's strongly connected components.
    index, low, stack, on, sccs, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(g.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(g):
        if v not in index:
            visit(v)
    for c in sccs:
        print("cycle: " + " <-> ".join(c))
    for p, h in sorted(upward):
        print(f"upward: {p} ({layer(p)}) includes {h} ({layer(h)})")
    print(f"check_layers: {len(sccs)} include cycles, {len(upward)} "
          f"wrong-way includes, {len(g)} modules")
    return 1 if "--strict" in sys.argv and (sccs or upward) else 0


if __name__ == "__main__":
    sys.exit(main())
