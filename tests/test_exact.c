/* test_exact.c: the exact pipeline (solver/ilp.h's hoff_exact_run) and
 * its peak search on data/ graphs and on small graphs built for one
 * effect: never worse than greedy, the repaired start, proofs of
 * optimality, the root's cut rounds, the stride's refinement, GLPK's
 * objective tolerance, small tensors' candidates and the peaks a
 * solution can have. The hand-checked model and the brute-force
 * comparison are in test_ilp.c. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis.h"
#include "cmd_exact.h"
#include "exact_util.h"
#include "models.h"
#include "policy.h"
#include "testutil.h"

/* The small graphs of data/ (at most 30 ops) with a short limit: legal,
 * and never worse than greedy. */
static void test_data_graphs(void **state)
{
	(void)state;
	static const char *const names[] = {"tiny.json",
					    "llama3-8b-decode-2l.json"};
	int seen = 0;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		hoff_graph *g = tu_data_graph(names[i]);
		if (!g)
			continue;
		seen++;
		hoff_ilp_opts o = opts_overhead(0.01);
		o.time_limit_s = 0.5;
		hoff_exact_report rep;
		hoff_sched *s = run_exact(g, &o, &rep);
		assert_non_null(s);
		if (rep.greedy_feasible)
			assert_true(rep.best.peak_bytes <=
				    rep.greedy.peak_bytes);
		hoff_sched_free(s);
		hoff_graph_free(g);
	}
	if (!seen)
		skip();
}

/* Exact in overhead mode (1%) on data/NAME (v1: in its version-1 form,
 * tu_data_v1_graph_or_skip) with a time limit of limit_s: a schedule
 * whose makespan is within the bound; the run's report (the test is
 * skipped without the file). */
static hoff_exact_report exact_on_data(const char *name, bool v1,
				       double limit_s)
{
	hoff_graph *g = v1 ? tu_data_v1_graph_or_skip(name)
			   : tu_data_graph_or_skip(name);
	hoff_ilp_opts o = opts_overhead(0.01);
	o.time_limit_s = limit_s;
	hoff_exact_report rep;
	hoff_sched *s = run_exact(g, &o, &rep);
	assert_non_null(s);
	hoff_sched_free(s);
	hoff_graph_free(g);
	assert_true(rep.best.makespan_ps <= rep.bound_ps);
	return rep;
}

/* deepseek-v3-decode-4l (data/'s FORMAT v2 graph: a repeat decode step
 * on the h200 preset, duplex 0.92) proven optimal within 60 s (the
 * issue's requirement for every small graph of data/): the model's
 * optimum is 7897024000 B, and its bound equals it. Greedy (refined on
 * the simulator itself, small tensors' gaps included) ends at
 * 7897009664 B, under the model's optimum (the model moves no small
 * tensor but to drop a clean copy); the schedule decoded from the model
 * simulates worse, and the best returned is greedy's. (On the version-1
 * graph the same held at 7808952832 B against greedy's 7808945792 B.)
 * The proof took 3.6 s in a Release build; here it is checked, with room
 * for ASan and a loaded machine (how soon is bench/harness.py
 * exact-table's figure). */
static void test_deepseek_optimal(void **state)
{
	(void)state;
	hoff_exact_report rep =
		exact_on_data("deepseek-v3-decode-4l.json", false, 240);
	print_message("deepseek: %s in %.1f s, %d probes, objective %.1f\n",
		      hoff_ilp_status_name(rep.status), rep.solve_s, rep.probes,
		      rep.objective);
	assert_int_equal(rep.greedy.peak_bytes, 7897009664);
	assert_true(rep.has_objective);
	assert_int_equal(rep.status, HOFF_ILP_OPTIMAL);
	assert_true(rep.objective == 7897024000.0);
	assert_true(rep.bound == rep.objective);
	/* greedy's schedule, kept: under the model's optimum, with small
	 * tensors' gaps the model does not hold */
	assert_int_equal(rep.best.peak_bytes, 7897009664);
}

