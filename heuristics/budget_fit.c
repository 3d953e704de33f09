/* budget_fit.c: see budget_fit.h. Plans for the budget on the simulator.
 *
 * A plan is decisions over the candidate intervals (candidates.h, small
 * tensors' gaps included): pick[i] is the boundary after which interval
 * i's prefetch is issued (-1: before op 0; nops - 1 for a tail, never
 * fetched), or OFF while the tensor stays on the device over the gap;
 * sat[i], where a taken interval's eviction is issued (right after its
 * last touch a unless a wait moved it later, see below);
 * and waits: fence[k] makes op k wait until every store issued before it
 * has finished (a small dirty input of op k is stored and fetched back
 * just before it: its prefetch waits at the head of the h2d channel for
 * its store, FIFO behind all the others; FORMAT.md rules 3 and 4). A
 * wait is how a plan spends a stall where the memory it frees is over the
 * budget, and only there.
 *
 * 1. Fit. From every tensor resident (tier-homed inputs fetched just
 *    before their first use), simulate and take the first instant over
 *    the budget, at op k. Try the moves that can relieve it: evict a
 *    tensor over a gap around k (Belady's choice first: the most of the
 *    excess times the ops to its next use; a short gap's round trip is a
 *    candidate like a long one), alone or with a wait before k (or
 *    before the op its queued store now overruns); a wait alone; a
 *    prefetch issued before k for a later op issued after k. Keep the
 *    move that puts the first instant over the budget latest (then least
 *    over, then fastest), or (variants) of those that get past k the
 *    fastest: the least cost in stall. Repeat until the plan fits.
 * 2. Stalls, against the budget. First the stream: every taken prefetch
 *    re-issued as early as the budget allows on the plan's memory per
 *    op, earliest consumer first (on a link-bound stretch the link never
 *    idles while memory could hold what comes next), then each as late
 *    as its link allows (issue_late.h: no memory held before its
 *    transfer can start, room the moves after it may use). Then, at the op
 *    that waits longest: its prefetches issued where their transfer
 *    would end as it could start (then galloping earlier), its wait
 *    moved or removed, prefetches ahead of it held back past it, its
 *    round trips dropped; keep the first move that is faster and still
 *    fits; repeat at the longest stall. A move that is faster but over
 *    the budget is an exchange: phase 1's repairs relieve the budget
 *    elsewhere, and it is kept if the result still wins. A swap: a big
 *    store before the stall (one that fit the budget at once but frees
 *    its bytes late, holding back the prefetches behind it) dropped,
 *    phase 1 repairing without it, then the stream again. A wait that
 *    waits for less: at a stalled op k with a wait, the stores queued
 *    ahead of the wait whose bytes memory needs only from op k on issued
 *    just after it instead, the latest issued first, 1, 2, 4, ... of
 *    them while the plan fits and gets faster: on a link-bound forward
 *    they drain behind the compute from op k on, where the wait made the
 *    compute wait for them all.
 * Eight variants (the excess now or to come in the eviction's score; the
 * closer or the cheaper repair; the gap scored in ops, or in the time
 * its bytes are off the device once its store ends) run in parallel,
 * each on work / 8 steps; the best is kept, in a fixed order, so the
 * result does not depend on the threads.
 * Every schedule it returns has passed the simulator. A fetch is never
 * issued at the boundary its eviction leaves (no store and immediate
 * re-fetch): an evicted interval covers at least one op.
 * Cost: each move is one emission and one simulation, O(steps log steps);
 * the moves' choice is O(intervals) a repair; all bounded by `work`
 * simulated steps. */
#include "budget_fit.h"

#include <stdlib.h>
#include <string.h>

#include "candidates.h"
#include "emit.h"
#include "issue_late.h"
#include "sim.h"
#include "sort.h"

#define OFF	       (-2) /* a pick: the interval is not taken */
#define NEVICT	       5    /* eviction moves tried per repair */
#define NHOLD	       3    /* hold-back moves tried per repair */
#define NVARIANTS      8    /* plans from other choices of repair, best kept */
#define NSWAP	       2    /* stores swapped out per stall */
#define NHOLD_STALL    4    /* hold-back moves tried per stall */
#define NMOVES	       (2 + 4 * NEVICT + NHOLD)
#define EXCHANGE_TRIES 48 /* simulations an exchange's repairs may spend */
#define HOLD_BACK      16 /* boundaries before k's prefetch a hold-back looks */
#define WAIT_BACK      16 /* ops before k a wait for k may go */
#define WAIT_SMALL     1024 /* a wait's operand: at most budget / this */
#define NARRAYS	       23   /* fit's per-interval and per-op arrays */

/* A plan as the simulator judged it. */
typedef struct look {
	hoff_sched *s;
	hoff_summary sum;
	int64_t *start;	    /* (nops + 1) op starts, last: the last end */
	int64_t *opmem;	    /* (nops) the most memory while op k runs */
	int64_t over_bytes; /* over the budget at the first instant over */
	int64_t over_ps;    /* that instant */
	int32_t over_op;    /* first op starting at or after that instant;
			       nops + 1 when it fits */
	bool legal, fits;
} look;

/* One change to the decisions: interval i's pick to p (i HOFF_NONE:
 * none), and the wait before op fk set to fv (fk HOFF_NONE: none). */
typedef struct move {
	int32_t i, p;
	int32_t fk;
	uint8_t fv;
} move;

/* A plan's decisions, saved to go back to. */
typedef struct saved {
	int32_t *pick, *sat; /* (niv) */
	uint8_t *fence;	     /* (nops + 1) */
	int32_t changed;
} saved;

