/* ilp_prune.c: stage planning and pruning: the binding instants, the
 * intervals kept and the prefetch boundaries each may use (the plan
 * hoff_ilp_build follows). */
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
 * Building.
 */

/* Absent range of interval v: instants it may be off the device. */
void hoff_ilp_absent_range(const hoff_ilp_iv *v, int32_t n, int32_t *w0,
			   int32_t *w1)
{
	*w0 = v->c.kind == HOFF_CAND_START ? -1 : 2 * v->c.a + 1;
	*w1 = v->c.b >= n ? 2 * n - 2 : 2 * v->c.b - 2;
}

int32_t hoff_ilp_stage_of(int32_t w)
{
	return (w + 1) / 2; /* -1 -> 0, 2k -> k, 2k - 1 -> k */
}

/* q(w): the last boundary at or before instant w (-1: time 0). */
int32_t hoff_ilp_bound_of(int32_t w)
{
	return w >= 1 ? (w - 1) / 2 : -1;
}

/* Rounds boundary k up to the stride's grid, at most hi. */
static int32_t grid_up(int32_t k, int32_t stride, int32_t hi)
{
	if (stride <= 1 || k < 0)
		return k;
	int32_t q = ((k + 1 + stride - 1) / stride) * stride - 1;
	return q > hi ? hi : q;
}

static bool push_P(plan *pl, size_t *cap, size_t *np, size_t from,
		   int32_t k)
{
	if (*np > from && pl->P[*np - 1] == k)
		return true;
	if (!hoff_grow((void **)&pl->P, cap, *np + 1, sizeof *pl->P))
		return false;
	pl->P[(*np)++] = k;
	return true;
}

/* (12) Crowded channels, in every model with a stall bound S (the
 * min-peak model, the probes). The START fetches on a tier due by op b
 * (work W_b, fixed) and an optional fetch i due by b_i <= b all move on
 * that tier's h2d channel before op b starts, at most
 * T_b = sum_{k<b} d_k + S after time 0. When D^f_i > T_b - W_b for some
 * such b, interval i has no schedule (sel_i = 0), and it is dropped
 * (late[i] = 1). On deepseek-v3-decode-4l the eight expert fetches leave
 * 133 us by op 47. Of the intervals that store a tensor at the start and
 * fetch it back before its first use, only the KV blocks' (53 us
 * fetches) stay; every weight's (160 us or more) goes: 120 intervals
 * become 89. */
void hoff_ilp_crowded(const hoff_ilp *m, const hoff_ilp_iv *all, int32_t nall,
		      int64_t most, int64_t *slack, uint8_t *late)
{
	const int32_t n = m->n;
	for (int32_t c = 0; c < m->g->ntiers; c++) {
		/* slack[b] = T_b - W_b, then its minimum over b' >= b */
		memset(slack, 0, (size_t)n * sizeof *slack);
		for (int32_t i = 0; i < nall; i++)
			if (all[i].c.kind == HOFF_CAND_START &&
			    all[i].c.tier == c && all[i].c.b < n)
				slack[all[i].c.b] -= all[i].c.fetch_ps;
		int64_t cum = 0, work = 0;
		for (int32_t b = 0; b < n; b++) {
			work -= slack[b];
			slack[b] = cum + most - work;
			cum += m->g->op[b].time_ps;
		}
		for (int32_t b = n - 2; b >= 0; b--)
			if (slack[b + 1] < slack[b])
				slack[b] = slack[b + 1];
		for (int32_t i = 0; i < nall; i++) {
			const hoff_ilp_iv *v = &all[i];
			if (v->c.kind != HOFF_CAND_START && v->c.tier == c &&
			    v->c.b < n && v->c.fetch_ps > slack[v->c.b])
				late[i] = 1;
		}
	}
}

/* Chooses the intervals kept and their boundaries for stride K; returns
 * the binaries that would need, or -1 on OOM. An interval is kept when
 * it can be off the device at a binding instant, or when it is a DIRTY
 * interval whose store would let a later kept interval of its segment
 * leave by a free detach (an "enabler": then every boundary is kept,
 * since when its own fetch is issued only trades fetch time against
 * store time). */
