/* test_exec_cpu.c: the CPU backend on hand-built schedules and on model
 * graphs. Structure is asserted exactly (events in step order, offsets,
 * verification faults naming tensor and step). Timings and the races
 * --verify must catch are judged on clean runs only: runs where the host
 * kept up with the emulated clock (no command overran its deadline, no
 * thread started one late), whose times are then the model's to the
 * microsecond, by the emulator's construction; a run the host could not
 * keep up with is retried (at most ATTEMPTS), and when none is clean the
 * check says it was not judged rather than pass or fail on luck (issue
 * 34, 13). ctest runs this program alone (RUN_SERIAL).
 * Machine: 1 MB moves in 1 ms; ops take whole ms. */
#define _POSIX_C_SOURCE 200809L

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "exec_cases.h"
#include "graph_json.h"
#include "models.h"
#include "testutil_policy.h"

#define MS 1000000000LL
/* Under ThreadSanitizer a run with a dropped wait is the data race it is
 * meant to be, and halts the test: such runs are left out there. */
#if defined(__SANITIZE_THREAD__)
#define RACES_REPORTED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define RACES_REPORTED 1
#endif
#endif
#if !defined(RACES_REPORTED)
#define RACES_REPORTED 0
#endif
#define MB 1000000LL
/* Runs tried for a clean one (a timing case, a race to catch). */
#define ATTEMPTS 8
/* A thread that starts a command later than this after its emulated
 * start: the host did not keep up (a fault may then hide). */
#define LAG_OK_PS (200 * MB)

/* op0 (4 ms) then op1 (4 ms) reading w1, prefetched at 0 from the host. */
#define TWO_OPS(w1_bytes, op_s)                                                \
	GRAPH("{\"id\": \"x\", \"bytes\": 1000000, \"kind\": \"input\"},"      \
	      "{\"id\": \"w0\", \"bytes\": 1000000, \"kind\": \"weight\"},"    \
	      "{\"id\": \"w1\", \"bytes\": " w1_bytes ", \"kind\": "           \
	      "\"weight\", \"home\": \"host\"},"                               \
	      "{\"id\": \"a\", \"bytes\": 1000000, \"kind\": \"activation\"}," \
	      "{\"id\": \"b\", \"bytes\": 1000000, \"kind\": \"output\"}",     \
	      "{\"id\": \"op0\", \"inputs\": [\"x\", \"w0\"], \"outputs\": "   \
	      "[\"a\"], \"time_s\": " op_s "},"                                \
	      "{\"id\": \"op1\", \"inputs\": [\"a\", \"w1\"], \"outputs\": "   \
	      "[\"b\"], \"time_s\": " op_s "}")
#define PREFETCH_W1                                                            \
	SCHED("{\"prefetch\": \"w1\", \"from\": \"host\"}, {\"op\": "          \
	      "\"op0\"}, {\"op\": \"op1\"}")

#define KV_GRAPH KV_GRAPH_OF("0.001")

/* Wait before op k, measured: its start minus the previous op's end. */
static int64_t wait_before(const ran *x, int32_t k)
{
	int64_t prev = k ? x->m.op_end_ps[k - 1] : 0;
	return x->m.op_start_ps[k] - prev;
}

static int64_t labs64(int64_t v) { return v < 0 ? -v : v; }

/* Under a sanitizer that slows every thread many times (run.sh's
 * ThreadSanitizer part sets HOFF_SANITIZED), the checks of how long
 * things took are left out; what ran, and in which order, is checked. */
static bool timed(void) { return getenv("HOFF_SANITIZED") == NULL; }

/* Whether the host kept up with x's emulated clock: no command overran
 * its deadline and none started over LAG_OK_PS late. */
static bool clean(const ran *x)
{
	return x->m.overruns == 0 && x->m.lag_max_ps <= LAG_OK_PS;
}

/* Says that a timing check was left unjudged: no clean run in n, or
 * none timed (HOFF_SANITIZED). */
static void not_judged(const char *what, int n)
{
	print_message("  %s: not judged: no clean run in %d (the host fell "
		      "behind: loaded, or under ThreadSanitizer)\n",
		      what, n);
}

static int64_t xfer_at(const hoff_xplan *p, int64_t step);

/* The emulated clock's rule, on any run, loaded or not: op1 starts when
 * op0 (its stream) has ended and w1's prefetch (its wait) has. */
static void op1_starts_at_its_waits(const ran *x)
{
	int64_t ready = x->m.op_end_ps[0] > x->m.x_end_ps[0] ? x->m.op_end_ps[0]
							     : x->m.x_end_ps[0];
	assert_int_equal(x->m.op_start_ps[1], ready);
}

/* w1 (2 ms) hides behind op0 (4 ms): op1 follows op0 at once. */
static void test_hidden_prefetch(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(TWO_OPS("2000000", "0.004"));
	hoff_sched *s = tu_sched(g, PREFETCH_W1);
	hoff_exec_opts o = hoff_exec_defaults();
	bool judged = false;
	for (int attempt = 0; attempt < ATTEMPTS && !judged; attempt++) {
		ran x;
		run_on(hoff_backend_cpu_new, g, s, &o, &x);
		assert_int_equal(x.pr.summary.stall_ps, 0);
		check_events(&x);
		/* The transfer lasted at least its paced 2 ms. */
		assert_true(x.m.x_end_ps[0] - x.m.x_start_ps[0] >= 2 * MS);
		op1_starts_at_its_waits(&x);
		/* No stall: under 5% of the op (0 on the model). */
		if ((judged = clean(&x) && timed()))
			assert_true(wait_before(&x, 1) < 4 * MS / 20);
		ran_free(&x);
	}
	if (!judged)
		not_judged("op1's wait", ATTEMPTS);
	hoff_sched_free(s);
	hoff_graph_free(g);
}

