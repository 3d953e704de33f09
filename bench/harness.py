#!/usr/bin/env python3
"""harness.py: the benchmark harness of hoffopt (bench/README.md).

Runs every policy (none, reactive, lookahead:1, lookahead:2, greedy, and
the exact solver on graphs of at most 150 ops) on every graph of a suite
(data/ plus graphs generated at run time), a greedy budget sweep per graph
(the Pareto curve of peak against makespan), and the executors on small
graphs; records one JSON file per job, merges them into one results JSON,
writes a markdown table, a headline table and plots, and compares two
results files for nightly regression checks.

Work is split into independent jobs (graph x policy x budget) so that a
nightly run can spread over machines with a Slurm job array or GNU
parallel: `list` prints one job id a line, `run JOB --out DIR` runs one and
writes DIR/<job>.json, `merge DIR -o results.json` collects them. `all`
does everything on this machine. Pure standard library; the plots are
drawn by bench/plot.py under Debian's /usr/bin/python3 (matplotlib).

`policy-table`, `exact-table` and `exec-table` print the README's tables
(greedy against the baselines, against exact, the CPU executor against
the simulator) one graph after another: policy-table and exec-table run
what the plan and exec-cpu jobs run, exact-table runs `hoffopt compare`.

Invariants: every external command runs under a timeout; a job that fails
is recorded as an entry with status "error" and never stops the run; every
file is written to a temporary name and renamed into place.
"""
import argparse
import concurrent.futures
import datetime
import decimal
import hashlib
import json
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS_FORMAT = "hoffopt.bench"
RESULTS_VERSION = 1

POLICIES = ["none", "reactive", "lookahead:1", "lookahead:2", "greedy"]
EXEC_BACKENDS = ["cpu", "cuda"]
SWEEP_STEPS = 8          # greedy budgets from none's peak down to the floor
SMALL_OPS = 150          # exact and the executors run on graphs this small
MEMORY_POINTS = 256      # memory-over-time samples kept per plan entry

# Graphs generated at run time: (suite id, `hoffopt gen` arguments). They
# differ from data/'s in length, batch or machine, so the suite covers more.
GENERATED = [
    ("gen-llama3-8b-prefill-s2048",
     ["llama3-8b", "--phase", "prefill", "--seq", "2048"]),
    ("gen-llama3-8b-prefill-s8192-h200",
     ["llama3-8b", "--phase", "prefill", "--seq", "8192", "--machine", "h200"]),
    ("gen-llama3-70b-decode-s4096-h200",
     ["llama3-70b", "--phase", "decode", "--seq", "4096", "--machine", "h200"]),
    ("gen-mixtral-8x7b-decode-s4096-supernode",
     ["mixtral-8x7b", "--phase", "decode", "--seq", "4096",
      "--machine", "supernode"]),
    ("gen-deepseek-v3-decode-4l-s32768-b4",
     ["deepseek-v3", "--phase", "decode", "--layers", "4", "--seq", "32768",
      "--batch", "4", "--machine", "h200"]),
    ("gen-llama3-8b-train-s2048-gh200",
     ["llama3-8b", "--phase", "train", "--seq", "2048", "--machine", "gh200"]),
]

# Summary fields copied from hoffopt's --json output into each entry.
SUMMARY = ["valid", "feasible", "budget_bytes", "max_overhead", "peak_bytes",
           "makespan_s", "compute_s", "stall_s", "h2d_bytes", "d2h_bytes",
           "overhead", "lower_bound_s", "overhead_vs_lower_bound",
           "none_peak_bytes", "reduction", "solve_s", "read_s", "iterations",
           "source", "device_memory_bytes"]
RUN_SUMMARY = ["peak_bytes", "makespan_s", "compute_s", "stall_s",
               "h2d_bytes", "d2h_bytes"]

JOB_RE = re.compile(r"^(?P<graph>[A-Za-z0-9._+-]+)/(?P<policy>exact|none|reactive|"
                    r"greedy|lookahead:[0-9]+)(?:/(?P<variant>sweep[0-9]+|"
                    r"exec-cpu|exec-cuda))?$")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def now_iso():
    return datetime.datetime.now(datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ")


def write_atomic(path, text):
    """Writes text to path through a temporary file in the same folder."""
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".tmp.",
                               dir=d)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 is not what we want
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_json(path, obj):
    write_atomic(path, json.dumps(obj, indent=1, sort_keys=False) + "\n")


def write_results(path, doc):
    """A results document: header fields indented, one entry a line."""
    head = {k: v for k, v in doc.items() if k != "entries"}
    text = json.dumps(head, indent=1)[:-2] + ',\n "entries": [\n' + ",\n".join(
        json.dumps(e, separators=(",", ":")) for e in doc["entries"]) + "\n ]\n}\n"
    json.loads(text)  # a cheap self-check of the hand-made framing
    write_atomic(path, text)


def safe_name(job_id):
    """A file name for a job id (percent-encodes all but [A-Za-z0-9._-])."""
    return re.sub(r"[^A-Za-z0-9._-]",
                  lambda m: "%%%02X" % ord(m.group(0)), job_id) + ".json"


class Cmd:
    """The outcome of one external command."""

    def __init__(self, argv, rc, out, err, wall_s, timed_out):
        self.argv, self.rc, self.out, self.err = argv, rc, out, err
        self.wall_s, self.timed_out = wall_s, timed_out

    def json(self):
        """The last line of stdout that parses as a JSON object, or None."""
        for line in reversed(self.out.strip().splitlines()):
            line = line.strip()
            if line.startswith("{"):
                try:
                    return json.loads(line)
                except ValueError:
                    pass
        try:
            return json.loads(self.out)
        except ValueError:
            return None

    def why(self):
        """One line saying how the command failed."""
        if self.timed_out:
            return "timed out after %.0f s: %s" % (self.wall_s, " ".join(self.argv))
        lines = [l for l in self.err.strip().splitlines() if l.strip()]
        tail = lines[-1] if lines else "(no message)"
        return "exit %s: %s" % (self.rc, tail)


def call(argv, timeout):
    """Runs argv with a timeout; never raises for the command's failure."""
    t0 = time.monotonic()
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           stdin=subprocess.DEVNULL, timeout=timeout,
                           text=True, errors="replace")
        return Cmd(argv, p.returncode, p.stdout, p.stderr,
                   time.monotonic() - t0, False)
    except subprocess.TimeoutExpired as e:
        def s(x):
            return x.decode(errors="replace") if isinstance(x, bytes) else (x or "")
        return Cmd(argv, None, s(e.stdout), s(e.stderr),
                   time.monotonic() - t0, True)
    except OSError as e:
        return Cmd(argv, None, "", str(e), time.monotonic() - t0, False)


def find_hoffopt(given):
    cands = [given, os.environ.get("HOFFOPT"),
             os.path.join(ROOT, "build-bench", "hoffopt"),
             os.path.join(ROOT, "build", "hoffopt")]
    for c in cands:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return os.path.abspath(c)
    if given:
        sys.exit("harness: no executable hoffopt at %s" % given)
    sys.exit("harness: no hoffopt found (give --hoffopt PATH or set HOFFOPT; "
             "tried build-bench/hoffopt and build/hoffopt)")


