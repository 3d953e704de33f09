/* greedy.h: the greedy refinement (greedy.c), called by greedy_recompute.c's
 * hoff_plan_without_recompute (policy.c's way in). */
#ifndef HOFF_GREEDY_H
#define HOFF_GREEDY_H

#include "policy_opts.h"

/* Plans with greedy and the baselines as candidates; see policy.h's
 * hoff_policy_run for the contract. */
hoff_status hoff_greedy_run(const hoff_graph *g, const hoff_policy_opts *o,
			    hoff_sched **out, hoff_policy_report *rep,
			    hoff_err *e);

/* The baselines' judged plans of one graph (none, reactive, lookahead:1
 * and 2), kept from one greedy run for the next on the same graph
 * (hoff_policy_opts.memo): a run given an empty memo records its
 * baselines' plans there; a later run on that graph takes each plan it
 * finds instead of planning and simulating that baseline again. A
 * baseline's plan depends on the graph alone, so the runs' results are
 * the same with the memo or without. Not for two runs at once. */
typedef struct hoff_greedy_memo hoff_greedy_memo;

/* An empty memo (caller frees); NULL on OOM. */
hoff_greedy_memo *hoff_greedy_memo_new(void);

/* How many baselines' plans m keeps (judged or not), 0 to 4. */
int hoff_greedy_memo_plans(const hoff_greedy_memo *m);

/* Frees m and the plans it keeps; NULL is fine. */
void hoff_greedy_memo_free(hoff_greedy_memo *m);

#endif
