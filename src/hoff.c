/* hoff.c: shared helpers — errors, checked allocation, the ps clock. */
#define _DEFAULT_SOURCE /* madvise's MADV_HUGEPAGE */
#include "hoff.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <sys/mman.h>

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
	if (!(ps < (double)HOFF_PS_LIMIT))
		return -1;
	return (int64_t)ps;
}

/* Big arrays (a million ops' worth) are asked to sit on transparent huge
 * pages: the kernel then faults and clears them 2 MiB at a time instead
 * of 4 KiB, which on a million-op graph is a good part of the run. Only
 * whole 2 MiB pages inside the block are advised; advice is advice, so a
 * kernel without THP (or with it off) just ignores it. */
#define HUGE_PAGE ((uintptr_t)2 << 20)
static void *advise_huge(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
	if (p && bytes >= 2 * HUGE_PAGE) {
		uintptr_t a = ((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
		uintptr_t b = ((uintptr_t)p + bytes) & ~(HUGE_PAGE - 1);
		if (b > a)
			(void)madvise((void *)a, b - a, MADV_HUGEPAGE);
	}
#else
	(void)bytes;
#endif
	return p;
}

void hoff_tune_malloc(void)
{
#ifdef __GLIBC__
	/* Keep freed blocks under 32 MiB in the process for the next plan
	 * or simulation instead of unmapping them and faulting them in
	 * again: greedy plans and simulates a dozen times. */
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
}

void *hoff_alloc(size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		return NULL;
	size_t bytes = n && size ? n * size : 1;
	return advise_huge(malloc(bytes), bytes);
}

void *hoff_zalloc(size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		return NULL;
	return advise_huge(calloc(n ? n : 1, size ? size : 1),
			   n && size ? n * size : 1);
}

void *hoff_realloc(void *p, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		return NULL;
	size_t bytes = n && size ? n * size : 1;
#ifdef __GLIBC__
	/* A block growing past two huge pages from the heap is moved by
	 * hand: realloc would copy it into fresh memory before the advice,
	 * one 4 KiB fault at a time. Blocks of 32 MiB and more are mapped
	 * blocks, which realloc remaps without a copy. */
	size_t old = p ? malloc_usable_size(p) : 0;
	if (p && bytes >= 2 * HUGE_PAGE && old < bytes && old < (32u << 20)) {
		void *q = hoff_alloc(bytes, 1);
		if (!q)
			return NULL;
		memcpy(q, p, old);
		free(p);
		return q;
	}
#endif
	return advise_huge(realloc(p, bytes), bytes);
}

bool hoff_resize(void **p, size_t n, size_t size)
{
	void *q = hoff_realloc(*p, n, size);
	if (!q)
		return false;
	*p = q;
	return true;
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

void hoff_say(const hoff_progress *p, const char *fmt, ...)
{
	if (!p->fn)
		return;
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	p->fn(p->ctx, line);
}

double hoff_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

const char *hoff_escape_id(char *buf, size_t len, const char *id)
{
	size_t n = 0;
	for (const unsigned char *c = (const unsigned char *)id; *c; c++) {
		char esc[8];
		int k;
		if (*c == '"' || *c == '\\')
			k = snprintf(esc, sizeof esc, "\\%c", *c);
		else
			k = snprintf(esc, sizeof esc, "%c", *c);
		if (n + (size_t)k >= len)
			break;
		memcpy(buf + n, esc, (size_t)k);
		n += (size_t)k;
	}
	buf[n] = '\0';
	return buf;
}