def git_commit():
    c = call(["git", "-C", ROOT, "rev-parse", "--short=12", "HEAD"], 30)
    if c.rc != 0:
        return None
    rev = c.out.strip()
    d = call(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"], 30)
    if d.rc == 0 and d.out.strip():
        rev += "-dirty"
    return rev


def gpu_probe():
    """(present, line): whether `nvidia-smi -L` lists a GPU."""
    if not shutil.which("nvidia-smi"):
        return False, "no GPU: nvidia-smi not found"
    c = call(["nvidia-smi", "-L"], 30)
    if c.rc == 0 and "GPU" in c.out:
        return True, c.out.strip().splitlines()[0]
    return False, "no GPU: nvidia-smi -L " + (c.why() if c.rc != 0 else "lists none")


class Ctx:
    """Options shared by every command, and the suite they define."""

    def __init__(self, a):
        self.a = a
        self.hoff = find_hoffopt(a.hoffopt)
        self.timeout = a.timeout
        work = a.work or os.environ.get("HOFF_BENCH_WORK") or os.path.join(
            tempfile.gettempdir(), "hoffopt-bench-%d" % os.getuid())
        self.work = os.path.abspath(work)
        self._caps = None
        self._graphs = None
        self._hash = None
        self._info = {}

    # -- what this hoffopt can do ------------------------------------------
    def caps(self):
        if self._caps is None:
            ex = call([self.hoff, "--exact", "--help"], 60)
            rn = call([self.hoff, "run", "--help"], 60)
            self._caps = {"exact": ex.rc == 0, "run": rn.rc == 0}
        return self._caps

    def binary_hash(self):
        if self._hash is None:
            h = hashlib.sha256()
            with open(self.hoff, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
            self._hash = h.hexdigest()[:16]
        return self._hash

    # -- the suite ---------------------------------------------------------
    def graphs(self):
        """Ordered {id: {"source": str, "path": str|None, "gen": list|None}}."""
        if self._graphs is not None:
            return self._graphs
        g = {}
        suite = self.a.suite
        if suite in ("full", "data"):
            d = os.path.join(ROOT, "data")
            for f in sorted(os.listdir(d)):
                if f.endswith(".json") and not f.endswith(".schedule.json"):
                    g[f[:-5]] = {"source": "data/" + f,
                                 "path": os.path.join(d, f), "gen": None}
        if suite == "tiny":
            g["tiny"] = {"source": "data/tiny.json",
                         "path": os.path.join(ROOT, "data", "tiny.json"),
                         "gen": None}
        if suite == "full":
            for gid, args in GENERATED:
                g[gid] = {"source": "hoffopt gen " + " ".join(args),
                          "path": None, "gen": args}
        for p in self.a.graph or []:
            gid = re.sub(r"[^A-Za-z0-9._+-]", "_",
                         os.path.basename(p)[:-5] if p.endswith(".json")
                         else os.path.basename(p))
            g[gid] = {"source": p, "path": os.path.abspath(p), "gen": None}
        self._graphs = g
        return g

    def graph_path(self, gid):
        """The graph file of suite graph gid, generating it when needed."""
        spec = self.graphs().get(gid)
        if spec is None:
            raise KeyError("graph %r is not in the suite (--suite %s)" %
                           (gid, self.a.suite))
        if spec["path"]:
            return spec["path"]
        key = hashlib.sha256((self.binary_hash() + " " + " ".join(spec["gen"]))
                             .encode()).hexdigest()[:12]
        path = os.path.join(self.work, "graphs", "%s.%s.json" % (gid, key))
        if not os.path.exists(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            tmp = "%s.tmp.%d.%d" % (path, os.getpid(), threading.get_ident())
            c = call([self.hoff, "gen"] + spec["gen"] + ["-o", tmp], self.timeout)
            if c.rc != 0 or not os.path.exists(tmp):
                if os.path.exists(tmp):
                    os.unlink(tmp)
                raise RuntimeError("hoffopt gen failed: " + c.why())
            os.replace(tmp, path)
        return path

    def graph_info(self, gid):
        """hoffopt analyze --json of a suite graph (ops, tensors, bytes...),
        plus "model" from its meta (graphs under 64 MB); cached."""
        if gid in self._info:
            return self._info[gid]
        path = self.graph_path(gid)
        c = call([self.hoff, "analyze", path, "--json"], self.timeout)
        d = c.json()
        if c.rc != 0 or d is None:
            raise RuntimeError("hoffopt analyze failed: " + c.why())
        d["model"] = None
        if os.path.getsize(path) < 64 << 20:
            try:
                with open(path) as f:
                    meta = json.load(f).get("meta")
                if isinstance(meta, dict) and isinstance(meta.get("model"), str):
                    d["model"] = meta["model"]
            except (ValueError, OSError):
                pass
        self._info[gid] = d
        return d

    def jobs(self):
        """Every job id of the suite, in list order."""
        out = []
        for gid in self.graphs():
            try:
                ops = self.graph_info(gid)["ops"]
            except Exception as e:  # listed anyway: running it records the error
                log("harness: %s: %s" % (gid, e))
                ops = None
            small = ops is not None and ops <= SMALL_OPS
            for p in POLICIES:
                out.append("%s/%s" % (gid, p))
            for k in range(SWEEP_STEPS):
                out.append("%s/greedy/sweep%d" % (gid, k))
            if small:
                out.append("%s/exact" % gid)
                for p in POLICIES:
                    for b in EXEC_BACKENDS:
                        out.append("%s/%s/exec-%s" % (gid, p, b))
        if self.a.only:
            r = re.compile(self.a.only)
            out = [j for j in out if r.search(j)]
        return out


# -- running one job ------------------------------------------------------

def summary_of(d):
    return {k: d.get(k) for k in SUMMARY if k in d}


def memory_series(trace_path, npoints=MEMORY_POINTS):
    """Device memory over time from a trace's counter events, reduced to at
    most npoints buckets, each the largest value in it (peaks survive)."""
    with open(trace_path) as f:
        t = json.load(f)
    ev = t["traceEvents"] if isinstance(t, dict) else t
    pts = {}
    for e in ev:
        if e.get("ph") == "C" and "bytes" in (e.get("args") or {}):
            pts[float(e["ts"])] = int(e["args"]["bytes"])  # last at an instant
    if not pts:
        return None
    ts = sorted(pts)
    end = max(max(float(e.get("ts", 0)) + float(e.get("dur", 0) or 0)
                  for e in ev if "ts" in e), ts[-1])
    if len(ts) <= npoints or end <= 0:
        return {"t_s": [x / 1e6 for x in ts] + [end / 1e6],
                "bytes": [pts[x] for x in ts] + [pts[ts[-1]]]}
    width = end / npoints
    tb, vb = [], []
    i, cur = 0, pts[ts[0]]
    for b in range(npoints):
        lo, hi = b * width, (b + 1) * width
        m = cur
        while i < len(ts) and ts[i] < hi:
            cur = pts[ts[i]]
            m = max(m, cur)
            i += 1
        tb.append(lo / 1e6)
        vb.append(m)
    tb.append(end / 1e6)
    vb.append(cur)
    return {"t_s": tb, "bytes": vb}


def plan_status(c, d):
    """Entry status for a plan: ok, infeasible (exit 1, budget not met)."""
    if d is None:
        return "error", c.why()
    if c.rc == 0:
        if d.get("valid") is False:
            return "error", "hoffopt wrote an invalid schedule"
        return "ok", None
    if c.rc == 1 and d.get("feasible") is False:
        return "infeasible", None
    return "error", c.why()


def job_plan(ctx, e, path, policy, tmp):
    trace = os.path.join(tmp, "trace.json")
    c = call([ctx.hoff, "--policy", policy, path, "--json", "--trace", trace],
             ctx.timeout)
    d = c.json()
    e["status"], e["error"] = plan_status(c, d)
    if d:
        e.update(summary_of(d))
    if e["status"] == "ok" and os.path.exists(trace):
        try:
            e["memory"] = memory_series(trace)
        except (ValueError, KeyError, OSError) as x:
            e["memory_error"] = str(x)


def job_sweep(ctx, e, path, k):
    # The floor: greedy's smallest peak (its report when a 1-byte budget
    # cannot be met); the top: none's peak. Budgets are spaced evenly
    # between, step 0 at the top and the last step at the floor.
    c = call([ctx.hoff, "--greedy", path, "--budget", "1", "--json"], ctx.timeout)
    d = c.json()
    if d is None or "peak_bytes" not in d or "none_peak_bytes" not in d:
        e["status"], e["error"] = "error", "floor: " + c.why()
        return
    floor, top = int(d["peak_bytes"]), int(d["none_peak_bytes"])
    top = max(top, floor)
    n = SWEEP_STEPS - 1
    budget = floor + (top - floor) * (n - k) // n
    e["sweep"] = {"step": k, "steps": SWEEP_STEPS, "floor_bytes": floor,
                  "top_bytes": top, "floor_solve_s": d.get("solve_s")}
    c = call([ctx.hoff, "--greedy", path, "--budget", str(budget), "--json"],
             ctx.timeout)
    d = c.json()
    e["status"], e["error"] = plan_status(c, d)
    if d:
        e.update(summary_of(d))


def job_exact(ctx, e, path):
    if not ctx.caps()["exact"]:
        e["status"] = "skipped"
        e["error"] = "this hoffopt has no --exact"
        return
    tl = ctx.a.exact_time_limit
    c = call([ctx.hoff, "--exact", path, "--json", "--time-limit", str(tl)],
             tl + max(120, tl))
    d = c.json()
    if d is None:
        e["status"], e["error"] = "error", c.why()
        return
    e.update(summary_of(d))
    x = {k: d.get(k) for k in ("status", "objective_kind", "objective", "bound",
                               "gap", "build_s", "incumbent", "source")}
    x["time_limit_s"] = tl
    g = d.get("greedy")
    if isinstance(g, dict):
        x["greedy"] = {k: g.get(k) for k in ("peak_bytes", "makespan_s",
                                             "objective", "feasible")}
    if isinstance(d.get("model"), dict):
        x["model"] = d["model"]
    e["exact"] = x
    if c.rc == 0:
        e["status"], e["error"] = "ok", None
    elif c.rc == 1:
        e["status"], e["error"] = "infeasible", None
    else:
        e["status"], e["error"] = "error", c.why()


def exec_scale(info, plan, mem_cap, target, min_op):
    """(time_k, size_k) of an executor run of a plan (its --json summary)
    of a graph (its analyze --json): sizes so that the host copies (at
    most the graph's bytes) and the arena (about the peak) fit in mem_cap;
    times so that the predicted makespan is about target seconds, never
    shorter than at real size, and ops last min_op seconds on average at
    least (the CPU emulator keeps time only while commands outlast its
    threads' wake-ups)."""
    total = sum(int(v) for v in (info.get("bytes_by_kind") or {}).values())
    peak = plan.get("peak_bytes") or 0
    size_k = min(1.0, mem_cap / (total + peak)) if total + peak > 0 else 1.0
    ms = plan.get("makespan_s") or 0
    time_k = max(1.0, target / ms) if ms > 0 else 1.0
    nops = info.get("ops") or 0
    mean_op = (info.get("compute_s") or 0) / nops if nops else 0
    if mean_op > 0 and time_k * mean_op < min_op:
        time_k = min_op / mean_op
    return time_k, size_k


def job_exec(ctx, e, path, policy, backend, info, tmp):
    if not ctx.caps()["run"]:
        e["status"] = "skipped"
        e["error"] = "this hoffopt has no run command (executors)"
        return
    if backend == "cuda":
        present, line = gpu_probe()
        e["gpu"] = line
        if not present:
            e["status"], e["error"] = "skipped", line
            return
    sched = os.path.join(tmp, "schedule.json")
    c = call([ctx.hoff, "--policy", policy, path, "-o", sched, "--json"],
             ctx.timeout)
    d = c.json()
    st, why = plan_status(c, d)
    if d:
        e.update(summary_of(d))
    if st != "ok" or not os.path.exists(sched):
        e["status"], e["error"] = "error", "plan: " + (why or c.why())
        return
    # Scale the run to this machine (exec_scale; `exec-table` does the
    # same with three significant digits).
    mem_cap = ctx.a.exec_cpu_bytes if backend == "cpu" else ctx.a.exec_cuda_bytes
    time_k, size_k = exec_scale(info, d, mem_cap, ctx.a.exec_target_s,
                                ctx.a.exec_min_op_s)
    time_k, size_k = float("%.6g" % time_k), float("%.6g" % size_k)
    base = [ctx.hoff, "run", path, sched, "--backend", backend,
            "--time-scale", repr(time_k), "--size-scale", repr(size_k), "--json"]
    x = {"backend": backend, "time_scale": time_k, "size_scale": size_k,
         "repeat": ctx.a.exec_repeat}
    e["exec"] = x
    # Timing: the median of the repeats by makespan; integrity: one more
    # run with --verify (its checks cost the threads time, so not timed).
    runs = []
    for _ in range(max(1, ctx.a.exec_repeat)):
        c = call(base, ctx.timeout)
        r = c.json()
        if c.rc != 0 or r is None or not isinstance(r.get("measured"), dict):
            why = c.why()
            if c.rc == 2 and backend == "cuda":
                # nvidia-smi saw a GPU, but this build or driver cannot use it.
                why = "cuda backend unavailable: " + why
            e["status"], e["error"] = "error", why
            return
        runs.append(r)
    runs.sort(key=lambda r: r["measured"].get("makespan_s") or 0)
    r = runs[len(runs) // 2]
    for k in ("device", "error_pct", "arena_bytes", "planned_peak_bytes",
              "host_bytes"):
        if k in r:
            x[k] = r[k]
    for k in ("predicted", "measured"):
        x[k] = {f: r[k].get(f) for f in RUN_SUMMARY if f in r[k]}
    x["measured_makespans_s"] = [q["measured"].get("makespan_s") for q in runs]
    c = call(base + ["--verify"], ctx.timeout)
    v = c.json()
    if v is not None:
        x["verified"] = v.get("verified")
        x["faults_total"] = v.get("faults_total")
        if isinstance(v.get("faults"), list) and v["faults"]:
            x["faults"] = v["faults"][:5]
    if c.rc == 0 and v is not None:
        e["status"], e["error"] = "ok", None
    elif c.rc == 1 and v is not None and v.get("verified") is False:
        e["status"] = "error"
        e["error"] = "verification failed: %s" % ((x.get("faults") or ["?"])[0])
    else:
        e["status"], e["error"] = "error", "--verify: " + c.why()


def run_job(ctx, job_id):
    """Runs one job; always returns an entry (status error on failure)."""
    m = JOB_RE.match(job_id)
    e = {"id": job_id, "graph": None, "policy": None, "kind": None,
         "status": "error", "error": None}
    t0 = time.monotonic()
    e["started"] = now_iso()
    tmp = tempfile.mkdtemp(prefix="hoff-job.")
    try:
        if not m:
            raise ValueError("not a job id: %r" % job_id)
        gid, policy, variant = m.group("graph"), m.group("policy"), m.group("variant")
        e["graph"], e["policy"] = gid, policy
        if variant is None:
            e["kind"] = "exact" if policy == "exact" else "plan"
        elif variant.startswith("sweep"):
            e["kind"] = "sweep"
        else:
            e["kind"] = "exec"
        spec = ctx.graphs().get(gid)
        if spec is None:
            raise KeyError("graph %r is not in the suite (--suite %s)" %
                           (gid, ctx.a.suite))
        e["graph_source"] = spec["source"]
        path = ctx.graph_path(gid)
        info = ctx.graph_info(gid)
        e["graph_name"] = info.get("graph")
        e["ops"], e["tensors"] = info.get("ops"), info.get("tensors")
        e["model"] = info.get("model")
        if e["kind"] == "plan":
            job_plan(ctx, e, path, policy, tmp)
        elif e["kind"] == "sweep":
            k = int(variant[5:])
            if policy != "greedy" or k >= SWEEP_STEPS:
                raise ValueError("no such sweep job: %r" % job_id)
            job_sweep(ctx, e, path, k)
        elif e["kind"] == "exact":
            job_exact(ctx, e, path)
        else:
            job_exec(ctx, e, path, policy, variant[5:], info, tmp)
    except Exception as x:
        e["status"] = "error"
        e["error"] = "%s: %s" % (type(x).__name__, x)
        e["traceback"] = traceback.format_exc(limit=4)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    e["wall_s"] = round(time.monotonic() - t0, 6)
    e["host"] = platform.node()
    if e.get("error") is None:
        e.pop("error", None)
    return e


def status_line(e):
    extra = ""
    if e["status"] in ("ok", "infeasible") and e.get("peak_bytes") is not None:
        extra = " peak %.3f GiB makespan %.6g s" % (e["peak_bytes"] / 2**30,
                                                 e.get("makespan_s") or 0)
    if e.get("error"):
        extra = " (%s)" % e["error"]
    return "%s %s %.2f s%s" % (e["id"], e["status"], e["wall_s"], extra)


# -- merge ------------------------------------------------------------------

def json_objects(dirpath, need, skip=lambda f: False):
    """(name, object, None) for each DIR/*.json (by name, dot files and
    skip(name) left out) that holds a JSON object with the keys need;
    (name, None, why) for the others."""
    for f in sorted(os.listdir(dirpath)):
        if not f.endswith(".json") or f.startswith(".") or skip(f):
            continue
        try:
            with open(os.path.join(dirpath, f)) as fh:
                o = json.load(fh)
            if not isinstance(o, dict) or not all(k in o for k in need):
                raise ValueError("no " + ", ".join(need))
        except (ValueError, OSError) as x:
            yield f, None, x
            continue
        yield f, o, None


def merge(dirpath, ctx_info=None):
    entries = {}
    for f, e, why in json_objects(dirpath, ["id"]):
        if e is None:
            log("merge: skipped %s: %s" % (f, why))
        else:
            entries[e["id"]] = e
    hosts = sorted({e.get("host") for e in entries.values() if e.get("host")})
    doc = {"format": RESULTS_FORMAT, "version": RESULTS_VERSION,
           "created": now_iso(), "commit": git_commit(), "hosts": hosts,
           "params": {"policies": POLICIES, "sweep_steps": SWEEP_STEPS,
                      "small_ops": SMALL_OPS}}
    if ctx_info:
        doc.update(ctx_info)
    doc["entries"] = [entries[k] for k in sorted(entries)]
    return doc


def load_results(path):
    with open(path) as f:
        d = json.load(f)
    if not isinstance(d, dict) or d.get("format") != RESULTS_FORMAT:
        raise ValueError("%s: not a %s results file" % (path, RESULTS_FORMAT))
    return d


# -- compare ----------------------------------------------------------------

def compare(old, new, thr, solve_factor, solve_min, out=sys.stdout):
    """Prints what regressed from old to new; returns the regression count."""
    o = {e["id"]: e for e in old["entries"]}
    n = {e["id"]: e for e in new["entries"]}
    reg, notes, better = [], [], []

    def worse(a, b):
        return a is not None and b is not None and b > a * (1 + thr) and b > a

    for jid in sorted(o):
        a, b = o[jid], n.get(jid)
        if b is None:
            notes.append("%s: not in the new results" % jid)
            continue
        sa, sb = a.get("status"), b.get("status")
        if "skipped" in (sa, sb):
            if sa != sb:
                notes.append("%s: %s before, %s now (%s)" % (
                    jid, sa, sb, b.get("error") or a.get("error")))
            continue
        if sb == "error" and sa != "error":
            reg.append("%s: now fails: %s" % (jid, b.get("error")))
            continue
        if sa == "error":
            if sb != "error":
                notes.append("%s: failed before, %s now" % (jid, sb))
            continue
        if sa == "ok" and sb == "infeasible":
            reg.append("%s: budget %s no longer met (peak %s B)" % (
                jid, b.get("budget_bytes"), b.get("peak_bytes")))
            continue
        if a.get("valid") is True and b.get("valid") is False:
            reg.append("%s: schedule no longer valid" % jid)
            continue
        kind = b.get("kind")
        sweep_moved = (kind == "sweep" and
                       a.get("budget_bytes") != b.get("budget_bytes"))
        if kind in ("plan", "sweep"):
            if (a.get("feasible") is True and b.get("feasible") is False
                    and not sweep_moved):
                reg.append("%s: no longer feasible (peak %s B, overhead over "
                           "the lower bound %s)" % (jid, b.get("peak_bytes"),
                                                    b.get("overhead_vs_lower_bound")))
            if sweep_moved:
                notes.append("%s: budget moved %s -> %s B (greedy's floor "
                             "changed); not compared" % (
                                 jid, a.get("budget_bytes"), b.get("budget_bytes")))
                fa = (a.get("sweep") or {}).get("floor_bytes")
                fb = (b.get("sweep") or {}).get("floor_bytes")
                if (b.get("sweep") or {}).get("step") == 0 and worse(fa, fb):
                    reg.append("%s: greedy's floor (smallest peak) %s -> %s B "
                               "(%+.1f%% > %.1f%%)" % (jid, fa, fb,
                                                       100 * (fb / fa - 1), 100 * thr))
            else:
                for f in ("peak_bytes", "makespan_s"):
                    va, vb = a.get(f), b.get(f)
                    if worse(va, vb):
                        reg.append("%s: %s %.10g -> %.10g (%+.2f%% > %.1f%%)" % (
                            jid, f, va, vb, 100 * (vb / va - 1), 100 * thr))
                    elif va and vb is not None and vb < va * (1 - thr):
                        better.append("%s: %s %.10g -> %.10g (%+.2f%%)" % (
                            jid, f, va, vb, 100 * (vb / va - 1)))
        elif kind == "exact":
            xa, xb = a.get("exact") or {}, b.get("exact") or {}
            if str(xa.get("status")).startswith("optimal") and str(xb.get("status")).startswith("optimal"):
                if worse(xa.get("objective"), xb.get("objective")):
                    reg.append("%s: optimal objective %.10g -> %.10g" % (
                        jid, xa["objective"], xb["objective"]))
                # GLPK is deterministic: run to optimality, its node count
                # is a measure of work that load does not disturb.
                na = (xa.get("model") or {}).get("nodes")
                nb = (xb.get("model") or {}).get("nodes")
                if (isinstance(na, int) and isinstance(nb, int) and na > 0
                        and nb > solve_factor * na and nb - na > 100):
                    reg.append("%s: branch-and-bound nodes %d -> %d (x%.1f > x%g)"
                               % (jid, na, nb, nb / na, solve_factor))
            elif xa.get("status") != xb.get("status"):
                notes.append("%s: exact status %s -> %s" % (
                    jid, xa.get("status"), xb.get("status")))
        elif kind == "exec":
            xa, xb = a.get("exec") or {}, b.get("exec") or {}
            if xa.get("verified") is True and xb.get("verified") is False:
                reg.append("%s: executor verification now fails: %s" % (
                    jid, (xb.get("faults") or ["?"])[0]))
        if kind in ("plan", "sweep", "exact") and not sweep_moved:
            ta, tb = a.get("solve_s"), b.get("solve_s")
            if kind == "exact" and ta is not None and tb is not None:
                # A run cut off by the time limit says only "at least the
                # limit": on a loaded machine, a solve that took half the
                # limit may reach it. Compare then only when the baseline
                # was more than 2*factor times faster than the limit.
                lim_a = (a.get("exact") or {}).get("time_limit_s")
                lim_b = (b.get("exact") or {}).get("time_limit_s")
                cut_a = (a.get("exact") or {}).get("status") == "time_limit"
                cut_b = (b.get("exact") or {}).get("status") == "time_limit"
                if cut_a or lim_a != lim_b:
                    ta = None
                elif cut_b and lim_b and ta * 2 * solve_factor > lim_b:
                    ta = None
            if (ta is not None and tb is not None and tb > solve_factor * ta
                    and tb > solve_min):
                reg.append("%s: solve_s %.3f -> %.3f s (x%.1f > x%g and > %g s)"
                           % (jid, ta, tb, tb / ta if ta > 0 else float("inf"),
                              solve_factor, solve_min))
    for jid in sorted(set(n) - set(o)):
        notes.append("%s: new (no baseline)" % jid)
    for line in notes:
        print("note: " + line, file=out)
    for line in better:
        print("improved: " + line, file=out)
    for line in reg:
        print("REGRESSION " + line, file=out)
    print("compare: %d regression%s in %d baseline entries (%s vs %s; "
          "threshold %.1f%% on peak and makespan, solve time x%g and > %g s)" % (
              len(reg), "" if len(reg) == 1 else "s", len(o),
              new.get("commit"), old.get("commit"), 100 * thr, solve_factor,
              solve_min), file=out)
    return len(reg)


# -- report -----------------------------------------------------------------

def gib(b):
    return "%.2f" % (b / 2**30) if b is not None else "-"


def pct(x, signed=False):
    if x is None:
        return "-"
    v = round(100 * x, 1) + 0.0  # no "-0.0%"
    return ("%+.1f%%" if signed else "%.1f%%") % v


def fnum(x, fmt="%.4g"):
    return fmt % x if isinstance(x, (int, float)) else "-"


def by_id(doc):
    return {e["id"]: e for e in doc["entries"]}


def graph_order(doc):
    seen = []
    for e in doc["entries"]:
        if e.get("graph") and e["graph"] not in seen:
            seen.append(e["graph"])
    data = [g for g in seen if not g.startswith("gen-")]
    return data + [g for g in seen if g.startswith("gen-")]


def usable(e):
    return e is not None and e.get("status") in ("ok", "infeasible") and \
        e.get("peak_bytes") is not None


def table_md(doc):
    E = by_id(doc)
    L = ["# hoffopt benchmark results", "",
         "Commit %s, %s, hosts %s. Peak and bytes in GiB; `overhead` is "
         "makespan / compute − 1, `over LB` is makespan / lower_bound_s − 1 "
         "(FORMAT.md); `vs none` is the peak against none's. Plans use each "
         "policy's default objective (greedy: smallest peak within 1%% of the "
         "lower bound that fits the device)." % (
             doc.get("commit"), doc.get("created"), ", ".join(doc.get("hosts") or [])),
         "", "## Policies", "",
         "| graph | ops | policy | peak | vs none | makespan s | overhead | over LB "
         "| stall s | h2d | d2h | solve s | feasible | plan from |",
         "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"]
    for g in graph_order(doc):
        for p in POLICIES + ["exact"]:
            e = E.get("%s/%s" % (g, p))
            if e is None:
                continue
            if not usable(e):
                L.append("| %s | %s | %s | (%s) | | | | | | | | | | %s |" % (
                    g, e.get("ops") or "", p, e.get("status"),
                    (e.get("error") or "").replace("|", "/")[:80]))
                continue
            L.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                g, e.get("ops"), p, gib(e["peak_bytes"]),
                pct(-e["reduction"], True) if e.get("reduction") is not None
                else "-",
                fnum(e.get("makespan_s"), "%.5g"), pct(e.get("overhead")),
                pct(e.get("overhead_vs_lower_bound")),
                fnum(e.get("stall_s"), "%.4g"), gib(e.get("h2d_bytes")),
                gib(e.get("d2h_bytes")), fnum(e.get("solve_s"), "%.3f"),
                "yes" if e.get("feasible") else "no", e.get("source") or ""))
    L += ["", "## Greedy budget sweep (Pareto curve of peak against makespan)", "",
          "Budgets evenly spaced from none's peak (step 0) down to greedy's "
          "smallest peak (step %d)." % (SWEEP_STEPS - 1), "",
          "| graph | step | budget | peak | makespan s | over LB | solve s | status |",
          "|---|---:|---:|---:|---:|---:|---:|---|"]
    for g in graph_order(doc):
        for k in range(SWEEP_STEPS):
            e = E.get("%s/greedy/sweep%d" % (g, k))
            if e is None:
                continue
            if not usable(e):
                L.append("| %s | %d | | | | | | %s: %s |" % (
                    g, k, e.get("status"), (e.get("error") or "")[:80]))
                continue
            L.append("| %s | %d | %s | %s | %s | %s | %s | %s |" % (
                g, k, gib(e.get("budget_bytes")), gib(e["peak_bytes"]),
                fnum(e.get("makespan_s"), "%.5g"),
                pct(e.get("overhead_vs_lower_bound")),
                fnum(e.get("solve_s"), "%.3f"), e["status"]))
    ex = [e for e in doc["entries"] if e.get("kind") == "exact"]
    L += ["", "## Exact (ILP) against greedy, graphs of at most %d ops" % SMALL_OPS, ""]
    if not ex:
        L.append("(no exact jobs)")
    elif all(e.get("status") == "skipped" for e in ex):
        L.append("(skipped: %s)" % ex[0].get("error"))
    else:
        L += ["`objective` and `bound` are the ILP's (the peak in GiB, "
              "as the model sees it); `exact peak` is the simulated peak of the schedule "
              "`--exact` returns (`plan from`: the decoded ILP solution, or "
              "greedy's when that simulates better).", "",
              "| graph | ops | status | objective | bound | gap | exact peak | "
              "plan from | greedy peak | greedy vs exact | solve s |",
              "|---|---:|---|---:|---:|---:|---:|---|---:|---:|---:|"]
        for g in graph_order(doc):
            e = E.get("%s/exact" % g)
            if e is None:
                continue
            x = e.get("exact") or {}
            gr = E.get("%s/greedy" % g)
            gp = gr.get("peak_bytes") if usable(gr) else None
            ep = e.get("peak_bytes")
            L.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                g, e.get("ops"), x.get("status") or e.get("status"),
                *[gib(x.get(k)) if x.get("objective_kind") == "peak_bytes"
                  and isinstance(x.get(k), (int, float)) else fnum(x.get(k), "%.6g")
                  for k in ("objective", "bound")],
                pct(x.get("gap")), gib(ep), x.get("source") or "-", gib(gp),
                pct(gp / ep - 1, True) if gp and ep else "-",
                fnum(e.get("solve_s"), "%.2f")))
    xs = [e for e in doc["entries"] if e.get("kind") == "exec"]
    L += ["", "## Executors (measured against the simulator's prediction)", ""]
    ran = [e for e in xs if e.get("status") != "skipped"]
    skipped = {}
    for e in xs:
        if e.get("status") == "skipped":
            b = (e.get("exec") or {}).get("backend") or e["id"].rsplit("-", 1)[-1]
            skipped.setdefault(b, e.get("error"))
    for b, why in sorted(skipped.items()):
        L.append("- backend %s skipped: %s" % (b, why))
    if ran:
        L += ["", "| graph | policy | backend | scale (time, size) | predicted s | "
              "measured s | error | peak pred. | peak meas. | verified | status |",
              "|---|---|---|---|---:|---:|---:|---:|---:|---|---|"]
        for e in ran:
            x = e.get("exec") or {}
            pr, me = x.get("predicted") or {}, x.get("measured") or {}
            L.append("| %s | %s | %s | %s, %s | %s | %s | %s | %s | %s | %s | %s |" % (
                e["graph"], e["policy"], x.get("backend"),
                fnum(x.get("time_scale"), "%.3g"), fnum(x.get("size_scale"), "%.3g"),
                fnum(pr.get("makespan_s"), "%.5g"), fnum(me.get("makespan_s"), "%.5g"),
                "%+.1f%%" % x["error_pct"] if isinstance(x.get("error_pct"), (int, float)) else "-",
                fnum(pr.get("peak_bytes"), "%d"), fnum(me.get("peak_bytes"), "%d"),
                {True: "yes", False: "NO"}.get(x.get("verified"), "-"), e["status"] if e["status"] == "ok"
                else "%s: %s" % (e["status"], (e.get("error") or "")[:60])))
    errs = [e for e in doc["entries"] if e.get("status") == "error"]
    L += ["", "## Errors", ""]
    L += ["- %s: %s" % (e["id"], e.get("error")) for e in errs] or ["(none)"]
    return "\n".join(L) + "\n"


