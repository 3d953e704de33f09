/* exec_cases.c: see exec_cases.h. */
#include "exec_cases.h"

#include <string.h>

void run_on(backend_new make, const hoff_graph *g, const hoff_sched *s,
	    const hoff_exec_opts *o, ran *x)
{
	memset(x, 0, sizeof *x);
	hoff_sim_opts so = hoff_sim_defaults();
	so.budget_bytes = INT64_MAX;
	so.timeline = true;
	so.op_times = true;
	hoff_err e = {{0}};
	assert_int_equal(hoff_sim_run(g, s, &so, &x->pr, &e), HOFF_OK);
	assert_true(x->pr.valid);
	assert_int_equal(hoff_xplan_build(g, s, &x->pr, 1, &x->p, &e),
			 HOFF_OK);
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
