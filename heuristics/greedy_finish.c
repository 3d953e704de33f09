/* greedy_finish.c: what both of greedy's modes end with: the fastest plan
 * under a cap (the budget, or the device when the overhead bound cannot
 * be met under it), the refinement on the simulator (refine.c) and the
 * report, with the final selection: a baseline that missed go.bound only
 * by that bound's rounding (greedy_keep_edge) competes there, refined,
 * under the bound its reported overhead implies (greedy_bound_ps).
 * requires a run started by greedy_portfolio; every schedule kept passed
 * the simulator. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "greedy_internal.h"
#include "refine.h"

hoff_status greedy_fit_cap(grun *r, hoff_err *e)
{
	plan *pl = &r->pl;
	const hoff_judged *best = &r->best;
	goal go = r->go;
	r->rep->floor_bytes = pl->floor_bytes;
	r->rep->floor_op = pl->floor_op;
	/* Under a floor over the cap nothing fits. Aiming there still finds
	 * lower peaks to report, but each plan of a big graph that aims
	 * that low costs seconds (a million ops: five), so there the
	 * search's answer stands, as for the refinement. */
	bool unreachable = pl->floor_bytes > go.cap && best->s &&
			   best->s->nsteps > BIG_OPS;
	/* Nor, on such plans, where no plan against the stall-free timeline
	 * can go under the cap (reach_bytes): a fit there comes from the
	 * baselines, resolved by now (no dead end). */
	unreachable = unreachable || (pl->reach_bytes > go.cap && best->s &&
				      best->s->nsteps > BIG_OPS);
	if ((go.bound != HOFF_NONE && best->sum.peak_bytes <= go.cap &&
	     best->sum.makespan_ps <= go.bound) ||
	    unreachable)
		return HOFF_OK;
	/* Fastest under the cap: aim at it, then tighten the aim by what
	 * the simulation overshot. */
	int64_t target = go.cap;
	for (int k = 0; k < 6 && target >= 0; k++) {
		tried t;
		hoff_status st = greedy_try_target(pl, target, true, 2, false,
						   go, &r->best, &t, &r->iters,
						   e);
		if (st != HOFF_OK)
			return st;
		hoff_say(&r->o->progress,
			 "greedy: target %lld B: peak "
			 "%lld B, makespan %.6g s",
			 (long long)target, (long long)t.peak,
			 hoff_s(t.makespan));
		if (t.peak <= go.cap)
			break;
		target -= t.peak - go.cap;
	}
	/* Aiming lower can be faster (fewer prefetches pile up behind a
	 * busy link); try a few lower aims and keep the fastest. */
	for (int k = 1; k <= 3; k++) {
		tried t;
		hoff_status st = greedy_try_target(pl, target - target / 6 * k,
						   true, 2, false, go, &r->best,
						   &t, &r->iters, e);
		if (st != HOFF_OK)
			return st;
	}
	return HOFF_OK;
}

/* Refines *best on the simulator under go; the result competes for
 * *best. */
static hoff_status refine_into(grun *r, hoff_judged *best, goal go, hoff_err *e)
{
	const hoff_graph *g = r->g;
	if (best->s->nsteps > r->work / 16)
		return HOFF_OK; /* not even a few moves fit the work */
	/* The plan's candidates and the small tensors' gaps, by (a, t). */
	hoff_cand_rule rule = {.store_tier = hoff_best_tier(g),
			       .small_below_bytes = 0};
	hoff_cand *all = NULL;
	size_t nall = 0;
	hoff_status st = hoff_cand_list(g, &rule, &all, &nall, e);
	if (st != HOFF_OK)
		return st;
	if (nall > 1) /* all is NULL when there are none */
		qsort(all, nall, sizeof *all, hoff_cand_cmp_a_t);
	/* the repair phase only in a run of its own, not on the budget
	 * fit's rungs (each a capped run) */
	hoff_refine_goal rg = {.cap = go.cap,
			       .bound_ps = go.bound,
			       .work = r->work,
			       .repair = r->work >= REFINE_WORK};
	hoff_refine_result rr;
	st = hoff_refine(g, all, (int32_t)nall, best->s, &rg, &rr, e);
	free(all);
	if (st != HOFF_OK)
		return st;
	r->iters += rr.tried;
	hoff_say(&r->o->progress,
		 "greedy: refined on the simulator: %d moves "
		 "kept of %d tried, peak %lld B, makespan %.6g s",
		 rr.moves, rr.tried, (long long)rr.sum.peak_bytes,
		 hoff_s(rr.sum.makespan_ps));
	if (!rr.s)
		return HOFF_OK;
	hoff_judged c = {0};
	if ((st = greedy_judge(g, rr.s, &c, best->source, NULL, NULL, e)) !=
	    HOFF_OK)
		return st;
	greedy_keep(best, &c, go);
	return HOFF_OK;
}

