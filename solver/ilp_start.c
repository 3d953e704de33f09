/* ilp_start.c: a start solution from a schedule's decisions (greedy's
 * warm start), the solve, and the judging and repair of decoded
 * schedules that the pipeline and the peak search share. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis.h"
#include "emit.h"
#include "ilp.h"
#include "ilp_backend.h"
#include "ilp_internal.h"
#include "policy.h"
#include "sim.h"


/* ---------------------------------------------------------------------
 * A start solution from a schedule's decisions.
 */

/* The model interval of tensor t whose gap holds boundary q, or -1. */
static int32_t iv_of(const hoff_ilp *m, const int32_t *first, int32_t t,
		     int32_t q, bool evict)
{
	for (int32_t i = first[t]; i >= 0 && i < m->niv && m->iv[i].t == t;
	     i++) {
		const hoff_ilp_iv *v = &m->iv[i];
		if (evict && v->kind == HOFF_ILP_START)
			continue;
		if (v->a <= q && q < v->b)
			return i;
	}
	return -1;
}

void hoff_ilp_picks_of(const hoff_ilp *m, const hoff_sched *s, int32_t *pick)
{
	const hoff_graph *g = m->g;
	int32_t *first = hoff_alloc((size_t)g->ntensors + 1, sizeof *first);
	uint8_t *out = hoff_zalloc((size_t)m->niv + 1, sizeof *out);
	int32_t *at = hoff_alloc((size_t)m->niv + 1, sizeof *at);
	for (int32_t i = 0; i < m->niv; i++)
		pick[i] = HOFF_ILP_OFF;
	if (!first || !out || !at)
		goto done;
	for (int32_t t = 0; t < g->ntensors; t++)
		first[t] = -1;
	for (int32_t i = m->niv - 1; i >= 0; i--)
		first[m->iv[i].t] = i;
	for (int32_t i = 0; i < m->niv; i++)
		at[i] = HOFF_ILP_OFF;
	int32_t q = -1;
	for (int64_t k = 0; k < s->nsteps; k++) {
		const hoff_step *p = &s->step[k];
		if (p->kind == HOFF_STEP_OP) {
			q = p->id;
			continue;
		}
		if (p->kind == HOFF_STEP_PREFETCH) {
			int32_t i = iv_of(m, first, p->id, q, false);
			if (i >= 0 && at[i] == HOFF_ILP_OFF)
				at[i] = q;
		} else {
			int32_t i = iv_of(m, first, p->id, q, true);
			if (i >= 0)
				out[i] = 1;
		}
	}
	for (int32_t i = 0; i < m->niv; i++) {
		const hoff_ilp_iv *v = &m->iv[i];
		bool used = v->kind == HOFF_ILP_START || v->fixed || out[i];
		if (!used)
			continue;
		if (v->b >= m->n) {
			pick[i] = (v->zs || v->zd || v->fixed) ? m->n - 1
							       : HOFF_ILP_OFF;
			continue;
		}
		if (v->rmap < 0)
			continue;
		int32_t p = at[i] == HOFF_ILP_OFF ? v->b - 1 : at[i];
		if (p < v->lo)
			p = v->lo;
		/* the latest allowed boundary at or before p: the same
		 * binding instants covered, issued no later */
		int32_t c = hoff_ilp_r_at(m, v, p);
		if (!c) {
			pick[i] = v->kind == HOFF_ILP_START ? v->r_first
							   : HOFF_ILP_OFF;
			continue;
		}
		pick[i] = m->carg1[c];
	}
done:
	free(first);
	free(out);
	free(at);
}

/* Sets every U column from the rows that define it: 1 when its channel
 * is saturated in its window under x. */
static void set_saturation(const hoff_ilp *m, double *x)
{
	for (int32_t i = 1; i <= m->nrows; i++) {
		if (m->rtag[i] != 'W')
			continue;
		double act = 0, uc = 0;
		int32_t U = 0;
		for (int64_t k = m->roff[i]; k < m->roff[i + 1]; k++) {
			int32_t c = m->rcol[k];
			if (m->ctag[c] == HOFF_COL_U) {
				U = c;
				uc = m->rval[k];
			} else {
				act += m->rval[k] * x[c];
			}
		}
		if (U)
			x[U] = act + uc >= m->rrhs[i] - 1e-9 ? 1 : 0;
	}
}

