/* greedy.c: the cost-model refinement of HyperOffload's cache operators.
 *
 * requires a finished graph; builds schedules, checks each one with the
 * simulator, returns the best; never returns a schedule the simulator
 * rejected unless it says so (rep->feasible false).
 *
 * 1. Candidates. Each tensor's residency splits into intervals between
 *    consecutive touches (producer, reads, updates): the gap after touch a
 *    until touch b. Over a gap of at least one op a tensor may leave the
 *    device: detached when it has a clean copy on a tier (weights and
 *    optimizer state fetched from their home), stored when dirty
 *    (activations stashed for backward, KV blocks), then prefetched before
 *    b. Tier-homed inputs start with a mandatory interval (they must be
 *    fetched anyway); persistent tensors have a tail after their last use.
 *    Short-lived tensors (alive for two ops or fewer), small ones (under
 *    1/4096 of the no-offload peak: the transfer is not worth its
 *    latency and bookkeeping) and tensors with offload: false never move.
 * 2. Nominal timeline T[k]: op k starts at the sum of the op times before
 *    it, and M0[k] is the memory while op k runs with nothing offloaded.
 *    An interval freed at time E and prefetched after op p takes its bytes
 *    off every op j in [cs, p] where cs is the first op after a starting at
 *    or after E.
 * 3. Selection, per round: sweep the ops; where M[j] exceeds the target,
 *    take candidates covering j, best score first: bytes × time freed /
 *    transfer time (HyperOffload's benefit against cost), those whose
 *    prefetch can still hide behind compute before any that must stall.
 * 4. Placement with channel occupancy. Stores go forward on their tier's
 *    d2h channel, first issued first served; prefetches go backward on the
 *    h2d channel from their deadline T[b], each as late as the transfers
 *    after it allow and no earlier than its eviction completes, so queued
 *    transfers never oversubscribe a link. A prefetch is issued at the
 *    last op boundary before its slot: as early as its transfer needs, no
 *    earlier, since it holds memory from issue.
 * 5. Rounds repeat selection on the placed plan until memory fits or no
 *    candidate is left; then the schedule is emitted and simulated.
 * With a budget, the fastest valid schedule found under it wins; without,
 * a bisection on the target finds the smallest peak whose simulated
 * makespan is within (1 + max_overhead) of the lower bound.
 * Cost: one plan is O((ops + intervals) log intervals). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "emit.h"
#include "greedy.h"
#include "policy.h"
#include "sim.h"

enum { IV_START, IV_DETACH, IV_STORE };
#define MIN_GAP_OPS 1 /* ops a tensor must sit out to be worth moving */
#define SHORT_LIVED_OPS 2 /* tensors alive this few ops never move */
#define SMALL_SHIFT 12 /* tensors under peak / 2^12 are not worth a move */
#define MAX_ROUNDS 4

typedef struct iv {
	int64_t bytes;
	int64_t store_ps; /* d2h duration, 0 for a detach or IV_START */
	int64_t fetch_ps; /* h2d duration, 0 for a tail */
	int64_t evict_end;/* placed: when the bytes are free */
	int64_t slot;     /* placed: prefetch start on its channel */
	int32_t t;
	int32_t a;    /* op after which it leaves; -1: before op 0 */
	int32_t b;    /* op that needs it back; nops for a tail */
	int32_t pe0;  /* latest boundary whose prefetch hides the transfer */
	int32_t cs0;  /* nominal first covered op */
	int32_t pmin; /* coverage the selection relies on: p >= pmin */
	int32_t cs, p;/* placed coverage [cs, p] */
	int16_t tier;
	uint8_t kind;
	uint8_t sel; /* 0 no, 1 hidden, 2 may stall */
	uint8_t deferred; /* times a round put it off (bounded) */
} iv;

typedef struct plan {
	const hoff_graph *g;
	int32_t n;      /* ops */
	int64_t *T;     /* (n + 1) op starts the plan assumes; T[n]: end */
	int64_t *T0;    /* (n + 1) nominal: op times summed, no stall */
	int64_t *M0;    /* (n) memory during op k, nothing offloaded */
	int64_t *M;     /* (n) memory during op k under the plan */
	int64_t *delta; /* (n + 1) scratch difference array */
	iv *iv;         /* (niv) */
	size_t niv, iv_cap;
	int32_t *order; /* (niv) scratch */
	int32_t *by_a;  /* (niv) intervals by (a, t): store issue order */
	int32_t *by_b;  /* (niv) by (b desc, t desc): backward deadlines */
	uint8_t *selb;  /* (niv) iv[i].sel, dense for the channel passes */
	int32_t *bucket_off; /* (n + 2) scratch */
	int32_t *bucket;     /* (niv) scratch */
	int32_t *fill;       /* (n + 2) scratch */
	int32_t *ext_off;    /* (n + 3) scratch: selected, by first op after p */
	int32_t *ext;        /* (niv) scratch */
	int64_t floor_bytes; /* largest memory no plan can avoid */
	bool T_real; /* T holds a simulated timeline, not T0 */
} plan;

/* A binary max-heap of interval indices keyed by a double score. */
typedef struct heap {
	int32_t *id;
	double *key;
	size_t n, cap;
} heap;

