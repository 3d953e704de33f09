/* cli.c: what the commands share (cli.h). */
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "outfile.h"

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

double hoff_cli_frac(const char *s)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || errno || !isfinite(v) || v < 0)
		return -1;
	if (!strcmp(end, "%"))
		return v / 100.0;
	return *end ? -1 : v;
}

int64_t hoff_cli_budget_bytes(const char *s, int64_t noffload_peak)
{
	static const struct {
		const char *unit;
		double scale; /* -1: a percentage */
	} units[] = {{"", 1},
		     {"B", 1},
		     {"KiB", 1024.0},
		     {"MiB", 1048576.0},
		     {"GiB", 1073741824.0},
		     {"TiB", 1099511627776.0},
		     {"KB", 1e3},
		     {"MB", 1e6},
		     {"GB", 1e9},
		     {"TB", 1e12},
		     {"%", -1}};
	errno = 0;
	char *end;
	double v = strtod(s, &end);
	if (end == s || errno || !isfinite(v) || v < 0)
		return -1;
	while (*end == ' ')
		end++;
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
		if (strcmp(end, units[i].unit) != 0)
			continue;
		double b = units[i].scale < 0
				   ? v / 100.0 * (double)noffload_peak
				   : v * units[i].scale;
		if (units[i].scale == 1 && b != floor(b))
			return -1; /* bytes are whole */
		/* 33.3% of 1000 B is 333 B, not the 332.99999... of the
		 * binary arithmetic */
		if (fabs(b - round(b)) <= 1e-9 * fmax(1, b))
			b = round(b);
		if (!(b < 9.0e18))
			return -1;
		return (int64_t)floor(b);
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
	if (*budget < 0)
		return hoff_seterr(e, HOFF_EUSAGE,
				   "--budget: '%s' is not a byte count "
				   "(e.g. 80000000, 40GiB, 75%%)",
				   arg);
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
	char *end;
	errno = 0;
	long long x = strtoll(s, &end, 10);
	if (end == s || *end || errno || x < lo || x > hi)
		return false;
	*v = x;
	return true;
}

bool hoff_cli_real(const char *s, double *v)
{
	char *end;
	errno = 0;
	double x = strtod(s, &end);
	if (end == s || *end || errno || !isfinite(x) || x <= 0)
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

int hoff_cli_parse(int argc, char **argv, int from, const hoff_opt *table,
		   size_t n, void *dst, const char **pos, int maxpos, int *npos)
{
	for (int i = from; i < argc; i++) {
		const char *a = argv[i];
		const hoff_opt *o = NULL;
		for (size_t j = 0; j < n && !o; j++)
			if (!strcmp(a, table[j].name))
				o = &table[j];
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
		if (i + 1 >= argc)
			return hoff_cli_bad("option '%s' needs a value", a);
		const char *v = argv[++i];
		if (!store(o, v, dst))
			return hoff_cli_bad(o->bad ? o->bad : "bad value '%s'",
					    v);
	}
	return 0;
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
