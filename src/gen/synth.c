/* synth.c: synthetic transformer-shaped graphs of an exact op count.
 * The graph is streamed op by op and cut at o->nops: every op only reads
 * tensors that earlier ops produced or graph inputs, so any prefix is a
 * valid graph; the last op's outputs become graph outputs. Weights, KV
 * blocks and optimizer state are created at their first use, so a cut
 * never leaves tensors that nothing touches.
 * infer: decode steps of BATCH sequences; per layer norm, qkv, kv_append
 *   (updates the current KV block in place), attention over the blocks so
 *   far, wo, norm, up, down; then head and sample. The KV cache is a pool
 *   of NBLK blocks per layer reused by each new sequence of CTX tokens.
 * train: iterations of a microbatch of ~TOKENS tokens: forward (7 ops a
 *   layer, all activations stashed for backward), fused head + loss,
 *   backward (7 ops a layer, weight gradients kept to the end), embedding
 *   backward, then one Adam op a layer that updates the weights and their
 *   moments (kind optimizer, homed on host) in place.
 * Deterministic: one splitmix64 stream drawn in a fixed order. */
#include "synth.h"

#include "analysis.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched.h"

/* Model shape: bf16 weights and activations, fp32 optimizer moments. */
#define DMODEL 2048
#define DKV 512     /* grouped-query K and V width */
#define FFN 8192    /* before per-layer jitter */
#define VOCAB 32000
#define DT 2        /* bytes per element */
#define BATCH 32    /* sequences decoded together */
#define CTX 2048    /* tokens per sequence */
#define BLOCK 128   /* tokens per KV block */
#define NBLK (CTX / BLOCK)
#define TOKENS 4096 /* training microbatch, before jitter */
#define SEQ 2048    /* training sequence length (attention span) */

#define FLOPS_PER_S 7e14
#define MEM_BPS 3e12
#define LAUNCH_S 3e-6
#define ROUND_BYTES ((int64_t)256 << 20)
#define PRODUCED (-2) /* "home" of a tensor an op produces: not written */

enum { W_LN1, W_QKV, W_WO, W_LN2, W_UP, W_DOWN, NW };        /* per layer */
enum { M_EMB, M_LNF, M_HEAD, NM };                           /* per model */
enum { A_IN, A_X1, A_QKV, A_ATT, A_H2, A_X2, A_U, NA };      /* stash */
static const char *const wname[NW] = {"ln1", "wqkv", "wo", "ln2", "w1", "w2"};
static const char *const mname[NM] = {"emb", "lnf", "head"};

enum {
	K_EMBED, K_NORM, K_MATMUL, K_KV, K_ATTN, K_SAMPLE, K_LOSS,
	K_NORM_BWD, K_MATMUL_BWD, K_ATTN_BWD, K_EMBED_BWD, K_OPT, NOPKINDS
};
static const char *const opkind[NOPKINDS] = {
	"embed", "norm", "matmul", "kv_append", "attention", "sample",
	"loss", "norm_bwd", "matmul_bwd", "attention_bwd", "embed_bwd",
	"optimizer",
};

typedef struct gen {
	hoff_graph *g;
	const hoff_synth_opts *o;
	hoff_err *e;
	hoff_status st;   /* first failure; every later call does nothing */
	uint64_t rng;     /* splitmix64 state */
	int32_t home;     /* home of the weights */
	int32_t host;     /* tier "host" */
	bool last;        /* the op being built is the last one */
	const char *kind[NOPKINDS]; /* interned op kinds */
	int64_t *ffn;     /* (layers) FFN width */
	int32_t *w;       /* (layers, NW) weight ids, HOFF_NONE until used */
	int32_t mw[NM];   /* model weights */
	int32_t *kv;      /* (layers, NBLK) KV blocks */
	int32_t *adam;    /* (layers + 1, 2) moments; row `layers`: model */
	int32_t *act;     /* (layers + 1, NA) this iteration's stash */
	int32_t *grad;    /* (layers + 1, NW) this iteration's weight grads */
	int32_t tok;      /* infer: the tokens the next step embeds */
	char name[96];
} gen;

static uint64_t rnd(gen *s)
{
	uint64_t z = (s->rng += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

/* x scaled by a factor drawn uniformly from [0.9, 1.1). */
static double jitter(gen *s, double x)
{
	double u = (double)(rnd(s) >> 11) * 0x1p-53;
	return x * (0.9 + 0.2 * u);
}

static void vname(gen *s, const char *fmt, va_list ap)
{
	int n = vsnprintf(s->name, sizeof s->name, fmt, ap);
	if (n < 0 || (size_t)n >= sizeof s->name)
		s->st = hoff_seterr(s->e, HOFF_EINPUT, "synth: name too long");
}

/* Starts the next op; false when the graph has all its ops or failed. */
static bool op_begin(gen *s, int kind, int64_t layer, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 4, 5)))
#endif
	;
