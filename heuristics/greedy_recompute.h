/* greedy_recompute.h: planning with recomputation (`--recompute`):
 * greedy or a baseline planned on each recompute plan of
 * recompute_plan.h, against the same plan without it; policy.c calls it
 * when hoff_policy_opts.recompute is set. */
#ifndef HOFF_GREEDY_RECOMPUTE_H
#define HOFF_GREEDY_RECOMPUTE_H

#include "policy_opts.h"

/* As hoff_policy_run, with o->recompute: the best schedule of g, under
 * o's objective (a baseline's without a budget: the least peak no slower
 * than its plan without recomputation), among the policy's plan without
 * recomputation, its plans of g with each recompute plan (mapped back to g)
 * and, for greedy, policy checkpoint's and checkpoint+reactive's; every one
 * simulated on g. The note names the winner. */
hoff_status hoff_recompute_run(const hoff_graph *g, const hoff_policy_opts *o,
			       hoff_sched **out, hoff_policy_report *rep,
			       hoff_err *e);

/* Plans g with o's policy (o->analysis g's), as hoff_policy_run does but
 * without its recompute branch: greedy fills *rep itself; a baseline's or
 * checkpoint's plan gets its name and note in *rep, its figures left to
 * the caller's simulation. HOFF_ENOMEM. */
hoff_status hoff_plan_without_recompute(const hoff_graph *g,
					const hoff_policy_opts *o,
					hoff_sched **out,
					hoff_policy_report *rep, hoff_err *e);

#endif
