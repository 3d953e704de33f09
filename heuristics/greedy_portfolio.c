/* greedy_portfolio.c: how every greedy run starts. The baselines (none,
 * reactive, lookahead:1, lookahead:2) are candidates too, so greedy never
 * returns worse than they (but for a big run given a peak to beat,
 * hoff_policy_opts.peak_to_beat); they are planned and simulated beside
 * greedy's own set-up (greedy_plan_init) and, in overhead mode, its
 * first target (the no-offload peak), then kept in a fixed order, so the
 * result does not depend on the number of threads. A memo
 * (hoff_greedy_memo) carries the baselines' plans from one run to the
 * next on the same graph: cmd_plan's fit under the device, after an
 * overhead-mode run whose least peak is over it, plans none of them again
 * (a million ops: four plans and simulations).
 * requires a finished graph; leaves a grun that greedy_close frees,
 * whatever it returns. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baselines.h"
#include "greedy.h"
#include "greedy_internal.h"

static const struct {
	hoff_policy_kind kind;
	int32_t n;
	const char *name;
} base[GREEDY_NBASE] = {{HOFF_POLICY_NONE, 0, "none"},
			{HOFF_POLICY_REACTIVE, 0, "reactive"},
			{HOFF_POLICY_LOOKAHEAD, 1, "lookahead:1"},
			{HOFF_POLICY_LOOKAHEAD, 2, "lookahead:2"}};
/* the baselines, longest to plan first */
static const int by_cost[GREEDY_NBASE] = {3, 1, 2, 0};

/* The analysis, the bound, the goal and the report's defaults. */
static hoff_status run_init(grun *r, hoff_err *e)
{
	const hoff_policy_opts *o = r->o;
	hoff_policy_report *rep = r->rep;
	hoff_status st =
		hoff_analysis_use(r->g, o->analysis, &r->own, &r->an, e);
	if (st != HOFF_OK)
		return st;
	/* Saturated at 2^62 ps, past any instant a schedule can reach
	 * (FORMAT.md): a huge --max-overhead means "any makespan", never
	 * an overflowed cast. */
	double bound_d =
		floor((1.0 + o->max_overhead) * (double)r->an->lower_bound_ps);
	int64_t bound = bound_d < (double)HOFF_PS_LIMIT ? (int64_t)bound_d
							: HOFF_PS_LIMIT;
	/* Without a budget, the search and its refinement look for the
	 * least peak within the bound wherever it lies; the device's memory
	 * caps the answer only afterwards (a plan over it is refined down
	 * from, or replaced by the fastest one under it). */
	bool budget = o->budget_bytes != HOFF_NONE;
	r->go = (goal){.cap = budget ? o->budget_bytes : INT64_MAX,
		       .bound = budget ? HOFF_NONE : bound};
	rep->lower_bound_ps = r->an->lower_bound_ps;
	rep->noffload_peak_bytes = r->an->closed_peak_bytes;
	rep->none_peak_bytes = HOFF_NONE;
	rep->none_makespan_ps = HOFF_NONE;
	rep->floor_bytes = 0;
	rep->floor_op = HOFF_NONE;
	rep->least_peak_bytes = INT64_MAX;
	for (int i = 0; i < GREEDY_NBASE; i++) {
		r->bopt[i] = *o;
		r->bopt[i].kind = base[i].kind;
		r->bopt[i].lookahead = base[i].n;
	}
	return HOFF_OK;
}

hoff_greedy_memo *hoff_greedy_memo_new(void)
{
	return calloc(1, sizeof(hoff_greedy_memo));
}

int hoff_greedy_memo_plans(const hoff_greedy_memo *m)
{
	int n = 0;
	for (int i = 0; i < GREEDY_NBASE; i++)
		n += m->j[i].s || m->over[i];
	return n;
}

void hoff_greedy_memo_free(hoff_greedy_memo *m)
{
	if (!m)
		return;
	for (int i = 0; i < GREEDY_NBASE; i++) {
		hoff_judged_free(&m->j[i]);
		hoff_sched_free(m->over[i]);
	}
	free(m);
}

/* Whether the memo run r takes from holds every baseline's plan. */
static bool memo_full(const grun *r)
{
	for (int i = 0; r->take && i < GREEDY_NBASE; i++)
		if (!r->take->j[i].s && !r->take->over[i])
			return false;
	return r->take != NULL;
}

/* Baseline i's plan that r's memo keeps unjudged, taken out; or NULL. */
static hoff_sched *memo_unjudged(grun *r, int i)
{
	hoff_greedy_memo *m = r->rec ? r->rec : r->take;
	hoff_sched *s = m ? m->over[i] : NULL;
	if (s)
		m->over[i] = NULL;
	return s;
}

/* Hands baseline i's judged plan c to run r: it competes for r->best
 * (greedy_keep), and the memo being recorded keeps it, a copy where it
 * wins (none kept when the copy fails: the next run plans it again). */
