/* SPDX-License-Identifier: MIT */
/*
 * batch: the libMicro method.  Time a batch of B identical calls with two
 * clock reads, turn it into usecs/call, repeat for --batches batches and
 * report the median.  Unlike lat, the clock cost is paid once per B calls,
 * so calls far shorter than a clock read (a cached 1 KiB overwrite takes
 * ~0.3 us) are measured without the timer dominating.
 *
 * The named cases reproduce libMicro's write_u1k, write_u10k, pwrite_u1k and
 * pwrite_u10k as its bench.sh runs them; README.md says exactly how.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json.h"
#include "probe.h"

enum { BATCH_WRITE, BATCH_PWRITE };
static const char *const batch_ops[] = { "write", "pwrite", NULL };

struct batch_case {
	const char *name;
	int op;
	uint64_t bs;
	uint64_t batch;
};

/* libMicro bench.sh: write -B 50 / -B 25; pwrite sized by time (see README) */
static const struct batch_case batch_cases[] = {
	{ "write_u1k", BATCH_WRITE, 1024, 50 },
	{ "write_u10k", BATCH_WRITE, 10240, 25 },
	{ "pwrite_u1k", BATCH_PWRITE, 1024, 1000 },
	{ "pwrite_u10k", BATCH_PWRITE, 10240, 1000 },
	{ "custom", BATCH_PWRITE, 1024, 1000 },
};
#define BATCH_CUSTOM 4
static const char *const batch_case_names[] = {
	"write_u1k", "write_u10k", "pwrite_u1k", "pwrite_u10k", "custom", NULL
};
static const char *const batch_preps[] = { "create", "keep", NULL };

#define LIBMICRO_OUTLIER_MIN 40	/* libMicro drops 3-sigma outliers above this */

struct batch_stats {
	double median, min, max, mean, stddev;
	uint64_t n;
};

struct batch_state {
	int kase, op, prep;
	const char *file;
	uint64_t bs, batch, batches, warmup_batches, file_size, offset;
	bool prep_sync;
	unsigned seen;

	int fd;
	void *buf;
	uint64_t *batch_ns;
	double *us, *work;
	struct batch_stats raw, corrected;
	uint64_t outliers, calls;
	struct rusage ru0, ru1;
};

static struct batch_state batch_state;

enum { SEEN_CASE, SEEN_OP, SEEN_BS, SEEN_BATCH, SEEN_OFFSET };

static const struct probe_param batch_params[] = {
	/* the first five are looked up by index in batch_parse: keep order */
	{ .name = "case", .type = P_ENUM,
	  .off = offsetof(struct batch_state, kase),
	  .choices = batch_case_names,
	  .help = "what to run (required): a libMicro case or custom" },
	{ .name = "op", .type = P_ENUM, .off = offsetof(struct batch_state, op),
	  .choices = batch_ops,
	  .help = "custom: write (consecutive offsets from 0 each batch) or "
		  "pwrite (at --offset)" },
	{ .name = "bs", .type = P_SIZE, .off = offsetof(struct batch_state, bs),
	  .min = 1, .help = "custom: bytes per call" },
	{ .name = "batch", .type = P_COUNT,
	  .off = offsetof(struct batch_state, batch), .min = 1,
	  .help = "calls per timed batch (default: the case's)" },
	{ .name = "offset", .type = P_SIZE,
	  .off = offsetof(struct batch_state, offset), .defval = "0",
	  .help = "custom pwrite: file offset of every call" },
	{ .name = "batches", .type = P_COUNT,
	  .off = offsetof(struct batch_state, batches), .defval = "200",
	  .min = 1, .help = "timed batches (libMicro -C 200)" },
	{ .name = "warmup-batches", .type = P_COUNT,
	  .off = offsetof(struct batch_state, warmup_batches), .defval = "0",
	  .help = "untimed batches first" },
	{ .name = "file", .type = P_STR,
	  .off = offsetof(struct batch_state, file), .metavar = "PATH",
	  .help = "the file written to (required), on the filesystem under "
		  "test" },
	{ .name = "file-size", .type = P_SIZE,
	  .off = offsetof(struct batch_state, file_size), .defval = "10M",
	  .min = 1, .help = "size the file is created with (libMicro: 10 MiB "
			   "of zeros by dd bs=1024k)" },
	{ .name = "prep", .type = P_ENUM,
	  .off = offsetof(struct batch_state, prep), .defval = "create",
	  .choices = batch_preps,
	  .help = "create: truncate and write --file-size zeros in 1 MiB "
		  "writes; keep: use the file as it is" },
	{ .name = "prep-sync", .type = P_BOOL,
	  .off = offsetof(struct batch_state, prep_sync), .defval = "0",
	  .help = "fsync the file after --prep=create (libMicro does not)" },
	PARAM_END
};

