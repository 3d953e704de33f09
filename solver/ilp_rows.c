/* ilp_rows.c: the columns of an interval and the constraint families
 * (1)-(13) of the model (solver/README.md), one function per family. */
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


/* The instants w in [lo, hi] that have a window, into idx; their count. */
static int32_t windows_in(const hoff_ilp *m, int32_t lo, int32_t hi,
			  int32_t *idx)
{
	int32_t n = 0;
	for (int32_t w = lo; w <= hi; w++)
		if (hoff_ilp_win_exists(m, w))
			idx[n++] = w;
	return n;
}

/* Interval i's columns of kind `tag` at the sorted indices idx[0..n),
 * bounds [0, 1] (the last one's lower bound last_lb), and the map of
 * [lo, hi] onto them in *map (HOFF_NONE when hi < lo). False when out of
 * memory. */
static bool col_run(hoff_ilp *m, int32_t i, hoff_col_kind tag, bool binary,
		    double last_lb, const int32_t *idx, int32_t n, int32_t lo,
		    int32_t hi, int32_t *map)
{
	int32_t first = 0;
	for (int32_t j = 0; j < n; j++) {
		int32_t c = hoff_ilp_add_col(m, j == n - 1 ? last_lb : 0, 1, 0,
					     binary, tag, i, idx[j]);
		if (!c)
			return false;
		if (j == 0)
			first = c;
	}
	if ((*map = hoff_ilp_map_new(m, hi - lo + 1)) == -2)
		return false;
	if (*map >= 0)
		hoff_ilp_map_fill(m, *map, lo, hi, idx, n, first);
	return true;
}

/* Creates the columns of kept interval i (allowed boundaries P[0..nP)). */
bool hoff_ilp_interval_cols(hoff_ilp *m, int32_t i, const int32_t *P,
			    int32_t nP, bool has_zs, bool has_zd,
			    int32_t *scratch)
{
	hoff_ilp_iv *v = &m->iv[i];
	const int32_t n = m->n;
	bool tail = v->c.b >= n;
	if (v->c.kind == HOFF_CAND_DIRTY && !has_zs && !has_zd)
		return true; /* no way to leave: it covers nothing */
	if (!tail && nP == 0)
		return true; /* no way back */
	v->zs = has_zs ? hoff_ilp_add_col(m, 0, 1, 0, true, HOFF_COL_ZS, i, 0)
		       : 0;
	v->zd = has_zd ? hoff_ilp_add_col(m, 0, 1, 0, true, HOFF_COL_ZD, i, 0)
		       : 0;
	if ((has_zs && !v->zs) || (has_zd && !v->zd))
		return false;
	/* START's last boundary is issued in every schedule, and its fetch
	 * completes in every schedule */
	const double start_lb = v->c.kind == HOFF_CAND_START ? 1 : 0;
	if (!tail && nP > 0) {
		v->r_first = P[0];
		v->r_last = P[nP - 1];
		if (!col_run(m, i, HOFF_COL_R, true, start_lb, P, nP, v->lo,
			     v->c.b - 1, &v->rmap))
			return false;
		/* fetch progress: windows after the first allowed boundary */
		v->yp_lo = 2 * (P[0] + 1);
		v->yp_hi = 2 * v->c.b;
		int32_t nw = windows_in(m, v->yp_lo, v->yp_hi, scratch);
		if (!col_run(m, i, HOFF_COL_YF, false, start_lb, scratch, nw,
			     v->yp_lo, v->yp_hi, &v->ypmap))
			return false;
	}
	if (v->zs) {
		int32_t qend = tail ? 2 * n - 2 : 2 * v->r_last + 1;
		int32_t nq = 0;
		for (int32_t w = 2 * v->c.a + 2; w <= qend; w++) {
			bool want = m->hot[IDX(w)] &&
				    (m->stride <= 1 ||
				     hoff_ilp_stage_of(w) % m->stride == 0);
			for (int32_t j = 0; !want && !tail && j < nP; j++)
				want = w == 2 * P[j] + 1;
			if (want)
				scratch[nq++] = w;
		}
		v->q_lo = 2 * v->c.a + 2;
		v->q_hi = qend;
		if (!col_run(m, i, HOFF_COL_Q, true, 0, scratch, nq, v->q_lo,
			     qend, &v->qmap))
			return false;
		v->ys_lo = 2 * v->c.a + 2;
		v->ys_hi = tail ? 2 * n : 2 * v->r_last + 1;
		int32_t nw = windows_in(m, v->ys_lo, v->ys_hi, scratch);
		if (!col_run(m, i, HOFF_COL_YS, false, 0, scratch, nw, v->ys_lo,
			     v->ys_hi, &v->ysmap))
			return false;
	}
	return true;
}

/* sel_i as a row term: adds coef * sel_i (constant for fixed ones). */
static void add_sel(rowb *r, const hoff_ilp_iv *v, double coef)
{
	if (v->c.kind == HOFF_CAND_START || v->fixed)
		r->konst += coef;
	else {
		hoff_ilp_row_add(r, v->zs, coef);
		hoff_ilp_row_add(r, v->zd, coef);
	}
}

/* The row x_col = sel_i, tagged. */
static void row_is_sel(rowb *r, char tag, int32_t i, int32_t col)
{
	hoff_ilp_row_begin(r, HOFF_ILP_EQ, 0, tag, i);
	hoff_ilp_row_add(r, col, 1);
	add_sel(r, &r->m->iv[i], -1);
	hoff_ilp_row_end(r);
}

