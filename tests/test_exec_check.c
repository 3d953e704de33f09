/* test_exec_check.c: the happens-before checker (hoff_exec_check) and the
 * walk's one meaning for waits.
 *
 * The checker is compared with an oracle written apart from it: a
 * recording of the same walk, happens-before as explicit reachability
 * over a DAG (stream order, record -> later wait), and every pair of
 * commands' accesses compared byte range by byte range. On every plan
 * the oracle can afford, each single dropped wait is checked both ways
 * and the verdicts must agree: every drop that creates a race is caught.
 * Over the data/ graphs x policies x budgets x alignments, and over
 * fuzzed schedules, every plan must be race-free. The counts are printed
 * (the README quotes them). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "exec_cases.h"
#include "graph_json.h"
#include "policy.h"
#include "synth.h"

/* ---- the oracle ---- */

typedef struct acc {
	bool host, write;
	int64_t lo, hi;
} acc;

/* Command ev's accesses (the specification: exec.h's list). */
static int accesses(const hoff_xplan *p, int64_t ev, acc *a)
{
	const hoff_graph *g = p->g;
	int n = 0;
	if (ev >= p->nops) {
		const hoff_xfer *x = &p->xfer[ev - p->nops];
		a[n++] = (acc){!x->store, false,
			       x->store ? x->dev_off : x->host_off, 0};
		a[n - 1].hi = a[n - 1].lo + x->bytes;
		a[n++] = (acc){x->store != 0, !x->store || !x->same,
			       x->store ? x->host_off : x->dev_off, 0};
		a[n - 1].hi = a[n - 1].lo + x->bytes;
		return n;
	}
	/* a compute command: its op's lists at its own offsets; (v2) a
	 * recompute writes only the outputs it re-makes */
	const hoff_xop *o = &p->op[ev];
	int32_t k = o->op;
	for (int64_t j = 0; j < hoff_op_count(g, k, HOFF_USE_IN); j++)
		a[n++] =
			(acc){false, false, p->in_dev[o->in_at + j],
			      p->in_dev[o->in_at + j] +
				      g->tensor[g->in[g->in_off[k] + j]].bytes};
	for (int64_t j = 0; j < hoff_op_count(g, k, HOFF_USE_UPD); j++)
		a[n++] = (acc){
			false, true, p->upd_dev[o->upd_at + j],
			p->upd_dev[o->upd_at + j] +
				g->tensor[g->upd[g->upd_off[k] + j]].bytes};
	for (int64_t j = 0; j < hoff_op_count(g, k, HOFF_USE_OUT); j++)
		if (p->out_dev[o->out_at + j] != HOFF_NONE)
			a[n++] = (acc){
				false, true, p->out_dev[o->out_at + j],
				p->out_dev[o->out_at + j] +
					g->tensor[g->out[g->out_off[k] + j]]
						.bytes};
	if (o->ws_off != HOFF_NONE)
		a[n++] = (acc){false, true, o->ws_off,
			       o->ws_off + g->op[k].workspace_bytes};
	return n;
}

static int max_accesses(const hoff_xplan *p)
{
	const hoff_graph *g = p->g;
	int64_t m = 2;
	for (int32_t k = 0; k < g->nops; k++) {
		int64_t n = (g->in_off[k + 1] - g->in_off[k]) +
			    (g->upd_off[k + 1] - g->upd_off[k]) +
			    (g->out_off[k + 1] - g->out_off[k]) + 1;
		if (n > m)
			m = n;
	}
	return (int)m;
}

