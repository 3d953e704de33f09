/* ilp_recompute.c: (v2, --recompute) the recompute candidates of the
 * stage model, Checkmate's keep-or-recompute choice on the stage grid
 * (solver/README.md, "Recompute (15)-(17)").
 *
 * A candidate r is activation t, the only output of a recomputable op p
 * with no updates, dropped right after touch a (a drop step: its bytes
 * free at once) and re-made by a recompute of p right before op b, the
 * next touch of t after a (b >= a + 2). Rule 10 holds by construction:
 * no op updates t, and no op in (p, b) updates an input of p. The
 * inputs of p must be resident when it re-runs: each is persistent or
 * used by op b or later (so no lifetime is lengthened), not away under
 * an interval then, and fetched by the end of op b - 1 when its fetch
 * is due at op b; an input that is itself re-made before op b (a
 * candidate of the same b, earlier producer) is fine, the re-runs going
 * in producer order. Its column V_r; the re-run's time lengthens window
 * sigma_b (ilp_arrays.c's hoff_ilp_rc_len), and t is away at the
 * instants 2a + 1 .. 2b - 1 (hoff_ilp_rc_absent).
 *
 * requires a finished graph and, for the rows, the model's intervals
 * and columns; adds columns and rows to m only. */
#include <stdlib.h>
#include <string.h>

#include "ilp_internal.h"

/* Some op updates t. */
static bool rc_updated(const hoff_graph *g, int32_t t)
{
	for (int64_t u = g->use_off[t]; u < g->use_off[t + 1]; u++) {
		const int32_t *lst;
		int64_t n = hoff_op_list(g, g->use[u], HOFF_USE_UPD, &lst);
		for (int64_t j = 0; j < n; j++)
			if (lst[j] == t)
				return true;
	}
	return false;
}

/* Op p may re-run right before op b: each input is persistent or used
 * at b or later, and none is updated by an op in (p, b) (rule 10). */
static bool inputs_ok(const hoff_graph *g, int32_t p, int32_t b)
{
	const int32_t *in;
	int64_t nin = hoff_op_list(g, p, HOFF_USE_IN, &in);
	for (int64_t j = 0; j < nin; j++) {
		const hoff_tensor *x = &g->tensor[in[j]];
		if (!hoff_tensor_persistent(x) && x->last_use < b)
			return false;
		for (int64_t u = g->use_off[in[j]]; u < g->use_off[in[j] + 1];
		     u++) {
			int32_t k = g->use[u];
			if (k <= p || k >= b)
				continue;
			const int32_t *up;
			int64_t nu = hoff_op_list(g, k, HOFF_USE_UPD, &up);
			for (int64_t i = 0; i < nu; i++)
				if (up[i] == in[j])
					return false;
		}
	}
	return true;
}

/* Candidates by b, then p, then t. */
static int by_target(const void *x, const void *y)
{
	const hoff_ilp_rc *a = x, *b = y;
	if (a->b != b->b)
		return a->b < b->b ? -1 : 1;
	if (a->p != b->p)
		return a->p < b->p ? -1 : 1;
	return (a->t > b->t) - (a->t < b->t);
}

hoff_status hoff_ilp_rc_list(const hoff_graph *g, hoff_ilp_rc **out,
			     int32_t *nout, hoff_err *e)
{
	*out = NULL;
	*nout = 0;
	size_t n = 0, cap = 0;
	hoff_ilp_rc *rc = NULL;
	for (int32_t t = 0; t < g->ntensors; t++) {
		const hoff_tensor *x = &g->tensor[t];
		int32_t p = x->producer;
		if (p == HOFF_NONE || hoff_tensor_persistent(x) ||
		    !hoff_tensor_offload(x) ||
		    !hoff_op_recomputable(&g->op[p]) ||
		    g->out_off[p + 1] - g->out_off[p] != 1 ||
		    g->upd_off[p + 1] != g->upd_off[p] || rc_updated(g, t))
			continue;
		int32_t a = p;
		for (int64_t u = g->use_off[t]; u < g->use_off[t + 1]; u++) {
			int32_t b = g->use[u];
			if (b >= a + 2 && inputs_ok(g, p, b)) {
				if (!hoff_grow((void **)&rc, &cap, n + 1,
					       sizeof *rc)) {
					free(rc);
					return hoff_seterr(e, HOFF_ENOMEM,
							   "out of memory");
				}
				rc[n++] = (hoff_ilp_rc){
					.t = t, .p = p, .a = a, .b = b};
			}
			a = b;
		}
	}
	if (n > INT32_MAX / 2) {
		free(rc);
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	}
	if (n > 1)
		qsort(rc, n, sizeof *rc, by_target);
	*out = rc;
	*nout = (int32_t)n;
	return HOFF_OK;
}

