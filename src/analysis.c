/* analysis.c: lower bound, totals and the closed-form no-offload memory
 * profile; all passes O(ops + tensors + list entries) times tiers. */
#include "analysis.h"

#include <stdlib.h>
#include <string.h>

int32_t hoff_tensor_lifetime(const hoff_graph *g, int32_t t)
{
	const hoff_tensor *x = &g->tensor[t];
	int32_t from = x->producer != HOFF_NONE ? x->producer : 0;
	int32_t to = x->last_use != HOFF_NONE ? x->last_use : x->producer;
	return to == HOFF_NONE ? 0 : to - from + 1;
}

bool hoff_tensor_movable(const hoff_graph *g, int32_t t)
{
	const hoff_tensor *x = &g->tensor[t];
	return hoff_tensor_offload(x) &&
	       (hoff_tensor_persistent(x) ||
		hoff_tensor_lifetime(g, t) > HOFF_SHORT_LIVED_OPS);
}

int64_t hoff_small_below(const hoff_graph *g, const int64_t *during)
{
	int64_t *own = NULL;
	if (!during) {
		if (!(own = hoff_alloc((size_t)g->nops + 1, sizeof *own)))
			return -1;
		hoff_analysis_profile(g, own);
		during = own;
	}
	int64_t peak = 0;
	for (int32_t k = 0; k < g->nops; k++)
		if (during[k] > peak)
			peak = during[k];
	free(own);
	return peak >> HOFF_SMALL_SHIFT;
}

/* (v2) FORMAT.md's repeat term, for a repeat graph: over tiers r and ops
 * k, P_k + W_k, P_k the compute of ops 0..k and W_k one d2h store of each
 * persistent graph input homed on r whose last update is by op k or
 * later. h: scratch (nops). */
static hoff_status repeat_bound(const hoff_graph *g, hoff_analysis *a,
				int64_t *h, hoff_err *e)
{
	int32_t *last = hoff_alloc((size_t)g->ntensors + 1, sizeof *last);
	if (!last)
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	for (int32_t t = 0; t < g->ntensors; t++)
		last[t] = HOFF_NONE;
	for (int32_t k = 0; k < g->nops; k++)
		for (int64_t j = g->upd_off[k]; j < g->upd_off[k + 1]; j++)
			last[g->upd[j]] = k;
	for (int32_t r = 0; r < g->ntiers; r++) {
		memset(h, 0, (size_t)g->nops * sizeof *h);
		for (int32_t t = 0; t < g->ntensors; t++) {
			const hoff_tensor *x = &g->tensor[t];
			if (x->producer == HOFF_NONE && x->home == r &&
			    hoff_tensor_persistent(x) && last[t] != HOFF_NONE)
				h[last[t]] +=
					hoff_xfer_ps(g, r, x->bytes, false);
		}
		/* k downwards: W_k grows, P_k shrinks; ties keep the
		 * lowest k */
		int64_t w = 0, p = a->compute_ps;
		for (int32_t k = g->nops - 1; k >= 0; k--) {
			w += h[k];
			if (w > 0 && (p + w > a->repeat_bound_ps ||
				      (p + w == a->repeat_bound_ps &&
				       a->rb_tier == r))) {
				a->repeat_bound_ps = p + w;
				a->rb_op = k;
				a->rb_tier = r;
			}
			p -= g->op[k].time_ps;
		}
	}
	free(last);
	return HOFF_OK;
}

/* FORMAT.md: max(compute, max over tiers and ops k of H_k + C_k), and in
 * a repeat graph of the repeat term P_k + W_k. */
