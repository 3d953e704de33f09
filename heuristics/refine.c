/* refine.c: see refine.h. A schedule is held as decisions over the
 * candidate intervals: pick[i] is the boundary after which interval i's
 * prefetch is issued (-1: before op 0; nops - 1 for a tail, which is never
 * fetched), or OFF when the tensor stays on the device over the gap. Each
 * decision set is emitted (evictions at a boundary in candidate order,
 * then prefetches by issue boundary, earliest consumer first) and judged
 * by the simulator; a move is kept only when the simulator says it is
 * better, so what the search returns is always valid.
 * Cost: one move is one emission and one simulation, O(steps log steps);
 * the total is bounded by go->work simulated steps. */
#include "refine.h"

#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "judged.h"
#include "sim.h"
#include "sort.h"

#define OFF	     (-2) /* a pick: the interval is not taken */
#define REPAIR_MOVES 32	  /* stall moves a repair may keep */
#define REPAIR_SLACK 250  /* repaired: a trial at most bound/250 over */
#define REPAIR_TRIES 48	  /* simulations a repair may spend */

typedef struct ctx {
	const hoff_graph *g;
	const hoff_cand *iv;
	int32_t niv;
	const hoff_refine_goal *go;
	int32_t *pf;	      /* (niv) scratch: prefetches in issue order */
	const int32_t *key;   /* the picks pf is sorted by */
	const int32_t *t_off; /* by_t: each tensor's */
	const int32_t *by_t;  /* the candidates by tensor */
	int64_t work;	      /* steps simulated so far */
	int32_t tried;
	int32_t *failed;  /* (niv) the op a move on i last failed at, or -1 */
	bool memo;	  /* skip moves that failed at this op before */
	int32_t skipped;  /* moves skipped so */
	bool repair;	  /* try_move repairs a trial's makespan */
	bool repairing;	  /* ... and is doing so */
	bool hope;	  /* a trial of this move was repairable */
	uint8_t *hopeful; /* (niv) a move on i that failed was repairable */
	int32_t *rpick, *rtrial; /* (niv) the repair's decisions, scratch */
	int32_t *b_off, *by_b;	 /* the candidates by consumer b */
	int32_t *stalled;	 /* (nops) scratch: ops that wait */
	int64_t *wait;		 /* (nops) scratch: how long */
	int64_t *nom;		 /* (nops + 1) op starts with no stall */
	int32_t *edf;		 /* (niv) the fetched candidates by (b, t) */
	int32_t nedf;
	int64_t *next;	/* (ntiers) scratch: where a stream's next starts */
	hoff_status st; /* of the move that failed */
	hoff_err *e;
} ctx;

static int by_pick(const void *x, const void *y, void *cx)
{
	const ctx *sort_ctx = cx;
	int32_t i = *(const int32_t *)x, j = *(const int32_t *)y;
	const hoff_cand *a = &sort_ctx->iv[i], *b = &sort_ctx->iv[j];
	int32_t pa = sort_ctx->key[i], pb = sort_ctx->key[j];
	if (pa != pb)
		return pa < pb ? -1 : 1;
	if (a->b != b->b)
		return a->b < b->b ? -1 : 1;
	return (a->t > b->t) - (a->t < b->t);
}

/* The schedule of the decisions pick; NULL on OOM. */
static hoff_sched *emit(ctx *c, const int32_t *pick)
{
	const hoff_graph *g = c->g;
	hoff_emit m;
	if (hoff_emit_init(&m, g, "greedy") != HOFF_OK)
		return NULL;
	int32_t np = 0;
	for (int32_t i = 0; i < c->niv; i++)
		if (pick[i] != OFF && c->iv[i].b < g->nops)
			c->pf[np++] = i;
	c->key = pick;
	hoff_sort_ctx(c->pf, (size_t)np, sizeof *c->pf, by_pick, c);
	int32_t ie = 0, ip = 0;
	for (int32_t q = -1; q < g->nops; q++) {
		if (q >= 0)
			hoff_emit_op(&m, q);
		for (; ie < c->niv && c->iv[ie].a <= q; ie++)
			if (pick[ie] != OFF &&
			    c->iv[ie].kind != HOFF_CAND_START &&
			    c->iv[ie].a == q)
				hoff_emit_evict(&m, c->iv[ie].t);
		for (; ip < np && pick[c->pf[ip]] <= q; ip++)
			hoff_emit_prefetch(&m, c->iv[c->pf[ip]].t);
	}
	return hoff_emit_finish(&m);
}

