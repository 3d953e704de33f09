/* bruteforce.c: see bruteforce.h. O(product of choices) simulations. */
#include "bruteforce.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "ilp.h"
#include "sim.h"

/* Choices of interval v: OFF plus its boundaries (START: boundaries). */
static int32_t bf_nchoice(const hoff_ilp_iv *v, int32_t n)
{
	if (v->c.b >= n)
		return 2;
	int32_t nb = v->c.b - v->lo;
	return v->c.kind == HOFF_CAND_START ? nb : nb + 1;
}

static int32_t bf_choice(const hoff_ilp_iv *v, int32_t n, int32_t c)
{
	if (v->c.b >= n)
		return c ? n - 1 : HOFF_ILP_OFF;
	if (v->c.kind == HOFF_CAND_START)
		return v->lo + c;
	return c == 0 ? HOFF_ILP_OFF : v->lo + c - 1;
}

int64_t bf_count(const hoff_graph *g, int64_t cap)
{
	hoff_ilp_iv *iv = NULL;
	int32_t niv = 0;
	hoff_err e;
	if (hoff_ilp_intervals(g, false, &iv, &niv, &e) != HOFF_OK)
		return cap + 1;
	int64_t total = 1;
	for (int32_t i = 0; i < niv && total <= cap; i++)
		total *= bf_nchoice(&iv[i], g->nops);
	free(iv);
	return total > cap ? cap + 1 : total;
}

void bf_solve(const hoff_graph *g, int64_t budget, double max_overhead,
	      bf_result *out)
{
	memset(out, 0, sizeof *out);
	hoff_ilp_iv *iv = NULL;
	int32_t niv = 0;
	hoff_err e;
	hoff_analysis an;
	if (hoff_ilp_intervals(g, false, &iv, &niv, &e) != HOFF_OK ||
	    hoff_analyze(g, &an, &e) != HOFF_OK)
		return;
	double bd = floor((1.0 + max_overhead) * (double)an.lower_bound_ps);
	int64_t bound = bd < 4e18 ? (int64_t)bd : INT64_MAX;
	int64_t cap = budget != HOFF_NONE ? budget : g->device.memory_bytes;
	int32_t *c = calloc((size_t)niv + 1, sizeof *c);
	int32_t *pick = calloc((size_t)niv + 1, sizeof *pick);
	for (;;) {
		for (int32_t i = 0; i < niv; i++)
			pick[i] = bf_choice(&iv[i], g->nops, c[i]);
		hoff_sched *s = NULL;
		if (hoff_ilp_emit(g, iv, niv, pick, "bf", &s, &e) == HOFF_OK) {
			hoff_sim_opts o = hoff_sim_defaults();
			o.budget_bytes = cap;
			hoff_sim_result r;
			if (hoff_sim_run(g, s, &o, &r, &e) == HOFF_OK) {
				out->combos++;
				bool ok = r.valid &&
					  (budget != HOFF_NONE ||
					   r.summary.makespan_ps <= bound);
				double obj = budget != HOFF_NONE
						     ? (double)r.summary.stall_ps
						     : (double)r.summary
							       .peak_bytes;
				if (ok && (!out->found || obj < out->obj)) {
					out->found = true;
					out->obj = obj;
					out->sum = r.summary;
					for (int32_t i = 0; i < niv && i < 64;
					     i++)
						out->pick[i] = pick[i];
				}
				hoff_sim_result_free(&r);
			}
			hoff_sched_free(s);
		}
		int32_t i = 0;
		while (i < niv && ++c[i] == bf_nchoice(&iv[i], g->nops))
			c[i++] = 0;
		if (i == niv)
			break;
	}
	free(c);
	free(pick);
	free(iv);
}
