/* test_cli.c: what the commands share (src/cli.c) — the budget and
 * fraction syntaxes by hand-worked values, a percentage budget against
 * the no-offload peak of FORMAT.md's example (simulated independently
 * here), a command's start (help, missing operands), the JSON summary's
 * text; and, running the hoffopt binary of the build (HOFF_BIN_DIR), the
 * reliability cases of issue 22: how outputs are written (never a device
 * node, FIFO or the input destroyed; symlinks followed; atomic, mode
 * kept), write errors on stdout, exit codes (a plan over the device is
 * 1, a bug 3), escaped ids and the options' messages. Most of these
 * are tables of steps (struct step: a command and the exit status it must
 * give, or a text an output must or must not hold) that run_steps runs
 * in order, naming the step that fails. */
#define _DEFAULT_SOURCE /* mknod, makedev, usleep */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analysis.h"
#include "cli.h"
#include "fileio.h"
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
	assert_int_equal(hoff_cli_budget_bytes("1e19", 0), HOFF_CLI_TOO_LARGE);
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

/* ---- the binary (issue 22) ---- */

static char dir[64];	/* this program's scratch directory */
static char hoff[1024]; /* the hoffopt binary */

static int setup_bin(void **state)
{
	(void)state;
	const char *bin = getenv("HOFF_BIN_DIR");
	if (!bin)
		return 0;
	snprintf(hoff, sizeof hoff, "%s/hoffopt", bin);
	snprintf(dir, sizeof dir, "/tmp/hoff-cli-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown_bin(void **state)
{
	(void)state;
	char cmd[128];
	if (dir[0] && strncmp(dir, "/tmp/hoff-cli-", 14) == 0) {
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			return -1;
	}
	return 0;
}

/* Runs a shell command in dir with $H the binary; its exit status. */
static int sh(const char *fmt, ...)
{
	char body[4096], cmd[6144];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(body, sizeof body, fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof cmd, "cd '%s' && H='%s' && %s", dir, hoff, body);
	int st = system(cmd);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

/* Skips the running test, saying why, without a hoffopt binary. */
static void need_bin(void)
{
	if (!hoff[0] || access(hoff, X_OK) != 0) {
		print_message("no hoffopt binary (HOFF_BIN_DIR)\n");
		skip();
	}
}

/* Skips the running test, as need_bin does, also without the source
 * tree (HOFF_SRC_DIR). */
static void need_src(void)
{
	need_bin();
	if (!tu_src_dir())
		skip();
}

/* Writes text to dir/name. */
static void put(const char *name, const char *text)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* Writes FORMAT.md's example to dir/name with each (from, to) of the
 * NULL-terminated pairs replaced (every occurrence). */
static void example(const char *name, ...)
{
	char text[8192];
	snprintf(text, sizeof text, "%s", tu_example_graph);
	va_list ap;
	va_start(ap, name);
	const char *from;
	while ((from = va_arg(ap, const char *))) {
		const char *to = va_arg(ap, const char *);
		char out[8192];
		size_t n = 0, lf = strlen(from);
		for (const char *p = text; *p;) {
			if (strncmp(p, from, lf) == 0) {
				n += (size_t)snprintf(out + n, sizeof out - n,
						      "%s", to);
				p += lf;
			} else {
				out[n++] = *p++;
			}
		}
		out[n] = '\0';
		memcpy(text, out, n + 1);
	}
	va_end(ap);
	put(name, text);
}

/* The text of dir/name ("" when missing; caller frees). */
static char *slurp(const char *name)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	size_t n;
	char *t = tu_slurp(path, &n);
	return t ? t : calloc(1, 1);
}

static bool contains(const char *name, const char *want)
{
	char *t = slurp(name);
	bool yes = strstr(t, want) != NULL;
	if (!yes)
		print_message("%s: no \"%s\" in:\n%s\n", name, want, t);
	free(t);
	return yes;
}

static mode_t mode_of(const char *name, bool follow)
{
	char path[512];
	struct stat sb;
	snprintf(path, sizeof path, "%s/%s", dir, name);
	assert_int_equal(follow ? stat(path, &sb) : lstat(path, &sb), 0);
	return sb.st_mode;
}

#define SCHED_HEAD "{\"format\": \"hoffopt.schedule\""

/* One step of a scripted test: a command, run by sh (the script's
 * argument for a %s in it), and the exit status it must give (EXIT); or
 * a text that dir/file must hold (HAS) or must not (LACKS). */
struct step {
	const char *cmd; /* NULL: a check of file */
	int rc;
	const char *file, *want;
	bool absent;
};
#define EXIT(rc, cmd)                          \
	{                                      \
		(cmd), (rc), NULL, NULL, false \
	}
#define HAS(file, want)                        \
	{                                      \
		NULL, 0, (file), (want), false \
	}
#define LACKS(file, want)                     \
	{                                     \
		NULL, 0, (file), (want), true \
	}

/* Runs the n steps in order, arg for each command's %s, and checks
 * each; a failure prints the step (its index and text) first. */
static void run_steps(const struct step *st, size_t n, const char *arg)
{
	for (size_t i = 0; i < n; i++) {
		if (st[i].cmd) {
			int rc = sh(st[i].cmd, arg);
			if (rc != st[i].rc)
				print_error("step %zu, %s: exit %d, not %d\n",
					    i, st[i].cmd, rc, st[i].rc);
			assert_int_equal(rc, st[i].rc);
		} else if (contains(st[i].file, st[i].want) == st[i].absent) {
			print_error("step %zu: %s %s \"%s\"\n", i, st[i].file,
				    st[i].absent ? "holds" : "lacks",
				    st[i].want);
			fail();
		}
	}
}
#define RUN_STEPS(st, arg) run_steps((st), sizeof(st) / sizeof *(st), (arg))

/* Runs the n steps on FORMAT.md's example, written to g.json first. */
static void on_example(const struct step *st, size_t n)
{
	need_bin();
	example("g.json", NULL);
	run_steps(st, n, NULL);
}
#define ON_EXAMPLE(st) on_example((st), sizeof(st) / sizeof *(st))

/* (1) A FIFO is written into, not replaced by a regular file. */
static void test_out_fifo(void **state)
{
	(void)state;
	need_bin();
	example("g.json", NULL);
	assert_int_equal(sh("rm -f fifo got && mkfifo fifo"), 0);
	assert_int_equal(sh("(timeout 20 cat fifo > got &) && "
			    "$H --greedy g.json -o fifo > /dev/null && "
			    "sleep 0.2"),
			 0);
	assert_true(S_ISFIFO(mode_of("fifo", false)));
	assert_true(contains("got", SCHED_HEAD));
}

/* (1) A device node (mknod c 1 7, /dev/full's numbers... here /dev/null's
 * 1 3) stays a device node; the write goes into it. Needs root. */
static void test_out_device_node(void **state)
{
	(void)state;
	need_bin();
	char path[256];
	snprintf(path, sizeof path, "%s/null", dir);
	unlink(path);
	if (mknod(path, S_IFCHR | 0666, makedev(1, 3)) != 0) {
		print_message("mknod: %s (not root): skipped\n",
			      strerror(errno));
		skip();
	}
	example("g.json", NULL);
	assert_int_equal(sh("$H --greedy g.json -o null > /dev/null"), 0);
	assert_true(S_ISCHR(mode_of("null", false)));
	assert_int_equal(sh("$H --greedy g.json -o /dev/null > /dev/null"), 0);
	struct stat sb;
	assert_int_equal(stat("/dev/null", &sb), 0);
	assert_true(S_ISCHR(sb.st_mode));
}

/* (1, 2) A symlink is followed: the link stays, its target gets the
 * schedule atomically with its mode (0640) kept; a new file gets
 * 0666 & ~umask. */
static void test_out_symlink_mode(void **state)
{
	(void)state;
	need_bin();
	example("g.json", NULL);
	assert_int_equal(sh("rm -f real link new && echo old > real && "
			    "chmod 640 real && ln -s real link && umask 022 "
			    "&& $H --greedy g.json -o link > /dev/null && "
			    "$H --greedy g.json -o new > /dev/null"),
			 0);
	assert_true(S_ISLNK(mode_of("link", false)));
	assert_int_equal(mode_of("real", false) & 07777, 0640);
	assert_true(contains("real", SCHED_HEAD));
	assert_int_equal(mode_of("new", false) & 07777, 0644);
	/* no temporary file is left beside them */
	assert_int_equal(sh("test -z \"$(ls -A | grep -v '^[a-z0-9.]*$')\""),
			 0);
}

/* (2) A 250-character output name works: the temporary name is short. */
static void test_out_long_name(void **state)
{
	(void)state;
	need_bin();
	char name[251];
	memset(name, 'n', 250);
	name[250] = '\0';
	example("g.json", NULL);
	assert_int_equal(sh("$H --greedy g.json -o %s > /dev/null", name), 0);
	assert_true(contains(name, SCHED_HEAD));
}

/* (2) A symlink planted where the old code put its temporary file
 * (<path>.tmp.<pid>) redirects nothing: the victim is untouched and the
 * temporary file is a new regular file in the target's directory. */
static void test_out_tmp_not_followed(void **state)
{
	(void)state;
	if (!dir[0])
		skip();
	char target[256], victim[256], plant[320];
	snprintf(target, sizeof target, "%s/s.json", dir);
	snprintf(victim, sizeof victim, "%s/victim", dir);
	snprintf(plant, sizeof plant, "%s.tmp.%ld", target, (long)getpid());
	FILE *v = fopen(victim, "w");
	assert_non_null(v);
	fputs("precious\n", v);
	assert_int_equal(fclose(v), 0);
	unlink(plant);
	assert_int_equal(symlink(victim, plant), 0);
	hoff_outfile o;
	hoff_err e = {{0}};
	assert_int_equal(hoff_outfile_open(&o, target, &e), HOFF_OK);
	struct stat sb;
	assert_int_equal(lstat(hoff_outfile_name(&o), &sb), 0);
	assert_true(S_ISREG(sb.st_mode));
	assert_int_equal(strncmp(hoff_outfile_name(&o), dir, strlen(dir)), 0);
	fputs("new\n", o.f);
	assert_int_equal(hoff_outfile_commit(&o, &e), HOFF_OK);
	assert_true(contains("victim", "precious\n"));
	assert_true(contains("s.json", "new\n"));
	unlink(plant);
}

/* (3) -o naming the input (itself, or through a link) is refused with
 * exit 2 and the graph is kept. */
static void test_out_is_input(void **state)
{
	static const struct step st[] = {
		EXIT(2, "$H --greedy g.json -o g.json 2> err"),
		HAS("err", "hoffopt: output g.json is the input "
			   "g.json: refusing to overwrite it"),
		EXIT(2, "rm -f alias && ln g.json alias && "
			"$H --policy none g.json -o alias 2> /dev/null"),
		EXIT(2, "$H --exact g.json --quiet --trace ./g.json "
			"2> /dev/null"),
		EXIT(2, "$H simulate g.json g.json --trace g.json "
			"2> /dev/null"),
		HAS("g.json", "\"format\": \"hoffopt.graph\""),
	};
	(void)state;
	ON_EXAMPLE(st);
}

/* (4) A failed write to stdout (/dev/full) is exit 2 with a message, for
 * every report. */
static void test_stdout_full(void **state)
{
	(void)state;
	need_bin();
	if (access("/dev/full", W_OK) != 0)
		skip();
	example("g.json", NULL);
	assert_int_equal(sh("$H --greedy g.json -o s.json > /dev/null"), 0);
	static const char *const cmds[] = {
		"analyze g.json",	    "analyze g.json --json --tensors",
		"simulate g.json s.json",   "simulate g.json s.json --json",
		"--greedy g.json --json",   "--greedy g.json -o -",
		"--policy reactive g.json", "--exact g.json --quiet --json",
		"compare g.json --quiet",
	};
	for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
		int rc = sh("$H %s > /dev/full 2> err", cmds[i]);
		if (rc != 2)
			print_message("hoffopt %s: exit %d\n", cmds[i], rc);
		assert_int_equal(rc, 2);
		assert_true(contains("err", "cannot write <stdout>: No space "
					    "left on device"));
	}
}

/* (5) A plan over the device (5 MB; greedy's least peak is 8 MB) is exit
 * 1 for every planner, with nothing written and the report kept. */
/* A training graph, weights and Adam state on the host, on a 3 GiB
 * device: greedy's least peak within 1% of the lower bound is
 * 3834318860 B and does not fit; a slower plan does (lookahead:1's, at
 * 482.9% over the bound). Greedy returns the fastest plan that fits,
 * exit 0, and says what the least peak within 1% was (it returned
 * nothing, exit 1, before). */
static void test_plan_falls_back_to_device(void **state)
{
	(void)state;
	need_bin();
	static const struct step st[] = {
		EXIT(0, "\"$(dirname \"$H\")/hoff-gen-synth\" --ops 300 "
			"--shape train --home host --layers 4 --memory 3G "
			"-o g3.json"),
		EXIT(0, "$H --greedy g3.json -o s.json --json > out "
			"2> err"),
		HAS("out", "\"feasible\": false"),
		HAS("err", "greedy's least peak within 1% of the "
			   "lower bound is 3834318860 B, over the "
			   "device's 3221225472 B; this is the fastest "
			   "plan found that fits"),
		EXIT(0, "$H simulate g3.json s.json > out"),
		HAS("out", "schedule valid"),
	};
	RUN_STEPS(st, NULL);
}

/* run without --size-scale on a graph of 3 GB (decode-2l) picks the
 * factor that fits it in at most 1 GiB and says so; the report explains
 * its arena line. */
static void test_run_fits_size(void **state)
{
	(void)state;
	need_src();
	static const struct step st[] = {
		EXIT(0, "$H --greedy '%s/data/llama3-8b-decode-2l.json' "
			"-o s.json > /dev/null"),
		EXIT(0, "$H run '%s/data/llama3-8b-decode-2l.json' s.json "
			"--time-scale 100 > out 2> err"),
		HAS("out", "sizes chosen so the tensors fit"),
		HAS("out", "the device footprint, every block at "
			   "an offset planned ahead"),
	};
	RUN_STEPS(st, tu_src_dir());
}

static void test_plan_over_device(void **state)
{
	(void)state;
	need_bin();
	example("t5.json", "\"memory_bytes\": 100000000",
		"\"memory_bytes\": 5000000", NULL);
	static const char *const pol[] = {"greedy", "none", "reactive",
					  "lookahead:1"};
	static const char *const peak[] = {"8000000", "12000000", "8000000",
					   "11000000"};
	for (int i = 0; i < 4; i++) {
		assert_int_equal(sh("rm -f s.json; $H --policy %s t5.json -o "
				    "s.json --json > out 2> err",
				    pol[i]),
				 1);
		assert_int_equal(sh("test ! -e s.json"), 0);
		char want[160];
		snprintf(want, sizeof want,
			 "hoffopt: %s's schedule peaks at %s B, over the "
			 "device's 5000000 B (machine.device.memory_bytes)",
			 pol[i], peak[i]);
		assert_true(contains("err", want));
		assert_true(contains("err",
				     i ? "this baseline does not fit the device"
				       : "no schedule found fits the device"));
		assert_true(contains("out", "\"feasible\": false"));
		/* greedy says why none can fit: op1 needs a, w1 and b */
		if (i == 0)
			assert_true(contains("err", "hoffopt: none can: op "
						    "\"op1\" alone needs "
						    "8000000 B, over 5000000 "
						    "B"));
	}
	static const struct step st[] = {
		EXIT(1, "$H --exact t5.json --quiet > /dev/null "
			"2> /dev/null"),
		EXIT(1, "$H compare t5.json --quiet > /dev/null"),
		/* a --budget that cannot be met: exit 1 saying so, not an
		 * internal error (the plan is simulated without a budget, then
		 * judged) */
		EXIT(1, "$H --greedy t5.json --budget 1 --json > out "
			"2> err"),
		HAS("err", "hoffopt: budget 1 B cannot be met by "
			   "greedy: the smallest peak found is "
			   "8000000 B"),
		HAS("out", "\"peak_bytes\": 8000000,"),
		EXIT(1, "$H --exact t5.json --budget 1 --quiet > /dev/null "
			"2> err"),
		HAS("err", "hoffopt: budget 1 B cannot be met"),
		/* a --budget over the device's memory is capped at it (issue
		 * 34, 5; it planned over the device, exit 0, before) */
		EXIT(1, "rm -f s.json; $H --greedy t5.json --budget "
			"9000000 -o s.json > /dev/null 2> err"),
		HAS("err", "--budget 9000000 is 9000000 B, over the "
			   "device's 5000000 B"),
		HAS("err", "hoffopt: budget 5000000 B cannot be met"),
		EXIT(0, "test ! -e s.json"),
	};
	RUN_STEPS(st, NULL);
}

/* (6) Tier capacity: under the homed bytes the graph is rejected (exit 2,
 * the tier and both counts); exactly at them, greedy plans and the
 * baselines that store past it say so with exit 1, not "internal error". */
static void test_tier_capacity(void **state)
{
	(void)state;
	need_bin();
	example("c7.json", "1000000000000", "7000000", NULL);
	example("c8.json", "1000000000000", "8000000", NULL);
	static const struct step st[] = {
		EXIT(2, "$H --greedy c7.json 2> err"),
		HAS("err", "hoffopt: c7.json: machine.tiers[0] "
			   "\"host\": capacity_bytes 7000000 is less "
			   "than the 8000000 bytes of the tensors "
			   "homed there"),
		EXIT(2, "$H --policy reactive c7.json 2> /dev/null"),
		EXIT(2, "$H analyze c7.json > /dev/null 2>&1"),
		EXIT(0, "$H --greedy c8.json -o s.json > /dev/null"),
		EXIT(0, "$H simulate c8.json s.json > /dev/null"),
		EXIT(0, "$H --policy none c8.json > /dev/null"),
	};
	RUN_STEPS(st, NULL);
	/* the baselines that store past the capacity: reactive, then
	 * lookahead:1 */
	static const struct step store_past[] = {
		EXIT(1, "$H --policy %s c8.json > /dev/null 2> err"),
		HAS("err", "cannot plan within the tiers' capacities"),
		HAS("err", "steps[6] store \"b\": rule 8: tier capacity "
			   "exceeded"),
	};
	RUN_STEPS(store_past, "reactive");
	RUN_STEPS(store_past, "lookahead:1");
}

/* (6) The exit codes: a bug is 3, apart from bad input (2). */
static void test_exit_codes(void **state)
{
	(void)state;
	assert_int_equal(hoff_cli_exit(HOFF_OK), 0);
	assert_int_equal(hoff_cli_exit(HOFF_EINVALID), 1);
	assert_int_equal(hoff_cli_exit(HOFF_EINPUT), 2);
	assert_int_equal(hoff_cli_exit(HOFF_EIO), 2);
	assert_int_equal(hoff_cli_exit(HOFF_EUSAGE), 2);
	assert_int_equal(hoff_cli_exit(HOFF_ENOMEM), 2);
	assert_int_equal(hoff_cli_exit(HOFF_EINTERNAL), 3);
	assert_int_equal(HOFF_EXIT_INTERNAL, 3);
}

/* (8) A tier whose fetches sum past 2^62 ps: analyze names the file and
 * the tier, not a step. Two weights of 3e6 B at 1 B/s: 3e18 ps each. */
static void test_fetch_sum_message(void **state)
{
	(void)state;
	need_bin();
	example("ovf.json", "\"h2d_Bps\": 1.0e9", "\"h2d_Bps\": 1",
		"\"bytes\": 4000000", "\"bytes\": 3000000", NULL);
	assert_int_equal(sh("$H analyze ovf.json 2> err"), 2);
	assert_true(contains("err",
			     "hoffopt: ovf.json: machine.tiers[0] "
			     "\"host\": h2d_Bps: one fetch of each "
			     "tensor homed there plus the compute "
			     "reaches 2^62 ps (at tensors[2] \"w1\")\n"));
}

/* (9) budget_bytes is written without --budget: the device's memory. */
static void test_budget_written(void **state)
{
	static const struct step st[] = {
		EXIT(0, "$H --greedy g.json -o s.json > /dev/null && "
			"$H --exact g.json --quiet -o x.json > /dev/null"),
		HAS("s.json", "\"budget_bytes\": 100000000,"),
		HAS("x.json", "\"budget_bytes\": 100000000,"),
	};
	(void)state;
	ON_EXAMPLE(st);
}

/* (issue 31) --recompute on --greedy: the plan drops a and re-runs f0
 * (test_recompute.c's graph worked out by hand: 18 MB at 6 ms, against
 * 28 MB without), written as a version-2 schedule that simulate accepts
 * at 18 MB and not a byte under. */
static void test_recompute_flag(void **state)
{
	(void)state;
	need_bin();
	static const struct step st[] = {
		EXIT(0,
		     "cat > r.json <<'E'\n"
		     "{\"format\": \"hoffopt.graph\", \"version\": 2, \"machine\": "
		     "{\"device\": {\"memory_bytes\": 100000000}, \"tiers\": "
		     "[{\"name\": \"host\", \"h2d_Bps\": 1e9, \"d2h_Bps\": 1e9}]}, "
		     "\"tensors\": [{\"id\": \"x\", \"bytes\": 1000000, \"kind\": "
		     "\"input\"}, {\"id\": \"a\", \"bytes\": 10000000, \"kind\": "
		     "\"activation\"}, {\"id\": \"h\", \"bytes\": 1000000, "
		     "\"kind\": \"activation\"}, {\"id\": \"l\", \"bytes\": "
		     "1000000, \"kind\": \"activation\"}, {\"id\": \"wb\", "
		     "\"bytes\": 5000000, \"kind\": \"weight\", \"home\": "
		     "\"host\"}, {\"id\": \"g\", \"bytes\": 1000000, \"kind\": "
		     "\"output\"}], \"ops\": [{\"id\": \"f0\", \"inputs\": "
		     "[\"x\"], \"outputs\": [\"a\"], \"time_s\": 0.001, "
		     "\"layer\": 0}, {\"id\": \"f1\", \"inputs\": [\"a\"], "
		     "\"outputs\": [\"h\"], \"time_s\": 0.001, \"layer\": 0}, "
		     "{\"id\": \"head\", \"inputs\": [\"h\"], \"outputs\": "
		     "[\"l\"], \"time_s\": 0.001, \"workspace_bytes\": 10000000}, "
		     "{\"id\": \"b0\", \"inputs\": [\"l\", \"a\", \"x\", "
		     "\"wb\"], \"outputs\": [\"g\"], \"time_s\": 0.001, "
		     "\"layer\": 0}]}\n"
		     "E\n"
		     "$H --greedy r.json --recompute -o s.json > /dev/null 2>&1 "
		     "&& $H --greedy r.json -o n.json > /dev/null 2>&1 && "
		     "$H simulate r.json s.json --budget 18000000 > /dev/null"),
		HAS("s.json", "\"version\": 2,"),
		HAS("s.json", "{\"drop\": \"a\"},\n  {\"op\": "
			      "\"head\"},\n  {\"recompute\": \"f0\"},"),
		HAS("s.json", "\"peak_bytes\": 18000000,"),
		HAS("n.json", "\"peak_bytes\": 28000000,"),
		EXIT(1, "$H simulate r.json s.json --budget 17999999 "
			"> /dev/null 2>&1"),
	};
	RUN_STEPS(st, NULL);
}

/* (9) Control characters in ids are escaped in text reports. */
static void test_escaped_ids(void **state)
{
	(void)state;
	need_bin();
	example("esc.json", "\"w0\"", "\"w\\u001b[2J0\"", "\"tiny\"",
		"\"t\\u0007\"", NULL);
	static const struct step st[] = {
		EXIT(0, "$H analyze esc.json > out"),
		HAS("out", "graph t\\x07: 2 ops"),
		HAS("out", "  w\\x1b[2J0 "),
	};
	RUN_STEPS(st, NULL);
	char *t = slurp("out");
	assert_null(strchr(t, 0x1b));
	assert_null(strchr(t, 0x07));
	free(t);
}

/* (9) An unknown option is unknown, even last; a known one lacks a value. */
static void test_option_messages(void **state)
{
	static const struct step st[] = {
		EXIT(2, "$H --greedy g.json --bogus 2> err"),
		HAS("err", "hoffopt: unknown option '--bogus'\n"),
		EXIT(2, "$H analyze g.json --frobnicate 2> err"),
		HAS("err", "hoffopt: unknown option '--frobnicate'\n"),
		EXIT(2, "$H --greedy g.json -o 2> err"),
		HAS("err", "hoffopt: option '-o' needs a value\n"),
		EXIT(2, "$H simulate g.json s.json --budget 2> err"),
		HAS("err", "option '--budget' needs a value\n"),
	};
	(void)state;
	ON_EXAMPLE(st);
}

/* (9) --corrupt-step must name a transfer of the schedule. */
static void test_corrupt_step(void **state)
{
	static const struct step st[] = {
		EXIT(0, "$H --greedy g.json -o s.json > /dev/null"),
		/* greedy's steps on the example: prefetch w0, prefetch w1, op0
		   ... */
		HAS("s.json", "\"steps\": [\n  {\"prefetch\": \"w0\""),
		EXIT(2, "$H run g.json s.json --corrupt-step 2 2> err"),
		HAS("err", "--corrupt-step 2: not a prefetch, a store "
			   "or a recompute"),
		EXIT(2, "$H run g.json s.json --corrupt-step 99 2> err"),
		HAS("err", "--corrupt-step 99: past the schedule's "
			   "last step"),
		/* a transfer it is: the corruption is found by --verify */
		EXIT(1, "$H run g.json s.json --corrupt-step 0 --verify "
			"> /dev/null 2>&1"),
	};
	(void)state;
	ON_EXAMPLE(st);
}

/* (14) --time-limit bounds the whole --exact command, the model's build
 * and the solver's set-up included: llama3-8b-train's min-peak model
 * (about a million columns and three million rows) took 2 min 12 s under
 * --time-limit 30; under 3 s the run ends with greedy's schedule, status
 * time_limit, saying why (how soon is bench/'s to measure). At 10% over
 * the lower bound: on data/'s repeat graph (FORMAT v2, duplex 0.92)
 * greedy's fastest plan is 5.3% over it, so 1% would end in exit 1;
 * greedy's plan at 10% peaks at 37411528708 B (`hoffopt --greedy
 * data/llama3-8b-train.json --max-overhead 0.1`). */
static void test_exact_time_limit(void **state)
{
	(void)state;
	need_src();
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	int rc = sh("$H --exact '%s/data/llama3-8b-train.json' --time-limit 3 "
		    "--max-overhead 0.1 --json -o s.json > out 2> err",
		    tu_src_dir());
	clock_gettime(CLOCK_MONOTONIC, &b);
	double wall = (double)(b.tv_sec - a.tv_sec) +
		      (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
	/* the wall time is printed, not asserted (issue 34, 13): a busy
	 * machine stretches it; bench/ measures it */
	print_message("--exact llama3-8b-train --time-limit 3: %.1f s, exit "
		      "%d\n",
		      wall, rc);
	/* greedy's schedule is within 10% of the lower bound: exit 0 */
	assert_int_equal(rc, 0);
	static const struct step st[] = {
		HAS("out", "\"peak_bytes\": 37411528708"),
		HAS("out", "\"status\": \"time_limit\""),
		HAS("out", "\"source\": \"greedy\""),
		HAS("out", "\"note\": \"--time-limit 3 s: "),
		HAS("out", "greedy's schedule is returned\""),
	};
	RUN_STEPS(st, NULL);
}

/* (13) A proven optimum is named for what it is: optimal over the
 * model's candidates, with the restriction printed. On the witness graph
 * random7-train the default model's optimum is 311427076 B: the 4-byte
 * loss output is a small tensor; with --all-candidates the model now
 * stores it after its producer (a result no op reads) and reaches the
 * witness's 311427072 B. */
static void test_exact_claims(void **state)
{
	(void)state;
	const char *sh_dir = tu_shared_dir();
	need_bin();
	if (!sh_dir)
		skip();
	char graph[512];
	snprintf(graph, sizeof graph,
		 "%s/witness/exact/random7-train.graph.json", sh_dir);
	if (access(graph, R_OK) != 0)
		skip();
	static const struct step st[] = {
		EXIT(0, "$H --exact '%s' --quiet --json > out"),
		HAS("out", "\"status\": \"optimal_over_candidates\""),
		HAS("out", "\"peak_bytes\": 311427076,"),
		HAS("out", "\"restriction\": \"over the model's "
			   "candidates: 5 of 11 tensors may move"),
		HAS("out", "tensors under 76032 B only drop a clean "
			   "copy after their last use"),
		EXIT(0, "$H --exact '%s' --quiet > out"),
		HAS("out", "exact    optimal_over_candidates "),
		HAS("out", "bound over candidates 311427076"),
		/* greedy's 311427072 B is under the bound: no gap claimed */
		HAS("out", "below the model's bound (outside its "
			   "candidates)"),
		HAS("out", "status and bound are over the model's "
			   "candidates"),
		EXIT(0, "$H compare '%s' --quiet --json > out"),
		HAS("out", "\"status\": \"optimal_over_candidates\""),
		HAS("out", "\"restriction\": \"over the model's"),
		EXIT(0, "$H --exact '%s' --all-candidates --quiet --json "
			"-o s.json > out"),
		HAS("out", "\"peak_bytes\": 311427072,"),
		HAS("out", "\"bound\": 311427072,"),
		EXIT(0, "$H simulate '%s' s.json > /dev/null"),
	};
	RUN_STEPS(st, graph);
	snprintf(graph, sizeof graph,
		 "%s/witness/exact/random8-train.graph.json", sh_dir);
	assert_int_equal(sh("$H --exact '%s' --all-candidates --quiet --json "
			    "> out",
			    graph),
			 0);
	assert_true(contains("out", "\"peak_bytes\": 157810688,"));
}

/* ---- issue 34 ---- */

/* Whether dir holds a temporary output file (.hoffopt-XXXXXX). */
static bool has_tmp(void)
{
	DIR *d = opendir(dir);
	assert_non_null(d);
	bool yes = false;
	for (struct dirent *de; (de = readdir(d));)
		yes |= strncmp(de->d_name, ".hoffopt-", 9) == 0;
	closedir(d);
	return yes;
}

/* (1) run's --trace and --sim-trace may not name an input or each other:
 * exit 2, the input kept (it became a trace, exit 0, before). */
static void test_run_outputs_refused(void **state)
{
	static const struct step st[] = {
		EXIT(0, "$H --greedy g.json -o s.json > /dev/null && "
			"cp s.json s0.json"),
		EXIT(2, "$H run g.json s.json --trace s.json 2> err"),
		HAS("err", "hoffopt: output s.json is the input "
			   "s.json: refusing to overwrite it\n"),
		EXIT(2, "$H run g.json s.json --sim-trace ./g.json "
			"2> err"),
		HAS("err", "is the input g.json"),
		EXIT(2, "$H run g.json s.json --trace t.json --sim-trace "
			"t.json 2> err"),
		HAS("err", "hoffopt: t.json is named as two "
			   "outputs\n"),
		EXIT(0, "cmp -s s.json s0.json"),
		HAS("g.json", "\"format\": \"hoffopt.graph\""),
	};
	(void)state;
	ON_EXAMPLE(st);
}

/* (3) A signal while an output's temporary file exists removes it, and
 * the old output stays. The trace is a FIFO no one reads: hoffopt waits
 * in its open with the schedule's temporary file written (both outputs
 * are open before either lands). The process dies of the signal. */
static void kill_mid_write(int sig)
{
	need_bin();
	example("g.json", NULL);
	assert_int_equal(sh("rm -f fifo .hoffopt-* && mkfifo fifo && "
			    "printf old > s.json"),
			 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		if (chdir(dir) != 0 || null < 0)
			_exit(127);
		dup2(null, 1);
		dup2(null, 2);
		signal(sig, SIG_DFL);
		execl(hoff, hoff, "--greedy", "g.json", "-o", "s.json",
		      "--trace", "fifo", (char *)NULL);
		_exit(127);
	}
	bool seen = false;
	for (int i = 0; i < 12000 && !seen; i++) /* at most 2 min */
		if (!(seen = has_tmp()))
			usleep(10000);
	kill(pid, seen ? sig : SIGKILL);
	int st = 0;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(seen);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), sig);
	assert_false(has_tmp());
	char *t = slurp("s.json");
	assert_string_equal(t, "old");
	free(t);
}

