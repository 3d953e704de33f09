/* test_sched_json.c: the schedule.json reader and writer, and the trace
 * writer. FORMAT.md's example schedule against its example graph, every
 * step form, one case per rejection (status and the words of the message),
 * lossless round trips of steps and summary picoseconds, and a trace whose
 * events are checked value by value. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "graph_json.h"
#include "sched_json.h"
#include "testutil.h"
#include "trace_json.h"

/* FORMAT.md's example, verbatim. */
static const char EXAMPLE_SCHED[] =
	"{\n"
	"  \"format\": \"hoffopt.schedule\", \"version\": 1,\n"
	"  \"graph\": \"tiny\", \"policy\": \"greedy\", \"budget_bytes\": 100000000,\n"
	"  \"steps\": [\n"
	"    { \"prefetch\": \"w0\", \"from\": \"host\" },\n"
	"    { \"prefetch\": \"w1\", \"from\": \"host\" },\n"
	"    { \"op\": \"op0\" },\n"
	"    { \"detach\": \"w0\" },\n"
	"    { \"op\": \"op1\" }\n"
	"  ],\n"
	"  \"summary\": { \"peak_bytes\": 11000000, \"makespan_s\": 0.012,\n"
	"               \"compute_s\": 0.008, \"stall_s\": 0.004,\n"
	"               \"h2d_bytes\": 8000000, \"d2h_bytes\": 0 }\n"
	"}\n";

static hoff_graph *G; /* the example graph, for every test */
static char tmpdir[64];

