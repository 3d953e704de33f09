/* fuzz_driver.c: a plain-C stand-in for libFuzzer, so the fuzz entry points
 * run in the normal test suite under gcc with ASan and UBSan. It replays
 * every file of a corpus directory, then feeds N deterministic mutants of
 * them (bit flips, byte and JSON-token inserts, deletions, duplicated and
 * spliced ranges, truncations) to LLVMFuzzerTestOneInput. Each input is
 * an exact-size heap copy, so a read past its end is an ASan error.
 *
 *   fuzz_driver CORPUS_DIR [ITERATIONS [SEED [MAX_SECONDS]]]
 *
 * Same arguments, same inputs: a failure reproduces with its iteration
 * number, which is printed before each run when FUZZ_VERBOSE is set. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct buf {
	uint8_t *p;
	size_t n, cap;
} buf;

static uint64_t rng_state;

static uint64_t rnd(void) /* xorshift64* */
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

static size_t below(size_t n)
{
	return n ? (size_t)(rnd() % n) : 0;
}

/* Tokens that steer mutants toward the readers' interesting paths. */
static const char *const dict[] = {
	"{", "}", "[", "]", ",", ":", "\"", "\\", " ", "\n", "null", "true",
	"false", "0", "-1", "1.5", "1e3", "-0", "1e999", "9007199254740993",
	"4611686018427387904", "1e-400", "\\u0000", "\\ud800", "\\udc00",
	"\\u00e9", "\\ud83d\\ude00", "\xc3\xa9", "\xff", "\xed\xa0\x80",
	"\xef\xbb\xbf", "\"device\"", "\"host\"", "\"nvme\"", "\"id\":",
	"\"bytes\":", "\"kind\":", "\"home\":", "\"output\":", "\"persistent\":",
	"\"offload\":", "\"inputs\":[\"x\"]", "\"outputs\":[\"a\"]",
	"\"updates\":[\"a\"]", "\"time_s\":", "\"layer\":", "\"flops\":",
	"\"workspace_bytes\":", "\"meta\":", "\"name\":", "\"tiers\":",
	"\"format\":\"hoffopt.graph\"", "\"format\":\"hoffopt.schedule\"",
	"\"version\":1", "\"op\":\"op0\"", "\"op\":\"op1\"",
	"\"prefetch\":\"w0\"", "\"from\":\"host\"", "\"to\":\"nvme\"",
	"\"store\":\"a\"", "\"detach\":\"b\"", "\"steps\":", "\"summary\":",
	"\"budget_bytes\":", "\"makespan_s\":", "{\"a\":1,\"a\":2}",
	"[[[[[[[[[[[[[[[[", "]]]]]]]]]]]]]]]]",
};

static void reserve(buf *b, size_t n)
{
	if (n <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < n)
		cap *= 2;
	uint8_t *p = realloc(b->p, cap);
	if (!p) {
		fprintf(stderr, "fuzz_driver: out of memory\n");
		exit(2);
	}
	b->p = p;
	b->cap = cap;
}

static void insert(buf *b, size_t at, const void *src, size_t n)
{
	reserve(b, b->n + n);
	memmove(b->p + at + n, b->p + at, b->n - at);
	memcpy(b->p + at, src, n);
	b->n += n;
}

static void erase(buf *b, size_t at, size_t n)
{
	memmove(b->p + at, b->p + at + n, b->n - at - n);
	b->n -= n;
}

/* Copies a random range of o (not empty), at most cap bytes, into tmp;
 * returns its length. */
static size_t pick_range(const buf *o, uint8_t *tmp, size_t cap)
{
	size_t from = below(o->n);
	size_t n = 1 + below(o->n - from);
	if (n > cap)
		n = cap;
	memcpy(tmp, o->p + from, n);
	return n;
}

