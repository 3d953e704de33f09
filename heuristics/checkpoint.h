/* checkpoint.h: the activation-checkpointing baseline (policy
 * `checkpoint`), what PyTorch users do today: per layer, keep the layer's
 * inputs, drop the rest of its forward activations after their last
 * forward use, and recompute the layer's forward just before its
 * backward (FORMAT.md v2 rules 10 and 11). Tier-homed tensors are handled
 * as policy none handles them, or (`checkpoint+reactive`) as reactive. */
#ifndef HOFF_CHECKPOINT_H
#define HOFF_CHECKPOINT_H

#include "policy_opts.h"

/* Plans `checkpoint` for g (caller frees *out); with reactive,
 * `checkpoint+reactive`: the tier-homed tensors fetched right before each
 * use (a recompute's too) and evicted right after, as policy reactive
 * does. A one-line note on what it did (layers checkpointed, layers
 * skipped and why, or "planned as none") goes into note. HOFF_ENOMEM. */
hoff_status hoff_checkpoint_plan(const hoff_graph *g, bool reactive,
				 hoff_sched **out, char *note, size_t note_len,
				 hoff_err *e);

/* The bytes, among tensors t[0 .. n), of activations (kind activation)
 * whose producer is recomputable: what re-running ops could free. */
int64_t hoff_recomputable_bytes(const hoff_graph *g, const int32_t *t,
				int64_t n);

/* A run of consecutive ops of one layer: ops [start, end). */
typedef struct hoff_layer_run {
	int64_t layer;
	int32_t start, end;
} hoff_layer_run;

/* g's maximal runs of consecutive ops with the same layer (ops without
 * one skipped), sorted by layer, then start, into *out (malloc'd, n + 1
 * entries at most nops + 1; the caller frees it), their count in *n.
 * HOFF_ENOMEM. */
hoff_status hoff_layer_runs(const hoff_graph *g, hoff_layer_run **out,
			    int32_t *n);

#endif
