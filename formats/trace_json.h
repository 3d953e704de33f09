/* trace_json.h: Chrome trace-event writer (Perfetto, chrome://tracing):
 * one track for compute (ops and stalls), one per DMA channel, and a
 * counter track of device memory in use. */
#ifndef HOFF_TRACE_JSON_H
#define HOFF_TRACE_JSON_H

#include <stdio.h>

#include "graph.h"
#include "timeline.h"

/* Prints tl as a trace to f (the caller checks f for write errors). */
void hoff_trace_print(const hoff_graph *g, const hoff_timeline *tl, FILE *f);

/* Writes tl to path through a temporary file renamed into place.
 * HOFF_EIO on failure. */
hoff_status hoff_trace_write(const hoff_graph *g, const hoff_timeline *tl,
			     const char *path, hoff_err *e);

#endif
