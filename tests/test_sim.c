/* test_sim.c: the simulator against schedules worked out by hand.
 * Machine for most cases: one tier "host" at 1e9 B/s each way and no
 * latency, so 1 MB moves in exactly 1 ms (1e9 ps); ops take whole ms. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "testutil.h"

#define MS 1000000000LL /* one millisecond in ps */
#define MB 1000000LL

#define MACHINE(budget, tiers)                                                 \
	"\"machine\": {\"device\": {\"memory_bytes\": " budget                 \
	", \"flops_per_s\": 7e14, \"mem_bandwidth_Bps\": 3e12},"               \
	" \"tiers\": [" tiers "]}"
#define HOST "{\"name\": \"host\", \"h2d_Bps\": 1e9, \"d2h_Bps\": 1e9}"
#define GRAPH(budget, tiers, tensors, ops)                                     \
	"{\"format\": \"hoffopt.graph\", \"version\": 1, \"name\": \"t\", "    \
	MACHINE(budget, tiers) ", \"tensors\": [" tensors "], \"ops\": [" ops  \
	"]}"
#define SCHED(steps)                                                           \
	"{\"format\": \"hoffopt.schedule\", \"version\": 1, \"steps\": ["      \
	steps "]}"

/* A tensor's home on tier t, or "" for none (on the device). */
#define HOME(t) ", \"home\": \"" t "\""
/* FORMAT.md's example graph; `w0`/`w1` homes and w1's size vary by case. */
#define EX_TENSORS(w0home, w1home, w1bytes)                                    \
	"{\"id\": \"x\", \"bytes\": 1000000, \"kind\": \"input\"},"            \
	"{\"id\": \"w0\", \"bytes\": 4000000, \"kind\": \"weight\"" w0home     \
	"},"                                                                   \
	"{\"id\": \"w1\", \"bytes\": " w1bytes ", \"kind\": \"weight\"" w1home \
	"},"                                                                   \
	"{\"id\": \"a\", \"bytes\": 2000000, \"kind\": \"activation\"},"       \
	"{\"id\": \"b\", \"bytes\": 2000000, \"kind\": \"output\"}"
#define EX_OPS                                                                 \
	"{\"id\": \"op0\", \"inputs\": [\"x\", \"w0\"], \"outputs\": "         \
	"[\"a\"], \"time_s\": 0.004},"                                         \
	"{\"id\": \"op1\", \"inputs\": [\"a\", \"w1\"], \"outputs\": "         \
	"[\"b\"], \"time_s\": 0.004}"
#define EX_STEPS                                                               \
	"{\"prefetch\": \"w0\", \"from\": \"host\"},"                          \
	"{\"prefetch\": \"w1\", \"from\": \"host\"}, {\"op\": \"op0\"},"       \
	"{\"detach\": \"w0\"}, {\"op\": \"op1\"}"

typedef struct expect {
	int64_t peak, makespan, compute, stall, h2d, d2h;
} expect;

static void check_summary(const hoff_sim_result *r, expect x)
{
	assert_int_equal(r->summary.peak_bytes, x.peak);
	assert_int_equal(r->summary.makespan_ps, x.makespan);
	assert_int_equal(r->summary.compute_ps, x.compute);
	assert_int_equal(r->summary.stall_ps, x.stall);
	assert_int_equal(r->summary.h2d_bytes, x.h2d);
	assert_int_equal(r->summary.d2h_bytes, x.d2h);
}

/* Runs schedule text on graph text; returns the result (caller frees). */
static hoff_sim_result run(const char *graph, const char *sched,
			   int64_t budget, bool timeline)
{
	hoff_graph *g = tu_graph(graph);
	hoff_sched *s = tu_sched(g, sched);
	hoff_sim_result r;
	hoff_sim_opts o = hoff_sim_defaults();
	o.budget_bytes = budget;
	o.timeline = timeline;
	hoff_err e;
	assert_int_equal(hoff_sim_run(g, s, &o, &r, &e), HOFF_OK);
	hoff_sched_free(s);
	hoff_graph_free(g);
	return r;
}

/* Runs sched on graph and expects it invalid, its first violation
 * `rule` at step `step` (-1: any step), with `nviol` violations in all
 * (0: any number). */
static void expect_invalid(const char *graph, const char *sched,
			   int64_t budget, int rule, int64_t step,
			   int64_t nviol)
{
	hoff_sim_result r = run(graph, sched, budget, false);
	assert_false(r.valid);
	assert_true(r.nviol > 0);
	assert_int_equal(r.viol[0].rule, rule);
	if (step >= 0)
		assert_int_equal(r.viol[0].step, step);
	if (nviol > 0)
		assert_int_equal(r.nviol, nviol);
	hoff_sim_result_free(&r);
}

/* run on graph and sched with the default budget: valid, with summary x;
 * returns the result (caller frees). */
static hoff_sim_result run_expect(const char *graph, const char *sched,
				  bool timeline, expect x)
{
	hoff_sim_result r = run(graph, sched, HOFF_NONE, timeline);
	assert_true(r.valid);
	check_summary(&r, x);
	return r;
}

/* The transfer event of tensor-step `step` in r's timeline. */
static const hoff_event *xfer_at(const hoff_sim_result *r, int64_t step)
{
	for (size_t i = 0; i < r->tl.nev; i++)
		if (r->tl.ev[i].step == step &&
		    (r->tl.ev[i].kind == HOFF_EV_PREFETCH ||
		     r->tl.ev[i].kind == HOFF_EV_STORE))
			return &r->tl.ev[i];
	fail_msg("no transfer for step %lld", (long long)step);
	return NULL;
}

/* FORMAT.md's example: w0 0-4 ms, w1 queued 4-8 ms; op0 waits for w0
 * (4-8), op1 runs 8-12. Peak at 4 ms: x 1 + w0 4 + w1 4 + a 2 = 11 MB. */
static void test_format_example(void **state)
{
	(void)state;
	hoff_sim_result r = run_expect(
		GRAPH("100000000", HOST,
		      EX_TENSORS(HOME("host"), HOME("host"), "4000000"),
		      EX_OPS),
		SCHED(EX_STEPS), true,
		(expect){11 * MB, 12 * MS, 8 * MS, 4 * MS, 8 * MB, 0});
	assert_int_equal(r.peak_ps, 4 * MS);
	/* Two prefetches queue FIFO on the one h2d channel. */
	assert_int_equal(xfer_at(&r, 0)->start_ps, 0);
	assert_int_equal(xfer_at(&r, 0)->end_ps, 4 * MS);
	assert_int_equal(xfer_at(&r, 1)->start_ps, 4 * MS);
	assert_int_equal(xfer_at(&r, 1)->end_ps, 8 * MS);
	hoff_sim_result_free(&r);
}

