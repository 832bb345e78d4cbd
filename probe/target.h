/* SPDX-License-Identifier: MIT */
/*
 * The file (or block device) that lat and uring do their I/O on.
 *
 * A regular file is created if missing and extended to --file-size with
 * written, non-zero data (never holes), then fsync'ed: reads return data and
 * writes overwrite allocated blocks.  A file already at least that big is
 * used as it is.  A block device is never written during preparation; its
 * first --file-size bytes (at most the device size) are used.
 */
#ifndef IOLAB_TARGET_H
#define IOLAB_TARGET_H

#include <stdbool.h>
#include <stdint.h>

struct json;

struct target {
	/* in */
	const char *path;
	uint64_t size;
	bool write;
	bool direct, dsync, evict;
	/* out */
	int fd;
	int oflags;		/* O_DIRECT / O_DSYNC as opened */
	bool is_blkdev, created, extended;
	uint64_t prefill_bytes;
	uint32_t dio_mem_align, dio_offset_align;	/* 0: unknown */
};

/* the parameters every mode that uses a target shares */
#define TARGET_PARAMS(stype, member)					\
	{ .name = "file", .type = P_STR,				\
	  .off = offsetof(stype, member.path), .metavar = "PATH",	\
	  .help = "file or block device to do I/O on (required); a "	\
		  "missing or short file is created/extended with data" }, \
	{ .name = "file-size", .type = P_SIZE,				\
	  .off = offsetof(stype, member.size), .defval = "64M", .min = 1, \
	  .help = "bytes of the file to use" },				\
	{ .name = "direct", .type = P_BOOL,				\
	  .off = offsetof(stype, member.direct), .defval = "0",		\
	  .help = "open with O_DIRECT" },				\
	{ .name = "dsync", .type = P_BOOL,				\
	  .off = offsetof(stype, member.dsync), .defval = "0",		\
	  .help = "open with O_DSYNC" },				\
	{ .name = "evict", .type = P_BOOL,				\
	  .off = offsetof(stype, member.evict), .defval = "0",		\
	  .help = "before measuring, write back and drop the file's "	\
		  "page cache (fdatasync + POSIX_FADV_DONTNEED)" }

void target_init(struct target *t);
int target_open(struct target *t, const char *mode);
void target_close(struct target *t);
void target_report(const struct target *t, struct json *js);
void *probe_buf_alloc(uint64_t len, uint32_t align);
void probe_fill(void *buf, uint64_t len, uint64_t seed);

/* dio.c: STATX_DIOALIGN, 0 when unknown */
int probe_dio_align(int fd, uint32_t *mem_align, uint32_t *offset_align);

#endif
