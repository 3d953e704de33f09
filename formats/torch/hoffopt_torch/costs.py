"""costs.py: `flops`, `bytes_accessed` and a kind label for one aten op.

The rule (README.md, "Op costs"):
- bytes_accessed: the bytes of every distinct tensor argument as the op
  sees it (a view counts its own elements, not its storage's), plus the
  bytes of every new result, plus the bytes of every argument written in
  place (read once, written once). Gathers (embedding, index_select) read
  the indices and the rows they return, not the whole table.
- flops, exact for products: mm 2MKN; addmm 2MKN + MN; bmm 2BMKN;
  baddbmm 2BMKN + BMN; convolution 2 * N * prod(output spatial) *
  numel(weight) (input spatial when transposed) + numel(output) with a
  bias; convolution_backward the same product once for grad_input and once
  for grad_weight, numel(grad_output) for grad_bias, as output_mask asks.
- softmax and log_softmax, forward and backward: 5 flops an element of the
  input; layer, batch and group norm, forward and backward: 8.
- everything else: elements touched, the element count of the largest
  tensor argument or result.
- Adam's update (added by the exporter): 12 flops a parameter; it reads the
  gradient and reads and writes the weight and both moments.
Element sizes follow the `elsize` function the exporter passes (real dtype,
or 2 for floating tensors with bf16=True).
"""

_SOFTMAX = {"_softmax", "_log_softmax", "_softmax_backward_data",
            "_log_softmax_backward_data"}
_NORM = {"native_layer_norm", "native_layer_norm_backward",
         "native_batch_norm", "native_batch_norm_backward",
         "_native_batch_norm_legit", "_native_batch_norm_legit_functional",
         "_native_batch_norm_legit_no_training", "_batch_norm_with_update",
         "_batch_norm_no_update", "batch_norm_backward", "native_group_norm",
         "native_group_norm_backward", "_batch_norm_impl_index",
         "_batch_norm_impl_index_backward"}
_GATHER = {"embedding", "index_select"}
_CONV = {"convolution", "_convolution", "convolution_backward",
         "mkldnn_convolution", "thnn_conv2d", "_slow_conv2d_forward"}
_KIND = {"mm": "matmul", "addmm": "matmul", "bmm": "matmul",
         "baddbmm": "matmul", "embedding": "embedding",
         "embedding_dense_backward": "embedding",
         "max_pool2d_with_indices": "pool",
         "max_pool2d_with_indices_backward": "pool",
         "avg_pool2d": "pool", "avg_pool2d_backward": "pool",
         "_adaptive_avg_pool2d": "pool",
         "_adaptive_avg_pool2d_backward": "pool"}
# aten ops that draw random numbers: re-running one gives other bytes, so
# the exporter marks it `recomputable: false` (FORMAT v2)
RANDOM = {"bernoulli", "bernoulli_", "native_dropout", "_fused_dropout",
          "dropout", "dropout_", "feature_dropout", "alpha_dropout",
          "feature_alpha_dropout", "multinomial", "normal", "normal_",
          "uniform_", "exponential_", "geometric_", "cauchy_", "log_normal_",
          "random_", "randperm", "rrelu_with_noise", "rrelu_with_noise_",
          "poisson", "binomial", "_standard_gamma", "_sample_dirichlet"}
SOFTMAX_FLOPS = 5
NORM_FLOPS = 8
ADAM_FLOPS = 12


def _prod(xs):
    p = 1
    for x in xs:
        p *= int(x)
    return p


def kind(name):
    """A short label for aten op `name` (no namespace, no overload)."""
    if name in _CONV:
        return "conv"
    if name in _SOFTMAX:
        return "softmax"
    if name in _NORM:
        return "norm"
    return _KIND.get(name, "elementwise")


def draws_random(name):
    """True when aten op `name` draws random numbers (rand, randn,
    randint and their _like forms, randperm, bernoulli, dropout, ...)."""
    return name in RANDOM or name.startswith("rand")


def flops(name, args, tensors_in, tensors_out):
    """Flops of aten op `name` by the rule above. args: the op's positional
    arguments (tensors and scalars), tensors_in / tensors_out: its tensor
    arguments and results."""
    if name == "mm":
        a, b = args[0], args[1]
        return 2 * a.shape[0] * a.shape[1] * b.shape[1]
    if name == "addmm":
        a, b = args[1], args[2]
        m, k, n = a.shape[0], a.shape[1], b.shape[1]
        return 2 * m * k * n + m * n
    if name in ("bmm", "baddbmm"):
        a, b = (args[0], args[1]) if name == "bmm" else (args[1], args[2])
        bs, m, k, n = a.shape[0], a.shape[1], a.shape[2], b.shape[2]
        return 2 * bs * m * k * n + (bs * m * n if name == "baddbmm" else 0)
    if name in ("convolution", "_convolution"):
        x, w, bias, out = args[0], args[1], args[2], tensors_out[0]
        transposed = bool(args[6])
        side = x if transposed else out
        f = 2 * side.shape[0] * _prod(side.shape[2:]) * w.numel()
        return f + (out.numel() if bias is not None else 0)
    if name == "convolution_backward":
        gout, x, w = args[0], args[1], args[2]
        transposed, mask = bool(args[7]), args[10]
        side = x if transposed else gout
        base = 2 * side.shape[0] * _prod(side.shape[2:]) * w.numel()
        return (base * bool(mask[0]) + base * bool(mask[1]) +
                gout.numel() * bool(mask[2]))
    big = max([t.numel() for t in tensors_in + tensors_out] or [0])
    if name in _SOFTMAX:
        return SOFTMAX_FLOPS * tensors_in[0].numel()
    if name in _NORM:
        return NORM_FLOPS * tensors_in[0].numel()
    return big


def bytes_accessed(name, reads, news, writes, elsize):
    """Bytes by the rule above: reads (distinct tensor arguments), news
    (new results), writes (arguments written in place)."""
    def nb(t):
        return t.numel() * elsize(t.dtype)
    if name in _GATHER and news:
        # the indices and the gathered rows, read; the rows, written
        return nb(reads[-1]) + 2 * sum(nb(t) for t in news)
    return (sum(nb(t) for t in reads) + sum(nb(t) for t in news) +
            sum(nb(t) for t in writes))
