/* ilp_internal.h: what the files of the exact scheduler share (private
 * to solver/; the public API is ilp.h). The model in math is in
 * solver/README.md; the files:
 *   ilp_arrays.c  columns, rows and maps: the model's arrays
 *   ilp_model.c   intervals, emit, the build
 *   ilp_prune.c   stage planning and pruning (the plan)
 *   ilp_rows.c    columns and the constraint families (1)-(13)
 *   ilp_recompute.c (v2) recompute candidates, rows (15)-(17)
 *   ilp_solve.c   the solve, decode, objective, predict
 *   ilp_start.c   a warm start from a schedule's decisions
 *   ilp_judge.c   judging decoded schedules on the simulator, repair
 *   peak_search.c overhead mode's peak search
 *   exact.c       the pipeline, hoff_exact_run
 *   ilp_names.c   the column kinds' table, column and row names
 * Functions that were static in the one ilp.c are hoff_ilp_* here. */
#ifndef HOFF_ILP_INTERNAL_H
#define HOFF_ILP_INTERNAL_H

#include "analysis.h"
#include "emit.h"
#include "ilp.h"
#include "ilp_names.h"
#include "policy.h"
#include "sim.h"
#include "sort.h"

#define IDX(w) ((size_t)((w) + 1)) /* instant w in [-1, 2n-2] -> index */

/* Row under construction: entries appended with merge through pos[]. */
typedef struct rowb {
	hoff_ilp *m;
	int64_t *pos; /* (ncols + 1) entry of column j in the open row, -1 */
	double konst; /* constant part of the left-hand side */
	bool oom;
} rowb;

typedef struct plan {
	int32_t *P;    /* allowed boundaries, pooled */
	int32_t *Poff; /* (niv + 1) */
	uint8_t *keep; /* (niv) */
	uint8_t *late; /* (niv) 1: its fetch cannot fit (crowded), or NULL */
} plan;

/* A (window, interval) pair, bucketed by window for rows (5) and (6). */
typedef struct wentry {
	int32_t w, i;
	uint8_t store;
} wentry;

/* The (window, channel) groups of transfers, and their saturation
 * columns U (0 where the channel can never be saturated). */
typedef struct chan_plan {
	wentry *we;
	size_t ne;
	size_t *goff;  /* (ngrp + 1) */
	int32_t *ucol; /* (ngrp) */
	size_t ngrp;
} chan_plan;

typedef struct count_col {
	int32_t col, c, q; /* q: O_COUNT for O_c */
} count_col;

typedef struct judged {
	hoff_sched *s;
	hoff_summary sum;
	bool legal;	 /* every rule but the budget's */
	bool fits;	 /* budget (or device memory) and makespan bound */
	int32_t peak_op; /* the first op starting at or after the peak */
} judged;

typedef struct peak_search {
	hoff_ilp_status status;
	hoff_ilp *bm;	/* the model bx belongs to: a probe's (owned) or m */
	bool own;	/* bm is a probe's */
	double *bx;	/* best solution known (1-based), NULL: none */
	int64_t lo, hi; /* lo <= least model peak <= hi (bx's), INT64_MAX */
	int64_t mu;	/* margin below the half-grain the solver needs */
	int32_t probes, probes_cut;
	int64_t nodes;
	double solve_s;
	int64_t G;   /* the grain of every peak (peak_grain) */
	int64_t *pv; /* the peaks a model solution can have in the
			search's first [lo, hi], ascending (peak_values);
			NULL: too many to list, the grain G stands in */
	int64_t npv;
	judged sim; /* the best probe schedule the simulator finds
		       within the overhead bound (none: sim.s NULL) */
	char note[160];
} peak_search;

/* ilp_arrays.c: the model's arrays, which every other file builds on */

/* Orders interval indices (int32_t) of the intervals ctx (hoff_ilp_iv *)
 * as their evictions are issued: by touch a, then b, then tensor id. */
int hoff_ilp_by_evict(const void *x, const void *y, void *ctx);
/* Where m's solves send their progress lines: the user's, or nowhere
 * when m->rq.quiet. */
const hoff_progress *hoff_ilp_progress(const hoff_ilp *m);
/* (v2) The duplex factor of channel chan (2 tier + 1 for d2h) in the
 * simulator's integer form, F / 1e6 (rule 3); 1.0 exactly without one. */
