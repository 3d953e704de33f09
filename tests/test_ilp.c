/* test_ilp.c: the exact scheduler (solver/ilp.h) — its candidate
 * intervals, its decisions written as schedules, hand-checked optima,
 * the ILP's optimum against a brute force over every legal schedule of
 * seeded random tiny graphs, never worse than greedy, the LP/MPS export,
 * and CBC finding the same optimum as GLPK (skipped without `cbc`).
 * The exact pipeline on data/ graphs and its peak search: test_exact.c.
 * Machine of the hand cases: one tier "host" at 1e9 B/s each way, no
 * latency, so 1 MB moves in exactly 1 ms; ops take whole ms. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/wait.h>

#include <glpk.h>

#include "analysis.h"
#include "exact_util.h"
#include "ilp.h"
#include "models.h"
#include "policy.h"
#include "testutil.h"

#include "bruteforce.c"

#define HOST "{\"name\": \"host\", \"h2d_Bps\": 1e9, \"d2h_Bps\": 1e9}"
#define GRAPH(mem, tensors, ops)                                               \
	"{\"format\": \"hoffopt.graph\", \"version\": 1, \"name\": \"t\", "    \
	"\"machine\": {\"device\": {\"memory_bytes\": " mem "}, \"tiers\": ["  \
	HOST "]}, \"tensors\": [" tensors "], \"ops\": [" ops "]}"

/* ---------------------------------------------------------------------
 * Hand cases.
 */

/* w (4 MB, host) is read by op0 and op3; a (1 MB) flows op0 -> op3.
 * Intervals: w START (-1, 0), w CLEAN (0, 3) by detach, a DIRTY (0, 3)
 * by store; op3 is the last op, so w has no tail; b (op1 -> op2) has no
 * gap. c is 1 MB in g_hand, c_bytes in HAND_GRAPH. */
#define HAND_GRAPH(c_bytes)                                                        \
	GRAPH("100000000",                                                         \
	      "{\"id\": \"w\", \"bytes\": 4000000, \"kind\": \"weight\", "         \
	      "\"home\": \"host\"},"                                               \
	      "{\"id\": \"a\", \"bytes\": 1000000, \"kind\": \"activation\"},"     \
	      "{\"id\": \"b\", \"bytes\": 1000000, \"kind\": \"activation\"},"     \
	      "{\"id\": \"c\", \"bytes\": " c_bytes ", \"kind\": "                 \
	      "\"activation\"},"                                                   \
	      "{\"id\": \"y\", \"bytes\": 1000000, \"kind\": \"output\"}",         \
	      "{\"id\": \"op0\", \"inputs\": [\"w\"], \"outputs\": [\"a\"], "      \
	      "\"time_s\": 0.004},"                                                \
	      "{\"id\": \"op1\", \"inputs\": [], \"outputs\": [\"b\"], "           \
	      "\"time_s\": 0.004},"                                                \
	      "{\"id\": \"op2\", \"inputs\": [\"b\"], \"outputs\": [\"c\"], "      \
	      "\"time_s\": 0.004},"                                                \
	      "{\"id\": \"op3\", \"inputs\": [\"a\", \"w\", \"c\"], \"outputs\": " \
	      "[\"y\"], \"time_s\": 0.004}")
static const char *g_hand = HAND_GRAPH("1000000");

/* m solved (no start) into *sol (caller frees sol->x), which must be
 * optimal; returns its objective in the problem's units. */
static double solve_optimal(const hoff_ilp *m, hoff_ilp_sol *sol)
{
	hoff_err e;
	assert_int_equal(hoff_ilp_solve(m, NULL, sol, &e), HOFF_OK);
	assert_int_equal(sol->status, HOFF_ILP_OPTIMAL);
	return hoff_ilp_objective_value(m, sol->obj);
}

/* exact_report on the graph text json under budget bytes. */
static hoff_exact_report budget_report(const char *json, int64_t budget)
{
	hoff_graph *g = tu_graph(json);
	hoff_ilp_opts o = opts_budget(budget);
	hoff_exact_report rep = exact_report(g, &o);
	hoff_graph_free(g);
	return rep;
}

/* rep is a proven optimum: stall_ps of stall, a makespan of
 * makespan_ps, a peak within budget bytes. */
static void expect_optimal(const hoff_exact_report *rep, int64_t stall_ps,
			   int64_t makespan_ps, int64_t budget)
{
	assert_true(rep->feasible);
	assert_int_equal(rep->status, HOFF_ILP_OPTIMAL);
	assert_int_equal(rep->best.stall_ps, stall_ps);
	assert_int_equal(rep->best.makespan_ps, makespan_ps);
	assert_true(rep->best.peak_bytes <= budget);
}

static void test_intervals(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(g_hand);
	hoff_ilp_iv *iv;
	int32_t n;
	hoff_err e;
	assert_int_equal(hoff_ilp_intervals(g, false, &iv, &n, &e), HOFF_OK);
	int32_t w = hoff_graph_find_tensor(g, "w");
	int32_t a = hoff_graph_find_tensor(g, "a");
	int found = 0;
	for (int32_t i = 0; i < n; i++) {
		const hoff_ilp_iv *v = &iv[i];
		if (v->c.t == w && v->c.kind == HOFF_CAND_START) {
			assert_int_equal(v->c.a, -1);
			assert_int_equal(v->c.b, 0);
			assert_int_equal(v->c.fetch_ps, 4 * MS);
			found |= 1;
		} else if (v->c.t == w && v->c.b == 3) {
			assert_int_equal(v->c.kind, HOFF_CAND_CLEAN);
			assert_int_equal(v->c.a, 0);
			assert_int_equal(v->lo, 1);
			found |= 2;
		} else if (v->c.t == a) {
			assert_int_equal(v->c.kind, HOFF_CAND_DIRTY);
			assert_int_equal(v->c.a, 0);
			assert_int_equal(v->c.b, 3);
			assert_int_equal(v->c.store_ps, 1 * MS);
			found |= 8;
		}
	}
	assert_int_equal(found, 11);
	assert_int_equal(n, 3);
	free(iv);
	hoff_graph_free(g);
}

/* The hand graph under a 6 MB budget. Nothing offloaded peaks at
 * w 4 + a 1 + b 1 + c 1 (+ y 1 during op3) = 8 MB. During op3, w, a, c
 * and y are needed: 7 MB > 6: infeasible at any schedule. */
static void test_hand_infeasible(void **state)
{
	(void)state;
	hoff_exact_report rep = budget_report(g_hand, 6 * MB);
	assert_false(rep.feasible);
	assert_int_equal(rep.status, HOFF_ILP_INFEASIBLE);
}

/* Budget 7 MB. w must be fetched before op0: 4 ms of stall at least
 * (nothing runs before op0). During op1 (a 1, w 4, b 1) and op2 (a, w,
 * b, c: 7) it fits; op3 needs w a c y = 7. So 7 MB needs only the
 * initial 4 ms fetch: stall 4 ms, makespan 20 ms. */
static void test_hand_budget7(void **state)
{
	(void)state;
	hoff_exact_report rep = budget_report(g_hand, 7 * MB);
	expect_optimal(&rep, 4 * MS, 20 * MS, 7 * MB);
	assert_true(fabs(rep.objective - 0.004) < 1e-9);
}

/* Budget 6.5 MB would be infeasible (7 at op3); take 7 MB but make op2
 * bigger: c is 2 MB. During op2: a 1 + w 4 + b 1 + c 2 = 8 > 7, so w
 * (detached after op0, free) or a (stored 1 ms) must be off during op2
 * and back for op3 (w: 4 ms fetch; a: 1 ms). Best: store a after op0
 * (done by 5 ms, during op1), fetch it back after op2 starts... it can
 * only be issued at a boundary: after op1 (8 ms) it would be on the
 * device during op2; after op2 (12 ms) it arrives at 13 ms: 1 ms stall.
 * Detaching w instead costs a 4 ms fetch after op2: worse. Total stall
 * 4 (initial) + 1 = 5 ms. */
static void test_hand_budget_store(void **state)
{
	(void)state;
	/* op3 needs w a c y = 8 */
	hoff_exact_report rep = budget_report(HAND_GRAPH("2000000"), 8 * MB);
	assert_true(rep.feasible);
	assert_int_equal(rep.status, HOFF_ILP_OPTIMAL);
	/* op2 holds a w b c = 8 <= 8: no offload needed beyond w's fetch */
	assert_int_equal(rep.best.stall_ps, 4 * MS);
	rep = budget_report(HAND_GRAPH("2000000"), 8 * MB - 1);
	/* now op3 (8 MB) cannot fit: infeasible */
	assert_false(rep.feasible);
}

