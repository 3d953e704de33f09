"""replay.py: runs a hoffopt plan inside PyTorch. The traced step (every
aten op export() recorded, in the schedule's order) is rebuilt as a
torch.fx GraphModule whose nodes are the aten calls and the plan's cache
operators, and run on real tensors.

Contract:
- The model is traced again (export's own trace, on meta) with each op's
  call kept (trace.Call); the graph given must be the one this trace
  writes (same op and tensor ids, same bytes), else ReplayError (exit 2).
- Storage pools: `dev` (the device side) and one a tier, each a dict from
  tensor id to a flat tensor over the whole storage. An op reads views
  (as_strided) of device-side storages only; a prefetch copies a tier's
  copy into a new device-side storage, a store copies the device-side one
  into the tier and drops it, detach and drop drop it, a recompute re-runs
  the op. On the CPU every pool is host memory and every move a real copy;
  a storage leaves a pool by `del`, and the replay checks that PyTorch
  has released it (no reference is left) when it is freed.
- The plan is checked as it runs, by FORMAT.md's rules in step order
  (transfers complete at once): a tensor read while not on the device
  side, a prefetch of a resident tensor or one without a valid copy, a
  store or detach of a missing tensor, a detach of dirty persistent
  state, a drop of persistent state, a recompute of a non-recomputable
  op, an end state the rules forbid: PlanError naming the step, the op
  and the tensor (exit 1).
- Device-side live bytes (the pool's storages' real nbytes) are counted
  after every allocation: after a prefetch and after each compute step,
  before its frees (rule 6); `peak` is the largest.
- Adam's fused op (`adam/NAME`, added by the exporter) runs
  torch.optim.adam.adam (foreach=False) on the four tensors; its step
  counter (a 4-byte tensor the graph leaves out) lives outside the pools.
- CUDA (`device="cuda"`): the device pool is GPU memory, tiers pinned host
  memory; each tier's h2d and d2h copies run on their own stream, ordered
  by events (a prefetch after the store it reads, an op after the
  prefetches it reads, a store after the op that last wrote the tensor),
  with record_stream on every tensor a side stream touches. Untested in
  this project so far (no GPU was lent).
"""
import contextlib
import copy
import difflib
import json
import os
import statistics
import time

import torch
import torch.fx as fx
from torch.multiprocessing.reductions import StorageWeakRef
from torch.optim.adam import adam as _adam
from torch.utils._pytree import tree_map

from .export import export, split_inputs
from .trace import Const, Ref, storage_elems, storage_of, tensors_of

# The replay's clock (wall times, --measure's op times): wall seconds; with
# HOFFOPT_TORCH_CLOCK=process this process's CPU seconds (user + system),
# which other processes on a shared machine do not inflate: with one
# thread, what a quiet machine's wall time would be (bench/studies/
# torch_measure.sh). CPU only: a GPU's work is not this process's time.
CLOCK = time.process_time if os.environ.get("HOFFOPT_TORCH_CLOCK") == \
    "process" else time.perf_counter
ADAM = dict(lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.0)


class PlanError(Exception):
    """A schedule the replay rejects (a rule broken at a step): exit 1."""


class ReplayError(ValueError):
    """A graph or schedule that does not fit the model: exit 2."""


def _flat(t):
    """A 1-D tensor over the whole of t's storage."""
    n = storage_elems(t)
    return torch.empty(0, dtype=t.dtype, device=t.device).set_(
        storage_of(t), 0, (n,), (1,))


def _persistent(t):
    if "persistent" in t:
        return bool(t["persistent"])
    out = t.get("output", t.get("kind") == "output")
    return bool(out) or t.get("kind") in ("weight", "kv", "optimizer")


