/* ilp_solve.c: the solve (through the backend, glpk_backend.c), the LP
 * relaxation's bound, and what a solution says: its decisions, its
 * model objective, and what the model predicts for it (makespan,
 * peak). */
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

void hoff_ilp_decode(const hoff_ilp *m, const double *x, int32_t *pick)
{
	for (int32_t i = 0; i < m->niv; i++) {
		const hoff_ilp_iv *v = &m->iv[i];
		bool sel = v->c.kind == HOFF_CAND_START || v->fixed ||
			   (v->zs && x[v->zs] > 0.5) ||
			   (v->zd && x[v->zd] > 0.5);
		pick[i] = HOFF_ILP_OFF;
		if (!sel)
			continue;
		if (v->c.b >= m->n) {
			pick[i] = m->n - 1;
			continue;
		}
		if (v->rmap < 0) {
			pick[i] = HOFF_ILP_OFF; /* cannot come back: unused */
			continue;
		}
		pick[i] = v->r_last;
		for (int32_t q = v->r_first; q <= v->r_last; q++) {
			int32_t c = hoff_ilp_r_at(m, v, q);
			if (c && x[c] > 0.5) {
				pick[i] = q;
				break;
			}
		}
	}
	for (int32_t j = 0; j < m->nrc; j++)
		pick[m->niv + j] = x[m->rc[j].col] > 0.5 ? m->rc[j].b - 1
							 : HOFF_ILP_OFF;
}

/* (v2) Recompute candidate j is chosen in x. */
static bool rc_on(const hoff_ilp *m, const double *x, int32_t j)
{
	return x[m->rc[j].col] > 0.5;
}

/* (v2) The bytes of the chosen recompute candidates away at instant w. */
static int64_t rc_away(const hoff_ilp *m, const double *x, int32_t w)
{
	int64_t b = 0;
	for (int32_t j = 0; j < m->nrc; j++)
		if (rc_on(m, x, j) && hoff_ilp_rc_absent(&m->rc[j], w))
			b += m->g->tensor[m->rc[j].t].bytes;
	return b;
}

/* (v2) The most memory while a chosen re-run runs (rows (17)), given
 * mem_at(w) for w = 2b - 1 (with every chosen tensor away there). */
static int64_t rc_peak(const hoff_ilp *m, const double *x,
		       int64_t (*mem_at)(const hoff_ilp *, const double *,
					 int32_t))
{
	int64_t peak = 0, base = 0;
	for (int32_t j = 0; j < m->nrc; j++) {
		const hoff_ilp_rc *c = &m->rc[j];
		if (j == 0 || c->b != m->rc[j - 1].b)
			base = mem_at(m, x, 2 * c->b - 1);
		if (!rc_on(m, x, j))
			continue;
		base += m->g->tensor[c->t].bytes;
		int64_t at = base + m->g->op[c->p].workspace_bytes;
		if (at > peak)
			peak = at;
	}
	return peak;
}

/* Instants the model can constrain: op starts, and the end of op k - 1
 * where op k can stall (elsewhere memory is at most the next op start's,
 * as the stall window has no length). */
bool hoff_ilp_measurable(const hoff_ilp *m, int32_t w)
{
	return w % 2 == 0 || m->s_col[hoff_ilp_stage_of(w)] != 0;
}

/* The absence term of interval v at instant w under x (the memory rows'
 * zd - R + Q, 0 outside v's range): with round, each column read as 0 or
 * 1 first. */
static double absence(const hoff_ilp *m, const hoff_ilp_iv *v, int32_t w,
		      const double *x, bool round)
{
	int32_t w0, w1;
	hoff_ilp_absent_range(v, m->n, &w0, &w1);
	if (w < w0 || w > w1)
		return 0;
#define COL(c) ((c) ? (round ? (double)(x[c] > 0.5) : x[c]) : 0)
	double ab = v->c.kind == HOFF_CAND_START || v->fixed ? 1 : COL(v->zd);
	if (v->c.b < m->n)
		ab -= COL(hoff_ilp_r_at(m, v, hoff_ilp_bound_of(w)));
	if (v->zs)
		ab += COL(hoff_ilp_q_at(m, v, w));
#undef COL
	return ab;
}

/* Model memory at instant w under x, decisions rounded. */
static int64_t mem_exact(const hoff_ilp *m, const double *x, int32_t w)
{
	int64_t mem = m->fixed[IDX(w)] - rc_away(m, x, w);
	for (int32_t i = 0; i < m->niv; i++)
		mem -= m->iv[i].c.bytes *
		       (int64_t)absence(m, &m->iv[i], w, x, true);
	return mem;
}

int64_t hoff_ilp_model_peak(const hoff_ilp *m, const double *x)
{
	/* In integers: peaks are compared to the byte. Decisions are
	 * rounded; a store counts as complete only where the column in
	 * force (the latest at or before the instant) says so, which is
	 * what the memory rows read, and never more than the machine. */
	int64_t peak = 0;
	for (int32_t w = -1; w <= 2 * m->n - 2; w++) {
		if (!hoff_ilp_measurable(m, w))
			continue;
		int64_t mem = mem_exact(m, x, w);
		if (mem > peak)
			peak = mem;
	}
	if (m->nrc > 0) {
		int64_t rp = rc_peak(m, x, mem_exact);
		if (rp > peak)
			peak = rp;
	}
	return peak;
}

void hoff_ilp_predict(const hoff_ilp *m, const double *x, int64_t *makespan_ps,
		      int64_t *peak_bytes)
{
	double stall = 0;
	for (int32_t k = 0; k <= m->n; k++)
		if (m->s_col[k])
			stall += x[m->s_col[k]];
	for (int32_t j = 0; j < m->nrc; j++) /* (v2) re-runs */
		if (rc_on(m, x, j))
			stall += (double)m->g->op[m->rc[j].p].time_ps / m->tu;
	*makespan_ps = m->compute_ps + (int64_t)llround(stall * m->tu);
	int64_t peak = 0;
	for (int32_t w = -1; w <= 2 * m->n - 2; w++) {
		double mem =
			(double)m->fixed[IDX(w)] - (double)rc_away(m, x, w);
		for (int32_t i = 0; i < m->niv; i++)
			mem -= (double)m->iv[i].c.bytes *
			       floor(absence(m, &m->iv[i], w, x, false) + 0.5);
		if (mem > (double)peak)
			peak = (int64_t)llround(mem);
	}
	if (m->nrc > 0) {
		int64_t rp = rc_peak(m, x, mem_exact);
		if (rp > peak)
			peak = rp;
	}
	if (!m->budget_mode && m->peak_col)
		peak = (int64_t)llround(x[m->peak_col] * m->bu);
	*peak_bytes = peak;
}

hoff_status hoff_ilp_solve(const hoff_ilp *m, const double *start,
			   hoff_ilp_sol *sol, hoff_err *e)
{
	memset(sol, 0, sizeof *sol);
	if (m->rq.write_files && (m->o.write_lp || m->o.write_mps)) {
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

hoff_status hoff_ilp_lp_bound(const hoff_ilp *m, double time_limit_s,
			      double *bound, bool *ok, hoff_err *e)
{
	*ok = false;
	if (m->infeasible)
		return HOFF_OK;
	return hoff_glpk_lp(m, time_limit_s, bound, ok, e);
}
