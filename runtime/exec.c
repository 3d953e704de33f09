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

#include "pattern.h"

hoff_exec_opts hoff_exec_defaults(void)
{
	return (hoff_exec_opts){.verify = false,
				.corrupt_step = HOFF_NONE,
				.device = 0,
				.slow_step = HOFF_NONE,
				.drop_wait = HOFF_NONE};
}

void hoff_backend_free(hoff_backend *b)
{
	if (b)
		b->iface->free(b);
}

hoff_backend *hoff_backend_alloc(const hoff_backend_i *iface,
				 const hoff_xplan *p, const hoff_exec_opts *o,
				 size_t ctx_bytes)
{
	hoff_backend *b = hoff_zalloc(1, sizeof *b);
	void *ctx = hoff_zalloc(1, ctx_bytes);
	if (!b || !ctx) {
		free(b);
		free(ctx);
		return NULL;
	}
	b->iface = iface;
	b->ctx = ctx;
	b->plan = p;
	b->opts = *o;
	return b;
}

/* hoff_exec_record's backend: ctx is the hoff_xcmds it appends to. */
static hoff_status rec_push(hoff_backend *b, int32_t stream, uint8_t kind,
			    int64_t arg, hoff_err *e)
{
	hoff_xcmds *r = b->ctx;
	if (!hoff_grow((void **)&r->c, &r->cap, r->n + 1, sizeof *r->c))
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	r->c[r->n++] = (hoff_xcmd){arg, stream, kind};
	return HOFF_OK;
}

static hoff_status rec_wait(hoff_backend *b, int32_t stream, int64_t ev,
			    hoff_err *e)
{
	return rec_push(b, stream, HOFF_XCMD_WAIT, ev, e);
}

static hoff_status rec_record(hoff_backend *b, int32_t stream, int64_t ev,
			      hoff_err *e)
{
	return rec_push(b, stream, HOFF_XCMD_RECORD, ev, e);
}

static hoff_status rec_op(hoff_backend *b, int32_t k, hoff_err *e)
{
	return rec_push(b, 0, HOFF_XCMD_TASK, k, e);
}

static hoff_status rec_xfer(hoff_backend *b, int64_t x, hoff_err *e)
{
	return rec_push(b, b->plan->xfer[x].stream, HOFF_XCMD_TASK,
			hoff_xplan_xev(b->plan, x), e);
}

hoff_status hoff_exec_record(const hoff_xplan *p, const hoff_exec_opts *o,
			     hoff_xcmds *out, hoff_walk_info *info, hoff_err *e)
{
	static const hoff_backend_i rec_iface = {
		.name = "record",
		.wait = rec_wait,
		.record = rec_record,
		.run_op = rec_op,
		.prefetch = rec_xfer,
		.store = rec_xfer,
	};
	memset(out, 0, sizeof *out);
	hoff_backend b = {
		.iface = &rec_iface, .ctx = out, .plan = p, .opts = *o};
	return hoff_exec_walk(&b, info, e);
}

/* The walk's state: which events are recorded so far, waits issued. */
typedef struct walker {
	hoff_backend *b;
	bool *recorded; /* (nops + nxfers) */
	hoff_walk_info info;
} walker;

/* Step of command ev (op k, or transfer x as nops + x). */
static int64_t cmd_step(const hoff_xplan *p, int64_t ev)
{
	return ev < p->nops ? p->op[ev].step : p->xfer[ev - p->nops].step;
}

static hoff_status wait_on(walker *w, int32_t stream, int64_t ev, int64_t own,
			   hoff_err *e)
{
	const hoff_xplan *p = w->b->plan;
	if (w->info.nwaits++ == w->b->opts.drop_wait)
		return HOFF_OK; /* the test hook */
	hoff_status st = w->b->iface->wait(w->b, stream, ev, e);
	/* One meaning for waits: CUDA's cudaStreamWaitEvent sees only a
	 * record already enqueued, the CPU backend would wait for a later
	 * one. A plan that waits forward is a bug on both; nothing runs. */
	if (st == HOFF_OK && !w->recorded[ev]) {
		w->info.fwd_cmd = own;
		w->info.fwd_ev = ev;
		return hoff_seterr(
			e, HOFF_EINVALID,
			"internal: steps[%lld] waits for steps[%lld], "
			"whose event is not yet recorded",
			(long long)cmd_step(p, own),
			(long long)cmd_step(p, ev));
	}
	return st;
}