/* True when some pair of commands races under drop_wait, by brute force. */
static bool oracle_races(const hoff_xplan *p, int64_t drop_wait)
{
	hoff_xcmds r;
	hoff_exec_opts o = hoff_exec_defaults();
	o.drop_wait = drop_wait;
	hoff_err e = {{0}};
	assert_int_equal(hoff_exec_record(p, &o, &r, NULL, &e), HOFF_OK);
	size_t nev = (size_t)p->nops + (size_t)p->nxfers;
	size_t words = (nev + 63) / 64;
	uint64_t *reach = calloc(nev * words + 1, sizeof *reach);
	int64_t *last = malloc((size_t)p->nstreams * sizeof *last);
	int64_t *pending = malloc((nev + 1) * sizeof *pending); /* per stream */
	int64_t *order = malloc((nev + 1) * sizeof *order);
	size_t *npend = calloc((size_t)p->nstreams, sizeof *npend);
	int64_t **pend = calloc((size_t)p->nstreams, sizeof *pend);
	assert_non_null(reach);
	assert_non_null(last);
	assert_non_null(pending);
	assert_non_null(order);
	for (int32_t s = 0; s < p->nstreams; s++) {
		last[s] = -1;
		pend[s] = malloc((nev + 1) * sizeof **pend);
		assert_non_null(pend[s]);
	}
	(void)pending;
	size_t no = 0;
	for (size_t i = 0; i < r.n; i++) {
		const hoff_xcmd *c = &r.c[i];
		if (c->kind == HOFF_XCMD_WAIT) {
			pend[c->stream][npend[c->stream]++] = c->arg;
			continue;
		}
		if (c->kind == HOFF_XCMD_RECORD)
			continue; /* a command's record follows it */
		uint64_t *mine = &reach[(size_t)c->arg * words];
		int64_t preds[1 + 4096];
		size_t np = 0;
		if (last[c->stream] >= 0)
			preds[np++] = last[c->stream];
		for (size_t j = 0; j < npend[c->stream]; j++) {
			assert_true(np < 4096);
			preds[np++] = pend[c->stream][j];
		}
		npend[c->stream] = 0;
		for (size_t j = 0; j < np; j++) {
			const uint64_t *q = &reach[(size_t)preds[j] * words];
			for (size_t w = 0; w < words; w++)
				mine[w] |= q[w];
			mine[preds[j] / 64] |= 1ULL << (preds[j] % 64);
		}
		last[c->stream] = c->arg;
		order[no++] = c->arg;
	}
	int ma = max_accesses(p);
	acc *aa = malloc((size_t)ma * sizeof *aa),
	    *ab = malloc((size_t)ma * sizeof *ab);
	bool race = false;
	for (size_t i = 0; i < no && !race; i++) {
		int na = accesses(p, order[i], aa);
		for (size_t j = i + 1; j < no && !race; j++) {
			int64_t x = order[i], y = order[j];
			if (reach[(size_t)y * words + (size_t)x / 64] >>
				    (x % 64) &
			    1)
				continue;
			int nb = accesses(p, y, ab);
			for (int u = 0; u < na && !race; u++)
				for (int v = 0; v < nb && !race; v++)
					race = aa[u].host == ab[v].host &&
					       (aa[u].write || ab[v].write) &&
					       aa[u].lo < ab[v].hi &&
					       ab[v].lo < aa[u].hi &&
					       aa[u].lo < aa[u].hi &&
					       ab[v].lo < ab[v].hi;
		}
	}
	for (int32_t s = 0; s < p->nstreams; s++)
		free(pend[s]);
	free(pend);
	free(npend);
	free(aa);
	free(ab);
	free(order);
	free(pending);
	free(last);
	free(reach);
	free(r.c);
	return race;
}

/* ---- plans ---- */

typedef struct plan {
	hoff_sim_result r;
	hoff_xplan p;
} plan;

/* Plans s on g (valid at no budget: every planner's schedule is). */
static void make_plan(const hoff_graph *g, const hoff_sched *s, int64_t align,
		      plan *x)
{
	memset(x, 0, sizeof *x);
	plan_on(g, s, align, &x->r, &x->p);
}

static void free_plan(plan *x)
{
	hoff_xplan_free(&x->p);
	hoff_sim_result_free(&x->r);
}

/* Totals over a test, printed at its end. */
typedef struct tally {
	int64_t plans, waits, drops, racing, caught, oracle_plans;
} tally;

/* p is race-free; with the oracle (when with_oracle) each dropped wait
 * gets the same verdict from both. */