bool hoff_ilp_rc_keep(hoff_ilp *m, const hoff_ilp_rc *all, int32_t nall)
{
	m->rc = hoff_alloc((size_t)nall + 1, sizeof *m->rc);
	m->rc_off = hoff_zalloc((size_t)m->n + 2, sizeof *m->rc_off);
	if (!m->rc || !m->rc_off)
		return false;
	m->nrc = 0;
	for (int32_t j = 0; j < nall; j++) {
		bool keep = !m->o.prune;
		for (int32_t w = 2 * all[j].a + 1;
		     !keep && w <= 2 * all[j].b - 1; w++)
			keep = m->hot[IDX(w)];
		if (keep)
			m->rc[m->nrc++] = all[j];
	}
	/* rc_off[k]: the first candidate re-made before op k or later */
	for (int32_t k = 0, j = 0; k <= m->n; k++) {
		while (j < m->nrc && m->rc[j].b < k)
			j++;
		m->rc_off[k] = j;
	}
	return true;
}

bool hoff_ilp_rc_cols(hoff_ilp *m)
{
	for (int32_t j = 0; j < m->nrc; j++) {
		double d = (double)m->g->op[m->rc[j].p].time_ps / m->tu;
		m->rc[j].col = hoff_ilp_add_col(m, 0, 1, m->budget_mode ? d : 0,
						true, HOFF_COL_RC, j, 0);
		if (!m->rc[j].col)
			return false;
	}
	return true;
}

/* sel_i as a row term (constant 1 for START and fixed tails). */
static void rc_add_sel(rowb *r, const hoff_ilp_iv *v, double coef)
{
	if (v->c.kind == HOFF_CAND_START || v->fixed)
		r->konst += coef;
	else {
		hoff_ilp_row_add(r, v->zs, coef);
		hoff_ilp_row_add(r, v->zd, coef);
	}
}

/* V_r + sel_i <= 1, tagged 'e' (r: candidate j). */
static void rc_excl(hoff_ilp *m, rowb *r, int32_t j, const hoff_ilp_iv *v)
{
	if (!(v->c.kind == HOFF_CAND_START || v->fixed || v->zs || v->zd))
		return;
	hoff_ilp_row_begin(r, HOFF_ILP_LE, 1, 'e', j);
	hoff_ilp_row_add(r, m->rc[j].col, 1);
	rc_add_sel(r, v, 1);
	hoff_ilp_row_end(r);
}

/* (15) Candidate j's tensor has no interval in the same gap, and (16)
 * its producer's inputs are resident when it re-runs. */
