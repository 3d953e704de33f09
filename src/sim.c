/* sim.c: FORMAT.md's machine model, step by step, on integer picoseconds.
 *
 * The compute stream is walked in schedule order: op steps and (v2)
 * recompute steps. On a tier whose duplex factors are both 1, a transfer
 * has its start and end fixed at issue (each channel is FIFO and every
 * earlier transfer's end is known). On a tier with a factor below 1
 * (rule 3), a transfer's end moves whenever the tier's other channel
 * starts or completes one: such a tier keeps a FIFO queue per channel,
 * starts the head when the channel frees (or when the store a prefetch
 * waits for completes), and re-times both heads at each start and
 * completion on it, with the remaining work R in ps x 10^6 (128 bits).
 * Pending completions of both kinds sit in one min-heap on (end, issue
 * order); a re-timed transfer pushes a new entry and its old one is
 * skipped as stale (a version number). Events are applied in
 * nondecreasing time; an instant is "finalized" (memory and tier use
 * measured, budget and capacity checked) when time moves past it, so
 * every measure is taken after all events of its instant, as rule 8 says.
 * A compute step waits for its inputs' prefetches by applying events in
 * order until they complete.
 *
 * A step that breaks a rule is recorded and has no effect; an op always
 * runs (its missing inputs are reported, not waited for), so one run lists
 * every violation; a recompute that breaks rule 10 does not run. Cost:
 * O((steps + list entries) log transfers), plus O(re-timings log) on
 * duplex tiers (at most two per start or completion). */
#include "sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
	RES = 1 << 0,	  /* on the device and usable */
	PF = 1 << 1,	  /* prefetch in flight */
	ST = 1 << 2,	  /* store in flight */
	STORED = 1 << 3,  /* stored, and not re-made since: no prefetch issued,
			     no recompute (rule 5) */
	INV = 1 << 4,	  /* the store in flight will leave no valid copy */
	DROPPED = 1 << 5, /* (v2) dropped, and not re-made since (rule 11) */
};

typedef struct tstate {
	uint64_t valid; /* tiers holding a valid copy */
	int64_t pf_end; /* end of the prefetch in flight; on a duplex tier
			   HOFF_NONE until it completes */
	int64_t st_end; /* end of the store in flight; on a duplex tier the
			   index of its dxfer */
	int64_t last_c; /* the last compute step (counted from 0 in step
			   order) that reads or updates it, or HOFF_NONE */
	int32_t upd_op; /* (v2) the last op step so far that updated it */
	int16_t st_tier;
	uint8_t flags;
	uint8_t nblk; /* device blocks allocated (2 while store and prefetch,
			 or store and recompute, overlap) */
} tstate;

typedef struct xfer {
	int64_t end;
	int64_t seq; /* issue order: FIFO among equal ends */
	int32_t t;
	int32_t dx;  /* a duplex tier's transfer: its dxfer, else HOFF_NONE */
	int32_t ver; /* the dxfer's version when pushed (stale if changed) */
	int16_t tier;
	bool store;
} xfer;

#if defined(__GNUC__)
__extension__ typedef __int128 i128;
#else
#error "the duplex arithmetic of rule 3 needs a 128-bit integer"
#endif

/* (v2) A transfer on a duplex tier (rule 3). */
typedef struct dxfer {
	i128 rem;	    /* remaining work R, in ps at full speed x 10^6 */
	int64_t dur;	    /* nominal duration D in ps */
	int64_t t0;	    /* when rem was last brought up to date */
	int64_t start, end; /* HOFF_NONE until started; predicted end */
	int64_t seq;	    /* issue order */
	size_t ev;	    /* its timeline event, when a timeline is kept */
	int32_t t, next;    /* tensor; next in its channel's queue */
	int32_t wait;	    /* a prefetch: the store it waits for, or NONE */
	int32_t ver;	    /* bumped at each re-timing */
	int32_t speed;	    /* work per ps: 10^6, or F; 0 before start */
	int16_t tier;
	bool store, done;
} dxfer;

typedef struct sim {
	const hoff_graph *g;
	const hoff_sched *s;
	const hoff_sim_opts *o;
	hoff_sim_result *r;
	tstate *ts;
	xfer *heap;
	size_t nheap, heap_cap;
	int64_t seq;
	int64_t now;      /* the current instant */
	int64_t mem;      /* device bytes in use */
	int64_t ws;       /* workspace of the running op */
	int64_t end_ps;   /* latest finish seen (ops and transfers) */
	int64_t *tier_use;  /* (ntiers) valid copies + stores in flight */
	int64_t *chan_free; /* (2 * ntiers): h2d of tier i at 2i, d2h 2i+1 */
	bool *duplex;	    /* (ntiers) a factor below 1: dynamic transfers */
	int32_t *qhead, *qtail; /* (2 * ntiers) duplex channels' FIFO queues */
	dxfer *dx;		/* (ndx) duplex tiers' transfers */
	size_t ndx, dx_cap;
	int32_t *pfw; /* (npfw) a compute step's awaited inputs */
	size_t npfw, pfw_cap;
	bool over_budget;
	uint64_t tier_over;
	int64_t alloc_step;   /* last step that allocated device memory */
	int32_t alloc_tensor; /* and its tensor, or HOFF_NONE */
	int64_t *tier_step;   /* (ntiers) last step that added to tier use */
	int32_t *tier_tensor; /* (ntiers) */
	int64_t nc;	      /* compute steps finished so far */
	bool snapped;
	hoff_status st;
	hoff_err *e;
} sim;

