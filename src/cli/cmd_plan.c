/* cmd_plan.c: `hoffopt --greedy GRAPH` and `hoffopt --policy NAME
 * GRAPH` — the pipeline (pipeline.h) with greedy or a baseline as the
 * planner, then the report: the peak against none's, the makespan over
 * the lower bound and over compute. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baselines.h"
#include "cli.h"
#include "cmd.h"
#include "fileio.h"
#include "graph_json.h"
#include "greedy.h"
#include "pipeline.h"
#include "policy.h"
#include "sim.h"

static const char *const usage =
	"usage: hoffopt --greedy GRAPH [-o SCHEDULE] [--budget B | "
	"--max-overhead X]\n"
	"                [--recompute] [--trace T] [--json] [--progress]\n"
	"       hoffopt --policy NAME GRAPH [same options]\n"
	"\n"
	"Plans where each prefetch, store and detach goes, checks the plan on\n"
	"FORMAT.md's machine model, and writes it as schedule.json.\n"
	"\n"
	"  --policy NAME      none (everything resident, tier-homed tensors\n"
	"                     fetched just before first use), reactive (fetch\n"
	"                     right before each use, evict right after),\n"
	"                     lookahead:N (per-layer prefetch N layers ahead),\n"
	"                     greedy (the cost-model refinement; --greedy),\n"
	"                     checkpoint (per layer: keep its inputs, drop its\n"
	"                     other activations, re-run its forward before\n"
	"                     its backward; FORMAT v2 recompute and drop),\n"
	"                     checkpoint+reactive (the same, tier-homed\n"
	"                     tensors moved as reactive moves them)\n"
	"  -o SCHEDULE        write the schedule there ('-' for stdout)\n"
	"  --budget B         fastest schedule whose peak is at most B: bytes,\n"
	"                     KiB/MiB/GiB/KB/MB/GB, or % of the all-resident\n"
	"                     (no-offload) peak; one over the device's memory\n"
	"                     is capped at it, with a note on stderr\n"
	"  --max-overhead X   without --budget: smallest peak whose makespan is\n"
	"                     at most (1 + X) * lower_bound_s; X as 0.01 or 1%\n"
	"                     (default 1%)\n"
	"  --recompute        also plan with recomputation (FORMAT v2 drop and\n"
	"                     recompute): the policy planned on per-layer\n"
	"                     recompute plans (segments of 1 to 8 layers) and\n"
	"                     without, the best kept; checkpoint and\n"
	"                     checkpoint+reactive recompute already\n"
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

typedef struct plan_opts {
	HOFF_CLI_ARGS; /* GRAPH, --json, --budget, --trace, -o */
	const char *overhead, *policy;
	bool progress, recompute;
} plan_opts;

static const hoff_opt table[] = {
	HOFF_CONST("--greedy", plan_opts, policy, "greedy"),
	HOFF_STR("--policy", plan_opts, policy),
	HOFF_FLAG("--progress", plan_opts, progress),
	HOFF_FLAG("--recompute", plan_opts, recompute),
	HOFF_STR("--max-overhead", plan_opts, overhead),
};

static const hoff_cli_spec spec = {
	.from = 1,
	.npos = 1,
	.common = HOFF_CLI_JSON | HOFF_CLI_BUDGET | HOFF_CLI_TRACE |
		  HOFF_CLI_OUT,
	.table = table,
	.nopts = HOFF_NOPTS(table),
	.usage = usage,
	.missing = "needs one GRAPH (see hoffopt --greedy --help)",
};

/* The planner the pipeline runs: the policy, and for greedy without a
 * budget whose least peak is over the device, the fastest plan that fits
 * it, which is what a user with this card can run (said so in the report
 * with the least peak within the overhead). */
typedef struct plan_ctx {
	hoff_policy_opts po;
	hoff_policy_report rep;
	int64_t within_peak; /* greedy's least peak within the overhead when
				the fallback replaced it; else HOFF_NONE */
} plan_ctx;