/* The root's cut rounds (glpk_backend.c) on llama3-8b-train-2l's probe
 * (the version-1 graph: the figures below are its) just under its best,
 * 15305211908 B: a peak of at most 15305203717 B
 * (the cap) within 1% of lower_bound_s. The LP relaxation alone is
 * feasible (172.08 ms of stall against 174.30 allowed) and GLPK's own
 * cuts and branching find no answer in 300 s; with the cover, Gomory
 * and MIR rounds the LP is infeasible after a few rounds: the probe is
 * answered at the root, and the best is optimal. */
static void test_root_cuts_train_probe(void **state)
{
	(void)state;
	hoff_graph *g = tu_data_v1_graph_or_skip("llama3-8b-train-2l.json");
	hoff_err e = {{0}};
	hoff_ilp_opts o = opts_overhead(0.01);
	hoff_ilp *m = NULL;
	assert_int_equal(hoff_ilp_build(g, &o, NULL, &m, &e), HOFF_OK);
	hoff_ilp_req pr = hoff_ilp_request(&o);
	pr.budget_bytes = 15305203717LL;
	pr.max_stall_ps = m->bound_ps - m->compute_ps;
	pr.stride = m->stride;
	pr.first_solution = true;
	pr.time_limit_s = 240; /* the answer, not its speed (see above) */
	hoff_ilp *pm = NULL;
	assert_int_equal(hoff_ilp_build(g, &o, &pr, &pm, &e), HOFF_OK);
	assert_false(pm->infeasible);
	hoff_ilp_sol sol;
	assert_int_equal(hoff_ilp_solve(pm, NULL, &sol, &e), HOFF_OK);
	print_message("probe: %s, %d cut rows, %.1f s (%s)\n",
		      hoff_ilp_status_name(sol.status), sol.cut_rows,
		      sol.solve_s, sol.note);
	assert_int_equal(sol.status, HOFF_ILP_INFEASIBLE);
	assert_true(sol.cuts_answered);
	assert_true(sol.cut_rows > 0);
	assert_int_equal(sol.nodes, 0);
	free(sol.x);
	hoff_ilp_free(pm);
	hoff_ilp_free(m);
	hoff_graph_free(g);
}

/* Overhead mode on mixtral-8x7b-decode-2l (the version-1 graph, whose
 * figures these are): greedy's own peak search
 * stopped at 1.48e9 B (before issue 20), while greedy planned under a
 * lower cap and repaired on the simulator meets the same makespan bound
 * at 1.13e9 B. Greedy now refines on the simulator and is there itself
 * (1128382464 B); what exact returns is at least as low, legal and
 * within the bound, and every schedule it reports as hi must map onto
 * the model: the bound stays below the model objective. */
static void test_descent_beats_greedy(void **state)
{
	(void)state;
	hoff_exact_report rep =
		exact_on_data("mixtral-8x7b-decode-2l.json", true, 5);
	assert_true(rep.greedy_feasible);
	assert_true(rep.feasible);
	assert_true(rep.best.peak_bytes <= rep.greedy.peak_bytes);
	assert_true(rep.best.peak_bytes <= 1128464384);
	assert_true(rep.has_objective && rep.has_bound);
	assert_true(rep.bound <= rep.objective);
	assert_true(rep.objective <= 0.85 * 1480843296.0);
}

/* Exact on g under o: the stride its model ends with, and whether
 * greedy's schedule was the start. */
static void exact_stride(const hoff_graph *g, const hoff_ilp_opts *o,
			 int32_t stride, bool start, hoff_exact_report *rep)
{
	hoff_sched *s = run_exact(g, o, rep);
	assert_non_null(s);
	assert_int_equal(rep->stride, stride);
	assert_int_equal(rep->incumbent_accepted, start);
	hoff_sched_free(s);
}

