/* test_greedy.c: greedy and the baselines on schedules worked out by hand,
 * and properties over many graphs: every plan simulates valid, and greedy
 * is never worse than reactive or lookahead:1 at their own overhead.
 * Machine: tier "host" at 1e9 B/s each way, so 1 MB moves in 1 ms. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "analysis.h"
#include "baselines.h"
#include "budget_fit.h"
#include "duplex_time.h"
#include "greedy.h"
#include "issue_late.h"
#include "refine.h"
#include "synth.h"
#include "testutil_policy.h"

/* greedy_internal.h's (its types clash with this file's names) */
int64_t greedy_bound_ps(double x, int64_t lb_ps);

#define MS 1000000000LL
#define MB 1000000LL

#define GRAPH(budget, tensors, ops)                                         \
	"{\"format\": \"hoffopt.graph\", \"version\": 1, \"name\": \"t\", " \
	"\"machine\": {\"device\": {\"memory_bytes\": " budget "}, "        \
	"\"tiers\": [{\"name\": \"host\", \"h2d_Bps\": 1e9, \"d2h_Bps\": "  \
	"1e9}]}, \"tensors\": [" tensors "], \"ops\": [" ops "]}"
#define T(id, mb, kind) \
	"{\"id\": \"" id "\", \"bytes\": " mb "000000, \"kind\": \"" kind "\"}"
#define OP(id, in, out, ms)                                             \
	"{\"id\": \"" id "\", \"inputs\": [" in "], \"outputs\": [" out \
	"], \"time_s\": " ms "}"

/* A stash: a (2 MB) is made by f0 and read by f5; f2 and f3 peak at
 * 6 MB with it, 4 MB without. Times f0 0-1, f1 1-4, f2 4-8, f3 8-9,
 * f4 9-13, f5 13-14 ms. Storing a after f0 (1-3 ms, done before f2 at 4)
 * and fetching it after f3 (9-11 ms, before f5 at 13) costs no stall. */
static const char *stash = GRAPH(
	"100000000",
	T("x", "1", "input") "," T("a", "2", "activation") "," T("b", "1", "activation") "," T(
		"c", "3",
		"activation") "," T("d", "1",
				    "activation") "," T("e", "1",
							"activation") "," T("y",
									    "1",
									    "output"),
	OP("f0", "\"x\"", "\"a\"", "0.001") "," OP("f1", "\"x\"", "\"b\"", "0.003") "," OP(
		"f2", "\"b\"", "\"c\"",
		"0.004") "," OP("f3", "\"c\"", "\"d\"",
				"0.001") "," OP("f4", "\"d\"", "\"e\"",
						"0.004") "," OP("f5",
								"\"a\", \"e\"",
								"\"y\"",
								"0.001"));

/* The plan and step helpers are testutil_policy.c's, under the names
 * this file's cases use. */
#define plan	     tu_plan
#define expect_steps tu_expect_steps

/* Simulates s on g against budget and checks the result: valid, at
 * exactly the peak, makespan and stall given (HOFF_NONE: not checked),
 * with the steps given (NULL: not checked). A failure prints the
 * figures simulated first. */
static void expect_sim(const hoff_graph *g, const hoff_sched *s, int64_t budget,
		       int64_t peak, int64_t makespan, int64_t stall,
		       const char *steps)
{
	hoff_sim_result r = tu_sim(g, s, budget);
	const hoff_summary *m = &r.summary;
	if (!r.valid || (peak != HOFF_NONE && m->peak_bytes != peak) ||
	    (makespan != HOFF_NONE && m->makespan_ps != makespan) ||
	    (stall != HOFF_NONE && m->stall_ps != stall))
		print_error("simulated: valid %d, peak %lld B, makespan %lld "
			    "ps, stall %lld ps\n",
			    r.valid, (long long)m->peak_bytes,
			    (long long)m->makespan_ps, (long long)m->stall_ps);
	assert_true(r.valid);
	if (peak != HOFF_NONE)
		assert_int_equal(m->peak_bytes, peak);
	if (makespan != HOFF_NONE)
		assert_int_equal(m->makespan_ps, makespan);
	if (stall != HOFF_NONE)
		assert_int_equal(m->stall_ps, stall);
	if (steps)
		expect_steps(g, s, steps);
	hoff_sim_result_free(&r);
}

static void test_stash_hidden(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(stash);
	hoff_policy_report rep;
	/* Default objective: smallest peak within 1% of the lower bound. */
	hoff_sched *s = plan(g, "greedy", HOFF_NONE, 0.01, &rep);
	assert_true(rep.feasible);
	expect_sim(g, s, HOFF_NONE, 4 * MB, 14 * MS, 0,
		   "op f0|store a host|op f1|op f2|op f3|"
		   "prefetch a host|op f4|op f5");
	hoff_sched_free(s);
	hoff_graph_free(g);
}

/* The same graph under a budget of exactly its best peak: met exactly,
 * at no stall. The reactive baseline meets it too, but fetches a only
 * before f5 (13-15 ms: 2 ms of stall) and stores the output y after the
 * last op (16-17 ms): 17 ms. */
static void test_budget_exact(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(stash);
	hoff_policy_report rep;
	hoff_sched *s = plan(g, "greedy", 4 * MB, 0, &rep);
	assert_true(rep.feasible);
	expect_sim(g, s, 4 * MB, 4 * MB, 14 * MS, HOFF_NONE, NULL);
	hoff_sched_free(s);
	s = plan(g, "reactive", HOFF_NONE, 0, &rep);
	expect_sim(g, s, 4 * MB, HOFF_NONE, 17 * MS, HOFF_NONE, NULL);
	hoff_sched_free(s);
	hoff_graph_free(g);
}

/* 3 MB cannot be met: at 1 ms x (1), a (2, its store just issued) and b
 * (1) are all on the device. Reported as infeasible with the smallest
 * peak found, 4 MB. */
static void test_budget_infeasible(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(stash);
	hoff_policy_report rep;
	hoff_sched *s = plan(g, "greedy", 3 * MB, 0, &rep);
	assert_false(rep.feasible);
	assert_int_equal(rep.peak_bytes, 4 * MB);
	hoff_sched_free(s);
	hoff_graph_free(g);
}

/* The floor, what one op needs while it runs: f1 reads s (2 MB) and
 * updates it too (counted once), reads w (3 MB), writes y (1 MB), with
 * 4 MB of workspace: 10 MB, over f0's 1 + 2 = 3 MB. On a 9 MB device
 * nothing fits: greedy reports the floor and its op, and the least peak
 * of what it compared, 10 MB (the floor: here every plan reaches it). */
static void test_floor(void **state)
{
	(void)state;
	static const char *const tensors =
		"{\"id\": \"x\", \"bytes\": 1000000, \"kind\": \"input\"}, "
		"{\"id\": \"s\", \"bytes\": 2000000, \"kind\": \"activation\"}, "
		"{\"id\": \"w\", \"bytes\": 3000000, \"kind\": \"weight\"}, "
		"{\"id\": \"y\", \"bytes\": 1000000, \"kind\": \"output\"}";
	static const char *const ops =
		"{\"id\": \"f0\", \"inputs\": [\"x\"], \"outputs\": [\"s\"], "
		"\"time_s\": 0.001}, "
		"{\"id\": \"f1\", \"inputs\": [\"s\", \"w\"], \"updates\": "
		"[\"s\"], \"outputs\": [\"y\"], \"workspace_bytes\": 4000000, "
		"\"time_s\": 0.001}";
	char json[1024];
	snprintf(json, sizeof json, GRAPH("9000000", "%s", "%s"), tensors, ops);
	hoff_graph *g = tu_graph(json);
	hoff_policy_report rep;
	hoff_sched *s = plan(g, "greedy", HOFF_NONE, 0.01, &rep);
	assert_int_equal(rep.floor_bytes, 10 * MB);
	assert_int_equal(rep.floor_op, 1);
	assert_int_equal(rep.least_peak_bytes, 10 * MB);
	assert_false(rep.peak_bytes <= g->device.memory_bytes);
	hoff_sched_free(s);
	hoff_graph_free(g);
}

/* An 8 MB weight on the host read by the first op: no plan hides it.
 * The stall is reported (8 ms), and the lower bound says the same. */
static void test_weight_not_hidden(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(
		GRAPH("100000000",
		      T("x", "1",
			"input") ",{\"id\": \"w\", \"bytes\": 8000000, "
				 "\"kind\": \"weight\", \"home\": \"host\"}," T(
					 "y", "1", "output"),
		      OP("f0", "\"x\", \"w\"", "\"y\"", "0.001")));
	hoff_policy_report rep;
	hoff_sched *s = plan(g, "greedy", HOFF_NONE, 0.01, &rep);
	expect_sim(g, s, HOFF_NONE, HOFF_NONE, 9 * MS, 8 * MS, NULL);
	assert_int_equal(rep.lower_bound_ps, 9 * MS);
	assert_true(rep.feasible);
	hoff_sched_free(s);
	hoff_graph_free(g);
}

