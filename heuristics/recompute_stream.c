/* recompute_stream.c: the stream plan of an expanded graph
 * (recompute_stream.h). For a target makespan M:
 * - latest starts: LS[n] = M; LS[k] = min(LS[k+1], M - W[k]) - time(k),
 *   where W[k] is the d2h time of the stores issued after op k or later
 *   (the state going home after its last use, the spanned activations
 *   going out), so that every op ends in time for the link to carry what
 *   follows it;
 * - fetches: each tier-homed tensor some op uses, by its first use f
 *   (deadline LS[f]), and each spanned activation, stored after the op
 *   that last reads it in the forward pass (a) and fetched back by its
 *   next reader b (deadline LS[b]);
 * - each tier's h2d link planned backwards from the deadlines, latest
 *   first: a transfer ends at its deadline or where the next one starts,
 *   whichever is sooner; each prefetch is issued at the last op boundary
 *   (on the timeline of the previous pass's simulation; the first pass:
 *   no stalls) at or before its planned start, never before its store;
 * - state goes home right after its last use (hoff_emit_home).
 * Three passes refine the timeline; the best simulated pass is kept.
 * Cost: O((ops + tensors) log tensors) per pass, plus its simulation. */
#include <stdlib.h>
#include <string.h>

#include "candidates.h"
#include "emit.h"
#include "recompute_stream.h"
#include "sim.h"

#define PASSES 3

typedef struct fetch {
	int64_t deadline, start; /* planned on the h2d link */
	int32_t t, a, b;	 /* a: HOFF_NONE for a tier-homed tensor */
	int32_t tier, at;	 /* at: issued before op at */
} fetch;

static int by_deadline_desc(const void *x, const void *y)
{
	const fetch *p = x, *q = y;
	if (p->deadline != q->deadline)
		return p->deadline < q->deadline ? 1 : -1;
	return (p->t < q->t) - (p->t > q->t);
}

static int by_issue(const void *x, const void *y)
{
	const fetch *p = x, *q = y;
	if (p->at != q->at)
		return p->at < q->at ? -1 : 1;
	if (p->start != q->start)
		return p->start < q->start ? -1 : 1;
	return (p->t > q->t) - (p->t < q->t);
}

/* Whether tensor t goes home by a store after its last use. */
static bool goes_home_dirty(const hoff_graph *g, int32_t t)
{
	const hoff_tensor *x = &g->tensor[t];
	if (!hoff_repeat_state(g, t) || x->home == HOFF_DEVICE ||
	    x->last_use == HOFF_NONE)
		return false;
	for (int64_t j = g->use_off[t]; j < g->use_off[t + 1]; j++) {
		const int32_t *lst;
		int64_t n = hoff_op_list(g, g->use[j], HOFF_USE_UPD, &lst);
		for (int64_t i = 0; i < n; i++)
			if (lst[i] == t)
				return true;
	}
	return false;
}

/* The fetches and latest starts for makespan M into f (nf) and LS. */
static int32_t plan_fetches(const hoff_graph *g, const hoff_rc_spans *sp,
			    int64_t M, int64_t *LS, fetch *f)
{
	int32_t n = g->nops, nf = 0, best = hoff_best_tier(g);
	int64_t *W = LS; /* W[k] first, then LS in place */
	memset(W, 0, ((size_t)n + 1) * sizeof *W);
	for (int32_t t = 0; t < g->ntensors; t++) {
		const hoff_tensor *x = &g->tensor[t];
		if (goes_home_dirty(g, t))
			W[x->last_use] +=
				hoff_xfer_ps(g, x->home, x->bytes, false);
		if (sp->a[t] != HOFF_NONE && best != HOFF_NONE)
			W[sp->a[t]] += hoff_xfer_ps(g, best, x->bytes, false);
	}
	for (int32_t k = n; k-- > 0;)
		W[k] += W[k + 1];
	int64_t next = M;
	for (int32_t k = n; k-- > 0;) {
		int64_t w = W[k], ls = (next < M - w ? next : M - w);
		LS[k + 1] = next;
		next = ls - g->op[k].time_ps;
	}
	LS[0] = next;
	for (int32_t t = 0; t < g->ntensors; t++) {
		const hoff_tensor *x = &g->tensor[t];
		if (x->producer == HOFF_NONE && x->home != HOFF_DEVICE &&
		    x->first_use != HOFF_NONE)
			f[nf++] = (fetch){.deadline = LS[x->first_use],
					  .t = t,
					  .a = HOFF_NONE,
					  .b = x->first_use,
					  .tier = x->home};
		else if (sp->a[t] != HOFF_NONE && best != HOFF_NONE)
			f[nf++] = (fetch){.deadline = LS[sp->b[t]],
					  .t = t,
					  .a = sp->a[t],
					  .b = sp->b[t],
					  .tier = best};
	}
	return nf;
}

