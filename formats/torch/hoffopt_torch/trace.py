"""trace.py: runs a model on the meta device under a TorchDispatchMode and
records its aten ops as a graph of storages.

Invariants:
- One graph tensor per storage. An op result whose storage is already
  known (a view, an alias, the result of an in-place op) makes no tensor;
  an argument the op's schema marks as written (`Tensor(a!)`) is an update.
- Every tensor object the trace meets is kept alive until the trace ends,
  so no storage is freed and no storage key is ever reused.
- An op with neither a new result nor a written argument (views, detach,
  asserts) records nothing.
- A tensor autograd saves is read by the first op of the backward node
  that saved it (PyTorch holds it that long, read or not).
- Forward ops take the module path on top of the module stack; backward
  ops take the path and layer of the forward op whose autograd node they
  belong to: a hook on each forward result fires just before its node runs.
Nothing here allocates weight memory: parameters, buffers and inputs are
swapped for meta tensors of the same shape, strides and dtype, and factory
calls without a device go to meta.
"""
import collections
import functools
import warnings

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten, tree_map

from . import costs

_FACTORIES = {getattr(torch, n) for n in (
    "empty", "zeros", "ones", "full", "arange", "range", "linspace",
    "logspace", "eye", "rand", "randn", "randint", "randperm", "tensor",
    "as_tensor", "empty_strided", "scalar_tensor", "normal", "tril_indices",
    "triu_indices", "zeros_like", "ones_like", "empty_like", "full_like",
    "rand_like", "randn_like", "randint_like") if hasattr(torch, n)}
_CONTAINERS = (torch.nn.ModuleList, torch.nn.Sequential, torch.nn.ModuleDict)


_NONE = object()


def storage_of(t):
    """t's storage: untyped (torch 2's Tensor.untyped_storage) where torch
    has it, else the typed one of torch 1.13 (its _cdata and nbytes are
    the same StorageImpl's)."""
    f = getattr(t, "untyped_storage", None)
    return f() if f is not None else t.storage()


def storage_elems(t):
    """Elements of t's dtype that t's whole storage holds."""
    if hasattr(t, "untyped_storage"):
        return t.untyped_storage().nbytes() // t.element_size()
    return t.storage().size()


def _like(t):
    return torch.empty_like(t)


def _conv_bwd(args, kwargs):
    gout, x, w, bias_sizes, mask = args[0], args[1], args[2], args[3], \
        args[10]
    return (_like(x) if mask[0] else None, _like(w) if mask[1] else None,
            torch.empty(bias_sizes, dtype=gout.dtype, device=gout.device)
            if mask[2] and bias_sizes is not None else None)


# Results of ops torch 1.13 has no meta kernel for: their shapes only.
_SHAPES = {
    "convolution_backward": _conv_bwd,
    "max_pool2d_with_indices_backward": lambda a, k: _like(a[1]),
    "avg_pool2d_backward": lambda a, k: _like(a[1]),
    "_adaptive_avg_pool2d_backward": lambda a, k: _like(a[1]),
}


# Arguments ops write without saying so in their torch 1.13 schema:
# batch norm in training updates its running statistics.
_HIDDEN_WRITES = {
    "native_batch_norm": lambda a: [a[3], a[4]] if a[5] else [],
}


def _fallback(func, name, args, kwargs):
    """Meta results of an op without a meta kernel: from the table above,
    else from torch._decomp's decomposition (run unrecorded: it only gives
    the shapes of the one op recorded); _NONE when neither exists."""
    if name in _SHAPES:
        return _SHAPES[name](args, kwargs)
    try:
        from torch._decomp import decomposition_table
    except ImportError:
        return _NONE
    dec = decomposition_table.get(func)
    if dec is None:
        return _NONE
    return dec(*args, **kwargs)


class ExportError(Exception):
    """A model the exporter cannot turn into a faithful graph."""


def tensors_of(x):
    return [t for t in tree_flatten(x)[0] if isinstance(t, torch.Tensor)]


def meta_like(t):
    """A meta tensor of t's shape, strides and dtype (no memory)."""
    return torch.empty_strided(tuple(t.shape), tuple(t.stride()),
                               dtype=t.dtype, device="meta")