static void test_sigterm_removes_tmp(void **state)
{
	(void)state;
	kill_mid_write(SIGTERM);
}

static void test_sigint_removes_tmp(void **state)
{
	(void)state;
	kill_mid_write(SIGINT);
}

/* (3) A schedule and its trace land as a pair: when the trace cannot be
 * written (a file size limit that the 3.6 KB schedule fits and the 16 KB
 * trace does not), neither is replaced and no temporary file stays
 * (before: the new schedule beside the old trace, and SIGXFSZ). */
static void test_pair_fails_whole(void **state)
{
	(void)state;
	need_src();
	static const struct step st1[] = {
		EXIT(0, "printf old-s > s.json && printf old-t > t.json"),
		/* 10 blocks: 5120 B in dash's 512-byte ones, 10 KiB in
		 * bash's */
		EXIT(2, "ulimit -f 10 && $H --greedy "
			"'%s/data/llama3-8b-train-2l.json' -o s.json "
			"--trace t.json > out 2> err"),
		HAS("err", "File too large"),
	};
	RUN_STEPS(st1, tu_src_dir());
	char *a = slurp("s.json"), *b = slurp("t.json");
	assert_string_equal(a, "old-s");
	assert_string_equal(b, "old-t");
	free(a);
	free(b);
	assert_false(has_tmp());
	/* without the limit both land */
	static const struct step st2[] = {
		EXIT(0, "$H --greedy '%s/data/llama3-8b-train-2l.json' "
			"-o s.json --trace t.json > out"),
		HAS("s.json", SCHED_HEAD),
		HAS("t.json", "\"traceEvents\""),
		/* the v2 step misses 1% (21% over): the plan line says what it
		 * is; at 30% it is within */
		HAS("out", "plan          greedy, the fastest found: "
			   "none within 1% over the lower bound\n"),
		EXIT(0, "$H --greedy '%s/data/llama3-8b-train-2l.json' "
			"--max-overhead 0.3 > out"),
		HAS("out", "plan          greedy, the least peak "
			   "found within 30% over the lower bound"),
	};
	RUN_STEPS(st2, tu_src_dir());
}

