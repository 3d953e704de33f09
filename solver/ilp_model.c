/* ilp_model.c: the exact scheduler's model: its candidate intervals, the
 * schedule a set of decisions makes, and the build (the arrays it fills
 * are ilp_arrays.c's, the constraint families ilp_rows.c's), one part
 * of the pipeline
 * (greedy -> model -> solve -> decode -> simulate -> keep the better);
 * ilp_internal.h lists the files of the others.
 *
 * requires a finished graph; builds the model in our own arrays (the
 * backend copies them into the solver); returns only schedules the
 * simulator accepted, and never one worse than greedy's.
 *
 * THE MODEL (also in solver/README.md, with the assumptions)
 *
 * Time. Ops k = 0..n-1 run in graph order, op k lasting d_k. The run is
 * cut into windows: sigma_k, the stall before op k (length s_k >= 0, a
 * variable), gamma_k, op k itself (length d_k), and sigma_n, the tail of
 * transfers after the last op. Window w = 2k is sigma_k, w = 2k + 1 is
 * gamma_k. Instant w is the end of window w: instant 2k is S_k (op k
 * starts), instant 2k + 1 is E_k (op k ends: boundary k, where the cache
 * steps after op k are issued); instant -1 is time 0, boundary -1.
 * Memory rises only at boundaries and op starts and falls in between
 * (stores completing), so a peak is at some S_k, or at E_{k-1} when op k
 * stalls: those are the instants the model constrains.
 *
 * Candidates. Interval i: tensor t_i of B_i bytes may be off the device
 * after touch a_i until touch b_i needs it (b_i = n: a tail, never fetched
 * back). START: a tier-homed input before first use (must be fetched);
 * CLEAN: its home copy is valid (leaves by detach, free at issue);
 * DIRTY: leaves by a store, or by a detach when an earlier interval of
 * its dirty segment (no update in between) stored it. D^f_i, D^s_i: the
 * fetch and store durations on its tier's h2d / d2h channel. Evictions
 * are issued right after touch a_i (a detach there frees soonest at no
 * cost; a store there has the most windows); the prefetch boundary is the
 * choice: P_i, a subset of [lo_i, b_i - 1] (lo_i = a_i + 1; -1 for START).
 *
 * Binary:  zs_i   i used, leaving by a store          (DIRTY)
 *          zd_i   i used, leaving by a detach         (CLEAN, DIRTY)
 *          R_iq   i's prefetch issued at boundary <= q, q in P_i
 *          Q_iw   i's store complete by instant w
 *          U_cw   channel c saturated (busy throughout) in window w
 * In [0,1]: Yf_iw, Ys_iw: fraction of i's fetch / store moved by the end
 *          of window w; a transfer may span any number of windows.
 * >= 0:    s_k (k = 0..n), Pk (overhead mode: the peak).
 * sel_i = zs_i + zd_i (the constant 1 for START and home-clean tails);
 * X_i(v) is the variable in force at index v: the last one defined at or
 * before v, 0 before the first. D_i: i's duration on channel c(i);
 * I_i(w): 1 when i is issued before window w (R_i(floor(w/2) - 1) for a
 * fetch, zs_i for a store).
 *
 *  (1) R_i(b_i - 1) = sel_i,  R_iq <= R_iq' for q < q'
 *  (2) sum_{j in seg} zs_j <= 1,  zd_i <= sum_{j in seg, j < i} zs_j,
 *      zs_i + zd_i <= 1
 *  (3) Ys_i(last) = zs_i, Ys monotone, Q_iw <= Ys_i(w), Q monotone,
 *      R_iq <= zd_i + Q_i(2q+1)  (fetch back only a completed store)
 *  (4) Yf_iw <= I_i(w) (no progress before issue), Yf monotone,
 *      Yf_i(2 b_i) = sel_i  (done before op b_i starts)
 *  (5) channel c, window w:  sum_{i on c} D_i (Y_i(w) - Y_i(w-1)) <= len_w
 *      with len = d_k on gamma_k and s_k on sigma_k
 *  (5b) work conservation (FIFO channels never idle with work pending):
 *      sum_{i on c} D_i (Y_i(w) - Y_i(w-1)) >= len_w - M (1 - U_cw),
 *      Y_i(w) >= I_i(w) - U_cw
 *  (5c) FIFO among stores (issued at fixed boundaries, so their order is
 *      known): sum_{i ahead of j} D_i (zs_i - Ys_i(w)) <= M_j (1 - Ys_j(w))
 *  (6) an op waits only for its own inputs:
 *      s_k <= M sum_{i: b_i = k} (sel_i - Yf_i(2k - 1))  (one is late)
 *      s_k <= sum_{i on the tiers of those} D_i (Yf_i(2k) - Yf_i(2k-1))
 *  (7) memory at each constrained instant w:
 *      F_w - sum_i B_i (zd_i - R_i(q(w)) + Q_i(w)) <= cap   (or <= Pk)
 *      F_w: memory with nothing offloaded (analysis.c's closed form),
 *      q(w) = floor((w - 1) / 2) the last boundary at or before w
 *  (8) store time (budget-mode models and the min-peak model's LP floor),
 *      the hull of Q_iw in {0, 1}:
 *      (D^s_i - sum_{a_i < k <= w/2} d_k) Q_iw <= sum_{a_i < k <= w/2} s_k
 *  (9) fetch time (where (8) is), the same for fetches
 *  (10) issue deadlines (overhead mode's min-peak model): with S the
 *      stall bound, sum_{i in A} R_i(q) >= |A| - m for the START fetches
 *      A on one channel due by op b, m the most of them that fit in
 *      sum_{q+1 < k < b} d_k + S
 *  (11) Q_iw = 0 where the store cannot be done by w even with all of S
 *  budget mode:    min sum_{k<=n} s_k               (total stall)
 *  overhead mode:  min Pk, Pk <= device memory,
 *                  sum_k d_k + sum_k s_k <= (1 + X) lower_bound
 *
 * Pruning (dominance; `prune` off keeps everything). An instant whose F_w
 * is at most the budget (overhead mode: at most a lower bound on the
 * peak, from the LP relaxation) can never bind, since offloading only
 * lowers memory: it gets no row. An interval covering no binding instant
 * is dropped, unless its store lets a later interval of its segment
 * leave by a free detach, or its late fetch can stall an op while a store
 * drains. Among prefetch boundaries covering the same binding instants
 * the earliest has a superset of windows, so P_i keeps one per binding
 * stage, plus every boundary late enough to stall its op when a store may
 * be pending then. A stride K > 1 (coarsening) rounds P_i up to every
 * K-th boundary and keeps Q only there (a conservative credit) when the
 * binaries would be too many.
 */
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

