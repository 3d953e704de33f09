/* main.c: the hoffopt command line — parses arguments, runs the pipeline
 * (read → analyse → [plan] → simulate → write) and maps statuses to exit
 * codes: 0 ok, 1 invalid schedule or infeasible budget, 2 bad input or
 * usage. The only file that calls exit() or prints for the user. */
#include <errno.h>
#include <limits.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <time.h>

#include "analysis.h"
#include "cli.h"
#include "cmd_exact.h"
#include "cmd_run.h"
#include "graph_json.h"
#include "models.h"
#include "outfile.h"
#include "policy.h"
#include "sched_json.h"
#include "sim.h"
#include "trace_json.h"

#define EXIT_INVALID 1
#define EXIT_BAD     HOFF_EXIT_BAD

static const char *usage_main =
	"usage: hoffopt <command> [options]\n"
	"\n"
	"Plans how an LLM's tensors move between device memory and slower\n"
	"tiers (host, NVMe, remote), and checks plans on FORMAT.md's machine\n"
	"model.\n"
	"\n"
	"commands:\n"
	"  analyze GRAPH [--json] [--tensors] [--top N]\n"
	"        lifetimes, no-offload memory peak, bytes by kind, lower bound\n"
	"  simulate GRAPH SCHEDULE [--budget B] [--json] [--trace T]\n"
	"        check a schedule and report its peak, makespan and stall\n"
	"  --greedy GRAPH [-o SCHEDULE] [--budget B | --max-overhead X]\n"
	"        plan a schedule with the greedy refinement\n"
	"  --policy NAME GRAPH [...]\n"
	"        plan with none, reactive, lookahead:N or greedy\n"
	"  --exact GRAPH [...]    plan with the ILP, greedy as first incumbent\n"
	"  compare GRAPH [...]    greedy and the ILP side by side (objective, gap)\n"
	"  gen MODEL [--phase P] [--seq N] [--batch N] [--layers N]\n"
	"      [--machine NAME] [--seed S] [--weights W] -o GRAPH\n"
	"        write a model-shaped graph (gen --list for the names)\n"
	"  run GRAPH SCHEDULE [--backend cpu|cuda] [--verify] [--json] [...]\n"
	"        execute a schedule for real and compare with the simulator\n"
	"  calibrate [--backend cpu|cuda] [-o MACHINE]\n"
	"        measure a backend's machine as a graph.json machine object\n"
	"\n"
	"Run 'hoffopt <command> --help' for a command's options.\n"
	"Exit codes: 0 ok, 1 invalid schedule, 2 bad input or usage.\n";

static const char *usage_analyze =
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

static const char *usage_simulate =
	"usage: hoffopt simulate GRAPH SCHEDULE [--budget B] [--json] "
	"[--trace T]\n"
	"\n"
	"Runs SCHEDULE on GRAPH under FORMAT.md's machine model, exactly, in\n"
	"integer picoseconds, and reports validity (every broken rule, with\n"
	"its step and tensor) and the summary: peak, makespan, compute,\n"
	"stall, bytes moved each way, overhead and lower bound.\n"
	"\n"
	"  --budget B   device budget: bytes, with KiB/MiB/GiB/KB/MB/GB, or a\n"
	"               percentage of the no-offload peak (75%); default: the\n"
	"               schedule's budget_bytes, else device.memory_bytes\n"
	"  --json       one JSON object on stdout\n"
	"  --trace T    write a Chrome trace (Perfetto) of the run to T\n"
	"\n"
	"Exit codes: 0 valid, 1 invalid, 2 bad input or usage.\n";

static const char *usage_plan =
	"usage: hoffopt --greedy GRAPH [-o SCHEDULE] [--budget B | "
	"--max-overhead X]\n"
	"                [--trace T] [--json] [--progress]\n"
	"       hoffopt --policy NAME GRAPH [same options]\n"
	"\n"
	"Plans where each prefetch, store and detach goes, checks the plan on\n"
	"FORMAT.md's machine model, and writes it as schedule.json.\n"
	"\n"
	"  --policy NAME      none (everything resident, tier-homed tensors\n"
	"                     fetched just before first use), reactive (fetch\n"
	"                     right before each use, evict right after),\n"
	"                     lookahead:N (per-layer prefetch N layers ahead),\n"
	"                     greedy (the cost-model refinement; --greedy)\n"
	"  -o SCHEDULE        write the schedule there ('-' for stdout)\n"
	"  --budget B         fastest schedule whose peak is at most B: bytes,\n"
	"                     KiB/MiB/GiB/KB/MB/GB, or % of the no-offload peak\n"
	"  --max-overhead X   without --budget: smallest peak whose makespan is\n"
	"                     at most (1 + X) * lower_bound_s; X as 0.01 or 1%\n"
	"                     (default 1%)\n"
	"  --trace T          write a Chrome trace of the simulated plan\n"
	"  --json             one JSON object on stdout\n"
	"  --progress         progress lines on stderr\n"
	"\n"
	"Exit codes: 0 ok, 1 the budget cannot be met (nothing is written;\n"
	"the smallest peak found is reported), 2 bad input or usage.\n";

