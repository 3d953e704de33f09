/* cmd_exact.h: what `--exact` (cmd_exact.c) and `compare`
 * (cmd_compare.c) share: their options, read into the exact pipeline's
 * (solver/ilp.h), and the report lines both print. Private to src/cli. */
#ifndef HOFF_CMD_EXACT_H
#define HOFF_CMD_EXACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cli.h"
#include "ilp.h"

/* The --help texts of --exact (cmd_exact.c) and compare (cmd_compare.c). */
extern const char *const hoff_usage_exact;
extern const char *const hoff_usage_compare;

/* The options of both commands, as given (strings until setup). */
typedef struct xopts {
	HOFF_CLI_ARGS; /* GRAPH, --json, --budget; --exact: --trace, -o */
	const char *overhead, *lp, *mps, *probe;
	const char *time_limit, *gap, *stride;
	bool quiet, verbose, no_incumbent, all_candidates;
	bool recompute; /* (v2) --recompute: --exact only */
} xopts;

/* Parses argv into *o (compare: without the outputs of a schedule) by
 * hoff_cli_command: true when the command stops there with exit code
 * *rc (its usage printed for --help, or a usage error). */
bool hoff_xopts_parse(int argc, char **argv, xopts *o, bool compare, int *rc);

/* The options x into the pipeline's *io (its defaults first); 0, or
 * HOFF_EXIT_BAD after printing which one is bad. */
int hoff_xopts_setup(const xopts *x, hoff_ilp_opts *io);

/* Refuses outputs that would overwrite the graph or one another: 0, or
 * HOFF_EXIT_BAD after saying which. */
int hoff_xopts_clobbers(const xopts *x);

/* Writes "key": v, or "key": null when !has. */
void hoff_exact_json_num(FILE *f, const char *key, bool has, double v);

/* Greedy's gap to the model's bound: (objective - bound) / objective;
 * negative when greedy's schedule is below the bound (outside the
 * model's candidates). */
double hoff_exact_greedy_gap(const hoff_exact_report *r);

/* "exact returns greedy's schedule: WHY", when it does (the first line
 * of both commands' tables); nothing otherwise. */
void hoff_exact_source_line(FILE *f, const hoff_exact_report *r);

/* The gap cell of objective obj against bound: "0.123%", or "below" when
 * obj is under the bound (a schedule outside the model's candidates
 * can be; a gap would contradict the figures beside it). Returns buf. */
char *hoff_exact_gap_cell(char *buf, size_t n, double obj, double bound);

/* The model's size line, and the peak search's when it probed. */
void hoff_exact_model_line(FILE *f, const hoff_exact_report *r);

#endif