/* w1 (8 ms) behind op0 (2 ms): op1 waits 6 ms, shown as a stall. */
static void test_stalling_prefetch(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(TWO_OPS("8000000", "0.002"));
	hoff_sched *s = tu_sched(g, PREFETCH_W1);
	hoff_exec_opts o = hoff_exec_defaults();
	int64_t pred = 6 * MS;
	bool judged = false;
	for (int attempt = 0; attempt < ATTEMPTS && !judged; attempt++) {
		ran x;
		run_on(hoff_backend_cpu_new, g, s, &o, &x);
		assert_int_equal(x.pr.summary.stall_ps, pred);
		check_events(&x);
		op1_starts_at_its_waits(&x);
		/* The stall is an event of its own before op1 (step 2). */
		int stalls = 0;
		for (size_t i = 0; i < x.m.tl.nev; i++) {
			const hoff_event *ev = &x.m.tl.ev[i];
			if (ev->kind == HOFF_EV_STALL && ev->step == 2 &&
			    ev->end_ps - ev->start_ps > MS)
				stalls++;
		}
		if ((judged = clean(&x) && timed())) {
			assert_int_equal(stalls, 1);
			assert_true(labs64(wait_before(&x, 1) - pred) <=
				    pred * 15 / 100);
		}
		ran_free(&x);
	}
	if (!judged)
		not_judged("op1's stall", ATTEMPTS);
	hoff_sched_free(s);
	hoff_graph_free(g);
}

/* --verify passes on valid schedules: updates change the content,
 * the stored copy comes back as it went. The peak measured is the
 * plan's. */
static void test_verify_passes(void **state)
{
	(void)state;
	hoff_exec_opts o = hoff_exec_defaults();
	o.verify = true;
	const char *cases[][2] = {{KV_GRAPH, KV_STEPS},
				  {TWO_OPS("2000000", "0.001"), PREFETCH_W1}};
	for (int c = 0; c < 2; c++) {
		hoff_graph *g = tu_graph(cases[c][0]);
		hoff_sched *s = tu_sched(g, cases[c][1]);
		ran x;
		run_on(hoff_backend_cpu_new, g, s, &o, &x);
		assert_true(x.m.checked);
		assert_int_equal(x.m.nfaults, 0);
		check_events(&x);
		assert_int_equal(x.m.measured.peak_bytes, x.p.plan_peak_bytes);
		assert_int_equal(x.m.measured.peak_bytes,
				 x.pr.summary.peak_bytes);
		assert_int_equal(x.m.measured.h2d_bytes,
				 x.pr.summary.h2d_bytes);
		assert_int_equal(x.m.measured.d2h_bytes,
				 x.pr.summary.d2h_bytes);
		ran_free(&x);
		hoff_sched_free(s);
		hoff_graph_free(g);
	}
}

/* A byte flipped during a transfer is caught and named. */
static void test_verify_catches(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(KV_GRAPH);
	hoff_sched *s = tu_sched(g, KV_STEPS);
	int32_t kv = hoff_graph_find_tensor(g, "kv");
	int32_t w = hoff_graph_find_tensor(g, "w");
	hoff_exec_opts o = hoff_exec_defaults();
	o.verify = true;
	char line[HOFF_ERRLEN];
	/* Flipped in the prefetch of kv (step 4): found there, version 1. */
	ran x;
	o.corrupt_step = 4;
	run_on(hoff_backend_cpu_new, g, s, &o, &x);
	assert_true(x.m.nfaults >= 1);
	assert_int_equal(x.m.fault[0].step, 4);
	assert_int_equal(x.m.fault[0].tensor, kv);
	assert_int_equal(x.m.fault[0].version, 1);
	assert_int_equal(x.m.fault[0].byte, 500003 / 2);
	hoff_exec_fault_format(&x.p, &x.m.fault[0], line, sizeof line);
	assert_non_null(strstr(line, "steps[4] prefetch \"kv\""));
	ran_free(&x);
	/* Flipped in the store of kv (step 1, into the host copy): the
	 * store's own check of its destination finds it, then the prefetch
	 * that brings it back (step 4) at its source (a command keeps its
	 * first failure), then op2, which reads it. */
	o.corrupt_step = 1;
	run_on(hoff_backend_cpu_new, g, s, &o, &x);
	assert_int_equal(x.m.nfaults, 3);
	assert_int_equal(x.m.fault[0].step, 1);
	assert_int_equal(x.m.fault[0].at, HOFF_FAULT_XFER_DST);
	assert_int_equal(x.m.fault[0].tensor, kv);
	assert_int_equal(x.m.fault[0].byte, 500003 / 2);
	hoff_exec_fault_format(&x.p, &x.m.fault[0], line, sizeof line);
	assert_string_equal(line, "steps[1] store \"kv\" to \"host\": byte "
				  "250001 differs from version 1 of its "
				  "pattern");
	assert_int_equal(x.m.fault[1].step, 4);
	assert_int_equal(x.m.fault[1].at, HOFF_FAULT_XFER_SRC);
	assert_int_equal(x.m.fault[2].step, 5); /* op2 reads it */
	assert_int_equal(x.m.fault[2].at, HOFF_FAULT_OP_START);
	ran_free(&x);
	/* Flipped in w's prefetch (step 2): found there, by op1 that reads
	 * it, and again at the end on the device; w's host copy is intact. */
	o.corrupt_step = 2;
	run_on(hoff_backend_cpu_new, g, s, &o, &x);
	assert_int_equal(x.m.nfaults, 3);
	assert_int_equal(x.m.fault[0].step, 2);
	assert_int_equal(x.m.fault[0].tensor, w);
	assert_int_equal(x.m.fault[1].step, 3);
	assert_int_equal(x.m.fault[1].at, HOFF_FAULT_OP_START);
	assert_int_equal(x.m.fault[1].tensor, w);
	assert_int_equal(x.m.fault[1].byte, 999999 / 2);
	hoff_exec_fault_format(&x.p, &x.m.fault[1], line, sizeof line);
	assert_string_equal(line, "steps[3] op \"op1\": \"w\" at the op's "
				  "start: byte 499999 differs from version 0 "
				  "of its pattern");
	assert_int_equal(x.m.fault[2].step, HOFF_NONE);
	assert_int_equal(x.m.fault[2].tensor, w);
	assert_int_equal(x.m.fault[2].tier, HOFF_DEVICE);
	ran_free(&x);
	/* Without --verify nothing is checked. */
	o.verify = false;
	run_on(hoff_backend_cpu_new, g, s, &o, &x);
	assert_false(x.m.checked);
	assert_int_equal(x.m.nfaults, 0);
	ran_free(&x);
	hoff_sched_free(s);
	hoff_graph_free(g);
}