typedef struct opts {
	const char *pos[4];
	int npos;
	const char *budget;
	const char *trace;
	const char *out;
	const char *overhead;
	const char *policy;
	bool json, tensors, help, progress;
	int top;
} opts;

/* Parses argv[from..] for a command; returns 0 or an exit code. */
static int parse_opts(int argc, char **argv, opts *o, int maxpos, int from)
{
	memset(o, 0, sizeof *o);
	o->top = 10;
	for (int i = from; i < argc; i++) {
		const char *a = argv[i];
		bool more = i + 1 < argc;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			o->help = true;
		} else if (!strcmp(a, "--json")) {
			o->json = true;
		} else if (!strcmp(a, "--tensors")) {
			o->tensors = true;
		} else if (!strcmp(a, "--budget") && more) {
			o->budget = argv[++i];
		} else if (!strcmp(a, "--trace") && more) {
			o->trace = argv[++i];
		} else if (!strcmp(a, "-o") && more) {
			o->out = argv[++i];
		} else if (!strcmp(a, "--max-overhead") && more) {
			o->overhead = argv[++i];
		} else if (!strcmp(a, "--policy") && more) {
			o->policy = argv[++i];
		} else if (!strcmp(a, "--progress")) {
			o->progress = true;
		} else if (!strcmp(a, "--top") && more) {
			char *end;
			long v = strtol(argv[++i], &end, 10);
			if (*end || v < 0 || v > 1000000)
				return hoff_cli_bad(
					"--top takes a count, not '%s'",
					argv[i]);
			o->top = (int)v;
		} else if (!strcmp(a, "--greedy")) {
			o->policy = "greedy";
		} else if (a[0] == '-' && a[1] != '\0') {
			return hoff_cli_bad(
				more || strncmp(a, "--", 2)
					? "unknown option '%s'"
					: "option '%s' needs a value",
				a);
		} else if (o->npos < maxpos) {
			o->pos[o->npos++] = a;
		} else {
			return hoff_cli_bad("unexpected argument '%s'", a);
		}
	}
	return 0;
}

static void print_bytes(FILE *f, int64_t b)
{
	double v = (double)b;
	const char *u = "B";
	if (v >= 1073741824.0) {
		v /= 1073741824.0;
		u = "GiB";
	} else if (v >= 1048576.0) {
		v /= 1048576.0;
		u = "MiB";
	} else if (v >= 1024.0) {
		v /= 1024.0;
		u = "KiB";
	}
	if (*u == 'B')
		fprintf(f, "%" PRId64 " B", b);
	else
		fprintf(f, "%" PRId64 " B (%.2f %s)", b, v, u);
}

static void json_overhead(FILE *f, const hoff_summary *s)
{
	if (s->compute_ps == 0)
		fprintf(f, "\"overhead\": null");
	else
		fprintf(f, "\"overhead\": %.17g",
			(double)s->makespan_ps / (double)s->compute_ps - 1.0);
}

static int exit_for(hoff_status st)
{
	return st == HOFF_OK ? 0 : st == HOFF_EINVALID ? EXIT_INVALID : EXIT_BAD;
}

/* Sorts tensor ids by bytes descending, then id ascending. */
static const hoff_graph *sort_graph;
static int by_bytes(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	int64_t bx = sort_graph->tensor[x].bytes, by = sort_graph->tensor[y].bytes;
	if (bx != by)
		return bx > by ? -1 : 1;
	return (x > y) - (x < y);
}

