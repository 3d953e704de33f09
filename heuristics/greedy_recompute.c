/* greedy_recompute.c: `--recompute` (greedy_recompute.h). Each plan of
 * recompute_plan.c (segments of 1, 2, 3, 4, 6 and 8 layers) turns g into
 * an expanded graph (recompute.h) in which the re-runs are ops and the
 * re-made tensors new ones; the policy then plans it unchanged: greedy
 * weighs, for every re-made version and every kept activation, keeping
 * it against moving it, against the timeline that the re-runs lengthen
 * (a re-run spends compute-stream time, which costs nothing where the
 * stream waits on the link anyway). The plan without recomputation and,
 * for greedy, policy checkpoint and checkpoint+reactive compete too. Each
 * candidate is mapped back to g and simulated on g; the best under the
 * run's objective wins (the bound: least peak, then makespan; a budget:
 * least makespan, then peak; a baseline without a budget: the least
 * peak no slower than its plan without recomputation), so --recompute
 * never does worse than the same run without it.
 * Cost: per variant, one plan of the policy on a graph of g's size plus
 * the re-runs, and 2 stream plans (3 simulations each) per 0.125% of
 * the bound's slack (at most 164). On graphs past
 * HOFF_RC_BIG_OPS ops: a simulation of the plan without recomputation at
 * its peak, and nothing more unless an activation a plan would drop is
 * resident there; then one variant (segments of 1) and one stream plan
 * (on a million-op graph the expanded graph's greedy run is then most of
 * the cost, about greedy's own). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "baselines.h"
#include "checkpoint.h"
#include "greedy.h"
#include "greedy_recompute.h"
#include "recompute_plan.h"
#include "recompute_stream.h"
#include "sim.h"

#define HOFF_RC_BIG_OPS 50000

static const int32_t seg_sizes[] = {1, 2, 3, 4, 6, 8};
#define NSEG ((int)(sizeof seg_sizes / sizeof seg_sizes[0]))

/* One candidate schedule of g with its simulated figures. */
typedef struct rc_cand {
	hoff_sched *s;
	hoff_policy_report rep;
	int64_t peak, makespan, peak_ps;
	bool fits;
	char what[32];
} rc_cand;

/* The run: g, the options, the objective, the best so far. */
typedef struct rc_run {
	const hoff_graph *g;
	hoff_policy_opts o; /* recompute off */
	const hoff_analysis *an;
	int64_t bound; /* ps, without a budget */
	rc_cand best;
	int32_t iters;
	int64_t least_peak, least_ms;
	char least_src[32];
	hoff_progress progress; /* the caller's; the inner runs are quiet */
} rc_run;

hoff_status hoff_plan_without_recompute(const hoff_graph *g,
					const hoff_policy_opts *o,
					hoff_sched **out,
					hoff_policy_report *rep, hoff_err *e)
{
	memset(rep, 0, sizeof *rep);
	rep->none_peak_bytes = HOFF_NONE;
	rep->none_makespan_ps = HOFF_NONE;
	*out = NULL;
	if (o->kind == HOFF_POLICY_GREEDY)
		return hoff_greedy_run(g, o, out, rep, e);
	hoff_status st;
	if (o->kind == HOFF_POLICY_CHECKPOINT ||
	    o->kind == HOFF_POLICY_CHECKPOINT_REACTIVE)
		st = hoff_checkpoint_plan(
			g, o->kind == HOFF_POLICY_CHECKPOINT_REACTIVE, out,
			rep->note, sizeof rep->note, e);
	else
		st = hoff_baseline_plan(g, o, out, e);
	if (st == HOFF_OK)
		hoff_policy_name(o, rep->source, sizeof rep->source);
	return st;
}

/* Whether a beats b under the objective. */
static bool better(const rc_run *r, const rc_cand *a, const rc_cand *b)
{
	if (!b->s)
		return true;
	if (a->fits != b->fits)
		return a->fits;
	bool budget = r->o.budget_bytes != HOFF_NONE;
	if (a->fits == budget) { /* fits a budget, or misses a bound */
		if (a->makespan != b->makespan)
			return a->makespan < b->makespan;
		return a->peak < b->peak;
	}
	if (a->peak != b->peak)
		return a->peak < b->peak;
	return a->makespan < b->makespan;
}

