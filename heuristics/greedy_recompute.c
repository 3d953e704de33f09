/* greedy_recompute.c: `--recompute` (greedy_recompute.h). Each plan of
 * recompute_plan.c (segments of 1, 2, 3, 4, 6 and 8 layers) turns g into
 * an expanded graph (recompute.h) in which the re-runs are ops and the
 * re-made tensors new ones; the policy then plans it unchanged: greedy
 * weighs, for every re-made version and every kept activation, keeping
 * it against moving it, against the timeline that the re-runs lengthen
 * (a re-run spends compute-stream time, which costs nothing where the
 * stream waits on the link anyway). The plan without recomputation and,
 * for greedy, policy checkpoint and checkpoint+reactive compete too, and
 * the stream plans (recompute_stream.h) of each expanded graph, made
 * first: greedy's peak search on the expanded graph then tries only
 * targets under the least peak found within the bound
 * (hoff_policy_opts.peak_to_beat). Each candidate is mapped back to g;
 * the best under the run's objective wins (the bound: least peak, then
 * makespan; a budget: least makespan, then peak; a baseline without a
 * budget: the least peak no slower than its plan without recomputation),
 * simulated on g (a plan of an expanded graph has the same figures on g,
 * byte for byte, so one that cannot win is not simulated again), so
 * --recompute never does worse than the same run without it.
 * Greedy's plan without recomputation runs beside the rest of the first
 * step (the checkpoint baselines, the first expanded graph and its stream
 * plans, on a second thread; each reads g and the options and writes its
 * own results); the candidates are then judged in a fixed order, so the
 * answer does not depend on the threads. On a big graph that first
 * expanded graph is built before it is known whether greedy will plan it
 * (an activation to drop at the peak): CPU spent beside greedy.
 * Cost: per variant, one plan of the policy on a graph of g's size plus
 * the re-runs, and 2 stream plans (3 simulations each) per 0.125% of
 * the bound's slack (at most 164). On graphs past HOFF_RC_BIG_OPS ops:
 * one variant (segments of 1) and one stream plan, and greedy on the
 * expanded graph only if an activation a plan would drop is resident at
 * the peak of the plan without recomputation (a simulation); past
 * greedy's BIG_OPS ops its baselines are left out (greedy_portfolio.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

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
	/* peak and makespan simulated on the expanded graph the schedule
	 * was planned on (the same on g, byte for byte: recompute.h), so
	 * that it is simulated on g only when it would win; else measured
	 * on g (valid, peak_ps) */
	bool known, measured, valid;
	char what[32];
} rc_cand;

