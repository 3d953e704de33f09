/* xcheck.c: the happens-before checker over a plan's command stream (see
 * hoff_exec_check in exec.h).
 *
 * The stream is what hoff_exec_walk hands a backend, as hoff_exec_record
 * keeps it. Order is a vector clock per stream: a command on stream s
 * advances s's own component; a record copies the stream's clock into
 * the event; a wait joins the event's clock into the stream's (only a
 * record issued earlier counts, as in CUDA). Command a happens before b
 * when b's clock has reached a's position on a's stream.
 *
 * The walk's order is a linear extension of that order (a stream's
 * commands come in walk order, and a wait only follows its record), so
 * the accesses can be checked in walk order against a shadow of each
 * arena, FastTrack's way: per byte range, the last writer and, per
 * stream, the last reader since then. A write must follow both, a read
 * the writer; the latest reader of a stream stands for its earlier ones,
 * which precede it. Every unordered conflicting pair then shows up as at
 * least one report: if a and b conflict, the first of the later accesses
 * that is unordered with the shadow's entry is reported.
 * Cost: O(accesses * (segments touched + streams)), plus the segment
 * array's inserts. */
#include <stdlib.h>
#include <string.h>

#include "exec.h"

/* A byte range of one arena with its history. */
typedef struct seg {
	int64_t lo, hi;
	int64_t w;   /* last writer (command), HOFF_NONE */
	int32_t wt;  /* its tensor */
	int64_t *rd; /* (nstreams) last reader per stream since w, and */
	int32_t *rt; /* (nstreams) their tensors */
} seg;

typedef struct shadow {
	seg *s;
	size_t n, cap;
} shadow;

typedef struct checker {
	const hoff_xplan *p;
	int32_t ns;	  /* streams */
	int64_t *clock;	  /* (ns * ns) per stream */
	int64_t *evc;	  /* (nev * ns) per recorded event */
	bool *rec;	  /* (nev) */
	int64_t *tc;	  /* (nev * ns) per command, its clock */
	int32_t *tstream; /* (nev) */
	shadow sh[2];	  /* device, host */
	hoff_race *r;
	hoff_err *e;
} checker;

/* a happens before b (a issued earlier and already run). */
static bool before(const checker *c, int64_t a, int64_t b)
{
	int32_t s = c->tstream[a];
	return c->tc[b * c->ns + s] >= c->tc[a * c->ns + s];
}

static bool seg_init(checker *c, seg *g, int64_t lo, int64_t hi,
		     const seg *from)
{
	g->lo = lo;
	g->hi = hi;
	g->rd = hoff_alloc((size_t)c->ns, sizeof *g->rd);
	g->rt = hoff_alloc((size_t)c->ns, sizeof *g->rt);
	if (!g->rd || !g->rt) {
		free(g->rd);
		free(g->rt);
		return false;
	}
	g->w = from ? from->w : HOFF_NONE;
	g->wt = from ? from->wt : HOFF_NONE;
	for (int32_t i = 0; i < c->ns; i++) {
		g->rd[i] = from ? from->rd[i] : HOFF_NONE;
		g->rt[i] = from ? from->rt[i] : HOFF_NONE;
	}
	return true;
}

