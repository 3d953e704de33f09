/* cmd_run.h: the `run` and `calibrate` commands of the hoffopt CLI. */
#ifndef HOFF_CMD_RUN_H
#define HOFF_CMD_RUN_H

#include "exec.h"

/* hoffopt run GRAPH SCHEDULE [...]: executes a schedule on a backend and
 * compares it with the simulator (argv[1] is "run"). Returns the exit
 * code: 0 ok, 1 invalid schedule or verification failure, 2 bad input,
 * usage, no GPU or a backend failure. cuda: the CUDA backend, NULL when
 * the program has none (`--backend cuda` is then bad input). */
int hoff_cmd_run(int argc, char **argv, const hoff_cuda_api *cuda);

/* hoffopt calibrate [--backend B] [-o MACHINE]: measures a backend's
 * machine and writes a graph.json `machine` object (argv[1] is
 * "calibrate"). Returns 0, or 2 on bad usage or a failure. */
int hoff_cmd_calibrate(int argc, char **argv, const hoff_cuda_api *cuda);

#endif