/* An automatic stride too coarse to hold greedy's schedule is refined.
 * DeepSeek-V3 decode, 4 layers, 1024 tokens cached, on the H200 preset:
 * transfer-bound (the routed experts come from the host back to back).
 * With 1200 binaries aimed at, the automatic stride is 4; there greedy's
 * schedule does not map (its rounded-up expert prefetches stall past the
 * overhead bound). At stride 2 (1228 binaries, within twice the aim) it
 * does (greedy's schedule as refined since issue 20; the one before
 * needed stride 1), and the schedule returned is no worse than
 * greedy's. A stride the user sets is kept, and so is budget mode's
 * automatic one (8 with 1000 binaries aimed at, no start). */
static void test_stride_holds_greedy(void **state)
{
	(void)state;
	hoff_model_opts mo = hoff_model_defaults();
	mo.model = "deepseek-v3";
	mo.phase = "decode";
	mo.layers = 4;
	mo.seq = 1024;
	mo.machine = "h200";
	hoff_graph *g = tu_model(&mo);
	hoff_err e = {{0}};
	/* The limit bounds the whole run, greedy and every build of the
	 * stride's refinement included (issue 22): 20 s leaves them room on
	 * a machine loaded many times over (3 s did not at a load of 18 on
	 * 2 cores); 1 s was a limit on the solve alone. */
	hoff_ilp_opts o = opts_overhead(0.01);
	o.time_limit_s = 20;
	o.max_binaries = 1200;
	hoff_ilp *m = NULL;
	assert_int_equal(hoff_ilp_build(g, &o, NULL, &m, &e), HOFF_OK);
	assert_int_equal(m->stride, 4);
	hoff_ilp_free(m);
	hoff_exact_report rep;
	exact_stride(g, &o, 2, true, &rep);
	assert_int_equal(rep.nbin, 1228);
	assert_true(rep.best.peak_bytes <= rep.greedy.peak_bytes);
	o.stride = 4;
	exact_stride(g, &o, 4, false, &rep);
	/* budget mode (one MIP) keeps the automatic stride */
	o = opts_budget(tu_noffload_peak(g) * 95 / 100);
	o.time_limit_s = 20;
	o.max_binaries = 1000;
	exact_stride(g, &o, 8, false, &rep);
	hoff_graph_free(g);
}

/* x (1e9 B, op0 to op3) and op1's 1e9 B workspace put the peak at op1;
 * u and v (bytes as given) are host weights read by op0 and op3, both
 * channels run at rate B/s, op2 lasts op2_s and the other ops 4 ms. */
static hoff_graph *uv_graph(int64_t rate, int64_t u, int64_t v, double op2_s)
{
	char json[1536];
	snprintf(json, sizeof json,
		 "{\"format\": \"hoffopt.graph\", \"version\": 1, "
		 "\"name\": \"uv\", \"machine\": {\"device\": "
		 "{\"memory_bytes\": 4000000000}, \"tiers\": [{\"name\": "
		 "\"host\", \"h2d_Bps\": %lld, \"d2h_Bps\": %lld}]}, "
		 "\"tensors\": ["
		 "{\"id\": \"u\", \"bytes\": %lld, \"kind\": \"weight\", "
		 "\"home\": \"host\"},"
		 "{\"id\": \"v\", \"bytes\": %lld, \"kind\": \"weight\", "
		 "\"home\": \"host\"},"
		 "{\"id\": \"x\", \"bytes\": 1000000000, \"kind\": "
		 "\"activation\"},"
		 "{\"id\": \"y\", \"bytes\": 8, \"kind\": \"output\"}], "
		 "\"ops\": ["
		 "{\"id\": \"op0\", \"inputs\": [\"u\", \"v\"], "
		 "\"outputs\": [\"x\"], \"time_s\": 0.004},"
		 "{\"id\": \"op1\", \"inputs\": [\"x\"], \"outputs\": [], "
		 "\"workspace_bytes\": 1000000000, \"time_s\": 0.004},"
		 "{\"id\": \"op2\", \"inputs\": [\"x\"], \"outputs\": [], "
		 "\"time_s\": %g},"
		 "{\"id\": \"op3\", \"inputs\": [\"u\", \"v\", \"x\"], "
		 "\"outputs\": [\"y\"], \"time_s\": 0.004}]}",
		 (long long)rate, (long long)rate, (long long)u, (long long)v,
		 op2_s);
	return tu_graph(json);
}

