/* testutil_gen.c: the helpers of testutil.h that build graphs with src/gen
 * (library hoff_testutil_gen, which links hoff_gen). */
#include "testutil.h"

#include "models.h"
#include "synth.h"

/* The end of tu_model and tu_synth: st OK and a graph, or the test
 * fails with e's message. */
static hoff_graph *built(hoff_status st, hoff_graph *g, const hoff_err *e)
{
	tu_ok(st, e, "build");
	assert_non_null(g);
	return g;
}

hoff_graph *tu_model(const hoff_model_opts *o)
{
	hoff_graph *g = NULL;
	hoff_err e = {{0}};
	hoff_status st = hoff_model_build(o, &g, &e);
	return built(st, g, &e);
}

hoff_graph *tu_synth(const hoff_synth_opts *o)
{
	hoff_graph *g = NULL;
	hoff_err e = {{0}};
	hoff_status st = hoff_synth_build(o, &g, &e);
	return built(st, g, &e);
}