/* Index of the first segment with hi > x. */
static size_t seg_find(const shadow *h, int64_t x)
{
	size_t lo = 0, hi = h->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (h->s[mid].hi <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool seg_insert(checker *c, shadow *h, size_t at, int64_t lo, int64_t hi,
		       const seg *from)
{
	if (!hoff_grow((void **)&h->s, &h->cap, h->n + 1, sizeof *h->s))
		return false;
	memmove(&h->s[at + 1], &h->s[at], (h->n - at) * sizeof *h->s);
	h->n++;
	if (!seg_init(c, &h->s[at], lo, hi, from)) {
		memmove(&h->s[at], &h->s[at + 1],
			(h->n - at - 1) * sizeof *h->s);
		h->n--;
		return false;
	}
	return true;
}

/* Splits the segment that strictly contains x, if any, at x. */
static bool seg_split(checker *c, shadow *h, int64_t x)
{
	size_t i = seg_find(h, x);
	if (i == h->n || h->s[i].lo >= x)
		return true;
	seg copy = h->s[i]; /* the arrays stay with h->s[i] */
	h->s[i].hi = x;
	return seg_insert(c, h, i + 1, x, copy.hi, &copy);
}

/* Makes [lo, hi) exactly the segments [*first, *last), creating the
 * untouched ones; false on no memory. */
static bool seg_cover(checker *c, shadow *h, int64_t lo, int64_t hi,
		      size_t *first, size_t *last)
{
	if (!seg_split(c, h, lo) || !seg_split(c, h, hi))
		return false;
	size_t i = seg_find(h, lo);
	*first = i;
	for (int64_t x = lo; x < hi; i++) {
		if (i < h->n && h->s[i].lo == x) {
			x = h->s[i].hi;
			continue;
		}
		int64_t next = i < h->n && h->s[i].lo < hi ? h->s[i].lo : hi;
		if (!seg_insert(c, h, i, x, next, NULL))
			return false;
		x = next;
	}
	*last = i;
	return true;
}

static void report(checker *c, int64_t a, int32_t ta, int64_t b, int32_t tb,
		   bool host, int64_t off)
{
	hoff_race *r = c->r;
	if (r->kind == HOFF_RACE_NONE) {
		r->kind = HOFF_RACE_PAIR;
		r->a = a;
		r->b = b;
		r->ta = ta;
		r->tb = tb;
		r->host = host;
		r->off = off;
	}
	r->nraces++;
}

/* Command t touches [off, off + bytes) of arena `host` for tensor tn. */
static bool access(checker *c, int64_t t, int32_t tn, bool host, int64_t off,
		   int64_t bytes, bool write)
{
	if (bytes <= 0)
		return true;
	shadow *h = &c->sh[host];
	size_t i, end;
	if (!seg_cover(c, h, off, off + bytes, &i, &end))
		return false;
	int32_t s = c->tstream[t];
	for (; i < end; i++) {
		seg *g = &h->s[i];
		if (g->w != HOFF_NONE && g->w != t && !before(c, g->w, t))
			report(c, g->w, g->wt, t, tn, host, g->lo);
		if (write) {
			for (int32_t q = 0; q < c->ns; q++)
				if (g->rd[q] != HOFF_NONE && g->rd[q] != t &&
				    !before(c, g->rd[q], t))
					report(c, g->rd[q], g->rt[q], t, tn,
					       host, g->lo);
			g->w = t;
			g->wt = tn;
			for (int32_t q = 0; q < c->ns; q++)
				g->rd[q] = HOFF_NONE;
		} else if (g->w != t) {
			g->rd[s] = t;
			g->rt[s] = tn;
		}
	}
	return true;
}

/* Every access of command t, reads before writes. */
static bool task_accesses(checker *c, int64_t t)
{
	const hoff_xplan *p = c->p;
	const hoff_graph *g = p->g;
	if (t >= p->nops) {
		const hoff_xfer *xf = &p->xfer[t - p->nops];
		bool host_write = xf->store && !xf->same;
		return access(c, t, xf->tensor, xf->store == 0,
			      xf->store ? xf->dev_off : xf->host_off, xf->bytes,
			      false) &&
		       access(c, t, xf->tensor, xf->store != 0,
			      xf->store ? xf->host_off : xf->dev_off, xf->bytes,
			      xf->store ? host_write : true);
	}
	const hoff_xop *o = &p->op[t];
	int32_t k = o->op;
	for (int64_t j = g->in_off[k]; j < g->in_off[k + 1]; j++)
		if (!access(c, t, g->in[j], false,
			    p->in_dev[o->in_at + (j - g->in_off[k])],
			    g->tensor[g->in[j]].bytes, false))
			return false;
	for (int64_t j = g->upd_off[k]; j < g->upd_off[k + 1]; j++)
		if (!access(c, t, g->upd[j], false,
			    p->upd_dev[o->upd_at + (j - g->upd_off[k])],
			    g->tensor[g->upd[j]].bytes, true))
			return false;
	for (int64_t j = g->out_off[k]; j < g->out_off[k + 1]; j++) {
		int64_t off = p->out_dev[o->out_at + (j - g->out_off[k])];
		if (off != HOFF_NONE && /* a recompute's resident output */
		    !access(c, t, g->out[j], false, off,
			    g->tensor[g->out[j]].bytes, true))
			return false;
	}
	if (o->ws_off != HOFF_NONE && !access(c, t, HOFF_NONE, false, o->ws_off,
					      g->op[k].workspace_bytes, true))
		return false;
	return true;
}

static hoff_status analyze(checker *c, const hoff_xcmds *rc)
{
	int32_t ns = c->ns;
	for (size_t i = 0; i < rc->n; i++) {
		const hoff_xcmd *m = &rc->c[i];
		int64_t *sc = &c->clock[(size_t)m->stream * (size_t)ns];
		if (m->kind == HOFF_XCMD_WAIT) {
			if (!c->rec[m->arg])
				continue; /* CUDA: a no-op (the walk says) */
			const int64_t *ec = &c->evc[m->arg * ns];
			for (int32_t q = 0; q < ns; q++)
				if (ec[q] > sc[q])
					sc[q] = ec[q];
		} else if (m->kind == HOFF_XCMD_RECORD) {
			memcpy(&c->evc[m->arg * ns], sc,
			       (size_t)ns * sizeof *sc);
			c->rec[m->arg] = true;
		} else {
			sc[m->stream]++;
			c->tstream[m->arg] = m->stream;
			memcpy(&c->tc[m->arg * ns], sc,
			       (size_t)ns * sizeof *sc);
			if (!task_accesses(c, m->arg))
				return hoff_seterr(c->e, HOFF_ENOMEM,
						   "out of memory");
		}
	}
	return HOFF_OK;
}

static void shadow_free(shadow *h)
{
	for (size_t i = 0; i < h->n; i++) {
		free(h->s[i].rd);
		free(h->s[i].rt);
	}
	free(h->s);
}

hoff_status hoff_exec_check(const hoff_xplan *p, const hoff_exec_opts *o,
			    hoff_race *r, hoff_err *e)
{
	HOFF_REQUIRE(p && o && r);
	memset(r, 0, sizeof *r);
	r->a = r->b = HOFF_NONE;
	hoff_xcmds rc;
	hoff_walk_info info;
	hoff_status st = hoff_exec_record(p, o, &rc, &info, e);
	r->nwaits = info.nwaits;
	if (st == HOFF_EINVALID && info.fwd_cmd != HOFF_NONE) {
		r->kind = HOFF_RACE_FORWARD;
		r->a = info.fwd_ev;
		r->b = info.fwd_cmd;
		r->ta = r->tb = HOFF_NONE;
		r->nraces = 1;
		free(rc.c);
		return HOFF_OK;
	}
	if (st == HOFF_OK && o->drop_wait >= info.nwaits)
		st = hoff_seterr(e, HOFF_EINPUT,
				 "--drop-wait %lld: the plan has %lld waits "
				 "(0 .. %lld)",
				 (long long)o->drop_wait,
				 (long long)info.nwaits,
				 (long long)info.nwaits - 1);
	if (st != HOFF_OK) {
		free(rc.c);
		return st;
	}
	size_t ns = (size_t)p->nstreams;
	size_t nev = (size_t)p->nops + (size_t)p->nxfers + 1;
	checker c = {.p = p, .ns = p->nstreams, .r = r, .e = e};
	c.clock = hoff_zalloc(ns * ns, sizeof *c.clock);
	c.evc = hoff_zalloc(nev * ns, sizeof *c.evc);
	c.rec = hoff_zalloc(nev, sizeof *c.rec);
	c.tc = hoff_zalloc(nev * ns, sizeof *c.tc);
	c.tstream = hoff_zalloc(nev, sizeof *c.tstream);
	if (!c.clock || !c.evc || !c.rec || !c.tc || !c.tstream)
		st = hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	if (st == HOFF_OK)
		st = analyze(&c, &rc);
	shadow_free(&c.sh[0]);
	shadow_free(&c.sh[1]);
	free(c.clock);
	free(c.evc);
	free(c.rec);
	free(c.tc);
	free(c.tstream);
	free(rc.c);
	return st;
}

/* "steps[4] prefetch "w1"" or "steps[3] op "op1"". */
static int cmd_name(const hoff_xplan *p, int64_t ev, char *buf, size_t len)
{
	if (ev < p->nops)
		return snprintf(buf, len, "steps[%lld] %s \"%s\"",
				(long long)p->op[ev].step,
				p->op[ev].recompute ? "recompute" : "op",
				p->g->op[p->op[ev].op].id);
	const hoff_xfer *xf = &p->xfer[ev - p->nops];
	return snprintf(buf, len, "steps[%lld] %s \"%s\"", (long long)xf->step,
			xf->store ? "store" : "prefetch",
			p->g->tensor[xf->tensor].id);
}

void hoff_race_format(const hoff_xplan *p, const hoff_race *r, char *buf,
		      size_t len)
{
	char a[160], b[160];
	if (r->kind == HOFF_RACE_NONE) {
		snprintf(buf, len, "no race (%lld waits)",
			 (long long)r->nwaits);
		return;
	}
	cmd_name(p, r->a, a, sizeof a);
	cmd_name(p, r->b, b, sizeof b);
	if (r->kind == HOFF_RACE_FORWARD) {
		snprintf(buf, len,
			 "%s waits for %s, whose event is not recorded yet "
			 "(a no-op on CUDA)",
			 b, a);
		return;
	}
	const hoff_graph *g = p->g;
	snprintf(buf, len,
		 "%s and %s are unordered and touch the same %s bytes "
		 "(from offset %lld): \"%s\" and \"%s\"; %lld racing "
		 "accesses",
		 a, b, r->host ? "host" : "device", (long long)r->off,
		 r->ta == HOFF_NONE ? "(workspace)" : g->tensor[r->ta].id,
		 r->tb == HOFF_NONE ? "(workspace)" : g->tensor[r->tb].id,
		 (long long)r->nraces);
}
