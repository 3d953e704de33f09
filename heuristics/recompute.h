/* recompute.h: recomputation as a graph (FORMAT v2 rules 10, 11), so that
 * every planner of heuristics/ plans with it unchanged.
 *
 * A recompute plan is a list of events: op p re-run right before op k.
 * hoff_rc_build turns graph g and the events into an *expanded* graph g2:
 * each event becomes an op (a clone of p, same time and workspace) that
 * stands before op k and makes a new *version* of each output the event
 * re-makes (a tensor of g2 of the same bytes); every later read of the
 * tensor reads its newest version. An output the event does not re-make
 * is read by the clone instead (it stays resident across the re-run, as
 * rule 10 finds it). A schedule of g2 maps back to one of g
 * (hoff_rc_map): a clone's op step becomes `recompute p`, a version's
 * cache steps name its tensor, and after the compute step that last
 * reads a version (or makes it, when nothing reads it) stands `drop t`
 * whenever a later version of t is read: rule 6 frees that version in
 * g2, the drop frees it in g. The two schedules then run alike on the
 * machine model, instant for instant and byte for byte (tier copies
 * aside: g keeps at least those g2 has); the caller still simulates the
 * mapped schedule on g before it keeps it.
 * g2 borrows g's strings: each op, clone or not, has the id and kind of
 * its op of g, each version the id of its tensor, the tiers and device
 * their names (g must outlive g2); g2 has no id maps (hoff_graph_find_*
 * find nothing in it): schedules of g2 name ops and tensors by index.
 * requires: a finished g; events sorted by `before`; each event's op
 * recomputable (no updates), ran before `before`, its inputs and outputs
 * not updated between (rule 10, hoff_rc_legal); each re-made output not
 * persistent and offload true (rule 11). */
#ifndef HOFF_RECOMPUTE_H
#define HOFF_RECOMPUTE_H

#include "graph.h"
#include "sched.h"

/* One event: op `op` re-run just before op `before`; its outputs
 * out[out_off] .. out[out_off + nout) (tensors of g) are re-made, the
 * others read. */
typedef struct hoff_rc_event {
	int32_t op, before;
	int64_t out_off;
	int32_t nout;
} hoff_rc_event;

/* A recompute plan: events in order, with their re-made outputs. */
typedef struct hoff_rc_plan {
	hoff_rc_event *ev;
	int64_t nev, cap;
	int32_t *out;
	int64_t nout, out_cap;
} hoff_rc_plan;

/* g2 and the maps back to g. */
typedef struct hoff_rc_graph {
	hoff_graph *g2;
	int32_t *op_of;	   /* (g2->nops) g's op of each op of g2 */
	uint8_t *is_rc;	   /* (g2->nops) 1 for a clone */
	int32_t *t_of;	   /* (g2->ntensors) g's tensor of each version */
	int64_t *drop_off; /* (g2->nops + 1) CSR: g's tensors dropped after */
	int32_t *drop;	   /* each compute step of g2 */
	int64_t nrec;	   /* clones */
} hoff_rc_graph;

/* Appends an event (outputs given, n of them); HOFF_ENOMEM. */
hoff_status hoff_rc_plan_push(hoff_rc_plan *p, int32_t op, int32_t before,
			      const int32_t *out, int32_t n);
/* Frees what p owns and zeroes it. */
void hoff_rc_plan_free(hoff_rc_plan *p);

/* Whether re-running op p right before op k meets rule 10 on g: p is
 * recomputable and no op in (p, k) updates one of its inputs or
 * outputs. upd_off/upd_op: hoff_rc_updaters'. */
bool hoff_rc_legal(const hoff_graph *g, const int64_t *upd_off,
		   const int32_t *upd_op, int32_t p, int32_t k);
/* The ops that update each tensor, ascending, as CSR: (*off)[t] ..
 * (*off)[t + 1] of *ops (caller frees both); HOFF_ENOMEM. */
hoff_status hoff_rc_updaters(const hoff_graph *g, int64_t **off, int32_t **ops);

/* Builds g2 from g and plan p into *r (see above); HOFF_ENOMEM, or
 * HOFF_EINPUT (a bug in p) with a message in e. */
hoff_status hoff_rc_build(const hoff_graph *g, const hoff_rc_plan *p,
			  hoff_rc_graph *r, hoff_err *e);
/* Frees what r owns and zeroes it. */
void hoff_rc_graph_free(hoff_rc_graph *r);

/* Schedule s2 of r->g2 as a schedule of g (caller frees), version 2
 * when it recomputes; NULL on OOM. */
hoff_sched *hoff_rc_map(const hoff_rc_graph *r, const hoff_sched *s2);

#endif
