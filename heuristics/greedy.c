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
 *    Short-lived tensors (alive for two ops or fewer) and tensors with
 *    offload: false never move; small ones (under 1/4096 of the
 *    no-offload peak: the transfer is not worth its latency and
 *    bookkeeping) only drop a clean copy after their last use. The
 *    enumeration is the exact solver's too (candidates.h).
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
 * a search on the target (a gallop down from the top, then a bisection)
 * finds the smallest peak whose simulated makespan is within
 * (1 + max_overhead) of the lower bound, wherever it lies (the device's
 * memory caps the answer only afterwards).
 * 6. Refinement on the simulator (refine.c): from the best schedule, over
 *    these candidates and the small tensors' gaps, moves at the peak
 *    (hold a prefetch back past the peak's op, evict what that op does
 *    not touch: a store after a block's last write included) are kept
 *    while they lower (peak, instants at the peak) within the bound; in
 *    budget mode moves at the longest stall are kept while faster.
 * 7. Budget mode also asks the overhead mode the other way round: the
 *    smallest overhead on a ladder (bisected) whose least peak fits the
 *    budget gives a fast plan under it.
 * With a budget, plans aim at the lower bound's timeline, the fastest
 * possible: op k no later than lower_bound_s less the compute of ops k
 * to the last (on a link-bound graph the compute-only timeline sets
 * deadlines no link meets).
 * Cost: one plan is O((ops + intervals) log intervals); the candidates
 * are sorted once, by counting sorts, in O(ops + intervals). The
 * refinement simulates at most REFINE_WORK schedule steps in all (none
 * on schedules past REFINE_WORK / 16 steps, e.g. a million ops), so it
 * adds O(REFINE_WORK) whatever the size; such plans also take one pass
 * per target of the peak search, not two. Targets no plan against T0
 * can meet (under reach_bytes) are called missed without planning.
 * Set-up runs beside the baselines. No schedule peaks under the floor,
 * the most one op needs while it runs (hoff_op_floor); a cap under it is
 * reported (rep->floor_bytes) and, on such big plans, not aimed at.
 * Past REFINE_WORK / 16 ops (a million-op graph: 2.5 s of greedy, a third
 * of it reading) also: a baseline stops planning once its floor passes
 * the bound, and is planned in full and simulated only if no schedule
 * met the bound within the device (resolve_baselines); the set-up then
 * runs first, on every thread; a target of the peak search is called
 * missed at the first op where its selection finds no candidate left
 * (quit_low). Each of these left the schedules of bench/bench_scale.sh's
 * million-op graphs as they were. */
#include <math.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "baselines.h"
#include "candidates.h"
#include "emit.h"
#include "greedy.h"
#include "refine.h"
#include "sim.h"

enum {
	IV_START = HOFF_CAND_START,
	IV_DETACH = HOFF_CAND_CLEAN,
	IV_STORE = HOFF_CAND_DIRTY,
};
#define MAX_ROUNDS 4
#define GALLOP_SHIFT 6 /* first step down: peak / 2^6 */
#define STOP_SHIFT 8 /* the search stops at a bracket of peak / 2^8 */
#define REFINE_WORK  4000000 /* schedule steps the refinement simulates */

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
	uint8_t deferred; /* times a round put it off (bounded) */
} iv;

/* A 4-ary max-heap of interval indices keyed by a double score; ties by
 * the lowest index, so any heap pops the same order. Entries are 16
 * bytes, so a node's four children share one cache line: a sift down a
 * heap of millions misses half as often as in a binary heap. */
typedef struct hent {
	double key;
	int32_t id;
	int32_t aux; /* an op index the pop tests staleness against */
} hent;

typedef struct heap {
	hent *e;
	size_t n, cap;
} heap;

/* A candidate as select_round's sweep meets it: its scores against the
 * timeline nominal_all saw, beside the index, so the sweep streams. */
typedef struct bent {
	double hid_key;  /* bytes x time freed / transfer time */
	double slow_key; /* bytes / transfer time */
	int32_t i;       /* the interval */
	int32_t pe0, bm1;/* its pe0 and b - 1 */
} bent;

typedef struct plan {
	const hoff_graph *g;
	int32_t n;      /* ops */
	int64_t *T;     /* (n + 1) op starts the plan assumes; T[n]: end */
	int64_t *T0;    /* (n + 1) nominal: op times summed, no stall */
	int64_t *M0;    /* (n) memory during op k, nothing offloaded */
	int64_t *M;     /* (n) memory during op k under the plan */
	int64_t *delta; /* (n + 1) scratch difference array */
	iv *iv;         /* (niv) by (a, t): store issue order */
	size_t niv, iv_cap;
	int32_t *order; /* (niv) scratch */
	int32_t *by_b;  /* (niv) by (b desc, t desc): backward deadlines */
	uint8_t *selb;  /* (niv) selected: 0 no, 1 hidden, 2 may stall */
	int32_t *bucket_off; /* (n + 2) scratch */
	bent *bucket;        /* (niv) candidates by nominal first covered op */
	int32_t *fill;       /* (n + 2) scratch */
	int32_t *ext_off;    /* (n + 3) scratch: selected, by first op after p */
	int32_t *ext;        /* (niv) scratch */
	heap hq[4];          /* select_round's heaps, kept for their memory */
	int32_t *must;       /* (nmust) candidates every plan selects */
	size_t nmust;
	int32_t *deferred;   /* (ndeferred) candidates with iv.deferred > 0 */
	size_t ndeferred, deferred_cap;
	int64_t floor_bytes; /* largest memory no plan can avoid */
	int32_t floor_op;    /* the op that needs it (hoff_op_floor) */
	int64_t reach_bytes; /* a peak no plan against T0 can go under */
	bool T_real; /* T holds a simulated timeline, not T0 */
	hoff_sim_ws *ws; /* the simulator's buffers, for this plan's runs */
	/* A plan of the peak search at scale stops at the first op a
	 * selection finds no candidate left for (select_round sets low):
	 * such a target has never been met on the million-op graphs, and
	 * the rest of its rounds cost a fit's time twice over. */
	bool quit_low, low;
} plan;

static inline bool hent_above(hent a, hent b)
{
	return a.key > b.key || (a.key == b.key && a.id < b.id);
}