class MetaDevice(TorchFunctionMode):
    """Routes factory calls to the meta device (torch 1.13 has no
    torch.device context manager) and, when `on_result` is set, calls it
    with every torch function's results (the tracer hooks them)."""

    def __init__(self, on_result=None):
        super().__init__()
        self.on_result = on_result

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if func in _FACTORIES:
            if "device" in kwargs or not func.__name__.endswith("_like"):
                kwargs["device"] = "meta"
        elif func is torch.Tensor.to:
            dev, dtype, _, fmt = torch._C._nn._parse_to(*args[1:], **kwargs)
            if dev is not None and dev.type != "meta":
                kw = {"dtype": dtype} if dtype is not None else {}
                if fmt is not None:
                    kw["memory_format"] = fmt
                return args[0].to(**kw) if kw else args[0]
        elif func in (torch.Tensor.cuda, torch.Tensor.cpu):
            return args[0]
        out = func(*args, **kwargs)
        if self.on_result is not None:
            self.on_result(out)
        return out


def _no_init(tensor, *args, **kwargs):
    return tensor


class NoInit:
    """Makes every in-place initializer of torch.nn.init a no-op."""

    def __enter__(self):
        init = torch.nn.init
        self.saved = {n: getattr(init, n) for n in dir(init)
                      if n.endswith("_") and not n.startswith("_")
                      and callable(getattr(init, n))}
        for n in self.saved:
            setattr(init, n, _no_init)
        return self

    def __exit__(self, *exc):
        for n, f in self.saved.items():
            setattr(torch.nn.init, n, f)
        return False


def build_on_meta(factory):
    """Calls factory() with factories routed to meta and nn.init off. A
    builder that computes with tensor values (torchvision's regnet sizes
    its stages with tensor arithmetic) fails on meta: it is built again on
    the CPU, weights allocated but not initialised, with a warning."""
    try:
        with NoInit(), MetaDevice():
            return factory()
    except NotImplementedError as e:
        if "meta" not in str(e).lower():
            raise
        warnings.warn("hoffopt_torch: the model's builder reads tensor "
                      "values (%s); built on the CPU instead"
                      % str(e).strip().splitlines()[0])
        with NoInit():
            return factory()


def find_blocks(model):
    """Module paths of the repeated blocks: the children of a ModuleList,
    Sequential or ModuleDict that share their class with a sibling; the
    outermost such children win (a block inside a block is not one)."""
    blocks = set()

    def visit(m, prefix):
        kids = list(m.named_children())
        same = collections.Counter(type(c) for _, c in kids)
        for n, c in kids:
            path = prefix + n
            if isinstance(m, _CONTAINERS) and same[type(c)] >= 2:
                blocks.add(path)
            else:
                visit(c, path + ".")

    visit(model, "")
    return blocks


class Tensor:
    __slots__ = ("gid", "name", "elems", "dtype", "kind", "producer",
                 "output")

    def __init__(self, gid, elems, dtype, kind, producer=-1, name=None):
        self.gid, self.elems, self.dtype, self.kind = gid, elems, dtype, kind
        self.producer, self.name = producer, name
        self.output = False  # a result of the graph


class Op:
    __slots__ = ("name", "path", "layer", "bwd", "inputs", "outputs",
                 "updates", "flops", "bytes", "kind", "call")


class Ref:
    """A tensor argument in a recorded call: a view of graph tensor `gid`'s
    storage (size, stride, storage offset, dtype)."""
    __slots__ = ("gid", "size", "stride", "offset", "dtype")

    def __init__(self, t, gid):
        self.gid, self.size, self.stride = gid, tuple(t.shape), \
            tuple(t.stride())
        self.offset, self.dtype = t.storage_offset(), t.dtype


class Const:
    """A tensor argument no graph tensor holds: a Python number wrapped as
    a CPU scalar (its value, kept), or an empty tensor (its shape)."""
    __slots__ = ("value",)

    def __init__(self, t):
        if t.device.type == "meta":
            t = torch.empty_strided(tuple(t.shape), tuple(t.stride()),
                                    dtype=t.dtype)
        self.value = t.detach().clone()


class Call:
    """A recorded aten call: func, its arguments with tensors as Ref or
    Const, and its results in tensors_of order, each ("new", gid),
    ("alias", gid) or None (an empty or wrapped result)."""
    __slots__ = ("func", "args", "kwargs", "results")


