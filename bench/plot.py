#!/usr/bin/python3
"""plot.py: the benchmark's plots, from a results JSON of bench/harness.py.

Run with Debian's /usr/bin/python3 (python3-matplotlib; install it with
tests/deps.sh python3-matplotlib). Writes PNGs into --outdir:
  memory-GRAPH.png  device memory over time, one line per policy (from the
                    memory counters of the simulator's traces), the device's
                    capacity dashed
  pareto.png        per graph: greedy's budget sweep as peak against
                    makespan over the lower bound, its Pareto front joined,
                    and each policy's default plan as a marker
Each file is written to a temporary name and renamed.
"""
import argparse
import json
import math
import os
import sys
import tempfile

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

POLICIES = ["none", "reactive", "lookahead:1", "lookahead:2", "greedy", "exact"]
COLORS = {"none": "#7f7f7f", "reactive": "#d62728", "lookahead:1": "#ff7f0e",
          "lookahead:2": "#bcbd22", "greedy": "#1f77b4", "exact": "#2ca02c"}
MARKERS = {"none": "s", "reactive": "v", "lookahead:1": "^",
           "lookahead:2": "D", "greedy": "o", "exact": "*"}
GIB = 2.0 ** 30
DEFAULT_MEMORY_GRAPHS = ["llama3-8b-train-2l", "mixtral-8x7b-decode"]


def save(fig, path):
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".tmp.",
                               suffix=".png", dir=d)
    os.close(fd)
    try:
        fig.savefig(tmp, dpi=110, bbox_inches="tight")
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    plt.close(fig)
    print("plot: wrote %s" % path, file=sys.stderr)


def ok(e):
    return e is not None and e.get("status") in ("ok", "infeasible") and \
        e.get("peak_bytes") is not None


def memory_plot(E, graph, outdir):
    fig, ax = plt.subplots(figsize=(9, 4.8))
    cap, name, drawn = None, graph, 0
    for p in POLICIES:
        e = E.get("%s/%s" % (graph, p))
        if not ok(e) or not e.get("memory"):
            continue
        m = e["memory"]
        ax.step(m["t_s"], [b / GIB for b in m["bytes"]], where="post",
                color=COLORS[p], lw=1.6 if p == "greedy" else 1.1,
                label="%s: peak %.2f GiB, makespan %.4g s" % (
                    p, e["peak_bytes"] / GIB, e["makespan_s"]))
        cap = e.get("device_memory_bytes") or cap
        name = e.get("graph_name") or name
        drawn += 1
    if not drawn:
        plt.close(fig)
        print("plot: no memory series for %s; memory plot skipped" % graph,
              file=sys.stderr)
        return
    if cap:
        lo, hi = ax.get_ylim()
        if cap / GIB <= hi * 1.3:
            ax.axhline(cap / GIB, color="black", ls="--", lw=0.8,
                       label="device memory %.1f GiB" % (cap / GIB))
    ax.set_xlabel("time (s, simulated)")
    ax.set_ylabel("device memory in use (GiB)")
    ax.set_title("Device memory over time by policy: %s" % graph)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    save(fig, os.path.join(outdir, "memory-%s.png" % graph))


def pareto_front(pts):
    """The points no other point beats on both axes, by increasing x."""
    front, best = [], math.inf
    for x, y in sorted(pts):
        if y < best:
            front.append((x, y))
            best = y
    return front


