/* exec_cuda.cu: the CUDA backend. A compute stream and one stream per
 * channel (h2d and d2h of every tier); every dependency is a cudaEvent the
 * waiting stream waits on (cudaStreamWaitEvent), so the host enqueues the
 * whole schedule without ever synchronising; synchronize is the only wait.
 *
 * Device memory is one cudaMalloc arena of the plan's high water, host
 * memory one cudaHostAlloc (pinned) arena of tier copies, so transfers are
 * cudaMemcpyAsync at the plan's offsets and run at the link's real speed;
 * with opts.pace each transfer is bracketed by a kernel that stamps
 * %globaltimer and one that holds the channel until the planned duration
 * has passed, so a tier slower than the link runs at its own rate. An op
 * is a one-thread spin kernel on %globaltimer (nanoseconds, independent
 * of the SM clock, so clock boosts and throttling do not stretch it),
 * lasting the op's time less the fixed cost of a kernel, fitted from two
 * timed spins. Every op and transfer is timed by a pair of events against
 * one start event.
 *
 * The start, two ways. Streamed (default): a spin kernel holds the compute
 * stream (every other stream waits for its end, the start event) while
 * the host enqueues, so the host is ahead when the schedule begins; it
 * lasts 15 us per command, clamped to [20 ms, 5 s]. If the host still
 * enqueues after the start, results say by how much (lag_max), a bound on
 * how late any command may have started for the host's sake; 0 means
 * none did. Graph (opts.cuda_graph): the walk is captured into one CUDA
 * graph (cudaStreamBeginCapture, timing events as external records) and
 * launched at once, so the host cannot lag at all.
 *
 * With --verify, kernels check and write pattern.h's bytes inside each
 * command, as the CPU backend does (exec.h): an op checks its inputs and
 * updates, writes junk, spins, checks its inputs again and writes its
 * patterns ((v2) a recompute the same for the outputs it re-makes, then
 * checks them: the original's bytes); a transfer checks its source, copies,
 * checks its destination (host bytes through the pinned arena's device
 * mapping). The first failure per command is kept by atomicMin in a device
 * array read once at the end. Those kernels run inside the timed intervals:
 * time without
 * --verify. Every CUDA call goes through HOFF_CUDA_TRY, which returns
 * HOFF_EIO with the call and CUDA's message. */
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "exec.h"
}
#include "pattern.h"

#define HOFF_CUDA_TRY(call)                                                    \
	do {                                                                   \
		cudaError_t err_ = (call);                                     \
		if (err_ != cudaSuccess)                                       \
			return hoff_seterr(e, HOFF_EIO, "cuda: %s: %s (%s:%d)", \
					   #call, cudaGetErrorString(err_),    \
					   __FILE__, __LINE__);                \
	} while (0)

