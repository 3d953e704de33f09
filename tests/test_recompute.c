/* test_recompute.c: planning with recomputation (heuristics/recompute.c,
 * recompute_plan.c, greedy_recompute.c) on graphs worked out by hand: a
 * graph where re-running an op beats moving its output at the bound, a
 * chain (two-level: a layer input re-made from the layer below), and a
 * re-run rule 10 forbids. Every schedule is judged by the simulator. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models.h"
#include "policy.h"
#include "recompute_plan.h"
#include "testutil_layers.h"
#include "testutil_policy.h"

#define MS 1000000000LL
#define MB 1000000LL

/* clang-format off */
/* One layer (f0 f1 | b0) and a head op with a 10 MB workspace; wb, 5 MB
 * homed on the host (1 MB/ms each way), is read by b0 only. Lower bound:
 * wb's 5 ms then b0's 1 ms = 6 ms (compute is 4 ms). Without
 * recomputation nothing can move within 1% of it: wb must be issued at
 * time 0 (b0 starts by 5.06 ms), a's trip out and back takes 20 ms, x's
 * way back waits for wb. So head runs with x 1, wb 5, a 10, h 1, l 1 and
 * its workspace 10: 28 MB. With a dropped after f1 and f0 re-run before
 * b0 (in the 2 ms the stream waits for wb anyway): head 18 MB (x wb h l
 * + 10), recompute f0 17 (x wb l a), b0 18 (x wb a l g), at 6 ms. 18 MB
 * is b0's own floor: nothing does better. */
static const char *beats =
	LAYERED("2", "b", HOST_TIER)
	T("x", "1", "input") "," T("a", "10", "activation") ","
	T("h", "1", "activation") "," T("l", "1", "activation") ","
	"{\"id\": \"wb\", \"bytes\": 5000000, \"kind\": \"weight\", "
	"\"home\": \"host\"}," T("g", "1", "output") "], \"ops\": ["
	OPL("f0", "\"x\"", "\"a\"", "0.001", L0) ","
	OPL("f1", "\"a\"", "\"h\"", "0.001", L0) ","
	OPL("head", "\"h\"", "\"l\"", "0.001",
	    ", \"workspace_bytes\": 10000000") ","
	OPL("b0", "\"l\", \"a\", \"x\", \"wb\"", "\"g\"", "0.001", L0) "]}";

/* Two layers, no tiers: F0 = f0a f0b, F1 = f1a f1b, head, B1 = b1,
 * B0 = b0. With segments of 2 layers, layer 1's input h0 is dropped too
 * and re-made at the segment's top (before b1) from x by re-running f0a
 * then f0b (a chain: f0b's input a0 is gone as well); a1 is re-made from
 * h0 for b1, a0 again for b0. */
static const char *chain =
	LAYERED("2", "c", "")
	T("x", "1", "input") "," T("a0", "2", "activation") ","
	T("h0", "1", "activation") "," T("a1", "2", "activation") ","
	T("h1", "1", "activation") "," T("l", "1", "activation") ","
	T("g1", "1", "gradient") "," T("g0", "1", "output") "], \"ops\": ["
	OPL("f0a", "\"x\"", "\"a0\"", "0.001", L0) ","
	OPL("f0b", "\"a0\"", "\"h0\"", "0.001", L0) ","
	OPL("f1a", "\"h0\"", "\"a1\"", "0.001", L1) ","
	OPL("f1b", "\"a1\"", "\"h1\"", "0.001", L1) ","
	OPL("head", "\"h1\"", "\"l\"", "0.001", "") ","
	OPL("b1", "\"l\", \"a1\", \"h0\"", "\"g1\"", "0.001", L1) ","
	OPL("b0", "\"g1\", \"a0\", \"x\"", "\"g0\"", "0.001", L0) "]}";

/* Rule 10: f0 reads w, which opt updates before b0 reads f0's output a;
 * re-running f0 there would give other bytes, so a is never dropped. */