def load_json(path, what):
    """A JSON file (ReplayError, one line, when it cannot be read)."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise ReplayError("%s %s: %s" % (what, path, getattr(
            e, "strerror", None) or str(e).splitlines()[0])) from None


class Plan:
    """The traced step, the graph and the schedule, cross-checked: per
    step what it does, and per tensor its fields and last use."""

    def __init__(self, cap, graph, sched):
        self.cap, self.graph = cap, graph
        ops, ids = cap["ops"], cap["ids"]
        g_ops = graph.get("ops", [])
        if graph.get("format") != "hoffopt.graph":
            raise ReplayError("graph: format is not hoffopt.graph")
        if sched.get("format") != "hoffopt.schedule":
            raise ReplayError("schedule: format is not hoffopt.schedule")
        if len(g_ops) != len(ops):
            raise ReplayError("graph: %d ops, the model traced now has %d "
                              "(another model or other options?)"
                              % (len(g_ops), len(ops)))
        for k, (o, go) in enumerate(zip(ops, g_ops)):
            if cap["opid"][id(o)] != go.get("id"):
                raise ReplayError("graph: op %d is \"%s\", the model traced "
                                  "now has \"%s\"" % (k, go.get("id"),
                                                      cap["opid"][id(o)]))
        self.t = {t["id"]: t for t in graph["tensors"]}
        self.gid = {}
        for g, name in ids.items():
            t = self.t.get(name)
            if t is None:
                raise ReplayError("graph: no tensor \"%s\", which the model "
                                  "traced now has" % name)
            self.gid[name] = g
        self.name = ids
        self.ops = g_ops
        self.calls = [o.call for o in ops]
        self.adam = [o.path if o.kind == "optimizer" else None for o in ops]
        self.op_index = {o["id"]: k for k, o in enumerate(g_ops)}
        tiers = [t["name"] for t in graph.get("machine", {}).get("tiers",
                                                                  [])]
        self.tiers = tiers
        self.steps = []
        nxt = 0
        for s, st in enumerate(sched.get("steps", [])):
            self.steps.append(self._step(s, st, tiers))
            if self.steps[-1][0] == "op":
                k = self.steps[-1][1]
                if k != nxt:
                    raise ReplayError("schedule: step %d: op \"%s\" out of "
                                      "order (expected \"%s\")"
                                      % (s, g_ops[k]["id"], g_ops[nxt]["id"]
                                         if nxt < len(g_ops) else "none"))
                nxt += 1
        if nxt != len(g_ops):
            raise ReplayError("schedule: op \"%s\" missing"
                              % g_ops[nxt]["id"])
        self.uses = {}   # tensor -> compute steps using it, in order
        for s, st in enumerate(self.steps):
            if st[0] in ("op", "recompute"):
                o = g_ops[st[1]]
                names = o.get("inputs", []) + o.get("updates", [])
                if st[0] == "op":
                    names = names + o.get("outputs", [])
                for n in names:
                    self.uses.setdefault(n, []).append(s)
        self.next_op = [None] * len(self.steps)
        after = None
        for s in range(len(self.steps) - 1, -1, -1):
            if self.steps[s][0] in ("op", "recompute"):
                after = s
            self.next_op[s] = after

    def _step(self, s, st, tiers):
        if not isinstance(st, dict):
            raise ReplayError("schedule: step %d: not an object" % s)
        for key in ("op", "recompute"):
            if key in st:
                if st[key] not in self.op_index:
                    raise ReplayError("schedule: step %d: unknown op \"%s\""
                                      % (s, st[key]))
                return (key, self.op_index[st[key]])
        for key in ("prefetch", "store", "detach", "drop"):
            if key in st:
                t = st[key]
                if t not in self.t:
                    raise ReplayError("schedule: step %d: unknown tensor "
                                      "\"%s\"" % (s, t))
                tier = st.get("from" if key == "prefetch" else "to")
                if key in ("prefetch", "store") and tier not in tiers:
                    raise ReplayError("schedule: step %d: unknown tier "
                                      "\"%s\"" % (s, tier))
                return (key, t, tier)
        raise ReplayError("schedule: step %d: no op, recompute, prefetch, "
                          "store, detach or drop" % s)

    def persistent(self, name):
        return _persistent(self.t[name])

    def offload(self, name):
        return self.t[name].get("offload", True) is not False

    def later_use(self, name, s):
        """True when a compute step after step s uses tensor name."""
        return any(u > s for u in self.uses.get(name, []))

    def recomputable(self, k):
        o = self.ops[k]
        return o.get("recomputable", not o.get("updates"))

    def where(self, s):
        """"step S (KIND ..., before op X)" for error messages."""
        st = self.steps[s]
        if st[0] in ("op", "recompute"):
            return "step %d (%s %s)" % (s, st[0], self.ops[st[1]]["id"])
        n = self.next_op[s]
        u = next((u for u in self.uses.get(st[1], []) if u > s), None)
        return "step %d (%s %s%s%s)" % (
            s, st[0], st[1], ", before op %s" % self.ops[self.steps[n][1]][
                "id"] if n is not None else ", after the last op",
            "; its next use: op %s" % self.ops[self.steps[u][1]]["id"]
            if u is not None else "")


class Pool:
    """The runtime the GraphModule calls: the device-side pool, the tier
    pools, dirty bits, the rules' checks and the live-byte count."""

    def __init__(self, plan, initial, device="cpu", watch=()):
        self.plan = plan
        self.device = torch.device(device)
        self.cuda = self.device.type == "cuda"
        self.dev = {}
        self.tier = {n: {} for n in plan.tiers}
        self.dirty = set()
        self.writer = {}       # tensor -> the op that last wrote it
        self.live = 0
        self.peak, self.peak_step = 0, None
        self.at_step = {}      # compute step -> live bytes before frees
        self.pre = {}          # compute step -> live bytes as it begins
        self.watch = set(watch)
        self.seen = {}         # watched tensor -> its value at last use
        self.steps_t = {}      # Adam's step counters (outside the pools)
        self.released = 0
        self.freed = []
        self.consts = {}
        self.bn_saved = {}     # batch norm's save_mean -> (impl, reserve)
        self.stamps = None     # [(step, CLOCK() at its end)] (clock)
        if self.cuda:
            self._streams()
        for name, t in plan.t.items():
            if name not in initial:
                continue
            v = initial[name]
            home = t.get("home", "device")
            if home == "device":
                self._put(name, _flat(v.to(self.device).clone()))
                self.dirty.add(name)
            else:
                self.tier[home][name] = self._host(_flat(v.clone()))
        self._count(None)

    # ---- memory ------------------------------------------------------------
    def _put(self, name, flat):
        self.dev[name] = flat
        self.live += storage_of(flat).nbytes()

    def _free(self, name):
        """Drops the device-side storage of name and checks that PyTorch
        released it (nothing else refers to it)."""
        flat = self.dev.pop(name)
        self.live -= storage_of(flat).nbytes()
        self.freed.append((name, StorageWeakRef(storage_of(flat))))
        del flat

    def _check_released(self):
        """Every storage freed before this point is gone (checked at the
        next step, once the GraphModule's locals of the last one are)."""
        for name, ref in self.freed:
            if not ref.expired():
                raise RuntimeError("tensor %s: its device-side storage is "
                                   "still referenced after it was freed"
                                   % name)
        self.released += len(self.freed)
        self.freed = []

    def _count(self, s):
        if self.live > self.peak or self.peak_step is None:
            self.peak, self.peak_step = self.live, s

    def _host(self, flat):
        return flat.pin_memory() if self.cuda and not flat.is_pinned() \
            else flat

    # ---- transfers ---------------------------------------------------------
    def _streams(self):
        self.compute = torch.cuda.current_stream()
        self.h2d = {n: torch.cuda.Stream() for n in self.plan.tiers}
        self.d2h = {n: torch.cuda.Stream() for n in self.plan.tiers}
        self.ready = {}        # tensor -> event: its device copy is there
        self.stored = {}       # (tier, tensor) -> event: its tier copy is

    def _copy_in(self, name, tier):
        src = self.tier[tier][name]
        if not self.cuda:
            return src.clone()
        st = self.h2d[tier]
        ev = self.stored.get((tier, name))
        if ev is not None:
            st.wait_event(ev)            # the store it reads has finished
        with torch.cuda.stream(st):
            dst = torch.empty_like(src, device=self.device)
            dst.copy_(src, non_blocking=True)
        dst.record_stream(self.compute)  # used on the compute stream too
        e = torch.cuda.Event()
        e.record(st)
        self.ready[name] = e
        return dst

    def _copy_out(self, name, tier):
        src = self.dev[name]
        if not self.cuda:
            return src.clone()
        st = self.d2h[tier]
        e = torch.cuda.Event()
        e.record(self.compute)           # after the op that wrote it
        st.wait_event(e)
        if name in self.ready:
            st.wait_event(self.ready.pop(name))
        with torch.cuda.stream(st):
            dst = torch.empty(src.shape, dtype=src.dtype, pin_memory=True)
            dst.copy_(src, non_blocking=True)
        src.record_stream(st)            # not reused before the copy ends
        done = torch.cuda.Event()
        done.record(st)
        self.stored[(tier, name)] = done
        return dst

    # ---- cache steps (called by the GraphModule) ---------------------------
    def prefetch(self, s, name, tier):
        """Step s: prefetch name from tier (rule 4)."""
        if name in self.dev:
            raise PlanError("%s: %s is already on the device side (rule 4)"
                            % (self.plan.where(s), name))
        if name not in self.tier[tier]:
            raise PlanError("%s: %s has no valid copy on %s (rule 4)"
                            % (self.plan.where(s), name, tier))
        self._put(name, self._copy_in(name, tier))
        self.dirty.discard(name)
        self._count(s)
        self._stamp(s)

    def store(self, s, name, tier):
        """Step s: store name to tier (rule 5), freeing the device side."""
        self._resident_offload(s, name, 5)
        self.tier[tier][name] = self._copy_out(name, tier)
        self.dirty.discard(name)
        self._free(name)
        self._stamp(s)

    def detach(self, s, name):
        """Step s: detach name (rule 7)."""
        self._resident_offload(s, name, 7)
        p = self.plan
        if name in self.dirty and p.persistent(name):
            raise PlanError("%s: detach of %s, dirty persistent state "
                            "(last written by op %s): its only valid copy "
                            "would be lost (rule 7)"
                            % (p.where(s), name, self.writer.get(
                                name, "none: it starts on the device")))
        if name in self.dirty and p.later_use(name, s):
            raise PlanError("%s: detach of %s, dirty and used later (rule 7)"
                            % (p.where(s), name))
        self._free(name)
        self._stamp(s)

    def drop(self, s, name):
        """Step s: drop name (rule 11)."""
        self._resident_offload(s, name, 11)
        if self.plan.persistent(name):
            raise PlanError("%s: drop of %s, persistent (rule 11)"
                            % (self.plan.where(s), name))
        self._free(name)
        self._stamp(s)

    def _resident_offload(self, s, name, rule):
        if name not in self.dev:
            raise PlanError("%s: %s is not on the device side (rule %d)"
                            % (self.plan.where(s), name, rule))
        if not self.plan.offload(name):
            raise PlanError("%s: %s has offload false (rule %d)"
                            % (self.plan.where(s), name, rule))

    # ---- compute steps -----------------------------------------------------
    def begin(self, s):
        """Step s (an op or a recompute) starts: every tensor its op reads
        or updates must be on the device side (rule 1)."""
        p = self.plan
        self._check_released()
        self.pre[s] = self.live
        kind, k = p.steps[s][0], p.steps[s][1]
        o = p.ops[k]
        if kind == "recompute" and not p.recomputable(k):
            raise PlanError("%s: op %s is not recomputable (rule 10)"
                            % (p.where(s), o["id"]))
        for n in o.get("inputs", []) + o.get("updates", []):
            if n not in self.dev:
                raise PlanError("%s: op %s reads %s, which is not on the "
                                "device side (rule 1)"
                                % (p.where(s), o["id"], n))
            if self.cuda and n in self.ready:
                self.compute.wait_event(self.ready.pop(n))
        for n in o.get("updates", []):
            self.dirty.add(n)
            self.writer[n] = o["id"]
            for pool in self.tier.values():
                pool.pop(n, None)      # tier copies are stale now

    def get(self, name, size, stride, offset):
        """A view of tensor name's device-side storage (an op's argument)."""
        flat = self.dev.get(name)
        if flat is None:
            raise PlanError("tensor %s read while not on the device side"
                            % name)
        return flat.as_strided(size, stride, offset)

    def const(self, i):
        """Constant i of the trace (a wrapped Python number, an empty
        tensor) on the device side."""
        return self.consts[i]

    def end(self, s, result=None):
        """Step s finishes: its op's new results join the device side (a
        recompute's resident ones must come out bit-equal), the live bytes
        are counted, then rule 6 frees what no later step uses."""
        p = self.plan
        kind, k = p.steps[s][0], p.steps[s][1]
        o = p.ops[k]
        call = p.calls[k]
        if call is not None:
            got = tensors_of(result)
            if len(got) != len(call.results):
                raise RuntimeError("op %s: %d results, the trace had %d"
                                   % (o["id"], len(got), len(call.results)))
            for t, r in zip(got, call.results):
                if r is None or r[0] != "new":
                    continue
                name = p.name[r[1]]
                if name in self.dev:
                    if kind == "op":
                        raise RuntimeError("op %s: result %s already exists"
                                           % (o["id"], name))
                    if not torch.equal(self.dev[name].view(-1),
                                       _flat(t).view(-1)):
                        raise PlanError("%s: recomputed %s differs from the "
                                        "original (rule 10)"
                                        % (p.where(s), name))
                    continue
                self._put(name, _flat(t))
                self.writer[name] = o["id"]
                if kind == "op" or not any(name in tp for tp in
                                           self.tier.values()):
                    self.dirty.add(name)
            del got
        result = None
        self.at_step[s] = self.live
        self._count(s)
        names = o.get("inputs", []) + o.get("updates", []) + \
            o.get("outputs", [])
        for n in dict.fromkeys(names):
            if n in self.watch and not p.later_use(n, s) and n in self.dev:
                self.seen[n] = self.dev[n].clone()
            if p.persistent(n) or p.later_use(n, s):
                continue
            if n in self.dev:
                self._free(n)
            for pool in self.tier.values():
                pool.pop(n, None)
        self._stamp(s)

    def _stamp(self, s):
        """With the clock on: step s has ended now (on CUDA, once the
        device has finished it)."""
        if self.stamps is not None:
            if self.cuda:
                torch.cuda.synchronize()
            self.stamps.append((s, CLOCK()))

    def batch_norm(self, s, key, *args):
        """Step s's native_batch_norm (args as recorded) as eager runs it
        here: through _batch_norm_impl_index (cuDNN's kernel on CUDA when
        cuDNN is on), its impl index and reserve kept under key (its
        save_mean) for the backward; with cuDNN off, the recorded op."""
        if not torch.backends.cudnn.enabled:
            return torch.ops.aten.native_batch_norm.default(*args)
        out, mean, invstd, reserve, impl = \
            torch.ops.aten._batch_norm_impl_index.default(*args, True)
        self.bn_saved[key] = (impl, reserve)
        return out, mean, invstd

    def batch_norm_backward(self, s, key, *args):
        """Step s's native_batch_norm_backward, by the same kernel family
        as its forward (_batch_norm_impl_index_backward with the forward's
        impl index and reserve), or as recorded."""
        saved = self.bn_saved.get(key)
        if saved is None:
            return torch.ops.aten.native_batch_norm_backward.default(*args)
        impl, reserve = saved
        return torch.ops.aten._batch_norm_impl_index_backward.default(
            impl, args[1], args[0], *args[2:], reserve)

    def adam(self, s):
        """Step s: the exporter's fused Adam op on one parameter."""
        p = self.plan
        k = p.steps[s][1]
        o = p.ops[k]
        g = o["inputs"][0]
        w, m, v = o["updates"]
        step = self.steps_t.setdefault(w, torch.tensor(0.0))
        n = self.dev[w].numel()
        shape = (n,)
        _adam(
            [self.dev[w].view(shape)], [self.dev[g].view(shape)],
            [self.dev[m].view(shape)], [self.dev[v].view(shape)], [], [step],
            foreach=False, amsgrad=False, beta1=ADAM["beta1"],
            beta2=ADAM["beta2"], lr=ADAM["lr"],
            weight_decay=ADAM["weight_decay"], eps=ADAM["eps"],
            maximize=False)

    def finish(self):
        """The end state (rule 9, and rule 9's repeat clause)."""
        if self.cuda:
            torch.cuda.synchronize()
        p = self.plan
        self._check_released()
        rep = bool(p.graph.get("repeat"))
        produced = {n for o in p.ops for n in o.get("outputs", [])}
        for name, t in p.t.items():
            if not p.persistent(name) or name not in p.gid:
                continue
            valid = [n for n, tp in self.tier.items() if name in tp]
            if name not in self.dev and not valid:
                raise PlanError("end: persistent %s is neither on the "
                                "device side nor on a tier (rule 9)" % name)
            if rep and name not in produced:
                home = t.get("home", "device")
                if home == "device" and name not in self.dev:
                    raise PlanError("end: %s is not back on the device "
                                    "(repeat, rule 9)" % name)
                if home != "device" and (name in self.dev or
                                         name not in self.tier[home]):
                    raise PlanError("end: %s is not back home on %s "
                                    "(repeat, rule 9)" % (name, home))

    def value(self, name, view=None):
        """tensor name's final value, wherever it is (or as last used),
        as view (size, stride, offset) of its storage when given."""
        flat = self.seen.get(name)
        if flat is None:
            flat = self.dev.get(name)
        for tp in self.tier.values():
            if flat is None:
                flat = tp.get(name)
        if flat is None or view is None:
            return flat
        return flat.as_strided(*view)


