/* recompute_plan.c: which activations a plan re-makes (recompute_plan.h).
 * The layers: a layer's runs of consecutive ops, in step order, pair up:
 * a run and the layer's next run, when that one reads what the first
 * makes, are a forward F and its backward B (a training step's layer, or
 * one per step of a graph of several steps). Forward
 * ops: the F runs and the ops of no run before the first B. A tensor is
 * re-makeable when it is produced, not persistent, offload true, of kind
 * activation or other, never updated, and its producer is recomputable;
 * it is *dropped* (freed after its last forward read) when moreover an
 * op of an F run makes it, every op that reads it is a forward op or in a B
 * run, and it is not kept: with segments of s layers (in forward order),
 * the inputs of each segment's first layer (what its F reads that no op
 * of F makes) are kept.
 * Then, B by B in step order, right before B's first op: at the top of
 * a segment (its last layer, s > 1) the segment's other layer inputs are
 * re-made, lowest first, and stay (two-level recomputation); then every
 * tensor B reads that is not resident by then is re-made. Re-making t
 * re-runs its producer p after re-making p's inputs that are gone and
 * re-makeable (chains); an input that is gone and not re-makeable is
 * read anyway, so it stays resident until then (a hold); p's outputs
 * that are resident are read, not re-made. A re-made version made for
 * one B stays only as long as that B reads it. A re-run that would
 * break rule 10 (hoff_rc_legal) is not made: the tensor stays resident
 * from its last forward read instead.
 * Cost: O(ops + list entries + events) per plan; chains deeper than
 * RC_MAX_DEPTH are not followed. */
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "recompute_plan.h"

#define RC_MAX_DEPTH 2048

typedef hoff_layer_run pair; /* a run: ops [start, end) */

static int by_start(const void *a, const void *b)
{
	const int32_t *x = a, *y = b;
	return (x[0] > y[0]) - (x[0] < y[0]);
}

/* Whether a tensor may be re-made at all (see the header comment). */
static bool remakeable(const hoff_rc_layers *L, int32_t t)
{
	const hoff_graph *g = L->g;
	const hoff_tensor *x = &g->tensor[t];
	return x->producer != HOFF_NONE && !hoff_tensor_persistent(x) &&
	       hoff_tensor_offload(x) &&
	       (x->kind == HOFF_KIND_ACTIVATION ||
		x->kind == HOFF_KIND_OTHER) &&
	       L->upd_off[t] == L->upd_off[t + 1] &&
	       hoff_op_recomputable(&g->op[x->producer]);
}

/* Whether an op of run b reads a tensor an op of run f makes. */
static bool reads(const hoff_graph *g, const pair *b, const pair *f)
{
	for (int64_t j = g->in_off[b->start]; j < g->in_off[b->end]; j++) {
		int32_t p = g->tensor[g->in[j]].producer;
		if (p >= f->start && p < f->end)
			return true;
	}
	return false;
}

/* The F and B runs, sorted by F's start: into L->F (4 per pair). */
static hoff_status find_pairs(hoff_rc_layers *L)
{
	const hoff_graph *g = L->g;
	pair *r;
	int32_t nr;
	hoff_status st = hoff_layer_runs(g, &r, &nr);
	L->F = hoff_alloc(4 * ((size_t)g->nops + 1), sizeof *L->F);
	if (st != HOFF_OK || !L->F) {
		free(r);
		return HOFF_ENOMEM;
	}
	L->npair = 0;
	for (int32_t i = 0; i + 1 < nr; i++) {
		if (r[i].layer != r[i + 1].layer || !reads(g, &r[i + 1], &r[i]))
			continue;
		int32_t *f = L->F + 4 * L->npair++;
		f[0] = r[i].start, f[1] = r[i].end;
		f[2] = r[i + 1].start, f[3] = r[i + 1].end;
		i++;
	}
	free(r);
	qsort(L->F, (size_t)L->npair, 4 * sizeof *L->F, by_start);
	return HOFF_OK;
}