static __device__ __forceinline__ unsigned long long global_ns(void)
{
	unsigned long long t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

/* Busy for ns nanoseconds of wall time. */
static __global__ void spin_kernel(long long ns)
{
	unsigned long long t0 = global_ns();
	while ((long long)(global_ns() - t0) < ns) {
	}
}

/* Pacing: the instant a transfer starts, then a hold until ns after it. */
static __global__ void stamp_kernel(unsigned long long *slot)
{
	*slot = global_ns();
}

static __global__ void pace_kernel(const unsigned long long *slot, long long ns)
{
	unsigned long long t0 = *slot;
	while ((long long)(global_ns() - t0) < ns) {
	}
}

/* The n bytes of the tensor whose seed is seed, xor-ed with inv (0, or
 * ~0 for junk). */
static __global__ void fill_kernel(uint8_t *d, int64_t n, uint64_t seed,
				   uint64_t inv)
{
	int64_t stride = (int64_t)gridDim.x * blockDim.x;
	for (int64_t w = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
	     8 * w < n; w += stride) {
		uint64_t x = hoff_pattern_word(seed, (uint64_t)w) ^ inv;
		int64_t base = 8 * w, m = n - base < 8 ? n - base : 8;
		if (m == 8 && ((uintptr_t)(d + base) & 7) == 0) {
			*(uint64_t *)(d + base) = x; /* little-endian */
		} else {
			for (int64_t j = 0; j < m; j++)
				d[base + j] = (uint8_t)(x >> (8 * j));
		}
	}
}

/* Keeps tag | first bad byte in *bad (atomicMin). Reads whole words where
 * aligned: host bytes come over the bus. */
static __global__ void check_kernel(const uint8_t *d, int64_t n, uint64_t seed,
				    unsigned long long *bad,
				    unsigned long long tag)
{
	int64_t stride = (int64_t)gridDim.x * blockDim.x;
	for (int64_t w = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
	     8 * w < n; w += stride) {
		uint64_t x = hoff_pattern_word(seed, (uint64_t)w);
		int64_t base = 8 * w, m = n - base < 8 ? n - base : 8;
		if (m == 8 && ((uintptr_t)(d + base) & 7) == 0 &&
		    *(const uint64_t *)(d + base) == x)
			continue;
		for (int64_t j = 0; j < m; j++)
			if (d[base + j] != (uint8_t)(x >> (8 * j))) {
				atomicMin(bad,
					  (unsigned long long)hoff_bad_code(
						  tag, (uint64_t)(base + j)));
				break;
			}
	}
}

static __global__ void flip_kernel(uint8_t *p) { *p ^= 0x5a; }

static __global__ void fma_kernel(float *out, int iters)
{
	float a[8];
	for (int j = 0; j < 8; j++)
		a[j] = threadIdx.x * 1e-3f + j;
	for (int i = 0; i < iters; i++)
		for (int j = 0; j < 8; j++)
			a[j] = a[j] * 0.9999999f + 1e-7f;
	float s = 0;
	for (int j = 0; j < 8; j++)
		s += a[j];
	if (s == 12345.0f) /* never: keeps the loop alive */
		out[threadIdx.x] = s;
}

static unsigned grid_for(int64_t n)
{
	int64_t words = (n + 7) / 8, b = (words + 255) / 256;
	return (unsigned)(b < 1 ? 1 : b > 4096 ? 4096 : b);
}

typedef struct cuda_ctx {
	const hoff_xplan *p;
	hoff_exec_opts o;
	uint8_t *dev;         /* device arena */
	uint8_t *host;        /* pinned host arena */
	uint8_t *host_dptr;   /* the host arena as the device sees it */
	cudaStream_t *s;      /* (nstreams) */
	int32_t nstreams_made;
	cudaEvent_t *done;    /* (nev) dependencies, no timing */
	cudaEvent_t *t_beg, *t_end; /* (nev) timing pairs */
	int64_t nev_made;
	cudaEvent_t *join; /* (nstreams) graph: each stream back into 0 */
	int32_t njoin_made;
	cudaEvent_t t0, t_enq; /* the start; the host's last enqueue */
	bool t0_made, t_enq_made;
	cudaStream_t aux;      /* an idle stream: t_enq's */
	bool aux_made;
	bool capturing; /* graph: stream 0 is capturing */
	cudaGraph_t graph;
	cudaGraphExec_t graph_exec;
	unsigned long long *d_bad;   /* (nev + 1) the last is for check() */
	unsigned long long *d_stamp; /* (nxfers + 1) pacing */
	double launch_s;
} cuda_ctx;

/* Two timing events (both or neither made). */
static hoff_status event_pair(cudaEvent_t *a, cudaEvent_t *b, hoff_err *e)
{
	HOFF_CUDA_TRY(cudaEventCreate(a));
	if (cudaEventCreate(b) != cudaSuccess) {
		cudaEventDestroy(*a);
		return hoff_seterr(e, HOFF_EIO, "cuda: cannot create an event");
	}
	return HOFF_OK;
}

/* The fixed cost of a spin kernel, from two spins of different lengths
 * (best of three each), and the op clock's rate as the events see it
 * (1e9 for a faithful %globaltimer). */
static hoff_status calibrate_spin(cudaStream_t s, double *hz, double *launch,
				  hoff_err *e)
{
	cudaEvent_t a, b;
	hoff_status st = event_pair(&a, &b, e);
	if (st != HOFF_OK)
		return st;
	const long long c[2] = {200000, 4000000}; /* ns */
	float best[2] = {1e30f, 1e30f};
	spin_kernel<<<1, 1, 0, s>>>(c[0]); /* warm up */
	cudaError_t err = cudaGetLastError();
	for (int r = 0; err == cudaSuccess && r < 3; r++)
		for (int i = 0; err == cudaSuccess && i < 2; i++) {
			float ms = 0;
			if ((err = cudaEventRecord(a, s)) != cudaSuccess)
				break;
			spin_kernel<<<1, 1, 0, s>>>(c[i]);
			if ((err = cudaGetLastError()) != cudaSuccess ||
			    (err = cudaEventRecord(b, s)) != cudaSuccess ||
			    (err = cudaEventSynchronize(b)) != cudaSuccess ||
			    (err = cudaEventElapsedTime(&ms, a, b)) !=
				    cudaSuccess)
				break;
			if (ms < best[i])
				best[i] = ms;
		}
	cudaEventDestroy(a);
	cudaEventDestroy(b);
	HOFF_CUDA_TRY(err);
	double t0 = best[0] * 1e-3, t1 = best[1] * 1e-3;
	if (!(t1 > t0))
		return hoff_seterr(e, HOFF_EIO,
				   "cuda: the spin kernel cannot be calibrated "
				   "(%g s vs %g s)",
				   t0, t1);
	*hz = (double)(c[1] - c[0]) / (t1 - t0);
	*launch = t0 - (double)c[0] * 1e-9;
	if (*launch < 0)
		*launch = 0;
	return HOFF_OK;
}

extern "C" hoff_status hoff_cuda_probe(int32_t *ndev, hoff_err *e)
{
	int n = 0;
	*ndev = 0;
	cudaError_t err = cudaGetDeviceCount(&n);
	if (err != cudaSuccess)
		return hoff_seterr(e, HOFF_EIO, "no CUDA device: %s",
				   cudaGetErrorString(err));
	if (n == 0)
		return hoff_seterr(e, HOFF_EIO, "no CUDA device found");
	*ndev = n;
	return HOFF_OK;
}

/* Selects device `device`, saying why when it cannot. */
static hoff_status probe(int32_t device, hoff_err *e)
{
	int32_t n;
	hoff_status st = hoff_cuda_probe(&n, e);
	if (st != HOFF_OK)
		return st;
	if (device < 0 || device >= n)
		return hoff_seterr(e, HOFF_EIO,
				   "CUDA device %d does not exist (%d found)",
				   device, n);
	HOFF_CUDA_TRY(cudaSetDevice(device));
	return HOFF_OK;
}

/* A timing record: an external record node when captured into a graph. */
static cudaError_t time_record(cuda_ctx *c, cudaEvent_t ev, cudaStream_t s)
{
	if (c->o.cuda_graph)
		return cudaEventRecordWithFlags(ev, s, cudaEventRecordExternal);
	return cudaEventRecord(ev, s);
}

static hoff_status c_wait(hoff_backend *b, int32_t stream, int64_t ev,
			  hoff_err *e)
{
	cuda_ctx *c = (cuda_ctx *)b->ctx;
	HOFF_CUDA_TRY(cudaStreamWaitEvent(c->s[stream], c->done[ev], 0));
	return HOFF_OK;
}

static hoff_status c_record(hoff_backend *b, int32_t stream, int64_t ev,
			    hoff_err *e)
{
	cuda_ctx *c = (cuda_ctx *)b->ctx;
	HOFF_CUDA_TRY(cudaEventRecord(c->done[ev], c->s[stream]));
	return HOFF_OK;
}

/* Checks n device bytes at d against the seed into d_bad[ev]. */
static hoff_status check_on(cuda_ctx *c, cudaStream_t s, const uint8_t *d,
			    int64_t n, uint64_t seed, int64_t ev,
			    unsigned long long tag, hoff_err *e)
{
	if (n <= 0)
		return HOFF_OK;
	check_kernel<<<grid_for(n), 256, 0, s>>>(d, n, seed, c->d_bad + ev,
						 tag);
	HOFF_CUDA_TRY(cudaGetLastError());
	return HOFF_OK;
}

static hoff_status fill_on(cudaStream_t s, uint8_t *d, int64_t n, uint64_t seed,
			   uint64_t inv, hoff_err *e)
{
	if (n <= 0)
		return HOFF_OK;
	fill_kernel<<<grid_for(n), 256, 0, s>>>(d, n, seed, inv);
	HOFF_CUDA_TRY(cudaGetLastError());
	return HOFF_OK;
}

/* Compute command k's verify kernels, as the CPU backend's op_checks and
 * op_writes. At the start (end false): its op's inputs and updates are
 * checked (phase 0), then junk (the patterns xor ~0) written to its
 * outputs and updates. At the end: its inputs are checked again, not those
 * it also updates (phase 1), then its outputs' patterns written (a
 * recompute's: those it re-makes, then checked, items after the inputs
 * and updates, the corrupt hook flipping a byte of its first one before)
 * and its updates'. */
static hoff_status op_verify(cuda_ctx *c, int32_t k, bool end, hoff_err *e)
{
	const hoff_xplan *p = c->p;
	const hoff_graph *g = p->g;
	const hoff_xop *o = &p->op[k];
	int32_t op = o->op;
	cudaStream_t s = c->s[0];
	uint32_t phase = end ? 1 : 0;
	uint64_t inv = end ? 0 : ~0ULL;
	bool check = end && o->recompute;
	hoff_status st;
	uint64_t item = 0;
	for (int64_t j = g->in_off[op]; j < g->in_off[op + 1]; j++, item++) {
		int64_t q = o->in_at + (int64_t)item;
		if ((phase == 0 || !hoff_op_updates(g, op, g->in[j])) &&
		    (st = check_on(c, s, c->dev + p->in_dev[q],
				   g->tensor[g->in[j]].bytes,
				   hoff_pattern_seed(g->in[j], p->in_ver[q]), k,
				   hoff_bad_tag(phase, item), e)) != HOFF_OK)
			return st;
	}
	for (int64_t j = g->upd_off[op]; phase == 0 && j < g->upd_off[op + 1];
	     j++, item++) {
		int64_t q = o->upd_at + (j - g->upd_off[op]);
		if ((st = check_on(c, s, c->dev + p->upd_dev[q],
				   g->tensor[g->upd[j]].bytes,
				   hoff_pattern_seed(g->upd[j],
						     p->upd_ver[q] - 1),
				   k, hoff_bad_tag(0, item), e)) != HOFF_OK)
			return st;
	}
	item = (uint64_t)(hoff_op_count(g, op, HOFF_USE_IN) +
			  hoff_op_count(g, op, HOFF_USE_UPD));
	for (int64_t j = g->out_off[op]; j < g->out_off[op + 1]; j++, item++) {
		int64_t off = p->out_dev[o->out_at + (j - g->out_off[op])];
		if (off == HOFF_NONE)
			continue; /* resident: a recompute leaves it */
		int64_t n = g->tensor[g->out[j]].bytes;
		uint64_t seed = hoff_pattern_seed(g->out[j], 0);
		if ((st = fill_on(s, c->dev + off, n, seed, inv, e)) != HOFF_OK)
			return st;
		if (!check)
			continue;
		if (c->o.corrupt_step == o->step && j == g->out_off[op]) {
			flip_kernel<<<1, 1, 0, s>>>(c->dev + off + n / 2);
			HOFF_CUDA_TRY(cudaGetLastError());
		}
		if ((st = check_on(c, s, c->dev + off, n, seed, k,
				   hoff_bad_tag(1, item), e)) != HOFF_OK)
			return st;
	}
	for (int64_t j = g->upd_off[op]; j < g->upd_off[op + 1]; j++) {
		int64_t q = o->upd_at + (j - g->upd_off[op]);
		if ((st = fill_on(s, c->dev + p->upd_dev[q],
				  g->tensor[g->upd[j]].bytes,
				  hoff_pattern_seed(g->upd[j], p->upd_ver[q]),
				  inv, e)) != HOFF_OK)
			return st;
	}
	return HOFF_OK;
}

static hoff_status c_run_op(hoff_backend *b, int32_t k, hoff_err *e)
{
	cuda_ctx *c = (cuda_ctx *)b->ctx;
	const hoff_xplan *p = c->p;
	cudaStream_t s = c->s[0];
	hoff_status st;
	HOFF_CUDA_TRY(time_record(c, c->t_beg[k], s));
	if (c->o.verify && (st = op_verify(c, k, false, e)) != HOFF_OK)
		return st;
	double ns = (hoff_s(p->op[k].dur_ps) - c->launch_s) * 1e9;
	if (ns >= 1) {
		spin_kernel<<<1, 1, 0, s>>>((long long)ns);
		HOFF_CUDA_TRY(cudaGetLastError());
	}
	if (c->o.verify && (st = op_verify(c, k, true, e)) != HOFF_OK)
		return st;
	HOFF_CUDA_TRY(time_record(c, c->t_end[k], s));
	return HOFF_OK;
}

static hoff_status c_copy(hoff_backend *b, int64_t x, hoff_err *e)
{
	cuda_ctx *c = (cuda_ctx *)b->ctx;
	const hoff_xplan *p = c->p;
	const hoff_xfer *xf = &p->xfer[x];
	int64_t ev = hoff_xplan_xev(p, x);
	cudaStream_t s = c->s[xf->stream];
	uint8_t *d = c->dev + xf->dev_off, *h = c->host + xf->host_off;
	uint8_t *hd = c->host_dptr + xf->host_off; /* h, device-side */
	uint64_t seed = hoff_pattern_seed(xf->tensor, xf->version);
	hoff_status st;
	HOFF_CUDA_TRY(time_record(c, c->t_beg[ev], s));
	if (c->o.verify &&
	    (st = check_on(c, s, xf->store ? d : hd, xf->bytes, seed, ev,
			   hoff_bad_tag(0, 0), e)) != HOFF_OK)
		return st;
	bool slow = xf->step == c->o.slow_step; /* test hook */
	if (c->o.pace || slow) {
		stamp_kernel<<<1, 1, 0, s>>>(c->d_stamp + x);
		HOFF_CUDA_TRY(cudaGetLastError());
	}
	if (xf->store)
		HOFF_CUDA_TRY(cudaMemcpyAsync(h, d, (size_t)xf->bytes,
					      cudaMemcpyDeviceToHost, s));
	else
		HOFF_CUDA_TRY(cudaMemcpyAsync(d, h, (size_t)xf->bytes,
					      cudaMemcpyHostToDevice, s));
	if (c->o.corrupt_step == xf->step) { /* test hook: flip a byte */
		flip_kernel<<<1, 1, 0, s>>>((xf->store ? hd : d) +
					    xf->bytes / 2);
		HOFF_CUDA_TRY(cudaGetLastError());
	}
	if (c->o.pace || slow) {
		double ns =
			(hoff_s(xf->dur_ps) * (slow ? HOFF_SLOW_FACTOR : 1) -
			 c->launch_s) *
			1e9;
		pace_kernel<<<1, 1, 0, s>>>(c->d_stamp + x,
					    ns > 0 ? (long long)ns : 0);
		HOFF_CUDA_TRY(cudaGetLastError());
	}
	if (c->o.verify &&
	    (st = check_on(c, s, xf->store ? hd : d, xf->bytes, seed, ev,
			   hoff_bad_tag(1, 0), e)) != HOFF_OK)
		return st;
	HOFF_CUDA_TRY(time_record(c, c->t_end[ev], s));
	return HOFF_OK;
}

static hoff_status c_synchronize(hoff_backend *b, hoff_err *e)
{
	cuda_ctx *c = (cuda_ctx *)b->ctx;
	if (!c->o.cuda_graph) {
		/* Everything is enqueued: an event on an idle stream
		 * completes now, telling whether the host finished before
		 * the start event. */
		HOFF_CUDA_TRY(cudaEventRecord(c->t_enq, c->aux));
		HOFF_CUDA_TRY(cudaDeviceSynchronize());
		HOFF_CUDA_TRY(cudaGetLastError());
		return HOFF_OK;
	}
	/* Every stream joins stream 0, which ends the capture. */
	for (int32_t i = 1; i < c->p->nstreams; i++) {
		HOFF_CUDA_TRY(cudaEventRecord(c->join[i], c->s[i]));
		HOFF_CUDA_TRY(cudaStreamWaitEvent(c->s[0], c->join[i], 0));
	}
	c->capturing = false;
	HOFF_CUDA_TRY(cudaStreamEndCapture(c->s[0], &c->graph));
	HOFF_CUDA_TRY(cudaGraphInstantiate(&c->graph_exec, c->graph, 0));
	HOFF_CUDA_TRY(cudaGraphLaunch(c->graph_exec, c->s[0]));
	HOFF_CUDA_TRY(cudaStreamSynchronize(c->s[0]));
	HOFF_CUDA_TRY(cudaGetLastError());
	return HOFF_OK;
}

static hoff_status elapsed_ps(cudaEvent_t t0, cudaEvent_t t, int64_t *ps,
			      hoff_err *e)
{
	float ms = 0;
	HOFF_CUDA_TRY(cudaEventElapsedTime(&ms, t0, t));
	*ps = (int64_t)((double)ms * 1e9 + 0.5);
	return HOFF_OK;
}

static hoff_status c_results(hoff_backend *b, hoff_exec_result *r,
			     hoff_err *e)
{
	cuda_ctx *c = (cuda_ctx *)b->ctx;
	const hoff_xplan *p = c->p;
	hoff_status st;
	for (int32_t k = 0; k < p->nops; k++)
		if ((st = elapsed_ps(c->t0, c->t_beg[k], &r->op_start_ps[k],
				     e)) != HOFF_OK ||
		    (st = elapsed_ps(c->t0, c->t_end[k], &r->op_end_ps[k], e)) !=
			    HOFF_OK)
			return st;
	for (int64_t x = 0; x < p->nxfers; x++) {
		int64_t ev = hoff_xplan_xev(p, x);
		if ((st = elapsed_ps(c->t0, c->t_beg[ev], &r->x_start_ps[x],
				     e)) != HOFF_OK ||
		    (st = elapsed_ps(c->t0, c->t_end[ev], &r->x_end_ps[x],
				     e)) != HOFF_OK)
			return st;
	}
	int64_t late = 0;
	if (!c->o.cuda_graph &&
	    (st = elapsed_ps(c->t0, c->t_enq, &late, e)) != HOFF_OK)
		return st;
	r->lag_max_ps = late > 0 ? late : 0; /* the host enqueued past t0 */
	size_t nev = (size_t)p->nops + (size_t)p->nxfers;
	if (nev) {
		unsigned long long *bad =
			(unsigned long long *)hoff_alloc(nev, sizeof *bad);
		if (!bad)
			return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
		cudaError_t err = cudaMemcpy(bad, c->d_bad, nev * sizeof *bad,
					     cudaMemcpyDeviceToHost);
		for (size_t i = 0; err == cudaSuccess && i < nev; i++)
			r->bad[i] = bad[i] == HOFF_BAD_NONE ? -1
							    : (int64_t)bad[i];
		free(bad);
		HOFF_CUDA_TRY(err);
	}
	return HOFF_OK;
}

static hoff_status c_check(hoff_backend *b, const hoff_xregion *g,
			   int64_t *bad, hoff_err *e)
{
	cuda_ctx *c = (cuda_ctx *)b->ctx;
	if (g->tier != HOFF_DEVICE) {
		*bad = hoff_pattern_check(c->host + g->off, g->bytes, g->tensor,
					  g->version);
		return HOFF_OK;
	}
	int64_t slot = (int64_t)c->p->nops + c->p->nxfers;
	unsigned long long v = HOFF_BAD_NONE;
	HOFF_CUDA_TRY(cudaMemcpy(c->d_bad + slot, &v, sizeof v,
				 cudaMemcpyHostToDevice));
	if (g->bytes > 0) {
		check_kernel<<<grid_for(g->bytes), 256>>>(
			c->dev + g->off, g->bytes,
			hoff_pattern_seed(g->tensor, g->version),
			c->d_bad + slot, 0);
		HOFF_CUDA_TRY(cudaGetLastError());
	}
	HOFF_CUDA_TRY(cudaMemcpy(&v, c->d_bad + slot, sizeof v,
				 cudaMemcpyDeviceToHost));
	*bad = v == HOFF_BAD_NONE ? -1 : (int64_t)(v & HOFF_BAD_BYTE_MAX);
	return HOFF_OK;
}

static void c_free(hoff_backend *b)
{
	cuda_ctx *c = (cuda_ctx *)b->ctx;
	if (c) {
		if (c->capturing) { /* a failed walk: drop the capture */
			cudaGraph_t gr = NULL;
			if (cudaStreamEndCapture(c->s[0], &gr) == cudaSuccess &&
			    gr)
				cudaGraphDestroy(gr);
			cudaGetLastError();
		}
		/* Errors are moot while tearing down; leave nothing queued. */
		cudaDeviceSynchronize();
		if (c->graph_exec)
			cudaGraphExecDestroy(c->graph_exec);
		if (c->graph)
			cudaGraphDestroy(c->graph);
		for (int64_t i = 0; i < c->nev_made; i++) {
			cudaEventDestroy(c->done[i]);
			cudaEventDestroy(c->t_beg[i]);
			cudaEventDestroy(c->t_end[i]);
		}
		for (int32_t i = 0; i < c->njoin_made; i++)
			cudaEventDestroy(c->join[i]);
		if (c->t0_made)
			cudaEventDestroy(c->t0);
		if (c->t_enq_made)
			cudaEventDestroy(c->t_enq);
		if (c->aux_made)
			cudaStreamDestroy(c->aux);
		for (int32_t i = 0; i < c->nstreams_made; i++)
			cudaStreamDestroy(c->s[i]);
		if (c->dev)
			cudaFree(c->dev);
		if (c->d_bad)
			cudaFree(c->d_bad);
		if (c->d_stamp)
			cudaFree(c->d_stamp);
		if (c->host)
			cudaFreeHost(c->host);
		free(c->s);
		free(c->done);
		free(c->t_beg);
		free(c->t_end);
		free(c->join);
		free(c);
	}
	free(b);
}

static const hoff_backend_i cuda_iface = {
	"cuda",     c_wait,    c_record,   c_run_op, c_copy,
	c_copy,     c_synchronize, c_results, c_check, c_free,
};

static hoff_status setup(hoff_backend *b, cuda_ctx *c, hoff_err *e)
{
	const hoff_xplan *p = c->p;
	int64_t nev = (int64_t)p->nops + p->nxfers;
	hoff_status st;
	if ((st = probe(c->o.device, e)) != HOFF_OK)
		return st;
	cudaDeviceProp prop;
	HOFF_CUDA_TRY(cudaGetDeviceProperties(&prop, c->o.device));
	snprintf(b->device, sizeof b->device, "%.100s (CUDA device %d)",
		 prop.name, c->o.device);
	c->s = (cudaStream_t *)hoff_zalloc((size_t)p->nstreams, sizeof *c->s);
	c->join = (cudaEvent_t *)hoff_zalloc((size_t)p->nstreams,
					     sizeof *c->join);
	c->done = (cudaEvent_t *)hoff_zalloc((size_t)nev + 1, sizeof *c->done);
	c->t_beg = (cudaEvent_t *)hoff_zalloc((size_t)nev + 1,
					      sizeof *c->t_beg);
	c->t_end = (cudaEvent_t *)hoff_zalloc((size_t)nev + 1,
					      sizeof *c->t_end);
	if (!c->s || !c->join || !c->done || !c->t_beg || !c->t_end)
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	for (; c->nstreams_made < p->nstreams; c->nstreams_made++)
		HOFF_CUDA_TRY(cudaStreamCreateWithFlags(
			&c->s[c->nstreams_made], cudaStreamNonBlocking));
	for (; c->njoin_made < p->nstreams; c->njoin_made++)
		HOFF_CUDA_TRY(cudaEventCreateWithFlags(&c->join[c->njoin_made],
						       cudaEventDisableTiming));
	for (; c->nev_made < nev; c->nev_made++) {
		int64_t i = c->nev_made;
		HOFF_CUDA_TRY(cudaEventCreateWithFlags(&c->done[i],
						       cudaEventDisableTiming));
		if (cudaEventCreate(&c->t_beg[i]) != cudaSuccess) {
			cudaEventDestroy(c->done[i]);
			return hoff_seterr(e, HOFF_EIO,
					   "cuda: cannot create %lld events",
					   (long long)(3 * nev));
		}
		if (cudaEventCreate(&c->t_end[i]) != cudaSuccess) {
			cudaEventDestroy(c->done[i]);
			cudaEventDestroy(c->t_beg[i]);
			return hoff_seterr(e, HOFF_EIO,
					   "cuda: cannot create %lld events",
					   (long long)(3 * nev));
		}
	}
	HOFF_CUDA_TRY(cudaEventCreate(&c->t0));
	c->t0_made = true;
	HOFF_CUDA_TRY(cudaEventCreate(&c->t_enq));
	c->t_enq_made = true;
	HOFF_CUDA_TRY(cudaStreamCreateWithFlags(&c->aux, cudaStreamNonBlocking));
	c->aux_made = true;
	size_t dev_bytes = (size_t)(p->arena_bytes > 0 ? p->arena_bytes : 1);
	size_t host_bytes = (size_t)(p->host_bytes > 0 ? p->host_bytes : 1);
	cudaError_t err = cudaMalloc((void **)&c->dev, dev_bytes);
	if (err != cudaSuccess) {
		c->dev = NULL;
		return hoff_seterr(e, HOFF_EIO,
				   "cuda: cannot allocate a %zu-byte device "
				   "arena: %s (try --size-scale)",
				   dev_bytes, cudaGetErrorString(err));
	}
	err = cudaHostAlloc((void **)&c->host, host_bytes,
			    cudaHostAllocMapped | cudaHostAllocPortable);
	if (err != cudaSuccess) {
		c->host = NULL;
		return hoff_seterr(e, HOFF_EIO,
				   "cuda: cannot pin a %zu-byte host arena: %s "
				   "(try --size-scale)",
				   host_bytes, cudaGetErrorString(err));
	}
	HOFF_CUDA_TRY(cudaHostGetDevicePointer((void **)&c->host_dptr,
					       c->host, 0));
	HOFF_CUDA_TRY(cudaMalloc((void **)&c->d_bad,
				 ((size_t)nev + 1) * sizeof *c->d_bad));
	HOFF_CUDA_TRY(cudaMalloc((void **)&c->d_stamp,
				 ((size_t)p->nxfers + 1) * sizeof *c->d_stamp));
	cudaStream_t s0 = c->s[0];
	HOFF_CUDA_TRY(cudaMemsetAsync(
		c->d_bad, 0xff, ((size_t)nev + 1) * sizeof *c->d_bad, s0));
	HOFF_CUDA_TRY(cudaMemsetAsync(c->dev, 0, dev_bytes, s0));
	memset(c->host, 0, host_bytes);
	if (c->o.verify)
		for (int64_t i = 0; i < p->ninit; i++) {
			const hoff_xregion *g = &p->init[i];
			if (g->tier != HOFF_DEVICE) {
				hoff_pattern_fill(c->host + g->off, g->bytes,
						  g->tensor, g->version);
				continue;
			}
			if ((st = fill_on(s0, c->dev + g->off, g->bytes,
					  hoff_pattern_seed(g->tensor,
							    g->version),
					  0, e)) != HOFF_OK)
				return st;
		}
	double hz;
	if ((st = calibrate_spin(s0, &hz, &c->launch_s, e)) != HOFF_OK)
		return st;
	HOFF_CUDA_TRY(cudaStreamSynchronize(s0));
	if (c->o.cuda_graph) {
		/* The start is the graph's first node. */
		HOFF_CUDA_TRY(cudaStreamBeginCapture(
			s0, cudaStreamCaptureModeThreadLocal));
		c->capturing = true;
		HOFF_CUDA_TRY(time_record(c, c->t0, s0));
	} else {
		/* The gate: hold the start while the host enqueues. */
		double gate_s = 15e-6 * (double)(nev + p->nwaits);
		gate_s = gate_s < 0.02 ? 0.02 : gate_s > 5 ? 5 : gate_s;
		spin_kernel<<<1, 1, 0, s0>>>((long long)(gate_s * 1e9));
		HOFF_CUDA_TRY(cudaGetLastError());
		HOFF_CUDA_TRY(cudaEventRecord(c->t0, s0));
	}
	/* A plain record for the waits: in a capture, a timing record (an
	 * external node) does not order other streams. */
	HOFF_CUDA_TRY(cudaEventRecord(c->join[0], s0));
	for (int32_t i = 1; i < p->nstreams; i++)
		HOFF_CUDA_TRY(cudaStreamWaitEvent(c->s[i], c->join[0], 0));
	return HOFF_OK;
}

extern "C" hoff_status hoff_backend_cuda_new(const hoff_xplan *p,
					     const hoff_exec_opts *o,
					     hoff_backend **out, hoff_err *e)
{
	HOFF_REQUIRE(p && o && out);
	*out = NULL;
	hoff_backend *b =
		hoff_backend_alloc(&cuda_iface, p, o, sizeof(cuda_ctx));
	if (!b)
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	cuda_ctx *c = (cuda_ctx *)b->ctx;
	c->p = p;
	c->o = *o;
	hoff_status st = setup(b, c, e);
	if (st != HOFF_OK) {
		c_free(b);
		return st;
	}
	*out = b;
	return HOFF_OK;
}

/* ---- calibration ---- */

/* Best rate of reps copies of n bytes timed by an event pair. */
static hoff_status copy_rate(void *dst, const void *src, size_t n,
			     cudaMemcpyKind kind, cudaStream_t s, int reps,
			     double *rate, hoff_err *e)
{
	cudaEvent_t a, b;
	hoff_status st = event_pair(&a, &b, e);
	if (st != HOFF_OK)
		return st;
	cudaError_t err = cudaSuccess;
	float best = 1e30f;
	for (int i = 0; err == cudaSuccess && i < reps; i++) {
		float ms = 0;
		if ((err = cudaEventRecord(a, s)) != cudaSuccess ||
		    (err = cudaMemcpyAsync(dst, src, n, kind, s)) !=
			    cudaSuccess ||
		    (err = cudaEventRecord(b, s)) != cudaSuccess ||
		    (err = cudaEventSynchronize(b)) != cudaSuccess ||
		    (err = cudaEventElapsedTime(&ms, a, b)) != cudaSuccess)
			break;
		if (ms < best)
			best = ms;
	}
	cudaEventDestroy(a);
	cudaEventDestroy(b);
	HOFF_CUDA_TRY(err);
	*rate = (double)n / (best * 1e-3);
	return HOFF_OK;
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return (x > y) - (x < y);
}

typedef struct cal_mem {
	uint8_t *pinned, *pinned2, *pageable, *dev, *dev2;
	float *out;
	cudaStream_t s, s2;
	bool s_made, s2_made;
} cal_mem;

static void cal_free(cal_mem *m)
{
	cudaDeviceSynchronize();
	if (m->pinned)
		cudaFreeHost(m->pinned);
	if (m->pinned2)
		cudaFreeHost(m->pinned2);
	if (m->s2_made)
		cudaStreamDestroy(m->s2);
	free(m->pageable);
	if (m->dev)
		cudaFree(m->dev);
	if (m->dev2)
		cudaFree(m->dev2);
	if (m->out)
		cudaFree(m->out);
	if (m->s_made)
		cudaStreamDestroy(m->s);
}

/* Best times of reps rounds of an h2d copy (s) and a d2h copy (s2) of n
 * bytes each, started together; alone (both = false) one after the
 * other. */
static hoff_status both_ways(cal_mem *m, size_t n, int reps, bool both,
			     double *h2d_s, double *d2h_s, hoff_err *e)
{
	cudaEvent_t ev[4];
	int made = 0;
	cudaError_t err = cudaSuccess;
	for (; made < 4 && err == cudaSuccess; made++)
		err = cudaEventCreate(&ev[made]);
	if (err != cudaSuccess)
		made--;
	float best[2] = {1e30f, 1e30f};
	for (int r = 0; err == cudaSuccess && r < reps; r++) {
		float ms[2] = {0, 0};
		cudaStream_t s2 = both ? m->s2 : m->s;
		if ((err = cudaEventRecord(ev[0], m->s)) != cudaSuccess ||
		    (err = cudaStreamWaitEvent(m->s2, ev[0], 0)) !=
			    cudaSuccess ||
		    (err = cudaMemcpyAsync(m->dev, m->pinned, n,
					   cudaMemcpyHostToDevice, m->s)) !=
			    cudaSuccess ||
		    (err = cudaEventRecord(ev[1], m->s)) != cudaSuccess ||
		    (!both &&
		     (err = cudaEventRecord(ev[2], m->s)) != cudaSuccess) ||
		    (err = cudaMemcpyAsync(m->pinned2, m->dev2, n,
					   cudaMemcpyDeviceToHost, s2)) !=
			    cudaSuccess ||
		    (err = cudaEventRecord(ev[3], s2)) != cudaSuccess ||
		    (err = cudaDeviceSynchronize()) != cudaSuccess ||
		    (err = cudaEventElapsedTime(&ms[0], ev[0], ev[1])) !=
			    cudaSuccess ||
		    (err = cudaEventElapsedTime(&ms[1], both ? ev[0] : ev[2],
						ev[3])) != cudaSuccess)
			break;
		for (int i = 0; i < 2; i++)
			if (ms[i] < best[i])
				best[i] = ms[i];
	}
	for (int i = 0; i < made; i++)
		cudaEventDestroy(ev[i]);
	HOFF_CUDA_TRY(err);
	*h2d_s = best[0] * 1e-3;
	*d2h_s = best[1] * 1e-3;
	return HOFF_OK;
}

/* calibrate's and the sweep's buffers: two streams, two pinned and two
 * device buffers of n bytes. */
static hoff_status cal_alloc(cal_mem *m, size_t n, hoff_err *e)
{
	HOFF_CUDA_TRY(cudaStreamCreateWithFlags(&m->s, cudaStreamNonBlocking));
	m->s_made = true;
	HOFF_CUDA_TRY(cudaStreamCreateWithFlags(&m->s2, cudaStreamNonBlocking));
	m->s2_made = true;
	HOFF_CUDA_TRY(
		cudaHostAlloc((void **)&m->pinned, n, cudaHostAllocDefault));
	HOFF_CUDA_TRY(
		cudaHostAlloc((void **)&m->pinned2, n, cudaHostAllocDefault));
	HOFF_CUDA_TRY(cudaMalloc((void **)&m->dev, n));
	HOFF_CUDA_TRY(cudaMalloc((void **)&m->dev2, n));
	return HOFF_OK;
}

static hoff_status calibrate(int32_t device, hoff_calib *c, cal_mem *m,
			     hoff_err *e)
{
	hoff_status st = probe(device, e);
	if (st != HOFF_OK)
		return st;
	cudaDeviceProp prop;
	HOFF_CUDA_TRY(cudaGetDeviceProperties(&prop, device));
	snprintf(c->device, sizeof c->device, "%.120s", prop.name);
	c->memory_bytes = (int64_t)prop.totalGlobalMem;
	size_t n = (size_t)256 << 20;
	if ((st = cal_alloc(m, n, e)) != HOFF_OK)
		return st;
	m->pageable = (uint8_t *)malloc(n);
	if (!m->pageable)
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	memset(m->pinned, 1, n);
	memset(m->pageable, 1, n);
	if ((st = copy_rate(m->dev, m->pinned, n, cudaMemcpyHostToDevice, m->s,
			    5, &c->h2d_Bps, e)) != HOFF_OK ||
	    (st = copy_rate(m->pinned, m->dev, n, cudaMemcpyDeviceToHost, m->s,
			    5, &c->d2h_Bps, e)) != HOFF_OK ||
	    (st = copy_rate(m->dev, m->pageable, n, cudaMemcpyHostToDevice,
			    m->s, 3, &c->h2d_pageable_Bps, e)) != HOFF_OK ||
	    (st = copy_rate(m->pageable, m->dev, n, cudaMemcpyDeviceToHost,
			    m->s, 3, &c->d2h_pageable_Bps, e)) != HOFF_OK ||
	    (st = copy_rate(m->dev2, m->dev, n, cudaMemcpyDeviceToDevice, m->s,
			    5, &c->mem_bandwidth_Bps, e)) != HOFF_OK)
		return st;
	c->mem_bandwidth_Bps *= 2; /* a copy reads and writes */
	double th, td;
	if ((st = both_ways(m, n, 3, true, &th, &td, e)) != HOFF_OK)
		return st;
	c->h2d_both_Bps = th > 0 ? (double)n / th : 0;
	c->d2h_both_Bps = td > 0 ? (double)n / td : 0;
	/* The factors against the same measurement one direction at a time
	 * (the best of 3 rounds each, as for both at once). */
	if ((st = both_ways(m, n, 3, false, &th, &td, e)) != HOFF_OK)
		return st;
	hoff_calib_duplex(c, th > 0 ? (double)n / th : 0,
			  td > 0 ? (double)n / td : 0);
	/* Latency: the median of small pinned copies. */
	enum { N = 101 };
	float ms[N];
	cudaEvent_t a, b;
	if ((st = event_pair(&a, &b, e)) != HOFF_OK)
		return st;
	cudaError_t err = cudaSuccess;
	for (int i = 0; err == cudaSuccess && i < N; i++) {
		if ((err = cudaEventRecord(a, m->s)) != cudaSuccess ||
		    (err = cudaMemcpyAsync(m->dev, m->pinned, 4,
					   cudaMemcpyHostToDevice, m->s)) !=
			    cudaSuccess ||
		    (err = cudaEventRecord(b, m->s)) != cudaSuccess ||
		    (err = cudaEventSynchronize(b)) != cudaSuccess)
			break;
		err = cudaEventElapsedTime(&ms[i], a, b);
	}
	/* Compute: FMA throughput over every SM. */
	int sms = 0, iters = 4096;
	float fma_ms = 0;
	if (err == cudaSuccess)
		err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount,
					     device);
	if (err == cudaSuccess)
		err = cudaMalloc((void **)&m->out, 256 * sizeof(float));
	for (int r = 0; err == cudaSuccess && r < 2; r++) {
		if ((err = cudaEventRecord(a, m->s)) != cudaSuccess)
			break;
		fma_kernel<<<sms * 8, 256, 0, m->s>>>(m->out, iters);
		if ((err = cudaGetLastError()) != cudaSuccess ||
		    (err = cudaEventRecord(b, m->s)) != cudaSuccess ||
		    (err = cudaEventSynchronize(b)) != cudaSuccess)
			break;
		err = cudaEventElapsedTime(&fma_ms, a, b);
	}
	cudaEventDestroy(a);
	cudaEventDestroy(b);
	HOFF_CUDA_TRY(err);
	qsort(ms, N, sizeof ms[0], cmp_float);
	c->latency_s = ms[N / 2] * 1e-3;
	c->flops_per_s = fma_ms > 0 ? 16.0 * iters * (double)sms * 8 * 256 /
					      (fma_ms * 1e-3)
				    : 0;
	return calibrate_spin(m->s, &c->spin_hz, &c->op_overhead_s, e);
}

