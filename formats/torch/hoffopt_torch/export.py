"""export.py: hoffopt_torch.export(), from an nn.Module to graph.json.

Pipeline: build on meta (a factory) or swap the weights for meta copies
(a module) -> trace the forward (and the loss and autograd's backward in
train mode) at aten level -> add one fused Adam update a parameter -> drop
dead ops -> name tensors and ops -> write graph.json (FORMAT.md) through a
temporary file renamed into place, so nothing is half-written.
Kinds: parameters `weight`; the gradients autograd returns `gradient`;
Adam's moments `optimizer`; module buffers `other`, persistent; example
inputs and captured constants `input`; the loss (train) or the model's
results (infer) `output`; everything else `activation`.
"""
import json

import torch

from . import costs
from .machines import machine_block, strip_v2, uses_v2
from .outfile import write_file
from .trace import (ExportError, MetaDevice, Recorder, build_on_meta,
                    meta_like, swap_to_meta, tensors_of)

_MODES = ("train", "infer")


def _elsize_fn(bf16):
    def elsize(dtype):
        if bf16 and dtype.is_floating_point:
            return 2
        return torch.empty((), dtype=dtype, device="meta").element_size()
    cache = {}

    def cached(dtype):
        if dtype not in cache:
            cache[dtype] = elsize(dtype)
        return cache[dtype]
    return cached


def _real_elsize(dtype):
    return torch.empty((), dtype=dtype, device="meta").element_size()


def split_inputs(example_inputs):
    """(args, kwargs) of a forward call from example inputs: a dict is the
    keywords, a tuple or list the positional arguments, else one."""
    if isinstance(example_inputs, dict):
        return (), dict(example_inputs)
    if isinstance(example_inputs, (tuple, list)):
        return tuple(example_inputs), {}
    return (example_inputs,), {}


def _check(mode, weights_home, optimizer, machine_tiers, optimizer_home):
    if mode not in _MODES:
        raise ValueError("mode: \"train\" or \"infer\", not %r" % (mode,))
    if optimizer not in ("adam", None):
        raise ValueError("optimizer: \"adam\" or None, not %r" % (optimizer,))
    if optimizer is not None and mode != "train":
        raise ValueError("optimizer: only in train mode")
    names = [t["name"] for t in machine_tiers]
    for field, home in (("weights_home", weights_home),
                        ("optimizer_home", optimizer_home)):
        if home == "device":
            continue
        if home not in names:
            raise ValueError("%s: \"device\" or a tier of the machine (%s), "
                             "not %r" % (field, ", ".join(names) or "none",
                                         home))


