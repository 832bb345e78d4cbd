/* SPDX-License-Identifier: MIT */
/*
 * lat: the latency of single synchronous reads or writes, one at a time.
 *
 * Each op is timed alone: t0 = clock, one pread/pwrite/preadv2/pwritev2,
 * t1 = clock, hist_add(t1 - t0).  The offset is computed before t0; nothing
 * else happens between the two clock reads.  Every timing includes the cost
 * of one clock read, reported as timer_overhead_ns (not subtracted).
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <unistd.h>

#include "hist.h"
#include "json.h"
#include "probe.h"
#include "target.h"

enum { LAT_PREAD, LAT_PWRITE, LAT_PREADV2, LAT_PWRITEV2 };
static const char *const lat_ops[] = { "pread", "pwrite", "preadv2",
				       "pwritev2", NULL };
static const char *const lat_patterns[] = { "seq", "rand", NULL };

#define LAT_DEFAULT_OPS 50000

struct lat_state {
	struct target tgt;
	int op;
	int pattern;
	uint64_t bs, seed, ops, runtime_ns, warmup_ops;
	uint32_t rwf;

	void *buf;
	struct hist *hist;
	uint64_t nblocks, seq, rng;
	uint64_t done, elapsed_ns;
	struct rusage ru0, ru1;
	char flags[128];
};

static struct lat_state lat_state;

static const struct probe_param lat_params[] = {
	{ .name = "op", .type = P_ENUM, .off = offsetof(struct lat_state, op),
	  .defval = "pread", .choices = lat_ops,
	  .help = "the call to time; *v2 take --rwf" },
	TARGET_PARAMS(struct lat_state, tgt),
	{ .name = "bs", .type = P_SIZE, .off = offsetof(struct lat_state, bs),
	  .defval = "4096", .min = 1, .help = "bytes per op" },
	{ .name = "pattern", .type = P_ENUM,
	  .off = offsetof(struct lat_state, pattern), .defval = "seq",
	  .choices = lat_patterns,
	  .help = "seq: consecutive blocks, wrapping at --file-size; rand: "
		  "uniform random block (xorshift64*)" },
	{ .name = "seed", .type = P_COUNT, .off = offsetof(struct lat_state, seed),
	  .defval = "1", .help = "seed of the random offsets" },
	{ .name = "ops", .type = P_COUNT, .off = offsetof(struct lat_state, ops),
	  .min = 1,
	  .help = "timed ops (default 50000, or unlimited with --runtime)" },
	{ .name = "runtime", .type = P_DURATION,
	  .off = offsetof(struct lat_state, runtime_ns), .min = 1,
	  .help = "stop after this long (with --ops: whichever comes first)" },
	{ .name = "warmup-ops", .type = P_COUNT,
	  .off = offsetof(struct lat_state, warmup_ops), .defval = "0",
	  .help = "untimed ops before the timed ones" },
	{ .name = "rwf", .type = P_RWF, .off = offsetof(struct lat_state, rwf),
	  .defval = "", .help = "RWF_* flags for preadv2/pwritev2: "
				"dontcache,nowait,hipri,dsync,sync" },
	PARAM_END
};

static int lat_parse(void *state, const char *key, const char *val)
{
	return params_set("lat", lat_params, state, key, val, NULL);
}

static int lat_setup(void *state)
{
	struct lat_state *s = state;
	bool v2 = s->op == LAT_PREADV2 || s->op == LAT_PWRITEV2;
	int rc;

	target_init(&s->tgt);
	if (!s->tgt.path) {
		probe_err("lat: --file=PATH is required");
		return PROBE_EUSAGE;
	}
	if (s->rwf && !v2) {
		probe_err("lat: --rwf needs --op=preadv2 or --op=pwritev2 "
			  "(got --op=%s)", lat_ops[s->op]);
		return PROBE_EUSAGE;
	}
	if (s->ops == 0 && s->runtime_ns == 0)
		s->ops = LAT_DEFAULT_OPS;
	if (s->bs > s->tgt.size) {
		probe_err("lat: --bs=%" PRIu64 " is larger than --file-size=%"
			  PRIu64, s->bs, s->tgt.size);
		return PROBE_EUSAGE;
	}
	s->tgt.write = s->op == LAT_PWRITE || s->op == LAT_PWRITEV2;
	rc = target_open(&s->tgt, "lat");
	if (rc)
		return rc;
	s->nblocks = s->tgt.size / s->bs;
	if (s->nblocks == 0) {
		probe_err("lat: --bs=%" PRIu64 " is larger than the %" PRIu64
			  "-byte device %s", s->bs, s->tgt.size, s->tgt.path);
		return PROBE_EUSAGE;
	}
	s->buf = probe_buf_alloc(s->bs, s->tgt.dio_mem_align);
	s->hist = malloc(sizeof(*s->hist));
	if (!s->buf || !s->hist) {
		probe_syserr("malloc", ENOMEM, "%" PRIu64 "-byte buffer and "
			     "histogram", s->bs);
		return PROBE_ERUN;
	}
	probe_fill(s->buf, s->bs, s->seed + 0x5eed);
	hist_init(s->hist);
	s->rng = s->seed ? s->seed : 0x9E3779B97F4A7C15ull;
	s->seq = 0;
	flags_describe(s->flags, sizeof(s->flags), s->tgt.oflags, s->rwf);
	return PROBE_OK;
}

static int lat_fail(struct lat_state *s, ssize_t r, int err, uint64_t off)
{
	static const char *const calls[] = { "pread", "pwrite", "preadv2",
					     "pwritev2" };
	const char *call = calls[s->op];

	if (r < 0) {
		probe_syserr(call, err, "offset %" PRIu64 ", len %" PRIu64
			     ", flags %s, file %s", off, s->bs, s->flags,
			     s->tgt.path);
		probe_io_hint(err, s->tgt.oflags, s->rwf, off, s->bs,
			      s->tgt.dio_offset_align);
	} else {
		probe_err("%s: short %s: %zd of %" PRIu64 " bytes (offset %"
			  PRIu64 ", flags %s, file %s)", call,
			  s->tgt.write ? "write" : "read", r, s->bs, off,
			  s->flags, s->tgt.path);
	}
	return PROBE_ERUN;
}

/*
 * The timed loop: n ops, or until deadline (checked against t1, so no extra
 * clock read).  record == false runs the warmup.
 */