static bool op_begin(gen *s, int kind, int64_t layer, const char *fmt, ...)
{
	if (s->st != HOFF_OK || s->g->nops >= s->o->nops)
		return false;
	va_list ap;
	va_start(ap, fmt);
	vname(s, fmt, ap);
	va_end(ap);
	if (s->st != HOFF_OK)
		return false;
	int32_t k = hoff_graph_add_op(s->g, s->name, s->e);
	if (k == HOFF_NONE) {
		s->st = HOFF_ENOMEM;
		return false;
	}
	hoff_op *op = &s->g->op[k];
	op->kind = s->kind[kind];
	op->layer = layer;
	op->flags |= HOFF_O_HAS_LAYER;
	s->last = s->g->nops == s->o->nops;
	return true;
}

/* Adds a tensor; home is a tier, HOFF_DEVICE, or PRODUCED. */
static int32_t tensor(gen *s, int64_t bytes, int kind, int32_t home,
		      const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 5, 6)))
#endif
	;
static int32_t tensor(gen *s, int64_t bytes, int kind, int32_t home,
		      const char *fmt, ...)
{
	if (s->st != HOFF_OK)
		return HOFF_NONE;
	va_list ap;
	va_start(ap, fmt);
	vname(s, fmt, ap);
	va_end(ap);
	if (s->st != HOFF_OK)
		return HOFF_NONE;
	int32_t t = hoff_graph_add_tensor(s->g, s->name, bytes, s->e);
	if (t == HOFF_NONE) {
		s->st = HOFF_ENOMEM;
		return HOFF_NONE;
	}
	hoff_tensor *x = &s->g->tensor[t];
	x->kind = (uint8_t)kind;
	x->flags |= HOFF_T_HAS_KIND;
	if (home != PRODUCED) {
		x->home = home;
		x->flags |= HOFF_T_HAS_HOME;
	}
	hoff_tensor_defaults(x);
	return t;
}

static void use(gen *s, hoff_use u, int32_t t)
{
	if (s->st == HOFF_OK && t != HOFF_NONE)
		s->st = hoff_graph_op_use(s->g, u, t, s->e);
}

/* A new tensor produced by the current op (a graph output if it is the
 * last op). */
static int32_t out(gen *s, int64_t bytes, int kind, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 4, 5)))
#endif
	;
static int32_t out(gen *s, int64_t bytes, int kind, const char *fmt, ...)
{
	if (s->st != HOFF_OK)
		return HOFF_NONE;
	va_list ap;
	va_start(ap, fmt);
	vname(s, fmt, ap);
	va_end(ap);
	char name[sizeof s->name];
	memcpy(name, s->name, sizeof name);
	int32_t t = tensor(s, bytes, s->last ? HOFF_KIND_OUTPUT : kind,
			   PRODUCED, "%s", name);
	use(s, HOFF_USE_OUT, t);
	return t;
}

static hoff_op *cur(gen *s) { return &s->g->op[s->g->nops - 1]; }

/* Roofline cost of the current op. */
static void roof(gen *s, double flops, double bytes)
{
	hoff_op *op = cur(s);
	op->flops = flops;
	op->bytes_accessed = bytes;
	op->flags |= HOFF_O_HAS_BYTES_ACCESSED;
	if (flops > 0)
		op->flags |= HOFF_O_HAS_FLOPS;
}

/* Measured-looking time of the current op: memory time of `bytes` at 70%
 * of peak bandwidth plus a launch, jittered. */
static void timed(gen *s, double bytes)
{
	hoff_op *op = cur(s);
	op->time_s = jitter(s, bytes / (0.7 * MEM_BPS) + LAUNCH_S);
	op->flags |= HOFF_O_HAS_TIME;
}

/* Measured-looking time of a compute-bound kernel at `eff` of peak. */
static void timed_flops(gen *s, double flops, double eff)
{
	hoff_op *op = cur(s);
	op->time_s = jitter(s, flops / (eff * FLOPS_PER_S) + LAUNCH_S);
	op->flags |= HOFF_O_HAS_TIME;
}

static void workspace(gen *s, int64_t bytes)
{
	hoff_op *op = cur(s);
	op->workspace_bytes = bytes;
	op->flags |= HOFF_O_HAS_WORKSPACE;
}

static int64_t wbytes(const gen *s, int32_t l, int w)
{
	switch (w) {
	case W_LN1:
	case W_LN2:
		return (int64_t)DMODEL * DT;
	case W_QKV:
		return (int64_t)DMODEL * (DMODEL + 2 * DKV) * DT;
	case W_WO:
		return (int64_t)DMODEL * DMODEL * DT;
	default:
		return (int64_t)DMODEL * s->ffn[l] * DT;
	}
}

static int64_t mbytes(int m)
{
	return m == M_LNF ? (int64_t)DMODEL * DT : (int64_t)VOCAB * DMODEL * DT;
}

