/* SPDX-License-Identifier: MIT */
/*
 * iolab-probe: the native micro-benchmark engine of iolab.
 *
 * Each mode is an ops table (struct probe_mode) in its own mode_<name>.c,
 * like a fio ioengine: main.c parses the command line, calls
 * <mode>_parse for each --key=value, then <mode>_setup, <mode>_run,
 * <mode>_report (which adds the mode's keys to the one JSON object on
 * stdout) and <mode>_teardown.
 *
 * Exit status: 0 ok, 1 runtime error, 2 usage error.  Every error is one
 * line on stderr naming the failing call, the errno text and the context.
 */
#ifndef IOLAB_PROBE_H
#define IOLAB_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <time.h>

#define PROBE_VERSION 1
#define PROBE_NAME "iolab-probe"

/* return codes of the ops, and the process exit status */
enum {
	PROBE_OK = 0,
	PROBE_ERUN = 1,		/* runtime error (a system call failed, ...) */
	PROBE_EUSAGE = 2,	/* bad command line */
	PROBE_EUNKNOWN = -1,	/* parse: this mode has no such parameter */
};

/* RWF_* flags for preadv2/pwritev2 and io_uring's sqe->rw_flags. */
#ifndef RWF_HIPRI
#define RWF_HIPRI 0x00000001
#endif
#ifndef RWF_DSYNC
#define RWF_DSYNC 0x00000002
#endif
#ifndef RWF_SYNC
#define RWF_SYNC 0x00000004
#endif
#ifndef RWF_NOWAIT
#define RWF_NOWAIT 0x00000008
#endif
#ifndef RWF_DONTCACHE
#define RWF_DONTCACHE 0x00000080	/* uncached buffered I/O, Linux 6.14 */
#endif

/* ---- parameters: one table per mode, used to parse, echo and --help ---- */

enum param_type {
	P_SIZE,		/* uint64_t bytes: 4096, 4k, 64M, 1GiB (powers of 1024) */
	P_COUNT,	/* uint64_t plain decimal integer */
	P_DURATION,	/* uint64_t nanoseconds: 10, 2.5, 10s, 500ms, 100us */
	P_BOOL,		/* bool: --flag, --flag=1|0|true|false|yes|no */
	P_STR,		/* const char *: points into argv */
	P_ENUM,		/* int: index into .choices */
	P_RWF,		/* uint32_t: comma list of RWF_* names */
};

struct probe_param {
	const char *name;		/* without the leading "--" */
	enum param_type type;
	size_t off;			/* offset of the field in the mode state */
	const char *defval;		/* default as text, NULL: unset */
	uint64_t min;			/* P_SIZE/P_COUNT/P_DURATION: minimum */
	const char *const *choices;	/* P_ENUM: NULL-terminated */
	const char *metavar;		/* --help: --name=METAVAR, optional */
	const char *help;
};

#define PARAM_END { .name = NULL }

/* ---- the ops table ---- */

struct json;

struct probe_mode {
	const char *name;
	const char *summary;
	const struct probe_param *params;
	void *state;
	/* one --key=value: PROBE_OK, PROBE_EUSAGE or PROBE_EUNKNOWN */
	int (*parse)(void *state, const char *key, const char *val);
	/* open files, allocate everything the timed loop needs */
	int (*setup)(void *state);
	/* the measurement; no allocation or printing inside timed loops */
	int (*run)(void *state);
	/* add the mode's keys to the output object */
	void (*report)(void *state, struct json *js);
	/* release everything; safe after a failed or partial setup */
	void (*teardown)(void *state);
};

extern const struct probe_mode lat_mode, batch_mode, uring_mode, churn_mode;

/* params.c */
int params_set(const char *mode, const struct probe_param *params, void *state,
	       const char *key, const char *val, int *index);
int params_defaults(const char *mode, const struct probe_param *params,
		    void *state);
void params_report(const struct probe_param *params, const void *state,
		   struct json *js);
void params_help(const struct probe_param *params, FILE *out);
void params_describe(const struct probe_param *params, struct json *js);
int parse_size(const char *s, uint64_t *out);
int parse_count(const char *s, uint64_t *out);
int parse_duration(const char *s, uint64_t *out_ns);
int parse_rwf(const char *s, uint32_t *out);
void rwf_describe(uint32_t rwf, char *buf, size_t len);

/* util.c: errors */
void probe_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void probe_hint(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void probe_syserr(const char *call, int err, const char *ctxfmt, ...)
	__attribute__((format(printf, 3, 4)));
const char *probe_errname(int err);
void flags_describe(char *buf, size_t len, int oflags, uint32_t rwf);
void probe_io_hint(int err, int oflags, uint32_t rwf, uint64_t off,
		   uint64_t len, uint32_t dio_offset_align);

/* util.c: time */
extern clockid_t probe_clock;
extern uint64_t probe_timer_overhead_ns;
static inline uint64_t probe_now(void)
{
	struct timespec ts;

	clock_gettime(probe_clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
uint64_t probe_measure_timer_overhead(void);

/* util.c: misc */
void json_rusage(struct json *js, const char *key, const struct rusage *r0,
		 const struct rusage *r1);
static inline uint64_t xorshift64s(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1Dull;
}
/*
 * Offset of the next block of a walk over nblocks blocks of bs bytes:
 * sequential (pattern 0, wrapping at the end) or uniformly random with
 * replacement (pattern 1, Lemire's multiply-shift of xorshift64*).
 */
static inline uint64_t next_block_offset(int pattern, uint64_t *seq, uint64_t *rng,
					 uint64_t nblocks, uint64_t bs)
{
	uint64_t blk;

	if (pattern == 0) {
		blk = *seq;
		if (++*seq == nblocks)
			*seq = 0;
	} else {
		blk = (uint64_t)(((unsigned __int128)xorshift64s(rng) * nblocks) >> 64);
	}
	return blk * bs;
}
int cmp_u64(const void *a, const void *b);
int cmp_double(const void *a, const void *b);

#endif