static int cmd_analyze(int argc, char **argv)
{
	opts o;
	int rc = parse_opts(argc, argv, &o, 1, 2);
	if (hoff_cli_stop(&rc, o.help, usage_analyze, o.npos == 1,
			  "analyze needs GRAPH (see --help)"))
		return rc;
	hoff_err e = {{0}};
	hoff_graph *g = NULL;
	hoff_analysis a;
	hoff_sim_result r = {0};
	hoff_status st = hoff_graph_read(o.pos[0], &g, &e);
	if (st == HOFF_OK)
		st = hoff_analyze(g, &a, &e);
	if (st == HOFF_OK)
		st = hoff_cli_noffload(g, o.top > 0, &r, &e);
	if (st != HOFF_OK) {
		fprintf(stderr, "hoffopt: %s\n", e.msg);
		rc = exit_for(st);
		goto out;
	}
	sort_graph = g;
	if (r.nsnap)
		qsort(r.snap, (size_t)r.nsnap, sizeof *r.snap, by_bytes);
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
			fprintf(f, ", \"bytes\": %" PRId64 ", \"kind\": \"%s\"}",
				t->bytes, hoff_kind_name(t->kind));
		}
		fprintf(f, "], \"workspace_bytes_at_peak\": %" PRId64 "}",
			r.snap_workspace_bytes);
		fputs(", \"bytes_by_kind\": {", f);
		for (int k = 0, n = 0; k < HOFF_NKINDS; k++)
			if (a.count_by_kind[k])
				fprintf(f, "%s\"%s\": %" PRId64, n++ ? ", " : "",
					hoff_kind_name(k), a.bytes_by_kind[k]);
		fputs("}", f);
		if (o.tensors) {
			fputs(", \"tensor_lifetimes\": [", f);
			for (int32_t t = 0; t < g->ntensors; t++) {
				const hoff_tensor *x = &g->tensor[t];
				fputs(t ? ",\n  {\"id\": " : "\n  {\"id\": ", f);
				hoff_json_string(f, x->id);
				fprintf(f,
					", \"bytes\": %" PRId64
					", \"first_use\": %d, \"last_use\": %d"
					", \"producer\": %d, \"lifetime_ops\": "
					"%d}",
					x->bytes, x->first_use, x->last_use,
					x->producer, hoff_tensor_lifetime(g, t));
			}
			fputs("]", f);
		}
		fputs("}\n", f);
		goto out;
	}
	fprintf(f, "graph %s: %d ops, %d tensors, %d tiers\n",
		g->name ? g->name : "(unnamed)", g->nops, g->ntensors,
		g->ntiers);
	fprintf(f, "compute       %.9g s\n", hoff_s(a.compute_ps));
	fprintf(f, "lower bound   %.9g s", hoff_s(a.lower_bound_ps));
	if (a.lb_op != HOFF_NONE)
		fprintf(f, " (transfers from %s needed by op \"%s\", then the "
			   "rest of compute)",
			g->tier[a.lb_tier].name, g->op[a.lb_op].id);
	fputs("\nno-offload    peak ", f);
	print_bytes(f, r.summary.peak_bytes);
	fprintf(f, " at %.9g s, makespan %.9g s; device holds ",
		hoff_s(r.peak_ps), hoff_s(r.summary.makespan_ps));
	print_bytes(f, g->device.memory_bytes);
	fputs(r.summary.peak_bytes <= g->device.memory_bytes ? " (fits)\n"
							      : " (does not fit)\n",
	      f);
	if (ntop) {
		fprintf(f, "at the peak   %" PRId64 " tensors", r.nsnap);
		if (r.snap_workspace_bytes)
			fprintf(f, " + workspace %" PRId64 " B",
				r.snap_workspace_bytes);
		fputs("; largest:\n", f);
		for (int64_t i = 0; i < ntop; i++) {
			const hoff_tensor *t = &g->tensor[r.snap[i]];
			fprintf(f, "  %-24s %-10s ", t->id,
				hoff_kind_name(t->kind));
			print_bytes(f, t->bytes);
			fputc('\n', f);
		}
	}
	fputs("bytes by kind\n", f);
	for (int k = 0; k < HOFF_NKINDS; k++)
		if (a.count_by_kind[k]) {
			fprintf(f, "  %-12s %8d tensors  ", hoff_kind_name(k),
				a.count_by_kind[k]);
			print_bytes(f, a.bytes_by_kind[k]);
			fputc('\n', f);
		}
out:
	hoff_sim_result_free(&r);
	hoff_graph_free(g);
	return rc;
}