def pareto_plot(doc, E, outdir):
    graphs = []
    for e in doc["entries"]:
        if e.get("kind") == "sweep" and ok(e) and e["graph"] not in graphs:
            graphs.append(e["graph"])
    graphs = [g for g in graphs if not g.startswith("gen-")] + \
        [g for g in graphs if g.startswith("gen-")]
    if not graphs:
        print("plot: no sweep results; pareto plot skipped", file=sys.stderr)
        return
    ncol = 4 if len(graphs) > 6 else min(3, len(graphs))
    nrow = (len(graphs) + ncol - 1) // ncol
    fig, axs = plt.subplots(nrow, ncol, figsize=(4.2 * ncol, 3.3 * nrow),
                            squeeze=False)

    def xval(e):  # makespan over the lower bound, in percent
        lb = e.get("lower_bound_s")
        if not lb:
            return None
        return 100.0 * (e["makespan_s"] / lb - 1)

    handles = {}
    for i, g in enumerate(graphs):
        ax = axs[i // ncol][i % ncol]
        pts = []
        for k in range(64):
            e = E.get("%s/greedy/sweep%d" % (g, k))
            if e is None:
                break
            if ok(e) and e.get("feasible") and xval(e) is not None:
                pts.append((xval(e), e["peak_bytes"] / GIB))
        if pts:
            h = ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=14,
                           color="#1f77b4", alpha=0.45, zorder=2)
            handles.setdefault("greedy at budgets (sweep)", h)
            # The front as a staircase: from each point on, its peak is
            # reachable at that makespan or any slower one.
            fr = pareto_front(pts)
            xmax = max([p[0] for p in pts] + [xval(E[k]) for k in
                       ("%s/%s" % (g, q) for q in POLICIES) if ok(E.get(k))
                       and xval(E[k]) is not None])
            fx = [p[0] for p in fr] + [max(xmax, fr[-1][0])]
            fy = [p[1] for p in fr] + [fr[-1][1]]
            (h,) = ax.step(fx, fy, where="post", color="#1f77b4", lw=1.2,
                           zorder=2)
            handles.setdefault("greedy's Pareto front", h)
        allx = [p[0] for p in pts]
        for p in POLICIES:
            e = E.get("%s/%s" % (g, p))
            if not ok(e) or xval(e) is None:
                continue
            h = ax.scatter([xval(e)], [e["peak_bytes"] / GIB], marker=MARKERS[p],
                           s=46 if p != "exact" else 90, color=COLORS[p],
                           edgecolor="black", lw=0.5, zorder=3)
            handles.setdefault(p + " (default plan)", h)
            allx.append(xval(e))
        if allx and max(allx) > 50 and max(allx) > 20 * max(0.5, sorted(allx)[len(allx) // 2]):
            ax.set_xscale("symlog", linthresh=1.0)
        ax.set_title(g, fontsize=9)
        ax.ticklabel_format(axis="y", useOffset=False, style="plain")
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
        if i % ncol == 0:
            ax.set_ylabel("peak (GiB)", fontsize=8)
        if i // ncol == nrow - 1 or i + ncol >= len(graphs):
            ax.set_xlabel("makespan over lower bound (%)", fontsize=8)
    for j in range(len(graphs), nrow * ncol):
        axs[j // ncol][j % ncol].axis("off")
    fig.suptitle("Peak memory against makespan: greedy's budget sweep and "
                 "the policies' default plans", fontsize=11)
    fig.legend(list(handles.values()), list(handles.keys()), loc="lower center",
               ncol=min(4, len(handles)), fontsize=8, frameon=False,
               bbox_to_anchor=(0.5, -0.01))
    fig.tight_layout(rect=(0, 0.04, 1, 0.97))
    save(fig, os.path.join(outdir, "pareto.png"))


def main():
    ap = argparse.ArgumentParser(
        description="Plots from a bench/harness.py results JSON: memory over "
        "time per policy (memory-GRAPH.png) and the Pareto curves of peak "
        "against makespan (pareto.png). Run with /usr/bin/python3.")
    ap.add_argument("results")
    ap.add_argument("--outdir", default="bench/results")
    ap.add_argument("--memory-graph", action="append", metavar="GRAPH",
                    help="graph(s) for the memory plot (default: %s, those "
                    "present)" % ", ".join(DEFAULT_MEMORY_GRAPHS))
    a = ap.parse_args()
    with open(a.results) as f:
        doc = json.load(f)
    E = {e["id"]: e for e in doc["entries"]}
    os.makedirs(a.outdir, exist_ok=True)
    graphs = a.memory_graph
    if not graphs:
        present = {e.get("graph") for e in doc["entries"]}
        graphs = [g for g in DEFAULT_MEMORY_GRAPHS if g in present]
        if not graphs and doc["entries"]:
            graphs = [doc["entries"][0]["graph"]]
    for g in graphs:
        memory_plot(E, g, a.outdir)
    pareto_plot(doc, E, a.outdir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
