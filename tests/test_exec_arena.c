/* test_exec_arena.c: the executors' offset plan — the arena allocator on
 * hand-checked sequences, and the lowering of small schedules (offsets,
 * waits, regions) checked by hand, the plan's replay against the simulator,
 * and graph scaling. Machine as in test_sim.c: 1 MB moves in 1 ms. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "exec_cases.h"
#include "models.h"
#include "testutil_policy.h"
#include "xduplex.h"

#define MS 1000000000LL
#define MB 1000000LL


/* FORMAT.md's example. */
#define EX_GRAPH                                                               \
	GRAPH("{\"id\": \"x\", \"bytes\": 1000000, \"kind\": \"input\"},"      \
	      "{\"id\": \"w0\", \"bytes\": 4000000, \"kind\": \"weight\", "    \
	      "\"home\": \"host\"},"                                           \
	      "{\"id\": \"w1\", \"bytes\": 4000000, \"kind\": \"weight\", "    \
	      "\"home\": \"host\"},"                                           \
	      "{\"id\": \"a\", \"bytes\": 2000000, \"kind\": \"activation\"}," \
	      "{\"id\": \"b\", \"bytes\": 2000000, \"kind\": \"output\"}",     \
	      "{\"id\": \"op0\", \"inputs\": [\"x\", \"w0\"], \"outputs\": "   \
	      "[\"a\"], \"time_s\": 0.004},"                                   \
	      "{\"id\": \"op1\", \"inputs\": [\"a\", \"w1\"], \"outputs\": "   \
	      "[\"b\"], \"time_s\": 0.004}")
#define EX_STEPS                                                               \
	SCHED("{\"prefetch\": \"w0\", \"from\": \"host\"},"                    \
	      "{\"prefetch\": \"w1\", \"from\": \"host\"}, {\"op\": \"op0\"},"  \
	      "{\"detach\": \"w0\"}, {\"op\": \"op1\"}")

/* kv is updated, stored, prefetched back and updated again; w comes from
 * the host; a workspace on op1. */
#define KV_GRAPH                                                               \
	GRAPH("{\"id\": \"x\", \"bytes\": 1000000, \"kind\": \"input\"},"      \
	      "{\"id\": \"kv\", \"bytes\": 1000000, \"kind\": \"kv\"},"        \
	      "{\"id\": \"w\", \"bytes\": 1000000, \"kind\": \"weight\", "     \
	      "\"home\": \"host\"},"                                           \
	      "{\"id\": \"y\", \"bytes\": 1000000, \"kind\": \"activation\"}," \
	      "{\"id\": \"z\", \"bytes\": 1000000, \"kind\": \"activation\"}," \
	      "{\"id\": \"o\", \"bytes\": 1000000, \"kind\": \"output\"}",     \
	      "{\"id\": \"op0\", \"inputs\": [\"x\"], \"updates\": [\"kv\"], " \
	      "\"outputs\": [\"y\"], \"time_s\": 0.001},"                      \
	      "{\"id\": \"op1\", \"inputs\": [\"y\", \"w\"], \"outputs\": "    \
	      "[\"z\"], \"time_s\": 0.001, \"workspace_bytes\": 500000},"      \
	      "{\"id\": \"op2\", \"inputs\": [\"z\", \"kv\"], \"updates\": "   \
	      "[\"kv\"], \"outputs\": [\"o\"], \"time_s\": 0.001}")

static void check_prev(hoff_arena *a, const int32_t *want, size_t n)
{
	size_t got;
	const int32_t *p = hoff_arena_prev(a, &got);
	assert_int_equal(got, n);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(p[i], want[i]);
}