/* Rows (1)-(4) of interval i. */
void hoff_ilp_interval_rows(hoff_ilp *m, rowb *r, int32_t i)
{
	const hoff_ilp_iv *v = &m->iv[i];
	const int32_t n = m->n;
	bool tail = v->c.b >= n;
	if (!tail && v->rmap >= 0) {
		/* (1) R monotone, last = sel; (3) fetch only after the store */
		int32_t prev = 0;
		for (int32_t q = v->r_first; q <= v->r_last; q++) {
			int32_t c = hoff_ilp_r_at(m, v, q);
			if (c == prev)
				continue;
			if (prev)
				hoff_ilp_row_le(r, 'r', i, prev, c);
			if (v->zs) {
				hoff_ilp_row_begin(r, HOFF_ILP_LE, 0, 'f', i);
				hoff_ilp_row_add(r, c, 1);
				hoff_ilp_row_add(r, v->zd, -1);
				hoff_ilp_row_add(
					r, hoff_ilp_q_at(m, v, 2 * q + 1), -1);
				hoff_ilp_row_end(r);
			}
			prev = c;
		}
		if (v->c.kind != HOFF_CAND_START)
			row_is_sel(r, 'l', i, prev);
		/* (4) fetch progress */
		int32_t yprev = 0;
		for (int32_t w = v->yp_lo; w <= v->yp_hi; w++) {
			int32_t c = hoff_ilp_yp_at(m, v, w);
			if (c == yprev)
				continue;
			hoff_ilp_row_le(r, 'i', i, c,
					hoff_ilp_r_at(m, v, w / 2 - 1));
			if (yprev)
				hoff_ilp_row_le(r, 'm', i, yprev, c);
			yprev = c;
		}
		if (v->c.kind != HOFF_CAND_START)
			row_is_sel(r, 'd', i, yprev);
	}
	if (v->zs) {
		/* (3) store progress and completion */
		int32_t yprev = 0;
		for (int32_t w = v->ys_lo; w <= v->ys_hi; w++) {
			int32_t c = hoff_ilp_ys_at(m, v, w);
			if (c == yprev)
				continue;
			if (yprev)
				hoff_ilp_row_le(r, 'm', i, yprev, c);
			yprev = c;
		}
		hoff_ilp_row_begin(r, HOFF_ILP_EQ, 0, 'c', i);
		hoff_ilp_row_add(r, yprev, 1);
		hoff_ilp_row_add(r, v->zs, -1);
		hoff_ilp_row_end(r);
		int32_t qprev = 0;
		for (int32_t w = v->q_lo; w <= v->q_hi; w++) {
			int32_t c = hoff_ilp_q_at(m, v, w);
			if (c == qprev)
				continue;
			hoff_ilp_row_le(r, 'q', i, c, hoff_ilp_ys_at(m, v, w));
			if (qprev)
				hoff_ilp_row_le(r, 'n', i, qprev, c);
			qprev = c;
		}
	}
}

/* (2) Segment rows: one store per dirty segment, detaches after it. */
void hoff_ilp_segment_rows(hoff_ilp *m, rowb *r)
{
	for (int32_t i = 0; i < m->niv; i++) {
		const hoff_ilp_iv *v = &m->iv[i];
		if (v->c.kind != HOFF_CAND_DIRTY || v->c.seg != i)
			continue;
		int32_t nz = 0;
		for (int32_t j = i; j < m->niv && m->iv[j].c.seg == i; j++)
			nz += m->iv[j].zs != 0;
		if (nz > 1) {
			hoff_ilp_row_begin(r, HOFF_ILP_LE, 1, 's', i);
			for (int32_t j = i; j < m->niv && m->iv[j].c.seg == i;
			     j++)
				hoff_ilp_row_add(r, m->iv[j].zs, 1);
			hoff_ilp_row_end(r);
		}
		for (int32_t j = i; j < m->niv && m->iv[j].c.seg == i; j++) {
			const hoff_ilp_iv *u = &m->iv[j];
			if (!u->zd)
				continue;
			hoff_ilp_row_begin(r, HOFF_ILP_LE, 0, 'a', j);
			hoff_ilp_row_add(r, u->zd, 1);
			for (int32_t k = i; k < j; k++)
				hoff_ilp_row_add(r, m->iv[k].zs, -1);
			hoff_ilp_row_end(r);
			if (u->zs) {
				hoff_ilp_row_begin(r, HOFF_ILP_LE, 1, 'x', j);
				hoff_ilp_row_add(r, u->zs, 1);
				hoff_ilp_row_add(r, u->zd, 1);
				hoff_ilp_row_end(r);
			}
		}
	}
}

/* Entries by window, then channel, then interval (ctx: the intervals). */
/* (14) The repeat end state (rule 9): a tier-homed state tensor ends
 * off the device with a valid copy at home. Its tail after its last
 * touch (home_end) is used: a clean one is fixed (a free detach), a
 * dirty one leaves by a store home, or by a detach after an earlier
 * store of its dirty segment:  zs_i + zd_i = 1. */
void hoff_ilp_home_rows(hoff_ilp *m, rowb *r)
{
	for (int32_t i = 0; i < m->niv; i++) {
		const hoff_ilp_iv *v = &m->iv[i];
		if (!v->home_end || v->fixed)
			continue;
		hoff_ilp_row_begin(r, HOFF_ILP_EQ, 1, 'H', i);
		hoff_ilp_row_add(r, v->zs, 1);
		hoff_ilp_row_add(r, v->zd, 1);
		hoff_ilp_row_end(r);
	}
}

