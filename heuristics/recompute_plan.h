/* recompute_plan.h: recompute plans (recompute.h) for a graph with
 * layers, by the rule of recompute_plan.c's header: drop the forward
 * activations the backward reads, keep the inputs of every s-th layer,
 * re-make the rest right before each layer's backward (two levels when
 * s > 1). requires a finished graph; allocates only what it owns. */
#ifndef HOFF_RECOMPUTE_PLAN_H
#define HOFF_RECOMPUTE_PLAN_H

#include "baselines.h"
#include "recompute.h"

typedef struct hoff_rc_layers {
	const hoff_graph *g;
	int32_t npair;	 /* layers with an F and a B run */
	int32_t *F;	 /* (4 npair) F start, end, B start, end; by F */
	uint8_t *fwd;	 /* (nops) a forward op */
	uint8_t *in_b;	 /* (nops) in some B run */
	uint8_t *dropok; /* (ntensors) dropped unless kept */
	int64_t *in_off; /* (npair + 1) CSR: each layer's inputs */
	int32_t *in;
	int64_t *upd_off; /* hoff_rc_updaters' */
	int32_t *upd_op;
	/* one plan's state */
	uint8_t *keep;	 /* (ntensors) kept: a segment's first inputs */
	uint8_t *vkeep;	 /* (ntensors) newest version stays */
	int32_t *vgroup; /* (ntensors) B that made the newest; 0: none */
	int32_t group;
	int32_t *outbuf; /* (ntensors) scratch */
} hoff_rc_layers;

/* Finds g's layers and what may be dropped; HOFF_ENOMEM. */
hoff_status hoff_rc_layers_init(hoff_rc_layers *L, const hoff_graph *g);
/* Frees what L owns. */
void hoff_rc_layers_free(hoff_rc_layers *L);
/* Appends to *P the plan with segments of seg >= 1 layers; HOFF_ENOMEM. */
hoff_status hoff_rc_layers_plan(hoff_rc_layers *L, int32_t seg,
				hoff_rc_plan *P);

#endif
