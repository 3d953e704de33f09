/* cli.h: what the commands (main.c and the cmd_*.c) share — the command
 * line (hoff_cli_command: the options several commands take, --help and
 * the operands, parsed by one table-driven parser), the usage error,
 * the number syntaxes of their options, the --budget resolution and the
 * JSON writers of a summary. Prints only to the FILE
 * given and to stderr for hoff_cli_bad. */
#ifndef HOFF_CLI_H
#define HOFF_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "graph.h"
#include "sim.h"

/* Exit codes common to every command: an invalid schedule or a budget
 * (device memory) that cannot be met, bad input or usage (or an output
 * that cannot be written), a bug of hoffopt's own. */
#define HOFF_EXIT_INVALID  1
#define HOFF_EXIT_BAD	   2
#define HOFF_EXIT_INTERNAL 3

/* One option of a command, in the table hoff_cli_parse reads: the
 * option's name, what it does with the field at `off` of the command's
 * options struct, and for a value the range and the message when the
 * value is bad (a format with one %s, the value). */
typedef enum hoff_opt_kind {
	HOFF_OPT_FLAG,	 /* bool field = true */
	HOFF_OPT_UNFLAG, /* bool field = false (--progress after --quiet) */
	HOFF_OPT_CONST,	 /* const char * field = set (--greedy) */
	HOFF_OPT_STR,	 /* const char * field = the value; with `set`, a
			    '|' list of the values allowed ("cpu|cuda") */
	HOFF_OPT_INT,	 /* int64_t field = the value, in [lo, hi] */
	HOFF_OPT_REAL,	 /* double field = the value, > 0 and finite */
} hoff_opt_kind;

typedef struct hoff_opt {
	const char *name;
	hoff_opt_kind kind;
	size_t off;
	const char *set;
	int64_t lo, hi;
	const char *bad;
} hoff_opt;

/* Table rows: HOFF_FLAG("--json", my_opts, json) and so on. */
#define HOFF_FLAG(nm, T, f)                                                \
	{                                                                  \
		.name = (nm), .kind = HOFF_OPT_FLAG, .off = offsetof(T, f) \
	}
#define HOFF_UNFLAG(nm, T, f)                                                \
	{                                                                    \
		.name = (nm), .kind = HOFF_OPT_UNFLAG, .off = offsetof(T, f) \
	}
#define HOFF_CONST(nm, T, f, v)                                              \
	{                                                                    \
		.name = (nm), .kind = HOFF_OPT_CONST, .off = offsetof(T, f), \
		.set = (v)                                                   \
	}
#define HOFF_STR(nm, T, f)                                                \
	{                                                                 \
		.name = (nm), .kind = HOFF_OPT_STR, .off = offsetof(T, f) \
	}
#define HOFF_CHOICE(nm, T, f, list, msg)                                   \
	{                                                                  \
		.name = (nm), .kind = HOFF_OPT_STR, .off = offsetof(T, f), \
		.set = (list), .bad = (msg)                                \
	}
#define HOFF_INT(nm, T, f, l, h, msg)                                      \
	{                                                                  \
		.name = (nm), .kind = HOFF_OPT_INT, .off = offsetof(T, f), \
		.lo = (l), .hi = (h), .bad = (msg)                         \
	}
#define HOFF_REAL(nm, T, f, msg)                                            \
	{                                                                   \
		.name = (nm), .kind = HOFF_OPT_REAL, .off = offsetof(T, f), \
		.bad = (msg)                                                \
	}
#define HOFF_HELP(T, f) HOFF_FLAG("--help", T, f), HOFF_FLAG("-h", T, f)
#define HOFF_NOPTS(t)	(sizeof(t) / sizeof *(t))

/* The options several commands take, one meaning each; a command's
 * hoff_cli_spec says which it takes (another is an unknown option). */
enum {
	HOFF_CLI_JSON = 1 << 0,	  /* --json: one JSON object on stdout */
	HOFF_CLI_BUDGET = 1 << 1, /* --budget B */
	HOFF_CLI_TRACE = 1 << 2,  /* --trace T: a Chrome trace */
	HOFF_CLI_OUT = 1 << 3,	  /* -o FILE */
};

/* The fields every command's options struct begins with, in this order
 * (as CPython's PyObject_HEAD: the same members first lie at the same
 * offsets, so hoff_cli_args's offsets are the command's): hoff_cli_command
 * stores the operands, --help/-h and the common options there. A value
 * not given keeps what the caller set (NULL, or a default such as "-"). */
#define HOFF_CLI_ARGS                                    \
	const char *pos[2]; /* the operands, in order */ \
	int npos;                                        \
	bool help, json;                                 \
	const char *budget, *trace, *out

/* A command's options struct with no options of its own. */
typedef struct hoff_cli_args {
	HOFF_CLI_ARGS;
} hoff_cli_args;

/* A command's command line, for hoff_cli_command. */
typedef struct hoff_cli_spec {
	int from;	       /* argv[from] is the first word parsed */
	int npos;	       /* operands it takes, 0 to 2 */
	unsigned common;       /* the HOFF_CLI_* options it takes */
	const hoff_opt *table; /* its own options, into its struct */
	size_t nopts;
	const char *usage, *usage_more; /* --help prints both (more: NULL
					   or the rest of a long text) */
	const char *missing; /* said when fewer than npos operands are
				given; NULL: the command checks */
	/* After a parse without error, before --help: checks what the
	 * options say together and fills what derives from them; 0 or the
	 * exit code after saying why. NULL: nothing to check. */
	int (*finish)(void *opts);
} hoff_cli_spec;

