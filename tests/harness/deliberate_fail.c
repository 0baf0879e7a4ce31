// SPDX-License-Identifier: GPL-2.0
/*
 * A kselftest with one passing and one failing case.  The harness
 * self-test (tests/harness/selftest.sh) boots it and requires "make check"
 * to report exactly the failing case: a harness that let this pass would
 * let every real failure pass too.
 */
#include "kselftest_harness.h"

TEST(passes)
{
	ASSERT_EQ(2, 1 + 1);
}

TEST(fails_on_purpose)
{
	EXPECT_EQ(1, 2) TH_LOG("this failure is the harness self-test");
}

TEST_HARNESS_MAIN