/* Everything on the device: at 4 ms op0 frees x (1) and op1 allocates
 * b (2): 1 + 4 + 4 + 2 - 1 + 2 = 12 MB; no stall. */
static void test_no_offload(void **state)
{
	(void)state;
	const char *g =
		GRAPH("100000000", HOST, EX_TENSORS("", "", "4000000"), EX_OPS);
	hoff_sim_result r =
		run_expect(g, SCHED("{\"op\": \"op0\"}, {\"op\": \"op1\"}"),
			   false, (expect){12 * MB, 8 * MS, 8 * MS, 0, 0, 0});
	assert_int_equal(r.peak_ps, 4 * MS);
	hoff_sim_result_free(&r);
}

/* w1 (4 MB, 4 ms) prefetched at 0 behind op0 (4 ms): op1 starts at 4 ms,
 * no stall. w0 lives on the device. */
static void test_prefetch_hidden(void **state)
{
	(void)state;
	const char *g = GRAPH("100000000", HOST,
			      EX_TENSORS("", HOME("host"), "4000000"), EX_OPS);
	/* peak at 4 ms: w0 4 + w1 4 + a 2 - x 1 ... = x freed, b added:
	 * 0 ms: x1 w0 4 w1 4 = 9; op0 start: +a = 11; 4 ms: -x +b = 12. */
	hoff_sim_result r = run_expect(
		g,
		SCHED("{\"prefetch\": \"w1\", \"from\": \"host\"},"
		      "{\"op\": \"op0\"}, {\"op\": \"op1\"}"),
		false, (expect){12 * MB, 8 * MS, 8 * MS, 0, 4 * MB, 0});
	hoff_sim_result_free(&r);
}

/* w1 is 8 MB (8 ms) but op0 lasts 4 ms: op1 waits 4 ms. */
static void test_prefetch_stalls(void **state)
{
	(void)state;
	const char *g = GRAPH("100000000", HOST,
			      EX_TENSORS("", HOME("host"), "8000000"), EX_OPS);
	/* 0: 1+4+8 = 13; op0: +2 = 15; 4 ms: -x = 14; 8 ms op1: +b = 16. */
	hoff_sim_result r = run_expect(
		g,
		SCHED("{\"prefetch\": \"w1\", \"from\": \"host\"},"
		      "{\"op\": \"op0\"}, {\"op\": \"op1\"}"),
		true, (expect){16 * MB, 12 * MS, 8 * MS, 4 * MS, 8 * MB, 0});
	/* The stall is its own event, 4 to 8 ms before op1. */
	int stalls = 0;
	for (size_t i = 0; i < r.tl.nev; i++)
		if (r.tl.ev[i].kind == HOFF_EV_STALL) {
			stalls++;
			assert_int_equal(r.tl.ev[i].start_ps, 4 * MS);
			assert_int_equal(r.tl.ev[i].end_ps, 8 * MS);
		}
	assert_int_equal(stalls, 1);
	hoff_sim_result_free(&r);
}

/* Three ops; a (2 MB) is made by op0, stored after it, prefetched back
 * before op2 that reads it. op1 (6 ms) hides both 2 ms transfers. The
 * host's capacity (host_cap: "" or its field) and x's home vary. */
#define STASH_GRAPH(host_cap, xhome)                                             \
	GRAPH("100000000",                                                       \
	      "{\"name\": \"host\", \"h2d_Bps\": 1e9, \"d2h_Bps\": 1e9" host_cap \
	      "}",                                                               \
	      "{\"id\": \"x\", \"bytes\": 1000000, \"kind\": \"input\"" xhome    \
	      "},"                                                               \
	      "{\"id\": \"a\", \"bytes\": 2000000, \"kind\": \"activation\"},"   \
	      "{\"id\": \"c\", \"bytes\": 1000000, \"kind\": \"activation\"},"   \
	      "{\"id\": \"y\", \"bytes\": 1000000, \"kind\": \"output\"}",       \
	      "{\"id\": \"op0\", \"inputs\": [\"x\"], \"outputs\": [\"a\"], "    \
	      "\"time_s\": 0.001},"                                              \
	      "{\"id\": \"op1\", \"inputs\": [\"x\"], \"outputs\": [\"c\"], "    \
	      "\"time_s\": 0.006},"                                              \
	      "{\"id\": \"op2\", \"inputs\": [\"a\", \"c\"], \"outputs\": "      \
	      "[\"y\"], \"time_s\": 0.001}")

/* Store at 1 ms (1-3 ms), prefetch issued at 7 ms... no: issued after op1
 * would stall; issued after op0 it waits for the store (3-5 ms). Here:
 * store after op0, prefetch after op1 → prefetch 7-9 ms, op2 stalls 2 ms. */
static void test_store_then_prefetch(void **state)
{
	(void)state;
	/* 0: x 1; op0 1 ms: +a = 3; op1 start 1 ms: +c = 4 (a still being
	 * stored); 3 ms: a freed = 2; 7 ms: op1 ends, x freed, prefetch a:
	 * 1 + 2 = 3; 9 ms op2: +y = 4; 10 ms: a, c freed. */
	hoff_sim_result r = run_expect(
		STASH_GRAPH("", ""),
		SCHED("{\"op\": \"op0\"}, {\"store\": \"a\", \"to\": \"host\"},"
		      "{\"op\": \"op1\"}, {\"prefetch\": \"a\", \"from\": "
		      "\"host\"}, {\"op\": \"op2\"}"),
		true,
		(expect){4 * MB, 10 * MS, 8 * MS, 2 * MS, 2 * MB, 2 * MB});
	assert_int_equal(xfer_at(&r, 1)->start_ps, 1 * MS);
	assert_int_equal(xfer_at(&r, 1)->end_ps, 3 * MS);
	assert_int_equal(xfer_at(&r, 3)->start_ps, 7 * MS);
	assert_int_equal(xfer_at(&r, 3)->end_ps, 9 * MS);
	hoff_sim_result_free(&r);
}