static void rc_resident_rows(hoff_ilp *m, rowb *r, int32_t j)
{
	const hoff_graph *g = m->g;
	const hoff_ilp_rc *c = &m->rc[j];
	for (int32_t i = 0; i < m->niv; i++) {
		const hoff_ilp_iv *v = &m->iv[i];
		if (v->c.t == c->t && v->c.a < c->b && v->c.b > c->a)
			rc_excl(m, r, j, v);
	}
	const int32_t *in;
	int64_t nin = hoff_op_list(g, c->p, HOFF_USE_IN, &in);
	for (int64_t k = 0; k < nin; k++) {
		int32_t u = in[k];
		for (int32_t i = 0; i < m->niv; i++) {
			const hoff_ilp_iv *v = &m->iv[i];
			if (v->c.t != u || v->c.a >= c->b || v->c.b < c->b)
				continue;
			if (v->c.b > c->b) {
				rc_excl(m, r, j, v); /* away while p re-runs */
				continue;
			}
			/* due at op b: fetched by the end of op b - 1,
			 * sel_i + V_r - Yf_i(2b - 1) <= 1 */
			if (!(v->c.kind == HOFF_CAND_START || v->fixed ||
			      v->zs || v->zd))
				continue;
			hoff_ilp_row_begin(r, HOFF_ILP_LE, 1, 'e', j);
			hoff_ilp_row_add(r, c->col, 1);
			rc_add_sel(r, v, 1);
			hoff_ilp_row_add(r, hoff_ilp_yp_at(m, v, 2 * c->b - 1),
					 -1);
			hoff_ilp_row_end(r);
		}
		/* u dropped itself: fine only when re-made first, before the
		 * same op b (an earlier producer, so an earlier re-run) */
		for (int32_t o = 0; o < m->nrc; o++) {
			const hoff_ilp_rc *d = &m->rc[o];
			if (d->t != u || d->a >= c->b || d->b < c->b ||
			    d->b == c->b)
				continue;
			hoff_ilp_row_begin(r, HOFF_ILP_LE, 1, 'e', j);
			hoff_ilp_row_add(r, c->col, 1);
			hoff_ilp_row_add(r, d->col, 1);
			hoff_ilp_row_end(r);
		}
	}
}

/* (17) Memory while the j-th re-run before op b runs: instant E_{b-1}'s
 * (after boundary b - 1's cache steps), the tensors re-made before it
 * back (theirs and its own) and its workspace:
 *   F_{2b-1} - sum_i B_i (zd_i - R_i(b-1) + Q_i(2b-1))
 *     - sum_{r' away at 2b-1, not re-made yet} B_r' V_r'
 *     + W_p V_r <= cap (or Pk).
 * Rows only where the instant can bind (F_{2b-1} + W_p above the
 * threshold the memory rows use, or always without pruning). */
static void rc_memory_rows(hoff_ilp *m, rowb *r, int32_t j)
{
	const hoff_graph *g = m->g;
	const hoff_ilp_rc *c = &m->rc[j];
	int32_t w = 2 * c->b - 1;
	int64_t ws = g->op[c->p].workspace_bytes;
	int64_t thr = m->budget_mode ? m->cap_bytes : m->peak_floor;
	if (m->o.prune && m->fixed[IDX(w)] + ws <= thr)
		return;
	double F = (double)m->fixed[IDX(w)] / m->bu;
	if (m->budget_mode) {
		hoff_ilp_row_begin(r, HOFF_ILP_LE,
				   (double)m->cap_bytes / m->bu - F, 'v', j);
	} else {
		hoff_ilp_row_begin(r, HOFF_ILP_LE, -F, 'v', j);
		hoff_ilp_row_add(r, m->peak_col, -1);
	}
	for (int32_t i = 0; i < m->niv; i++)
		hoff_ilp_absence_terms(m, r, i, w);
	for (int32_t o = 0; o < m->nrc; o++) {
		const hoff_ilp_rc *d = &m->rc[o];
		if (!hoff_ilp_rc_absent(d, w) || (d->b == c->b && o <= j))
			continue;
		hoff_ilp_row_add(r, d->col,
				 -(double)g->tensor[d->t].bytes / m->bu);
	}
	hoff_ilp_row_add(r, c->col, (double)ws / m->bu);
	hoff_ilp_row_end(r);
}

void hoff_ilp_rc_rows(hoff_ilp *m, rowb *r)
{
	for (int32_t j = 0; j < m->nrc; j++) {
		rc_resident_rows(m, r, j);
		rc_memory_rows(m, r, j);
	}
}
