/* ilp_start.c: a start solution from a schedule's decisions (greedy's
 * warm start): the decisions behind a schedule, and every column read
 * off its simulation. */
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
	for (int32_t i = first[t]; i >= 0 && i < m->niv && m->iv[i].c.t == t;
	     i++) {
		const hoff_ilp_iv *v = &m->iv[i];
		if (evict && v->c.kind == HOFF_CAND_START)
			continue;
		if (v->c.a <= q && q < v->c.b)
			return i;
	}
	return -1;
}

/* (v2) The recompute candidates schedule s uses, into pick[0..nrc): a
 * drop of t after op a, and a recompute of p after op b - 1 (before op
 * b's step). */
static void rc_picks_of(const hoff_ilp *m, const hoff_sched *s, int32_t *pick)
{
	if (m->nrc == 0)
		return;
	uint8_t *got = hoff_zalloc((size_t)m->nrc + 1, sizeof *got);
	if (!got)
		return;
	int32_t q = -1;
	for (int64_t k = 0; k < s->nsteps; k++) {
		const hoff_step *p = &s->step[k];
		if (p->kind == HOFF_STEP_OP)
			q = p->id;
		for (int32_t j = 0; j < m->nrc; j++) {
			const hoff_ilp_rc *c = &m->rc[j];
			if (p->kind == HOFF_STEP_DROP && p->id == c->t &&
			    q == c->a)
				got[j] |= 1;
			if (p->kind == HOFF_STEP_RECOMPUTE && p->id == c->p &&
			    q == c->b - 1)
				got[j] |= 2;
		}
	}
	for (int32_t j = 0; j < m->nrc; j++)
		if (got[j] == 3)
			pick[j] = m->rc[j].b - 1;
	free(got);
}

void hoff_ilp_picks_of(const hoff_ilp *m, const hoff_sched *s, int32_t *pick)
{
	const hoff_graph *g = m->g;
	int32_t *first = hoff_alloc((size_t)g->ntensors + 1, sizeof *first);
	uint8_t *out = hoff_zalloc((size_t)m->niv + 1, sizeof *out);
	int32_t *at = hoff_alloc((size_t)m->niv + 1, sizeof *at);
	for (int32_t i = 0; i < hoff_ilp_npick(m); i++)
		pick[i] = HOFF_ILP_OFF;
	if (!first || !out || !at)
		goto done;
	rc_picks_of(m, s, pick + m->niv);
	for (int32_t t = 0; t < g->ntensors; t++)
		first[t] = -1;
	for (int32_t i = m->niv - 1; i >= 0; i--)
		first[m->iv[i].c.t] = i;
	for (int32_t i = 0; i < m->niv; i++)
		at[i] = HOFF_ILP_OFF;
	int32_t q = -1;
	for (int64_t k = 0; k < s->nsteps; k++) {
		const hoff_step *p = &s->step[k];
		if (p->kind == HOFF_STEP_OP) {
			q = p->id;
			continue;
		}
		if (p->kind == HOFF_STEP_DROP || p->kind == HOFF_STEP_RECOMPUTE)
			continue;
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
		bool used = v->c.kind == HOFF_CAND_START || v->fixed || out[i];
		if (!used)
			continue;
		if (v->c.b >= m->n) {
			pick[i] = (v->zs || v->zd || v->fixed) ? m->n - 1
							       : HOFF_ILP_OFF;
			continue;
		}
		if (v->rmap < 0)
			continue;
		int32_t p = at[i] == HOFF_ILP_OFF ? v->c.b - 1 : at[i];
		if (p < v->lo)
			p = v->lo;
		/* the latest allowed boundary at or before p: the same
		 * binding instants covered, issued no later */
		int32_t c = hoff_ilp_r_at(m, v, p);
		if (!c) {
			pick[i] = v->c.kind == HOFF_CAND_START ? v->r_first
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
	if (hoff_ilp_emit_model(g, m, pick, "greedy", &s, e) != HOFF_OK)
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
		first[m->iv[i].c.t] = i;
	int32_t q = -1;
	for (int64_t k = 0; k < s->nsteps; k++) {
		const hoff_step *p = &s->step[k];
		step_iv[k] = -1;
		if (p->kind == HOFF_STEP_OP)
			q = p->id;
		else if (p->kind != HOFF_STEP_DETACH &&
			 p->kind != HOFF_STEP_DROP &&
			 p->kind != HOFF_STEP_RECOMPUTE)
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
			/* (v2) less the re-runs before op a0 */
			for (int32_t c = 0; a0 < n && c < m->nrc; c++)
				if (m->rc[c].b == a0 &&
				    pick[m->niv + c] != HOFF_ILP_OFF)
					y[j] -= (double)g->op[m->rc[c].p]
							.time_ps /
						m->tu;
			break;
		case HOFF_WARM_RECOMPUTED:
			y[j] = pick[m->niv + a0] != HOFF_ILP_OFF;
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
				if (v->c.tier != a0 || v->c.b >= n ||
				    pick[i] == HOFF_ILP_OFF)
					continue;
				if (tag == HOFF_COL_O)
					y[j] += v->c.kind != HOFF_CAND_START &&
						v->c.b <= a1;
				else
					y[j] += v->c.kind == HOFF_CAND_START &&
						v->rmap >= 0 &&
						a1 < v->c.b - 1 &&
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