/* The run: g, the options, the objective, the best so far. */
typedef struct rc_run {
	const hoff_graph *g;
	hoff_policy_opts o; /* recompute off */
	const hoff_analysis *an;
	int64_t bound; /* ps, without a budget */
	/* where the plan without recomputation misses the bound, its peak:
	 * a plan that misses it too is kept only at or under that peak
	 * (then the fastest), so --recompute is never worse on either;
	 * else INT64_MAX */
	int64_t miss_cap;
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

/* Whether c meets the run's constraint (the budget, or the bound). */
static bool meets(const rc_run *r, const rc_cand *c)
{
	return r->o.budget_bytes != HOFF_NONE ? c->peak <= r->o.budget_bytes
					      : c->makespan <= r->bound;
}

/* Whether a beats b under the objective. */
static bool better(const rc_run *r, const rc_cand *a, const rc_cand *b)
{
	if (!a->fits && r->o.budget_bytes == HOFF_NONE && a->peak > r->miss_cap)
		return false;
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

/* The least peak (then makespan) so far: *peak, *ms, named src; a first
 * one seen wins a tie. */
static void least(int64_t *peak, int64_t *ms, char src[32], const rc_cand *c)
{
	if (c->peak < *peak || (c->peak == *peak && c->makespan < *ms)) {
		*peak = c->peak;
		*ms = c->makespan;
		snprintf(src, 32, "%.31s", c->what);
	}
}

/* Simulates c->s on g into c's figures; reads r only (a thread may
 * measure beside another). */
static hoff_status measure(const rc_run *r, rc_cand *c, hoff_err *e)
{
	hoff_sim_opts so = hoff_sim_defaults();
	so.budget_bytes = INT64_MAX;
	hoff_sim_result sr;
	hoff_status st = hoff_sim_run(r->g, c->s, &so, &sr, e);
	if (st != HOFF_OK)
		return st;
	c->peak = sr.summary.peak_bytes;
	c->makespan = sr.summary.makespan_ps;
	c->peak_ps = sr.peak_ps;
	c->valid = sr.valid;
	c->measured = true;
	hoff_sim_result_free(&sr);
	return HOFF_OK;
}

static void say(const rc_run *r, const rc_cand *c, const char *more)
{
	hoff_say(&r->progress, "recompute: %s: peak %lld B, makespan %.9g s%s",
		 c->what, (long long)c->peak, hoff_s(c->makespan), more);
}

/* Keeps c if it beats the best, else frees it: c measured on g, or its
 * figures known from its expanded graph (then it is simulated on g only
 * when they would win, and kept on g's figures). */
static hoff_status judge(rc_run *r, rc_cand *c, hoff_err *e)
{
	hoff_status st = HOFF_OK;
	if (c->known && !c->measured) {
		c->fits = meets(r, c);
		if (!better(r, c, &r->best)) {
			least(&r->least_peak, &r->least_ms, r->least_src, c);
			say(r, c, "");
			hoff_sched_free(c->s);
			return HOFF_OK;
		}
	}
	if (!c->measured && (st = measure(r, c, e)) != HOFF_OK) {
		hoff_sched_free(c->s);
		return st;
	}
	say(r, c, c->valid ? "" : " (invalid: not kept)");
	if (!c->valid) { /* never kept (recompute.h says it cannot happen) */
		hoff_sched_free(c->s);
		return HOFF_OK;
	}
	c->fits = meets(r, c);
	least(&r->least_peak, &r->least_ms, r->least_src, c);
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

/* The stream plans of one expanded graph, judged among themselves by
 * their figures on it: the best (its schedule on the expanded graph,
 * mapped to g only when the run judges it) and the least peak. better()
 * and least() choose the first of equals, so judging the pool's best
 * after the candidates before it gives what judging each in turn would;
 * but for the first segment plan's pool, made beside the plan without
 * recomputation, miss_cap is not known yet: where that plan misses the
 * bound, a fastest stream plan over its peak is not kept, and a slower
 * one under it not tried (a chance lost, never a worse answer). */
typedef struct rc_pool {
	rc_cand best;	/* .s NULL: none */
	hoff_sched *s2; /* best's schedule of the expanded graph */
	int64_t least_peak, least_ms;
	char least_src[32];
	int32_t n; /* plans made */
} rc_pool;

/* The stream plans of x (recompute_stream.h), with and without the
 * crossing activations moved, at targets M from the lower bound up to
 * the bound, into pool p; reads r only. */
static hoff_status stream_pool(const rc_run *r, const hoff_rc_graph *x,
			       const hoff_rc_layers *L, int32_t seg, rc_pool *p,
			       hoff_err *e)
{
	hoff_status st = HOFF_OK;
	int64_t lb = r->an->lower_bound_ps;
	int64_t hi = r->o.budget_bytes != HOFF_NONE ? lb : r->bound;
	bool big = r->g->nops > HOFF_RC_BIG_OPS; /* one plan: out, M hi */
	*p = (rc_pool){.least_peak = INT64_MAX};
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
			if (st != HOFF_OK || !s2) {
				hoff_sched_free(s2);
				break;
			}
			rc_cand c = {.s = s2,
				     .known = true,
				     .peak = sum.peak_bytes,
				     .makespan = sum.makespan_ps};
			snprintf(c.what, sizeof c.what, "stream%s+recompute:%d",
				 on ? "+out" : "", (int)seg);
			c.fits = meets(r, &c);
			least(&p->least_peak, &p->least_ms, p->least_src, &c);
			p->n++;
			if (better(r, &c, &p->best)) {
				hoff_sched_free(p->s2);
				p->best = c;
				p->s2 = s2;
			} else {
				hoff_sched_free(s2);
			}
		}
		hoff_rc_spans_free(&sp);
	}
	p->best.s = NULL; /* set by pool_judge */
	return st;
}

/* Judges pool p of x (its least peak, then its best mapped to g). */
static hoff_status pool_judge(rc_run *r, const hoff_rc_graph *x, rc_pool *p,
			      hoff_err *e)
{
	if (!p->s2)
		return HOFF_OK;
	hoff_say(&r->progress,
		 "recompute: %d stream plans, the least peak %lld B", (int)p->n,
		 (long long)p->least_peak);
	rc_cand lp = {.peak = p->least_peak, .makespan = p->least_ms};
	snprintf(lp.what, sizeof lp.what, "%.31s", p->least_src);
	least(&r->least_peak, &r->least_ms, r->least_src, &lp);
	rc_cand c = p->best;
	c.rep = r->best.rep;
	c.s = hoff_rc_map(x, p->s2);
	hoff_sched_free(p->s2);
	p->s2 = NULL;
	if (!c.s)
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	return judge(r, &c, e);
}

/* The compute of g's ops and plan P's re-runs: no schedule with P is
 * faster. */
static int64_t with_reruns(const rc_run *r, const hoff_rc_plan *P)
{
	int64_t ps = r->an->compute_ps;
	for (int64_t i = 0; i < P->nev; i++)
		ps += r->g->op[P->ev[i].op].time_ps;
	return ps;
}

/* A segment plan's expanded graph and its stream plans, made apart from
 * the run (the first beside greedy's plan without recomputation). */
typedef struct rc_seg {
	int32_t seg;
	hoff_rc_plan P;
	hoff_rc_graph x;
	hoff_analysis an2;
	rc_pool pool;
	bool built; /* false: not built (yet), no re-run, or their compute
		       passes the bound */
	bool over;  /* the latter */
} rc_seg;

static void seg_free(rc_seg *sg)
{
	hoff_sched_free(sg->pool.s2);
	hoff_rc_graph_free(&sg->x);
	hoff_rc_plan_free(&sg->P);
	memset(sg, 0, sizeof *sg);
}

/* Builds the expanded graph of L's plan with segments of sg->seg layers
 * and, for greedy, its stream plans, unless the plan re-runs nothing or
 * (unless all) its re-runs pass the bound; reads r only. */
static hoff_status seg_build(const rc_run *r, hoff_rc_layers *L, rc_seg *sg,
			     bool all, hoff_err *e)
{
	if (hoff_rc_layers_plan(L, sg->seg, &sg->P) != HOFF_OK)
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	if (sg->P.nev == 0)
		return HOFF_OK;
	hoff_status st;
	sg->over = !all && r->o.budget_bytes == HOFF_NONE &&
		   with_reruns(r, &sg->P) > r->bound;
	if (sg->over)
		return HOFF_OK;
	if ((st = hoff_rc_build(r->g, &sg->P, &sg->x, e)) != HOFF_OK ||
	    (st = hoff_analyze(sg->x.g2, &sg->an2, e)) != HOFF_OK)
		return st;
	/* the bound is g's: the re-runs are the plan's own cost */
	sg->an2.lower_bound_ps = r->an->lower_bound_ps;
	sg->built = true;
	if (r->o.kind == HOFF_POLICY_GREEDY)
		st = stream_pool(r, &sg->x, L, sg->seg, &sg->pool, e);
	return st;
}

/* Whether sg's plan cannot beat the best: the best fits the bound, and
 * the plan's re-runs pass it. */
static bool seg_skip(rc_run *r, const rc_seg *sg)
{
	if (!sg->over || !r->best.fits)
		return false;
	hoff_say(&r->progress,
		 "recompute: segments of %d: compute and re-runs (%.9g s) "
		 "pass the bound (%.9g s): not planned",
		 (int)sg->seg, hoff_s(with_reruns(r, &sg->P)),
		 hoff_s(r->bound));
	return true;
}

/* The segment plan sg judged: its stream plans, then the policy planned
 * on its expanded graph (for greedy, with the least peak within the
 * bound so far to beat), mapped back. A plan whose re-runs pass the
 * bound is built now when the best misses the bound too. */
static hoff_status try_segments(rc_run *r, hoff_rc_layers *L, rc_seg *sg,
				hoff_err *e)
{
	hoff_status st = HOFF_OK;
	if (seg_skip(r, sg))
		return HOFF_OK;
	if (sg->over) { /* the best misses the bound: planned all the same */
		int32_t seg = sg->seg;
		seg_free(sg);
		sg->seg = seg;
		if ((st = seg_build(r, L, sg, true, e)) != HOFF_OK)
			return st;
	}
	if (!sg->built || (st = pool_judge(r, &sg->x, &sg->pool, e)) != HOFF_OK)
		return st;
	hoff_policy_opts o2 = r->o;
	o2.analysis = &sg->an2;
	if (r->o.budget_bytes == HOFF_NONE && r->best.s && r->best.fits)
		o2.peak_to_beat = r->best.peak;
	hoff_sched *s2 = NULL;
	rc_cand c = {0};
	if ((st = hoff_plan_without_recompute(sg->x.g2, &o2, &s2, &c.rep, e)) !=
	    HOFF_OK)
		goto out;
	r->iters += c.rep.iterations;
	if (!(c.s = hoff_rc_map(&sg->x, s2))) {
		st = hoff_seterr(e, HOFF_ENOMEM, "out of memory");
		goto out;
	}
	/* greedy's figures are simulated; a baseline's are not */
	c.known = r->o.kind == HOFF_POLICY_GREEDY;
	c.peak = c.rep.peak_bytes;
	c.makespan = c.rep.makespan_ps;
	snprintf(c.what, sizeof c.what, "%.16s+recompute:%d", c.rep.source,
		 (int)sg->seg);
	st = judge(r, &c, e);
out:
	hoff_sched_free(s2);
	return st;
}

/* Policy checkpoint (i 0) or checkpoint+reactive (i 1) planned and
 * measured into *k; reads r only. */
static hoff_status plan_checkpoint(const rc_run *r, int i, rc_cand *k,
				   hoff_err *e)
{
	hoff_policy_opts oc = r->o;
	oc.kind = i ? HOFF_POLICY_CHECKPOINT_REACTIVE : HOFF_POLICY_CHECKPOINT;
	hoff_status st =
		hoff_plan_without_recompute(r->g, &oc, &k->s, &k->rep, e);
	if (st == HOFF_OK) {
		hoff_policy_name(&oc, k->what, sizeof k->what);
		st = measure(r, k, e);
	}
	return st;
}

/* The first step: the plan without recomputation (*c0) and, for greedy,
 * beside it on a second thread, the first segment plan (sg, unless NULL:
 * it writes L's scratch, which no other part reads) and the checkpoint
 * baselines (k), whichever thread is free first taking the next; nothing
 * judged. Greedy's own threads stay with it (nested). The first error,
 * in that order, wins. */
static hoff_status first_step(const rc_run *r, hoff_rc_layers *L, rc_cand *c0,
			      rc_cand k[2], rc_seg *sg, hoff_err *e)
{
	hoff_status st[4] = {HOFF_OK, HOFF_OK, HOFF_OK, HOFF_OK};
	hoff_err e4[4] = {{{0}}};
	int n = r->o.kind == HOFF_POLICY_GREEDY ? 4 : 1, nt = 1;
#ifdef _OPENMP
	int levels = omp_get_max_active_levels();
	nt = n > 1 && omp_get_max_threads() > 1 ? 2 : 1;
	if (nt > 1 && levels < 2)
		omp_set_max_active_levels(2);
#endif
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
	for (int i = 0; i < n; i++) {
		if (i == 0)
			st[0] = hoff_plan_without_recompute(r->g, &r->o, &c0->s,
							    &c0->rep, &e4[0]);
		else if (i == 1)
			st[1] = sg ? seg_build(r, L, sg, false, &e4[1])
				   : HOFF_OK;
		else
			st[i] = plan_checkpoint(r, i - 2, &k[i - 2], &e4[i]);
	}
#ifdef _OPENMP
	if (nt > 1 && levels < 2)
		omp_set_max_active_levels(levels);
#endif
	(void)nt; /* without OpenMP */
	for (int i = 0; i < n; i++)
		if (st[i] != HOFF_OK) {
			if (e)
				*e = e4[i];
			return st[i];
		}
	return HOFF_OK;
}

/* The bytes of L's dropped activations resident at the peak of the best
 * plan, the plan without recomputation when called (a graph past
 * HOFF_RC_BIG_OPS ops is planned with recomputation only when some are:
 * re-running ops frees nothing else there); -1 on OOM. */
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
	rep->peak_ps = r->best.peak_ps;
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
	rc_run r = {.g = g,
		    .o = *o,
		    .least_peak = INT64_MAX,
		    .miss_cap = INT64_MAX};
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
	if (hoff_rc_layers_init(&L, g) != HOFF_OK)
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	bool big = g->nops > HOFF_RC_BIG_OPS;
	int nseg = !L.npair ? 0 : big ? 1 : NSEG, tried = 0;
	rc_cand c0 = {0}, k[2] = {{0}};
	rc_seg sg = {.seg = nseg ? seg_sizes[0] : 0};
	/* greedy builds the first segment plan in the first step; a
	 * baseline after it, against its own makespan as the bound */
	bool early = o->kind == HOFF_POLICY_GREEDY && nseg;
	if ((st = first_step(&r, &L, &c0, k, early ? &sg : NULL, e)) !=
	    HOFF_OK) {
		hoff_sched_free(c0.s);
		hoff_sched_free(k[0].s);
		hoff_sched_free(k[1].s);
		goto out;
	}
	rep0 = c0.rep;
	r.iters += c0.rep.iterations;
	if (o->kind == HOFF_POLICY_GREEDY) { /* greedy simulated it on g */
		c0.peak = c0.rep.peak_bytes;
		c0.makespan = c0.rep.makespan_ps;
		c0.peak_ps = c0.rep.peak_ps;
		c0.measured = c0.valid = true;
	}
	snprintf(c0.what, sizeof c0.what, "%.31s", c0.rep.source);
	st = judge(&r, &c0, e);
	if (st == HOFF_OK && r.best.s && !r.best.fits)
		r.miss_cap = r.best.peak;
	if (st == HOFF_OK && o->kind == HOFF_POLICY_NONE && r.best.s) {
		rep0.none_peak_bytes = r.best.peak;
		rep0.none_makespan_ps = r.best.makespan;
	}
	if (st == HOFF_OK && o->kind != HOFF_POLICY_GREEDY &&
	    o->budget_bytes == HOFF_NONE && r.best.s) {
		/* a baseline aims at no bound: the least peak no slower
		 * than the baseline without recomputation */
		r.bound = r.best.makespan;
		r.best.fits = true;
	}
	/* at the peak of the plan without recomputation */
	int64_t at_peak = st == HOFF_OK && big && nseg && r.best.s
				  ? droppable_at_peak(&r, &L, e)
				  : 1;
	if (at_peak < 0)
		st = hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	for (int i = 0; i < 2; i++) {
		if (st == HOFF_OK && k[i].s)
			st = judge(&r, &k[i], e);
		else
			hoff_sched_free(k[i].s);
	}
	if (at_peak <= 0)
		nseg = 0;
	for (int i = 0; st == HOFF_OK && i < nseg; i++, tried++) {
		if (i > 0 || !early) {
			seg_free(&sg);
			sg.seg = seg_sizes[i];
			st = seg_build(&r, &L, &sg, false, e);
		}
		if (st == HOFF_OK)
			st = try_segments(&r, &L, &sg, e);
	}
	if (st == HOFF_OK && !r.best.s)
		st = hoff_seterr(e, HOFF_EINTERNAL,
				 "recompute: no plan was valid");
	if (st != HOFF_OK)
		goto out;
	report(&r, &rep0, rep, tried);
	if (!L.npair)
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
	seg_free(&sg);
	hoff_rc_layers_free(&L);
	hoff_sched_free(r.best.s);
	return st;
}
