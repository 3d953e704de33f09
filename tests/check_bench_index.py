#!/usr/bin/env python3
"""check_bench_index.py: bench/README.md's "## Files" section lists every
file under bench/ (ctest test_bench_index). Fails (exit 1), naming each,
on a file with no row, on a row naming a file that is not there, and on a
tracked file anywhere that names a bench/ script that is not there (a
path left behind by a move; bench/results/ is output, not checked;
outside a git checkout this part is skipped).

The files: what git tracks under bench/ plus what it would add (untracked
and not ignored: bench/results/ is ignored); outside a git checkout,
every file under bench/ but results/. The rows: the table rows of the
section from "## Files" to the next "## " heading; each first cell's
backticked names without a space are paths from bench/ (a cell may name
several, e.g. `bench_scale.sh`, `gen_synth.c`); names with a space
(commands) are not paths.

Usage: tests/check_bench_index.py [ROOT]   (default: this checkout)
"""
import os
import re
import subprocess
import sys


def bench_files(root):
    """The files under root/bench, as paths from bench/."""
    bench = os.path.join(root, "bench")
    p = subprocess.run(["git", "ls-files", "--cached", "--others",
                        "--exclude-standard", "--", "."], cwd=bench,
                       capture_output=True, text=True)
    if p.returncode == 0:
        # a file deleted in the work tree but still in the index is gone
        return {f for f in p.stdout.splitlines()
                if os.path.isfile(os.path.join(bench, f))}
    out = set()
    for d, dirs, files in os.walk(bench):
        dirs[:] = [x for x in dirs if not (d == bench and x == "results")]
        for f in files:
            out.add(os.path.relpath(os.path.join(d, f), bench))
    return out


def index_rows(readme):
    """{path: line number} of the paths the Files section's rows name."""
    rows, inside = {}, False
    with open(readme) as f:
        for n, line in enumerate(f, 1):
            if line.startswith("## "):
                inside = line.strip() == "## Files"
                continue
            if not inside or not line.startswith("|"):
                continue
            first = line.split("|")[1]
            for name in re.findall(r"`([^`]+)`", first):
                if " " not in name:
                    rows[name] = n
    return rows


REF = re.compile(r"bench/([A-Za-z0-9_./-]+\.(?:sh|py|c|md))")


def stale_refs(root, files):
    """(file, line, path) for each bench/PATH a tracked text file names
    that is not one of files (paths from bench/)."""
    p = subprocess.run(["git", "grep", "-n", "-I", "-E",
                        r"bench/[A-Za-z0-9_./-]+\.(sh|py|c|md)", "--",
                        ":!*.json"], cwd=root, capture_output=True,
                       text=True)
    if "not a git repository" in p.stderr:
        return []
    if p.returncode not in (0, 1):  # 1: no match
        sys.exit("check_bench_index: git grep failed: " + p.stderr.strip())
    out = []
    for line in p.stdout.splitlines():
        f, n, text = line.split(":", 2)
        for m in REF.finditer(text):
            path = m.group(1)
            if not path.startswith("results/") and path not in files:
                out.append((f, int(n), path))
    return out


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), ".."))
    readme = os.path.join(root, "bench", "README.md")
    files = bench_files(root)
    rows = index_rows(readme)
    bad = 0
    for f in sorted(files - set(rows)):
        print("check_bench_index: bench/%s has no row in bench/README.md's "
              "\"## Files\"; add the row \"| `%s` | what it does |\" to "
              "its folder's table" % (f, f))
        bad += 1
    for f in sorted(set(rows) - files):
        print("check_bench_index: bench/README.md:%d names bench/%s, which "
              "is not there" % (rows[f], f))
        bad += 1
    for f, n, path in stale_refs(root, files):
        print("check_bench_index: %s:%d names bench/%s, which is not there"
              % (f, n, path))
        bad += 1
    print("check_bench_index: %d files under bench/, %d rows, %d problems"
          % (len(files), len(rows), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
