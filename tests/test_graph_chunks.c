/* test_graph_chunks.c: the graph reader's chunks (graph_json.c). A graph
 * read in 2 to 16 chunks at once must be the graph read in order, byte for
 * byte once printed, and a rejected one must give the same message, index
 * and id included, wherever the fault lies: before, at or after a cut;
 * and where a cut's guess lands inside a string or past the array. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_json.h"
#include "testutil.h"

/* A growing text. */
typedef struct text {
	char *s;
	size_t n, cap;
} text;

static void put(text *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	assert_true(k >= 0);
	while (t->n + (size_t)k + 1 > t->cap) {
		t->cap = t->cap ? 2 * t->cap : 4096;
		t->s = realloc(t->s, t->cap);
		assert_non_null(t->s);
	}
	va_start(ap, fmt);
	vsnprintf(t->s + t->n, (size_t)k + 1, fmt, ap);
	va_end(ap);
	t->n += (size_t)k;
}

/* What to break in the graph make() writes. */
typedef struct fault {
	int dup_tensor;	 /* tensor i repeats tensor 0's id (-1: none) */
	int dup_op;	 /* op i repeats op 0's id */
	int unknown;	 /* op i reads a tensor nobody declared */
	int bad_bytes;	 /* tensor i has bytes "x" */
	int syntax;	 /* op i lacks its closing brace */
	int not_object;	 /* op i is the number 7 */
	int bad_list;	 /* op i's inputs hold a number */
	bool tricky_ids; /* ids hold "}, {" and "ops" (misleading guesses) */
	bool ops_first;	 /* the ops array before the tensors */
	bool repeats;	 /* names repeated in a list, short and long ones */
} fault;

static const fault NONE = {-1, -1, -1, -1, -1, -1, -1, false, false, false};

/* A chain of n ops over n + 1 tensors, with a weight every third op, its
 * ids and kinds varied; the fault f written in. */
static char *make(int n, fault f, size_t *len)
{
	text t = {0};
	const char *pre = f.tricky_ids ? "a\\\"}, {\\\"id\\\": ops " : "";
	text ts = {0}, os = {0};
	put(&ts, "\"tensors\": [\n");
	for (int i = 0; i <= n; i++) {
		if (i == f.dup_tensor)
			put(&ts, "  {\"id\": \"%st0\", \"bytes\": 8},\n", pre);
		else if (i == f.bad_bytes)
			put(&ts, "  {\"id\": \"%st%d\", \"bytes\": \"x\"},\n",
			    pre, i);
		else
			put(&ts,
			    "  {\"id\": \"%st%d\", \"bytes\": %d, \"kind\": "
			    "\"%s\"%s},\n",
			    pre, i, 64 + i % 7, i % 3 ? "activation" : "weight",
			    i % 5 == 0 ? ", \"home\": \"host\"" : "");
	}
	ts.n -= 2; /* the last ",\n" */
	put(&ts, "\n ]");
	put(&os, "\"ops\": [\n");
	for (int i = 0; i < n; i++) {
		if (i == f.not_object) {
			put(&os, "  7,\n");
			continue;
		}
		put(&os, "  {\"id\": \"%so%d\", \"kind\": \"k%d\", ", pre,
		    i == f.dup_op ? 0 : i, i % 3);
		if (i == f.bad_list)
			put(&os, "\"inputs\": [\"%st%d\", 3], ", pre, i);
		else if (i == f.unknown)
			put(&os, "\"inputs\": [\"%snobody\"], ", pre);
		else if (f.repeats && i % 50 == 7) { /* 40 names, 8 tensors */
			put(&os, "\"inputs\": [");
			for (int k = 0; k < 40; k++)
				put(&os, "%s\"%st%d\"", k ? ", " : "", pre,
				    (i + 7 * k) % 20 % 8);
			put(&os, "], ");
		} else if (f.repeats)
			put(&os,
			    "\"inputs\": [\"%st%d\", \"%st%d\", \"%st%d\"], ",
			    pre, i, pre, i / 3 * 3, pre, i);
		else
			put(&os, "\"inputs\": [\"%st%d\", \"%st%d\"], ", pre, i,
			    pre, i / 3 * 3);
		put(&os, "\"outputs\": [\"%st%d\"], \"time_s\": 1e-%d", pre,
		    i + 1, 3 + i % 4);
		put(&os, i == f.syntax ? ",\n" : "},\n");
	}
	os.n -= 2;
	put(&os, "\n ]");
	put(&t, "{\"format\": \"hoffopt.graph\", \"version\": 1,\n"
		" \"machine\": {\"device\": {\"memory_bytes\": 1000000},"
		" \"tiers\": [{\"name\": \"host\", \"h2d_Bps\": 1e9,"
		" \"d2h_Bps\": 1e9}]},\n ");
	put(&t, "%s,\n %s\n}\n", f.ops_first ? os.s : ts.s,
	    f.ops_first ? ts.s : os.s);
	free(ts.s);
	free(os.s);
	*len = t.n;
	return t.s;
}