/* Weight w of layer l, created at its first use. */
static int32_t weight(gen *s, int32_t l, int w)
{
	int32_t *id = &s->w[(size_t)l * NW + (size_t)w];
	if (*id == HOFF_NONE)
		*id = tensor(s, wbytes(s, l, w), HOFF_KIND_WEIGHT, s->home,
			     "l%d.%s", (int)l, wname[w]);
	return *id;
}

static int32_t mweight(gen *s, int m)
{
	if (s->mw[m] == HOFF_NONE)
		s->mw[m] = tensor(s, mbytes(m), HOFF_KIND_WEIGHT, s->home, "%s",
				  mname[m]);
	return s->mw[m];
}

static int32_t kvblock(gen *s, int32_t l, int64_t b)
{
	int32_t *id = &s->kv[(size_t)l * NBLK + (size_t)b];
	if (*id == HOFF_NONE)
		*id = tensor(s, (int64_t)2 * BATCH * BLOCK * DKV * DT,
			     HOFF_KIND_KV, HOFF_DEVICE, "l%d.kv%d", (int)l,
			     (int)b);
	return *id;
}

/* Adam moment j (0: m, 1: v) of layer l (l == layers: model weights). */
static int32_t moment(gen *s, int32_t l, int j)
{
	int32_t L = s->o->layers;
	int32_t *id = &s->adam[(size_t)l * 2 + (size_t)j];
	if (*id == HOFF_NONE) {
		int64_t params = 0;
		for (int w = 0; w < (l < L ? NW : NM); w++)
			params += (l < L ? wbytes(s, l, w) : mbytes(w)) / DT;
		if (l < L)
			*id = tensor(s, params * 4, HOFF_KIND_OPTIMIZER,
				     s->host, "l%d.adam_%c", (int)l,
				     j ? 'v' : 'm');
		else
			*id = tensor(s, params * 4, HOFF_KIND_OPTIMIZER,
				     s->host, "model.adam_%c", j ? 'v' : 'm');
	}
	return *id;
}

