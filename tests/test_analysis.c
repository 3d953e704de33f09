/* test_analysis.c: one analysis passed along the pipeline
 * (hoff_analysis_use): given, it is the one used. A core test (it links
 * hoff_core alone): that the planners report the analysis they are given
 * is test_exact.c's test_planners_take_it. */
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_use),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
