/* glpk_backend.c: the model of ilp.h on GLPK — the only file that
 * includes glpk.h.
 *
 * GLPK aborts the process on bad arguments, so every array is checked
 * before it is handed over, and an error hook longjmps back here should
 * GLPK fail anyway; its terminal output goes through a hook (to stderr
 * only when verbose).
 *
 * Presolve. glp_intopt's built-in presolve (presolve = GLP_ON) drops
 * column names and renumbers columns, so a start solution could not be
 * mapped into the problem the branch-and-cut sees. We run the same GLPK
 * preprocessor through its API (glp_npp_*) with names kept, solve the
 * reduced problem's LP relaxation with glp_simplex, then glp_intopt on it
 * with presolve = GLP_OFF (required once the preprocessing is ours), and
 * map the start solution into it by column name in the callback, where
 * it is validated against every row before glp_ios_heur_sol sees it
 * (GLPK checks nothing but integrality). The solution is recovered to
 * the original columns with glp_npp_postprocess / glp_npp_obtain_sol.
 *
 * Return codes: GLP_ETMLIM, GLP_EMIPGAP and GLP_ESTOP mean "use the
 * incumbent if glp_mip_status is GLP_FEAS"; any other code is an error
 * naming it. */
#define _POSIX_C_SOURCE 200809L /* getpid */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* GLPK 5.0 exports its cut generators (Gomory, MIR) for use on a plain
 * problem only under GLP_UNDOC; CMake checks they link
 * (HOFF_GLPK_CUTGEN), else the root rounds use our covers alone. */
#ifdef HOFF_GLPK_CUTGEN
#define GLP_UNDOC
#endif
#include <glpk.h>

#include "fileio.h"
#include "ilp_backend.h"
#include "ilp_internal.h"
#include "ilp_names.h"

typedef struct guard {
	jmp_buf jb;
	bool verbose;
	char last[160]; /* GLPK's last lines, for the error message */
	char prev[160];
} guard;

/* The line that says what went wrong (GLPK ends with a location). */
static const char *glpk_why(const guard *g)
{
	return strncmp(g->last, "Error detected", 14) ? g->last : g->prev;
}

static void on_error(void *info)
{
	guard *g = info;
	longjmp(g->jb, 1);
}

static int on_term(void *info, const char *s)
{
	guard *g = info;
	if (g && g->verbose)
		fputs(s, stderr);
	if (g && s[0] && s[0] != '\n') {
		memcpy(g->prev, g->last, sizeof g->prev);
		snprintf(g->last, sizeof g->last, "%s", s);
		g->last[strcspn(g->last, "\n")] = '\0';
	}
	return 1; /* handled: GLPK prints nothing itself */
}

static void hooks_on(guard *g)
{
	glp_term_hook(on_term, g);
	glp_error_hook(on_error, g);
}

static void hooks_off(void)
{
	glp_term_hook(NULL, NULL);
	glp_error_hook(NULL, NULL);
}

static const char *code_name(int ret)
{
	switch (ret) {
	case GLP_EBADB:
		return "GLP_EBADB";
	case GLP_ESING:
		return "GLP_ESING";
	case GLP_ECOND:
		return "GLP_ECOND";
	case GLP_EBOUND:
		return "GLP_EBOUND";
	case GLP_EFAIL:
		return "GLP_EFAIL";
	case GLP_EOBJLL:
		return "GLP_EOBJLL";
	case GLP_EOBJUL:
		return "GLP_EOBJUL";
	case GLP_EITLIM:
		return "GLP_EITLIM";
	case GLP_ETMLIM:
		return "GLP_ETMLIM";
	case GLP_ENOPFS:
		return "GLP_ENOPFS";
	case GLP_ENODFS:
		return "GLP_ENODFS";
	case GLP_EROOT:
		return "GLP_EROOT";
	case GLP_ESTOP:
		return "GLP_ESTOP";
	case GLP_EMIPGAP:
		return "GLP_EMIPGAP";
	case GLP_ENOFEAS:
		return "GLP_ENOFEAS";
	case GLP_ENOCVG:
		return "GLP_ENOCVG";
	case GLP_EINSTAB:
		return "GLP_EINSTAB";
	case GLP_EDATA:
		return "GLP_EDATA";
	case GLP_ERANGE:
		return "GLP_ERANGE";
	default:
		return "unknown GLPK code";
	}
}

/* Checks everything GLPK would abort on: counts, bounds, finite values,
 * column indices, repeated columns in a row. */
static hoff_status check_model(const hoff_ilp *m, hoff_err *e)
{
	if (m->ncols < 0 || m->ncols >= INT_MAX - 1 || m->nrows < 0 ||
	    m->nrows >= INT_MAX - 1 || m->nnz >= (size_t)INT_MAX - 1)
		return hoff_seterr(e, HOFF_EINPUT,
				   "exact: model too large for GLPK (%d "
				   "columns, %d rows, %zu nonzeros)",
				   m->ncols, m->nrows, m->nnz);
	for (int32_t j = 1; j <= m->ncols; j++)
		if (!isfinite(m->clb[j]) || isnan(m->cub[j]) ||
		    m->clb[j] > m->cub[j] || !isfinite(m->cobj[j]) ||
		    (m->cbin[j] == 1 && (m->clb[j] < 0 || m->cub[j] > 1)))
			return hoff_seterr(e, HOFF_EINTERNAL,
					   "exact: column %d has bad bounds "
					   "(a bug)",
					   j);
	int32_t *seen = hoff_zalloc((size_t)m->ncols + 1, sizeof *seen);
	if (!seen)
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	for (int32_t i = 1; i <= m->nrows; i++) {
		if (m->rtype[i] > HOFF_ILP_EQ || !isfinite(m->rrhs[i]))
			goto bad;
		for (int64_t k = m->roff[i]; k < m->roff[i + 1]; k++) {
			int32_t j = m->rcol[k];
			if (j < 1 || j > m->ncols || seen[j] == i ||
			    !isfinite(m->rval[k]))
				goto bad;
			seen[j] = i;
		}
	}
	free(seen);
	return HOFF_OK;
bad:
	free(seen);
	return hoff_seterr(e, HOFF_EINTERNAL,
			   "exact: a model row is malformed "
			   "(a bug)");
}

