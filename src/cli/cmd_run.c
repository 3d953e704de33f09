/* cmd_run.c: `hoffopt run` — read → check on the
 * simulator (an invalid schedule never runs) → scale → simulate the scaled
 * graph (the prediction) → lower (xplan) → run on a backend → compare and
 * report. Prints for the user and returns exit codes; main.c dispatches. */
#include "cmd.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "exec.h"
#include "fileio.h"
#include "graph_json.h"
#include "sched_json.h"
#include "sim.h"
#include "trace_json.h"

#define EXIT_INVALID HOFF_EXIT_INVALID
#define EXIT_BAD     HOFF_EXIT_BAD

static const char *const usage_run =
	"usage: hoffopt run GRAPH SCHEDULE [--backend cpu|cuda] [--verify]\n"
	"                   [--time-scale K] [--size-scale K] [--json]\n"
	"                   [--trace T] [--sim-trace T] [--align B]\n"
	"                   [--device N] [--cuda-graph] [--pace]\n"
	"                   [--check-plan [--no-run]] [--drop-wait N]\n"
	"                   [--slow-step N] [--corrupt-step N]\n"
	"\n"
	"Executes SCHEDULE on a real backend, walking its steps exactly as\n"
	"FORMAT.md's machine model says: one compute stream, an h2d and a d2h\n"
	"queue per tier, cache steps issued when the op before them finishes,\n"
	"ops waiting for their prefetches. Device blocks get offsets in one\n"
	"arena planned ahead from the simulator's event order, so the arena's\n"
	"size is the real footprint. Reports the simulator's prediction next\n"
	"to the measurement. A schedule the simulator rejects is not run.\n"
	"\n"
	"  --backend cpu    threads and memcpy, channels paced to their rates,\n"
	"                   ops as timed waits, busy for their last 0.1 ms\n"
	"                   (default)\n"
	"  --backend cuda   a compute stream and a stream per channel,\n"
	"                   cudaMemcpyAsync from pinned memory, ops as spin\n"
	"                   kernels timed to the op (needs a GPU)\n"
	"  --verify         fill every tensor with a pattern of its id and\n"
	"                   version; every command checks what it reads (an\n"
	"                   op its inputs at its start and end, after writing\n"
	"                   junk to its outputs; a transfer its source and\n"
	"                   its destination), and the end state is checked; a\n"
	"                   difference names the tensor and the step. The\n"
	"                   checks run inside the timed intervals: time\n"
	"                   without --verify\n"
	"  --time-scale K   multiply every duration by K (op times, latencies;\n"
	"                   rates divided by K): K < 1 shrinks the run\n"
	"  --size-scale K   multiply every byte count by K (rounded up, at\n"
	"                   least 1 byte) and every rate by K, so transfer\n"
	"                   times are unchanged: shrinks a real-size graph to\n"
	"                   this machine's memory with its ratios kept.\n"
	"                   Where rounding up makes a moved tensor over 1%\n"
	"                   larger (so its transfers slower), a warning names\n"
	"                   the worst one. Default on cpu: 1, or what fits\n"
	"                   the tensors in an eighth of this machine's memory\n"
	"                   (at most 1 GiB), said in the report\n"
	"  --json           one JSON object on stdout: backend, verified,\n"
	"                   predicted, measured, error_pct, arena_bytes, ...\n"
	"  --trace T        write the measured timeline as a Chrome trace, in\n"
	"                   the simulator's format\n"
	"  --sim-trace T    write the simulator's trace of the same (scaled)\n"
	"                   run, to compare with --trace track by track\n"
	"  --align B        round device blocks up to B bytes (default 1 on\n"
	"                   cpu, 256 on cuda)\n"
	"  --device N       the CUDA device to use (default 0)\n"
	"  --cuda-graph     cuda: capture the plan into one CUDA graph and\n"
	"                   launch it (no host enqueue lag)\n"
	"  --pace           cuda: hold each transfer's channel for its planned\n"
	"                   duration, so a tier slower than the link runs at\n"
	"                   its own rate\n";