struct hoff_sim_ws {
	tstate *ts;
	size_t ts_cap;
	xfer *heap;
	size_t heap_cap;
};

hoff_sim_ws *hoff_sim_ws_new(void)
{
	return hoff_zalloc(1, sizeof(hoff_sim_ws));
}

void hoff_sim_ws_free(hoff_sim_ws *w)
{
	if (!w)
		return;
	free(w->ts);
	free(w->heap);
	free(w);
}

hoff_sim_opts hoff_sim_defaults(void)
{
	return (hoff_sim_opts){.budget_bytes = HOFF_NONE,
			       .timeline = false,
			       .op_times = false,
			       .snapshot_ps = HOFF_NONE};
}

static void violate(sim *m, int64_t step, int32_t t, int32_t op, int rule,
		    const char *why)
{
	hoff_sim_result *r = m->r;
	r->valid = false;
	if (r->nviol < HOFF_SIM_MAXVIOL) {
		hoff_violation *v = &r->viol[r->nviol];
		v->step = step;
		v->tensor = t;
		v->op = op;
		v->rule = (uint8_t)rule;
		snprintf(v->why, sizeof v->why, "%s", why);
	}
	r->nviol++;
}

static bool before(const xfer *a, const xfer *b)
{
	return a->end < b->end || (a->end == b->end && a->seq < b->seq);
}

static bool heap_push(sim *m, xfer x)
{
	if (!hoff_grow((void **)&m->heap, &m->heap_cap, m->nheap + 1,
		       sizeof *m->heap))
		return false;
	size_t i = m->nheap++;
	while (i > 0 && before(&x, &m->heap[(i - 1) / 2])) {
		m->heap[i] = m->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	m->heap[i] = x;
	return true;
}

static xfer heap_pop(sim *m)
{
	xfer top = m->heap[0], last = m->heap[--m->nheap];
	size_t i = 0, n = m->nheap;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && before(&m->heap[c + 1], &m->heap[c]))
			c++;
		if (!before(&m->heap[c], &last))
			break;
		m->heap[i] = m->heap[c];
		i = c;
	}
	if (n)
		m->heap[i] = last;
	return top;
}

static void snapshot(sim *m)
{
	hoff_sim_result *r = m->r;
	const hoff_graph *g = m->g;
	m->snapped = true;
	r->snap = hoff_alloc((size_t)g->ntensors + 1, sizeof *r->snap);
	if (!r->snap) {
		m->st = hoff_seterr(m->e, HOFF_ENOMEM, "out of memory");
		return;
	}
	for (int32_t t = 0; t < g->ntensors; t++)
		for (int b = 0; b < m->ts[t].nblk; b++)
			r->snap[r->nsnap++] = t;
	r->snap_workspace_bytes = m->ws;
}

/* Measures the state after every event of instant m->now. */
static void finalize(sim *m)
{
	hoff_sim_result *r = m->r;
	const hoff_graph *g = m->g;
	if (m->mem > r->summary.peak_bytes) {
		r->summary.peak_bytes = m->mem;
		r->peak_ps = m->now;
	}
	if (m->mem > r->budget_bytes) {
		if (!m->over_budget)
			violate(m, m->alloc_step, m->alloc_tensor, HOFF_NONE, 8,
				"device memory exceeds the budget");
		m->over_budget = true;
	} else {
		m->over_budget = false;
	}
	for (int32_t i = 0; i < g->ntiers; i++) {
		int64_t cap = g->tier[i].capacity_bytes;
		uint64_t bit = (uint64_t)1 << i;
		if (cap != HOFF_UNLIMITED && m->tier_use[i] > cap) {
			if (!(m->tier_over & bit))
				violate(m, m->tier_step[i], m->tier_tensor[i],
					HOFF_NONE, 8,
					"tier capacity exceeded");
			m->tier_over |= bit;
		} else {
			m->tier_over &= ~bit;
		}
	}
	if (m->o->timeline &&
	    hoff_timeline_mem(&r->tl, m->now, m->mem) != HOFF_OK)
		m->st = hoff_seterr(m->e, HOFF_ENOMEM, "out of memory");
	if (!m->snapped && m->o->snapshot_ps == m->now)
		snapshot(m);
}

/* Moves the clock to t, finalizing the instant left behind. */
static void advance(sim *m, int64_t t)
{
	if (t > m->now) {
		finalize(m);
		m->now = t;
	}
}

static void release_copies(sim *m, int32_t t)
{
	tstate *x = &m->ts[t];
	for (int32_t i = 0; i < m->g->ntiers; i++)
		if (x->valid & ((uint64_t)1 << i))
			m->tier_use[i] -= m->g->tensor[t].bytes;
	x->valid = 0;
}

static void complete(sim *m, const xfer *x)
{
	tstate *ts = &m->ts[x->t];
	int64_t bytes = m->g->tensor[x->t].bytes;
	uint64_t bit = (uint64_t)1 << x->tier;
	if (!x->store) {
		ts->flags = (uint8_t)((ts->flags & ~PF) | RES);
		return;
	}
	ts->nblk--;
	m->mem -= bytes;
	if ((ts->flags & INV) || (ts->valid & bit))
		m->tier_use[x->tier] -= bytes; /* no new copy */
	else
		ts->valid |= bit; /* the reservation becomes the copy */
	ts->flags &= (uint8_t)~(ST | INV);
}

