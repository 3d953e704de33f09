/* cmd_gen.c: `hoffopt gen MODEL` — a public model's graph.json at its
 * real dimensions on a machine preset (src/gen/models.c), and `gen
 * --list`, the names it takes. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "cli.h"
#include "cmd.h"
#include "fileio.h"
#include "graph_json.h"
#include "models.h"

static const char *const usage =
	"usage: hoffopt gen MODEL [--phase prefill|decode|train] [--seq N]\n"
	"                  [--batch N] [--layers N] [--machine NAME] [--seed S]\n"
	"                  [--kv-block N] [--weights auto|device|host]\n"
	"                  [--kv auto|device|host]\n"
	"                  [--optimizer-step end|in-backward]\n"
	"                  [--optimizer-home host|device] [--v1] [-o GRAPH]\n"
	"       hoffopt gen --list\n"
	"\n"
	"Writes graph.json for a public model at its real dimensions (bf16),\n"
	"op times by the roofline of the machine preset, and says on stderr\n"
	"what it wrote. It models fused kernels: attention as one op that\n"
	"keeps no seq x seq scores, SwiGLU's product inside down_proj, norms\n"
	"that keep only their input (an eager PyTorch trace, formats/torch,\n"
	"holds more at long sequences).\n"
	"A train or decode graph is one step of a loop (FORMAT v2 \"repeat\":\n"
	"a plan for one step leaves the machine as it found it); tiers carry\n"
	"the preset's measured duplex factors.\n"
	"Defaults: decode, seq 4096, batch 1, full depth, h100-pcie5, seed 1,\n"
	"-o - (stdout).\n"
	"\n"
	"  --list            models (parameters, bytes), machine presets\n"
	"                    (memory, FLOP/s, link rates)\n"
	"  --weights W       weights' home; auto: the device when the inputs\n"
	"                    fit in 3/4 of it, else the host\n"
	"  --kv K            prefill and decode: the KV cache's home. auto\n"
	"                    (default): blocks of --kv-block tokens (2048) on\n"
	"                    the device, moved to the host when they do not\n"
	"                    fit; device: blocks kept on the device; host: one\n"
	"                    block a layer homed on the host, updated in place\n"
	"                    whole by the layer's attention (a decode step\n"
	"                    writes its layer's cache)\n"
	"  --optimizer-step  train: end (default): every Adam op after the\n"
	"                    whole backward; in-backward: each layer's Adam op\n"
	"                    right after the backward op that finalises its\n"
	"                    last gradient\n"
	"  --optimizer-home  train: where the Adam moments (8 bytes a\n"
	"                    parameter) start; host (default) or device\n"
	"  --v1              a FORMAT version-1 graph (no repeat, no duplex\n"
	"                    factors), as gen wrote before version 2\n";

typedef struct gen_opts {
	HOFF_CLI_ARGS; /* MODEL, -o */
	bool list, v1;
	hoff_model_opts mo;
	int64_t layers, seed, kv_block; /* -1: not given */
} gen_opts;

static const hoff_opt table[] = {
	HOFF_FLAG("--list", gen_opts, list),
	HOFF_FLAG("--v1", gen_opts, v1),
	HOFF_STR("--phase", gen_opts, mo.phase),
	HOFF_STR("--machine", gen_opts, mo.machine),
	HOFF_STR("--weights", gen_opts, mo.weights),
	HOFF_STR("--kv", gen_opts, mo.kv),
	HOFF_STR("--optimizer-step", gen_opts, mo.optimizer_step),
	HOFF_STR("--optimizer-home", gen_opts, mo.optimizer_home),
	HOFF_INT("--seq", gen_opts, mo.seq, 1, 1 << 24,
		 "--seq: '%s' is not a token count in 1 .. 2^24"),
	HOFF_INT("--batch", gen_opts, mo.batch, 1, 1 << 16,
		 "--batch: '%s' is not a count in 1 .. 2^16"),
	HOFF_INT("--layers", gen_opts, layers, 0, 1 << 20,
		 "--layers: '%s' is not a count in 0 .. 2^20"),
	HOFF_INT("--kv-block", gen_opts, kv_block, 1, 1 << 24,
		 "--kv-block: '%s' is not a token count in 1 .. 2^24"),
	HOFF_INT("--seed", gen_opts, seed, 0, LLONG_MAX,
		 "--seed: '%s' is not a number >= 0"),
};

/* (MODEL is checked by hoff_cmd_gen: --list takes none) */
static const hoff_cli_spec spec = {
	.from = 2,
	.npos = 1,
	.common = HOFF_CLI_OUT,
	.table = table,
	.nopts = HOFF_NOPTS(table),
	.usage = usage,
};

