/* greedy_budget.c: greedy's budget mode: the fastest plan whose peak
 * fits the budget. After the portfolio (the baselines, the plan's
 * set-up), plans aimed at the budget (greedy_fit_cap) on the lower
 * bound's timeline, the refinement at the longest stall, then the budget
 * fit: the overhead mode asked the other way round.
 * requires a finished graph; never calls itself (the budget fit runs the
 * overhead mode, greedy_search.c). */
#include <stdlib.h>

#include "budget_fit.h"
#include "greedy_internal.h"

/* The budget fit (budget_fit.c): a plan made for the budget on the
 * simulator, from every tensor resident; it competes with r->best.
 * Skipped on plans too big for the refinement. */
static hoff_status plan_for_budget(grun *r, hoff_err *e)
{
	if (r->g->nops > BIG_OPS || (r->best.s && r->best.s->nsteps > BIG_OPS))
		return HOFF_OK;
	hoff_fit_result fr;
	hoff_status st =
		/* eight variants, each on a quarter of BUDGET_FIT_WORK */
		hoff_budget_fit(r->g, r->go.cap, 2 * BUDGET_FIT_WORK, &fr, e);
	if (st != HOFF_OK)
		return st;
	r->iters += fr.tried;
	hoff_say(&r->o->progress,
		 "greedy: budget fit: %s, peak %lld B, makespan %.6g s, "
		 "%d waits for the store queue, %d plans simulated",
		 fr.fits ? "fits" : "over the budget",
		 (long long)fr.sum.peak_bytes, hoff_s(fr.sum.makespan_ps),
		 fr.fences, fr.tried);
	if (!fr.s)
		return HOFF_OK;
	hoff_judged c = {0};
	if ((st = greedy_judge(r->g, fr.s, &c, "greedy", NULL, NULL, e)) !=
	    HOFF_OK)
		return st;
	greedy_keep(&r->best, &c, r->go);
	return HOFF_OK;
}

/* The least peak within a makespan bound (the overhead mode, refined)
 * falls as the bound grows, so the smallest bound whose plan fits the
 * budget is a fast plan under it. Bisects over a geometric ladder of
 * overheads between the lower bound and best's makespan, each rung an
 * overhead-mode run with a capped refinement; keeps what fits. Skipped
 * where one run would cost too much. */
static hoff_status budget_fit(grun *r, hoff_err *e)
{
	static const double ladder[] = {0,    0.001, 0.0025, 0.005, 0.01,
					0.02, 0.035, 0.05,   0.075, 0.1,
					0.15, 0.2,   0.3,    0.5,   0.75,
					1,    1.5,   2,	     3,	    5};
	enum { NL = sizeof ladder / sizeof ladder[0] };
	int64_t lb_ps = r->an->lower_bound_ps;
	if (r->best.s->nsteps > BIG_OPS || lb_ps <= 0)
		return HOFF_OK;
	double top = (double)r->best.sum.makespan_ps / (double)lb_ps - 1;
	int lo = 0, hi = 0; /* ladder[lo..hi) are below best's makespan */
	while (hi < NL && ladder[hi] < top)
		hi++;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		hoff_policy_opts bo = *r->o;
		bo.budget_bytes = HOFF_NONE;
		bo.max_overhead = ladder[mid];
		bo.progress.fn = NULL;
		hoff_policy_report rep;
		hoff_sched *s = NULL;
		hoff_status st = greedy_overhead_run(r->g, &bo, REFINE_WORK / 8,
						     &s, &rep, e);
		if (st != HOFF_OK)
			return st;
		r->iters += rep.iterations;
		bool fits = rep.peak_bytes <= r->go.cap;
		hoff_judged c = {0};
		if ((st = greedy_judge(r->g, s, &c, rep.source, NULL, NULL,
				       e)) != HOFF_OK)
			return st;
		greedy_keep(&r->best, &c, r->go);
		if (fits)
			hi = mid;
		else
			lo = mid + 1;
	}
	return HOFF_OK;
}

hoff_status greedy_budget_run(const hoff_graph *g, const hoff_policy_opts *o,
			      hoff_sched **out, hoff_policy_report *rep,
			      hoff_err *e)
{
	HOFF_REQUIRE(o->budget_bytes != HOFF_NONE);
	grun r;
	*out = NULL;
	hoff_status st = greedy_portfolio(&r, g, o, REFINE_WORK, rep, e);
	if (st == HOFF_OK)
		st = greedy_fit_cap(&r, e);
	if (st == HOFF_OK)
		st = plan_for_budget(&r, e);
	const hoff_judged *b = &r.best;
	if (st == HOFF_OK && b->s && b->legal)
		st = greedy_refine_best(&r, e);
	if (st == HOFF_OK && b->s && b->legal && b->sum.peak_bytes <= r.go.cap)
		st = budget_fit(&r, e);
	if (st == HOFF_OK)
		st = greedy_report(&r, out, e);
	greedy_close(&r);
	return st;
}
