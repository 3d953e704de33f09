/* synth.c: synthetic transformer-shaped graphs of an exact op count.
 * The graph is streamed op by op through the builder (build.h), whose
 * limit cuts it at o->nops: every op only reads tensors that earlier ops
 * produced or graph inputs, so any prefix is a valid graph; the last op's
 * outputs become graph outputs. Weights, KV blocks and optimizer state
 * are created at their first use, so a cut never leaves tensors that
 * nothing touches. One layer function builds the forward of both shapes.
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
#include "build.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>

/* Model shape: bf16 weights and activations, fp32 optimizer moments. */
#define DMODEL 2048
#define DKV    512  /* grouped-query K and V width */
#define FFN    8192 /* before per-layer jitter */
#define VOCAB  32000
#define DT     2    /* bytes per element */
#define BATCH  32   /* sequences decoded together */
#define CTX    2048 /* tokens per sequence */
#define BLOCK  128  /* tokens per KV block */
#define NBLK   (CTX / BLOCK)
#define TOKENS 4096 /* training microbatch, before jitter */
#define SEQ    2048 /* training sequence length (attention span) */

#define FLOPS_PER_S 7e14
#define MEM_BPS	    3e12
#define LAUNCH_S    3e-6
#define ROUND_BYTES ((int64_t)256 << 20)

enum { W_LN1, W_QKV, W_WO, W_LN2, W_UP, W_DOWN, NW };	/* per layer */
enum { M_EMB, M_LNF, M_HEAD, NM };			/* per model */
enum { A_IN, A_X1, A_QKV, A_ATT, A_H2, A_X2, A_U, NA }; /* stash */
static const char *const wname[NW] = {"ln1", "wqkv", "wo", "ln2", "w1", "w2"};
static const char *const mname[NM] = {"emb", "lnf", "head"};
static const char *const dwname[NW] = {"dln1", "dwqkv", "dwo",
				       "dln2", "dw1",	"dw2"};

enum {
	K_EMBED,
	K_NORM,
	K_MATMUL,
	K_KV,
	K_ATTN,
	K_SAMPLE,
	K_LOSS,
	K_NORM_BWD,
	K_MATMUL_BWD,
	K_ATTN_BWD,
	K_EMBED_BWD,
	K_OPT,
	NOPKINDS
};
static const char *const opkind[NOPKINDS] = {
	"embed",      "norm",	       "matmul",    "kv_append",
	"attention",  "sample",	       "loss",	    "norm_bwd",
	"matmul_bwd", "attention_bwd", "embed_bwd", "optimizer",
};

typedef struct gen {
	hoff_build b;
	const hoff_synth_opts *o;
	uint64_t rng;		    /* splitmix64 state */
	int32_t home;		    /* home of the weights */
	int32_t host;		    /* tier "host" */
	const char *kind[NOPKINDS]; /* interned op kinds */
	int64_t *ffn;		    /* (layers) FFN width */
	int32_t *w;	/* (layers, NW) weight ids, HOFF_NONE until used */
	int32_t mw[NM]; /* model weights */
	int32_t *kv;	/* (layers, NBLK) KV blocks */
	int32_t *adam;	/* (layers + 1, 2) moments; row `layers`: model */
	int32_t *act;	/* (layers + 1, NA) this step's activations; row
			   l + 1 starts with layer l's output */
	int32_t *grad;	/* (layers + 1, NW) this iteration's weight grads */
	int32_t tok;	/* infer: the tokens the next step embeds */
	char pfx[24];	/* "s<step>" or "i<iteration>": starts the ids of
			   the step's ops and activations */
} gen;

static uint64_t rnd(gen *s)
{
	return hoff_build_rand(&s->rng);
}

/* x scaled by a factor drawn uniformly from [0.9, 1.1). */
static double jitter(gen *s, double x)
{
	double u = (double)(rnd(s) >> 11) * 0x1p-53;
	return x * (0.9 + 0.2 * u);
}

/* Starts op "<pfx>.l<l>.<name>" of layer l, or for l outside the layers
 * "<pfx>.<name>" of layer 0 (l < 0: the embedding side) or the last (the
 * head side); false when the graph has all its ops or failed. */
