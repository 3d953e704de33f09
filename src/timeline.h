/* timeline.h: what happened when — op intervals, stalls, transfers per
 * channel and the device-memory counter. The simulator and the executors
 * fill one; the trace writer turns it into Chrome trace events, so predicted
 * and measured runs line up track by track. Times in integer ps. */
#ifndef HOFF_TIMELINE_H
#define HOFF_TIMELINE_H

#include "hoff.h"

typedef enum hoff_ev_kind {
	HOFF_EV_OP = 0,	   /* compute: op `id` ran [start, end) */
	HOFF_EV_STALL,	   /* compute waited [start, end) before op `id` */
	HOFF_EV_PREFETCH,  /* tensor `id` moved on channel (tier, h2d) */
	HOFF_EV_STORE,	   /* tensor `id` moved on channel (tier, d2h) */
	HOFF_EV_DETACH,	   /* tensor `id` dropped its clean device copy at
			    * start (an instant: end == start) */
	HOFF_EV_RECOMPUTE, /* (v2) compute: op `id` ran again [start, end) */
	HOFF_EV_DROP,	   /* (v2) tensor `id` freed by a drop step at start
			    * (an instant: end == start) */
} hoff_ev_kind;

typedef struct hoff_event {
	int64_t start_ps, end_ps;
	int64_t step; /* schedule step index */
	int32_t id;   /* op or tensor id */
	int16_t tier; /* for transfers, else HOFF_NONE */
	uint8_t kind; /* hoff_ev_kind */
	int32_t await; /* stalls: the tensor whose prefetch ended last, the
			* one the op waited for; HOFF_NONE when unknown */
} hoff_event;

typedef struct hoff_memsample {
	int64_t t_ps;
	int64_t bytes; /* device memory in use after every event at t_ps */
} hoff_memsample;

typedef struct hoff_timeline {
	hoff_event *ev; /* (nev) in order of start per track */
	size_t nev, ev_cap;
	hoff_memsample *mem; /* (nmem) ascending t_ps, one per instant */
	size_t nmem, mem_cap;
} hoff_timeline;

/* Appends an event or a memory sample; HOFF_ENOMEM on failure. */
hoff_status hoff_timeline_event(hoff_timeline *tl, hoff_event ev);
hoff_status hoff_timeline_mem(hoff_timeline *tl, int64_t t_ps, int64_t bytes);
/* Frees the arrays (not tl itself). */
void hoff_timeline_free(hoff_timeline *tl);

#endif
