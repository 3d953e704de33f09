/* cmd_analyze.c: `hoffopt analyze GRAPH` — the op count, compute, the
 * lower bound, bytes by kind, and the no-offload memory timeline's peak
 * with the tensors that make it up. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "checkpoint.h"
#include "cli.h"
#include "cmd.h"
#include "fileio.h"
#include "graph_json.h"
#include "sim.h"
#include "sort.h"

static const char *const usage =
	"usage: hoffopt analyze GRAPH [--json] [--tensors] [--top N]\n"
	"\n"
	"Reads GRAPH (graph.json, '-' for stdin) and reports the op count,\n"
	"compute time, FORMAT.md's lower_bound_s, bytes by tensor kind, and\n"
	"the no-offload memory timeline (every tensor resident while live,\n"
	"tier-homed tensors fetched at time 0): its peak and the tensors\n"
	"that make it up.\n"
	"\n"
	"  --json       one JSON object on stdout\n"
	"  --tensors    with --json: each tensor's first/last use and lifetime\n"
	"  --top N      contributors to the peak to list (default 10)\n";

typedef struct analyze_opts {
	HOFF_CLI_ARGS; /* GRAPH, --json */
	bool tensors;
	int64_t top;
} analyze_opts;

static const hoff_opt table[] = {
	HOFF_FLAG("--tensors", analyze_opts, tensors),
	HOFF_INT("--top", analyze_opts, top, 0, 1000000,
		 "--top takes a count, not '%s'"),
};

/* --tensors is a field of the JSON report (checked unless --help). */
static int check_tensors(void *opts)
{
	const analyze_opts *o = opts;
	return !o->help && o->tensors && !o->json
		       ? hoff_cli_bad("%s", "--tensors needs --json")
		       : 0;
}

static const hoff_cli_spec spec = {
	.from = 2,
	.npos = 1,
	.common = HOFF_CLI_JSON,
	.table = table,
	.nopts = HOFF_NOPTS(table),
	.usage = usage,
	.missing = "analyze needs GRAPH (see --help)",
	.finish = check_tensors,
};

/* Orders tensor ids of graph ctx by bytes descending, then id ascending. */
static int by_bytes(const void *a, const void *b, void *ctx)
{
	const hoff_graph *sort_graph = ctx;
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	int64_t bx = sort_graph->tensor[x].bytes,
		by = sort_graph->tensor[y].bytes;
	if (bx != by)
		return bx > by ? -1 : 1;
	return (x > y) - (x < y);
}

