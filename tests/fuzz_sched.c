/* fuzz_sched.c: fuzz entry point for the schedule.json reader against a
 * fixed graph (FORMAT.md's example plus a second tier). Properties as in
 * fuzz_graph.c: no crash or overread, clean rejections, and an accepted
 * schedule prints, reads back and prints again to the same bytes. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "graph_json.h"
#include "sched_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char GRAPH[] =
	"{\"format\": \"hoffopt.graph\", \"version\": 1, \"name\": \"tiny\","
	" \"machine\": {\"device\": {\"memory_bytes\": 100000000},"
	" \"tiers\": [{\"name\": \"host\", \"h2d_Bps\": 1e9, \"d2h_Bps\": 1e9},"
	" {\"name\": \"nvme\", \"h2d_Bps\": 2e9, \"d2h_Bps\": 1e9}]},"
	" \"tensors\": [{\"id\": \"x\", \"bytes\": 1000000, \"kind\": \"input\"},"
	" {\"id\": \"w0\", \"bytes\": 4000000, \"kind\": \"weight\", "
	"\"home\": \"host\"},"
	" {\"id\": \"w1\", \"bytes\": 4000000, \"kind\": \"weight\", "
	"\"home\": \"nvme\"},"
	" {\"id\": \"a\", \"bytes\": 2000000, \"kind\": \"activation\"},"
	" {\"id\": \"b\", \"bytes\": 2000000, \"kind\": \"output\"}],"
	" \"ops\": [{\"id\": \"op0\", \"inputs\": [\"x\", \"w0\"], "
	"\"outputs\": [\"a\"], \"time_s\": 0.004},"
	" {\"id\": \"op1\", \"inputs\": [\"a\", \"w1\"], \"outputs\": [\"b\"], "
	"\"time_s\": 0.004}]}";

static hoff_graph *graph(void)
{
	static hoff_graph *g;
	hoff_err e;
	if (!g && hoff_graph_parse(GRAPH, strlen(GRAPH), "g.json", &g, &e) !=
			  HOFF_OK) {
		fprintf(stderr, "fixed graph: %s\n", e.msg);
		abort();
	}
	return g;
}

static char *print(const hoff_sched *s, const hoff_graph *g, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	if (!f)
		abort();
	hoff_sched_print(s, g, f);
	if (fclose(f) != 0)
		abort();
	return buf;
}

static bool str_same(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* FORMAT.md: a written time x stands for p ps when |x - p/1e12| <=
 * 1e-9 * max(1, makespan_s); beyond 2^53 ps doubles cannot do better.
 * A summary read from a file need not be consistent, so the scale is the
 * largest of its times. */
static bool ps_close(int64_t a, int64_t b, int64_t scale)
{
	double tol = 1e3 * (scale > 1000000000000LL ? hoff_s(scale) : 1);
	return fabs((double)a - (double)b) <= tol;
}

static bool same(const hoff_sched *s, const hoff_sched *t, const hoff_graph *g)
{
	if (!hoff_sched_same_steps(s, t) ||
	    !str_same(s->graph ? s->graph : g->name, t->graph) ||
	    !str_same(s->policy, t->policy) ||
	    s->budget_bytes != t->budget_bytes ||
	    s->has_summary != t->has_summary)
		return false;
	const hoff_summary *a = &s->summary, *b = &t->summary;
	int64_t m = a->makespan_ps;
	m = a->compute_ps > m ? a->compute_ps : m;
	m = a->stall_ps > m ? a->stall_ps : m;
	return !s->has_summary ||
	       (a->peak_bytes == b->peak_bytes &&
		a->h2d_bytes == b->h2d_bytes && a->d2h_bytes == b->d2h_bytes &&
		ps_close(a->makespan_ps, b->makespan_ps, m) &&
		ps_close(a->compute_ps, b->compute_ps, m) &&
		ps_close(a->stall_ps, b->stall_ps, m));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const hoff_graph *g = graph();
	char *text = fuzz_copy(data, size);
	hoff_sched *s = NULL, *t = NULL;
	hoff_err e;
	if (!text)
		return 0;
	hoff_status st = hoff_sched_parse(text, size, "fuzz.json", g, &s, &e);
	free(text);
	if (st != HOFF_OK) {
		fuzz_check_rejection(st, s != NULL, &e);
		return 0;
	}
	size_t n1;
	char *t1 = print(s, g, &n1);
	if (hoff_sched_parse(t1, n1, "rt.json", g, &t, &e) != HOFF_OK) {
		fprintf(stderr, "written schedule rejected: %s\n%s\n", e.msg,
			t1);
		abort();
	}
	if (!same(s, t, g)) {
		fprintf(stderr, "round trip differs:\n%s\n", t1);
		abort();
	}
	free(t1);
	hoff_sched_free(t);
	hoff_sched_free(s);
	return 0;
}