static hoff_status plan_policy(hoff_pipeline *p, void *ctx, hoff_err *e)
{
	plan_ctx *c = ctx;
	c->po.budget_bytes = p->budget_bytes;
	c->po.analysis = &p->an;
	/* The fit under the device below would plan greedy's baselines
	 * again: the first run keeps them (NULL on OOM: planned again). */
	hoff_greedy_memo *memo = NULL;
	if (c->po.kind == HOFF_POLICY_GREEDY &&
	    c->po.budget_bytes == HOFF_NONE && !c->po.recompute)
		memo = hoff_greedy_memo_new();
	c->po.memo = memo;
	hoff_status st = hoff_policy_run(p->g, &c->po, &p->s, &c->rep, e);
	/* (not when greedy's floor, what one op needs, is over the device:
	 * nothing fits it, said so in the report) */
	if (st != HOFF_OK || c->po.kind != HOFF_POLICY_GREEDY ||
	    c->po.budget_bytes != HOFF_NONE ||
	    c->rep.peak_bytes <= p->g->device.memory_bytes ||
	    c->rep.floor_bytes > p->g->device.memory_bytes)
		goto out;
	hoff_policy_opts fo = c->po;
	fo.budget_bytes = p->g->device.memory_bytes;
	hoff_sched *fs = NULL;
	hoff_policy_report frep;
	st = hoff_policy_run(p->g, &fo, &fs, &frep, e);
	if (st == HOFF_OK && frep.feasible) {
		c->within_peak = c->rep.peak_bytes;
		hoff_sched_free(p->s);
		p->s = fs;
		c->rep = frep;
	} else {
		hoff_sched_free(fs);
	}
out:
	c->po.memo = NULL;
	hoff_greedy_memo_free(memo);
	return st;
}

/* Why no schedule fits under cap: one op's operands and workspace are
 * over it; and the least peak greedy met (greedy's report). */
static void floor_line(const hoff_graph *g, const hoff_policy_report *rep,
		       int64_t cap)
{
	char sa[4 * HOFF_ERRLEN];
	fprintf(stderr,
		"hoffopt: none can: op \"%s\" alone needs %lld B, over %lld "
		"B (its inputs, updates, outputs and workspace); the least "
		"peak found at any makespan is %lld B (%s, %.6g s)\n",
		hoff_cli_safe(g->op[rep->floor_op].id, sa, sizeof sa),
		(long long)rep->floor_bytes, (long long)cap,
		(long long)rep->least_peak_bytes, rep->least_source,
		hoff_s(rep->least_makespan_ps));
}

