/* bruteforce.h: every legal schedule of the exact scheduler's decision
 * space on a tiny graph, simulated one by one — the reference the ILP is
 * tested against. For every candidate interval (solver/ilp.h, unpruned):
 * not used, or evicted right after touch a with its prefetch issued at
 * each boundary in [lo, b - 1] (a tail: evicted or not); START intervals
 * take every boundary. Each combination is written by hoff_ilp_emit (the
 * decoder's own emitter and step order) and simulated on FORMAT.md's
 * machine model; the best under the objective is kept.
 * Test-only code: #included by test_ilp.c, never linked elsewhere. */
#ifndef HOFF_BRUTEFORCE_H
#define HOFF_BRUTEFORCE_H

#include <stdbool.h>
#include <stdint.h>

#include "graph.h"
#include "sched.h"

typedef struct bf_result {
	bool found;         /* some schedule met the constraint */
	double obj;         /* best: stall ps (budget mode) or peak bytes */
	hoff_summary sum;   /* its simulation */
	int64_t combos;     /* schedules simulated */
	int32_t pick[64];   /* the best decisions (first 64 intervals) */
} bf_result;

/* Combinations the enumeration would simulate (capped at cap + 1). */
int64_t bf_count(const hoff_graph *g, int64_t cap);

/* With budget != HOFF_NONE: least stall whose peak fits the budget;
 * else least peak whose makespan is at most
 * floor((1 + max_overhead) * lower_bound) under device memory. */
void bf_solve(const hoff_graph *g, int64_t budget, double max_overhead,
	      bf_result *out);

#endif