double hoff_ilp_phi(const hoff_ilp *m, int chan);
/* Window w of m has a length: an op window of an op that takes time, or
 * a stall window with a stall column. */
bool hoff_ilp_win_exists(const hoff_ilp *m, int32_t w);
/* Appends a column (bounds, objective, binary, kind, two arguments for
 * its name); its index, or 0 when out of memory or past INT_MAX. */
int32_t hoff_ilp_add_col(hoff_ilp *m, double lb, double ub, double obj,
			 bool bin, hoff_col_kind tag, int32_t a0, int32_t a1);
/* Opens row `type rhs` (HOFF_ILP_LE, GE, EQ) with its tag and argument;
 * out of memory sets r->oom and every later call does nothing. */
void hoff_ilp_row_begin(rowb *r, int type, double rhs, char tag, int32_t arg);
/* Adds v * column col to the open row (col 0: nothing); a column twice
 * adds up in one entry. */
void hoff_ilp_row_add(rowb *r, int32_t col, double v);
/* Closes the open row: drops cancelled entries, moves r->konst to the
 * right-hand side; a row left empty is checked (a violated one marks m
 * infeasible, saying why in m->why) and removed. */
void hoff_ilp_row_end(rowb *r);
/* The row x_a - x_b <= 0 (x_a <= x_b), tagged. */
void hoff_ilp_row_le(rowb *r, char tag, int32_t arg, int32_t a, int32_t b);
/* A map of len entries (all 0: no column) in m->map: its offset,
 * HOFF_NONE when len <= 0, -2 when out of memory. */
int32_t hoff_ilp_map_new(hoff_ilp *m, int32_t len);
/* Interval v's R column in force at boundary q (0: none yet). */
int32_t hoff_ilp_r_at(const hoff_ilp *m, const hoff_ilp_iv *v, int32_t q);
/* v's Q column in force at instant w (0: none). */
int32_t hoff_ilp_q_at(const hoff_ilp *m, const hoff_ilp_iv *v, int32_t w);
/* v's Ys (store share) column in force at window w (0: none). */
int32_t hoff_ilp_ys_at(const hoff_ilp *m, const hoff_ilp_iv *v, int32_t w);
/* v's Yf (fetch share) column in force at window w (0: none). */
int32_t hoff_ilp_yp_at(const hoff_ilp *m, const hoff_ilp_iv *v, int32_t w);
/* Fills map (over indices [lo, hi]) from the sorted defined indices
 * idx[0..n), whose columns are first, first + 1, ...: each index gets
 * the column of the last defined index at or before it. */
void hoff_ilp_map_fill(hoff_ilp *m, int32_t map, int32_t lo, int32_t hi,
		       const int32_t *idx, int32_t n, int32_t first);

/* (v2) Recompute candidate c's tensor is off the device at instant w:
 * from its drop after touch a to its recompute before op b. */
bool hoff_ilp_rc_absent(const hoff_ilp_rc *c, int32_t w);
/* (v2) The time of the recompute candidates re-made before op k, all
 * chosen (model units; 0 without any). */
double hoff_ilp_rc_time(const hoff_ilp *m, int32_t k);
/* (v2) Adds coef * the time of the re-runs chosen before op k (they
 * lengthen window sigma_k) to the open row. */
void hoff_ilp_rc_len(const hoff_ilp *m, rowb *r, int32_t k, double coef);
/* (v2) Adds -B_t V_r to the open row for each recompute candidate r whose
 * tensor is off the device at instant w (a memory row). */
void hoff_ilp_rc_mem(const hoff_ilp *m, rowb *r, int32_t w);

/* ilp_model.c: the build */

/* "[lo, hi]" of the peak search into buf, for progress lines; hi
 * INT64_MAX reads "none found yet". Returns buf. */
const char *hoff_ilp_peak_range(char *buf, size_t n, int64_t lo, int64_t hi);
/* HOFF_ETIMEOUT, saying what does not fit, when GLPK's set-up of m cannot
 * end before the deadline of its build request; else HOFF_OK. */
hoff_status hoff_ilp_fits_time(const hoff_ilp *m, hoff_err *e);
/* rep->restriction: what the model m of g under o leaves out. */
void hoff_ilp_restriction(const hoff_graph *g, const hoff_ilp_opts *o,
			  const hoff_ilp *m, hoff_exact_report *rep);

/* ilp_prune.c: stage planning and pruning */

/* The instants [*w0, *w1] at which interval v may be off the device (n:
 * the graph's ops). */