/* (5) A budget over the device's memory is capped at it, with a note, by
 * every planner; the schedule carries the device's figure, so simulate
 * judges it as the device would. The example on a 12 MB device: its
 * all-resident peak is 12 MB (x, w0, w1, a, b: 13 MB less x, freed after
 * op0), so 150% (18 MB) and 1GB are both over. */
static void test_budget_over_device(void **state)
{
	(void)state;
	need_bin();
	example("g.json", "\"memory_bytes\": 100000000",
		"\"memory_bytes\": 12000000", NULL);
	static const struct step st[] = {
		EXIT(0, "$H --greedy g.json --budget 1GB -o s.json > out "
			"2> err"),
		HAS("err", "hoffopt: note: --budget 1GB is "
			   "1000000000 B, over the device's 12000000 "
			   "B: planning for the device's memory"),
		HAS("out", "under the budget 12000000 B (11.44 MiB) "
			   "(--budget 1GB, capped at the device)"),
		HAS("s.json", "\"budget_bytes\": 12000000,"),
		EXIT(0, "$H simulate g.json s.json > out"),
		HAS("out", "budget 12000000 B"),
		EXIT(0, "$H --policy none g.json --budget 150%% --json "
			"2> err > out"),
		HAS("err", "--budget 150% is 18000000 B, over"),
		HAS("out", "\"budget_bytes\": 12000000"),
		EXIT(0, "$H --exact g.json --budget 1TB --quiet --json "
			"-o x.json 2> err > /dev/null"),
		HAS("err", "hoffopt: note: --budget 1TB is"),
		HAS("x.json", "\"budget_bytes\": 12000000,"),
		EXIT(0, "$H compare g.json --budget 1TB --quiet 2> err "
			"> /dev/null"),
		HAS("err", "hoffopt: note: --budget 1TB is"),
		/* at or under the device: no note */
		EXIT(0, "$H --greedy g.json --budget 12000000 2> err "
			"> /dev/null"),
		LACKS("err", "note"),
	};
	RUN_STEPS(st, NULL);
}

