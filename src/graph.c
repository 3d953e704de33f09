/* graph.c: building, validating and deriving the IR of graph.h.
 * hoff_graph_finish() is the one place that checks the cross-references of
 * FORMAT.md (producers, order of use, op times) and derives the use lists;
 * hoff_graph_check_tiers() checks what the final homes put on each tier.
 * They, and building the lists (repeats dropped by a per-tensor mark), run
 * in O(ops + tensors + list entries) times tiers. */
#include "graph.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[HOFF_NKINDS] = {
	"other",     "weight",	 "activation", "kv",
	"optimizer", "gradient", "input",      "output",
};

const char *hoff_kind_name(int k)
{
	return k >= 0 && k < HOFF_NKINDS ? kind_names[k] : "?";
}

int hoff_kind_parse(const char *s)
{
	for (int k = 0; k < HOFF_NKINDS; k++)
		if (strcmp(s, kind_names[k]) == 0)
			return k;
	return -1;
}

hoff_graph *hoff_graph_new(void)
{
	hoff_graph *g = calloc(1, sizeof *g);
	if (!g)
		return NULL;
	g->version = 1;
	g->in_off = calloc(1, sizeof *g->in_off);
	g->upd_off = calloc(1, sizeof *g->upd_off);
	g->out_off = calloc(1, sizeof *g->out_off);
	if (!g->in_off || !g->upd_off || !g->out_off) {
		hoff_graph_free(g);
		return NULL;
	}
	return g;
}

void hoff_graph_free(hoff_graph *g)
{
	if (!g)
		return;
	free(g->name);
	free(g->meta);
	free(g->tier);
	free(g->tensor);
	free(g->op);
	free(g->in_off);
	free(g->upd_off);
	free(g->out_off);
	free(g->in);
	free(g->upd);
	free(g->out);
	free(g->use_off);
	free(g->use);
	free(g->mark);
	hoff_strmap_free(&g->tensor_ids);
	hoff_strmap_free(&g->op_ids);
	hoff_strmap_free(&g->tier_ids);
	hoff_strpool_free(&g->pool);
	free(g);
}

const char *hoff_graph_intern(hoff_graph *g, const char *s)
{
	return hoff_strpool_add(&g->pool, s, strlen(s));
}

/* Interns name and maps it to id in m; HOFF_NONE on a duplicate or OOM. */
static int32_t add_name(hoff_graph *g, hoff_strmap *m, const char *what,
			const char *name, int32_t id, const char **out,
			hoff_err *e)
{
	if (id == INT32_MAX) {
		hoff_seterr(e, HOFF_EINPUT, "too many %ss", what);
		return HOFF_NONE;
	}
	const char *s = hoff_graph_intern(g, name);
	if (!s) {
		hoff_seterr(e, HOFF_ENOMEM, "out of memory");
		return HOFF_NONE;
	}
	hoff_status st = hoff_strmap_put(m, s, id, NULL);
	if (st == HOFF_EINPUT) {
		hoff_seterr(e, st, "duplicate %s id \"%s\"", what, name);
		return HOFF_NONE;
	}
	if (st != HOFF_OK) {
		hoff_seterr(e, st, "out of memory");
		return HOFF_NONE;
	}
	*out = s;
	return id;
}

int32_t hoff_graph_add_tier(hoff_graph *g, const char *name, hoff_err *e)
{
	if (strcmp(name, "device") == 0) {
		hoff_seterr(e, HOFF_EINPUT, "tier name \"device\" is reserved");
		return HOFF_NONE;
	}
	if (g->ntiers >= HOFF_MAX_TIERS) {
		hoff_seterr(e, HOFF_EINPUT, "more than %d tiers",
			    HOFF_MAX_TIERS);
		return HOFF_NONE;
	}
	if (!hoff_grow((void **)&g->tier, &g->tier_cap, (size_t)g->ntiers + 1,
		       sizeof *g->tier)) {
		hoff_seterr(e, HOFF_ENOMEM, "out of memory");
		return HOFF_NONE;
	}
	hoff_tier *t = &g->tier[g->ntiers];
	memset(t, 0, sizeof *t);
	t->capacity_bytes = HOFF_UNLIMITED;
	t->h2d_duplex = t->d2h_duplex = 1.0;
	t->h2d_duplex_ppm = t->d2h_duplex_ppm = HOFF_DUPLEX_ONE;
	if (add_name(g, &g->tier_ids, "tier", name, g->ntiers, &t->name, e) ==
	    HOFF_NONE)
		return HOFF_NONE;
	return g->ntiers++;
}

