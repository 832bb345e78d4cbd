/* SPDX-License-Identifier: MIT */
/*
 * uring: asynchronous reads or writes through io_uring (liburing), up to
 * --iodepth in flight, submitted --submit-batch at a time, reaped after at
 * least --complete-batch have completed (fio's iodepth_batch_submit and
 * iodepth_batch_complete_min).
 *
 * Latency is submit -> completion per I/O: all SQEs of a batch share the
 * clock read taken just before io_uring_submit(), all CQEs reaped together
 * share the clock read taken right after they became visible.
 */
#include <errno.h>
#include <inttypes.h>
#include <liburing.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "hist.h"
#include "json.h"
#include "probe.h"
#include "target.h"

enum { URING_READ, URING_WRITE };
static const char *const uring_ops[] = { "read", "write", NULL };
static const char *const uring_patterns[] = { "seq", "rand", NULL };

#define URING_DEFAULT_OPS 50000
#define URING_MAX_DEPTH 4096

struct uring_slot {
	uint64_t t_submit;
	uint64_t off;
	void *buf;
};

struct uring_state {
	struct target tgt;
	int op, pattern;
	uint64_t bs, seed, ops, runtime_ns;
	uint64_t iodepth, submit_batch, complete_batch;
	uint32_t rwf;

	struct io_uring ring;
	bool ring_ok;
	struct uring_slot *slots;
	unsigned *free_slots, nfree;
	unsigned *batch_slots;
	struct io_uring_cqe **cqes;
	char *bufs;
	struct hist *hist;
	uint64_t nblocks, seq, rng;
	uint64_t done, elapsed_ns, submit_calls, wait_calls;
	struct rusage ru0, ru1;
	char flags[128];
	/* first failed I/O */
	int err;
	int64_t err_res;
	uint64_t err_off;
};

static struct uring_state uring_state;

static const struct probe_param uring_params[] = {
	{ .name = "op", .type = P_ENUM, .off = offsetof(struct uring_state, op),
	  .defval = "read", .choices = uring_ops,
	  .help = "IORING_OP_READ or IORING_OP_WRITE" },
	TARGET_PARAMS(struct uring_state, tgt),
	{ .name = "bs", .type = P_SIZE, .off = offsetof(struct uring_state, bs),
	  .defval = "4096", .min = 1, .help = "bytes per I/O" },
	{ .name = "pattern", .type = P_ENUM,
	  .off = offsetof(struct uring_state, pattern), .defval = "seq",
	  .choices = uring_patterns, .help = "seq or rand offsets" },
	{ .name = "seed", .type = P_COUNT,
	  .off = offsetof(struct uring_state, seed), .defval = "1",
	  .help = "seed of the random offsets" },
	{ .name = "iodepth", .type = P_COUNT,
	  .off = offsetof(struct uring_state, iodepth), .defval = "1",
	  .min = 1, .help = "I/Os in flight at most" },
	{ .name = "submit-batch", .type = P_COUNT,
	  .off = offsetof(struct uring_state, submit_batch), .defval = "1",
	  .min = 1, .help = "SQEs per io_uring_submit() (capped at iodepth)" },
	{ .name = "complete-batch", .type = P_COUNT,
	  .off = offsetof(struct uring_state, complete_batch), .defval = "1",
	  .min = 1, .help = "completions to wait for when the queue is full" },
	{ .name = "ops", .type = P_COUNT,
	  .off = offsetof(struct uring_state, ops), .min = 1,
	  .help = "I/Os to complete (default 50000, or unlimited with "
		  "--runtime)" },
	{ .name = "runtime", .type = P_DURATION,
	  .off = offsetof(struct uring_state, runtime_ns), .min = 1,
	  .help = "stop issuing after this long, then drain" },
	{ .name = "rwf", .type = P_RWF, .off = offsetof(struct uring_state, rwf),
	  .defval = "", .help = "RWF_* flags for sqe->rw_flags, e.g. dontcache" },
	PARAM_END
};

