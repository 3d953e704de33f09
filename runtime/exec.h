/* exec.h: the executor interface. A backend is a vtable plus a context
 * (ggml's backend interface): streams, events, arenas. hoff_exec_run walks
 * a lowered schedule (xplan.h) in step order and hands each command to the
 * backend — waits, then the op or the copy, then the event record — so
 * every backend runs exactly the machine model's streams and waits. The
 * CPU backend (exec_cpu.c, threads and memcpy) is the reference; the CUDA
 * one (exec_cuda.cu) runs the same commands on streams and events.
 *
 * Times measured are ps from the backend's start of the run, so they line
 * up with the simulator's. --verify content follows pattern.h. */
#ifndef HOFF_EXEC_H
#define HOFF_EXEC_H

#include <stdio.h>

#include "timeline.h"
#include "xplan.h"

typedef struct hoff_exec_opts {
	bool verify;          /* fill and check tensor contents */
	int64_t corrupt_step; /* test hook: flip one byte of this transfer's
				 destination after the copy, or (v2) with
				 verify, of this recompute's first output
				 (if it re-makes it) once written;
				 HOFF_NONE */
	int32_t device;       /* CUDA device ordinal */
	bool cuda_graph;      /* CUDA: capture the whole plan into one CUDA
				 graph and launch it (no host enqueue lag) */
	bool pace;	      /* CUDA: hold each transfer's channel until its
				 planned duration has passed, so a tier
				 slower than the link runs at its own rate */
	int64_t slow_step;    /* test hook: the transfer at this step lasts
				 HOFF_SLOW_FACTOR times its duration (a
				 slower link: waits keep the run correct,
				 a missing one shows); HOFF_NONE */
	int64_t drop_wait;    /* test hook: the walk leaves out its wait
				 number drop_wait (0-based, in the order
				 it issues them); HOFF_NONE */
} hoff_exec_opts;

#define HOFF_SLOW_FACTOR 4

/* Default options: no verification, no fault, no wait dropped, device 0. */
hoff_exec_opts hoff_exec_defaults(void);

/* Where a failed check ran. With --verify every command checks what it
 * reads: an op its inputs and updates at its start and its inputs again
 * at its end (it writes junk to its outputs and updates at its start and
 * their patterns at its end); (v2) a recompute as an op, writing only the
 * outputs it re-makes, which it checks once written; a transfer its
 * source at its start and its destination at its end. */
typedef enum hoff_fault_at {
	HOFF_FAULT_END = 0,  /* the check of the final state */
	HOFF_FAULT_XFER_SRC, /* a transfer's source, at its start */
	HOFF_FAULT_XFER_DST, /* a transfer's destination, at its end */
	HOFF_FAULT_OP_START, /* an op's input or update, at its start */
	HOFF_FAULT_OP_END,   /* an op's input, at its end */
	HOFF_FAULT_REMADE,   /* (v2) a recompute's output, re-made: the
				original's bytes (its op's pattern) */
	HOFF_FAULT_HOME,     /* (v2) the end check of a repeat graph's state
				at its home (xplan.h's final regions) */
} hoff_fault_at;

/* A verification failure: the first differing byte of a region. */
typedef struct hoff_exec_fault {
	int64_t step; /* the command's step, HOFF_NONE for the end check */
	int64_t cmd;  /* compute command k, or transfer x as nops + x;
			 HOFF_NONE */
	int32_t tensor;
	int16_t tier; /* HOFF_DEVICE, or the tier of the copy checked (a
			 transfer's: its tier) */
	uint8_t at;   /* hoff_fault_at */
	uint32_t version;
	int64_t byte;   /* offset in the tensor */
} hoff_exec_fault;

#define HOFF_EXEC_MAXFAULTS 64

/* One channel's traffic, measured. */
typedef struct hoff_exec_chan {
	int64_t bytes, nxfers;
	int64_t busy_ps;    /* sum of transfer durations */
	double nominal_Bps; /* the tier's rate */
} hoff_exec_chan;

