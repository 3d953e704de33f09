/* greedy_search.c: greedy's overhead mode (no budget): the least peak
 * whose simulated makespan is within (1 + max_overhead) of the lower
 * bound. After the portfolio, the peak search: two targets at a time,
 * one per thread, each on its own copy of the plan. Low targets select
 * many candidates and cost the most to plan, and the answer is usually
 * near the top: from the peak the first target reached (or from the
 * caller's peak to beat, hoff_policy_opts.peak_to_beat, when lower),
 * gallop down in steps growing fourfold until a target misses, then
 * shrink the bracket to a third per step until it is under
 * peak / 2^STOP_SHIFT. Fits are not monotone in the target, so a fine
 * last bracket finds lower peaks than a coarse one. Then the baselines that
 * waited (if nothing met the bound within the device), the refinement, and the
 * fit under the device when the bound could not be met there (greedy_finish.c).
 * requires a finished graph; deterministic for any number of threads. */
#include <stdlib.h>
#include <string.h>

#include "greedy_internal.h"

/* The peak search's bracket: targets at or over hi fit (or do not
 * matter: over the peak to beat), under lo miss. */
typedef struct bracket {
	int64_t hi, lo;
	int64_t step; /* the gallop's next step down */
	bool down;    /* still galloping */
	bool two;     /* a second plan, for two targets at a time */
} bracket;

/* The next targets to try (one or two) into m; returns how many. */
static int next_targets(bracket *k, int64_t m[2])
{
	if (k->down && k->hi - 4 * k->step > k->lo) {
		m[0] = k->hi - k->step;
		m[1] = k->hi - 4 * k->step;
		return k->two ? 2 : 1;
	}
	k->down = false;
	if (k->two && k->hi - k->lo > 2) {
		m[0] = k->lo + (k->hi - k->lo) / 3;
		m[1] = k->lo + 2 * ((k->hi - k->lo) / 3);
		return 2;
	}
	m[0] = k->lo + (k->hi - k->lo) / 2;
	return 1;
}

/* Narrows the bracket by the targets m[0..nm) and whether each fit. */
static void narrow(bracket *k, const int64_t m[2], int nm, const tried t[2])
{
	if (k->down && nm == 1) { /* no second plan */
		if (t[0].fits) {
			k->hi = m[0];
			k->step *= 2;
		} else {
			k->lo = m[0] + 1;
			k->down = false;
		}
	} else if (k->down) { /* m[0] > m[1] */
		if (t[1].fits) {
			k->hi = m[1];
			k->step *= 4;
		} else if (t[0].fits) {
			k->hi = m[0];
			k->lo = m[1] + 1;
			k->down = false;
		} else {
			k->lo = m[0] + 1;
			k->down = false;
		}
	} else if (t[0].fits) {
		k->hi = m[0];
	} else if (nm == 2 && t[1].fits) {
		k->lo = m[0] + 1;
		k->hi = m[1];
	} else {
		k->lo = m[nm - 1] + 1;
	}
}

/* Tries targets m[0..nm), the second on pl2 on a thread of its own; each
 * competes with r->best. The first error wins. */
static hoff_status try_targets(grun *r, plan *pl2, const int64_t m[2], int nm,
			       int passes, tried t[2], hoff_err *e)
{
	hoff_judged b2[2] = {{0}};
	hoff_status s2[2] = {HOFF_OK, HOFF_OK}, st = HOFF_OK;
	hoff_err e2[2];
	int it2[2] = {0, 0};
#pragma omp parallel for schedule(static, 1) if (nm == 2)
	for (int k = 0; k < nm; k++)
		s2[k] = greedy_try_target(k ? pl2 : &r->pl, m[k], true, passes,
					  true, r->go, &b2[k], &t[k], &it2[k],
					  &e2[k]);
	for (int k = 0; k < nm; k++) {
		r->iters += it2[k];
		if (s2[k] != HOFF_OK && st == HOFF_OK) {
			st = s2[k];
			if (e)
				*e = e2[k];
		}
		greedy_keep(&r->best, &b2[k], r->go);
		hoff_sched_free(b2[k].s);
		if (st == HOFF_OK)
			greedy_say_target(&r->o->progress, m[k], &t[k]);
	}
	return st;
}