/* Simulates c->s on g, sets its figures, keeps it if better (else frees
 * it). */
static hoff_status judge(rc_run *r, rc_cand *c, hoff_err *e)
{
	hoff_sim_opts so = hoff_sim_defaults();
	so.budget_bytes = INT64_MAX;
	hoff_sim_result sr;
	hoff_status st = hoff_sim_run(r->g, c->s, &so, &sr, e);
	if (st != HOFF_OK) {
		hoff_sched_free(c->s);
		return st;
	}
	c->peak = sr.summary.peak_bytes;
	c->makespan = sr.summary.makespan_ps;
	c->peak_ps = sr.peak_ps;
	bool valid = sr.valid;
	hoff_sim_result_free(&sr);
	hoff_say(&r->progress, "recompute: %s: peak %lld B, makespan %.9g s%s",
		 c->what, (long long)c->peak, hoff_s(c->makespan),
		 valid ? "" : " (invalid: not kept)");
	if (!valid) { /* never kept (recompute.h says it cannot happen) */
		hoff_sched_free(c->s);
		return HOFF_OK;
	}
	c->fits = r->o.budget_bytes != HOFF_NONE ? c->peak <= r->o.budget_bytes
						 : c->makespan <= r->bound;
	if (c->peak < r->least_peak ||
	    (c->peak == r->least_peak && c->makespan < r->least_ms)) {
		r->least_peak = c->peak;
		r->least_ms = c->makespan;
		snprintf(r->least_src, sizeof r->least_src, "%.31s", c->what);
	}
	if (better(r, c, &r->best)) {
		hoff_sched_free(r->best.s);
		r->best = *c;
	} else {
		hoff_sched_free(c->s);
	}
	return HOFF_OK;
}

/* The activations of x's graph that cross from the forward pass (an op
 * of g's forward, L) into the backward, each at least small bytes, into
 * *sp (none when !on); HOFF_ENOMEM. */
static hoff_status spans_of(const hoff_rc_graph *x, const hoff_rc_layers *L,
			    bool on, hoff_rc_spans *sp)
{
	const hoff_graph *g2 = x->g2;
	size_t nt = (size_t)g2->ntensors + 1, no = (size_t)g2->nops + 2;
	sp->a = hoff_alloc(nt, sizeof *sp->a);
	sp->b = hoff_alloc(nt, sizeof *sp->b);
	sp->at_off = hoff_zalloc(no, sizeof *sp->at_off);
	sp->at = hoff_alloc(nt, sizeof *sp->at);
	if (!sp->a || !sp->b || !sp->at_off || !sp->at)
		return HOFF_ENOMEM;
	int64_t small = on ? hoff_small_below(g2, NULL) : 0;
#define FWD2(k) (!x->is_rc[k] && L->fwd[x->op_of[k]])
	for (int32_t v = 0; v < g2->ntensors; v++) {
		const hoff_tensor *t = &g2->tensor[v];
		sp->a[v] = sp->b[v] = HOFF_NONE;
		if (!on || t->producer == HOFF_NONE ||
		    hoff_tensor_persistent(t) || !hoff_tensor_offload(t) ||
		    (t->kind != HOFF_KIND_ACTIVATION &&
		     t->kind != HOFF_KIND_OTHER) ||
		    small < 0 || t->bytes < small)
			continue;
		int32_t prev = t->producer;
		for (int64_t j = g2->use_off[v]; j < g2->use_off[v + 1]; j++) {
			int32_t u = g2->use[j];
			if (FWD2(prev) && !FWD2(u) && u > prev + 1) {
				sp->a[v] = prev;
				sp->b[v] = u;
				sp->at_off[prev + 1]++;
				break;
			}
			prev = u;
		}
	}
#undef FWD2
	for (int32_t k = 0; k < g2->nops; k++)
		sp->at_off[k + 1] += sp->at_off[k];
	int64_t *fill = hoff_alloc(no, sizeof *fill);
	if (!fill)
		return HOFF_ENOMEM;
	memcpy(fill, sp->at_off, no * sizeof *fill);
	for (int32_t v = 0; v < g2->ntensors; v++)
		if (sp->a[v] != HOFF_NONE)
			sp->at[fill[sp->a[v]]++] = v;
	free(fill);
	return HOFF_OK;
}