typedef struct hoff_exec_result {
	hoff_summary measured;
	hoff_timeline tl;   /* measured: ops, stalls, transfers, memory */
	int64_t *op_start_ps, *op_end_ps; /* (nops) */
	int64_t *x_start_ps, *x_end_ps;   /* (nxfers) */
	int64_t *bad;	      /* (nops + nxfers) per command (op k, then
				 transfer x at nops + x): its first failed
				 check as pattern.h's code, or -1 */
	hoff_exec_chan *chan; /* (nstreams); [0] is compute, unused */
	bool checked;       /* verification ran */
	int64_t nfaults;    /* all counted; the first HOFF_EXEC_MAXFAULTS kept */
	hoff_exec_fault fault[HOFF_EXEC_MAXFAULTS];
	char device[128];   /* what ran it */
	/* cpu: the largest lag of a host thread behind the emulated clock,
	 * and the commands that ended past their due time. cuda: how long
	 * after the start the host was still enqueueing (0 if it was done
	 * before); overruns unused. */
	int64_t lag_max_ps;
	int64_t overruns;
} hoff_exec_result;

typedef struct hoff_backend hoff_backend;

/* The backend vtable. Enqueueing calls (wait .. store) must not block on
 * the device; synchronize runs whatever is not yet running and returns when
 * all is done. Streams and events are numbered as in xplan.h. Every call
 * returns a status with a message in e. */
typedef struct hoff_backend_i {
	const char *name;
	/* Stream waits until event ev has been recorded. */
	hoff_status (*wait)(hoff_backend *b, int32_t stream, int64_t ev,
			    hoff_err *e);
	/* Records event ev on stream after what is enqueued there. */
	hoff_status (*record)(hoff_backend *b, int32_t stream, int64_t ev,
			      hoff_err *e);
	/* Op k on the compute stream, timed. */
	hoff_status (*run_op)(hoff_backend *b, int32_t k, hoff_err *e);
	/* Transfer x on its channel, timed. */
	hoff_status (*prefetch)(hoff_backend *b, int64_t x, hoff_err *e);
	hoff_status (*store)(hoff_backend *b, int64_t x, hoff_err *e);
	hoff_status (*synchronize)(hoff_backend *b, hoff_err *e);
	/* After synchronize: start and end ps of every op and transfer, and
	 * bad, into r's arrays. */
	hoff_status (*results)(hoff_backend *b, hoff_exec_result *r,
			       hoff_err *e);
	/* After synchronize: the first byte of region g that differs from
	 * its pattern into *bad, -1 when none. */
	hoff_status (*check)(hoff_backend *b, const hoff_xregion *g,
			     int64_t *bad, hoff_err *e);
	/* Frees the context (arenas, streams, events) and b. */
	void (*free)(hoff_backend *b);
} hoff_backend_i;

struct hoff_backend {
	const hoff_backend_i *iface;
	void *ctx;
	const hoff_xplan *plan;
	hoff_exec_opts opts;
	char device[128];
};

/* Creates the CPU backend for p: a device and a host arena in memory (with
 * --verify filled with the initial patterns), one thread per stream that
 * has work. Caller frees with hoff_backend_free. HOFF_ENOMEM. */
hoff_status hoff_backend_cpu_new(const hoff_xplan *p, const hoff_exec_opts *o,
				 hoff_backend **out, hoff_err *e);
/* Counts the CUDA devices into *ndev; HOFF_EIO saying why when there is
 * none (no driver, no device). */
hoff_status hoff_cuda_probe(int32_t *ndev, hoff_err *e);
/* Creates the CUDA backend for p on device o->device: one arena from
 * cudaMalloc, pinned host memory, a stream per channel. HOFF_EIO with the
 * CUDA error when there is no device or a call fails. */
hoff_status hoff_backend_cuda_new(const hoff_xplan *p, const hoff_exec_opts *o,
				  hoff_backend **out, hoff_err *e);
/* Frees b; NULL is fine. */
void hoff_backend_free(hoff_backend *b);
/* For a backend's constructor: b with iface, p and *o set and b->ctx a
 * zeroed block of ctx_bytes (b and ctx both zeroed otherwise; the
 * backend's free releases both). NULL when out of memory. */
hoff_backend *hoff_backend_alloc(const hoff_backend_i *iface,
				 const hoff_xplan *p, const hoff_exec_opts *o,
				 size_t ctx_bytes);

/* What a walk saw. */
typedef struct hoff_walk_info {
	int64_t nwaits;	 /* waits in the plan (a dropped one counted) */
	int64_t fwd_cmd; /* a wait for an event not yet recorded: the
			    waiting command, HOFF_NONE when none */
	int64_t fwd_ev;	 /* and the event it waits for */
} hoff_walk_info;