int32_t hoff_graph_add_tensor(hoff_graph *g, const char *id, int64_t bytes,
			      hoff_err *e)
{
	if (!hoff_grow((void **)&g->tensor, &g->tensor_cap,
		       (size_t)g->ntensors + 1, sizeof *g->tensor)) {
		hoff_seterr(e, HOFF_ENOMEM, "out of memory");
		return HOFF_NONE;
	}
	hoff_tensor *t = &g->tensor[g->ntensors];
	memset(t, 0, sizeof *t);
	t->bytes = bytes;
	t->home = HOFF_DEVICE;
	t->kind = HOFF_KIND_OTHER;
	t->flags = HOFF_T_OFFLOAD;
	t->producer = t->first_use = t->last_use = HOFF_NONE;
	if (add_name(g, &g->tensor_ids, "tensor", id, g->ntensors, &t->id, e) ==
	    HOFF_NONE)
		return HOFF_NONE;
	return g->ntensors++;
}

hoff_status hoff_graph_reserve(hoff_graph *g, size_t tensors, size_t ops,
			       const size_t *uses)
{
	size_t nt = (size_t)g->ntensors + tensors, no = (size_t)g->nops + ops;
	if (tensors && (!hoff_grow((void **)&g->tensor, &g->tensor_cap, nt,
				   sizeof *g->tensor) ||
			hoff_strmap_reserve(&g->tensor_ids, nt) != HOFF_OK))
		return HOFF_ENOMEM;
	if (!ops)
		return HOFF_OK;
	size_t cap = g->op_cap;
	if (!hoff_grow((void **)&g->op, &g->op_cap, no + 2, sizeof *g->op))
		return HOFF_ENOMEM;
	if (g->op_cap != cap &&
	    (!hoff_resize((void **)&g->in_off, g->op_cap, sizeof *g->in_off) ||
	     !hoff_resize((void **)&g->upd_off, g->op_cap,
			  sizeof *g->upd_off) ||
	     !hoff_resize((void **)&g->out_off, g->op_cap,
			  sizeof *g->out_off))) {
		g->op_cap = cap;
		return HOFF_ENOMEM;
	}
	if (hoff_strmap_reserve(&g->op_ids, no) != HOFF_OK)
		return HOFF_ENOMEM;
	int32_t **list[3] = {&g->in, &g->upd, &g->out};
	size_t *lcap[3] = {&g->in_cap, &g->upd_cap, &g->out_cap};
	const int64_t *off[3] = {g->in_off, g->upd_off, g->out_off};
	for (int l = 0; uses && l < 3; l++)
		if (uses[l] &&
		    !hoff_grow((void **)list[l], lcap[l],
			       (size_t)(g->nops ? off[l][g->nops] : 0) +
				       uses[l],
			       sizeof **list[l]))
			return HOFF_ENOMEM;
	return HOFF_OK;
}

int32_t hoff_graph_add_op(hoff_graph *g, const char *id, hoff_err *e)
{
	size_t n = (size_t)g->nops + 2; /* offsets need nops + 2 slots */
	size_t cap = g->op_cap;
	if (!hoff_grow((void **)&g->op, &g->op_cap, n, sizeof *g->op)) {
		hoff_seterr(e, HOFF_ENOMEM, "out of memory");
		return HOFF_NONE;
	}
	if (g->op_cap != cap) {
		if (!hoff_resize((void **)&g->in_off, g->op_cap,
				 sizeof *g->in_off) ||
		    !hoff_resize((void **)&g->upd_off, g->op_cap,
				 sizeof *g->upd_off) ||
		    !hoff_resize((void **)&g->out_off, g->op_cap,
				 sizeof *g->out_off)) {
			g->op_cap = cap;
			hoff_seterr(e, HOFF_ENOMEM, "out of memory");
			return HOFF_NONE;
		}
	}
	hoff_op *o = &g->op[g->nops];
	memset(o, 0, sizeof *o);
	if (add_name(g, &g->op_ids, "op", id, g->nops, &o->id, e) == HOFF_NONE)
		return HOFF_NONE;
	int32_t k = g->nops++;
	g->in_off[k + 1] = g->in_off[k];
	g->upd_off[k + 1] = g->upd_off[k];
	g->out_off[k + 1] = g->out_off[k];
	return k;
}

