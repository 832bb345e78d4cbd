/* SPDX-License-Identifier: MIT */
/*
 * The median cost of one call, without timing each call: bench/probe_vs_fio.py
 * subtracts it from the median latency iolab-probe and fio report, to get
 * what each tool adds.
 *
 *   probe_vs_fio_bare preadseq|pwriteseq FILE CALLS BS CPU [K]
 *
 * The calls are those of bench/probe_bare.c (pread/pwrite of BS bytes at
 * consecutive offsets, wrapping at the file size; 1000 warm-up calls; pinned
 * to CPU), timed in chunks of K calls (default 8): t0, K calls, t1.  A
 * chunk's ns/call is (t1 - t0 - clock pair) / K; the output is the median
 * over chunks.  probe_bare.c's one mean over the whole loop counts every
 * slow call (writeback, a cache-cold call after a context switch on a busy
 * machine) and so exceeds the median call when the distribution is skewed;
 * the median of short chunks does not.  The clock is read twice per K calls,
 * not per call, and its cost (median of 1001 back-to-back pairs) is
 * subtracted.
 *
 * Prints {"median_ns_per_call", "mean_ns_per_call", "chunks", "k",
 * "timer_overhead_ns"}.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static uint64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void die(const char *call)
{
	fprintf(stderr, "probe_vs_fio_bare: %s: %s\n", call, strerror(errno));
	exit(1);
}

static uint64_t timer_overhead(void)
{
	static uint64_t pairs[1001];
	int i;

	for (i = 0; i < 1001; i++) {
		uint64_t t0 = now();

		pairs[i] = now() - t0;
	}
	qsort(pairs, 1001, sizeof(pairs[0]), cmp_u64);
	return pairs[500];
}

int main(int argc, char **argv)
{
	uint64_t calls, bs, k = 8, nblocks, blk = 0, i, j, nchunks, tov, sum = 0;
	uint64_t *chunk;
	struct stat st;
	cpu_set_t set;
	char *buf;
	int fd, write_mode;

	if (argc != 6 && argc != 7) {
		fprintf(stderr, "usage: probe_vs_fio_bare preadseq|pwriteseq FILE CALLS BS CPU [K]\n");
		return 2;
	}
	write_mode = !strcmp(argv[1], "pwriteseq");
	calls = strtoull(argv[3], NULL, 10);
	bs = strtoull(argv[4], NULL, 10);
	if (argc == 7)
		k = strtoull(argv[6], NULL, 10);
	if ((!write_mode && strcmp(argv[1], "preadseq")) || !calls || !bs || !k || calls < k) {
		fprintf(stderr, "probe_vs_fio_bare: bad arguments\n");
		return 2;
	}
	CPU_ZERO(&set);
	CPU_SET(atoi(argv[5]), &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
	fd = open(argv[2], write_mode ? O_WRONLY : O_RDONLY);
	if (fd < 0 || fstat(fd, &st))
		die("open");
	nblocks = (uint64_t)st.st_size / bs;
	nchunks = calls / k;
	buf = malloc(bs);
	chunk = calloc(nchunks, sizeof(*chunk));
	if (!buf || !chunk || !nblocks)
		die("malloc");
	memset(buf, 0x5a, bs);
	tov = timer_overhead();

	for (i = 0; i < 1000; i++) {	/* the warm-up the probe runs get */
		ssize_t r = write_mode ? pwrite(fd, buf, bs, (off_t)(blk * bs))
				       : pread(fd, buf, bs, (off_t)(blk * bs));

		if (r != (ssize_t)bs)
			die(write_mode ? "pwrite" : "pread");
		if (++blk == nblocks)
			blk = 0;
	}
	for (j = 0; j < nchunks; j++) {
		uint64_t t0 = now(), t1;

		for (i = 0; i < k; i++) {
			ssize_t r = write_mode ? pwrite(fd, buf, bs, (off_t)(blk * bs))
					       : pread(fd, buf, bs, (off_t)(blk * bs));

			if (r != (ssize_t)bs)
				die(write_mode ? "pwrite" : "pread");
			if (++blk == nblocks)
				blk = 0;
		}
		t1 = now();
		chunk[j] = t1 - t0 > tov ? t1 - t0 - tov : 0;
		sum += chunk[j];
	}
	qsort(chunk, nchunks, sizeof(*chunk), cmp_u64);
	printf("{\"median_ns_per_call\": %.3f, \"mean_ns_per_call\": %.3f, \"chunks\": %llu, "
	       "\"k\": %llu, \"timer_overhead_ns\": %llu}\n",
	       (double)chunk[nchunks / 2] / (double)k, (double)sum / (double)(nchunks * k),
	       (unsigned long long)nchunks, (unsigned long long)k, (unsigned long long)tov);
	return 0;
}
