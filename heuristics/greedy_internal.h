/* greedy_internal.h: what greedy's stages share (greedy.c explains the
 * method; not for use outside heuristics/greedy*.c).
 *
 * The stages, one file each, called in one direction:
 *   greedy.c            the entry: overhead mode or budget mode
 *   greedy_budget.c     budget mode: fit under the budget, then the budget
 *                       fit (the overhead mode at a ladder of bounds)
 *   greedy_search.c     overhead mode: the peak search (gallop, bisection)
 *   greedy_finish.c     what both modes end with: the fit under a cap,
 *                       the refinement on the simulator, the report
 *   greedy_portfolio.c  what both modes start with: the baselines, the
 *                       plan's set-up and the first target, in parallel
 *   greedy_target.c     one target: plan, emit, simulate, compare
 *   greedy_select.c     one plan: selection, placement, emission
 *   greedy_plan.c       the plan's arrays: candidates, timeline, copies
 * Nothing here is thread-safe across one plan; two plans (greedy_plan_
 * clone) run on two threads. */
#ifndef HOFF_GREEDY_INTERNAL_H
#define HOFF_GREEDY_INTERNAL_H

#include "analysis.h"
#include "candidates.h"
#include "duplex_time.h"
#include "heap.h"
#include "judged.h"
#include "policy_opts.h"
#include "sim.h"

#define MAX_ROUNDS   4
#define GALLOP_SHIFT 6	     /* first step down: peak / 2^6 */
#define STOP_SHIFT   8	     /* the search stops at a bracket of peak / 2^8 */
#define REFINE_WORK  4000000 /* schedule steps the refinement simulates */
/* A graph past this many ops (or a schedule past as many steps) is too
 * big for the refinement, and takes the million-op shortcuts. */
#define BIG_OPS (REFINE_WORK / 16)
/* Schedule steps the budget fit (budget_fit.c) simulates, all variants */
#define BUDGET_FIT_WORK (4 * REFINE_WORK)
/* The most threads greedy_plan_init's enumeration splits the tensors
 * over (each share has its own counts). */
#define GREEDY_MAX_SHARES 8
/* The baselines of the portfolio (greedy_portfolio.c's table). */
#define GREEDY_NBASE 4

/* Where a plan put candidate i (greedy_select.c), beside pl->cand[i]
 * (candidates.h). */
typedef struct placed {
	int64_t evict_end; /* placed: when the bytes are free */
	int64_t slot;	   /* placed: prefetch start on its channel */
	int32_t pe0;   /* latest boundary whose prefetch hides the transfer */
	int32_t cs0;   /* nominal first covered op */
	int32_t pmin;  /* coverage the selection relies on: p >= pmin */
	int32_t cs, p; /* placed coverage [cs, p] */
	uint8_t deferred; /* times a round put it off (bounded) */
} placed;

/* A candidate as select_round's sweep meets it: its scores against the
 * timeline nominal_all saw, beside the index, so the sweep streams. */
typedef struct bent {
	double hid_key;	  /* bytes x time freed / transfer time */
	double slow_key;  /* bytes / transfer time */
	int32_t i;	  /* the interval */
	int32_t pe0, bm1; /* its pe0 and b - 1 */
} bent;

typedef struct plan {
	const hoff_graph *g;
	int32_t n;	 /* ops */
	int64_t *T;	 /* (n + 1) op starts the plan assumes; T[n]: end */
	int64_t *T0;	 /* (n + 1) nominal: op times summed, no stall */
	int64_t *M0;	 /* (n) memory during op k, nothing offloaded */
	int64_t *M;	 /* (n) memory during op k under the plan */
	int64_t *delta;	 /* (n + 1) scratch difference array */
	hoff_cand *cand; /* (ncand) by (a, t): store issue order */
	placed *pd;	 /* (ncand) where the plan put each */
	size_t ncand;
	int32_t *order; /* (ncand) scratch */
	int32_t *by_b;	/* (ncand) by (b desc, t desc): backward deadlines */
	uint8_t *selb;	/* (ncand) selected: 0 no, 1 hidden, 2 may stall */
	int32_t *bucket_off; /* (n + 2) scratch */
	bent *bucket;	  /* (ncand) candidates by nominal first covered op */
	int32_t *fill;	  /* (n + 2) scratch */
	int32_t *ext_off; /* (n + 3) scratch: selected, by first op after p */
	int32_t *ext;	  /* (ncand) scratch */
	hoff_heap hq[4];  /* select_round's heaps, kept for their memory */
	int32_t *must;	  /* (nmust) candidates every plan selects */
	size_t nmust;
	int32_t *deferred; /* (ndeferred) candidates with pd[].deferred > 0 */
	size_t ndeferred, deferred_cap;
	int64_t floor_bytes; /* largest memory no plan can avoid */
	int32_t floor_op;    /* the op that needs it (hoff_op_floor) */
	int64_t reach_bytes; /* a peak no plan against T0 can go under */
	bool T_real;	     /* T holds a simulated timeline, not T0 */
	/* (v2) some tier's channel slows while its other one transfers
	 * (greedy_duplex.c); dspan: (2 ncand + 2) scratch spans */
	bool duplex;
	hoff_busy *dspan;
	hoff_sim_ws *ws; /* the simulator's buffers, for this plan's runs */
	/* A plan of the peak search at scale stops at the first op a
	 * selection finds no candidate left for (select_round sets low):
	 * such a target has never been met on the million-op graphs, and
	 * the rest of its rounds cost a fit's time twice over. */
	bool quit_low, low;
} plan;