typedef struct fit {
	const hoff_graph *g;
	int32_t n;
	int64_t budget;
	hoff_cand *iv; /* (niv) by (a, t) */
	int32_t niv;
	int32_t *pick, *trial;	 /* (niv) */
	int32_t *npick;		 /* (niv) scratch: the stream's picks */
	int64_t *mem;		 /* (nops) scratch: the stream's memory */
	saved xs, ss, ts;	 /* exchange's, swap_out's, and the
				    stream's and wait_less's (which never
				    nest) */
	uint8_t *fence, *tfence; /* (nops + 1) a wait before op k */
	int32_t *sat;		 /* (niv) where a taken interval's eviction
				    is issued: 2q at boundary q before its
				    wait, 2q + 1 after it (from 2a, the
				    default, to 2 (pick - 1) + 1) */
	int32_t *ev, *evq;	 /* (niv) scratch: evictions by boundary */
	int32_t *wl, *wq;	 /* (niv) scratch: wait_less's stores */
	int32_t *pf;		 /* (niv) scratch: prefetches by issue */
	int32_t *b_off, *by_b;	 /* the intervals by consumer b */
	int32_t *by_size;	 /* (niv) by bytes, largest first */
	const int32_t *key;	 /* the picks pf is sorted by */
	uint8_t *waitable;	 /* (nops) op k has a small operand that a
				    wait before it may store and fetch */
	hoff_sim_ws *ws;
	int64_t work, limit; /* steps simulated, and the most allowed */
	int32_t changed;     /* the earliest boundary a kept move changed */
	bool by_cost;	     /* repairs that get past k: the faster first */
	bool future;	     /* evictions scored on the excess to come */
	bool timed;	     /* evictions scored by the time they free
				their bytes, not by ops */
	int32_t tabu;	     /* an interval repairs leave alone (HOFF_NONE) */
	int32_t tried;
	hoff_err *e;
} fit;

/* Interval indices by f->key, then boundary b, then start t (hoff_sort_ctx
 * with the fit as context). */
static int by_pick(const void *x, const void *y, void *ctx)
{
	const fit *f = ctx;
	int32_t i = *(const int32_t *)x, j = *(const int32_t *)y;
	const hoff_cand *a = &f->iv[i], *b = &f->iv[j];
	int32_t pa = f->key[i], pb = f->key[j];
	if (pa != pb)
		return pa < pb ? -1 : 1;
	if (a->b != b->b)
		return a->b < b->b ? -1 : 1;
	return (a->t > b->t) - (a->t < b->t);
}

/* Interval indices, largest first, then by index (context: the fit). */
static int by_bytes(const void *x, const void *y, void *ctx)
{
	const fit *f = ctx;
	int32_t i = *(const int32_t *)x, j = *(const int32_t *)y;
	int64_t a = f->iv[i].bytes, b = f->iv[j].bytes;
	if (a != b)
		return a > b ? -1 : 1;
	return (i > j) - (i < j);
}

/* Interval indices by f->key, then index (context: the fit). */
static int by_key(const void *x, const void *y, void *ctx)
{
	const fit *f = ctx;
	int32_t i = *(const int32_t *)x, j = *(const int32_t *)y;
	if (f->key[i] != f->key[j])
		return f->key[i] < f->key[j] ? -1 : 1;
	return (i > j) - (i < j);
}

/* Where taken interval i leaves under picks pick (2q: at boundary q
 * before its wait, 2q + 1: after it): f->sat[i] within [2a, 2 (pick[i] -
 * 1) + 1] (it is away for one op at least). */
static int32_t leave_at(const fit *f, const int32_t *pick, int32_t i)
{
	int32_t h = f->sat[i], a = 2 * f->iv[i].a;
	if (h > 2 * pick[i] - 1)
		h = 2 * pick[i] - 1;
	return h < a ? a : h;
}

/* The boundary of half-boundary position h (leave_at's). */
static int32_t boundary_of(int32_t h)
{
	return h < 0 ? -1 : h / 2;
}

/* Whether interval i (taken) brings its tensor back for op k. */
static bool fetched_for(const fit *f, const int32_t *pick, int32_t t, int32_t k)
{
	for (int32_t u = f->b_off[k]; u < f->b_off[k + 1]; u++) {
		int32_t i = f->by_b[u];
		if (f->iv[i].t == t && pick[i] != OFF)
			return true;
	}
	return false;
}

/* The wait before op k: its smallest input or update that is resident,
 * dirty and may move, stored and fetched back at once. None when op k
 * has no such operand. */
static void wait_at(const fit *f, hoff_emit *m, const int32_t *pick, int32_t k)
{
	const hoff_graph *g = f->g;
	int32_t best = HOFF_NONE;
	for (int u = HOFF_USE_IN; u <= HOFF_USE_UPD; u++) {
		const int32_t *lst;
		int64_t nl = hoff_op_list(g, k, (hoff_use)u, &lst);
		for (int64_t j = 0; j < nl; j++) {
			int32_t t = lst[j];
			const hoff_tensor *x = &g->tensor[t];
			if (!m->on[t] || m->copy[t] != HOFF_NONE ||
			    !hoff_tensor_offload(x) ||
			    fetched_for(f, pick, t, k))
				continue;
			if (x->producer == HOFF_NONE && x->home != HOFF_DEVICE)
				continue;
			if (m->store_tier == HOFF_NONE)
				continue;
			if (best == HOFF_NONE ||
			    x->bytes < g->tensor[best].bytes ||
			    (x->bytes == g->tensor[best].bytes && t < best))
				best = t;
		}
	}
	if (best != HOFF_NONE && hoff_emit_evict(m, best))
		hoff_emit_prefetch(m, best);
}

/* The schedule of decisions pick and waits fence; NULL on OOM. At each
 * boundary: the evictions, the prefetches by issue (earliest consumer
 * first), then the wait for the next op. */
static hoff_sched *emit(fit *f, const int32_t *pick, const uint8_t *fence)
{
	const hoff_graph *g = f->g;
	hoff_emit m;
	if (hoff_emit_init(&m, g, "greedy") != HOFF_OK)
		return NULL;
	int32_t np = 0;
	for (int32_t i = 0; i < f->niv; i++)
		if (pick[i] != OFF && f->iv[i].b < f->n)
			f->pf[np++] = i;
	f->key = pick;
	hoff_sort_ctx(f->pf, (size_t)np, sizeof *f->pf, by_pick, f);
	/* the evictions by where they leave, then by (a, t): with none
	 * left late, the intervals' own order */
	int32_t ne = 0;
	bool late = false;
	for (int32_t i = 0; i < f->niv; i++) {
		if (pick[i] == OFF || f->iv[i].kind == HOFF_CAND_START)
			continue;
		f->evq[i] = leave_at(f, pick, i);
		late = late || f->evq[i] != 2 * f->iv[i].a;
		f->ev[ne++] = i;
	}
	if (late) {
		f->key = f->evq;
		hoff_sort_ctx(f->ev, (size_t)ne, sizeof *f->ev, by_key, f);
	}
	int32_t ie = 0, ip = 0;
	for (int32_t q = -1; q < f->n; q++) {
		if (q >= 0)
			hoff_emit_op(&m, q);
		for (; ie < ne && f->evq[f->ev[ie]] <= 2 * q; ie++)
			hoff_emit_evict(&m, f->iv[f->ev[ie]].t);
		for (; ip < np && pick[f->pf[ip]] <= q; ip++)
			hoff_emit_prefetch(&m, f->iv[f->pf[ip]].t);
		if (q + 1 < f->n && fence[q + 1])
			wait_at(f, &m, pick, q + 1);
		for (; ie < ne && f->evq[f->ev[ie]] <= 2 * q + 1; ie++)
			hoff_emit_evict(&m, f->iv[f->ev[ie]].t);
	}
	return hoff_emit_finish(&m);
}