/* The rest of run's usage (one string literal would be too long). */
static const char *const usage_run_more =
	"  --check-plan     check the plan's command stream for races (two\n"
	"                   unordered commands touching the same bytes, one\n"
	"                   writing; a wait for an event not yet recorded)\n"
	"                   before running it: exit 1 naming the two commands\n"
	"                   and their tensors, else the run goes on\n"
	"  --no-run         with --check-plan: check only, run nothing; prints\n"
	"                   \"no race, N waits\" or \"race, N waits\" (with\n"
	"                   --json: {\"race\": false, \"waits\": N})\n"
	"  --drop-wait N    testing: leave out the plan's wait number N\n"
	"                   (0-based; --check-plan --no-run prints how many)\n"
	"  --slow-step N    testing: the transfer at step N takes 4 times its\n"
	"                   duration (waits keep the run correct; a missing\n"
	"                   one shows under --verify)\n"
	"  --corrupt-step N testing: flip one byte of the transfer at step N,\n"
	"                   or with --verify of what the recompute at step N\n"
	"                   re-makes (with --verify, shows the check at work)\n"
	"\n"
	"Predicted and measured figures are in the scaled units. The cpu\n"
	"backend reports its emulated device's clock: a command starts when\n"
	"its stream and its waits allow and ends after its duration, or\n"
	"later when the host's work or scheduling overran it (counted; the\n"
	"largest lag is reported). Keep commands well above ~0.1 ms there.\n"
	"The arena and the host copies must fit in the memory this process may\n"
	"still take (MemAvailable, and the memory cgroup's limit less its use):\n"
	"a run that would not is refused before anything is allocated. --trace\n"
	"and --sim-trace may not name an input or each other.\n"
	"Exit codes: 0 ok, 1 invalid schedule or verification failure, 2 bad\n"
	"input or usage, no GPU, a backend failure, or not enough memory.\n";

typedef struct run_opts {
	HOFF_CLI_ARGS; /* GRAPH SCHEDULE, --json, --trace */
	const char *backend, *sim_trace;
	bool verify, check, no_run, cuda_graph, pace;
	bool size_auto; /* no --size-scale: chosen to fit this machine */
	double time_k, size_k;
	int64_t align, corrupt, device, drop_wait, slow;
	const hoff_cuda_api *cuda; /* NULL: this program has no CUDA */
} run_opts;

static const hoff_opt run_table[] = {
	HOFF_FLAG("--verify", run_opts, verify),
	HOFF_FLAG("--check-plan", run_opts, check),
	HOFF_FLAG("--no-run", run_opts, no_run),
	HOFF_FLAG("--cuda-graph", run_opts, cuda_graph),
	HOFF_FLAG("--pace", run_opts, pace),
	HOFF_CHOICE("--backend", run_opts, backend, "cpu|cuda",
		    "--backend: '%s' is not cpu or cuda"),
	HOFF_STR("--sim-trace", run_opts, sim_trace),
	HOFF_REAL("--time-scale", run_opts, time_k,
		  "--time-scale: '%s' is not a number > 0"),
	HOFF_REAL("--size-scale", run_opts, size_k,
		  "--size-scale: '%s' is not a number > 0"),
	HOFF_INT("--align", run_opts, align, 1, (int64_t)1 << 30,
		 "--align: '%s' is not a byte count in 1 .. 2^30"),
	HOFF_INT("--device", run_opts, device, 0, 1024,
		 "--device: '%s' is not a device number"),
	HOFF_INT("--drop-wait", run_opts, drop_wait, 0, INT64_MAX,
		 "--drop-wait: '%s' is not a wait number"),
	HOFF_INT("--slow-step", run_opts, slow, 0, INT64_MAX,
		 "--slow-step: '%s' is not a step"),
	HOFF_INT("--corrupt-step", run_opts, corrupt, 0, INT64_MAX,
		 "--corrupt-step: '%s' is not a step"),
};