/* The objective: fit under cap first; then, with a bound, meet it with
 * the smallest peak; else (or when none meets it) be fastest. */
typedef struct goal {
	int64_t cap;   /* budget, or the device's memory */
	int64_t bound; /* makespan bound in ps, HOFF_NONE with a budget */
} goal;

/* The best pass of one target. */
typedef struct tried {
	int64_t peak, makespan;
	bool fits; /* some pass met the objective's constraint */
} tried;

/* The baselines' judged plans kept between runs on one graph (greedy.h's
 * hoff_greedy_memo). */
struct hoff_greedy_memo {
	const hoff_graph *g;	     /* whose plans; NULL: empty */
	hoff_judged j[GREEDY_NBASE]; /* .s NULL: none kept */
	/* plans not judged: their floor passed the recording run's bound */
	hoff_sched *over[GREEDY_NBASE];
};

/* One greedy run, from the portfolio to the report. */
typedef struct grun {
	const hoff_graph *g;
	const hoff_policy_opts *o;
	hoff_policy_report *rep;
	hoff_analysis own;
	const hoff_analysis *an; /* o->analysis, or &own */
	int64_t work;		 /* the refinement's, in simulated steps */
	plan pl;
	hoff_judged best;
	/* a copy of the least-peak baseline that misses go.bound only by
	 * its rounding (greedy_keep_edge), for the final selection */
	hoff_judged edge;
	goal go;
	int iters; /* schedules simulated */
	/* the portfolio's */
	hoff_policy_opts bopt[GREEDY_NBASE];
	bool wait[GREEDY_NBASE]; /* baselines not yet planned in full */
	int64_t hi, lo;		 /* the first target; the op floor */
	tried t0;		 /* what the first target reached */
	/* o->memo when this run records its baselines' plans in it (rec)
	 * or takes them from it (take, the memo of g); else NULL */
	struct hoff_greedy_memo *rec, *take;
} grun;

/* greedy_plan.c */
/* Sets *pl up for g with its ops aimed at a makespan of end_ps: the
 * candidates (sorted), the nominal timeline, the bounds; HOFF_ENOMEM. */
hoff_status greedy_plan_init(plan *pl, const hoff_graph *g, int64_t end_ps,
			     hoff_err *e);
/* Frees what greedy_plan_init or greedy_plan_clone allocated. */
void greedy_plan_free(plan *pl);
/* Copies *src into *dst (arrays duplicated); HOFF_ENOMEM leaves *dst
 * freeable. */
hoff_status greedy_plan_clone(plan *dst, const plan *src);
/* Resets selections to the mandatory ones. */
void greedy_plan_reset(plan *pl);
/* Nominal coverage of every candidate against pl->T, and the sweep's
 * buckets. */
void greedy_nominal_all(plan *pl);
/* Whether some tier of g has a duplex factor under 1. */
bool greedy_has_duplex(const hoff_graph *g);
/* First op index j >= from with T[j] >= t (n when none). */
int32_t greedy_first_at(const plan *pl, int32_t from, int64_t t);
/* Last boundary p (after op p, -1 before op 0) with T[p + 1] <= t. */
int32_t greedy_boundary_before(const plan *pl, int64_t t, int32_t hint);

/* greedy_select.c */
/* Whether the plan emits candidate i: it covers an op after placement,
 * or must run anyway (a START, a repeat graph's state going home). */
