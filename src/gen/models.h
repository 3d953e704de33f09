/* models.h: graphs shaped like public LLMs at their real dimensions
 * (Llama-3-8B, Llama-3-70B, Mixtral-8x7B, DeepSeek-V3) for one prefill, one
 * decode step or one training step, on machine presets whose rates come
 * from datasheets and published measurements, built through build.h.
 * Invariant: the same options give the same graph, tensor for tensor and op
 * for op, and it passes hoff_graph_finish(). Every op has a layer: 0 for
 * the embedding, i for layer i, the depth built for the final norm and the
 * head. Ops and tensors of layer i have ids starting "layers.<i>.". */
#ifndef HOFF_MODELS_H
#define HOFF_MODELS_H

#include "build.h"
#include "graph.h"

typedef struct hoff_model_opts {
	const char *model;	 /* one of hoff_model_names() */
	const char *phase;	 /* one of hoff_model_phases() */
	int64_t seq;		 /* tokens a sequence (prefill, train) or tokens
				    already cached (decode), 1 .. 2^24 */
	int64_t batch;		 /* sequences, 1 .. 2^16; batch * seq <= 2^28 */
	int32_t layers;		 /* 0: the model's full depth; else its first
				    `layers` layers */
	const char *machine;	 /* one of hoff_machine_names() */
	uint64_t seed;		 /* MoE routing */
	int64_t kv_block_tokens; /* tokens a KV block, >= 1 */
	const char *weights;	 /* home of weights: NULL or "auto" (device when
				    they fit, see models.c), "device", "host" */
	const char *kv;		 /* KV cache (prefill, decode): NULL or "auto"
				    (blocks on the device, moved to the first
				    tier when they do not fit), "device", or
				    "host": one block a layer homed on the first
				    tier, updated whole by the attention core */
	const char *optimizer_step; /* train: NULL or "end" (every Adam op
				after the backward) or "in-backward" (each
				group's Adam op right after the backward op
				that finalises its last gradient) */
	const char *optimizer_home; /* train: Adam state on NULL or "host"
				(the first tier with room) or "device" */
	int32_t version; /* FORMAT version: 2 (`gen`'s default): repeat for
			    train and decode, the preset's duplex factors;
			    1: neither, the graph gen wrote before v2 */
} hoff_model_opts;

/* Defaults: llama3-8b, decode, seq 4096, batch 1, full depth, h100-pcie5,
 * seed 1, KV blocks of 2048 tokens, weights and KV "auto", optimizer step
 * at the end, optimizer state on the host, version 1 (callers that plan
 * the graph keep the graphs they had; `gen` asks for 2). */
hoff_model_opts hoff_model_defaults(void);

/* Builds the graph o describes into *out (finished; caller frees with
 * hoff_graph_free). HOFF_EUSAGE for an unknown name or a value out of range,
 * or when what must live off the device exceeds the machine's tiers;
 * HOFF_ENOMEM. *out is NULL on failure. */
hoff_status hoff_model_build(const hoff_model_opts *o, hoff_graph **out,
			     hoff_err *e);

/* NULL-terminated static lists of the names the options accept. */
const char *const *hoff_model_names(void);
const char *const *hoff_model_phases(void);
const char *const *hoff_machine_names(void);

/* Parameters of the full model per its public configuration (the sum of
 * weight bytes / 2 of a full-depth graph); -1 for an unknown model. */
int64_t hoff_model_param_count(const char *model);
/* Full depth of the model; -1 for an unknown model. */
int32_t hoff_model_depth(const char *model);

/* A machine preset's figures (for listings). */
typedef struct hoff_machine_info {
	const char *device; /* the device's name */
	int64_t memory_bytes;
	double flops_per_s, mem_bandwidth_Bps;
	int ntiers;
	hoff_build_tier tier[2];
} hoff_machine_info;

/* Fills *m with the preset `name`; false for an unknown name. */
bool hoff_machine_preset(const char *name, hoff_machine_info *m);

#endif
