/* candidates.c: the candidate intervals of each tensor (candidates.h);
 * O(uses) a tensor, O(touches) in all. */
#include "candidates.h"

#include <stdint.h>
#include <stdlib.h>

#include "analysis.h"

/* Op k (-1: none) updates tensor t. */
static bool updates(const hoff_graph *g, int32_t k, int32_t t)
{
	if (k < 0)
		return false;
	for (int64_t j = g->upd_off[k]; j < g->upd_off[k + 1]; j++)
		if (g->upd[j] == t)
			return true;
	return false;
}

bool hoff_repeat_state(const hoff_graph *g, int32_t t)
{
	const hoff_tensor *x = &g->tensor[t];
	return g->repeat && hoff_tensor_persistent(x) &&
	       x->producer == HOFF_NONE;
}

bool hoff_cand_goes_home(const hoff_graph *g, const hoff_cand *c)
{
	return c->b >= g->nops && g->tensor[c->t].home != HOFF_DEVICE &&
	       hoff_repeat_state(g, c->t);
}

size_t hoff_cand_room(const hoff_graph *g)
{
	int64_t most = 0;
	for (int32_t t = 0; t < g->ntensors; t++)
		if (g->use_off[t + 1] - g->use_off[t] > most)
			most = g->use_off[t + 1] - g->use_off[t];
	return (size_t)most + 2;
}

int32_t hoff_cand_tensor(const hoff_graph *g, const hoff_cand_rule *r,
			 int32_t t, hoff_cand *out)
{
	const hoff_tensor *x = &g->tensor[t];
	int64_t u0 = g->use_off[t], u1 = g->use_off[t + 1];
	bool homed = x->producer == HOFF_NONE && x->home != HOFF_DEVICE;
	int32_t tier = homed ? x->home : r->store_tier;
	int32_t n = 0;
	/* Never used, or nowhere to go. A result no op reads (a persistent
	 * output) still gets its tail: stored after its producer, it need
	 * not stay on the device to the end. */
	bool kept = x->producer != HOFF_NONE && hoff_tensor_persistent(x);
	if ((u0 == u1 && !kept) || tier == HOFF_NONE)
		return 0;
	hoff_cand base = {.t = t, .bytes = x->bytes, .tier = (int16_t)tier};
	base.fetch_ps = hoff_xfer_ps(g, tier, x->bytes, true);
	if (homed) {
		hoff_cand s = base;
		s.kind = HOFF_CAND_START;
		s.a = -1;
		s.b = g->use[u0];
		s.seg = n;
		out[n++] = s;
	}
	if (!hoff_tensor_movable(g, t))
		return n;
	bool small = x->bytes < r->small_below_bytes;
	/* (v2) a repeat graph's state: device-homed ones end resident,
	 * tier-homed ones always go home */
	bool state = hoff_repeat_state(g, t);
	/* Clean while it holds its home's copy, i.e. until updated; a copy
	 * made by a store of the plan is the emitter's to notice (it turns
	 * such a store into a detach). */
	int32_t prev = homed			  ? g->use[u0]
		       : x->producer != HOFF_NONE ? x->producer
						  : -1;
	bool clean = homed && !updates(g, prev, t);
	int32_t seg = HOFF_NONE; /* the dirty segment's first interval */
	for (int64_t i = homed ? u0 + 1 : u0; i <= u1; i++) {
		bool tail = i == u1;
		if (tail && (!hoff_tensor_persistent(x) || (state && !homed)))
			break;
		int32_t b = tail ? g->nops : g->use[i];
		/* Small tensors only take the free move: dropping a clean
		 * copy for good. */
		if ((b - prev - 1 >= HOFF_CAND_MIN_GAP_OPS &&
		     (!small || (tail && clean))) ||
		    (tail && state)) {
			hoff_cand c = base;
			c.a = prev;
			c.b = b;
			c.kind = clean ? HOFF_CAND_CLEAN : HOFF_CAND_DIRTY;
			c.store_ps =
				clean ? 0
				      : hoff_xfer_ps(g, tier, x->bytes, false);
			if (tail)
				c.fetch_ps = 0;
			if (!clean && seg == HOFF_NONE)
				seg = n;
			c.seg = clean ? n : seg;
			out[n++] = c;
		}
		if (!tail) {
			prev = b;
			if (updates(g, b, t)) {
				clean = false;
				seg = HOFF_NONE;
			}
		}
	}
	return n;
}

hoff_status hoff_cand_list(const hoff_graph *g, const hoff_cand_rule *r,
			   hoff_cand **out, size_t *n, hoff_err *e)
{
	*out = NULL;
	*n = 0;
	size_t room = hoff_cand_room(g), cap = 0, len = 0;
	hoff_cand *buf = hoff_alloc(room, sizeof *buf), *all = NULL;
	if (!buf)
		goto oom;
	for (int32_t t = 0; t < g->ntensors; t++) {
		int32_t k = hoff_cand_tensor(g, r, t, buf);
		if (k == 0)
			continue;
		/* seg is an int32 index into the list */
		if (len + (size_t)k > INT32_MAX ||
		    !hoff_grow((void **)&all, &cap, len + (size_t)k,
			       sizeof *all))
			goto oom;
		for (int32_t j = 0; j < k; j++) {
			all[len + (size_t)j] = buf[j];
			all[len + (size_t)j].seg += (int32_t)len;
		}
		len += (size_t)k;
	}
	free(buf);
	*out = all;
	*n = len;
	return HOFF_OK;
oom:
	free(buf);
	free(all);
	return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
}

int hoff_cand_cmp_a_t(const void *x, const void *y)
{
	const hoff_cand *a = x, *b = y;
	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	return (a->b > b->b) - (a->b < b->b);
}