def is_model(doc, g):
    """A graph of a model (its meta names one), not a hand-made one."""
    return any(e.get("model") for e in doc["entries"] if e.get("graph") == g)


def headline_md(doc, command):
    E = by_id(doc)
    L = ["## Headline: greedy against the runtime baselines", "",
         "`%s` (commit %s, %s). Greedy plans the smallest peak whose makespan "
         "is within 1%% of FORMAT.md's `lower_bound_s` and that fits the "
         "device; each cell is a policy's peak in GiB with its makespan's "
         "overhead over the lower bound; *vs X* is greedy's peak against "
         "X's (negative: greedy needs less memory). † greedy found no plan "
         "within 1%% that fits (the fastest plan that fits instead)." % (
             command, doc.get("commit"), doc.get("created")), "",
         "| graph | none | reactive | lookahead:1 | greedy | vs none | vs reactive "
         "| vs lookahead:1 | greedy vs exact |",
         "|---|---:|---:|---:|---:|---:|---:|---:|---|"]

    def cell(e):
        if not usable(e):
            return "(%s)" % (e or {}).get("status", "missing")
        return "%s (+%s)" % (gib(e["peak_bytes"]),
                             pct(e.get("overhead_vs_lower_bound")))

    for g in graph_order(doc):
        if not is_model(doc, g):
            continue
        gr = E.get("%s/greedy" % g)
        row = [g]
        for p in ("none", "reactive", "lookahead:1"):
            row.append(cell(E.get("%s/%s" % (g, p))))
        c = cell(gr)
        if usable(gr) and not gr.get("feasible"):
            c += " †"
        row.append(c)
        for p in ("none", "reactive", "lookahead:1"):
            b = E.get("%s/%s" % (g, p))
            if usable(gr) and usable(b) and b["peak_bytes"] > 0:
                row.append(pct(gr["peak_bytes"] / b["peak_bytes"] - 1, True))
            else:
                row.append("-")
        row.append(exact_cell(E.get("%s/exact" % g), gr))
        L.append("| " + " | ".join(row) + " |")
    lim = exact_limit(doc)
    if lim is None:
        L += ["", "*greedy vs exact*: not run (this hoffopt has no `--exact`)."]
    else:
        L += ["", "*greedy vs exact*: greedy's peak against that of the "
              "schedule `hoffopt --exact` returns (ILP with GLPK, "
              "`--time-limit %s`; graphs of at most %d ops), the solver's "
              "status, and greedy's peak against the ILP's lower bound on "
              "the peak." % (lim, SMALL_OPS)]
    return "\n".join(L) + "\n"