/* ---- (v2) duplex tiers: rule 3 ---- */

static hoff_status past_limit(sim *m, const dxfer *d)
{
	return hoff_seterr(m->e, HOFF_EINPUT,
			   "\"%s\": transfer ends at or after 2^62 ps",
			   m->g->tensor[d->t].id);
}

/* Brings the started heads of tier's two channels up to m->now and sets
 * their speeds from the state now: F while the other channel transfers,
 * else 10^6; a head whose end moves gets a new heap entry. Applying it
 * twice at one instant changes nothing, so it runs after every event. */
static hoff_status retime(sim *m, int32_t tier)
{
	const hoff_tier *tr = &m->g->tier[tier];
	for (int c = 0; c < 2; c++) {
		int32_t h = m->qhead[2 * tier + c];
		int32_t o = m->qhead[2 * tier + 1 - c];
		if (h == HOFF_NONE || m->dx[h].start == HOFF_NONE)
			continue;
		dxfer *d = &m->dx[h];
		bool busy = o != HOFF_NONE && m->dx[o].start != HOFF_NONE;
		int32_t v = !busy ? HOFF_DUPLEX_ONE
			    : c	  ? tr->d2h_duplex_ppm
				  : tr->h2d_duplex_ppm;
		d->rem -= (i128)(m->now - d->t0) * d->speed;
		d->t0 = m->now;
		d->speed = v;
		i128 end = m->now;
		if (d->rem > 0)
			end += (d->rem + v - 1) / v; /* ceil */
		if (end >= HOFF_PS_LIMIT)
			return past_limit(m, d);
		if ((int64_t)end == d->end)
			continue;
		d->end = (int64_t)end;
		d->ver++;
		xfer x = {.end = d->end,
			  .seq = d->seq,
			  .t = d->t,
			  .dx = h,
			  .ver = d->ver,
			  .tier = d->tier,
			  .store = d->store};
		if (!heap_push(m, x))
			return hoff_seterr(m->e, HOFF_ENOMEM, "out of memory");
	}
	return HOFF_OK;
}

/* Starts channel ch's head now unless it runs already or is a prefetch
 * whose store has not completed (rule 4: it waits at the head). */
static hoff_status try_start(sim *m, int ch)
{
	int32_t h = m->qhead[ch];
	if (h == HOFF_NONE || m->dx[h].start != HOFF_NONE)
		return HOFF_OK;
	dxfer *d = &m->dx[h];
	if (d->wait != HOFF_NONE && !m->dx[d->wait].done)
		return HOFF_OK;
	if (d->dur >= HOFF_PS_LIMIT - m->now)
		return past_limit(m, d);
	d->start = d->t0 = m->now;
	d->rem = (i128)d->dur * HOFF_DUPLEX_ONE;
	if (m->o->timeline)
		m->r->tl.ev[d->ev].start_ps = m->now;
	return retime(m, d->tier);
}

/* Duplex transfer x has completed at m->now (its effects applied): its
 * channel moves on, a prefetch waiting for it starts, and both heads are
 * re-timed. */
static hoff_status dyn_done(sim *m, const xfer *x)
{
	dxfer *d = &m->dx[x->dx];
	int ch = 2 * x->tier + (x->store ? 1 : 0);
	d->done = true;
	if (!x->store)
		m->ts[x->t].pf_end = x->end;
	if (x->end > m->end_ps)
		m->end_ps = x->end;
	if (m->o->timeline)
		m->r->tl.ev[d->ev].end_ps = x->end;
	m->qhead[ch] = d->next;
	if (d->next == HOFF_NONE)
		m->qtail[ch] = HOFF_NONE;
	hoff_status st = try_start(m, ch);
	if (st == HOFF_OK && x->store)
		st = try_start(m, 2 * x->tier);
	if (st == HOFF_OK)
		st = retime(m, x->tier);
	return st;
}

/* Queues a transfer on a duplex tier's channel; wait: the store a
 * prefetch waits for, or HOFF_NONE. */
static hoff_status dyn_issue(sim *m, int64_t step, int32_t t, int32_t tier,
			     bool store, int32_t wait, int64_t dur)
{
	if (m->ndx >= INT32_MAX ||
	    !hoff_grow((void **)&m->dx, &m->dx_cap, m->ndx + 1, sizeof *m->dx))
		return hoff_seterr(m->e, HOFF_ENOMEM, "out of memory");
	int32_t h = (int32_t)m->ndx++;
	int ch = 2 * tier + (store ? 1 : 0);
	m->dx[h] = (dxfer){.dur = dur,
			   .start = HOFF_NONE,
			   .end = HOFF_NONE,
			   .seq = m->seq++,
			   .t = t,
			   .next = HOFF_NONE,
			   .wait = wait,
			   .tier = (int16_t)tier,
			   .store = store};
	if (m->o->timeline) {
		hoff_event ev = {.start_ps = m->now,
				 .end_ps = m->now,
				 .step = step,
				 .id = t,
				 .tier = (int16_t)tier,
				 .kind = store ? HOFF_EV_STORE
					       : HOFF_EV_PREFETCH,
				 .await = HOFF_NONE};
		m->dx[h].ev = m->r->tl.nev;
		if (hoff_timeline_event(&m->r->tl, ev) != HOFF_OK)
			return hoff_seterr(m->e, HOFF_ENOMEM, "out of memory");
	}
	if (store)
		m->ts[t].st_end = h;
	else
		m->ts[t].pf_end = HOFF_NONE;
	if (m->qtail[ch] == HOFF_NONE)
		m->qhead[ch] = h;
	else
		m->dx[m->qtail[ch]].next = h;
	m->qtail[ch] = h;
	return try_start(m, ch);
}

