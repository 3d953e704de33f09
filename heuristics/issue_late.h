/* issue_late.h: prefetches issued as late as their link allows, on a
 * known op timeline (issue_late.c). A prefetch holds its bytes from issue
 * (FORMAT.md rule 4), so one issued before its channel can start it holds
 * memory for nothing: the budget fit (budget_fit.c) issues each as early
 * as the budget allows, to keep the link busy, and this gives back what
 * the queue ahead of it makes idle. */
#ifndef HOFF_ISSUE_LATE_H
#define HOFF_ISSUE_LATE_H

#include <stdint.h>

/* One prefetch, in the order the schedule issues them. */
typedef struct hoff_issue {
	int32_t pick;	  /* the boundary it is issued at (after op pick;
			     -1: before op 0) */
	int32_t late;	  /* out: the latest one that does not delay its
			     transfer (at least pick) */
	int32_t last;	  /* the latest boundary it may take (its
			     consumer's - 1) */
	int32_t tier;	  /* its channel: the h2d of this tier */
	int64_t fetch_ps; /* the transfer's duration */
	uint64_t key;	  /* the order the emitter breaks ties at one
			     boundary by (lower first) */
} hoff_issue;

/* Sets each prefetch of p[0..np) (issue order: by pick, then key) late
 * to the latest boundary q in [pick, last] whose op finishes (fin[q + 1];
 * fin[0] = 0 for boundary -1; fin non-decreasing, n + 1 entries) by the
 * time its FIFO channel would start it: each channel serves its
 * prefetches in issue order, each from max(its issue, the previous one's
 * end), for fetch_ps. No prefetch passes one issued after it (ties keep
 * the key order), so the channels serve them in the same order at the
 * same times whenever the real transfers last at least fetch_ps (a
 * duplex slowdown, a wait for a store only delay them): only the memory
 * held before each start goes. Returns how many moved (late > pick).
 * O(np log n). */
int32_t hoff_issue_late(const int64_t *fin, int32_t n, hoff_issue *p,
			int32_t np);

#endif
