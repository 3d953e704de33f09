/* test_build.c: the graph builder under the generators (src/gen/build.c)
 * on graphs of two or three ops worked out by hand: lists, homes, kinds,
 * roofline bytes summed from the lists (an update twice), the optional
 * fields written only when asked, the op limit that cuts the stream and
 * turns the last op's outputs into graph outputs, the first failure that
 * sticks, and the splitmix64 stream. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "testutil.h"

/* Two ops: "a" reads weight w (100 B, device) and makes x (50 B); "b"
 * reads x, updates kv (30 B, tier 0) and makes y (20 B). */
static void two_ops(hoff_build *b, int32_t *t)
{
	const char *mm = hoff_build_intern(b, "%s", "matmul");
	assert_true(hoff_build_op(b, mm, 0, "l%d.%s", 0, "a"));
	assert_string_equal(b->id, "l0.a");
	t[0] = hoff_build_tensor(b, 100, HOFF_KIND_WEIGHT, HOFF_DEVICE, "w");
	hoff_build_use(b, HOFF_USE_IN, t[0]);
	hoff_build_use(b, HOFF_USE_IN, HOFF_NONE); /* nothing */
	t[1] = hoff_build_out(b, 50, HOFF_KIND_ACTIVATION, "%s.x", b->id);
	hoff_build_cost(b, 0, -1);
	assert_true(hoff_build_op(b, mm, 1, "l1.b"));
	hoff_build_use(b, HOFF_USE_IN, t[1]);
	t[2] = hoff_build_tensor(b, 30, HOFF_KIND_KV, 0, "kv");
	hoff_build_use(b, HOFF_USE_UPD, t[2]);
	t[3] = hoff_build_out(b, 20, HOFF_KIND_ACTIVATION, "y");
	hoff_build_cost(b, -1, -1);
	hoff_build_time(b, 2.5e-6);
	hoff_build_workspace(b, 64);
}

static void test_lists_and_fields(void **state)
{
	(void)state;
	hoff_err e = {{0}};
	hoff_build b;
	assert_int_equal(hoff_build_begin(&b, "test", 0, &e), HOFF_OK);
	hoff_build_device(&b, "gpu", 1000, 1e12, 1e11, -1);
	const hoff_build_tier host = {"host", HOFF_UNLIMITED, 1e9, 2e9, 1e-6, 1,
				      1};
	assert_int_equal(hoff_build_tier_add(&b, &host, false), 0);
	hoff_build_set(&b, HOFF_BUILD_NAME, "g-%d", 2);
	hoff_build_set(&b, HOFF_BUILD_META, "{\"n\":%d}", 2);
	int32_t t[4];
	two_ops(&b, t);
	assert_int_equal(hoff_build_finish(&b), HOFF_OK);
	hoff_graph *g = hoff_build_take(&b);
	hoff_build_free(&b); /* taken: frees nothing */

	assert_string_equal(g->name, "g-2");
	assert_string_equal(g->meta, "{\"n\":2}");
	assert_string_equal(g->device.name, "gpu");
	assert_false(g->device.has_overhead);
	assert_int_equal(g->tier[0].capacity_bytes, HOFF_UNLIMITED);
	assert_true(g->tier[0].d2h_Bps == 2e9 && g->tier[0].has_latency);
	assert_int_equal(g->nops, 2);
	assert_string_equal(g->tensor[t[1]].id, "l0.a.x");
	/* Homes: device, none for produced tensors, tier 0. */
	assert_int_equal(g->tensor[t[0]].home, HOFF_DEVICE);
	assert_true(g->tensor[t[0]].flags & HOFF_T_HAS_HOME);
	assert_false(g->tensor[t[1]].flags & HOFF_T_HAS_HOME);
	assert_int_equal(g->tensor[t[2]].home, 0);
	assert_int_equal(g->tensor[t[3]].kind, HOFF_KIND_ACTIVATION);
	/* Op a: 100 in + 50 out; flops 0 written. */
	const hoff_op *a = &g->op[0], *o = &g->op[1];
	assert_string_equal(a->kind, "matmul");
	assert_true(a->bytes_accessed == 150.0);
	assert_true(a->flags & HOFF_O_HAS_FLOPS);
	assert_false(a->flags & (HOFF_O_HAS_TIME | HOFF_O_HAS_WORKSPACE));
	/* Op b: 50 in + 2 * 30 updated + 20 out; no flops. */
	assert_true(o->bytes_accessed == 130.0);
	assert_false(o->flags & HOFF_O_HAS_FLOPS);
	assert_int_equal(o->layer, 1);
	assert_true(o->time_s == 2.5e-6);
	assert_int_equal(o->workspace_bytes, 64);
	assert_int_equal(g->upd_off[2] - g->upd_off[1], 1);
	hoff_graph_free(g);
}

