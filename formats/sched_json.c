/* sched_json.c: schedule.json reader and writer (FORMAT.md).
 * Like the graph reader, it walks the top level with jscan and reads each
 * step in one pass with js_object(), so a schedule of millions of steps
 * costs its step array and nothing more; cJSON sees only the small values.
 * Names resolve against the graph as they are read; hoff_sched_check()
 * then checks that every op appears once, in graph order. */
#include "sched_json.h"

#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "jscan.h"

/* (format and version first, at jscan's JS_K_FORMAT and JS_K_VERSION) */
enum { K_FORMAT, K_VERSION, K_GRAPH, K_POLICY, K_BUDGET, K_STEPS, K_SUMMARY,
       NKEYS };
_Static_assert((int)K_FORMAT == JS_K_FORMAT && (int)K_VERSION == JS_K_VERSION,
	       "js_top_value reads the header at these keys");
static const char *const top_keys[NKEYS] = {
	"format", "version", "graph", "policy", "budget_bytes", "steps",
	"summary",
};

typedef struct ext {
	size_t a, b;
} ext;

typedef struct reader {
	jscan s; /* s.file the file's name, s.e where errors go */
	hoff_sched *sc;
	const hoff_graph *g;
	hoff_err scratch; /* s.e when the caller gives no error buffer */
	bool have[NKEYS];
	bool has_recompute_s; /* the summary carries recompute_s */
	ext *buf; /* steps met before format and version */
	size_t nbuf, buf_cap;
} reader;

/* Reads the step element at the scanner's position. */
static hoff_status read_step(reader *r)
{
	enum { NKIND = 6, FROM = 6, TO = 7, NF = 8 };
	static const char *const names[NF] = {
		"op",	     "prefetch", "store", "detach",
		"recompute", "drop",	 "from",  "to",
	};
	static const bool list[NF] = {false};
	static const hoff_step_kind kinds[NKIND] = {
		HOFF_STEP_OP,	  HOFF_STEP_PREFETCH,  HOFF_STEP_STORE,
		HOFF_STEP_DETACH, HOFF_STEP_RECOMPUTE, HOFF_STEP_DROP,
	};
	js_val f[NF];
	js_where w = {r->s.file, "steps", r->sc->nsteps, NULL};
	const char *name, *tier_name;
	int32_t id, tier = HOFF_NONE;
	int kind = -1;
	hoff_status st = js_object(&r->s, &w, names, list, NF, f);
	if (st != HOFF_OK)
		return st;
	for (int i = 0; i < NKIND; i++) {
		if (f[i].type == JS_ABSENT)
			continue;
		if (kind >= 0)
			return js_fail(r->s.e, &w, HOFF_EINPUT,
				       "more than one step key (\"%s\" and "
				       "\"%s\")",
				       names[kind], names[i]);
		kind = i;
	}
	if (kind < 0)
		return js_fail(r->s.e, &w, HOFF_EINPUT,
			       "no step key (op, prefetch, store, detach, "
			       "recompute or drop)");
	if ((st = js_str(r->s.e, &w, &f[kind], names[kind], true, &name)) !=
	    HOFF_OK)
		return st;
	w.id = name;
	if ((kinds[kind] == HOFF_STEP_RECOMPUTE ||
	     kinds[kind] == HOFF_STEP_DROP) &&
	    r->sc->version < 2)
		return js_fail(r->s.e, &w, HOFF_EINPUT,
			       "%s: a version-2 step (the file is version 1)",
			       names[kind]);
	/* from goes with prefetch, to with store, neither with the rest. */
	int want = kinds[kind] == HOFF_STEP_PREFETCH ? FROM
		   : kinds[kind] == HOFF_STEP_STORE  ? TO
						     : -1;
	for (int i = FROM; i < NF; i++)
		if (f[i].type != JS_ABSENT && i != want)
			return js_fail(r->s.e, &w, HOFF_EINPUT,
				       "\"%s\" belongs to %s steps only",
				       names[i],
				       i == FROM ? "prefetch" : "store");
	if (kinds[kind] == HOFF_STEP_OP || kinds[kind] == HOFF_STEP_RECOMPUTE) {
		id = hoff_graph_find_op(r->g, name);
		if (id == HOFF_NONE)
			return js_fail(r->s.e, &w, HOFF_EINPUT,
				       "%s: unknown op \"%.100s\"", names[kind],
				       name);
	} else {
		id = hoff_graph_find_tensor(r->g, name);
		if (id == HOFF_NONE)
			return js_fail(r->s.e, &w, HOFF_EINPUT,
				       "%s: unknown tensor \"%.100s\"",
				       names[kind], name);
	}
	if (want >= 0) {
		if ((st = js_str(r->s.e, &w, &f[want], names[want], true,
				 &tier_name)) != HOFF_OK)
			return st;
		tier = hoff_graph_find_tier(r->g, tier_name);
		if (tier == HOFF_NONE)
			return js_fail(r->s.e, &w, HOFF_EINPUT,
				       "%s: unknown tier \"%.100s\"",
				       names[want], tier_name);
	}
	if (hoff_sched_push(r->sc, kinds[kind], id, tier) != HOFF_OK)
		return hoff_seterr(r->s.e, HOFF_ENOMEM, "out of memory");
	return HOFF_OK;
}

