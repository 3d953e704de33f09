/* jscan.c: the strict JSON scanner, the one-pass object reader and the
 * cJSON helpers of jscan.h.
 * The scanner is iterative with a bracket stack, so hostile nesting costs
 * no C stack; every read is guarded by pos < len. It validates all of
 * RFC 8259 itself. js_object() decodes an element's fields into scratch
 * buffers that are reused element after element, so reading a million
 * tensors allocates nothing per tensor; cJSON is kept for the few small
 * top-level values, and for the rare nested value of an unknown key, which
 * must still be free of duplicate keys. */
#include "jscan.h"

#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void js_init(jscan *s, const char *text, size_t len, const char *file,
	     hoff_err *e)
{
	memset(s, 0, sizeof *s);
	s->text = text;
	s->len = len;
	s->file = file;
	s->e = e;
	const char *dp = localeconv()->decimal_point;
	s->dec_point = dp && dp[0] ? dp[0] : '.';
}

void js_free(jscan *s)
{
	free(s->key);
	free(s->buf);
	free(s->items);
	free(s->ptrs);
	free(s->ukeys);
	hoff_strmap_free(&s->seen);
	hoff_strpool_free(&s->pool);
	memset(s, 0, sizeof *s);
}

hoff_status js_syntax(jscan *s, size_t pos, const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (pos > s->len)
		pos = s->len;
	long long line = 1, col = 1;
	for (size_t i = 0; i < pos; i++) {
		if (s->text[i] == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	return hoff_seterr(s->e, HOFF_EINPUT, "%s:%lld:%lld: invalid JSON: %s",
			   s->file, line, col, msg);
}

hoff_status js_fail(hoff_err *e, const js_where *w, hoff_status st,
		    const char *fmt, ...)
{
	char msg[320], where[160] = "";
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (w->sect) {
		int n = snprintf(where, sizeof where, ": %s", w->sect);
		if (n > 0 && (size_t)n < sizeof where && w->idx >= 0)
			n += snprintf(where + n, sizeof where - (size_t)n,
				      "[%lld]", (long long)w->idx);
		if (n > 0 && (size_t)n < sizeof where && w->id) {
			/* the id as a JSON string: its '"' and '\\' escaped,
			 * so the line reads one way */
			char id[104];
			size_t k = 0;
			for (const char *p = w->id; *p && k < 100; p++) {
				if (*p == '"' || *p == '\\')
					id[k++] = '\\';
				id[k++] = *p;
			}
			id[k] = '\0';
			snprintf(where + n, sizeof where - (size_t)n,
				 " \"%.100s\"", id);
		}
	}
	return hoff_seterr(e, st, "%s%s: %s", w->file, where, msg);
}

void js_oneline(hoff_err *e)
{
	for (unsigned char *p = (unsigned char *)e->msg; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			*p = '?';
}

/* ---- scanner ---- */

static bool is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static void skip_ws(jscan *s)
{
	const unsigned char *t = (const unsigned char *)s->text;
	size_t i = s->pos, n = s->len;
	/* most calls meet a token at once: one comparison says so */
	while (i < n && t[i] <= ' ' && is_ws((char)t[i]))
		i++;
	s->pos = i;
}

/* Names the byte at pos for a message. */
static hoff_status unexpected(jscan *s, const char *wanted)
{
	if (s->pos >= s->len)
		return js_syntax(s, s->pos, "unexpected end of input; expected %s",
				 wanted);
	unsigned char c = (unsigned char)s->text[s->pos];
	if (c == '}' || c == ']') {
		/* "a": 1,} : the mistake is the comma, so point at it */
		size_t k = s->pos;
		while (k > 0 && is_ws(s->text[k - 1]))
			k--;
		if (k > 0 && s->text[k - 1] == ',')
			return js_syntax(s, k - 1, "trailing comma before '%c'",
					 c);
	}
	if (c > 0x20 && c < 0x7f)
		return js_syntax(s, s->pos, "unexpected '%c'; expected %s", c,
				 wanted);
	return js_syntax(s, s->pos, "unexpected byte 0x%02x; expected %s", c,
			 wanted);
}

static int hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The code unit of "\uXXXX" at t[i] (i at the backslash), or -1. */
static long u_escape(const unsigned char *t, size_t len, size_t i)
{
	if (len - i < 6 || t[i] != '\\' || t[i + 1] != 'u')
		return -1;
	long v = 0;
	for (size_t k = i + 2; k < i + 6; k++) {
		int h = hexval(t[k]);
		if (h < 0)
			return -1;
		v = v * 16 + h;
	}
	return v;
}

/* Length of the UTF-8 sequence at t (n bytes available), 0 if invalid. */
static size_t utf8_len(const unsigned char *t, size_t n)
{
	unsigned char c = t[0];
	size_t k;
	unsigned char lo = 0x80, hi = 0xbf;
	if (c >= 0xc2 && c <= 0xdf)
		k = 2;
	else if (c >= 0xe0 && c <= 0xef) {
		k = 3;
		if (c == 0xe0)
			lo = 0xa0;
		if (c == 0xed)
			hi = 0x9f; /* no UTF-16 surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		k = 4;
		if (c == 0xf0)
			lo = 0x90;
		if (c == 0xf4)
			hi = 0x8f;
	} else
		return 0;
	if (n < k || t[1] < lo || t[1] > hi)
		return 0;
	for (size_t i = 2; i < k; i++)
		if (t[i] < 0x80 || t[i] > 0xbf)
			return 0;
	return k;
}

/* Bytes a string holds as they are: printable ASCII but '"' and '\\'. */
static const unsigned char plain[256] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  /* 0x00 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  /* 0x10 */
	1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,  /* 0x20 */
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,  /* 0x30 */
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,  /* 0x40 */
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1,  /* 0x50 */
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,  /* 0x60 */
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,  /* 0x70 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  /* 0x80 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  /* 0x90 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  /* 0xa0 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  /* 0xb0 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  /* 0xc0 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  /* 0xd0 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  /* 0xe0 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  /* 0xf0 */
};

/* The first byte at or after t[i] that plain[] calls not plain, or n:
 * eight bytes at a time where the machine is little-endian (a byte under
 * 0x20, at or over 0x80, '"' or '\\' sets its high bit in the mask; the
 * lowest set bit is exact, as borrows only run upwards), the rest one by
 * one. */
static size_t plain_run(const unsigned char *t, size_t i, size_t n)
{
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && \
	__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	const uint64_t ones = 0x0101010101010101u, high = 0x8080808080808080u;
	for (; n - i >= 8; i += 8) {
		uint64_t w, q, b;
		memcpy(&w, t + i, 8);
		q = w ^ (ones * '"');
		b = w ^ (ones * '\\');
		uint64_t m = (((w - ones * 0x20) | w) | ((q - ones) & ~q) |
			      ((b - ones) & ~b)) &
			     high;
		if (m)
			return i + ((size_t)__builtin_ctzll(m) >> 3);
	}
#endif
	while (i < n && plain[t[i]])
		i++;
	return i;
}

/* Scans the string whose '"' is at s->pos; *esc says whether it holds an
 * escape. */
static hoff_status scan_string(jscan *s, bool *esc)
{
	const unsigned char *t = (const unsigned char *)s->text;
	size_t start = s->pos, i = s->pos + 1, n = s->len;
	*esc = false;
	for (;;) {
		i = plain_run(t, i, n);
		if (i >= n)
			return js_syntax(s, start, "unterminated string");
		unsigned char c = t[i];
		if (c == '"')
			break;
		if (c == '\\') {
			*esc = true;
			if (i + 1 >= n)
				return js_syntax(s, start, "unterminated string");
			c = t[i + 1];
			if (c != 'u') {
				if (!strchr("\"\\/bfnrt", c) || c == 0)
					return js_syntax(s, i,
							 "invalid escape in string");
				i += 2;
				continue;
			}
			long u = u_escape(t, n, i);
			if (u < 0)
				return js_syntax(s, i, "invalid \\u escape");
			if (u == 0)
				return js_syntax(s, i,
						 "\\u0000 is not allowed in strings");
			if (u >= 0xdc00 && u <= 0xdfff)
				return js_syntax(s, i, "unpaired UTF-16 surrogate");
			if (u >= 0xd800 && u <= 0xdbff) {
				long l = u_escape(t, n, i + 6);
				if (l < 0xdc00 || l > 0xdfff)
					return js_syntax(s, i,
							 "unpaired UTF-16 surrogate");
				i += 6;
			}
			i += 6;
			continue;
		}
		if (c < 0x20)
			return js_syntax(s, i,
					 "control character in string (escape it)");
		size_t k = utf8_len(t + i, n - i);
		if (!k)
			return js_syntax(s, i, "invalid UTF-8 in string");
		i += k;
	}
	s->pos = i + 1;
	return HOFF_OK;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* RFC 8259 number; cJSON reads at most 63 characters of one. */
static hoff_status scan_number(jscan *s)
{
	const char *t = s->text;
	size_t i = s->pos, n = s->len;
	if (i < n && t[i] == '-')
		i++;
	if (i < n && t[i] == '0')
		i++;
	else if (i < n && t[i] >= '1' && t[i] <= '9')
		while (i < n && is_digit(t[i]))
			i++;
	else
		return js_syntax(s, i, "invalid number");
	if (i < n && t[i] == '.') {
		i++;
		if (i >= n || !is_digit(t[i]))
			return js_syntax(s, i, "invalid number");
		while (i < n && is_digit(t[i]))
			i++;
	}
	if (i < n && (t[i] == 'e' || t[i] == 'E')) {
		i++;
		if (i < n && (t[i] == '+' || t[i] == '-'))
			i++;
		if (i >= n || !is_digit(t[i]))
			return js_syntax(s, i, "invalid number");
		while (i < n && is_digit(t[i]))
			i++;
	}
	if (i - s->pos > 63)
		return js_syntax(s, s->pos, "number longer than 63 characters");
	s->pos = i;
	return HOFF_OK;
}

static hoff_status scan_literal(jscan *s)
{
	static const char *const lits[] = {"true", "false", "null"};
	for (int k = 0; k < 3; k++) {
		size_t l = strlen(lits[k]);
		if (s->len - s->pos >= l &&
		    memcmp(s->text + s->pos, lits[k], l) == 0) {
			s->pos += l;
			return HOFF_OK;
		}
	}
	return unexpected(s, "a value");
}

/* A member key and its ':': [*a, *b) is the key string (quotes
 * included), *esc whether it holds an escape. */
static hoff_status scan_key(jscan *s, size_t *a, size_t *b, bool *esc)
{
	skip_ws(s);
	if (s->pos >= s->len || s->text[s->pos] != '"')
		return unexpected(s, "a key string");
	*a = s->pos;
	hoff_status st = scan_string(s, esc);
	if (st != HOFF_OK)
		return st;
	*b = s->pos;
	skip_ws(s);
	if (s->pos >= s->len || s->text[s->pos] != ':')
		return unexpected(s, "':'");
	s->pos++;
	return HOFF_OK;
}

hoff_status js_value(jscan *s, size_t *a, size_t *b)
{
	char stack[JS_MAXDEPTH]; /* the closer expected at each level */
	int depth = 0;
	hoff_status st;
	bool esc;
	size_t ka, kb; /* a nested member's key, skipped */
	skip_ws(s);
	*a = s->pos;
	for (;;) {
		skip_ws(s);
		if (s->pos >= s->len)
			return unexpected(s, "a value");
		char c = s->text[s->pos];
		if (c == '{' || c == '[') {
			if (depth == JS_MAXDEPTH)
				return js_syntax(s, s->pos,
						 "nesting deeper than %d",
						 JS_MAXDEPTH);
			char close = c == '{' ? '}' : ']';
			s->pos++;
			skip_ws(s);
			if (s->pos < s->len && s->text[s->pos] == close) {
				s->pos++;
			} else {
				stack[depth++] = close;
				if (c == '{' &&
				    (st = scan_key(s, &ka, &kb, &esc)) !=
					    HOFF_OK)
					return st;
				continue;
			}
		} else if (c == '"') {
			if ((st = scan_string(s, &esc)) != HOFF_OK)
				return st;
		} else if (c == '-' || is_digit(c)) {
			if ((st = scan_number(s)) != HOFF_OK)
				return st;
		} else if ((st = scan_literal(s)) != HOFF_OK) {
			return st;
		}
		/* After a value: close levels until one wants another. */
		for (;;) {
			if (depth == 0) {
				*b = s->pos;
				return HOFF_OK;
			}
			char close = stack[depth - 1];
			skip_ws(s);
			if (s->pos < s->len && s->text[s->pos] == close) {
				s->pos++;
				depth--;
				continue;
			}
			if (s->pos < s->len && s->text[s->pos] == ',') {
				s->pos++;
				if (close == '}' &&
				    (st = scan_key(s, &ka, &kb, &esc)) !=
					    HOFF_OK)
					return st;
				break;
			}
			return unexpected(s, close == '}' ? "',' or '}'"
							  : "',' or ']'");
		}
	}
}

char js_peek(jscan *s)
{
	skip_ws(s);
	return s->pos < s->len ? s->text[s->pos] : 0;
}

hoff_status js_begin(jscan *s)
{
	if (s->len >= 3 && memcmp(s->text, "\xef\xbb\xbf", 3) == 0)
		s->pos = 3;
	skip_ws(s);
	if (s->pos >= s->len || s->text[s->pos] != '{') {
		if (s->pos < s->len && strchr("[\"-0123456789tfn", s->text[s->pos]))
			return js_syntax(s, s->pos,
					 "the top level must be an object");
		return unexpected(s, "'{'");
	}
	s->pos++;
	return HOFF_OK;
}

hoff_status js_end(jscan *s)
{
	skip_ws(s);
	if (s->pos < s->len)
		return js_syntax(s, s->pos, "garbage after the top-level object");
	return HOFF_OK;
}

/* Decodes the accepted string [a, b) (quotes included) onto the end of
 * s->buf, NUL-terminated; *off is where it starts. Escapes only shrink, so
 * b - a bytes are room enough. */
static hoff_status put_string(jscan *s, size_t a, size_t b, bool esc,
			      size_t *off)
{
	const unsigned char *t = (const unsigned char *)s->text;
	if (!hoff_grow((void **)&s->buf, &s->buf_cap, s->nbuf + (b - a), 1))
		return hoff_seterr(s->e, HOFF_ENOMEM, "out of memory");
	char *d = s->buf + s->nbuf;
	size_t i = a + 1, end = b - 1;
	if (!esc) {
		memcpy(d, t + i, end - i);
		d += end - i;
	}
	while (esc && i < end) {
		if (t[i] != '\\') {
			*d++ = (char)t[i++];
			continue;
		}
		unsigned char c = t[i + 1];
		if (c != 'u') {
			*d++ = c == 'b'   ? '\b'
			       : c == 'f' ? '\f'
			       : c == 'n' ? '\n'
			       : c == 'r' ? '\r'
			       : c == 't' ? '\t'
					  : (char)c; /* " \ / */
			i += 2;
			continue;
		}
		unsigned long u = (unsigned long)u_escape(t, s->len, i);
		i += 6;
		if (u >= 0xd800 && u <= 0xdbff) { /* the scanner paired it */
			unsigned long l = (unsigned long)u_escape(t, s->len, i);
			u = 0x10000 + ((u - 0xd800) << 10) + (l - 0xdc00);
			i += 6;
		}
		if (u < 0x80) {
			*d++ = (char)u;
		} else if (u < 0x800) {
			*d++ = (char)(0xc0 | (u >> 6));
			*d++ = (char)(0x80 | (u & 0x3f));
		} else if (u < 0x10000) {
			*d++ = (char)(0xe0 | (u >> 12));
			*d++ = (char)(0x80 | ((u >> 6) & 0x3f));
			*d++ = (char)(0x80 | (u & 0x3f));
		} else {
			*d++ = (char)(0xf0 | (u >> 18));
			*d++ = (char)(0x80 | ((u >> 12) & 0x3f));
			*d++ = (char)(0x80 | ((u >> 6) & 0x3f));
			*d++ = (char)(0x80 | (u & 0x3f));
		}
	}
	*d++ = '\0';
	*off = s->nbuf;
	s->nbuf = (size_t)(d - s->buf);
	return HOFF_OK;
}

/* Steps past the separator before the next item of an array or object
 * that `close` (']' or '}') ends; *closed when it ended (close consumed). */
static hoff_status next_item(jscan *s, char close, bool *first, bool *closed)
{
	skip_ws(s);
	*closed = s->pos < s->len && s->text[s->pos] == close;
	if (*closed) {
		s->pos++;
		return HOFF_OK;
	}
	if (!*first) {
		if (s->pos >= s->len || s->text[s->pos] != ',')
			return unexpected(s, close == '}' ? "',' or '}'"
							  : "',' or ']'");
		s->pos++;
		skip_ws(s);
	}
	*first = false;
	return HOFF_OK;
}

/* Steps to the next member key of an object: [*a, *b) is the key string
 * (quotes included), ':' is consumed. */
static hoff_status next_key(jscan *s, bool *first, bool *more, size_t *a,
			    size_t *b, bool *esc)
{
	bool closed;
	hoff_status st = next_item(s, '}', first, &closed);
	if (st != HOFF_OK)
		return st;
	if (closed) {
		*more = false;
		return HOFF_OK;
	}
	st = scan_key(s, a, b, esc);
	if (st == HOFF_OK)
		*more = true;
	return st;
}

hoff_status js_member(jscan *s, bool *first, bool *more)
{
	size_t a = 0, b = 0, off;
	bool esc = false;
	hoff_status st = next_key(s, first, more, &a, &b, &esc);
	if (st != HOFF_OK || !*more)
		return st;
	s->nbuf = 0;
	if ((st = put_string(s, a, b, esc, &off)) != HOFF_OK)
		return st;
	size_t n = s->nbuf - off; /* with the NUL */
	if (!hoff_grow((void **)&s->key, &s->key_cap, n, 1))
		return hoff_seterr(s->e, HOFF_ENOMEM, "out of memory");
	memcpy(s->key, s->buf + off, n);
	return HOFF_OK;
}

hoff_status js_element(jscan *s, bool *first, bool *more)
{
	bool closed;
	hoff_status st = next_item(s, ']', first, &closed);
	if (st == HOFF_OK)
		*more = !closed;
	return st;
}

hoff_status js_key_once(jscan *s)
{
	if (hoff_strmap_get(&s->seen, s->key) != HOFF_NONE)
		return hoff_seterr(s->e, HOFF_EINPUT,
				   "%s: duplicate key \"%.100s\" in the top-level "
				   "object",
				   s->file, s->key);
	const char *k = hoff_strpool_add(&s->pool, s->key, strlen(s->key));
	if (!k || hoff_strmap_put(&s->seen, k, 0, NULL) != HOFF_OK)
		return hoff_seterr(s->e, HOFF_ENOMEM, "out of memory");
	return HOFF_OK;
}

hoff_status js_top_member(jscan *s, bool *first, bool *more,
			  const char *const *keys, int n, int *k)
{
	hoff_status st = js_member(s, first, more);
	if (st != HOFF_OK || !*more || (st = js_key_once(s)) != HOFF_OK)
		return st;
	for (*k = 0; *k < n && strcmp(s->key, keys[*k]) != 0; (*k)++)
		;
	return HOFF_OK;
}

hoff_status js_required(hoff_err *e, const js_where *w, const bool *have,
			const char *const *keys, const int *req, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!have[req[i]])
			return js_fail(e, w, HOFF_EINPUT, "%s is required",
				       keys[req[i]]);
	return HOFF_OK;
}

hoff_status js_top_object(jscan *s, const char *const *keys, int nkeys,
			  js_top_fn fn, void *ctx, const bool *have,
			  const int *req, size_t n)
{
	hoff_status st;
	bool first = true, more;
	if ((st = js_begin(s)) != HOFF_OK)
		return st;
	for (;;) {
		int k;
		if ((st = js_top_member(s, &first, &more, keys, nkeys, &k)) !=
		    HOFF_OK)
			return st;
		if (!more)
			break;
		if ((st = fn(ctx, k)) != HOFF_OK)
			return st;
	}
	if ((st = js_end(s)) != HOFF_OK)
		return st;
	js_where top = {s->file, NULL, -1, NULL};
	return js_required(s->e, &top, have, keys, req, n);
}

/* ---- one-pass object reader ---- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorts n strings and returns one that occurs twice, or NULL. */
static const char *dup_of(const char **p, size_t n)
{
	if (n < 2)
		return NULL;
	if (n == 2)
		return strcmp(p[0], p[1]) == 0 ? p[0] : NULL;
	qsort(p, n, sizeof *p, cmp_str);
	for (size_t i = 1; i < n; i++)
		if (strcmp(p[i - 1], p[i]) == 0)
			return p[i];
	return NULL;
}

/* The accepted number [a, b) as a double, correctly rounded: Clinger's
 * fast path when the digits fit 2^53 and the power of ten is exact (one
 * IEEE multiply or divide of exact operands rounds once), else strtod
 * with the locale's decimal point, as cJSON does. */
static double to_double(const jscan *s, size_t a, size_t b)
{
	static const double p10[] = {
		1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
		1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
		1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
	};
	const char *t = s->text;
	size_t i = a;
	bool neg = t[i] == '-';
	uint64_t m = 0;
	int digits = 0, exp10 = 0;
	i += neg;
	for (; i < b && is_digit(t[i]); i++, digits++)
		m = m * 10 + (uint64_t)(t[i] - '0');
	if (i < b && t[i] == '.')
		for (i++; i < b && is_digit(t[i]); i++, digits++, exp10--)
			m = m * 10 + (uint64_t)(t[i] - '0');
	if (i < b) { /* an exponent */
		bool eneg = t[++i] == '-';
		int e = 0;
		i += t[i] == '-' || t[i] == '+';
		for (; i < b && e < 10000; i++)
			e = e * 10 + (t[i] - '0');
		exp10 += eneg ? -e : e;
	}
	/* digits <= 19 keeps m exact in 64 bits; 2^53 keeps it exact as a
	 * double (leading zeros count as digits, harmlessly). */
	if (FLT_EVAL_METHOD == 0 && digits <= 19 && m <= ((uint64_t)1 << 53) &&
	    exp10 >= -22 && exp10 <= 22) {
		double x = (double)m;
		x = exp10 < 0 ? x / p10[-exp10] : x * p10[exp10];
		return neg ? -x : x;
	}
	char tmp[64];
	memcpy(tmp, t + a, b - a); /* the scanner allows at most 63 */
	tmp[b - a] = '\0';
	if (s->dec_point != '.') {
		char *dot = strchr(tmp, '.');
		if (dot)
			*dot = s->dec_point;
	}
	return strtod(tmp, NULL);
}

/* The accepted number [a, b) as an int64, exactly, when it is an integer
 * that fits, in any spelling (25, 2.5e1, 250e-1): 1, the value in *out;
 * else -1. Past 19 significant digits it gives up (-1): the double
 * path then judges the number. */
static int8_t to_int(const jscan *s, size_t a, size_t b, int64_t *out)
{
	const char *t = s->text;
	size_t i = a;
	bool neg = t[i] == '-', point = false;
	uint64_t m = 0;
	int digits = 0;
	int64_t exp10 = 0, zeros = 0; /* zeros after m's digits, not in m */
	for (i += neg; i < b && (is_digit(t[i]) || (t[i] == '.' && !point));
	     i++) {
		if (t[i] == '.') {
			point = true;
			continue;
		}
		exp10 -= point;
		if (t[i] == '0') { /* leading: nothing; else held back */
			zeros += m != 0;
			continue;
		}
		for (; zeros >= 0; zeros--, digits++)
			if (digits >= 19)
				return -1;
			else
				m *= 10;
		zeros = 0;
		m += (uint64_t)(t[i] - '0');
	}
	exp10 += zeros;
	if (i < b) { /* an exponent */
		bool eneg = t[++i] == '-';
		int64_t e = 0;
		i += t[i] == '-' || t[i] == '+';
		for (; i < b && e < 100000; i++)
			e = e * 10 + (t[i] - '0');
		exp10 += eneg ? -e : e;
	}
	while (m && exp10 < 0 && m % 10 == 0) {
		m /= 10;
		exp10++;
	}
	if (m && exp10 < 0)
		return -1; /* a fraction */
	for (; m && exp10 > 0; exp10--) {
		if (m > (uint64_t)INT64_MAX / 10)
			return -1;
		m *= 10;
	}
	if (m > (uint64_t)INT64_MAX)
		return -1;
	*out = neg ? -(int64_t)m : (int64_t)m;
	return 1;
}

/* Reads the value at s->pos into v; a list field's array gets its items. */
static hoff_status read_val(jscan *s, bool list, js_val *v)
{
	hoff_status st;
	size_t a, b;
	bool esc;
	skip_ws(s);
	char c = s->pos < s->len ? s->text[s->pos] : 0;
	if (c == '"') {
		a = s->pos;
		if ((st = scan_string(s, &esc)) != HOFF_OK)
			return st;
		v->type = JS_STR;
		return put_string(s, a, s->pos, esc, &v->off);
	}
	if (c == '-' || is_digit(c)) {
		a = s->pos;
		if ((st = scan_number(s)) != HOFF_OK)
			return st;
		v->type = JS_NUM;
		v->num = to_double(s, a, s->pos);
		v->exact = to_int(s, a, s->pos, &v->inum);
		return HOFF_OK;
	}
	if (c == '[' && list) {
		bool first = true, more;
		v->type = JS_ARR;
		v->at = s->nitems;
		v->bad_item = -1;
		s->pos++;
		for (int64_t i = 0;; i++) {
			if ((st = js_element(s, &first, &more)) != HOFF_OK)
				return st;
			if (!more)
				return HOFF_OK;
			skip_ws(s);
			if (s->pos >= s->len || s->text[s->pos] != '"') {
				if (v->bad_item < 0)
					v->bad_item = i;
				if ((st = js_value(s, &a, &b)) != HOFF_OK)
					return st;
				continue;
			}
			a = s->pos;
			if ((st = scan_string(s, &esc)) != HOFF_OK)
				return st;
			if (!hoff_grow((void **)&s->items, &s->items_cap,
				       s->nitems + 1, sizeof *s->items))
				return hoff_seterr(s->e, HOFF_ENOMEM,
						   "out of memory");
			if ((st = put_string(s, a, s->pos, esc,
					     &s->items[s->nitems])) != HOFF_OK)
				return st;
			s->nitems++;
			v->nitem++;
		}
	}
	if ((st = js_value(s, &a, &b)) != HOFF_OK)
		return st;
	switch (s->text[a]) {
	case 't':
	case 'f':
		v->type = JS_BOOL;
		v->b = s->text[a] == 't';
		break;
	case 'n':
		v->type = JS_NULL;
		break;
	default:
		v->type = s->text[a] == '[' ? JS_ARR : JS_OBJ;
		v->bad_item = -1;
		break;
	}
	return HOFF_OK;
}

hoff_status js_object(jscan *s, const js_where *w, const char *const *names,
		      const bool *list, int n, js_val *slot)
{
	uint32_t seen = 0;
	int next = 0; /* where the next key's name is looked for first */
	hoff_status st;
	size_t ka = 0, kb = 0, a, b;
	bool esc = false, first = true, more;
	HOFF_REQUIRE(n <= JS_MAXFIELDS);
	memset(slot, 0, (size_t)n * sizeof *slot);
	if (s->names != names) { /* a new table of names: measure it once */
		for (int i = 0; i < n; i++)
			s->nlen[i] = strlen(names[i]);
		s->names = names;
	}
	s->nbuf = s->nitems = s->nukeys = 0;
	if (js_peek(s) != '{') {
		if ((st = js_value(s, &a, &b)) != HOFF_OK)
			return st;
		return js_fail(s->e, w, HOFF_EINPUT, "not an object");
	}
	s->pos++;
	for (;;) {
		if ((st = next_key(s, &first, &more, &ka, &kb, &esc)) != HOFF_OK)
			return st;
		if (!more)
			break;
		int f = -1;
		size_t koff = 0;
		if (esc) {
			if ((st = put_string(s, ka, kb, esc, &koff)) != HOFF_OK)
				return st;
			for (int i = 0; i < n && f < 0; i++)
				if (strcmp(s->buf + koff, names[i]) == 0)
					f = i;
		} else {
			/* from the name after the last one met: fields
			 * mostly come in the table's order */
			const char *k = s->text + ka + 1;
			size_t kl = kb - ka - 2;
			for (int j = 0, i = next; j < n && f < 0;
			     j++, i = i + 1 < n ? i + 1 : 0)
				if (kl == s->nlen[i] && k[0] == names[i][0] &&
				    memcmp(k, names[i], kl) == 0)
					f = i;
		}
		if (f >= 0) {
			if (seen & (UINT32_C(1) << f))
				return js_fail(s->e, w, HOFF_EINPUT,
					       "duplicate key \"%s\"", names[f]);
			seen |= UINT32_C(1) << f;
			next = f + 1 < n ? f + 1 : 0;
			if ((st = read_val(s, list[f], &slot[f])) != HOFF_OK)
				return st;
			continue;
		}
		/* An unknown member: remember its key, check its value. */
		if (!esc && (st = put_string(s, ka, kb, esc, &koff)) != HOFF_OK)
			return st;
		if (!hoff_grow((void **)&s->ukeys, &s->ukeys_cap, s->nukeys + 1,
			       sizeof *s->ukeys))
			return hoff_seterr(s->e, HOFF_ENOMEM, "out of memory");
		s->ukeys[s->nukeys++] = koff;
		if ((st = js_value(s, &a, &b)) != HOFF_OK)
			return st;
		if (s->text[a] == '{' || s->text[a] == '[') {
			cJSON *j;
			if ((st = js_parse(s, a, b, w, &j)) != HOFF_OK)
				return st;
			cJSON_Delete(j);
		}
	}
	/* Offsets become pointers now that the buffers stop moving. */
	size_t np = s->nukeys > s->nitems ? s->nukeys : s->nitems;
	if (!hoff_grow((void **)&s->ptrs, &s->ptrs_cap, np, sizeof *s->ptrs))
		return hoff_seterr(s->e, HOFF_ENOMEM, "out of memory");
	for (size_t i = 0; i < s->nukeys; i++)
		s->ptrs[i] = s->buf + s->ukeys[i];
	const char *dup = dup_of(s->ptrs, s->nukeys);
	if (dup)
		return js_fail(s->e, w, HOFF_EINPUT, "duplicate key \"%.100s\"",
			       dup);
	for (size_t i = 0; i < s->nitems; i++)
		s->ptrs[i] = s->buf + s->items[i];
	for (int i = 0; i < n; i++) {
		if (slot[i].type == JS_STR)
			slot[i].str = s->buf + slot[i].off;
		if (slot[i].type == JS_ARR && list[i])
			slot[i].item = s->ptrs + slot[i].at;
	}
	return HOFF_OK;
}

/* ---- cJSON side ---- */

/* First duplicate key in o or below (NULL when none), with in path
 * (cap bytes, holding len) where the object that holds it sits below o:
 * ".device", ".tiers[0]"; false on OOM. */
static bool find_dup(jscan *s, const cJSON *o, const char **dup, char *path,
		     size_t len, size_t cap)
{
	if (cJSON_IsObject(o)) {
		size_t n = 0;
		for (const cJSON *c = o->child; c; c = c->next)
			n++;
		if (!hoff_grow((void **)&s->ptrs, &s->ptrs_cap, n,
			       sizeof *s->ptrs))
			return false;
		size_t i = 0;
		for (const cJSON *c = o->child; c; c = c->next)
			s->ptrs[i++] = c->string;
		if ((*dup = dup_of(s->ptrs, n))) {
			path[len < cap ? len : cap - 1] = '\0';
			return true;
		}
	}
	if (cJSON_IsObject(o) || cJSON_IsArray(o)) {
		long long i = 0;
		for (const cJSON *c = o->child; c; c = c->next, i++) {
			int w = len >= cap - 1 ? 0
				: cJSON_IsObject(o)
					? snprintf(path + len, cap - len,
						   ".%.40s", c->string)
					: snprintf(path + len, cap - len,
						   "[%lld]", i);
			size_t l = len + (w > 0 ? (size_t)w : 0);
			if (!find_dup(s, c, dup, path, l < cap ? l : cap - 1,
				      cap))
				return false;
			if (*dup)
				return true;
		}
	}
	return true;
}

hoff_status js_parse(jscan *s, size_t a, size_t b, const js_where *w,
		     cJSON **out)
{
	const char *end = NULL;
	*out = NULL;
	cJSON *j = cJSON_ParseWithLengthOpts(s->text + a, b - a, &end, 0);
	if (!j || end != s->text + b) {
		/* The scanner accepted [a, b): only OOM gets here in practice. */
		size_t at = end && end >= s->text + a && end <= s->text + b
				    ? (size_t)(end - s->text)
				    : a;
		cJSON_Delete(j);
		return js_syntax(s, at, "cJSON cannot parse this value");
	}
	const char *dup = NULL;
	char path[128] = "";
	if (!find_dup(s, j, &dup, path, 0, sizeof path)) {
		cJSON_Delete(j);
		return hoff_seterr(s->e, HOFF_ENOMEM, "out of memory");
	}
	if (dup) {
		/* Name the object holding it: machine.device, not machine. */
		char sect[160];
		js_where at = *w;
		if (path[0]) {
			snprintf(sect, sizeof sect, "%s%s",
				 w->sect ? w->sect : "",
				 w->sect ? path : path + 1);
			at.sect = sect;
		}
		hoff_status st = js_fail(s->e, &at, HOFF_EINPUT,
					 "duplicate key \"%.100s\"", dup);
		cJSON_Delete(j);
		return st;
	}
	*out = j;
	return HOFF_OK;
}

char *js_compact(const jscan *s, size_t a, size_t b)
{
	char *o = malloc(b - a + 1);
	if (!o)
		return NULL;
	size_t n = 0;
	bool str = false, esc = false;
	for (size_t i = a; i < b; i++) {
		char c = s->text[i];
		if (str) {
			if (esc)
				esc = false;
			else if (c == '\\')
				esc = true;
			else if (c == '"')
				str = false;
		} else if (c == '"') {
			str = true;
		} else if (is_ws(c)) {
			continue;
		}
		o[n++] = c;
	}
	o[n] = '\0';
	return o;
}

js_val js_from(const cJSON *c)
{
	js_val v;
	memset(&v, 0, sizeof v);
	v.bad_item = -1;
	if (!c)
		v.type = JS_ABSENT;
	else if (cJSON_IsNull(c))
		v.type = JS_NULL;
	else if (cJSON_IsBool(c)) {
		v.type = JS_BOOL;
		v.b = cJSON_IsTrue(c);
	} else if (cJSON_IsNumber(c)) {
		v.type = JS_NUM;
		v.num = c->valuedouble;
	} else if (cJSON_IsString(c)) {
		v.type = JS_STR;
		v.str = c->valuestring;
	} else
		v.type = cJSON_IsArray(c) ? JS_ARR : JS_OBJ;
	return v;
}

void js_fields(const cJSON *o, const char *const *names, int n, js_val *slot)
{
	const cJSON *f[JS_MAXFIELDS] = {0};
	HOFF_REQUIRE(n <= JS_MAXFIELDS);
	for (const cJSON *c = o->child; c; c = c->next)
		for (int i = 0; i < n; i++)
			if (strcmp(c->string, names[i]) == 0) {
				f[i] = c;
				break;
			}
	for (int i = 0; i < n; i++)
		slot[i] = js_from(f[i]);
}

/* ---- getters ---- */

/* Common head of the getters: *absent when there is no value to read. */
/* A getter's start: *absent when v is missing or null (an error when req);
 * *present (when not NULL) false until the getter has its value. */
static hoff_status absent_or_null(hoff_err *e, const js_where *w,
				  const js_val *v, const char *name, bool req,
				  bool *present, bool *absent)
{
	if (present)
		*present = false;
	*absent = v->type == JS_ABSENT || v->type == JS_NULL;
	if (*absent && req)
		return js_fail(e, w, HOFF_EINPUT,
			       v->type == JS_NULL ? "%s must not be null"
						  : "%s is required",
			       name);
	return HOFF_OK;
}

hoff_status js_str(hoff_err *e, const js_where *w, const js_val *v,
		   const char *name, bool req, const char **out)
{
	bool absent;
	hoff_status st = absent_or_null(e, w, v, name, req, NULL, &absent);
	*out = NULL;
	if (st != HOFF_OK || absent)
		return st;
	if (v->type != JS_STR)
		return js_fail(e, w, HOFF_EINPUT, "%s must be a string", name);
	*out = v->str;
	return HOFF_OK;
}

/* A getter's end: *present (when not NULL) true. */
static hoff_status found(bool *present)
{
	if (present)
		*present = true;
	return HOFF_OK;
}

#define TWO53 9007199254740992.0

hoff_status js_int(hoff_err *e, const js_where *w, const js_val *v,
		   const char *name, bool req, int64_t min, bool *present,
		   int64_t *out)
{
	bool absent;
	hoff_status st = absent_or_null(e, w, v, name, req, present, &absent);
	if (st != HOFF_OK || absent)
		return st;
	double x = v->num;
	if (v->type != JS_NUM || (isfinite(x) && x != floor(x)))
		return js_fail(e, w, HOFF_EINPUT, "%s must be an integer", name);
	/* read from the text: exact up to 2^63 - 1; by cJSON: a double,
	 * exact up to 2^53 */
	if (v->exact < 0)
		return js_fail(e, w, HOFF_EINPUT,
			       "%s is too large (beyond 2^63 - 1)", name);
	if (v->exact == 0 && !(fabs(x) <= TWO53))
		return js_fail(e, w, HOFF_EINPUT,
			       "%s is too large (beyond 2^53)", name);
	int64_t i = v->exact > 0 ? v->inum : (int64_t)x;
	if (i < min) {
		if (min == 1)
			return js_fail(e, w, HOFF_EINPUT, "%s must be > 0", name);
		return js_fail(e, w, HOFF_EINPUT, "%s must be >= %lld", name,
			       (long long)min);
	}
	*out = i;
	return found(present);
}

hoff_status js_num(hoff_err *e, const js_where *w, const js_val *v,
		   const char *name, bool req, bool positive, bool *present,
		   double *out)
{
	bool absent;
	hoff_status st = absent_or_null(e, w, v, name, req, present, &absent);
	if (st != HOFF_OK || absent)
		return st;
	if (v->type != JS_NUM)
		return js_fail(e, w, HOFF_EINPUT, "%s must be a number", name);
	double x = v->num;
	if (!isfinite(x))
		return js_fail(e, w, HOFF_EINPUT, "%s must be finite", name);
	if (positive && !(x > 0))
		return js_fail(e, w, HOFF_EINPUT, "%s must be > 0", name);
	if (x < 0)
		return js_fail(e, w, HOFF_EINPUT, "%s must be >= 0", name);
	*out = x;
	return found(present);
}

hoff_status js_bool(hoff_err *e, const js_where *w, const js_val *v,
		    const char *name, bool *present, bool *out)
{
	bool absent;
	hoff_status st = absent_or_null(e, w, v, name, false, present, &absent);
	if (st != HOFF_OK || absent)
		return st;
	if (v->type != JS_BOOL)
		return js_fail(e, w, HOFF_EINPUT, "%s must be true or false",
			       name);
	*out = v->b;
	return found(present);
}

hoff_status js_format(hoff_err *e, const js_where *w, const js_val *v,
		      const char *want)
{
	const char *s;
	hoff_status st = js_str(e, w, v, "format", true, &s);
	if (st == HOFF_OK && strcmp(s, want) != 0)
		st = js_fail(e, w, HOFF_EINPUT,
			     "format \"%.60s\" is unknown (expected \"%s\")",
			     s, want);
	return st;
}

hoff_status js_version(hoff_err *e, const js_where *w, const js_val *v,
		       int32_t *out)
{
	int64_t ver = 0;
	hoff_status st = js_int(e, w, v, "version", true, INT64_MIN, NULL,
				&ver);
	if (st == HOFF_OK && ver != 1 && ver != 2)
		st = js_fail(e, w, HOFF_EINPUT,
			     "version %lld is unknown (expected 1 or 2)",
			     (long long)ver);
	if (st == HOFF_OK)
		*out = (int32_t)ver;
	return st;
}

hoff_status js_top_array(jscan *s, const char *name)
{
	js_where top = {s->file, NULL, -1, NULL};
	size_t a, b;
	hoff_status st;
	char c = js_peek(s);
	if (c == '[') {
		s->pos++;
		return HOFF_OK;
	}
	if ((st = js_value(s, &a, &b)) != HOFF_OK)
		return st;
	return js_fail(s->e, &top, HOFF_EINPUT,
		       c == 'n' ? "%s must not be null" : "%s must be an array",
		       name);
}

hoff_status js_top_value(jscan *s, int k, const char *want, int32_t *version,
			 js_value_fn fn, void *ctx)
{
	js_top t = {.k = k, .w = {s->file, NULL, -1, NULL}};
	js_where at = {s->file, s->key, -1, NULL}; /* the key just met */
	cJSON *j = NULL;
	hoff_status st = js_value(s, &t.a, &t.b);
	if (st == HOFF_OK)
		st = js_parse(s, t.a, t.b, &at, &j);
	if (st != HOFF_OK)
		return st;
	t.j = j;
	t.v = js_from(j);
	if (k == JS_K_FORMAT)
		st = js_format(s->e, &t.w, &t.v, want);
	else if (k == JS_K_VERSION)
		st = js_version(s->e, &t.w, &t.v, version);
	else
		st = fn(ctx, &t);
	cJSON_Delete(j);
	return st;
}

/* ---- numbers out ---- */

/* snprintf's decimal point follows the locale; JSON's is '.'. */
static void put_dot(FILE *f, char *buf)
{
	const char *dp = localeconv()->decimal_point;
	if (dp && dp[0] && dp[0] != '.') {
		char *p = strchr(buf, dp[0]);
		if (p)
			*p = '.';
	}
	fputs(buf, f);
}

void js_put_int(FILE *f, int64_t v)
{
	char buf[24], *p = buf + sizeof buf;
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	do
		*--p = (char)('0' + u % 10);
	while ((u /= 10) != 0);
	if (v < 0)
		*--p = '-';
	fwrite(p, 1, (size_t)(buf + sizeof buf - p), f);
}

void js_put_num(FILE *f, double x)
{
	char buf[40];
	if (!isfinite(x)) {
		fputs("null", f);
		return;
	}
	if (x == floor(x) && fabs(x) < 1e15) { /* exact as an integer */
		if (x == 0 && signbit(x))
			fputs("-0", f);
		else
			js_put_int(f, (int64_t)x);
		return;
	}
	snprintf(buf, sizeof buf, "%.15g", x);
	if (strtod(buf, NULL) != x) {
		snprintf(buf, sizeof buf, "%.16g", x);
		if (strtod(buf, NULL) != x)
			snprintf(buf, sizeof buf, "%.17g", x);
	}
	put_dot(f, buf);
}

void js_put_num17(FILE *f, double x)
{
	char buf[40];
	if (!isfinite(x)) {
		fputs("null", f);
		return;
	}
	snprintf(buf, sizeof buf, "%.17g", x);
	put_dot(f, buf);
}
