#!/usr/bin/env python3
"""readme_doctest.py: runs the commands of README.md's console blocks and
compares their output with the text shown under them, so the README
cannot drift from the tool.

A console block is a fenced block tagged `console`. In it, a line that
starts with "$ " is a command (run with bash in a scratch folder where
`build` points at the binaries and `data` at the repository's data/);
the lines after it, up to the next command or the block's end, are its
expected output (stdout and stderr together, in the order written). A
line "..." in the expected text matches any run of lines.

Figures that depend on the machine are compared as patterns: the last
column of a table whose header ends with `solve_s`, and any "N.NN s"
reported as a time taken ("in 1.2 s", "took 1.2 s").

Usage: readme_doctest.py [--fix] [--bin DIR] [README]
  --fix   rewrite each block's expected text from the actual output
          (keeps "..." lines' places only where the output still matches)
Exit: 0 all match, 1 a mismatch (a diff is printed), 2 usage or setup.
"""
import argparse
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile

TIMING = [
    # "took 1.23 s", "in 0.5 s": wall times, not plan figures
    (re.compile(r"\b(took|in) [0-9]+(\.[0-9]+)? s\b"), r"\1 <t> s"),
]


def blocks(lines):
    """Yields (start, end) line ranges of console blocks' bodies."""
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```console":
            j = i + 1
            while j < len(lines) and lines[j].strip() != "```":
                j += 1
            yield i + 1, j
            i = j
        i += 1


def commands(body):
    """Splits a block body into [(command, expected_lines)]."""
    out = []
    for line in body:
        if line.startswith("$ "):
            out.append([line[2:], []])
        elif out:
            out[-1][1].append(line)
    return out


def normalize(lines):
    res = []
    solve_col = False
    for line in lines:
        for rx, rep in TIMING:
            line = rx.sub(rep, line)
        if solve_col and line.strip() and not line.startswith(" "):
            parts = line.rsplit(None, 1)
            if len(parts) == 2 and re.fullmatch(r"[0-9.]+", parts[1]):
                line = parts[0] + " <t>"
            else:
                solve_col = False
        if line.rstrip().endswith("solve_s"):
            solve_col = True
        res.append(line.rstrip())
    return res


def matches(expected, actual):
    """expected may hold '...' lines that match any run of lines."""
    pat = []
    for line in expected:
        if line == "...":
            pat.append(".*?")
        else:
            pat.append(re.escape(line) + "\n")
    rx = "".join(p if p == ".*?" else p for p in pat)
    text = "".join(l + "\n" for l in actual)
    return re.fullmatch(rx, text, re.S) is not None


def run(cmd, cwd):
    p = subprocess.run(["bash", "-c", cmd], cwd=cwd, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=600)
    out = p.stdout.split("\n")
    if out and out[-1] == "":
        out.pop()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fix", action="store_true")
    ap.add_argument("--bin", default=os.environ.get("HOFF_BIN_DIR"))
    ap.add_argument("readme", nargs="?")
    a = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    readme = a.readme or os.path.join(root, "README.md")
    bindir = a.bin or os.path.join(root, "build")
    if not os.path.exists(os.path.join(bindir, "hoffopt")):
        print(f"readme_doctest: no hoffopt in {bindir}", file=sys.stderr)
        return 2
    lines = open(readme).read().split("\n")
    scratch = tempfile.mkdtemp(prefix="hoff-readme.")
    try:
        os.symlink(os.path.abspath(bindir), os.path.join(scratch, "build"))
        os.symlink(os.path.join(root, "data"), os.path.join(scratch, "data"))
        failed = 0
        ncmd = 0
        edits = []
        for start, end in blocks(lines):
            new_body = []
            for cmd, expected in commands(lines[start:end]):
                ncmd += 1
                actual = run(cmd, scratch)
                ok = matches(normalize(expected), normalize(actual))
                new_body.append("$ " + cmd)
                new_body.extend(expected if ok else actual)
                if not ok:
                    failed += 1
                    if not a.fix:
                        print(f"README.md:{start + 1}: $ {cmd}")
                        sys.stdout.writelines(difflib.unified_diff(
                            [l + "\n" for l in expected],
                            [l + "\n" for l in actual],
                            "README", "actual"))
            edits.append((start, end, new_body))
        if a.fix and failed:
            for start, end, body in reversed(edits):
                lines[start:end] = body
            tmp = readme + ".tmp"
            with open(tmp, "w") as f:
                f.write("\n".join(lines))
            os.replace(tmp, readme)
            print(f"readme_doctest: rewrote {failed} of {ncmd} outputs")
            return 0
        print(f"readme_doctest: {ncmd - failed} passed, {failed} failed")
        return 1 if failed else 0
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
