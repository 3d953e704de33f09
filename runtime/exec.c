/* exec.c: the backend-independent executor — the walk that hands a lowered
 * schedule to a backend, the measured timeline and summary built from the
 * backend's per-command times, verification faults, and graph scaling.
 * Invariant: the walk issues commands in step order, each preceded by its
 * waits, so a stream's commands are in step order (xplan.h). */
#include "exec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

hoff_exec_opts hoff_exec_defaults(void)
{
	return (hoff_exec_opts){.verify = false,
				.corrupt_step = HOFF_NONE,
				.device = 0};
}

void hoff_backend_free(hoff_backend *b)
{
	if (b)
		b->iface->free(b);
}

static hoff_status enqueue_op(hoff_backend *b, int32_t k, hoff_err *e)
{
	const hoff_xplan *p = b->plan;
	const hoff_backend_i *f = b->iface;
	const hoff_xop *o = &p->op[k];
	hoff_status st;
	for (int32_t j = 0; j < o->nwait; j++)
		if ((st = f->wait(b, 0, hoff_xplan_xev(p, p->wait[o->wait_off + j]),
				  e)) != HOFF_OK)
			return st;
	if ((st = f->run_op(b, k, e)) != HOFF_OK)
		return st;
	return f->record(b, 0, k, e);
}

static hoff_status enqueue_xfer(hoff_backend *b, int64_t x, hoff_err *e)
{
	const hoff_xplan *p = b->plan;
	const hoff_backend_i *f = b->iface;
	const hoff_xfer *xf = &p->xfer[x];
	hoff_status st;
	if (xf->after_op != HOFF_NONE &&
	    (st = f->wait(b, xf->stream, xf->after_op, e)) != HOFF_OK)
		return st;
	for (int32_t j = 0; j < xf->nwait; j++)
		if ((st = f->wait(b, xf->stream,
				  hoff_xplan_xev(p, p->wait[xf->wait_off + j]),
				  e)) != HOFF_OK)
			return st;
	st = xf->store ? f->store(b, x, e) : f->prefetch(b, x, e);
	if (st != HOFF_OK)
		return st;
	return f->record(b, xf->stream, hoff_xplan_xev(p, x), e);
}

static void add_fault(hoff_exec_result *r, hoff_exec_fault f)
{
	if (r->nfaults < HOFF_EXEC_MAXFAULTS)
		r->fault[r->nfaults] = f;
	r->nfaults++;
}

/* Measured timeline, summary and channel traffic from the raw times. */
static hoff_status measure(const hoff_xplan *p, hoff_exec_result *r,
			   hoff_err *e)
{
	const hoff_graph *g = p->g;
	hoff_summary *m = &r->measured;
	int64_t prev_end = 0, x = 0;
	for (int32_t k = 0; k <= p->nops; k++) {
		for (; x < p->nxfers &&
		       (k == p->nops || p->xfer[x].step < p->op[k].step);
		     x++) {
			const hoff_xfer *xf = &p->xfer[x];
			hoff_event ev = {.start_ps = r->x_start_ps[x],
					 .end_ps = r->x_end_ps[x],
					 .step = xf->step, .id = xf->tensor,
					 .tier = xf->tier,
					 .kind = xf->store ? HOFF_EV_STORE
							   : HOFF_EV_PREFETCH,
					 .await = HOFF_NONE};
			if (hoff_timeline_event(&r->tl, ev) != HOFF_OK)
				return hoff_seterr(e, HOFF_ENOMEM,
						   "out of memory");
			hoff_exec_chan *c = &r->chan[xf->stream];
			c->bytes += xf->bytes;
			c->nxfers++;
			c->busy_ps += ev.end_ps - ev.start_ps;
			if (xf->store)
				m->d2h_bytes += xf->bytes;
			else
				m->h2d_bytes += xf->bytes;
			if (ev.end_ps > m->makespan_ps)
				m->makespan_ps = ev.end_ps;
		}
		if (k == p->nops)
			break;
		hoff_event ev = {.start_ps = prev_end,
				 .end_ps = r->op_start_ps[k],
				 .step = p->op[k].step, .id = k,
				 .tier = HOFF_NONE, .kind = HOFF_EV_STALL,
				 .await = HOFF_NONE};
		if (ev.end_ps > ev.start_ps &&
		    hoff_timeline_event(&r->tl, ev) != HOFF_OK)
			return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
		ev.kind = HOFF_EV_OP;
		ev.start_ps = r->op_start_ps[k];
		ev.end_ps = prev_end = r->op_end_ps[k];
		if (hoff_timeline_event(&r->tl, ev) != HOFF_OK)
			return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
		m->compute_ps += ev.end_ps - ev.start_ps;
		if (ev.end_ps > m->makespan_ps)
			m->makespan_ps = ev.end_ps;
	}
	m->stall_ps = m->makespan_ps - m->compute_ps;
	for (int32_t i = 0; i < g->ntiers; i++) {
		r->chan[1 + 2 * i].nominal_Bps = g->tier[i].h2d_Bps;
		r->chan[2 + 2 * i].nominal_Bps = g->tier[i].d2h_Bps;
	}
	return hoff_xplan_memory(p, r->op_start_ps, r->op_end_ps, r->x_end_ps,
				 &r->tl, &m->peak_bytes, e);
}

