/* main.c: the hoffopt command line — parses arguments, runs the pipeline
 * (read → analyse → [plan] → simulate → write) and maps statuses to exit
 * codes: 0 ok, 1 invalid schedule or a budget (the device's memory unless
 * --budget) that cannot be met, 2 bad input, usage or an output that
 * cannot be written, 3 internal error (a bug). The only file that calls
 * exit() or prints for the user. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
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
#include "baselines.h"
#include "policy.h"
#include "sched_json.h"
#include "sim.h"
#include "trace_json.h"

/* The CUDA backend, when this executable links hoff_cuda (only it does:
 * the libraries and the tests but test_exec_cuda never name CUDA). */
#if defined(HOFF_HAVE_CUDA)
static const hoff_cuda_api cuda_api = {hoff_cuda_probe, hoff_backend_cuda_new,
				       hoff_calibrate_cuda,
				       hoff_cuda_copy_sweep};
#define CUDA_API (&cuda_api)
#else
#define CUDA_API NULL
#endif

#define EXIT_INVALID  HOFF_EXIT_INVALID
#define EXIT_BAD      HOFF_EXIT_BAD
#define EXIT_INTERNAL HOFF_EXIT_INTERNAL

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
	"Exit codes: 0 ok, 1 invalid schedule or a plan that does not fit the\n"
	"device (or --budget), 2 bad input, usage or an output that cannot be\n"
	"written, 3 internal error (a bug).\n";

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