/* Copies m into a new GLPK problem. */
static glp_prob *load(const hoff_ilp *m, int *ia, int *ja, double *ar)
{
	char name[64];
	glp_prob *P = glp_create_prob();
	glp_set_prob_name(P, "hoffopt");
	glp_set_obj_name(P, "obj");
	glp_set_obj_dir(P, GLP_MIN);
	if (m->nrows > 0)
		glp_add_rows(P, m->nrows);
	for (int32_t i = 1; i <= m->nrows; i++) {
		hoff_ilp_row_name(m, i, name, sizeof name);
		glp_set_row_name(P, i, name);
		double rhs = m->rrhs[i];
		if (m->rtype[i] == HOFF_ILP_LE)
			glp_set_row_bnds(P, i, GLP_UP, 0, rhs);
		else if (m->rtype[i] == HOFF_ILP_GE)
			glp_set_row_bnds(P, i, GLP_LO, rhs, 0);
		else
			glp_set_row_bnds(P, i, GLP_FX, rhs, rhs);
	}
	if (m->ncols > 0)
		glp_add_cols(P, m->ncols);
	for (int32_t j = 1; j <= m->ncols; j++) {
		hoff_ilp_col_name(m, j, name, sizeof name);
		glp_set_col_name(P, j, name);
		if (m->cbin[j])
			glp_set_col_kind(P, j, GLP_IV);
		double lb = m->clb[j], ub = m->cub[j];
		if (lb == ub)
			glp_set_col_bnds(P, j, GLP_FX, lb, ub);
		else if (ub >= DBL_MAX)
			glp_set_col_bnds(P, j, GLP_LO, lb, 0);
		else
			glp_set_col_bnds(P, j, GLP_DB, lb, ub);
		glp_set_obj_coef(P, j, m->cobj[j]);
	}
	int ne = 0;
	for (int32_t i = 1; i <= m->nrows; i++)
		for (int64_t k = m->roff[i]; k < m->roff[i + 1]; k++) {
			ne++;
			ia[ne] = i;
			ja[ne] = m->rcol[k];
			ar[ne] = m->rval[k];
		}
	glp_load_matrix(P, ne, ia, ja, ar);
	return P;
}

typedef struct triplets {
	int *ia, *ja;
	double *ar;
} triplets;

static void triplets_free(triplets *t)
{
	free(t->ia);
	free(t->ja);
	free(t->ar);
}

/* What every entry point does when GLPK failed (on_error's longjmp):
 * GLPK's environment freed, the hooks off, t freed; HOFF_EINPUT with
 * GLPK's reason, after "exact: GLPK failed" and `doing`. */
static hoff_status glpk_failed(const guard *g, triplets *t, const char *doing,
			       hoff_err *e)
{
	glp_free_env();
	hooks_off();
	triplets_free(t);
	return hoff_seterr(e, HOFF_EINPUT, "exact: GLPK failed%s: %s", doing,
			   glpk_why(g));
}

/* What every entry point does first: checks m (GLPK aborts on bad
 * arguments) and allocates the triplets load() fills. */
static hoff_status prepare(const hoff_ilp *m, triplets *t, hoff_err *e)
{
	hoff_status st = check_model(m, e);
	if (st != HOFF_OK)
		return st;
	t->ia = hoff_alloc(m->nnz + 1, sizeof *t->ia);
	t->ja = hoff_alloc(m->nnz + 1, sizeof *t->ja);
	t->ar = hoff_alloc(m->nnz + 1, sizeof *t->ar);
	if (!t->ia || !t->ja || !t->ar) {
		triplets_free(t);
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	}
	return HOFF_OK;
}

/* Writes P as CPLEX LP or free MPS through formats/fileio.h: a regular
 * target gets a fresh temporary file renamed into place, so no
 * half-written model is ever left; /dev/null or a FIFO is written in
 * place. */
static bool write_whole(glp_prob *P, const char *path, bool mps)
{
	hoff_outfile o;
	if (strcmp(path, "-") == 0) { /* GLPK opens by name */
		fflush(stdout);
		path = "/dev/stdout";
	}
	if (hoff_outfile_open_name(&o, path, NULL) != HOFF_OK)
		return false;
	const char *to = hoff_outfile_name(&o);
	int rc = mps ? glp_write_mps(P, GLP_MPS_FILE, NULL, to)
		     : glp_write_lp(P, NULL, to);
	if (rc != 0) {
		hoff_outfile_abort(&o);
		return false;
	}
	return hoff_outfile_commit(&o, NULL) == HOFF_OK;
}

/* What a GLPK session does on the loaded model P (load_s: the load's
 * wall time); arg is the caller's. */
typedef hoff_status (*glpk_work)(glp_prob *P, const hoff_ilp *m, double load_s,
				 void *arg, hoff_err *e);

/* One GLPK session for every entry point but the solve: m checked and
 * loaded into a fresh problem under the hooks, work run on it, all freed.
 * When GLPK fails (on_error's longjmp), glpk_failed's error with doing. */