class Recorder(TorchDispatchMode):
    """The trace: tensors (one a storage) and ops, in execution order."""

    def __init__(self, model, elsize):
        super().__init__()
        self.elsize = elsize
        self.tensors = []
        self.ops = []
        self.by_storage = {}
        self.keep = []
        self.paths = {id(m): p for p, m in model.named_modules()}
        self.types = {p: type(m).__name__ for p, m in model.named_modules()}
        self.blocks = find_blocks(model)
        self.rank = {}
        self.stack = []
        self.bwd = False
        self.bwd_at = ("", 0)
        self.device = "meta"
        self.error = None
        self.pending = []   # saved tensors unpacked, for the next op
        self.calls = False  # keep each op's Call (for the replay)

    # ---- where we are -------------------------------------------------
    def where(self):
        """(module path, layer) of the op about to be recorded."""
        if self.bwd:
            return self.bwd_at
        layer = None
        for p in self.stack:
            if p in self.rank:
                layer = self.rank[p]
                break
        if layer is None:
            layer = len(self.rank)
        return (self.stack[-1] if self.stack else "", layer)

    def describe(self):
        path, _ = self.where()
        if not path:
            return "the model's top level" if not self.bwd else \
                "the backward of the top level"
        s = "module '%s' (%s)" % (path, self.types.get(path, "?"))
        return ("the backward of " + s) if self.bwd else s

    def pre_hook(self, module, inputs):
        path = self.paths.get(id(module))
        if path is None:
            return
        if path in self.blocks and path not in self.rank:
            self.rank[path] = len(self.rank)
        self.stack.append(path)

    def post_hook(self, module, inputs, output):
        if self.paths.get(id(module)) is not None and self.stack:
            self.stack.pop()

    def pack(self, t):
        return t

    def unpack(self, t):
        """A saved tensor, unpacked as its autograd node starts: PyTorch
        holds it until the node has run, even when no kernel of the node
        reads it (MeanBackward keeps its input for the size only), so the
        node's next op reads it."""
        if isinstance(t, torch.Tensor) and not self.skip(t) and \
                self.known(t):
            self.pending.append(self.gid(t))
        return t

    def _enter_bwd(self, at, grad):
        self.bwd_at = at
        return None

    def hook_results(self, out):
        """Called with each forward torch function's results: hooks those
        with an autograd node so that its backward ops get this place."""
        if self.bwd or not torch.is_grad_enabled():
            return
        at = self.where()
        for t in tensors_of(out):
            if t.requires_grad and t.grad_fn is not None:
                t.register_hook(functools.partial(self._enter_bwd, at))

    # ---- tensors --------------------------------------------------------
    def _elems(self, t):
        return storage_elems(t)

    def skip(self, t):
        """A Python scalar wrapped as a CPU tensor, or an empty storage."""
        if t.device.type != self.device and t.dim() == 0:
            return True
        return self._elems(t) == 0

    def add(self, t, kind, producer=-1, name=None):
        """The graph tensor of t's storage, made if new."""
        key = storage_of(t)._cdata
        g = self.by_storage.get(key)
        if g is None:
            g = len(self.tensors)
            self.tensors.append(Tensor(g, self._elems(t), t.dtype, kind,
                                       producer, name))
            self.by_storage[key] = g
        self.keep.append(t)
        return g

    def known(self, t):
        return storage_of(t)._cdata in self.by_storage

    def gid(self, t):
        return self.by_storage.get(storage_of(t)._cdata)

    # ---- ops ------------------------------------------------------------
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = func._schema.name.split("::")[-1]
        if name in ("_local_scalar_dense", "is_nonzero", "item"):
            self.error = ExportError(
                "%s, op aten.%s: data-dependent control flow (a tensor's "
                "value read by Python: .item(), bool(), int(), if tensor); "
                "the trace sees shapes only" % (self.describe(), name))
            raise self.error
        try:
            out = func(*args, **kwargs)
        except NotImplementedError as e:
            out = _fallback(func, name, args, kwargs)
            if out is _NONE:
                self.error = self._cannot(func, e)
                raise self.error from e
        except Exception as e:
            if self.error is None:
                self.error = self._cannot(func, e)
            raise self.error from e
        if isinstance(out, (bool, int, float)) and args and \
                isinstance(args[0], torch.Tensor):
            # a Python scalar wrapped as a tensor comes back unwrapped
            # (autograd detaches such a one when it saves it)
            out = torch.tensor(out, dtype=args[0].dtype)
        try:
            self.record(func, name, args, kwargs, out)
        except ExportError as e:
            self.error = e
            raise
        return out

    def _cannot(self, func, e):
        msg = str(e).strip().splitlines()[0] if str(e).strip() else \
            type(e).__name__
        return ExportError("%s, op %s: the tracer cannot run it on the meta "
                           "device (%s)" % (self.describe(), func, msg))

    def record(self, func, name, args, kwargs, out):
        written = []
        if name in _HIDDEN_WRITES:
            written += [t for t in _HIDDEN_WRITES[name](args)
                        if isinstance(t, torch.Tensor) and not self.skip(t)]
        schema = func._schema
        for i, a in enumerate(schema.arguments):
            if a.alias_info is not None and a.alias_info.is_write:
                v = args[i] if i < len(args) else kwargs.get(a.name)
                written += [t for t in tensors_of(v) if not self.skip(t)]
        reads = []
        seen = set()
        for t in tensors_of((args, kwargs)):
            if id(t) not in seen and not self.skip(t):
                seen.add(id(t))
                reads.append(t)
        k = len(self.ops)
        ins = []
        for t in reads:
            if not self.known(t):
                # a tensor no op made and that is no parameter, buffer or
                # input: a constant captured by the model
                self.add(t, "input", name="const.%d" % len(self.tensors))
            ins.append(self.gid(t))
        upd = []
        for t in written:
            g = self.gid(t)
            if g not in upd:
                upd.append(g)
        news, outs = [], []
        for t in tensors_of(out):
            if self.skip(t) or self.known(t):
                continue  # a view or alias of a known storage, or empty
            outs.append(self.add(t, "activation", producer=k))
            news.append(t)
        for t in tensors_of(out):
            self.keep.append(t)
        if not outs and not upd:
            return
        if self.bwd and self.pending:
            ins += [g for g in self.pending if g not in outs]
            self.pending = []
        o = Op()
        o.name = name
        o.path, o.layer = self.where()
        o.bwd = self.bwd
        o.outputs = outs
        o.updates = upd
        o.inputs = [g for i, g in enumerate(ins)
                    if g not in upd and g not in ins[:i]]
        o.kind = costs.kind(name)
        o.call = _call_of(self, func, args, kwargs, out, outs) \
            if self.calls else None
        o.flops = int(costs.flops(name, args, reads, news))
        o.bytes = int(costs.bytes_accessed(name, reads, news, written,
                                           self.elsize))
        self.ops.append(o)


