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

#include "budget_plan.h"
#include "issue_late.h"
#include "sort.h"

/* Phase 1: repairs at the first instant over the budget until the plan
 * fits, no move gets closer, or the work is spent. */
static hoff_status fit_phase(fit *f, look *cur)
{
	move mv[NMOVES];
	while (!cur->fits && cur->legal && f->work <= f->limit) {
		int32_t k = cur->over_op < f->n ? cur->over_op : f->n - 1;
		int nm = bf_repairs(f, cur, k, mv);
		look best = {0};
		int took = -1;
		for (int w = 0; w < nm; w++) {
			look l;
			hoff_status st = bf_try_move(f, mv[w], &l);
			if (st != HOFF_OK) {
				bf_look_free(&best);
				return st;
			}
			/* an eviction whose store queues past an earlier op:
			 * with a wait there too */
			int32_t wf = l.legal && l.over_op <= k &&
						     mv[w].fk == HOFF_NONE &&
						     mv[w].i != HOFF_NONE
					     ? bf_wait_op(f, l.over_op)
					     : HOFF_NONE;
			if (wf != HOFF_NONE && !f->fence[wf] && nm < NMOVES) {
				mv[nm] = mv[w];
				mv[nm].fk = wf;
				mv[nm++].fv = 1;
			}
			if (took < 0 || bf_cheaper(f, &l, &best, k)) {
				bf_look_free(&best);
				best = l;
				took = w;
			} else {
				bf_look_free(&l);
			}
		}
		if (took < 0 || !bf_closer(&best, cur)) {
			bf_look_free(&best);
			break;
		}
		bf_apply(f, mv[took]);
		bf_look_free(cur);
		*cur = best;
	}
	return HOFF_OK;
}

/* Tries mv in phase 2: 1 kept (faster, still fits), 0 not, -1 on error. */
static int attempt(fit *f, move mv, look *cur, hoff_status *st)
{
	look l;
	if ((*st = bf_try_move(f, mv, &l)) != HOFF_OK)
		return -1;
	if (!bf_take_faster(&l, cur))
		return 0;
	bf_apply(f, mv);
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
	if ((*st = bf_try_move(f, mv, &l)) != HOFF_OK)
		return -1;
	if (bf_faster(&l, cur)) {
		bf_apply(f, mv);
		return bf_take_faster(&l, cur);
	}
	if (!l.legal || l.fits || l.sum.makespan_ps >= cur->sum.makespan_ps) {
		bf_look_free(&l);
		return 0;
	}
	bf_save(f, &f->xs);
	bf_apply(f, mv);
	if ((*st = repair_within(f, &l, HOFF_NONE, EXCHANGE_TRIES, false)) !=
	    HOFF_OK) {
		bf_look_free(&l);
		return -1;
	}
	if (bf_take_faster(&l, cur))
		return 1;
	bf_restore(f, &f->xs);
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
		bf_save(f, &f->ss);
		look l;
		if ((*st = bf_try_move(f, (move){i, OFF, HOFF_NONE, 0}, &l)) !=
		    HOFF_OK)
			return -1;
		bf_apply(f, (move){i, OFF, HOFF_NONE, 0});
		*st = repair_within(f, &l, i, 2 * EXCHANGE_TRIES, true);
		if (*st != HOFF_OK) {
			bf_look_free(&l);
			return -1;
		}
		if (bf_take_faster(&l, cur)) {
			f->changed = -1;
			return 1;
		}
		bf_restore(f, &f->ss);
	}
	return 0;
}

/* Interval indices by f->key, then index, both descending (context:
 * the fit). */
static int by_key_down(const void *x, const void *y, void *ctx)
{
	return bf_by_key(y, x, ctx);
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
		f->wq[i] = bf_leave_at(f, f->pick, i);
		if (f->wq[i] < after)
			f->wl[nq++] = i;
	}
	f->key = f->wq;
	hoff_sort_ctx(f->wl, (size_t)nq, sizeof *f->wl, by_key_down, f);
	int kept = 0;
	int32_t done = 0;
	for (int32_t m = 1; done < nq && f->work <= f->limit; m *= 2) {
		int32_t to = m < nq ? m : nq;
		bf_save(f, &f->ts);
		for (int32_t x = done; x < to; x++)
			f->sat[f->wl[x]] = after;
		hoff_sched *s = bf_emit(f, f->pick, f->fence);
		if (!s) {
			*st = hoff_seterr(f->e, HOFF_ENOMEM, "out of memory");
			return -1;
		}
		look l;
		if ((*st = bf_judge(f, s, &l)) != HOFF_OK)
			return -1;
		if (!bf_take_faster(&l, cur)) {
			bf_restore(f, &f->ts);
			break;
		}
		for (int32_t x = done; x < to; x++) {
			int32_t q = bf_boundary_of(f->wq[f->wl[x]]);
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
 * bf_faster (phase 2's order: a lower peak at the same makespan counts).
 * 1 kept, 0 not, -1 on error. */
static int issue_late(fit *f, look *cur, hoff_status *st)
{
	int32_t np = 0;
	for (int32_t i = 0; i < f->niv; i++)
		if (f->pick[i] != OFF && f->iv[i].b < f->n)
			f->pf[np++] = i;
	f->key = f->pick;
	hoff_sort_ctx(f->pf, (size_t)np, sizeof *f->pf, bf_by_pick, f);
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
	hoff_sched *s = bf_emit(f, f->trial, f->fence);
	look l;
	if (!s) {
		*st = hoff_seterr(f->e, HOFF_ENOMEM, "out of memory");
		return -1;
	}
	if ((*st = bf_judge(f, s, &l)) != HOFF_OK)
		return -1;
	if (!bf_faster(&l, cur)) {
		bf_look_free(&l);
		return 0;
	}
	memcpy(f->pick, f->trial, (size_t)f->niv * sizeof *f->pick);
	f->changed = -1;
	bf_look_free(cur);
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
	bf_save(f, &f->ts);
	memcpy(f->pick, f->npick, (size_t)f->niv * sizeof *f->pick);
	int r = exchange(f, (move){HOFF_NONE, 0, HOFF_NONE, 0}, cur, st);
	if (r <= 0)
		bf_restore(f, &f->ts);
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

/* One variant of the plan: phases 1 and 2 from every tensor resident. */
static hoff_status variant(const hoff_graph *g, int64_t budget_bytes,
			   int64_t work, int v, hoff_fit_result *r, hoff_err *e)
{
	memset(r, 0, sizeof *r);
	fit f;
	look cur = {0};
	hoff_status st = bf_fit_init(&f, g, budget_bytes, work, e);
	f.by_cost = v & 1;
	f.future = !(v & 2);
	f.timed = v & 4;
	f.tabu = HOFF_NONE;
	if (st != HOFF_OK || g->nops == 0)
		goto out;
	hoff_sched *s = bf_emit(&f, f.pick, f.fence);
	if (!s) {
		st = hoff_seterr(e, HOFF_ENOMEM, "out of memory");
		goto out;
	}
	if ((st = bf_judge(&f, s, &cur)) != HOFF_OK)
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
	bf_look_free(&cur);
	bf_fit_free(&f);
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