static void sweep(const hoff_xplan *p, bool with_oracle, tally *t)
{
	char line[1024];
	hoff_race r = race_of(p, HOFF_NONE);
	if (r.kind != HOFF_RACE_NONE) {
		hoff_race_format(p, &r, line, sizeof line);
		fail_msg("race in a valid plan: %s", line);
	}
	t->plans++;
	t->waits += r.nwaits;
	if (!with_oracle)
		return;
	assert_false(oracle_races(p, HOFF_NONE));
	t->oracle_plans++;
	for (int64_t w = 0; w < r.nwaits; w++) {
		hoff_race d = race_of(p, w);
		bool truth = oracle_races(p, w);
		t->drops++;
		t->racing += truth;
		t->caught += truth && d.kind != HOFF_RACE_NONE;
		if (truth != (d.kind != HOFF_RACE_NONE)) {
			hoff_race_format(p, &d, line, sizeof line);
			fail_msg("drop %lld: oracle says %s, checker says %s",
				 (long long)w, truth ? "race" : "none", line);
		}
	}
}

static size_t oracle_cost(const hoff_xplan *p)
{
	size_t n = (size_t)p->nops + (size_t)p->nxfers;
	return n * n;
}

static hoff_graph *read_data(const char *name)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/data/%s", tu_src_dir(), name);
	hoff_graph *g = NULL;
	hoff_err e = {{0}};
	hoff_status st = hoff_graph_read(path, &g, &e);
	if (st != HOFF_OK)
		print_error("%s: %s\n", path, e.msg);
	assert_int_equal(st, HOFF_OK);
	return g;
}

static hoff_sched *plan_policy(const hoff_graph *g, const char *policy,
			       int64_t budget)
{
	hoff_policy_opts po = hoff_policy_defaults();
	assert_true(hoff_policy_parse(policy, &po));
	if (po.kind == HOFF_POLICY_GREEDY)
		po.budget_bytes = budget;
	hoff_sched *s = NULL;
	hoff_policy_report rep;
	hoff_err e = {{0}};
	hoff_status st = hoff_policy_run(g, &po, &s, &rep, &e);
	if (st != HOFF_OK)
		print_error("%s: %s\n", policy, e.msg);
	assert_int_equal(st, HOFF_OK);
	return s;
}

/* Every data/ graph that fits a test's time, every policy, three budgets
 * (greedy's: the device, 3/4 and 1/2 of the no-offload peak; the
 * baselines plan the same schedule for each), alignments 1 and 256. The
 * oracle where the plan is small enough for its n^2 pairs per drop. */
static void test_check_data(void **state)
{
	(void)state;
	static const char *const graphs[] = {
		"tiny.json",
		"llama3-8b-decode-2l.json",
		"llama3-8b-prefill-2l.json",
		"llama3-8b-train-2l.json",
		"mixtral-8x7b-decode-2l.json",
		"deepseek-v3-decode-4l.json",
	};
	static const char *const policies[] = {
		"none", "reactive", "lookahead:1", "lookahead:2", "greedy"};
	tally t = {0};
	int64_t combos = 0, distinct = 0;
	for (size_t gi = 0; gi < sizeof graphs / sizeof *graphs; gi++) {
		hoff_graph *g = read_data(graphs[gi]);
		hoff_sim_result none = {0};
		hoff_err e = {{0}};
		assert_int_equal(hoff_cli_noffload(g, false, &none, &e),
				 HOFF_OK);
		int64_t peak = none.summary.peak_bytes;
		hoff_sim_result_free(&none);
		const int64_t budgets[3] = {HOFF_NONE, peak / 4 * 3, peak / 2};
		for (size_t pi = 0; pi < sizeof policies / sizeof *policies;
		     pi++) {
			hoff_sched *first = NULL;
			for (int bi = 0; bi < 3; bi++) {
				hoff_sched *s = plan_policy(g, policies[pi],
							    budgets[bi]);
				distinct += !first ||
					    !hoff_sched_same_steps(first, s);
				for (int64_t align = 1; align <= 256;
				     align *= 256) {
					plan x;
					combos++;
					make_plan(g, s, align, &x);
					sweep(&x.p,
					      bi == 0 && oracle_cost(&x.p) <
								 250000,
					      &t);
					free_plan(&x);
				}
				if (first)
					hoff_sched_free(s);
				else
					first = s;
			}
			hoff_sched_free(first);
		}
		hoff_graph_free(g);
	}
	print_message("check data: %lld combinations (%lld distinct "
		      "schedules), %lld plans checked, %lld waits; oracle on "
		      "%lld plans: %lld dropped waits, %lld create a race, "
		      "%lld caught\n",
		      (long long)combos, (long long)distinct,
		      (long long)t.plans, (long long)t.waits,
		      (long long)t.oracle_plans, (long long)t.drops,
		      (long long)t.racing, (long long)t.caught);
	assert_true(t.plans >= 6 * 5 * 2);
	assert_true(t.racing > 0);
	assert_int_equal(t.caught, t.racing);
}

