/* peak_search.c: overhead mode's least peak, by a search on budget-mode
 * feasibility probes between a bound and the best schedule found. */
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


/* ---------------------------------------------------------------------
 * Overhead mode: the least peak, by a search on feasibility probes.
 *
 * The min-peak objective's LP relaxation is weak where profiles are flat,
 * and GLPK closes no gap on it. Budget mode is solved to optimality in
 * seconds, so the peak is searched with budget-mode models:
 *
 *   feasible(c) <=> the budget-mode model with cap c and the row
 *                   sum_k s_k <= S,  S = bound_ps - sum_k d_k,
 *                   has a solution,
 *
 * answered first by greedy planned under the cap c, repaired on the
 * simulator and mapped into the probe's model (probe_heuristic), and
 * else, in the branching phase, by branch and bound with its own
 * objective (min sum_k s_k), stopped at the first incumbent. With P* the
 * least model peak (the overhead model's optimum), the search keeps
 * lo <= P* <= hi:
 *   hi: the model peak (hoff_ilp_model_peak, exact in bytes) of the best
 *       solution known: greedy's, mapped into the overhead model, at
 *       first; a feasible probe gives a solution of peak p: hi = p when
 *       lower (often well below the cap: peaks are sums of tensor sizes);
 *   lo: the overhead model's floor (its LP relaxation, or what no
 *       offloading can remove) at first; an infeasible probe at cap c (a
 *       presolve, LP relaxation or constant row may prove it) shows
 *       P* > c.
 * Phases: a heuristic descent (probes answered by greedy alone bisect
 * [lo, hi], a fifth of the time at most), the bound phase (branch and
 * bound on the min-peak model from the best known, bound_phase; a share
 * of the rest), then the branching probes (probe_loop).
 * Every model peak is the memory F_w at an instant w less the bytes of
 * intervals absent there: the peaks possible in the first [lo, hi] are
 * listed (peak_values; when they are too many, the multiples of G, the
 * gcd of every tensor and workspace size, stand in). lo rounds up to the
 * next possible peak, and the probe for "P* <= t" (t a possible peak)
 * uses the cap t + (G - 1) / 2 - mu (cap_for): as tight as the grain
 * allows, the strongest relaxation (halfway to the next possible peak,
 * llama3-8b-prefill-2l's probe for its optimum got no answer in 55 s;
 * at the grain's cap, 1 s). GLPK checks rows only to a relative
 * tolerance (about 1e-7 of the memory, i.e. bytes to kilobytes): a
 * feasible probe's solution is measured exactly, and when it breaks its
 * cap by more than the half-grain the margin mu grows past the excess
 * and the probe is repeated; an
 * infeasible probe proves only P* > its cap, lo = the next possible peak
 * above the cap. lo = hi: P* = hi, proven to the byte. When only mu
 * separates them (the cap for the next peak below hi is under lo), the
 * peak is optimal to the solver's tolerance: reported as optimal with lo
 * as the bound (a gap of mu / hi, below 1e-6) and a note.
 * Targets: t = the next possible peak below hi on the first probe and
 * whenever hi - lo is within 0.1% of hi (greedy is often optimal or
 * close, and the last proof is the hardest probe anyway), else the
 * possible peak at or below the midpoint of [lo, that one]. Every probe
 * uses the overhead model's stride, so all answers are about one model. */
/* Frees the best solution known and its model. */
static void peak_search_free_x(peak_search *ps, const hoff_ilp *m)
{
	if (ps->own && ps->bm != m)
		hoff_ilp_free(ps->bm);
	free(ps->bx);
	ps->bm = NULL;
	ps->bx = NULL;
	ps->own = false;
}

/* x (owned from now on), a solution of model bm (owned when `own`) with
 * peak p, becomes the best known. */
static void peak_search_take(peak_search *ps, const hoff_ilp *m,
			     hoff_ilp *bm, bool own, double *x, int64_t p)
{
	peak_search_free_x(ps, m);
	ps->bm = bm;
	ps->own = own;
	ps->bx = x;
	ps->hi = p;
}