/* What the options say together (checked before --help), and the
 * defaults that follow from them. */
static int finish_run(void *opts)
{
	run_opts *o = opts;
	o->size_auto = o->size_k == 0;
	if (o->size_auto)
		o->size_k = 1;
	if (o->no_run && !o->check)
		return hoff_cli_bad("%s", "--no-run needs --check-plan");
	if ((o->pace || o->cuda_graph) && strcmp(o->backend, "cuda"))
		return hoff_cli_bad("%s needs --backend cuda",
				    o->pace ? "--pace" : "--cuda-graph");
	if (o->align == 0)
		o->align = strcmp(o->backend, "cuda") ? 1 : 256;
	return 0;
}

static const hoff_cli_spec run_spec = {
	.from = 2,
	.npos = 2,
	.common = HOFF_CLI_JSON | HOFF_CLI_TRACE,
	.table = run_table,
	.nopts = HOFF_NOPTS(run_table),
	.usage = usage_run,
	.usage_more = usage_run_more,
	.missing = "run needs GRAPH and SCHEDULE (see --help)",
	.finish = finish_run,
};

/* run's defaults, then argv: true when run stops here with *rc. */
static bool parse_run(int argc, char **argv, run_opts *o, int *rc)
{
	memset(o, 0, sizeof *o);
	o->backend = "cpu";
	o->time_k = 1;
	o->size_k = 0; /* not given: chosen to fit this machine */
	o->align = 0;  /* the backend's default */
	o->corrupt = HOFF_NONE;
	o->drop_wait = HOFF_NONE;
	o->slow = HOFF_NONE;
	return hoff_cli_command(argc, argv, &run_spec, o, rc);
}

static double pct(int64_t measured, int64_t predicted)
{
	if (predicted == 0)
		return measured == 0 ? 0 : HUGE_VAL;
	return 100.0 * ((double)measured - (double)predicted) /
	       (double)predicted;
}

static void json_pct(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.6g", v);
	else
		fputs("null", f);
}

