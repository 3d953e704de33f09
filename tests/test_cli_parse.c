/* test_cli_parse.c: the table-driven option parser every command uses
 * (src/cli/cli.c hoff_cli_parse) and its number parsers: each kind of
 * row stores what it should, operands fill in order, and every wrong
 * use (unknown option, missing value, a value out of range or not in
 * the list, one operand too many) is exit code 2 with nothing stored
 * past it; hoff_cli_command, the common options and the order of its
 * checks; and the verbs' help through `hoffopt help VERB`. */
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

/* Splits line (space-separated words, at most 15) into argv after
 * argv[0] "hoffopt"; returns argc. The words last until the next call. */
static int split(const char *line, char *argv[16])
{
	static char buf[256];
	int argc = 1;
	argv[0] = "hoffopt";
	snprintf(buf, sizeof buf, "%s", line);
	for (char *t = strtok(buf, " "); t && argc < 16; t = strtok(NULL, " "))
		argv[argc++] = t;
	return argc;
}

/* Points fd at the open file to; returns a copy of the old fd for
 * put_back. */
static int divert(int fd, int to)
{
	fflush(stdout);
	fflush(stderr);
	int saved = dup(fd);
	assert_true(saved >= 0 && to >= 0);
	dup2(to, fd);
	return saved;
}

/* Points fd back where divert found it. */
static void put_back(int fd, int saved)
{
	fflush(stdout);
	fflush(stderr);
	dup2(saved, fd);
	close(saved);
}

/* Parses the words of line from argv[1] into *o; returns
 * hoff_cli_parse's code. stderr goes to /dev/null. */