/* (6) The memory this process may take: MemAvailable, and each memory
 * cgroup's limit less its use, up the tree, v2 and v1, in a fake tree. */
static void test_mem_available(void **state)
{
	(void)state;
	need_bin(); /* for dir */
	assert_int_equal(
		sh("rm -rf m && mkdir -p m/proc/self m/sys/fs/cgroup/a/b "
		   "m/sys/fs/cgroup/memory/x && "
		   "printf 'MemTotal: 9 kB\\nMemAvailable:    10000 kB\\n' "
		   "> m/proc/meminfo && "
		   "printf '0::/a/b\\n' > m/proc/self/cgroup && "
		   "echo 5000000 > m/sys/fs/cgroup/a/memory.max && "
		   "echo 1000000 > m/sys/fs/cgroup/a/memory.current && "
		   "echo max > m/sys/fs/cgroup/a/b/memory.max && "
		   "echo 7 > m/sys/fs/cgroup/a/b/memory.current"),
		0);
	char root[512];
	snprintf(root, sizeof root, "%s/m", dir);
	/* v2: a's 5000000 less 1000000 under MemAvailable's 10240000 */
	assert_int_equal(hoff_cli_mem_available(root), 4000000);
	assert_int_equal(sh("printf 'MemAvailable: 1000 kB\\n' > "
			    "m/proc/meminfo"),
			 0);
	assert_int_equal(hoff_cli_mem_available(root), 1024000);
	/* v1: the memory controller's hierarchy; its root's "no limit" */
	assert_int_equal(
		sh("printf 'MemAvailable: 100000 kB\\n' > m/proc/meminfo && "
		   "printf '4:cpu,memory:/x\\n0::/\\n' > m/proc/self/cgroup && "
		   "echo 3000000 > m/sys/fs/cgroup/memory/x/"
		   "memory.limit_in_bytes && "
		   "echo 500000 > m/sys/fs/cgroup/memory/x/"
		   "memory.usage_in_bytes && "
		   "echo 9223372036854771712 > m/sys/fs/cgroup/memory/"
		   "memory.limit_in_bytes"),
		0);
	assert_int_equal(hoff_cli_mem_available(root), 2500000);
	/* used past the limit: nothing left */
	assert_int_equal(sh("echo 4000000 > m/sys/fs/cgroup/memory/x/"
			    "memory.usage_in_bytes"),
			 0);
	assert_int_equal(hoff_cli_mem_available(root), 0);
	/* nothing known */
	snprintf(root, sizeof root, "%s/none", dir);
	assert_int_equal(hoff_cli_mem_available(root), INT64_MAX);
	assert_true(hoff_cli_mem_available("") > 0);
}