static void mutate(buf *b, const buf *seeds, size_t nseeds)
{
	size_t at = below(b->n + 1), n;
	uint8_t tmp[512];
	switch (rnd() % 8) {
	case 0: /* flip a bit */
		if (b->n)
			b->p[below(b->n)] ^= (uint8_t)(1u << below(8));
		break;
	case 1: /* a random byte */
		tmp[0] = (uint8_t)rnd();
		insert(b, at, tmp, 1);
		break;
	case 2: /* a JSON token */
	case 3: {
		const char *t = dict[below(sizeof dict / sizeof *dict)];
		insert(b, at, t, strlen(t));
		break;
	}
	case 4: /* delete a range */
		n = 1 + below(at < b->n ? b->n - at : 0);
		if (n > 32)
			n = 1 + below(32);
		if (at < b->n)
			erase(b, at, at + n <= b->n ? n : b->n - at);
		break;
	case 5: /* duplicate a range: repeated keys, elements, ids */
		if (b->n) {
			n = pick_range(b, tmp, sizeof tmp);
			insert(b, below(b->n + 1), tmp, n);
		}
		break;
	case 6: { /* splice a range of another seed */
		const buf *o = &seeds[below(nseeds)];
		if (o->n)
			insert(b, at, tmp, pick_range(o, tmp, sizeof tmp));
		break;
	}
	default: /* truncate */
		if (b->n)
			b->n = below(b->n);
		break;
	}
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs one input from an exact-size copy. */
static void run(const uint8_t *p, size_t n)
{
	uint8_t *copy = malloc(n ? n : 1);
	if (!copy)
		exit(2);
	memcpy(copy, p, n);
	LLVMFuzzerTestOneInput(copy, n);
	free(copy);
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s CORPUS_DIR [ITERATIONS [SEED "
				"[MAX_SECONDS]]]\n",
			argv[0]);
		return 2;
	}
	long iters = argc > 2 ? atol(argv[2]) : 10000;
	rng_state = argc > 3 ? strtoull(argv[3], NULL, 10) : 1;
	double max_s = argc > 4 ? atof(argv[4]) : 60;
	bool verbose = getenv("FUZZ_VERBOSE") != NULL;
	if (rng_state == 0)
		rng_state = 1;

	/* The corpus, in name order so runs are repeatable. */
	DIR *d = opendir(argv[1]);
	if (!d) {
		fprintf(stderr, "fuzz_driver: cannot open %s\n", argv[1]);
		return 2;
	}
	char **names = NULL;
	size_t nnames = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		names = realloc(names, (nnames + 1) * sizeof *names);
		if (!names || !(names[nnames] = strdup(de->d_name)))
			return 2;
		nnames++;
	}
	closedir(d);
	if (nnames == 0) {
		fprintf(stderr, "fuzz_driver: %s is empty\n", argv[1]);
		return 2;
	}
	qsort(names, nnames, sizeof *names, cmp_name);
	buf *seeds = calloc(nnames, sizeof *seeds);
	if (!seeds)
		return 2;
	for (size_t i = 0; i < nnames; i++) {
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", argv[1], names[i]);
		FILE *f = fopen(path, "rb");
		if (!f) {
			fprintf(stderr, "fuzz_driver: cannot read %s\n", path);
			return 2;
		}
		uint8_t chunk[4096];
		size_t got;
		while ((got = fread(chunk, 1, sizeof chunk, f)) > 0)
			insert(&seeds[i], seeds[i].n, chunk, got);
		fclose(f);
		if (verbose)
			fprintf(stderr, "seed %s\n", names[i]);
		run(seeds[i].p, seeds[i].n);
	}

	double t0 = now();
	buf m = {0};
	long i;
	for (i = 0; i < iters; i++) {
		if ((i & 255) == 0 && now() - t0 > max_s) {
			printf("fuzz_driver: time limit of %g s reached\n", max_s);
			break;
		}
		const buf *s = &seeds[below(nnames)];
		m.n = 0;
		insert(&m, 0, s->p, s->n);
		for (int k = 1 + (int)below(4); k > 0; k--)
			mutate(&m, seeds, nnames);
		if (verbose)
			fprintf(stderr, "iteration %ld\n", i);
		run(m.p, m.n);
	}
	printf("fuzz_driver: %zu seeds, %ld mutants in %.1f s, no failure\n",
	       nnames, i, now() - t0);
	free(m.p);
	for (size_t k = 0; k < nnames; k++) {
		free(seeds[k].p);
		free(names[k]);
	}
	free(seeds);
	free(names);
	return 0;
}