/* The stream plans of x (recompute_stream.h), with and without the
 * crossing activations moved, at targets M from the lower bound up to
 * the bound: each mapped back and judged. */
static hoff_status try_stream(rc_run *r, const hoff_rc_graph *x,
			      const hoff_rc_layers *L, int32_t seg, hoff_err *e)
{
	hoff_status st = HOFF_OK;
	int64_t lb = r->an->lower_bound_ps;
	int64_t hi = r->o.budget_bytes != HOFF_NONE ? lb : r->bound;
	bool big = r->g->nops > HOFF_RC_BIG_OPS; /* one plan: out, M hi */
	for (int on = 1; on >= big && st == HOFF_OK; on--) {
		hoff_rc_spans sp = {0};
		if (spans_of(x, L, on, &sp) != HOFF_OK) {
			hoff_rc_spans_free(&sp);
			return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
		}
		/* M in steps of lb / 800 (0.125%), at most 80, then hi: a
		 * looser bound tries every target a tighter one did */
		int64_t step = lb / 800 > 0 ? lb / 800 : 1;
		int64_t nm = (hi - lb) / step < 80 ? (hi - lb) / step : 80;
		for (int64_t i = big ? nm + 1 : 0; i <= nm + 1 && st == HOFF_OK;
		     i++) {
			int64_t M = i <= nm ? lb + step * i : hi;
			hoff_sched *s2 = NULL;
			hoff_summary sum;
			st = hoff_rc_stream(x->g2, &sp, M, r->bound, &s2, &sum,
					    e);
			if (st != HOFF_OK || !s2)
				break;
			rc_cand c = {.rep = r->best.rep};
			c.s = hoff_rc_map(x, s2);
			hoff_sched_free(s2);
			if (!c.s) {
				st = hoff_seterr(e, HOFF_ENOMEM,
						 "out of memory");
				break;
			}
			snprintf(c.what, sizeof c.what, "stream%s+recompute:%d",
				 on ? "+out" : "", (int)seg);
			st = judge(r, &c, e);
		}
		hoff_rc_spans_free(&sp);
	}
	return st;
}

/* Whether plan P cannot beat the best: it fits the bound, and the ops'
 * compute with P's re-runs already passes it (no schedule is faster than
 * its compute steps). */
static bool over_bound(const rc_run *r, const hoff_rc_plan *P, int32_t seg)
{
	if (r->o.budget_bytes != HOFF_NONE || !r->best.fits)
		return false;
	int64_t rec = 0;
	for (int64_t i = 0; i < P->nev; i++)
		rec += r->g->op[P->ev[i].op].time_ps;
	if (r->an->compute_ps + rec <= r->bound)
		return false;
	hoff_say(&r->progress,
		 "recompute: segments of %d: compute and re-runs (%.9g s) "
		 "pass the bound (%.9g s): not planned",
		 (int)seg, hoff_s(r->an->compute_ps + rec), hoff_s(r->bound));
	return true;
}

/* The policy planned on g with the plan of segments seg: expanded,
 * planned, mapped back, judged. */