int hoff_cmd_analyze(int argc, char **argv)
{
	analyze_opts o = {.top = 10};
	int rc;
	if (hoff_cli_command(argc, argv, &spec, &o, &rc))
		return rc;
	hoff_err e = {{0}};
	hoff_graph *g = NULL;
	hoff_analysis a;
	hoff_sim_result r = {0};
	hoff_status st = hoff_graph_read(o.pos[0], &g, &e);
	if (st == HOFF_OK)
		st = hoff_analyze(g, &a, &e);
	if (st == HOFF_OK)
		st = hoff_cli_noffload(g, true, &r, &e);
	if (st != HOFF_OK) {
		rc = hoff_cli_fail(st, &e);
		goto out;
	}
	/* (v2) activations whose producer may be re-run (issue 31) */
	int64_t rbytes = hoff_recomputable_bytes(g, r.snap, r.nsnap);
	hoff_sort_ctx(r.snap, (size_t)r.nsnap, sizeof *r.snap, by_bytes, g);
	int64_t ntop = r.nsnap < o.top ? r.nsnap : o.top;
	FILE *f = stdout;
	if (o.json) {
		fputs("{\"graph\": ", f);
		hoff_json_string(f, g->name ? g->name : "");
		fprintf(f, ", \"ops\": %d, \"tensors\": %d, \"tiers\": %d, ",
			g->nops, g->ntensors, g->ntiers);
		hoff_json_time(f, "compute_s", a.compute_ps);
		fputs(", ", f);
		hoff_json_time(f, "lower_bound_s", a.lower_bound_ps);
		if (g->repeat) { /* (v2) the repeat term */
			fputs(", ", f);
			hoff_json_time(f, "repeat_bound_s", a.repeat_bound_ps);
		}
		fprintf(f, ", \"budget_bytes\": %" PRId64,
			g->device.memory_bytes);
		fprintf(f, ", \"no_offload\": {");
		hoff_json_summary(f, &r.summary);
		fputs(", ", f);
		hoff_json_time(f, "peak_at_s", r.peak_ps);
		fprintf(f, ", \"fits\": %s, \"top\": [",
			r.summary.peak_bytes <= g->device.memory_bytes
				? "true"
				: "false");
		for (int64_t i = 0; i < ntop; i++) {
			const hoff_tensor *t = &g->tensor[r.snap[i]];
			fputs(i ? ", {\"tensor\": " : "{\"tensor\": ", f);
			hoff_json_string(f, t->id);
			fprintf(f,
				", \"bytes\": %" PRId64 ", \"kind\": \"%s\"}",
				t->bytes, hoff_kind_name(t->kind));
		}
		fprintf(f,
			"], \"workspace_bytes_at_peak\": %" PRId64
			", \"recomputable_bytes_at_peak\": %" PRId64 "}",
			r.snap_workspace_bytes, rbytes);
		fputs(", \"bytes_by_kind\": {", f);
		for (int k = 0, n = 0; k < HOFF_NKINDS; k++)
			if (a.count_by_kind[k])
				fprintf(f, "%s\"%s\": %" PRId64,
					n++ ? ", " : "", hoff_kind_name(k),
					a.bytes_by_kind[k]);
		fputs("}", f);
		if (o.tensors) {
			fputs(", \"tensor_lifetimes\": [", f);
			for (int32_t t = 0; t < g->ntensors; t++) {
				const hoff_tensor *x = &g->tensor[t];
				fputs(t ? ",\n  {\"id\": " : "\n  {\"id\": ",
				      f);
				hoff_json_string(f, x->id);
				fprintf(f,
					", \"bytes\": %" PRId64
					", \"first_use\": %d, \"last_use\": %d"
					", \"producer\": %d, \"lifetime_ops\": "
					"%d}",
					x->bytes, x->first_use, x->last_use,
					x->producer,
					hoff_tensor_lifetime(g, t));
			}
			fputs("]", f);
		}
		fputs("}\n", f);
		goto out;
	}
	char sa[1024], sb[1024]; /* ids as shown: control characters escaped */
	fprintf(f, "graph %s: %d ops, %d tensors, %d tiers\n",
		g->name ? hoff_cli_safe(g->name, sa, sizeof sa) : "(unnamed)",
		g->nops, g->ntensors, g->ntiers);
	fprintf(f, "compute       %.9g s\n", hoff_s(a.compute_ps));
	fprintf(f, "lower bound   %.9g s", hoff_s(a.lower_bound_ps));
	if (a.lb_op != HOFF_NONE && !a.lb_store)
		fprintf(f,
			" (transfers from %s needed by op \"%s\", then the "
			"rest of compute)",
			hoff_cli_safe(g->tier[a.lb_tier].name, sa, sizeof sa),
			hoff_cli_safe(g->op[a.lb_op].id, sb, sizeof sb));
	else if (a.lb_op != HOFF_NONE)
		fprintf(f, " (the repeat bound below)");
	if (g->repeat && a.rb_op != HOFF_NONE)
		fprintf(f,
			"\nrepeat bound  %.9g s (compute through op \"%s\", "
			"then a store back to %s of the state updated from "
			"there on)",
			hoff_s(a.repeat_bound_ps),
			hoff_cli_safe(g->op[a.rb_op].id, sb, sizeof sb),
			hoff_cli_safe(g->tier[a.rb_tier].name, sa, sizeof sa));
	else if (g->repeat)
		fputs("\nrepeat bound  none (no state homed on a tier is "
		      "updated)",
		      f);
	fputs("\nno-offload    peak ", f);
	hoff_cli_bytes(f, r.summary.peak_bytes);
	fprintf(f, " at %.9g s, makespan %.9g s; device holds ",
		hoff_s(r.peak_ps), hoff_s(r.summary.makespan_ps));
	hoff_cli_bytes(f, g->device.memory_bytes);
	fputs(r.summary.peak_bytes <= g->device.memory_bytes
		      ? " (fits)\n"
		      : " (does not fit)\n",
	      f);
	fputs("recomputable  ", f);
	hoff_cli_bytes(f, rbytes);
	fputs(" of that peak: activations whose producer may be re-run\n", f);
	if (ntop) {
		fprintf(f, "at the peak   %" PRId64 " tensors", r.nsnap);
		if (r.snap_workspace_bytes)
			fprintf(f, " + workspace %" PRId64 " B",
				r.snap_workspace_bytes);
		fputs("; largest:\n", f);
		for (int64_t i = 0; i < ntop; i++) {
			const hoff_tensor *t = &g->tensor[r.snap[i]];
			fprintf(f, "  %-24s %-10s ",
				hoff_cli_safe(t->id, sa, sizeof sa),
				hoff_kind_name(t->kind));
			hoff_cli_bytes(f, t->bytes);
			fputc('\n', f);
		}
	}
	fputs("bytes by kind\n", f);
	for (int k = 0; k < HOFF_NKINDS; k++)
		if (a.count_by_kind[k]) {
			fprintf(f, "  %-12s %8d tensors  ", hoff_kind_name(k),
				a.count_by_kind[k]);
			hoff_cli_bytes(f, a.bytes_by_kind[k]);
			fputc('\n', f);
		}
out:
	hoff_sim_result_free(&r);
	hoff_graph_free(g);
	return rc;
}
