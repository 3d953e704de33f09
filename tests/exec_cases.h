/* exec_cases.h: the graphs and helpers the executor tests share
 * (test_exec_cpu.c, test_exec_cuda.c, test_exec_arena.c): one host tier,
 * a 100 MB device, graphs and schedules written inline, and a schedule
 * simulated, planned and run on a backend, its events compared with the
 * simulator's. */
#ifndef HOFF_EXEC_CASES_H
#define HOFF_EXEC_CASES_H

#include "exec.h"
#include "testutil.h"
#include "xplan.h"

#define HOST "{\"name\": \"host\", \"h2d_Bps\": 1e9, \"d2h_Bps\": 1e9}"
/* A graph of FORMAT `version` named t on a 100 MB device with the one
 * tier `tier`; `extra` goes in the top level (e.g. "\"repeat\": true, ").
 * GRAPH (version 1) and GRAPH2 are it on HOST. */
#define GRAPH_ON(version, extra, tier, tensors, ops)                       \
	"{\"format\": \"hoffopt.graph\", \"version\": " version ", " extra \
	"\"name\": \"t\", \"machine\": {\"device\": {\"memory_bytes\": "   \
	"100000000}, \"tiers\": [" tier "]}, \"tensors\": [" tensors       \
	"], \"ops\": [" ops "]}"
#define GRAPH(tensors, ops) GRAPH_ON("1", "", HOST, tensors, ops)
#define SCHED(steps)                                                           \
	"{\"format\": \"hoffopt.schedule\", \"version\": 1, \"steps\": ["      \
	steps "]}"

/* kv updated, stored, fetched back and updated again, with odd sizes
 * (see test_exec_arena.c); each op lasts op_s. Steps: 0 op0, 1 store kv,
 * 2 prefetch w, 3 op1, 4 prefetch kv, 5 op2. */
#define KV_GRAPH_OF(op_s)                                                      \
	GRAPH("{\"id\": \"x\", \"bytes\": 1000000, \"kind\": \"input\"},"      \
	      "{\"id\": \"kv\", \"bytes\": 500003, \"kind\": \"kv\"},"         \
	      "{\"id\": \"w\", \"bytes\": 999999, \"kind\": \"weight\", "      \
	      "\"home\": \"host\"},"                                           \
	      "{\"id\": \"y\", \"bytes\": 1000000, \"kind\": \"activation\"}," \
	      "{\"id\": \"z\", \"bytes\": 1000000, \"kind\": \"activation\"}," \
	      "{\"id\": \"o\", \"bytes\": 1000001, \"kind\": \"output\"}",     \
	      "{\"id\": \"op0\", \"inputs\": [\"x\"], \"updates\": [\"kv\"], " \
	      "\"outputs\": [\"y\"], \"time_s\": " op_s "},"                   \
	      "{\"id\": \"op1\", \"inputs\": [\"y\", \"w\"], \"outputs\": "    \
	      "[\"z\"], \"time_s\": " op_s ", \"workspace_bytes\": 500000},"   \
	      "{\"id\": \"op2\", \"inputs\": [\"z\", \"kv\"], \"updates\": "   \
	      "[\"kv\"], \"outputs\": [\"o\"], \"time_s\": " op_s "}")
#define KV_STEPS                                                               \
	SCHED("{\"op\": \"op0\"}, {\"store\": \"kv\", \"to\": \"host\"},"      \
	      "{\"prefetch\": \"w\", \"from\": \"host\"}, {\"op\": \"op1\"},"   \
	      "{\"prefetch\": \"kv\", \"from\": \"host\"}, {\"op\": \"op2\"}")

/* (v2) A version-2 graph on the same machine. */
#define GRAPH2(extra, tensors, ops) GRAPH_ON("2", extra, HOST, tensors, ops)
#define SCHED2(steps)                                                           \
	"{\"format\": \"hoffopt.schedule\", \"version\": 2, \"steps\": [" steps \
	"]}"

/* (v2) Recompute: op0 makes a from x and w (fetched from the host), a is
 * dropped, op1 runs 10 ms, w is fetched again and op0 re-run to re-make a
 * for op2. By hand (1 MB a ms): w 0-4, op0 4-6, drop a and detach w at
 * 6, op1 6-16, w again 16-20, recompute 20-22, op2 22-24; peak 13 MB
 * (x, w, a, b, then o). Steps: 0 prefetch w, 1 op0, 2 detach w, 3 drop
 * a, 4 op1, 5 prefetch w, 6 recompute op0, 7 op2. Compute commands: op0,
 * op1, the recompute (2), op2. */
