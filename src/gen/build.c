/* build.c: the graph builder of src/gen (see build.h). Every call first
 * checks b->st, so a failure anywhere leaves the graph as it was at that
 * point and the generator sees it once, at the end. */
#include "build.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void oom(hoff_build *b)
{
	if (b->st == HOFF_OK)
		b->st = hoff_seterr(b->e, HOFF_ENOMEM, "%s: out of memory",
				    b->who);
}

/* Formats into dst (n bytes); false, with the failure kept, when it does
 * not fit. */
static bool vfmt(hoff_build *b, char *dst, size_t n, const char *fmt,
		 va_list ap)
{
	int r = vsnprintf(dst, n, fmt, ap);
	if (r >= 0 && (size_t)r < n)
		return true;
	if (b->st == HOFF_OK)
		b->st = hoff_seterr(b->e, HOFF_EINPUT, "%s: id too long",
				    b->who);
	return false;
}

/* id, a new tier, tensor or op, or HOFF_NONE when the graph refused it
 * (its message is in b->e). */
static int32_t added(hoff_build *b, int32_t id)
{
	if (id == HOFF_NONE)
		b->st = HOFF_ENOMEM;
	return id;
}

hoff_status hoff_build_begin(hoff_build *b, const char *who, int64_t limit,
			     hoff_err *e)
{
	*b = (hoff_build){.e = e, .who = who, .limit = limit};
	if (!(b->g = hoff_graph_new()))
		oom(b);
	return b->st;
}

void hoff_build_free(hoff_build *b)
{
	hoff_graph_free(b->g);
	b->g = NULL;
}

hoff_graph *hoff_build_take(hoff_build *b)
{
	hoff_graph *g = b->g;
	b->g = NULL;
	return g;
}

hoff_status hoff_build_finish(hoff_build *b)
{
	if (b->st == HOFF_OK)
		b->st = hoff_graph_finish(b->g, b->g->name, b->e);
	return b->st;
}

const char *hoff_build_intern(hoff_build *b, const char *fmt, ...)
{
	if (b->st != HOFF_OK)
		return NULL;
	va_list ap;
	va_start(ap, fmt);
	bool ok = vfmt(b, b->name, sizeof b->name, fmt, ap);
	va_end(ap);
	const char *s = ok ? hoff_graph_intern(b->g, b->name) : NULL;
	if (ok && !s)
		oom(b);
	return s;
}

void hoff_build_set(hoff_build *b, int field, const char *fmt, ...)
{
	if (b->st != HOFF_OK)
		return;
	char **dst = field == HOFF_BUILD_NAME ? &b->g->name : &b->g->meta;
	va_list ap, aq;
	va_start(ap, fmt);
	va_copy(aq, ap);
	int n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	free(*dst);
	*dst = n < 0 ? NULL : malloc((size_t)n + 1);
	if (*dst)
		vsnprintf(*dst, (size_t)n + 1, fmt, ap);
	else
		oom(b);
	va_end(ap);
}

void hoff_build_device(hoff_build *b, const char *name, int64_t memory_bytes,
		       double flops_per_s, double mem_bandwidth_Bps,
		       double overhead_s)
{
	if (b->st != HOFF_OK)
		return;
	hoff_device *d = &b->g->device;
	if (!(d->name = hoff_graph_intern(b->g, name)))
		oom(b);
	d->memory_bytes = memory_bytes;
	d->flops_per_s = flops_per_s;
	d->mem_bandwidth_Bps = mem_bandwidth_Bps;
	d->has_flops = d->has_mem_bw = true;
	if (overhead_s >= 0) {
		d->op_overhead_s = overhead_s;
		d->has_overhead = true;
	}
}

/* Sets a duplex factor f (0 or 1: left at the default, not written). */
static void duplex(double f, double *x, bool *has, int32_t *ppm)
{
	if (f <= 0 || f >= 1)
		return;
	*x = f;
	*has = true;
	*ppm = (int32_t)(f * 1e6 + 0.5); /* FORMAT.md rule 3's F */
}

int32_t hoff_build_tier_add(hoff_build *b, const hoff_build_tier *t, bool v1)
{
	if (b->st != HOFF_OK)
		return HOFF_NONE;
	int32_t r = added(b, hoff_graph_add_tier(b->g, t->name, b->e));
	if (r == HOFF_NONE)
		return HOFF_NONE;
	hoff_tier *x = &b->g->tier[r];
	x->h2d_Bps = t->h2d_Bps;
	x->d2h_Bps = t->d2h_Bps;
	x->latency_s = t->latency_s;
	x->has_latency = true;
	x->capacity_bytes = t->capacity_bytes;
	if (!v1) {
		duplex(t->h2d_duplex, &x->h2d_duplex, &x->has_h2d_duplex,
		       &x->h2d_duplex_ppm);
		duplex(t->d2h_duplex, &x->d2h_duplex, &x->has_d2h_duplex,
		       &x->d2h_duplex_ppm);
	}
	return r;
}

