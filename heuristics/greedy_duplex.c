/* greedy_duplex.c: (v2) duplex in greedy's placement (FORMAT.md rule 3;
 * the arithmetic in duplex_time.c). Placement (greedy_select.c) puts the
 * stores first, forward, at their nominal durations; then each
 * prefetch, backward from its deadline, takes as long as the stores it
 * overlaps make it; then each store again, forward, as long as the
 * placed prefetches make it.
 * requires a placement in progress; touches nothing when every factor
 * is 1 (pl->duplex false). Cost: O(log spans + spans crossed) a
 * transfer. */
#include <string.h>

#include "duplex_time.h"
#include "greedy_internal.h"

void greedy_store_spans(plan *pl, int32_t off[HOFF_MAX_TIERS + 1])
{
	const hoff_graph *g = pl->g;
	memset(off, 0, (HOFF_MAX_TIERS + 1) * sizeof *off);
	for (size_t i = 0; i < pl->ncand; i++)
		if (pl->selb[i] && pl->cand[i].kind == HOFF_CAND_DIRTY)
			off[pl->cand[i].tier + 1]++;
	for (int32_t r = 0; r < g->ntiers; r++)
		off[r + 1] += off[r];
	int32_t fill[HOFF_MAX_TIERS];
	memcpy(fill, off, sizeof fill);
	/* in index order: the d2h channel's FIFO order, so by time */
	for (size_t i = 0; i < pl->ncand; i++) {
		const hoff_cand *c = &pl->cand[i];
		if (!pl->selb[i] || c->kind != HOFF_CAND_DIRTY)
			continue;
		int64_t end = pl->pd[i].evict_end;
		pl->dspan[fill[c->tier]++] =
			(hoff_busy){end - c->store_ps, end};
	}
}

void greedy_restore(plan *pl, hoff_busy *ps, const int32_t *pt, int32_t np)
{
	const hoff_graph *g = pl->g;
	/* the prefetches' spans by tier, by time: placed backward, so each
	 * tier's come latest first; clamped ones may overlap (merged) */
	int32_t off[HOFF_MAX_TIERS + 1] = {0};
	hoff_busy *by = pl->dspan; /* the stores' spans are no longer needed */
	for (int32_t k = 0; k < np; k++)
		off[pt[k] + 1]++;
	for (int32_t r = 0; r < g->ntiers; r++)
		off[r + 1] += off[r];
	int32_t n[HOFF_MAX_TIERS] = {0};
	for (int32_t k = np; k-- > 0;) {
		hoff_busy *dst = by + off[pt[k]];
		int32_t *m = &n[pt[k]];
		if (*m && ps[k].lo < dst[*m - 1].hi) {
			if (ps[k].hi > dst[*m - 1].hi)
				dst[*m - 1].hi = ps[k].hi;
		} else {
			dst[(*m)++] = ps[k];
		}
	}
	int64_t chan[HOFF_MAX_TIERS] = {0};
	for (size_t i = 0; i < pl->ncand; i++) {
		const hoff_cand *c = &pl->cand[i];
		if (!pl->selb[i] || c->kind != HOFF_CAND_DIRTY ||
		    g->tier[c->tier].d2h_duplex_ppm >= HOFF_DUPLEX_ONE)
			continue;
		placed *d = &pl->pd[i];
		int64_t issue = c->a < 0 ? 0 : pl->T[c->a + 1];
		int64_t start = issue > chan[c->tier] ? issue : chan[c->tier];
		d->evict_end = hoff_duplex_end(by + off[c->tier], n[c->tier],
					       start, c->store_ps,
					       g->tier[c->tier].d2h_duplex_ppm);
		chan[c->tier] = d->evict_end;
		d->cs = greedy_first_at(pl, c->a + 1, d->evict_end);
	}
}