static hoff_status verify(hoff_backend *b, hoff_exec_result *r, hoff_err *e)
{
	const hoff_xplan *p = b->plan;
	r->checked = true;
	for (int64_t x = 0; x < p->nxfers; x++)
		if (!p->xfer[x].store && r->x_bad[x] >= 0)
			add_fault(r, (hoff_exec_fault){
					     .step = p->xfer[x].step,
					     .tensor = p->xfer[x].tensor,
					     .tier = p->xfer[x].tier,
					     .version = p->xfer[x].version,
					     .byte = r->x_bad[x]});
	for (int64_t i = 0; i < p->nfinal; i++) {
		const hoff_xregion *g = &p->final[i];
		int64_t bad;
		hoff_status st = b->iface->check(b, g, &bad, e);
		if (st != HOFF_OK)
			return st;
		if (bad >= 0)
			add_fault(r, (hoff_exec_fault){.step = HOFF_NONE,
						       .tensor = g->tensor,
						       .tier = g->tier,
						       .version = g->version,
						       .byte = bad});
	}
	return HOFF_OK;
}

hoff_status hoff_exec_run(hoff_backend *b, hoff_exec_result *r, hoff_err *e)
{
	HOFF_REQUIRE(b && r);
	const hoff_xplan *p = b->plan;
	memset(r, 0, sizeof *r);
	size_t nx = (size_t)p->nxfers + 1, no = (size_t)p->nops + 1;
	r->op_start_ps = hoff_zalloc(no, sizeof *r->op_start_ps);
	r->op_end_ps = hoff_zalloc(no, sizeof *r->op_end_ps);
	r->x_start_ps = hoff_zalloc(nx, sizeof *r->x_start_ps);
	r->x_end_ps = hoff_zalloc(nx, sizeof *r->x_end_ps);
	r->x_bad = hoff_alloc(nx, sizeof *r->x_bad);
	r->chan = hoff_zalloc((size_t)p->nstreams, sizeof *r->chan);
	if (!r->op_start_ps || !r->op_end_ps || !r->x_start_ps ||
	    !r->x_end_ps || !r->x_bad || !r->chan)
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	for (size_t i = 0; i < nx; i++)
		r->x_bad[i] = -1;
	snprintf(r->device, sizeof r->device, "%s", b->device);
	hoff_status st = HOFF_OK;
	int64_t x = 0;
	for (int32_t k = 0; k <= p->nops && st == HOFF_OK; k++) {
		for (; st == HOFF_OK && x < p->nxfers &&
		       (k == p->nops || p->xfer[x].step < p->op[k].step);
		     x++)
			st = enqueue_xfer(b, x, e);
		if (st == HOFF_OK && k < p->nops)
			st = enqueue_op(b, k, e);
	}
	if (st == HOFF_OK)
		st = b->iface->synchronize(b, e);
	if (st == HOFF_OK)
		st = b->iface->results(b, r, e);
	if (st == HOFF_OK)
		st = measure(p, r, e);
	if (st == HOFF_OK && b->opts.verify)
		st = verify(b, r, e);
	return st;
}

void hoff_exec_result_free(hoff_exec_result *r)
{
	if (!r)
		return;
	free(r->op_start_ps);
	free(r->op_end_ps);
	free(r->x_start_ps);
	free(r->x_end_ps);
	free(r->x_bad);
	free(r->chan);
	hoff_timeline_free(&r->tl);
	memset(r, 0, sizeof *r);
}