/* A tensor with the formatted id. */
static int32_t vtensor(hoff_build *b, int64_t bytes, int kind, int32_t home,
		       const char *fmt, va_list ap)
{
	if (b->st != HOFF_OK || !vfmt(b, b->name, sizeof b->name, fmt, ap))
		return HOFF_NONE;
	assert(bytes > 0);
	int32_t t = added(b, hoff_graph_add_tensor(b->g, b->name, bytes, b->e));
	if (t == HOFF_NONE)
		return HOFF_NONE;
	hoff_tensor *x = &b->g->tensor[t];
	x->kind = (uint8_t)kind;
	x->flags |= HOFF_T_HAS_KIND;
	if (home != HOFF_BUILD_PRODUCED) {
		x->home = home;
		x->flags |= HOFF_T_HAS_HOME;
	}
	hoff_tensor_defaults(x);
	return t;
}

int32_t hoff_build_tensor(hoff_build *b, int64_t bytes, int kind, int32_t home,
			  const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int32_t t = vtensor(b, bytes, kind, home, fmt, ap);
	va_end(ap);
	return t;
}

bool hoff_build_op(hoff_build *b, const char *kind, int64_t layer,
		   const char *fmt, ...)
{
	if (b->st != HOFF_OK || (b->limit > 0 && b->g->nops >= b->limit))
		return false;
	va_list ap;
	va_start(ap, fmt);
	bool ok = vfmt(b, b->id, sizeof b->id, fmt, ap);
	va_end(ap);
	if (!ok)
		return false;
	int32_t k = added(b, hoff_graph_add_op(b->g, b->id, b->e));
	if (k == HOFF_NONE)
		return false;
	hoff_op *o = &b->g->op[k];
	o->kind = kind;
	o->layer = layer;
	o->flags |= HOFF_O_HAS_LAYER;
	b->last = b->g->nops == b->limit;
	return true;
}

void hoff_build_use(hoff_build *b, hoff_use u, int32_t t)
{
	if (b->st == HOFF_OK && t != HOFF_NONE)
		b->st = hoff_graph_op_use(b->g, u, t, b->e);
}

int32_t hoff_build_out(hoff_build *b, int64_t bytes, int kind, const char *fmt,
		       ...)
{
	va_list ap;
	va_start(ap, fmt);
	int32_t t = vtensor(b, bytes, b->last ? HOFF_KIND_OUTPUT : kind,
			    HOFF_BUILD_PRODUCED, fmt, ap);
	va_end(ap);
	hoff_build_use(b, HOFF_USE_OUT, t);
	return t;
}

static hoff_op *cur(hoff_build *b)
{
	return &b->g->op[b->g->nops - 1];
}

/* Bytes of the current op's lists, an update twice (read and written). */
static double io_bytes(const hoff_graph *g)
{
	int32_t k = g->nops - 1;
	double s = 0;
	for (int64_t i = g->in_off[k]; i < g->in_off[k + 1]; i++)
		s += (double)g->tensor[g->in[i]].bytes;
	for (int64_t i = g->upd_off[k]; i < g->upd_off[k + 1]; i++)
		s += 2.0 * (double)g->tensor[g->upd[i]].bytes;
	for (int64_t i = g->out_off[k]; i < g->out_off[k + 1]; i++)
		s += (double)g->tensor[g->out[i]].bytes;
	return s;
}

void hoff_build_cost(hoff_build *b, double flops, double bytes)
{
	if (b->st != HOFF_OK)
		return;
	hoff_op *o = cur(b);
	o->bytes_accessed = bytes < 0 ? io_bytes(b->g) : bytes;
	o->flags |= HOFF_O_HAS_BYTES_ACCESSED;
	if (flops >= 0) {
		o->flops = flops;
		o->flags |= HOFF_O_HAS_FLOPS;
	}
}

void hoff_build_time(hoff_build *b, double time_s)
{
	if (b->st != HOFF_OK)
		return;
	cur(b)->time_s = time_s;
	cur(b)->flags |= HOFF_O_HAS_TIME;
}

void hoff_build_workspace(hoff_build *b, int64_t bytes)
{
	if (b->st != HOFF_OK || bytes <= 0)
		return;
	cur(b)->workspace_bytes = bytes;
	cur(b)->flags |= HOFF_O_HAS_WORKSPACE;
}

uint64_t hoff_build_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}