/* fwd, in_b, dropok and each layer's inputs. */
static hoff_status classify(hoff_rc_layers *L)
{
	const hoff_graph *g = L->g;
	int32_t n = g->nops, first_b = n;
	for (int32_t i = 0; i < L->npair; i++) {
		const int32_t *f = L->F + 4 * i;
		if (f[2] < first_b)
			first_b = f[2];
		for (int32_t k = f[0]; k < f[1]; k++)
			L->fwd[k] = 1;
		for (int32_t k = f[2]; k < f[3]; k++)
			L->in_b[k] = 1;
	}
	for (int32_t k = 0; k < first_b; k++)
		if (hoff_op_layer(g, k) == HOFF_NONE)
			L->fwd[k] = 1;
	for (int32_t t = 0; t < g->ntensors; t++) {
		const hoff_tensor *x = &g->tensor[t];
		bool ok = remakeable(L, t) && L->fwd[x->producer] &&
			  hoff_op_layer(g, x->producer) != HOFF_NONE;
		for (int64_t j = g->use_off[t]; ok && j < g->use_off[t + 1];
		     j++)
			ok = L->fwd[g->use[j]] || L->in_b[g->use[j]];
		L->dropok[t] = ok;
	}
	/* layer inputs: read by F, made before it by another op */
	L->in_off = hoff_zalloc((size_t)L->npair + 1, sizeof *L->in_off);
	int64_t cap = 0;
	for (int32_t i = 0; i < L->npair; i++)
		cap += g->in_off[L->F[4 * i + 1]] - g->in_off[L->F[4 * i]];
	L->in = hoff_alloc((size_t)cap + 1, sizeof *L->in);
	if (!L->in_off || !L->in)
		return HOFF_ENOMEM;
	int64_t m = 0;
	for (int32_t i = 0; i < L->npair; i++) {
		const int32_t *f = L->F + 4 * i;
		for (int64_t j = g->in_off[f[0]]; j < g->in_off[f[1]]; j++) {
			int32_t t = g->in[j], p = g->tensor[t].producer;
			if (p == HOFF_NONE || p >= f[0])
				continue;
			bool dup = false;
			for (int64_t q = L->in_off[i]; q < m && !dup; q++)
				dup = L->in[q] == t;
			if (!dup)
				L->in[m++] = t;
		}
		L->in_off[i + 1] = m;
	}
	return HOFF_OK;
}

hoff_status hoff_rc_layers_init(hoff_rc_layers *L, const hoff_graph *g)
{
	memset(L, 0, sizeof *L);
	L->g = g;
	size_t nt = (size_t)g->ntensors + 1, no = (size_t)g->nops + 1;
	L->fwd = hoff_zalloc(no, 1);
	L->in_b = hoff_zalloc(no, 1);
	L->dropok = hoff_zalloc(nt, 1);
	L->keep = hoff_zalloc(nt, 1);
	L->vkeep = hoff_zalloc(nt, 1);
	L->vgroup = hoff_zalloc(nt, sizeof *L->vgroup);
	L->outbuf = hoff_alloc(nt, sizeof *L->outbuf);
	if (!L->fwd || !L->in_b || !L->dropok || !L->keep || !L->vkeep ||
	    !L->vgroup || !L->outbuf ||
	    hoff_rc_updaters(g, &L->upd_off, &L->upd_op) != HOFF_OK ||
	    find_pairs(L) != HOFF_OK || classify(L) != HOFF_OK) {
		hoff_rc_layers_free(L);
		return HOFF_ENOMEM;
	}
	return HOFF_OK;
}

void hoff_rc_layers_free(hoff_rc_layers *L)
{
	free(L->F);
	free(L->fwd);
	free(L->in_b);
	free(L->dropok);
	free(L->keep);
	free(L->vkeep);
	free(L->vgroup);
	free(L->outbuf);
	free(L->upd_off);
	free(L->upd_op);
	free(L->in_off);
	free(L->in);
	memset(L, 0, sizeof *L);
}

/* Whether t's newest version is resident right before op b (group's). */
static bool alive(const hoff_rc_layers *L, int32_t t, int32_t b)
{
	const hoff_tensor *x = &L->g->tensor[t];
	if (x->producer == HOFF_NONE)
		return true;
	if (L->vgroup[t])
		return L->vkeep[t] || L->vgroup[t] == L->group;
	return !(L->dropok[t] && !L->keep[t]) && x->last_use >= b;
}