/* Simulates s (taken) into *j, with its op starts and its peak's op;
 * HOFF_ENOMEM or the simulator's error. */
static hoff_status judge(ctx *c, hoff_sched *s, hoff_judged *j)
{
	hoff_judge_opts jo = {.starts = true, .peak = true};
	c->work += s->nsteps;
	c->tried++;
	hoff_status st = hoff_judge(c->g, s, &jo, "greedy", j, c->e);
	if (st != HOFF_OK)
		return st;
	const hoff_refine_goal *go = c->go;
	j->fits = j->legal && (go->bound_ps == HOFF_NONE
				       ? j->sum.peak_bytes <= go->cap
				       : j->sum.makespan_ps <= go->bound_ps);
	return HOFF_OK;
}

static bool better(const ctx *c, const hoff_judged *a, const hoff_judged *b)
{
	if (!a->legal)
		return false;
	if (!b->legal || a->fits != b->fits)
		return a->fits || !b->legal;
	const hoff_summary *x = &a->sum, *y = &b->sum;
	if (c->go->bound_ps == HOFF_NONE) {
		if (x->makespan_ps != y->makespan_ps)
			return x->makespan_ps < y->makespan_ps;
		return x->peak_bytes < y->peak_bytes;
	}
	if (x->peak_bytes != y->peak_bytes)
		return x->peak_bytes < y->peak_bytes;
	if (a->npeak != b->npeak)
		return a->npeak < b->npeak;
	return x->makespan_ps < y->makespan_ps;
}

static int try_at(ctx *c, int32_t *pick, int32_t *trial, hoff_judged *cur,
		  int32_t i, int32_t at_op, const int32_t *at, int nat);

static int by_wait(const void *x, const void *y, void *cx)
{
	const int64_t *sort_wait = cx;
	int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
	if (sort_wait[a] != sort_wait[b])
		return sort_wait[a] > sort_wait[b] ? -1 : 1;
	return (a > b) - (a < b);
}

/* The repair's move: at each op that waits, longest wait first, a
 * prefetch for it issued one boundary earlier; the first that helps is
 * kept (1), 0 when none does or the work is spent, -1 on error. */
static int stalls_earlier(ctx *c, int32_t *pick, int32_t *trial,
			  hoff_judged *cur)
{
	const hoff_graph *g = c->g;
	const int32_t n = g->nops;
	int32_t m = 0;
	for (int32_t k = 0; k < n; k++) {
		int64_t ready = k ? cur->start[k - 1] + g->op[k - 1].time_ps
				  : 0;
		c->wait[k] = cur->start[k] - ready;
		if (c->wait[k] > 0)
			c->stalled[m++] = k;
	}
	hoff_sort_ctx(c->stalled, (size_t)m, sizeof *c->stalled, by_wait,
		      c->wait);
	for (int32_t x = 0; x < m; x++) {
		int32_t k = c->stalled[x];
		for (int32_t u = c->b_off[k]; u < c->b_off[k + 1]; u++) {
			int32_t i = c->by_b[u];
			if (pick[i] == OFF || pick[i] <= c->iv[i].a)
				continue;
			int32_t at = pick[i] - 1;
			int r = try_at(c, pick, trial, cur, i, k, &at, 1);
			if (r || c->work > c->go->work)
				return r;
		}
	}
	return 0;
}

/* Overhead mode: whether trial *j lowers the peak below *cur's but runs
 * a little past the bound, so that a repair may pay off. */
