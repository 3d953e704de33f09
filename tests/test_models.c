/* test_models.c: the model-shaped graphs (src/models.c) — parameter counts
 * against the published totals, op and tensor counts worked out by hand,
 * every model x phase x machine finishes, KV blocks in prefill and decode,
 * stashed activations, gradients and host-homed optimizer state in train,
 * seeded MoE routing, homes, the roofline of a decode step, and speed;
 * the shape options: the optimizer step in the backward, the optimizer
 * state on the device, the KV cache on the host. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis.h"
#include "baselines.h"
#include "graph_json.h"
#include "models.h"
#include "policy.h"
#include "synth.h"
#include "testutil.h"

static hoff_model_opts opts(const char *model, const char *phase,
			    int32_t layers, int64_t seq)
{
	hoff_model_opts o = hoff_model_defaults();
	o.model = model;
	o.phase = phase;
	o.layers = layers;
	o.seq = seq;
	return o;
}

static hoff_graph *build(const hoff_model_opts *o)
{
	hoff_graph *g = NULL;
	hoff_err e = {{0}};
	hoff_status st = hoff_model_build(o, &g, &e);
	if (st != HOFF_OK)
		print_error("model %s %s: %s\n", o->model, o->phase, e.msg);
	assert_int_equal(st, HOFF_OK);
	assert_non_null(g);
	return g;
}

static hoff_graph *build4(const char *model, const char *phase, int32_t layers,
			  int64_t seq)
{
	hoff_model_opts o = opts(model, phase, layers, seq);
	return build(&o);
}

static int64_t weight_params(const hoff_graph *g)
{
	int64_t b = 0;
	for (int32_t t = 0; t < g->ntensors; t++)
		if (g->tensor[t].kind == HOFF_KIND_WEIGHT)
			b += g->tensor[t].bytes;
	return b / 2;
}

static int count_kind(const hoff_graph *g, int kind)
{
	int n = 0;
	for (int32_t t = 0; t < g->ntensors; t++)
		n += g->tensor[t].kind == kind;
	return n;
}

/* found, the index of the `what` (tensor, op) named id; the test fails,
 * naming it, when there is none (HOFF_NONE). */
static int32_t must_find(int32_t found, const char *what, const char *id)
{
	if (found == HOFF_NONE)
		print_error("no %s %s\n", what, id);
	assert_int_not_equal(found, HOFF_NONE);
	return found;
}

static int32_t tensor_id(const hoff_graph *g, const char *id)
{
	return must_find(hoff_graph_find_tensor(g, id), "tensor", id);
}

static int32_t op_id(const hoff_graph *g, const char *id)
{
	return must_find(hoff_graph_find_op(g, id), "op", id);
}

static bool in_list(const int32_t *lst, int64_t a, int64_t b, int32_t t)
{
	for (int64_t i = a; i < b; i++)
		if (lst[i] == t)
			return true;
	return false;
}

/* Published totals: Llama 3 model cards (8B, 70B; Meta reports 8.03B and
 * 70.6B), Mixtral paper (46.7B), DeepSeek-V3 report (671B main model; the
 * 685B on Hugging Face adds the 14B MTP module, left out). By hand from
 * the configs: Llama-3-8B = 32 * 218,112,000 (layer: q 4096^2, k and v
 * 4096*1024 each, o 4096^2, FFN 3*4096*14336, two norms of 4096) + 2 *
 * 128256*4096 + 4096 = 8,030,261,248. */
static void test_param_counts(void **state)
{
	(void)state;
	static const struct {
		const char *model;
		double published;
		int64_t exact;
	} m[] = {
		{"llama3-8b", 8.03e9, 8030261248},
		{"llama3-70b", 70.6e9, 70553706496},
		{"mixtral-8x7b", 46.7e9, 46702792704},
		{"deepseek-v3", 671e9, 671026419200},
	};
	for (size_t i = 0; i < sizeof m / sizeof *m; i++) {
		int64_t p = hoff_model_param_count(m[i].model);
		assert_int_equal(p, m[i].exact);
		double rel = ((double)p - m[i].published) / m[i].published;
		assert_true(rel < 0.01 && rel > -0.01);
		/* The full-depth graph holds exactly these weights. */
		hoff_model_opts o = opts(m[i].model, "decode", 0, 1);
		hoff_graph *g = build(&o);
		assert_int_equal(weight_params(g), p);
		assert_int_equal(g->nops > 0, 1);
		hoff_graph_free(g);
	}
	assert_int_equal(hoff_model_param_count("gpt-5"), -1);
	assert_int_equal(hoff_model_depth("deepseek-v3"), 61);
}

/* Every model x phase x machine builds a finished graph whose ops all
 * carry a layer in 0 .. L and a roofline (no time_s), and whose layer
 * ops and tensors are named "layers.<i>.". */
static void test_all_finish(void **state)
{
	(void)state;
	const char *const *models = hoff_model_names();
	const char *const *phases = hoff_model_phases();
	const char *const *machines = hoff_machine_names();
	int n = 0;
	for (int a = 0; models[a]; a++)
		for (int p = 0; phases[p]; p++)
			for (int m = 0; machines[m]; m++) {
				/* DeepSeek: three dense layers, one MoE. */
				int32_t L = strcmp(models[a], "deepseek-v3") == 0
						    ? 4
						    : 2;
				hoff_model_opts o =
					opts(models[a], phases[p], L, 300);
				o.batch = 2;
				o.kv_block_tokens = 128;
				o.machine = machines[m];
				hoff_graph *g = build(&o);
				assert_true(g->nops <= 150);
				for (int32_t k = 0; k < g->nops; k++) {
					const hoff_op *op = &g->op[k];
					assert_true(op->flags &
						    HOFF_O_HAS_LAYER);
					assert_true(op->layer >= 0 &&
						    op->layer <= L);
					assert_false(op->flags &
						     HOFF_O_HAS_TIME);
					assert_true(op->flags &
						    HOFF_O_HAS_FLOPS);
					assert_true(op->time_ps > 0);
					int li = -1;
					if (sscanf(op->id, "layers.%d.", &li) ==
					    1)
						assert_int_equal(li, op->layer);
				}
				/* Every tensor is touched, but for the
				 * experts the routing left out. */
				for (int32_t t = 0; t < g->ntensors; t++) {
					const hoff_tensor *x = &g->tensor[t];
					assert_true(x->bytes > 0);
					assert_true(x->producer != HOFF_NONE ||
						    x->first_use != HOFF_NONE ||
						    strstr(x->id,
							   ".moe.experts."));
				}
				assert_true(g->device.has_flops &&
					    g->device.has_mem_bw);
				assert_true(g->ntiers >= 1);
				assert_string_equal(g->tier[0].name, "host");
				hoff_graph_free(g);
				n++;
			}
	assert_int_equal(n, 4 * 3 * 5);
}

