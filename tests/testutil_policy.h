/* testutil_policy.h: the policy helpers shared by the tests that plan
 * (library hoff_testutil_policy, testutil_policy.c, which links
 * hoff_heuristics): a plan that fails the test on error, and a
 * schedule's steps compared as one line of text. */
#ifndef HOFF_TESTUTIL_POLICY_H
#define HOFF_TESTUTIL_POLICY_H

#include "policy.h"
#include "testutil.h"

/* Plans g with policy (hoff_policy_parse's name) at budget (HOFF_NONE:
 * none) and max_overhead overhead, filling *rep; fails the test unless
 * the plan succeeds (caller frees). */
hoff_sched *tu_plan(const hoff_graph *g, const char *policy, int64_t budget,
		    double overhead, hoff_policy_report *rep);
/* Plans g with the options o, filling *rep; fails the test unless the
 * plan succeeds (caller frees). */
hoff_sched *tu_run(const hoff_graph *g, const hoff_policy_opts *o,
		   hoff_policy_report *rep);
/* Asserts that s's steps, written "op f0|store a host|drop a0|...",
 * are want. */
void tu_expect_steps(const hoff_graph *g, const hoff_sched *s,
		     const char *want);

#endif
