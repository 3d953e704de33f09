"""test_replay.py: the plan run inside PyTorch (hoffopt_torch.replay).

Groups (tests/torch/run.py test_replay.GROUP, one ctest test each):
- Small: the GPT-style decoder of models.py (train) under the schedules of
  none, reactive, greedy at 1% and greedy under a 60% budget: bit-equal
  to eager PyTorch, device-side peak equal to `hoffopt simulate`'s (or,
  where stores are in flight, equal once the simulator's in-flight
  stores are added, step by step); three hand-edited wrong schedules
  rejected naming the op; the CLI and --emit-python; --measure and
  --times-from (a synthetic Kineto trace, and the profiler's own on the
  CPU).
- Cuda: the GPT on CUDA, bit-equal to eager CUDA; skipped without a GPU
  (run with run.py test_replay.Cuda; never run so far).
- Resnet (heavy, run once): torchvision resnet18, train, batch 8 at 64x64
  pixels (224 takes minutes on the shared 2-core machine), the same four
  schedules; --emit-python's script for it runs and gives the same bits.
- Vit (heavy, run once): torchvision vit_b_16, infer, weights on the
  host, batch 2 at 32x32 pixels (4 patches; the 86M weights are what
  moves), the same four schedules.
No test asserts a wall time.
"""
import json
import os
import subprocess
import unittest

import torch

from test_export import HERE, PY, ROOT, V1, Tmp, hoffopt
import hoffopt_torch
import models
from hoffopt_torch import replay

POLICIES = (("none", ["--policy", "none"]),
            ("reactive", ["--policy", "reactive"]),
            ("greedy", ["--greedy"]),
            ("greedy60", ["--greedy", "--budget", "60%"]))
ENV = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "formats", "torch"))


def simulate(g, s, trace=None):
    args = ["simulate", g, s, "--json"] + (["--trace", trace] if trace
                                           else [])
    return json.loads(hoffopt(*args, check=False).stdout)


class Base(Tmp):
    def plans(self, gpath):
        out = {}
        for name, args in POLICIES:
            s = self.path(name + ".schedule.json")
            hoffopt(*(args + [gpath, "-o", s]))
            out[name] = s
        return out

    def replay_all(self, model, x, mode, loss=None, **kw):
        """Exports, plans the four schedules, replays each: bit-equal and
        the peak against simulate's. Returns {policy: (peak, sim peak)}."""
        g = self.path("g.json")
        hoffopt_torch.export(model, x, path=g, mode=mode, loss=loss, v1=V1,
                             **kw)
        figures = {}
        for name, s in self.plans(g).items():
            rp = replay.prepare(model, x, g, s, mode=mode, loss=loss)
            res = rp.run()
            n, bad = rp.compare(res)
            self.assertGreater(n, 0)
            self.assertEqual(bad, [], name)
            tr = self.path("t.json")
            sim = simulate(g, s, tr)
            self.assertTrue(sim["valid"], name)
            with open(tr) as f:
                ex = replay.explain_peak(res, json.load(f))
            print("%s: replay peak %d B at step %s, simulate %d B; with "
                  "the stores in flight %d B at step %s (%d stores); "
                  "%d tensors bit-equal"
                  % (name, res.peak, res.peak_step, sim["peak_bytes"],
                     ex["explained_peak"], ex["at_step"],
                     len(ex["in_flight"]), n))
            self.assertLessEqual(res.peak, sim["peak_bytes"], name)
            self.assertEqual(ex["explained_peak"], sim["peak_bytes"], name)
            if res.peak != sim["peak_bytes"]:
                self.assertTrue(ex["in_flight"], name)
            figures[name] = (res.peak, sim["peak_bytes"])
            self.assertGreater(res.pool.released, 0)
        return figures


