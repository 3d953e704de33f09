/* analysis.h: what a graph costs before any offloading — compute time,
 * FORMAT.md's lower bound, bytes by kind, lifetimes, and the no-offload
 * schedule (every tensor resident while live, tier-homed tensors fetched at
 * time 0) whose simulation gives the no-offload memory timeline.
 * requires a finished graph; allocates only what it returns. */
#ifndef HOFF_ANALYSIS_H
#define HOFF_ANALYSIS_H

#include "graph.h"
#include "sched.h"

typedef struct hoff_analysis {
	int64_t compute_ps;     /* sum of op durations */
	int64_t lower_bound_ps; /* FORMAT.md's lower_bound_s, in ps */
	int32_t lb_op;          /* op k that sets the bound, HOFF_NONE when it
				   is the compute time */
	int32_t lb_tier;        /* and its tier */
	bool lb_store;		/* (v2) set by the repeat term: compute up to
				   lb_op, then stores back to lb_tier */
	/* (v2) In a repeat graph, the largest repeat term P + W of
	 * FORMAT.md's lower_bound_s (0 otherwise), its op and tier. */
	int64_t repeat_bound_ps;
	int32_t rb_op, rb_tier;
	int64_t bytes_by_kind[HOFF_NKINDS];
	int32_t count_by_kind[HOFF_NKINDS];
	int64_t total_bytes;
	int64_t tier_homed_bytes; /* graph inputs homed on a tier */
	int32_t nunused;          /* tensors no op reads, updates or writes */
	/* Closed-form no-offload peak (exact when every op lasts > 0 ps):
	 * the largest of memory at time 0 and, for each op, memory while it
	 * runs. Recomputed independently of the simulator. */
	int64_t closed_peak_bytes;
	int32_t closed_peak_op; /* HOFF_NONE: at time 0 */
} hoff_analysis;

/* Memory while each op runs with nothing offloaded (the closed form
 * above): during[k] for k < nops, caller-sized (nops), or NULL. Returns
 * the no-offload schedule's peak as the simulator measures it. */
int64_t hoff_analysis_profile(const hoff_graph *g, int64_t *during);

/* Fills *a for g. HOFF_ENOMEM on failure. */
hoff_status hoff_analyze(const hoff_graph *g, hoff_analysis *a, hoff_err *e);

/* Points *an at the analysis of g a pass works from: given, when not
 * NULL (the caller's hoff_analyze of this g, passed along so that one
 * analysis serves the whole pipeline), else *own, filled here.
 * HOFF_ENOMEM as hoff_analyze. */
hoff_status hoff_analysis_use(const hoff_graph *g, const hoff_analysis *given,
			      hoff_analysis *own, const hoff_analysis **an,
			      hoff_err *e);

/* Lifetime of tensor t in ops: from its producer (or op 0 for a graph
 * input) to its last use; 0 when no op touches it. */
int32_t hoff_tensor_lifetime(const hoff_graph *g, int32_t t);

/* Candidate selection, one rule for greedy and the exact solver (whose
 * intervals candidates.h enumerates, once for both). A
 * tensor may move when its offload is true and it is not short-lived
 * (alive for HOFF_SHORT_LIVED_OPS ops or fewer, unless persistent). A
 * small one, under the largest memory while an op runs with nothing
 * offloaded (hoff_analysis_profile's during[]) / 2^HOFF_SMALL_SHIFT,
 * takes only the free move: dropping a clean copy after its last use;
 * any other move saves under 0.025% of that peak for a transfer's
 * latency, and its bytes would make the exact peak search split hairs. */
#define HOFF_SHORT_LIVED_OPS 2
#define HOFF_SMALL_SHIFT 12
bool hoff_tensor_movable(const hoff_graph *g, int32_t t);
/* The bytes under which a tensor is small: the largest during[k] >>
 * HOFF_SMALL_SHIFT. during: hoff_analysis_profile's, or NULL to compute
 * it here (-1 when out of memory). */
int64_t hoff_small_below(const hoff_graph *g, const int64_t *during);

/* Builds the no-offload schedule: a prefetch from its home of every
 * tier-homed graph input some op uses (in id order), then every op.
 * Caller frees; NULL on OOM. */
hoff_sched *hoff_sched_noffload(const hoff_graph *g);

/* The least makespan a schedule can have, step by step: its compute, or
 * the longest any one channel is busy with its transfers (FORMAT.md: a
 * channel serves one transfer at a time, and the makespan waits for the
 * last). Zero it, then add each step with hoff_floor_step, which returns
 * the sum the step added to (saturating at INT64_MAX; 0 for a detach or
 * a drop; a recompute adds to compute):
 * once one passes a makespan, no schedule with these steps meets it. */
typedef struct hoff_floor {
	int64_t compute_ps;
	int64_t busy_ps[2 * HOFF_MAX_TIERS]; /* h2d of tier i at 2i, d2h 2i+1 */
} hoff_floor;
int64_t hoff_floor_step(hoff_floor *f, const hoff_graph *g,
			const hoff_step *st);

/* The least peak any schedule has: while op k runs, its inputs, updates
 * and outputs are resident and its workspace allocated (FORMAT.md's rule
 * 1); a tensor both read and updated counts once. *floor_b gets the
 * largest over the ops, *op the first op that needs it. HOFF_ENOMEM. */
hoff_status hoff_op_floor(const hoff_graph *g, int64_t *floor_b, int32_t *op,
			  hoff_err *e);

#endif
