/* gen_synth.c: hoff-gen-synth, the command line of src/gen/synth.c — writes a
 * synthetic model-shaped graph of exactly N ops (and, on request, its
 * no-offload schedule). Same options, same bytes out.
 * Exit status: 0 done, 1 failed (I/O, memory), 2 bad arguments. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_json.h"
#include "sched.h"
#include "sched_json.h"
#include "analysis.h"
#include "synth.h"

static const char usage[] =
	"usage: hoff-gen-synth --ops N [options]\n"
	"Writes a synthetic transformer-shaped graph.json of exactly N ops.\n"
	"  --ops N             op count, 1 .. 10000000 (required)\n"
	"  --shape infer|train decode steps with a KV cache (default), or\n"
	"                      forward, backward and optimizer step\n"
	"  --layers L          transformer blocks, 1 .. 65536 (default 32)\n"
	"  --home device|host  where the weights start (default device)\n"
	"  --seed S            jitter of sizes and times (default 1)\n"
	"  --tokens T          train: microbatch tokens, 256 .. 65536\n"
	"                      (default 4096; drawn within 25% of T):\n"
	"                      activations and compute grow with T, the\n"
	"                      weights and optimizer state do not\n"
	"  --tiers 1|2         tier \"host\" (2.5e10 B/s; optimizer state and\n"
	"                      training data live there), or also \"remote\"\n"
	"                      (5e9 B/s, empty: somewhere to store to)\n"
	"  --memory B          device memory_bytes; suffix K, M, G, T for\n"
	"                      powers of 1024 (default: the no-offload peak\n"
	"                      rounded up to 256 MiB)\n"
	"  -o FILE             output graph (default - : stdout)\n"
	"  --schedule-none F   also write the no-offload schedule to F\n"
	"  -h, --help          this text\n";

/* Parses an integer in [lo, hi] with an optional binary suffix (when
 * suffix); false when s is not one. */
static bool parse_int(const char *s, long long lo, long long hi, bool suffix,
		      long long *v)
{
	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return false;
	errno = 0;
	char *end;
	unsigned long long x = strtoull(s, &end, 10);
	if (errno || end == s)
		return false;
	if (suffix && *end) {
		const char *units = "KMGT";
		const char *u = strchr(units, *end);
		if (!u || end[1])
			return false;
		for (int i = 0; i <= (int)(u - units); i++) {
			if (x > (unsigned long long)hi / 1024)
				return false;
			x *= 1024;
		}
		end++;
	}
	if (*end || x < (unsigned long long)lo || x > (unsigned long long)hi)
		return false;
	*v = (long long)x;
	return true;
}

static int bad(const char *fmt, const char *a)
{
	fprintf(stderr, "hoff-gen-synth: ");
	fprintf(stderr, fmt, a);
	fprintf(stderr, " (try --help)\n");
	return 2;
}

int main(int argc, char **argv)
{
	hoff_synth_opts o = hoff_synth_defaults();
	const char *outp = "-", *schedp = NULL;
	bool have_ops = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(usage, stdout);
			return 0;
		}
		/* "--name=value" or "--name value" */
		char opt[32];
		const char *v = NULL;
		const char *eq = strncmp(a, "--", 2) ? NULL : strchr(a, '=');
		if (eq && (size_t)(eq - a) < sizeof opt) {
			memcpy(opt, a, (size_t)(eq - a));
			opt[eq - a] = '\0';
			v = eq + 1;
		} else if (strlen(a) < sizeof opt) {
			strcpy(opt, a);
		} else {
			return bad("unknown option '%s'", a);
		}
		static const char *const known[] = {
			"--ops",	   "--shape", "--layers", "--home",
			"--seed",	   "--tiers", "--memory", "-o",
			"--schedule-none", "--tokens"};
		bool ok = false;
		for (size_t j = 0; j < sizeof known / sizeof *known; j++)
			ok |= !strcmp(opt, known[j]);
		if (!ok)
			return bad("unknown option '%s'", a);
		if (!v) {
			if (i + 1 >= argc)
				return bad("%s needs a value", opt);
			v = argv[++i];
		}
		long long x;
		if (!strcmp(opt, "--ops")) {
			if (!parse_int(v, 1, HOFF_SYNTH_MAX_OPS, false, &x))
				return bad("--ops must be an integer 1 .. "
					   "10000000, not '%s'", v);
			o.nops = x;
			have_ops = true;
		} else if (!strcmp(opt, "--shape")) {
			if (!strcmp(v, "infer"))
				o.shape = HOFF_SYNTH_INFER;
			else if (!strcmp(v, "train"))
				o.shape = HOFF_SYNTH_TRAIN;
			else
				return bad("--shape must be infer or train, "
					   "not '%s'", v);
		} else if (!strcmp(opt, "--layers")) {
			if (!parse_int(v, 1, HOFF_SYNTH_MAX_LAYERS, false, &x))
				return bad("--layers must be an integer 1 .. "
					   "65536, not '%s'", v);
			o.layers = (int32_t)x;
		} else if (!strcmp(opt, "--home")) {
			if (strcmp(v, "device") && strcmp(v, "host"))
				return bad("--home must be device or host, "
					   "not '%s'", v);
			o.weights_on_host = !strcmp(v, "host");
		} else if (!strcmp(opt, "--seed")) {
			errno = 0;
			char *end;
			unsigned long long sd = strtoull(v, &end, 10);
			if (!*v || *v == '-' || *v == '+' || *v == ' ' ||
			    *end || errno)
				return bad("--seed must be an unsigned "
					   "integer, not '%s'", v);
			o.seed = sd;
		} else if (!strcmp(opt, "--tiers")) {
			if (!parse_int(v, 1, 2, false, &x))
				return bad("--tiers must be 1 or 2, not '%s'",
					   v);
			o.ntiers = (int32_t)x;
		} else if (!strcmp(opt, "--tokens")) {
			if (!parse_int(v, HOFF_SYNTH_MIN_TOKENS,
				       HOFF_SYNTH_MAX_TOKENS, false, &x))
				return bad("--tokens must be an integer 256 .. "
					   "65536, not '%s'",
					   v);
			o.tokens = (int32_t)x;
		} else if (!strcmp(opt, "--memory")) {
			if (!parse_int(v, 1, HOFF_PS_LIMIT - 1, true, &x))
				return bad("--memory must be a byte count > 0 "
					   "(suffix K, M, G or T), not '%s'",
					   v);
			o.memory_bytes = x;
		} else if (!strcmp(opt, "-o")) {
			if (!*v)
				return bad("-o needs a file name%s", "");
			outp = v;
		} else {
			if (!*v)
				return bad("--schedule-none needs a file "
					   "name%s", "");
			schedp = v;
		}
	}
	if (!have_ops)
		return bad("--ops N is required%s", "");

	hoff_err e = {{0}};
	hoff_graph *g = NULL;
	hoff_sched *s = NULL;
	hoff_status st = hoff_synth_build(&o, &g, &e);
	if (st == HOFF_OK)
		st = hoff_graph_write(g, outp, &e);
	if (st == HOFF_OK && schedp) {
		st = ((s = hoff_sched_noffload(g)) ? HOFF_OK : HOFF_ENOMEM);
		if (st == HOFF_OK)
			st = hoff_sched_write(s, g, schedp, &e);
	}
	hoff_sched_free(s);
	hoff_graph_free(g);
	if (st != HOFF_OK) {
		fprintf(stderr, "hoff-gen-synth: %s\n", e.msg);
		return st == HOFF_EUSAGE ? 2 : 1;
	}
	return 0;
}