static bool repairable(const ctx *c, const hoff_judged *j,
		       const hoff_judged *cur)
{
	const hoff_refine_goal *go = c->go;
	return go->bound_ps != HOFF_NONE && j->legal && !j->fits &&
	       j->sum.makespan_ps <=
		       go->bound_ps + go->bound_ps / REPAIR_SLACK &&
	       j->sum.peak_bytes < cur->sum.peak_bytes;
}

/* With c->repair: a repairable trial *j made faster by stall moves under
 * its own peak (a lower peak often costs a stall that a prefetch issued a
 * boundary earlier removes), on at most REPAIR_TRIES simulations. 1 when
 * *j was replaced by the repaired schedule (its decisions in c->rpick), 0
 * when there is nothing to repair, -1 on error. */
static int repair(ctx *c, const int32_t *trial, hoff_judged *j,
		  const hoff_judged *cur)
{
	const hoff_refine_goal *go = c->go;
	bool can = repairable(c, j, cur);
	if (!c->repairing)
		c->hope = c->hope || can;
	if (!c->repair || c->repairing || !can)
		return 0;
	int64_t most = c->work + REPAIR_TRIES * j->s->nsteps;
	hoff_refine_goal rg = {.cap = j->sum.peak_bytes,
			       .bound_ps = HOFF_NONE,
			       .work = most < go->work ? most : go->work};
	memcpy(c->rpick, trial, (size_t)c->niv * sizeof *trial);
	j->fits = true; /* under rg: legal, its own peak */
	c->go = &rg;
	c->repairing = true;
	bool memo = c->memo;
	c->memo = false;
	int r = 0;
	for (int m = 0; m < REPAIR_MOVES && c->work <= rg.work; m++) {
		r = stalls_earlier(c, c->rpick, c->rtrial, j);
		if (r != 1 || j->sum.makespan_ps <= go->bound_ps)
			break;
	}
	c->go = go;
	c->repairing = false;
	c->memo = memo;
	if (r < 0)
		return -1;
	j->fits = j->sum.makespan_ps <= go->bound_ps;
	return 1;
}

/* Tries trial (repaired where c->repair says): when better than *cur it
 * becomes *cur and pick. 1 taken, 0 not, -1 on error (c->e set). */
static int try_move(ctx *c, int32_t *pick, const int32_t *trial,
		    hoff_judged *cur)
{
	hoff_sched *s = emit(c, trial);
	if (!s) {
		c->st = hoff_seterr(c->e, HOFF_ENOMEM, "out of memory");
		return -1;
	}
	hoff_judged j;
	if ((c->st = judge(c, s, &j)) != HOFF_OK)
		return -1;
	int rep = repair(c, trial, &j, cur);
	if (rep < 0) {
		hoff_judged_free(&j);
		return -1;
	}
	if (rep)
		trial = c->rpick;
	if (!better(c, &j, cur)) {
		hoff_judged_free(&j);
		return 0;
	}
	hoff_judged_free(cur);
	*cur = j;
	memcpy(pick, trial, (size_t)c->niv * sizeof *pick);
	return 1;
}

/* With the memo on, a move on interval i is skipped where it failed at
 * the same op before: most fail again, and each costs a simulation. */
static bool skip(ctx *c, int32_t i, int32_t at_op)
{
	if (c->failed[i] != at_op)
		return false;
	if (c->repair && !c->hopeful[i])
		return true; /* failed here without repair, and no repair
				would have helped: fails again */
	if (!c->memo)
		return false;
	c->skipped++;
	return true;
}

/* try_move, noting a failure at op at_op against interval i. */
static int attempt(ctx *c, int32_t *pick, const int32_t *trial,
		   hoff_judged *cur, int32_t i, int32_t at_op)
{
	if (c->failed[i] != at_op)
		c->hope = false;
	else
		c->hope = c->hopeful[i];
	int r = try_move(c, pick, trial, cur);
	if (r == 0 && !c->repairing) {
		c->failed[i] = at_op;
		c->hopeful[i] = c->hope;
	}
	return r;
}