# Devices where the replay runs native_batch_norm (what the trace on meta
# recorded) as eager does, through _batch_norm_impl_index, which picks
# cuDNN's kernel on a CUDA tensor when cuDNN is on (Pool.batch_norm).
BN_AS_EAGER = ("cuda",)


def _bn_key(plan, c):
    """("batch_norm" or "batch_norm_backward", the graph name of its
    save_mean) for a recorded native batch norm call, else None."""
    if c.kwargs:
        return None
    if c.func is torch.ops.aten.native_batch_norm.default and \
            len(c.results) == 3 and c.results[1] is not None:
        return ("batch_norm", plan.name[c.results[1][1]])
    if c.func is torch.ops.aten.native_batch_norm_backward.default and \
            isinstance(c.args[5], Ref):
        return ("batch_norm_backward", plan.name[c.args[5].gid])
    return None


def build_module(plan, device):
    """The GraphModule: for each step of the schedule, its cache operator
    or its op (begin, the views it reads, the aten call, end), each node
    tagged with the step index (node.meta['hoff_step'])."""
    g = fx.Graph()
    pool = g.placeholder("pool")
    consts = []
    dev = torch.device(device)

    def call(method, *args, step=None, what=""):
        n = g.call_method(method, (pool,) + args)
        n.meta["hoff_step"], n.meta["hoff_what"] = step, what
        return n

    def arg(x, s):
        if isinstance(x, Ref):
            return call("get", plan.name[x.gid], x.size, x.stride,
                        x.offset, step=s)
        if isinstance(x, Const):   # a 0-dim one stays a CPU scalar
            consts.append(x.value if x.value.dim() == 0 else
                          x.value.to(dev))
            return call("const", len(consts) - 1, step=s)
        if isinstance(x, torch.device) and x.type == "meta":
            return dev
        return x

    for s, st in enumerate(plan.steps):
        if st[0] in ("prefetch", "store"):
            call(st[0], s, st[1], st[2], step=s, what="%s %s" % st[:2])
            continue
        if st[0] in ("detach", "drop"):
            call(st[0], s, st[1], step=s, what="%s %s" % st[:2])
            continue
        k = st[1]
        what = "%s %s" % (st[0], plan.ops[k]["id"])
        call("begin", s, step=s, what=what)
        c = plan.calls[k]
        if c is None:                    # the exporter's Adam op
            call("adam", s, step=s, what=what)
            call("end", s, step=s)
            continue
        args, kwargs = tree_map(lambda x: arg(x, s), (c.args, c.kwargs))
        key = _bn_key(plan, c) if dev.type in BN_AS_EAGER else None
        if key is not None:
            r = call(key[0], s, key[1], *args, step=s, what=what)
        else:
            r = g.call_function(c.func, tuple(args), dict(kwargs))
            r.meta["hoff_step"], r.meta["hoff_what"] = s, what
        call("end", s, r, step=s)
    g.output(None)
    gm = fx.GraphModule(torch.nn.Module(), g)
    return gm, consts


