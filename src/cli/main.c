/* main.c: the hoffopt executable — dispatches a verb to its cmd_*.c
 * (cmd.h) and hands `run` and `calibrate` the CUDA backend when this
 * executable links it. Exit codes are cli.h's one map: 0 ok, 1 invalid
 * schedule or a budget (the device's memory unless --budget) that cannot
 * be met, 2 bad input, usage or an output that cannot be written, 3
 * internal error (a bug). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cmd.h"
#include "fileio.h"
#include "hoff.h"

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

static const char *const usage =
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

static int cmd_run(int argc, char **argv)
{
	return hoff_cmd_run(argc, argv, CUDA_API);
}

static int cmd_calibrate(int argc, char **argv)
{
	return hoff_cmd_calibrate(argc, argv, CUDA_API);
}

/* The verbs; "greedy" names the planning command in `hoffopt help`. */
static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
} verbs[] = {
	{"analyze", hoff_cmd_analyze},
	{"simulate", hoff_cmd_simulate},
	{"--greedy", hoff_cmd_plan},
	{"--policy", hoff_cmd_plan},
	{"greedy", hoff_cmd_plan},
	{"--exact", hoff_cmd_exact},
	{"compare", hoff_cmd_compare},
	{"gen", hoff_cmd_gen},
	{"run", cmd_run},
	{"calibrate", cmd_calibrate},
};

static int (*verb(const char *name))(int, char **)
{
	for (size_t i = 0; i < sizeof verbs / sizeof *verbs; i++)
		if (!strcmp(name, verbs[i].name))
			return verbs[i].run;
	return NULL;
}

static int dispatch(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage, stderr);
		return HOFF_EXIT_BAD;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") ||
	    !strcmp(cmd, "help")) {
		/* help VERB: the verb's own --help */
		int (*run)(int, char **) = argc > 2 ? verb(argv[2]) : NULL;
		if (!run) {
			fputs(usage, stdout);
			return 0;
		}
		char *args[] = {argv[0], argv[2], "--help", NULL};
		return run(3, args);
	}
	if (!strcmp(cmd, "--version")) {
		puts("hoffopt 0.1");
		return 0;
	}
	int (*run)(int, char **) = strcmp(cmd, "greedy") ? verb(cmd) : NULL;
	if (run)
		return run(argc, argv);
	fprintf(stderr, "hoffopt: unknown command '%s' (see hoffopt --help)\n",
		cmd);
	return HOFF_EXIT_BAD;
}

int main(int argc, char **argv)
{
	hoff_tune_malloc();
	/* A signal mid-write removes the temporary files (fileio.h). */
	hoff_outfile_signals();
	/* Every report ends on stdout: a write that failed there (a full
	 * disk, /dev/full) is an error, not a silent exit 0. */
	return hoff_cli_close_stdout(dispatch(argc, argv));
}