/* Applies the next valid completion: false when none is pending. */
static bool pop_one(sim *m, int64_t t)
{
	while (m->nheap && m->heap[0].end <= t) {
		xfer x = heap_pop(m);
		if (x.dx != HOFF_NONE && x.ver != m->dx[x.dx].ver)
			continue; /* re-timed since */
		advance(m, x.end);
		complete(m, &x);
		if (x.dx != HOFF_NONE) {
			hoff_status st = dyn_done(m, &x);
			if (st != HOFF_OK && m->st == HOFF_OK)
				m->st = st;
		}
		return true;
	}
	return false;
}

/* Applies every transfer completion up to and including instant t. */
static void drain(sim *m, int64_t t)
{
	while (m->st == HOFF_OK && pop_one(m, t)) {
	}
}

static hoff_status transfer(sim *m, int64_t step, int32_t t, int32_t tier,
			    bool store, int64_t not_before)
{
	const hoff_graph *g = m->g;
	if (m->duplex[tier]) {
		int64_t dur = hoff_xfer_ps(g, tier, g->tensor[t].bytes, !store);
		if (store)
			m->r->summary.d2h_bytes += g->tensor[t].bytes;
		else
			m->r->summary.h2d_bytes += g->tensor[t].bytes;
		/* a prefetch's not_before is the store it waits for */
		return dyn_issue(m, step, t, tier, store,
				 store || not_before == HOFF_NONE
					 ? HOFF_NONE
					 : (int32_t)not_before,
				 dur);
	}
	int64_t *chan = &m->chan_free[2 * tier + (store ? 1 : 0)];
	int64_t start = m->now;
	if (*chan > start)
		start = *chan;
	if (not_before > start)
		start = not_before;
	int64_t dur = hoff_xfer_ps(g, tier, g->tensor[t].bytes, !store);
	if (dur >= HOFF_PS_LIMIT - start)
		return hoff_seterr(m->e, HOFF_EINPUT,
				   "steps[%lld] \"%s\": transfer ends at or "
				   "after 2^62 ps",
				   (long long)step, g->tensor[t].id);
	int64_t end = start + dur;
	*chan = end;
	if (end > m->end_ps)
		m->end_ps = end;
	if (store) {
		m->ts[t].st_end = end;
		m->r->summary.d2h_bytes += g->tensor[t].bytes;
	} else {
		m->ts[t].pf_end = end;
		m->r->summary.h2d_bytes += g->tensor[t].bytes;
	}
	xfer x = {.end = end,
		  .seq = m->seq++,
		  .t = t,
		  .dx = HOFF_NONE,
		  .tier = (int16_t)tier,
		  .store = store};
	if (!heap_push(m, x))
		return hoff_seterr(m->e, HOFF_ENOMEM, "out of memory");
	if (m->o->timeline) {
		hoff_event ev = {.start_ps = start, .end_ps = end, .step = step,
				 .id = t, .tier = (int16_t)tier,
				 .kind = store ? HOFF_EV_STORE
					       : HOFF_EV_PREFETCH,
				 .await = HOFF_NONE};
		if (hoff_timeline_event(&m->r->tl, ev) != HOFF_OK)
			return hoff_seterr(m->e, HOFF_ENOMEM, "out of memory");
	}
	return HOFF_OK;
}

static hoff_status prefetch(sim *m, int64_t i, int32_t t, int32_t tier)
{
	tstate *x = &m->ts[t];
	if (x->flags & (RES | PF)) {
		violate(m, i, t, HOFF_NONE, 4,
			x->flags & RES ? "tensor is resident already"
				       : "tensor is being prefetched already");
		return HOFF_OK;
	}
	bool copy = (x->valid >> tier) & 1;
	bool wait = !copy && (x->flags & ST) && x->st_tier == tier;
	if (!copy && !wait) {
		violate(m, i, t, HOFF_NONE, 4,
			"no valid copy on that tier and no store to it in "
			"flight");
		return HOFF_OK;
	}
	x->nblk++;
	x->flags = (uint8_t)((x->flags | PF) & ~(STORED | DROPPED));
	m->mem += m->g->tensor[t].bytes;
	m->alloc_step = i;
	m->alloc_tensor = t;
	return transfer(m, i, t, tier, false,
			wait		  ? x->st_end
			: m->duplex[tier] ? HOFF_NONE
					  : 0);
}

static hoff_status store(sim *m, int64_t i, int32_t t, int32_t tier)
{
	tstate *x = &m->ts[t];
	const hoff_tensor *tt = &m->g->tensor[t];
	if (!(x->flags & RES) || !hoff_tensor_offload(tt)) {
		violate(m, i, t, HOFF_NONE, 5,
			!(x->flags & RES) ? "tensor is not resident"
					  : "tensor has offload false");
		return HOFF_OK;
	}
	x->flags = (uint8_t)((x->flags & ~(RES | INV)) | ST | STORED);
	x->st_tier = (int16_t)tier;
	m->tier_use[tier] += tt->bytes;
	m->tier_step[tier] = i;
	m->tier_tensor[tier] = t;
	return transfer(m, i, t, tier, true, 0);
}

