/* test_synth.c: the synthetic graph generator (src/synth.c) — exact op
 * counts, validity, determinism, the shapes as designed (kind counts worked
 * out by hand for one decode step and one training iteration), optimizer
 * state homed on host and updated in place, and the no-offload schedule:
 * it simulates valid with the peak hoff_synth_peak predicts, and that peak
 * matches the independent conformance vectors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "analysis.h"
#include "synth.h"
#include "testutil.h"

static hoff_graph *build(hoff_synth_shape shape, int64_t nops, int32_t layers,
			 bool host, uint64_t seed)
{
	hoff_synth_opts o = hoff_synth_defaults();
	o.shape = shape;
	o.nops = nops;
	o.layers = layers;
	o.weights_on_host = host;
	o.seed = seed;
	return tu_synth(&o);
}

static void count_kinds(const hoff_graph *g, int n[HOFF_NKINDS])
{
	memset(n, 0, HOFF_NKINDS * sizeof *n);
	for (int32_t t = 0; t < g->ntensors; t++)
		n[g->tensor[t].kind]++;
}

static void test_exact_counts(void **state)
{
	(void)state;
	static const int64_t ns[] = {1, 2, 7, 19, 1000, 1234};
	for (int shape = 0; shape < 2; shape++)
		for (int host = 0; host < 2; host++)
			for (size_t i = 0; i < sizeof ns / sizeof *ns; i++) {
				hoff_graph *g = build((hoff_synth_shape)shape,
						      ns[i], 3, host, 7);
				assert_int_equal(g->nops, ns[i]);
				/* Every tensor is touched by some op. */
				for (int32_t t = 0; t < g->ntensors; t++)
					assert_true(
						g->tensor[t].producer !=
							HOFF_NONE ||
						g->tensor[t].first_use !=
							HOFF_NONE);
				for (int32_t k = 0; k < g->nops; k++)
					assert_true(g->op[k].flags &
						    HOFF_O_HAS_LAYER);
				assert_true(g->device.memory_bytes >=
					    hoff_analysis_profile(g, NULL));
				hoff_graph_free(g);
			}
}

static void test_deterministic(void **state)
{
	(void)state;
	for (int shape = 0; shape < 2; shape++) {
		hoff_graph *a = build((hoff_synth_shape)shape, 3000, 4, 1, 42);
		hoff_graph *b = build((hoff_synth_shape)shape, 3000, 4, 1, 42);
		hoff_graph *c = build((hoff_synth_shape)shape, 3000, 4, 1, 43);
		assert_int_equal(a->ntensors, b->ntensors);
		assert_int_equal(a->device.memory_bytes,
				 b->device.memory_bytes);
		bool differ = false;
		for (int32_t t = 0; t < a->ntensors; t++) {
			const hoff_tensor *x = &a->tensor[t];
			const hoff_tensor *y = &b->tensor[t];
			assert_string_equal(x->id, y->id);
			assert_int_equal(x->bytes, y->bytes);
			assert_int_equal(x->kind, y->kind);
			assert_int_equal(x->home, y->home);
			assert_int_equal(x->flags, y->flags);
			if (t < c->ntensors && x->bytes != c->tensor[t].bytes)
				differ = true;
		}
		for (int32_t k = 0; k < a->nops; k++) {
			assert_string_equal(a->op[k].id, b->op[k].id);
			assert_int_equal(a->op[k].time_ps, b->op[k].time_ps);
			assert_int_equal(a->op[k].workspace_bytes,
					 b->op[k].workspace_bytes);
			assert_int_equal(a->in_off[k], b->in_off[k]);
			if (a->op[k].time_ps != c->op[k].time_ps)
				differ = true;
		}
		assert_int_equal(a->in_off[a->nops], b->in_off[b->nops]);
		assert_memory_equal(a->in, b->in,
				    (size_t)a->in_off[a->nops] * sizeof *a->in);
		assert_true(differ); /* another seed, another graph */
		hoff_graph_free(a);
		hoff_graph_free(b);
		hoff_graph_free(c);
	}
}

