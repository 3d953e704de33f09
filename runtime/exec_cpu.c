/* exec_cpu.c: the reference backend, an emulator of the machine model on
 * this host. One POSIX thread per stream that has work: the compute stream
 * and each channel (h2d and d2h of every tier). The walk only appends
 * commands to the streams' lists; synchronize starts the threads together
 * and joins them. A thread runs its list in order: a wait blocks until the
 * event is recorded (spinning briefly, then sleeping on one condition
 * variable that every record signals when someone sleeps), a record
 * publishes it. The compute thread waits by spinning (yielding the core),
 * the channel threads spin briefly, then sleep.
 *
 * "Device" memory is one arena of the plan's high water, host memory one
 * arena of tier copies; transfers are real memcpy between them at the
 * plan's offsets, each paced to its channel: it lasts latency + bytes /
 * rate (the plan's duration), and its bytes move in up to 4 chunks of at
 * least 1 ms, each copied at the end of its share of the interval, so a
 * command that touches them before the transfer ends (a missing wait)
 * sees them unmoved or half moved, as on a GPU. An op
 * is a wait of its duration on CLOCK_MONOTONIC, asleep until its last 100 us
 * and busy for those. With --verify every command checks what it reads: an op
 * its inputs and updates at its start (then writes junk, the bitwise complement
 * of their patterns, to its updates and outputs) and its inputs at its end
 * (then writes its updates' and outputs' patterns); a transfer its source at
 * its start and its destination at its end. A store of a version its tier
 * copy holds already (xplan.h's `same`) is paced but writes nothing: its
 * bytes are there, and a prefetch may be reading them (FORMAT.md rule 4).
 *
 * Times are the emulated device's. Each stream keeps a clock: a command
 * starts when its stream's previous command ended and every event it
 * waited for was recorded (the recorded instants, not the moment the host
 * thread got around to it), and ends at start + duration, or later when
 * the real work (memcpy, pattern writes) or the thread's wake-up overran
 * that deadline. Threads pace themselves to those deadlines in real time,
 * so the emulated clock never runs ahead of the host's; what the host's
 * scheduler costs below a command's duration is absorbed, what exceeds it
 * shows as an overrun, counted, with the largest lag reported.
 *
 * (v2) Duplex. On a tier with a duplex factor below 1, a transfer's end
 * follows FORMAT.md rule 3 (xduplex.h) on the emulated clock: the tier's
 * two channel threads share its state under the tier's lock; a start or
 * a completion brings the other channel's remaining work up to that
 * instant and sets both speeds, and signals the other thread, which
 * sleeps on the tier's condition variable until its transfer (or its
 * next chunk) is due at the speed in force, and re-reads it when woken.
 * Events of a tier are taken in the order the threads reach them, each
 * at its emulated instant or the tier's latest, whichever is later.
 * Tiers with both factors 1 run as before, untouched. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h> /* thrd_yield: <sched.h> is our schedule header */
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

#include "exec.h"
#include "pattern.h"
#include "xduplex.h"

enum { C_WAIT, C_RECORD, C_OP, C_PREFETCH, C_STORE };

#define SPIN_WAIT_NS 50000   /* a wait spins this long before sleeping */
#define SPIN_PACE_NS 100000  /* pacing sleeps until this close, then spins */
#define START_DELAY_NS 2000000 /* threads start together this far ahead */
#define OVERRUN_NS 1000       /* later than its deadline by more: overran */
#define CHUNK_MIN_NS   1000000	  /* a transfer's chunks last at least this */
#define CHUNKS_MAX     4	  /* and it has at most this many */

typedef struct cmd {
	int64_t arg;
	uint8_t kind;
} cmd;

typedef struct cpu cpu;

/* (v2) A tier whose channels slow each other (a factor below 1). */
typedef struct ctier {
	bool on; /* some factor below 1: transfers follow d */
	hoff_xduplex d;
	pthread_mutex_t mu;
	pthread_cond_t cv; /* on CLOCK_MONOTONIC; broadcast at every event */
	bool init;
} ctier;

typedef struct cstream {
	cmd *c;
	size_t n, cap;
	cpu *cpu;
	int32_t id;
	int64_t clock_ns; /* emulated: end of the last command, or the
			     latest event waited for since */
	pthread_t th;
	bool started;
} cstream;

struct cpu {
	const hoff_xplan *p;
	hoff_exec_opts o;
	uint8_t *dev, *host;
	cstream *s;        /* (nstreams) */
	atomic_int *done;  /* (nops + nxfers) */
	int64_t *ev_ns;    /* (nops + nxfers) emulated instant of each record */
	atomic_int sleepers;
	atomic_int go;     /* 0: hold, 1: run, 2: abort */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool sync_init;
	int64_t t0_ns;
	int64_t *op_t0, *op_t1, *x_t0, *x_t1; /* ns from t0 */
	int64_t *bad; /* (nops + nxfers) first failed check, pattern.h's
			 code, or -1 */
	int64_t *lag_ns, *overruns; /* (nstreams) */
	double copy_ns_per_B;	    /* memcpy's cost, measured at creation */
	ctier *tier;		    /* (ntiers) duplex state */
};

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