class Small(Base, unittest.TestCase):
    def gpt(self):
        torch.manual_seed(0)
        return models.GPT(), torch.randint(0, 256, (4, 64))

    def test_gpt_train_four_schedules(self):
        m, x = self.gpt()
        f = self.replay_all(m, (x,), "train", models.next_token_loss)
        self.assertEqual(f["none"][0], f["none"][1])  # nothing in flight

    def edited(self, edit):
        """A greedy plan of the GPT under a 60% budget, edited; returns
        (graph path, the edited schedule's path, the replay's error)."""
        m, x = self.gpt()
        g = self.path("g.json")
        hoffopt_torch.export(m, (x,), path=g, loss=models.next_token_loss,
                             v1=V1)
        s = self.path("s.json")
        hoffopt("--greedy", g, "-o", s, "--budget", "60%")
        with open(s) as f:
            sched = json.load(f)
        with open(g) as f:
            graph = json.load(f)
        steps, expect = edit(sched["steps"], graph)
        sched["steps"] = steps
        sched.pop("summary", None)
        bad = self.path("bad.json")
        with open(bad, "w") as f:
            json.dump(sched, f)
        rp = replay.prepare(m, (x,), g, bad, loss=models.next_token_loss)
        with self.assertRaises(replay.PlanError) as cm:
            rp.run()
        msg = str(cm.exception)
        print("rejected: " + msg)
        for e in expect:
            self.assertIn(e, msg)
        self.assertEqual(hoffopt("simulate", g, bad,
                                 check=False).returncode, 1)
        return msg

    @staticmethod
    def uses(graph):
        return {o["id"]: o.get("inputs", []) + o.get("updates", [])
                for o in graph["ops"]}

    def test_prefetch_removed(self):
        def edit(steps, graph):
            uses = self.uses(graph)
            i = next(i for i, st in enumerate(steps) if "prefetch" in st)
            t = steps[i]["prefetch"]
            op = next(st["op"] for st in steps[i:] if "op" in st and
                      t in uses[st["op"]])
            return steps[:i] + steps[i + 1:], ["op %s reads %s" % (op, t)]
        self.edited(edit)

    def test_store_after_next_use(self):
        def edit(steps, graph):
            uses = self.uses(graph)
            for i, st in enumerate(steps):
                if "store" not in st:
                    continue
                t = st["store"]
                u = next((j for j in range(i + 1, len(steps))
                          if "op" in steps[j] and t in uses[steps[j]["op"]]),
                         None)
                if u is None:
                    continue
                moved = steps[:i] + steps[i + 1:u + 1] + [st] + \
                    steps[u + 1:]
                return moved, ["%s is already on the device side" % t,
                               "its next use: op %s" % steps[u]["op"]]
            self.fail("no store with a later use")
        self.edited(edit)

    def test_detach_of_dirty_state(self):
        def edit(steps, graph):
            i = next(i for i, st in enumerate(steps)
                     if st.get("op", "").startswith("adam/"))
            w = steps[i]["op"][len("adam/"):]
            return steps[:i + 1] + [{"detach": w}] + steps[i + 1:], \
                ["detach of %s, dirty persistent state" % w,
                 "written by op adam/%s" % w]
        self.edited(edit)

    def test_recompute_and_drop(self):
        # each forward addmm's result that the backward reads again: dropped
        # after its last forward use, its op re-run just before its first
        # backward use (a hand-made FORMAT v2 schedule); the replay re-runs
        # the aten call and must stay bit-equal, with a lower peak
        m, x = self.gpt()
        g = self.path("g.json")
        graph = hoffopt_torch.export(m, (x,), path=g, v1=V1,
                                     loss=models.next_token_loss)
        s = self.path("none.json")
        hoffopt("--policy", "none", g, "-o", s)
        with open(s) as f:
            sched = json.load(f)
        ops = {o["id"]: o for o in graph["ops"]}
        weights = {t["id"] for t in graph["tensors"] if t["kind"] == "weight"}
        steps = sched["steps"]
        users = {}
        for i, st in enumerate(steps):
            if "op" in st:
                o = ops[st["op"]]
                for t in o.get("inputs", []) + o.get("updates", []):
                    users.setdefault(t, []).append(i)
        drops, recs = {}, {}
        for o in graph["ops"]:
            if o["kind"] != "matmul" or o["id"].startswith("grad:"):
                continue
            out = o["outputs"][0]
            bwd = [i for i in users.get(out, [])
                   if steps[i]["op"].startswith("grad:")]
            fwd = [i for i in users.get(out, []) if i < bwd[0]] \
                if bwd else []
            # its inputs still there at bwd[0]: weights, or read again later
            if not fwd or not all(
                    t in weights or any(i >= bwd[0] for i in users[t])
                    for t in o["inputs"]):
                continue
            drops.setdefault(fwd[-1], []).append({"drop": out})
            recs.setdefault(bwd[0], []).append({"recompute": o["id"]})
        self.assertGreaterEqual(len(recs), 2)
        new = []
        for i, st in enumerate(steps):
            new += recs.get(i, []) + [st] + drops.get(i, [])
        sched = {"format": "hoffopt.schedule", "version": 2, "steps": new}
        rp = replay.prepare(m, (x,), g, sched, loss=models.next_token_loss)
        res = rp.run()
        n, bad = rp.compare(res)
        self.assertEqual(bad, [])
        base = replay.prepare(m, (x,), g, s,
                              loss=models.next_token_loss).run()
        print("%d recomputes: peak %d B, none's %d B"
              % (len(recs), res.peak, base.peak))
        self.assertLess(res.peak, base.peak)
        # a recompute of an op that updates (Adam) is refused
        adam = [o["id"] for o in graph["ops"] if o["kind"] == "optimizer"]
        bad_s = dict(sched, steps=new + [{"recompute": adam[0]}])
        with self.assertRaises(replay.PlanError) as cm:
            replay.prepare(m, (x,), g, bad_s,
                           loss=models.next_token_loss).run()
        self.assertIn("op %s is not recomputable" % adam[0],
                      str(cm.exception))

    def test_repeat_end_state(self):
        # a training graph is one step of a loop (FORMAT v2, repeat): the
        # plan must store Adam's moments back home. none's plan, planned on
        # the v1 copy of the graph, with and without the stores appended
        m, x = self.gpt()
        g1, g2 = self.path("g1.json"), self.path("g2.json")
        hoffopt_torch.export(m, (x,), path=g1, v1=True,
                             loss=models.next_token_loss)
        graph = hoffopt_torch.export(m, (x,), path=g2,
                                     loss=models.next_token_loss)
        self.assertTrue(graph["repeat"])
        s = self.path("none.json")
        hoffopt("--policy", "none", g1, "-o", s)
        with open(s) as f:
            steps = json.load(f)["steps"]
        back = [{"store": t["id"], "to": "host"} for t in graph["tensors"]
                if t.get("home") == "host"]
        # two moments each of 28 parameters: wte, wpe, 12 a block, ln_f 2
        self.assertEqual(len(back), 2 * 28)
        reads_v2 = hoffopt("analyze", g2, check=False).returncode == 0
        for extra, ok in ((back, True), ([], False)):
            sched = {"format": "hoffopt.schedule", "version": 1,
                     "steps": steps + extra}
            rp = replay.prepare(m, (x,), g2, sched,
                                loss=models.next_token_loss)
            if ok:
                res = rp.run()
                self.assertEqual(rp.compare(res)[1], [])
                # the moments are home, bit-equal to eager's
                self.assertFalse(any(b["store"] in res.pool.dev
                                     for b in back))
            else:
                with self.assertRaises(replay.PlanError) as cm:
                    rp.run()
                self.assertIn("is not back home on host (repeat, rule 9)",
                              str(cm.exception))
            if reads_v2:
                p = self.path("s2.json")
                with open(p, "w") as f:
                    json.dump(sched, f)
                self.assertEqual(hoffopt("simulate", g2, p,
                                         check=False).returncode,
                                 0 if ok else 1)

    def test_cli_and_emit_python(self):
        g, s, e = self.path("g.json"), self.path("s.json"), self.path("e.py")
        model = os.path.join(HERE, "models.py") + ":gpt_small"
        lossf = os.path.join(HERE, "models.py") + ":next_token_loss"
        base = [PY, "-m", "hoffopt_torch"]
        r = subprocess.run(base + [model, "--loss", lossf, "-o", g] +
                           (["--v1"] if V1 else []), env=ENV,
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        hoffopt("--greedy", g, "-o", s)
        r = subprocess.run(base + ["run", model, "--loss", lossf, "--graph",
                                   g, "--schedule", s, "--emit-python", e],
                           env=ENV, capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("bit-equal to eager PyTorch", r.stdout)
        with open(e) as f:
            code = f.read()
        # one line a node: each aten call and cache op with its step
        with open(s) as f:
            nsteps = len(json.load(f)["steps"])
        for k in (0, nsteps - 1):
            self.assertIn("# step %d:" % k, code)
        self.assertIn("torch.ops.aten.embedding.default(", code)
        self.assertIn("pool.prefetch(", code)
        r2 = subprocess.run([PY, e], env=dict(os.environ), cwd=self.dir,
                            capture_output=True, text=True)
        self.assertEqual(r2.returncode, 0, r2.stderr)
        self.assertIn("bit-equal to eager PyTorch", r2.stdout)
        # a wrong plan through the CLI: exit 1, one line
        with open(s) as f:
            sched = json.load(f)
        sched["steps"] = [st for st in sched["steps"] if "prefetch" not in st]
        with open(s, "w") as f:
            json.dump(sched, f)
        r = subprocess.run(base + ["run", model, "--loss", lossf, "--graph",
                                   g, "--schedule", s], env=ENV,
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn("invalid schedule: step", r.stderr)

    def test_again_shares_the_trace(self):
        # Replay.again: another schedule of the same graph, no new trace;
        # its plan is checked as prepare's is, and it replays bit-equal
        m, x = self.gpt()
        g = self.path("g.json")
        hoffopt_torch.export(m, (x,), path=g, loss=models.next_token_loss,
                             v1=V1)
        s1, s2 = self.path("s1.json"), self.path("s2.json")
        hoffopt("--policy", "none", g, "-o", s1)
        hoffopt("--greedy", g, "-o", s2, "--budget", "60%")
        rp = replay.prepare(m, (x,), g, s1, loss=models.next_token_loss)
        rp2 = rp.again(s2)
        self.assertIs(rp2.cap, rp.cap)
        self.assertNotEqual(len(rp2.plan.steps), len(rp.plan.steps))
        res = rp2.run()
        self.assertEqual(rp2.compare(res)[1], [])
        self.assertEqual(res.peak, simulate(g, s2)["peak_bytes"])
        with open(s2) as f:
            bad = json.load(f)
        i = next(i for i, st in enumerate(bad["steps"]) if "op" in st)
        bad["steps"] = bad["steps"][:i] + bad["steps"][i + 1:] + \
            bad["steps"][i:i + 1]     # the first op last: out of order
        with self.assertRaises(replay.ReplayError) as cm:
            rp.again(bad)
        self.assertIn("out of order", str(cm.exception))

    def test_graph_of_another_model_refused(self):
        m, x = self.gpt()
        g = self.path("g.json")
        hoffopt_torch.export(m, (x,), path=g, loss=models.next_token_loss,
                             v1=V1)
        s = self.path("s.json")
        hoffopt("--policy", "none", g, "-o", s)
        other = models.GPT(layers=1)
        with self.assertRaises(replay.ReplayError) as cm:
            replay.prepare(other, (x,), g, s, loss=models.next_token_loss)
        self.assertIn("ops, the model traced now has", str(cm.exception))

    def test_measure(self):
        m, x = self.gpt()
        g = hoffopt_torch.export(m, (x,), loss=models.next_token_loss,
                                 v1=V1)
        times = replay.measure(m, (x,), g, loss=models.next_token_loss,
                               reps=3)
        self.assertEqual(len(times), len(g["ops"]))
        self.assertTrue(all(t > 0 for t in times))
        # the module is untouched by the runs (each on fresh pools)
        m2, _ = self.gpt()
        for a, b in zip(m.parameters(), m2.parameters()):
            self.assertTrue(torch.equal(a, b))
        # the clock: every step stamped, the steps within the wall time
        rp = replay.prepare(m, (x,), g, replay._none_schedule(g),
                            loss=models.next_token_loss)
        res = rp.run(clock=True)
        st = res.step_times()
        self.assertEqual(sorted(st), list(range(len(rp.plan.steps))))
        self.assertTrue(all(t > 0 for t in st.values()))
        self.assertLessEqual(sum(st.values()), res.wall_s)
        self.assertIsNone(rp.run().pool.stamps)

    def test_op_times(self):
        # three clocked runs of prefetch w, op 0, op 1, store w (1000 B):
        # medians 2 and 3 s, the median run's ops add up to 4 s, so both
        # scale by 0.8; the copies' rates: medians of 1000 B / seconds
        class P:
            steps = [("prefetch", "w", "host"), ("op", 0), ("op", 1),
                     ("store", "w", "host")]
            ops = [{}, {}]
            t = {"w": {"bytes": 1000}}
        timed = [{0: 0.001, 1: 1.0, 2: 3.0, 3: 0.002},
                 {0: 0.002, 1: 2.0, 2: 4.0, 3: 0.001},
                 {0: 0.001, 1: 3.0, 2: 1.0, 3: 0.004}]
        links = {}
        times = replay.op_times(P, timed, links)
        self.assertEqual([round(t, 12) for t in times], [1.6, 2.4])
        self.assertEqual(links, {"host": {"h2d_Bps": 1e6, "d2h_Bps": 5e5}})

    def test_measure_cli(self):
        g = self.path("g.json")
        model = os.path.join(HERE, "models.py") + ":gpt_small"
        r = subprocess.run([PY, "-m", "hoffopt_torch", model, "--mode",
                            "infer", "--measure", "2", "-o", g], env=ENV,
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(g) as f:
            gr = json.load(f)
        self.assertTrue(all(o["time_s"] > 0 for o in gr["ops"]))
        s = self.path("s.json")
        hoffopt("--policy", "none", g, "-o", s)
        sim = simulate(g, s)
        self.assertAlmostEqual(sim["compute_s"],
                               sum(o["time_s"] for o in gr["ops"]),
                               delta=1e-9 * len(gr["ops"]))

    def test_times_from_synthetic_trace(self):
        m = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(),
                                torch.nn.Linear(16, 4)).eval()
        g = hoffopt_torch.export(m, torch.randn(4, 8), mode="infer")
        self.assertEqual([o["id"] for o in g["ops"]],
                         ["0/addmm#0", "1/relu#1", "2/addmm#2"])

        def x(name, ts, dur, tid=1, cat="cpu_op", **args):
            return {"ph": "X", "name": name, "cat": cat, "ts": ts,
                    "dur": dur, "tid": tid, "pid": 1, "args": args}
        ev = [x("aten::linear", 0, 100), x("aten::t", 1, 2),
              x("aten::addmm", 5, 90),
              x("cudaLaunchKernel", 10, 5, cat="cuda_runtime",
                correlation=7),
              x("aten::addmm", 20, 10),     # nested in the first: skipped
              x("gemm_kernel", 40, 30, tid=7, cat="kernel", correlation=7),
              x("aten::relu", 200, 50),
              x("aten::linear", 300, 100), x("aten::addmm", 310, 80)]
        times, miss = replay.times_from_trace(g, {"traceEvents": ev})
        # the first addmm: its one kernel (30 us); relu: its own 50 us (no
        # kernel); the second addmm: its own 80 us
        self.assertEqual(miss, [])
        self.assertEqual([round(t * 1e6, 6) for t in times], [30, 50, 80])
        times, miss = replay.times_from_trace(g, {"traceEvents": ev[:7]})
        self.assertEqual(miss, ["2/addmm#2"])
        self.assertIsNone(times[2])
        # the CLI names what it could not match
        tr = self.path("tr.json")
        with open(tr, "w") as f:
            json.dump({"traceEvents": ev[:7]}, f)
        mf = self.path("mlp.py")
        with open(mf, "w") as f:
            f.write("import torch\ndef f():\n    return torch.nn.Sequential("
                    "torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn."
                    "Linear(16, 4)), (torch.randn(4, 8),)\n")
        from test_frontend import run_main
        rc, err = run_main([mf + ":f", "--mode", "infer", "--times-from",
                            tr, "-o", self.path("g.json")])
        self.assertEqual(rc, 0, err)
        self.assertIn("1 of 3 ops not matched, kept on the roofline: "
                      "2/addmm#2", err)
        with open(self.path("g.json")) as f:
            gr = json.load(f)
        self.assertEqual([o.get("time_s") for o in gr["ops"]],
                         [3e-05, 5e-05, None])

    def test_times_from_aligns_past_a_missing_op(self):
        # eager ran gelu where the graph has relu: that op alone goes
        # unmatched; a scan for the next name would take the second relu
        # for the first and lose the ops after it
        m = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(),
                                torch.nn.Linear(8, 8), torch.nn.ReLU(),
                                torch.nn.Linear(8, 4)).eval()
        g = hoffopt_torch.export(m, torch.randn(4, 8), mode="infer")
        self.assertEqual([o["id"] for o in g["ops"]],
                         ["0/addmm#0", "1/relu#1", "2/addmm#2", "3/relu#3",
                          "4/addmm#4"])

        def x(name, ts, dur):
            return {"ph": "X", "name": name, "cat": "cpu_op", "ts": ts,
                    "dur": dur, "tid": 1, "pid": 1, "args": {}}
        ev = [x("aten::addmm", 0, 1), x("aten::gelu", 10, 2),
              x("aten::addmm", 20, 3), x("aten::relu", 30, 4),
              x("aten::addmm", 40, 5)]
        times, miss = replay.times_from_trace(g, {"traceEvents": ev})
        self.assertEqual(miss, ["1/relu#1"])
        self.assertEqual([None if t is None else round(t * 1e6, 6)
                          for t in times], [1, None, 3, 4, 5])

    def test_times_from_gpu_names_and_adam(self):
        # a trace as eager CUDA writes it: batch norm under
        # _batch_norm_impl_index -> cudnn_batch_norm (the graph has
        # native_batch_norm, what meta ran), and Adam's ops inside
        # Optimizer.step, whose kernels are split by bytes_accessed
        torch.manual_seed(0)
        m = torch.nn.Sequential(torch.nn.Linear(8, 8),
                                torch.nn.BatchNorm1d(8))
        g = hoffopt_torch.export(m, torch.randn(4, 8))
        self.assertEqual([o["id"] for o in g["ops"]][:8], [
            "0/addmm#0", "1/add_#1", "1/native_batch_norm#2",
            "model/sum#3", "grad:model/ones_like#4",
            "grad:1/native_batch_norm_backward#5", "grad:0/mm#6",
            "grad:0/sum#7"])
        adam = [o for o in g["ops"] if o["kind"] == "optimizer"]
        self.assertEqual(len(adam), 4)

        def x(name, ts, dur, tid=1, cat="cpu_op", **args):
            return {"ph": "X", "name": name, "cat": cat, "ts": ts,
                    "dur": dur, "tid": tid, "pid": 1, "args": args}
        ev = [x("aten::addmm", 0, 10), x("aten::add_", 20, 5),
              x("aten::_batch_norm_impl_index", 30, 20),
              x("aten::cudnn_batch_norm", 31, 18),
              x("aten::sum", 60, 5), x("aten::ones_like", 70, 5, tid=2),
              x("aten::_batch_norm_impl_index_backward", 80, 20, tid=2),
              x("aten::cudnn_batch_norm_backward", 81, 18, tid=2),
              x("aten::mm", 110, 5, tid=2), x("aten::sum", 120, 5, tid=2),
              x("Optimizer.step#Adam.step", 200, 100,
                cat="user_annotation"),
              x("Optimizer.step#Adam.step", 199, 90,
                cat="gpu_user_annotation", tid=7),
              x("aten::mul_", 210, 5)]
        # kernels of the batch norm (7 us) and of Adam's step (2 x 30 us)
        for c, (ts, at) in enumerate(((35, 40), (210, 220), (250, 260))):
            ev.append(x("cudaLaunchKernel", ts, 1, cat="cuda_runtime",
                        correlation=c))
            ev.append(x("k%d" % c, at, 7 if c == 0 else 30, tid=7,
                        cat="kernel", correlation=c))
        times, miss = replay.times_from_trace(g, {"traceEvents": ev})
        self.assertEqual(miss, [])
        us = [round(t * 1e6, 6) for t in times]
        self.assertEqual(us[:8], [10, 5, 7, 5, 5, 20, 5, 5])
        # 60 us of kernels by bytes_accessed
        total = sum(o["bytes_accessed"] for o in adam)
        self.assertEqual(us[8:], [round(60 * o["bytes_accessed"] / total, 6)
                                  for o in adam])
        # without the step's span, Adam's ops stay unmatched
        times, miss = replay.times_from_trace(
            g, {"traceEvents": [e for e in ev if
                                not e["name"].startswith("Optimizer")]})
        self.assertEqual(miss, [o["id"] for o in adam])

    def test_batch_norm_as_eager(self):
        # on CUDA the replay runs native_batch_norm as eager does, through
        # _batch_norm_impl_index (cuDNN's kernel there): the same calls
        # here on the CPU (impl 0, the native kernel), bit-equal, the
        # backward given the forward's impl index and reserve
        torch.manual_seed(0)
        m = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3),
                                torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
                                torch.nn.Conv2d(8, 4, 3),
                                torch.nn.BatchNorm2d(4))
        x = torch.randn(2, 3, 10, 10)
        g = hoffopt_torch.export(m, x)
        s = replay._none_schedule(g)
        saved = replay.BN_AS_EAGER
        replay.BN_AS_EAGER = ("cpu",)
        try:
            rp = replay.prepare(m, x, g, s)
        finally:
            replay.BN_AS_EAGER = saved
        code = rp.gm.code
        self.assertEqual(code.count("pool.batch_norm("), 2)
        self.assertEqual(code.count("pool.batch_norm_backward("), 2)
        self.assertNotIn("aten.native_batch_norm", code)
        res = rp.run()
        self.assertEqual(sorted(v[0] for v in res.pool.bn_saved.values()),
                         [0, 0])
        n, bad = rp.compare(res)
        self.assertEqual((n, bad), (39, []))
        # not on the CPU by default: the recorded calls
        code = replay.prepare(m, x, g, s).gm.code
        self.assertNotIn("pool.batch_norm", code)
        self.assertIn("torch.ops.aten.native_batch_norm.default(", code)

    def test_times_from_cpu_profiler(self):
        from torch.profiler import ProfilerActivity, profile
        m, x = self.gpt()
        m.eval()
        g = hoffopt_torch.export(m, (x,), mode="infer")
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            with torch.no_grad():
                m(x)
        tr = self.path("prof.json")
        prof.export_chrome_trace(tr)
        with open(tr) as f:
            times, miss = replay.times_from_trace(g, json.load(f))
        print("profiler trace: %d of %d ops matched; unmatched: %s"
              % (len(g["ops"]) - len(miss), len(g["ops"]), miss))
        self.assertEqual(miss, [])
        self.assertTrue(all(t >= 0 for t in times))