def export(model, example_inputs, path=None, mode="train",
           machine="h100-pcie5", weights_home="device", optimizer="adam",
           loss=None, bf16=False, optimizer_home=None, name=None,
           repeat=None, v1=False, _capture=None):
    """Traces model on example_inputs and returns graph.json as a dict;
    writes it to path when given. model: an nn.Module, or a zero-argument
    callable that builds one (built on the meta device, nn.init off), or
    with example_inputs None one returning (model, example_inputs).
    example_inputs: a tensor, a tuple of arguments, or a dict of keyword
    arguments (meta tensors welcome). machine: a preset of `hoffopt gen`
    or a graph.json machine dict. weights_home / optimizer_home: "device"
    or a tier name (optimizer_home defaults to the first tier, else the
    device). loss: callable(outputs) -> scalar tensor (default: the sum of
    the first output). bf16: count floating tensors as 2 bytes an element
    (Adam's moments keep the parameter's real dtype, as in mixed-precision
    training). repeat: the graph is one iteration of a loop (FORMAT v2
    `"repeat": true`; default: True in train mode, one training step).
    Ops that draw random numbers are marked `recomputable: false`; a graph
    with either, or a machine with duplex factors (the presets have them),
    is written as version 2, else version 1. v1: write FORMAT v1 (no
    repeat, no recomputable, no duplex factors), for readers without v2.
    Raises ExportError naming the module and the aten op the
    trace could not follow, ValueError for bad arguments."""
    mach = machine_block(machine)
    if v1:
        strip_v2(mach)
    tiers = mach.get("tiers", [])
    if optimizer_home is None:
        optimizer_home = tiers[0]["name"] if tiers else "device"
    if mode == "infer" and optimizer == "adam":
        optimizer = None
    _check(mode, weights_home, optimizer, tiers, optimizer_home)
    train = mode == "train"
    if not isinstance(model, torch.nn.Module):
        if not callable(model):
            raise ValueError("model: an nn.Module or a callable building one")
        model = build_on_meta(model)
        if isinstance(model, tuple) and len(model) == 2 and \
                example_inputs is None:
            model, example_inputs = model  # a CLI factory: (model, inputs)
        if not isinstance(model, torch.nn.Module):
            raise ValueError("model: the factory returned %s, not an "
                             "nn.Module" % type(model).__name__)
    args, kwargs = split_inputs(example_inputs)

    elsize = _elsize_fn(bf16)
    rec = Recorder(model, elsize)
    rec.calls = _capture is not None
    restore, params, buffers = swap_to_meta(model)
    was_training = model.training
    handles = []
    try:
        for n, p in params.items():
            rec.add(p, "weight", name=n)
        for n, b in buffers.items():
            if not rec.known(b) and not rec.skip(b):
                rec.add(b, "other", name=n)
        margs, mkwargs = _to_meta((args, kwargs))
        input_gids = []
        for i, t in enumerate(tensors_of((margs, mkwargs))):
            if not rec.known(t) and not rec.skip(t):
                rec.add(t, "input", name="input.%d" % i)
            input_gids.append(rec.gid(t))
        model.train(train)
        mm = torch.nn.modules.module
        handles = [mm.register_module_forward_pre_hook(rec.pre_hook),
                   mm.register_module_forward_hook(rec.post_hook)]
        with torch.set_grad_enabled(train), \
                torch.autograd.graph.saved_tensors_hooks(rec.pack,
                                                         rec.unpack), \
                MetaDevice(rec.hook_results if train else None), rec:
            out = model(*margs, **mkwargs)
            lossv, grads, plist = None, [], []
            if train:
                lossv = loss(out) if loss is not None else _first(out).sum()
                if not isinstance(lossv, torch.Tensor) or lossv.numel() != 1:
                    raise ExportError("loss: must return a tensor of one "
                                      "element")
                plist = [(n, p) for n, p in params.items() if p.requires_grad]
                if not plist:
                    raise ExportError("train mode: no parameter requires "
                                      "grad")
                if not lossv.requires_grad:
                    raise ExportError("loss: does not depend on any "
                                      "parameter")
                rec.bwd_at = rec.where()  # the loss's place
                rec.bwd = True
                grads = torch.autograd.grad(lossv, [p for _, p in plist],
                                            allow_unused=True)
    except ExportError:
        raise
    except Exception as e:
        if rec.error is not None:
            raise rec.error from e
        raise ExportError("%s: %s: %s" % (rec.describe(), type(e).__name__,
                                          str(e).strip().splitlines()[0]
                                          if str(e).strip() else "")) from e
    finally:
        for h in handles:
            h.remove()
        restore()
        model.train(was_training)

    outputs = []
    if train:
        g = rec.gid(lossv)
        outputs.append(g)
        t = rec.tensors[g]
        if t.producer >= 0:
            t.kind, t.name = "output", "loss"
        t.output = True
    else:
        for i, o in enumerate(tensors_of(out)):
            g = rec.gid(o)
            if g is None or g in outputs:
                continue
            t = rec.tensors[g]
            if t.producer >= 0 and t.kind == "activation":
                t.kind, t.name = "output", "output.%d" % i
            t.output = True
            outputs.append(g)
    grad_of = {}
    for (n, p), gr in zip(plist, grads):
        if gr is None or rec.skip(gr):
            continue
        g = rec.gid(gr)
        t = rec.tensors[g]
        if t.producer >= 0 and t.kind == "activation":
            t.kind, t.name = "gradient", n + ".grad"
        if optimizer is None:
            t.output = True
        grad_of[n] = g
    if optimizer == "adam":
        _add_adam(rec, params, grad_of, elsize)
    if repeat is None:
        repeat = train
    graph = _graph(rec, model, params, mach, weights_home, optimizer_home,
                   mode, optimizer, bf16,
                   name or type(model).__name__,
                   repeat=bool(repeat) and not v1, v2_ops=not v1,
                   capture=_capture)
    if _capture is not None:
        views = {}
        for t in tensors_of((out, lossv, grads)):
            if not rec.skip(t) and rec.gid(t) is not None:
                views.setdefault(rec.gid(t), (tuple(t.shape),
                                              tuple(t.stride()),
                                              t.storage_offset()))
        for n, p in list(params.items()) + list(buffers.items()):
            views.setdefault(rec.gid(p), (tuple(p.shape), tuple(p.stride()),
                                          p.storage_offset()))
        _capture.update(views=views, rec=rec, model=model, args=args,
                        kwargs=kwargs,
                        params=params, buffers=buffers, grad_of=grad_of,
                        input_gids=input_gids, outputs=outputs,
                        train=train, optimizer=optimizer)
    if path is not None:
        write(graph, path)
    return graph


