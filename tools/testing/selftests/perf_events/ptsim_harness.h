/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the ptsim tests share with the kselftest harness: it needs a
 * test's _metadata, so it is here, included after the harness, and not
 * in the compiled helpers.
 */
#ifndef PTSIM_HARNESS_H
#define PTSIM_HARNESS_H

#include "../kselftest_harness.h"
#include "ptsim_lib.h"

/* From a fixture's setup: skip the case unless @needs are met. */
static inline void ptsim_need(struct __test_metadata *_metadata,
			      unsigned int needs)
{
	const char *why = ptsim_missing(needs);

	if (why)
		SKIP(return, "%s", why);
}

#endif /* PTSIM_HARNESS_H */
