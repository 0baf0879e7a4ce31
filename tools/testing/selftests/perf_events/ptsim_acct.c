// SPDX-License-Identifier: GPL-2.0
/*
 * Accounting and fault injection for the robustness tests (ptsim_acct.h).
 */
#include "ptsim_leak.h"
#include <grp.h>

long read_long(const char *path)
{
	long long v;

	return auxc_read_ll(path, &v) ? -1 : v;
}

int write_str(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	if (n < 0)
		n = -errno;
	close(fd);
	return n < 0 ? (int)n : 0;
}

int write_long(const char *path, long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld", v);
	return write_str(path, buf);
}

/* A "Name:   <n> kB" field of /proc/self/status, in kB; NO_VALUE if absent. */
long status_kb(const char *name)
{
	size_t len = strlen(name);
	char line[256];
	long v = NO_VALUE;
	FILE *f;

	f = fopen("/proc/self/status", "r");
	if (!f)
		return NO_VALUE;
	/*
	 * Unsigned in the file: pinned_vm goes below zero in a process that
	 * unmaps the last mapping of a buffer another process charged.
	 */
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, len) && line[len] == ':') {
			v = (long)strtoull(line + len + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/*
 * Pages pinned by this process (mm->pinned_vm).  May be negative: 6.12
 * charges a buffer to the mm that maps it first and uncharges it from the
 * mm that unmaps it last, which may be another process's.
 */
long vm_pin_pages(void)
{
	long kb = status_kb("VmPin");

	return kb == NO_VALUE ? NO_VALUE : kb / (sysconf(_SC_PAGESIZE) / 1024);
}

long meminfo_kb(const char *name)
{
	size_t len = strlen(name);
	char line[256];
	long v = -1;
	FILE *f;

	f = fopen("/proc/meminfo", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, len) && line[len] == ':') {
			v = strtol(line + len + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

long count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	long n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;	/* the directory's own descriptor */
}

long count_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	long n = 0;
	int c;

	if (!f)
		return -1;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

/* Perf buffer mappings of this process (anon_inode:[perf_event]). */
long count_perf_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	long n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += !!strstr(line, "[perf_event]");
	fclose(f);
	return n;
}

int dummy_open(void)
{
	return dummy_open_on(0, -1);
}

/*
 * The calling user's perf_mlock, in pages, measured as described at the
 * top of this file; -1 if it cannot be measured (no root, or the probe
 * buffer could not be mapped).  Sets perf_event_mlock_kb for the duration
 * and puts it back: call it only while nothing else maps perf buffers.
 */
long perf_mlock_probe(void)
{
	long psz = sysconf(_SC_PAGESIZE), ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	long old = read_long(MLOCK_SYSCTL), limit, n = 1, before, after;
	void *p;
	int fd;

	if (old < 0 || write_long(MLOCK_SYSCTL, 1024))
		return -1;
	/* perf's allowance: perf_event_mlock_kb in pages, per online CPU */
	limit = (1024 / (psz / 1024)) * ncpu;
	while (n < limit)
		n *= 2;
	fd = dummy_open();
	if (fd < 0) {
		write_long(MLOCK_SYSCTL, old);
		return -1;
	}
	before = vm_pin_pages();
	p = mmap(NULL, (1 + n) * psz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	after = vm_pin_pages();
	if (p != MAP_FAILED)
		munmap(p, (1 + n) * psz);
	close(fd);
	write_long(MLOCK_SYSCTL, old);
	if (p == MAP_FAILED || before == NO_VALUE || after == NO_VALUE)
		return -1;
	return after - before - (1 + n - limit);
}

/*
 * ptsim's AUX buffers alive: its setup_aux calls less its free_aux calls
 * (debugfs, root only; -1 if it cannot be read).  The first line of the
 * leak check: a leaked reference that keeps an AUX area alive keeps its
 * buffer, however few pages it has, where free memory (the second line)
 * only shows leaks larger than its slack.  System-wide, so it is exact
 * only while no other program maps a ptsim AUX area (the guest runs one
 * suite at a time).
 */
long ptsim_aux_bufs(void)
{
	long setup, freed;

	if (ptsim_debugfs_missing())
		return -1;
	setup = read_long(PTSIM_DEBUGFS "/setup_aux_calls");
	freed = read_long(PTSIM_DEBUGFS "/free_aux_calls");

	return setup < 0 || freed < 0 ? -1 : setup - freed;
}

/*
 * ptsim events alive (debugfs ptsim/events, root only; -1 if it cannot be
 * read): a leaked reference on an event keeps it, its PMU state and
 * whatever else it holds, and no count a process has shows that.
 * System-wide, as ptsim_aux_bufs().
 */
long ptsim_events(void)
{
	return ptsim_debugfs_missing() ? -1 : read_long(PTSIM_DEBUGFS "/events");
}

/*
 * Free memory, plus memory that is in use by design and is not a perf
 * buffer's pages: what the test itself holds (its anonymous memory, as
 * ptsim_fuzz keeps a long phase's results to compare the next phase
 * with, and tmpfs, where its trace file is) and the slab caches (which
 * on the debug kernel include KASAN's quarantine of freed objects, up
 * to 1/32 of memory).  A 260000-operation fuzzer phase moves these by
 * about 55 MB.  What is left is pages taken from the page allocator
 * outside slab and not ours: the data and AUX pages of a leaked buffer.
 */
long mem_free_or_ours_kb(void)
{
	long free_kb = meminfo_kb("MemFree");
	long shmem_kb = meminfo_kb("Shmem");
	long slab_kb = meminfo_kb("Slab");
	long anon_kb = status_kb("RssAnon");

	if (free_kb < 0 || shmem_kb < 0 || slab_kb < 0 || anon_kb == NO_VALUE)
		return free_kb;
	return free_kb + shmem_kb + slab_kb + anon_kb;
}

void acct_take(struct acct *a, bool probe)
{
	a->vm_pin = vm_pin_pages();
	a->perf_mlock = probe ? perf_mlock_probe() : -1;
	a->fds = count_fds();
	a->maps = count_maps();
	a->perf_maps = count_perf_maps();
	a->mem_free_kb = mem_free_or_ours_kb();
	a->aux_bufs = ptsim_aux_bufs();
	a->events = ptsim_events();
}

/*
 * Compare @now with @base; describe every difference in @why (may be
 * NULL) and return how many there are.  Memory that perf frees after an
 * RCU grace period or from a work item can lag behind munmap() and
 * close(): acct_settle() waits for that before it gives up.
 */
int acct_diff(const struct acct *base, const struct acct *now,
	      char *why, size_t len)
{
	const struct {
		const char *name;
		long was, is;
		bool leaked;
	} f[] = {
		{ "vm_pin", base->vm_pin, now->vm_pin, now->vm_pin != base->vm_pin },
		{ "perf_mlock", base->perf_mlock, now->perf_mlock,
		  base->perf_mlock >= 0 && now->perf_mlock != base->perf_mlock },
		{ "fds", base->fds, now->fds, now->fds != base->fds },
		{ "maps", base->maps, now->maps,
		  base->maps >= 0 && now->maps != base->maps },
		{ "perf_maps", base->perf_maps, now->perf_maps,
		  now->perf_maps != base->perf_maps },
		{ "ptsim_aux_bufs", base->aux_bufs, now->aux_bufs,
		  base->aux_bufs >= 0 && now->aux_bufs != base->aux_bufs },
		{ "ptsim_events", base->events, now->events,
		  base->events >= 0 && now->events != base->events },
		{ "mem_free_kb", base->mem_free_kb, now->mem_free_kb,
		  now->mem_free_kb + MEMFREE_SLACK_KB < base->mem_free_kb },
	};
	size_t i, w = 0;
	int n = 0;

	if (why && len)
		why[0] = 0;
	for (i = 0; i < ARRAY_SIZE(f); i++) {
		if (!f[i].leaked)
			continue;
		n++;
		if (why && w < len)
			w += snprintf(why + w, len - w, "%s%s %ld -> %ld",
				      w ? ", " : "", f[i].name, f[i].was, f[i].is);
	}
	return n;
}

int acct_settle(const struct acct *base, struct acct *now,
		char *why, size_t len)
{
	int i, n = 0;

	for (i = 0; i < 20; i++) {
		acct_take(now, base->perf_mlock >= 0);
		if (base->maps < 0)
			now->maps = -1;
		n = acct_diff(base, now, why, len);
		if (!n)
			break;
		usleep(50000);
	}
	return n;
}

/* ---- privileges ---- */

/* Drop one capability from this process's effective and permitted sets. */
int cap_drop(int cap)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	if (syscall(SYS_capget, &h, d))
		return -errno;
	d[CAP_TO_INDEX(cap)].effective &= ~CAP_TO_MASK(cap);
	d[CAP_TO_INDEX(cap)].permitted &= ~CAP_TO_MASK(cap);
	d[CAP_TO_INDEX(cap)].inheritable &= ~CAP_TO_MASK(cap);
	return syscall(SYS_capset, &h, d) ? -errno : 0;
}

int set_memlock(rlim_t bytes)
{
	struct rlimit r = { bytes, bytes };

	return setrlimit(RLIMIT_MEMLOCK, &r) ? -errno : 0;
}

/*
 * Become user and group @uid (NOBODY_UID: nobody), with no supplementary
 * groups and no capabilities: a user of the machine without privileges.
 * Root only.  It clears the parent-death signal (die_with() again after
 * it) and makes the process undumpable.  0 or -errno.
 */
int become_user(uid_t uid)
{
	if (setgroups(0, NULL) || setgid(uid) || setuid(uid))
		return -errno;
	return 0;
}

/* ---- fault injection ---- */

static const char * const fi_attrs[] = {
	"failslab", "fail_page_alloc", "fail_usercopy",
};

int fi_knob(const char *attr, const char *knob, const char *val)
{
	char path[256];

	snprintf(path, sizeof(path), DEBUGFS_ROOT "/%s/%s", attr, knob);
	return write_str(path, val);
}

long fi_read(const char *attr, const char *knob)
{
	char path[256];

	snprintf(path, sizeof(path), DEBUGFS_ROOT "/%s/%s", attr, knob);
	return read_long(path);
}

bool fi_available(void)
{
	char path[256];
	unsigned int i;

	if (debugfs_missing())
		return false;
	for (i = 0; i < ARRAY_SIZE(fi_attrs); i++) {
		snprintf(path, sizeof(path), DEBUGFS_ROOT "/%s/probability", fi_attrs[i]);
		if (access(path, W_OK))
			return false;
	}
	return !access("/proc/thread-self/fail-nth", W_OK) &&
	       !access("/proc/thread-self/make-it-fail", W_OK);
}

/*
 * Configure the three fault attributes: silent (verbose=0), limited to
 * tasks with make-it-fail set, every allocation eligible (also those that
 * may sleep, order 0 and highmem).  probability in percent (0: only
 * fail-nth fires), times: the budget of failures.
 */
int fi_setup(int probability, int interval, long times)
{
	char buf[32];
	unsigned int i;
	int err = 0;

	for (i = 0; i < ARRAY_SIZE(fi_attrs); i++) {
		const char *a = fi_attrs[i];

		err |= fi_knob(a, "verbose", "0");
		err |= fi_knob(a, "task-filter", "Y");
		err |= fi_knob(a, "space", "0");
		snprintf(buf, sizeof(buf), "%d", interval);
		err |= fi_knob(a, "interval", buf);
		snprintf(buf, sizeof(buf), "%ld", times);
		err |= fi_knob(a, "times", buf);
		snprintf(buf, sizeof(buf), "%d", probability);
		err |= fi_knob(a, "probability", buf);
	}
	err |= fi_knob("failslab", "ignore-gfp-wait", "N");
	err |= fi_knob("fail_page_alloc", "ignore-gfp-wait", "N");
	err |= fi_knob("fail_page_alloc", "ignore-gfp-highmem", "N");
	err |= fi_knob("fail_page_alloc", "min-order", "0");
	return err ? -1 : 0;
}

void fi_off(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fi_attrs); i++)
		fi_knob(fi_attrs[i], "probability", "0");
}