void hoff_ilp_peak_search_free(peak_search *ps, const hoff_ilp *m)
{
	peak_search_free_x(ps, m);
	free(ps->pv);
	ps->pv = NULL;
	hoff_sched_free(ps->sim.s);
	ps->sim.s = NULL;
}

static int64_t gcd64(int64_t a, int64_t b)
{
	while (b) {
		int64_t r = a % b;
		a = b;
		b = r;
	}
	return a;
}

/* The grain of every peak: gcd of the tensor and workspace sizes. */
static int64_t peak_grain(const hoff_graph *g)
{
	int64_t G = 0;
	for (int32_t t = 0; t < g->ntensors; t++)
		G = gcd64(g->tensor[t].bytes, G);
	for (int32_t k = 0; k < g->nops; k++)
		if (g->op[k].workspace_bytes > 0)
			G = gcd64(g->op[k].workspace_bytes, G);
	return G > 0 ? G : 1;
}

/* The least multiple of G at or above v (v >= 0). */
static int64_t grain_up(int64_t v, int64_t G)
{
	return v <= 0 ? 0 : ((v - 1) / G + 1) * G;
}

static int cmp_i64(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
	return (a > b) - (a < b);
}

/* Sorts v[0..n) and drops repeats: the count left. */
static int64_t sort_unique(int64_t *v, int64_t n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_i64);
	int64_t u = 0;
	for (int64_t k = 0; k < n; k++)
		if (!u || v[u - 1] != v[k])
			v[u++] = v[k];
	return u;
}

#define PV_SUMS_MAX (1 << 14)   /* subset sums at one instant */
#define PV_MAX (1 << 20)        /* peaks listed in all */

/* The subset sums of the bytes of the intervals that can be absent at
 * instant w, at most most, into sums (ascending, unique; PV_SUMS_MAX
 * room): the count, or -1 when there are more. */
static int64_t subset_sums(const hoff_ilp *m, int32_t w, int64_t most,
			   int64_t *sums, int64_t *tmp)
{
	int64_t n = 1;
	sums[0] = 0;
	for (int32_t i = 0; i < m->niv; i++) {
		int32_t w0, w1;
		hoff_ilp_absent_range(&m->iv[i], m->n, &w0, &w1);
		int64_t b = m->iv[i].c.bytes;
		if (w < w0 || w > w1 || b > most)
			continue;
		/* merge sums with sums + b (both ascending) */
		int64_t a = 0, c = 0, k = 0;
		while (a < n || c < n) {
			int64_t v;
			if (c >= n || (a < n && sums[a] <= sums[c] + b))
				v = sums[a++];
			else if ((v = sums[c++] + b) > most)
				continue;
			if (k && tmp[k - 1] == v)
				continue;
			if (k == PV_SUMS_MAX)
				return -1;
			tmp[k++] = v;
		}
		memcpy(sums, tmp, (size_t)k * sizeof *sums);
		n = k;
	}
	return n;
}

/* Every model peak is the memory at some instant w the model measures,
 * F_w minus the bytes of intervals absent there: lists those in [lo, hi]
 * into ps->pv, sorted and unique, so that lo can rise to the next peak a
 * solution can have and probes ask about those peaks only. Leaves ps->pv
 * NULL when they are too many (many small sizes); the grain stands in. */
static void peak_values(const hoff_ilp *m, int64_t lo, int64_t hi,
			peak_search *ps)
{
	/* (v2) with recompute candidates, peaks also come from their
	 * bytes and the re-runs' instants: the grain stands in */
	if (m->nrc > 0)
		return;
	int64_t *sums = hoff_alloc(PV_SUMS_MAX, sizeof *sums);
	int64_t *tmp = hoff_alloc(PV_SUMS_MAX, sizeof *tmp);
	int64_t *pv = NULL, npv = 0, cap = 0;
	bool ok = sums && tmp;
	for (int32_t w = -1; ok && w <= 2 * m->n - 2; w++) {
		int64_t F = m->fixed[IDX(w)];
		if (!hoff_ilp_measurable(m, w) || F < lo)
			continue;
		int64_t ns = subset_sums(m, w, F - lo, sums, tmp);
		ok = ns >= 0;
		for (int64_t k = 0; ok && k < ns; k++) {
			if (F - sums[k] > hi)
				continue;
			if (npv == cap) {
				cap = cap ? 2 * cap : 1024;
				int64_t *p2 = NULL;
				if (cap <= PV_MAX)
					p2 = realloc(pv,
						     (size_t)cap * sizeof *pv);
				if (!p2) {
					ok = false;
					break;
				}
				pv = p2;
			}
			pv[npv++] = F - sums[k];
		}
		if (ok && npv > PV_MAX / 2) { /* unique now and then */
			npv = sort_unique(pv, npv);
			ok = npv <= PV_MAX / 2;
		}
	}
	free(sums);
	free(tmp);
	if (!ok || npv == 0) {
		free(pv);
		return;
	}
	ps->pv = pv;
	ps->npv = sort_unique(pv, npv);
}