/* Best fit, the top, coalescing and previous occupants by hand. */
static void test_arena_hand(void **state)
{
	(void)state;
	hoff_err e;
	hoff_arena *a = hoff_arena_new(1);
	int64_t o;
	assert_int_equal(hoff_arena_alloc(a, 100, &o, &e), HOFF_OK); /* A */
	assert_int_equal(o, 0);
	assert_int_equal(hoff_arena_alloc(a, 50, &o, &e), HOFF_OK); /* B */
	assert_int_equal(o, 100);
	assert_int_equal(hoff_arena_alloc(a, 30, &o, &e), HOFF_OK); /* C */
	assert_int_equal(o, 150);
	assert_int_equal(hoff_arena_alloc(a, 20, &o, &e), HOFF_OK); /* D */
	assert_int_equal(o, 180);
	assert_int_equal(hoff_arena_high_water(a), 200);
	/* Holes [0,100) and [150,180): 25 bytes go to the smaller one. */
	assert_int_equal(hoff_arena_release(a, 0, 0, 100, &e), HOFF_OK);
	assert_int_equal(hoff_arena_release(a, 2, 150, 30, &e), HOFF_OK);
	assert_int_equal(hoff_arena_in_use(a), 70);
	assert_int_equal(hoff_arena_alloc(a, 25, &o, &e), HOFF_OK); /* E */
	assert_int_equal(o, 150);
	check_prev(a, (int32_t[]){2}, 1);
	/* 40 fits only [0,100); it reuses A's bytes. */
	assert_int_equal(hoff_arena_alloc(a, 40, &o, &e), HOFF_OK); /* F */
	assert_int_equal(o, 0);
	check_prev(a, (int32_t[]){0}, 1);
	/* 70 fits nowhere (holes 60 and 5): the top grows. */
	assert_int_equal(hoff_arena_alloc(a, 70, &o, &e), HOFF_OK); /* G */
	assert_int_equal(o, 200);
	check_prev(a, NULL, 0);
	assert_int_equal(hoff_arena_high_water(a), 270);
	/* B [100,150) joins [40,100): a 110-byte hole at 40 that held A's
	 * and B's bytes. */
	assert_int_equal(hoff_arena_release(a, 1, 100, 50, &e), HOFF_OK);
	assert_int_equal(hoff_arena_alloc(a, 110, &o, &e), HOFF_OK);
	assert_int_equal(o, 40);
	check_prev(a, (int32_t[]){0, 1}, 2);
	/* Freeing the top block lowers the top; the next block goes there
	 * and names G as its previous occupant. */
	assert_int_equal(hoff_arena_release(a, 6, 200, 70, &e), HOFF_OK);
	assert_int_equal(hoff_arena_alloc(a, 10, &o, &e), HOFF_OK);
	assert_int_equal(o, 200);
	check_prev(a, (int32_t[]){6}, 1);
	assert_int_equal(hoff_arena_high_water(a), 270);
	hoff_arena_free(a);
}

/* Alignment rounds every block up. */
static void test_arena_align(void **state)
{
	(void)state;
	hoff_err e;
	hoff_arena *a = hoff_arena_new(256);
	int64_t o;
	assert_int_equal(hoff_arena_alloc(a, 1, &o, &e), HOFF_OK);
	assert_int_equal(o, 0);
	assert_int_equal(hoff_arena_alloc(a, 300, &o, &e), HOFF_OK);
	assert_int_equal(o, 256);
	assert_int_equal(hoff_arena_high_water(a), 768);
	hoff_arena_free(a);
}

/* Many random blocks: live ones never overlap; the replay is the same
 * twice (determinism). */
static void test_arena_random(void **state)
{
	(void)state;
	enum { N = 4000 };
	int64_t off[N], sz[N], first[N];
	bool live[N] = {false};
	for (int round = 0; round < 2; round++) {
		hoff_err e;
		hoff_arena *a = hoff_arena_new(1);
		uint64_t x = 12345;
		for (int i = 0; i < N; i++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			sz[i] = 1 + (int64_t)((x >> 33) % 1000);
			assert_int_equal(hoff_arena_alloc(a, sz[i], &off[i], &e),
					 HOFF_OK);
			live[i] = true;
			if (round == 0)
				first[i] = off[i];
			else
				assert_int_equal(off[i], first[i]);
			int j = (int)((x >> 20) % (uint64_t)(i + 1));
			if (live[j] && (x >> 60) < 9) {
				assert_int_equal(hoff_arena_release(
							 a, j, off[j], sz[j], &e),
						 HOFF_OK);
				live[j] = false;
			}
		}
		/* Check the live blocks pairwise-disjoint by sorting. */
		int64_t n = 0, (*iv)[2] = malloc(sizeof *iv * N);
		for (int i = 0; i < N; i++)
			if (live[i]) {
				iv[n][0] = off[i];
				iv[n][1] = off[i] + sz[i];
				n++;
			}
		for (int64_t i = 1; i < n; i++) /* insertion sort */
			for (int64_t k = i; k > 0 && iv[k][0] < iv[k - 1][0];
			     k--) {
				int64_t t0 = iv[k][0], t1 = iv[k][1];
				iv[k][0] = iv[k - 1][0];
				iv[k][1] = iv[k - 1][1];
				iv[k - 1][0] = t0;
				iv[k - 1][1] = t1;
			}
		for (int64_t i = 1; i < n; i++)
			assert_true(iv[i][0] >= iv[i - 1][1]);
		assert_true(hoff_arena_high_water(a) >= iv[n - 1][1]);
		free(iv);
		hoff_arena_free(a);
	}
}

