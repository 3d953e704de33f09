/* cli.c: what the commands share (cli.h). */
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "fileio.h"

/* Longest path hoff_cli_mem_available builds. */
#define MEM_PATH 4096

int hoff_cli_exit(hoff_status st)
{
	switch (st) {
	case HOFF_OK:
		return 0;
	case HOFF_EINVALID:
		return HOFF_EXIT_INVALID;
	case HOFF_EINTERNAL:
		return HOFF_EXIT_INTERNAL;
	default:
		return HOFF_EXIT_BAD;
	}
}

const char *hoff_cli_safe(const char *s, char *buf, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p && *p >= 0x20 && *p != 0x7f)
		p++;
	if (!*p || n == 0)
		return s;
	size_t w = 0;
	for (p = (const unsigned char *)s; *p && w + 5 < n; p++) {
		if (*p < 0x20 || *p == 0x7f)
			w += (size_t)snprintf(buf + w, n - w, "\\x%02x", *p);
		else
			buf[w++] = (char)*p;
	}
	buf[w] = '\0';
	return buf;
}

int hoff_cli_fail(hoff_status st, const hoff_err *e)
{
	char buf[4 * HOFF_ERRLEN + 1];
	fprintf(stderr, "hoffopt: %s\n",
		hoff_cli_safe(e->msg, buf, sizeof buf));
	return hoff_cli_exit(st);
}

int hoff_cli_clobbers(const char *const *outs, int nouts,
		      const char *const *ins, int nins)
{
	for (int i = 0; i < nouts; i++) {
		for (int j = 0; outs[i] && j < nins; j++)
			if (hoff_same_file(outs[i], ins[j])) {
				char a[1024], b[1024];
				fprintf(stderr,
					"hoffopt: output %s is the input %s: "
					"refusing to overwrite it\n",
					hoff_cli_safe(outs[i], a, sizeof a),
					hoff_cli_safe(ins[j], b, sizeof b));
				return HOFF_EXIT_BAD;
			}
		for (int j = 0; outs[i] && j < i; j++)
			if (outs[j] && (hoff_same_file(outs[i], outs[j]) ||
					(strcmp(outs[i], "-") != 0 &&
					 strcmp(outs[i], outs[j]) == 0))) {
				char a[1024];
				fprintf(stderr,
					"hoffopt: %s is named as two outputs\n",
					hoff_cli_safe(outs[i], a, sizeof a));
				return HOFF_EXIT_BAD;
			}
	}
	return 0;
}

int hoff_cli_close_stdout(int rc)
{
	/* Report the first error: what is buffered is written by fflush. */
	bool bad = fflush(stdout) != 0 || ferror(stdout);
	int err = errno;
	if (fclose(stdout) != 0 && !bad) {
		bad = true;
		err = errno;
	}
	if (!bad || (rc != 0 && rc != HOFF_EXIT_INVALID))
		return rc; /* a failed command said why already */
	fprintf(stderr, "hoffopt: cannot write <stdout>: %s\n",
		strerror(err ? err : EIO));
	return HOFF_EXIT_BAD;
}