hoff_status hoff_graph_op_use(hoff_graph *g, hoff_use use, int32_t t,
			      hoff_err *e)
{
	HOFF_REQUIRE(g->nops > 0 && t >= 0 && t < g->ntensors);
	int64_t *off = use == HOFF_USE_IN    ? g->in_off
		       : use == HOFF_USE_UPD ? g->upd_off
					     : g->out_off;
	int32_t **list = use == HOFF_USE_IN    ? &g->in
			 : use == HOFF_USE_UPD ? &g->upd
					       : &g->out;
	size_t *cap = use == HOFF_USE_IN    ? &g->in_cap
		      : use == HOFF_USE_UPD ? &g->upd_cap
					    : &g->out_cap;
	int32_t k = g->nops - 1;
	size_t slot = 3 * (size_t)t + (size_t)use;
	if (slot >= g->mark_cap) {
		size_t old = g->mark_cap;
		if (!hoff_grow((void **)&g->mark, &g->mark_cap,
			       3 * (size_t)g->ntensors, sizeof *g->mark))
			return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
		memset(g->mark + old, 0, (g->mark_cap - old) * sizeof *g->mark);
	}
	if (g->mark[slot] == k + 1)
		return HOFF_OK; /* repeated names count once */
	if (!hoff_grow((void **)list, cap, (size_t)off[k + 1] + 1,
		       sizeof **list))
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	(*list)[off[k + 1]++] = t;
	g->mark[slot] = k + 1;
	return HOFF_OK;
}

void hoff_tensor_defaults(hoff_tensor *t)
{
	if (!(t->flags & HOFF_T_HAS_OUTPUT) && t->kind == HOFF_KIND_OUTPUT)
		t->flags |= HOFF_T_OUTPUT;
	if (!(t->flags & HOFF_T_HAS_PERSISTENT)) {
		bool p = t->kind == HOFF_KIND_WEIGHT ||
			 t->kind == HOFF_KIND_KV ||
			 t->kind == HOFF_KIND_OPTIMIZER ||
			 (t->flags & HOFF_T_OUTPUT);
		if (p)
			t->flags |= HOFF_T_PERSISTENT;
	}
	/* An explicit persistent: false stands even for an output: the
	 * conformance vectors (049, 173, 237, ...) are judged that way. */
}

int64_t hoff_xfer_ps(const hoff_graph *g, int32_t tier, int64_t bytes,
		     bool to_device)
{
	HOFF_REQUIRE(tier >= 0 && tier < g->ntiers);
	const hoff_tier *t = &g->tier[tier];
	double rate = to_device ? t->h2d_Bps : t->d2h_Bps;
	int64_t x = hoff_ps((double)bytes / rate);
	/* The reader bounds both terms below 2^62, so the sum fits. */
	return x < 0 ? HOFF_PS_LIMIT : t->latency_ps + x;
}

