/* graph.h: the hoffopt IR. Ops and tensors live in flat arrays indexed by
 * int32 ids; every list (an op's inputs, a tensor's uses) is CSR: items
 * off[i] .. off[i+1]-1 of one shared array. String ids are interned once by
 * the reader; after it, nothing compares strings.
 * Invariant after hoff_graph_finish(): producer, uses, first/last use and
 * time_ps are consistent with the lists, and every input or update of op k
 * is a graph input or produced by an op before k. */
#ifndef HOFF_GRAPH_H
#define HOFF_GRAPH_H

#include "hoff.h"
#include "strmap.h"

#define HOFF_DEVICE (-1) /* a home or place meaning device memory */
#define HOFF_UNLIMITED (-1) /* a tier capacity that was not given */
#define HOFF_MAX_TIERS 64

typedef enum hoff_kind {
	HOFF_KIND_OTHER = 0,
	HOFF_KIND_WEIGHT,
	HOFF_KIND_ACTIVATION,
	HOFF_KIND_KV,
	HOFF_KIND_OPTIMIZER,
	HOFF_KIND_GRADIENT,
	HOFF_KIND_INPUT,
	HOFF_KIND_OUTPUT,
	HOFF_NKINDS
} hoff_kind;

/* Tensor flags: the semantics, then which optional fields were written. */
enum {
	HOFF_T_OUTPUT = 1 << 0,
	HOFF_T_PERSISTENT = 1 << 1,
	HOFF_T_OFFLOAD = 1 << 2,
	HOFF_T_HAS_KIND = 1 << 3,
	HOFF_T_HAS_HOME = 1 << 4,
	HOFF_T_HAS_OUTPUT = 1 << 5,
	HOFF_T_HAS_PERSISTENT = 1 << 6,
	HOFF_T_HAS_OFFLOAD = 1 << 7,
};

/* Op flags: which optional fields were written. */
enum {
	HOFF_O_HAS_TIME = 1 << 0,
	HOFF_O_HAS_FLOPS = 1 << 1,
	HOFF_O_HAS_BYTES_ACCESSED = 1 << 2,
	HOFF_O_HAS_WORKSPACE = 1 << 3,
	HOFF_O_HAS_LAYER = 1 << 4,
	HOFF_O_HAS_RECOMPUTABLE = 1 << 5, /* (v2) written in the file */
	HOFF_O_RECOMPUTABLE = 1 << 6,	  /* (v2) may be re-run (rule 10);
					     derived by hoff_graph_finish */
};

/* (v2) A duplex factor of 1 in FORMAT.md's integer form, F = ppm. */
#define HOFF_DUPLEX_ONE 1000000

typedef struct hoff_tier {
	const char *name;       /* interned */
	double h2d_Bps;         /* rate into the device */
	double d2h_Bps;         /* rate out of the device */
	double latency_s;       /* fixed cost of each transfer */
	int64_t capacity_bytes; /* HOFF_UNLIMITED when absent */
	bool has_latency;
	int64_t latency_ps; /* derived: ps(latency_s) */
	/* (v2) rule 3: while the other channel transfers, this one moves at
	 * this fraction of its rate; 1 when absent. */
	double h2d_duplex, d2h_duplex;
	bool has_h2d_duplex, has_d2h_duplex;
	int32_t h2d_duplex_ppm, d2h_duplex_ppm; /* F = floor(f * 1e6 + 0.5) */
} hoff_tier;

typedef struct hoff_device {
	const char *name; /* NULL when absent */
	int64_t memory_bytes;
	double flops_per_s;       /* 0 when absent */
	double mem_bandwidth_Bps; /* 0 when absent */
	double op_overhead_s;
	bool has_flops, has_mem_bw, has_overhead;
} hoff_device;

typedef struct hoff_tensor {
	const char *id; /* interned */
	int64_t bytes;  /* > 0 */
	int32_t home;   /* tier index or HOFF_DEVICE */
	uint8_t kind;   /* hoff_kind */
	uint8_t flags;  /* HOFF_T_* */
	/* derived by hoff_graph_finish(): */
	int32_t producer;  /* op id, HOFF_NONE for a graph input */
	int32_t first_use; /* first op reading or updating it, or HOFF_NONE */
	int32_t last_use;  /* last op reading or updating it, or HOFF_NONE */
} hoff_tensor;

typedef struct hoff_op {
	const char *id;   /* interned */
	const char *kind; /* free label, interned; NULL when absent */
	double time_s;    /* measured time when HOFF_O_HAS_TIME */
	double flops;
	double bytes_accessed;
	int64_t workspace_bytes;
	int64_t layer; /* when HOFF_O_HAS_LAYER */
	uint32_t flags;
	int64_t time_ps; /* derived: ps(op time) per FORMAT.md */
} hoff_op;

typedef struct hoff_graph {
	int32_t version; /* FORMAT version as read or to write: 1 or 2 */
	bool repeat;	 /* (v2) one iteration of a loop: rule 9's end state */
	bool has_repeat; /* (v2) `repeat` was written in the file */
	char *name;	 /* NULL when absent */
	char *meta; /* the meta object as compact JSON text; NULL when absent */
	hoff_device device;
	int32_t ntiers;
	hoff_tier *tier; /* (ntiers) */
	int32_t ntensors;
	hoff_tensor *tensor; /* (ntensors) */
	int32_t nops;
	hoff_op *op; /* (nops) */
	/* Op lists, CSR, duplicates removed, in the order written:
	 * in[in_off[k] .. in_off[k+1]) and so on. */
	int64_t *in_off, *upd_off, *out_off; /* (nops + 1) each */
	int32_t *in, *upd, *out;
	/* Derived: the ops that read or update tensor t, ascending,
	 * use[use_off[t] .. use_off[t+1]). */
	int64_t *use_off; /* (ntensors + 1) */
	int32_t *use;
	/* Interned names; lookups by name for readers of other files. */
	hoff_strmap tensor_ids, op_ids, tier_ids;
	hoff_strpool pool;
	/* Scratch used by hoff_graph_add_* while building. */
	size_t tensor_cap, op_cap, tier_cap, in_cap, upd_cap, out_cap;
	/* (mark_cap) 3 per tensor, one per hoff_use: 1 + the last op whose
	 * list holds it, so a repeat is found in O(1) (hoff_graph_op_use). */
	int32_t *mark;
	size_t mark_cap;
} hoff_graph;