/* A prefetch issued while its tensor's store is in flight waits at the
 * head of the h2d channel until the store ends; both blocks count. */
static void test_prefetch_waits_for_store(void **state)
{
	(void)state;
	hoff_sim_result r = run(
		STASH_GRAPH("", ""),
		SCHED("{\"op\": \"op0\"}, {\"store\": \"a\", \"to\": \"host\"},"
		      "{\"prefetch\": \"a\", \"from\": \"host\"},"
		      "{\"op\": \"op1\"}, {\"op\": \"op2\"}"),
		HOFF_NONE, true);
	assert_true(r.valid);
	assert_int_equal(xfer_at(&r, 2)->start_ps, 3 * MS);
	assert_int_equal(xfer_at(&r, 2)->end_ps, 5 * MS);
	/* At 1 ms: x 1 + a 2 + a' 2 + c 1 = 6 MB; no stall (op2 at 7 ms). */
	check_summary(&r, (expect){6 * MB, 8 * MS, 8 * MS, 0, 2 * MB, 2 * MB});
	hoff_sim_result_free(&r);
}

/* h2d and d2h run in parallel: a store and a prefetch issued together
 * both start at once. */
static void test_h2d_d2h_parallel(void **state)
{
	(void)state;
	const char *g = GRAPH(
		"100000000", HOST,
		"{\"id\": \"x\", \"bytes\": 1000000, \"kind\": \"input\"},"
		"{\"id\": \"w\", \"bytes\": 3000000, \"kind\": \"weight\", "
		"\"home\": \"host\"},"
		"{\"id\": \"a\", \"bytes\": 2000000, \"kind\": \"activation\"},"
		"{\"id\": \"c\", \"bytes\": 1000000, \"kind\": \"activation\"},"
		"{\"id\": \"y\", \"bytes\": 1000000, \"kind\": \"output\"}",
		"{\"id\": \"op0\", \"inputs\": [\"x\"], \"outputs\": [\"a\"], "
		"\"time_s\": 0.001},"
		"{\"id\": \"op1\", \"inputs\": [\"x\"], \"outputs\": [\"c\"], "
		"\"time_s\": 0.001},"
		"{\"id\": \"op2\", \"inputs\": [\"c\", \"w\"], \"outputs\": [], "
		"\"time_s\": 0.001},"
		"{\"id\": \"op3\", \"inputs\": [\"a\"], \"outputs\": [\"y\"], "
		"\"time_s\": 0.001}");
	hoff_sim_result r = run(
		g,
		SCHED("{\"op\": \"op0\"}, {\"store\": \"a\", \"to\": \"host\"},"
		      "{\"prefetch\": \"w\", \"from\": \"host\"},"
		      "{\"op\": \"op1\"}, {\"op\": \"op2\"},"
		      "{\"prefetch\": \"a\", \"from\": \"host\"},"
		      "{\"op\": \"op3\"}"),
		HOFF_NONE, true);
	assert_true(r.valid);
	assert_int_equal(xfer_at(&r, 1)->start_ps, 1 * MS); /* store a */
	assert_int_equal(xfer_at(&r, 2)->start_ps, 1 * MS); /* prefetch w */
	assert_int_equal(xfer_at(&r, 2)->end_ps, 4 * MS);
	/* op1 1-2; op2 waits for w until 4, runs 4-5; a back 5-7; op3 7-8 */
	assert_int_equal(r.summary.makespan_ps, 8 * MS);
	assert_int_equal(r.summary.stall_ps, 4 * MS);
	hoff_sim_result_free(&r);
}

/* Illegal steps, each named with its rule and step. */
static void test_illegal_steps(void **state)
{
	(void)state;
	const char *g = STASH_GRAPH("", "");
	/* Detach of a dirty tensor with a later use: rule 7. */
	expect_invalid(g,
		       SCHED("{\"op\": \"op0\"}, {\"detach\": \"a\"},"
			     "{\"op\": \"op1\"}, {\"op\": \"op2\"}"),
		       HOFF_NONE, 7, 1, 0);
	/* Use after store without a prefetch: rule 5 at op2's step. */
	expect_invalid(g,
		       SCHED("{\"op\": \"op0\"}, {\"store\": \"a\", \"to\": "
			     "\"host\"}, {\"op\": \"op1\"}, {\"op\": \"op2\"}"),
		       HOFF_NONE, 5, 3, 1);
	/* Prefetch of a resident tensor: rule 4. */
	expect_invalid(g,
		       SCHED("{\"op\": \"op0\"}, {\"prefetch\": \"a\", "
			     "\"from\": \"host\"}, {\"op\": \"op1\"}, "
			     "{\"op\": \"op2\"}"),
		       HOFF_NONE, 4, -1, 1);
	/* Store of a tensor not yet produced: rule 5. */
	expect_invalid(g,
		       SCHED("{\"store\": \"a\", \"to\": \"host\"}, "
			     "{\"op\": \"op0\"}, {\"op\": \"op1\"}, "
			     "{\"op\": \"op2\"}"),
		       HOFF_NONE, 5, 0, 0);
}

/* Detach of a clean weight frees it at issue (FORMAT.md example: w0 goes
 * at 8 ms, so memory after 8 ms is w1 4 + a 2 + b 2 = 8 MB). */
static void test_detach_clean(void **state)
{
	(void)state;
	hoff_sim_result r =
		run(GRAPH("100000000", HOST,
			  EX_TENSORS(HOME("host"), HOME("host"), "4000000"),
			  EX_OPS),
		    SCHED(EX_STEPS), HOFF_NONE, true);
	assert_true(r.valid);
	int64_t at8 = -1;
	for (size_t i = 0; i < r.tl.nmem; i++)
		if (r.tl.mem[i].t_ps == 8 * MS)
			at8 = r.tl.mem[i].bytes;
	assert_int_equal(at8, 8 * MB);
	hoff_sim_result_free(&r);
}

/* The example peaks at exactly 11 MB: a budget of 11 MB passes, one
 * byte less fails with rule 8 at the step that allocated last (op0). */
