/* cmd.h: the verbs of hoffopt, one cmd_*.c each, dispatched by main.c.
 * Each takes the whole argv (argv[1] is the verb), prints for the user
 * and returns the exit code of cli.h's one map (hoff_cli_exit): 0 ok,
 * 1 an invalid schedule or a plan over its budget (nothing written),
 * 2 bad input, usage or an output that cannot be written, 3 internal
 * error (a bug). */
#ifndef HOFF_CMD_H
#define HOFF_CMD_H

#include "exec.h"

/* The message of --backend cuda in a hoffopt built without CUDA. */
#define HOFF_NO_CUDA \
	"--backend cuda: this hoffopt was built without its CUDA backend"

/* analyze GRAPH: lifetimes, the no-offload peak, the lower bound. */
int hoff_cmd_analyze(int argc, char **argv);
/* simulate GRAPH SCHEDULE: validity and summary on the machine model. */
int hoff_cmd_simulate(int argc, char **argv);
/* --greedy GRAPH, --policy NAME GRAPH: plan with greedy or a baseline. */
int hoff_cmd_plan(int argc, char **argv);
/* --exact GRAPH: plan with the ILP. */
int hoff_cmd_exact(int argc, char **argv);
/* compare GRAPH: greedy and the ILP side by side. */
int hoff_cmd_compare(int argc, char **argv);
/* gen MODEL: a model-shaped graph.json. */
int hoff_cmd_gen(int argc, char **argv);
/* run GRAPH SCHEDULE: execute a schedule on a backend and compare it
 * with the simulator. cuda: the CUDA backend, NULL when the program has
 * none (`--backend cuda` is then bad input). */
int hoff_cmd_run(int argc, char **argv, const hoff_cuda_api *cuda);
/* calibrate: measure a backend's machine as a graph.json machine. */
int hoff_cmd_calibrate(int argc, char **argv, const hoff_cuda_api *cuda);

#endif
