/* ilp.h: the exact scheduler — a mixed-integer model of where each
 * candidate tensor leaves the device and where its prefetch is issued,
 * built in our own flat arrays (columns, rows, CSR matrix), solved by a
 * backend (glpk_backend.c, the only file that includes glpk.h), decoded
 * into a schedule through the emitter and checked by the simulator.
 * The model is written out in math in ilp_model.c and solver/README.md.
 * requires a finished graph; never returns a schedule the simulator
 * rejected, nor one worse than greedy's. */
#ifndef HOFF_ILP_H
#define HOFF_ILP_H

#include "candidates.h"
#include "graph.h"
#include "sched.h"

struct hoff_analysis;

/* pick[] value of an interval that is not used. */
#define HOFF_ILP_OFF (-2)

/* A candidate interval (candidates.h's hoff_cand: tensor c.t may be off
 * the device after touch c.a until touch c.b needs it back; c.b = nops:
 * a tail, never fetched back) with what the model adds: its earliest
 * prefetch boundary and its columns. */
typedef struct hoff_ilp_iv {
	hoff_cand c;   /* the candidate; in a model, c.seg counts among
			  its kept intervals */
	int32_t lo;    /* earliest useful prefetch boundary */
	bool fixed;    /* in every schedule: START, home-clean tail */
	bool home_end; /* (v2) repeat graph: a tail that must be used,
			  taking tier-homed state home (rule 9) */
	/* Model columns (1-based; 0: none) and dense maps into
	 * hoff_ilp.map (offset, HOFF_NONE when absent): the column in force
	 * at boundary q (R), instant w (Q) or window w (Ys, Yp). */
	int32_t zs, zd;
	int32_t rmap, qmap, ysmap, ypmap;
	int32_t r_first, r_last; /* allowed prefetch boundaries, first/last */
	int32_t q_lo, q_hi;      /* instants of qmap */
	int32_t ys_lo, ys_hi;    /* windows of ysmap */
	int32_t yp_lo, yp_hi;    /* windows of ypmap */
} hoff_ilp_iv;

/* (v2) A recompute candidate: activation t, the one output of
 * recomputable op p, dropped right after touch a (a drop step) and
 * re-made by a recompute of p right before op b, its next touch
 * (ilp_recompute.c). */
typedef struct hoff_ilp_rc {
	int32_t t, p, a, b;
	int32_t col; /* its column V (1-based) */
} hoff_ilp_rc;

/* What the user asks of the exact scheduler: the commands fill it from
 * their flags, the tests set the tuning knobs (max_binaries, prune,
 * bound_share). The solver never changes it; what it decides per model
 * goes into a build request (hoff_ilp_req). */
typedef struct hoff_ilp_opts {
	int64_t budget_bytes; /* HOFF_NONE: overhead mode */
	double max_overhead;  /* overhead mode: makespan at most
				 (1 + x) * lower_bound_s; minimise the peak */
	double time_limit_s;  /* wall-clock limit of the whole run (default
				 60) */
	double gap;           /* relative MIP gap to stop at (default 0) */
	int32_t stride;       /* decision stride: prefetch boundaries and
				 store credits every `stride` ops; 0: auto */
	int32_t max_binaries; /* auto stride aims below this (0, the
				 default: 6000 in budget mode, 8500 in
				 overhead mode) */
	bool prune;           /* drop choices that cannot lower memory at an
				 instant that can bind (default true) */
	bool all_candidates;  /* small tensors move too (default false:
				 greedy's candidates, hoff_tensor_movable) */
	bool recompute;	      /* (v2) recompute candidates beside the
				 offload ones (ilp_recompute.c; default
				 false: the model of before) */
	bool incumbent;       /* give greedy's schedule to the solver first */
	hoff_progress progress; /* a progress line every few s (fn NULL:
				   none) */
	bool verbose;		/* the solver's own log on stderr */
	double bound_share;    /* overhead mode: share of the time spent on
				  the min-peak model's branch and bound for
				  a lower bound before the probes (default
				  0.45; 0: none) */
	const struct hoff_analysis *analysis; /* g's hoff_analyze(), passed
				  along (it must outlive the run), or NULL:
				  the run analyses g itself */
	const char *write_lp;  /* write the model in CPLEX LP format */
	const char *write_mps; /* and in free MPS */
	const char *write_probe; /* overhead mode: the probe that would close
				    the gap (CPLEX LP; free MPS for a name
				    ending in ".mps"), when one is open */
} hoff_ilp_opts;

/* One model's build request: what the pipeline decides for it (its cap,
 * stride, peak floor, stall bound, deadline) and how its solves run.
 * hoff_ilp_request() makes the one a run starts from; the pipeline
 * updates it as it learns (the stride, the floor), and the floor LP's
 * and each probe's are made from it by named functions (exact.c,
 * peak_search.c). */