static int by_window(const void *x, const void *y, void *ctx)
{
	const hoff_ilp_iv *iv = ctx;
	const wentry *a = x, *b = y;
	if (a->w != b->w)
		return a->w < b->w ? -1 : 1;
	int ca = 2 * iv[a->i].c.tier + a->store;
	int cb = 2 * iv[b->i].c.tier + b->store;
	if (ca != cb)
		return ca < cb ? -1 : 1;
	return (a->i > b->i) - (a->i < b->i);
}

void hoff_ilp_chan_plan_free(chan_plan *cp)
{
	free(cp->we);
	free(cp->goff);
	free(cp->ucol);
	memset(cp, 0, sizeof *cp);
}

static int chan_of(const hoff_ilp *m, const wentry *x)
{
	return 2 * m->iv[x->i].c.tier + x->store;
}

static double dur_of(const hoff_ilp *m, const wentry *x)
{
	const hoff_ilp_iv *v = &m->iv[x->i];
	return (double)(x->store ? v->c.store_ps : v->c.fetch_ps);
}

/* Groups the transfers by window and channel; creates U columns. */
bool hoff_ilp_channel_plan(hoff_ilp *m, chan_plan *cp)
{
	size_t cap = 0;
	memset(cp, 0, sizeof *cp);
	for (int32_t i = 0; i < m->niv; i++) {
		const hoff_ilp_iv *v = &m->iv[i];
		for (int pass = 0; pass < 2; pass++) {
			int32_t map = pass ? v->ysmap : v->ypmap;
			if (map < 0)
				continue;
			int32_t lo = pass ? v->ys_lo : v->yp_lo;
			int32_t hi = pass ? v->ys_hi : v->yp_hi;
			for (int32_t w = lo; w <= hi; w++) {
				if (!hoff_ilp_win_exists(m, w))
					continue;
				if (!hoff_grow((void **)&cp->we, &cap,
					       cp->ne + 1, sizeof *cp->we))
					return false;
				cp->we[cp->ne++] = (wentry){w, i, (uint8_t)pass};
			}
		}
	}
	hoff_sort_ctx(cp->we, cp->ne, sizeof *cp->we, by_window, m->iv);
	cp->goff = hoff_alloc(cp->ne + 1, sizeof *cp->goff);
	cp->ucol = hoff_alloc(cp->ne + 1, sizeof *cp->ucol);
	if (!cp->goff || !cp->ucol)
		return false;
	for (size_t s = 0; s < cp->ne;) {
		size_t e = s;
		double total = 0;
		while (e < cp->ne && cp->we[e].w == cp->we[s].w &&
		       chan_of(m, &cp->we[e]) == chan_of(m, &cp->we[s]))
			total += dur_of(m, &cp->we[e++]);
		int32_t w = cp->we[s].w;
		bool odd = w % 2 == 1;
		double len = odd ? (double)m->g->op[(w - 1) / 2].time_ps : 0;
		cp->goff[cp->ngrp] = s;
		cp->ucol[cp->ngrp] = 0;
		/* a channel slowed by duplex may be busy throughout w with
		 * only phi len of work */
		if (!odd ||
		    total > hoff_ilp_phi(m, chan_of(m, &cp->we[s])) * len) {
			cp->ucol[cp->ngrp] =
				hoff_ilp_add_col(m, 0, 1, 0, true, HOFF_COL_U,
						 w, chan_of(m, &cp->we[s]));
			if (!cp->ucol[cp->ngrp])
				return false;
		}
		cp->ngrp++;
		s = e;
	}
	cp->goff[cp->ngrp] = cp->ne;
	return true;
}

/* Adds coef times the nominal work (model units) of the transfers in
 * group gi in its window w: sum D_i (Y_i(w) - Y_i(w - 1)). */
static void add_work(const hoff_ilp *m, rowb *r, const chan_plan *cp, size_t gi,
		     double coef)
{
	for (size_t k = cp->goff[gi]; k < cp->goff[gi + 1]; k++) {
		const hoff_ilp_iv *v = &m->iv[cp->we[k].i];
		int32_t w = cp->we[k].w;
		double d = coef * dur_of(m, &cp->we[k]) / m->tu;
		bool st = cp->we[k].store;
		hoff_ilp_row_add(r,
				 st ? hoff_ilp_ys_at(m, v, w)
				    : hoff_ilp_yp_at(m, v, w),
				 d);
		hoff_ilp_row_add(r,
				 st ? hoff_ilp_ys_at(m, v, w - 1)
				    : hoff_ilp_yp_at(m, v, w - 1),
				 -d);
	}
}

/* Group gi's largest nominal work in its window (every transfer
 * whole), model units. */
static double most_work(const hoff_ilp *m, const chan_plan *cp, size_t gi)
{
	double x = 0;
	for (size_t k = cp->goff[gi]; k < cp->goff[gi + 1]; k++)
		x += dur_of(m, &cp->we[k]) / m->tu;
	return x;
}