/* Op counts by hand.
 * Llama / Mixtral, prefill or decode: embed; per layer attn_norm, q, k, v,
 *   core, o_proj, ffn_norm + (gate, up, down | router, 2 experts) = 10;
 *   final norm, lm_head: 3 + 10 L. L = 2: 23.
 * Train: the forward (3 + 10 L, lm_head fused with the loss and its
 *   backward), a backward of every forward op but lm_head (2 + 10 L), an
 *   Adam op for the embedding, each layer and the head (L + 2): 21 L + 7.
 *   L = 2: 49.
 * DeepSeek-V3, L = 4 (layers 0-2 dense, 3 MoE), prefill: per dense layer
 *   attn_norm, q_a, q_b, kv_a, kv_b, core, o_proj, ffn_norm, gate, up, down
 *   = 11; the MoE layer has router, shared expert and 8 experts for the
 *   FFN: 7 + 1 + 10 = 18; 3 + 33 + 18 = 54. Decode drops kv_b (absorbed):
 *   3 + 30 + 17 = 50. Train: 2 * 54 - 1 + (4 + 2) = 113. */
static void test_op_counts(void **state)
{
	(void)state;
	static const struct {
		const char *model, *phase;
		int32_t layers;
		int32_t nops;
	} c[] = {
		{"llama3-8b", "decode", 2, 23},
		{"llama3-8b", "prefill", 2, 23},
		{"llama3-8b", "train", 2, 49},
		{"llama3-70b", "decode", 1, 13},
		{"mixtral-8x7b", "decode", 2, 23},
		{"mixtral-8x7b", "train", 2, 49},
		{"deepseek-v3", "prefill", 4, 54},
		{"deepseek-v3", "decode", 4, 50},
		{"deepseek-v3", "train", 4, 113},
		{"llama3-8b", "decode", 0, 323},
		{"llama3-70b", "train", 0, 21 * 80 + 7},
	};
	for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
		hoff_graph *g = build4(c[i].model, c[i].phase, c[i].layers,
				       512);
		if (g->nops != c[i].nops)
			print_error("%s %s L=%d: %d ops\n", c[i].model,
				    c[i].phase, (int)c[i].layers, g->nops);
		assert_int_equal(g->nops, c[i].nops);
		hoff_graph_free(g);
	}
	/* Tensors of llama3-8b decode, L = 2, seq 4096, blocks of 2048:
	 * weights 9 a layer + embed, norm, head = 21; activations: embed out,
	 * 10 a layer, norm out = 22; logits; tokens; KV: ceil(4097 / 2048) =
	 * 3 a layer = 6. 51 in all. */
	hoff_graph *g = build4("llama3-8b", "decode", 2, 4096);
	assert_int_equal(g->ntensors, 51);
	assert_int_equal(count_kind(g, HOFF_KIND_WEIGHT), 21);
	assert_int_equal(count_kind(g, HOFF_KIND_ACTIVATION), 22);
	assert_int_equal(count_kind(g, HOFF_KIND_KV), 6);
	assert_int_equal(count_kind(g, HOFF_KIND_OUTPUT), 1);
	assert_int_equal(count_kind(g, HOFF_KIND_INPUT), 1);
	/* Sizes: q_proj 4096 x 4096 bf16; one KV block 2048 tokens x
	 * (K and V of 8 heads x 128) bf16 = 8 MiB; logits 128256 bf16. */
	assert_int_equal(g->tensor[tensor_id(g, "layers.1.attn.q_proj.weight")]
				 .bytes,
			 4096LL * 4096 * 2);
	assert_int_equal(g->tensor[tensor_id(g, "layers.0.kv.2")].bytes,
			 2048LL * 2 * 8 * 128 * 2);
	assert_int_equal(g->tensor[tensor_id(g, "logits")].bytes,
			 128256LL * 2);
	hoff_graph_free(g);
}

/* Decode: each layer's core reads blocks 0 .. n-2 and updates block n-1;
 * blocks are kind kv, persistent, homed on the device. Prefill updates
 * every block. */
static void test_kv_blocks(void **state)
{
	(void)state;
	hoff_model_opts o = opts("llama3-8b", "decode", 2, 4096);
	o.kv_block_tokens = 1024; /* 4097 tokens: 5 blocks */
	o.batch = 3;
	hoff_graph *g = build(&o);
	char id[64];
	for (int l = 0; l < 2; l++) {
		snprintf(id, sizeof id, "layers.%d.attn.core", l);
		int32_t k = op_id(g, id);
		assert_string_equal(g->op[k].kind, "attention");
		assert_int_equal(g->upd_off[k + 1] - g->upd_off[k], 1);
		for (int j = 0; j < 5; j++) {
			snprintf(id, sizeof id, "layers.%d.kv.%d", l, j);
			int32_t t = tensor_id(g, id);
			const hoff_tensor *x = &g->tensor[t];
			assert_int_equal(x->kind, HOFF_KIND_KV);
			assert_true(hoff_tensor_persistent(x));
			assert_int_equal(x->home, HOFF_DEVICE);
			assert_int_equal(x->producer, HOFF_NONE);
			assert_int_equal(x->bytes, 3LL * 1024 * 4096);
			bool upd = in_list(g->upd, g->upd_off[k],
					   g->upd_off[k + 1], t);
			bool rd = in_list(g->in, g->in_off[k], g->in_off[k + 1],
					  t);
			assert_int_equal(upd, j == 4);
			assert_int_equal(rd, j < 4);
		}
	}
	assert_int_equal(hoff_graph_find_tensor(g, "layers.0.kv.5"), HOFF_NONE);
	/* Decode runs one token a sequence: q_proj's output is batch x 4096. */
	assert_int_equal(g->tensor[tensor_id(g, "layers.0.attn.q_proj.out")]
				 .bytes,
			 3LL * 4096 * 2);
	hoff_graph_free(g);

	o.phase = "prefill"; /* 4096 tokens: 4 blocks, all updated */
	g = build(&o);
	int32_t k = op_id(g, "layers.1.attn.core");
	assert_int_equal(g->upd_off[k + 1] - g->upd_off[k], 4);
	assert_int_equal(hoff_graph_find_tensor(g, "layers.1.kv.4"), HOFF_NONE);
	assert_int_equal(g->tensor[tensor_id(g, "layers.0.attn.q_proj.out")]
				 .bytes,
			 3LL * 4096 * 4096 * 2);
	hoff_graph_free(g);

	/* MLA caches 576 values a token a layer. */
	o = opts("deepseek-v3", "decode", 1, 100);
	o.kv_block_tokens = 64; /* 101 tokens: 2 blocks */
	g = build(&o);
	assert_int_equal(g->tensor[tensor_id(g, "layers.0.kv.1")].bytes,
			 64LL * 576 * 2);
	assert_int_equal(count_kind(g, HOFF_KIND_KV), 2);
	hoff_graph_free(g);
}