typedef struct planned {
	hoff_graph *g;
	hoff_sched *s;
	hoff_sim_result r;
	hoff_xplan p;
} planned;

static planned plan(const char *graph, const char *sched)
{
	planned x;
	x.g = tu_graph(graph);
	x.s = tu_sched(x.g, sched);
	hoff_sim_opts o = hoff_sim_defaults();
	o.timeline = true;
	o.op_times = true;
	hoff_err e = {{0}};
	assert_int_equal(hoff_sim_run(x.g, x.s, &o, &x.r, &e), HOFF_OK);
	assert_true(x.r.valid);
	hoff_status st = hoff_xplan_build(x.g, x.s, &x.r, 1, &x.p, &e);
	if (st != HOFF_OK)
		print_error("xplan: %s\n", e.msg);
	assert_int_equal(st, HOFF_OK);
	return x;
}

static void unplan(planned *x)
{
	hoff_xplan_free(&x->p);
	hoff_sim_result_free(&x->r);
	hoff_sched_free(x->s);
	hoff_graph_free(x->g);
}

static int64_t block_off(const hoff_xplan *p, const char *tensor, int nth)
{
	int32_t t = hoff_graph_find_tensor(p->g, tensor);
	for (int64_t i = 0; i < p->nblocks; i++)
		if (p->block[i].tensor == t && nth-- == 0)
			return p->block[i].off;
	fail_msg("no block %d of %s", nth, tensor);
	return -1;
}

/* FORMAT.md's example: x at 0, w0 and w1 prefetched at 0 stack above it,
 * a at op0's start above them; at 8 ms x and w0 go (op0's finish, the
 * detach) and b takes their merged hole at 0. High water = the simulator's
 * peak, 11 MB at 4 ms. */
static void test_plan_example(void **state)
{
	(void)state;
	planned x = plan(EX_GRAPH, EX_STEPS);
	hoff_xplan *p = &x.p;
	assert_int_equal(p->nblocks, 5);
	assert_int_equal(block_off(p, "x", 0), 0);
	assert_int_equal(block_off(p, "w0", 0), 1 * MB);
	assert_int_equal(block_off(p, "w1", 0), 5 * MB);
	assert_int_equal(block_off(p, "a", 0), 9 * MB);
	assert_int_equal(block_off(p, "b", 0), 0);
	assert_int_equal(p->arena_bytes, 11 * MB);
	assert_int_equal(p->plan_peak_bytes, x.r.summary.peak_bytes);
	assert_int_equal(p->arena_bytes, x.r.summary.peak_bytes);
	/* Transfers: both issued at time 0 with nothing to wait for. */
	assert_int_equal(p->nxfers, 2);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(p->xfer[i].after_op, HOFF_NONE);
		assert_int_equal(p->xfer[i].nwait, 0);
		assert_int_equal(p->xfer[i].stream, 1);
		assert_int_equal(p->xfer[i].host_off, i * 4 * MB);
	}
	assert_int_equal(p->xfer[1].dev_off, 5 * MB);
	/* op0 waits for w0's prefetch; op1 for w1's, which also covers the
	 * bytes b takes over from w0 (the latest on that channel). */
	assert_int_equal(p->op[0].nwait, 1);
	assert_int_equal(p->wait[p->op[0].wait_off], 0);
	assert_int_equal(p->op[1].nwait, 1);
	assert_int_equal(p->wait[p->op[1].wait_off], 1);
	/* op0 reads x at 0 and w0 at 1 MB, writes a at 9 MB. */
	const hoff_graph *g = x.g;
	assert_int_equal(p->in_dev[g->in_off[0]], 0);
	assert_int_equal(p->in_dev[g->in_off[0] + 1], 1 * MB);
	assert_int_equal(p->out_dev[g->out_off[0]], 9 * MB);
	assert_int_equal(p->out_dev[g->out_off[1]], 0);
	/* Regions: x on the device, w0 and w1 on the host at first; at the
	 * end w1 (device and host), w0 (host), b. */
	assert_int_equal(p->ninit, 3);
	assert_int_equal(p->nfinal, 4);
	unplan(&x);
}

