/* models.c: model-shaped graphs at real dimensions (see models.h).
 * bf16 weights and activations (2 bytes), fp32 router scores and Adam
 * moments. Every op carries flops and bytes_accessed and no time_s, so its
 * time is the roofline of the machine preset plus a launch overhead.
 * Per layer, in compute order: attn_norm, the attention projections, the
 * attention core (which updates the layer's KV blocks at inference), o_proj
 * (residual add fused), ffn_norm, then a dense FFN (gate, up, down with the
 * SiLU-product and residual fused into down) or an MoE FFN (router, the
 * shared expert, then one op per routed expert chosen for the layer, each
 * accumulating into the residual stream). The embedding comes first, the
 * final norm and the head last.
 * prefill: batch * seq tokens; the KV cache of each layer is ceil(seq /
 *   block) blocks of kind kv (graph inputs homed on the device), all updated
 *   by the attention core.
 * decode: one new token a sequence over a cache of seq tokens: ceil((seq +
 *   1) / block) blocks, all read, the last one updated (it takes the token).
 * train: the forward of prefill without a cache, the head fused with the
 *   cross-entropy and its backward, then the backward in reverse op order
 *   (derived from a tape of the forward: which inputs each backward reads
 *   and which receive a gradient), reading the forward's activations
 *   (stashed: they live until their backward), producing gradients (kind
 *   gradient; one accumulating tensor a contribution), then one Adam op a
 *   layer that reads each weight's gradient and updates the weight and its
 *   moments (kind optimizer, 8 bytes a parameter, homed on a tier).
 * Shape options: kv "host" makes the cache of a layer one block (all its
 *   cached tokens, new token included) homed on a tier and updated whole by
 *   the layer's attention core, as a decode step writes its layer's cache
 *   in place; optimizer_step "in-backward" moves each group's Adam op to
 *   right after the backward op that makes the group's last gradient (the
 *   earliest taped op reading one of its weights); optimizer_home "device"
 *   homes the moments on the device. Same ops and op times either way.
 * MoE routing is per layer, not per token (as the issue asks): a seeded
 *   draw picks top-k distinct experts of the layer and each processes all
 *   the step's tokens, so the FLOPs equal those of per-token top-k routing,
 *   while the set of expert weights read is that of one token (exact for a
 *   batch-1 decode step, fewer experts than a large batch touches). The
 *   other experts exist as weights no op reads. Routed experts are homed on
 *   a tier; every other weight on the device unless it does not fit.
 * Deterministic: no hashing order is ever walked; routing is a splitmix64
 * stream keyed by (seed, layer), so truncating the depth keeps the routing
 * of the layers kept. Building is linear in ops + tensors.
 * The graph is streamed through src/gen/build.h; this file adds the model
 * tables, the tape the backward is derived from, and the placement. */
#include "models.h"

#include "build.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DT	    2 /* bytes an element: bf16 */
#define SCORE_DT    4 /* router scores, logits of the loss: fp32 */
#define ADAM_BYTES  8 /* fp32 m and v a parameter */
#define TOKEN_BYTES 4
#define LAUNCH_S    5e-6 /* kernel launch and tail, a few us on Hopper */
#define MAX_SEQ	    ((int64_t)1 << 24)
#define MAX_BATCH   ((int64_t)1 << 16)
#define MAX_TOKENS  ((int64_t)1 << 28)
#define MAX_BLOCKS  65536 /* KV blocks a layer */
/* "auto" homes weights on the device when the graph's device-homed inputs
 * take at most this share of device memory (the rest is for activations). */
#define FIT_NUM 3
#define FIT_DEN 4

/* Public configurations (config.json of each model on Hugging Face and the
 * papers); param counts follow from them exactly, see param_count(). */
typedef struct cfg {
	const char *name;
	int32_t layers;
	int64_t hidden, heads, kv_heads, head_dim, ffn, vocab;
	int32_t dense_layers;	       /* leading layers with a dense FFN */
	int32_t experts, topk, shared; /* routed, active, shared experts */
	int64_t expert_ffn;
	bool router_bias; /* DeepSeek's e_score_correction_bias */
	bool mla;	  /* multi-head latent attention */
	int64_t q_lora, kv_lora, qk_nope, qk_rope, v_head;
} cfg;

/* clang-format off */
static const cfg models[] = {
	/* meta-llama/Meta-Llama-3-8B config.json: 32 layers, hidden 4096,
	 * 32 heads, 8 KV heads, intermediate 14336, vocab 128256, untied
	 * embeddings; model card: 8B (8,030,261,248 by this count). */
	{.name = "llama3-8b", .layers = 32, .hidden = 4096, .heads = 32,
	 .kv_heads = 8, .head_dim = 128, .ffn = 14336, .vocab = 128256,
	 .dense_layers = 32},
	/* meta-llama/Meta-Llama-3-70B config.json: 80 layers, hidden 8192,
	 * 64 heads, 8 KV heads, intermediate 28672, vocab 128256; model card:
	 * 70B (70,553,706,496 by this count). */
	{.name = "llama3-70b", .layers = 80, .hidden = 8192, .heads = 64,
	 .kv_heads = 8, .head_dim = 128, .ffn = 28672, .vocab = 128256,
	 .dense_layers = 80},
	/* mistralai/Mixtral-8x7B-v0.1 config.json: 32 layers, hidden 4096,
	 * 32 heads, 8 KV heads, 8 local experts, 2 per token, intermediate
	 * 14336, vocab 32000; Mixtral paper (arXiv:2401.04088): 47B total,
	 * 13B active (46,702,792,704 by this count). */
	{.name = "mixtral-8x7b", .layers = 32, .hidden = 4096, .heads = 32,
	 .kv_heads = 8, .head_dim = 128, .ffn = 14336, .vocab = 32000,
	 .dense_layers = 0, .experts = 8, .topk = 2, .expert_ffn = 14336},
	/* deepseek-ai/DeepSeek-V3 config.json: 61 layers, hidden 7168, 128
	 * heads, q_lora_rank 1536, kv_lora_rank 512, qk_nope_head_dim 128,
	 * qk_rope_head_dim 64, v_head_dim 128, first_k_dense_replace 3 with
	 * intermediate 18432, then 256 routed experts (8 per token) and 1
	 * shared expert of moe_intermediate 2048, vocab 129280. Technical
	 * report (arXiv:2412.19437): 671B total, 37B active; the Hugging Face
	 * checkpoint's 685B adds the 14B multi-token-prediction module, which
	 * is left out here (671,026,419,200 by this count). */
	{.name = "deepseek-v3", .layers = 61, .hidden = 7168, .heads = 128,
	 .vocab = 129280, .ffn = 18432, .dense_layers = 3, .experts = 256,
	 .topk = 8, .shared = 1, .expert_ffn = 2048, .router_bias = true,
	 .mla = true, .q_lora = 1536, .kv_lora = 512, .qk_nope = 128,
	 .qk_rope = 64, .v_head = 128},
};
/* clang-format on */
#define NMODELS ((int)(sizeof models / sizeof *models))

static const char *const model_names[] = {"llama3-8b", "llama3-70b",
					  "mixtral-8x7b", "deepseek-v3", NULL};

/* Machine presets. Device figures are the vendors' dense bf16 tensor rates
 * and HBM bandwidths; host links are measured copy rates, not line rates. */
typedef struct machine {
	const char *name;
	hoff_machine_info info; /* all but the name */
} machine;

