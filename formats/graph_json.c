/* graph_json.c: graph.json reader and writer (FORMAT.md).
 * The reader never holds a tree of the whole document: jscan walks the
 * top-level object, js_object() reads each element of `tensors` and `ops`
 * in one pass into reused scratch, and cJSON parses only the small values
 * (format, version, name, meta, machine). Memory is the IR plus the text.
 * Top-level keys come in any order: an element that arrives before what
 * it depends on (tensors before the machine, ops before the tensors) is
 * kept as an extent and read once its dependencies are in.
 * The writer streams and writes back exactly the optional fields that were
 * read (the HOFF_*_HAS_* flags), plus any value that differs from its
 * default, so a round trip is lossless; numbers print as the shortest text
 * that reads back to the same double. */
#define _GNU_SOURCE /* mmap's MAP_POPULATE, O_CLOEXEC, memmem */
#include "graph_json.h"

#include <assert.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "fileio.h"
#include "jscan.h"

enum {
	K_FORMAT,  /* jscan's JS_K_FORMAT */
	K_VERSION, /* jscan's JS_K_VERSION */
	K_NAME,
	K_META,
	K_MACHINE,
	K_TENSORS,
	K_OPS,
	K_REPEAT,
	NKEYS
};
_Static_assert((int)K_FORMAT == JS_K_FORMAT && (int)K_VERSION == JS_K_VERSION,
	       "js_top_value reads the header at these keys");
static const char *const top_keys[NKEYS] = {
	"format",  "version", "name", "meta",
	"machine", "tensors", "ops",  "repeat",
};

typedef struct ext {
	size_t a, b; /* [a, b) of the text */
} ext;

typedef struct reader {
	jscan s;
	hoff_graph *g;
	const char *file;
	hoff_err *e;
	bool have[NKEYS]; /* key met and its value fully scanned */
	bool hdr_ok;      /* format, version and machine converted */
	bool tensors_ok;  /* every tensor converted */
	bool ops_ok;
	ext *tbuf, *obuf; /* elements waiting for their dependencies */
	size_t ntbuf, nobuf, tbuf_cap, obuf_cap;
	const char *kinds[16]; /* op kinds interned so far (a few labels) */
	int nkinds;
	int chunks; /* the big arrays' chunks: 0 by threads and size */
	/* A chunk's reader (read_chunks): the hashes of the op's list
	 * items, in order (lh, op_fields fills it), so each name is hashed
	 * once; no hint for an element's own id (filed after the chunks). */
	bool in_chunk;
	uint32_t *lh;
	size_t lh_cap;
} reader;

/* A builder failed with its message in e; adds file and place. */
static hoff_status builder_fail(reader *r, const js_where *w)
{
	char msg[HOFF_ERRLEN];
	snprintf(msg, sizeof msg, "%s", r->e->msg);
	hoff_status st = strcmp(msg, "out of memory") == 0 ? HOFF_ENOMEM
							   : HOFF_EINPUT;
	return js_fail(r->e, w, st, "%s", msg);
}

/* A required, non-empty id. */
static hoff_status get_id(reader *r, const js_where *w, const js_val *v,
			  const char *name, const char **out)
{
	hoff_status st = js_str(r->e, w, v, name, true, out);
	if (st == HOFF_OK && (*out)[0] == '\0')
		return js_fail(r->e, w, HOFF_EINPUT,
			       "%s must be a non-empty string", name);
	return st;
}

/* ---- machine ---- */

static hoff_status read_device(reader *r, const cJSON *d)
{
	static const char *const names[] = {
		"name", "memory_bytes", "flops_per_s", "mem_bandwidth_Bps",
		"op_overhead_s",
	};
	js_val f[5];
	hoff_device *dv = &r->g->device;
	js_where w = {r->file, "machine.device", -1, NULL};
	const char *name;
	hoff_status st;
	js_fields(d, names, 5, f);
	if ((st = js_str(r->e, &w, &f[0], "name", false, &name)) != HOFF_OK ||
	    (st = js_int(r->e, &w, &f[1], "memory_bytes", true, 0, NULL,
			 &dv->memory_bytes)) != HOFF_OK ||
	    (st = js_num(r->e, &w, &f[2], "flops_per_s", false, true,
			 &dv->has_flops, &dv->flops_per_s)) != HOFF_OK ||
	    (st = js_num(r->e, &w, &f[3], "mem_bandwidth_Bps", false, true,
			 &dv->has_mem_bw, &dv->mem_bandwidth_Bps)) != HOFF_OK ||
	    (st = js_num(r->e, &w, &f[4], "op_overhead_s", false, false,
			 &dv->has_overhead, &dv->op_overhead_s)) != HOFF_OK)
		return st;
	if (dv->has_overhead && hoff_ps(dv->op_overhead_s) < 0)
		return js_fail(r->e, &w, HOFF_EINPUT,
			       "op_overhead_s must be below 2^62 ps");
	if (name && !(dv->name = hoff_graph_intern(r->g, name)))
		return hoff_seterr(r->e, HOFF_ENOMEM, "out of memory");
	return HOFF_OK;
}

static hoff_status read_tier(reader *r, const cJSON *o, int64_t idx)
{
	static const char *const names[] = {
		"name",
		"h2d_Bps",
		"d2h_Bps",
		"latency_s",
		"capacity_bytes",
		"h2d_duplex_factor",
		"d2h_duplex_factor",
	};
	js_val f[7];
	js_where w = {r->file, "machine.tiers", idx, NULL};
	const char *name;
	hoff_status st;
	if (!cJSON_IsObject(o))
		return js_fail(r->e, &w, HOFF_EINPUT, "not an object");
	js_fields(o, names, 7, f);
	if ((st = get_id(r, &w, &f[0], "name", &name)) != HOFF_OK)
		return st;
	w.id = name;
	if (strcmp(name, "device") == 0)
		return js_fail(r->e, &w, HOFF_EINPUT,
			       "name: tier name \"device\" is reserved");
	if (hoff_graph_find_tier(r->g, name) != HOFF_NONE)
		return js_fail(r->e, &w, HOFF_EINPUT,
			       "name: duplicate tier name (first at "
			       "machine.tiers[%d])",
			       hoff_graph_find_tier(r->g, name));
	hoff_tier t = {0};
	bool has_cap;
	if ((st = js_num(r->e, &w, &f[1], "h2d_Bps", true, true, NULL,
			 &t.h2d_Bps)) != HOFF_OK ||
	    (st = js_num(r->e, &w, &f[2], "d2h_Bps", true, true, NULL,
			 &t.d2h_Bps)) != HOFF_OK ||
	    (st = js_num(r->e, &w, &f[3], "latency_s", false, false,
			 &t.has_latency, &t.latency_s)) != HOFF_OK ||
	    (st = js_int(r->e, &w, &f[4], "capacity_bytes", false, 0, &has_cap,
			 &t.capacity_bytes)) != HOFF_OK ||
	    (st = js_num(r->e, &w, &f[5], names[5], false, false,
			 &t.has_h2d_duplex, &t.h2d_duplex)) != HOFF_OK ||
	    (st = js_num(r->e, &w, &f[6], names[6], false, false,
			 &t.has_d2h_duplex, &t.d2h_duplex)) != HOFF_OK)
		return st;
	int32_t k = hoff_graph_add_tier(r->g, name, r->e);
	if (k == HOFF_NONE)
		return builder_fail(r, &w);
	hoff_tier *dst = &r->g->tier[k];
	dst->h2d_Bps = t.h2d_Bps;
	dst->d2h_Bps = t.d2h_Bps;
	dst->latency_s = t.has_latency ? t.latency_s : 0;
	dst->has_latency = t.has_latency;
	dst->capacity_bytes = has_cap ? t.capacity_bytes : HOFF_UNLIMITED;
	/* (v2) range and F are checked by hoff_graph_finish */
	dst->has_h2d_duplex = t.has_h2d_duplex;
	dst->has_d2h_duplex = t.has_d2h_duplex;
	if (t.has_h2d_duplex)
		dst->h2d_duplex = t.h2d_duplex;
	if (t.has_d2h_duplex)
		dst->d2h_duplex = t.d2h_duplex;
	return HOFF_OK;
}