static void keep_baseline(grun *r, int i, hoff_judged *c)
{
	hoff_greedy_memo *m = r->rec;
	if (m && c->s && !m->j[i].s) {
		m->j[i] = *c;
		if (!greedy_better(c, &r->best, r->go)) {
			c->s = NULL; /* it loses: the memo's now */
			return;
		}
		m->j[i].s = greedy_sched_copy(c->s);
		m->j[i].start = NULL;
	}
	greedy_keep(&r->best, c, r->go);
}

/* What the fan-out's tasks leave. */
typedef struct fanout {
	hoff_judged bc[GREEDY_NBASE]; /* the baselines, judged */
	hoff_judged b0;		      /* the first target's best */
	hoff_status st[GREEDY_NBASE + 1];
	hoff_err e[GREEDY_NBASE + 1];
} fanout;

/* Baseline i for the fan-out, judged into f->bc[i], or left waiting
 * (r->wait[i]) when its floor passes limit_ps (INT64_MAX: never); taken
 * from the memo where it holds the plan. A run that records plans a
 * waiting baseline in full all the same, into the memo: its floor passes
 * the bound late (a million ops: after 93% of the ops), and the next run,
 * cmd_plan's fit under the device, judges it instead of planning it. */
static void fan_baseline(grun *r, fanout *f, int i, int64_t limit_ps)
{
	const hoff_graph *g = r->g;
	hoff_greedy_memo *t = r->take;
	if (t && t->j[i].s) { /* judged by a run before */
		f->bc[i] = t->j[i];
		t->j[i] = (hoff_judged){0};
		return;
	}
	hoff_sched *s = limit_ps == INT64_MAX ? memo_unjudged(r, i) : NULL;
	bool over = false;
	if (!s)
		f->st[i] = hoff_baseline_plan_over(g, &r->bopt[i], limit_ps,
						   r->rec != NULL, &s, &over,
						   &f->e[i]);
	if (over) {
		if (r->rec)
			r->rec->over[i] = s;
		r->wait[i] = true;
		return;
	}
	if (f->st[i] == HOFF_OK)
		f->st[i] = greedy_judge(g, s, &f->bc[i], base[i].name, NULL,
					NULL, &f->e[i]);
}

/* Independent work, in parallel: greedy's own set-up and, when it
 * searches for the smallest peak, its first target (task GREEDY_NBASE,
 * taken first), beside the baselines, longest first. A big plan's
 * baselines whose floor (hoff_floor_step) passes the bound cannot meet
 * it: planning them in full and simulating them costs a plan's time each
 * and changes nothing while some schedule meets the bound and fits, so
 * they stop planning there (hoff_baseline_plan_within) and wait until
 * they might matter (greedy_resolve_baselines). */
static void fan_out(grun *r, fanout *f, bool may_wait, bool big, bool nobase)
{
	const hoff_graph *g = r->g;
	/* With a budget, the plans aim at the lower bound, the fastest any
	 * schedule can be: on a link-bound graph the compute-only timeline
	 * sets deadlines no link can meet. Without, at the compute-only
	 * timeline: the refinement (refine.c) then spends the slack. */
	int64_t aim_ps = r->go.bound != HOFF_NONE ? 0 : r->an->lower_bound_ps;
	/* A big plan's set-up runs first, on every thread (its passes split
	 * the tensors), when the baselines stop early (their floor passes
	 * the bound) or come from the memo; else beside the baselines. */
	bool init_first = big && (may_wait || memo_full(r));
	const int nb = GREEDY_NBASE;
	f->st[nb] = init_first ? greedy_plan_init(&r->pl, g, aim_ps, &f->e[nb])
			       : HOFF_OK;
#pragma omp parallel for schedule(dynamic, 1)
	for (int k = 0; k <= nb; k++) {
		int i = k == 0 ? nb : by_cost[k - 1];
		if (i == nb) {
			if (!init_first)
				f->st[i] = greedy_plan_init(&r->pl, g, aim_ps,
							    &f->e[i]);
			if (f->st[i] != HOFF_OK)
				continue;
			plan *pl = &r->pl;
			r->hi = pl->M0[0];
			r->lo = pl->floor_bytes;
			for (int32_t j = 0; j < pl->n; j++)
				if (pl->M0[j] > r->hi)
					r->hi = pl->M0[j];
			if (r->go.bound != HOFF_NONE)
				f->st[i] = greedy_try_target(pl, r->hi, true,
							     big ? 1 : 2, true,
							     r->go, &f->b0,
							     &r->t0, &r->iters,
							     &f->e[i]);
			continue;
		}
		if (nobase)
			continue;
		fan_baseline(r, f, i,
			     may_wait && big && base[i].kind != HOFF_POLICY_NONE
				     ? r->go.bound
				     : INT64_MAX);
	}
}

