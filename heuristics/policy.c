/* policy.c: the one entry point that plans, simulates and reports,
 * whatever the policy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "greedy_recompute.h"
#include "policy.h"
#include "sim.h"

hoff_status hoff_policy_run(const hoff_graph *g, const hoff_policy_opts *o,
			    hoff_sched **out, hoff_policy_report *rep,
			    hoff_err *e)
{
	memset(rep, 0, sizeof *rep);
	rep->none_peak_bytes = HOFF_NONE;
	rep->none_makespan_ps = HOFF_NONE;
	*out = NULL;
	hoff_analysis own;
	hoff_policy_opts po = *o;
	hoff_status st =
		hoff_analysis_use(g, o->analysis, &own, &po.analysis, e);
	if (st != HOFF_OK)
		return st;
	if (o->recompute && o->kind != HOFF_POLICY_CHECKPOINT &&
	    o->kind != HOFF_POLICY_CHECKPOINT_REACTIVE) {
		po.memo = NULL; /* its runs plan other graphs, some at once */
		return hoff_recompute_run(g, &po, out, rep, e);
	}
	st = hoff_plan_without_recompute(g, &po, out, rep, e);
	if (st != HOFF_OK || o->kind == HOFF_POLICY_GREEDY)
		return st;
	const hoff_analysis *a = po.analysis;
	hoff_sim_opts so = hoff_sim_defaults();
	so.budget_bytes = o->budget_bytes == HOFF_NONE ? INT64_MAX
						       : o->budget_bytes;
	hoff_sim_result r;
	st = hoff_sim_run(g, *out, &so, &r, e);
	if (st != HOFF_OK) {
		hoff_sched_free(*out);
		*out = NULL;
		return st;
	}
	rep->peak_bytes = r.summary.peak_bytes;
	rep->makespan_ps = r.summary.makespan_ps;
	rep->lower_bound_ps = a->lower_bound_ps;
	rep->noffload_peak_bytes = a->closed_peak_bytes;
	rep->feasible = r.valid;
	if (o->kind == HOFF_POLICY_NONE) {
		rep->none_peak_bytes = r.summary.peak_bytes;
		rep->none_makespan_ps = r.summary.makespan_ps;
	}
	hoff_policy_name(o, rep->source, sizeof rep->source);
	hoff_sim_result_free(&r);
	return HOFF_OK;
}
