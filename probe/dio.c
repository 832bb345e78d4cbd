/* SPDX-License-Identifier: MIT */
/*
 * Direct-I/O alignment via statx(STATX_DIOALIGN) (Linux 6.1).  Kept apart
 * because glibc 2.36's struct statx lacks the stx_dio_* fields, so this file
 * uses the kernel's struct statx and the raw system call.
 */
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/stat.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "target.h"

int probe_dio_align(int fd, uint32_t *mem_align, uint32_t *offset_align)
{
	struct statx sx;
	int ssz;

	*mem_align = *offset_align = 0;
	if (syscall(SYS_statx, fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == 0 &&
	    (sx.stx_mask & STATX_DIOALIGN) && sx.stx_dio_offset_align) {
		*mem_align = sx.stx_dio_mem_align;
		*offset_align = sx.stx_dio_offset_align;
		return 0;
	}
	/* block devices on older kernels: the logical block size */
	if (ioctl(fd, BLKSSZGET, &ssz) == 0 && ssz > 0) {
		*mem_align = *offset_align = (uint32_t)ssz;
		return 0;
	}
	return -1;
}