/* Fraction of [a, b] done by time t. */
static double done_by(int64_t a, int64_t b, int64_t t)
{
	if (t >= b)
		return 1;
	if (t <= a)
		return 0;
	return (double)(t - a) / (double)(b - a);
}

bool hoff_ilp_start(const hoff_ilp *m, const int32_t *pick, double *x,
		    hoff_err *e)
{
	const hoff_graph *g = m->g;
	const int32_t n = m->n;
	bool ok = false;
	hoff_sched *s = NULL;
	hoff_sim_result r = {0};
	double *y = hoff_zalloc((size_t)m->ncols + 1, sizeof *y);
	int32_t *first = hoff_alloc((size_t)g->ntensors + 1, sizeof *first);
	int64_t *fs = hoff_zalloc((size_t)m->niv + 1, sizeof *fs);
	int64_t *fe = hoff_zalloc((size_t)m->niv + 1, sizeof *fe);
	int64_t *ss = hoff_zalloc((size_t)m->niv + 1, sizeof *ss);
	int64_t *se = hoff_zalloc((size_t)m->niv + 1, sizeof *se);
	int32_t *step_iv = NULL;
	if (!y || !first || !fs || !fe || !ss || !se)
		goto out;
	/* The schedule of the decisions, simulated. */
	if (hoff_ilp_emit(g, m->iv, m->niv, pick, "greedy", &s, e) != HOFF_OK)
		goto out;
	hoff_sim_opts so = hoff_sim_defaults();
	so.budget_bytes = INT64_MAX;
	so.timeline = true;
	so.op_times = true;
	if (hoff_sim_run(g, s, &so, &r, e) != HOFF_OK || !r.valid)
		goto out;
	step_iv = hoff_alloc((size_t)s->nsteps + 1, sizeof *step_iv);
	if (!step_iv)
		goto out;
	for (int32_t t = 0; t < g->ntensors; t++)
		first[t] = -1;
	for (int32_t i = m->niv - 1; i >= 0; i--)
		first[m->iv[i].t] = i;
	int32_t q = -1;
	for (int64_t k = 0; k < s->nsteps; k++) {
		const hoff_step *p = &s->step[k];
		step_iv[k] = -1;
		if (p->kind == HOFF_STEP_OP)
			q = p->id;
		else if (p->kind != HOFF_STEP_DETACH)
			step_iv[k] = iv_of(m, first, p->id, q,
					   p->kind == HOFF_STEP_STORE);
	}
	for (size_t k = 0; k < r.tl.nev; k++) {
		const hoff_event *ev = &r.tl.ev[k];
		int32_t i = ev->step >= 0 ? step_iv[ev->step] : -1;
		if (i < 0)
			continue;
		if (ev->kind == HOFF_EV_STORE) {
			ss[i] = ev->start_ps;
			se[i] = ev->end_ps;
		} else if (ev->kind == HOFF_EV_PREFETCH) {
			fs[i] = ev->start_ps;
			fe[i] = ev->end_ps;
		}
	}
	/* Every column from the timeline: op k starts at S[k]. */
	const int64_t *S = r.op_start_ps;
#define END(k) ((k) < 0 ? 0 : S[k] + g->op[k].time_ps)
	for (int32_t j = 1; j <= m->ncols; j++) {
		int32_t a0 = m->carg0[j], a1 = m->carg1[j];
		int tag = m->ctag[j];
		const hoff_col_kind_def *d = hoff_col_kind_of(tag);
		bool per_iv = d->per_interval;
		bool sel = per_iv && pick[a0] != HOFF_ILP_OFF;
		switch (d->warm) {
		case HOFF_WARM_STALL:
			y[j] = (double)(a0 < n ? S[a0] - END(a0 - 1)
					       : r.summary.makespan_ps -
							 END(n - 1)) /
			       m->tu;
			break;
		case HOFF_WARM_PEAK:
			y[j] = (double)r.summary.peak_bytes / m->bu;
			break;
		case HOFF_WARM_STORED:
			y[j] = sel && se[a0] > 0;
			break;
		case HOFF_WARM_DETACHED:
			y[j] = sel && se[a0] == 0;
			break;
		case HOFF_WARM_ISSUED:
			y[j] = sel && pick[a0] <= a1;
			break;
		case HOFF_WARM_COUNT:
			y[j] = 0;
			for (int32_t i = 0; i < m->niv; i++) {
				const hoff_ilp_iv *v = &m->iv[i];
				if (v->tier != a0 || v->b >= n ||
				    pick[i] == HOFF_ILP_OFF)
					continue;
				if (tag == HOFF_COL_O)
					y[j] += v->kind != HOFF_ILP_START &&
						v->b <= a1;
				else
					y[j] += v->kind == HOFF_ILP_START &&
						v->rmap >= 0 && a1 < v->b - 1 &&
						pick[i] <= a1 &&
						hoff_ilp_r_at(m, v, a1);
			}
			break;
		case HOFF_WARM_STORE_DONE: {
			int32_t k = hoff_ilp_stage_of(a1);
			int64_t tw = a1 % 2 == 0 ? S[k] : END(k - 1);
			y[j] = se[a0] > 0 && se[a0] <= tw;
			break;
		}
		case HOFF_WARM_SHARE: {
			int32_t k = a1 / 2;
			int64_t t1 = a1 % 2 ? END(k)
				     : k < n ? S[k]
					     : r.summary.makespan_ps;
			bool f = m->ctag[j] == HOFF_COL_YF;
			int64_t a = f ? fs[a0] : ss[a0], b = f ? fe[a0] : se[a0];
			y[j] = sel && b > 0 ? done_by(a, b, t1) : 0;
			break;
		}
		case HOFF_WARM_SATURATED: /* set_saturation, below */
			break;
		}
		if (y[j] < m->clb[j])
			y[j] = m->clb[j];
		if (y[j] > m->cub[j])
			y[j] = m->cub[j];
	}
#undef END
	set_saturation(m, y);
	int32_t row;
	double viol = hoff_ilp_violation(m, y, &row);
	if (viol > 1e-6) {
		/* The stage model is coarser than FIFO: keep the decisions
		 * and the store completions, solve for the rest. */
		bool feasible = false;
		if (hoff_glpk_complete(m, y, &feasible, e) != HOFF_OK ||
		    !feasible)
			goto out;
		set_saturation(m, y);
		viol = hoff_ilp_violation(m, y, &row);
	}
	if (viol > 1e-6)
		goto out;
	memcpy(x, y, ((size_t)m->ncols + 1) * sizeof *x);
	ok = true;
out:
	free(y);
	free(first);
	free(fs);
	free(fe);
	free(ss);
	free(se);
	free(step_iv);
	hoff_sim_result_free(&r);
	hoff_sched_free(s);
	return ok;
}