static hoff_status lower_bound(const hoff_graph *g, hoff_analysis *a,
			       hoff_err *e)
{
	a->lower_bound_ps = a->compute_ps;
	a->lb_op = a->lb_tier = HOFF_NONE;
	a->lb_store = false;
	a->repeat_bound_ps = 0;
	a->rb_op = a->rb_tier = HOFF_NONE;
	if (g->ntiers == 0 || g->nops == 0)
		return HOFF_OK;
	int64_t *h = hoff_alloc((size_t)g->nops, sizeof *h);
	if (!h)
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	for (int32_t r = 0; r < g->ntiers; r++) {
		memset(h, 0, (size_t)g->nops * sizeof *h);
		for (int32_t t = 0; t < g->ntensors; t++) {
			const hoff_tensor *x = &g->tensor[t];
			if (x->producer == HOFF_NONE && x->home == r &&
			    x->first_use != HOFF_NONE)
				h[x->first_use] +=
					hoff_xfer_ps(g, r, x->bytes, true);
		}
		int64_t hk = 0, ck = a->compute_ps;
		for (int32_t k = 0; k < g->nops; k++) {
			hk += h[k];
			if (hk + ck > a->lower_bound_ps) {
				a->lower_bound_ps = hk + ck;
				a->lb_op = k;
				a->lb_tier = r;
			}
			ck -= g->op[k].time_ps;
		}
	}
	if (g->repeat) {
		hoff_status st = repeat_bound(g, a, h, e);
		if (st != HOFF_OK) {
			free(h);
			return st;
		}
		if (a->repeat_bound_ps > a->lower_bound_ps) {
			a->lower_bound_ps = a->repeat_bound_ps;
			a->lb_op = a->rb_op;
			a->lb_tier = a->rb_tier;
			a->lb_store = true;
		}
	}
	free(h);
	return HOFF_OK;
}

/* Memory with everything resident while live: graph inputs on the device
 * or used from a tier from time 0; op k adds outputs and workspace at its
 * start and frees workspace and dead non-persistent tensors at its end. */
static int64_t profile(const hoff_graph *g, int64_t *during, int32_t *peak_op)
{
	/* Time 0: the device-homed graph inputs and every prefetch (all
	 * allocated at issue); the first op waits if a transfer takes time. */
	int64_t mem = 0;
	bool waits = false;
	for (int32_t t = 0; t < g->ntensors; t++) {
		const hoff_tensor *x = &g->tensor[t];
		if (x->producer != HOFF_NONE)
			continue;
		if (x->home == HOFF_DEVICE) {
			mem += x->bytes;
		} else if (x->first_use != HOFF_NONE) {
			mem += x->bytes;
			waits |= hoff_xfer_ps(g, x->home, x->bytes, true) > 0;
		}
	}
	/* Memory is measured after every event of an instant (rule 8), so
	 * time 0 stands apart from the first op only when that op waits, and
	 * an op of 0 ps is seen only after its frees. */
	int64_t peak = waits ? mem : 0;
	*peak_op = HOFF_NONE;
	for (int32_t k = 0; k < g->nops; k++) {
		for (int64_t j = g->out_off[k]; j < g->out_off[k + 1]; j++)
			mem += g->tensor[g->out[j]].bytes;
		int64_t run = mem + g->op[k].workspace_bytes;
		if (during)
			during[k] = run;
		if (g->op[k].time_ps > 0 && run > peak) {
			peak = run;
			*peak_op = k;
		}
		/* Rule 6: free what no later op reads; an output nothing
		 * reads goes at once. A tensor in both inputs and updates is
		 * freed once, on its input entry. */
		for (int64_t j = g->out_off[k]; j < g->out_off[k + 1]; j++) {
			const hoff_tensor *x = &g->tensor[g->out[j]];
			if (x->last_use == HOFF_NONE &&
			    !hoff_tensor_persistent(x))
				mem -= x->bytes;
		}
		for (int64_t j = g->in_off[k]; j < g->in_off[k + 1]; j++) {
			const hoff_tensor *x = &g->tensor[g->in[j]];
			if (x->last_use == k && !hoff_tensor_persistent(x))
				mem -= x->bytes;
		}
		for (int64_t j = g->upd_off[k]; j < g->upd_off[k + 1]; j++) {
			const hoff_tensor *x = &g->tensor[g->upd[j]];
			bool dup = false;
			for (int64_t i = g->in_off[k]; i < g->in_off[k + 1]; i++)
				dup |= g->in[i] == g->upd[j];
			if (!dup && x->last_use == k &&
			    !hoff_tensor_persistent(x))
				mem -= x->bytes;
		}
	}
	return mem > peak ? mem : peak; /* the state after the last op */
}

static void closed_peak(const hoff_graph *g, hoff_analysis *a)
{
	a->closed_peak_bytes = profile(g, NULL, &a->closed_peak_op);
}

int64_t hoff_analysis_profile(const hoff_graph *g, int64_t *during)
{
	int32_t op;
	return profile(g, during, &op);
}