/* One decode step of every layer; false once the graph is complete. */
static bool infer_step(gen *s, long long st)
{
	const int64_t T = BATCH, act = T * DMODEL * DT;
	const int64_t qkvb = T * (DMODEL + 2 * DKV) * DT;
	const int64_t kvb = (int64_t)2 * BATCH * BLOCK * DKV * DT;
	const int64_t pos = st % CTX, blk = pos / BLOCK;
	const int32_t L = s->o->layers;

	if (!op_begin(s, K_EMBED, 0, "s%lld.embed", st))
		return false;
	if (s->tok == HOFF_NONE)
		s->tok = tensor(s, T * 4, HOFF_KIND_INPUT, HOFF_DEVICE, "tok0");
	use(s, HOFF_USE_IN, s->tok);
	use(s, HOFF_USE_IN, mweight(s, M_EMB));
	roof(s, 0, 2.0 * (double)act);
	int32_t h = out(s, act, HOFF_KIND_ACTIVATION, "s%lld.h0", st);

	for (int32_t l = 0; l < L; l++) {
		int64_t ffn = s->ffn[l];
		if (!op_begin(s, K_NORM, l, "s%lld.l%d.norm1", st, (int)l))
			return false;
		use(s, HOFF_USE_IN, h);
		use(s, HOFF_USE_IN, weight(s, l, W_LN1));
		timed(s, 2.0 * (double)act);
		int32_t x1 = out(s, act, HOFF_KIND_ACTIVATION, "s%lld.l%d.x1",
				 st, (int)l);

		if (!op_begin(s, K_MATMUL, l, "s%lld.l%d.qkv", st, (int)l))
			return false;
		use(s, HOFF_USE_IN, x1);
		use(s, HOFF_USE_IN, weight(s, l, W_QKV));
		roof(s, 2.0 * T * DMODEL * (DMODEL + 2 * DKV),
		     (double)(wbytes(s, l, W_QKV) + act + qkvb));
		int32_t qkv = out(s, qkvb, HOFF_KIND_ACTIVATION,
				  "s%lld.l%d.qkv", st, (int)l);

		if (!op_begin(s, K_KV, l, "s%lld.l%d.kv", st, (int)l))
			return false;
		use(s, HOFF_USE_IN, qkv);
		use(s, HOFF_USE_UPD, kvblock(s, l, blk));
		timed(s, 2.0 * (double)(qkvb - act / 2));

		if (!op_begin(s, K_ATTN, l, "s%lld.l%d.attn", st, (int)l))
			return false;
		use(s, HOFF_USE_IN, qkv);
		for (int64_t b = 0; b <= blk; b++)
			use(s, HOFF_USE_IN, kvblock(s, l, b));
		roof(s, 4.0 * T * (double)(pos + 1) * DMODEL,
		     (double)((blk + 1) * kvb + qkvb + act));
		workspace(s, T * 32 * 4 * 64); /* split-K partial sums */
		int32_t att = out(s, act, HOFF_KIND_ACTIVATION,
				  "s%lld.l%d.att", st, (int)l);

		if (!op_begin(s, K_MATMUL, l, "s%lld.l%d.wo", st, (int)l))
			return false;
		use(s, HOFF_USE_IN, att);
		use(s, HOFF_USE_IN, weight(s, l, W_WO));
		use(s, HOFF_USE_IN, h);
		roof(s, 2.0 * T * DMODEL * DMODEL,
		     (double)(wbytes(s, l, W_WO) + 3 * act));
		int32_t h2 = out(s, act, HOFF_KIND_ACTIVATION, "s%lld.l%d.h2",
				 st, (int)l);

		if (!op_begin(s, K_NORM, l, "s%lld.l%d.norm2", st, (int)l))
			return false;
		use(s, HOFF_USE_IN, h2);
		use(s, HOFF_USE_IN, weight(s, l, W_LN2));
		timed(s, 2.0 * (double)act);
		int32_t x2 = out(s, act, HOFF_KIND_ACTIVATION, "s%lld.l%d.x2",
				 st, (int)l);

		if (!op_begin(s, K_MATMUL, l, "s%lld.l%d.up", st, (int)l))
			return false;
		use(s, HOFF_USE_IN, x2);
		use(s, HOFF_USE_IN, weight(s, l, W_UP));
		roof(s, 2.0 * T * DMODEL * (double)ffn,
		     (double)(wbytes(s, l, W_UP) + act + T * ffn * DT));
		int32_t u = out(s, T * ffn * DT, HOFF_KIND_ACTIVATION,
				"s%lld.l%d.u", st, (int)l);

		if (!op_begin(s, K_MATMUL, l, "s%lld.l%d.down", st, (int)l))
			return false;
		use(s, HOFF_USE_IN, u);
		use(s, HOFF_USE_IN, weight(s, l, W_DOWN));
		use(s, HOFF_USE_IN, h2);
		roof(s, 2.0 * T * DMODEL * (double)ffn,
		     (double)(wbytes(s, l, W_DOWN) + T * ffn * DT + 2 * act));
		workspace(s, (int64_t)4 << 20);
		h = out(s, act, HOFF_KIND_ACTIVATION, "s%lld.l%d.h", st,
			(int)l);
	}

	if (!op_begin(s, K_MATMUL, L - 1, "s%lld.head", st))
		return false;
	use(s, HOFF_USE_IN, h);
	use(s, HOFF_USE_IN, mweight(s, M_LNF));
	use(s, HOFF_USE_IN, mweight(s, M_HEAD));
	roof(s, 2.0 * T * DMODEL * VOCAB,
	     (double)(mbytes(M_HEAD) + act + T * VOCAB * DT));
	int32_t logits = out(s, T * VOCAB * DT, HOFF_KIND_ACTIVATION,
			     "s%lld.logits", st);

	if (!op_begin(s, K_SAMPLE, L - 1, "s%lld.sample", st))
		return false;
	use(s, HOFF_USE_IN, logits);
	timed(s, (double)(T * VOCAB * DT));
	s->tok = out(s, T * 4, HOFF_KIND_ACTIVATION, "s%lld.tok", st + 1);
	return true;
}