hoff_status greedy_refine_best(grun *r, hoff_err *e)
{
	hoff_status st = refine_into(r, &r->best, r->go, e);
	/* A baseline that misses go.bound by its rounding alone (r->edge)
	 * is refined too, under the bound its overhead implies; it meets
	 * the best at the report. */
	if (st == HOFF_OK && r->edge.s) {
		goal eg = r->go;
		eg.bound = greedy_bound_ps(r->o->max_overhead,
					   r->an->lower_bound_ps);
		st = refine_into(r, &r->edge, eg, e);
	}
	return st;
}

hoff_sched *greedy_sched_copy(const hoff_sched *s)
{
	hoff_sched *d = hoff_sched_new();
	if (!d)
		return NULL;
	if (s->nsteps > 0) {
		if (!(d->step =
			      hoff_alloc((size_t)s->nsteps, sizeof *d->step))) {
			hoff_sched_free(d);
			return NULL;
		}
		memcpy(d->step, s->step, (size_t)s->nsteps * sizeof *d->step);
		d->nsteps = s->nsteps;
		d->cap = (size_t)s->nsteps;
	}
	d->version = s->version;
	d->budget_bytes = s->budget_bytes;
	d->has_summary = s->has_summary;
	d->summary = s->summary;
	d->graph = hoff_strdup(s->graph);
	d->policy = hoff_strdup(s->policy);
	if ((s->graph && !d->graph) || (s->policy && !d->policy)) {
		hoff_sched_free(d);
		return NULL;
	}
	return d;
}

hoff_status greedy_keep_edge(grun *r, const hoff_judged *c, hoff_err *e)
{
	if (r->go.bound == HOFF_NONE || !c->s || !c->legal ||
	    c->sum.makespan_ps <= r->go.bound)
		return HOFF_OK;
	int64_t eb = greedy_bound_ps(r->o->max_overhead, r->an->lower_bound_ps);
	const hoff_summary *h = &r->edge.sum;
	if (c->sum.makespan_ps > eb ||
	    (r->edge.s && (c->sum.peak_bytes > h->peak_bytes ||
			   (c->sum.peak_bytes == h->peak_bytes &&
			    c->sum.makespan_ps >= h->makespan_ps))))
		return HOFF_OK;
	hoff_sched *s = greedy_sched_copy(c->s);
	if (!s)
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	hoff_sched_free(r->edge.s);
	r->edge = *c;
	r->edge.s = s;
	r->edge.start = NULL;
	return HOFF_OK;
}

hoff_status greedy_report(grun *r, hoff_sched **out, hoff_err *e)
{
	hoff_policy_report *rep = r->rep;
	hoff_judged *best = &r->best;
	/* The final selection under the bound the reported overhead implies:
	 * go.bound, floor((1 + x) lb), can fall a picosecond under a
	 * baseline whose reported overhead is x; such a baseline, simulated
	 * in the portfolio, competes here, so greedy asked for a baseline's
	 * own overhead never returns a higher peak than that baseline's. */
	if (r->go.bound != HOFF_NONE) {
		int64_t eb = greedy_bound_ps(r->o->max_overhead,
					     r->an->lower_bound_ps);
		if (eb > r->go.bound)
			r->go.bound = eb;
		greedy_keep(best, &r->edge, r->go);
	}
	rep->iterations = r->iters;
	if (!best->s || !best->legal)
		return hoff_seterr(e, HOFF_EINTERNAL,
				   "greedy found no legal schedule (a bug)");
	*out = best->s;
	hoff_sched_set_policy(*out, "greedy");
	rep->peak_bytes = best->sum.peak_bytes;
	rep->makespan_ps = best->sum.makespan_ps;
	rep->peak_ps = best->peak_ps;
	if (best->sum.peak_bytes < rep->least_peak_bytes ||
	    (best->sum.peak_bytes == rep->least_peak_bytes &&
	     best->sum.makespan_ps < rep->least_makespan_ps)) {
		rep->least_peak_bytes = best->sum.peak_bytes;
		rep->least_makespan_ps = best->sum.makespan_ps;
		snprintf(rep->least_source, sizeof rep->least_source, "%s",
			 best->source);
	}
	rep->feasible = best->sum.peak_bytes <= r->go.cap &&
			(r->go.bound == HOFF_NONE ||
			 best->sum.makespan_ps <= r->go.bound);
	snprintf(rep->source, sizeof rep->source, "%s", best->source);
	best->s = NULL;
	return HOFF_OK;
}

void greedy_close(grun *r)
{
	hoff_sched_free(r->best.s);
	r->best.s = NULL;
	hoff_sched_free(r->edge.s);
	r->edge.s = NULL;
	greedy_plan_free(&r->pl);
}
