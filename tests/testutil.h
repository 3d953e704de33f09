/* testutil.h: helpers shared by the cmocka programs — graphs and schedules
 * from JSON text, files, and a one-call simulation. Each helper fails the
 * running test (cmocka assert) rather than returning an error. */
#ifndef HOFF_TESTUTIL_H
#define HOFF_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "graph.h"
#include "sched.h"
#include "sim.h"

/* FORMAT.md's example graph, verbatim. */
extern const char tu_example_graph[];

/* Reads a whole file (caller frees); NULL when missing. */
char *tu_slurp(const char *path, size_t *len);
/* Parses graph JSON text, failing the test on error (caller frees). */
hoff_graph *tu_graph(const char *json);
/* Parses schedule JSON text against g, failing the test on error. */
hoff_sched *tu_sched(const hoff_graph *g, const char *json);
/* Simulates with an explicit budget (HOFF_NONE: the default rules). */
hoff_sim_result tu_sim(const hoff_graph *g, const hoff_sched *s,
		       int64_t budget);
/* Directory of ../shared (from HOFF_SHARED_DIR), or NULL. */
const char *tu_shared_dir(void);
/* Directory of the source tree (from HOFF_SRC_DIR), or NULL. */
const char *tu_src_dir(void);
/* True when r lists a violation of `rule`. */
int tu_has_rule(const hoff_sim_result *r, int rule);

#endif
