/* greedy_target.c: one target of greedy's search: plan it (greedy_
 * select.c), emit it, simulate it, and keep the better schedule under
 * the objective (greedy_internal.h's goal); and the objective's makespan
 * bound (greedy_bound_ps).
 * requires a plan set up; every schedule it keeps passed the simulator
 * (legal) or is flagged. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "greedy_internal.h"

/* t's overhead over lb_ps as the reports compute it (hoff_cli_over). */
static double overhead_of(int64_t t, int64_t lb_ps)
{
	return (double)t / (double)lb_ps - 1.0;
}

int64_t greedy_bound_ps(double x, int64_t lb_ps)
{
	/* Saturated at 2^62 ps, past any instant a schedule can reach
	 * (FORMAT.md): a huge --max-overhead means "any makespan", never
	 * an overflowed cast. */
	double bound_d = floor((1.0 + x) * (double)lb_ps);
	if (!(bound_d < (double)HOFF_PS_LIMIT))
		return HOFF_PS_LIMIT;
	int64_t b = (int64_t)bound_d;
	/* floor((1 + x) lb) rounds twice, so it can land a picosecond under
	 * a plan whose reported overhead is exactly x (a baseline asked for
	 * at its own overhead). The reported overhead is monotone in t and
	 * exact in t under 2^53: step to the largest t it keeps within x,
	 * a few steps at most. */
	if (lb_ps <= 0 || b >= (int64_t)1 << 53)
		return b;
	while (b + 1 < HOFF_PS_LIMIT && overhead_of(b + 1, lb_ps) <= x)
		b++;
	while (b > 0 && overhead_of(b, lb_ps) > x)
		b--;
	return b;
}

hoff_status greedy_judge(const hoff_graph *g, hoff_sched *s, hoff_judged *c,
			 const char *source, int64_t *T, hoff_sim_ws *ws,
			 hoff_err *e)
{
	hoff_judge_opts jo = {.starts = T != NULL, .ws = ws};
	hoff_status st = hoff_judge(g, s, &jo, source, c, e);
	if (st != HOFF_OK || !T)
		return st;
	memcpy(T, c->start, ((size_t)g->nops + 1) * sizeof *T);
	free(c->start);
	c->start = NULL;
	return HOFF_OK;
}

bool greedy_better(const hoff_judged *c, const hoff_judged *b, goal go)
{
	if (!c->legal)
		return false;
	if (!b->s || !b->legal)
		return true;
	bool cf = c->sum.peak_bytes <= go.cap, bf = b->sum.peak_bytes <= go.cap;
	if (cf != bf)
		return cf;
	bool lower = c->sum.peak_bytes < b->sum.peak_bytes ||
		     (c->sum.peak_bytes == b->sum.peak_bytes &&
		      c->sum.makespan_ps < b->sum.makespan_ps);
	bool faster = c->sum.makespan_ps < b->sum.makespan_ps ||
		      (c->sum.makespan_ps == b->sum.makespan_ps &&
		       c->sum.peak_bytes < b->sum.peak_bytes);
	if (!cf)
		return lower;
	if (go.bound != HOFF_NONE) {
		bool cb = c->sum.makespan_ps <= go.bound,
		     bb = b->sum.makespan_ps <= go.bound;
		if (cb != bb)
			return cb;
		if (cb)
			return lower;
	}
	return faster;
}

void greedy_keep(hoff_judged *best, hoff_judged *c, goal go)
{
	if (greedy_better(c, best, go)) {
		hoff_sched_free(best->s);
		*best = *c;
	} else {
		hoff_sched_free(c->s);
	}
	c->s = NULL;
}