/* The decisions that s takes over the candidates, as far as they can
 * say it: an eviction or prefetch of t at boundary q belongs to t's
 * interval with a <= q < b. by_t lists the candidates by tensor
 * (t_off[t] .. t_off[t + 1]), each tensor's by a. */
static void picks_of(const ctx *c, const hoff_sched *s, const int32_t *t_off,
		     const int32_t *by_t, int32_t *pick)
{
	const hoff_graph *g = c->g;
	for (int32_t i = 0; i < c->niv; i++)
		pick[i] = c->iv[i].kind == HOFF_CAND_START ? -1 : OFF;
	int32_t q = -1;
	for (int64_t k = 0; k < s->nsteps; k++) {
		const hoff_step *st = &s->step[k];
		if (st->kind == HOFF_STEP_OP) {
			q = st->id;
			continue;
		}
		int32_t t = st->id, hit = HOFF_NONE;
		for (int32_t x = t_off[t]; x < t_off[t + 1]; x++) {
			const hoff_cand *v = &c->iv[by_t[x]];
			if (v->a <= q && q < v->b) {
				hit = by_t[x];
				break;
			}
		}
		if (hit == HOFF_NONE)
			continue;
		if (st->kind == HOFF_STEP_PREFETCH)
			pick[hit] = q;
		else if (c->iv[hit].kind != HOFF_CAND_START)
			pick[hit] = c->iv[hit].b >= g->nops ? g->nops - 1
							    : OFF - 1;
	}
	/* evicted and never fetched back: not a decision this form holds */
	for (int32_t i = 0; i < c->niv; i++)
		if (pick[i] == OFF - 1)
			pick[i] = OFF;
}

/* Tries interval i's pick at each of at[0..nat) in turn (repeats
 * skipped): 1 when one was kept, -1 on error, 0 when none helped or
 * the work is spent. */
static int try_at(ctx *c, int32_t *pick, int32_t *trial, hoff_judged *cur,
		  int32_t i, int32_t at_op, const int32_t *at, int nat)
{
	for (int w = 0; w < nat; w++) {
		bool seen = false;
		for (int u = 0; u < w; u++)
			seen = seen || at[u] == at[w];
		if (seen)
			continue;
		memcpy(trial, pick, (size_t)c->niv * sizeof *pick);
		trial[i] = at[w];
		int r = attempt(c, pick, trial, cur, i, at_op);
		if (r || c->work > c->go->work)
			return r;
	}
	return 0;
}

/* Interval i evicted (fetched back after op at) together with its
 * tensor's first gap, which none takes yet: the store then runs early,
 * while the d2h link is idle, and i's eviction drops the clean copy it
 * left for free. Neither helps alone where i's own store would queue
 * past the peak. 1 kept, 0 not (or no such gap or the work is spent), -1
 * on error. */
static int with_early_copy(ctx *c, int32_t *pick, int32_t *trial,
			   hoff_judged *cur, int32_t i, int32_t at_op,
			   int32_t at)
{
	const hoff_cand *v = &c->iv[i];
	int32_t f = HOFF_NONE;
	for (int32_t x = c->t_off[v->t]; x < c->t_off[v->t + 1]; x++) {
		int32_t j = c->by_t[x];
		if (c->iv[j].a >= v->a)
			break;
		if (c->iv[j].kind != HOFF_CAND_START) {
			f = j;
			break;
		}
	}
	if (f == HOFF_NONE || pick[f] != OFF)
		return 0;
	/* f fetched back as late as its consumer allows, halfway, or right
	 * after its store: a late fetch can queue behind other stores */
	int32_t lo = c->iv[f].a + 1, hi = c->iv[f].b - 1;
	int32_t back[3] = {hi, lo + (hi - lo) / 2, lo};
	for (int w = 0; w < 3; w++) {
		if (w && back[w] == back[w - 1])
			continue;
		memcpy(trial, pick, (size_t)c->niv * sizeof *pick);
		trial[i] = at;
		trial[f] = back[w];
		int r = attempt(c, pick, trial, cur, i, at_op);
		if (r || c->work > c->go->work)
			return r;
	}
	return 0;
}