static hoff_status with_model(const hoff_ilp *m, bool verbose,
			      const char *doing, glpk_work work, void *arg,
			      hoff_err *e)
{
	triplets t;
	hoff_status st = prepare(m, &t, e);
	if (st != HOFF_OK)
		return st;
	guard g = {.verbose = verbose};
	hooks_on(&g);
	if (setjmp(g.jb))
		return glpk_failed(&g, &t, doing, e);
	double t0 = hoff_now_s();
	glp_prob *P = load(m, t.ia, t.ja, t.ar);
	st = work(P, m, hoff_now_s() - t0, arg, e);
	glp_delete_prob(P);
	hooks_off();
	triplets_free(&t);
	return st;
}

typedef struct write_args {
	const char *lp, *mps; /* or NULL */
} write_args;

static hoff_status write_work(glp_prob *P, const hoff_ilp *m, double load_s,
			      void *arg, hoff_err *e)
{
	const write_args *w = arg;
	(void)m;
	(void)load_s;
	if (w->lp && !write_whole(P, w->lp, false))
		return hoff_seterr(e, HOFF_EIO, "%s: cannot write the LP file",
				   w->lp);
	if (w->mps && !write_whole(P, w->mps, true))
		return hoff_seterr(e, HOFF_EIO, "%s: cannot write the MPS file",
				   w->mps);
	return HOFF_OK;
}

hoff_status hoff_glpk_write(const hoff_ilp *m, const char *lp, const char *mps,
			    hoff_err *e)
{
	write_args w = {lp, mps};
	return with_model(m, m->o.verbose, " writing the model", write_work, &w,
			  e);
}

/* What the branch-and-cut callback keeps. */
typedef struct cbctx {
	const hoff_ilp *m;
	const double *start;  /* original columns, or NULL */
	const int *qmap;      /* (nq + 1) original column of reduced column */
	int nq, mq;           /* reduced columns and rows (before cuts) */
	bool offered, accepted;
	bool has_bound;
	double bound;         /* best bound seen, model units */
	int64_t nodes;
	double t0, last;
	double deadline;      /* wall clock at which to stop */
	bool timed_out;
	bool first;           /* stop at the first incumbent */
	const hoff_progress *progress;
	char note[160];
} cbctx;

/* Offers the start solution, mapped into the reduced problem and checked
 * against its bounds and rows. */
static void offer(cbctx *c, glp_tree *T)
{
	glp_prob *Q = glp_ios_get_prob(T);
	int nq = glp_get_num_cols(Q);
	if (nq != c->nq) {
		snprintf(c->note, sizeof c->note,
			 "start solution not offered: columns changed");
		return;
	}
	double *x = hoff_alloc((size_t)nq + 1, sizeof *x);
	int *ind = hoff_alloc((size_t)nq + 1, sizeof *ind);
	double *val = hoff_alloc((size_t)nq + 1, sizeof *val);
	if (!x || !ind || !val)
		goto out;
	x[0] = 0;
	for (int j = 1; j <= nq; j++) {
		if (!c->qmap[j]) {
			snprintf(c->note, sizeof c->note,
				 "start solution not offered: column %d has "
				 "no name",
				 j);
			goto out;
		}
		x[j] = c->start[c->qmap[j]];
		double lb = glp_get_col_lb(Q, j), ub = glp_get_col_ub(Q, j);
		int type = glp_get_col_type(Q, j);
		bool lo = type == GLP_LO || type == GLP_DB || type == GLP_FX;
		bool up = type == GLP_UP || type == GLP_DB || type == GLP_FX;
		if (glp_get_col_kind(Q, j) == GLP_IV) {
			x[j] = floor(x[j] + 0.5);
		} else {
			/* snap into the bounds what rounding left outside */
			if (lo && x[j] < lb && x[j] > lb - 1e-7)
				x[j] = lb;
			if (up && x[j] > ub && x[j] < ub + 1e-7)
				x[j] = ub;
		}
		if ((lo && x[j] < lb - 1e-9) || (up && x[j] > ub + 1e-9)) {
			snprintf(c->note, sizeof c->note,
				 "start solution not offered: column %s "
				 "outside its presolved bounds",
				 glp_get_col_name(Q, j));
			goto out;
		}
	}
	for (int i = 1; i <= c->mq; i++) {
		int len = glp_get_mat_row(Q, i, ind, val);
		double act = 0;
		for (int k = 1; k <= len; k++)
			act += val[k] * x[ind[k]];
		int type = glp_get_row_type(Q, i);
		double lb = glp_get_row_lb(Q, i), ub = glp_get_row_ub(Q, i);
		double tol = 1e-6 * (1 + fabs(lb) + fabs(ub));
		if (((type == GLP_LO || type == GLP_DB || type == GLP_FX) &&
		     act < lb - tol) ||
		    ((type == GLP_UP || type == GLP_DB || type == GLP_FX) &&
		     act > ub + tol)) {
			snprintf(c->note, sizeof c->note,
				 "start solution not offered: it breaks "
				 "presolved row %s",
				 glp_get_row_name(Q, i) ? glp_get_row_name(Q, i)
							: "?");
			goto out;
		}
	}
	c->accepted = glp_ios_heur_sol(T, x) == 0;
	if (!c->accepted)
		snprintf(c->note, sizeof c->note,
			 "start solution offered; the solver had a better "
			 "one");
out:
	free(x);
	free(ind);
	free(val);
}

/* The columns of a kind with a branch priority (ilp_names.h: the fetch counts
 * (13), O_c before X_cq) are branched on first, the highest priority
 * first, then the earliest second argument (X_cq's boundary q); GLPK
 * picks the child. */
static void branch_counts(const cbctx *c, glp_tree *T)
{
	int pick = 0, best = 0;
	for (int j = 1; j <= c->nq; j++) {
		int o = c->qmap[j];
		int prio = o ? hoff_col_kind_of(c->m->ctag[o])->branch : 0;
		if (prio <= 0 || !glp_ios_can_branch(T, j))
			continue;
		int p = pick ? c->qmap[pick] : 0;
		if (!pick || prio > best ||
		    (prio == best && c->m->carg1[o] < c->m->carg1[p])) {
			pick = j;
			best = prio;
		}
	}
	if (pick)
		glp_ios_branch_upon(T, pick, GLP_NO_BRNCH);
}

