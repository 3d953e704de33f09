/* arena.h: offsets in one device arena, planned ahead of time. The
 * executors place every device block (a tensor's residency from allocation
 * to free, an op's workspace) at a fixed offset of one allocation, so the
 * footprint they measure is the real one, fragmentation included.
 *
 * The caller replays the blocks' allocations and frees in the simulator's
 * event order; the arena answers each allocation best-fit from a free list
 * kept sorted by offset and by size (lowest offset among equal sizes), and
 * grows its top only when no hole fits. Every call is O(log n) amortized.
 * It also remembers which freed block last held each byte, so that an
 * executor can make a new block wait until its previous occupants are
 * done with those bytes. Invariant: live blocks never overlap; the high
 * water is the largest top ever reached. */
#ifndef HOFF_ARENA_H
#define HOFF_ARENA_H

#include <stddef.h>

#include "hoff.h"

typedef struct hoff_arena hoff_arena;

/* Returns an empty arena whose blocks are rounded up to align_bytes (>= 1;
 * 1 keeps the footprint exact), NULL on OOM. Caller frees. */
hoff_arena *hoff_arena_new(int64_t align_bytes);
/* Frees a and all it owns; NULL is fine. */
void hoff_arena_free(hoff_arena *a);

/* Places a block of bytes (> 0) at *off. Afterwards hoff_arena_prev lists
 * the released blocks that held any of its bytes. HOFF_ENOMEM on OOM. */
hoff_status hoff_arena_alloc(hoff_arena *a, int64_t bytes, int64_t *off,
			     hoff_err *e);
/* Returns the block id placed at off with bytes to the free list; id is
 * how later allocations name it as a previous occupant. HOFF_ENOMEM. */
hoff_status hoff_arena_release(hoff_arena *a, int32_t id, int64_t off,
			       int64_t bytes, hoff_err *e);
/* The previous occupants found by the last hoff_arena_alloc (ids in the
 * order of their bytes, possibly repeated); valid until the next call. */
const int32_t *hoff_arena_prev(const hoff_arena *a, size_t *n);

/* Bytes in use now (blocks rounded to the alignment). */
int64_t hoff_arena_in_use(const hoff_arena *a);
/* Largest end of any block placed so far: the arena's size. */
int64_t hoff_arena_high_water(const hoff_arena *a);

#endif
