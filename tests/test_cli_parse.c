/* test_cli_parse.c: the table-driven option parser every command uses
 * (src/cli/cli.c hoff_cli_parse) and its number parsers: each kind of
 * row stores what it should, operands fill in order, and every wrong
 * use (unknown option, missing value, a value out of range or not in
 * the list, one operand too many) is exit code 2 with nothing stored
 * past it; and the verbs' help through `hoffopt help VERB`. */
#define _POSIX_C_SOURCE 200809L /* popen, dup */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "testutil.h"

typedef struct topts {
	const char *pos[2];
	int npos;
	bool help, json, quiet;
	const char *out, *policy, *backend;
	int64_t top;
	double scale;
} topts;

static const hoff_opt table[] = {
	HOFF_HELP(topts, help),
	HOFF_FLAG("--json", topts, json),
	HOFF_FLAG("--quiet", topts, quiet),
	HOFF_UNFLAG("--progress", topts, quiet),
	HOFF_STR("-o", topts, out),
	HOFF_CONST("--greedy", topts, policy, "greedy"),
	HOFF_STR("--policy", topts, policy),
	HOFF_CHOICE("--backend", topts, backend, "cpu|cuda",
		    "--backend: '%s' is not cpu or cuda"),
	HOFF_INT("--top", topts, top, 0, 100, "--top: '%s' is not 0 .. 100"),
	HOFF_REAL("--scale", topts, scale, "--scale: '%s' is not > 0"),
};

/* Parses the words of line (space-separated, at most 15) from argv[1]
 * into *o; returns hoff_cli_parse's code. stderr goes to /dev/null. */
static int parse(const char *line, topts *o)
{
	static char buf[256];
	char *argv[16] = {"hoffopt"};
	int argc = 1;
	snprintf(buf, sizeof buf, "%s", line);
	for (char *t = strtok(buf, " "); t && argc < 16; t = strtok(NULL, " "))
		argv[argc++] = t;
	memset(o, 0, sizeof *o);
	o->top = -7;
	o->scale = -7;
	fflush(stderr);
	int saved = dup(2), null = open("/dev/null", O_WRONLY);
	assert_true(saved >= 0 && null >= 0);
	dup2(null, 2);
	close(null);
	int rc = hoff_cli_parse(argc, argv, 1, table, HOFF_NOPTS(table), o,
				o->pos, 2, &o->npos);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	return rc;
}

static void test_kinds(void **state)
{
	(void)state;
	topts o;
	assert_int_equal(parse("g.json --json -o s.json --top 12 --scale 0.5 "
			       "--backend cuda s2.json",
			       &o),
			 0);
	assert_true(o.json);
	assert_false(o.help);
	assert_string_equal(o.out, "s.json");
	assert_int_equal(o.top, 12);
	assert_true(o.scale == 0.5);
	assert_string_equal(o.backend, "cuda");
	assert_int_equal(o.npos, 2);
	assert_string_equal(o.pos[0], "g.json");
	assert_string_equal(o.pos[1], "s2.json");
	/* a constant, then a value over it: the last one wins */
	assert_int_equal(parse("--greedy --policy lookahead:2", &o), 0);
	assert_string_equal(o.policy, "lookahead:2");
	assert_int_equal(parse("--policy none --greedy", &o), 0);
	assert_string_equal(o.policy, "greedy");
	/* a flag and its undoing, in order */
	assert_int_equal(parse("--quiet --progress", &o), 0);
	assert_false(o.quiet);
	assert_int_equal(parse("--progress --quiet -h", &o), 0);
	assert_true(o.quiet);
	assert_true(o.help);
	/* '-' is an operand (stdin), not an option */
	assert_int_equal(parse("-", &o), 0);
	assert_int_equal(o.npos, 1);
	assert_string_equal(o.pos[0], "-");
	/* the range's ends are in it */
	assert_int_equal(parse("--top 0", &o), 0);
	assert_int_equal(o.top, 0);
	assert_int_equal(parse("--top 100", &o), 0);
	assert_int_equal(o.top, 100);
	/* nothing given: the caller's defaults stay */
	assert_int_equal(parse("", &o), 0);
	assert_int_equal(o.top, -7);
	assert_null(o.out);
}

