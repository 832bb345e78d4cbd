/* SPDX-License-Identifier: MIT */
/*
 * Log-linear latency histogram (HdrHistogram-like).
 *
 * Values below 256 ns are counted exactly.  Above, each power-of-two range
 * [2^k, 2^(k+1)) is split into 128 linear sub-buckets of width 2^(k-7), so a
 * bucket is at most 1/128 (0.78%) of its values wide and its representative
 * value (the midpoint) is within 0.39% of every value it holds.  Values of
 * 2^48 ns (78 hours) and more land in the last bucket; min, max, sum and
 * count are exact.
 *
 * hist_add() is a handful of instructions and never allocates: it is meant
 * for timed loops.
 */
#ifndef IOLAB_HIST_H
#define IOLAB_HIST_H

#include <stdint.h>

#define HIST_SUB_BITS 7
#define HIST_SUB (1u << HIST_SUB_BITS)		/* 128 sub-buckets */
#define HIST_MAX_MSB 47				/* last exact range: 2^47..2^48 */
#define HIST_NBUCKETS ((HIST_MAX_MSB - HIST_SUB_BITS + 2) << HIST_SUB_BITS)

struct hist {
	uint64_t count;
	uint64_t sum;
	uint64_t min;
	uint64_t max;
	uint64_t bins[HIST_NBUCKETS];
};

static inline unsigned hist_index(uint64_t v)
{
	unsigned msb, shift;

	if (v < 2 * HIST_SUB)
		return (unsigned)v;
	msb = 63u - (unsigned)__builtin_clzll(v);
	if (msb > HIST_MAX_MSB)
		return HIST_NBUCKETS - 1;
	shift = msb - HIST_SUB_BITS;
	return ((shift + 1) << HIST_SUB_BITS) + (unsigned)(v >> shift) - HIST_SUB;
}

static inline void hist_add(struct hist *h, uint64_t v)
{
	h->bins[hist_index(v)]++;
	h->count++;
	h->sum += v;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

struct json;

void hist_init(struct hist *h);
uint64_t hist_bucket_value(unsigned idx);
uint64_t hist_bucket_low(unsigned idx);
uint64_t hist_bucket_high(unsigned idx);
uint64_t hist_percentile(const struct hist *h, uint64_t num, uint64_t den);
void hist_report(const struct hist *h, struct json *js, const char *key);

#endif