/* Store time (rule 8 of solver/README.md). a (2 MB) flows op0 -> op3;
 * b (1 MB) op1 -> op2; c (3 MB) op2 -> op3; y (0.5 MB) is op3's output.
 * Nothing offloaded, op2 holds a b c = 6 MB, op3 a c y = 5.5 MB. Under a
 * 5.5 MB budget a must be off during op2: its store (2 ms, issued after
 * op0) done by op2's start, with only op1 in between and nothing that
 * can stall there (op1 and op2 have no offloaded inputs). With op1 at
 * 2 ms it just fits: then a is fetched back after op2 (2 ms that op3
 * waits for): stall 2 ms. With op1 at 1 ms no schedule fits, and the
 * rows (8) already make the LP relaxation infeasible: its one row is
 * 1 ms * Q <= 0 for a's store complete at op2's start. Without it the
 * LP would take Q = 1/4 (the store half done, by the channel rows). */
static char *g_store_time(int op1_ms)
{
	char *s = malloc(2048);
	assert_non_null(s);
	snprintf(s, 2048, GRAPH(
		"100000000",
		"{\"id\": \"a\", \"bytes\": 2000000, \"kind\": \"activation\"},"
		"{\"id\": \"b\", \"bytes\": 1000000, \"kind\": \"activation\"},"
		"{\"id\": \"c\", \"bytes\": 3000000, \"kind\": \"activation\"},"
		"{\"id\": \"y\", \"bytes\": 500000, \"kind\": \"output\"}",
		"{\"id\": \"op0\", \"inputs\": [], \"outputs\": [\"a\"], "
		"\"time_s\": 0.004},"
		"{\"id\": \"op1\", \"inputs\": [], \"outputs\": [\"b\"], "
		"\"time_s\": 0.00%d},"
		"{\"id\": \"op2\", \"inputs\": [\"b\"], \"outputs\": [\"c\"], "
		"\"time_s\": 0.001},"
		"{\"id\": \"op3\", \"inputs\": [\"a\", \"c\"], \"outputs\": "
		"[\"y\"], \"time_s\": 0.004}"), op1_ms);
	return s;
}

static void test_hand_store_time(void **state)
{
	(void)state;
	hoff_ilp_opts o = opts_budget(5500000);
	hoff_err e;
	for (int op1_ms = 1; op1_ms <= 2; op1_ms++) {
		char *src = g_store_time(op1_ms);
		hoff_graph *g = tu_graph(src);
		free(src);
		hoff_ilp *m = NULL;
		assert_int_equal(hoff_ilp_build(g, &o, NULL, &m, &e), HOFF_OK);
		assert_false(m->infeasible);
		int32_t nd = 0;
		for (int32_t i = 1; i <= m->nrows; i++) {
			if (m->rtag[i] != 'D')
				continue;
			nd++;
			assert_int_equal(m->roff[i + 1] - m->roff[i], 1);
			int64_t j = m->roff[i];
			assert_int_equal(m->ctag[m->rcol[j]], 'Q');
			assert_true(fabs(m->rval[j] * m->tu - 1.0 * MS) < 1);
			assert_true(m->rrhs[i] == 0);
		}
		assert_int_equal(nd, op1_ms == 1 ? 1 : 0);
		double bound;
		bool ok;
		assert_int_equal(hoff_ilp_lp_bound(m, 10, &bound, &ok, &e),
				 HOFF_OK);
		assert_true(ok == (op1_ms == 2));
		hoff_ilp_free(m);
		hoff_exact_report rep = exact_report(g, &o);
		if (op1_ms == 1) {
			assert_false(rep.feasible);
			assert_int_equal(rep.status, HOFF_ILP_INFEASIBLE);
		} else {
			expect_optimal(&rep, 2 * MS, 13 * MS, 5500000);
		}
		hoff_graph_free(g);
	}
}

/* Fetch time (rule 9 of solver/README.md). w (3 MB, homed on host)
 * is read by op1 and op4; x, a, b, c (1, 1, 2, 0.5 MB) each live for
 * two ops and never move. Nothing offloaded, op2 holds w a b = 6 MB and
 * op3 w b c = 5.5 MB. Under a 5.5 MB budget w is off during op2: dropped
 * after op1 (a free detach), fetched back at boundary 2 or 3 (its only
 * choices after touch 1), 3 ms of fetch with at most op3's 1 ms before
 * op4: stall 2 ms, makespan 19 ms. The LP relaxation needs only a sixth
 * of w off (0.5 MB): with sel = 1/6 the channel rows alone fit that
 * fetch in op3 with no stall. Rule 9's rows, lack * (sel - R(p-1)) <=
 * s_4 with lack 2 ms at p = 2 and 3 ms at p = 3, raise it to
 * 2 ms * 1/6 = 1/3 ms. */
static void test_hand_fetch_time(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(GRAPH(
		"100000000",
		"{\"id\": \"w\", \"bytes\": 3000000, \"kind\": \"weight\", "
		"\"home\": \"host\"},"
		"{\"id\": \"x\", \"bytes\": 1000000, \"kind\": \"activation\"},"
		"{\"id\": \"a\", \"bytes\": 1000000, \"kind\": \"activation\"},"
		"{\"id\": \"b\", \"bytes\": 2000000, \"kind\": \"activation\"},"
		"{\"id\": \"c\", \"bytes\": 500000, \"kind\": \"activation\"},"
		"{\"id\": \"y\", \"bytes\": 1000000, \"kind\": \"output\"}",
		"{\"id\": \"op0\", \"inputs\": [], \"outputs\": [\"x\"], "
		"\"time_s\": 0.004},"
		"{\"id\": \"op1\", \"inputs\": [\"w\", \"x\"], \"outputs\": "
		"[\"a\"], \"time_s\": 0.004},"
		"{\"id\": \"op2\", \"inputs\": [\"a\"], \"outputs\": [\"b\"], "
		"\"time_s\": 0.004},"
		"{\"id\": \"op3\", \"inputs\": [\"b\"], \"outputs\": [\"c\"], "
		"\"time_s\": 0.001},"
		"{\"id\": \"op4\", \"inputs\": [\"w\", \"c\"], \"outputs\": "
		"[\"y\"], \"time_s\": 0.004}"));
	hoff_ilp_opts o = opts_budget(5500000);
	o.prune = false;
	hoff_err e;
	hoff_ilp *m = NULL;
	assert_int_equal(hoff_ilp_build(g, &o, NULL, &m, &e), HOFF_OK);
	int32_t ng = 0;
	for (int32_t i = 1; i <= m->nrows; i++) {
		if (m->rtag[i] != 'G' || m->iv[m->rarg[i]].c.b != 4)
			continue;
		/* the rows of w's interval: sel (zd), R(p - 1) for p = 3,
		 * and s_4 */
		double lack = 0;
		for (int64_t j = m->roff[i]; j < m->roff[i + 1]; j++)
			if (m->ctag[m->rcol[j]] == 'Z')
				lack = m->rval[j] * m->tu;
		assert_true(fabs(lack - 2.0 * MS) < 1 ||
			    fabs(lack - 3.0 * MS) < 1);
		assert_true(m->rrhs[i] == 0);
		ng++;
	}
	assert_int_equal(ng, 2);
	double bound;
	bool ok;
	assert_int_equal(hoff_ilp_lp_bound(m, 10, &bound, &ok, &e), HOFF_OK);
	assert_true(ok);
	assert_true(fabs(bound * m->tu - MS / 3.0) < 1e3);
	hoff_ilp_free(m);
	hoff_exact_report rep = exact_report(g, &o);
	expect_optimal(&rep, 2 * MS, 19 * MS, 5500000);
	hoff_graph_free(g);
}

/* Overhead mode, by hand. a (2 MB) flows op0 -> op3; b (2 MB) op1 ->
 * op2; c (1 MB) op2 -> op3; y (1 MB) is op3's output; ops take 4 ms.
 * Nothing offloaded: op1 holds a b = 4, op2 a b c = 5, op3 a c y = 4:
 * peak 5 MB, makespan 16 ms = the lower bound. Only a has a gap; it
 * lowers op2 only when absent then, i.e. fetched back after op2: a 2 ms
 * fetch that op3 waits for (makespan 18 ms). Its store (2 ms, issued
 * after op0) is done by op2's start (6 < 8 ms). So the least peak is
 * 4 MB (op1, op3) when 2 ms of stall are allowed (X >= 12.5%), else
 * 5 MB. Every size is a multiple of 1 MB, so the search proves both to
 * the byte: status optimal, bound = objective, gap 0. */