/* The least peak a solution can have at or above v. */
static int64_t peak_up(const peak_search *ps, int64_t v)
{
	if (!ps->pv || v > ps->pv[ps->npv - 1])
		return grain_up(v, ps->G);
	int64_t a = 0, b = ps->npv - 1; /* pv[b] >= v */
	while (a < b) {
		int64_t c = a + (b - a) / 2;
		if (ps->pv[c] >= v)
			b = c;
		else
			a = c + 1;
	}
	return ps->pv[b];
}

/* The greatest peak a solution can have at or below v (v >= 0). */
static int64_t peak_down(const peak_search *ps, int64_t v)
{
	if (!ps->pv || v < ps->pv[0] || v > ps->pv[ps->npv - 1])
		return v / ps->G * ps->G;
	int64_t a = 0, b = ps->npv - 1; /* pv[a] <= v */
	while (a < b) {
		int64_t c = b - (b - a) / 2;
		if (ps->pv[c] <= v)
			a = c;
		else
			b = c - 1;
	}
	return ps->pv[a];
}

/* The cap that asks "a peak <= t?" for t a peak a solution can have:
 * half a grain above it, less the solver's margin mu. */
static int64_t cap_for(const peak_search *ps, int64_t t)
{
	return t + (ps->G - 1) / 2 - ps->mu;
}

#define BOUND_PHASE_GAP 0.01 /* the bound phase runs above this gap */

/* A solver bound v on the peak (model units) as bytes safely under it:
 * the solver's tolerances are far below a part in 1e9. */
double hoff_ilp_bytes_under(const hoff_ilp *m, double v)
{
	return floor(v * m->bu * (1 - 1e-9)) - 1;
}

#define HEUR_SHARE 0.2  /* of the time: the heuristic descent */
#define HEUR_STOP 0.002 /* it stops within this of hi */
#define HEUR_REPAIR_S 1.0 /* a heuristic probe's repair, at most */

enum { PROBE_UNKNOWN, PROBE_FEASIBLE, PROBE_INFEASIBLE };

/* The request of a probe about the min-peak model m at cap: m's, in
 * budget mode under cap with the overhead's stall bound, at m's stride
 * (every probe about the same model), no peak floor; its solves stop at
 * the first incumbent, at gap 0, silent, writing no file. */
static hoff_ilp_req probe_request(const hoff_ilp *m, int64_t cap)
{
	hoff_ilp_req pr = m->rq;
	pr.budget_bytes = cap;
	pr.max_stall_ps = m->bound_ps - m->compute_ps;
	pr.stride = m->stride;
	pr.peak_floor = 0;
	pr.floor_rows = false;
	pr.first_solution = true;
	pr.write_files = false;
	pr.gap = 0;
	pr.quiet = true;
	return pr;
}

/* One probe: is there a model solution with peak <= t within the stall
 * bound (asked with the cap t + (G - 1) / 2 - mu, search_peak)? First
 * by greedy under the cap (probe_heuristic), then, when `branch`, by
 * branch and bound until `until`. Updates ps (hi and
 * its solution, lo, mu, the best simulated schedule) and sets *answer. */