int hoff_cli_bad(const char *fmt, const char *arg)
{
	fprintf(stderr, "hoffopt: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	return HOFF_EXIT_BAD;
}

bool hoff_cli_stop(int *rc, bool help, const char *usage, bool operands,
		   const char *missing)
{
	if (*rc)
		return true;
	if (help) {
		fputs(usage, stdout);
		return true;
	}
	if (!operands) {
		*rc = hoff_cli_bad("%s", missing);
		return true;
	}
	return false;
}

/* A decimal number as written, held exactly: mant × 10^exp10. */
typedef struct dec {
	uint64_t mant; /* its significant digits, at most 19 */
	int64_t exp10; /* bounded to +-100000 (past it: 0 or too large) */
	bool neg;      /* a leading '-' */
	bool plain;    /* digits alone: no point, no exponent */
	bool inexact;  /* nonzero digits past the 19th were dropped */
} dec;

/* Reads the decimal number at the start of s, spaces before it skipped:
 * [+-]digits[.digits][(e|E)[+-]digits], at least one digit, nothing else
 * (no hex, no inf or nan, which strtod would take). Returns the first
 * byte after it, or NULL when s does not start with one. */
static const char *scan_dec(const char *s, dec *d)
{
	memset(d, 0, sizeof *d);
	d->plain = true;
	while (*s == ' ')
		s++;
	if (*s == '+' || *s == '-')
		d->neg = *s++ == '-';
	int nd = 0, digits = 0;
	bool point = false;
	for (;; s++) {
		if (*s == '.' && !point) {
			point = true;
			d->plain = false;
			continue;
		}
		if (*s < '0' || *s > '9')
			break;
		digits++;
		unsigned dg = (unsigned)(*s - '0');
		if (nd < 19 && (nd > 0 || dg > 0)) {
			d->mant = d->mant * 10 + dg;
			nd++;
			d->exp10 -= point;
		} else if (nd >= 19) {
			/* a digit dropped: before the point, it counts */
			d->exp10 += !point;
			d->inexact |= point && dg > 0;
		} else {
			d->exp10 -= point; /* a leading zero after the point */
		}
	}
	if (!digits)
		return NULL;
	if (*s == 'e' || *s == 'E') {
		const char *q = s + 1;
		bool eneg = *q == '-';
		q += *q == '+' || *q == '-';
		if (*q < '0' || *q > '9')
			return NULL;
		int64_t x = 0;
		for (; *q >= '0' && *q <= '9'; q++)
			x = x < 100000 ? x * 10 + (*q - '0') : x;
		d->exp10 += eneg ? -x : x;
		d->plain = false;
		s = q;
	}
	if (d->mant == 0)
		d->exp10 = 0;
	while (d->mant && d->mant % 10 == 0) {
		d->mant /= 10;
		d->exp10++;
	}
	return s;
}

/* Whether s is nothing but spaces. */
static bool blank(const char *s)
{
	while (*s == ' ')
		s++;
	return !*s;
}

/* Reads s as a plain decimal number, spaces around it allowed, into *v
 * (strtod's correctly rounded value); `unit`, when not NULL, may follow
 * it directly. false otherwise. */
static bool scan_real(const char *s, const char *unit, double *v,
		      bool *had_unit)
{
	dec d;
	const char *end = scan_dec(s, &d);
	if (!end)
		return false;
	*had_unit = unit && !strncmp(end, unit, strlen(unit));
	if (!blank(*had_unit ? end + strlen(unit) : end))
		return false;
	*v = strtod(s, NULL); /* the same digits, validated above */
	return isfinite(*v);
}

double hoff_cli_frac(const char *s)
{
	double v;
	bool pc;
	if (!scan_real(s, "%", &v, &pc) || v < 0)
		return -1;
	return pc ? v / 100.0 : v;
}

/* floor(d × num / den) into *v, exactly (num, den > 0); 1 when the
 * division left a remainder (or d was inexact), 0 when exact, -2 when
 * the value passes INT64_MAX. */
static int dec_scale(const dec *d, uint64_t num, uint64_t den, int64_t *v)
{
	__extension__ typedef unsigned __int128 u128;
	const u128 lim = (u128)INT64_MAX;
	u128 x = (u128)d->mant * num, q = den;
	for (int64_t k = 0; k < d->exp10 && x; k++) {
		if (x / den > lim) /* and more so once multiplied */
			return -2;
		x *= 10;
	}
	bool zero = false;
	for (int64_t k = d->exp10; k < 0 && !zero; k++) {
		if (q > x / 10) /* x / (q × 10) is 0, and stays 0 */
			zero = true;
		else
			q *= 10;
	}
	if (zero) {
		*v = 0;
		return x ? 1 : 0;
	}
	if (x / q > lim)
		return -2;
	*v = (int64_t)(x / q);
	return x % q || d->inexact;
}

int64_t hoff_cli_budget_bytes(const char *s, int64_t noffload_peak)
{
	static const struct {
		const char *unit;
		uint64_t num, den; /* den 0: a percentage of the peak */
	} units[] = {{"", 1, 1},
		     {"B", 1, 1},
		     {"KiB", (uint64_t)1 << 10, 1},
		     {"MiB", (uint64_t)1 << 20, 1},
		     {"GiB", (uint64_t)1 << 30, 1},
		     {"TiB", (uint64_t)1 << 40, 1},
		     {"KB", 1000, 1},
		     {"MB", 1000000, 1},
		     {"GB", 1000000000, 1},
		     {"TB", 1000000000000, 1},
		     {"%", 0, 0}};
	dec d;
	const char *end = scan_dec(s, &d);
	if (!end || (d.neg && d.mant))
		return -1;
	while (*end == ' ')
		end++;
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
		size_t n = strlen(units[i].unit);
		if (strncmp(end, units[i].unit, n) != 0 || !blank(end + n) ||
		    (n == 0 && *end))
			continue;
		int64_t b = 0;
		int rc = units[i].den
				 ? dec_scale(&d, units[i].num, units[i].den, &b)
				 : dec_scale(&d,
					     (uint64_t)(noffload_peak > 0
								? noffload_peak
								: 0),
					     100, &b);
		if (rc == -2)
			return HOFF_CLI_TOO_LARGE;
		if (rc == 1 && units[i].num == 1 && units[i].den == 1)
			return -1; /* bytes are whole */
		return b;
	}
	return -1;
}

