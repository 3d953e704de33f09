/* budget_plan.h: the budget fit's plan and its primitives (internal to
 * budget_fit.c and budget_plan.c; see budget_fit.c for the method). A
 * plan is decisions over the candidate intervals (pick, sat, fence),
 * emitted as a schedule and judged by the simulator into a look; the
 * moves, the repairs at an instant over the budget, and the set-up of a
 * fit live in budget_plan.c; the phases that use them, in budget_fit.c,
 * which calls into budget_plan.c and never the other way. */
#ifndef HOFF_BUDGET_PLAN_H
#define HOFF_BUDGET_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "candidates.h"
#include "emit.h"
#include "sim.h"

#define OFF	       (-2) /* a pick: the interval is not taken */
#define NEVICT	       5    /* eviction moves tried per repair */
#define NHOLD	       3    /* hold-back moves tried per repair */
#define NVARIANTS      8    /* plans from other choices of repair, best kept */
#define NSWAP	       2    /* stores swapped out per stall */
#define NHOLD_STALL    4    /* hold-back moves tried per stall */
#define NMOVES	       (2 + 4 * NEVICT + NHOLD)
#define EXCHANGE_TRIES 48 /* simulations an exchange's repairs may spend */
#define HOLD_BACK      16 /* boundaries before k's prefetch a hold-back looks */
#define WAIT_BACK      16 /* ops before k a wait for k may go */
#define WAIT_SMALL     1024 /* a wait's operand: at most budget / this */
#define NARRAYS	       23   /* fit's per-interval and per-op arrays */

/* A plan as the simulator judged it. */
typedef struct look {
	hoff_sched *s;
	hoff_summary sum;
	int64_t *start;	    /* (nops + 1) op starts, last: the last end */
	int64_t *opmem;	    /* (nops) the most memory while op k runs */
	int64_t over_bytes; /* over the budget at the first instant over */
	int64_t over_ps;    /* that instant */
	int32_t over_op;    /* first op starting at or after that instant;
			       nops + 1 when it fits */
	bool legal, fits;
} look;

/* One change to the decisions: interval i's pick to p (i HOFF_NONE:
 * none), and the wait before op fk set to fv (fk HOFF_NONE: none). */
typedef struct move {
	int32_t i, p;
	int32_t fk;
	uint8_t fv;
} move;

/* A plan's decisions, saved to go back to. */
typedef struct saved {
	int32_t *pick, *sat; /* (niv) */
	uint8_t *fence;	     /* (nops + 1) */
	int32_t changed;
} saved;

/* One fit in progress: the graph, the budget, the intervals, the
 * decisions and their scratch, the simulator's workspace, the work
 * spent and the variant's choices. */
typedef struct fit {
	const hoff_graph *g;
	int32_t n;
	int64_t budget;
	hoff_cand *iv; /* (niv) by (a, t) */
	int32_t niv;
	int32_t *pick, *trial;	 /* (niv) */
	int32_t *npick;		 /* (niv) scratch: the stream's picks */
	int64_t *mem;		 /* (nops) scratch: the stream's memory */
	saved xs, ss, ts;	 /* exchange's, swap_out's, and the
				    stream's and wait_less's (which never
				    nest) */
	uint8_t *fence, *tfence; /* (nops + 1) a wait before op k */
	int32_t *sat;		 /* (niv) where a taken interval's eviction
				    is issued: 2q at boundary q before its
				    wait, 2q + 1 after it (from 2a, the
				    default, to 2 (pick - 1) + 1) */
	int32_t *ev, *evq;	 /* (niv) scratch: evictions by boundary */
	int32_t *wl, *wq;	 /* (niv) scratch: wait_less's stores */
	int32_t *pf;		 /* (niv) scratch: prefetches by issue */
	int32_t *b_off, *by_b;	 /* the intervals by consumer b */
	int32_t *by_size;	 /* (niv) by bytes, largest first */
	const int32_t *key;	 /* the picks pf is sorted by */
	uint8_t *waitable;	 /* (nops) op k has a small operand that a
				    wait before it may store and fetch */
	hoff_sim_ws *ws;
	int64_t work, limit; /* steps simulated, and the most allowed */
	int32_t changed;     /* the earliest boundary a kept move changed */
	bool by_cost;	     /* repairs that get past k: the faster first */
	bool future;	     /* evictions scored on the excess to come */
	bool timed;	     /* evictions scored by the time they free
				their bytes, not by ops */
	int32_t tabu;	     /* an interval repairs leave alone (HOFF_NONE) */
	int32_t tried;
	hoff_err *e;
} fit;

/* Interval indices by f->key, then boundary b, then start t (hoff_sort_ctx
 * with the fit as context). */
int bf_by_pick(const void *x, const void *y, void *ctx);

/* Interval indices by f->key, then index (context: the fit). */
int bf_by_key(const void *x, const void *y, void *ctx);

/* Where taken interval i leaves under picks pick (2q: at boundary q
 * before its wait, 2q + 1: after it): f->sat[i] within [2a, 2 (pick[i] -
 * 1) + 1] (it is away for one op at least). */
int32_t bf_leave_at(const fit *f, const int32_t *pick, int32_t i);

/* The boundary of half-boundary position h (leave_at's). */
int32_t bf_boundary_of(int32_t h);

/* The schedule of decisions pick and waits fence; NULL on OOM. At each
 * boundary: the evictions, the prefetches by issue (earliest consumer
 * first), then the wait for the next op. */
hoff_sched *bf_emit(fit *f, const int32_t *pick, const uint8_t *fence);

/* Frees a look's schedule and arrays. */
void bf_look_free(look *l);

/* Simulates s (taken) into *l; HOFF_ENOMEM or the simulator's error. */
hoff_status bf_judge(fit *f, hoff_sched *s, look *l);

/* Phase 1's order: fits, then the first instant over the budget later,
 * then less over there, then faster. */
bool bf_closer(const look *a, const look *b);

/* Among the repairs at op k: closer; with f->by_cost, of two that both
 * get past k, the bf_faster (the least cost in stall). */
bool bf_cheaper(const fit *f, const look *a, const look *b, int32_t k);

/* Phase 2's order: fits, then faster, then a lower peak. */
bool bf_faster(const look *a, const look *b);

/* The plan with move mv applied, emitted and judged into *l. */
hoff_status bf_try_move(fit *f, move mv, look *l);

void bf_apply(fit *f, move mv);

/* Saves f's decisions into *s. */
void bf_save(const fit *f, saved *s);

/* Puts back the decisions saved in *s. */
void bf_restore(fit *f, const saved *s);

/* *l in *cur's place when it fits and is bf_faster (1), else freed (0). */
int bf_take_faster(look *l, look *cur);

/* The op a wait for op k goes before: the latest of the WAIT_BACK ops up
 * to k with a small operand to store and fetch back (a wait's operand
 * counts twice while its store is queued); HOFF_NONE when none. */
int32_t bf_wait_op(const fit *f, int32_t k);

/* The repair moves at cur's first instant over the budget, at op k:
 * into mv, returns how many. Over at k's start, a wait before k lets the
 * queued stores free their bytes first; over at the boundary before it
 * (prefetches issued there), a wait before op k - 1. */
int bf_repairs(const fit *f, const look *cur, int32_t k, move *mv);

/* Allocates f's arrays and the candidates; HOFF_ENOMEM. */
hoff_status bf_fit_init(fit *f, const hoff_graph *g, int64_t budget,
			int64_t work, hoff_err *e);

void bf_fit_free(fit *f);

#endif