/* Writes text to a fresh temporary file; returns its path (static). */
static const char *temp_file(const char *text, char *path, size_t len)
{
	snprintf(path, len, "/tmp/hoff_exec_XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	size_t n = strlen(text);
	assert_int_equal(write(fd, text, n), (ssize_t)n);
	close(fd);
	return path;
}

static int cli(const char *graph, const char *sched, const char *extra)
{
	char gp[64], sp[64];
	temp_file(graph, gp, sizeof gp);
	temp_file(sched, sp, sizeof sp);
	char *argv[16] = {"hoffopt", "run", gp, sp, "--json"};
	int argc = 5;
	char buf[128];
	if (extra) {
		snprintf(buf, sizeof buf, "%s", extra);
		for (char *t = strtok(buf, " "); t && argc < 15;
		     t = strtok(NULL, " "))
			argv[argc++] = t;
	}
	/* The report goes to /dev/null; messages on stderr stay. */
	fflush(stdout);
	int saved = dup(1), null = open("/dev/null", O_WRONLY);
	assert_true(saved >= 0 && null >= 0);
	dup2(null, 1);
	close(null);
	int rc = hoff_cmd_run(argc, argv, NULL);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	unlink(gp);
	unlink(sp);
	return rc;
}

/* The CLI: a schedule the simulator rejects is refused (exit 1) before
 * anything runs; a valid one runs and verifies (0); a corrupted copy
 * fails verification (1); bad options are usage errors (2). */
static void test_cli(void **state)
{
	(void)state;
	/* op1 before w1 is fetched: rule 1. */
	assert_int_equal(cli(TWO_OPS("2000000", "0.001"),
			     SCHED("{\"op\": \"op0\"}, {\"op\": \"op1\"}"),
			     "--verify"),
			 1);
	assert_int_equal(cli(KV_GRAPH, KV_STEPS, "--verify"), 0);
	assert_int_equal(cli(KV_GRAPH, KV_STEPS,
			     "--verify --time-scale 0.5 --size-scale 0.25"),
			 0);
	assert_int_equal(cli(KV_GRAPH, KV_STEPS, "--verify --corrupt-step 4"),
			 1);
	/* The checker: no race in the plan (0); with op2's wait on kv's
	 * prefetch dropped, a race (1) and nothing run; --no-run alone is a
	 * usage error (2). */
	assert_int_equal(cli(KV_GRAPH, KV_STEPS, "--check-plan --no-run"), 0);
	assert_int_equal(cli(KV_GRAPH, KV_STEPS, "--check-plan"), 0);
	{
		hoff_graph *g = tu_graph(KV_GRAPH);
		hoff_sched *s = tu_sched(g, KV_STEPS);
		hoff_exec_opts d = hoff_exec_defaults();
		ran x;
		run_on(hoff_backend_cpu_new, g, s, &d, &x);
		int64_t w = wait_index(&x.p, 2, xfer_at(&x.p, 4));
		ran_free(&x);
		hoff_sched_free(s);
		hoff_graph_free(g);
		char opt[64];
		snprintf(opt, sizeof opt, "--check-plan --drop-wait %lld",
			 (long long)w);
		assert_int_equal(cli(KV_GRAPH, KV_STEPS, opt), 1);
	}
	assert_int_equal(cli(KV_GRAPH, KV_STEPS, "--no-run"), 2);
	/* Test hooks out of range are usage errors, not silent no-ops. */
	assert_int_equal(cli(KV_GRAPH, KV_STEPS, "--drop-wait 999"), 2);
	assert_int_equal(cli(KV_GRAPH, KV_STEPS,
			     "--check-plan --no-run --drop-wait 999"),
			 2);
	assert_int_equal(cli(KV_GRAPH, KV_STEPS, "--slow-step 0"), 2);
	assert_int_equal(cli(KV_GRAPH, KV_STEPS, "--slow-step 99"), 2);
	assert_int_equal(cli(KV_GRAPH, KV_STEPS, "--verify --slow-step 4"), 0);
	assert_int_equal(cli(KV_GRAPH, KV_STEPS, "--drop-wait x"), 2);
	assert_int_equal(cli(KV_GRAPH, KV_STEPS, "--time-scale 0"), 2);
	assert_int_equal(cli(KV_GRAPH, KV_STEPS, "--backend tpu"), 2);
	/* This program links no CUDA backend (hoff_cmd_run gets NULL). */
	assert_int_equal(cli(KV_GRAPH, KV_STEPS, "--backend cuda"), 2);
}

/* A model graph scaled to this machine: the measured makespan is within
 * 10% of the prediction (timed without --verify, whose checks cost the
 * threads time, and with ops long enough for the emulator: times x 10,
 * a 0.55 s run), and --verify passes (at real time, 55 ms). */
static void test_model_graph(void **state)
{
	(void)state;
	hoff_model_opts mo = hoff_model_defaults();
	mo.model = "llama3-8b";
	mo.phase = "decode";
	mo.weights = "host";
	mo.layers = 2;
	hoff_graph *g = tu_model(&mo);
	hoff_err e = {{0}};
	static const char *const policies[] = {"reactive", "greedy"};
	for (int q = 0; q < 2; q++) {
		hoff_policy_report rep;
		hoff_sched *s = tu_plan(g, policies[q], HOFF_NONE, 0.01, &rep);
		hoff_graph *h = tu_model(&mo); /* scaled copies */
		assert_int_equal(hoff_exec_scale(h, 10, 0.01, &e), HOFF_OK);
		hoff_graph *v = tu_model(&mo);
		assert_int_equal(hoff_exec_scale(v, 1, 0.01, &e), HOFF_OK);
		hoff_exec_opts o = hoff_exec_defaults();
		ran x;
		bool judged = false;
		for (int attempt = 0; attempt < ATTEMPTS && !judged;
		     attempt++) {
			run_on(hoff_backend_cpu_new, h, s, &o, &x);
			check_events(&x);
			assert_int_equal(x.p.plan_peak_bytes,
					 x.pr.summary.peak_bytes);
			double err = 100.0 *
				     (double)labs64(x.m.measured.makespan_ps -
						    x.pr.summary.makespan_ps) /
				     (double)x.pr.summary.makespan_ps;
			if ((judged = clean(&x) && timed())) {
				print_message("  %s: makespan error %.2f%%\n",
					      policies[q], err);
				assert_true(err <= 10);
			}
			ran_free(&x);
		}
		if (!judged)
			not_judged(policies[q], ATTEMPTS);
		o.verify = true;
		run_on(hoff_backend_cpu_new, v, s, &o, &x);
		assert_true(x.m.checked);
		assert_int_equal(x.m.nfaults, 0);
		ran_free(&x);
		hoff_graph_free(v);
		hoff_graph_free(h);
		hoff_sched_free(s);
	}
	hoff_graph_free(g);
}

/* Runs s on g with --verify and wait number `drop` left out (HOFF_NONE:
 * none), the transfer at step `slow` slowed; the faults are in x. */
static void run_dropped(const hoff_graph *g, const hoff_sched *s, int64_t drop,
			int64_t slow, ran *x)
{
	hoff_exec_opts o = hoff_exec_defaults();
	o.verify = true;
	o.drop_wait = drop;
	o.slow_step = slow;
	run_on(hoff_backend_cpu_new, g, s, &o, x);
	assert_true(x->m.checked);
}

/* Device offset of tensor t's first block. */
static int64_t block_of(const hoff_xplan *p, int32_t t)
{
	for (int64_t i = 0; i < p->nblocks; i++)
		if (p->block[i].tensor == t)
			return p->block[i].off;
	fail_msg("no block of tensor %d", t);
	return -1;
}

/* Whether --verify catches wait `drop` left out: a clean run (the host
 * kept up: the racing commands overlap as the plan says) must report a
 * fault, and its first fault names `tensor` at one of the steps given
 * (-1 ends). A run the host fell behind in may miss it: it is retried
 * (at most ATTEMPTS); with no clean run and no fault, not judged. */
static void assert_caught(const hoff_graph *g, const hoff_sched *s,
			  int64_t drop, int64_t slow, const char *tensor,
			  const int64_t *steps)
{
	int32_t t = hoff_graph_find_tensor(g, tensor);
	if (RACES_REPORTED) {
		print_message("  not run under TSan: the run races "
			      "on purpose\n");
		return;
	}
	for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
		ran x;
		run_dropped(g, s, drop, slow, &x);
		int64_t n = x.m.nfaults;
		hoff_exec_fault f = x.m.fault[0];
		char line[HOFF_ERRLEN];
		if (n)
			hoff_exec_fault_format(&x.p, &f, line, sizeof line);
		bool kept_up = clean(&x);
		ran_free(&x);
		if (!n && kept_up)
			fail_msg("wait %lld dropped: --verify found nothing in "
				 "a run the host kept up with",
				 (long long)drop);
		if (!n)
			continue;
		print_message("  caught (run %d): %s\n", attempt + 1, line);
		bool at = false;
		for (int i = 0; steps[i] >= 0; i++)
			at |= f.step == steps[i];
		assert_true(at);
		assert_int_equal(f.tensor, t);
		return;
	}
	not_judged("the dropped wait", ATTEMPTS);
}