/* One decode step of L = 2 layers is 8 L + 3 = 19 ops. */
static void test_infer_kinds(void **state)
{
	(void)state;
	hoff_graph *g = build(HOFF_SYNTH_INFER, 19, 2, 0, 1);
	int n[HOFF_NKINDS];
	count_kinds(g, n);
	assert_int_equal(n[HOFF_KIND_WEIGHT], 6 * 2 + 3);
	assert_int_equal(n[HOFF_KIND_KV], 2); /* block 0 of each layer */
	assert_int_equal(n[HOFF_KIND_INPUT], 1);
	/* h0, 7 a layer, logits; the sampled tokens are the output. */
	assert_int_equal(n[HOFF_KIND_ACTIVATION], 1 + 7 * 2 + 1);
	assert_int_equal(n[HOFF_KIND_OUTPUT], 1);
	assert_int_equal(n[HOFF_KIND_OPTIMIZER] + n[HOFF_KIND_GRADIENT], 0);
	/* KV blocks: graph inputs on the device, updated in place. */
	for (int32_t t = 0; t < g->ntensors; t++)
		if (g->tensor[t].kind == HOFF_KIND_KV) {
			assert_int_equal(g->tensor[t].producer, HOFF_NONE);
			assert_int_equal(g->tensor[t].home, HOFF_DEVICE);
			assert_true(hoff_tensor_persistent(&g->tensor[t]));
		}
	int nupd = 0, ntime = 0, nroof = 0, nws = 0;
	for (int32_t k = 0; k < g->nops; k++) {
		nupd += (int)(g->upd_off[k + 1] - g->upd_off[k]);
		ntime += (g->op[k].flags & HOFF_O_HAS_TIME) != 0;
		nroof += (g->op[k].flags & HOFF_O_HAS_BYTES_ACCESSED) != 0;
		nws += g->op[k].workspace_bytes > 0;
	}
	assert_int_equal(nupd, 2);
	assert_int_equal(ntime + nroof, 19);
	assert_true(ntime > 0 && nroof > 0 && nws > 0);
	hoff_graph_free(g);

	/* 2 sequences of 2048 tokens: the KV pool is 16 blocks a layer,
	 * reused, and attention never reads more than the blocks so far. */
	g = build(HOFF_SYNTH_INFER, 2 * 2048 * 11 + 5, 1, 0, 1);
	count_kinds(g, n);
	assert_int_equal(n[HOFF_KIND_KV], 16);
	hoff_graph_free(g);
}

/* One training iteration of L = 2 layers is 15 L + 4 = 34 ops. */
static void test_train_kinds(void **state)
{
	(void)state;
	hoff_graph *g = build(HOFF_SYNTH_TRAIN, 34, 2, 0, 1);
	int n[HOFF_NKINDS];
	count_kinds(g, n);
	assert_int_equal(n[HOFF_KIND_WEIGHT], 6 * 2 + 3);
	assert_int_equal(n[HOFF_KIND_OPTIMIZER], 2 * (2 + 1));
	assert_int_equal(n[HOFF_KIND_INPUT], 2); /* tokens, labels */
	assert_int_equal(n[HOFF_KIND_ACTIVATION], 1 + 7 * 2);
	assert_int_equal(n[HOFF_KIND_OUTPUT], 1); /* loss */
	/* dh, dlnf, dhead; 13 a layer; demb. */
	assert_int_equal(n[HOFF_KIND_GRADIENT], 3 + 13 * 2 + 1);
	assert_int_equal(n[HOFF_KIND_KV], 0);
	hoff_graph_free(g);
}

