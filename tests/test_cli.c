/* test_cli.c: what the commands share (src/cli.c) — the budget and
 * fraction syntaxes by hand-worked values, a percentage budget against
 * the no-offload peak of FORMAT.md's example (simulated independently
 * here), a command's start (help, missing operands), the JSON summary's
 * text. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "cli.h"
#include "testutil.h"

static void test_budget_bytes(void **state)
{
	(void)state;
	assert_int_equal(hoff_cli_budget_bytes("80000000", 0), 80000000);
	assert_int_equal(hoff_cli_budget_bytes("80000000B", 0), 80000000);
	assert_int_equal(hoff_cli_budget_bytes("1KiB", 0), 1024);
	assert_int_equal(hoff_cli_budget_bytes("1.5MiB", 0), 1572864);
	assert_int_equal(hoff_cli_budget_bytes("40 GiB", 0), 42949672960LL);
	assert_int_equal(hoff_cli_budget_bytes("2TiB", 0), 2199023255552LL);
	assert_int_equal(hoff_cli_budget_bytes("1.5KB", 0), 1500);
	assert_int_equal(hoff_cli_budget_bytes("3MB", 0), 3000000);
	assert_int_equal(hoff_cli_budget_bytes("80GB", 0), 80000000000LL);
	assert_int_equal(hoff_cli_budget_bytes("1TB", 0), 1000000000000LL);
	/* a percentage of the peak given, rounded down to a byte */
	assert_int_equal(hoff_cli_budget_bytes("75%", 1000), 750);
	assert_int_equal(hoff_cli_budget_bytes("33.3%", 1000), 333);
	assert_int_equal(hoff_cli_budget_bytes("0%", 1000), 0);
	/* bytes are whole; no sign, unit or junk it does not know */
	assert_int_equal(hoff_cli_budget_bytes("1.5", 0), -1);
	assert_int_equal(hoff_cli_budget_bytes("-1", 0), -1);
	assert_int_equal(hoff_cli_budget_bytes("5XB", 0), -1);
	assert_int_equal(hoff_cli_budget_bytes("GiB", 0), -1);
	assert_int_equal(hoff_cli_budget_bytes("", 0), -1);
	assert_int_equal(hoff_cli_budget_bytes("nan", 0), -1);
	assert_int_equal(hoff_cli_budget_bytes("inf", 0), -1);
	assert_int_equal(hoff_cli_budget_bytes("1e19", 0), -1);
	assert_int_equal(hoff_cli_budget_bytes("10 %x", 1000), -1);
}

static void test_frac(void **state)
{
	(void)state;
	assert_true(hoff_cli_frac("0.01") == 0.01);
	assert_true(hoff_cli_frac("1%") == 0.01);
	assert_true(hoff_cli_frac("0") == 0);
	assert_true(hoff_cli_frac("250%") == 2.5);
	assert_true(hoff_cli_frac("-0.1") == -1);
	assert_true(hoff_cli_frac("1%%") == -1);
	assert_true(hoff_cli_frac("1 %") == -1);
	assert_true(hoff_cli_frac("x") == -1);
	assert_true(hoff_cli_frac("") == -1);
	assert_true(hoff_cli_frac("nan") == -1);
}

static void test_stop(void **state)
{
	(void)state;
	int rc = 3; /* the parse failed: its code stands */
	assert_true(hoff_cli_stop(&rc, true, "usage\n", false, "missing"));
	assert_int_equal(rc, 3);
	rc = 0; /* --help: usage, exit 0, whatever the operands */
	assert_true(hoff_cli_stop(&rc, true, "", false, "missing"));
	assert_int_equal(rc, 0);
	rc = 0; /* operands missing */
	assert_true(hoff_cli_stop(&rc, false, "", false, "test: missing"));
	assert_int_equal(rc, HOFF_EXIT_BAD);
	rc = 0; /* go on, with exit code 0 */
	assert_false(hoff_cli_stop(&rc, false, "", true, "missing"));
	assert_int_equal(rc, 0);
}

static void test_budget_of_graph(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(tu_example_graph);
	hoff_sched *s = hoff_sched_noffload(g);
	assert_non_null(s);
	hoff_sim_result r = tu_sim(g, s, INT64_MAX);
	const int64_t peak = r.summary.peak_bytes;
	assert_true(peak > 0);
	hoff_err e = {{0}};
	int64_t b = 0;
	assert_int_equal(hoff_cli_budget(g, NULL, &b, &e), HOFF_OK);
	assert_int_equal(b, HOFF_NONE);
	assert_int_equal(hoff_cli_budget(g, "50%", &b, &e), HOFF_OK);
	assert_int_equal(b, peak / 2);
	assert_int_equal(hoff_cli_budget(g, "7MiB", &b, &e), HOFF_OK);
	assert_int_equal(b, 7340032);
	assert_int_equal(hoff_cli_budget(g, "seven", &b, &e), HOFF_EUSAGE);
	assert_non_null(strstr(e.msg, "--budget: 'seven'"));
	hoff_sim_result_free(&r);
	hoff_sched_free(s);
	hoff_graph_free(g);
}

static void test_json_summary(void **state)
{
	(void)state;
	hoff_summary s = {.peak_bytes = 11000000,
			  .makespan_ps = 12000000000LL,
			  .compute_ps = 8000000000LL,
			  .stall_ps = 4000000000LL,
			  .h2d_bytes = 8000000,
			  .d2h_bytes = 5};
	FILE *f = tmpfile();
	assert_non_null(f);
	hoff_json_summary(f, &s);
	char buf[256] = {0};
	rewind(f);
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	assert_true(n > 0);
	assert_string_equal(buf, "\"peak_bytes\": 11000000, "
				 "\"makespan_s\": 0.012, "
				 "\"compute_s\": 0.0080000000000000002, "
				 "\"stall_s\": 0.0040000000000000001, "
				 "\"h2d_bytes\": 8000000, \"d2h_bytes\": 5");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_budget_bytes),
		cmocka_unit_test(test_frac),
		cmocka_unit_test(test_stop),
		cmocka_unit_test(test_budget_of_graph),
		cmocka_unit_test(test_json_summary),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