/* The outcome of one read: the printed graph, or status and message. */
typedef struct outcome {
	hoff_status st;
	char msg[HOFF_ERRLEN];
	char *printed;
	size_t len;
} outcome;

static outcome read_in(const char *s, size_t len, int chunks)
{
	outcome o = {0};
	hoff_graph *g = NULL;
	hoff_err e = {{0}};
	char *copy = malloc(len ? len : 1); /* exact: ASan sees overreads */
	assert_non_null(copy);
	memcpy(copy, s, len);
	o.st = hoff_graph_parse_chunks(copy, len, "c.json", chunks, &g, &e);
	free(copy);
	if (o.st != HOFF_OK) {
		assert_null(g);
		snprintf(o.msg, sizeof o.msg, "%s", e.msg);
		return o;
	}
	FILE *f = open_memstream(&o.printed, &o.len);
	assert_non_null(f);
	hoff_graph_print(g, f);
	assert_int_equal(fclose(f), 0);
	hoff_graph_free(g);
	return o;
}

/* Every chunk count reads s as the plain reader does; returns the plain
 * reader's message ("" when it accepts). */
static const char *same_for_all(const char *s, size_t len, char *msg,
				size_t cap)
{
	static const int counts[] = {2, 3, 4, 5, 7, 16};
	outcome want = read_in(s, len, 1);
	for (size_t i = 0; i < sizeof counts / sizeof *counts; i++) {
		outcome got = read_in(s, len, counts[i]);
		if (got.st != want.st || strcmp(got.msg, want.msg) != 0)
			print_error("%d chunks: status %d \"%s\", in order: "
				    "%d \"%s\"\n",
				    counts[i], got.st, got.msg, want.st,
				    want.msg);
		assert_int_equal(got.st, want.st);
		assert_string_equal(got.msg, want.msg);
		if (want.st == HOFF_OK) {
			assert_int_equal(got.len, want.len);
			assert_memory_equal(got.printed, want.printed,
					    want.len);
		}
		free(got.printed);
	}
	free(want.printed);
	snprintf(msg, cap, "%s", want.msg);
	return msg;
}

static void check(int n, fault f, const char *want)
{
	size_t len;
	char *s = make(n, f, &len);
	char msg[HOFF_ERRLEN];
	same_for_all(s, len, msg, sizeof msg);
	if (!strstr(msg, want))
		print_error("want \"%s\" in \"%s\"\n", want, msg);
	assert_non_null(strstr(msg, want));
	free(s);
}