static hoff_status record(walker *w, int32_t stream, int64_t ev, hoff_err *e)
{
	w->recorded[ev] = true;
	return w->b->iface->record(w->b, stream, ev, e);
}

static hoff_status enqueue_op(walker *w, int32_t k, hoff_err *e)
{
	const hoff_xplan *p = w->b->plan;
	const hoff_xop *o = &p->op[k];
	hoff_status st;
	for (int32_t j = 0; j < o->nwait; j++)
		if ((st = wait_on(w, 0,
				  hoff_xplan_xev(p, p->wait[o->wait_off + j]),
				  k, e)) != HOFF_OK)
			return st;
	if ((st = w->b->iface->run_op(w->b, k, e)) != HOFF_OK)
		return st;
	return record(w, 0, k, e);
}

static hoff_status enqueue_xfer(walker *w, int64_t x, hoff_err *e)
{
	hoff_backend *b = w->b;
	const hoff_xplan *p = b->plan;
	const hoff_xfer *xf = &p->xfer[x];
	int64_t own = hoff_xplan_xev(p, x);
	hoff_status st;
	if (xf->after_op != HOFF_NONE &&
	    (st = wait_on(w, xf->stream, xf->after_op, own, e)) != HOFF_OK)
		return st;
	for (int32_t j = 0; j < xf->nwait; j++)
		if ((st = wait_on(w, xf->stream,
				  hoff_xplan_xev(p, p->wait[xf->wait_off + j]),
				  own, e)) != HOFF_OK)
			return st;
	st = xf->store ? b->iface->store(b, x, e) : b->iface->prefetch(b, x, e);
	if (st != HOFF_OK)
		return st;
	return record(w, xf->stream, own, e);
}

hoff_status hoff_exec_walk(hoff_backend *b, hoff_walk_info *info, hoff_err *e)
{
	const hoff_xplan *p = b->plan;
	walker w = {.b = b, .info = {0, HOFF_NONE, HOFF_NONE}};
	w.recorded = hoff_zalloc((size_t)p->nops + (size_t)p->nxfers + 1,
				 sizeof *w.recorded);
	if (!w.recorded)
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	hoff_status st = HOFF_OK;
	int64_t x = 0;
	for (int32_t k = 0; k <= p->nops && st == HOFF_OK; k++) {
		for (int64_t xe = hoff_xplan_xfers_before(p, k, x);
		     st == HOFF_OK && x < xe; x++)
			st = enqueue_xfer(&w, x, e);
		if (st == HOFF_OK && k < p->nops)
			st = enqueue_op(&w, k, e);
	}
	free(w.recorded);
	if (info)
		*info = w.info;
	return st;
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
		for (int64_t xe = hoff_xplan_xfers_before(p, k, x); x < xe;
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
				 .step = p->op[k].step,
				 .id = p->op[k].op,
				 .tier = HOFF_NONE,
				 .kind = HOFF_EV_STALL,
				 .await = HOFF_NONE};
		if (ev.end_ps > ev.start_ps &&
		    hoff_timeline_event(&r->tl, ev) != HOFF_OK)
			return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
		ev.kind = p->op[k].recompute ? HOFF_EV_RECOMPUTE : HOFF_EV_OP;
		ev.id = p->op[k].op;
		ev.start_ps = r->op_start_ps[k];
		ev.end_ps = prev_end = r->op_end_ps[k];
		if (hoff_timeline_event(&r->tl, ev) != HOFF_OK)
			return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
		if (p->op[k].recompute)
			m->recompute_ps += ev.end_ps - ev.start_ps;
		else
			m->compute_ps += ev.end_ps - ev.start_ps;
		if (ev.end_ps > m->makespan_ps)
			m->makespan_ps = ev.end_ps;
	}
	m->stall_ps = m->makespan_ps - m->compute_ps - m->recompute_ps;
	for (int32_t i = 0; i < g->ntiers; i++) {
		r->chan[1 + 2 * i].nominal_Bps = g->tier[i].h2d_Bps;
		r->chan[2 + 2 * i].nominal_Bps = g->tier[i].d2h_Bps;
	}
	return hoff_xplan_memory(p, r->op_start_ps, r->op_end_ps, r->x_end_ps,
				 &r->tl, &m->peak_bytes, e);
}

