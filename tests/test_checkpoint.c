/* test_checkpoint.c: policy checkpoint (heuristics/checkpoint.c) on a
 * training graph worked out by hand, on graphs it must plan as none, on
 * a layer rule 10 rules out, and on data/'s training graphs (v1 and
 * repeat forms); and analyze's recomputable bytes at the no-offload peak.
 * Every plan is judged by the simulator. */
#define _DEFAULT_SOURCE /* mkdtemp */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "cli.h"
#include "testutil_layers.h"
#include "testutil_policy.h"

#define MS 1000000000LL
#define MB 1000000LL

/* Two layers of train, flat and norecompute; l0 and l1 are the layer
 * fields of layers 0 and 1, extra more of f1a's. */
/* clang-format off */
#define GRAPH(version, extra, l0, l1)                                      \
	LAYERED(version, "t", HOST_TIER)                                   \
	T("x", "1", "input") "," T("w0", "1", "weight") ","                \
	T("w1", "1", "weight") "," T("a0", "2", "activation") ","          \
	T("h0", "1", "activation") "," T("a1", "2", "activation") ","      \
	T("h1", "1", "activation") "," T("l", "1", "activation") ","       \
	T("g1", "1", "gradient") "," T("g0", "1", "output") "], \"ops\": [" \
	OPL("f0a", "\"x\", \"w0\"", "\"a0\"", "0.001", l0) ","              \
	OPL("f0b", "\"a0\"", "\"h0\"", "0.001", l0) ","                      \
	OPL("f1a", "\"h0\", \"w1\"", "\"a1\"", "0.002", l1 extra) ","       \
	OPL("f1b", "\"a1\"", "\"h1\"", "0.001", l1) ","                      \
	OPL("head", "\"h1\"", "\"l\"", "0.001", "") ","                      \
	OPL("b1", "\"l\", \"a1\", \"h0\"", "\"g1\"", "0.002", l1) ","        \
	OPL("b0", "\"g1\", \"a0\", \"x\"", "\"g0\"", "0.002", l0) "]}"
/* clang-format on */

/* Two layers, forward (f0a f0b | f1a f1b), a loss op without a layer
 * (head), backward (b1 | b0); all device-resident. Layer 1: F = f1a f1b,
 * B = b1; its stash a1 is dropped after f1b and re-made by f1a before
 * b1; its input h0 is kept, its output h1 is read by head (kept). Layer
 * 0: F = f0a f0b, B = b0; a0 dropped after f0b, f0a re-run before b0;
 * h0 is read by layer 1, so kept. Memory (MB): x w0 w1 = 3 from the
 * start; f0a +a0 5, f0b +h0 6, drop a0 4, f1a +a1 6, f1b +h1 7, drop a1
 * 5, head +l 6 then h1 freed 5, recompute f1a +a1 7, b1 +g1 8 (the
 * peak), then l a1 h0 freed 4; recompute f0a +a0 6, b0 +g0 7. Times:
 * ops 1+1+2+1+1+2+2 = 10 ms, recomputes f1a 2 + f0a 1 = 3 ms, no stall:
 * 13 ms. Policy none: 10 MB from head's start (3 + a0 2 + h0 1 + a1 2 +
 * h1 1 + l 1) and at b1 (h1 freed, g1 made), 10 ms. */
static const char *train = GRAPH("1", "", L0, L1);
/* The same without layers. */
static const char *flat = GRAPH("1", "", "", "");
/* Layer 1's f1a may not be re-run (v2): layer 1 is skipped (rule 10). */
static const char *norecompute =
	GRAPH("2", ", \"recomputable\": false", L0, L1);

/* Plans g with policy at the defaults (no budget, 1% overhead). */
static hoff_sched *plan(const hoff_graph *g, const char *policy,
			hoff_policy_report *rep)
{
	return tu_plan(g, policy, HOFF_NONE, 0.01, rep);
}

/* The sum of the recompute steps' op times: what recompute_ps must be. */
static int64_t rerun_ps(const hoff_graph *g, const hoff_sched *s)
{
	int64_t sum = 0;
	for (int64_t i = 0; i < s->nsteps; i++)
		if (s->step[i].kind == HOFF_STEP_RECOMPUTE)
			sum += g->op[s->step[i].id].time_ps;
	return sum;
}

/* What a plan must be: its steps (NULL: not checked), a piece of its
 * report's note (NULL: not checked), and its simulated peak (MB) and
 * makespan, compute, recompute and stall times (ms). */
typedef struct {
	const char *steps, *note;
	int64_t peak_mb, makespan_ms, compute_ms, recompute_ms, stall_ms;
} expected;