static bool heap_push(heap *h, int32_t id, double key, int32_t aux)
{
	if (!hoff_grow((void **)&h->e, &h->cap, h->n + 1, sizeof *h->e))
		return false;
	hent x = {.key = key, .id = id, .aux = aux};
	size_t i = h->n++;
	while (i > 0 && hent_above(x, h->e[(i - 1) / 4])) {
		h->e[i] = h->e[(i - 1) / 4];
		i = (i - 1) / 4;
	}
	h->e[i] = x;
	return true;
}

static hent heap_pop(heap *h)
{
	hent top = h->e[0];
	size_t n = --h->n;
	if (n) {
		hent x = h->e[n];
		size_t i = 0;
		for (;;) {
			size_t c = 4 * i + 1, end = c + 4 < n ? c + 4 : n;
			if (c >= n)
				break;
			for (size_t d = c + 1; d < end; d++)
				if (hent_above(h->e[d], h->e[c]))
					c = d;
			if (!hent_above(h->e[c], x))
				break;
			h->e[i] = h->e[c];
			i = c;
		}
		h->e[i] = x;
	}
	return top;
}

static void heap_free(heap *h)
{
	free(h->e);
	memset(h, 0, sizeof *h);
}

/* First op index j >= from with T[j] >= t (n when none). T never
 * decreases and the answer is usually a few ops past from: gallop, then
 * bisect, in O(log distance). */
static int32_t first_at(const plan *pl, int32_t from, int64_t t)
{
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

/* Last boundary p (prefetch issued after op p, -1 before op 0) with
 * T[p + 1] <= t, galloping from index hint (usually the deadline). */
static int32_t boundary_before(const plan *pl, int64_t t, int32_t hint)
{
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

/* A candidate as the plan holds it, not yet placed. */
static iv iv_of(const hoff_cand *c)
{
	return (iv){.bytes = c->bytes,
		    .store_ps = c->store_ps,
		    .fetch_ps = c->fetch_ps,
		    .t = c->t,
		    .a = c->a,
		    .b = c->b,
		    .tier = c->tier,
		    .kind = c->kind};
}

static bool add_iv(plan *pl, iv x)
{
	if (!hoff_grow((void **)&pl->iv, &pl->iv_cap, pl->niv + 1,
		       sizeof *pl->iv))
		return false;
	pl->iv[pl->niv++] = x;
	return true;
}

/* Step 1: the candidate intervals of every tensor (candidates.h); with
 * all, small tensors' gaps too (the refinement's candidates). */
static hoff_status enumerate(plan *pl, bool all, hoff_err *e)
{
	const hoff_graph *g = pl->g;
	hoff_cand_rule r = {.store_tier = hoff_best_tier(g),
			    .small_below_bytes =
				    all ? 0 : hoff_small_below(g, pl->M0)};
	hoff_cand *c = hoff_alloc(hoff_cand_room(g), sizeof *c);
	if (!c)
		goto oom;
	for (int32_t t = 0; t < g->ntensors; t++) {
		int32_t k = hoff_cand_tensor(g, &r, t, c);
		for (int32_t j = 0; j < k; j++)
			if (!add_iv(pl, iv_of(&c[j])))
				goto oom;
	}
	free(c);
	return HOFF_OK;
oom:
	free(c);
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
		int32_t p = boundary_before(pl, pl->T[c->b] - c->fetch_ps,
					    c->b);
		c->pe0 = p > c->b - 1 ? c->b - 1 : p;
	}
}

static _Thread_local const plan *sort_plan; /* for qsort's comparator */

/* Nominal coverage of every candidate against pl->T, and the candidates
 * bucketed by their first covered op (counting sort, so by index within
 * a bucket) with their scores: the order select_round sweeps them in. */
static void nominal_all(plan *pl)
{
	const int32_t n = pl->n;
	int32_t *off = pl->bucket_off, *fill = pl->fill;
	memset(off, 0, ((size_t)n + 2) * sizeof *off);
	for (size_t i = 0; i < pl->niv; i++) {
		iv *c = &pl->iv[i];
		nominal(pl, c);
		if (c->cs0 < n)
			off[c->cs0 + 1]++;
	}
	for (int32_t j = 0; j <= n; j++)
		off[j + 1] += off[j];
	memcpy(fill, off, ((size_t)n + 1) * sizeof *fill);
	for (size_t i = 0; i < pl->niv; i++) {
		const iv *c = &pl->iv[i];
		if (c->cs0 >= n)
			continue;
		double cost = (double)(c->store_ps + c->fetch_ps) + 1.0;
		double span = (double)(pl->T[c->pe0 + 1] - pl->T[c->cs0]);
		pl->bucket[fill[c->cs0]++] = (bent){
			.hid_key = (double)c->bytes * span / cost,
			.slow_key = (double)c->bytes / cost,
			.i = (int32_t)i,
			.pe0 = c->pe0,
			.bm1 = c->b - 1,
		};
	}
}

/* Where share q of n items split into nq shares starts. */
static int32_t share_of(int32_t n, int q, int nq)
{
	return (int32_t)((int64_t)n * q / nq);
}

/* plan_init's enumeration, split by tensors into nq shares. */
typedef struct enum_pass {
	plan *pl;
	const hoff_cand_rule *rule;
	int32_t *cnt; /* (2 nq nb) each share's counts by a, then by b */
	size_t nb;
	hoff_cand *cb; /* (nq room) each share's scratch */
	size_t room;
	size_t *mq; /* (nq + 1) candidates before share q */
	int nq;
} enum_pass;

/* One pass over share q: counts its candidates by a and by b (mq[q + 1]
 * gets how many), or, with place, writes each where its counts (by now
 * its next slots) say, and its part of by_b. */
static void enumerate_share(const enum_pass *x, int q, bool place)
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
			pl->iv[pos[k]] = iv_of(&c[j]);
		}
	}
	/* by (b desc, t desc): the enumeration backwards is by (t desc,
	 * a desc) */
	for (size_t i = x->mq[q + 1]; place && i-- > x->mq[q];)
		pl->by_b[cbb[n - (size_t)bk[i]]++] = pos[i];
}