/* GLPK's tol_obj on the min-peak model. X (1 GB) is live from op0 to op3
 * and op1 has 1 GB of workspace: the peak is at op1. u (8 B) and v
 * (16 B), host weights read by op0 and op3, may be detached after op0 and
 * fetched back after op1, during op2 (8 ms) at 2000 B/s: u takes 4 ms, v
 * 8 ms; both would stall op3 by 4 ms, past the overhead bound (1% of the
 * 32 ms lower bound: 12 ms of first fetches, 20 ms of ops). The least
 * peak detaches v alone: 16 B under the start (nothing offloaded). The LP
 * relaxation spends the 0.32 ms of slack on a part of u, 16.64 B under:
 * within GLPK's default tol_obj (1e-7 (1 + 2 units of 1e9 B), 300 B) of
 * the start, where the search dropped the root's children and called the
 * start optimal. */
static hoff_graph *g_tol(void)
{
	return uv_graph(2000, 8, 16, 0.008);
}

static void test_min_peak_tol_obj(void **state)
{
	(void)state;
	hoff_graph *g = g_tol();
	hoff_ilp_opts o = opts_overhead(0.01);
	o.time_limit_s = 5;
	o.all_candidates = true; /* u and v are small (analysis.h) */
	hoff_ilp *m = NULL;
	hoff_err e = {{0}};
	assert_int_equal(hoff_ilp_build(g, &o, NULL, &m, &e), HOFF_OK);
	int32_t *pick = malloc(((size_t)m->niv + 1) * sizeof *pick);
	double *x = malloc(((size_t)m->ncols + 1) * sizeof *x);
	assert_non_null(pick);
	assert_non_null(x);
	for (int32_t i = 0; i < m->niv; i++)
		pick[i] = HOFF_ILP_OFF;
	for (int32_t i = 0; i < m->niv; i++)
		if (m->iv[i].c.kind == HOFF_CAND_START)
			pick[i] = -1;
	assert_true(hoff_ilp_start(m, pick, x, &e));
	int64_t p0 = hoff_ilp_model_peak(m, x);
	double lp = 0;
	bool ok = false;
	assert_int_equal(hoff_ilp_lp_bound(m, 5, &lp, &ok, &e), HOFF_OK);
	assert_true(ok);
	/* the premise: the relaxation is 16.64 B under the start, within
	 * the default tolerance */
	assert_int_equal(p0, 2000000024);
	assert_true(fabs((double)p0 - lp * m->bu - 16.64) < 0.01);
	hoff_ilp_sol sol = {0};
	assert_int_equal(hoff_ilp_solve(m, x, &sol, &e), HOFF_OK);
	assert_true(sol.has_x);
	assert_int_equal(sol.status, HOFF_ILP_OPTIMAL);
	assert_int_equal(hoff_ilp_model_peak(m, sol.x), p0 - 16);
	free(sol.x);
	free(x);
	free(pick);
	hoff_ilp_free(m);
	hoff_graph_free(g);
}

/* Small tensors (analysis.h): in g_tol the no-offload peak is 2e9 B
 * (x and op1's workspace, u and v), so u (8 B) and v (16 B) are under
 * its 1/4096. Each is a host weight read by op0 and op3: its interval
 * between them (detach after op0, fetch back) exists only with
 * all_candidates; its first fetch always (it has no other). */
