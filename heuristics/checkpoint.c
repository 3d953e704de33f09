/* checkpoint.c: see checkpoint.h.
 * A layer's ops (hoff_op_layer; ops without one belong to none) form runs
 * of consecutive ops: its first run is its forward F, its second its
 * backward B; a layer with one run is left alone, and so are its later
 * runs (an optimizer step). The stash: tensors F produces and B reads.
 * Each stash tensor that may be dropped (rule 11: not persistent, offload;
 * kind activation or other; read nowhere but in F and B, so a layer's
 * output and anything another layer reads are kept) is dropped after its
 * last use in F, and the ops of F that made it are recomputed right
 * before B's first op, in forward order. A recomputed op's input made in
 * F that would be gone by then (freed after its last forward use) is
 * re-made too, transitively, and dropped after its last forward use: a
 * later recompute's read would otherwise keep it resident (rule 6).
 * A layer whose re-run would break rule 10 (an op not recomputable, an
 * input or output updated since its op step) is left as none leaves it,
 * and the note says so. Tier-homed tensors: fetched at first use and
 * kept, sent home in a repeat graph after their last read (a recompute's
 * included), as policy none does.
 * Cost: O(runs log runs) for the sort, O(ops + list entries + uses) for
 * the rest. */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baselines.h"
#include "checkpoint.h"
#include "emit.h"

typedef hoff_layer_run run;

typedef struct ckpt {
	const hoff_graph *g;
	int32_t fs, fe, bs, be;	  /* this layer's F and B, [start, end) */
	int32_t stamp;		  /* this layer's mark in stamp_t, stamp_o */
	int32_t *stamp_t;	  /* (ntensors) in this layer's drop set */
	int32_t *stamp_o;	  /* (nops) in this layer's recompute set */
	int32_t *list_t, nlist_t; /* this layer's drop set */
	int32_t *list_o, nlist_o; /* this layer's recompute set */
	uint32_t *held;		  /* (ntensors) recompute reads (emit.h) */
	int32_t *drop_after;	  /* (ntensors) op after which t is dropped */
	uint8_t *rec;		  /* (nops) 1: recomputed before its B */
	int32_t *fwd; /* (2 nops) at B's first op: its F's [start, end) */
	int32_t ndrops, nrecs;
} ckpt;

static int by_layer(const void *a, const void *b)
{
	const run *x = a, *y = b;
	if (x->layer != y->layer)
		return x->layer < y->layer ? -1 : 1;
	return (x->start > y->start) - (x->start < y->start);
}

hoff_status hoff_layer_runs(const hoff_graph *g, hoff_layer_run **out,
			    int32_t *n)
{
	run *r = hoff_alloc((size_t)g->nops + 1, sizeof *r);
	*out = r;
	*n = 0;
	if (!r)
		return HOFF_ENOMEM;
	int32_t nr = 0;
	for (int32_t k = 0; k < g->nops; k++) {
		int64_t l = hoff_op_layer(g, k);
		if (l == HOFF_NONE)
			continue;
		if (nr && r[nr - 1].end == k && r[nr - 1].layer == l)
			r[nr - 1].end = k + 1;
		else
			r[nr++] = (run){.layer = l, .start = k, .end = k + 1};
	}
	qsort(r, (size_t)nr, sizeof *r, by_layer);
	*n = nr;
	return HOFF_OK;
}

static bool within(int32_t k, int32_t s, int32_t e)
{
	return k >= s && k < e;
}

/* Whether t may be dropped and re-made by a re-run of F. */
static bool droppable(const ckpt *c, int32_t t)
{
	const hoff_graph *g = c->g;
	const hoff_tensor *x = &g->tensor[t];
	if (hoff_tensor_persistent(x) || !hoff_tensor_offload(x) ||
	    (x->kind != HOFF_KIND_ACTIVATION && x->kind != HOFF_KIND_OTHER) ||
	    !within(x->producer, c->fs, c->fe))
		return false;
	for (int64_t j = g->use_off[t]; j < g->use_off[t + 1]; j++)
		if (!within(g->use[j], c->fs, c->fe) &&
		    !within(g->use[j], c->bs, c->be))
			return false;
	return true;
}

/* Whether an op after p and before B's first op updates t (rule 10). */
static bool updated_since(const ckpt *c, int32_t t, int32_t p)
{
	const hoff_graph *g = c->g;
	for (int64_t j = g->use_off[t]; j < g->use_off[t + 1]; j++) {
		int32_t u = g->use[j];
		if (u <= p || u >= c->bs)
			continue;
		const int32_t *lst;
		int64_t n = hoff_op_list(g, u, HOFF_USE_UPD, &lst);
		for (int64_t i = 0; i < n; i++)
			if (lst[i] == t)
				return true;
	}
	return false;
}

static void add_t(ckpt *c, int32_t t)
{
	c->stamp_t[t] = c->stamp;
	c->list_t[c->nlist_t++] = t;
}

/* The drop and recompute sets of the layer in c->fs .. c->be: 1 when
 * found, 0 when nothing is to be dropped, -1 (why in why) when a re-run
 * would break rule 10. */
