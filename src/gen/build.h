/* build.h: the graph builder under both generators (models.c: the model
 * tables of `hoffopt gen`; synth.c: hoff-gen-synth). A generator streams
 * ops in execution order: hoff_build_op() starts one, then come its
 * inputs, updates and outputs, its cost, time and workspace; tensors are
 * created where they are first needed; ids are formatted printf-style.
 * Errors stick: the first failure stays in b->st (its message in b->e) and
 * every later call does nothing and returns HOFF_NONE, NULL or false, so a
 * generator checks once, at the end.
 * A limit cuts the stream: the op after the limit-th is refused (false,
 * b->st stays HOFF_OK) and the outputs hoff_build_out() gives the
 * limit-th op are of kind output, so any prefix is a whole graph.
 * Cost: amortised O(1) a call plus the length of its id. */
#ifndef HOFF_BUILD_H
#define HOFF_BUILD_H

#include "graph.h"

#if defined(__GNUC__)
#define HOFF_BUILD_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define HOFF_BUILD_PRINTF(f, a)
#endif

/* The "home" of a tensor an op produces: no home is written. */
#define HOFF_BUILD_PRODUCED (-2)

typedef struct hoff_build {
	hoff_graph *g; /* owned until hoff_build_take() */
	hoff_err *e;
	hoff_status st;	 /* first failure; HOFF_OK so far */
	const char *who; /* prefix of the builder's messages: "model" */
	int64_t limit;	 /* ops at most; 0: no limit */
	bool last;	 /* the current op is the limit-th */
	char id[192];	 /* id of the current op */
	char name[256];	 /* scratch: the tensor id being formatted */
} hoff_build;

/* A tier of a machine preset. */
typedef struct hoff_build_tier {
	const char *name;
	int64_t capacity_bytes; /* HOFF_UNLIMITED: none written */
	double h2d_Bps, d2h_Bps, latency_s;
	/* (v2) FORMAT.md rule 3: the fraction of a channel's rate while the
	 * other channel transfers; 0 or 1: none written (full duplex). */
	double h2d_duplex, d2h_duplex;
} hoff_build_tier;

/* Starts *b on an empty graph; who prefixes messages, limit caps the op
 * count (0: none). HOFF_ENOMEM with a message in e. */
hoff_status hoff_build_begin(hoff_build *b, const char *who, int64_t limit,
			     hoff_err *e);
/* Frees the graph unless it was taken. */
void hoff_build_free(hoff_build *b);
/* Hands the graph over (caller frees with hoff_graph_free). */
hoff_graph *hoff_build_take(hoff_build *b);
/* Checks the graph (hoff_graph_finish) once it is complete; b->st first. */
hoff_status hoff_build_finish(hoff_build *b);

/* Interns the formatted string in the graph's pool; NULL on failure. */
const char *hoff_build_intern(hoff_build *b, const char *fmt, ...)
	HOFF_BUILD_PRINTF(2, 3);
/* Sets the graph's name or its meta (compact JSON text) to the formatted
 * string. */
enum { HOFF_BUILD_NAME, HOFF_BUILD_META };
void hoff_build_set(hoff_build *b, int field, const char *fmt, ...)
	HOFF_BUILD_PRINTF(3, 4);

/* The device (overhead_s < 0: no op overhead written). */
void hoff_build_device(hoff_build *b, const char *name, int64_t memory_bytes,
		       double flops_per_s, double mem_bandwidth_Bps,
		       double overhead_s);
/* Adds tier t (its duplex factors too unless v1: a version-1 graph
 * cannot hold them); its id, or HOFF_NONE. */
int32_t hoff_build_tier_add(hoff_build *b, const hoff_build_tier *t, bool v1);

/* A new tensor of kind `kind` (hoff_kind) homed on `home` (a tier,
 * HOFF_DEVICE, or HOFF_BUILD_PRODUCED); its id, or HOFF_NONE. */
int32_t hoff_build_tensor(hoff_build *b, int64_t bytes, int kind, int32_t home,
			  const char *fmt, ...) HOFF_BUILD_PRINTF(5, 6);
/* Starts the next op, of label `kind` (interned) and layer `layer`; its id
 * is then in b->id. False on failure or when the limit is reached. */
bool hoff_build_op(hoff_build *b, const char *kind, int64_t layer,
		   const char *fmt, ...) HOFF_BUILD_PRINTF(4, 5);
/* Appends t (nothing for HOFF_NONE) to list u of the current op. */
void hoff_build_use(hoff_build *b, hoff_use u, int32_t t);
/* A new tensor the current op produces (of kind output when the op is the
 * limit-th); its id, or HOFF_NONE. */
int32_t hoff_build_out(hoff_build *b, int64_t bytes, int kind, const char *fmt,
		       ...) HOFF_BUILD_PRINTF(4, 5);
/* Roofline inputs of the current op: flops < 0 writes none; bytes < 0
 * writes the sum of its lists' bytes (an update counts twice), so it
 * comes after the op's last output. */
void hoff_build_cost(hoff_build *b, double flops, double bytes);
/* Measured time of the current op. */
void hoff_build_time(hoff_build *b, double time_s);
/* Workspace of the current op; none for bytes <= 0. */
void hoff_build_workspace(hoff_build *b, int64_t bytes);

/* The next number of a splitmix64 stream whose state is *s. */
uint64_t hoff_build_rand(uint64_t *s);

#endif
