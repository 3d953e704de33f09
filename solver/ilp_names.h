/* ilp_names.h: the kinds of the model's columns, in one table that the model's
 * files (ilp_*.c) and the solver backend (glpk_backend.c) both read:
 * each kind's letter (hoff_ilp.ctag, and the first letter of its name in
 * LP/MPS files), how the backend branches on it, and how a warm start
 * reads it off a simulated schedule. Private to solver/; ilp_names.c defines
 * the table and the column and row names, which need nothing else of
 * the model's files, so the backend does not call back into them. */
#ifndef HOFF_ILP_NAMES_H
#define HOFF_ILP_NAMES_H

#include <stdbool.h>
#include <stdint.h>

/* A column's kind; the value is its letter in hoff_ilp.ctag. */
typedef enum hoff_col_kind {
	HOFF_COL_ZS = 'z',    /* zs_i: interval i used, leaving by a store */
	HOFF_COL_ZD = 'Z',    /* zd_i: i used, leaving by a detach */
	HOFF_COL_R = 'R',     /* R_iq: i's prefetch issued at boundary <= q */
	HOFF_COL_Q = 'Q',     /* Q_iw: i's store complete by instant w */
	HOFF_COL_YF = 'Y',    /* Yf_iw: share of i's fetch done by window w */
	HOFF_COL_YS = 'y',    /* Ys_iw: share of i's store done by window w */
	HOFF_COL_STALL = 's', /* s_k: the stall before op k (k = n: tail) */
	HOFF_COL_PEAK = 'P',  /* Pk: the peak (overhead mode) */
	HOFF_COL_U = 'U',     /* U_cw: channel c saturated in window w */
	HOFF_COL_X = 'X',     /* X_cq: START fetches on tier c issued by
				 boundary q (a count, family (13)) */
	HOFF_COL_O = 'O',     /* O_c: other fetches on tier c (a count) */
	HOFF_COL_RC = 'V',    /* (v2) V_r: recompute candidate r chosen */
} hoff_col_kind;

/* How a warm start (hoff_ilp_start) reads a column off the simulation
 * of a schedule. */
typedef enum hoff_col_warm {
	HOFF_WARM_STALL,      /* the stall before its op */
	HOFF_WARM_PEAK,	      /* the peak */
	HOFF_WARM_STORED,     /* its interval is used and leaves by a store */
	HOFF_WARM_DETACHED,   /* its interval is used and leaves by a detach */
	HOFF_WARM_ISSUED,     /* its interval's prefetch is issued by then */
	HOFF_WARM_COUNT,      /* the count of its fetches (X, O) */
	HOFF_WARM_STORE_DONE, /* its store completed by the instant */
	HOFF_WARM_SHARE,      /* the share of its transfer done by then */
	HOFF_WARM_SATURATED,  /* set after the others, from its rows */
	HOFF_WARM_RECOMPUTED, /* its recompute candidate is chosen */
} hoff_col_warm;

typedef struct hoff_col_kind_def {
	char letter;	    /* hoff_col_kind's value */
	bool per_interval;  /* its first argument is an interval index */
	bool two_args;	    /* its name carries both arguments (R12_5) */
	int branch;	    /* the backend branches on kinds > 0 first,
			       higher first, then the earliest second
			       argument; 0: GLPK's choice */
	hoff_col_warm warm; /* how a warm start reads it */
} hoff_col_kind_def;

/* The definition of the kind with letter tag (ctag[j]); NULL for a
 * letter that is no kind. */
const hoff_col_kind_def *hoff_col_kind_of(int tag);

#endif