/* Two host weights compete for one h2d channel: w1 (2 ms) is needed by
 * f2 at 5 ms and w2 (2 ms) by f3 at 6 ms. Fetching each just in time
 * would overlap them on the link and stall f3; greedy queues them back to
 * back, w1 from 0 and w2 after f0 (3-5 ms): no stall. w1 is dropped
 * after its last use (a clean weight: detach); after the last op nothing
 * is worth dropping. "none" fetches each right before its use: w1 5-7
 * ms, f2 7-8, w2 8-10, f3 10-11: 4 ms of stall. */
static void test_two_prefetches_compete(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(GRAPH(
		"100000000",
		T("x", "1",
		  "input") ","
			   "{\"id\": \"w1\", \"bytes\": 2000000, \"kind\": \"weight\", "
			   "\"home\": \"host\"},"
			   "{\"id\": \"w2\", \"bytes\": 2000000, \"kind\": \"weight\", "
			   "\"home\": \"host\"}," T("a", "1", "activation") "," T(
				   "b", "1",
				   "activation") "," T("c", "1",
						       "activation") "," T("y",
									   "1",
									   "output"),
		OP("f0", "\"x\"", "\"a\"", "0.003") "," OP(
			"f1", "\"a\"", "\"b\"",
			"0.002") "," OP("f2", "\"b\", \"w1\"", "\"c\"",
					"0.001") "," OP("f3", "\"c\", \"w2\"",
							"\"y\"", "0.001")));
	hoff_policy_report rep;
	hoff_sched *s = plan(g, "greedy", HOFF_NONE, 0.01, &rep);
	expect_sim(g, s, HOFF_NONE, HOFF_NONE, 7 * MS, 0,
		   "prefetch w1 host|op f0|prefetch w2 host|"
		   "op f1|op f2|detach w1|op f3");
	hoff_sched_free(s);
	s = plan(g, "none", HOFF_NONE, 0, &rep);
	expect_sim(g, s, HOFF_NONE, HOFF_NONE, 11 * MS, HOFF_NONE, NULL);
	hoff_sched_free(s);
	hoff_graph_free(g);
}

/* --max-overhead far past any makespan (1e12: (1 + X) * lower_bound_ps
 * is past 2^63 on this graph) means any makespan: the bound saturates
 * instead of overflowing the cast, so the plan is the 4 MB one and
 * reported feasible. */
static void test_overhead_saturates(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(stash);
	hoff_policy_report rep;
	hoff_sched *s = plan(g, "greedy", HOFF_NONE, 1e12, &rep);
	assert_true(rep.feasible);
	assert_int_equal(rep.peak_bytes, 4 * MB);
	hoff_sched_free(s);
	hoff_graph_free(g);
}

/* The refinement's candidates of graph g, as greedy enumerates them,
 * written by hand (candidates.h), sorted by (a, t). */
#define CAND(by, tt, aa, bb, k)                                 \
	{                                                       \
		.bytes = (by), .t = (tt), .a = (aa), .b = (bb), \
		.kind = HOFF_CAND_##k                           \
	}
static hoff_sched *refined(const hoff_graph *g, const hoff_cand *iv,
			   int32_t niv, const char *start_json,
			   int64_t bound_ps, int64_t cap, int32_t *moves)
{
	hoff_sched *s0 = tu_sched(g, start_json);
	hoff_refine_goal go = {
		.cap = cap, .bound_ps = bound_ps, .work = 1000000};
	hoff_refine_result r;
	hoff_err e = {{0}};
	assert_int_equal(hoff_refine(g, iv, niv, s0, &go, &r, &e), HOFF_OK);
	assert_non_null(r.s);
	hoff_sched_free(s0);
	*moves = r.moves;
	return r.s;
}

#define SCHED(steps)                                                            \
	"{\"format\": \"hoffopt.schedule\", \"version\": 1, \"steps\": [" steps \
	"]}"
#define S_OP(id) "{\"op\": \"" id "\"}"
#define S_PF(id) "{\"prefetch\": \"" id "\", \"from\": \"host\"}"

/* Store after the last write: kv (4 MB, on the device) is updated in
 * place by f0 and never used again; f2 makes b (6 MB). Kept resident
 * (the start: no cache step), f2 and f3 peak at 11 MB (kv 4, c 1, b 6;
 * then kv, b, y). Stored after f0 (d2h 1-5 ms, while f1 runs 1-6 ms)
 * the peak is 7 MB (c 1 + b 6 at f2, b + y at f3), at no stall: the
 * refinement at the peak's op f2 evicts kv over its tail. */
static void test_refine_store_after_write(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(GRAPH(
		"100000000",
		T("x", "1", "input") "," T("kv", "4", "kv") "," T("a", "1", "activation") "," T(
			"c", "1",
			"activation") "," T("b", "6",
					    "activation") "," T("y", "1",
								"output"),
		"{\"id\": \"f0\", \"inputs\": [\"x\"], \"updates\": [\"kv\"], "
		"\"outputs\": [\"a\"], \"time_s\": 0.001}," OP(
			"f1", "\"a\"", "\"c\"",
			"0.005") "," OP("f2", "\"c\"", "\"b\"",
					"0.001") "," OP("f3", "\"b\"", "\"y\"",
							"0.001")));
	/* kv's tail after f0 (the only gap of a tensor not read again) */
	hoff_cand iv[] = {CAND(4 * MB, 1, 0, 4, DIRTY)};
	int32_t moves = 0;
	hoff_sched *s = refined(
		g, iv, 1,
		SCHED(S_OP("f0") "," S_OP("f1") "," S_OP("f2") "," S_OP("f3")),
		8 * MS + 8 * MS / 100, INT64_MAX, &moves);
	assert_int_equal(moves, 1);
	expect_sim(g, s, HOFF_NONE, 7 * MB, 8 * MS, HOFF_NONE,
		   "op f0|store kv host|op f1|op f2|op f3");
	hoff_sched_free(s);
	hoff_graph_free(g);
}

/* A late prefetch at the target makespan: w1 and w2 (4 MB each, on the
 * host) are read by f0 and f2 (1 ms each, as f1). The lower bound is
 * 9 ms (both transfers, then f2). Fetching both at time 0 meets it
 * (w1 0-4, f0 4-5, w2 4-8, f1 5-6, f2 8-9) with 12 MB at f0 (x, w1,
 * w2, a 3). With 12% allowed (10.08 ms), w2 issued after f0 (5-9 ms, f2
 * 9-10) holds memory after the peak instead: 8 MB (x, w1, a at f0; a,
 * w2, b at f1). The refinement holds back w2's prefetch past the peak's
 * op f0 and is then at 8 MB, 10 ms. */
static void test_refine_late_prefetch(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(GRAPH(
		"100000000",
		T("x", "1",
		  "input") ","
			   "{\"id\": \"w1\", \"bytes\": 4000000, \"kind\": \"weight\", "
			   "\"home\": \"host\"},"
			   "{\"id\": \"w2\", \"bytes\": 4000000, \"kind\": \"weight\", "
			   "\"home\": \"host\"}," T("a", "3", "activation") "," T(
				   "b", "1", "activation") "," T("y", "1",
								 "output"),
		OP("f0", "\"x\", \"w1\"", "\"a\"",
		   "0.001") "," OP("f1", "\"a\"", "\"b\"",
				   "0.001") "," OP("f2", "\"b\", \"w2\"",
						   "\"y\"", "0.001")));
	/* w1 and w2's first fetches; w1's tail after f0 (a clean copy) */
	hoff_cand iv[] = {CAND(4 * MB, 1, -1, 0, START),
			  CAND(4 * MB, 2, -1, 2, START),
			  CAND(4 * MB, 1, 0, 3, CLEAN)};
	int32_t moves = 0;
	const char *start = SCHED(S_PF("w1") "," S_PF("w2") "," S_OP(
		"f0") ",{\"detach\": \"w1\"}," S_OP("f1") "," S_OP("f2"));
	hoff_sched *s =
		refined(g, iv, 3, start, 10080 * MS / 1000, INT64_MAX, &moves);
	expect_sim(g, s, HOFF_NONE, 8 * MB, 10 * MS, HOFF_NONE,
		   "prefetch w1 host|op f0|detach w1|"
		   "prefetch w2 host|op f1|op f2");
	hoff_sched_free(s);
	/* At 1% (9.09 ms) no move fits: the start stands. */
	s = refined(g, iv, 3, start, 9090 * MS / 1000, INT64_MAX, &moves);
	assert_int_equal(moves, 0);
	expect_sim(g, s, HOFF_NONE, 12 * MB, 9 * MS, HOFF_NONE, NULL);
	hoff_sched_free(s);
	hoff_graph_free(g);
}

/* The stream: three optimizer states s1..s3 (3 MB each, on the host,
 * 3 ms a fetch) are updated by u1..u3 (1 ms each) after f0..f2 (2 ms
 * each; f2 makes c, 4 MB, read by none). The start queues s2 and s3
 * before s1 on the link: s2 0-3, s3 3-6, s1 (issued after f1) 6-9, so
 * u1 waits 3 ms: 12 ms, 14 MB at f2 (b, c and the three states). No
 * single move mends it: holding s3 back to after f2 still leaves s1
 * behind s2 (u1 at 7, u3 at 10: 11 ms). With 10 ms allowed, the
 * stream puts the whole second of slack before u3 and fetches backward
 * from there, earliest deadline first on the link: s3 6-9 (issued
 * after f2), s2 3-6 (after f0), s1 0-3 (before f0); u1 6, u2 7, u3
 * waits for s3 until 9: 10 ms, and 11 MB at f2 (b 1, c 4, s1, s2),
 * the least any plan within 10 ms has (s2 issued after f2 would delay
 * s3 to 12 ms). */
