/* cmd_simulate.c: `hoffopt simulate GRAPH SCHEDULE` — the schedule run on
 * FORMAT.md's machine model: validity with every broken rule, and the
 * summary against compute and the lower bound. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "cli.h"
#include "cmd.h"
#include "fileio.h"
#include "graph_json.h"
#include "sched_json.h"
#include "sim.h"
#include "trace_json.h"

static const char *const usage =
	"usage: hoffopt simulate GRAPH SCHEDULE [--budget B] [--json] "
	"[--trace T]\n"
	"\n"
	"Runs SCHEDULE on GRAPH under FORMAT.md's machine model, exactly, in\n"
	"integer picoseconds, and reports validity (every broken rule, with\n"
	"its step and tensor) and the summary: peak, makespan, compute,\n"
	"stall, bytes moved each way, the makespan over compute and over the\n"
	"lower bound.\n"
	"\n"
	"  --budget B   device budget: bytes, with KiB/MiB/GiB/KB/MB/GB, or a\n"
	"               percentage of the no-offload peak (75%); default: the\n"
	"               schedule's budget_bytes, else device.memory_bytes\n"
	"  --json       one JSON object on stdout\n"
	"  --trace T    write a Chrome trace (Perfetto) of the run to T\n"
	"\n"
	"Exit codes: 0 valid, 1 invalid, 2 bad input or usage.\n";

static const hoff_cli_spec spec = {
	.from = 2,
	.npos = 2,
	.common = HOFF_CLI_JSON | HOFF_CLI_BUDGET | HOFF_CLI_TRACE,
	.usage = usage,
	.missing = "simulate needs GRAPH and SCHEDULE (see --help)",
};

int hoff_cmd_simulate(int argc, char **argv)
{
	hoff_cli_args o = {0};
	int rc;
	if (hoff_cli_command(argc, argv, &spec, &o, &rc))
		return rc;
	hoff_err e = {{0}};
	hoff_graph *g = NULL;
	hoff_sched *s = NULL;
	hoff_analysis a;
	hoff_sim_result r = {0};
	hoff_sim_opts so = hoff_sim_defaults();
	so.timeline = o.trace != NULL;
	if ((rc = hoff_cli_clobbers((const char *[]){o.trace}, 1, o.pos, 2)))
		return rc;
	hoff_status st = hoff_graph_read(o.pos[0], &g, &e);
	if (st == HOFF_OK)
		st = hoff_sched_read(o.pos[1], g, &s, &e);
	if (st == HOFF_OK)
		st = hoff_cli_budget(g, o.budget, &so.budget_bytes, &e);
	if (st == HOFF_OK)
		st = hoff_analyze(g, &a, &e);
	if (st == HOFF_OK)
		st = hoff_sim_run(g, s, &so, &r, &e);
	if (st == HOFF_OK && o.trace)
		st = hoff_trace_write(g, &r.tl, o.trace, &e);
	if (st != HOFF_OK) {
		rc = hoff_cli_fail(st, &e);
		goto out;
	}
	char sa[1024], sb[1024], sc[1024];
	if (s->graph && g->name && strcmp(s->graph, g->name) != 0)
		fprintf(stderr,
			"hoffopt: warning: %s: graph \"%s\" does not match the "
			"graph's name \"%s\"\n",
			hoff_cli_safe(o.pos[1], sa, sizeof sa),
			hoff_cli_safe(s->graph, sb, sizeof sb),
			hoff_cli_safe(g->name, sc, sizeof sc));
	if (s->has_summary && r.valid) {
		const hoff_summary *w = &s->summary, *m = &r.summary;
		double tol = 1e-9 * fmax(1.0, hoff_s(m->makespan_ps)) * 1e12;
		if (w->peak_bytes != m->peak_bytes ||
		    w->h2d_bytes != m->h2d_bytes ||
		    w->d2h_bytes != m->d2h_bytes ||
		    fabs((double)(w->makespan_ps - m->makespan_ps)) > tol ||
		    fabs((double)(w->compute_ps - m->compute_ps)) > tol ||
		    fabs((double)(w->recompute_ps - m->recompute_ps)) > tol ||
		    fabs((double)(w->stall_ps - m->stall_ps)) > tol)
			fprintf(stderr,
				"hoffopt: warning: %s: its summary differs "
				"from the simulation (the simulation is "
				"reported)\n",
				o.pos[1]);
	}
	rc = r.valid ? 0 : HOFF_EXIT_INVALID;
	char line[HOFF_ERRLEN];
	int64_t shown = r.nviol < HOFF_SIM_MAXVIOL ? r.nviol : HOFF_SIM_MAXVIOL;
	FILE *f = stdout;
	if (o.json) {
		fprintf(f, "{\"valid\": %s, \"errors\": [",
			r.valid ? "true" : "false");
		for (int64_t i = 0; i < shown; i++) {
			const hoff_violation *v = &r.viol[i];
			hoff_violation_format(g, s, v, line, sizeof line);
			fprintf(f, "%s{\"step\": ", i ? ", " : "");
			if (v->step == HOFF_NONE)
				fputs("null", f);
			else
				fprintf(f, "%" PRId64, v->step);
			fputs(", \"tensor\": ", f);
			if (v->tensor == HOFF_NONE)
				fputs("null", f);
			else
				hoff_json_string(f, g->tensor[v->tensor].id);
			fprintf(f, ", \"rule\": %d, \"message\": ", v->rule);
			hoff_json_string(f, line);
			fputc('}', f);
		}
		fprintf(f, "], \"errors_total\": %" PRId64 ", ", r.nviol);
		hoff_json_summary_v2(f, &r.summary,
				     g->version >= 2 || s->version >= 2);
		fputs(", ", f);
		hoff_json_overhead(f, &r.summary);
		fputs(", ", f);
		hoff_json_time(f, "lower_bound_s", a.lower_bound_ps);
		fprintf(f, ", \"budget_bytes\": %" PRId64 "}\n",
			r.budget_bytes);
		goto out;
	}
	for (int64_t i = 0; i < shown && i < 20; i++) {
		hoff_violation_format(g, s, &r.viol[i], line, sizeof line);
		fprintf(stderr, "%s: %s\n",
			hoff_cli_safe(o.pos[1], sa, sizeof sa),
			hoff_cli_safe(line, sb, sizeof sb));
	}
	if (r.nviol > 20)
		fprintf(stderr, "%s: ... %" PRId64 " violations in all\n",
			o.pos[1], r.nviol);
	fprintf(f, "schedule %s (policy %s, budget ",
		r.valid ? "valid" : "INVALID",
		s->policy ? hoff_cli_safe(s->policy, sa, sizeof sa) : "?");
	hoff_cli_bytes(f, r.budget_bytes);
	fputs(")\npeak          ", f);
	hoff_cli_bytes(f, r.summary.peak_bytes);
	fprintf(f, "\nmakespan      %.9g s  (compute %.9g s, ",
		hoff_s(r.summary.makespan_ps), hoff_s(r.summary.compute_ps));
	if (r.summary.recompute_ps)
		fprintf(f, "recompute %.9g s, ",
			hoff_s(r.summary.recompute_ps));
	fprintf(f, "stall %.9g s", hoff_s(r.summary.stall_ps));
	if (r.summary.compute_ps)
		fprintf(f, "; %.2f%% over compute",
			100.0 * hoff_cli_over(r.summary.makespan_ps,
					      r.summary.compute_ps));
	fprintf(f, ")\nlower bound   %.9g s", hoff_s(a.lower_bound_ps));
	if (a.lower_bound_ps)
		fprintf(f, " (the schedule is %.2f%% over it)",
			100.0 * hoff_cli_over(r.summary.makespan_ps,
					      a.lower_bound_ps));
	fputs("\nmoved         h2d ", f);
	hoff_cli_bytes(f, r.summary.h2d_bytes);
	fputs(", d2h ", f);
	hoff_cli_bytes(f, r.summary.d2h_bytes);
	fputc('\n', f);
out:
	hoff_sim_result_free(&r);
	hoff_sched_free(s);
	hoff_graph_free(g);
	return rc;
}