static int batch_parse(void *state, const char *key, const char *val)
{
	struct batch_state *s = state;
	int idx = -1;
	int rc = params_set("batch", batch_params, state, key, val, &idx);

	if (rc == PROBE_OK && idx >= 0 && idx < 32)
		s->seen |= 1u << idx;
	return rc;
}

static int batch_prepare_file(struct batch_state *s)
{
	enum { CHUNK = 1 << 20 };
	uint64_t off = 0;
	char *zero;
	int fd;

	fd = open(s->file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		probe_syserr("open", errno, "path %s, flags O_WRONLY|O_CREAT|"
			     "O_TRUNC, --prep=create", s->file);
		return PROBE_ERUN;
	}
	zero = calloc(1, CHUNK);
	if (!zero) {
		probe_syserr("calloc", ENOMEM, "%d bytes", CHUNK);
		close(fd);
		return PROBE_ERUN;
	}
	while (off < s->file_size) {
		uint64_t n = s->file_size - off;
		ssize_t r;

		if (n > CHUNK)
			n = CHUNK;
		r = write(fd, zero, (size_t)n);
		if (r != (ssize_t)n) {
			if (r >= 0)
				errno = ENOSPC;
			probe_syserr("write", errno, "path %s, offset %" PRIu64
				     ", len %" PRIu64 ", --prep=create", s->file,
				     off, n);
			free(zero);
			close(fd);
			return PROBE_ERUN;
		}
		off += n;
	}
	free(zero);
	if (s->prep_sync && fsync(fd)) {
		probe_syserr("fsync", errno, "path %s, --prep-sync", s->file);
		close(fd);
		return PROBE_ERUN;
	}
	if (close(fd)) {
		probe_syserr("close", errno, "path %s", s->file);
		return PROBE_ERUN;
	}
	return PROBE_OK;
}

static int batch_setup(void *state)
{
	struct batch_state *s = state;
	const struct batch_case *c;
	uint64_t span;
	struct stat st;

	s->fd = -1;
	if (!(s->seen & (1u << SEEN_CASE))) {
		probe_err("batch: --case is required (write_u1k, write_u10k, "
			  "pwrite_u1k, pwrite_u10k or custom)");
		return PROBE_EUSAGE;
	}
	if (!s->file) {
		probe_err("batch: --file=PATH is required");
		return PROBE_EUSAGE;
	}
	c = &batch_cases[s->kase];
	if (s->kase != BATCH_CUSTOM &&
	    (s->seen & ((1u << SEEN_OP) | (1u << SEEN_BS) | (1u << SEEN_OFFSET)))) {
		probe_err("batch: --op, --bs and --offset go with --case=custom "
			  "only; --case=%s fixes them", c->name);
		return PROBE_EUSAGE;
	}
	if (!(s->seen & (1u << SEEN_OP)))
		s->op = c->op;
	if (!(s->seen & (1u << SEEN_BS)))
		s->bs = c->bs;
	if (!(s->seen & (1u << SEEN_BATCH)))
		s->batch = c->batch;

	/* write walks from offset 0 each batch: it must stay inside the file */
	span = s->op == BATCH_WRITE ? s->batch * s->bs : s->offset + s->bs;
	if (s->op == BATCH_WRITE && s->batch > UINT64_MAX / s->bs)
		span = UINT64_MAX;
	if (span > s->file_size) {
		probe_err("batch: a batch would write up to byte %" PRIu64
			  " but --file-size=%" PRIu64 "; the cases overwrite, "
			  "they never extend: raise --file-size or lower %s",
			  span, s->file_size,
			  s->op == BATCH_WRITE ? "--batch or --bs" : "--offset");
		return PROBE_EUSAGE;
	}

	if (s->prep == 0) {
		int rc = batch_prepare_file(s);

		if (rc)
			return rc;
	} else {
		if (stat(s->file, &st)) {
			probe_syserr("stat", errno, "path %s, --prep=keep",
				     s->file);
			return PROBE_ERUN;
		}
		if ((uint64_t)st.st_size < span) {
			probe_err("batch: %s is %lld bytes, the case overwrites "
				  "up to byte %" PRIu64 " (--prep=keep)",
				  s->file, (long long)st.st_size, span);
			return PROBE_EUSAGE;
		}
	}
	s->fd = open(s->file, O_WRONLY | O_CLOEXEC);
	if (s->fd < 0) {
		probe_syserr("open", errno, "path %s, flags O_WRONLY", s->file);
		return PROBE_ERUN;
	}
	s->buf = malloc((size_t)s->bs);
	s->batch_ns = calloc(s->batches, sizeof(*s->batch_ns));
	s->us = calloc(s->batches, sizeof(*s->us));
	s->work = calloc(s->batches, sizeof(*s->work));
	if (!s->buf || !s->batch_ns || !s->us || !s->work) {
		probe_syserr("malloc", ENOMEM, "buffers for %" PRIu64
			     " batches", s->batches);
		return PROBE_ERUN;
	}
	/* zeros, like the file; touched so no page fault lands in a batch */
	memset(s->buf, 0, (size_t)s->bs);
	return PROBE_OK;
}

