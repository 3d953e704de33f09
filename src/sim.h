/* sim.h: the machine model of FORMAT.md as a discrete-event simulator on
 * integer picoseconds. One compute stream, a FIFO h2d and d2h channel per
 * tier, cache steps issued when the previous op finishes.
 * requires a finished graph and a checked schedule; writes nothing to them. */
#ifndef HOFF_SIM_H
#define HOFF_SIM_H

#include "graph.h"
#include "sched.h"
#include "timeline.h"

typedef struct hoff_violation {
	int64_t step;   /* schedule step index, or HOFF_NONE for the end */
	int32_t tensor; /* tensor id, or HOFF_NONE */
	int32_t op;     /* op id when an op broke the rule, else HOFF_NONE */
	uint8_t rule;   /* rule number of FORMAT.md's machine model */
	char why[96];   /* short reason */
} hoff_violation;

/* Buffers that runs on one thread may share, one run at a time: the
 * state of every tensor (a million tensors' is 43 MB, which each run
 * would otherwise fault in afresh) and the transfer queue. */
typedef struct hoff_sim_ws hoff_sim_ws;
/* NULL on OOM. */
hoff_sim_ws *hoff_sim_ws_new(void);
void hoff_sim_ws_free(hoff_sim_ws *w);

typedef struct hoff_sim_opts {
	int64_t budget_bytes; /* device budget; HOFF_NONE: schedule's, else
				 device.memory_bytes */
	hoff_sim_ws *ws;      /* NULL, or buffers to reuse */
	bool timeline;        /* fill result.tl */
	int64_t snapshot_ps;  /* HOFF_NONE, or an instant whose resident
				 tensors to record in result.snap */
	bool op_times;        /* fill result.op_start_ps */
} hoff_sim_opts;

#define HOFF_SIM_MAXVIOL 1000

typedef struct hoff_sim_result {
	bool valid;
	hoff_summary summary;
	int64_t budget_bytes;  /* the budget applied */
	int64_t peak_ps;       /* first instant at which the peak was reached */
	int64_t nviol;         /* violations found (all counted) */
	hoff_violation *viol;  /* the first min(nviol, HOFF_SIM_MAXVIOL) */
	hoff_timeline tl;      /* when opts.timeline */
	int64_t *op_start_ps;  /* (nops + 1) when opts.op_times: each op's
				  start, then the last op's end */
	/* When opts.snapshot_ps: the blocks in use at that instant. */
	int32_t *snap;         /* (nsnap) tensor ids, ascending */
	int64_t nsnap;
	int64_t snap_workspace_bytes;
} hoff_sim_result;

/* Default options: budget from the schedule or graph, no timeline. */
hoff_sim_opts hoff_sim_defaults(void);

/* Runs s on g under the machine model into *r (caller frees with
 * hoff_sim_result_free). A schedule that breaks rules is not an error: it
 * returns HOFF_OK with r->valid false and the violations listed.
 * HOFF_ENOMEM, or HOFF_EINPUT when an instant reaches 2^62 ps; on an
 * error r owns nothing (freeing it is harmless). */
hoff_status hoff_sim_run(const hoff_graph *g, const hoff_sched *s,
			 const hoff_sim_opts *o, hoff_sim_result *r,
			 hoff_err *e);

/* Frees what r owns. */
void hoff_sim_result_free(hoff_sim_result *r);

/* Formats violation v as "steps[12] detach "w2": rule 7: reason". */
void hoff_violation_format(const hoff_graph *g, const hoff_sched *s,
			   const hoff_violation *v, char *buf, size_t len);

#endif