static int setup(void **state)
{
	(void)state;
	hoff_err e;
	if (hoff_graph_parse(tu_example_graph, strlen(tu_example_graph),
			     "g.json", &G, &e) != HOFF_OK)
		return -1;
	snprintf(tmpdir, sizeof tmpdir, "/tmp/hoff-sjXXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	hoff_graph_free(G);
	return rmdir(tmpdir);
}

static hoff_sched *parse_ok(const char *text)
{
	hoff_sched *s = NULL;
	hoff_err e = {{0}};
	hoff_status st = hoff_sched_parse(text, strlen(text), "s.json", G, &s,
					  &e);
	if (st != HOFF_OK)
		print_error("unexpected rejection: %s\n", e.msg);
	assert_int_equal(st, HOFF_OK);
	return s;
}

static hoff_status parse_exact(const char *text, size_t len, hoff_sched **s,
			       hoff_err *e)
{
	char *copy = malloc(len ? len : 1);
	assert_non_null(copy);
	memcpy(copy, text, len);
	hoff_status st = hoff_sched_parse(copy, len, "s.json", G, s, e);
	free(copy);
	return st;
}

static void reject(const char *text, const char *want)
{
	hoff_sched *s = (hoff_sched *)1;
	hoff_err e = {{0}};
	hoff_status st = parse_exact(text, strlen(text), &s, &e);
	if (st != HOFF_EINPUT || !strstr(e.msg, want))
		print_error("want \"%s\", got status %d: %s\n", want, st, e.msg);
	assert_int_equal(st, HOFF_EINPUT);
	assert_null(s);
	assert_non_null(strstr(e.msg, want));
	assert_null(strchr(e.msg, '\n'));
	if (getenv("HOFF_TEST_VERBOSE"))
		printf("  %s\n", e.msg);
}

static void str_eq(const char *a, const char *b)
{
	if (!a || !b)
		assert_ptr_equal(a, b);
	else
		assert_string_equal(a, b);
}

static void step_is(const hoff_sched *s, int64_t i, int kind, const char *id,
		    int tier)
{
	const hoff_step *st = &s->step[i];
	assert_int_equal(st->kind, kind);
	assert_int_equal(st->id, kind == HOFF_STEP_OP
					 ? hoff_graph_find_op(G, id)
					 : hoff_graph_find_tensor(G, id));
	assert_int_equal(st->tier, tier);
}

static void test_example(void **state)
{
	(void)state;
	hoff_sched *s = parse_ok(EXAMPLE_SCHED);
	assert_int_equal(s->nsteps, 5);
	step_is(s, 0, HOFF_STEP_PREFETCH, "w0", 0);
	step_is(s, 1, HOFF_STEP_PREFETCH, "w1", 0);
	step_is(s, 2, HOFF_STEP_OP, "op0", HOFF_NONE);
	step_is(s, 3, HOFF_STEP_DETACH, "w0", HOFF_NONE);
	step_is(s, 4, HOFF_STEP_OP, "op1", HOFF_NONE);
	assert_string_equal(s->graph, "tiny");
	assert_string_equal(s->policy, "greedy");
	assert_int_equal(s->budget_bytes, 100000000);
	assert_true(s->has_summary);
	assert_int_equal(s->summary.peak_bytes, 11000000);
	assert_int_equal(s->summary.makespan_ps, 12000000000LL);
	assert_int_equal(s->summary.compute_ps, 8000000000LL);
	assert_int_equal(s->summary.stall_ps, 4000000000LL);
	assert_int_equal(s->summary.h2d_bytes, 8000000);
	assert_int_equal(s->summary.d2h_bytes, 0);
	hoff_sched_free(s);
}

#define HDR "\"format\": \"hoffopt.schedule\", \"version\": 1"
#define S(steps) "{" HDR ", \"steps\": [" steps "]}"
#define OPS "{\"op\": \"op0\"}, {\"op\": \"op1\"}"

static void test_step_forms(void **state)
{
	(void)state;
	/* Steps before the header, cache steps at both ends, no summary. */
	hoff_sched *s = parse_ok(
		"{\"steps\": [{\"prefetch\": \"w0\", \"from\": \"host\"},"
		" {\"op\": \"op0\"}, {\"store\": \"a\", \"to\": \"host\", "
		"\"note\": 1}, {\"detach\": \"x\"}, {\"prefetch\": \"a\", "
		"\"from\": \"host\"}, {\"op\": \"op1\"}, {\"detach\": \"b\"}],"
		" \"version\": 1, \"format\": \"hoffopt.schedule\", "
		"\"budget_bytes\": null, \"policy\": null, \"extra\": [1]}");
	assert_int_equal(s->nsteps, 7);
	step_is(s, 0, HOFF_STEP_PREFETCH, "w0", 0);
	step_is(s, 1, HOFF_STEP_OP, "op0", HOFF_NONE);
	step_is(s, 2, HOFF_STEP_STORE, "a", 0);
	step_is(s, 3, HOFF_STEP_DETACH, "x", HOFF_NONE);
	step_is(s, 4, HOFF_STEP_PREFETCH, "a", 0);
	step_is(s, 5, HOFF_STEP_OP, "op1", HOFF_NONE);
	step_is(s, 6, HOFF_STEP_DETACH, "b", HOFF_NONE);
	assert_null(s->graph);
	assert_null(s->policy);
	assert_int_equal(s->budget_bytes, HOFF_NONE);
	assert_false(s->has_summary);
	hoff_sched_free(s);
}

/* The text of the file a writer returned st for (caller frees): the
 * test fails unless st is HOFF_OK and path reads. */
static char *written(hoff_status st, const char *path)
{
	assert_int_equal(st, HOFF_OK);
	char *text = tu_slurp(path, NULL);
	assert_non_null(text);
	return text;
}

static char *write_read(const hoff_sched *s, hoff_sched **back)
{
	char path[128];
	hoff_err e = {{0}};
	snprintf(path, sizeof path, "%s/s.json", tmpdir);
	char *text = written(hoff_sched_write(s, G, path, &e), path);
	if (hoff_sched_read(path, G, back, &e) != HOFF_OK)
		print_error("reread: %s\n", e.msg);
	assert_non_null(*back);
	remove(path);
	return text;
}

static void test_round_trip(void **state)
{
	(void)state;
	hoff_sched *s = parse_ok(EXAMPLE_SCHED), *t;
	assert_int_equal(hoff_sched_push(s, HOFF_STEP_STORE,
					 hoff_graph_find_tensor(G, "b"), 0),
			 HOFF_OK);
	s->summary.makespan_ps = 12345678901234LL; /* 12.3 s */
	s->summary.compute_ps = 1;
	s->summary.stall_ps = 12345678901233LL;
	s->summary.peak_bytes = 9007199254740992LL;
	s->summary.d2h_bytes = 2000000;
	char *text = write_read(s, &t);
	assert_non_null(strstr(text, "\"makespan_s\": 12.345678901234"));
	assert_non_null(strstr(text, "\"compute_s\": 9.9999999999999998e-13"));
	assert_non_null(strstr(text, "{\"store\": \"b\", \"to\": \"host\"}"));
	assert_int_equal(t->nsteps, s->nsteps);
	for (int64_t i = 0; i < s->nsteps; i++) {
		assert_int_equal(t->step[i].kind, s->step[i].kind);
		assert_int_equal(t->step[i].id, s->step[i].id);
		assert_int_equal(t->step[i].tier, s->step[i].tier);
	}
	assert_string_equal(t->graph, "tiny");
	assert_string_equal(t->policy, "greedy");
	assert_int_equal(t->budget_bytes, 100000000);
	assert_true(t->has_summary);
	assert_memory_equal(&t->summary, &s->summary, sizeof s->summary);
	free(text);
	hoff_sched_free(t);
	hoff_sched_free(s);
}

static void test_writer_defaults(void **state)
{
	(void)state;
	hoff_sched *s = hoff_sched_new(), *t;
	assert_non_null(s);
	assert_int_equal(hoff_sched_push(s, HOFF_STEP_OP, 0, HOFF_NONE),
			 HOFF_OK);
	assert_int_equal(hoff_sched_push(s, HOFF_STEP_OP, 1, HOFF_NONE),
			 HOFF_OK);
	assert_int_equal(hoff_sched_set_policy(s, "p\"q"), HOFF_OK);
	char *text = write_read(s, &t);
	assert_non_null(strstr(text, "\"graph\": \"tiny\"")); /* g->name */
	assert_non_null(strstr(text, "\"policy\": \"p\\\"q\""));
	assert_null(strstr(text, "budget_bytes"));
	assert_null(strstr(text, "summary"));
	assert_string_equal(t->policy, "p\"q");
	assert_int_equal(t->budget_bytes, HOFF_NONE);
	assert_false(t->has_summary);
	free(text);
	hoff_sched_free(t);
	s->budget_bytes = 0;
	text = write_read(s, &t);
	assert_non_null(strstr(text, "\"budget_bytes\": 0"));
	assert_int_equal(t->budget_bytes, 0);
	free(text);
	hoff_sched_free(t);
	hoff_sched_free(s);
}

/* Every conformance schedule reads against its graph and round-trips. */
static int read_schedule(const char *name, const cJSON *v, void *arg)
{
	(void)arg;
	char *gt = cJSON_PrintUnformatted(
		cJSON_GetObjectItemCaseSensitive(v, "graph"));
	char *st = cJSON_PrintUnformatted(
		cJSON_GetObjectItemCaseSensitive(v, "schedule"));
	hoff_graph *g = NULL;
	hoff_sched *s = NULL, *t = NULL;
	hoff_err e = {{0}};
	assert_int_equal(hoff_graph_parse(gt, strlen(gt), name, &g, &e),
			 HOFF_OK);
	if (hoff_sched_parse(st, strlen(st), name, g, &s, &e) != HOFF_OK)
		print_error("%s\n", e.msg);
	assert_non_null(s);
	char out[128];
	snprintf(out, sizeof out, "%s/c.json", tmpdir);
	assert_int_equal(hoff_sched_write(s, g, out, &e), HOFF_OK);
	assert_int_equal(hoff_sched_read(out, g, &t, &e), HOFF_OK);
	remove(out);
	assert_int_equal(t->nsteps, s->nsteps);
	assert_true(hoff_sched_same_steps(t, s));
	str_eq(t->graph, s->graph ? s->graph : g->name);
	str_eq(t->policy, s->policy);
	assert_int_equal(t->budget_bytes, s->budget_bytes);
	hoff_sched_free(t);
	hoff_sched_free(s);
	hoff_graph_free(g);
	free(gt);
	free(st);
	return 0;
}

static void test_conformance_schedules(void **state)
{
	(void)state;
	tu_vectors(".json", read_schedule, NULL, NULL);
	tu_vectors_in("conformance/v2", ".json", read_schedule, NULL, NULL);
}

static void test_truncated(void **state)
{
	(void)state;
	size_t end = strrchr(EXAMPLE_SCHED, '}') - EXAMPLE_SCHED + 1;
	for (size_t n = 0; n < end; n++) {
		hoff_sched *s = (hoff_sched *)1;
		hoff_err e = {{0}};
		assert_int_equal(parse_exact(EXAMPLE_SCHED, n, &s, &e),
				 HOFF_EINPUT);
		assert_null(s);
	}
}

#define REJECT(name, text, want)                                               \
	static void name(void **state)                                         \
	{                                                                      \
		(void)state;                                                   \
		reject(text, want);                                            \
	}

REJECT(rej_unknown_op, S("{\"op\": \"op0\"}, {\"op\": \"op9\"}"),
       "s.json: steps[1] \"op9\": op: unknown op \"op9\"")
REJECT(rej_unknown_tensor, S("{\"prefetch\": \"zz\", \"from\": \"host\"}, " OPS),
       "s.json: steps[0] \"zz\": prefetch: unknown tensor \"zz\"")
REJECT(rej_unknown_detach, S(OPS ", {\"detach\": \"zz\"}"),
       "steps[2] \"zz\": detach: unknown tensor \"zz\"")
REJECT(rej_unknown_tier, S("{\"prefetch\": \"w0\", \"from\": \"disk\"}, " OPS),
       "s.json: steps[0] \"w0\": from: unknown tier \"disk\"")
REJECT(rej_tier_device, S("{\"op\": \"op0\"}, {\"store\": \"a\", \"to\": "
			  "\"device\"}, {\"op\": \"op1\"}"),
       "steps[1] \"a\": to: unknown tier \"device\"")
REJECT(rej_missing_op, S("{\"op\": \"op0\"}"),
       "s.json: steps: op \"op1\" is missing")
REJECT(rej_repeated_op, S("{\"op\": \"op0\"}, {\"op\": \"op0\"}, "
			  "{\"op\": \"op1\"}"),
       "steps[1] \"op0\": op repeated or out of order; expected \"op1\"")
REJECT(rej_repeated_last, S(OPS ", {\"op\": \"op1\"}"),
       "steps[2] \"op1\": op repeated after the last op")
REJECT(rej_out_of_order, S("{\"op\": \"op1\"}, {\"op\": \"op0\"}"),
       "steps[0] \"op1\": op out of order; expected \"op0\"")
REJECT(rej_two_keys, S("{\"op\": \"op0\", \"prefetch\": \"w0\"}, "
		       "{\"op\": \"op1\"}"),
       "steps[0]: more than one step key (\"op\" and \"prefetch\")")
REJECT(rej_no_key, S("{\"from\": \"host\"}, " OPS),
       "steps[0]: no step key (op, prefetch, store, detach, recompute or "
       "drop)")
REJECT(rej_prefetch_no_from, S("{\"prefetch\": \"w0\"}, " OPS),
       "steps[0] \"w0\": from is required")
REJECT(rej_prefetch_to, S("{\"prefetch\": \"w0\", \"to\": \"host\"}, " OPS),
       "steps[0] \"w0\": \"to\" belongs to store steps only")
REJECT(rej_store_from, S("{\"op\": \"op0\"}, {\"store\": \"a\", \"from\": "
			 "\"host\", \"to\": \"host\"}, {\"op\": \"op1\"}"),
       "steps[1] \"a\": \"from\" belongs to prefetch steps only")
REJECT(rej_detach_to, S(OPS ", {\"detach\": \"b\", \"to\": \"host\"}"),
       "steps[2] \"b\": \"to\" belongs to store steps only")
REJECT(rej_op_from, S("{\"op\": \"op0\", \"from\": \"host\"}, {\"op\": "
		      "\"op1\"}"),
       "steps[0] \"op0\": \"from\" belongs to prefetch steps only")
REJECT(rej_step_null, S("{\"op\": null}, " OPS),
       "steps[0]: op must not be null")
REJECT(rej_step_type, S("{\"op\": 0}, " OPS), "steps[0]: op must be a string")
REJECT(rej_step_not_object, S("\"op0\", " OPS), "steps[0]: not an object")
REJECT(rej_dup_step_key, S("{\"op\": \"op0\", \"op\": \"op0\"}, "
			   "{\"op\": \"op1\"}"),
       "s.json: steps[0]: duplicate key \"op\"")
REJECT(rej_dup_top, "{" HDR ", \"steps\": [], \"steps\": []}",
       "duplicate key \"steps\"")
REJECT(rej_budget_negative, "{" HDR ", \"budget_bytes\": -1, \"steps\": ["
			    OPS "]}",
       "s.json: budget_bytes must be >= 0")
REJECT(rej_budget_frac, "{" HDR ", \"budget_bytes\": 1.5, \"steps\": []}",
       "budget_bytes must be an integer")
REJECT(rej_budget_string, "{" HDR ", \"budget_bytes\": \"1\", \"steps\": []}",
       "budget_bytes must be an integer")
REJECT(rej_format, "{\"format\": \"hoffopt.graph\", \"version\": 1, "
		   "\"steps\": []}",
       "format \"hoffopt.graph\" is unknown (expected \"hoffopt.schedule\")")
REJECT(rej_version, "{\"format\": \"hoffopt.schedule\", \"version\": 0}",
       "version 0 is unknown")
REJECT(rej_missing_steps, "{" HDR "}", "s.json: steps is required")
REJECT(rej_missing_version, "{\"format\": \"hoffopt.schedule\", \"steps\": "
			    "[" OPS "]}",
       "s.json: version is required")
REJECT(rej_steps_type, "{" HDR ", \"steps\": {}}", "steps must be an array")
REJECT(rej_graph_type, "{" HDR ", \"graph\": 1, \"steps\": []}",
       "graph must be a string")
REJECT(rej_summary_partial, "{" HDR ", \"steps\": [" OPS "], \"summary\": "
			    "{\"peak_bytes\": 1, \"makespan_s\": 1, "
			    "\"compute_s\": 1, \"stall_s\": 0, "
			    "\"h2d_bytes\": 0}}",
       "s.json: summary: d2h_bytes is required")
REJECT(rej_summary_negative, "{" HDR ", \"steps\": [" OPS "], \"summary\": "
			     "{\"peak_bytes\": 1, \"makespan_s\": -1, "
			     "\"compute_s\": 1, \"stall_s\": 0, "
			     "\"h2d_bytes\": 0, \"d2h_bytes\": 0}}",
       "summary: makespan_s must be >= 0")
REJECT(rej_summary_huge, "{" HDR ", \"steps\": [" OPS "], \"summary\": "
			 "{\"peak_bytes\": 1, \"makespan_s\": 1e7, "
			 "\"compute_s\": 1, \"stall_s\": 0, "
			 "\"h2d_bytes\": 0, \"d2h_bytes\": 0}}",
       "summary: makespan_s must be below 2^62 ps")
REJECT(rej_summary_type, "{" HDR ", \"steps\": [], \"summary\": [1]}",
       "summary must be an object")
REJECT(rej_syntax, "{" HDR ",\n\"steps\": [{\"op\": \"op0\"} {\"op\": "
		   "\"op1\"}]}",
       "s.json:2:25: invalid JSON")
REJECT(rej_garbage, S(OPS) "]", "garbage after the top-level object")

/* Writes tl as G's trace, reads it back (the file removed) and checks
 * it is JSON: the text (caller frees); its parse in *j (caller deletes)
 * when j is not NULL. */
static char *write_trace(const hoff_timeline *tl, cJSON **j)
{
	char path[128];
	hoff_err e = {{0}};
	snprintf(path, sizeof path, "%s/trace.json", tmpdir);
	char *text = written(hoff_trace_write(G, tl, path, &e), path);
	remove(path);
	cJSON *parsed = cJSON_Parse(text);
	assert_non_null(parsed);
	if (j)
		*j = parsed;
	else
		cJSON_Delete(parsed);
	return text;
}

static void test_trace(void **state)
{
	(void)state;
	hoff_timeline tl = {0};
	int32_t w0 = hoff_graph_find_tensor(G, "w0");
	hoff_event ev[] = {
		{0, 4000000000LL, 0, w0, 0, HOFF_EV_PREFETCH, HOFF_NONE},
		{0, 4000000000LL, 2, 0, HOFF_NONE, HOFF_EV_STALL, w0},
		{4000000000LL, 8000000000LL, 2, 0, HOFF_NONE, HOFF_EV_OP,
		 HOFF_NONE},
		{8000000000LL, 8000000000LL, 3, w0, HOFF_NONE, HOFF_EV_DETACH,
		 HOFF_NONE},
		{8000000000LL, 8000000000LL, 4, 1, HOFF_NONE, HOFF_EV_OP,
		 HOFF_NONE},
		{1234567891LL, 1234567892LL, 3, w0, 0, HOFF_EV_STORE, HOFF_NONE},
	};
	for (size_t i = 0; i < sizeof ev / sizeof *ev; i++)
		assert_int_equal(hoff_timeline_event(&tl, ev[i]), HOFF_OK);
	assert_int_equal(hoff_timeline_mem(&tl, 0, 5000000), HOFF_OK);
	assert_int_equal(hoff_timeline_mem(&tl, 4000000000LL, 9000000),
			 HOFF_OK);
	cJSON *j;
	char *text = write_trace(&tl, &j);
	assert_string_equal(
		cJSON_GetObjectItem(j, "displayTimeUnit")->valuestring, "ms");
	const cJSON *evs = cJSON_GetObjectItem(j, "traceEvents"), *x;
	int nm = 0, nx = 0, nc = 0;
	cJSON_ArrayForEach(x, evs)
	{
		const char *ph = cJSON_GetObjectItem(x, "ph")->valuestring;
		assert_int_equal(cJSON_GetObjectItem(x, "pid")->valueint, 1);
		nm += ph[0] == 'M';
		nx += ph[0] == 'X';
		nc += ph[0] == 'C';
	}
	/* process name; compute, host h2d, host d2h: name + sort index */
	assert_int_equal(nm, 1 + 3 * 2);
	assert_int_equal(nx, 5);
	assert_int_equal(nc, 2);
	/* the detach as an instant on the compute track */
	assert_non_null(strstr(text, "{\"ph\":\"i\",\"s\":\"t\",\"pid\":1,"
				     "\"tid\":1,\"cat\":\"detach\","
				     "\"name\":\"w0\",\"ts\":8000,"
				     "\"args\":{\"step\":3,"
				     "\"bytes\":4000000}}"));
	assert_non_null(strstr(text, "\"tid\":2,\"name\":\"thread_name\","
				     "\"args\":{\"name\":\"host h2d\"}"));
	assert_non_null(strstr(text, "\"tid\":3,\"name\":\"thread_name\","
				     "\"args\":{\"name\":\"host d2h\"}"));
	assert_non_null(strstr(text, "{\"ph\":\"X\",\"pid\":1,\"tid\":2,"
				     "\"cat\":\"prefetch\",\"name\":\"w0\","
				     "\"ts\":0,\"dur\":4000,"
				     "\"args\":{\"step\":0,\"bytes\":4000000}}"));
	assert_non_null(strstr(text, "{\"ph\":\"X\",\"pid\":1,\"tid\":1,"
				     "\"cat\":\"stall\",\"name\":\"stall: w0\","
				     "\"ts\":0,\"dur\":4000,"
				     "\"args\":{\"step\":2,\"op\":\"op0\","
				     "\"awaits\":\"w0\"}}"));
	assert_non_null(strstr(text, "\"cat\":\"op\",\"name\":\"op0\","
				     "\"ts\":4000,\"dur\":4000,"
				     "\"args\":{\"step\":2}}"));
	assert_non_null(strstr(text, "\"name\":\"op1\",\"ts\":8000,\"dur\":0,"));
	assert_non_null(strstr(text, "\"tid\":3,\"cat\":\"store\",\"name\":"
				     "\"w0\",\"ts\":1234.567891,"
				     "\"dur\":0.000001,"));
	assert_non_null(strstr(text, "{\"ph\":\"C\",\"pid\":1,\"name\":"
				     "\"device memory\",\"ts\":4000,"
				     "\"args\":{\"bytes\":9000000}}"));
	cJSON_Delete(j);
	free(text);
	hoff_timeline_free(&tl);
	/* No store: the idle d2h link gets no track. */
	hoff_timeline t2 = {0};
	assert_int_equal(hoff_timeline_event(&t2, ev[0]), HOFF_OK);
	text = write_trace(&t2, NULL);
	assert_non_null(strstr(text, "\"host h2d\""));
	assert_null(strstr(text, "\"host d2h\""));
	free(text);
	hoff_timeline_free(&t2);
}

/* (v2) A recompute is a compute event of its own, "recompute OP"; a drop
 * an instant on the compute track like a detach. */
static void test_trace_v2(void **state)
{
	(void)state;
	hoff_timeline tl = {0};
	int32_t a = hoff_graph_find_tensor(G, "a");
	hoff_event ev[] = {
		{1000000000LL, 1000000000LL, 1, a, HOFF_NONE, HOFF_EV_DROP,
		 HOFF_NONE},
		{1000000000LL, 1500000000LL, 2, 0, HOFF_NONE, HOFF_EV_RECOMPUTE,
		 HOFF_NONE},
	};
	for (size_t i = 0; i < sizeof ev / sizeof *ev; i++)
		assert_int_equal(hoff_timeline_event(&tl, ev[i]), HOFF_OK);
	char *text = write_trace(&tl, NULL);
	assert_non_null(strstr(text, "{\"ph\":\"i\",\"s\":\"t\",\"pid\":1,"
				     "\"tid\":1,\"cat\":\"drop\","
				     "\"name\":\"a\",\"ts\":1000,"
				     "\"args\":{\"step\":1,"
				     "\"bytes\":2000000}}"));
	assert_non_null(strstr(text, "{\"ph\":\"X\",\"pid\":1,\"tid\":1,"
				     "\"cat\":\"recompute\","
				     "\"name\":\"recompute op0\",\"ts\":1000,"
				     "\"dur\":500,\"args\":{\"step\":2}}"));
	free(text);
	hoff_timeline_free(&tl);
}

/* ---- FORMAT v2: recompute and drop steps, recompute_s ---- */

#define HDR2	  "\"format\": \"hoffopt.schedule\", \"version\": 2"
#define S2(steps) "{" HDR2 ", \"steps\": [" steps "]}"
#define SUM(extra)                                                    \
	", \"summary\": {\"peak_bytes\": 1, \"makespan_s\": 0.5, "    \
	"\"compute_s\": 0.25, \"stall_s\": 0.125, \"h2d_bytes\": 0, " \
	"\"d2h_bytes\": 0" extra "}"

static void test_v2_steps(void **state)
{
	(void)state;
	/* Steps before the header: the version is known when they are
	 * converted. */
	hoff_sched *s =
		parse_ok("{\"steps\": [{\"op\": \"op0\"}, {\"drop\": \"a\"}, "
			 "{\"recompute\": \"op0\"}, {\"op\": \"op1\"}], "
			 "\"version\": 2, \"format\": \"hoffopt.schedule\"" SUM(
				 ", \"recompute_s\": 0.0625") "}");
	assert_int_equal(s->version, 2);
	step_is(s, 1, HOFF_STEP_DROP, "a", HOFF_NONE);
	assert_int_equal(s->step[2].kind, HOFF_STEP_RECOMPUTE);
	assert_int_equal(s->step[2].id, 0);
	assert_int_equal(s->summary.recompute_ps, 62500000000LL);
	assert_true(hoff_sched_uses_v2(s));
	hoff_sched *t;
	char *text = write_read(s, &t);
	assert_non_null(strstr(text, "\"version\": 2"));
	assert_non_null(strstr(text, "{\"drop\": \"a\"},\n  {\"recompute\": "
				     "\"op0\"}"));
	assert_non_null(strstr(text, "\"compute_s\": 0.25, \"recompute_s\": "
				     "0.0625, \"stall_s\""));
	assert_true(hoff_sched_same_steps(s, t));
	assert_memory_equal(&t->summary, &s->summary, sizeof s->summary);
	free(text);
	hoff_sched_free(t);
	hoff_sched_free(s);
	/* A v2 file with neither step is written as version 1, without
	 * recompute_s. */
	s = parse_ok("{" HDR2 ", \"steps\": [" OPS
		     "]" SUM(", \"recompute_s\": 0") "}");
	assert_false(hoff_sched_uses_v2(s));
	text = write_read(s, &t);
	assert_non_null(strstr(text, "\"version\": 1"));
	assert_null(strstr(text, "recompute_s"));
	free(text);
	hoff_sched_free(t);
	hoff_sched_free(s);
}

REJECT(rej_v1_recompute,
       S("{\"op\": \"op0\"}, {\"recompute\": \"op0\"}, "
	 "{\"op\": \"op1\"}"),
       "s.json: steps[1] \"op0\": recompute: a version-2 step (the file is "
       "version 1)")
REJECT(rej_v1_drop,
       S("{\"op\": \"op0\"}, {\"drop\": \"a\"}, {\"op\": \"op1\"}"),
       "s.json: steps[1] \"a\": drop: a version-2 step (the file is version "
       "1)")
REJECT(rej_v1_recompute_s,
       "{" HDR ", \"steps\": [" OPS "]" SUM(", \"recompute_s\": 0") "}",
       "s.json: summary: recompute_s is a version-2 field (the file is "
       "version 1)")
REJECT(rej_v2_no_recompute_s, "{" HDR2 ", \"steps\": [" OPS "]" SUM("") "}",
       "s.json: summary: recompute_s is required (version 2)")
REJECT(rej_recompute_before_op,
       S2("{\"op\": \"op0\"}, {\"recompute\": \"op1\"}, {\"op\": \"op1\"}"),
       "s.json: steps[1] \"op1\": recompute before the op's own step")
REJECT(rej_recompute_first, S2("{\"recompute\": \"op0\"}, " OPS),
       "s.json: steps[0] \"op0\": recompute before the op's own step")
REJECT(rej_recompute_unknown, S2(OPS ", {\"recompute\": \"zz\"}"),
       "s.json: steps[2] \"zz\": recompute: unknown op \"zz\"")
REJECT(rej_drop_unknown, S2(OPS ", {\"drop\": \"zz\"}"),
       "s.json: steps[2] \"zz\": drop: unknown tensor \"zz\"")
REJECT(rej_drop_from, S2(OPS ", {\"drop\": \"a\", \"from\": \"host\"}"),
       "steps[2] \"a\": \"from\" belongs to prefetch steps only")

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_example),
		cmocka_unit_test(test_step_forms),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_v2_steps),
		cmocka_unit_test(rej_v1_recompute),
		cmocka_unit_test(rej_v1_drop),
		cmocka_unit_test(rej_v1_recompute_s),
		cmocka_unit_test(rej_v2_no_recompute_s),
		cmocka_unit_test(rej_recompute_before_op),
		cmocka_unit_test(rej_recompute_first),
		cmocka_unit_test(rej_recompute_unknown),
		cmocka_unit_test(rej_drop_unknown),
		cmocka_unit_test(rej_drop_from),
		cmocka_unit_test(test_writer_defaults),
		cmocka_unit_test(test_conformance_schedules),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_trace),
		cmocka_unit_test(test_trace_v2),
		cmocka_unit_test(rej_unknown_op),
		cmocka_unit_test(rej_unknown_tensor),
		cmocka_unit_test(rej_unknown_detach),
		cmocka_unit_test(rej_unknown_tier),
		cmocka_unit_test(rej_tier_device),
		cmocka_unit_test(rej_missing_op),
		cmocka_unit_test(rej_repeated_op),
		cmocka_unit_test(rej_repeated_last),
		cmocka_unit_test(rej_out_of_order),
		cmocka_unit_test(rej_two_keys),
		cmocka_unit_test(rej_no_key),
		cmocka_unit_test(rej_prefetch_no_from),
		cmocka_unit_test(rej_prefetch_to),
		cmocka_unit_test(rej_store_from),
		cmocka_unit_test(rej_detach_to),
		cmocka_unit_test(rej_op_from),
		cmocka_unit_test(rej_step_null),
		cmocka_unit_test(rej_step_type),
		cmocka_unit_test(rej_step_not_object),
		cmocka_unit_test(rej_dup_step_key),
		cmocka_unit_test(rej_dup_top),
		cmocka_unit_test(rej_budget_negative),
		cmocka_unit_test(rej_budget_frac),
		cmocka_unit_test(rej_budget_string),
		cmocka_unit_test(rej_format),
		cmocka_unit_test(rej_version),
		cmocka_unit_test(rej_missing_steps),
		cmocka_unit_test(rej_missing_version),
		cmocka_unit_test(rej_steps_type),
		cmocka_unit_test(rej_graph_type),
		cmocka_unit_test(rej_summary_partial),
		cmocka_unit_test(rej_summary_negative),
		cmocka_unit_test(rej_summary_huge),
		cmocka_unit_test(rej_summary_type),
		cmocka_unit_test(rej_syntax),
		cmocka_unit_test(rej_garbage),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
