/* ilp_backend.h: what the model's files ask of the solver backend
 * (glpk_backend.c, the only file that includes glpk.h). Private to
 * solver/. */
#ifndef HOFF_ILP_BACKEND_H
#define HOFF_ILP_BACKEND_H

#include "ilp.h"

/* Writes m as CPLEX LP and/or free MPS (either path may be NULL).
 * HOFF_EIO naming the file. */
hoff_status hoff_glpk_write(const hoff_ilp *m, const char *lp, const char *mps,
			    hoff_err *e);

/* Branch-and-cut on m within m->o's time limit and gap; start (NULL or
 * a row-feasible 1-based vector) is offered as the first incumbent.
 * Fills *sol (sol->x allocated when has_x). HOFF_ENOMEM, or HOFF_EINPUT
 * with the solver's code name. */
hoff_status hoff_glpk_solve(const hoff_ilp *m, const double *start,
			    hoff_ilp_sol *sol, hoff_err *e);

/* With every binary column fixed at its value in x, solves the linear
 * program for the continuous columns and writes them into x. *ok false
 * when that program is infeasible. */
hoff_status hoff_glpk_complete(const hoff_ilp *m, double *x, bool *ok,
			       hoff_err *e);

/* The linear relaxation's optimum of m within time_limit_s; *ok false
 * when infeasible or not solved in time. */
hoff_status hoff_glpk_lp(const hoff_ilp *m, double time_limit_s, double *obj,
			 bool *ok, hoff_err *e);

#endif