static const char *updated =
	LAYERED("2", "u", HOST_TIER)
	T("x", "1", "input") "," T("w", "1", "weight") ","
	T("a", "10", "activation") "," T("l", "1", "activation") ","
	T("g", "1", "output") "], \"ops\": ["
	OPL("f0", "\"x\", \"w\"", "\"a\"", "0.001", L0) ","
	OPL("head", "\"a\"", "\"l\"", "0.001",
	    ", \"workspace_bytes\": 10000000") ","
	"{\"id\": \"opt\", \"inputs\": [\"l\"], \"updates\": [\"w\"], "
	"\"time_s\": 0.001},"
	OPL("b0", "\"l\", \"a\", \"x\"", "\"g\"", "0.001", L0) "]}";
/* clang-format on */

static hoff_sched *plan(const hoff_graph *g, const char *policy, bool recompute,
			hoff_policy_report *rep)
{
	hoff_policy_opts o = hoff_policy_defaults();
	assert_true(hoff_policy_parse(policy, &o));
	o.recompute = recompute;
	return tu_run(g, &o, rep);
}

/* The graph text json parsed (caller frees), its layers into *L (caller
 * frees), which must pair npair forward and backward runs. */
static hoff_graph *layered(const char *json, hoff_rc_layers *L, int32_t npair)
{
	hoff_graph *g = tu_graph(json);
	assert_int_equal(hoff_rc_layers_init(L, g), HOFF_OK);
	assert_int_equal(L->npair, npair);
	return g;
}

static int64_t count_kind(const hoff_sched *s, hoff_step_kind k)
{
	int64_t n = 0;
	for (int64_t i = 0; i < s->nsteps; i++)
		n += s->step[i].kind == k;
	return n;
}

/* Recompute beats offload at the bound: greedy 28 MB without it, 18 MB
 * (b0's floor) with it, both at 6 ms, the lower bound. */
static void test_beats_offload(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(beats);
	hoff_policy_report rep;
	hoff_sched *s = plan(g, "greedy", false, &rep);
	hoff_sim_result r = tu_sim_expect(g, s, 28 * MB, 6 * MS);
	assert_int_equal(count_kind(s, HOFF_STEP_RECOMPUTE), 0);
	hoff_sim_result_free(&r);
	hoff_sched_free(s);

	s = plan(g, "greedy", true, &rep);
	tu_expect_steps(g, s,
			"prefetch wb host|op f0|op f1|drop a|op head|"
			"recompute f0|op b0");
	r = tu_sim_expect(g, s, 18 * MB, 6 * MS);
	assert_int_equal(r.summary.recompute_ps, 1 * MS);
	assert_int_equal(r.summary.stall_ps, 1 * MS);
	assert_int_equal(rep.peak_bytes, 18 * MB);
	assert_int_equal(rep.makespan_ps, 6 * MS);
	assert_int_equal(rep.lower_bound_ps, 6 * MS);
	assert_true(rep.feasible);
	assert_non_null(strstr(rep.note, "recompute: "));
	hoff_sim_result_free(&r);
	hoff_sched_free(s);
	/* Policy none fetches wb right before its first reader: after head
	 * without recomputation (b0 at 8 ms, 9 ms in all; 23 MB at head: x a
	 * h l + 10), after the re-run of f0 with it (wb 4-9 ms, b0 9-10 ms:
	 * 18 MB but 10 ms). A baseline's --recompute keeps the least peak no
	 * slower than without: none's own plan. */
	hoff_sched *n0 = plan(g, "none", false, &rep);
	assert_int_equal(rep.peak_bytes, 23 * MB);
	assert_int_equal(rep.makespan_ps, 9 * MS);
	s = plan(g, "none", true, &rep);
	assert_true(hoff_sched_same_steps(s, n0));
	assert_int_equal(rep.peak_bytes, 23 * MB);
	assert_int_equal(rep.makespan_ps, 9 * MS);
	hoff_sched_free(s);
	hoff_sched_free(n0);
	hoff_graph_free(g);
}

/* The plan of segments of 2 on the chain graph, event by event, its
 * expanded graph planned by none and mapped back, step by step. Memory
 * (MB): x 1; f0a +a0 3, f0b +h0 4, drop a0 2, f1a +a1 4, drop h0 2, f1b
 * +h1 3, drop a1 2, head +l 3 (h1 freed) 2, recompute f0a +a0 4,
 * recompute f0b +h0 5, drop a0 3, recompute f1a +a1 5, b1 +g1 6 (the
 * peak; l a1 h0 freed) 2, recompute f0a +a0 4, b0 +g0 5. 7 ops and 4
 * re-runs of 1 ms: 11 ms. */