/* The latest boundary q in [lo, hi] whose op ends by time x on the
 * stream's target timeline (op k starts at nom[k], plus shift from op
 * from on); lo when none does. Boundary -1 ends at time 0. */
static int32_t boundary_by(const ctx *c, int64_t x, int32_t from, int64_t shift,
			   int32_t lo, int32_t hi)
{
	while (lo < hi) {
		int32_t q = hi - (hi - lo) / 2;
		int64_t end = c->nom[q + 1] + (q >= from ? shift : 0);
		if (end <= x)
			lo = q;
		else
			hi = q - 1;
	}
	return lo;
}

static int by_b_t(const void *x, const void *y, void *cx)
{
	const ctx *sort_ctx = cx;
	int32_t i = *(const int32_t *)x, j = *(const int32_t *)y;
	const hoff_cand *a = &sort_ctx->iv[i], *b = &sort_ctx->iv[j];
	if (a->b != b->b)
		return a->b < b->b ? -1 : 1;
	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	return (i > j) - (i < j);
}

/* Overhead mode: every taken prefetch re-issued at once, as one stream
 * per tier's h2d channel. The target timeline runs the ops with no stall
 * up to op from and spends the bound's whole slack just before it. In
 * order of deadline (the consumer's target start), latest first, each
 * transfer ends at its deadline or where the next one on its channel
 * starts, whichever is sooner, and is issued at the latest boundary that
 * ends by its start (not before its eviction): the link serves them
 * earliest deadline first, each as late as the transfers after it
 * allow. Single moves cannot do this where the link is saturated (an
 * optimizer step at the end streaming its state from the host): holding
 * back one prefetch stalls the ones queued behind it, and a prefetch
 * queued behind later ones is never moved ahead of them. Tried with from
 * = the last op, the second last, the fourth last, ..., op 0, each one
 * simulation unless a transfer would have to start before time 0 (the
 * timeline cannot hold); each variant better than *cur is kept. 1 when
 * one was, 0 when none, -1 on error. Cost: O(niv log nops) a variant. */
static int stream_moves(ctx *c, int32_t *pick, int32_t *trial, hoff_judged *cur)
{
	const hoff_graph *g = c->g;
	const int32_t n = g->nops;
	const int64_t slack = c->go->bound_ps - c->nom[n];
	const int32_t best = hoff_best_tier(g);
	int kept = 0;
	if (c->go->bound_ps == HOFF_NONE || slack < 0 || best == HOFF_NONE ||
	    !c->nedf)
		return 0;
	for (int64_t step = 1;; step *= 2) {
		int32_t from = step >= n ? 0 : n - (int32_t)step;
		for (int32_t r = 0; r < g->ntiers; r++)
			c->next[r] = INT64_MAX;
		memcpy(trial, pick, (size_t)c->niv * sizeof *pick);
		bool holds = true; /* every transfer starts after time 0 */
		for (int32_t x = c->nedf - 1; x >= 0; x--) {
			int32_t i = c->edf[x];
			const hoff_cand *v = &c->iv[i];
			if (pick[i] == OFF)
				continue;
			int32_t home = g->tensor[v->t].home;
			int32_t r = home == HOFF_DEVICE ? best : home;
			int64_t due = c->nom[v->b] + (v->b >= from ? slack : 0);
			int64_t end = due < c->next[r] ? due : c->next[r];
			int64_t at = end - hoff_xfer_ps(g, r, v->bytes, true);
			c->next[r] = at;
			holds = holds && at >= 0;
			trial[i] =
				boundary_by(c, at, from, slack, v->a, v->b - 1);
		}
		/* a link busier than the timeline allows (transfer-bound from
		 * the start) would only stall: not worth a simulation */
		int r = holds ? try_move(c, pick, trial, cur) : 0;
		if (r < 0)
			return -1;
		kept += r;
		if (!from || c->work > c->go->work)
			break;
	}
	return kept > 0;
}