/* gen --list: the names the options take, with each model's size and
 * each machine preset's figures (with v1, not the duplex factors). */
static void print_gen_list(bool v1)
{
	const char *const *m = hoff_model_names();
	printf("models (bf16, full depth):\n");
	for (; *m; m++) {
		int64_t p = hoff_model_param_count(*m);
		printf("  %-13s %3d layers  %7.2fB params  %8.2f GB\n", *m,
		       (int)hoff_model_depth(*m), (double)p / 1e9,
		       2.0 * (double)p / 1e9);
	}
	printf("phases:");
	for (const char *const *ph = hoff_model_phases(); *ph; ph++)
		printf(" %s", *ph);
	printf("\nmachines:\n");
	for (const char *const *n = hoff_machine_names(); *n; n++) {
		hoff_machine_info x;
		if (!hoff_machine_preset(*n, &x))
			continue;
		printf("  %-11s %-15s %4.0f GB  %4.0f TFLOP/s bf16  HBM %.1f "
		       "TB/s\n",
		       *n, x.device, (double)x.memory_bytes / 1e9,
		       x.flops_per_s / 1e12, x.mem_bandwidth_Bps / 1e12);
		for (int i = 0; i < x.ntiers; i++) {
			const hoff_build_tier *t = &x.tier[i];
			printf("  %-11s   %-6s %6.0f GB  h2d %3.0f GB/s  d2h %3.0f "
			       "GB/s  latency %2.0f us",
			       "", t->name, (double)t->capacity_bytes / 1e9,
			       t->h2d_Bps / 1e9, t->d2h_Bps / 1e9,
			       t->latency_s * 1e6);
			if (!v1 && t->h2d_duplex > 0 && t->h2d_duplex < 1)
				printf("  both at once: h2d x%.3g, d2h x%.3g",
				       t->h2d_duplex, t->d2h_duplex);
			putchar('\n');
		}
	}
}

/* The line gen prints on stderr once it has written g to out. */
static void gen_summary(const hoff_graph *g, const char *out)
{
	hoff_analysis a;
	hoff_err e = {{0}};
	if (hoff_analyze(g, &a, &e) != HOFF_OK)
		return;
	const double gib = 1024.0 * 1024 * 1024;
	fprintf(stderr,
		"hoffopt: gen: wrote %s: %s, %d ops, %d tensors; compute %.6g "
		"s, lower bound %.6g s; no-offload peak %.2f GiB on a %.2f GiB "
		"device, %.2f GiB homed on tiers\n",
		strcmp(out, "-") ? out : "stdout", g->name, g->nops,
		g->ntensors, hoff_s(a.compute_ps), hoff_s(a.lower_bound_ps),
		(double)a.closed_peak_bytes / gib,
		(double)g->device.memory_bytes / gib,
		(double)a.tier_homed_bytes / gib);
}

int hoff_cmd_gen(int argc, char **argv)
{
	gen_opts o = {.mo = hoff_model_defaults(),
		      .out = "-",
		      .layers = -1,
		      .seed = -1,
		      .kv_block = -1};
	int rc;
	if (hoff_cli_command(argc, argv, &spec, &o, &rc))
		return rc;
	if (o.list && o.npos)
		return hoff_cli_bad("gen --list takes no MODEL ('%s')",
				    o.pos[0]);
	if (o.list) {
		print_gen_list(o.v1);
		return 0;
	}
	if (o.npos == 0)
		return hoff_cli_bad("%s",
				    "gen needs a MODEL (hoffopt gen --list)");
	hoff_model_opts mo = o.mo;
	mo.model = o.pos[0];
	mo.version = o.v1 ? 1 : 2;
	if (o.layers >= 0)
		mo.layers = (int32_t)o.layers;
	if (o.seed >= 0)
		mo.seed = (uint64_t)o.seed;
	if (o.kv_block >= 0)
		mo.kv_block_tokens = o.kv_block;
	if (o.kv_block >= 0 && mo.kv && !strcmp(mo.kv, "host"))
		return hoff_cli_bad("%s", "gen: --kv host keeps one block a "
					  "layer; --kv-block applies to --kv "
					  "auto|device");
	hoff_err e = {{0}};
	hoff_graph *g = NULL;
	hoff_status st = hoff_model_build(&mo, &g, &e);
	if (st == HOFF_OK)
		st = hoff_graph_write(g, o.out, &e);
	if (st == HOFF_OK)
		gen_summary(g, o.out);
	hoff_graph_free(g);
	if (st != HOFF_OK) {
		fprintf(stderr, "hoffopt: gen: %s\n", e.msg);
		return hoff_cli_exit(st);
	}
	return 0;
}