static hoff_status detach(sim *m, int64_t i, int32_t t)
{
	tstate *x = &m->ts[t];
	const hoff_tensor *tt = &m->g->tensor[t];
	const char *why = NULL;
	if (!(x->flags & RES))
		why = "tensor is not resident";
	else if (!hoff_tensor_offload(tt))
		why = "tensor has offload false";
	else if (x->valid == 0 &&
		 (hoff_tensor_persistent(tt) || x->last_c >= m->nc))
		why = hoff_tensor_persistent(tt)
			      ? "dirty persistent tensor would lose data"
			      : "dirty tensor has a later use";
	if (why) {
		violate(m, i, t, HOFF_NONE, 7, why);
		return HOFF_OK;
	}
	x->flags &= (uint8_t)~RES;
	x->nblk--;
	m->mem -= tt->bytes;
	if (m->o->timeline) {
		hoff_event ev = {.start_ps = m->now, .end_ps = m->now,
				 .step = i, .id = t, .tier = HOFF_NONE,
				 .kind = HOFF_EV_DETACH, .await = HOFF_NONE};
		if (hoff_timeline_event(&m->r->tl, ev) != HOFF_OK)
			return hoff_seterr(m->e, HOFF_ENOMEM, "out of memory");
	}
	return HOFF_OK;
}

/* (v2) Rule 11: frees a resident, offloadable, non-persistent tensor;
 * its tier copies stay valid. */
static hoff_status drop(sim *m, int64_t i, int32_t t)
{
	tstate *x = &m->ts[t];
	const hoff_tensor *tt = &m->g->tensor[t];
	const char *why = NULL;
	if (!(x->flags & RES))
		why = x->flags & PF ? "tensor is being prefetched, not resident"
		      : x->flags & ST ? "tensor is being stored, not resident"
				      : "tensor is not resident";
	else if (!hoff_tensor_offload(tt))
		why = "tensor has offload false";
	else if (hoff_tensor_persistent(tt))
		why = "tensor is persistent";
	if (why) {
		violate(m, i, t, HOFF_NONE, 11, why);
		return HOFF_OK;
	}
	x->flags = (uint8_t)((x->flags & ~RES) | DROPPED);
	x->nblk--;
	m->mem -= tt->bytes;
	if (m->o->timeline) {
		hoff_event ev = {.start_ps = m->now,
				 .end_ps = m->now,
				 .step = i,
				 .id = t,
				 .tier = HOFF_NONE,
				 .kind = HOFF_EV_DROP,
				 .await = HOFF_NONE};
		if (hoff_timeline_event(&m->r->tl, ev) != HOFF_OK)
			return hoff_seterr(m->e, HOFF_ENOMEM, "out of memory");
	}
	return HOFF_OK;
}

/* Frees tensor t after its last use (rule 6), and its tier copies. */
static void free_dead(sim *m, int32_t t)
{
	tstate *x = &m->ts[t];
	if (x->flags & RES) {
		x->flags &= (uint8_t)~RES;
		x->nblk--;
		m->mem -= m->g->tensor[t].bytes;
	}
	if (x->flags & ST)
		x->flags |= INV;
	release_copies(m, t);
}

/* Rule 1 for compute step i (op k): reports the inputs and updates that
 * no transfer will make resident, then waits for those being prefetched:
 * *ready is when the last completes (m->now if none), *await its tensor
 * (the first in list order among equal ends). */
static hoff_status wait_inputs(sim *m, int64_t i, int32_t k, int64_t *ready,
			       int32_t *await)
{
	const hoff_graph *g = m->g;
	bool pending = false; /* a duplex prefetch: its end is not known */
	m->npfw = 0;
	for (int u = HOFF_USE_IN; u <= HOFF_USE_UPD; u++) {
		const int32_t *lst;
		int64_t nl = hoff_op_list(g, k, (hoff_use)u, &lst);
		for (int64_t j = 0; j < nl; j++) {
			tstate *x = &m->ts[lst[j]];
			if (x->flags & RES)
				continue;
			if (x->flags & PF) {
				if (!hoff_grow((void **)&m->pfw, &m->pfw_cap,
					       m->npfw + 1, sizeof *m->pfw))
					return hoff_seterr(m->e, HOFF_ENOMEM,
							   "out of memory");
				m->pfw[m->npfw++] = lst[j];
				pending |= x->pf_end == HOFF_NONE;
			} else if (x->flags & DROPPED) {
				violate(m, i, lst[j], k, 1,
					"input was dropped and is not re-made "
					"(no recompute, no prefetch)");
			} else if (x->flags & (ST | STORED)) {
				violate(m, i, lst[j], k, 5,
					"op uses a stored tensor not "
					"prefetched again");
			} else {
				violate(m, i, lst[j], k, 1,
					"op input is not resident and no "
					"prefetch is in flight");
			}
		}
	}
	/* A duplex prefetch ends when the events before it say: apply
	 * them in order until every awaited one has completed. */
	for (size_t j = 0; pending && j < m->npfw; j++)
		while (m->ts[m->pfw[j]].flags & PF)
			if (!pop_one(m, HOFF_PS_LIMIT) || m->st != HOFF_OK)
				return m->st != HOFF_OK
					       ? m->st
					       : hoff_seterr(m->e,
							     HOFF_EINTERNAL,
							     "a prefetch never "
							     "completes");
	*ready = m->now;
	*await = HOFF_NONE;
	for (size_t j = 0; j < m->npfw; j++) {
		int64_t end = m->ts[m->pfw[j]].pf_end;
		if (end > *ready) {
			*ready = end;
			*await = m->pfw[j];
		}
	}
	return HOFF_OK;
}

