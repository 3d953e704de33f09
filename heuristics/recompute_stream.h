/* recompute_stream.h: the stream plan of an expanded graph (recompute.h),
 * a member of --recompute's portfolio (greedy_recompute.c): weights stay
 * on the device, the tier-homed state comes in as late as a target
 * makespan allows and goes home right after its last use, and the
 * activations that cross from the forward pass into the backward are
 * stored after their last forward read and fetched back in time
 * (recompute_stream.c has the rule). requires a finished graph. */
#ifndef HOFF_RECOMPUTE_STREAM_H
#define HOFF_RECOMPUTE_STREAM_H

#include "graph.h"
#include "sched.h"

/* The activations that cross: per tensor of the graph, the op after
 * which it is stored (a) and the op that reads it next (b), HOFF_NONE
 * for a tensor that stays; and by op, the tensors stored after it. */
typedef struct hoff_rc_spans {
	int32_t *a, *b;	 /* (ntensors) */
	int64_t *at_off; /* (nops + 1) CSR */
	int32_t *at;
} hoff_rc_spans;

/* Frees what sp owns. */
void hoff_rc_spans_free(hoff_rc_spans *sp);

/* Plans g for target makespan M by the stream rule: the best of its
 * passes (within bound first, then least peak, then makespan) into *out
 * with its simulated summary, or *out NULL when no pass was valid.
 * HOFF_ENOMEM. */
hoff_status hoff_rc_stream(const hoff_graph *g, const hoff_rc_spans *sp,
			   int64_t M, int64_t bound, hoff_sched **out,
			   hoff_summary *sum, hoff_err *e);

#endif
