/* test_candidates.c: the candidate intervals (src/candidates.c) on a hand
 * graph whose every interval is worked out below, and their invariants on
 * data/'s graphs. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis.h"
#include "candidates.h"
#include "testutil.h"

#define MS 1000000000LL /* ps */
#define US 1000000LL

/* Eight ops of 1 ms. Two tiers: host (index 0: h2d 1 GB/s, d2h 0.5 GB/s,
 * 1 us a transfer), the store tier here; disk (index 1: 0.1 GB/s both
 * ways, no latency). Tensors and their touches (r read, u update, p
 * produced):
 *   x     input, device          r0                (lifetime 1: stays)
 *   w     weight, disk, 2 MB     r0 r3 r4 u6       (persistent)
 *   k     kv, device, 1 MB       u1 r3 u5 r7       (persistent)
 *   c     optimizer, host, 1 KB  u1 r4             (small, updated)
 *   a     activation, 4 MB       p0 r2 r7
 *   n     weight, host, 1 KB     r2 r6             (small, clean)
 *   s     activation, 1 MB       p2 r3             (lifetime 2: stays)
 *   f     activation, 4 MB       p1 r6             (offload false)
 *   e     weight, host, 1 MB     r5                (offload false)
 *   loss  output, 2 MB           p6                (no reader)
 *   idle  weight, host, 1 MB     -                 (never used) */
static const char g_hand[] =
	"{\"format\": \"hoffopt.graph\", \"version\": 1, \"name\": \"hand\","
	" \"machine\": {\"device\": {\"memory_bytes\": 100000000},"
	" \"tiers\": [{\"name\": \"host\", \"h2d_Bps\": 1e9, \"d2h_Bps\": 5e8,"
	" \"latency_s\": 1e-6},"
	" {\"name\": \"disk\", \"h2d_Bps\": 1e8, \"d2h_Bps\": 1e8}]},"
	" \"tensors\": ["
	"{\"id\": \"x\", \"bytes\": 1000000, \"kind\": \"input\"},"
	"{\"id\": \"w\", \"bytes\": 2000000, \"kind\": \"weight\","
	" \"home\": \"disk\"},"
	"{\"id\": \"k\", \"bytes\": 1000000, \"kind\": \"kv\"},"
	"{\"id\": \"c\", \"bytes\": 1000, \"kind\": \"optimizer\","
	" \"home\": \"host\"},"
	"{\"id\": \"a\", \"bytes\": 4000000, \"kind\": \"activation\"},"
	"{\"id\": \"n\", \"bytes\": 1000, \"kind\": \"weight\","
	" \"home\": \"host\"},"
	"{\"id\": \"s\", \"bytes\": 1000000, \"kind\": \"activation\"},"
	"{\"id\": \"f\", \"bytes\": 4000000, \"kind\": \"activation\","
	" \"offload\": false},"
	"{\"id\": \"e\", \"bytes\": 1000000, \"kind\": \"weight\","
	" \"home\": \"host\", \"offload\": false},"
	"{\"id\": \"loss\", \"bytes\": 2000000, \"kind\": \"output\"},"
	"{\"id\": \"idle\", \"bytes\": 1000000, \"kind\": \"weight\","
	" \"home\": \"host\"}],"
	" \"ops\": ["
	"{\"id\": \"op0\", \"inputs\": [\"x\", \"w\"], \"outputs\": [\"a\"],"
	" \"time_s\": 0.001},"
	"{\"id\": \"op1\", \"updates\": [\"k\", \"c\"], \"outputs\": [\"f\"],"
	" \"time_s\": 0.001},"
	"{\"id\": \"op2\", \"inputs\": [\"a\", \"n\"], \"outputs\": [\"s\"],"
	" \"time_s\": 0.001},"
	"{\"id\": \"op3\", \"inputs\": [\"w\", \"s\", \"k\"], \"time_s\": 0.001},"
	"{\"id\": \"op4\", \"inputs\": [\"w\", \"c\"], \"time_s\": 0.001},"
	"{\"id\": \"op5\", \"inputs\": [\"e\"], \"updates\": [\"k\"],"
	" \"time_s\": 0.001},"
	"{\"id\": \"op6\", \"inputs\": [\"f\", \"n\"], \"updates\": [\"w\"],"
	" \"outputs\": [\"loss\"], \"time_s\": 0.001},"
	"{\"id\": \"op7\", \"inputs\": [\"a\", \"k\"], \"time_s\": 0.001}]}";