/* (v2) Rule 10's checks of recompute step i (op k); false after a
 * violation (the step then does not run). */
static bool recompute_ok(sim *m, int64_t i, int32_t k)
{
	const hoff_graph *g = m->g;
	if (!hoff_op_recomputable(&g->op[k])) {
		violate(m, i, HOFF_NONE, k, 10, "op is not recomputable");
		return false;
	}
	for (int u = HOFF_USE_IN; u <= HOFF_USE_OUT; u++) {
		const int32_t *lst;
		int64_t nl = hoff_op_list(g, k, (hoff_use)u, &lst);
		for (int64_t j = 0; j < nl; j++) {
			const tstate *x = &m->ts[lst[j]];
			if (x->upd_op > k) {
				violate(m, i, lst[j], k, 10,
					u == HOFF_USE_OUT
						? "output updated since the "
						  "op's own step"
						: "input updated since the "
						  "op's own step");
				return false;
			}
			if (u == HOFF_USE_OUT && (x->flags & PF)) {
				violate(m, i, lst[j], k, 10,
					"output is being prefetched");
				return false;
			}
		}
	}
	return true;
}

/* Allocates op k's outputs at the start of compute step i: all of them
 * for its own step; for a recompute (again) those not resident, which
 * keep the tier copies they had (rule 10). */
static void alloc_outputs(sim *m, int64_t i, int32_t k, bool again)
{
	const hoff_graph *g = m->g;
	m->alloc_tensor = HOFF_NONE;
	for (int64_t j = g->out_off[k]; j < g->out_off[k + 1]; j++) {
		int32_t t = g->out[j];
		tstate *x = &m->ts[t];
		if (again && (x->flags & RES))
			continue;
		x->flags = (uint8_t)((x->flags | RES) & ~(STORED | DROPPED));
		x->nblk++;
		m->mem += g->tensor[t].bytes;
		m->alloc_tensor = t;
	}
	m->alloc_step = i;
}

/* Compute step i: op k's own step, or (again) a recompute of it. */
static hoff_status run_op(sim *m, int64_t i, int32_t k, bool again)
{
	const hoff_graph *g = m->g;
	const hoff_op *op = &g->op[k];
	int64_t ready = m->now, fin = m->now;
	int32_t await = HOFF_NONE;
	if (again && !recompute_ok(m, i, k))
		return HOFF_OK;
	hoff_status st = wait_inputs(m, i, k, &ready, &await);
	if (st != HOFF_OK)
		return st;
	if (m->r->op_start_ps && !again)
		m->r->op_start_ps[k] = ready;
	if (op->time_ps >= HOFF_PS_LIMIT - ready)
		return hoff_seterr(m->e, HOFF_EINPUT,
				   "steps[%lld] \"%s\": op ends at or after "
				   "2^62 ps",
				   (long long)i, op->id);
	drain(m, ready);
	advance(m, ready);
	if (m->o->timeline) {
		hoff_event ev = {.start_ps = fin, .end_ps = ready, .step = i,
				 .id = k, .tier = HOFF_NONE,
				 .kind = HOFF_EV_STALL, .await = await};
		if (ready > fin && hoff_timeline_event(&m->r->tl, ev))
			return hoff_seterr(m->e, HOFF_ENOMEM, "out of memory");
		ev.kind = again ? HOFF_EV_RECOMPUTE : HOFF_EV_OP;
		ev.await = HOFF_NONE;
		ev.start_ps = ready;
		ev.end_ps = ready + op->time_ps;
		if (hoff_timeline_event(&m->r->tl, ev))
			return hoff_seterr(m->e, HOFF_ENOMEM, "out of memory");
	}
	/* Start: outputs and workspace allocated, updates dirty. */
	alloc_outputs(m, i, k, again);
	for (int64_t j = g->upd_off[k]; j < g->upd_off[k + 1]; j++) {
		int32_t t = g->upd[j];
		release_copies(m, t);
		if (m->ts[t].flags & ST)
			m->ts[t].flags |= INV;
		m->ts[t].upd_op = k;
	}
	m->ws = op->workspace_bytes;
	m->mem += m->ws;
	if (again)
		m->r->summary.recompute_ps += op->time_ps;
	else
		m->r->summary.compute_ps += op->time_ps;
	/* Finish: rule 6. */
	int64_t end = ready + op->time_ps;
	if (end > m->end_ps)
		m->end_ps = end;
	drain(m, end);
	advance(m, end);
	m->mem -= m->ws;
	m->ws = 0;
	int64_t c = m->nc++;
	if (!again && m->r->op_start_ps)
		m->r->op_start_ps[k + 1] = end;
	for (int u = 0; u < 3; u++) {
		const int32_t *lst;
		int64_t nl = hoff_op_list(g, k, (hoff_use)u, &lst);
		for (int64_t j = 0; j < nl; j++) {
			const hoff_tensor *t = &g->tensor[lst[j]];
			const tstate *x = &m->ts[lst[j]];
			if (!hoff_tensor_persistent(t) && x->last_c <= c &&
			    (x->nblk || x->valid || (x->flags & ST)))
				free_dead(m, lst[j]);
		}
	}
	return HOFF_OK;
}