/* Moves random cache steps earlier, past the step before them, keeping
 * each move the simulator accepts: prefetches early, stores late, odd
 * interleavings the planners never write. */
static void shake(const hoff_graph *g, hoff_sched *s, uint64_t *rng, int n)
{
	for (int i = 0; i < n && s->nsteps > 1; i++) {
		*rng = *rng * 6364136223846793005ULL + 1442695040888963407ULL;
		int64_t j =
			1 + (int64_t)((*rng >> 33) % (uint64_t)(s->nsteps - 1));
		hoff_step a = s->step[j - 1], b = s->step[j];
		if (a.kind == b.kind)
			continue;
		s->step[j - 1] = b;
		s->step[j] = a;
		hoff_sim_opts so = hoff_sim_defaults();
		so.budget_bytes = INT64_MAX;
		hoff_sim_result r;
		hoff_err e = {{0}};
		bool ok = hoff_sched_check(s, g, "shaken", &e) == HOFF_OK &&
			  hoff_sim_run(g, s, &so, &r, &e) == HOFF_OK && r.valid;
		hoff_sim_result_free(&r);
		if (!ok) {
			s->step[j - 1] = a;
			s->step[j] = b;
		}
	}
}

/* Fuzzed: synthetic graphs (inference and training, one or two tiers,
 * weights on the host), planned by every policy at random budgets, then
 * shaken; every plan race-free, every dropped wait judged as the oracle
 * does. */
static void test_check_fuzz(void **state)
{
	(void)state;
	static const char *const policies[] = {"reactive", "lookahead:1",
					       "lookahead:2", "greedy"};
	tally t = {0};
	uint64_t rng = 12345;
	for (int seed = 1; seed <= 24; seed++) {
		hoff_synth_opts so = hoff_synth_defaults();
		so.nops = 40 + 8 * (seed % 7);
		so.shape = seed % 3 == 0 ? HOFF_SYNTH_TRAIN : HOFF_SYNTH_INFER;
		so.layers = 2 + seed % 3;
		so.weights_on_host = seed % 4 != 0;
		so.ntiers = 1 + seed % 2;
		so.seed = (uint64_t)seed;
		hoff_graph *g = tu_synth(&so);
		hoff_err e = {{0}};
		hoff_sim_result none = {0};
		assert_int_equal(hoff_cli_noffload(g, false, &none, &e),
				 HOFF_OK);
		int64_t peak = none.summary.peak_bytes;
		hoff_sim_result_free(&none);
		const char *pol = policies[seed % 4];
		hoff_sched *s = plan_policy(g, pol, peak / 8 * (3 + seed % 4));
		shake(g, s, &rng, 200);
		plan x;
		make_plan(g, s, seed % 2 ? 1 : 256, &x);
		sweep(&x.p, oracle_cost(&x.p) < 250000, &t);
		free_plan(&x);
		hoff_sched_free(s);
		hoff_graph_free(g);
	}
	print_message("check fuzz: %lld plans, %lld waits; oracle on %lld "
		      "plans: %lld dropped waits, %lld create a race, %lld "
		      "caught\n",
		      (long long)t.plans, (long long)t.waits,
		      (long long)t.oracle_plans, (long long)t.drops,
		      (long long)t.racing, (long long)t.caught);
	assert_true(t.oracle_plans >= 12);
	assert_true(t.racing > 0);
	assert_int_equal(t.caught, t.racing);
}

/* Command 2 of p without its wait on transfer command pf races with it
 * on tensor t (both sides, on the device), and the race's line holds
 * said. */