def exact_limit(doc):
    for e in doc["entries"]:
        if (e.get("exact") or {}).get("time_limit_s") is not None:
            return "%g" % e["exact"]["time_limit_s"]
    return None


def exact_cell(x, gr):
    """greedy against exact, for the headline."""
    if x is None:
        return "— (> %d ops)" % SMALL_OPS
    if x.get("status") == "skipped":
        return "n/a (no --exact)"
    if not usable(x):
        return "(%s)" % x.get("status")
    xe = x.get("exact") or {}
    gp = gr["peak_bytes"] if usable(gr) else None
    if gp is None or not x["peak_bytes"]:
        return xe.get("status") or "-"
    out = "%s (%s" % (pct(gp / x["peak_bytes"] - 1, True), xe.get("status"))
    b = xe.get("bound")
    if xe.get("objective_kind") == "peak_bytes" and isinstance(b, (int, float)) and b > 0:
        out += "; %s over the ILP bound" % pct(gp / b - 1, True)
    return out + ")"


def report(doc, outdir, plots=True, memory_graphs=None):
    os.makedirs(outdir, exist_ok=True)
    write_atomic(os.path.join(outdir, "table.md"), table_md(doc))
    write_atomic(os.path.join(outdir, "headline.md"),
                 headline_md(doc, "bench/harness.py all"))
    log("report: wrote %s/table.md and %s/headline.md" % (outdir, outdir))
    if not plots:
        return 0
    py = "/usr/bin/python3"
    chk = call([py, "-c", "import matplotlib"], 60) if os.path.exists(py) else None
    if chk is None or chk.rc != 0:
        log("report: plots skipped: %s has no matplotlib (install it with "
            "tests/deps.sh python3-matplotlib)" % py)
        return 0
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(doc, f)
        tmpdoc = f.name
    try:
        argv = [py, os.path.join(ROOT, "bench", "plot.py"), tmpdoc, "--outdir", outdir]
        for g in memory_graphs or []:
            argv += ["--memory-graph", g]
        c = call(argv, 600)
    finally:
        os.unlink(tmpdoc)
    for line in c.err.strip().splitlines():
        log(line)
    if c.rc != 0:
        log("report: plotting failed: " + c.why())
        return 1
    return 0


