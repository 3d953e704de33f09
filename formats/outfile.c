/* outfile.c: write-then-rename output files, the whole-file slurp of the
 * readers, and the JSON string escaper of the writers.
 * Invariant: the target path holds either its old content or the complete
 * new one; a failed write leaves no temporary file behind. */
#define _POSIX_C_SOURCE 200809L
#include "outfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

hoff_status hoff_outfile_open(hoff_outfile *o, const char *path, hoff_err *e)
{
	memset(o, 0, sizeof *o);
	if (strcmp(path, "-") == 0) {
		o->f = stdout;
		return HOFF_OK;
	}
	size_t n = strlen(path) + 32;
	o->path = hoff_strdup(path);
	o->tmp = malloc(n);
	if (!o->path || !o->tmp) {
		hoff_outfile_abort(o);
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	}
	snprintf(o->tmp, n, "%s.tmp.%ld", path, (long)getpid());
	o->f = fopen(o->tmp, "w");
	if (!o->f) {
		hoff_status st = hoff_seterr(e, HOFF_EIO, "cannot write %s: %s",
					     path, strerror(errno));
		hoff_outfile_abort(o);
		return st;
	}
	setvbuf(o->f, NULL, _IOFBF, (size_t)1 << 20); /* big files, few calls */
	return HOFF_OK;
}

hoff_status hoff_outfile_commit(hoff_outfile *o, hoff_err *e)
{
	hoff_status st = HOFF_OK;
	if (!o->path) {
		if (fflush(o->f) != 0 || ferror(o->f))
			st = hoff_seterr(e, HOFF_EIO, "cannot write <stdout>: %s",
					 strerror(errno));
		o->f = NULL;
		return st;
	}
	bool bad = ferror(o->f) != 0;
	int err = errno;
	if (fclose(o->f) != 0 && !bad) {
		bad = true;
		err = errno;
	}
	o->f = NULL;
	if (!bad && rename(o->tmp, o->path) != 0) {
		bad = true;
		err = errno;
	}
	if (bad)
		st = hoff_seterr(e, HOFF_EIO, "cannot write %s: %s", o->path,
				 strerror(err ? err : EIO));
	hoff_outfile_abort(o);
	return st;
}

void hoff_outfile_abort(hoff_outfile *o)
{
	if (o->f && o->path)
		fclose(o->f);
	if (o->tmp && o->path)
		remove(o->tmp); /* gone already after a rename */
	free(o->path);
	free(o->tmp);
	memset(o, 0, sizeof *o);
}

hoff_status hoff_slurp(const char *path, char **buf, size_t *len, hoff_err *e)
{
	bool std = strcmp(path, "-") == 0;
	const char *name = std ? "<stdin>" : path;
	FILE *f = std ? stdin : fopen(path, "rb");
	char *b = NULL;
	size_t n = 0, cap = 0;
	hoff_status st = HOFF_OK;
	*buf = NULL;
	*len = 0;
	if (!f)
		return hoff_seterr(e, HOFF_EIO, "cannot read %s: %s", name,
				   strerror(errno));
	struct stat sb;
	if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0)
		cap = (size_t)sb.st_size + 2; /* one read, no regrowth */
	for (;;) {
		if (!hoff_grow((void **)&b, &cap, n + 2, 1)) {
			st = hoff_seterr(e, HOFF_ENOMEM,
					 "cannot read %s: out of memory", name);
			goto out;
		}
		if (!b) { /* hoff_grow keeps a preset cap without allocating */
			b = hoff_alloc(cap, 1);
			if (!b) {
				st = hoff_seterr(e, HOFF_ENOMEM,
						 "cannot read %s: out of memory",
						 name);
				goto out;
			}
		}
		size_t got = fread(b + n, 1, cap - n - 1, f);
		n += got;
		if (got == 0) {
			if (ferror(f)) {
				st = hoff_seterr(e, HOFF_EIO, "cannot read %s: %s",
						 name, strerror(errno));
				goto out;
			}
			break;
		}
	}
	b[n] = '\0';
	*buf = b;
	*len = n;
	b = NULL;
out:
	free(b);
	if (!std)
		fclose(f);
	return st;
}

void hoff_json_string(FILE *f, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s, *run = p;
	putc('"', f);
	for (;; p++) {
		unsigned char c = *p;
		if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7f)
			continue;
		/* Write the plain run before c in one call. */
		if (p > run)
			fwrite(run, 1, (size_t)(p - run), f);
		run = p + 1;
		if (c == '\0')
			break;
		putc('\\', f);
		switch (c) {
		case '"':
		case '\\':
			putc(c, f);
			break;
		case '\b':
			putc('b', f);
			break;
		case '\f':
			putc('f', f);
			break;
		case '\n':
			putc('n', f);
			break;
		case '\r':
			putc('r', f);
			break;
		case '\t':
			putc('t', f);
			break;
		default:
			fputs("u00", f);
			putc(hex[c >> 4], f);
			putc(hex[c & 15], f);
		}
	}
	putc('"', f);
}