/* Waits until t: sleeps while more than SPIN_PACE_NS remain, then busy
 * waits. Ops wait this way too: a thread that never sleeps is the first
 * the host's scheduler preempts, and on a loaded 2-core host a pure busy
 * wait ran ops 27-48% long where this one ran them 4-5% long. */
static void pace_until(int64_t t)
{
	int64_t left = t - now_ns();
	if (left > 2 * SPIN_PACE_NS) {
		int64_t wake = t - SPIN_PACE_NS;
		struct timespec ts = {(time_t)(wake / 1000000000),
				      (long)(wake % 1000000000)};
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts,
				       NULL) != 0)
			;
	}
	while (now_ns() < t)
		relax();
}

/* Sleeps until about t, never spinning: the chunks of a transfer need
 * not start on time to the microsecond, and spinning threads starve the
 * compute stream's on a loaded host. */
static void sleep_until(int64_t t)
{
	struct timespec ts = {(time_t)(t / 1000000000), (long)(t % 1000000000)};
	if (t > now_ns())
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts,
				       NULL) != 0)
			;
}

static int64_t ps_to_ns(int64_t ps) { return (ps + 500) / 1000; }

static void wait_event(cstream *s, int64_t ev)
{
	cpu *c = s->cpu;
	int64_t until = now_ns() + SPIN_WAIT_NS;
	while (!atomic_load_explicit(&c->done[ev], memory_order_acquire)) {
		/* The compute stream never sleeps: an idle engine starts the
		 * next op at once, and the host's wake-up latency would exceed
		 * short ops. It yields, so channel threads still get a core. */
		if (s->id == 0) {
			thrd_yield();
			continue;
		}
		if (now_ns() < until) {
			relax();
			continue;
		}
		pthread_mutex_lock(&c->mu);
		atomic_fetch_add(&c->sleepers, 1);
		while (!atomic_load(&c->done[ev]))
			pthread_cond_wait(&c->cv, &c->mu);
		atomic_fetch_sub(&c->sleepers, 1);
		pthread_mutex_unlock(&c->mu);
	}
	if (c->ev_ns[ev] > s->clock_ns)
		s->clock_ns = c->ev_ns[ev];
}

static void record_event(cstream *s, int64_t ev)
{
	cpu *c = s->cpu;
	c->ev_ns[ev] = s->clock_ns; /* published by the store below */
	atomic_store(&c->done[ev], 1);
	/* A sleeper counted before our store sees it under the lock. */
	if (atomic_load(&c->sleepers) > 0) {
		pthread_mutex_lock(&c->mu);
		pthread_cond_broadcast(&c->cv);
		pthread_mutex_unlock(&c->mu);
	}
}

/* Starts a command of dur_ps on s: its emulated start, and how far the
 * host thread lags behind it. */
static int64_t begin(cstream *s, int64_t *deadline, int64_t dur_ps)
{
	int64_t start = s->clock_ns, lag = now_ns() - start;
	if (lag > s->cpu->lag_ns[s->id])
		s->cpu->lag_ns[s->id] = lag;
	*deadline = start + ps_to_ns(dur_ps);
	return start;
}

/* Ends a command due at deadline: its emulated end, counting overruns. */
static int64_t finish(cstream *s, int64_t deadline)
{
	int64_t t = now_ns();
	if (t > deadline + OVERRUN_NS)
		s->cpu->overruns[s->id]++;
	s->clock_ns = t > deadline ? t : deadline;
	return s->clock_ns;
}

/* Checks n bytes at d against tensor t at version v; keeps the smallest
 * code of a failure in *bad. */
static void check_into(int64_t *bad, const uint8_t *d, int64_t n, int32_t t,
		       uint32_t v, uint64_t tag)
{
	int64_t j = hoff_pattern_check(d, n, t, v);
	if (j < 0)
		return;
	int64_t code = (int64_t)hoff_bad_code(tag, (uint64_t)j);
	if (*bad < 0 || code < *bad)
		*bad = code;
}

/* Compute command k's checks of its op's inputs (both phases; at the
 * end not those it also updates) and updates (phase 0). */
