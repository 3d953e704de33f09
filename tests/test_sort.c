/* test_sort.c: hoff_sort_ctx (src/sort.c) — a hand case whose order is
 * written out, stability on keys with many ties, and both paths (with a
 * scratch buffer, and in place as out of memory) equal to an independent
 * stable sort over many seeded arrays of awkward lengths. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sort.h"
#include "testutil.h"

typedef struct item {
	int32_t key, tag; /* tag: the position before sorting */
	char pad[5];	  /* an element size that is no power of two */
} item;

/* By key, ascending or descending by ctx's sign. */
static int by_key(const void *x, const void *y, void *ctx)
{
	const item *a = x, *b = y;
	int dir = *(const int *)ctx;
	return dir * ((a->key > b->key) - (a->key < b->key));
}

static void hand(void **state)
{
	(void)state;
	/* keys 3 1 3 2 1 at tags 0..4: stably 1(1) 1(4) 2(3) 3(0) 3(2) */
	item v[5];
	const int32_t key[5] = {3, 1, 3, 2, 1};
	for (int i = 0; i < 5; i++)
		v[i] = (item){.key = key[i], .tag = i};
	int up = 1;
	hoff_sort_ctx(v, 5, sizeof *v, by_key, &up);
	const int32_t want[5] = {1, 4, 3, 0, 2};
	for (int i = 0; i < 5; i++)
		assert_int_equal(v[i].tag, want[i]);
	/* descending, the ties still in their first order */
	int down = -1;
	hoff_sort_ctx(v, 5, sizeof *v, by_key, &down);
	const int32_t want2[5] = {0, 2, 3, 1, 4};
	for (int i = 0; i < 5; i++)
		assert_int_equal(v[i].tag, want2[i]);
	hoff_sort_ctx(NULL, 0, sizeof *v, by_key, &up); /* nothing to do */
}

/* The reference: a stable insertion sort by key. */
static void reference(item *v, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		item x = v[i];
		size_t j = i;
		for (; j > 0 && v[j - 1].key > x.key; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

static void seeded(void **state)
{
	(void)state;
	const size_t lens[] = {0,  1,  2,   15,	 16,   17,  31,
			       32, 33, 100, 257, 1000, 4097};
	uint64_t seed = 12345;
	int up = 1;
	for (size_t li = 0; li < sizeof lens / sizeof *lens; li++) {
		for (int rep = 0; rep < 4; rep++) {
			size_t n = lens[li];
			item *a = calloc(n + 1, sizeof *a);
			item *b = calloc(n + 1, sizeof *b);
			item *c = calloc(n + 1, sizeof *c);
			assert_non_null(a);
			assert_non_null(b);
			assert_non_null(c);
			/* few distinct keys (many ties) on odd reps */
			int32_t range = rep % 2 ? 7 : 1000003;
			for (size_t i = 0; i < n; i++) {
				seed = seed * 6364136223846793005ULL +
				       1442695040888963407ULL;
				a[i] = (item){.key = (int32_t)((seed >> 33) %
							       (uint64_t)range),
					      .tag = (int32_t)i};
			}
			if (rep == 2) /* already in order */
				reference(a, n);
			memcpy(b, a, n * sizeof *a);
			memcpy(c, a, n * sizeof *a);
			reference(a, n);
			hoff_sort_ctx(b, n, sizeof *b, by_key, &up);
			hoff_sort_ctx_inplace(c, n, sizeof *c, by_key, &up);
			for (size_t i = 0; i < n; i++) {
				assert_int_equal(b[i].key, a[i].key);
				assert_int_equal(b[i].tag, a[i].tag);
				assert_int_equal(c[i].key, a[i].key);
				assert_int_equal(c[i].tag, a[i].tag);
			}
			free(a);
			free(b);
			free(c);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hand),
		cmocka_unit_test(seeded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