static void callback(glp_tree *T, void *info)
{
	cbctx *c = info;
	int reason = glp_ios_reason(T);
	int best = glp_ios_best_node(T);
	if (best) {
		double b = glp_ios_node_bound(T, best);
		if (!c->has_bound || b > c->bound) /* bounds only rise */
			c->bound = b;
		c->has_bound = true;
	}
	int a_cnt, n_cnt, t_cnt;
	glp_ios_tree_size(T, &a_cnt, &n_cnt, &t_cnt);
	c->nodes = t_cnt;
	if (reason == GLP_IBRANCH)
		branch_counts(c, T);
	if (reason == GLP_IHEUR && c->start && !c->offered) {
		c->offered = true;
		offer(c, T);
	}
	if (c->first && glp_mip_status(glp_ios_get_prob(T)) == GLP_FEAS) {
		/* a feasibility probe: any incumbent answers it (heuristic
		 * solutions arrive without GLP_IBINGO, so check each time) */
		glp_ios_terminate(T);
		return;
	}
	double t = hoff_now_s();
	if (t >= c->deadline && !c->timed_out) {
		/* tm_lim is only checked between nodes; cut rounds at the
		 * root can run past it */
		c->timed_out = true;
		glp_ios_terminate(T);
	}
	if (c->progress->fn && t - c->last >= 5.0) {
		glp_prob *Q = glp_ios_get_prob(T);
		c->last = t;
		char line[256];
		int n = snprintf(line, sizeof line,
				 "exact: %.0f s, %d nodes open", t - c->t0,
				 a_cnt);
		if (glp_mip_status(Q) == GLP_FEAS) {
			double inc = glp_mip_obj_val(Q);
			n += snprintf(line + n, sizeof line - (size_t)n,
				      ", incumbent %.6g",
				      hoff_ilp_objective_value(c->m, inc));
			if (c->has_bound)
				snprintf(line + n, sizeof line - (size_t)n,
					 ", bound %.6g, gap %.2f%%",
					 hoff_ilp_objective_value(c->m,
								  c->bound),
					 100 * fmax(0, inc - c->bound) /
						 fmax(fabs(inc), 1e-300));
		} else if (c->has_bound) {
			snprintf(line + n, sizeof line - (size_t)n,
				 ", bound %.6g",
				 hoff_ilp_objective_value(c->m, c->bound));
		}
		hoff_say(c->progress, "%s", line);
	}
}

static int ms_left(double t0, double limit_s)
{
	double left = limit_s - (hoff_now_s() - t0);
	if (left < 0.001)
		left = 0.001;
	if (left > 1e6)
		left = 1e6;
	return (int)ceil(left * 1000);
}

/* One cover cut of the row a x <= b (every column binary; those at a
 * fixed value moved into b, negative coefficients complemented) at the
 * LP point, when it cuts it: the cover C reached by adding columns in
 * order of (1 - x_j) / a_j until their a passes b, violated when
 * sum_C (1 - x_j) < 1, extended by every column with a_j at least C's
 * largest: sum_E x_j <= |C| - 1, in the original columns. Returns the
 * cut's length (0: none) in ind/val (1-based) and its rhs. */
typedef struct cov_item {
	int j;
	double a, x, key;
	bool neg;
} cov_item;

static int by_key(const void *p, const void *q)
{
	const cov_item *a = p, *b = q;
	return (a->key > b->key) - (a->key < b->key);
}

static int cover_cut(glp_prob *P, int len, const int *rind,
		     const double *rval, double sgn, double b, cov_item *it,
		     int *ind, double *val, double *rhs)
{
	int ni = 0;
	for (int k = 1; k <= len; k++) {
		int j = rind[k];
		double a = sgn * rval[k], x = glp_get_col_prim(P, j);
		if (glp_get_col_type(P, j) == GLP_FX) {
			b -= a * glp_get_col_lb(P, j);
			continue;
		}
		if (a < 0) {
			b -= a; /* a x = a - a (1 - x) */
			it[ni++] = (cov_item){j, -a, 1 - x, 0, true};
		} else if (a > 0) {
			it[ni++] = (cov_item){j, a, x, 0, false};
		}
	}
	if (ni < 2 || b < 0)
		return 0;
	for (int k = 0; k < ni; k++)
		it[k].key = (1 - it[k].x) / it[k].a;
	qsort(it, (size_t)ni, sizeof *it, by_key);
	double sum = 0, slack = 0, amax = 0;
	int c = 0;
	while (c < ni && sum <= b * (1 + 1e-9) + 1e-9) {
		sum += it[c].a;
		slack += 1 - it[c].x;
		amax = fmax(amax, it[c].a);
		c++;
	}
	if (sum <= b * (1 + 1e-9) + 1e-9 || slack >= 1 - 1e-4)
		return 0;
	int n = 0;
	*rhs = c - 1;
	for (int k = 0; k < ni; k++) {
		if (k >= c && it[k].a < amax)
			continue;
		n++;
		ind[n] = it[k].j;
		val[n] = it[k].neg ? -1 : 1;
		if (it[k].neg)
			*rhs -= 1;
	}
	return n;
}

/* Deletes Q's rows after the first m0. */
static void drop_rows_from(glp_prob *Q, int m0)
{
	int m = glp_get_num_rows(Q);
	if (m <= m0)
		return;
	int *num = malloc(sizeof *num * (size_t)(m - m0 + 1));
	if (!num)
		return; /* then glp_npp_postprocess's check fails loudly */
	for (int i = m0 + 1; i <= m; i++)
		num[i - m0] = i;
	glp_del_rows(Q, m - m0, num);
	free(num);
}