/* "[lo, hi]" of the peak search for progress lines; an upper end not
 * known yet (no schedule within the bound) reads "none found". */
const char *hoff_ilp_peak_range(char *buf, size_t n, int64_t lo, int64_t hi)
{
	if (hi == INT64_MAX)
		snprintf(buf, n, "[%lld, none found yet]", (long long)lo);
	else
		snprintf(buf, n, "[%lld, %lld]", (long long)lo, (long long)hi);
	return buf;
}

/* The run's deadline (hoff_ilp_req.deadline) has passed. */
static bool past(const hoff_ilp_req *rq)
{
	return rq->deadline > 0 && hoff_now_s() > rq->deadline;
}

/* GLPK's set-up of a model (load, scaling, presolve) cannot be stopped,
 * so a model goes to it only when that is expected to end in the time
 * left: at SETUP_NNZ_PER_S nonzeros (plus rows and columns) a second.
 * Measured (the progress line of hoff_glpk_lp) on a loaded 2-core
 * machine: llama3-8b-train-2l's LP floor, 132,215 nonzeros, loaded and
 * scaled in 1.4 s (94k a second); llama3-8b-train's, about 3 million
 * rows, scaled for minutes. A margin of two for an idle machine. */
#define SETUP_NNZ_PER_S 2.0e5

/* Seconds GLPK's set-up of m is expected to take. */
static double setup_s(const hoff_ilp *m)
{
	return ((double)m->nnz + (double)m->nrows + (double)m->ncols) /
	       SETUP_NNZ_PER_S;
}

/* HOFF_ETIMEOUT, saying what did not fit, when m cannot be set up before
 * the deadline; else HOFF_OK. */
hoff_status hoff_ilp_fits_time(const hoff_ilp *m, hoff_err *e)
{
	if (m->rq.deadline <= 0)
		return HOFF_OK;
	double left = m->rq.deadline - hoff_now_s();
	if (setup_s(m) < left)
		return HOFF_OK;
	return hoff_seterr(e, HOFF_ETIMEOUT,
			   "the model (%d columns, %d rows, %zu nonzeros) "
			   "needs about %.0f s of solver set-up, more than "
			   "the %.1f s left",
			   m->ncols, m->nrows, m->nnz, setup_s(m),
			   fmax(0, left));
}

const char *hoff_ilp_status_name(hoff_ilp_status st)
{
	switch (st) {
	case HOFF_ILP_OPTIMAL:
		return "optimal";
	case HOFF_ILP_FEASIBLE:
		return "feasible";
	case HOFF_ILP_TIME_LIMIT:
		return "time_limit";
	default:
		return "infeasible";
	}
}

const char *hoff_exact_status_name(const hoff_exact_report *rep)
{
	return rep->status == HOFF_ILP_OPTIMAL
		       ? "optimal_over_candidates"
		       : hoff_ilp_status_name(rep->status);
}