static hoff_status probe(const hoff_graph *g, const hoff_ilp *m, int64_t t,
			 bool branch, double until, peak_search *ps,
			 int *answer, hoff_err *e)
{
	const int64_t cap = cap_for(ps, t);
	hoff_status st;
	double tp = hoff_now_s();
	hoff_ilp *pm = NULL;
	hoff_ilp_sol sol = {0};
	*answer = PROBE_UNKNOWN;
	const hoff_ilp_req pr = probe_request(m, cap);
	if ((st = hoff_ilp_build(g, &m->o, &pr, &pm, e)) != HOFF_OK)
		return st;
	const char *what = "no answer in time";
	double *hx = hoff_alloc((size_t)pm->ncols + 1, sizeof *hx);
	if (!hx) {
		hoff_ilp_free(pm);
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	}
	judged hj = {0};
	pm->rq.time_limit_s = fmax(0.05, until - hoff_now_s()); /* the
								       mapping's
								       LP */
	bool hok = !pm->infeasible &&
		   hoff_ilp_probe_heuristic(g, pm,
					    fmin(until, tp + HEUR_REPAIR_S), hx,
					    &hj, &st, e);
	/* the mapping meets rows to 1e-6 of a unit: above the cap by that
	 * is a miss, not a solution (the margin mu is the solver's) */
	if (hok) {
		int64_t p = hoff_ilp_model_peak(pm, hx);
		hok = p <= cap || p <= t;
	}
	if (st == HOFF_OK && hj.s) {
		/* within the overhead: a candidate for the result */
		hj.fits = hj.legal && hj.sum.peak_bytes <= m->cap_bytes &&
			  hj.sum.makespan_ps <= m->bound_ps;
		if (hj.fits && hoff_ilp_better(m, &hj, &ps->sim)) {
			hoff_sched_free(ps->sim.s);
			ps->sim = hj;
			hj.s = NULL;
		}
	}
	hoff_sched_free(hj.s);
	if (st != HOFF_OK) {
		free(hx);
		hoff_ilp_free(pm);
		return st;
	}
	if (hok) {
		sol.status = HOFF_ILP_FEASIBLE;
		sol.has_x = true;
		sol.x = hx;
		what = "feasible (greedy under the cap)";
	} else {
		free(hx);
		if (branch) {
			pm->rq.time_limit_s = fmax(0.05, until - hoff_now_s());
			if ((st = hoff_ilp_solve(pm, NULL, &sol, e)) !=
			    HOFF_OK) {
				hoff_ilp_free(pm);
				return st;
			}
			ps->nodes += sol.nodes;
		} else {
			what = "greedy under the cap misses the stall bound";
		}
	}
	if (!sol.has_x && sol.note[0])
		what = sol.note; /* e.g. the solver failed: still no answer */
	ps->probes++;
	ps->solve_s += hoff_now_s() - tp;
	if (sol.status == HOFF_ILP_INFEASIBLE) {
		ps->probes_cut += sol.cuts_answered;
		int64_t lo = peak_up(ps, cap + 1);
		if (lo > ps->lo)
			ps->lo = lo;
		what = "infeasible";
		*answer = PROBE_INFEASIBLE;
	} else if (sol.has_x) {
		int64_t p = hoff_ilp_model_peak(pm, sol.x);
		if (!hok)
			what = "feasible";
		*answer = PROBE_FEASIBLE;
		if (p < ps->hi) {
			peak_search_take(ps, m, pm, true, sol.x, p);
			pm = NULL;
			sol.x = NULL;
		}
		if (p > t && p > cap) {
			/* rows met only to the solver's tolerance: ask with
			 * a margin past the excess */
			what = "feasible within the solver's tolerance";
			ps->mu += 2 * (p - cap) + 1;
		}
	}
	char rg[64];
	hoff_say(&m->o.progress,
		 "exact: probe %d, peak <= %lld B: %s "
		 "(%.1f s); the least peak is in %s",
		 ps->probes, (long long)cap, what, hoff_now_s() - tp,
		 hoff_ilp_peak_range(rg, sizeof rg, ps->lo, ps->hi));
	free(sol.x);
	hoff_ilp_free(pm);
	return HOFF_OK;
}

/* The best known solution as a solution of m, the overhead model, into
 * *mx (caller frees; NULL when none maps): greedy's start, the search's
 * best (a probe model's) and the best probe schedule, the latter two
 * mapped by their decisions; the least peak in m wins, and becomes the
 * best known when below hi. */