static void print_json(FILE *f, const hoff_graph *g, const hoff_sched *s,
		       const run_opts *o, const hoff_sim_result *pr,
		       const hoff_xplan *p, const hoff_exec_result *m)
{
	char line[HOFF_ERRLEN];
	fputs("{\"backend\": ", f);
	hoff_json_string(f, o->backend);
	fputs(", \"device\": ", f);
	hoff_json_string(f, m->device);
	fputs(", \"graph\": ", f);
	hoff_json_string(f, g->name ? g->name : "");
	fputs(", \"policy\": ", f);
	if (s->policy)
		hoff_json_string(f, s->policy);
	else
		fputs("null", f);
	fprintf(f, ", \"time_scale\": %.17g, \"size_scale\": %.17g", o->time_k,
		o->size_k);
	fprintf(f, ", \"verified\": %s",
		!m->checked  ? "null"
		: m->nfaults ? "false"
			     : "true");
	fputs(", \"faults\": [", f);
	for (int64_t i = 0; i < m->nfaults && i < HOFF_EXEC_MAXFAULTS; i++) {
		hoff_exec_fault_format(p, &m->fault[i], line, sizeof line);
		fputs(i ? ", " : "", f);
		hoff_json_string(f, line);
	}
	fprintf(f, "], \"faults_total\": %" PRId64, m->nfaults);
	fputs(", \"predicted\": {", f);
	hoff_json_summary(f, &pr->summary);
	fputs("}, \"measured\": {", f);
	hoff_json_summary(f, &m->measured);
	fputs("}, \"error_pct\": ", f);
	json_pct(f, pct(m->measured.makespan_ps, pr->summary.makespan_ps));
	fprintf(f,
		", \"arena_bytes\": %" PRId64
		", \"planned_peak_bytes\": %" PRId64
		", \"host_bytes\": %" PRId64 ", \"align_bytes\": %" PRId64,
		p->arena_bytes, p->plan_peak_bytes, p->host_bytes,
		p->align_bytes);
	fputs(", ", f);
	hoff_json_time(f, "lag_max_s", m->lag_max_ps);
	fprintf(f, ", \"overruns\": %" PRId64, m->overruns);
	fputs(", \"channels\": [", f);
	for (int32_t i = 1, n = 0; i < p->nstreams; i++) {
		const hoff_exec_chan *c = &m->chan[i];
		fputs(n++ ? ", {\"tier\": " : "{\"tier\": ", f);
		hoff_json_string(f, g->tier[(i - 1) / 2].name);
		fprintf(f,
			", \"dir\": \"%s\", \"transfers\": %" PRId64
			", \"bytes\": %" PRId64 ", ",
			i % 2 ? "h2d" : "d2h", c->nxfers, c->bytes);
		hoff_json_time(f, "busy_s", c->busy_ps);
		fputs(", \"achieved_Bps\": ", f);
		if (c->busy_ps > 0)
			fprintf(f, "%.6g",
				(double)c->bytes / hoff_s(c->busy_ps));
		else
			fputs("null", f);
		fprintf(f, ", \"nominal_Bps\": %.6g}", c->nominal_Bps);
	}
	fputs("], \"ops\": [", f);
	for (int32_t k = 0; k < p->nops; k++) {
		fputs(k ? ",\n  {\"id\": " : "\n  {\"id\": ", f);
		hoff_json_string(f, g->op[p->op[k].op].id);
		fputs(p->op[k].recompute ? ", \"recompute\": true, " : ", ", f);
		hoff_json_time(f, "predicted_start_s", p->op[k].pred_start_ps);
		fputs(", ", f);
		hoff_json_time(f, "predicted_end_s", p->op[k].pred_end_ps);
		fputs(", ", f);
		hoff_json_time(f, "start_s", m->op_start_ps[k]);
		fputs(", ", f);
		hoff_json_time(f, "end_s", m->op_end_ps[k]);
		fputc('}', f);
	}
	fputs("]}\n", f);
}

static void row_time(FILE *f, const char *name, int64_t pred, int64_t meas)
{
	fprintf(f, "%-12s %16.9g %16.9g", name, hoff_s(pred), hoff_s(meas));
	double e = pct(meas, pred);
	if (isfinite(e))
		fprintf(f, " %+9.2f%%\n", e);
	else
		fputs("         -\n", f);
}

static void row_bytes(FILE *f, const char *name, int64_t pred, int64_t meas)
{
	fprintf(f, "%-12s %16" PRId64 " %16" PRId64 "\n", name, pred, meas);
}

