/* pipeline.c: read → budget → plan → simulate → stamp (pipeline.h). */
#include "pipeline.h"

#include <stdio.h>

#include "cli.h"
#include "fileio.h"
#include "graph_json.h"
#include "sched_json.h"
#include "trace_json.h"

hoff_status hoff_pipeline_run(hoff_pipeline *p, hoff_err *e)
{
	double t0 = hoff_now_s();
	p->budget_bytes = HOFF_NONE;
	hoff_status st = hoff_graph_read(p->graph_file, &p->g, e);
	if (st == HOFF_OK)
		st = hoff_cli_plan_budget(p->g, p->budget_arg, &p->budget_bytes,
					  &p->budget_capped, e);
	double t1 = hoff_now_s();
	p->read_s = t1 - t0;
	if (st != HOFF_OK)
		return st;
	p->budget = p->budget_bytes != HOFF_NONE ? p->budget_bytes
						 : p->g->device.memory_bytes;
	st = hoff_analyze(p->g, &p->an, e);
	if (st == HOFF_OK)
		st = p->plan(p, p->ctx, e);
	p->plan_s = hoff_now_s() - t1;
	if (st == HOFF_OK && !p->s)
		st = hoff_seterr(e, HOFF_EINTERNAL,
				 "%s: no legal schedule found (a bug)",
				 p->name);
	if (st != HOFF_OK)
		return st;
	hoff_sim_opts so = hoff_sim_defaults();
	so.budget_bytes = INT64_MAX;
	so.timeline = p->timeline;
	st = hoff_sim_run(p->g, p->s, &so, &p->r, e);
	if (st == HOFF_OK && p->r.valid) {
		p->s->summary = p->r.summary;
		p->s->has_summary = true;
		p->s->budget_bytes = p->budget;
	}
	return st;
}

void hoff_pipeline_violation(const hoff_pipeline *p, char *buf, size_t n)
{
	char line[HOFF_ERRLEN], safe[4 * HOFF_ERRLEN];
	hoff_violation_format(p->g, p->s, &p->r.viol[0], line, sizeof line);
	snprintf(buf, n, "%s", hoff_cli_safe(line, safe, sizeof safe));
}

hoff_status hoff_pipeline_write(const hoff_pipeline *p, const char *out,
				const char *trace, hoff_err *e)
{
	if (!out || !trace)
		return out     ? hoff_sched_write(p->s, p->g, out, e)
		       : trace ? hoff_trace_write(p->g, &p->r.tl, trace, e)
			       : HOFF_OK;
	/* both open before either lands; the old trace goes first */
	hoff_outfile so, to;
	hoff_status st = hoff_outfile_open(&so, out, e);
	if (st != HOFF_OK)
		return st;
	if ((st = hoff_outfile_open(&to, trace, e)) != HOFF_OK) {
		hoff_outfile_abort(&so);
		return st;
	}
	hoff_sched_print(p->s, p->g, so.f);
	hoff_trace_print(p->g, &p->r.tl, to.f);
	return hoff_outfile_commit_pair(&so, &to, e);
}

void hoff_pipeline_free(hoff_pipeline *p)
{
	hoff_sim_result_free(&p->r);
	hoff_sched_free(p->s);
	hoff_graph_free(p->g);
	p->s = NULL;
	p->g = NULL;
}
