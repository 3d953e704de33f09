/* emit.c: see emit.h. O(1) per step, O(list entries) per op. */
#include "emit.h"

#include <stdlib.h>
#include <string.h>

#include "candidates.h"

int32_t hoff_best_tier(const hoff_graph *g)
{
	int32_t best = HOFF_NONE;
	double rate = 0;
	for (int32_t i = 0; i < g->ntiers; i++) {
		const hoff_tier *t = &g->tier[i];
		double r = t->h2d_Bps < t->d2h_Bps ? t->h2d_Bps : t->d2h_Bps;
		if (r > rate) {
			rate = r;
			best = i;
		}
	}
	return best;
}

hoff_status hoff_emit_init(hoff_emit *m, const hoff_graph *g,
			   const char *policy)
{
	memset(m, 0, sizeof *m);
	m->g = g;
	m->s = hoff_sched_new();
	m->copy = hoff_alloc((size_t)g->ntensors, sizeof *m->copy);
	m->on = hoff_zalloc((size_t)g->ntensors, sizeof *m->on);
	if (!m->s || !m->copy || !m->on ||
	    hoff_sched_set_policy(m->s, policy) != HOFF_OK) {
		hoff_emit_free(m);
		return m->st = HOFF_ENOMEM;
	}
	m->store_tier = (int16_t)hoff_best_tier(g);
	m->limit_ps = INT64_MAX;
	for (int32_t t = 0; t < g->ntensors; t++) {
		const hoff_tensor *x = &g->tensor[t];
		bool input = x->producer == HOFF_NONE;
		m->copy[t] = (int16_t)(input && x->home != HOFF_DEVICE
					       ? x->home
					       : HOFF_NONE);
		m->on[t] = input && x->home == HOFF_DEVICE;
	}
	return HOFF_OK;
}

static void push(hoff_emit *m, hoff_step_kind kind, int32_t id, int32_t tier)
{
	if (m->st == HOFF_OK &&
	    hoff_sched_push(m->s, kind, id, tier) != HOFF_OK)
		m->st = HOFF_ENOMEM;
	hoff_step st = {.id = id, .tier = (int16_t)tier, .kind = (uint8_t)kind};
	/* (no floor to keep without a limit: none passes INT64_MAX) */
	if (m->limit_ps != INT64_MAX &&
	    hoff_floor_step(&m->floor, m->g, &st) > m->limit_ps && !m->over) {
		m->over = true;
		m->over_at = m->next_op;
	}
}

void hoff_emit_op(hoff_emit *m, int32_t k)
{
	const hoff_graph *g = m->g;
	HOFF_REQUIRE(k == m->next_op);
	push(m, HOFF_STEP_OP, k, HOFF_NONE);
	m->next_op = k + 1;
	for (int64_t j = g->out_off[k]; j < g->out_off[k + 1]; j++)
		m->on[g->out[j]] = 1;
	for (int64_t j = g->upd_off[k]; j < g->upd_off[k + 1]; j++)
		m->copy[g->upd[j]] = HOFF_NONE;
	for (int u = 0; u < 3; u++) {
		const int32_t *lst;
		int64_t nl = hoff_op_list(g, k, (hoff_use)u, &lst);
		for (int64_t j = 0; j < nl; j++) {
			const hoff_tensor *x = &g->tensor[lst[j]];
			if (!hoff_tensor_persistent(x) && x->last_use <= k &&
			    !(m->held && m->held[lst[j]])) {
				m->on[lst[j]] = 0;
				m->copy[lst[j]] = HOFF_NONE;
			}
		}
	}
}

bool hoff_emit_evict(hoff_emit *m, int32_t t)
{
	const hoff_tensor *x = &m->g->tensor[t];
	if (!m->on[t] || !hoff_tensor_offload(x))
		return false;
	/* (v2) a repeat graph's device-homed state ends resident: never
	 * evicted after its last use */
	if (m->g->repeat && x->home == HOFF_DEVICE &&
	    x->last_use < m->next_op && hoff_repeat_state(m->g, t))
		return false;
	if (m->copy[t] != HOFF_NONE) {
		push(m, HOFF_STEP_DETACH, t, HOFF_NONE);
	} else {
		int32_t tier = x->producer == HOFF_NONE &&
					       x->home != HOFF_DEVICE
				       ? x->home
				       : m->store_tier;
		if (tier == HOFF_NONE)
			return false;
		push(m, HOFF_STEP_STORE, t, tier);
		m->copy[t] = (int16_t)tier;
	}
	m->on[t] = 0;
	return true;
}

