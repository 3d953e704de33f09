/* hoff.c: shared helpers — errors, checked allocation, the ps clock. */
#include "hoff.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

hoff_status hoff_seterr(hoff_err *e, hoff_status st, const char *fmt, ...)
{
	if (e) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(e->msg, sizeof e->msg, fmt, ap);
		va_end(ap);
	}
	return st;
}

void hoff_require_fail(const char *fn, const char *cond)
{
	fprintf(stderr, "hoffopt: internal misuse in %s: %s\n", fn, cond);
	abort();
}

int64_t hoff_ps(double x_s)
{
	if (!isfinite(x_s) || x_s < 0)
		return -1;
	double ps = floor(x_s * 1e12 + 0.5);
	if (!(ps < 4611686018427387904.0)) /* 2^62 */
		return -1;
	return (int64_t)ps;
}

void *hoff_alloc(size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		return NULL;
	return malloc(n && size ? n * size : 1);
}

void *hoff_zalloc(size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		return NULL;
	return calloc(n ? n : 1, size ? size : 1);
}

void *hoff_realloc(void *p, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		return NULL;
	return realloc(p, n && size ? n * size : 1);
}

bool hoff_grow(void **p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return true;
	size_t c = *cap ? *cap : 16;
	while (c < need) {
		if (c > SIZE_MAX / 2)
			return false;
		c *= 2;
	}
	void *q = hoff_realloc(*p, c, size);
	if (!q)
		return false;
	*p = q;
	*cap = c;
	return true;
}

char *hoff_strdup(const char *s)
{
	if (!s)
		return NULL;
	size_t n = strlen(s) + 1;
	char *d = malloc(n);
	if (d)
		memcpy(d, s, n);
	return d;
}