hoff_status hoff_analyze(const hoff_graph *g, hoff_analysis *a, hoff_err *e)
{
	memset(a, 0, sizeof *a);
	for (int32_t k = 0; k < g->nops; k++)
		a->compute_ps += g->op[k].time_ps;
	for (int32_t t = 0; t < g->ntensors; t++) {
		const hoff_tensor *x = &g->tensor[t];
		a->bytes_by_kind[x->kind] += x->bytes;
		a->count_by_kind[x->kind]++;
		a->total_bytes += x->bytes;
		if (x->producer == HOFF_NONE && x->home != HOFF_DEVICE)
			a->tier_homed_bytes += x->bytes;
		if (x->producer == HOFF_NONE && x->first_use == HOFF_NONE)
			a->nunused++;
	}
	closed_peak(g, a);
	return lower_bound(g, a, e);
}

hoff_status hoff_analysis_use(const hoff_graph *g, const hoff_analysis *given,
			      hoff_analysis *own, const hoff_analysis **an,
			      hoff_err *e)
{
	*an = given ? given : own;
	return given ? HOFF_OK : hoff_analyze(g, own, e);
}

hoff_sched *hoff_sched_noffload(const hoff_graph *g)
{
	hoff_sched *s = hoff_sched_new();
	if (!s || hoff_sched_set_policy(s, "no-offload") != HOFF_OK ||
	    (g->name && !(s->graph = hoff_strdup(g->name))))
		goto fail;
	for (int32_t t = 0; t < g->ntensors; t++) {
		const hoff_tensor *x = &g->tensor[t];
		if (x->producer == HOFF_NONE && x->home != HOFF_DEVICE &&
		    x->first_use != HOFF_NONE &&
		    hoff_sched_push(s, HOFF_STEP_PREFETCH, t, x->home))
			goto fail;
	}
	for (int32_t k = 0; k < g->nops; k++)
		if (hoff_sched_push(s, HOFF_STEP_OP, k, HOFF_NONE))
			goto fail;
	return s;
fail:
	hoff_sched_free(s);
	return NULL;
}

/* seen[t] == k: tensor t counted for op k already. */
hoff_status hoff_op_floor(const hoff_graph *g, int64_t *floor_b, int32_t *op,
			  hoff_err *e)
{
	int32_t *seen = hoff_alloc((size_t)g->ntensors + 1, sizeof *seen);
	if (!seen)
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	memset(seen, 0xff, ((size_t)g->ntensors + 1) * sizeof *seen);
	*floor_b = 0;
	*op = HOFF_NONE;
	for (int32_t k = 0; k < g->nops; k++) {
		int64_t need = g->op[k].workspace_bytes;
		for (int u = 0; u < 3; u++) {
			const int32_t *lst;
			int64_t nl = hoff_op_list(g, k, (hoff_use)u, &lst);
			for (int64_t j = 0; j < nl; j++) {
				if (seen[lst[j]] == k)
					continue;
				seen[lst[j]] = k;
				need += g->tensor[lst[j]].bytes;
			}
		}
		if (need > *floor_b) {
			*floor_b = need;
			*op = k;
		}
	}
	free(seen);
	return HOFF_OK;
}

int64_t hoff_floor_step(hoff_floor *f, const hoff_graph *g, const hoff_step *st)
{
	int64_t *sum, d;
	/* (v2) a recompute step is compute too; a duplex factor only slows
	 * a transfer, so its nominal duration stays a floor */
	if ((st->kind == HOFF_STEP_OP || st->kind == HOFF_STEP_RECOMPUTE) &&
	    st->id >= 0 && st->id < g->nops) {
		sum = &f->compute_ps;
		d = g->op[st->id].time_ps;
	} else if ((st->kind == HOFF_STEP_PREFETCH ||
		    st->kind == HOFF_STEP_STORE) &&
		   st->tier >= 0 && st->tier < g->ntiers && st->id >= 0 &&
		   st->id < g->ntensors) {
		bool in = st->kind == HOFF_STEP_PREFETCH;
		sum = &f->busy_ps[2 * st->tier + (in ? 0 : 1)];
		d = hoff_xfer_ps(g, st->tier, g->tensor[st->id].bytes, in);
	} else {
		return 0;
	}
	*sum = *sum > INT64_MAX - d ? INT64_MAX : *sum + d;
	return *sum;
}
