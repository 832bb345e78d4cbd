/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json.h"
#include "probe.h"
#include "target.h"

#define PREFILL_CHUNK (1u << 20)

/* reset the outputs; the inputs were set by the parameters */
void target_init(struct target *t)
{
	t->fd = -1;
	t->oflags = 0;
	t->is_blkdev = t->created = t->extended = false;
	t->prefill_bytes = 0;
	t->dio_mem_align = t->dio_offset_align = 0;
}

/* non-zero bytes that differ along the buffer */
void probe_fill(void *buf, uint64_t len, uint64_t seed)
{
	unsigned char *p = buf;
	uint64_t s = seed | 1, i;

	for (i = 0; i < len; i++) {
		if ((i & 7) == 0)
			(void)xorshift64s(&s);
		p[i] = (unsigned char)((s >> ((i & 7) * 8)) | 1);
	}
}

void *probe_buf_alloc(uint64_t len, uint32_t align)
{
	void *p = NULL;
	size_t a = align > 4096 ? align : 4096;

	if (len == 0)
		len = 1;
	if (posix_memalign(&p, a, (size_t)len))
		return NULL;
	return p;
}

static int write_all(int fd, const void *buf, size_t len, uint64_t off)
{
	const char *p = buf;

	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * Create or extend a regular file to t->size with written data. A file that
 * is already long enough on a read-only filesystem (erofs, whose image
 * carries the file) is opened read-only: nothing of it can be dirty, so
 * --evict only drops its cached pages.
 */
static int target_prefill(struct target *t, const char *mode, bool exists,
			  uint64_t size)
{
	bool readonly = false;
	struct stat st;
	uint64_t off;
	void *buf;
	int fd;

	fd = open(t->path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 && errno == EROFS && exists && size >= t->size) {
		readonly = true;
		fd = open(t->path, O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0) {
		probe_syserr("open", errno, "path %s, flags %s, preparing the "
			     "%s file", t->path,
			     readonly ? "O_RDONLY" : "O_RDWR|O_CREAT", mode);
		return PROBE_ERUN;
	}
	if (fstat(fd, &st)) {
		probe_syserr("fstat", errno, "path %s", t->path);
		close(fd);
		return PROBE_ERUN;
	}
	t->created = !exists;
	off = (uint64_t)st.st_size;
	if (off < t->size) {
		buf = malloc(PREFILL_CHUNK);
		if (!buf) {
			probe_syserr("malloc", ENOMEM, "%u bytes", PREFILL_CHUNK);
			close(fd);
			return PROBE_ERUN;
		}
		t->extended = exists;
		while (off < t->size) {
			uint64_t n = t->size - off;

			if (n > PREFILL_CHUNK)
				n = PREFILL_CHUNK;
			probe_fill(buf, n, off + 1);
			if (write_all(fd, buf, (size_t)n, off)) {
				probe_syserr("pwrite", errno, "path %s, offset "
					     "%" PRIu64 ", len %" PRIu64
					     ", filling the file to --file-size="
					     "%" PRIu64, t->path, off, n,
					     t->size);
				free(buf);
				close(fd);
				return PROBE_ERUN;
			}
			off += n;
			t->prefill_bytes += n;
		}
		free(buf);
		if (fsync(fd)) {
			probe_syserr("fsync", errno, "path %s", t->path);
			close(fd);
			return PROBE_ERUN;
		}
	}
	if (t->evict) {
		if (!readonly && fdatasync(fd)) {
			probe_syserr("fdatasync", errno, "path %s", t->path);
			close(fd);
			return PROBE_ERUN;
		}
		errno = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		if (errno) {
			probe_syserr("posix_fadvise", errno, "path %s, "
				     "POSIX_FADV_DONTNEED for --evict", t->path);
			close(fd);
			return PROBE_ERUN;
		}
	}
	close(fd);
	return PROBE_OK;
}

int target_open(struct target *t, const char *mode)
{
	struct stat st;
	bool exists = true;
	char fl[128];
	int acc = t->write ? O_RDWR : O_RDONLY;

	if (stat(t->path, &st)) {
		if (errno != ENOENT) {
			probe_syserr("stat", errno, "path %s", t->path);
			return PROBE_ERUN;
		}
		exists = false;
	}

	if (exists && S_ISBLK(st.st_mode)) {
		uint64_t devsize = 0;
		int fd = open(t->path, O_RDONLY | O_CLOEXEC);

		if (fd < 0) {
			probe_syserr("open", errno, "path %s, flags O_RDONLY",
				     t->path);
			return PROBE_ERUN;
		}
		if (ioctl(fd, BLKGETSIZE64, &devsize)) {
			probe_syserr("ioctl", errno, "BLKGETSIZE64 on %s",
				     t->path);
			close(fd);
			return PROBE_ERUN;
		}
		if (t->evict && posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)) {
			probe_syserr("posix_fadvise", errno, "path %s", t->path);
			close(fd);
			return PROBE_ERUN;
		}
		close(fd);
		t->is_blkdev = true;
		if (devsize < t->size)
			t->size = devsize;
	} else if (!exists || S_ISREG(st.st_mode)) {
		int rc = target_prefill(t, mode, exists,
					exists ? (uint64_t)st.st_size : 0);

		if (rc)
			return rc;
	} else {
		probe_err("%s: --file=%s is neither a regular file nor a block "
			  "device", mode, t->path);
		return PROBE_EUSAGE;
	}

	t->oflags = (t->direct ? O_DIRECT : 0) | (t->dsync ? O_DSYNC : 0);
	t->fd = open(t->path, acc | t->oflags | O_CLOEXEC);
	if (t->fd < 0) {
		int err = errno;

		flags_describe(fl, sizeof(fl), t->oflags, 0);
		probe_syserr("open", err, "path %s, flags %s|%s", t->path,
			     t->write ? "O_RDWR" : "O_RDONLY", fl);
		if (t->direct && (err == EINVAL || err == EOPNOTSUPP))
			probe_hint("the filesystem of %s refuses O_DIRECT "
				   "(--direct)", t->path);
		return PROBE_ERUN;
	}
	(void)probe_dio_align(t->fd, &t->dio_mem_align, &t->dio_offset_align);
	return PROBE_OK;
}

void target_close(struct target *t)
{
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
}

void target_report(const struct target *t, struct json *js)
{
	char fl[128];

	flags_describe(fl, sizeof(fl), t->oflags, 0);
	json_obj_begin(js, "target");
	json_str(js, "path", t->path);
	json_str(js, "kind", t->is_blkdev ? "blockdev" : "file");
	json_u64(js, "size", t->size);
	json_bool(js, "created", t->created);
	json_bool(js, "extended", t->extended);
	json_u64(js, "prefill_bytes", t->prefill_bytes);
	json_str(js, "open_flags", fl);
	json_u64(js, "dio_mem_align", t->dio_mem_align);
	json_u64(js, "dio_offset_align", t->dio_offset_align);
	json_obj_end(js);
}