typedef struct hoff_ilp_req {
	int64_t budget_bytes; /* the model's cap: HOFF_NONE, the min-peak
				 model (overhead mode); else budget mode
				 under this cap (the user's, or a probe's) */
	int32_t stride;	      /* decision stride; 0: automatic */
	int64_t peak_floor;   /* overhead mode: a known lower bound on the
				 peak (0: none); instants below it get no
				 row (the pipeline's LP relaxation) */
	int64_t max_stall_ps; /* budget mode: also total stall at most
				 this (HOFF_NONE: no such row); the peak
				 search's probes set it */
	bool floor_rows;      /* overhead mode: rows (8) and (9) in the
				 min-peak model too (the LP floor's) */
	double deadline;      /* CLOCK_MONOTONIC seconds by which the run
				 must end (0: none): a build past it stops
				 with HOFF_ETIMEOUT, and a model whose
				 solver set-up cannot end before it is not
				 handed over */
	const struct hoff_analysis *analysis; /* g's analysis (outliving
				  the model), or NULL: the build analyses */
	double time_limit_s; /* each solve's wall-clock limit */
	double gap;	     /* relative MIP gap a solve stops at */
	bool first_solution; /* a solve stops at the first incumbent (a
				feasibility probe) */
	bool no_mir;	     /* GLPK's MIR cuts off (the bound phase's
				retry, peak_search.c) */
	bool quiet;	     /* no progress lines from its solves */
	bool write_files;    /* hoff_ilp_solve first writes the user's
				write_lp / write_mps (not for probes) */
} hoff_ilp_req;

/* Row senses of the model. */
enum { HOFF_ILP_LE = 0, HOFF_ILP_GE, HOFF_ILP_EQ };

/* The model, in our own arrays. Columns and rows are 1-based (index 0
 * unused) so they go to GLPK unchanged. Units: time in tu ps, bytes in
 * bu bytes (scaled so that coefficients are near 1). */
typedef struct hoff_ilp {
	const hoff_graph *g;
	hoff_ilp_opts o;    /* the user's options it was built under */
	hoff_ilp_req rq;    /* its build request; the solve settings
			       (time_limit_s, quiet, no_mir) may change
			       between solves */
	int32_t n;          /* ops */
	bool budget_mode;
	int64_t cap_bytes;  /* budget, or device memory in overhead mode */
	int64_t peak_floor; /* overhead mode: the peak is at least this */
	int64_t bound_ps;   /* overhead mode: makespan bound */
	int64_t compute_ps, lower_bound_ps;
	double tu, bu;
	int32_t stride;
	int64_t bin_limit;  /* the binaries an automatic stride aims below */
	int64_t *fixed;     /* (2n) memory at instant w (index w + 1) with
			       nothing offloaded */
	uint8_t *hot;       /* (2n) instant w is constrained */
	int32_t *s_col;     /* (n + 1) stall column of stage k (n: tail) */
	int32_t peak_col;   /* overhead mode: the peak column */
	hoff_ilp_iv *iv;    /* (niv) intervals with columns */
	int32_t niv;
	int32_t ncand;      /* tensors with at least one interval */
	hoff_ilp_rc *rc;    /* (nrc) recompute candidates, by b then p */
	int32_t nrc;
	int32_t *rc_off;    /* (n + 1) those re-made before op k:
			       rc[rc_off[k] .. rc_off[k + 1]) */
	int32_t *map;       /* dense maps of the intervals */
	size_t nmap, map_cap;
	/* columns 1..ncols */
	int32_t ncols, nbin;
	size_t col_cap;
	double *clb, *cub, *cobj;
	uint8_t *cbin;      /* 1: binary */
	uint8_t *ctag;	    /* kind letter (hoff_col_kind, ilp_names.h):
			       z Z R Q Y y s P U X O */
	int32_t *carg0, *carg1;
	/* rows 1..nrows, CSR: entries roff[i] .. roff[i+1] */
	int32_t nrows;
	size_t row_cap;
	uint8_t *rtype;
	double *rrhs;
	uint8_t *rtag;
	int32_t *rarg;
	int64_t *roff;
	int32_t *rcol;
	double *rval;
	size_t nnz, nz_cap;
	bool infeasible;    /* a constant row is violated: no schedule */
	char why[160];
	double build_s;
} hoff_ilp;

typedef enum hoff_ilp_status {
	HOFF_ILP_OPTIMAL = 0,
	HOFF_ILP_FEASIBLE,   /* stopped at the gap or by the callback */
	HOFF_ILP_TIME_LIMIT, /* stopped by the time limit */
	HOFF_ILP_INFEASIBLE,
} hoff_ilp_status;