/* Plans g with policy and asserts the plan is w: valid, each figure as
 * given, recompute_ps the re-run ops' time, the report's peak and
 * makespan the simulated ones. */
static void expect_plan(const hoff_graph *g, const char *policy,
			const expected *w)
{
	hoff_policy_report rep;
	hoff_sched *s = plan(g, policy, &rep);
	if (w->steps)
		tu_expect_steps(g, s, w->steps);
	hoff_sim_result r =
		tu_sim_expect(g, s, w->peak_mb * MB, w->makespan_ms * MS);
	assert_int_equal(r.summary.compute_ps, w->compute_ms * MS);
	assert_int_equal(r.summary.recompute_ps, w->recompute_ms * MS);
	assert_int_equal(r.summary.recompute_ps, rerun_ps(g, s));
	assert_int_equal(r.summary.stall_ps, w->stall_ms * MS);
	assert_int_equal(rep.peak_bytes, r.summary.peak_bytes);
	assert_int_equal(rep.makespan_ps, r.summary.makespan_ps);
	if (w->note)
		assert_non_null(strstr(rep.note, w->note));
	hoff_sim_result_free(&r);
	hoff_sched_free(s);
}

static void test_by_hand(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(train);
	expect_plan(
		g, "checkpoint",
		&(expected){"op f0a|op f0b|drop a0|op f1a|op f1b|drop a1|"
			    "op head|recompute f1a|op b1|recompute f0a|op b0",
			    "2 of 2 layers checkpointed, 2 recomputes, 2 drops",
			    8, 13, 10, 3, 0});
	expect_plan(g, "none", &(expected){NULL, NULL, 10, 10, 10, 0, 0});
	hoff_graph_free(g);
}

/* Without layers, or without a backward run, checkpoint is none. */
static void test_no_layers_is_none(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(flat);
	hoff_policy_report rep, nrep;
	hoff_sched *s = plan(g, "checkpoint", &rep);
	hoff_sched *n = plan(g, "none", &nrep);
	assert_true(hoff_sched_same_steps(s, n));
	assert_int_equal(rep.peak_bytes, nrep.peak_bytes);
	assert_int_equal(rep.peak_bytes, 10 * MB);
	assert_non_null(strstr(rep.note, "no layer has a forward and a "
					 "backward run: planned as none"));
	hoff_sched_free(s);
	hoff_sched_free(n);
	hoff_graph_free(g);
	/* forward only: each layer one run */
	g = tu_graph(tu_example_graph);
	s = plan(g, "checkpoint", &rep);
	n = plan(g, "none", &nrep);
	assert_true(hoff_sched_same_steps(s, n));
	assert_non_null(strstr(rep.note, "planned as none"));
	hoff_sched_free(s);
	hoff_sched_free(n);
	hoff_graph_free(g);
}

/* A layer whose forward may not be re-run is kept whole, and said so;
 * layer 0 is still checkpointed: peak at b1 is x w0 w1 h0 a1 l g1 = 8,
 * as before (a0 is dropped; a1 was never dropped), 10 ms + f0a's 1 ms. */
static void test_rule10_skips_layer(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(norecompute);
	expect_plan(
		g, "checkpoint",
		&(expected){"op f0a|op f0b|drop a0|op f1a|op f1b|op head|"
			    "op b1|recompute f0a|op b0",
			    "layer 1 skipped (op \"f1a\" is not recomputable)",
			    8, 11, 10, 1, 0});
	hoff_graph_free(g);
}

/* The closure: layer 0's stash s is made by f0b from t, a forward
 * temporary (read by f0b only, freed after it without checkpointing).
 * Re-making s needs t again, so f0a is re-run too, and t is dropped
 * after f0b: the recompute of f0b reads it, and rule 6 would keep it
 * resident until then. h, read by head (no layer), is kept. Memory (MB):
 * x 1, +t 3, +s 4, drop t 2, +h 3, drop s 2, +l 3, h freed 2, recompute
 * f0a +t 4, recompute f0b +s 5 (the peak), t freed 3, +g 4. 5 ops of 1
 * ms and 2 recomputes of 1 ms: 7 ms. */
/* clang-format off */
static const char *chain =
	LAYERED("1", "t", "")
	T("x", "1", "input") "," T("t", "2", "activation") ","
	T("s", "1", "activation") "," T("h", "1", "activation") ","
	T("l", "1", "activation") "," T("g", "1", "output") "], \"ops\": ["
	OPL("f0a", "\"x\"", "\"t\"", "0.001", L0) ","
	OPL("f0b", "\"t\"", "\"s\"", "0.001", L0) ","
	OPL("f0c", "\"s\"", "\"h\"", "0.001", L0) ","
	OPL("head", "\"h\"", "\"l\"", "0.001", "") ","
	OPL("b0", "\"l\", \"s\", \"x\"", "\"g\"", "0.001", L0) "]}";