int hoff_cmd_plan(int argc, char **argv)
{
	plan_opts o = {0};
	int rc;
	if (hoff_cli_command(argc, argv, &spec, &o, &rc))
		return rc;
	plan_ctx c = {.po = hoff_policy_defaults(), .within_peak = HOFF_NONE};
	hoff_policy_opts *po = &c.po;
	if (!o.policy || !hoff_policy_parse(o.policy, po))
		return hoff_cli_bad(
			"unknown policy '%s' (none, reactive, lookahead:N, "
			"greedy, checkpoint, checkpoint+reactive)",
			o.policy ? o.policy : "");
	if (o.budget && o.overhead)
		return hoff_cli_bad(
			"%s", "--budget and --max-overhead exclude each other");
	if (o.overhead && (po->max_overhead = hoff_cli_frac(o.overhead)) < 0)
		return hoff_cli_bad(
			"--max-overhead: '%s' is not an overhead (0.01 or 1%%)",
			o.overhead);
	if (o.progress)
		po->progress = hoff_cli_progress;
	po->recompute = o.recompute;
	if ((rc = hoff_cli_clobbers((const char *[]){o.out, o.trace}, 2, o.pos,
				    1)))
		return rc;
	char name[32];
	hoff_policy_name(po, name, sizeof name);
	hoff_pipeline p = {.graph_file = o.pos[0],
			   .budget_arg = o.budget,
			   .name = name,
			   .timeline = o.trace != NULL,
			   .plan = plan_policy,
			   .ctx = &c};
	hoff_err e = {{0}};
	hoff_sched *none = NULL;
	hoff_sim_result rn = {0};
	const hoff_policy_report *rep = &c.rep;
	double lbo = 0; /* the schedule's overhead over the lower bound */
	hoff_status st = hoff_pipeline_run(&p, &e);
	const hoff_graph *g = p.g;
	const hoff_sim_result *r = &p.r;
	/* Policy none's simulated peak: the run's, when it simulated it. */
	int64_t np = st == HOFF_OK ? rep->none_peak_bytes : HOFF_NONE;
	int64_t nm = st == HOFF_OK ? rep->none_makespan_ps : HOFF_NONE;
	if (st == HOFF_OK && np == HOFF_NONE) {
		hoff_policy_opts no = *po;
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
	if (rep->note[0])
		fprintf(stderr, "hoffopt: note: %s\n", rep->note);
	const double solve_s = p.plan_s;
	/* The budget the plan must meet: --budget, else the device's memory
	 * (FORMAT.md rule 8), for greedy and the baselines alike. */
	const bool given = p.budget_bytes != HOFF_NONE;
	bool budget_ok = r->summary.peak_bytes <= p.budget;
	bool baseline = po->kind != HOFF_POLICY_GREEDY;
	if (!r->valid) {
		char line[4 * HOFF_ERRLEN];
		hoff_pipeline_violation(&p, line, sizeof line);
		if (baseline && r->viol[0].rule == 8) {
			/* The baselines plan without the tiers' capacities
			 * (simulated with no device budget, rule 8 here is a
			 * tier's): a limit of theirs, not a bug. */
			fprintf(stderr,
				"hoffopt: policy %s cannot plan within the "
				"tiers' capacities (a baseline does not track "
				"them): %s; nothing written\n",
				name, line);
			rc = HOFF_EXIT_INVALID;
			budget_ok = false;
			goto report;
		}
		/* A bug, never a user error: say so rather than write it. */
		fprintf(stderr,
			"hoffopt: internal error: %s planned an invalid "
			"schedule: %s\n",
			name, line);
		rc = HOFF_EXIT_INTERNAL;
		goto out;
	}
	if (!budget_ok && given) {
		fprintf(stderr,
			"hoffopt: budget %lld B cannot be met by %s: the "
			"smallest peak found is %lld B (try --budget %lld)\n",
			(long long)p.budget_bytes, name,
			(long long)r->summary.peak_bytes,
			(long long)r->summary.peak_bytes);
		if (!baseline && rep->floor_bytes > p.budget)
			floor_line(g, rep, p.budget);
		rc = HOFF_EXIT_INVALID;
	} else if (!budget_ok) {
		fprintf(stderr,
			"hoffopt: %s's schedule peaks at %lld B, over the "
			"device's %lld B (machine.device.memory_bytes)%s; "
			"nothing written\n",
			name, (long long)r->summary.peak_bytes,
			(long long)p.budget,
			baseline ? ": this baseline does not fit the device"
				 : ": no schedule found fits the device");
		if (!baseline && rep->floor_bytes > p.budget)
			floor_line(g, rep, p.budget);
		rc = HOFF_EXIT_INVALID;
	} else if ((st = hoff_pipeline_write(&p, o.out, o.trace, &e)) !=
		   HOFF_OK) {
		rc = hoff_cli_fail(st, &e);
		goto out;
	}
report:;
	double red = np ? 1.0 - (double)r->summary.peak_bytes / (double)np : 0;
	double ovh =
		hoff_cli_over(r->summary.makespan_ps, r->summary.compute_ps);
	lbo = hoff_cli_over(r->summary.makespan_ps, rep->lower_bound_ps);
	FILE *f = (o.out && !strcmp(o.out, "-")) ? stderr : stdout;
	if (o.json) {
		fprintf(f, "{\"policy\": \"%s\", \"graph\": ", name);
		hoff_json_string(f, g->name ? g->name : "");
		fprintf(f, ", \"valid\": %s, \"feasible\": %s, ",
			r->valid ? "true" : "false",
			budget_ok && rep->feasible && c.within_peak == HOFF_NONE
				? "true"
				: "false");
		if (!given)
			fprintf(f,
				"\"budget_bytes\": null, \"max_overhead\": "
				"%.17g, ",
				po->max_overhead);
		else
			fprintf(f,
				"\"budget_bytes\": %lld, \"max_overhead\": "
				"null, ",
				(long long)p.budget_bytes);
		hoff_json_summary_v2(f, &r->summary,
				     g->version >= 2 ||
					     (p.s && hoff_sched_uses_v2(p.s)));
		fputs(", ", f);
		hoff_json_overhead(f, &r->summary);
		fputs(", ", f);
		hoff_json_time(f, "lower_bound_s", rep->lower_bound_ps);
		fprintf(f,
			", \"overhead_vs_lower_bound\": %.17g, "
			"\"none_peak_bytes\": %lld, \"none_makespan_s\": %.17g, "
			"\"reduction\": %.17g, "
			"\"solve_s\": %.6f, \"read_s\": %.6f, \"iterations\": "
			"%d, \"source\": \"%s\", \"device_memory_bytes\": "
			"%lld}\n",
			lbo, (long long)np, nm == HOFF_NONE ? 0 : hoff_s(nm),
			red, solve_s, p.read_s, rep->iterations, rep->source,
			(long long)g->device.memory_bytes);
		goto out;
	}
	/* One line a quantity, each named for what it is measured against
	 * (README's glossary): the plan, its peak against none's, its
	 * makespan over the lower bound and over compute, none's own. */
	fprintf(f, "plan          %s", name);
	if (given) {
		fputs(", the fastest found under the budget ", f);
		hoff_cli_bytes(f, po->budget_bytes);
		if (p.budget_capped)
			fprintf(f, " (--budget %s, capped at the device)",
				o.budget);
		else if (strchr(o.budget, '%'))
			fprintf(f, " (--budget %s of the all-resident peak)",
				o.budget);
	} else if (c.within_peak != HOFF_NONE) {
		fputs(", the fastest found under the device's ", f);
		hoff_cli_bytes(f, g->device.memory_bytes);
		fprintf(f,
			": nothing found within %.4g%% over the lower bound "
			"fits it",
			100 * po->max_overhead);
	} else if (!baseline && lbo > po->max_overhead) {
		fprintf(f,
			", the fastest found: none within %.4g%% over the "
			"lower bound",
			100 * po->max_overhead);
	} else if (!baseline) {
		fprintf(f,
			", the least peak found within %.4g%% over the "
			"lower bound",
			100 * po->max_overhead);
	}
	if (!baseline && strcmp(rep->source, "greedy"))
		fprintf(f, " (best candidate: %s)", rep->source);
	fputs("\npeak          ", f);
	hoff_cli_bytes(f, r->summary.peak_bytes);
	fprintf(f, ", %.2f%% %s none's ", 100 * fabs(red),
		red >= 0 ? "under" : "over");
	hoff_cli_bytes(f, np);
	fprintf(f,
		"\nmakespan      %.6g s: %.2f%% over the lower bound %.6g s, "
		"%.2f%% over compute %.6g s\n",
		hoff_s(r->summary.makespan_ps), 100 * lbo,
		hoff_s(rep->lower_bound_ps), 100 * ovh,
		hoff_s(r->summary.compute_ps));
	if (r->summary.recompute_ps) /* (v2) */
		fprintf(f, "recompute     %.6g s (ops re-run), stall %.6g s\n",
			hoff_s(r->summary.recompute_ps),
			hoff_s(r->summary.stall_ps));
	if (nm != HOFF_NONE && rep->lower_bound_ps)
		fprintf(f,
			"none          makespan %.6g s (%.2f%% over the lower "
			"bound): moves only what it must, keeps the rest "
			"resident\n",
			hoff_s(nm),
			100 * hoff_cli_over(nm, rep->lower_bound_ps));
	fputs("moved         h2d ", f);
	hoff_cli_bytes(f, r->summary.h2d_bytes);
	fputs(", d2h ", f);
	hoff_cli_bytes(f, r->summary.d2h_bytes);
	fprintf(f, "\nplanned       in %.2f s", solve_s);
	if (!baseline)
		fprintf(f, " (%d plans simulated)", rep->iterations);
	fputc('\n', f);
	if (rc == 0 && !o.out && !o.trace)
		fputs("hint          nothing written: -o schedule.json keeps the "
		      "plan, --trace trace.json its timeline\n",
		      f);
	fflush(f);
out:
	if (rc == 0 && c.within_peak != HOFF_NONE)
		fprintf(stderr,
			"hoffopt: warning: greedy's least peak within %.4g%% of "
			"the lower bound is %lld B, over the device's %lld B; "
			"this is the fastest plan found that fits, %.4g%% over "
			"the lower bound (try --exact, or a larger "
			"--max-overhead)\n",
			100 * po->max_overhead, (long long)c.within_peak,
			(long long)g->device.memory_bytes, 100 * lbo);
	else if (rc == 0 && po->kind == HOFF_POLICY_GREEDY &&
		 po->budget_bytes == HOFF_NONE && !rep->feasible &&
		 lbo <= po->max_overhead)
		fprintf(stderr,
			"hoffopt: warning: greedy's least peak within %.4g%% "
			"of the lower bound is %lld B, over the device's %lld "
			"B (%d plans simulated)\n",
			100 * po->max_overhead, (long long)rep->peak_bytes,
			(long long)g->device.memory_bytes, rep->iterations);
	else if (rc == 0 && po->kind == HOFF_POLICY_GREEDY &&
		 po->budget_bytes == HOFF_NONE && !rep->feasible)
		fprintf(stderr,
			"hoffopt: warning: greedy's best schedule is %.4g%% "
			"over the lower bound, past the %.4g%% asked (%d plans "
			"simulated; a schedule within it may still exist: try "
			"--exact)\n",
			100 * lbo, 100 * po->max_overhead, rep->iterations);
	hoff_sim_result_free(&rn);
	hoff_sched_free(none);
	hoff_pipeline_free(&p);
	return rc;
}