/* (6) run refuses, exit 2, an arena and host copies past the memory it
 * may take, before allocating (under ASan the allocation aborted;
 * without it, --size-scale 1e3 took 18.5 GB of a 23 GB machine). */
static void test_run_memory_refused(void **state)
{
	(void)state;
	need_bin();
	example("g.json", NULL);
	static const struct step st[] = {
		EXIT(0, "$H --greedy g.json -o s.json > /dev/null"),
		EXIT(2, "$H run g.json s.json --size-scale 1e7 > out "
			"2> err"),
		HAS("err", "hoffopt: run: the cpu backend needs "
			   "190000000000000 B of this machine's "
			   "memory (a device arena and "
			   "80000000000000 B of host copies), more "
			   "than the "),
		HAS("err", "nothing was run (try --size-scale "),
	};
	RUN_STEPS(st, NULL);
	char *t = slurp("out");
	assert_string_equal(t, "");
	free(t);
}

/* (7) Rounding up to whole bytes changes transfer times: --size-scale
 * 1e-10 makes w0's 4 MB one byte, 2500 times its scaled 0.0004 B; run
 * says so. 0.5 rounds nothing: no warning. */
static void test_size_scale_rounding(void **state)
{
	static const struct step st[] = {
		EXIT(0, "$H --greedy g.json -o s.json > /dev/null"),
		EXIT(0, "$H run g.json s.json --size-scale 1e-10 "
			"--check-plan --no-run > out 2> err"),
		HAS("err", "hoffopt: run: warning: --size-scale "
			   "1e-10 rounds tensor \"w0\" (4000000 B) "
			   "up to 1 B, 2500 times its scaled size"),
		EXIT(0, "$H run g.json s.json --size-scale 0.5 "
			"--check-plan --no-run > out 2> err"),
		LACKS("err", "warning"),
	};
	(void)state;
	ON_EXAMPLE(st);
}