/* PCIe 5.0 x16: 64 GB/s a direction on the wire; NVIDIA's nvbandwidth
 * host_to_device_memcpy_ce measures about 55 GB/s from pinned memory on
 * Gen5 hosts, about the same back. The latency is an assumption: the
 * submit-to-first-byte cost of a cudaMemcpyAsync, a few to ~10 us. A 2 TB
 * DDR5 host is an assumption (a 2-socket server).
 * Duplex (FORMAT.md rule 3): 0.92 each way, this project's own
 * measurement of pinned copies over a Gen5 x16 host link on an NVIDIA
 * H200 (bench/README.md, "Pinned copies, alone and both directions at
 * once", 1 GiB row: h2d 55.42 GB/s alone, 51.18 both at once, 0.924;
 * d2h 55.37 and 50.89, 0.919; README "Measured on an NVIDIA H200"). The
 * H100 PCIe preset gets the same factors for the same reason: its host
 * link is the same PCIe 5.0 x16 and no H100 was measured. */
#define PCIE5_HOST(cap)                                      \
	{                                                    \
		"host", (cap), 55e9, 55e9, 10e-6, 0.92, 0.92 \
	}

/* Left unformatted: clang-format would give each field a line. */
/* clang-format off */
static const machine machines[] = {
	/* H100 PCIe 80GB datasheet: 756 TFLOPS bf16 dense (1513 with
	 * sparsity), HBM2e 2.0 TB/s. */
	{"h100-pcie5", {"H100-PCIe-80GB", 80000000000, 756e12, 2.0e12, 1,
	  {PCIE5_HOST(2000000000000)}}},
	/* H200 SXM datasheet: 141 GB HBM3e at 4.8 TB/s, 989 TFLOPS bf16
	 * dense; host over PCIe 5.0 as above (duplex measured on an H200). */
	{"h200", {"H200-SXM-141GB", 141000000000, 989e12, 4.8e12, 1,
	  {PCIE5_HOST(2000000000000)}}},
	/* GH200 96GB: HBM3 4.0 TB/s, 989 TFLOPS; Grace LPDDR5X 480 GB over
	 * NVLink-C2C, 450 GB/s a direction by spec (900 GB/s total); measured
	 * 375 GB/s host-to-device and 297 GB/s device-to-host (Li et al.,
	 * "Harnessing Integrated CPU-GPU System Memory for HPC: a first look
	 * into Grace Hopper", ICPP 2024, arXiv:2407.07850). Latency 5 us is an
	 * assumption (copy-engine submit; no PCIe round trips). Duplex: the
	 * C2C link carries about 300 GB/s in total with both directions busy
	 * against 360-380 GB/s one way (the figure issue 30 cites); how the
	 * 300 splits is not published, so both directions get the same
	 * factor, 300 / (375 + 297) = 0.446. */
	{"gh200", {"GH200-96GB", 96000000000, 989e12, 4.0e12, 1,
	  {{"host", 480000000000, 375e9, 297e9, 5e-6, 0.446, 0.446}}}},
	/* A supernode device: H200-class compute and HBM, a host DDR share
	 * over PCIe 5.0 (512 GB is an assumption; duplex as measured above),
	 * and a memory pool shared by the node's devices over the scale-out
	 * RDMA network. The pool is an assumption in the spirit of Huawei's
	 * CloudMatrix384 (arXiv: 2506.12708: a 400 Gb/s RDMA plane per NPU,
	 * 50 GB/s on the wire) and of CXL memory pools: 40 GB/s effective
	 * each way, 20 us a transfer, 16 TB. Its duplex factors are 1: no
	 * measurement of such a pool exists to take them from. */
	{"supernode", {"H200-class", 141000000000, 989e12, 4.8e12, 2,
	  {PCIE5_HOST(512000000000),
	   {"remote", 16000000000000, 40e9, 40e9, 20e-6, 1, 1}}}},
	/* A100 PCIe 80GB datasheet: 312 TFLOPS bf16 dense, HBM2e 1.935 TB/s;
	 * host over PCIe 4.0 x16. NVIDIA's nvbandwidth on Gen4 hosts: about
	 * 25 GB/s host-to-device and 24 GB/s device-to-host alone; both at
	 * once, host-to-device falls to 11-13 GB/s while device-to-host keeps
	 * about 24 GB/s (the figures issue 30 cites): h2d 12 / 25 = 0.48,
	 * d2h 0.98 (it keeps its rate, less a little). Latency and the 1 TB
	 * host are assumptions, as for Gen5. */
	{"a100-pcie4", {"A100-PCIe-80GB", 80000000000, 312e12, 1.935e12, 1,
	  {{"host", 1000000000000, 25e9, 24e9, 10e-6, 0.48, 0.98}}}},
};
/* clang-format on */
#define NMACHINES ((int)(sizeof machines / sizeof *machines))

static const char *const machine_names[] = {"h100-pcie5", "h200",	"gh200",
					    "supernode",  "a100-pcie4", NULL};

enum { P_PREFILL, P_DECODE, P_TRAIN, NPHASES };
static const char *const phase_names[NPHASES + 1] = {"prefill", "decode",
						     "train", NULL};

enum {
	K_EMBED,
	K_NORM,
	K_MATMUL,
	K_ATTN,
	K_ROUTER,
	K_EXPERT,
	K_LOSS,
	K_OPT,
	NK
};
static const char *const kind_names[NK] = {
	"embed",  "norm",   "matmul", "attention",
	"router", "expert", "loss",   "optimizer",
};

/* Tape flags of a forward op's tensor: its backward reads the value
 * (SAVE), it receives a gradient (DIFF), it is an output (OUT) or a weight
 * (W; a weight always receives a gradient). */
enum { F_SAVE = 1, F_DIFF = 2, F_OUT = 4, F_W = 8 };

typedef struct item {
	int32_t t;
	uint8_t f;
} item;

typedef struct entry {
	int32_t op; /* the forward op */
	int kind;
	double flops;	 /* of the forward */
	double factor;	 /* backward flops / forward flops */
	int64_t bws;	 /* workspace of the backward */
	size_t first, n; /* its items */
} entry;

typedef struct bld {
	hoff_build gb; /* the graph; its first failure stops every call */
	const cfg *c;
	const machine *m;
	const hoff_model_opts *o;
	int phase;
	int32_t L;	    /* layers built */
	int64_t T;	    /* tokens through the layers */
	int64_t Th;	    /* tokens through the final norm and head */
	int64_t S;	    /* seq */
	int64_t ctx;	    /* decode: tokens attended, cache + new */
	int64_t nblk;	    /* KV blocks a layer */
	int64_t kvtok;	    /* KV bytes a token a layer */
	int64_t blk_tokens; /* tokens a KV block */
	bool kv_host;	    /* one KV block a layer, homed on the first tier */
	bool kv_device;	    /* KV blocks stay on the device */
	bool opt_in_backward, opt_device; /* the optimizer's step and home */
	const char *kind[NK], *bkind[NK]; /* interned op kinds */
	bool taping;			  /* the current op is on the tape */
	entry *ent;
	size_t nent, ent_cap;
	item *it;
	size_t nit, it_cap;
	int32_t *w;    /* weights in creation order (grouped by layer) */
	int32_t *wgrp; /* their optimizer groups: 0 embedding, 1 + layer,
			  L + 1 final norm and head */
	size_t nw, w_cap, wgrp_cap;
	int32_t group;	 /* group of the weights being created */
	int32_t *grad;	 /* (ntensors) current gradient of a tensor */
	uint16_t *ngrad; /* (ntensors) gradients made so far */
} bld;

/* ---- configurations ---------------------------------------------------- */

static const cfg *find_cfg(const char *name)
{
	for (int i = 0; name && i < NMODELS; i++)
		if (strcmp(models[i].name, name) == 0)
			return &models[i];
	return NULL;
}

static const machine *find_machine(const char *name)
{
	for (int i = 0; name && i < NMACHINES; i++)
		if (strcmp(machines[i].name, name) == 0)
			return &machines[i];
	return NULL;
}

static bool moe_layer(const cfg *c, int32_t l)
{
	return c->experts > 0 && l >= c->dense_layers;
}