hoff_status hoff_cli_noffload(const hoff_graph *g, bool snap,
			      hoff_sim_result *r, hoff_err *e)
{
	hoff_sched *s = hoff_sched_noffload(g);
	if (!s)
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	hoff_sim_opts o = hoff_sim_defaults();
	o.budget_bytes = INT64_MAX; /* measure, do not judge */
	hoff_status st = hoff_sim_run(g, s, &o, r, e);
	if (st == HOFF_OK && snap) {
		o.snapshot_ps = r->peak_ps;
		hoff_sim_result_free(r);
		st = hoff_sim_run(g, s, &o, r, e);
	}
	hoff_sched_free(s);
	return st;
}

hoff_status hoff_cli_budget(const hoff_graph *g, const char *arg,
			    int64_t *budget, hoff_err *e)
{
	*budget = HOFF_NONE;
	if (!arg)
		return HOFF_OK;
	int64_t peak = 0;
	if (strchr(arg, '%')) {
		hoff_sim_result r = {0};
		hoff_status st = hoff_cli_noffload(g, false, &r, e);
		peak = r.summary.peak_bytes;
		hoff_sim_result_free(&r);
		if (st != HOFF_OK)
			return st;
	}
	*budget = hoff_cli_budget_bytes(arg, peak);
	if (*budget == HOFF_CLI_TOO_LARGE)
		return hoff_seterr(e, HOFF_EUSAGE,
				   "--budget: '%s' is too large (at most "
				   "9223372036854775807 B)",
				   arg);
	if (*budget < 0)
		return hoff_seterr(e, HOFF_EUSAGE,
				   "--budget: '%s' is not a byte count "
				   "(e.g. 80000000, 40GiB, 75%%)",
				   arg);
	return HOFF_OK;
}

hoff_status hoff_cli_plan_budget(const hoff_graph *g, const char *arg,
				 int64_t *budget, bool *capped, hoff_err *e)
{
	*capped = false;
	hoff_status st = hoff_cli_budget(g, arg, budget, e);
	if (st != HOFF_OK || *budget <= g->device.memory_bytes)
		return st;
	char safe[256];
	fprintf(stderr,
		"hoffopt: note: --budget %s is %" PRId64 " B, over the "
		"device's %" PRId64 " B: planning for the device's memory (a "
		"plan over it could not run)\n",
		hoff_cli_safe(arg, safe, sizeof safe), *budget,
		g->device.memory_bytes);
	*budget = g->device.memory_bytes;
	*capped = true;
	return HOFF_OK;
}

void hoff_json_time(FILE *f, const char *key, int64_t ps)
{
	fprintf(f, "\"%s\": %.17g", key, hoff_s(ps));
}

void hoff_json_summary(FILE *f, const hoff_summary *s)
{
	hoff_json_summary_v2(f, s, false);
}