static hoff_status read_machine(reader *r, const cJSON *m)
{
	js_where top = {r->file, NULL, -1, NULL};
	js_where w = {r->file, "machine", -1, NULL};
	if (cJSON_IsNull(m))
		return js_fail(r->e, &top, HOFF_EINPUT, "machine must not be null");
	if (!cJSON_IsObject(m))
		return js_fail(r->e, &top, HOFF_EINPUT,
			       "machine must be an object");
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(m, "device");
	const cJSON *tiers = cJSON_GetObjectItemCaseSensitive(m, "tiers");
	if (!d)
		return js_fail(r->e, &w, HOFF_EINPUT, "device is required");
	if (cJSON_IsNull(d))
		return js_fail(r->e, &w, HOFF_EINPUT, "device must not be null");
	if (!cJSON_IsObject(d))
		return js_fail(r->e, &w, HOFF_EINPUT,
			       "device must be an object");
	hoff_status st = read_device(r, d);
	if (st != HOFF_OK)
		return st;
	if (!tiers || cJSON_IsNull(tiers))
		return HOFF_OK;
	if (!cJSON_IsArray(tiers))
		return js_fail(r->e, &w, HOFF_EINPUT, "tiers must be an array");
	int64_t i = 0;
	for (const cJSON *t = tiers->child; t; t = t->next, i++)
		if ((st = read_tier(r, t, i)) != HOFF_OK)
			return st;
	return HOFF_OK;
}

/* ---- tensors and ops ---- */

/* A tensor as read, before it joins the graph. */
typedef struct trec {
	const char *id; /* the scanner's scratch, or a chunk's pool */
	int64_t bytes;
	int32_t home;
	uint32_t hash; /* a chunk's: of id, for the map */
	uint8_t kind, flags;
} trec;

/* Reads and converts the tensor element at the scanner's position. */
static hoff_status tensor_fields(reader *r, js_where *w, trec *t)
{
	static const char *const names[] = {
		"id", "bytes", "kind", "home", "output", "persistent", "offload",
	};
	static const bool list[7] = {false};
	js_val f[7];
	const char *id, *kind, *home;
	bool has_out, out = false, has_pers, pers = false, has_off,
			  off = true;
	int k = HOFF_KIND_OTHER;
	int32_t place = HOFF_DEVICE;
	hoff_status st = js_object(&r->s, w, names, list, 7, f);
	if (st != HOFF_OK)
		return st;
	if ((st = get_id(r, w, &f[0], "id", &id)) != HOFF_OK)
		return st;
	w->id = id;
	if (!r->in_chunk) /* overlap the miss */
		hoff_strmap_prefetch(&r->g->tensor_ids, id);
	if ((st = js_int(r->e, w, &f[1], "bytes", true, 1, NULL, &t->bytes)) !=
		    HOFF_OK ||
	    (st = js_str(r->e, w, &f[2], "kind", false, &kind)) != HOFF_OK ||
	    (st = js_str(r->e, w, &f[3], "home", false, &home)) != HOFF_OK ||
	    (st = js_bool(r->e, w, &f[4], "output", &has_out, &out)) !=
		    HOFF_OK ||
	    (st = js_bool(r->e, w, &f[5], "persistent", &has_pers, &pers)) !=
		    HOFF_OK ||
	    (st = js_bool(r->e, w, &f[6], "offload", &has_off, &off)) !=
		    HOFF_OK)
		return st;
	if (kind && (k = hoff_kind_parse(kind)) < 0)
		return js_fail(r->e, w, HOFF_EINPUT,
			       "kind \"%.60s\" is unknown (weight, activation, "
			       "kv, optimizer, gradient, input, output, other)",
			       kind);
	if (home && strcmp(home, "device") != 0 &&
	    (place = hoff_graph_find_tier(r->g, home)) == HOFF_NONE)
		return js_fail(r->e, w, HOFF_EINPUT,
			       "home: unknown tier \"%.60s\"", home);
	t->id = id;
	t->home = place;
	t->kind = (uint8_t)k;
	t->flags = (uint8_t)((kind ? HOFF_T_HAS_KIND : 0) |
			     (home ? HOFF_T_HAS_HOME : 0) |
			     (has_out ? HOFF_T_HAS_OUTPUT : 0) |
			     (has_out && out ? HOFF_T_OUTPUT : 0) |
			     (has_pers ? HOFF_T_HAS_PERSISTENT : 0) |
			     (has_pers && pers ? HOFF_T_PERSISTENT : 0) |
			     (has_off ? HOFF_T_HAS_OFFLOAD : 0) |
			     (!has_off || off ? HOFF_T_OFFLOAD : 0));
	return HOFF_OK;
}

/* Adds a tensor read by tensor_fields to the graph. */
static hoff_status tensor_add(reader *r, const js_where *w, const trec *rt)
{
	int32_t ti = hoff_graph_add_tensor(r->g, rt->id, rt->bytes, r->e);
	if (ti == HOFF_NONE) {
		int32_t dup = hoff_graph_find_tensor(r->g, rt->id);
		if (dup != HOFF_NONE)
			return js_fail(r->e, w, HOFF_EINPUT,
				       "id: duplicate tensor id (first at "
				       "tensors[%d])",
				       dup);
		return builder_fail(r, w);
	}
	hoff_tensor *t = &r->g->tensor[ti];
	t->kind = rt->kind;
	t->home = rt->home;
	t->flags = rt->flags;
	hoff_tensor_defaults(t);
	return HOFF_OK;
}

/* Reads the tensor element at the scanner's position. */
static hoff_status read_tensor(reader *r)
{
	js_where w = {r->file, "tensors", r->g->ntensors, NULL};
	trec t;
	hoff_status st = tensor_fields(r, &w, &t);
	return st != HOFF_OK ? st : tensor_add(r, &w, &t);
}

/* Appends the tensors named by list (an array of ids, or absent). */
static hoff_status read_list(reader *r, const js_where *w, const js_val *v,
			     const char *name, hoff_use use)
{
	if (v->type == JS_ABSENT || v->type == JS_NULL)
		return HOFF_OK;
	if (v->type != JS_ARR)
		return js_fail(r->e, w, HOFF_EINPUT, "%s must be an array", name);
	if (v->bad_item >= 0)
		return js_fail(r->e, w, HOFF_EINPUT,
			       "%s[%lld] must be a tensor id string", name,
			       (long long)v->bad_item);
	for (size_t i = 0; i < v->nitem; i++) {
		int32_t t = hoff_graph_find_tensor(r->g, v->item[i]);
		if (t == HOFF_NONE)
			return js_fail(r->e, w, HOFF_EINPUT,
				       "%s: unknown tensor \"%.100s\"", name,
				       v->item[i]);
		hoff_status st = hoff_graph_op_use(r->g, use, t, r->e);
		if (st != HOFF_OK)
			return st;
	}
	return HOFF_OK;
}