/* Parameters of the shapes below, one function a weight group, shared by
 * the counter and the builder so that both agree by construction. */
static int64_t p_q(const cfg *c)
{
	return c->hidden * c->heads * c->head_dim;
}
static int64_t p_kv(const cfg *c)
{
	return c->hidden * c->kv_heads * c->head_dim;
}
static int64_t d_qk(const cfg *c)
{
	return c->qk_nope + c->qk_rope;
}
static int64_t d_attn_out(const cfg *c)
{
	return c->mla ? c->heads * c->v_head : c->heads * c->head_dim;
}
static int64_t p_expert(const cfg *c) /* gate, up and down, fused */
{
	return 3 * c->hidden * c->expert_ffn;
}
static int64_t p_router(const cfg *c)
{
	return c->experts * c->hidden + (c->router_bias ? c->experts : 0);
}

static int64_t layer_params(const cfg *c, int32_t l)
{
	const int64_t H = c->hidden;
	int64_t p = 2 * H; /* attn_norm, ffn_norm */
	if (c->mla)	   /* q_a, its norm, q_b, kv_a, its norm, kv_b */
		p += H * c->q_lora + c->q_lora +
		     c->q_lora * c->heads * d_qk(c) +
		     H * (c->kv_lora + c->qk_rope) + c->kv_lora +
		     c->kv_lora * c->heads * (c->qk_nope + c->v_head);
	else /* q, k, v */
		p += p_q(c) + 2 * p_kv(c);
	p += d_attn_out(c) * H; /* o_proj */
	if (moe_layer(c, l))
		p += (int64_t)(c->experts + c->shared) * p_expert(c) +
		     p_router(c);
	else
		p += 3 * H * c->ffn;
	return p;
}

static int64_t param_count(const cfg *c, int32_t L)
{
	int64_t p = 2 * c->vocab * c->hidden + c->hidden; /* embed, head, norm
							   */
	for (int32_t l = 0; l < L; l++)
		p += layer_params(c, l);
	return p;
}

int64_t hoff_model_param_count(const char *model)
{
	const cfg *c = find_cfg(model);
	return c ? param_count(c, c->layers) : -1;
}

int32_t hoff_model_depth(const char *model)
{
	const cfg *c = find_cfg(model);
	return c ? c->layers : -1;
}

const char *const *hoff_model_names(void)
{
	return model_names;
}
const char *const *hoff_model_phases(void)
{
	return phase_names;
}
const char *const *hoff_machine_names(void)
{
	return machine_names;
}

/* ---- routing ----------------------------------------------------------- */

/* The k experts of layer l, ascending: a partial Fisher-Yates shuffle of
 * perm (E slots) drawn from a stream keyed by (seed, l). */
static void route(uint64_t seed, int32_t l, int32_t E, int32_t k, int32_t *perm,
		  int32_t *pick)
{
	uint64_t s = seed ^ (0xd1b54a32d192ed03u * (uint64_t)(l + 1));
	for (int32_t i = 0; i < E; i++)
		perm[i] = i;
	for (int32_t j = 0; j < k; j++) {
		int32_t x =
			j + (int32_t)(hoff_build_rand(&s) % (uint64_t)(E - j));
		int32_t t = perm[j];
		perm[j] = perm[x];
		perm[x] = t;
	}
	for (int32_t j = 0; j < k; j++) { /* insertion sort: k is small */
		int32_t v = perm[j], i = j;
		for (; i > 0 && pick[i - 1] > v; i--)
			pick[i] = pick[i - 1];
		pick[i] = v;
	}
}

/* ---- builder helpers ----------------------------------------------------- */

#define TIER 0 /* a home on the first tier; place() picks the final one */

static void oom(bld *b)
{
	if (b->gb.st == HOFF_OK)
		b->gb.st = hoff_seterr(b->gb.e, HOFF_ENOMEM,
				       "model: out of memory");
}

/* Starts an op "layers.<l>.<suffix>" (l in 0 .. L-1) or "<suffix>" (l < 0:
 * the embedding, op layer 0; l == L: the head, op layer L). With factor >
 * 0 in training, the op goes on the tape and gets a backward of factor
 * times its flops. */
static bool op(bld *b, int kind, int32_t l, double factor, const char *suffix)
{
	bool ok = l >= 0 && l < b->L
			  ? hoff_build_op(&b->gb, b->kind[kind], l,
					  "layers.%d.%s", (int)l, suffix)
			  : hoff_build_op(&b->gb, b->kind[kind], l < 0 ? 0 : l,
					  "%s", suffix);
	b->taping = ok && b->phase == P_TRAIN && factor > 0;
	if (b->taping && !hoff_grow((void **)&b->ent, &b->ent_cap, b->nent + 1,
				    sizeof *b->ent)) {
		oom(b);
		return false;
	}
	if (b->taping)
		b->ent[b->nent++] = (entry){.op = b->gb.g->nops - 1,
					    .kind = kind,
					    .factor = factor,
					    .first = b->nit};
	return ok;
}

/* Adds t to list u of the current op and, when taping, to its tape entry
 * with flags f. */
static void use(bld *b, hoff_use u, int32_t t, uint8_t f)
{
	hoff_build_use(&b->gb, u, t);
	if (b->gb.st != HOFF_OK || t == HOFF_NONE || !b->taping ||
	    u == HOFF_USE_UPD)
		return;
	if (!hoff_grow((void **)&b->it, &b->it_cap, b->nit + 1,
		       sizeof *b->it)) {
		oom(b);
		return;
	}
	b->it[b->nit++] =
		(item){t, (uint8_t)(f | (u == HOFF_USE_OUT ? F_OUT : 0))};
	b->ent[b->nent - 1].n++;
}

static void in(bld *b, int32_t t, uint8_t f)
{
	use(b, HOFF_USE_IN, t, f);
}

/* A tensor "<op id>.<suffix>" the current op produces. */
static int32_t out(bld *b, int64_t bytes, int kind, uint8_t f,
		   const char *suffix)
{
	int32_t t = hoff_build_tensor(&b->gb, bytes, kind, HOFF_BUILD_PRODUCED,
				      "%s.%s", b->gb.id, suffix);
	use(b, HOFF_USE_OUT, t, f);
	return t;
}

/* Records weight tensor t in the current optimizer group. */
static int32_t weight_t(bld *b, int32_t t)
{
	if (t == HOFF_NONE)
		return t;
	if (!hoff_grow((void **)&b->w, &b->w_cap, b->nw + 1, sizeof *b->w) ||
	    !hoff_grow((void **)&b->wgrp, &b->wgrp_cap, b->nw + 1,
		       sizeof *b->wgrp)) {
		oom(b);
		return HOFF_NONE;
	}
	b->w[b->nw] = t;
	b->wgrp[b->nw++] = b->group;
	return t;
}

/* A device-homed weight of `params` parameters, "<op id>.<suffix>". */
static int32_t weight(bld *b, int64_t params, const char *suffix)
{
	return weight_t(b, hoff_build_tensor(&b->gb, params * DT,
					     HOFF_KIND_WEIGHT, HOFF_DEVICE,
					     "%s.%s", b->gb.id, suffix));
}

/* Roofline inputs of the current op; bytes < 0: those of its lists. */
static void cost(bld *b, double flops, double bytes)
{
	hoff_build_cost(&b->gb, flops, bytes);
	if (b->gb.st == HOFF_OK && b->taping)
		b->ent[b->nent - 1].flops = flops;
}

/* Workspace of the current op (ws) and of its backward (bws). */
static void workspace(bld *b, int64_t ws, int64_t bws)
{
	hoff_build_workspace(&b->gb, ws);
	if (b->gb.st == HOFF_OK && b->taping)
		b->ent[b->nent - 1].bws = bws;
}

/* ---- layers ----------------------------------------------------------------
 */