static hoff_status read_summary(reader *r, const cJSON *o)
{
	static const char *const names[] = {
		"peak_bytes", "makespan_s", "compute_s",   "stall_s",
		"h2d_bytes",  "d2h_bytes",  "recompute_s",
	};
	js_val f[7];
	js_where top = {r->s.file, NULL, -1, NULL};
	js_where w = {r->s.file, "summary", -1, NULL};
	hoff_summary *sm = &r->sc->summary;
	int64_t *ps[4] = {&sm->makespan_ps, &sm->compute_ps, &sm->stall_ps,
			  &sm->recompute_ps};
	int slot[4] = {1, 2, 3, 6};
	hoff_status st;
	if (cJSON_IsNull(o))
		return HOFF_OK;
	if (!cJSON_IsObject(o))
		return js_fail(r->s.e, &top, HOFF_EINPUT,
			       "summary must be an object");
	js_fields(o, names, 7, f);
	/* (v2) recompute_s: its presence is checked against the version
	 * once both are read (hoff_sched_parse) */
	r->has_recompute_s = f[6].type != JS_ABSENT && f[6].type != JS_NULL;
	sm->recompute_ps = 0;
	if ((st = js_int(r->s.e, &w, &f[0], names[0], true, 0, NULL,
			 &sm->peak_bytes)) != HOFF_OK ||
	    (st = js_int(r->s.e, &w, &f[4], names[4], true, 0, NULL,
			 &sm->h2d_bytes)) != HOFF_OK ||
	    (st = js_int(r->s.e, &w, &f[5], names[5], true, 0, NULL,
			 &sm->d2h_bytes)) != HOFF_OK)
		return st;
	for (int i = 0; i < 4; i++) {
		double x;
		if (i == 3 && !r->has_recompute_s)
			break;
		if ((st = js_num(r->s.e, &w, &f[slot[i]], names[slot[i]], true,
				 false, NULL, &x)) != HOFF_OK)
			return st;
		if ((*ps[i] = hoff_ps(x)) < 0)
			return js_fail(r->s.e, &w, HOFF_EINPUT,
				       "%s must be below 2^62 ps",
				       names[slot[i]]);
	}
	r->sc->has_summary = true;
	return HOFF_OK;
}

/* js_top_value's reader of a top-level value other than the header and
 * steps. */
static hoff_status read_top(void *ctx, const js_top *t)
{
	reader *r = ctx;
	int k = t->k;
	const char *s;
	int64_t n;
	bool present;
	hoff_status st = HOFF_OK;
	switch (k) {
	case K_GRAPH:
	case K_POLICY:
		if ((st = js_str(r->s.e, &t->w, &t->v, top_keys[k], false,
				 &s)) != HOFF_OK ||
		    !s)
			break;
		if (k == K_GRAPH && !(r->sc->graph = hoff_strdup(s)))
			st = hoff_seterr(r->s.e, HOFF_ENOMEM, "out of memory");
		if (k == K_POLICY && hoff_sched_set_policy(r->sc, s) != HOFF_OK)
			st = hoff_seterr(r->s.e, HOFF_ENOMEM, "out of memory");
		break;
	case K_BUDGET:
		if ((st = js_int(r->s.e, &t->w, &t->v, "budget_bytes", false, 0,
				 &present, &n)) == HOFF_OK &&
		    present)
			r->sc->budget_bytes = n;
		break;
	case K_SUMMARY:
		st = read_summary(r, t->j);
		break;
	default: /* an unknown key: checked for duplicate keys, ignored */
		break;
	}
	return st;
}