/* Interns an op kind once: a million ops share a handful of labels. */
static const char *op_kind(reader *r, const char *kind)
{
	for (int i = 0; i < r->nkinds; i++)
		if (strcmp(r->kinds[i], kind) == 0)
			return r->kinds[i];
	const char *k = hoff_graph_intern(r->g, kind);
	if (k && r->nkinds < 16)
		r->kinds[r->nkinds++] = k;
	return k;
}

enum { NOPF = 11 }; /* the fields of an op */

/* An op as read, before it joins the graph. */
typedef struct orec {
	const char *id, *kind; /* scratch or a chunk's pool; kind may be NULL */
	hoff_op op;	       /* the numbers and flags */
	int32_t n[3];	       /* a chunk's: inputs, updates, outputs */
	uint32_t hash;	       /* a chunk's: of id, for the map */
	size_t at;	       /* a chunk's: where they start in its list */
} orec;

/* A hint that the map's slot for hash h will be read soon. */
static void prefetch_slot(const hoff_strmap *m, uint32_t h)
{
#if defined(__GNUC__)
	if (m->cap)
		__builtin_prefetch(&m->slot[h & (m->cap - 1)]);
#else
	(void)m;
	(void)h;
#endif
}

/* Starts the memory misses of an op's id and of its lists' names
 * f[2..4]; a chunk's reader keeps the names' hashes in r->lh, in order,
 * for chunk_element's lookups. */
static hoff_status list_hints(reader *r, const char *id, const js_val *f)
{
	const hoff_strmap *m = &r->g->tensor_ids;
	if (!r->in_chunk) {
		hoff_strmap_prefetch(&r->g->op_ids, id);
		for (int i = 2; i <= 4; i++)
			for (size_t j = 0;
			     f[i].type == JS_ARR && j < f[i].nitem; j++)
				hoff_strmap_prefetch(m, f[i].item[j]);
		return HOFF_OK;
	}
	size_t n = 0;
	for (int i = 2; i <= 4; i++)
		n += f[i].type == JS_ARR ? f[i].nitem : 0;
	if (!hoff_grow((void **)&r->lh, &r->lh_cap, n + 1, sizeof *r->lh))
		return hoff_seterr(r->e, HOFF_ENOMEM, "out of memory");
	n = 0;
	for (int i = 2; i <= 4; i++)
		for (size_t j = 0; f[i].type == JS_ARR && j < f[i].nitem; j++) {
			r->lh[n] = hoff_strmap_hash(f[i].item[j]);
			prefetch_slot(m, r->lh[n++]);
		}
	return HOFF_OK;
}

/* Reads and converts the op element at the scanner's position; its
 * tensor lists are left in f[2..4]. */
static hoff_status op_fields(reader *r, js_where *w, orec *rec, js_val *f)
{
	static const char *const names[] = {
		"id",	   "kind",	     "inputs",
		"updates", "outputs",	     "time_s",
		"flops",   "bytes_accessed", "workspace_bytes",
		"layer",   "recomputable",
	};
	static const bool list[NOPF] = {false, false, true, true, true};
	hoff_op *o = &rec->op;
	bool has_time, has_flops, has_ba, has_ws, has_layer, has_rc, rc = false;
	memset(o, 0, sizeof *o);
	hoff_status st = js_object(&r->s, w, names, list, NOPF, f);
	if (st != HOFF_OK)
		return st;
	if ((st = get_id(r, w, &f[0], "id", &rec->id)) != HOFF_OK)
		return st;
	w->id = rec->id;
	/* Start every id's memory miss before the first lookup waits. */
	if ((st = list_hints(r, rec->id, f)) != HOFF_OK)
		return st;
	if ((st = js_str(r->e, w, &f[1], "kind", false, &rec->kind)) !=
		    HOFF_OK ||
	    (st = js_num(r->e, w, &f[5], "time_s", false, false, &has_time,
			 &o->time_s)) != HOFF_OK ||
	    (st = js_num(r->e, w, &f[6], "flops", false, false, &has_flops,
			 &o->flops)) != HOFF_OK ||
	    (st = js_num(r->e, w, &f[7], "bytes_accessed", false, false,
			 &has_ba, &o->bytes_accessed)) != HOFF_OK ||
	    (st = js_int(r->e, w, &f[8], "workspace_bytes", false, 0, &has_ws,
			 &o->workspace_bytes)) != HOFF_OK ||
	    (st = js_int(r->e, w, &f[9], "layer", false, 0, &has_layer,
			 &o->layer)) != HOFF_OK ||
	    (st = js_bool(r->e, w, &f[10], "recomputable", &has_rc, &rc)) !=
		    HOFF_OK)
		return st;
	o->flags = (has_time ? HOFF_O_HAS_TIME : 0) |
		   (has_flops ? HOFF_O_HAS_FLOPS : 0) |
		   (has_ba ? HOFF_O_HAS_BYTES_ACCESSED : 0) |
		   (has_ws ? HOFF_O_HAS_WORKSPACE : 0) |
		   (has_layer ? HOFF_O_HAS_LAYER : 0) |
		   (has_rc ? HOFF_O_HAS_RECOMPUTABLE : 0) |
		   (has_rc && rc ? HOFF_O_RECOMPUTABLE : 0);
	return HOFF_OK;
}

/* Adds an op read by op_fields to the graph (its lists come next). */
static hoff_status op_add(reader *r, const js_where *w, const orec *rec)
{
	int32_t k = hoff_graph_add_op(r->g, rec->id, r->e);
	if (k == HOFF_NONE) {
		int32_t dup = hoff_graph_find_op(r->g, rec->id);
		if (dup != HOFF_NONE)
			return js_fail(r->e, w, HOFF_EINPUT,
				       "id: duplicate op id (first at ops[%d])",
				       dup);
		return builder_fail(r, w);
	}
	hoff_op *dst = &r->g->op[k];
	hoff_op o = rec->op;
	o.id = dst->id;
	if (rec->kind && !(o.kind = op_kind(r, rec->kind)))
		return hoff_seterr(r->e, HOFF_ENOMEM, "out of memory");
	*dst = o;
	return HOFF_OK;
}

/* Reads the op element at the scanner's position. */
static hoff_status read_op(reader *r)
{
	js_where w = {r->file, "ops", r->g->nops, NULL};
	js_val f[NOPF];
	orec rec;
	hoff_status st;
	if ((st = op_fields(r, &w, &rec, f)) != HOFF_OK ||
	    (st = op_add(r, &w, &rec)) != HOFF_OK ||
	    (st = read_list(r, &w, &f[2], "inputs", HOFF_USE_IN)) != HOFF_OK ||
	    (st = read_list(r, &w, &f[3], "updates", HOFF_USE_UPD)) !=
		    HOFF_OK ||
	    (st = read_list(r, &w, &f[4], "outputs", HOFF_USE_OUT)) != HOFF_OK)
		return st;
	return HOFF_OK;
}

/* Reads a kept element [a, b) (already validated) as tensor or op. */
static hoff_status replay(reader *r, ext x, bool tensor)
{
	size_t pos = r->s.pos;
	r->s.pos = x.a;
	hoff_status st = tensor ? read_tensor(r) : read_op(r);
	r->s.pos = pos;
	return st;
}