/* The stored-and-refetched kv gets a second block; the prefetch waits for
 * the store; versions follow the updates. */
static void test_plan_kv(void **state)
{
	(void)state;
	planned x = plan(KV_GRAPH, KV_STEPS);
	hoff_xplan *p = &x.p;
	/* Transfers: 0 store kv (d2h, after op0), 1 prefetch w, 2 prefetch
	 * kv (after op1, waits for the store on the other channel). */
	assert_int_equal(p->nxfers, 3);
	assert_int_equal(p->xfer[0].store, 1);
	assert_int_equal(p->xfer[0].stream, 2);
	assert_int_equal(p->xfer[0].version, 1);
	assert_int_equal(p->xfer[0].after_op, 0);
	assert_int_equal(p->xfer[2].after_op, 1);
	assert_int_equal(p->xfer[2].version, 1);
	bool waits_store = false;
	for (int32_t j = 0; j < p->xfer[2].nwait; j++)
		waits_store |= p->wait[p->xfer[2].wait_off + j] == 0;
	assert_true(waits_store);
	/* op2's update writes version 2. */
	const hoff_graph *g = x.g;
	assert_int_equal(p->upd_ver[g->upd_off[2]], 2);
	/* Two blocks of kv; plan peak = the simulator's. */
	int nkv = 0, ws = 0;
	int32_t kv = hoff_graph_find_tensor(g, "kv");
	for (int64_t i = 0; i < p->nblocks; i++) {
		nkv += p->block[i].tensor == kv;
		ws += p->block[i].tensor == HOFF_NONE;
	}
	assert_int_equal(nkv, 2);
	assert_int_equal(ws, 1);
	assert_true(p->op[1].ws_off >= 0);
	assert_int_equal(p->plan_peak_bytes, x.r.summary.peak_bytes);
	assert_true(p->arena_bytes >= x.r.summary.peak_bytes);
	/* End: kv v2, w, o on the device; w on the host (kv's host copy is
	 * stale: version 1). */
	assert_int_equal(p->nfinal, 4);
	for (int64_t i = 0; i < p->nfinal; i++)
		if (p->final[i].tensor == kv) {
			assert_int_equal(p->final[i].tier, HOFF_DEVICE);
			assert_int_equal(p->final[i].version, 2);
		}
	unplan(&x);
}

/* Plans s on g and checks the replay against the simulation. */
static void check_replay_g(const hoff_graph *g, const hoff_sched *s)
{
	planned x = {0};
	plan_on(g, s, 1, &x.r, &x.p);
	hoff_err e = {{0}};
	const hoff_xplan *p = &x.p;
	size_t no = (size_t)p->nops + 1, nx = (size_t)p->nxfers + 1;
	int64_t *os = calloc(no, 8), *oe = calloc(no, 8), *xs = calloc(nx, 8),
		*xe = calloc(nx, 8);
	assert_int_equal(hoff_xplan_replay(p, os, oe, xs, xe, &e), HOFF_OK);
	for (int32_t k = 0; k < p->nops; k++) {
		assert_int_equal(os[k], p->op[k].pred_start_ps);
		assert_int_equal(oe[k], p->op[k].pred_end_ps);
	}
	for (int64_t i = 0; i < p->nxfers; i++) {
		assert_int_equal(xs[i], p->xfer[i].pred_start_ps);
		assert_int_equal(xe[i], p->xfer[i].pred_end_ps);
	}
	/* The memory counter on predicted times peaks at the simulator's. */
	hoff_timeline tl = {0};
	int64_t peak;
	assert_int_equal(hoff_xplan_memory(p, os, oe, xe, &tl, &peak, &e),
			 HOFF_OK);
	assert_int_equal(peak, x.r.summary.peak_bytes);
	hoff_timeline_free(&tl);
	free(os);
	free(oe);
	free(xs);
	free(xe);
	hoff_xplan_free(&x.p);
	hoff_sim_result_free(&x.r);
}