static void test_budget_exact(void **state)
{
	(void)state;
	const char *g = GRAPH("100000000", HOST,
			      EX_TENSORS(HOME("host"), HOME("host"), "4000000"),
			      EX_OPS);
	hoff_sim_result r = run(g, SCHED(EX_STEPS), 11 * MB, false);
	assert_true(r.valid);
	hoff_sim_result_free(&r);
	expect_invalid(g, SCHED(EX_STEPS), 11 * MB - 1, 8, 2, 1);
	/* The schedule's own budget_bytes applies when --budget is not given */
	hoff_graph *gg = tu_graph(g);
	hoff_sched *s = tu_sched(
		gg, "{\"format\": \"hoffopt.schedule\", \"version\": 1, "
		    "\"budget_bytes\": 10999999, \"steps\": [" EX_STEPS "]}");
	r = tu_sim(gg, s, HOFF_NONE);
	assert_false(r.valid);
	assert_int_equal(r.budget_bytes, 11 * MB - 1);
	hoff_sim_result_free(&r);
	hoff_sched_free(s);
	hoff_graph_free(gg);
}

/* At one instant a store completes, an op finishes and frees, and the next
 * op allocates: memory is measured after all of them. a's store runs 1-3
 * ms, exactly when op1 (1-3 ms) ends and op2 allocates its 3 MB output. */
static void test_one_instant(void **state)
{
	(void)state;
	const char *g = GRAPH(
		"100000000", HOST,
		"{\"id\": \"x\", \"bytes\": 1000000, \"kind\": \"input\"},"
		"{\"id\": \"a\", \"bytes\": 2000000, \"kind\": \"activation\"},"
		"{\"id\": \"c\", \"bytes\": 1000000, \"kind\": \"activation\"},"
		"{\"id\": \"d\", \"bytes\": 3000000, \"kind\": \"activation\"},"
		"{\"id\": \"y\", \"bytes\": 1000000, \"kind\": \"output\"}",
		"{\"id\": \"op0\", \"inputs\": [\"x\"], \"outputs\": [\"a\"], "
		"\"time_s\": 0.001},"
		"{\"id\": \"op1\", \"inputs\": [\"x\"], \"outputs\": [\"c\"], "
		"\"time_s\": 0.002},"
		"{\"id\": \"op2\", \"inputs\": [\"c\"], \"outputs\": [\"d\"], "
		"\"time_s\": 0.001},"
		"{\"id\": \"op3\", \"inputs\": [\"d\", \"a\"], \"outputs\": "
		"[\"y\"], \"time_s\": 0.001}");
	/* 1 ms: x1 a2 c1 = 4. 3 ms: a's block freed, x freed (op1's last
	 * use), d +3: c1 + d3 = 4 (never 1+2+1+3 = 7). 4 ms: c freed, a back
	 * 4-6 ms: d3 + a2 = 5; op3 6-7: +y = 6. */
	hoff_sim_result r = run_expect(
		g,
		SCHED("{\"op\": \"op0\"}, {\"store\": \"a\", \"to\": \"host\"},"
		      "{\"op\": \"op1\"}, {\"op\": \"op2\"},"
		      "{\"prefetch\": \"a\", \"from\": \"host\"},"
		      "{\"op\": \"op3\"}"),
		true, (expect){6 * MB, 7 * MS, 5 * MS, 2 * MS, 2 * MB, 2 * MB});
	for (size_t i = 0; i < r.tl.nmem; i++)
		if (r.tl.mem[i].t_ps == 3 * MS)
			assert_int_equal(r.tl.mem[i].bytes, 4 * MB);
	hoff_sim_result_free(&r);
}

/* Persistent state: a KV block updated in place stays dirty and must not
 * be detached; stored instead, it leaves a valid copy (rule 9 holds). An
 * op that updates it while it is off the device breaks rules 5 and 9. */
static void test_persistent_end_state(void **state)
{
	(void)state;
	const char *g = GRAPH(
		"100000000", HOST,
		"{\"id\": \"x\", \"bytes\": 1000000, \"kind\": \"input\"},"
		"{\"id\": \"kv\", \"bytes\": 2000000, \"kind\": \"kv\"},"
		"{\"id\": \"y\", \"bytes\": 1000000, \"kind\": \"output\"}",
		"{\"id\": \"op0\", \"inputs\": [\"x\"], \"updates\": [\"kv\"], "
		"\"time_s\": 0.001},"
		"{\"id\": \"op1\", \"inputs\": [\"x\"], \"outputs\": [\"y\"], "
		"\"time_s\": 0.001},"
		"{\"id\": \"op2\", \"inputs\": [\"y\"], \"updates\": [\"kv\"], "
		"\"time_s\": 0.001}");
	hoff_sim_result r =
		run(g,
		    SCHED("{\"op\": \"op0\"}, {\"detach\": \"kv\"},"
			  "{\"op\": \"op1\"}, {\"op\": \"op2\"}"),
		    HOFF_NONE, false);
	assert_false(r.valid);
	assert_int_equal(r.viol[0].rule, 7); /* dirty persistent */
	hoff_sim_result_free(&r);
	/* kv dirty at 0-1 ms; stored 1-3; its prefetch, issued at 2 ms,
	 * waits for the store and runs 3-5; op2 5-6; stored again 6-8: the
	 * transfer tail counts as stall. At 2 ms both kv blocks count:
	 * kv 2 + kv' 2 + y 1 = 5 MB (x freed by op1). */
	r = run_expect(
		g,
		SCHED("{\"op\": \"op0\"}, {\"store\": \"kv\", \"to\": \"host\"},"
		      "{\"op\": \"op1\"}, {\"prefetch\": \"kv\", \"from\": "
		      "\"host\"}, {\"op\": \"op2\"},"
		      "{\"store\": \"kv\", \"to\": \"host\"}"),
		false,
		(expect){5 * MB, 8 * MS, 3 * MS, 5 * MS, 2 * MB, 4 * MB});
	hoff_sim_result_free(&r);
	r = run(g,
		SCHED("{\"op\": \"op0\"}, {\"store\": \"kv\", \"to\": \"host\"},"
		      "{\"op\": \"op1\"}, {\"op\": \"op2\"}"),
		HOFF_NONE, false);
	assert_false(r.valid);
	assert_true(tu_has_rule(&r, 5));
	assert_true(tu_has_rule(&r, 9));
	assert_int_equal(r.nviol, 2);
	hoff_sim_result_free(&r);
}

/* Tier capacity: the host holds 3 MB; storing a (2 MB) while c (1 MB)
 * ... here x (1 MB input homed on host) is counted from time 0. */