/* Enqueues b's plan: every step in step order, each command preceded by
 * its waits (b->opts.drop_wait left out), then its event's record.
 * Every wait must be for an event recorded earlier in the walk (a wait
 * for a later one is a no-op to CUDA and would block on the CPU backend
 * until it came): otherwise the walk stops there, after handing that wait
 * to the backend, with HOFF_EINVALID naming both steps (and info's fwd_).
 * info may be NULL. Used by hoff_exec_run and the plan checker. */
hoff_status hoff_exec_walk(hoff_backend *b, hoff_walk_info *info, hoff_err *e);

/* One command of a walk as hoff_exec_record keeps it. */
typedef enum hoff_xcmd_kind {
	HOFF_XCMD_WAIT,	  /* arg: the event waited for */
	HOFF_XCMD_RECORD, /* arg: the event recorded */
	HOFF_XCMD_TASK,	  /* arg: the command, op k or transfer nops + x */
} hoff_xcmd_kind;

typedef struct hoff_xcmd {
	int64_t arg;
	int32_t stream;
	uint8_t kind; /* hoff_xcmd_kind */
} hoff_xcmd;

typedef struct hoff_xcmds {
	hoff_xcmd *c; /* (n) in walk order */
	size_t n, cap;
} hoff_xcmds;

/* Walks p under o (hoff_exec_walk, o->drop_wait included) and keeps each
 * command it hands out, with its stream, in *out (zeroed first; the
 * caller frees out->c, also on failure); info as the walk's (may be
 * NULL). HOFF_ENOMEM, or the walk's status. Used by the plan checker. */
hoff_status hoff_exec_record(const hoff_xplan *p, const hoff_exec_opts *o,
			     hoff_xcmds *out, hoff_walk_info *info,
			     hoff_err *e);

/* A race in a plan's command stream (hoff_exec_check). */
typedef enum hoff_race_kind {
	HOFF_RACE_NONE = 0,
	HOFF_RACE_PAIR,	   /* two unordered commands touch the same bytes,
			      one writing */
	HOFF_RACE_FORWARD, /* a wait for an event not yet recorded */
} hoff_race_kind;

typedef struct hoff_race {
	uint8_t kind;	/* hoff_race_kind */
	bool host;	/* the bytes: host arena (true) or device */
	int64_t a, b;	/* commands: op k, or transfer x as nops + x; a
			   is the earlier in the walk */
	int32_t ta, tb; /* their tensors there (HOFF_NONE: a workspace) */
	int64_t off;	/* the first shared byte, in its arena */
	int64_t nwaits; /* waits the walk issued */
	int64_t nraces; /* PAIR: racing accesses found (at least 1) */
} hoff_race;

/* The happens-before checker. Walks p as hoff_exec_run does (o's
 * drop_wait honoured) into a command stream, orders it by stream order
 * and waits (a wait orders only after a record already issued, as in
 * CUDA), and looks for two commands that touch a common byte, one
 * writing, with neither ordered before the other. Accesses: an op reads
 * its inputs and updates and writes its updates, outputs and workspace
 * ((v2) a recompute the same, but only the outputs it re-makes);
 * a transfer reads its source and writes its destination (a `same` store
 * rewrites identical bytes and counts as a read there). *r: the first
 * race found, or kind HOFF_RACE_NONE. O(accesses * (segments + streams)).
 * HOFF_ENOMEM, or HOFF_EINPUT when o->drop_wait names no wait. */
hoff_status hoff_exec_check(const hoff_xplan *p, const hoff_exec_opts *o,
			    hoff_race *r, hoff_err *e);
/* Formats r as "steps[3] prefetch "w1" and steps[5] op "op2" ..." */
void hoff_race_format(const hoff_xplan *p, const hoff_race *r, char *buf,
		      size_t len);

/* Runs b's plan: enqueues every step, synchronizes, and fills *r (caller
 * frees with hoff_exec_result_free): measured timeline and summary, per
 * channel traffic, and with --verify the faults. A fault is not an error:
 * it returns HOFF_OK with r->nfaults > 0. HOFF_EINPUT when opts.drop_wait
 * names no wait of the plan (nothing runs); backend failures as they
 * come. */