static void look_free(look *l)
{
	hoff_sched_free(l->s);
	free(l->start);
	free(l->opmem);
	memset(l, 0, sizeof *l);
}

/* Simulates s (taken) into *l; HOFF_ENOMEM or the simulator's error. */
static hoff_status judge(fit *f, hoff_sched *s, look *l)
{
	hoff_sim_opts o = hoff_sim_defaults();
	o.budget_bytes = INT64_MAX;
	o.op_times = true;
	o.timeline = true;
	o.ws = f->ws;
	hoff_sim_result r;
	memset(l, 0, sizeof *l);
	f->work += s->nsteps;
	f->tried++;
	hoff_status st = hoff_sim_run(f->g, s, &o, &r, f->e);
	if (st != HOFF_OK) {
		hoff_sched_free(s);
		return st;
	}
	l->s = s;
	l->sum = r.summary;
	l->legal = r.valid;
	l->start = r.op_start_ps;
	r.op_start_ps = NULL;
	l->over_op = f->n + 1;
	l->opmem = hoff_zalloc((size_t)f->n + 1, sizeof *l->opmem);
	if (!l->opmem) {
		hoff_sim_result_free(&r);
		look_free(l);
		return hoff_seterr(f->e, HOFF_ENOMEM, "out of memory");
	}
	for (size_t x = 0, k = 0; x < r.tl.nmem; x++) {
		/* op k's from the end of op k - 1 to its own: the stall
		 * before it (waiting for what a boundary issued) included,
		 * as a prefetch issued after op p covers ops p + 1 on */
		while (k + 1 < (size_t)f->n &&
		       r.tl.mem[x].t_ps >= l->start[k] + f->g->op[k].time_ps)
			k++;
		if (r.tl.mem[x].bytes > l->opmem[k])
			l->opmem[k] = r.tl.mem[x].bytes;
	}
	for (size_t x = 0; x < r.tl.nmem; x++) {
		if (r.tl.mem[x].bytes <= f->budget)
			continue;
		int64_t t = r.tl.mem[x].t_ps;
		l->over_ps = t;
		l->over_bytes = r.tl.mem[x].bytes - f->budget;
		int32_t lo = 0, hi = f->n; /* first op starting at or after t */
		while (lo < hi) {
			int32_t mid = lo + (hi - lo) / 2;
			if (l->start[mid] >= t)
				hi = mid;
			else
				lo = mid + 1;
		}
		l->over_op = lo;
		break;
	}
	l->fits = l->legal && l->over_op > f->n;
	hoff_sim_result_free(&r);
	return HOFF_OK;
}

/* Phase 1's order: fits, then the first instant over the budget later,
 * then less over there, then faster. */
static bool closer(const look *a, const look *b)
{
	if (!a->legal)
		return false;
	if (!b->legal)
		return true;
	if (a->over_op != b->over_op)
		return a->over_op > b->over_op;
	if (!a->fits && a->over_bytes != b->over_bytes)
		return a->over_bytes < b->over_bytes;
	return a->sum.makespan_ps < b->sum.makespan_ps;
}

/* Among the repairs at op k: closer; with f->by_cost, of two that both
 * get past k, the faster (the least cost in stall). */
static bool cheaper(const fit *f, const look *a, const look *b, int32_t k)
{
	if (f->by_cost && a->legal && b->legal && a->over_op > k &&
	    b->over_op > k && a->fits == b->fits)
		return a->sum.makespan_ps < b->sum.makespan_ps;
	return closer(a, b);
}

/* Phase 2's order: fits, then faster, then a lower peak. */
static bool faster(const look *a, const look *b)
{
	if (!a->fits)
		return false;
	if (!b->fits)
		return true;
	if (a->sum.makespan_ps != b->sum.makespan_ps)
		return a->sum.makespan_ps < b->sum.makespan_ps;
	return a->sum.peak_bytes < b->sum.peak_bytes;
}

/* The plan with move mv applied, emitted and judged into *l. */
static hoff_status try_move(fit *f, move mv, look *l)
{
	memcpy(f->trial, f->pick, (size_t)f->niv * sizeof *f->trial);
	memcpy(f->tfence, f->fence, (size_t)f->n + 1);
	if (mv.i != HOFF_NONE)
		f->trial[mv.i] = mv.p;
	if (mv.fk != HOFF_NONE)
		f->tfence[mv.fk] = mv.fv;
	hoff_sched *s = emit(f, f->trial, f->tfence);
	if (!s)
		return hoff_seterr(f->e, HOFF_ENOMEM, "out of memory");
	return judge(f, s, l);
}

static void apply(fit *f, move mv)
{
	int32_t at = HOFF_NONE;
	if (mv.i != HOFF_NONE) {
		int32_t old = f->pick[mv.i], a = f->iv[mv.i].a;
		at = old == OFF || mv.p == OFF ? a : old < mv.p ? old : mv.p;
	}
	if (mv.fk != HOFF_NONE && (at == HOFF_NONE || mv.fk - 1 < at))
		at = mv.fk - 1;
	if (at != HOFF_NONE && at < f->changed)
		f->changed = at;
	if (mv.i != HOFF_NONE && f->pick[mv.i] == OFF)
		f->sat[mv.i] = 2 * f->iv[mv.i].a; /* newly taken: at once */
	if (mv.i != HOFF_NONE)
		f->pick[mv.i] = mv.p;
	if (mv.fk != HOFF_NONE)
		f->fence[mv.fk] = mv.fv;
}