static void print_text(FILE *f, const hoff_graph *g, const hoff_sched *s,
		       const run_opts *o, const hoff_sim_result *pr,
		       const hoff_xplan *p, const hoff_exec_result *m)
{
	char line[HOFF_ERRLEN];
	fprintf(f, "run %s (policy %s) on %s: %s\n",
		g->name ? g->name : "(unnamed)", s->policy ? s->policy : "?",
		o->backend, m->device);
	if (o->time_k != 1 || o->size_k != 1)
		fprintf(f,
			"scaled: times x %g, sizes x %g (figures below in "
			"scaled units)%s\n",
			o->time_k, o->size_k,
			o->size_auto && o->size_k != 1
				? "; sizes chosen so the tensors fit in an "
				  "eighth of this machine's memory, at most 1 "
				  "GiB, rates with them (--size-scale 1: full "
				  "size)"
				: "");
	const hoff_summary *a = &pr->summary, *b = &m->measured;
	fprintf(f, "%-12s %16s %16s %10s\n", "", "predicted", "measured",
		"error");
	row_time(f, "makespan_s", a->makespan_ps, b->makespan_ps);
	row_time(f, "compute_s", a->compute_ps, b->compute_ps);
	if (p->nrecompute)
		row_time(f, "recompute_s", a->recompute_ps, b->recompute_ps);
	row_time(f, "stall_s", a->stall_ps, b->stall_ps);
	row_bytes(f, "peak_bytes", a->peak_bytes, b->peak_bytes);
	row_bytes(f, "h2d_bytes", a->h2d_bytes, b->h2d_bytes);
	row_bytes(f, "d2h_bytes", a->d2h_bytes, b->d2h_bytes);
	fprintf(f,
		"arena        %" PRId64 " B: the device footprint, every block "
		"at an offset planned ahead (planned peak %" PRId64
		" B, simulator peak %" PRId64 " B",
		p->arena_bytes, p->plan_peak_bytes, a->peak_bytes);
	if (p->arena_bytes > a->peak_bytes)
		fprintf(f,
			"; %" PRId64 " B more than the peak: free space "
			"split between blocks, and alignment",
			p->arena_bytes - a->peak_bytes);
	fputs(")\n", f);
	for (int32_t i = 1; i < p->nstreams; i++) {
		const hoff_exec_chan *c = &m->chan[i];
		if (!c->nxfers)
			continue;
		fprintf(f,
			"channel      %s %s: %" PRId64 " B in %" PRId64
			" transfers, busy %.6g s, achieved %.4g B/s (nominal "
			"%.4g B/s)\n",
			g->tier[(i - 1) / 2].name, i % 2 ? "h2d" : "d2h",
			c->bytes, c->nxfers, hoff_s(c->busy_ps),
			c->busy_ps ? (double)c->bytes / hoff_s(c->busy_ps) : 0,
			c->nominal_Bps);
	}
	if (!strcmp(o->backend, "cpu"))
		fprintf(f,
			"emulation    the host's threads fell behind the "
			"emulated clock by up to %.3g s; %" PRId64 " commands "
			"ran past their planned end (a loaded host; they end "
			"late, and the times show it)\n",
			hoff_s(m->lag_max_ps), m->overruns);
	else if (m->lag_max_ps > 0)
		fprintf(f,
			"enqueue      the host enqueued until %.3g s after the "
			"start: early commands may have started late\n",
			hoff_s(m->lag_max_ps));
	if (!m->checked) {
		fputs("verify       not run (--verify)\n", f);
		return;
	}
	if (!m->nfaults) {
		fprintf(f,
			"verify       passed: every prefetch and %" PRId64
			" regions at the end match their patterns\n",
			p->nfinal);
		return;
	}
	fprintf(f, "verify       FAILED: %" PRId64 " differences\n",
		m->nfaults);
	for (int64_t i = 0; i < m->nfaults && i < 20; i++) {
		hoff_exec_fault_format(p, &m->fault[i], line, sizeof line);
		fprintf(f, "  %s\n", line);
	}
}

/* Checks s on g as written; prints the violations. */
static int refuse_invalid(const hoff_graph *g, const hoff_sched *s,
			  const char *file)
{
	hoff_sim_result r = {0};
	hoff_err e = {{0}};
	hoff_sim_opts so = hoff_sim_defaults();
	hoff_status st = hoff_sim_run(g, s, &so, &r, &e);
	if (st != HOFF_OK) {
		fprintf(stderr, "hoffopt: %s\n", e.msg);
		hoff_sim_result_free(&r);
		return hoff_cli_exit(st);
	}
	if (r.valid) {
		hoff_sim_result_free(&r);
		return 0;
	}
	char line[HOFF_ERRLEN];
	int64_t shown = r.nviol < HOFF_SIM_MAXVIOL ? r.nviol : HOFF_SIM_MAXVIOL;
	for (int64_t i = 0; i < shown && i < 20; i++) {
		hoff_violation_format(g, s, &r.viol[i], line, sizeof line);
		fprintf(stderr, "%s: %s\n", file, line);
	}
	fprintf(stderr,
		"hoffopt: run: %s is invalid (%" PRId64 " violations); "
		"nothing was run\n",
		file, r.nviol);
	hoff_sim_result_free(&r);
	return EXIT_INVALID;
}

