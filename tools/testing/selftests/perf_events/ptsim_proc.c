// SPDX-License-Identifier: GPL-2.0
/*
 * Processes and CPUs for the tests (ptsim_proc.h).
 */
#include "ptsim_lib.h"

double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/*
 * Spin in user space for ms milliseconds, or until killed if ms < 0 (for
 * a test that stops the child once it has seen what it waits for, so
 * that a starved guest makes it slower, never wrong).
 */
void burn(int ms)
{
	double end = now_ms() + ms;

	/* clock_gettime() is a vDSO call: this stays in user space. */
	while (ms < 0 || now_ms() < end)
		;
}

/* Pin task pid (0: the caller) to one CPU. */
int pin_task(pid_t pid, int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(pid, sizeof(set), &set);
}

int pin_to(int cpu)
{
	return pin_task(0, cpu);
}

/*
 * The CPU a test pins its task to when any will do: the highest-numbered
 * one the caller may run on that is online (its sysfs online file says
 * 1, or it has none, as CPU 0 often has not).  The highest rather than
 * the first, as CPU 0 usually takes the timer and device interrupts.
 * -1 if there is none.
 */
int last_allowed_cpu(void)
{
	char path[64];
	cpu_set_t set;
	long long on;
	int cpu;

	if (sched_getaffinity(0, sizeof(set), &set))
		return -1;
	for (cpu = CPU_SETSIZE - 1; cpu >= 0; cpu--) {
		if (!CPU_ISSET(cpu, &set))
			continue;
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%d/online", cpu);
		if (access(path, F_OK) || (!auxc_read_ll(path, &on) && on == 1))
			return cpu;
	}
	return -1;
}

/*
 * The CPUs the tests use: those the kernel reports online
 * (/sys/devices/system/cpu/online) that the program may run on
 * (sched_getaffinity()), in ascending order, as they were when it
 * started: a case that takes one offline, or pins itself, still finds
 * the same CPUs by index.  Their ids may be sparse: a CI machine can
 * have CPUs offline, or a cpuset that leaves some out.
 */
static int online_ids[CPU_SETSIZE];
static int online_n = -1;

static void online_scan(void)
{
	int a, b, n = 0, cpu;
	cpu_set_t allowed;
	bool have_affinity;
	char buf[4096], *p, *end;
	ssize_t len;
	int fd;

	have_affinity = !sched_getaffinity(0, sizeof(allowed), &allowed);
	fd = open("/sys/devices/system/cpu/online", O_RDONLY);
	len = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (len <= 0) {
		/* No sysfs: the CPUs we may run on are online ones. */
		for (cpu = 0; have_affinity && cpu < CPU_SETSIZE; cpu++)
			if (CPU_ISSET(cpu, &allowed))
				online_ids[n++] = cpu;
		online_n = n;
		return;
	}
	buf[len] = 0;
	/* A list of ranges: "0,2-5,7". */
	for (p = buf; *p && *p != '\n'; p = end + (*end == ',')) {
		a = strtol(p, &end, 10);
		if (end == p)
			break;
		b = a;
		if (*end == '-') {
			p = end + 1;
			b = strtol(p, &end, 10);
			if (end == p)
				break;
		}
		for (cpu = a; cpu <= b && cpu < CPU_SETSIZE; cpu++)
			if (!have_affinity || CPU_ISSET(cpu, &allowed))
				online_ids[n++] = cpu;
	}
	online_n = n;
}

__attribute__((constructor)) static void online_init(void)
{
	online_scan();
}

/* How many CPUs the tests may use (online and allowed). */
int cpus_online(void)
{
	if (online_n < 0)
		online_scan();
	return online_n;
}

/*
 * online_cpu() - The @n-th (from 0) CPU the tests may use
 *
 * Return: its id, or -1 if there are not that many.  online_cpu(0) and
 * online_cpu(1) are the "first" and "second" CPU of a case that needs one
 * or two, whatever their ids.
 */
int online_cpu(int n)
{
	return n >= 0 && n < cpus_online() ? online_ids[n] : -1;
}

/*
 * The CPU a hotplug case takes offline and brings back: the second one
 * the tests use (online_cpu(1)), if root may take it offline here; -1
 * if not (one CPU, not root, or no CPU hotplug).
 */
