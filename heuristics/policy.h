/* policy.h: every way hoffopt plans a schedule — the runtime baselines
 * (none, reactive, lookahead:N) and the greedy refinement — behind one
 * call, so comparisons run inside one tool on one simulator.
 * requires a finished graph; returns a schedule the simulator accepted
 * (or, for an infeasible budget, the best one found, flagged). */
#ifndef HOFF_POLICY_H
#define HOFF_POLICY_H

#include "policy_opts.h"

/* Plans a schedule for g (caller frees *out) and fills *rep from its
 * simulation. HOFF_ENOMEM or HOFF_EINPUT in e; an infeasible budget is
 * not an error: rep->feasible is false and *out is the best found. */
hoff_status hoff_policy_run(const hoff_graph *g, const hoff_policy_opts *o,
			    hoff_sched **out, hoff_policy_report *rep,
			    hoff_err *e);

#endif