/* Train: forward activations are read by their backward (stashed), every
 * used weight gets a gradient and one Adam update with 8 bytes a parameter
 * of optimizer state homed on the host. */
static void test_train(void **state)
{
	(void)state;
	hoff_graph *g = build4("llama3-8b", "train", 2, 512);
	int32_t fwd_end = op_id(g, "lm_head");
	/* A stashed activation lives into the backward. */
	int32_t x1 = tensor_id(g, "layers.0.attn_norm.out");
	assert_int_equal(g->tensor[x1].kind, HOFF_KIND_ACTIVATION);
	assert_false(hoff_tensor_persistent(&g->tensor[x1]));
	assert_true(g->tensor[x1].last_use > fwd_end);
	assert_int_equal(g->tensor[x1].last_use,
			 op_id(g, "layers.0.attn.q_proj.bwd"));
	/* The backward runs in reverse layer order. */
	assert_true(op_id(g, "layers.1.attn_norm.bwd") <
		    op_id(g, "layers.0.mlp.down_proj.bwd"));
	assert_int_equal(count_kind(g, HOFF_KIND_OPTIMIZER), 21);
	int nopt = 0;
	for (int32_t t = 0; t < g->ntensors; t++) {
		const hoff_tensor *m = &g->tensor[t];
		if (m->kind != HOFF_KIND_OPTIMIZER)
			continue;
		nopt++;
		assert_int_not_equal(m->home, HOFF_DEVICE);
		assert_string_equal(g->tier[m->home].name, "host");
		assert_true(hoff_tensor_persistent(m));
		/* "<weight>.adam": same op updates the weight and reads its
		 * gradient. */
		char w[160], gr[170];
		size_t n = strlen(m->id);
		assert_true(n > 5 && strcmp(m->id + n - 5, ".adam") == 0);
		memcpy(w, m->id, n - 5);
		w[n - 5] = '\0';
		snprintf(gr, sizeof gr, "%s.grad", w);
		int32_t wt = tensor_id(g, w), gt = tensor_id(g, gr);
		assert_int_equal(m->bytes, g->tensor[wt].bytes * 4);
		assert_int_equal(g->tensor[gt].kind, HOFF_KIND_GRADIENT);
		assert_int_equal(m->first_use, m->last_use);
		int32_t k = m->first_use;
		assert_string_equal(g->op[k].kind, "optimizer");
		assert_true(in_list(g->upd, g->upd_off[k], g->upd_off[k + 1],
				    t));
		assert_true(in_list(g->upd, g->upd_off[k], g->upd_off[k + 1],
				    wt));
		assert_true(in_list(g->in, g->in_off[k], g->in_off[k + 1], gt));
		assert_int_equal(g->tensor[wt].last_use, k);
	}
	assert_int_equal(nopt, 21);
	assert_int_equal(g->op[op_id(g, "layers.1.adam")].layer, 1);
	assert_int_equal(g->op[op_id(g, "embed.adam")].layer, 0);
	assert_int_equal(g->op[op_id(g, "head.adam")].layer, 2);
	/* The loss is the graph's output. */
	assert_true(g->tensor[tensor_id(g, "loss")].flags & HOFF_T_OUTPUT);
	hoff_graph_free(g);

	/* MoE: only the routed experts get gradients and Adam state. */
	g = build4("mixtral-8x7b", "train", 1, 64);
	int experts_adam = 0;
	for (int32_t t = 0; t < g->ntensors; t++)
		if (g->tensor[t].kind == HOFF_KIND_OPTIMIZER &&
		    strstr(g->tensor[t].id, ".experts."))
			experts_adam++;
	assert_int_equal(experts_adam, 2);
	hoff_graph_free(g);
}

/* Names of the expert ops of g, in op order, joined. */
static void expert_ops(const hoff_graph *g, char *buf, size_t n)
{
	buf[0] = '\0';
	size_t len = 0;
	for (int32_t k = 0; k < g->nops; k++)
		if (strcmp(g->op[k].kind, "expert") == 0 &&
		    !strstr(g->op[k].id, "shared")) {
			int w = snprintf(buf + len, n - len, "%s;", g->op[k].id);
			assert_true(w > 0 && (size_t)w < n - len);
			len += (size_t)w;
		}
}

/* Routing: top-k distinct experts a layer, the same for a seed, another
 * for another seed, and kept when the depth is truncated. Inactive experts
 * are host-homed weights no op reads. */
static void test_routing(void **state)
{
	(void)state;
	static char a[1 << 16], b[1 << 16], c[1 << 16], d[1 << 16];
	hoff_model_opts o = opts("mixtral-8x7b", "decode", 0, 128);
	hoff_graph *ga = build(&o);
	hoff_graph *gb = build(&o);
	o.seed = 2;
	hoff_graph *gc = build(&o);
	o.seed = 1;
	o.layers = 5;
	hoff_graph *gd = build(&o);
	expert_ops(ga, a, sizeof a);
	expert_ops(gb, b, sizeof b);
	expert_ops(gc, c, sizeof c);
	expert_ops(gd, d, sizeof d);
	assert_string_equal(a, b);
	assert_string_not_equal(a, c);
	assert_int_equal(strncmp(a, d, strlen(d)), 0);
	/* Two distinct experts a layer, ascending. */
	for (int l = 0; l < 32; l++) {
		int prev = -1, n = 0;
		for (int e = 0; e < 8; e++) {
			char id[64];
			snprintf(id, sizeof id, "layers.%d.moe.experts.%d", l, e);
			int32_t k = hoff_graph_find_op(ga, id);
			snprintf(id, sizeof id,
				 "layers.%d.moe.experts.%d.weight", l, e);
			const hoff_tensor *w = &ga->tensor[tensor_id(ga, id)];
			assert_int_not_equal(w->home, HOFF_DEVICE);
			assert_int_equal(w->bytes, 3LL * 4096 * 14336 * 2);
			if (k == HOFF_NONE) {
				assert_int_equal(w->first_use, HOFF_NONE);
				continue;
			}
			assert_true(k > prev);
			prev = k;
			n++;
			assert_int_equal(w->first_use, k);
		}
		assert_int_equal(n, 2);
	}
	hoff_graph_free(ga);
	hoff_graph_free(gb);
	hoff_graph_free(gc);
	hoff_graph_free(gd);

	/* DeepSeek: 8 of 256 plus the shared expert, on the device. */
	hoff_graph *g = build4("deepseek-v3", "decode", 4, 64);
	int n = 0;
	for (int32_t k = 0; k < g->nops; k++)
		n += g->op[k].layer == 3 && strcmp(g->op[k].kind, "expert") == 0;
	assert_int_equal(n, 9);
	int32_t sh = tensor_id(g, "layers.3.moe.shared_expert.weight");
	assert_int_equal(g->tensor[sh].home, HOFF_DEVICE);
	assert_int_equal(g->tensor[sh].bytes, 3LL * 7168 * 2048 * 2);
	assert_int_equal(hoff_graph_find_tensor(g, "layers.2.moe.router.weight"),
			 HOFF_NONE);
	hoff_graph_free(g);
}

