/* jscan.h: what the readers of formats/ share (internal to formats/).
 * A strict, bounded JSON scanner that walks the top-level object and the
 * big arrays without building a tree; js_object(), which reads one array
 * element's fields in the same single pass with no allocation per element;
 * cJSON for the small top-level values, with the duplicate-key check cJSON
 * lacks; typed getters that word errors as "file: where: field must be
 * ..."; and the number printer.
 * Invariant: the scanner never reads past len and accepts exactly RFC 8259
 * JSON (UTF-8, no "\u0000", numbers of at most 63 characters, nesting of at
 * most JS_MAXDEPTH per value); cJSON only ever sees an extent it accepted. */
#ifndef HOFF_JSCAN_H
#define HOFF_JSCAN_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "hoff.h"
#include "strmap.h"

#define JS_MAXDEPTH 500  /* per value; below cJSON's own limit of 1000 */
#define JS_MAXFIELDS 16 /* known fields of one object */

/* Where a message points: "file: sect[idx] "id": ...". */
typedef struct js_where {
	const char *file;
	const char *sect; /* "tensors", "machine.device", ... or NULL */
	int64_t idx;      /* element index, or -1 */
	const char *id;   /* element id once known, or NULL */
} js_where;

typedef enum js_type {
	JS_ABSENT = 0,
	JS_NULL,
	JS_BOOL,
	JS_NUM,
	JS_STR,
	JS_ARR,
	JS_OBJ,
} js_type;

/* One field's value. Strings are decoded and NUL-terminated; they live
 * until the next js_object() (or as long as the cJSON tree). */
typedef struct js_val {
	js_type type;
	bool b;           /* JS_BOOL */
	double num;       /* JS_NUM */
	int64_t inum;	  /* JS_NUM read by js_object, exact == 1: itself */
	int8_t exact;	  /* JS_NUM by js_object: 1 an integer inum holds,
			     -1 not one; 0 by cJSON: num alone */
	const char *str;  /* JS_STR */
	/* JS_ARR of a list field (js_object only): its string items, and the
	 * index of the first item that is not a string, or -1. */
	const char **item;
	size_t nitem;
	int64_t bad_item;
	size_t off, at; /* internal: offsets in the scratch buffers */
} js_val;

typedef struct jscan {
	const char *text; /* (len) not necessarily NUL-terminated */
	size_t len, pos;
	const char *file;
	hoff_err *e;
	char dec_point;   /* the C library's decimal point (locale) */
	char *key; /* decoded key of the last js_member, NUL-terminated */
	size_t key_cap;
	hoff_strmap seen; /* top-level keys met so far */
	hoff_strpool pool;
	/* Scratch of js_object, reused element after element. */
	char *buf;          /* decoded strings */
	size_t nbuf, buf_cap;
	size_t *items;      /* offsets in buf of list items */
	size_t nitems, items_cap;
	const char **ptrs;  /* items as pointers; duplicate-key sort */
	size_t ptrs_cap;
	size_t *ukeys;      /* offsets in buf of unknown keys */
	size_t nukeys, ukeys_cap;
	const char *const *names; /* the field names nlen measures */
	size_t nlen[JS_MAXFIELDS];
} jscan;

void js_init(jscan *s, const char *text, size_t len, const char *file,
	     hoff_err *e);
void js_free(jscan *s);

/* "file:line:col: invalid JSON: reason" for byte offset pos. */
hoff_status js_syntax(jscan *s, size_t pos, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 3, 4)))
#endif
	;

/* "file: where: reason" (where may be empty). */
hoff_status js_fail(hoff_err *e, const js_where *w, hoff_status st,
		    const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 4, 5)))
#endif
	;

/* Keeps e's message on one line: ids may hold decoded control characters,
 * which become '?'. */
void js_oneline(hoff_err *e);

/* Skips an optional UTF-8 byte-order mark and whitespace, then expects the
 * top-level '{'. */
hoff_status js_begin(jscan *s);
/* Steps to the next member of the object being walked: *more is true with
 * the decoded key in s->key and s->pos at its value, false once '}' is
 * consumed. *first starts true. */
hoff_status js_member(jscan *s, bool *first, bool *more);
/* As js_member for the elements of an array whose '[' is consumed. */
hoff_status js_element(jscan *s, bool *first, bool *more);
/* Validates the value at s->pos, moves past it; [*a, *b) is its extent. */
hoff_status js_value(jscan *s, size_t *a, size_t *b);
/* Peeks the first byte of the value at s->pos (after whitespace); 0 at the
 * end of input. */
char js_peek(jscan *s);
/* Expects only whitespace after the top-level value. */
hoff_status js_end(jscan *s);
/* Records top-level key s->key; HOFF_EINPUT when it was met before. */
hoff_status js_key_once(jscan *s);
/* js_member then js_key_once for the top-level object: *k is the key's
 * index in keys[0..n), n when it is not one of them. */