static int uring_parse(void *state, const char *key, const char *val)
{
	return params_set("uring", uring_params, state, key, val, NULL);
}

static int uring_setup(void *state)
{
	struct uring_state *s = state;
	size_t stride;
	unsigned i;
	int rc;

	target_init(&s->tgt);
	s->ring_ok = false;
	if (!s->tgt.path) {
		probe_err("uring: --file=PATH is required");
		return PROBE_EUSAGE;
	}
	if (s->iodepth > URING_MAX_DEPTH) {
		probe_err("uring: --iodepth=%" PRIu64 " is above %d",
			  s->iodepth, URING_MAX_DEPTH);
		return PROBE_EUSAGE;
	}
	if (s->submit_batch > s->iodepth)
		s->submit_batch = s->iodepth;
	if (s->complete_batch > s->iodepth)
		s->complete_batch = s->iodepth;
	if (s->ops == 0 && s->runtime_ns == 0)
		s->ops = URING_DEFAULT_OPS;
	if (s->bs > s->tgt.size) {
		probe_err("uring: --bs=%" PRIu64 " is larger than --file-size=%"
			  PRIu64, s->bs, s->tgt.size);
		return PROBE_EUSAGE;
	}
	s->tgt.write = s->op == URING_WRITE;
	rc = target_open(&s->tgt, "uring");
	if (rc)
		return rc;
	s->nblocks = s->tgt.size / s->bs;
	if (!s->nblocks) {
		probe_err("uring: --bs=%" PRIu64 " is larger than the %" PRIu64
			  "-byte device %s", s->bs, s->tgt.size, s->tgt.path);
		return PROBE_EUSAGE;
	}

	rc = io_uring_queue_init((unsigned)s->iodepth, &s->ring, 0);
	if (rc < 0) {
		probe_syserr("io_uring_queue_init", -rc, "entries %" PRIu64,
			     s->iodepth);
		if (rc == -EPERM || rc == -ENOSYS)
			probe_hint("io_uring may be disabled "
				   "(sysctl kernel.io_uring_disabled) or not "
				   "built into this kernel");
		return PROBE_ERUN;
	}
	s->ring_ok = true;

	stride = (size_t)s->bs;
	if (stride % 4096)
		stride += 4096 - stride % 4096;
	s->slots = calloc(s->iodepth, sizeof(*s->slots));
	s->free_slots = calloc(s->iodepth, sizeof(*s->free_slots));
	s->batch_slots = calloc(s->iodepth, sizeof(*s->batch_slots));
	s->cqes = calloc(s->iodepth, sizeof(*s->cqes));
	s->bufs = probe_buf_alloc(stride * s->iodepth, s->tgt.dio_mem_align);
	s->hist = malloc(sizeof(*s->hist));
	if (!s->slots || !s->free_slots || !s->batch_slots || !s->cqes ||
	    !s->bufs || !s->hist) {
		probe_syserr("malloc", ENOMEM, "%" PRIu64 " slots of %" PRIu64
			     " bytes", s->iodepth, s->bs);
		return PROBE_ERUN;
	}
	for (i = 0; i < s->iodepth; i++) {
		s->slots[i].buf = s->bufs + stride * i;
		probe_fill(s->slots[i].buf, s->bs, s->seed + i);
		s->free_slots[i] = i;
	}
	s->nfree = (unsigned)s->iodepth;
	hist_init(s->hist);
	s->rng = s->seed ? s->seed : 0x9E3779B97F4A7C15ull;
	s->seq = 0;
	s->err = 0;
	flags_describe(s->flags, sizeof(s->flags), s->tgt.oflags, s->rwf);
	return PROBE_OK;
}