/* Homes: weights stay on the device when they fit (llama3-8b), move to the
 * host when not (llama3-70b: 141 GB of bf16 on an 80 GB device); tiers
 * fill in order (the supernode's 512 GB host spills DeepSeek's experts to
 * the remote pool); what fits nowhere is refused. */
static void test_homes(void **state)
{
	(void)state;
	hoff_graph *g = build4("llama3-8b", "decode", 0, 64);
	assert_int_equal(g->tensor[tensor_id(g, "embed.weight")].home,
			 HOFF_DEVICE);
	hoff_graph_free(g);
	g = build4("llama3-70b", "decode", 0, 64);
	assert_int_equal(g->tensor[tensor_id(g, "layers.79.mlp.up_proj.weight")]
				 .home,
			 0);
	assert_int_equal(g->tensor[tensor_id(g, "layers.0.kv.0")].home,
			 HOFF_DEVICE);
	hoff_graph_free(g);

	hoff_model_opts o = opts("llama3-8b", "decode", 2, 64);
	o.weights = "host";
	g = build(&o);
	assert_int_equal(g->tensor[tensor_id(g, "layers.0.attn.q_proj.weight")]
				 .home,
			 0);
	hoff_graph_free(g);

	o = opts("deepseek-v3", "decode", 0, 64);
	o.machine = "supernode";
	g = build(&o);
	assert_int_equal(g->ntiers, 2);
	assert_string_equal(g->tier[1].name, "remote");
	int64_t used[2] = {0, 0};
	for (int32_t t = 0; t < g->ntensors; t++)
		if (g->tensor[t].home >= 0)
			used[g->tensor[t].home] += g->tensor[t].bytes;
	assert_true(used[0] <= g->tier[0].capacity_bytes);
	assert_true(used[1] > 0);
	/* Experts some op reads fill the faster tier first. */
	int32_t k = op_id(g, "layers.60.moe.router") + 2; /* after shared */
	assert_string_equal(g->op[k].kind, "expert");
	int32_t w = g->in[g->in_off[k] + 2]; /* x2, scores, weight, acc */
	assert_int_equal(g->tensor[w].kind, HOFF_KIND_WEIGHT);
	assert_int_equal(g->tensor[w].home, 0);
	hoff_graph_free(g);

	o.machine = "gh200"; /* 1.31 TB of experts, 480 GB of LPDDR5X */
	hoff_err e = {{0}};
	g = NULL;
	assert_int_equal(hoff_model_build(&o, &g, &e), HOFF_EUSAGE);
	assert_null(g);
	assert_non_null(strstr(e.msg, "gh200"));
}

/* The op ids of g from op `from` on, joined by ';'. */
static void op_ids(const hoff_graph *g, int32_t from, char *buf, size_t n)
{
	size_t len = 0;
	buf[0] = '\0';
	for (int32_t k = from; k < g->nops; k++) {
		int w = snprintf(buf + len, n - len, "%s;", g->op[k].id);
		assert_true(w > 0 && (size_t)w < n - len);
		len += (size_t)w;
	}
}

/* --optimizer-step in-backward, llama3-8b, 2 layers, by hand: the forward
 * (23 ops) is unchanged; the backward runs the taped ops last first, and
 * each group's Adam op follows the backward op that makes its last
 * gradient: the head's (final norm and lm_head weights) after norm.bwd
 * (lm_head's gradient comes from the fused loss op), layer l's after its
 * attn_norm.bwd, the embedding's after embed.bwd. Same ops, tensors and
 * op times as the step at the end, only the order moves; every weight
 * gradient dies at its group's Adam op. */
static void test_optimizer_in_backward(void **state)
{
	(void)state;
	static char got[4096], want[4096];
	hoff_model_opts o = opts("llama3-8b", "train", 2, 512);
	hoff_graph *end = build(&o);
	o.optimizer_step = "in-backward";
	hoff_graph *g = build(&o);
	assert_int_equal(g->nops, 49);
	assert_string_equal(g->name, "llama3-8b-l2-train-in-backward");
	assert_non_null(strstr(g->meta, "\"optimizer_step\":\"in-backward\""));
	assert_null(strstr(end->meta, "optimizer_step"));
	assert_string_equal(end->name, "llama3-8b-l2-train");
	static const char *const layer_bwd[] = {
		"mlp.down_proj", "mlp.up_proj", "mlp.gate_proj", "ffn_norm",
		"attn.o_proj",	 "attn.core",	"attn.v_proj",	 "attn.k_proj",
		"attn.q_proj",	 "attn_norm",
	};
	size_t len = (size_t)snprintf(want, sizeof want,
				      "norm;lm_head;norm.bwd;head.adam;");
	for (int l = 1; l >= 0; l--) {
		for (int i = 0; i < 10; i++)
			len += (size_t)snprintf(want + len, sizeof want - len,
						"layers.%d.%s.bwd;", l,
						layer_bwd[i]);
		len += (size_t)snprintf(want + len, sizeof want - len,
					"layers.%d.adam;", l);
	}
	snprintf(want + len, sizeof want - len, "embed.bwd;embed.adam;");
	op_ids(g, op_id(g, "norm"), got, sizeof got);
	assert_string_equal(got, want);
	/* The forward and the tensors are the same as with the step at the
	 * end, and so is each op's time. */
	assert_int_equal(g->ntensors, end->ntensors);
	for (int32_t k = 0; k < 23; k++)
		assert_string_equal(g->op[k].id, end->op[k].id);
	for (int32_t k = 0; k < g->nops; k++)
		assert_int_equal(g->op[k].time_ps,
				 end->op[op_id(end, g->op[k].id)].time_ps);
	for (int32_t t = 0; t < g->ntensors; t++) {
		const hoff_tensor *x =
			&end->tensor[tensor_id(end, g->tensor[t].id)];
		assert_int_equal(g->tensor[t].bytes, x->bytes);
		assert_int_equal(g->tensor[t].home, x->home);
	}
	/* Layer 1's Adam op: 9 weights and their moments updated, 9
	 * gradients read; the gate_proj moments 4096 x 14336 x 8 bytes. */
	int32_t k = op_id(g, "layers.1.adam");
	assert_int_equal(g->upd_off[k + 1] - g->upd_off[k], 18);
	assert_int_equal(g->in_off[k + 1] - g->in_off[k], 9);
	int32_t m = tensor_id(g, "layers.1.mlp.gate_proj.weight.adam");
	assert_int_equal(g->tensor[m].bytes, 4096LL * 14336 * 8);
	assert_int_equal(g->tensor[m].first_use, k);
	assert_int_equal(
		g->tensor[tensor_id(g, "layers.1.attn_norm.weight.grad")]
			.last_use,
		k);
	assert_int_equal(
		g->tensor[tensor_id(g, "layers.1.mlp.down_proj.weight.grad")]
			.last_use,
		k);
	assert_int_equal(
		g->tensor[tensor_id(g, "lm_head.weight.grad")].last_use,
		op_id(g, "head.adam"));
	assert_int_equal(op_id(g, "head.adam"), 24);
	hoff_graph_free(g);
	hoff_graph_free(end);

	/* MoE and MLA (DeepSeek, 3 dense layers and 1 MoE): each layer's
	 * Adam op directly follows its attn_norm.bwd, and the op count is the
	 * end step's, 113. */
	o = opts("deepseek-v3", "train", 4, 64);
	o.optimizer_step = "in-backward";
	g = build(&o);
	assert_int_equal(g->nops, 113);
	for (int l = 0; l < 4; l++) {
		char id[64];
		snprintf(id, sizeof id, "layers.%d.attn_norm.bwd", l);
		int32_t a = op_id(g, id);
		snprintf(id, sizeof id, "layers.%d.adam", l);
		assert_int_equal(op_id(g, id), a + 1);
	}
	assert_int_equal(op_id(g, "embed.adam"), g->nops - 1);
	hoff_graph_free(g);
}