static bool hdr_ok(const reader *r)
{
	return r->have[K_FORMAT] && r->have[K_VERSION];
}

static hoff_status read_steps(reader *r)
{
	size_t a, b;
	hoff_status st = js_top_array(&r->s, "steps");
	if (st != HOFF_OK)
		return st;
	bool first = true, more;
	for (;;) {
		if ((st = js_element(&r->s, &first, &more)) != HOFF_OK)
			return st;
		if (!more)
			return HOFF_OK;
		if (hdr_ok(r)) {
			if ((st = read_step(r)) != HOFF_OK)
				return st;
			continue;
		}
		if ((st = js_value(&r->s, &a, &b)) != HOFF_OK)
			return st;
		if (!hoff_grow((void **)&r->buf, &r->buf_cap, r->nbuf + 1,
			       sizeof *r->buf))
			return hoff_seterr(r->s.e, HOFF_ENOMEM,
					   "out of memory");
		r->buf[r->nbuf++] = (ext){a, b};
	}
}

/* js_top_object's callback: one top-level member of the schedule; the
 * steps met before the header are read once it is complete. */
static hoff_status top_member(void *ctx, int k)
{
	reader *r = ctx;
	hoff_status st;
	if (k == K_STEPS) {
		st = read_steps(r);
	} else {
		st = js_top_value(&r->s, k, "hoffopt.schedule", &r->sc->version,
				  read_top, r);
	}
	if (st != HOFF_OK)
		return st;
	if (k < NKEYS)
		r->have[k] = true;
	if (hdr_ok(r) && r->nbuf) { /* steps came first */
		size_t pos = r->s.pos;
		for (size_t i = 0; i < r->nbuf && st == HOFF_OK; i++) {
			r->s.pos = r->buf[i].a;
			st = read_step(r);
		}
		r->s.pos = pos;
		r->nbuf = 0;
	}
	return st;
}

hoff_status hoff_sched_parse(const char *text, size_t len, const char *file,
			     const hoff_graph *g, hoff_sched **out,
			     hoff_err *e)
{
	reader r = {.g = g};
	hoff_status st;
	*out = NULL;
	js_init(&r.s, text, len, file, e ? e : &r.scratch);
	e = r.s.e;
	if (!(r.sc = hoff_sched_new())) {
		st = hoff_seterr(e, HOFF_ENOMEM, "out of memory");
		goto out;
	}
	static const int required[] = {K_FORMAT, K_VERSION, K_STEPS};
	if ((st = js_top_object(&r.s, top_keys, NKEYS, top_member, &r, r.have,
				required,
				sizeof required / sizeof *required)) != HOFF_OK)
		goto out;
	/* (v2) a v2 summary carries recompute_s, a v1 one must not */
	if (r.sc->has_summary && r.has_recompute_s != (r.sc->version >= 2)) {
		js_where w = {file, "summary", -1, NULL};
		st = js_fail(e, &w, HOFF_EINPUT,
			     r.has_recompute_s
				     ? "recompute_s is a version-2 field (the "
				       "file is version 1)"
				     : "recompute_s is required (version 2)");
		goto out;
	}
	st = hoff_sched_check(r.sc, g, file, e);
out:
	free(r.buf);
	js_free(&r.s);
	if (st == HOFF_EINPUT && r.sc && r.sc->graph && g->name &&
	    strcmp(r.sc->graph, g->name) != 0) { /* what explains the rest */
		size_t n = strlen(e->msg);
		snprintf(
			e->msg + n, sizeof e->msg - n,
			" (the schedule is for graph \"%.60s\", not \"%.60s\")",
			r.sc->graph, g->name);
	}
	if (st != HOFF_OK) {
		js_oneline(e);
		hoff_sched_free(r.sc);
	} else {
		*out = r.sc;
	}
	return st;
}

hoff_status hoff_sched_read(const char *path, const hoff_graph *g,
			    hoff_sched **out, hoff_err *e)
{
	char *buf;
	size_t len;
	*out = NULL;
	hoff_status st = hoff_slurp(path, &buf, &len, e);
	if (st != HOFF_OK)
		return st;
	st = hoff_sched_parse(buf, len,
			      strcmp(path, "-") == 0 ? "<stdin>" : path, g, out,
			      e);
	free(buf);
	return st;
}