# -- tables: the README's policy, exact and executor tables -----------------
# `policy-table`, `exact-table` and `exec-table` print the markdown tables
# that the removed policy_table.sh, exact_table.sh and exec_table.sh printed,
# byte for byte with the same hoffopt and settings (the timings aside),
# one graph after another, with the harness's timeouts: policy-table and
# exec-table run what the plan and exec-cpu jobs run (exec_scale, to three
# digits), exact-table runs `hoffopt compare` (the exact job's --exact and
# greedy, side by side).

def data_graphs(max_ops=None):
    """The hoffopt graphs of data/ (sorted by name), those with at most
    max_ops ops when max_ops is given."""
    d = os.path.join(ROOT, "data")
    return [os.path.join(d, f) for f, g, _ in json_objects(
        d, ["format"], lambda f: f.endswith(".schedule.json"))
        if g is not None and g["format"] == "hoffopt.graph" and
        (max_ops is None or 0 < len(g.get("ops") or []) <= max_ops)]


def split_args(args, max_ops=None):
    """(graphs, extra): the .json arguments, else data_graphs(max_ops); and
    the rest, the hoffopt options (given after "--")."""
    graphs = [a for a in args if a.endswith(".json")]
    extra = [a for a in args if not a.endswith(".json")]
    return graphs or data_graphs(max_ops), extra