static int parse(const char *line, topts *o)
{
	char *argv[16];
	int argc = split(line, argv);
	memset(o, 0, sizeof *o);
	o->top = -7;
	o->scale = -7;
	int null = open("/dev/null", O_WRONLY);
	int saved = divert(2, null);
	close(null);
	int rc = hoff_cli_parse(argc, argv, 1, table, HOFF_NOPTS(table), o,
				o->pos, 2, &o->npos);
	put_back(2, saved);
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

/* Issue 34 (10): spaces around a number are taken on both sides alike;
 * hex, inf and nan are not numbers; integers are read exactly. */
static void test_number_forms(void **state)
{
	(void)state;
	int64_t v = -1;
	assert_true(hoff_cli_int(" 42", 0, 100, &v));
	assert_int_equal(v, 42);
	assert_true(hoff_cli_int("42 ", 0, 100, &v));
	assert_int_equal(v, 42);
	assert_true(hoff_cli_int("9007199254740993", 0, INT64_MAX, &v));
	assert_int_equal(v, 9007199254740993LL); /* 2^53 + 1, not 2^53 */
	assert_false(hoff_cli_int("1e3", 0, 10000, &v));
	assert_false(hoff_cli_int("1.0", 0, 10000, &v));
	assert_false(hoff_cli_int("0x1000", 0, 1 << 20, &v));
	assert_false(hoff_cli_int("-", 0, 1 << 20, &v));
	double d = -1;
	assert_true(hoff_cli_real(" 0.5 ", &d));
	assert_true(d == 0.5);
	assert_false(hoff_cli_real("0x1p-3", &d));
	assert_false(hoff_cli_real("0x10", &d));
	assert_false(hoff_cli_real("infinity", &d));
	assert_false(hoff_cli_real("1e400", &d));
	assert_false(hoff_cli_real("1e", &d));
	assert_false(hoff_cli_real(".", &d));
	assert_true(d == 0.5);
}

/* Issue 34 (9): --name=value is --name value, for every kind of row; a
 * flag given a value, an unknown --name=value and a bad one are exit 2. */
static void test_equals_form(void **state)
{
	(void)state;
	topts o;
	assert_int_equal(parse("--top=12 -o s.json --scale=0.25 "
			       "--backend=cuda --policy=none g.json",
			       &o),
			 0);
	assert_int_equal(o.top, 12);
	assert_true(o.scale == 0.25);
	assert_string_equal(o.backend, "cuda");
	assert_string_equal(o.policy, "none");
	assert_string_equal(o.out, "s.json");
	assert_int_equal(o.npos, 1);
	/* the value may itself hold '=' */
	assert_int_equal(parse("--policy=a=b", &o), 0);
	assert_string_equal(o.policy, "a=b");
	assert_int_equal(parse("--top=", &o), HOFF_EXIT_BAD);
	assert_int_equal(parse("--top=101", &o), HOFF_EXIT_BAD);
	assert_int_equal(parse("--json=yes", &o), HOFF_EXIT_BAD);
	assert_false(o.json);
	assert_int_equal(parse("--greedy=1", &o), HOFF_EXIT_BAD);
	assert_int_equal(parse("--bogus=1", &o), HOFF_EXIT_BAD);
	assert_int_equal(parse("--backend=tpu", &o), HOFF_EXIT_BAD);
	/* only long options: -o=x is -o's value "=x"? no: an unknown word */
	assert_int_equal(parse("-o=s.json", &o), HOFF_EXIT_BAD);
	/* an operand holding '=' is an operand */
	assert_int_equal(parse("a=b.json", &o), 0);
	assert_string_equal(o.pos[0], "a=b.json");
}

/* Issue 34's table-driven check of --budget and --max-overhead: 100+
 * strings, each with the value worked out by hand (-1: refused, -2: too
 * large). Budgets take a % of a peak of 1000 B, or of 2^62 B. */
static void test_budget_table(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		int64_t peak, want;
	} b[] = {
		{"0", 0, 0},
		{"1", 0, 1},
		{" 1", 0, 1},
		{"1 ", 0, 1},
		{"  1  ", 0, 1},
		{"+1", 0, 1},
		{"-0", 0, 0},
		{"-1", 0, -1},
		{"1B", 0, 1},
		{"1 B", 0, 1},
		{"1 B ", 0, 1},
		{"1  B", 0, 1},
		{"1b", 0, -1},
		{"B", 0, -1},
		{"", 0, -1},
		{" ", 0, -1},
		{"1.", 0, 1},
		{".5", 0, -1},
		{"1.5", 0, -1},
		{"1.0", 0, 1},
		{"10.00", 0, 10},
		{"1e3", 0, 1000},
		{"1E3", 0, 1000},
		{"1e+3", 0, 1000},
		{"1e-1", 0, -1},
		{"10e-1", 0, 1},
		{"1e", 0, -1},
		{"e3", 0, -1},
		{"0x1000", 0, -1},
		{"0X10", 0, -1},
		{"0x1p-3", 0, -1},
		{"0x1p3GiB", 0, -1},
		{"inf", 0, -1},
		{"nan", 0, -1},
		{"infinity", 0, -1},
		{"1,000", 0, -1},
		{"1_000", 0, -1},
		{"1..2", 0, -1},
		{"1.2.3", 0, -1},
		{"--1", 0, -1},
		{"9007199254740993", 0, 9007199254740993LL},
		{"9007199254740993B", 0, 9007199254740993LL},
		{"9223372036854775807", 0, INT64_MAX},
		{"9223372036854775807 B", 0, INT64_MAX},
		{"9223372036854775808", 0, -2},
		{"18446744073709551616", 0, -2},
		{"99999999999999999999999999", 0, -2},
		{"1e19", 0, -2},
		{"1e18", 0, 1000000000000000000LL},
		{"9.223372036854775807e18", 0, INT64_MAX},
		{"9.223372036854775808e18", 0, -2},
		{"1e100000000", 0, -2},
		{"0e100000000", 0, 0},
		{"1e-100000000", 0, -1},
		{"00000000000000000000000001", 0, 1},
		{"1.00000000000000000000000", 0, 1},
		{"1.00000000000000000000001", 0, -1},
		{"1KiB", 0, 1024},
		{"1 KiB", 0, 1024},
		{"1kib", 0, -1},
		{"1KIB", 0, -1},
		{"1K", 0, -1},
		{"1.5KiB", 0, 1536},
		{"0.3KiB", 0, 307},
		{"1MiB", 0, 1048576},
		{"1.5MiB", 0, 1572864},
		{"1GiB", 0, 1073741824},
		{"40GiB", 0, 42949672960LL},
		{"40 GiB", 0, 42949672960LL},
		{"0.5GiB", 0, 536870912},
		{"1TiB", 0, 1099511627776LL},
		{"8388607TiB", 0, 9223370937343148032LL},
		{"8388608TiB", 0, -2},
		{"1KB", 0, 1000},
		{"1.5KB", 0, 1500},
		{"1.0005KB", 0, 1000},
		{"3MB", 0, 3000000},
		{"40GB", 0, 40000000000LL},
		{"80GB", 0, 80000000000LL},
		{"1TB", 0, 1000000000000LL},
		{"9223372TB", 0, 9223372000000000000LL},
		{"9223373TB", 0, -2},
		{"1GiBx", 0, -1},
		{"1 GiB x", 0, -1},
		{"1GiB1", 0, -1},
		{"GiB", 0, -1},
		{"1PB", 0, -1},
		{"1 %", 1000, 10},
		{"75%", 1000, 750},
		{" 50%", 1000, 500},
		{"50% ", 1000, 500},
		{"50 % ", 1000, 500},
		{"33.3%", 1000, 333},
		{"33.33%", 1000, 333},
		{"0.1%", 1000, 1},
		{"0.09%", 1000, 0},
		{"0%", 1000, 0},
		{"100%", 1000, 1000},
		{"150%", 1000, 1500},
		{"1e2%", 1000, 1000},
		{"%", 1000, -1},
		{"50%%", 1000, -1},
		{"50%B", 1000, -1},
		{"-50%", 1000, -1},
		{"0x32%", 1000, -1},
		{"100%", (int64_t)1 << 62, (int64_t)1 << 62},
		{"200%", (int64_t)1 << 62, -2},
		{"199.9999999999999999%", (int64_t)1 << 62, INT64_MAX - 4},
		{"50%", 3, 1},
		{"33.33333333333333333%", 3, 0},
		{"33.33333333333333334%", 3, 1},
	};
	for (size_t i = 0; i < sizeof b / sizeof *b; i++) {
		int64_t got = hoff_cli_budget_bytes(b[i].s, b[i].peak);
		if (got != b[i].want)
			fail_msg("--budget '%s' (peak %lld): %lld, want %lld",
				 b[i].s, (long long)b[i].peak, (long long)got,
				 (long long)b[i].want);
	}
	static const struct {
		const char *s;
		double want;
	} f[] = {
		{"0", 0},	 {"0.01", 0.01}, {" 0.01", 0.01},
		{"0.01 ", 0.01}, {"1%", 0.01},	 {"1% ", 0.01},
		{" 1%", 0.01},	 {"250%", 2.5},	 {"1e-2", 0.01},
		{"1e9", 1e9},	 {"-0.1", -1},	 {"1%%", -1},
		{"1 %", -1},	 {"x", -1},	 {"", -1},
		{"nan", -1},	 {"inf", -1},	 {"0x1p-3", -1},
		{"0x10", -1},	 {"1e999", -1},	 {"%", -1},
		{"1%x", -1},
	};
	for (size_t i = 0; i < sizeof f / sizeof *f; i++) {
		double got = hoff_cli_frac(f[i].s);
		if (got != f[i].want)
			fail_msg("--max-overhead '%s': %g, want %g", f[i].s,
				 got, f[i].want);
	}
	assert_true(sizeof b / sizeof *b + sizeof f / sizeof *f >= 100);
}