/* rep->restriction: what the model m leaves out of the machine model. */
void hoff_ilp_restriction(const hoff_graph *g, const hoff_ilp_opts *o,
			  const hoff_ilp *m, hoff_exact_report *rep)
{
	char small[96] = "";
	int64_t below = o->all_candidates ? 0 : hoff_small_below(g, NULL);
	if (below > 0)
		snprintf(small, sizeof small,
			 "; tensors under %lld B only drop a clean copy after "
			 "their last use",
			 (long long)below);
	snprintf(rep->restriction, sizeof rep->restriction,
		 "over the model's candidates: %d of %d tensors may move "
		 "(none alive for %d ops or fewer unless persistent, none "
		 "with offload false)%s; evictions right after a use, "
		 "prefetches at every %d-op boundary, transfers timed by the "
		 "stage model (solver/README.md); a schedule outside them may "
		 "be better",
		 m->ncand, g->ntensors, HOFF_SHORT_LIVED_OPS, small, m->stride);
	if (o->recompute) {
		size_t len = strlen(rep->restriction);
		snprintf(rep->restriction + len, sizeof rep->restriction - len,
			 "; recompute: %d candidates (an activation that is "
			 "its producer's only output, dropped after a use and "
			 "re-made right before its next one, the producer's "
			 "inputs resident then without living longer)",
			 m->nrc);
	}
}

hoff_ilp_opts hoff_ilp_defaults(void)
{
	return (hoff_ilp_opts){.budget_bytes = HOFF_NONE,
			       .max_overhead = 0.01,
			       .time_limit_s = 60,
			       .gap = 0,
			       .stride = 0,
			       .max_binaries = 0,
			       .prune = true,
			       .incumbent = true,
			       .bound_share = 0.45};
}

hoff_ilp_req hoff_ilp_request(const hoff_ilp_opts *o)
{
	return (hoff_ilp_req){.budget_bytes = o->budget_bytes,
			      .stride = o->stride,
			      .max_stall_ps = HOFF_NONE,
			      .analysis = o->analysis,
			      .time_limit_s = o->time_limit_s,
			      .gap = o->gap,
			      .write_files = true};
}

/* ---------------------------------------------------------------------
 * Candidate intervals and the schedule a set of decisions makes.
 */

/* (v2) Rule 9 in a repeat graph: tensor t must end as it started. A
 * tier-homed persistent tensor no op produces and some op uses must end
 * off the device with a valid copy at home: 1; a device-homed one must
 * end resident: -1 (its tail would store it away); else 0. */
static int end_state(const hoff_graph *g, int32_t t)
{
	const hoff_tensor *x = &g->tensor[t];
	if (!g->repeat || x->producer != HOFF_NONE ||
	    !hoff_tensor_persistent(x) || g->use_off[t] == g->use_off[t + 1])
		return 0;
	return x->home != HOFF_DEVICE ? 1 : -1;
}

/* Whether some op updates t. */
static bool updated(const hoff_graph *g, int32_t t)
{
	for (int64_t u = g->use_off[t]; u < g->use_off[t + 1]; u++) {
		int32_t k = g->use[u];
		for (int64_t j = g->upd_off[k]; j < g->upd_off[k + 1]; j++)
			if (g->upd[j] == t)
				return true;
	}
	return false;
}

/* The tail of tier-homed t after its last touch a, going home: a free
 * detach when no op updates t (the home copy is still valid), else a
 * store home; its own dirty segment (index i). candidates.c gives none
 * to a small updated tensor, nor after a touch by the last op. */
static hoff_cand home_tail(const hoff_graph *g, int32_t t, int32_t i)
{
	const hoff_tensor *x = &g->tensor[t];
	bool dirty = updated(g, t);
	return (hoff_cand){
		.bytes = x->bytes,
		.store_ps = dirty ? hoff_xfer_ps(g, x->home, x->bytes, false)
				  : 0,
		.t = t,
		.a = g->use[g->use_off[t + 1] - 1],
		.b = g->nops,
		.seg = i,
		.tier = (int16_t)x->home,
		.kind = dirty ? HOFF_CAND_DIRTY : HOFF_CAND_CLEAN,
	};
}

/* The model interval of candidate c (columns unset). */
static hoff_ilp_iv model_iv(const hoff_graph *g, const hoff_cand *c)
{
	bool start = c->kind == HOFF_CAND_START;
	return (hoff_ilp_iv){
		.c = *c,
		.lo = start ? -1 : c->a + 1,
		.fixed = start ||
			 (c->kind == HOFF_CAND_CLEAN && c->b == g->nops),
		.home_end = c->b == g->nops && end_state(g, c->t) > 0,
		.rmap = HOFF_NONE,
		.qmap = HOFF_NONE,
		.ysmap = HOFF_NONE,
		.ypmap = HOFF_NONE,
	};
}