/* Failures injected since fi_setup(.., times): the budget used up. */
long fi_fired(long times)
{
	unsigned int i;
	long n = 0;

	for (i = 0; i < ARRAY_SIZE(fi_attrs); i++)
		n += times - fi_read(fi_attrs[i], "times");
	return n;
}

/* make-it-fail of the calling thread; fd from fi_task_open(). */
int fi_task_open(void)
{
	return open("/proc/thread-self/make-it-fail", O_WRONLY);
}

void fi_task(int fd, bool on)
{
	int i;

	/*
	 * Turning it off copies from user space, which fail_usercopy may
	 * fail while it is on: retry (the budget of failures is finite).
	 */
	for (i = 0; i < 10000; i++)
		if (pwrite(fd, on ? "1" : "0", 1, 0) == 1)
			return;
}

int fi_nth_open(void)
{
	return open("/proc/thread-self/fail-nth", O_RDWR);
}

/*
 * Make the nth allocation or user copy from now on fail.  Writing the
 * number copies it from user space before it takes effect, so the write
 * does not count itself.
 */
int fi_nth_arm(int fd, unsigned int nth)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", nth);

	return pwrite(fd, buf, len, 0) == len ? 0 : -1;
}

/*
 * Did the armed failure fire (in the system call since fi_nth_arm())?
 * Disarms.  The read counts as one more failure point: if it is the
 * one, it fails with EFAULT, which means the call under test did not
 * reach it.  Disarming by writing 0 may likewise be the one.
 */
bool fi_nth_fired(int fd)
{
	char buf[16] = "";
	bool fired;

	fired = pread(fd, buf, sizeof(buf) - 1, 0) > 0 &&
		strtoul(buf, NULL, 10) == 0;
	if (pwrite(fd, "0", 1, 0) != 1)
		pwrite(fd, "0", 1, 0);
	return fired;
}