/* Each tensor's last compute step (rule 6): its last op, or with
 * recompute steps (which read their op's inputs) the last compute step
 * in step order that reads or updates it. */
static void last_uses(sim *m)
{
	const hoff_graph *g = m->g;
	const hoff_sched *s = m->s;
	bool re = false;
	for (int32_t t = 0; t < g->ntensors; t++) {
		m->ts[t].last_c = g->tensor[t].last_use;
		m->ts[t].upd_op = HOFF_NONE;
	}
	for (int64_t i = 0; i < s->nsteps && !re; i++)
		re = s->step[i].kind == HOFF_STEP_RECOMPUTE;
	int64_t c = 0;
	for (int64_t i = 0; re && i < s->nsteps; i++) {
		const hoff_step *p = &s->step[i];
		if (p->kind != HOFF_STEP_OP && p->kind != HOFF_STEP_RECOMPUTE)
			continue;
		for (int u = HOFF_USE_IN; u <= HOFF_USE_UPD; u++) {
			const int32_t *lst;
			int64_t nl = hoff_op_list(g, p->id, (hoff_use)u, &lst);
			for (int64_t j = 0; j < nl; j++)
				m->ts[lst[j]].last_c = c;
		}
		c++;
	}
}

static hoff_status init(sim *m)
{
	const hoff_graph *g = m->g;
	hoff_sim_result *r = m->r;
	size_t nt = (size_t)g->ntiers;
	hoff_sim_ws *w = m->o->ws;
	size_t ntensors = (size_t)g->ntensors;
	if (!w) {
		m->ts = hoff_zalloc(ntensors, sizeof *m->ts);
	} else {
		if (w->ts_cap < ntensors + 1) {
			free(w->ts);
			w->ts_cap = 0;
			if ((w->ts = hoff_alloc(ntensors + 1, sizeof *w->ts)))
				w->ts_cap = ntensors + 1;
		}
		if ((m->ts = w->ts))
			memset(m->ts, 0, ntensors * sizeof *m->ts);
		m->heap = w->heap;
		m->heap_cap = w->heap_cap;
	}
	m->tier_use = hoff_zalloc(nt, sizeof *m->tier_use);
	m->chan_free = hoff_zalloc(2 * nt, sizeof *m->chan_free);
	m->duplex = hoff_zalloc(nt + 1, sizeof *m->duplex);
	m->qhead = hoff_alloc(2 * nt + 1, sizeof *m->qhead);
	m->qtail = hoff_alloc(2 * nt + 1, sizeof *m->qtail);
	m->tier_step = hoff_zalloc(nt, sizeof *m->tier_step);
	m->tier_tensor = hoff_zalloc(nt, sizeof *m->tier_tensor);
	r->viol = hoff_alloc(HOFF_SIM_MAXVIOL, sizeof *r->viol);
	if (m->o->op_times) {
		r->op_start_ps = hoff_zalloc((size_t)g->nops + 1,
					     sizeof *r->op_start_ps);
		if (!r->op_start_ps)
			return hoff_seterr(m->e, HOFF_ENOMEM, "out of memory");
	}
	if (!m->ts || !m->tier_use || !m->chan_free || !m->tier_step ||
	    !m->tier_tensor || !r->viol || !m->duplex || !m->qhead || !m->qtail)
		return hoff_seterr(m->e, HOFF_ENOMEM, "out of memory");
	for (size_t i = 0; i < nt; i++) {
		m->duplex[i] = g->tier[i].h2d_duplex_ppm != HOFF_DUPLEX_ONE ||
			       g->tier[i].d2h_duplex_ppm != HOFF_DUPLEX_ONE;
		m->qhead[2 * i] = m->qhead[2 * i + 1] = HOFF_NONE;
		m->qtail[2 * i] = m->qtail[2 * i + 1] = HOFF_NONE;
	}
	last_uses(m);
	m->alloc_step = HOFF_NONE;
	m->alloc_tensor = HOFF_NONE;
	for (size_t i = 0; i < nt; i++) {
		m->tier_step[i] = HOFF_NONE;
		m->tier_tensor[i] = HOFF_NONE;
	}
	/* Start state: graph inputs on their home, produced ones nowhere. */
	for (int32_t t = 0; t < g->ntensors; t++) {
		const hoff_tensor *tt = &g->tensor[t];
		if (tt->producer != HOFF_NONE)
			continue;
		if (tt->home == HOFF_DEVICE) {
			m->ts[t].flags = RES;
			m->ts[t].nblk = 1;
			m->mem += tt->bytes;
		} else {
			m->ts[t].valid = (uint64_t)1 << tt->home;
			m->tier_use[tt->home] += tt->bytes;
			if (m->tier_tensor[tt->home] == HOFF_NONE)
				m->tier_tensor[tt->home] = t;
		}
	}
	return HOFF_OK;
}

/* Rule 9: persistent state survives; (v2) in a repeat graph every
 * persistent graph input ends as it started. */