/* queue n SQEs and submit them; they share one submit timestamp */
static int uring_submit(struct uring_state *s, unsigned n, uint64_t *now)
{
	const int fd = s->tgt.fd;
	const unsigned bs = (unsigned)s->bs;
	unsigned k;
	uint64_t t;
	int ret;

	for (k = 0; k < n; k++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&s->ring);
		unsigned idx = s->free_slots[--s->nfree];
		struct uring_slot *sl = &s->slots[idx];

		sl->off = next_block_offset(s->pattern, &s->seq, &s->rng, s->nblocks, s->bs);
		if (s->op == URING_READ)
			io_uring_prep_read(sqe, fd, sl->buf, bs, sl->off);
		else
			io_uring_prep_write(sqe, fd, sl->buf, bs, sl->off);
		sqe->rw_flags = (__kernel_rwf_t)s->rwf;
		io_uring_sqe_set_data64(sqe, idx);
		s->batch_slots[k] = idx;
	}
	t = probe_now();
	for (k = 0; k < n; k++)
		s->slots[s->batch_slots[k]].t_submit = t;
	do {
		ret = io_uring_submit(&s->ring);
	} while (ret == -EINTR);
	s->submit_calls++;
	if (ret < 0) {
		probe_syserr("io_uring_submit", -ret, "%u SQEs, flags %s, "
			     "file %s", n, s->flags, s->tgt.path);
		return PROBE_ERUN;
	}
	if ((unsigned)ret != n) {
		probe_err("io_uring_submit: submitted %d of %u SQEs (file %s)",
			  ret, n, s->tgt.path);
		return PROBE_ERUN;
	}
	*now = t;
	return PROBE_OK;
}

/* reap what is visible; wait for at least `want` first */
static int uring_reap(struct uring_state *s, unsigned want, unsigned *inflight,
		      uint64_t *now)
{
	struct io_uring_cqe *cqe;
	unsigned n, k;
	uint64_t t;
	int ret;

	if (want) {
		do {
			ret = io_uring_wait_cqe_nr(&s->ring, &cqe, want);
		} while (ret == -EINTR);
		s->wait_calls++;
		if (ret < 0) {
			probe_syserr("io_uring_wait_cqe_nr", -ret, "waiting for "
				     "%u of %u in flight", want, *inflight);
			return PROBE_ERUN;
		}
	}
	n = io_uring_peek_batch_cqe(&s->ring, s->cqes, *inflight);
	if (!n)
		return PROBE_OK;
	t = probe_now();
	for (k = 0; k < n; k++) {
		unsigned idx = (unsigned)io_uring_cqe_get_data64(s->cqes[k]);
		struct uring_slot *sl = &s->slots[idx];
		int res = s->cqes[k]->res;

		if (__builtin_expect(res != (int)s->bs, 0) && !s->err) {
			s->err = res < 0 ? -res : -1;
			s->err_res = res;
			s->err_off = sl->off;
		}
		hist_add(s->hist, t - sl->t_submit);
		s->free_slots[s->nfree++] = idx;
	}
	io_uring_cq_advance(&s->ring, n);
	*inflight -= n;
	s->done += n;
	*now = t;
	return PROBE_OK;
}