/* Forward of layer l: stashes every activation the backward reads. */
static bool train_fwd(gen *s, long long it, int32_t l, int64_t T)
{
	const int64_t act = T * DMODEL * DT, ffn = s->ffn[l];
	const int64_t qkvb = T * (DMODEL + 2 * DKV) * DT;
	int32_t *a = &s->act[(size_t)l * NA];

	if (!op_begin(s, K_NORM, l, "i%lld.l%d.norm1", it, (int)l))
		return false;
	use(s, HOFF_USE_IN, a[A_IN]);
	use(s, HOFF_USE_IN, weight(s, l, W_LN1));
	timed(s, 2.0 * (double)act);
	a[A_X1] = out(s, act, HOFF_KIND_ACTIVATION, "i%lld.l%d.x1", it, (int)l);

	if (!op_begin(s, K_MATMUL, l, "i%lld.l%d.qkv", it, (int)l))
		return false;
	use(s, HOFF_USE_IN, a[A_X1]);
	use(s, HOFF_USE_IN, weight(s, l, W_QKV));
	roof(s, 2.0 * T * DMODEL * (DMODEL + 2 * DKV),
	     (double)(wbytes(s, l, W_QKV) + act + qkvb));
	a[A_QKV] = out(s, qkvb, HOFF_KIND_ACTIVATION, "i%lld.l%d.qkv", it,
		       (int)l);

	if (!op_begin(s, K_ATTN, l, "i%lld.l%d.attn", it, (int)l))
		return false;
	use(s, HOFF_USE_IN, a[A_QKV]);
	timed_flops(s, 4.0 * T * SEQ * DMODEL, 0.6);
	workspace(s, T * 32 * 4); /* log-sum-exp per head */
	a[A_ATT] = out(s, act, HOFF_KIND_ACTIVATION, "i%lld.l%d.att", it,
		       (int)l);

	if (!op_begin(s, K_MATMUL, l, "i%lld.l%d.wo", it, (int)l))
		return false;
	use(s, HOFF_USE_IN, a[A_ATT]);
	use(s, HOFF_USE_IN, weight(s, l, W_WO));
	use(s, HOFF_USE_IN, a[A_IN]);
	roof(s, 2.0 * T * DMODEL * DMODEL,
	     (double)(wbytes(s, l, W_WO) + 3 * act));
	a[A_H2] = out(s, act, HOFF_KIND_ACTIVATION, "i%lld.l%d.h2", it, (int)l);

	if (!op_begin(s, K_NORM, l, "i%lld.l%d.norm2", it, (int)l))
		return false;
	use(s, HOFF_USE_IN, a[A_H2]);
	use(s, HOFF_USE_IN, weight(s, l, W_LN2));
	timed(s, 2.0 * (double)act);
	a[A_X2] = out(s, act, HOFF_KIND_ACTIVATION, "i%lld.l%d.x2", it, (int)l);

	if (!op_begin(s, K_MATMUL, l, "i%lld.l%d.up", it, (int)l))
		return false;
	use(s, HOFF_USE_IN, a[A_X2]);
	use(s, HOFF_USE_IN, weight(s, l, W_UP));
	roof(s, 2.0 * T * DMODEL * (double)ffn,
	     (double)(wbytes(s, l, W_UP) + act + T * ffn * DT));
	a[A_U] = out(s, T * ffn * DT, HOFF_KIND_ACTIVATION, "i%lld.l%d.u", it,
		     (int)l);

	if (!op_begin(s, K_MATMUL, l, "i%lld.l%d.down", it, (int)l))
		return false;
	use(s, HOFF_USE_IN, a[A_U]);
	use(s, HOFF_USE_IN, weight(s, l, W_DOWN));
	use(s, HOFF_USE_IN, a[A_H2]);
	roof(s, 2.0 * T * DMODEL * (double)ffn,
	     (double)(wbytes(s, l, W_DOWN) + T * ffn * DT + 2 * act));
	workspace(s, (int64_t)32 << 20);
	s->act[(size_t)(l + 1) * NA + A_IN] = out(
		s, act, HOFF_KIND_ACTIVATION, "i%lld.l%d.h", it, (int)l);
	return true;
}

/* Backward of layer l: *dh holds the gradient of the layer's output and
 * leaves with the gradient of its input. */