/* One expected interval: tensor id, kind, a, b, tier, bytes, fetch and
 * store ps, seg (in the list's numbering). */
typedef struct want {
	const char *t;
	int kind, a, b, tier;
	int64_t bytes, fetch_ps, store_ps;
	int seg;
} want;

enum { S = HOFF_CAND_START, C = HOFF_CAND_CLEAN, D = HOFF_CAND_DIRTY };

/* The fetch and store times, by hand: host 1 us + bytes / 1e9 B/s in,
 * 1 us + bytes / 5e8 B/s out; disk bytes / 1e8 B/s each way. */
#define W_DISK	 (20 * MS)     /* 2 MB from or to disk */
#define K_IN	 (1 * MS + US) /* 1 MB from host */
#define K_OUT	 (2 * MS + US) /* 1 MB to host */
#define SMALL_IN (2 * US)      /* 1 KB from host: 1 us + 1 us */
#define A_IN	 (4 * MS + US) /* 4 MB from host */
#define A_OUT	 (8 * MS + US) /* 4 MB to host */
#define LOSS_OUT (4 * MS + US) /* 2 MB to host */

/* w: fetched from disk before op0; clean until op6 updates it: the gap
 * 0..3, none between r3 and r4, the gap 4..6, then its persistent tail,
 * dirty, stored. Intervals 0 to 3 under every rule below. */
static const want rows_w[] = {
	{"w", S, -1, 0, 1, 2000000, W_DISK, 0, 0},
	{"w", C, 0, 3, 1, 2000000, W_DISK, 0, 1},
	{"w", C, 4, 6, 1, 2000000, W_DISK, 0, 2},
	{"w", D, 6, 8, 1, 2000000, 0, W_DISK, 3},
};

/* k: on the device from the start, so dirty throughout; its dirty
 * segments break after each update (op1, op5); no tail (r7 is the last
 * op). Intervals 4 to 7 with a store tier. */
static const want rows_k[] = {
	{"k", D, -1, 1, 0, 1000000, K_IN, K_OUT, 4},
	{"k", D, 1, 3, 0, 1000000, K_IN, K_OUT, 5},
	{"k", D, 3, 5, 0, 1000000, K_IN, K_OUT, 5},
	{"k", D, 5, 7, 0, 1000000, K_IN, K_OUT, 7},
};

/* After w and k, small below 10 KB (c and n are small): c_small, then
 * rest_small. */
static const want c_small[] = {
	/* c: small and dirty after u1: its START only */
	{"c", S, -1, 1, 0, 1000, SMALL_IN, 0, 8},
};
static const want rest_small[] = {
	/* a: one dirty segment, no tail (not persistent) */
	{"a", D, 0, 2, 0, 4000000, A_IN, A_OUT, 9},
	{"a", D, 2, 7, 0, 4000000, A_IN, A_OUT, 9},
	/* n: small and clean: its START and the free move, the tail */
	{"n", S, -1, 2, 0, 1000, SMALL_IN, 0, 11},
	{"n", C, 6, 8, 0, 1000, 0, 0, 12},
	/* e: offload false, fetched all the same */
	{"e", S, -1, 5, 0, 1000000, K_IN, 0, 13},
	/* loss: its tail after its producer */
	{"loss", D, 6, 8, 0, 2000000, 0, LOSS_OUT, 14},
};

/* After w and k, no tensor small: c and n get their gaps too. */
static const want rest_all[] = {
	/* c: 1 KB out to host is 1 us + 2 us */
	{"c", S, -1, 1, 0, 1000, SMALL_IN, 0, 8},
	{"c", D, 1, 4, 0, 1000, SMALL_IN, 3 * US, 9},
	{"c", D, 4, 8, 0, 1000, 0, 3 * US, 9},
	{"a", D, 0, 2, 0, 4000000, A_IN, A_OUT, 11},
	{"a", D, 2, 7, 0, 4000000, A_IN, A_OUT, 11},
	{"n", S, -1, 2, 0, 1000, SMALL_IN, 0, 13},
	{"n", C, 2, 6, 0, 1000, SMALL_IN, 0, 14},
	{"n", C, 6, 8, 0, 1000, 0, 0, 15},
	{"e", S, -1, 5, 0, 1000000, K_IN, 0, 16},
	{"loss", D, 6, 8, 0, 2000000, 0, LOSS_OUT, 17},
};