void hoff_json_summary_v2(FILE *f, const hoff_summary *s, bool v2)
{
	fprintf(f, "\"peak_bytes\": %" PRId64 ", ", s->peak_bytes);
	hoff_json_time(f, "makespan_s", s->makespan_ps);
	fputs(", ", f);
	hoff_json_time(f, "compute_s", s->compute_ps);
	fputs(", ", f);
	if (v2 || s->recompute_ps) {
		hoff_json_time(f, "recompute_s", s->recompute_ps);
		fputs(", ", f);
	}
	hoff_json_time(f, "stall_s", s->stall_ps);
	fprintf(f, ", \"h2d_bytes\": %" PRId64 ", \"d2h_bytes\": %" PRId64,
		s->h2d_bytes, s->d2h_bytes);
}

bool hoff_cli_int(const char *s, int64_t lo, int64_t hi, int64_t *v)
{
	dec d;
	const char *end = scan_dec(s, &d);
	int64_t x = 0;
	if (!end || !blank(end) || !d.plain || dec_scale(&d, 1, 1, &x) != 0)
		return false;
	if (d.neg)
		x = -x;
	if (x < lo || x > hi)
		return false;
	*v = x;
	return true;
}

bool hoff_cli_real(const char *s, double *v)
{
	double x;
	bool unit;
	if (!scan_real(s, NULL, &x, &unit) || x <= 0)
		return false;
	*v = x;
	return true;
}

static void say(void *ctx, const char *line)
{
	(void)ctx;
	fprintf(stderr, "hoffopt: %s\n", line);
}

const hoff_progress hoff_cli_progress = {say, NULL};

/* Whether v is one of the '|'-separated words of list. */
static bool one_of(const char *v, const char *list)
{
	size_t n = strlen(v);
	for (const char *w = list; *w;) {
		const char *bar = strchr(w, '|');
		size_t len = bar ? (size_t)(bar - w) : strlen(w);
		if (len == n && !strncmp(w, v, n))
			return true;
		if (!bar)
			break;
		w = bar + 1;
	}
	return false;
}

/* Stores value v of option o into dst; false when v is not one it takes. */
static bool store(const hoff_opt *o, const char *v, void *dst)
{
	char *field = (char *)dst + o->off;
	switch (o->kind) {
	case HOFF_OPT_STR:
		if (o->set && !one_of(v, o->set))
			return false;
		*(const char **)(void *)field = v;
		return true;
	case HOFF_OPT_INT:
		return hoff_cli_int(v, o->lo, o->hi, (int64_t *)(void *)field);
	case HOFF_OPT_REAL:
		return hoff_cli_real(v, (double *)(void *)field);
	default:
		return false;
	}
}

/* The row of table named by a (for "--name=value", the part before '=',
 * with *val the value; else *val NULL); NULL when none is. */
static const hoff_opt *find(const char *a, const hoff_opt *table, size_t n,
			    const char **val)
{
	const char *eq = strncmp(a, "--", 2) ? NULL : strchr(a, '=');
	size_t len = eq ? (size_t)(eq - a) : strlen(a);
	*val = eq ? eq + 1 : NULL;
	for (size_t j = 0; j < n; j++)
		if (strlen(table[j].name) == len &&
		    !strncmp(a, table[j].name, len))
			return &table[j];
	return NULL;
}

/* The common options' rows, into the HOFF_CLI_ARGS fields; bit 0: every
 * command of hoff_cli_command takes it. */
static const struct {
	unsigned bit;
	hoff_opt opt;
} common_rows[] = {
	{0, HOFF_FLAG("--help", hoff_cli_args, help)},
	{0, HOFF_FLAG("-h", hoff_cli_args, help)},
	{HOFF_CLI_JSON, HOFF_FLAG("--json", hoff_cli_args, json)},
	{HOFF_CLI_BUDGET, HOFF_STR("--budget", hoff_cli_args, budget)},
	{HOFF_CLI_TRACE, HOFF_STR("--trace", hoff_cli_args, trace)},
	{HOFF_CLI_OUT, HOFF_STR("-o", hoff_cli_args, out)},
};