static bool op(gen *s, int kind, int32_t l, const char *name)
{
	const int32_t L = s->o->layers;
	if (l >= 0 && l < L)
		return hoff_build_op(&s->b, s->kind[kind], l, "%s.l%d.%s",
				     s->pfx, (int)l, name);
	return hoff_build_op(&s->b, s->kind[kind], l < 0 ? 0 : L - 1, "%s.%s",
			     s->pfx, name);
}

/* A tensor the current op produces, named as op() names ops. */
static int32_t out(gen *s, int64_t bytes, int kind, int32_t l, const char *name)
{
	if (l >= 0 && l < s->o->layers)
		return hoff_build_out(&s->b, bytes, kind, "%s.l%d.%s", s->pfx,
				      (int)l, name);
	return hoff_build_out(&s->b, bytes, kind, "%s.%s", s->pfx, name);
}

static void in(gen *s, int32_t t)
{
	hoff_build_use(&s->b, HOFF_USE_IN, t);
}

/* Roofline cost of the current op (flops < 0: none, a gather). */
static void roof(gen *s, double flops, double bytes)
{
	hoff_build_cost(&s->b, flops, bytes);
}

/* Measured-looking time of the current op: memory time of `bytes` at 70%
 * of peak bandwidth plus a launch, jittered. */
static void timed(gen *s, double bytes)
{
	hoff_build_time(&s->b, jitter(s, bytes / (0.7 * MEM_BPS) + LAUNCH_S));
}

/* Measured-looking time of a compute-bound kernel at `eff` of peak. */
static void timed_flops(gen *s, double flops, double eff)
{
	hoff_build_time(&s->b,
			jitter(s, flops / (eff * FLOPS_PER_S) + LAUNCH_S));
}

static void workspace(gen *s, int64_t bytes)
{
	hoff_build_workspace(&s->b, bytes);
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
		*id = hoff_build_tensor(&s->b, wbytes(s, l, w),
					HOFF_KIND_WEIGHT, s->home, "l%d.%s",
					(int)l, wname[w]);
	return *id;
}

static int32_t mweight(gen *s, int m)
{
	if (s->mw[m] == HOFF_NONE)
		s->mw[m] = hoff_build_tensor(&s->b, mbytes(m), HOFF_KIND_WEIGHT,
					     s->home, "%s", mname[m]);
	return s->mw[m];
}

static int32_t kvblock(gen *s, int32_t l, int64_t b)
{
	int32_t *id = &s->kv[(size_t)l * NBLK + (size_t)b];
	if (*id == HOFF_NONE)
		*id = hoff_build_tensor(&s->b,
					(int64_t)2 * BATCH * BLOCK * DKV * DT,
					HOFF_KIND_KV, HOFF_DEVICE, "l%d.kv%d",
					(int)l, (int)b);
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
			*id = hoff_build_tensor(&s->b, params * 4,
						HOFF_KIND_OPTIMIZER, s->host,
						"l%d.adam_%c", (int)l,
						j ? 'v' : 'm');
		else
			*id = hoff_build_tensor(&s->b, params * 4,
						HOFF_KIND_OPTIMIZER, s->host,
						"model.adam_%c", j ? 'v' : 'm');
	}
	return *id;
}

/* RMSNorm op "<name>" of layer l: y ("<yname>", like x) = norm(x) * w. */
static int32_t norm(gen *s, int32_t l, const char *name, int32_t x, int w,
		    int64_t act, const char *yname)
{
	if (!op(s, K_NORM, l, name))
		return HOFF_NONE;
	in(s, x);
	in(s, weight(s, l, w));
	timed(s, 2.0 * (double)act);
	return out(s, act, HOFF_KIND_ACTIVATION, l, yname);
}

/* Matmul op "<name>" of layer l over T tokens: y ("<yname>", ybytes) = x
 * W_w (+ res); 2 flops a multiply-add, bytes those of its lists. */
static int32_t matmul(gen *s, int32_t l, int64_t T, const char *name, int32_t x,
		      int w, int32_t res, int64_t ybytes, const char *yname,
		      int64_t ws)
{
	if (!op(s, K_MATMUL, l, name))
		return HOFF_NONE;
	in(s, x);
	in(s, weight(s, l, w));
	in(s, res);
	workspace(s, ws);
	int32_t y = out(s, ybytes, HOFF_KIND_ACTIVATION, l, yname);
	roof(s, 2.0 * (double)T * (double)(wbytes(s, l, w) / DT), -1);
	return y;
}