/* ---- writer ---- */

void hoff_sched_print(const hoff_sched *s, const hoff_graph *g, FILE *f)
{
	const char *gname = s->graph ? s->graph : g->name;
	const bool v2 = hoff_sched_uses_v2(s);
	fputs(v2 ? "{\"format\": \"hoffopt.schedule\", \"version\": 2"
		 : "{\"format\": \"hoffopt.schedule\", \"version\": 1",
	      f);
	if (gname) {
		fputs(",\n \"graph\": ", f);
		hoff_json_string(f, gname);
	}
	if (s->policy) {
		fputs(",\n \"policy\": ", f);
		hoff_json_string(f, s->policy);
	}
	if (s->budget_bytes != HOFF_NONE)
		fprintf(f, ",\n \"budget_bytes\": %lld",
			(long long)s->budget_bytes);
	fputs(",\n \"steps\": [", f);
	for (int64_t i = 0; i < s->nsteps; i++) {
		const hoff_step *st = &s->step[i];
		fputs(i ? ",\n  " : "\n  ", f);
		switch (st->kind) {
		case HOFF_STEP_OP:
			HOFF_REQUIRE(st->id >= 0 && st->id < g->nops);
			fputs("{\"op\": ", f);
			hoff_json_string(f, g->op[st->id].id);
			break;
		case HOFF_STEP_PREFETCH:
		case HOFF_STEP_STORE:
			HOFF_REQUIRE(st->id >= 0 && st->id < g->ntensors);
			HOFF_REQUIRE(st->tier >= 0 && st->tier < g->ntiers);
			fputs(st->kind == HOFF_STEP_PREFETCH ? "{\"prefetch\": "
							     : "{\"store\": ",
			      f);
			hoff_json_string(f, g->tensor[st->id].id);
			fputs(st->kind == HOFF_STEP_PREFETCH ? ", \"from\": "
							     : ", \"to\": ",
			      f);
			hoff_json_string(f, g->tier[st->tier].name);
			break;
		case HOFF_STEP_RECOMPUTE:
			HOFF_REQUIRE(st->id >= 0 && st->id < g->nops);
			fputs("{\"recompute\": ", f);
			hoff_json_string(f, g->op[st->id].id);
			break;
		default:
			HOFF_REQUIRE(st->kind == HOFF_STEP_DETACH ||
				     st->kind == HOFF_STEP_DROP);
			HOFF_REQUIRE(st->id >= 0 && st->id < g->ntensors);
			fputs(st->kind == HOFF_STEP_DROP ? "{\"drop\": "
							 : "{\"detach\": ",
			      f);
			hoff_json_string(f, g->tensor[st->id].id);
			break;
		}
		putc('}', f);
	}
	fputs(s->nsteps ? "\n ]" : "]", f);
	if (s->has_summary) {
		const hoff_summary *sm = &s->summary;
		fprintf(f,
			",\n \"summary\": {\"peak_bytes\": %lld, "
			"\"makespan_s\": ",
			(long long)sm->peak_bytes);
		js_put_num17(f, hoff_s(sm->makespan_ps));
		fputs(", \"compute_s\": ", f);
		js_put_num17(f, hoff_s(sm->compute_ps));
		if (v2) {
			fputs(", \"recompute_s\": ", f);
			js_put_num17(f, hoff_s(sm->recompute_ps));
		}
		fputs(", \"stall_s\": ", f);
		js_put_num17(f, hoff_s(sm->stall_ps));
		fprintf(f, ", \"h2d_bytes\": %lld, \"d2h_bytes\": %lld}",
			(long long)sm->h2d_bytes, (long long)sm->d2h_bytes);
	}
	fputs("\n}\n", f);
}

hoff_status hoff_sched_write(const hoff_sched *s, const hoff_graph *g,
			     const char *path, hoff_err *e)
{
	hoff_outfile o;
	hoff_status st = hoff_outfile_open(&o, path, e);
	if (st != HOFF_OK)
		return st;
	hoff_sched_print(s, g, o.f);
	return hoff_outfile_commit(&o, e);
}