static int lat_loop(struct lat_state *s, uint64_t n, bool record,
		    uint64_t deadline)
{
	const int fd = s->tgt.fd;
	const size_t bs = (size_t)s->bs;
	const int op = s->op;
	const int rwf = (int)s->rwf;
	struct iovec iov = { .iov_base = s->buf, .iov_len = bs };
	struct hist *h = s->hist;
	uint64_t i;

	for (i = 0; i < n; i++) {
		uint64_t off = next_block_offset(s->pattern, &s->seq, &s->rng, s->nblocks, s->bs), t0, t1;
		ssize_t r;

		t0 = probe_now();
		switch (op) {
		case LAT_PREAD:
			r = pread(fd, s->buf, bs, (off_t)off);
			break;
		case LAT_PWRITE:
			r = pwrite(fd, s->buf, bs, (off_t)off);
			break;
		case LAT_PREADV2:
			r = preadv2(fd, &iov, 1, (off_t)off, rwf);
			break;
		default:
			r = pwritev2(fd, &iov, 1, (off_t)off, rwf);
			break;
		}
		t1 = probe_now();
		if (__builtin_expect(r != (ssize_t)bs, 0))
			return lat_fail(s, r, errno, off);
		if (record) {
			hist_add(h, t1 - t0);
			if (t1 >= deadline) {
				i++;
				break;
			}
		}
	}
	if (record)
		s->done = i;
	return PROBE_OK;
}

static int lat_run(void *state)
{
	struct lat_state *s = state;
	uint64_t t_start, deadline, n;
	int rc;

	rc = lat_loop(s, s->warmup_ops, false, UINT64_MAX);
	if (rc)
		return rc;
	n = s->ops ? s->ops : UINT64_MAX;
	getrusage(RUSAGE_SELF, &s->ru0);
	t_start = probe_now();
	deadline = s->runtime_ns ? t_start + s->runtime_ns : UINT64_MAX;
	rc = lat_loop(s, n, true, deadline);
	s->elapsed_ns = probe_now() - t_start;
	getrusage(RUSAGE_SELF, &s->ru1);
	return rc;
}

static void lat_report(void *state, struct json *js)
{
	struct lat_state *s = state;

	json_u64(js, "ops", s->done);
	json_u64(js, "bytes", s->done * s->bs);
	json_u64(js, "elapsed_ns", s->elapsed_ns);
	json_double(js, "iops", s->elapsed_ns ?
		    (double)s->done * 1e9 / (double)s->elapsed_ns : 0.0);
	hist_report(s->hist, js, "lat_ns");
	json_u64(js, "timer_overhead_ns", probe_timer_overhead_ns);
	json_str(js, "io_flags", s->flags);
	target_report(&s->tgt, js);
	json_rusage(js, "rusage", &s->ru0, &s->ru1);
}

static void lat_teardown(void *state)
{
	struct lat_state *s = state;

	target_close(&s->tgt);
	free(s->buf);
	free(s->hist);
	s->buf = NULL;
	s->hist = NULL;
}

const struct probe_mode lat_mode = {
	.name = "lat",
	.summary = "latency of single synchronous reads/writes "
		   "(pread, pwrite, preadv2, pwritev2), one histogram",
	.params = lat_params,
	.state = &lat_state,
	.parse = lat_parse,
	.setup = lat_setup,
	.run = lat_run,
	.report = lat_report,
	.teardown = lat_teardown,
};