#define RC_TENSORS                                                       \
	"{\"id\": \"x\", \"bytes\": 1000000, \"kind\": \"input\"},"      \
	"{\"id\": \"w\", \"bytes\": 4000000, \"kind\": \"weight\", "     \
	"\"home\": \"host\"},"                                           \
	"{\"id\": \"a\", \"bytes\": 4000000, \"kind\": \"activation\"}," \
	"{\"id\": \"b\", \"bytes\": 4000000, \"kind\": \"activation\"}," \
	"{\"id\": \"o\", \"bytes\": 1000000, \"kind\": \"output\"}"
#define RC_OPS                                                                 \
	"{\"id\": \"op0\", \"inputs\": [\"x\", \"w\"], \"outputs\": [\"a\"], " \
	"\"time_s\": 0.002},"                                                  \
	"{\"id\": \"op1\", \"inputs\": [\"x\"], \"outputs\": [\"b\"], "        \
	"\"time_s\": 0.01},"                                                   \
	"{\"id\": \"op2\", \"inputs\": [\"a\", \"b\"], \"outputs\": [\"o\"], " \
	"\"time_s\": 0.002}"
#define RC_GRAPH GRAPH2("", RC_TENSORS, RC_OPS)
#define RC_STEPS_OF(tail)                                                      \
	SCHED2("{\"prefetch\": \"w\", \"from\": \"host\"}, {\"op\": \"op0\"}," \
	       "{\"detach\": \"w\"}, {\"drop\": \"a\"}, {\"op\": \"op1\"},"    \
	       "{\"prefetch\": \"w\", \"from\": \"host\"},"                    \
	       "{\"recompute\": \"op0\"}, {\"op\": \"op2\"}" tail)
#define RC_STEPS RC_STEPS_OF("")
/* The same as one iteration of a loop: w must end home, so it is
 * detached after the last op (step 8). */
#define RC_REPEAT_GRAPH GRAPH2("\"repeat\": true, ", RC_TENSORS, RC_OPS)
#define RC_REPEAT_STEPS RC_STEPS_OF(", {\"detach\": \"w\"}")
/* Or w stored back after op2 (a `same` store, step 8): its home copy is
 * the one the loop's next iteration reads. */
#define RC_REPEAT_HOME_STEPS \
	RC_STEPS_OF(", {\"store\": \"w\", \"to\": \"host\"}")

/* A schedule simulated (pr), planned (p) and run (m). */
typedef struct ran {
	hoff_sim_result pr;
	hoff_xplan p;
	hoff_exec_result m;
} ran;

typedef hoff_status (*backend_new)(const hoff_xplan *, const hoff_exec_opts *,
				   hoff_backend **, hoff_err *);

/* Simulates s on g (valid, with no budget) into *pr and plans it with
 * device blocks rounded to align into *p; fails the test on any error. */
void plan_on(const hoff_graph *g, const hoff_sched *s, int64_t align,
	     hoff_sim_result *pr, hoff_xplan *p);
/* The checker's verdict on p with wait `drop` left out (HOFF_NONE: none). */
hoff_race race_of(const hoff_xplan *p, int64_t drop);
/* Simulates s on g (valid, with no budget), plans it and runs it on the
 * backend `make` builds; fails the test on any error. */
void run_on(backend_new make, const hoff_graph *g, const hoff_sched *s,
	    const hoff_exec_opts *o, ran *x);
void ran_free(ran *x);
/* run_on with the defaults and --verify: the run checked, no fault. */
void run_verified(backend_new make, const hoff_graph *g, const hoff_sched *s,
		  ran *x);
/* x's faults are c's, one for one (step, where, tensor, byte), and there
 * is at least one: two backends caught the same corruption. */
void expect_same_faults(const ran *x, const ran *c);
/* The index hoff_exec_walk gives command cmd's wait for event ev (op k,
 * or transfer x as nops + x), -1 when it has none. */
int64_t wait_index(const hoff_xplan *p, int64_t cmd, int64_t ev);
/* The measured timeline has the simulator's events (kind, step, id) in
 * the same order, stalls, detaches and drops aside, each ending at or
 * after its start. */
void check_events(const ran *x);

#endif