int32_t hoff_tensor_next_use(const hoff_graph *g, int32_t t, int32_t k)
{
	int64_t lo = g->use_off[t], hi = g->use_off[t + 1];
	while (lo < hi) { /* the first use after k */
		int64_t mid = lo + (hi - lo) / 2;
		if (g->use[mid] <= k)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < g->use_off[t + 1] ? g->use[lo] : HOFF_NONE;
}

int32_t hoff_graph_find_tensor(const hoff_graph *g, const char *name)
{
	return hoff_strmap_get(&g->tensor_ids, name);
}

int32_t hoff_graph_find_op(const hoff_graph *g, const char *name)
{
	return hoff_strmap_get(&g->op_ids, name);
}

int32_t hoff_graph_find_tier(const hoff_graph *g, const char *name)
{
	return hoff_strmap_get(&g->tier_ids, name);
}

/* Op time of FORMAT.md in seconds (time_s, else the roofline). */
static double op_time_s(const hoff_graph *g, const hoff_op *o)
{
	if (o->flags & HOFF_O_HAS_TIME)
		return o->time_s;
	double c = o->flops / g->device.flops_per_s;
	double m = o->bytes_accessed / g->device.mem_bandwidth_Bps;
	return (c > m ? c : m) + g->device.op_overhead_s;
}

/* (v2) Rule 3's integer factor F = floor(f * 1e6 + 0.5) of a duplex
 * factor f in (0, 1] into *ppm; false when f is outside or F is 0. */
static bool duplex_ppm(double f, int32_t *ppm)
{
	if (!(f > 0.0 && f <= 1.0))
		return false;
	double x = floor(f * 1e6 + 0.5);
	*ppm = (int32_t)x;
	return *ppm > 0;
}

/* HOFF_EINPUT worded "FILE: WHAT[I] \"ID\": " and then fmt's message
 * (WHAT ops, tensors or machine.tiers): how every check of one of the
 * graph's items names it. */
static hoff_status item_fail(hoff_err *e, const char *file, const char *what,
			     int32_t i, const char *id, const char *fmt, ...)
{
	char msg[HOFF_ERRLEN];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return hoff_seterr(e, HOFF_EINPUT, "%s: %s[%d] \"%s\": %s", file, what,
			   i, HOFF_QID(id), msg);
}

/* Derives tier i's latency in ps and duplex factors in ppm. */
static hoff_status tier_finish(hoff_graph *g, int32_t i, const char *file,
			       hoff_err *e)
{
	hoff_tier *t = &g->tier[i];
	t->latency_ps = hoff_ps(t->latency_s);
	if (t->latency_ps < 0)
		return item_fail(e, file, "machine.tiers", i, t->name,
				 "latency_s must be below 2^62 ps");
	for (int dir = 0; dir < 2; dir++) {
		double f = dir ? t->d2h_duplex : t->h2d_duplex;
		int32_t *ppm = dir ? &t->d2h_duplex_ppm : &t->h2d_duplex_ppm;
		if (!duplex_ppm(f, ppm))
			return item_fail(
				e, file, "machine.tiers", i, t->name,
				"%s: %.9g %s",
				dir ? "d2h_duplex_factor" : "h2d_duplex_factor",
				f,
				f > 0.0 && f <= 1.0
					? "gives F = floor(f * 1e6 + 0.5) = 0"
					: "must be in (0, 1]");
	}
	return HOFF_OK;
}

/* (v2) Applies recomputable's default (no updates) to op k, and rejects
 * an explicit true on an op with updates. */
static hoff_status recomputable_finish(hoff_graph *g, int32_t k,
				       const char *file, hoff_err *e)
{
	hoff_op *o = &g->op[k];
	bool upd = g->upd_off[k + 1] != g->upd_off[k];
	if (!(o->flags & HOFF_O_HAS_RECOMPUTABLE)) {
		if (!upd)
			o->flags |= HOFF_O_RECOMPUTABLE;
		else
			o->flags &= ~(uint32_t)HOFF_O_RECOMPUTABLE;
	} else if (upd && (o->flags & HOFF_O_RECOMPUTABLE)) {
		return item_fail(
			e, file, "ops", k, o->id,
			"recomputable: true on an op with updates (\"%s\")",
			HOFF_QID(g->tensor[g->upd[g->upd_off[k]]].id));
	}
	return HOFF_OK;
}

bool hoff_graph_uses_v2(const hoff_graph *g)
{
	if (g->repeat)
		return true;
	for (int32_t i = 0; i < g->ntiers; i++)
		if (g->tier[i].has_h2d_duplex || g->tier[i].has_d2h_duplex ||
		    g->tier[i].h2d_duplex != 1.0 ||
		    g->tier[i].d2h_duplex != 1.0)
			return true;
	for (int32_t k = 0; k < g->nops; k++) {
		const hoff_op *o = &g->op[k];
		if ((o->flags & HOFF_O_HAS_RECOMPUTABLE) ||
		    hoff_op_recomputable(o) !=
			    (g->upd_off[k] == g->upd_off[k + 1]))
			return true;
	}
	return false;
}

hoff_status hoff_graph_finish(hoff_graph *g, const char *file, hoff_err *e)
{
	const hoff_device *d = &g->device;
	for (int32_t i = 0; i < g->ntiers; i++) {
		hoff_status st = tier_finish(g, i, file, e);
		if (st != HOFF_OK)
			return st;
	}
	/* Producers; outputs may not also be updates of one op (upd_by[t]:
	 * 1 + the op being checked when t is among its updates). */
	int32_t *upd_by = hoff_zalloc((size_t)g->ntensors + 1, sizeof *upd_by);
	if (!upd_by)
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	for (int32_t k = 0; k < g->nops; k++) {
		for (int64_t j = g->upd_off[k]; j < g->upd_off[k + 1]; j++)
			upd_by[g->upd[j]] = k + 1;
		for (int64_t i = g->out_off[k]; i < g->out_off[k + 1]; i++) {
			hoff_tensor *t = &g->tensor[g->out[i]];
			if (t->producer != HOFF_NONE) {
				free(upd_by);
				return item_fail(
					e, file, "ops", k, g->op[k].id,
					"outputs: tensor \"%s\" already produced by op \"%s\"",
					HOFF_QID(t->id),
					HOFF_QID(g->op[t->producer].id));
			}
			t->producer = k;
			if (upd_by[g->out[i]] == k + 1) {
				free(upd_by);
				return item_fail(
					e, file, "ops", k, g->op[k].id,
					"tensor \"%s\" is both an output and an update",
					HOFF_QID(t->id));
			}
		}
	}
	free(upd_by);
	/* Uses: counts, then a stable fill in op order (ascending). */
	free(g->use_off);
	free(g->use);
	g->use = NULL;
	g->use_off = hoff_zalloc((size_t)g->ntensors + 1, sizeof *g->use_off);
	if (!g->use_off)
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	bool need_roofline = false;
	for (int32_t k = 0; k < g->nops; k++) {
		hoff_op *o = &g->op[k];
		for (int pass = 0; pass < 2; pass++) {
			const int64_t *off = pass ? g->upd_off : g->in_off;
			const int32_t *lst = pass ? g->upd : g->in;
			for (int64_t i = off[k]; i < off[k + 1]; i++) {
				hoff_tensor *t = &g->tensor[lst[i]];
				if (t->producer != HOFF_NONE &&
				    t->producer >= k)
					return item_fail(
						e, file, "ops", k, o->id,
						"%s: tensor \"%s\" is used before op \"%s\" produces it",
						pass ? "updates" : "inputs",
						HOFF_QID(t->id),
						HOFF_QID(
							g->op[t->producer].id));
				if (t->last_use == k)
					continue; /* in both lists */
				if (t->first_use == HOFF_NONE)
					t->first_use = k;
				t->last_use = k;
				g->use_off[lst[i] + 1]++;
			}
		}
		if (!(o->flags & HOFF_O_HAS_TIME))
			need_roofline = true;
		hoff_status st = recomputable_finish(g, k, file, e);
		if (st != HOFF_OK)
			return st;
	}
	for (int32_t t = 0; t < g->ntensors; t++)
		g->use_off[t + 1] += g->use_off[t];
	g->use =
		hoff_alloc((size_t)g->use_off[g->ntensors] + 1, sizeof *g->use);
	int64_t *fill = hoff_alloc((size_t)g->ntensors + 1, sizeof *fill);
	if (!g->use || !fill) {
		free(fill);
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	}
	memcpy(fill, g->use_off, (size_t)g->ntensors * sizeof *fill);
	for (int32_t k = 0; k < g->nops; k++)
		for (int pass = 0; pass < 2; pass++) {
			const int64_t *off = pass ? g->upd_off : g->in_off;
			const int32_t *lst = pass ? g->upd : g->in;
			for (int64_t i = off[k]; i < off[k + 1]; i++) {
				int32_t t = lst[i];
				if (fill[t] > g->use_off[t] &&
				    g->use[fill[t] - 1] == k)
					continue;
				g->use[fill[t]++] = k;
			}
		}
	free(fill);
	if (need_roofline && (!d->has_flops || !d->has_mem_bw)) {
		for (int32_t k = 0; k < g->nops; k++)
			if (!(g->op[k].flags & HOFF_O_HAS_TIME))
				return hoff_seterr(
					e, HOFF_EINPUT,
					"%s: machine.device: %s required: op "
					"\"%s\" has no time_s",
					file,
					d->has_flops ? "mem_bandwidth_Bps"
						     : "flops_per_s",
					HOFF_QID(g->op[k].id));
	}
	/* Op times in ps; the sum of all op times is an instant too. */
	int64_t total = 0;
	for (int32_t k = 0; k < g->nops; k++) {
		hoff_op *o = &g->op[k];
		o->time_ps = hoff_ps(op_time_s(g, o));
		if (o->time_ps < 0 || o->time_ps >= HOFF_PS_LIMIT - total)
			return item_fail(e, file, "ops", k, o->id,
					 "time_s: op time reaches 2^62 ps (%s)",
					 o->time_ps < 0 ? "this op"
							: "sum of op times");
		total += o->time_ps;
	}
	/* Memory sums must fit int64 with room: bound every tensor, and
	 * transfers of each below 2^62 ps on every channel. */
	int64_t bytes = 0;
	for (int32_t i = 0; i < g->ntensors; i++) {
		const hoff_tensor *t = &g->tensor[i];
		if (t->bytes > HOFF_PS_LIMIT - bytes)
			return item_fail(
				e, file, "tensors", i, t->id,
				"bytes: sum of tensor bytes reaches 2^62");
		bytes += t->bytes;
		for (int32_t r = 0; r < g->ntiers; r++) {
			const hoff_tier *tr = &g->tier[r];
			int64_t a = hoff_ps((double)t->bytes / tr->h2d_Bps);
			int64_t b = hoff_ps((double)t->bytes / tr->d2h_Bps);
			if (a < 0 || b < 0 ||
			    a >= HOFF_PS_LIMIT - tr->latency_ps ||
			    b >= HOFF_PS_LIMIT - tr->latency_ps)
				return item_fail(
					e, file, "tensors", i, t->id,
					"bytes: a transfer on tier \"%s\" reaches 2^62 ps",
					HOFF_QID(tr->name));
		}
	}
	for (int32_t k = 0; k < g->nops; k++) {
		if (g->op[k].workspace_bytes > HOFF_PS_LIMIT - bytes)
			return item_fail(e, file, "ops", k, g->op[k].id,
					 "workspace_bytes too large");
	}
	return HOFF_OK;
}

hoff_status hoff_graph_check_tiers(const hoff_graph *g, const char *file,
				   hoff_err *e)
{
	/* Per tier: the tensors homed there fit its capacity (rule 8 counts
	 * them from time 0, so no schedule could be valid otherwise), and
	 * one fetch of each plus all compute stays an instant below 2^62 ps
	 * (lower_bound_s; the no-offload schedule's makespan). Sums stay
	 * below 2^62: hoff_graph_finish bounds the bytes and op times. */
	int64_t total = 0;
	for (int32_t k = 0; k < g->nops; k++)
		total += g->op[k].time_ps;
	for (int32_t r = 0; r < g->ntiers; r++) {
		const hoff_tier *tr = &g->tier[r];
		int64_t homed = 0, fetch_ps = total, store_ps = total;
		for (int32_t i = 0; i < g->ntensors; i++) {
			const hoff_tensor *t = &g->tensor[i];
			if (t->producer != HOFF_NONE || t->home != r)
				continue;
			homed += t->bytes;
			if (t->first_use == HOFF_NONE)
				continue;
			if (g->repeat && hoff_tensor_persistent(t) &&
			    !hoff_tensor_offload(t))
				return item_fail(
					e, file, "tensors", i, t->id,
					"offload: false on a persistent tensor homed on tier \"%s\" that op \"%s\" uses: in a repeat graph it could never go home (rule 9)",
					HOFF_QID(tr->name),
					HOFF_QID(g->op[t->first_use].id));
			/* (v2) the repeat term of lower_bound_s */
			int64_t y = hoff_xfer_ps(g, r, t->bytes, false);
			if (g->repeat && hoff_tensor_persistent(t) &&
			    y >= HOFF_PS_LIMIT - store_ps)
				return item_fail(
					e, file, "machine.tiers", r, tr->name,
					"d2h_Bps: one store of each persistent tensor homed there plus the compute reaches 2^62 ps (at tensors[%d] \"%s\")",
					i, HOFF_QID(t->id));
			if (g->repeat && hoff_tensor_persistent(t))
				store_ps += y;
			int64_t x = hoff_xfer_ps(g, r, t->bytes, true);
			if (x >= HOFF_PS_LIMIT - fetch_ps)
				return item_fail(
					e, file, "machine.tiers", r, tr->name,
					"h2d_Bps: one fetch of each tensor homed there plus the compute reaches 2^62 ps (at tensors[%d] \"%s\")",
					i, HOFF_QID(t->id));
			fetch_ps += x;
		}
		if (tr->capacity_bytes != HOFF_UNLIMITED &&
		    homed > tr->capacity_bytes)
			return item_fail(
				e, file, "machine.tiers", r, tr->name,
				"capacity_bytes %lld is less than the %lld bytes of the tensors homed there",
				(long long)tr->capacity_bytes,
				(long long)homed);
	}
	return HOFF_OK;
}