/* After w, with no store tier: only the tier-homed tensors move (from
 * their homes). */
static const want rest_no_tier[] = {
	{"c", S, -1, 1, 0, 1000, SMALL_IN, 0, 4},
	{"n", S, -1, 2, 0, 1000, SMALL_IN, 0, 5},
	{"n", C, 6, 8, 0, 1000, 0, 0, 6},
	{"e", S, -1, 5, 0, 1000000, K_IN, 0, 7},
};

/* The expected list: parts one after the other; a part's segs are
 * seg_shift on from its rows' (SHIFTED: the same rows after one more
 * segment before them). */
typedef struct part {
	const want *w;
	size_t n;
	int seg_shift;
} part;
#define PART(x)	      ((part){x, sizeof x / sizeof *x, 0})
#define SHIFTED(x, k) ((part){x, sizeof x / sizeof *x, k})

static void check_list(const hoff_graph *g, const hoff_cand_rule *r,
		       const part *parts, size_t nparts)
{
	want w[32];
	size_t nw = 0;
	for (size_t p = 0; p < nparts; p++)
		for (size_t j = 0; j < parts[p].n; j++) {
			assert_true(nw < sizeof w / sizeof *w);
			w[nw] = parts[p].w[j];
			w[nw++].seg += parts[p].seg_shift;
		}
	hoff_cand *c = NULL;
	size_t n = 0;
	hoff_err e;
	assert_int_equal(hoff_cand_list(g, r, &c, &n, &e), HOFF_OK);
	for (size_t i = 0; i < n && i < nw; i++) {
		const hoff_cand *v = &c[i];
		if (v->t != hoff_graph_find_tensor(g, w[i].t) ||
		    v->kind != w[i].kind || v->a != w[i].a || v->b != w[i].b ||
		    v->tier != w[i].tier || v->bytes != w[i].bytes ||
		    v->fetch_ps != w[i].fetch_ps ||
		    v->store_ps != w[i].store_ps || v->seg != w[i].seg)
			fail_msg(
				"interval %zu: got %s kind %d (%d, %d) tier %d "
				"%lld B fetch %lld store %lld seg %d; want "
				"%s kind %d (%d, %d) tier %d %lld B fetch %lld "
				"store %lld seg %d",
				i, g->tensor[v->t].id, v->kind, v->a, v->b,
				v->tier, (long long)v->bytes,
				(long long)v->fetch_ps, (long long)v->store_ps,
				v->seg, w[i].t, w[i].kind, w[i].a, w[i].b,
				w[i].tier, (long long)w[i].bytes,
				(long long)w[i].fetch_ps,
				(long long)w[i].store_ps, w[i].seg);
	}
	assert_int_equal(n, nw);
	free(c);
}

static void test_hand_small(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(g_hand);
	hoff_cand_rule r = {.store_tier = 0, .small_below_bytes = 10000};
	check_list(g, &r,
		   (part[]){PART(rows_w), PART(rows_k), PART(c_small),
			    PART(rest_small)},
		   4);
	hoff_graph_free(g);
}

static void test_hand_all(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(g_hand);
	hoff_cand_rule r = {.store_tier = 0, .small_below_bytes = 0};
	check_list(g, &r, (part[]){PART(rows_w), PART(rows_k), PART(rest_all)},
		   3);
	hoff_graph_free(g);
}

static void test_hand_no_store_tier(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(g_hand);
	hoff_cand_rule r = {.store_tier = HOFF_NONE,
			    .small_below_bytes = 10000};
	check_list(g, &r, (part[]){PART(rows_w), PART(rest_no_tier)}, 2);
	hoff_graph_free(g);
}