static hoff_status best_in(const hoff_graph *g, hoff_ilp *m,
			   const double *start, peak_search *ps, double **mx,
			   hoff_err *e)
{
	const size_t nc = (size_t)m->ncols + 1;
	hoff_status st = HOFF_OK;
	hoff_sched *own = NULL;
	int32_t *pb = NULL;
	double *x = hoff_alloc(nc, sizeof *x), *best = NULL;
	int32_t *pick = hoff_alloc((size_t)hoff_ilp_npick(m) + 1, sizeof *pick);
	int64_t bp = INT64_MAX;
	*mx = NULL;
	if (!x || !pick)
		goto nomem;
	if (start) {
		if (!(best = hoff_alloc(nc, sizeof *best)))
			goto nomem;
		memcpy(best, start, nc * sizeof *best);
		bp = hoff_ilp_model_peak(m, best);
	}
	hoff_err e2;
	if (ps->bx && ps->bm != m) {
		if (!(pb = hoff_alloc((size_t)hoff_ilp_npick(ps->bm) + 1,
				      sizeof *pb)))
			goto nomem;
		hoff_ilp_decode(ps->bm, ps->bx, pb);
		if (hoff_ilp_emit_model(g, ps->bm, pb, "exact", &own, &e2) !=
		    HOFF_OK)
			own = NULL;
	}
	const hoff_sched *cand[2] = {own, ps->sim.s};
	for (int c = 0; c < 2; c++) {
		if (!cand[c])
			continue;
		hoff_ilp_picks_of(m, cand[c], pick);
		if (!hoff_ilp_start(m, pick, x, &e2))
			continue;
		int64_t p = hoff_ilp_model_peak(m, x);
		if (p < bp) {
			double *t = best;
			best = x;
			x = t;
			bp = p;
			if (!x && !(x = hoff_alloc(nc, sizeof *x)))
				goto nomem;
		}
	}
	if (best && bp < ps->hi) {
		double *copy = hoff_alloc(nc, sizeof *copy);
		if (!copy)
			goto nomem;
		memcpy(copy, best, nc * sizeof *best);
		peak_search_take(ps, m, m, false, copy, bp);
	}
	*mx = best;
	best = NULL;
	goto out;
nomem:
	st = hoff_seterr(e, HOFF_ENOMEM, "out of memory");
out:
	free(x);
	free(best);
	free(pick);
	free(pb);
	hoff_sched_free(own);
	return st;
}

/* One branch and bound of the min-peak model m until `until`, from the
 * best known solution that maps onto it (best_in), GLPK's MIR cuts off
 * when no_mir. Raises lo to its bound, takes its incumbent when lower
 * (binaries integral to 1e-10, as in the probes; the peak measured
 * exactly). */
static hoff_status bound_once(const hoff_graph *g, hoff_ilp *m,
			      const double *start, double until, bool no_mir,
			      peak_search *ps, hoff_err *e)
{
	double *mx = NULL; /* the best known as a solution of m */
	hoff_status st = best_in(g, m, start, ps, &mx, e);
	if (st != HOFF_OK)
		return st;
	double tb = hoff_now_s();
	hoff_ilp_sol bs = {0};
	const hoff_ilp_req keep = m->rq;
	m->rq.time_limit_s = until - tb;
	m->rq.quiet = true;
	m->rq.no_mir = no_mir || keep.no_mir;
	st = hoff_ilp_solve(m, mx, &bs, e);
	m->rq = keep;
	free(mx);
	if (st != HOFF_OK)
		return st;
	int64_t p = bs.has_x ? hoff_ilp_model_peak(m, bs.x) : INT64_MAX;
	if (p < ps->hi) {
		peak_search_take(ps, m, m, false, bs.x, p);
		bs.x = NULL;
	}
	free(bs.x);
	ps->nodes += bs.nodes;
	ps->solve_s += hoff_now_s() - tb;
	if (bs.has_bound) {
		double fl = hoff_ilp_bytes_under(m, bs.bound);
		if (fl > (double)ps->lo && fl < (double)INT64_MAX / 2)
			ps->lo = peak_up(ps, (int64_t)fl);
		if (ps->lo > ps->hi)
			ps->lo = ps->hi;
	}
	char rg[64];
	hoff_say(&m->o.progress,
		 "exact: min-peak branch and bound%s (%.1f s, "
		 "%lld nodes): the least peak is in %s",
		 no_mir ? " without MIR cuts" : "", hoff_now_s() - tb,
		 (long long)bs.nodes,
		 hoff_ilp_peak_range(rg, sizeof rg, ps->lo, ps->hi));
	return HOFF_OK;
}