/* (5d) Duplex (FORMAT.md rule 3), per window w and tier whose two
 * channels both have transfers in w: with nominal work x (h2d) and y
 * (d2h) in w of length L, and factors f (h2d) and g (d2h), any timing
 * has x = a + f b, y = c + g b, with a, b, c the time h2d alone, both,
 * d2h alone, a + b + c <= L; that projects onto
 *   x + y (1 - f) / g <= L  and  y + x (1 - g) / f <= L   (f + g >= 1)
 *   x + y <= L                                               (f + g < 1)
 * (solver/README.md derives it). Rows (5) remain. Left out where even
 * every transfer whole in an op window meets them. */
static void duplex_rows(hoff_ilp *m, rowb *r, const chan_plan *cp)
{
	for (size_t gi = 0; gi + 1 < cp->ngrp; gi++) {
		const wentry *h = &cp->we[cp->goff[gi]];
		const wentry *d = &cp->we[cp->goff[gi + 1]];
		int ch = chan_of(m, h);
		if (ch % 2 || d->w != h->w || chan_of(m, d) != ch + 1)
			continue;
		double f = hoff_ilp_phi(m, ch), g = hoff_ilp_phi(m, ch + 1);
		if (f == 1.0 && g == 1.0)
			continue;
		int32_t w = h->w;
		bool odd = w % 2 == 1;
		double len = odd ? (double)m->g->op[(w - 1) / 2].time_ps / m->tu
				 : 0;
		int32_t sc = odd ? 0 : m->s_col[w / 2];
		bool two = f + g >= 1;
		/* coefficients of y in the first row, of x in the second */
		double ay = two ? (1 - f) / g : 1, bx = two ? (1 - g) / f : 0;
		double X = most_work(m, cp, gi), Y = most_work(m, cp, gi + 1);
		if (odd && X + ay * Y <= len && (!two || Y + bx * X <= len))
			continue;
		for (int row = 0; row < (two ? 2 : 1); row++) {
			hoff_ilp_row_begin(r, HOFF_ILP_LE, len, 'K',
					   w * 128 + ch / 2);
			add_work(m, r, cp, gi, row == 0 ? 1 : bx);
			add_work(m, r, cp, gi + 1, row == 0 ? ay : 1);
			if (!odd) {
				hoff_ilp_row_add(r, sc, -1);
				hoff_ilp_rc_len(m, r, w / 2, -1);
			}
			hoff_ilp_row_end(r);
		}
	}
}

/* Rows (5) channel capacity, (5b) work conservation and (6) stalls. */
void hoff_ilp_channel_rows(hoff_ilp *m, rowb *r, const chan_plan *cp)
{
	for (size_t gi = 0; gi < cp->ngrp; gi++) {
		size_t s = cp->goff[gi], e = cp->goff[gi + 1];
		int32_t w = cp->we[s].w;
		bool odd = w % 2 == 1;
		double len = odd ? (double)m->g->op[(w - 1) / 2].time_ps / m->tu
				 : 0;
		int32_t U = cp->ucol[gi];
		int32_t sc = odd ? 0 : m->s_col[w / 2];
		for (int pass = 0; U && pass < 2; pass++) {
			/* pass 0: usage <= len; pass 1: usage >= len when
			 * saturated (U = 1) */
			/* (v2) the longest the window can be: the stall
			 * and every re-run chosen before op w / 2 */
			double M = sc ? m->cub[sc] + hoff_ilp_rc_time(m, w / 2)
				      : 0;
			if (pass == 0)
				hoff_ilp_row_begin(
					r, HOFF_ILP_LE, len, 'C',
					w * 128 + chan_of(m, &cp->we[s]));
			else
				hoff_ilp_row_begin(
					r, HOFF_ILP_GE, odd ? 0 : -M, 'W',
					w * 128 + chan_of(m, &cp->we[s]));
			for (size_t k = s; k < e; k++) {
				const hoff_ilp_iv *v = &m->iv[cp->we[k].i];
				double d = dur_of(m, &cp->we[k]) / m->tu;
				bool st = cp->we[k].store;
				hoff_ilp_row_add(r,
						 st ? hoff_ilp_ys_at(m, v, w)
						    : hoff_ilp_yp_at(m, v, w),
						 d);
				hoff_ilp_row_add(
					r,
					st ? hoff_ilp_ys_at(m, v, w - 1)
					   : hoff_ilp_yp_at(m, v, w - 1),
					-d);
			}
			/* (5b) busy throughout w, a duplex channel moves at
			 * least phi len (its speed while the other one is
			 * busy); phi = 1 without duplex */
			double phi =
				pass == 1 ? hoff_ilp_phi(m,
							 chan_of(m, &cp->we[s]))
					  : 1.0;
			if (!odd) {
				hoff_ilp_row_add(r, sc, phi == 1.0 ? -1 : -phi);
				hoff_ilp_rc_len(m, r, w / 2, -phi);
			}
			if (pass == 1)
				hoff_ilp_row_add(r, U,
						 odd ? (phi == 1.0 ? -len
								   : -phi * len)
						     : -M);
			hoff_ilp_row_end(r);
		}
		/* a channel that is not saturated in w has nothing pending
		 * at its end: every transfer issued on it is complete */
		for (size_t k = s; k < e; k++) {
			const hoff_ilp_iv *v = &m->iv[cp->we[k].i];
			bool st = cp->we[k].store;
			hoff_ilp_row_begin(r, HOFF_ILP_GE, 0, 'w', cp->we[k].i);
			hoff_ilp_row_add(r,
					 st ? hoff_ilp_ys_at(m, v, w)
					    : hoff_ilp_yp_at(m, v, w),
					 1);
			if (st)
				hoff_ilp_row_add(r, v->zs, -1);
			else
				hoff_ilp_row_add(
					r, hoff_ilp_r_at(m, v, w / 2 - 1), -1);
			hoff_ilp_row_add(r, U, 1);
			hoff_ilp_row_end(r);
		}
	}
	duplex_rows(m, r, cp);
	/* (6) an op waits only for its own inputs: a stall needs one of
	 * them still in flight at the previous op's end, and the channels
	 * they come over busy throughout (with them, or with what FIFO
	 * serves ahead of them) */
	bool *tier_k = hoff_zalloc((size_t)m->g->ntiers + 1, sizeof *tier_k);
	for (int32_t k = 0; tier_k && k < m->n; k++) {
		if (!m->s_col[k])
			continue;
		int32_t sc = m->s_col[k];
		memset(tier_k, 0, (size_t)m->g->ntiers * sizeof *tier_k);
		/* M = cub[sc]: the fetches due at k, each at its slowest
		 * (duplex) speed */
		hoff_ilp_row_begin(r, HOFF_ILP_LE, 0, 'S', k);
		hoff_ilp_row_add(r, sc, 1);
		for (int32_t i = 0; i < m->niv; i++) {
			const hoff_ilp_iv *v = &m->iv[i];
			if (v->c.b != k || v->ypmap < 0)
				continue;
			add_sel(r, v, -m->cub[sc]);
			hoff_ilp_row_add(r, hoff_ilp_yp_at(m, v, 2 * k - 1),
					 m->cub[sc]);
			tier_k[v->c.tier] = true;
		}
		hoff_ilp_row_end(r);
		/* the awaited channel, busy throughout the stall, moves at
		 * least phi of it (duplex: the slowest of those tiers) */
		double phi = 1.0;
		for (int32_t c = 0; c < m->g->ntiers; c++)
			if (tier_k[c] && hoff_ilp_phi(m, 2 * c) < phi)
				phi = hoff_ilp_phi(m, 2 * c);
		hoff_ilp_row_begin(r, HOFF_ILP_LE, 0, 'T', k);
		hoff_ilp_row_add(r, sc, phi);
		for (int32_t i = 0; i < m->niv; i++) {
			const hoff_ilp_iv *v = &m->iv[i];
			if (v->ypmap < 0 || !tier_k[v->c.tier] ||
			    2 * k < v->yp_lo || 2 * k > v->yp_hi)
				continue;
			double d = (double)v->c.fetch_ps / m->tu;
			hoff_ilp_row_add(r, hoff_ilp_yp_at(m, v, 2 * k), -d);
			hoff_ilp_row_add(r, hoff_ilp_yp_at(m, v, 2 * k - 1), d);
		}
		hoff_ilp_row_end(r);
	}
	free(tier_k);
}

