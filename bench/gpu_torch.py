"""gpu_torch.py: the PyTorch front end (formats/torch) on one model, for
bench/gpu_torch.sh; on a GPU machine lent for minutes, so every step has a
time limit (SIGALRM), a failing step is logged with its traceback and the
next one goes on, and the results JSON is rewritten after every step.

    python3 bench/gpu_torch.py MODEL --json OUT.json --tmp DIR [--limit S]
    MODEL: resnet18 (train, batch 8, 64 px), gpt (tests/torch/models.py's
    GPT, train), vit (vit_b_16, infer, image 32, batch 2, weights on host),
    resnet18-big (train, batch 32, 224 px: for timing only, where the GPU
    and not the launches sets the step time; its cpu step only prepares
    the replay, its cuda step runs cudnn's default setting alone)

Steps, each a key of the JSON's "steps" (status ok / failed / timeout /
skipped, seconds, note):
  export   hoffopt_torch.export with this torch: ops, tensors
  plan     hoffopt (HOFFOPT) under none, reactive, greedy at 1%, greedy
           at a 60% budget; `simulate --json --trace` for each: peak
  cpu      each schedule replayed on the CPU: bit-equal to eager
           (torch.equal), the replay's device-side peak against
           simulate's, with the stores in flight added (explain_peak)
  cuda     each schedule replayed with device cuda: bit-equal to eager
           CUDA, torch.cuda.max_memory_allocated less memory_allocated
           before (the previous results freed; none run once first, so
           cuBLAS's workspace is in "before") against simulate's peak;
           none timed (median of 3 warm runs).
           cudnn deterministic, benchmark off; when a schedule is not
           bit-equal, eager is run twice (is eager itself deterministic?)
           and every schedule again with cudnn off (both sides)
  profile  the eager step on the GPU under torch.profiler (CPU + CUDA):
           chrome trace -> times_from_trace (what `export --times-from`
           does) -> graph with time_s -> plan none -> simulate: the
           planned makespan against the none replay's CUDA wall time and
           the eager step's; the ops it could not match. resnet18: the CLI
           `export --times-from` too, its times compared
  emit     resnet18: `run --device cuda --emit-python` and the emitted
           script run (bit-equal to eager CUDA)
Without CUDA the cuda, profile and emit steps are skipped with a line
saying so. Env: HOFFOPT (the binary; default build-rel/ or build/);
GPU_TORCH_FAKE=1 runs the CUDA steps on the CPU (device cpu, memory
figures 0, a CPU-only profile): tries this script's plumbing on a machine
without a GPU, its figures mean nothing.
Exit 0 when every step ran ok or was skipped, 1 otherwise.
"""
import argparse
import gc
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "formats", "torch"))
sys.path.insert(0, os.path.join(ROOT, "tests", "torch"))
PY = sys.executable
ENV = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "formats", "torch"),
           PYTHONUNBUFFERED="1")
FAKE = os.environ.get("GPU_TORCH_FAKE") == "1"
POLICIES = (("none", ["--policy", "none"]),
            ("reactive", ["--policy", "reactive"]),
            ("greedy", ["--greedy"]),
            ("greedy60", ["--greedy", "--budget", "60%"]))


def TIMING_ONLY(model):
    """A model run for its step time alone (no CPU replays, no cudnn-off
    pass)."""
    return model.endswith("-big")


def log(*a):
    print(*a, flush=True)


class StepTimeout(Exception):
    pass


def _alarm(signum, frame):
    raise StepTimeout("step time limit")


def hoffopt_bin():
    h = os.environ.get("HOFFOPT")
    if h:
        return h
    for c in ("build-rel/hoffopt", "build/hoffopt", ".gpu/bin/hoffopt"):
        if os.access(os.path.join(ROOT, c), os.X_OK):
            return os.path.join(ROOT, c)
    return "hoffopt"


