/* strmap.h: interning for the reader — a string pool that owns the bytes
 * and an open-addressing map from string to int32 id.
 * Invariant: the map never holds two equal keys; its load stays <= 1/2. */
#ifndef HOFF_STRMAP_H
#define HOFF_STRMAP_H

#include "hoff.h"

typedef struct hoff_strpool {
	char **chunk;  /* (nchunks) blocks of strings */
	size_t nchunks, chunk_cap;
	size_t used, avail; /* bytes used and left in the last chunk */
} hoff_strpool;

/* One slot: key, hash and value side by side, so a probe touches one
 * cache line (lookups of millions of ids are memory-bound). */
typedef struct hoff_strslot {
	const char *key; /* NULL for an empty slot; keys are not owned */
	uint32_t hash;
	int32_t val;
} hoff_strslot;

typedef struct hoff_strmap {
	hoff_strslot *slot; /* (cap) */
	size_t cap, n;
} hoff_strmap;

/* Copies s into the pool; NULL on OOM. The pool owns the copy. */
const char *hoff_strpool_add(hoff_strpool *p, const char *s, size_t len);
/* Moves every string of src into dst, src left empty: pointers to them
 * stay valid. HOFF_ENOMEM leaves both as they were. */
hoff_status hoff_strpool_adopt(hoff_strpool *dst, hoff_strpool *src);
/* Frees every string of the pool. */
void hoff_strpool_free(hoff_strpool *p);

/* Returns the id of key, or HOFF_NONE. */
int32_t hoff_strmap_get(const hoff_strmap *m, const char *key);
/* As hoff_strmap_get, for a key whose hoff_strmap_hash is h. */
int32_t hoff_strmap_get_hashed(const hoff_strmap *m, const char *key,
			       uint32_t h);
/* Hints that key will be looked up soon (loads its slot's cache line), so
 * that a reader resolving several names overlaps their memory misses. */
void hoff_strmap_prefetch(const hoff_strmap *m, const char *key);
/* Adds key -> val (key must outlive the map). Returns HOFF_OK, HOFF_EINPUT
 * when key is present already (*old gets its id), or HOFF_ENOMEM. */
hoff_status hoff_strmap_put(hoff_strmap *m, const char *key, int32_t val,
			    int32_t *old);
/* The hash the map files key under. */
uint32_t hoff_strmap_hash(const char *key);
/* For filling a map from several threads at once, each owning the slots
 * [lo, hi) (the map reserved for every key first): adds key, whose hash
 * is h and whose home slot h & (cap - 1) lies in [lo, hi). Returns 1
 * when added, 0 when present (*old gets its value), -1 when its probe
 * would leave [lo, hi): add it afterwards with hoff_strmap_put. Does not
 * count: the caller adds the keys added to m->n. */
int hoff_strmap_put_in(hoff_strmap *m, const char *key, uint32_t h, int32_t val,
		       size_t lo, size_t hi, int32_t *old);
/* Makes room for n keys in all, so that adding them never rehashes. */
hoff_status hoff_strmap_reserve(hoff_strmap *m, size_t n);
/* Frees the map's arrays (not the keys). */
void hoff_strmap_free(hoff_strmap *m);

#endif
