/* ilp_arrays.c: the model's own arrays (hoff_ilp): columns, rows in CSR
 * form built one at a time (rowb), and the dense maps from an index
 * (boundary, instant, window) to the column in force there. The
 * primitives that the build (ilp_model.c) and the constraint families
 * (ilp_rows.c) both call; they call nothing of either. Also the order in
 * which evictions are issued, which both need. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ilp.h"
#include "ilp_internal.h"

int hoff_ilp_by_evict(const void *x, const void *y, void *ctx)
{
	const hoff_ilp_iv *iv = ctx;
	const hoff_ilp_iv *a = &iv[*(const int32_t *)x];
	const hoff_ilp_iv *b = &iv[*(const int32_t *)y];
	if (a->c.a != b->c.a)
		return a->c.a < b->c.a ? -1 : 1;
	if (a->c.b != b->c.b)
		return a->c.b < b->c.b ? -1 : 1;
	return (a->c.t > b->c.t) - (a->c.t < b->c.t);
}

/* ---------------------------------------------------------------------
 * Model arrays.
 */

const hoff_progress *hoff_ilp_progress(const hoff_ilp *m)
{
	static const hoff_progress none = {0};
	return m->rq.quiet ? &none : &m->o.progress;
}

double hoff_ilp_objective_value(const hoff_ilp *m, double obj)
{
	/* obj * tu is a fractional ps count (an LP's): hoff_s() would round
	 * it to whole ps */
	return m->budget_mode ? obj * m->tu / 1e12 : obj * m->bu;
}

double hoff_ilp_phi(const hoff_ilp *m, int chan)
{
	const hoff_tier *t = &m->g->tier[chan / 2];
	int32_t F = chan % 2 ? t->d2h_duplex_ppm : t->h2d_duplex_ppm;
	return F == HOFF_DUPLEX_ONE ? 1.0 : (double)F / 1e6;
}

bool hoff_ilp_win_exists(const hoff_ilp *m, int32_t w)
{
	if (w < 0 || w > 2 * m->n)
		return false;
	if (w % 2 == 0)
		return m->s_col[w / 2] != 0;
	return m->g->op[(w - 1) / 2].time_ps > 0;
}

int32_t hoff_ilp_npick(const hoff_ilp *m)
{
	return m->niv + m->nrc;
}

bool hoff_ilp_rc_absent(const hoff_ilp_rc *c, int32_t w)
{
	return 2 * c->a + 1 <= w && w <= 2 * c->b - 1;
}

double hoff_ilp_rc_time(const hoff_ilp *m, int32_t k)
{
	double d = 0;
	if (m->nrc == 0 || k < 0 || k >= m->n)
		return 0;
	for (int32_t j = m->rc_off[k]; j < m->rc_off[k + 1]; j++)
		d += (double)m->g->op[m->rc[j].p].time_ps / m->tu;
	return d;
}

void hoff_ilp_rc_len(const hoff_ilp *m, rowb *r, int32_t k, double coef)
{
	if (m->nrc == 0 || k < 0 || k >= m->n)
		return;
	for (int32_t j = m->rc_off[k]; j < m->rc_off[k + 1]; j++)
		hoff_ilp_row_add(r, m->rc[j].col,
				 coef * (double)m->g->op[m->rc[j].p].time_ps /
					 m->tu);
}

void hoff_ilp_rc_mem(const hoff_ilp *m, rowb *r, int32_t w)
{
	for (int32_t j = 0; j < m->nrc; j++)
		if (hoff_ilp_rc_absent(&m->rc[j], w))
			hoff_ilp_row_add(
				r, m->rc[j].col,
				-(double)m->g->tensor[m->rc[j].t].bytes /
					m->bu);
}

/* Parallel arrays resized to cap items (their capacity is the owner's). */
#define RESIZE(a, cap) hoff_resize((void **)&(a), (cap), sizeof *(a))

int32_t hoff_ilp_add_col(hoff_ilp *m, double lb, double ub, double obj,
			 bool bin, hoff_col_kind tag, int32_t a0, int32_t a1)
{
	if (m->ncols >= INT_MAX - 2)
		return 0;
	size_t need = (size_t)m->ncols + 2;
	if (need > m->col_cap) {
		size_t cap = m->col_cap ? 2 * m->col_cap : 1024;
		if (!RESIZE(m->clb, cap) || !RESIZE(m->cub, cap) ||
		    !RESIZE(m->cobj, cap) || !RESIZE(m->cbin, cap) ||
		    !RESIZE(m->ctag, cap) || !RESIZE(m->carg0, cap) ||
		    !RESIZE(m->carg1, cap))
			return 0;
		m->col_cap = cap;
	}
	int32_t j = ++m->ncols;
	m->clb[j] = lb;
	m->cub[j] = ub;
	m->cobj[j] = obj;
	m->cbin[j] = bin;
	m->ctag[j] = (uint8_t)tag;
	m->carg0[j] = a0;
	m->carg1[j] = a1;
	if (bin)
		m->nbin++;
	return j;
}