/* The candidates of g (candidates.h) as model intervals, columns unset:
 * a tensor under small_below bytes only takes its free move. In a repeat
 * graph (rule 9) every tier-homed state tensor gets a tail going home
 * (home_end: the model must use it), and a device-homed one none. */
static hoff_status intervals(const hoff_graph *g, int64_t small_below,
			     hoff_ilp_iv **out, int32_t *nout, hoff_err *e)
{
	*out = NULL;
	*nout = 0;
	hoff_cand_rule r = {.store_tier = hoff_best_tier(g),
			    .small_below_bytes = small_below};
	hoff_cand *c = NULL;
	size_t n = 0;
	hoff_status st = hoff_cand_list(g, &r, &c, &n, e);
	if (st != HOFF_OK)
		return st;
	/* room for a home tail a tensor */
	size_t room = n + (g->repeat ? (size_t)g->ntensors : 0) + 1;
	hoff_ilp_iv *iv = hoff_alloc(room, sizeof *iv);
	if (!iv || room > INT32_MAX) {
		free(c);
		free(iv);
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	}
	size_t k = 0;
	for (size_t i = 0; i < n;) {
		int32_t t = c[i].t;
		int end = end_state(g, t);
		int32_t shift = (int32_t)k - (int32_t)i; /* seg: in t's group */
		bool tail = false;
		size_t j = i;
		for (; j < n && c[j].t == t; j++) {
			if (end < 0 && c[j].b == g->nops)
				continue; /* it would leave for good */
			tail = tail || c[j].b == g->nops;
			hoff_cand x = c[j];
			x.seg += shift;
			iv[k++] = model_iv(g, &x);
		}
		if (end > 0 && !tail) {
			hoff_cand h = home_tail(g, t, (int32_t)k);
			iv[k++] = model_iv(g, &h);
		}
		i = j;
	}
	free(c);
	*out = iv;
	*nout = (int32_t)k;
	return HOFF_OK;
}

hoff_status hoff_ilp_intervals(const hoff_graph *g, bool all, hoff_ilp_iv **out,
			       int32_t *nout, hoff_err *e)
{
	int64_t small_below = all ? 0 : hoff_small_below(g, NULL);
	if (small_below < 0) {
		*out = NULL;
		*nout = 0;
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	}
	return intervals(g, small_below, out, nout, e);
}

/* The intervals and their prefetch boundaries, for by_fetch. */
typedef struct fetch_order {
	const hoff_ilp_iv *iv;
	const int32_t *pick;
} fetch_order;

/* Interval indices by prefetch boundary, then the op that needs them,
 * then tensor id (ctx: a fetch_order). */
static int by_fetch(const void *x, const void *y, void *ctx)
{
	const fetch_order *o = ctx;
	int32_t i = *(const int32_t *)x, j = *(const int32_t *)y;
	const hoff_ilp_iv *a = &o->iv[i], *b = &o->iv[j];
	if (o->pick[i] != o->pick[j])
		return o->pick[i] < o->pick[j] ? -1 : 1;
	if (a->c.b != b->c.b)
		return a->c.b < b->c.b ? -1 : 1;
	return (a->c.t > b->c.t) - (a->c.t < b->c.t);
}

/* (v2) Writes, after op q's step (q = -1: at the start), the drops
 * (when !re) or the re-runs (when re) of the chosen recompute candidates
 * rc (decisions pick[0..nrc)) at boundary q; false (with *e set) when a
 * drop cannot be written. */
static bool emit_rc(hoff_emit *m, const hoff_ilp_rc *rc, int32_t nrc,
		    const int32_t *pick, int32_t q, bool re, hoff_err *e)
{
	for (int32_t j = 0; j < nrc; j++) {
		if (pick[j] == HOFF_ILP_OFF)
			continue;
		if (re && rc[j].b == q + 1)
			hoff_emit_recompute(m, rc[j].p);
		else if (!re && rc[j].a == q && !hoff_emit_drop(m, rc[j].t)) {
			hoff_seterr(e, HOFF_EINPUT,
				    "exact: cannot drop \"%s\" after op %d",
				    m->g->tensor[rc[j].t].id, q);
			return false;
		}
	}
	return true;
}

/* hoff_ilp_emit with the recompute candidates rc[0..nrc), decided by
 * pick[niv ..]. */