@unittest.skipUnless(torch.cuda.is_available(), "no CUDA device")
class Cuda(Base, unittest.TestCase):
    """The CUDA path (streams, events, record_stream): the GPT under the
    four schedules, bit-equal to eager CUDA. Skipped without a GPU (none
    was lent while it was written: it has never run)."""

    def test_gpt_train_cuda(self):
        torch.manual_seed(0)
        m, x = models.GPT(), torch.randint(0, 256, (4, 64))
        g = self.path("g.json")
        hoffopt_torch.export(m, (x,), path=g, loss=models.next_token_loss,
                             v1=V1)
        for name, s in self.plans(g).items():
            rp = replay.prepare(m, (x,), g, s, loss=models.next_token_loss,
                                device="cuda")
            res = rp.run()
            n, bad = rp.compare(res)
            self.assertEqual(bad, [], name)
            print("%s: cuda peak %d B, max_memory_allocated %d B"
                  % (name, res.peak, torch.cuda.max_memory_allocated()))


class Resnet(Base, unittest.TestCase):
    def test_resnet18_train_four_schedules_and_emit(self):
        import torchvision
        torch.manual_seed(0)
        m = torchvision.models.resnet18(weights=None)
        x = torch.randn(8, 3, 64, 64)
        self.replay_all(m, (x,), "train")
        # the CLI on the same model (seed 0, batch 8, 64 pixels) and its
        # emitted script
        g, s, e = self.path("g2.json"), self.path("s2.json"), \
            self.path("e.py")
        spec = ["torchvision:resnet18", "--batch", "8", "--image-size", "64"]
        base = [PY, "-m", "hoffopt_torch"]
        r = subprocess.run(base + spec + ["-o", g] + (["--v1"] if V1 else []),
                           env=ENV, capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        hoffopt("--greedy", g, "-o", s)
        r = subprocess.run(base + ["run"] + spec + ["--graph", g,
                                                    "--schedule", s,
                                                    "--emit-python", e,
                                                    "--no-check"],
                           env=ENV, capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        r = subprocess.run([PY, e], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("bit-equal to eager PyTorch", r.stdout)
        with open(e) as f:
            code = f.read()
        self.assertIn("torch.ops.aten.convolution_backward.default(", code)


class Vit(Base, unittest.TestCase):
    def test_vit_b_16_infer_weights_on_host(self):
        import torchvision
        torch.manual_seed(0)
        m = torchvision.models.vit_b_16(weights=None, image_size=32).eval()
        x = torch.randn(2, 3, 32, 32)
        self.replay_all(m, (x,), "infer", weights_home="host")


if __name__ == "__main__":
    unittest.main()
