/* test_exec_cuda.c: the CUDA backend against the CPU reference (llm.c's
 * dev/cuda habit: validate first). Skipped, with the reason, when hoffopt
 * was built without CUDA or no GPU answers. With one: --verify passes and
 * catches a flipped byte exactly as on the CPU (same faults, same
 * order), streamed and captured into a CUDA graph; the measured events
 * come in the simulator's order; spin-kernel ops last their time; a
 * dropped wait is caught; --pace holds a slow tier to its rate. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_cases.h"

#define MS 1000000000LL

#define KV_GRAPH KV_GRAPH_OF("0.002")

/* Under compute-sanitizer (HOFF_SANITIZED set) kernels run many times
 * slower: timing is not asserted, nor that a race shows. */
static bool timed(void)
{
	return getenv("HOFF_SANITIZED") == NULL;
}

/* The CUDA backend's constructor. Built without CUDA there is none to
 * link, and no test gets past need_gpu() to call it. */
#if defined(HOFF_HAVE_CUDA)
static const backend_new cuda_new = hoff_backend_cuda_new;
#else
static const backend_new cuda_new = NULL;
#endif

/* Skips (with the reason) unless a GPU answers. */
static void need_gpu(void)
{
#if !defined(HOFF_HAVE_CUDA)
	print_message("skipped: hoffopt was built without CUDA (no nvcc)\n");
	skip();
#else
	int32_t n = 0;
	hoff_err e = {{0}};
	if (hoff_cuda_probe(&n, &e) != HOFF_OK) {
		print_message("skipped: %s\n", e.msg);
		skip();
	}
#endif
}

/* The KV case every test but test_cuda_pace runs (setup, teardown). */
typedef struct kv_case {
	hoff_graph *g;
	hoff_sched *s;
} kv_case;

static int kv_setup(void **state)
{
	kv_case *k = malloc(sizeof *k);
	if (!k)
		return -1;
	k->g = tu_graph(KV_GRAPH);
	k->s = tu_sched(k->g, KV_STEPS);
	*state = k;
	return 0;
}

static int kv_teardown(void **state)
{
	kv_case *k = *state;
	hoff_sched_free(k->s);
	hoff_graph_free(k->g);
	free(k);
	return 0;
}

/* The KV case (kv_setup's, in state); skips unless a GPU answers. */
static const kv_case *kv_on_gpu(void **state)
{
	need_gpu();
	return *state;
}

/* Each of x's nops ops lasted its 2 ms, within -10% and +20% (when
 * timed). */
static void check_op_times(const ran *x, int32_t nops)
{
	for (int32_t k = 0; timed() && k < nops; k++) {
		int64_t d = x->m.op_end_ps[k] - x->m.op_start_ps[k];
		assert_true(d > 2 * MS * 9 / 10 && d < 2 * MS * 12 / 10);
	}
}

/* s on g with --verify and the copy at `step` corrupted: CUDA reports
 * the CPU's faults, in its order (the step printed first). */
static void expect_cpu_faults(const hoff_graph *g, const hoff_sched *s,
			      int64_t step)
{
	hoff_exec_opts o = hoff_exec_defaults();
	o.verify = true;
	o.corrupt_step = step;
	ran c, x;
	print_message("  step %lld corrupted\n", (long long)step);
	run_on(hoff_backend_cpu_new, g, s, &o, &c);
	run_on(cuda_new, g, s, &o, &x);
	expect_same_faults(&x, &c);
	ran_free(&c);
	ran_free(&x);
}

/* --verify passes on CUDA as on the CPU; ops last their 2 ms. */
static void test_cuda_verify(void **state)
{
	const kv_case *k = kv_on_gpu(state);
	ran c, x;
	run_verified(hoff_backend_cpu_new, k->g, k->s, &c);
	run_verified(cuda_new, k->g, k->s, &x);
	check_events(&x);
	check_op_times(&x, k->g->nops);
	assert_int_equal(x.m.measured.h2d_bytes, c.m.measured.h2d_bytes);
	assert_int_equal(x.m.measured.d2h_bytes, c.m.measured.d2h_bytes);
	ran_free(&c);
	ran_free(&x);
}

/* A byte flipped in a copy is named as on the CPU. */
static void test_cuda_catches(void **state)
{
	const kv_case *k = kv_on_gpu(state);
	expect_cpu_faults(k->g, k->s, 4);
	expect_cpu_faults(k->g, k->s, 1);
	expect_cpu_faults(k->g, k->s, 2);
}

/* Captured into one CUDA graph: verifies, events in order, ops last
 * their 2 ms, and the host never lags. */
