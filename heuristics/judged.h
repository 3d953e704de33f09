/* judged.h: a schedule with what the simulator said of it — the one type
 * greedy (greedy_*.c) and its refinement (refine.c) compare schedules by.
 * The simulator is the judge: a schedule counts as legal only when it
 * says so.
 * requires a finished graph; owns its schedule and its op starts. */
#ifndef HOFF_JUDGED_H
#define HOFF_JUDGED_H

#include "graph.h"
#include "sched.h"
#include "sim.h"

typedef struct hoff_judged {
	hoff_sched *s;	  /* owned; NULL: none */
	hoff_summary sum; /* simulated, the budget aside */
	bool legal;	  /* every rule but the budget's holds */
	bool fits;	  /* the caller's constraint holds (the caller's to
			     set: a cap, a makespan bound) */
	int64_t peak_ps;  /* the first instant at the peak */
	int64_t npeak;	  /* instants at the peak (with .peak) */
	int32_t peak_op;  /* the first op starting at or after the peak
			     (with .peak) */
	int64_t *start;	  /* (nops + 1) op starts, the last op's end last;
			     owned (with .starts), else NULL */
	char source[32];  /* the planner that made it ("greedy", "reactive") */
} hoff_judged;

/* What hoff_judge measures beyond the summary. */
typedef struct hoff_judge_opts {
	bool starts;	 /* keep each op's simulated start in j->start */
	bool peak;	 /* count the instants at the peak, find its op */
	hoff_sim_ws *ws; /* the simulator's buffers, or NULL */
} hoff_judge_opts;

/* Simulates s (taken: j owns it, or it is freed on failure) into *j,
 * named source, the budget aside; HOFF_ENOMEM or the simulator's error
 * in e. */
hoff_status hoff_judge(const hoff_graph *g, hoff_sched *s,
		       const hoff_judge_opts *o, const char *source,
		       hoff_judged *j, hoff_err *e);

/* Frees what j owns and zeroes it. */
void hoff_judged_free(hoff_judged *j);

#endif
