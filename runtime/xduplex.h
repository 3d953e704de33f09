/* xduplex.h: FORMAT.md rule 3's duplex arithmetic for one tier's two
 * channels, as the CPU backend emulates it (exec_cpu.c). Channel 0 is h2d,
 * 1 is d2h. A transfer of nominal duration D holds remaining work
 * R = D * 10^6 and moves at v = 10^6 a time unit while the other channel
 * is not transferring, F (its factor in ppm) while it is. Whenever either
 * channel starts or completes a transfer at t, the other's R is brought up
 * to t at its old speed, and both speeds are set from the new state; a
 * transfer is due at t0 + ceil(R / v).
 * Units are the caller's (ns in the CPU backend): D * 10^6 must stay below
 * 2^63, D < 9.2e12. Events must come in time order per tier (the caller
 * clamps). Not thread-safe: the caller holds the tier's lock. */
#ifndef HOFF_XDUPLEX_H
#define HOFF_XDUPLEX_H

#include <stdbool.h>
#include <stdint.h>

#include "graph.h" /* HOFF_DUPLEX_ONE: a factor of 1 in ppm */

typedef struct hoff_xduplex_chan {
	bool busy;
	int32_t f_ppm; /* F: speed while the other channel transfers */
	int32_t v;     /* speed now, work units a time unit */
	int64_t t0;    /* when r was last brought up to date */
	int64_t r;     /* remaining work, D * 10^6 at the start */
} hoff_xduplex_chan;

typedef struct hoff_xduplex {
	hoff_xduplex_chan c[2]; /* h2d, d2h */
	int64_t last_t;		/* the latest event so far */
} hoff_xduplex;

/* Both channels idle, with their factors F (1 .. 10^6). */
static inline void hoff_xduplex_init(hoff_xduplex *d, int32_t h2d_ppm,
				     int32_t d2h_ppm)
{
	*d = (hoff_xduplex){0};
	d->c[0].f_ppm = h2d_ppm;
	d->c[1].f_ppm = d2h_ppm;
	d->c[0].v = d->c[1].v = HOFF_DUPLEX_ONE;
}

/* Brings channel c's remaining work up to t and sets its speed from the
 * other channel's state. */
static inline void hoff_xduplex_touch(hoff_xduplex *d, int ch, int64_t t)
{
	hoff_xduplex_chan *c = &d->c[ch];
	if (c->busy) {
		c->r -= (t - c->t0) * (int64_t)c->v;
		if (c->r < 0)
			c->r = 0;
	}
	c->t0 = t;
	c->v = d->c[1 - ch].busy ? c->f_ppm : HOFF_DUPLEX_ONE;
}

/* The instant the event at t is taken at: no earlier than the last. */
static inline int64_t hoff_xduplex_clamp(const hoff_xduplex *d, int64_t t)
{
	return t > d->last_t ? t : d->last_t;
}

/* Channel ch starts a transfer of nominal duration dur at t (clamped);
 * returns the instant taken. */
static inline int64_t hoff_xduplex_start(hoff_xduplex *d, int ch, int64_t t,
					 int64_t dur)
{
	t = d->last_t = hoff_xduplex_clamp(d, t);
	hoff_xduplex_touch(d, ch, t);
	hoff_xduplex_touch(d, 1 - ch, t);
	d->c[ch].busy = true;
	d->c[ch].r = dur * (int64_t)HOFF_DUPLEX_ONE;
	hoff_xduplex_touch(d, 1 - ch, t); /* its speed now that ch is busy */
	return t;
}

/* When channel ch's transfer completes if nothing changes before. */
static inline int64_t hoff_xduplex_due(const hoff_xduplex *d, int ch)
{
	const hoff_xduplex_chan *c = &d->c[ch];
	return c->t0 + (c->r + c->v - 1) / c->v;
}

/* Work left on channel ch at t (no later than its due time), without
 * changing the state. */
static inline int64_t hoff_xduplex_left(const hoff_xduplex *d, int ch,
					int64_t t)
{
	const hoff_xduplex_chan *c = &d->c[ch];
	int64_t r = c->r - (t - c->t0) * (int64_t)c->v;
	return r > 0 ? r : 0;
}

/* Channel ch's transfer completes at t (its due time, clamped). */
static inline void hoff_xduplex_finish(hoff_xduplex *d, int ch, int64_t t)
{
	t = d->last_t = hoff_xduplex_clamp(d, t);
	hoff_xduplex_touch(d, 1 - ch, t);
	d->c[ch].busy = false;
	d->c[ch].r = 0;
	d->c[ch].t0 = t;
	hoff_xduplex_touch(d, 1 - ch, t); /* back to full speed */
}

#endif