/* ---- the top level ---- */

/* js_top_value's reader of a small top-level value (everything but the
 * header, tensors and ops). */
static hoff_status read_top(void *ctx, const js_top *t)
{
	reader *r = ctx;
	const char *s;
	hoff_status st;
	if (t->k == K_REPEAT)
		return js_bool(r->e, &t->w, &t->v, "repeat", &r->g->has_repeat,
			       &r->g->repeat);
	if (t->k == K_MACHINE)
		return read_machine(r, t->j);
	if (t->k == K_NAME) {
		if ((st = js_str(r->e, &t->w, &t->v, "name", false, &s)) ==
			    HOFF_OK &&
		    s && !(r->g->name = hoff_strdup(s)))
			st = hoff_seterr(r->e, HOFF_ENOMEM, "out of memory");
		return st;
	}
	if (t->k == K_META && !cJSON_IsNull(t->j) &&
	    !(r->g->meta = js_compact(&r->s, t->a, t->b)))
		return hoff_seterr(r->e, HOFF_ENOMEM, "out of memory");
	return HOFF_OK; /* an unknown key: checked for duplicate keys */
}

/* Converts whatever has its dependencies in now. */
static hoff_status advance(reader *r)
{
	hoff_status st;
	if (!r->hdr_ok) {
		if (!r->have[K_FORMAT] || !r->have[K_VERSION] ||
		    !r->have[K_MACHINE])
			return HOFF_OK;
		r->hdr_ok = true;
	}
	if (!r->tensors_ok) {
		if (!r->have[K_TENSORS])
			return HOFF_OK;
		for (size_t i = 0; i < r->ntbuf; i++)
			if ((st = replay(r, r->tbuf[i], true)) != HOFF_OK)
				return st;
		free(r->tbuf);
		r->tbuf = NULL;
		r->ntbuf = r->tbuf_cap = 0;
		r->tensors_ok = true;
	}
	if (!r->ops_ok) {
		if (!r->have[K_OPS])
			return HOFF_OK;
		for (size_t i = 0; i < r->nobuf; i++)
			if ((st = replay(r, r->obuf[i], false)) != HOFF_OK)
				return st;
		free(r->obuf);
		r->obuf = NULL;
		r->nobuf = r->obuf_cap = 0;
		r->ops_ok = true;
	}
	return HOFF_OK;
}

/* ---- the big arrays, in parallel ----
 * A million-op graph is 300 MB of text, and one core reads it at about
 * 150 MB/s. Its tensors and ops arrays are therefore cut into chunks read
 * at once, one per thread: each chunk reads its elements into records
 * (fields converted, tensor names resolved; the graph is only read), and
 * the records then join the graph in document order on one thread.
 * Where chunk i + 1 starts is a guess (a '{' after "}," past the i-th
 * share of the text), which chunk i confirms when an element of its own
 * starts exactly there; otherwise the chunks from i + 1 on are dropped
 * and the plain reader goes on from the end of chunk i. A chunk that
 * meets anything wrong stops before the element at fault, and the plain
 * reader reads that element again, so every message is the one reading
 * in order gives, index and all. */

enum {
	CHUNK_MIN = 4 << 20,   /* bytes of array text worth a thread */
	CHUNK_MAX = 16,	       /* chunks at most */
	GUESS_REACH = 1 << 20, /* how far a start is looked for */
};

/* The OpenMP team for n shares of work: at most the processors this
 * process may run on (omp_get_num_procs counts the affinity mask), since
 * spinning threads past them only wait on each other (16 on 2 cores took
 * test_graph_chunks 56 s); the shares are still n, so results do not
 * change. */
static int team(int n)
{
#ifdef _OPENMP
	int p = omp_get_num_procs();
	return p >= 1 && p < n ? p : n;
#else
	return n;
#endif
}

