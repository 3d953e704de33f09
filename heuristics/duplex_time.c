/* duplex_time.c: see duplex_time.h. The work of a transfer of nominal
 * duration D is D x 10^6 (FORMAT.md rule 3's units), in double: it overflows 64
 * bits past ~9 s of transfer. Cost: O(log n + spans crossed). */
#include "duplex_time.h"

#include <math.h>

#include "graph.h"

/* The first span of s[0..n) that ends after t (n when none). */
static int32_t first_after(const hoff_busy *s, int32_t n, int64_t t)
{
	int32_t lo = 0, hi = n;
	while (lo < hi) {
		int32_t mid = lo + (hi - lo) / 2;
		if (s[mid].hi > t)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* Spends the work *rem over len ps from *t in direction dir (+1 forward,
 * -1 back) at rate work per ps: true with the finish in *out when it
 * ends there, else false with *rem less the stretch's work and *t at its
 * far edge. */
static bool spend(double *rem, int64_t *t, int64_t len, double rate, int dir,
		  int64_t *out)
{
	double cap = (double)len * rate;
	if (*rem <= cap) {
		*out = *t + dir * (int64_t)ceil(*rem / rate);
		return true;
	}
	*rem -= cap;
	*t += dir * len;
	return false;
}

int64_t hoff_duplex_start(const hoff_busy *s, int32_t n, int64_t end, int64_t d,
			  int32_t f)
{
	const double one = HOFF_DUPLEX_ONE;
	double rem = (double)d * one;
	int64_t t = end, at;
	/* the last span starting before t */
	int32_t k = first_after(s, n, end);
	if (k == n || s[k].lo >= end)
		k--;
	while (rem > 0) {
		if (k < 0)
			return t - (int64_t)ceil(rem / one);
		int64_t hi = s[k].hi < t ? s[k].hi : t;
		/* at full speed over (hi, t], then slowed over (lo, hi] */
		if (hi < t && spend(&rem, &t, t - hi, one, -1, &at))
			return at;
		if (spend(&rem, &t, t - s[k].lo, f, -1, &at))
			return at;
		k--;
	}
	return t;
}

int64_t hoff_duplex_end(const hoff_busy *s, int32_t n, int64_t start, int64_t d,
			int32_t f)
{
	const double one = HOFF_DUPLEX_ONE;
	double rem = (double)d * one;
	int64_t t = start, at;
	for (int32_t k = first_after(s, n, start); rem > 0; k++) {
		if (k >= n)
			return t + (int64_t)ceil(rem / one);
		/* at full speed over [t, lo), then slowed over [lo, hi) */
		if (s[k].lo > t && spend(&rem, &t, s[k].lo - t, one, 1, &at))
			return at;
		if (spend(&rem, &t, s[k].hi - t, f, 1, &at))
			return at;
	}
	return t;
}