/* Saves f's decisions into *s. */
static void save(const fit *f, saved *s)
{
	memcpy(s->pick, f->pick, (size_t)f->niv * sizeof *f->pick);
	memcpy(s->sat, f->sat, (size_t)f->niv * sizeof *f->sat);
	memcpy(s->fence, f->fence, (size_t)f->n + 1);
	s->changed = f->changed;
}

/* Puts back the decisions saved in *s. */
static void restore(fit *f, const saved *s)
{
	memcpy(f->pick, s->pick, (size_t)f->niv * sizeof *f->pick);
	memcpy(f->sat, s->sat, (size_t)f->niv * sizeof *f->sat);
	memcpy(f->fence, s->fence, (size_t)f->n + 1);
	f->changed = s->changed;
}

/* *l in *cur's place when it fits and is faster (1), else freed (0). */
static int take_faster(look *l, look *cur)
{
	if (!faster(l, cur)) {
		look_free(l);
		return 0;
	}
	look_free(cur);
	*cur = *l;
	return 1;
}

/* The op a wait for op k goes before: the latest of the WAIT_BACK ops up
 * to k with a small operand to store and fetch back (a wait's operand
 * counts twice while its store is queued); HOFF_NONE when none. */
static int32_t wait_op(const fit *f, int32_t k)
{
	for (int32_t j = k; j >= 1 && j > k - WAIT_BACK; j--)
		if (f->waitable[j])
			return j;
	return HOFF_NONE;
}

/* The prefetch boundary of an interval taken for a repair: as late as
 * its consumer allows (phase 2 brings it earlier while the plan fits). */
static int32_t late_pick(const fit *f, int32_t i)
{
	return f->iv[i].b >= f->n ? f->n - 1 : f->iv[i].b - 1;
}

/* The repair moves at cur's first instant over the budget, at op k:
 * into mv, returns how many. Over at k's start, a wait before k lets the
 * queued stores free their bytes first; over at the boundary before it
 * (prefetches issued there), a wait before op k - 1. */
static int repairs(const fit *f, const look *cur, int32_t k, move *mv)
{
	int nm = 0, nf = 0;
	int64_t x = cur->over_bytes;
	int32_t wk[2];
	int32_t w0 = wait_op(f, k);
	int32_t w1 = cur->over_ps < cur->start[k] ? wait_op(f, k - 1)
						  : HOFF_NONE;
	if (w0 != HOFF_NONE && !f->fence[w0])
		wk[nf++] = w0;
	if (w1 != HOFF_NONE && w1 != w0 && !f->fence[w1])
		wk[nf++] = w1;
	for (int w = 0; w < nf; w++)
		mv[nm++] = (move){HOFF_NONE, 0, wk[w], 1};
	/* evictions over a gap around k, Belady's choice first: the most
	 * of the excess (with f->future, the most to come before the
	 * tensor's next use, M[j] from op k to op j) times the ops to it */
	int64_t *M = f->mem;
	for (int32_t j = k; j < f->n; j++) {
		int64_t over = cur->opmem[j] - f->budget;
		M[j] = j > k && M[j - 1] > over ? M[j - 1] : over;
		if (M[j] < x)
			M[j] = x;
	}
	int32_t top[NEVICT];
	double score[NEVICT];
	int nt = 0;
	for (int32_t i = 0; i < f->niv; i++) {
		const hoff_cand *c = &f->iv[i];
		if (f->pick[i] != OFF || c->kind == HOFF_CAND_START ||
		    c->a >= k || c->b <= k || i == f->tabu)
			continue;
		int32_t to = c->b < f->n ? c->b : f->n;
		int64_t cap = f->future ? M[to - 1] : x;
		double s = (double)(c->bytes < cap ? c->bytes : cap) * (to - k);
		if (f->timed) {
			/* the time its bytes are off the device, from when
			 * its store ends (as if the queue were empty) */
			int64_t free_at = cur->start[c->a + 1] + c->store_ps;
			if (free_at < cur->start[k])
				free_at = cur->start[k];
			int64_t w = cur->start[to] - free_at;
			s = (double)(c->bytes < cap ? c->bytes : cap) *
			    (double)(w > 0 ? w : 0);
		}
		int at = nt < NEVICT ? nt++ : NEVICT;
		while (at > 0 && s > score[at - 1]) {
			if (at < NEVICT) {
				top[at] = top[at - 1];
				score[at] = score[at - 1];
			}
			at--;
		}
		if (at < NEVICT) {
			top[at] = i;
			score[at] = s;
		}
	}
	for (int w = 0; w < nt; w++) {
		int32_t i = top[w];
		mv[nm++] = (move){i, late_pick(f, i), HOFF_NONE, 0};
		for (int v = 0; v < nf && f->iv[i].kind == HOFF_CAND_DIRTY; v++)
			mv[nm++] = (move){i, late_pick(f, i), wk[v], 1};
	}
	/* prefetches issued before k for a later op: after k instead */
	int nh = 0;
	for (int32_t x2 = 0; x2 < f->niv && nh < NHOLD; x2++) {
		int32_t i = f->by_size[x2];
		const hoff_cand *c = &f->iv[i];
		if (f->pick[i] == OFF || c->b >= f->n || c->b <= k ||
		    f->pick[i] >= k)
			continue;
		mv[nm++] = (move){i, k, HOFF_NONE, 0};
		nh++;
	}
	return nm;
}

/* Phase 1: repairs at the first instant over the budget until the plan
 * fits, no move gets closer, or the work is spent. */
static hoff_status fit_phase(fit *f, look *cur)
{
	move mv[NMOVES];
	while (!cur->fits && cur->legal && f->work <= f->limit) {
		int32_t k = cur->over_op < f->n ? cur->over_op : f->n - 1;
		int nm = repairs(f, cur, k, mv);
		look best = {0};
		int took = -1;
		for (int w = 0; w < nm; w++) {
			look l;
			hoff_status st = try_move(f, mv[w], &l);
			if (st != HOFF_OK) {
				look_free(&best);
				return st;
			}
			/* an eviction whose store queues past an earlier op:
			 * with a wait there too */
			int32_t wf = l.legal && l.over_op <= k &&
						     mv[w].fk == HOFF_NONE &&
						     mv[w].i != HOFF_NONE
					     ? wait_op(f, l.over_op)
					     : HOFF_NONE;
			if (wf != HOFF_NONE && !f->fence[wf] && nm < NMOVES) {
				mv[nm] = mv[w];
				mv[nm].fk = wf;
				mv[nm++].fv = 1;
			}
			if (took < 0 || cheaper(f, &l, &best, k)) {
				look_free(&best);
				best = l;
				took = w;
			} else {
				look_free(&l);
			}
		}
		if (took < 0 || !closer(&best, cur)) {
			look_free(&best);
			break;
		}
		apply(f, mv[took]);
		look_free(cur);
		*cur = best;
	}
	return HOFF_OK;
}