/* clang-format on */
static void test_closure(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(chain);
	expect_plan(g, "checkpoint",
		    &(expected){"op f0a|op f0b|drop t|op f0c|drop s|op head|"
				"recompute f0a|recompute f0b|op b0",
				NULL, 5, 7, 5, 2, 0});
	hoff_graph_free(g);
}

/* checkpoint+reactive: w1 homed on the host (1 ms each way), fetched
 * right before each read and detached right after (its copy is clean),
 * the recompute's read included. Times: f0a 0-1, f0b 1-2, w1 2-3, f1a
 * 3-5, f1b 5-6, head 6-7, w1 7-8, recompute f1a 8-10, b1 10-12,
 * recompute f0a 12-13, b0 13-15: 15 ms, 2 ms of stall. Memory (MB): x w0
 * 2, +a0 4, +h0 5, drop a0 3, +w1 4, +a1 6, detach w1 5, +h1 6, drop a1
 * 4, +l 5, h1 freed 4, +w1 5, recompute +a1 7 (the peak), detach w1 6,
 * +g1 7, ... Policy checkpoint keeps w1 from its first fetch: 8 MB
 * (at b1, as on the device-homed graph), 14 ms. */
static void test_reactive(void **state)
{
	(void)state;
	const char *w1 = "\"id\": \"w1\", \"bytes\": 1000000, "
			 "\"kind\": \"weight\"";
	const char *at = strstr(train, w1);
	assert_non_null(at);
	char json[8192];
	snprintf(json, sizeof json, "%.*s, \"home\": \"host\"%s",
		 (int)(at - train + (ptrdiff_t)strlen(w1)), train,
		 at + strlen(w1));
	hoff_graph *g = tu_graph(json);
	expect_plan(
		g, "checkpoint+reactive",
		&(expected){"op f0a|op f0b|drop a0|prefetch w1 host|op f1a|"
			    "detach w1|op f1b|drop a1|op head|prefetch w1 host|"
			    "recompute f1a|detach w1|op b1|recompute f0a|op b0",
			    "checkpoint+reactive: 2 of 2", 7, 15, 10, 3, 2});
	expect_plan(g, "checkpoint", &(expected){NULL, NULL, 8, 14, 10, 3, 1});
	hoff_graph_free(g);
}

/* data/'s training graphs, in their version-1 form (fixture data_v1)
 * and as data/ holds them (FORMAT v2: repeat, duplex 0.92): valid (on
 * the repeat graphs the state ends home, rule 9), recompute_s the re-run
 * ops' time, peak at most none's, and below it where the activations set
 * the peak (in-backward's repeat form, whose Adam state goes home layer
 * by layer; elsewhere the optimizer step sets it). The peaks are this
 * plan's (regression figures; none's from the same run; each plan
 * `hoffopt simulate` calls valid). */
static void test_data_graphs(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		bool v1;
		int64_t peak, none_peak;
	} rows[] = {
		{"llama3-8b-train-2l.json", true, 15919693828, 15919693828},
		{"llama3-8b-train-2l.json", false, 15919693828, 15919693828},
		{"llama3-8b-l2-train-in-backward.json", true, 15919685636,
		 15919685636},
		{"llama3-8b-l2-train-in-backward.json", false, 11381350404,
		 11549155332},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		hoff_graph *g = rows[i].v1
					? tu_data_v1_graph_or_skip(rows[i].name)
					: tu_data_graph_or_skip(rows[i].name);
		assert_int_equal(g->repeat, !rows[i].v1);
		hoff_policy_report rep, nrep;
		hoff_sched *s = plan(g, "checkpoint", &rep);
		hoff_sched *n = plan(g, "none", &nrep);
		hoff_sim_result r = tu_sim(g, s, HOFF_NONE);
		print_message("%s%s: checkpoint %lld B %lld ps, none %lld B "
			      "%lld ps; %s\n",
			      rows[i].name, rows[i].v1 ? " (v1)" : "",
			      (long long)r.summary.peak_bytes,
			      (long long)r.summary.makespan_ps,
			      (long long)nrep.peak_bytes,
			      (long long)nrep.makespan_ps, rep.note);
		assert_true(r.valid);
		assert_true(r.summary.recompute_ps > 0);
		assert_int_equal(r.summary.recompute_ps, rerun_ps(g, s));
		assert_int_equal(r.summary.peak_bytes, rows[i].peak);
		assert_int_equal(nrep.peak_bytes, rows[i].none_peak);
		assert_true(r.summary.peak_bytes <= nrep.peak_bytes);
		if (rows[i].peak < rows[i].none_peak)
			assert_true(r.summary.peak_bytes < nrep.peak_bytes);
		/* checkpoint+reactive: valid, never above checkpoint here */
		hoff_policy_report crep;
		hoff_sched *c = plan(g, "checkpoint+reactive", &crep);
		hoff_sim_result cr = tu_sim(g, c, HOFF_NONE);
		assert_true(cr.valid);
		assert_true(cr.summary.peak_bytes <= r.summary.peak_bytes);
		hoff_sim_result_free(&cr);
		hoff_sched_free(c);
		hoff_sim_result_free(&r);
		hoff_sched_free(s);
		hoff_sched_free(n);
		hoff_graph_free(g);
	}
}