/* RMSNorm of x (rows x width): "<suffix>" with weight "<suffix>.weight". */
static int32_t norm(bld *b, int32_t l, const char *suffix, int32_t x,
		    int64_t rows, int64_t width)
{
	if (!op(b, K_NORM, l, 2.0, suffix))
		return HOFF_NONE;
	in(b, x, F_SAVE | F_DIFF);
	in(b, weight(b, width, "weight"), F_W | F_SAVE);
	int32_t y =
		out(b, rows * width * DT, HOFF_KIND_ACTIVATION, F_DIFF, "out");
	cost(b, 4.0 * (double)rows * (double)width,
	     (double)(2 * rows * width * DT + width * DT));
	return y;
}

/* y = x W (T x K times K x N), optionally with an RMSNorm of x fused in
 * front (weight "norm.weight" of K) and a residual added (res). */
static int32_t proj(bld *b, int32_t l, const char *suffix, int32_t x, int64_t K,
		    int64_t N, bool fused_norm, int32_t res)
{
	if (!op(b, K_MATMUL, l, 2.0, suffix))
		return HOFF_NONE;
	in(b, x, F_SAVE | F_DIFF);
	if (fused_norm)
		in(b, weight(b, K, "norm.weight"), F_W | F_SAVE);
	in(b, weight(b, K * N, "weight"), F_W | F_SAVE);
	in(b, res, F_DIFF);
	int32_t y = out(b, b->T * N * DT, HOFF_KIND_ACTIVATION, F_DIFF, "out");
	cost(b, 2.0 * (double)b->T * (double)K * (double)N, -1);
	return y;
}

/* The KV blocks of layer l, graph inputs: "layers.<l>.kv.<j>" homed on
 * the device, or with the cache on the host one block "layers.<l>.kv" of
 * the whole layer's cache homed on a tier. */
static void kv_blocks(bld *b, int32_t l, int32_t *blk)
{
	int64_t bytes = b->o->batch * b->blk_tokens * b->kvtok;
	if (b->kv_host) {
		blk[0] = hoff_build_tensor(&b->gb, bytes, HOFF_KIND_KV, TIER,
					   "layers.%d.kv", (int)l);
		return;
	}
	for (int64_t j = 0; j < b->nblk; j++)
		blk[j] = hoff_build_tensor(&b->gb, bytes, HOFF_KIND_KV,
					   HOFF_DEVICE, "layers.%d.kv.%lld",
					   (int)l, (long long)j);
}

/* The attention core: reads q and the current keys and values (acts),
 * and at inference the layer's KV blocks: prefill updates them all, decode
 * reads them all and updates the last (with the cache on the host, the one
 * block of the layer: a decode step writes the layer's cache in place). */
static int32_t attn_core(bld *b, int32_t l, const int32_t *acts, int nacts,
			 const int32_t *blk, const int32_t *extra_w, int nw,
			 double flops, double bytes)
{
	if (!op(b, K_ATTN, l, 2.5, "attn.core"))
		return HOFF_NONE;
	for (int i = 0; i < nacts; i++)
		in(b, acts[i], F_SAVE | F_DIFF);
	for (int i = 0; i < nw; i++)
		in(b, extra_w[i], F_W | F_SAVE);
	if (b->phase == P_DECODE) {
		for (int64_t j = 0; j + 1 < b->nblk; j++)
			in(b, blk[j], 0);
		use(b, HOFF_USE_UPD, blk[b->nblk - 1], 0);
	} else if (b->phase == P_PREFILL) {
		for (int64_t j = 0; j < b->nblk; j++)
			use(b, HOFF_USE_UPD, blk[j], 0);
	}
	int32_t o = out(b, b->T * d_attn_out(b->c) * DT, HOFF_KIND_ACTIVATION,
			F_SAVE | F_DIFF, "out");
	if (b->gb.st != HOFF_OK)
		return HOFF_NONE;
	for (int i = 0; i < nacts; i++)
		bytes += (double)b->gb.g->tensor[acts[i]].bytes;
	bytes += (double)b->gb.g->tensor[o].bytes;
	cost(b, flops, bytes);
	return o;
}

/* Attention of layer l on the residual stream h; returns h + attn(h). */
static int32_t attention(bld *b, int32_t l, int32_t h, int32_t *blk)
{
	const cfg *c = b->c;
	const int64_t H = c->hidden, T = b->T, nh = c->heads;
	const double batch = (double)b->o->batch, S = (double)b->S;
	/* Cache traffic: prefill writes T tokens; decode reads ctx tokens. */
	double cache = b->phase == P_PREFILL ? (double)T * (double)b->kvtok
		       : b->phase == P_DECODE
			       ? batch * (double)b->ctx * (double)b->kvtok
			       : 0;
	if (b->phase != P_TRAIN)
		kv_blocks(b, l, blk);
	int32_t x1 = norm(b, l, "attn_norm", h, T, H);
	int32_t o;
	if (!c->mla) {
		const int64_t dq = c->heads * c->head_dim;
		const int64_t dkv = c->kv_heads * c->head_dim;
		int32_t a[3];
		a[0] = proj(b, l, "attn.q_proj", x1, H, dq, false, HOFF_NONE);
		a[1] = proj(b, l, "attn.k_proj", x1, H, dkv, false, HOFF_NONE);
		a[2] = proj(b, l, "attn.v_proj", x1, H, dkv, false, HOFF_NONE);
		/* Causal: S^2/2 scores a sequence, QK^T and PV each 2 flops a
		 * product; decode attends ctx positions for one query. */
		double d = (double)(2 * c->head_dim);
		double flops =
			b->phase == P_DECODE
				? 2.0 * batch * (double)b->ctx * (double)nh * d
				: batch * S * S * (double)nh * d;
		o = attn_core(b, l, a, 3, blk, NULL, 0, flops, cache);
		return proj(b, l, "attn.o_proj", o, dq, H, false, h);
	}
	/* MLA: the cache holds the normed latent (kv_lora) and the rope key
	 * (qk_rope) a token. Prefill and training up-project the latent to
	 * per-head keys and values (kv_b_proj); decode absorbs kv_b_proj into
	 * the query and the output instead, so the core reads its weights. */
	int32_t qa =
		proj(b, l, "attn.q_a_proj", x1, H, c->q_lora, false, HOFF_NONE);
	int32_t a[3];
	a[0] = proj(b, l, "attn.q_b_proj", qa, c->q_lora, nh * d_qk(c), true,
		    HOFF_NONE);
	a[1] = proj(b, l, "attn.kv_a_proj", x1, H, c->kv_lora + c->qk_rope,
		    false, HOFF_NONE);
	const int64_t dkvb = nh * (c->qk_nope + c->v_head);
	if (b->phase != P_DECODE) {
		a[2] = proj(b, l, "attn.kv_b_proj", a[1], c->kv_lora, dkvb,
			    true, HOFF_NONE);
		double flops = batch * S * S * (double)nh *
			       (double)(d_qk(c) + c->v_head);
		o = attn_core(b, l, a, 3, blk, NULL, 0, flops, cache);
	} else {
		int32_t w[2];
		w[0] = weight_t(b,
				hoff_build_tensor(
					&b->gb, c->kv_lora * DT,
					HOFF_KIND_WEIGHT, HOFF_DEVICE,
					"layers.%d.attn.kv_b_proj.norm.weight",
					(int)l));
		w[1] = weight_t(
			b, hoff_build_tensor(&b->gb, c->kv_lora * dkvb * DT,
					     HOFF_KIND_WEIGHT, HOFF_DEVICE,
					     "layers.%d.attn.kv_b_proj.weight",
					     (int)l));
		const double ctx = (double)b->ctx, r = (double)c->kv_lora;
		double flops = 2.0 * batch * (double)nh *
			       (ctx * (r + (double)c->qk_rope) + ctx * r +
				(double)c->qk_nope * r + r * (double)c->v_head);
		double wb = b->gb.st == HOFF_OK
				    ? (double)(b->gb.g->tensor[w[0]].bytes +
					       b->gb.g->tensor[w[1]].bytes)
				    : 0;
		o = attn_core(b, l, a, 2, blk, w, 2, flops, cache + wb);
	}
	return proj(b, l, "attn.o_proj", o, nh * c->v_head, H, false, h);
}

