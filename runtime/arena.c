/* arena.c: best-fit placement over free extents, and the map of which
 * freed block last held each byte.
 *
 * Three treaps share one node pool: free extents by offset (to coalesce a
 * released block with its neighbours), the same extents by (size, offset)
 * (best fit: the smallest hole that fits, lowest offset on ties), and the
 * owner map, disjoint segments [start, end) naming the released block that
 * last held them. The space above `top` is free and never listed as an
 * extent: a hole that reaches the top merges into it.
 *
 * Costs: each alloc or release is O(log n) expected, plus O(log n) per
 * owner segment it removes; a segment is inserted once (by a release, or
 * as one of at most two trimmed pieces per alloc) and removed once, so a
 * whole replay is O(n log n). Priorities come from a fixed-seed xorshift,
 * so the shapes, and thus the results, are the same on every run. */
#include "arena.h"

#include <stdlib.h>

typedef struct node {
	int64_t k1, k2; /* key, compared lexicographically */
	int64_t v1;     /* extent size, or segment end */
	int32_t v2;     /* segment's block id */
	uint32_t pri;
	int32_t l, r;
} node;

struct hoff_arena {
	node *n;
	size_t nn, cap;
	int32_t free_node; /* pool free list through .l */
	int32_t by_off, by_size, owner; /* roots */
	int64_t align, top, high, in_use;
	uint32_t rng;
	int32_t *prev;
	size_t nprev, prev_cap;
};

#define NIL (-1)

static bool less(const node *x, int64_t k1, int64_t k2)
{
	return x->k1 < k1 || (x->k1 == k1 && x->k2 < k2);
}

/* Splits t into keys < (k1, k2) and keys >= (k1, k2). */
static void split(node *n, int32_t t, int64_t k1, int64_t k2, int32_t *lo,
		  int32_t *hi)
{
	if (t == NIL) {
		*lo = *hi = NIL;
	} else if (less(&n[t], k1, k2)) {
		split(n, n[t].r, k1, k2, &n[t].r, hi);
		*lo = t;
	} else {
		split(n, n[t].l, k1, k2, lo, &n[t].l);
		*hi = t;
	}
}

/* Joins a and b, every key of a below every key of b. */
static int32_t merge(node *n, int32_t a, int32_t b)
{
	if (a == NIL)
		return b;
	if (b == NIL)
		return a;
	if (n[a].pri > n[b].pri) {
		n[a].r = merge(n, n[a].r, b);
		return a;
	}
	n[b].l = merge(n, a, n[b].l);
	return b;
}

static int32_t new_node(hoff_arena *a, int64_t k1, int64_t k2, int64_t v1,
			int32_t v2)
{
	int32_t i = a->free_node;
	if (i != NIL) {
		a->free_node = a->n[i].l;
	} else {
		if (a->nn >= (size_t)INT32_MAX ||
		    !hoff_grow((void **)&a->n, &a->cap, a->nn + 1, sizeof *a->n))
			return NIL;
		i = (int32_t)a->nn++;
	}
	a->rng ^= a->rng << 13;
	a->rng ^= a->rng >> 17;
	a->rng ^= a->rng << 5;
	a->n[i] = (node){k1, k2, v1, v2, a->rng, NIL, NIL};
	return i;
}

static bool insert(hoff_arena *a, int32_t *root, int64_t k1, int64_t k2,
		   int64_t v1, int32_t v2)
{
	int32_t x = new_node(a, k1, k2, v1, v2);
	if (x == NIL)
		return false;
	int32_t lo, hi;
	split(a->n, *root, k1, k2, &lo, &hi);
	*root = merge(a->n, merge(a->n, lo, x), hi);
	return true;
}

/* Removes the node with key (k1, k2), which must be present. */
static void erase(hoff_arena *a, int32_t *root, int64_t k1, int64_t k2)
{
	int32_t lo, mid, hi;
	split(a->n, *root, k1, k2, &lo, &hi);
	split(a->n, hi, k1, k2 + 1, &mid, &hi);
	HOFF_REQUIRE(mid != NIL && a->n[mid].l == NIL && a->n[mid].r == NIL);
	a->n[mid].l = a->free_node;
	a->free_node = mid;
	*root = merge(a->n, lo, hi);
}

/* Smallest key >= (k1, k2), or NIL. */
static int32_t ceil_key(const node *n, int32_t t, int64_t k1, int64_t k2)
{
	int32_t best = NIL;
	while (t != NIL) {
		if (less(&n[t], k1, k2)) {
			t = n[t].r;
		} else {
			best = t;
			t = n[t].l;
		}
	}
	return best;
}

/* Largest key <= (k1, k2), or NIL. */
static int32_t floor_key(const node *n, int32_t t, int64_t k1, int64_t k2)
{
	int32_t best = NIL;
	while (t != NIL) {
		if (n[t].k1 < k1 || (n[t].k1 == k1 && n[t].k2 <= k2)) {
			best = t;
			t = n[t].r;
		} else {
			t = n[t].l;
		}
	}
	return best;
}

