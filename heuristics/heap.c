/* heap.c: see heap.h. */
#include "heap.h"

#include <stdlib.h>
#include <string.h>

#include "hoff.h"

static inline bool hent_above(hoff_hent a, hoff_hent b)
{
	return a.key > b.key || (a.key == b.key && a.id < b.id);
}

bool hoff_heap_push(hoff_heap *h, int32_t id, double key, int32_t aux)
{
	if (!hoff_grow((void **)&h->e, &h->cap, h->n + 1, sizeof *h->e))
		return false;
	hoff_hent x = {.key = key, .id = id, .aux = aux};
	size_t i = h->n++;
	while (i > 0 && hent_above(x, h->e[(i - 1) / 4])) {
		h->e[i] = h->e[(i - 1) / 4];
		i = (i - 1) / 4;
	}
	h->e[i] = x;
	return true;
}

hoff_hent hoff_heap_pop(hoff_heap *h)
{
	hoff_hent top = h->e[0];
	size_t n = --h->n;
	if (n) {
		hoff_hent x = h->e[n];
		size_t i = 0;
		for (;;) {
			size_t c = 4 * i + 1, end = c + 4 < n ? c + 4 : n;
			if (c >= n)
				break;
			for (size_t d = c + 1; d < end; d++)
				if (hent_above(h->e[d], h->e[c]))
					c = d;
			if (!hent_above(h->e[c], x))
				break;
			h->e[i] = h->e[c];
			i = c;
		}
		h->e[i] = x;
	}
	return top;
}

void hoff_heap_free(hoff_heap *h)
{
	free(h->e);
	memset(h, 0, sizeof *h);
}
