/* greedy_select.c: one plan for one memory target (greedy.c's steps 3 to
 * 5): the selection sweep over the ops, the placement of what it took on
 * the channels, the rounds of both, and the emission as steps.
 * requires a plan set up (greedy_plan.c); breaks its selection and
 * placement, nothing else.
 * Cost: a round O((ops + intervals) log intervals). */
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "greedy_internal.h"
#include "sort.h"

/* Step 4: places the selected intervals on their channels, then derives
 * coverage and the memory profile M. */
static void place(plan *pl)
{
	const hoff_graph *g = pl->g;
	/* Stores, forward, FIFO per d2h channel. */
	int64_t chan[2 * HOFF_MAX_TIERS] = {0};
	for (size_t i = 0; i < pl->ncand; i++) {
		if (!pl->selb[i])
			continue;
		const hoff_cand *c = &pl->cand[i];
		placed *d = &pl->pd[i];
		int64_t issue = c->a < 0 ? 0 : pl->T[c->a + 1];
		if (c->kind == HOFF_CAND_DIRTY) {
			int64_t *d2h = &chan[2 * c->tier + 1];
			int64_t start = issue > *d2h ? issue : *d2h;
			d->evict_end = start + c->store_ps;
			*d2h = d->evict_end;
		} else {
			d->evict_end = issue;
		}
		d->cs = c->kind == HOFF_CAND_START
				? 0
				: greedy_first_at(pl, c->a + 1, d->evict_end);
	}
	/* (v2) duplex: the stores' spans slow the prefetches, and the
	 * prefetches' (ps, on tiers pt) the stores after them */
	int32_t soff[HOFF_MAX_TIERS + 1];
	hoff_busy *ps = pl->dspan + pl->ncand + 1;
	int32_t *pt = pl->order, np = 0; /* scratch */
	if (pl->duplex)
		greedy_store_spans(pl, soff);
	/* Prefetches, backward from the deadline per h2d channel. */
	for (int32_t r = 0; r < g->ntiers; r++)
		chan[2 * r] = INT64_MAX;
	for (size_t i = 0; i < pl->ncand; i++) {
		if (!pl->selb[pl->by_b[i]])
			continue;
		const hoff_cand *c = &pl->cand[pl->by_b[i]];
		placed *d = &pl->pd[pl->by_b[i]];
		if (c->b >= pl->n) {
			d->p = pl->n - 1;
			continue;
		}
		int64_t *h2d = &chan[2 * c->tier];
		int64_t end = pl->T[c->b] < *h2d ? pl->T[c->b] : *h2d;
		int32_t f = g->tier[c->tier].h2d_duplex_ppm;
		int64_t start =
			pl->duplex && f < HOFF_DUPLEX_ONE
				? hoff_duplex_start(pl->dspan + soff[c->tier],
						    soff[c->tier + 1] -
							    soff[c->tier],
						    end, c->fetch_ps, f)
				: end - c->fetch_ps;
		int64_t earliest = d->evict_end;
		if (start < earliest) {
			end += earliest - start;
			start = earliest;
		}
		*h2d = start;
		d->slot = start;
		if (pl->duplex) {
			ps[np] = (hoff_busy){start, end};
			pt[np++] = c->tier;
		}
		int32_t p = greedy_boundary_before(pl, start, c->b);
		if (p < d->pmin)
			p = d->pmin;
		if (p < c->a)
			p = c->a;
		if (p > c->b - 1)
			p = c->b - 1;
		d->p = p;
	}
	if (pl->duplex)
		greedy_restore(pl, ps, pt, np);
	/* Coverage into M. */
	memset(pl->delta, 0, ((size_t)pl->n + 1) * sizeof *pl->delta);
	for (size_t i = 0; i < pl->ncand; i++) {
		if (!pl->selb[i])
			continue;
		const placed *d = &pl->pd[i];
		if (d->cs <= d->p) {
			pl->delta[d->cs] -= pl->cand[i].bytes;
			pl->delta[d->p + 1] += pl->cand[i].bytes;
		}
	}
	int64_t run = 0;
	for (int32_t j = 0; j < pl->n; j++) {
		run += pl->delta[j];
		pl->M[j] = pl->M0[j] + run;
	}
}

