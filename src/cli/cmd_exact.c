/* cmd_exact.c: `hoffopt --exact` — read the graph, run the exact
 * pipeline (solver/ilp.h), simulate what it returns, write the schedule
 * and report; and the options and report lines it shares with `compare`
 * (cmd_exact.h, cmd_compare.c). Mirrors cmd_plan.c's `--policy`: same
 * budget syntax, same output style and exit codes (0 ok, 1 infeasible or
 * over the device, 2 bad input or usage, 3 internal error). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "cli.h"
#include "cmd.h"
#include "cmd_exact.h"
#include "fileio.h"
#include "graph_json.h"
#include "ilp.h"
#include "pipeline.h"
#include "sched_json.h"
#include "sim.h"
#include "trace_json.h"

const char *const hoff_usage_exact =
	"usage: hoffopt --exact GRAPH [-o SCHEDULE] [--budget B | "
	"--max-overhead X]\n"
	"                [--time-limit S] [--gap G] [--trace T] [--json]\n"
	"                [--write-lp F] [--write-mps F] [--write-probe F]\n"
	"                [--stride K] [--all-candidates] [--recompute]\n"
	"                [--quiet] [--verbose]\n"
	"\n"
	"Plans with a mixed-integer model of the stages (solver/README.md),\n"
	"solved by GLPK with greedy's schedule as the first incumbent; the\n"
	"solution is decoded into a schedule and checked on FORMAT.md's\n"
	"machine model. Never returns a schedule worse than greedy's.\n"
	"\n"
	"  -o SCHEDULE        write the schedule there ('-' for stdout)\n"
	"  --budget B         least total stall with peak at most B: bytes,\n"
	"                     KiB/MiB/GiB/KB/MB/GB, or % of the no-offload peak\n"
	"                     (capped at the device's memory, with a note)\n"
	"  --max-overhead X   without --budget: least peak with makespan at\n"
	"                     most (1 + X) * lower_bound_s (default 1%)\n"
	"  --time-limit S     solver time limit in seconds (default 60)\n"
	"  --gap G            stop at relative gap G (0.01 or 1%; default 0)\n"
	"  --trace T          write a Chrome trace of the simulated schedule\n"
	"  --json             one JSON object on stdout\n"
	"  --write-lp F       write the model in CPLEX LP format (for CBC,\n"
	"  --write-mps F      HiGHS, Gurobi) and in free MPS; without\n"
	"                     --budget, the min-peak model (one MIP with the\n"
	"                     optimum the peak search proves)\n"
	"  --write-probe F    without --budget, when the gap stays open: the\n"
	"                     question that would close it, one feasibility\n"
	"                     MIP (\"a peak at most the next possible one under\n"
	"                     the best, within the bound?\"); infeasible, the\n"
	"                     best is optimal (LP format; MPS if F ends .mps)\n"
	"  --stride K         decisions every K ops (default: automatic)\n"
	"  --all-candidates   let tensors under 1/4096 of the no-offload peak\n"
	"                     move too (default: greedy's candidates, which\n"
	"                     only drop their clean copies after last use)\n"
	"  --recompute        (v2) also drop activations and re-run their\n"
	"                     producer before the next use (recompute and\n"
	"                     drop steps; solver/README.md, rows (15)-(17))\n"
	"  --quiet            no progress lines on stderr\n"
	"  --verbose          GLPK's own log on stderr\n"
	"\n"
	"Exit codes: 0 ok, 1 infeasible or over the device's memory_bytes\n"
	"(nothing is written), 2 bad input or usage, 3 internal error (a bug).\n";

/* compare's usage sits here, beside exact's, as the option parser
 * below prints both: cmd_compare.c calls into this file, never back. */
const char *const hoff_usage_compare =
	"usage: hoffopt compare GRAPH [--budget B | --max-overhead X]\n"
	"                [--time-limit S] [--gap G] [--json] [...]\n"
	"\n"
	"Runs greedy and the exact scheduler on GRAPH and prints, side by\n"
	"side, the objective (total stall under a budget, else the peak),\n"
	"the exact solver's bound, each one's gap to it, the simulated peak\n"
	"and makespan, and the time each took. Options as hoffopt --exact.\n";