static void op_checks(cpu *c, int32_t k, uint32_t phase)
{
	const hoff_xplan *p = c->p;
	const hoff_graph *g = p->g;
	const hoff_xop *o = &p->op[k];
	int32_t op = o->op;
	int64_t item = 0;
	for (int64_t j = g->in_off[op]; j < g->in_off[op + 1]; j++, item++) {
		int64_t q = o->in_at + item;
		if (phase == 0 || !hoff_op_updates(g, op, g->in[j]))
			check_into(&c->bad[k], c->dev + p->in_dev[q],
				   g->tensor[g->in[j]].bytes, g->in[j],
				   p->in_ver[q],
				   hoff_bad_tag(phase, (uint64_t)item));
	}
	for (int64_t j = g->upd_off[op]; phase == 0 && j < g->upd_off[op + 1];
	     j++, item++) {
		int64_t q = o->upd_at + (j - g->upd_off[op]);
		check_into(&c->bad[k], c->dev + p->upd_dev[q],
			   g->tensor[g->upd[j]].bytes, g->upd[j],
			   p->upd_ver[q] - 1, hoff_bad_tag(0, (uint64_t)item));
	}
}

/* Writes compute command k's updates and outputs (a recompute's: those
 * it re-makes): junk (inv 0xff) or their patterns; with check, then
 * checks the outputs (phase 1, items after the inputs and updates). */
static void op_writes(cpu *c, int32_t k, uint8_t inv, bool check)
{
	const hoff_xplan *p = c->p;
	const hoff_graph *g = p->g;
	const hoff_xop *o = &p->op[k];
	int32_t op = o->op;
	int64_t item = hoff_op_count(g, op, HOFF_USE_IN) +
		       hoff_op_count(g, op, HOFF_USE_UPD);
	for (int64_t j = g->out_off[op]; j < g->out_off[op + 1]; j++, item++) {
		int64_t off = p->out_dev[o->out_at + (j - g->out_off[op])];
		if (off == HOFF_NONE)
			continue; /* resident: a recompute leaves it */
		uint8_t *d = c->dev + off;
		int64_t n = g->tensor[g->out[j]].bytes;
		hoff_pattern_fill_x(d, n, g->out[j], 0, inv);
		if (!check)
			continue;
		if (c->o.corrupt_step == o->step && j == g->out_off[op])
			d[n / 2] ^= 0x5a; /* test hook: a spoilt re-run */
		check_into(&c->bad[k], d, n, g->out[j], 0,
			   hoff_bad_tag(1, (uint64_t)item));
	}
	for (int64_t j = g->upd_off[op]; j < g->upd_off[op + 1]; j++) {
		int64_t q = o->upd_at + (j - g->upd_off[op]);
		hoff_pattern_fill_x(c->dev + p->upd_dev[q],
				    g->tensor[g->upd[j]].bytes, g->upd[j],
				    p->upd_ver[q], inv);
	}
}

static void run_op(cstream *s, int32_t k)
{
	cpu *c = s->cpu;
	const hoff_xplan *p = c->p;
	int64_t deadline, start = begin(s, &deadline, p->op[k].dur_ps);
	if (c->o.verify) {
		op_checks(c, k, 0);
		op_writes(c, k, 0xff, false);
	}
	pace_until(deadline);
	if (c->o.verify) {
		op_checks(c, k, 1);
		op_writes(c, k, 0, p->op[k].recompute);
	}
	c->op_t0[k] = start - c->t0_ns;
	c->op_t1[k] = finish(s, deadline) - c->t0_ns;
}

/* Chunks of a transfer of span ns and bytes. */
static int64_t nchunks(int64_t span, int64_t bytes)
{
	int64_t n = span / CHUNK_MIN_NS;
	n = n < 1 ? 1 : n > CHUNKS_MAX ? CHUNKS_MAX : n;
	if (n > bytes)
		n = bytes > 0 ? bytes : 1;
	return n;
}

/* How early chunk bytes [done, upto) are copied before their share ends:
 * 1.5 times the copy's own time and 0.3 ms for a late wake-up. */
static int64_t chunk_cost(const cpu *c, int64_t done, int64_t upto)
{
	return (int64_t)(1.5 * (double)(upto - done) * c->copy_ns_per_B) +
	       3 * SPIN_PACE_NS;
}

/* Sleeps on tier t's condition variable until `until` or the tier's next
 * event; t->mu held. */
static void tier_wait(ctier *t, int64_t until)
{
	struct timespec ts = {(time_t)(until / 1000000000),
			      (long)(until % 1000000000)};
	pthread_cond_timedwait(&t->cv, &t->mu, &ts);
}

/* (v2) The bytes of transfer xf on a duplex tier: it starts at *start
 * (set to the instant the tier took), each chunk is copied as the work
 * left passes its share (at the speed in force, re-read at every event
 * of the tier), and it ends when rule 3 says; returns that instant. */
