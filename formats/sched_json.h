/* sched_json.h: schedule.json (FORMAT.md) reader and writer. Names are
 * resolved against the graph; an unknown op, tensor or tier, or ops
 * missing, repeated or out of order, are HOFF_EINPUT (exit 2). */
#ifndef HOFF_SCHED_JSON_H
#define HOFF_SCHED_JSON_H

#include <stdio.h>

#include "sched.h"

/* Parses text against g into *out (caller frees). Summary times are read
 * back to ps. HOFF_EINPUT/HOFF_ENOMEM with the message in e. */
hoff_status hoff_sched_parse(const char *text, size_t len, const char *file,
			     const hoff_graph *g, hoff_sched **out,
			     hoff_err *e);

/* Reads the file at path ("-" for stdin) as hoff_sched_parse. */
hoff_status hoff_sched_read(const char *path, const hoff_graph *g,
			    hoff_sched **out, hoff_err *e);

/* Writes s (with s->summary, which the caller filled from the simulator)
 * to path ("-" for stdout) through a temporary file renamed into place.
 * graph is s->graph, else g->name; budget_bytes unless HOFF_NONE; the
 * summary when s->has_summary. Times are ps / 1e12 with 17 significant
 * digits. HOFF_EIO on failure. */
hoff_status hoff_sched_write(const hoff_sched *s, const hoff_graph *g,
			     const char *path, hoff_err *e);

/* Prints s as schedule.json to f, as hoff_sched_write (the caller checks
 * ferror). */
void hoff_sched_print(const hoff_sched *s, const hoff_graph *g, FILE *f);

#endif