/* Transfer x's command id, by its step. */
static int64_t xfer_at(const hoff_xplan *p, int64_t step)
{
	for (int64_t x = 0; x < p->nxfers; x++)
		if (p->xfer[x].step == step)
			return p->nops + x;
	fail_msg("no transfer at step %lld", (long long)step);
	return -1;
}

/* The race checker finds a race with wait `drop` left out. */
static void assert_races(const hoff_xplan *p, int64_t drop)
{
	assert_int_equal(race_of(p, drop).kind, HOFF_RACE_PAIR);
}

/* KV_STEPS' graph with 10 kB tensors on a 10 MB/s link and ops of 3 ms:
 * the checks cost little beside the commands, even under the
 * sanitizers. */
#define KV_SMALL                                                               \
	"{\"format\": \"hoffopt.graph\", \"version\": 1, \"machine\": "        \
	"{\"device\": {\"memory_bytes\": 100000000}, \"tiers\": [{\"name\": "  \
	"\"host\", \"h2d_Bps\": 1e7, \"d2h_Bps\": 1e7}]}, \"tensors\": ["      \
	"{\"id\": \"x\", \"bytes\": 10000, \"kind\": \"input\"},"              \
	"{\"id\": \"kv\", \"bytes\": 5003, \"kind\": \"kv\"},"                 \
	"{\"id\": \"w\", \"bytes\": 9999, \"kind\": \"weight\", \"home\": "    \
	"\"host\"},"                                                           \
	"{\"id\": \"y\", \"bytes\": 10000, \"kind\": \"activation\"},"         \
	"{\"id\": \"z\", \"bytes\": 10000, \"kind\": \"activation\"},"         \
	"{\"id\": \"o\", \"bytes\": 10001, \"kind\": \"output\"}], \"ops\": [" \
	"{\"id\": \"op0\", \"inputs\": [\"x\"], \"updates\": [\"kv\"], "       \
	"\"outputs\": [\"y\"], \"time_s\": 0.003},"                            \
	"{\"id\": \"op1\", \"inputs\": [\"y\", \"w\"], \"outputs\": "          \
	"[\"z\"], \"time_s\": 0.003, \"workspace_bytes\": 5000},"              \
	"{\"id\": \"op2\", \"inputs\": [\"z\", \"kv\"], \"updates\": "         \
	"[\"kv\"], \"outputs\": [\"o\"], \"time_s\": 0.003}]}"

