/* ilp_judge.c: decoded schedules judged on the simulator against the
 * objective, and their repair (hill climbing on the decisions, judged by
 * the simulator) that the pipeline and the peak search share. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ilp.h"
#include "ilp_internal.h"

hoff_status hoff_ilp_judge(const hoff_ilp *m, const hoff_graph *g,
			   hoff_sched *s, judged *j, hoff_err *e)
{
	hoff_sim_opts o = hoff_sim_defaults();
	o.budget_bytes = INT64_MAX;
	o.op_times = true;
	hoff_sim_result r;
	hoff_status st = hoff_sim_run(g, s, &o, &r, e);
	if (st != HOFF_OK)
		return st;
	j->s = s;
	j->sum = r.summary;
	j->peak_op = g->nops;
	if (r.op_start_ps)
		for (int32_t k = g->nops - 1;
		     k >= 0 && r.op_start_ps[k] >= r.peak_ps; k--)
			j->peak_op = k;
	j->legal = r.valid;
	j->fits = r.valid && r.summary.peak_bytes <= m->cap_bytes &&
		  (m->budget_mode || r.summary.makespan_ps <= m->bound_ps);
	hoff_sim_result_free(&r);
	return HOFF_OK;
}

/* Is a better than b under the objective (greedy.c's order)? */
bool hoff_ilp_better(const hoff_ilp *m, const judged *a, const judged *b)
{
	if (!a->s || !a->legal)
		return false;
	if (!b->s || !b->legal)
		return true;
	if (a->fits != b->fits)
		return a->fits;
	if (m->budget_mode || !a->fits) {
		if (a->sum.makespan_ps != b->sum.makespan_ps)
			return a->sum.makespan_ps < b->sum.makespan_ps;
		return a->sum.peak_bytes < b->sum.peak_bytes;
	}
	if (a->sum.peak_bytes != b->sum.peak_bytes)
		return a->sum.peak_bytes < b->sum.peak_bytes;
	return a->sum.makespan_ps < b->sum.makespan_ps;
}

/* Simulates the decisions trial; when better than *cur, they replace it
 * (pick too). 1: taken, 0: not, -1: *st is an error. */
static int try_picks(const hoff_ilp *m, const hoff_ilp *mv, const hoff_graph *g,
		     const int32_t *trial, int32_t *pick, judged *cur,
		     hoff_status *st, hoff_err *e)
{
	hoff_sched *s = NULL;
	hoff_err e2;
	judged j = {0};
	if (hoff_ilp_emit_model(g, mv, trial, "exact", &s, &e2) != HOFF_OK)
		return 0;
	if ((*st = hoff_ilp_judge(m, g, s, &j, e)) != HOFF_OK) {
		hoff_sched_free(s);
		return -1;
	}
	if (!hoff_ilp_better(m, &j, cur)) {
		hoff_sched_free(j.s);
		return 0;
	}
	hoff_sched_free(cur->s);
	*cur = j;
	memcpy(pick, trial, (size_t)hoff_ilp_npick(mv) * sizeof *pick);
	return 1;
}

/* (v2) The recompute moves of the repair: each candidate of mv whose
 * tensor would be away at the peak's op start chosen, each chosen one
 * dropped (trial: scratch of hoff_ilp_npick(mv)). The moves taken, or
 * -1 when *st is an error. None without candidates. */
static int rc_moves(const hoff_ilp *m, const hoff_ilp *mv, const hoff_graph *g,
		    int32_t *pick, int32_t *trial, judged *cur, double until,
		    hoff_status *st, hoff_err *e)
{
	const size_t sz = (size_t)hoff_ilp_npick(mv) * sizeof *trial;
	int moves = 0;
	for (int32_t j = 0; j < mv->nrc && hoff_now_s() < until; j++) {
		int32_t *p = &pick[mv->niv + j];
		bool on = *p != HOFF_ILP_OFF;
		if (!on && !hoff_ilp_rc_absent(&mv->rc[j], 2 * cur->peak_op))
			continue;
		memcpy(trial, pick, sz);
		trial[mv->niv + j] = on ? HOFF_ILP_OFF : mv->rc[j].b - 1;
		int r = try_picks(m, mv, g, trial, pick, cur, st, e);
		if (r < 0)
			return -1;
		moves += r;
	}
	return moves;
}

/* FIFO repair: the stage model lets transfers share a channel where the
 * machine serves them first come first served, so the decoded schedule
 * can simulate a little worse than predicted. First-improvement hill
 * climbing on the decisions, judged by the simulator, until no move
 * helps or the time is up; returns the number of moves taken. Moves:
 * each prefetch one boundary earlier or later, or an interval dropped;
 * and two aimed at the peak's op k (the first starting at or after the
 * peak), which single steps cannot reach across a plateau: a prefetch
 * issued before op k for a later op issued after op k instead, and, for
 * a store issued before op k, every store ahead of it on its channel
 * dropped (so that it can finish before the peak). On
 * deepseek-v3-decode-4l the second frees a KV block by op 9 (the stores
 * of two weights ahead of it dropped), then the first issues the first
 * expert after op 5 instead of at time 0: 7808993792 -> 7808952832 B.
 * (v2) With recompute candidates, after each pass: a candidate chosen
 * when its tensor would be away at the peak's op, or a chosen one
 * dropped (rc_moves). */