static hoff_status plan_init(plan *pl, const hoff_graph *g, int64_t end_ps,
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
	/* Step 1 in two passes over the tensors (candidates.h), as enumerate
	 * makes them, by t then a: the first counts them by a and by b, the
	 * second writes each where the (a, t) order puts it. A tensor's gaps
	 * are disjoint, so (a, t) and (b, t) are keys: counting sorts, stable,
	 * give the candidates by (a, t), the store issue order, and by_b by
	 * (b desc, t desc), the backward deadline order, in O(n + niv), with
	 * no copy of them in between (a million ops have two million). */
	hoff_cand_rule rule = {.store_tier = hoff_best_tier(g),
			       .small_below_bytes =
				       hoff_small_below(g, pl->M0)};
	/* Both passes run on every thread, each over its own range of
	 * tensors, with counts of its own: a range's candidates go after
	 * the earlier ranges' in each bucket by a, before them by b. */
	int nq = 1;
#ifdef _OPENMP
	if (g->nops > 65536)
		nq = omp_get_max_threads() < 8 ? omp_get_max_threads() : 8;
#endif
	size_t room = hoff_cand_room(g), nb = n + 2;
	hoff_cand *cb = hoff_alloc((size_t)nq * room, sizeof *cb);
	int32_t *cnt = hoff_zalloc(2 * (size_t)nq * nb, sizeof *cnt);
	if (!cb || !cnt) {
		free(cb);
		free(cnt);
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	}
	size_t mq[8 + 1] = {0}; /* candidates before range q */
	enum_pass ep = {pl, &rule, cnt, nb, cb, room, mq, nq};
#pragma omp parallel for schedule(static, 1) num_threads(nq)
	for (int q = 0; q < nq; q++)
		enumerate_share(&ep, q, false);
	for (int q = 0; q < nq; q++)
		mq[q + 1] += mq[q];
	size_t m = mq[nq];
	pl->niv = m;
	pl->iv = hoff_alloc(m + 1, sizeof *pl->iv);
	pl->iv_cap = m + 1;
	pl->order = hoff_alloc(m + 1, sizeof *pl->order);
	pl->bucket = hoff_alloc(m + 1, sizeof *pl->bucket);
	pl->by_b = hoff_alloc(m + 1, sizeof *pl->by_b);
	pl->selb = hoff_zalloc(m + 1, sizeof *pl->selb);
	pl->ext = hoff_alloc(m + 1, sizeof *pl->ext);
	if (m > INT32_MAX || !pl->iv || !pl->order || !pl->bucket ||
	    !pl->by_b || !pl->selb || !pl->ext) {
		free(cb);
		free(cnt);
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	}
	/* Counts become each range's next slot in each bucket. */
	int32_t at_a = 0, at_b = 0;
	for (size_t x = 0; x < nb; x++) {
		for (int q = 0; q < nq; q++) {
			int32_t *c = cnt + 2 * (size_t)q * nb + x, k = *c;
			*c = at_a;
			at_a += k;
		}
		for (int q = nq; q-- > 0;) {
			int32_t *c = cnt + (2 * (size_t)q + 1) * nb + x, k = *c;
			*c = at_b;
			at_b += k;
		}
	}
#pragma omp parallel for schedule(static, 1) num_threads(nq)
	for (int q = 0; q < nq; q++)
		enumerate_share(&ep, q, true);
	free(cb);
	free(cnt);
	nominal_all(pl);
	/* No placement covers more than [cs0, b - 1] (stores only queue,
	 * prefetches only come before b): op j keeps at least M0[j] less
	 * every candidate that could cover it. */
	memset(pl->delta, 0, (n + 1) * sizeof *pl->delta);
	for (size_t i = 0; i < m; i++) {
		const iv *c = &pl->iv[i];
		int32_t last = c->b - 1 < pl->n - 1 ? c->b - 1 : pl->n - 1;
		if (c->cs0 <= last) {
			pl->delta[c->cs0] -= c->bytes;
			pl->delta[last + 1] += c->bytes;
		}
	}
	int64_t run = 0;
	for (int32_t j = 0; j < pl->n; j++) {
		run += pl->delta[j];
		if (pl->M0[j] + run > pl->reach_bytes)
			pl->reach_bytes = pl->M0[j] + run;
	}
	for (size_t i = 0; i < m; i++) {
		const iv *c = &pl->iv[i];
		pl->nmust += c->kind == IV_START ||
			     (c->b >= pl->g->nops && c->kind == IV_DETACH);
	}
	pl->must = hoff_alloc(pl->nmust + 1, sizeof *pl->must);
	if (!pl->must)
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	pl->nmust = 0;
	for (size_t i = 0; i < m; i++) {
		const iv *c = &pl->iv[i];
		if (c->kind == IV_START ||
		    (c->b >= pl->g->nops && c->kind == IV_DETACH))
			pl->must[pl->nmust++] = (int32_t)i;
	}
	return HOFF_OK;
}

static void plan_free(plan *pl)
{
	hoff_sim_ws_free(pl->ws);
	free(pl->T);
	free(pl->T0);
	free(pl->M0);
	free(pl->M);
	free(pl->delta);
	free(pl->iv);
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
	for (int i = 0; i < 4; i++)
		heap_free(&pl->hq[i]);
}

/* Copies *src into *dst (arrays duplicated) so two targets can be tried
 * at once; HOFF_ENOMEM leaves *dst freeable. Scratch arrays (M, delta,
 * order, fill, ext_off, ext: each written before it is read in a plan)
 * are only allocated; the rest is copied by every thread, a block each,
 * since a million ops' candidates are 150 MB. */
typedef struct copy_job {
	void *to;
	const void *from;
	size_t bytes;
} copy_job;