/* compare takes the same options less the outputs of a schedule. */
#define XOPTS_COMMON                                                  \
	HOFF_FLAG("--quiet", xopts, quiet),                           \
		HOFF_UNFLAG("--progress", xopts, quiet),              \
		HOFF_FLAG("--verbose", xopts, verbose),               \
		HOFF_FLAG("--no-incumbent", xopts, no_incumbent),     \
		HOFF_FLAG("--all-candidates", xopts, all_candidates), \
		HOFF_STR("--max-overhead", xopts, overhead),          \
		HOFF_STR("--write-lp", xopts, lp),                    \
		HOFF_STR("--write-mps", xopts, mps),                  \
		HOFF_STR("--time-limit", xopts, time_limit),          \
		HOFF_STR("--gap", xopts, gap),                        \
		HOFF_STR("--stride", xopts, stride)

static const hoff_opt exact_table[] = {
	XOPTS_COMMON,
	HOFF_STR("--write-probe", xopts, probe),
	HOFF_FLAG("--recompute", xopts, recompute),
};

static const hoff_opt compare_table[] = {XOPTS_COMMON};

bool hoff_xopts_parse(int argc, char **argv, xopts *o, bool compare, int *rc)
{
	const unsigned json_budget = HOFF_CLI_JSON | HOFF_CLI_BUDGET;
	const hoff_cli_spec sp = {
		.from = 2,
		.npos = 1,
		.common = compare ? json_budget
				  : json_budget | HOFF_CLI_TRACE | HOFF_CLI_OUT,
		.table = compare ? compare_table : exact_table,
		.nopts = compare ? HOFF_NOPTS(compare_table)
				 : HOFF_NOPTS(exact_table),
		.usage = compare ? hoff_usage_compare : hoff_usage_exact,
		.missing =
			compare ? "compare needs one GRAPH (see hoffopt "
				  "compare --help)"
				: "needs one GRAPH (see hoffopt --exact --help)",
	};
	memset(o, 0, sizeof *o);
	return hoff_cli_command(argc, argv, &sp, o, rc);
}

int hoff_xopts_clobbers(const xopts *x)
{
	const char *outs[] = {x->out, x->trace, x->lp, x->mps, x->probe};
	return hoff_cli_clobbers(outs, 5, x->pos, 1);
}

void hoff_exact_json_num(FILE *f, const char *key, bool has, double v)
{
	if (has)
		fprintf(f, "\"%s\": %.17g", key, v);
	else
		fprintf(f, "\"%s\": null", key);
}

int hoff_xopts_setup(const xopts *x, hoff_ilp_opts *io)
{
	*io = hoff_ilp_defaults();
	if (x->budget && x->overhead)
		return hoff_cli_bad(
			"%s", "--budget and --max-overhead exclude each other");
	if (x->budget && x->probe)
		return hoff_cli_bad("%s", "--write-probe asks about the least "
					  "peak: it needs overhead mode (no "
					  "--budget)");
	if (x->overhead && (io->max_overhead = hoff_cli_frac(x->overhead)) < 0)
		return hoff_cli_bad(
			"--max-overhead: '%s' is not an overhead (0.01 or "
			"1%%)",
			x->overhead);
	if (x->time_limit &&
	    (!hoff_cli_real(x->time_limit, &io->time_limit_s) ||
	     io->time_limit_s > 1e6))
		return hoff_cli_bad("--time-limit: '%s' is not a number of "
				    "seconds",
				    x->time_limit);
	if (x->gap && ((io->gap = hoff_cli_frac(x->gap)) < 0 || io->gap >= 1))
		return hoff_cli_bad(
			"--gap: '%s' is not a relative gap (0.01 or 1%%)",
			x->gap);
	int64_t stride;
	if (x->stride) {
		if (!hoff_cli_int(x->stride, 1, 1000000, &stride))
			return hoff_cli_bad(
				"--stride: '%s' is not a positive count",
				x->stride);
		io->stride = (int32_t)stride;
	}
	io->write_lp = x->lp;
	io->write_mps = x->mps;
	io->write_probe = x->probe;
	if (!x->quiet)
		io->progress = hoff_cli_progress;
	io->verbose = x->verbose;
	io->incumbent = !x->no_incumbent;
	io->all_candidates = x->all_candidates;
	io->recompute = x->recompute;
	return 0;
}

double hoff_exact_greedy_gap(const hoff_exact_report *r)
{
	double go = hoff_exact_objective(r->budget_mode, &r->greedy);
	return go > 0 ? (go - r->bound) / go : 0;
}

void hoff_exact_source_line(FILE *f, const hoff_exact_report *r)
{
	if (strcmp(r->source, "greedy") != 0)
		return;
	fprintf(f, "exact returns greedy's schedule: %s\n",
		r->note[0] ? r->note
			   : "the model's solution simulated no better");
}