/* clang-format off */
#define STATE(id)                                                              \
	"{\"id\": \"" id "\", \"bytes\": 3000000, \"kind\": \"optimizer\", " \
	"\"home\": \"host\"}"
#define UPDATE(id, t)                                                          \
	"{\"id\": \"" id "\", \"updates\": [\"" t "\"], \"time_s\": 0.001}"
static const char *stream =
	GRAPH("100000000",
	      T("x", "1", "input") "," T("a", "1", "activation") ","
	      T("b", "1", "activation") "," T("c", "4", "activation") ","
	      STATE("s1") "," STATE("s2") "," STATE("s3"),
	      OP("f0", "\"x\"", "\"a\"", "0.002") ","
	      OP("f1", "\"a\"", "\"b\"", "0.002") ","
	      OP("f2", "\"b\"", "\"c\"", "0.002") ","
	      UPDATE("u1", "s1") "," UPDATE("u2", "s2") "," UPDATE("u3", "s3"));
/* clang-format on */

static void test_refine_stream(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(stream);
	/* the states' first fetches */
	hoff_cand iv[] = {CAND(3 * MB, 4, -1, 3, START),
			  CAND(3 * MB, 5, -1, 4, START),
			  CAND(3 * MB, 6, -1, 5, START)};
	const char *start = SCHED(
		S_PF("s2") "," S_PF("s3") "," S_OP("f0") "," S_OP("f1") "," S_PF(
			"s1") "," S_OP("f2") "," S_OP("u1") "," S_OP("u2") "," S_OP("u3"));
	hoff_sched *s0 = tu_sched(g, start);
	expect_sim(g, s0, HOFF_NONE, 14 * MB, 12 * MS, HOFF_NONE, NULL);
	hoff_refine_goal go = {.cap = INT64_MAX,
			       .bound_ps = 10 * MS,
			       .work = 1000000,
			       .repair = true};
	hoff_refine_result res;
	hoff_err e = {{0}};
	assert_int_equal(hoff_refine(g, iv, 3, s0, &go, &res, &e), HOFF_OK);
	assert_non_null(res.s);
	expect_sim(g, res.s, HOFF_NONE, 11 * MB, 10 * MS, HOFF_NONE,
		   "prefetch s1 host|op f0|prefetch s2 host|op f1|op f2|"
		   "prefetch s3 host|op u1|op u2|op u3");
	hoff_sched_free(res.s);
	hoff_sched_free(s0);
	hoff_graph_free(g);
}

/* The data/ graphs where greedy reaches the witness schedules of
 * ../shared/witness (checked there by an independent implementation of
 * FORMAT.md) at 1% over the lower bound: greedy's peak, byte for byte,
 * is at or below the witness's, and the plan meets the bound. The
 * witnesses were made for the version-1 graphs (their sha256 prefixes,
 * checked by the fixture data_v1): data/regen.sh --v1's forms. */
static void test_data_witness(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		int64_t greedy, witness;
	} rows[] = {
		{"deepseek-v3-decode-4l.json", 7808945792, 7808965120},
		{"llama3-70b-decode.json", 2103529472, 2103529472},
		{"llama3-8b-decode-2l.json", 3057721344, 3057721344},
		{"llama3-8b-prefill-2l.json", 3242196992, 3242196992},
		{"llama3-8b-prefill.json", 21613764608, 21630541824},
		{"llama3-8b-train-2l.json", 15305195520, 15305195520},
		{"mixtral-8x7b-decode-2l.json", 1128374272, 1128376320},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		hoff_graph *g = tu_data_v1_graph_or_skip(rows[i].name);
		hoff_policy_report rep;
		hoff_sched *s = plan(g, "greedy", HOFF_NONE, 0.01, &rep);
		hoff_sim_result r = tu_sim(g, s, HOFF_NONE);
		assert_true(r.valid);
		assert_true(rep.feasible);
		print_message("%s: %lld B (witness %lld B)\n", rows[i].name,
			      (long long)r.summary.peak_bytes,
			      (long long)rows[i].witness);
		assert_int_equal(r.summary.peak_bytes, rows[i].greedy);
		assert_true(r.summary.peak_bytes <= rows[i].witness);
		assert_true(r.summary.makespan_ps <=
			    (int64_t)(1.01 * (double)rep.lower_bound_ps));
		hoff_sim_result_free(&r);
		hoff_sched_free(s);
		hoff_graph_free(g);
	}
}

/* The same graphs as data/ holds them (FORMAT v2: train and decode
 * steps repeat, the h100-pcie5 and h200 links at duplex 0.92): greedy at
 * 1% over the lower bound. Every plan is valid, so each repeat graph's
 * state ends home (rule 9, judged by the simulator); where greedy meets
 * the bound it says so, and where it cannot (llama3-8b-train-2l: the
 * 11 GiB of Adam state must come in and go back over one link, whose two
 * directions slow each other) it returns its fastest plan, 21.2% over,
 * and says it is not within. The peaks are regression figures, each
 * checked by `hoffopt simulate`. The version-1 plan of a training step
 * is no plan for the loop: on the repeat graph it breaks rule 9. */
static void test_data_repeat(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		bool repeat, feasible;
		int64_t greedy;
	} rows[] = {
		{"deepseek-v3-decode-4l.json", true, true, 7897009664},
		{"llama3-70b-decode.json", true, true, 2103529472},
		{"llama3-8b-decode-2l.json", true, true, 3057953280},
		{"llama3-8b-prefill-2l.json", false, true, 3242196992},
		{"llama3-8b-prefill.json", false, true, 21613764608},
		{"llama3-8b-train-2l.json", true, false, 16355917828},
		{"mixtral-8x7b-decode-2l.json", true, true, 1480835104},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		hoff_graph *g = tu_data_graph_or_skip(rows[i].name);
		assert_int_equal(g->version, 2);
		assert_int_equal(g->repeat, rows[i].repeat);
		hoff_policy_report rep;
		hoff_sched *s = plan(g, "greedy", HOFF_NONE, 0.01, &rep);
		hoff_sim_result r = tu_sim(g, s, HOFF_NONE);
		print_message("%s (v2): %lld B, %.4f%% over the bound\n",
			      rows[i].name, (long long)r.summary.peak_bytes,
			      100.0 * ((double)r.summary.makespan_ps /
					       (double)rep.lower_bound_ps -
				       1.0));
		assert_true(r.valid);
		assert_int_equal(r.summary.peak_bytes, rows[i].greedy);
		assert_int_equal(rep.feasible, rows[i].feasible);
		assert_int_equal(
			r.summary.makespan_ps <=
				(int64_t)(1.01 * (double)rep.lower_bound_ps),
			rows[i].feasible);
		hoff_sim_result_free(&r);
		hoff_sched_free(s);
		hoff_graph_free(g);
	}
	/* the v1 plan on the loop step: state left on the device */
	hoff_graph *v1 = tu_data_v1_graph_or_skip("llama3-8b-train-2l.json");
	hoff_graph *v2 = tu_data_graph_or_skip("llama3-8b-train-2l.json");
	hoff_policy_report rep;
	hoff_sched *s = plan(v1, "greedy", HOFF_NONE, 0.01, &rep);
	hoff_sim_result r = tu_sim(v1, s, HOFF_NONE);
	assert_true(r.valid);
	hoff_sim_result_free(&r);
	r = tu_sim(v2, s, HOFF_NONE);
	assert_false(r.valid);
	assert_true(tu_has_rule(&r, 9));
	hoff_sim_result_free(&r);
	hoff_sched_free(s);
	hoff_graph_free(v2);
	hoff_graph_free(v1);
}

/* Layers from the `layer` field or an id prefix "layers.N.". */
static void test_op_layer(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(GRAPH(
		"100000000", T("x", "1", "input"),
		"{\"id\": \"layers.12.attn\", \"inputs\": [\"x\"], \"time_s\": "
		"0.001},"
		"{\"id\": \"model.layers.3.mlp\", \"inputs\": [\"x\"], "
		"\"time_s\": 0.001},"
		"{\"id\": \"head\", \"inputs\": [\"x\"], \"time_s\": 0.001, "
		"\"layer\": 40},"
		"{\"id\": \"xlayers.5.q\", \"inputs\": [\"x\"], \"time_s\": "
		"0.001}"));
	assert_int_equal(hoff_op_layer(g, 0), 12);
	assert_int_equal(hoff_op_layer(g, 1), 3);
	assert_int_equal(hoff_op_layer(g, 2), 40);
	assert_int_equal(hoff_op_layer(g, 3), HOFF_NONE);
	hoff_graph_free(g);
}

/* (v2) Whether every state tensor of repeat graph g ends where it
 * started after s (FORMAT.md rule 9), recomputed from the steps alone,
 * independently of the emitter and the simulator: a device-homed one
 * resident, a tier-homed one off the device with a valid copy at home. */