static void test_train_optimizer(void **state)
{
	(void)state;
	for (int host = 0; host < 2; host++) {
		hoff_graph *g = build(HOFF_SYNTH_TRAIN, 2000, 4, host, 3);
		int32_t tier = hoff_graph_find_tier(g, "host");
		assert_int_equal(tier, 0);
		int nopt = 0;
		for (int32_t t = 0; t < g->ntensors; t++) {
			const hoff_tensor *x = &g->tensor[t];
			if (x->kind == HOFF_KIND_WEIGHT)
				assert_int_equal(x->home,
						 host ? tier : HOFF_DEVICE);
			if (x->kind != HOFF_KIND_OPTIMIZER)
				continue;
			nopt++;
			assert_int_equal(x->home, tier);
			assert_int_equal(x->producer, HOFF_NONE);
			assert_true(hoff_tensor_persistent(x));
			/* Every use is an update by an optimizer op. */
			int64_t nuse = g->use_off[t + 1] - g->use_off[t];
			assert_true(nuse >= 2); /* 2000 ops: 3 iterations */
			for (int64_t i = g->use_off[t]; i < g->use_off[t + 1];
			     i++) {
				int32_t k = g->use[i];
				assert_string_equal(g->op[k].kind, "optimizer");
				bool found = false;
				for (int64_t j = g->upd_off[k];
				     j < g->upd_off[k + 1]; j++)
					found |= g->upd[j] == t;
				assert_true(found);
			}
		}
		assert_int_equal(nopt, 2 * (4 + 1));
		/* Stashed activations live from forward to backward. */
		int nlong = 0;
		for (int32_t t = 0; t < g->ntensors; t++) {
			const hoff_tensor *x = &g->tensor[t];
			if (x->kind == HOFF_KIND_ACTIVATION &&
			    x->last_use - x->producer > 20)
				nlong++;
		}
		assert_true(nlong > 10);
		hoff_graph_free(g);
	}
}

static void test_bad_options(void **state)
{
	(void)state;
	hoff_graph *g = NULL;
	hoff_err e;
	hoff_synth_opts o = hoff_synth_defaults();
	o.nops = 0;
	assert_int_equal(hoff_synth_build(&o, &g, &e), HOFF_EUSAGE);
	o.nops = HOFF_SYNTH_MAX_OPS + 1;
	assert_int_equal(hoff_synth_build(&o, &g, &e), HOFF_EUSAGE);
	o = hoff_synth_defaults();
	o.layers = 0;
	assert_int_equal(hoff_synth_build(&o, &g, &e), HOFF_EUSAGE);
	o = hoff_synth_defaults();
	o.ntiers = 3;
	assert_int_equal(hoff_synth_build(&o, &g, &e), HOFF_EUSAGE);
	assert_null(g);
}

/* One splitmix64 draw (the generator's stream, written out here). */
static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

/* tokens: iteration 0's microbatch is T = 3/4 tokens plus 256 times a
 * draw mod (tokens / 512 + 1), the draw after the 2 layers' FFN widths;
 * its embedding output "i0.h0" holds T x 2048 bf16 values. The meta
 * names tokens only when not 4096 (default graphs stay byte for byte). */
static void test_tokens(void **state)
{
	(void)state;
	static const int32_t toks[] = {4096, 8192, 256, 65536};
	for (size_t i = 0; i < sizeof toks / sizeof *toks; i++) {
		hoff_synth_opts o = hoff_synth_defaults();
		o.shape = HOFF_SYNTH_TRAIN;
		o.nops = 40;
		o.layers = 2;
		o.seed = 5;
		o.tokens = toks[i];
		hoff_graph *g = NULL;
		hoff_err e;
		assert_int_equal(hoff_synth_build(&o, &g, &e), HOFF_OK);
		uint64_t st = 5;
		splitmix(&st);
		splitmix(&st);
		uint64_t m = (uint64_t)(toks[i] / 512 + 1);
		int64_t T =
			toks[i] * 3 / 4 + (int64_t)(splitmix(&st) % m) * 256;
		int32_t h0 = hoff_graph_find_tensor(g, "i0.h0");
		assert_true(h0 != HOFF_NONE);
		assert_int_equal(g->tensor[h0].bytes, T * 2048 * 2);
		char want[32];
		snprintf(want, sizeof want, "\"tokens\":%d}", (int)toks[i]);
		assert_non_null(g->meta);
		assert_int_equal(strstr(g->meta, want) != NULL,
				 toks[i] != 4096);
		assert_null(strstr(g->meta, "\"tokens\":4096"));
		hoff_graph_free(g);
	}
	hoff_synth_opts o = hoff_synth_defaults();
	hoff_graph *g = NULL;
	hoff_err e;
	o.tokens = HOFF_SYNTH_MIN_TOKENS - 1;
	assert_int_equal(hoff_synth_build(&o, &g, &e), HOFF_EUSAGE);
	o.tokens = HOFF_SYNTH_MAX_TOKENS + 1;
	assert_int_equal(hoff_synth_build(&o, &g, &e), HOFF_EUSAGE);
	assert_null(g);
}