typedef struct chunk {
	reader r;	/* the reader's copy, on its own scanner */
	hoff_err err;	/* its messages (never shown) */
	size_t start;	/* its first element's '{' (chunk 0: after '[') */
	size_t stop;	/* the next chunk's start, SIZE_MAX for the last */
	size_t end;	/* where it stopped: see next */
	bool end_first; /* end is an element's start, not a separator's */
	bool closed;	/* met the array's ']': end is past it */
	bool confirmed; /* met an element starting at stop */
	trec *t;	/* (n) tensors read */
	orec *o;	/* (n) ops read */
	size_t n, cap;
	int32_t *use; /* (nuse) the ops' tensors, list after list */
	size_t nuse, use_cap;
	int32_t *mark; /* (ntensors) for long lists: the number of the
			  list a tensor was last put in */
	int32_t nlists;
	hoff_strpool pool; /* ids and kinds of the records */
} chunk;

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* A guess at an element's start at or after p: a '{' whose previous
 * non-blank byte is ',' and the one before that '}'; SIZE_MAX if none
 * within GUESS_REACH. */
static size_t guess_start(const char *t, size_t len, size_t p)
{
	size_t lim = len - p > GUESS_REACH ? p + GUESS_REACH : len;
	while (p < lim) {
		const char *q = memchr(t + p, '{', lim - p);
		if (!q)
			break;
		size_t k = (size_t)(q - t), j = k;
		while (j > 0 && blank(t[j - 1]))
			j--;
		if (j > 0 && t[j - 1] == ',') {
			j--;
			while (j > 0 && blank(t[j - 1]))
				j--;
			if (j > 0 && t[j - 1] == '}')
				return k;
		}
		p = k + 1;
	}
	return SIZE_MAX;
}

/* Keeps one record's strings past the scanner's next element. */
static bool chunk_keep(chunk *c, const char **str)
{
	if (!*str)
		return true;
	*str = hoff_strpool_add(&c->pool, *str, strlen(*str));
	return *str != NULL;
}

/* Reads one element into a record; false when anything is wrong (the
 * plain reader rereads it). */
static bool chunk_element(chunk *c, bool tensors)
{
	reader *r = &c->r;
	if (!hoff_grow(tensors ? (void **)&c->t : (void **)&c->o, &c->cap,
		       c->n + 1, tensors ? sizeof *c->t : sizeof *c->o))
		return false;
	if (tensors) {
		js_where w = {r->file, "tensors", -1, NULL};
		trec *t = &c->t[c->n];
		if (tensor_fields(r, &w, t) != HOFF_OK ||
		    !chunk_keep(c, &t->id))
			return false;
		t->hash = hoff_strmap_hash(t->id);
		c->n++;
		return true;
	}
	js_where w = {r->file, "ops", -1, NULL};
	js_val f[NOPF];
	orec *o = &c->o[c->n];
	if (op_fields(r, &w, o, f) != HOFF_OK || !chunk_keep(c, &o->id) ||
	    !chunk_keep(c, &o->kind))
		return false;
	o->hash = hoff_strmap_hash(o->id);
	o->at = c->nuse;
	const uint32_t *lh = r->lh; /* the list items' hashes, in order */
	for (int i = 0; i < 3; i++) {
		const js_val *v = &f[2 + i];
		o->n[i] = 0;
		if (v->type == JS_ABSENT || v->type == JS_NULL)
			continue;
		if (v->type != JS_ARR || v->bad_item >= 0 ||
		    v->nitem > INT32_MAX ||
		    !hoff_grow((void **)&c->use, &c->use_cap,
			       c->nuse + v->nitem, sizeof *c->use))
			return false;
		/* A name repeated in one list counts once (hoff_graph_op_use):
		 * a short list is searched, a long one marked. */
		bool marks = v->nitem > 16;
		if (marks && !c->mark &&
		    !(c->mark = hoff_zalloc((size_t)r->g->ntensors + 1,
					    sizeof *c->mark)))
			return false;
		if (marks && ++c->nlists == INT32_MAX)
			return false;
		int32_t *list = c->use + c->nuse;
		for (size_t j = 0; j < v->nitem; j++) {
			int32_t t = hoff_strmap_get_hashed(&r->g->tensor_ids,
							   v->item[j], *lh++);
			if (t == HOFF_NONE)
				return false;
			bool seen = false;
			if (marks) {
				seen = c->mark[t] == c->nlists;
				c->mark[t] = c->nlists;
			}
			for (int32_t q = 0; !marks && q < o->n[i] && !seen; q++)
				seen = list[q] == t;
			if (!seen)
				list[o->n[i]++] = t;
		}
		c->nuse += (size_t)o->n[i];
	}
	c->n++;
	return true;
}

/* Reads a chunk's elements until its stop, the array's end or a fault. */
static void chunk_run(chunk *c, bool tensors)
{
	jscan *s = &c->r.s;
	bool first = true, more;
	s->pos = c->start;
	c->end = c->start;
	c->end_first = true;
	/* Room for the records at once, a guess from the bytes (a doubling
	 * copies into fresh memory): an op is rarely under 64 bytes, a
	 * tensor under 32, a name under 16. Untouched room costs nothing. */
	size_t span = (c->stop < s->len ? c->stop : s->len) - c->start;
	if (!hoff_grow(tensors ? (void **)&c->t : (void **)&c->o, &c->cap,
		       span / (tensors ? 32 : 64) + 1,
		       tensors ? sizeof *c->t : sizeof *c->o) ||
	    (!tensors && !hoff_grow((void **)&c->use, &c->use_cap,
				    span / 16 + 1, sizeof *c->use)))
		return;
	for (;;) {
		if (js_element(s, &first, &more) != HOFF_OK)
			return;
		if (!more) {
			c->closed = true;
			c->end = s->pos;
			return;
		}
		if (s->pos >= c->stop) {
			c->confirmed = s->pos == c->stop;
			return;
		}
		if (!chunk_element(c, tensors))
			return;
		c->end = s->pos;
		c->end_first = false;
	}
}

static void chunk_free(chunk *c)
{
	js_free(&c->r.s);
	free(c->r.lh);
	free(c->t);
	free(c->o);
	free(c->use);
	free(c->mark);
	hoff_strpool_free(&c->pool);
}

/* The first duplicate id a join met: its record's index and id, and the
 * index of the id's first element. */
typedef struct repeat {
	int64_t at, first;
	const char *id;
} repeat;

static void repeat_min(repeat *d, int64_t at, int64_t first, const char *id)
{
	if (d->at < 0 || at < d->at)
		*d = (repeat){at, first, id};
}

/* The records of chunks c[0..nc), in order, as one array. */
typedef struct joined {
	chunk *c;
	int nc;
	bool tensors;
	size_t start[CHUNK_MAX + 1]; /* record index where chunk q starts */
} joined;

/* Record i's chunk and index in it. */
static void joined_at(const joined *j, size_t i, int *q, size_t *k)
{
	int x = 0;
	while (j->start[x + 1] <= i)
		x++;
	*q = x;
	*k = i - j->start[x];
}

static void joined_id(const joined *j, size_t i, const char **id, uint32_t *h)
{
	int q;
	size_t k;
	joined_at(j, i, &q, &k);
	*id = j->tensors ? j->c[q].t[k].id : j->c[q].o[k].id;
	*h = j->tensors ? j->c[q].t[k].hash : j->c[q].o[k].hash;
}

/* Files the ids of the n records of j in map m (reserved for them), as
 * base + their index: the threads at once, each owning a share of the
 * slots and taking the ids whose home slot is in it, in document order,
 * so that an id and its repeats meet on one thread; ids whose probe
 * leaves a share go in afterwards, in document order. *d gets the first
 * repeated id in document order (at -1: none). */
static hoff_status file_ids(hoff_strmap *m, int64_t base, const joined *j,
			    size_t n, int threads, repeat *d)
{
	size_t *spill[CHUNK_MAX] = {NULL}, nspill[CHUNK_MAX] = {0};
	size_t added[CHUNK_MAX] = {0};
	repeat td[CHUNK_MAX];
	bool oom[CHUNK_MAX] = {false};
	d->at = -1;
#pragma omp parallel for schedule(static, 1) num_threads(team(threads))
	for (int q = 0; q < threads; q++) {
		size_t share = m->cap / (size_t)threads;
		size_t lo = share * (size_t)q;
		size_t hi = q + 1 == threads ? m->cap : lo + share;
		size_t cap = 0;
		td[q].at = -1;
		for (size_t i = 0; i < n && td[q].at < 0 && !oom[q]; i++) {
			const char *id;
			uint32_t h;
			int32_t old;
#if defined(__GNUC__)
			if (i + 16 < n) { /* the slot a later id will probe */
				joined_id(j, i + 16, &id, &h);
				size_t ahead = h & (m->cap - 1);
				if (ahead >= lo && ahead < hi)
					__builtin_prefetch(&m->slot[ahead], 1);
			}
#endif
			joined_id(j, i, &id, &h);
			size_t home = h & (m->cap - 1);
			if (home < lo || home >= hi)
				continue;
			int got = hoff_strmap_put_in(
				m, id, h, (int32_t)(base + (int64_t)i), lo, hi,
				&old);
			if (got == 1)
				added[q]++;
			else if (got == 0)
				td[q] = (repeat){base + (int64_t)i, old, id};
			else if (!hoff_grow((void **)&spill[q], &cap,
					    nspill[q] + 1, sizeof *spill[q]))
				oom[q] = true;
			else
				spill[q][nspill[q]++] = i;
		}
	}
	hoff_status st = HOFF_OK;
	for (int q = 0; q < threads; q++) {
		m->n += added[q];
		if (oom[q])
			st = HOFF_ENOMEM;
		if (td[q].at >= 0)
			repeat_min(d, td[q].at, td[q].first, td[q].id);
	}
	/* The spilled ids, the threads' lists merged by index. */
	size_t at[CHUNK_MAX] = {0};
	while (st == HOFF_OK) {
		int best = -1;
		for (int q = 0; q < threads; q++)
			if (at[q] < nspill[q] &&
			    (best < 0 ||
			     spill[q][at[q]] < spill[best][at[best]]))
				best = q;
		if (best < 0)
			break;
		size_t i = spill[best][at[best]++];
		if (d->at >= 0 && base + (int64_t)i > d->at)
			break; /* past the first repeat: nothing earlier left */
		const char *id;
		uint32_t h;
		int32_t old;
		joined_id(j, i, &id, &h);
		hoff_status ps = hoff_strmap_put(
			m, id, (int32_t)(base + (int64_t)i), &old);
		if (ps == HOFF_EINPUT)
			repeat_min(d, base + (int64_t)i, old, id);
		else if (ps != HOFF_OK)
			st = ps;
	}
	for (int q = 0; q < threads; q++)
		free(spill[q]);
	return st;
}

/* Adds the records of chunks c[0..nc) to the graph as tensor_add, or
 * op_add and hoff_graph_op_use, would one after the other, on every
 * thread at once; the first repeated id in document order is the
 * message, as there. */
static hoff_status chunk_join(reader *r, chunk *c, int nc, bool tensors,
			      int threads)
{
	hoff_graph *g = r->g;
	joined j = {.c = c, .nc = nc, .tensors = tensors};
	size_t nuse[3] = {0, 0, 0};
	for (int q = 0; q < nc; q++) {
		j.start[q + 1] = j.start[q] + c[q].n;
		for (size_t i = 0; !tensors && i < c[q].n; i++)
			for (int l = 0; l < 3; l++)
				nuse[l] += (size_t)c[q].o[i].n[l];
	}
	const size_t n = j.start[nc];
	const int64_t base = tensors ? g->ntensors : g->nops;
	const char *sect = tensors ? "tensors" : "ops";
	if (n == 0)
		return HOFF_OK;
	if ((size_t)(INT32_MAX - base) < n) { /* as add_name words it */
		const char *id;
		uint32_t h;
		joined_id(&j, (size_t)(INT32_MAX - base), &id, &h);
		js_where w = {r->file, sect, INT32_MAX, id};
		return js_fail(r->e, &w, HOFF_EINPUT, "too many %s", sect);
	}
	hoff_status st = tensors ? hoff_graph_reserve(g, n, 0, NULL)
				 : hoff_graph_reserve(g, 0, n, nuse);
	for (int q = 0; q < nc && st == HOFF_OK; q++)
		st = hoff_strpool_adopt(&g->pool, &c[q].pool);
	repeat d = {-1, -1, NULL};
	if (st == HOFF_OK)
		st = file_ids(tensors ? &g->tensor_ids : &g->op_ids, base, &j,
			      n, threads, &d);
	if (st != HOFF_OK)
		return hoff_seterr(r->e, st, "out of memory");
	if (d.at >= 0) {
		js_where w = {r->file, sect, d.at, d.id};
		return js_fail(r->e, &w, HOFF_EINPUT,
			       "id: duplicate %s id (first at %s[%lld])",
			       tensors ? "tensor" : "op", sect,
			       (long long)d.first);
	}
	if (tensors) {
#pragma omp parallel for schedule(static) num_threads(team(threads))
		for (size_t i = 0; i < n; i++) {
			int q;
			size_t k;
			joined_at(&j, i, &q, &k);
			const trec *rt = &c[q].t[k];
			hoff_tensor *t = &g->tensor[(size_t)base + i];
			*t = (hoff_tensor){.id = rt->id,
					   .bytes = rt->bytes,
					   .home = rt->home,
					   .kind = rt->kind,
					   .flags = rt->flags,
					   .producer = HOFF_NONE,
					   .first_use = HOFF_NONE,
					   .last_use = HOFF_NONE};
			hoff_tensor_defaults(t);
		}
		g->ntensors = (int32_t)(base + (int64_t)n);
		return HOFF_OK;
	}
	/* Ops: kinds interned and list offsets summed in order, then the
	 * ops and their lists written at once. */
	int64_t *off[3] = {g->in_off, g->upd_off, g->out_off};
	int32_t *list[3] = {g->in, g->upd, g->out};
	for (size_t i = 0; i < n; i++) {
		int q;
		size_t k;
		joined_at(&j, i, &q, &k);
		orec *o = &c[q].o[k];
		size_t op = (size_t)base + i;
		for (int l = 0; l < 3; l++)
			off[l][op + 1] = off[l][op] + o->n[l];
		o->op.id = o->id;
		o->op.kind = NULL;
		if (o->kind && !(o->op.kind = op_kind(r, o->kind)))
			return hoff_seterr(r->e, HOFF_ENOMEM, "out of memory");
	}
#pragma omp parallel for schedule(static) num_threads(team(threads))
	for (size_t i = 0; i < n; i++) {
		int q;
		size_t k;
		joined_at(&j, i, &q, &k);
		const orec *o = &c[q].o[k];
		size_t op = (size_t)base + i;
		g->op[op] = o->op;
		const int32_t *u = c[q].use + o->at;
		for (int l = 0; l < 3; u += o->n[l], l++)
			if (o->n[l])
				memcpy(list[l] + off[l][op], u,
				       (size_t)o->n[l] * sizeof *u);
	}
	g->nops = (int32_t)(base + (int64_t)n);
	return HOFF_OK;
}

/* Reads as much of the array whose '[' was just consumed as the chunks
 * agree on; *closed when that was all of it, else r->s.pos and *first
 * are where the plain reader goes on. */
static hoff_status read_chunks(reader *r, int k, bool *first, bool *closed)
{
	const bool tensors = k == K_TENSORS;
	const size_t pos = r->s.pos;
	/* Where the array ends, roughly: the tensors usually come before the
	 * ops, which end near the end of the text. */
	const char *ops = NULL;
	if (tensors)
		ops = memmem(r->s.text + pos, r->s.len - pos, "\"ops\"", 5);
	const size_t rest = ops ? (size_t)(ops - r->s.text) - pos
				: r->s.len - pos;
	int nc = r->chunks;
	if (nc == 0) {
		nc = 1;
#ifdef _OPENMP
		nc = omp_get_max_threads();
#endif
		while (nc > 1 && rest / (size_t)nc < CHUNK_MIN)
			nc--;
	}
	if (nc > CHUNK_MAX)
		nc = CHUNK_MAX;
	*closed = false;
	if (nc < 2)
		return HOFF_OK;
	chunk c[CHUNK_MAX];
	memset(c, 0, sizeof c);
	c[0].start = pos;
	int m = 1;
	for (; m < nc; m++) {
		size_t g = guess_start(r->s.text, r->s.len,
				       pos + rest / (size_t)nc * (size_t)m);
		if (g == SIZE_MAX || g <= c[m - 1].start)
			break;
		c[m].start = g;
	}
	for (int i = 0; i < m; i++) {
		c[i].stop = i + 1 < m ? c[i + 1].start : SIZE_MAX;
		c[i].r = *r;
		c[i].r.e = &c[i].err;
		c[i].r.in_chunk = true;
		c[i].r.lh = NULL;
		c[i].r.lh_cap = 0;
		js_init(&c[i].r.s, r->s.text, r->s.len, r->file, &c[i].err);
	}
#pragma omp parallel for schedule(static, 1) num_threads(team(m))
	for (int i = 0; i < m; i++)
		chunk_run(&c[i], tensors);
	/* The records of every confirmed chunk, and of the first that is
	 * not, join the graph; the plain reader goes on after them. */
	int last = 0;
	while (last < m - 1 && c[last].confirmed)
		last++;
	hoff_status st = chunk_join(r, c, last + 1, tensors, m);
	if (st == HOFF_OK) {
		r->s.pos = c[last].end;
		*first = c[last].end_first;
		*closed = c[last].closed;
	}
	for (int i = 0; i < m; i++)
		chunk_free(&c[i]);
	return st;
}

/* Scans the tensors or ops array, converting elements whose dependencies
 * are in and keeping the extents of the others. */
static hoff_status read_array(reader *r, int k)
{
	size_t a, b;
	hoff_status st = js_top_array(&r->s, top_keys[k]);
	if (st != HOFF_OK)
		return st;
	bool first = true, more, closed = false;
	if (k == K_TENSORS ? r->hdr_ok : r->tensors_ok) {
		if ((st = read_chunks(r, k, &first, &closed)) != HOFF_OK)
			return st;
	}
	for (; !closed;) {
		if ((st = js_element(&r->s, &first, &more)) != HOFF_OK)
			return st;
		if (!more)
			break;
		bool ready = k == K_TENSORS ? r->hdr_ok : r->tensors_ok;
		if (ready) {
			st = k == K_TENSORS ? read_tensor(r) : read_op(r);
			if (st != HOFF_OK)
				return st;
			continue;
		}
		if ((st = js_value(&r->s, &a, &b)) != HOFF_OK)
			return st;
		ext **buf = k == K_TENSORS ? &r->tbuf : &r->obuf;
		size_t *n = k == K_TENSORS ? &r->ntbuf : &r->nobuf;
		size_t *cap = k == K_TENSORS ? &r->tbuf_cap : &r->obuf_cap;
		if (!hoff_grow((void **)buf, cap, *n + 1, sizeof **buf))
			return hoff_seterr(r->e, HOFF_ENOMEM, "out of memory");
		(*buf)[(*n)++] = (ext){a, b};
	}
	r->have[k] = true;
	return HOFF_OK;
}

/* A version-1 file holds nothing of version 2: the first v2 field met
 * (top level, then tiers, then ops) is the message. */
static hoff_status v1_only(const hoff_graph *g, const char *file, hoff_err *e)
{
	static const char why[] =
		"is a version-2 field (the file is version 1)";
	if (g->version != 1)
		return HOFF_OK;
	if (g->has_repeat)
		return hoff_seterr(e, HOFF_EINPUT, "%s: repeat %s", file, why);
	for (int32_t i = 0; i < g->ntiers; i++) {
		const hoff_tier *t = &g->tier[i];
		if (t->has_h2d_duplex || t->has_d2h_duplex)
			return hoff_seterr(
				e, HOFF_EINPUT,
				"%s: machine.tiers[%d] \"%s\": %s %s", file, i,
				t->name,
				t->has_h2d_duplex ? "h2d_duplex_factor"
						  : "d2h_duplex_factor",
				why);
	}
	for (int32_t k = 0; k < g->nops; k++)
		if (g->op[k].flags & HOFF_O_HAS_RECOMPUTABLE)
			return hoff_seterr(
				e, HOFF_EINPUT,
				"%s: ops[%d] \"%s\": recomputable %s", file, k,
				g->op[k].id, why);
	return HOFF_OK;
}

hoff_status hoff_graph_parse(const char *text, size_t len, const char *file,
			     hoff_graph **out, hoff_err *e)
{
	return hoff_graph_parse_chunks(text, len, file, 0, out, e);
}

/* js_top_object's callback: one top-level member of the graph. */
static hoff_status top_member(void *ctx, int k)
{
	reader *r = ctx;
	hoff_status st;
	if (k == K_TENSORS || k == K_OPS) {
		st = read_array(r, k);
	} else {
		st = js_top_value(&r->s, k, "hoffopt.graph", &r->g->version,
				  read_top, r);
		if (k < NKEYS)
			r->have[k] = true;
	}
	if (st == HOFF_OK)
		st = advance(r);
	return st;
}

hoff_status hoff_graph_parse_chunks(const char *text, size_t len,
				    const char *file, int chunks,
				    hoff_graph **out, hoff_err *e)
{
	hoff_err scratch;
	reader r;
	hoff_status st;
	if (!e)
		e = &scratch;
	*out = NULL;
	memset(&r, 0, sizeof r);
	r.file = file;
	r.e = e;
	r.chunks = chunks;
	js_init(&r.s, text, len, file, e);
	if (!(r.g = hoff_graph_new())) {
		st = hoff_seterr(e, HOFF_ENOMEM, "out of memory");
		goto out;
	}
	static const int required[] = {K_FORMAT, K_VERSION, K_MACHINE,
				       K_TENSORS, K_OPS};
	if ((st = js_top_object(&r.s, top_keys, NKEYS, top_member, &r, r.have,
				required,
				sizeof required / sizeof *required)) != HOFF_OK)
		goto out;
	if ((st = advance(&r)) != HOFF_OK) /* a no-op: it ran after each key */
		goto out;
	assert(r.ops_ok);
	if ((st = v1_only(r.g, file, e)) != HOFF_OK)
		goto out;
	st = hoff_graph_finish(r.g, file, e);
	if (st == HOFF_OK)
		st = hoff_graph_check_tiers(r.g, file, e);
out:
	free(r.tbuf);
	free(r.obuf);
	js_free(&r.s);
	if (st != HOFF_OK) {
		js_oneline(e);
		hoff_graph_free(r.g);
	} else {
		*out = r.g;
	}
	return st;
}

/* A regular file, mapped instead of read: a million-op graph's 300 MB
 * are neither copied nor cleared first (a read() into fresh memory spent
 * a sixth of the reader's time there). 0 when the file is anything else
 * (stdin, a pipe, empty, over the limit, unmappable): hoff_slurp then
 * reads it, and words its errors. */
static size_t map_file(const char *path, void **map)
{
	*map = NULL;
	if (strcmp(path, "-") == 0)
		return 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	struct stat sb;
	size_t len = 0;
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0 &&
	    (uint64_t)sb.st_size <= HOFF_MAX_INPUT_BYTES) {
		int flags = MAP_PRIVATE;
#ifdef MAP_POPULATE
		flags |= MAP_POPULATE;
#endif
		void *p =
			mmap(NULL, (size_t)sb.st_size, PROT_READ, flags, fd, 0);
		if (p != MAP_FAILED) {
			*map = p;
			len = (size_t)sb.st_size;
		}
	}
	close(fd);
	return len;
}