/* Parses argv by sp into opts, a struct that begins with HOFF_CLI_ARGS
 * (its other fields keep what the caller set unless an option sets
 * them), then does what hoff_cli_stop does: true when the command stops
 * here with exit code *rc, 0 after printing the usage for --help, else
 * after one line on stderr; false, *rc 0, to go on. */
bool hoff_cli_command(int argc, char **argv, const hoff_cli_spec *sp,
		      void *opts, int *rc);

/* Parses argv[from..argc) by the n options of table into the struct at
 * dst, and up to maxpos operands into pos[*npos++]. An option's value is
 * the next word or, GNU style, follows '=' (--budget=40GB). Returns 0, or
 * prints one line (an unknown option, a missing or bad value, a value
 * given to a flag, an operand too many) and returns HOFF_EXIT_BAD. */
int hoff_cli_parse(int argc, char **argv, int from, const hoff_opt *table,
		   size_t n, void *dst, const char **pos, int maxpos,
		   int *npos);

/* A whole decimal number in [lo, hi] into *v, read exactly (spaces
 * around it allowed; no hex, point or exponent); false otherwise. */
bool hoff_cli_int(const char *s, int64_t lo, int64_t hi, int64_t *v);

/* A finite decimal number > 0 into *v (spaces around it allowed; no hex,
 * inf or nan); false otherwise. */
bool hoff_cli_real(const char *s, double *v);

/* The progress of the libraries on stderr, one "hoffopt: LINE" a line. */
extern const hoff_progress hoff_cli_progress;

/* The exit code of a status: 0, 1 (HOFF_EINVALID), 3 (HOFF_EINTERNAL),
 * else 2. */
int hoff_cli_exit(hoff_status st);

/* s as it may be shown on a terminal: s itself when it holds no control
 * character, else a copy in buf (n bytes) with each one as \xNN. */
const char *hoff_cli_safe(const char *s, char *buf, size_t n);

/* Prints "hoffopt: " msg (control characters escaped) on stderr and
 * returns hoff_cli_exit(st). */
int hoff_cli_fail(hoff_status st, const hoff_err *e);

/* Refuses (HOFF_EXIT_BAD, one line on stderr) when an output file names
 * the same file as an input (device and inode) or as another output: the
 * write would destroy it. NULL entries are skipped. 0 when all differ. */
int hoff_cli_clobbers(const char *const *outs, int nouts,
		      const char *const *ins, int nins);

/* Flushes and closes stdout; a failed write (a full disk, /dev/full)
 * turns an exit code of 0 or 1 into HOFF_EXIT_BAD, saying so on stderr
 * (other codes stand: their command has printed its error).
 * Returns the exit code. */
int hoff_cli_close_stdout(int rc);

/* Prints "hoffopt: " fmt (one %s, arg) on stderr; returns HOFF_EXIT_BAD. */
int hoff_cli_bad(const char *fmt, const char *arg);

/* What every command does once its options are parsed with exit code
 * *rc: true when it stops here, with *rc its exit code — *rc itself when
 * not 0; 0 after printing usage on stdout for --help; HOFF_EXIT_BAD,
 * saying `missing`, when its operands are not all there (!operands).
 * False, *rc 0, to go on. */
bool hoff_cli_stop(int *rc, bool help, const char *usage, bool operands,
		   const char *missing);

/* A fraction: "0.01" or "1%" (decimal, spaces around it allowed); -1 when
 * s is not a number >= 0. */
double hoff_cli_frac(const char *s);

/* hoff_cli_budget_bytes: a budget past INT64_MAX bytes. */
#define HOFF_CLI_TOO_LARGE (-2)

/* A budget: a decimal number (read exactly, spaces around it allowed) of
 * bytes with an optional unit (B, KiB..TiB, KB..TB), or a percentage of
 * noffload_peak, rounded down to a byte; plain bytes must be whole. -1
 * when s is not a budget, HOFF_CLI_TOO_LARGE past INT64_MAX bytes. */
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

/* hoff_cli_budget for a planner (--greedy, --policy, --exact, compare):
 * a budget over the device's memory is capped at it (*capped), with a
 * note on stderr; a plan over the device could not run. */
hoff_status hoff_cli_plan_budget(const hoff_graph *g, const char *arg,
				 int64_t *budget, bool *capped, hoff_err *e);

/* "key": seconds, from ps, with 17 significant digits. */
void hoff_json_time(FILE *f, const char *key, int64_t ps);

/* The summary's members, without braces: peak_bytes, makespan_s,
 * compute_s, stall_s, h2d_bytes, d2h_bytes. */
void hoff_json_summary(FILE *f, const hoff_summary *s);
/* (v2) As hoff_json_summary, with recompute_s after compute_s when v2
 * (a version-2 graph or schedule) or when s has recompute time, so that
 * version-1 reports keep their bytes. */
void hoff_json_summary_v2(FILE *f, const hoff_summary *s, bool v2);

/* b as "N B", with the GiB/MiB/KiB figure beside from 1 KiB on. */
void hoff_cli_bytes(FILE *f, int64_t b);

/* How far ps is over base_ps, as a fraction (0.01: 1% over); 0 when
 * base_ps is 0. The overhead of a makespan over compute or over the
 * lower bound, in every report. */
double hoff_cli_over(int64_t ps, int64_t base_ps);

/* The bytes this process may still allocate before the kernel kills it:
 * the least of /proc/meminfo's MemAvailable and, for each memory cgroup
 * it is in (v2's memory.max, v1's memory.limit_in_bytes) and each one
 * above it, the limit less what is used; INT64_MAX when none is known.
 * root prefixes every path ("" for this machine; a test's fake tree). */
int64_t hoff_cli_mem_available(const char *root);

/* "overhead": the makespan over compute, null when compute is 0. */
void hoff_json_overhead(FILE *f, const hoff_summary *s);

#endif