static bool state_home(const hoff_graph *g, const hoff_sched *s)
{
	int32_t n = g->ntensors;
	bool *on = calloc((size_t)n + 1, 1), *home = calloc((size_t)n + 1, 1);
	assert_non_null(on);
	assert_non_null(home);
	for (int32_t t = 0; t < n; t++) {
		const hoff_tensor *x = &g->tensor[t];
		on[t] = x->producer == HOFF_NONE && x->home == HOFF_DEVICE;
		home[t] = x->producer == HOFF_NONE && x->home != HOFF_DEVICE;
	}
	for (int64_t i = 0; i < s->nsteps; i++) {
		const hoff_step *p = &s->step[i];
		if (p->kind == HOFF_STEP_OP) {
			const hoff_op *o = &g->op[p->id];
			(void)o;
			for (int64_t j = g->out_off[p->id];
			     j < g->out_off[p->id + 1]; j++)
				on[g->out[j]] = true;
			for (int64_t j = g->upd_off[p->id];
			     j < g->upd_off[p->id + 1]; j++)
				home[g->upd[j]] = false;
		} else if (p->kind == HOFF_STEP_PREFETCH) {
			on[p->id] = true;
		} else if (p->kind == HOFF_STEP_STORE) {
			on[p->id] = false;
			if (p->tier == g->tensor[p->id].home)
				home[p->id] = true;
		} else if (p->kind == HOFF_STEP_DETACH) {
			on[p->id] = false;
		}
	}
	bool ok = true;
	for (int32_t t = 0; t < n; t++) {
		const hoff_tensor *x = &g->tensor[t];
		if (!hoff_tensor_persistent(x) || x->producer != HOFF_NONE)
			continue;
		if (x->home == HOFF_DEVICE ? !on[t] : on[t] || !home[t])
			ok = false;
	}
	free(on);
	free(home);
	return ok;
}

/* Greedy against reactive and lookahead:1 at their own overhead on six
 * synthetic graphs, as FORMAT v1 plans them, or (repeat) as one step of
 * a loop (the training graphs, seeds 1, 3, 5; seed 3's weights and
 * their state on the host): every plan valid, the state home, and
 * greedy's peak at most the baseline's. */
static void never_worse(bool repeat)
{
	static const char *const base[] = {"reactive", "lookahead:1"};
	for (int seed = 1; seed <= 6; seed++) {
		hoff_synth_opts so = hoff_synth_defaults();
		so.nops = 150 + 40 * seed;
		so.layers = 3;
		so.shape = seed % 2 ? HOFF_SYNTH_TRAIN : HOFF_SYNTH_INFER;
		so.weights_on_host = seed % 3 == 0;
		so.seed = (uint64_t)seed;
		if (repeat && so.shape != HOFF_SYNTH_TRAIN)
			continue;
		hoff_graph *g = tu_synth(&so);
		if (repeat) {
			g->version = 2;
			g->repeat = true;
		}
		for (size_t b = 0; b < 2; b++) {
			hoff_policy_report br, gr;
			hoff_sched *s = plan(g, base[b], HOFF_NONE, 0, &br);
			hoff_sim_result r = tu_sim(g, s, INT64_MAX);
			assert_true(r.valid);
			double x = (double)br.makespan_ps /
					   (double)br.lower_bound_ps -
				   1.0;
			hoff_sched_free(s);
			hoff_sim_result_free(&r);
			s = plan(g, "greedy", HOFF_NONE, x, &gr);
			r = tu_sim(g, s, HOFF_NONE);
			assert_true(r.valid);
			assert_true(!repeat || state_home(g, s));
			if (br.peak_bytes <= g->device.memory_bytes) {
				assert_true(gr.peak_bytes <= br.peak_bytes);
				assert_true(gr.makespan_ps <=
					    br.makespan_ps +
						    br.makespan_ps / 1000000);
			}
			hoff_sched_free(s);
			hoff_sim_result_free(&r);
		}
		hoff_graph_free(g);
	}
}

static void test_never_worse(void **state)
{
	(void)state;
	never_worse(false);
}

static void test_never_worse_repeat(void **state)
{
	(void)state;
	never_worse(true);
}

/* The bound of --max-overhead x is the largest makespan whose reported
 * overhead, (double)m / lb - 1, is at most x. data/deepseek-v3-decode-4l's
 * reactive plan: m = 14741801157 ps over lb = 13311233549 ps; floor((1 +
 * x) lb), the bound before, is m - 1 there, so the baseline missed the
 * bound of its own reported overhead. x a hair under (the next double
 * down) and m is out. */
static void test_bound_of_overhead(void **state)
{
	(void)state;
	const int64_t lb = 13311233549, m = 14741801157;
	double x = (double)m / (double)lb - 1.0;
	assert_int_equal((int64_t)floor((1.0 + x) * (double)lb), m - 1);
	assert_int_equal(greedy_bound_ps(x, lb), m);
	assert_int_equal(greedy_bound_ps(nextafter(x, 0), lb), m - 1);
	assert_int_equal(greedy_bound_ps(0, lb), lb);
	assert_int_equal(greedy_bound_ps(0, 0), 0);
	assert_int_equal(greedy_bound_ps(1e300, lb), HOFF_PS_LIMIT);
}

/* data/llama3-8b-prefill-2l (v2) at reactive's own overhead (its report's
 * 10.576124905756222): greedy's peak is at most reactive's 3133186048 B
 * (reactive refined: 3116400640 B). At 10.57612490575622, the 16 digits
 * jq printed, reactive's 68283041060 ps is over the bound (by 1.2e-5 ps
 * in exact arithmetic) and greedy's own plans give 3200253952 B: the row
 * bench/studies/repeat_valid.sh once failed. */
static void test_prefill_at_reactive(void **state)
{
	(void)state;
	hoff_graph *g = tu_data_graph_or_skip("llama3-8b-prefill-2l.json");
	hoff_policy_report br, gr;
	hoff_sched *s = plan(g, "reactive", HOFF_NONE, 0, &br);
	assert_int_equal(br.peak_bytes, 3133186048);
	assert_int_equal(br.makespan_ps, 68283041060);
	double x = (double)br.makespan_ps / (double)br.lower_bound_ps - 1.0;
	hoff_sched_free(s);
	s = plan(g, "greedy", HOFF_NONE, x, &gr);
	assert_true(gr.feasible);
	assert_int_equal(gr.peak_bytes, 3116400640);
	assert_true(gr.peak_bytes <= br.peak_bytes);
	assert_true(gr.makespan_ps <= br.makespan_ps);
	hoff_sched_free(s);
	s = plan(g, "greedy", HOFF_NONE, 10.57612490575622, &gr);
	assert_int_equal(gr.peak_bytes, 3200253952);
	hoff_sched_free(s);
	hoff_graph_free(g);
}

/* tests/graphs/mixtral-8x7b-prefill-3l-s1024.json (`hoffopt gen
 * mixtral-8x7b --phase prefill --layers 3 --seq 1024`: h100-pcie5, duplex
 * 0.92): reactive's plan, 883105792 B at 56335894554 ps, is
 * 0.4401374302224148 over the lower bound as hoffopt reports it, and
 * floor((1 + x) lb) is a picosecond under its makespan. Greedy asked for
 * that overhead once returned its own 1161887744 B (31.6% above); now the
 * baseline meets the bound its overhead implies, is refined under it and
 * wins: 832741376 B, within the bound, valid. */
static void test_at_baseline_overhead(void **state)
{
	(void)state;
	hoff_graph *g = tu_data_graph_or_skip(
		"../tests/graphs/mixtral-8x7b-prefill-3l-s1024.json");
	hoff_policy_report br, gr;
	hoff_sched *s = plan(g, "reactive", HOFF_NONE, 0, &br);
	assert_int_equal(br.peak_bytes, 883105792);
	assert_int_equal(br.makespan_ps, 56335894554);
	double x = (double)br.makespan_ps / (double)br.lower_bound_ps - 1.0;
	assert_true((int64_t)floor((1.0 + x) * (double)br.lower_bound_ps) <
		    br.makespan_ps);
	hoff_sched_free(s);
	s = plan(g, "greedy", HOFF_NONE, x, &gr);
	hoff_sim_result r = tu_sim(g, s, HOFF_NONE);
	assert_true(r.valid);
	assert_true(gr.feasible);
	assert_int_equal(r.summary.peak_bytes, 832741376);
	assert_true(r.summary.makespan_ps <= br.makespan_ps);
	hoff_sim_result_free(&r);
	hoff_sched_free(s);
	hoff_graph_free(g);
}

/* Greedy runs set-up, baselines and pairs of targets on two threads and
 * keeps candidates in a fixed order: one thread and two plan the same
 * steps, in both objectives. */