/* --optimizer-home device: the Adam moments start on the device (by
 * default they are homed on the host). llama3-8b at full depth then puts
 * 64 GB of moments and 16 GB of weights on an 80 GB device, over the 3/4
 * that "auto" allows, so the weights move to the host. */
static void test_optimizer_home(void **state)
{
	(void)state;
	hoff_model_opts o = opts("llama3-8b", "train", 2, 512);
	o.optimizer_home = "device";
	hoff_graph *g = build(&o);
	assert_string_equal(g->name, "llama3-8b-l2-train-opt-device");
	assert_non_null(strstr(g->meta, "\"optimizer_home\":\"device\""));
	int n = 0;
	for (int32_t t = 0; t < g->ntensors; t++)
		if (g->tensor[t].kind == HOFF_KIND_OPTIMIZER) {
			assert_int_equal(g->tensor[t].home, HOFF_DEVICE);
			n++;
		}
	assert_int_equal(n, 21);
	assert_int_equal(g->tensor[tensor_id(g, "embed.weight")].home,
			 HOFF_DEVICE);
	hoff_graph_free(g);

	o.layers = 0;
	g = build(&o);
	int32_t m = tensor_id(g, "layers.31.mlp.up_proj.weight.adam");
	assert_int_equal(g->tensor[m].home, HOFF_DEVICE);
	assert_int_equal(g->tensor[tensor_id(g, "embed.weight")].home, 0);
	hoff_analysis a;
	hoff_err e = {{0}};
	assert_int_equal(hoff_analyze(g, &a, &e), HOFF_OK);
	assert_int_equal(a.tier_homed_bytes, 8030261248LL * 2);
	hoff_graph_free(g);
}

/* --kv host: one KV block a layer, "layers.<l>.kv", the whole cache of the
 * layer homed on the host, in the attention core's updates (not its
 * inputs). Decode, batch 3, 4096 cached tokens: 3 x 4097 tokens x 4096
 * bytes (K and V of 8 heads x 128, bf16) = 50343936 B; prefill writes
 * 3 x 4096 tokens = 50331648 B. Op times equal those of the blocked cache
 * on the device (the core reads the same bytes). check_kv_host: one
 * phase, its blocks of `bytes`, nblocks device blocks a layer before. */
static void check_kv_host(const char *phase, int64_t bytes, int nblocks)
{
	hoff_model_opts o = opts("llama3-8b", phase, 2, 4096);
	o.batch = 3;
	o.kv_block_tokens = 1024;
	hoff_graph *dev = build(&o);
	o.kv = "host";
	hoff_graph *g = build(&o);
	char name[64];
	snprintf(name, sizeof name, "llama3-8b-l2-%s-kv-host", phase);
	assert_string_equal(g->name, name);
	assert_non_null(strstr(g->meta, "\"kv\":\"host\""));
	assert_int_equal(count_kind(g, HOFF_KIND_KV), 2);
	/* nblocks blocks a layer become one. */
	assert_int_equal(g->ntensors, dev->ntensors - 2 * nblocks + 2);
	for (int l = 0; l < 2; l++) {
		char id[64];
		snprintf(id, sizeof id, "layers.%d.kv", l);
		int32_t t = tensor_id(g, id);
		const hoff_tensor *x = &g->tensor[t];
		assert_int_equal(x->kind, HOFF_KIND_KV);
		assert_int_equal(x->bytes, bytes);
		assert_int_equal(x->producer, HOFF_NONE);
		assert_true(hoff_tensor_persistent(x));
		assert_int_not_equal(x->home, HOFF_DEVICE);
		assert_string_equal(g->tier[x->home].name, "host");
		snprintf(id, sizeof id, "layers.%d.attn.core", l);
		int32_t k = op_id(g, id);
		assert_int_equal(x->first_use, k);
		assert_int_equal(x->last_use, k);
		assert_int_equal(g->upd_off[k + 1] - g->upd_off[k], 1);
		assert_int_equal(g->upd[g->upd_off[k]], t);
		assert_false(in_list(g->in, g->in_off[k], g->in_off[k + 1], t));
		snprintf(id, sizeof id, "layers.%d.kv.0", l);
		assert_int_equal(hoff_graph_find_tensor(g, id), HOFF_NONE);
	}
	assert_int_equal(g->nops, dev->nops);
	for (int32_t k = 0; k < g->nops; k++)
		assert_int_equal(g->op[k].time_ps, dev->op[k].time_ps);
	hoff_graph_free(g);
	hoff_graph_free(dev);
}

static void test_kv_host(void **state)
{
	(void)state;
	check_kv_host("decode", 3LL * 4097 * 4096, 5);
	check_kv_host("prefill", 3LL * 4096 * 4096, 4);
	/* kv "device" keeps blocks on the device even when "auto" would move
	 * them: llama3-70b decode at batch 64 x 32768 tokens holds 687 GB of
	 * KV, more than the h200's 141 GB with its weights gone. */
	hoff_model_opts o = opts("llama3-70b", "decode", 0, 32768);
	o.batch = 64;
	o.machine = "h200";
	hoff_graph *g = build(&o);
	assert_int_equal(g->tensor[tensor_id(g, "layers.0.kv.0")].home, 0);
	hoff_graph_free(g);
	o.kv = "device";
	g = build(&o);
	assert_int_equal(g->tensor[tensor_id(g, "layers.0.kv.0")].home,
			 HOFF_DEVICE);
	assert_int_equal(g->tensor[tensor_id(g, "embed.weight")].home, 0);
	hoff_graph_free(g);
}

