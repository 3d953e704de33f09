/* exact.c: the exact pipeline, hoff_exact_run (greedy -> model ->
 * solve -> decode -> simulate -> keep the better). */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis.h"
#include "emit.h"
#include "ilp.h"
#include "ilp_backend.h"
#include "ilp_internal.h"
#include "policy.h"
#include "sim.h"

double hoff_exact_objective(bool budget_mode, const hoff_summary *s)
{
	/* (v2) budget mode: makespan - compute, the re-runs with the stall
	 * (recompute_ps is 0 without recompute steps) */
	return budget_mode ? hoff_s(s->stall_ps + s->recompute_ps)
			   : (double)s->peak_bytes;
}

/* Of the time, what the overhead model's first LP relaxation may take
 * (deepseek-v3-decode-4l at stride 1: about 17 s) */
#define LP_FLOOR_SHARE 0.4

/* Greedy's schedule (jg, legal) as a solution of m into x, by its
 * decisions (pick: caller-sized hoff_ilp_npick(m)); false when it does
 * not fit. */
static bool greedy_start(const hoff_ilp *m, const judged *jg, int32_t *pick,
			 double *x)
{
	hoff_err e2;
	hoff_ilp_picks_of(m, jg->s, pick);
	return hoff_ilp_start(m, pick, x, &e2);
}

/* An automatic stride too coarse to hold greedy's schedule leaves the
 * solver without a start, in a model whose best can be worse than
 * greedy's (deepseek-v3-decode-4l: at stride 2 the rounded-up expert
 * prefetches stall past the overhead bound). In overhead mode, halves
 * the stride while greedy's schedule does not map into *mp and the finer
 * model's binaries stay within twice the aim; the stride kept goes into
 * the run's request rq (the rebuilds'). Not in budget mode, one MIP:
 * there the finer model cost llama3-8b decode L8 (budget 95%) 40.7 s to
 * prove infeasible, against 10.3 s at its stride. */
static hoff_status stride_for_start(const hoff_graph *g, const judged *jg,
				    const hoff_ilp_opts *o, hoff_ilp **mp,
				    hoff_ilp_req *rq, hoff_err *e)
{
	if (rq->stride > 0 || !o->incumbent || !jg->legal || (*mp)->budget_mode)
		return HOFF_OK;
	while ((*mp)->stride > 1 && !(*mp)->infeasible) {
		hoff_ilp *m = *mp, *m2 = NULL;
		const int32_t kept = rq->stride;
		rq->stride = m->stride / 2;
		hoff_status st = hoff_ilp_build(g, o, rq, &m2, e);
		rq->stride = kept; /* unless m2 is taken, below */
		if (st != HOFF_OK)
			return st;
		if (m2->nbin > 2 * m->bin_limit) {
			hoff_ilp_free(m2);
			return HOFF_OK;
		}
		double *x = hoff_alloc((size_t)m->ncols + 1, sizeof *x);
		int32_t *pick =
			hoff_alloc((size_t)hoff_ilp_npick(m) + 1, sizeof *pick);
		bool nomem = !x || !pick;
		bool maps = !nomem && greedy_start(m, jg, pick, x);
		free(x);
		free(pick);
		if (nomem || maps) {
			hoff_ilp_free(m2);
			return nomem ? hoff_seterr(e, HOFF_ENOMEM,
						   "out of memory")
				     : HOFF_OK;
		}
		hoff_ilp_free(m);
		*mp = m2;
		rq->stride = m2->stride;
	}
	return HOFF_OK;
}

/* The request of the LP floor's model: the run's, with rows (8) and (9)
 * in the min-peak model too. */
static hoff_ilp_req floor_request(const hoff_ilp_req *rq)
{
	hoff_ilp_req f = *rq;
	f.floor_rows = true;
	return f;
}

/* Overhead mode: greedy's schedule repaired on the simulator (the local
 * search of the decoded schedules, toward a lower simulated peak within
 * the bound) and mapped into m. When its model peak is below that of
 * greedy's mapping (*start, have_start), it becomes the start; the
 * repaired schedule is kept in *sim when it fits either way (the
 * returned schedule can be the simulator's best). On
 * deepseek-v3-decode-4l greedy issues two expert prefetches at one
 * boundary (its model peak, 7814295040 B); the repair issues the second
 * one op later, 23 us of the overhead's 133, and its peak is the early
 * one, 7808993792 B: a start 0.07% lower. */