/* (9, 10) On the binary: --opt=value; numbers' messages. */
static void test_number_messages(void **state)
{
	static const struct step st[] = {
		EXIT(2, "$H --greedy g.json --budget=90%% -o=s.json "
			"2> err"),
		HAS("err", "unknown option '-o=s.json'"),
		EXIT(0, "$H --greedy g.json --budget=90%% --trace=t.json "
			"> out"),
		HAS("out", "(--budget 90% of the all-resident"),
		HAS("t.json", "\"traceEvents\""),
		EXIT(2, "$H analyze g.json --top=1 --json=yes 2> err"),
		HAS("err", "option '--json=yes' takes no value"),
		EXIT(2, "$H --greedy g.json --budget 9223372036854775808 "
			"2> err"),
		HAS("err", "--budget: '9223372036854775808' is too "
			   "large (at most 9223372036854775807 B)"),
		EXIT(2, "$H --greedy g.json --budget 0x1000 2> err"),
		HAS("err", "--budget: '0x1000' is not a byte count"),
		EXIT(0, "$H --greedy g.json --budget ' 90%% ' > out"),
		HAS("out", "under the budget 10800000 B"),
		EXIT(2, "$H --greedy g.json --max-overhead 0x1p-3 "
			"2> /dev/null"),
	};
	(void)state;
	ON_EXAMPLE(st);
}