hoff_status hoff_graph_read(const char *path, hoff_graph **out, hoff_err *e)
{
	char *buf;
	size_t len;
	*out = NULL;
	void *map;
	if ((len = map_file(path, &map)) > 0) {
		/* As hoff_slurp words it: JSON text holds no NUL byte. The
		 * scanner accepts none (in a string it is a control
		 * character, elsewhere unexpected), so a text that parses
		 * has none: only a failed parse looks for one, and its
		 * message then wins (one pass less over a 300 MB text). */
		hoff_status st = hoff_graph_parse(map, len, path, out, e);
		const char *nul = st != HOFF_OK ? memchr(map, '\0', len) : NULL;
		if (nul)
			st = hoff_seterr(e, HOFF_EINPUT,
					 "%s: byte %zu is NUL: not JSON text",
					 path, (size_t)(nul - (char *)map));
		munmap(map, len);
		return st;
	}
	hoff_status st = hoff_slurp(path, &buf, &len, e);
	if (st != HOFF_OK)
		return st;
	st = hoff_graph_parse(buf, len,
			      strcmp(path, "-") == 0 ? "<stdin>" : path, out, e);
	free(buf);
	return st;
}

/* ---- writer ---- */

static void put_key(FILE *f, const char *key)
{
	fputs(", \"", f);
	fputs(key, f);
	fputs("\": ", f);
}