void hoff_exec_fault_format(const hoff_xplan *p, const hoff_exec_fault *f,
			    char *buf, size_t len)
{
	const hoff_graph *g = p->g;
	const char *t = g->tensor[f->tensor].id;
	if (f->step != HOFF_NONE)
		snprintf(buf, len,
			 "steps[%lld] prefetch \"%s\" from \"%s\": byte %lld "
			 "differs from version %u of its pattern",
			 (long long)f->step, t, g->tier[f->tier].name,
			 (long long)f->byte, f->version);
	else if (f->tier == HOFF_DEVICE)
		snprintf(buf, len,
			 "end: \"%s\" on the device: byte %lld differs from "
			 "version %u of its pattern",
			 t, (long long)f->byte, f->version);
	else
		snprintf(buf, len,
			 "end: \"%s\" on tier \"%s\": byte %lld differs from "
			 "version %u of its pattern",
			 t, g->tier[f->tier].name, (long long)f->byte,
			 f->version);
}

/* ceil(x * k) as bytes; -1 when it leaves [0, 2^62). */
static int64_t scale_bytes(int64_t x, double k)
{
	double v = ceil((double)x * k);
	if (!(v >= 0 && v < 4611686018427387904.0))
		return -1;
	return (int64_t)v;
}

hoff_status hoff_exec_scale(hoff_graph *g, double time_k, double size_k,
			    hoff_err *e)
{
	if (!isfinite(time_k) || time_k <= 0)
		return hoff_seterr(e, HOFF_EINPUT,
				   "--time-scale must be a number > 0");
	if (!isfinite(size_k) || size_k <= 0)
		return hoff_seterr(e, HOFF_EINPUT,
				   "--size-scale must be a number > 0");
	hoff_device *d = &g->device;
	d->op_overhead_s *= time_k;
	d->flops_per_s /= time_k;
	d->mem_bandwidth_Bps /= time_k;
	for (int32_t i = 0; i < g->ntiers; i++) {
		hoff_tier *t = &g->tier[i];
		t->latency_s *= time_k;
		t->h2d_Bps *= size_k / time_k;
		t->d2h_Bps *= size_k / time_k;
		if (size_k != 1)
			t->capacity_bytes = HOFF_UNLIMITED;
		t->latency_ps = hoff_ps(t->latency_s);
		if (t->latency_ps < 0 || !isfinite(t->h2d_Bps) ||
		    !(t->h2d_Bps > 0) || !isfinite(t->d2h_Bps) ||
		    !(t->d2h_Bps > 0))
			return hoff_seterr(e, HOFF_EINPUT,
					   "tier \"%s\": out of range once "
					   "scaled",
					   t->name);
	}
	if (size_k != 1) {
		d->memory_bytes = scale_bytes(d->memory_bytes, size_k);
		if (d->memory_bytes < 0)
			return hoff_seterr(e, HOFF_EINPUT,
					   "device memory out of range once "
					   "scaled");
		for (int32_t t = 0; t < g->ntensors; t++) {
			int64_t b = scale_bytes(g->tensor[t].bytes, size_k);
			if (b < 0)
				return hoff_seterr(e, HOFF_EINPUT,
						   "tensor \"%s\": bytes out of "
						   "range once scaled",
						   g->tensor[t].id);
			g->tensor[t].bytes = b > 0 ? b : 1;
		}
	}
	int64_t total = 0;
	for (int32_t k = 0; k < g->nops; k++) {
		hoff_op *o = &g->op[k];
		if (size_k != 1) {
			o->workspace_bytes = scale_bytes(o->workspace_bytes,
							 size_k);
			if (o->workspace_bytes < 0)
				return hoff_seterr(e, HOFF_EINPUT,
						   "op \"%s\": workspace out of "
						   "range once scaled",
						   o->id);
		}
		double s;
		if (o->flags & HOFF_O_HAS_TIME) {
			o->time_s *= time_k;
			s = o->time_s;
		} else {
			double c = o->flops / d->flops_per_s;
			double m = o->bytes_accessed / d->mem_bandwidth_Bps;
			s = (c > m ? c : m) + d->op_overhead_s;
		}
		o->time_ps = hoff_ps(s);
		if (o->time_ps < 0 || o->time_ps >= HOFF_PS_LIMIT - total)
			return hoff_seterr(e, HOFF_EINPUT,
					   "op \"%s\": time reaches 2^62 ps "
					   "once scaled",
					   o->id);
		total += o->time_ps;
	}
	return HOFF_OK;
}