/* A test hook's step (HOFF_NONE: unused) must be a prefetch or a store of
 * s: 0, else a message and the usage exit code. */
static int need_transfer(const hoff_sched *s, const char *opt, int64_t step,
			 bool recompute)
{
	if (step == HOFF_NONE ||
	    (step < s->nsteps &&
	     (s->step[step].kind == HOFF_STEP_PREFETCH ||
	      s->step[step].kind == HOFF_STEP_STORE ||
	      (recompute && s->step[step].kind == HOFF_STEP_RECOMPUTE))))
		return 0;
	fprintf(stderr, "hoffopt: %s %lld: %s\n", opt, (long long)step,
		step >= s->nsteps ? "past the schedule's last step"
		: recompute	  ? "not a prefetch, a store or a recompute"
				  : "not a prefetch or a store");
	return HOFF_EXIT_BAD;
}

/* --check-plan: the checker on the plan; prints its verdict (quiet_ok:
 * the --no-run line on stdout, as JSON with `json`). 0: no race, 1: a
 * race, 2: a failure. */
static int check_plan(const hoff_xplan *p, const hoff_exec_opts *eo,
		      const char *file, bool quiet_ok, bool json, hoff_err *e)
{
	hoff_race r;
	hoff_status st = hoff_exec_check(p, eo, &r, e);
	if (st != HOFF_OK) {
		fprintf(stderr, "hoffopt: run: %s\n", e->msg);
		return EXIT_BAD;
	}
	char line[HOFF_ERRLEN + 400];
	hoff_race_format(p, &r, line, sizeof line);
	bool race = r.kind != HOFF_RACE_NONE;
	if (race)
		fprintf(stderr, "%s: race: %s\n", file, line);
	if (quiet_ok && json) {
		printf("{\"race\": %s, \"waits\": %lld",
		       race ? "true" : "false", (long long)r.nwaits);
		if (race) {
			fputs(", \"what\": ", stdout);
			hoff_json_string(stdout, line);
		}
		puts("}");
	} else if (quiet_ok) {
		printf("%s, %lld waits\n", race ? "race" : "no race",
		       (long long)r.nwaits);
	}
	if (race)
		return EXIT_INVALID;
	if (!quiet_ok)
		fprintf(stderr, "%s: plan checked: no race (%lld waits)\n",
			file, (long long)r.nwaits);
	return 0;
}

static hoff_status new_backend(const run_opts *o, const hoff_xplan *p,
			       const hoff_exec_opts *eo, hoff_backend **b,
			       hoff_err *e)
{
	if (!strcmp(o->backend, "cpu"))
		return hoff_backend_cpu_new(p, eo, b, e);
	if (o->cuda)
		return o->cuda->backend_new(p, eo, b, e);
	return hoff_seterr(e, HOFF_EIO, "%s", HOFF_NO_CUDA);
}

/* The CPU backend holds every tensor's bytes in this machine's memory
 * (a host copy, a device arena): with no --size-scale, a graph whose
 * bytes pass an eighth of the memory (at most 1 GiB, which memcpy moves
 * at the rates the links are scaled to) is shrunk to it, rates with it,
 * so transfer times and the schedule's shape are kept. */
static double fit_size_scale(const hoff_graph *g)
{
	double total = 0;
	for (int32_t t = 0; t < g->ntensors; t++)
		total += (double)g->tensor[t].bytes;
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGE_SIZE);
	double mem = pages > 0 && psize > 0 ? (double)pages * (double)psize
					    : 8.0 * (1 << 30);
	double limit = fmin(mem / 8, (double)(1 << 30));
	return total > limit ? limit / total : 1;
}