/* Tries mv in phase 2: 1 kept (faster, still fits), 0 not, -1 on error. */
static int attempt(fit *f, move mv, look *cur, hoff_status *st)
{
	look l;
	if ((*st = try_move(f, mv, &l)) != HOFF_OK)
		return -1;
	if (!take_faster(&l, cur))
		return 0;
	apply(f, mv);
	return 1;
}

static int stream(fit *f, look *cur, hoff_status *st);

/* Phase 1's repairs on *l, leaving interval tabu alone (HOFF_NONE:
 * none), on at most tries simulations of its size (within the work
 * left); with then_stream, the stream after them when the plan fits.
 * HOFF_ENOMEM or the simulator's error. */
static hoff_status repair_within(fit *f, look *l, int32_t tabu, int64_t tries,
				 bool then_stream)
{
	int64_t limit = f->limit;
	if (f->work + tries * l->s->nsteps < limit)
		f->limit = f->work + tries * l->s->nsteps;
	f->tabu = tabu;
	hoff_status st = fit_phase(f, l);
	f->tabu = HOFF_NONE;
	if (st == HOFF_OK && then_stream && l->fits)
		stream(f, l, &st); /* keeps what is faster */
	f->limit = limit;
	return st;
}

/* Tries mv in phase 2 as an exchange: when it is faster but over the
 * budget, phase 1's repairs relieve the budget elsewhere (on at most
 * EXCHANGE_TRIES simulations); kept when the result fits and is faster
 * than *cur. 1 kept, 0 not, -1 on error. */
static int exchange(fit *f, move mv, look *cur, hoff_status *st)
{
	look l;
	if ((*st = try_move(f, mv, &l)) != HOFF_OK)
		return -1;
	if (faster(&l, cur)) {
		apply(f, mv);
		return take_faster(&l, cur);
	}
	if (!l.legal || l.fits || l.sum.makespan_ps >= cur->sum.makespan_ps) {
		look_free(&l);
		return 0;
	}
	save(f, &f->xs);
	apply(f, mv);
	if ((*st = repair_within(f, &l, HOFF_NONE, EXCHANGE_TRIES, false)) !=
	    HOFF_OK) {
		look_free(&l);
		return -1;
	}
	if (take_faster(&l, cur))
		return 1;
	restore(f, &f->xs);
	return 0;
}

/* The latest boundary q in [lo, hi] whose op ends by time x on *l's
 * timeline (boundary -1 ends at 0); lo when none does. */
static int32_t boundary_by(const look *l, int64_t x, int32_t lo, int32_t hi)
{
	while (lo < hi) {
		int32_t q = hi - (hi - lo) / 2;
		if (l->start[q + 1] <= x)
			lo = q;
		else
			hi = q - 1;
	}
	return lo;
}

/* Op k's prefetches issued earlier: each first where its transfer would
 * end as op k could start without a stall on cur's timeline, as an
 * exchange; then galloping earlier while each step is kept. 1 when one
 * was kept, 0 when none, -1 on error. */
static int earlier(fit *f, int32_t k, look *cur, hoff_status *st)
{
	const hoff_graph *g = f->g;
	int64_t ready = k ? cur->start[k - 1] + g->op[k - 1].time_ps : 0;
	for (int32_t u = f->b_off[k]; u < f->b_off[k + 1]; u++) {
		int32_t i = f->by_b[u];
		const hoff_cand *c = &f->iv[i];
		int32_t lo = c->kind == HOFF_CAND_START ? -1 : c->a + 1;
		if (f->pick[i] == OFF || f->pick[i] <= lo || f->work > f->limit)
			continue;
		int32_t to = boundary_by(cur, ready - c->fetch_ps, lo,
					 f->pick[i] - 1);
		int r = exchange(f, (move){i, to, HOFF_NONE, 0}, cur, st);
		if (!r && to < f->pick[i] - 1)
			r = exchange(f, (move){i, f->pick[i] - 1, HOFF_NONE, 0},
				     cur, st);
		if (r < 0)
			return -1;
		if (!r)
			continue;
		for (int32_t d = 1; f->pick[i] - d >= lo && f->work <= f->limit;
		     d *= 2) {
			r = attempt(f, (move){i, f->pick[i] - d, HOFF_NONE, 0},
				    cur, st);
			if (r <= 0)
				break;
		}
		return r < 0 ? -1 : 1;
	}
	return 0;
}

/* Op k's stall against the stores: a taken store before k (the largest
 * first, NSWAP of them) dropped for good, phase 1 repairing without it
 * (smaller or sooner evictions, whose bytes leave in time), then the
 * stream: kept when the result fits and is faster. One big store can fit
 * the budget at once yet free its bytes too late for the prefetches
 * behind it. 1 when one was kept, 0 when none, -1 on error. */
static int swap_out(fit *f, int32_t k, look *cur, hoff_status *st)
{
	int tried = 0;
	for (int32_t x = 0; x < f->niv && tried < NSWAP; x++) {
		int32_t i = f->by_size[x];
		const hoff_cand *c = &f->iv[i];
		if (f->pick[i] == OFF || c->kind != HOFF_CAND_DIRTY ||
		    c->a >= k || c->b <= k || hoff_cand_goes_home(f->g, c))
			continue;
		if (f->work > f->limit)
			break;
		tried++;
		save(f, &f->ss);
		look l;
		if ((*st = try_move(f, (move){i, OFF, HOFF_NONE, 0}, &l)) !=
		    HOFF_OK)
			return -1;
		apply(f, (move){i, OFF, HOFF_NONE, 0});
		*st = repair_within(f, &l, i, 2 * EXCHANGE_TRIES, true);
		if (*st != HOFF_OK) {
			look_free(&l);
			return -1;
		}
		if (take_faster(&l, cur)) {
			f->changed = -1;
			return 1;
		}
		restore(f, &f->ss);
	}
	return 0;
}

