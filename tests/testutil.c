/* testutil.c: see testutil.h. */
#include "testutil.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "graph_json.h"
#include "sched_json.h"

/* FORMAT.md's example, verbatim. */
const char tu_example_graph[] =
	"{\n"
	"  \"format\": \"hoffopt.graph\", \"version\": 1,\n"
	"  \"name\": \"tiny\",\n"
	"  \"meta\": { \"source\": \"free-form, kept on round trip, never interpreted\" },\n"
	"  \"machine\": {\n"
	"    \"device\": { \"name\": \"H100-SXM\", \"memory_bytes\": 100000000,\n"
	"                \"flops_per_s\": 7.0e14, \"mem_bandwidth_Bps\": 3.0e12,\n"
	"                \"op_overhead_s\": 0 },\n"
	"    \"tiers\": [\n"
	"      { \"name\": \"host\", \"capacity_bytes\": 1000000000000,\n"
	"        \"h2d_Bps\": 1.0e9, \"d2h_Bps\": 1.0e9, \"latency_s\": 0 }\n"
	"    ]\n"
	"  },\n"
	"  \"tensors\": [\n"
	"    { \"id\": \"x\",  \"bytes\": 1000000, \"kind\": \"input\" },\n"
	"    { \"id\": \"w0\", \"bytes\": 4000000, \"kind\": \"weight\", \"home\": \"host\" },\n"
	"    { \"id\": \"w1\", \"bytes\": 4000000, \"kind\": \"weight\", \"home\": \"host\" },\n"
	"    { \"id\": \"a\",  \"bytes\": 2000000, \"kind\": \"activation\" },\n"
	"    { \"id\": \"b\",  \"bytes\": 2000000, \"kind\": \"output\" }\n"
	"  ],\n"
	"  \"ops\": [\n"
	"    { \"id\": \"op0\", \"kind\": \"matmul\", \"inputs\": [\"x\", \"w0\"], \"outputs\": [\"a\"],\n"
	"      \"time_s\": 0.004, \"layer\": 0 },\n"
	"    { \"id\": \"op1\", \"kind\": \"matmul\", \"inputs\": [\"a\", \"w1\"], \"outputs\": [\"b\"],\n"
	"      \"time_s\": 0.004, \"layer\": 1 }\n"
	"  ]\n"
	"}\n";

char *tu_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap + 1);
	size_t got;
	while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			char *b = realloc(buf, 2 * cap + 1);
			if (!b) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = b;
			cap *= 2;
		}
	}
	fclose(f);
	if (buf)
		buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

void tu_ok(hoff_status st, const hoff_err *e, const char *what)
{
	if (st != HOFF_OK)
		print_error("%s%s%s\n", what ? what : "", what ? ": " : "",
			    e->msg);
	assert_int_equal(st, HOFF_OK);
}

hoff_graph *tu_graph(const char *json)
{
	hoff_graph *g = NULL;
	hoff_err e = {{0}};
	hoff_status st = hoff_graph_parse(json, strlen(json), "test.json", &g, &e);
	tu_ok(st, &e, "graph");
	assert_non_null(g);
	return g;
}

hoff_sched *tu_sched(const hoff_graph *g, const char *json)
{
	hoff_sched *s = NULL;
	hoff_err e = {{0}};
	hoff_status st =
		hoff_sched_parse(json, strlen(json), "sched.json", g, &s, &e);
	tu_ok(st, &e, "schedule");
	return s;
}

hoff_sim_result tu_sim(const hoff_graph *g, const hoff_sched *s,
		       int64_t budget)
{
	hoff_sim_result r;
	hoff_sim_opts o = hoff_sim_defaults();
	o.budget_bytes = budget;
	hoff_err e = {{0}};
	hoff_status st = hoff_sim_run(g, s, &o, &r, &e);
	tu_ok(st, &e, "sim");
	return r;
}