/* A store tier that is slower moves the device-homed tensors' copies
 * there: a's 4 MB at 0.1 GB/s both ways. */
static void test_hand_store_tier(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(g_hand);
	hoff_cand_rule r = {.store_tier = 1, .small_below_bytes = 10000};
	hoff_cand c[8];
	assert_true(hoff_cand_room(g) <= 8);
	int32_t a = hoff_graph_find_tensor(g, "a");
	assert_int_equal(hoff_cand_tensor(g, &r, a, c), 2);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(c[i].tier, 1);
		assert_int_equal(c[i].fetch_ps, 40 * MS);
		assert_int_equal(c[i].store_ps, 40 * MS);
		assert_int_equal(c[i].seg, 0); /* counted from c[0] */
	}
	hoff_graph_free(g);
}

/* Per tensor: the room (w and k have four touches each, plus two), seg
 * counted from the tensor's first interval, and nothing for the tensors
 * that stay. */
static void test_hand_per_tensor(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(g_hand);
	hoff_cand_rule r = {.store_tier = 0, .small_below_bytes = 10000};
	assert_int_equal(hoff_cand_room(g), 6);
	hoff_cand c[6];
	int32_t k = hoff_graph_find_tensor(g, "k");
	assert_int_equal(hoff_cand_tensor(g, &r, k, c), 4);
	static const int seg[] = {0, 1, 1, 3};
	for (int i = 0; i < 4; i++)
		assert_int_equal(c[i].seg, seg[i]);
	static const char *none[] = {"x", "s", "f", "idle"};
	for (size_t i = 0; i < sizeof none / sizeof *none; i++)
		assert_int_equal(
			hoff_cand_tensor(g, &r,
					 hoff_graph_find_tensor(g, none[i]), c),
			0);
	hoff_graph_free(g);
}

/* Invariants on one graph under r: the list is the tensors' lists in id
 * order; a tensor's intervals are its consecutive touches (producer,
 * then reads and updates) at least HOFF_CAND_MIN_GAP_OPS apart, in
 * order; START is a tier-homed input's first, up to its first use; a
 * segment's head is an earlier DIRTY interval of the same tensor with no
 * update from it to here. Returns the intervals. */