/* One expert op "<suffix>": SwiGLU of x2 through weight w (gate, up and
 * down fused; ffn wide), scaled by the router's scores (when probs is
 * set), added to acc. Training stashes the gate and up activations. */
static int32_t expert(bld *b, int32_t l, const char *suffix, int32_t x2,
		      int32_t probs, int32_t w, int32_t acc, int64_t ffn)
{
	if (!op(b, K_EXPERT, l, 2.0, suffix))
		return HOFF_NONE;
	const int64_t T = b->T, H = b->c->hidden, mid = T * 2 * ffn * DT;
	in(b, x2, F_SAVE | F_DIFF);
	in(b, probs, F_SAVE | F_DIFF);
	in(b, w, F_W | F_SAVE);
	in(b, acc, F_DIFF);
	int32_t y = out(b, T * H * DT, HOFF_KIND_ACTIVATION, F_DIFF, "out");
	if (b->phase == P_TRAIN)
		out(b, mid, HOFF_KIND_ACTIVATION, F_SAVE, "stash");
	workspace(b, b->phase == P_TRAIN ? 0 : mid, mid);
	cost(b, 6.0 * (double)T * (double)H * (double)ffn, -1);
	return y;
}

/* FFN of layer l on the residual stream h2; returns h2 + ffn(h2). */
static int32_t ffn(bld *b, int32_t l, int32_t h2, int32_t *perm, int32_t *pick,
		   int32_t *ew)
{
	const cfg *c = b->c;
	const int64_t H = c->hidden, T = b->T;
	int32_t x2 = norm(b, l, "ffn_norm", h2, T, H);
	if (!moe_layer(c, l)) {
		int32_t gt = proj(b, l, "mlp.gate_proj", x2, H, c->ffn, false,
				  HOFF_NONE);
		int32_t up = proj(b, l, "mlp.up_proj", x2, H, c->ffn, false,
				  HOFF_NONE);
		if (!op(b, K_MATMUL, l, 2.0, "mlp.down_proj"))
			return HOFF_NONE;
		in(b, gt, F_SAVE | F_DIFF);
		in(b, up, F_SAVE | F_DIFF);
		in(b, weight(b, c->ffn * H, "weight"), F_W | F_SAVE);
		in(b, h2, F_DIFF);
		int32_t y =
			out(b, T * H * DT, HOFF_KIND_ACTIVATION, F_DIFF, "out");
		cost(b, 2.0 * (double)T * (double)c->ffn * (double)H, -1);
		return y;
	}
	/* Every routed expert of the layer exists, homed on a tier. */
	for (int32_t x = 0; x < c->experts; x++)
		ew[x] = weight_t(
			b, hoff_build_tensor(&b->gb, p_expert(c) * DT,
					     HOFF_KIND_WEIGHT, TIER,
					     "layers.%d.moe.experts.%d.weight",
					     (int)l, (int)x));
	if (!op(b, K_ROUTER, l, 2.0, "moe.router"))
		return HOFF_NONE;
	in(b, x2, F_SAVE | F_DIFF);
	in(b, weight(b, p_router(c), "weight"), F_W | F_SAVE);
	int32_t probs = out(b, T * c->experts * SCORE_DT, HOFF_KIND_ACTIVATION,
			    F_SAVE | F_DIFF, "out");
	cost(b, 2.0 * (double)T * (double)H * (double)c->experts, -1);
	int32_t acc = h2;
	if (c->shared > 0) {
		if (!op(b, K_EXPERT, l, 2.0, "moe.shared_expert"))
			return HOFF_NONE;
		int64_t f = c->shared * c->expert_ffn;
		int64_t mid = T * 2 * f * DT;
		in(b, x2, F_SAVE | F_DIFF);
		in(b, weight(b, 3 * H * f, "weight"), F_W | F_SAVE);
		in(b, acc, F_DIFF);
		acc = out(b, T * H * DT, HOFF_KIND_ACTIVATION, F_DIFF, "out");
		if (b->phase == P_TRAIN)
			out(b, mid, HOFF_KIND_ACTIVATION, F_SAVE, "stash");
		workspace(b, b->phase == P_TRAIN ? 0 : mid, mid);
		cost(b, 6.0 * (double)T * (double)H * (double)f, -1);
	}
	route(b->o->seed, l, c->experts, c->topk, perm, pick);
	for (int32_t j = 0; j < c->topk; j++) {
		char s[48];
		snprintf(s, sizeof s, "moe.experts.%d", (int)pick[j]);
		acc = expert(b, l, s, x2, probs, ew[pick[j]], acc,
			     c->expert_ffn);
	}
	return acc;
}

/* ---- training: backward and optimizer ----------------------------------- */

/* A gradient tensor for t: "<id>.grad", then "<id>.grad.<n>" for each
 * further contribution (the earlier one is read and accumulated). */
static int32_t new_grad(bld *b, int32_t t)
{
	if (b->gb.st != HOFF_OK)
		return HOFF_NONE;
	/* Copies: adding a tensor may move g->tensor (ids are pooled). */
	const int64_t bytes = b->gb.g->tensor[t].bytes;
	const char *id = b->gb.g->tensor[t].id;
	assert(b->ngrad[t] < UINT16_MAX); /* a handful of readers at most */
	if (b->ngrad[t]++ == 0)
		return hoff_build_tensor(&b->gb, bytes, HOFF_KIND_GRADIENT,
					 HOFF_BUILD_PRODUCED, "%s.grad", id);
	return hoff_build_tensor(&b->gb, bytes, HOFF_KIND_GRADIENT,
				 HOFF_BUILD_PRODUCED, "%s.grad.%d", id,
				 (int)b->ngrad[t] - 1);
}

/* The backward of tape entry e: reads the gradients of its outputs, the
 * values its forward saved and the previous partial gradient of each input
 * it accumulates into. Nothing when nothing downstream of it is
 * differentiated. */
static void backward_op(bld *b, size_t e)
{
	hoff_graph *g = b->gb.g;
	const entry *en = &b->ent[e];
	const item *it = &b->it[en->first];
	bool any = false;
	for (size_t i = 0; i < en->n; i++)
		any |= (it[i].f & (F_OUT | F_DIFF)) == (F_OUT | F_DIFF) &&
		       b->grad[it[i].t] != HOFF_NONE;
	if (!any)
		return;
	const hoff_op *fo = &g->op[en->op];
	b->taping = false;
	if (!hoff_build_op(&b->gb, b->bkind[en->kind], fo->layer, "%s.bwd",
			   fo->id))
		return;
	for (size_t i = 0; i < en->n; i++)
		if ((it[i].f & (F_OUT | F_DIFF)) == (F_OUT | F_DIFF))
			in(b, b->grad[it[i].t], 0);
	for (size_t i = 0; i < en->n; i++)
		if (it[i].f & F_SAVE)
			in(b, it[i].t, 0);
	for (size_t i = 0; i < en->n; i++) {
		int32_t t = it[i].t;
		if ((it[i].f & F_OUT) || !(it[i].f & (F_DIFF | F_W)))
			continue;
		assert(!(it[i].f & F_W) || b->grad[t] == HOFF_NONE);
		in(b, b->grad[t], 0); /* accumulate into it */
		int32_t gt = new_grad(b, t);
		use(b, HOFF_USE_OUT, gt, 0);
		b->grad[t] = gt;
	}
	cost(b, en->factor * en->flops, -1);
	workspace(b, en->bws, 0);
}