def emit_python(gm, header, footer=""):
    """gm's code, one node a line, each line with its plan step in a
    comment; header and footer around it (a runnable script)."""
    code = gm.code.strip("\n").splitlines()
    nodes = [n for n in gm.graph.nodes if n.op not in ("placeholder",
                                                       "output")]
    # after "def forward"; comment lines (torch 2's fx may write some
    # between nodes) are not nodes
    body = [ln for ln in code[1:] if ln.strip() and
            not ln.strip().startswith("#")]
    if len(body) != len(nodes) + 1:
        raise RuntimeError("emit-python: %d lines for %d nodes"
                           % (len(body), len(nodes)))
    out = [code[0]]
    last = None
    for ln, n in zip(body, nodes):
        s = n.meta.get("hoff_step")
        note = "  # step %d" % s if s is not None else ""
        if n.meta.get("hoff_what") and s != last:
            note += ": " + n.meta["hoff_what"]
        last = s
        out.append(ln + note)
    out.append(body[-1])
    return header + "\n".join(out) + "\n" + footer


class Result:
    """What a replay gives: the pool (final values), its live-byte peak,
    the wall time, and the step-by-step live bytes."""

    def __init__(self, pool, wall_s, gm):
        self.pool, self.wall_s, self.gm = pool, wall_s, gm
        self.peak, self.peak_step = pool.peak, pool.peak_step
        self.at_step, self.pre = pool.at_step, pool.pre

    def step_times(self):
        """With the clock on: step -> seconds from the end of the step
        before it (or the start) to its own end: what the replay paid for
        it (its views, the rules' checks, the call, pooling its results,
        the frees after it)."""
        st = self.pool.stamps or []
        return {s: t - st[i - 1][1] for i, (s, t) in enumerate(st)
                if i > 0}


