/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hrtimer_setup() for kernels before 6.13, which have only
 * hrtimer_init(): the out-of-tree build of ptsim includes this header
 * where the kernel's <linux/hrtimer.h> does not declare hrtimer_setup()
 * (the Makefile here looks), so that the driver's sources are the
 * mainline ones.
 */
#ifndef PTSIM_COMPAT_HRTIMER_H
#define PTSIM_COMPAT_HRTIMER_H

#include <linux/hrtimer.h>

static inline void hrtimer_setup(struct hrtimer *timer,
				 enum hrtimer_restart (*function)(struct hrtimer *),
				 clockid_t clock_id, enum hrtimer_mode mode)
{
	hrtimer_init(timer, clock_id, mode);
	timer->function = function;
}

#endif
