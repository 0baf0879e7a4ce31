/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hrtimer_setup() for kernels before 6.13, which have only
 * hrtimer_init(): the out-of-tree build of ptsim includes this header
 * where the kernel's <linux/hrtimer.h> does not declare hrtimer_setup()
 * (the Makefile here looks), so that the driver's sources are the
 * mainline ones.
 *
 * A macro, expanded where the driver calls it, after its own includes:
 * a function here would need <linux/hrtimer.h> before the driver's first
 * line, and with it <linux/printk.h>'s pr_fmt before the driver's own.
 */
#ifndef PTSIM_COMPAT_HRTIMER_H
#define PTSIM_COMPAT_HRTIMER_H

#define hrtimer_setup(timer, fn, clock_id, mode)			\
	do {								\
		struct hrtimer *__ptsim_timer = (timer);		\
									\
		hrtimer_init(__ptsim_timer, (clock_id), (mode));	\
		__ptsim_timer->function = (fn);				\
	} while (0)

#endif