/* The row named by a: one of table's, else (common >= 0) a common one
 * whose bit common has; *val as find's. NULL when none is. */
static const hoff_opt *lookup(const char *a, const hoff_opt *table, size_t n,
			      int common, const char **val)
{
	const hoff_opt *o = find(a, table, n, val);
	for (size_t j = 0; !o && common >= 0 && j < HOFF_NOPTS(common_rows);
	     j++)
		if (!common_rows[j].bit ||
		    (common_rows[j].bit & (unsigned)common))
			o = find(a, &common_rows[j].opt, 1, val);
	return o;
}

/* hoff_cli_parse, with the common options of mask common (-1: none). */
static int parse_words(int argc, char **argv, int from, const hoff_opt *table,
		       size_t n, int common, void *dst, const char **pos,
		       int maxpos, int *npos)
{
	for (int i = from; i < argc; i++) {
		const char *a = argv[i], *v;
		const hoff_opt *o = lookup(a, table, n, common, &v);
		if (!o && a[0] == '-' && a[1] != '\0')
			return hoff_cli_bad("unknown option '%s'", a);
		if (!o) {
			if (*npos >= maxpos)
				return hoff_cli_bad("unexpected argument '%s'",
						    a);
			pos[(*npos)++] = a;
			continue;
		}
		char *field = (char *)dst + o->off;
		bool value = o->kind != HOFF_OPT_FLAG &&
			     o->kind != HOFF_OPT_UNFLAG &&
			     o->kind != HOFF_OPT_CONST;
		if (!value && v)
			return hoff_cli_bad("option '%s' takes no value", a);
		switch (o->kind) {
		case HOFF_OPT_FLAG:
		case HOFF_OPT_UNFLAG:
			*(bool *)(void *)field = o->kind == HOFF_OPT_FLAG;
			continue;
		case HOFF_OPT_CONST:
			*(const char **)(void *)field = o->set;
			continue;
		default:
			break;
		}
		if (!v && i + 1 >= argc)
			return hoff_cli_bad("option '%s' needs a value", a);
		if (!v)
			v = argv[++i];
		if (!store(o, v, dst))
			return hoff_cli_bad(o->bad ? o->bad : "bad value '%s'",
					    v);
	}
	return 0;
}

int hoff_cli_parse(int argc, char **argv, int from, const hoff_opt *table,
		   size_t n, void *dst, const char **pos, int maxpos, int *npos)
{
	return parse_words(argc, argv, from, table, n, -1, dst, pos, maxpos,
			   npos);
}

bool hoff_cli_command(int argc, char **argv, const hoff_cli_spec *sp,
		      void *opts, int *rc)
{
	HOFF_REQUIRE(sp->npos >= 0 && sp->npos <= 2);
	/* the HOFF_CLI_ARGS fields, by offset as the table rows are */
	char *base = opts;
	const char **pos =
		(const char **)(void *)(base + offsetof(hoff_cli_args, pos));
	int *npos = (int *)(void *)(base + offsetof(hoff_cli_args, npos));
	const bool *help =
		(const bool *)(void *)(base + offsetof(hoff_cli_args, help));
	*rc = parse_words(argc, argv, sp->from, sp->table, sp->nopts,
			  (int)sp->common, opts, pos, sp->npos, npos);
	if (!*rc && sp->finish)
		*rc = sp->finish(opts);
	if (!hoff_cli_stop(rc, *help, sp->usage,
			   !sp->missing || *npos == sp->npos, sp->missing))
		return false;
	if (!*rc && *help && sp->usage_more)
		fputs(sp->usage_more, stdout);
	return true;
}

void hoff_cli_bytes(FILE *f, int64_t b)
{
	double v = (double)b;
	const char *u = "B";
	if (v >= 1073741824.0) {
		v /= 1073741824.0;
		u = "GiB";
	} else if (v >= 1048576.0) {
		v /= 1048576.0;
		u = "MiB";
	} else if (v >= 1024.0) {
		v /= 1024.0;
		u = "KiB";
	}
	if (*u == 'B')
		fprintf(f, "%" PRId64 " B", b);
	else
		fprintf(f, "%" PRId64 " B (%.2f %s)", b, v, u);
}