static void check_replay(const char *graph, const char *sched)
{
	hoff_graph *g = tu_graph(graph);
	hoff_sched *s = tu_sched(g, sched);
	check_replay_g(g, s);
	hoff_sched_free(s);
	hoff_graph_free(g);
}

/* The executors' waits add nothing to the machine model: replaying the
 * plan on its own durations gives the simulator's times. */
static void test_replay_is_sim(void **state)
{
	(void)state;
	check_replay(EX_GRAPH, EX_STEPS);
	check_replay(KV_GRAPH, KV_STEPS);
	/* A prefetch issued while its store is in flight waits for it. */
	check_replay(KV_GRAPH,
		     SCHED("{\"op\": \"op0\"}, {\"store\": \"kv\", \"to\": "
			   "\"host\"}, {\"prefetch\": \"kv\", \"from\": "
			   "\"host\"}, {\"prefetch\": \"w\", \"from\": "
			   "\"host\"}, {\"op\": \"op1\"}, {\"op\": \"op2\"}"));
}

/* The planner on model graphs under every policy: the replay is the
 * simulation, and the plan's peak the simulator's. */
static void test_replay_models(void **state)
{
	(void)state;
	static const char *const models[][3] = {
		{"llama3-8b", "decode", "host"},
		{"llama3-8b", "train", "auto"},
		{"mixtral-8x7b", "decode", "auto"},
	};
	static const char *const policies[] = {"none", "reactive",
					       "lookahead:1", "greedy"};
	for (size_t m = 0; m < sizeof models / sizeof models[0]; m++) {
		hoff_model_opts mo = hoff_model_defaults();
		mo.model = models[m][0];
		mo.phase = models[m][1];
		mo.weights = models[m][2];
		mo.layers = 2;
		mo.seq = 512;
		hoff_graph *g = tu_model(&mo);
		for (size_t q = 0; q < sizeof policies / sizeof policies[0];
		     q++) {
			hoff_policy_report rep;
			hoff_sched *s =
				tu_plan(g, policies[q], HOFF_NONE, 0.01, &rep);
			check_replay_g(g, s);
			hoff_sched_free(s);
		}
		hoff_graph_free(g);
	}
}

/* Scaling: durations x 2 and sizes x 0.5 keep transfer times x 2. */
static void test_scale(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(EX_GRAPH);
	hoff_sched *s = tu_sched(g, EX_STEPS);
	hoff_err e;
	assert_int_equal(hoff_exec_scale(g, 2, 0.5, &e), HOFF_OK);
	assert_int_equal(g->tensor[hoff_graph_find_tensor(g, "w0")].bytes,
			 2 * MB);
	assert_int_equal(g->op[0].time_ps, 8 * MS);
	assert_int_equal(hoff_xfer_ps(g, 0, 2 * MB, true), 8 * MS);
	hoff_sim_result r = tu_sim(g, s, INT64_MAX);
	assert_true(r.valid);
	assert_int_equal(r.summary.makespan_ps, 24 * MS);
	assert_int_equal(r.summary.peak_bytes, 11 * MB / 2);
	hoff_sim_result_free(&r);
	/* Sizes round up to at least a byte. */
	assert_int_equal(hoff_exec_scale(g, 1, 1e-9, &e), HOFF_OK);
	assert_int_equal(g->tensor[0].bytes, 1);
	assert_int_not_equal(hoff_exec_scale(g, 0, 1, &e), HOFF_OK);
	assert_int_not_equal(hoff_exec_scale(g, 1, -1, &e), HOFF_OK);
	hoff_sched_free(s);
	hoff_graph_free(g);
}

/* Simulates s on g (timeline, op times) into *r (caller frees): s is
 * invalid, and the planner refuses it (HOFF_EINVALID). */
static void expect_refused(const hoff_graph *g, const hoff_sched *s,
			   hoff_sim_result *r)
{
	hoff_sim_opts o = hoff_sim_defaults();
	o.timeline = o.op_times = true;
	hoff_err e = {{0}};
	assert_int_equal(hoff_sim_run(g, s, &o, r, &e), HOFF_OK);
	assert_false(r->valid);
	hoff_xplan p;
	assert_int_equal(hoff_xplan_build(g, s, r, 1, &p, &e), HOFF_EINVALID);
}

