/* strmap.c: string pool and open-addressing string map (FNV-1a, linear
 * probing). Lookups never allocate; the map doubles at half load. */
#include "strmap.h"

#include <stdlib.h>
#include <string.h>

#define CHUNK_BYTES ((size_t)1 << 20)

const char *hoff_strpool_add(hoff_strpool *p, const char *s, size_t len)
{
	size_t need = len + 1;
	if (need > p->avail) {
		size_t size = need > CHUNK_BYTES ? need : CHUNK_BYTES;
		if (!hoff_grow((void **)&p->chunk, &p->chunk_cap,
			       p->nchunks + 1, sizeof(char *)))
			return NULL;
		char *c = malloc(size);
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

void hoff_strpool_free(hoff_strpool *p)
{
	for (size_t i = 0; i < p->nchunks; i++)
		free(p->chunk[i]);
	free(p->chunk);
	memset(p, 0, sizeof *p);
}

static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

int32_t hoff_strmap_get(const hoff_strmap *m, const char *key)
{
	if (m->cap == 0)
		return HOFF_NONE;
	uint32_t h = fnv1a(key);
	for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->key[i])
			return HOFF_NONE;
		if (m->hash[i] == h && strcmp(m->key[i], key) == 0)
			return m->val[i];
	}
}

static void insert(hoff_strmap *m, const char *key, uint32_t h, int32_t val)
{
	size_t i = h & (m->cap - 1);
	while (m->key[i])
		i = (i + 1) & (m->cap - 1);
	m->key[i] = key;
	m->hash[i] = h;
	m->val[i] = val;
	m->n++;
}

static hoff_status rehash(hoff_strmap *m, size_t cap)
{
	hoff_strmap n = {0};
	n.cap = cap;
	n.key = hoff_zalloc(cap, sizeof *n.key);
	n.val = hoff_alloc(cap, sizeof *n.val);
	n.hash = hoff_alloc(cap, sizeof *n.hash);
	if (!n.key || !n.val || !n.hash) {
		hoff_strmap_free(&n);
		return HOFF_ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++)
		if (m->key[i])
			insert(&n, m->key[i], m->hash[i], m->val[i]);
	hoff_strmap_free(m);
	*m = n;
	return HOFF_OK;
}

hoff_status hoff_strmap_put(hoff_strmap *m, const char *key, int32_t val,
			    int32_t *old)
{
	int32_t have = hoff_strmap_get(m, key);
	if (have != HOFF_NONE) {
		if (old)
			*old = have;
		return HOFF_EINPUT;
	}
	if ((m->n + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64;
		if (cap < m->cap || rehash(m, cap) != HOFF_OK)
			return HOFF_ENOMEM;
	}
	insert(m, key, fnv1a(key), val);
	return HOFF_OK;
}

void hoff_strmap_free(hoff_strmap *m)
{
	free(m->key);
	free(m->val);
	free(m->hash);
	memset(m, 0, sizeof *m);
}