/* The bytes of `kind` tensors homed on the device and on tiers. */
static void homed(const hoff_graph *g, int kind, int64_t *dev, int64_t *tier)
{
	*dev = *tier = 0;
	for (int32_t t = 0; t < g->ntensors; t++)
		if (g->tensor[t].kind == kind &&
		    g->tensor[t].producer == HOFF_NONE)
			*(g->tensor[t].home == HOFF_DEVICE ? dev : tier) +=
				g->tensor[t].bytes;
}

/* Every shape option on every model (DeepSeek at 4 layers, the others at
 * 2) gives a graph that analyze accepts, whose no-offload schedule
 * simulates to the analysed peak, and whose `none` plan simulates valid;
 * the options move exactly the bytes they name. */
static void test_shapes_simulate(void **state)
{
	(void)state;
	static const struct {
		const char *phase, *kv, *step, *home;
	} c[] = {
		{"decode", "host", NULL, NULL},
		{"prefill", "host", NULL, NULL},
		{"decode", "device", NULL, NULL},
		{"train", NULL, "in-backward", NULL},
		{"train", NULL, NULL, "device"},
		{"train", NULL, "in-backward", "device"},
	};
	const char *const *models = hoff_model_names();
	for (int a = 0; models[a]; a++)
		for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
			int32_t L = strcmp(models[a], "deepseek-v3") == 0 ? 4
									  : 2;
			hoff_model_opts o = opts(models[a], c[i].phase, L, 256);
			o.kv_block_tokens = 64;
			o.machine = "supernode";
			hoff_graph *base = build(&o);
			o.kv = c[i].kv;
			o.optimizer_step = c[i].step;
			o.optimizer_home = c[i].home;
			hoff_graph *g = build(&o);
			hoff_analysis an;
			hoff_err e = {{0}};
			assert_int_equal(hoff_analyze(g, &an, &e), HOFF_OK);
			int64_t peak = hoff_analysis_profile(g, NULL);
			hoff_sched *s = hoff_sched_noffload(g);
			assert_non_null(s);
			hoff_sim_result r = tu_sim(g, s, peak);
			assert_true(r.valid);
			assert_int_equal(r.summary.peak_bytes, peak);
			assert_int_equal(r.summary.compute_ps, an.compute_ps);
			hoff_sim_result_free(&r);
			hoff_sched_free(s);
			hoff_policy_opts po = hoff_policy_defaults();
			po.kind = HOFF_POLICY_NONE;
			assert_int_equal(hoff_baseline_plan(g, &po, &s, &e),
					 HOFF_OK);
			r = tu_sim(g, s, peak);
			if (!r.valid)
				print_error("%s %s: none: rule %d: %s\n",
					    models[a], g->name,
					    (int)r.viol[0].rule, r.viol[0].why);
			assert_true(r.valid);
			hoff_sim_result_free(&r);
			hoff_sched_free(s);
			/* KV on the host: all of it, its bytes those of the
			 * blocks on the device plus the decode blocks'
			 * rounding up (256 + 1 tokens in blocks of 64: 320). */
			int64_t d0, t0, d1, t1;
			homed(base, HOFF_KIND_KV, &d0, &t0);
			homed(g, HOFF_KIND_KV, &d1, &t1);
			if (c[i].kv && !strcmp(c[i].kv, "host")) {
				assert_int_equal(d1, 0);
				assert_int_equal(t1 * (i == 0 ? 320 : 256),
						 (d0 + t0) *
							 (i == 0 ? 257 : 256));
			} else {
				assert_int_equal(d1, d0);
				assert_int_equal(t1, t0);
			}
			homed(base, HOFF_KIND_OPTIMIZER, &d0, &t0);
			homed(g, HOFF_KIND_OPTIMIZER, &d1, &t1);
			assert_int_equal(d1 + t1, d0 + t0);
			assert_int_equal(d1, c[i].home ? t0 : 0);
			hoff_graph_free(g);
			hoff_graph_free(base);
		}
}

static void test_bad_opts(void **state)
{
	(void)state;
	static const struct {
		const char *model, *phase, *machine, *weights;
		int64_t seq, batch, block;
		int32_t layers;
		const char *msg;
		const char *kv, *step, *home;
	} c[] = {
		{"llama3-8b", "decode", "h200", NULL, 8, 1, 16, 0, "kv must",
		 "disk", NULL, NULL},
		{"llama3-8b", "train", "h200", NULL, 8, 1, 16, 0, "kv applies",
		 "host", NULL, NULL},
		{"llama3-8b", "train", "h200", NULL, 8, 1, 16, 0,
		 "optimizer_step must", NULL, "middle", NULL},
		{"llama3-8b", "decode", "h200", NULL, 8, 1, 16, 0,
		 "optimizer_step applies", NULL, "in-backward", NULL},
		{"llama3-8b", "train", "h200", NULL, 8, 1, 16, 0,
		 "optimizer_home must", NULL, NULL, "nvme"},
		{"llama3-8b", "prefill", "h200", NULL, 8, 1, 16, 0,
		 "optimizer_home applies", NULL, NULL, "device"},
		{"gpt-5", "decode", "h200", NULL, 8, 1, 16, 0, "unknown model",
		 NULL, NULL, NULL},
		{"llama3-8b", "serve", "h200", NULL, 8, 1, 16, 0, "phase", NULL,
		 NULL, NULL},
		{"llama3-8b", "decode", "tpu", NULL, 8, 1, 16, 0, "machine",
		 NULL, NULL, NULL},
		{"llama3-8b", "decode", "h200", "disk", 8, 1, 16, 0, "weights",
		 NULL, NULL, NULL},
		{"llama3-8b", "decode", "h200", NULL, 0, 1, 16, 0, "seq", NULL,
		 NULL, NULL},
		{"llama3-8b", "decode", "h200", NULL, 8, 0, 16, 0, "batch",
		 NULL, NULL, NULL},
		{"llama3-8b", "decode", "h200", NULL, 8, 1, 0, 0, "kv_block",
		 NULL, NULL, NULL},
		{"llama3-8b", "decode", "h200", NULL, 8, 1, 16, 33, "layers",
		 NULL, NULL, NULL},
		{"llama3-8b", "decode", "h200", NULL, 8, 1, 16, -1, "layers",
		 NULL, NULL, NULL},
		{"llama3-8b", "decode", "h200", NULL, 1 << 20, 1, 1, 1,
		 "KV blocks", NULL, NULL, NULL},
		{NULL, "decode", "h200", NULL, 8, 1, 16, 0, "unknown model",
		 NULL, NULL, NULL},
	};
	for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
		hoff_model_opts o = hoff_model_defaults();
		o.model = c[i].model;
		o.phase = c[i].phase;
		o.machine = c[i].machine;
		o.weights = c[i].weights;
		o.seq = c[i].seq;
		o.batch = c[i].batch;
		o.kv_block_tokens = c[i].block;
		o.layers = c[i].layers;
		hoff_graph *g = (hoff_graph *)&o; /* must come back NULL */
		o.kv = c[i].kv;
		o.optimizer_step = c[i].step;
		o.optimizer_home = c[i].home;
		hoff_err e = {{0}};
		assert_int_equal(hoff_model_build(&o, &g, &e), HOFF_EUSAGE);
		assert_null(g);
		if (!strstr(e.msg, c[i].msg))
			print_error("case %zu: %s\n", i, e.msg);
		assert_non_null(strstr(e.msg, c[i].msg));
	}
}