/* Forward of layer l over T tokens from act row l: stashes every
 * activation the backward reads and leaves the output in row l + 1. At
 * inference (pos >= 0: the position decoded) the new token's keys and
 * values go into their KV block and the attention reads blocks 0 .. the
 * current one. */
static bool layer(gen *s, int32_t l, int64_t T, int64_t pos)
{
	const int64_t act = T * DMODEL * DT, ffn = s->ffn[l];
	const int64_t qkvb = T * (DMODEL + 2 * DKV) * DT;
	const int64_t blk = pos / BLOCK,
		      kvb = (int64_t)2 * BATCH * BLOCK * DKV * DT;
	int32_t *a = &s->act[(size_t)l * NA];

	/* Each helper does nothing once the graph is complete. */
	a[A_X1] = norm(s, l, "norm1", a[A_IN], W_LN1, act, "x1");
	a[A_QKV] = matmul(s, l, T, "qkv", a[A_X1], W_QKV, HOFF_NONE, qkvb,
			  "qkv", 0);
	if (a[A_QKV] == HOFF_NONE)
		return false;
	if (pos >= 0) {
		if (!op(s, K_KV, l, "kv"))
			return false;
		in(s, a[A_QKV]);
		hoff_build_use(&s->b, HOFF_USE_UPD, kvblock(s, l, blk));
		timed(s, 2.0 * (double)(qkvb - act / 2));
	}
	if (!op(s, K_ATTN, l, "attn"))
		return false;
	in(s, a[A_QKV]);
	if (pos >= 0) {
		for (int64_t b = 0; b <= blk; b++)
			in(s, kvblock(s, l, b));
		roof(s, 4.0 * T * (double)(pos + 1) * DMODEL,
		     (double)((blk + 1) * kvb + qkvb + act));
		workspace(s, T * 32 * 4 * 64); /* split-K partial sums */
	} else {
		timed_flops(s, 4.0 * T * SEQ * DMODEL, 0.6);
		workspace(s, T * 32 * 4); /* log-sum-exp per head */
	}
	a[A_ATT] = out(s, act, HOFF_KIND_ACTIVATION, l, "att");

	a[A_H2] = matmul(s, l, T, "wo", a[A_ATT], W_WO, a[A_IN], act, "h2", 0);
	a[A_X2] = norm(s, l, "norm2", a[A_H2], W_LN2, act, "x2");
	a[A_U] = matmul(s, l, T, "up", a[A_X2], W_UP, HOFF_NONE, T * ffn * DT,
			"u", 0);
	a[NA + A_IN] = matmul(s, l, T, "down", a[A_U], W_DOWN, a[A_H2], act,
			      "h", (int64_t)(pos >= 0 ? 4 : 32) << 20);
	return a[NA + A_IN] != HOFF_NONE;
}

/* One decode step of every layer; false once the graph is complete. */
static bool infer_step(gen *s, long long st)
{
	const int64_t T = BATCH, act = T * DMODEL * DT;
	const int32_t L = s->o->layers;

	snprintf(s->pfx, sizeof s->pfx, "s%lld", st);
	if (!op(s, K_EMBED, -1, "embed"))
		return false;
	if (s->tok == HOFF_NONE)
		s->tok = hoff_build_tensor(&s->b, T * 4, HOFF_KIND_INPUT,
					   HOFF_DEVICE, "tok0");
	in(s, s->tok);
	in(s, mweight(s, M_EMB));
	roof(s, -1, 2.0 * (double)act);
	s->act[A_IN] = out(s, act, HOFF_KIND_ACTIVATION, -1, "h0");

	for (int32_t l = 0; l < L; l++)
		if (!layer(s, l, T, st % CTX))
			return false;

	if (!op(s, K_MATMUL, L, "head"))
		return false;
	in(s, s->act[(size_t)L * NA + A_IN]);
	in(s, mweight(s, M_LNF));
	in(s, mweight(s, M_HEAD));
	roof(s, 2.0 * T * DMODEL * VOCAB,
	     (double)(mbytes(M_HEAD) + act + T * VOCAB * DT));
	int32_t logits =
		out(s, T * VOCAB * DT, HOFF_KIND_ACTIVATION, L, "logits");

	if (!op(s, K_SAMPLE, L, "sample"))
		return false;
	in(s, logits);
	timed(s, (double)(T * VOCAB * DT));
	s->tok = hoff_build_out(&s->b, T * 4, HOFF_KIND_ACTIVATION, "s%lld.tok",
				st + 1);
	return true;
}
/* Backward of a matmul op "<name>" of layer l over T tokens: dx
 * ("<dxname>", like x) and the gradient of W_w from dy and the saved x
 * (and u, the up projection's output, for its gate); 4 flops a
 * multiply-add. */