/* Interval indices by f->key, then index, both descending (context:
 * the fit). */
static int by_key_down(const void *x, const void *y, void *ctx)
{
	return by_key(y, x, ctx);
}

/* Op k's wait: it waits for every store issued before it, also for those
 * whose bytes memory needs only once op k runs or later. The last m of
 * them on the link (m = 1, 2, 4, ...: the latest issued first) issued
 * just after the wait instead, so their transfer runs behind the compute
 * from op k on, while the plan stays within the budget and gets faster.
 * 1 when one was kept, 0 when none, -1 on error. Cost: a simulation a
 * step of m. */
static int wait_less(fit *f, int32_t k, look *cur, hoff_status *st)
{
	int32_t nq = 0, after = 2 * (k - 1) + 1;
	for (int32_t i = 0; i < f->niv; i++) {
		if (f->pick[i] == OFF || f->iv[i].kind != HOFF_CAND_DIRTY ||
		    f->pick[i] < k)
			continue;
		f->wq[i] = leave_at(f, f->pick, i);
		if (f->wq[i] < after)
			f->wl[nq++] = i;
	}
	f->key = f->wq;
	hoff_sort_ctx(f->wl, (size_t)nq, sizeof *f->wl, by_key_down, f);
	int kept = 0;
	int32_t done = 0;
	for (int32_t m = 1; done < nq && f->work <= f->limit; m *= 2) {
		int32_t to = m < nq ? m : nq;
		save(f, &f->ts);
		for (int32_t x = done; x < to; x++)
			f->sat[f->wl[x]] = after;
		hoff_sched *s = emit(f, f->pick, f->fence);
		if (!s) {
			*st = hoff_seterr(f->e, HOFF_ENOMEM, "out of memory");
			return -1;
		}
		look l;
		if ((*st = judge(f, s, &l)) != HOFF_OK)
			return -1;
		if (!take_faster(&l, cur)) {
			restore(f, &f->ts);
			break;
		}
		for (int32_t x = done; x < to; x++) {
			int32_t q = boundary_of(f->wq[f->wl[x]]);
			if (q < f->changed)
				f->changed = q;
		}
		done = to;
		kept = 1;
	}
	return kept;
}

/* Phase 2's moves at stalled op k; 1 when one was kept. */
static int stall_moves(fit *f, int32_t k, look *cur, hoff_status *st)
{
	int r = earlier(f, k, cur, st);
	if (r)
		return r < 0 ? -1 : 1;
	if ((r = swap_out(f, k, cur, st)))
		return r < 0 ? -1 : 1;
	if (f->fence[k] && (r = wait_less(f, k, cur, st)))
		return r < 0 ? -1 : 1;
	move mv[3 + NHOLD_STALL + 8];
	int nm = 0;
	if (f->fence[k]) {
		mv[nm++] = (move){HOFF_NONE, 0, k, 0};
		if (k > 1 && !f->fence[k - 1])
			mv[nm++] = (move){HOFF_NONE, 0, k - 1, 1};
		if (k + 1 < f->n && !f->fence[k + 1])
			mv[nm++] = (move){HOFF_NONE, 0, k + 1, 1};
	}
	/* prefetches for later ops issued before k's own or up to k:
	 * after k instead (ahead of k's on the link, or holding memory) */
	int32_t from = k - 1;
	for (int32_t u = f->b_off[k]; u < f->b_off[k + 1]; u++) {
		int32_t i = f->by_b[u];
		if (f->pick[i] != OFF && f->pick[i] < from)
			from = f->pick[i];
	}
	int nh = 0;
	for (int32_t x = 0; x < f->niv && nh < NHOLD_STALL; x++) {
		int32_t i = f->by_size[x];
		const hoff_cand *c = &f->iv[i];
		if (f->pick[i] == OFF || c->b >= f->n || c->b <= k ||
		    f->pick[i] >= k || f->pick[i] < from - HOLD_BACK)
			continue;
		mv[nm++] = (move){i, k, HOFF_NONE, 0};
		nh++;
	}
	/* its round trips dropped: the tensor stays */
	for (int32_t u = f->b_off[k];
	     u < f->b_off[k + 1] && nm < 3 + NHOLD_STALL + 8; u++) {
		int32_t i = f->by_b[u];
		if (f->pick[i] != OFF && f->iv[i].kind != HOFF_CAND_START)
			mv[nm++] = (move){i, OFF, HOFF_NONE, 0};
	}
	for (int w = 0; w < nm && f->work <= f->limit; w++) {
		int r2 = attempt(f, mv[w], cur, st);
		if (r2)
			return r2;
	}
	return 0;
}

/* Every taken prefetch issued as late as its link allows on cur's
 * timeline (issue_late.h): the same transfers at the same times, less
 * memory held before them, room that later moves may use. Kept when
 * faster (phase 2's order: a lower peak at the same makespan counts).
 * 1 kept, 0 not, -1 on error. */
static int issue_late(fit *f, look *cur, hoff_status *st)
{
	int32_t np = 0;
	for (int32_t i = 0; i < f->niv; i++)
		if (f->pick[i] != OFF && f->iv[i].b < f->n)
			f->pf[np++] = i;
	f->key = f->pick;
	hoff_sort_ctx(f->pf, (size_t)np, sizeof *f->pf, by_pick, f);
	hoff_issue *p = hoff_alloc((size_t)np + 1, sizeof *p);
	int64_t *fin = f->mem; /* op k's finish at fin[k + 1] */
	if (!p) {
		*st = hoff_seterr(f->e, HOFF_ENOMEM, "out of memory");
		return -1;
	}
	fin[0] = 0;
	for (int32_t q = 0; q < f->n; q++)
		fin[q + 1] = cur->start[q] + f->g->op[q].time_ps;
	for (int32_t x = 0; x < np; x++) {
		const hoff_cand *c = &f->iv[f->pf[x]];
		p[x] = (hoff_issue){.pick = f->pick[f->pf[x]],
				    .last = c->b - 1,
				    .tier = c->tier,
				    .fetch_ps = c->fetch_ps,
				    .key = (uint64_t)c->b << 32 |
					   (uint32_t)c->t};
	}
	int32_t moved = hoff_issue_late(fin, f->n, p, np);
	memcpy(f->trial, f->pick, (size_t)f->niv * sizeof *f->trial);
	for (int32_t x = 0; x < np; x++)
		f->trial[f->pf[x]] = p[x].late;
	free(p);
	if (!moved)
		return 0;
	hoff_sched *s = emit(f, f->trial, f->fence);
	look l;
	if (!s) {
		*st = hoff_seterr(f->e, HOFF_ENOMEM, "out of memory");
		return -1;
	}
	if ((*st = judge(f, s, &l)) != HOFF_OK)
		return -1;
	if (!faster(&l, cur)) {
		look_free(&l);
		return 0;
	}
	memcpy(f->pick, f->trial, (size_t)f->niv * sizeof *f->pick);
	f->changed = -1;
	look_free(cur);
	*cur = l;
	return 1;
}