static void test_chain(void **state)
{
	(void)state;
	hoff_rc_layers L;
	hoff_graph *g = layered(chain, &L, 2);
	hoff_rc_plan P = {0};
	assert_int_equal(hoff_rc_layers_plan(&L, 2, &P), HOFF_OK);
	static const char *const want[][2] = {
		{"f0a", "b1"}, {"f0b", "b1"}, {"f1a", "b1"}, {"f0a", "b0"}};
	assert_int_equal(P.nev, 4);
	for (int i = 0; i < 4; i++) {
		assert_string_equal(g->op[P.ev[i].op].id, want[i][0]);
		assert_string_equal(g->op[P.ev[i].before].id, want[i][1]);
		assert_int_equal(P.ev[i].nout, 1);
	}
	hoff_rc_graph x;
	hoff_err e = {{0}};
	assert_int_equal(hoff_rc_build(g, &P, &x, &e), HOFF_OK);
	assert_int_equal(x.g2->nops, 11);
	assert_int_equal(x.nrec, 4);
	/* g2's ops in order, clones marked; each op and version carries the
	 * very id string of its op or tensor of g (borrowed, recompute.h) */
	static const char *const ops2[] = {"f0a",  "f0b", "f1a", "f1b",
					   "head", "f0a", "f0b", "f1a",
					   "b1",   "f0a", "b0"};
	for (int32_t k = 0; k < 11; k++) {
		assert_string_equal(g->op[x.op_of[k]].id, ops2[k]);
		assert_int_equal(x.is_rc[k], (k >= 5 && k <= 7) || k == 9);
		assert_ptr_equal(x.g2->op[k].id, g->op[x.op_of[k]].id);
	}
	assert_int_equal(x.g2->ntensors, g->ntensors + 4);
	for (int32_t v = 0; v < x.g2->ntensors; v++)
		assert_ptr_equal(x.g2->tensor[v].id, g->tensor[x.t_of[v]].id);
	hoff_policy_report rep;
	hoff_sched *s2 = plan(x.g2, "none", false, &rep);
	hoff_sched *s = hoff_rc_map(&x, s2);
	assert_non_null(s);
	tu_expect_steps(g, s,
			"op f0a|op f0b|drop a0|op f1a|drop h0|op f1b|drop a1|"
			"op head|recompute f0a|recompute f0b|drop a0|"
			"recompute f1a|op b1|recompute f0a|op b0");
	hoff_sim_result r = tu_sim_expect(g, s, 6 * MB, 11 * MS);
	assert_int_equal(r.summary.recompute_ps, 4 * MS);
	/* the expanded graph's run is the same, byte for byte */
	hoff_sim_result r2 = tu_sim(x.g2, s2, HOFF_NONE);
	assert_true(r2.valid);
	assert_int_equal(r2.summary.peak_bytes, r.summary.peak_bytes);
	assert_int_equal(r2.summary.makespan_ps, r.summary.makespan_ps);
	hoff_sim_result_free(&r);
	hoff_sim_result_free(&r2);
	hoff_sched_free(s);
	hoff_sched_free(s2);
	hoff_rc_graph_free(&x);
	hoff_rc_plan_free(&P);
	/* one level (segments of 1): h0 is kept, only a1 and a0 re-made */
	assert_int_equal(hoff_rc_layers_plan(&L, 1, &P), HOFF_OK);
	assert_int_equal(P.nev, 2);
	assert_string_equal(g->op[P.ev[0].op].id, "f1a");
	assert_string_equal(g->op[P.ev[1].op].id, "f0a");
	hoff_rc_plan_free(&P);
	hoff_rc_layers_free(&L);
	hoff_graph_free(g);
}

/* Rule 10: no plan re-runs f0 (w is updated by opt in between), so
 * --recompute plans exactly as without it: a stays, 23 MB at head (x w
 * a l and the workspace), no drop, no recompute. */