/* Overhead mode: the first improving move at the peak's op. */
static int peak_moves(ctx *c, int32_t *pick, int32_t *trial, hoff_judged *cur,
		      const int32_t *by_size)
{
	const int32_t n = c->g->nops, k = cur->peak_op, at_op = k;
	if (k >= n)
		return 0;
	/* hold back a prefetch issued before k for a later op */
	for (int32_t x = 0; x < c->niv; x++) {
		int32_t i = by_size[x];
		const hoff_cand *v = &c->iv[i];
		if (pick[i] == OFF || v->b >= n || pick[i] >= k || v->b <= k)
			continue;
		if (skip(c, i, at_op))
			continue;
		/* right after k, or as late as its consumer allows, or
		 * halfway: one boundary at a time can stall on a plateau */
		int32_t at[3] = {k, v->b - 1, k + (v->b - 1 - k) / 2};
		int r = try_at(c, pick, trial, cur, i, at_op, at, 3);
		if (r || c->work > c->go->work)
			return r;
	}
	/* evict what k does not touch: fetched back late, right after k, or
	 * halfway */
	for (int32_t x = 0; x < c->niv; x++) {
		int32_t i = by_size[x];
		const hoff_cand *v = &c->iv[i];
		if (pick[i] != OFF || v->kind == HOFF_CAND_START || v->a >= k ||
		    v->b <= k)
			continue;
		if (skip(c, i, at_op))
			continue;
		int32_t last = v->b >= n ? n - 1 : v->b - 1;
		int32_t at[3] = {last, k, k + (last - k) / 2};
		int r = try_at(c, pick, trial, cur, i, at_op, at, 3);
		if (r || c->work > c->go->work)
			return r;
		r = with_early_copy(c, pick, trial, cur, i, at_op, last);
		if (r || c->work > c->go->work)
			return r;
	}
	return 0;
}

/* Budget mode: the first move that shortens the longest stall. */
static int stall_moves(ctx *c, int32_t *pick, int32_t *trial, hoff_judged *cur,
		       const int32_t *by_size)
{
	const hoff_graph *g = c->g;
	const int32_t n = g->nops;
	int32_t j = HOFF_NONE;
	int64_t worst = 0;
	for (int32_t k = 0; k < n; k++) {
		int64_t ready = k ? cur->start[k - 1] + g->op[k - 1].time_ps
				  : 0;
		if (cur->start[k] - ready > worst) {
			worst = cur->start[k] - ready;
			j = k;
		}
	}
	if (j == HOFF_NONE)
		return 0;
	const int32_t at_op = j;
	/* its own prefetches one boundary earlier */
	for (int32_t x = 0; x < c->niv; x++) {
		int32_t i = by_size[x];
		const hoff_cand *v = &c->iv[i];
		if (pick[i] == OFF || v->b != j || pick[i] <= v->a)
			continue;
		if (skip(c, i, at_op))
			continue;
		int32_t at = pick[i] - 1;
		int r = try_at(c, pick, trial, cur, i, at_op, &at, 1);
		if (r || c->work > c->go->work)
			return r;
	}
	/* prefetches for later ops issued before it: after it instead */
	for (int32_t x = 0; x < c->niv; x++) {
		int32_t i = by_size[x];
		const hoff_cand *v = &c->iv[i];
		if (pick[i] == OFF || v->b >= n || v->b <= j ||
		    pick[i] >= j - 1)
			continue;
		if (skip(c, i, at_op))
			continue;
		int r = try_at(c, pick, trial, cur, i, at_op, &j, 1);
		if (r || c->work > c->go->work)
			return r;
	}
	return 0;
}