int hotplug_cpu(void)
{
	int cpu = online_cpu(1);
	char path[64];

	if (cpu < 0)
		return -1;
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	return access(path, W_OK) ? -1 : cpu;
}

/*
 * The count of interrupt @name (such as "NMI") on @cpu in
 * /proc/interrupts, whose columns are the online CPUs its header line
 * names; -1 if the line or the CPU's column is not there.
 */
long irq_count_on(const char *name, int cpu)
{
	FILE *f = fopen("/proc/interrupts", "r");
	size_t cap = 0, len = strlen(name);
	char *line = NULL, *p, *end;
	int col = -1, i, c, n;
	long v = -1, count;

	if (!f)
		return -1;
	if (getline(&line, &cap, f) > 0)
		for (i = 0, p = line; sscanf(p, " CPU%d%n", &c, &n) == 1;
		     i++, p += n)
			if (c == cpu)
				col = i;
	while (col >= 0 && getline(&line, &cap, f) > 0) {
		p = line + strspn(line, " ");
		if (strncmp(p, name, len) || p[len] != ':')
			continue;
		for (p += len + 1, i = 0; i <= col; i++, p = end) {
			count = strtol(p, &end, 10);
			if (end == p)
				break;
			if (i == col)
				v = count;
		}
		break;
	}
	free(line);
	fclose(f);
	return v;
}

/* Whether hotplug_cpu() can be taken offline here. */
bool cpu_hotplug_possible(void)
{
	return hotplug_cpu() >= 0;
}

/* Take a CPU offline (on == 0) or bring it back: 0 or an errno. */
int cpu_set_online(int cpu, int on)
{
	char path[64];
	int fd, err = 0;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return errno;
	if (write(fd, on ? "1" : "0", 1) != 1)
		err = errno;
	close(fd);
	return err;
}

/*
 * A disabled dummy event of @pid on @cpu, which never counts or samples:
 * an anchor (below), the owner of a buffer that other events share with
 * PERF_EVENT_IOC_SET_OUTPUT, as a tool has one (its data area mapped, the
 * AUX area through a ptsim event redirected to it: capture_map_shared()),
 * or an event just to map (ptsim_leak.h's dummy_open()).
 */
int dummy_open_on(pid_t pid, int cpu)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
		.disabled = 1,
		.exclude_kernel = 1,
	};

	return perf_open(&attr, pid, cpu, -1);
}

/*
 * Keep the children on their inherited copies of the events.  When every
 * event of a task's perf context is inherited, a child's context is a
 * clone of its parent's, and at a context switch between the two on one
 * CPU the core may swap the contexts (context_equiv()): the parent's own
 * events, with their buffer, then run in the child, and a child that
 * does what only the parent's events could do proves nothing.  A child
 * forked or created here starts on the test's CPU, so that swap happens
 * often.  A disabled software event that is not inherited makes the
 * child's context never a clone (see ptsim_fuzz's fz_anchor()).
 */
int anchor_open(void)
{
	return dummy_open_on(0, -1);
}

/*
 * In a child: die with the test, which may end on an assertion before it
 * stops the child.  A child left spinning would hold copies of the
 * test's perf fds (and with them its events) and a CPU, and fail the
 * tests after it.  @parent: the test's pid, taken before fork().
 */
int die_with(pid_t parent)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL))
		return -1;
	return getppid() == parent ? 0 : -1;
}

/*
 * Fork a child that waits for a byte on a pipe, then burns ms of CPU
 * (pinned to cpu if >= 0) and exits; with ms < 0 it burns until killed
 * (see stop_burner()).  *go is the write end.
 */
pid_t spawn_burner(int ms, int cpu, int *go)
{
	pid_t pid, parent;
	int p[2];
	char c;

	if (pipe(p))
		return -1;
	parent = getpid();
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		close(p[1]);
		if (die_with(parent) || (cpu >= 0 && pin_to(cpu)))
			_exit(2);
		if (read(p[0], &c, 1) != 1)
			_exit(3);
		burn(ms);
		_exit(0);
	}
	close(p[0]);
	*go = p[1];
	return pid;
}

void release(int go)
{
	if (write(go, "g", 1) != 1)
		perror("write");
	close(go);
}

/* Kill a burner started with ms < 0; true if it died of that signal. */
bool stop_burner(pid_t pid)
{
	int status;

	if (kill(pid, SIGKILL) || waitpid(pid, &status, 0) != pid)
		return false;
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}