/* The no-offload schedule is valid under the generated memory and peaks
 * where hoff_synth_peak says. */
static void test_sched_none(void **state)
{
	(void)state;
	for (int shape = 0; shape < 2; shape++)
		for (int host = 0; host < 2; host++) {
			hoff_graph *g = build((hoff_synth_shape)shape, 700, 3,
					      host, 11);
			hoff_sched *s = NULL;
			hoff_err e;
			assert_non_null(s = hoff_sched_noffload(g));
			assert_int_equal(hoff_sched_check(s, g, "s", &e),
					 HOFF_OK);
			int64_t npre = s->nsteps - g->nops;
			assert_true(host ? npre > 0 : (shape ? npre > 0
							     : npre == 0));
			hoff_sim_result r = tu_sim(g, s, HOFF_NONE);
			assert_true(r.valid);
			assert_int_equal(r.summary.peak_bytes,
					 hoff_analysis_profile(g, NULL));
			assert_true(r.summary.peak_bytes <=
				    g->device.memory_bytes);
			hoff_sim_result_free(&r);
			hoff_sched_free(s);
			hoff_graph_free(g);
		}
}

/* hoff_synth_peak agrees with the independent implementation on every
 * valid no-offload conformance vector whose prefetches all come first:
 * 1 when it was checked. */
static int check_peak(const char *name, const cJSON *v, void *arg)
{
	(void)arg;
	const cJSON *ex = cJSON_GetObjectItem(v, "expect");
	/* Only schedules of our shape: every prefetch before the first op. */
	bool seen_op = false;
	const cJSON *st;
	const cJSON *sched = cJSON_GetObjectItem(v, "schedule");
	cJSON_ArrayForEach(st, cJSON_GetObjectItem(sched, "steps"))
	{
		if (cJSON_GetObjectItem(st, "op"))
			seen_op = true;
		else if (seen_op)
			return 0;
	}
	if (!cJSON_IsTrue(cJSON_GetObjectItem(ex, "valid")))
		return 0;
	char *gt = cJSON_PrintUnformatted(cJSON_GetObjectItem(v, "graph"));
	hoff_graph *g = tu_graph(gt);
	const cJSON *sum = cJSON_GetObjectItem(ex, "summary");
	int64_t want =
		(int64_t)cJSON_GetObjectItem(sum, "peak_bytes")->valuedouble;
	if (hoff_analysis_profile(g, NULL) != want)
		print_error("%s: peak %lld, expected %lld\n", name,
			    (long long)hoff_analysis_profile(g, NULL),
			    (long long)want);
	assert_int_equal(hoff_analysis_profile(g, NULL), want);
	hoff_graph_free(g);
	free(gt);
	return 1;
}

static void test_peak_conformance(void **state)
{
	(void)state;
	int n = 0;
	assert_true(tu_vectors("-none.json", check_peak, NULL, &n) > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact_counts),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_infer_kinds),
		cmocka_unit_test(test_train_kinds),
		cmocka_unit_test(test_train_optimizer),
		cmocka_unit_test(test_bad_options),
		cmocka_unit_test(test_tokens),
		cmocka_unit_test(test_sched_none),
		cmocka_unit_test(test_peak_conformance),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