char *hoff_exact_gap_cell(char *buf, size_t n, double obj, double bound)
{
	double d = obj - bound;
	if (d >= 0)
		snprintf(buf, n, "%.3f%%", obj > 0 ? 100 * d / obj : 0.0);
	else /* a schedule outside the candidates beats their bound */
		snprintf(buf, n, "below");
	return buf;
}

void hoff_exact_model_line(FILE *f, const hoff_exact_report *r)
{
	fprintf(f,
		"model: %d ops, %d candidate tensors, %d intervals, %d columns "
		"(%d binary), %d rows, stride %d; %" PRId64 " nodes; "
		"incumbent %s\n",
		r->nops, r->ncand, r->niv, r->ncols, r->nbin, r->nrows,
		r->stride, r->nodes,
		r->incumbent_accepted ? "greedy's"
		: r->incumbent_given  ? "offered, not taken"
				      : "none");
	if (r->nrc > 0)
		fprintf(f, "recompute: %d candidates in the model\n", r->nrc);
	if (r->probes > 0)
		fprintf(f,
			"peak search: %d budget-mode probes, %d answered by the "
			"root's cuts (solver/README.md)\n",
			r->probes, r->probes_cut);
}

/* The pipeline's planner: the exact pipeline of solver/ilp.h. */
typedef struct exact_ctx {
	hoff_ilp_opts io;
	hoff_exact_report rep;
} exact_ctx;

static hoff_status plan_exact(hoff_pipeline *p, void *ctx, hoff_err *e)
{
	exact_ctx *c = ctx;
	c->io.budget_bytes = p->budget_bytes;
	c->io.analysis = &p->an;
	hoff_status st = hoff_exact_run(p->g, &c->io, &p->s, &c->rep, e);
	/* no legal schedule at all (greedy has none on a repeat graph it
	 * does not send home, and the model none within the objective):
	 * a plan that does not fit, not a bug */
	if (st == HOFF_OK && !p->s)
		st = hoff_seterr(e, HOFF_EINVALID,
				 "exact: no legal schedule: the model is %s "
				 "(%.200s)",
				 hoff_exact_status_name(&c->rep),
				 c->rep.note[0] ? c->rep.note : "no note");
	return st;
}

