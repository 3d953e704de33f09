/* greedy_plan.c: greedy's plan object (greedy_internal.h): the candidate
 * intervals of every tensor (candidates.h) sorted for the store and the
 * prefetch order, the timeline the plan aims at, the nominal coverage of
 * each candidate against it, and copies of it for a second thread.
 * requires a finished graph; the arrays are the plan's own until
 * greedy_plan_free.
 * Cost: set-up O(ops + intervals) (counting sorts, no comparison sort);
 * a lookup on the timeline O(log distance). */
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "emit.h"
#include "greedy_internal.h"

bool greedy_has_duplex(const hoff_graph *g)
{
	for (int32_t r = 0; r < g->ntiers; r++)
		if (g->tier[r].h2d_duplex_ppm < HOFF_DUPLEX_ONE ||
		    g->tier[r].d2h_duplex_ppm < HOFF_DUPLEX_ONE)
			return true;
	return false;
}

int32_t greedy_first_at(const plan *pl, int32_t from, int64_t t)
{
	/* T never decreases and the answer is usually a few ops past from:
	 * gallop, then bisect, in O(log distance). */
	const int64_t *T = pl->T;
	int64_t n = pl->n, lo = from < 0 ? 0 : from, hi, step = 1;
	if (lo >= n)
		return (int32_t)n;
	if (T[lo] >= t)
		return (int32_t)lo;
	/* T[lo] < t: the answer is in (lo, hi], hi == n meaning none */
	for (hi = lo + 1; hi < n && T[hi] < t; hi = lo + step) {
		lo = hi;
		step *= 2;
	}
	if (hi > n)
		hi = n;
	lo++;
	while (lo < hi) {
		int64_t mid = lo + (hi - lo) / 2;
		if (T[mid] >= t)
			hi = mid;
		else
			lo = mid + 1;
	}
	return (int32_t)lo;
}