/* Root rounds before a probe's branch and bound: cover cuts on the
 * rows of binaries (the memory rows), with GLPK's Gomory and MIR cuts,
 * added to Q as rows (valid for every integer solution) and the LP
 * re-solved from its basis, until the LP is infeasible (returns 1: the
 * probe is answered), a round adds nothing or three raise the bound by
 * less than 1e-6 of it, or the rounds' share of the time is spent
 * (returns 0; -1 on a simplex failure, the rows added kept). GLPK's
 * own root cuts failed to answer llama3-8b-train-2l's probe just under
 * its best in 300 s; these do in two or three rounds
 * (solver/README.md). */
#define ROOT_ROUNDS 40
static int root_cuts(glp_prob *Q, glp_smcp *sp, double t0, double until,
		     double *bound)
{
	const int n = glp_get_num_cols(Q), m0 = glp_get_num_rows(Q);
	int *ind = malloc(sizeof *ind * (size_t)(n + 1));
	int *rind = malloc(sizeof *rind * (size_t)(n + 1));
	double *val = malloc(sizeof *val * (size_t)(n + 1));
	double *rval = malloc(sizeof *rval * (size_t)(n + 1));
	cov_item *it = malloc(sizeof *it * (size_t)(n + 1));
	bool *bin_row = calloc((size_t)m0 + 1, sizeof *bin_row);
	int res = 0;
	if (!ind || !rind || !val || !rval || !it || !bin_row)
		goto out;
	for (int i = 1; i <= m0; i++) {
		int len = glp_get_mat_row(Q, i, rind, rval);
		bool all = len >= 2;
		for (int k = 1; all && k <= len; k++)
			all = glp_get_col_kind(Q, rind[k]) == GLP_BV;
		bin_row[i] = all;
	}
#ifdef HOFF_GLPK_CUTGEN
	glp_mir *mir = glp_mir_init(Q);
#endif
	double last = *bound;
	int flat = 0;
	/* a cut leaves the basis primal infeasible, dual feasible */
	sp->meth = GLP_DUALP;
	double gen = 0; /* the last round's separation time: it ignores
			 * the limit, so a round starts only if it fits */
	for (int round = 0; round < ROOT_ROUNDS && hoff_now_s() + gen < until;
	     round++) {
		double tg = hoff_now_s();
		glp_prob *pool = glp_create_prob();
		glp_add_cols(pool, n);
		for (int i = 1; i <= m0; i++) {
			int ty = glp_get_row_type(Q, i);
			if (!bin_row[i] || ty == GLP_FR || ty == GLP_FX)
				continue;
			int len = glp_get_mat_row(Q, i, rind, rval);
			for (int side = 0; side < 2; side++) {
				double rhs;
				int cl;
				if (side == 0 && ty != GLP_LO)
					cl = cover_cut(Q, len, rind, rval, 1,
						       glp_get_row_ub(Q, i), it,
						       ind, val, &rhs);
				else if (side == 1 && ty != GLP_UP)
					cl = cover_cut(Q, len, rind, rval, -1,
						       -glp_get_row_lb(Q, i),
						       it, ind, val, &rhs);
				else
					continue;
				if (cl == 0)
					continue;
				int r = glp_add_rows(pool, 1);
				glp_set_mat_row(pool, r, cl, ind, val);
				glp_set_row_bnds(pool, r, GLP_UP, 0, rhs);
			}
		}
#ifdef HOFF_GLPK_CUTGEN
		glp_gmi_gen(Q, pool, 100);
		glp_mir_gen(Q, mir, pool);
#endif
		int np = glp_get_num_rows(pool);
		gen = hoff_now_s() - tg;
		if (np > 0) {
			int base = glp_add_rows(Q, np);
			for (int i = 1; i <= np; i++) {
				int len = glp_get_mat_row(pool, i, ind, val);
				glp_set_mat_row(Q, base + i - 1, len, ind, val);
				glp_set_row_bnds(Q, base + i - 1,
						 glp_get_row_type(pool, i),
						 glp_get_row_lb(pool, i),
						 glp_get_row_ub(pool, i));
			}
		}
		glp_delete_prob(pool);
		if (np == 0)
			break;
		sp->tm_lim = ms_left(t0, until - t0);
		int ret = glp_simplex(Q, sp);
		if (ret == GLP_ETMLIM)
			break;
		if (ret != 0) {
			res = -1;
			break;
		}
		if (glp_get_status(Q) == GLP_NOFEAS) {
			res = 1;
			break;
		}
		if (glp_get_status(Q) != GLP_OPT) {
			res = -1;
			break;
		}
		*bound = glp_get_obj_val(Q);
		flat = *bound - last <= 1e-6 * fmax(1, fabs(last)) ? flat + 1
								   : 0;
		last = *bound;
		if (flat >= 3)
			break;
	}
#ifdef HOFF_GLPK_CUTGEN
	glp_mir_free(mir);
#endif
out:
	free(ind);
	free(rind);
	free(val);
	free(rval);
	free(it);
	free(bin_row);
	return res;
}

/* A solve that ends without an error: its status and a fixed note. */
static void answer(hoff_ilp_sol *sol, hoff_ilp_status status, const char *note)
{
	sol->status = status;
	snprintf(sol->note, sizeof sol->note, "%s", note);
}

/* "exact: GLPK STAGE: REASON" (HOFF_EINPUT) for GLPK's return code ret. */
static hoff_status glpk_error(hoff_err *e, const char *stage, int ret)
{
	return hoff_seterr(e, HOFF_EINPUT, "exact: GLPK %s: %s", stage,
			   code_name(ret));
}