/* No bound phase: nothing known yet, or within 1% of the best known,
 * where closing the gap takes a probe proven infeasible, which a higher
 * bound does not give. */
static bool bound_close(const peak_search *ps)
{
	return ps->hi == INT64_MAX ||
	       (double)(ps->hi - ps->lo) <= BOUND_PHASE_GAP * (double)ps->hi;
}

/* The bound phase: until `until`, branch and bound on the min-peak model
 * itself. It rarely closes, but its bound rises above the LP floor,
 * where a probe raises lo only by exhausting its whole tree (on
 * llama3-8b-train-2l, to 16 KB under the best, from the root's cuts).
 * When that leaves lo more than 1% under the best (often the root never
 * finished its cut rounds: GLPK's MIR cuts can keep it there for
 * minutes, as on mixtral-8x7b-decode-2l), once more for as long without
 * MIR cuts, where it branches (there, gap 3.4% -> 0.5%). The caller sets
 * no share when the LP relaxation alone ran out of time: the root would
 * too. */
static hoff_status bound_phase(const hoff_graph *g, hoff_ilp *m,
			       const double *start, double until,
			       peak_search *ps, hoff_err *e)
{
	if (bound_close(ps))
		return HOFF_OK;
	double t0 = hoff_now_s();
	hoff_status st = bound_once(g, m, start, until, false, ps, e);
	if (st != HOFF_OK || bound_close(ps))
		return st;
	/* the MIR root left the bound more than 1% under the best (or
	 * never finished its cut rounds): again without MIR */
	return bound_once(g, m, start, hoff_now_s() + (until - t0), true, ps,
			  e);
}

typedef struct probe_state {
	bool tolerance; /* only mu separates lo and hi */
	bool gap_met;   /* within --gap */
	int retries;    /* probes repeated with a larger mu in a row */
	int64_t unk;    /* targets below went unanswered in their time */
	bool closed;    /* the first probe asked the next peak below hi */
} probe_state;

/* Within this gap the first branching probe asks the next peak below
 * hi (llama3-8b-train-2l: 0.8% after the bound phase); wider, bisecting
 * first is worth more (llama3-8b train L16 of the scale run: 88% left
 * when half the time went to that probe, against 22%) */
#define CLOSE_GAP 0.01

/* Branching probes until `until`: first, when hi - lo is within
 * CLOSE_GAP of hi, the next possible peak below hi in two thirds of the
 * time (infeasible, hi is optimal); then that one, or the possible peak
 * at or below the midpoint of [max(lo, unk), that one] (search_peak). */
