/* timeline.c: growable event and memory-sample arrays. */
#include "timeline.h"

#include <stdlib.h>
#include <string.h>

hoff_status hoff_timeline_event(hoff_timeline *tl, hoff_event ev)
{
	if (!hoff_grow((void **)&tl->ev, &tl->ev_cap, tl->nev + 1,
		       sizeof *tl->ev))
		return HOFF_ENOMEM;
	tl->ev[tl->nev++] = ev;
	return HOFF_OK;
}

hoff_status hoff_timeline_mem(hoff_timeline *tl, int64_t t_ps, int64_t bytes)
{
	if (tl->nmem && tl->mem[tl->nmem - 1].t_ps == t_ps) {
		tl->mem[tl->nmem - 1].bytes = bytes;
		return HOFF_OK;
	}
	if (tl->nmem && tl->mem[tl->nmem - 1].bytes == bytes)
		return HOFF_OK; /* no change: keep the counter sparse */
	if (!hoff_grow((void **)&tl->mem, &tl->mem_cap, tl->nmem + 1,
		       sizeof *tl->mem))
		return HOFF_ENOMEM;
	tl->mem[tl->nmem++] = (hoff_memsample){t_ps, bytes};
	return HOFF_OK;
}

void hoff_timeline_free(hoff_timeline *tl)
{
	free(tl->ev);
	free(tl->mem);
	memset(tl, 0, sizeof *tl);
}
