#!/usr/bin/env python3
"""check_calls.py: call cycles between the files of one folder, which the
include check (check_layers.py) cannot see: two .c files whose functions
call each other (a.c uses a name b.c defines, and b.c one of a.c's).

Each argument is a static library of one folder (libhoff_solver.a, ...).
`nm` lists, per object file in it, the external names the file defines
(text, data, bss, read-only) and those it uses (U); file A depends on file
B when A uses a name B defines. A cycle is a strongly connected component
of two files or more; each is printed with, for every edge in it, the
names that make it. Fails (exit 1) on any cycle.

--self-test first plants a cycle (two files that call each other, and a
third that only calls one of them, compiled with cc into a temporary
archive) and fails unless exactly that cycle is found.

Usage: tests/check_calls.py [--report] [--self-test] LIB.a ...
       (--report: print, exit 0)
"""
import os
import subprocess
import sys
import tempfile

from check_layers import sccs  # Tarjan's, beside this file

DEFINED = set("TDBRGSVWC")  # nm's kinds of a defined external name


def members(lib):
    """{object file: (defined names, used names)} of one archive."""
    out = subprocess.run(["nm", "-A", "-g", lib], capture_output=True,
                         text=True, check=True).stdout
    files = {}
    for line in out.splitlines():
        # "LIB:file.c.o:0000 T name" or "LIB:file.c.o:         U name"
        if not line.startswith(lib + ":"):
            continue
        obj, _, rest = line[len(lib) + 1:].partition(":")
        parts = rest.split()
        if len(parts) < 2:
            continue
        kind, name = parts[-2], parts[-1]
        d, u = files.setdefault(obj, (set(), set()))
        if kind == "U":
            u.add(name)
        elif kind in DEFINED:
            d.add(name)
    return files


def edges_of(files):
    """{file: {file it uses: sorted names}}."""
    owner = {}
    for f, (d, _) in files.items():
        for name in d:
            owner.setdefault(name, f)
    out = {f: {} for f in files}
    for f, (_, u) in files.items():
        for name in u:
            o = owner.get(name)
            if o is not None and o != f:
                out[f].setdefault(o, []).append(name)
    for f in out:
        for o in out[f]:
            out[f][o].sort()
    return out


def cycles(lib, out=print):
    """The call cycles of one archive, each printed; their list."""
    edges = edges_of(members(lib))
    found = []
    for comp in sccs(edges):
        if len(comp) < 2:
            continue
        found.append(comp)
        out(f"{lib}: call cycle between {', '.join(comp)}")
        for f in comp:
            for o in sorted(edges[f]):
                if o in comp:
                    names = edges[f][o]
                    more = f" (+{len(names) - 6})" if len(names) > 6 else ""
                    out(f"  {f} -> {o}: {', '.join(names[:6])}{more}")
    return found


PLANTED = {
    "a.c": "int b1(int);\nint a1(int x) { return x ? b1(x - 1) : 0; }\n",
    "b.c": "int a1(int);\nint b1(int x) { return a1(x); }\n",
    "c.c": "int a1(int);\nint c1(void) { return a1(3); }\n",
}


def self_test():
    """Plants a.c <-> b.c (c.c -> a.c is no cycle); True when found."""
    with tempfile.TemporaryDirectory() as d:
        objs = []
        for name, text in PLANTED.items():
            src = os.path.join(d, name)
            with open(src, "w") as f:
                f.write(text)
            obj = src + ".o"
            subprocess.run(["cc", "-c", src, "-o", obj], check=True)
            objs.append(obj)
        lib = os.path.join(d, "libplanted.a")
        subprocess.run(["ar", "rcs", lib] + objs, check=True)
        found = cycles(lib, out=lambda line: None)
    ok = found == [["a.c.o", "b.c.o"]]
    print(f"check_calls: self-test {'finds' if ok else 'MISSES'} the "
          f"planted cycle a.c <-> b.c (found {found})")
    return ok


def main(argv):
    report = "--report" in argv
    libs = [a for a in argv if not a.startswith("--")]
    if "--self-test" in argv and not self_test():
        return 1
    if not libs:
        print(__doc__.strip().splitlines()[-2], file=sys.stderr)
        return 2
    ncycles = sum(len(cycles(lib)) for lib in libs)
    print(f"check_calls: {len(libs)} libraries, {ncycles} call cycles")
    return 0 if report or ncycles == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