/* "optimal", "feasible", "time_limit", "infeasible". */
const char *hoff_ilp_status_name(hoff_ilp_status st);

/* What a solve returns. x is 1-based (ncols + 1), valid when has_x. */
typedef struct hoff_ilp_sol {
	hoff_ilp_status status;
	bool has_x, has_bound;
	double *x;
	double obj, bound;  /* model units */
	double solve_s;
	int64_t nodes;
	bool incumbent_given;    /* a start solution was offered */
	bool incumbent_accepted; /* and the solver took it */
	int32_t cut_rows;        /* rows the root's cut rounds added (probes) */
	bool cuts_answered;      /* they made the LP infeasible */
	char note[160];
} hoff_ilp_sol;

/* Default options: overhead mode 1%, 60 s, gap 0, auto stride, pruning. */
hoff_ilp_opts hoff_ilp_defaults(void);

/* The build request for the model o describes: o's budget, stride,
 * analysis, time limit and gap; no peak floor, stall bound or deadline;
 * its solves write o's --write-lp / --write-mps files. */
hoff_ilp_req hoff_ilp_request(const hoff_ilp_opts *o);

/* Every candidate interval of g (candidates.h), unpruned, in tensor then
 * touch order (caller frees *iv); the columns are unset. Small tensors
 * (analysis.h) only get their free move unless `all`. HOFF_ENOMEM. */
hoff_status hoff_ilp_intervals(const hoff_graph *g, bool all,
			       hoff_ilp_iv **iv, int32_t *niv, hoff_err *e);

/* The decisions of m: one per interval, then one per recompute
 * candidate (HOFF_ILP_OFF, or chosen: b - 1); the size of a pick array. */
int32_t hoff_ilp_npick(const hoff_ilp *m);

/* Writes the schedule that the decisions pick[] (one per interval:
 * HOFF_ILP_OFF, or the boundary after which its prefetch is issued, -1:
 * before op 0; any value >= 0 selects a tail) make: evictions right after
 * touch a, prefetches at their boundary, each boundary's evictions then
 * prefetches in order of the op that needs them (earliest first, then
 * tensor id), so each FIFO channel serves the most urgent first. Store
 * or detach is the emitter's choice. Caller frees; HOFF_ENOMEM, or
 * HOFF_EINPUT when a decision cannot be written. */
hoff_status hoff_ilp_emit(const hoff_graph *g, const hoff_ilp_iv *iv,
			  int32_t niv, const int32_t *pick, const char *policy,
			  hoff_sched **out, hoff_err *e);

/* hoff_ilp_emit with m's intervals and recompute candidates: pick has
 * hoff_ilp_npick(m) entries; a chosen candidate is a drop of its tensor
 * after touch a (before that boundary's evictions) and a recompute of
 * its producer after boundary b - 1's prefetches, in producer order. */
hoff_status hoff_ilp_emit_model(const hoff_graph *g, const hoff_ilp *m,
				const int32_t *pick, const char *policy,
				hoff_sched **out, hoff_err *e);

/* Builds the model of g under the user's options o and the request rq
 * (NULL: hoff_ilp_request(o)) into *out (caller frees with
 * hoff_ilp_free). HOFF_ENOMEM, HOFF_EINPUT (budget of an impossible
 * size, more than INT_MAX rows or columns), HOFF_ETIMEOUT (past
 * rq->deadline). An infeasible budget is not an error:
 * (*out)->infeasible says so. */
hoff_status hoff_ilp_build(const hoff_graph *g, const hoff_ilp_opts *o,
			   const hoff_ilp_req *rq, hoff_ilp **out, hoff_err *e);

/* Frees m; NULL is fine. */
void hoff_ilp_free(hoff_ilp *m);

/* Solves m under m->rq's solve settings (first writing the user's LP /
 * MPS files when m->rq.write_files); start (NULL or 1-based, ncols + 1) is a
 * candidate first incumbent, offered only if it satisfies every row. Fills *sol
 * (caller frees sol->x). HOFF_ENOMEM, or HOFF_EINPUT naming a solver failure.
 */
hoff_status hoff_ilp_solve(const hoff_ilp *m, const double *start,
			   hoff_ilp_sol *sol, hoff_err *e);

/* The optimum of m's linear relaxation, in model units, into *bound;
 * *ok false when the relaxation is infeasible or the time ran out. */
hoff_status hoff_ilp_lp_bound(const hoff_ilp *m, double time_limit_s,
			      double *bound, bool *ok, hoff_err *e);

/* Reads the decisions out of a solution x into pick (caller-sized niv). */
void hoff_ilp_decode(const hoff_ilp *m, const double *x, int32_t *pick);

/* The largest violation of a row or bound by x (1-based), 0 when
 * feasible; *row gets the worst row (0 for a bound). */
