/* test_exec_cuda.c: the CUDA backend against the CPU reference (llm.c's
 * dev/cuda habit: validate first). Skipped, with the reason, when hoffopt
 * was built without CUDA or no GPU answers. With one: --verify passes and
 * catches a flipped byte exactly as on the CPU, the measured events come
 * in the simulator's order, and spin-kernel ops last their time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec.h"
#include "testutil.h"
#include "xplan.h"

#define MS 1000000000LL

#define HOST "{\"name\": \"host\", \"h2d_Bps\": 1e9, \"d2h_Bps\": 1e9}"
#define GRAPH(tensors, ops)                                                    \
	"{\"format\": \"hoffopt.graph\", \"version\": 1, \"name\": \"t\", "    \
	"\"machine\": {\"device\": {\"memory_bytes\": 100000000}, "            \
	"\"tiers\": [" HOST "]}, \"tensors\": [" tensors "], \"ops\": [" ops   \
	"]}"
#define SCHED(steps)                                                           \
	"{\"format\": \"hoffopt.schedule\", \"version\": 1, \"steps\": ["      \
	steps "]}"
/* As in test_exec_cpu.c: steps 0 op0, 1 store kv, 2 prefetch w, 3 op1,
 * 4 prefetch kv, 5 op2. */
#define KV_GRAPH                                                               \
	GRAPH("{\"id\": \"x\", \"bytes\": 1000000, \"kind\": \"input\"},"      \
	      "{\"id\": \"kv\", \"bytes\": 500003, \"kind\": \"kv\"},"         \
	      "{\"id\": \"w\", \"bytes\": 999999, \"kind\": \"weight\", "      \
	      "\"home\": \"host\"},"                                           \
	      "{\"id\": \"y\", \"bytes\": 1000000, \"kind\": \"activation\"}," \
	      "{\"id\": \"z\", \"bytes\": 1000000, \"kind\": \"activation\"}," \
	      "{\"id\": \"o\", \"bytes\": 1000001, \"kind\": \"output\"}",     \
	      "{\"id\": \"op0\", \"inputs\": [\"x\"], \"updates\": [\"kv\"], " \
	      "\"outputs\": [\"y\"], \"time_s\": 0.002},"                      \
	      "{\"id\": \"op1\", \"inputs\": [\"y\", \"w\"], \"outputs\": "    \
	      "[\"z\"], \"time_s\": 0.002, \"workspace_bytes\": 500000},"      \
	      "{\"id\": \"op2\", \"inputs\": [\"z\", \"kv\"], \"updates\": "   \
	      "[\"kv\"], \"outputs\": [\"o\"], \"time_s\": 0.002}")
#define KV_STEPS                                                               \
	SCHED("{\"op\": \"op0\"}, {\"store\": \"kv\", \"to\": \"host\"},"      \
	      "{\"prefetch\": \"w\", \"from\": \"host\"}, {\"op\": \"op1\"},"   \
	      "{\"prefetch\": \"kv\", \"from\": \"host\"}, {\"op\": \"op2\"}")

#if defined(HOFF_HAVE_CUDA)
typedef hoff_status (*backend_new)(const hoff_xplan *, const hoff_exec_opts *,
				   hoff_backend **, hoff_err *);

typedef struct ran {
	hoff_sim_result pr;
	hoff_xplan p;
	hoff_exec_result m;
} ran;

static void run_on(backend_new make, const hoff_graph *g, const hoff_sched *s,
		   const hoff_exec_opts *o, ran *x)
{
	memset(x, 0, sizeof *x);
	hoff_sim_opts so = hoff_sim_defaults();
	so.timeline = true;
	so.op_times = true;
	hoff_err e = {{0}};
	assert_int_equal(hoff_sim_run(g, s, &so, &x->pr, &e), HOFF_OK);
	assert_int_equal(hoff_xplan_build(g, s, &x->pr, 1, &x->p, &e),
			 HOFF_OK);
	hoff_backend *b = NULL;
	hoff_status st = make(&x->p, o, &b, &e);
	if (st == HOFF_OK)
		st = hoff_exec_run(b, &x->m, &e);
	if (st != HOFF_OK)
		print_error("exec: %s\n", e.msg);
	assert_int_equal(st, HOFF_OK);
	hoff_backend_free(b);
}