hoff_status hoff_ilp_solve(const hoff_ilp *m, const double *start,
			   hoff_ilp_sol *sol, hoff_err *e)
{
	memset(sol, 0, sizeof *sol);
	if (m->o.write_lp || m->o.write_mps) {
		hoff_status st =
			hoff_glpk_write(m, m->o.write_lp, m->o.write_mps, e);
		if (st != HOFF_OK)
			return st;
	}
	if (m->infeasible) {
		sol->status = HOFF_ILP_INFEASIBLE;
		snprintf(sol->note, sizeof sol->note, "%s", m->why);
		return HOFF_OK;
	}
	return hoff_glpk_solve(m, start, sol, e);
}

/* ---------------------------------------------------------------------
 * The pipeline.
 */

double hoff_exact_objective(bool budget_mode, const hoff_summary *s)
{
	return budget_mode ? hoff_s(s->stall_ps) : (double)s->peak_bytes;
}

hoff_status hoff_ilp_judge(const hoff_ilp *m, const hoff_graph *g,
			   hoff_sched *s, judged *j, hoff_err *e)
{
	hoff_sim_opts o = hoff_sim_defaults();
	o.budget_bytes = INT64_MAX;
	o.op_times = true;
	hoff_sim_result r;
	hoff_status st = hoff_sim_run(g, s, &o, &r, e);
	if (st != HOFF_OK)
		return st;
	j->s = s;
	j->sum = r.summary;
	j->peak_op = g->nops;
	if (r.op_start_ps)
		for (int32_t k = g->nops - 1; k >= 0 && r.op_start_ps[k] >=
							    r.peak_ps; k--)
			j->peak_op = k;
	j->legal = r.valid;
	j->fits = r.valid && r.summary.peak_bytes <= m->cap_bytes &&
		  (m->budget_mode || r.summary.makespan_ps <= m->bound_ps);
	hoff_sim_result_free(&r);
	return HOFF_OK;
}