static int cmd_simulate(int argc, char **argv)
{
	opts o;
	int rc = parse_opts(argc, argv, &o, 2, 2);
	if (hoff_cli_stop(&rc, o.help, usage_simulate, o.npos == 2,
			  "simulate needs GRAPH and SCHEDULE (see --help)"))
		return rc;
	hoff_err e = {{0}};
	hoff_graph *g = NULL;
	hoff_sched *s = NULL;
	hoff_analysis a;
	hoff_sim_result r = {0};
	hoff_sim_opts so = hoff_sim_defaults();
	so.timeline = o.trace != NULL;
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
		fprintf(stderr, "hoffopt: %s\n", e.msg);
		rc = exit_for(st);
		goto out;
	}
	if (s->graph && g->name && strcmp(s->graph, g->name) != 0)
		fprintf(stderr,
			"hoffopt: warning: %s: graph \"%s\" does not match the "
			"graph's name \"%s\"\n",
			o.pos[1], s->graph, g->name);
	if (s->has_summary && r.valid) {
		const hoff_summary *w = &s->summary, *m = &r.summary;
		double tol = 1e-9 * fmax(1.0, hoff_s(m->makespan_ps)) * 1e12;
		if (w->peak_bytes != m->peak_bytes ||
		    w->h2d_bytes != m->h2d_bytes ||
		    w->d2h_bytes != m->d2h_bytes ||
		    fabs((double)(w->makespan_ps - m->makespan_ps)) > tol ||
		    fabs((double)(w->compute_ps - m->compute_ps)) > tol ||
		    fabs((double)(w->stall_ps - m->stall_ps)) > tol)
			fprintf(stderr,
				"hoffopt: warning: %s: its summary differs "
				"from the simulation (the simulation is "
				"reported)\n",
				o.pos[1]);
	}
	rc = r.valid ? 0 : EXIT_INVALID;
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
		hoff_json_summary(f, &r.summary);
		fputs(", ", f);
		json_overhead(f, &r.summary);
		fputs(", ", f);
		hoff_json_time(f, "lower_bound_s", a.lower_bound_ps);
		fprintf(f, ", \"budget_bytes\": %" PRId64 "}\n", r.budget_bytes);
		goto out;
	}
	for (int64_t i = 0; i < shown && i < 20; i++) {
		hoff_violation_format(g, s, &r.viol[i], line, sizeof line);
		fprintf(stderr, "%s: %s\n", o.pos[1], line);
	}
	if (r.nviol > 20)
		fprintf(stderr, "%s: ... %" PRId64 " violations in all\n",
			o.pos[1], r.nviol);
	fprintf(f, "schedule %s (policy %s, budget ",
		r.valid ? "valid" : "INVALID", s->policy ? s->policy : "?");
	print_bytes(f, r.budget_bytes);
	fputs(")\npeak          ", f);
	print_bytes(f, r.summary.peak_bytes);
	fprintf(f, "\nmakespan      %.9g s  (compute %.9g s, stall %.9g s",
		hoff_s(r.summary.makespan_ps), hoff_s(r.summary.compute_ps),
		hoff_s(r.summary.stall_ps));
	if (r.summary.compute_ps)
		fprintf(f, ", overhead %.2f%%",
			100.0 * ((double)r.summary.makespan_ps /
					 (double)r.summary.compute_ps -
				 1.0));
	fprintf(f, ")\nlower bound   %.9g s\nmoved         h2d ",
		hoff_s(a.lower_bound_ps));
	print_bytes(f, r.summary.h2d_bytes);
	fputs(", d2h ", f);
	print_bytes(f, r.summary.d2h_bytes);
	fputc('\n', f);