int64_t hoff_ilp_make_plan(hoff_ilp *m, const hoff_ilp_iv *all, int32_t nall,
			   int32_t K, plan *pl)
{
	const int32_t n = m->n;
	size_t cap = 64, np = 0;
	free(pl->P);
	pl->P = hoff_alloc(cap, sizeof *pl->P);
	uint8_t *later = hoff_zalloc((size_t)nall + 1, sizeof *later);
	if (!pl->P || !later) {
		free(later);
		return -1;
	}
	/* keep[i]: 1 covers a binding instant, 2 enabler only; 4: some
	 * later interval of its segment is kept */
	for (int32_t i = nall - 1; i >= 0; i--) {
		const hoff_ilp_iv *v = &all[i];
		int32_t w0, w1, nhot = 0, inrange = 0;
		hoff_ilp_absent_range(v, n, &w0, &w1);
		for (int32_t w = w0; w <= w1; w++) {
			if (!m->hot[IDX(w)])
				continue;
			nhot++;
			int32_t k = hoff_ilp_stage_of(w);
			inrange += v->c.b < n && k >= v->lo && k <= v->c.b - 1;
		}
		bool tail = v->c.b >= n;
		pl->keep[i] = 0;
		if (pl->late && pl->late[i])
			continue;
		if (v->c.kind == HOFF_CAND_START || v->home_end ||
		    (nhot > 0 && (tail || inrange > 0)))
			pl->keep[i] = 1;
		else if (v->c.kind == HOFF_CAND_DIRTY && !tail &&
			 later[v->c.seg])
			pl->keep[i] = 2;
		if (pl->keep[i] && v->c.kind == HOFF_CAND_DIRTY && !tail &&
		    later[v->c.seg])
			pl->keep[i] |= 4; /* a later kept interval to enable */
		if (pl->keep[i] && v->c.kind == HOFF_CAND_DIRTY)
			later[v->c.seg] = 1;
	}
	/* Where a store may be in flight at an op start (pending[k]), the
	 * compute before each op (cum) and the fetch work due by each op on
	 * each tier (due): a fetch issued late enough to stall op b lets
	 * pending stores drain first, which can be what makes memory fit,
	 * so those boundaries are kept too. */
	int64_t *pend = hoff_zalloc((size_t)n + 2, sizeof *pend);
	int64_t *cum = hoff_zalloc((size_t)n + 2, sizeof *cum);
	int64_t *due = hoff_zalloc(((size_t)n + 2) * (size_t)(m->g->ntiers + 1),
				   sizeof *due);
	uint8_t *mark = hoff_zalloc((size_t)n + 2, sizeof *mark);
	if (!pend || !cum || !due || !mark)
		goto oom;
	for (int32_t i = 0; i < nall; i++) {
		const hoff_ilp_iv *v = &all[i];
		if (pl->keep[i] && v->c.kind == HOFF_CAND_DIRTY) {
			int32_t hi = v->c.b >= n ? n - 1 : v->c.b - 1;
			if (v->c.a + 1 <= hi) {
				pend[v->c.a + 1]++;
				pend[hi + 1]--;
			}
		}
		if (v->c.b < n)
			due[(size_t)v->c.tier * ((size_t)n + 2) +
			    (size_t)v->c.b + 1] += v->c.fetch_ps;
	}
	for (int32_t k = 0; k <= n; k++) {
		pend[k + 1] += pend[k];
		cum[k + 1] = cum[k] + (k < n ? m->g->op[k].time_ps : 0);
	}
	for (int32_t t = 0; t < m->g->ntiers; t++) {
		int64_t *d = due + (size_t)t * ((size_t)n + 2);
		for (int32_t k = 0; k <= n; k++)
			d[k + 1] += d[k];
	}
	int64_t bins = 0;
	for (int32_t i = 0; i < nall; i++) {
		const hoff_ilp_iv *v = &all[i];
		pl->Poff[i] = (int32_t)np;
		bool tail = v->c.b >= n;
		/* one covering nothing may still create a stall before op b
		 * that lets a pending store drain before a binding instant */
		bool staller = !pl->keep[i] && !tail && pend[v->c.b] > 0 &&
			       !(pl->late && pl->late[i]) &&
			       (m->hot[IDX(2 * v->c.b)] ||
				m->hot[IDX(2 * v->c.b - 1)]);
		if (!pl->keep[i] && !staller)
			continue;
		bool enabler = (pl->keep[i] & 4) != 0;
		bool ok = true;
		if (v->c.kind == HOFF_CAND_START)
			ok = push_P(pl, &cap, &np, np, -1);
		if (!tail) {
			int32_t lo = v->lo < 0 ? 0 : v->lo;
			memset(mark + lo, 0, (size_t)(v->c.b - lo));
			int32_t w0, w1;
			hoff_ilp_absent_range(v, n, &w0, &w1);
			for (int32_t w = w0; !staller && w <= w1; w++) {
				int32_t k = hoff_ilp_stage_of(w);
				if (m->hot[IDX(w)] && k >= lo &&
				    k <= v->c.b - 1)
					mark[k] = 1;
			}
			const int64_t *d =
				due + (size_t)v->c.tier * ((size_t)n + 2);
			bool drain = !m->o.prune || pend[v->c.b] > 0;
			for (int32_t k = lo; k <= v->c.b - 1; k++) {
				/* compute of ops k+1 .. b-1 against the fetch
				 * work due at ops k+1 .. b */
				int64_t c = cum[v->c.b] - cum[k + 1];
				int64_t f = d[v->c.b + 1] - d[k + 1];
				if (enabler || !m->o.prune || (drain && c < f))
					mark[k] = 1;
			}
			for (int32_t k = lo; ok && k <= v->c.b - 1; k++)
				if (mark[k])
					ok = push_P(pl, &cap, &np,
						    (size_t)pl->Poff[i],
						    grid_up(k, K, v->c.b - 1));
		}
		if (!ok)
			goto oom;
		int32_t nP = (int32_t)np - pl->Poff[i];
		if (!tail && nP == 0) { /* covers no binding instant */
			pl->keep[i] = 0;
			continue;
		}
		pl->keep[i] |= 1;
		bins += nP + (v->fixed ? 0 : 2);
		if (v->c.kind == HOFF_CAND_DIRTY) {
			int32_t qend = tail ? 2 * n - 2 : 2 * pl->P[np - 1] + 1;
			for (int32_t w = 2 * v->c.a + 2; w <= qend; w++)
				bins += m->hot[IDX(w)] &&
					(K <= 1 ||
					 hoff_ilp_stage_of(w) % K == 0);
			bins += nP;
		}
	}
	free(pend);
	free(cum);
	free(due);
	free(mark);
	pl->Poff[nall] = (int32_t)np;
	free(later);
	return bins;
oom:
	free(pend);
	free(cum);
	free(due);
	free(mark);
	free(later);
	return -1;
}