static void test_accepted(void **state)
{
	(void)state;
	fault f = NONE;
	for (int n = 0; n <= 9; n++)
		check(n, f, ""); /* arrays shorter than the chunks */
	check(3000, f, "");
	f.tricky_ids = true; /* guesses inside strings, "ops" in ids */
	check(3000, f, "");
	f = NONE;
	f.ops_first = true; /* ops kept until the tensors are in */
	check(3000, f, "");
	f = NONE;
	f.repeats = true; /* a repeated name counts once */
	check(3000, f, "");
	/* The graph itself, not only its print: a value checked by hand. */
	size_t len;
	char *s = make(3000, NONE, &len);
	hoff_graph *g = NULL;
	hoff_err e;
	assert_int_equal(hoff_graph_parse_chunks(s, len, "c.json", 5, &g, &e),
			 HOFF_OK);
	assert_int_equal(g->ntensors, 3001);
	assert_int_equal(g->nops, 3000);
	assert_string_equal(g->op[2999].id, "o2999");
	assert_int_equal(g->in_off[2999 + 1] - g->in_off[2999], 2);
	assert_int_equal(g->in[g->in_off[2999] + 1], 2997); /* t2997 */
	assert_int_equal(g->tensor[1500].bytes, 64 + 1500 % 7);
	hoff_graph_free(g);
	free(s);
	/* Repeats: op 7 lists 40 names of the 8 tensors (7 + 7k) % 20 % 8,
	 * each once; op 8 lists t8, t6, t8: two. */
	f = NONE;
	f.repeats = true;
	s = make(3000, f, &len);
	assert_int_equal(hoff_graph_parse_chunks(s, len, "c.json", 7, &g, &e),
			 HOFF_OK);
	assert_int_equal(g->in_off[9] - g->in_off[8], 2);
	assert_int_equal(g->in[g->in_off[8]], 8);
	assert_int_equal(g->in[g->in_off[8] + 1], 6);
	assert_int_equal(g->in_off[8] - g->in_off[7], 8);
	for (int64_t a = g->in_off[7]; a < g->in_off[8]; a++)
		for (int64_t b = a + 1; b < g->in_off[8]; b++)
			assert_int_not_equal(g->in[a], g->in[b]);
	hoff_graph_free(g);
	free(s);
}

/* Each fault early (chunk 0), in the middle and late (a later chunk). */
static void test_rejected(void **state)
{
	(void)state;
	static const int at[] = {0, 1, 1499, 1500, 2998};
	for (size_t i = 0; i < sizeof at / sizeof *at; i++) {
		int k = at[i];
		fault f = NONE;
		char want[128];
		if (k > 0) {
			f.dup_tensor = k;
			snprintf(want, sizeof want,
				 "tensors[%d] \"t0\": id: duplicate tensor id",
				 k);
			check(3000, f, want);
			f = NONE;
			f.dup_op = k;
			snprintf(want, sizeof want,
				 "ops[%d] \"o0\": id: duplicate op id", k);
			check(3000, f, want);
			f = NONE;
		}
		f.unknown = k;
		snprintf(want, sizeof want, "ops[%d] \"o%d\": inputs: unknown",
			 k, k);
		check(3000, f, want);
		f = NONE;
		f.bad_bytes = k;
		snprintf(want, sizeof want, "tensors[%d] \"t%d\": bytes", k, k);
		check(3000, f, want);
		f = NONE;
		f.syntax = k;
		check(3000, f, "invalid JSON");
		f = NONE;
		f.not_object = k;
		snprintf(want, sizeof want, "ops[%d]: not an object", k);
		check(3000, f, want);
		f = NONE;
		f.bad_list = k;
		snprintf(want, sizeof want, "inputs[1] must be a tensor id");
		check(3000, f, want);
	}
	/* Two faults: the first in document order wins, even when a later
	 * chunk meets its own first. */
	fault f = NONE;
	f.dup_op = 2500;
	f.unknown = 2000;
	check(3000, f, "ops[2000]");
	f = NONE;
	f.dup_op = 1000;
	f.syntax = 2600;
	check(3000, f, "ops[1000] \"o0\": id: duplicate op id");
	f = NONE;
	f.tricky_ids = true;
	f.unknown = 2999;
	check(3000, f, "ops[2999]");
}

/* Truncated at every length of a small graph, in 3 chunks: same words. */
static void test_truncated(void **state)
{
	(void)state;
	size_t len;
	char *s = make(40, NONE, &len);
	char msg[HOFF_ERRLEN];
	for (size_t k = 0; k < len; k += 7)
		same_for_all(s, k, msg, sizeof msg);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accepted),
		cmocka_unit_test(test_rejected),
		cmocka_unit_test(test_truncated),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