/* Folds pass c into *t, the target's best pass under the constraint. */
static void note_pass(tried *t, const hoff_judged *c, int64_t target, goal go)
{
	/* With a bound, the device's memory does not steer the search: a
	 * target over it that meets the bound leads down to ones under it
	 * (keep prefers those anyway). */
	bool fits = c->legal && (go.bound == HOFF_NONE
					 ? c->sum.peak_bytes <= go.cap
					 : c->sum.makespan_ps <= go.bound &&
						   c->sum.peak_bytes <= target);
	if (fits && (!t->fits || c->sum.peak_bytes < t->peak ||
		     (c->sum.peak_bytes == t->peak &&
		      c->sum.makespan_ps < t->makespan))) {
		t->peak = c->sum.peak_bytes;
		t->makespan = c->sum.makespan_ps;
	} else if (!t->fits && !fits && c->sum.peak_bytes < t->peak) {
		t->peak = c->sum.peak_bytes;
		t->makespan = c->sum.makespan_ps;
	}
	t->fits = t->fits || fits;
}

/* Plans for one target `passes` times: first against the stall-free
 * timeline, then each against the timeline the previous simulation showed
 * (stalls included); every pass is a candidate for *best. *t gets the
 * best pass of this target under the constraint. With prune, a target
 * the plan itself misses is called missed without a schedule. */
hoff_status greedy_try_target(plan *pl, int64_t target, bool stall, int passes,
			      bool prune, goal go, hoff_judged *best, tried *t,
			      int *iters, hoff_err *e)
{
	const hoff_graph *g = pl->g;
	memset(t, 0, sizeof *t);
	t->peak = INT64_MAX;
	t->makespan = INT64_MAX;
	if (prune && target < pl->reach_bytes) {
		/* The first pass plans against T0 and cannot go under
		 * reach_bytes: it would be pruned below, so skip the plan. */
		(*iters)++;
		return HOFF_OK;
	}
	if (pl->T_real) { /* back to the stall-free timeline */
		memcpy(pl->T, pl->T0, ((size_t)pl->n + 1) * sizeof *pl->T);
		greedy_nominal_all(pl);
		pl->T_real = false;
	}
	/* The previous pass's candidate, kept back until this pass's
	 * schedule is compared with it: the same schedule needs no second
	 * simulation (a pass without stalls replans what it planned). */
	hoff_judged prev = {0};
	hoff_status st = HOFF_OK;
	for (int pass = 0; pass < passes; pass++) {
		if ((st = greedy_plan_for(pl, target, stall)) != HOFF_OK) {
			st = hoff_seterr(e, st, "out of memory");
			break;
		}
		if (prune && pass == 0 && greedy_peak_of(pl) > target) {
			/* The plan itself misses the target: in a bisection,
			 * call the target missed without emitting it. */
			(*iters)++;
			break;
		}
		hoff_sched *s = greedy_emit_plan(pl, &st);
		if (!s) {
			st = hoff_seterr(e, st, "out of memory");
			break;
		}
		if (prev.s && hoff_sched_same_steps(prev.s, s)) {
			hoff_sched_free(s);
			break;
		}
		hoff_judged c = {0};
		bool again = pass + 1 < passes;
		if ((st = greedy_judge(g, s, &c, "greedy", again ? pl->T : NULL,
				       pl->ws, e)))
			break;
		if (again) { /* the next pass plans against the simulation */
			pl->T_real = true;
			greedy_nominal_all(pl);
		}
		(*iters)++;
		note_pass(t, &c, target, go);
		greedy_keep(best, &prev, go);
		prev = c;
	}
	if (st == HOFF_OK)
		greedy_keep(best, &prev, go);
	hoff_sched_free(prev.s);
	return st;
}

void greedy_say_target(const hoff_progress *p, int64_t target, const tried *t)
{
	if (t->peak == INT64_MAX) /* no schedule: the plan itself missed */
		hoff_say(p,
			 "greedy: target %lld B: misses (the plan cannot "
			 "reach it)",
			 (long long)target);
	else
		hoff_say(p,
			 "greedy: target %lld B: peak %lld B, makespan %.6g "
			 "s%s",
			 (long long)target, (long long)t->peak,
			 hoff_s(t->makespan), t->fits ? "" : " (misses)");
}