/* analyze's figure: at the no-offload peak, first reached at head's
 * start, 5 ms (x w0 w1 a0 h0 a1 h1 l = 10 MB), the activations a0 h0 a1
 * h1 l (7 MB) have recomputable producers (head's too: an op without a
 * layer may still be re-run); with f1a not recomputable, a1 (2 MB) is
 * out: 5 MB. */
static void test_recomputable_bytes(void **state)
{
	(void)state;
	const char *graphs[] = {train, norecompute};
	const int64_t want[] = {7 * MB, 5 * MB};
	for (int i = 0; i < 2; i++) {
		hoff_graph *g = tu_graph(graphs[i]);
		hoff_sim_result r = {0};
		hoff_err e = {{0}};
		assert_int_equal(hoff_cli_noffload(g, true, &r, &e), HOFF_OK);
		assert_int_equal(r.summary.peak_bytes, 10 * MB);
		assert_int_equal(r.peak_ps, 5 * MS);
		assert_int_equal(r.nsnap, 8);
		assert_int_equal(hoff_recomputable_bytes(g, r.snap, r.nsnap),
				 want[i]);
		hoff_sim_result_free(&r);
		hoff_graph_free(g);
	}
}

/* Writes text to path; fails the test on error. */
static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

/* Whether file path holds needle. */
static bool holds(const char *path, const char *needle)
{
	char *t = tu_slurp(path, NULL);
	bool yes = t && strstr(t, needle);
	free(t);
	return yes;
}

/* The commands: analyze's line and --json field (7 MB, as above),
 * plan's note for checkpoint on a graph without layers, and its report's
 * recompute line (3 ms, no stall) and peak (8 MB against none's 10). */
static void test_cli(void **state)
{
	(void)state;
	const char *bin = getenv("HOFF_BIN_DIR");
	char dir[] = "/tmp/hoff-ckpt-XXXXXX", cmd[2048];
	if (!bin)
		skip();
	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof cmd, "%s/train.json", dir);
	put(cmd, train);
	snprintf(cmd, sizeof cmd, "%s/flat.json", dir);
	put(cmd, flat);
	snprintf(
		cmd, sizeof cmd,
		"cd %s && %s/hoffopt analyze train.json > a.txt && "
		"%s/hoffopt analyze train.json --json > a.json && "
		"%s/hoffopt --policy checkpoint flat.json 2> p.err > /dev/null "
		"&& %s/hoffopt --policy checkpoint train.json > c.txt",
		dir, bin, bin, bin, bin);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "%s/a.txt", dir);
	assert_true(holds(cmd, "\nrecomputable  7000000 B (6.68 MiB) of that "
			       "peak: activations whose producer may be "
			       "re-run\n"));
	snprintf(cmd, sizeof cmd, "%s/a.json", dir);
	assert_true(holds(cmd, "\"recomputable_bytes_at_peak\": 7000000}"));
	snprintf(cmd, sizeof cmd, "%s/p.err", dir);
	assert_true(holds(cmd, "hoffopt: note: checkpoint: no layer has a "
			       "forward and a backward run: planned as "
			       "none\n"));
	snprintf(cmd, sizeof cmd, "%s/c.txt", dir);
	assert_true(holds(cmd, "\nrecompute     0.003 s (ops re-run), stall "
			       "0 s\n"));
	assert_true(holds(cmd, "peak          8000000 B (7.63 MiB), 20.00% "
			       "under none's 10000000 B"));
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_by_hand),
		cmocka_unit_test(test_no_layers_is_none),
		cmocka_unit_test(test_rule10_skips_layer),
		cmocka_unit_test(test_closure),
		cmocka_unit_test(test_reactive),
		cmocka_unit_test(test_data_graphs),
		cmocka_unit_test(test_recomputable_bytes),
		cmocka_unit_test(test_cli),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