/* One Adam step for optimizer group grp (0 the embedding, 1 + l layer l,
 * L + 1 the final norm and the head), whose weights are b->w[lo .. hi):
 * reads each weight's gradient, updates the weight and its moments (8
 * bytes a parameter). Nothing when no weight of the group has a gradient. */
static void adam(bld *b, int32_t grp, size_t lo, size_t hi)
{
	bool any = false;
	for (size_t x = lo; x < hi; x++)
		any |= b->grad[b->w[x]] != HOFF_NONE;
	if (!any || b->gb.st != HOFF_OK)
		return;
	bool ok = grp == 0     ? op(b, K_OPT, -1, 0, "embed.adam")
		  : grp > b->L ? op(b, K_OPT, b->L, 0, "head.adam")
			       : op(b, K_OPT, grp - 1, 0, "adam");
	if (!ok)
		return;
	int home = b->opt_device ? HOFF_DEVICE : TIER;
	double params = 0;
	for (size_t x = lo; x < hi; x++) {
		int32_t w = b->w[x];
		if (b->grad[w] == HOFF_NONE)
			continue; /* an expert no op used */
		const hoff_tensor *t = &b->gb.g->tensor[w];
		int64_t p = t->bytes / DT;
		int32_t m = hoff_build_tensor(&b->gb, p * ADAM_BYTES,
					      HOFF_KIND_OPTIMIZER, home,
					      "%s.adam", t->id);
		in(b, b->grad[w], 0);
		use(b, HOFF_USE_UPD, w, 0);
		use(b, HOFF_USE_UPD, m, 0);
		params += (double)p;
	}
	/* About a dozen flops a parameter; memory bound. */
	cost(b, 12.0 * params, -1);
}

/* The backward of every taped op, last first, and the optimizer. With the
 * step at the end, one Adam op a group in model order after the whole
 * backward. In the backward, a group's Adam op comes right after the
 * backward op of the group's earliest taped weight use (the tape runs
 * backwards, so that op makes the group's last gradient); a group no taped
 * op reads (gradients from the fused head only) goes first. Weights are
 * created group by group, so a group is a range of b->w. */
static void backward(bld *b)
{
	const int32_t ng = b->L + 2;
	size_t *lo = hoff_alloc((size_t)ng + 1, sizeof *lo);
	int64_t *fin = hoff_alloc((size_t)ng, sizeof *fin);
	int32_t *grp = hoff_alloc((size_t)b->gb.g->ntensors, sizeof *grp);
	int32_t *order = hoff_alloc((size_t)ng, sizeof *order);
	if (!lo || !fin || !grp || !order) {
		oom(b);
		goto out;
	}
	for (int32_t t = 0; t < b->gb.g->ntensors; t++)
		grp[t] = -1;
	for (int32_t x = 0, i = 0; x <= ng; x++) {
		while ((size_t)i < b->nw && b->wgrp[i] < x)
			i++;
		lo[x] = (size_t)i; /* group x is b->w[lo[x] .. lo[x + 1]) */
	}
	for (size_t i = 0; i < b->nw; i++) {
		assert(i == 0 || b->wgrp[i - 1] <= b->wgrp[i]);
		grp[b->w[i]] = b->wgrp[i];
	}
	for (int32_t x = 0; x < ng; x++)
		fin[x] = (int64_t)b->nent; /* before the first backward op */
	for (size_t e = b->nent; e-- > 0;)
		for (size_t i = 0; i < b->ent[e].n; i++) {
			const item *it = &b->it[b->ent[e].first + i];
			if ((it->f & F_W) && grp[it->t] >= 0)
				fin[grp[it->t]] = (int64_t)e;
		}
	/* Groups by when they finish, latest entry first; ties in reverse
	 * model order, as the backward runs. */
	int32_t n = 0;
	for (int32_t x = ng; x-- > 0;) {
		int32_t j = n++;
		for (; j > 0 && fin[order[j - 1]] < fin[x]; j--)
			order[j] = order[j - 1];
		order[j] = x;
	}
	int32_t next = 0;
	if (b->opt_in_backward)
		for (; next < ng && fin[order[next]] == (int64_t)b->nent;
		     next++)
			adam(b, order[next], lo[order[next]],
			     lo[order[next] + 1]);
	for (size_t e = b->nent; e-- > 0 && b->gb.st == HOFF_OK;) {
		backward_op(b, e);
		if (b->opt_in_backward)
			for (; next < ng && fin[order[next]] == (int64_t)e;
			     next++)
				adam(b, order[next], lo[order[next]],
				     lo[order[next] + 1]);
	}
	if (!b->opt_in_backward)
		for (int32_t x = 0; x < ng; x++)
			adam(b, x, lo[x], lo[x + 1]);
	assert(b->gb.st != HOFF_OK || !b->opt_in_backward || next == ng);
out:
	free(lo);
	free(fin);
	free(grp);
	free(order);
}

/* ---- whole graph --------------------------------------------------------- */

