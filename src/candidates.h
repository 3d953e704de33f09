/* candidates.h: the candidate intervals over which a tensor may leave the
 * device, one enumeration for greedy (heuristics/greedy_plan.c) and the exact
 * solver (solver/ilp_model.c), so the two plan over the same choices.
 *
 * A tensor's residency splits at its touches (its producer, its reads and
 * updates: g->use). Interval (t, a, b): t may be off the device after
 * touch a (-1: before op 0) until touch b needs it back (b = nops: a
 * tail, never fetched back). Which tensors get which intervals is
 * analysis.h's rule:
 *  - a tier-homed graph input some op uses starts with a START interval
 *    (-1, first use): it must be fetched anyway, only when is free;
 *  - a tensor hoff_tensor_movable() refuses gets nothing more;
 *  - each gap between consecutive touches of at least
 *    HOFF_CAND_MIN_GAP_OPS ops is an interval, and so is the tail after
 *    the last touch of a persistent tensor (a result no op reads, a
 *    loss, has its tail only);
 *  - a small tensor (under rule.small_below_bytes) keeps only the free
 *    move: a CLEAN tail, dropping a clean copy for good;
 *  - (v2) in a repeat graph, state (hoff_repeat_state) ends as it started
 *    (FORMAT.md rule 9): a device-homed one has no tail (it must end
 *    resident); a tier-homed one always has its tail, whatever its size
 *    and however late its last use, and every plan takes it
 *    (hoff_cand_goes_home): stored home when dirty, detached when clean.
 * An interval is CLEAN while the tensor holds its home's copy (a
 * tier-homed input not updated yet), else DIRTY. Its copy lives on its
 * home tier (tier-homed inputs) or on rule.store_tier.
 * Cost: O(uses) a tensor; allocates only what it returns. */
#ifndef HOFF_CANDIDATES_H
#define HOFF_CANDIDATES_H

#include "graph.h"

/* Ops a tensor must sit out between two touches for the gap to be a
 * candidate: b - a - 1 >= this. */
#define HOFF_CAND_MIN_GAP_OPS 1

typedef enum hoff_cand_kind {
	HOFF_CAND_START = 0, /* tier-homed input before its first use: it
				must be fetched; only the boundary is free */
	HOFF_CAND_CLEAN,     /* home copy valid: leaves by a detach */
	HOFF_CAND_DIRTY,     /* leaves by a store, or by a detach when an
				earlier interval of its dirty segment stored
				it */
} hoff_cand_kind;

typedef struct hoff_cand {
	int64_t bytes;
	int64_t fetch_ps; /* one fetch on its tier's h2d channel (latency
			     included); 0 for a tail */
	int64_t store_ps; /* one store on its tier's d2h channel; DIRTY
			     only, else 0 */
	int32_t t;
	int32_t a;    /* touch after which it leaves; -1: before op 0 */
	int32_t b;    /* touch that needs it back; nops: a tail */
	int32_t seg;  /* DIRTY: index of the first interval of its dirty
			 segment (touches with no update in between), else
			 its own index; in the list's numbering */
	int16_t tier; /* where its copy lives */
	uint8_t kind; /* hoff_cand_kind */
} hoff_cand;

/* What the enumeration takes from the caller. */
typedef struct hoff_cand_rule {
	int32_t store_tier;	   /* the tier a device-homed tensor's copy
				      goes to (the emitter's choice,
				      hoff_best_tier); HOFF_NONE: none */
	int64_t small_below_bytes; /* hoff_small_below(); 0: no tensor is
				      small (every gap of a movable one) */
} hoff_cand_rule;

/* (v2) Whether tensor t of g must end as it started because g repeats
 * (FORMAT.md rule 9): g->repeat, t persistent and made by no op. */
bool hoff_repeat_state(const hoff_graph *g, int32_t t);

/* (v2) Whether c is a repeat graph's tier-homed state going home after
 * its last use (its tail): a plan must take it. */
bool hoff_cand_goes_home(const hoff_graph *g, const hoff_cand *c);

/* Entries hoff_cand_tensor() may write for any one tensor of g: the
 * most touches of a tensor, plus two. */
size_t hoff_cand_room(const hoff_graph *g);

/* Writes tensor t's intervals into out (room for hoff_cand_room(g)), in
 * touch order, seg counted from out[0]; returns how many. */
int32_t hoff_cand_tensor(const hoff_graph *g, const hoff_cand_rule *r,
			 int32_t t, hoff_cand *out);

/* Every tensor's intervals, by tensor then touch, into *out (caller
 * frees) and *n. HOFF_ENOMEM. */
hoff_status hoff_cand_list(const hoff_graph *g, const hoff_cand_rule *r,
			   hoff_cand **out, size_t *n, hoff_err *e);

/* qsort comparator of hoff_cand by (a, t, b): a tensor's gaps are
 * disjoint, so the order is total. */
int hoff_cand_cmp_a_t(const void *x, const void *y);

#endif