static size_t check_graph(const hoff_graph *g, const hoff_cand_rule *r)
{
	hoff_cand *all = NULL;
	size_t n = 0;
	hoff_err e;
	assert_int_equal(hoff_cand_list(g, r, &all, &n, &e), HOFF_OK);
	hoff_cand *one = hoff_alloc(hoff_cand_room(g), sizeof *one);
	assert_non_null(one);
	size_t at = 0;
	for (int32_t t = 0; t < g->ntensors; t++) {
		const hoff_tensor *x = &g->tensor[t];
		int32_t k = hoff_cand_tensor(g, r, t, one);
		assert_true(at + (size_t)k <= n);
		for (int32_t j = 0; j < k; j++) {
			const hoff_cand *v = &all[at + (size_t)j];
			assert_int_equal(v->t, t);
			assert_int_equal(v->a, one[j].a);
			assert_int_equal(v->b, one[j].b);
			assert_int_equal(v->seg, one[j].seg + (int32_t)at);
			assert_int_equal(v->bytes, x->bytes);
			if (v->kind == HOFF_CAND_START) {
				assert_int_equal(j, 0);
				assert_int_equal(x->producer, HOFF_NONE);
				assert_int_not_equal(x->home, HOFF_DEVICE);
				assert_int_equal(v->a, -1);
				assert_int_equal(v->b, x->first_use);
				continue;
			}
			assert_true(hoff_tensor_movable(g, t));
			/* (v2) a repeat graph's state goes home whatever
			 * the gap after its last use */
			bool home = hoff_cand_goes_home(g, v);
			assert_true(home ||
				    v->b - v->a - 1 >= HOFF_CAND_MIN_GAP_OPS);
			/* a is a touch (or before op 0 for an input) and b
			 * the next one, or the end for a persistent tail */
			int32_t next = hoff_tensor_next_use(g, t, v->a);
			if (v->b == g->nops) {
				assert_true(hoff_tensor_persistent(x));
				assert_int_equal(next, HOFF_NONE);
			} else {
				assert_int_equal(v->b, next);
			}
			if (j > 0)
				assert_true(v->a >= all[at + j - 1].b);
			if (v->kind == HOFF_CAND_CLEAN) {
				assert_int_not_equal(x->home, HOFF_DEVICE);
				assert_int_equal(v->store_ps, 0);
				assert_int_equal(v->seg, (int32_t)(at + j));
			} else {
				assert_int_equal(v->kind, HOFF_CAND_DIRTY);
				assert_true(v->store_ps > 0);
				const hoff_cand *h = &all[v->seg];
				assert_true(v->seg <= (int32_t)(at + j));
				assert_int_equal(h->t, t);
				assert_int_equal(h->kind, HOFF_CAND_DIRTY);
				/* no update at a touch in (h->a, v->a] */
				for (int32_t q =
					     hoff_tensor_next_use(g, t, h->a);
				     q != HOFF_NONE && q <= v->a;
				     q = hoff_tensor_next_use(g, t, q)) {
					const int32_t *u;
					int64_t nu = hoff_op_list(
						g, q, HOFF_USE_UPD, &u);
					for (int64_t i = 0; i < nu; i++)
						assert_int_not_equal(u[i], t);
				}
			}
			if (v->bytes < r->small_below_bytes) {
				if (!home)
					assert_int_equal(v->kind,
							 HOFF_CAND_CLEAN);
				assert_int_equal(v->b, g->nops);
			}
		}
		/* (v2) rule 9's end state: in a repeat graph, tier-homed
		 * state always has its tail home, device-homed state none */
		if (hoff_repeat_state(g, t) && k > 0 &&
		    hoff_tensor_movable(g, t)) {
			const hoff_cand *last = &all[at + (size_t)k - 1];
			if (x->home == HOFF_DEVICE) {
				assert_true(last->b < g->nops);
			} else {
				assert_int_equal(last->b, g->nops);
				assert_true(hoff_cand_goes_home(g, last));
			}
		}
		at += (size_t)k;
	}
	assert_int_equal(at, n);
	free(one);
	free(all);
	return n;
}

/* (v2) The hand graph as one iteration of a loop (set on the graph; the
 * reader's own checks aside: e, pinned on the host, would be refused
 * there). State ends as it started: c, small and tier-homed, dirty from
 * u1, now has its tail too (4, 8), stored home (1 KB to host: 1 us +
 * 2 us), though small; w's dirty tail was there already; k, on the
 * device, has none (r7 is the last op anyway). Exactly three tails go
 * home: w's and c's, stored, and n's, clean, detached. The rows after
 * c's are rest_small's, each a seg later (c's tail is one more). */
static const want c_repeat[] = {
	{"c", S, -1, 1, 0, 1000, SMALL_IN, 0, 8},
	{"c", D, 4, 8, 0, 1000, 0, 3 * US, 9},
};

static void test_hand_repeat(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(g_hand);
	g->version = 2;
	g->repeat = true;
	hoff_cand_rule r = {.store_tier = 0, .small_below_bytes = 10000};
	check_list(g, &r,
		   (part[]){PART(rows_w), PART(rows_k), PART(c_repeat),
			    SHIFTED(rest_small, 1)},
		   4);
	hoff_cand *c = NULL;
	size_t n = 0;
	hoff_err e;
	assert_int_equal(hoff_cand_list(g, &r, &c, &n, &e), HOFF_OK);
	int home = 0;
	for (size_t i = 0; i < n; i++) {
		if (!hoff_cand_goes_home(g, &c[i]))
			continue;
		home++;
		const char *id = g->tensor[c[i].t].id;
		assert_int_equal(c[i].b, g->nops);
		assert_int_equal(c[i].kind, strcmp(id, "n") ? D : C);
		assert_true(!strcmp(id, "w") || !strcmp(id, "c") ||
			    !strcmp(id, "n"));
	}
	assert_int_equal(home, 3);
	assert_true(hoff_repeat_state(g, hoff_graph_find_tensor(g, "k")));
	assert_false(hoff_repeat_state(g, hoff_graph_find_tensor(g, "loss")));
	g->repeat = false;
	for (size_t i = 0; i < n; i++)
		assert_false(hoff_cand_goes_home(g, &c[i]));
	free(c);
	hoff_graph_free(g);
}

