/* exec_cases.c: see exec_cases.h. */
#include "exec_cases.h"

#include <string.h>

void plan_on(const hoff_graph *g, const hoff_sched *s, int64_t align,
	     hoff_sim_result *pr, hoff_xplan *p)
{
	hoff_sim_opts so = hoff_sim_defaults();
	so.budget_bytes = INT64_MAX;
	so.timeline = true;
	so.op_times = true;
	hoff_err e = {{0}};
	assert_int_equal(hoff_sim_run(g, s, &so, pr, &e), HOFF_OK);
	assert_true(pr->valid);
	hoff_status st = hoff_xplan_build(g, s, pr, align, p, &e);
	if (st != HOFF_OK)
		print_error("xplan: %s\n", e.msg);
	assert_int_equal(st, HOFF_OK);
}

hoff_race race_of(const hoff_xplan *p, int64_t drop)
{
	hoff_exec_opts o = hoff_exec_defaults();
	o.drop_wait = drop;
	hoff_race r;
	hoff_err e = {{0}};
	assert_int_equal(hoff_exec_check(p, &o, &r, &e), HOFF_OK);
	return r;
}

void run_on(backend_new make, const hoff_graph *g, const hoff_sched *s,
	    const hoff_exec_opts *o, ran *x)
{
	memset(x, 0, sizeof *x);
	plan_on(g, s, 1, &x->pr, &x->p);
	hoff_err e = {{0}};
	hoff_backend *b = NULL;
	hoff_status st = make(&x->p, o, &b, &e);
	if (st == HOFF_OK)
		st = hoff_exec_run(b, &x->m, &e);
	if (st != HOFF_OK)
		print_error("exec: %s\n", e.msg);
	assert_int_equal(st, HOFF_OK);
	hoff_backend_free(b);
}

void ran_free(ran *x)
{
	hoff_exec_result_free(&x->m);
	hoff_xplan_free(&x->p);
	hoff_sim_result_free(&x->pr);
}

void check_events(const ran *x)
{
	const hoff_timeline *a = &x->pr.tl, *b = &x->m.tl;
	size_t i = 0, j = 0;
	for (;;) {
		/* stalls are timing, detaches instants the simulator alone
		 * draws: the commands are compared */
		while (i < a->nev && (a->ev[i].kind == HOFF_EV_STALL ||
				      a->ev[i].kind == HOFF_EV_DETACH))
			i++;
		while (j < b->nev && (b->ev[j].kind == HOFF_EV_STALL ||
				      b->ev[j].kind == HOFF_EV_DETACH))
			j++;
		if (i == a->nev || j == b->nev)
			break;
		assert_int_equal(a->ev[i].kind, b->ev[j].kind);
		assert_int_equal(a->ev[i].step, b->ev[j].step);
		assert_int_equal(a->ev[i].id, b->ev[j].id);
		assert_true(b->ev[j].end_ps >= b->ev[j].start_ps);
		i++;
		j++;
	}
	assert_int_equal(i, a->nev);
	assert_int_equal(j, b->nev);
}

typedef struct windex {
	int64_t cmd, ev, n, found;
	int64_t pending[256];
	int32_t pstream[256];
	int npending;
} windex;

static hoff_status wi_wait(hoff_backend *b, int32_t s, int64_t ev, hoff_err *e)
{
	windex *w = b->ctx;
	(void)e;
	assert_true(w->npending < 256);
	w->pstream[w->npending] = s;
	w->pending[w->npending++] = ev;
	w->n++;
	return HOFF_OK;
}

static hoff_status wi_cmd(windex *w, int64_t cmd)
{
	/* The waits just before a command are its own. */
	for (int i = 0; i < w->npending; i++)
		if (cmd == w->cmd && w->pending[i] == w->ev)
			w->found = w->n - w->npending + i;
	w->npending = 0;
	return HOFF_OK;
}

static hoff_status wi_record(hoff_backend *b, int32_t s, int64_t ev,
			     hoff_err *e)
{
	(void)b;
	(void)s;
	(void)ev;
	(void)e;
	return HOFF_OK;
}

static hoff_status wi_op(hoff_backend *b, int32_t k, hoff_err *e)
{
	(void)e;
	return wi_cmd(b->ctx, k);
}

static hoff_status wi_xfer(hoff_backend *b, int64_t x, hoff_err *e)
{
	(void)e;
	return wi_cmd(b->ctx, b->plan->nops + x);
}

int64_t wait_index(const hoff_xplan *p, int64_t cmd, int64_t ev)
{
	static const hoff_backend_i wi = {.name = "wait_index",
					  .wait = wi_wait,
					  .record = wi_record,
					  .run_op = wi_op,
					  .prefetch = wi_xfer,
					  .store = wi_xfer};
	windex w = {.cmd = cmd, .ev = ev, .found = -1};
	hoff_backend b = {.iface = &wi,
			  .ctx = &w,
			  .plan = p,
			  .opts = hoff_exec_defaults()};
	hoff_err e = {{0}};
	assert_int_equal(hoff_exec_walk(&b, NULL, &e), HOFF_OK);
	return w.found;
}