/* An invalid simulation is refused by the planner. */
static void test_plan_refuses_invalid(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(EX_GRAPH);
	/* op0 before w0 is fetched: rule 1. */
	hoff_sched *s = tu_sched(g, SCHED("{\"op\": \"op0\"}, {\"op\": "
					  "\"op1\"}"));
	hoff_sim_result r;
	expect_refused(g, s, &r);
	hoff_sim_result_free(&r);
	hoff_sched_free(s);
	hoff_graph_free(g);
}

/* Regression (issue 22, item 11): a schedule with no transfers plans
 * and runs (xplan once passed qsort a NULL array of 0 dependencies,
 * undefined behaviour the sanitizer build aborts on). */
static void test_plan_no_transfers(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(
		GRAPH("{\"id\": \"x\", \"bytes\": 100, \"kind\": \"input\"},"
		      "{\"id\": \"y\", \"bytes\": 100, \"kind\": \"output\"}",
		      "{\"id\": \"op0\", \"inputs\": [\"x\"], \"outputs\": "
		      "[\"y\"], \"time_s\": 0.001}"));
	hoff_sched *s = tu_sched(g, SCHED("{\"op\": \"op0\"}"));
	ran x;
	run_verified(hoff_backend_cpu_new, g, s, &x);
	assert_int_equal(x.p.nxfers, 0);
	assert_int_equal(x.p.nwaits, 0);
	ran_free(&x);
	hoff_sched_free(s);
	hoff_graph_free(g);
}

/* Regression (issue 22, item 11): a simulation that fails (w, 3e6 bytes
 * at 1 B/s, fetched twice: the second fetch ends past 2^62 ps; the
 * reader allows one fetch of each tensor) leaves r owning nothing; its
 * violation array once leaked there. */
static void test_sim_error_frees(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(GRAPH_ON(
		"1", "", "{\"name\": \"host\", \"h2d_Bps\": 1, \"d2h_Bps\": 1}",
		"{\"id\": \"w\", \"bytes\": 3000000, \"kind\": \"weight\", "
		"\"home\": \"host\"},"
		"{\"id\": \"a\", \"bytes\": 8, \"kind\": \"activation\"},"
		"{\"id\": \"o\", \"bytes\": 8, \"kind\": \"output\"}",
		"{\"id\": \"op0\", \"inputs\": [\"w\"], "
		"\"outputs\": [\"a\"], \"time_s\": 0.001}, {\"id\": \"op1\", "
		"\"inputs\": [\"a\", \"w\"], \"outputs\": [\"o\"], "
		"\"time_s\": 0.001}"));
	hoff_sched *s =
		tu_sched(g, SCHED("{\"prefetch\": \"w\", \"from\": \"host\"}, "
				  "{\"op\": \"op0\"}, {\"detach\": \"w\"}, "
				  "{\"prefetch\": \"w\", \"from\": \"host\"}, "
				  "{\"op\": \"op1\"}"));
	hoff_sim_opts o = hoff_sim_defaults();
	o.timeline = o.op_times = true;
	hoff_sim_result r;
	hoff_err e = {{0}};
	assert_int_equal(hoff_sim_run(g, s, &o, &r, &e), HOFF_EINPUT);
	assert_non_null(strstr(e.msg, "2^62 ps"));
	assert_null(r.viol); /* freed: no hoff_sim_result_free needed */
	assert_null(r.op_start_ps);
	assert_null(r.tl.ev);
	hoff_sched_free(s);
	hoff_graph_free(g);
}

/* (v2) The CPU backend's duplex arithmetic (xduplex.h, FORMAT.md rule 3),
 * by hand in whole time units:
 * - factors 0.5: h2d D=100 from 0, d2h D=100 from 40. At 40 h2d has 60e6
 *   left at 0.5e6 a unit: due 160; d2h 100e6 at 0.5e6: due 240. At 160
 *   h2d is done; d2h has 100e6 - 120 * 0.5e6 = 40e6 at full speed: 200.
 * - asymmetric 0.48 / 0.98 (the a100-pcie4 preset): h2d D=100 from 0,
 *   d2h D=50 from 10. At 10 h2d has 90e6 at 480000: due 10 + 188 (187.5
 *   up) = 198; d2h 50e6 at 980000: 10 + 52 (51.02 up) = 62. At 62 h2d
 *   has 90e6 - 52 * 480000 = 65.04e6 at 1e6: 62 + 66 (65.04 up) = 128.
 * - a ceil: factor 0.3, both from 0, h2d D=7: 7e6 / 3e5 = 23.3, due 24.
 * - factors 1: every transfer lasts D, overlapping or not. */