def initial_values(plan, cap, model, args, kwargs, seed):
    """Each graph input's starting value: the module's parameters and
    buffers, the example inputs (meta ones filled: seeded normal floats,
    zero integers), Adam's moments zero."""
    init = {}
    named = dict(model.named_parameters())
    named.update(dict(model.named_buffers()))
    for n in cap["params"]:
        init[n] = named[n].detach()
    for n in cap["buffers"]:
        if n in plan.t:
            init[n] = named[n].detach()
    gen = torch.Generator().manual_seed(seed)
    for t, g in zip(tensors_of((args, kwargs)), cap["input_gids"]):
        if g is None or plan.name.get(g) not in plan.t:
            continue
        if t.device.type == "meta":
            if t.dtype.is_floating_point:
                t = torch.randn(t.shape, generator=gen).to(t.dtype)
            else:
                t = torch.zeros(t.shape, dtype=t.dtype)
        init[plan.name[g]] = t.detach()
    for name, t in plan.t.items():
        if t.get("kind") == "optimizer" and name not in init:
            w = name.rsplit(".", 1)[0]
            init[name] = torch.zeros_like(named[w].detach())
        if t.get("kind") == "input" and name.startswith("const.") and \
                name in plan.uses:
            raise ReplayError("graph: %s: a tensor the model made outside "
                              "any traced op; the replay cannot know its "
                              "value" % name)
    return init


def real_inputs(args, kwargs, seed):
    """args and kwargs with meta tensors filled as initial_values does."""
    gen = torch.Generator().manual_seed(seed)

    def fill(t):
        if not isinstance(t, torch.Tensor) or t.device.type != "meta":
            return t
        if t.dtype.is_floating_point:
            return torch.randn(t.shape, generator=gen).to(t.dtype)
        return torch.zeros(t.shape, dtype=t.dtype)
    return tree_map(fill, (args, kwargs))


def prepare(model, example_inputs, graph, schedule, mode="train",
            optimizer="adam", loss=None, device="cpu", seed=0):
    """Traces model again, checks graph and schedule (dicts or paths)
    against it and builds the GraphModule. Returns a Replay. On CUDA it
    sets cuDNN deterministic and benchmark off (process-wide), as the
    bit-for-bit comparison with eager needs."""
    if isinstance(graph, str):
        graph = load_json(graph, "graph")
    if isinstance(schedule, str):
        schedule = load_json(schedule, "schedule")
    if not isinstance(model, torch.nn.Module):
        raise ValueError("model: a built nn.Module with its weights")
    if graph.get("meta", {}).get("bf16"):
        raise ReplayError("graph: written with bf16 (2 bytes an element); "
                          "the replay runs the model's real dtypes")
    args, kwargs = split_inputs(example_inputs)
    args, kwargs = real_inputs(args, kwargs, seed)
    cap = {}
    opt = optimizer if mode == "train" else None
    tiers = graph.get("machine", {}).get("tiers", [])
    export(model, args if not kwargs else kwargs, mode=mode,
           machine=graph.get("machine"), optimizer=opt, loss=loss,
           optimizer_home=tiers[0]["name"] if tiers else "device",
           _capture=cap)
    plan = Plan(cap, graph, schedule)
    if torch.device(device).type == "cuda":
        # bit-equality on CUDA needs the same kernels in the replay and in
        # eager: cuDNN's deterministic algorithms, none chosen by timing
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
    return Replay(plan, cap, model, args, kwargs, mode, opt, loss, device,
                  seed)


