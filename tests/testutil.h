/* testutil.h: helpers shared by the cmocka programs — graphs and schedules
 * from JSON text, files, and a one-call simulation. Each helper fails the
 * running test (cmocka assert) rather than returning an error.
 * The library hoff_testutil (testutil.c) needs only the core's headers: a
 * core test that links it sees no other folder's (it reads JSON through
 * hoff_formats, linked privately). tu_model and tu_synth are in
 * hoff_testutil_gen (testutil_gen.c), which links hoff_gen: a test that
 * calls them links it and includes models.h or synth.h itself. */
#ifndef HOFF_TESTUTIL_H
#define HOFF_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <cjson/cJSON.h>

#include "graph.h"
#include "sched.h"
#include "sim.h"

struct hoff_model_opts; /* models.h (src/gen) */
struct hoff_synth_opts; /* synth.h (src/gen) */

/* FORMAT.md's example graph, verbatim. */
extern const char tu_example_graph[];

/* Fails the test unless st is HOFF_OK, printing "what: " (what not
 * NULL) and e's message first. */
void tu_ok(hoff_status st, const hoff_err *e, const char *what);
/* Reads a whole file (caller frees); NULL when missing. */
char *tu_slurp(const char *path, size_t *len);
/* Parses graph JSON text, failing the test on error (caller frees). */
hoff_graph *tu_graph(const char *json);
/* Parses schedule JSON text against g, failing the test on error. */
hoff_sched *tu_sched(const hoff_graph *g, const char *json);
/* Builds a model-shaped graph, failing the test on error (caller frees;
 * testutil_gen.c). */
hoff_graph *tu_model(const struct hoff_model_opts *o);
/* Builds a synthetic graph, failing the test on error (caller frees;
 * testutil_gen.c). */
hoff_graph *tu_synth(const struct hoff_synth_opts *o);
/* Simulates with an explicit budget (HOFF_NONE: the default rules). */
hoff_sim_result tu_sim(const hoff_graph *g, const hoff_sched *s,
		       int64_t budget);
/* tu_sim without a budget, which must be valid with peak_bytes and
 * makespan_ps (caller frees the result). */
hoff_sim_result tu_sim_expect(const hoff_graph *g, const hoff_sched *s,
			      int64_t peak_bytes, int64_t makespan_ps);
/* Directory of ../shared (from HOFF_SHARED_DIR), or NULL. */
const char *tu_shared_dir(void);
/* Directory of the source tree (from HOFF_SRC_DIR), or NULL. */
const char *tu_src_dir(void);
/* True when r lists a violation of `rule`. */
int tu_has_rule(const hoff_sim_result *r, int rule);
/* data/NAME of the source tree, parsed (caller frees); NULL when there
 * is no source tree or no such file. */
hoff_graph *tu_data_graph(const char *name);
/* tu_data_graph, or the running test skipped when it is NULL. */
hoff_graph *tu_data_graph_or_skip(const char *name);
/* data/NAME in its FORMAT version-1 form (HOFF_DATA_V1_DIR/NAME, written
 * by the ctest fixture data_v1: data/regen.sh --v1, the bytes the
 * ../shared/witness entries name), parsed; the running test skipped
 * without it (a test program run outside ctest). */
hoff_graph *tu_data_v1_graph_or_skip(const char *name);
/* Peak of g's no-offload schedule, simulated without a budget. */
int64_t tu_noffload_peak(const hoff_graph *g);

/* Calls fn(name, vector, arg) on each vector of ../shared/conformance
 * whose file name ends with `suffix` (".json": all), in name order;
 * returns the sum of what fn returned (e.g. the vectors that differ) and
 * the number visited in *n (n may be NULL). Skips the running test when
 * the directory is missing; fails it when no vector matches. */
typedef int (*tu_vector_fn)(const char *name, const cJSON *v, void *arg);
int tu_vectors(const char *suffix, tu_vector_fn fn, void *arg, int *n);
/* As tu_vectors, on the vectors of ../shared/SUB (e.g. "conformance/v2"). */
int tu_vectors_in(const char *sub, const char *suffix, tu_vector_fn fn,
		  void *arg, int *n);

#endif