/* With limit 1 the second op is refused without a failure, and the
 * first op's output is a graph output. */
static void test_limit(void **state)
{
	(void)state;
	hoff_err e = {{0}};
	hoff_build b;
	assert_int_equal(hoff_build_begin(&b, "test", 1, &e), HOFF_OK);
	hoff_build_set(&b, HOFF_BUILD_NAME, "cut");
	assert_true(hoff_build_op(&b, NULL, 0, "a"));
	assert_true(b.last);
	int32_t x = hoff_build_out(&b, 8, HOFF_KIND_ACTIVATION, "x");
	hoff_build_time(&b, 1e-6);
	assert_false(hoff_build_op(&b, NULL, 0, "b"));
	assert_int_equal(b.st, HOFF_OK);
	assert_int_equal(hoff_build_finish(&b), HOFF_OK);
	assert_int_equal(b.g->nops, 1);
	assert_int_equal(b.g->tensor[x].kind, HOFF_KIND_OUTPUT);
	hoff_build_free(&b);
}

/* An id too long for the builder fails once; every later call does
 * nothing and finish returns that failure. */
static void test_sticky_failure(void **state)
{
	(void)state;
	hoff_err e = {{0}};
	hoff_build b;
	assert_int_equal(hoff_build_begin(&b, "synth", 0, &e), HOFF_OK);
	char longid[400];
	memset(longid, 'x', sizeof longid - 1);
	longid[sizeof longid - 1] = '\0';
	assert_true(hoff_build_op(&b, NULL, 0, "a"));
	assert_int_equal(hoff_build_tensor(&b, 4, HOFF_KIND_INPUT, HOFF_DEVICE,
					   "%s", longid),
			 HOFF_NONE);
	assert_int_equal(b.st, HOFF_EINPUT);
	assert_string_equal(e.msg, "synth: id too long");
	assert_false(hoff_build_op(&b, NULL, 0, "b"));
	assert_int_equal(hoff_build_out(&b, 4, HOFF_KIND_ACTIVATION, "y"),
			 HOFF_NONE);
	assert_null(hoff_build_intern(&b, "k"));
	assert_int_equal(b.g->nops, 1);
	assert_int_equal(b.g->ntensors, 0);
	assert_int_equal(hoff_build_finish(&b), HOFF_EINPUT);
	hoff_build_free(&b);
	assert_null(b.g);
}

/* splitmix64 from state 0: its published first outputs. */
static void test_rand(void **state)
{
	(void)state;
	uint64_t s = 0;
	assert_true(hoff_build_rand(&s) == 0xe220a8397b1dcdafu);
	assert_true(hoff_build_rand(&s) == 0x6e789e6aa1b965f4u);
	assert_true(hoff_build_rand(&s) == 0x06c45d188009454fu);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lists_and_fields),
		cmocka_unit_test(test_limit),
		cmocka_unit_test(test_sticky_failure),
		cmocka_unit_test(test_rand),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