static const char *g_peak = GRAPH(
	"100000000",
	"{\"id\": \"a\", \"bytes\": 2000000, \"kind\": \"activation\"},"
	"{\"id\": \"b\", \"bytes\": 2000000, \"kind\": \"activation\"},"
	"{\"id\": \"c\", \"bytes\": 1000000, \"kind\": \"activation\"},"
	"{\"id\": \"y\", \"bytes\": 1000000, \"kind\": \"output\"}",
	"{\"id\": \"op0\", \"inputs\": [], \"outputs\": [\"a\"], "
	"\"time_s\": 0.004},"
	"{\"id\": \"op1\", \"inputs\": [], \"outputs\": [\"b\"], "
	"\"time_s\": 0.004},"
	"{\"id\": \"op2\", \"inputs\": [\"b\"], \"outputs\": [\"c\"], "
	"\"time_s\": 0.004},"
	"{\"id\": \"op3\", \"inputs\": [\"a\", \"c\"], \"outputs\": "
	"[\"y\"], \"time_s\": 0.004}");

static void test_hand_overhead(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(g_peak);
	static const struct {
		double x;
		int64_t peak, makespan;
	} cases[] = {{0.125, 4 * MB, 18 * MS},
		     {0.5, 4 * MB, 18 * MS},
		     {0.1, 5 * MB, 16 * MS},
		     {0, 5 * MB, 16 * MS}};
	/* each case also the min-peak model solved with GLPK's MIR cuts off
	 * (the bound phase's retry): the same proven optimum */
	for (size_t i = 0; i < 2 * sizeof cases / sizeof cases[0]; i++) {
		hoff_ilp_opts o = opts_overhead(cases[i / 2].x);
		if (i % 2) {
			hoff_ilp_req rq = hoff_ilp_request(&o);
			rq.no_mir = true;
			hoff_ilp *m = NULL;
			hoff_err e;
			assert_int_equal(hoff_ilp_build(g, &o, &rq, &m, &e),
					 HOFF_OK);
			hoff_ilp_sol sol;
			assert_int_equal(llround(solve_optimal(m, &sol)),
					 cases[i / 2].peak);
			free(sol.x);
			hoff_ilp_free(m);
			continue;
		}
		hoff_exact_report rep = exact_report(g, &o);
		assert_int_equal(rep.lower_bound_ps, 16 * MS);
		assert_true(rep.feasible);
		assert_int_equal(rep.status, HOFF_ILP_OPTIMAL);
		assert_true(rep.has_objective && rep.has_bound && rep.has_gap);
		assert_true(rep.objective == (double)cases[i / 2].peak);
		assert_true(rep.bound == rep.objective);
		assert_true(rep.gap == 0);
		assert_int_equal(rep.best.peak_bytes, cases[i / 2].peak);
		assert_int_equal(rep.best.makespan_ps, cases[i / 2].makespan);
	}
	hoff_graph_free(g);
}

/* test_hand_deadlines' expert chain: e1, e2 (10 MB on the host, 10 ms
 * fetches) read by op1 and op2, v (30 MB on the device) and the input in
 * read by op0; extra: more tensors (each with a trailing comma), read by
 * op0 and op2 when listed in more (", \"w\"" and so on). */
#define CHAIN_GRAPH(extra, more)                                              \
	GRAPH("1000000000",                                                    \
	      "{\"id\": \"e1\", \"bytes\": 10000000, \"kind\": \"weight\", "    \
	      "\"home\": \"host\"},"                                              \
	      "{\"id\": \"e2\", \"bytes\": 10000000, \"kind\": \"weight\", "    \
	      "\"home\": \"host\"},"                                              \
	      "{\"id\": \"v\", \"bytes\": 30000000, \"kind\": \"weight\"}," extra \
	      "{\"id\": \"in\", \"bytes\": 20000000, \"kind\": \"input\"},"       \
	      "{\"id\": \"x\", \"bytes\": 1000000, \"kind\": \"activation\"},"    \
	      "{\"id\": \"a\", \"bytes\": 1000000, \"kind\": \"activation\"},"    \
	      "{\"id\": \"y\", \"bytes\": 1000000, \"kind\": \"output\"}",        \
	      "{\"id\": \"op0\", \"inputs\": [\"in\", \"v\"" more "], "             \
	      "\"outputs\": [\"x\"], \"time_s\": 0.001},"                           \
	      "{\"id\": \"op1\", \"inputs\": [\"e1\", \"x\"], \"outputs\": "        \
	      "[\"a\"], \"time_s\": 0.0001},"                                       \
	      "{\"id\": \"op2\", \"inputs\": [\"e2\", \"a\"" more "], "             \
	      "\"outputs\": [\"y\"], \"time_s\": 0.0001}")

/* Crowded channels (12), by hand, on test_hand_deadlines' expert chain
 * with two device weights read by op0 and op2: w (1 MB, a 1 ms fetch)
 * and k (100 KB, 0.1 ms). By op2's start the h2d channel has had at most
 * op0 + op1 + S = 20.201 ms, and e1 and e2 take 20 ms of it: 0.201 ms
 * are left, so w's fetch back before op2 cannot fit and its interval
 * (stored after op0) is dropped; k's fits and stays. Without pruning
 * both stay. The optimum is the same either way (61 MB + w + k, at op0's
 * start). */
static void test_hand_crowded(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(CHAIN_GRAPH(
		"{\"id\": \"w\", \"bytes\": 1000000, \"kind\": \"weight\"},"
		"{\"id\": \"k\", \"bytes\": 100000, \"kind\": \"weight\"},",
		", \"w\", \"k\""));
	for (int prune = 0; prune < 2; prune++) {
		hoff_ilp_opts o = opts_overhead(0.01);
		o.prune = prune;
		hoff_err e;
		hoff_ilp *m = NULL;
		assert_int_equal(hoff_ilp_build(g, &o, NULL, &m, &e), HOFF_OK);
		int32_t wback = 0, kback = 0;
		for (int32_t i = 0; i < m->niv; i++) {
			const hoff_ilp_iv *v = &m->iv[i];
			const char *id = g->tensor[v->c.t].id;
			if (v->c.a == 0 && v->c.b == 2) {
				wback += strcmp(id, "w") == 0;
				kback += strcmp(id, "k") == 0;
			}
		}
		assert_int_equal(wback, !prune);
		assert_int_equal(kback, 1);
		hoff_ilp_free(m);
		hoff_exact_report rep = exact_report(g, &o);
		assert_true(rep.feasible);
		assert_int_equal(rep.status, HOFF_ILP_OPTIMAL);
		assert_int_equal(rep.best.peak_bytes, 61 * MB + 1100000);
	}
	hoff_graph_free(g);
}

/* Issue deadlines (10) and slow stores (11), by hand, on an expert chain
 * like deepseek-v3-decode-4l's. e1 and e2 (10 MB each, on the host) take
 * 10 ms each to fetch; op1 uses e1, op2 e2. op0 (1 ms) reads the input
 * in (20 MB, freed at op0's end) and writes x (1 MB); v (30 MB, a weight
 * on the device) is read by op0 and could only leave by a 30 ms store.
 * The lower bound is 20.1 ms (both fetches, then op2), so with X = 1%
 * the stall is at most S = 20.301 - 1.2 = 19.101 ms. Fetches issued
 * after op0 get op1's 0.1 ms and S: 19.201 ms for 20 ms of work, so one
 * is issued at time 0, while in is on the device: the least peak is
 * in + x + v + one expert = 61 MB, at op0's start (e2 can wait for e1's
 * detach after op1: its fetch ends at 20.1 ms, the makespan 20.2 ms).
 * Without the rows (10) the relaxation issues 8% of the experts at time
 * 0 (0.8 ms of fetch in op0, the rest fits after) and its peak is 51.8
 * MB. v's store cannot be done within 1.2 ms of ops and S (11). */