static int batch_fail(struct batch_state *s, const char *call, ssize_t r,
		      int err, uint64_t off)
{
	if (r < 0)
		probe_syserr(call, err, "offset %" PRIu64 ", len %" PRIu64
			     ", flags none, file %s", off, s->bs, s->file);
	else
		probe_err("%s: short write: %zd of %" PRIu64 " bytes (offset %"
			  PRIu64 ", file %s)", call, r, s->bs, off, s->file);
	return PROBE_ERUN;
}

/* one batch; *ns gets its duration (two clock reads around the calls) */
static int batch_once(struct batch_state *s, uint64_t *ns)
{
	const int fd = s->fd;
	const void *buf = s->buf;
	const size_t bs = (size_t)s->bs;
	const uint64_t n = s->batch;
	const off_t off = (off_t)s->offset;
	uint64_t i, t0, t1;
	ssize_t r;

	if (s->op == BATCH_WRITE) {
		/* libMicro's benchmark_initbatch: rewind, untimed */
		if (lseek(fd, 0, SEEK_SET) != 0) {
			probe_syserr("lseek", errno, "offset 0, file %s",
				     s->file);
			return PROBE_ERUN;
		}
		t0 = probe_now();
		for (i = 0; i < n; i++) {
			r = write(fd, buf, bs);
			if (__builtin_expect(r != (ssize_t)bs, 0))
				return batch_fail(s, "write", r, errno, i * bs);
		}
		t1 = probe_now();
	} else {
		t0 = probe_now();
		for (i = 0; i < n; i++) {
			r = pwrite(fd, buf, bs, off);
			if (__builtin_expect(r != (ssize_t)bs, 0))
				return batch_fail(s, "pwrite", r, errno,
						  (uint64_t)off);
		}
		t1 = probe_now();
	}
	*ns = t1 - t0;
	return PROBE_OK;
}

static int batch_run(void *state)
{
	struct batch_state *s = state;
	uint64_t b, ns;
	int rc;

	for (b = 0; b < s->warmup_batches; b++) {
		rc = batch_once(s, &ns);
		if (rc)
			return rc;
	}
	getrusage(RUSAGE_SELF, &s->ru0);
	for (b = 0; b < s->batches; b++) {
		rc = batch_once(s, &s->batch_ns[b]);
		if (rc)
			return rc;
	}
	getrusage(RUSAGE_SELF, &s->ru1);
	s->calls = s->batches * s->batch;
	return PROBE_OK;
}

/* libMicro's crunch_stats: median is sorted[n/2], stddev uses n-1 */
static void batch_crunch(const double *d, uint64_t n, double *sorted,
			 struct batch_stats *st)
{
	double sum = 0, ss = 0;
	uint64_t i;