hoff_status greedy_portfolio(grun *r, const hoff_graph *g,
			     const hoff_policy_opts *o, int64_t work,
			     hoff_policy_report *rep, hoff_err *e)
{
	memset(r, 0, sizeof *r);
	r->g = g;
	r->o = o;
	r->rep = rep;
	r->work = work;
	hoff_greedy_memo *m = o->memo;
	if (m && !m->g) { /* empty: this run records */
		m->g = g;
		r->rec = m;
	} else if (m && m->g == g) {
		r->take = m;
	}
	hoff_status st = run_init(r, e);
	if (st != HOFF_OK)
		return st;
	/* The op floor says first whether anything can fit. */
	int64_t op_floor = 0;
	int32_t op_floor_at;
	if ((st = hoff_op_floor(g, &op_floor, &op_floor_at, e)) != HOFF_OK)
		return st;
	bool may_wait = r->go.bound != HOFF_NONE &&
			op_floor <= g->device.memory_bytes;
	/* Too big for the refinement: every schedule has a step per op. */
	bool big = g->nops > BIG_OPS;
	/* Given a peak to beat, a big run plans no baseline: its caller
	 * (greedy --recompute, on an expanded graph) has judged greedy's
	 * plan of the graph it expanded, which has the baselines, and
	 * checkpoint's (none and reactive with recomputation), and holds a
	 * plan within the bound at that peak (a million ops: the baselines
	 * cost as much as the set-up and the first target). */
	bool nobase = big && o->peak_to_beat > 0 && r->go.bound != HOFF_NONE;
	fanout f = {0};
	fan_out(r, &f, may_wait, big, nobase);
	for (int k = 0; k <= GREEDY_NBASE; k++) {
		int i = k == 0 ? GREEDY_NBASE : k - 1; /* set-up's error first
							*/
		if (f.st[i] != HOFF_OK && st == HOFF_OK) {
			st = f.st[i];
			if (e)
				*e = f.e[i];
		}
	}
	for (int i = 0; i < GREEDY_NBASE; i++) {
		hoff_judged *c = &f.bc[i];
		if (st == HOFF_OK && base[i].kind == HOFF_POLICY_NONE) {
			rep->none_peak_bytes = c->sum.peak_bytes;
			rep->none_makespan_ps = c->sum.makespan_ps;
		}
		if (st == HOFF_OK && c->legal &&
		    c->sum.peak_bytes < rep->least_peak_bytes) {
			rep->least_peak_bytes = c->sum.peak_bytes;
			rep->least_makespan_ps = c->sum.makespan_ps;
			snprintf(rep->least_source, sizeof rep->least_source,
				 "%s", base[i].name);
		}
		if (st == HOFF_OK)
			st = greedy_keep_edge(r, c, e);
		if (st == HOFF_OK)
			keep_baseline(r, i, c);
		hoff_sched_free(c->s);
	}
	if (st == HOFF_OK)
		greedy_keep(&r->best, &f.b0, r->go);
	hoff_sched_free(f.b0.s);
	return st;
}

hoff_status greedy_resolve_baselines(grun *r, hoff_err *e)
{
	const hoff_graph *g = r->g;
	hoff_policy_report *rep = r->rep;
	hoff_judged c[GREEDY_NBASE] = {{0}};
	hoff_status st[GREEDY_NBASE];
	hoff_err ce[GREEDY_NBASE];
	char name[GREEDY_NBASE][32];
#pragma omp parallel for schedule(dynamic, 1)
	for (int i = 0; i < GREEDY_NBASE; i++) {
		st[i] = HOFF_OK;
		if (!r->wait[i])
			continue;
		hoff_sched *s = memo_unjudged(r, i);
		hoff_policy_name(&r->bopt[i], name[i], sizeof name[i]);
		if (!s)
			st[i] = hoff_baseline_plan(g, &r->bopt[i], &s, &ce[i]);
		if (st[i] == HOFF_OK)
			st[i] = greedy_judge(g, s, &c[i], name[i], NULL, NULL,
					     &ce[i]);
	}
	hoff_status first = HOFF_OK;
	for (int i = 0; i < GREEDY_NBASE; i++) {
		if (!r->wait[i])
			continue;
		r->wait[i] = false;
		if (st[i] != HOFF_OK && first == HOFF_OK) {
			first = st[i];
			if (e)
				*e = ce[i];
		}
		if (first == HOFF_OK && c[i].legal &&
		    c[i].sum.peak_bytes < rep->least_peak_bytes) {
			rep->least_peak_bytes = c[i].sum.peak_bytes;
			rep->least_makespan_ps = c[i].sum.makespan_ps;
			snprintf(rep->least_source, sizeof rep->least_source,
				 "%s", name[i]);
		}
		if (first == HOFF_OK)
			first = greedy_keep_edge(r, &c[i], e);
		if (first == HOFF_OK)
			keep_baseline(r, i, &c[i]);
		hoff_sched_free(c[i].s);
		c[i].s = NULL;
	}
	return first;
}
