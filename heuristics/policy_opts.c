/* policy_opts.c: the planners' options — defaults, names, parsing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy_opts.h"

hoff_policy_opts hoff_policy_defaults(void)
{
	return (hoff_policy_opts){.kind = HOFF_POLICY_GREEDY,
				  .lookahead = 1,
				  .budget_bytes = HOFF_NONE,
				  .max_overhead = 0.01};
}

bool hoff_policy_parse(const char *name, hoff_policy_opts *o)
{
	if (!strcmp(name, "none")) {
		o->kind = HOFF_POLICY_NONE;
	} else if (!strcmp(name, "reactive")) {
		o->kind = HOFF_POLICY_REACTIVE;
	} else if (!strcmp(name, "checkpoint")) {
		o->kind = HOFF_POLICY_CHECKPOINT;
	} else if (!strcmp(name, "checkpoint+reactive")) {
		o->kind = HOFF_POLICY_CHECKPOINT_REACTIVE;
	} else if (!strcmp(name, "greedy")) {
		o->kind = HOFF_POLICY_GREEDY;
	} else if (!strncmp(name, "lookahead:", 10)) {
		char *end;
		long n = strtol(name + 10, &end, 10);
		if (end == name + 10 || *end || n < 1 || n > 1000000)
			return false;
		o->kind = HOFF_POLICY_LOOKAHEAD;
		o->lookahead = (int32_t)n;
	} else {
		return false;
	}
	return true;
}

void hoff_policy_name(const hoff_policy_opts *o, char *buf, size_t len)
{
	switch (o->kind) {
	case HOFF_POLICY_NONE:
		snprintf(buf, len, "none");
		break;
	case HOFF_POLICY_REACTIVE:
		snprintf(buf, len, "reactive");
		break;
	case HOFF_POLICY_CHECKPOINT:
		snprintf(buf, len, "checkpoint");
		break;
	case HOFF_POLICY_CHECKPOINT_REACTIVE:
		snprintf(buf, len, "checkpoint+reactive");
		break;
	case HOFF_POLICY_LOOKAHEAD:
		snprintf(buf, len, "lookahead:%d", o->lookahead);
		break;
	default:
		snprintf(buf, len, "greedy");
	}
}
