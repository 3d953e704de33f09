/* sort.h: one sort with a context argument for every caller (the solver,
 * greedy's refinement, the CLI), so that no comparator reads a global.
 * A stable merge sort: equal elements keep their order, so the result
 * depends on the input alone (never on the C library's qsort). */
#ifndef HOFF_SORT_H
#define HOFF_SORT_H

#include <stddef.h>

/* Compares the elements at x and y under ctx: < 0, 0 or > 0. */
typedef int (*hoff_cmp_ctx)(const void *x, const void *y, void *ctx);

/* Sorts base[0..n) (elements of size bytes) by cmp under ctx, stably.
 * O(n log n) with a scratch buffer of n elements; when that cannot be
 * allocated, in place in O(n log^2 n) with the same result. Never
 * fails; n = 0 and base NULL are fine. */
void hoff_sort_ctx(void *base, size_t n, size_t size, hoff_cmp_ctx cmp,
		   void *ctx);

/* hoff_sort_ctx's in-place path alone (what it does out of memory), for
 * the tests: the same result. */
void hoff_sort_ctx_inplace(void *base, size_t n, size_t size, hoff_cmp_ctx cmp,
			   void *ctx);

#endif