static hoff_status plan_clone(plan *dst, const plan *src)
{
	size_t n = (size_t)src->n, m = src->niv + 1;
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
	dst->iv_cap = src->niv;
	memset(dst->hq, 0, sizeof dst->hq);
	if (!(dst->ws = hoff_sim_ws_new()))
		ok = false;
	DUP(T, n + 1, true);
	DUP(T0, n + 1, true);
	DUP(M0, n + 1, true);
	DUP(M, n + 1, false);
	DUP(delta, n + 2, false);
	DUP(iv, src->niv, true);
	DUP(order, m, false);
	DUP(by_b, m, true);
	DUP(selb, m, true);
	DUP(bucket_off, n + 3, true);
	DUP(fill, n + 3, false);
	DUP(ext_off, n + 3, false);
	DUP(ext, m, false);
	DUP(bucket, m, true);
	DUP(must, src->nmust + 1, true);
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

/* Resets selections to the mandatory ones. A candidate's pmin is set
 * whenever it is selected, so only the mandatory ones' need a reset. */
static void plan_reset(plan *pl)
{
	memset(pl->selb, 0, pl->niv * sizeof *pl->selb);
	for (size_t k = 0; k < pl->nmust; k++) {
		pl->selb[pl->must[k]] = 1;
		pl->iv[pl->must[k]].pmin = -1;
	}
	for (size_t k = 0; k < pl->ndeferred; k++)
		pl->iv[pl->deferred[k]].deferred = 0;
	pl->ndeferred = 0;
}

/* Step 4: places the selected intervals on their channels, then derives
 * coverage and the memory profile M. */
static void place(plan *pl)
{
	const hoff_graph *g = pl->g;
	/* Stores, forward, FIFO per d2h channel. */
	int64_t chan[2 * HOFF_MAX_TIERS] = {0};
	for (size_t i = 0; i < pl->niv; i++) {
		if (!pl->selb[i])
			continue;
		iv *c = &pl->iv[i];
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
		int32_t p = boundary_before(pl, start, c->b);
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
		if (!pl->selb[i])
			continue;
		const iv *c = &pl->iv[i];
		if (c->cs <= c->p) {
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
	uint8_t *selb = pl->selb;
	bool ext_on = false; /* the fetch-later list is built on first need */
	int32_t next_ext = 0;
	/* The plan's heaps, emptied: their memory is kept across rounds.
	 * Each entry carries the last op its candidate can serve (aux), so
	 * stale entries are dropped without touching the interval. */
	heap *hidden = &pl->hq[0], *slow = &pl->hq[1], *later = &pl->hq[2],
	     *late = &pl->hq[3];
	hidden->n = slow->n = later->n = late->n = 0;
	int64_t added = 0, red = 0;
	/* When each tier's d2h channel is busy until, from the stores of
	 * this round: a store frees nothing before the ones ahead of it. */
	int64_t busy[HOFF_MAX_TIERS] = {0};
	memset(pl->delta, 0, ((size_t)n + 1) * sizeof *pl->delta);
	int32_t next = 0; /* bucket entries before it are in the heaps */
	for (int32_t j = 0; j < n && added >= 0 && !(pl->quit_low && pl->low);
	     j++) {
		red += pl->delta[j];
		if (pl->M[j] + red <= target)
			continue;
		/* A violation: bring in the candidates that start by j and
		 * still cover it; the rest of the bucket never could. */
		for (; next < pl->bucket_off[j + 1]; next++) {
			const bent *c = &pl->bucket[next];
			if (selb[c->i])
				continue;
			bool hid = c->pe0 >= j, slo = stall && c->bm1 >= j;
			if ((hid && !heap_push(hidden, c->i, c->hid_key, c->pe0)) ||
			    (slo && !heap_push(slow, c->i, c->slow_key, c->bm1))) {
				added = -1;
				break;
			}
		}
		for (; ext_on && next_ext < pl->ext_off[j + 1] && added >= 0;
		     next_ext++) {
			int32_t i = pl->ext[next_ext];
			int32_t b = pl->iv[i].b;
			/* farthest consumer first: its wait costs least */
			if (b - 1 >= j && !heap_push(late, i, (double)b, b - 1))
				added = -1;
		}
		/* Candidates whose store would have freed too late for an
		 * earlier op come back at the first op it frees in time. */
		while (later->n && -later->e[0].key <= (double)j && added >= 0) {
			hent x = heap_pop(later);
			const iv *c = &pl->iv[x.id];
			double cost = (double)(c->store_ps + c->fetch_ps) + 1.0;
			if (!heap_push(slow, x.id, (double)c->bytes / cost,
				       x.aux))
				added = -1;
		}
		int64_t excess = pl->M[j] + red - target;
		while (excess > 0 && added >= 0) {
			int32_t i = HOFF_NONE;
			while (hidden->n) {
				hent x = heap_pop(hidden);
				if (!selb[x.id] && x.aux >= j) {
					i = x.id;
					break;
				}
			}
			bool hid = i != HOFF_NONE;
			while (i == HOFF_NONE && slow->n) {
				hent x = heap_pop(slow);
				if (!selb[x.id] && x.aux >= j)
					i = x.id;
			}
			if (i == HOFF_NONE && stall && !ext_on) {
				/* Selected intervals whose prefetch comes before
				 * j and whose consumer comes after it could be
				 * fetched later: list them by first op after p. */
				ext_on = true;
				memset(pl->ext_off, 0,
				       ((size_t)n + 3) * sizeof *pl->ext_off);
				for (size_t q = 0; q < pl->niv; q++) {
					if (!selb[q])
						continue;
					const iv *d = &pl->iv[q];
					if (d->b < n && d->p < d->b - 1)
						pl->ext_off[d->p + 2]++;
				}
				for (int32_t k = 0; k <= n; k++)
					pl->ext_off[k + 1] += pl->ext_off[k];
				for (int32_t k = 0; k <= n; k++)
					fill[k] = pl->ext_off[k];
				for (size_t q = 0; q < pl->niv; q++) {
					if (!selb[q])
						continue;
					const iv *d = &pl->iv[q];
					if (d->b < n && d->p < d->b - 1)
						pl->ext[fill[d->p + 1]++] =
							(int32_t)q;
				}
				for (; next_ext < pl->ext_off[j + 1]; next_ext++) {
					int32_t q = pl->ext[next_ext];
					int32_t b = pl->iv[q].b;
					if (b - 1 >= j &&
					    !heap_push(late, q, (double)b, b - 1))
						added = -1;
				}
			}
			if (i == HOFF_NONE) {
				/* Last resort: fetch a selected tensor right
				 * before its consumer instead (it may stall). */
				while (late->n) {
					hent x = heap_pop(late);
					iv *c = &pl->iv[x.id];
					if (c->b - 1 < j || c->pmin >= c->b - 1)
						continue;
					c->pmin = c->b - 1;
					selb[x.id] = 2;
					red -= c->bytes;
					pl->delta[c->b] += c->bytes;
					excess -= c->bytes;
					added++;
					break;
				}
				if (excess > 0 && !late->n) {
					pl->low = true; /* target too low */
					break;
				}
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
					    !heap_push(later, i, -(double)at,
						       c->b - 1))
						added = -1;
					if (c->deferred++ == 0) {
						/* listed for plan_reset */
						if (!hoff_grow((void **)&pl->deferred,
							       &pl->deferred_cap,
							       pl->ndeferred + 1,
							       sizeof *pl->deferred))
							added = -1;
						else
							pl->deferred[pl->ndeferred++] = i;
					}
					continue;
				}
				busy[c->tier] = done;
			}
			selb[i] = hid ? 1 : 2;
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
		int32_t i = (int32_t)k;
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
	/* The steps at once, not by doublings (each a copy; on a million
	 * ops, fresh pages to fault in): ops, evictions, prefetches and a
	 * quarter more for the drops the emitter adds. */
	size_t want = ((size_t)pl->n + ne + np) / 4 * 5 + 16;
	if (!hoff_grow((void **)&m.s->step, &m.s->cap, want, sizeof *m.s->step))
		m.st = HOFF_ENOMEM;
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

/* Plans for one memory target: the selection and placement in *pl;
 * HOFF_ENOMEM on failure. */
static hoff_status plan_for(plan *pl, int64_t target, bool stall)
{
	plan_reset(pl);
	place(pl);
	pl->low = false;
	for (int round = 0; round < MAX_ROUNDS && peak_of(pl) > target;
	     round++) {
		int64_t added = select_round(pl, target, stall);
		if (added < 0)
			return HOFF_ENOMEM;
		if (added == 0 || (pl->quit_low && pl->low))
			break;
		place(pl);
		/* Drop what placement left covering nothing: it only loads a
		 * channel. Its coverage was empty, so M stands; the next
		 * placement gives the others its channel time. */
		for (size_t i = 0; i < pl->niv; i++) {
			if (!pl->selb[i])
				continue;
			const iv *c = &pl->iv[i];
			if (c->kind != IV_START && c->cs > c->p)
				pl->selb[i] = 0;
		}
	}
	return HOFF_OK;
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
			 const char *source, int64_t *T, hoff_sim_ws *ws,
			 hoff_err *e)
{
	hoff_sim_opts o = hoff_sim_defaults();
	o.budget_bytes = INT64_MAX;
	o.ws = ws;
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
	memset(t, 0, sizeof *t);
	t->peak = INT64_MAX;
	t->makespan = INT64_MAX;
	if (prune && target < pl->reach_bytes) {
		/* The first pass plans against T0 and cannot go under
		 * reach_bytes: it would be pruned below, so skip the plan. */
		(*iters)++;
		return HOFF_OK;
	}
	if (pl->T_real) { /* back to the stall-free timeline */
		memcpy(pl->T, pl->T0, ((size_t)pl->n + 1) * sizeof *pl->T);
		nominal_all(pl);
		pl->T_real = false;
	}
	/* The previous pass's candidate, kept back until this pass's
	 * schedule is compared with it: the same schedule needs no second
	 * simulation (a pass without stalls replans what it planned). */
	cand prev = {0};
	hoff_status st = HOFF_OK;
	for (int pass = 0; pass < passes; pass++) {
		if ((st = plan_for(pl, target, stall)) != HOFF_OK) {
			st = hoff_seterr(e, st, "out of memory");
			break;
		}
		if (prune && pass == 0 && peak_of(pl) > target) {
			/* The plan itself misses the target: in a bisection,
			 * call the target missed without emitting it. */
			(*iters)++;
			break;
		}
		hoff_sched *s = emit_plan(pl, &st);
		if (!s) {
			st = hoff_seterr(e, st, "out of memory");
			break;
		}
		if (prev.s && hoff_sched_same_steps(prev.s, s)) {
			hoff_sched_free(s);
			break;
		}
		cand c = {0};
		bool again = pass + 1 < passes;
		if ((st = judge(g, s, &c, "greedy", again ? pl->T : NULL,
				pl->ws, e)))
			break;
		if (again) { /* the next pass plans against the simulation */
			pl->T_real = true;
			nominal_all(pl);
		}
		(*iters)++;
		/* With a bound, the device's memory does not steer the
		 * search: a target over it that meets the bound leads down
		 * to ones under it (keep prefers those anyway). */
		bool fits = c.legal &&
			    (go.bound == HOFF_NONE ? c.peak <= go.cap
						   : c.makespan <= go.bound &&
							     c.peak <= target);
		if (fits && (!t->fits || c.peak < t->peak ||
			     (c.peak == t->peak && c.makespan < t->makespan))) {
			t->peak = c.peak;
			t->makespan = c.makespan;
		} else if (!t->fits && !fits && c.peak < t->peak) {
			t->peak = c.peak;
			t->makespan = c.makespan;
		}
		t->fits = t->fits || fits;
		keep(best, &prev, go);
		prev = c;
	}
	if (st == HOFF_OK)
		keep(best, &prev, go);
	hoff_sched_free(prev.s);
	return st;
}

static int by_a_t(const void *x, const void *y)
{
	const iv *a = x, *b = y;
	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	return (a->b > b->b) - (a->b < b->b);
}

/* Refines the best schedule on the simulator (refine.c) over the plan's
 * candidates; the result competes with *best. */
static hoff_status refine_best(const plan *pl, goal go, int64_t work,
			       cand *best, int *iters,
			       const hoff_progress *progress, hoff_err *e)
{
	const hoff_graph *g = pl->g;
	if (best->s->nsteps > work / 16)
		return HOFF_OK; /* not even a few moves fit the work */
	/* The plan's candidates and the small tensors' gaps, by (a, t). */
	plan all = {.g = g, .n = pl->n, .M0 = pl->M0};
	hoff_status st = enumerate(&all, true, e);
	if (st != HOFF_OK) {
		free(all.iv);
		return st;
	}
	sort_plan = &all;
	qsort(all.iv, all.niv, sizeof *all.iv, by_a_t);
	hoff_refine_iv *v = hoff_alloc(all.niv + 1, sizeof *v);
	if (!v) {
		free(all.iv);
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < all.niv; i++) {
		const iv *c = &all.iv[i];
		v[i] = (hoff_refine_iv){.bytes = c->bytes,
					.t = c->t,
					.a = c->a,
					.b = c->b,
					.start = c->kind == IV_START};
	}
	/* the repair phase only in a run of its own, not on the budget
	 * ladder's rungs (each a capped run) */
	hoff_refine_goal rg = {.cap = go.cap,
			       .bound_ps = go.bound,
			       .work = work,
			       .repair = work >= REFINE_WORK};
	hoff_refine_result r;
	st = hoff_refine(g, v, (int32_t)all.niv, best->s, &rg, &r, e);
	free(v);
	free(all.iv);
	if (st != HOFF_OK)
		return st;
	*iters += r.tried;
	hoff_say(progress,
		 "greedy: refined on the simulator: %d moves "
		 "kept of %d tried, peak %lld B, makespan %.6g s",
		 r.moves, r.tried, (long long)r.sum.peak_bytes,
		 hoff_s(r.sum.makespan_ps));
	if (!r.s)
		return HOFF_OK;
	cand c = {0};
	if ((st = judge(g, r.s, &c, best->source, NULL, NULL, e)) != HOFF_OK)
		return st;
	keep(best, &c, go);
	return HOFF_OK;
}

static hoff_status greedy_run(const hoff_graph *g, const hoff_policy_opts *o,
			      int64_t work, hoff_sched **out,
			      hoff_policy_report *rep, hoff_err *e);

/* Budget mode, the other way round: the least peak within a makespan
 * bound (the overhead mode, refined) falls as the bound grows, so the
 * smallest bound whose plan fits the budget is a fast plan under it.
 * Bisects over bounds between the lower bound and best's makespan (a
 * geometric ladder of overheads), each an overhead-mode run; keeps what
 * fits. Skipped where one run would cost too much. */
static hoff_status budget_by_bound(const hoff_graph *g,
				   const hoff_policy_opts *o, int64_t lb_ps,
				   goal go, cand *best, int *iters, hoff_err *e)
{
	static const double ladder[] = {0,    0.001, 0.0025, 0.005, 0.01,
					0.02, 0.035, 0.05,   0.075, 0.1,
					0.15, 0.2,   0.3,    0.5,   0.75,
					1,    1.5,   2,	     3,	    5};
	enum { NL = sizeof ladder / sizeof ladder[0] };
	if (best->s->nsteps > REFINE_WORK / 16 || lb_ps <= 0)
		return HOFF_OK;
	double top = (double)best->makespan / (double)lb_ps - 1;
	int lo = 0, hi = 0; /* ladder[lo..hi) are below best's makespan */
	while (hi < NL && ladder[hi] < top)
		hi++;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		hoff_policy_opts bo = *o;
		bo.budget_bytes = HOFF_NONE;
		bo.max_overhead = ladder[mid];
		bo.progress.fn = NULL;
		hoff_policy_report rep;
		hoff_sched *s = NULL;
		hoff_status st =
			greedy_run(g, &bo, REFINE_WORK / 8, &s, &rep, e);
		if (st != HOFF_OK)
			return st;
		*iters += rep.iterations;
		bool fits = rep.peak_bytes <= go.cap;
		cand c = {0};
		if ((st = judge(g, s, &c, rep.source, NULL, NULL, e)) !=
		    HOFF_OK)
			return st;
		keep(best, &c, go);
		if (fits)
			hi = mid;
		else
			lo = mid + 1;
	}
	return HOFF_OK;
}

/* The progress line of one target of the peak search. */
static void say_target(const hoff_progress *p, int64_t target, const tried *t)
{
	if (t->peak == INT64_MAX) /* no schedule: the plan itself missed */
		hoff_say(p,
			 "greedy: target %lld B: misses (the plan cannot "
			 "reach it)",
			 (long long)target);
	else
		hoff_say(p,
			 "greedy: target %lld B: peak %lld B, makespan %.6g "
			 "s%s",
			 (long long)target, (long long)t->peak,
			 hoff_s(t->makespan), t->fits ? "" : " (misses)");
}

hoff_status hoff_greedy_run(const hoff_graph *g, const hoff_policy_opts *o,
			    hoff_sched **out, hoff_policy_report *rep,
			    hoff_err *e)
{
	return greedy_run(g, o, REFINE_WORK, out, rep, e);
}

/* hoff_greedy_run with the refinement's work (simulated steps) given. */
/* Plans and simulates the baselines that waited (wait[i], then false),
 * in parallel, and lets each compete with *best and count for the least
 * peak, in the baselines' order. */
static hoff_status resolve_baselines(const hoff_graph *g, bool *wait,
				     const hoff_policy_opts *bo, int n, goal go,
				     cand *best, hoff_policy_report *rep,
				     hoff_err *e)
{
	cand c[8] = {{0}};
	hoff_status st[8];
	hoff_err ce[8];
	char name[8][32];
	HOFF_REQUIRE(n <= 8);
#pragma omp parallel for schedule(dynamic, 1)
	for (int i = 0; i < n; i++) {
		st[i] = HOFF_OK;
		if (!wait[i])
			continue;
		hoff_sched *s = NULL;
		hoff_policy_name(&bo[i], name[i], sizeof name[i]);
		st[i] = hoff_baseline_plan(g, &bo[i], &s, &ce[i]);
		if (st[i] == HOFF_OK)
			st[i] = judge(g, s, &c[i], name[i], NULL, NULL, &ce[i]);
	}
	hoff_status first = HOFF_OK;
	for (int i = 0; i < n; i++) {
		if (!wait[i])
			continue;
		wait[i] = false;
		if (st[i] != HOFF_OK && first == HOFF_OK) {
			first = st[i];
			if (e)
				*e = ce[i];
		}
		if (first == HOFF_OK && c[i].legal &&
		    c[i].peak < rep->least_peak_bytes) {
			rep->least_peak_bytes = c[i].peak;
			rep->least_makespan_ps = c[i].makespan;
			snprintf(rep->least_source, sizeof rep->least_source,
				 "%s", name[i]);
		}
		if (first == HOFF_OK)
			keep(best, &c[i], go);
		hoff_sched_free(c[i].s);
		c[i].s = NULL;
	}
	return first;
}

static hoff_status greedy_run(const hoff_graph *g, const hoff_policy_opts *o,
			      int64_t work, hoff_sched **out,
			      hoff_policy_report *rep, hoff_err *e)
{
	plan pl;
	hoff_analysis own;
	const hoff_analysis *an;
	cand best = {0}, c = {0};
	bool wait[8] = {false}; /* baselines not yet planned in full */
	hoff_policy_opts bopt[8];
	*out = NULL;
	memset(&pl, 0, sizeof pl);
	hoff_status st = hoff_analysis_use(g, o->analysis, &own, &an, e);
	if (st != HOFF_OK)
		goto out;
	/* Saturated at 2^62 ps, past any instant a schedule can reach
	 * (FORMAT.md): a huge --max-overhead means "any makespan", never
	 * an overflowed cast. */
	double bound_d =
		floor((1.0 + o->max_overhead) * (double)an->lower_bound_ps);
	int64_t bound = bound_d < 0x1p62 ? (int64_t)bound_d : (int64_t)1 << 62;
	/* Without a budget, the search and its refinement look for the
	 * least peak within the bound wherever it lies; the device's memory
	 * caps the answer only afterwards (a plan over it is refined down
	 * from, or replaced by the fastest one under it). */
	goal go = {.cap = o->budget_bytes != HOFF_NONE ? o->budget_bytes
						       : INT64_MAX,
		   .bound = o->budget_bytes != HOFF_NONE ? HOFF_NONE : bound};
	rep->lower_bound_ps = an->lower_bound_ps;
	/* With a budget, the plans aim at the lower bound, the fastest any
	 * schedule can be: on a link-bound graph the compute-only timeline
	 * sets deadlines no link can meet. Without, at the compute-only
	 * timeline: the refinement (refine.c) then spends the slack. */
	int64_t aim_ps = go.bound != HOFF_NONE ? 0 : an->lower_bound_ps;
	rep->noffload_peak_bytes = an->closed_peak_bytes;
	rep->none_peak_bytes = HOFF_NONE;
	rep->none_makespan_ps = HOFF_NONE;
	rep->floor_bytes = 0;
	rep->floor_op = HOFF_NONE;
	rep->least_peak_bytes = INT64_MAX;
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
	_Static_assert(NBASE <= 8, "wait holds the baselines");
	for (int i = 0; i < NBASE; i++) {
		bopt[i] = *o;
		bopt[i].kind = base[i].kind;
		bopt[i].lookahead = base[i].n;
	}
	cand bc[NBASE] = {{0}};
	/* A big plan's baselines whose floor (hoff_floor_step) passes
	 * the bound cannot meet it: planning them in full and simulating
	 * them costs a plan's time each and changes nothing while some
	 * schedule meets the bound and fits, so they stop planning there
	 * (hoff_baseline_plan_within) and wait until they might matter
	 * (resolve_baselines). The op floor says first whether anything can
	 * fit. */
	int64_t op_floor = 0;
	int32_t op_floor_at;
	if ((st = hoff_op_floor(g, &op_floor, &op_floor_at, e)) != HOFF_OK)
		goto out;
	bool may_wait = go.bound != HOFF_NONE &&
			op_floor <= g->device.memory_bytes;
	/* Too big for the refinement: every schedule has a step per op. */
	bool big = g->nops > REFINE_WORK / 16;
	hoff_status bst[NBASE + 1];
	hoff_err be[NBASE + 1];
	/* Independent work, in parallel: greedy's own set-up and, when it
	 * searches for the smallest peak, its first target (the no-offload
	 * peak: task NBASE, taken first), beside the baselines, longest
	 * first. All are kept in a fixed order afterwards, so the result
	 * does not depend on the number of threads. */
	static const int by_cost[NBASE] = {3, 1, 2, 0};
	int64_t hi = 0, lo = 0;
	cand b0 = {0};
	tried t0 = {0};
	int iters = 0;
	/* A big plan's set-up runs first, on every thread (plan_init's
	 * passes split the tensors), when the baselines stop early (their
	 * floor passes the bound); else beside the baselines. */
	bool init_first = big && may_wait;
	bst[NBASE] = init_first ? plan_init(&pl, g, aim_ps, &be[NBASE])
				: HOFF_OK;
#pragma omp parallel for schedule(dynamic, 1)
	for (int k = 0; k <= NBASE; k++) {
		int i = k == 0 ? NBASE : by_cost[k - 1];
		if (i == NBASE) {
			if (!init_first)
				bst[i] = plan_init(&pl, g, aim_ps, &be[i]);
			if (bst[i] != HOFF_OK)
				continue;
			hi = pl.M0[0];
			lo = pl.floor_bytes;
			for (int32_t j = 0; j < pl.n; j++)
				if (pl.M0[j] > hi)
					hi = pl.M0[j];
			if (go.bound != HOFF_NONE)
				bst[i] = try_target(&pl, hi, true, big ? 1 : 2,
						    true, go, &b0, &t0, &iters,
						    &be[i]);
			continue;
		}
		hoff_sched *s = NULL;
		bool over = false;
		bst[i] = hoff_baseline_plan_within(
			g, &bopt[i],
			may_wait && big && base[i].kind != HOFF_POLICY_NONE
				? go.bound
				: INT64_MAX,
			&s, &over, &be[i]);
		if (over) {
			wait[i] = true;
			continue;
		}
		if (bst[i] == HOFF_OK)
			bst[i] = judge(g, s, &bc[i], base[i].name, NULL, NULL,
				       &be[i]);
	}
	for (int k = 0; k <= NBASE; k++) {
		int i = k == 0 ? NBASE : k - 1; /* set-up's error first */
		if (bst[i] != HOFF_OK && st == HOFF_OK) {
			st = bst[i];
			if (e)
				*e = be[i];
		}
	}
	for (int i = 0; i < NBASE; i++) {
		if (st == HOFF_OK && base[i].kind == HOFF_POLICY_NONE) {
			rep->none_peak_bytes = bc[i].peak;
			rep->none_makespan_ps = bc[i].makespan;
		}
		if (st == HOFF_OK && bc[i].legal &&
		    bc[i].peak < rep->least_peak_bytes) {
			rep->least_peak_bytes = bc[i].peak;
			rep->least_makespan_ps = bc[i].makespan;
			snprintf(rep->least_source, sizeof rep->least_source,
				 "%s", base[i].name);
		}
		if (st == HOFF_OK)
			keep(&best, &bc[i], go);
		hoff_sched_free(bc[i].s);
	}
	if (st == HOFF_OK)
		keep(&best, &b0, go);
	hoff_sched_free(b0.s);
	if (st != HOFF_OK)
		goto out;
	if (go.bound != HOFF_NONE) {
		/* Smallest peak within the overhead bound: search the target. */
		say_target(&o->progress, hi, &t0);
		if (lo > hi)
			lo = hi;
		/* Two targets at a time, one per thread, each on its own copy
		 * of the plan. Low targets select many candidates and cost
		 * the most to plan, and the answer is usually near the top:
		 * from the peak the first target reached, gallop down
		 * (down == true) in steps growing fourfold until a target
		 * misses, then shrink the bracket to a third per step until
		 * it is under hi / 2^STOP_SHIFT. Fits are not monotone in the
		 * target, so a fine last bracket finds lower peaks than a
		 * coarse one. */
		int64_t step = hi >> GALLOP_SHIFT > 1 ? hi >> GALLOP_SHIFT : 1;
		if (t0.fits)
			hi = t0.peak; /* on down from what it reached */
		else
			lo = hi + 1;
		plan pl2;
		bool two = plan_clone(&pl2, &pl) == HOFF_OK;
		bool down = true;
		/* A plan too big for the refinement (a million ops) is planned
		 * once per target, against the stall-free timeline: its second
		 * pass, against the simulated one, cost a plan and a simulation
		 * each and changed no answer on the million-op training graphs
		 * of bench/bench_scale.sh (both homes). */
		int passes = best.s && best.s->nsteps > REFINE_WORK / 16 ? 1
									 : 2;
		pl.quit_low = pl2.quit_low = passes == 1;
		while (iters < 40 && hi - lo > (hi >> STOP_SHIFT)) {
			int64_t m[2];
			int nm = 1;
			if (down && hi - 4 * step > lo) {
				m[0] = hi - step;
				m[1] = hi - 4 * step;
				nm = two ? 2 : 1;
			} else if (two && hi - lo > 2) {
				down = false;
				m[0] = lo + (hi - lo) / 3;
				m[1] = lo + 2 * ((hi - lo) / 3);
				nm = 2;
			} else {
				down = false;
				m[0] = lo + (hi - lo) / 2;
			}
			tried t[2];
			cand b2[2] = {{0}};
			hoff_status s2[2] = {HOFF_OK, HOFF_OK};
			hoff_err e2[2];
			int it2[2] = {0, 0};
#pragma omp parallel for schedule(static, 1) if (nm == 2)
			for (int k = 0; k < nm; k++)
				s2[k] = try_target(k ? &pl2 : &pl, m[k], true,
						   passes, true, go, &b2[k],
						   &t[k], &it2[k], &e2[k]);
			for (int k = 0; k < nm; k++) {
				iters += it2[k];
				if (s2[k] != HOFF_OK && st == HOFF_OK) {
					st = s2[k];
					if (e)
						*e = e2[k];
				}
				keep(&best, &b2[k], go);
				hoff_sched_free(b2[k].s);
				if (st == HOFF_OK)
					say_target(&o->progress, m[k], &t[k]);
			}
			if (st != HOFF_OK)
				break;
			if (down && nm == 1) { /* no second plan */
				if (t[0].fits) {
					hi = m[0];
					step *= 2;
				} else {
					lo = m[0] + 1;
					down = false;
				}
			} else if (down) { /* m[0] > m[1] */
				if (t[1].fits) {
					hi = m[1];
					step *= 4;
				} else if (t[0].fits) {
					hi = m[0];
					lo = m[1] + 1;
					down = false;
				} else {
					lo = m[0] + 1;
					down = false;
				}
			} else if (t[0].fits) {
				hi = m[0];
			} else if (nm == 2 && t[1].fits) {
				lo = m[0] + 1;
				hi = m[1];
			} else {
				lo = m[nm - 1] + 1;
			}
		}
		pl.quit_low = false;
		if (two)
			plan_free(&pl2);
		if (st != HOFF_OK)
			goto out;
		if (!(best.s && best.legal && best.makespan <= go.bound &&
		      best.peak <= g->device.memory_bytes) &&
		    (st = resolve_baselines(g, wait, bopt, NBASE, go, &best,
					    rep, e)) != HOFF_OK)
			goto out;
		if (best.s && best.legal &&
		    (st = refine_best(&pl, go, work, &best, &iters,
				      &o->progress, e)))
			goto out;
		go.cap = g->device.memory_bytes;
	}
	rep->floor_bytes = pl.floor_bytes;
	rep->floor_op = pl.floor_op;
	/* Under a floor over the cap nothing fits. Aiming there still
	 * finds lower peaks to report, but each plan of a big graph that
	 * aims that low costs seconds (a million ops: five), so there the
	 * search's answer stands, as for the refinement. */
	bool unreachable = pl.floor_bytes > go.cap && best.s &&
			   best.s->nsteps > REFINE_WORK / 16;
	if ((go.bound == HOFF_NONE || best.peak > go.cap ||
	     best.makespan > go.bound) &&
	    !unreachable) {
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
			hoff_say(&o->progress,
				 "greedy: target %lld B: peak "
				 "%lld B, makespan %.6g s",
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
	if (go.bound == HOFF_NONE && best.s && best.legal &&
	    (st = refine_best(&pl, go, work, &best, &iters, &o->progress, e)))
		goto out;
	if (go.bound == HOFF_NONE && best.s && best.legal &&
	    best.peak <= go.cap &&
	    (st = budget_by_bound(g, o, an->lower_bound_ps, go, &best, &iters,
				  e)))
		goto out;
	rep->iterations = iters;
	if (!best.s || !best.legal) {
		st = hoff_seterr(e, HOFF_EINTERNAL,
				 "greedy found no legal schedule (a bug)");
		goto out;
	}
	*out = best.s;
	hoff_sched_set_policy(*out, "greedy");
	rep->peak_bytes = best.peak;
	rep->makespan_ps = best.makespan;
	if (best.peak < rep->least_peak_bytes ||
	    (best.peak == rep->least_peak_bytes &&
	     best.makespan < rep->least_makespan_ps)) {
		rep->least_peak_bytes = best.peak;
		rep->least_makespan_ps = best.makespan;
		snprintf(rep->least_source, sizeof rep->least_source, "%s",
			 best.source);
	}
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