def jq_num(x):
    """A number as jq 1.6 prints it (shortest digits; an exponent below
    1e-4 or past 17 digits): the tables were jq's and stay byte-identical."""
    if x is None:
        return "null"
    if isinstance(x, bool):
        return "true" if x else "false"
    x = float(x)
    if x != x:
        return "null"
    if x == 0:
        return "-0" if str(x).startswith("-") else "0"
    if x in (float("inf"), float("-inf")):
        return ("-" if x < 0 else "") + "1.7976931348623157e+308"
    t = decimal.Decimal(repr(abs(x))).normalize().as_tuple()
    s = "".join(map(str, t.digits))
    pt = len(s) + t.exponent  # the decimal point's place in s
    sign = "-" if x < 0 else ""
    if pt <= -4 or pt > len(s) + 15:
        return "%s%s%se%+03d" % (sign, s[0], "." + s[1:] if s[1:] else "",
                                 pt - 1)
    if pt <= 0:
        return sign + "0." + "0" * -pt + s
    if pt >= len(s):
        return sign + s + "0" * (pt - len(s))
    return sign + s[:pt] + "." + s[pt:]


def jq_round(x, k):
    """jq's `x * k | round / k` (C's round: halves away from zero)."""
    v = abs(x * k)
    r = math.floor(v)
    r += 1 if v - r >= 0.5 else 0
    return math.copysign(r, x) / k


def jq_compact(obj):
    """jq -c's rendering of a flat object of strings, numbers and bools."""
    return "{" + ",".join("%s:%s" % (json.dumps(k), json.dumps(v, ensure_ascii=False)
                                     if isinstance(v, str) else jq_num(v))
                          for k, v in obj.items()) + "}"


def last_line(text):
    """`tail -1` of a command's stderr."""
    lines = text.splitlines()
    return lines[-1] if lines else ""


def cmd_policy_table(ctx):
    """greedy against the runtime baselines (none, reactive, lookahead:1)
    on every graph of data/ or the graphs given: peak, reduction against
    none, makespan, overhead, whether it fits the device, then greedy again
    at reactive's and lookahead:1's own makespan, where its peak must be no
    higher. Exit 1 if greedy is ever worse or a plan is invalid."""
    graphs, _ = split_args(ctx.a.args)
    res = {}
    for g in graphs:
        for p in ("none", "reactive", "lookahead:1", "greedy"):
            res[g, p] = call([ctx.hoff, "--policy", p, g, "--json"],
                             ctx.timeout).json()
        for p in ("reactive", "lookahead:1"):
            d = res[g, p]
            if d is None:
                res[g, "greedy@" + p] = None
                continue
            x = repr(d["makespan_s"] / d["lower_bound_s"] - 1 + 1e-12)
            res[g, "greedy@" + p] = call(
                [ctx.hoff, "--greedy", g, "--max-overhead", x, "--json"],
                ctx.timeout).json()
    bad = 0
    print("| graph | policy | peak GiB | reduction vs none | makespan s "
          "| overhead | fits device | plan from |")
    print("|---|---|---:|---:|---:|---:|---|---|")
    for g in graphs:
        name = os.path.basename(g)[:-5]
        none = res[g, "none"]
        for p in ["none", "reactive", "lookahead:1", "greedy",
                  "greedy@reactive", "greedy@lookahead:1"]:
            d = res[g, p]
            if d is None or none is None:
                print("| %s | %s | (failed) | | | | | |" % (name, p))
                bad = 1
                continue
            red = 1 - d["peak_bytes"] / none["peak_bytes"]
            ov = d["overhead"] if d["overhead"] is not None else 0
            fits = d["valid"] and d["peak_bytes"] <= d["device_memory_bytes"]
            print("| %s | %s | %s | %.1f%% | %.4f | %.1f%% | %s | %s |" % (
                name, p, gib(d["peak_bytes"]), 100 * red, d["makespan_s"],
                100 * ov, "yes" if fits else "no", d["source"]))
            if not d["valid"]:
                bad = 1
            if p.startswith("greedy@"):
                base = res[g, p.split("@")[1]]
                if (d["makespan_s"] <= base["makespan_s"] * (1 + 1e-9)
                        and d["peak_bytes"] > base["peak_bytes"]):
                    log("greedy worse than %s on %s" % (p, name))
                    bad = 1
    return bad


def cmd_exact_table(ctx):
    """`hoffopt compare` (greedy against exact) on data/'s graphs of at most
    MAXOPS ops (default 150) or the graphs given: status, greedy's and
    exact's simulated objectives, the bound, each one's gap, solve time.
    Exit 1 if exact is ever worse than greedy."""
    graphs, extra = split_args(ctx.a.args,
                               int(os.environ.get("MAXOPS", SMALL_OPS)))
    limit = "%g" % ctx.a.exact_time_limit
    tl = ctx.a.exact_time_limit
    print("Objective: %s; time limit %s s.\n" % (
        " ".join(extra) or "least peak within 1% of the lower bound", limit))
    print("| graph | ops | candidates | status | greedy | exact | bound "
          "| greedy gap | exact gap | solve s |")
    print("|---|---|---|---|---|---|---|---|---|---|")

    def f(v, kind):
        if v is None:
            return "-"
        return "%.6g s" % v if kind == "stall_s" else "%.6g B" % v

    def gap(v):
        return "-" if v is None else "%.3f%%" % (100 * v)

    bad = 0
    for g in graphs:
        name = os.path.basename(g)
        c = call([ctx.hoff, "compare", g, "--time-limit", limit, "--quiet",
                  "--json"] + extra, tl + max(120, tl))
        d = c.json()
        if d is None:
            err = c.err.strip().splitlines()
            print("| %s | - | - | error: %s | | | | | | |" % (
                name, err[-1] if err else "?"))
            bad = 1
            continue
        k, gr, ex = d["objective_kind"], d["greedy"], d["exact"]
        worse = gr["feasible"] and (
            not ex["feasible"]
            or ex["simulated_objective"] > gr["objective"] * (1 + 1e-12))
        bad |= worse
        print("| %s | %d | %d | %s | %s | %s | %s | %s | %s | %.1f |" % (
            name, ex["model"]["ops"], ex["model"]["candidates"], ex["status"],
            f(gr["objective"], k), f(ex["simulated_objective"], k),
            f(d["bound"], k), gap(gr["gap"]), gap(ex["gap"]), ex["solve_s"])
            + (" **worse than greedy**" if worse else ""), flush=True)
    return 1 if bad else 0


def exec_table_graphs(ctx, tmp):
    """exec-table's graphs: those given, else data/'s, else (none there)
    two-layer model graphs generated into tmp."""
    graphs, _ = split_args(ctx.a.args)
    if graphs:
        return graphs
    for spec in ("llama3-8b decode host", "llama3-8b prefill host",
                 "mixtral-8x7b decode host", "llama3-8b train auto"):
        m, phase, w = spec.split()
        g = os.path.join(tmp, "%s-%s.json" % (m, phase))
        c = call([ctx.hoff, "gen", m, "--phase", phase, "--layers", "2",
                  "--seq", "1024", "--weights", w, "-o", g], ctx.timeout)
        if c.rc != 0:
            sys.exit("exec_table: gen failed: " + c.why())
        graphs.append(g)
    return graphs


