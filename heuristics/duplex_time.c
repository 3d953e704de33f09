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

/* Where a transfer of nominal duration d ps on a channel busy over the
 * sorted spans s[0..n) (slowed to f / 10^6 there) meets its other end,
 * walking from t0 in direction dir: +1 from its start to its end, -1 from
 * its end back to its start. Each span is crossed at full speed up to its
 * near edge, then slowed to its far one. */
static int64_t walk(const hoff_busy *s, int32_t n, int64_t t0, int64_t d,
		    int32_t f, int dir)
{
	const double one = HOFF_DUPLEX_ONE;
	double rem = (double)d * one;
	int64_t t = t0, at;
	int32_t k = first_after(s, n, t0);
	if (dir < 0 && (k == n || s[k].lo >= t0))
		k--; /* the last span starting before t0 */
	for (; rem > 0; k += dir) {
		if (k < 0 || k >= n)
			return t + dir * (int64_t)ceil(rem / one);
		int64_t near = dir > 0 ? s[k].lo : s[k].hi;
		int64_t far = dir > 0 ? s[k].hi : s[k].lo;
		if (dir * (near - t) > 0 &&
		    spend(&rem, &t, dir * (near - t), one, dir, &at))
			return at;
		if (spend(&rem, &t, dir * (far - t), f, dir, &at))
			return at;
	}
	return t;
}

int64_t hoff_duplex_start(const hoff_busy *s, int32_t n, int64_t end, int64_t d,
			  int32_t f)
{
	return walk(s, n, end, d, f, -1);
}

int64_t hoff_duplex_end(const hoff_busy *s, int32_t n, int64_t start, int64_t d,
			int32_t f)
{
	return walk(s, n, start, d, f, 1);
}