bool greedy_emits(const plan *pl, size_t i);
/* Plans for one memory target: selection and placement in *pl;
 * HOFF_ENOMEM on failure. */
hoff_status greedy_plan_for(plan *pl, int64_t target, bool stall);
/* The placed plan's largest memory while an op runs. */
int64_t greedy_peak_of(const plan *pl);
/* The placed plan as a schedule (caller frees); NULL with *st on OOM. */
hoff_sched *greedy_emit_plan(plan *pl, hoff_status *st);

/* greedy_duplex.c */
/* The placed stores' spans into pl->dspan, tier r's from off[r]. */
void greedy_store_spans(plan *pl, int32_t off[HOFF_MAX_TIERS + 1]);
/* The stores placed again, each slowed by the prefetches' spans ps[k]
 * (on tier pt[k], k < np, in placement order) on its tier. */
void greedy_restore(plan *pl, hoff_busy *ps, const int32_t *pt, int32_t np);

/* greedy_target.c */
/* The makespan bound of max_overhead x over lower bound lb_ps: the
 * largest t whose overhead as the reports compute it, (double)t / lb_ps
 * - 1, is at most x (so a plan whose reported overhead is x meets it);
 * saturated at HOFF_PS_LIMIT. */
int64_t greedy_bound_ps(double x, int64_t lb_ps);
/* Simulates s into c (which then owns s; freed on failure), budget
 * aside; with T, each op's simulated start too. */
hoff_status greedy_judge(const hoff_graph *g, hoff_sched *s, hoff_judged *c,
			 const char *source, int64_t *T, hoff_sim_ws *ws,
			 hoff_err *e);
/* Whether c beats b under go (what greedy_keep keeps). */
bool greedy_better(const hoff_judged *c, const hoff_judged *b, goal go);
/* Keeps the better of *best and c under go; frees the other. */
void greedy_keep(hoff_judged *best, hoff_judged *c, goal go);
/* Plans, emits and judges one target `passes` times; see the file. */
hoff_status greedy_try_target(plan *pl, int64_t target, bool stall, int passes,
			      bool prune, goal go, hoff_judged *best, tried *t,
			      int *iters, hoff_err *e);
/* The progress line of one target of the peak search. */
void greedy_say_target(const hoff_progress *p, int64_t target, const tried *t);

/* greedy_portfolio.c */
/* Starts run r: the analysis, the goal, the report's defaults, then the
 * baselines, the plan's set-up and (overhead mode) the first target, in
 * parallel, all kept in a fixed order. */
hoff_status greedy_portfolio(grun *r, const hoff_graph *g,
			     const hoff_policy_opts *o, int64_t work,
			     hoff_policy_report *rep, hoff_err *e);
/* Plans and judges the baselines that waited (r->wait), in parallel;
 * each competes with r->best and counts for the least peak. */
hoff_status greedy_resolve_baselines(grun *r, hoff_err *e);

/* greedy_search.c */
/* Overhead mode (o->budget_bytes HOFF_NONE): the least peak within the
 * bound; see hoff_greedy_run. */
hoff_status greedy_overhead_run(const hoff_graph *g, const hoff_policy_opts *o,
				int64_t work, hoff_sched **out,
				hoff_policy_report *rep, hoff_err *e);

/* greedy_finish.c */
/* A copy of s's steps and fields (caller frees); NULL on OOM. */
hoff_sched *greedy_sched_copy(const hoff_sched *s);
/* The fastest plan under r->go.cap, unless no plan can reach it. */
hoff_status greedy_fit_cap(grun *r, hoff_err *e);
/* Refines r->best on the simulator (refine.c); the result competes. */
hoff_status greedy_refine_best(grun *r, hoff_err *e);
/* Copies baseline c into r->edge when it meets the bound that the
 * reported overhead implies (greedy_bound_ps) but not go.bound, and has
 * a lower peak than the one held; HOFF_ENOMEM. */
hoff_status greedy_keep_edge(grun *r, const hoff_judged *c, hoff_err *e);
/* Fills the report from r->best (or r->edge where it is better under
 * the reported overhead's bound) and hands its schedule to *out. */
hoff_status greedy_report(grun *r, hoff_sched **out, hoff_err *e);
/* Frees what r holds. */
void greedy_close(grun *r);

/* greedy_budget.c */
/* Budget mode (o->budget_bytes set): the fastest plan under it. */
hoff_status greedy_budget_run(const hoff_graph *g, const hoff_policy_opts *o,
			      hoff_sched **out, hoff_policy_report *rep,
			      hoff_err *e);

#endif
