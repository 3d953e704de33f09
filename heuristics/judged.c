/* judged.c: see judged.h. */
#include "judged.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

hoff_status hoff_judge(const hoff_graph *g, hoff_sched *s,
		       const hoff_judge_opts *o, const char *source,
		       hoff_judged *j, hoff_err *e)
{
	hoff_sim_opts so = hoff_sim_defaults();
	so.budget_bytes = INT64_MAX;
	so.ws = o->ws;
	so.op_times = o->starts || o->peak;
	so.timeline = o->peak;
	hoff_sim_result r;
	memset(j, 0, sizeof *j);
	hoff_status st = hoff_sim_run(g, s, &so, &r, e);
	if (st != HOFF_OK) {
		hoff_sched_free(s);
		return st;
	}
	j->s = s;
	j->sum = r.summary;
	j->peak_ps = r.peak_ps;
	j->legal = r.valid;
	snprintf(j->source, sizeof j->source, "%s", source);
	if (o->peak) {
		for (size_t k = 0; k < r.tl.nmem; k++)
			j->npeak += r.tl.mem[k].bytes == r.summary.peak_bytes;
		j->peak_op = g->nops;
		for (int32_t k = g->nops - 1;
		     k >= 0 && r.op_start_ps[k] >= r.peak_ps; k--)
			j->peak_op = k;
	}
	if (o->starts) {
		j->start = r.op_start_ps;
		r.op_start_ps = NULL;
	}
	hoff_sim_result_free(&r);
	return HOFF_OK;
}

void hoff_judged_free(hoff_judged *j)
{
	hoff_sched_free(j->s);
	free(j->start);
	memset(j, 0, sizeof *j);
}