static void test_hand_deadlines(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(CHAIN_GRAPH("", ""));
	hoff_ilp_opts o = opts_overhead(0.01);
	o.prune = false;
	hoff_err e;
	hoff_ilp *m = NULL;
	assert_int_equal(hoff_ilp_build(g, &o, NULL, &m, &e), HOFF_OK);
	assert_int_equal(m->bound_ps - m->compute_ps, 19101 * MS / 1000);
	/* (10): R_e1(q) + R_e2(q) >= 1 at q = 0 and q = -1 */
	int32_t ni = 0;
	for (int32_t i = 1; i <= m->nrows; i++) {
		if (m->rtag[i] != 'I')
			continue;
		assert_int_equal(m->rarg[i], 2);
		assert_int_equal(m->rtype[i], HOFF_ILP_GE);
		assert_true(m->rrhs[i] == 1);
		assert_int_equal(m->roff[i + 1] - m->roff[i], 2);
		for (int64_t j = m->roff[i]; j < m->roff[i + 1]; j++) {
			int32_t c = m->rcol[j];
			assert_int_equal(m->ctag[c], 'R');
			assert_int_equal(m->carg1[c], 0 - ni);
			assert_true(m->rval[j] == 1);
		}
		ni++;
	}
	assert_int_equal(ni, 2);
	/* (11): v's tail store has no Q that can be 1 */
	int32_t nq = 0;
	for (int32_t j = 1; j <= m->ncols; j++) {
		if (m->ctag[j] != 'Q')
			continue;
		const hoff_ilp_iv *v = &m->iv[m->carg0[j]];
		if (strcmp(g->tensor[v->c.t].id, "v") == 0) {
			assert_true(m->cub[j] == 0);
			nq++;
		}
	}
	assert_true(nq > 0);
	double bound;
	bool ok;
	assert_int_equal(hoff_ilp_lp_bound(m, 10, &bound, &ok, &e), HOFF_OK);
	assert_true(ok);
	print_message("bound %.6f MB\n", bound * m->bu / MB);
	assert_true(fabs(bound * m->bu - 61.0 * MB) < 1);
	hoff_ilp_free(m);
	hoff_exact_report rep = exact_report(g, &o);
	assert_true(rep.feasible);
	assert_int_equal(rep.status, HOFF_ILP_OPTIMAL);
	assert_int_equal(rep.best.peak_bytes, 61 * MB);
	assert_true(rep.bound == rep.objective);
	assert_true(rep.best.makespan_ps <= 20301 * MS / 1000);
	hoff_graph_free(g);
}

/* ---------------------------------------------------------------------
 * Seeded random tiny graphs against the brute force.
 */

typedef struct rng {
	uint64_t s;
} rng;

static uint32_t rnd(rng *r, uint32_t n)
{
	r->s = r->s * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)((r->s >> 33) % n);
}

/* A tiny random graph: n ops in a chain of activations with some skip
 * connections, one or two weights (homed on the host or the device),
 * sometimes a KV-like tensor updated in place. Sizes in MB, times in ms,
 * so the machine model's integers are easy to follow. */
static char *random_graph(uint64_t seed)
{
	rng r = {seed * 2654435761ULL + 1};
	int n = 3 + (int)rnd(&r, 4); /* 3..6 ops */
	size_t cap = 1 << 14, len = 0;
	char *buf = malloc(cap);
#define OUT(...) len += (size_t)snprintf(buf + len, cap - len, __VA_ARGS__)
	double d2h = rnd(&r, 2) ? 1e9 : 2e9;
	OUT("{\"format\": \"hoffopt.graph\", \"version\": 1, \"name\": "
	    "\"r%llu\", \"machine\": {\"device\": {\"memory_bytes\": "
	    "1000000000}, \"tiers\": [{\"name\": \"host\", \"h2d_Bps\": 1e9, "
	    "\"d2h_Bps\": %g}]}, \"tensors\": [",
	    (unsigned long long)seed, d2h);
	int nw = 1 + (int)rnd(&r, 3);
	bool kv = rnd(&r, 3) == 0;
	int wuse[3][2];
	for (int i = 0; i < nw; i++) {
		bool host = rnd(&r, 3) != 0;
		OUT("{\"id\": \"w%d\", \"bytes\": %d000000, \"kind\": "
		    "\"weight\"%s},",
		    i, 1 + (int)rnd(&r, 3), host ? ", \"home\": \"host\"" : "");
		wuse[i][0] = (int)rnd(&r, (uint32_t)n);
		wuse[i][1] = rnd(&r, 2) ? (int)rnd(&r, (uint32_t)n) : -1;
	}
	if (kv)
		OUT("{\"id\": \"kv\", \"bytes\": %d000000, \"kind\": \"kv\"},",
		    1 + (int)rnd(&r, 2));
	int skip_from = rnd(&r, 2) ? (int)rnd(&r, (uint32_t)(n - 2)) : -1;
	for (int k = 0; k < n; k++)
		OUT("{\"id\": \"a%d\", \"bytes\": %d000000, \"kind\": \"%s\"}%s",
		    k, 1 + (int)rnd(&r, 2),
		    k == n - 1 ? "output" : "activation", k == n - 1 ? "" : ",");
	OUT("], \"ops\": [");
	int kvop = kv ? (int)rnd(&r, (uint32_t)n) : -1;
	for (int k = 0; k < n; k++) {
		OUT("{\"id\": \"op%d\", \"time_s\": 0.00%d, \"inputs\": [", k,
		    1 + (int)rnd(&r, 3));
		bool first = true;
		if (k > 0) {
			OUT("\"a%d\"", k - 1);
			first = false;
		}
		if (k == n - 1 && skip_from >= 0 && skip_from < k - 1) {
			OUT("%s\"a%d\"", first ? "" : ", ", skip_from);
			first = false;
		}
		for (int i = 0; i < nw; i++)
			if (wuse[i][0] == k || wuse[i][1] == k) {
				OUT("%s\"w%d\"", first ? "" : ", ", i);
				first = false;
			}
		OUT("], \"outputs\": [\"a%d\"]", k);
		if (kv && (k == kvop || k == n - 1))
			OUT(", \"updates\": [\"kv\"]");
		OUT("}%s", k == n - 1 ? "" : ",");
	}
	OUT("]}");
#undef OUT
	return buf;
}

/* Seed's random graph (random_graph), parsed (caller frees). With
 * HOFF_BF_DUMP set its text is also written to /tmp/bf_r<seed>.json. */
static hoff_graph *random_g(uint64_t seed)
{
	char *text = random_graph(seed);
	if (getenv("HOFF_BF_DUMP")) {
		char path[64];
		snprintf(path, sizeof path, "/tmp/bf_r%llu.json",
			 (unsigned long long)seed);
		FILE *f = fopen(path, "w");
		if (f) {
			fputs(text, f);
			fclose(f);
		}
	}
	hoff_graph *g = tu_graph(text);
	free(text);
	return g;
}

/* random_g, or NULL (nothing to free) when g has over 20000 legal
 * schedules, too many for the brute force. */
static hoff_graph *small_random(uint64_t seed)
{
	hoff_graph *g = random_g(seed);
	if (bf_count(g, 20000) > 20000) {
		hoff_graph_free(g);
		return NULL;
	}
	return g;
}

/* Objective of a summary: stall ps or peak bytes. */
static double obj_of(bool budget_mode, const hoff_summary *s)
{
	return budget_mode ? (double)s->stall_ps : (double)s->peak_bytes;
}

typedef struct tally {
	int graphs, equal, worse, better, infeasible_both, mismatch_feas;
	int relax_bad;
	int probes_cut; /* overhead mode: probes the root's cuts answered */
} tally;

static void compare_one(hoff_graph *g, bool budget_mode, int64_t budget,
			double x, tally *t, bool verbose)
{
	bf_result bf;
	bf_solve(g, budget_mode ? budget : HOFF_NONE, x, &bf);
	hoff_ilp_opts o = budget_mode ? opts_budget(budget) : opts_overhead(x);
	hoff_exact_report rep;
	hoff_sched *s = run_exact(g, &o, &rep);
	t->probes_cut += rep.probes_cut;
	t->graphs++;
	/* what exact returns is never worse than greedy's */
	if (rep.greedy_feasible)
		assert_true(rep.feasible);
	if (!bf.found) {
		/* no schedule in the decision space meets the constraint */
		assert_false(rep.feasible && rep.has_decoded &&
			     !strcmp(rep.source, "exact"));
		t->infeasible_both += !rep.feasible;
		hoff_sched_free(s);
		return;
	}
	if (!rep.has_decoded || rep.status == HOFF_ILP_INFEASIBLE) {
		t->mismatch_feas++;
		if (verbose)
			print_message("%s %.6g: brute force %.0f, ILP %s\n",
				      g->name,
				      budget_mode ? (double)budget : x, bf.obj,
				      hoff_ilp_status_name(rep.status));
		hoff_sched_free(s);
		return;
	}
	double ilp = obj_of(budget_mode, &rep.repaired);
	bool dec_ok = rep.repaired_fits;
	/* the model's optimum is a bound on the machine's (tolerance: the
	 * fluid stage model may share a channel where FIFO cannot) */
	double bound_u = budget_mode ? rep.bound * 1e12 : rep.bound;
	if (rep.has_bound && bound_u > bf.obj * (1 + 1e-9) + 1e-3)
		t->relax_bad++;
	if (dec_ok && fabs(ilp - bf.obj) <= 1e-6 * fmax(1, bf.obj))
		t->equal++;
	else if (dec_ok && ilp < bf.obj)
		t->better++;
	else
		t->worse++;
	if (verbose && !(dec_ok && fabs(ilp - bf.obj) <= 1e-6 * fmax(1, bf.obj)) &&
	    getenv("HOFF_BF_DUMP")) {
		hoff_ilp_iv *iv;
		int32_t niv;
		hoff_err e;
		hoff_ilp_intervals(g, false, &iv, &niv, &e);
		for (int32_t i = 0; i < niv; i++)
			print_message(
				"  iv %d t=%s a=%d b=%d kind=%d pick=%d\n", i,
				g->tensor[iv[i].c.t].id, iv[i].c.a, iv[i].c.b,
				iv[i].c.kind, bf.pick[i]);
		free(iv);
	}
	if (verbose && !(dec_ok && fabs(ilp - bf.obj) <= 1e-6 * fmax(1, bf.obj)))
		print_message("%s %s %.6g: brute force %.0f, ILP decoded %.0f%s "
			      "(model %.6g, bound %.6g)\n",
			      g->name, budget_mode ? "budget" : "overhead",
			      budget_mode ? (double)budget : x,
			      bf.obj, ilp, dec_ok ? "" : " INVALID",
			      rep.objective, rep.bound);
	hoff_sched_free(s);
}

