/* budget_fit.h: planning for a memory budget on the simulator
 * (budget_fit.c), greedy's budget-fit stage: memory is the constraint,
 * time the objective. */
#ifndef HOFF_BUDGET_FIT_H
#define HOFF_BUDGET_FIT_H

#include "graph.h"
#include "sched.h"

typedef struct hoff_fit_result {
	hoff_sched *s;	  /* the plan (caller frees), or NULL */
	hoff_summary sum; /* its simulated summary */
	bool fits;	  /* s is valid and peaks within the budget */
	int32_t tried;	  /* schedules simulated */
	int32_t fences;	  /* waits for the store queue it placed */
} hoff_fit_result;

/* Plans g under budget_bytes: from every tensor resident, repairs the
 * first instant over the budget (a move that relieves it at least cost:
 * an eviction over a gap, a prefetch held back, or a wait for the queued
 * stores), then shortens the longest stall while the plan stays within
 * the budget, simulating at most work schedule steps. r->s is the best
 * schedule found (fitting or not; never one the simulator rejected);
 * HOFF_ENOMEM in e. Deterministic. */
hoff_status hoff_budget_fit(const hoff_graph *g, int64_t budget_bytes,
			    int64_t work, hoff_fit_result *r, hoff_err *e);

#endif