bool hoff_emit_prefetch(hoff_emit *m, int32_t t)
{
	if (m->on[t] || m->copy[t] == HOFF_NONE)
		return false;
	push(m, HOFF_STEP_PREFETCH, t, m->copy[t]);
	m->on[t] = 1;
	return true;
}

bool hoff_emit_drop(hoff_emit *m, int32_t t)
{
	const hoff_tensor *x = &m->g->tensor[t];
	if (!m->on[t] || !hoff_tensor_offload(x) || hoff_tensor_persistent(x))
		return false;
	push(m, HOFF_STEP_DROP, t, HOFF_NONE);
	m->on[t] = 0;
	return true;
}

void hoff_emit_recompute(hoff_emit *m, int32_t k)
{
	const hoff_graph *g = m->g;
	HOFF_REQUIRE(k < m->next_op);
	push(m, HOFF_STEP_RECOMPUTE, k, HOFF_NONE);
	const int32_t *lst;
	int64_t nl = hoff_op_list(g, k, HOFF_USE_IN, &lst);
	for (int64_t j = 0; j < nl; j++)
		if (m->held && m->held[lst[j]])
			m->held[lst[j]]--;
	nl = hoff_op_list(g, k, HOFF_USE_OUT, &lst);
	for (int64_t j = 0; j < nl; j++)
		m->on[lst[j]] = 1;
	for (int u = HOFF_USE_IN; u <= HOFF_USE_OUT; u += 2) {
		nl = hoff_op_list(g, k, (hoff_use)u, &lst);
		for (int64_t j = 0; j < nl; j++) {
			int32_t t = lst[j];
			const hoff_tensor *x = &g->tensor[t];
			if (x->last_use >= m->next_op ||
			    (m->held && m->held[t]))
				continue; /* a later compute step reads it */
			if (!hoff_tensor_persistent(x)) {
				m->on[t] = 0;
				m->copy[t] = HOFF_NONE;
			} else if (g->repeat && x->home != HOFF_DEVICE &&
				   hoff_repeat_state(g, t)) {
				hoff_emit_evict(m, t);
			}
		}
	}
}

void hoff_emit_home(hoff_emit *m, int32_t k)
{
	const hoff_graph *g = m->g;
	if (!g->repeat)
		return;
	for (int u = 0; u < 3; u++) {
		const int32_t *lst;
		int64_t nl = hoff_op_list(g, k, (hoff_use)u, &lst);
		for (int64_t j = 0; j < nl; j++) {
			const hoff_tensor *x = &g->tensor[lst[j]];
			if (m->held && m->held[lst[j]])
				continue; /* a recompute reads it later */
			if (x->last_use == k && x->home != HOFF_DEVICE &&
			    hoff_repeat_state(g, lst[j]))
				hoff_emit_evict(m, lst[j]);
		}
	}
}

/* (v2) A repeat graph's state that a policy left away from home goes
 * home after the last op: tier-homed state evicted home, device-homed
 * state fetched back (rule 9). The planners send it home earlier, where
 * it can hide; this only makes every schedule end as the next iteration
 * starts. */
static void home_at_end(hoff_emit *m)
{
	const hoff_graph *g = m->g;
	for (int32_t t = 0; t < g->ntensors; t++) {
		if (!hoff_repeat_state(g, t))
			continue;
		if (g->tensor[t].home == HOFF_DEVICE)
			hoff_emit_prefetch(m, t);
		else
			hoff_emit_evict(m, t);
	}
}

hoff_sched *hoff_emit_finish(hoff_emit *m)
{
	if (m->g->repeat && m->st == HOFF_OK && m->next_op == m->g->nops)
		home_at_end(m);
	hoff_sched *s = m->st == HOFF_OK ? m->s : NULL;
	if (s)
		m->s = NULL;
	hoff_emit_free(m);
	return s;
}

void hoff_emit_free(hoff_emit *m)
{
	hoff_sched_free(m->s);
	free(m->copy);
	free(m->on);
	m->s = NULL;
	m->copy = NULL;
	m->on = NULL;
}
