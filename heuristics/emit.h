/* emit.h: writes a legal schedule from a policy's decisions. It tracks, op
 * by op, which tensors are on the device and which tier holds a valid copy,
 * so an eviction becomes a detach when a clean copy exists and a store
 * otherwise, and a prefetch names the tier that holds the copy.
 * Invariant: every step it writes meets its preconditions in FORMAT.md's
 * machine model (the simulator still checks timing and memory). */
#ifndef HOFF_EMIT_H
#define HOFF_EMIT_H

#include "analysis.h"
#include "graph.h"
#include "sched.h"

/* Runs body with t set to each tensor op k of g reads or updates (the
 * baselines and checkpoint.c). */
#define HOFF_FOR_USES(g, k, t, body)                                      \
	for (int u_ = HOFF_USE_IN; u_ <= HOFF_USE_UPD; u_++) {            \
		const int32_t *lst_;                                      \
		int64_t n_ = hoff_op_list((g), (k), (hoff_use)u_, &lst_); \
		for (int64_t j_ = 0; j_ < n_; j_++) {                     \
			int32_t t = lst_[j_];                             \
			body;                                             \
		}                                                         \
	}

typedef struct hoff_emit {
	const hoff_graph *g;
	hoff_sched *s;
	int16_t *copy;  /* (ntensors) tier with a valid copy, or HOFF_NONE */
	uint8_t *on;    /* (ntensors) 1 while on the device (or arriving) */
	int32_t next_op;
	int16_t store_tier; /* tier for tensors homed on the device */
	hoff_status st;
	/* The schedule's floor so far; over once it passes limit_ps (set
	 * it after hoff_emit_init; INT64_MAX there, and then not kept), for
	 * a policy to stop. */
	hoff_floor floor;
	int64_t limit_ps;
	bool over;
	/* plan in full all the same when over comes past three quarters
	 * of the ops (over_at: the next op then), where the rest costs
	 * little */
	bool go_on;
	int32_t over_at;
	/* (v2) (ntensors) or NULL (the default): how many recompute steps
	 * still to be written read each tensor; a tensor some later
	 * recompute reads stays resident (rule 6). The caller owns it and
	 * counts the reads; hoff_emit_recompute counts them down. */
	uint32_t *held;
} hoff_emit;

/* Starts a schedule for g with policy name; HOFF_ENOMEM on failure. */
hoff_status hoff_emit_init(hoff_emit *m, const hoff_graph *g,
			   const char *policy);
/* Appends op k (the next in graph order) and applies its effects. */
void hoff_emit_op(hoff_emit *m, int32_t k);
/* Frees tensor t's device copy: detach when clean, else store. Returns
 * false (and writes nothing) when t is not on the device, may not move,
 * or no tier exists, and (v2) for a repeat graph's device-homed state
 * after its last use (it ends resident). */
bool hoff_emit_evict(hoff_emit *m, int32_t t);
/* Fetches t from the tier with its copy; false when t is on the device or
 * has no copy anywhere. */
bool hoff_emit_prefetch(hoff_emit *m, int32_t t);
/* (v2) Drops t (rule 11); false (and writes nothing) when t is not on
 * the device, may not move, or is persistent. */
bool hoff_emit_drop(hoff_emit *m, int32_t t);
/* (v2) Appends a recompute of op k (an op already written) and applies
 * its effects: its outputs resident, then rule 6's frees, counting down
 * m->held; a repeat graph's tier-homed state it read last goes home. */
void hoff_emit_recompute(hoff_emit *m, int32_t k);
/* (v2) In a repeat graph, after op k: evicts home each tier-homed state
 * tensor (candidates.h's hoff_repeat_state) op k used last, stored home
 * when dirty, detached when clean (FORMAT.md rule 9); else nothing. */
void hoff_emit_home(hoff_emit *m, int32_t k);
/* Finishes: returns the schedule (caller frees) or NULL with m->st set.
 * (v2) In a repeat graph, state a policy left away from home goes home
 * after the last op first. */
hoff_sched *hoff_emit_finish(hoff_emit *m);
/* Frees what m owns (after a failure). */
void hoff_emit_free(hoff_emit *m);

/* The tier a device-homed tensor is stored to: the one with the fastest
 * slower direction; HOFF_NONE when the machine has no tiers. */
int32_t hoff_best_tier(const hoff_graph *g);

#endif