hoff_arena *hoff_arena_new(int64_t align_bytes)
{
	HOFF_REQUIRE(align_bytes >= 1);
	hoff_arena *a = hoff_zalloc(1, sizeof *a);
	if (!a)
		return NULL;
	a->free_node = a->by_off = a->by_size = a->owner = NIL;
	a->align = align_bytes;
	a->rng = 0x9e3779b9u;
	return a;
}

void hoff_arena_free(hoff_arena *a)
{
	if (!a)
		return;
	free(a->n);
	free(a->prev);
	free(a);
}

static int64_t rounded(const hoff_arena *a, int64_t bytes)
{
	HOFF_REQUIRE(bytes > 0 && bytes <= HOFF_PS_LIMIT);
	return (bytes + a->align - 1) / a->align * a->align;
}

static bool add_extent(hoff_arena *a, int64_t off, int64_t size)
{
	if (!insert(a, &a->by_off, off, 0, size, 0))
		return false;
	if (!insert(a, &a->by_size, size, off, 0, 0)) {
		erase(a, &a->by_off, off, 0);
		return false;
	}
	return true;
}

static void drop_extent(hoff_arena *a, int64_t off, int64_t size)
{
	erase(a, &a->by_off, off, 0);
	erase(a, &a->by_size, size, off);
}

static bool push_prev(hoff_arena *a, int32_t id)
{
	if (!hoff_grow((void **)&a->prev, &a->prev_cap, a->nprev + 1,
		       sizeof *a->prev))
		return false;
	a->prev[a->nprev++] = id;
	return true;
}

/* Lists and removes the owner segments over [o, end), keeping the parts
 * of the two boundary segments that stick out. */
static bool take_owners(hoff_arena *a, int64_t o, int64_t end)
{
	int32_t s = floor_key(a->n, a->owner, o, 0);
	if (s == NIL || a->n[s].v1 <= o)
		s = ceil_key(a->n, a->owner, o, 0);
	while (s != NIL && a->n[s].k1 < end) {
		int64_t st = a->n[s].k1, en = a->n[s].v1;
		int32_t id = a->n[s].v2;
		if (!push_prev(a, id))
			return false;
		erase(a, &a->owner, st, 0);
		if (st < o && !insert(a, &a->owner, st, 0, o, id))
			return false;
		if (en > end) {
			if (!insert(a, &a->owner, end, 0, en, id))
				return false;
			break;
		}
		s = ceil_key(a->n, a->owner, en, 0);
	}
	return true;
}

hoff_status hoff_arena_alloc(hoff_arena *a, int64_t bytes, int64_t *off,
			     hoff_err *e)
{
	int64_t size = rounded(a, bytes), o;
	a->nprev = 0;
	int32_t x = ceil_key(a->n, a->by_size, size, 0);
	if (x != NIL) {
		int64_t hole = a->n[x].k1;
		o = a->n[x].k2;
		drop_extent(a, o, hole);
		if (hole > size && !add_extent(a, o + size, hole - size))
			return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	} else {
		if (size > HOFF_PS_LIMIT - a->top)
			return hoff_seterr(e, HOFF_ENOMEM,
					   "arena: offsets reach 2^62 bytes");
		o = a->top;
		a->top += size;
		if (a->top > a->high)
			a->high = a->top;
	}
	a->in_use += size;
	*off = o;
	if (!take_owners(a, o, o + size))
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	return HOFF_OK;
}

hoff_status hoff_arena_release(hoff_arena *a, int32_t id, int64_t off,
			       int64_t bytes, hoff_err *e)
{
	int64_t size = rounded(a, bytes);
	HOFF_REQUIRE(off >= 0 && off + size <= a->top);
	a->in_use -= size;
	if (!insert(a, &a->owner, off, 0, off + size, id))
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	/* Coalesce with the hole before and the hole after. */
	int64_t lo = off, hi = off + size;
	int32_t p = floor_key(a->n, a->by_off, off, 0);
	if (p != NIL && a->n[p].k1 + a->n[p].v1 == off) {
		lo = a->n[p].k1;
		drop_extent(a, lo, a->n[p].v1);
	}
	int32_t q = ceil_key(a->n, a->by_off, hi, 0);
	if (q != NIL && a->n[q].k1 == hi) {
		int64_t qs = a->n[q].v1;
		drop_extent(a, hi, qs);
		hi += qs;
	}
	if (hi == a->top) {
		a->top = lo; /* the hole joins the free space above */
		return HOFF_OK;
	}
	if (!add_extent(a, lo, hi - lo))
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	return HOFF_OK;
}

const int32_t *hoff_arena_prev(const hoff_arena *a, size_t *n)
{
	*n = a->nprev;
	return a->prev;
}

int64_t hoff_arena_in_use(const hoff_arena *a) { return a->in_use; }

int64_t hoff_arena_high_water(const hoff_arena *a) { return a->high; }