int hoff_cmd_exact(int argc, char **argv)
{
	xopts x;
	int rc;
	if (hoff_xopts_parse(argc, argv, &x, false, &rc))
		return rc;
	exact_ctx c;
	memset(&c, 0, sizeof c);
	if ((rc = hoff_xopts_setup(&x, &c.io)) ||
	    (rc = hoff_xopts_clobbers(&x)))
		return rc;
	const hoff_ilp_opts io = c.io; /* less the budget: p.budget_bytes */
	hoff_pipeline p = {.graph_file = x.pos[0],
			   .budget_arg = x.budget,
			   .name = "exact",
			   .timeline = x.trace != NULL,
			   .plan = plan_exact,
			   .ctx = &c};
	hoff_err e = {{0}};
	hoff_status st = hoff_pipeline_run(&p, &e);
	if (st != HOFF_OK) {
		rc = hoff_cli_fail(st, &e);
		goto out;
	}
	const hoff_graph *g = p.g;
	const hoff_sim_result r = p.r;
	const hoff_exact_report rep = c.rep;
	bool budget_ok = r.summary.peak_bytes <= p.budget;
	if (!r.valid) {
		char line[4 * HOFF_ERRLEN];
		hoff_pipeline_violation(&p, line, sizeof line);
		fprintf(stderr,
			"hoffopt: internal error: exact planned an invalid "
			"schedule: %s\n",
			line);
		rc = HOFF_EXIT_INTERNAL;
		goto out;
	}
	if (rep.feasible && !budget_ok) {
		fprintf(stderr,
			"hoffopt: exact's schedule peaks at %" PRId64
			" B, over the device's %" PRId64
			" B (machine.device.memory_bytes); nothing written\n",
			r.summary.peak_bytes, p.budget);
		rc = HOFF_EXIT_INVALID;
	} else if (!rep.feasible) {
		if (rep.budget_mode)
			fprintf(stderr,
				"hoffopt: budget %" PRId64 " B cannot be met: "
				"the model is %s and the smallest peak found "
				"is %" PRId64 " B\n",
				p.budget_bytes,
				rep.status == HOFF_ILP_INFEASIBLE ? "infeasible"
								  : "unsolved",
				r.summary.peak_bytes);
		else
			fprintf(stderr,
				"hoffopt: no schedule within %.4g%% of the lower "
				"bound was found (the model is %s); the best "
				"makespan is %.6g s\n",
				100 * io.max_overhead,
				hoff_ilp_status_name(rep.status),
				hoff_s(r.summary.makespan_ps));
		rc = HOFF_EXIT_INVALID;
	} else if ((st = hoff_pipeline_write(&p, x.out, x.trace, &e)) !=
		   HOFF_OK) {
		rc = hoff_cli_fail(st, &e);
		goto out;
	}
	const char *okind = !rep.budget_mode ? "peak_bytes"
			    : io.recompute   ? "stall_s+recompute_s"
					     : "stall_s";
	double sim_obj = hoff_exact_objective(rep.budget_mode, &r.summary);
	int64_t pred_err = rep.predicted_makespan_ps - rep.decoded.makespan_ps;
	FILE *f = (x.out && !strcmp(x.out, "-")) ? stderr : stdout;
	if (x.json) {
		fputs("{\"policy\": \"exact\", \"graph\": ", f);
		hoff_json_string(f, g->name ? g->name : "");
		fprintf(f, ", \"status\": \"%s\", \"objective_kind\": \"%s\", ",
			hoff_exact_status_name(&rep), okind);
		hoff_exact_json_num(f, "objective", rep.has_objective,
				    rep.objective);
		fputs(", ", f);
		hoff_exact_json_num(f, "bound", rep.has_bound, rep.bound);
		fputs(", ", f);
		hoff_exact_json_num(f, "gap", rep.has_gap, rep.gap);
		fprintf(f, ", \"solve_s\": %.6f, \"build_s\": %.6f, ",
			rep.solve_s, rep.build_s);
		fprintf(f, "\"valid\": %s, \"feasible\": %s, ",
			r.valid ? "true" : "false",
			rep.feasible ? "true" : "false");
		if (p.budget_bytes == HOFF_NONE)
			fprintf(f,
				"\"budget_bytes\": null, \"max_overhead\": "
				"%.17g, ",
				io.max_overhead);
		else
			fprintf(f,
				"\"budget_bytes\": %" PRId64
				", \"max_overhead\": null, ",
				p.budget_bytes);
		hoff_json_summary(f, &r.summary);
		fprintf(f, ", \"overhead_vs_lower_bound\": %.17g, ",
			hoff_cli_over(r.summary.makespan_ps,
				      rep.lower_bound_ps));
		hoff_json_time(f, "lower_bound_s", rep.lower_bound_ps);
		fprintf(f,
			", \"simulated_objective\": %.17g, \"source\": "
			"\"%s\", ",
			sim_obj, rep.source);
		if (rep.has_objective) {
			hoff_json_time(f, "predicted_makespan_s",
				       rep.predicted_makespan_ps);
			fprintf(f, ", \"predicted_peak_bytes\": %" PRId64 ", ",
				rep.predicted_peak_bytes);
		} else {
			fputs("\"predicted_makespan_s\": null, "
			      "\"predicted_peak_bytes\": null, ",
			      f);
		}
		if (rep.has_decoded) {
			fputs("\"decoded\": {", f);
			hoff_json_summary(f, &rep.decoded);
			fprintf(f, ", \"valid\": %s}, ",
				rep.decoded_valid ? "true" : "false");
			fprintf(f, "\"prediction_error_s\": %.17g, ",
				hoff_s(pred_err));
		} else {
			fputs("\"decoded\": null, \"prediction_error_s\": null, ",
			      f);
		}
		fputs("\"greedy\": {", f);
		hoff_json_summary(f, &rep.greedy);
		fprintf(f, ", \"objective\": %.17g, \"feasible\": %s}, ",
			hoff_exact_objective(rep.budget_mode, &rep.greedy),
			rep.greedy_feasible ? "true" : "false");
		fprintf(f,
			"\"model\": {\"ops\": %d, \"candidates\": %d, "
			"\"intervals\": %d, \"columns\": %d, \"binaries\": %d, "
			"\"rows\": %d, \"nonzeros\": %" PRId64
			", \"stride\": %d, \"nodes\": %" PRId64
			", \"probes\": %d, \"probes_cut\": %d}, \"incumbent\": "
			"\"%s\", ",
			rep.nops, rep.ncand, rep.niv, rep.ncols, rep.nbin,
			rep.nrows, rep.nnz, rep.stride, rep.nodes, rep.probes,
			rep.probes_cut,
			rep.incumbent_accepted ? "accepted"
			: rep.incumbent_given  ? "offered"
					       : "none");
		if (io.recompute)
			fprintf(f, "\"recompute_candidates\": %d, ", rep.nrc);
		hoff_exact_json_num(f, "probe_peak", rep.probe_peak > 0,
				    (double)rep.probe_peak);
		fputs(", \"note\": ", f);
		hoff_json_string(f, rep.note);
		fputs(", \"restriction\": ", f);
		hoff_json_string(f, rep.restriction);
		fputs("}\n", f);
		goto out;
	}
	hoff_exact_source_line(f, &rep);
	/* both overheads, named as the README's glossary names them:
	 * --max-overhead limits the first */
	fprintf(f, "%-8s %-23s %14s %12s %12s %10s %12s %14s %14s %9s\n",
		"policy", "status", "peak_bytes", "makespan_s", "stall_s",
		"over_bound", "over_compute", "h2d_bytes", "d2h_bytes",
		"solve_s");
	double ovh = hoff_cli_over(r.summary.makespan_ps, r.summary.compute_ps);
	double ovb = hoff_cli_over(r.summary.makespan_ps, rep.lower_bound_ps);
	fprintf(f,
		"%-8s %-23s %14" PRId64 " %12.6g %12.6g %9.2f%% %11.2f%% "
		"%14" PRId64 " %14" PRId64 " %9.3f\n",
		"exact", hoff_exact_status_name(&rep), r.summary.peak_bytes,
		hoff_s(r.summary.makespan_ps), hoff_s(r.summary.stall_ps),
		100 * ovb, 100 * ovh, r.summary.h2d_bytes, r.summary.d2h_bytes,
		rep.solve_s);
	fprintf(f, "objective (%s): ", okind);
	if (rep.has_objective)
		fprintf(f, "model %.9g", rep.objective);
	else
		fputs("model none", f);
	if (rep.has_bound)
		fprintf(f, ", bound over candidates %.9g", rep.bound);
	if (rep.has_gap)
		fprintf(f, ", gap %.4f%%", 100 * rep.gap);
	fprintf(f, "; simulated %.9g (%s's schedule)\n", sim_obj, rep.source);
	if (rep.has_decoded && pred_err == 0)
		fprintf(f, "predicted makespan %.9g s = simulated\n",
			hoff_s(rep.predicted_makespan_ps));
	else if (rep.has_decoded)
		fprintf(f,
			"predicted makespan %.9g s, decoded schedule simulates "
			"%.9g s (%+.3g s, %+.3f%%: the stage model shares a "
			"channel where the machine serves first come first "
			"served)%s\n",
			hoff_s(rep.predicted_makespan_ps),
			hoff_s(rep.decoded.makespan_ps), hoff_s(pred_err),
			rep.decoded.makespan_ps
				? 100.0 * (double)pred_err /
					  (double)rep.decoded.makespan_ps
				: 0.0,
			rep.repair_moves ? "; repaired by local search" : "");
	fprintf(f,
		"greedy: objective %.9g, peak %" PRId64 " B, makespan %.9g s",
		hoff_exact_objective(rep.budget_mode, &rep.greedy),
		rep.greedy.peak_bytes, hoff_s(rep.greedy.makespan_ps));
	if (rep.has_bound && hoff_exact_greedy_gap(&rep) >= 0)
		fprintf(f, ", gap to the model's bound %.4f%%",
			100 * hoff_exact_greedy_gap(&rep));
	else if (rep.has_bound)
		fputs(", below the model's bound (outside its candidates)", f);
	fputc('\n', f);
	hoff_exact_model_line(f, &rep);
	if (x.probe && rep.probe_peak)
		fprintf(f,
			"probe: %s asks for a peak of at most %" PRId64
			" B within the bound; infeasible, the best (%.9g B) is "
			"optimal\n",
			x.probe, rep.probe_peak, rep.objective);
	else if (x.probe)
		fprintf(f, "probe: none written (%s)\n",
			rep.status == HOFF_ILP_OPTIMAL
				? "the best is proven optimal"
				: "no schedule within the bound is known");
	if (rep.note[0])
		fprintf(f, "note: %s\n", rep.note);
	if (rep.restriction[0])
		fprintf(f, "status and bound are %s\n", rep.restriction);
	fflush(f);
out:
	hoff_pipeline_free(&p);
	return rc;
}
