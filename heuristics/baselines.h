/* baselines.h: the runtime offloaders hoffopt compares against (none,
 * reactive, lookahead:N; baselines.c), which greedy also runs as
 * candidates of its portfolio. */
#ifndef HOFF_BASELINES_H
#define HOFF_BASELINES_H

#include "policy_opts.h"

/* Plans o->kind (a baseline, not greedy) for g; caller frees *out. */
hoff_status hoff_baseline_plan(const hoff_graph *g, const hoff_policy_opts *o,
			       hoff_sched **out, hoff_err *e);

/* As hoff_baseline_plan, but gives up as soon as the schedule's floor
 * (hoff_floor_step) passes limit_ps, a makespan it then cannot meet:
 * *out is NULL and *over true. */
hoff_status hoff_baseline_plan_within(const hoff_graph *g,
				      const hoff_policy_opts *o,
				      int64_t limit_ps, hoff_sched **out,
				      bool *over, hoff_err *e);

/* As hoff_baseline_plan_within; with whole, a plan whose floor passes
 * limit_ps past three quarters of the ops goes on to the end all the
 * same (*out set, *over true: where hoff_baseline_plan_within would have
 * stopped). */
hoff_status hoff_baseline_plan_over(const hoff_graph *g,
				    const hoff_policy_opts *o, int64_t limit_ps,
				    bool whole, hoff_sched **out, bool *over,
				    hoff_err *e);

/* The layer of op k: its `layer` field, else the N of an id prefix
 * "layers.N." (or "layer.N.", "h.N.", "blocks.N."), else HOFF_NONE. */
int64_t hoff_op_layer(const hoff_graph *g, int32_t k);

#endif