static int64_t duplex_copy(cpu *c, const hoff_xfer *xf, int64_t *start,
			   int64_t dur_ns, uint8_t *dst, const uint8_t *src)
{
	ctier *t = &c->tier[xf->tier];
	int ch = xf->store;
	const hoff_xduplex_chan *dc = &t->d.c[ch];
	pthread_mutex_lock(&t->mu);
	*start = hoff_xduplex_start(&t->d, ch, *start, dur_ns);
	pthread_cond_broadcast(&t->cv);
	int64_t n = nchunks(dur_ns, xf->bytes), work = dc->r;
	for (int64_t i = 0, done = 0; i < n; i++) {
		int64_t upto = xf->bytes * (i + 1) / n;
		int64_t cost = chunk_cost(c, done, upto);
		int64_t left = work / n * (n - i - 1); /* work after chunk i */
		for (;;) {
			int64_t at = dc->r <= left
					     ? 0
					     : dc->t0 + (dc->r - left + dc->v -
							 1) / dc->v;
			if (now_ns() >= at - cost)
				break;
			tier_wait(t, at - cost);
		}
		pthread_mutex_unlock(&t->mu);
		if (!xf->same)
			memcpy(dst + done, src + done, (size_t)(upto - done));
		done = upto;
		pthread_mutex_lock(&t->mu);
	}
	for (;;) {
		int64_t due = hoff_xduplex_due(&t->d, ch), now = now_ns();
		if (now >= due) {
			hoff_xduplex_finish(&t->d, ch, due);
			pthread_cond_broadcast(&t->cv);
			pthread_mutex_unlock(&t->mu);
			return due;
		}
		if (due - now > 2 * SPIN_PACE_NS) {
			tier_wait(t, due - SPIN_PACE_NS);
		} else { /* on time to the microsecond, then re-read */
			pthread_mutex_unlock(&t->mu);
			pace_until(due);
			pthread_mutex_lock(&t->mu);
		}
	}
}

static void run_copy(cstream *s, int64_t x)
{
	cpu *c = s->cpu;
	const hoff_xplan *p = c->p;
	const hoff_xfer *xf = &p->xfer[x];
	int64_t ev = hoff_xplan_xev(p, x);
	uint8_t *d = c->dev + xf->dev_off, *h = c->host + xf->host_off;
	uint8_t *dst = xf->store ? h : d;
	const uint8_t *src = xf->store ? d : h;
	int64_t dur = xf->dur_ps;
	if (xf->step == c->o.slow_step && dur < INT64_MAX / HOFF_SLOW_FACTOR)
		dur *= HOFF_SLOW_FACTOR; /* test hook: a slower link */
	int64_t deadline, start = begin(s, &deadline, dur);
	if (c->o.verify)
		check_into(&c->bad[ev], src, xf->bytes, xf->tensor, xf->version,
			   hoff_bad_tag(0, 0));
	if (c->tier[xf->tier].on) {
		deadline =
			duplex_copy(c, xf, &start, deadline - start, dst, src);
	} else {
		/* The bytes move in chunks across the interval, each copied
		 * at the end of its share of it (less chunk_cost): until
		 * then a reader sees the old bytes, and a writer of the
		 * source spoils the copy. */
		int64_t span = deadline - start, n = nchunks(span, xf->bytes);
		for (int64_t i = 0, done = 0; i < n; i++) {
			int64_t upto = xf->bytes * (i + 1) / n;
			sleep_until(start + span * (i + 1) / n -
				    chunk_cost(c, done, upto));
			if (!xf->same) /* a `same` store's bytes are there */
				memcpy(dst + done, src + done,
				       (size_t)(upto - done));
			done = upto;
		}
	}
	if (c->o.corrupt_step == xf->step)
		dst[xf->bytes / 2] ^= 0x5a; /* test hook: a flipped byte */
	pace_until(deadline);
	if (c->o.verify)
		check_into(&c->bad[ev], dst, xf->bytes, xf->tensor, xf->version,
			   hoff_bad_tag(1, 0));
	c->x_t0[x] = start - c->t0_ns;
	c->x_t1[x] = finish(s, deadline) - c->t0_ns;
}

static void *stream_main(void *arg)
{
	cstream *s = arg;
	cpu *c = s->cpu;
	pthread_mutex_lock(&c->mu);
	while (atomic_load(&c->go) == 0)
		pthread_cond_wait(&c->cv, &c->mu);
	pthread_mutex_unlock(&c->mu);
	if (atomic_load(&c->go) != 1)
		return NULL;
#if defined(PR_SET_TIMERSLACK)
	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL); /* wake on time */
#endif
	s->clock_ns = c->t0_ns;
	pace_until(c->t0_ns);
	for (size_t i = 0; i < s->n; i++) {
		const cmd *m = &s->c[i];
		switch (m->kind) {
		case C_WAIT:
			wait_event(s, m->arg);
			break;
		case C_RECORD:
			record_event(s, m->arg);
			break;
		case C_OP:
			run_op(s, (int32_t)m->arg);
			break;
		default:
			run_copy(s, m->arg);
			break;
		}
	}
	return NULL;
}

/* ns per byte of a memcpy (the fastest of 3 of 4 MiB: a slower one is
 * the host's load, which the margin absorbs), 1 when it cannot be
 * measured. */