double hoff_ilp_violation(const hoff_ilp *m, const double *x, int32_t *row);

/* A model solution with the decisions pick[] (e.g. greedy's): every
 * column read off the simulation of their schedule, or, where the stage
 * model disagrees with the machine, the continuous columns solved for
 * with the decisions fixed. Checked against every row; false (and x
 * untouched) when it does not fit. x is caller-sized ncols + 1. */
bool hoff_ilp_start(const hoff_ilp *m, const int32_t *pick, double *x,
		    hoff_err *e);

/* The decisions behind schedule s (greedy's) for m's intervals, rounded
 * to the boundaries the model allows. pick is caller-sized m->niv. */
void hoff_ilp_picks_of(const hoff_ilp *m, const hoff_sched *s, int32_t *pick);

/* Name of column j ("R12_5") or row i into buf. */
void hoff_ilp_col_name(const hoff_ilp *m, int32_t j, char *buf, size_t len);
void hoff_ilp_row_name(const hoff_ilp *m, int32_t i, char *buf, size_t len);

/* A model objective obj (model units) as the reports give it: stall in
 * s (budget mode) or bytes. */
double hoff_ilp_objective_value(const hoff_ilp *m, double obj);

/* What the model predicts for x: makespan (compute + stalls) and the
 * peak over its constrained instants. */
void hoff_ilp_predict(const hoff_ilp *m, const double *x,
		      int64_t *makespan_ps, int64_t *peak_bytes);

/* The model peak of x in bytes, exact: the most memory at an instant the
 * model can constrain, store completions read from the column in force
 * (as the memory rows read them). */
int64_t hoff_ilp_model_peak(const hoff_ilp *m, const double *x);

/* The exact pipeline: greedy, model, solve (greedy as first incumbent;
 * overhead mode: a search on the peak by budget-mode feasibility probes),
 * decode, simulate; returns the better of the decoded and the greedy
 * schedule under the objective. */
typedef struct hoff_exact_report {
	hoff_ilp_status status;
	bool budget_mode;
	bool feasible;          /* the returned schedule meets the objective's
				   constraint (budget, or overhead bound) */
	bool has_objective, has_bound, has_gap;
	double objective;       /* model objective of the ILP's solution: stall
				   s (budget mode) or peak bytes */
	double bound;           /* the solver's bound on it */
	double model_objective; /* the solver's objective in model units
				   (what an LP/MPS file's optimum reads) */
	double gap;             /* (objective - bound) / objective */
	double solve_s, build_s;
	double prep_s;          /* building and bounding, before the solve */
	int64_t predicted_makespan_ps, predicted_peak_bytes;
	bool has_decoded;
	hoff_summary decoded;   /* the simulated ILP schedule */
	bool decoded_valid;
	hoff_summary repaired;  /* after the FIFO repair (simulated) */
	bool repaired_fits;     /* legal, and meets budget / bound */
	int repair_moves;       /* moves the repair took */
	double repair_s;
	hoff_summary greedy;    /* greedy's simulated schedule */
	bool greedy_feasible;
	double greedy_s;        /* greedy's planning time */
	hoff_summary best;      /* the schedule returned */
	char source[16];        /* "exact" or "greedy" */
	int64_t lower_bound_ps, bound_ps, budget_bytes;
	int32_t nops, ncand, niv, ncols, nbin, nrows, stride;
	int32_t nrc; /* (v2) recompute candidates in the model */
	int64_t nnz, nodes;
	bool incumbent_given, incumbent_accepted;
	int32_t probes;         /* overhead mode: feasibility probes solved */
	int32_t probes_cut;     /* of them, answered infeasible by the root's
				   cut rounds (glpk_backend.c) */
	int64_t probe_peak;     /* --write-probe: the peak the written probe
				   asks about (0: none written) */
	char note[256];
	char restriction[768]; /* what the model leaves out, so what its
				  status and bound are over (never empty
				  once the model is built) */
} hoff_exact_report;

/* The status as the commands print it: "optimal_over_candidates" for a
 * proven optimum (it is optimal over the model's candidates and stages,
 * rep->restriction, not over every schedule of the machine model), else
 * hoff_ilp_status_name(). */
const char *hoff_exact_status_name(const hoff_exact_report *rep);

/* Runs the pipeline on g (caller frees *out; NULL when nothing meets the
 * budget). HOFF_ENOMEM, HOFF_EINPUT, HOFF_EIO (--write-lp/--write-mps). */
hoff_status hoff_exact_run(const hoff_graph *g, const hoff_ilp_opts *o,
			   hoff_sched **out, hoff_exact_report *rep,
			   hoff_err *e);

/* Objective of a simulated summary: stall s (budget mode) or peak bytes. */
double hoff_exact_objective(bool budget_mode, const hoff_summary *s);

#endif
