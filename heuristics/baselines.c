/* baselines.c: the runtime policies greedy must beat, planned on the same
 * machine model: none, reactive (on-demand, no lookahead) and lookahead:N
 * (per-layer prefetch N layers ahead, as torchtitan's CPU-offload pass).
 * Each is one pass over the ops: O(ops + list entries). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baselines.h"
#include "emit.h"

int64_t hoff_op_layer(const hoff_graph *g, int32_t k)
{
	const hoff_op *o = &g->op[k];
	if (o->flags & HOFF_O_HAS_LAYER)
		return o->layer;
	static const char *const prefix[] = {"layers.", "layer.", "h.",
					     "blocks."};
	for (size_t i = 0; i < sizeof prefix / sizeof prefix[0]; i++) {
		size_t n = strlen(prefix[i]);
		const char *p = strstr(o->id, prefix[i]);
		/* at the start or after a '.', then digits, then '.' */
		if (!p || (p != o->id && p[-1] != '.'))
			continue;
		p += n;
		int64_t v = 0;
		int digits = 0;
		while (*p >= '0' && *p <= '9' && digits < 12)
			v = v * 10 + (*p++ - '0'), digits++;
		if (digits && (*p == '.' || *p == '\0'))
			return v;
	}
	return HOFF_NONE;
}

static void none(hoff_emit *m)
{
	const hoff_graph *g = m->g;
	for (int32_t k = 0; k < g->nops; k++) {
		HOFF_FOR_USES(g, k, t, {
			if (g->tensor[t].first_use == k)
				hoff_emit_prefetch(m, t);
		});
		hoff_emit_op(m, k);
		hoff_emit_home(m, k); /* (v2) a repeat graph's state */
	}
}

/* Evicts what op k touched unless the very next op needs it again. */
static void evict_after(hoff_emit *m, int32_t k, int32_t keep_until)
{
	const hoff_graph *g = m->g;
	for (int u = 0; u < 3; u++) {
		const int32_t *lst;
		int64_t nl = hoff_op_list(g, k, (hoff_use)u, &lst);
		for (int64_t j = 0; j < nl; j++) {
			int32_t t = lst[j];
			int32_t nu = hoff_tensor_next_use(g, t, k);
			if (nu == HOFF_NONE &&
			    !hoff_tensor_persistent(&g->tensor[t]))
				continue; /* freed by rule 6 */
			if (nu != HOFF_NONE && nu <= keep_until)
				continue;
			hoff_emit_evict(m, t);
		}
	}
}

/* Whether a policy stops planning: its floor passed the limit, unless
 * it goes on (go_on) and that came past three quarters of the ops. */
static bool stops(const hoff_emit *m)
{
	return m->over &&
	       (!m->go_on || m->over_at < m->g->nops - m->g->nops / 4);
}

static void reactive(hoff_emit *m)
{
	const hoff_graph *g = m->g;
	for (int32_t k = 0; k < g->nops && !stops(m); k++) {
		HOFF_FOR_USES(g, k, t, hoff_emit_prefetch(m, t));
		hoff_emit_op(m, k);
		evict_after(m, k, k + 1);
	}
}

/* Layer runs: maximal stretches of consecutive ops with one layer. */
static void lookahead(hoff_emit *m, int32_t n, hoff_status *st)
{
	const hoff_graph *g = m->g;
	int32_t *run = hoff_alloc((size_t)g->nops + 1, sizeof *run);
	int32_t *start = hoff_alloc((size_t)g->nops + 2, sizeof *start);
	if (!run || !start) {
		*st = HOFF_ENOMEM;
		goto out;
	}
	int32_t nruns = 0;
	for (int32_t k = 0; k < g->nops; k++) {
		if (k == 0 || hoff_op_layer(g, k) != hoff_op_layer(g, k - 1))
			start[nruns++] = k;
		run[k] = nruns - 1;
	}
	start[nruns] = g->nops;
	int32_t fetched_to = -1; /* runs whose needs were prefetched */
	for (int32_t r = 0; r < nruns && !stops(m); r++) {
		int32_t last = r + n < nruns ? r + n : nruns - 1;
		for (int32_t q = fetched_to + 1; q <= last; q++)
			for (int32_t k = start[q]; k < start[q + 1]; k++)
				HOFF_FOR_USES(g, k, t,
					      hoff_emit_prefetch(m, t));
		if (last > fetched_to)
			fetched_to = last;
		for (int32_t k = start[r]; k < start[r + 1]; k++) {
			/* A tensor evicted inside the window comes back. */
			HOFF_FOR_USES(g, k, t, hoff_emit_prefetch(m, t));
			hoff_emit_op(m, k);
		}
		/* Keep what runs r+1 .. r+n need. */
		int32_t keep = last + 1 <= nruns ? start[last + 1] - 1
						 : g->nops - 1;
		for (int32_t k = start[r]; k < start[r + 1]; k++)
			evict_after(m, k, r + n < nruns ? keep : g->nops);
	}
out:
	free(run);
	free(start);
}

hoff_status hoff_baseline_plan(const hoff_graph *g, const hoff_policy_opts *o,
			       hoff_sched **out, hoff_err *e)
{
	bool over;
	return hoff_baseline_plan_within(g, o, INT64_MAX, out, &over, e);
}

hoff_status hoff_baseline_plan_within(const hoff_graph *g,
				      const hoff_policy_opts *o,
				      int64_t limit_ps, hoff_sched **out,
				      bool *over, hoff_err *e)
{
	return hoff_baseline_plan_over(g, o, limit_ps, false, out, over, e);
}

hoff_status hoff_baseline_plan_over(const hoff_graph *g,
				    const hoff_policy_opts *o, int64_t limit_ps,
				    bool whole, hoff_sched **out, bool *over,
				    hoff_err *e)
{
	char name[32];
	hoff_policy_name(o, name, sizeof name);
	hoff_emit m;
	*out = NULL;
	*over = false;
	if (hoff_emit_init(&m, g, name) != HOFF_OK)
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	m.limit_ps = limit_ps;
	m.go_on = whole;
	/* Room for every step at once (a doubling copies into fresh memory,
	 * a million ops' worth each time): each op, and at most a prefetch
	 * and an eviction per list entry. Untouched room costs nothing. */
	size_t entries = (size_t)(g->in_off[g->nops] + g->upd_off[g->nops] +
				  g->out_off[g->nops]);
	size_t room = (size_t)g->nops + 16 +
		      (o->kind == HOFF_POLICY_NONE ? (size_t)g->ntensors
						   : 2 * entries);
	hoff_status st = HOFF_OK;
	if (!hoff_grow((void **)&m.s->step, &m.s->cap, room, sizeof *m.s->step))
		st = HOFF_ENOMEM;
	else if (o->kind == HOFF_POLICY_NONE)
		none(&m);
	else if (o->kind == HOFF_POLICY_REACTIVE)
		reactive(&m);
	else if (o->kind == HOFF_POLICY_LOOKAHEAD)
		lookahead(&m, o->lookahead, &st);
	else
		HOFF_REQUIRE(!"a baseline policy");
	/* (read before the end state's steps, which the stop never saw) */
	*over = st == HOFF_OK && m.over;
	if (*over && (!whole || m.next_op < g->nops)) { /* gave up */
		hoff_emit_free(&m);
		return HOFF_OK;
	}
	if (st == HOFF_OK)
		*out = hoff_emit_finish(&m);
	else
		hoff_emit_free(&m);
	if (!*out)
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	return HOFF_OK;
}