/* A command for hoff_cli_command: the common fields, one of its own. */
typedef struct copts {
	HOFF_CLI_ARGS;
	int64_t top;
} copts;

static const hoff_opt ctable[] = {
	HOFF_INT("--top", copts, top, 0, 100, "--top: '%s' is not 0 .. 100"),
};

static int finished; /* finish_top's calls */

/* Refuses --top 13, even beside --help (run's checks come first too). */
static int finish_top(void *opts)
{
	finished++;
	return ((const copts *)opts)->top == 13
		       ? hoff_cli_bad("%s", "--top 13 is unlucky")
		       : 0;
}

static const hoff_cli_spec cspec = {
	.from = 2,
	.npos = 2,
	.common = HOFF_CLI_JSON | HOFF_CLI_OUT,
	.table = ctable,
	.nopts = HOFF_NOPTS(ctable),
	.usage = "usage: cmd A B\n",
	.usage_more = "more\n",
	.missing = "cmd needs A and B",
	.finish = finish_top,
};

static char out_text[512], err_text[512];

/* The text of f, which it closes, into buf (n bytes). */
static void slurp(FILE *f, char *buf, size_t n)
{
	rewind(f);
	size_t got = fread(buf, 1, n - 1, f);
	buf[got] = '\0';
	fclose(f);
}

/* hoff_cli_command on "hoffopt cmd " line by sp into *o (top -7 first),
 * what it prints into out_text and err_text; returns whether the
 * command stops there, with *rc. */