def exec_table_row(ctx, g, name, p, info, tmp):
    """One exec-table row (a dict, jq's field order), or None when the
    plan failed (skipped) or a timed run failed (the table fails)."""
    s = os.path.join(tmp, "s.json")
    c = call([ctx.hoff, "--policy", p, g, "-o", s, "--json"], ctx.timeout)
    d = c.json()
    if c.rc != 0 or d is None:
        log("exec_table: %s %s: planning failed: %s" % (name, p, last_line(c.err)))
        return "skip"
    tk, sk = exec_scale(info, d, ctx.a.exec_cpu_bytes, ctx.a.exec_target_s,
                        ctx.a.exec_min_op_s)
    base = [ctx.hoff, "run", g, s, "--backend", "cpu", "--json",
            "--time-scale", "%.3g" % tk, "--size-scale", "%.3g" % sk]
    runs = []
    for _ in range(ctx.a.exec_repeat):
        c = call(base, ctx.timeout)
        if c.rc != 0 or c.json() is None:
            log("exec_table: %s %s: run failed: %s" % (name, p, last_line(c.err)))
            return None
        runs.append(c.json())
    c = call(base + ["--verify"], ctx.timeout)
    verified = False
    if c.rc == 0 and c.json() is not None:
        verified = c.json().get("verified")
    else:
        log("exec_table: %s %s: --verify: %s" % (name, p, last_line(c.err)))
    r = sorted(runs, key=lambda q: q["measured"]["makespan_s"])[len(runs) // 2]
    return {"graph": name, "policy": p, "time_scale": r.get("time_scale"),
            "size_scale": r.get("size_scale"), "runs": ctx.a.exec_repeat,
            "verified": verified,
            "predicted_makespan_s": r["predicted"]["makespan_s"],
            "measured_makespan_s": r["measured"]["makespan_s"],
            "error_pct": r.get("error_pct"),
            "predicted_peak_bytes": r["predicted"]["peak_bytes"],
            "measured_peak_bytes": r["measured"]["peak_bytes"],
            "planned_peak_bytes": r.get("planned_peak_bytes"),
            "arena_bytes": r.get("arena_bytes"),
            "lag_max_s": r.get("lag_max_s"), "overruns": r.get("overruns")}


def cmd_exec_table(ctx):
    """The CPU executor against the simulator: every graph (data/'s or
    those given) under each policy, scaled to this machine (exec_scale,
    three digits), the median of --exec-repeat timed runs, then one run
    with --verify. Prints a markdown table and the totals, writes the rows
    to bench/results/exec-UTCSTAMP.json; exit 1 when a run fails, does not
    verify, or misses the target (every error within 10%)."""
    tmp = tempfile.mkdtemp(prefix="hoff-exec.")
    try:
        graphs = exec_table_graphs(ctx, tmp)
        rows, failed = [], 0
        print("| graph | policy | time x | size x | predicted makespan s "
              "| measured s | error % | predicted peak B | measured peak B "
              "| arena B | verified |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
        for g in graphs:
            with open(g) as fh:
                name = json.load(fh).get("name") or os.path.basename(g)[:-5]
            c = call([ctx.hoff, "analyze", g, "--json"], ctx.timeout)
            info = c.json()
            if info is None:
                sys.exit("exec_table: %s: analyze failed: %s" % (name, c.why()))
            for p in ctx.a.policies.split():
                row = exec_table_row(ctx, g, name, p, info, tmp)
                if row == "skip":
                    continue
                if row is None:
                    failed = 1
                    continue
                rows.append(row)
                print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                    row["graph"], row["policy"], jq_num(row["time_scale"]),
                    jq_num(row["size_scale"]),
                    jq_num(jq_round(row["predicted_makespan_s"], 1e6)),
                    jq_num(jq_round(row["measured_makespan_s"], 1e6)),
                    jq_num(jq_round(row["error_pct"], 100)),
                    jq_num(row["predicted_peak_bytes"]),
                    jq_num(row["measured_peak_bytes"]),
                    jq_num(row["arena_bytes"]), jq_num(row["verified"])),
                    flush=True)
                if row["verified"] is not True:
                    failed = 1
        n = len(rows)
        close = sum(1 for r in rows if abs(r["error_pct"]) <= 10)
        peak = sum(1 for r in rows
                   if r["measured_peak_bytes"] == r["planned_peak_bytes"])
        ver = sum(1 for r in rows if r["verified"] is True)
        if close != n:
            failed = 1
        print()
        print("within 10%% of the prediction: %d of %d; verified: %d of %d; "
              "measured peak = planned peak: %d of %d" % (close, n, ver, n,
                                                          peak, n))
        print("target (every run within 10%% and verified): %s" % (
            "PASS" if failed == 0 else "FAIL"))
        c = call(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], 30)
        out = "bench/results/exec-%s.json" % time.strftime(
            "%Y%m%dT%H%M%SZ", time.gmtime())
        write_atomic(os.path.join(ROOT, out), (
            '{"bench":"exec","backend":"cpu","commit":"%s","host":"%s",'
            '"cpus":%d,"rows":[%s]}\n' % (
                c.out.strip() if c.rc == 0 else "none", platform.node(),
                len(os.sched_getaffinity(0)),
                ",".join(jq_compact(r) for r in rows))))
        print("wrote %s" % out)
        return failed
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# -- commands ---------------------------------------------------------------

def cmd_list(ctx):
    for j in ctx.jobs():
        print(j)
    return 0


def cmd_run(ctx):
    rc = 0
    for jid in ctx.a.job:
        e = run_job(ctx, jid)
        write_json(os.path.join(ctx.a.out, safe_name(jid)), e)
        print(status_line(e))
        if e["status"] == "error":
            rc = 1
    return rc


def cmd_merge(ctx_a):
    doc = merge(ctx_a.dir)
    write_results(ctx_a.output, doc)
    n = len(doc["entries"])
    errs = sum(1 for e in doc["entries"] if e.get("status") == "error")
    log("merge: %d entries (%d errors) -> %s" % (n, errs, ctx_a.output))
    return 0 if n else 1


def cmd_report(a):
    doc = load_results(a.results)
    return report(doc, a.outdir, plots=not a.no_plots,
                  memory_graphs=a.memory_graph)


def cmd_compare(a):
    try:
        old, new = load_results(a.old), load_results(a.new)
    except (ValueError, OSError) as x:
        log("compare: %s" % x)
        return 2
    n = compare(old, new, a.threshold, a.solve_factor, a.solve_min)
    return 1 if n else 0


def job_cost(jid):
    """Rough order for the pool: long jobs first."""
    if jid.endswith("/exact"):
        return 0
    if jid.startswith("gen-") or "/sweep" not in jid:
        return 1
    return 2


def cmd_all(ctx):
    a = ctx.a
    t0 = time.monotonic()
    own_work = a.work is None and not os.environ.get("HOFF_BENCH_WORK")
    if own_work:  # generated graphs go to a fresh temp dir, removed after
        ctx.work = tempfile.mkdtemp(prefix="hoffopt-bench.")
    try:
        present, line = gpu_probe()
        caps = ctx.caps()
        log("harness: hoffopt %s; exact %s; executors %s; %s" % (
            ctx.hoff, "yes" if caps["exact"] else "no (skipped)",
            "yes" if caps["run"] else "no (skipped)",
            line if present else line + " (cuda executor skipped)"))
        jobs = ctx.jobs()
        jobdir = os.path.join(a.out, "jobs")
        os.makedirs(jobdir, exist_ok=True)
        for f in os.listdir(jobdir):
            if f.endswith(".json"):
                os.unlink(os.path.join(jobdir, f))
        # Executor jobs time real runs, and exact's bound is what GLPK
        # gets done in its wall-clock limit: run them alone, after the rest.
        def alone(j):
            return "/exec-" in j or j.endswith("/exact")
        pool_jobs = sorted((j for j in jobs if not alone(j)), key=job_cost)
        solo = [j for j in jobs if alone(j)]
        done = [0]
        total = len(jobs)

        def finish(e):
            write_json(os.path.join(jobdir, safe_name(e["id"])), e)
            done[0] += 1
            log("[%d/%d] %s" % (done[0], total, status_line(e)))

        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
            futs = [ex.submit(run_job, ctx, j) for j in pool_jobs]
            for f in concurrent.futures.as_completed(futs):
                finish(f.result())
        for j in solo:
            finish(run_job(ctx, j))
        doc = merge(jobdir, {"gpu": line, "hoffopt": ctx.hoff,
                             "wall_s": round(time.monotonic() - t0, 3)})
        results = a.output or os.path.join(a.out, "results.json")
        write_results(results, doc)
        errs = [e for e in doc["entries"] if e.get("status") == "error"]
        log("harness: %d jobs, %d errors, %.1f s; wrote %s" % (
            len(doc["entries"]), len(errs), time.monotonic() - t0, results))
        if not a.no_report:
            report(doc, a.out, plots=not a.no_plots, memory_graphs=a.memory_graph)
        log("harness: all done in %.1f s" % (time.monotonic() - t0))
        return 0
    finally:
        if own_work:
            shutil.rmtree(ctx.work, ignore_errors=True)