hoff_status hoff_glpk_solve(const hoff_ilp *m, const double *start,
			    hoff_ilp_sol *sol, hoff_err *e)
{
	memset(sol, 0, sizeof *sol);
	double t0 = hoff_now_s();
	double limit = m->rq.time_limit_s > 0 ? m->rq.time_limit_s : 60;
	triplets t;
	hoff_status st = prepare(m, &t, e);
	if (st != HOFF_OK)
		return st;
	int *volatile qmap = NULL;
	guard g = {.verbose = m->o.verbose};
	glp_prob *volatile P = NULL, *volatile Q = NULL;
	glp_prep *volatile prep = NULL;
	volatile bool use_npp = true, presolving = true;
	volatile int mcut0 = 0; /* Q's rows before the root's cuts */
	cbctx ctx = {.m = m,
		     .t0 = t0,
		     .last = t0,
		     .deadline = t0 + limit,
		     .first = m->rq.first_solution,
		     .progress = hoff_ilp_progress(m)};
	/* a probe with fetch counts (13) branches on them, with GLPK's cuts
	 * off and without the root's cut rows (the rounds still run: they
	 * answer llama3-8b-train-2l's probe under its best):
	 * deepseek-v3-decode-4l's probe under its best is proven infeasible
	 * in 5 s so; with the cut rows, which slow every node, it got no
	 * answer in 54 s */
	bool counts = false;
	for (int32_t j = 1; j <= m->ncols && !counts; j++)
		counts = hoff_col_kind_of(m->ctag[j])->branch > 0;
again:
	hooks_on(&g);
	if (setjmp(g.jb)) {
		if (presolving && use_npp) {
			glp_free_env();
			hooks_off();
			/* GLPK's preprocessor fails on a problem it reduces
			 * to nothing: solve the original instead */
			P = Q = NULL;
			prep = NULL;
			use_npp = false;
			goto again;
		}
		free(qmap);
		free(sol->x);
		sol->x = NULL;
		sol->has_x = false;
		return glpk_failed(&g, &t, "", e);
	}
	P = load(m, t.ia, t.ja, t.ar);
	glp_create_index(P);
	int ret;
	if (use_npp) {
		prep = glp_npp_alloc_wksp();
		glp_npp_load_prob(prep, P, GLP_MIP, GLP_ON);
		ret = glp_npp_preprocess1(prep, GLP_OFF);
		if (ret == GLP_ENOPFS) {
			answer(sol, HOFF_ILP_INFEASIBLE,
			       "presolve proved the model infeasible");
			goto done;
		}
		if (ret != 0) {
			st = glpk_error(e, "presolve", ret);
			goto done;
		}
		Q = glp_create_prob();
		glp_npp_build_prob(prep, Q);
	} else {
		Q = P;
	}
	presolving = false;
	ctx.nq = glp_get_num_cols(Q);
	ctx.mq = glp_get_num_rows(Q);
	qmap = hoff_zalloc((size_t)ctx.nq + 1, sizeof *qmap);
	if (!qmap) {
		st = hoff_seterr(e, HOFF_ENOMEM, "out of memory");
		goto done;
	}
	for (int j = 1; j <= ctx.nq; j++) {
		const char *nm = glp_get_col_name(Q, j);
		qmap[j] = nm ? glp_find_col(P, nm) : 0;
	}
	ctx.qmap = qmap;
	ctx.start = start;
	sol->incumbent_given = start != NULL;
	glp_smcp sp;
	glp_init_smcp(&sp);
	sp.msg_lev = m->o.verbose ? GLP_MSG_ON : GLP_MSG_OFF;
	sp.presolve = GLP_OFF;
	sp.tm_lim = ms_left(t0, limit);
	{ /* also when presolve left nothing: GLPK solves it trivially */
		glp_scale_prob(Q, GLP_SF_AUTO);
		/* a probe's LP: the dual simplex (llama3-8b-train-2l's just
		 * under its best: 4.0 s against 7.8 s with the primal; the
		 * min-peak models' LP is the other way round, 19 s against
		 * 2.8 s) */
		if (m->rq.first_solution)
			sp.meth = GLP_DUALP;
		ret = glp_simplex(Q, &sp);
		if (ret == GLP_EFAIL || ret == GLP_ESING || ret == GLP_ECOND) {
			/* numerical trouble: restart from a fresh basis
			 * with the dual simplex */
			glp_adv_basis(Q, 0);
			sp.meth = GLP_DUALP;
			sp.tm_lim = ms_left(t0, limit);
			ret = glp_simplex(Q, &sp);
		}
		if (ret == GLP_ETMLIM) {
			answer(sol, HOFF_ILP_TIME_LIMIT,
			       "the time limit hit in the LP relaxation");
			goto done;
		}
		if (ret != 0) {
			st = glpk_error(e, "simplex", ret);
			goto done;
		}
		int lps = glp_get_status(Q);
		if (lps == GLP_NOFEAS) {
			answer(sol, HOFF_ILP_INFEASIBLE,
			       "the LP relaxation is infeasible");
			goto done;
		}
		if (lps != GLP_OPT) {
			st = hoff_seterr(e, HOFF_EINPUT,
					 "exact: GLPK simplex: LP status %d",
					 lps);
			goto done;
		}
		ctx.bound = glp_get_obj_val(Q);
		ctx.has_bound = true;
	}
	mcut0 = glp_get_num_rows(Q);
	if (m->rq.first_solution && glp_get_num_int(Q) > 0) {
		/* a probe: root rounds of our own first; they are what
		 * answers the hard ones (the branch and bound gets what they
		 * leave: they stop when flat) */
		double until = t0 + limit;
		int nr = glp_get_num_rows(Q), nc = glp_get_num_cols(Q);
		int *stat = counts ? malloc(sizeof *stat * (size_t)(nr + nc + 1))
				   : NULL;
		for (int i = 1; stat && i <= nr; i++)
			stat[i] = glp_get_row_stat(Q, i);
		for (int j = 1; stat && j <= nc; j++)
			stat[nr + j] = glp_get_col_stat(Q, j);
		double bound0 = ctx.bound;
		int rc = root_cuts(Q, &sp, t0, until, &ctx.bound);
		sol->cut_rows = glp_get_num_rows(Q) - mcut0;
		bool resolve = stat && rc != 1;
		if (resolve) {
			/* with fetch counts the branch and bound goes
			 * without the cut rows (they slow every node: on
			 * deepseek-v3-decode-4l's probe under its best no
			 * answer in 54 s with them, 5 s without), from the
			 * relaxation's own basis */
			drop_rows_from(Q, mcut0);
			for (int i = 1; i <= nr; i++)
				glp_set_row_stat(Q, i, stat[i]);
			for (int j = 1; j <= nc; j++)
				glp_set_col_stat(Q, j, stat[nr + j]);
			sol->cut_rows = 0;
			ctx.bound = bound0;
		}
		free(stat);
		if (rc == 1) {
			sol->cuts_answered = true;
			answer(sol, HOFF_ILP_INFEASIBLE,
			       "the LP relaxation with the root's cuts is "
			       "infeasible");
			goto done;
		}
		if (resolve || glp_get_status(Q) != GLP_OPT) {
			/* out of time or a numerical failure mid-round: the
			 * last LP again, the cuts kept (they hold for every
			 * integer solution); or the first, without them */
			sp.tm_lim = ms_left(t0, limit);
			ret = glp_simplex(Q, &sp);
			if (ret == GLP_ETMLIM) {
				answer(sol, HOFF_ILP_TIME_LIMIT,
				       "the time limit hit in the LP "
				       "relaxation");
				goto done;
			}
			if (ret != 0 || glp_get_status(Q) != GLP_OPT) {
				/* seen on a loaded machine under a short
				 * limit (ret 0, the LP not optimal): the probe
				 * goes unanswered, as out of time; it proves
				 * nothing either way */
				sol->status = HOFF_ILP_TIME_LIMIT;
				snprintf(sol->note, sizeof sol->note,
					 "GLPK simplex after the root's cuts: "
					 "%s, LP status %d: no answer",
					 ret ? code_name(ret) : "returned 0",
					 glp_get_status(Q));
				goto done;
			}
		}
	}
	glp_iocp ip;
	glp_init_iocp(&ip);
	ip.msg_lev = m->o.verbose ? GLP_MSG_ON : GLP_MSG_OFF;
	ip.tm_lim = ms_left(t0, limit);
	ip.mip_gap = m->rq.gap > 0 ? m->rq.gap : 0;
	ip.presolve = GLP_OFF; /* ours, above, with names kept */
	/* peaks are answered to the byte where they can be: a binary 1e-5
	 * off its value (the default) moves a memory row by kilobytes */
	if (m->rq.first_solution || !m->budget_mode)
		ip.tol_int = 1e-10;
	/* GLPK prunes a node whose bound is within tol_obj (1 + |best|) of
	 * the incumbent, and calls the search optimal when none is left:
	 * with the default 1e-7 a min-peak proof would be short by up to
	 * kilobytes (1.6 KB on llama3-8b-train-2l), so well under a byte */
	if (!m->budget_mode)
		ip.tol_obj = 1e-12;
	ip.cb_func = callback;
	ip.cb_info = &ctx;
	ip.br_tech = GLP_BR_DTH; /* pseudocost init runs long without a callback */
	ip.bt_tech = GLP_BT_BLB;
	/* GLPK's cut generators fail on a problem without integer
	 * columns (glp_add_cols with 0); they have nothing to cut then */
	int cuts = glp_get_num_int(Q) > 0 ? GLP_ON : GLP_OFF;
	/* the root's cut rounds and the feasibility pump ignore the time
	 * limit until they finish: not under a short limit */
	if (limit < 10 || counts)
		cuts = GLP_OFF;
	ip.mir_cuts = m->rq.no_mir ? GLP_OFF : cuts;
	ip.gmi_cuts = cuts;
	ip.cov_cuts = cuts;
	ip.clq_cuts = cuts;
	/* the feasibility pump has no callback: only on small models, and
	 * not in the probes, whose deadlines are tighter (llama3-8b decode
	 * L8 of the scale run: its first probe, 1888 binaries, ran 3 to 10 s
	 * past its limit in the pump; without it, that probe finds a
	 * solution in 49 s and the next one ends in its time) */
	ip.fp_heur = m->nbin <= 2000 && !m->rq.first_solution ? cuts : GLP_OFF;
	ret = glp_intopt(Q, &ip);
	int mst = glp_mip_status(Q);
	switch (ret) {
	case 0:
		sol->status = mst == GLP_OPT	? HOFF_ILP_OPTIMAL
			      : mst == GLP_FEAS ? HOFF_ILP_FEASIBLE
						: HOFF_ILP_INFEASIBLE;
		break;
	case GLP_ETMLIM:
		sol->status = HOFF_ILP_TIME_LIMIT;
		break;
	case GLP_EMIPGAP:
	case GLP_ESTOP:
		sol->status = ctx.timed_out ? HOFF_ILP_TIME_LIMIT
					    : HOFF_ILP_FEASIBLE;
		break;
	case GLP_ENOPFS:
		sol->status = HOFF_ILP_INFEASIBLE;
		break;
	case GLP_EFAIL:
		/* a node's LP failed (numerically): the search ends there, an
		 * unfinished one; its incumbent and the bound of the tree so
		 * far still hold */
		sol->status = HOFF_ILP_TIME_LIMIT;
		snprintf(ctx.note, sizeof ctx.note,
			 "GLPK's branch and bound stopped on a numerical "
			 "failure (GLP_EFAIL) after %lld nodes",
			 (long long)ctx.nodes);
		break;
	default:
		st = glpk_error(e, "intopt", ret);
		goto done;
	}
	sol->incumbent_accepted = ctx.accepted;
	if (ctx.note[0])
		snprintf(sol->note, sizeof sol->note, "%s", ctx.note);
	if (sol->status != HOFF_ILP_INFEASIBLE &&
	    (mst == GLP_OPT || mst == GLP_FEAS)) {
		if (prep) {
			/* the preprocessor recovers the rows it built */
			drop_rows_from(Q, mcut0);
			glp_npp_postprocess(prep, Q);
			glp_npp_obtain_sol(prep, P);
		}
		sol->x = hoff_alloc((size_t)m->ncols + 1, sizeof *sol->x);
		if (!sol->x) {
			st = hoff_seterr(e, HOFF_ENOMEM, "out of memory");
			goto done;
		}
		sol->x[0] = 0;
		for (int32_t j = 1; j <= m->ncols; j++)
			sol->x[j] = glp_mip_col_val(P, j);
		sol->obj = glp_mip_obj_val(P);
		sol->has_x = true;
		if (sol->status == HOFF_ILP_OPTIMAL) {
			ctx.bound = sol->obj;
			ctx.has_bound = true;
		} else if (ctx.has_bound && ctx.bound > sol->obj) {
			ctx.bound = sol->obj;
		}
	}
	sol->has_bound = ctx.has_bound && sol->status != HOFF_ILP_INFEASIBLE;
	sol->bound = ctx.bound;
	sol->nodes = ctx.nodes;
done:
	sol->solve_s = hoff_now_s() - t0;
	if (prep)
		glp_npp_free_wksp(prep);
	if (Q && Q != P)
		glp_delete_prob(Q);
	if (P)
		glp_delete_prob(P);
	hooks_off();
	triplets_free(&t);
	free(qmap);
	return st;
}