int hoff_ilp_repair(const hoff_ilp *m, const hoff_ilp *mv, const hoff_graph *g,
		    int32_t *pick, judged *cur, double until, hoff_status *st,
		    hoff_err *e)
{
	int moves = 0, r = 0;
	int32_t *trial =
		hoff_alloc((size_t)hoff_ilp_npick(mv) + 1, sizeof *trial);
	if (!trial)
		return 0;
	const size_t sz = (size_t)hoff_ilp_npick(mv) * sizeof *trial;
	bool improved = true;
	while (improved && hoff_now_s() < until) {
		improved = false;
		for (int32_t i = 0; i < mv->niv && hoff_now_s() < until; i++) {
			const hoff_ilp_iv *v = &mv->iv[i];
			if (pick[i] == HOFF_ILP_OFF)
				continue;
			const int32_t k = cur->peak_op;
			if (v->c.b >= mv->n) {
				/* a tail: clear the stores ahead of its own */
				if (v->c.kind != HOFF_CAND_DIRTY || v->c.a >= k)
					continue;
				memcpy(trial, pick, sz);
				bool any = false;
				for (int32_t j = 0; j < mv->niv; j++) {
					const hoff_ilp_iv *u = &mv->iv[j];
					if (j != i &&
					    u->c.kind == HOFF_CAND_DIRTY &&
					    u->c.tier == v->c.tier &&
					    u->c.a < v->c.a &&
					    trial[j] != HOFF_ILP_OFF) {
						trial[j] = HOFF_ILP_OFF;
						any = true;
					}
				}
				if (any && (r = try_picks(m, mv, g, trial, pick,
							  cur, st, e)) != 0)
					goto took;
				continue;
			}
			int32_t cand[4] = {
				pick[i] - 1, pick[i] + 1,
				v->c.kind == HOFF_CAND_START ? pick[i]
							     : HOFF_ILP_OFF,
				pick[i] < k && v->c.b > k ? k : pick[i]};
			for (int c = 0; c < 4; c++) {
				int32_t p = cand[c];
				if (p == pick[i] ||
				    (p != HOFF_ILP_OFF &&
				     (p < v->lo || p > v->c.b - 1)))
					continue;
				memcpy(trial, pick, sz);
				trial[i] = p;
				if ((r = try_picks(m, mv, g, trial, pick, cur,
						   st, e)) != 0)
					goto took;
			}
			continue;
		took:
			if (r < 0)
				goto out;
			moves++;
			improved = true;
		}
		if ((r = rc_moves(m, mv, g, pick, trial, cur, until, st, e)) <
		    0)
			goto out;
		moves += r;
		improved = improved || r > 0;
	}
out:
	free(trial);
	return moves;
}

/* The decisions pick, emitted, judged into *sim (the caller frees
 * sim->s), repaired on the simulator until `until`, and mapped back into
 * m (the repair moves off the model's boundaries: back onto them, issued
 * no later) as x; true when that is a solution of m. */
bool hoff_ilp_repair_mapped(const hoff_graph *g, const hoff_ilp *m,
			    int32_t *pick, double until, double *x, judged *sim,
			    hoff_status *st, hoff_err *e)
{
	hoff_sched *s = NULL;
	hoff_err e2;
	*st = HOFF_OK;
	if (hoff_ilp_emit_model(g, m, pick, "exact", &s, &e2) != HOFF_OK)
		return false;
	if ((*st = hoff_ilp_judge(m, g, s, sim, e)) != HOFF_OK) {
		hoff_sched_free(s);
		return false;
	}
	hoff_ilp_repair(m, m, g, pick, sim, until, st, e);
	if (*st != HOFF_OK)
		return false;
	hoff_ilp_picks_of(m, sim->s, pick);
	return hoff_ilp_start(m, pick, x, &e2);
}

/* A probe answered without branching: greedy planned under the probe's
 * cap, its decisions repaired on the simulator toward less stall (the
 * repair's order under a budget: fitting first, then makespan), then
 * mapped into the probe's model pm. True when the mapping is a solution
 * of pm, stall row included (x, 1-based); the simulated schedule is
 * left in *sim either way (the caller frees it). Greedy under a cap
 * often meets a stall bound that greedy's own peak search missed. */
bool hoff_ilp_probe_heuristic(const hoff_graph *g, const hoff_ilp *pm,
			      double until, double *x, judged *sim,
			      hoff_status *st, hoff_err *e)
{
	*st = HOFF_OK;
	hoff_policy_opts po = hoff_policy_defaults();
	po.kind = HOFF_POLICY_GREEDY;
	po.budget_bytes = pm->cap_bytes;
	po.analysis = pm->rq.analysis;
	hoff_policy_report rep;
	hoff_sched *s = NULL;
	if ((*st = hoff_policy_run(g, &po, &s, &rep, e)) != HOFF_OK) {
		if (*st == HOFF_EINTERNAL) /* no legal greedy schedule (a
					    * repeat graph): no answer */
			*st = HOFF_OK;
		return false;
	}
	int32_t *pick =
		hoff_alloc((size_t)hoff_ilp_npick(pm) + 1, sizeof *pick);
	if (!pick) {
		hoff_sched_free(s);
		*st = hoff_seterr(e, HOFF_ENOMEM, "out of memory");
		return false;
	}
	hoff_ilp_picks_of(pm, s, pick);
	hoff_sched_free(s);
	bool ok = hoff_ilp_repair_mapped(g, pm, pick, until, x, sim, st, e);
	free(pick);
	return ok;
}
