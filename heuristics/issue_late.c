/* issue_late.c: see issue_late.h. Two passes over the prefetches: forward,
 * each channel's FIFO start times and the latest boundary ending by each;
 * backward, the order kept (a prefetch's boundary at most the next one's,
 * and below it where the emitter would otherwise put the next one first).
 * Allocates nothing. */
#include "issue_late.h"

#include "graph.h"

/* The latest boundary q in [lo, hi] with fin[q + 1] <= t (lo when none). */
static int32_t latest_by(const int64_t *fin, int32_t lo, int32_t hi, int64_t t)
{
	while (lo < hi) {
		int32_t q = hi - (hi - lo) / 2;
		if (fin[q + 1] <= t)
			lo = q;
		else
			hi = q - 1;
	}
	return lo;
}

int32_t hoff_issue_late(const int64_t *fin, int32_t n, hoff_issue *p,
			int32_t np)
{
	int64_t free_at[HOFF_MAX_TIERS + 1] = {0};
	for (int32_t x = 0; x < np; x++) {
		hoff_issue *c = &p[x];
		HOFF_REQUIRE(c->pick >= -1 && c->pick < n && c->last < n);
		/* a tier out of range: one channel of its own */
		int32_t ch = c->tier >= 0 && c->tier < HOFF_MAX_TIERS
				     ? c->tier
				     : HOFF_MAX_TIERS;
		int64_t start = fin[c->pick + 1];
		if (free_at[ch] > start)
			start = free_at[ch];
		free_at[ch] = start + c->fetch_ps;
		c->late = latest_by(fin, c->pick, c->last, start);
	}
	int32_t moved = 0;
	for (int32_t x = np - 1; x >= 0; x--) {
		hoff_issue *c = &p[x];
		if (x + 1 < np) {
			const hoff_issue *d = &p[x + 1];
			int32_t lim = c->key > d->key ? d->late - 1 : d->late;
			if (c->late > lim)
				c->late = lim;
		}
		if (c->late < c->pick)
			c->late = c->pick;
		moved += c->late > c->pick;
	}
	return moved;
}
