/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Processes and CPUs for the tests: time, workloads that burn CPU in a
 * child, pinning and a CPU to pin to, a CPU's interrupt counts, CPU
 * hotplug, and the dummy events that keep children on their inherited
 * events.
 */
#ifndef PTSIM_PROC_H
#define PTSIM_PROC_H

double now_ms(void);
void burn(int ms);
int pin_task(pid_t pid, int cpu);
int pin_to(int cpu);
int last_allowed_cpu(void);
int cpus_online(void);
int online_cpu(int n);
int hotplug_cpu(void);
long irq_count_on(const char *name, int cpu);
bool cpu_hotplug_possible(void);
int cpu_set_online(int cpu, int on);
int dummy_open_on(pid_t pid, int cpu);
int anchor_open(void);
int die_with(pid_t parent);
pid_t spawn_burner(int ms, int cpu, int *go);
void release(int go);
bool stop_burner(pid_t pid);

#endif /* PTSIM_PROC_H */
