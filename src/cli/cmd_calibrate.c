/* cmd_calibrate.c: `hoffopt calibrate` — measures a backend's machine
 * (the CPU one here, the CUDA one through the hoff_cuda_api main.c hands
 * over) and writes it as a graph.json `machine` object, or a table of
 * copy rates (--sweep). Prints for the user and returns exit codes;
 * main.c dispatches. */
#include "cmd.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "exec.h"
#include "fileio.h"

#define EXIT_BAD HOFF_EXIT_BAD

static const char *const usage_calibrate =
	"usage: hoffopt calibrate [--backend cpu|cuda] [--device N] [-o MACHINE]\n"
	"       hoffopt calibrate --backend cuda [--device N] --sweep MAXBYTES\n"
	"\n"
	"Measures a backend's machine: h2d and d2h bandwidth from pinned and\n"
	"pageable host memory, the latency of one copy, the compute rate and\n"
	"device memory bandwidth, and writes a graph.json `machine` object\n"
	"(device, one tier \"host\", and the extra figures under\n"
	"\"calibration\", which readers ignore) to MACHINE ('-' or no -o:\n"
	"stdout). The tier's duplex factors (FORMAT v2: each direction's\n"
	"rate with both running over its rate alone) are written when below\n"
	"1, and printed. Put it in a graph with, e.g.,\n"
	"  jq --slurpfile m MACHINE '.machine = $m[0]' graph.json\n"
	"\n"
	"  --backend cpu    memcpy rates, thread hand-off latency, a\n"
	"                   multiply-add loop (default)\n"
	"  --backend cuda   cudaMemcpy rates (also h2d and d2h at once), a small\n"
	"                   copy's latency, an FMA kernel, the spin kernel's\n"
	"                   fixed cost (needs a GPU)\n"
	"  --device N       the CUDA device to measure (default 0)\n"
	"  --sweep MAX      cuda: instead, a markdown table of pinned copies\n"
	"                   from 4 KiB to MAX bytes (x4): h2d alone, d2h alone,\n"
	"                   and both at once\n"
	"\n"
	"Exit codes: 0 ok, 2 bad usage, no GPU or a failure.\n";

static void put_num(FILE *f, const char *key, double v)
{
	fprintf(f, "\"%s\": %.6g", key, isfinite(v) ? v : 0.0);
}

/* The machine object; rates FORMAT.md requires > 0 are kept > 0. */
static void print_machine(FILE *f, const char *backend, const hoff_calib *c)
{
	fputs("{\n  \"device\": {\"name\": ", f);
	hoff_json_string(f, c->device);
	fprintf(f, ", \"memory_bytes\": %" PRId64 ", ",
		c->memory_bytes > 0 ? c->memory_bytes : 1);
	put_num(f, "flops_per_s", c->flops_per_s > 0 ? c->flops_per_s : 1);
	fputs(", ", f);
	put_num(f, "mem_bandwidth_Bps",
		c->mem_bandwidth_Bps > 0 ? c->mem_bandwidth_Bps : 1);
	fputs(", ", f);
	put_num(f, "op_overhead_s", c->op_overhead_s);
	fputs("},\n  \"tiers\": [\n    {\"name\": \"host\", ", f);
	put_num(f, "h2d_Bps", c->h2d_Bps > 0 ? c->h2d_Bps : 1);
	fputs(", ", f);
	put_num(f, "d2h_Bps", c->d2h_Bps > 0 ? c->d2h_Bps : 1);
	fputs(", ", f);
	put_num(f, "latency_s", c->latency_s);
	if (c->h2d_duplex > 0 && c->h2d_duplex < 1) { /* FORMAT v2 */
		fputs(", ", f);
		put_num(f, "h2d_duplex_factor", c->h2d_duplex);
	}
	if (c->d2h_duplex > 0 && c->d2h_duplex < 1) {
		fputs(", ", f);
		put_num(f, "d2h_duplex_factor", c->d2h_duplex);
	}
	fputs("}\n  ],\n  \"calibration\": {\"backend\": ", f);
	hoff_json_string(f, backend);
	fputs(", ", f);
	put_num(f, "h2d_pageable_Bps", c->h2d_pageable_Bps);
	fputs(", ", f);
	put_num(f, "d2h_pageable_Bps", c->d2h_pageable_Bps);
	if (c->spin_hz > 0) {
		fputs(", ", f);
		put_num(f, "spin_hz", c->spin_hz);
	}
	if (c->h2d_both_Bps > 0) {
		fputs(", ", f);
		put_num(f, "h2d_both_Bps", c->h2d_both_Bps);
		fputs(", ", f);
		put_num(f, "d2h_both_Bps", c->d2h_both_Bps);
	}
	fputs("}\n}\n", f);
}