static void test_threads_agree(void **state)
{
	(void)state;
#ifndef _OPENMP
	skip();
#else
	for (int seed = 1; seed <= 3; seed++) {
		hoff_synth_opts so = hoff_synth_defaults();
		so.nops = 140 + 30 * seed;
		so.layers = 4;
		so.shape = seed % 2 ? HOFF_SYNTH_TRAIN : HOFF_SYNTH_INFER;
		so.weights_on_host = seed > 2;
		so.seed = (uint64_t)seed;
		hoff_graph *g = tu_synth(&so);
		hoff_err e;
		hoff_analysis an;
		assert_int_equal(hoff_analyze(g, &an, &e), HOFF_OK);
		int64_t budgets[2] = {HOFF_NONE, an.closed_peak_bytes * 9 / 10};
		for (int b = 0; b < 2; b++) {
			hoff_policy_report r1, r2;
			omp_set_num_threads(1);
			hoff_sched *s1 =
				plan(g, "greedy", budgets[b], 0.01, &r1);
			omp_set_num_threads(2);
			hoff_sched *s2 =
				plan(g, "greedy", budgets[b], 0.01, &r2);
			assert_true(hoff_sched_same_steps(s1, s2));
			assert_int_equal(r1.peak_bytes, r2.peak_bytes);
			assert_int_equal(r1.makespan_ps, r2.makespan_ps);
			assert_int_equal(r1.iterations, r2.iterations);
			assert_string_equal(r1.source, r2.source);
			hoff_sched_free(s1);
			hoff_sched_free(s2);
		}
		hoff_graph_free(g);
	}
#endif
}

/* Graphs with nothing to move (issue 34, item 4): no op, and one op
 * whose input and output live for it alone (short-lived: no candidate,
 * no small tensor's gap either). The refinement's candidate list is
 * then empty; qsort was handed a NULL array, which UBSan aborts on (the
 * sanitizer build of this test). Every policy, in both of greedy's
 * modes, returns a valid plan: with no op, no step, peak 0, makespan 0;
 * with one, "op f0" with x and y on the device (2 MB) for 1 ms, where
 * the runtime baselines (reactive, lookahead:N) also store the output
 * after its last use (1 MB at 1 GB/s: 1 ms more). */
static void check_nothing_to_move(const char *json, int64_t peak,
				  const char *keep, int64_t keep_ps,
				  const char *evict, int64_t evict_ps)
{
	static const char *const policies[] = {
		"none", "reactive", "lookahead:1", "lookahead:2", "greedy"};
	hoff_graph *g = tu_graph(json);
	for (size_t i = 0; i < sizeof policies / sizeof *policies; i++) {
		bool evicts = i >= 1 && i <= 3;
		for (int budget = 0; budget < 2; budget++) {
			hoff_policy_report rep;
			hoff_sched *s = plan(g, policies[i],
					     budget ? peak : HOFF_NONE, 0.01,
					     &rep);
			expect_sim(g, s, peak, peak,
				   evicts ? evict_ps : keep_ps, HOFF_NONE,
				   evicts ? evict : keep);
			hoff_sched_free(s);
		}
	}
	hoff_graph_free(g);
}

static void test_no_ops(void **state)
{
	(void)state;
	check_nothing_to_move(GRAPH("1000", "", ""), 0, "", 0, "", 0);
}

static void test_one_op_no_candidates(void **state)
{
	(void)state;
	check_nothing_to_move(
		GRAPH("100000000",
		      T("x", "1", "input") "," T("y", "1", "output"),
		      OP("f0", "\"x\"", "\"y\"", "0.001")),
		2 * MB, "op f0", 1 * MS, "op f0|store y host", 2 * MS);
}

/* The targets of greedy's peak search, from its progress lines. */
typedef struct targets {
	int n;
	int64_t t[64];
} targets;

static void note_target(void *ctx, const char *line)
{
	targets *k = ctx;
	long long t;
	if (k->n < 64 && sscanf(line, "greedy: target %lld B", &t) == 1)
		k->t[k->n++] = t;
}

/* hoff_policy_opts.peak_to_beat: a peak over it loses whatever it is, so
 * the peak search tries no target there. Over the first target's peak it
 * changes nothing (the same schedule from the same plans); at greedy's
 * own answer, every target after the first (the no-offload peak, planned
 * beside the baselines) is at or under it, where the search without it
 * tried some over it, and what it returns is valid. */
static void test_peak_to_beat(void **state)
{
	(void)state;
	hoff_synth_opts so = hoff_synth_defaults();
	so.nops = 400;
	so.layers = 3;
	so.shape = HOFF_SYNTH_TRAIN;
	hoff_graph *g = tu_synth(&so);
	hoff_policy_opts o = hoff_policy_defaults();
	targets k0 = {0}, k1 = {0};
	o.progress = (hoff_progress){.fn = note_target, .ctx = &k0};
	hoff_policy_report r0, r1;
	hoff_sched *s0 = tu_run(g, &o, &r0);
	o.peak_to_beat = INT64_MAX;
	o.progress.fn = NULL;
	hoff_sched *s1 = tu_run(g, &o, &r1);
	assert_true(hoff_sched_same_steps(s0, s1));
	assert_int_equal(r1.iterations, r0.iterations);
	hoff_sched_free(s1);
	o.peak_to_beat = r0.peak_bytes;
	o.progress = (hoff_progress){.fn = note_target, .ctx = &k1};
	s1 = tu_run(g, &o, &r1);
	int over = 0;
	for (int i = 1; i < k0.n; i++)
		over += k0.t[i] > r0.peak_bytes;
	assert_true(over > 0);
	assert_true(k1.n > 1);
	assert_int_equal(k1.t[0], k0.t[0]);
	for (int i = 1; i < k1.n; i++)
		assert_true(k1.t[i] <= r0.peak_bytes);
	hoff_sim_result r = tu_sim(g, s1, HOFF_NONE);
	assert_true(r.valid);
	assert_int_equal(r.summary.peak_bytes, r1.peak_bytes);
	hoff_sim_result_free(&r);
	hoff_sched_free(s1);
	hoff_sched_free(s0);
	hoff_graph_free(g);
}

/* (v2) One training step that repeats, 4 ms an op at 1 MB/ms: f0 reads
 * x and the device-homed weight w (4 MB), f1 makes g (4 MB), f2 updates
 * w and its Adam state m (2 MB, homed on the host) and makes s, f3 reads
 * s and w. m must be fetched for f2 (2 ms) and, dirty, stored home
 * after it (2 ms, hidden behind f3); w must end resident. Lower bound
 * 16 ms (compute; the repeat term P + W is f0..f2's 12 ms + 2 ms).
 * Greedy fetches m after f0 (4-6 ms, before f2 at 8) and stores it
 * after f2 (12-14 ms): 16 ms, no stall; peak 11 MB (w 4, a 1, m 2, g 4
 * during f1; w, m, g, s during f2). none fetches m just before f2: 2 ms
 * of stall, 18 ms. Without repeat greedy leaves m dirty on the device,
 * as FORMAT v1 allows. Every policy's plan leaves the state home
 * (state_home) and is valid. */
static const char *loop_graph = GRAPH(
	"100000000",
	T("x", "1",
	  "input") ","
		   "{\"id\": \"w\", \"bytes\": 4000000, \"kind\": \"weight\"},"
		   "{\"id\": \"m\", \"bytes\": 2000000, \"kind\": \"optimizer\", "
		   "\"home\": \"host\"}," T("a", "1", "activation") "," T(
			   "g", "4",
			   "activation") "," T("s", "1",
					       "activation") "," T("y", "1",
								   "output"),
	OP("f0", "\"x\", \"w\"", "\"a\"", "0.004") "," OP(
		"f1", "\"a\"", "\"g\"",
		"0.004") ","
			 "{\"id\": \"f2\", \"inputs\": [\"g\"], \"updates\": [\"w\", "
			 "\"m\"], \"outputs\": [\"s\"], \"time_s\": 0.004}," OP(
				 "f3", "\"s\", \"w\"", "\"y\"", "0.004"));

static void test_repeat_state_home(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(loop_graph);
	hoff_policy_report rep;
	hoff_sched *s = plan(g, "greedy", HOFF_NONE, 0.01, &rep);
	expect_steps(g, s, "op f0|prefetch m host|op f1|op f2|op f3");
	assert_false(state_home(g, s));
	hoff_sched_free(s);
	g->version = 2;
	g->repeat = true;
	/* reactive: w stored after f0 and fetched back for f2 (4-8, 8-12
	 * ms), m after it (12-14), f2 14-18, m home 18-20 behind f3 18-22,
	 * the output y stored 22-23 as in v1; w is not evicted after f3.
	 * lookahead:N: one layer run, so m goes home after f3 with y:
	 * 16-18, 18-19 ms. */
	static const struct {
		const char *policy, *steps;
		int64_t makespan_ps;
	} want[] = {
		{"none", "op f0|op f1|prefetch m host|op f2|store m host|op f3",
		 18 * MS},
		{"reactive",
		 "op f0|store w host|op f1|prefetch w host|prefetch m host|"
		 "op f2|store m host|op f3|store y host",
		 23 * MS},
		{"lookahead:1",
		 "prefetch m host|op f0|op f1|op f2|op f3|store m host|"
		 "store y host",
		 19 * MS},
		{"lookahead:2",
		 "prefetch m host|op f0|op f1|op f2|op f3|store m host|"
		 "store y host",
		 19 * MS},
		{"greedy",
		 "op f0|prefetch m host|op f1|op f2|store m host|op f3",
		 16 * MS},
	};
	for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
		s = plan(g, want[i].policy, HOFF_NONE, 0.01, &rep);
		print_message("%s\n", want[i].policy);
		assert_true(state_home(g, s));
		expect_sim(g, s, HOFF_NONE, HOFF_NONE, want[i].makespan_ps,
			   HOFF_NONE, want[i].steps);
		hoff_sched_free(s);
	}
	/* greedy's peak, and its own plan: the state's way home is a
	 * candidate every plan takes, not an afterthought */
	s = plan(g, "greedy", HOFF_NONE, 0.01, &rep);
	assert_int_equal(rep.peak_bytes, 11 * MB);
	assert_string_equal(rep.source, "greedy");
	hoff_sched_free(s);
	hoff_graph_free(g);
}