def main(argv=None):
    # tools: the options of every command that runs hoffopt; common adds
    # the suite's (the job commands list, run and all).
    tools = argparse.ArgumentParser(add_help=False)
    t = tools.add_argument_group("tools")
    t.add_argument("--hoffopt", metavar="PATH",
                   help="the hoffopt binary (default: $HOFFOPT, "
                        "build-bench/hoffopt, build/hoffopt)")
    t.add_argument("--timeout", type=float, default=600, metavar="S",
                   help="time limit of each hoffopt command (default 600)")
    t.add_argument("--exact-time-limit", type=float, default=60, metavar="S",
                   help="--time-limit given to hoffopt --exact and compare "
                        "(default 60)")
    t.add_argument("--exec-target-s", type=float, default=0.25, metavar="S",
                   help="executor runs are time-scaled to about S seconds "
                        "of predicted makespan, never below real time "
                        "(default 0.25)")
    t.add_argument("--exec-min-op-s", type=float, default=2e-4, metavar="S",
                   help="...and scaled so ops last S seconds on average at "
                        "least (default 0.0002)")
    t.add_argument("--exec-repeat", type=int, default=3, metavar="N",
                   help="timed executor runs per job, the median kept "
                        "(default 3), plus one with --verify")
    t.add_argument("--exec-cpu-bytes", type=float, default=256 * 2**20,
                   metavar="B", help="size-scale so a graph's bytes plus "
                   "its peak fit in B bytes on the cpu backend (default "
                   "256 MiB)")
    t.add_argument("--exec-cuda-bytes", type=float, default=8 * 2**30,
                   metavar="B", help="the same for the cuda backend "
                   "(default 8 GiB)")

    common = argparse.ArgumentParser(add_help=False, parents=[tools])
    g = common.add_argument_group("suite")
    g.add_argument("--suite", choices=["full", "data", "tiny", "none"],
                   default="full",
                   help="full: data/ plus generated graphs (default); data: "
                        "data/ only; tiny: data/tiny.json; none: only --graph")
    g.add_argument("--graph", action="append", metavar="G.json",
                   help="add a graph to the suite (repeatable; its id is "
                        "the file name without .json)")
    g.add_argument("--only", metavar="REGEX",
                   help="keep the jobs whose id matches REGEX (list, all)")
    g.add_argument("--work", metavar="DIR",
                   help="cache of generated graphs (default: $HOFF_BENCH_WORK, "
                        "else $TMPDIR/hoffopt-bench-UID; `all` uses a fresh "
                        "temporary folder)")
    p = argparse.ArgumentParser(
        prog="harness.py",
        description="hoffopt's benchmark harness: every policy on every graph "
        "of a suite, a greedy budget sweep, the exact solver and the "
        "executors on small graphs; one results JSON, a markdown table, "
        "a headline table and plots (bench/README.md).",
        epilog="Spread over machines: `harness.py list > jobs.txt`, then one "
        "`harness.py run JOB --out DIR` per line (Slurm array, GNU parallel), "
        "then `harness.py merge DIR -o results.json` and `harness.py report "
        "results.json`.")
    sub = p.add_subparsers(dest="cmd", required=True)
    sp = sub.add_parser("list", parents=[common], help="print one job id a line",
                        description="Prints every job id of the suite, one a "
                        "line: GRAPH/POLICY (plan), GRAPH/greedy/sweepK (budget "
                        "sweep), GRAPH/exact, GRAPH/POLICY/exec-BACKEND.")
    sp = sub.add_parser("run", parents=[common], help="run jobs, one JSON file each",
                        description="Runs each job id given and writes "
                        "DIR/<job>.json (a failed job writes an entry with "
                        "status error). Exit 0, or 1 if some job's status is "
                        "error.")
    sp.add_argument("job", nargs="+", metavar="JOB_ID")
    sp.add_argument("--out", required=True, metavar="DIR")
    sp = sub.add_parser("merge", help="merge job files into one results JSON",
                        description="Collects DIR/*.json job entries into one "
                        "results JSON (schema: bench/README.md).")
    sp.add_argument("dir", metavar="DIR")
    sp.add_argument("-o", "--output", required=True, metavar="RESULTS.json")
    # report and all draw the plots
    plots = argparse.ArgumentParser(add_help=False)
    plots.add_argument("--no-plots", action="store_true", help="tables only")
    plots.add_argument("--memory-graph", action="append", metavar="GRAPH",
                       help="graph(s) of the memory-over-time plot")
    sp = sub.add_parser("report", parents=[plots],
                        help="table, headline and plots from results",
                        description="Writes OUTDIR/table.md, OUTDIR/headline.md "
                        "and the PNG plots (memory-*.png, pareto.png).")
    sp.add_argument("results", metavar="RESULTS.json")
    sp.add_argument("--outdir", default=os.path.join(ROOT, "bench", "results"),
                    help="default bench/results")
    sp = sub.add_parser("compare", help="regressions from OLD to NEW results",
                        description="Prints every regression from OLD to NEW: "
                        "peak or makespan worse by more than --threshold on "
                        "the same job (graph/policy/budget), a job that now "
                        "fails or misses its budget, the executor's "
                        "verification failing, or solve time worse by more "
                        "than --solve-factor and above --solve-min seconds. "
                        "Exit 1 if any, 0 if none, 2 on bad input.")
    sp.add_argument("old", metavar="OLD.json")
    sp.add_argument("new", metavar="NEW.json")
    sp.add_argument("--threshold", type=float, default=0.05, metavar="X",
                    help="relative slack on peak and makespan (default 0.05)")
    sp.add_argument("--solve-factor", type=float, default=2.0, metavar="F",
                    help="solve time regression factor (default 2)")
    sp.add_argument("--solve-min", type=float, default=0.5, metavar="S",
                    help="...only when the new solve time is above S "
                         "seconds (default 0.5)")
    sp = sub.add_parser("all", parents=[common, plots],
                        help="run everything here, merge, report",
                        description="Runs every job on this machine (a small "
                        "pool; executor and exact jobs alone afterwards), merges them "
                        "into OUT/results.json and writes the table, headline "
                        "and plots into OUT.")
    sp.add_argument("--out", default=os.path.join(ROOT, "bench", "results"),
                    metavar="DIR", help="default bench/results")
    sp.add_argument("-o", "--output", metavar="RESULTS.json",
                    help="results file (default OUT/results.json)")
    sp.add_argument("-j", "--jobs", type=int, default=min(2, os.cpu_count() or 1),
                    help="parallel jobs (default: min(2, cores))")
    sp.add_argument("--no-report", action="store_true")
    tables = {
        "policy-table": ("greedy against the baselines (the README's policy "
                         "table)",
                         cmd_policy_table.__doc__),
        "exact-table": ("greedy against exact, `hoffopt compare` (the "
                        "README's exact tables)",
                        cmd_exact_table.__doc__),
        "exec-table": ("the CPU executor against the simulator (the "
                       "README's executor table)",
                       cmd_exec_table.__doc__),
    }
    for name, (short, doc) in tables.items():
        sp = sub.add_parser(name, parents=[tools], help=short,
                            description=" ".join(doc.split()))
        sp.set_defaults(suite="none", graph=None, only=None, work=None)
        sp.add_argument("args", nargs="*", metavar="GRAPH.json | -- OPTION",
                        help="graphs (default: data/'s); exact-table passes "
                        "what follows -- to hoffopt compare")
        if name == "exec-table":
            sp.add_argument("--policies", default="greedy reactive lookahead:1",
                            metavar="'P ...'", help="default: %(default)s")
    a = p.parse_args(argv)
    if a.cmd == "merge":
        return cmd_merge(a)
    if a.cmd == "report":
        return cmd_report(a)
    if a.cmd == "compare":
        return cmd_compare(a)
    ctx = Ctx(a)
    return {"list": cmd_list, "run": cmd_run, "all": cmd_all,
            "policy-table": cmd_policy_table, "exact-table": cmd_exact_table,
            "exec-table": cmd_exec_table}[a.cmd](ctx)


if __name__ == "__main__":
    sys.exit(main())