static void test_random_vs_bruteforce(void **state)
{
	(void)state;
	tally tb = {0}, to = {0};
	int done = 0;
	int want = getenv("HOFF_BF_N") ? atoi(getenv("HOFF_BF_N")) : 60;
	uint64_t seed0 = getenv("HOFF_BF_SEED") ? strtoull(getenv("HOFF_BF_SEED"), NULL, 10) : 1;
	for (uint64_t seed = seed0; done < want && seed < seed0 + 50 * (uint64_t)want; seed++) {
		hoff_graph *g = small_random(seed);
		if (!g)
			continue;
		done++;
		/* a budget between the least peak any schedule reaches and
		 * the no-offload peak */
		int64_t peak = tu_noffload_peak(g);
		bf_result lo;
		bf_solve(g, HOFF_NONE, 1e9, &lo);
		assert_true(lo.found);
		static const double fr[] = {0.0, 0.3, 0.6};
		int64_t budget = (int64_t)lo.obj +
				 (int64_t)(fr[seed % 3] * (double)(peak - lo.obj));
		compare_one(g, true, budget, 0, &tb, true);
		static const double ov[] = {0.0, 0.1, 0.5};
		compare_one(g, false, 0, ov[seed % 3], &to, true);
		hoff_graph_free(g);
	}
	print_message("budget:   %d graphs, %d equal, %d worse, %d better, "
		      "%d infeasible, %d feasibility mismatches, %d bad bounds\n",
		      tb.graphs, tb.equal, tb.worse, tb.better,
		      tb.infeasible_both, tb.mismatch_feas, tb.relax_bad);
	print_message("overhead: %d graphs, %d equal, %d worse, %d better, "
		      "%d infeasible, %d feasibility mismatches, %d bad bounds; "
		      "%d probes answered by the root's cuts\n",
		      to.graphs, to.equal, to.worse, to.better,
		      to.infeasible_both, to.mismatch_feas, to.relax_bad,
		      to.probes_cut);
	/* Nothing in the decision space beats the brute force (it is the
	 * optimum of the machine model), and the model's bound never cut
	 * off that optimum. Equality is exact (to the byte and ps) where the
	 * channels serve one transfer at a time; the stage model is fluid
	 * (transfers may share a channel in a window) where the machine is
	 * first come first served, so under contention the decoded schedule
	 * can simulate worse than the model predicted, or a machine schedule
	 * can fall outside the model (a prefetch issued while its own store
	 * is in flight). Seeded runs of 800 graphs (HOFF_BF_N=400,
	 * HOFF_BF_SEED=1000 and 5000) matched on 798 (budget) and 799
	 * (overhead); allowed here: 5% of cases. */
	assert_int_equal(tb.better + to.better, 0);
	/* overhead mode's bound is the peak search's lo, proven by
	 * infeasible probes: it never exceeds the brute force's optimum */
	assert_int_equal(to.relax_bad, 0);
	int miss = tb.worse + tb.mismatch_feas + to.worse + to.mismatch_feas;
	assert_true(miss * 20 <= tb.graphs + to.graphs);
	assert_true(tb.equal + to.equal >= (tb.graphs + to.graphs) * 95 / 100);
}

/* Pruning (binding instants, dominated boundaries) keeps the optimum of
 * the full model. */
static void test_prune_keeps_optimum(void **state)
{
	(void)state;
	int done = 0;
	for (uint64_t seed = 200; done < 25 && seed < 2000; seed++) {
		hoff_graph *g = small_random(seed);
		if (!g)
			continue;
		done++;
		int64_t budget = tu_noffload_peak(g) * 8 / 10;
		for (int mode = 0; mode < 2; mode++) {
			hoff_ilp_opts o = mode ? opts_overhead(0.1)
					       : opts_budget(budget);
			hoff_ilp_opts op = o;
			op.prune = false;
			hoff_exact_report r1, r2;
			hoff_sched *s1 = run_exact(g, &o, &r1);
			hoff_sched *s2 = run_exact(g, &op, &r2);
			assert_int_equal(r1.status == HOFF_ILP_INFEASIBLE,
					 r2.status == HOFF_ILP_INFEASIBLE);
			if (r1.has_objective && r2.has_objective &&
			    r1.status == HOFF_ILP_OPTIMAL &&
			    r2.status == HOFF_ILP_OPTIMAL)
				assert_true(fabs(r1.objective - r2.objective) <=
					    1e-6 * fmax(1e-9, fabs(r2.objective)));
			hoff_sched_free(s1);
			hoff_sched_free(s2);
		}
		hoff_graph_free(g);
	}
}

/* More random graphs, each mode under a short time limit: what exact
 * returns is legal, meets the constraint whenever greedy's does, and is
 * never worse than greedy's. */
static void test_never_worse_than_greedy(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 40; seed++) {
		hoff_graph *g = random_g(seed * 7919);
		for (int mode = 0; mode < 2; mode++) {
			hoff_ilp_opts o =
				mode ? opts_overhead(0.05)
				     : opts_budget(tu_noffload_peak(g) * 3 / 4);
			o.time_limit_s = 1;
			hoff_exact_report rep;
			hoff_sched *s = run_exact(g, &o, &rep);
			if (rep.greedy_feasible) {
				assert_true(rep.feasible);
				assert_non_null(s);
				double go = obj_of(mode == 0, &rep.greedy);
				double xo = obj_of(mode == 0, &rep.best);
				assert_true(xo <= go);
			}
			if (s) {
				hoff_sim_result r = tu_sim(g, s, INT64_MAX);
				assert_true(r.valid);
				assert_int_equal(r.summary.peak_bytes,
						 rep.best.peak_bytes);
				assert_int_equal(r.summary.makespan_ps,
						 rep.best.makespan_ps);
				hoff_sim_result_free(&r);
			}
			hoff_sched_free(s);
		}
		hoff_graph_free(g);
	}
}

/* A model-shaped graph with a tight limit: the solver stops with an
 * incumbent (greedy's at least) and reports it honestly. */
static void test_time_limit(void **state)
{
	(void)state;
	hoff_model_opts mo = hoff_model_defaults();
	mo.model = "llama3-8b";
	mo.phase = "train";
	mo.layers = 1;
	mo.seq = 512;
	hoff_graph *g = tu_model(&mo);
	hoff_ilp_opts o = opts_budget(tu_noffload_peak(g) * 9 / 10);
	o.time_limit_s = 0.2;
	hoff_exact_report rep;
	hoff_sched *s = run_exact(g, &o, &rep);
	assert_non_null(s);
	assert_true(rep.status != HOFF_ILP_INFEASIBLE || !rep.greedy_feasible);
	if (rep.status == HOFF_ILP_TIME_LIMIT && rep.has_objective) {
		assert_true(rep.has_bound);
		assert_true(rep.bound <= rep.objective * (1 + 1e-9));
	}
	if (rep.greedy_feasible)
		assert_true(hoff_exact_objective(true, &rep.best) <=
			    hoff_exact_objective(true, &rep.greedy));
	hoff_sched_free(s);
	hoff_graph_free(g);
}

/* Runs a command line, returns its exit status (-1 when it did not run). */
static int run_cmd(const char *cmd)
{
	int rc = system(cmd);
	return rc == -1 || !WIFEXITED(rc) ? -1 : WEXITSTATUS(rc);
}

/* The model written as CPLEX LP and free MPS; CBC, given the MPS, finds
 * the optimum GLPK proved (skipped when `cbc` is not installed). */
