/* exec_cuda.cu: the CUDA backend. A compute stream and one stream per
 * channel (h2d and d2h of every tier); every dependency is a cudaEvent the
 * waiting stream waits on (cudaStreamWaitEvent), so the host enqueues the
 * whole schedule without ever synchronising; synchronize is the only wait.
 *
 * Device memory is one cudaMalloc arena of the plan's high water, host
 * memory one cudaHostAlloc (pinned) arena of tier copies, so transfers are
 * cudaMemcpyAsync at the plan's offsets and run at the link's real speed.
 * An op is a one-thread spin kernel on clock64 whose length is the op's
 * time, calibrated against the SM clock (ticks per second and the fixed
 * cost of a kernel, fitted from two timed spins). Every op and transfer is
 * timed by a pair of events against one start event.
 *
 * The start: a spin kernel holds the compute stream (every other stream
 * waits for its end, the start event) while the host enqueues, so the host
 * is ahead when the schedule begins; it lasts 15 us per command, clamped
 * to [20 ms, 5 s]. If the host still enqueues after the start, results say
 * by how much (lag_max), since commands may then have started late. With --verify, fill and check kernels write and compare
 * pattern.h's bytes; a prefetch's check runs on its channel, before the
 * transfer's end event, and leaves the first bad byte in a device array
 * read once at the end. Every CUDA call goes through HOFF_CUDA_TRY, which
 * returns HOFF_EIO with the call and CUDA's message. */
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

#define NO_BAD 0xffffffffffffffffULL

static __global__ void spin_kernel(long long cycles)
{
	long long t0 = clock64();
	while (clock64() - t0 < cycles) {
	}
}

static __global__ void fill_kernel(uint8_t *d, int64_t n, uint64_t seed)
{
	int64_t stride = (int64_t)gridDim.x * blockDim.x;
	for (int64_t w = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
	     8 * w < n; w += stride) {
		uint64_t x = hoff_pattern_word(seed, (uint64_t)w);
		int64_t base = 8 * w, m = n - base < 8 ? n - base : 8;
		if (m == 8 && ((uintptr_t)(d + base) & 7) == 0) {
			*(uint64_t *)(d + base) = x; /* little-endian */
		} else {
			for (int64_t j = 0; j < m; j++)
				d[base + j] = (uint8_t)(x >> (8 * j));
		}
	}
}

