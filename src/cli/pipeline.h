/* pipeline.h: what every planning command runs (hoffopt --greedy,
 * --policy, --exact): read the graph → resolve --budget → analyse → plan
 * (the planner takes that analysis) → simulate the plan as written →
 * stamp its summary. The command then judges the
 * plan against the budget, writes it (hoff_pipeline_write) and reports. */
#ifndef HOFF_PIPELINE_H
#define HOFF_PIPELINE_H

#include <stdbool.h>

#include "analysis.h"
#include "graph.h"
#include "sched.h"
#include "sim.h"

typedef struct hoff_pipeline hoff_pipeline;

/* A planner: sets p->s (caller frees) from p->g and p->budget_bytes. */
typedef hoff_status (*hoff_planner)(hoff_pipeline *p, void *ctx, hoff_err *e);

struct hoff_pipeline {
	/* what to run */
	const char *graph_file; /* '-' for stdin */
	const char *budget_arg; /* --budget as given; NULL without */
	const char *name;	/* the planner's name in messages */
	bool timeline;		/* keep the simulated timeline (--trace) */
	hoff_planner plan;
	void *ctx;
	/* what it gave */
	hoff_graph *g;
	hoff_analysis an;     /* g's, analysed once, passed to the planner */
	int64_t budget_bytes; /* --budget resolved, at most the device's
				 memory; HOFF_NONE without */
	bool budget_capped;   /* --budget was over the device's memory */
	int64_t budget;	      /* what the plan must meet: --budget, else
				 the device's memory (FORMAT.md rule 8) */
	hoff_sched *s;
	hoff_sim_result r; /* s simulated with no device budget (measured,
			      judged against `budget` by the command), so
			      rule 8 is a tier's here */
	double read_s, plan_s;
};

/* Runs the pipeline p describes up to the simulation; when it is valid,
 * s carries its summary and `budget` as budget_bytes. HOFF_OK with
 * p->r.valid false is a planner's bug (hoff_pipeline_violation says
 * what); any other status is the error in e. */
hoff_status hoff_pipeline_run(hoff_pipeline *p, hoff_err *e);

/* The first rule p's schedule breaks, as one line for a terminal. */
void hoff_pipeline_violation(const hoff_pipeline *p, char *buf, size_t n);

/* Writes the schedule to out and the trace to trace (NULL: not that),
 * as a pair (hoff_outfile_commit_pair): a failed or killed write never
 * leaves the new schedule beside the old trace. */
hoff_status hoff_pipeline_write(const hoff_pipeline *p, const char *out,
				const char *trace, hoff_err *e);

/* Frees what the pipeline made; the inputs stay the caller's. */
void hoff_pipeline_free(hoff_pipeline *p);

#endif