static hoff_status try_segments(rc_run *r, hoff_rc_layers *L, int32_t seg,
				hoff_err *e)
{
	hoff_rc_plan P = {0};
	hoff_rc_graph x = {0};
	hoff_analysis an2;
	hoff_sched *s2 = NULL;
	rc_cand c = {0};
	hoff_status st = hoff_rc_layers_plan(L, seg, &P);
	if (st != HOFF_OK || P.nev == 0 || over_bound(r, &P, seg))
		goto out;
	if ((st = hoff_rc_build(r->g, &P, &x, e)) != HOFF_OK ||
	    (st = hoff_analyze(x.g2, &an2, e)) != HOFF_OK)
		goto out;
	/* the bound is g's: the re-runs are the plan's own cost */
	an2.lower_bound_ps = r->an->lower_bound_ps;
	hoff_policy_opts o2 = r->o;
	o2.analysis = &an2;
	if ((st = hoff_plan_without_recompute(x.g2, &o2, &s2, &c.rep, e)) !=
	    HOFF_OK)
		goto out;
	r->iters += c.rep.iterations;
	if (!(c.s = hoff_rc_map(&x, s2))) {
		st = hoff_seterr(e, HOFF_ENOMEM, "out of memory");
		goto out;
	}
	snprintf(c.what, sizeof c.what, "%.16s+recompute:%d", c.rep.source,
		 (int)seg);
	if ((st = judge(r, &c, e)) == HOFF_OK &&
	    r->o.kind == HOFF_POLICY_GREEDY)
		st = try_stream(r, &x, L, seg, e);
out:
	hoff_sched_free(s2);
	hoff_rc_graph_free(&x);
	hoff_rc_plan_free(&P);
	return st;
}

/* The plan without recomputation and, for greedy, the checkpoint
 * baselines. */
static hoff_status try_plain(rc_run *r, hoff_policy_report *rep0, hoff_err *e)
{
	rc_cand c = {0};
	hoff_status st =
		hoff_plan_without_recompute(r->g, &r->o, &c.s, &c.rep, e);
	if (st != HOFF_OK)
		return st;
	*rep0 = c.rep;
	r->iters += c.rep.iterations;
	snprintf(c.what, sizeof c.what, "%.31s", c.rep.source);
	if ((st = judge(r, &c, e)) != HOFF_OK)
		return st;
	if (r->o.kind == HOFF_POLICY_NONE && r->best.s) {
		rep0->none_peak_bytes = r->best.peak;
		rep0->none_makespan_ps = r->best.makespan;
	}
	if (r->o.kind != HOFF_POLICY_GREEDY)
		return st;
	for (int i = 0; i < 2 && st == HOFF_OK; i++) {
		hoff_policy_opts oc = r->o;
		oc.kind = i ? HOFF_POLICY_CHECKPOINT_REACTIVE
			    : HOFF_POLICY_CHECKPOINT;
		rc_cand k = {0};
		if ((st = hoff_plan_without_recompute(r->g, &oc, &k.s, &k.rep,
						      e)) == HOFF_OK) {
			snprintf(k.what, sizeof k.what, "%.31s", k.rep.source);
			st = judge(r, &k, e);
		}
	}
	return st;
}

/* The bytes of L's dropped activations resident at the best plan's
 * peak (a graph past HOFF_RC_BIG_OPS ops is planned with recomputation
 * only when some are: re-running ops frees nothing else there); -1 on
 * OOM. */
static int64_t droppable_at_peak(const rc_run *r, const hoff_rc_layers *L,
				 hoff_err *e)
{
	hoff_sim_opts so = hoff_sim_defaults();
	so.budget_bytes = INT64_MAX;
	so.snapshot_ps = r->best.peak_ps;
	hoff_sim_result sr;
	if (hoff_sim_run(r->g, r->best.s, &so, &sr, e) != HOFF_OK)
		return -1;
	int64_t sum = 0;
	for (int64_t i = 0; i < sr.nsnap; i++)
		if (L->dropok[sr.snap[i]])
			sum += r->g->tensor[sr.snap[i]].bytes;
	hoff_sim_result_free(&sr);
	return sum;
}