extern "C" hoff_status hoff_calibrate_cuda(int32_t device, hoff_calib *c,
					   hoff_err *e)
{
	memset(c, 0, sizeof *c);
	cal_mem m;
	memset(&m, 0, sizeof m);
	hoff_status st = calibrate(device, c, &m, e);
	cal_free(&m);
	return st;
}

extern "C" hoff_status hoff_cuda_copy_sweep(int32_t device, int64_t max_bytes,
					    FILE *f, hoff_err *e)
{
	cal_mem m;
	memset(&m, 0, sizeof m);
	size_t n = (size_t)(max_bytes > 4096 ? max_bytes : 4096);
	hoff_status st = probe(device, e);
	if (st == HOFF_OK)
		st = cal_alloc(&m, n, e);
	if (st == HOFF_OK) {
		memset(m.pinned, 1, n);
		memset(m.pinned2, 2, n);
		fputs("| bytes | h2d alone s | h2d GB/s | d2h alone s | d2h GB/s "
		      "| both: h2d s | h2d GB/s | both: d2h s | d2h GB/s |\n"
		      "|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
		      f);
	}
	for (size_t b = 4096; st == HOFF_OK && b <= n; b *= 4) {
		int reps = b <= ((size_t)16 << 20) ? 20 : 3;
		double h[2], d[2];
		if ((st = both_ways(&m, b, reps, false, &h[0], &d[0], e)) !=
			    HOFF_OK ||
		    (st = both_ways(&m, b, reps, true, &h[1], &d[1], e)) !=
			    HOFF_OK)
			break;
		fprintf(f, "| %zu", b);
		for (int i = 0; i < 2; i++)
			fprintf(f, " | %.3g | %.2f | %.3g | %.2f", h[i],
				h[i] > 0 ? (double)b / h[i] * 1e-9 : 0, d[i],
				d[i] > 0 ? (double)b / d[i] * 1e-9 : 0);
		fputs(" |\n", f);
		fflush(f);
	}
	cal_free(&m);
	return st;
}
