/* sched.c: schedule container and its structural check. */
#include "sched.h"

#include <stdlib.h>

hoff_sched *hoff_sched_new(void)
{
	hoff_sched *s = calloc(1, sizeof *s);
	if (s) {
		s->budget_bytes = HOFF_NONE;
		s->version = 1;
	}
	return s;
}

void hoff_sched_free(hoff_sched *s)
{
	if (!s)
		return;
	free(s->step);
	free(s->graph);
	free(s->policy);
	free(s);
}

hoff_status hoff_sched_push(hoff_sched *s, hoff_step_kind kind, int32_t id,
			    int32_t tier)
{
	if (!hoff_grow((void **)&s->step, &s->cap, (size_t)s->nsteps + 1,
		       sizeof *s->step))
		return HOFF_ENOMEM;
	s->step[s->nsteps++] = (hoff_step){
		.id = id, .tier = (int16_t)tier, .kind = (uint8_t)kind};
	return HOFF_OK;
}

bool hoff_sched_same_steps(const hoff_sched *a, const hoff_sched *b)
{
	if (a->nsteps != b->nsteps)
		return false;
	for (int64_t i = 0; i < a->nsteps; i++) {
		const hoff_step *x = &a->step[i], *y = &b->step[i];
		if (x->id != y->id || x->tier != y->tier || x->kind != y->kind)
			return false;
	}
	return true;
}

bool hoff_sched_uses_v2(const hoff_sched *s)
{
	for (int64_t i = 0; i < s->nsteps; i++)
		if (s->step[i].kind == HOFF_STEP_RECOMPUTE ||
		    s->step[i].kind == HOFF_STEP_DROP)
			return true;
	return false;
}

hoff_status hoff_sched_set_policy(hoff_sched *s, const char *policy)
{
	char *p = hoff_strdup(policy);
	if (policy && !p)
		return HOFF_ENOMEM;
	free(s->policy);
	s->policy = p;
	return HOFF_OK;
}

hoff_status hoff_sched_check(const hoff_sched *s, const hoff_graph *g,
			     const char *file, hoff_err *e)
{
	char qa[256], qb[256]; /* ids escaped for the messages */
	int32_t next = 0;
	for (int64_t i = 0; i < s->nsteps; i++) {
		const hoff_step *st = &s->step[i];
		switch (st->kind) {
		case HOFF_STEP_OP:
			if (st->id < 0 || st->id >= g->nops)
				return hoff_seterr(
					e, HOFF_EINPUT,
					"%s: steps[%lld]: unknown op", file,
					(long long)i);
			if (st->id != next && next == g->nops)
				return hoff_seterr(
					e, HOFF_EINPUT,
					"%s: steps[%lld] \"%s\": op repeated "
					"after the last op",
					file, (long long)i,
					hoff_escape_id(qa, sizeof qa,
						       g->op[st->id].id));
			if (st->id != next)
				return hoff_seterr(
					e, HOFF_EINPUT,
					"%s: steps[%lld] \"%s\": op %s; "
					"expected \"%s\" (graph order)",
					file, (long long)i,
					hoff_escape_id(qa, sizeof qa,
						       g->op[st->id].id),
					st->id < next ? "repeated or out of "
							"order"
						      : "out of order",
					hoff_escape_id(qb, sizeof qb,
						       g->op[next].id));
			next++;
			break;
		case HOFF_STEP_PREFETCH:
		case HOFF_STEP_STORE:
			if (st->tier < 0 || st->tier >= g->ntiers)
				return hoff_seterr(
					e, HOFF_EINPUT,
					"%s: steps[%lld]: unknown tier", file,
					(long long)i);
			/* fall through */
		case HOFF_STEP_DETACH:
		case HOFF_STEP_DROP:
			if (st->id < 0 || st->id >= g->ntensors)
				return hoff_seterr(
					e, HOFF_EINPUT,
					"%s: steps[%lld]: unknown tensor", file,
					(long long)i);
			break;
		case HOFF_STEP_RECOMPUTE:
			if (st->id < 0 || st->id >= g->nops)
				return hoff_seterr(
					e, HOFF_EINPUT,
					"%s: steps[%lld]: unknown op", file,
					(long long)i);
			if (st->id >= next)
				return hoff_seterr(
					e, HOFF_EINPUT,
					"%s: steps[%lld] \"%s\": recompute "
					"before the op's own step",
					file, (long long)i,
					hoff_escape_id(qa, sizeof qa,
						       g->op[st->id].id));
			break;
		default:
			return hoff_seterr(e, HOFF_EINPUT,
					   "%s: steps[%lld]: unknown step kind",
					   file, (long long)i);
		}
	}
	if (next != g->nops)
		return hoff_seterr(
			e, HOFF_EINPUT, "%s: steps: op \"%s\" is missing", file,
			hoff_escape_id(qa, sizeof qa, g->op[next].id));
	return HOFF_OK;
}
