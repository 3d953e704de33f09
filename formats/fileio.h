/* fileio.h: the file input and output every reader and writer shares.
 * Not a format: it sits in formats/ because this folder's writers, the
 * solver's LP dump and the commands all use it. Output files never appear
 * half-written: a regular target is written to a fresh temporary file
 * (mkstemp) in its directory, then renamed over it, keeping its mode; a
 * non-regular one (/dev/null, a FIFO) is written in place; a symlink is
 * followed; "-" means stdout. Also the file slurp used by every reader,
 * bounded in size. */
#ifndef HOFF_FILEIO_H
#define HOFF_FILEIO_H

#include <stdio.h>

#include "hoff.h"

/* Largest input a reader takes: 4 GiB (a million-op graph is 0.3 GB). */
#define HOFF_MAX_INPUT_BYTES ((size_t)1 << 32)

typedef struct hoff_outfile {
	FILE *f;     /* NULL after hoff_outfile_open_name */
	char *path;  /* target, symlinks resolved; NULL for stdout */
	char *tmp;   /* temporary path; NULL when writing in place */
	bool direct; /* the target is not a regular file */
} hoff_outfile;

/* Opens the way to path ("-": stdout) as o->f. HOFF_EIO on failure. */
hoff_status hoff_outfile_open(hoff_outfile *o, const char *path, hoff_err *e);
/* As hoff_outfile_open, for a writer that opens files by name (GLPK):
 * no stream; it writes to hoff_outfile_name(o). path is not "-". */
hoff_status hoff_outfile_open_name(hoff_outfile *o, const char *path,
				   hoff_err *e);
/* The path to write to: the temporary file, or the target itself. */
const char *hoff_outfile_name(const hoff_outfile *o);
/* Flushes, closes and renames into place; on any write error removes the
 * temporary file and returns HOFF_EIO. */
hoff_status hoff_outfile_commit(hoff_outfile *o, hoff_err *e);
/* Commits two outputs that belong together (a schedule and its trace):
 * both are flushed first, and on a write error neither lands. Then b's
 * old target (a regular file) is removed, a is renamed into place, then
 * b: a process killed between the two renames leaves a without b, never
 * beside b's old content. HOFF_EIO naming the file on failure. */
hoff_status hoff_outfile_commit_pair(hoff_outfile *a, hoff_outfile *b,
				     hoff_err *e);
/* Closes and removes the temporary file (after a failure). */
void hoff_outfile_abort(hoff_outfile *o);
/* Installs the handlers that remove the live temporary files on SIGINT,
 * SIGTERM, SIGHUP and SIGPIPE (then die of the signal, as before; one
 * ignored at the start stays ignored), and ignores SIGXFSZ, so a write
 * past a file size limit is an error. For main(); not thread-safe. */
void hoff_outfile_signals(void);

/* True when a and b name the same existing regular file (device and
 * inode, after symlinks); false for "-". */
bool hoff_same_file(const char *a, const char *b);

/* Reads a whole file ("-": stdin) into *buf (caller frees, NUL-terminated),
 * its length in *len. HOFF_EIO naming path on failure; HOFF_EINPUT past
 * HOFF_MAX_INPUT_BYTES. */
hoff_status hoff_slurp(const char *path, char **buf, size_t *len, hoff_err *e);
/* hoff_slurp with a limit of max bytes. */
hoff_status hoff_slurp_max(const char *path, size_t max, char **buf,
			   size_t *len, hoff_err *e);

/* Writes s as a JSON string literal (quotes and escapes) to f. */
void hoff_json_string(FILE *f, const char *s);

#endif