static bool train_bwd(gen *s, long long it, int32_t l, int64_t T, int32_t *dh)
{
	const int64_t act = T * DMODEL * DT, ffn = s->ffn[l];
	const int64_t qkvb = T * (DMODEL + 2 * DKV) * DT;
	const int32_t *a = &s->act[(size_t)l * NA];
	int32_t *gw = &s->grad[(size_t)l * NW];
	const int gk = HOFF_KIND_GRADIENT;

	if (!op_begin(s, K_MATMUL_BWD, l, "i%lld.l%d.down_bwd", it, (int)l))
		return false;
	use(s, HOFF_USE_IN, *dh);
	use(s, HOFF_USE_IN, a[A_U]);
	use(s, HOFF_USE_IN, weight(s, l, W_DOWN));
	roof(s, 4.0 * T * DMODEL * (double)ffn,
	     (double)(2 * wbytes(s, l, W_DOWN) + 2 * T * ffn * DT + act));
	workspace(s, (int64_t)32 << 20);
	int32_t du = out(s, T * ffn * DT, gk, "i%lld.l%d.du", it, (int)l);
	gw[W_DOWN] = out(s, wbytes(s, l, W_DOWN), gk, "i%lld.l%d.dw2", it,
			 (int)l);

	if (!op_begin(s, K_MATMUL_BWD, l, "i%lld.l%d.up_bwd", it, (int)l))
		return false;
	use(s, HOFF_USE_IN, du);
	use(s, HOFF_USE_IN, a[A_X2]);
	use(s, HOFF_USE_IN, a[A_U]);
	use(s, HOFF_USE_IN, weight(s, l, W_UP));
	roof(s, 4.0 * T * DMODEL * (double)ffn,
	     (double)(2 * wbytes(s, l, W_UP) + 2 * T * ffn * DT + 2 * act));
	workspace(s, (int64_t)32 << 20);
	int32_t dx2 = out(s, act, gk, "i%lld.l%d.dx2", it, (int)l);
	gw[W_UP] = out(s, wbytes(s, l, W_UP), gk, "i%lld.l%d.dw1", it, (int)l);

	if (!op_begin(s, K_NORM_BWD, l, "i%lld.l%d.norm2_bwd", it, (int)l))
		return false;
	use(s, HOFF_USE_IN, dx2);
	use(s, HOFF_USE_IN, a[A_H2]);
	use(s, HOFF_USE_IN, weight(s, l, W_LN2));
	use(s, HOFF_USE_IN, *dh);
	timed(s, 4.0 * (double)act);
	int32_t dh2 = out(s, act, gk, "i%lld.l%d.dh2", it, (int)l);
	gw[W_LN2] = out(s, wbytes(s, l, W_LN2), gk, "i%lld.l%d.dln2", it,
			(int)l);

	if (!op_begin(s, K_MATMUL_BWD, l, "i%lld.l%d.wo_bwd", it, (int)l))
		return false;
	use(s, HOFF_USE_IN, dh2);
	use(s, HOFF_USE_IN, a[A_ATT]);
	use(s, HOFF_USE_IN, weight(s, l, W_WO));
	roof(s, 4.0 * T * DMODEL * DMODEL,
	     (double)(2 * wbytes(s, l, W_WO) + 3 * act));
	int32_t datt = out(s, act, gk, "i%lld.l%d.datt", it, (int)l);
	gw[W_WO] = out(s, wbytes(s, l, W_WO), gk, "i%lld.l%d.dwo", it, (int)l);

	if (!op_begin(s, K_ATTN_BWD, l, "i%lld.l%d.attn_bwd", it, (int)l))
		return false;
	use(s, HOFF_USE_IN, datt);
	use(s, HOFF_USE_IN, a[A_QKV]);
	use(s, HOFF_USE_IN, a[A_ATT]);
	timed_flops(s, 10.0 * T * SEQ * DMODEL, 0.5);
	workspace(s, qkvb); /* fp32 dq accumulator, about this size */
	int32_t dqkv = out(s, qkvb, gk, "i%lld.l%d.dqkv", it, (int)l);

	if (!op_begin(s, K_MATMUL_BWD, l, "i%lld.l%d.qkv_bwd", it, (int)l))
		return false;
	use(s, HOFF_USE_IN, dqkv);
	use(s, HOFF_USE_IN, a[A_X1]);
	use(s, HOFF_USE_IN, weight(s, l, W_QKV));
	roof(s, 4.0 * T * DMODEL * (DMODEL + 2 * DKV),
	     (double)(2 * wbytes(s, l, W_QKV) + 2 * qkvb + act));
	int32_t dx1 = out(s, act, gk, "i%lld.l%d.dx1", it, (int)l);
	gw[W_QKV] = out(s, wbytes(s, l, W_QKV), gk, "i%lld.l%d.dwqkv", it,
			(int)l);

	if (!op_begin(s, K_NORM_BWD, l, "i%lld.l%d.norm1_bwd", it, (int)l))
		return false;
	use(s, HOFF_USE_IN, dx1);
	use(s, HOFF_USE_IN, a[A_IN]);
	use(s, HOFF_USE_IN, weight(s, l, W_LN1));
	use(s, HOFF_USE_IN, dh2);
	timed(s, 4.0 * (double)act);
	*dh = out(s, act, gk, "i%lld.l%d.dh", it, (int)l);
	gw[W_LN1] = out(s, wbytes(s, l, W_LN1), gk, "i%lld.l%d.dln1", it,
			(int)l);
	return true;
}

/* Adam step of layer l (l == layers: the model weights): reads the
 * gradients, updates weights and moments in place. */
static bool train_opt(gen *s, long long it, int32_t l)
{
	const int32_t L = s->o->layers;
	const int nw = l < L ? NW : NM;
	const int32_t *gw = &s->grad[(size_t)l * NW];
	double wb = 0;
	if (l < L) {
		if (!op_begin(s, K_OPT, l, "i%lld.l%d.adam", it, (int)l))
			return false;
	} else if (!op_begin(s, K_OPT, 0, "i%lld.model.adam", it)) {
		return false;
	}
	for (int w = 0; w < nw; w++) {
		use(s, HOFF_USE_IN, gw[w]);
		use(s, HOFF_USE_UPD, l < L ? weight(s, l, w) : mweight(s, w));
		wb += (double)(l < L ? wbytes(s, l, w) : mbytes(w));
	}
	use(s, HOFF_USE_UPD, moment(s, l, 0));
	use(s, HOFF_USE_UPD, moment(s, l, 1));
	/* Per parameter: read w, g, m, v; write w, m, v (bf16 w, fp32 m v). */
	roof(s, 12.0 * wb / DT, 3.0 * wb + 16.0 * wb / DT);
	return true;
}

