/* xplan.c: lowering a schedule for the executors (see xplan.h).
 *
 * Compute commands first: the schedule's op and (v2) recompute steps in
 * step order, with their predicted instants (an op's from the simulation's
 * op times, a recompute's from its timeline event) and each tensor's last
 * compute command (rule 6 frees by it: a later recompute reads its op's
 * inputs). Then three passes. (1) A walk of the steps in order, mirroring the
 * machine model's state (each tensor's current device block, content version,
 * and tier copies), creates the blocks with the moments and predicted instants
 * of their allocation and free, and records the data dependencies. (2) The
 * blocks' allocations and frees, sorted by predicted instant, go through
 * the arena (arena.h); at one instant a free comes before an allocation of
 * a later step, so the arena's peak is the simulator's (memory is measured
 * after all events of an instant), but never before the allocation of a
 * step its own block's users do not precede, so waits only point back. Each
 * allocation then waits for the users of the bytes it reuses. (3) The
 * dependencies are sorted per command and cut to one per channel (waiting
 * for a channel's latest transfer implies its earlier ones).
 * Cost: O((steps + list entries) log(steps + list entries)). */
#include "xplan.h"

#include <stdlib.h>
#include <string.h>

#include "arena.h"

#define HOST_ALIGN 64

typedef struct dep {
	int64_t ev; /* the waiting command */
	int64_t x;  /* the transfer it waits for */
} dep;

typedef struct slot {
	int64_t key; /* tensor * HOFF_MAX_TIERS + tier */
	int64_t off;
	int64_t last_w, last_r; /* last store into it, last prefetch out */
	uint32_t ver;
	bool written;
} slot;

typedef struct builder {
	const hoff_graph *g;
	const hoff_sched *s;
	const hoff_sim_result *r;
	hoff_xplan *p;
	hoff_err *e;
	dep *deps;
	size_t ndeps, deps_cap;
	size_t block_cap;
	slot *slot;
	int64_t nslots;
	int64_t *cur;   /* (ntensors) current block, HOFF_NONE */
	uint32_t *ver;  /* (ntensors) content version */
	int64_t *ws_blk; /* (nops) */
	int64_t *x_blk;  /* (nxfers) */
	int32_t *lastc;	 /* (ntensors) last compute command reading or
			    updating it, -1 when none */
} builder;

static hoff_status oom(builder *b)
{
	return hoff_seterr(b->e, HOFF_ENOMEM, "out of memory");
}

static int64_t new_block(builder *b, int32_t tensor, int32_t op,
			 int64_t bytes, hoff_moment at, int64_t ps, int64_t ev)
{
	hoff_xplan *p = b->p;
	if (p->nblocks >= INT32_MAX ||
	    !hoff_grow((void **)&p->block, &b->block_cap,
		       (size_t)p->nblocks + 1, sizeof *p->block))
		return HOFF_NONE;
	p->block[p->nblocks] = (hoff_xblock){
		.tensor = tensor, .op = op, .bytes = bytes, .off = HOFF_NONE,
		.alloc_at = at, .free_at = {0, HOFF_AT_NEVER},
		.alloc_ps = ps, .free_ps = HOFF_NONE, .alloc_ev = ev,
		.fill_x = HOFF_NONE, .read_x = HOFF_NONE, .last_op = HOFF_NONE};
	return p->nblocks++;
}

static void free_block(builder *b, int64_t blk, hoff_moment at, int64_t ps)
{
	b->p->block[blk].free_at = at;
	b->p->block[blk].free_ps = ps;
}