out:
	hoff_sim_result_free(&r);
	hoff_sched_free(s);
	hoff_graph_free(g);
	return rc;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmd_plan(int argc, char **argv)
{
	opts o;
	int rc = parse_opts(argc, argv, &o, 1, 1);
	if (hoff_cli_stop(&rc, o.help, usage_plan, o.npos == 1,
			  "needs one GRAPH (see hoffopt --greedy --help)"))
		return rc;
	hoff_policy_opts po = hoff_policy_defaults();
	if (!o.policy || !hoff_policy_parse(o.policy, &po))
		return hoff_cli_bad(
			"unknown policy '%s' (none, reactive, lookahead:N, "
			"greedy)",
			o.policy ? o.policy : "");
	if (o.budget && o.overhead)
		return hoff_cli_bad(
			"%s", "--budget and --max-overhead exclude each other");
	if (o.overhead && (po.max_overhead = hoff_cli_frac(o.overhead)) < 0)
		return hoff_cli_bad(
			"--max-overhead: '%s' is not an overhead (0.01 or 1%%)",
			o.overhead);
	po.progress = o.progress;
	hoff_err e = {{0}};
	hoff_graph *g = NULL;
	hoff_sched *s = NULL, *none = NULL;
	hoff_sim_result r = {0}, rn = {0};
	hoff_policy_report rep;
	char name[32];
	hoff_policy_name(&po, name, sizeof name);
	double t0 = now_s();
	hoff_status st = hoff_graph_read(o.pos[0], &g, &e);
	if (st == HOFF_OK)
		st = hoff_cli_budget(g, o.budget, &po.budget_bytes, &e);
	double t1 = now_s();
	if (st == HOFF_OK)
		st = hoff_policy_run(g, &po, &s, &rep, &e);
	double solve_s = now_s() - t1;
	/* The plan as written: simulated under the budget it claims. */
	hoff_sim_opts so = hoff_sim_defaults();
	so.budget_bytes = po.budget_bytes != HOFF_NONE ? po.budget_bytes
						       : INT64_MAX;
	so.timeline = o.trace != NULL;
	if (st == HOFF_OK)
		st = hoff_sim_run(g, s, &so, &r, &e);
	/* Policy none's simulated peak: the run's, when it simulated it. */
	int64_t np = st == HOFF_OK ? rep.none_peak_bytes : HOFF_NONE;
	if (st == HOFF_OK && np == HOFF_NONE) {
		hoff_policy_opts no = po;
		no.kind = HOFF_POLICY_NONE;
		no.budget_bytes = HOFF_NONE;
		st = hoff_policy_baseline(g, &no, &none, &e);
		hoff_sim_opts nso = hoff_sim_defaults();
		nso.budget_bytes = INT64_MAX;
		if (st == HOFF_OK)
			st = hoff_sim_run(g, none, &nso, &rn, &e);
		np = rn.summary.peak_bytes;
	}
	if (st != HOFF_OK) {
		fprintf(stderr, "hoffopt: %s\n", e.msg);
		rc = exit_for(st);
		goto out;
	}
	bool budget_ok = po.budget_bytes == HOFF_NONE ||
			 r.summary.peak_bytes <= po.budget_bytes;
	if (!r.valid && budget_ok) {
		/* A bug, never a user error: say so rather than write it. */
		char line[HOFF_ERRLEN];
		hoff_violation_format(g, s, &r.viol[0], line, sizeof line);
		fprintf(stderr, "hoffopt: internal error: %s planned an invalid "
				"schedule: %s\n", name, line);
		rc = EXIT_BAD;
		goto out;
	}
	s->summary = r.summary;
	s->has_summary = true;
	s->budget_bytes = po.budget_bytes;
	if (!budget_ok) {
		fprintf(stderr,
			"hoffopt: budget %lld B cannot be met by %s: the "
			"smallest peak found is %lld B (try --budget %lld)\n",
			(long long)po.budget_bytes, name,
			(long long)r.summary.peak_bytes,
			(long long)r.summary.peak_bytes);
		rc = EXIT_INVALID;
	} else {
		if (o.out)
			st = hoff_sched_write(s, g, o.out, &e);
		if (st == HOFF_OK && o.trace)
			st = hoff_trace_write(g, &r.tl, o.trace, &e);
		if (st != HOFF_OK) {
			fprintf(stderr, "hoffopt: %s\n", e.msg);
			rc = exit_for(st);
			goto out;
		}
	}
	double red = np ? 1.0 - (double)r.summary.peak_bytes / (double)np : 0;
	double ovh = r.summary.compute_ps
			     ? (double)r.summary.makespan_ps /
					       (double)r.summary.compute_ps -
				       1.0
			     : 0;
	double lbo = rep.lower_bound_ps
			     ? (double)r.summary.makespan_ps /
					       (double)rep.lower_bound_ps -
				       1.0
			     : 0;
	FILE *f = (o.out && !strcmp(o.out, "-")) ? stderr : stdout;
	if (o.json) {
		fprintf(f, "{\"policy\": \"%s\", \"graph\": ", name);
		hoff_json_string(f, g->name ? g->name : "");
		fprintf(f, ", \"valid\": %s, \"feasible\": %s, ",
			r.valid ? "true" : "false",
			budget_ok && rep.feasible ? "true" : "false");
		if (po.budget_bytes == HOFF_NONE)
			fprintf(f, "\"budget_bytes\": null, \"max_overhead\": "
				   "%.17g, ",
				po.max_overhead);
		else
			fprintf(f, "\"budget_bytes\": %lld, \"max_overhead\": "
				   "null, ",
				(long long)po.budget_bytes);
		hoff_json_summary(f, &r.summary);
		fputs(", ", f);
		json_overhead(f, &r.summary);
		fputs(", ", f);
		hoff_json_time(f, "lower_bound_s", rep.lower_bound_ps);
		fprintf(f,
			", \"overhead_vs_lower_bound\": %.17g, "
			"\"none_peak_bytes\": %lld, \"reduction\": %.17g, "
			"\"solve_s\": %.6f, \"read_s\": %.6f, \"iterations\": "
			"%d, \"source\": \"%s\", \"device_memory_bytes\": "
			"%lld}\n",
			lbo, (long long)np, red, solve_s, t1 - t0,
			rep.iterations, rep.source,
			(long long)g->device.memory_bytes);
		goto out;
	}
	fprintf(f, "%-12s %14s %9s %12s %9s %14s %14s %9s\n", "policy",
		"peak_bytes", "reduction", "makespan_s", "overhead",
		"h2d_bytes", "d2h_bytes", "solve_s");
	fprintf(f, "%-12s %14lld %8.2f%% %12.6g %8.2f%% %14lld %14lld %9.3f\n",
		name, (long long)r.summary.peak_bytes, 100 * red,
		hoff_s(r.summary.makespan_ps), 100 * ovh,
		(long long)r.summary.h2d_bytes, (long long)r.summary.d2h_bytes,
		solve_s);
	fprintf(f, "lower bound %.6g s (schedule %.2f%% over it); none peaks at "
		   "%lld B",
		hoff_s(rep.lower_bound_ps), 100 * lbo, (long long)np);
	if (po.kind == HOFF_POLICY_GREEDY && strcmp(rep.source, "greedy"))
		fprintf(f, "; best candidate: %s", rep.source);
	fputc('\n', f);
	fflush(f);
out:
	if (rc == 0 && po.kind == HOFF_POLICY_GREEDY &&
	    po.budget_bytes == HOFF_NONE && !rep.feasible &&
	    lbo <= po.max_overhead)
		fprintf(stderr,
			"hoffopt: warning: greedy's least peak within %.4g%% "
			"of the lower bound is %lld B, over the device's %lld "
			"B (%d plans simulated)\n",
			100 * po.max_overhead, (long long)rep.peak_bytes,
			(long long)g->device.memory_bytes, rep.iterations);
	else if (rc == 0 && po.kind == HOFF_POLICY_GREEDY &&
		 po.budget_bytes == HOFF_NONE && !rep.feasible)
		fprintf(stderr,
			"hoffopt: warning: greedy's best schedule is %.4g%% "
			"over the lower bound, past the %.4g%% asked (%d plans "
			"simulated; a schedule within it may still exist: try "
			"--exact)\n",
			100 * lbo, 100 * po.max_overhead, rep.iterations);
	hoff_sim_result_free(&r);
	hoff_sim_result_free(&rn);
	hoff_sched_free(s);
	hoff_sched_free(none);
	hoff_graph_free(g);
	return rc;
}