int32_t greedy_boundary_before(const plan *pl, int64_t t, int32_t hint)
{
	/* galloping from index hint (usually the deadline) */
	const int64_t *T = pl->T;
	/* x: the largest idx in [0, n] with T[idx] <= t, -1 when none */
	int64_t n = pl->n, lo, hi, step = 1;
	lo = hint < 0 ? 0 : hint > n ? n : hint;
	if (T[lo] <= t) { /* x in [lo, n] */
		for (hi = lo + 1; hi <= n && T[hi] <= t; hi = lo + step) {
			lo = hi;
			step *= 2;
		}
		hi = (hi > n + 1 ? n + 1 : hi) - 1;
	} else { /* x in [-1, lo) */
		hi = lo;
		for (lo = hi - 1; lo >= 0 && T[lo] > t; lo = hi - step) {
			hi = lo;
			step *= 2;
		}
		if (lo < 0)
			lo = -1; /* stands for an entry <= t before op 0 */
		hi--;
	}
	/* T[lo] <= t (or lo == -1), T[hi + 1] > t (or hi == n) */
	while (lo < hi) {
		int64_t mid = lo + (hi - lo + 1) / 2;
		if (T[mid] <= t)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo < 0 ? -1 : (int32_t)lo - 1;
}

/* Nominal coverage of candidate i before placement. */
static void nominal(plan *pl, size_t i)
{
	const hoff_cand *c = &pl->cand[i];
	placed *d = &pl->pd[i];
	int64_t issue = c->a < 0 ? 0 : pl->T[c->a + 1];
	d->cs0 = c->kind == HOFF_CAND_START
			 ? 0
			 : greedy_first_at(pl, c->a + 1, issue + c->store_ps);
	if (c->b >= pl->n) {
		d->pe0 = pl->n - 1;
	} else {
		int32_t p = greedy_boundary_before(
			pl, pl->T[c->b] - c->fetch_ps, c->b);
		d->pe0 = p > c->b - 1 ? c->b - 1 : p;
	}
}

/* The candidates bucketed by their first covered op (counting sort, so
 * by index within a bucket) with their scores: the order select_round
 * sweeps them in. */
void greedy_nominal_all(plan *pl)
{
	const int32_t n = pl->n;
	int32_t *off = pl->bucket_off, *fill = pl->fill;
	memset(off, 0, ((size_t)n + 2) * sizeof *off);
	for (size_t i = 0; i < pl->ncand; i++) {
		nominal(pl, i);
		if (pl->pd[i].cs0 < n)
			off[pl->pd[i].cs0 + 1]++;
	}
	for (int32_t j = 0; j <= n; j++)
		off[j + 1] += off[j];
	memcpy(fill, off, ((size_t)n + 1) * sizeof *fill);
	for (size_t i = 0; i < pl->ncand; i++) {
		const hoff_cand *c = &pl->cand[i];
		const placed *d = &pl->pd[i];
		if (d->cs0 >= n)
			continue;
		double cost = (double)(c->store_ps + c->fetch_ps) + 1.0;
		double span = (double)(pl->T[d->pe0 + 1] - pl->T[d->cs0]);
		pl->bucket[fill[d->cs0]++] = (bent){
			.hid_key = (double)c->bytes * span / cost,
			.slow_key = (double)c->bytes / cost,
			.i = (int32_t)i,
			.pe0 = d->pe0,
			.bm1 = c->b - 1,
		};
	}
}

/* Where share q of n items split into nq shares starts. */
static int32_t share_of(int32_t n, int q, int nq)
{
	return (int32_t)((int64_t)n * q / nq);
}

/* The enumeration's two passes, split by tensors into nq shares. */
typedef struct enum_pass {
	plan *pl;
	const hoff_cand_rule *rule;
	int32_t *cnt; /* (2 nq nb) each share's counts by a, then by b */
	size_t nb;
	hoff_cand *cb; /* (nq room) each share's scratch */
	size_t room;
	size_t mq[GREEDY_MAX_SHARES + 1]; /* candidates before share q */
	int nq;
} enum_pass;

/* One pass over share q: counts its candidates by a and by b (mq[q + 1]
 * gets how many), or, with place, writes each where its counts (by now
 * its next slots) say, and its part of by_b. */
static void enumerate_share(enum_pass *x, int q, bool place)
{
	plan *pl = x->pl;
	const hoff_graph *g = pl->g;
	const size_t n = (size_t)pl->n;
	int32_t *ca = x->cnt + 2 * (size_t)q * x->nb, *cbb = ca + x->nb;
	hoff_cand *c = x->cb + (size_t)q * x->room;
	/* pos and b of the k-th candidate enumerated, for by_b */
	int32_t *pos = pl->order, *bk = pl->ext;
	size_t k = x->mq[q];
	int32_t t1 = share_of(g->ntensors, q + 1, x->nq);
	for (int32_t t = share_of(g->ntensors, q, x->nq); t < t1; t++) {
		int32_t nt = hoff_cand_tensor(g, x->rule, t, c);
		for (int32_t j = 0; j < nt && !place; j++) {
			ca[c[j].a + 1]++;
			cbb[n - (size_t)c[j].b]++;
		}
		if (!place)
			x->mq[q + 1] += (size_t)nt;
		for (int32_t j = 0; j < nt && place; j++, k++) {
			pos[k] = ca[c[j].a + 1]++;
			bk[k] = c[j].b;
			pl->cand[pos[k]] = c[j];
		}
	}
	/* by (b desc, t desc): the enumeration backwards is by (t desc,
	 * a desc) */
	for (size_t i = x->mq[q + 1]; place && i-- > x->mq[q];)
		pl->by_b[cbb[n - (size_t)bk[i]]++] = pos[i];
}

/* The arrays of m candidates, after the first pass counted them. */
static bool alloc_candidates(plan *pl, size_t m)
{
	pl->ncand = m;
	pl->cand = hoff_alloc(m + 1, sizeof *pl->cand);
	pl->pd = hoff_zalloc(m + 1, sizeof *pl->pd); /* as a fresh candidate:
							unplaced, at 0 */
	pl->order = hoff_alloc(m + 1, sizeof *pl->order);
	pl->bucket = hoff_alloc(m + 1, sizeof *pl->bucket);
	pl->by_b = hoff_alloc(m + 1, sizeof *pl->by_b);
	pl->selb = hoff_zalloc(m + 1, sizeof *pl->selb);
	pl->ext = hoff_alloc(m + 1, sizeof *pl->ext);
	return m <= INT32_MAX && pl->cand && pl->pd && pl->order &&
	       pl->bucket && pl->by_b && pl->selb && pl->ext;
}

/* Step 1 in two passes over the tensors (candidates.h), as
 * hoff_cand_tensor makes them, by t then a: the first counts them by a
 * and by b, the second writes each where the (a, t) order puts it. A
 * tensor's gaps are disjoint, so (a, t) and (b, t) are keys: counting
 * sorts, stable, give the candidates by (a, t), the store issue order,
 * and by_b by (b desc, t desc), the backward deadline order, in
 * O(n + ncand), with no copy of them in between (a million ops have two
 * million). Both passes run on every thread, each over its own range of
 * tensors, with counts of its own: a range's candidates go after the
 * earlier ranges' in each bucket by a, before them by b. */
static hoff_status enumerate_sorted(plan *pl, hoff_err *e)
{
	const hoff_graph *g = pl->g;
	size_t n = (size_t)g->nops;
	hoff_cand_rule rule = {.store_tier = hoff_best_tier(g),
			       .small_below_bytes =
				       hoff_small_below(g, pl->M0)};
	enum_pass ep = {.pl = pl, .rule = &rule, .nb = n + 2, .nq = 1};
#ifdef _OPENMP
	if (g->nops > 65536)
		ep.nq = omp_get_max_threads() < GREEDY_MAX_SHARES
				? omp_get_max_threads()
				: GREEDY_MAX_SHARES;
#endif
	const int nq = ep.nq;
	ep.room = hoff_cand_room(g);
	ep.cb = hoff_alloc((size_t)nq * ep.room, sizeof *ep.cb);
	ep.cnt = hoff_zalloc(2 * (size_t)nq * ep.nb, sizeof *ep.cnt);
	hoff_status st = HOFF_OK;
	if (!ep.cb || !ep.cnt)
		goto oom;
#pragma omp parallel for schedule(static, 1) num_threads(nq)
	for (int q = 0; q < nq; q++)
		enumerate_share(&ep, q, false);
	for (int q = 0; q < nq; q++)
		ep.mq[q + 1] += ep.mq[q];
	if (!alloc_candidates(pl, ep.mq[nq]))
		goto oom;
	/* Counts become each range's next slot in each bucket. */
	int32_t at_a = 0, at_b = 0;
	for (size_t x = 0; x < ep.nb; x++) {
		for (int q = 0; q < nq; q++) {
			int32_t *c = ep.cnt + 2 * (size_t)q * ep.nb + x, k = *c;
			*c = at_a;
			at_a += k;
		}
		for (int q = nq; q-- > 0;) {
			int32_t *c = ep.cnt + (2 * (size_t)q + 1) * ep.nb + x;
			int32_t k = *c;
			*c = at_b;
			at_b += k;
		}
	}
#pragma omp parallel for schedule(static, 1) num_threads(nq)
	for (int q = 0; q < nq; q++)
		enumerate_share(&ep, q, true);
	goto out;
oom:
	st = hoff_seterr(e, HOFF_ENOMEM, "out of memory");
out:
	free(ep.cb);
	free(ep.cnt);
	return st;
}

/* Whether every plan takes c: a tier-homed input's first fetch, a clean
 * tail (dropping a clean copy for good is free), and (v2) a repeat
 * graph's state going home. */
static bool must_take(const hoff_graph *g, const hoff_cand *c)
{
	return c->kind == HOFF_CAND_START ||
	       (c->b >= g->nops &&
		(c->kind == HOFF_CAND_CLEAN || hoff_cand_goes_home(g, c)));
}

/* reach_bytes and the mandatory candidates, once the candidates have
 * their nominal coverage. */
static hoff_status plan_bounds(plan *pl, hoff_err *e)
{
	size_t m = pl->ncand;
	/* No placement covers more than [cs0, b - 1] (stores only queue,
	 * prefetches only come before b): op j keeps at least M0[j] less
	 * every candidate that could cover it. */
	memset(pl->delta, 0, ((size_t)pl->n + 1) * sizeof *pl->delta);
	for (size_t i = 0; i < m; i++) {
		const hoff_cand *c = &pl->cand[i];
		int32_t cs0 = pl->pd[i].cs0;
		int32_t last = c->b - 1 < pl->n - 1 ? c->b - 1 : pl->n - 1;
		if (cs0 <= last) {
			pl->delta[cs0] -= c->bytes;
			pl->delta[last + 1] += c->bytes;
		}
	}
	int64_t run = 0;
	for (int32_t j = 0; j < pl->n; j++) {
		run += pl->delta[j];
		if (pl->M0[j] + run > pl->reach_bytes)
			pl->reach_bytes = pl->M0[j] + run;
	}
	for (size_t i = 0; i < m; i++)
		pl->nmust += must_take(pl->g, &pl->cand[i]);
	pl->must = hoff_alloc(pl->nmust + 1, sizeof *pl->must);
	if (!pl->must)
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	pl->nmust = 0;
	for (size_t i = 0; i < m; i++)
		if (must_take(pl->g, &pl->cand[i]))
			pl->must[pl->nmust++] = (int32_t)i;
	return HOFF_OK;
}

hoff_status greedy_plan_init(plan *pl, const hoff_graph *g, int64_t end_ps,
			     hoff_err *e)
{
	memset(pl, 0, sizeof *pl);
	pl->g = g;
	pl->n = g->nops;
	size_t n = (size_t)g->nops;
	pl->T = hoff_alloc(n + 1, sizeof *pl->T);
	pl->T0 = hoff_alloc(n + 1, sizeof *pl->T0);
	pl->M0 = hoff_alloc(n + 1, sizeof *pl->M0);
	pl->M = hoff_alloc(n + 1, sizeof *pl->M);
	pl->delta = hoff_alloc(n + 2, sizeof *pl->delta);
	pl->bucket_off = hoff_alloc(n + 3, sizeof *pl->bucket_off);
	pl->fill = hoff_alloc(n + 3, sizeof *pl->fill);
	pl->ext_off = hoff_alloc(n + 3, sizeof *pl->ext_off);
	pl->ws = hoff_sim_ws_new();
	if (!pl->T || !pl->T0 || !pl->M0 || !pl->M || !pl->delta ||
	    !pl->bucket_off || !pl->fill || !pl->ext_off || !pl->ws)
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	/* Each op at its latest start for a makespan of end_ps: op k at
	 * end_ps less the compute of ops k to the last. A prefetch planned
	 * against these deadlines holds memory no longer than the allowed
	 * makespan needs; no op runs later than here (by induction: an op
	 * starts when its predecessor ends or its operands arrive, each no
	 * later than planned). */
	int64_t compute = 0;
	for (int32_t k = 0; k < g->nops; k++)
		compute += g->op[k].time_ps;
	pl->T0[0] = end_ps > compute ? end_ps - compute : 0;
	for (int32_t k = 0; k < g->nops; k++)
		pl->T0[k + 1] = pl->T0[k] + g->op[k].time_ps;
	memcpy(pl->T, pl->T0, (n + 1) * sizeof *pl->T);
	hoff_analysis_profile(g, pl->M0);
	hoff_status st = hoff_op_floor(g, &pl->floor_bytes, &pl->floor_op, e);
	if (st != HOFF_OK)
		return st;
	if ((st = enumerate_sorted(pl, e)) != HOFF_OK)
		return st;
	pl->duplex = greedy_has_duplex(g);
	if (pl->duplex &&
	    !(pl->dspan = hoff_alloc(2 * pl->ncand + 2, sizeof *pl->dspan)))
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	greedy_nominal_all(pl);
	return plan_bounds(pl, e);
}

void greedy_plan_free(plan *pl)
{
	hoff_sim_ws_free(pl->ws);
	free(pl->T);
	free(pl->T0);
	free(pl->M0);
	free(pl->M);
	free(pl->delta);
	free(pl->cand);
	free(pl->pd);
	free(pl->order);
	free(pl->by_b);
	free(pl->selb);
	free(pl->bucket_off);
	free(pl->fill);
	free(pl->ext_off);
	free(pl->ext);
	free(pl->bucket);
	free(pl->must);
	free(pl->deferred);
	free(pl->dspan);
	for (int i = 0; i < 4; i++)
		hoff_heap_free(&pl->hq[i]);
}

/* One block of greedy_plan_clone's copy. */
typedef struct copy_job {
	void *to;
	const void *from;
	size_t bytes;
} copy_job;

/* Scratch arrays (M, delta, order, fill, ext_off, ext: each written
 * before it is read in a plan) are only allocated; the rest is copied by
 * every thread, a block each, since a million ops' candidates are
 * 150 MB. */
hoff_status greedy_plan_clone(plan *dst, const plan *src)
{
	size_t n = (size_t)src->n, m = src->ncand + 1;
	*dst = *src;
	copy_job job[16];
	int nj = 0;
	bool ok = true;
#define DUP(f, count, copy)                                               \
	do {                                                              \
		dst->f = hoff_alloc((count), sizeof *src->f);             \
		if (!dst->f)                                              \
			ok = false;                                       \
		else if (copy)                                            \
			job[nj++] = (copy_job){dst->f, src->f,            \
					       (count) * sizeof *src->f}; \
	} while (0)
	memset(dst->hq, 0, sizeof dst->hq);
	if (!(dst->ws = hoff_sim_ws_new()))
		ok = false;
	DUP(T, n + 1, true);
	DUP(T0, n + 1, true);
	DUP(M0, n + 1, true);
	DUP(M, n + 1, false);
	DUP(delta, n + 2, false);
	DUP(cand, src->ncand, true);
	DUP(pd, src->ncand, true);
	DUP(order, m, false);
	DUP(by_b, m, true);
	DUP(selb, m, true);
	DUP(bucket_off, n + 3, true);
	DUP(fill, n + 3, false);
	DUP(ext_off, n + 3, false);
	DUP(ext, m, false);
	DUP(bucket, m, true);
	DUP(must, src->nmust + 1, true);
	dst->dspan = NULL;
	if (src->duplex)
		DUP(dspan, 2 * src->ncand + 2, false);
	dst->deferred = NULL;
	dst->deferred_cap = 0;
	if (src->ndeferred) {
		DUP(deferred, src->ndeferred, true);
		dst->deferred_cap = src->ndeferred;
	}
#undef DUP
	if (!ok)
		return HOFF_ENOMEM;
	enum { BLOCK = 1 << 20 };
	size_t blocks[16 + 1] = {0};
	for (int j = 0; j < nj; j++)
		blocks[j + 1] = blocks[j] + (job[j].bytes + BLOCK - 1) / BLOCK;
#pragma omp parallel for schedule(static)
	for (size_t b = 0; b < blocks[nj]; b++) {
		int j = 0;
		while (blocks[j + 1] <= b)
			j++;
		size_t at = (b - blocks[j]) * BLOCK;
		size_t len = job[j].bytes - at < BLOCK ? job[j].bytes - at
						       : BLOCK;
		memcpy((char *)job[j].to + at, (const char *)job[j].from + at,
		       len);
	}
	return HOFF_OK;
}

/* A candidate's pmin is set whenever it is selected, so only the
 * mandatory ones' need a reset. */
void greedy_plan_reset(plan *pl)
{
	memset(pl->selb, 0, pl->ncand * sizeof *pl->selb);
	for (size_t k = 0; k < pl->nmust; k++) {
		pl->selb[pl->must[k]] = 1;
		pl->pd[pl->must[k]].pmin = -1;
	}
	for (size_t k = 0; k < pl->ndeferred; k++)
		pl->pd[pl->deferred[k]].deferred = 0;
	pl->ndeferred = 0;
}