static double memcpy_cost(void)
{
	size_t n = (size_t)4 << 20;
	uint8_t *a = malloc(n), *b = malloc(n);
	double best = 0;
	if (a && b) {
		memset(a, 1, n);
		memset(b, 2, n);
		for (int i = 0; i < 3; i++) {
			int64_t t = now_ns();
			memcpy(b, a, n);
			double d = (double)(now_ns() - t) / (double)n;
			if (best == 0 || d < best)
				best = d;
		}
	}
	free(a);
	free(b);
	return best > 0 ? best : 1;
}

static hoff_status push(hoff_backend *b, int32_t stream, uint8_t kind,
			int64_t arg, hoff_err *e)
{
	cpu *c = b->ctx;
	HOFF_REQUIRE(stream >= 0 && stream < c->p->nstreams);
	cstream *s = &c->s[stream];
	if (!hoff_grow((void **)&s->c, &s->cap, s->n + 1, sizeof *s->c))
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	s->c[s->n++] = (cmd){arg, kind};
	return HOFF_OK;
}

static hoff_status cpu_wait(hoff_backend *b, int32_t stream, int64_t ev,
			    hoff_err *e)
{
	return push(b, stream, C_WAIT, ev, e);
}

static hoff_status cpu_record(hoff_backend *b, int32_t stream, int64_t ev,
			      hoff_err *e)
{
	return push(b, stream, C_RECORD, ev, e);
}

static hoff_status cpu_run_op(hoff_backend *b, int32_t k, hoff_err *e)
{
	return push(b, 0, C_OP, k, e);
}

static hoff_status cpu_prefetch(hoff_backend *b, int64_t x, hoff_err *e)
{
	cpu *c = b->ctx;
	return push(b, c->p->xfer[x].stream, C_PREFETCH, x, e);
}

static hoff_status cpu_store(hoff_backend *b, int64_t x, hoff_err *e)
{
	cpu *c = b->ctx;
	return push(b, c->p->xfer[x].stream, C_STORE, x, e);
}

static hoff_status cpu_synchronize(hoff_backend *b, hoff_err *e)
{
	cpu *c = b->ctx;
	hoff_status st = HOFF_OK;
	for (int32_t i = 0; i < c->p->nstreams; i++) {
		cstream *s = &c->s[i];
		if (s->n == 0)
			continue;
		if (pthread_create(&s->th, NULL, stream_main, s) != 0) {
			st = hoff_seterr(e, HOFF_ENOMEM,
					 "cpu: cannot start the thread of "
					 "stream %d",
					 i);
			break;
		}
		s->started = true;
	}
	pthread_mutex_lock(&c->mu);
	c->t0_ns = now_ns() + START_DELAY_NS;
	atomic_store(&c->go, st == HOFF_OK ? 1 : 2);
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
	for (int32_t i = 0; i < c->p->nstreams; i++)
		if (c->s[i].started) {
			pthread_join(c->s[i].th, NULL);
			c->s[i].started = false;
		}
	return st;
}

static hoff_status cpu_results(hoff_backend *b, hoff_exec_result *r,
			       hoff_err *e)
{
	cpu *c = b->ctx;
	(void)e;
	for (int32_t k = 0; k < c->p->nops; k++) {
		r->op_start_ps[k] = c->op_t0[k] * 1000;
		r->op_end_ps[k] = c->op_t1[k] * 1000;
	}
	for (int64_t x = 0; x < c->p->nxfers; x++) {
		r->x_start_ps[x] = c->x_t0[x] * 1000;
		r->x_end_ps[x] = c->x_t1[x] * 1000;
	}
	for (int64_t i = 0; i < (int64_t)c->p->nops + c->p->nxfers; i++)
		r->bad[i] = c->bad[i];
	for (int32_t i = 0; i < c->p->nstreams; i++) {
		if (c->lag_ns[i] * 1000 > r->lag_max_ps)
			r->lag_max_ps = c->lag_ns[i] * 1000;
		r->overruns += c->overruns[i];
	}
	return HOFF_OK;
}

static hoff_status cpu_check(hoff_backend *b, const hoff_xregion *g,
			     int64_t *bad, hoff_err *e)
{
	cpu *c = b->ctx;
	(void)e;
	const uint8_t *base = g->tier == HOFF_DEVICE ? c->dev : c->host;
	*bad = hoff_pattern_check(base + g->off, g->bytes, g->tensor,
				  g->version);
	return HOFF_OK;
}