static bool command(const char *line, const hoff_cli_spec *sp, copts *o,
		    int *rc)
{
	char words[256], *argv[16];
	snprintf(words, sizeof words, "cmd %s", line);
	int argc = split(words, argv);
	memset(o, 0, sizeof *o);
	o->top = -7;
	FILE *out = tmpfile(), *err = tmpfile();
	assert_true(out && err);
	int so = divert(1, fileno(out)), se = divert(2, fileno(err));
	bool stop = hoff_cli_command(argc, argv, sp, o, rc);
	put_back(1, so);
	put_back(2, se);
	slurp(out, out_text, sizeof out_text);
	slurp(err, err_text, sizeof err_text);
	return stop;
}

/* hoff_cli_command: the common options a command's spec names and no
 * others, its own table, the operand count, --help with the usage's
 * rest, and the order of the checks (a wrong word, then finish, then
 * --help, then the operands), each with its line and exit code. */
static void test_command(void **state)
{
	(void)state;
	copts o;
	int rc = -1;
	finished = 0;
	assert_false(command("--json a.json -o s.json --top=5 b.json", &cspec,
			     &o, &rc));
	assert_int_equal(rc, 0);
	assert_true(o.json);
	assert_false(o.help);
	assert_string_equal(o.out, "s.json");
	assert_null(o.budget);
	assert_null(o.trace);
	assert_int_equal(o.top, 5);
	assert_int_equal(o.npos, 2);
	assert_string_equal(o.pos[0], "a.json");
	assert_string_equal(o.pos[1], "b.json");
	assert_int_equal(finished, 1);
	assert_string_equal(out_text, "");
	assert_string_equal(err_text, "");
	/* common options the spec does not name are unknown; no finish
	 * after a wrong word */
	assert_true(command("a b --budget 1", &cspec, &o, &rc));
	assert_int_equal(rc, HOFF_EXIT_BAD);
	assert_string_equal(err_text, "hoffopt: unknown option '--budget'\n");
	assert_true(command("a b --trace=t.json", &cspec, &o, &rc));
	assert_string_equal(err_text,
			    "hoffopt: unknown option '--trace=t.json'\n");
	assert_int_equal(finished, 1);
	/* --help and -h: the usage and its rest on stdout, exit 0, with or
	 * without the operands */
	assert_true(command("-h", &cspec, &o, &rc));
	assert_int_equal(rc, 0);
	assert_string_equal(out_text, "usage: cmd A B\nmore\n");
	assert_string_equal(err_text, "");
	assert_true(command("a b --help", &cspec, &o, &rc));
	assert_int_equal(rc, 0);
	assert_string_equal(out_text, "usage: cmd A B\nmore\n");
	/* a wrong word, then finish, come before --help */
	assert_true(command("--help --top 101", &cspec, &o, &rc));
	assert_int_equal(rc, HOFF_EXIT_BAD);
	assert_string_equal(out_text, "");
	assert_string_equal(err_text,
			    "hoffopt: --top: '101' is not 0 .. 100\n");
	assert_true(command("--help --top 13", &cspec, &o, &rc));
	assert_int_equal(rc, HOFF_EXIT_BAD);
	assert_string_equal(out_text, "");
	assert_string_equal(err_text, "hoffopt: --top 13 is unlucky\n");
	/* an operand missing, one too many, a flag given a value */
	assert_true(command("a.json --top 13", &cspec, &o, &rc));
	assert_string_equal(err_text, "hoffopt: --top 13 is unlucky\n");
	assert_true(command("a.json", &cspec, &o, &rc));
	assert_int_equal(rc, HOFF_EXIT_BAD);
	assert_string_equal(err_text, "hoffopt: cmd needs A and B\n");
	assert_true(command("a b c", &cspec, &o, &rc));
	assert_string_equal(err_text, "hoffopt: unexpected argument 'c'\n");
	assert_true(command("a b --json=1", &cspec, &o, &rc));
	assert_string_equal(err_text,
			    "hoffopt: option '--json=1' takes no value\n");
	assert_false(o.json);
	/* no `missing`: the command counts its operands itself */
	hoff_cli_spec any = cspec;
	any.missing = NULL;
	any.usage_more = NULL;
	assert_false(command("", &any, &o, &rc));
	assert_int_equal(rc, 0);
	assert_int_equal(o.npos, 0);
	assert_true(command("--help", &any, &o, &rc));
	assert_string_equal(out_text, "usage: cmd A B\n");
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
		cmocka_unit_test(test_number_forms),
		cmocka_unit_test(test_equals_form),
		cmocka_unit_test(test_budget_table),
		cmocka_unit_test(test_command),
		cmocka_unit_test(test_help_verbs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
