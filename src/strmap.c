/* strmap.c: string pool and open-addressing string map (a word-at-a-time
 * multiply hash with murmur3's finish, linear probing over slots that hold
 * key, hash and value together). Lookups never allocate; the map doubles
 * at half load. */
#include "strmap.h"

#include <stdlib.h>
#include <string.h>

const char *hoff_strpool_add(hoff_strpool *p, const char *s, size_t len)
{
	size_t need = len + 1;
	if (need > p->avail) {
		/* Chunks grow from 4 KiB to 4 MiB: small graphs stay small. */
		size_t size = (size_t)4096 << (p->nchunks < 10 ? p->nchunks : 10);
		if (size < need)
			size = need;
		if (!hoff_grow((void **)&p->chunk, &p->chunk_cap,
			       p->nchunks + 1, sizeof(char *)))
			return NULL;
		char *c = hoff_alloc(size, 1);
		if (!c)
			return NULL;
		p->chunk[p->nchunks++] = c;
		p->used = 0;
		p->avail = size;
	}
	char *dst = p->chunk[p->nchunks - 1] + p->used;
	memcpy(dst, s, len);
	dst[len] = '\0';
	p->used += need;
	p->avail -= need;
	return dst;
}

hoff_status hoff_strpool_adopt(hoff_strpool *dst, hoff_strpool *src)
{
	if (!src->nchunks)
		return HOFF_OK;
	if (!hoff_grow((void **)&dst->chunk, &dst->chunk_cap,
		       dst->nchunks + src->nchunks, sizeof(char *)))
		return HOFF_ENOMEM;
	size_t bytes = src->nchunks * sizeof(char *);
	if (dst->nchunks == 0) {
		memcpy(dst->chunk, src->chunk, bytes);
		dst->used = src->used;
		dst->avail = src->avail;
	} else { /* before dst's last block, which strings still fill */
		char *last = dst->chunk[dst->nchunks - 1];
		memcpy(dst->chunk + dst->nchunks - 1, src->chunk, bytes);
		dst->chunk[dst->nchunks - 1 + src->nchunks] = last;
	}
	dst->nchunks += src->nchunks;
	free(src->chunk);
	memset(src, 0, sizeof *src);
	return HOFF_OK;
}

void hoff_strpool_free(hoff_strpool *p)
{
	for (size_t i = 0; i < p->nchunks; i++)
		free(p->chunk[i]);
	free(p->chunk);
	memset(p, 0, sizeof *p);
}

/* Eight bytes at a time (the tail zero-padded, the length folded in),
 * each word multiplied in, then murmur3's 64-bit finish: ids are short,
 * and a byte-at-a-time hash (FNV-1a, before) spent four cycles a byte on
 * a chain of multiplies, a tenth of reading a million-op graph. */
static uint32_t hash_str(const char *s)
{
	size_t n = strlen(s);
	uint64_t h = 0x9e3779b97f4a7c15u ^ (uint64_t)n;
	for (; n >= 8; n -= 8, s += 8) {
		uint64_t w;
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdu;
		h ^= h >> 32;
	}
	if (n) {
		uint64_t w = 0;
		memcpy(&w, s, n);
		h = (h ^ w) * 0xff51afd7ed558ccdu;
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdu;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53u;
	h ^= h >> 33;
	return (uint32_t)h;
}

uint32_t hoff_strmap_hash(const char *key)
{
	return hash_str(key);
}

int32_t hoff_strmap_get(const hoff_strmap *m, const char *key)
{
	return m->cap == 0 ? HOFF_NONE
			   : hoff_strmap_get_hashed(m, key, hash_str(key));
}

int32_t hoff_strmap_get_hashed(const hoff_strmap *m, const char *key,
			       uint32_t h)
{
	if (m->cap == 0)
		return HOFF_NONE;
	for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		const hoff_strslot *sl = &m->slot[i];
		if (!sl->key)
			return HOFF_NONE;
		if (sl->hash == h && strcmp(sl->key, key) == 0)
			return sl->val;
	}
}

void hoff_strmap_prefetch(const hoff_strmap *m, const char *key)
{
#if defined(__GNUC__)
	if (m->cap)
		__builtin_prefetch(&m->slot[hash_str(key) & (m->cap - 1)]);
#else
	(void)m;
	(void)key;
#endif
}

static void insert(hoff_strmap *m, const char *key, uint32_t h, int32_t val)
{
	size_t i = h & (m->cap - 1);
	while (m->slot[i].key)
		i = (i + 1) & (m->cap - 1);
	m->slot[i] = (hoff_strslot){key, h, val};
	m->n++;
}

static hoff_status rehash(hoff_strmap *m, size_t cap)
{
	hoff_strmap n = {0};
	n.cap = cap;
	n.slot = hoff_zalloc(cap, sizeof *n.slot);
	if (!n.slot)
		return HOFF_ENOMEM;
	for (size_t i = 0; i < m->cap; i++)
		if (m->slot[i].key)
			insert(&n, m->slot[i].key, m->slot[i].hash,
			       m->slot[i].val);
	hoff_strmap_free(m);
	*m = n;
	return HOFF_OK;
}

hoff_status hoff_strmap_put(hoff_strmap *m, const char *key, int32_t val,
			    int32_t *old)
{
	if ((m->n + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64;
		if (cap < m->cap || rehash(m, cap) != HOFF_OK)
			return HOFF_ENOMEM;
	}
	/* One probe sequence finds a duplicate or the free slot. */
	uint32_t h = hash_str(key);
	size_t i = h & (m->cap - 1);
	for (; m->slot[i].key; i = (i + 1) & (m->cap - 1))
		if (m->slot[i].hash == h && strcmp(m->slot[i].key, key) == 0) {
			if (old)
				*old = m->slot[i].val;
			return HOFF_EINPUT;
		}
	m->slot[i] = (hoff_strslot){key, h, val};
	m->n++;
	return HOFF_OK;
}

int hoff_strmap_put_in(hoff_strmap *m, const char *key, uint32_t h, int32_t val,
		       size_t lo, size_t hi, int32_t *old)
{
	size_t i = h & (m->cap - 1);
	HOFF_REQUIRE(i >= lo && i < hi && hi <= m->cap);
	for (; m->slot[i].key; i++) {
		if (m->slot[i].hash == h && strcmp(m->slot[i].key, key) == 0) {
			*old = m->slot[i].val;
			return 0;
		}
		if (i + 1 == hi)
			return -1; /* the probe would leave the range */
	}
	m->slot[i] = (hoff_strslot){key, h, val};
	return 1;
}

hoff_status hoff_strmap_reserve(hoff_strmap *m, size_t n)
{
	if (n <= m->cap / 2)
		return HOFF_OK;
	size_t cap = m->cap ? m->cap : 64;
	while (cap / 2 < n) {
		if (cap > SIZE_MAX / 2 / sizeof *m->slot)
			return HOFF_ENOMEM;
		cap *= 2;
	}
	return rehash(m, cap);
}

void hoff_strmap_free(hoff_strmap *m)
{
	free(m->slot);
	memset(m, 0, sizeof *m);
}
