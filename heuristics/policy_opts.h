/* policy_opts.h: what every planner of heuristics/ takes and returns — the
 * policy kinds, their options and the report of a planned schedule —
 * shared by the dispatcher (policy.h), the baselines (baselines.h) and
 * greedy (greedy.h) without their including each other. */
#ifndef HOFF_POLICY_OPTS_H
#define HOFF_POLICY_OPTS_H

#include "graph.h"
#include "sched.h"

struct hoff_analysis;
struct hoff_greedy_memo;

typedef enum hoff_policy_kind {
	HOFF_POLICY_NONE = 0,  /* everything resident; tier-homed tensors
				  prefetched just before first use, kept */
	HOFF_POLICY_REACTIVE,  /* prefetch right before each use, evict right
				  after, no lookahead */
	HOFF_POLICY_LOOKAHEAD, /* per-layer prefetch N layers ahead */
	HOFF_POLICY_GREEDY,    /* cost-model refinement (greedy.c) */
	/* (v2) per-layer activation checkpointing (checkpoint.c) */
	HOFF_POLICY_CHECKPOINT,
	/* (v2) the same, with reactive's moves of tier-homed tensors */
	HOFF_POLICY_CHECKPOINT_REACTIVE,
} hoff_policy_kind;

typedef struct hoff_policy_opts {
	hoff_policy_kind kind;
	int32_t lookahead;	/* N for HOFF_POLICY_LOOKAHEAD */
	int64_t budget_bytes;	/* greedy: HOFF_NONE for the overhead mode */
	double max_overhead;	/* greedy without a budget: makespan at most
				   (1 + x) * lower_bound_s */
	hoff_progress progress; /* greedy: progress lines (fn NULL: none) */
	/* g's hoff_analyze(), passed along, or NULL (the default): the run
	 * analyses g itself */
	const struct hoff_analysis *analysis;
	/* (v2) also plan with recomputation (greedy_recompute.h); false
	 * (the default): plans as before, byte for byte */
	bool recompute;
	/* greedy: the baselines' plans kept between runs on one graph
	 * (greedy.h), or NULL (the default); unused with recompute */
	struct hoff_greedy_memo *memo;
	/* greedy without a budget: only a peak at or under this matters (the
	 * least another planner has found within the bound): the peak search
	 * tries no target over it, and past greedy's big-graph size no
	 * baseline is planned (greedy_portfolio.c); 0 (the default): any */
	int64_t peak_to_beat;
} hoff_policy_opts;

typedef struct hoff_policy_report {
	bool feasible;	     /* budget or overhead bound met */
	int64_t peak_bytes;  /* simulated */
	int64_t makespan_ps; /* simulated */
	int64_t peak_ps;     /* greedy: the first instant at the peak */
	int64_t lower_bound_ps;
	int64_t noffload_peak_bytes; /* the no-offload analysis peak */
	int64_t none_peak_bytes;     /* policy none's simulated peak, when the
				      * run simulated it; else HOFF_NONE */
	int64_t none_makespan_ps;    /* and its makespan (HOFF_NONE likewise) */
	int32_t iterations;	     /* greedy plans simulated */
	/* greedy: the least peak any schedule has, op floor_op's inputs,
	 * updates, outputs and workspace (FORMAT.md rule 1); over the
	 * device's memory, nothing fits it. 0 from the baselines. */
	int64_t floor_bytes;
	int32_t floor_op;
	/* greedy: the least peak of the plans it compared (the baselines'
	 * and its best), at any makespan, and which plan had it */
	int64_t least_peak_bytes;
	int64_t least_makespan_ps;
	char least_source[32];
	char source[32]; /* which candidate won ("greedy", "reactive") */
	char note[512];	 /* a line for the user ("" when none) */
} hoff_policy_report;

/* Default options: greedy, overhead 1%. */
hoff_policy_opts hoff_policy_defaults(void);

/* Parses "none", "reactive", "lookahead:N", "greedy", "checkpoint",
 * "checkpoint+reactive" into o->kind and o->lookahead; false when name is
 * not a policy. */
bool hoff_policy_parse(const char *name, hoff_policy_opts *o);

/* Writes the policy's name ("lookahead:2") into buf. */
void hoff_policy_name(const hoff_policy_opts *o, char *buf, size_t len);

#endif