static void cpu_free(hoff_backend *b)
{
	cpu *c = b->ctx;
	if (c) {
		if (c->s)
			for (int32_t i = 0; i < c->p->nstreams; i++)
				free(c->s[i].c);
		free(c->s);
		free(c->dev);
		free(c->host);
		free((void *)c->done);
		free(c->ev_ns);
		free(c->lag_ns);
		free(c->overruns);
		free(c->op_t0);
		free(c->op_t1);
		free(c->x_t0);
		free(c->x_t1);
		free(c->bad);
		for (int32_t i = 0; c->tier && i < c->p->g->ntiers; i++)
			if (c->tier[i].init) {
				pthread_mutex_destroy(&c->tier[i].mu);
				pthread_cond_destroy(&c->tier[i].cv);
			}
		free(c->tier);
		if (c->sync_init) {
			pthread_mutex_destroy(&c->mu);
			pthread_cond_destroy(&c->cv);
		}
		free(c);
	}
	free(b);
}

/* (v2) Each tier's duplex state; a lock and a condition variable on
 * CLOCK_MONOTONIC where a factor is below 1. HOFF_ENOMEM. */
static hoff_status tiers_init(cpu *c)
{
	const hoff_graph *g = c->p->g;
	c->tier = hoff_zalloc((size_t)g->ntiers + 1, sizeof *c->tier);
	if (!c->tier)
		return HOFF_ENOMEM;
	for (int32_t i = 0; i < g->ntiers; i++) {
		ctier *t = &c->tier[i];
		const hoff_tier *gt = &g->tier[i];
		hoff_xduplex_init(&t->d, gt->h2d_duplex_ppm,
				  gt->d2h_duplex_ppm);
		t->on = gt->h2d_duplex_ppm < HOFF_DUPLEX_ONE ||
			gt->d2h_duplex_ppm < HOFF_DUPLEX_ONE;
		if (!t->on)
			continue;
		pthread_condattr_t ca;
		if (pthread_condattr_init(&ca) != 0)
			return HOFF_ENOMEM;
		bool ok = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) ==
				  0 &&
			  pthread_cond_init(&t->cv, &ca) == 0;
		pthread_condattr_destroy(&ca);
		if (!ok)
			return HOFF_ENOMEM;
		if (pthread_mutex_init(&t->mu, NULL) != 0) {
			pthread_cond_destroy(&t->cv);
			return HOFF_ENOMEM;
		}
		t->init = true;
	}
	return HOFF_OK;
}

static const hoff_backend_i cpu_iface = {
	.name = "cpu",
	.wait = cpu_wait,
	.record = cpu_record,
	.run_op = cpu_run_op,
	.prefetch = cpu_prefetch,
	.store = cpu_store,
	.synchronize = cpu_synchronize,
	.results = cpu_results,
	.check = cpu_check,
	.free = cpu_free,
};

hoff_status hoff_backend_cpu_new(const hoff_xplan *p, const hoff_exec_opts *o,
				 hoff_backend **out, hoff_err *e)
{
	HOFF_REQUIRE(p && o && out);
	*out = NULL;
	hoff_backend *b = hoff_backend_alloc(&cpu_iface, p, o, sizeof(cpu));
	if (!b)
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	cpu *c = b->ctx;
	c->p = p;
	c->o = *o;
	size_t nev = (size_t)p->nops + (size_t)p->nxfers + 1;
	size_t nx = (size_t)p->nxfers + 1, no = (size_t)p->nops + 1;
	c->s = hoff_zalloc((size_t)p->nstreams, sizeof *c->s);
	c->done = hoff_alloc(nev, sizeof *c->done);
	c->ev_ns = hoff_zalloc(nev, sizeof *c->ev_ns);
	c->lag_ns = hoff_zalloc((size_t)p->nstreams, sizeof *c->lag_ns);
	c->overruns = hoff_zalloc((size_t)p->nstreams, sizeof *c->overruns);
	c->op_t0 = hoff_zalloc(no, sizeof *c->op_t0);
	c->op_t1 = hoff_zalloc(no, sizeof *c->op_t1);
	c->x_t0 = hoff_zalloc(nx, sizeof *c->x_t0);
	c->x_t1 = hoff_zalloc(nx, sizeof *c->x_t1);
	c->bad = hoff_alloc(nev, sizeof *c->bad);
	if (!c->s || !c->done || !c->ev_ns || !c->lag_ns || !c->overruns ||
	    !c->op_t0 || !c->op_t1 || !c->x_t0 || !c->x_t1 || !c->bad) {
		cpu_free(b);
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	}
	c->dev = malloc((size_t)(p->arena_bytes > 0 ? p->arena_bytes : 1));
	c->host = malloc((size_t)(p->host_bytes > 0 ? p->host_bytes : 1));
	if (!c->dev || !c->host) {
		hoff_status st = hoff_seterr(
			e, HOFF_ENOMEM,
			"cpu: cannot allocate a %lld-byte device arena and a "
			"%lld-byte host arena (try --size-scale)",
			(long long)p->arena_bytes, (long long)p->host_bytes);
		cpu_free(b);
		return st;
	}
	if (pthread_mutex_init(&c->mu, NULL) != 0 ||
	    pthread_cond_init(&c->cv, NULL) != 0) {
		cpu_free(b); /* a failed init leaves nothing to destroy */
		return hoff_seterr(e, HOFF_ENOMEM, "cpu: cannot create a lock");
	}
	c->sync_init = true;
	if (tiers_init(c) != HOFF_OK) {
		cpu_free(b);
		return hoff_seterr(e, HOFF_ENOMEM, "cpu: cannot create a lock");
	}
	for (size_t i = 0; i < nev; i++)
		atomic_init(&c->done[i], 0);
	atomic_init(&c->sleepers, 0);
	atomic_init(&c->go, 0);
	for (size_t i = 0; i < nev; i++)
		c->bad[i] = -1;
	for (int32_t i = 0; i < p->nstreams; i++) {
		c->s[i].cpu = c;
		c->s[i].id = i;
	}
	c->copy_ns_per_B = memcpy_cost();
	/* Touch every page now, so no transfer pays first-touch faults. */
	memset(c->dev, 0, (size_t)(p->arena_bytes > 0 ? p->arena_bytes : 1));
	memset(c->host, 0, (size_t)(p->host_bytes > 0 ? p->host_bytes : 1));
	if (o->verify)
		for (int64_t i = 0; i < p->ninit; i++) {
			const hoff_xregion *g = &p->init[i];
			uint8_t *base = g->tier == HOFF_DEVICE ? c->dev : c->host;
			hoff_pattern_fill(base + g->off, g->bytes, g->tensor,
					  g->version);
		}
	snprintf(b->device, sizeof b->device, "cpu emulator (%ld cores)",
		 sysconf(_SC_NPROCESSORS_ONLN));
	*out = b;
	return HOFF_OK;
}