static void test_small_candidates(void **state)
{
	(void)state;
	hoff_graph *g = g_tol();
	int32_t u = hoff_graph_find_tensor(g, "u");
	assert_true(hoff_tensor_movable(g, u));
	for (int all = 0; all <= 1; all++) {
		hoff_ilp_iv *iv = NULL;
		int32_t n = 0;
		hoff_err e;
		assert_int_equal(hoff_ilp_intervals(g, all, &iv, &n, &e),
				 HOFF_OK);
		int gap = 0, start = 0, other = 0;
		for (int32_t i = 0; i < n; i++) {
			if (iv[i].c.t != u)
				continue;
			if (iv[i].c.kind == HOFF_CAND_START)
				start++;
			else if (iv[i].c.a == 0 && iv[i].c.b == 3)
				gap++;
			else
				other++;
		}
		assert_int_equal(start, 1);
		assert_int_equal(gap, all);
		assert_int_equal(other, 0);
		free(iv);
	}
	hoff_graph_free(g);
}

/* The peaks a solution can have. x (1e9 B) and op1's workspace (1e9 B)
 * make the peak at op1; u (1000003 B, 4.000012 ms at 2.5e8 B/s) and v
 * (2000005 B, 8.00002 ms), host weights read by op0 and op3, may be
 * detached after op0 and fetched back from the end of op1, during op2
 * (4 ms). The overhead bound is 1% of 28.000032 ms (12.000032 ms of first
 * fetches, 16 ms of ops): 0.28 ms of stall. u's fetch fits; v's, or
 * both, stall 4 ms or more. The least peak: 2e9 + v = 2002000005 B. The
 * LP relaxation fetches u and 0.035 of v: 2001930007.92 B. The sizes'
 * grain is 1 B, but the only peaks possible at op1 are 2e9 + {0, u, v,
 * u + v}, and elsewhere under 1.01e9 B: the floor rounds up to
 * 2002000005 B, which greedy reaches itself (refined on the simulator:
 * u detached and fetched during op2), so no probe is needed; from the
 * floor alone a probe would have to prove 2002000004 B infeasible (the
 * floor's 2001930004 B is the relaxation less the solver's tolerance). */
static void test_possible_peaks(void **state)
{
	(void)state;
	hoff_graph *g = uv_graph(250000000, 1000003, 2000005, 0.004);
	hoff_ilp_opts o = opts_overhead(0.01);
	double lp = 0;
	bool ok = false;
	hoff_ilp *m = NULL;
	hoff_err e = {{0}};
	assert_int_equal(hoff_ilp_build(g, &o, NULL, &m, &e), HOFF_OK);
	assert_int_equal(hoff_ilp_lp_bound(m, 5, &lp, &ok, &e), HOFF_OK);
	assert_true(ok);
	assert_true(fabs(lp * m->bu - 2001930007.92) < 0.01);
	hoff_ilp_free(m);
	hoff_exact_report rep;
	hoff_sched *s = run_exact(g, &o, &rep);
	assert_non_null(s);
	assert_int_equal(rep.status, HOFF_ILP_OPTIMAL);
	assert_int_equal(rep.best.peak_bytes, 2002000005);
	assert_int_equal((int64_t)rep.bound, 2002000005);
	assert_int_equal(rep.greedy.peak_bytes, 2002000005);
	assert_int_equal(rep.probes, 0);
	hoff_sched_free(s);
	hoff_graph_free(g);
}

/* (issue 34, 12) A gap printed beside an objective and a bound never
 * contradicts them. compare's table once read: exact's simulated peak
 * 3057721344 B, bound 3057762304 B, gap 0.000%: the bound holds over the
 * model's candidates only, and the repaired schedule lay outside them.
 * Now such a cell reads "below"; above the bound, (obj - bound) / obj:
 * 110 against 100 is 9.091%. Greedy's gap in the reports keeps its sign
 * (-4096 / 3057721344 = -1.34e-6). */