hoff_status js_top_member(jscan *s, bool *first, bool *more,
			  const char *const *keys, int n, int *k);
/* After the top-level object: "KEY is required" (HOFF_EINPUT, naming w)
 * for the first keys[req[i]], i < n, that have[] did not meet. */
hoff_status js_required(hoff_err *e, const js_where *w, const bool *have,
			const char *const *keys, const int *req, size_t n);

/* Called by js_top_object for each top-level key: k is its index in the
 * keys, n when it is not one of them, s->pos at its value, which the
 * callback reads (and marks in its have[] when met). */
typedef hoff_status (*js_top_fn)(void *ctx, int k);
/* The top-level reader's skeleton: js_begin, each member through fn
 * (stopping at the first error), js_end, then js_required on have[] with
 * the n required keys req[] (where: the file, no section). */
hoff_status js_top_object(jscan *s, const char *const *keys, int nkeys,
			  js_top_fn fn, void *ctx, const bool *have,
			  const int *req, size_t n);

/* Reads the object at s->pos in one pass: slot[i] gets the member named
 * names[i] (JS_ABSENT when missing); fields with list[i] set that hold an
 * array get its string items. Other members are validated and checked for
 * duplicate keys. A value that is not an object is "not an object". */
hoff_status js_object(jscan *s, const js_where *w, const char *const *names,
		      const bool *list, int n, js_val *slot);

/* Parses extent [a, b) with cJSON into *out (caller deletes) and rejects
 * duplicate keys at any depth, naming w. */
hoff_status js_parse(jscan *s, size_t a, size_t b, const js_where *w,
		     cJSON **out);
/* Copies extent [a, b) without the whitespace outside strings (caller
 * frees); NULL on OOM. */
char *js_compact(const jscan *s, size_t a, size_t b);
/* The value of cJSON item c (NULL: absent). */
js_val js_from(const cJSON *c);
/* Fills slot[i] with the member of cJSON object o called names[i]. */
void js_fields(const cJSON *o, const char *const *names, int n,
	       js_val *slot);

/* Typed getters. A JSON null counts as absent for optional fields and is
 * rejected for required ones. *present (may be NULL) says whether a value
 * was given. */
hoff_status js_str(hoff_err *e, const js_where *w, const js_val *v,
		   const char *name, bool req, const char **out);
/* An integer (integral, |x| <= 2^53) >= min. */
hoff_status js_int(hoff_err *e, const js_where *w, const js_val *v,
		   const char *name, bool req, int64_t min, bool *present,
		   int64_t *out);
/* A finite number >= 0 (> 0 when positive). */
hoff_status js_num(hoff_err *e, const js_where *w, const js_val *v,
		   const char *name, bool req, bool positive, bool *present,
		   double *out);
hoff_status js_bool(hoff_err *e, const js_where *w, const js_val *v,
		    const char *name, bool *present, bool *out);
/* The header of a document: "format" must be the string `want`;
 * "version" the integer 1 or 2 (FORMAT.md's versions), into *out. */
hoff_status js_format(hoff_err *e, const js_where *w, const js_val *v,
		      const char *want);
hoff_status js_version(hoff_err *e, const js_where *w, const js_val *v,
		       int32_t *out);
/* Enters the array that is the value of top-level key `name` (s->pos
 * past its '['); else "NAME must not be null" or "NAME must be an array"
 * (HOFF_EINPUT, once the value is found valid JSON). */
hoff_status js_top_array(jscan *s, const char *name);
/* The keys every document's top level starts with, at these indices of
 * its key table: "format" and "version". */
enum { JS_K_FORMAT, JS_K_VERSION };
/* A small top-level value, as js_top_value hands it on. */
typedef struct js_top {
	int k;		/* its key's index */
	const cJSON *j; /* the value parsed */
	js_val v;	/* js_from(j) */
	js_where w;	/* where its errors are: the file's top level */
	size_t a, b;	/* its extent */
} js_top;
/* Reads a small top-level value other than the header's. */
typedef hoff_status (*js_value_fn)(void *ctx, const js_top *t);
/* Reads the small top-level value at s->pos, of key k (its name in
 * s->key), with cJSON: the header's keys itself, JS_K_FORMAT (js_format
 * against want) and JS_K_VERSION (into *version), every other key by
 * fn. */
hoff_status js_top_value(jscan *s, int k, const char *want, int32_t *version,
			 js_value_fn fn, void *ctx);

/* Prints x as the shortest "%.{15,16,17}g" that reads back exactly, with
 * a '.' whatever the locale; "null" when x is not finite (JSON has no
 * NaN). */
void js_put_num(FILE *f, double x);
/* Prints v in decimal (faster than fprintf for millions of fields). */
void js_put_int(FILE *f, int64_t v);
/* "%.17g" of x with a '.' whatever the locale ("null" if not finite). */
void js_put_num17(FILE *f, double x);

#endif