/* Re-makes t right before op b (see the header comment): false when a
 * re-run would break rule 10 or the chain is too deep. */
static hoff_status remake(hoff_rc_layers *L, hoff_rc_plan *P, int32_t t,
			  int32_t b, bool keep, int depth, bool *ok)
{
	const hoff_graph *g = L->g;
	int32_t p = g->tensor[t].producer;
	*ok = false;
	if (depth > RC_MAX_DEPTH ||
	    !hoff_rc_legal(g, L->upd_off, L->upd_op, p, b))
		return HOFF_OK;
	for (int64_t j = g->in_off[p]; j < g->in_off[p + 1]; j++) {
		int32_t x = g->in[j];
		if (alive(L, x, b) || !remakeable(L, x))
			continue; /* resident, or held until here */
		hoff_status st = remake(L, P, x, b, false, depth + 1, ok);
		if (st != HOFF_OK || !*ok)
			return st;
	}
	int32_t n = 0;
	for (int64_t j = g->out_off[p]; j < g->out_off[p + 1]; j++) {
		int32_t u = g->out[j];
		if (alive(L, u, b) || hoff_tensor_persistent(&g->tensor[u]))
			continue;
		L->outbuf[n++] = u;
		L->vgroup[u] = L->group;
		L->vkeep[u] = keep && u == t;
	}
	*ok = true;
	return hoff_rc_plan_push(P, p, b, L->outbuf, n);
}

/* Re-makes t before b when it is gone and re-makeable. */
static hoff_status need(hoff_rc_layers *L, hoff_rc_plan *P, int32_t t,
			int32_t b, bool keep)
{
	bool ok;
	if (alive(L, t, b) || !remakeable(L, t) ||
	    L->g->tensor[t].producer >= b)
		return HOFF_OK;
	return remake(L, P, t, b, keep, 0, &ok);
}

/* The B runs in step order: indices into L->F. */
static int32_t *b_order(const hoff_rc_layers *L)
{
	int32_t *o = hoff_alloc(2 * ((size_t)L->npair + 1), sizeof *o);
	if (!o)
		return NULL;
	for (int32_t i = 0; i < L->npair; i++) {
		o[2 * i] = L->F[4 * i + 2];
		o[2 * i + 1] = i;
	}
	qsort(o, (size_t)L->npair, 2 * sizeof *o, by_start);
	return o;
}

hoff_status hoff_rc_layers_plan(hoff_rc_layers *L, int32_t seg, hoff_rc_plan *P)
{
	const hoff_graph *g = L->g;
	memset(L->keep, 0, (size_t)g->ntensors + 1);
	memset(L->vkeep, 0, (size_t)g->ntensors + 1);
	memset(L->vgroup, 0, ((size_t)g->ntensors + 1) * sizeof *L->vgroup);
	L->group = 0;
	for (int32_t i = 0; i < L->npair; i += seg)
		for (int64_t j = L->in_off[i]; j < L->in_off[i + 1]; j++)
			L->keep[L->in[j]] = 1;
	int32_t *o = b_order(L);
	if (!o)
		return HOFF_ENOMEM;
	hoff_status st = HOFF_OK;
	for (int32_t q = 0; q < L->npair && st == HOFF_OK; q++) {
		int32_t i = o[2 * q + 1], b = L->F[4 * i + 2];
		L->group++;
		int32_t s0 = i - i % seg, top = s0 + seg - 1;
		if (top >= L->npair)
			top = L->npair - 1;
		for (int32_t j = s0 + 1; seg > 1 && i == top && j <= top; j++)
			for (int64_t x = L->in_off[j];
			     x < L->in_off[j + 1] && st == HOFF_OK; x++)
				st = need(L, P, L->in[x], b, true);
		for (int32_t k = b; k < L->F[4 * i + 3] && st == HOFF_OK; k++)
			for (int64_t x = g->in_off[k];
			     x < g->in_off[k + 1] && st == HOFF_OK; x++)
				st = need(L, P, g->in[x], b, false);
	}
	free(o);
	return st;
}