/* Returns an empty graph (caller frees with hoff_graph_free), NULL on OOM. */
hoff_graph *hoff_graph_new(void);
/* Frees g and everything it owns; NULL is fine. */
void hoff_graph_free(hoff_graph *g);

/* Builders, used by the reader and the generators. Each returns the new
 * id, or HOFF_NONE with a message in e (duplicate id, OOM). Names are
 * copied. Op lists are appended with hoff_graph_op_use() right after
 * hoff_graph_add_op() and before the next op is added. */
int32_t hoff_graph_add_tier(hoff_graph *g, const char *name, hoff_err *e);
int32_t hoff_graph_add_tensor(hoff_graph *g, const char *id, int64_t bytes,
			      hoff_err *e);
int32_t hoff_graph_add_op(hoff_graph *g, const char *id, hoff_err *e);

/* Makes room for that many more tensors, ops, and entries of each op
 * list (uses: inputs, updates, outputs; may be NULL), so that a builder
 * that knows its counts adds them without regrowing; HOFF_ENOMEM. */
hoff_status hoff_graph_reserve(hoff_graph *g, size_t tensors, size_t ops,
			       const size_t *uses);

typedef enum hoff_use { HOFF_USE_IN, HOFF_USE_UPD, HOFF_USE_OUT } hoff_use;
/* Appends tensor t to list `use` of the last op added (skips repeats). */
hoff_status hoff_graph_op_use(hoff_graph *g, hoff_use use, int32_t t,
			      hoff_err *e);
/* Op k's list `use` (inputs, updates or outputs): its length, with its
 * items in *items, so a pass can walk all three lists in one loop. */
static inline int64_t hoff_op_list(const hoff_graph *g, int32_t k,
				   hoff_use use, const int32_t **items)
{
	const int64_t *off = use == HOFF_USE_IN	   ? g->in_off
			     : use == HOFF_USE_UPD ? g->upd_off
						   : g->out_off;
	*items = (use == HOFF_USE_IN	? g->in
		  : use == HOFF_USE_UPD ? g->upd
					: g->out) +
		 off[k];
	return off[k + 1] - off[k];
}

/* The first op after k that reads or updates tensor t, or HOFF_NONE
 * (a binary search of its use list). */
int32_t hoff_tensor_next_use(const hoff_graph *g, int32_t t, int32_t k);

/* Interns s in g's string pool; NULL on OOM. */
const char *hoff_graph_intern(hoff_graph *g, const char *s);

/* Applies the defaults of FORMAT.md that depend on other fields (a tensor's
 * output and persistent flags from its kind) to tensor t. */
void hoff_tensor_defaults(hoff_tensor *t);

/* Validates the graph against FORMAT.md and derives producer, uses,
 * first/last use and op times. `file` names the graph in messages.
 * HOFF_EINPUT with "file: field "id": reason" in e. */
hoff_status hoff_graph_finish(hoff_graph *g, const char *file, hoff_err *e);
/* After hoff_graph_finish, once homes are final: the tensors homed on each
 * tier fit its capacity, and one fetch of each plus all compute stays
 * below 2^62 ps. HOFF_EINPUT naming the file, the tier and both counts. */
hoff_status hoff_graph_check_tiers(const hoff_graph *g, const char *file,
				   hoff_err *e);

/* Lookups by name; HOFF_NONE when unknown. Tier "device" is HOFF_DEVICE
 * for hoff_graph_place(). */
int32_t hoff_graph_find_tensor(const hoff_graph *g, const char *name);
int32_t hoff_graph_find_op(const hoff_graph *g, const char *name);
int32_t hoff_graph_find_tier(const hoff_graph *g, const char *name);

/* Duration in ps of one transfer of tensor t over tier's h2d (to_device)
 * or d2h channel: ps(latency_s) + ps(bytes / rate). */
int64_t hoff_xfer_ps(const hoff_graph *g, int32_t tier, int64_t bytes,
		     bool to_device);

/* Name of kind k ("weight", ...); hoff_kind_parse returns -1 if unknown. */
const char *hoff_kind_name(int k);
int hoff_kind_parse(const char *s);

static inline bool hoff_tensor_persistent(const hoff_tensor *t)
{
	return (t->flags & HOFF_T_PERSISTENT) != 0;
}
static inline bool hoff_tensor_offload(const hoff_tensor *t)
{
	return (t->flags & HOFF_T_OFFLOAD) != 0;
}
/* (v2) Whether g uses anything of FORMAT version 2 (repeat, a duplex
 * factor, an op's recomputable other than its default): writers then
 * write version 2, as they do for a graph read as version 2. */
bool hoff_graph_uses_v2(const hoff_graph *g);

/* (v2) Whether op o may be re-run by a recompute step (rule 10). */
static inline bool hoff_op_recomputable(const hoff_op *o)
{
	return (o->flags & HOFF_O_RECOMPUTABLE) != 0;
}

#endif