/* --size-scale K rounds each byte count up, to at least 1 byte, while
 * rates scale by K exactly: a tensor that grows by rounding moves slower
 * than unscaled. Warns (stderr) naming the moved tensor whose transfers
 * it slows most, when that is over 1%; g is not yet scaled. */
static void warn_rounding(const hoff_graph *g, const hoff_sched *s, double k)
{
	double worst = 1.01;
	int32_t wt = HOFF_NONE;
	for (int64_t i = 0; k != 1 && i < s->nsteps; i++) {
		const hoff_step *st = &s->step[i];
		if (st->kind != HOFF_STEP_PREFETCH &&
		    st->kind != HOFF_STEP_STORE)
			continue;
		double exact = (double)g->tensor[st->id].bytes * k;
		double r = fmax(1, ceil(exact)) / exact;
		if (r > worst) {
			worst = r;
			wt = st->id;
		}
	}
	if (wt == HOFF_NONE)
		return;
	char safe[4 * HOFF_ERRLEN];
	const hoff_tensor *t = &g->tensor[wt];
	fprintf(stderr,
		"hoffopt: run: warning: --size-scale %g rounds tensor \"%s\" "
		"(%" PRId64 " B) up to %.0f B, %.4g times its scaled size: its "
		"transfers take that much longer than unscaled, and the "
		"prediction and the run with them (sizes are whole bytes, at "
		"least 1)\n",
		k, hoff_cli_safe(t->id, safe, sizeof safe), t->bytes,
		fmax(1, ceil((double)t->bytes * k)), worst);
}

/* Refuses (exit 2, one line) a plan whose arena and host copies would
 * not fit in what this process may still allocate: the cpu backend
 * allocates and touches both, the cuda one pins the host copies. */
static int refuse_oom(const run_opts *o, const hoff_xplan *p)
{
	bool cpu = !strcmp(o->backend, "cpu");
	double need =
		(double)p->host_bytes + (cpu ? (double)p->arena_bytes : 0);
	int64_t avail = hoff_cli_mem_available("");
	if (need <= (double)avail)
		return 0;
	fprintf(stderr,
		"hoffopt: run: the %s backend needs %.0f B of this machine's "
		"memory (%s%" PRId64 " B of host copies), more than the "
		"%" PRId64 " B it may still take (MemAvailable, the memory "
		"cgroup's limit less its use): nothing was run (try "
		"--size-scale %.3g)\n",
		o->backend, need, cpu ? "a device arena and " : "",
		p->host_bytes, avail, o->size_k * 0.5 * (double)avail / need);
	return EXIT_BAD;
}

/* --trace and --sim-trace, as a pair when both are given: one never
 * lands beside the other's old version. */
static hoff_status write_traces(const run_opts *o, const hoff_graph *g,
				const hoff_timeline *measured,
				const hoff_timeline *predicted, hoff_err *e)
{
	if (!o->trace || !o->sim_trace)
		return o->trace ? hoff_trace_write(g, measured, o->trace, e)
		       : o->sim_trace
			       ? hoff_trace_write(g, predicted, o->sim_trace, e)
			       : HOFF_OK;
	hoff_outfile a, b;
	hoff_status st = hoff_outfile_open(&a, o->trace, e);
	if (st != HOFF_OK)
		return st;
	if ((st = hoff_outfile_open(&b, o->sim_trace, e)) != HOFF_OK) {
		hoff_outfile_abort(&a);
		return st;
	}
	hoff_trace_print(g, measured, a.f);
	hoff_trace_print(g, predicted, b.f);
	return hoff_outfile_commit_pair(&a, &b, e);
}