static void test_export_and_cbc(void **state)
{
	(void)state;
	char dir[] = "/tmp/hoff_ilp_XXXXXX";
	assert_non_null(mkdtemp(dir));
	bool have_cbc = run_cmd("command -v cbc >/dev/null 2>&1") == 0;
	int checked = 0;
	for (uint64_t seed = 31; seed < 120 && checked < 6; seed++) {
		hoff_graph *g = random_g(seed);
		char lp[256], mps[256], cmd[1024], out[256];
		snprintf(lp, sizeof lp, "%s/m%llu.lp", dir,
			 (unsigned long long)seed);
		snprintf(mps, sizeof mps, "%s/m%llu.mps", dir,
			 (unsigned long long)seed);
		snprintf(out, sizeof out, "%s/cbc%llu.txt", dir,
			 (unsigned long long)seed);
		hoff_ilp_opts o =
			seed % 2 ? opts_budget(tu_noffload_peak(g) * 7 / 10)
				 : opts_overhead(0.05);
		o.write_lp = lp;
		o.write_mps = mps;
		hoff_exact_report rep;
		hoff_sched *s = run_exact(g, &o, &rep);
		size_t n1 = 0, n2 = 0;
		char *t1 = tu_slurp(lp, &n1), *t2 = tu_slurp(mps, &n2);
		assert_non_null(t1);
		assert_non_null(t2);
		/* a model that pruning emptied is written as such (GLPK
		 * says so in a comment) */
		if (rep.nrows > 0 && rep.ncols > 0)
			assert_non_null(strstr(t1, "Minimize"));
		else
			assert_non_null(strstr(t1, "NO ROWS/COLUMNS"));
		assert_non_null(strstr(t2, "ROWS"));
		free(t1);
		free(t2);
		if (have_cbc && rep.status == HOFF_ILP_OPTIMAL &&
		    rep.objective > 0) {
			snprintf(cmd, sizeof cmd,
				 "cbc %s -sec 20 -solve -quit > %s 2>&1", mps,
				 out);
			assert_int_equal(run_cmd(cmd), 0);
			char *log = tu_slurp(out, NULL);
			assert_non_null(log);
			char *p = strstr(log, "Objective value:");
			if (!p)
				print_error("cbc on %s said:\n%s\n", mps, log);
			assert_non_null(p);
			double v = strtod(p + strlen("Objective value:"), NULL);
			/* in model units: what the file's objective reads */
			print_message("%s: GLPK %.9g, CBC %.9g\n", g->name,
				      rep.model_objective, v);
			assert_true(fabs(v - rep.model_objective) <=
				    1e-6 * fmax(1, fabs(v)));
			free(log);
			checked++;
		}
		hoff_sched_free(s);
		hoff_graph_free(g);
	}
	char cmd[512];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (!getenv("HOFF_KEEP"))
		run_cmd(cmd);
	if (!have_cbc)
		skip();
	assert_true(checked > 0);
}

/* GLPK's answer to a written model: 1 feasible, 0 infeasible. */
static int glpk_feasible(const char *lp)
{
	glp_term_out(GLP_OFF);
	glp_prob *P = glp_create_prob();
	assert_int_equal(glp_read_lp(P, NULL, lp), 0);
	glp_iocp ip;
	glp_init_iocp(&ip);
	ip.presolve = GLP_ON;
	ip.msg_lev = GLP_MSG_OFF;
	ip.tm_lim = 20000;
	int rc = glp_intopt(P, &ip);
	int st = glp_mip_status(P);
	glp_delete_prob(P);
	glp_term_out(GLP_ON);
	if (rc == GLP_ENOPFS || rc == GLP_ENODFS || st == GLP_NOFEAS)
		return 0;
	assert_int_equal(rc, 0);
	assert_true(st == GLP_OPT || st == GLP_FEAS);
	return 1;
}

/* --write-probe: a search stopped at a 50% gap writes the probe for the
 * next possible peak under its best; GLPK finds it infeasible exactly
 * when that best is the optimum a full search proves. A probe written
 * at the best itself, or a peak too low, fails one side or the other. */
static void test_write_probe(void **state)
{
	(void)state;
	char dir[] = "/tmp/hoff_probe_XXXXXX";
	assert_non_null(mkdtemp(dir));
	int infeasible = 0, feasible = 0;
	for (uint64_t seed = 1; seed < 60; seed++) {
		hoff_graph *g = random_g(seed);
		char lp[256];
		snprintf(lp, sizeof lp, "%s/p%llu.lp", dir,
			 (unsigned long long)seed);
		hoff_ilp_opts o = opts_overhead(0.05);
		hoff_exact_report full, open;
		full = exact_report(g, &o);
		o.gap = 0.5;
		o.incumbent = false; /* greedy's start is often the optimum
					itself: the search would close */
		o.write_probe = lp;
		open = exact_report(g, &o);
		if (full.status == HOFF_ILP_OPTIMAL && open.probe_peak > 0) {
			assert_true(open.status != HOFF_ILP_OPTIMAL);
			assert_true(open.probe_peak < open.objective);
			bool best = fabs(open.objective - full.objective) < 0.5;
			assert_int_equal(glpk_feasible(lp), !best);
			if (best)
				infeasible++;
			else
				feasible++;
		} else {
			/* none written: nothing on disk */
			assert_int_equal(access(lp, F_OK), -1);
		}
		hoff_graph_free(g);
	}
	print_message("probes written: %d infeasible, %d feasible\n",
		      infeasible, feasible);
	assert_true(infeasible > 0 && feasible > 0);
	char cmd[512];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	run_cmd(cmd);
}

/* The fetch counts (13), on test_hand_deadlines' expert chain (e1 due
 * by op1, e2 by op2): in a probe (budget mode with a stall bound) the
 * integer column X_q = R_e1(q) + R_e2(q) for q = -1, the one boundary
 * where both are still open (e1's last is 0, when only e2 is open), its
 * row, and no O (no other fetch); the min-peak model and budget mode
 * without a stall bound have none. */
static void test_fetch_counts(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(CHAIN_GRAPH("", ""));
	hoff_err e;
	for (int kind = 0; kind < 3; kind++) {
		hoff_ilp_opts o = kind == 0 ? opts_overhead(0.01)
					    : opts_budget(40 * MB);
		o.prune = false;
		hoff_ilp_req rq = hoff_ilp_request(&o);
		if (kind == 2)
			rq.max_stall_ps = 19101 * MS / 1000;
		hoff_ilp *m = NULL;
		assert_int_equal(hoff_ilp_build(g, &o, &rq, &m, &e), HOFF_OK);
		int32_t nx = 0, nrow = 0;
		for (int32_t j = 1; j <= m->ncols; j++) {
			assert_int_not_equal(m->ctag[j], 'O');
			if (m->ctag[j] != 'X')
				continue;
			assert_int_equal(m->cbin[j], 2);
			assert_true(m->cub[j] == 2);
			assert_int_equal(m->carg1[j], -1);
			nx++;
		}
		for (int32_t i = 1; i <= m->nrows; i++) {
			if (m->rtag[i] != 'N')
				continue;
			nrow++;
			assert_int_equal(m->rtype[i], HOFF_ILP_EQ);
			assert_int_equal(m->roff[i + 1] - m->roff[i], 3);
			int32_t q = HOFF_NONE;
			for (int64_t k = m->roff[i]; k < m->roff[i + 1]; k++) {
				int32_t c = m->rcol[k];
				if (m->ctag[c] == 'X') {
					assert_true(m->rval[k] == 1);
					q = m->carg1[c];
				}
			}
			for (int64_t k = m->roff[i]; k < m->roff[i + 1]; k++) {
				int32_t c = m->rcol[k];
				if (m->ctag[c] == 'R') {
					assert_true(m->rval[k] == -1);
					assert_int_equal(m->carg1[c], q);
				}
			}
		}
		assert_int_equal(nx, kind == 2 ? 1 : 0);
		assert_int_equal(nrow, nx);
		hoff_ilp_free(m);
	}
	hoff_graph_free(g);
}

/* (v2) The recompute rows (15)-(17) by hand (solver/README.md). Four ops
 * of 1 ms; x (1 MB, a persistent input that never moves), a (4 MB),
 * h (4 MB), y (2 MB), z (1 MB); op0 (x -> a, 3 MB of workspace), op1
 * (a -> h), op2 (h -> y), op3 (a, y -> z). Memory with nothing moved:
 *   S0 x + a + ws = 8   E0 5   S1 x + a + h = 9   E1 9
 *   S2 x + a + h + y = 11   E2 x + a + y = 7   S3 + z = 8   (MB)
 * The peak, 11 MB at S2, needs a away during op2 (h and y are op2's
 * own). A store of a, issued after op1 (its last touch before op3),
 * takes 4 ms and frees a only when complete, and op2 waits for nothing
 * (its only input, h, is on the device), so no schedule without
 * recomputation has a peak under 11 MB: budget 10 MB is infeasible, and
 * at any makespan the least peak is 11 MB. The one recompute candidate
 * drops a after op1 and re-runs op0 right before op3 (x is persistent,
 * so resident; nothing updates it): E1 5, S2 7, E2 3, then the re-run
 * allocates a and its workspace: x + y + a + ws = 10 MB (row (17)),
 * then S3 x + a + y + z = 8. Peak 10 MB (the re-run) and makespan
 * 4 + 1 = 5 ms (the re-run's 1 ms, no stall). So:
 *   budget 10 MB: 1 ms over compute with recompute, else infeasible;
 *   budget 9 MB: infeasible either way (the re-run needs 10 MB: without
 *     row (17) the model would take it at 9);
 *   overhead 25% (makespan <= 5 ms): 10 MB with recompute, 11 without;
 *   overhead 24% (4.96 ms): 11 MB with recompute too. */
