/* xplan.h: a schedule lowered for the executors — per stream commands and
 * the events each waits for, device offsets for every block, host offsets
 * for every tier copy, and the content version each transfer moves.
 *
 * Compute commands are the schedule's compute steps in step order: its
 * ops and (v2) its recomputes, each running one graph op; without
 * recomputes command k is op k. A recompute reads its op's inputs where
 * they are then, and writes those of its outputs that are not resident
 * into new blocks (the others keep their bytes: rule 10); a drop frees its
 * tensor's block at issue, as a detach does.
 *
 * Streams: 0 is compute; tier i's h2d channel is 1 + 2i, its d2h 2 + 2i.
 * Events: compute command k's completion is event k, transfer x's is
 * nops + x. Each
 * command waits only on commands of earlier steps (ops on the compute
 * stream and transfers on one channel are implicitly in order), so any
 * backend that honours the waits runs without deadlock:
 *  - an op waits for the prefetch that filled each input or update, and
 *    for the previous occupants of the bytes its outputs and workspace get;
 *  - a transfer is issued when the op before its step finishes (rule 2);
 *    a prefetch waits for the last store to its tier copy (rule 4) and for
 *    the previous occupants of its block; a store waits for the prefetch
 *    that filled its block and the last prefetch out of its tier copy.
 *    A store of a version its tier copy already holds (`same`) rewrites
 *    identical bytes: a later prefetch from that copy does not wait for
 *    it, as FORMAT.md's rule 4 says (the copy is valid all along).
 * On the simulator's own durations these waits never bind beyond what
 * FORMAT.md says, so a faithful backend replays the predicted timeline.
 *
 * requires a valid schedule and its simulation with timeline and op
 * times; writes nothing to them. */
#ifndef HOFF_XPLAN_H
#define HOFF_XPLAN_H

#include "graph.h"
#include "sched.h"
#include "sim.h"

/* A moment of the run a block's allocation or free is tied to. */
typedef enum hoff_moment_kind {
	HOFF_AT_ZERO = 0,  /* the start of the run */
	HOFF_AT_OP_START,  /* op idx starts */
	HOFF_AT_OP_END,    /* op idx finishes (also: the issue of the cache
			      steps after it) */
	HOFF_AT_XFER_END,  /* transfer idx completes */
	HOFF_AT_NEVER,     /* not freed before the end */
} hoff_moment_kind;

typedef struct hoff_moment {
	int64_t idx;
	uint8_t kind; /* hoff_moment_kind */
} hoff_moment;

/* One device block: a tensor's residency or an op's workspace. */
typedef struct hoff_xblock {
	int32_t tensor;  /* HOFF_NONE for a workspace */
	int32_t op;      /* the workspace's op, else HOFF_NONE */
	int64_t bytes;
	int64_t off;     /* offset in the device arena */
	hoff_moment alloc_at, free_at;
	int64_t alloc_ps, free_ps; /* predicted; free_ps HOFF_NONE: never */
	int64_t alloc_ev; /* event of the command that allocates it (op or
			     transfer), HOFF_NONE for a block at time 0 */
	int64_t fill_x;   /* prefetch that wrote it, or HOFF_NONE */
	int64_t read_x;   /* store that read it, or HOFF_NONE */
	int32_t last_op;  /* last op that used it, or HOFF_NONE */
} hoff_xblock;

/* A compute command: an op step or (v2) a recompute step. */
typedef struct hoff_xop {
	int64_t step;
	int32_t op;	   /* the graph op it runs */
	uint8_t recompute; /* (v2) a recompute step */
	/* Its lists' device offsets (and input versions) start at these
	 * indices of in_dev/in_ver, upd_dev/upd_ver and out_dev; an op
	 * step's are g->in_off[op] and so on. */
	int64_t in_at, upd_at, out_at;
	int64_t dur_ps;
	int64_t ws_off;   /* workspace offset, HOFF_NONE without one */
	int64_t wait_off; /* waits on transfers wait[wait_off .. +nwait) */
	int32_t nwait;
	int64_t pred_start_ps, pred_end_ps;
} hoff_xop;

typedef struct hoff_xfer {
	int64_t step;
	int32_t tensor;
	int16_t tier;
	uint8_t store;    /* 0: prefetch (h2d), 1: store (d2h) */
	int32_t stream;   /* 1 + 2 * tier + store */
	int32_t after_op; /* issued when this op finishes; HOFF_NONE: at 0 */
	int64_t wait_off; /* waits on transfers wait[wait_off .. +nwait) */
	int32_t nwait;
	int64_t dev_off, host_off, bytes;
	uint32_t version; /* content version moved (pattern.h) */
	uint8_t same;	  /* store: the tier copy already holds this version,
			     so its bytes equal what they overwrite (FORMAT.md
			     rule 4: a prefetch from it does not wait) */
	int64_t dur_ps;
	int64_t pred_start_ps, pred_end_ps;
} hoff_xfer;