@contextlib.contextmanager
def as_traced():
    """Eager PyTorch on the paths the trace took. The trace runs on meta
    under a TorchFunctionMode, so nn.MultiheadAttention's fast path is off
    and scaled_dot_product_attention takes its math backend (meta has no
    fused kernel); torch 2 would choose a fused kernel on a real device.
    torch 1.13 has neither switch: nothing changes there."""
    with contextlib.ExitStack() as st:
        mha = getattr(torch.backends, "mha", None)
        if mha is not None and hasattr(mha, "set_fastpath_enabled"):
            old = mha.get_fastpath_enabled()
            mha.set_fastpath_enabled(False)
            st.callback(mha.set_fastpath_enabled, old)
        try:
            from torch.nn.attention import SDPBackend, sdpa_kernel
        except ImportError:
            sdpa_kernel = None
        if sdpa_kernel is not None:
            st.enter_context(sdpa_kernel(SDPBackend.MATH))
        yield


class Replay:
    """A prepared replay: run() it, compare() it with eager PyTorch."""

    def __init__(self, plan, cap, model, args, kwargs, mode, optimizer,
                 loss, device, seed):
        self.plan, self.cap, self.model = plan, cap, model
        self.args, self.kwargs = args, kwargs
        self.mode, self.optimizer, self.loss = mode, optimizer, loss
        self.device, self.seed = device, seed
        self.gm, self.consts = build_module(plan, device)

    def again(self, schedule, device=None):
        """A Replay of another schedule (a dict or a path) for the same
        graph, sharing this one's trace; on device when given."""
        if isinstance(schedule, str):
            schedule = load_json(schedule, "schedule")
        plan = Plan(self.cap, self.plan.graph, schedule)
        return Replay(plan, self.cap, self.model, self.args, self.kwargs,
                      self.mode, self.optimizer, self.loss,
                      device or self.device, self.seed)

    def watched(self):
        """Tensors the comparison reads: the loss or outputs, gradients."""
        names = set()
        for g in self.cap["outputs"]:
            names.add(self.plan.name[g])
        for n, g in self.cap["grad_of"].items():
            names.add(self.plan.name[g])
        return names

    def run(self, forward=None, clock=False):
        """Runs the GraphModule (or forward, an emitted one) on fresh
        pools; returns a Result. clock: stamp the end of every step
        (Result.step_times; on CUDA each step is waited for)."""
        init = initial_values(self.plan, self.cap, self.model, self.args,
                              self.kwargs, self.seed)
        pool = Pool(self.plan, init, self.device, watch=self.watched())
        pool.consts = self.consts
        del init
        torch.manual_seed(self.seed)
        t0 = CLOCK()
        if clock:
            pool.stamps = [(None, t0)]
        with torch.no_grad():
            (forward or self.gm)(pool)
            pool.finish()
        return Result(pool, CLOCK() - t0, self.gm)

    def eager(self):
        """The same step in plain PyTorch on a copy of the module: a dict
        name -> tensor (loss or outputs, gradients, parameters, moments,
        buffers), named as the graph names them."""
        m = copy.deepcopy(self.model).to(self.device)
        m.train(self.mode == "train")
        named = dict(m.named_parameters())
        named.update(dict(m.named_buffers()))
        out = {}
        args, kwargs = tree_map(
            lambda t: t.to(self.device) if isinstance(t, torch.Tensor)
            else t, (self.args, self.kwargs))
        torch.manual_seed(self.seed)
        with as_traced():
            return self._eager(m, named, out, args, kwargs)

    def _eager(self, m, named, out, args, kwargs):
        if self.mode != "train":
            with torch.no_grad():
                res = m(*args, **kwargs)
            for g, t in zip(self.cap["outputs"], tensors_of(res)):
                out[self.plan.name[g]] = t
        else:
            res = m(*args, **kwargs)
            lossv = self.loss(res) if self.loss else tensors_of(res)[0].sum()
            lossv.backward()
            out[self.plan.name[self.cap["outputs"][0]]] = lossv.detach()
            for n, g in self.cap["grad_of"].items():
                out[self.plan.name[g]] = named[n].grad
            if self.optimizer == "adam":
                ps = [named[n] for n in self.cap["grad_of"]]
                opt = torch.optim.Adam(
                    ps, lr=ADAM["lr"], betas=(ADAM["beta1"], ADAM["beta2"]),
                    eps=ADAM["eps"], weight_decay=ADAM["weight_decay"],
                    foreach=False)
                opt.step()
                for n in self.cap["grad_of"]:
                    st = opt.state[named[n]]
                    out[n + ".exp_avg"] = st["exp_avg"]
                    out[n + ".exp_avg_sq"] = st["exp_avg_sq"]
        for n in self.cap["params"]:
            out[n] = named[n].detach()
        for n in self.cap["buffers"]:
            if n in self.plan.t:
                out[n] = named[n]
        return out

    def compare(self, result):
        """(checked, mismatched): every eager tensor against the replay's,
        by torch.equal (same dtype, shape and bits)."""
        ref = self.eager()
        bad = []
        views = self.cap["views"]
        for name, want in ref.items():
            g = self.plan.gid[name]
            got = result.pool.value(name, views.get(g) or (
                tuple(want.shape), tuple(want.stride()),
                want.storage_offset()))
            if got is None or not torch.equal(got.cpu(), want.cpu()):
                bad.append(name)
        return len(ref), bad


def _none_schedule(graph):
    """Every tier-homed input that an op uses prefetched first, then the
    ops, then (a repeat graph, FORMAT v2 rule 9) each of them back home:
    stored when an op updated it, else detached. The plan `measure` runs
    (nothing moves while ops run)."""
    used = {n for o in graph["ops"] for n in o.get("inputs", []) +
            o.get("updates", [])}
    written = {n for o in graph["ops"] for n in o.get("updates", [])}
    homed = [t for t in graph["tensors"]
             if t.get("home", "device") != "device" and t["id"] in used]
    steps = [{"prefetch": t["id"], "from": t["home"]} for t in homed]
    steps += [{"op": o["id"]} for o in graph["ops"]]
    if graph.get("repeat"):
        steps += [{"store": t["id"], "to": t["home"]} if t["id"] in written
                  else {"detach": t["id"]} for t in homed]
    return {"format": "hoffopt.schedule", "version": 1, "steps": steps}