static void test_tier_capacity(void **state)
{
	(void)state;
	char g[4096];
	snprintf(g, sizeof g, "%s",
		 STASH_GRAPH(", \"capacity_bytes\": 2500000", HOME("host")));
	const char *steps =
		SCHED("{\"prefetch\": \"x\", \"from\": \"host\"},"
		      "{\"op\": \"op0\"}, {\"store\": \"a\", \"to\": \"host\"},"
		      "{\"op\": \"op1\"}, {\"prefetch\": \"a\", \"from\": "
		      "\"host\"}, {\"op\": \"op2\"}");
	/* x's copy (1) + a's store in flight (2) = 3 MB > 2.5 MB: rule 8. */
	expect_invalid(g, steps, HOFF_NONE, 8, 2, 1);
	/* With 3 MB it fits exactly. */
	char *p = strstr(g, "2500000");
	memcpy(p, "3000000", 7);
	hoff_sim_result r = run(g, steps, HOFF_NONE, false);
	assert_true(r.valid);
	hoff_sim_result_free(&r);
}

/* Workspace is held while its op runs: op1 needs 5 MB of scratch. */
static void test_workspace(void **state)
{
	(void)state;
	const char *g = GRAPH(
		"100000000", HOST,
		"{\"id\": \"x\", \"bytes\": 1000000, \"kind\": \"input\"},"
		"{\"id\": \"a\", \"bytes\": 2000000},"
		"{\"id\": \"y\", \"bytes\": 1000000, \"kind\": \"output\"}",
		"{\"id\": \"op0\", \"inputs\": [\"x\"], \"outputs\": [\"a\"], "
		"\"time_s\": 0.001},"
		"{\"id\": \"op1\", \"inputs\": [\"a\"], \"outputs\": [\"y\"], "
		"\"time_s\": 0.001, \"workspace_bytes\": 5000000}");
	/* 1 ms: x freed, a2 + y1 + ws5 = 8; 2 ms: y1. */
	hoff_sim_result r =
		run_expect(g, SCHED("{\"op\": \"op0\"}, {\"op\": \"op1\"}"),
			   true, (expect){8 * MB, 2 * MS, 2 * MS, 0, 0, 0});
	assert_int_equal(r.tl.mem[r.tl.nmem - 1].bytes, 1 * MB);
	hoff_sim_result_free(&r);
}

/* Roofline: max(7e11 / 7e14, 6e9 / 3e12) + 1 us = 2 ms + 1 us. */
static void test_roofline(void **state)
{
	(void)state;
	const char *g =
		"{\"format\": \"hoffopt.graph\", \"version\": 1, \"machine\": "
		"{\"device\": {\"memory_bytes\": 100000000, \"flops_per_s\": "
		"7e14, \"mem_bandwidth_Bps\": 3e12, \"op_overhead_s\": 1e-6}},"
		" \"tensors\": [{\"id\": \"x\", \"bytes\": 8}],"
		" \"ops\": [{\"id\": \"mm\", \"inputs\": [\"x\"], \"flops\": "
		"7e11, \"bytes_accessed\": 6e9},"
		" {\"id\": \"cmp\", \"inputs\": [\"x\"], \"flops\": 1.4e12, "
		"\"bytes_accessed\": 3e9},"
		" {\"id\": \"fixed\", \"inputs\": [\"x\"], \"time_s\": 0.5}]}";
	hoff_graph *gg = tu_graph(g);
	assert_int_equal(gg->op[0].time_ps, 2 * MS + 1000000);
	assert_int_equal(gg->op[1].time_ps, 2 * MS + 1000000);
	assert_int_equal(gg->op[2].time_ps, 500 * MS); /* no overhead */
	hoff_graph_free(gg);
}

/* Two tiers run in parallel: prefetches from host and nvme both start at
 * 0; the nvme one (1e8 B/s + 1 ms latency) lasts 1 + 10 ms. */
static void test_two_tiers(void **state)
{
	(void)state;
	const char *g = GRAPH(
		"100000000",
		HOST ", {\"name\": \"nvme\", \"h2d_Bps\": 1e8, \"d2h_Bps\": 1e8,"
		     " \"latency_s\": 0.001}",
		"{\"id\": \"w0\", \"bytes\": 4000000, \"kind\": \"weight\", "
		"\"home\": \"host\"},"
		"{\"id\": \"w1\", \"bytes\": 1000000, \"kind\": \"weight\", "
		"\"home\": \"nvme\"},"
		"{\"id\": \"y\", \"bytes\": 1000000, \"kind\": \"output\"}",
		"{\"id\": \"op0\", \"inputs\": [\"w0\", \"w1\"], \"outputs\": "
		"[\"y\"], \"time_s\": 0.001}");
	hoff_sim_result r = run(g,
				SCHED("{\"prefetch\": \"w0\", \"from\": \"host\"},"
				      "{\"prefetch\": \"w1\", \"from\": \"nvme\"},"
				      "{\"op\": \"op0\"}"),
				HOFF_NONE, true);
	assert_true(r.valid);
	assert_int_equal(xfer_at(&r, 0)->start_ps, 0);
	assert_int_equal(xfer_at(&r, 1)->start_ps, 0);
	assert_int_equal(xfer_at(&r, 1)->end_ps, 11 * MS);
	check_summary(&r, (expect){6 * MB, 12 * MS, 1 * MS, 11 * MS, 5 * MB, 0});
	hoff_sim_result_free(&r);
	/* The lower bound sees the nvme chain: 11 ms + op0's 1 ms. */
	hoff_graph *gg = tu_graph(g);
	hoff_analysis a;
	hoff_err e;
	assert_int_equal(hoff_analyze(gg, &a, &e), HOFF_OK);
	assert_int_equal(a.lower_bound_ps, 12 * MS);
	assert_int_equal(a.lb_tier, 1);
	hoff_graph_free(gg);
}

/* A zero-length transfer completes as it starts, before the next step:
 * a 1-byte tensor on a 1e13 B/s link takes ps(1e-13) = 0 ps. */