static int layer_sets(ckpt *c, char *why, size_t len)
{
	const hoff_graph *g = c->g;
	c->stamp++;
	c->nlist_t = c->nlist_o = 0;
	for (int32_t k = c->fs; k < c->fe; k++)
		for (int64_t j = g->out_off[k]; j < g->out_off[k + 1]; j++) {
			int32_t t = g->out[j];
			if (droppable(c, t) && g->tensor[t].last_use >= c->bs)
				add_t(c, t);
		}
	for (int32_t i = 0; i < c->nlist_t; i++) {
		int32_t p = g->tensor[c->list_t[i]].producer;
		if (c->stamp_o[p] == c->stamp)
			continue;
		c->stamp_o[p] = c->stamp;
		c->list_o[c->nlist_o++] = p;
		if (!hoff_op_recomputable(&g->op[p])) {
			snprintf(why, len, "op \"%s\" is not recomputable",
				 g->op[p].id);
			return -1;
		}
		for (int u = HOFF_USE_IN; u <= HOFF_USE_OUT; u += 2) {
			const int32_t *lst;
			int64_t n = hoff_op_list(g, p, (hoff_use)u, &lst);
			for (int64_t j = 0; j < n; j++) {
				int32_t t = lst[j];
				if (updated_since(c, t, p)) {
					snprintf(why, len,
						 "\"%s\" is updated after op "
						 "\"%s\"",
						 g->tensor[t].id, g->op[p].id);
					return -1;
				}
				/* an input made in F and freed by then */
				if (u == HOFF_USE_IN &&
				    c->stamp_t[t] != c->stamp &&
				    g->tensor[t].last_use < c->bs &&
				    droppable(c, t))
					add_t(c, t);
			}
		}
	}
	return c->nlist_t > 0;
}

/* Records the layer's sets for the emission. */
static void layer_commit(ckpt *c)
{
	const hoff_graph *g = c->g;
	for (int32_t i = 0; i < c->nlist_t; i++) {
		int32_t t = c->list_t[i];
		int32_t last = g->tensor[t].producer;
		for (int64_t j = g->use_off[t]; j < g->use_off[t + 1]; j++)
			if (g->use[j] < c->fe && g->use[j] > last)
				last = g->use[j];
		c->drop_after[t] = last;
	}
	for (int32_t i = 0; i < c->nlist_o; i++) {
		int32_t p = c->list_o[i];
		c->rec[p] = 1;
		for (int64_t j = g->in_off[p]; j < g->in_off[p + 1]; j++)
			c->held[g->in[j]]++;
	}
	c->fwd[2 * c->bs] = c->fs;
	c->fwd[2 * c->bs + 1] = c->fe;
	c->ndrops += c->nlist_t;
	c->nrecs += c->nlist_o;
}

/* Finds the layers' F and B runs and plans each; the note says what it
 * did. HOFF_ENOMEM. */
static hoff_status plan_layers(ckpt *c, const char *name, char *note,
			       size_t len)
{
	const hoff_graph *g = c->g;
	run *r;
	int32_t nr;
	if (hoff_layer_runs(g, &r, &nr) != HOFF_OK)
		return HOFF_ENOMEM;
	int32_t npairs = 0, ndone = 0, nskip = 0;
	char why[256] = "", first[320] = "";
	for (int32_t i = 0; i + 1 < nr; i++) {
		if (r[i].layer != r[i + 1].layer ||
		    (i && r[i - 1].layer == r[i].layer))
			continue; /* not a layer's first run with a second */
		npairs++;
		c->fs = r[i].start, c->fe = r[i].end;
		c->bs = r[i + 1].start, c->be = r[i + 1].end;
		int found = layer_sets(c, why, sizeof why);
		if (found > 0) {
			layer_commit(c);
			ndone++;
		} else if (found < 0 && nskip++ == 0) {
			snprintf(first, sizeof first,
				 "; layer %lld skipped (%s)",
				 (long long)r[i].layer, why);
		}
	}
	free(r);
	if (!ndone)
		snprintf(note, len, "%s: %s: planned as %s%s", name,
			 npairs ? "no layer has activations to re-make"
				: "no layer has a forward and a backward run",
			 strcmp(name, "checkpoint") ? "reactive" : "none",
			 first);
	else
		snprintf(note, len,
			 "%s: %d of %d layers checkpointed, %d "
			 "recomputes, %d drops; %d skipped%s",
			 name, ndone, npairs, c->nrecs, c->ndrops, nskip,
			 first);
	return HOFF_OK;
}

/* A graph input homed on a tier: what checkpoint+reactive moves. */
static bool tier_homed(const hoff_graph *g, int32_t t)
{
	return g->tensor[t].producer == HOFF_NONE &&
	       g->tensor[t].home != HOFF_DEVICE;
}

/* checkpoint+reactive, after compute step k (an op, or a recompute of op
 * k before op next): evicts each tier-homed tensor it read or updated
 * unless op next reads it; rule 6 frees those no later step reads. */