def _first(out):
    ts = tensors_of(out)
    if not ts:
        raise ExportError("loss: the model returned no tensor; pass loss=")
    return ts[0]


def _to_meta(x):
    if isinstance(x, torch.Tensor):
        if x.device.type == "meta":
            return x
        return meta_like(x)
    if isinstance(x, tuple):
        return tuple(_to_meta(v) for v in x)
    if isinstance(x, list):
        return [_to_meta(v) for v in x]
    if isinstance(x, dict):
        return {k: _to_meta(v) for k, v in x.items()}
    return x


def _param_layers(rec):
    """Each weight's layer: that of the first forward op using it."""
    layer = {}
    for o in rec.ops:
        for g in o.inputs + o.updates:
            if rec.tensors[g].kind == "weight" and g not in layer:
                layer[g] = o.layer
    return layer


def _add_adam(rec, params, grad_of, elsize):
    """One fused Adam op a parameter with a gradient, in parameter order:
    reads the gradient, updates the weight and its two moments."""
    from .trace import Op, Tensor
    layer = _param_layers(rec)
    for n, p in params.items():
        if n not in grad_of:
            continue
        w = rec.gid(p)
        wt = rec.tensors[w]
        mv = []
        for suffix in ("exp_avg", "exp_avg_sq"):
            g = len(rec.tensors)
            t = Tensor(g, wt.elems, wt.dtype, "optimizer",
                       name="%s.%s" % (n, suffix))
            rec.tensors.append(t)
            mv.append(g)
        gt = rec.tensors[grad_of[n]]
        o = Op()
        o.name, o.path, o.layer, o.bwd = "adam", n, layer.get(w, 0), False
        o.inputs, o.outputs, o.updates = [grad_of[n]], [], [w] + mv
        o.kind = "optimizer"
        o.call = None
        o.flops = costs.ADAM_FLOPS * p.numel()
        o.bytes = (gt.elems * elsize(gt.dtype) +
                   2 * wt.elems * elsize(wt.dtype) +
                   4 * wt.elems * _real_elsize(wt.dtype))
        rec.ops.append(o)


def _persistent(t):
    return t.kind in ("weight", "optimizer", "other") or t.output