hoff_sim_result tu_sim_expect(const hoff_graph *g, const hoff_sched *s,
			      int64_t peak_bytes, int64_t makespan_ps)
{
	hoff_sim_result r = tu_sim(g, s, HOFF_NONE);
	assert_true(r.valid);
	assert_int_equal(r.summary.peak_bytes, peak_bytes);
	assert_int_equal(r.summary.makespan_ps, makespan_ps);
	return r;
}

const char *tu_shared_dir(void)
{
	return getenv("HOFF_SHARED_DIR");
}

const char *tu_src_dir(void)
{
	return getenv("HOFF_SRC_DIR");
}

int tu_has_rule(const hoff_sim_result *r, int rule)
{
	int64_t n = r->nviol < HOFF_SIM_MAXVIOL ? r->nviol : HOFF_SIM_MAXVIOL;
	for (int64_t i = 0; i < n; i++)
		if (r->viol[i].rule == rule)
			return 1;
	return 0;
}

hoff_graph *tu_data_graph(const char *name)
{
	const char *src = tu_src_dir();
	if (!src)
		return NULL;
	char path[1024];
	snprintf(path, sizeof path, "%s/data/%s", src, name);
	char *text = tu_slurp(path, NULL);
	if (!text)
		return NULL;
	hoff_graph *g = tu_graph(text);
	free(text);
	return g;
}

hoff_graph *tu_data_graph_or_skip(const char *name)
{
	hoff_graph *g = tu_data_graph(name);
	if (!g)
		skip();
	return g;
}

hoff_graph *tu_data_v1_graph_or_skip(const char *name)
{
	const char *dir = getenv("HOFF_DATA_V1_DIR");
	if (!dir)
		skip();
	char path[1024];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	char *text = tu_slurp(path, NULL);
	if (!text)
		skip();
	hoff_graph *g = tu_graph(text);
	free(text);
	assert_int_equal(g->version, 1);
	return g;
}

int64_t tu_noffload_peak(const hoff_graph *g)
{
	hoff_sched *s = hoff_sched_noffload(g);
	assert_non_null(s);
	hoff_sim_result r = tu_sim(g, s, INT64_MAX);
	int64_t p = r.summary.peak_bytes;
	hoff_sim_result_free(&r);
	hoff_sched_free(s);
	return p;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int tu_vectors(const char *suffix, tu_vector_fn fn, void *arg, int *n)
{
	return tu_vectors_in("conformance", suffix, fn, arg, n);
}

int tu_vectors_in(const char *sub, const char *suffix, tu_vector_fn fn,
		  void *arg, int *n)
{
	const char *shared = tu_shared_dir();
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/%s", shared ? shared : ".", sub);
	DIR *d = shared ? opendir(dir) : NULL;
	if (!d)
		skip();
	char **names = NULL;
	size_t count = 0, cap = 0, sl = strlen(suffix);
	struct dirent *de;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		if (len <= sl || strcmp(de->d_name + len - sl, suffix) != 0)
			continue;
		if (count == cap) {
			cap = cap ? 2 * cap : 256;
			names = realloc(names, cap * sizeof *names);
			assert_non_null(names);
		}
		names[count] = hoff_strdup(de->d_name);
		assert_non_null(names[count]);
		count++;
	}
	closedir(d);
	if (count)
		qsort(names, count, sizeof *names, by_name);
	int sum = 0;
	for (size_t i = 0; i < count; i++) {
		char path[8192];
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		char *text = tu_slurp(path, NULL);
		assert_non_null(text);
		cJSON *v = cJSON_Parse(text);
		if (!v)
			print_error("%s: not JSON\n", path);
		assert_non_null(v);
		sum += fn(names[i], v, arg);
		cJSON_Delete(v);
		free(text);
		free(names[i]);
	}
	free(names);
	assert_true(count > 0);
	if (n)
		*n = (int)count;
	return sum;
}