static const char *g_rc4 =
	"{\"format\": \"hoffopt.graph\", \"version\": 2, \"name\": \"rc4\", "
	"\"machine\": {\"device\": {\"memory_bytes\": 100000000}, \"tiers\": "
	"[" HOST "]}, \"tensors\": ["
	"{\"id\": \"x\", \"bytes\": 1000000, \"kind\": \"input\", "
	"\"offload\": false, \"persistent\": true},"
	"{\"id\": \"a\", \"bytes\": 4000000, \"kind\": \"activation\"},"
	"{\"id\": \"h\", \"bytes\": 4000000, \"kind\": \"activation\"},"
	"{\"id\": \"y\", \"bytes\": 2000000, \"kind\": \"activation\"},"
	"{\"id\": \"z\", \"bytes\": 1000000, \"kind\": \"output\"}], "
	"\"ops\": ["
	"{\"id\": \"op0\", \"inputs\": [\"x\"], \"outputs\": [\"a\"], "
	"\"workspace_bytes\": 3000000, \"time_s\": 0.001},"
	"{\"id\": \"op1\", \"inputs\": [\"a\"], \"outputs\": [\"h\"], "
	"\"time_s\": 0.001},"
	"{\"id\": \"op2\", \"inputs\": [\"h\"], \"outputs\": [\"y\"], "
	"\"time_s\": 0.001},"
	"{\"id\": \"op3\", \"inputs\": [\"a\", \"y\"], \"outputs\": [\"z\"], "
	"\"time_s\": 0.001}]}";

static void test_hand_recompute(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(g_rc4);
	hoff_err e;
	/* the model: one candidate, a dropped after op1, op0 before op3 */
	hoff_ilp_opts o = opts_budget(10 * MB);
	o.recompute = true;
	hoff_ilp *m = NULL;
	assert_int_equal(hoff_ilp_build(g, &o, NULL, &m, &e), HOFF_OK);
	assert_int_equal(m->nrc, 1);
	assert_int_equal(m->rc[0].t, hoff_graph_find_tensor(g, "a"));
	assert_int_equal(m->rc[0].p, 0);
	assert_int_equal(m->rc[0].a, 1);
	assert_int_equal(m->rc[0].b, 3);
	hoff_ilp_free(m);
	/* budget 10 MB: the re-run, exactly these steps */
	hoff_exact_report rep;
	hoff_sched *s = run_exact(g, &o, &rep);
	assert_int_equal(rep.status, HOFF_ILP_OPTIMAL);
	assert_true(rep.feasible);
	assert_true(fabs(rep.objective - 1e-3) < 1e-12);
	assert_true(rep.bound == rep.objective);
	static const struct {
		hoff_step_kind kind;
		const char *id;
	} want[] = {{HOFF_STEP_OP, "op0"},	  {HOFF_STEP_OP, "op1"},
		    {HOFF_STEP_DROP, "a"},	  {HOFF_STEP_OP, "op2"},
		    {HOFF_STEP_RECOMPUTE, "op0"}, {HOFF_STEP_OP, "op3"}};
	assert_int_equal(s->nsteps, 6);
	for (int k = 0; k < 6; k++) {
		assert_int_equal(s->step[k].kind, want[k].kind);
		bool op = want[k].kind != HOFF_STEP_DROP;
		assert_int_equal(s->step[k].id,
				 op ? hoff_graph_find_op(g, want[k].id)
				    : hoff_graph_find_tensor(g, want[k].id));
	}
	hoff_sim_result r = tu_sim(g, s, 10 * MB);
	assert_true(r.valid);
	assert_int_equal(r.summary.peak_bytes, 10 * MB);
	assert_int_equal(r.summary.makespan_ps, 5 * MS);
	assert_int_equal(r.summary.recompute_ps, 1 * MS);
	assert_int_equal(r.summary.stall_ps, 0);
	hoff_sim_result_free(&r);
	hoff_sched_free(s);
	/* without the option: no schedule under 11 MB */
	o.recompute = false;
	rep = exact_report(g, &o);
	assert_int_equal(rep.status, HOFF_ILP_INFEASIBLE);
	assert_false(rep.feasible);
	/* budget 9 MB: the re-run's workspace does not fit (row (17)) */
	o = opts_budget(9 * MB);
	o.recompute = true;
	rep = exact_report(g, &o);
	assert_int_equal(rep.status, HOFF_ILP_INFEASIBLE);
	assert_false(rep.feasible);
	/* overhead mode: the least peak, proven */
	static const struct {
		double x;
		bool rc;
		int64_t peak, makespan;
	} cases[] = {{0.25, true, 10 * MB, 5 * MS},
		     {0.25, false, 11 * MB, 4 * MS},
		     {0.24, true, 11 * MB, 4 * MS}};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		o = opts_overhead(cases[i].x);
		o.recompute = cases[i].rc;
		rep = exact_report(g, &o);
		assert_int_equal(rep.status, HOFF_ILP_OPTIMAL);
		assert_true(rep.feasible);
		assert_true(rep.objective == (double)cases[i].peak);
		assert_true(rep.bound == rep.objective);
		assert_int_equal(rep.best.peak_bytes, cases[i].peak);
		assert_int_equal(rep.best.makespan_ps, cases[i].makespan);
	}
	hoff_graph_free(g);
}

/* (v2, rule 9) A repeat graph's state goes home. w (2 MB, host) is read
 * by op0 and updated by op1, the last op; m (100 B, host, optimizer
 * state, small) is updated by op1; g (1 MB) flows op0 -> op1. 1 ms
 * ops, 1 GB/s each way. The candidates give neither a tail (op1 is the
 * last op, and m is small), so the model adds one each that it must use
 * (home_end): both dirty, stored home after op1. Least stall, hand
 * worked: w's fetch before op0 (2 ms; m's 0.1 us rides behind it), then
 * after op1 the stores of w (2 ms) and m (0.1 us) on the d2h FIFO: 2 ms
 * + 2.0001 ms = 4.0001 ms, against 2 ms for the same graph without
 * repeat, whose state may stay on the device. */
#define REPEAT_GRAPH(repeat)                                                      \
	"{\"format\": \"hoffopt.graph\", \"version\": 2, \"repeat\": " repeat     \
	", \"name\": \"r\", \"machine\": {\"device\": {\"memory_bytes\": "        \
	"100000000}, \"tiers\": [" HOST "]}, \"tensors\": ["                      \
	"{\"id\": \"w\", \"bytes\": 2000000, \"kind\": \"weight\", "              \
	"\"home\": \"host\"},"                                                    \
	"{\"id\": \"m\", \"bytes\": 100, \"kind\": \"optimizer\", "               \
	"\"home\": \"host\"},"                                                    \
	"{\"id\": \"g\", \"bytes\": 1000000, \"kind\": \"activation\"}], "        \
	"\"ops\": [{\"id\": \"op0\", \"inputs\": [\"w\"], \"outputs\": [\"g\"], " \
	"\"time_s\": 0.001},"                                                     \
	"{\"id\": \"op1\", \"inputs\": [\"g\"], \"updates\": [\"w\", \"m\"], "    \
	"\"time_s\": 0.001}]}"

/* m's solution x decoded and written as g's schedule (caller frees). */
static hoff_sched *emit_solution(const hoff_graph *g, const hoff_ilp *m,
				 const double *x)
{
	int32_t *pick = malloc(((size_t)m->niv + 1) * sizeof *pick);
	assert_non_null(pick);
	hoff_ilp_decode(m, x, pick);
	hoff_sched *s = NULL;
	hoff_err e;
	assert_int_equal(hoff_ilp_emit(g, m->iv, m->niv, pick, "exact", &s, &e),
			 HOFF_OK);
	free(pick);
	return s;
}

/* The stall (ps) of s on g under the default rules, which must be a
 * valid schedule. */
static int64_t valid_stall(const hoff_graph *g, const hoff_sched *s)
{
	hoff_sim_result r = tu_sim(g, s, HOFF_NONE);
	assert_true(r.valid);
	int64_t stall = r.summary.stall_ps;
	hoff_sim_result_free(&r);
	return stall;
}