/* The report: the winner's, with g's figures. */
static void report(rc_run *r, const hoff_policy_report *rep0,
		   hoff_policy_report *rep, int32_t nseg)
{
	*rep = r->best.rep;
	rep->peak_bytes = r->best.peak;
	rep->makespan_ps = r->best.makespan;
	rep->feasible = r->best.fits;
	rep->lower_bound_ps = r->an->lower_bound_ps;
	rep->noffload_peak_bytes = r->an->closed_peak_bytes;
	rep->none_peak_bytes = rep0->none_peak_bytes;
	rep->none_makespan_ps = rep0->none_makespan_ps;
	rep->floor_bytes = rep0->floor_bytes;
	rep->floor_op = rep0->floor_op;
	rep->iterations = r->iters;
	rep->least_peak_bytes = r->least_peak;
	rep->least_makespan_ps = r->least_ms;
	snprintf(rep->least_source, sizeof rep->least_source, "%.31s",
		 r->least_src);
	snprintf(rep->source, sizeof rep->source, "%.31s", r->best.what);
	int64_t nrec = 0, ndrop = 0;
	for (int64_t i = 0; i < r->best.s->nsteps; i++) {
		nrec += r->best.s->step[i].kind == HOFF_STEP_RECOMPUTE;
		ndrop += r->best.s->step[i].kind == HOFF_STEP_DROP;
	}
	char prev[sizeof rep->note];
	snprintf(prev, sizeof prev, "%s", rep->note);
	snprintf(rep->note, sizeof rep->note,
		 "recompute: %d segment plans tried, best %.31s (%lld "
		 "recomputes, %lld drops)%s%.300s",
		 nseg, r->best.what, (long long)nrec, (long long)ndrop,
		 prev[0] ? "; " : "", prev);
}

hoff_status hoff_recompute_run(const hoff_graph *g, const hoff_policy_opts *o,
			       hoff_sched **out, hoff_policy_report *rep,
			       hoff_err *e)
{
	*out = NULL;
	memset(rep, 0, sizeof *rep);
	hoff_analysis own;
	rc_run r = {.g = g, .o = *o, .least_peak = INT64_MAX};
	r.o.recompute = false;
	r.progress = o->progress;
	r.o.progress.fn = NULL;
	hoff_status st = hoff_analysis_use(g, o->analysis, &own, &r.an, e);
	if (st != HOFF_OK)
		return st;
	r.o.analysis = r.an;
	double bd =
		floor((1.0 + o->max_overhead) * (double)r.an->lower_bound_ps);
	r.bound = bd < (double)HOFF_PS_LIMIT ? (int64_t)bd : HOFF_PS_LIMIT;
	hoff_policy_report rep0;
	hoff_rc_layers L;
	if ((st = try_plain(&r, &rep0, e)) != HOFF_OK)
		goto out;
	if (o->kind != HOFF_POLICY_GREEDY && o->budget_bytes == HOFF_NONE &&
	    r.best.s) {
		/* a baseline aims at no bound: the least peak no slower
		 * than the baseline without recomputation */
		r.bound = r.best.makespan;
		r.best.fits = true;
	}
	if (hoff_rc_layers_init(&L, g) != HOFF_OK) {
		st = hoff_seterr(e, HOFF_ENOMEM, "out of memory");
		goto out;
	}
	bool big = g->nops > HOFF_RC_BIG_OPS;
	int nseg = big ? 1 : NSEG, tried = 0;
	int32_t npair = L.npair;
	int64_t at_peak = big && npair ? droppable_at_peak(&r, &L, e) : 1;
	if (at_peak < 0)
		st = hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	for (int i = 0; i < nseg && st == HOFF_OK && npair && at_peak > 0;
	     i++, tried++)
		st = try_segments(&r, &L, seg_sizes[i], e);
	hoff_rc_layers_free(&L);
	if (st == HOFF_OK && !r.best.s)
		st = hoff_seterr(e, HOFF_EINTERNAL,
				 "recompute: no plan was valid");
	if (st != HOFF_OK)
		goto out;
	report(&r, &rep0, rep, tried);
	if (!npair)
		snprintf(rep->note, sizeof rep->note, "%s",
			 "recompute: no layer has a forward and a backward "
			 "run: planned without recomputation");
	else if (!at_peak)
		snprintf(rep->note, sizeof rep->note, "%s",
			 "recompute: no activation it could drop is resident "
			 "at the peak: planned without recomputation");
	*out = r.best.s;
	r.best.s = NULL;
out:
	hoff_sched_free(r.best.s);
	return st;
}
