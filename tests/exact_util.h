/* exact_util.h: helpers shared by test_ilp.c and test_exact.c — the
 * exact scheduler's options for either mode and a run that fails the
 * test on error. Header-only (static inline): tests/CMakeLists.txt builds
 * each test_*.c with testutil.c alone. */
#ifndef HOFF_EXACT_UTIL_H
#define HOFF_EXACT_UTIL_H

#include <stdlib.h>

#include "ilp.h"
#include "testutil.h"

#define MS 1000000000LL /* one millisecond in ps */
#define MB 1000000LL

/* The defaults, 10 s, quiet. */
static inline hoff_ilp_opts opts_quiet(void)
{
	hoff_ilp_opts o = hoff_ilp_defaults();
	o.time_limit_s = 10;
	o.progress.fn = NULL;
	return o;
}

/* Budget mode under budget bytes (opts_quiet). */
static inline hoff_ilp_opts opts_budget(int64_t budget)
{
	hoff_ilp_opts o = opts_quiet();
	o.budget_bytes = budget;
	return o;
}

/* Overhead mode: makespan within (1 + x) of the lower bound (opts_quiet). */
static inline hoff_ilp_opts opts_overhead(double x)
{
	hoff_ilp_opts o = opts_quiet();
	o.max_overhead = x;
	return o;
}

/* hoff_exact_run on g under o, which must succeed (caller frees). */
static inline hoff_sched *run_exact(const hoff_graph *g, const hoff_ilp_opts *o,
				    hoff_exact_report *rep)
{
	hoff_sched *s = NULL;
	hoff_err e = {{0}};
	hoff_status st = hoff_exact_run(g, o, &s, rep, &e);
	tu_ok(st, &e, "exact");
	return s;
}

/* run_exact's report; the schedule (if any) freed. */
static inline hoff_exact_report exact_report(const hoff_graph *g,
					     const hoff_ilp_opts *o)
{
	hoff_exact_report rep;
	hoff_sched_free(run_exact(g, o, &rep));
	return rep;
}

/* What both programs' main does first: one OpenMP thread (hundreds of
 * small solves: greedy's team would only spin, and results do not
 * depend on the thread count) and cmocka's filter from HOFF_TEST_FILTER
 * (a test's name, to run it alone). */
static inline void exact_test_env(void)
{
	setenv("OMP_NUM_THREADS", "1", 0);
	if (getenv("HOFF_TEST_FILTER"))
		cmocka_set_test_filter(getenv("HOFF_TEST_FILTER"));
}

#endif