/* Plans each tier's link backwards and picks the issue boundaries on
 * timeline A (op starts). */
static void place(const hoff_graph *g, fetch *f, int32_t nf, const int64_t *A)
{
	qsort(f, (size_t)nf, sizeof *f, by_deadline_desc);
	int64_t cursor[HOFF_MAX_TIERS];
	for (int32_t r = 0; r < HOFF_MAX_TIERS; r++)
		cursor[r] = INT64_MAX;
	for (int32_t i = 0; i < nf; i++) {
		fetch *x = &f[i];
		int64_t end = x->deadline < cursor[x->tier] ? x->deadline
							    : cursor[x->tier];
		x->start = end - hoff_xfer_ps(g, x->tier, g->tensor[x->t].bytes,
					      true);
		cursor[x->tier] = x->start;
		/* the last boundary at or before start, after a, by b */
		int32_t lo = x->a == HOFF_NONE ? 0 : x->a + 1, hi = x->b;
		while (lo < hi) {
			int32_t mid = lo + (hi - lo + 1) / 2;
			if (A[mid] <= x->start)
				lo = mid;
			else
				hi = mid - 1;
		}
		x->at = lo;
	}
	qsort(f, (size_t)nf, sizeof *f, by_issue);
}

/* The schedule of the fetches placed. */
static hoff_sched *emit_plan(const hoff_graph *g, const hoff_rc_spans *sp,
			     const fetch *f, int32_t nf)
{
	hoff_emit m;
	if (hoff_emit_init(&m, g, "greedy") != HOFF_OK)
		return NULL;
	int32_t i = 0;
	for (int32_t k = 0; k < g->nops; k++) {
		for (; i < nf && f[i].at == k; i++)
			hoff_emit_prefetch(&m, f[i].t);
		hoff_emit_op(&m, k);
		hoff_emit_home(&m, k);
		for (int64_t j = sp->at_off[k]; j < sp->at_off[k + 1]; j++)
			hoff_emit_evict(&m, sp->at[j]);
	}
	return hoff_emit_finish(&m);
}

void hoff_rc_spans_free(hoff_rc_spans *sp)
{
	free(sp->a);
	free(sp->b);
	free(sp->at_off);
	free(sp->at);
	memset(sp, 0, sizeof *sp);
}

/* Whether a run (fits, peak, makespan) beats the kept one. */
static bool beats(const hoff_summary *x, bool fx, const hoff_summary *y,
		  bool fy)
{
	if (fx != fy)
		return fx;
	if (x->peak_bytes != y->peak_bytes)
		return x->peak_bytes < y->peak_bytes;
	return x->makespan_ps < y->makespan_ps;
}

hoff_status hoff_rc_stream(const hoff_graph *g, const hoff_rc_spans *sp,
			   int64_t M, int64_t bound, hoff_sched **out,
			   hoff_summary *sum, hoff_err *e)
{
	int32_t n = g->nops;
	*out = NULL;
	int64_t *LS = hoff_alloc((size_t)n + 2, sizeof *LS);
	int64_t *A = hoff_alloc((size_t)n + 2, sizeof *A);
	fetch *f = hoff_alloc((size_t)g->ntensors + 1, sizeof *f);
	hoff_status st = HOFF_OK;
	if (!LS || !A || !f) {
		st = hoff_seterr(e, HOFF_ENOMEM, "out of memory");
		goto out;
	}
	A[0] = 0;
	for (int32_t k = 0; k < n; k++)
		A[k + 1] = A[k] + g->op[k].time_ps;
	for (int pass = 0; pass < PASSES && st == HOFF_OK; pass++) {
		int32_t nf = plan_fetches(g, sp, M, LS, f);
		place(g, f, nf, A);
		hoff_sched *s = emit_plan(g, sp, f, nf);
		if (!s) {
			st = hoff_seterr(e, HOFF_ENOMEM, "out of memory");
			break;
		}
		hoff_sim_opts so = hoff_sim_defaults();
		so.budget_bytes = INT64_MAX;
		so.op_times = true;
		hoff_sim_result r;
		if ((st = hoff_sim_run(g, s, &so, &r, e)) != HOFF_OK) {
			hoff_sched_free(s);
			break;
		}
		bool fits = r.summary.makespan_ps <= bound;
		bool keep = r.valid &&
			    (!*out || beats(&r.summary, fits, sum,
					    sum->makespan_ps <= bound));
		if (r.valid)
			memcpy(A, r.op_start_ps, ((size_t)n + 1) * sizeof *A);
		if (keep) {
			hoff_sched_free(*out);
			*out = s;
			*sum = r.summary;
		} else {
			hoff_sched_free(s);
		}
		hoff_sim_result_free(&r);
	}
out:
	free(LS);
	free(A);
	free(f);
	return st;
}