static int by_bytes(const void *x, const void *y, void *cx)
{
	const ctx *sort_ctx = cx;
	int32_t i = *(const int32_t *)x, j = *(const int32_t *)y;
	int64_t a = sort_ctx->iv[i].bytes, b = sort_ctx->iv[j].bytes;
	if (a != b)
		return a > b ? -1 : 1;
	return (i > j) - (i < j);
}

/* The phases of hoff_refine from the judged start *cur (see its comment
 * there): the moves kept update pick, *cur and r->moves; lim->work caps
 * the work, grown per phase from go's. False when a move failed (its
 * status in c->st). */
static bool run_phases(ctx *c, const hoff_refine_goal *go,
		       hoff_refine_goal *lim, int32_t *pick, int32_t *trial,
		       const int32_t *by_size, hoff_judged *cur,
		       hoff_refine_result *r)
{
	/* Phase 0 keeps single moves; phase 1 (overhead mode) repairs
	 * trials that lower the peak at some makespan, on a quarter of
	 * the work again, retrying at an op only the moves that failed
	 * there with a repairable trial: it only adds to phase 0. Phase 2
	 * (the same runs) tries the stream on the result; when it helps,
	 * the moves of phase 1 go on from there, the stream tried again
	 * on each plan kept, on a quarter of the work again. Each phase
	 * only improves on the one before. */
	const bool full = go->bound_ps != HOFF_NONE && go->repair;
	int32_t streamed = INT32_MAX; /* the stream is tried from this many
					 moves kept on */
	for (int phase = 0; phase < (full ? 3 : 1); phase++) {
		c->repair = phase >= 1;
		if (phase)
			lim->work = c->work + (c->work < go->work / 4
						       ? c->work
						       : go->work / 4);
		if (phase == 2) {
			int took = stream_moves(c, pick, trial, cur);
			if (took < 0)
				return false;
			if (!took)
				break;
			streamed = ++r->moves + 1; /* again after a move */
			for (int32_t i = 0; i < c->niv; i++) {
				c->failed[i] = -1; /* another plan */
				c->hopeful[i] = 0;
			}
		}
		while (c->work <= lim->work) {
			int took = 0;
			if (r->moves >= streamed) {
				took = stream_moves(c, pick, trial, cur);
				if (took < 0)
					return false;
				streamed = r->moves + took + 1;
				if (took) {
					r->moves++;
					continue;
				}
			}
			/* with the memo first; when that finds nothing but
			 * skipped some, once more without it */
			for (int pass = 0; pass < 2 && !took; pass++) {
				c->memo = pass == 0;
				c->skipped = 0;
				took = go->bound_ps == HOFF_NONE
					       ? stall_moves(c, pick, trial,
							     cur, by_size)
					       : peak_moves(c, pick, trial, cur,
							    by_size);
				if (!c->skipped || c->work > lim->work)
					break;
			}
			if (took < 0)
				return false;
			if (!took)
				break;
			r->moves++;
		}
	}
	return true;
}