/* Options of parse_opts that take a value. */
static const char *const value_opts[] = {
	"--budget", "--trace", "-o", "--max-overhead", "--policy", "--top",
};

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
	"                     KiB/MiB/GiB/KB/MB/GB, or % of the all-resident\n"
	"                     (no-offload) peak\n"
	"  --max-overhead X   without --budget: smallest peak whose makespan is\n"
	"                     at most (1 + X) * lower_bound_s; X as 0.01 or 1%\n"
	"                     (default 1%)\n"
	"  --trace T          write a Chrome trace of the simulated plan\n"
	"  --json             one JSON object on stdout\n"
	"  --progress         progress lines on stderr\n"
	"\n"
	"The report: peak (against policy none's peak: none moves only what\n"
	"it must), makespan over the lower bound (FORMAT.md's lower_bound_s,\n"
	"which no schedule beats; --max-overhead limits this figure) and\n"
	"over compute (the ops' time alone), none's makespan, bytes moved.\n"
	"A % budget is of the all-resident peak (analyze's no-offload peak),\n"
	"and the report prints the bytes it resolved to.\n"
	"\n"
	"Exit codes: 0 ok, 1 the budget (--budget, else the device's\n"
	"memory_bytes) cannot be met, or a baseline's plan breaks a tier's\n"
	"capacity (nothing is written; the smallest peak found is reported),\n"
	"2 bad input or usage, 3 internal error (a bug).\n";

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
			bool known = false;
			for (size_t j = 0;
			     j < sizeof value_opts / sizeof *value_opts; j++)
				known |= !strcmp(a, value_opts[j]);
			return hoff_cli_bad(known ? "option '%s' needs a value"
						  : "unknown option '%s'",
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
	return hoff_cli_exit(st);
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
		rc = hoff_cli_fail(st, &e);
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
	char sa[1024], sb[1024]; /* ids as shown: control characters escaped */
	fprintf(f, "graph %s: %d ops, %d tensors, %d tiers\n",
		g->name ? hoff_cli_safe(g->name, sa, sizeof sa) : "(unnamed)",
		g->nops, g->ntensors, g->ntiers);
	fprintf(f, "compute       %.9g s\n", hoff_s(a.compute_ps));
	fprintf(f, "lower bound   %.9g s", hoff_s(a.lower_bound_ps));
	if (a.lb_op != HOFF_NONE)
		fprintf(f,
			" (transfers from %s needed by op \"%s\", then the "
			"rest of compute)",
			hoff_cli_safe(g->tier[a.lb_tier].name, sa, sizeof sa),
			hoff_cli_safe(g->op[a.lb_op].id, sb, sizeof sb));
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
			fprintf(f, "  %-24s %-10s ",
				hoff_cli_safe(t->id, sa, sizeof sa),
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
	print_bytes(f, r.budget_bytes);
	fputs(")\npeak          ", f);
	print_bytes(f, r.summary.peak_bytes);
	fprintf(f, "\nmakespan      %.9g s  (compute %.9g s, stall %.9g s",
		hoff_s(r.summary.makespan_ps), hoff_s(r.summary.compute_ps),
		hoff_s(r.summary.stall_ps));
	if (r.summary.compute_ps)
		fprintf(f, "; %.2f%% over compute",
			100.0 * ((double)r.summary.makespan_ps /
					 (double)r.summary.compute_ps -
				 1.0));
	fprintf(f, ")\nlower bound   %.9g s", hoff_s(a.lower_bound_ps));
	if (a.lower_bound_ps)
		fprintf(f, " (the schedule is %.2f%% over it)",
			100.0 * ((double)r.summary.makespan_ps /
					 (double)a.lower_bound_ps -
				 1.0));
	fputs("\nmoved         h2d ", f);
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
	if ((rc = hoff_cli_clobbers((const char *[]){o.out, o.trace}, 2, o.pos,
				    1)))
		return rc;
	hoff_err e = {{0}};
	hoff_graph *g = NULL;
	hoff_sched *s = NULL, *none = NULL;
	hoff_sim_result r = {0}, rn = {0};
	hoff_policy_report rep;
	double lbo = 0; /* the schedule's overhead over the lower bound */
	char name[32];
	hoff_policy_name(&po, name, sizeof name);
	double t0 = now_s();
	hoff_status st = hoff_graph_read(o.pos[0], &g, &e);
	if (st == HOFF_OK)
		st = hoff_cli_budget(g, o.budget, &po.budget_bytes, &e);
	double t1 = now_s();
	if (st == HOFF_OK)
		st = hoff_policy_run(g, &po, &s, &rep, &e);
	/* Nothing within the overhead fits the device: the fastest plan that
	 * does, which is what a user with this card can run, said so below
	 * with the least peak within the overhead. */
	int64_t within_peak = HOFF_NONE;
	if (st == HOFF_OK && po.kind == HOFF_POLICY_GREEDY &&
	    po.budget_bytes == HOFF_NONE &&
	    rep.peak_bytes > g->device.memory_bytes) {
		hoff_policy_opts fo = po;
		fo.budget_bytes = g->device.memory_bytes;
		hoff_sched *fs = NULL;
		hoff_policy_report frep;
		st = hoff_policy_run(g, &fo, &fs, &frep, &e);
		if (st == HOFF_OK && frep.feasible) {
			within_peak = rep.peak_bytes;
			hoff_sched_free(s);
			s = fs;
			rep = frep;
		} else {
			hoff_sched_free(fs);
		}
	}
	double solve_s = now_s() - t1;
	/* The plan as written: simulated under the budget it claims. */
	hoff_sim_opts so = hoff_sim_defaults();
	so.budget_bytes = INT64_MAX; /* measured; judged against the budget
				      * below, so rule 8 is a tier's here */
	so.timeline = o.trace != NULL;
	if (st == HOFF_OK)
		st = hoff_sim_run(g, s, &so, &r, &e);
	/* Policy none's simulated peak: the run's, when it simulated it. */
	int64_t np = st == HOFF_OK ? rep.none_peak_bytes : HOFF_NONE;
	int64_t nm = st == HOFF_OK ? rep.none_makespan_ps : HOFF_NONE;
	if (st == HOFF_OK && np == HOFF_NONE) {
		hoff_policy_opts no = po;
		no.kind = HOFF_POLICY_NONE;
		no.budget_bytes = HOFF_NONE;
		st = hoff_baseline_plan(g, &no, &none, &e);
		hoff_sim_opts nso = hoff_sim_defaults();
		nso.budget_bytes = INT64_MAX;
		if (st == HOFF_OK)
			st = hoff_sim_run(g, none, &nso, &rn, &e);
		np = rn.summary.peak_bytes;
		nm = rn.summary.makespan_ps;
	}
	if (st != HOFF_OK) {
		rc = hoff_cli_fail(st, &e);
		goto out;
	}
	/* The budget the plan must meet: --budget, else the device's memory
	 * (FORMAT.md rule 8), for greedy and the baselines alike. */
	const bool given = po.budget_bytes != HOFF_NONE;
	const int64_t budget = given ? po.budget_bytes : g->device.memory_bytes;
	bool budget_ok = r.summary.peak_bytes <= budget;
	bool baseline = po.kind != HOFF_POLICY_GREEDY;
	if (!r.valid) {
		char line[HOFF_ERRLEN], sa[4 * HOFF_ERRLEN];
		hoff_violation_format(g, s, &r.viol[0], line, sizeof line);
		hoff_cli_safe(line, sa, sizeof sa);
		if (baseline && r.viol[0].rule == 8) {
			/* The baselines plan without the tiers' capacities
			 * (simulated with no device budget, rule 8 here is a
			 * tier's): a limit of theirs, not a bug. */
			fprintf(stderr,
				"hoffopt: policy %s cannot plan within the "
				"tiers' capacities (a baseline does not track "
				"them): %s; nothing written\n",
				name, hoff_cli_safe(line, sa, sizeof sa));
			rc = EXIT_INVALID;
			budget_ok = false;
			goto report;
		}
		/* A bug, never a user error: say so rather than write it. */
		fprintf(stderr,
			"hoffopt: internal error: %s planned an invalid "
			"schedule: %s\n",
			name, hoff_cli_safe(line, sa, sizeof sa));
		rc = EXIT_INTERNAL;
		goto out;
	}
	s->summary = r.summary;
	s->has_summary = true;
	s->budget_bytes = budget;
	if (!budget_ok && given) {
		fprintf(stderr,
			"hoffopt: budget %lld B cannot be met by %s: the "
			"smallest peak found is %lld B (try --budget %lld)\n",
			(long long)po.budget_bytes, name,
			(long long)r.summary.peak_bytes,
			(long long)r.summary.peak_bytes);
		rc = EXIT_INVALID;
	} else if (!budget_ok) {
		fprintf(stderr,
			"hoffopt: %s's schedule peaks at %lld B, over the "
			"device's %lld B (machine.device.memory_bytes)%s; "
			"nothing written\n",
			name, (long long)r.summary.peak_bytes,
			(long long)budget,
			baseline ? ": this baseline does not fit the device"
				 : ": no schedule found fits the device");
		rc = EXIT_INVALID;
	} else {
		if (o.out)
			st = hoff_sched_write(s, g, o.out, &e);
		if (st == HOFF_OK && o.trace)
			st = hoff_trace_write(g, &r.tl, o.trace, &e);
		if (st != HOFF_OK) {
			rc = hoff_cli_fail(st, &e);
			goto out;
		}
	}
report:;
	double red = np ? 1.0 - (double)r.summary.peak_bytes / (double)np : 0;
	double ovh = r.summary.compute_ps
			     ? (double)r.summary.makespan_ps /
					       (double)r.summary.compute_ps -
				       1.0
			     : 0;
	lbo = rep.lower_bound_ps ? (double)r.summary.makespan_ps /
						   (double)rep.lower_bound_ps -
					   1.0
				 : 0;
	FILE *f = (o.out && !strcmp(o.out, "-")) ? stderr : stdout;
	if (o.json) {
		fprintf(f, "{\"policy\": \"%s\", \"graph\": ", name);
		hoff_json_string(f, g->name ? g->name : "");
		fprintf(f, ", \"valid\": %s, \"feasible\": %s, ",
			r.valid ? "true" : "false",
			budget_ok && rep.feasible && within_peak == HOFF_NONE
				? "true"
				: "false");
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
			"\"none_peak_bytes\": %lld, \"none_makespan_s\": %.17g, "
			"\"reduction\": %.17g, "
			"\"solve_s\": %.6f, \"read_s\": %.6f, \"iterations\": "
			"%d, \"source\": \"%s\", \"device_memory_bytes\": "
			"%lld}\n",
			lbo, (long long)np, nm == HOFF_NONE ? 0 : hoff_s(nm), red,
			solve_s, t1 - t0,
			rep.iterations, rep.source,
			(long long)g->device.memory_bytes);
		goto out;
	}
	/* One line a quantity, each named for what it is measured against
	 * (README's glossary): the plan, its peak against none's, its
	 * makespan over the lower bound and over compute, none's own. */
	fprintf(f, "plan          %s", name);
	if (given) {
		fputs(", the fastest found under the budget ", f);
		print_bytes(f, po.budget_bytes);
		if (strchr(o.budget, '%'))
			fprintf(f, " (--budget %s of the all-resident peak)",
				o.budget);
	} else if (within_peak != HOFF_NONE) {
		fputs(", the fastest found under the device's ", f);
		print_bytes(f, g->device.memory_bytes);
		fprintf(f, ": nothing found within %.4g%% over the lower bound "
			   "fits it",
			100 * po.max_overhead);
	} else if (!baseline) {
		fprintf(f, ", the least peak found within %.4g%% over the "
			   "lower bound",
			100 * po.max_overhead);
	}
	if (!baseline && strcmp(rep.source, "greedy"))
		fprintf(f, " (best candidate: %s)", rep.source);
	fputs("\npeak          ", f);
	print_bytes(f, r.summary.peak_bytes);
	fprintf(f, ", %.2f%% %s none's ", 100 * fabs(red),
		red >= 0 ? "under" : "over");
	print_bytes(f, np);
	fprintf(f, "\nmakespan      %.6g s: %.2f%% over the lower bound %.6g s, "
		   "%.2f%% over compute %.6g s\n",
		hoff_s(r.summary.makespan_ps), 100 * lbo,
		hoff_s(rep.lower_bound_ps), 100 * ovh,
		hoff_s(r.summary.compute_ps));
	if (nm != HOFF_NONE && rep.lower_bound_ps)
		fprintf(f, "none          makespan %.6g s (%.2f%% over the lower "
			   "bound): moves only what it must, keeps the rest "
			   "resident\n",
			hoff_s(nm),
			100 * ((double)nm / (double)rep.lower_bound_ps - 1));
	fputs("moved         h2d ", f);
	print_bytes(f, r.summary.h2d_bytes);
	fputs(", d2h ", f);
	print_bytes(f, r.summary.d2h_bytes);
	fprintf(f, "\nplanned       in %.2f s", solve_s);
	if (!baseline)
		fprintf(f, " (%d plans simulated)", rep.iterations);
	fputc('\n', f);
	if (rc == 0 && !o.out && !o.trace)
		fputs("hint          nothing written: -o schedule.json keeps the "
		      "plan, --trace trace.json its timeline\n",
		      f);
	fflush(f);
out:
	if (rc == 0 && within_peak != HOFF_NONE)
		fprintf(stderr,
			"hoffopt: warning: greedy's least peak within %.4g%% of "
			"the lower bound is %lld B, over the device's %lld B; "
			"this is the fastest plan found that fits, %.4g%% over "
			"the lower bound (try --exact, or a larger "
			"--max-overhead)\n",
			100 * po.max_overhead, (long long)within_peak,
			(long long)g->device.memory_bytes, 100 * lbo);
	else if (rc == 0 && po.kind == HOFF_POLICY_GREEDY &&
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
	"                  [--kv-block N] [--weights auto|device|host]\n"
	"                  [--kv auto|device|host]\n"
	"                  [--optimizer-step end|in-backward]\n"
	"                  [--optimizer-home host|device] [-o GRAPH]\n"
	"       hoffopt gen --list\n"
	"\n"
	"Writes graph.json for a public model at its real dimensions (bf16),\n"
	"op times by the roofline of the machine preset, and says on stderr\n"
	"what it wrote. It models fused kernels: attention as one op that\n"
	"keeps no seq x seq scores, SwiGLU's product inside down_proj, norms\n"
	"that keep only their input (an eager PyTorch trace, formats/torch,\n"
	"holds more at long sequences).\n"
	"Defaults: decode, seq 4096, batch 1, full depth, h100-pcie5, seed 1,\n"
	"-o - (stdout).\n"
	"\n"
	"  --list            models (parameters, bytes), machine presets\n"
	"                    (memory, FLOP/s, link rates)\n"
	"  --weights W       weights' home; auto: the device when the inputs\n"
	"                    fit in 3/4 of it, else the host\n"
	"  --kv K            prefill and decode: the KV cache's home. auto\n"
	"                    (default): blocks of --kv-block tokens (2048) on\n"
	"                    the device, moved to the host when they do not\n"
	"                    fit; device: blocks kept on the device; host: one\n"
	"                    block a layer homed on the host, updated in place\n"
	"                    whole by the layer's attention (a decode step\n"
	"                    writes its layer's cache)\n"
	"  --optimizer-step  train: end (default): every Adam op after the\n"
	"                    whole backward; in-backward: each layer's Adam op\n"
	"                    right after the backward op that finalises its\n"
	"                    last gradient\n"
	"  --optimizer-home  train: where the Adam moments (8 bytes a\n"
	"                    parameter) start; host (default) or device\n";

/* gen --list: the names the options take, with each model's size and
 * each machine preset's figures. */
static void print_gen_list(void)
{
	const char *const *m = hoff_model_names();
	printf("models (bf16, full depth):\n");
	for (; *m; m++) {
		int64_t p = hoff_model_param_count(*m);
		printf("  %-13s %3d layers  %7.2fB params  %8.2f GB\n", *m,
		       (int)hoff_model_depth(*m), (double)p / 1e9,
		       2.0 * (double)p / 1e9);
	}
	printf("phases:");
	for (const char *const *ph = hoff_model_phases(); *ph; ph++)
		printf(" %s", *ph);
	printf("\nmachines:\n");
	for (const char *const *n = hoff_machine_names(); *n; n++) {
		hoff_machine_info x;
		if (!hoff_machine_preset(*n, &x))
			continue;
		printf("  %-11s %-15s %4.0f GB  %4.0f TFLOP/s bf16  HBM %.1f "
		       "TB/s\n",
		       *n, x.device, (double)x.memory_bytes / 1e9,
		       x.flops_per_s / 1e12, x.mem_bandwidth_Bps / 1e12);
		for (int i = 0; i < x.ntiers; i++)
			printf("  %-11s   %-6s %6.0f GB  h2d %3.0f GB/s  d2h %3.0f "
			       "GB/s  latency %2.0f us\n",
			       "", x.tier[i].name,
			       (double)x.tier[i].capacity_bytes / 1e9,
			       x.tier[i].h2d_Bps / 1e9, x.tier[i].d2h_Bps / 1e9,
			       x.tier[i].latency_s * 1e6);
	}
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

/* The line gen prints on stderr once it has written g to out. */
static void gen_summary(const hoff_graph *g, const char *out)
{
	hoff_analysis a;
	hoff_err e = {{0}};
	if (hoff_analyze(g, &a, &e) != HOFF_OK)
		return;
	const double gib = 1024.0 * 1024 * 1024;
	fprintf(stderr,
		"hoffopt: gen: wrote %s: %s, %d ops, %d tensors; compute %.6g "
		"s, lower bound %.6g s; no-offload peak %.2f GiB on a %.2f GiB "
		"device, %.2f GiB homed on tiers\n",
		strcmp(out, "-") ? out : "stdout", g->name, g->nops,
		g->ntensors, hoff_s(a.compute_ps), hoff_s(a.lower_bound_ps),
		(double)a.closed_peak_bytes / gib,
		(double)g->device.memory_bytes / gib,
		(double)a.tier_homed_bytes / gib);
}

static int cmd_gen(int argc, char **argv)
{
	hoff_model_opts mo = hoff_model_defaults();
	const char *out = "-";
	bool have_model = false, have_block = false;
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		long long x;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage_gen, stdout);
			return 0;
		} else if (!strcmp(a, "--list")) {
			print_gen_list();
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
		} else if (!strcmp(a, "--kv")) {
			mo.kv = v;
		} else if (!strcmp(a, "--optimizer-step")) {
			mo.optimizer_step = v;
		} else if (!strcmp(a, "--optimizer-home")) {
			mo.optimizer_home = v;
		} else if (!strcmp(a, "-o")) {
			out = v;
		} else if (!strcmp(a, "--seq") &&
			   parse_int(v, 1, 1 << 24, &x)) {
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
			have_block = true;
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
	if (have_block && mo.kv && !strcmp(mo.kv, "host"))
		return hoff_cli_bad("%s", "gen: --kv host keeps one block a "
					  "layer; --kv-block applies to --kv "
					  "auto|device");
	hoff_err e = {{0}};
	hoff_graph *g = NULL;
	hoff_status st = hoff_model_build(&mo, &g, &e);
	if (st == HOFF_OK)
		st = hoff_graph_write(g, out, &e);
	if (st == HOFF_OK)
		gen_summary(g, out);
	hoff_graph_free(g);
	if (st != HOFF_OK) {
		fprintf(stderr, "hoffopt: gen: %s\n", e.msg);
		return exit_for(st);
	}
	return 0;
}

static int dispatch(int argc, char **argv)
{
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
		return hoff_cmd_run(argc, argv, CUDA_API);
	if (!strcmp(cmd, "calibrate"))
		return hoff_cmd_calibrate(argc, argv, CUDA_API);
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

int main(int argc, char **argv)
{
	hoff_tune_malloc();
	/* Every report ends on stdout: a write that failed there (a full
	 * disk, /dev/full) is an error, not a silent exit 0. */
	return hoff_cli_close_stdout(dispatch(argc, argv));
}
