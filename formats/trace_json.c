/* trace_json.c: a timeline as Chrome trace events (Perfetto,
 * chrome://tracing). pid 1; tid 1 is compute (ops, stalls as events of
 * their own naming the tensor awaited, detaches as instants; (v2)
 * recomputes as events named "recompute OP", drops as instants), tier i's
 * channels are tids 2 + 2i (h2d) and 3 + 2i (d2h), named by "thread_name"
 * metadata when they carry a transfer; device memory is a counter track.
 * Times are written in microseconds as exact decimals of the integer
 * picoseconds (never NaN or exponents), so the file is valid JSON. */
#include "trace_json.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"

/* ps as microseconds, exactly: integer part, then up to 6 decimals. */
static void put_us(FILE *f, int64_t ps)
{
	uint64_t m = ps < 0 ? (uint64_t)0 - (uint64_t)ps : (uint64_t)ps;
	uint64_t frac = m % 1000000;
	fprintf(f, "%s%" PRIu64, ps < 0 ? "-" : "", m / 1000000);
	if (frac) {
		char d[8];
		int n = 6;
		snprintf(d, sizeof d, "%06" PRIu64, frac);
		while (d[n - 1] == '0')
			n--;
		fprintf(f, ".%.*s", n, d);
	}
}

static void put_thread(FILE *f, int tid, const char *name,
		       const char *suffix)
{
	fprintf(f, ",\n{\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"name\":"
		   "\"thread_name\",\"args\":{\"name\":",
		tid);
	char *full = suffix ? malloc(strlen(name) + 5) : NULL;
	if (full) /* "<tier> h2d"; on OOM the bare name will do */
		sprintf(full, "%s %s", name, suffix);
	hoff_json_string(f, full ? full : name);
	free(full);
	fprintf(f, "}},\n{\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"name\":"
		   "\"thread_sort_index\",\"args\":{\"sort_index\":%d}}",
		tid, tid);
}

static void put_event(FILE *f, const hoff_graph *g, const hoff_event *ev)
{
	const char *name, *cat;
	int tid;
	HOFF_REQUIRE(ev->end_ps >= ev->start_ps);
	if (ev->kind == HOFF_EV_DETACH || ev->kind == HOFF_EV_DROP) {
		HOFF_REQUIRE(ev->id >= 0 && ev->id < g->ntensors);
		fputs(ev->kind == HOFF_EV_DROP
			      ? ",\n{\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":1,"
				"\"cat\":\"drop\",\"name\":"
			      : ",\n{\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":1,"
				"\"cat\":\"detach\",\"name\":",
		      f);
		hoff_json_string(f, g->tensor[ev->id].id);
		fputs(",\"ts\":", f);
		put_us(f, ev->start_ps);
		fprintf(f, ",\"args\":{\"step\":%lld,\"bytes\":%lld}}",
			(long long)ev->step,
			(long long)g->tensor[ev->id].bytes);
		return;
	}
	char *re = NULL; /* "recompute <op>" */
	switch (ev->kind) {
	case HOFF_EV_OP:
	case HOFF_EV_STALL:
		HOFF_REQUIRE(ev->id >= 0 && ev->id < g->nops);
		tid = 1;
		name = ev->kind == HOFF_EV_OP ? g->op[ev->id].id : "stall";
		cat = ev->kind == HOFF_EV_OP ? "op" : "stall";
		break;
	case HOFF_EV_RECOMPUTE:
		HOFF_REQUIRE(ev->id >= 0 && ev->id < g->nops);
		tid = 1;
		name = g->op[ev->id].id;
		cat = "recompute";
		re = malloc(strlen(name) + 11);
		if (re) /* on OOM the bare name will do */
			sprintf(re, "recompute %s", name);
		break;
	default:
		HOFF_REQUIRE(ev->kind == HOFF_EV_PREFETCH ||
			     ev->kind == HOFF_EV_STORE);
		HOFF_REQUIRE(ev->id >= 0 && ev->id < g->ntensors);
		HOFF_REQUIRE(ev->tier >= 0 && ev->tier < g->ntiers);
		tid = 2 + 2 * ev->tier + (ev->kind == HOFF_EV_STORE);
		name = g->tensor[ev->id].id;
		cat = ev->kind == HOFF_EV_PREFETCH ? "prefetch" : "store";
		break;
	}
	fprintf(f, ",\n{\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"cat\":\"%s\","
		   "\"name\":",
		tid, cat);
	const bool awaits = ev->kind == HOFF_EV_STALL && ev->await >= 0 &&
			    ev->await < g->ntensors;
	char *full = awaits ? malloc(strlen(g->tensor[ev->await].id) + 8)
			    : NULL;
	if (full) /* "stall: <tensor>"; on OOM the bare name will do */
		sprintf(full, "stall: %s", g->tensor[ev->await].id);
	hoff_json_string(f, full ? full : re ? re : name);
	free(full);
	free(re);
	fputs(",\"ts\":", f);
	put_us(f, ev->start_ps);
	fputs(",\"dur\":", f);
	put_us(f, ev->end_ps - ev->start_ps);
	fprintf(f, ",\"args\":{\"step\":%lld", (long long)ev->step);
	if (ev->kind == HOFF_EV_STALL) {
		fputs(",\"op\":", f);
		hoff_json_string(f, g->op[ev->id].id);
		if (awaits) {
			fputs(",\"awaits\":", f);
			hoff_json_string(f, g->tensor[ev->await].id);
		}
	} else if (ev->kind != HOFF_EV_OP && ev->kind != HOFF_EV_RECOMPUTE) {
		fprintf(f, ",\"bytes\":%lld",
			(long long)g->tensor[ev->id].bytes);
	}
	fputs("}}", f);
}

