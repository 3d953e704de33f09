/* sched.h: a schedule — the graph's ops in order with cache steps
 * (prefetch, store, detach) between them — and the summary of FORMAT.md.
 * Invariant after hoff_sched_check(): every op appears exactly once, in
 * graph order, every id and tier in a step is known to the graph, and
 * every recompute step stands after its op's own step. */
#ifndef HOFF_SCHED_H
#define HOFF_SCHED_H

#include "graph.h"

typedef enum hoff_step_kind {
	HOFF_STEP_OP = 0,
	HOFF_STEP_PREFETCH,  /* tensor `id` from tier `tier` into the device */
	HOFF_STEP_STORE,     /* tensor `id` from the device to tier `tier` */
	HOFF_STEP_DETACH,    /* drop tensor `id`'s device copy */
	HOFF_STEP_RECOMPUTE, /* (v2) re-run op `id` on the compute stream */
	HOFF_STEP_DROP,	     /* (v2) free tensor `id` (rule 11) */
} hoff_step_kind;

typedef struct hoff_step {
	int32_t id;   /* op id for HOFF_STEP_OP and _RECOMPUTE, else tensor */
	int16_t tier; /* tier index for prefetch and store, else HOFF_NONE */
	uint8_t kind; /* hoff_step_kind */
} hoff_step;

/* FORMAT.md's summary; times in integer picoseconds. */
typedef struct hoff_summary {
	int64_t peak_bytes;
	int64_t makespan_ps;
	int64_t compute_ps;
	int64_t recompute_ps; /* (v2) sum of the recompute steps' durations */
	int64_t stall_ps;     /* makespan - compute - recompute */
	int64_t h2d_bytes;
	int64_t d2h_bytes;
} hoff_summary;

typedef struct hoff_sched {
	int32_t version; /* FORMAT version as read or to write: 1 or 2 */
	hoff_step *step; /* (nsteps) */
	int64_t nsteps;
	size_t cap;
	char *graph;          /* graph name; NULL when absent */
	char *policy;         /* NULL when absent */
	int64_t budget_bytes; /* HOFF_NONE when absent */
	bool has_summary;
	hoff_summary summary; /* as read or as computed */
} hoff_sched;

/* Returns an empty schedule (caller frees), NULL on OOM. */
hoff_sched *hoff_sched_new(void);
/* Frees s and all it owns; NULL is fine. */
void hoff_sched_free(hoff_sched *s);
/* Appends a step; HOFF_ENOMEM on failure. */
hoff_status hoff_sched_push(hoff_sched *s, hoff_step_kind kind, int32_t id,
			    int32_t tier);
/* True when a and b hold the same steps (field by field: a step's padding
 * is never compared). */
bool hoff_sched_same_steps(const hoff_sched *a, const hoff_sched *b);
/* (v2) Whether s has a recompute or drop step: writers then write
 * version 2, with recompute_s in the summary. */
bool hoff_sched_uses_v2(const hoff_sched *s);
/* Sets policy (copied); HOFF_ENOMEM on failure. */
hoff_status hoff_sched_set_policy(hoff_sched *s, const char *policy);

/* Checks the structure against g: every op exactly once in graph order,
 * ids in range. HOFF_EINPUT with "file: steps[i]: reason" in e. */
hoff_status hoff_sched_check(const hoff_sched *s, const hoff_graph *g,
			     const char *file, hoff_err *e);

#endif