void hoff_ilp_absent_range(const hoff_ilp_iv *v, int32_t n, int32_t *w0,
			   int32_t *w1);
/* The stage of instant w: -1 -> 0, 2k -> k, 2k - 1 -> k. */
int32_t hoff_ilp_stage_of(int32_t w);
/* q(w): the last boundary at or before instant w (-1: time 0). */
int32_t hoff_ilp_bound_of(int32_t w);
/* (12) Marks late[i] = 1 for each of the nall intervals all[] whose fetch
 * cannot fit on its crowded channel within the stall bound `most`;
 * slack is (n + 1) scratch. */
void hoff_ilp_crowded(const hoff_ilp *m, const hoff_ilp_iv *all, int32_t nall,
		      int64_t most, int64_t *slack, uint8_t *late);
/* Chooses the intervals of all[] kept and their allowed prefetch
 * boundaries at stride K into pl; the binaries that would take, or -1
 * when out of memory. */
int64_t hoff_ilp_make_plan(hoff_ilp *m, const hoff_ilp_iv *all, int32_t nall,
			   int32_t K, plan *pl);

/* ilp_rows.c: the columns of an interval and the constraint families;
 * the functions returning bool return false only when out of memory,
 * and those taking a rowb leave r->oom set instead */

/* Creates the columns of kept interval m->iv[i]: zs / zd when has_zs /
 * has_zd, R at the allowed boundaries P[0..nP), and the Q, Ys and Yf
 * columns with their maps (scratch: 2n + 8 entries). */
bool hoff_ilp_interval_cols(hoff_ilp *m, int32_t i, const int32_t *P,
			    int32_t nP, bool has_zs, bool has_zd,
			    int32_t *scratch);
/* Rows (1), (3) and (4) of interval i. */
void hoff_ilp_interval_rows(hoff_ilp *m, rowb *r, int32_t i);
/* Rows (2): one store per dirty segment, detaches only after it. */
void hoff_ilp_segment_rows(hoff_ilp *m, rowb *r);
/* Rows (14): a repeat graph's tier-homed state goes home at the end. */
void hoff_ilp_home_rows(hoff_ilp *m, rowb *r);
/* Frees what hoff_ilp_channel_plan allocated, and zeroes cp. */
void hoff_ilp_chan_plan_free(chan_plan *cp);
/* Groups the transfers by window and channel into cp (the caller frees
 * with hoff_ilp_chan_plan_free) and creates their U columns. */
bool hoff_ilp_channel_plan(hoff_ilp *m, chan_plan *cp);
/* Rows (5) channel capacity, (5b) work conservation and (6) stalls. */
void hoff_ilp_channel_rows(hoff_ilp *m, rowb *r, const chan_plan *cp);
/* Rows (5c): FIFO among the stores on a d2h channel. */
bool hoff_ilp_store_fifo_rows(hoff_ilp *m, rowb *r);
/* Rows (8): store time, the hull of Q_iw in {0, 1}. */
void hoff_ilp_time_rows(hoff_ilp *m, rowb *r);
/* Rows (9): fetch time, the same for fetches issued late. */
void hoff_ilp_fetch_time_rows(hoff_ilp *m, rowb *r);
/* Rows (10): issue deadlines of the START fetches under the stall bound
 * `most`. */
bool hoff_ilp_deadline_rows(hoff_ilp *m, rowb *r, int64_t most);
/* (11): fixes Q_iw = 0 (its upper bound) where the store cannot be done
 * by w within the stall bound `most`. */
void hoff_ilp_slow_stores(hoff_ilp *m, int64_t most);
/* (13) The fetch-count columns X_cq and O_c, into *out (caller frees)
 * and *nout. */
bool hoff_ilp_count_cols(hoff_ilp *m, count_col **out, int32_t *nout);
/* Rows (13) defining the nx count columns x[]. */
bool hoff_ilp_count_rows(hoff_ilp *m, rowb *r, const count_col *x, int32_t nx);
/* Rows (7): memory at each constrained instant. */
bool hoff_ilp_memory_rows(hoff_ilp *m, rowb *r);

/* Adds interval i's absence at instant w, -B_i (zd_i - R_i(q(w)) +
 * Q_i(w)) in model units, to the open row (a memory row's term; nothing
 * outside i's absent range). */
void hoff_ilp_absence_terms(const hoff_ilp *m, rowb *r, int32_t i, int32_t w);