/* One selection sweep's state. The plan's heaps are emptied, their
 * memory kept across rounds. Each heap entry carries the last op its
 * candidate can serve (aux), so stale entries are dropped without
 * touching the interval. */
typedef struct sweep {
	plan *pl;
	int64_t target;
	bool stall;
	bool ext_on;	  /* the fetch-later list is built on first need */
	int32_t next_ext; /* ext entries before it are in `late` */
	int32_t next;	  /* bucket entries before it are in the heaps */
	int64_t added;	  /* intervals taken; -1 on OOM */
	int64_t red;	  /* memory the taken ones free at the current op */
	/* When each tier's d2h channel is busy until, from the stores of
	 * this round: a store frees nothing before the ones ahead of it. */
	int64_t busy[HOFF_MAX_TIERS];
	hoff_heap *hidden, *slow, *later, *late;
} sweep;

/* At a violation at op j: the candidates that start by j and still
 * cover it (the rest of the bucket never could), the fetch-later list's
 * entries up to j, and the stores put off to j. */
static void bring_in(sweep *w, int32_t j)
{
	plan *pl = w->pl;
	for (; w->next < pl->bucket_off[j + 1]; w->next++) {
		const bent *c = &pl->bucket[w->next];
		if (pl->selb[c->i])
			continue;
		bool hid = c->pe0 >= j, slo = w->stall && c->bm1 >= j;
		if ((hid &&
		     !hoff_heap_push(w->hidden, c->i, c->hid_key, c->pe0)) ||
		    (slo &&
		     !hoff_heap_push(w->slow, c->i, c->slow_key, c->bm1))) {
			w->added = -1;
			break;
		}
	}
	for (; w->ext_on && w->next_ext < pl->ext_off[j + 1] && w->added >= 0;
	     w->next_ext++) {
		int32_t i = pl->ext[w->next_ext];
		int32_t b = pl->cand[i].b;
		/* farthest consumer first: its wait costs least */
		if (b - 1 >= j && !hoff_heap_push(w->late, i, (double)b, b - 1))
			w->added = -1;
	}
	/* Candidates whose store would have freed too late for an earlier
	 * op come back at the first op it frees in time. */
	while (w->later->n && -w->later->e[0].key <= (double)j &&
	       w->added >= 0) {
		hoff_hent x = hoff_heap_pop(w->later);
		const hoff_cand *c = &pl->cand[x.id];
		double cost = (double)(c->store_ps + c->fetch_ps) + 1.0;
		if (!hoff_heap_push(w->slow, x.id, (double)c->bytes / cost,
				    x.aux))
			w->added = -1;
	}
}

/* The best unselected candidate still covering j: a hidden one first
 * (*hid), else one that may stall; HOFF_NONE when neither is left. */
static int32_t pop_best(sweep *w, int32_t j, bool *hid)
{
	const uint8_t *selb = w->pl->selb;
	int32_t i = HOFF_NONE;
	while (w->hidden->n) {
		hoff_hent x = hoff_heap_pop(w->hidden);
		if (!selb[x.id] && x.aux >= j) {
			i = x.id;
			break;
		}
	}
	*hid = i != HOFF_NONE;
	while (i == HOFF_NONE && w->slow->n) {
		hoff_hent x = hoff_heap_pop(w->slow);
		if (!selb[x.id] && x.aux >= j)
			i = x.id;
	}
	return i;
}

/* Selected intervals whose prefetch comes before j and whose consumer
 * comes after it could be fetched later: lists them by first op after
 * p, and pushes those up to j. */