static const char *usage_gen =
	"usage: hoffopt gen MODEL [--phase prefill|decode|train] [--seq N]\n"
	"                  [--batch N] [--layers N] [--machine NAME] [--seed S]\n"
	"                  [--kv-block N] [--weights auto|device|host] [-o GRAPH]\n"
	"       hoffopt gen --list\n"
	"\n"
	"Writes graph.json for a public model at its real dimensions (bf16),\n"
	"op times by the roofline of the machine preset. Defaults: decode,\n"
	"seq 4096, batch 1, full depth, h100-pcie5, seed 1, -o - (stdout).\n";

static void print_list(const char *what, const char *const *names)
{
	printf("%-9s", what);
	for (; *names; names++)
		printf(" %s", *names);
	putchar('\n');
}

/* Parses a whole decimal number in [lo, hi]; false otherwise. */
static bool parse_int(const char *s, long long lo, long long hi,
		      long long *v)
{
	char *end;
	errno = 0;
	long long x = strtoll(s, &end, 10);
	if (end == s || *end || errno || x < lo || x > hi)
		return false;
	*v = x;
	return true;
}

static int cmd_gen(int argc, char **argv)
{
	hoff_model_opts mo = hoff_model_defaults();
	const char *out = "-";
	bool have_model = false;
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		long long x;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage_gen, stdout);
			return 0;
		} else if (!strcmp(a, "--list")) {
			print_list("models:", hoff_model_names());
			print_list("phases:", hoff_model_phases());
			print_list("machines:", hoff_machine_names());
			return 0;
		} else if (a[0] != '-') {
			if (have_model)
				return hoff_cli_bad("unexpected argument '%s'",
						    a);
			mo.model = a;
			have_model = true;
			continue;
		} else if (!v) {
			return hoff_cli_bad("option '%s' needs a value", a);
		} else if (!strcmp(a, "--phase")) {
			mo.phase = v;
		} else if (!strcmp(a, "--machine")) {
			mo.machine = v;
		} else if (!strcmp(a, "--weights")) {
			mo.weights = v;
		} else if (!strcmp(a, "-o")) {
			out = v;
		} else if (!strcmp(a, "--seq") && parse_int(v, 1, 1 << 24, &x)) {
			mo.seq = x;
		} else if (!strcmp(a, "--batch") &&
			   parse_int(v, 1, 1 << 16, &x)) {
			mo.batch = x;
		} else if (!strcmp(a, "--layers") &&
			   parse_int(v, 0, 1 << 20, &x)) {
			mo.layers = (int32_t)x;
		} else if (!strcmp(a, "--kv-block") &&
			   parse_int(v, 1, 1 << 24, &x)) {
			mo.kv_block_tokens = x;
		} else if (!strcmp(a, "--seed") &&
			   parse_int(v, 0, LLONG_MAX, &x)) {
			mo.seed = (uint64_t)x;
		} else {
			fprintf(stderr, "hoffopt: gen: bad option '%s %s' (see "
					"hoffopt gen --help)\n", a, v);
			return EXIT_BAD;
		}
		i++;
	}
	if (!have_model)
		return hoff_cli_bad("%s",
				    "gen needs a MODEL (hoffopt gen --list)");
	hoff_err e = {{0}};
	hoff_graph *g = NULL;
	hoff_status st = hoff_model_build(&mo, &g, &e);
	if (st == HOFF_OK)
		st = hoff_graph_write(g, out, &e);
	hoff_graph_free(g);
	if (st != HOFF_OK) {
		fprintf(stderr, "hoffopt: gen: %s\n", e.msg);
		return exit_for(st);
	}
	return 0;
}