def measure(model, example_inputs, graph, mode="train", optimizer="adam",
            loss=None, device="cpu", reps=7, seed=0, warmup=2, links=None):
    """Each op's time on this device, measured inside the replay's own
    machinery: the plan that moves only what it must (_none_schedule)
    replayed warmup + reps times, each on fresh pools, with the clock on.
    An op's time in a run is from the end of the step before it to the
    end of its own: the views it reads, the rules' checks, the aten call,
    pooling its results and the frees after it, all that the replay pays
    for it. The warm-up runs warm the allocator and the kernels' caches.
    Each op gets the median of its times over the timed runs, scaled by
    one factor so that the ops add up to the median run's total: time
    lost to other processes lands on few runs of each op, which the
    medians alone would leave out, and a replay pays it all the same.
    links: a dict, filled with {tier: {"h2d_Bps", "d2h_Bps"}}, the rates
    of the replay's own prefetches and stores (bytes over seconds, the
    median over the timed runs), for the tiers it moved anything on.
    Returns the times, seconds, in graph order."""
    rp = prepare(model, example_inputs, graph, _none_schedule(graph),
                 mode=mode, optimizer=optimizer, loss=loss, device=device,
                 seed=seed)
    timed = [rp.run(clock=True).step_times() for _ in range(warmup + reps)]
    return op_times(rp.plan, timed[warmup:], links)


def op_times(plan, timed, links=None):
    """measure's figures from the step_times of clocked runs of plan:
    per op the median over the runs, scaled so that the ops add up to
    the median run's total; links filled as measure says."""
    steps = plan.steps
    runs = [[] for _ in plan.ops]
    totals = []
    moved = {}   # (tier, dir) -> [(bytes, seconds)] a run
    for st in timed:
        totals.append(0.0)
        mv = {}
        for s, t in st.items():
            kind = steps[s][0]
            if kind == "op":
                runs[steps[s][1]].append(t)
                totals[-1] += t
            elif kind in ("prefetch", "store"):
                key = (steps[s][2], "h2d" if kind == "prefetch" else "d2h")
                b, sec = mv.get(key, (0, 0.0))
                mv[key] = (b + plan.t[steps[s][1]]["bytes"], sec + t)
        for key, v in mv.items():
            moved.setdefault(key, []).append(v)
    med = [statistics.median(x) for x in runs]
    scale = statistics.median(totals) / sum(med) if sum(med) > 0 else 1.0
    if links is not None:
        for (tier, d), v in sorted(moved.items()):
            rates = [b / sec for b, sec in v if b > 0 and sec > 0]
            if rates:
                links.setdefault(tier, {})[d + "_Bps"] = \
                    statistics.median(rates)
    return [m * scale for m in med]


# Other aten names of a graph op's call in a trace taken on a GPU: the
# trace records what runs on meta (native_batch_norm), eager on CUDA may
# run cudnn's (under _batch_norm_impl_index).
_ALIASES = {
    "native_batch_norm": ("_batch_norm_impl_index", "cudnn_batch_norm",
                          "miopen_batch_norm"),
    "native_batch_norm_backward": ("_batch_norm_impl_index_backward",
                                   "cudnn_batch_norm_backward",
                                   "miopen_batch_norm_backward"),
}


def _lcs(a, b, cells=2 * 10 ** 7):
    """Index pairs (i, j) of a longest common subsequence of the name
    lists a and b: the dynamic programme row by row in numpy (a row is a
    running maximum), its table kept for the walk back. Past `cells`
    table entries, difflib's matching blocks instead (not always longest,
    but linear in memory)."""
    if not a or not b:
        return []
    if len(a) * len(b) > cells:
        sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
        return [(i + d, j + d) for i, j, n in sm.get_matching_blocks()
                for d in range(n)]
    import numpy as np
    code = {}
    bb = np.array([code.setdefault(x, len(code)) for x in b])
    aa = [code.get(x, -1) for x in a]
    tab = np.zeros((len(a) + 1, len(b) + 1), dtype=np.int32)
    for i, x in enumerate(aa):
        prev = tab[i]
        t = prev[1:].copy()
        if x >= 0:
            np.maximum(t, prev[:-1] + (bb == x), out=t)
        np.maximum.accumulate(t, out=tab[i + 1][1:])
    pairs, i, j = [], len(a), len(b)
    while i > 0 and j > 0:
        if tab[i, j] == tab[i - 1, j]:
            i -= 1
        elif tab[i, j] == tab[i, j - 1]:
            j -= 1
        else:
            pairs.append((i - 1, j - 1))
            i, j = i - 1, j - 1
    return pairs[::-1]


def _align(gops, evs):
    """For each graph op, the index in evs (aten events in time order) of
    the event it matches, or None: the two name sequences (an alias mapped
    to its graph name) aligned in order by a longest common subsequence
    (_lcs), so an op the trace lacks, or a trace event the graph lacks (a
    composite op such as aten::linear, an op of eager's own), costs only
    itself and the match goes on after it. An event inside another of
    its own name (same thread) is never a candidate, and a match nested
    in an earlier matched event (its child) is refused."""
    canon = {al: n for n, als in _ALIASES.items() for al in als}
    want = [o["id"].rsplit("/", 1)[-1].split("#")[0] for o in gops]
    names = [canon.get(e["name"][6:], e["name"][6:]) for e in evs]
    # an event inside one of its own name (its thread's) is that call's
    # inner work, never a graph op of its own
    keep, open_ = [], {}
    for i, e in enumerate(evs):
        st = open_.setdefault(e.get("tid"), [])
        while st and st[-1][0] <= e["ts"]:
            st.pop()
        if not any(n == names[i] for _, n in st):
            keep.append(i)
        st.append((e["ts"] + e["dur"], names[i]))
    have = [names[i] for i in keep]
    out = [None] * len(want)
    for a, b in _lcs(want, have):
        out[a] = keep[b]
    end = {}   # thread -> end of the last matched event
    for k, i in enumerate(out):
        if i is None:
            continue
        e = evs[i]
        tid = e.get("tid")
        if e["ts"] < end.get(tid, float("-inf")):
            out[k] = None
            continue
        end[tid] = e["ts"] + e["dur"]
    return out