/* Smallest peak within the overhead bound: search the target. */
static hoff_status peak_search(grun *r, hoff_err *e)
{
	greedy_say_target(&r->o->progress, r->hi, &r->t0);
	bracket k = {.hi = r->hi, .lo = r->lo > r->hi ? r->hi : r->lo};
	k.step = k.hi >> GALLOP_SHIFT > 1 ? k.hi >> GALLOP_SHIFT : 1;
	if (r->t0.fits)
		k.hi = r->t0.peak; /* on down from what it reached */
	else
		k.lo = k.hi + 1;
	/* a peak over the one to beat loses whatever it is: on down from
	 * there (targets up to it), in steps of its own size */
	int64_t beat = r->o->peak_to_beat;
	if (r->t0.fits && beat > 0 && beat < k.hi - 1) {
		k.hi = beat + 1;
		k.lo = k.lo < k.hi ? k.lo : k.hi;
		k.step = k.hi >> GALLOP_SHIFT > 1 ? k.hi >> GALLOP_SHIFT : 1;
	}
	plan pl2;
	k.two = greedy_plan_clone(&pl2, &r->pl) == HOFF_OK;
	k.down = true;
	/* A plan too big for the refinement (a million ops) is planned once
	 * per target, against the stall-free timeline: its second pass,
	 * against the simulated one, cost a plan and a simulation each and
	 * changed no answer on the million-op training graphs of
	 * bench/bench_scale.sh (both homes). */
	int passes = r->best.s && r->best.s->nsteps > BIG_OPS ? 1 : 2;
	r->pl.quit_low = pl2.quit_low = passes == 1;
	hoff_status st = HOFF_OK;
	while (r->iters < 40 && k.hi - k.lo > (k.hi >> STOP_SHIFT)) {
		int64_t m[2];
		tried t[2];
		int nm = next_targets(&k, m);
		if ((st = try_targets(r, &pl2, m, nm, passes, t, e)) != HOFF_OK)
			break;
		narrow(&k, m, nm, t);
	}
	r->pl.quit_low = false;
	if (k.two)
		greedy_plan_free(&pl2);
	return st;
}

/* Whether the peak search cannot change the answer under the device: a
 * plan too big for the refinement and for the fit under a cap (which
 * such plans skip where the cap is out of reach, greedy_fit_cap), whose
 * targets plan against the stall-free timeline only, cannot peak under
 * reach_bytes; over the device, what fits comes from the baselines. The
 * search would only lower the least peak within the bound, over the
 * device whatever it finds (a million ops: six plans and simulations). */
static bool out_of_reach(const grun *r)
{
	return r->pl.n > BIG_OPS && r->best.s && r->best.s->nsteps > BIG_OPS &&
	       r->pl.reach_bytes > r->g->device.memory_bytes;
}

hoff_status greedy_overhead_run(const hoff_graph *g, const hoff_policy_opts *o,
				int64_t work, hoff_sched **out,
				hoff_policy_report *rep, hoff_err *e)
{
	HOFF_REQUIRE(o->budget_bytes == HOFF_NONE);
	grun r;
	*out = NULL;
	hoff_status st = greedy_portfolio(&r, g, o, work, rep, e);
	if (st == HOFF_OK && !out_of_reach(&r))
		st = peak_search(&r, e);
	const hoff_judged *b = &r.best;
	bool within = b->s && b->legal && b->sum.makespan_ps <= r.go.bound;
	/* A baseline that waited cannot meet the bound (its floor passed
	 * it), so it cannot replace a best that does: resolved, it only
	 * counts for the least peak, which the report shows where nothing
	 * fits the device (floor_bytes over it). */
	if (st == HOFF_OK &&
	    !(within && (b->sum.peak_bytes <= g->device.memory_bytes ||
			 r.pl.floor_bytes <= g->device.memory_bytes)))
		st = greedy_resolve_baselines(&r, e);
	if (st == HOFF_OK && b->s && b->legal)
		st = greedy_refine_best(&r, e);
	if (st == HOFF_OK) {
		/* the device's memory caps the answer only now */
		r.go.cap = g->device.memory_bytes;
		st = greedy_fit_cap(&r, e);
	}
	if (st == HOFF_OK)
		st = greedy_report(&r, out, e);
	greedy_close(&r);
	return st;
}