/* (10) A graph's byte counts are read as integers, exactly, up to
 * 2^63 - 1: x of 2^53 + 1 bytes and y of 1 peak at 2^53 + 2 (2^53 + 1
 * before: x was read as the double 2^53); past 2^63 - 1, "too large". */
static void test_exact_bytes(void **state)
{
	(void)state;
	need_bin();
	static const char g[] =
		"{\"format\": \"hoffopt.graph\", \"version\": 1, \"machine\": "
		"{\"device\": {\"memory_bytes\": 100000000}, \"tiers\": "
		"[{\"name\": \"host\", \"h2d_Bps\": 1e12, \"d2h_Bps\": "
		"1e12}]}, \"tensors\": [{\"id\": \"x\", \"bytes\": %s, "
		"\"kind\": \"input\"}, {\"id\": \"y\", \"bytes\": 1, "
		"\"kind\": \"output\"}], \"ops\": [{\"id\": \"op0\", "
		"\"inputs\": [\"x\"], \"outputs\": [\"y\"], \"time_s\": "
		"0.001}]}";
	static const char *const bytes[] = {"9007199254740993",
					    "90071992547409930e-1",
					    "9223372036854775808"};
	static const struct step exact[] = {
		EXIT(0, "$H analyze e53.json --json > out"),
		HAS("out", "\"no_offload\": {\"peak_bytes\": "
			   "9007199254740994,"),
	};
	static const struct step too_large[] = {
		EXIT(2, "$H analyze e53.json 2> err"),
		HAS("err", "tensors[0] \"x\": bytes is too large (beyond "
			   "2^63 - 1)"),
	};
	for (int i = 0; i < 3; i++) {
		char json[1024];
		snprintf(json, sizeof json, g, bytes[i]);
		put("e53.json", json);
		if (i < 2)
			RUN_STEPS(exact, NULL);
		else
			RUN_STEPS(too_large, NULL);
	}
}

/* (11) The small things: run --check-plan --no-run --json is JSON; cuda
 * flags on cpu are refused; gen --list takes no model; --kv-block's
 * error names the flag; analyze --tensors needs --json; an id holding
 * '"' is escaped in a reader's error; a schedule for another graph says
 * so in its error. */
static void test_small_things(void **state)
{
	(void)state;
	need_bin();
	example("g.json", NULL);
	assert_int_equal(sh("$H --greedy g.json -o s.json > /dev/null"), 0);
	assert_int_equal(sh("$H run g.json s.json --check-plan --no-run "
			    "--json > out"),
			 0);
	char *t = slurp("out");
	assert_string_equal(t, "{\"race\": false, \"waits\": 2}\n");
	free(t);
	/* the inputs of the escaping cases below */
	example("q.json", "\"w0\", \"bytes\": 4000000",
		"\"w\\\"0\", \"bytes\": 0", NULL);
	example("h.json", "\"tiny\"", "\"other\"", "\"op0\"", "\"opA\"", NULL);
	example("q2.json", "\"w1\"", "\"w\\\"1\"", "\"op1\"", "\"o\\\"p1\"",
		NULL);
	put("q2s.json",
	    "{\"format\": \"hoffopt.schedule\", \"version\": 1, \"steps\": "
	    "[{\"prefetch\": \"w0\", \"from\": \"host\"}, {\"op\": \"op0\"}, "
	    "{\"op\": \"o\\\"p1\"}]}");
	put("q3s.json",
	    "{\"format\": \"hoffopt.schedule\", \"version\": 1, \"steps\": "
	    "[{\"op\": \"op0\"}]}");
	example("q5.json", "\"b\"", "\"b\\\"q\"", "[\"x\", \"w0\"]",
		"[\"x\", \"w0\", \"b\\\"q\"]", NULL);
	static const struct step st[] = {
		EXIT(2, "$H run g.json s.json --pace 2> err"),
		HAS("err", "hoffopt: --pace needs --backend cuda\n"),
		EXIT(2, "$H run g.json s.json --cuda-graph 2> err"),
		HAS("err", "--cuda-graph needs --backend cuda\n"),
		EXIT(2, "$H gen --list extra > out 2> err"),
		HAS("err", "gen --list takes no MODEL ('extra')"),
		EXIT(2, "$H gen llama3-8b --seq 1000000 --kv-block 1 -o "
			"/dev/null 2> err"),
		HAS("err", "(raise --kv-block, kv_block_tokens)"),
		EXIT(2, "$H analyze g.json --tensors 2> err"),
		HAS("err", "hoffopt: --tensors needs --json\n"),
		/* an id with a '"' is shown as a JSON string, escaped */
		EXIT(2, "$H analyze q.json 2> err"),
		HAS("err", "q.json: tensors[1] \"w\\\"0\": bytes must be > 0"),
		EXIT(2, "$H simulate h.json s.json 2> err"),
		HAS("err", "(the schedule is for graph \"tiny\", not "
			   "\"other\")"),
		/* and so is one in a simulator's violation and in the
		 * schedule checker's messages (printed raw before: "w"1") */
		EXIT(1, "$H simulate q2.json q2s.json > out 2> err"),
		HAS("err", "steps[2] op \"o\\\"p1\": \"w\\\"1\": rule 1:"),
		EXIT(2, "$H simulate q2.json q3s.json 2> err"),
		HAS("err", "op \"o\\\"p1\" is missing"),
		/* and in the graph's own checks after the reader (graph.c) */
		EXIT(2, "$H analyze q5.json 2> err"),
		HAS("err", "inputs: tensor \"b\\\"q\" is used before op "
			   "\"op1\" produces it"),
	};
	RUN_STEPS(st, NULL);
}

/* (11) tests/deps.sh waits while another apt holds its lock: a fake
 * apt-get that answers "Could not get lock" twice, then installs. With
 * HOFF_APT_WAIT=0 it gives up at once, with apt's exit code. */
static void test_deps_waits_for_lock(void **state)
{
	(void)state;
	need_src();
	assert_int_equal(
		sh("rm -rf fake && mkdir fake && echo 0 > fake/n && "
		   "printf '#!/bin/sh\\nexit 1\\n' > fake/dpkg && "
		   "printf '#!/bin/sh\\nexec \"$@\"\\n' > fake/sudo && "
		   "printf '#!/bin/sh\\nn=$(cat %s/fake/n); "
		   "echo $((n+1)) > %s/fake/n\\n"
		   "[ \"$1\" = update ] && exit 0\\n"
		   "[ $n -ge 3 ] && exit 0\\n"
		   "echo \"E: Could not get lock /var/lib/dpkg/lock-frontend. "
		   "It is held by process 7 (apt-get)\" >&2; exit 100\\n' "
		   "> fake/apt-get && chmod +x fake/*",
		   dir, dir),
		0);
	assert_int_equal(sh("PATH=%s/fake:$PATH HOFF_APT_POLL=0 "
			    "'%s/tests/deps.sh' nosuchpkg > out 2> err",
			    dir, tu_src_dir()),
			 0);
	assert_true(contains("err", "another apt holds its lock; waiting"));
	assert_int_equal(sh("echo 1 > fake/n && PATH=%s/fake:$PATH "
			    "HOFF_APT_WAIT=0 '%s/tests/deps.sh' nosuchpkg "
			    "> out 2> err",
			    dir, tu_src_dir()),
			 100);
	assert_true(contains("err", "Could not get lock"));
}

