/* ilp.c: the exact scheduler's model, its decoding and the pipeline
 * (greedy -> model -> solve -> decode -> simulate -> keep the better).
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
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
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
#include "policy.h"
#include "sim.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* "[lo, hi]" of the peak search for progress lines; an upper end not
 * known yet (no schedule within the bound) reads "none found". */
static const char *peak_range(char *buf, size_t n, int64_t lo, int64_t hi)
{
	if (hi == INT64_MAX)
		snprintf(buf, n, "[%lld, none found yet]", (long long)lo);
	else
		snprintf(buf, n, "[%lld, %lld]", (long long)lo, (long long)hi);
	return buf;
}

/* The command's deadline (hoff_ilp_opts.deadline) has passed. */
static bool past(const hoff_ilp_opts *o)
{
	return o->deadline > 0 && now_s() > o->deadline;
}

/* GLPK's set-up of a model (load, scaling, presolve) cannot be stopped,
 * so a model goes to it only when that is expected to end in the time
 * left: at SETUP_NNZ_PER_S nonzeros (plus rows and columns) a second.
 * Measured (the progress line of hoff_backend_lp) on a loaded 2-core
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
static hoff_status fits_time(const hoff_ilp *m, hoff_err *e)
{
	if (m->o.deadline <= 0)
		return HOFF_OK;
	double left = m->o.deadline - now_s();
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
static void restriction(const hoff_graph *g, const hoff_ilp_opts *o,
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
			       .bound_share = 0.45,
			       .max_stall_ps = HOFF_NONE};
}

/* ---------------------------------------------------------------------
 * Candidate intervals and the schedule a set of decisions makes.
 */

static bool op_updates(const hoff_graph *g, int32_t k, int32_t t)
{
	if (k < 0)
		return false;
	for (int64_t j = g->upd_off[k]; j < g->upd_off[k + 1]; j++)
		if (g->upd[j] == t)
			return true;
	return false;
}

static bool push_iv(hoff_ilp_iv **iv, int32_t *n, size_t *cap, hoff_ilp_iv x)
{
	if (*n == INT32_MAX ||
	    !hoff_grow((void **)iv, cap, (size_t)*n + 1, sizeof **iv))
		return false;
	(*iv)[(*n)++] = x;
	return true;
}

hoff_status hoff_ilp_intervals(const hoff_graph *g, bool all,
			       hoff_ilp_iv **out, int32_t *nout, hoff_err *e)
{
	hoff_ilp_iv *iv = NULL;
	int32_t n = 0;
	size_t cap = 0;
	int32_t best = hoff_best_tier(g);
	int64_t small_below = all ? 0 : hoff_small_below(g, NULL);
	if (small_below < 0)
		goto oom;
	for (int32_t t = 0; t < g->ntensors; t++) {
		const hoff_tensor *x = &g->tensor[t];
		int64_t u0 = g->use_off[t], u1 = g->use_off[t + 1];
		bool homed = x->producer == HOFF_NONE && x->home != HOFF_DEVICE;
		int32_t tier = homed ? x->home : best;
		/* Never used, or nowhere to go. A result no op reads (a
		 * persistent output) still gets its tail: stored after its
		 * producer, it need not stay on the device to the end. */
		if ((u0 == u1 && (x->producer == HOFF_NONE ||
				  !hoff_tensor_persistent(x))) ||
		    tier == HOFF_NONE)
			continue;
		bool small = x->bytes < small_below;
		hoff_ilp_iv base = {.t = t, .bytes = x->bytes,
				    .tier = (int16_t)tier};
		base.fetch_ps = hoff_xfer_ps(g, tier, x->bytes, true);
		base.rmap = base.qmap = base.ysmap = base.ypmap = HOFF_NONE;
		if (homed) {
			hoff_ilp_iv s = base;
			s.kind = HOFF_ILP_START;
			s.a = -1;
			s.lo = -1;
			s.b = g->use[u0];
			s.fixed = true;
			s.seg = n;
			if (!push_iv(&iv, &n, &cap, s))
				goto oom;
		}
		if (!hoff_tensor_movable(g, t))
			continue;
		int32_t prev = homed ? g->use[u0]
			       : x->producer != HOFF_NONE ? x->producer
							  : -1;
		bool clean = homed && !op_updates(g, prev, t);
		int32_t seg = HOFF_NONE;
		for (int64_t i = homed ? u0 + 1 : u0; i <= u1; i++) {
			bool tail = i == u1;
			if (tail && !hoff_tensor_persistent(x))
				break;
			int32_t b = tail ? g->nops : g->use[i];
			if (b - prev - 1 >= 1 && (!small || (tail && clean))) {
				hoff_ilp_iv c = base;
				c.a = prev;
				c.b = b;
				c.lo = prev + 1;
				c.kind = clean ? HOFF_ILP_CLEAN : HOFF_ILP_DIRTY;
				c.store_ps = clean ? 0
						   : hoff_xfer_ps(g, tier,
								  x->bytes,
								  false);
				if (tail)
					c.fetch_ps = 0;
				c.fixed = clean && tail;
				if (!clean && seg == HOFF_NONE)
					seg = n;
				c.seg = clean ? n : seg;
				if (!push_iv(&iv, &n, &cap, c))
					goto oom;
			}
			if (!tail) {
				prev = b;
				if (op_updates(g, b, t)) {
					clean = false;
					seg = HOFF_NONE;
				}
			}
		}
	}
	*out = iv;
	*nout = n;
	return HOFF_OK;
oom:
	free(iv);
	return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
}

static const hoff_ilp_iv *sort_iv;
static const int32_t *sort_pick;

static int by_evict(const void *x, const void *y)
{
	const hoff_ilp_iv *a = &sort_iv[*(const int32_t *)x];
	const hoff_ilp_iv *b = &sort_iv[*(const int32_t *)y];
	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	if (a->b != b->b)
		return a->b < b->b ? -1 : 1;
	return (a->t > b->t) - (a->t < b->t);
}

static int by_fetch(const void *x, const void *y)
{
	int32_t i = *(const int32_t *)x, j = *(const int32_t *)y;
	const hoff_ilp_iv *a = &sort_iv[i], *b = &sort_iv[j];
	if (sort_pick[i] != sort_pick[j])
		return sort_pick[i] < sort_pick[j] ? -1 : 1;
	if (a->b != b->b)
		return a->b < b->b ? -1 : 1;
	return (a->t > b->t) - (a->t < b->t);
}