/* (5c) FIFO among stores. A store is issued right after its touch a, so
 * the order of the stores on a d2h channel is known (by a, then the
 * decoder's order): one completes only after every store ahead of it
 * has. For store j and window w:
 *   sum_{i ahead of j} D_i (zs_i - Ys_i(w)) <= M_j (1 - Ys_j(w)),
 * M_j the work ahead of j that may still be pending after j's issue.
 * Any subset of the stores ahead gives a valid row; the FIFO_AHEAD
 * nearest keep the rows short. */
#define FIFO_AHEAD 6
bool hoff_ilp_store_fifo_rows(hoff_ilp *m, rowb *r)
{
	int32_t *ord = hoff_alloc((size_t)m->niv + 1, sizeof *ord);
	if (!ord)
		return false;
	int32_t ns = 0;
	for (int32_t i = 0; i < m->niv; i++)
		if (m->iv[i].zs && m->iv[i].ysmap >= 0)
			ord[ns++] = i;
	hoff_sort_ctx(ord, (size_t)ns, sizeof *ord, hoff_ilp_by_evict, m->iv);
	for (int32_t x = 0; x < ns; x++) {
		const hoff_ilp_iv *vj = &m->iv[ord[x]];
		double M = 0;
		int32_t y0 = x, cnt = 0;
		while (y0 > 0 && cnt < FIFO_AHEAD) {
			const hoff_ilp_iv *vi = &m->iv[ord[--y0]];
			if (vi->c.tier == vj->c.tier &&
			    vi->ys_hi >= vj->ys_lo) {
				M += (double)vi->c.store_ps / m->tu;
				cnt++;
			}
		}
		if (M <= 0)
			continue;
		int32_t prev = 0;
		for (int32_t w = vj->ys_lo; w <= vj->ys_hi; w++) {
			int32_t c = hoff_ilp_ys_at(m, vj, w);
			if (c == prev)
				continue;
			prev = c;
			hoff_ilp_row_begin(r, HOFF_ILP_LE, M, 'F', ord[x]);
			hoff_ilp_row_add(r, c, M);
			for (int32_t y = y0; y < x; y++) {
				const hoff_ilp_iv *vi = &m->iv[ord[y]];
				if (vi->c.tier != vj->c.tier ||
				    vi->ys_hi < vj->ys_lo)
					continue;
				double d = (double)vi->c.store_ps / m->tu;
				hoff_ilp_row_add(r, vi->zs, d);
				hoff_ilp_row_add(r, hoff_ilp_ys_at(m, vi, w),
						 -d);
			}
			hoff_ilp_row_end(r);
		}
	}
	free(ord);
	return true;
}