static bool train_iter(gen *s, long long it)
{
	const int32_t L = s->o->layers;
	const int gk = HOFF_KIND_GRADIENT;
	int32_t *gm = &s->grad[(size_t)L * NW];
	/* Packed sequences: the microbatch varies by up to 25% either way. */
	int64_t T = TOKENS * 3 / 4 +
		    (int64_t)(rnd(s) % (TOKENS / 2 / 256 + 1)) * 256;
	const int64_t act = T * DMODEL * DT;

	if (!op_begin(s, K_EMBED, 0, "i%lld.embed", it))
		return false;
	int32_t tokens = tensor(s, T * 4, HOFF_KIND_INPUT, s->host,
				"i%lld.tokens", it);
	use(s, HOFF_USE_IN, tokens);
	use(s, HOFF_USE_IN, mweight(s, M_EMB));
	roof(s, 0, 2.0 * (double)act);
	s->act[A_IN] = out(s, act, HOFF_KIND_ACTIVATION, "i%lld.h0", it);

	for (int32_t l = 0; l < L; l++)
		if (!train_fwd(s, it, l, T))
			return false;

	/* Final norm, head, cross-entropy and their backward, fused. */
	if (!op_begin(s, K_LOSS, L - 1, "i%lld.loss", it))
		return false;
	int32_t labels = tensor(s, T * 4, HOFF_KIND_INPUT, s->host,
				"i%lld.labels", it);
	use(s, HOFF_USE_IN, s->act[(size_t)L * NA + A_IN]);
	use(s, HOFF_USE_IN, mweight(s, M_LNF));
	use(s, HOFF_USE_IN, mweight(s, M_HEAD));
	use(s, HOFF_USE_IN, labels);
	roof(s, 6.0 * T * DMODEL * VOCAB,
	     (double)(3 * mbytes(M_HEAD) + 3 * act));
	workspace(s, (int64_t)64 << 20); /* logits, a chunk at a time */
	out(s, 4, HOFF_KIND_OUTPUT, "i%lld.loss", it);
	int32_t dh = out(s, act, gk, "i%lld.dh", it);
	gm[M_LNF] = out(s, mbytes(M_LNF), gk, "i%lld.dlnf", it);
	gm[M_HEAD] = out(s, mbytes(M_HEAD), gk, "i%lld.dhead", it);

	for (int32_t l = L - 1; l >= 0; l--)
		if (!train_bwd(s, it, l, T, &dh))
			return false;

	if (!op_begin(s, K_EMBED_BWD, 0, "i%lld.embed_bwd", it))
		return false;
	use(s, HOFF_USE_IN, dh);
	use(s, HOFF_USE_IN, tokens);
	timed(s, 2.0 * (double)act + (double)mbytes(M_EMB));
	gm[M_EMB] = out(s, mbytes(M_EMB), gk, "i%lld.demb", it);

	for (int32_t l = 0; l <= L; l++)
		if (!train_opt(s, it, l))
			return false;
	return true;
}

static void fill_none(int32_t *a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		a[i] = HOFF_NONE;
}

static hoff_status machine(gen *s)
{
	hoff_graph *g = s->g;
	g->device.name = hoff_graph_intern(g, "synth-gpu");
	g->device.flops_per_s = FLOPS_PER_S;
	g->device.mem_bandwidth_Bps = MEM_BPS;
	g->device.has_flops = g->device.has_mem_bw = true;
	static const struct {
		const char *name;
		double rate_Bps, latency_s;
	} tiers[2] = {{"host", 2.5e10, 5e-6}, {"remote", 5e9, 2e-5}};
	for (int32_t i = 0; i < s->o->ntiers; i++) {
		int32_t r = hoff_graph_add_tier(g, tiers[i].name, s->e);
		if (r == HOFF_NONE)
			return HOFF_ENOMEM;
		g->tier[r].h2d_Bps = g->tier[r].d2h_Bps = tiers[i].rate_Bps;
		g->tier[r].latency_s = tiers[i].latency_s;
		g->tier[r].has_latency = true;
	}
	s->host = 0;
	s->home = s->o->weights_on_host ? s->host : HOFF_DEVICE;
	if (!g->device.name)
		return hoff_seterr(s->e, HOFF_ENOMEM, "out of memory");
	return HOFF_OK;
}

hoff_synth_opts hoff_synth_defaults(void)
{
	return (hoff_synth_opts){
		.nops = 1000,
		.shape = HOFF_SYNTH_INFER,
		.layers = 32,
		.weights_on_host = false,
		.seed = 1,
		.ntiers = 1,
		.memory_bytes = 0,
	};
}

