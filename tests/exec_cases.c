/* exec_cases.c: see exec_cases.h. */
#include "exec_cases.h"

#include <stdlib.h>
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

void run_verified(backend_new make, const hoff_graph *g, const hoff_sched *s,
		  ran *x)
{
	hoff_exec_opts o = hoff_exec_defaults();
	o.verify = true;
	run_on(make, g, s, &o, x);
	assert_true(x->m.checked);
	assert_int_equal(x->m.nfaults, 0);
}

void expect_same_faults(const ran *x, const ran *c)
{
	assert_true(x->m.nfaults >= 1);
	assert_int_equal(x->m.nfaults, c->m.nfaults);
	for (int64_t f = 0; f < x->m.nfaults; f++) {
		assert_int_equal(x->m.fault[f].step, c->m.fault[f].step);
		assert_int_equal(x->m.fault[f].at, c->m.fault[f].at);
		assert_int_equal(x->m.fault[f].tensor, c->m.fault[f].tensor);
		assert_int_equal(x->m.fault[f].byte, c->m.fault[f].byte);
	}
}

void check_events(const ran *x)
{
	const hoff_timeline *a = &x->pr.tl, *b = &x->m.tl;
	size_t i = 0, j = 0;
	for (;;) {
		/* stalls are timing, detaches instants the simulator alone
		 * draws: the commands are compared */
		while (i < a->nev && (a->ev[i].kind == HOFF_EV_STALL ||
				      a->ev[i].kind == HOFF_EV_DETACH ||
				      a->ev[i].kind == HOFF_EV_DROP))
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

int64_t wait_index(const hoff_xplan *p, int64_t cmd, int64_t ev)
{
	hoff_xcmds r;
	hoff_exec_opts o = hoff_exec_defaults();
	hoff_err e = {{0}};
	assert_int_equal(hoff_exec_record(p, &o, &r, NULL, &e), HOFF_OK);
	/* The waits just before a command (since the one before it) are its
	 * own; nw counts the waits so far, nw_since those before them. */
	int64_t nw = 0, nw_since = 0, found = -1;
	size_t since = 0;
	for (size_t i = 0; i < r.n; i++) {
		if (r.c[i].kind == HOFF_XCMD_WAIT)
			nw++;
		if (r.c[i].kind != HOFF_XCMD_TASK)
			continue;
		int64_t k = nw_since; /* the index of the next of them */
		for (size_t j = since; r.c[i].arg == cmd && j < i; j++) {
			if (r.c[j].kind != HOFF_XCMD_WAIT)
				continue;
			if (r.c[j].arg == ev)
				found = k;
			k++;
		}
		since = i + 1;
		nw_since = nw;
	}
	free(r.c);
	return found;
}