static void test_rule10(void **state)
{
	(void)state;
	hoff_rc_layers L;
	hoff_graph *g = layered(updated, &L, 1);
	assert_true(L.dropok[hoff_graph_find_tensor(g, "a")]);
	hoff_rc_plan P = {0};
	for (int32_t seg = 1; seg <= 2; seg++) {
		assert_int_equal(hoff_rc_layers_plan(&L, seg, &P), HOFF_OK);
		assert_int_equal(P.nev, 0);
	}
	hoff_rc_plan_free(&P);
	hoff_rc_layers_free(&L);
	hoff_policy_report rep, rep0;
	hoff_sched *s0 = plan(g, "greedy", false, &rep0);
	hoff_sched *s = plan(g, "greedy", true, &rep);
	assert_int_equal(count_kind(s, HOFF_STEP_RECOMPUTE), 0);
	assert_int_equal(count_kind(s, HOFF_STEP_DROP), 0);
	assert_true(hoff_sched_same_steps(s, s0));
	hoff_sim_result r = tu_sim(g, s, HOFF_NONE);
	assert_true(r.valid);
	assert_int_equal(r.summary.peak_bytes, 23 * MB);
	assert_int_equal(rep.peak_bytes, rep0.peak_bytes);
	hoff_sim_result_free(&r);
	hoff_sched_free(s);
	hoff_sched_free(s0);
	hoff_graph_free(g);
}

/* The candidates a run judged, from its progress lines. */
typedef struct said {
	char text[4096];
} said;

static void note_line(void *ctx, const char *line)
{
	said *k = ctx;
	size_t n = strlen(k->text);
	snprintf(k->text + n, sizeof k->text - n, "%s\n", line);
}

/* A baseline's --recompute plans every segment plan, segments of 1 first
 * (after its own plan, whose makespan is then its bound: none's 9 ms on
 * the graph of test_beats_offload leaves room for f0's re-run): policy
 * none judges none+recompute:1, then :2 (the same plan: one layer). */
static void test_baseline_segments(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(beats);
	said k = {{0}};
	hoff_policy_opts o = hoff_policy_defaults();
	assert_true(hoff_policy_parse("none", &o));
	o.recompute = true;
	o.progress = (hoff_progress){.fn = note_line, .ctx = &k};
	hoff_policy_report rep;
	hoff_sched *s = tu_run(g, &o, &rep);
	assert_non_null(strstr(k.text, "recompute: none+recompute:1: "));
	assert_non_null(strstr(k.text, "recompute: none+recompute:2: "));
	hoff_sched_free(s);
	hoff_graph_free(g);
}

/* Where nothing meets the bound, greedy returns its fastest plan;
 * --recompute returns the fastest that peaks no higher than that one, so
 * it is worse on neither. On llama3-8b's first 4 layers training at 2048
 * tokens on gh200 (greedy 20718157828 B at 0.09795 s, over the 1% bound)
 * a plan with recomputation is faster at a higher peak (23077502980 B at
 * 0.09575 s, segments of 6): not kept. */
static void test_missed_bound(void **state)
{
	(void)state;
	hoff_model_opts mo = hoff_model_defaults();
	mo.phase = "train";
	mo.seq = 2048;
	mo.layers = 4;
	mo.machine = "gh200";
	mo.version = 2;
	hoff_graph *g = tu_model(&mo);
	hoff_policy_report r0, r1;
	hoff_sched *s0 = plan(g, "greedy", false, &r0);
	assert_false(r0.feasible);
	hoff_sched *s1 = plan(g, "greedy", true, &r1);
	assert_false(r1.feasible);
	hoff_sim_result r = tu_sim(g, s1, HOFF_NONE);
	assert_true(r.valid);
	assert_int_equal(r.summary.peak_bytes, r1.peak_bytes);
	assert_true(r1.peak_bytes <= r0.peak_bytes);
	assert_true(r1.makespan_ps <= r0.makespan_ps);
	hoff_sim_result_free(&r);
	hoff_sched_free(s1);
	hoff_sched_free(s0);
	hoff_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_beats_offload),
		cmocka_unit_test(test_chain),
		cmocka_unit_test(test_rule10),
		cmocka_unit_test(test_missed_bound),
		cmocka_unit_test(test_baseline_segments),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
