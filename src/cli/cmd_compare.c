/* cmd_compare.c: `hoffopt compare` — greedy and the exact scheduler on
 * one graph, side by side: each one's objective, the exact solver's
 * bound and each one's gap to it, the simulated peak and makespan, the
 * time each took. Options as `--exact` less its outputs (cmd_exact.h).
 * Exit codes: 0 ok, 1 when exact's schedule does not meet the objective
 * or the device, 2 bad input or usage, 3 internal error. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd.h"
#include "cmd_exact.h"
#include "fileio.h"
#include "graph_json.h"
#include "ilp.h"
#include "sim.h"

int hoff_cmd_compare(int argc, char **argv)
{
	xopts x;
	int rc;
	if (hoff_xopts_parse(argc, argv, &x, true, &rc))
		return rc;
	hoff_ilp_opts io;
	if ((rc = hoff_xopts_setup(&x, &io)) || (rc = hoff_xopts_clobbers(&x)))
		return rc;
	hoff_err e = {{0}};
	hoff_graph *g = NULL;
	hoff_sched *s = NULL;
	hoff_exact_report rep;
	memset(&rep, 0, sizeof rep);
	hoff_status st = hoff_graph_read(x.pos[0], &g, &e);
	if (st == HOFF_OK)
		st = hoff_cli_plan_budget(g, x.budget, &io.budget_bytes,
					  &(bool){false}, &e);
	if (st == HOFF_OK)
		st = hoff_exact_run(g, &io, &s, &rep, &e);
	if (st != HOFF_OK) {
		rc = hoff_cli_fail(st, &e);
		goto out;
	}
	rc = rep.feasible && (rep.budget_mode ||
			      rep.best.peak_bytes <= g->device.memory_bytes)
		     ? 0
		     : HOFF_EXIT_INVALID;
	const char *okind = rep.budget_mode ? "stall_s" : "peak_bytes";
	double gobj = hoff_exact_objective(rep.budget_mode, &rep.greedy);
	double xobj = hoff_exact_objective(rep.budget_mode, &rep.best);
	FILE *f = stdout;
	if (x.json) {
		fputs("{\"graph\": ", f);
		hoff_json_string(f, g->name ? g->name : "");
		fprintf(f, ", \"objective_kind\": \"%s\", ", okind);
		hoff_exact_json_num(f, "bound", rep.has_bound, rep.bound);
		fputs(", \"greedy\": {", f);
		fprintf(f, "\"objective\": %.17g, ", gobj);
		hoff_exact_json_num(f, "gap", rep.has_bound,
				    hoff_exact_greedy_gap(&rep));
		fprintf(f, ", \"feasible\": %s, ",
			rep.greedy_feasible ? "true" : "false");
		hoff_json_summary(f, &rep.greedy);
		fprintf(f,
			", \"solve_s\": %.6f}, \"exact\": {\"status\": "
			"\"%s\", ",
			rep.greedy_s, hoff_exact_status_name(&rep));
		hoff_exact_json_num(f, "objective", rep.has_objective,
				    rep.objective);
		fprintf(f, ", \"simulated_objective\": %.17g, ", xobj);
		hoff_exact_json_num(f, "bound", rep.has_bound, rep.bound);
		fputs(", ", f);
		hoff_exact_json_num(f, "gap", rep.has_gap, rep.gap);
		fprintf(f, ", \"feasible\": %s, \"source\": \"%s\", ",
			rep.feasible ? "true" : "false", rep.source);
		hoff_json_summary(f, &rep.best);
		fprintf(f,
			", \"solve_s\": %.6f, \"model\": {\"ops\": %d, "
			"\"candidates\": %d, \"intervals\": %d, \"columns\": "
			"%d, \"binaries\": %d, \"rows\": %d, \"stride\": %d, "
			"\"nodes\": %" PRId64 ", \"probes\": %d, "
			"\"probes_cut\": %d}}, \"restriction\": ",
			rep.solve_s + rep.build_s, rep.nops, rep.ncand, rep.niv,
			rep.ncols, rep.nbin, rep.nrows, rep.stride, rep.nodes,
			rep.probes, rep.probes_cut);
		hoff_json_string(f, rep.restriction);
		fputs("}\n", f);
		goto out;
	}
	char sa[1024];
	hoff_exact_source_line(f, &rep);
	fprintf(f, "graph %s: %d ops; objective %s",
		g->name ? hoff_cli_safe(g->name, sa, sizeof sa) : "?", rep.nops,
		okind);
	if (rep.budget_mode)
		fprintf(f, " under a budget of %" PRId64 " B\n",
			rep.budget_bytes);
	else
		fprintf(f, " with makespan at most %.6g s\n",
			hoff_s(rep.bound_ps));
	/* the bound holds over the model's candidates only: a schedule
	 * outside them (greedy's, a repaired one) can be below it, and then
	 * no gap is printed against it */
	fprintf(f, "%-8s %-23s %14s %15s %9s %14s %12s %9s\n", "policy",
		"status", "objective", "bound_over_cand", "gap", "peak_bytes",
		"makespan_s", "solve_s");
	char bnd[32] = "-", gg[32] = "-", xg[32] = "-";
	bool below = false;
	if (rep.has_bound) {
		snprintf(bnd, sizeof bnd, "%.9g", rep.bound);
		hoff_exact_gap_cell(gg, sizeof gg, gobj, rep.bound);
		hoff_exact_gap_cell(xg, sizeof xg, xobj, rep.bound);
		below = gobj < rep.bound || xobj < rep.bound;
	}
	fprintf(f, "%-8s %-23s %14.9g %15s %9s %14" PRId64 " %12.6g %9.3f\n",
		"greedy", rep.greedy_feasible ? "feasible" : "infeasible", gobj,
		bnd, gg, rep.greedy.peak_bytes, hoff_s(rep.greedy.makespan_ps),
		rep.greedy_s);
	fprintf(f, "%-8s %-23s %14.9g %15s %9s %14" PRId64 " %12.6g %9.3f\n",
		"exact", hoff_exact_status_name(&rep), xobj, bnd, xg,
		rep.best.peak_bytes, hoff_s(rep.best.makespan_ps),
		rep.solve_s + rep.build_s);
	if (below)
		fprintf(f,
			"below: a schedule under bound_over_cand lies outside "
			"the model's candidates, which the bound is over\n");
	hoff_exact_model_line(f, &rep);
	if (rep.note[0])
		fprintf(f, "note: %s\n", rep.note);
	if (rep.restriction[0])
		fprintf(f, "status, bound_over_cand and gaps are %s\n",
			rep.restriction);
out:
	hoff_sched_free(s);
	hoff_graph_free(g);
	return rc;
}