def hoff(*args, timeout=60):
    r = subprocess.run([hoffopt_bin()] + [str(a) for a in args],
                       capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError("hoffopt %s: exit %d: %s" % (
            " ".join(str(a) for a in args[:2]), r.returncode,
            (r.stderr or r.stdout).strip()[-300:]))
    return r.stdout


class Probe:
    def __init__(self, name, out, tmp, deadline):
        self.name, self.out, self.tmp, self.deadline = name, out, tmp, \
            deadline
        self.res = {"model": name, "steps": {}}
        self.failed = False

    def path(self, n):
        return os.path.join(self.tmp, "%s-%s" % (self.name, n))

    def save(self):
        with open(self.out + ".tmp", "w") as f:
            json.dump(self.res, f, indent=1, default=str)
        os.replace(self.out + ".tmp", self.out)

    def step(self, name, fn, limit):
        """Runs fn() within limit seconds (less when the deadline is
        nearer); records and logs its status. Returns its value or None."""
        left = int(self.deadline - time.time()) - 2
        limit = min(limit, left)
        t0 = time.time()
        st = {"status": "ok"}
        if limit < 3:
            st = {"status": "skipped", "note": "no time left"}
            log("[%s] %s: skipped: no time left" % (self.name, name))
            self.res["steps"][name] = st
            self.save()
            return None
        log("[%s] %s (limit %d s)" % (self.name, name, limit))
        signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(limit)
        val = None
        try:
            val = fn()
            if isinstance(val, Skip):
                st = {"status": "skipped", "note": val.why}
                val = None
        except StepTimeout:
            st = {"status": "timeout", "note": "over %d s" % limit}
            traceback.print_exc(file=sys.stdout)
        except Exception as e:
            msg = str(e).strip().splitlines()
            st = {"status": "failed", "note": "%s: %s" % (
                type(e).__name__, msg[0][:300] if msg else "")}
            traceback.print_exc(file=sys.stdout)
        finally:
            signal.alarm(0)
        st["seconds"] = round(time.time() - t0, 2)
        if st["status"] in ("failed", "timeout"):
            self.failed = True
        log("[%s] %s: %s (%.1f s)%s" % (self.name, name, st["status"],
                                        st["seconds"], ": " + st["note"]
                                        if st.get("note") else ""))
        sys.stdout.flush()
        self.res["steps"][name] = st
        self.save()
        return val


class Skip:
    def __init__(self, why):
        self.why = why


def build(name):
    """(model, inputs, mode, loss, export kwargs), seeded as the tests."""
    import torch
    torch.manual_seed(0)
    if name == "resnet18":
        import torchvision
        m = torchvision.models.resnet18(weights=None)
        return m, (torch.randn(8, 3, 64, 64),), "train", None, {}
    if name == "resnet18-big":
        import torchvision
        m = torchvision.models.resnet18(weights=None)
        return m, (torch.randn(32, 3, 224, 224),), "train", None, {}
    if name == "gpt":
        import models
        m = models.GPT()
        return m, (torch.randint(0, 256, (4, 64)),), "train", \
            models.next_token_loss, {}
    if name == "vit":
        import torchvision
        m = torchvision.models.vit_b_16(weights=None, image_size=32).eval()
        return m, (torch.randn(2, 3, 32, 32),), "infer", None, \
            {"weights_home": "host"}
    raise SystemExit("gpu_torch: unknown model %s" % name)


def first_diffs(rp, res, names, k=3):
    """max |replay - eager| of the first k tensors that differ."""
    ref = rp.eager()
    out = {}
    for n in names[:k]:
        want = ref.get(n)
        g = rp.plan.gid[n]
        view = rp.cap["views"].get(g) or (
            tuple(want.shape), tuple(want.stride()), want.storage_offset())
        got = res.pool.value(n, view)
        if got is None or want is None:
            out[n] = "missing"
            continue
        a, b = got.detach().cpu().double(), want.detach().cpu().double()
        out[n] = float((a - b).abs().max()) if a.shape == b.shape else \
            "shape %s vs %s" % (tuple(a.shape), tuple(b.shape))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--json", required=True)
    ap.add_argument("--tmp", default=None)
    ap.add_argument("--limit", type=int, default=150,
                    help="seconds for this model, all steps")
    a = ap.parse_args()
    tmp = a.tmp or tempfile.mkdtemp(prefix="gpu-torch-")
    os.makedirs(tmp, exist_ok=True)
    p = Probe(a.model, a.json, tmp, time.time() + a.limit)
    import torch
    import hoffopt_torch
    from hoffopt_torch import replay
    real = torch.cuda.is_available()
    cuda = real or FAKE
    dev = "cuda" if real else "cpu"

    class Mem:
        """torch.cuda's memory figures, zeros when faked on the CPU."""
        def __getattr__(self, n):
            if real:
                return getattr(torch.cuda, n)
            return lambda *a, **k: 0
    mem = Mem()
    p.res.update(torch=torch.__version__, cuda=cuda,
                 fake=FAKE and not real,
                 device=torch.cuda.get_device_name(0) if real else "cpu")
    log("[%s] torch %s, cuda available: %s%s" % (
        a.model, torch.__version__, cuda,
        " (%s)" % p.res["device"] if cuda else
        ": the CUDA steps (cuda, profile, emit) will be skipped"))
    S = {}   # shared between the steps

    def do_export():
        m, x, mode, loss, kw = build(a.model)
        S.update(model=m, x=x, mode=mode, loss=loss, kw=kw)
        g = p.path("g.json")
        t0 = time.time()
        graph = hoffopt_torch.export(m, x, path=g, mode=mode, loss=loss,
                                     **kw)
        S.update(g=g, graph=graph)
        p.res["export"] = {"ops": len(graph["ops"]),
                           "tensors": len(graph["tensors"]),
                           "version": graph.get("version"),
                           "seconds": round(time.time() - t0, 2),
                           "op_names": sorted({o["id"].rsplit("/", 1)[-1]
                                               .split("#")[0]
                                               for o in graph["ops"]})}
        log("[%s] exported: %d ops, %d tensors" % (
            a.model, len(graph["ops"]), len(graph["tensors"])))

    def do_plan():
        if "g" not in S:
            return Skip("no graph")
        plans = {}
        for pol, args in POLICIES:
            s, t = p.path(pol + ".s.json"), p.path(pol + ".t.json")
            hoff(*(args + [S["g"], "-o", s]))
            sim = json.loads(hoff("simulate", S["g"], s, "--json",
                                  "--trace", t))
            plans[pol] = {"schedule": s, "trace": t,
                          "peak_bytes": sim.get("peak_bytes"),
                          "makespan_s": sim.get("makespan_s"),
                          "valid": sim.get("valid")}
            log("[%s] %s: simulate peak %s B, makespan %s s, valid %s" % (
                a.model, pol, sim.get("peak_bytes"), sim.get("makespan_s"),
                sim.get("valid")))
        S["plans"] = plans
        p.res["plans"] = {k: {f: v[f] for f in ("peak_bytes", "makespan_s",
                                                "valid")}
                          for k, v in plans.items()}

    def do_cpu():
        if "plans" not in S:
            return Skip("no plans")
        pl = S["plans"]
        rp0 = replay.prepare(S["model"], S["x"], S["g"],
                             pl["none"]["schedule"], mode=S["mode"],
                             loss=S["loss"])
        S["rp0"] = rp0
        if TIMING_ONLY(a.model):
            return Skip("timing model: the replay prepared, not run here")
        rows = {}
        p.res["cpu"] = rows
        for pol, _ in POLICIES:
            rp = rp0 if pol == "none" else rp0.again(pl[pol]["schedule"])
            res = rp.run()
            n, bad = rp.compare(res)
            with open(pl[pol]["trace"]) as f:
                ex = replay.explain_peak(res, json.load(f))
            rows[pol] = {"bit_equal": not bad, "tensors": n, "bad": bad[:5],
                         "peak": res.peak, "sim_peak": pl[pol]["peak_bytes"],
                         "explained_peak": ex["explained_peak"],
                         "in_flight": len(ex["in_flight"]),
                         "wall_s": round(res.wall_s, 4)}
            log("[%s] cpu %s: %s (%d tensors%s), peak %d B, simulate %s B, "
                "with %d stores in flight %d B, %.3f s" % (
                    a.model, pol, "bit-equal" if not bad else "NOT bit-equal",
                    n, (": " + ", ".join(bad[:5])) if bad else "", res.peak,
                    pl[pol]["peak_bytes"], len(ex["in_flight"]),
                    ex["explained_peak"], res.wall_s))
            p.save()
        if any(not r["bit_equal"] for r in rows.values()):
            raise RuntimeError("not bit-equal on the CPU: %s" % [
                k for k, r in rows.items() if not r["bit_equal"]])

    def cuda_pass(setting):
        """Every schedule on CUDA under setting ("default" or
        "cudnn-off"); returns its rows."""
        pl, rp0 = S["plans"], S["rp0"]
        rows = {}
        for pol, _ in POLICIES:
            row = {}
            rows[pol] = row
            try:
                rc = rp0.again(pl[pol]["schedule"], device=dev)
                if pol == "none":
                    rc.run()   # cuBLAS's workspace and cuDNN's handles
                res = None
                gc.collect()
                mem.synchronize()
                mem.empty_cache()
                base = mem.memory_allocated()
                mem.reset_peak_memory_stats()
                res = rc.run()
                mx = mem.max_memory_allocated()
                st = mem.memory_stats() if real else {}
                req = st.get("requested_bytes.all.peak") if \
                    isinstance(st, dict) else None
                n, bad = rc.compare(res)
                row.update(bit_equal=not bad, tensors=n, bad=bad[:5],
                           peak=res.peak, sim_peak=pl[pol]["peak_bytes"],
                           max_memory_allocated=mx, allocated_before=base,
                           replay_allocated=mx - base,
                           requested_peak=req,
                           wall_s=round(res.wall_s, 4))
                if bad:
                    row["max_abs_diff"] = first_diffs(rc, res, bad)
                if pol == "none":
                    walls = [rc.run().wall_s for _ in range(3)]
                    row["walls_s"] = [round(w, 5) for w in walls]
                    row["wall_median_s"] = statistics.median(walls)
                    S["rc_none"] = rc
                log("[%s] cuda/%s %s: %s (%d tensors%s), replay peak %d B, "
                    "simulate %s B, max_memory_allocated %d B (%d before: "
                    "%d B during the replay; requested peak %s B), "
                    "%.4f s%s" % (
                        a.model, setting, pol,
                        "bit-equal" if not bad else "NOT bit-equal", n,
                        (": %s" % row.get("max_abs_diff")) if bad else "",
                        res.peak, pl[pol]["peak_bytes"], mx, base, mx - base,
                        req,
                        res.wall_s, "; warm runs %s s" % row["walls_s"]
                        if "walls_s" in row else ""))
            except StepTimeout:
                raise
            except Exception as e:
                traceback.print_exc(file=sys.stdout)
                row.update(bit_equal=False, error="%s: %s" % (
                    type(e).__name__, str(e).strip()[:300]))
                log("[%s] cuda/%s %s: ERROR %s" % (a.model, setting, pol,
                                                   row["error"]))
            p.save()
        return rows

    def do_cuda():
        if not cuda:
            return Skip("torch.cuda.is_available() is False")
        if "rp0" not in S:
            return Skip("no CPU replay to share the trace with")
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
        p.res["cuda_runs"] = {}
        rows = p.res["cuda_runs"]["default"] = cuda_pass("default")
        S["setting"] = "default"
        if all(r.get("bit_equal") for r in rows.values()) or \
                TIMING_ONLY(a.model):
            return None
        # is eager itself deterministic here?
        try:
            rc = S["rp0"].again(S["plans"]["none"]["schedule"],
                                device=dev)
            e1, e2 = rc.eager(), rc.eager()
            nd = [k for k in e1 if not torch.equal(e1[k], e2[k])]
            p.res["eager_nondeterministic"] = nd[:10]
            log("[%s] eager CUDA run twice: %s" % (
                a.model, "bit-equal" if not nd else
                "%d tensors differ: %s" % (len(nd), nd[:5])))
        except Exception:
            traceback.print_exc(file=sys.stdout)
        with torch.backends.cudnn.flags(enabled=False):
            rows2 = p.res["cuda_runs"]["cudnn-off"] = cuda_pass("cudnn-off")
        S["setting"] = "cudnn-off"
        if not all(r.get("bit_equal") for r in rows2.values()):
            raise RuntimeError("not bit-equal on CUDA (default: %s; cudnn "
                               "off: %s)" % (
                                   [k for k, r in rows.items()
                                    if not r.get("bit_equal")],
                                   [k for k, r in rows2.items()
                                    if not r.get("bit_equal")]))

    def eager_step(m, x, train):
        """One eager step on the GPU (forward, loss, backward, Adam)."""
        if train:
            S["opt"].zero_grad(set_to_none=True)
            out = m(*x)
            lossv = S["loss"](out) if S["loss"] else \
                replay.tensors_of(out)[0].sum()
            lossv.backward()
            S["opt"].step()
        else:
            with torch.no_grad():
                m(*x)

    def do_profile():
        if not cuda:
            return Skip("torch.cuda.is_available() is False")
        if "plans" not in S:
            return Skip("no plans")
        import copy
        from torch.profiler import ProfilerActivity, profile
        off = S.get("setting") == "cudnn-off"
        train = S["mode"] == "train"
        m = copy.deepcopy(S["model"]).to(dev)
        m.train(train)
        x = tuple(t.to(dev) for t in S["x"])
        if train:
            S["opt"] = torch.optim.Adam(m.parameters(), lr=1e-3,
                                        foreach=False)
        tr = p.path("kineto.json")
        with torch.backends.cudnn.flags(enabled=not off), \
                replay.as_traced():
            for _ in range(2):   # warm-up: kernels, Adam's state
                eager_step(m, x, train)
            mem.synchronize()
            walls = []
            for _ in range(3):
                t0 = time.perf_counter()
                eager_step(m, x, train)
                mem.synchronize()
                walls.append(time.perf_counter() - t0)
            acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA]
                                             if real else [])
            with profile(activities=acts) as prof:
                eager_step(m, x, train)
                mem.synchronize()
            prof.export_chrome_trace(tr)
        with open(tr) as f:
            trace = json.load(f)
        ev = trace.get("traceEvents", []) if isinstance(trace, dict) \
            else trace
        cats = {}
        for e in ev:
            if isinstance(e, dict):
                cats[e.get("cat")] = cats.get(e.get("cat"), 0) + 1
        times, miss = replay.times_from_trace(S["graph"], trace)
        g = json.loads(json.dumps(S["graph"]))
        for o, t in zip(g["ops"], times):
            if t is not None:
                o["time_s"] = t
        gt = p.path("gt.json")
        hoffopt_torch.write(g, gt)
        st = p.path("gt-none.s.json")
        hoff("--policy", "none", gt, "-o", st)
        sim = json.loads(hoff("simulate", gt, st, "--json"))
        rn = p.res.get("cuda_runs", {}).get(S.get("setting", "default"),
                                            {}).get("none", {})
        matched = [t for t in times if t is not None]
        row = {"setting": S.get("setting", "default"),
               "trace_events": len(ev), "categories": cats,
               "matched": len(matched), "ops": len(times),
               "unmatched": miss[:40], "unmatched_count": len(miss),
               "matched_time_sum_s": sum(matched),
               "planned_makespan_s": sim.get("makespan_s"),
               "planned_compute_s": sim.get("compute_s"),
               "replay_cuda_wall_s": rn.get("wall_median_s"),
               "eager_step_walls_s": [round(w, 5) for w in walls],
               "eager_step_median_s": statistics.median(walls)}
        p.res["profile"] = row
        log("[%s] profile (%s): %d events %s; %d of %d ops matched (sum "
            "%.6f s); unmatched %d: %s" % (
                a.model, row["setting"], len(ev), cats, len(matched),
                len(times), sum(matched), len(miss), miss[:12]))
        log("[%s] planned makespan (none, --times-from) %s s; replay CUDA "
            "wall (none, median) %s s; eager step %.5f s" % (
                a.model, sim.get("makespan_s"), rn.get("wall_median_s"),
                row["eager_step_median_s"]))
        if a.model == "resnet18":
            gc = p.path("gt-cli.json")
            r = subprocess.run(
                [PY, "-m", "hoffopt_torch", "torchvision:resnet18",
                 "--batch", "8", "--image-size", "64", "--times-from", tr,
                 "-o", gc], env=ENV, capture_output=True, text=True,
                timeout=90)
            log("[%s] export --times-from (CLI): exit %d %s" % (
                a.model, r.returncode, r.stderr.strip()[-400:]))
            row["cli_exit"] = r.returncode
            if r.returncode == 0:
                with open(gc) as f:
                    gcl = json.load(f)
                same = [o.get("time_s") for o in gcl["ops"]] == \
                    [o.get("time_s") for o in g["ops"]]
                row["cli_times_equal"] = same
                log("[%s] the CLI's times equal the in-process ones: %s"
                    % (a.model, same))

    def do_emit():
        if a.model != "resnet18":
            return Skip("resnet18 only")
        if not cuda:
            return Skip("torch.cuda.is_available() is False")
        if "plans" not in S:
            return Skip("no plans")
        e = p.path("emit.py")
        spec = ["torchvision:resnet18", "--batch", "8", "--image-size", "64"]
        r = subprocess.run(
            [PY, "-m", "hoffopt_torch", "run"] + spec +
            ["--graph", S["g"], "--schedule",
             S["plans"]["greedy"]["schedule"], "--device", dev,
             "--emit-python", e, "--no-check"], env=ENV,
            capture_output=True, text=True, timeout=120)
        log("[%s] run --emit-python: exit %d\n%s%s" % (
            a.model, r.returncode, r.stdout[-600:], r.stderr[-1500:]))
        if r.returncode != 0:
            raise RuntimeError("run --emit-python: exit %d" % r.returncode)
        off = S.get("setting") == "cudnn-off"
        cmd = [PY, e] if not off else [
            PY, "-c", "import runpy, sys, torch; "
            "torch.backends.cudnn.enabled = False; sys.argv = [%r]; "
            "runpy.run_path(%r, run_name='__main__')" % (e, e)]
        r = subprocess.run(cmd, env=dict(ENV, PYTHONPATH=""),
                           capture_output=True, text=True, timeout=120)
        log("[%s] the emitted script (%s): exit %d\n%s%s" % (
            a.model, "cudnn off" if off else "default", r.returncode,
            r.stdout[-600:], r.stderr[-1500:]))
        ok = r.returncode == 0 and "bit-equal to eager PyTorch" in r.stdout
        p.res["emit"] = {"exit": r.returncode, "bit_equal": ok,
                         "lines": sum(1 for _ in open(e)),
                         "setting": "cudnn-off" if off else "default"}
        if not ok:
            raise RuntimeError("the emitted script: exit %d" % r.returncode)

    p.step("export", do_export, 120)
    p.step("plan", do_plan, 60)
    p.step("cpu", do_cpu, 150)
    p.step("cuda", do_cuda, 150)
    p.step("profile", do_profile, 90)
    p.step("emit", do_emit, 120)
    p.res["failed"] = p.failed
    p.save()
    return 1 if p.failed else 0


if __name__ == "__main__":
    sys.exit(main())