static bool heap_above(const heap *h, size_t i, size_t j)
{
	return h->key[i] > h->key[j] ||
	       (h->key[i] == h->key[j] && h->id[i] < h->id[j]);
}

static void heap_swap(heap *h, size_t i, size_t j)
{
	int32_t a = h->id[i];
	h->id[i] = h->id[j];
	h->id[j] = a;
	double k = h->key[i];
	h->key[i] = h->key[j];
	h->key[j] = k;
}

static bool heap_push(heap *h, int32_t id, double key)
{
	if (h->n == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 64;
		int32_t *a = hoff_realloc(h->id, cap, sizeof *a);
		if (!a)
			return false;
		h->id = a;
		double *k = hoff_realloc(h->key, cap, sizeof *k);
		if (!k)
			return false;
		h->key = k;
		h->cap = cap;
	}
	size_t i = h->n++;
	h->id[i] = id;
	h->key[i] = key;
	while (i > 0 && heap_above(h, i, (i - 1) / 2)) {
		heap_swap(h, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
	return true;
}

static int32_t heap_pop(heap *h)
{
	int32_t top = h->id[0];
	h->n--;
	if (h->n) {
		h->id[0] = h->id[h->n];
		h->key[0] = h->key[h->n];
		size_t i = 0;
		for (;;) {
			size_t c = 2 * i + 1, best = i;
			if (c < h->n && heap_above(h, c, best))
				best = c;
			if (c + 1 < h->n && heap_above(h, c + 1, best))
				best = c + 1;
			if (best == i)
				break;
			heap_swap(h, i, best);
			i = best;
		}
	}
	return top;
}

static void heap_free(heap *h)
{
	free(h->id);
	free(h->key);
	memset(h, 0, sizeof *h);
}

/* First op index j >= from with T[j] >= t (n when none). */
static int32_t first_at(const plan *pl, int32_t from, int64_t t)
{
	int32_t lo = from < 0 ? 0 : from, hi = pl->n;
	while (lo < hi) {
		int32_t mid = lo + (hi - lo) / 2;
		if (pl->T[mid] >= t)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* Last boundary p (prefetch issued after op p, -1 before op 0) with
 * T[p + 1] <= t. */
static int32_t boundary_before(const plan *pl, int64_t t)
{
	int32_t lo = 0, hi = pl->n; /* largest idx with T[idx] <= t */
	if (pl->T[0] > t)
		return -1;
	while (lo < hi) {
		int32_t mid = lo + (hi - lo + 1) / 2;
		if (pl->T[mid] <= t)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo - 1;
}

static bool add_iv(plan *pl, iv x)
{
	if (!hoff_grow((void **)&pl->iv, &pl->iv_cap, pl->niv + 1,
		       sizeof *pl->iv))
		return false;
	pl->iv[pl->niv++] = x;
	return true;
}

static bool updates(const hoff_graph *g, int32_t k, int32_t t)
{
	if (k < 0)
		return false;
	for (int64_t j = g->upd_off[k]; j < g->upd_off[k + 1]; j++)
		if (g->upd[j] == t)
			return true;
	return false;
}

/* Step 1: the candidate intervals of every tensor. */
static hoff_status enumerate(plan *pl, hoff_err *e)
{
	const hoff_graph *g = pl->g;
	int32_t best = hoff_best_tier(g);
	int64_t peak = 0;
	for (int32_t k = 0; k < pl->n; k++)
		if (pl->M0[k] > peak)
			peak = pl->M0[k];
	for (int32_t t = 0; t < g->ntensors; t++) {
		const hoff_tensor *x = &g->tensor[t];
		int64_t u0 = g->use_off[t], u1 = g->use_off[t + 1];
		bool homed = x->producer == HOFF_NONE && x->home != HOFF_DEVICE;
		int32_t tier = homed ? x->home : best;
		if (u0 == u1 || tier == HOFF_NONE)
			continue; /* never used, or nowhere to go */
		iv base = {.t = t, .bytes = x->bytes, .tier = (int16_t)tier};
		base.fetch_ps = hoff_xfer_ps(g, tier, x->bytes, true);
		if (homed) {
			iv s = base;
			s.kind = IV_START;
			s.a = -1;
			s.b = g->use[u0];
			s.sel = 1; /* it must be fetched anyway */
			if (!add_iv(pl, s))
				goto oom;
		}
		bool small = x->bytes < peak >> SMALL_SHIFT;
		if (!hoff_tensor_offload(x) ||
		    (!hoff_tensor_persistent(x) &&
		     hoff_tensor_lifetime(g, t) <= SHORT_LIVED_OPS))
			continue;
		/* Clean while it holds its home's copy, i.e. until updated;
		 * a copy made by a store of this plan is the emitter's to
		 * notice (it turns such a store into a detach). */
		int32_t prev = homed ? g->use[u0]
			       : x->producer != HOFF_NONE ? x->producer
							  : -1;
		bool clean = homed && !updates(g, prev, t);
		for (int64_t i = homed ? u0 + 1 : u0; i <= u1; i++) {
			bool tail = i == u1;
			if (tail && !hoff_tensor_persistent(x))
				break;
			int32_t b = tail ? g->nops : g->use[i];
			/* Small tensors only take the free move: dropping a
			 * clean copy for good. */
			if (b - prev - 1 >= MIN_GAP_OPS &&
			    (!small || (tail && clean))) {
				iv c = base;
				c.a = prev;
				c.b = b;
				c.kind = clean ? IV_DETACH : IV_STORE;
				c.store_ps = clean ? 0
						   : hoff_xfer_ps(g, tier,
								  x->bytes,
								  false);
				if (tail)
					c.fetch_ps = 0;
				if (!add_iv(pl, c))
					goto oom;
			}
			if (!tail) {
				prev = b;
				if (updates(g, b, t))
					clean = false;
			}
		}
	}
	return HOFF_OK;
oom:
	return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
}

/* Nominal coverage of an interval before placement. */
static void nominal(plan *pl, iv *c)
{
	int64_t issue = c->a < 0 ? 0 : pl->T[c->a + 1];
	c->cs0 = c->kind == IV_START ? 0
				     : first_at(pl, c->a + 1, issue + c->store_ps);
	if (c->b >= pl->n) {
		c->pe0 = pl->n - 1;
	} else {
		int32_t p = boundary_before(pl, pl->T[c->b] - c->fetch_ps);
		c->pe0 = p > c->b - 1 ? c->b - 1 : p;
	}
}

static _Thread_local const plan *sort_plan; /* for qsort's comparators */
/* Intervals in store-issue order (a, then tensor): the order of the d2h
 * channels, and nearly that of coverage, so the passes over them stream. */
static int iv_by_a(const void *x, const void *y)
{
	const iv *a = x, *b = y;
	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	return (a->b > b->b) - (a->b < b->b);
}

static int by_store(const void *x, const void *y)
{
	const iv *a = &sort_plan->iv[*(const int32_t *)x];
	const iv *b = &sort_plan->iv[*(const int32_t *)y];
	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	return (a->t > b->t) - (a->t < b->t);
}

static int by_deadline_desc(const void *x, const void *y)
{
	const iv *a = &sort_plan->iv[*(const int32_t *)x];
	const iv *b = &sort_plan->iv[*(const int32_t *)y];
	if (a->b != b->b)
		return a->b > b->b ? -1 : 1;
	return (a->t < b->t) - (a->t > b->t);
}

/* Nominal coverage of every candidate against pl->T, and the candidates
 * bucketed by their first covered op (counting sort, so by index within
 * a bucket): the order select_round sweeps them in. */
static void nominal_all(plan *pl)
{
	const int32_t n = pl->n;
	for (size_t i = 0; i < pl->niv; i++)
		nominal(pl, &pl->iv[i]);
	memset(pl->bucket_off, 0, ((size_t)n + 2) * sizeof *pl->bucket_off);
	for (size_t i = 0; i < pl->niv; i++)
		if (pl->iv[i].cs0 < n)
			pl->bucket_off[pl->iv[i].cs0 + 1]++;
	for (int32_t j = 0; j <= n; j++)
		pl->bucket_off[j + 1] += pl->bucket_off[j];
	for (int32_t j = 0; j <= n; j++)
		pl->fill[j] = pl->bucket_off[j];
	for (size_t i = 0; i < pl->niv; i++)
		if (pl->iv[i].cs0 < n)
			pl->bucket[pl->fill[pl->iv[i].cs0]++] = (int32_t)i;
}

static hoff_status plan_init(plan *pl, const hoff_graph *g, hoff_err *e)
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
	if (!pl->T || !pl->T0 || !pl->M0 || !pl->M || !pl->delta || !pl->bucket_off ||
	    !pl->fill || !pl->ext_off)
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	pl->T0[0] = 0;
	for (int32_t k = 0; k < g->nops; k++)
		pl->T0[k + 1] = pl->T0[k] + g->op[k].time_ps;
	memcpy(pl->T, pl->T0, (n + 1) * sizeof *pl->T);
	hoff_analysis_profile(g, pl->M0);
	/* What op k cannot do without: its operands and scratch. */
	for (int32_t k = 0; k < g->nops; k++) {
		int64_t need = g->op[k].workspace_bytes;
		for (int u = 0; u < 3; u++) {
			const int32_t *lst;
			int64_t nl = hoff_op_list(g, k, (hoff_use)u, &lst);
			for (int64_t j = 0; j < nl; j++)
				need += g->tensor[lst[j]].bytes;
		}
		if (need > pl->floor_bytes)
			pl->floor_bytes = need;
	}
	hoff_status st = enumerate(pl, e);
	if (st != HOFF_OK)
		return st;
	qsort(pl->iv, pl->niv, sizeof *pl->iv, iv_by_a);
	pl->order = hoff_alloc(pl->niv + 1, sizeof *pl->order);
	pl->bucket = hoff_alloc(pl->niv + 1, sizeof *pl->bucket);
	pl->by_a = hoff_alloc(pl->niv + 1, sizeof *pl->by_a);
	pl->by_b = hoff_alloc(pl->niv + 1, sizeof *pl->by_b);
	pl->selb = hoff_zalloc(pl->niv + 1, sizeof *pl->selb);
	pl->ext = hoff_alloc(pl->niv + 1, sizeof *pl->ext);
	if (!pl->order || !pl->bucket || !pl->by_a || !pl->by_b || !pl->selb ||
	    !pl->ext)
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	/* Both channel orders are fixed by the candidates: sort once. */
	for (size_t i = 0; i < pl->niv; i++)
		pl->by_a[i] = pl->by_b[i] = (int32_t)i;
	sort_plan = pl;
	qsort(pl->by_a, pl->niv, sizeof *pl->by_a, by_store);
	qsort(pl->by_b, pl->niv, sizeof *pl->by_b, by_deadline_desc);
	nominal_all(pl);
	return HOFF_OK;
}

static void plan_free(plan *pl)
{
	free(pl->T);
	free(pl->T0);
	free(pl->M0);
	free(pl->M);
	free(pl->delta);
	free(pl->iv);
	free(pl->order);
	free(pl->by_a);
	free(pl->by_b);
	free(pl->selb);
	free(pl->bucket_off);
	free(pl->fill);
	free(pl->ext_off);
	free(pl->ext);
	free(pl->bucket);
}

/* Copies *src into *dst (arrays duplicated) so two targets can be tried
 * at once; HOFF_ENOMEM leaves *dst freeable. */
static hoff_status plan_clone(plan *dst, const plan *src)
{
	size_t n = (size_t)src->n, m = src->niv + 1;
	*dst = *src;
#define DUP(f, count)                                                          \
	do {                                                                   \
		dst->f = hoff_alloc((count), sizeof *src->f);                  \
		if (!dst->f)                                                   \
			ok = false;                                            \
		else                                                           \
			memcpy(dst->f, src->f, (count) * sizeof *src->f);      \
	} while (0)
	bool ok = true;
	dst->iv_cap = src->niv;
	DUP(T, n + 1);
	DUP(T0, n + 1);
	DUP(M0, n + 1);
	DUP(M, n + 1);
	DUP(delta, n + 2);
	DUP(iv, src->niv);
	DUP(order, m);
	DUP(by_a, m);
	DUP(by_b, m);
	DUP(selb, m);
	DUP(bucket_off, n + 3);
	DUP(fill, n + 3);
	DUP(ext_off, n + 3);
	DUP(ext, m);
	DUP(bucket, m);
#undef DUP
	return ok ? HOFF_OK : HOFF_ENOMEM;
}

/* Resets selections to the mandatory ones. */
static void plan_reset(plan *pl)
{
	for (size_t i = 0; i < pl->niv; i++) {
		iv *c = &pl->iv[i];
		bool must = c->kind == IV_START ||
			    (c->b >= pl->n && c->kind == IV_DETACH);
		c->sel = pl->selb[i] = must ? 1 : 0;
		c->pmin = -1;
		c->deferred = 0;
	}
}

/* Step 4: places the selected intervals on their channels, then derives
 * coverage and the memory profile M. */
static void place(plan *pl)
{
	const hoff_graph *g = pl->g;
	/* Stores, forward, FIFO per d2h channel. */
	int64_t chan[2 * HOFF_MAX_TIERS] = {0};
	for (size_t i = 0; i < pl->niv; i++) {
		if (!pl->selb[pl->by_a[i]])
			continue;
		iv *c = &pl->iv[pl->by_a[i]];
		int64_t issue = c->a < 0 ? 0 : pl->T[c->a + 1];
		if (c->kind == IV_STORE) {
			int64_t *d2h = &chan[2 * c->tier + 1];
			int64_t start = issue > *d2h ? issue : *d2h;
			c->evict_end = start + c->store_ps;
			*d2h = c->evict_end;
		} else {
			c->evict_end = issue;
		}
		c->cs = c->kind == IV_START
				? 0
				: first_at(pl, c->a + 1, c->evict_end);
	}
	/* Prefetches, backward from the deadline per h2d channel. */
	for (int32_t r = 0; r < g->ntiers; r++)
		chan[2 * r] = INT64_MAX;
	for (size_t i = 0; i < pl->niv; i++) {
		if (!pl->selb[pl->by_b[i]])
			continue;
		iv *c = &pl->iv[pl->by_b[i]];
		if (c->b >= pl->n) {
			c->p = pl->n - 1;
			continue;
		}
		int64_t *h2d = &chan[2 * c->tier];
		int64_t end = pl->T[c->b] < *h2d ? pl->T[c->b] : *h2d;
		int64_t start = end - c->fetch_ps;
		int64_t earliest = c->evict_end;
		if (start < earliest)
			start = earliest;
		*h2d = start;
		c->slot = start;
		int32_t p = boundary_before(pl, start);
		if (p < c->pmin)
			p = c->pmin;
		if (p < c->a)
			p = c->a;
		if (p > c->b - 1)
			p = c->b - 1;
		c->p = p;
	}
	/* Coverage into M. */
	memset(pl->delta, 0, ((size_t)pl->n + 1) * sizeof *pl->delta);
	for (size_t i = 0; i < pl->niv; i++) {
		const iv *c = &pl->iv[i];
		if (c->sel && c->cs <= c->p) {
			pl->delta[c->cs] -= c->bytes;
			pl->delta[c->p + 1] += c->bytes;
		}
	}
	int64_t run = 0;
	for (int32_t j = 0; j < pl->n; j++) {
		run += pl->delta[j];
		pl->M[j] = pl->M0[j] + run;
	}
}

/* Step 3: one selection sweep against target; returns how many intervals
 * it added, or -1 on OOM. With stall, candidates whose prefetch cannot
 * hide may be taken after the hidden ones run out. */
static int64_t select_round(plan *pl, int64_t target, bool stall)
{
	const int32_t n = pl->n;
	int32_t *fill = pl->fill;
	bool ext_on = false; /* the fetch-later list is built on first need */
	int32_t next_ext = 0;
	heap hidden = {0}, slow = {0}, later = {0}, late = {0};
	int64_t added = 0, red = 0;
	/* When each tier's d2h channel is busy until, from the stores of
	 * this round: a store frees nothing before the ones ahead of it. */
	int64_t busy[HOFF_MAX_TIERS] = {0};
	memset(pl->delta, 0, ((size_t)n + 1) * sizeof *pl->delta);
	int32_t next = 0; /* bucket entries before it are in the heaps */
	for (int32_t j = 0; j < n && added >= 0; j++) {
		red += pl->delta[j];
		if (pl->M[j] + red <= target)
			continue;
		/* A violation: bring in the candidates that start by j and
		 * still cover it; the rest of the bucket never could. */
		for (; next < pl->bucket_off[j + 1]; next++) {
			int32_t i = pl->bucket[next];
			if (pl->selb[i])
				continue;
			const iv *c = &pl->iv[i];
			bool hid = c->pe0 >= j, slo = stall && c->b - 1 >= j;
			double cost = (double)(c->store_ps + c->fetch_ps) + 1.0;
			double span = (double)(pl->T[c->pe0 + 1] -
					       pl->T[c->cs0]);
			if ((hid && !heap_push(&hidden, i,
					       (double)c->bytes * span / cost)) ||
			    (slo &&
			     !heap_push(&slow, i, (double)c->bytes / cost))) {
				added = -1;
				break;
			}
		}
		for (; ext_on && next_ext < pl->ext_off[j + 1] && added >= 0;
		     next_ext++) {
			int32_t i = pl->ext[next_ext];
			/* farthest consumer first: its wait costs least */
			if (pl->iv[i].b - 1 >= j &&
			    !heap_push(&late, i, (double)pl->iv[i].b))
				added = -1;
		}
		/* Candidates whose store would have freed too late for an
		 * earlier op come back at the first op it frees in time. */
		while (later.n && -later.key[0] <= (double)j && added >= 0) {
			int32_t i = heap_pop(&later);
			const iv *c = &pl->iv[i];
			double cost = (double)(c->store_ps + c->fetch_ps) + 1.0;
			if (!heap_push(&slow, i, (double)c->bytes / cost))
				added = -1;
		}
		int64_t excess = pl->M[j] + red - target;
		while (excess > 0 && added >= 0) {
			int32_t i = HOFF_NONE;
			while (hidden.n) {
				int32_t c = heap_pop(&hidden);
				if (!pl->iv[c].sel && pl->iv[c].pe0 >= j) {
					i = c;
					break;
				}
			}
			bool hid = i != HOFF_NONE;
			while (i == HOFF_NONE && slow.n) {
				int32_t c = heap_pop(&slow);
				if (!pl->iv[c].sel && pl->iv[c].b - 1 >= j)
					i = c;
			}
			if (i == HOFF_NONE && stall && !ext_on) {
				/* Selected intervals whose prefetch comes before
				 * j and whose consumer comes after it could be
				 * fetched later: list them by first op after p. */
				ext_on = true;
				memset(pl->ext_off, 0,
				       ((size_t)n + 3) * sizeof *pl->ext_off);
				for (size_t q = 0; q < pl->niv; q++) {
					const iv *d = &pl->iv[q];
					if (d->sel && d->b < n && d->p < d->b - 1)
						pl->ext_off[d->p + 2]++;
				}
				for (int32_t k = 0; k <= n; k++)
					pl->ext_off[k + 1] += pl->ext_off[k];
				for (int32_t k = 0; k <= n; k++)
					fill[k] = pl->ext_off[k];
				for (size_t q = 0; q < pl->niv; q++) {
					const iv *d = &pl->iv[q];
					if (d->sel && d->b < n && d->p < d->b - 1)
						pl->ext[fill[d->p + 1]++] =
							(int32_t)q;
				}
				for (; next_ext < pl->ext_off[j + 1]; next_ext++) {
					int32_t q = pl->ext[next_ext];
					if (pl->iv[q].b - 1 >= j &&
					    !heap_push(&late, q,
						       (double)pl->iv[q].b))
						added = -1;
				}
			}
			if (i == HOFF_NONE) {
				/* Last resort: fetch a selected tensor right
				 * before its consumer instead (it may stall). */
				while (late.n) {
					iv *c = &pl->iv[heap_pop(&late)];
					if (c->b - 1 < j || c->pmin >= c->b - 1)
						continue;
					c->pmin = c->b - 1;
					c->sel = pl->selb[c - pl->iv] = 2;
					red -= c->bytes;
					pl->delta[c->b] += c->bytes;
					excess -= c->bytes;
					added++;
					break;
				}
				if (excess > 0 && !late.n)
					break; /* target too low */
				continue;
			}
			iv *c = &pl->iv[i];
			if (c->kind == IV_STORE) {
				int64_t issue = c->a < 0 ? 0 : pl->T[c->a + 1];
				int64_t done = (issue > busy[c->tier]
							? issue
							: busy[c->tier]) +
					       c->store_ps;
				if (done > pl->T[j]) { /* frees too late */
					int32_t at = first_at(pl, j + 1, done);
					if (at < c->b && c->deferred < 2 &&
					    !heap_push(&later, i, -(double)at))
						added = -1;
					c->deferred++;
					continue;
				}
				busy[c->tier] = done;
			}
			c->sel = pl->selb[i] = hid ? 1 : 2;
			int32_t end = hid ? c->pe0 : c->b - 1;
			if (end > n - 1)
				end = n - 1;
			c->pmin = hid ? j : end;
			red -= c->bytes;
			pl->delta[end + 1] += c->bytes;
			excess -= c->bytes;
			added++;
		}
	}
	heap_free(&hidden);
	heap_free(&slow);
	heap_free(&later);
	heap_free(&late);
	return added;
}

static int64_t peak_of(const plan *pl)
{
	int64_t m = 0;
	for (int32_t j = 0; j < pl->n; j++)
		if (pl->M[j] > m)
			m = pl->M[j];
	return m;
}

static int by_issue(const void *x, const void *y)
{
	const iv *a = &sort_plan->iv[*(const int32_t *)x];
	const iv *b = &sort_plan->iv[*(const int32_t *)y];
	if (a->p != b->p)
		return a->p < b->p ? -1 : 1;
	if (a->slot != b->slot)
		return a->slot < b->slot ? -1 : 1;
	if (a->b != b->b) /* earliest deadline first */
		return a->b < b->b ? -1 : 1;
	return (a->t > b->t) - (a->t < b->t);
}

/* Writes the placed plan as steps: at each boundary the evictions, then
 * the prefetches in channel order, then the next op. */
static hoff_sched *emit_plan(plan *pl, hoff_status *st)
{
	const hoff_graph *g = pl->g;
	hoff_emit m;
	if ((*st = hoff_emit_init(&m, g, "greedy")) != HOFF_OK)
		return NULL;
	size_t ne = 0, np = 0;
	int32_t *ev = pl->order, *pf = pl->ext; /* scratch */
	for (size_t k = 0; k < pl->niv; k++) {
		int32_t i = pl->by_a[k];
		if (!pl->selb[i])
			continue;
		const iv *c = &pl->iv[i];
		if (c->kind != IV_START && c->cs > c->p)
			continue; /* covers nothing after placement */
		if (c->kind != IV_START)
			ev[ne++] = i;
		if (c->b < pl->n)
			pf[np++] = i;
	}
	sort_plan = pl;
	qsort(pf, np, sizeof *pf, by_issue);
	size_t ie = 0, ip = 0;
	for (int32_t q = -1; q < pl->n; q++) {
		if (q >= 0)
			hoff_emit_op(&m, q);
		for (; ie < ne && pl->iv[ev[ie]].a == q; ie++)
			hoff_emit_evict(&m, pl->iv[ev[ie]].t);
		for (; ip < np && pl->iv[pf[ip]].p == q; ip++)
			hoff_emit_prefetch(&m, pl->iv[pf[ip]].t);
	}
	hoff_sched *s = hoff_emit_finish(&m);
	*st = s ? HOFF_OK : HOFF_ENOMEM;
	return s;
}

/* Plans for one memory target and returns the emitted schedule. */
static hoff_sched *plan_for(plan *pl, int64_t target, bool stall,
			    hoff_status *st)
{
	plan_reset(pl);
	place(pl);
	for (int round = 0; round < MAX_ROUNDS && peak_of(pl) > target;
	     round++) {
		int64_t added = select_round(pl, target, stall);
		if (added < 0) {
			*st = HOFF_ENOMEM;
			return NULL;
		}
		if (added == 0)
			break;
		place(pl);
		/* Drop what placement left covering nothing: it only loads a
		 * channel. Its coverage was empty, so M stands; the next
		 * placement gives the others its channel time. */
		for (size_t i = 0; i < pl->niv; i++) {
			iv *c = &pl->iv[i];
			if (c->sel && c->kind != IV_START && c->cs > c->p)
				c->sel = pl->selb[i] = 0;
		}
	}
	return emit_plan(pl, st);
}

typedef struct cand {
	hoff_sched *s;
	int64_t peak, makespan;
	bool legal; /* every rule but the budget's holds */
	char source[32];
} cand;

/* Simulates s into c, budget aside; with T, also returns each op's
 * simulated start (the timeline the next refinement plans against). */
static hoff_status judge(const hoff_graph *g, hoff_sched *s, cand *c,
			 const char *source, int64_t *T, hoff_err *e)
{
	hoff_sim_opts o = hoff_sim_defaults();
	o.budget_bytes = INT64_MAX;
	o.op_times = T != NULL;
	hoff_sim_result r;
	hoff_status st = hoff_sim_run(g, s, &o, &r, e);
	if (st != HOFF_OK) {
		hoff_sched_free(s);
		return st;
	}
	c->s = s;
	c->peak = r.summary.peak_bytes;
	c->makespan = r.summary.makespan_ps;
	c->legal = r.valid;
	snprintf(c->source, sizeof c->source, "%s", source);
	if (T)
		memcpy(T, r.op_start_ps, ((size_t)g->nops + 1) * sizeof *T);
	hoff_sim_result_free(&r);
	return HOFF_OK;
}

/* The objective: fit under cap first; then, with a bound, meet it with
 * the smallest peak; else (or when none meets it) be fastest. */
typedef struct goal {
	int64_t cap;   /* budget, or the device's memory */
	int64_t bound; /* makespan bound in ps, HOFF_NONE with a budget */
} goal;

static bool better(const cand *c, const cand *b, goal go)
{
	if (!c->legal)
		return false;
	if (!b->s || !b->legal)
		return true;
	bool cf = c->peak <= go.cap, bf = b->peak <= go.cap;
	if (cf != bf)
		return cf;
	bool lower = c->peak < b->peak ||
		     (c->peak == b->peak && c->makespan < b->makespan);
	bool faster = c->makespan < b->makespan ||
		      (c->makespan == b->makespan && c->peak < b->peak);
	if (!cf)
		return lower;
	if (go.bound != HOFF_NONE) {
		bool cb = c->makespan <= go.bound, bb = b->makespan <= go.bound;
		if (cb != bb)
			return cb;
		if (cb)
			return lower;
	}
	return faster;
}

/* Keeps the better of *best and c; frees the other. */
static void keep(cand *best, cand *c, goal go)
{
	if (better(c, best, go)) {
		hoff_sched_free(best->s);
		*best = *c;
	} else {
		hoff_sched_free(c->s);
	}
	c->s = NULL;
}

typedef struct tried {
	int64_t peak, makespan;
	bool fits; /* some pass met the objective's constraint */
} tried;

/* Plans for one target `passes` times: first against the stall-free
 * timeline, then each against the timeline the previous simulation showed
 * (stalls included); every pass is a candidate for *best. *t gets the
 * best pass of this target under the constraint. */
static hoff_status try_target(plan *pl, int64_t target, bool stall,
			      int passes, bool prune, goal go, cand *best,
			      tried *t, int *iters, hoff_err *e)
{
	const hoff_graph *g = pl->g;
	if (pl->T_real) { /* back to the stall-free timeline */
		memcpy(pl->T, pl->T0, ((size_t)pl->n + 1) * sizeof *pl->T);
		nominal_all(pl);
		pl->T_real = false;
	}
	memset(t, 0, sizeof *t);
	t->peak = INT64_MAX;
	t->makespan = INT64_MAX;
	for (int pass = 0; pass < passes; pass++) {
		hoff_status st;
		hoff_sched *s = plan_for(pl, target, stall, &st);
		if (!s)
			return hoff_seterr(e, st, "out of memory");
		if (prune && pass == 0 && peak_of(pl) > target) {
			/* The plan itself misses the target: in a bisection,
			 * call the target missed without simulating. */
			hoff_sched_free(s);
			(*iters)++;
			break;
		}
		cand c = {0};
		if ((st = judge(g, s, &c, "greedy", pl->T, e)))
			return st;
		pl->T_real = true;
		if (pass + 1 < passes)
			nominal_all(pl); /* the next pass plans against it */
		(*iters)++;
		bool fits = c.legal && c.peak <= go.cap &&
			    (go.bound == HOFF_NONE ||
			     (c.makespan <= go.bound && c.peak <= target));
		if (fits && (!t->fits || c.peak < t->peak ||
			     (c.peak == t->peak && c.makespan < t->makespan))) {
			t->peak = c.peak;
			t->makespan = c.makespan;
		} else if (!t->fits && !fits && c.peak < t->peak) {
			t->peak = c.peak;
			t->makespan = c.makespan;
		}
		t->fits = t->fits || fits;
		keep(best, &c, go);
	}
	return HOFF_OK;
}

hoff_status hoff_greedy_run(const hoff_graph *g, const hoff_policy_opts *o,
			    hoff_sched **out, hoff_policy_report *rep,
			    hoff_err *e)
{
	plan pl;
	hoff_analysis an;
	cand best = {0}, c = {0};
	*out = NULL;
	hoff_status st = hoff_analyze(g, &an, e);
	if (st == HOFF_OK)
		st = plan_init(&pl, g, e);
	if (st != HOFF_OK)
		goto out;
	int64_t bound = (int64_t)floor((1.0 + o->max_overhead) *
				       (double)an.lower_bound_ps);
	goal go = {.cap = o->budget_bytes != HOFF_NONE ? o->budget_bytes
						       : g->device.memory_bytes,
		   .bound = o->budget_bytes != HOFF_NONE ? HOFF_NONE : bound};
	rep->lower_bound_ps = an.lower_bound_ps;
	rep->noffload_peak_bytes = an.closed_peak_bytes;
	/* The baselines are candidates too: greedy never returns worse. */
	static const struct {
		hoff_policy_kind kind;
		int32_t n;
		const char *name;
	} base[] = {{HOFF_POLICY_NONE, 0, "none"},
		    {HOFF_POLICY_REACTIVE, 0, "reactive"},
		    {HOFF_POLICY_LOOKAHEAD, 1, "lookahead:1"},
		    {HOFF_POLICY_LOOKAHEAD, 2, "lookahead:2"}};
	enum { NBASE = sizeof base / sizeof base[0] };
	cand bc[NBASE] = {{0}};
	hoff_status bst[NBASE];
	hoff_err be[NBASE];
	/* Independent plans: in parallel, then kept in a fixed order, so
	 * the result does not depend on the number of threads. */
#pragma omp parallel for schedule(dynamic, 1)
	for (int i = 0; i < NBASE; i++) {
		hoff_policy_opts bo = *o;
		bo.kind = base[i].kind;
		bo.lookahead = base[i].n;
		hoff_sched *s = NULL;
		bst[i] = hoff_policy_baseline(g, &bo, &s, &be[i]);
		if (bst[i] == HOFF_OK)
			bst[i] = judge(g, s, &bc[i], base[i].name, NULL, &be[i]);
	}
	for (int i = 0; i < NBASE; i++)
		if (bst[i] != HOFF_OK && st == HOFF_OK) {
			st = bst[i];
			if (e)
				*e = be[i];
		}
	for (int i = 0; i < NBASE; i++) {
		if (st == HOFF_OK)
			keep(&best, &bc[i], go);
		hoff_sched_free(bc[i].s);
	}
	if (st != HOFF_OK)
		goto out;
	int64_t hi = pl.M0[0], lo = pl.floor_bytes;
	for (int32_t j = 0; j < pl.n; j++)
		if (pl.M0[j] > hi)
			hi = pl.M0[j];
	int iters = 0;
	if (go.bound != HOFF_NONE) {
		/* Smallest peak within the overhead bound: bisect the target. */
		if (lo > hi)
			lo = hi;
		/* Two targets at a time, one per thread, each on its own copy
		 * of the plan: the bracket shrinks to a third per step. */
		plan pl2;
		bool two = plan_clone(&pl2, &pl) == HOFF_OK;
		bool first = true;
		while (iters < 40 && (first || hi - lo > (hi >> 6))) {
			int64_t m[2];
			int nm = 1;
			if (first) {
				m[0] = hi;
			} else if (two && hi - lo > 2) {
				m[0] = lo + (hi - lo) / 3;
				m[1] = lo + 2 * ((hi - lo) / 3);
				nm = 2;
			} else {
				m[0] = lo + (hi - lo) / 2;
			}
			first = false;
			tried t[2];
			cand b2[2] = {{0}};
			hoff_status s2[2] = {HOFF_OK, HOFF_OK};
			hoff_err e2[2];
			int it2[2] = {0, 0};
#pragma omp parallel for schedule(static, 1) if (nm == 2)
			for (int k = 0; k < nm; k++)
				s2[k] = try_target(k ? &pl2 : &pl, m[k], true, 2,
						   true, go, &b2[k], &t[k],
						   &it2[k], &e2[k]);
			for (int k = 0; k < nm; k++) {
				iters += it2[k];
				if (s2[k] != HOFF_OK && st == HOFF_OK) {
					st = s2[k];
					if (e)
						*e = e2[k];
				}
				keep(&best, &b2[k], go);
				hoff_sched_free(b2[k].s);
				if (o->progress && st == HOFF_OK)
					fprintf(stderr,
						"hoffopt: greedy: target %lld B: "
						"peak %lld B, makespan %.6g s%s\n",
						(long long)m[k],
						(long long)t[k].peak,
						hoff_s(t[k].makespan),
						t[k].fits ? "" : " (misses)");
			}
			if (st != HOFF_OK)
				break;
			if (t[0].fits) {
				hi = m[0];
			} else if (nm == 2 && t[1].fits) {
				lo = m[0] + 1;
				hi = m[1];
			} else {
				lo = m[nm - 1] + 1;
			}
		}
		if (two)
			plan_free(&pl2);
		if (st != HOFF_OK)
			goto out;
	}
	if (go.bound == HOFF_NONE || best.peak > go.cap ||
	    best.makespan > go.bound) {
		/* Fastest under the cap (the budget, or the device when the
		 * bound cannot be met): aim at it, then tighten the aim by
		 * what the simulation overshot. */
		int64_t target = go.cap;
		for (int k = 0; k < 6 && target >= 0; k++) {
			tried t;
			st = try_target(&pl, target, true, 2, false, go, &best, &t,
					&iters, e);
			if (st != HOFF_OK)
				goto out;
			if (o->progress)
				fprintf(stderr,
					"hoffopt: greedy: target %lld B: peak "
					"%lld B, makespan %.6g s\n",
					(long long)target, (long long)t.peak,
					hoff_s(t.makespan));
			if (t.peak <= go.cap)
				break;
			target -= t.peak - go.cap;
		}
		/* Aiming lower can be faster (fewer prefetches pile up behind
		 * a busy link); try a few lower aims and keep the fastest. */
		for (int k = 1; k <= 3; k++) {
			tried t;
			st = try_target(&pl, target - target / 6 * k, true, 2,
					false, go, &best, &t, &iters, e);
			if (st != HOFF_OK)
				goto out;
		}
	}
	rep->iterations = iters;
	if (!best.s || !best.legal) {
		st = hoff_seterr(e, HOFF_EINPUT,
				 "greedy found no legal schedule (a bug)");
		goto out;
	}
	*out = best.s;
	hoff_sched_set_policy(*out, "greedy");
	rep->peak_bytes = best.peak;
	rep->makespan_ps = best.makespan;
	rep->feasible = best.peak <= go.cap &&
			(go.bound == HOFF_NONE || best.makespan <= go.bound);
	snprintf(rep->source, sizeof rep->source, "%s", best.source);
	best.s = NULL;
out:
	hoff_sched_free(best.s);
	hoff_sched_free(c.s);
	plan_free(&pl);
	return st;
}
