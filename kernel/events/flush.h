/* SPDX-License-Identifier: GPL-2.0 */
/*
 * PERF_EVENT_IOC_FLUSH: see kernel/events/flush.c.
 */
#ifndef _KERNEL_EVENTS_FLUSH_H
#define _KERNEL_EVENTS_FLUSH_H

struct perf_event;

int perf_event_flush(struct perf_event *event, unsigned long flags);

#endif /* _KERNEL_EVENTS_FLUSH_H */
