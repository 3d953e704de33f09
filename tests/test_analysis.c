/* test_analysis.c: one analysis passed along the pipeline
 * (hoff_analysis_use): the planners work from the analysis they are
 * given, not from one of their own. */
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "ilp.h"
#include "policy.h"
#include "testutil.h"

/* Given an analysis, it is the one used; without, *own is filled as
 * hoff_analyze fills it. tiny: 8 ms of compute; w0's 4 MB at 1 GB/s
 * before op0 make the bound 4 + 8 = 12 ms. */
static void test_use(void **state)
{
	(void)state;
	hoff_graph *g = tu_data_graph_or_skip("tiny.json");
	hoff_analysis own, given = {.lower_bound_ps = 1};
	const hoff_analysis *an = NULL;
	hoff_err e;
	assert_int_equal(hoff_analysis_use(g, &given, &own, &an, &e), HOFF_OK);
	assert_ptr_equal(an, &given);
	assert_int_equal(hoff_analysis_use(g, NULL, &own, &an, &e), HOFF_OK);
	assert_ptr_equal(an, &own);
	assert_int_equal(own.compute_ps, 8000000000LL);
	assert_int_equal(own.lower_bound_ps, 12000000000LL);
	hoff_graph_free(g);
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
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_use),
		cmocka_unit_test(test_planners_take_it),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