/* Is a better than b under the objective (greedy.c's order)? */
bool hoff_ilp_better(const hoff_ilp *m, const judged *a, const judged *b)
{
	if (!a->s || !a->legal)
		return false;
	if (!b->s || !b->legal)
		return true;
	if (a->fits != b->fits)
		return a->fits;
	if (m->budget_mode || !a->fits) {
		if (a->sum.makespan_ps != b->sum.makespan_ps)
			return a->sum.makespan_ps < b->sum.makespan_ps;
		return a->sum.peak_bytes < b->sum.peak_bytes;
	}
	if (a->sum.peak_bytes != b->sum.peak_bytes)
		return a->sum.peak_bytes < b->sum.peak_bytes;
	return a->sum.makespan_ps < b->sum.makespan_ps;
}

/* Simulates the decisions trial; when better than *cur, they replace it
 * (pick too). 1: taken, 0: not, -1: *st is an error. */
static int try_picks(const hoff_ilp *m, const hoff_ilp *mv,
		     const hoff_graph *g, const int32_t *trial, int32_t *pick,
		     judged *cur, hoff_status *st, hoff_err *e)
{
	hoff_sched *s = NULL;
	hoff_err e2;
	judged j = {0};
	if (hoff_ilp_emit(g, mv->iv, mv->niv, trial, "exact", &s, &e2) !=
	    HOFF_OK)
		return 0;
	if ((*st = hoff_ilp_judge(m, g, s, &j, e)) != HOFF_OK) {
		hoff_sched_free(s);
		return -1;
	}
	if (!hoff_ilp_better(m, &j, cur)) {
		hoff_sched_free(j.s);
		return 0;
	}
	hoff_sched_free(cur->s);
	*cur = j;
	memcpy(pick, trial, (size_t)mv->niv * sizeof *pick);
	return 1;
}

/* FIFO repair: the stage model lets transfers share a channel where the
 * machine serves them first come first served, so the decoded schedule
 * can simulate a little worse than predicted. First-improvement hill
 * climbing on the decisions, judged by the simulator, until no move
 * helps or the time is up; returns the number of moves taken. Moves:
 * each prefetch one boundary earlier or later, or an interval dropped;
 * and two aimed at the peak's op k (the first starting at or after the
 * peak), which single steps cannot reach across a plateau: a prefetch
 * issued before op k for a later op issued after op k instead, and, for
 * a store issued before op k, every store ahead of it on its channel
 * dropped (so that it can finish before the peak). On
 * deepseek-v3-decode-4l the second frees a KV block by op 9 (the stores
 * of two weights ahead of it dropped), then the first issues the first
 * expert after op 5 instead of at time 0: 7808993792 -> 7808952832 B. */