static hoff_status emit_all(const hoff_graph *g, const hoff_ilp_iv *iv,
			    int32_t niv, const hoff_ilp_rc *rc, int32_t nrc,
			    const int32_t *pick, const char *policy,
			    hoff_sched **out, hoff_err *e)
{
	*out = NULL;
	int32_t *ev = hoff_alloc((size_t)niv + 1, sizeof *ev);
	int32_t *pf = hoff_alloc((size_t)niv + 1, sizeof *pf);
	hoff_emit m;
	hoff_status st = HOFF_OK;
	if (!ev || !pf || hoff_emit_init(&m, g, policy) != HOFF_OK) {
		free(ev);
		free(pf);
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	}
	size_t ne = 0, np = 0;
	for (int32_t i = 0; i < niv; i++) {
		const hoff_ilp_iv *v = &iv[i];
		if (pick[i] == HOFF_ILP_OFF)
			continue;
		if (v->c.b < g->nops &&
		    (pick[i] < v->lo || pick[i] > v->c.b - 1)) {
			st = hoff_seterr(e, HOFF_EINPUT,
					 "exact: interval %d of \"%s\": "
					 "prefetch boundary %d outside "
					 "[%d, %d]",
					 i, g->tensor[v->c.t].id, pick[i],
					 v->lo, v->c.b - 1);
			goto out;
		}
		if (v->c.kind != HOFF_CAND_START)
			ev[ne++] = i;
		if (v->c.b < g->nops)
			pf[np++] = i;
	}
	hoff_sort_ctx(ev, ne, sizeof *ev, hoff_ilp_by_evict, (void *)iv);
	fetch_order fo = {iv, pick};
	hoff_sort_ctx(pf, np, sizeof *pf, by_fetch, &fo);
	size_t ie = 0, ip = 0;
	for (int32_t q = -1; q < g->nops; q++) {
		if (q >= 0)
			hoff_emit_op(&m, q);
		if (nrc > 0 && !emit_rc(&m, rc, nrc, pick + niv, q, false, e)) {
			st = HOFF_EINPUT;
			goto out;
		}
		for (; ie < ne && iv[ev[ie]].c.a == q; ie++)
			if (!hoff_emit_evict(&m, iv[ev[ie]].c.t)) {
				st = hoff_seterr(e, HOFF_EINPUT,
						 "exact: cannot evict \"%s\" "
						 "after op %d",
						 g->tensor[iv[ev[ie]].c.t].id,
						 q);
				goto out;
			}
		for (; ip < np && pick[pf[ip]] == q; ip++)
			if (!hoff_emit_prefetch(&m, iv[pf[ip]].c.t)) {
				st = hoff_seterr(
					e, HOFF_EINPUT,
					"exact: cannot prefetch \"%s\" "
					"after op %d",
					g->tensor[iv[pf[ip]].c.t].id, q);
				goto out;
			}
		if (nrc > 0)
			emit_rc(&m, rc, nrc, pick + niv, q, true, e);
	}
	*out = hoff_emit_finish(&m);
	if (!*out)
		st = hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	free(ev);
	free(pf);
	return st;
out:
	hoff_emit_free(&m);
	free(ev);
	free(pf);
	return st;
}

hoff_status hoff_ilp_emit(const hoff_graph *g, const hoff_ilp_iv *iv,
			  int32_t niv, const int32_t *pick, const char *policy,
			  hoff_sched **out, hoff_err *e)
{
	return emit_all(g, iv, niv, NULL, 0, pick, policy, out, e);
}

hoff_status hoff_ilp_emit_model(const hoff_graph *g, const hoff_ilp *m,
				const int32_t *pick, const char *policy,
				hoff_sched **out, hoff_err *e)
{
	return emit_all(g, m->iv, m->niv, m->rc, m->nrc, pick, policy, out, e);
}