/* Regression (issue 24): an op without its wait on a KV prefetch reads
 * the block before the bytes arrive. KV schedule (KV_SMALL): op2 (step
 * 5) reads and updates kv, prefetched at step 4 from the host (slowed
 * 4x, to 2 ms);
 * without the wait op2 starts with the prefetch: its check of kv at its
 * start fails, or its junk for kv lands in the copy and the prefetch's
 * check of its destination fails. */
static void test_drop_op_prefetch(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(KV_SMALL);
	hoff_sched *s = tu_sched(g, KV_STEPS);
	ran x;
	run_dropped(g, s, HOFF_NONE, HOFF_NONE, &x);
	int64_t w = wait_index(&x.p, 2, xfer_at(&x.p, 4));
	assert_true(w >= 0);
	assert_int_equal(x.m.nfaults, 0);
	assert_races(&x.p, w);
	ran_free(&x);
	/* op2 sees kv half copied, or its junk for kv lands in the copy. */
	assert_caught(g, s, w, 4, "kv", (const int64_t[]){4, 5, -1});
	hoff_sched_free(s);
	hoff_graph_free(g);
}

/* x (2 MB) is read by op0 (2 ms) and dies; w (2 MB) is prefetched after
 * op0 into x's bytes, then read by op1. */
#define REUSE_GRAPH                                                            \
	GRAPH("{\"id\": \"x\", \"bytes\": 2000000, \"kind\": \"input\"},"      \
	      "{\"id\": \"w\", \"bytes\": 2000000, \"kind\": \"weight\", "     \
	      "\"home\": \"host\"},"                                           \
	      "{\"id\": \"y\", \"bytes\": 1000000, \"kind\": \"activation\"}," \
	      "{\"id\": \"o\", \"bytes\": 1000000, \"kind\": \"output\"}",     \
	      "{\"id\": \"op0\", \"inputs\": [\"x\"], \"outputs\": [\"y\"], "  \
	      "\"time_s\": 0.002},"                                            \
	      "{\"id\": \"op1\", \"inputs\": [\"y\", \"w\"], \"outputs\": "    \
	      "[\"o\"], \"time_s\": 0.001}")

