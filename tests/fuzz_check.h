/* fuzz_check.h: what fuzz_graph.c and fuzz_sched.c share (header-only:
 * each builds alone as a libFuzzer target) — the input copied to an
 * exact-size buffer, so that ASan sees any read past it, and the check
 * that a rejection is clean. */
#ifndef HOFF_FUZZ_CHECK_H
#define HOFF_FUZZ_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hoff.h"

/* data in a buffer of exactly size bytes, no NUL (caller frees); NULL
 * when out of memory. */
static inline char *fuzz_copy(const uint8_t *data, size_t size)
{
	char *text = malloc(size ? size : 1);
	if (text)
		memcpy(text, data, size);
	return text;
}

/* A rejection (st not HOFF_OK) must leave no result (got false), be bad
 * input or out of memory, and say so in one line naming "fuzz.json";
 * aborts otherwise. */
static inline void fuzz_check_rejection(hoff_status st, bool got,
					const hoff_err *e)
{
	if (got || (st != HOFF_EINPUT && st != HOFF_ENOMEM) ||
	    strchr(e->msg, '\n') || strncmp(e->msg, "fuzz.json", 9) != 0) {
		fprintf(stderr, "bad rejection (%d): %s\n", st, e->msg);
		abort();
	}
}

#endif
