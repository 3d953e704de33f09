/* recompute.c: see recompute.h.
 * Cost: O(ops + events + list entries + tensors) to build (g2's arrays
 * sized once and filled in order, no names hashed) and to map, plus the
 * graph's own finish; a legality check is a binary search of each
 * input's and output's updaters. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recompute.h"

hoff_status hoff_rc_plan_push(hoff_rc_plan *p, int32_t op, int32_t before,
			      const int32_t *out, int32_t n)
{
	if (p->nev == p->cap) {
		int64_t cap = p->cap ? 2 * p->cap : 64;
		hoff_rc_event *ev = realloc(p->ev, (size_t)cap * sizeof *ev);
		if (!ev)
			return HOFF_ENOMEM;
		p->ev = ev;
		p->cap = cap;
	}
	if (p->nout + n > p->out_cap) {
		int64_t cap = p->out_cap ? 2 * p->out_cap : 64;
		while (cap < p->nout + n)
			cap *= 2;
		int32_t *o = realloc(p->out, (size_t)cap * sizeof *o);
		if (!o)
			return HOFF_ENOMEM;
		p->out = o;
		p->out_cap = cap;
	}
	if (n)
		memcpy(p->out + p->nout, out, (size_t)n * sizeof *out);
	p->ev[p->nev++] = (hoff_rc_event){
		.op = op, .before = before, .out_off = p->nout, .nout = n};
	p->nout += n;
	return HOFF_OK;
}

void hoff_rc_plan_free(hoff_rc_plan *p)
{
	free(p->ev);
	free(p->out);
	memset(p, 0, sizeof *p);
}

hoff_status hoff_rc_updaters(const hoff_graph *g, int64_t **off, int32_t **ops)
{
	size_t nt = (size_t)g->ntensors;
	int64_t nu = g->nops ? g->upd_off[g->nops] : 0;
	*off = hoff_zalloc(nt + 2, sizeof **off);
	*ops = hoff_alloc((size_t)nu + 1, sizeof **ops);
	int64_t *fill = hoff_alloc(nt + 1, sizeof *fill);
	if (!*off || !*ops || !fill) {
		free(fill);
		return HOFF_ENOMEM;
	}
	for (int64_t j = 0; j < nu; j++)
		(*off)[g->upd[j] + 1]++;
	for (size_t t = 0; t < nt; t++)
		(*off)[t + 1] += (*off)[t];
	memcpy(fill, *off, nt * sizeof *fill);
	for (int32_t k = 0; k < g->nops; k++) /* ascending by op */
		for (int64_t j = g->upd_off[k]; j < g->upd_off[k + 1]; j++)
			(*ops)[fill[g->upd[j]]++] = k;
	free(fill);
	return HOFF_OK;
}

