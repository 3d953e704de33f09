/* budget_plan.c: see budget_plan.h. The budget fit's primitives: the
 * orders intervals sort by, a plan's emission and its judgement by the
 * simulator, the orders plans compare by, moves and their undo, the
 * repairs at the first instant over the budget, and a fit's set-up and
 * release. Cost: an emission and a judgement are O(steps log steps); a
 * repair's choice O(intervals). */
#include "budget_plan.h"

#include <stdlib.h>
#include <string.h>

#include "issue_late.h"
#include "sort.h"

/* Interval indices by f->key, then boundary b, then start t (hoff_sort_ctx
 * with the fit as context). */
int bf_by_pick(const void *x, const void *y, void *ctx)
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
int bf_by_key(const void *x, const void *y, void *ctx)
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
int32_t bf_leave_at(const fit *f, const int32_t *pick, int32_t i)
{
	int32_t h = f->sat[i], a = 2 * f->iv[i].a;
	if (h > 2 * pick[i] - 1)
		h = 2 * pick[i] - 1;
	return h < a ? a : h;
}

/* The boundary of half-boundary position h (leave_at's). */
int32_t bf_boundary_of(int32_t h)
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
hoff_sched *bf_emit(fit *f, const int32_t *pick, const uint8_t *fence)
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
	hoff_sort_ctx(f->pf, (size_t)np, sizeof *f->pf, bf_by_pick, f);
	/* the evictions by where they leave, then by (a, t): with none
	 * left late, the intervals' own order */
	int32_t ne = 0;
	bool late = false;
	for (int32_t i = 0; i < f->niv; i++) {
		if (pick[i] == OFF || f->iv[i].kind == HOFF_CAND_START)
			continue;
		f->evq[i] = bf_leave_at(f, pick, i);
		late = late || f->evq[i] != 2 * f->iv[i].a;
		f->ev[ne++] = i;
	}
	if (late) {
		f->key = f->evq;
		hoff_sort_ctx(f->ev, (size_t)ne, sizeof *f->ev, bf_by_key, f);
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

void bf_look_free(look *l)
{
	hoff_sched_free(l->s);
	free(l->start);
	free(l->opmem);
	memset(l, 0, sizeof *l);
}

/* Simulates s (taken) into *l; HOFF_ENOMEM or the simulator's error. */
hoff_status bf_judge(fit *f, hoff_sched *s, look *l)
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
		bf_look_free(l);
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
bool bf_closer(const look *a, const look *b)
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
 * get past k, the bf_faster (the least cost in stall). */
bool bf_cheaper(const fit *f, const look *a, const look *b, int32_t k)
{
	if (f->by_cost && a->legal && b->legal && a->over_op > k &&
	    b->over_op > k && a->fits == b->fits)
		return a->sum.makespan_ps < b->sum.makespan_ps;
	return bf_closer(a, b);
}

/* Phase 2's order: fits, then faster, then a lower peak. */
bool bf_faster(const look *a, const look *b)
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
hoff_status bf_try_move(fit *f, move mv, look *l)
{
	memcpy(f->trial, f->pick, (size_t)f->niv * sizeof *f->trial);
	memcpy(f->tfence, f->fence, (size_t)f->n + 1);
	if (mv.i != HOFF_NONE)
		f->trial[mv.i] = mv.p;
	if (mv.fk != HOFF_NONE)
		f->tfence[mv.fk] = mv.fv;
	hoff_sched *s = bf_emit(f, f->trial, f->tfence);
	if (!s)
		return hoff_seterr(f->e, HOFF_ENOMEM, "out of memory");
	return bf_judge(f, s, l);
}

void bf_apply(fit *f, move mv)
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
void bf_save(const fit *f, saved *s)
{
	memcpy(s->pick, f->pick, (size_t)f->niv * sizeof *f->pick);
	memcpy(s->sat, f->sat, (size_t)f->niv * sizeof *f->sat);
	memcpy(s->fence, f->fence, (size_t)f->n + 1);
	s->changed = f->changed;
}

/* Puts back the decisions saved in *s. */
void bf_restore(fit *f, const saved *s)
{
	memcpy(f->pick, s->pick, (size_t)f->niv * sizeof *f->pick);
	memcpy(f->sat, s->sat, (size_t)f->niv * sizeof *f->sat);
	memcpy(f->fence, s->fence, (size_t)f->n + 1);
	f->changed = s->changed;
}

/* *l in *cur's place when it fits and is bf_faster (1), else freed (0). */
int bf_take_faster(look *l, look *cur)
{
	if (!bf_faster(l, cur)) {
		bf_look_free(l);
		return 0;
	}
	bf_look_free(cur);
	*cur = *l;
	return 1;
}

/* The op a wait for op k goes before: the latest of the WAIT_BACK ops up
 * to k with a small operand to store and fetch back (a wait's operand
 * counts twice while its store is queued); HOFF_NONE when none. */
int32_t bf_wait_op(const fit *f, int32_t k)
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
int bf_repairs(const fit *f, const look *cur, int32_t k, move *mv)
{
	int nm = 0, nf = 0;
	int64_t x = cur->over_bytes;
	int32_t wk[2];
	int32_t w0 = bf_wait_op(f, k);
	int32_t w1 = cur->over_ps < cur->start[k] ? bf_wait_op(f, k - 1)
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
hoff_status bf_fit_init(fit *f, const hoff_graph *g, int64_t budget,
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

void bf_fit_free(fit *f)
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
