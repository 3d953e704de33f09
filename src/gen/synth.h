/* synth.h: generator of large synthetic, model-shaped graphs (transformer
 * decoding with a paged KV cache, or training with a backward pass and an
 * optimizer step) for tests and benchmarks, built through build.h.
 * Invariant: the same options give the same graph, tensor for tensor and
 * op for op; the graph has exactly opts.nops ops and passes
 * hoff_graph_finish(). */
#ifndef HOFF_SYNTH_H
#define HOFF_SYNTH_H

#include "graph.h"

struct hoff_sched;

#define HOFF_SYNTH_MAX_OPS    10000000
#define HOFF_SYNTH_MAX_LAYERS 65536
#define HOFF_SYNTH_MIN_TOKENS 256
#define HOFF_SYNTH_MAX_TOKENS 65536

typedef enum hoff_synth_shape {
	HOFF_SYNTH_INFER = 0, /* decode steps; per-layer KV blocks updated */
	HOFF_SYNTH_TRAIN,     /* forward, backward, optimizer step */
} hoff_synth_shape;

typedef struct hoff_synth_opts {
	int64_t nops; /* exact op count, 1 .. HOFF_SYNTH_MAX_OPS */
	hoff_synth_shape shape;
	int32_t layers;	      /* transformer blocks, 1 .. MAX_LAYERS */
	bool weights_on_host; /* weights homed on tier "host", else device */
	uint64_t seed;	      /* jitter of sizes and times */
	int32_t ntiers;	      /* 1: "host"; 2: "host" and "remote" */
	int64_t memory_bytes; /* device memory; 0: the no-offload peak
				 rounded up to 256 MiB */
	int32_t tokens;	      /* train: microbatch tokens before jitter,
				 HOFF_SYNTH_MIN_TOKENS .. MAX (default 4096) */
} hoff_synth_opts;

/* Defaults: 1000 ops, infer, 32 layers, weights on device, seed 1,
 * one tier, memory from the peak, 4096 tokens. */
hoff_synth_opts hoff_synth_defaults(void);

/* Builds the graph o describes into *out (finished; caller frees with
 * hoff_graph_free). HOFF_EUSAGE for options out of range, HOFF_ENOMEM;
 * *out is NULL then. */
hoff_status hoff_synth_build(const hoff_synth_opts *o, hoff_graph **out,
			     hoff_err *e);

#endif