hoff_status hoff_exec_run(hoff_backend *b, hoff_exec_result *r, hoff_err *e);
/* Frees what r owns. */
void hoff_exec_result_free(hoff_exec_result *r);
/* Formats fault f as "steps[12] prefetch "w2" from "host": byte 7 ...". */
void hoff_exec_fault_format(const hoff_xplan *p, const hoff_exec_fault *f,
			    char *buf, size_t len);

/* Scales g in place so that a real-size graph fits this machine with its
 * ratios kept: time_k multiplies every duration (op times, latencies,
 * overheads; rates and roofline throughputs are divided by it), size_k
 * every byte count (tensors, workspaces, memory, capacities; rounded up,
 * tensors to at least 1 byte) and every transfer rate, so transfer times
 * stay put. Tier capacities become unlimited when size_k != 1 (rounding
 * could break them; the caller checks capacities before scaling).
 * Derived op and latency ps are recomputed. HOFF_EINPUT when a factor is
 * not a finite number > 0 or a scaled value leaves FORMAT.md's range. */
hoff_status hoff_exec_scale(hoff_graph *g, double time_k, double size_k,
			    hoff_err *e);

/* Measured properties of a backend's machine, for a graph's `machine`. */
typedef struct hoff_calib {
	char device[128];
	int64_t memory_bytes;
	double h2d_Bps, d2h_Bps;                   /* pinned host memory */
	double h2d_pageable_Bps, d2h_pageable_Bps; /* pageable host memory */
	double latency_s;       /* fixed cost of one copy */
	double flops_per_s;     /* compute rate */
	double mem_bandwidth_Bps; /* device memory, read + write */
	double op_overhead_s;   /* launch cost of one op */
	double spin_hz;		/* CUDA: the op clock's ticks per second
				   (%globaltimer: 1e9) */
	/* pinned h2d and d2h copies running at once (0: not measured) */
	double h2d_both_Bps, d2h_both_Bps;
	/* (v2) FORMAT.md's duplex factors: each direction's rate with both
	 * running over its rate alone, measured the same way, in (0, 1]; 1
	 * when not measured */
	double h2d_duplex, d2h_duplex;
} hoff_calib;

/* Sets c's duplex factors from the rates both at once over those alone
 * (h2d_alone_Bps, d2h_alone_Bps: measured as the both-at-once ones are),
 * capped at 1; 1 where a rate is missing. */
void hoff_calib_duplex(hoff_calib *c, double h2d_alone_Bps,
		       double d2h_alone_Bps);

/* Measures the CPU backend's machine (memcpy rates, alone and (v2) two
 * threads' at once for the duplex factors of its emulated links, thread
 * hand-off latency, a multiply-add loop). HOFF_ENOMEM. */
hoff_status hoff_calibrate_cpu(hoff_calib *c, hoff_err *e);
/* Measures device `device`: cudaMemcpy rates pinned and pageable, alone
 * and h2d with d2h at once (the duplex factors), the latency of a small
 * copy, an FMA kernel, a device-to-device copy and the spin kernel's
 * fixed cost. HOFF_EIO with the CUDA error. */
hoff_status hoff_calibrate_cuda(int32_t device, hoff_calib *c, hoff_err *e);
/* Copy sweep on device `device`: for sizes 4 KiB .. max_bytes (x4), the
 * best of a few pinned h2d copies alone, d2h alone, and both at once, one
 * markdown row each to f. HOFF_EIO with the CUDA error. */
hoff_status hoff_cuda_copy_sweep(int32_t device, int64_t max_bytes, FILE *f,
				 hoff_err *e);

/* The CUDA backend's entry points above, as the hoffopt executable hands
 * them to `run` and `calibrate` when it links hoff_cuda. The libraries
 * never name them: a program that does not link CUDA passes NULL, and
 * `--backend cuda` then says this build has none. */
typedef struct hoff_cuda_api {
	hoff_status (*probe)(int32_t *ndev, hoff_err *e);
	hoff_status (*backend_new)(const hoff_xplan *p, const hoff_exec_opts *o,
				   hoff_backend **out, hoff_err *e);
	hoff_status (*calibrate)(int32_t device, hoff_calib *c, hoff_err *e);
	hoff_status (*copy_sweep)(int32_t device, int64_t max_bytes, FILE *f,
				  hoff_err *e);
} hoff_cuda_api;

#endif