/* (issue 34, 12) --exact's table names both overheads as the README's
 * glossary does: tiny's plan takes 12 ms, its lower bound, on 8 ms of
 * compute: 0.00% over bound, 50.00% over compute. When exact returns
 * greedy's schedule (here the time limit runs out before the model is
 * built), the first line of --exact and compare says so. */
static void test_exact_reports(void **state)
{
	(void)state;
	need_src();
	const char *d = tu_src_dir();
	static const struct step st1[] = {
		EXIT(0, "$H --exact '%s/data/tiny.json' --quiet > out"),
		HAS("out", " over_bound over_compute "),
		HAS("out", " 0.00%       50.00% "),
		LACKS("out", "exact returns greedy's schedule"),
	};
	RUN_STEPS(st1, d);
	const char *greedy = "exact returns greedy's schedule: --time-limit "
			     "1e-06 s: the time limit ran out";
	assert_int_equal(sh("$H --exact '%s/data/tiny.json' --time-limit 1e-6 "
			    "--quiet | head -1 > first",
			    d),
			 0);
	assert_true(contains("first", greedy));
	assert_int_equal(sh("$H compare '%s/data/tiny.json' --time-limit 1e-6 "
			    "--quiet | head -1 > first",
			    d),
			 0);
	assert_true(contains("first", greedy));
	/* random7-train: greedy's 311427072 B is 4 B under the bound over
	 * the candidates, and exact returns it; the table said "0.000%" */
	const char *sd = tu_shared_dir();
	if (!sd)
		return;
	static const struct step st2[] = {
		EXIT(0, "$H compare "
			"'%s/witness/exact/random7-train.graph.json' "
			"--quiet > out"),
		HAS("out", "exact returns greedy's schedule: the "
			   "decoded schedule simulated worse"),
		HAS("out", " 311427072       311427076     below "),
		LACKS("out", "0.000%"),
		HAS("out", "below: a schedule under bound_over_cand"),
	};
	RUN_STEPS(st2, sd);
}

/* Graphs with nothing to move: one op, and none. Under the sanitizer
 * build every planner (and a budget) runs clean, exit 0: no "runtime
 * error" (UBSan's qsort(NULL, 0) in greedy's refine_best, issue 34 item
 * 4, aborted them with exit 1; greedy's fix). */
static void test_nothing_to_move(void **state)
{
	(void)state;
	need_bin();
	static const char *const graphs[] = {
		"one.json",
		"{\"format\": \"hoffopt.graph\", \"version\": 1, \"name\": "
		"\"one\", \"machine\": {\"device\": {\"name\": \"d\", "
		"\"memory_bytes\": 100000000, \"flops_per_s\": 7e14, "
		"\"mem_bandwidth_Bps\": 3e12, \"op_overhead_s\": 0}, "
		"\"tiers\": [{\"name\": \"host\", \"capacity_bytes\": 1e12, "
		"\"h2d_Bps\": 1e9, \"d2h_Bps\": 1e9, \"latency_s\": 0}]}, "
		"\"tensors\": [{\"id\": \"x\", \"bytes\": 1000000, \"kind\": "
		"\"input\"}, {\"id\": \"y\", \"bytes\": 1000000, \"kind\": "
		"\"output\"}], \"ops\": [{\"id\": \"op0\", \"kind\": \"mm\", "
		"\"inputs\": [\"x\"], \"outputs\": [\"y\"], \"time_s\": "
		"0.001}]}",
		"zero.json",
		"{\"format\": \"hoffopt.graph\", \"version\": 1, \"name\": "
		"\"zero\", \"machine\": {\"device\": {\"name\": \"d\", "
		"\"memory_bytes\": 100000000, \"flops_per_s\": 7e14, "
		"\"mem_bandwidth_Bps\": 3e12, \"op_overhead_s\": 0}, "
		"\"tiers\": [{\"name\": \"host\", \"capacity_bytes\": 1e12, "
		"\"h2d_Bps\": 1e9, \"d2h_Bps\": 1e9, \"latency_s\": 0}]}, "
		"\"tensors\": [], \"ops\": []}",
	};
	static const char *const cmds[] = {
		"--greedy %s -o s.json",
		"--exact %s --quiet",
		"compare %s --quiet",
		"--greedy %s --budget 100%%",
		"--exact %s --budget 100%% --quiet",
	};
	int bad = 0;
	for (size_t i = 0; i < 4; i += 2) {
		put(graphs[i], graphs[i + 1]);
		for (size_t k = 0; k < sizeof cmds / sizeof *cmds; k++) {
			char cmd[256];
			snprintf(cmd, sizeof cmd, cmds[k], graphs[i]);
			int rc = sh("$H %s > out 2> err", cmd);
			char *t = slurp("err");
			if (rc != 0 || strstr(t, "runtime error") ||
			    strstr(t, "Sanitizer")) {
				print_message("hoffopt %s: exit %d\n%s\n", cmd,
					      rc, t);
				bad++;
			}
			free(t);
		}
	}
	assert_int_equal(bad, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_budget_bytes),
		cmocka_unit_test(test_frac),
		cmocka_unit_test(test_stop),
		cmocka_unit_test(test_budget_of_graph),
		cmocka_unit_test(test_json_summary),
		cmocka_unit_test(test_exit_codes),
		cmocka_unit_test(test_out_fifo),
		cmocka_unit_test(test_out_device_node),
		cmocka_unit_test(test_out_symlink_mode),
		cmocka_unit_test(test_out_long_name),
		cmocka_unit_test(test_out_tmp_not_followed),
		cmocka_unit_test(test_out_is_input),
		cmocka_unit_test(test_stdout_full),
		cmocka_unit_test(test_plan_over_device),
		cmocka_unit_test(test_run_fits_size),
		cmocka_unit_test(test_plan_falls_back_to_device),
		cmocka_unit_test(test_tier_capacity),
		cmocka_unit_test(test_fetch_sum_message),
		cmocka_unit_test(test_budget_written),
		cmocka_unit_test(test_recompute_flag),
		cmocka_unit_test(test_escaped_ids),
		cmocka_unit_test(test_option_messages),
		cmocka_unit_test(test_corrupt_step),
		cmocka_unit_test(test_exact_time_limit),
		cmocka_unit_test(test_exact_claims),
		cmocka_unit_test(test_run_outputs_refused),
		cmocka_unit_test(test_sigterm_removes_tmp),
		cmocka_unit_test(test_sigint_removes_tmp),
		cmocka_unit_test(test_pair_fails_whole),
		cmocka_unit_test(test_budget_over_device),
		cmocka_unit_test(test_mem_available),
		cmocka_unit_test(test_run_memory_refused),
		cmocka_unit_test(test_size_scale_rounding),
		cmocka_unit_test(test_number_messages),
		cmocka_unit_test(test_exact_bytes),
		cmocka_unit_test(test_small_things),
		cmocka_unit_test(test_deps_waits_for_lock),
		cmocka_unit_test(test_nothing_to_move),
		cmocka_unit_test(test_exact_reports),
	};
	return cmocka_run_group_tests(tests, setup_bin, teardown_bin);
}