/* A region --verify fills before the run or checks after it. */
typedef struct hoff_xregion {
	int32_t tensor;
	int16_t tier; /* HOFF_DEVICE: the device arena, else a tier's copy */
	uint8_t home; /* (v2) final, repeat graph: where the state must end
			 (rule 9), checked as such */
	uint32_t version;
	int64_t off, bytes;
} hoff_xregion;

typedef struct hoff_xplan {
	const hoff_graph *g;
	int32_t nops; /* compute commands: g->nops plus the recomputes */
	int32_t nrecompute;
	hoff_xop *op; /* (nops) in compute order */
	int64_t nxfers;
	hoff_xfer *xfer; /* (nxfers) in step order */
	int64_t *wait;   /* transfer ids, CSR per command */
	int64_t nwaits;
	/* Device offsets at each op, parallel to g->in, g->upd, g->out,
	 * then (v2) each recompute's, from its in_at and out_at on (an
	 * output it does not re-make: HOFF_NONE); the version each input
	 * has, parallel to in_dev, and the version each update writes (it
	 * reads the one before), parallel to g->upd. */
	int64_t *in_dev, *upd_dev, *out_dev;
	uint32_t *in_ver, *upd_ver;
	int64_t nin, nout; /* lengths of in_dev (and in_ver), out_dev */
	int64_t nblocks;
	hoff_xblock *block; /* (nblocks) */
	int32_t nstreams;   /* 1 + 2 * ntiers */
	int64_t arena_bytes;     /* device arena size: its high water */
	int64_t plan_peak_bytes; /* largest sum of live blocks in the plan */
	int64_t host_bytes;      /* host arena: one slot per tier copy */
	int64_t align_bytes;
	hoff_xregion *init;  /* (ninit) tensors present at time 0 */
	int64_t ninit;
	hoff_xregion *final; /* (nfinal) resident blocks and valid copies at
				the end; (v2) on a repeat graph, every
				persistent input's home among them */
	int64_t nfinal;
} hoff_xplan;

/* Lowers s on g into *p (caller frees with hoff_xplan_free). r is s's
 * simulation on g, valid, with opts.timeline and opts.op_times set;
 * device blocks are rounded up to align_bytes (1: exact). HOFF_ENOMEM, or
 * HOFF_EINVALID when r is not a valid run of s (a recompute without its
 * event in r's timeline, state that does not end home on a repeat
 * graph). */
hoff_status hoff_xplan_build(const hoff_graph *g, const hoff_sched *s,
			     const hoff_sim_result *r, int64_t align_bytes,
			     hoff_xplan *p, hoff_err *e);
/* Frees what p owns. */
void hoff_xplan_free(hoff_xplan *p);

/* Number of items of op k's list u. */
static inline int64_t hoff_op_count(const hoff_graph *g, int32_t k, hoff_use u)
{
	const int32_t *items;
	return hoff_op_list(g, k, u, &items);
}

/* True when op k updates tensor t (its updates list is short). */
static inline bool hoff_op_updates(const hoff_graph *g, int32_t k, int32_t t)
{
	for (int64_t j = g->upd_off[k]; j < g->upd_off[k + 1]; j++)
		if (g->upd[j] == t)
			return true;
	return false;
}

/* Event id of transfer x. */
static inline int64_t hoff_xplan_xev(const hoff_xplan *p, int64_t x)
{
	return (int64_t)p->nops + x;
}

/* The end (exclusive) of the transfers that come before op k in step
 * order, counting from transfer x (at k == nops, every one left): the
 * order in which the walk, the replay and the measured timeline take
 * transfers and ops. */
static inline int64_t hoff_xplan_xfers_before(const hoff_xplan *p, int32_t k,
					      int64_t x)
{
	while (x < p->nxfers &&
	       (k == p->nops || p->xfer[x].step < p->op[k].step))
		x++;
	return x;
}

/* Replays p with its own durations, honouring exactly the waits and stream
 * orders the executors honour, into op_start/op_end (nops) and
 * x_start/x_end (nxfers) ps. Equal to the simulator's times when the waits
 * add nothing to the machine model (tests check it) and no tier has a
 * duplex factor below 1 (the replay takes every transfer at its nominal
 * duration). HOFF_ENOMEM. */
hoff_status hoff_xplan_replay(const hoff_xplan *p, int64_t *op_start,
			      int64_t *op_end, int64_t *x_start,
			      int64_t *x_end, hoff_err *e);

/* Fills tl's memory counter from the blocks, taking each moment's time
 * from the given per-op and per-transfer times, and returns the peak.
 * HOFF_ENOMEM (then *peak is unset). */
hoff_status hoff_xplan_memory(const hoff_xplan *p, const int64_t *op_start,
			      const int64_t *op_end, const int64_t *x_end,
			      hoff_timeline *tl, int64_t *peak, hoff_err *e);

#endif