static void evict_tier(ckpt *c, hoff_emit *m, int32_t k, int32_t next)
{
	const hoff_graph *g = c->g;
	HOFF_FOR_USES(g, k, t, {
		if (!tier_homed(g, t))
			continue;
		int32_t nu = hoff_tensor_next_use(g, t, next - 1);
		if (nu == next)
			continue;
		if (nu == HOFF_NONE && !c->held[t] &&
		    !hoff_tensor_persistent(&g->tensor[t]))
			continue; /* freed by rule 6 */
		hoff_emit_evict(m, t);
	});
}

/* The recomputes that stand before op k, if k starts a backward run. */
static void recompute_before(ckpt *c, hoff_emit *m, int32_t k, bool reactive)
{
	const hoff_graph *g = c->g;
	if (c->fwd[2 * k] == HOFF_NONE)
		return;
	for (int32_t p = c->fwd[2 * k]; p < c->fwd[2 * k + 1]; p++) {
		if (!c->rec[p])
			continue;
		if (reactive)
			HOFF_FOR_USES(g, p, t, hoff_emit_prefetch(m, t));
		hoff_emit_recompute(m, p);
		if (reactive)
			evict_tier(c, m, p, k);
	}
}

/* Writes the schedule: none's (or, reactive, reactive's for the
 * tier-homed tensors), with the layers' drops and recomputes. */
static void emit_all(ckpt *c, hoff_emit *m, bool reactive)
{
	const hoff_graph *g = c->g;
	m->held = c->held;
	for (int32_t k = 0; k < g->nops; k++) {
		recompute_before(c, m, k, reactive);
		HOFF_FOR_USES(g, k, t, {
			if (g->tensor[t].first_use == k ||
			    (reactive && tier_homed(g, t)))
				hoff_emit_prefetch(m, t);
		});
		hoff_emit_op(m, k);
		hoff_emit_home(m, k); /* (v2) a repeat graph's state */
		if (reactive)
			evict_tier(c, m, k, k + 1);
		for (int u = HOFF_USE_IN; u <= HOFF_USE_OUT; u += 2) {
			const int32_t *lst;
			int64_t n = hoff_op_list(g, k, (hoff_use)u, &lst);
			for (int64_t j = 0; j < n; j++)
				if (c->drop_after[lst[j]] == k) {
					bool ok = hoff_emit_drop(m, lst[j]);
					assert(ok);
					(void)ok;
					c->drop_after[lst[j]] = HOFF_NONE;
				}
		}
	}
	m->held = NULL;
}

hoff_status hoff_checkpoint_plan(const hoff_graph *g, bool reactive,
				 hoff_sched **out, char *note, size_t note_len,
				 hoff_err *e)
{
	*out = NULL;
	ckpt c = {.g = g};
	size_t nt = (size_t)g->ntensors + 1, no = (size_t)g->nops + 1;
	c.stamp_t = hoff_zalloc(nt, sizeof *c.stamp_t);
	c.stamp_o = hoff_zalloc(no, sizeof *c.stamp_o);
	c.list_t = hoff_alloc(nt, sizeof *c.list_t);
	c.list_o = hoff_alloc(no, sizeof *c.list_o);
	c.held = hoff_zalloc(nt, sizeof *c.held);
	c.drop_after = hoff_alloc(nt, sizeof *c.drop_after);
	c.rec = hoff_zalloc(no, sizeof *c.rec);
	c.fwd = hoff_alloc(2 * no, sizeof *c.fwd);
	hoff_status st = HOFF_ENOMEM;
	hoff_emit m;
	if (!c.stamp_t || !c.stamp_o || !c.list_t || !c.list_o || !c.held ||
	    !c.drop_after || !c.rec || !c.fwd)
		goto out;
	for (size_t i = 0; i < nt; i++)
		c.drop_after[i] = HOFF_NONE;
	for (size_t i = 0; i < 2 * no; i++)
		c.fwd[i] = HOFF_NONE;
	const char *name = reactive ? "checkpoint+reactive" : "checkpoint";
	if (plan_layers(&c, name, note, note_len) != HOFF_OK ||
	    hoff_emit_init(&m, g, name) != HOFF_OK)
		goto out;
	emit_all(&c, &m, reactive);
	*out = hoff_emit_finish(&m);
	st = *out ? HOFF_OK : HOFF_ENOMEM;
out:
	free(c.stamp_t);
	free(c.stamp_o);
	free(c.list_t);
	free(c.list_o);
	free(c.held);
	free(c.drop_after);
	free(c.rec);
	free(c.fwd);
	if (st != HOFF_OK)
		return hoff_seterr(e, st, "out of memory");
	return HOFF_OK;
}

int64_t hoff_recomputable_bytes(const hoff_graph *g, const int32_t *t,
				int64_t n)
{
	int64_t sum = 0;
	for (int64_t i = 0; i < n; i++) {
		const hoff_tensor *x = &g->tensor[t[i]];
		if (x->kind == HOFF_KIND_ACTIVATION &&
		    x->producer != HOFF_NONE &&
		    hoff_op_recomputable(&g->op[x->producer]))
			sum += x->bytes;
	}
	return sum;
}