/* A batch-1 decode step of llama3-8b on h100-pcie5 is bound by reading the
 * weights: compute time >= 16.06 GB / 2.0 TB/s = 8.03 ms, and below that
 * plus 5 us of launch for each of the 323 ops plus the KV cache (~0.5 GB
 * at 4096 tokens: 32 layers x 4097 x 4 KiB = 0.27 ms) and the matmuls'
 * activations: under 10 ms. */
static void test_roofline(void **state)
{
	(void)state;
	hoff_graph *g = build4("llama3-8b", "decode", 0, 4096);
	int64_t ps = 0;
	for (int32_t k = 0; k < g->nops; k++)
		ps += g->op[k].time_ps;
	double s = hoff_s(ps);
	assert_true(s >= 8030261248.0 * 2 / 2.0e12);
	assert_true(s < 8030261248.0 * 2 / 2.0e12 + 323 * 5e-6 + 0.3e-3 +
				1e-4);
	assert_true(g->device.op_overhead_s == 5e-6);
	assert_int_equal(g->device.memory_bytes, 80000000000LL);
	hoff_graph_free(g);
}

/* The presets gen --list prints are the ones graphs get: gh200 (GH200
 * 96GB, LPDDR5X over NVLink-C2C at the measured 375/297 GB/s), supernode
 * with its remote pool, and no preset for an unknown name. */
static void test_presets(void **state)
{
	(void)state;
	hoff_machine_info m;
	assert_false(hoff_machine_preset("tpu", &m));
	assert_true(hoff_machine_preset("gh200", &m));
	assert_string_equal(m.device, "GH200-96GB");
	assert_int_equal(m.memory_bytes, 96000000000LL);
	assert_true(m.flops_per_s == 989e12 && m.mem_bandwidth_Bps == 4.0e12);
	assert_int_equal(m.ntiers, 1);
	assert_string_equal(m.tier[0].name, "host");
	assert_int_equal(m.tier[0].capacity_bytes, 480000000000LL);
	assert_true(m.tier[0].h2d_Bps == 375e9 && m.tier[0].d2h_Bps == 297e9);
	assert_true(m.tier[0].latency_s == 5e-6);
	const char *const *names = hoff_machine_names();
	for (int i = 0; names[i]; i++) {
		assert_true(hoff_machine_preset(names[i], &m));
		hoff_model_opts o = opts("llama3-8b", "decode", 1, 64);
		o.machine = names[i];
		hoff_graph *g = build(&o);
		assert_int_equal(g->device.memory_bytes, m.memory_bytes);
		assert_int_equal(g->ntiers, m.ntiers);
		for (int r = 0; r < m.ntiers; r++) {
			assert_string_equal(g->tier[r].name, m.tier[r].name);
			assert_true(g->tier[r].h2d_Bps == m.tier[r].h2d_Bps);
			assert_int_equal(g->tier[r].capacity_bytes,
					 m.tier[r].capacity_bytes);
		}
		hoff_graph_free(g);
	}
	assert_true(hoff_machine_preset("supernode", &m));
	assert_int_equal(m.ntiers, 2);
	assert_string_equal(m.tier[1].name, "remote");
}

/* Determinism and speed: llama3-70b train at full depth and seq 4096 (and
 * full DeepSeek-V3 train) build twice to the same graph, quickly. */
static void test_scale(void **state)
{
	(void)state;
	static const char *const m[] = {"llama3-70b", "deepseek-v3"};
	for (int i = 0; i < 2; i++) {
		hoff_model_opts o = opts(m[i], "train", 0, 4096);
		clock_t t0 = clock();
		hoff_graph *a = build(&o);
		double dt = (double)(clock() - t0) / CLOCKS_PER_SEC;
		hoff_graph *b = build(&o);
		print_message("%s train: %d ops, %d tensors, built in %.3f s\n",
			      m[i], a->nops, a->ntensors, dt);
		assert_true(dt < 2.0); /* far less without sanitizers */
		assert_int_equal(a->nops, b->nops);
		assert_int_equal(a->ntensors, b->ntensors);
		for (int32_t k = 0; k < a->nops; k++) {
			assert_string_equal(a->op[k].id, b->op[k].id);
			assert_int_equal(a->op[k].time_ps, b->op[k].time_ps);
		}
		for (int32_t t = 0; t < a->ntensors; t++) {
			assert_string_equal(a->tensor[t].id, b->tensor[t].id);
			assert_int_equal(a->tensor[t].home, b->tensor[t].home);
		}
		assert_string_equal(a->meta, b->meta);
		hoff_graph_free(a);
		hoff_graph_free(b);
	}
}

/* The graphs survive graph.json: the reader accepts what the writer prints
 * of every phase (MoE and MLA included) and gets the same graph back. */