int main(int argc, char **argv)
{
	hoff_tune_malloc();
	if (argc < 2) {
		fputs(usage_main, stderr);
		return EXIT_BAD;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") ||
	    !strcmp(cmd, "help")) {
		if (argc > 2 && !strcmp(argv[2], "analyze"))
			fputs(usage_analyze, stdout);
		else if (argc > 2 && !strcmp(argv[2], "simulate"))
			fputs(usage_simulate, stdout);
		else if (argc > 2 && (!strcmp(argv[2], "--greedy") ||
				      !strcmp(argv[2], "greedy") ||
				      !strcmp(argv[2], "--policy")))
			fputs(usage_plan, stdout);
		else
			fputs(usage_main, stdout);
		return 0;
	}
	if (!strcmp(cmd, "--version")) {
		puts("hoffopt 0.1");
		return 0;
	}
	if (!strcmp(cmd, "analyze"))
		return cmd_analyze(argc, argv);
	if (!strcmp(cmd, "run"))
		return hoff_cmd_run(argc, argv);
	if (!strcmp(cmd, "calibrate"))
		return hoff_cmd_calibrate(argc, argv);
	if (!strcmp(cmd, "gen"))
		return cmd_gen(argc, argv);
	if (!strcmp(cmd, "simulate"))
		return cmd_simulate(argc, argv);
	if (!strcmp(cmd, "--greedy") || !strcmp(cmd, "--policy"))
		return cmd_plan(argc, argv);
	if (!strcmp(cmd, "--exact"))
		return hoff_cmd_exact(argc, argv);
	if (!strcmp(cmd, "compare"))
		return hoff_cmd_compare(argc, argv);
	fprintf(stderr, "hoffopt: unknown command '%s' (see hoffopt --help)\n",
		cmd);
	return EXIT_BAD;
}