/* (8) Store time. A store needs D_i ps of its channel in the windows
 * after its issue (right after touch a_i). The channel rows give
 * D_i Q_iw <= the length of windows 2a_i + 2 .. w, which a fractional
 * Q_iw meets with part of the ops' time; when those ops last less than
 * D_i, the rest is stall, all of it or none:
 *   (D_i - sum d_k) Q_iw <= sum s_k    (k in a_i + 1 .. the stage of w)
 * the hull of Q_iw in {0, 1} (no integer solution is cut). With no stall
 * column in range, Q_iw = 0: the store cannot be complete by w. */
/* Walks the Q columns of store interval v in order of their first
 * instant w: the column c in force from w, and lack, D_i less the ops'
 * time in the windows from the store's issue to w. */
typedef struct qwalk {
	int32_t w, c, u; /* u: the next op window to take off */
	int64_t lack;
} qwalk;

static qwalk qwalk_start(const hoff_ilp_iv *v)
{
	return (qwalk){
		.w = v->q_lo - 1, .u = v->ys_lo + 1, .lack = v->c.store_ps};
}

static bool qwalk_next(const hoff_ilp *m, const hoff_ilp_iv *v, qwalk *q)
{
	int32_t prev = q->c;
	while (v->zs && ++q->w <= v->q_hi) {
		q->c = hoff_ilp_q_at(m, v, q->w);
		if (q->c != prev)
			break;
	}
	if (!v->zs || q->w > v->q_hi)
		return false;
	for (; q->u <= q->w; q->u += 2)
		q->lack -= m->g->op[(q->u - 1) / 2].time_ps;
	return true;
}

void hoff_ilp_time_rows(hoff_ilp *m, rowb *r)
{
	for (int32_t i = 0; i < m->niv; i++) {
		const hoff_ilp_iv *v = &m->iv[i];
		/* lack only falls: once none, none at every later w */
		for (qwalk q = qwalk_start(v); qwalk_next(m, v, &q) &&
					       q.lack > 0;) {
			hoff_ilp_row_begin(r, HOFF_ILP_LE, 0, 'D', i);
			hoff_ilp_row_add(r, q.c, (double)q.lack / m->tu);
			for (int32_t k = v->ys_lo / 2; 2 * k <= q.w; k++) {
				hoff_ilp_row_add(r, m->s_col[k], -1);
				hoff_ilp_rc_len(m, r, k, -1);
			}
			hoff_ilp_row_end(r);
		}
	}
}

/* (9) Fetch time. A fetch issued at boundary p or later needs D_i ps of
 * its channel before op b_i starts; ops p+1 .. b_i-1 give their time and
 * the rest is stall, in windows p+1 .. b_i, all of it or none:
 *   (D_i - sum d_k) (sel_i - R_i(p-1)) <= sum s_k    (k in p+1 .. b_i)
 * for each allowed boundary p, the hull of "issued at p or later" in
 * {0, 1}. The channel rows alone let a fraction of the fetch issued late
 * fit in the ops' time, with no stall. */
void hoff_ilp_fetch_time_rows(hoff_ilp *m, rowb *r)
{
	for (int32_t i = 0; i < m->niv; i++) {
		const hoff_ilp_iv *v = &m->iv[i];
		if (v->rmap < 0 || v->c.b >= m->n || v->c.fetch_ps <= 0)
			continue;
		/* lack at p: the fetch less ops p+1 .. b-1, from p = lo up */
		int64_t lack = v->c.fetch_ps;
		for (int32_t k = v->lo + 1; k <= v->c.b - 1; k++)
			lack -= m->g->op[k].time_ps;
		int32_t prev = -1;
		for (int32_t p = v->lo; p <= v->c.b - 1; p++) {
			if (p > v->lo)
				lack += m->g->op[p].time_ps;
			int32_t c = hoff_ilp_r_at(m, v, p);
			if (c == prev || c == 0)
				continue;
			prev = c;
			if (lack <= 0)
				continue;
			hoff_ilp_row_begin(r, HOFF_ILP_LE, 0, 'G', i);
			add_sel(r, v, (double)lack / m->tu);
			hoff_ilp_row_add(r, hoff_ilp_r_at(m, v, p - 1),
					 -(double)lack / m->tu);
			for (int32_t k = p + 1; k <= v->c.b; k++) {
				hoff_ilp_row_add(r, m->s_col[k], -1);
				hoff_ilp_rc_len(m, r, k, -1);
			}
			hoff_ilp_row_end(r);
		}
	}
}

/* (10) Issue deadlines, in the min-peak model, whose total stall is at
 * most S (the overhead mode's bound). The START fetches on one
 * h2d channel due by op b (set A, b_i <= b) that are not issued by
 * boundary q move only in windows sigma_{q+2} .. sigma_b: rows (4) and
 * (5) give  sum_{i in A} D_i (1 - R_i(q)) <= sum_{q+1 < k < b} d_k + S
 * = cap. At most m of them fit in cap, m the most of the shortest whose
 * durations sum to at most cap, so
 *   sum_{i in A} R_i(q) >= |A| - m,
 * the integer rounding of that knapsack, which the relaxation misses: it
 * issues a fraction of each fetch early and pays for that fraction's
 * bytes only. On deepseek-v3-decode-4l the eight expert fetches keep the
 * h2d channel busy from the start to within 133 us of the bound, so one
 * is issued by boundary 7 (120 us in): its 88 MB are on the device
 * while every weight still is. The rows are valid for every integer
 * solution; q goes down from b - 2 while |A| - m >= 1 (cap only grows). */