static hoff_status probe_loop(const hoff_graph *g, const hoff_ilp *m,
			      double until, peak_search *ps, probe_state *pst,
			      hoff_err *e)
{
	const int64_t G = ps->G;
	hoff_status st;
	while (ps->lo < ps->hi) {
		if (ps->hi != INT64_MAX && m->o.gap > 0 &&
		    (double)(ps->hi - ps->lo) <= m->o.gap * (double)ps->hi) {
			pst->gap_met = true;
			return HOFF_OK;
		}
		if (until - hoff_now_s() < 0.05)
			return HOFF_OK;
		int64_t t; /* is there a peak <= t? */
		/* the next peak below the best */
		int64_t below = ps->hi == INT64_MAX ? INT64_MAX
			      : peak_down(ps, ps->hi - 1);
		if (pst->unk > below)
			pst->unk = 0; /* what went unanswered is above the best
				       * now: below it nothing was asked */
		int64_t from = ps->lo > pst->unk ? ps->lo : pst->unk;
		if (ps->hi == INT64_MAX) {
			t = m->cap_bytes / G * G; /* any schedule at all */
		} else {
			t = below;
			int64_t mid = below;
			if (from <= below)
				mid = peak_down(ps, from + (below - from) / 2);
			if (ps->probes > 0 && pst->retries == 0 &&
			    (pst->closed || (double)(ps->hi - from) >
						    CLOSE_GAP * (double)ps->hi) &&
			    mid >= from &&
			    (double)(ps->hi - from) > 1e-3 * (double)ps->hi)
				t = mid;
		}
		if (cap_for(ps, t) < ps->lo) {
			/* below what is already proven: only the solver's
			 * tolerance is left between lo and hi */
			pst->tolerance = ps->hi != INT64_MAX;
			return HOFF_OK;
		}
		/* a probe below the next peak gets a third of the time left:
		 * a hard one then moves the next target up rather than ending
		 * it */
		double slice = until - hoff_now_s();
		/* (within 0.1% the next peak below gets all the time anyway) */
		bool first = ps->hi != INT64_MAX && !pst->closed &&
			     t == below &&
			     (double)(ps->hi - from) > 1e-3 * (double)ps->hi;
		if (first)
			slice *= 2.0 / 3;
		else if (ps->hi != INT64_MAX && t < below)
			slice = fmax(fmin(slice, 2.0), slice / 3);
		pst->closed = pst->closed || ps->hi != INT64_MAX;
		int answer;
		int64_t mu0 = ps->mu;
		if ((st = probe(g, m, t, true, hoff_now_s() + slice, ps,
				&answer, e)) != HOFF_OK)
			return st;
		pst->retries = ps->mu > mu0 ? pst->retries + 1 : 0;
		if (answer == PROBE_UNKNOWN && first)
			continue; /* bisect in what is left */
		if (answer == PROBE_UNKNOWN) {
			if (ps->hi == INT64_MAX || t >= below)
				return HOFF_OK; /* the time is up */
			pst->unk = peak_up(ps, t + 1);
			continue;
		}
		if (ps->hi == INT64_MAX && ps->lo > m->cap_bytes)
			return HOFF_OK;
		if (pst->retries > 6) {
			snprintf(ps->note, sizeof ps->note,
				 "the solver meets memory rows only to %lld B; "
				 "the gap stays open",
				 (long long)ps->mu);
			return HOFF_OK;
		}
	}
	return HOFF_OK;
}