def _graph(rec, model, params, mach, weights_home, optimizer_home, mode,
           optimizer, bf16, name, repeat=False, v2_ops=True, capture=None):
    """Drops dead ops, names what is left, and lays out graph.json:
    version 2 when repeat, when the machine has duplex factors or when an
    op draws random numbers (marked `recomputable: false`, unless v2_ops
    is False), else version 1."""
    T = rec.tensors
    needed = [_persistent(t) for t in T]
    live = [False] * len(rec.ops)
    for k in range(len(rec.ops) - 1, -1, -1):
        o = rec.ops[k]
        if any(needed[g] for g in o.outputs + o.updates):
            live[k] = True
            for g in o.inputs + o.updates:
                needed[g] = True
    ops = [o for k, o in enumerate(rec.ops) if live[k]]
    used = set()
    for o in ops:
        used.update(o.inputs, o.outputs, o.updates)
    keep = [t for t in T if t.gid in used or t.kind in ("weight", "other")]

    ids, opid = {}, {}
    for k, o in enumerate(ops):
        if o.kind == "optimizer":
            i = "adam/" + o.path
        else:
            i = "%s%s/%s#%d" % ("grad:" if o.bwd else "", o.path or "model",
                                o.name, k)
        opid[id(o)] = i
        for j, g in enumerate(o.outputs):
            if T[g].name is None:
                T[g].name = i + (".out" if len(o.outputs) == 1
                                 else ".out%d" % j)
    for t in keep:
        ids[t.gid] = t.name

    real = _real_elsize
    tensors = []
    for t in keep:
        es = real(t.dtype) if t.kind == "optimizer" or not bf16 or \
            not t.dtype.is_floating_point else 2
        d = {"id": t.name, "bytes": t.elems * es, "kind": t.kind}
        if t.producer < 0:
            if t.kind == "weight":
                d["home"] = weights_home
            elif t.kind == "optimizer":
                d["home"] = optimizer_home
            else:
                d["home"] = "device"
        if t.kind == "other":
            d["persistent"] = True
        if t.output and t.kind != "output":
            d["output"] = True
        tensors.append(d)
    out_ops = []
    v2 = repeat or uses_v2(mach)
    for o in ops:
        d = {"id": opid[id(o)], "kind": o.kind,
             "inputs": [ids[g] for g in o.inputs]}
        if o.outputs:
            d["outputs"] = [ids[g] for g in o.outputs]
        if o.updates:
            d["updates"] = [ids[g] for g in o.updates]
        d["flops"] = int(o.flops)
        d["bytes_accessed"] = int(o.bytes)
        d["layer"] = int(o.layer)
        if v2_ops and costs.draws_random(o.name):
            d["recomputable"] = False
            v2 = True
        out_ops.append(d)
    nparams = sum(p.numel() for p in params.values())
    meta = {"source": "hoffopt_torch", "torch": torch.__version__,
            "model": type(model).__name__, "mode": mode,
            "optimizer": optimizer or "none", "bf16": bool(bf16),
            "params": int(nparams), "layers": len(rec.rank),
            "ops_traced": len(rec.ops), "ops_dropped":
            len(rec.ops) - len(ops)}
    if capture is not None:
        capture.update(ops=ops, ids=ids, opid=opid)
    g = {"format": "hoffopt.graph", "version": 2 if v2 else 1, "name": name}
    if repeat:
        g["repeat"] = True
    g.update({"meta": meta, "machine": mach, "tensors": tensors,
              "ops": out_ops})
    return g


def write(graph, path):
    """Writes graph (a dict) to path by outfile.py's rules: a regular file
    through a temporary file renamed into place (a reader never sees half
    a file; the mode is kept), a device or FIFO in place, a symlink
    followed. Raises OutputError (one line) when it cannot."""
    def fill(f):
        head = {k: graph[k] for k in graph if k not in ("tensors", "ops")}
        s = json.dumps(head, separators=(", ", ": "))
        f.write(s[:-1] + ",\n")
        for key in ("tensors", "ops"):
            f.write(' "%s": [\n' % key)
            items = graph[key]
            for i, x in enumerate(items):
                f.write("  " + json.dumps(x, separators=(", ", ": ")) +
                        (",\n" if i + 1 < len(items) else "\n"))
            f.write(" ]" + (",\n" if key == "tensors" else "\n"))
        f.write("}\n")
    write_file(path, fill)