def times_from_trace(graph, trace):
    """Maps a PyTorch profiler (Kineto) trace's aten ops onto the graph's
    ops, in order (_align): op k matches an `aten::NAME` event (NAME its
    aten op, or one of its _ALIASES) after op k-1's match, not nested in
    it. Its time is the sum
    of the GPU kernels launched inside the event when the trace has any,
    else the event's own duration. The exporter's Adam ops (kind
    optimizer, no aten op of their own) share the first `Optimizer.step`
    span of the trace (torch.optim's record_function, measured the same
    way), in proportion to their bytes_accessed. trace: a Kineto trace (an
    object with traceEvents) or the legacy profiler's list of events.
    Returns (times, unmatched): time_s per op (None where unmatched) and
    the ids not matched."""
    if isinstance(trace, dict):
        trace = trace.get("traceEvents", [])
    evs = [e for e in trace if isinstance(e, dict)
           and e.get("ph") == "X" and isinstance(e.get("ts"), (int, float))
           and isinstance(e.get("dur"), (int, float))]
    ops = [e for e in evs if str(e.get("name", "")).startswith("aten::")
           and e.get("cat", "cpu_op") in ("cpu_op", "Operator", "operator")]
    kernels = [e for e in evs if e.get("cat") in ("kernel", "Kernel",
                                                  "gpu_memcpy", "gpu_memset")]
    launches = {}
    for e in evs:
        if e.get("cat") in ("cuda_runtime", "Runtime", "cuda_driver"):
            c = e.get("args", {}).get("correlation")
            if c is not None:
                launches[c] = e
    ops.sort(key=lambda e: (e["ts"], -e["dur"]))
    gpu = {}
    for kern in kernels:
        c = kern.get("args", {}).get("correlation")
        la = launches.get(c)
        if la is not None:
            gpu.setdefault(la.get("tid"), []).append((la["ts"], kern["dur"]))

    def span_s(e):
        ks = [d for ts, d in gpu.get(e.get("tid"), [])
              if e["ts"] <= ts <= e["ts"] + e["dur"]]
        return (sum(ks) if ks else e["dur"]) / 1e6
    times, unmatched = [], []
    for k, i in enumerate(_align(graph["ops"], ops)):
        if i is None:
            times.append(None)
            unmatched.append(graph["ops"][k]["id"])
        else:
            times.append(span_s(ops[i]))
    adam = [k for k, o in enumerate(graph["ops"])
            if times[k] is None and o.get("kind") == "optimizer"]
    steps = [e for e in evs if str(e.get("name", "")).startswith(
        "Optimizer.step") and "gpu" not in str(e.get("cat", ""))]
    if adam and steps:
        total = span_s(min(steps, key=lambda e: e["ts"]))
        w = [max(int(graph["ops"][k].get("bytes_accessed", 0)), 1)
             for k in adam]
        for k, wk in zip(adam, w):
            times[k] = total * wk / sum(w)
        done = {graph["ops"][k]["id"] for k in adam}
        unmatched = [u for u in unmatched if u not in done]
    return times, unmatched


def explain_peak(result, sim_trace):
    """The replay's live bytes against the simulator's, step by step. On
    the CPU a store's copy ends at once and frees the device side at its
    step; the simulator frees it when its transfer completes. So the
    simulator's device memory is the replay's plus the bytes of the stores
    in flight (issued at an earlier step, completing later, per the
    simulator's own trace), at two instants a compute step: when the cache
    steps before it have been issued (the previous compute step's finish)
    and when it starts. Returns {"peak": the replay's, "explained_peak":
    the largest of replay + stores in flight, "at_step": that compute
    step, "when": "issue" or "start", "in_flight": [(tensor, bytes)]}."""
    ev = sim_trace.get("traceEvents", [])
    start, end = {}, {}
    for e in ev:
        if e.get("ph") == "X" and e.get("cat") in ("op", "recompute"):
            start[e["args"]["step"]] = e["ts"]
            end[e["args"]["step"]] = e["ts"] + e["dur"]
    stores = [(e["args"]["step"], e["ts"] + e["dur"], e["name"],
               e["args"]["bytes"]) for e in ev
              if e.get("ph") == "X" and e.get("cat") == "store"]

    def flight(s, t):
        return [(n, b) for (i, done, n, b) in stores if i < s and
                done > t + 1e-6]
    best = (result.peak, result.peak_step, "start", [])
    prev = None
    for s in sorted(result.at_step):
        issue = end.get(prev, 0.0) if prev is not None else 0.0
        for when, live, t in (("issue", result.pre.get(s), issue),
                              ("start", result.at_step[s], start.get(s))):
            if live is None or t is None:
                continue
            fl = flight(s, t)
            tot = live + sum(b for _, b in fl)
            if tot > best[0]:
                best = (tot, s, when, fl)
        prev = s
    return {"peak": result.peak, "explained_peak": best[0],
            "at_step": best[1], "when": best[2], "in_flight": best[3]}


def run(model, example_inputs, graph, schedule, mode="train",
        optimizer="adam", loss=None, device="cpu", seed=0, check=True):
    """The Python call beside export(): replays schedule on graph for
    model (built, with its weights) and example_inputs, as export was
    given them. Returns (result, bad): result.peak, .peak_step, .wall_s,
    .pool (final values); bad lists the tensors not bit-equal to eager
    PyTorch (empty when equal; None with check=False). Raises PlanError
    for a schedule the rules reject, ReplayError for a graph or schedule
    that does not fit the model."""
    rp = prepare(model, example_inputs, graph, schedule, mode=mode,
                 optimizer=optimizer, loss=loss, device=device, seed=seed)
    res = rp.run()
    return res, (rp.compare(res)[1] if check else None)