void hoff_ilp_row_begin(rowb *r, int type, double rhs, char tag, int32_t arg)
{
	hoff_ilp *m = r->m;
	if (r->oom)
		return;
	if (m->nrows >= INT_MAX - 2) {
		r->oom = true;
		return;
	}
	size_t need = (size_t)m->nrows + 3;
	if (need > m->row_cap) {
		size_t cap = m->row_cap ? 2 * m->row_cap : 1024;
		if (!RESIZE(m->rtype, cap) || !RESIZE(m->rrhs, cap) ||
		    !RESIZE(m->rtag, cap) || !RESIZE(m->rarg, cap) ||
		    !RESIZE(m->roff, cap)) {
			r->oom = true;
			return;
		}
		m->row_cap = cap;
	}
	int32_t i = ++m->nrows;
	m->rtype[i] = (uint8_t)type;
	m->rrhs[i] = rhs;
	m->rtag[i] = (uint8_t)tag;
	m->rarg[i] = arg;
	m->roff[i] = (int64_t)m->nnz;
	r->konst = 0;
}

void hoff_ilp_row_add(rowb *r, int32_t col, double v)
{
	hoff_ilp *m = r->m;
	if (r->oom || col == 0 || v == 0)
		return;
	if (r->pos[col] >= 0) {
		m->rval[r->pos[col]] += v;
		return;
	}
	if (m->nnz + 1 > m->nz_cap) {
		size_t cap = m->nz_cap ? 2 * m->nz_cap : 4096;
		if (!RESIZE(m->rcol, cap) || !RESIZE(m->rval, cap)) {
			r->oom = true;
			return;
		}
		m->nz_cap = cap;
	}
	r->pos[col] = (int64_t)m->nnz;
	m->rcol[m->nnz] = col;
	m->rval[m->nnz] = v;
	m->nnz++;
}

/* Ends the open row: drops cancelled entries, moves the constant to the
 * right-hand side; a row left without columns is checked and removed. */
void hoff_ilp_row_end(rowb *r)
{
	hoff_ilp *m = r->m;
	if (r->oom)
		return;
	int32_t i = m->nrows;
	size_t out = (size_t)m->roff[i];
	for (size_t k = (size_t)m->roff[i]; k < m->nnz; k++) {
		r->pos[m->rcol[k]] = -1;
		if (fabs(m->rval[k]) > 1e-12) {
			m->rcol[out] = m->rcol[k];
			m->rval[out] = m->rval[k];
			out++;
		}
	}
	m->nnz = out;
	m->rrhs[i] -= r->konst;
	r->konst = 0;
	if (out == (size_t)m->roff[i]) {
		double rhs = m->rrhs[i], tol = 1e-9 * (1 + fabs(rhs));
		bool ok = m->rtype[i] == HOFF_ILP_LE   ? 0 <= rhs + tol
			  : m->rtype[i] == HOFF_ILP_GE ? 0 >= rhs - tol
						       : fabs(rhs) <= tol;
		if (!ok && !m->infeasible) {
			m->infeasible = true;
			if (m->rtag[i] == 'H') {
				const hoff_ilp_iv *v = &m->iv[m->rarg[i]];
				snprintf(m->why, sizeof m->why,
					 "repeat: \"%s\" cannot be stored home "
					 "after its last use (rule 9)",
					 m->g->tensor[v->c.t].id);
			} else if (m->rtag[i] == 'M') {
				int32_t w = m->rarg[i], k = (w + 1) / 2;
				snprintf(m->why, sizeof m->why,
					 "memory %s op \"%s\" is above the "
					 "budget whatever is offloaded",
					 w % 2 == 0 ? "while" : "just before",
					 m->g->op[k].id);
			} else {
				char name[64];
				hoff_ilp_row_name(m, i, name, sizeof name);
				snprintf(m->why, sizeof m->why,
					 "row %s cannot hold", name);
			}
		}
		m->nrows--;
	}
}