int hoff_cmd_run(int argc, char **argv, const hoff_cuda_api *cuda)
{
	run_opts o;
	int rc;
	if (parse_run(argc, argv, &o, &rc))
		return rc;
	o.cuda = cuda;
	const char *outs[] = {o.trace, o.sim_trace};
	if ((rc = hoff_cli_clobbers(outs, 2, o.pos, 2)) != 0)
		return rc;
	hoff_err e = {{0}};
	hoff_graph *g = NULL;
	hoff_sched *s = NULL;
	hoff_sim_result pr = {0};
	hoff_xplan plan = {0};
	hoff_backend *be = NULL;
	hoff_exec_result m = {0};
	hoff_status st = hoff_graph_read(o.pos[0], &g, &e);
	if (st == HOFF_OK)
		st = hoff_sched_read(o.pos[1], g, &s, &e);
	if (st != HOFF_OK) {
		fprintf(stderr, "hoffopt: %s\n", e.msg);
		rc = hoff_cli_exit(st);
		goto out;
	}
	if ((rc = need_transfer(s, "--corrupt-step", o.corrupt, true)) != 0 ||
	    (rc = need_transfer(s, "--slow-step", o.slow, false)) != 0)
		goto out;
	if ((rc = refuse_invalid(g, s, o.pos[1])) != 0)
		goto out;
	/* The prediction is the scaled graph's simulation; the budget and
	 * capacities were checked above, unscaled. */
	hoff_sim_opts so = hoff_sim_defaults();
	so.budget_bytes = INT64_MAX;
	so.timeline = true;
	so.op_times = true;
	hoff_exec_opts eo = hoff_exec_defaults();
	eo.verify = o.verify;
	eo.corrupt_step = o.corrupt;
	eo.device = (int32_t)o.device;
	eo.drop_wait = o.drop_wait;
	eo.slow_step = o.slow;
	eo.cuda_graph = o.cuda_graph;
	eo.pace = o.pace;
	if (o.size_auto && !strcmp(o.backend, "cpu"))
		o.size_k = fit_size_scale(g);
	warn_rounding(g, s, o.size_k);
	if (o.time_k != 1 || o.size_k != 1)
		st = hoff_exec_scale(g, o.time_k, o.size_k, &e);
	if (st == HOFF_OK)
		st = hoff_sim_run(g, s, &so, &pr, &e);
	if (st == HOFF_OK && !pr.valid)
		st = hoff_seterr(&e, HOFF_EINPUT,
				 "%s: the schedule is not valid once scaled "
				 "(try other factors)",
				 o.pos[1]);
	if (st == HOFF_OK)
		st = hoff_xplan_build(g, s, &pr, o.align, &plan, &e);
	if (st == HOFF_OK && !(o.check && o.no_run) &&
	    (rc = refuse_oom(&o, &plan)) != 0)
		goto out;
	if (st == HOFF_OK && o.check) {
		if ((rc = check_plan(&plan, &eo, o.pos[1], o.no_run, o.json,
				     &e)) != 0 ||
		    o.no_run)
			goto out;
	}
	if (st == HOFF_OK)
		st = new_backend(&o, &plan, &eo, &be, &e);
	if (st == HOFF_OK)
		st = hoff_exec_run(be, &m, &e);
	if (st == HOFF_OK)
		st = write_traces(&o, g, &m.tl, &pr.tl, &e);
	if (st != HOFF_OK) {
		fprintf(stderr, "hoffopt: run: %s\n", e.msg);
		rc = st == HOFF_EINVALID ? EXIT_BAD : hoff_cli_exit(st);
		goto out;
	}
	if (o.json)
		print_json(stdout, g, s, &o, &pr, &plan, &m);
	else
		print_text(stdout, g, s, &o, &pr, &plan, &m);
	if (m.nfaults) {
		char line[HOFF_ERRLEN];
		hoff_exec_fault_format(&plan, &m.fault[0], line, sizeof line);
		fprintf(stderr, "hoffopt: run: verification failed: %s\n",
			line);
		rc = EXIT_INVALID;
	}
out:
	hoff_exec_result_free(&m);
	hoff_backend_free(be);
	hoff_xplan_free(&plan);
	hoff_sim_result_free(&pr);
	hoff_sched_free(s);
	hoff_graph_free(g);
	return rc;
}
