/* cli.h: what the commands (main.c, cmd_exact.c, cmd_run.c) share — the
 * usage error, the number syntaxes of their options, the --budget
 * resolution and the JSON writers of a summary. Prints only to the FILE
 * given and to stderr for hoff_cli_bad. */
#ifndef HOFF_CLI_H
#define HOFF_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "graph.h"
#include "sim.h"

/* Exit code of bad input or usage, common to every command. */
#define HOFF_EXIT_BAD 2

/* Prints "hoffopt: " fmt (one %s, arg) on stderr; returns HOFF_EXIT_BAD. */
int hoff_cli_bad(const char *fmt, const char *arg);

/* What every command does once its options are parsed with exit code
 * *rc: true when it stops here, with *rc its exit code — *rc itself when
 * not 0; 0 after printing usage on stdout for --help; HOFF_EXIT_BAD,
 * saying `missing`, when its operands are not all there (!operands).
 * False, *rc 0, to go on. */
bool hoff_cli_stop(int *rc, bool help, const char *usage, bool operands,
		   const char *missing);

/* A fraction: "0.01" or "1%"; -1 when s is not a number >= 0. */
double hoff_cli_frac(const char *s);

/* A budget: bytes with an optional unit (B, KiB..TiB, KB..TB), or a
 * percentage of noffload_peak; -1 when s is not a budget. */
int64_t hoff_cli_budget_bytes(const char *s, int64_t noffload_peak);

/* Simulates the no-offload schedule of g into *r (measured, not judged
 * against a budget); with `snap`, also records the tensors in use at its
 * peak. */
hoff_status hoff_cli_noffload(const hoff_graph *g, bool snap,
			      hoff_sim_result *r, hoff_err *e);

/* --budget ARG in bytes into *budget (HOFF_NONE without ARG); a
 * percentage simulates the no-offload schedule for its peak. Errors
 * with HOFF_EUSAGE naming the value. */
hoff_status hoff_cli_budget(const hoff_graph *g, const char *arg,
			    int64_t *budget, hoff_err *e);

/* "key": seconds, from ps, with 17 significant digits. */
void hoff_json_time(FILE *f, const char *key, int64_t ps);

/* The summary's members, without braces: peak_bytes, makespan_s,
 * compute_s, stall_s, h2d_bytes, d2h_bytes. */
void hoff_json_summary(FILE *f, const hoff_summary *s);

#endif