/* The row x_a - x_b <= 0 (x_a <= x_b), tagged. */
void hoff_ilp_row_le(rowb *r, char tag, int32_t arg, int32_t a, int32_t b)
{
	hoff_ilp_row_begin(r, HOFF_ILP_LE, 0, tag, arg);
	hoff_ilp_row_add(r, a, 1);
	hoff_ilp_row_add(r, b, -1);
	hoff_ilp_row_end(r);
}

/* ---------------------------------------------------------------------
 * Maps: the column in force at an index (latest defined at or before).
 */

int32_t hoff_ilp_map_new(hoff_ilp *m, int32_t len)
{
	if (len <= 0)
		return HOFF_NONE;
	if (m->nmap + (size_t)len > (size_t)INT32_MAX ||
	    !hoff_grow((void **)&m->map, &m->map_cap, m->nmap + (size_t)len,
		       sizeof *m->map))
		return -2;
	int32_t off = (int32_t)m->nmap;
	memset(m->map + off, 0, (size_t)len * sizeof *m->map);
	m->nmap += (size_t)len;
	return off;
}

static int32_t map_at(const hoff_ilp *m, int32_t map, int32_t lo, int32_t hi,
		      int32_t v)
{
	if (map < 0 || v < lo)
		return 0;
	if (v > hi)
		v = hi;
	return m->map[map + v - lo];
}

int32_t hoff_ilp_r_at(const hoff_ilp *m, const hoff_ilp_iv *v, int32_t q)
{
	return map_at(m, v->rmap, v->lo, v->c.b - 1, q);
}

int32_t hoff_ilp_q_at(const hoff_ilp *m, const hoff_ilp_iv *v, int32_t w)
{
	return map_at(m, v->qmap, v->q_lo, v->q_hi, w);
}

int32_t hoff_ilp_ys_at(const hoff_ilp *m, const hoff_ilp_iv *v, int32_t w)
{
	return map_at(m, v->ysmap, v->ys_lo, v->ys_hi, w);
}

int32_t hoff_ilp_yp_at(const hoff_ilp *m, const hoff_ilp_iv *v, int32_t w)
{
	return map_at(m, v->ypmap, v->yp_lo, v->yp_hi, w);
}

/* Fills a map over [lo, hi] from the sorted defined indices idx[0..n)
 * whose columns are first, first + 1, ... */
void hoff_ilp_map_fill(hoff_ilp *m, int32_t map, int32_t lo, int32_t hi,
		       const int32_t *idx, int32_t n, int32_t first)
{
	int32_t j = 0, cur = 0;
	for (int32_t v = lo; v <= hi; v++) {
		while (j < n && idx[j] <= v)
			cur = first + j++;
		m->map[map + v - lo] = cur;
	}
}

void hoff_ilp_free(hoff_ilp *m)
{
	if (!m)
		return;
	free(m->fixed);
	free(m->hot);
	free(m->s_col);
	free(m->iv);
	free(m->rc);
	free(m->rc_off);
	free(m->map);
	free(m->clb);
	free(m->cub);
	free(m->cobj);
	free(m->cbin);
	free(m->ctag);
	free(m->carg0);
	free(m->carg1);
	free(m->rtype);
	free(m->rrhs);
	free(m->rtag);
	free(m->rarg);
	free(m->roff);
	free(m->rcol);
	free(m->rval);
	free(m);
}

double hoff_ilp_violation(const hoff_ilp *m, const double *x, int32_t *row)
{
	double worst = 0;
	*row = 0;
	for (int32_t j = 1; j <= m->ncols; j++) {
		double v = 0;
		if (x[j] < m->clb[j])
			v = m->clb[j] - x[j];
		if (x[j] > m->cub[j])
			v = x[j] - m->cub[j];
		if (m->cbin[j] && fabs(x[j] - floor(x[j] + 0.5)) > v)
			v = fabs(x[j] - floor(x[j] + 0.5));
		if (v > worst)
			worst = v;
	}
	for (int32_t i = 1; i <= m->nrows; i++) {
		double act = 0;
		for (int64_t k = m->roff[i]; k < m->roff[i + 1]; k++)
			act += m->rval[k] * x[m->rcol[k]];
		double rhs = m->rrhs[i], v = 0;
		if (m->rtype[i] != HOFF_ILP_GE && act > rhs)
			v = act - rhs;
		if (m->rtype[i] != HOFF_ILP_LE && act < rhs)
			v = rhs - act;
		v /= 1 + fabs(rhs);
		if (v > worst) {
			worst = v;
			*row = i;
		}
	}
	return worst;
}
