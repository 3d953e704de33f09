#!/usr/bin/python3
"""floor.py GRAPH [--overhead X] [--lower-bound-s S]: a lower bound on the
peak memory of every schedule of GRAPH whose makespan is at most
T = (1 + X) * lower_bound_s (X = 0.01 by default), and what sets it.
Prints one JSON object.

Why it holds (FORMAT.md's machine model; durations in integer ps):
- time 0: the device-homed graph inputs are all resident (rule: the state
  at time 0 counts).
- op k: when op k starts, its inputs and updates are resident, and its
  outputs and workspace are allocated (the footprint of k). Every other
  tensor that exists before k (a graph input, or produced by an op before
  k) and that a later op j reads or updates is either allocated at that
  instant or arrives by a prefetch issued after it, which completes before
  op j starts. Op k starts no earlier than the compute before it (C_<k);
  op j starts no later than T minus the compute from j on (C_>=j). So the
  bytes that arrive between the two instants are at most
  sum over tiers of h2d_Bps * (T - C_>=j - C_<k), and
      memory(start of k) >= footprint(k) + max over j > k of
          [A(k, j) - sum(h2d_Bps) * (T - C_>=j - C_<k)]^+
  where A(k, j) is the bytes of the distinct tensors that exist before k,
  are not used by k, and are read or updated by some op in (k, j].
  Transfer latencies are left out and every tier's link is counted, so the
  bound is weaker than the truth, never stronger.
The floor is the largest of these over time 0 and every op k; "link" when
the max term adds to the footprint there. O(ops^2) with numpy.

Also printed: the largest footprint of one op ("footprint_floor": no
schedule of any makespan goes below it), and per-layer weight and KV bytes
(the largest layer's), for the host-KV decode target greedy_table.sh
prints: the footprint floor plus two layers' weights plus one layer's KV.
"""
import json
import math
import re
import sys

import numpy as np


def ps(x):
    return math.floor(x * 1e12 + 0.5)


def op_ps(op, dev):
    if op.get("time_s") is not None:
        return ps(op["time_s"])
    t = max(op.get("flops", 0) / dev["flops_per_s"] if op.get("flops") else 0.0,
            op.get("bytes_accessed", 0) / dev["mem_bandwidth_Bps"]
            if op.get("bytes_accessed") else 0.0)
    return ps(t + dev.get("op_overhead_s", 0) or 0)


def floor(g, lb_s, x):
    dev = g["machine"]["device"]
    tiers = g["machine"].get("tiers", [])
    rate = sum(t["h2d_Bps"] for t in tiers)  # bytes a second, all links
    tens = {t["id"]: t for t in g["tensors"]}
    ops = g["ops"]
    n = len(ops)
    dur = np.array([op_ps(o, dev) for o in ops], dtype=np.int64)
    clt = np.concatenate([[0], np.cumsum(dur)[:-1]])  # compute before k
    cge = np.cumsum(dur[::-1])[::-1]                   # compute from j on
    T = math.floor((1 + x) * ps(lb_s)) + 1
    producer, last = {}, {}
    for k, o in enumerate(ops):
        for t in o.get("outputs", []):
            producer[t] = k
    need = np.zeros(n)       # op k's inputs and updates
    foot = np.zeros(n)       # and its outputs and workspace
    pairs = []               # (previous event p, use j, bytes)
    for k, o in enumerate(ops):
        used = dict.fromkeys(o.get("inputs", []) + o.get("updates", []))
        for t in used:
            b = tens[t]["bytes"]
            p = last.get(t, producer.get(t, -1))
            pairs.append((p, k, b))
            need[k] += b
            last[t] = k
        outs = set(o.get("outputs", []))
        foot[k] = need[k] + sum(tens[t]["bytes"] for t in outs) + \
            o.get("workspace_bytes", 0)
    t0 = sum(t["bytes"] for t in g["tensors"]
             if t["id"] not in producer and t.get("home", "device") == "device")
    pairs.sort()
    act = np.zeros(n)  # bytes first used at j of tensors existing before k
    best = (float(t0), -1, "time 0")
    i = 0
    for k in range(n):
        while i < len(pairs) and pairs[i][0] < k:
            act[pairs[i][1]] += pairs[i][2]
            i += 1
        extra = 0.0
        if k + 1 < n:
            a = np.cumsum(act[k + 1:])
            w = (T - cge[k + 1:] - clt[k]) / 1e12  # seconds
            extra = max(0.0, float(np.max(a - rate * w)))
        m = foot[k] + extra
        if m > best[0]:
            best = (m, k, "link" if extra > 0 else "footprint")
    layer_w, layer_kv = {}, {}
    for t in g["tensors"]:
        mo = re.match(r"layers\.(\d+)\.", t["id"])
        if not mo:
            continue
        d = {"weight": layer_w, "kv": layer_kv}.get(t.get("kind"))
        if d is not None:
            d[mo.group(1)] = d.get(mo.group(1), 0) + t["bytes"]
    kf = int(np.argmax(foot))
    out = {
        "graph": g.get("name"),
        "lower_bound_s": lb_s,
        "max_overhead": x,
        "floor_bytes": int(math.ceil(best[0])),
        "floor_op": ops[best[1]]["id"] if best[1] >= 0 else None,
        "floor_set_by": best[2],
        "time0_bytes": int(t0),
        "footprint_floor_bytes": int(foot[kf]),
        "footprint_op": ops[kf]["id"],
        "layer_weight_bytes": max(layer_w.values(), default=0),
        "layer_kv_bytes": max(layer_kv.values(), default=0),
    }
    out["kv_target_bytes"] = (out["footprint_floor_bytes"] +
                              2 * out["layer_weight_bytes"] +
                              out["layer_kv_bytes"])
    return out


def main(argv):
    args, x, lb = [], 0.01, None
    it = iter(argv[1:])
    for a in it:
        if a == "--overhead":
            x = float(next(it))
        elif a == "--lower-bound-s":
            lb = float(next(it))
        else:
            args.append(a)
    if len(args) != 1 or lb is None:
        sys.stderr.write("usage: floor.py GRAPH --lower-bound-s S "
                         "[--overhead X]\n")
        return 2
    g = json.load(open(args[0]))
    print(json.dumps(floor(g, lb, x)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