static void build_ext(sweep *w, int32_t j)
{
	plan *pl = w->pl;
	const int32_t n = pl->n;
	w->ext_on = true;
	memset(pl->ext_off, 0, ((size_t)n + 3) * sizeof *pl->ext_off);
	for (size_t q = 0; q < pl->ncand; q++) {
		if (!pl->selb[q])
			continue;
		int32_t b = pl->cand[q].b, p = pl->pd[q].p;
		if (b < n && p < b - 1)
			pl->ext_off[p + 2]++;
	}
	for (int32_t k = 0; k <= n; k++)
		pl->ext_off[k + 1] += pl->ext_off[k];
	for (int32_t k = 0; k <= n; k++)
		pl->fill[k] = pl->ext_off[k];
	for (size_t q = 0; q < pl->ncand; q++) {
		if (!pl->selb[q])
			continue;
		int32_t b = pl->cand[q].b, p = pl->pd[q].p;
		if (b < n && p < b - 1)
			pl->ext[pl->fill[p + 1]++] = (int32_t)q;
	}
	for (; w->next_ext < pl->ext_off[j + 1]; w->next_ext++) {
		int32_t q = pl->ext[w->next_ext];
		int32_t b = pl->cand[q].b;
		if (b - 1 >= j && !hoff_heap_push(w->late, q, (double)b, b - 1))
			w->added = -1;
	}
}

/* Last resort at op j: fetch a selected tensor right before its
 * consumer instead (it may stall). False when the target is too low
 * (pl->low set): nothing is left to take. */
static bool fetch_later(sweep *w, int32_t j, int64_t *excess)
{
	plan *pl = w->pl;
	while (w->late->n) {
		hoff_hent x = hoff_heap_pop(w->late);
		const hoff_cand *c = &pl->cand[x.id];
		placed *d = &pl->pd[x.id];
		if (c->b - 1 < j || d->pmin >= c->b - 1)
			continue;
		d->pmin = c->b - 1;
		pl->selb[x.id] = 2;
		w->red -= c->bytes;
		pl->delta[c->b] += c->bytes;
		*excess -= c->bytes;
		w->added++;
		break;
	}
	if (*excess > 0 && !w->late->n) {
		pl->low = true; /* target too low */
		return false;
	}
	return true;
}

/* Takes candidate i at op j, unless it is a store that would free too
 * late behind this round's stores: that one is put off (at most twice)
 * to the first op it frees in time. */
static void take(sweep *w, int32_t i, int32_t j, bool hid, int64_t *excess)
{
	plan *pl = w->pl;
	const hoff_cand *c = &pl->cand[i];
	placed *d = &pl->pd[i];
	if (c->kind == HOFF_CAND_DIRTY) {
		int64_t issue = c->a < 0 ? 0 : pl->T[c->a + 1];
		int64_t done =
			(issue > w->busy[c->tier] ? issue : w->busy[c->tier]) +
			c->store_ps;
		if (done > pl->T[j]) { /* frees too late */
			int32_t at = greedy_first_at(pl, j + 1, done);
			if (at < c->b && d->deferred < 2 &&
			    !hoff_heap_push(w->later, i, -(double)at, c->b - 1))
				w->added = -1;
			if (d->deferred++ == 0) {
				/* listed for greedy_plan_reset */
				if (!hoff_grow((void **)&pl->deferred,
					       &pl->deferred_cap,
					       pl->ndeferred + 1,
					       sizeof *pl->deferred))
					w->added = -1;
				else
					pl->deferred[pl->ndeferred++] = i;
			}
			return;
		}
		w->busy[c->tier] = done;
	}
	pl->selb[i] = hid ? 1 : 2;
	int32_t end = hid ? d->pe0 : c->b - 1;
	if (end > pl->n - 1)
		end = pl->n - 1;
	d->pmin = hid ? j : end;
	w->red -= c->bytes;
	pl->delta[end + 1] += c->bytes;
	*excess -= c->bytes;
	w->added++;
}

/* Step 3: one selection sweep against target; returns how many intervals
 * it added, or -1 on OOM. With stall, candidates whose prefetch cannot
 * hide may be taken after the hidden ones run out. */