/* Whether some op in (p, k) updates t. */
static bool updated_between(const int64_t *off, const int32_t *ops, int32_t t,
			    int32_t p, int32_t k)
{
	int64_t lo = off[t], hi = off[t + 1];
	while (lo < hi) { /* first updater > p */
		int64_t mid = lo + (hi - lo) / 2;
		if (ops[mid] <= p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < off[t + 1] && ops[lo] < k;
}

bool hoff_rc_legal(const hoff_graph *g, const int64_t *upd_off,
		   const int32_t *upd_op, int32_t p, int32_t k)
{
	if (!hoff_op_recomputable(&g->op[p]) || p >= k)
		return false;
	for (int u = HOFF_USE_IN; u <= HOFF_USE_OUT; u++) {
		const int32_t *lst;
		int64_t n = hoff_op_list(g, p, (hoff_use)u, &lst);
		for (int64_t j = 0; j < n; j++)
			if (updated_between(upd_off, upd_op, lst[j], p, k))
				return false;
	}
	return true;
}

/* The build's state: g2's arrays are sized once (rc_sizes), then filled
 * in order. */
typedef struct rc_build {
	const hoff_graph *g;
	hoff_graph *g2;
	hoff_rc_graph *r;
	int32_t *cur; /* (g->ntensors) newest version of each tensor */
} rc_build;

/* Appends op k of g to g2 (a clone: an event with its re-made outputs
 * out[0..nout)); its lists name each tensor's newest version. */
static void add_op(rc_build *b, int32_t k, bool clone, const int32_t *out,
		   int32_t nout)
{
	const hoff_graph *g = b->g;
	hoff_graph *g2 = b->g2;
	int32_t k2 = g2->nops++;
	g2->op[k2] = g->op[k]; /* id and kind: g's strings */
	b->r->op_of[k2] = k;
	b->r->is_rc[k2] = clone;
	int64_t ni = g2->in_off[k2], nu = g2->upd_off[k2], no = g2->out_off[k2];
	const int32_t *lst;
	int64_t n = hoff_op_list(g, k, HOFF_USE_IN, &lst);
	for (int64_t j = 0; j < n; j++)
		g2->in[ni++] = b->cur[lst[j]];
	n = hoff_op_list(g, k, HOFF_USE_UPD, &lst);
	for (int64_t j = 0; j < n; j++)
		g2->upd[nu++] = b->cur[lst[j]];
	n = hoff_op_list(g, k, HOFF_USE_OUT, &lst);
	for (int64_t j = 0; j < n; j++) {
		int32_t t = lst[j], i = 0;
		while (clone && i < nout && out[i] != t)
			i++;
		if (!clone) {
			g2->out[no++] = t;
		} else if (i == nout) { /* kept: the clone reads it */
			g2->in[ni++] = b->cur[t];
		} else { /* a new version of t, g's id */
			int32_t v = g2->ntensors++;
			hoff_tensor *x = &g2->tensor[v];
			*x = g->tensor[t];
			x->producer = x->first_use = x->last_use = HOFF_NONE;
			b->r->t_of[v] = t;
			b->cur[t] = v;
			g2->out[no++] = v;
		}
	}
	g2->in_off[k2 + 1] = ni;
	g2->upd_off[k2 + 1] = nu;
	g2->out_off[k2 + 1] = no;
}

/* Allocates g2's arrays and r's maps for g and plan p: ops, tensors and
 * list entries counted exactly (a clone reads its kept outputs);
 * HOFF_ENOMEM. */
static hoff_status rc_alloc(rc_build *b, const hoff_rc_plan *p)
{
	const hoff_graph *g = b->g;
	hoff_graph *g2 = b->g2;
	hoff_rc_graph *r = b->r;
	size_t no = (size_t)g->nops + (size_t)p->nev + 2;
	size_t nt = (size_t)g->ntensors + (size_t)p->nout + 1;
	int64_t nl[3] = {0};
	if (g->nops) {
		nl[0] = g->in_off[g->nops];
		nl[1] = g->upd_off[g->nops];
		nl[2] = g->out_off[g->nops];
	}
	for (int64_t i = 0; i < p->nev; i++) {
		int32_t k = p->ev[i].op;
		nl[0] += (g->in_off[k + 1] - g->in_off[k]) +
			 (g->out_off[k + 1] - g->out_off[k]);
		nl[1] += g->upd_off[k + 1] - g->upd_off[k];
		nl[2] += g->out_off[k + 1] - g->out_off[k];
	}
	free(g2->in_off);
	free(g2->upd_off);
	free(g2->out_off);
	g2->in_off = hoff_zalloc(no, sizeof *g2->in_off);
	g2->upd_off = hoff_zalloc(no, sizeof *g2->upd_off);
	g2->out_off = hoff_zalloc(no, sizeof *g2->out_off);
	g2->op = hoff_alloc(no, sizeof *g2->op);
	g2->tensor = hoff_alloc(nt, sizeof *g2->tensor);
	g2->in = hoff_alloc((size_t)nl[0] + 1, sizeof *g2->in);
	g2->upd = hoff_alloc((size_t)nl[1] + 1, sizeof *g2->upd);
	g2->out = hoff_alloc((size_t)nl[2] + 1, sizeof *g2->out);
	r->op_of = hoff_alloc(no, sizeof *r->op_of);
	r->is_rc = hoff_alloc(no, sizeof *r->is_rc);
	r->t_of = hoff_alloc(nt, sizeof *r->t_of);
	b->cur = hoff_alloc((size_t)g->ntensors + 1, sizeof *b->cur);
	if (!g2->in_off || !g2->upd_off || !g2->out_off || !g2->op ||
	    !g2->tensor || !g2->in || !g2->upd || !g2->out || !r->op_of ||
	    !r->is_rc || !r->t_of || !b->cur)
		return HOFF_ENOMEM;
	g2->op_cap = no;
	g2->tensor_cap = nt;
	g2->in_cap = (size_t)nl[0] + 1;
	g2->upd_cap = (size_t)nl[1] + 1;
	g2->out_cap = (size_t)nl[2] + 1;
	return HOFF_OK;
}

/* g2's header, machine and g's tensors (same indices); HOFF_ENOMEM. */
static hoff_status copy_base(rc_build *b)
{
	const hoff_graph *g = b->g;
	hoff_graph *g2 = b->g2;
	g2->version = g->version;
	g2->repeat = g->repeat;
	g2->has_repeat = g->has_repeat;
	g2->device = g->device; /* names: g's strings */
	if (g->name && !(g2->name = hoff_strdup(g->name)))
		return HOFF_ENOMEM;
	if (g->ntiers) {
		g2->tier = hoff_alloc((size_t)g->ntiers, sizeof *g2->tier);
		if (!g2->tier)
			return HOFF_ENOMEM;
		memcpy(g2->tier, g->tier, (size_t)g->ntiers * sizeof *g->tier);
		g2->ntiers = g->ntiers;
		g2->tier_cap = (size_t)g->ntiers;
	}
	for (int32_t t = 0; t < g->ntensors; t++) {
		hoff_tensor *x = &g2->tensor[t];
		*x = g->tensor[t];
		x->producer = x->first_use = x->last_use = HOFF_NONE;
		b->r->t_of[t] = t;
		b->cur[t] = t;
	}
	g2->ntensors = g->ntensors;
	return HOFF_OK;
}

/* The drops (recompute.h): a version is dropped after the step that
 * last reads it (or makes it) when a later version of its tensor is
 * read. */
static hoff_status find_drops(hoff_rc_graph *r, int32_t nt)
{
	const hoff_graph *g2 = r->g2;
	int32_t nv = g2->ntensors;
	/* later_read[t]: some version of t after the one at hand is read,
	 * walking the versions backwards (they are made in index order) */
	uint8_t *later = hoff_zalloc((size_t)nt + 1, 1);
	int32_t *at = hoff_alloc((size_t)nv + 1, sizeof *at);
	r->drop_off = hoff_zalloc((size_t)g2->nops + 2, sizeof *r->drop_off);
	if (!later || !at || !r->drop_off) {
		free(later);
		free(at);
		return HOFF_ENOMEM;
	}
	int64_t nd = 0;
	for (int32_t v = nv; v-- > 0;) {
		int32_t t = r->t_of[v];
		const hoff_tensor *x = &g2->tensor[v];
		at[v] = HOFF_NONE;
		if (later[t] && x->producer != HOFF_NONE) {
			at[v] = x->last_use != HOFF_NONE ? x->last_use
							 : x->producer;
			r->drop_off[at[v] + 1]++;
			nd++;
		}
		if (x->first_use != HOFF_NONE)
			later[t] = 1;
	}
	for (int32_t k = 0; k < g2->nops; k++)
		r->drop_off[k + 1] += r->drop_off[k];
	r->drop = hoff_alloc((size_t)nd + 1, sizeof *r->drop);
	int64_t *fill = hoff_alloc((size_t)g2->nops + 1, sizeof *fill);
	if (r->drop && fill) {
		memcpy(fill, r->drop_off, (size_t)g2->nops * sizeof *fill);
		for (int32_t v = 0; v < nv; v++)
			if (at[v] != HOFF_NONE)
				r->drop[fill[at[v]]++] = r->t_of[v];
	}
	bool ok = r->drop && fill;
	free(fill);
	free(later);
	free(at);
	return ok ? HOFF_OK : HOFF_ENOMEM;
}

hoff_status hoff_rc_build(const hoff_graph *g, const hoff_rc_plan *p,
			  hoff_rc_graph *r, hoff_err *e)
{
	memset(r, 0, sizeof *r);
	rc_build b = {.g = g, .r = r};
	for (int64_t i = 0; i < p->nev; i++)
		if (p->ev[i].op < 0 || p->ev[i].op >= p->ev[i].before ||
		    p->ev[i].before >= g->nops ||
		    (i && p->ev[i].before < p->ev[i - 1].before))
			return hoff_seterr(e, HOFF_EINPUT,
					   "recompute plan: event %lld out of "
					   "order",
					   (long long)i);
	hoff_status st = HOFF_OK;
	if (!(r->g2 = b.g2 = hoff_graph_new()) || rc_alloc(&b, p) != HOFF_OK ||
	    copy_base(&b) != HOFF_OK) {
		st = hoff_seterr(e, HOFF_ENOMEM, "out of memory");
		goto out;
	}
	int64_t i = 0;
	for (int32_t k = 0; k < g->nops; k++) {
		for (; i < p->nev && p->ev[i].before == k; i++, r->nrec++)
			add_op(&b, p->ev[i].op, true, p->out + p->ev[i].out_off,
			       p->ev[i].nout);
		add_op(&b, k, false, NULL, 0);
	}
	st = hoff_graph_finish(b.g2, "recompute plan", e);
	if (st == HOFF_OK && find_drops(r, g->ntensors) != HOFF_OK)
		st = hoff_seterr(e, HOFF_ENOMEM, "out of memory");
out:
	free(b.cur);
	if (st != HOFF_OK)
		hoff_rc_graph_free(r);
	return st;
}

void hoff_rc_graph_free(hoff_rc_graph *r)
{
	hoff_graph_free(r->g2);
	free(r->op_of);
	free(r->is_rc);
	free(r->t_of);
	free(r->drop_off);
	free(r->drop);
	memset(r, 0, sizeof *r);
}

hoff_sched *hoff_rc_map(const hoff_rc_graph *r, const hoff_sched *s2)
{
	hoff_sched *s = hoff_sched_new();
	if (!s)
		return NULL;
	bool ok = true;
	s->version = r->nrec ? 2 : s2->version;
	s->budget_bytes = s2->budget_bytes;
	if (s2->graph && !(s->graph = hoff_strdup(s2->graph)))
		ok = false;
	if (ok && s2->policy && hoff_sched_set_policy(s, s2->policy) != HOFF_OK)
		ok = false;
	for (int64_t i = 0; ok && i < s2->nsteps; i++) {
		const hoff_step *st = &s2->step[i];
		int32_t id = st->id;
		hoff_step_kind kind = (hoff_step_kind)st->kind;
		bool compute = kind == HOFF_STEP_OP ||
			       kind == HOFF_STEP_RECOMPUTE;
		if (compute) {
			if (r->is_rc[id])
				kind = HOFF_STEP_RECOMPUTE;
			id = r->op_of[id];
		} else {
			id = r->t_of[id];
		}
		ok = hoff_sched_push(s, kind, id, st->tier) == HOFF_OK;
		for (int64_t j = compute ? r->drop_off[st->id] : 0;
		     ok && compute && j < r->drop_off[st->id + 1]; j++)
			ok = hoff_sched_push(s, HOFF_STEP_DROP, r->drop[j],
					     HOFF_NONE) == HOFF_OK;
	}
	if (!ok) {
		hoff_sched_free(s);
		return NULL;
	}
	return s;
}
