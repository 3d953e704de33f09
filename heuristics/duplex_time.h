/* duplex_time.h: (v2) how long a transfer takes on a channel that slows
 * while the tier's other channel transfers (FORMAT.md rule 3: at F / 10^6 of
 * its speed, F the channel's duplex factor in ppm), for greedy's cost
 * model (greedy_duplex.c). An estimate in double: the simulator, in
 * exact integers, judges the schedule.
 * requires busy spans sorted by time and disjoint. */
#ifndef HOFF_DUPLEX_TIME_H
#define HOFF_DUPLEX_TIME_H

#include <stdint.h>

/* A channel's busy time: [lo, hi) ps. */
typedef struct hoff_busy {
	int64_t lo, hi;
} hoff_busy;

/* The start of a transfer of nominal duration d ps that ends at end,
 * slowed to f ppm over the other channel's busy spans s[0..n). */
int64_t hoff_duplex_start(const hoff_busy *s, int32_t n, int64_t end, int64_t d,
			  int32_t f);

/* The end of a transfer of nominal duration d ps that starts at start,
 * slowed to f ppm over the other channel's busy spans s[0..n). */
int64_t hoff_duplex_end(const hoff_busy *s, int32_t n, int64_t start, int64_t d,
			int32_t f);

#endif