int hoff_ilp_repair(const hoff_ilp *m, const hoff_ilp *mv, const hoff_graph *g,
		    int32_t *pick, judged *cur, double until, hoff_status *st,
		    hoff_err *e)
{
	int moves = 0, r = 0;
	int32_t *trial = hoff_alloc((size_t)mv->niv + 1, sizeof *trial);
	if (!trial)
		return 0;
	const size_t sz = (size_t)mv->niv * sizeof *trial;
	bool improved = true;
	while (improved && hoff_now_s() < until) {
		improved = false;
		for (int32_t i = 0; i < mv->niv && hoff_now_s() < until; i++) {
			const hoff_ilp_iv *v = &mv->iv[i];
			if (pick[i] == HOFF_ILP_OFF)
				continue;
			const int32_t k = cur->peak_op;
			if (v->b >= mv->n) {
				/* a tail: clear the stores ahead of its own */
				if (v->kind != HOFF_ILP_DIRTY || v->a >= k)
					continue;
				memcpy(trial, pick, sz);
				bool any = false;
				for (int32_t j = 0; j < mv->niv; j++) {
					const hoff_ilp_iv *u = &mv->iv[j];
					if (j != i && u->kind == HOFF_ILP_DIRTY &&
					    u->tier == v->tier && u->a < v->a &&
					    trial[j] != HOFF_ILP_OFF) {
						trial[j] = HOFF_ILP_OFF;
						any = true;
					}
				}
				if (any && (r = try_picks(m, mv, g, trial, pick,
							  cur, st, e)) != 0)
					goto took;
				continue;
			}
			int32_t cand[4] = {
				pick[i] - 1, pick[i] + 1,
				v->kind == HOFF_ILP_START ? pick[i]
							  : HOFF_ILP_OFF,
				pick[i] < k && v->b > k ? k : pick[i]};
			for (int c = 0; c < 4; c++) {
				int32_t p = cand[c];
				if (p == pick[i] ||
				    (p != HOFF_ILP_OFF &&
				     (p < v->lo || p > v->b - 1)))
					continue;
				memcpy(trial, pick, sz);
				trial[i] = p;
				if ((r = try_picks(m, mv, g, trial, pick, cur,
						   st, e)) != 0)
					goto took;
			}
			continue;
took:
			if (r < 0)
				goto out;
			moves++;
			improved = true;
}
	}
out:
	free(trial);
	return moves;
}

/* The decisions pick, emitted, judged into *sim (the caller frees
 * sim->s), repaired on the simulator until `until`, and mapped back into
 * m (the repair moves off the model's boundaries: back onto them, issued
 * no later) as x; true when that is a solution of m. */
bool hoff_ilp_repair_mapped(const hoff_graph *g, const hoff_ilp *m,
			    int32_t *pick, double until, double *x, judged *sim,
			    hoff_status *st, hoff_err *e)
{
	hoff_sched *s = NULL;
	hoff_err e2;
	*st = HOFF_OK;
	if (hoff_ilp_emit(g, m->iv, m->niv, pick, "exact", &s, &e2) !=
	    HOFF_OK)
		return false;
	if ((*st = hoff_ilp_judge(m, g, s, sim, e)) != HOFF_OK) {
		hoff_sched_free(s);
		return false;
	}
	hoff_ilp_repair(m, m, g, pick, sim, until, st, e);
	if (*st != HOFF_OK)
		return false;
	hoff_ilp_picks_of(m, sim->s, pick);
	return hoff_ilp_start(m, pick, x, &e2);
}

/* A probe answered without branching: greedy planned under the probe's
 * cap, its decisions repaired on the simulator toward less stall (the
 * repair's order under a budget: fitting first, then makespan), then
 * mapped into the probe's model pm. True when the mapping is a solution
 * of pm, stall row included (x, 1-based); the simulated schedule is
 * left in *sim either way (the caller frees it). Greedy under a cap
 * often meets a stall bound that greedy's own peak search missed. */
bool hoff_ilp_probe_heuristic(const hoff_graph *g, const hoff_ilp *pm,
			      double until, double *x, judged *sim,
			      hoff_status *st, hoff_err *e)
{
	*st = HOFF_OK;
	hoff_policy_opts po = hoff_policy_defaults();
	po.kind = HOFF_POLICY_GREEDY;
	po.budget_bytes = pm->cap_bytes;
	po.analysis = pm->o.analysis;
	hoff_policy_report rep;
	hoff_sched *s = NULL;
	if ((*st = hoff_policy_run(g, &po, &s, &rep, e)) != HOFF_OK)
		return false;
	int32_t *pick = hoff_alloc((size_t)pm->niv + 1, sizeof *pick);
	if (!pick) {
		hoff_sched_free(s);
		*st = hoff_seterr(e, HOFF_ENOMEM, "out of memory");
		return false;
	}
	hoff_ilp_picks_of(pm, s, pick);
	hoff_sched_free(s);
	bool ok = hoff_ilp_repair_mapped(g, pm, pick, until, x, sim, st, e);
	free(pick);
	return ok;
}
