/* hoff.h: what every hoffopt module shares — status codes, the error
 * buffer, checked arithmetic and the picosecond clock of FORMAT.md.
 * Invariant: a function that fails returns a status other than HOFF_OK and
 * leaves a one-line message in its hoff_err; nothing else reports errors. */
#ifndef HOFF_H
#define HOFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HOFF_NONE (-1)

typedef enum hoff_status {
	HOFF_OK = 0,
	HOFF_EINPUT, /* malformed input: bad JSON, unknown id, rejected value */
	HOFF_ENOMEM, /* allocation failed or size overflowed */
	HOFF_EIO,    /* a file could not be read or written */
	HOFF_EINVALID,	/* a schedule breaks a rule of the machine model */
	HOFF_EUSAGE,	/* bad command-line arguments */
	HOFF_EINTERNAL, /* a broken invariant of hoffopt itself (a bug) */
	HOFF_ETIMEOUT,	/* a time limit ran out before a result (caught by
			   the pipeline that set it; never a command's) */
} hoff_status;

#define HOFF_ERRLEN 512
typedef struct hoff_err {
	char msg[HOFF_ERRLEN];
} hoff_err;

/* Formats msg into e (when e is not NULL) and returns st. */
hoff_status hoff_seterr(hoff_err *e, hoff_status st, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 3, 4)))
#endif
	;

/* API misuse: aborts naming the function (never for bad input). */
#define HOFF_REQUIRE(cond)                                                     \
	do {                                                                   \
		if (!(cond))                                                   \
			hoff_require_fail(__func__, #cond);                    \
	} while (0)
void hoff_require_fail(const char *fn, const char *cond);

/* 2^62: the largest duration or instant FORMAT.md admits (ps), also the
 * cap of byte counts and sums; the one name for it (no 0x1p62 or literal). */
#define HOFF_PS_LIMIT ((int64_t)1 << 62)

/* ps(x) = floor(x * 1e12 + 0.5) in IEEE double, exactly as FORMAT.md;
 * returns -1 when x is negative, not finite or the result is >= 2^62. */
int64_t hoff_ps(double x_s);

/* Picoseconds to seconds as written in reports: ps / 1e12. */
static inline double hoff_s(int64_t ps) { return (double)ps / 1e12; }

/* malloc(n * size) with overflow check; NULL on overflow or failure.
 * Blocks of 4 MiB or more (here and below) are advised onto transparent
 * huge pages. */
void *hoff_alloc(size_t n, size_t size);
/* calloc with the same contract. */
void *hoff_zalloc(size_t n, size_t size);
/* realloc(p, n * size) with overflow check; p is kept on failure. */
void *hoff_realloc(void *p, size_t n, size_t size);
/* *p resized to n items of size (hoff_realloc); false, *p kept, on
 * failure. For arrays that grow in step with another's capacity. */
bool hoff_resize(void **p, size_t n, size_t size);
/* Grows *p (holding *cap items of size) to hold at least need items;
 * doubles capacity. Returns false (and keeps *p) on overflow or failure. */
bool hoff_grow(void **p, size_t *cap, size_t need, size_t size);
/* Tunes the C library's allocator for a process that allocates and frees
 * the same big arrays many times (a CLI calls it once, first). */
void hoff_tune_malloc(void);

/* strdup that returns NULL for NULL. */
char *hoff_strdup(const char *s);

/* Progress of a long computation, handed a line at a time to whoever
 * asked for it (the CLI prints "hoffopt: LINE" on stderr): the libraries
 * never print. fn NULL: silent. */
typedef struct hoff_progress {
	void (*fn)(void *ctx, const char *line);
	void *ctx;
} hoff_progress;

/* Formats one line (no newline) and hands it to p->fn; nothing when p->fn
 * is NULL. */
void hoff_say(const hoff_progress *p, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;

/* Seconds on a monotonic clock (time limits and reported timings). */
double hoff_now_s(void);

/* Writes id into buf (len > 0) with '"' and '\\' escaped by a '\\', as
 * inside a JSON string, so a message that puts it between quotes is
 * unambiguous (control characters are left to the printer: the CLI shows
 * them as \xNN); cut short, never mid-escape, when buf is full. Returns
 * buf. */
const char *hoff_escape_id(char *buf, size_t len, const char *id);
/* hoff_escape_id into a buffer that lives as long as the enclosing block:
 * for an id among an error message's arguments. */
#define HOFF_QID(id) hoff_escape_id((char[256]){0}, 256, (id))

#endif