static void test_json_roundtrip(void **state)
{
	(void)state;
	static const char *const phases[] = {"prefill", "decode", "train"};
	for (int p = 0; p < 3; p++) {
		hoff_model_opts o = opts("deepseek-v3", phases[p], 4, 100);
		o.machine = "supernode";
		o.kv_block_tokens = 32;
		o.version = 2;
		hoff_graph *g = build(&o);
		FILE *f = tmpfile();
		assert_non_null(f);
		hoff_graph_print(g, f);
		assert_false(ferror(f));
		long n = ftell(f);
		assert_true(n > 0);
		rewind(f);
		char *buf = malloc((size_t)n + 1);
		assert_non_null(buf);
		assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
		fclose(f);
		buf[n] = '\0';
		hoff_graph *h = NULL;
		hoff_err e = {{0}};
		hoff_status st = hoff_graph_parse(buf, (size_t)n, "model.json",
						  &h, &e);
		if (st != HOFF_OK)
			print_error("%s\n", e.msg);
		assert_int_equal(st, HOFF_OK);
		assert_int_equal(h->nops, g->nops);
		assert_int_equal(h->ntensors, g->ntensors);
		assert_int_equal(h->ntiers, g->ntiers);
		/* (v2) the loop and the duplex factors survive */
		assert_int_equal(h->version, 2);
		assert_int_equal(h->repeat, p != 0);
		for (int32_t r = 0; r < g->ntiers; r++) {
			assert_int_equal(h->tier[r].h2d_duplex_ppm,
					 g->tier[r].h2d_duplex_ppm);
			assert_int_equal(h->tier[r].d2h_duplex_ppm,
					 g->tier[r].d2h_duplex_ppm);
		}
		assert_int_equal(h->tier[0].h2d_duplex_ppm, 920000);
		for (int32_t t = 0; t < g->ntensors; t++) {
			assert_string_equal(h->tensor[t].id, g->tensor[t].id);
			assert_int_equal(h->tensor[t].bytes, g->tensor[t].bytes);
			assert_int_equal(h->tensor[t].home, g->tensor[t].home);
			assert_int_equal(h->tensor[t].kind, g->tensor[t].kind);
		}
		for (int32_t k = 0; k < g->nops; k++) {
			assert_string_equal(h->op[k].id, g->op[k].id);
			assert_int_equal(h->op[k].layer, g->op[k].layer);
			assert_int_equal(h->op[k].time_ps, g->op[k].time_ps);
		}
		free(buf);
		hoff_graph_free(h);
		hoff_graph_free(g);
	}
}

/* Every small model graph obeys the machine model: the schedule that
 * prefetches every tier-homed input at time 0 and runs the ops simulates
 * valid (tier capacities included) under a budget of its own peak, and
 * its compute is the sum of the roofline op times. */
static void test_simulates(void **state)
{
	(void)state;
	const char *const *models = hoff_model_names();
	const char *const *phases = hoff_model_phases();
	for (int a = 0; models[a]; a++)
		for (int p = 0; phases[p]; p++) {
			int32_t L = strcmp(models[a], "deepseek-v3") == 0 ? 4 : 2;
			hoff_model_opts o = opts(models[a], phases[p], L, 256);
			o.kv_block_tokens = 64;
			o.machine = "supernode";
			hoff_graph *g = build(&o);
			hoff_sched *s = NULL;
			assert_non_null(s = hoff_sched_noffload(g));
			int64_t peak = hoff_analysis_profile(g, NULL);
			hoff_sim_result r = tu_sim(g, s, peak);
			if (!r.valid)
				print_error("%s %s: %d: %s\n", models[a],
					    phases[p], (int)r.viol[0].rule,
					    r.viol[0].why);
			assert_true(r.valid);
			assert_int_equal(r.summary.peak_bytes, peak);
			int64_t c = 0;
			for (int32_t k = 0; k < g->nops; k++)
				c += g->op[k].time_ps;
			assert_int_equal(r.summary.compute_ps, c);
			hoff_sim_result_free(&r);
			hoff_sched_free(s);
			hoff_graph_free(g);
		}
}

/* (v2) Train and decode graphs are one step of a loop (repeat), prefill
 * is not; every tier carries its preset's duplex factors as FORMAT.md's
 * integer F: h200's PCIe 5.0 host 0.92 (920000 ppm, measured on an H200),
 * gh200's C2C 0.446, a100-pcie4's asymmetric Gen4 link 0.48 / 0.98, the
 * supernode pool 1 (unmeasured). Version 1 (gen --v1, the library's
 * default): no repeat, no factor written, the same tensors and ops. */
static void test_v2_fields(void **state)
{
	(void)state;
	static const struct {
		const char *phase;
		bool repeat;
	} ph[] = {{"prefill", false}, {"decode", true}, {"train", true}};
	for (int i = 0; i < 3; i++) {
		hoff_model_opts o = opts("llama3-8b", ph[i].phase, 2, 512);
		o.machine = "h200";
		o.version = 2;
		hoff_graph *g = build(&o);
		assert_int_equal(g->version, 2);
		assert_int_equal(g->repeat, ph[i].repeat);
		assert_true(g->tier[0].has_h2d_duplex &&
			    g->tier[0].has_d2h_duplex);
		assert_true(g->tier[0].h2d_duplex == 0.92);
		assert_int_equal(g->tier[0].h2d_duplex_ppm, 920000);
		assert_int_equal(g->tier[0].d2h_duplex_ppm, 920000);
		o.version = 1;
		hoff_graph *h = build(&o);
		assert_int_equal(h->version, 1);
		assert_false(h->repeat);
		assert_false(h->tier[0].has_h2d_duplex ||
			     h->tier[0].has_d2h_duplex);
		assert_int_equal(h->tier[0].h2d_duplex_ppm, HOFF_DUPLEX_ONE);
		assert_int_equal(h->nops, g->nops);
		assert_int_equal(h->ntensors, g->ntensors);
		hoff_graph_free(g);
		hoff_graph_free(h);
	}
	static const struct {
		const char *machine;
		int tier;
		int32_t h2d_ppm, d2h_ppm;
		bool has;
	} m[] = {{"h100-pcie5", 0, 920000, 920000, true},
		 {"gh200", 0, 446000, 446000, true},
		 {"supernode", 0, 920000, 920000, true},
		 {"supernode", 1, HOFF_DUPLEX_ONE, HOFF_DUPLEX_ONE, false},
		 {"a100-pcie4", 0, 480000, 980000, true}};
	for (size_t i = 0; i < sizeof m / sizeof *m; i++) {
		hoff_model_opts o = opts("llama3-8b", "decode", 1, 64);
		o.machine = m[i].machine;
		o.version = 2;
		hoff_graph *g = build(&o);
		const hoff_tier *t = &g->tier[m[i].tier];
		assert_int_equal(t->h2d_duplex_ppm, m[i].h2d_ppm);
		assert_int_equal(t->d2h_duplex_ppm, m[i].d2h_ppm);
		assert_int_equal(t->has_h2d_duplex, m[i].has);
		assert_int_equal(t->has_d2h_duplex, m[i].has);
		hoff_graph_free(g);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_param_counts),
		cmocka_unit_test(test_all_finish),
		cmocka_unit_test(test_op_counts),
		cmocka_unit_test(test_kv_blocks),
		cmocka_unit_test(test_train),
		cmocka_unit_test(test_routing),
		cmocka_unit_test(test_homes),
		cmocka_unit_test(test_optimizer_in_backward),
		cmocka_unit_test(test_optimizer_home),
		cmocka_unit_test(test_kv_host),
		cmocka_unit_test(test_shapes_simulate),
		cmocka_unit_test(test_bad_opts),
		cmocka_unit_test(test_roofline),
		cmocka_unit_test(test_presets),
		cmocka_unit_test(test_v2_fields),
		cmocka_unit_test(test_scale),
		cmocka_unit_test(test_json_roundtrip),
		cmocka_unit_test(test_simulates),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