hoff_status hoff_ilp_emit(const hoff_graph *g, const hoff_ilp_iv *iv,
			  int32_t niv, const int32_t *pick, const char *policy,
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
		if (v->b < g->nops && (pick[i] < v->lo || pick[i] > v->b - 1)) {
			st = hoff_seterr(e, HOFF_EINPUT,
					 "exact: interval %d of \"%s\": "
					 "prefetch boundary %d outside "
					 "[%d, %d]",
					 i, g->tensor[v->t].id, pick[i], v->lo,
					 v->b - 1);
			goto out;
		}
		if (v->kind != HOFF_ILP_START)
			ev[ne++] = i;
		if (v->b < g->nops)
			pf[np++] = i;
	}
	sort_iv = iv;
	sort_pick = pick;
	qsort(ev, ne, sizeof *ev, by_evict);
	qsort(pf, np, sizeof *pf, by_fetch);
	size_t ie = 0, ip = 0;
	for (int32_t q = -1; q < g->nops; q++) {
		if (q >= 0)
			hoff_emit_op(&m, q);
		for (; ie < ne && iv[ev[ie]].a == q; ie++)
			if (!hoff_emit_evict(&m, iv[ev[ie]].t)) {
				st = hoff_seterr(e, HOFF_EINPUT,
						 "exact: cannot evict \"%s\" "
						 "after op %d",
						 g->tensor[iv[ev[ie]].t].id, q);
				goto out;
			}
		for (; ip < np && pick[pf[ip]] == q; ip++)
			if (!hoff_emit_prefetch(&m, iv[pf[ip]].t)) {
				st = hoff_seterr(e, HOFF_EINPUT,
						 "exact: cannot prefetch \"%s\" "
						 "after op %d",
						 g->tensor[iv[pf[ip]].t].id, q);
				goto out;
			}
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

/* ---------------------------------------------------------------------
 * Model arrays.
 */

#define IDX(w) ((size_t)((w) + 1)) /* instant w in [-1, 2n-2] -> index */

static bool win_exists(const hoff_ilp *m, int32_t w)
{
	if (w < 0 || w > 2 * m->n)
		return false;
	if (w % 2 == 0)
		return m->s_col[w / 2] != 0;
	return m->g->op[(w - 1) / 2].time_ps > 0;
}

/* Parallel arrays resized to cap items (their capacity is the owner's). */
#define RESIZE(a, cap) hoff_resize((void **)&(a), (cap), sizeof *(a))

static int32_t add_col(hoff_ilp *m, double lb, double ub, double obj,
		       bool bin, char tag, int32_t a0, int32_t a1)
{
	if (m->ncols >= INT_MAX - 2)
		return 0;
	size_t need = (size_t)m->ncols + 2;
	if (need > m->col_cap) {
		size_t cap = m->col_cap ? 2 * m->col_cap : 1024;
		if (!RESIZE(m->clb, cap) || !RESIZE(m->cub, cap) ||
		    !RESIZE(m->cobj, cap) || !RESIZE(m->cbin, cap) ||
		    !RESIZE(m->ctag, cap) || !RESIZE(m->carg0, cap) ||
		    !RESIZE(m->carg1, cap))
			return 0;
		m->col_cap = cap;
	}
	int32_t j = ++m->ncols;
	m->clb[j] = lb;
	m->cub[j] = ub;
	m->cobj[j] = obj;
	m->cbin[j] = bin;
	m->ctag[j] = (uint8_t)tag;
	m->carg0[j] = a0;
	m->carg1[j] = a1;
	if (bin)
		m->nbin++;
	return j;
}

/* Row under construction: entries appended with merge through pos[]. */
typedef struct rowb {
	hoff_ilp *m;
	int64_t *pos;  /* (ncols + 1) entry of column j in the open row, -1 */
	double konst;  /* constant part of the left-hand side */
	bool oom;
} rowb;

static void row_begin(rowb *r, int type, double rhs, char tag, int32_t arg)
{
	hoff_ilp *m = r->m;
	if (r->oom)
		return;
	if (m->nrows >= INT_MAX - 2) {
		r->oom = true;
		return;
	}
	size_t need = (size_t)m->nrows + 3;
	if (need > m->row_cap) {
		size_t cap = m->row_cap ? 2 * m->row_cap : 1024;
		if (!RESIZE(m->rtype, cap) || !RESIZE(m->rrhs, cap) ||
		    !RESIZE(m->rtag, cap) || !RESIZE(m->rarg, cap) ||
		    !RESIZE(m->roff, cap)) {
			r->oom = true;
			return;
		}
		m->row_cap = cap;
	}
	int32_t i = ++m->nrows;
	m->rtype[i] = (uint8_t)type;
	m->rrhs[i] = rhs;
	m->rtag[i] = (uint8_t)tag;
	m->rarg[i] = arg;
	m->roff[i] = (int64_t)m->nnz;
	r->konst = 0;
}

static void row_add(rowb *r, int32_t col, double v)
{
	hoff_ilp *m = r->m;
	if (r->oom || col == 0 || v == 0)
		return;
	if (r->pos[col] >= 0) {
		m->rval[r->pos[col]] += v;
		return;
	}
	if (m->nnz + 1 > m->nz_cap) {
		size_t cap = m->nz_cap ? 2 * m->nz_cap : 4096;
		if (!RESIZE(m->rcol, cap) || !RESIZE(m->rval, cap)) {
			r->oom = true;
			return;
		}
		m->nz_cap = cap;
	}
	r->pos[col] = (int64_t)m->nnz;
	m->rcol[m->nnz] = col;
	m->rval[m->nnz] = v;
	m->nnz++;
}

/* Ends the open row: drops cancelled entries, moves the constant to the
 * right-hand side; a row left without columns is checked and removed. */
static void row_end(rowb *r)
{
	hoff_ilp *m = r->m;
	if (r->oom)
		return;
	int32_t i = m->nrows;
	size_t out = (size_t)m->roff[i];
	for (size_t k = (size_t)m->roff[i]; k < m->nnz; k++) {
		r->pos[m->rcol[k]] = -1;
		if (fabs(m->rval[k]) > 1e-12) {
			m->rcol[out] = m->rcol[k];
			m->rval[out] = m->rval[k];
			out++;
		}
	}
	m->nnz = out;
	m->rrhs[i] -= r->konst;
	r->konst = 0;
	if (out == (size_t)m->roff[i]) {
		double rhs = m->rrhs[i], tol = 1e-9 * (1 + fabs(rhs));
		bool ok = m->rtype[i] == HOFF_ILP_LE   ? 0 <= rhs + tol
			  : m->rtype[i] == HOFF_ILP_GE ? 0 >= rhs - tol
						       : fabs(rhs) <= tol;
		if (!ok && !m->infeasible) {
			m->infeasible = true;
			if (m->rtag[i] == 'M') {
				int32_t w = m->rarg[i], k = (w + 1) / 2;
				snprintf(m->why, sizeof m->why,
					 "memory %s op \"%s\" is above the "
					 "budget whatever is offloaded",
					 w % 2 == 0 ? "while" : "just before",
					 m->g->op[k].id);
			} else {
				char name[64];
				hoff_ilp_row_name(m, i, name, sizeof name);
				snprintf(m->why, sizeof m->why,
					 "row %s cannot hold", name);
			}
		}
		m->nrows--;
	}
}

/* The row x_a - x_b <= 0 (x_a <= x_b), tagged. */
static void row_le(rowb *r, char tag, int32_t arg, int32_t a, int32_t b)
{
	row_begin(r, HOFF_ILP_LE, 0, tag, arg);
	row_add(r, a, 1);
	row_add(r, b, -1);
	row_end(r);
}

/* ---------------------------------------------------------------------
 * Maps: the column in force at an index (latest defined at or before).
 */

static int32_t map_new(hoff_ilp *m, int32_t len)
{
	if (len <= 0)
		return HOFF_NONE;
	if (m->nmap + (size_t)len > (size_t)INT32_MAX ||
	    !hoff_grow((void **)&m->map, &m->map_cap, m->nmap + (size_t)len,
		       sizeof *m->map))
		return -2;
	int32_t off = (int32_t)m->nmap;
	memset(m->map + off, 0, (size_t)len * sizeof *m->map);
	m->nmap += (size_t)len;
	return off;
}

static int32_t map_at(const hoff_ilp *m, int32_t map, int32_t lo, int32_t hi,
		      int32_t v)
{
	if (map < 0 || v < lo)
		return 0;
	if (v > hi)
		v = hi;
	return m->map[map + v - lo];
}

static int32_t r_at(const hoff_ilp *m, const hoff_ilp_iv *v, int32_t q)
{
	return map_at(m, v->rmap, v->lo, v->b - 1, q);
}

static int32_t q_at(const hoff_ilp *m, const hoff_ilp_iv *v, int32_t w)
{
	return map_at(m, v->qmap, v->q_lo, v->q_hi, w);
}

static int32_t ys_at(const hoff_ilp *m, const hoff_ilp_iv *v, int32_t w)
{
	return map_at(m, v->ysmap, v->ys_lo, v->ys_hi, w);
}

static int32_t yp_at(const hoff_ilp *m, const hoff_ilp_iv *v, int32_t w)
{
	return map_at(m, v->ypmap, v->yp_lo, v->yp_hi, w);
}

/* Fills a map over [lo, hi] from the sorted defined indices idx[0..n)
 * whose columns are first, first + 1, ... */
static void map_fill(hoff_ilp *m, int32_t map, int32_t lo, int32_t hi,
		     const int32_t *idx, int32_t n, int32_t first)
{
	int32_t j = 0, cur = 0;
	for (int32_t v = lo; v <= hi; v++) {
		while (j < n && idx[j] <= v)
			cur = first + j++;
		m->map[map + v - lo] = cur;
	}
}

/* ---------------------------------------------------------------------
 * Building.
 */

typedef struct plan {
	int32_t *P;     /* allowed boundaries, pooled */
	int32_t *Poff;  /* (niv + 1) */
	uint8_t *keep;  /* (niv) */
	uint8_t *late;  /* (niv) 1: its fetch cannot fit (crowded), or NULL */
} plan;

/* Absent range of interval v: instants it may be off the device. */
static void absent_range(const hoff_ilp_iv *v, int32_t n, int32_t *w0,
			 int32_t *w1)
{
	*w0 = v->kind == HOFF_ILP_START ? -1 : 2 * v->a + 1;
	*w1 = v->b >= n ? 2 * n - 2 : 2 * v->b - 2;
}

static int32_t stage_of(int32_t w)
{
	return (w + 1) / 2; /* -1 -> 0, 2k -> k, 2k - 1 -> k */
}

/* q(w): the last boundary at or before instant w (-1: time 0). */
static int32_t bound_of(int32_t w)
{
	return w >= 1 ? (w - 1) / 2 : -1;
}

/* Rounds boundary k up to the stride's grid, at most hi. */
static int32_t grid_up(int32_t k, int32_t stride, int32_t hi)
{
	if (stride <= 1 || k < 0)
		return k;
	int32_t q = ((k + 1 + stride - 1) / stride) * stride - 1;
	return q > hi ? hi : q;
}

static bool push_P(plan *pl, size_t *cap, size_t *np, size_t from,
		   int32_t k)
{
	if (*np > from && pl->P[*np - 1] == k)
		return true;
	if (!hoff_grow((void **)&pl->P, cap, *np + 1, sizeof *pl->P))
		return false;
	pl->P[(*np)++] = k;
	return true;
}

/* (12) Crowded channels, in every model with a stall bound S (the
 * min-peak model, the probes). The START fetches on a tier due by op b
 * (work W_b, fixed) and an optional fetch i due by b_i <= b all move on
 * that tier's h2d channel before op b starts, at most
 * T_b = sum_{k<b} d_k + S after time 0. When D^f_i > T_b - W_b for some
 * such b, interval i has no schedule (sel_i = 0), and it is dropped
 * (late[i] = 1). On deepseek-v3-decode-4l the eight expert fetches leave
 * 133 us by op 47. Of the intervals that store a tensor at the start and
 * fetch it back before its first use, only the KV blocks' (53 us
 * fetches) stay; every weight's (160 us or more) goes: 120 intervals
 * become 89. */
static void crowded(const hoff_ilp *m, const hoff_ilp_iv *all, int32_t nall,
		    int64_t most, int64_t *slack, uint8_t *late)
{
	const int32_t n = m->n;
	for (int32_t c = 0; c < m->g->ntiers; c++) {
		/* slack[b] = T_b - W_b, then its minimum over b' >= b */
		memset(slack, 0, (size_t)n * sizeof *slack);
		for (int32_t i = 0; i < nall; i++)
			if (all[i].kind == HOFF_ILP_START && all[i].tier == c &&
			    all[i].b < n)
				slack[all[i].b] -= all[i].fetch_ps;
		int64_t cum = 0, work = 0;
		for (int32_t b = 0; b < n; b++) {
			work -= slack[b];
			slack[b] = cum + most - work;
			cum += m->g->op[b].time_ps;
		}
		for (int32_t b = n - 2; b >= 0; b--)
			if (slack[b + 1] < slack[b])
				slack[b] = slack[b + 1];
		for (int32_t i = 0; i < nall; i++) {
			const hoff_ilp_iv *v = &all[i];
			if (v->kind != HOFF_ILP_START && v->tier == c &&
			    v->b < n && v->fetch_ps > slack[v->b])
				late[i] = 1;
		}
	}
}

/* Chooses the intervals kept and their boundaries for stride K; returns
 * the binaries that would need, or -1 on OOM. An interval is kept when
 * it can be off the device at a binding instant, or when it is a DIRTY
 * interval whose store would let a later kept interval of its segment
 * leave by a free detach (an "enabler": then every boundary is kept,
 * since when its own fetch is issued only trades fetch time against
 * store time). */
static int64_t make_plan(hoff_ilp *m, const hoff_ilp_iv *all, int32_t nall,
			 int32_t K, plan *pl)
{
	const int32_t n = m->n;
	size_t cap = 64, np = 0;
	free(pl->P);
	pl->P = hoff_alloc(cap, sizeof *pl->P);
	uint8_t *later = hoff_zalloc((size_t)nall + 1, sizeof *later);
	if (!pl->P || !later) {
		free(later);
		return -1;
	}
	/* keep[i]: 1 covers a binding instant, 2 enabler only; 4: some
	 * later interval of its segment is kept */
	for (int32_t i = nall - 1; i >= 0; i--) {
		const hoff_ilp_iv *v = &all[i];
		int32_t w0, w1, nhot = 0, inrange = 0;
		absent_range(v, n, &w0, &w1);
		for (int32_t w = w0; w <= w1; w++) {
			if (!m->hot[IDX(w)])
				continue;
			nhot++;
			int32_t k = stage_of(w);
			inrange += v->b < n && k >= v->lo && k <= v->b - 1;
		}
		bool tail = v->b >= n;
		pl->keep[i] = 0;
		if (pl->late && pl->late[i])
			continue;
		if (v->kind == HOFF_ILP_START ||
		    (nhot > 0 && (tail || inrange > 0)))
			pl->keep[i] = 1;
		else if (v->kind == HOFF_ILP_DIRTY && !tail && later[v->seg])
			pl->keep[i] = 2;
		if (pl->keep[i] && v->kind == HOFF_ILP_DIRTY && !tail &&
		    later[v->seg])
			pl->keep[i] |= 4; /* a later kept interval to enable */
		if (pl->keep[i] && v->kind == HOFF_ILP_DIRTY)
			later[v->seg] = 1;
	}
	/* Where a store may be in flight at an op start (pending[k]), the
	 * compute before each op (cum) and the fetch work due by each op on
	 * each tier (due): a fetch issued late enough to stall op b lets
	 * pending stores drain first, which can be what makes memory fit,
	 * so those boundaries are kept too. */
	int64_t *pend = hoff_zalloc((size_t)n + 2, sizeof *pend);
	int64_t *cum = hoff_zalloc((size_t)n + 2, sizeof *cum);
	int64_t *due = hoff_zalloc(((size_t)n + 2) * (size_t)(m->g->ntiers + 1),
				   sizeof *due);
	uint8_t *mark = hoff_zalloc((size_t)n + 2, sizeof *mark);
	if (!pend || !cum || !due || !mark)
		goto oom;
	for (int32_t i = 0; i < nall; i++) {
		const hoff_ilp_iv *v = &all[i];
		if (pl->keep[i] && v->kind == HOFF_ILP_DIRTY) {
			int32_t hi = v->b >= n ? n - 1 : v->b - 1;
			if (v->a + 1 <= hi) {
				pend[v->a + 1]++;
				pend[hi + 1]--;
			}
		}
		if (v->b < n)
			due[(size_t)v->tier * ((size_t)n + 2) + (size_t)v->b + 1] +=
				v->fetch_ps;
	}
	for (int32_t k = 0; k <= n; k++) {
		pend[k + 1] += pend[k];
		cum[k + 1] = cum[k] + (k < n ? m->g->op[k].time_ps : 0);
	}
	for (int32_t t = 0; t < m->g->ntiers; t++) {
		int64_t *d = due + (size_t)t * ((size_t)n + 2);
		for (int32_t k = 0; k <= n; k++)
			d[k + 1] += d[k];
	}
	int64_t bins = 0;
	for (int32_t i = 0; i < nall; i++) {
		const hoff_ilp_iv *v = &all[i];
		pl->Poff[i] = (int32_t)np;
		bool tail = v->b >= n;
		/* one covering nothing may still create a stall before op b
		 * that lets a pending store drain before a binding instant */
		bool staller = !pl->keep[i] && !tail && pend[v->b] > 0 &&
			       !(pl->late && pl->late[i]) &&
			       (m->hot[IDX(2 * v->b)] ||
				m->hot[IDX(2 * v->b - 1)]);
		if (!pl->keep[i] && !staller)
			continue;
		bool enabler = (pl->keep[i] & 4) != 0;
		bool ok = true;
		if (v->kind == HOFF_ILP_START)
			ok = push_P(pl, &cap, &np, np, -1);
		if (!tail) {
			int32_t lo = v->lo < 0 ? 0 : v->lo;
			memset(mark + lo, 0, (size_t)(v->b - lo));
			int32_t w0, w1;
			absent_range(v, n, &w0, &w1);
			for (int32_t w = w0; !staller && w <= w1; w++) {
				int32_t k = stage_of(w);
				if (m->hot[IDX(w)] && k >= lo && k <= v->b - 1)
					mark[k] = 1;
			}
			const int64_t *d = due + (size_t)v->tier *
						 ((size_t)n + 2);
			bool drain = !m->o.prune || pend[v->b] > 0;
			for (int32_t k = lo; k <= v->b - 1; k++) {
				/* compute of ops k+1 .. b-1 against the fetch
				 * work due at ops k+1 .. b */
				int64_t c = cum[v->b] - cum[k + 1];
				int64_t f = d[v->b + 1] - d[k + 1];
				if (enabler || !m->o.prune || (drain && c < f))
					mark[k] = 1;
			}
			for (int32_t k = lo; ok && k <= v->b - 1; k++)
				if (mark[k])
					ok = push_P(pl, &cap, &np,
						    (size_t)pl->Poff[i],
						    grid_up(k, K, v->b - 1));
		}
		if (!ok)
			goto oom;
		int32_t nP = (int32_t)np - pl->Poff[i];
		if (!tail && nP == 0) { /* covers no binding instant */
			pl->keep[i] = 0;
			continue;
		}
		pl->keep[i] |= 1;
		bins += nP + (v->fixed ? 0 : 2);
		if (v->kind == HOFF_ILP_DIRTY) {
			int32_t qend = tail ? 2 * n - 2 : 2 * pl->P[np - 1] + 1;
			for (int32_t w = 2 * v->a + 2; w <= qend; w++)
				bins += m->hot[IDX(w)] &&
					(K <= 1 || stage_of(w) % K == 0);
			bins += nP;
		}
	}
	free(pend);
	free(cum);
	free(due);
	free(mark);
	pl->Poff[nall] = (int32_t)np;
	free(later);
	return bins;
oom:
	free(pend);
	free(cum);
	free(due);
	free(mark);
	free(later);
	return -1;
}

/* The instants w in [lo, hi] that have a window, into idx; their count. */
static int32_t windows_in(const hoff_ilp *m, int32_t lo, int32_t hi,
			  int32_t *idx)
{
	int32_t n = 0;
	for (int32_t w = lo; w <= hi; w++)
		if (win_exists(m, w))
			idx[n++] = w;
	return n;
}

/* Interval i's columns of kind `tag` at the sorted indices idx[0..n),
 * bounds [0, 1] (the last one's lower bound last_lb), and the map of
 * [lo, hi] onto them in *map (HOFF_NONE when hi < lo). False when out of
 * memory. */
static bool col_run(hoff_ilp *m, int32_t i, char tag, bool binary,
		    double last_lb, const int32_t *idx, int32_t n,
		    int32_t lo, int32_t hi, int32_t *map)
{
	int32_t first = 0;
	for (int32_t j = 0; j < n; j++) {
		int32_t c = add_col(m, j == n - 1 ? last_lb : 0, 1, 0, binary,
				    tag, i, idx[j]);
		if (!c)
			return false;
		if (j == 0)
			first = c;
	}
	if ((*map = map_new(m, hi - lo + 1)) == -2)
		return false;
	if (*map >= 0)
		map_fill(m, *map, lo, hi, idx, n, first);
	return true;
}

/* Creates the columns of kept interval i (allowed boundaries P[0..nP)). */
static bool interval_cols(hoff_ilp *m, int32_t i, const int32_t *P,
			  int32_t nP, bool has_zs, bool has_zd, int32_t *scratch)
{
	hoff_ilp_iv *v = &m->iv[i];
	const int32_t n = m->n;
	bool tail = v->b >= n;
	if (v->kind == HOFF_ILP_DIRTY && !has_zs && !has_zd)
		return true; /* no way to leave: it covers nothing */
	if (!tail && nP == 0)
		return true; /* no way back */
	v->zs = has_zs ? add_col(m, 0, 1, 0, true, 'z', i, 0) : 0;
	v->zd = has_zd ? add_col(m, 0, 1, 0, true, 'Z', i, 0) : 0;
	if ((has_zs && !v->zs) || (has_zd && !v->zd))
		return false;
	/* START's last boundary is issued in every schedule, and its fetch
	 * completes in every schedule */
	const double start_lb = v->kind == HOFF_ILP_START ? 1 : 0;
	if (!tail && nP > 0) {
		v->r_first = P[0];
		v->r_last = P[nP - 1];
		if (!col_run(m, i, 'R', true, start_lb, P, nP, v->lo,
			     v->b - 1, &v->rmap))
			return false;
		/* fetch progress: windows after the first allowed boundary */
		v->yp_lo = 2 * (P[0] + 1);
		v->yp_hi = 2 * v->b;
		int32_t nw = windows_in(m, v->yp_lo, v->yp_hi, scratch);
		if (!col_run(m, i, 'Y', false, start_lb, scratch, nw,
			     v->yp_lo, v->yp_hi, &v->ypmap))
			return false;
	}
	if (v->zs) {
		int32_t qend = tail ? 2 * n - 2 : 2 * v->r_last + 1;
		int32_t nq = 0;
		for (int32_t w = 2 * v->a + 2; w <= qend; w++) {
			bool want = m->hot[IDX(w)] &&
				    (m->stride <= 1 ||
				     stage_of(w) % m->stride == 0);
			for (int32_t j = 0; !want && !tail && j < nP; j++)
				want = w == 2 * P[j] + 1;
			if (want)
				scratch[nq++] = w;
		}
		v->q_lo = 2 * v->a + 2;
		v->q_hi = qend;
		if (!col_run(m, i, 'Q', true, 0, scratch, nq, v->q_lo, qend,
			     &v->qmap))
			return false;
		v->ys_lo = 2 * v->a + 2;
		v->ys_hi = tail ? 2 * n : 2 * v->r_last + 1;
		int32_t nw = windows_in(m, v->ys_lo, v->ys_hi, scratch);
		if (!col_run(m, i, 'y', false, 0, scratch, nw, v->ys_lo,
			     v->ys_hi, &v->ysmap))
			return false;
	}
	return true;
}

/* sel_i as a row term: adds coef * sel_i (constant for fixed ones). */
static void add_sel(rowb *r, const hoff_ilp_iv *v, double coef)
{
	if (v->kind == HOFF_ILP_START || v->fixed)
		r->konst += coef;
	else {
		row_add(r, v->zs, coef);
		row_add(r, v->zd, coef);
	}
}

/* The row x_col = sel_i, tagged. */
static void row_is_sel(rowb *r, char tag, int32_t i, int32_t col)
{
	row_begin(r, HOFF_ILP_EQ, 0, tag, i);
	row_add(r, col, 1);
	add_sel(r, &r->m->iv[i], -1);
	row_end(r);
}

/* Rows (1)-(4) of interval i. */
static void interval_rows(hoff_ilp *m, rowb *r, int32_t i)
{
	const hoff_ilp_iv *v = &m->iv[i];
	const int32_t n = m->n;
	bool tail = v->b >= n;
	if (!tail && v->rmap >= 0) {
		/* (1) R monotone, last = sel; (3) fetch only after the store */
		int32_t prev = 0;
		for (int32_t q = v->r_first; q <= v->r_last; q++) {
			int32_t c = r_at(m, v, q);
			if (c == prev)
				continue;
			if (prev)
				row_le(r, 'r', i, prev, c);
			if (v->zs) {
				row_begin(r, HOFF_ILP_LE, 0, 'f', i);
				row_add(r, c, 1);
				row_add(r, v->zd, -1);
				row_add(r, q_at(m, v, 2 * q + 1), -1);
				row_end(r);
			}
			prev = c;
		}
		if (v->kind != HOFF_ILP_START)
			row_is_sel(r, 'l', i, prev);
		/* (4) fetch progress */
		int32_t yprev = 0;
		for (int32_t w = v->yp_lo; w <= v->yp_hi; w++) {
			int32_t c = yp_at(m, v, w);
			if (c == yprev)
				continue;
			row_le(r, 'i', i, c, r_at(m, v, w / 2 - 1));
			if (yprev)
				row_le(r, 'm', i, yprev, c);
			yprev = c;
		}
		if (v->kind != HOFF_ILP_START)
			row_is_sel(r, 'd', i, yprev);
	}
	if (v->zs) {
		/* (3) store progress and completion */
		int32_t yprev = 0;
		for (int32_t w = v->ys_lo; w <= v->ys_hi; w++) {
			int32_t c = ys_at(m, v, w);
			if (c == yprev)
				continue;
			if (yprev)
				row_le(r, 'm', i, yprev, c);
			yprev = c;
		}
		row_begin(r, HOFF_ILP_EQ, 0, 'c', i);
		row_add(r, yprev, 1);
		row_add(r, v->zs, -1);
		row_end(r);
		int32_t qprev = 0;
		for (int32_t w = v->q_lo; w <= v->q_hi; w++) {
			int32_t c = q_at(m, v, w);
			if (c == qprev)
				continue;
			row_le(r, 'q', i, c, ys_at(m, v, w));
			if (qprev)
				row_le(r, 'n', i, qprev, c);
			qprev = c;
		}
	}
}

/* (2) Segment rows: one store per dirty segment, detaches after it. */
static void segment_rows(hoff_ilp *m, rowb *r)
{
	for (int32_t i = 0; i < m->niv; i++) {
		const hoff_ilp_iv *v = &m->iv[i];
		if (v->kind != HOFF_ILP_DIRTY || v->seg != i)
			continue;
		int32_t nz = 0;
		for (int32_t j = i; j < m->niv && m->iv[j].seg == i; j++)
			nz += m->iv[j].zs != 0;
		if (nz > 1) {
			row_begin(r, HOFF_ILP_LE, 1, 's', i);
			for (int32_t j = i; j < m->niv && m->iv[j].seg == i;
			     j++)
				row_add(r, m->iv[j].zs, 1);
			row_end(r);
		}
		for (int32_t j = i; j < m->niv && m->iv[j].seg == i; j++) {
			const hoff_ilp_iv *u = &m->iv[j];
			if (!u->zd)
				continue;
			row_begin(r, HOFF_ILP_LE, 0, 'a', j);
			row_add(r, u->zd, 1);
			for (int32_t k = i; k < j; k++)
				row_add(r, m->iv[k].zs, -1);
			row_end(r);
			if (u->zs) {
				row_begin(r, HOFF_ILP_LE, 1, 'x', j);
				row_add(r, u->zs, 1);
				row_add(r, u->zd, 1);
				row_end(r);
			}
		}
	}
}

/* A (window, interval) pair, bucketed by window for rows (5) and (6). */
typedef struct wentry {
	int32_t w, i;
	uint8_t store;
} wentry;

static int by_window(const void *x, const void *y)
{
	const wentry *a = x, *b = y;
	if (a->w != b->w)
		return a->w < b->w ? -1 : 1;
	int ca = 2 * sort_iv[a->i].tier + a->store;
	int cb = 2 * sort_iv[b->i].tier + b->store;
	if (ca != cb)
		return ca < cb ? -1 : 1;
	return (a->i > b->i) - (a->i < b->i);
}

/* The (window, channel) groups of transfers, and their saturation
 * columns U (0 where the channel can never be saturated). */
typedef struct chan_plan {
	wentry *we;
	size_t ne;
	size_t *goff;   /* (ngrp + 1) */
	int32_t *ucol;  /* (ngrp) */
	size_t ngrp;
} chan_plan;

static void chan_plan_free(chan_plan *cp)
{
	free(cp->we);
	free(cp->goff);
	free(cp->ucol);
	memset(cp, 0, sizeof *cp);
}

static int chan_of(const hoff_ilp *m, const wentry *x)
{
	return 2 * m->iv[x->i].tier + x->store;
}

static double dur_of(const hoff_ilp *m, const wentry *x)
{
	const hoff_ilp_iv *v = &m->iv[x->i];
	return (double)(x->store ? v->store_ps : v->fetch_ps);
}

/* Groups the transfers by window and channel; creates U columns. */
static bool channel_plan(hoff_ilp *m, chan_plan *cp)
{
	size_t cap = 0;
	memset(cp, 0, sizeof *cp);
	for (int32_t i = 0; i < m->niv; i++) {
		const hoff_ilp_iv *v = &m->iv[i];
		for (int pass = 0; pass < 2; pass++) {
			int32_t map = pass ? v->ysmap : v->ypmap;
			if (map < 0)
				continue;
			int32_t lo = pass ? v->ys_lo : v->yp_lo;
			int32_t hi = pass ? v->ys_hi : v->yp_hi;
			for (int32_t w = lo; w <= hi; w++) {
				if (!win_exists(m, w))
					continue;
				if (!hoff_grow((void **)&cp->we, &cap,
					       cp->ne + 1, sizeof *cp->we))
					return false;
				cp->we[cp->ne++] = (wentry){w, i, (uint8_t)pass};
			}
		}
	}
	sort_iv = m->iv;
	if (cp->ne)
		qsort(cp->we, cp->ne, sizeof *cp->we, by_window);
	cp->goff = hoff_alloc(cp->ne + 1, sizeof *cp->goff);
	cp->ucol = hoff_alloc(cp->ne + 1, sizeof *cp->ucol);
	if (!cp->goff || !cp->ucol)
		return false;
	for (size_t s = 0; s < cp->ne;) {
		size_t e = s;
		double total = 0;
		while (e < cp->ne && cp->we[e].w == cp->we[s].w &&
		       chan_of(m, &cp->we[e]) == chan_of(m, &cp->we[s]))
			total += dur_of(m, &cp->we[e++]);
		int32_t w = cp->we[s].w;
		bool odd = w % 2 == 1;
		double len = odd ? (double)m->g->op[(w - 1) / 2].time_ps : 0;
		cp->goff[cp->ngrp] = s;
		cp->ucol[cp->ngrp] = 0;
		if (!odd || total > len) {
			cp->ucol[cp->ngrp] = add_col(m, 0, 1, 0, true, 'U', w,
						     chan_of(m, &cp->we[s]));
			if (!cp->ucol[cp->ngrp])
				return false;
		}
		cp->ngrp++;
		s = e;
	}
	cp->goff[cp->ngrp] = cp->ne;
	return true;
}

/* Rows (5) channel capacity, (5b) work conservation and (6) stalls. */
static void channel_rows(hoff_ilp *m, rowb *r, const chan_plan *cp)
{
	for (size_t gi = 0; gi < cp->ngrp; gi++) {
		size_t s = cp->goff[gi], e = cp->goff[gi + 1];
		int32_t w = cp->we[s].w;
		bool odd = w % 2 == 1;
		double len = odd ? (double)m->g->op[(w - 1) / 2].time_ps / m->tu
				 : 0;
		int32_t U = cp->ucol[gi];
		int32_t sc = odd ? 0 : m->s_col[w / 2];
		for (int pass = 0; U && pass < 2; pass++) {
			/* pass 0: usage <= len; pass 1: usage >= len when
			 * saturated (U = 1) */
			double M = sc ? m->cub[sc] : 0;
			if (pass == 0)
				row_begin(r, HOFF_ILP_LE, len, 'C', w * 128 +
					  chan_of(m, &cp->we[s]));
			else
				row_begin(r, HOFF_ILP_GE, odd ? 0 : -M, 'W',
					  w * 128 + chan_of(m, &cp->we[s]));
			for (size_t k = s; k < e; k++) {
				const hoff_ilp_iv *v = &m->iv[cp->we[k].i];
				double d = dur_of(m, &cp->we[k]) / m->tu;
				bool st = cp->we[k].store;
				row_add(r, st ? ys_at(m, v, w) : yp_at(m, v, w),
					d);
				row_add(r, st ? ys_at(m, v, w - 1)
					      : yp_at(m, v, w - 1),
					-d);
			}
			if (!odd)
				row_add(r, sc, -1);
			if (pass == 1)
				row_add(r, U, odd ? -len : -M);
			row_end(r);
		}
		/* a channel that is not saturated in w has nothing pending
		 * at its end: every transfer issued on it is complete */
		for (size_t k = s; k < e; k++) {
			const hoff_ilp_iv *v = &m->iv[cp->we[k].i];
			bool st = cp->we[k].store;
			row_begin(r, HOFF_ILP_GE, 0, 'w', cp->we[k].i);
			row_add(r, st ? ys_at(m, v, w) : yp_at(m, v, w), 1);
			if (st)
				row_add(r, v->zs, -1);
			else
				row_add(r, r_at(m, v, w / 2 - 1), -1);
			row_add(r, U, 1);
			row_end(r);
		}
	}
	/* (6) an op waits only for its own inputs: a stall needs one of
	 * them still in flight at the previous op's end, and the channels
	 * they come over busy throughout (with them, or with what FIFO
	 * serves ahead of them) */
	bool *tier_k = hoff_zalloc((size_t)m->g->ntiers + 1, sizeof *tier_k);
	for (int32_t k = 0; tier_k && k < m->n; k++) {
		if (!m->s_col[k])
			continue;
		int32_t sc = m->s_col[k];
		memset(tier_k, 0, (size_t)m->g->ntiers * sizeof *tier_k);
		row_begin(r, HOFF_ILP_LE, 0, 'S', k);
		row_add(r, sc, 1);
		for (int32_t i = 0; i < m->niv; i++) {
			const hoff_ilp_iv *v = &m->iv[i];
			if (v->b != k || v->ypmap < 0)
				continue;
			add_sel(r, v, -m->cub[sc]);
			row_add(r, yp_at(m, v, 2 * k - 1), m->cub[sc]);
			tier_k[v->tier] = true;
		}
		row_end(r);
		row_begin(r, HOFF_ILP_LE, 0, 'T', k);
		row_add(r, sc, 1);
		for (int32_t i = 0; i < m->niv; i++) {
			const hoff_ilp_iv *v = &m->iv[i];
			if (v->ypmap < 0 || !tier_k[v->tier] ||
			    2 * k < v->yp_lo || 2 * k > v->yp_hi)
				continue;
			double d = (double)v->fetch_ps / m->tu;
			row_add(r, yp_at(m, v, 2 * k), -d);
			row_add(r, yp_at(m, v, 2 * k - 1), d);
		}
		row_end(r);
	}
	free(tier_k);
}

/* (5c) FIFO among stores. A store is issued right after its touch a, so
 * the order of the stores on a d2h channel is known (by a, then the
 * decoder's order): one completes only after every store ahead of it
 * has. For store j and window w:
 *   sum_{i ahead of j} D_i (zs_i - Ys_i(w)) <= M_j (1 - Ys_j(w)),
 * M_j the work ahead of j that may still be pending after j's issue.
 * Any subset of the stores ahead gives a valid row; the FIFO_AHEAD
 * nearest keep the rows short. */
#define FIFO_AHEAD 6
static bool store_fifo_rows(hoff_ilp *m, rowb *r)
{
	int32_t *ord = hoff_alloc((size_t)m->niv + 1, sizeof *ord);
	if (!ord)
		return false;
	int32_t ns = 0;
	for (int32_t i = 0; i < m->niv; i++)
		if (m->iv[i].zs && m->iv[i].ysmap >= 0)
			ord[ns++] = i;
	sort_iv = m->iv;
	if (ns)
		qsort(ord, (size_t)ns, sizeof *ord, by_evict);
	for (int32_t x = 0; x < ns; x++) {
		const hoff_ilp_iv *vj = &m->iv[ord[x]];
		double M = 0;
		int32_t y0 = x, cnt = 0;
		while (y0 > 0 && cnt < FIFO_AHEAD) {
			const hoff_ilp_iv *vi = &m->iv[ord[--y0]];
			if (vi->tier == vj->tier && vi->ys_hi >= vj->ys_lo) {
				M += (double)vi->store_ps / m->tu;
				cnt++;
			}
		}
		if (M <= 0)
			continue;
		int32_t prev = 0;
		for (int32_t w = vj->ys_lo; w <= vj->ys_hi; w++) {
			int32_t c = ys_at(m, vj, w);
			if (c == prev)
				continue;
			prev = c;
			row_begin(r, HOFF_ILP_LE, M, 'F', ord[x]);
			row_add(r, c, M);
			for (int32_t y = y0; y < x; y++) {
				const hoff_ilp_iv *vi = &m->iv[ord[y]];
				if (vi->tier != vj->tier || vi->ys_hi < vj->ys_lo)
					continue;
				double d = (double)vi->store_ps / m->tu;
				row_add(r, vi->zs, d);
				row_add(r, ys_at(m, vi, w), -d);
			}
			row_end(r);
		}
	}
	free(ord);
	return true;
}

/* (8) Store time. A store needs D_i ps of its channel in the windows
 * after its issue (right after touch a_i). The channel rows give
 * D_i Q_iw <= the length of windows 2a_i + 2 .. w, which a fractional
 * Q_iw meets with part of the ops' time; when those ops last less than
 * D_i, the rest is stall, all of it or none:
 *   (D_i - sum d_k) Q_iw <= sum s_k    (k in a_i + 1 .. the stage of w)
 * the hull of Q_iw in {0, 1} (no integer solution is cut). With no stall
 * column in range, Q_iw = 0: the store cannot be complete by w. */
/* Walks the Q columns of store interval v in order of their first
 * instant w: the column c in force from w, and lack, D_i less the ops'
 * time in the windows from the store's issue to w. */
typedef struct qwalk {
	int32_t w, c, u; /* u: the next op window to take off */
	int64_t lack;
} qwalk;

static qwalk qwalk_start(const hoff_ilp_iv *v)
{
	return (qwalk){.w = v->q_lo - 1, .u = v->ys_lo + 1,
		       .lack = v->store_ps};
}

static bool qwalk_next(const hoff_ilp *m, const hoff_ilp_iv *v, qwalk *q)
{
	int32_t prev = q->c;
	while (v->zs && ++q->w <= v->q_hi) {
		q->c = q_at(m, v, q->w);
		if (q->c != prev)
			break;
	}
	if (!v->zs || q->w > v->q_hi)
		return false;
	for (; q->u <= q->w; q->u += 2)
		q->lack -= m->g->op[(q->u - 1) / 2].time_ps;
	return true;
}

static void time_rows(hoff_ilp *m, rowb *r)
{
	for (int32_t i = 0; i < m->niv; i++) {
		const hoff_ilp_iv *v = &m->iv[i];
		/* lack only falls: once none, none at every later w */
		for (qwalk q = qwalk_start(v); qwalk_next(m, v, &q) &&
					       q.lack > 0;) {
			row_begin(r, HOFF_ILP_LE, 0, 'D', i);
			row_add(r, q.c, (double)q.lack / m->tu);
			for (int32_t k = v->ys_lo / 2; 2 * k <= q.w; k++)
				row_add(r, m->s_col[k], -1);
			row_end(r);
		}
	}
}

/* (9) Fetch time. A fetch issued at boundary p or later needs D_i ps of
 * its channel before op b_i starts; ops p+1 .. b_i-1 give their time and
 * the rest is stall, in windows p+1 .. b_i, all of it or none:
 *   (D_i - sum d_k) (sel_i - R_i(p-1)) <= sum s_k    (k in p+1 .. b_i)
 * for each allowed boundary p, the hull of "issued at p or later" in
 * {0, 1}. The channel rows alone let a fraction of the fetch issued late
 * fit in the ops' time, with no stall. */
static void fetch_time_rows(hoff_ilp *m, rowb *r)
{
	for (int32_t i = 0; i < m->niv; i++) {
		const hoff_ilp_iv *v = &m->iv[i];
		if (v->rmap < 0 || v->b >= m->n || v->fetch_ps <= 0)
			continue;
		/* lack at p: the fetch less ops p+1 .. b-1, from p = lo up */
		int64_t lack = v->fetch_ps;
		for (int32_t k = v->lo + 1; k <= v->b - 1; k++)
			lack -= m->g->op[k].time_ps;
		int32_t prev = -1;
		for (int32_t p = v->lo; p <= v->b - 1; p++) {
			if (p > v->lo)
				lack += m->g->op[p].time_ps;
			int32_t c = r_at(m, v, p);
			if (c == prev || c == 0)
				continue;
			prev = c;
			if (lack <= 0)
				continue;
			row_begin(r, HOFF_ILP_LE, 0, 'G', i);
			add_sel(r, v, (double)lack / m->tu);
			row_add(r, r_at(m, v, p - 1), -(double)lack / m->tu);
			for (int32_t k = p + 1; k <= v->b; k++)
				row_add(r, m->s_col[k], -1);
			row_end(r);
		}
	}
}

/* (10) Issue deadlines, in the min-peak model, whose total stall is at
 * most S (the overhead mode's bound). The START fetches on one
 * h2d channel due by op b (set A, b_i <= b) that are not issued by
 * boundary q move only in windows sigma_{q+2} .. sigma_b: rows (4) and
 * (5) give  sum_{i in A} D_i (1 - R_i(q)) <= sum_{q+1 < k < b} d_k + S
 * = cap. At most m of them fit in cap, m the most of the shortest whose
 * durations sum to at most cap, so
 *   sum_{i in A} R_i(q) >= |A| - m,
 * the integer rounding of that knapsack, which the relaxation misses: it
 * issues a fraction of each fetch early and pays for that fraction's
 * bytes only. On deepseek-v3-decode-4l the eight expert fetches keep the
 * h2d channel busy from the start to within 133 us of the bound, so one
 * is issued by boundary 7 (120 us in): its 88 MB are on the device
 * while every weight still is. The rows are valid for every integer
 * solution; q goes down from b - 2 while |A| - m >= 1 (cap only grows). */
static bool deadline_rows(hoff_ilp *m, rowb *r, int64_t most)
{
	int32_t *set = hoff_alloc((size_t)m->niv + 1, sizeof *set);
	int64_t *dur = hoff_alloc((size_t)m->niv + 1, sizeof *dur);
	if (!set || !dur) {
		free(set);
		free(dur);
		return false;
	}
	for (int32_t c = 0; c < m->g->ntiers; c++) {
		for (int32_t b = 0; b < m->n; b++) {
			int32_t na = 0, due = 0;
			for (int32_t i = 0; i < m->niv; i++) {
				const hoff_ilp_iv *v = &m->iv[i];
				if (v->kind != HOFF_ILP_START || v->tier != c ||
				    v->rmap < 0 || v->b > b)
					continue;
				due += v->b == b;
				/* durations kept ascending */
				int32_t at = na++;
				for (; at > 0 && dur[at - 1] > v->fetch_ps; at--)
					dur[at] = dur[at - 1];
				dur[at] = v->fetch_ps;
				set[na - 1] = i;
			}
			if (!due)
				continue; /* the same set as the last deadline */
			int64_t cap = most, fit = 0;
			int32_t fits = 0;
			for (int32_t q = b - 2; q >= -1; q--) {
				if (q + 2 < b)
					cap += m->g->op[q + 2].time_ps;
				while (fits < na && fit + dur[fits] <= cap)
					fit += dur[fits++];
				if (fits == na)
					break;
				row_begin(r, HOFF_ILP_GE, na - fits, 'I', b);
				for (int32_t j = 0; j < na; j++)
					row_add(r, r_at(m, &m->iv[set[j]], q), 1);
				row_end(r);
			}
		}
	}
	free(set);
	free(dur);
	return true;
}

/* (11) Stores too slow for the stall bound S (the min-peak model and the
 * probes): by instant w a store issued
 * after touch a_i has had the ops' time in the windows up to w and at
 * most S of stall. When D^s_i is more than that, row (8) would leave
 * Q_iw a fraction, at most S / lack, that no schedule has: Q_iw = 0. */
static void slow_stores(hoff_ilp *m, int64_t most)
{
	for (int32_t i = 0; i < m->niv; i++) {
		const hoff_ilp_iv *v = &m->iv[i];
		for (qwalk q = qwalk_start(v); qwalk_next(m, v, &q) &&
					       q.lack > most;)
			m->cub[q.c] = 0;
	}
}

/* (13) Fetch counts, in the probes (budget-mode models with a stall
 * bound). Per h2d channel c with two START fetches or more, integer
 * columns that every solution has integral and the relaxation spreads:
 *   X_cq = sum of R_i(q) over the START fetches on c not yet due
 *          (q < b_i - 1), one per boundary q where that set of columns
 *          in force changes;
 *   O_c  = sum of sel_i over the other fetches on c due by the last START
 *          deadline (what competes with the START fetches for the
 *          channel, rule 12).
 * The branch and bound branches on O_c first, then on the X_cq, earliest
 * q first (glpk_backend.c). On deepseek-v3-decode-4l the relaxation
 * issues a third of one expert and two thirds of another at boundary 5,
 * working on the late one early to leave the channel room for idle gaps
 * later, and stores and fetches back fractions of KV blocks; any
 * schedule issues whole experts and makes whole round trips. */
typedef struct count_col {
	int32_t col, c, q; /* q: O_COUNT for O_c */
} count_col;

#define O_COUNT (-2) /* boundaries are -1 .. n - 2 */

/* The columns X_cq (q >= -1) or O_c (q = O_COUNT) sums, into cols;
 * their count. */
static int32_t count_members(const hoff_ilp *m, int32_t c, int32_t q,
			     int32_t last, int32_t *cols)
{
	int32_t nc = 0;
	for (int32_t i = 0; i < m->niv; i++) {
		const hoff_ilp_iv *v = &m->iv[i];
		if (v->tier != c || v->b >= m->n)
			continue;
		if (q == O_COUNT) {
			if (v->kind == HOFF_ILP_START || v->b > last)
				continue;
			if (v->zs)
				cols[nc++] = v->zs;
			if (v->zd)
				cols[nc++] = v->zd;
		} else if (v->kind == HOFF_ILP_START && v->rmap >= 0 &&
			   q < v->b - 1) {
			int32_t j = r_at(m, v, q);
			if (j)
				cols[nc++] = j;
		}
	}
	return nc;
}

static bool count_cols(hoff_ilp *m, count_col **out, int32_t *nout)
{
	*out = NULL;
	*nout = 0;
	size_t cap = 0;
	int32_t *cur = hoff_alloc(2 * (size_t)m->niv + 1, sizeof *cur);
	int32_t *prev = hoff_alloc(2 * (size_t)m->niv + 1, sizeof *prev);
	bool ok = cur && prev;
	for (int32_t c = 0; ok && c < m->g->ntiers; c++) {
		int32_t nstart = 0, last = -1;
		for (int32_t i = 0; i < m->niv; i++) {
			const hoff_ilp_iv *v = &m->iv[i];
			if (v->kind == HOFF_ILP_START && v->tier == c &&
			    v->b < m->n) {
				nstart++;
				last = v->b > last ? v->b : last;
			}
		}
		if (nstart < 2)
			continue;
		int32_t np = 0;
		for (int32_t q = O_COUNT; ok && q < m->n - 1; q++) {
			int32_t nc = count_members(m, c, q, last, cur);
			if (nc < 2)
				continue;
			if (q != O_COUNT) {
				bool same = nc == np &&
					    !memcmp(cur, prev,
						    (size_t)nc * sizeof *cur);
				memcpy(prev, cur, (size_t)nc * sizeof *cur);
				np = nc;
				if (same)
					continue;
			}
			int32_t j = add_col(m, 0, nc, 0, false,
					    q == O_COUNT ? 'O' : 'X', c,
					    q == O_COUNT ? last : q);
			ok = j && hoff_grow((void **)out, &cap,
					    (size_t)*nout + 1, sizeof **out);
			if (ok) {
				m->cbin[j] = 2; /* integer, not binary */
				(*out)[(*nout)++] = (count_col){j, c, q};
			}
		}
	}
	free(cur);
	free(prev);
	return ok;
}

static bool count_rows(hoff_ilp *m, rowb *r, const count_col *x, int32_t nx)
{
	int32_t *cols = hoff_alloc(2 * (size_t)m->niv + 1, sizeof *cols);
	if (!cols)
		return false;
	for (int32_t k = 0; k < nx; k++) {
		int32_t last = m->carg1[x[k].col];
		int32_t nc = count_members(m, x[k].c, x[k].q, last, cols);
		row_begin(r, HOFF_ILP_EQ, 0, 'N', x[k].c);
		row_add(r, x[k].col, 1);
		for (int32_t j = 0; j < nc; j++)
			row_add(r, cols[j], -1);
		row_end(r);
	}
	free(cols);
	return true;
}

/* (7) Memory rows at the constrained instants. */
static bool memory_rows(hoff_ilp *m, rowb *r)
{
	const int32_t n = m->n;
	size_t nw = (size_t)2 * (size_t)n;
	int32_t *cnt = hoff_zalloc(nw + 1, sizeof *cnt);
	if (!cnt)
		return false;
	/* bucket intervals by instant */
	for (int32_t i = 0; i < m->niv; i++) {
		int32_t w0, w1;
		absent_range(&m->iv[i], n, &w0, &w1);
		for (int32_t w = w0; w <= w1; w++)
			if (m->hot[IDX(w)])
				cnt[IDX(w) + 1]++;
	}
	for (size_t k = 0; k < nw; k++)
		cnt[k + 1] += cnt[k];
	int32_t *lst = hoff_alloc((size_t)cnt[nw] + 1, sizeof *lst);
	int32_t *fill = hoff_alloc(nw + 1, sizeof *fill);
	if (!lst || !fill) {
		free(cnt);
		free(lst);
		free(fill);
		return false;
	}
	memcpy(fill, cnt, (nw + 1) * sizeof *fill);
	for (int32_t i = 0; i < m->niv; i++) {
		int32_t w0, w1;
		absent_range(&m->iv[i], n, &w0, &w1);
		for (int32_t w = w0; w <= w1; w++)
			if (m->hot[IDX(w)])
				lst[fill[IDX(w)]++] = i;
	}
	for (int32_t w = -1; w <= 2 * n - 2; w++) {
		if (!m->hot[IDX(w)])
			continue;
		double F = (double)m->fixed[IDX(w)] / m->bu;
		if (m->budget_mode) {
			row_begin(r, HOFF_ILP_LE,
				  (double)m->cap_bytes / m->bu - F, 'M', w);
		} else {
			row_begin(r, HOFF_ILP_LE, -F, 'M', w);
			row_add(r, m->peak_col, -1);
		}
		for (int32_t k = cnt[IDX(w)]; k < cnt[IDX(w) + 1]; k++) {
			const hoff_ilp_iv *v = &m->iv[lst[k]];
			double b = (double)v->bytes / m->bu;
			if (v->kind == HOFF_ILP_START || v->fixed)
				r->konst -= b;
			else
				row_add(r, v->zd, -b);
			if (v->b < n)
				row_add(r, r_at(m, v, bound_of(w)), b);
			if (v->zs)
				row_add(r, q_at(m, v, w), -b);
		}
		row_end(r);
	}
	free(cnt);
	free(lst);
	free(fill);
	return true;
}

hoff_status hoff_ilp_build(const hoff_graph *g, const hoff_ilp_opts *o,
			   hoff_ilp **out, hoff_err *e)
{
	double t0 = now_s();
	*out = NULL;
	hoff_ilp *m = hoff_zalloc(1, sizeof *m);
	if (!m)
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	m->g = g;
	m->o = *o;
	m->n = g->nops;
	const int32_t n = m->n;
	hoff_analysis an;
	hoff_status st = hoff_analyze(g, &an, e);
	if (st != HOFF_OK) {
		hoff_ilp_free(m);
		return st;
	}
	m->compute_ps = an.compute_ps;
	m->lower_bound_ps = an.lower_bound_ps;
	m->budget_mode = o->budget_bytes != HOFF_NONE;
	m->cap_bytes = m->budget_mode ? o->budget_bytes
				      : g->device.memory_bytes;
	double bound = floor((1.0 + o->max_overhead) *
			     (double)an.lower_bound_ps);
	m->bound_ps = bound < (double)HOFF_PS_LIMIT ? (int64_t)bound
						    : HOFF_PS_LIMIT;
	/* Units: powers of ten near the mean op time and the largest
	 * tensor, so that round durations and sizes stay exact decimals in
	 * an LP or MPS file. */
	m->tu = n > 0 && an.compute_ps > n
			? pow(10, floor(log10((double)an.compute_ps / n)))
			: 1.0;
	size_t nw = (size_t)2 * (size_t)n; /* instants -1 .. 2n-2 */
	m->fixed = hoff_alloc(nw + 1, sizeof *m->fixed);
	m->hot = hoff_zalloc(nw + 1, sizeof *m->hot);
	m->s_col = hoff_zalloc((size_t)n + 1, sizeof *m->s_col);
	int64_t *during = hoff_alloc((size_t)n + 1, sizeof *during);
	hoff_ilp_iv *all = NULL;
	int32_t nall = 0;
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
	if ((st = hoff_ilp_intervals(g, o->all_candidates, &all, &nall, e)) !=
	    HOFF_OK)
		goto fail;
	if (past(o))
		goto late;
	int64_t maxb = 1;
	for (int32_t i = 0; i < nall; i++) {
		if (all[i].bytes > maxb)
			maxb = all[i].bytes;
		if (all[i].b < n)
			dl[all[i].b] = 1;
		int32_t w0, w1;
		absent_range(&all[i], n, &w0, &w1);
		for (int32_t w = w0; w <= w1; w++)
			cover[IDX(w)] += all[i].bytes;
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
		if (o->peak_floor > floor_b)
			floor_b = o->peak_floor;
		thr = floor_b;
		m->peak_floor = floor_b;
	}
	for (int32_t w = -1; w <= 2 * n - 2; w++) {
		bool can_measure = w % 2 == 0 || dl[stage_of(w)];
		m->hot[IDX(w)] = can_measure &&
				 (!o->prune || m->fixed[IDX(w)] > thr);
	}
	/* Intervals and their boundaries; a coarser stride when the
	 * binaries would be too many. */
	pl.Poff = hoff_alloc((size_t)nall + 1, sizeof *pl.Poff);
	pl.keep = hoff_alloc((size_t)nall + 1, sizeof *pl.keep);
	if (!pl.Poff || !pl.keep)
		goto oom;
	const bool stall_bound = !m->budget_mode || o->max_stall_ps != HOFF_NONE;
	const int64_t most = !stall_bound      ? 0
			     : m->budget_mode ? o->max_stall_ps
					      : m->bound_ps - m->compute_ps;
	if (stall_bound && o->prune) {
		int64_t *slack = hoff_alloc((size_t)n + 1, sizeof *slack);
		pl.late = hoff_zalloc((size_t)nall + 1, sizeof *pl.late);
		if (!slack || !pl.late) {
			free(slack);
			goto oom;
		}
		crowded(m, all, nall, most, slack, pl.late);
		free(slack);
	}
	int32_t K = o->stride > 0 ? o->stride : 1;
	int64_t bins = make_plan(m, all, nall, K, &pl);
	/* the overhead search's probes are pruned at their caps, below the
	 * min-peak model: it affords finer stages */
	int32_t maxbin = o->max_binaries > 0 ? o->max_binaries
			 : m->budget_mode    ? 6000
					     : 8500;
	while (o->stride <= 0 && bins > maxbin && K < n) {
		K *= 2;
		bins = make_plan(m, all, nall, K, &pl);
		if (bins < 0)
			goto oom;
	}
	if (bins < 0)
		goto oom;
	if (past(o))
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
		if (all[i].t != last_t) {
			m->ncand++;
			last_t = all[i].t;
		}
	}
	memset(dl, 0, (size_t)n + 1);
	for (int32_t i = 0; i < m->niv; i++) {
		const hoff_ilp_iv *v = &m->iv[i];
		if (v->b < n)
			dl[v->b] = 1;
		else if (v->kind == HOFF_ILP_DIRTY)
			dl[n] = 1;
	}
	/* Stall columns: only where a fetch has its deadline, and the tail. */
	for (int32_t k = 0; k <= n; k++) {
		if (!dl[k])
			continue;
		double ub = 0;
		for (int32_t i = 0; i < m->niv; i++) {
			const hoff_ilp_iv *v = &m->iv[i];
			if (k < n && v->b == k)
				ub += (double)v->fetch_ps;
			else if (k == n && v->kind == HOFF_ILP_DIRTY)
				ub += (double)v->store_ps;
		}
		m->s_col[k] = add_col(m, 0, ub / m->tu, m->budget_mode ? 1 : 0,
				      false, 's', k, 0);
		if (!m->s_col[k])
			goto oom_orig;
	}
	for (int32_t k = 0; k < n; k++)
		if (!m->s_col[k])
			m->hot[IDX(2 * k - 1)] = 0;
	if (!m->budget_mode) {
		double lb = fmin((double)m->peak_floor, (double)m->cap_bytes);
		m->peak_col = add_col(m, lb / m->bu,
				      (double)m->cap_bytes / m->bu, 1, false,
				      'P', 0, 0);
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
		if (v->kind == HOFF_ILP_DIRTY) {
			int32_t os = all[oi].seg;
			if (seg_first[os] == HOFF_NONE)
				seg_first[os] = i;
			v->seg = seg_first[os];
			/* a store needs some window to run in */
			int32_t hi = v->b >= n ? 2 * n : 2 * P[nP - 1] + 1;
			for (int32_t w = 2 * v->a + 2; w <= hi && !has_zs; w++)
				has_zs = win_exists(m, w);
			has_zd = seg_zs[os] > 0;
			if (has_zs)
				seg_zs[os]++;
		} else {
			v->seg = i;
			has_zd = v->kind == HOFF_ILP_CLEAN && !v->fixed;
		}
		if (!interval_cols(m, i, P, nP, has_zs, has_zd, scratch))
			goto oom_orig;
		if (i % 64 == 63 && past(o)) {
			free(orig);
			goto late;
		}
	}
	free(orig);
	orig = NULL;
	if (m->budget_mode && stall_bound && !count_cols(m, &xc, &nxc))
		goto oom;
	if (!channel_plan(m, &cp))
		goto oom;
	/* Rows. */
	r.pos = hoff_alloc((size_t)m->ncols + 1, sizeof *r.pos);
	if (!r.pos)
		goto oom;
	for (int32_t j = 0; j <= m->ncols; j++)
		r.pos[j] = -1;
	for (int32_t i = 0; i < m->niv; i++) {
		interval_rows(m, &r, i);
		if (i % 64 == 63 && past(o))
			goto late;
	}
	segment_rows(m, &r);
	channel_rows(m, &r, &cp);
	if (past(o))
		goto late;
	if (!store_fifo_rows(m, &r) || !memory_rows(m, &r) ||
	    !count_rows(m, &r, xc, nxc))
		goto oom;
	/* (8), (9): in the min-peak model only for its LP floor, since
	 * GLPK's MIR cut rounds at its root did worse with them
	 * (solver/README.md) */
	if (m->budget_mode || o->floor_rows) {
		time_rows(m, &r);
		fetch_time_rows(m, &r);
	}
	if (stall_bound) {
		row_begin(&r, HOFF_ILP_LE, (double)most / m->tu, 'B', 0);
		for (int32_t k = 0; k <= n; k++)
			row_add(&r, m->s_col[k], 1);
		row_end(&r);
		/* (10) not in the probes: llama3-8b-train-2l's has 38 of
		 * them, none binding, and its root rounds then stall 0.1 ms
		 * short of infeasible instead of answering it */
		if (!m->budget_mode && !deadline_rows(m, &r, most))
			goto oom;
		slow_stores(m, most);
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
	if (past(o))
		goto late;
	m->build_s = now_s() - t0;
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
			 now_s() - t0);
fail:
	hoff_ilp_free(m);
	m = NULL;
done:
	chan_plan_free(&cp);
	free(r.pos);
	free(during);
	free(all);
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

void hoff_ilp_free(hoff_ilp *m)
{
	if (!m)
		return;
	free(m->fixed);
	free(m->hot);
	free(m->s_col);
	free(m->iv);
	free(m->map);
	free(m->clb);
	free(m->cub);
	free(m->cobj);
	free(m->cbin);
	free(m->ctag);
	free(m->carg0);
	free(m->carg1);
	free(m->rtype);
	free(m->rrhs);
	free(m->rtag);
	free(m->rarg);
	free(m->roff);
	free(m->rcol);
	free(m->rval);
	free(m);
}

void hoff_ilp_col_name(const hoff_ilp *m, int32_t j, char *buf, size_t len)
{
	int tag = m->ctag[j];
	switch (tag) {
	case 's':
	case 'P':
		snprintf(buf, len, "%c%d", tag, m->carg0[j]);
		break;
	case 'z':
	case 'Z':
		snprintf(buf, len, "%c%d", tag, m->carg0[j]);
		break;
	default: /* R (boundary), Q (instant), Y y (window); +1 keeps >= 0 */
		snprintf(buf, len, "%c%d_%d", tag, m->carg0[j],
			 m->carg1[j] + 1);
	}
}

void hoff_ilp_row_name(const hoff_ilp *m, int32_t i, char *buf, size_t len)
{
	int tag = m->rtag[i];
	if (tag == 'M')
		snprintf(buf, len, "M%d_%d", m->rarg[i] + 1, i);
	else if (tag == 'C')
		snprintf(buf, len, "C%d_%d_%d", m->rarg[i] / 128,
			 m->rarg[i] % 128, i);
	else
		snprintf(buf, len, "%c%d_%d", tag, m->rarg[i], i);
}

double hoff_ilp_violation(const hoff_ilp *m, const double *x, int32_t *row)
{
	double worst = 0;
	*row = 0;
	for (int32_t j = 1; j <= m->ncols; j++) {
		double v = 0;
		if (x[j] < m->clb[j])
			v = m->clb[j] - x[j];
		if (x[j] > m->cub[j])
			v = x[j] - m->cub[j];
		if (m->cbin[j] && fabs(x[j] - floor(x[j] + 0.5)) > v)
			v = fabs(x[j] - floor(x[j] + 0.5));
		if (v > worst)
			worst = v;
	}
	for (int32_t i = 1; i <= m->nrows; i++) {
		double act = 0;
		for (int64_t k = m->roff[i]; k < m->roff[i + 1]; k++)
			act += m->rval[k] * x[m->rcol[k]];
		double rhs = m->rrhs[i], v = 0;
		if (m->rtype[i] != HOFF_ILP_GE && act > rhs)
			v = act - rhs;
		if (m->rtype[i] != HOFF_ILP_LE && act < rhs)
			v = rhs - act;
		v /= 1 + fabs(rhs);
		if (v > worst) {
			worst = v;
			*row = i;
		}
	}
	return worst;
}

hoff_status hoff_ilp_lp_bound(const hoff_ilp *m, double time_limit_s,
			      double *bound, bool *ok, hoff_err *e)
{
	*ok = false;
	if (m->infeasible)
		return HOFF_OK;
	return hoff_backend_lp(m, time_limit_s, bound, ok, e);
}

void hoff_ilp_decode(const hoff_ilp *m, const double *x, int32_t *pick)
{
	for (int32_t i = 0; i < m->niv; i++) {
		const hoff_ilp_iv *v = &m->iv[i];
		bool sel = v->kind == HOFF_ILP_START || v->fixed ||
			   (v->zs && x[v->zs] > 0.5) ||
			   (v->zd && x[v->zd] > 0.5);
		pick[i] = HOFF_ILP_OFF;
		if (!sel)
			continue;
		if (v->b >= m->n) {
			pick[i] = m->n - 1;
			continue;
		}
		if (v->rmap < 0) {
			pick[i] = HOFF_ILP_OFF; /* cannot come back: unused */
			continue;
		}
		pick[i] = v->r_last;
		for (int32_t q = v->r_first; q <= v->r_last; q++) {
			int32_t c = r_at(m, v, q);
			if (c && x[c] > 0.5) {
				pick[i] = q;
				break;
			}
		}
	}
}

double hoff_ilp_objective_value(const hoff_ilp *m, double obj)
{
	return m->budget_mode ? obj * m->tu : obj * m->bu;
}

/* Instants the model can constrain: op starts, and the end of op k - 1
 * where op k can stall (elsewhere memory is at most the next op start's,
 * as the stall window has no length). */
static bool measurable(const hoff_ilp *m, int32_t w)
{
	return w % 2 == 0 || m->s_col[stage_of(w)] != 0;
}

/* The absence term of interval v at instant w under x (the memory rows'
 * zd - R + Q, 0 outside v's range): with round, each column read as 0 or
 * 1 first. */
static double absence(const hoff_ilp *m, const hoff_ilp_iv *v, int32_t w,
		      const double *x, bool round)
{
	int32_t w0, w1;
	absent_range(v, m->n, &w0, &w1);
	if (w < w0 || w > w1)
		return 0;
#define COL(c) ((c) ? (round ? (double)(x[c] > 0.5) : x[c]) : 0)
	double ab = v->kind == HOFF_ILP_START || v->fixed ? 1 : COL(v->zd);
	if (v->b < m->n)
		ab -= COL(r_at(m, v, bound_of(w)));
	if (v->zs)
		ab += COL(q_at(m, v, w));
#undef COL
	return ab;
}

int64_t hoff_ilp_model_peak(const hoff_ilp *m, const double *x)
{
	/* In integers: peaks are compared to the byte. Decisions are
	 * rounded; a store counts as complete only where the column in
	 * force (the latest at or before the instant) says so, which is
	 * what the memory rows read, and never more than the machine. */
	int64_t peak = 0;
	for (int32_t w = -1; w <= 2 * m->n - 2; w++) {
		if (!measurable(m, w))
			continue;
		int64_t mem = m->fixed[IDX(w)];
		for (int32_t i = 0; i < m->niv; i++)
			mem -= m->iv[i].bytes *
			       (int64_t)absence(m, &m->iv[i], w, x, true);
		if (mem > peak)
			peak = mem;
	}
	return peak;
}

void hoff_ilp_predict(const hoff_ilp *m, const double *x,
		      int64_t *makespan_ps, int64_t *peak_bytes)
{
	double stall = 0;
	for (int32_t k = 0; k <= m->n; k++)
		if (m->s_col[k])
			stall += x[m->s_col[k]];
	*makespan_ps = m->compute_ps + (int64_t)llround(stall * m->tu);
	int64_t peak = 0;
	for (int32_t w = -1; w <= 2 * m->n - 2; w++) {
		double mem = (double)m->fixed[IDX(w)];
		for (int32_t i = 0; i < m->niv; i++)
			mem -= (double)m->iv[i].bytes *
			       floor(absence(m, &m->iv[i], w, x, false) + 0.5);
		if (mem > (double)peak)
			peak = (int64_t)llround(mem);
	}
	if (!m->budget_mode && m->peak_col)
		peak = (int64_t)llround(x[m->peak_col] * m->bu);
	*peak_bytes = peak;
}

/* ---------------------------------------------------------------------
 * A start solution from a schedule's decisions.
 */

/* The model interval of tensor t whose gap holds boundary q, or -1. */
static int32_t iv_of(const hoff_ilp *m, const int32_t *first, int32_t t,
		     int32_t q, bool evict)
{
	for (int32_t i = first[t]; i >= 0 && i < m->niv && m->iv[i].t == t;
	     i++) {
		const hoff_ilp_iv *v = &m->iv[i];
		if (evict && v->kind == HOFF_ILP_START)
			continue;
		if (v->a <= q && q < v->b)
			return i;
	}
	return -1;
}

void hoff_ilp_picks_of(const hoff_ilp *m, const hoff_sched *s, int32_t *pick)
{
	const hoff_graph *g = m->g;
	int32_t *first = hoff_alloc((size_t)g->ntensors + 1, sizeof *first);
	uint8_t *out = hoff_zalloc((size_t)m->niv + 1, sizeof *out);
	int32_t *at = hoff_alloc((size_t)m->niv + 1, sizeof *at);
	for (int32_t i = 0; i < m->niv; i++)
		pick[i] = HOFF_ILP_OFF;
	if (!first || !out || !at)
		goto done;
	for (int32_t t = 0; t < g->ntensors; t++)
		first[t] = -1;
	for (int32_t i = m->niv - 1; i >= 0; i--)
		first[m->iv[i].t] = i;
	for (int32_t i = 0; i < m->niv; i++)
		at[i] = HOFF_ILP_OFF;
	int32_t q = -1;
	for (int64_t k = 0; k < s->nsteps; k++) {
		const hoff_step *p = &s->step[k];
		if (p->kind == HOFF_STEP_OP) {
			q = p->id;
			continue;
		}
		if (p->kind == HOFF_STEP_PREFETCH) {
			int32_t i = iv_of(m, first, p->id, q, false);
			if (i >= 0 && at[i] == HOFF_ILP_OFF)
				at[i] = q;
		} else {
			int32_t i = iv_of(m, first, p->id, q, true);
			if (i >= 0)
				out[i] = 1;
		}
	}
	for (int32_t i = 0; i < m->niv; i++) {
		const hoff_ilp_iv *v = &m->iv[i];
		bool used = v->kind == HOFF_ILP_START || v->fixed || out[i];
		if (!used)
			continue;
		if (v->b >= m->n) {
			pick[i] = (v->zs || v->zd || v->fixed) ? m->n - 1
							       : HOFF_ILP_OFF;
			continue;
		}
		if (v->rmap < 0)
			continue;
		int32_t p = at[i] == HOFF_ILP_OFF ? v->b - 1 : at[i];
		if (p < v->lo)
			p = v->lo;
		/* the latest allowed boundary at or before p: the same
		 * binding instants covered, issued no later */
		int32_t c = r_at(m, v, p);
		if (!c) {
			pick[i] = v->kind == HOFF_ILP_START ? v->r_first
							   : HOFF_ILP_OFF;
			continue;
		}
		pick[i] = m->carg1[c];
	}
done:
	free(first);
	free(out);
	free(at);
}

/* Sets every U column from the rows that define it: 1 when its channel
 * is saturated in its window under x. */
static void set_saturation(const hoff_ilp *m, double *x)
{
	for (int32_t i = 1; i <= m->nrows; i++) {
		if (m->rtag[i] != 'W')
			continue;
		double act = 0, uc = 0;
		int32_t U = 0;
		for (int64_t k = m->roff[i]; k < m->roff[i + 1]; k++) {
			int32_t c = m->rcol[k];
			if (m->ctag[c] == 'U') {
				U = c;
				uc = m->rval[k];
			} else {
				act += m->rval[k] * x[c];
			}
		}
		if (U)
			x[U] = act + uc >= m->rrhs[i] - 1e-9 ? 1 : 0;
	}
}

/* Fraction of [a, b] done by time t. */
static double done_by(int64_t a, int64_t b, int64_t t)
{
	if (t >= b)
		return 1;
	if (t <= a)
		return 0;
	return (double)(t - a) / (double)(b - a);
}

bool hoff_ilp_start(const hoff_ilp *m, const int32_t *pick, double *x,
		    hoff_err *e)
{
	const hoff_graph *g = m->g;
	const int32_t n = m->n;
	bool ok = false;
	hoff_sched *s = NULL;
	hoff_sim_result r = {0};
	double *y = hoff_zalloc((size_t)m->ncols + 1, sizeof *y);
	int32_t *first = hoff_alloc((size_t)g->ntensors + 1, sizeof *first);
	int64_t *fs = hoff_zalloc((size_t)m->niv + 1, sizeof *fs);
	int64_t *fe = hoff_zalloc((size_t)m->niv + 1, sizeof *fe);
	int64_t *ss = hoff_zalloc((size_t)m->niv + 1, sizeof *ss);
	int64_t *se = hoff_zalloc((size_t)m->niv + 1, sizeof *se);
	int32_t *step_iv = NULL;
	if (!y || !first || !fs || !fe || !ss || !se)
		goto out;
	/* The schedule of the decisions, simulated. */
	if (hoff_ilp_emit(g, m->iv, m->niv, pick, "greedy", &s, e) != HOFF_OK)
		goto out;
	hoff_sim_opts so = hoff_sim_defaults();
	so.budget_bytes = INT64_MAX;
	so.timeline = true;
	so.op_times = true;
	if (hoff_sim_run(g, s, &so, &r, e) != HOFF_OK || !r.valid)
		goto out;
	step_iv = hoff_alloc((size_t)s->nsteps + 1, sizeof *step_iv);
	if (!step_iv)
		goto out;
	for (int32_t t = 0; t < g->ntensors; t++)
		first[t] = -1;
	for (int32_t i = m->niv - 1; i >= 0; i--)
		first[m->iv[i].t] = i;
	int32_t q = -1;
	for (int64_t k = 0; k < s->nsteps; k++) {
		const hoff_step *p = &s->step[k];
		step_iv[k] = -1;
		if (p->kind == HOFF_STEP_OP)
			q = p->id;
		else if (p->kind != HOFF_STEP_DETACH)
			step_iv[k] = iv_of(m, first, p->id, q,
					   p->kind == HOFF_STEP_STORE);
	}
	for (size_t k = 0; k < r.tl.nev; k++) {
		const hoff_event *ev = &r.tl.ev[k];
		int32_t i = ev->step >= 0 ? step_iv[ev->step] : -1;
		if (i < 0)
			continue;
		if (ev->kind == HOFF_EV_STORE) {
			ss[i] = ev->start_ps;
			se[i] = ev->end_ps;
		} else if (ev->kind == HOFF_EV_PREFETCH) {
			fs[i] = ev->start_ps;
			fe[i] = ev->end_ps;
		}
	}
	/* Every column from the timeline: op k starts at S[k]. */
	const int64_t *S = r.op_start_ps;
#define END(k) ((k) < 0 ? 0 : S[k] + g->op[k].time_ps)
	for (int32_t j = 1; j <= m->ncols; j++) {
		int32_t a0 = m->carg0[j], a1 = m->carg1[j];
		int tag = m->ctag[j];
		bool per_iv = tag != 's' && tag != 'P' && tag != 'U' &&
			      tag != 'X' && tag != 'O';
		bool sel = per_iv && pick[a0] != HOFF_ILP_OFF;
		switch (tag) {
		case 's':
			y[j] = (double)(a0 < n ? S[a0] - END(a0 - 1)
					       : r.summary.makespan_ps -
							 END(n - 1)) /
			       m->tu;
			break;
		case 'P':
			y[j] = (double)r.summary.peak_bytes / m->bu;
			break;
		case 'z':
			y[j] = sel && se[a0] > 0;
			break;
		case 'Z':
			y[j] = sel && se[a0] == 0;
			break;
		case 'R':
			y[j] = sel && pick[a0] <= a1;
			break;
		case 'X':
		case 'O':
			y[j] = 0;
			for (int32_t i = 0; i < m->niv; i++) {
				const hoff_ilp_iv *v = &m->iv[i];
				if (v->tier != a0 || v->b >= n ||
				    pick[i] == HOFF_ILP_OFF)
					continue;
				if (tag == 'O')
					y[j] += v->kind != HOFF_ILP_START &&
						v->b <= a1;
				else
					y[j] += v->kind == HOFF_ILP_START &&
						v->rmap >= 0 && a1 < v->b - 1 &&
						pick[i] <= a1 && r_at(m, v, a1);
			}
			break;
		case 'Q': {
			int32_t k = stage_of(a1);
			int64_t tw = a1 % 2 == 0 ? S[k] : END(k - 1);
			y[j] = se[a0] > 0 && se[a0] <= tw;
			break;
		}
		case 'Y':
		case 'y': {
			int32_t k = a1 / 2;
			int64_t t1 = a1 % 2 ? END(k)
				     : k < n ? S[k]
					     : r.summary.makespan_ps;
			bool f = m->ctag[j] == 'Y';
			int64_t a = f ? fs[a0] : ss[a0], b = f ? fe[a0] : se[a0];
			y[j] = sel && b > 0 ? done_by(a, b, t1) : 0;
			break;
		}
		default:
			break;
		}
		if (y[j] < m->clb[j])
			y[j] = m->clb[j];
		if (y[j] > m->cub[j])
			y[j] = m->cub[j];
	}
#undef END
	set_saturation(m, y);
	int32_t row;
	double viol = hoff_ilp_violation(m, y, &row);
	if (viol > 1e-6) {
		/* The stage model is coarser than FIFO: keep the decisions
		 * and the store completions, solve for the rest. */
		bool feasible = false;
		if (hoff_backend_complete(m, y, &feasible, e) != HOFF_OK ||
		    !feasible)
			goto out;
		set_saturation(m, y);
		viol = hoff_ilp_violation(m, y, &row);
	}
	if (viol > 1e-6)
		goto out;
	memcpy(x, y, ((size_t)m->ncols + 1) * sizeof *x);
	ok = true;
out:
	free(y);
	free(first);
	free(fs);
	free(fe);
	free(ss);
	free(se);
	free(step_iv);
	hoff_sim_result_free(&r);
	hoff_sched_free(s);
	return ok;
}

hoff_status hoff_ilp_solve(const hoff_ilp *m, const double *start,
			   hoff_ilp_sol *sol, hoff_err *e)
{
	memset(sol, 0, sizeof *sol);
	if (m->o.write_lp || m->o.write_mps) {
		hoff_status st = hoff_backend_write(m, m->o.write_lp,
						    m->o.write_mps, e);
		if (st != HOFF_OK)
			return st;
	}
	if (m->infeasible) {
		sol->status = HOFF_ILP_INFEASIBLE;
		snprintf(sol->note, sizeof sol->note, "%s", m->why);
		return HOFF_OK;
	}
	return hoff_backend_solve(m, start, sol, e);
}

/* ---------------------------------------------------------------------
 * The pipeline.
 */

double hoff_exact_objective(bool budget_mode, const hoff_summary *s)
{
	return budget_mode ? hoff_s(s->stall_ps) : (double)s->peak_bytes;
}

typedef struct judged {
	hoff_sched *s;
	hoff_summary sum;
	bool legal;      /* every rule but the budget's */
	bool fits;       /* budget (or device memory) and makespan bound */
	int32_t peak_op; /* the first op starting at or after the peak */
} judged;

static hoff_status judge(const hoff_ilp *m, const hoff_graph *g,
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
		for (int32_t k = g->nops - 1; k >= 0 && r.op_start_ps[k] >=
							    r.peak_ps; k--)
			j->peak_op = k;
	j->legal = r.valid;
	j->fits = r.valid && r.summary.peak_bytes <= m->cap_bytes &&
		  (m->budget_mode || r.summary.makespan_ps <= m->bound_ps);
	hoff_sim_result_free(&r);
	return HOFF_OK;
}

/* Is a better than b under the objective (greedy.c's order)? */
static bool better(const hoff_ilp *m, const judged *a, const judged *b)
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
static int try_picks(const hoff_ilp *m, const hoff_ilp *mv,
		     const hoff_graph *g, const int32_t *trial, int32_t *pick,
		     judged *cur, hoff_status *st, hoff_err *e)
{
	hoff_sched *s = NULL;
	hoff_err e2;
	judged j = {0};
	if (hoff_ilp_emit(g, mv->iv, mv->niv, trial, "exact", &s, &e2) !=
	    HOFF_OK)
		return 0;
	if ((*st = judge(m, g, s, &j, e)) != HOFF_OK) {
		hoff_sched_free(s);
		return -1;
	}
	if (!better(m, &j, cur)) {
		hoff_sched_free(j.s);
		return 0;
	}
	hoff_sched_free(cur->s);
	*cur = j;
	memcpy(pick, trial, (size_t)mv->niv * sizeof *pick);
	return 1;
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
 * expert after op 5 instead of at time 0: 7808993792 -> 7808952832 B. */
static int repair(const hoff_ilp *m, const hoff_ilp *mv, const hoff_graph *g,
		  int32_t *pick, judged *cur, double until, hoff_status *st,
		  hoff_err *e)
{
	int moves = 0, r = 0;
	int32_t *trial = hoff_alloc((size_t)mv->niv + 1, sizeof *trial);
	if (!trial)
		return 0;
	const size_t sz = (size_t)mv->niv * sizeof *trial;
	bool improved = true;
	while (improved && now_s() < until) {
		improved = false;
		for (int32_t i = 0; i < mv->niv && now_s() < until; i++) {
			const hoff_ilp_iv *v = &mv->iv[i];
			if (pick[i] == HOFF_ILP_OFF)
				continue;
			const int32_t k = cur->peak_op;
			if (v->b >= mv->n) {
				/* a tail: clear the stores ahead of its own */
				if (v->kind != HOFF_ILP_DIRTY || v->a >= k)
					continue;
				memcpy(trial, pick, sz);
				bool any = false;
				for (int32_t j = 0; j < mv->niv; j++) {
					const hoff_ilp_iv *u = &mv->iv[j];
					if (j != i && u->kind == HOFF_ILP_DIRTY &&
					    u->tier == v->tier && u->a < v->a &&
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
				v->kind == HOFF_ILP_START ? pick[i]
							  : HOFF_ILP_OFF,
				pick[i] < k && v->b > k ? k : pick[i]};
			for (int c = 0; c < 4; c++) {
				int32_t p = cand[c];
				if (p == pick[i] ||
				    (p != HOFF_ILP_OFF &&
				     (p < v->lo || p > v->b - 1)))
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
	}
out:
	free(trial);
	return moves;
}

/* The decisions pick, emitted, judged into *sim (the caller frees
 * sim->s), repaired on the simulator until `until`, and mapped back into
 * m (the repair moves off the model's boundaries: back onto them, issued
 * no later) as x; true when that is a solution of m. */
static bool repair_mapped(const hoff_graph *g, const hoff_ilp *m,
			  int32_t *pick, double until, double *x, judged *sim,
			  hoff_status *st, hoff_err *e)
{
	hoff_sched *s = NULL;
	hoff_err e2;
	*st = HOFF_OK;
	if (hoff_ilp_emit(g, m->iv, m->niv, pick, "exact", &s, &e2) !=
	    HOFF_OK)
		return false;
	if ((*st = judge(m, g, s, sim, e)) != HOFF_OK) {
		hoff_sched_free(s);
		return false;
	}
	repair(m, m, g, pick, sim, until, st, e);
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
static bool probe_heuristic(const hoff_graph *g, const hoff_ilp *pm,
			    double until, double *x, judged *sim,
			    hoff_status *st, hoff_err *e)
{
	*st = HOFF_OK;
	hoff_policy_opts po = hoff_policy_defaults();
	po.kind = HOFF_POLICY_GREEDY;
	po.budget_bytes = pm->cap_bytes;
	hoff_policy_report rep;
	hoff_sched *s = NULL;
	if ((*st = hoff_policy_run(g, &po, &s, &rep, e)) != HOFF_OK)
		return false;
	int32_t *pick = hoff_alloc((size_t)pm->niv + 1, sizeof *pick);
	if (!pick) {
		hoff_sched_free(s);
		*st = hoff_seterr(e, HOFF_ENOMEM, "out of memory");
		return false;
	}
	hoff_ilp_picks_of(pm, s, pick);
	hoff_sched_free(s);
	bool ok = repair_mapped(g, pm, pick, until, x, sim, st, e);
	free(pick);
	return ok;
}

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
typedef struct peak_search {
	hoff_ilp_status status;
	hoff_ilp *bm;   /* the model bx belongs to: a probe's (owned) or m */
	bool own;       /* bm is a probe's */
	double *bx;     /* best solution known (1-based), NULL: none */
	int64_t lo, hi; /* lo <= least model peak <= hi (bx's), INT64_MAX */
	int64_t mu;     /* margin below the half-grain the solver needs */
	int32_t probes, probes_cut;
	int64_t nodes;
	double solve_s;
	int64_t G;      /* the grain of every peak (peak_grain) */
	int64_t *pv;    /* the peaks a model solution can have in the
			   search's first [lo, hi], ascending (peak_values);
			   NULL: too many to list, the grain G stands in */
	int64_t npv;
	judged sim;     /* the best probe schedule the simulator finds
			   within the overhead bound (none: sim.s NULL) */
	char note[160];
} peak_search;

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

static void peak_search_free(peak_search *ps, const hoff_ilp *m)
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
		absent_range(&m->iv[i], m->n, &w0, &w1);
		int64_t b = m->iv[i].bytes;
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
	int64_t *sums = hoff_alloc(PV_SUMS_MAX, sizeof *sums);
	int64_t *tmp = hoff_alloc(PV_SUMS_MAX, sizeof *tmp);
	int64_t *pv = NULL, npv = 0, cap = 0;
	bool ok = sums && tmp;
	for (int32_t w = -1; ok && w <= 2 * m->n - 2; w++) {
		int64_t F = m->fixed[IDX(w)];
		if (!measurable(m, w) || F < lo)
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
static double bytes_under(const hoff_ilp *m, double v)
{
	return floor(v * m->bu * (1 - 1e-9)) - 1;
}

#define HEUR_SHARE 0.2  /* of the time: the heuristic descent */
#define HEUR_STOP 0.002 /* it stops within this of hi */
#define HEUR_REPAIR_S 1.0 /* a heuristic probe's repair, at most */

enum { PROBE_UNKNOWN, PROBE_FEASIBLE, PROBE_INFEASIBLE };

/* One probe: is there a model solution with peak <= t within the stall
 * bound (asked with the cap t + (G - 1) / 2 - mu, search_peak)? First
 * by greedy under the cap (probe_heuristic), then, when `branch`, by
 * branch and bound until `until`. Updates ps (hi and
 * its solution, lo, mu, the best simulated schedule) and sets *answer. */
static hoff_status probe(const hoff_graph *g, hoff_ilp_opts *po,
			 const hoff_ilp *m, int64_t t, bool branch,
			 double until, peak_search *ps, int *answer,
			 hoff_err *e)
{
	const int64_t cap = cap_for(ps, t);
	hoff_status st;
	double tp = now_s();
	hoff_ilp *pm = NULL;
	hoff_ilp_sol sol = {0};
	*answer = PROBE_UNKNOWN;
	po->budget_bytes = cap;
	if ((st = hoff_ilp_build(g, po, &pm, e)) != HOFF_OK)
		return st;
	const char *what = "no answer in time";
	double *hx = hoff_alloc((size_t)pm->ncols + 1, sizeof *hx);
	if (!hx) {
		hoff_ilp_free(pm);
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	}
	judged hj = {0};
	pm->o.time_limit_s = fmax(0.05, until - now_s()); /* the mapping's LP */
	bool hok = !pm->infeasible &&
		   probe_heuristic(g, pm, fmin(until, tp + HEUR_REPAIR_S), hx,
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
		if (hj.fits && better(m, &hj, &ps->sim)) {
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
			pm->o.time_limit_s = fmax(0.05, until - now_s());
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
	ps->solve_s += now_s() - tp;
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
	if (m->o.progress)
		fprintf(stderr,
			"hoffopt: exact: probe %d, peak <= %lld B: %s "
			"(%.1f s); the least peak is in %s\n",
			ps->probes, (long long)cap, what, now_s() - tp,
			peak_range(rg, sizeof rg, ps->lo, ps->hi));
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
	int32_t *pick = hoff_alloc((size_t)m->niv + 1, sizeof *pick);
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
		if (!(pb = hoff_alloc((size_t)ps->bm->niv + 1, sizeof *pb)))
			goto nomem;
		hoff_ilp_decode(ps->bm, ps->bx, pb);
		if (hoff_ilp_emit(g, ps->bm->iv, ps->bm->niv, pb, "exact",
				  &own, &e2) != HOFF_OK)
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
	double tb = now_s();
	hoff_ilp_sol bs = {0};
	hoff_ilp_opts keep = m->o;
	m->o.time_limit_s = until - tb;
	m->o.progress = false;
	m->o.no_mir = no_mir || keep.no_mir;
	st = hoff_ilp_solve(m, mx, &bs, e);
	m->o = keep;
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
	ps->solve_s += now_s() - tb;
	if (bs.has_bound) {
		double fl = bytes_under(m, bs.bound);
		if (fl > (double)ps->lo && fl < (double)INT64_MAX / 2)
			ps->lo = peak_up(ps, (int64_t)fl);
		if (ps->lo > ps->hi)
			ps->lo = ps->hi;
	}
	char rg[64];
	if (m->o.progress)
		fprintf(stderr,
			"hoffopt: exact: min-peak branch and bound%s (%.1f s, "
			"%lld nodes): the least peak is in %s\n",
			no_mir ? " without MIR cuts" : "", now_s() - tb,
			(long long)bs.nodes,
			peak_range(rg, sizeof rg, ps->lo, ps->hi));
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
	double t0 = now_s();
	hoff_status st = bound_once(g, m, start, until, false, ps, e);
	if (st != HOFF_OK || bound_close(ps))
		return st;
	/* the MIR root left the bound more than 1% under the best (or
	 * never finished its cut rounds): again without MIR */
	return bound_once(g, m, start, now_s() + (until - t0), true, ps, e);
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
static hoff_status probe_loop(const hoff_graph *g, const hoff_ilp_opts *o,
			      hoff_ilp_opts *po, const hoff_ilp *m,
			      double until, peak_search *ps,
			      probe_state *pst, hoff_err *e)
{
	const int64_t G = ps->G;
	hoff_status st;
	while (ps->lo < ps->hi) {
		if (ps->hi != INT64_MAX && o->gap > 0 &&
		    (double)(ps->hi - ps->lo) <= o->gap * (double)ps->hi) {
			pst->gap_met = true;
			return HOFF_OK;
		}
		if (until - now_s() < 0.05)
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
		double slice = until - now_s();
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
		if ((st = probe(g, po, m, t, true, now_s() + slice, ps,
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

/* The options of every probe about m (the cap, budget_bytes, is the
 * probe's own). */
static hoff_ilp_opts probe_opts(const hoff_ilp_opts *o, const hoff_ilp *m)
{
	hoff_ilp_opts po = *o;
	po.max_stall_ps = m->bound_ps - m->compute_ps;
	po.stride = m->stride; /* every probe about the same model */
	po.peak_floor = 0;
	po.first_solution = true;
	po.write_lp = po.write_mps = po.write_probe = NULL;
	po.gap = 0;
	po.progress = false;
	return po;
}

static hoff_status search_peak(const hoff_graph *g, const hoff_ilp_opts *o,
			       hoff_ilp *m, const double *start,
			       double deadline, peak_search *ps, hoff_err *e)
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
	if (m->o.progress && ps->pv)
		fprintf(stderr,
			"hoffopt: exact: %lld peaks possible in [%lld, %lld]\n",
			(long long)ps->npv, (long long)ps->lo,
			(long long)ps->pv[ps->npv - 1]);
	hoff_ilp_opts po = probe_opts(o, m);
	/* Heuristic descent: probes answered by greedy under the cap alone
	 * (no branching, milliseconds to a second each) bisect [lo, hi]
	 * first, so the branching probes start from a good hi. A miss
	 * proves nothing: it only moves the descent's own floor. */
	int64_t hlo = ps->lo;
	double hend = now_s() + HEUR_SHARE * (deadline - now_s());
	double last = 0; /* the last probe's time: the next one's guess */
	for (;;) {
		/* with no solution known, from the device's size down */
		int64_t top = ps->hi != INT64_MAX ? ps->hi
						  : m->cap_bytes / G * G + G;
		if (hlo >= top - G || now_s() + last >= hend ||
		    (double)(top - hlo) <= HEUR_STOP * (double)top)
			break;
		int64_t t = hlo + (top - G - hlo) / G / 2 * G;
		int answer;
		double tp = now_s();
		if ((st = probe(g, &po, m, t, false, hend, ps,
				&answer, e)) != HOFF_OK)
			return st;
		last = now_s() - tp;
		if (answer != PROBE_FEASIBLE)
			hlo = t + G;
	}
	double left = deadline - now_s();
	if (o->bound_share > 0 && left > 1.0 &&
	    (st = bound_phase(g, m, start, now_s() + o->bound_share * left,
			      ps, e)) != HOFF_OK)
		return st;
	probe_state pst = {0};
	if ((st = probe_loop(g, o, &po, m, deadline, ps, &pst, e)) != HOFF_OK)
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
static hoff_status write_probe(const hoff_graph *g, const hoff_ilp_opts *o,
			       const hoff_ilp *m, peak_search *ps,
			       int64_t *asked, hoff_err *e)
{
	*asked = 0;
	if (ps->hi == INT64_MAX || ps->lo >= ps->hi)
		return HOFF_OK;
	const int64_t t = peak_down(ps, ps->hi - 1);
	hoff_ilp_opts po = probe_opts(o, m);
	po.budget_bytes = cap_for(ps, t);
	hoff_ilp *pm = NULL;
	hoff_status st = hoff_ilp_build(g, &po, &pm, e);
	if (st != HOFF_OK)
		return st;
	if (pm->infeasible) {
		ps->lo = peak_up(ps, po.budget_bytes + 1);
		if (ps->lo >= ps->hi) {
			ps->lo = ps->hi;
			ps->status = HOFF_ILP_OPTIMAL;
			ps->note[0] = '\0';
		}
	} else {
		const char *f = o->write_probe;
		size_t n = strlen(f);
		bool mps = n >= 4 && !strcmp(f + n - 4, ".mps");
		st = hoff_backend_write(pm, mps ? NULL : f, mps ? f : NULL, e);
		if (st == HOFF_OK)
			*asked = t;
	}
	hoff_ilp_free(pm);
	return st;
}

/* Of the time, what the overhead model's first LP relaxation may take
 * (deepseek-v3-decode-4l at stride 1: about 17 s) */
#define LP_FLOOR_SHARE 0.4

/* Greedy's schedule (jg, legal) as a solution of m into x, by its
 * decisions (pick: caller-sized m->niv); false when it does not fit. */
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
 * o2 (the rebuilds'). Not in budget mode, one MIP: there the finer model
 * cost llama3-8b decode L8 (budget 95%) 40.7 s to prove infeasible,
 * against 10.3 s at its stride. */
static hoff_status stride_for_start(const hoff_graph *g, const judged *jg,
				    hoff_ilp **mp, hoff_ilp_opts *o2,
				    hoff_err *e)
{
	if (o2->stride > 0 || !o2->incumbent || !jg->legal ||
	    (*mp)->budget_mode)
		return HOFF_OK;
	while ((*mp)->stride > 1 && !(*mp)->infeasible) {
		hoff_ilp *m = *mp, *m2 = NULL;
		hoff_ilp_opts o3 = *o2;
		o3.stride = m->stride / 2;
		hoff_status st = hoff_ilp_build(g, &o3, &m2, e);
		if (st != HOFF_OK)
			return st;
		if (m2->nbin > 2 * m->bin_limit) {
			hoff_ilp_free(m2);
			return HOFF_OK;
		}
		double *x = hoff_alloc((size_t)m->ncols + 1, sizeof *x);
		int32_t *pick = hoff_alloc((size_t)m->niv + 1, sizeof *pick);
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
		o2->stride = o3.stride;
	}
	return HOFF_OK;
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
	int32_t *pick = hoff_alloc((size_t)m->niv + 1, sizeof *pick);
	double *x = hoff_alloc(nc, sizeof *x);
	if (!pick || !x) {
		st = hoff_seterr(e, HOFF_ENOMEM, "out of memory");
		goto out;
	}
	hoff_ilp_picks_of(m, jg->s, pick);
	bool ok = repair_mapped(g, m, pick, until, x, &jr, &st, e);
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
				 hoff_sched **gs, judged *jg,
				 hoff_exact_report *rep, hoff_sched **out,
				 hoff_err *e)
{
	char why[HOFF_ERRLEN];
	snprintf(why, sizeof why, "%s", e->msg);
	hoff_analysis an;
	hoff_status st = hoff_analyze(g, &an, e);
	if (st != HOFF_OK)
		return st;
	/* what judge() reads of a model */
	hoff_ilp fk = {0};
	fk.budget_mode = rep->budget_mode;
	fk.cap_bytes = rep->budget_mode ? o->budget_bytes
					: g->device.memory_bytes;
	double bound =
		floor((1.0 + o->max_overhead) * (double)an.lower_bound_ps);
	fk.bound_ps = bound < (double)HOFF_PS_LIMIT ? (int64_t)bound
						    : HOFF_PS_LIMIT;
	if (!jg->s) {
		if ((st = judge(&fk, g, *gs, jg, e)) != HOFF_OK)
			return st;
		*gs = NULL; /* owned by jg */
	}
	rep->status = HOFF_ILP_TIME_LIMIT;
	rep->has_objective = rep->has_bound = rep->has_gap = false;
	rep->has_decoded = false;
	rep->lower_bound_ps = an.lower_bound_ps;
	rep->bound_ps = fk.bound_ps;
	rep->budget_bytes = fk.cap_bytes;
	rep->greedy = rep->best = jg->sum;
	rep->greedy_feasible = rep->feasible = jg->fits;
	snprintf(rep->source, sizeof rep->source, "greedy");
	snprintf(rep->note, sizeof rep->note,
		 "--time-limit %.4g s: %.180s; greedy's schedule is returned",
		 o->time_limit_s, why);
	if (o->progress)
		fprintf(stderr, "hoffopt: exact: %s\n", rep->note);
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
	double t0 = now_s();
	/* The limit bounds the whole run: builds stop at the deadline, and
	 * no model goes to GLPK whose set-up cannot end before it. The
	 * peak search keeps its own deadline (its probes are small). */
	hoff_ilp_opts od = *o;
	od.deadline = t0 + o->time_limit_s;
	o = &od;
	hoff_status st = hoff_policy_run(g, &po, &gs, &grep, e);
	rep->greedy_s = now_s() - t0;
	if (st != HOFF_OK)
		goto out;
	double tb = now_s();
	if ((st = hoff_ilp_build(g, o, &m, e)) != HOFF_OK ||
	    (st = fits_time(m, e)) != HOFF_OK)
		goto out;
	if ((st = judge(m, g, gs, &jg, e)) != HOFF_OK)
		goto out;
	gs = NULL; /* owned by jg */
	hoff_ilp_opts o2 = *o;
	if ((st = stride_for_start(g, &jg, &m, &o2, e)) != HOFF_OK)
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
		double left = o->time_limit_s - (now_s() - tb);
		double share = round == 0 ? LP_FLOOR_SHARE : 0.25;
		hoff_ilp_opts of = o2;
		of.floor_rows = true;
		/* Out of time here, m stands unpruned: no floor is needed. */
		hoff_ilp *mf = NULL;
		if ((st = hoff_ilp_build(g, &of, &mf, e)) == HOFF_OK &&
		    (st = fits_time(mf, e)) == HOFF_OK)
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
		double fl = bytes_under(m, lp);
		if (!ok || fl <= (double)m->peak_floor * (1 + 1e-6))
			break;
		o2.peak_floor = (int64_t)fl;
		hoff_ilp *m2 = NULL;
		if ((st = hoff_ilp_build(g, &o2, &m2, e)) != HOFF_OK ||
		    (st = fits_time(m2, e)) != HOFF_OK) {
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
	rep->prep_s = now_s() - tb;
	restriction(g, o, m, rep);
	m->o.time_limit_s = fmax(1, o->time_limit_s - rep->prep_s);
	rep->greedy = jg.sum;
	rep->greedy_feasible = jg.fits;
	rep->lower_bound_ps = m->lower_bound_ps;
	rep->bound_ps = m->bound_ps;
	rep->budget_bytes = m->cap_bytes;
	rep->ncand = m->ncand;
	rep->niv = m->niv;
	rep->ncols = m->ncols;
	rep->nbin = m->nbin;
	rep->nrows = m->nrows;
	rep->nnz = (int64_t)m->nnz;
	rep->stride = m->stride;
	rep->build_s = m->build_s;
	pick = hoff_alloc((size_t)m->niv + 1, sizeof *pick);
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
	    (st = repaired_start(g, m, &jg, now_s() + span, start,
				 &have_start, &ps.sim, e)) != HOFF_OK)
		goto out;
	const hoff_ilp *xm = m; /* the model sol.x belongs to */
	if (m->budget_mode) {
		m->o.time_limit_s =
			fmax(0.5, o->time_limit_s - (now_s() - t0) - span);
		if ((st = fits_time(m, e)) != HOFF_OK ||
		    (st = hoff_ilp_solve(m, have_start ? start : NULL, &sol,
					 e)) != HOFF_OK)
			goto out;
		rep->incumbent_given = sol.incumbent_given;
		rep->incumbent_accepted = sol.incumbent_accepted;
	} else {
		/* the files hold the min-peak model (one MIP, the same
		 * optimum); the search solves budget-mode probes */
		if ((o->write_lp || o->write_mps) &&
		    (st = hoff_backend_write(m, o->write_lp, o->write_mps,
					     e)) != HOFF_OK)
			goto out;
		double deadline = t0 + fmax(o->time_limit_s - span,
					    now_s() - t0 + 0.5);
		hoff_ilp_opts so = *o;
		if (!lp_ok)
			so.bound_share = 0;
		st = search_peak(g, &so, m, have_start ? start : NULL, deadline,
				 &ps, e);
		if (st == HOFF_ETIMEOUT) { /* a probe past the deadline: what
					    * the search proved stands */
			if (m->o.progress)
				fprintf(stderr, "hoffopt: exact: %s\n", e->msg);
			st = HOFF_OK;
		}
		if (st != HOFF_OK)
			goto out;
		if (o->write_probe &&
		    (st = write_probe(g, o, m, &ps, &rep->probe_peak, e)) !=
			    HOFF_OK)
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
		rep->objective = hoff_ilp_objective_value(m, sol.obj);
		if (m->budget_mode)
			rep->objective /= 1e12; /* stall in s */
		else
			rep->objective = (double)ps.hi; /* to the byte */
		hoff_ilp_predict(xm, sol.x, &rep->predicted_makespan_ps,
				 &rep->predicted_peak_bytes);
		if (!m->budget_mode)
			rep->predicted_peak_bytes = ps.hi;
		free(pick);
		pick = hoff_alloc((size_t)xm->niv + 1, sizeof *pick);
		if (!pick) {
			st = hoff_seterr(e, HOFF_ENOMEM, "out of memory");
			goto out;
		}
		hoff_ilp_decode(xm, sol.x, pick);
		hoff_err e2;
		if (hoff_ilp_emit(g, xm->iv, xm->niv, pick, "exact", &ds,
				  &e2) == HOFF_OK) {
			if ((st = judge(m, g, ds, &jd, e)) != HOFF_OK)
				goto out;
			ds = NULL;
			rep->has_decoded = true;
			rep->decoded = jd.sum;
			rep->decoded_valid = jd.legal;
			double t1 = now_s();
			double left = o->time_limit_s - (t1 - t0);
			rep->repair_moves = repair(m, xm, g, pick, &jd,
						   t1 + fmin(span, fmax(left, 0.5)),
						   &st, e);
			if (st != HOFF_OK)
				goto out;
			rep->repair_s = now_s() - t1;
			rep->repaired = jd.sum;
			rep->repaired_fits = jd.fits;
		} else {
			snprintf(rep->note, sizeof rep->note,
				 "decoding failed: %.200s", e2.msg);
		}
	}
	if (sol.has_bound) {
		rep->has_bound = true;
		rep->bound = hoff_ilp_objective_value(m, sol.bound);
		if (m->budget_mode)
			rep->bound /= 1e12;
		else
			rep->bound = (double)(ps.lo < ps.hi ? ps.lo : ps.hi);
		if (rep->has_objective) {
			double d = rep->objective - rep->bound;
			rep->has_gap = true;
			rep->gap = d <= 0 ? 0 : d / fmax(fabs(rep->objective),
							 1e-300);
		}
	}
	/* The better of the decoded and greedy's schedule. */
	/* on a tie, the exact schedule */
	judged *best = jd.s && jd.legal && !better(m, &jg, &jd) ? &jd : &jg;
	/* or a probe's schedule (the simulator's, not the model's) */
	if (ps.sim.s && better(m, &ps.sim, best)) {
		best = &ps.sim;
		if (!rep->note[0])
			snprintf(rep->note, sizeof rep->note,
				 "the schedule returned is a probe's: greedy "
				 "under a lower cap, repaired on the simulator");
	}
	snprintf(rep->source, sizeof rep->source, "%s",
		 best == &jg ? "greedy" : "exact");
	if (best == &jg && jd.s && jd.legal && better(m, &jg, &jd) &&
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
		st = greedy_answer(g, o, &gs, &jg, rep, out, e);
	}
	hoff_sched_free(jg.s);
	hoff_sched_free(jd.s);
	hoff_sched_free(gs);
	hoff_sched_free(ds);
	free(sol.x);
	free(start);
	free(pick);
	peak_search_free(&ps, m);
	hoff_ilp_free(m);
	return st;
}