static int32_t matmul_bwd(gen *s, int32_t l, int64_t T, const char *name,
			  int32_t dy, int32_t x, int32_t u, int w,
			  int64_t dxbytes, const char *dxname, double bytes,
			  int64_t ws)
{
	if (!op(s, K_MATMUL_BWD, l, name))
		return HOFF_NONE;
	in(s, dy);
	in(s, x);
	in(s, u);
	in(s, weight(s, l, w));
	workspace(s, ws);
	int32_t dx = out(s, dxbytes, HOFF_KIND_GRADIENT, l, dxname);
	s->grad[(size_t)l * NW + (size_t)w] =
		out(s, wbytes(s, l, w), HOFF_KIND_GRADIENT, l, dwname[w]);
	roof(s, 4.0 * (double)T * (double)(wbytes(s, l, w) / DT), bytes);
	return dx;
}

/* Backward of the RMSNorm op "<name>" of layer l: the gradient of its
 * input ("<dxname>") from dy, the saved x and the residual's gradient
 * dres, and that of its weight. */
static int32_t norm_bwd(gen *s, int32_t l, const char *name, int32_t dy,
			int32_t x, int w, int32_t dres, int64_t act,
			const char *dxname)
{
	if (!op(s, K_NORM_BWD, l, name))
		return HOFF_NONE;
	in(s, dy);
	in(s, x);
	in(s, weight(s, l, w));
	in(s, dres);
	timed(s, 4.0 * (double)act);
	int32_t dx = out(s, act, HOFF_KIND_GRADIENT, l, dxname);
	s->grad[(size_t)l * NW + (size_t)w] =
		out(s, wbytes(s, l, w), HOFF_KIND_GRADIENT, l, dwname[w]);
	return dx;
}

/* Backward of layer l: *dh holds the gradient of the layer's output and
 * leaves with the gradient of its input. */
static bool train_bwd(gen *s, int32_t l, int64_t T, int32_t *dh)
{
	const int64_t act = T * DMODEL * DT, ub = T * s->ffn[l] * DT;
	const int64_t qkvb = T * (DMODEL + 2 * DKV) * DT;
	const int32_t *a = &s->act[(size_t)l * NA];
	const int64_t ws = (int64_t)32 << 20;

	int32_t du = matmul_bwd(s, l, T, "down_bwd", *dh, a[A_U], HOFF_NONE,
				W_DOWN, ub, "du", -1, ws);
	int32_t dx2 = matmul_bwd(s, l, T, "up_bwd", du, a[A_X2], a[A_U], W_UP,
				 act, "dx2", -1, ws);
	int32_t dh2 = norm_bwd(s, l, "norm2_bwd", dx2, a[A_H2], W_LN2, *dh, act,
			       "dh2");
	int32_t datt = matmul_bwd(s, l, T, "wo_bwd", dh2, a[A_ATT], HOFF_NONE,
				  W_WO, act, "datt", -1, 0);
	if (datt == HOFF_NONE || !op(s, K_ATTN_BWD, l, "attn_bwd"))
		return false;
	in(s, datt);
	in(s, a[A_QKV]);
	in(s, a[A_ATT]);
	timed_flops(s, 10.0 * T * SEQ * DMODEL, 0.5);
	workspace(s, qkvb); /* fp32 dq accumulator, about this size */
	int32_t dqkv = out(s, qkvb, HOFF_KIND_GRADIENT, l, "dqkv");
	/* Counts dx1 at the width of dqkv, as this generator always has. */
	int32_t dx1 = matmul_bwd(
		s, l, T, "qkv_bwd", dqkv, a[A_X1], HOFF_NONE, W_QKV, act, "dx1",
		(double)(2 * wbytes(s, l, W_QKV) + 2 * qkvb + act), 0);
	*dh = norm_bwd(s, l, "norm1_bwd", dx1, a[A_IN], W_LN1, dh2, act, "dh");
	return *dh != HOFF_NONE;
}