/* ilp_recompute.c: (v2) the recompute candidates (--recompute) */

/* Every recompute candidate of g, by b then p then t (caller frees). */
hoff_status hoff_ilp_rc_list(const hoff_graph *g, hoff_ilp_rc **out,
			     int32_t *nout, hoff_err *e);
/* Keeps into m->rc those of all[0..nall) whose tensor is away at an
 * instant that can bind (every one without pruning), with m->rc_off;
 * false when out of memory. */
bool hoff_ilp_rc_keep(hoff_ilp *m, const hoff_ilp_rc *all, int32_t nall);
/* Creates the V columns of m's recompute candidates. */
bool hoff_ilp_rc_cols(hoff_ilp *m);
/* The rows of the recompute candidates: their tensor's own intervals in
 * the same gap excluded, the producer's inputs resident when it re-runs,
 * and memory while each re-run runs. */
void hoff_ilp_rc_rows(hoff_ilp *m, rowb *r);

/* ilp_solve.c: the solve and what a solution says */

/* Instant w is one the model can constrain: an op start, or the end of
 * op k - 1 where op k can stall. */
bool hoff_ilp_measurable(const hoff_ilp *m, int32_t w);

/* ilp_judge.c: judging decoded schedules on the simulator, and repair */

/* Simulates s (owned by *j from now on, even on error) on g and judges
 * it against m's objective into *j. HOFF_ENOMEM, or the simulator's
 * error. */
hoff_status hoff_ilp_judge(const hoff_ilp *m, const hoff_graph *g,
			   hoff_sched *s, judged *j, hoff_err *e);
/* a is better than b under m's objective (greedy.c's order): legal,
 * fitting, then makespan or peak. */
bool hoff_ilp_better(const hoff_ilp *m, const judged *a, const judged *b);
/* FIFO repair: hill climbing on the decisions pick (intervals of mv)
 * judged on the simulator against m, from *cur, until `until`; the moves
 * taken. On a simulator error *st is set and the climb stops. */
int hoff_ilp_repair(const hoff_ilp *m, const hoff_ilp *mv, const hoff_graph *g,
		    int32_t *pick, judged *cur, double until, hoff_status *st,
		    hoff_err *e);
/* The decisions pick emitted, judged into *sim (caller frees sim->s),
 * repaired until `until` and mapped back into m as x (ncols + 1); true
 * when x is a solution of m. */
bool hoff_ilp_repair_mapped(const hoff_graph *g, const hoff_ilp *m,
			    int32_t *pick, double until, double *x, judged *sim,
			    hoff_status *st, hoff_err *e);
/* A probe answered without branching: greedy under pm's cap, repaired,
 * mapped into pm as x; true when x is a solution of pm. The simulated
 * schedule is left in *sim either way (caller frees). */
bool hoff_ilp_probe_heuristic(const hoff_graph *g, const hoff_ilp *pm,
			      double until, double *x, judged *sim,
			      hoff_status *st, hoff_err *e);

/* peak_search.c: overhead mode's least peak */

/* Frees what the search owns (its best solution and that one's model
 * when not m, the peak list, the best probe schedule). */
void hoff_ilp_peak_search_free(peak_search *ps, const hoff_ilp *m);
/* A solver bound v on the peak (m's units) as bytes safely under it. */
double hoff_ilp_bytes_under(const hoff_ilp *m, double v);
/* The least model peak of the min-peak model m within the overhead
 * bound, by feasibility probes until `deadline` (start: a solution of m
 * to begin from, or NULL; bound_share: of the time after the heuristic
 * descent, the share for the bound phase). Fills *ps (caller frees with
 * hoff_ilp_peak_search_free). HOFF_ENOMEM, HOFF_ETIMEOUT (a probe's
 * build past the deadline: what *ps holds stands), or a solver error. */
hoff_status hoff_ilp_search_peak(const hoff_graph *g, hoff_ilp *m,
				 const double *start, double deadline,
				 double bound_share, peak_search *ps,
				 hoff_err *e);
/* --write-probe: writes to m->o.write_probe the probe that would close
 * the gap the search left, *asked its peak (0: none written; a probe
 * its build proves infeasible closes the gap in *ps instead). HOFF_EIO
 * naming the file, HOFF_ENOMEM. */
hoff_status hoff_ilp_write_probe(const hoff_graph *g, const hoff_ilp *m,
				 peak_search *ps, int64_t *asked, hoff_err *e);

#endif
