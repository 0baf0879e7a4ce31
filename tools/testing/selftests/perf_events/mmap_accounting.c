// SPDX-License-Identifier: GPL-2.0
/*
 * What mapping a perf buffer charges, and that its unmapping gives all of
 * it back.
 *
 * perf_mmap() charges a buffer's pages to the mapping user's perf_mlock up
 * to perf_event_mlock_kb (times the online CPUs), the rest to the mm's
 * pinned_vm (VmPin in /proc/PID/status), which RLIMIT_MEMLOCK bounds for a
 * user without CAP_IPC_LOCK; the last munmap() of the buffer uncharges
 * what the first mmap() charged.  A second mmap() of a buffer already
 * mapped must charge nothing, or perf_mlock grows by the buffer's size at
 * every such map and unmap cycle, until the user's first mapping of a
 * buffer that fits the allowance is charged to VmPin, or refused (EPERM)
 * under RLIMIT_MEMLOCK.
 *
 * The cases run as a user of their own (perf_mlock is per user, and root's
 * may hold what others charged), at perf_event_paranoid 2 and a
 * perf_event_mlock_kb of their own, which they set as root and put back:
 * they skip without root.  A software event, so any machine runs them.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"

#define PARANOID	"/proc/sys/kernel/perf_event_paranoid"
#define MLOCK_KB	"/proc/sys/kernel/perf_event_mlock_kb"

/* A user nothing else runs as: its perf_mlock starts at 0. */
#define TEST_UID	61234

/* The buffer: the user page and 8 data pages. */
#define DATA_PAGES	8
#define BUF_PAGES	(1 + DATA_PAGES)

static long read_long(const char *path)
{
	char buf[32] = "";
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? strtol(buf, NULL, 10) : -1;
}

static int write_long(const char *path, long v)
{
	char buf[32];
	int fd = open(path, O_WRONLY), len, ret = 0;

	if (fd < 0)
		return -1;
	len = snprintf(buf, sizeof(buf), "%ld", v);
	if (write(fd, buf, len) != len)
		ret = -1;
	close(fd);
	return ret;
}

/* VmPin of this process, in pages; -1 if it cannot be read. */
static long vm_pin_pages(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[128];
	long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb < 0 ? -1 : kb / (sysconf(_SC_PAGESIZE) / 1024);
}

static int dummy_open(void)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
		.disabled = 1,
		.exclude_kernel = 1,
	};

	return syscall(__NR_perf_event_open, &attr, 0, -1, -1, 0);
}

/* What the unprivileged child saw, for the test to check. */
struct report {
	int setup_err;		/* errno of the child's set-up, 0 if none */
	char setup_what[64];
	int rounds;		/* map and unmap cycles done */
	int failed_round;	/* the round whose mmap() failed, or -1 */
	int failed_err;
	long vm_pin;		/* VmPin with one buffer mapped, at the end */
	int final_err;		/* errno of that mapping, 0 if it was made */
};

FIXTURE(acct) {
	long paranoid, mlock_kb;
	bool saved;			/* both read, to be put back */
	long psz, ncpu;
	struct report *r;
};

FIXTURE_VARIANT(acct) {
	/* RLIMIT_MEMLOCK 0: what perf_event_mlock_kb does not cover fails */
	bool memlock0;
};

FIXTURE_VARIANT_ADD(acct, memlock_0) { .memlock0 = true };
FIXTURE_VARIANT_ADD(acct, memlock_unlimited) { .memlock0 = false };

FIXTURE_SETUP(acct)
{
	self->r = MAP_FAILED;
	self->paranoid = read_long(PARANOID);
	self->mlock_kb = read_long(MLOCK_KB);
	self->psz = sysconf(_SC_PAGESIZE);
	self->ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (access(PARANOID, F_OK))
		SKIP(return, "no %s: no perf events", PARANOID);
	if (geteuid() != 0)
		SKIP(return, "needs root, to set %s and %s", PARANOID, MLOCK_KB);
	ASSERT_LE(0, self->mlock_kb);
	self->saved = true;
	/*
	 * Room for exactly one buffer per online CPU: the allowance is
	 * perf_event_mlock_kb in pages times the online CPUs.
	 */
	ASSERT_EQ(0, write_long(MLOCK_KB, BUF_PAGES * self->psz / 1024));
	/* The user may open events on its own tasks, within the limits. */
	ASSERT_EQ(0, write_long(PARANOID, 2));
	self->r = mmap(NULL, sizeof(*self->r), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->r);
}