/* Regression (issue 24): a prefetch without its issue wait (after_op)
 * overwrites bytes an op still reads: w's prefetch goes into x's bytes
 * while op0 reads x; op0's check of x (at its start or end) fails. */
static void test_drop_prefetch_after_op(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(REUSE_GRAPH);
	hoff_sched *s = tu_sched(g, SCHED("{\"op\": \"op0\"}, {\"prefetch\": "
					  "\"w\", \"from\": \"host\"}, "
					  "{\"op\": \"op1\"}"));
	ran x;
	run_dropped(g, s, HOFF_NONE, HOFF_NONE, &x);
	int64_t pf = xfer_at(&x.p, 1);
	assert_int_equal(x.p.xfer[pf - x.p.nops].dev_off,
			 block_of(&x.p, hoff_graph_find_tensor(g, "x")));
	int64_t w = wait_index(&x.p, pf, 0);
	assert_true(w >= 0);
	assert_int_equal(x.m.nfaults, 0);
	assert_races(&x.p, w);
	ran_free(&x);
	assert_caught(g, s, w, HOFF_NONE, "x", (const int64_t[]){0, -1});
	hoff_sched_free(s);
	hoff_graph_free(g);
}

/* op0 updates kv and makes y; kv is stored (1 ms); op1 (1.5 ms) makes z1;
 * op2 makes z2 in the bytes kv and y left. Tensors of 10 kB on a 10 MB/s
 * link: the checks cost little beside the ms-long commands, even under
 * the sanitizers. */
#define STORE_REUSE_GRAPH                                                       \
	"{\"format\": \"hoffopt.graph\", \"version\": 1, \"machine\": "         \
	"{\"device\": {\"memory_bytes\": 100000000}, \"tiers\": [{\"name\": "   \
	"\"host\", \"h2d_Bps\": 1e7, \"d2h_Bps\": 1e7}]}, \"tensors\": ["       \
	"{\"id\": \"x\", \"bytes\": 10000, \"kind\": \"input\"},"               \
	"{\"id\": \"kv\", \"bytes\": 10000, \"kind\": \"kv\"},"                 \
	"{\"id\": \"y\", \"bytes\": 10000, \"kind\": \"activation\"},"          \
	"{\"id\": \"z1\", \"bytes\": 10000, \"kind\": \"activation\"},"         \
	"{\"id\": \"z2\", \"bytes\": 10000, \"kind\": \"output\"}], \"ops\": [" \
	"{\"id\": \"op0\", \"inputs\": [\"x\"], \"updates\": [\"kv\"], "        \
	"\"outputs\": [\"y\"], \"time_s\": 0.001},"                             \
	"{\"id\": \"op1\", \"inputs\": [\"y\"], \"outputs\": [\"z1\"], "        \
	"\"time_s\": 0.0015},"                                                  \
	"{\"id\": \"op2\", \"inputs\": [\"z1\"], \"outputs\": [\"z2\"], "       \
	"\"time_s\": 0.001}]}"

/* Regression (issue 24): an op without its wait on a store writes into
 * bytes the store still reads. On the plan's own timing the store ends
 * 0.5 ms before op2 starts, so a faithful run hides it: the store is
 * slowed 4x (--slow-step; with every wait the run still verifies), and
 * without op2's wait op2's junk lands in the store's later chunks; the
 * store's check of its destination fails. */
static void test_drop_op_store(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(STORE_REUSE_GRAPH);
	hoff_sched *s =
		tu_sched(g, SCHED("{\"op\": \"op0\"}, {\"store\": "
				  "\"kv\", \"to\": \"host\"}, "
				  "{\"op\": \"op1\"}, {\"op\": \"op2\"}"));
	ran x;
	run_dropped(g, s, HOFF_NONE, 1, &x);
	int64_t st = xfer_at(&x.p, 1);
	int64_t w = wait_index(&x.p, 2, st);
	assert_true(w >= 0);
	assert_int_equal(x.m.nfaults, 0);
	assert_races(&x.p, w);
	ran_free(&x);
	assert_caught(g, s, w, 1, "kv", (const int64_t[]){1, -1});
	hoff_sched_free(s);
	hoff_graph_free(g);
}

/* Regression (issue 24): a store without its issue wait (after_op) reads
 * kv while op0 (4 ms here) updates it: the store's check of its source
 * fails. */
static void test_drop_store_after_op(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(KV_GRAPH_OF("0.004"));
	hoff_sched *s = tu_sched(g, KV_STEPS);
	ran x;
	run_dropped(g, s, HOFF_NONE, HOFF_NONE, &x);
	int64_t st = xfer_at(&x.p, 1);
	int64_t w = wait_index(&x.p, st, 0);
	assert_true(w >= 0);
	assert_races(&x.p, w);
	ran_free(&x);
	assert_caught(g, s, w, HOFF_NONE, "kv", (const int64_t[]){1, -1});
	hoff_sched_free(s);
	hoff_graph_free(g);
}

/* Regression (issue 22, item 10): on data/tiny.json, w0 is stored while
 * its host copy is valid and prefetched back at once. FORMAT.md's rule 4:
 * with a valid copy the prefetch does not wait for the store, so it runs
 * beside it: 12 ms, not the 16 ms of a prefetch held behind the store.
 * The plan has no such wait, the run matches the prediction, and it
 * verifies (the store rewrites the bytes the copy already holds). */
