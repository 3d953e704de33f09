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
	} units[] = {{"", 1},		    {"B", 1},
		     {"KiB", 1024.0},	    {"MiB", 1048576.0},
		     {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
		     {"KB", 1e3},	    {"MB", 1e6},
		     {"GB", 1e9},	    {"TB", 1e12},
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
	fprintf(f, "\"peak_bytes\": %" PRId64 ", ", s->peak_bytes);
	hoff_json_time(f, "makespan_s", s->makespan_ps);
	fputs(", ", f);
	hoff_json_time(f, "compute_s", s->compute_ps);
	fputs(", ", f);
	hoff_json_time(f, "stall_s", s->stall_ps);
	fprintf(f, ", \"h2d_bytes\": %" PRId64 ", \"d2h_bytes\": %" PRId64,
		s->h2d_bytes, s->d2h_bytes);
}