static void test_cuda_graph(void **state)
{
	const kv_case *k = kv_on_gpu(state);
	hoff_exec_opts o = hoff_exec_defaults();
	o.cuda_graph = true;
	for (int v = 0; v < 2; v++) {
		o.verify = v;
		ran x;
		run_on(cuda_new, k->g, k->s, &o, &x);
		assert_int_equal(x.m.nfaults, 0);
		assert_int_equal(x.m.lag_max_ps, 0);
		check_events(&x);
		if (!v)
			check_op_times(&x, k->g->nops);
		ran_free(&x);
	}
}

/* op2 without its wait on kv's prefetch (slowed 4x): --verify fails on
 * the GPU too, naming kv at step 4 or 5, in one of a few runs. */
static void test_cuda_drop(void **state)
{
	const kv_case *k = kv_on_gpu(state);
	hoff_exec_opts o = hoff_exec_defaults();
	o.verify = true;
	o.slow_step = 4;
	ran x;
	run_on(cuda_new, k->g, k->s, &o, &x);
	assert_int_equal(x.m.nfaults, 0); /* every wait: correct, if slow */
	int64_t pf = HOFF_NONE;
	for (int64_t i = 0; i < x.p.nxfers; i++)
		if (x.p.xfer[i].step == 4)
			pf = x.p.nops + i;
	o.drop_wait = wait_index(&x.p, 2, pf);
	assert_true(o.drop_wait >= 0);
	ran_free(&x);
	bool caught = false;
	for (int attempt = 0; attempt < 5 && !caught; attempt++) {
		run_on(cuda_new, k->g, k->s, &o, &x);
		if (x.m.nfaults) {
			caught = true;
			assert_true(x.m.fault[0].step == 4 ||
				    x.m.fault[0].step == 5);
			assert_int_equal(x.m.fault[0].tensor,
					 hoff_graph_find_tensor(k->g, "kv"));
		}
		ran_free(&x);
	}
	assert_true(caught || !timed());
}

/* A tier far slower than the link (1e8 B/s: w's 999999 bytes take
 * 10 ms): with --pace the transfer lasts its planned time. */
static void test_cuda_pace(void **state)
{
	(void)state;
	need_gpu();
	char json[4096];
	snprintf(json, sizeof json, "%s", KV_GRAPH);
	char *r = strstr(json, "\"h2d_Bps\": 1e9");
	assert_non_null(r);
	memcpy(r, "\"h2d_Bps\": 1e8", strlen("\"h2d_Bps\": 1e8"));
	hoff_graph *g = tu_graph(json);
	hoff_sched *s = tu_sched(g, KV_STEPS);
	hoff_exec_opts o = hoff_exec_defaults();
	o.pace = true;
	ran x;
	run_on(cuda_new, g, s, &o, &x);
	check_events(&x);
	for (int64_t i = 0; timed() && i < x.p.nxfers; i++) {
		int64_t d = x.m.x_end_ps[i] - x.m.x_start_ps[i];
		assert_true(d >= x.p.xfer[i].dur_ps * 95 / 100);
		assert_true(d <= x.p.xfer[i].dur_ps * 130 / 100 + MS / 10);
	}
	ran_free(&x);
	hoff_sched_free(s);
	hoff_graph_free(g);
}

/* (v2) The recompute schedule (exec_cases.h): verifies and its events
 * come in the simulator's order, as on the CPU; the recompute's output
 * flipped (step 6), and a repeat graph's home copy spoilt by its store
 * (step 8), give the CPU's faults, in its order. */
static void test_cuda_recompute(void **state)
{
	(void)state;
	need_gpu();
	hoff_graph *g = tu_graph(RC_GRAPH);
	hoff_sched *s = tu_sched(g, RC_STEPS);
	hoff_graph *gr = tu_graph(RC_REPEAT_GRAPH);
	hoff_sched *sr = tu_sched(gr, RC_REPEAT_HOME_STEPS);
	ran x;
	run_verified(cuda_new, g, s, &x);
	check_events(&x);
	ran_free(&x);
	expect_cpu_faults(g, s, 6);
	expect_cpu_faults(gr, sr, 8);
	hoff_sched_free(sr);
	hoff_graph_free(gr);
	hoff_sched_free(s);
	hoff_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_cuda_verify, kv_setup,
						kv_teardown),
		cmocka_unit_test_setup_teardown(test_cuda_catches, kv_setup,
						kv_teardown),
		cmocka_unit_test_setup_teardown(test_cuda_graph, kv_setup,
						kv_teardown),
		cmocka_unit_test_setup_teardown(test_cuda_drop, kv_setup,
						kv_teardown),
		cmocka_unit_test(test_cuda_pace),
		cmocka_unit_test(test_cuda_recompute),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