static void test_wrong_uses(void **state)
{
	(void)state;
	topts o;
	assert_int_equal(parse("--bogus", &o), HOFF_EXIT_BAD);
	assert_int_equal(parse("g.json -o", &o), HOFF_EXIT_BAD);
	assert_int_equal(parse("--top 101", &o), HOFF_EXIT_BAD);
	assert_int_equal(o.top, -7);
	assert_int_equal(parse("--top -1", &o), HOFF_EXIT_BAD);
	assert_int_equal(parse("--top 1x", &o), HOFF_EXIT_BAD);
	assert_int_equal(parse("--top 99999999999999999999", &o),
			 HOFF_EXIT_BAD);
	assert_int_equal(parse("--scale 0", &o), HOFF_EXIT_BAD);
	assert_int_equal(parse("--scale nan", &o), HOFF_EXIT_BAD);
	assert_int_equal(parse("--scale inf", &o), HOFF_EXIT_BAD);
	assert_int_equal(parse("--backend tpu", &o), HOFF_EXIT_BAD);
	assert_null(o.backend);
	assert_int_equal(parse("--backend cu", &o), HOFF_EXIT_BAD);
	assert_int_equal(parse("--backend cpu|cuda", &o), HOFF_EXIT_BAD);
	assert_int_equal(parse("a b c", &o), HOFF_EXIT_BAD);
	assert_int_equal(o.npos, 2);
	/* parsing stops at the first wrong word: later ones are not stored */
	assert_int_equal(parse("--bogus --json", &o), HOFF_EXIT_BAD);
	assert_false(o.json);
}

static void test_numbers(void **state)
{
	(void)state;
	int64_t v = -1;
	assert_true(hoff_cli_int("42", 0, 100, &v));
	assert_int_equal(v, 42);
	assert_true(hoff_cli_int("-3", -5, 5, &v));
	assert_int_equal(v, -3);
	assert_false(hoff_cli_int("", 0, 100, &v));
	assert_false(hoff_cli_int("4 2", 0, 100, &v));
	assert_false(hoff_cli_int("0x10", 0, 100, &v));
	assert_int_equal(v, -3);
	assert_true(hoff_cli_int("9223372036854775807", 0, INT64_MAX, &v));
	assert_int_equal(v, INT64_MAX);
	assert_false(hoff_cli_int("9223372036854775808", 0, INT64_MAX, &v));
	double d = -1;
	assert_true(hoff_cli_real("1e-3", &d));
	assert_true(d == 1e-3);
	assert_false(hoff_cli_real("-1", &d));
	assert_false(hoff_cli_real("1s", &d));
	assert_true(d == 1e-3);
}

/* `hoffopt help VERB` prints the verb's own usage, exit 0. */
static void test_help_verbs(void **state)
{
	(void)state;
	const char *bin = getenv("HOFF_BIN_DIR");
	if (!bin)
		skip();
	static const struct {
		const char *verb, *first;
	} cases[] = {
		{"analyze", "usage: hoffopt analyze GRAPH"},
		{"simulate", "usage: hoffopt simulate GRAPH SCHEDULE"},
		{"greedy", "usage: hoffopt --greedy GRAPH"},
		{"--exact", "usage: hoffopt --exact GRAPH"},
		{"compare", "usage: hoffopt compare GRAPH"},
		{"gen", "usage: hoffopt gen MODEL"},
		{"run", "usage: hoffopt run GRAPH SCHEDULE"},
		{"nothing", "usage: hoffopt <command> [options]"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char cmd[1024], line[256] = "";
		snprintf(cmd, sizeof cmd, "%s/hoffopt help %s", bin,
			 cases[i].verb);
		FILE *p = popen(cmd, "r");
		assert_non_null(p);
		assert_non_null(fgets(line, sizeof line, p));
		while (fgetc(p) != EOF)
			;
		assert_int_equal(pclose(p), 0);
		assert_memory_equal(line, cases[i].first,
				    strlen(cases[i].first));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_wrong_uses),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_help_verbs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
