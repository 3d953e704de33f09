/* greedy.h: the greedy refinement (greedy.c), called by greedy_recompute.c's
 * hoff_plan_without_recompute (policy.c's way in). */
#ifndef HOFF_GREEDY_H
#define HOFF_GREEDY_H

#include "policy_opts.h"

/* Plans with greedy and the baselines as candidates; see policy.h's
 * hoff_policy_run for the contract. */
hoff_status hoff_greedy_run(const hoff_graph *g, const hoff_policy_opts *o,
			    hoff_sched **out, hoff_policy_report *rep,
			    hoff_err *e);

#endif
