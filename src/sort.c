/* sort.c: hoff_sort_ctx, a stable merge sort with a context argument.
 * Runs of up to RUN elements are sorted by insertion, then merged
 * bottom-up through a scratch buffer; without one (out of memory), the
 * runs are merged in place by rotations (the merge without a buffer of
 * Dudzinski and Dydek), which keeps equal elements in order too, so both
 * paths give the same array. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hoff.h"
#include "sort.h"

#define RUN 16 /* elements sorted by insertion before merging */

typedef struct sorter {
	char *a;   /* the array */
	size_t sz; /* element size */
	hoff_cmp_ctx cmp;
	void *ctx;
} sorter;

#define AT(s, i) ((s)->a + (i) * (s)->sz)

/* Swaps the elements at x and y, byte by byte (any size). */
static void swap_el(size_t sz, char *x, char *y)
{
	for (size_t k = 0; k < sz; k++) {
		char t = x[k];
		x[k] = y[k];
		y[k] = t;
	}
}

/* Reverses elements [lo, hi). */
static void reverse(const sorter *s, size_t lo, size_t hi)
{
	while (hi > lo + 1) {
		hi--;
		swap_el(s->sz, AT(s, lo), AT(s, hi));
		lo++;
	}
}

/* [lo, mid) [mid, hi) -> [mid, hi) [lo, mid), by three reversals. */
static void rotate(const sorter *s, size_t lo, size_t mid, size_t hi)
{
	if (lo == mid || mid == hi)
		return;
	reverse(s, lo, mid);
	reverse(s, mid, hi);
	reverse(s, lo, hi);
}

/* Stable insertion sort of [lo, hi), moving by swaps. */
static void insertion(const sorter *s, size_t lo, size_t hi)
{
	for (size_t i = lo + 1; i < hi; i++)
		for (size_t j = i;
		     j > lo && s->cmp(AT(s, j - 1), AT(s, j), s->ctx) > 0; j--)
			swap_el(s->sz, AT(s, j - 1), AT(s, j));
}

/* First index in [lo, hi) whose element is not below (strict: is above,
 * when upper) the element at key. */
static size_t bound(const sorter *s, size_t lo, size_t hi, const char *key,
		    int upper)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = s->cmp(AT(s, mid), key, s->ctx);
		if (c < 0 || (upper && c == 0))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Merges the sorted [lo, mid) and [mid, hi) in place, stably. */
static void merge_inplace(const sorter *s, size_t lo, size_t mid, size_t hi)
{
	if (lo == mid || mid == hi)
		return;
	if (hi - lo == 2) {
		if (s->cmp(AT(s, mid), AT(s, lo), s->ctx) < 0)
			swap_el(s->sz, AT(s, lo), AT(s, mid));
		return;
	}
	size_t cut1, cut2;
	if (mid - lo > hi - mid) {
		cut1 = lo + (mid - lo) / 2;
		cut2 = bound(s, mid, hi, AT(s, cut1), 0);
	} else {
		cut2 = mid + (hi - mid) / 2;
		cut1 = bound(s, lo, mid, AT(s, cut2), 1);
	}
	rotate(s, cut1, mid, cut2);
	size_t nmid = cut1 + (cut2 - mid);
	merge_inplace(s, lo, cut1, nmid);
	merge_inplace(s, nmid, cut2, hi);
}

/* Merges the sorted [lo, mid) and [mid, hi) through tmp (room for
 * mid - lo elements), stably: on a tie the left element goes first. */
static void merge_buf(const sorter *s, char *tmp, size_t lo, size_t mid,
		      size_t hi)
{
	size_t sz = s->sz;
	if (s->cmp(AT(s, mid - 1), AT(s, mid), s->ctx) <= 0)
		return; /* already in order */
	memcpy(tmp, AT(s, lo), (mid - lo) * sz);
	size_t i = 0, ni = mid - lo, j = mid, k = lo;
	while (i < ni && j < hi) {
		if (s->cmp(AT(s, j), tmp + i * sz, s->ctx) < 0)
			memcpy(AT(s, k++), AT(s, j++), sz);
		else
			memcpy(AT(s, k++), tmp + (i++) * sz, sz);
	}
	if (i < ni)
		memcpy(AT(s, k), tmp + i * sz, (ni - i) * sz);
}

/* The sort, through a scratch buffer when buffered and one can be
 * allocated, else in place. */
static void sort(void *base, size_t n, size_t size, hoff_cmp_ctx cmp, void *ctx,
		 int buffered)
{
	if (n < 2 || size == 0)
		return;
	sorter s = {.a = base, .sz = size, .cmp = cmp, .ctx = ctx};
	for (size_t lo = 0; lo < n; lo += RUN)
		insertion(&s, lo, lo + RUN < n ? lo + RUN : n);
	if (n <= RUN)
		return;
	/* a left run is never longer than n */
	char *tmp = buffered ? hoff_alloc(n, size) : NULL;
	for (size_t w = RUN; w < n; w *= 2) {
		for (size_t lo = 0; lo + w < n; lo += 2 * w) {
			size_t mid = lo + w, hi = mid + w < n ? mid + w : n;
			if (tmp)
				merge_buf(&s, tmp, lo, mid, hi);
			else
				merge_inplace(&s, lo, mid, hi);
		}
		if (w > SIZE_MAX / 2)
			break;
	}
	free(tmp);
}

void hoff_sort_ctx(void *base, size_t n, size_t size, hoff_cmp_ctx cmp,
		   void *ctx)
{
	sort(base, n, size, cmp, ctx, 1);
}

void hoff_sort_ctx_inplace(void *base, size_t n, size_t size, hoff_cmp_ctx cmp,
			   void *ctx)
{
	sort(base, n, size, cmp, ctx, 0);
}