hoff_status hoff_ilp_build(const hoff_graph *g, const hoff_ilp_opts *o,
			   const hoff_ilp_req *rq, hoff_ilp **out, hoff_err *e)
{
	double t0 = hoff_now_s();
	*out = NULL;
	hoff_ilp *m = hoff_zalloc(1, sizeof *m);
	if (!m)
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	m->g = g;
	m->o = *o;
	m->rq = rq ? *rq : hoff_ilp_request(o);
	rq = &m->rq;
	m->n = g->nops;
	const int32_t n = m->n;
	hoff_analysis own;
	const hoff_analysis *an;
	hoff_status st = hoff_analysis_use(g, rq->analysis, &own, &an, e);
	if (st != HOFF_OK) {
		hoff_ilp_free(m);
		return st;
	}
	m->compute_ps = an->compute_ps;
	m->lower_bound_ps = an->lower_bound_ps;
	m->budget_mode = rq->budget_bytes != HOFF_NONE;
	m->cap_bytes = m->budget_mode ? rq->budget_bytes
				      : g->device.memory_bytes;
	double bound =
		floor((1.0 + o->max_overhead) * (double)an->lower_bound_ps);
	m->bound_ps = bound < (double)HOFF_PS_LIMIT ? (int64_t)bound
						    : HOFF_PS_LIMIT;
	/* Units: powers of ten near the mean op time and the largest
	 * tensor, so that round durations and sizes stay exact decimals in
	 * an LP or MPS file. */
	m->tu = n > 0 && an->compute_ps > n
			? pow(10, floor(log10((double)an->compute_ps / n)))
			: 1.0;
	size_t nw = (size_t)2 * (size_t)n; /* instants -1 .. 2n-2 */
	m->fixed = hoff_alloc(nw + 1, sizeof *m->fixed);
	m->hot = hoff_zalloc(nw + 1, sizeof *m->hot);
	m->s_col = hoff_zalloc((size_t)n + 1, sizeof *m->s_col);
	int64_t *during = hoff_alloc((size_t)n + 1, sizeof *during);
	hoff_ilp_iv *all = NULL;
	int32_t nall = 0;
	hoff_ilp_rc *rcall = NULL; /* (v2) recompute candidates */
	int32_t nrcall = 0;
	plan pl = {0};
	uint8_t *dl = hoff_zalloc((size_t)n + 1, sizeof *dl);
	int64_t *cover = hoff_zalloc(nw + 1, sizeof *cover);
	int32_t *scratch = hoff_alloc(nw + 8, sizeof *scratch);
	int32_t *seg_first = NULL, *seg_zs = NULL;
	rowb r = {.m = m};
	chan_plan cp = {0};
	count_col *xc = NULL;
	int32_t nxc = 0;
	if (!m->fixed || !m->hot || !m->s_col || !during || !dl || !cover ||
	    !scratch)
		goto oom;
	hoff_analysis_profile(g, during);
	for (int32_t k = 0; k < n; k++) {
		int64_t alloc = g->op[k].workspace_bytes;
		for (int64_t j = g->out_off[k]; j < g->out_off[k + 1]; j++)
			alloc += g->tensor[g->out[j]].bytes;
		m->fixed[IDX(2 * k)] = during[k];
		m->fixed[IDX(2 * k - 1)] = during[k] - alloc;
	}
	if ((st = intervals(g,
			    o->all_candidates ? 0 : hoff_small_below(g, during),
			    &all, &nall, e)) != HOFF_OK)
		goto fail;
	if (o->recompute &&
	    (st = hoff_ilp_rc_list(g, &rcall, &nrcall, e)) != HOFF_OK)
		goto fail;
	if (past(rq))
		goto late;
	int64_t maxb = 1;
	for (int32_t i = 0; i < nall; i++) {
		if (all[i].c.bytes > maxb)
			maxb = all[i].c.bytes;
		if (all[i].c.b < n)
			dl[all[i].c.b] = 1;
		int32_t w0, w1;
		hoff_ilp_absent_range(&all[i], n, &w0, &w1);
		for (int32_t w = w0; w <= w1; w++)
			cover[IDX(w)] += all[i].c.bytes;
	}
	/* (v2) a recompute candidate's tensor is away from its drop to the
	 * re-run, which runs in the window before op b */
	for (int32_t j = 0; j < nrcall; j++) {
		dl[rcall[j].b] = 1;
		for (int32_t w = 2 * rcall[j].a + 1; w <= 2 * rcall[j].b - 1;
		     w++)
			cover[IDX(w)] += g->tensor[rcall[j].t].bytes;
	}
	m->bu = pow(10, floor(log10((double)maxb)));
	/* Instants that can bind: above the budget, or above a lower bound
	 * on the peak (what no offloading can remove). */
	int64_t thr = m->cap_bytes;
	if (!m->budget_mode) {
		int64_t floor_b = 0;
		for (int32_t w = -1; w <= 2 * n - 2; w++)
			if (m->fixed[IDX(w)] - cover[IDX(w)] > floor_b)
				floor_b = m->fixed[IDX(w)] - cover[IDX(w)];
		if (rq->peak_floor > floor_b)
			floor_b = rq->peak_floor;
		thr = floor_b;
		m->peak_floor = floor_b;
	}
	for (int32_t w = -1; w <= 2 * n - 2; w++) {
		bool can_measure = w % 2 == 0 || dl[hoff_ilp_stage_of(w)];
		m->hot[IDX(w)] = can_measure &&
				 (!o->prune || m->fixed[IDX(w)] > thr);
	}
	/* Intervals and their boundaries; a coarser stride when the
	 * binaries would be too many. */
	pl.Poff = hoff_alloc((size_t)nall + 1, sizeof *pl.Poff);
	pl.keep = hoff_alloc((size_t)nall + 1, sizeof *pl.keep);
	if (!pl.Poff || !pl.keep)
		goto oom;
	const bool stall_bound = !m->budget_mode ||
				 rq->max_stall_ps != HOFF_NONE;
	const int64_t most = !stall_bound     ? 0
			     : m->budget_mode ? rq->max_stall_ps
					      : m->bound_ps - m->compute_ps;
	if (stall_bound && o->prune) {
		int64_t *slack = hoff_alloc((size_t)n + 1, sizeof *slack);
		pl.late = hoff_zalloc((size_t)nall + 1, sizeof *pl.late);
		if (!slack || !pl.late) {
			free(slack);
			goto oom;
		}
		hoff_ilp_crowded(m, all, nall, most, slack, pl.late);
		free(slack);
	}
	int32_t K = rq->stride > 0 ? rq->stride : 1;
	int64_t bins = hoff_ilp_make_plan(m, all, nall, K, &pl);
	/* the overhead search's probes are pruned at their caps, below the
	 * min-peak model: it affords finer stages */
	int32_t maxbin = o->max_binaries > 0 ? o->max_binaries
			 : m->budget_mode    ? 6000
					     : 8500;
	while (rq->stride <= 0 && bins > maxbin && K < n) {
		K *= 2;
		bins = hoff_ilp_make_plan(m, all, nall, K, &pl);
		if (bins < 0)
			goto oom;
	}
	if (bins < 0)
		goto oom;
	if (past(rq))
		goto late;
	m->stride = K;
	m->bin_limit = maxbin;
	/* Keep the chosen intervals. */
	m->iv = hoff_alloc((size_t)nall + 1, sizeof *m->iv);
	int32_t *orig = hoff_alloc((size_t)nall + 1, sizeof *orig);
	seg_first = hoff_alloc((size_t)nall + 1, sizeof *seg_first);
	seg_zs = hoff_zalloc((size_t)nall + 1, sizeof *seg_zs);
	if (!m->iv || !orig || !seg_first || !seg_zs) {
		free(orig);
		goto oom;
	}
	for (int32_t i = 0; i < nall; i++)
		seg_first[i] = HOFF_NONE;
	int32_t last_t = HOFF_NONE;
	for (int32_t i = 0; i < nall; i++) {
		if (!pl.keep[i])
			continue;
		orig[m->niv] = i;
		m->iv[m->niv++] = all[i];
		if (all[i].c.t != last_t) {
			m->ncand++;
			last_t = all[i].c.t;
		}
	}
	if (o->recompute && !hoff_ilp_rc_keep(m, rcall, nrcall)) {
		free(orig);
		goto oom;
	}
	memset(dl, 0, (size_t)n + 1);
	for (int32_t j = 0; j < m->nrc; j++)
		dl[m->rc[j].b] = 1;
	for (int32_t i = 0; i < m->niv; i++) {
		const hoff_ilp_iv *v = &m->iv[i];
		if (v->c.b < n)
			dl[v->c.b] = 1;
		else if (v->c.kind == HOFF_CAND_DIRTY)
			dl[n] = 1;
	}
	/* Stall columns: only where a fetch has its deadline, and the tail. */
	for (int32_t k = 0; k <= n; k++) {
		if (!dl[k])
			continue;
		double ub = 0;
		for (int32_t i = 0; i < m->niv; i++) {
			const hoff_ilp_iv *v = &m->iv[i];
			if (k < n && v->c.b == k) /* slowed by duplex at most
						     to phi */
				ub += (double)v->c.fetch_ps /
				      hoff_ilp_phi(m, 2 * v->c.tier);
			else if (k == n && v->c.kind == HOFF_CAND_DIRTY)
				ub += (double)v->c.store_ps;
		}
		m->s_col[k] = hoff_ilp_add_col(m, 0, ub / m->tu,
					       m->budget_mode ? 1 : 0, false,
					       HOFF_COL_STALL, k, 0);
		if (!m->s_col[k])
			goto oom_orig;
	}
	for (int32_t k = 0; k < n; k++)
		if (!m->s_col[k])
			m->hot[IDX(2 * k - 1)] = 0;
	if (!m->budget_mode) {
		double lb = fmin((double)m->peak_floor, (double)m->cap_bytes);
		m->peak_col = hoff_ilp_add_col(m, lb / m->bu,
					       (double)m->cap_bytes / m->bu, 1,
					       false, HOFF_COL_PEAK, 0, 0);
		if (!m->peak_col)
			goto oom_orig;
	}
	/* Interval columns; segments re-linked among the kept. */
	for (int32_t i = 0; i < m->niv; i++) {
		hoff_ilp_iv *v = &m->iv[i];
		int32_t oi = orig[i];
		const int32_t *P = pl.P + pl.Poff[oi];
		int32_t nP = pl.Poff[oi + 1] - pl.Poff[oi];
		bool has_zs = false, has_zd = false;
		if (v->c.kind == HOFF_CAND_DIRTY) {
			int32_t os = all[oi].c.seg;
			if (seg_first[os] == HOFF_NONE)
				seg_first[os] = i;
			v->c.seg = seg_first[os];
			/* a store needs some window to run in */
			int32_t hi = v->c.b >= n ? 2 * n : 2 * P[nP - 1] + 1;
			for (int32_t w = 2 * v->c.a + 2; w <= hi && !has_zs;
			     w++)
				has_zs = hoff_ilp_win_exists(m, w);
			has_zd = seg_zs[os] > 0;
			if (has_zs)
				seg_zs[os]++;
		} else {
			v->c.seg = i;
			has_zd = v->c.kind == HOFF_CAND_CLEAN && !v->fixed;
		}
		if (!hoff_ilp_interval_cols(m, i, P, nP, has_zs, has_zd,
					    scratch))
			goto oom_orig;
		if (i % 64 == 63 && past(rq)) {
			free(orig);
			goto late;
		}
	}
	free(orig);
	orig = NULL;
	if (!hoff_ilp_rc_cols(m))
		goto oom;
	if (m->budget_mode && stall_bound && !hoff_ilp_count_cols(m, &xc, &nxc))
		goto oom;
	if (!hoff_ilp_channel_plan(m, &cp))
		goto oom;
	/* Rows. */
	r.pos = hoff_alloc((size_t)m->ncols + 1, sizeof *r.pos);
	if (!r.pos)
		goto oom;
	for (int32_t j = 0; j <= m->ncols; j++)
		r.pos[j] = -1;
	for (int32_t i = 0; i < m->niv; i++) {
		hoff_ilp_interval_rows(m, &r, i);
		if (i % 64 == 63 && past(rq))
			goto late;
	}
	hoff_ilp_segment_rows(m, &r);
	hoff_ilp_home_rows(m, &r);
	hoff_ilp_channel_rows(m, &r, &cp);
	if (past(rq))
		goto late;
	if (!hoff_ilp_store_fifo_rows(m, &r) || !hoff_ilp_memory_rows(m, &r) ||
	    !hoff_ilp_count_rows(m, &r, xc, nxc))
		goto oom;
	hoff_ilp_rc_rows(m, &r);
	/* (8), (9): in the min-peak model only for its LP floor, since
	 * GLPK's MIR cut rounds at its root did worse with them
	 * (solver/README.md) */
	if (m->budget_mode || rq->floor_rows) {
		hoff_ilp_time_rows(m, &r);
		hoff_ilp_fetch_time_rows(m, &r);
	}
	if (stall_bound) {
		hoff_ilp_row_begin(&r, HOFF_ILP_LE, (double)most / m->tu, 'B',
				   0);
		for (int32_t k = 0; k <= n; k++) {
			hoff_ilp_row_add(&r, m->s_col[k], 1);
			hoff_ilp_rc_len(m, &r, k, 1); /* (v2) re-runs */
		}
		hoff_ilp_row_end(&r);
		/* (10) not in the probes: llama3-8b-train-2l's has 38 of
		 * them, none binding, and its root rounds then stall 0.1 ms
		 * short of infeasible instead of answering it */
		if (!m->budget_mode && !hoff_ilp_deadline_rows(m, &r, most))
			goto oom;
		hoff_ilp_slow_stores(m, most);
	}
	if (r.oom)
		goto oom;
	if (!m->roff) {
		m->roff = hoff_zalloc(2, sizeof *m->roff);
		if (!m->roff)
			goto oom;
	}
	m->roff[m->nrows + 1] = (int64_t)m->nnz;
	if (m->nnz > (size_t)INT_MAX - 1) {
		st = hoff_seterr(e, HOFF_EINPUT,
				 "exact: the model has %zu nonzeros, more than "
				 "the solver takes; use a larger --stride",
				 m->nnz);
		goto fail;
	}
	if (past(rq))
		goto late;
	m->build_s = hoff_now_s() - t0;
	*out = m;
	m = NULL;
	st = HOFF_OK;
	goto done;
oom_orig:
	free(orig);
oom:
	st = hoff_seterr(e, HOFF_ENOMEM, "exact: out of memory building the "
					 "model");
	goto fail;
late:
	st = hoff_seterr(e, HOFF_ETIMEOUT,
			 "the time limit ran out while building the model "
			 "(after %.1f s)",
			 hoff_now_s() - t0);
fail:
	hoff_ilp_free(m);
	m = NULL;
done:
	hoff_ilp_chan_plan_free(&cp);
	free(r.pos);
	free(during);
	free(all);
	free(rcall);
	free(pl.P);
	free(pl.Poff);
	free(pl.keep);
	free(pl.late);
	free(xc);
	free(dl);
	free(cover);
	free(scratch);
	free(seg_first);
	free(seg_zs);
	return st;
}