static int64_t select_round(plan *pl, int64_t target, bool stall)
{
	const int32_t n = pl->n;
	sweep w = {.pl = pl,
		   .target = target,
		   .stall = stall,
		   .hidden = &pl->hq[0],
		   .slow = &pl->hq[1],
		   .later = &pl->hq[2],
		   .late = &pl->hq[3]};
	w.hidden->n = w.slow->n = w.later->n = w.late->n = 0;
	memset(pl->delta, 0, ((size_t)n + 1) * sizeof *pl->delta);
	for (int32_t j = 0; j < n && w.added >= 0 && !(pl->quit_low && pl->low);
	     j++) {
		w.red += pl->delta[j];
		if (pl->M[j] + w.red <= target)
			continue;
		bring_in(&w, j);
		int64_t excess = pl->M[j] + w.red - target;
		while (excess > 0 && w.added >= 0) {
			bool hid;
			int32_t i = pop_best(&w, j, &hid);
			if (i == HOFF_NONE && stall && !w.ext_on)
				build_ext(&w, j);
			if (i == HOFF_NONE) {
				if (!fetch_later(&w, j, &excess))
					break;
				continue;
			}
			take(&w, i, j, hid, &excess);
		}
	}
	return w.added;
}

int64_t greedy_peak_of(const plan *pl)
{
	int64_t m = 0;
	for (int32_t j = 0; j < pl->n; j++)
		if (pl->M[j] > m)
			m = pl->M[j];
	return m;
}

bool greedy_emits(const plan *pl, size_t i)
{
	const hoff_cand *c = &pl->cand[i];
	return c->kind == HOFF_CAND_START || pl->pd[i].cs <= pl->pd[i].p ||
	       (pl->g->repeat && hoff_cand_goes_home(pl->g, c));
}

/* Candidate indices in issue order (hoff_sort_ctx, context: the plan). */
static int by_issue(const void *x, const void *y, void *ctx)
{
	const plan *pl = ctx;
	int32_t i = *(const int32_t *)x, j = *(const int32_t *)y;
	const hoff_cand *a = &pl->cand[i], *b = &pl->cand[j];
	const placed *pa = &pl->pd[i], *pb = &pl->pd[j];
	if (pa->p != pb->p)
		return pa->p < pb->p ? -1 : 1;
	if (pa->slot != pb->slot)
		return pa->slot < pb->slot ? -1 : 1;
	if (a->b != b->b) /* earliest deadline first */
		return a->b < b->b ? -1 : 1;
	return (a->t > b->t) - (a->t < b->t);
}

/* At each boundary the evictions, then the prefetches in channel order,
 * then the next op. */
hoff_sched *greedy_emit_plan(plan *pl, hoff_status *st)
{
	const hoff_graph *g = pl->g;
	hoff_emit m;
	if ((*st = hoff_emit_init(&m, g, "greedy")) != HOFF_OK)
		return NULL;
	size_t ne = 0, np = 0;
	int32_t *ev = pl->order, *pf = pl->ext; /* scratch */
	for (size_t k = 0; k < pl->ncand; k++) {
		int32_t i = (int32_t)k;
		if (!pl->selb[i])
			continue;
		const hoff_cand *c = &pl->cand[i];
		if (!greedy_emits(pl, i))
			continue; /* covers nothing after placement */
		if (c->kind != HOFF_CAND_START)
			ev[ne++] = i;
		if (c->b < pl->n)
			pf[np++] = i;
	}
	hoff_sort_ctx(pf, np, sizeof *pf, by_issue, pl);
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
		for (; ie < ne && pl->cand[ev[ie]].a == q; ie++)
			hoff_emit_evict(&m, pl->cand[ev[ie]].t);
		for (; ip < np && pl->pd[pf[ip]].p == q; ip++)
			hoff_emit_prefetch(&m, pl->cand[pf[ip]].t);
	}
	hoff_sched *s = hoff_emit_finish(&m);
	*st = s ? HOFF_OK : HOFF_ENOMEM;
	return s;
}

hoff_status greedy_plan_for(plan *pl, int64_t target, bool stall)
{
	greedy_plan_reset(pl);
	place(pl);
	pl->low = false;
	for (int round = 0; round < MAX_ROUNDS && greedy_peak_of(pl) > target;
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
		for (size_t i = 0; i < pl->ncand; i++) {
			if (!pl->selb[i])
				continue;
			if (!greedy_emits(pl, i))
				pl->selb[i] = 0;
		}
	}
	return HOFF_OK;
}
