/* ilp_names.c: the table of the model's column kinds (ilp_names.h), and the
 * names of its columns and rows, which the backend writes into LP/MPS files. */
#include <stddef.h>
#include <stdio.h>

#include "ilp.h"
#include "ilp_names.h"

/* Indexed by letter. Branching: the fetch counts (13) first, O_c before
 * X_cq (glpk_backend.c). */
static const hoff_col_kind_def kinds[128] = {
	[HOFF_COL_ZS] = {'z', true, false, 0, HOFF_WARM_STORED},
	[HOFF_COL_ZD] = {'Z', true, false, 0, HOFF_WARM_DETACHED},
	[HOFF_COL_R] = {'R', true, true, 0, HOFF_WARM_ISSUED},
	[HOFF_COL_Q] = {'Q', true, true, 0, HOFF_WARM_STORE_DONE},
	[HOFF_COL_YF] = {'Y', true, true, 0, HOFF_WARM_SHARE},
	[HOFF_COL_YS] = {'y', true, true, 0, HOFF_WARM_SHARE},
	[HOFF_COL_STALL] = {'s', false, false, 0, HOFF_WARM_STALL},
	[HOFF_COL_PEAK] = {'P', false, false, 0, HOFF_WARM_PEAK},
	[HOFF_COL_U] = {'U', false, true, 0, HOFF_WARM_SATURATED},
	[HOFF_COL_X] = {'X', false, true, 1, HOFF_WARM_COUNT},
	[HOFF_COL_O] = {'O', false, true, 2, HOFF_WARM_COUNT},
	[HOFF_COL_RC] = {'V', false, false, 0, HOFF_WARM_RECOMPUTED},
};

const hoff_col_kind_def *hoff_col_kind_of(int tag)
{
	if (tag < 0 || tag >= (int)(sizeof kinds / sizeof *kinds) ||
	    !kinds[tag].letter)
		return NULL;
	return &kinds[tag];
}

void hoff_ilp_col_name(const hoff_ilp *m, int32_t j, char *buf, size_t len)
{
	int tag = m->ctag[j];
	const hoff_col_kind_def *d = hoff_col_kind_of(tag);
	if (d && !d->two_args)
		snprintf(buf, len, "%c%d", tag, m->carg0[j]);
	else /* R (boundary), Q (instant), Y y U (window), X (boundary), O
		(O_COUNT); +1 keeps >= 0 */
		snprintf(buf, len, "%c%d_%d", tag, m->carg0[j],
			 m->carg1[j] + 1);
}

void hoff_ilp_row_name(const hoff_ilp *m, int32_t i, char *buf, size_t len)
{
	int tag = m->rtag[i];
	if (tag == 'M')
		snprintf(buf, len, "M%d_%d", m->rarg[i] + 1, i);
	else if (tag == 'C')
		snprintf(buf, len, "C%d_%d_%d", m->rarg[i] / 128,
			 m->rarg[i] % 128, i);
	else
		snprintf(buf, len, "%c%d_%d", tag, m->rarg[i], i);
}