static void test_duplex_arith(void **state)
{
	(void)state;
	hoff_xduplex d;
	hoff_xduplex_init(&d, 500000, 500000);
	assert_int_equal(hoff_xduplex_start(&d, 0, 0, 100), 0);
	assert_int_equal(hoff_xduplex_due(&d, 0), 100);
	hoff_xduplex_start(&d, 1, 40, 100);
	assert_int_equal(hoff_xduplex_due(&d, 0), 160);
	assert_int_equal(hoff_xduplex_due(&d, 1), 240);
	assert_int_equal(hoff_xduplex_left(&d, 1, 100), 70000000);
	hoff_xduplex_finish(&d, 0, 160);
	assert_int_equal(hoff_xduplex_due(&d, 1), 200);
	hoff_xduplex_finish(&d, 1, 200);
	assert_false(d.c[0].busy || d.c[1].busy);

	hoff_xduplex_init(&d, 480000, 980000);
	hoff_xduplex_start(&d, 0, 0, 100);
	hoff_xduplex_start(&d, 1, 10, 50);
	assert_int_equal(hoff_xduplex_due(&d, 0), 198);
	assert_int_equal(hoff_xduplex_due(&d, 1), 62);
	hoff_xduplex_finish(&d, 1, 62);
	assert_int_equal(hoff_xduplex_due(&d, 0), 128);
	/* a late event is taken at the tier's latest instant */
	assert_int_equal(hoff_xduplex_start(&d, 1, 50, 10), 62);
	assert_int_equal(hoff_xduplex_due(&d, 1), 62 + 11); /* 10.2 up */

	hoff_xduplex_init(&d, 300000, 300000);
	hoff_xduplex_start(&d, 0, 0, 7);
	hoff_xduplex_start(&d, 1, 0, 100);
	assert_int_equal(hoff_xduplex_due(&d, 0), 24);

	hoff_xduplex_init(&d, HOFF_DUPLEX_ONE, HOFF_DUPLEX_ONE);
	hoff_xduplex_start(&d, 0, 5, 30);
	hoff_xduplex_start(&d, 1, 10, 7);
	assert_int_equal(hoff_xduplex_due(&d, 0), 35);
	assert_int_equal(hoff_xduplex_due(&d, 1), 17);
}

/* The blocks of tensor name, in creation order, into out (at most 4). */
static int blocks_of(const planned *x, const char *name,
		     const hoff_xblock **out)
{
	int32_t t = hoff_graph_find_tensor(x->g, name);
	int n = 0;
	for (int64_t i = 0; i < x->p.nblocks && n < 4; i++)
		if (x->p.block[i].tensor == t)
			out[n++] = &x->p.block[i];
	return n;
}

/* (v2) The recompute schedule (exec_cases.h) lowered, by hand: compute
 * commands op0, op1, the recompute, op2, the recompute at 20-22 ms; a's
 * first block freed by the drop when op0 ends (6 ms), its second made by
 * the recompute at 20 ms and freed after op2 (24 ms), where the recompute
 * writes it; x kept past op1 for the recompute (freed at 22 ms); the
 * recompute reads w's second block; plan peak 13 MB, the simulator's. At
 * the end w on the device and the host, o on the device. As one step of a
 * loop, w detached at the end: its host copy is its home. */