static void end_state(sim *m)
{
	const hoff_graph *g = m->g;
	for (int32_t t = 0; t < g->ntensors; t++) {
		const tstate *x = &m->ts[t];
		const hoff_tensor *tt = &g->tensor[t];
		if (!hoff_tensor_persistent(tt))
			continue;
		if (!(x->flags & RES) && x->valid == 0)
			violate(m, HOFF_NONE, t, HOFF_NONE, 9,
				"persistent tensor is neither resident "
				"nor on a tier at the end");
		else if (!g->repeat || tt->producer != HOFF_NONE)
			continue;
		else if (tt->home == HOFF_DEVICE && !(x->flags & RES))
			violate(m, HOFF_NONE, t, HOFF_NONE, 9,
				"repeat: device-homed state is not resident "
				"at the end");
		else if (tt->home != HOFF_DEVICE && (x->flags & RES))
			violate(m, HOFF_NONE, t, HOFF_NONE, 9,
				x->valid & ((uint64_t)1 << tt->home)
					? "repeat: tier-homed state is still "
					  "resident at the end (detach it)"
					: "repeat: tier-homed state is still "
					  "resident and dirty at the end (store "
					  "it back)");
		else if (tt->home != HOFF_DEVICE &&
			 !(x->valid & ((uint64_t)1 << tt->home)))
			violate(m, HOFF_NONE, t, HOFF_NONE, 9,
				"repeat: no valid copy on its home tier at "
				"the end");
	}
}

hoff_status hoff_sim_run(const hoff_graph *g, const hoff_sched *s,
			 const hoff_sim_opts *o, hoff_sim_result *r,
			 hoff_err *e)
{
	HOFF_REQUIRE(g && s && o && r);
	memset(r, 0, sizeof *r);
	r->valid = true;
	r->peak_ps = 0;
	r->budget_bytes = o->budget_bytes != HOFF_NONE ? o->budget_bytes
			  : s->budget_bytes != HOFF_NONE
				  ? s->budget_bytes
				  : g->device.memory_bytes;
	sim m = {.g = g, .s = s, .o = o, .r = r, .e = e};
	hoff_status st = init(&m);
	for (int64_t i = 0; st == HOFF_OK && i < s->nsteps; i++) {
		const hoff_step *p = &s->step[i];
		drain(&m, m.now); /* zero-length transfers just issued */
		switch (p->kind) {
		case HOFF_STEP_OP:
		case HOFF_STEP_RECOMPUTE:
			st = run_op(&m, i, p->id,
				    p->kind == HOFF_STEP_RECOMPUTE);
			break;
		case HOFF_STEP_PREFETCH:
			st = prefetch(&m, i, p->id, p->tier);
			break;
		case HOFF_STEP_STORE:
			st = store(&m, i, p->id, p->tier);
			break;
		case HOFF_STEP_DETACH:
			st = detach(&m, i, p->id);
			break;
		case HOFF_STEP_DROP:
			st = drop(&m, i, p->id);
			break;
		default:
			HOFF_REQUIRE(!"checked schedule");
		}
		if (st == HOFF_OK)
			st = m.st;
	}
	if (st == HOFF_OK) {
		drain(&m, HOFF_PS_LIMIT);
		finalize(&m);
		st = m.st;
	}
	if (st == HOFF_OK) {
		end_state(&m);
		r->summary.makespan_ps = m.end_ps;
		r->summary.stall_ps = m.end_ps - r->summary.compute_ps -
				      r->summary.recompute_ps;
	}
	if (o->ws) { /* kept for the next run */
		o->ws->heap = m.heap;
		o->ws->heap_cap = m.heap_cap;
	} else {
		free(m.ts);
		free(m.heap);
	}
	free(m.tier_use);
	free(m.chan_free);
	free(m.duplex);
	free(m.qhead);
	free(m.qtail);
	free(m.dx);
	free(m.pfw);
	free(m.tier_step);
	free(m.tier_tensor);
	if (st != HOFF_OK) /* an error leaves r owning nothing */
		hoff_sim_result_free(r);
	return st;
}

void hoff_sim_result_free(hoff_sim_result *r)
{
	if (!r)
		return;
	free(r->viol);
	free(r->snap);
	free(r->op_start_ps);
	hoff_timeline_free(&r->tl);
	memset(r, 0, sizeof *r);
}

void hoff_violation_format(const hoff_graph *g, const hoff_sched *s,
			   const hoff_violation *v, char *buf, size_t len)
{
	static const char *const kinds[] = {"op",     "prefetch",  "store",
					    "detach", "recompute", "drop"};
	char qn[512], qo[512]; /* ids escaped: one may hold '"' */
	const char *name = hoff_escape_id(qn, sizeof qn,
					  v->tensor != HOFF_NONE
						  ? g->tensor[v->tensor].id
					  : v->op != HOFF_NONE ? g->op[v->op].id
							       : "");
	if (v->step == HOFF_NONE) {
		snprintf(buf, len, "end: \"%s\": rule %d: %s", name, v->rule,
			 v->why);
		return;
	}
	const hoff_step *p = &s->step[v->step];
	if ((p->kind == HOFF_STEP_OP || p->kind == HOFF_STEP_RECOMPUTE) &&
	    v->tensor != HOFF_NONE)
		snprintf(buf, len, "steps[%lld] %s \"%s\": \"%s\": rule %d: %s",
			 (long long)v->step, kinds[p->kind],
			 hoff_escape_id(qo, sizeof qo, g->op[p->id].id), name,
			 v->rule, v->why);
	else
		snprintf(buf, len, "steps[%lld] %s \"%s\": rule %d: %s",
			 (long long)v->step, kinds[p->kind], name, v->rule,
			 v->why);
}
