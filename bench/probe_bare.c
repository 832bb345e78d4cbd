/* SPDX-License-Identifier: MIT */
/*
 * The bare loops that bench/probe_overhead.py compares iolab-probe with:
 * the same system call, the same file, the same offsets, timed only once
 * around the whole loop.  No histogram, no per-call clock reads.
 *
 *   probe_bare pwrite0  FILE CALLS BS CPU   pwrite(BS) at offset 0 (batch pwrite_u*)
 *   probe_bare pwriteseq FILE CALLS BS CPU  pwrite(BS) at consecutive offsets (lat --op=pwrite)
 *   probe_bare preadseq FILE CALLS BS CPU   pread(BS) at consecutive offsets (lat --op=pread)
 *
 * The seq loops wrap at the file size, as lat --pattern=seq does.  FILE
 * must exist.  Prints {"ns_per_call": ..., "cpu_ns_per_call": ...} on
 * stdout: wall time, and user+system CPU time (getrusage), per call.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static uint64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static double cpu_us(const struct rusage *r)
{
	return (double)r->ru_utime.tv_sec * 1e6 + (double)r->ru_utime.tv_usec +
	       (double)r->ru_stime.tv_sec * 1e6 + (double)r->ru_stime.tv_usec;
}

static void die(const char *call)
{
	fprintf(stderr, "probe_bare: %s: %s\n", call, strerror(errno));
	exit(1);
}

int main(int argc, char **argv)
{
	uint64_t calls, bs, nblocks, blk = 0, i, t0 = 0, t1 = 0, warm;
	struct rusage r0, r1;
	struct stat st;
	cpu_set_t set;
	char *buf;
	int fd, mode;

	if (argc != 6) {
		fprintf(stderr, "usage: probe_bare pwrite0|pwriteseq|preadseq "
				"FILE CALLS BS CPU\n");
		return 2;
	}
	mode = !strcmp(argv[1], "pwrite0") ? 0 :
	       !strcmp(argv[1], "pwriteseq") ? 1 :
	       !strcmp(argv[1], "preadseq") ? 2 : -1;
	calls = strtoull(argv[3], NULL, 10);
	bs = strtoull(argv[4], NULL, 10);
	if (mode < 0 || !calls || !bs) {
		fprintf(stderr, "probe_bare: bad arguments\n");
		return 2;
	}
	CPU_ZERO(&set);
	CPU_SET(atoi(argv[5]), &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
	fd = open(argv[2], mode == 2 ? O_RDONLY : O_WRONLY);
	if (fd < 0 || fstat(fd, &st))
		die("open");
	nblocks = (uint64_t)st.st_size / bs;
	buf = malloc(bs);
	if (!buf || !nblocks)
		die("malloc");
	memset(buf, mode == 0 ? 0 : 0x5a, bs);

	/* the same warmup the probe runs get: 1000 calls */
	for (warm = 0; warm < 2; warm++) {
		uint64_t n = warm ? calls : 1000;

		getrusage(RUSAGE_SELF, &r0);
		t0 = now();
		for (i = 0; i < n; i++) {
			ssize_t r;

			switch (mode) {
			case 0:
				r = pwrite(fd, buf, bs, 0);
				break;
			case 1:
				r = pwrite(fd, buf, bs, (off_t)(blk * bs));
				break;
			default:
				r = pread(fd, buf, bs, (off_t)(blk * bs));
				break;
			}
			if (r != (ssize_t)bs)
				die(mode == 2 ? "pread" : "pwrite");
			if (++blk == nblocks)
				blk = 0;
		}
		t1 = now();
		getrusage(RUSAGE_SELF, &r1);
	}
	printf("{\"ns_per_call\": %.3f, \"cpu_ns_per_call\": %.3f}\n",
	       (double)(t1 - t0) / (double)calls,
	       (cpu_us(&r1) - cpu_us(&r0)) * 1000.0 / (double)calls);
	return 0;
}