static void test_same_store_prefetch(void **state)
{
	(void)state;
	char path[1024];
	snprintf(path, sizeof path, "%s/data/tiny.json", tu_src_dir());
	hoff_graph *g = NULL;
	hoff_err e = {{0}};
	assert_int_equal(hoff_graph_read(path, &g, &e), HOFF_OK);
	hoff_sched *s = tu_sched(
		g, SCHED("{\"prefetch\": \"w0\", \"from\": \"host\"},"
			 "{\"prefetch\": \"w1\", \"from\": \"host\"},"
			 "{\"op\": \"op0\"}, {\"store\": \"w0\", \"to\": "
			 "\"host\"}, {\"prefetch\": \"w0\", \"from\": "
			 "\"host\"}, {\"op\": \"op1\"}"));
	hoff_exec_opts o = hoff_exec_defaults();
	ran x;
	bool judged = false;
	for (int attempt = 0; attempt < ATTEMPTS && !judged; attempt++) {
		run_on(hoff_backend_cpu_new, g, s, &o, &x);
		assert_int_equal(x.pr.summary.makespan_ps, 12 * MS);
		int64_t st = xfer_at(&x.p, 3), pf = xfer_at(&x.p, 4);
		assert_true(x.p.xfer[st - x.p.nops].same);
		assert_int_equal(wait_index(&x.p, pf, st), -1);
		/* the emulated clock's rule, loaded or not: the prefetch
		 * starts when its channel's previous transfer (w1's) and op0
		 * have ended, not the store (held behind it before the fix,
		 * it started at the store's end) */
		int64_t w1 = xfer_at(&x.p, 1) - x.p.nops;
		int64_t ready = x.m.x_end_ps[w1] > x.m.op_end_ps[0]
					? x.m.x_end_ps[w1]
					: x.m.op_end_ps[0];
		assert_int_equal(x.m.x_start_ps[pf - x.p.nops], ready);
		int64_t d = labs64(x.m.measured.makespan_ps - 12 * MS);
		if ((judged = clean(&x) && timed()))
			assert_true(d <= 12 * MS / 10); /* 16 ms before */
		ran_free(&x);
	}
	if (!judged)
		not_judged("the makespan", ATTEMPTS);
	o.verify = true;
	run_on(hoff_backend_cpu_new, g, s, &o, &x);
	assert_int_equal(x.m.nfaults, 0);
	ran_free(&x);
	hoff_sched_free(s);
	hoff_graph_free(g);
}

/* ---- (v2) recompute, drop, repeat and duplex: the v2run block, kept
 * apart from the tests above ---- */

/* The recompute schedule (exec_cases.h) runs under --verify: every check
 * passes, the measured timeline has the simulator's commands, the
 * recompute among them, and recompute time. */
static void test_v2_recompute_runs(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(RC_GRAPH);
	hoff_sched *s = tu_sched(g, RC_STEPS);
	ran x;
	run_verified(hoff_backend_cpu_new, g, s, &x);
	check_events(&x);
	assert_int_equal(x.pr.summary.recompute_ps, 2 * MS);
	assert_true(x.m.measured.recompute_ps >= 2 * MS);
	ran_free(&x);
	hoff_sched_free(s);
	hoff_graph_free(g);
}

/* A re-made tensor's bytes are checked: the recompute (step 6) with a
 * byte of a flipped once written is caught there, as a re-made "a" that
 * differs from op0's pattern, and again by op2 reading it. */
static void test_v2_recompute_corrupt(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(RC_GRAPH);
	hoff_sched *s = tu_sched(g, RC_STEPS);
	hoff_exec_opts o = hoff_exec_defaults();
	o.verify = true;
	o.corrupt_step = 6;
	ran x;
	run_on(hoff_backend_cpu_new, g, s, &o, &x);
	int32_t a = hoff_graph_find_tensor(g, "a");
	assert_int_equal(x.m.nfaults, 2);
	assert_int_equal(x.m.fault[0].step, 6);
	assert_int_equal(x.m.fault[0].at, HOFF_FAULT_REMADE);
	assert_int_equal(x.m.fault[0].tensor, a);
	assert_int_equal(x.m.fault[0].byte, 2 * MB);
	assert_int_equal(x.m.fault[1].step, 7);
	assert_int_equal(x.m.fault[1].at, HOFF_FAULT_OP_START);
	assert_int_equal(x.m.fault[1].tensor, a);
	char line[HOFF_ERRLEN];
	hoff_exec_fault_format(&x.p, &x.m.fault[0], line, sizeof line);
	assert_string_equal(line, "steps[6] recompute \"op0\": \"a\" re-made: "
				  "byte 2000000 differs from version 0 of its "
				  "pattern");
	ran_free(&x);
	hoff_sched_free(s);
	hoff_graph_free(g);
}

/* The recompute's wait for w's second prefetch dropped, that prefetch
 * slowed 4x (16 ms): the recompute reads w before it has arrived, and
 * --verify names w at the recompute's start. Which run shows it is
 * timing: at most ATTEMPTS runs. */