def _call_of(rec, func, args, kwargs, out, outs):
    """The Call of one recorded op (Recorder.calls on)."""
    def enc(x):
        if not isinstance(x, torch.Tensor):
            return x
        if rec.skip(x):
            return Const(x)
        return Ref(x, rec.gid(x))
    c = Call()
    c.func = func
    c.args, c.kwargs = tree_map(enc, (tuple(args), dict(kwargs)))
    c.results = []
    for t in tensors_of(out):
        if rec.skip(t):
            c.results.append(None)
        else:
            g = rec.gid(t)
            c.results.append(("new" if g in outs else "alias", g))
    return c


def swap_to_meta(model):
    """Replaces every parameter and buffer of model with a meta copy (one
    copy for a tied one). Returns (restore, params, buffers): restore()
    puts the originals back; params and buffers map each name (the first
    name of a tied one, in named_parameters' order) to its meta copy."""
    pnames = [(n, id(p)) for n, p in model.named_parameters()]
    bnames = [(n, id(b)) for n, b in model.named_buffers()]
    by_id, saved = {}, []
    for m in model.modules():
        for table in (m._parameters, m._buffers):
            for n, v in list(table.items()):
                if v is None:
                    continue
                if id(v) not in by_id:
                    meta = meta_like(v)
                    if isinstance(v, torch.nn.Parameter):
                        meta = torch.nn.Parameter(meta, v.requires_grad)
                    by_id[id(v)] = meta
                saved.append((table, n, v))
                table[n] = by_id[id(v)]

    def restore():
        for table, n, v in reversed(saved):
            table[n] = v
    return (restore, {n: by_id[i] for n, i in pnames},
            {n: by_id[i] for n, i in bnames})