bool hoff_ilp_deadline_rows(hoff_ilp *m, rowb *r, int64_t most)
{
	int32_t *set = hoff_alloc((size_t)m->niv + 1, sizeof *set);
	int64_t *dur = hoff_alloc((size_t)m->niv + 1, sizeof *dur);
	if (!set || !dur) {
		free(set);
		free(dur);
		return false;
	}
	for (int32_t c = 0; c < m->g->ntiers; c++) {
		for (int32_t b = 0; b < m->n; b++) {
			int32_t na = 0, due = 0;
			for (int32_t i = 0; i < m->niv; i++) {
				const hoff_ilp_iv *v = &m->iv[i];
				if (v->c.kind != HOFF_CAND_START ||
				    v->c.tier != c || v->rmap < 0 || v->c.b > b)
					continue;
				due += v->c.b == b;
				/* durations kept ascending */
				int32_t at = na++;
				for (; at > 0 && dur[at - 1] > v->c.fetch_ps;
				     at--)
					dur[at] = dur[at - 1];
				dur[at] = v->c.fetch_ps;
				set[na - 1] = i;
			}
			if (!due)
				continue; /* the same set as the last deadline */
			int64_t cap = most, fit = 0;
			int32_t fits = 0;
			for (int32_t q = b - 2; q >= -1; q--) {
				if (q + 2 < b)
					cap += m->g->op[q + 2].time_ps;
				while (fits < na && fit + dur[fits] <= cap)
					fit += dur[fits++];
				if (fits == na)
					break;
				hoff_ilp_row_begin(r, HOFF_ILP_GE, na - fits,
						   'I', b);
				for (int32_t j = 0; j < na; j++)
					hoff_ilp_row_add(
						r,
						hoff_ilp_r_at(m, &m->iv[set[j]],
							      q),
						1);
				hoff_ilp_row_end(r);
			}
		}
	}
	free(set);
	free(dur);
	return true;
}

/* (11) Stores too slow for the stall bound S (the min-peak model and the
 * probes): by instant w a store issued
 * after touch a_i has had the ops' time in the windows up to w and at
 * most S of stall. When D^s_i is more than that, row (8) would leave
 * Q_iw a fraction, at most S / lack, that no schedule has: Q_iw = 0. */
void hoff_ilp_slow_stores(hoff_ilp *m, int64_t most)
{
	for (int32_t i = 0; i < m->niv; i++) {
		const hoff_ilp_iv *v = &m->iv[i];
		for (qwalk q = qwalk_start(v); qwalk_next(m, v, &q) &&
					       q.lack > most;)
			m->cub[q.c] = 0;
	}
}

/* (13) Fetch counts, in the probes (budget-mode models with a stall
 * bound). Per h2d channel c with two START fetches or more, integer
 * columns that every solution has integral and the relaxation spreads:
 *   X_cq = sum of R_i(q) over the START fetches on c not yet due
 *          (q < b_i - 1), one per boundary q where that set of columns
 *          in force changes;
 *   O_c  = sum of sel_i over the other fetches on c due by the last START
 *          deadline (what competes with the START fetches for the
 *          channel, rule 12).
 * The branch and bound branches on O_c first, then on the X_cq, earliest
 * q first (glpk_backend.c). On deepseek-v3-decode-4l the relaxation
 * issues a third of one expert and two thirds of another at boundary 5,
 * working on the late one early to leave the channel room for idle gaps
 * later, and stores and fetches back fractions of KV blocks; any
 * schedule issues whole experts and makes whole round trips. */
#define O_COUNT (-2) /* boundaries are -1 .. n - 2 */

/* The columns X_cq (q >= -1) or O_c (q = O_COUNT) sums, into cols;
 * their count. */
static int32_t count_members(const hoff_ilp *m, int32_t c, int32_t q,
			     int32_t last, int32_t *cols)
{
	int32_t nc = 0;
	for (int32_t i = 0; i < m->niv; i++) {
		const hoff_ilp_iv *v = &m->iv[i];
		if (v->c.tier != c || v->c.b >= m->n)
			continue;
		if (q == O_COUNT) {
			if (v->c.kind == HOFF_CAND_START || v->c.b > last)
				continue;
			if (v->zs)
				cols[nc++] = v->zs;
			if (v->zd)
				cols[nc++] = v->zd;
		} else if (v->c.kind == HOFF_CAND_START && v->rmap >= 0 &&
			   q < v->c.b - 1) {
			int32_t j = hoff_ilp_r_at(m, v, q);
			if (j)
				cols[nc++] = j;
		}
	}
	return nc;
}

