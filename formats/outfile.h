/* outfile.h: output files that never appear half-written — write to a
 * temporary file beside the target, then rename; "-" means stdout. Also
 * the file slurp used by every reader. */
#ifndef HOFF_OUTFILE_H
#define HOFF_OUTFILE_H

#include <stdio.h>

#include "hoff.h"

typedef struct hoff_outfile {
	FILE *f;
	char *path; /* target; NULL for stdout */
	char *tmp;  /* temporary path */
} hoff_outfile;

/* Opens a temporary file for path ("-": stdout). HOFF_EIO on failure. */
hoff_status hoff_outfile_open(hoff_outfile *o, const char *path, hoff_err *e);
/* Flushes, closes and renames into place; on any write error removes the
 * temporary file and returns HOFF_EIO. */
hoff_status hoff_outfile_commit(hoff_outfile *o, hoff_err *e);
/* Closes and removes the temporary file (after a failure). */
void hoff_outfile_abort(hoff_outfile *o);

/* Reads a whole file ("-": stdin) into *buf (caller frees, NUL-terminated),
 * its length in *len. HOFF_EIO naming path on failure. */
hoff_status hoff_slurp(const char *path, char **buf, size_t *len, hoff_err *e);

/* Writes s as a JSON string literal (quotes and escapes) to f. */
void hoff_json_string(FILE *f, const char *s);

#endif