hoff_status hoff_refine(const hoff_graph *g, const hoff_cand *iv, int32_t niv,
			const hoff_sched *start, const hoff_refine_goal *go,
			hoff_refine_result *r, hoff_err *e)
{
	memset(r, 0, sizeof *r);
	hoff_refine_goal lim = *go; /* the work grows for phase 1 */
	ctx c = {.g = g, .iv = iv, .niv = niv, .go = &lim, .e = e};
	size_t m = (size_t)niv + 1;
	int32_t *pick = hoff_alloc(m, sizeof *pick);
	int32_t *trial = hoff_alloc(m, sizeof *trial);
	int32_t *by_size = hoff_alloc(m, sizeof *by_size);
	int32_t *t_off = hoff_zalloc((size_t)g->ntensors + 2, sizeof *t_off);
	int32_t *by_t = hoff_alloc(m, sizeof *by_t);
	c.pf = hoff_alloc(m, sizeof *c.pf);
	c.failed = hoff_alloc(m, sizeof *c.failed);
	c.rpick = hoff_alloc(m, sizeof *c.rpick);
	c.hopeful = hoff_zalloc(m, sizeof *c.hopeful);
	c.rtrial = hoff_alloc(m, sizeof *c.rtrial);
	c.b_off = hoff_zalloc((size_t)g->nops + 2, sizeof *c.b_off);
	c.by_b = hoff_alloc(m, sizeof *c.by_b);
	c.stalled = hoff_alloc((size_t)g->nops + 1, sizeof *c.stalled);
	c.wait = hoff_alloc((size_t)g->nops + 1, sizeof *c.wait);
	c.nom = hoff_alloc((size_t)g->nops + 1, sizeof *c.nom);
	c.edf = hoff_alloc(m, sizeof *c.edf);
	c.next = hoff_alloc((size_t)g->ntiers + 1, sizeof *c.next);
	hoff_judged cur = {0};
	hoff_status st = HOFF_OK;
	if (!pick || !trial || !by_size || !t_off || !by_t || !c.pf ||
	    !c.failed || !c.rpick || !c.rtrial || !c.hopeful || !c.b_off ||
	    !c.by_b || !c.stalled || !c.wait || !c.nom || !c.edf || !c.next) {
		st = hoff_seterr(e, HOFF_ENOMEM, "out of memory");
		goto out;
	}
	for (int32_t i = 0; i < niv; i++)
		t_off[iv[i].t + 2]++;
	for (int32_t t = 0; t < g->ntensors; t++)
		t_off[t + 2] += t_off[t + 1];
	for (int32_t i = 0; i < niv; i++) /* stable: each tensor's by a */
		by_t[t_off[iv[i].t + 1]++] = i;
	for (int32_t i = 0; i < niv; i++) /* tails (b == nops) last */
		c.b_off[iv[i].b + 1]++;
	for (int32_t k = 0; k <= g->nops; k++)
		c.b_off[k + 1] += c.b_off[k];
	for (int32_t i = 0; i < niv; i++)
		c.by_b[c.b_off[iv[i].b]++] = i;
	for (int32_t k = g->nops; k > 0; k--)
		c.b_off[k] = c.b_off[k - 1];
	c.b_off[0] = 0;
	for (int32_t i = 0; i < niv; i++) {
		by_size[i] = i;
		c.failed[i] = -1;
	}
	hoff_sort_ctx(by_size, (size_t)niv, sizeof *by_size, by_bytes, &c);
	c.nom[0] = 0;
	for (int32_t k = 0; k < g->nops; k++)
		c.nom[k + 1] = c.nom[k] + g->op[k].time_ps;
	for (int32_t i = 0; i < niv; i++)
		if (iv[i].b < g->nops)
			c.edf[c.nedf++] = i;
	hoff_sort_ctx(c.edf, (size_t)c.nedf, sizeof *c.edf, by_b_t, &c);
	c.t_off = t_off;
	c.by_t = by_t;
	picks_of(&c, start, t_off, by_t, pick);
	hoff_sched *s = emit(&c, pick);
	if (!s) {
		st = hoff_seterr(e, HOFF_ENOMEM, "out of memory");
		goto out;
	}
	if ((st = judge(&c, s, &cur)) != HOFF_OK)
		goto out;
	if (!run_phases(&c, go, &lim, pick, trial, by_size, &cur, r)) {
		st = c.st;
		goto out;
	}
	if (cur.legal) {
		r->s = cur.s;
		r->sum = cur.sum;
		cur.s = NULL;
	}
	r->tried = c.tried;
out:
	hoff_judged_free(&cur);
	free(pick);
	free(trial);
	free(by_size);
	free(t_off);
	free(by_t);
	free(c.pf);
	free(c.failed);
	free(c.rpick);
	free(c.hopeful);
	free(c.rtrial);
	free(c.b_off);
	free(c.by_b);
	free(c.stalled);
	free(c.wait);
	free(c.nom);
	free(c.edf);
	free(c.next);
	return st;
}