static bool add_dep(builder *b, int64_t ev, int64_t x)
{
	if (x == HOFF_NONE)
		return true;
	if (!hoff_grow((void **)&b->deps, &b->deps_cap, b->ndeps + 1,
		       sizeof *b->deps))
		return false;
	b->deps[b->ndeps++] = (dep){ev, x};
	return true;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static int64_t slot_key(int32_t t, int32_t tier)
{
	return (int64_t)t * HOFF_MAX_TIERS + tier;
}

static slot *slot_find(builder *b, int32_t t, int32_t tier)
{
	int64_t key = slot_key(t, tier), lo = 0, hi = b->nslots;
	while (lo < hi) {
		int64_t mid = lo + (hi - lo) / 2;
		if (b->slot[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	HOFF_REQUIRE(lo < b->nslots && b->slot[lo].key == key);
	return &b->slot[lo];
}

/* Host slots: one per (tensor, tier) that a home or a step names. */
static hoff_status make_slots(builder *b)
{
	const hoff_graph *g = b->g;
	hoff_xplan *p = b->p;
	int64_t n = p->nxfers + g->ntensors;
	int64_t *keys = hoff_alloc((size_t)n + 1, sizeof *keys), nk = 0;
	if (!keys)
		return oom(b);
	for (int32_t t = 0; t < g->ntensors; t++)
		if (g->tensor[t].producer == HOFF_NONE &&
		    g->tensor[t].home != HOFF_DEVICE)
			keys[nk++] = slot_key(t, g->tensor[t].home);
	for (int64_t x = 0; x < p->nxfers; x++)
		keys[nk++] = slot_key(p->xfer[x].tensor, p->xfer[x].tier);
	qsort(keys, (size_t)nk, sizeof *keys, cmp_i64);
	b->slot = hoff_alloc((size_t)nk + 1, sizeof *b->slot);
	if (!b->slot) {
		free(keys);
		return oom(b);
	}
	int64_t off = 0;
	for (int64_t i = 0; i < nk; i++) {
		if (i && keys[i] == keys[i - 1])
			continue;
		int64_t bytes = g->tensor[keys[i] / HOFF_MAX_TIERS].bytes;
		b->slot[b->nslots++] = (slot){.key = keys[i], .off = off,
					      .last_w = HOFF_NONE,
					      .last_r = HOFF_NONE};
		off += (bytes + HOST_ALIGN - 1) / HOST_ALIGN * HOST_ALIGN;
	}
	p->host_bytes = off;
	free(keys);
	return HOFF_OK;
}

/* Transfers in step order, with the simulator's times: the simulator
 * appends a transfer event at issue, so its i-th is transfer i. */
static hoff_status make_xfers(builder *b)
{
	const hoff_graph *g = b->g;
	const hoff_sched *s = b->s;
	hoff_xplan *p = b->p;
	for (int64_t i = 0; i < s->nsteps; i++)
		if (s->step[i].kind == HOFF_STEP_PREFETCH ||
		    s->step[i].kind == HOFF_STEP_STORE)
			p->nxfers++;
	p->xfer = hoff_zalloc((size_t)p->nxfers + 1, sizeof *p->xfer);
	b->x_blk = hoff_alloc((size_t)p->nxfers + 1, sizeof *b->x_blk);
	if (!p->xfer || !b->x_blk)
		return oom(b);
	int64_t x = 0;
	size_t ev = 0;
	for (int64_t i = 0; i < s->nsteps; i++) {
		const hoff_step *st = &s->step[i];
		if (st->kind != HOFF_STEP_PREFETCH &&
		    st->kind != HOFF_STEP_STORE)
			continue;
		hoff_xfer *xf = &p->xfer[x];
		xf->step = i;
		xf->tensor = st->id;
		xf->tier = st->tier;
		xf->store = st->kind == HOFF_STEP_STORE;
		xf->stream = 1 + 2 * st->tier + xf->store;
		xf->bytes = g->tensor[st->id].bytes;
		xf->dur_ps = hoff_xfer_ps(g, st->tier, xf->bytes, !xf->store);
		while (ev < b->r->tl.nev &&
		       b->r->tl.ev[ev].kind != HOFF_EV_PREFETCH &&
		       b->r->tl.ev[ev].kind != HOFF_EV_STORE)
			ev++;
		if (ev == b->r->tl.nev || b->r->tl.ev[ev].step != i)
			return hoff_seterr(b->e, HOFF_EINVALID,
					   "steps[%lld]: the simulation has no "
					   "matching transfer (was it run with "
					   "a timeline?)",
					   (long long)i);
		xf->pred_start_ps = b->r->tl.ev[ev].start_ps;
		xf->pred_end_ps = b->r->tl.ev[ev].end_ps;
		ev++;
		x++;
	}
	return HOFF_OK;
}

/* Instant at which recompute step i starts in r's timeline: its event
 * (the step's only one that is not a stall), HOFF_NONE when absent. */
static int64_t recompute_start(const hoff_sim_result *r, int64_t i)
{
	for (size_t j = 0; j < r->tl.nev; j++)
		if (r->tl.ev[j].step == i && r->tl.ev[j].kind != HOFF_EV_STALL)
			return r->tl.ev[j].start_ps;
	return HOFF_NONE;
}

/* The compute commands (p->op) with their list indices, durations and
 * predicted instants; the sizes of the offset arrays in *nin, *nout; and
 * each tensor's last compute command. */
static hoff_status make_comps(builder *b, size_t *nin, size_t *nout)
{
	const hoff_graph *g = b->g;
	const hoff_sched *s = b->s;
	hoff_xplan *p = b->p;
	int64_t n = 0;
	for (int64_t i = 0; i < s->nsteps; i++)
		n += s->step[i].kind == HOFF_STEP_OP ||
		     s->step[i].kind == HOFF_STEP_RECOMPUTE;
	if (n > INT32_MAX)
		return hoff_seterr(b->e, HOFF_EINVALID,
				   "more than 2^31 compute steps");
	p->nops = (int32_t)n;
	p->op = hoff_zalloc((size_t)n + 1, sizeof *p->op);
	b->ws_blk = hoff_alloc((size_t)n + 1, sizeof *b->ws_blk);
	b->lastc = hoff_alloc((size_t)g->ntensors + 1, sizeof *b->lastc);
	if (!p->op || !b->ws_blk || !b->lastc)
		return oom(b);
	for (int32_t t = 0; t < g->ntensors; t++)
		b->lastc[t] = -1;
	*nin = (size_t)g->in_off[g->nops];
	*nout = (size_t)g->out_off[g->nops];
	int32_t c = 0;
	for (int64_t i = 0; i < s->nsteps; i++) {
		const hoff_step *st = &s->step[i];
		if (st->kind != HOFF_STEP_OP && st->kind != HOFF_STEP_RECOMPUTE)
			continue;
		hoff_xop *o = &p->op[c];
		int32_t k = st->id;
		o->step = i;
		o->op = k;
		o->dur_ps = g->op[k].time_ps;
		o->upd_at = g->upd_off[k];
		if (st->kind == HOFF_STEP_OP) {
			o->in_at = g->in_off[k];
			o->out_at = g->out_off[k];
			o->pred_start_ps = b->r->op_start_ps[k];
		} else {
			o->recompute = 1;
			p->nrecompute++;
			o->in_at = (int64_t)*nin;
			o->out_at = (int64_t)*nout;
			*nin += (size_t)hoff_op_count(g, k, HOFF_USE_IN);
			*nout += (size_t)hoff_op_count(g, k, HOFF_USE_OUT);
			o->pred_start_ps = recompute_start(b->r, i);
			if (o->pred_start_ps == HOFF_NONE)
				return hoff_seterr(
					b->e, HOFF_EINVALID,
					"steps[%lld]: the simulation "
					"has no recompute event (was "
					"it run with a timeline?)",
					(long long)i);
		}
		o->pred_end_ps = o->pred_start_ps + o->dur_ps;
		for (int u = 0; u < 2; u++) {
			const int32_t *lst;
			int64_t nl = hoff_op_list(g, k, (hoff_use)u, &lst);
			for (int64_t j = 0; j < nl; j++)
				b->lastc[lst[j]] = c;
		}
		c++;
	}
	return HOFF_OK;
}

static hoff_status need_block(builder *b, int64_t step, int32_t t)
{
	if (b->cur[t] != HOFF_NONE)
		return HOFF_OK;
	return hoff_seterr(b->e, HOFF_EINVALID,
			   "steps[%lld]: tensor \"%s\" has no device block "
			   "(the schedule is not valid)",
			   (long long)step, b->g->tensor[t].id);
}

/* Compute command c at step i: its inputs and updates where they are,
 * its outputs (a recompute's: those not resident) and workspace in new
 * blocks, and rule 6's frees at its end. */
static hoff_status walk_op(builder *b, int64_t i, int32_t c)
{
	const hoff_graph *g = b->g;
	hoff_xplan *p = b->p;
	hoff_xop *o = &p->op[c];
	int32_t k = o->op;
	hoff_status st;
	for (int pass = 0; pass < 2; pass++) {
		const int64_t *off = pass ? g->upd_off : g->in_off;
		const int32_t *lst = pass ? g->upd : g->in;
		int64_t *blk = pass ? p->upd_dev : p->in_dev;
		int64_t at = pass ? o->upd_at : o->in_at;
		for (int64_t j = off[k]; j < off[k + 1]; j++) {
			int32_t t = lst[j];
			int64_t q = at + (j - off[k]);
			if ((st = need_block(b, i, t)) != HOFF_OK)
				return st;
			hoff_xblock *bl = &p->block[b->cur[t]];
			blk[q] = b->cur[t];
			bl->last_op = c;
			if (!pass)
				p->in_ver[q] = b->ver[t];
			if (!add_dep(b, c, bl->fill_x))
				return oom(b);
			if (pass)
				p->upd_ver[q] = ++b->ver[t];
		}
	}
	hoff_moment start = {c, HOFF_AT_OP_START}, end = {c, HOFF_AT_OP_END};
	for (int64_t j = g->out_off[k]; j < g->out_off[k + 1]; j++) {
		int32_t t = g->out[j];
		int64_t q = o->out_at + (j - g->out_off[k]);
		if (o->recompute && b->cur[t] != HOFF_NONE) {
			/* resident: it keeps its block and bytes (rule 10) */
			p->out_dev[q] = HOFF_NONE;
			p->block[b->cur[t]].last_op = c;
			continue;
		}
		int64_t nb = new_block(b, t, HOFF_NONE, g->tensor[t].bytes,
				       start, o->pred_start_ps, c);
		if (nb == HOFF_NONE)
			return oom(b);
		p->block[nb].last_op = c;
		p->out_dev[q] = nb;
		b->cur[t] = nb;
		if (!o->recompute)
			b->ver[t] = 0; /* a recompute re-makes the version held
					*/
	}
	b->ws_blk[c] = HOFF_NONE;
	if (g->op[k].workspace_bytes > 0) {
		int64_t nb = new_block(b, HOFF_NONE, k,
				       g->op[k].workspace_bytes, start,
				       o->pred_start_ps, c);
		if (nb == HOFF_NONE)
			return oom(b);
		p->block[nb].last_op = c;
		free_block(b, nb, end, o->pred_end_ps);
		b->ws_blk[c] = nb;
	}
	/* Rule 6: dead non-persistent tensors go when the command finishes. */
	for (int u = 0; u < 3; u++) {
		const int32_t *lst;
		int64_t nl = hoff_op_list(g, k, (hoff_use)u, &lst);
		for (int64_t j = 0; j < nl; j++) {
			int32_t t = lst[j];
			const hoff_tensor *tt = &g->tensor[t];
			if (!hoff_tensor_persistent(tt) && b->lastc[t] <= c &&
			    b->cur[t] != HOFF_NONE) {
				free_block(b, b->cur[t], end, o->pred_end_ps);
				b->cur[t] = HOFF_NONE;
			}
		}
	}
	return HOFF_OK;
}

static hoff_status walk(builder *b)
{
	const hoff_graph *g = b->g;
	const hoff_sched *s = b->s;
	hoff_xplan *p = b->p;
	hoff_status st;
	/* Time 0: device-homed graph inputs hold a block, tier-homed ones a
	 * valid copy of version 0. */
	for (int32_t t = 0; t < g->ntensors; t++) {
		const hoff_tensor *tt = &g->tensor[t];
		if (tt->producer != HOFF_NONE)
			continue;
		if (tt->home == HOFF_DEVICE) {
			b->cur[t] = new_block(b, t, HOFF_NONE, tt->bytes,
					      (hoff_moment){0, HOFF_AT_ZERO}, 0,
					      HOFF_NONE);
			if (b->cur[t] == HOFF_NONE)
				return oom(b);
		} else {
			slot *sl = slot_find(b, t, tt->home);
			sl->written = true;
		}
	}
	int32_t prev = HOFF_NONE; /* the last compute command before the
				     current step */
	int32_t c = 0;		  /* the next compute command */
	int64_t x = 0;
	for (int64_t i = 0; i < s->nsteps; i++) {
		const hoff_step *sp = &s->step[i];
		hoff_moment issue = prev == HOFF_NONE
					    ? (hoff_moment){0, HOFF_AT_ZERO}
					    : (hoff_moment){prev, HOFF_AT_OP_END};
		int64_t issue_ps = prev == HOFF_NONE ? 0 : p->op[prev].pred_end_ps;
		int32_t t = sp->id;
		if (sp->kind == HOFF_STEP_OP ||
		    sp->kind == HOFF_STEP_RECOMPUTE) {
			if ((st = walk_op(b, i, c)) != HOFF_OK)
				return st;
			prev = c++;
			continue;
		}
		if (sp->kind == HOFF_STEP_DETACH ||
		    sp->kind == HOFF_STEP_DROP) { /* freed at issue */
			if ((st = need_block(b, i, t)) != HOFF_OK)
				return st;
			free_block(b, b->cur[t], issue, issue_ps);
			b->cur[t] = HOFF_NONE;
			continue;
		}
		hoff_xfer *xf = &p->xfer[x];
		int64_t ev = hoff_xplan_xev(p, x);
		slot *sl = slot_find(b, t, sp->tier);
		xf->after_op = prev;
		xf->host_off = sl->off;
		if (sp->kind == HOFF_STEP_PREFETCH) {
			if (!sl->written)
				return hoff_seterr(b->e, HOFF_EINVALID,
						   "steps[%lld]: prefetch \"%s\" "
						   "from a tier that holds no "
						   "copy",
						   (long long)i, g->tensor[t].id);
			int64_t nb = new_block(b, t, HOFF_NONE,
					       g->tensor[t].bytes, issue,
					       issue_ps, ev);
			if (nb == HOFF_NONE || !add_dep(b, ev, sl->last_w))
				return oom(b);
			p->block[nb].fill_x = x;
			b->cur[t] = nb;
			b->x_blk[x] = nb;
			xf->version = sl->ver;
			sl->last_r = x;
		} else {
			if ((st = need_block(b, i, t)) != HOFF_OK)
				return st;
			int64_t blk = b->cur[t];
			if (!add_dep(b, ev, p->block[blk].fill_x) ||
			    !add_dep(b, ev, sl->last_r))
				return oom(b);
			p->block[blk].read_x = x;
			free_block(b, blk, (hoff_moment){x, HOFF_AT_XFER_END},
				   xf->pred_end_ps);
			b->cur[t] = HOFF_NONE;
			b->x_blk[x] = blk;
			xf->version = b->ver[t];
			xf->same = sl->written && sl->ver == b->ver[t];
			if (!xf->same) /* rule 4: only a new version waits */
				sl->last_w = x;
			sl->ver = b->ver[t];
			sl->written = true;
		}
		x++;
	}
	return HOFF_OK;
}

/* Step of event ev (an op or a transfer), -1 for HOFF_NONE. */
static int64_t ev_step(const hoff_xplan *p, int64_t ev)
{
	if (ev == HOFF_NONE)
		return -1;
	return ev < p->nops ? p->op[ev].step : p->xfer[ev - p->nops].step;
}

static int64_t max3(int64_t a, int64_t b, int64_t c)
{
	int64_t m = a > b ? a : b;
	return m > c ? m : c;
}

/* The last step among a block's allocation and users: its free sorts
 * after the allocations of that step and before those of later steps. */
static int64_t free_step(const hoff_xplan *p, const hoff_xblock *bl)
{
	int64_t s = max3(ev_step(p, bl->alloc_ev),
			 bl->fill_x == HOFF_NONE
				 ? -1
				 : p->xfer[bl->fill_x].step,
			 bl->read_x == HOFF_NONE
				 ? -1
				 : p->xfer[bl->read_x].step);
	int64_t u = bl->last_op == HOFF_NONE ? -1 : p->op[bl->last_op].step;
	return s > u ? s : u;
}

typedef struct bev {
	int64_t t, key, blk; /* key: 2 * step for an allocation, 2 * step + 1
				for a free */
} bev;

static int cmp_bev(const void *a, const void *b)
{
	const bev *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->blk > y->blk) - (x->blk < y->blk);
}

/* Allocation and free events of every block, timed by the given moments'
 * instants (at[] per block: alloc, free), sorted. */
static bev *block_events(const hoff_xplan *p, const int64_t *alloc_t,
			 const int64_t *free_t, size_t *n)
{
	bev *v = hoff_alloc(2 * (size_t)p->nblocks + 1, sizeof *v);
	if (!v)
		return NULL;
	size_t k = 0;
	for (int64_t i = 0; i < p->nblocks; i++) {
		const hoff_xblock *bl = &p->block[i];
		v[k++] = (bev){alloc_t[i], 2 * ev_step(p, bl->alloc_ev), i};
		if (bl->free_at.kind != HOFF_AT_NEVER)
			v[k++] = (bev){free_t[i], 2 * free_step(p, bl) + 1, i};
	}
	qsort(v, k, sizeof *v, cmp_bev);
	*n = k;
	return v;
}

static hoff_status place(builder *b)
{
	hoff_xplan *p = b->p;
	int64_t *at = hoff_alloc(2 * (size_t)p->nblocks + 1, sizeof *at);
	if (!at)
		return oom(b);
	for (int64_t i = 0; i < p->nblocks; i++) {
		at[i] = p->block[i].alloc_ps;
		at[p->nblocks + i] = p->block[i].free_ps;
	}
	size_t n;
	bev *v = block_events(p, at, at + p->nblocks, &n);
	free(at);
	hoff_arena *a = hoff_arena_new(p->align_bytes);
	hoff_status st = v && a ? HOFF_OK : oom(b);
	for (size_t i = 0; st == HOFF_OK && i < n; i++) {
		hoff_xblock *bl = &p->block[v[i].blk];
		if (v[i].key & 1) {
			st = hoff_arena_release(a, (int32_t)v[i].blk, bl->off,
						bl->bytes, b->e);
			continue;
		}
		st = hoff_arena_alloc(a, bl->bytes, &bl->off, b->e);
		if (st != HOFF_OK)
			break;
		if (hoff_arena_in_use(a) > p->plan_peak_bytes)
			p->plan_peak_bytes = hoff_arena_in_use(a);
		size_t np;
		const int32_t *prev = hoff_arena_prev(a, &np);
		for (size_t j = 0; j < np; j++) {
			const hoff_xblock *q = &p->block[prev[j]];
			if (bl->alloc_ev == HOFF_NONE) {
				st = hoff_seterr(b->e, HOFF_EINVALID,
						 "internal: a block at time 0 "
						 "reuses freed bytes");
				break;
			}
			if (!add_dep(b, bl->alloc_ev, q->fill_x) ||
			    !add_dep(b, bl->alloc_ev, q->read_x)) {
				st = oom(b);
				break;
			}
			if (bl->alloc_ev >= p->nops) {
				hoff_xfer *xf = &p->xfer[bl->alloc_ev - p->nops];
				if (q->last_op > xf->after_op)
					xf->after_op = q->last_op;
			}
		}
	}
	if (st == HOFF_OK)
		p->arena_bytes = hoff_arena_high_water(a);
	hoff_arena_free(a);
	free(v);
	return st;
}

static int cmp_dep(const void *a, const void *b)
{
	const dep *x = a, *y = b;
	if (x->ev != y->ev)
		return x->ev < y->ev ? -1 : 1;
	return (x->x > y->x) - (x->x < y->x);
}

/* Sorts the dependencies and keeps, per command, the latest transfer of
 * each other channel. */
static hoff_status compact(builder *b)
{
	hoff_xplan *p = b->p;
	if (b->ndeps) /* qsort(NULL, 0, ...) is undefined */
		qsort(b->deps, b->ndeps, sizeof *b->deps, cmp_dep);
	int64_t *last = hoff_alloc((size_t)p->nstreams, sizeof *last);
	int32_t *touched = hoff_alloc((size_t)p->nstreams, sizeof *touched);
	p->wait = hoff_alloc(b->ndeps + 1, sizeof *p->wait);
	if (!last || !touched || !p->wait) {
		free(last);
		free(touched);
		return oom(b);
	}
	for (int32_t i = 0; i < p->nstreams; i++)
		last[i] = HOFF_NONE;
	size_t d = 0;
	int64_t nev = p->nops + p->nxfers;
	hoff_status st = HOFF_OK;
	for (int64_t ev = 0; ev < nev && st == HOFF_OK; ev++) {
		bool is_op = ev < p->nops;
		int32_t own = is_op ? 0 : p->xfer[ev - p->nops].stream;
		int64_t own_step = ev_step(p, ev);
		int32_t nt = 0;
		for (; d < b->ndeps && b->deps[d].ev == ev; d++) {
			const hoff_xfer *w = &p->xfer[b->deps[d].x];
			if (w->step >= own_step) {
				st = hoff_seterr(b->e, HOFF_EINVALID,
						 "internal: steps[%lld] waits "
						 "for the later steps[%lld]",
						 (long long)own_step,
						 (long long)w->step);
				break;
			}
			if (w->stream == own)
				continue; /* earlier on one channel */
			if (last[w->stream] == HOFF_NONE)
				touched[nt++] = w->stream;
			last[w->stream] = b->deps[d].x;
		}
		int64_t *wo = is_op ? &p->op[ev].wait_off
				    : &p->xfer[ev - p->nops].wait_off;
		int32_t *nw = is_op ? &p->op[ev].nwait
				    : &p->xfer[ev - p->nops].nwait;
		*wo = p->nwaits;
		*nw = nt;
		for (int32_t j = 0; j < nt; j++) {
			p->wait[p->nwaits++] = last[touched[j]];
			last[touched[j]] = HOFF_NONE;
		}
	}
	free(last);
	free(touched);
	return st;
}

static void resolve(builder *b)
{
	const hoff_graph *g = b->g;
	hoff_xplan *p = b->p;
	int64_t nupd = g->upd_off[g->nops];
	for (int64_t j = 0; j < p->nin; j++)
		p->in_dev[j] = p->block[p->in_dev[j]].off;
	for (int64_t j = 0; j < nupd; j++)
		p->upd_dev[j] = p->block[p->upd_dev[j]].off;
	for (int64_t j = 0; j < p->nout; j++)
		if (p->out_dev[j] != HOFF_NONE) /* a recompute's resident one */
			p->out_dev[j] = p->block[p->out_dev[j]].off;
	for (int32_t k = 0; k < p->nops; k++)
		p->op[k].ws_off = b->ws_blk[k] == HOFF_NONE
					  ? HOFF_NONE
					  : p->block[b->ws_blk[k]].off;
	for (int64_t x = 0; x < p->nxfers; x++)
		p->xfer[x].dev_off = p->block[b->x_blk[x]].off;
}

static hoff_xregion region(int32_t t, int32_t tier, uint32_t v, int64_t off,
			   int64_t bytes)
{
	return (hoff_xregion){.tensor = t,
			      .tier = (int16_t)tier,
			      .version = v,
			      .off = off,
			      .bytes = bytes};
}

/* (v2) Rule 9 on a repeat graph: every persistent graph input ends home,
 * a device-homed one resident, a tier-homed one off the device with a
 * valid copy on its home tier; marks those final regions as its home.
 * HOFF_EINVALID naming the first that does not. */
static hoff_status homes(builder *b)
{
	const hoff_graph *g = b->g;
	hoff_xplan *p = b->p;
	for (int64_t i = 0; i < p->nfinal; i++) {
		hoff_xregion *f = &p->final[i];
		const hoff_tensor *tt = &g->tensor[f->tensor];
		if (tt->producer == HOFF_NONE && hoff_tensor_persistent(tt) &&
		    f->tier == tt->home)
			f->home = 1;
	}
	for (int32_t t = 0; t < g->ntensors; t++) {
		const hoff_tensor *tt = &g->tensor[t];
		if (tt->producer != HOFF_NONE || !hoff_tensor_persistent(tt))
			continue;
		bool home;
		if (tt->home == HOFF_DEVICE) {
			home = b->cur[t] != HOFF_NONE;
		} else {
			const slot *sl = slot_find(b, t, tt->home);
			home = b->cur[t] == HOFF_NONE && sl->written &&
			       sl->ver == b->ver[t];
		}
		if (!home)
			return hoff_seterr(b->e, HOFF_EINVALID,
					   "end: \"%s\" does not end home on "
					   "\"%s\" (rule 9: the schedule is "
					   "not valid for a repeat graph)",
					   tt->id,
					   tt->home == HOFF_DEVICE
						   ? "device"
						   : g->tier[tt->home].name);
	}
	return HOFF_OK;
}

/* Regions filled before the run and checked after it. */
static hoff_status regions(builder *b)
{
	const hoff_graph *g = b->g;
	hoff_xplan *p = b->p;
	size_t cap = (size_t)g->ntensors + (size_t)b->nslots + 1;
	p->init = hoff_alloc(cap, sizeof *p->init);
	p->final = hoff_alloc(cap, sizeof *p->final);
	if (!p->init || !p->final)
		return oom(b);
	for (int64_t i = 0; i < p->nblocks; i++) {
		const hoff_xblock *bl = &p->block[i];
		if (bl->alloc_ev != HOFF_NONE)
			break; /* the blocks held at time 0 come first */
		p->init[p->ninit++] =
			region(bl->tensor, HOFF_DEVICE, 0, bl->off, bl->bytes);
	}
	for (int64_t i = 0; i < b->nslots; i++) {
		int32_t t = (int32_t)(b->slot[i].key / HOFF_MAX_TIERS);
		int32_t tier = (int32_t)(b->slot[i].key % HOFF_MAX_TIERS);
		if (g->tensor[t].producer == HOFF_NONE &&
		    g->tensor[t].home == tier)
			p->init[p->ninit++] = region(t, tier, 0, b->slot[i].off,
						     g->tensor[t].bytes);
	}
	for (int32_t t = 0; t < g->ntensors; t++)
		if (b->cur[t] != HOFF_NONE)
			p->final[p->nfinal++] = region(t, HOFF_DEVICE,
						       b->ver[t],
						       p->block[b->cur[t]].off,
						       g->tensor[t].bytes);
	for (int64_t i = 0; i < b->nslots; i++) {
		int32_t t = (int32_t)(b->slot[i].key / HOFF_MAX_TIERS);
		if (b->slot[i].written && b->slot[i].ver == b->ver[t])
			p->final[p->nfinal++] = region(
				t, (int32_t)(b->slot[i].key % HOFF_MAX_TIERS),
				b->ver[t], b->slot[i].off, g->tensor[t].bytes);
	}
	return g->repeat ? homes(b) : HOFF_OK;
}

hoff_status hoff_xplan_build(const hoff_graph *g, const hoff_sched *s,
			     const hoff_sim_result *r, int64_t align_bytes,
			     hoff_xplan *p, hoff_err *e)
{
	HOFF_REQUIRE(g && s && r && p && align_bytes >= 1);
	memset(p, 0, sizeof *p);
	if (!r->valid || !r->op_start_ps)
		return hoff_seterr(e, HOFF_EINVALID,
				   "the schedule's simulation is not valid "
				   "or has no op times");
	p->g = g;
	p->nstreams = 1 + 2 * g->ntiers;
	p->align_bytes = align_bytes;
	builder b = {.g = g, .s = s, .r = r, .p = p, .e = e};
	size_t nin = 0, nupd = (size_t)g->upd_off[g->nops], nout = 0;
	hoff_status st = make_comps(&b, &nin, &nout);
	if (st == HOFF_OK) {
		p->in_dev = hoff_alloc(nin + 1, sizeof *p->in_dev);
		p->upd_dev = hoff_alloc(nupd + 1, sizeof *p->upd_dev);
		p->upd_ver = hoff_alloc(nupd + 1, sizeof *p->upd_ver);
		p->in_ver = hoff_alloc(nin + 1, sizeof *p->in_ver);
		p->out_dev = hoff_alloc(nout + 1, sizeof *p->out_dev);
		b.cur = hoff_alloc((size_t)g->ntensors + 1, sizeof *b.cur);
		b.ver = hoff_zalloc((size_t)g->ntensors + 1, sizeof *b.ver);
		if (!p->in_dev || !p->upd_dev || !p->upd_ver || !p->in_ver ||
		    !p->out_dev || !b.cur || !b.ver)
			st = oom(&b);
	}
	p->nin = (int64_t)nin;
	p->nout = (int64_t)nout;
	for (int32_t t = 0; st == HOFF_OK && t < g->ntensors; t++)
		b.cur[t] = HOFF_NONE;
	if (st == HOFF_OK)
		st = make_xfers(&b);
	if (st == HOFF_OK)
		st = make_slots(&b);
	if (st == HOFF_OK)
		st = walk(&b);
	if (st == HOFF_OK)
		st = place(&b);
	if (st == HOFF_OK)
		st = compact(&b);
	if (st == HOFF_OK) {
		resolve(&b);
		st = regions(&b);
	}
	free(b.deps);
	free(b.slot);
	free(b.cur);
	free(b.ver);
	free(b.ws_blk);
	free(b.x_blk);
	free(b.lastc);
	if (st != HOFF_OK)
		hoff_xplan_free(p);
	return st;
}

void hoff_xplan_free(hoff_xplan *p)
{
	if (!p)
		return;
	free(p->op);
	free(p->xfer);
	free(p->wait);
	free(p->in_dev);
	free(p->upd_dev);
	free(p->upd_ver);
	free(p->in_ver);
	free(p->out_dev);
	free(p->block);
	free(p->init);
	free(p->final);
	memset(p, 0, sizeof *p);
}

hoff_status hoff_xplan_replay(const hoff_xplan *p, int64_t *op_start,
			      int64_t *op_end, int64_t *x_start,
			      int64_t *x_end, hoff_err *e)
{
	int64_t *chan = hoff_zalloc((size_t)p->nstreams, sizeof *chan);
	if (!chan)
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	int64_t prev_end = 0, x = 0;
	for (int32_t k = 0; k <= p->nops; k++) {
		/* Transfers of the steps before op k, in step order. */
		for (int64_t xe = hoff_xplan_xfers_before(p, k, x); x < xe;
		     x++) {
			const hoff_xfer *xf = &p->xfer[x];
			int64_t t = chan[xf->stream];
			if (xf->after_op != HOFF_NONE && op_end[xf->after_op] > t)
				t = op_end[xf->after_op];
			for (int32_t j = 0; j < xf->nwait; j++)
				if (x_end[p->wait[xf->wait_off + j]] > t)
					t = x_end[p->wait[xf->wait_off + j]];
			x_start[x] = t;
			x_end[x] = chan[xf->stream] = t + xf->dur_ps;
		}
		if (k == p->nops)
			break;
		const hoff_xop *o = &p->op[k];
		int64_t t = prev_end;
		for (int32_t j = 0; j < o->nwait; j++)
			if (x_end[p->wait[o->wait_off + j]] > t)
				t = x_end[p->wait[o->wait_off + j]];
		op_start[k] = t;
		op_end[k] = prev_end = t + o->dur_ps;
	}
	free(chan);
	return HOFF_OK;
}

static int64_t moment_ps(hoff_moment m, const int64_t *op_start,
			 const int64_t *op_end, const int64_t *x_end)
{
	switch (m.kind) {
	case HOFF_AT_OP_START:
		return op_start[m.idx];
	case HOFF_AT_OP_END:
		return op_end[m.idx];
	case HOFF_AT_XFER_END:
		return x_end[m.idx];
	default:
		return 0;
	}
}

hoff_status hoff_xplan_memory(const hoff_xplan *p, const int64_t *op_start,
			      const int64_t *op_end, const int64_t *x_end,
			      hoff_timeline *tl, int64_t *peak, hoff_err *e)
{
	int64_t *at = hoff_alloc(2 * (size_t)p->nblocks + 1, sizeof *at);
	if (!at)
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	for (int64_t i = 0; i < p->nblocks; i++) {
		at[i] = moment_ps(p->block[i].alloc_at, op_start, op_end, x_end);
		at[p->nblocks + i] = moment_ps(p->block[i].free_at, op_start,
					       op_end, x_end);
	}
	size_t n;
	bev *v = block_events(p, at, at + p->nblocks, &n);
	free(at);
	if (!v)
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	int64_t use = 0, top = 0;
	hoff_status st = HOFF_OK;
	for (size_t i = 0; i < n && st == HOFF_OK; i++) {
		int64_t bytes = p->block[v[i].blk].bytes;
		use += (v[i].key & 1) ? -bytes : bytes;
		/* The sample at an instant is the state after all its events. */
		if (i + 1 == n || v[i + 1].t != v[i].t) {
			if (use > top)
				top = use;
			st = hoff_timeline_mem(tl, v[i].t, use);
		}
	}
	if (n == 0)
		st = hoff_timeline_mem(tl, 0, 0);
	free(v);
	if (st != HOFF_OK)
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	*peak = top;
	return HOFF_OK;
}