static void test_zero_transfer(void **state)
{
	(void)state;
	const char *g = GRAPH(
		"100000000",
		"{\"name\": \"host\", \"h2d_Bps\": 1e13, \"d2h_Bps\": 1e13}",
		"{\"id\": \"w\", \"bytes\": 1, \"kind\": \"weight\", "
		"\"home\": \"host\"}",
		"{\"id\": \"op0\", \"inputs\": [\"w\"], \"time_s\": 0.001}");
	/* Prefetch then detach at once: legal only if the prefetch has
	 * completed when the detach is issued. */
	hoff_sim_result r =
		run_expect(g,
			   SCHED("{\"prefetch\": \"w\", \"from\": \"host\"},"
				 "{\"detach\": \"w\"},"
				 "{\"prefetch\": \"w\", \"from\": \"host\"},"
				 "{\"op\": \"op0\"}"),
			   false, (expect){1, 1 * MS, 1 * MS, 0, 2, 0});
	hoff_sim_result_free(&r);
}

/* ---- FORMAT v2: duplex (rule 3), recompute and drop (10, 11), repeat
 * (9) ---- */

#define GRAPH2(top, budget, tiers, tensors, ops)                              \
	"{\"format\": \"hoffopt.graph\", \"version\": 2, \"name\": \"t\"" top \
	", " MACHINE(budget, tiers) ", \"tensors\": [" tensors                \
				    "], \"ops\": [" ops "]}"
#define SCHED2(steps)                                                           \
	"{\"format\": \"hoffopt.schedule\", \"version\": 2, \"steps\": [" steps \
	"]}"
#define TENSOR(id, bytes, rest) \
	"{\"id\": \"" id "\", \"bytes\": " bytes rest "}"
#define OP1(id, in, out, rest)                                          \
	"{\"id\": \"" id "\", \"inputs\": [" in "], \"outputs\": [" out \
	"], \"time_s\": 0.001" rest "}"

/* Duplex: a 5 MB prefetch of w from 0 and a 2 MB store of a from 1 ms
 * overlap partly; h2d factor 0.5 (F = 500000), d2h 0.3 (F = 300000).
 * w alone for 1 ms does R = 1e15 of its 5e15. From 1e9 ps both run:
 * a's R = 2e15 at 3e5/ps ends at 1e9 + ceil(6666666666.67) =
 * 7666666667 ps; w does 6666666667 * 5e5 = 3.3333333335e15 by then, so
 * R = 6.666666665e14 is left at 1e6/ps: ceil(666666666.5) = 666666667 more,
 * w ends at 8333333334 ps. f2 (needs w) runs to 9333333334; a comes back
 * alone in 2 ms (11333333334), f3 ends at 12333333334. Peak: w 5 MB +
 * a 2 MB + y 1 MB + ... at f3: w, a, b, y = 9 MB. */
#define DX_TENSORS                                                                           \
	TENSOR("x", "1000000", ", \"kind\": \"input\"")                                      \
	"," TENSOR("w", "5000000", ", \"kind\": \"weight\", \"home\": \"host\"") "," TENSOR( \
		"a", "2000000",                                                              \
		"") "," TENSOR("b", "1000000",                                               \
			       "") "," TENSOR("y", "1000000",                                \
					      ", \"kind\": \"output\"")
#define DX_OPS                                                            \
	OP1("f1", "\"x\"", "\"a\"", "")                                   \
	"," OP1("f2", "\"w\"", "\"b\"", "") "," OP1("f3", "\"a\", \"b\"", \
						    "\"y\"", "")
#define DX_STEPS                                                        \
	"{\"prefetch\": \"w\", \"from\": \"host\"}, {\"op\": \"f1\"}, " \
	"{\"store\": \"a\", \"to\": \"host\"}, {\"op\": \"f2\"}, "      \
	"{\"prefetch\": \"a\", \"from\": \"host\"}, {\"op\": \"f3\"}"

static void test_duplex_partial_overlap(void **state)
{
	(void)state;
	hoff_sim_result r = run_expect(
		GRAPH2("", "100000000",
		       "{\"name\": \"host\", \"h2d_Bps\": 1e9, \"d2h_Bps\": 1e9, "
		       "\"h2d_duplex_factor\": 0.5, \"d2h_duplex_factor\": 0.3}",
		       DX_TENSORS, DX_OPS),
		SCHED(DX_STEPS), true,
		(expect){.peak = 9 * MB,
			 .makespan = 12333333334LL,
			 .compute = 3 * MS,
			 .stall = 9333333334LL,
			 .h2d = 7 * MB,
			 .d2h = 2 * MB});
	const hoff_event *w = xfer_at(&r, 0), *a = xfer_at(&r, 2);
	assert_int_equal(w->start_ps, 0);
	assert_int_equal(w->end_ps, 8333333334LL);
	assert_int_equal(a->start_ps, 1 * MS);
	assert_int_equal(a->end_ps, 7666666667LL);
	assert_int_equal(xfer_at(&r, 4)->start_ps, 9333333334LL);
	assert_int_equal(xfer_at(&r, 4)->end_ps, 11333333334LL);
	assert_int_equal(r.summary.recompute_ps, 0);
	hoff_sim_result_free(&r);
	/* Factors of 1 (and version 1): each transfer lasts exactly D; w
	 * ends at 5 ms, a at 3 ms; f2 5-6, a back 6-8, f3 8-9. */
	r = run_expect(GRAPH("100000000", HOST, DX_TENSORS, DX_OPS),
		       SCHED(DX_STEPS), true,
		       (expect){.peak = 9 * MB,
				.makespan = 9 * MS,
				.compute = 3 * MS,
				.stall = 6 * MS,
				.h2d = 7 * MB,
				.d2h = 2 * MB});
	assert_int_equal(xfer_at(&r, 0)->end_ps, 5 * MS);
	assert_int_equal(xfer_at(&r, 2)->end_ps, 3 * MS);
	hoff_sim_result_free(&r);
}

/* Recompute and drop on a chain x -> f1 -> a -> f2 -> b -> f3 -> c, with
 * f4 reading c and a (1 ms each; a 4 MB, b and c 2 MB, x and y 1 MB). */
#define RC_TENSORS                                            \
	TENSOR("x", "1000000", ", \"kind\": \"input\"")       \
	"," TENSOR("a", "4000000", "") "," TENSOR(            \
		"b", "2000000",                               \
		"") "," TENSOR("c", "2000000",                \
			       "") "," TENSOR("y", "1000000", \
					      ", \"kind\": \"output\"")
#define RC_OPS                                      \
	OP1("f1", "\"x\"", "\"a\"", "")             \
	"," OP1("f2", "\"a\"", "\"b\"",             \
		"") "," OP1("f3", "\"b\"", "\"c\"", \
			    "") "," OP1("f4", "\"c\", \"a\"", "\"y\"", "")