static void test_gap_cells(void **state)
{
	(void)state;
	char buf[32];
	assert_string_equal(hoff_exact_gap_cell(buf, sizeof buf, 3057721344.0,
						3057762304.0),
			    "below");
	assert_string_equal(hoff_exact_gap_cell(buf, sizeof buf, 110, 100),
			    "9.091%");
	assert_string_equal(hoff_exact_gap_cell(buf, sizeof buf, 100, 100),
			    "0.000%");
	assert_string_equal(hoff_exact_gap_cell(buf, sizeof buf, 0, 0),
			    "0.000%");
	hoff_exact_report rep = {.has_bound = true, .bound = 3057725440.0};
	rep.greedy.peak_bytes = 3057721344;
	assert_true(fabs(hoff_exact_greedy_gap(&rep) - -4096.0 / 3057721344.0) <
		    1e-15);
	/* the first line when exact returns greedy's schedule, none else */
	FILE *f = tmpfile();
	assert_non_null(f);
	snprintf(rep.source, sizeof rep.source, "exact");
	hoff_exact_source_line(f, &rep);
	assert_int_equal(ftell(f), 0);
	snprintf(rep.source, sizeof rep.source, "greedy");
	hoff_exact_source_line(f, &rep);
	char line[128] = "";
	rewind(f);
	assert_non_null(fgets(line, sizeof line, f));
	assert_string_equal(line, "exact returns greedy's schedule: the "
				  "model's solution simulated no better\n");
	fclose(f);
}

/* The policies, greedy and the exact pipeline report the lower bound and
 * the no-offload peak of the analysis given, here a doctored one (twice
 * the bound, a peak of 1 B): they did not analyse the graph again. */
static void test_planners_take_it(void **state)
{
	(void)state;
	hoff_graph *g = tu_data_graph_or_skip("tiny.json");
	hoff_analysis an;
	hoff_err e;
	assert_int_equal(hoff_analyze(g, &an, &e), HOFF_OK);
	an.lower_bound_ps *= 2;
	an.closed_peak_bytes = 1;
	static const hoff_policy_kind kinds[] = {
		HOFF_POLICY_NONE, HOFF_POLICY_REACTIVE, HOFF_POLICY_GREEDY};
	for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
		hoff_policy_opts po = hoff_policy_defaults();
		po.kind = kinds[i];
		po.analysis = &an;
		hoff_sched *s = NULL;
		hoff_policy_report rep;
		assert_int_equal(hoff_policy_run(g, &po, &s, &rep, &e),
				 HOFF_OK);
		assert_int_equal(rep.lower_bound_ps, 24000000000LL);
		assert_int_equal(rep.noffload_peak_bytes, 1);
		hoff_sched_free(s);
	}
	hoff_ilp_opts io = hoff_ilp_defaults();
	io.time_limit_s = 10;
	io.analysis = &an;
	hoff_sched *s = NULL;
	hoff_exact_report rep;
	assert_int_equal(hoff_exact_run(g, &io, &s, &rep, &e), HOFF_OK);
	assert_int_equal(rep.lower_bound_ps, 24000000000LL);
	/* the makespan bound: 1% over the doctored bound */
	assert_int_equal(rep.bound_ps, 24240000000LL);
	hoff_sched_free(s);
	hoff_graph_free(g);
}

int main(void)
{
	exact_test_env();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_data_graphs),
		cmocka_unit_test(test_deepseek_optimal),
		cmocka_unit_test(test_root_cuts_train_probe),
		cmocka_unit_test(test_descent_beats_greedy),
		cmocka_unit_test(test_stride_holds_greedy),
		cmocka_unit_test(test_min_peak_tol_obj),
		cmocka_unit_test(test_small_candidates),
		cmocka_unit_test(test_possible_peaks),
		cmocka_unit_test(test_gap_cells),
		cmocka_unit_test(test_planners_take_it),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