/* (v2) Duplex in greedy's cost model: the transfer time across the
 * other channel's busy spans, by hand. Over [0, 2) ps the channel moves
 * at 0.3 (F = 300000 ppm), elsewhere at 1. 3 ps of work from 0: 0.6
 * done by 2, the other 2.4 at full speed, ceil: ends at 5. Ending at 5:
 * (2, 5] does it all, starts at 2. 4 ps ending at 5: 3 in (2, 5], 0.6
 * over [0, 2), the last 0.4 at full speed before 0, ceil: starts at -1.
 * At 0.7 over [0, 2), 1 ps takes ceil(1 / 0.7) = 2. With two spans
 * [0, 2) and [3, 4) and f = 0.5, 2 ps from 1: 0.5 by 2, 1 by 3, 0.5
 * over [3, 4): ends at 4. */
static void test_duplex_arithmetic(void **state)
{
	(void)state;
	const hoff_busy one[] = {{0, 2}};
	assert_int_equal(hoff_duplex_end(one, 1, 0, 3, 300000), 5);
	assert_int_equal(hoff_duplex_start(one, 1, 5, 3, 300000), 2);
	assert_int_equal(hoff_duplex_start(one, 1, 5, 4, 300000), -1);
	assert_int_equal(hoff_duplex_start(one, 1, 2, 1, 700000), 0);
	assert_int_equal(hoff_duplex_end(one, 1, 0, 1, 700000), 2);
	const hoff_busy two[] = {{0, 2}, {3, 4}};
	assert_int_equal(hoff_duplex_end(two, 2, 1, 2, 500000), 4);
	assert_int_equal(hoff_duplex_start(two, 2, 4, 2, 500000), 1);
	/* nothing busy, or a factor of 1: the nominal time */
	assert_int_equal(hoff_duplex_end(two, 0, 7, 5, 500000), 12);
	assert_int_equal(hoff_duplex_start(two, 2, 4, 3, HOFF_DUPLEX_ONE), 1);
}

/* (v2) A repeat graph at 1 MB/ms whose host link's h2d direction halves
 * while d2h runs (h2d_duplex_factor 0.5). f0 4 ms, f1 1 ms updates the
 * Adam state m (4 MB, host-homed), f2 4 ms, f3 1 ms reads the weight w
 * (3 MB, host-homed). m comes in before f0 (0-4 ms) and goes home after
 * f1 (5-9 ms). w must be in by f3 at 9 ms. With a factor of 1 greedy
 * fetches it after f1 (5-8 ms). At 0.5 that transfer would crawl beside
 * m's store, 2 MB by 9 ms, the last 1 MB 9-10: f3 a ms late, 10% over
 * the 10 ms bound. Knowing the store slows it, greedy issues w after
 * f0: 1 MB 4-5 ms at full speed, 2 MB 5-9 at half: in at 9, no stall,
 * 10 ms. Peak 9 MB both ways (f2: b, c, m's block until its store
 * completes, w). */
static void test_duplex_placement(void **state)
{
	(void)state;
	static const char fmt[] =
		"{\"format\": \"hoffopt.graph\", \"version\": 2, \"repeat\": "
		"true, \"name\": \"dx\", \"machine\": {\"device\": "
		"{\"memory_bytes\": 100000000}, \"tiers\": [{\"name\": \"host\", "
		"\"h2d_Bps\": 1e9, \"d2h_Bps\": 1e9, \"h2d_duplex_factor\": %s}]},"
		" \"tensors\": [" T(
			"x", "1",
			"input") ","
				 "{\"id\": \"m\", \"bytes\": 4000000, \"kind\": \"optimizer\", "
				 "\"home\": \"host\"},"
				 "{\"id\": \"w\", \"bytes\": 3000000, \"kind\": \"weight\", "
				 "\"home\": \"host\"}," T("a", "1", "activation") "," T("b", "1", "activation") "," T("c", "1", "activation") "," T(
					 "y", "1",
					 "output") "], \"ops\": [" OP("f0",
								      "\"x\"",
								      "\"a\"",
								      "0.004") ","
									       "{\"id\": \"f1\", \"inputs\": [\"a\"], \"updates\": [\"m\"], "
									       "\"outputs\": [\"b\"], \"time_s\": 0.001}," OP(
										       "f2",
										       "\"b\"",
										       "\"c\"",
										       "0.004") "," OP("f3",
												       "\"c\", \"w\"",
												       "\"y\"",
												       "0.001") "]}";
	static const struct {
		const char *factor, *steps;
	} want[] = {
		{"1",
		 "prefetch m host|op f0|op f1|store m host|prefetch w host|"
		 "op f2|op f3|detach w"},
		{"0.5", "prefetch m host|op f0|prefetch w host|op f1|"
			"store m host|op f2|op f3|detach w"},
	};
	for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
		char json[2048];
		snprintf(json, sizeof json, fmt, want[i].factor);
		hoff_graph *g = tu_graph(json);
		hoff_policy_report rep;
		hoff_sched *s = plan(g, "greedy", HOFF_NONE, 0.01, &rep);
		print_message("h2d_duplex_factor %s\n", want[i].factor);
		assert_true(rep.feasible);
		assert_true(state_home(g, s));
		assert_int_equal(rep.lower_bound_ps, 10 * MS);
		assert_string_equal(rep.source, "greedy");
		expect_sim(g, s, HOFF_NONE, 9 * MB, 10 * MS, HOFF_NONE,
			   want[i].steps);
		hoff_sched_free(s);
		hoff_graph_free(g);
	}
}

/* ---- Budget fit (budget_fit.c) and no dead end (issue 33) ---- */

/* Plans g with the budget fit alone under budget; the plan must fit. */
static hoff_sched *fitted(const hoff_graph *g, int64_t budget)
{
	hoff_fit_result fr;
	hoff_err e = {{0}};
	hoff_status st = hoff_budget_fit(g, budget, 4000000, &fr, &e);
	if (st != HOFF_OK)
		print_error("%s\n", e.msg);
	assert_int_equal(st, HOFF_OK);
	assert_non_null(fr.s);
	assert_true(fr.fits);
	return fr.s;
}

/* A budget fit worked out by hand (the cases below, in fits[]): the
 * graph, the budget, and the fit's plan, valid for the simulator under
 * the budget at exactly peak and makespan with the given steps; greedy:
 * greedy's budget mode, too, is feasible at the same makespan. */
struct fit_case {
	const char *name; /* the cmocka test's */
	const char *graph;
	int64_t budget, peak, makespan;
	const char *steps;
	bool greedy;
};

/* One cmocka test a case of fits[] (main's FIT_TEST). */
static void test_fit(void **state)
{
	const struct fit_case *c = *state;
	hoff_graph *g = tu_graph(c->graph);
	hoff_sched *s = fitted(g, c->budget);
	expect_sim(g, s, c->budget, c->peak, c->makespan, HOFF_NONE, c->steps);
	hoff_sched_free(s);
	if (c->greedy) {
		hoff_policy_report rep;
		s = plan(g, "greedy", c->budget, 0, &rep);
		assert_true(rep.feasible);
		assert_int_equal(rep.makespan_ps, c->makespan);
		hoff_sched_free(s);
	}
	hoff_graph_free(g);
}

/* A short gap's round trip. Without offload g holds a, b, c (5 MB),
 * f2 a, c, d (6 MB), h a, d, e (5 MB). Under 5 MB only a, untouched
 * between f1 and f3, can leave for f2: stored after f1 (1 MB/ms: 2-4
 * ms, under g), fetched after f2 (5-7 ms, under h, where a, d, e are
 * 5 MB): the round trip over three ops costs no stall, 8 ms of compute,
 * peak 5 MB. */
/* clang-format off */
static const char short_gap[] =
	GRAPH("100000000",
	      T("x", "1", "input") "," T("a", "2", "activation") ","
	      T("b", "1", "activation") "," T("c", "2", "activation") ","
	      T("d", "2", "activation") "," T("e", "1", "activation") ","
	      T("y", "1", "output"),
	      OP("f0", "\"x\"", "\"a\"", "0.001") ","
	      OP("f1", "\"a\"", "\"b\"", "0.001") ","
	      OP("g", "\"b\"", "\"c\"", "0.002") ","
	      OP("f2", "\"c\"", "\"d\"", "0.001") ","
	      OP("h", "\"d\"", "\"e\"", "0.002") ","
	      OP("f3", "\"a\", \"e\"", "\"y\"", "0.001"));
/* clang-format on */