#define RC_GRAPH GRAPH2("", "100000000", HOST, RC_TENSORS, RC_OPS)

static void test_recompute_remakes_dropped(void **state)
{
	(void)state;
	/* x stays for the recompute (rule 6 counts it as x's last use):
	 * f1 x1+a4 = 5, f2 +b2 = 7, drop a: 3, f3 +c2 = 5 then -b: 3,
	 * recompute f1 +a4 = 7 and x freed after it: 6, f4 +y1 = 7. Without
	 * the drop (x freed after f1) the peak is a+b+c = 8 MB at f3. */
	hoff_sim_result r = run_expect(
		RC_GRAPH,
		SCHED2("{\"op\": \"f1\"}, {\"op\": \"f2\"}, {\"drop\": \"a\"}, "
		       "{\"op\": \"f3\"}, {\"recompute\": \"f1\"}, "
		       "{\"op\": \"f4\"}"),
		true,
		(expect){.peak = 7 * MB,
			 .makespan = 5 * MS,
			 .compute = 4 * MS,
			 .stall = 0,
			 .h2d = 0,
			 .d2h = 0});
	assert_int_equal(r.summary.recompute_ps, 1 * MS);
	bool seen = false;
	for (size_t i = 0; i < r.tl.nev; i++)
		if (r.tl.ev[i].kind == HOFF_EV_RECOMPUTE) {
			assert_int_equal(r.tl.ev[i].start_ps, 3 * MS);
			assert_int_equal(r.tl.ev[i].end_ps, 4 * MS);
			assert_int_equal(r.tl.ev[i].step, 4);
			seen = true;
		}
	assert_true(seen);
	hoff_sim_result_free(&r);
	r = run_expect(RC_GRAPH,
		       SCHED(""
			     "{\"op\": \"f1\"}, {\"op\": \"f2\"}, "
			     "{\"op\": \"f3\"}, {\"op\": \"f4\"}"),
		       false,
		       (expect){.peak = 8 * MB,
				.makespan = 4 * MS,
				.compute = 4 * MS,
				.stall = 0});
	hoff_sim_result_free(&r);
}

static void test_dropped_read_before_recompute(void **state)
{
	(void)state;
	const char *sched =
		SCHED2("{\"op\": \"f1\"}, {\"op\": \"f2\"}, {\"drop\": \"a\"}, "
		       "{\"op\": \"f3\"}, {\"op\": \"f4\"}, "
		       "{\"recompute\": \"f1\"}");
	expect_invalid(RC_GRAPH, sched, HOFF_NONE, 1, 4, 1);
	hoff_graph *g = tu_graph(RC_GRAPH);
	hoff_sched *s = tu_sched(g, sched);
	hoff_sim_result r = tu_sim(g, s, HOFF_NONE);
	char line[256];
	hoff_violation_format(g, s, &r.viol[0], line, sizeof line);
	assert_string_equal(line,
			    "steps[4] op \"f4\": \"a\": rule 1: input was "
			    "dropped and is not re-made (no recompute, no "
			    "prefetch)");
	hoff_sim_result_free(&r);
	hoff_sched_free(s);
	hoff_graph_free(g);
	/* Rule 11: a persistent tensor is never dropped. */
	expect_invalid(GRAPH2("", "100000000", HOST,
			      TENSOR("x", "1", ", \"kind\": \"weight\""),
			      OP1("f", "\"x\"", "", "")),
		       SCHED2("{\"op\": \"f\"}, {\"drop\": \"x\"}"), HOFF_NONE,
		       11, 1, 1);
}

static void test_recompute_after_update(void **state)
{
	(void)state;
	/* f2 updates f1's input s in place: re-running f1 after it would not
	 * give a's bytes (rule 10); the recompute does not run, so f3 then
	 * reads a dropped tensor (rule 1). */
	const char *graph = GRAPH2(
		"", "100000000", HOST,
		TENSOR("s", "1000", ", \"kind\": \"kv\"") "," TENSOR(
			"a", "1000", "") "," TENSOR("y", "1000",
						    ", \"kind\": \"output\""),
		OP1("f1", "\"s\"", "\"a\"",
		    "") ","
			"{\"id\": \"f2\", \"updates\": [\"s\"], \"time_s\": 0.001}," OP1(
				"f3", "\"a\"", "\"y\"", ""));
	hoff_sim_result r = run(
		graph,
		SCHED2("{\"op\": \"f1\"}, {\"drop\": \"a\"}, {\"op\": \"f2\"}, "
		       "{\"recompute\": \"f1\"}, {\"op\": \"f3\"}"),
		HOFF_NONE, false);
	assert_false(r.valid);
	assert_int_equal(r.nviol, 2);
	assert_int_equal(r.viol[0].rule, 10);
	assert_int_equal(r.viol[0].step, 3);
	assert_int_equal(r.viol[1].rule, 1);
	assert_int_equal(r.viol[1].step, 4);
	hoff_sim_result_free(&r);
	/* Before the update it is fine: 4 ms, 1 of them recompute. */
	r = run_expect(graph,
		       SCHED2("{\"op\": \"f1\"}, {\"drop\": \"a\"}, "
			      "{\"recompute\": \"f1\"}, {\"op\": \"f2\"}, "
			      "{\"op\": \"f3\"}"),
		       false,
		       (expect){.peak = 3000,
				.makespan = 4 * MS,
				.compute = 3 * MS,
				.stall = 0});
	hoff_sim_result_free(&r);
}

/* Repeat (rule 9): w a host weight f reads, m host optimizer state u
 * updates, v a device weight. 1 MB moves in 1 ms. */
#define RP_TENSORS                                                                              \
	TENSOR("w", "1000000", ", \"kind\": \"weight\", \"home\": \"host\"")                    \
	"," TENSOR("m", "1000000", ", \"kind\": \"optimizer\", \"home\": \"host\"") "," TENSOR( \
		"v", "1000000",                                                                 \
		", \"kind\": \"weight\"") "," TENSOR("y", "1000000",                            \
						     ", \"kind\": \"output\"")
#define RP_OPS                                                        \
	OP1("f", "\"w\", \"v\"", "\"y\"", "")                         \
	","                                                           \
	"{\"id\": \"u\", \"inputs\": [\"y\"], \"updates\": [\"m\"], " \
	"\"time_s\": 0.001}"