static hoff_status repaired_start(const hoff_graph *g, const hoff_ilp *m,
				  const judged *jg, double until,
				  double *start, bool *have_start,
				  judged *sim, hoff_err *e)
{
	const size_t nc = (size_t)m->ncols + 1;
	hoff_status st = HOFF_OK;
	judged jr = {0};
	int32_t *pick = hoff_alloc((size_t)hoff_ilp_npick(m) + 1, sizeof *pick);
	double *x = hoff_alloc(nc, sizeof *x);
	if (!pick || !x) {
		st = hoff_seterr(e, HOFF_ENOMEM, "out of memory");
		goto out;
	}
	hoff_ilp_picks_of(m, jg->s, pick);
	bool ok = hoff_ilp_repair_mapped(g, m, pick, until, x, &jr, &st, e);
	if (st != HOFF_OK || !jr.fits)
		goto out;
	if (ok && (!*have_start ||
		   hoff_ilp_model_peak(m, x) < hoff_ilp_model_peak(m, start))) {
		memcpy(start, x, nc * sizeof *x);
		*have_start = true;
	}
	*sim = jr;
	jr.s = NULL;
out:
	hoff_sched_free(jr.s);
	free(pick);
	free(x);
	return st;
}

/* The time limit ran out before a model could be built or handed to the
 * solver (why in e): greedy's schedule gs (or jg, once judged) is the
 * answer, status time_limit, with no model objective or bound. */
static hoff_status greedy_answer(const hoff_graph *g, const hoff_ilp_opts *o,
				 const hoff_ilp_req *rq, hoff_sched **gs,
				 judged *jg, hoff_exact_report *rep,
				 hoff_sched **out, hoff_err *e)
{
	char why[HOFF_ERRLEN];
	snprintf(why, sizeof why, "%s", e->msg);
	hoff_analysis own;
	const hoff_analysis *an;
	hoff_status st = hoff_analysis_use(g, rq->analysis, &own, &an, e);
	if (st != HOFF_OK)
		return st;
	/* what judge() reads of a model */
	hoff_ilp fk = {0};
	fk.budget_mode = rep->budget_mode;
	fk.cap_bytes = rep->budget_mode ? o->budget_bytes
					: g->device.memory_bytes;
	double bound =
		floor((1.0 + o->max_overhead) * (double)an->lower_bound_ps);
	fk.bound_ps = bound < (double)HOFF_PS_LIMIT ? (int64_t)bound
						    : HOFF_PS_LIMIT;
	if (!jg->s) {
		if ((st = hoff_ilp_judge(&fk, g, *gs, jg, e)) != HOFF_OK)
			return st;
		*gs = NULL; /* owned by jg */
	}
	rep->status = HOFF_ILP_TIME_LIMIT;
	rep->has_objective = rep->has_bound = rep->has_gap = false;
	rep->has_decoded = false;
	rep->lower_bound_ps = an->lower_bound_ps;
	rep->bound_ps = fk.bound_ps;
	rep->budget_bytes = fk.cap_bytes;
	rep->greedy = rep->best = jg->sum;
	rep->greedy_feasible = rep->feasible = jg->fits;
	snprintf(rep->source, sizeof rep->source, "greedy");
	snprintf(rep->note, sizeof rep->note,
		 "--time-limit %.4g s: %.180s; greedy's schedule is returned",
		 o->time_limit_s, why);
	hoff_say(&o->progress, "exact: %s", rep->note);
	if (jg->legal) {
		*out = jg->s;
		jg->s = NULL;
		hoff_sched_set_policy(*out, "exact");
	}
	return HOFF_OK;
}