static void put_int(FILE *f, const char *key, int64_t v)
{
	put_key(f, key);
	js_put_int(f, v);
}

static void put_list(FILE *f, const hoff_graph *g, const char *key,
		     const int64_t *off, const int32_t *lst, int32_t k)
{
	if (off[k] == off[k + 1])
		return;
	put_key(f, key);
	putc('[', f);
	for (int64_t i = off[k]; i < off[k + 1]; i++) {
		if (i > off[k])
			fputs(", ", f);
		hoff_json_string(f, g->tensor[lst[i]].id);
	}
	putc(']', f);
}

static void put_tensor(FILE *f, const hoff_graph *g, const hoff_tensor *t)
{
	unsigned fl = t->flags;
	bool out = fl & HOFF_T_OUTPUT, pers = fl & HOFF_T_PERSISTENT,
	     off = fl & HOFF_T_OFFLOAD;
	/* What a reader derives when the field is left out. */
	bool def_out = t->kind == HOFF_KIND_OUTPUT;
	bool def_pers = t->kind == HOFF_KIND_WEIGHT || t->kind == HOFF_KIND_KV ||
			t->kind == HOFF_KIND_OPTIMIZER || out;
	fputs("{\"id\": ", f);
	hoff_json_string(f, t->id);
	put_int(f, "bytes", t->bytes);
	if ((fl & HOFF_T_HAS_KIND) || t->kind != HOFF_KIND_OTHER) {
		put_key(f, "kind");
		hoff_json_string(f, hoff_kind_name(t->kind));
	}
	if ((fl & HOFF_T_HAS_HOME) || t->home != HOFF_DEVICE) {
		put_key(f, "home");
		hoff_json_string(f, t->home == HOFF_DEVICE
					    ? "device"
					    : g->tier[t->home].name);
	}
	if ((fl & HOFF_T_HAS_OUTPUT) || out != def_out) {
		put_key(f, "output");
		fputs(out ? "true" : "false", f);
	}
	if ((fl & HOFF_T_HAS_PERSISTENT) || pers != def_pers) {
		put_key(f, "persistent");
		fputs(pers ? "true" : "false", f);
	}
	if ((fl & HOFF_T_HAS_OFFLOAD) || !off) {
		put_key(f, "offload");
		fputs(off ? "true" : "false", f);
	}
	putc('}', f);
}