typedef struct complete_args {
	double *x; /* (ncols + 1) */
	bool *ok;
} complete_args;

static hoff_status complete_work(glp_prob *P, const hoff_ilp *m, double load_s,
				 void *arg, hoff_err *e)
{
	const complete_args *c = arg;
	double *x = c->x;
	(void)load_s;
	(void)e;
	for (int32_t j = 1; j <= m->ncols; j++)
		/* U: relaxed, set after (its warm-start rule); X, O: counts,
		 * set by their rows */
		if (m->cbin[j] == 1 &&
		    hoff_col_kind_of(m->ctag[j])->warm != HOFF_WARM_SATURATED) {
			double v = floor(x[j] + 0.5);
			if (v < m->clb[j] || v > m->cub[j])
				return HOFF_OK;
			glp_set_col_bnds(P, j, GLP_FX, v, v);
		}
	glp_smcp sp;
	glp_init_smcp(&sp);
	sp.msg_lev = GLP_MSG_OFF;
	sp.presolve = GLP_OFF;
	/* at most 10 s, and within the model's own limit */
	double lim = m->rq.time_limit_s > 0 ? fmin(10, m->rq.time_limit_s) : 10;
	sp.tm_lim = (int)fmax(1, lim * 1000);
	if (m->ncols > 0 && m->nrows > 0) {
		int ret = glp_simplex(P, &sp);
		if (ret != 0 || glp_get_status(P) != GLP_OPT)
			return HOFF_OK;
		for (int32_t j = 1; j <= m->ncols; j++)
			x[j] = glp_get_col_prim(P, j);
	}
	*c->ok = true;
	return HOFF_OK;
}

