/* fileio.c: write-then-rename output files, the whole-file slurp of the
 * readers, and the JSON string escaper of the writers.
 * Invariant: a regular target holds either its old content or the complete
 * new one, with its mode kept; a failed write leaves no temporary file
 * behind, nor does SIGINT, SIGTERM, SIGHUP or SIGPIPE once
 * hoff_outfile_signals has run (the live temporary files are in `live`);
 * a non-regular target (/dev/null, a FIFO, a terminal) is written in
 * place and never replaced; a symlink is followed to its target. */
#define _POSIX_C_SOURCE 200809L
#include "fileio.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The temporary files that exist now, for the signal handler to remove:
 * a slot is set before mkstemp makes the file (so no instant exists
 * where the file is there and the handler does not know it; the handler
 * may then unlink the template or a name mkstemp is still choosing,
 * which is harmless), and cleared after the file is renamed or removed
 * and before the name is freed. */
#define LIVE_MAX 16
static char *_Atomic live[LIVE_MAX];

static void live_add(char *tmp)
{
	for (int i = 0; i < LIVE_MAX; i++) {
		char *none = NULL;
		if (atomic_compare_exchange_strong(&live[i], &none, tmp))
			return;
	} /* all taken: this one is not removed on a signal */
}

static void live_drop(const char *tmp)
{
	for (int i = 0; i < LIVE_MAX; i++) {
		char *cur = (char *)tmp;
		if (atomic_compare_exchange_strong(&live[i], &cur, NULL))
			return;
	}
}

