/* test_conformance.c: every vector of ../shared/conformance (FORMAT v1)
 * and ../shared/conformance/v2 (repeat graphs, recompute and drop steps,
 * duplex factors), judged by an independent implementation of FORMAT.md,
 * must come out the same here: validity, the broken rules, the summary to
 * the byte and picosecond (recompute_s too), overhead and lower_bound_s. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "analysis.h"
#include "testutil.h"

/* Exact ps of a written time: FORMAT.md writes ps / 1e12. */
static int64_t ps_of(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	assert_non_null(v);
	return (int64_t)llround(v->valuedouble * 1e12);
}

static int64_t int_of(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	assert_non_null(v);
	return (int64_t)v->valuedouble;
}

static int check_vector(const char *name, const cJSON *v, void *arg)
{
	(void)arg;
	char *gtext = cJSON_PrintUnformatted(cJSON_GetObjectItem(v, "graph"));
	char *stext =
		cJSON_PrintUnformatted(cJSON_GetObjectItem(v, "schedule"));
	const cJSON *ex = cJSON_GetObjectItem(v, "expect");
	hoff_graph *g = tu_graph(gtext);
	hoff_sched *s = tu_sched(g, stext);
	hoff_sim_result r = tu_sim(g, s, HOFF_NONE);
	hoff_analysis a;
	hoff_err e;
	assert_int_equal(hoff_analyze(g, &a, &e), HOFF_OK);
	int bad = 0;
	bool valid = cJSON_IsTrue(cJSON_GetObjectItem(ex, "valid"));
	if (valid != r.valid) {
		print_error("%s: valid expected %d got %d\n", name, valid,
			    r.valid);
		bad = 1;
	}
	/* Every rule we report must be one the reference names, and the
	 * reference's set must be covered exactly. */
	int want[16] = {0}, got[16] = {0};
	const cJSON *rule;
	cJSON_ArrayForEach(rule, cJSON_GetObjectItem(ex, "rules"))
		want[rule->valueint & 15] = 1;
	for (int64_t i = 0; i < r.nviol && i < HOFF_SIM_MAXVIOL; i++)
		got[r.viol[i].rule & 15] = 1;
	for (int i = 0; i < 16; i++)
		if (got[i] && !want[i]) {
			char line[512];
			for (int64_t j = 0; j < r.nviol; j++) {
				hoff_violation_format(g, s, &r.viol[j], line,
						      sizeof line);
				print_error("  %s\n", line);
			}
			print_error("%s: rule %d reported, not expected\n",
				    name, i);
			bad = 1;
		}
	if (r.nviol && !want[r.viol[0].rule & 15])
		bad = 1;
	const cJSON *sum = cJSON_GetObjectItem(ex, "summary");
	if (valid && sum) {
		struct {
			const char *key;
			int64_t got, want;
		} f[] = {
			{"peak_bytes", r.summary.peak_bytes,
			 int_of(sum, "peak_bytes")},
			{"h2d_bytes", r.summary.h2d_bytes,
			 int_of(sum, "h2d_bytes")},
			{"d2h_bytes", r.summary.d2h_bytes,
			 int_of(sum, "d2h_bytes")},
			{"makespan_s", r.summary.makespan_ps,
			 ps_of(sum, "makespan_s")},
			{"compute_s", r.summary.compute_ps,
			 ps_of(sum, "compute_s")},
			{"stall_s", r.summary.stall_ps, ps_of(sum, "stall_s")},
			{"recompute_s", r.summary.recompute_ps,
			 cJSON_GetObjectItem(sum, "recompute_s")
				 ? ps_of(sum, "recompute_s")
				 : 0},
		};
		for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
			if (f[i].got != f[i].want) {
				print_error("%s: %s expected %lld got %lld\n",
					    name, f[i].key,
					    (long long)f[i].want,
					    (long long)f[i].got);
				bad = 1;
			}
	}
	const cJSON *lb = cJSON_GetObjectItem(ex, "lower_bound_s");
	if (lb && ps_of(ex, "lower_bound_s") != a.lower_bound_ps) {
		print_error("%s: lower_bound_s expected %.17g got %.17g\n",
			    name, lb->valuedouble, hoff_s(a.lower_bound_ps));
		bad = 1;
	}
	const cJSON *ov = cJSON_GetObjectItem(ex, "overhead");
	if (valid && ov && cJSON_IsNumber(ov) && r.summary.compute_ps) {
		double o = (double)r.summary.makespan_ps /
				   (double)r.summary.compute_ps -
			   1.0;
		if (fabs(o - ov->valuedouble) > 1e-12 * fmax(1, fabs(o))) {
			print_error("%s: overhead expected %.17g got %.17g\n",
				    name, ov->valuedouble, o);
			bad = 1;
		}
	}
	hoff_sim_result_free(&r);
	hoff_sched_free(s);
	hoff_graph_free(g);
	cJSON_free(gtext);
	cJSON_free(stext);
	return bad;
}

static void test_all_vectors(void **state)
{
	(void)state;
	int n = 0;
	int failed = tu_vectors(".json", check_vector, NULL, &n);
	print_message("%d conformance vectors, %d differ\n", n, failed);
	assert_true(n >= 1);
	assert_int_equal(failed, 0);
}

static void test_all_v2_vectors(void **state)
{
	(void)state;
	int n = 0;
	int failed = tu_vectors_in("conformance/v2", ".json", check_vector,
				   NULL, &n);
	print_message("%d v2 conformance vectors, %d differ\n", n, failed);
	assert_true(n >= 1);
	assert_int_equal(failed, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_vectors),
		cmocka_unit_test(test_all_v2_vectors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