static void build(bld *b)
{
	const cfg *c = b->c;
	const int64_t H = c->hidden, T = b->T, V = c->vocab;
	const int32_t L = b->L;
	size_t E = c->experts > 0 ? (size_t)c->experts : 1;
	int32_t *perm = hoff_alloc(E, sizeof *perm);
	int32_t *pick = hoff_alloc(E, sizeof *pick);
	int32_t *ew = hoff_alloc(E, sizeof *ew);
	int32_t *blk = hoff_alloc((size_t)b->nblk + 1, sizeof *blk);
	if (!perm || !pick || !ew || !blk) {
		oom(b);
		goto out;
	}

	b->group = 0;
	if (!op(b, K_EMBED, -1, 1.0, "embed"))
		goto out;
	in(b,
	   hoff_build_tensor(&b->gb, T * TOKEN_BYTES, HOFF_KIND_INPUT,
			     HOFF_DEVICE, "tokens"),
	   F_SAVE);
	in(b, weight(b, V * H, "weight"), F_W);
	int32_t h = out(b, T * H * DT, HOFF_KIND_ACTIVATION, F_DIFF, "out");
	/* Gathers T rows of the table. */
	cost(b, 0, (double)(T * TOKEN_BYTES + 2 * T * H * DT));

	for (int32_t l = 0; l < L && b->gb.st == HOFF_OK; l++) {
		b->group = l + 1;
		int32_t h2 = attention(b, l, h, blk);
		h = ffn(b, l, h2, perm, pick, ew);
	}

	b->group = L + 1;
	/* The final norm: at inference only the last token of each sequence
	 * goes on to the head. */
	if (!op(b, K_NORM, L, 2.0, "norm"))
		goto out;
	in(b, h, F_SAVE | F_DIFF);
	int32_t wn = weight(b, H, "weight");
	in(b, wn, F_W | F_SAVE);
	int32_t xf =
		out(b, b->Th * H * DT, HOFF_KIND_ACTIVATION, F_DIFF, "out");
	cost(b, 4.0 * (double)b->Th * (double)H,
	     (double)(2 * b->Th * H * DT + H * DT));

	if (b->phase != P_TRAIN) {
		if (!op(b, K_MATMUL, L, 0, "lm_head"))
			goto out;
		in(b, xf, 0);
		in(b, weight(b, V * H, "weight"), 0);
		int32_t y = hoff_build_tensor(&b->gb, b->Th * V * DT,
					      HOFF_KIND_OUTPUT,
					      HOFF_BUILD_PRODUCED, "logits");
		use(b, HOFF_USE_OUT, y, 0);
		cost(b, 2.0 * (double)b->Th * (double)H * (double)V, -1);
		goto out;
	}

	/* Training: the head, the cross-entropy and their backward, fused
	 * (logits in fp32 as workspace), then the rest of the backward. */
	if (!op(b, K_LOSS, L, 0, "lm_head"))
		goto out;
	int32_t wh = weight(b, V * H, "weight");
	int32_t labels = hoff_build_tensor(&b->gb, T * TOKEN_BYTES,
					   HOFF_KIND_INPUT, HOFF_DEVICE,
					   "labels");
	in(b, xf, 0);
	in(b, wh, 0);
	in(b, labels, 0);
	int32_t loss = hoff_build_tensor(&b->gb, 4, HOFF_KIND_OUTPUT,
					 HOFF_BUILD_PRODUCED, "loss");
	use(b, HOFF_USE_OUT, loss, 0);
	if (b->gb.st != HOFF_OK)
		goto out;
	size_t n = (size_t)b->gb.g->ntensors + 2;
	b->grad = hoff_alloc(n, sizeof *b->grad);
	b->ngrad = hoff_zalloc(n, sizeof *b->ngrad);
	if (!b->grad || !b->ngrad) {
		oom(b);
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		b->grad[i] = HOFF_NONE;
	int32_t dxf = new_grad(b, xf);
	use(b, HOFF_USE_OUT, dxf, 0);
	int32_t dwh = new_grad(b, wh);
	use(b, HOFF_USE_OUT, dwh, 0);
	b->grad[xf] = dxf;
	b->grad[wh] = dwh;
	int64_t logits = T * V * SCORE_DT;
	workspace(b, logits, 0);
	cost(b, 6.0 * (double)T * (double)H * (double)V, -1);
	if (b->gb.st == HOFF_OK)
		b->gb.g->op[b->gb.g->nops - 1].bytes_accessed +=
			2.0 * (double)logits;
	backward(b);
out:
	free(perm);
	free(pick);
	free(ew);
	free(blk);
}

/* The index of s in the NULL-terminated list names; -1 when absent. */
static int find(const char *const *names, const char *s)
{
	for (int i = 0; s && names[i]; i++)
		if (strcmp(names[i], s) == 0)
			return i;
	return -1;
}

/* HOFF_EUSAGE for option `what`, whose value v (NULL: none) is not one of
 * names: "unknown <what> "v" (a, b, c)" when `unknown`, else "<what> must
 * be a, b or c, not "v"". */
static hoff_status bad_name(hoff_err *e, const char *what, const char *v,
			    const char *const *names, bool unknown)
{
	char list[128] = "";
	for (int i = 0; names[i]; i++) {
		const char *sep = i == 0		    ? ""
				  : unknown || names[i + 1] ? ", "
							    : " or ";
		size_t n = strlen(list);
		snprintf(list + n, sizeof list - n, "%s%s", sep, names[i]);
	}
	if (unknown)
		return hoff_seterr(e, HOFF_EUSAGE,
				   "model: unknown %s \"%s\" (%s)", what,
				   v ? v : "(null)", list);
	return hoff_seterr(e, HOFF_EUSAGE, "model: %s must be %s, not \"%s\"",
			   what, list, v);
}

static const char *const home_names[] = {"auto", "device", "host", NULL};
static const char *const step_names[] = {"end", "in-backward", NULL};
static const char *const opt_home_names[] = {"host", "device", NULL};

/* Checks the options and fills the derived sizes of b. */
static hoff_status check(bld *b, const hoff_model_opts *o, hoff_err *e)
{
	if (!(b->c = find_cfg(o->model)))
		return bad_name(e, "model", o->model, model_names, true);
	if (!(b->m = find_machine(o->machine)))
		return bad_name(e, "machine", o->machine, machine_names, true);
	if ((b->phase = find(phase_names, o->phase)) < 0)
		return bad_name(e, "phase", o->phase, phase_names, true);
	if (o->weights && find(home_names, o->weights) < 0)
		return bad_name(e, "weights", o->weights, home_names, false);
	if (o->kv && find(home_names, o->kv) < 0)
		return bad_name(e, "kv", o->kv, home_names, false);
	if (o->optimizer_step && find(step_names, o->optimizer_step) < 0)
		return bad_name(e, "optimizer_step", o->optimizer_step,
				step_names, false);
	if (o->optimizer_home && find(opt_home_names, o->optimizer_home) < 0)
		return bad_name(e, "optimizer_home", o->optimizer_home,
				opt_home_names, false);
	if (o->kv && b->phase == P_TRAIN)
		return hoff_seterr(e, HOFF_EUSAGE,
				   "model: kv applies to prefill and decode "
				   "(train has no KV cache)");
	if ((o->optimizer_step || o->optimizer_home) && b->phase != P_TRAIN)
		return hoff_seterr(e, HOFF_EUSAGE,
				   "model: optimizer_%s applies to train only",
				   o->optimizer_step ? "step" : "home");
	b->kv_host = o->kv && strcmp(o->kv, "host") == 0;
	b->kv_device = o->kv && strcmp(o->kv, "device") == 0;
	b->opt_in_backward = o->optimizer_step &&
			     strcmp(o->optimizer_step, "in-backward") == 0;
	b->opt_device = o->optimizer_home &&
			strcmp(o->optimizer_home, "device") == 0;
	if (o->seq < 1 || o->seq > MAX_SEQ)
		return hoff_seterr(e, HOFF_EUSAGE,
				   "model: seq must be 1 .. %lld, not %lld",
				   (long long)MAX_SEQ, (long long)o->seq);
	if (o->batch < 1 || o->batch > MAX_BATCH)
		return hoff_seterr(e, HOFF_EUSAGE,
				   "model: batch must be 1 .. %lld, not %lld",
				   (long long)MAX_BATCH, (long long)o->batch);
	if (o->seq * o->batch > MAX_TOKENS)
		return hoff_seterr(e, HOFF_EUSAGE,
				   "model: batch * seq must be at most %lld",
				   (long long)MAX_TOKENS);
	if (o->layers < 0 || o->layers > b->c->layers)
		return hoff_seterr(e, HOFF_EUSAGE,
				   "model: %s has %d layers; layers must be "
				   "0 (all) .. %d, not %d",
				   b->c->name, (int)b->c->layers,
				   (int)b->c->layers, (int)o->layers);
	if (o->kv_block_tokens < 1 || o->kv_block_tokens > MAX_TOKENS)
		return hoff_seterr(e, HOFF_EUSAGE,
				   "model: kv_block_tokens must be 1 .. %lld",
				   (long long)MAX_TOKENS);
	b->L = o->layers ? o->layers : b->c->layers;
	b->S = o->seq;
	b->T = b->phase == P_DECODE ? o->batch : o->batch * o->seq;
	b->Th = b->phase == P_TRAIN ? b->T : o->batch;
	b->ctx = o->seq + 1;
	int64_t cached = b->phase == P_DECODE ? b->ctx : o->seq;
	b->blk_tokens = b->kv_host ? cached : o->kv_block_tokens;
	b->nblk = b->phase == P_TRAIN
			  ? 0
			  : (cached + b->blk_tokens - 1) / b->blk_tokens;
	if (b->nblk > MAX_BLOCKS)
		return hoff_seterr(e, HOFF_EUSAGE,
				   "model: %lld KV blocks a layer; at most %d "
				   "(raise --kv-block, kv_block_tokens)",
				   (long long)b->nblk, MAX_BLOCKS);
	const cfg *c = b->c;
	b->kvtok = c->mla ? (c->kv_lora + c->qk_rope) * DT
			  : 2 * c->kv_heads * c->head_dim * DT;
	return HOFF_OK;
}

static int64_t device_inputs(const hoff_graph *g)
{
	int64_t s = 0;
	for (int32_t i = 0; i < g->ntensors; i++)
		if (g->tensor[i].producer == HOFF_NONE &&
		    g->tensor[i].home == HOFF_DEVICE)
			s += g->tensor[i].bytes;
	return s;
}

/* Moves graph inputs of kind `kind` homed on the device to a tier. */
static void to_tier(hoff_graph *g, int kind)
{
	for (int32_t i = 0; i < g->ntensors; i++) {
		hoff_tensor *t = &g->tensor[i];
		if (t->producer == HOFF_NONE && t->home == HOFF_DEVICE &&
		    t->kind == kind)
			t->home = 0;
	}
}

static void fmt_bytes(char *buf, size_t n, double x)
{
	if (x >= 1e12)
		snprintf(buf, n, "%.2f TB", x / 1e12);
	else
		snprintf(buf, n, "%.1f GB", x / 1e9);
}

/* Homes: with weights "auto", when the device-homed inputs take more than
 * FIT_NUM/FIT_DEN of device memory, the weights move to a tier, then the
 * KV blocks if still too big (unless kv is "device"). Tier-homed tensors then
 * fill the tiers in order (host, then remote): first those some op uses, then
 * the rest, in id order. HOFF_EUSAGE when they do not all fit. */
static hoff_status place(bld *b)
{
	hoff_graph *g = b->gb.g;
	const char *w = b->o->weights;
	int64_t fit = g->device.memory_bytes / FIT_DEN * FIT_NUM;
	if (w && strcmp(w, "host") == 0)
		to_tier(g, HOFF_KIND_WEIGHT);
	else if (!w || strcmp(w, "auto") == 0) {
		if (device_inputs(g) > fit)
			to_tier(g, HOFF_KIND_WEIGHT);
		if (device_inputs(g) > fit && !b->kv_device)
			to_tier(g, HOFF_KIND_KV);
	}
	int64_t used[HOFF_MAX_TIERS] = {0};
	double want = 0;
	bool full = false;
	for (int pass = 0; pass < 2; pass++)
		for (int32_t i = 0; i < g->ntensors; i++) {
			hoff_tensor *t = &g->tensor[i];
			if (t->producer != HOFF_NONE ||
			    t->home == HOFF_DEVICE ||
			    (t->first_use != HOFF_NONE) != (pass == 0))
				continue;
			want += (double)t->bytes;
			int32_t r = 0;
			while (r < g->ntiers &&
			       g->tier[r].capacity_bytes != HOFF_UNLIMITED &&
			       t->bytes > g->tier[r].capacity_bytes - used[r])
				r++;
			if (r == g->ntiers) {
				full = true;
				continue;
			}
			t->home = r;
			used[r] += t->bytes;
		}
	if (full) {
		char a[32], c[32];
		double cap = 0;
		for (int32_t r = 0; r < g->ntiers; r++)
			cap += (double)g->tier[r].capacity_bytes;
		fmt_bytes(a, sizeof a, want);
		fmt_bytes(c, sizeof c, cap);
		return hoff_seterr(b->gb.e, HOFF_EUSAGE,
				   "model: %s %s needs %s off the device but "
				   "machine %s's tiers hold %s; use fewer "
				   "layers or another machine",
				   b->c->name, phase_names[b->phase], a,
				   b->m->name, c);
	}
	return HOFF_OK;
}

bool hoff_machine_preset(const char *name, hoff_machine_info *m)
{
	const machine *x = find_machine(name);
	if (x)
		*m = x->info;
	return x != NULL;
}

hoff_model_opts hoff_model_defaults(void)
{
	return (hoff_model_opts){
		.model = "llama3-8b",
		.phase = "decode",
		.seq = 4096,
		.batch = 1,
		.layers = 0,
		.machine = "h100-pcie5",
		.seed = 1,
		.kv_block_tokens = 2048,
		.weights = "auto",
		.kv = NULL,
		.optimizer_step = NULL,
		.optimizer_home = NULL,
		.version = 1,
	};
}

hoff_status hoff_model_build(const hoff_model_opts *o, hoff_graph **out,
			     hoff_err *e)
{
	HOFF_REQUIRE(o && out);
	*out = NULL;
	bld b = {.o = o};
	hoff_status st = check(&b, o, e);
	if (st != HOFF_OK)
		return st;
	hoff_build_begin(&b.gb, "model", 0, e);
	for (int k = 0; k < NK; k++) {
		b.kind[k] = hoff_build_intern(&b.gb, "%s", kind_names[k]);
		b.bkind[k] = hoff_build_intern(&b.gb, "%s_bwd", kind_names[k]);
	}
	const hoff_machine_info *m = &b.m->info;
	hoff_build_device(&b.gb, m->device, m->memory_bytes, m->flops_per_s,
			  m->mem_bandwidth_Bps, LAUNCH_S);
	for (int i = 0; i < m->ntiers; i++)
		hoff_build_tier_add(&b.gb, &m->tier[i], o->version < 2);
	/* (v2) A training or decode step is one iteration of a loop: the
	 * plan must leave the state as it found it. Version 1 is the graph
	 * of before (no repeat, no duplex factors), byte for byte. */
	b.gb.g->version = o->version < 2 ? 1 : 2;
	b.gb.g->repeat = o->version >= 2 && b.phase != P_PREFILL;
	/* "<model>[-l<L>]-<phase>", then a suffix for each shape option off
	 * its default, so that the name tells the shapes apart. */
	char depth[16] = "";
	if (b.L != b.c->layers)
		snprintf(depth, sizeof depth, "-l%d", (int)b.L);
	hoff_build_set(&b.gb, HOFF_BUILD_NAME, "%s%s-%s%s%s%s", b.c->name,
		       depth, phase_names[b.phase], b.kv_host ? "-kv-host" : "",
		       b.opt_in_backward ? "-in-backward" : "",
		       b.opt_device ? "-opt-device" : "");
	build(&b);
	if ((st = hoff_build_finish(&b.gb)) != HOFF_OK ||
	    (st = place(&b)) != HOFF_OK)
		goto fail;
	int32_t emb = hoff_graph_find_tensor(b.gb.g, "embed.weight");
	assert(emb != HOFF_NONE);
	int32_t home = b.gb.g->tensor[emb].home;
	const char *wh = home == HOFF_DEVICE ? "device"
					     : b.gb.g->tier[home].name;
	/* The shape options only when given, so that the default graphs (and
	 * data/, whose witnesses hold their sha256) keep their bytes. */
	char kv[32] = "", step[48] = "", oh[48] = "";
	if (o->kv)
		snprintf(kv, sizeof kv, ",\"kv\":\"%s\"", o->kv);
	if (o->optimizer_step)
		snprintf(step, sizeof step, ",\"optimizer_step\":\"%s\"",
			 o->optimizer_step);
	if (o->optimizer_home)
		snprintf(oh, sizeof oh, ",\"optimizer_home\":\"%s\"",
			 o->optimizer_home);
	hoff_build_set(
		&b.gb, HOFF_BUILD_META,
		"{\"source\":\"hoffopt gen\",\"model\":\"%s\",\"phase\":\"%s\","
		"\"seq\":%lld,\"batch\":%lld,\"layers\":%d,\"machine\":\"%s\","
		"\"seed\":%llu,\"kv_block_tokens\":%lld,\"params\":%lld,"
		"\"dense_weights\":\"%s\"%s%s%s}",
		b.c->name, phase_names[b.phase], (long long)o->seq,
		(long long)o->batch, (int)b.L, b.m->name,
		(unsigned long long)o->seed, (long long)b.blk_tokens,
		(long long)param_count(b.c, b.L), wh, kv, step, oh);
	if ((st = b.gb.st) == HOFF_OK)
		*out = hoff_build_take(&b.gb);
fail:
	hoff_build_free(&b.gb);
	free(b.ent);
	free(b.it);
	free(b.w);
	free(b.wgrp);
	free(b.grad);
	free(b.ngrad);
	return st;
}
