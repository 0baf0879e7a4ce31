/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the programs of the test modules (tests/modules/<name>/) share.
 */
#ifndef MODTEST_H
#define MODTEST_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Where the initramfs has the modules built for the booted kernel. */
#define MODTEST_DIR	"/tests/modules/"

/*
 * Load MODTEST_DIR/@name.ko; on failure print a TAP "Bail out!" saying
 * why and return -1.
 */
static inline int modtest_load(const char *name)
{
	char path[256];
	int fd, ret;

	snprintf(path, sizeof(path), MODTEST_DIR "%s.ko", name);
	fd = open(path, O_RDONLY);
	ret = fd < 0 ? -1 : syscall(SYS_finit_module, fd, "", 0);
	if (ret) {
		printf("Bail out! cannot load %s: %s\n", path, strerror(errno));
		ret = -1;
	}
	if (fd >= 0)
		close(fd);
	return ret;
}

#endif /* MODTEST_H */