void hoff_trace_print(const hoff_graph *g, const hoff_timeline *tl, FILE *f)
{
	fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n"
	      "{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\","
	      "\"args\":{\"name\":",
	      f);
	hoff_json_string(f, g->name ? g->name : "hoffopt");
	fputs("}}", f);
	put_thread(f, 1, "compute", NULL);
	/* A channel's track only where it carries a transfer: an idle d2h
	 * link drawn as an empty row says nothing. */
	for (int32_t i = 0; i < g->ntiers; i++) {
		bool used[2] = {false, false};
		for (size_t k = 0; k < tl->nev; k++)
			if (tl->ev[k].tier == i &&
			    (tl->ev[k].kind == HOFF_EV_PREFETCH ||
			     tl->ev[k].kind == HOFF_EV_STORE))
				used[tl->ev[k].kind == HOFF_EV_STORE] = true;
		if (used[0])
			put_thread(f, 2 + 2 * i, g->tier[i].name, "h2d");
		if (used[1])
			put_thread(f, 3 + 2 * i, g->tier[i].name, "d2h");
	}
	for (size_t i = 0; i < tl->nev; i++)
		put_event(f, g, &tl->ev[i]);
	for (size_t i = 0; i < tl->nmem; i++) {
		fputs(",\n{\"ph\":\"C\",\"pid\":1,\"name\":\"device memory\","
		      "\"ts\":",
		      f);
		put_us(f, tl->mem[i].t_ps);
		fprintf(f, ",\"args\":{\"bytes\":%lld}}",
			(long long)tl->mem[i].bytes);
	}
	fputs("\n]}\n", f);
}

hoff_status hoff_trace_write(const hoff_graph *g, const hoff_timeline *tl,
			     const char *path, hoff_err *e)
{
	hoff_outfile o;
	hoff_status st = hoff_outfile_open(&o, path, e);
	if (st != HOFF_OK)
		return st;
	hoff_trace_print(g, tl, o.f);
	return hoff_outfile_commit(&o, e);
}