/* Adam step of layer l (l == layers: the model weights): reads the
 * gradients, updates weights and moments in place. */
static bool train_opt(gen *s, int32_t l)
{
	const int32_t L = s->o->layers;
	const int nw = l < L ? NW : NM;
	const int32_t *gw = &s->grad[(size_t)l * NW];
	double wb = 0;
	if (!(l < L ? op(s, K_OPT, l, "adam") : op(s, K_OPT, -1, "model.adam")))
		return false;
	for (int w = 0; w < nw; w++) {
		in(s, gw[w]);
		hoff_build_use(&s->b, HOFF_USE_UPD,
			       l < L ? weight(s, l, w) : mweight(s, w));
		wb += (double)(l < L ? wbytes(s, l, w) : mbytes(w));
	}
	hoff_build_use(&s->b, HOFF_USE_UPD, moment(s, l, 0));
	hoff_build_use(&s->b, HOFF_USE_UPD, moment(s, l, 1));
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
	const int64_t tok = s->o->tokens;
	int64_t T = tok * 3 / 4 + (int64_t)(rnd(s) % (tok / 2 / 256 + 1)) * 256;
	const int64_t act = T * DMODEL * DT;

	snprintf(s->pfx, sizeof s->pfx, "i%lld", it);
	if (!op(s, K_EMBED, -1, "embed"))
		return false;
	int32_t tokens = hoff_build_tensor(&s->b, T * 4, HOFF_KIND_INPUT,
					   s->host, "%s.tokens", s->pfx);
	in(s, tokens);
	in(s, mweight(s, M_EMB));
	roof(s, -1, 2.0 * (double)act);
	s->act[A_IN] = out(s, act, HOFF_KIND_ACTIVATION, -1, "h0");

	for (int32_t l = 0; l < L; l++)
		if (!layer(s, l, T, -1))
			return false;

	/* Final norm, head, cross-entropy and their backward, fused. */
	if (!op(s, K_LOSS, L, "loss"))
		return false;
	int32_t labels = hoff_build_tensor(&s->b, T * 4, HOFF_KIND_INPUT,
					   s->host, "%s.labels", s->pfx);
	in(s, s->act[(size_t)L * NA + A_IN]);
	in(s, mweight(s, M_LNF));
	in(s, mweight(s, M_HEAD));
	in(s, labels);
	roof(s, 6.0 * T * DMODEL * VOCAB,
	     (double)(3 * mbytes(M_HEAD) + 3 * act));
	workspace(s, (int64_t)64 << 20); /* logits, a chunk at a time */
	out(s, 4, HOFF_KIND_OUTPUT, L, "loss");
	int32_t dh = out(s, act, gk, L, "dh");
	gm[M_LNF] = out(s, mbytes(M_LNF), gk, L, "dlnf");
	gm[M_HEAD] = out(s, mbytes(M_HEAD), gk, L, "dhead");

	for (int32_t l = L - 1; l >= 0; l--)
		if (!train_bwd(s, l, T, &dh))
			return false;

	if (!op(s, K_EMBED_BWD, -1, "embed_bwd"))
		return false;
	in(s, dh);
	in(s, tokens);
	timed(s, 2.0 * (double)act + (double)mbytes(M_EMB));
	gm[M_EMB] = out(s, mbytes(M_EMB), gk, -1, "demb");

	for (int32_t l = 0; l <= L; l++)
		if (!train_opt(s, l))
			return false;
	return true;
}