double hoff_cli_over(int64_t ps, int64_t base_ps)
{
	return base_ps ? (double)ps / (double)base_ps - 1.0 : 0;
}

void hoff_json_overhead(FILE *f, const hoff_summary *s)
{
	if (s->compute_ps == 0)
		fprintf(f, "\"overhead\": null");
	else
		fprintf(f, "\"overhead\": %.17g",
			hoff_cli_over(s->makespan_ps, s->compute_ps));
}

/* The first number in file root/path, or -1 (missing, unreadable, "max"
 * or anything but a number). */
static int64_t read_num(const char *root, const char *path)
{
	char name[MEM_PATH], buf[64] = "";
	snprintf(name, sizeof name, "%s%s", root, path);
	FILE *f = fopen(name, "r");
	if (!f)
		return -1;
	bool ok = fgets(buf, sizeof buf, f) != NULL;
	fclose(f);
	int64_t v;
	char *nl = strchr(buf, '\n');
	if (nl)
		*nl = '\0';
	return ok && hoff_cli_int(buf, 0, INT64_MAX, &v) ? v : -1;
}

/* What one cgroup hierarchy mounted at root/mnt leaves to the process in
 * its cgroup cg (a path under the mount) and every cgroup above it:
 * min(limit - usage) over the levels that exist. INT64_MAX: no limit. */
static int64_t cgroup_room(const char *root, const char *mnt, const char *cg,
			   const char *limit, const char *usage)
{
	char dir[MEM_PATH];
	int64_t room = INT64_MAX;
	snprintf(dir, sizeof dir, "%s%s", mnt, strcmp(cg, "/") ? cg : "");
	for (;;) {
		char lp[MEM_PATH + 64], up[MEM_PATH + 64];
		snprintf(lp, sizeof lp, "%s/%s", dir, limit);
		snprintf(up, sizeof up, "%s/%s", dir, usage);
		int64_t lim = read_num(root, lp), use = read_num(root, up);
		if (lim >= 0 && lim < ((int64_t)1 << 60)) { /* v1: none */
			int64_t left = lim - (use > 0 ? use : 0);
			room = left < 0 ? 0 : left < room ? left : room;
		}
		char *slash = strrchr(dir, '/');
		if (strlen(dir) <= strlen(mnt) || !slash)
			break;
		*slash = '\0';
	}
	return room;
}

int64_t hoff_cli_mem_available(const char *root)
{
	char name[MEM_PATH], line[MEM_PATH];
	int64_t avail = INT64_MAX;
	snprintf(name, sizeof name, "%s/proc/meminfo", root);
	FILE *f = fopen(name, "r");
	while (f && fgets(line, sizeof line, f)) {
		long long kb;
		if (sscanf(line, "MemAvailable: %lld kB", &kb) == 1 &&
		    kb >= 0 && kb < INT64_MAX / 1024)
			avail = (int64_t)kb * 1024;
	}
	if (f)
		fclose(f);
	/* /proc/self/cgroup: "0::/path" (v2), "N:a,memory,b:/path" (v1) */
	snprintf(name, sizeof name, "%s/proc/self/cgroup", root);
	f = fopen(name, "r");
	while (f && fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = '\0';
		char *c1 = strchr(line, ':'),
		     *c2 = c1 ? strchr(c1 + 1, ':') : 0;
		if (!c2)
			continue;
		*c2 = '\0';
		const char *ctl = c1 + 1, *cg = c2 + 1;
		int64_t r = INT64_MAX;
		if (!*ctl) {
			r = cgroup_room(root, "/sys/fs/cgroup", cg,
					"memory.max", "memory.current");
			int64_t u = cgroup_room(root, "/sys/fs/cgroup/unified",
						cg, "memory.max",
						"memory.current");
			r = u < r ? u : r;
		} else if (strstr(ctl, "memory")) {
			r = cgroup_room(root, "/sys/fs/cgroup/memory", cg,
					"memory.limit_in_bytes",
					"memory.usage_in_bytes");
		}
		avail = r < avail ? r : avail;
	}
	if (f)
		fclose(f);
	return avail;
}