	memset(st, 0, sizeof(*st));
	st->n = n;
	if (!n)
		return;
	for (i = 0; i < n; i++)
		sum += d[i];
	st->mean = sum / (double)n;
	for (i = 0; i < n; i++)
		ss += (d[i] - st->mean) * (d[i] - st->mean);
	st->stddev = n > 1 ? sqrt(ss / (double)(n - 1)) : 0.0;
	memcpy(sorted, d, n * sizeof(*d));
	qsort(sorted, n, sizeof(*sorted), cmp_double);
	st->min = sorted[0];
	st->max = sorted[n - 1];
	st->median = sorted[n / 2];
}

static void batch_stats_report(struct json *js, const char *key,
			       const struct batch_stats *st)
{
	json_obj_begin(js, key);
	json_double(js, "median", st->median);
	json_double(js, "min", st->min);
	json_double(js, "max", st->max);
	json_double(js, "mean", st->mean);
	json_double(js, "stddev", st->stddev);
	json_u64(js, "batches", st->n);
	json_obj_end(js);
}

static void batch_report(void *state, struct json *js)
{
	struct batch_state *s = state;
	double *kept;
	uint64_t b, n;

	/* usecs/call per batch, clock cost subtracted as libMicro does */
	for (b = 0; b < s->batches; b++) {
		double ns = (double)s->batch_ns[b] -
			    (double)probe_timer_overhead_ns;

		s->us[b] = ns / (double)s->batch / 1000.0;
	}
	batch_crunch(s->us, s->batches, s->work, &s->raw);

	/* libMicro: drop 3-sigma outliers, repeatedly, while > 40 remain */
	kept = malloc(s->batches * sizeof(*kept));
	n = s->batches;
	s->corrected = s->raw;
	s->outliers = 0;
	if (kept) {
		memcpy(kept, s->us, n * sizeof(*kept));
		while (n > LIBMICRO_OUTLIER_MIN) {
			double lo = s->corrected.mean - 3 * s->corrected.stddev;
			double hi = s->corrected.mean + 3 * s->corrected.stddev;
			uint64_t i, j = 0;

			for (i = 0; i < n; i++)
				if (kept[i] >= lo && kept[i] <= hi)
					kept[j++] = kept[i];
			if (j == n)
				break;
			s->outliers += n - j;
			n = j;
			batch_crunch(kept, n, s->work, &s->corrected);
		}
		free(kept);
	}

	json_str(js, "case", batch_case_names[s->kase]);
	json_str(js, "op", batch_ops[s->op]);
	json_u64(js, "bs", s->bs);
	json_u64(js, "batch", s->batch);
	json_u64(js, "batches", s->batches);
	json_u64(js, "calls", s->calls);
	json_u64(js, "bytes", s->calls * s->bs);
	batch_stats_report(js, "us_per_call", &s->corrected);
	json_u64(js, "outliers_removed", s->outliers);
	batch_stats_report(js, "us_per_call_raw", &s->raw);
	json_arr_begin(js, "per_batch_us_per_call");
	for (b = 0; b < s->batches; b++)
		json_double(js, NULL, s->us[b]);
	json_arr_end(js);
	json_arr_begin(js, "per_batch_ns");
	for (b = 0; b < s->batches; b++)
		json_u64(js, NULL, s->batch_ns[b]);
	json_arr_end(js);
	json_u64(js, "timer_overhead_ns", probe_timer_overhead_ns);
	json_rusage(js, "rusage", &s->ru0, &s->ru1);
}

static void batch_teardown(void *state)
{
	struct batch_state *s = state;

	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	free(s->buf);
	free(s->batch_ns);
	free(s->us);
	free(s->work);
	s->buf = NULL;
	s->batch_ns = NULL;
	s->us = s->work = NULL;
}

const struct probe_mode batch_mode = {
	.name = "batch",
	.summary = "libMicro-style usecs/call: time batches of B identical "
		   "write()/pwrite() calls (write_u1k, pwrite_u10k, ...)",
	.params = batch_params,
	.state = &batch_state,
	.parse = batch_parse,
	.setup = batch_setup,
	.run = batch_run,
	.report = batch_report,
	.teardown = batch_teardown,
};
