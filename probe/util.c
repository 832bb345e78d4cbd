/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "probe.h"

clockid_t probe_clock = CLOCK_MONOTONIC_RAW;
uint64_t probe_timer_overhead_ns;

void probe_err(const char *fmt, ...)
{
	va_list ap;

	fputs(PROBE_NAME ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void probe_hint(const char *fmt, ...)
{
	va_list ap;

	fputs(PROBE_NAME ": hint: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

const char *probe_errname(int err)
{
	const char *n = strerrorname_np(err);

	return n ? n : "E?";
}

/* "iolab-probe: pwrite: Invalid argument [EINVAL] (offset 4096, len 512, flags O_DIRECT)" */
void probe_syserr(const char *call, int err, const char *ctxfmt, ...)
{
	va_list ap;

	fprintf(stderr, PROBE_NAME ": %s: %s [%s]", call, strerror(err),
		probe_errname(err));
	if (ctxfmt && *ctxfmt) {
		fputs(" (", stderr);
		va_start(ap, ctxfmt);
		vfprintf(stderr, ctxfmt, ap);
		va_end(ap);
		fputc(')', stderr);
	}
	fputc('\n', stderr);
}

/* "O_DIRECT|O_DSYNC|RWF_DONTCACHE", or "none" */
void flags_describe(char *buf, size_t len, int oflags, uint32_t rwf)
{
	static const struct {
		const char *name;
		int of;
		uint32_t rf;
	} names[] = {
		{ "O_DIRECT", O_DIRECT, 0 },
		{ "O_DSYNC", O_DSYNC, 0 },
		{ "RWF_HIPRI", 0, RWF_HIPRI },
		{ "RWF_DSYNC", 0, RWF_DSYNC },
		{ "RWF_SYNC", 0, RWF_SYNC },
		{ "RWF_NOWAIT", 0, RWF_NOWAIT },
		{ "RWF_DONTCACHE", 0, RWF_DONTCACHE },
	};
	size_t i, used = 0;

	snprintf(buf, len, "none");
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int n;
		bool on = names[i].of ? (oflags & names[i].of) == names[i].of :
					(rwf & names[i].rf) != 0;

		if (!on)
			continue;
		n = snprintf(buf + used, len - used, "%s%s", used ? "|" : "",
			     names[i].name);
		if (n < 0 || (size_t)n >= len - used)
			return;
		used += (size_t)n;
	}
}

/* explain the usual reasons a read or write with these flags fails */
void probe_io_hint(int err, int oflags, uint32_t rwf, uint64_t off,
		   uint64_t len, uint32_t dio_offset_align)
{
	bool direct = oflags & O_DIRECT;
	uint32_t a = dio_offset_align;

	if (err == EINVAL && direct && a && (off % a || len % a)) {
		probe_hint("O_DIRECT needs offset and length aligned to %u "
			   "bytes on this file (statx STATX_DIOALIGN); offset "
			   "%llu %s, len %llu (--bs) %s", a,
			   (unsigned long long)off, off % a ? "is not" : "is",
			   (unsigned long long)len, len % a ? "is not" : "is");
		return;
	}
	if ((err == EOPNOTSUPP || err == EINVAL) && (rwf & RWF_DONTCACHE)) {
		probe_hint("RWF_DONTCACHE (uncached buffered I/O) needs Linux "
			   "6.14 or later and a filesystem that supports it; "
			   "this kernel or filesystem refused it");
		return;
	}
	if (err == EINVAL && direct) {
		probe_hint("O_DIRECT needs offset, length (--bs) and buffer "
			   "aligned to the logical block size of the device "
			   "(often 512 or 4096 bytes)");
		return;
	}
	if (err == EAGAIN && (rwf & RWF_NOWAIT)) {
		probe_hint("RWF_NOWAIT fails with EAGAIN when the I/O would "
			   "block (data not cached, lock or allocation "
			   "needed)");
		return;
	}
	if ((err == EOPNOTSUPP || err == EINVAL) && (rwf & RWF_HIPRI)) {
		probe_hint("RWF_HIPRI (polled I/O) needs O_DIRECT and a "
			   "device with poll queues");
		return;
	}
	if (err == EOPNOTSUPP && (rwf & RWF_NOWAIT))
		probe_hint("this filesystem does not support RWF_NOWAIT");
}

int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * The cost of one timing: median over 1001 back-to-back clock pairs of
 * (t1 - t0).  It is what every timed interval includes on top of the work.
 */
uint64_t probe_measure_timer_overhead(void)
{
	enum { N = 1001 };
	uint64_t d[N];
	int i;

	for (i = 0; i < 100; i++)
		(void)probe_now();
	for (i = 0; i < N; i++) {
		uint64_t t0 = probe_now();
		uint64_t t1 = probe_now();

		d[i] = t1 - t0;
	}
	qsort(d, N, sizeof(d[0]), cmp_u64);
	return d[N / 2];
}

static uint64_t tv_us(const struct timeval *tv)
{
	return (uint64_t)tv->tv_sec * 1000000ull + (uint64_t)tv->tv_usec;
}

/* rusage of the measured region: r1 - r0 */
void json_rusage(struct json *js, const char *key, const struct rusage *r0,
		 const struct rusage *r1)
{
	json_obj_begin(js, key);
	json_i64(js, "nvcsw", r1->ru_nvcsw - r0->ru_nvcsw);
	json_i64(js, "nivcsw", r1->ru_nivcsw - r0->ru_nivcsw);
	json_u64(js, "utime_us", tv_us(&r1->ru_utime) - tv_us(&r0->ru_utime));
	json_u64(js, "stime_us", tv_us(&r1->ru_stime) - tv_us(&r0->ru_stime));
	json_i64(js, "minflt", r1->ru_minflt - r0->ru_minflt);
	json_i64(js, "majflt", r1->ru_majflt - r0->ru_majflt);
	json_i64(js, "inblock", r1->ru_inblock - r0->ru_inblock);
	json_i64(js, "oublock", r1->ru_oublock - r0->ru_oublock);
	json_obj_end(js);
}
