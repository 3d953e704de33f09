/* heap.h: a 4-ary max-heap of int32 ids keyed by a double score, for
 * greedy's selection (greedy_select.c). Ties go to the lowest id, so
 * every heap pops the same order whatever was pushed when. Entries are 16
 * bytes, so a node's four children share one cache line: a sift down a
 * heap of millions misses half as often as in a binary heap.
 * Cost: push and pop O(log n); the memory is kept until hoff_heap_free. */
#ifndef HOFF_HEAP_H
#define HOFF_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct hoff_hent {
	double key;
	int32_t id;
	int32_t aux; /* the caller's: greedy tests staleness against it */
} hoff_hent;

typedef struct hoff_heap {
	hoff_hent *e; /* e[0] is the top while n > 0 */
	size_t n, cap;
} hoff_heap;

/* Pushes (id, key, aux); false (and the heap unchanged) on OOM. */
bool hoff_heap_push(hoff_heap *h, int32_t id, double key, int32_t aux);

/* Pops the top entry (largest key, then lowest id); h->n must be > 0. */
hoff_hent hoff_heap_pop(hoff_heap *h);

/* Frees the entries and zeroes *h. */
void hoff_heap_free(hoff_heap *h);

#endif