/* ---- calibration ---- */

#define CAL_BYTES ((size_t)64 << 20)

/* Called through volatile pointers, so the compiler can neither drop a
 * copy nobody reads nor move a loop across the clock reads. */
static void *(*volatile cal_memcpy)(void *, const void *, size_t) = memcpy;
static void escape(void *p) { (void)p; }
static void (*volatile cal_escape)(void *) = escape;

/* Rate in B/s of one copy of n bytes (0 when the clock saw no time). */
static double timed_copy(uint8_t *dst, const uint8_t *src, size_t n)
{
	int64_t t = now_ns();
	cal_memcpy(dst, src, n);
	int64_t d = now_ns() - t;
	return d > 0 ? (double)n * 1e9 / (double)d : 0;
}

static double copy_rate(uint8_t *dst, const uint8_t *src, size_t n, int reps)
{
	double best = 0;
	for (int i = 0; i < reps; i++) {
		double r = timed_copy(dst, src, n);
		if (r > best)
			best = r;
	}
	return best;
}

/* Into freshly mapped pages: each copy pays the first-touch faults a
 * pageable staging buffer would. */
static double pageable_rate(const uint8_t *src, size_t n, int reps)
{
	double best = 0;
	for (int i = 0; i < reps; i++) {
		uint8_t *dst = malloc(n);
		if (!dst)
			return 0;
		double r = timed_copy(dst, src, n);
		if (r > best)
			best = r;
		cal_escape(dst);
		free(dst);
	}
	return best;
}

typedef struct pingpong {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int turn, left;
} pingpong;

