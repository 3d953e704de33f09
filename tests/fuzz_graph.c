/* fuzz_graph.c: fuzz entry point for the graph.json reader (libFuzzer, or
 * tests/fuzz_driver.c). Properties: no crash or read past the input (the
 * input is copied to an exact-size buffer, so ASan sees any overread); a
 * rejection leaves no graph and one line of message; an accepted graph
 * prints, reads back, and prints again to the same bytes; read in three
 * chunks (graph_json.c), the input gives the same graph or message. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "graph_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *print(const hoff_graph *g, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	if (!f)
		abort();
	hoff_graph_print(g, f);
	if (fclose(f) != 0)
		abort();
	return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_copy(data, size);
	hoff_graph *g = NULL, *h = NULL;
	hoff_err e;
	if (!text)
		return 0;
	hoff_graph *c = NULL;
	hoff_err ce;
	hoff_status st = hoff_graph_parse(text, size, "fuzz.json", &g, &e);
	hoff_status cst =
		hoff_graph_parse_chunks(text, size, "fuzz.json", 3, &c, &ce);
	free(text);
	if (cst != st || (st != HOFF_OK && strcmp(e.msg, ce.msg) != 0)) {
		fprintf(stderr, "in chunks: %d %s\nin order: %d %s\n", cst,
			cst != HOFF_OK ? ce.msg : "", st,
			st != HOFF_OK ? e.msg : "");
		abort();
	}
	if (st != HOFF_OK) {
		fuzz_check_rejection(st, g != NULL, &e);
		return 0;
	}
	size_t n1, n2, n3;
	char *t1 = print(g, &n1);
	char *t3 = print(c, &n3);
	if (n1 != n3 || memcmp(t1, t3, n1) != 0) {
		fprintf(stderr, "in chunks differs:\n%s\n%s\n", t1, t3);
		abort();
	}
	free(t3);
	hoff_graph_free(c);
	if (hoff_graph_parse(t1, n1, "rt.json", &h, &e) != HOFF_OK) {
		fprintf(stderr, "written graph rejected: %s\n%s\n", e.msg, t1);
		abort();
	}
	char *t2 = print(h, &n2);
	if (n1 != n2 || memcmp(t1, t2, n1) != 0) {
		fprintf(stderr, "round trip differs:\n%s\n%s\n", t1, t2);
		abort();
	}
	free(t1);
	free(t2);
	hoff_graph_free(h);
	hoff_graph_free(g);
	return 0;
}