/* A wait where memory is over the budget. f2 needs b and makes c (4
 * MB), f3 reads a and c and makes y; a is untouched by f2. Under
 * 5.002 MB, a (2 MB) must be off the device while f2 runs, but its store
 * can only start after f1, its last read, at 2 ms, and f2 follows at
 * once: no plan without a stall fits (the old ladder found none at all:
 * the least peak it reached was 6.001 MB). The budget fit makes f2 wait
 * for the store queue: the 1 kB weight w, which f2 reads, stored behind
 * a and fetched back (a 2-4 ms, w 4-4.001 ms, back 4.001-4.002 ms), so
 * f2 runs 4.002-8.002 ms with a gone; a's fetch fits only once f2 has
 * freed b (8.002-10.002 ms), f3 10.002-11.002 ms. Peak at f3: a, c, y
 * and w, 5.001 MB. */
/* clang-format off */
static const char wait_store[] =
	GRAPH("100000000",
	      T("x", "1", "input") ","
	      "{\"id\": \"w\", \"bytes\": 1000, \"kind\": \"weight\"},"
	      T("a", "2", "activation") "," T("b", "2", "activation") ","
	      T("c", "2", "activation") "," T("y", "1", "output"),
	      OP("f0", "\"x\"", "\"a\"", "0.001") ","
	      OP("f1", "\"a\"", "\"b\"", "0.001") ","
	      OP("f2", "\"b\", \"w\"", "\"c\"", "0.004") ","
	      OP("f3", "\"a\", \"c\"", "\"y\"", "0.001"));
/* clang-format on */

/* A swap: one big store fits the budget at once but frees its bytes too
 * late. u1, u2, u3 update the weights W1 (4 MB), W2, W3 (1 MB each); m1
 * to m4 run 1 ms each; z reads H (3 MB, on the host). Under 7.01 MB, H
 * cannot join all three weights. Storing W1 alone fits everywhere (the
 * eviction the budget's first excess asks for), but its store takes 1-5
 * ms and W2's and W3's would queue behind it: H is fetched 5-8 ms and z
 * waits until 8 (9 ms). Without W1's store, W2 (2-3 ms) and W3 (3-4 ms)
 * go, H is fetched 4-7 ms with W1 resident, and nothing stalls: 8 ms,
 * the compute; peak at z: W1, H, c4 and y, 7.002 MB. */
/* clang-format off */
#define TINY(id, kind) "{\"id\": \"" id "\", \"bytes\": 1000, \"kind\": \"" \
	kind "\", \"offload\": false}"
#define UPD(id, w) "{\"id\": \"" id "\", \"updates\": [\"" w "\"], " \
	"\"time_s\": 0.001}"
static const char late_store[] =
	GRAPH("100000000",
	      T("W1", "4", "weight") "," T("W2", "1", "weight") ","
	      T("W3", "1", "weight") ","
	      "{\"id\": \"H\", \"bytes\": 3000000, \"kind\": \"input\", "
	      "\"home\": \"host\"}," TINY("s", "input") ","
	      TINY("c1", "activation") "," TINY("c2", "activation") ","
	      TINY("c3", "activation") "," TINY("c4", "activation") ","
	      TINY("y", "output"),
	      UPD("u1", "W1") "," UPD("u2", "W2") "," UPD("u3", "W3") ","
	      OP("m1", "\"s\"", "\"c1\"", "0.001") ","
	      OP("m2", "\"c1\"", "\"c2\"", "0.001") ","
	      OP("m3", "\"c2\"", "\"c3\"", "0.001") ","
	      OP("m4", "\"c3\"", "\"c4\"", "0.001") ","
	      OP("z", "\"H\", \"c4\"", "\"y\"", "0.001"));
/* clang-format on */

/* (v2) A repeat graph's state goes home as soon as it can, not after the
 * last op. u updates S, v updates W (2 MB each, on the host); m runs
 * between them (1 ms each). Under 4.003 MB both are fetched at once
 * (S 0-2 ms, W 2-4 ms: W's prefetch as early as the budget allows), u
 * 2-3, S stored 3-5 behind m 3-4 and v 4-5, W stored 5-7: 7 ms, the
 * least (W arrives at 4 at the earliest, v ends at 5, its store takes
 * 2). Peak while v runs: S (its store in flight), W, c and y, 4.002 MB.
 * The fit began with the state resident and sent home only after v (S
 * 5-7, W 7-9 ms: 9 ms), the end no move of its own reaches: on
 * llama3-8b-l2-train-in-backward under 98% of greedy's peak it then
 * lost to the none baseline's plan refined (0.323 s against 0.299). */
/* clang-format off */
static const char state_home_early[] =
	"{\"format\": \"hoffopt.graph\", \"version\": 2, \"name\": \"t\", "
	"\"repeat\": true, \"machine\": {\"device\": {\"memory_bytes\": "
	"100000000}, \"tiers\": [{\"name\": \"host\", \"h2d_Bps\": 1e9, "
	"\"d2h_Bps\": 1e9}]}, \"tensors\": ["
	"{\"id\": \"S\", \"bytes\": 2000000, \"kind\": \"optimizer\", "
	"\"home\": \"host\"},"
	"{\"id\": \"W\", \"bytes\": 2000000, \"kind\": \"optimizer\", "
	"\"home\": \"host\"},"
	TINY("x", "input") "," TINY("c", "activation") "," TINY("y", "output")
	"], \"ops\": [" UPD("u", "S") ","
	OP("m", "\"x\"", "\"c\"", "0.001") ","
	"{\"id\": \"v\", \"inputs\": [\"c\"], \"outputs\": [\"y\"], "
	"\"updates\": [\"W\"], \"time_s\": 0.001}]}";
/* clang-format on */

/* A wait that waits for less. a (2 MB, last read by f1) and b (2 MB,
 * last read by f2) are read again by f5; c (4 MB) by f3 and f4, which
 * read the 1 kB weight w. Resident, f3 holds a, b, c, d (10.001 MB with
 * w) and f4 a, b, c, d, e (12.001 MB). Under 8.002 MB f3 needs a away
 * and f4 both a and b; nothing else can leave (no other gap). a's store
 * takes 2-4 ms, so f3 (ready at 3 ms) must wait for it: w stored behind
 * a (4-4.001) and fetched back (4.001-4.002). The fit's first plan also
 * issues b's store (after f2) ahead of that wait, so f3 waits for a, b
 * and w (6.002 ms) and the plan takes 15.002 ms. b's bytes are needed
 * only from f4 on: issued just after the wait, b's store (4.001-6.001)
 * runs behind f3 (4.002-6.002), f4 runs 6.002-8.002 with a and b gone
 * (8.001 MB), then a (8.002-10.002) and b (10.002-12.002) come back,
 * once f4 has freed c and d, and f5 runs 12.002-13.002 ms. Peak 8.002
 * MB, the budget, while f3 waits (3-4 ms): a still leaving, b, c, and w
 * twice (its fetch holds its bytes from its issue). */
/* clang-format off */
static const char wait_less[] =
	GRAPH("100000000",
	      T("x", "1", "input") ","
	      "{\"id\": \"w\", \"bytes\": 1000, \"kind\": \"weight\"},"
	      T("a", "2", "activation") "," T("b", "2", "activation") ","
	      T("c", "4", "activation") "," T("d", "2", "activation") ","
	      T("e", "2", "activation") "," T("y", "1", "output"),
	      OP("f0", "\"x\"", "\"a\"", "0.001") ","
	      OP("f1", "\"a\"", "\"b\"", "0.001") ","
	      OP("f2", "\"b\"", "\"c\"", "0.001") ","
	      OP("f3", "\"c\", \"w\"", "\"d\"", "0.002") ","
	      OP("f4", "\"c\", \"d\", \"w\"", "\"e\"", "0.002") ","
	      OP("f5", "\"a\", \"b\", \"e\"", "\"y\"", "0.001"));
/* clang-format on */

/* The four cases above, by the graph's name: greedy's budget mode
 * gives the same makespan on the first two. */
static struct fit_case fits[] = {
	{"test_fit_short_gap", short_gap, 5 * MB, 5 * MB, 8 * MS,
	 "op f0|op f1|store a host|op g|op f2|prefetch a host|op h|op f3",
	 true},
	{"test_fit_waits_for_stores", wait_store, 5 * MB + 2000, 5 * MB + 1000,
	 11 * MS + 2000000,
	 "op f0|op f1|store a host|store w host|"
	 "prefetch w host|op f2|prefetch a host|op f3",
	 true},
	{"test_fit_swaps_late_store", late_store, 7 * MB + 10000, 7 * MB + 2000,
	 8 * MS,
	 "op u1|op u2|store W2 host|op u3|store W3 host|op m1|"
	 "prefetch H host|op m2|op m3|op m4|op z",
	 false},
	{"test_fit_state_home_early", state_home_early, 4 * MB + 3000,
	 4 * MB + 2000, 7 * MS,
	 "prefetch S host|prefetch W host|op u|store S host|op m|op v|"
	 "store W host",
	 false},
	{"test_fit_waits_for_less", wait_less, 8 * MB + 2000, 8 * MB + 2000,
	 13 * MS + 2000000,
	 "op f0|op f1|store a host|op f2|store w host|"
	 "prefetch w host|store b host|op f3|op f4|"
	 "prefetch a host|prefetch b host|op f5",
	 true},
};