static void *pong(void *arg)
{
	pingpong *q = arg;
	pthread_mutex_lock(&q->mu);
	while (q->left > 0) {
		while (q->turn != 1)
			pthread_cond_wait(&q->cv, &q->mu);
		q->turn = 0;
		q->left--;
		pthread_cond_broadcast(&q->cv);
	}
	pthread_mutex_unlock(&q->mu);
	return NULL;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Median one-way hand-off between two threads: what a channel thread
 * takes to notice an event. */
static double handoff_s(void)
{
	enum { N = 200 };
	int64_t rt[N];
	pingpong q = {.turn = 0, .left = N};
	pthread_t th;
	if (pthread_mutex_init(&q.mu, NULL) != 0)
		return 0;
	if (pthread_cond_init(&q.cv, NULL) != 0) {
		pthread_mutex_destroy(&q.mu);
		return 0;
	}
	if (pthread_create(&th, NULL, pong, &q) != 0) {
		pthread_cond_destroy(&q.cv);
		pthread_mutex_destroy(&q.mu);
		return 0;
	}
	pthread_mutex_lock(&q.mu);
	for (int i = 0; i < N; i++) {
		int64_t t = now_ns();
		q.turn = 1;
		pthread_cond_broadcast(&q.cv);
		while (q.turn != 0)
			pthread_cond_wait(&q.cv, &q.mu);
		rt[i] = now_ns() - t;
	}
	pthread_mutex_unlock(&q.mu);
	pthread_join(th, NULL);
	pthread_cond_destroy(&q.cv);
	pthread_mutex_destroy(&q.mu);
	qsort(rt, N, sizeof rt[0], cmp_i64);
	return (double)rt[N / 2] / 2 * 1e-9;
}

/* Multiply-adds on 8 independent chains: 16 flops per iteration. */
static double fma_rate(void)
{
	double a[8];
	for (int i = 0; i < 8; i++)
		a[i] = 1.0 + i * 1e-9;
	const double m = 0.999999999, d = 1e-9;
	long n = 20000000;
	cal_escape(a);
	int64_t t = now_ns();
	for (long i = 0; i < n; i++)
		for (int j = 0; j < 8; j++)
			a[j] = a[j] * m + d;
	cal_escape(a);
	int64_t dt = now_ns() - t;
	return dt > 0 ? 16.0 * (double)n * 1e9 / (double)dt : 0;
}

/* A thread of the duplex measurement: reps copies of n bytes, started
 * with its partner, their mean rate in B/s. */
typedef struct copier {
	uint8_t *dst;
	const uint8_t *src;
	size_t n;
	int reps;
	atomic_int *go;
	double rate;
} copier;

static void *copier_main(void *arg)
{
	copier *q = arg;
	while (!atomic_load(q->go))
		relax();
	int64_t t = now_ns();
	for (int i = 0; i < q->reps; i++)
		cal_memcpy(q->dst, q->src, q->n);
	int64_t d = now_ns() - t;
	q->rate = d > 0 ? (double)q->n * q->reps * 1e9 / (double)d : 0;
	return NULL;
}

/* The emulated links' duplex: the mean rate of reps copies a->b (h2d)
 * alone, of c->d (d2h) alone, then of both at once in two threads; the
 * factors into cal. False when a thread cannot start. */
static bool duplex_rates(hoff_calib *cal, uint8_t *a, uint8_t *b, uint8_t *c,
			 uint8_t *d, size_t n, int reps)
{
	atomic_int go;
	atomic_init(&go, 1);
	copier q[2] = {{b, a, n, reps, &go, 0}, {d, c, n, reps, &go, 0}};
	double alone[2];
	for (int i = 0; i < 2; i++) {
		copier_main(&q[i]);
		alone[i] = q[i].rate;
	}
	atomic_store(&go, 0);
	pthread_t th;
	if (pthread_create(&th, NULL, copier_main, &q[1]) != 0)
		return false;
	atomic_store(&go, 1);
	copier_main(&q[0]);
	pthread_join(th, NULL);
	cal->h2d_both_Bps = q[0].rate;
	cal->d2h_both_Bps = q[1].rate;
	hoff_calib_duplex(cal, alone[0], alone[1]);
	return true;
}

hoff_status hoff_calibrate_cpu(hoff_calib *c, hoff_err *e)
{
	memset(c, 0, sizeof *c);
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	snprintf(c->device, sizeof c->device, "cpu emulator (%ld cores)",
		 cores);
	c->memory_bytes = pages > 0 && psz > 0 ? (int64_t)pages * psz : 0;
	uint8_t *a = malloc(CAL_BYTES), *b = malloc(CAL_BYTES);
	if (!a || !b) {
		free(a);
		free(b);
		return hoff_seterr(e, HOFF_ENOMEM, "calibrate: out of memory");
	}
	memset(a, 1, CAL_BYTES);
	memset(b, 2, CAL_BYTES);
	c->h2d_Bps = copy_rate(b, a, CAL_BYTES, 5);
	c->d2h_Bps = copy_rate(a, b, CAL_BYTES, 5);
	c->h2d_pageable_Bps = pageable_rate(a, CAL_BYTES, 3);
	c->d2h_pageable_Bps = pageable_rate(b, CAL_BYTES, 3);
	c->mem_bandwidth_Bps = 2 * (c->h2d_Bps > c->d2h_Bps ? c->h2d_Bps
							    : c->d2h_Bps);
	uint8_t *a2 = malloc(CAL_BYTES), *b2 = malloc(CAL_BYTES);
	bool ok = a2 && b2;
	if (ok) {
		memset(a2, 3, CAL_BYTES);
		memset(b2, 4, CAL_BYTES);
		ok = duplex_rates(c, a, b, b2, a2, CAL_BYTES, 5);
	}
	free(a);
	free(b);
	free(a2);
	free(b2);
	if (!ok)
		return hoff_seterr(e, HOFF_ENOMEM,
				   "calibrate: cannot measure both directions "
				   "at once (out of memory or threads)");
	c->latency_s = handoff_s();
	c->flops_per_s = fma_rate();
	/* An op is a busy wait: its fixed cost is one clock read. */
	int64_t t = now_ns();
	for (int i = 0; i < 100000; i++)
		(void)now_ns();
	c->op_overhead_s = (double)(now_ns() - t) / 100000 * 1e-9;
	return HOFF_OK;
}