static void expect_dropped_wait(const hoff_graph *g, const hoff_xplan *p,
				int64_t pf, const char *t, const char *said)
{
	int64_t w = wait_index(p, 2, pf);
	assert_true(w >= 0);
	hoff_race r = race_of(p, w);
	assert_int_equal(r.kind, HOFF_RACE_PAIR);
	assert_int_equal(r.a, pf);
	assert_int_equal(r.b, 2);
	assert_int_equal(r.ta, hoff_graph_find_tensor(g, t));
	assert_int_equal(r.tb, r.ta);
	assert_false(r.host);
	char line[1024];
	hoff_race_format(p, &r, line, sizeof line);
	assert_non_null(strstr(line, said));
}

/* By hand, on the KV schedule: op2 without its wait on kv's prefetch
 * races with it on kv's new block, named; a wait pointed at a later
 * event is refused by the walk (and named by the checker), so neither
 * backend runs it. */
static void test_check_hand(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(KV_GRAPH_OF("0.001"));
	hoff_sched *s = tu_sched(g, KV_STEPS);
	plan x;
	make_plan(g, s, 1, &x);
	hoff_xplan *p = &x.p;
	int64_t pf_kv = HOFF_NONE;
	for (int64_t i = 0; i < p->nxfers; i++)
		if (p->xfer[i].step == 4)
			pf_kv = p->nops + i;
	expect_dropped_wait(g, p, pf_kv, "kv",
			    "steps[4] prefetch \"kv\" and steps[5] op \"op2\"");
	/* op1 (step 3) made to wait for kv's prefetch (step 4): forward. */
	assert_true(p->op[1].nwait >= 1);
	int64_t saved = p->wait[p->op[1].wait_off];
	p->wait[p->op[1].wait_off] = pf_kv - p->nops;
	hoff_race r = race_of(p, HOFF_NONE);
	assert_int_equal(r.kind, HOFF_RACE_FORWARD);
	assert_int_equal(r.a, pf_kv);
	assert_int_equal(r.b, 1);
	hoff_exec_opts o = hoff_exec_defaults();
	hoff_backend *b = NULL;
	hoff_err e = {{0}};
	assert_int_equal(hoff_backend_cpu_new(p, &o, &b, &e), HOFF_OK);
	hoff_exec_result m;
	assert_int_equal(hoff_exec_run(b, &m, &e), HOFF_EINVALID);
	assert_non_null(strstr(e.msg, "not yet recorded"));
	hoff_exec_result_free(&m);
	hoff_backend_free(b);
	p->wait[p->op[1].wait_off] = saved;
	free_plan(&x);
	hoff_sched_free(s);
	hoff_graph_free(g);
}

/* (v2) Recompute, by hand (exec_cases.h's RC schedule): the recompute
 * (command 2, step 6) waits for w's second prefetch (step 5); that wait
 * dropped, the checker names the two and w's block. With none dropped,
 * no race, and every other single drop the oracle calls a race is one
 * for the checker too (sweep). */
static void test_check_recompute(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(RC_GRAPH);
	hoff_sched *s = tu_sched(g, RC_STEPS);
	plan x;
	make_plan(g, s, 1, &x);
	hoff_xplan *p = &x.p;
	assert_int_equal(p->nops, 4);
	assert_int_equal(p->nrecompute, 1);
	assert_true(p->op[2].recompute && p->op[2].op == 0 &&
		    p->op[2].step == 6);
	int64_t pf = p->nops + 1; /* transfers: w at step 0, w at step 5 */
	assert_int_equal(p->xfer[1].step, 5);
	assert_int_equal(race_of(p, HOFF_NONE).kind, HOFF_RACE_NONE);
	expect_dropped_wait(g, p, pf, "w",
			    "steps[5] prefetch \"w\" and steps[6] recompute "
			    "\"op0\"");
	tally t = {0};
	sweep(p, true, &t);
	free_plan(&x);
	hoff_sched_free(s);
	hoff_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_hand),
		cmocka_unit_test(test_check_recompute),
		cmocka_unit_test(test_check_fuzz),
		cmocka_unit_test(test_check_data),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