bool hoff_ilp_count_cols(hoff_ilp *m, count_col **out, int32_t *nout)
{
	*out = NULL;
	*nout = 0;
	size_t cap = 0;
	int32_t *cur = hoff_alloc(2 * (size_t)m->niv + 1, sizeof *cur);
	int32_t *prev = hoff_alloc(2 * (size_t)m->niv + 1, sizeof *prev);
	bool ok = cur && prev;
	for (int32_t c = 0; ok && c < m->g->ntiers; c++) {
		int32_t nstart = 0, last = -1;
		for (int32_t i = 0; i < m->niv; i++) {
			const hoff_ilp_iv *v = &m->iv[i];
			if (v->c.kind == HOFF_CAND_START && v->c.tier == c &&
			    v->c.b < m->n) {
				nstart++;
				last = v->c.b > last ? v->c.b : last;
			}
		}
		if (nstart < 2)
			continue;
		int32_t np = 0;
		for (int32_t q = O_COUNT; ok && q < m->n - 1; q++) {
			int32_t nc = count_members(m, c, q, last, cur);
			if (nc < 2)
				continue;
			if (q != O_COUNT) {
				bool same = nc == np &&
					    !memcmp(cur, prev,
						    (size_t)nc * sizeof *cur);
				memcpy(prev, cur, (size_t)nc * sizeof *cur);
				np = nc;
				if (same)
					continue;
			}
			int32_t j = hoff_ilp_add_col(
				m, 0, nc, 0, false,
				q == O_COUNT ? HOFF_COL_O : HOFF_COL_X, c,
				q == O_COUNT ? last : q);
			ok = j && hoff_grow((void **)out, &cap,
					    (size_t)*nout + 1, sizeof **out);
			if (ok) {
				m->cbin[j] = 2; /* integer, not binary */
				(*out)[(*nout)++] = (count_col){j, c, q};
			}
		}
	}
	free(cur);
	free(prev);
	return ok;
}

bool hoff_ilp_count_rows(hoff_ilp *m, rowb *r, const count_col *x, int32_t nx)
{
	int32_t *cols = hoff_alloc(2 * (size_t)m->niv + 1, sizeof *cols);
	if (!cols)
		return false;
	for (int32_t k = 0; k < nx; k++) {
		int32_t last = m->carg1[x[k].col];
		int32_t nc = count_members(m, x[k].c, x[k].q, last, cols);
		hoff_ilp_row_begin(r, HOFF_ILP_EQ, 0, 'N', x[k].c);
		hoff_ilp_row_add(r, x[k].col, 1);
		for (int32_t j = 0; j < nc; j++)
			hoff_ilp_row_add(r, cols[j], -1);
		hoff_ilp_row_end(r);
	}
	free(cols);
	return true;
}

/* (7) Memory rows at the constrained instants. */
void hoff_ilp_absence_terms(const hoff_ilp *m, rowb *r, int32_t i, int32_t w)
{
	const hoff_ilp_iv *v = &m->iv[i];
	int32_t w0, w1;
	hoff_ilp_absent_range(v, m->n, &w0, &w1);
	if (w < w0 || w > w1)
		return;
	double b = (double)v->c.bytes / m->bu;
	if (v->c.kind == HOFF_CAND_START || v->fixed)
		r->konst -= b;
	else
		hoff_ilp_row_add(r, v->zd, -b);
	if (v->c.b < m->n)
		hoff_ilp_row_add(r, hoff_ilp_r_at(m, v, hoff_ilp_bound_of(w)),
				 b);
	if (v->zs)
		hoff_ilp_row_add(r, hoff_ilp_q_at(m, v, w), -b);
}

bool hoff_ilp_memory_rows(hoff_ilp *m, rowb *r)
{
	const int32_t n = m->n;
	size_t nw = (size_t)2 * (size_t)n;
	int32_t *cnt = hoff_zalloc(nw + 1, sizeof *cnt);
	if (!cnt)
		return false;
	/* bucket intervals by instant */
	for (int32_t i = 0; i < m->niv; i++) {
		int32_t w0, w1;
		hoff_ilp_absent_range(&m->iv[i], n, &w0, &w1);
		for (int32_t w = w0; w <= w1; w++)
			if (m->hot[IDX(w)])
				cnt[IDX(w) + 1]++;
	}
	for (size_t k = 0; k < nw; k++)
		cnt[k + 1] += cnt[k];
	int32_t *lst = hoff_alloc((size_t)cnt[nw] + 1, sizeof *lst);
	int32_t *fill = hoff_alloc(nw + 1, sizeof *fill);
	if (!lst || !fill) {
		free(cnt);
		free(lst);
		free(fill);
		return false;
	}
	memcpy(fill, cnt, (nw + 1) * sizeof *fill);
	for (int32_t i = 0; i < m->niv; i++) {
		int32_t w0, w1;
		hoff_ilp_absent_range(&m->iv[i], n, &w0, &w1);
		for (int32_t w = w0; w <= w1; w++)
			if (m->hot[IDX(w)])
				lst[fill[IDX(w)]++] = i;
	}
	for (int32_t w = -1; w <= 2 * n - 2; w++) {
		if (!m->hot[IDX(w)])
			continue;
		double F = (double)m->fixed[IDX(w)] / m->bu;
		if (m->budget_mode) {
			hoff_ilp_row_begin(r, HOFF_ILP_LE,
					   (double)m->cap_bytes / m->bu - F,
					   'M', w);
		} else {
			hoff_ilp_row_begin(r, HOFF_ILP_LE, -F, 'M', w);
			hoff_ilp_row_add(r, m->peak_col, -1);
		}
		for (int32_t k = cnt[IDX(w)]; k < cnt[IDX(w) + 1]; k++)
			hoff_ilp_absence_terms(m, r, lst[k], w);
		hoff_ilp_rc_mem(m, r, w);
		hoff_ilp_row_end(r);
	}
	free(cnt);
	free(lst);
	free(fill);
	return true;
}