static void test_v2_recompute_drop_wait(void **state)
{
	(void)state;
	if (RACES_REPORTED) {
		print_message("  not run under TSan: the run races on "
			      "purpose\n");
		return;
	}
	hoff_graph *g = tu_graph(RC_GRAPH);
	hoff_sched *s = tu_sched(g, RC_STEPS);
	hoff_exec_opts o = hoff_exec_defaults();
	o.verify = true;
	o.slow_step = 5;
	int32_t w = hoff_graph_find_tensor(g, "w");
	bool caught = false;
	for (int attempt = 0; attempt < ATTEMPTS && !caught; attempt++) {
		ran x;
		hoff_sim_result pr = {0};
		hoff_xplan p;
		plan_on(g, s, 1, &pr, &p);
		o.drop_wait = wait_index(&p, 2, p.nops + 1);
		assert_true(o.drop_wait >= 0);
		hoff_xplan_free(&p);
		hoff_sim_result_free(&pr);
		run_on(hoff_backend_cpu_new, g, s, &o, &x);
		if (x.m.nfaults) {
			caught = true;
			assert_int_equal(x.m.fault[0].step, 6);
			assert_int_equal(x.m.fault[0].tensor, w);
			assert_int_equal(x.m.fault[0].at, HOFF_FAULT_OP_START);
		}
		ran_free(&x);
	}
	assert_true(caught);
	hoff_sched_free(s);
	hoff_graph_free(g);
}

/* One step of a loop: w stored back (a `same` store) after op2 is its
 * home at the end, checked there; the store's destination flipped, the
 * end check names w's home copy. */
static void test_v2_repeat_home(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(RC_REPEAT_GRAPH);
	hoff_sched *s = tu_sched(g, RC_REPEAT_HOME_STEPS);
	ran x;
	run_verified(hoff_backend_cpu_new, g, s, &x);
	ran_free(&x);
	hoff_exec_opts o = hoff_exec_defaults();
	o.verify = true;
	o.corrupt_step = 8;
	run_on(hoff_backend_cpu_new, g, s, &o, &x);
	int32_t w = hoff_graph_find_tensor(g, "w");
	bool home = false;
	for (int64_t i = 0; i < x.m.nfaults && i < HOFF_EXEC_MAXFAULTS; i++)
		if (x.m.fault[i].at == HOFF_FAULT_HOME) {
			home = true;
			assert_int_equal(x.m.fault[i].tensor, w);
			assert_int_equal(x.m.fault[i].tier, 0);
		}
	assert_true(home);
	ran_free(&x);
	hoff_sched_free(s);
	hoff_graph_free(g);
}

/* A tier whose channels slow each other (factors 0.5): a store and a
 * prefetch overlapping run through the duplex emulation and verify. How
 * long they take is bench/studies/exec_duplex.sh's (no timing here). */
static void test_v2_duplex_verifies(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(GRAPH_ON(
		"2", "",
		"{\"name\": \"host\", \"h2d_Bps\": 1e9, \"d2h_Bps\": 1e9, "
		"\"h2d_duplex_factor\": 0.5, \"d2h_duplex_factor\": 0.5}",
		"{\"id\": \"x\", \"bytes\": 1000000}, {\"id\": "
		"\"w\", \"bytes\": 4000000, \"kind\": \"weight\", \"home\": "
		"\"host\"}, {\"id\": \"y\", \"bytes\": 4000000}, {\"id\": "
		"\"z\", \"bytes\": 1000000}, {\"id\": \"o\", \"bytes\": "
		"1000000, \"kind\": \"output\"}",
		"{\"id\": \"op0\", "
		"\"inputs\": [\"x\"], \"outputs\": [\"y\"], \"time_s\": 0.001}, "
		"{\"id\": \"op1\", \"inputs\": [\"x\", \"w\"], \"outputs\": "
		"[\"z\"], \"time_s\": 0.01}, {\"id\": \"op2\", \"inputs\": "
		"[\"y\", \"z\"], \"outputs\": [\"o\"], \"time_s\": 0.001}"));
	hoff_sched *s = tu_sched(
		g,
		SCHED("{\"op\": \"op0\"}, {\"store\": \"y\", \"to\": "
		      "\"host\"}, {\"prefetch\": \"w\", \"from\": \"host\"}, "
		      "{\"op\": \"op1\"}, {\"prefetch\": \"y\", \"from\": "
		      "\"host\"}, {\"op\": \"op2\"}"));
	ran x;
	run_verified(hoff_backend_cpu_new, g, s, &x);
	check_events(&x);
	ran_free(&x);
	hoff_sched_free(s);
	hoff_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hidden_prefetch),
		cmocka_unit_test(test_stalling_prefetch),
		cmocka_unit_test(test_verify_passes),
		cmocka_unit_test(test_verify_catches),
		cmocka_unit_test(test_cli),
		cmocka_unit_test(test_model_graph),
		cmocka_unit_test(test_drop_op_prefetch),
		cmocka_unit_test(test_drop_prefetch_after_op),
		cmocka_unit_test(test_drop_op_store),
		cmocka_unit_test(test_drop_store_after_op),
		cmocka_unit_test(test_same_store_prefetch),
		/* (v2) the v2run block */
		cmocka_unit_test(test_v2_recompute_runs),
		cmocka_unit_test(test_v2_recompute_corrupt),
		cmocka_unit_test(test_v2_recompute_drop_wait),
		cmocka_unit_test(test_v2_repeat_home),
		cmocka_unit_test(test_v2_duplex_verifies),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