hoff_status hoff_synth_build(const hoff_synth_opts *o, hoff_graph **out,
			     hoff_err *e)
{
	*out = NULL;
	if (o->nops < 1 || o->nops > HOFF_SYNTH_MAX_OPS)
		return hoff_seterr(e, HOFF_EUSAGE,
				   "synth: ops must be 1 .. %d, not %lld",
				   HOFF_SYNTH_MAX_OPS, (long long)o->nops);
	if (o->layers < 1 || o->layers > HOFF_SYNTH_MAX_LAYERS)
		return hoff_seterr(e, HOFF_EUSAGE,
				   "synth: layers must be 1 .. %d, not %d",
				   HOFF_SYNTH_MAX_LAYERS, (int)o->layers);
	if (o->ntiers < 1 || o->ntiers > 2)
		return hoff_seterr(e, HOFF_EUSAGE,
				   "synth: tiers must be 1 or 2, not %d",
				   (int)o->ntiers);
	if (o->shape != HOFF_SYNTH_INFER && o->shape != HOFF_SYNTH_TRAIN)
		return hoff_seterr(e, HOFF_EUSAGE, "synth: unknown shape");
	if (o->memory_bytes < 0)
		return hoff_seterr(e, HOFF_EUSAGE,
				   "synth: memory must be >= 0");

	const size_t L = (size_t)o->layers;
	gen s = {.o = o, .e = e, .rng = o->seed, .tok = HOFF_NONE};
	hoff_status st = HOFF_ENOMEM;
	s.g = hoff_graph_new();
	s.ffn = hoff_alloc(L, sizeof *s.ffn);
	s.w = hoff_alloc(L, NW * sizeof *s.w);
	s.kv = hoff_alloc(L, NBLK * sizeof *s.kv);
	s.adam = hoff_alloc(L + 1, 2 * sizeof *s.adam);
	s.act = hoff_alloc(L + 1, NA * sizeof *s.act);
	s.grad = hoff_alloc(L + 1, NW * sizeof *s.grad);
	if (!s.g || !s.ffn || !s.w || !s.kv || !s.adam || !s.act || !s.grad) {
		hoff_seterr(e, st, "out of memory");
		goto out;
	}
	fill_none(s.w, L * NW);
	fill_none(s.mw, NM);
	fill_none(s.kv, L * NBLK);
	fill_none(s.adam, (L + 1) * 2);
	fill_none(s.act, (L + 1) * NA);
	fill_none(s.grad, (L + 1) * NW);
	for (int k = 0; k < NOPKINDS; k++)
		if (!(s.kind[k] = hoff_graph_intern(s.g, opkind[k]))) {
			hoff_seterr(e, st, "out of memory");
			goto out;
		}
	/* Layers differ a little in FFN width, as pruned models do. */
	for (size_t l = 0; l < L; l++)
		s.ffn[l] = FFN + ((int64_t)(rnd(&s) % 9) - 4) * 256;

	const char *shape = o->shape == HOFF_SYNTH_TRAIN ? "train" : "infer";
	char buf[256];
	snprintf(buf, sizeof buf, "synth-%s-%lld", shape, (long long)o->nops);
	s.g->name = hoff_strdup(buf);
	snprintf(buf, sizeof buf,
		 "{\"source\":\"hoff-gen-synth\",\"shape\":\"%s\",\"ops\":%lld,"
		 "\"layers\":%d,\"home\":\"%s\",\"seed\":%llu,\"tiers\":%d}",
		 shape, (long long)o->nops, (int)o->layers,
		 o->weights_on_host ? "host" : "device",
		 (unsigned long long)o->seed, (int)o->ntiers);
	s.g->meta = hoff_strdup(buf);
	if (!s.g->name || !s.g->meta) {
		hoff_seterr(e, st, "out of memory");
		goto out;
	}
	if ((st = machine(&s)) != HOFF_OK)
		goto out;

	if (o->shape == HOFF_SYNTH_TRAIN)
		for (long long it = 0; train_iter(&s, it); it++)
			;
	else
		for (long long step = 0; infer_step(&s, step); step++)
			;
	if ((st = s.st) != HOFF_OK)
		goto out;
	assert(s.g->nops == o->nops);
	if ((st = hoff_graph_finish(s.g, s.g->name, e)) != HOFF_OK)
		goto out;

	/* Room on the host for a copy of everything, at least 1 TiB. */
	int64_t total = 0;
	for (int32_t t = 0; t < s.g->ntensors; t++)
		total += s.g->tensor[t].bytes;
	int64_t cap = (int64_t)1 << 40;
	s.g->tier[s.host].capacity_bytes = 2 * total > cap ? 2 * total : cap;
	int64_t mem = o->memory_bytes;
	if (mem == 0) {
		int64_t peak = hoff_analysis_profile(s.g, NULL);
		mem = (peak / ROUND_BYTES + 1) * ROUND_BYTES;
	}
	s.g->device.memory_bytes = mem;
out:
	free(s.ffn);
	free(s.w);
	free(s.kv);
	free(s.adam);
	free(s.act);
	free(s.grad);
	if (st != HOFF_OK)
		hoff_graph_free(s.g);
	else
		*out = s.g;
	return st;
}
