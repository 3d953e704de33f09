/* pattern.h: the content --verify puts in every tensor, shared by the C
 * and CUDA executors so both write and check the same bytes.
 *
 * Byte j of tensor t at version v is byte (j mod 8), little-endian, of the
 * 64-bit word hoff_pattern_word(t, v, j / 8). A version counts the in-place
 * updates the tensor has seen (0 when it is first filled or produced), so
 * an updated tensor gets new bytes and a stale copy is told apart from a
 * fresh one. The words are a splitmix64 stream: cheap, and any byte flip
 * or misplaced block changes the words it covers. */
#ifndef HOFF_PATTERN_H
#define HOFF_PATTERN_H

#include <stdint.h>

#if defined(__CUDACC__)
#define HOFF_HD static __host__ __device__ __forceinline__
#else
#define HOFF_HD static inline
#endif

HOFF_HD uint64_t hoff_mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

/* Seed of tensor t at version v. */
HOFF_HD uint64_t hoff_pattern_seed(int32_t t, uint32_t v)
{
	return hoff_mix64(((uint64_t)(uint32_t)t << 32 | v) ^
			  0x6a09e667f3bcc909ULL);
}

/* Word w (bytes 8w .. 8w+7) of the tensor whose seed is seed. */
HOFF_HD uint64_t hoff_pattern_word(uint64_t seed, uint64_t w)
{
	return hoff_mix64(seed + (w + 1) * 0x9e3779b97f4a7c15ULL);
}

/* Byte j of the tensor whose seed is seed. */
HOFF_HD uint8_t hoff_pattern_byte(uint64_t seed, uint64_t j)
{
	return (uint8_t)(hoff_pattern_word(seed, j >> 3) >> (8 * (j & 7)));
}

/* A failed check, as the backends report it per command: the phase (0:
 * an op's start or a transfer's source at its start; 1: an op's end or a
 * transfer's destination at its end), the item checked (an op's inputs,
 * then its updates; 0 for a transfer) and the first bad byte, packed so
 * that the smallest code is the earliest phase, item and byte (the CUDA
 * kernels keep it with atomicMin). HOFF_BAD_NONE: all matched. */
#define HOFF_BAD_NONE	  0xffffffffffffffffULL
#define HOFF_BAD_BYTE_MAX ((1ULL << 40) - 1)
HOFF_HD uint64_t hoff_bad_tag(uint32_t phase, uint64_t item)
{
	return (uint64_t)phase << 62 | (item & 0x3fffff) << 40;
}
HOFF_HD uint64_t hoff_bad_code(uint64_t tag, uint64_t byte)
{
	return tag | (byte < HOFF_BAD_BYTE_MAX ? byte : HOFF_BAD_BYTE_MAX);
}

#include <string.h>

/* Host-side fill and check (the CUDA backend has kernels of its own). */

/* Host-side word as bytes in memory: little-endian whatever the host. */
static inline uint64_t hoff_pattern_le(uint64_t x)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return __builtin_bswap64(x);
#else
	return x;
#endif
}

/* Writes the n bytes of tensor t at version v, each xor-ed with inv
 * (0, or 0xff for junk that differs from the pattern in every byte), to
 * d (any alignment). */
static inline void hoff_pattern_fill_x(uint8_t *d, int64_t n, int32_t t,
				       uint32_t v, uint8_t inv)
{
	uint64_t seed = hoff_pattern_seed(t, v), m = inv ? ~0ULL : 0;
	int64_t w = 0;
	for (; 8 * w + 8 <= n; w++) {
		uint64_t x = hoff_pattern_le(
			hoff_pattern_word(seed, (uint64_t)w) ^ m);
		memcpy(d + 8 * w, &x, 8);
	}
	for (int64_t j = 8 * w; j < n; j++)
		d[j] = (uint8_t)(hoff_pattern_byte(seed, (uint64_t)j) ^ inv);
}

/* Writes the n bytes of tensor t at version v to d (any alignment). */
static inline void hoff_pattern_fill(uint8_t *d, int64_t n, int32_t t,
				     uint32_t v)
{
	hoff_pattern_fill_x(d, n, t, v, 0);
}

/* Offset of the first of d's n bytes that differs from tensor t at version
 * v, or -1 when all match. */
static inline int64_t hoff_pattern_check(const uint8_t *d, int64_t n,
					 int32_t t, uint32_t v)
{
	uint64_t seed = hoff_pattern_seed(t, v);
	int64_t w = 0;
	for (; 8 * w + 8 <= n; w++) {
		uint64_t x = hoff_pattern_le(hoff_pattern_word(seed, (uint64_t)w)), y;
		memcpy(&y, d + 8 * w, 8);
		if (x != y)
			break;
	}
	for (int64_t j = 8 * w; j < n; j++)
		if (d[j] != hoff_pattern_byte(seed, (uint64_t)j))
			return j;
	return -1;
}
#endif