FIXTURE_TEARDOWN(acct)
{
	if (self->r != MAP_FAILED)
		munmap(self->r, sizeof(*self->r));
	if (self->saved) {
		write_long(MLOCK_KB, self->mlock_kb);
		write_long(PARANOID, self->paranoid);
	}
}

static void child_fail(struct report *r, const char *what)
{
	r->setup_err = errno ? errno : EINVAL;
	snprintf(r->setup_what, sizeof(r->setup_what), "%s", what);
	_exit(1);
}

/*
 * As TEST_UID: rounds times, map the buffer of one event twice, then
 * unmap both; then map a buffer of another event once and read VmPin.
 * Each mapping fits the allowance alone, so on a kernel that charges
 * a buffer once none of them touches VmPin, under any RLIMIT_MEMLOCK.
 */
static void child(struct report *r, long psz, int rounds, bool memlock0)
{
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };
	size_t len = BUF_PAGES * psz;
	void *p, *q;
	int fd, i;

	if (memlock0) {
		rl.rlim_cur = 0;
		rl.rlim_max = 0;
	}
	/* Still root: the limit may be raised. */
	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		child_fail(r, "setrlimit");
	if (setgroups(0, NULL) || setgid(TEST_UID) || setuid(TEST_UID))
		child_fail(r, "setuid");
	fd = dummy_open();
	if (fd < 0)
		child_fail(r, "perf_event_open");
	r->failed_round = -1;
	for (i = 0; i < rounds; i++) {
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED) {
			r->failed_round = i;
			r->failed_err = errno;
			break;
		}
		/* The same buffer again, through the same event. */
		q = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (q == MAP_FAILED) {
			r->failed_round = i;
			r->failed_err = errno;
			munmap(p, len);
			break;
		}
		munmap(q, len);
		munmap(p, len);
		r->rounds++;
	}
	close(fd);
	fd = dummy_open();
	if (fd < 0)
		child_fail(r, "perf_event_open");
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		r->final_err = errno;
	} else {
		r->vm_pin = vm_pin_pages();
		munmap(p, len);
	}
	close(fd);
	_exit(0);
}

/*
 * Enough rounds to charge the allowance many times over if each second
 * mapping kept its charge: BUF_PAGES per round, against BUF_PAGES per
 * online CPU.
 */
TEST_F(acct, map_twice_unmap_cycles)
{
	int rounds = 2 * self->ncpu + 2, status;
	pid_t pid;

	memset(self->r, 0, sizeof(*self->r));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		child(self->r, self->psz, rounds, variant->memlock0);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	if (self->r->setup_err == EACCES || self->r->setup_err == EPERM)
		SKIP(return, "%s as uid %d: %s", self->r->setup_what, TEST_UID,
		     strerror(self->r->setup_err));
	ASSERT_EQ(0, self->r->setup_err)
		TH_LOG("%s: %s", self->r->setup_what, strerror(self->r->setup_err));
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	TH_LOG("%d of %d rounds of two mmap()s and two munmap()s of %d pages; "
	       "then one mapping: VmPin %ld pages, %s",
	       self->r->rounds, rounds, BUF_PAGES, self->r->vm_pin,
	       self->r->final_err ? strerror(self->r->final_err) : "mapped");
	EXPECT_EQ(-1, self->r->failed_round)
		TH_LOG("round %d: mmap(): %s: the earlier rounds' charges were not given back",
		       self->r->failed_round, strerror(self->r->failed_err));
	EXPECT_EQ(0, self->r->final_err)
		TH_LOG("a buffer within perf_event_mlock_kb: mmap(): %s",
		       strerror(self->r->final_err));
	EXPECT_EQ(0, self->r->vm_pin)
		TH_LOG("within the allowance, VmPin: perf_mlock kept earlier rounds' charges");
}

TEST_HARNESS_MAIN