/* The fault a command's failed check (pattern.h's code) stands for. */
static hoff_exec_fault decode_bad(const hoff_xplan *p, int64_t ev,
				  uint64_t code)
{
	const hoff_graph *g = p->g;
	uint32_t phase = (uint32_t)(code >> 62);
	int64_t item = (int64_t)((code >> 40) & 0x3fffff);
	hoff_exec_fault f = {.step = cmd_step(p, ev),
			     .cmd = ev,
			     .byte = (int64_t)(code & HOFF_BAD_BYTE_MAX)};
	if (ev >= p->nops) {
		const hoff_xfer *xf = &p->xfer[ev - p->nops];
		f.tensor = xf->tensor;
		f.tier = xf->tier;
		f.version = xf->version;
		f.at = phase ? HOFF_FAULT_XFER_DST : HOFF_FAULT_XFER_SRC;
		return f;
	}
	const hoff_xop *o = &p->op[ev];
	int32_t k = o->op;
	int64_t nin = hoff_op_count(g, k, HOFF_USE_IN),
		nupd = hoff_op_count(g, k, HOFF_USE_UPD);
	f.tier = HOFF_DEVICE;
	f.at = phase ? HOFF_FAULT_OP_END : HOFF_FAULT_OP_START;
	if (item < nin) {
		f.tensor = g->in[g->in_off[k] + item];
		f.version = p->in_ver[o->in_at + item];
	} else if (item < nin + nupd) {
		int64_t j = g->upd_off[k] + (item - nin);
		f.tensor = g->upd[j];
		f.version = p->upd_ver[o->upd_at + (item - nin)] - 1;
	} else { /* (v2) a recompute's check of what it re-made */
		int64_t j = item - nin - nupd;
		HOFF_REQUIRE(o->recompute &&
			     j < hoff_op_count(g, k, HOFF_USE_OUT));
		f.tensor = g->out[g->out_off[k] + j];
		f.version = 0;
		f.at = HOFF_FAULT_REMADE;
	}
	return f;
}