/* Prefetches issued as late as their link allows (issue_late.c), by
 * hand. Ops finish at 1, 2, 5, 6 ms (boundary -1 at 0). On tier 0, A
 * (3 ms) and B (2 ms) issued before op 0, C (1 ms, consumer op 2) after
 * op 0: the channel runs A 0-3, B 3-5, C 5-6. B's start (3) is after op
 * 1 ends (2): boundary 1 would do, but C, issued there too, would then
 * go first (its key is lower), so B gets boundary 0; C's start (5) is
 * after op 2 ends but op 2 is its consumer: boundary 1, its last. D, on
 * tier 1 after op 2, starts at once (5): it stays. With C's key above
 * B's, both share boundary 1. */
static void test_issue_late(void **state)
{
	(void)state;
	const int64_t fin[] = {0, 1 * MS, 2 * MS, 5 * MS, 6 * MS};
	hoff_issue p[] = {
		{.pick = -1,
		 .last = 3,
		 .tier = 0,
		 .fetch_ps = 3 * MS,
		 .key = 10},
		{.pick = -1,
		 .last = 3,
		 .tier = 0,
		 .fetch_ps = 2 * MS,
		 .key = 20},
		{.pick = 0, .last = 1, .tier = 0, .fetch_ps = 1 * MS, .key = 5},
		{.pick = 2, .last = 3, .tier = 1, .fetch_ps = 1 * MS, .key = 1},
	};
	assert_int_equal(hoff_issue_late(fin, 4, p, 4), 2);
	const int32_t want[] = {-1, 0, 1, 2};
	for (int x = 0; x < 4; x++)
		assert_int_equal(p[x].late, want[x]);
	p[2].key = 25;
	assert_int_equal(hoff_issue_late(fin, 4, p, 4), 2);
	const int32_t want2[] = {-1, 1, 1, 2};
	for (int x = 0; x < 4; x++)
		assert_int_equal(p[x].late, want2[x]);
}

/* No dead end: on a 6 MB device, f1's workspace (4 MB) leaves room for
 * a (2 MB, on the host) only away from f1, so every plan stalls past
 * the 1% bound (none's 8 MB does not fit). Greedy still returns a plan
 * that fits the device, flagged infeasible (the bound is not met), and
 * no slower than reactive's: a fetched 0-2 ms, f0 2-3, a detached, f1
 * 3-7, a fetched again 7-9 (f1 holds 6 MB until then), f2 9-10 ms.
 * Reactive also fits (6 MB) but stores y after f2: 11 ms. */
/* clang-format off */
static const char *only_slow_fits =
	GRAPH("6000000",
	      "{\"id\": \"a\", \"bytes\": 2000000, \"kind\": \"input\", "
	      "\"home\": \"host\"}," T("b", "1", "activation") ","
	      T("c", "1", "activation") "," T("y", "1", "output"),
	      OP("f0", "\"a\"", "\"c\"", "0.001") ","
	      "{\"id\": \"f1\", \"inputs\": [\"c\"], \"outputs\": [\"b\"], "
	      "\"time_s\": 0.004, \"workspace_bytes\": 4000000},"
	      OP("f2", "\"a\", \"b\"", "\"y\"", "0.001"));
/* clang-format on */

static void test_no_dead_end(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(only_slow_fits);
	hoff_policy_report rep, rrep;
	hoff_sched *s = plan(g, "reactive", HOFF_NONE, 0.01, &rrep);
	expect_sim(g, s, HOFF_NONE, 6 * MB, 11 * MS, HOFF_NONE, NULL);
	hoff_sched_free(s);
	s = plan(g, "greedy", HOFF_NONE, 0.01, &rep);
	assert_false(rep.feasible);
	/* valid: under the device's 6 MB */
	expect_sim(g, s, HOFF_NONE, 6 * MB, 10 * MS, HOFF_NONE,
		   "prefetch a host|op f0|detach a|op f1|prefetch a host|"
		   "op f2");
	hoff_sched_free(s);
	hoff_graph_free(g);
}

/* The cmocka test of fits[i]: test_fit on it, under its name. */
#define FIT_TEST(i)                                          \
	{                                                    \
		fits[i].name, test_fit, NULL, NULL, &fits[i] \
	}
/* The same report and steps, field by field. */
static void expect_same_plan(const hoff_sched *a, const hoff_policy_report *ra,
			     const hoff_sched *b, const hoff_policy_report *rb)
{
	assert_true(hoff_sched_same_steps(a, b));
	assert_int_equal(ra->feasible, rb->feasible);
	assert_int_equal(ra->peak_bytes, rb->peak_bytes);
	assert_int_equal(ra->makespan_ps, rb->makespan_ps);
	assert_int_equal(ra->iterations, rb->iterations);
	assert_int_equal(ra->none_peak_bytes, rb->none_peak_bytes);
	assert_int_equal(ra->least_peak_bytes, rb->least_peak_bytes);
	assert_string_equal(ra->least_source, rb->least_source);
	assert_string_equal(ra->source, rb->source);
}

/* cmd_plan's fit under the device after an overhead-mode run over it
 * (test_cli's test_plan_falls_back_to_device graph), with the
 * baselines' plans kept from the first run in a memo: the memo records all
 * four, the second run takes all four, and both runs give what they give
 * without it. */
static void test_memo_same_plans(void **state)
{
	(void)state;
	hoff_synth_opts so = hoff_synth_defaults();
	so.nops = 300;
	so.shape = HOFF_SYNTH_TRAIN;
	so.weights_on_host = true;
	so.layers = 4;
	so.memory_bytes = (int64_t)3 << 30;
	hoff_graph *g = tu_synth(&so);
	hoff_greedy_memo *m = hoff_greedy_memo_new();
	assert_non_null(m);
	hoff_policy_opts o = hoff_policy_defaults();
	hoff_policy_report r0, r1, f0, f1;
	hoff_sched *s0 = tu_run(g, &o, &r0);
	o.memo = m;
	hoff_sched *s1 = tu_run(g, &o, &r1);
	expect_same_plan(s0, &r0, s1, &r1);
	assert_true(r1.peak_bytes > g->device.memory_bytes);
	assert_int_equal(hoff_greedy_memo_plans(m), 4);
	o.budget_bytes = g->device.memory_bytes;
	hoff_sched *t1 = tu_run(g, &o, &f1);
	assert_int_equal(hoff_greedy_memo_plans(m), 0); /* all taken */
	o.memo = NULL;
	hoff_sched *t0 = tu_run(g, &o, &f0);
	expect_same_plan(t0, &f0, t1, &f1);
	assert_true(f1.feasible);
	assert_true(f1.peak_bytes <= g->device.memory_bytes);
	/* A memo of another graph is left alone. */
	hoff_greedy_memo *m2 = hoff_greedy_memo_new();
	assert_non_null(m2);
	hoff_graph *h = tu_graph(only_slow_fits);
	hoff_policy_report rh, r2;
	o = hoff_policy_defaults();
	o.memo = m2;
	hoff_sched *u = tu_run(h, &o, &rh);
	assert_int_equal(hoff_greedy_memo_plans(m2), 4);
	hoff_sched_free(u);
	u = tu_run(g, &o, &r2);
	assert_int_equal(hoff_greedy_memo_plans(m2), 4);
	expect_same_plan(s0, &r0, u, &r2);
	hoff_sched_free(u);
	hoff_graph_free(h);
	hoff_greedy_memo_free(m2);
	hoff_greedy_memo_free(m);
	hoff_sched_free(s0);
	hoff_sched_free(s1);
	hoff_sched_free(t0);
	hoff_sched_free(t1);
	hoff_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stash_hidden),
		cmocka_unit_test(test_budget_exact),
		cmocka_unit_test(test_budget_infeasible),
		cmocka_unit_test(test_weight_not_hidden),
		cmocka_unit_test(test_floor),
		cmocka_unit_test(test_no_ops),
		cmocka_unit_test(test_one_op_no_candidates),
		cmocka_unit_test(test_peak_to_beat),
		cmocka_unit_test(test_repeat_state_home),
		cmocka_unit_test(test_duplex_arithmetic),
		cmocka_unit_test(test_duplex_placement),
		cmocka_unit_test(test_two_prefetches_compete),
		cmocka_unit_test(test_overhead_saturates),
		cmocka_unit_test(test_refine_store_after_write),
		cmocka_unit_test(test_refine_late_prefetch),
		cmocka_unit_test(test_refine_stream),
		cmocka_unit_test(test_data_witness),
		cmocka_unit_test(test_data_repeat),
		cmocka_unit_test(test_op_layer),
		cmocka_unit_test(test_never_worse),
		cmocka_unit_test(test_never_worse_repeat),
		cmocka_unit_test(test_bound_of_overhead),
		cmocka_unit_test(test_prefill_at_reactive),
		cmocka_unit_test(test_at_baseline_overhead),
		cmocka_unit_test(test_threads_agree),
		/* budget fit and no dead end (issue 33) */
		FIT_TEST(0),
		FIT_TEST(1),
		FIT_TEST(2),
		FIT_TEST(3),
		FIT_TEST(4),
		cmocka_unit_test(test_issue_late),
		cmocka_unit_test(test_no_dead_end),
		cmocka_unit_test(test_memo_same_plans),
	};
	/* TG_FILTER=test_name runs one test (timing one under the
	 * sanitizers) */
	if (getenv("TG_FILTER"))
		cmocka_set_test_filter(getenv("TG_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