hoff_status hoff_ilp_search_peak(const hoff_graph *g, hoff_ilp *m,
				 const double *start, double deadline,
				 double bound_share, peak_search *ps,
				 hoff_err *e)
{
	hoff_status st = HOFF_OK;
	const int64_t G = ps->G = peak_grain(g);
	ps->lo = grain_up(m->peak_floor, G);
	ps->hi = INT64_MAX;
	ps->status = HOFF_ILP_TIME_LIMIT;
	if (m->infeasible) {
		ps->status = HOFF_ILP_INFEASIBLE;
		snprintf(ps->note, sizeof ps->note, "%s", m->why);
		return HOFF_OK;
	}
	if (start) {
		ps->bx = hoff_alloc((size_t)m->ncols + 1, sizeof *ps->bx);
		if (!ps->bx)
			return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
		memcpy(ps->bx, start, ((size_t)m->ncols + 1) * sizeof *ps->bx);
		ps->bm = m;
		ps->hi = hoff_ilp_model_peak(m, start);
	}
	peak_values(m, m->peak_floor,
		    ps->hi != INT64_MAX ? ps->hi : m->cap_bytes, ps);
	ps->lo = peak_up(ps, m->peak_floor);
	if (ps->pv)
		hoff_say(&m->o.progress,
			 "exact: %lld peaks possible in [%lld, %lld]",
			 (long long)ps->npv, (long long)ps->lo,
			 (long long)ps->pv[ps->npv - 1]);
	/* Heuristic descent: probes answered by greedy under the cap alone
	 * (no branching, milliseconds to a second each) bisect [lo, hi]
	 * first, so the branching probes start from a good hi. A miss
	 * proves nothing: it only moves the descent's own floor. */
	int64_t hlo = ps->lo;
	double hend = hoff_now_s() + HEUR_SHARE * (deadline - hoff_now_s());
	double last = 0; /* the last probe's time: the next one's guess */
	for (;;) {
		/* with no solution known, from the device's size down */
		int64_t top = ps->hi != INT64_MAX ? ps->hi
						  : m->cap_bytes / G * G + G;
		if (hlo >= top - G || hoff_now_s() + last >= hend ||
		    (double)(top - hlo) <= HEUR_STOP * (double)top)
			break;
		int64_t t = hlo + (top - G - hlo) / G / 2 * G;
		int answer;
		double tp = hoff_now_s();
		if ((st = probe(g, m, t, false, hend, ps, &answer, e)) !=
		    HOFF_OK)
			return st;
		last = hoff_now_s() - tp;
		if (answer != PROBE_FEASIBLE)
			hlo = t + G;
	}
	double left = deadline - hoff_now_s();
	if (bound_share > 0 && left > 1.0 &&
	    (st = bound_phase(g, m, start, hoff_now_s() + bound_share * left,
			      ps, e)) != HOFF_OK)
		return st;
	probe_state pst = {0};
	if ((st = probe_loop(g, m, deadline, ps, &pst, e)) != HOFF_OK)
		return st;
	if (pst.gap_met) {
		ps->status = HOFF_ILP_FEASIBLE;
		return HOFF_OK;
	}
	if (ps->hi == INT64_MAX) {
		ps->status = ps->lo > m->cap_bytes ? HOFF_ILP_INFEASIBLE
						   : HOFF_ILP_TIME_LIMIT;
		if (ps->status == HOFF_ILP_INFEASIBLE && !ps->note[0])
			snprintf(ps->note, sizeof ps->note,
				 "no model schedule within the overhead fits "
				 "the device");
	} else if (ps->lo >= ps->hi) {
		ps->status = HOFF_ILP_OPTIMAL;
		ps->lo = ps->hi;
	} else if (pst.tolerance) {
		ps->status = HOFF_ILP_OPTIMAL;
		snprintf(ps->note, sizeof ps->note,
			 "optimal to the solver's tolerance: no peak below "
			 "%lld B (%lld B under the best) is possible",
			 (long long)ps->lo, (long long)(ps->hi - ps->lo));
	} else if (ps->note[0]) {
		ps->status = HOFF_ILP_FEASIBLE;
	} else {
		ps->status = HOFF_ILP_TIME_LIMIT;
	}
	return HOFF_OK;
}

/* --write-probe: the question left open, as one MIP another solver can
 * answer: the probe for the next possible peak under the best (a
 * budget-mode model at its cap, with the stall row). Infeasible there,
 * the best is optimal. Nothing is written when the search proved the
 * best, or knows none; a probe its build already proves infeasible
 * closes the gap instead. */
hoff_status hoff_ilp_write_probe(const hoff_graph *g, const hoff_ilp *m,
				 peak_search *ps, int64_t *asked, hoff_err *e)
{
	*asked = 0;
	if (ps->hi == INT64_MAX || ps->lo >= ps->hi)
		return HOFF_OK;
	const int64_t t = peak_down(ps, ps->hi - 1);
	const hoff_ilp_req pr = probe_request(m, cap_for(ps, t));
	hoff_ilp *pm = NULL;
	hoff_status st = hoff_ilp_build(g, &m->o, &pr, &pm, e);
	if (st != HOFF_OK)
		return st;
	if (pm->infeasible) {
		ps->lo = peak_up(ps, pr.budget_bytes + 1);
		if (ps->lo >= ps->hi) {
			ps->lo = ps->hi;
			ps->status = HOFF_ILP_OPTIMAL;
			ps->note[0] = '\0';
		}
	} else {
		const char *f = m->o.write_probe;
		size_t n = strlen(f);
		bool mps = n >= 4 && !strcmp(f + n - 4, ".mps");
		st = hoff_glpk_write(pm, mps ? NULL : f, mps ? f : NULL, e);
		if (st == HOFF_OK)
			*asked = t;
	}
	hoff_ilp_free(pm);
	return st;
}