static void fill_none(int32_t *a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		a[i] = HOFF_NONE;
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
		.tokens = TOKENS,
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
	if (o->tokens < HOFF_SYNTH_MIN_TOKENS ||
	    o->tokens > HOFF_SYNTH_MAX_TOKENS)
		return hoff_seterr(e, HOFF_EUSAGE,
				   "synth: tokens must be %d .. %d, not %d",
				   HOFF_SYNTH_MIN_TOKENS, HOFF_SYNTH_MAX_TOKENS,
				   (int)o->tokens);

	const size_t L = (size_t)o->layers;
	gen s = {.o = o, .rng = o->seed, .tok = HOFF_NONE};
	hoff_status st = hoff_build_begin(&s.b, "synth", o->nops, e);
	s.ffn = hoff_alloc(L, sizeof *s.ffn);
	s.w = hoff_alloc(L, NW * sizeof *s.w);
	s.kv = hoff_alloc(L, NBLK * sizeof *s.kv);
	s.adam = hoff_alloc(L + 1, 2 * sizeof *s.adam);
	s.act = hoff_alloc(L + 1, NA * sizeof *s.act);
	s.grad = hoff_alloc(L + 1, NW * sizeof *s.grad);
	if (st != HOFF_OK || !s.ffn || !s.w || !s.kv || !s.adam || !s.act ||
	    !s.grad) {
		st = hoff_seterr(e, HOFF_ENOMEM, "out of memory");
		goto out;
	}
	fill_none(s.w, L * NW);
	fill_none(s.mw, NM);
	fill_none(s.kv, L * NBLK);
	fill_none(s.adam, (L + 1) * 2);
	fill_none(s.act, (L + 1) * NA);
	fill_none(s.grad, (L + 1) * NW);
	for (int k = 0; k < NOPKINDS; k++)
		s.kind[k] = hoff_build_intern(&s.b, "%s", opkind[k]);
	/* Layers differ a little in FFN width, as pruned models do. */
	for (size_t l = 0; l < L; l++)
		s.ffn[l] = FFN + ((int64_t)(rnd(&s) % 9) - 4) * 256;

	const char *shape = o->shape == HOFF_SYNTH_TRAIN ? "train" : "infer";
	hoff_build_set(&s.b, HOFF_BUILD_NAME, "synth-%s-%lld", shape,
		       (long long)o->nops);
	hoff_build_set(&s.b, HOFF_BUILD_META,
		       "{\"source\":\"hoff-gen-synth\",\"shape\":\"%s\","
		       "\"ops\":%lld,\"layers\":%d,\"home\":\"%s\","
		       "\"seed\":%llu,\"tiers\":%d%s%.0d}",
		       shape, (long long)o->nops, (int)o->layers,
		       o->weights_on_host ? "host" : "device",
		       (unsigned long long)o->seed, (int)o->ntiers,
		       o->tokens != TOKENS ? ",\"tokens\":" : "",
		       o->tokens != TOKENS ? (int)o->tokens : 0);
	/* The host's capacity and the device's memory follow from the graph,
	 * below. */
	static const hoff_build_tier tiers[2] = {
		{"host", HOFF_UNLIMITED, 2.5e10, 2.5e10, 5e-6, 1, 1},
		{"remote", HOFF_UNLIMITED, 5e9, 5e9, 2e-5, 1, 1}};
	hoff_build_device(&s.b, "synth-gpu", 0, FLOPS_PER_S, MEM_BPS, -1);
	for (int32_t i = 0; i < o->ntiers; i++)
		hoff_build_tier_add(&s.b, &tiers[i], true); /* version 1 */
	s.host = 0;
	s.home = o->weights_on_host ? s.host : HOFF_DEVICE;

	if (o->shape == HOFF_SYNTH_TRAIN)
		for (long long it = 0; train_iter(&s, it); it++)
			;
	else
		for (long long step = 0; infer_step(&s, step); step++)
			;
	assert(s.b.st != HOFF_OK || s.b.g->nops == o->nops);
	if ((st = hoff_build_finish(&s.b)) != HOFF_OK)
		goto out;

	/* Room on the host for a copy of everything, at least 1 TiB. */
	hoff_graph *g = s.b.g;
	int64_t total = 0;
	for (int32_t t = 0; t < g->ntensors; t++)
		total += g->tensor[t].bytes;
	int64_t cap = (int64_t)1 << 40;
	g->tier[s.host].capacity_bytes = 2 * total > cap ? 2 * total : cap;
	int64_t mem = o->memory_bytes;
	if (mem == 0) {
		int64_t peak = hoff_analysis_profile(g, NULL);
		mem = (peak / ROUND_BYTES + 1) * ROUND_BYTES;
	}
	g->device.memory_bytes = mem;
	*out = hoff_build_take(&s.b);
out:
	free(s.ffn);
	free(s.w);
	free(s.kv);
	free(s.adam);
	free(s.act);
	free(s.grad);
	hoff_build_free(&s.b);
	return st;
}