hoff_status hoff_exact_run(const hoff_graph *g, const hoff_ilp_opts *o,
			   hoff_sched **out, hoff_exact_report *rep,
			   hoff_err *e)
{
	*out = NULL;
	memset(rep, 0, sizeof *rep);
	hoff_ilp *m = NULL;
	hoff_ilp_sol sol = {0};
	hoff_sched *gs = NULL, *ds = NULL;
	judged jg = {0}, jd = {0};
	double *start = NULL;
	int32_t *pick = NULL;
	peak_search ps = {0};
	hoff_policy_report grep;
	hoff_policy_opts po = hoff_policy_defaults();
	po.kind = HOFF_POLICY_GREEDY;
	po.budget_bytes = o->budget_bytes;
	po.max_overhead = o->max_overhead;
	rep->budget_mode = o->budget_bytes != HOFF_NONE;
	rep->nops = g->nops;
	double t0 = hoff_now_s();
	/* The run's build request, made once. The limit bounds the whole
	 * run: builds stop at the deadline, and no model goes to GLPK whose
	 * set-up cannot end before it. The peak search keeps its own
	 * deadline (its probes are small). */
	hoff_ilp_req rq = hoff_ilp_request(o);
	rq.deadline = t0 + o->time_limit_s;
	/* One analysis for greedy, every model built and the answer. */
	hoff_analysis own;
	hoff_status st =
		hoff_analysis_use(g, o->analysis, &own, &rq.analysis, e);
	po.analysis = rq.analysis;
	if (st == HOFF_OK)
		st = hoff_policy_run(g, &po, &gs, &grep, e);
	rep->greedy_s = hoff_now_s() - t0;
	/* greedy with no legal schedule (a repeat graph it does not send
	 * home): the model runs without it, and says so */
	char no_greedy[HOFF_ERRLEN] = "";
	if (st == HOFF_EINTERNAL) {
		snprintf(no_greedy, sizeof no_greedy, "%s", e->msg);
		st = HOFF_OK;
	}
	if (st != HOFF_OK)
		goto out;
	double tb = hoff_now_s();
	if ((st = hoff_ilp_build(g, o, &rq, &m, e)) != HOFF_OK ||
	    (st = hoff_ilp_fits_time(m, e)) != HOFF_OK)
		goto out;
	if (gs && (st = hoff_ilp_judge(m, g, gs, &jg, e)) != HOFF_OK)
		goto out;
	gs = NULL; /* owned by jg */
	if ((st = stride_for_start(g, &jg, o, &m, &rq, e)) != HOFF_OK)
		goto out;
	/* Overhead mode: the linear relaxation bounds the peak from below;
	 * instants under that bound cannot bind, so rebuild without them
	 * (a much smaller model when the peak is flat). The first
	 * relaxation gets LP_FLOOR_SHARE of the time, the second a quarter
	 * of what is left, and none when the rebuild pruned nothing (its
	 * relaxation is the same). */
	bool lp_ok = false; /* the relaxation solved in its time */
	for (int round = 0; round < 2 && !m->budget_mode && o->prune &&
			    !m->infeasible;
	     round++) {
		double lp = 0;
		bool ok = false;
		double left = o->time_limit_s - (hoff_now_s() - tb);
		double share = round == 0 ? LP_FLOOR_SHARE : 0.25;
		const hoff_ilp_req fr = floor_request(&rq);
		/* Out of time here, m stands unpruned: no floor is needed. */
		hoff_ilp *mf = NULL;
		if ((st = hoff_ilp_build(g, o, &fr, &mf, e)) == HOFF_OK &&
		    (st = hoff_ilp_fits_time(mf, e)) == HOFF_OK)
			st = hoff_ilp_lp_bound(mf, fmax(1, share * left), &lp,
					       &ok, e);
		hoff_ilp_free(mf);
		if (st == HOFF_ETIMEOUT) {
			st = HOFF_OK;
			break;
		}
		if (st != HOFF_OK)
			goto out;
		lp_ok = lp_ok || ok;
		double fl = hoff_ilp_bytes_under(m, lp);
		if (!ok || fl <= (double)m->peak_floor * (1 + 1e-6))
			break;
		rq.peak_floor = (int64_t)fl;
		hoff_ilp *m2 = NULL;
		if ((st = hoff_ilp_build(g, o, &rq, &m2, e)) != HOFF_OK ||
		    (st = hoff_ilp_fits_time(m2, e)) != HOFF_OK) {
			hoff_ilp_free(m2);
			if (st != HOFF_ETIMEOUT)
				goto out;
			st = HOFF_OK; /* m, unpruned, stands */
			break;
		}
		bool same = m2->nrows == m->nrows && m2->ncols == m->ncols;
		hoff_ilp_free(m);
		m = m2;
		if (same)
			break;
	}
	rep->prep_s = hoff_now_s() - tb;
	hoff_ilp_restriction(g, o, m, rep);
	m->rq.time_limit_s = fmax(1, o->time_limit_s - rep->prep_s);
	rep->greedy = jg.sum;
	rep->greedy_feasible = jg.fits;
	rep->lower_bound_ps = m->lower_bound_ps;
	rep->bound_ps = m->bound_ps;
	rep->budget_bytes = m->cap_bytes;
	rep->ncand = m->ncand;
	rep->niv = m->niv;
	rep->nrc = m->nrc;
	rep->ncols = m->ncols;
	rep->nbin = m->nbin;
	rep->nrows = m->nrows;
	rep->nnz = (int64_t)m->nnz;
	rep->stride = m->stride;
	rep->build_s = m->build_s;
	pick = hoff_alloc((size_t)hoff_ilp_npick(m) + 1, sizeof *pick);
	start = hoff_alloc((size_t)m->ncols + 1, sizeof *start);
	if (!pick || !start) {
		st = hoff_seterr(e, HOFF_ENOMEM, "out of memory");
		goto out;
	}
	bool have_start = false;
	if (o->incumbent && !m->infeasible && jg.legal)
		have_start = greedy_start(m, &jg, pick, start);
	/* the limit covers the whole run: greedy, bounds, start */
	double span = fmax(0.5, fmin(5.0, 0.1 * o->time_limit_s));
	if (!m->budget_mode && o->incumbent && !m->infeasible && jg.legal &&
	    (st = repaired_start(g, m, &jg, hoff_now_s() + span, start,
				 &have_start, &ps.sim, e)) != HOFF_OK)
		goto out;
	const hoff_ilp *xm = m; /* the model sol.x belongs to */
	if (m->budget_mode) {
		m->rq.time_limit_s =
			fmax(0.5, o->time_limit_s - (hoff_now_s() - t0) - span);
		if ((st = hoff_ilp_fits_time(m, e)) != HOFF_OK ||
		    (st = hoff_ilp_solve(m, have_start ? start : NULL, &sol,
					 e)) != HOFF_OK)
			goto out;
		rep->incumbent_given = sol.incumbent_given;
		rep->incumbent_accepted = sol.incumbent_accepted;
	} else {
		/* the files hold the min-peak model (one MIP, the same
		 * optimum); the search solves budget-mode probes */
		if ((o->write_lp || o->write_mps) &&
		    (st = hoff_glpk_write(m, o->write_lp, o->write_mps, e)) !=
			    HOFF_OK)
			goto out;
		double deadline = t0 + fmax(o->time_limit_s - span,
					    hoff_now_s() - t0 + 0.5);
		/* no bound phase when the LP relaxation alone ran out of
		 * time: the root would too */
		st = hoff_ilp_search_peak(g, m, have_start ? start : NULL,
					  deadline, lp_ok ? o->bound_share : 0,
					  &ps, e);
		if (st == HOFF_ETIMEOUT) { /* a probe past the deadline: what
					    * the search proved stands */
			hoff_say(&m->o.progress, "exact: %s", e->msg);
			st = HOFF_OK;
		}
		if (st != HOFF_OK)
			goto out;
		if (o->write_probe &&
		    (st = hoff_ilp_write_probe(g, m, &ps, &rep->probe_peak,
					       e)) != HOFF_OK)
			goto out;
		rep->incumbent_given = have_start;
		rep->incumbent_accepted = have_start;
		rep->probes = ps.probes;
		rep->probes_cut = ps.probes_cut;
		sol.status = ps.status;
		sol.solve_s = ps.solve_s;
		sol.nodes = ps.nodes;
		snprintf(sol.note, sizeof sol.note, "%s", ps.note);
		if (ps.bx) {
			xm = ps.bm;
			sol.x = ps.bx;
			ps.bx = NULL;
			sol.has_x = true;
			sol.obj = (double)ps.hi / m->bu;
			sol.has_bound = true;
			sol.bound = (double)(ps.lo < ps.hi ? ps.lo : ps.hi) /
				    m->bu;
		}
	}
	rep->status = sol.status;
	rep->solve_s = sol.solve_s;
	rep->nodes = sol.nodes;
	if (sol.note[0])
		snprintf(rep->note, sizeof rep->note, "%s", sol.note);
	if (sol.has_x) {
		rep->has_objective = true;
		rep->model_objective = sol.obj;
		rep->objective = m->budget_mode
					 ? hoff_ilp_objective_value(m, sol.obj)
					 : (double)ps.hi; /* to the byte */
		hoff_ilp_predict(xm, sol.x, &rep->predicted_makespan_ps,
				 &rep->predicted_peak_bytes);
		if (!m->budget_mode)
			rep->predicted_peak_bytes = ps.hi;
		free(pick);
		pick = hoff_alloc((size_t)hoff_ilp_npick(xm) + 1, sizeof *pick);
		if (!pick) {
			st = hoff_seterr(e, HOFF_ENOMEM, "out of memory");
			goto out;
		}
		hoff_ilp_decode(xm, sol.x, pick);
		hoff_err e2;
		if (hoff_ilp_emit_model(g, xm, pick, "exact", &ds, &e2) ==
		    HOFF_OK) {
			if ((st = hoff_ilp_judge(m, g, ds, &jd, e)) != HOFF_OK)
				goto out;
			ds = NULL;
			rep->has_decoded = true;
			rep->decoded = jd.sum;
			rep->decoded_valid = jd.legal;
			double t1 = hoff_now_s();
			double left = o->time_limit_s - (t1 - t0);
			rep->repair_moves = hoff_ilp_repair(
				m, xm, g, pick, &jd,
				t1 + fmin(span, fmax(left, 0.5)), &st, e);
			if (st != HOFF_OK)
				goto out;
			rep->repair_s = hoff_now_s() - t1;
			rep->repaired = jd.sum;
			rep->repaired_fits = jd.fits;
		} else {
			snprintf(rep->note, sizeof rep->note,
				 "decoding failed: %.200s", e2.msg);
		}
	}
	if (sol.has_bound) {
		rep->has_bound = true;
		rep->bound = m->budget_mode
				     ? hoff_ilp_objective_value(m, sol.bound)
				     : (double)(ps.lo < ps.hi ? ps.lo : ps.hi);
		if (rep->has_objective) {
			double d = rep->objective - rep->bound;
			rep->has_gap = true;
			rep->gap = d <= 0 ? 0 : d / fmax(fabs(rep->objective),
							 1e-300);
		}
	}
	/* The better of the decoded and greedy's schedule. */
	/* on a tie, the exact schedule */
	judged *best = jd.s && jd.legal && !hoff_ilp_better(m, &jg, &jd) ? &jd
									 : &jg;
	/* or a probe's schedule (the simulator's, not the model's) */
	if (ps.sim.s && hoff_ilp_better(m, &ps.sim, best)) {
		best = &ps.sim;
		if (!rep->note[0])
			snprintf(rep->note, sizeof rep->note,
				 "the schedule returned is a probe's: greedy "
				 "under a lower cap, repaired on the simulator");
	}
	snprintf(rep->source, sizeof rep->source, "%s",
		 !best->s      ? "none"
		 : best == &jg ? "greedy"
			       : "exact");
	if (no_greedy[0] && !rep->note[0])
		snprintf(rep->note, sizeof rep->note, "no greedy start: %.200s",
			 no_greedy);
	if (best == &jg && jd.s && jd.legal && hoff_ilp_better(m, &jg, &jd) &&
	    !rep->note[0])
		snprintf(rep->note, sizeof rep->note,
			 "the decoded schedule simulated worse than greedy's; "
			 "greedy's is returned");
	if (sol.status == HOFF_ILP_INFEASIBLE && jg.fits && !rep->note[0])
		snprintf(rep->note, sizeof rep->note,
			 "the stage model found no solution where greedy "
			 "did (the model is coarser than the machine)");
	rep->best = best->sum;
	rep->feasible = best->fits;
	if (best->legal) {
		*out = best->s;
		best->s = NULL;
		hoff_sched_set_policy(*out, "exact");
	}
out:
	if (st == HOFF_ETIMEOUT && (gs || jg.s)) {
		st = greedy_answer(g, o, &rq, &gs, &jg, rep, out, e);
	}
	hoff_sched_free(jg.s);
	hoff_sched_free(jd.s);
	hoff_sched_free(gs);
	hoff_sched_free(ds);
	free(sol.x);
	free(start);
	free(pick);
	hoff_ilp_peak_search_free(&ps, m);
	hoff_ilp_free(m);
	return st;
}