/* Phase 2's stream: every taken prefetch re-issued as early as the
 * budget allows on cur's memory per op, earliest consumer first and in
 * that order on the link (none issued before one with an earlier
 * consumer): on a link-bound stretch the link never idles while memory
 * could hold what comes next. Tried as an exchange; then each issued as
 * late as its link allows (issue_late). 1 kept, 0 not, -1 on error.
 * Cost: O(nops + the ops the taken prefetches span). */
static int stream(fit *f, look *cur, hoff_status *st)
{
	int64_t *M = f->mem;
	memcpy(M, cur->opmem, (size_t)f->n * sizeof *M);
	int32_t ne = 0;
	for (int32_t k = 0; k < f->n; k++)
		for (int32_t u = f->b_off[k]; u < f->b_off[k + 1]; u++) {
			int32_t i = f->by_b[u];
			if (f->pick[i] == OFF)
				continue;
			f->pf[ne++] = i; /* by consumer */
			for (int32_t j = f->pick[i] + 1; j < k; j++)
				M[j] -= f->iv[i].bytes;
		}
	memcpy(f->npick, f->pick, (size_t)f->niv * sizeof *f->pick);
	int32_t prev = -1;
	bool same = true;
	for (int32_t x = 0; x < ne; x++) {
		int32_t i = f->pf[x];
		const hoff_cand *c = &f->iv[i];
		int32_t lo = c->kind == HOFF_CAND_START ? -1 : c->a + 1;
		if (lo < prev)
			lo = prev;
		int32_t j = c->b - 1;
		while (j > lo && M[j] + c->bytes <= f->budget)
			j--;
		int32_t p = j > c->b - 1 ? c->b - 1 : j;
		for (j = p + 1; j < c->b; j++)
			M[j] += c->bytes;
		same = same && p == f->pick[i];
		f->npick[i] = p;
		prev = p;
	}
	if (same)
		return issue_late(f, cur, st);
	/* as one move: the picks swapped in, then judged as an exchange */
	save(f, &f->ts);
	memcpy(f->pick, f->npick, (size_t)f->niv * sizeof *f->pick);
	int r = exchange(f, (move){HOFF_NONE, 0, HOFF_NONE, 0}, cur, st);
	if (r <= 0)
		restore(f, &f->ts);
	else
		f->changed = -1;
	int r2 = r < 0 ? 0 : issue_late(f, cur, st);
	return r < 0 || r2 < 0 ? -1 : r || r2;
}

/* Phase 2: at the longest stall not yet exhausted, the first move that
 * is faster and fits. An op whose moves all failed is left until a move
 * kept changes the plan before it (f->changed). */
static hoff_status stall_phase(fit *f, look *cur)
{
	const hoff_graph *g = f->g;
	uint8_t *done = hoff_zalloc((size_t)f->n + 1, 1);
	if (!done)
		return hoff_seterr(f->e, HOFF_ENOMEM, "out of memory");
	hoff_status st = HOFF_OK;
	bool streamed = false;
	while (cur->fits && f->work <= f->limit) {
		int32_t k = HOFF_NONE;
		int64_t worst = 0;
		for (int32_t j = 0; j < f->n; j++) {
			int64_t ready =
				j ? cur->start[j - 1] + g->op[j - 1].time_ps
				  : 0;
			if (!done[j] && cur->start[j] - ready > worst) {
				worst = cur->start[j] - ready;
				k = j;
			}
		}
		if (k == HOFF_NONE || !streamed) {
			/* every op exhausted, or the phase starts: the stream
			 */
			if (streamed)
				break;
			streamed = true;
			int r = stream(f, cur, &st);
			if (r < 0)
				break;
			if (r) {
				memset(done, 0, (size_t)f->n + 1);
				streamed = k == HOFF_NONE ? false : true;
			}
			continue;
		}
		f->changed = f->n;
		int r = stall_moves(f, k, cur, &st);
		if (r < 0)
			break;
		done[k] = 1;
		for (int32_t j = f->changed + 1; j < f->n; j++)
			done[j] = 0;
	}
	free(done);
	return st;
}

/* f's arrays of an int32 an interval (into a32, returns how many) and
 * of a byte an op (into a8, NARRAYS less that many), as fit_init
 * allocates them and fit_free frees them. */
static int arrays(fit *f, int32_t **a32[NARRAYS], uint8_t **a8[NARRAYS])
{
	int32_t **x32[] = {&f->pick,	&f->trial,   &f->pf,	 &f->by_b,
			   &f->by_size, &f->npick,   &f->sat,	 &f->ev,
			   &f->evq,	&f->wl,	     &f->wq,	 &f->xs.pick,
			   &f->xs.sat,	&f->ss.pick, &f->ss.sat, &f->ts.pick,
			   &f->ts.sat};
	uint8_t **x8[] = {&f->fence,	&f->tfence,   &f->waitable,
			  &f->xs.fence, &f->ss.fence, &f->ts.fence};
	enum { N32 = sizeof x32 / sizeof *x32, N8 = sizeof x8 / sizeof *x8 };
	_Static_assert(N32 + N8 == NARRAYS, "NARRAYS counts f's arrays");
	memcpy(a32, x32, sizeof x32);
	memcpy(a8, x8, sizeof x8);
	return N32;
}