hoff_status hoff_glpk_complete(const hoff_ilp *m, double *x, bool *ok,
			       hoff_err *e)
{
	*ok = false;
	complete_args c = {x, ok};
	return with_model(m, false, "", complete_work, &c, e);
}

typedef struct lp_args {
	double time_limit_s;
	double *obj;
	bool *ok;
} lp_args;

static hoff_status lp_work(glp_prob *P, const hoff_ilp *m, double load_s,
			   void *arg, hoff_err *e)
{
	const lp_args *a = arg;
	(void)e;
	double t1 = hoff_now_s();
	glp_smcp sp;
	glp_init_smcp(&sp);
	sp.msg_lev = GLP_MSG_OFF;
	sp.presolve = GLP_ON; /* only the objective is read back */
	sp.tm_lim = (int)fmin(1e9, fmax(1, a->time_limit_s * 1000));
	if (m->ncols > 0 && m->nrows > 0) {
		glp_scale_prob(P, GLP_SF_AUTO);
		/* textbook pricing: on deepseek-v3-decode-4l at stride 1
		 * (49,012 rows) 17 s where the projected steepest edge
		 * takes 27 s; within 0.1 s on the other small data/ graphs */
		sp.pricing = GLP_PT_STD;
		double t2 = hoff_now_s();
		int ret = glp_simplex(P, &sp);
		if (ret == 0 && glp_get_status(P) == GLP_OPT) {
			*a->obj = glp_get_obj_val(P);
			*a->ok = true;
		}
		hoff_say(hoff_ilp_progress(m),
			 "exact: LP relaxation of %d rows, %zu "
			 "nonzeros: load %.1f s, scaling %.1f s, "
			 "simplex %.1f s",
			 m->nrows, m->nnz, load_s, t2 - t1, hoff_now_s() - t2);
	}
	return HOFF_OK;
}

hoff_status hoff_glpk_lp(const hoff_ilp *m, double time_limit_s, double *obj,
			 bool *ok, hoff_err *e)
{
	*ok = false;
	lp_args a = {time_limit_s, obj, ok};
	return with_model(m, m->o.verbose, "", lp_work, &a, e);
}
