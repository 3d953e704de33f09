#!/usr/bin/env python3
"""check_layers.py: the include graph of the C sources, against the layers
of the CMake targets (README "Layout"). Fails (exit 1) on
(1) a wrong-way include: a file that includes a header of a folder its
    folder may not use, by the table USES below (the same edges as the
    target_link_libraries of each folder's CMakeLists.txt, which make the
    compiler refuse most of them; this also catches a file that reaches a
    header by a relative path, which an include directory cannot stop);
(2) an include cycle between modules (a module is a .c/.h pair, e.g.
    solver/ilp_model), listed as strongly connected components.

Usage: tests/check_layers.py [--report]   (--report: print, exit 0)
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# folder -> the folders whose headers its files may include (besides its
# own). "src" is the core; src/cli and src/gen are folders of their own.
USES = {
    "src": set(),
    "formats": {"src"},
    "heuristics": {"src"},
    "solver": {"src", "formats", "heuristics"},
    "runtime": {"src"},
    "src/gen": {"src"},
    "src/cli": {"src", "formats", "heuristics", "solver", "runtime",
                "src/gen"},
}


def folder(path):
    d = os.path.dirname(path)
    return d if d in USES else None


def sources():
    out = subprocess.run(["git", "ls-files", "*.c", "*.h", "*.cu"],
                         cwd=ROOT, capture_output=True, text=True).stdout
    return [p for p in out.split() if folder(p)]


def resolve(p, inc, by_name):
    """The tracked header a quoted include of p names: beside p first (the
    compiler's rule for quotes), else by file name anywhere."""
    here = os.path.normpath(os.path.join(os.path.dirname(p), inc))
    if here in by_name.values():
        return here
    return by_name.get(os.path.basename(inc))


def sccs(edges):
    """Tarjan's strongly connected components, iteratively."""
    index, low, on, stack, out, n = {}, {}, set(), [], [], [0]
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = n[0]
        n[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = n[0]
                    n[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                u = work[-1][0]
                low[u] = min(low[u], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def main():
    report = "--report" in sys.argv[1:]
    files = sources()
    by_name = {}
    for p in files:
        if p.endswith(".h"):
            by_name.setdefault(os.path.basename(p), p)
    wrong = []
    edges = {}
    for p in files:
        mod = os.path.splitext(p)[0]
        edges.setdefault(mod, set())
        text = open(os.path.join(ROOT, p), errors="replace").read()
        text = re.sub(r"/\*.*?\*/", lambda c: "\n" * c.group().count("\n"),
                      text, flags=re.S)
        for line in text.splitlines():
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if not m:
                continue
            h = resolve(p, m.group(1), by_name)
            if h is None:
                continue
            src, dst = folder(p), folder(h)
            if dst != src and dst not in USES[src]:
                wrong.append((p, h))
            hm = os.path.splitext(h)[0]
            if hm != mod:
                edges[mod].add(hm)
    cycles = sccs(edges)
    for p, h in wrong:
        print(f"wrong-way include: {p} includes {h} "
              f"({folder(p)}/ may not use {folder(h)}/)")
    for c in cycles:
        print("include cycle: " + " <-> ".join(c))
    print(f"check_layers: {len(cycles)} include cycles, {len(wrong)} "
          f"wrong-way includes, {len(edges)} modules")
    return 0 if report or not (wrong or cycles) else 1


if __name__ == "__main__":
    sys.exit(main())
