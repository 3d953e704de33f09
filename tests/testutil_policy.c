/* testutil_policy.c: tu_plan, tu_run and tu_expect_steps
 * (testutil_policy.h);
 * each fails the running test rather than returning an error. */
#include <stdio.h>

#include "testutil_policy.h"

hoff_sched *tu_plan(const hoff_graph *g, const char *policy, int64_t budget,
		    double overhead, hoff_policy_report *rep)
{
	hoff_policy_opts o = hoff_policy_defaults();
	assert_true(hoff_policy_parse(policy, &o));
	o.budget_bytes = budget;
	o.max_overhead = overhead;
	return tu_run(g, &o, rep);
}

hoff_sched *tu_run(const hoff_graph *g, const hoff_policy_opts *o,
		   hoff_policy_report *rep)
{
	hoff_sched *s = NULL;
	hoff_err e = {{0}};
	hoff_status st = hoff_policy_run(g, o, &s, rep, &e);
	tu_ok(st, &e, NULL);
	assert_non_null(s);
	return s;
}

void tu_expect_steps(const hoff_graph *g, const hoff_sched *s, const char *want)
{
	static const char *const name[] = {"op",     "prefetch",  "store",
					   "detach", "recompute", "drop"};
	char buf[2048];
	size_t n = 0;
	buf[0] = '\0';
	for (int64_t i = 0; i < s->nsteps && n < sizeof buf; i++) {
		const hoff_step *p = &s->step[i];
		bool op = p->kind == HOFF_STEP_OP ||
			  p->kind == HOFF_STEP_RECOMPUTE;
		n += (size_t)snprintf(
			buf + n, sizeof buf - n, "%s%s %s%s%s", i ? "|" : "",
			name[p->kind],
			op ? g->op[p->id].id : g->tensor[p->id].id,
			p->tier >= 0 ? " " : "",
			p->tier >= 0 ? g->tier[p->tier].name : "");
	}
	assert_string_equal(buf, want);
}