/* Allocates f's arrays and the candidates; HOFF_ENOMEM. */
static hoff_status fit_init(fit *f, const hoff_graph *g, int64_t budget,
			    int64_t work, hoff_err *e)
{
	memset(f, 0, sizeof *f);
	f->g = g;
	f->n = g->nops;
	f->budget = budget;
	f->limit = work;
	f->e = e;
	hoff_cand_rule rule = {.store_tier = hoff_best_tier(g),
			       .small_below_bytes = 0};
	size_t m;
	hoff_status st = hoff_cand_list(g, &rule, &f->iv, &m, e);
	if (st != HOFF_OK)
		return st;
	if (m > INT32_MAX / 2)
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	f->niv = (int32_t)m;
	if (m > 1) /* f->iv is NULL when there are none */
		qsort(f->iv, m, sizeof *f->iv, hoff_cand_cmp_a_t);
	size_t n = (size_t)g->nops;
	int32_t **a32[NARRAYS];
	uint8_t **a8[NARRAYS];
	int n32 = arrays(f, a32, a8), n8 = NARRAYS - n32;
	bool ok = true;
	for (int x = 0; x < n32; x++)
		ok = (*a32[x] = hoff_alloc(m + 1, sizeof **a32[x])) && ok;
	for (int x = 0; x < n8; x++)
		ok = (*a8[x] = hoff_zalloc(n + 1, 1)) && ok;
	f->b_off = hoff_zalloc(n + 3, sizeof *f->b_off);
	f->mem = hoff_alloc(n + 1, sizeof *f->mem);
	f->ws = hoff_sim_ws_new();
	if (!ok || !f->b_off || !f->mem || !f->ws)
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	for (int32_t k = 0; k < g->nops; k++) {
		for (int u = HOFF_USE_IN; u <= HOFF_USE_UPD; u++) {
			const int32_t *lst;
			int64_t nl = hoff_op_list(g, k, (hoff_use)u, &lst);
			for (int64_t j = 0; j < nl; j++) {
				const hoff_tensor *x = &g->tensor[lst[j]];
				bool homed = x->producer == HOFF_NONE &&
					     x->home != HOFF_DEVICE;
				if (hoff_tensor_offload(x) && !homed &&
				    x->bytes <= budget / WAIT_SMALL)
					f->waitable[k] = 1;
			}
		}
	}
	for (int32_t i = 0; i < f->niv; i++) {
		const hoff_cand *c = &f->iv[i];
		/* (v2) a repeat graph's state goes home right after its
		 * last use (rule 9), a pick no move undoes: left to the
		 * end, its stores would queue behind the last op */
		f->pick[i] = c->kind == HOFF_CAND_START	 ? c->b - 1
			     : hoff_cand_goes_home(g, c) ? f->n - 1
							 : OFF;
		f->sat[i] = 2 * c->a;
		f->by_size[i] = i;
		f->b_off[c->b + 1]++;
	}
	for (size_t k = 0; k <= n; k++)
		f->b_off[k + 1] += f->b_off[k];
	int32_t *fill = hoff_alloc(n + 1, sizeof *fill);
	if (!fill)
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	memcpy(fill, f->b_off, (n + 1) * sizeof *fill);
	for (int32_t i = 0; i < f->niv; i++)
		f->by_b[fill[f->iv[i].b]++] = i;
	free(fill);
	hoff_sort_ctx(f->by_size, m, sizeof *f->by_size, by_bytes, f);
	return HOFF_OK;
}

static void fit_free(fit *f)
{
	int32_t **a32[NARRAYS];
	uint8_t **a8[NARRAYS];
	int n32 = arrays(f, a32, a8);
	for (int x = 0; x < n32; x++)
		free(*a32[x]);
	for (int x = 0; x < NARRAYS - n32; x++)
		free(*a8[x]);
	free(f->iv);
	free(f->b_off);
	free(f->mem);
	hoff_sim_ws_free(f->ws);
}

/* One variant of the plan: phases 1 and 2 from every tensor resident. */
static hoff_status variant(const hoff_graph *g, int64_t budget_bytes,
			   int64_t work, int v, hoff_fit_result *r, hoff_err *e)
{
	memset(r, 0, sizeof *r);
	fit f;
	look cur = {0};
	hoff_status st = fit_init(&f, g, budget_bytes, work, e);
	f.by_cost = v & 1;
	f.future = !(v & 2);
	f.timed = v & 4;
	f.tabu = HOFF_NONE;
	if (st != HOFF_OK || g->nops == 0)
		goto out;
	hoff_sched *s = emit(&f, f.pick, f.fence);
	if (!s) {
		st = hoff_seterr(e, HOFF_ENOMEM, "out of memory");
		goto out;
	}
	if ((st = judge(&f, s, &cur)) != HOFF_OK)
		goto out;
	if ((st = fit_phase(&f, &cur)) != HOFF_OK ||
	    (st = stall_phase(&f, &cur)) != HOFF_OK)
		goto out;
	if (cur.legal) {
		r->s = cur.s;
		r->sum = cur.sum;
		r->fits = cur.fits;
		cur.s = NULL;
	}
	for (int32_t k = 0; k < f.n; k++)
		r->fences += f.fence[k];
out:
	r->tried = f.tried;
	look_free(&cur);
	fit_free(&f);
	return st;
}

hoff_status hoff_budget_fit(const hoff_graph *g, int64_t budget_bytes,
			    int64_t work, hoff_fit_result *r, hoff_err *e)
{
	hoff_fit_result vr[NVARIANTS];
	hoff_status vst[NVARIANTS];
	hoff_err ve[NVARIANTS];
#pragma omp parallel for schedule(dynamic, 1)
	for (int v = 0; v < NVARIANTS; v++)
		vst[v] = variant(g, budget_bytes, work / NVARIANTS, v, &vr[v],
				 &ve[v]);
	memset(r, 0, sizeof *r);
	hoff_status st = HOFF_OK;
	for (int v = 0; v < NVARIANTS; v++) {
		if (vst[v] != HOFF_OK && st == HOFF_OK) {
			st = vst[v];
			if (e)
				*e = ve[v];
		}
		r->tried += vr[v].tried;
		bool better = vr[v].s &&
			      (!r->s || (vr[v].fits && !r->fits) ||
			       (vr[v].fits == r->fits &&
				vr[v].sum.makespan_ps < r->sum.makespan_ps));
		if (st == HOFF_OK && better) {
			hoff_sched_free(r->s);
			int32_t tried = r->tried;
			*r = vr[v];
			r->tried = tried;
		} else {
			hoff_sched_free(vr[v].s);
		}
	}
	if (st != HOFF_OK) {
		hoff_sched_free(r->s);
		r->s = NULL;
	}
	return st;
}