typedef struct calib_opts {
	HOFF_CLI_ARGS; /* -o; no operands */
	const char *backend;
	int64_t device, sweep;
} calib_opts;

static const hoff_opt calib_table[] = {
	HOFF_CHOICE("--backend", calib_opts, backend, "cpu|cuda",
		    "--backend: '%s' is not cpu or cuda"),
	HOFF_INT("--device", calib_opts, device, 0, 1024,
		 "--device: '%s' is not a device number"),
	HOFF_INT("--sweep", calib_opts, sweep, 4096, (int64_t)1 << 36,
		 "--sweep: '%s' is not a byte count in 4096 .. 2^36"),
};

static const hoff_cli_spec calib_spec = {
	.from = 2,
	.common = HOFF_CLI_OUT,
	.table = calib_table,
	.nopts = HOFF_NOPTS(calib_table),
	.usage = usage_calibrate,
};

int hoff_cmd_calibrate(int argc, char **argv, const hoff_cuda_api *cuda)
{
	calib_opts o = {.backend = "cpu", .out = "-"};
	int rc;
	if (hoff_cli_command(argc, argv, &calib_spec, &o, &rc))
		return rc;
	const char *backend = o.backend, *out = o.out;
	const int64_t device = o.device, sweep = o.sweep;
	hoff_calib c;
	hoff_err e = {{0}};
	hoff_status st;
	if (sweep && strcmp(backend, "cuda"))
		return hoff_cli_bad("%s", "--sweep needs --backend cuda");
	if (!strcmp(backend, "cpu")) {
		st = hoff_calibrate_cpu(&c, &e);
	} else {
		if (!cuda) {
			st = hoff_seterr(&e, HOFF_EIO, "%s", HOFF_NO_CUDA);
		} else if (sweep) {
			st = cuda->copy_sweep((int32_t)device, sweep, stdout,
					      &e);
			if (st != HOFF_OK) {
				fprintf(stderr, "hoffopt: calibrate: %s\n",
					e.msg);
				return EXIT_BAD;
			}
			return 0;
		} else {
			st = cuda->calibrate((int32_t)device, &c, &e);
		}
	}
	if (st != HOFF_OK) {
		fprintf(stderr, "hoffopt: calibrate: %s\n", e.msg);
		return EXIT_BAD;
	}
	hoff_outfile f;
	if ((st = hoff_outfile_open(&f, out, &e)) != HOFF_OK) {
		fprintf(stderr, "hoffopt: calibrate: %s\n", e.msg);
		return EXIT_BAD;
	}
	print_machine(f.f, backend, &c);
	if ((st = hoff_outfile_commit(&f, &e)) != HOFF_OK) {
		fprintf(stderr, "hoffopt: calibrate: %s\n", e.msg);
		return EXIT_BAD;
	}
	if (strcmp(out, "-"))
		printf("calibrated %s (%s): h2d %.4g B/s, d2h %.4g B/s "
		       "(pageable %.4g, %.4g; at once %.4g, %.4g), latency "
		       "%.3g s, compute %.4g flop/s, memory %.4g B/s; wrote "
		       "%s\n",
		       backend, c.device, c.h2d_Bps, c.d2h_Bps,
		       c.h2d_pageable_Bps, c.d2h_pageable_Bps, c.h2d_both_Bps,
		       c.d2h_both_Bps, c.latency_s, c.flops_per_s,
		       c.mem_bandwidth_Bps, out);
	fprintf(strcmp(out, "-") ? stdout : stderr,
		"duplex factors (both at once / alone): h2d %.3f, d2h %.3f\n",
		c.h2d_duplex, c.d2h_duplex);
	return 0;
}
