/* refine.h: local search on the simulator at a schedule's peak (or, under
 * a budget, at its longest stall), called by greedy_finish.c. */
#ifndef HOFF_REFINE_H
#define HOFF_REFINE_H

#include "candidates.h"
#include "graph.h"
#include "sched.h"

typedef struct hoff_refine_goal {
	int64_t cap;	  /* budget mode: the peak must stay under it */
	int64_t bound_ps; /* overhead mode: the makespan bound; HOFF_NONE
			     in budget mode */
	int64_t work;	  /* schedule steps it may simulate, all moves */
	bool repair;	  /* overhead mode: the repair phase after */
} hoff_refine_goal;

typedef struct hoff_refine_result {
	hoff_sched *s;	  /* the refined schedule (caller frees), or NULL */
	hoff_summary sum; /* its simulated summary */
	int32_t moves;	  /* moves kept */
	int32_t tried;	  /* schedules simulated */
} hoff_refine_result;

/* Starting from start's decisions over the candidates iv (candidates.h;
 * sorted by a, then t; a START one is always taken), keeps the first
 * move that improves the objective: in overhead
 * mode (peak, instants at the peak, makespan) with the makespan within
 * the bound; in budget mode (makespan, peak) with the peak under the cap.
 * Moves at the peak's op k: a prefetch issued before k for an op after k
 * issued after k instead; a tensor resident across k and untouched by it
 * evicted, fetched back as late as its consumer allows or right after
 * k, alone or with its tensor's first gap evicted too (the store runs
 * early and the later eviction drops a clean copy). Under a budget, at
 * the op with the longest stall: its prefetches one boundary earlier,
 * prefetches ahead of them on the link issued after them. Repeats until
 * no move helps or the work is spent. Then, in overhead mode with
 * go->repair, on up to a quarter of the work again (at most what the
 * first phase spent): a move that lowers the peak but runs up to
 * bound/250 past the bound is repaired (at each op that waits, longest
 * first, a prefetch for it one boundary earlier, under the move's peak)
 * and kept when that brings it within the bound; only moves whose trials
 * could be repaired are tried again at the same op. Last, in the same
 * runs, the stream: every taken prefetch re-issued at once, earliest
 * deadline first on its tier's link, each as late as the transfers
 * after it allow on a timeline that spends the bound's slack before one
 * op near the end (an optimizer step streaming its state from the
 * host); when that improves, the repair phase's moves go on from it on
 * a quarter of the work again, the stream tried again after each move
 * kept. Deterministic.
 * r->s is the last schedule kept (never one the simulator rejected);
 * HOFF_ENOMEM in e. */
hoff_status hoff_refine(const hoff_graph *g, const hoff_cand *iv, int32_t niv,
			const hoff_sched *start, const hoff_refine_goal *go,
			hoff_refine_result *r, hoff_err *e);

#endif