static __global__ void check_kernel(const uint8_t *d, int64_t n,
				    uint64_t seed, unsigned long long *bad)
{
	int64_t stride = (int64_t)gridDim.x * blockDim.x;
	for (int64_t w = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
	     8 * w < n; w += stride) {
		uint64_t x = hoff_pattern_word(seed, (uint64_t)w);
		int64_t base = 8 * w, m = n - base < 8 ? n - base : 8;
		for (int64_t j = 0; j < m; j++)
			if (d[base + j] != (uint8_t)(x >> (8 * j))) {
				atomicMin(bad, (unsigned long long)(base + j));
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
	cudaEvent_t t0, t_enq; /* the start; the host's last enqueue */
	bool t0_made, t_enq_made;
	cudaStream_t aux;      /* an idle stream: t_enq's */
	bool aux_made;
	unsigned long long *d_bad; /* (nxfers + 1) the last is for check() */
	double spin_hz, launch_s;
} cuda_ctx;

/* Ticks per second of clock64 and the fixed cost of a spin kernel, from
 * two spins of different lengths (best of three each). */
static hoff_status calibrate_spin(cudaStream_t s, double *hz, double *launch,
				  hoff_err *e)
{
	cudaEvent_t a, b;
	HOFF_CUDA_TRY(cudaEventCreate(&a));
	if (cudaEventCreate(&b) != cudaSuccess) {
		cudaEventDestroy(a);
		return hoff_seterr(e, HOFF_EIO, "cuda: cannot create an event");
	}
	const long long c[2] = {200000, 4000000};
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
				   "cuda: the spin kernel's clock cannot be "
				   "calibrated (%g s vs %g s)",
				   t0, t1);
	*hz = (double)(c[1] - c[0]) / (t1 - t0);
	*launch = t0 - (double)c[0] / *hz;
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

static hoff_status c_run_op(hoff_backend *b, int32_t k, hoff_err *e)
{
	cuda_ctx *c = (cuda_ctx *)b->ctx;
	const hoff_xplan *p = c->p;
	const hoff_graph *g = p->g;
	cudaStream_t s = c->s[0];
	HOFF_CUDA_TRY(cudaEventRecord(c->t_beg[k], s));
	if (c->o.verify) {
		for (int64_t j = g->out_off[k]; j < g->out_off[k + 1]; j++) {
			int64_t n = g->tensor[g->out[j]].bytes;
			fill_kernel<<<grid_for(n), 256, 0, s>>>(
				c->dev + p->out_dev[j], n,
				hoff_pattern_seed(g->out[j], 0));
			HOFF_CUDA_TRY(cudaGetLastError());
		}
		for (int64_t j = g->upd_off[k]; j < g->upd_off[k + 1]; j++) {
			int64_t n = g->tensor[g->upd[j]].bytes;
			fill_kernel<<<grid_for(n), 256, 0, s>>>(
				c->dev + p->upd_dev[j], n,
				hoff_pattern_seed(g->upd[j], p->upd_ver[j]));
			HOFF_CUDA_TRY(cudaGetLastError());
		}
	}
	double cycles = (hoff_s(p->op[k].dur_ps) - c->launch_s) * c->spin_hz;
	if (cycles >= 1) {
		spin_kernel<<<1, 1, 0, s>>>((long long)cycles);
		HOFF_CUDA_TRY(cudaGetLastError());
	}
	HOFF_CUDA_TRY(cudaEventRecord(c->t_end[k], s));
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
	HOFF_CUDA_TRY(cudaEventRecord(c->t_beg[ev], s));
	if (xf->store)
		HOFF_CUDA_TRY(cudaMemcpyAsync(h, d, (size_t)xf->bytes,
					      cudaMemcpyDeviceToHost, s));
	else
		HOFF_CUDA_TRY(cudaMemcpyAsync(d, h, (size_t)xf->bytes,
					      cudaMemcpyHostToDevice, s));
	if (c->o.corrupt_step == xf->step) { /* test hook: flip a byte */
		uint8_t *dst = xf->store ? c->host_dptr + xf->host_off : d;
		flip_kernel<<<1, 1, 0, s>>>(dst + xf->bytes / 2);
		HOFF_CUDA_TRY(cudaGetLastError());
	}
	if (c->o.verify && !xf->store) {
		check_kernel<<<grid_for(xf->bytes), 256, 0, s>>>(
			d, xf->bytes, hoff_pattern_seed(xf->tensor, xf->version),
			c->d_bad + x);
		HOFF_CUDA_TRY(cudaGetLastError());
	}
	HOFF_CUDA_TRY(cudaEventRecord(c->t_end[ev], s));
	return HOFF_OK;
}

static hoff_status c_synchronize(hoff_backend *b, hoff_err *e)
{
	cuda_ctx *c = (cuda_ctx *)b->ctx;
	/* Everything is enqueued: an event on an idle stream completes now,
	 * telling whether the host finished before the start event. */
	HOFF_CUDA_TRY(cudaEventRecord(c->t_enq, c->aux));
	HOFF_CUDA_TRY(cudaDeviceSynchronize());
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
	if ((st = elapsed_ps(c->t0, c->t_enq, &late, e)) != HOFF_OK)
		return st;
	r->lag_max_ps = late > 0 ? late : 0; /* the host enqueued past t0 */
	if (p->nxfers) {
		unsigned long long *bad = (unsigned long long *)hoff_alloc(
			(size_t)p->nxfers, sizeof *bad);
		if (!bad)
			return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
		cudaError_t err = cudaMemcpy(bad, c->d_bad,
					     (size_t)p->nxfers * sizeof *bad,
					     cudaMemcpyDeviceToHost);
		for (int64_t x = 0; err == cudaSuccess && x < p->nxfers; x++)
			r->x_bad[x] = bad[x] == NO_BAD ? -1 : (int64_t)bad[x];
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
	unsigned long long *slot = c->d_bad + c->p->nxfers, v = NO_BAD;
	HOFF_CUDA_TRY(cudaMemcpy(slot, &v, sizeof v, cudaMemcpyHostToDevice));
	check_kernel<<<grid_for(g->bytes), 256>>>(
		c->dev + g->off, g->bytes,
		hoff_pattern_seed(g->tensor, g->version), slot);
	HOFF_CUDA_TRY(cudaGetLastError());
	HOFF_CUDA_TRY(cudaMemcpy(&v, slot, sizeof v, cudaMemcpyDeviceToHost));
	*bad = v == NO_BAD ? -1 : (int64_t)v;
	return HOFF_OK;
}

static void c_free(hoff_backend *b)
{
	cuda_ctx *c = (cuda_ctx *)b->ctx;
	if (c) {
		/* Errors are moot while tearing down; leave nothing queued. */
		cudaDeviceSynchronize();
		for (int64_t i = 0; i < c->nev_made; i++) {
			cudaEventDestroy(c->done[i]);
			cudaEventDestroy(c->t_beg[i]);
			cudaEventDestroy(c->t_end[i]);
		}
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
		if (c->host)
			cudaFreeHost(c->host);
		free(c->s);
		free(c->done);
		free(c->t_beg);
		free(c->t_end);
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
	c->done = (cudaEvent_t *)hoff_zalloc((size_t)nev + 1, sizeof *c->done);
	c->t_beg = (cudaEvent_t *)hoff_zalloc((size_t)nev + 1,
					      sizeof *c->t_beg);
	c->t_end = (cudaEvent_t *)hoff_zalloc((size_t)nev + 1,
					      sizeof *c->t_end);
	if (!c->s || !c->done || !c->t_beg || !c->t_end)
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	for (; c->nstreams_made < p->nstreams; c->nstreams_made++)
		HOFF_CUDA_TRY(cudaStreamCreateWithFlags(
			&c->s[c->nstreams_made], cudaStreamNonBlocking));
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
				 ((size_t)p->nxfers + 1) * sizeof *c->d_bad));
	cudaStream_t s0 = c->s[0];
	HOFF_CUDA_TRY(cudaMemsetAsync(c->d_bad, 0xff,
				      ((size_t)p->nxfers + 1) * sizeof *c->d_bad,
				      s0));
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
			fill_kernel<<<grid_for(g->bytes), 256, 0, s0>>>(
				c->dev + g->off, g->bytes,
				hoff_pattern_seed(g->tensor, g->version));
			HOFF_CUDA_TRY(cudaGetLastError());
		}
	if ((st = calibrate_spin(s0, &c->spin_hz, &c->launch_s, e)) != HOFF_OK)
		return st;
	HOFF_CUDA_TRY(cudaStreamSynchronize(s0));
	/* The gate: hold the start while the host enqueues. */
	double gate_s = 15e-6 * (double)(nev + p->nwaits);
	gate_s = gate_s < 0.02 ? 0.02 : gate_s > 5 ? 5 : gate_s;
	spin_kernel<<<1, 1, 0, s0>>>((long long)(gate_s * c->spin_hz));
	HOFF_CUDA_TRY(cudaGetLastError());
	HOFF_CUDA_TRY(cudaEventRecord(c->t0, s0));
	for (int32_t i = 1; i < p->nstreams; i++)
		HOFF_CUDA_TRY(cudaStreamWaitEvent(c->s[i], c->t0, 0));
	return HOFF_OK;
}

extern "C" hoff_status hoff_backend_cuda_new(const hoff_xplan *p,
					     const hoff_exec_opts *o,
					     hoff_backend **out, hoff_err *e)
{
	HOFF_REQUIRE(p && o && out);
	*out = NULL;
	hoff_backend *b = (hoff_backend *)hoff_zalloc(1, sizeof *b);
	cuda_ctx *c = (cuda_ctx *)hoff_zalloc(1, sizeof *c);
	if (!b || !c) {
		free(b);
		free(c);
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	}
	b->iface = &cuda_iface;
	b->ctx = c;
	b->plan = p;
	b->opts = *o;
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
	HOFF_CUDA_TRY(cudaEventCreate(&a));
	if (cudaEventCreate(&b) != cudaSuccess) {
		cudaEventDestroy(a);
		return hoff_seterr(e, HOFF_EIO, "cuda: cannot create an event");
	}
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
	uint8_t *pinned, *pageable, *dev, *dev2;
	float *out;
	cudaStream_t s;
	bool s_made;
} cal_mem;

static void cal_free(cal_mem *m)
{
	cudaDeviceSynchronize();
	if (m->pinned)
		cudaFreeHost(m->pinned);
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
	HOFF_CUDA_TRY(cudaStreamCreateWithFlags(&m->s, cudaStreamNonBlocking));
	m->s_made = true;
	size_t n = (size_t)256 << 20;
	HOFF_CUDA_TRY(cudaHostAlloc((void **)&m->pinned, n,
				    cudaHostAllocDefault));
	HOFF_CUDA_TRY(cudaMalloc((void **)&m->dev, n));
	HOFF_CUDA_TRY(cudaMalloc((void **)&m->dev2, n));
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
	/* Latency: the median of small pinned copies. */
	enum { N = 101 };
	float ms[N];
	cudaEvent_t a, b;
	HOFF_CUDA_TRY(cudaEventCreate(&a));
	if (cudaEventCreate(&b) != cudaSuccess) {
		cudaEventDestroy(a);
		return hoff_seterr(e, HOFF_EIO, "cuda: cannot create an event");
	}
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