static hoff_status verify(hoff_backend *b, hoff_exec_result *r, hoff_err *e)
{
	const hoff_xplan *p = b->plan;
	r->checked = true;
	/* In step order: the earliest command's complaint first. */
	int64_t x = 0;
	for (int32_t k = 0; k <= p->nops; k++) {
		for (int64_t xe = hoff_xplan_xfers_before(p, k, x); x < xe;
		     x++) {
			int64_t ev = hoff_xplan_xev(p, x);
			if (r->bad[ev] >= 0)
				add_fault(r, decode_bad(p, ev,
							(uint64_t)r->bad[ev]));
		}
		if (k < p->nops && r->bad[k] >= 0)
			add_fault(r, decode_bad(p, k, (uint64_t)r->bad[k]));
	}
	for (int64_t i = 0; i < p->nfinal; i++) {
		const hoff_xregion *g = &p->final[i];
		int64_t bad;
		hoff_status st = b->iface->check(b, g, &bad, e);
		if (st != HOFF_OK)
			return st;
		if (bad >= 0)
			add_fault(r, (hoff_exec_fault){
					     .step = HOFF_NONE,
					     .cmd = HOFF_NONE,
					     .tensor = g->tensor,
					     .tier = g->tier,
					     .at = g->home ? HOFF_FAULT_HOME
							   : HOFF_FAULT_END,
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
	size_t nx = (size_t)p->nxfers + 1, no = (size_t)p->nops + 1,
	       nev = (size_t)p->nops + (size_t)p->nxfers + 1;
	r->op_start_ps = hoff_zalloc(no, sizeof *r->op_start_ps);
	r->op_end_ps = hoff_zalloc(no, sizeof *r->op_end_ps);
	r->x_start_ps = hoff_zalloc(nx, sizeof *r->x_start_ps);
	r->x_end_ps = hoff_zalloc(nx, sizeof *r->x_end_ps);
	r->bad = hoff_alloc(nev, sizeof *r->bad);
	r->chan = hoff_zalloc((size_t)p->nstreams, sizeof *r->chan);
	if (!r->op_start_ps || !r->op_end_ps || !r->x_start_ps ||
	    !r->x_end_ps || !r->bad || !r->chan)
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	for (size_t i = 0; i < nev; i++)
		r->bad[i] = -1;
	snprintf(r->device, sizeof r->device, "%s", b->device);
	hoff_walk_info info;
	hoff_status st = hoff_exec_walk(b, &info, e);
	if (st == HOFF_OK && b->opts.drop_wait >= info.nwaits)
		st = hoff_seterr(e, HOFF_EINPUT,
				 "--drop-wait %lld: the plan has %lld waits "
				 "(0 .. %lld)",
				 (long long)b->opts.drop_wait,
				 (long long)info.nwaits,
				 (long long)info.nwaits - 1);
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
	free(r->bad);
	free(r->chan);
	hoff_timeline_free(&r->tl);
	memset(r, 0, sizeof *r);
}

void hoff_exec_fault_format(const hoff_xplan *p, const hoff_exec_fault *f,
			    char *buf, size_t len)
{
	const hoff_graph *g = p->g;
	const char *t = g->tensor[f->tensor].id;
	if (f->step == HOFF_NONE) {
		const char *home = f->at == HOFF_FAULT_HOME ? " (its home: the "
							      "state the next "
							      "iteration reads)"
							    : "";
		if (f->tier == HOFF_DEVICE)
			snprintf(buf, len,
				 "end: \"%s\" on the device%s: byte %lld "
				 "differs from version %u of its pattern",
				 t, home, (long long)f->byte, f->version);
		else
			snprintf(buf, len,
				 "end: \"%s\" on tier \"%s\"%s: byte %lld "
				 "differs from version %u of its pattern",
				 t, g->tier[f->tier].name, home,
				 (long long)f->byte, f->version);
		return;
	}
	if (f->at == HOFF_FAULT_OP_START || f->at == HOFF_FAULT_OP_END ||
	    f->at == HOFF_FAULT_REMADE) {
		const hoff_xop *o = &p->op[f->cmd];
		const char *kind = o->recompute ? "recompute" : "op";
		char at[64];
		if (f->at == HOFF_FAULT_REMADE)
			snprintf(at, sizeof at, "re-made");
		else
			snprintf(at, sizeof at, "at the %s's %s", kind,
				 f->at == HOFF_FAULT_OP_START ? "start"
							      : "end");
		snprintf(buf, len,
			 "steps[%lld] %s \"%s\": \"%s\" %s: byte %lld differs "
			 "from version %u of its pattern",
			 (long long)f->step, kind, g->op[o->op].id, t, at,
			 (long long)f->byte, f->version);
		return;
	}
	const hoff_xfer *xf = &p->xfer[f->cmd - p->nops];
	bool src = f->at == HOFF_FAULT_XFER_SRC;
	snprintf(buf, len,
		 "steps[%lld] %s \"%s\" %s \"%s\": %sbyte %lld differs from "
		 "version %u of its pattern",
		 (long long)f->step, xf->store ? "store" : "prefetch", t,
		 xf->store ? "to" : "from", g->tier[f->tier].name,
		 src ? "its source at the start: " : "", (long long)f->byte,
		 f->version);
}

/* ceil(x * k) as bytes; -1 when it leaves [0, 2^62). */
static int64_t scale_bytes(int64_t x, double k)
{
	double v = ceil((double)x * k);
	if (!(v >= 0 && v < (double)HOFF_PS_LIMIT))
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

/* both / alone in (0, 1], 1 when either is missing. */
static double duplex_of(double both, double alone)
{
	if (!(both > 0) || !(alone > 0) || !isfinite(both) || !isfinite(alone))
		return 1;
	double f = both / alone;
	return f < 1 ? f : 1;
}

void hoff_calib_duplex(hoff_calib *c, double h2d_alone_Bps,
		       double d2h_alone_Bps)
{
	c->h2d_duplex = duplex_of(c->h2d_both_Bps, h2d_alone_Bps);
	c->d2h_duplex = duplex_of(c->d2h_both_Bps, d2h_alone_Bps);
	/* FORMAT.md rule 3 rejects a factor whose F rounds to 0 */
	if (c->h2d_duplex < 1e-6)
		c->h2d_duplex = 1e-6;
	if (c->d2h_duplex < 1e-6)
		c->d2h_duplex = 1e-6;
}