static int uring_run(void *state)
{
	struct uring_state *s = state;
	const uint64_t max_ops = s->ops ? s->ops : UINT64_MAX;
	const unsigned depth = (unsigned)s->iodepth;
	const unsigned sbatch = (unsigned)s->submit_batch;
	uint64_t issued = 0, t_start, deadline, now;
	unsigned inflight = 0;
	bool stop = false;
	int rc = PROBE_OK;

	getrusage(RUSAGE_SELF, &s->ru0);
	t_start = now = probe_now();
	deadline = s->runtime_ns ? t_start + s->runtime_ns : UINT64_MAX;

	while (inflight || (!stop && issued < max_ops)) {
		uint64_t left = max_ops - issued;
		unsigned room = depth - inflight;
		unsigned n = sbatch < room ? sbatch : room;
		bool can = !stop && left && room &&
			   (room >= sbatch || room >= left);

		if (left < n)
			n = (unsigned)left;
		if (can) {
			rc = uring_submit(s, n, &now);
			if (rc)
				break;
			issued += n;
			inflight += n;
			room -= n;
			left -= n;
			/* more room: submit again before blocking */
			can = left && room && (room >= sbatch || room >= left);
		}
		if (!inflight)
			continue;
		if (stop || !left || !can) {
			unsigned want = (unsigned)s->complete_batch;

			if (want > inflight)
				want = inflight;
			rc = uring_reap(s, want, &inflight, &now);
		} else {
			rc = uring_reap(s, 0, &inflight, &now);
		}
		if (rc)
			break;
		if (s->err || now >= deadline)
			stop = true;
	}
	s->elapsed_ns = probe_now() - t_start;
	getrusage(RUSAGE_SELF, &s->ru1);
	if (rc) {
		/* drain what the kernel still owns before the ring goes away */
		while (inflight && uring_reap(s, inflight, &inflight, &now) == 0)
			;
		return rc;
	}
	if (s->err) {
		const char *call = s->op == URING_READ ? "io_uring read" :
							  "io_uring write";

		if (s->err_res < 0) {
			probe_syserr(call, s->err, "offset %" PRIu64 ", len %"
				     PRIu64 ", flags %s, file %s", s->err_off,
				     s->bs, s->flags, s->tgt.path);
			probe_io_hint(s->err, s->tgt.oflags, s->rwf, s->err_off,
				      s->bs, s->tgt.dio_offset_align);
		} else {
			probe_err("%s: short %s: %" PRId64 " of %" PRIu64
				  " bytes (offset %" PRIu64 ", flags %s, file %s)",
				  call, s->op == URING_READ ? "read" : "write",
				  s->err_res, s->bs, s->err_off, s->flags,
				  s->tgt.path);
		}
		return PROBE_ERUN;
	}
	return PROBE_OK;
}

static void uring_report(void *state, struct json *js)
{
	struct uring_state *s = state;
	double secs = (double)s->elapsed_ns / 1e9;

	json_u64(js, "ops", s->done);
	json_u64(js, "bytes", s->done * s->bs);
	json_u64(js, "elapsed_ns", s->elapsed_ns);
	json_double(js, "iops", secs > 0 ? (double)s->done / secs : 0.0);
	json_double(js, "bw_bytes", secs > 0 ?
		    (double)(s->done * s->bs) / secs : 0.0);
	hist_report(s->hist, js, "lat_ns");
	json_u64(js, "submit_calls", s->submit_calls);
	json_u64(js, "wait_calls", s->wait_calls);
	json_u64(js, "timer_overhead_ns", probe_timer_overhead_ns);
	json_str(js, "io_flags", s->flags);
	target_report(&s->tgt, js);
	json_rusage(js, "rusage", &s->ru0, &s->ru1);
}

static void uring_teardown(void *state)
{
	struct uring_state *s = state;

	if (s->ring_ok)
		io_uring_queue_exit(&s->ring);
	s->ring_ok = false;
	target_close(&s->tgt);
	free(s->slots);
	free(s->free_slots);
	free(s->batch_slots);
	free(s->cqes);
	free(s->bufs);
	free(s->hist);
	s->slots = NULL;
	s->free_slots = s->batch_slots = NULL;
	s->cqes = NULL;
	s->bufs = NULL;
	s->hist = NULL;
}

const struct probe_mode uring_mode = {
	.name = "uring",
	.summary = "io_uring reads/writes at a queue depth: IOPS, bandwidth, "
		   "submit->completion latency histogram",
	.params = uring_params,
	.state = &uring_state,
	.parse = uring_parse,
	.setup = uring_setup,
	.run = uring_run,
	.report = uring_report,
	.teardown = uring_teardown,
};
