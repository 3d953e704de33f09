/* cmd_exact.h: the exact scheduler's commands, dispatched from main.c:
 * `hoffopt --exact GRAPH ...` and `hoffopt compare GRAPH ...`. Each
 * returns the process exit code: 0 ok, 1 infeasible, 2 bad input or
 * usage. */
#ifndef HOFF_CMD_EXACT_H
#define HOFF_CMD_EXACT_H

/* argv[1] is "--exact". */
int hoff_cmd_exact(int argc, char **argv);
/* argv[1] is "compare". */
int hoff_cmd_compare(int argc, char **argv);

/* The usage texts, for main.c's help. */
extern const char *const hoff_usage_exact;
extern const char *const hoff_usage_compare;

#endif