static void put_op(FILE *f, const hoff_graph *g, int32_t k)
{
	const hoff_op *o = &g->op[k];
	fputs("{\"id\": ", f);
	hoff_json_string(f, o->id);
	if (o->kind) {
		put_key(f, "kind");
		hoff_json_string(f, o->kind);
	}
	put_list(f, g, "inputs", g->in_off, g->in, k);
	put_list(f, g, "updates", g->upd_off, g->upd, k);
	put_list(f, g, "outputs", g->out_off, g->out, k);
	if (o->flags & HOFF_O_HAS_TIME) {
		put_key(f, "time_s");
		js_put_num(f, o->time_s);
	}
	if ((o->flags & HOFF_O_HAS_FLOPS) || o->flops != 0) {
		put_key(f, "flops");
		js_put_num(f, o->flops);
	}
	if ((o->flags & HOFF_O_HAS_BYTES_ACCESSED) || o->bytes_accessed != 0) {
		put_key(f, "bytes_accessed");
		js_put_num(f, o->bytes_accessed);
	}
	if ((o->flags & HOFF_O_HAS_WORKSPACE) || o->workspace_bytes != 0)
		put_int(f, "workspace_bytes", o->workspace_bytes);
	if (o->flags & HOFF_O_HAS_LAYER)
		put_int(f, "layer", o->layer);
	/* (v2) written when read, or when it differs from its default */
	bool rc = hoff_op_recomputable(o);
	if ((o->flags & HOFF_O_HAS_RECOMPUTABLE) ||
	    rc != (g->upd_off[k] == g->upd_off[k + 1])) {
		put_key(f, "recomputable");
		fputs(rc ? "true" : "false", f);
	}
	putc('}', f);
}

void hoff_graph_print(const hoff_graph *g, FILE *f)
{
	const hoff_device *d = &g->device;
	bool v2 = g->version >= 2 || hoff_graph_uses_v2(g);
	fputs(v2 ? "{\"format\": \"hoffopt.graph\", \"version\": 2"
		 : "{\"format\": \"hoffopt.graph\", \"version\": 1",
	      f);
	if (g->repeat || (v2 && g->has_repeat))
		fputs(g->repeat ? ",\n \"repeat\": true"
				: ",\n \"repeat\": false",
		      f);
	if (g->name) {
		fputs(",\n \"name\": ", f);
		hoff_json_string(f, g->name);
	}
	if (g->meta)
		fprintf(f, ",\n \"meta\": %s", g->meta);
	fputs(",\n \"machine\": {\n  \"device\": {", f);
	if (d->name) {
		fputs("\"name\": ", f);
		hoff_json_string(f, d->name);
		fputs(", ", f);
	}
	fprintf(f, "\"memory_bytes\": %lld", (long long)d->memory_bytes);
	if (d->has_flops || d->flops_per_s != 0) {
		put_key(f, "flops_per_s");
		js_put_num(f, d->flops_per_s);
	}
	if (d->has_mem_bw || d->mem_bandwidth_Bps != 0) {
		put_key(f, "mem_bandwidth_Bps");
		js_put_num(f, d->mem_bandwidth_Bps);
	}
	if (d->has_overhead || d->op_overhead_s != 0) {
		put_key(f, "op_overhead_s");
		js_put_num(f, d->op_overhead_s);
	}
	putc('}', f);
	if (g->ntiers > 0) {
		fputs(",\n  \"tiers\": [", f);
		for (int32_t i = 0; i < g->ntiers; i++) {
			const hoff_tier *t = &g->tier[i];
			fputs(i ? ",\n   {\"name\": " : "\n   {\"name\": ", f);
			hoff_json_string(f, t->name);
			put_key(f, "h2d_Bps");
			js_put_num(f, t->h2d_Bps);
			put_key(f, "d2h_Bps");
			js_put_num(f, t->d2h_Bps);
			if (t->has_latency || t->latency_s != 0) {
				put_key(f, "latency_s");
				js_put_num(f, t->latency_s);
			}
			if (t->capacity_bytes != HOFF_UNLIMITED)
				fprintf(f, ", \"capacity_bytes\": %lld",
					(long long)t->capacity_bytes);
			if (t->has_h2d_duplex || t->h2d_duplex != 1.0) {
				put_key(f, "h2d_duplex_factor");
				js_put_num(f, t->h2d_duplex);
			}
			if (t->has_d2h_duplex || t->d2h_duplex != 1.0) {
				put_key(f, "d2h_duplex_factor");
				js_put_num(f, t->d2h_duplex);
			}
			putc('}', f);
		}
		fputs("\n  ]", f);
	}
	fputs("},\n \"tensors\": [", f);
	for (int32_t i = 0; i < g->ntensors; i++) {
		fputs(i ? ",\n  " : "\n  ", f);
		put_tensor(f, g, &g->tensor[i]);
	}
	fputs(g->ntensors ? "\n ],\n \"ops\": [" : "],\n \"ops\": [", f);
	for (int32_t k = 0; k < g->nops; k++) {
		fputs(k ? ",\n  " : "\n  ", f);
		put_op(f, g, k);
	}
	fputs(g->nops ? "\n ]\n}\n" : "]\n}\n", f);
}

hoff_status hoff_graph_write(const hoff_graph *g, const char *path,
			     hoff_err *e)
{
	hoff_outfile o;
	hoff_status st = hoff_outfile_open(&o, path, e);
	if (st != HOFF_OK)
		return st;
	hoff_graph_print(g, o.f);
	return hoff_outfile_commit(&o, e);
}