static void test_plan_recompute(void **state)
{
	(void)state;
	planned x = plan(RC_GRAPH, RC_STEPS);
	hoff_xplan *p = &x.p;
	const hoff_graph *g = x.g;
	assert_int_equal(p->nops, 4);
	assert_int_equal(p->nrecompute, 1);
	const hoff_xop *rc = &p->op[2];
	assert_true(rc->recompute);
	assert_int_equal(rc->op, 0);
	assert_int_equal(rc->step, 6);
	assert_int_equal(rc->pred_start_ps, 20 * MS);
	assert_int_equal(rc->pred_end_ps, 22 * MS);
	assert_int_equal(p->op[3].op, 2);
	assert_int_equal(p->op[3].pred_start_ps, 22 * MS);
	const hoff_xblock *a[4], *w[4], *xb[4];
	assert_int_equal(blocks_of(&x, "a", a), 2);
	assert_int_equal(a[0]->alloc_ev, 0);
	assert_int_equal(a[0]->free_at.kind, HOFF_AT_OP_END);
	assert_int_equal(a[0]->free_at.idx, 0);
	assert_int_equal(a[0]->free_ps, 6 * MS);
	assert_int_equal(a[1]->alloc_ev, 2);
	assert_int_equal(a[1]->alloc_ps, 20 * MS);
	assert_int_equal(a[1]->free_at.idx, 3);
	assert_int_equal(a[1]->free_ps, 24 * MS);
	assert_int_equal(p->out_dev[rc->out_at], a[1]->off);
	assert_int_equal(blocks_of(&x, "x", xb), 1);
	assert_int_equal(xb[0]->free_at.idx, 2);
	assert_int_equal(xb[0]->free_ps, 22 * MS);
	assert_int_equal(blocks_of(&x, "w", w), 2);
	assert_int_equal(w[1]->fill_x, 1);
	assert_int_equal(p->in_dev[rc->in_at + 1], w[1]->off);
	assert_int_equal(p->in_ver[rc->in_at + 1], 0);
	assert_int_equal(p->plan_peak_bytes, 13 * MB);
	assert_int_equal(x.r.summary.peak_bytes, 13 * MB);
	assert_int_equal(p->nfinal, 3);
	for (int64_t i = 0; i < p->nfinal; i++)
		assert_false(p->final[i].home); /* not a repeat graph */
	check_replay_g(g, x.s);
	unplan(&x);

	x = plan(RC_REPEAT_GRAPH, RC_REPEAT_STEPS);
	p = &x.p;
	int32_t tw = hoff_graph_find_tensor(x.g, "w");
	assert_int_equal(p->nfinal, 2); /* o on the device, w at home */
	int homes = 0;
	for (int64_t i = 0; i < p->nfinal; i++)
		if (p->final[i].home) {
			homes++;
			assert_int_equal(p->final[i].tensor, tw);
			assert_int_equal(p->final[i].tier, 0);
		}
	assert_int_equal(homes, 1);
	unplan(&x);
}

/* (v2) A dropped tensor read before its recompute: op2 (step 5) reads a,
 * dropped at step 3 and re-made only at step 7. simulate rejects it,
 * naming the step and the tensor, and the planner refuses the run. */
static void test_dropped_read(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(RC_GRAPH);
	hoff_sched *s = tu_sched(
		g,
		SCHED2("{\"prefetch\": \"w\", \"from\": \"host\"},"
		       "{\"op\": \"op0\"}, {\"detach\": \"w\"},"
		       "{\"drop\": \"a\"}, {\"op\": \"op1\"}, {\"op\": \"op2\"},"
		       "{\"prefetch\": \"w\", \"from\": \"host\"},"
		       "{\"recompute\": \"op0\"}"));
	hoff_sim_result r = {0};
	expect_refused(g, s, &r);
	assert_true(r.nviol >= 1);
	assert_int_equal(r.viol[0].step, 5);
	assert_int_equal(r.viol[0].tensor, hoff_graph_find_tensor(g, "a"));
	hoff_sim_result_free(&r);
	hoff_sched_free(s);
	hoff_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arena_hand),
		cmocka_unit_test(test_duplex_arith),
		cmocka_unit_test(test_arena_align),
		cmocka_unit_test(test_arena_random),
		cmocka_unit_test(test_plan_example),
		cmocka_unit_test(test_plan_kv),
		cmocka_unit_test(test_plan_recompute),
		cmocka_unit_test(test_dropped_read),
		cmocka_unit_test(test_replay_is_sim),
		cmocka_unit_test(test_replay_models),
		cmocka_unit_test(test_scale),
		cmocka_unit_test(test_plan_refuses_invalid),
		cmocka_unit_test(test_plan_no_transfers),
		cmocka_unit_test(test_sim_error_frees),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