#define RP_HEAD                                                             \
	"{\"prefetch\": \"w\", \"from\": \"host\"}, {\"prefetch\": \"m\", " \
	"\"from\": \"host\"}, {\"op\": \"f\"}, {\"detach\": \"w\"}, "       \
	"{\"op\": \"u\"}"

static void test_repeat_end_state(void **state)
{
	(void)state;
	const char *rp = GRAPH2(", \"repeat\": true", "100000000", HOST,
				RP_TENSORS, RP_OPS);
	const char *once = GRAPH("100000000", HOST, RP_TENSORS, RP_OPS);
	/* Stored back: w 0-1, m 1-2 ms; f 1-2, u 2-3, m's store 3-4. */
	hoff_sim_result r = run_expect(
		rp, SCHED(RP_HEAD ", {\"store\": \"m\", \"to\": \"host\"}"),
		false,
		(expect){.peak = 4 * MB,
			 .makespan = 4 * MS,
			 .compute = 2 * MS,
			 .stall = 2 * MS,
			 .h2d = 2 * MB,
			 .d2h = 1 * MB});
	hoff_sim_result_free(&r);
	/* m left dirty on the device: fine for one step, not for a loop. */
	r = run_expect(once, SCHED(RP_HEAD), false,
		       (expect){.peak = 4 * MB,
				.makespan = 3 * MS,
				.compute = 2 * MS,
				.stall = 1 * MS,
				.h2d = 2 * MB});
	hoff_sim_result_free(&r);
	r = run(rp, SCHED(RP_HEAD), HOFF_NONE, false);
	assert_false(r.valid);
	assert_int_equal(r.nviol, 1);
	assert_int_equal(r.viol[0].rule, 9);
	assert_int_equal(r.viol[0].step, HOFF_NONE);
	assert_int_equal(r.viol[0].tensor, 1); /* m */
	hoff_sim_result_free(&r);
	/* The device-homed v stored out and left on the host: invalid in a
	 * loop (its next step expects it resident), valid once. */
	const char *out = SCHED(RP_HEAD
				", {\"store\": \"m\", \"to\": \"host\"}, "
				"{\"store\": \"v\", \"to\": \"host\"}");
	r = run(rp, out, HOFF_NONE, false);
	assert_false(r.valid);
	assert_int_equal(r.nviol, 1);
	assert_int_equal(r.viol[0].rule, 9);
	assert_int_equal(r.viol[0].tensor, 2); /* v */
	hoff_sim_result_free(&r);
	r = run(once, out, HOFF_NONE, false);
	assert_true(r.valid);
	hoff_sim_result_free(&r);
}

/* lower_bound_s's repeat term, by hand: host h2d 1 MB/ms, d2h 1 MB per
 * 4 ms; ops f, u, g of 1 ms; w (weight) read by f, m (optimizer) updated
 * by u, s (not persistent) updated by g, all 1 MB on the host. Fetch
 * terms: k = f: w 1 + compute 3 = 4 ms; k = u: w + m 2 + 2 = 4; k = g:
 * 3 + 1 = 4. Repeat terms count m only (w is never updated, s is not
 * persistent): k = f: 1 + 4 = 5, k = u: 2 + 4 = 6 ms, the bound. */
static void test_repeat_lower_bound(void **state)
{
	(void)state;
#define LB_PARTS(top)                                                                                       \
	GRAPH2(top, "100000000",                                                                            \
	       "{\"name\": \"host\", \"h2d_Bps\": 1e9, \"d2h_Bps\": 2.5e8}",                                \
	       TENSOR("w", "1000000", ", \"kind\": \"weight\", \"home\": \"host\"") "," TENSOR(             \
		       "m", "1000000",                                                                      \
		       ", \"kind\": \"optimizer\", \"home\": \"host\"") "," TENSOR("s",                     \
										   "1000000",               \
										   ", \"home\": \"host\""), \
	       OP1("f", "\"w\"", "",                                                                        \
		   "") ","                                                                                  \
		       "{\"id\": \"u\", \"updates\": [\"m\"], \"time_s\": 0.001},"                          \
		       "{\"id\": \"g\", \"updates\": [\"s\"], \"time_s\": 0.001}")
	hoff_analysis a;
	hoff_err e;
	hoff_graph *g = tu_graph(LB_PARTS(", \"repeat\": true"));
	assert_int_equal(hoff_analyze(g, &a, &e), HOFF_OK);
	assert_int_equal(a.lower_bound_ps, 6 * MS);
	assert_int_equal(a.repeat_bound_ps, 6 * MS);
	assert_true(a.lb_store);
	assert_int_equal(a.lb_op, 1);
	assert_int_equal(a.lb_tier, 0);
	hoff_graph_free(g);
	g = tu_graph(LB_PARTS(""));
	assert_int_equal(hoff_analyze(g, &a, &e), HOFF_OK);
	assert_int_equal(a.lower_bound_ps, 4 * MS);
	assert_int_equal(a.repeat_bound_ps, 0);
	assert_false(a.lb_store);
	hoff_graph_free(g);
#undef LB_PARTS
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_example),
		cmocka_unit_test(test_no_offload),
		cmocka_unit_test(test_prefetch_hidden),
		cmocka_unit_test(test_prefetch_stalls),
		cmocka_unit_test(test_store_then_prefetch),
		cmocka_unit_test(test_prefetch_waits_for_store),
		cmocka_unit_test(test_h2d_d2h_parallel),
		cmocka_unit_test(test_illegal_steps),
		cmocka_unit_test(test_detach_clean),
		cmocka_unit_test(test_budget_exact),
		cmocka_unit_test(test_one_instant),
		cmocka_unit_test(test_persistent_end_state),
		cmocka_unit_test(test_tier_capacity),
		cmocka_unit_test(test_workspace),
		cmocka_unit_test(test_roofline),
		cmocka_unit_test(test_two_tiers),
		cmocka_unit_test(test_zero_transfer),
		cmocka_unit_test(test_duplex_partial_overlap),
		cmocka_unit_test(test_recompute_remakes_dropped),
		cmocka_unit_test(test_dropped_read_before_recompute),
		cmocka_unit_test(test_recompute_after_update),
		cmocka_unit_test(test_repeat_end_state),
		cmocka_unit_test(test_repeat_lower_bound),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