/* (v2) A device-homed weight u read by op0 only has a dirty tail (0, 2)
 * (no home copy: stored to the store tier); in a repeat graph none, since
 * it must end resident. */
static void test_device_state_no_tail(void **state)
{
	(void)state;
	hoff_graph *g = tu_graph(
		"{\"format\": \"hoffopt.graph\", \"version\": 1, \"name\": "
		"\"u\", \"machine\": {\"device\": {\"memory_bytes\": 100000000},"
		" \"tiers\": [{\"name\": \"host\", \"h2d_Bps\": 1e9, "
		"\"d2h_Bps\": 1e9}]}, \"tensors\": ["
		"{\"id\": \"x\", \"bytes\": 1000, \"kind\": \"input\"},"
		"{\"id\": \"u\", \"bytes\": 1000000, \"kind\": \"weight\"},"
		"{\"id\": \"y\", \"bytes\": 1000, \"kind\": \"activation\"},"
		"{\"id\": \"z\", \"bytes\": 1000, \"kind\": \"activation\"}],"
		" \"ops\": [{\"id\": \"op0\", \"inputs\": [\"x\", \"u\"], "
		"\"outputs\": [\"y\"], \"time_s\": 0.001},"
		"{\"id\": \"op1\", \"inputs\": [\"y\"], \"outputs\": [\"z\"],"
		" \"time_s\": 0.001}]}");
	hoff_cand_rule r = {.store_tier = 0, .small_below_bytes = 0};
	hoff_cand c[8];
	int32_t u = hoff_graph_find_tensor(g, "u");
	assert_true(hoff_cand_room(g) <= 8);
	assert_int_equal(hoff_cand_tensor(g, &r, u, c), 1);
	assert_int_equal(c[0].kind, D);
	assert_int_equal(c[0].a, 0);
	assert_int_equal(c[0].b, 2);
	g->version = 2;
	g->repeat = true;
	assert_int_equal(hoff_cand_tensor(g, &r, u, c), 0);
	hoff_graph_free(g);
}

/* Every graph of DIR, with its small tensors and with none; returns how
 * many. */
static int check_dir(const char *dir)
{
	DIR *d = opendir(dir);
	assert_non_null(d);
	int graphs = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		if (len < 6 || strcmp(de->d_name + len - 5, ".json") ||
		    strstr(de->d_name, ".schedule."))
			continue;
		char path[1024];
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		char *text = tu_slurp(path, NULL);
		assert_non_null(text);
		hoff_graph *g = tu_graph(text);
		free(text);
		int32_t best = HOFF_NONE;
		for (int32_t i = 0; i < g->ntiers; i++)
			best = i; /* any tier will do for the invariants */
		hoff_cand_rule r = {.store_tier = best,
				    .small_below_bytes =
					    hoff_small_below(g, NULL)};
		size_t some = check_graph(g, &r);
		r.small_below_bytes = 0;
		size_t all = check_graph(g, &r);
		assert_true(some > 0 && some <= all);
		hoff_graph_free(g);
		graphs++;
	}
	closedir(d);
	return graphs;
}

/* Every graph of data/ (FORMAT v2: repeat train and decode steps), and
 * of its version-1 forms (fixture data_v1) when there. */
static void test_data_invariants(void **state)
{
	(void)state;
	const char *src = tu_src_dir();
	if (!src)
		skip();
	char dir[1024];
	snprintf(dir, sizeof dir, "%s/data", src);
	assert_true(check_dir(dir) >= 13);
	const char *v1 = getenv("HOFF_DATA_V1_DIR");
	if (v1 && access(v1, R_OK) == 0)
		assert_true(check_dir(v1) >= 12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hand_small),
		cmocka_unit_test(test_hand_all),
		cmocka_unit_test(test_hand_no_store_tier),
		cmocka_unit_test(test_hand_store_tier),
		cmocka_unit_test(test_hand_per_tensor),
		cmocka_unit_test(test_hand_repeat),
		cmocka_unit_test(test_device_state_no_tail),
		cmocka_unit_test(test_data_invariants),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