static void ran_free(ran *x)
{
	hoff_exec_result_free(&x->m);
	hoff_xplan_free(&x->p);
	hoff_sim_result_free(&x->pr);
}

/* Same events as the simulator, in order, stalls aside. */
static void check_events(const ran *x)
{
	const hoff_timeline *a = &x->pr.tl, *b = &x->m.tl;
	size_t i = 0, j = 0;
	for (;;) {
		while (i < a->nev && a->ev[i].kind == HOFF_EV_STALL)
			i++;
		while (j < b->nev && b->ev[j].kind == HOFF_EV_STALL)
			j++;
		if (i == a->nev || j == b->nev)
			break;
		assert_int_equal(a->ev[i].kind, b->ev[j].kind);
		assert_int_equal(a->ev[i].step, b->ev[j].step);
		i++;
		j++;
	}
	assert_int_equal(i, a->nev);
	assert_int_equal(j, b->nev);
}
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

/* --verify passes on CUDA as on the CPU; ops last their 2 ms. */
static void test_cuda_verify(void **state)
{
	(void)state;
	need_gpu();
#if defined(HOFF_HAVE_CUDA)
	hoff_graph *g = tu_graph(KV_GRAPH);
	hoff_sched *s = tu_sched(g, KV_STEPS);
	hoff_exec_opts o = hoff_exec_defaults();
	o.verify = true;
	ran c, x;
	run_on(hoff_backend_cpu_new, g, s, &o, &c);
	run_on(hoff_backend_cuda_new, g, s, &o, &x);
	assert_int_equal(c.m.nfaults, 0);
	assert_int_equal(x.m.nfaults, 0);
	check_events(&x);
	for (int32_t k = 0; k < g->nops; k++) {
		int64_t d = x.m.op_end_ps[k] - x.m.op_start_ps[k];
		assert_true(d > 2 * MS * 9 / 10 && d < 2 * MS * 12 / 10);
	}
	assert_int_equal(x.m.measured.h2d_bytes, c.m.measured.h2d_bytes);
	assert_int_equal(x.m.measured.d2h_bytes, c.m.measured.d2h_bytes);
	ran_free(&c);
	ran_free(&x);
	hoff_sched_free(s);
	hoff_graph_free(g);
#endif
}

/* A byte flipped in a copy is named as on the CPU. */
static void test_cuda_catches(void **state)
{
	(void)state;
	need_gpu();
#if defined(HOFF_HAVE_CUDA)
	hoff_graph *g = tu_graph(KV_GRAPH);
	hoff_sched *s = tu_sched(g, KV_STEPS);
	hoff_exec_opts o = hoff_exec_defaults();
	o.verify = true;
	const int64_t steps[] = {4, 1, 2};
	for (int i = 0; i < 3; i++) {
		ran c, x;
		o.corrupt_step = steps[i];
		run_on(hoff_backend_cpu_new, g, s, &o, &c);
		run_on(hoff_backend_cuda_new, g, s, &o, &x);
		assert_true(x.m.nfaults >= 1);
		assert_int_equal(x.m.nfaults, c.m.nfaults);
		for (int64_t f = 0; f < x.m.nfaults; f++) {
			assert_int_equal(x.m.fault[f].step, c.m.fault[f].step);
			assert_int_equal(x.m.fault[f].tensor,
					 c.m.fault[f].tensor);
			assert_int_equal(x.m.fault[f].byte, c.m.fault[f].byte);
		}
		ran_free(&c);
		ran_free(&x);
	}
	hoff_sched_free(s);
	hoff_graph_free(g);
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cuda_verify),
		cmocka_unit_test(test_cuda_catches),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
