/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "hist.h"
#include "json.h"

void hist_init(struct hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

/* smallest value that lands in bucket idx */
uint64_t hist_bucket_low(unsigned idx)
{
	unsigned shift;

	if (idx < 2 * HIST_SUB)
		return idx;
	shift = (idx >> HIST_SUB_BITS) - 1;
	return ((uint64_t)HIST_SUB + (idx & (HIST_SUB - 1))) << shift;
}

/* largest value that lands in bucket idx (the last bucket is open-ended) */
uint64_t hist_bucket_high(unsigned idx)
{
	if (idx == HIST_NBUCKETS - 1)
		return UINT64_MAX;
	return hist_bucket_low(idx + 1) - 1;
}

/*
 * The value a bucket stands for in "bins": the exact value below 256 ns, the
 * midpoint of the bucket above (rounded down to an integer ns).
 */
uint64_t hist_bucket_value(unsigned idx)
{
	uint64_t lo = hist_bucket_low(idx);

	if (idx < 2 * HIST_SUB)
		return lo;
	if (idx == HIST_NBUCKETS - 1)
		return lo;
	return lo + (hist_bucket_high(idx) - lo) / 2;
}

/*
 * The num/den-quantile (e.g. 999/1000 for p99.9) with fio's rule: the first
 * bucket whose cumulative count reaches rank = ceil(num/den * count),
 * computed in exact integer arithmetic.  The bucket value is clamped to the
 * exact [min, max] seen, so p50 <= p99 <= max always holds.
 */
uint64_t hist_percentile(const struct hist *h, uint64_t num, uint64_t den)
{
	unsigned __int128 r;
	uint64_t rank, cum = 0, v;
	unsigned i;

	if (h->count == 0)
		return 0;
	r = ((unsigned __int128)num * h->count + den - 1) / den;
	rank = r ? (uint64_t)r : 1;
	for (i = 0; i < HIST_NBUCKETS; i++) {
		cum += h->bins[i];
		if (cum >= rank)
			break;
	}
	if (i == HIST_NBUCKETS)
		i = HIST_NBUCKETS - 1;
	v = hist_bucket_value(i);
	if (v < h->min)
		v = h->min;
	if (v > h->max)
		v = h->max;
	return v;
}

void hist_report(const struct hist *h, struct json *js, const char *key)
{
	char name[24];
	unsigned i;

	json_obj_begin(js, key);
	json_u64(js, "count", h->count);
	json_u64(js, "min", h->count ? h->min : 0);
	json_double(js, "mean", h->count ? (double)h->sum / (double)h->count : 0.0);
	json_u64(js, "p50", hist_percentile(h, 50, 100));
	json_u64(js, "p90", hist_percentile(h, 90, 100));
	json_u64(js, "p99", hist_percentile(h, 99, 100));
	json_u64(js, "p99.9", hist_percentile(h, 999, 1000));
	json_u64(js, "p99.99", hist_percentile(h, 9999, 10000));
	json_u64(js, "max", h->max);
	json_u64(js, "sum", h->sum);
	json_obj_begin(js, "bins");
	for (i = 0; i < HIST_NBUCKETS; i++) {
		if (!h->bins[i])
			continue;
		json_fmt_key(name, sizeof(name), hist_bucket_value(i));
		json_u64(js, name, h->bins[i]);
	}
	json_obj_end(js);
	json_obj_end(js);
}