static void test_repeat_end_state(void **state)
{
	(void)state;
	for (int repeat = 0; repeat < 2; repeat++) {
		hoff_graph *g = tu_graph(repeat ? REPEAT_GRAPH("true")
						: REPEAT_GRAPH("false"));
		hoff_ilp_opts o = opts_budget(100000000);
		hoff_ilp *m = NULL;
		hoff_err e;
		assert_int_equal(hoff_ilp_build(g, &o, NULL, &m, &e), HOFF_OK);
		int32_t nhome = 0;
		for (int32_t i = 0; i < m->niv; i++) {
			const hoff_ilp_iv *v = &m->iv[i];
			if (!v->home_end)
				continue;
			nhome++;
			assert_int_equal(v->c.kind, HOFF_CAND_DIRTY);
			assert_int_equal(v->c.a, 1);
			assert_int_equal(v->c.b, 2);
			assert_int_equal(v->c.tier, 0);
		}
		assert_int_equal(nhome, repeat ? 2 : 0);
		hoff_ilp_sol sol;
		double stall = solve_optimal(m, &sol);
		assert_true(fabs(stall - (repeat ? 4.0001e-3 : 2e-3)) < 1e-12);
		hoff_sched *s = emit_solution(g, m, sol.x);
		/* the schedule ends with both stores home, after op1 */
		int64_t k = s->nsteps;
		if (repeat) {
			assert_true(k >= 3);
			assert_int_equal(s->step[k - 3].kind, HOFF_STEP_OP);
			for (int64_t j = k - 2; j < k; j++) {
				assert_int_equal(s->step[j].kind,
						 HOFF_STEP_STORE);
				assert_int_equal(s->step[j].tier, 0);
			}
		} else {
			assert_int_equal(s->step[k - 1].kind, HOFF_STEP_OP);
		}
		assert_int_equal(valid_stall(g, s),
				 repeat ? 4000100000 : 2000000000);
		hoff_sched_free(s);
		/* the whole pipeline: what --exact returns is valid on the v2
		 * simulator (rule 9's end state for repeat) at that stall */
		hoff_exact_report rep;
		s = run_exact(g, &o, &rep);
		assert_non_null(s);
		assert_int_equal(valid_stall(g, s),
				 repeat ? 4000100000 : 2000000000);
		hoff_sched_free(s);
		free(sol.x);
		hoff_ilp_free(m);
		hoff_graph_free(g);
	}
}

/* (v2, rule 3) Duplex, rows (5d), hand-worked. One tier, 1 GB/s each
 * way, h2d_duplex_factor f = 0.75, d2h_duplex_factor g = 0.5 (f + g >=
 * 1: rows x + y (1-f)/g <= L and y + x (1-g)/f <= L). Repeat graph: s
 * (3 MB, optimizer, host) is updated by op0 (1 ms) and must be stored
 * home; w (4 MB, host) is read by op2 (1 ms) after op1 (3 ms); x (1 KB)
 * flows op1 -> op2. Best schedule: s fetched (3 ms of stall), w fetched
 * behind it from 3 ms, s stored after op0 from 4 ms. The machine: w has
 * 3 ms of nominal work left at 4 ms, and both channels run from 4 ms:
 * h2d at 0.75 finishes w at 8 ms (d2h has done 0.5 x 4 = 2 of s's 3),
 * 1 ms after op1 ends, then d2h finishes s alone at 9 ms, as op2 ends:
 * stall 3 + 1 = 4 ms. The model, in op1's window (L = 3): x + 0.5 y <= 3
 * and y + x (2/3) <= 3 bind at x = 2.25, y = 1.5 (the machine's 0.75 x 3
 * and 0.5 x 3); the stall before op2 (1 ms) takes w's last 0.75 and 0.5
 * of s (x + 0.5 y = 1, y + (2/3) x = 1), and op2's 1 ms the last 1 of
 * s: stall 4 ms too. Without the factors the same model needs 3 ms
 * (both fit op1 side by side), and with (5b) unrelaxed (a busy channel
 * moves len, not 0.75 len) 7 ms, which no timing needs. */
#define DUPLEX_GRAPH(f, g)                                                      \
	"{\"format\": \"hoffopt.graph\", \"version\": 2, \"repeat\": true, "    \
	"\"name\": \"d\", \"machine\": {\"device\": {\"memory_bytes\": "        \
	"100000000}, \"tiers\": [{\"name\": \"host\", \"h2d_Bps\": 1e9, "       \
	"\"d2h_Bps\": 1e9, \"h2d_duplex_factor\": " f ", "                      \
	"\"d2h_duplex_factor\": " g "}]}, \"tensors\": ["                       \
	"{\"id\": \"s\", \"bytes\": 3000000, \"kind\": \"optimizer\", "         \
	"\"home\": \"host\"},"                                                  \
	"{\"id\": \"w\", \"bytes\": 4000000, \"kind\": \"weight\", "            \
	"\"home\": \"host\"},"                                                  \
	"{\"id\": \"x\", \"bytes\": 1000, \"kind\": \"activation\"}], "         \
	"\"ops\": [{\"id\": \"op0\", \"updates\": [\"s\"], \"time_s\": 0.001}," \
	"{\"id\": \"op1\", \"outputs\": [\"x\"], \"time_s\": 0.003},"           \
	"{\"id\": \"op2\", \"inputs\": [\"w\", \"x\"], \"time_s\": 0.001}]}"

/* The least stall (s) of the budget-mode model of graph text json, and
 * in *sim_ps the stall of its decoded schedule on the simulator (rule
 * 3's integer arithmetic), which must be valid. */
static double model_stall(const char *json, int64_t *sim_ps)
{
	hoff_graph *g = tu_graph(json);
	hoff_ilp_opts o = opts_budget(100000000);
	hoff_ilp *m = NULL;
	hoff_err e;
	assert_int_equal(hoff_ilp_build(g, &o, NULL, &m, &e), HOFF_OK);
	hoff_ilp_sol sol;
	double stall = solve_optimal(m, &sol);
	int32_t nk = 0;
	for (int32_t i = 1; i <= m->nrows; i++)
		nk += m->rtag[i] == 'K';
	hoff_sched *s = emit_solution(g, m, sol.x);
	*sim_ps = valid_stall(g, s);
	print_message("duplex model: stall %.9g s, %d duplex rows; "
		      "simulated %lld ps\n",
		      stall, nk, (long long)*sim_ps);
	hoff_sched_free(s);
	free(sol.x);
	hoff_ilp_free(m);
	hoff_graph_free(g);
	return stall;
}

static void test_duplex_rows(void **state)
{
	(void)state;
	int64_t sim;
	/* the rows and the simulator agree: 4 ms (w done at 8 ms, s at 9) */
	assert_true(fabs(model_stall(DUPLEX_GRAPH("0.75", "0.5"), &sim) -
			 4e-3) < 1e-9);
	assert_int_equal(sim, 4000000000);
	assert_true(fabs(model_stall(DUPLEX_GRAPH("1", "1"), &sim) - 3e-3) <
		    1e-9);
	assert_int_equal(sim, 3000000000);
	/* f + g < 1 (0.4 each): the row x + y <= L, the hull of what a
	 * window holds, a relaxation: 6 ms of work in op1's 3 ms, op2's
	 * 1 ms (d2h alone) and the stalls: 3 + 2 ms, where the machine,
	 * running both at 0.4 from 4 ms, ends both at 11.5 ms: 7.5 ms */
	assert_true(fabs(model_stall(DUPLEX_GRAPH("0.4", "0.4"), &sim) - 5e-3) <
		    1e-9);
	assert_int_equal(sim, 7500000000);
}

int main(void)
{
	exact_test_env();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intervals),
		cmocka_unit_test(test_hand_infeasible),
		cmocka_unit_test(test_hand_budget7),
		cmocka_unit_test(test_hand_budget_store),
		cmocka_unit_test(test_hand_store_time),
		cmocka_unit_test(test_hand_fetch_time),
		cmocka_unit_test(test_hand_deadlines),
		cmocka_unit_test(test_hand_crowded),
		cmocka_unit_test(test_hand_overhead),
		cmocka_unit_test(test_random_vs_bruteforce),
		cmocka_unit_test(test_prune_keeps_optimum),
		cmocka_unit_test(test_never_worse_than_greedy),
		cmocka_unit_test(test_time_limit),
		cmocka_unit_test(test_export_and_cbc),
		cmocka_unit_test(test_fetch_counts),
		cmocka_unit_test(test_write_probe),
		cmocka_unit_test(test_repeat_end_state),
		cmocka_unit_test(test_duplex_rows),
		cmocka_unit_test(test_hand_recompute),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