/* Removes the live temporary files, then dies of sig as it would have. */
static void on_signal(int sig)
{
	for (int i = 0; i < LIVE_MAX; i++) {
		char *p = atomic_load(&live[i]);
		if (p)
			unlink(p);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

void hoff_outfile_signals(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
	for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
		struct sigaction old, sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		sa.sa_flags = SA_RESETHAND;
		/* one ignored at start (nohup, a shell's background job)
		 * stays ignored */
		if (sigaction(sigs[i], NULL, &old) == 0 &&
		    old.sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
	}
	/* Past a file size limit, a write fails (EFBIG: exit 2, the
	 * temporary file removed) instead of killing the process. */
	signal(SIGXFSZ, SIG_IGN);
}

/* The file a path names, following symlinks: a malloc'd path (caller
 * frees), or NULL with errno set. A dangling link resolves to where it
 * points, so the file is created there. */
static char *resolve(const char *path)
{
	char *cur = hoff_strdup(path);
	for (int hops = 0; cur && hops < 40; hops++) {
		struct stat sb;
		if (lstat(cur, &sb) != 0 || !S_ISLNK(sb.st_mode))
			return cur;
		char link[4096];
		ssize_t n = readlink(cur, link, sizeof link - 1);
		if (n < 0) {
			free(cur);
			return NULL;
		}
		link[n] = '\0';
		char *next;
		const char *slash = strrchr(cur, '/');
		if (link[0] == '/' || !slash) {
			next = hoff_strdup(link);
		} else { /* relative to the link's directory */
			size_t d = (size_t)(slash - cur) + 1;
			next = malloc(d + (size_t)n + 1);
			if (next) {
				memcpy(next, cur, d);
				memcpy(next + d, link, (size_t)n + 1);
			}
		}
		free(cur);
		cur = next;
	}
	if (cur) {
		free(cur);
		errno = ELOOP;
	} else {
		errno = ENOMEM;
	}
	return NULL;
}

/* Opens the way to o->path: a non-regular file directly; otherwise a
 * fresh temporary file (mkstemp: O_EXCL, never a planted link) in the
 * target's directory, short-named so that any name the directory takes
 * works, with the target's mode (or what a new file would get). */
static hoff_status open_target(hoff_outfile *o, const char *path, bool stream,
			       hoff_err *e)
{
	struct stat sb;
	bool exists = stat(o->path, &sb) == 0;
	if (exists && !S_ISREG(sb.st_mode)) {
		o->direct = true; /* a device, FIFO or tty: write into it */
		if (stream && !(o->f = fopen(o->path, "w")))
			return hoff_seterr(e, HOFF_EIO, "cannot write %s: %s",
					   path, strerror(errno));
		return HOFF_OK;
	}
	const char *slash = strrchr(o->path, '/');
	size_t d = slash ? (size_t)(slash - o->path) + 1 : 0;
	static const char base[] = ".hoffopt-XXXXXX";
	if (!(o->tmp = malloc(d + sizeof base)))
		return hoff_seterr(e, HOFF_ENOMEM, "out of memory");
	memcpy(o->tmp, o->path, d);
	memcpy(o->tmp + d, base, sizeof base);
	live_add(o->tmp); /* before the file exists: see live */
	int fd = mkstemp(o->tmp);
	if (fd < 0) {
		int err = errno;
		live_drop(o->tmp);
		free(o->tmp);
		o->tmp = NULL;
		return hoff_seterr(e, HOFF_EIO, "cannot write %s: %s", path,
				   strerror(err));
	}
	mode_t mode;
	if (exists) {
		mode = sb.st_mode & 07777;
	} else {
		mode_t mask = umask(0);
		umask(mask);
		mode = 0666 & ~mask;
	}
	if (fchmod(fd, mode) != 0 || (stream && !(o->f = fdopen(fd, "w")))) {
		int err = errno;
		close(fd);
		return hoff_seterr(e, HOFF_EIO, "cannot write %s: %s", path,
				   strerror(err));
	}
	if (!stream)
		close(fd); /* the caller's writer opens it by name */
	return HOFF_OK;
}

static hoff_status open_any(hoff_outfile *o, const char *path, bool stream,
			    hoff_err *e)
{
	memset(o, 0, sizeof *o);
	if (strcmp(path, "-") == 0) {
		o->f = stdout;
		return HOFF_OK;
	}
	if (!(o->path = resolve(path))) {
		hoff_status st = hoff_seterr(
			e, errno == ENOMEM ? HOFF_ENOMEM : HOFF_EIO,
			"cannot write %s: %s", path, strerror(errno));
		hoff_outfile_abort(o);
		return st;
	}
	hoff_status st = open_target(o, path, stream, e);
	if (st != HOFF_OK) {
		hoff_outfile_abort(o);
		return st;
	}
	if (o->f)
		setvbuf(o->f, NULL, _IOFBF, (size_t)1 << 20); /* few calls */
	return HOFF_OK;
}

hoff_status hoff_outfile_open(hoff_outfile *o, const char *path, hoff_err *e)
{
	return open_any(o, path, true, e);
}

hoff_status hoff_outfile_open_name(hoff_outfile *o, const char *path,
				   hoff_err *e)
{
	HOFF_REQUIRE(strcmp(path, "-") != 0);
	return open_any(o, path, false, e);
}

const char *hoff_outfile_name(const hoff_outfile *o)
{
	return o->tmp ? o->tmp : o->path;
}

/* Flushes and closes o's stream: HOFF_EIO naming the target when a write
 * failed (o then still holds its temporary file, for abort). */
static hoff_status finish(hoff_outfile *o, hoff_err *e)
{
	if (!o->path) { /* stdout stays open */
		hoff_status st = HOFF_OK;
		if (o->f && (fflush(o->f) != 0 || ferror(o->f)))
			st = hoff_seterr(e, HOFF_EIO,
					 "cannot write <stdout>: %s",
					 strerror(errno ? errno : EIO));
		o->f = NULL;
		return st;
	}
	bool bad = false;
	int err = 0;
	if (o->f) {
		bad = ferror(o->f) != 0;
		err = errno;
		if (fclose(o->f) != 0 && !bad) {
			bad = true;
			err = errno;
		}
		o->f = NULL;
	}
	if (bad)
		return hoff_seterr(e, HOFF_EIO, "cannot write %s: %s", o->path,
				   strerror(err ? err : EIO));
	return HOFF_OK;
}

/* Renames o's temporary file into place (none: nothing to do), then
 * frees o. */
static hoff_status place(hoff_outfile *o, hoff_err *e)
{
	hoff_status st = HOFF_OK;
	if (o->tmp && rename(o->tmp, o->path) != 0)
		st = hoff_seterr(e, HOFF_EIO, "cannot write %s: %s", o->path,
				 strerror(errno));
	else if (o->tmp) {
		live_drop(o->tmp); /* renamed: nothing to remove */
		free(o->tmp);
		o->tmp = NULL;
	}
	hoff_outfile_abort(o);
	return st;
}

hoff_status hoff_outfile_commit(hoff_outfile *o, hoff_err *e)
{
	hoff_status st = finish(o, e);
	if (st != HOFF_OK) {
		hoff_outfile_abort(o);
		return st;
	}
	return place(o, e);
}

hoff_status hoff_outfile_commit_pair(hoff_outfile *a, hoff_outfile *b,
				     hoff_err *e)
{
	hoff_status st = finish(a, e);
	if (st == HOFF_OK)
		st = finish(b, e);
	if (st != HOFF_OK) {
		hoff_outfile_abort(a);
		hoff_outfile_abort(b);
		return st;
	}
	/* b's old content must not outlive a's: remove it before a lands */
	if (b->tmp)
		unlink(b->path);
	st = place(a, e);
	if (st != HOFF_OK) {
		hoff_outfile_abort(b);
		return st;
	}
	return place(b, e);
}

void hoff_outfile_abort(hoff_outfile *o)
{
	if (o->f && o->path)
		fclose(o->f);
	if (o->tmp) {
		remove(o->tmp);
		live_drop(o->tmp);
	}
	free(o->path);
	free(o->tmp);
	memset(o, 0, sizeof *o);
}

bool hoff_same_file(const char *a, const char *b)
{
	struct stat x, y;
	if (!a || !b || !strcmp(a, "-") || !strcmp(b, "-"))
		return false;
	return stat(a, &x) == 0 && stat(b, &y) == 0 && S_ISREG(x.st_mode) &&
	       x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

hoff_status hoff_slurp(const char *path, char **buf, size_t *len, hoff_err *e)
{
	return hoff_slurp_max(path, HOFF_MAX_INPUT_BYTES, buf, len, e);
}

hoff_status hoff_slurp_max(const char *path, size_t max, char **buf,
			   size_t *len, hoff_err *e)
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
	if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) &&
	    sb.st_size > 0) {
		if ((uint64_t)sb.st_size > max)
			goto too_big;
		cap = (size_t)sb.st_size + 2; /* one read, no regrowth */
	}
	for (;;) {
		if (!b || cap - n < 2) {
			/* Never past max + 2 bytes: a read that brings one byte
			 * more than max is refused (a pipe, /dev/zero). */
			size_t want = !b && cap ? cap : cap ? cap * 2 : 65536;
			if (want > max + 2)
				want = max + 2;
			if (want < n + 2)
				goto too_big;
			if (!hoff_resize((void **)&b, want, 1)) {
				st = hoff_seterr(
					e, HOFF_ENOMEM,
					"cannot read %s: out of memory", name);
				goto out;
			}
			cap = want;
		}
		size_t got = fread(b + n, 1, cap - n - 1, f);
		/* JSON text holds no NUL byte: /dev/zero or a binary file is
		 * refused at its first block, not after the size limit */
		const char *nul = memchr(b + n, '\0', got);
		if (nul) {
			st = hoff_seterr(e, HOFF_EINPUT,
					 "%s: byte %zu is NUL: not JSON text",
					 name, (size_t)(nul - b));
			goto out;
		}
		n += got;
		if (n > max)
			goto too_big;
		if (got == 0) {
			if (ferror(f)) {
				st = hoff_seterr(e, HOFF_EIO,
						 "cannot read %s: %s", name,
						 strerror(errno));
				goto out;
			}
			break;
		}
	}
	b[n] = '\0';
	*buf = b;
	*len = n;
	b = NULL;
	goto out;
too_big:
	st = hoff_seterr(e, HOFF_EINPUT,
			 "%s: input larger than %zu bytes (hoffopt's limit)",
			 name, max);
out:
	free(b);
	if (!std)
		fclose(f);
	return st;
}

void hoff_json_string(FILE *f, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	/* JSON's short escapes; other control bytes (and DEL) as \u00XX */
	static const char esc[] = "\"\\\b\f\n\r\t", esc_as[] = "\"\\bfnrt";
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
		const char *k = memchr(esc, c, sizeof esc - 1);
		if (k) {
			putc(esc_as[k - esc], f);
		} else {
			fputs("u00", f);
			putc(hex[c >> 4], f);
			putc(hex[c & 15], f);
		}
	}
	putc('"', f);
}
