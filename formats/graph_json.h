/* graph_json.h: graph.json (FORMAT.md) reader and writer. The only graph
 * code that sees cJSON. The reader rejects everything FORMAT.md lists with
 * one line "file: field "id": reason"; it never crashes or reads out of
 * bounds, whatever the bytes. */
#ifndef HOFF_GRAPH_JSON_H
#define HOFF_GRAPH_JSON_H

#include <stdio.h>

#include "graph.h"

/* Parses len bytes of text into *out (caller frees with hoff_graph_free);
 * `file` names the input in messages. HOFF_EINPUT or HOFF_ENOMEM with the
 * message in e; *out is NULL then. */
hoff_status hoff_graph_parse(const char *text, size_t len, const char *file,
			     hoff_graph **out, hoff_err *e);

/* hoff_graph_parse with the tensors and ops arrays read in `chunks`
 * pieces at once (1: in order; 0: as hoff_graph_parse does, one per
 * thread where each has at least 4 MiB). The graph, or the message, is
 * the same whatever the count: tests compare them. */
hoff_status hoff_graph_parse_chunks(const char *text, size_t len,
				    const char *file, int chunks,
				    hoff_graph **out, hoff_err *e);

/* Reads and parses the file at path ("-" for stdin); HOFF_EIO when it cannot
 * be read, else as hoff_graph_parse. */
hoff_status hoff_graph_read(const char *path, hoff_graph **out, hoff_err *e);

/* Writes g as graph.json to path ("-" for stdout) through a temporary file
 * renamed into place; every field read is written back (meta verbatim).
 * HOFF_EIO on failure, and path is left untouched. */
hoff_status hoff_graph_write(const hoff_graph *g, const char *path,
			     hoff_err *e);

/* Prints g as graph.json to f (no error check: the caller checks ferror). */
void hoff_graph_print(const hoff_graph *g, FILE *f);

#endif
