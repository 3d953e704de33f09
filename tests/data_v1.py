#!/usr/bin/env python3
"""data_v1.py: data/'s graphs in their FORMAT version-1 form, for the tests
whose figures belong to those graphs (ctest fixture data_v1).

data/ holds FORMAT v2 graphs (train and decode steps "repeat", tiers with
duplex factors). The witness schedules of ../shared/witness were made for
the version-1 graphs data/ held before, and name them by the first 16 hex
digits of their sha256 (witness.json and budget.json, graph_sha256_prefix).
This script writes those graphs with `data/regen.sh --v1 DIR HOFFOPT`
(gen --v1 at each line's options), checks every witness entry's sha256
prefix against the file written for its graph (a witness whose graph
regen.sh does not write, or whose bytes differ, fails: exit 1), and only
then puts the folder at OUT (the old one replaced; nothing half-written).
The tests read OUT through HOFF_DATA_V1_DIR (tests/testutil.c,
tu_data_v1_graph).

Usage: tests/data_v1.py HOFFOPT OUT [SHARED]   (SHARED: ../shared)
Exit: 0 written and checked, 1 a sha256 that differs, 2 usage or a
failed regen.sh.
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile


def prefixes(shared):
    """(label, stem, sha256 prefix) of every witness keyed to a data/ graph."""
    out = []
    w = os.path.join(shared, "witness")
    with open(os.path.join(w, "witness.json")) as f:
        for stem, e in sorted(json.load(f).items()):
            out.append((stem, stem, e["graph_sha256_prefix"]))
    with open(os.path.join(w, "budget.json")) as f:
        for key, e in sorted(json.load(f).items()):
            out.append((key, e["graph"], e["graph_sha256_prefix"]))
    return out


def main(argv):
    if len(argv) not in (3, 4):
        print(__doc__.split("\n\n")[-2], file=sys.stderr)
        return 2
    hoff, out = os.path.abspath(argv[1]), os.path.abspath(argv[2])
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    shared = argv[3] if len(argv) == 4 else os.path.join(root, "..", "shared")
    parent = os.path.dirname(out) or "."
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".data-v1.", dir=parent)
    try:
        p = subprocess.run(["bash", os.path.join(root, "data", "regen.sh"),
                            "--v1", tmp, hoff], capture_output=True,
                           text=True)
        if p.returncode != 0:
            sys.stderr.write(p.stderr)
            print("data_v1.py: data/regen.sh --v1 failed", file=sys.stderr)
            return 2
        bad = 0
        for label, stem, want in prefixes(shared):
            path = os.path.join(tmp, stem + ".json")
            if not os.path.exists(path):
                print("data_v1.py: witness %s: regen.sh --v1 writes no %s"
                      % (label, stem + ".json"), file=sys.stderr)
                bad += 1
                continue
            with open(path, "rb") as f:
                got = hashlib.sha256(f.read()).hexdigest()[:16]
            ok = got == want
            print("%-28s %s %s %s" % (label, got, "==" if ok else "!=",
                                      want))
            bad += not ok
        if bad:
            print("data_v1.py: %d witness graph(s) not the v1 bytes" % bad,
                  file=sys.stderr)
            return 1
        if os.path.isdir(out):
            shutil.rmtree(out)
        os.rename(tmp, out)
        tmp = None
        print("data_v1.py: %d graphs in %s" % (len(os.listdir(out)), out))
        return 0
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
