// SPDX-License-Identifier: GPL-2.0
/*
 * Harness self-test module: loaded only by the harness self-test boot.
 * Loading it runs a KUnit suite with one passing and one deliberately
 * failing case, and raises one WARN_ON.  "make check" must report both the
 * failed case and the splat; see tests/harness/selftest.sh.
 */
#include <kunit/test.h>
#include <linux/module.h>

static void harness_selftest_passes(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, 2, 1 + 1);
}

static void harness_selftest_fails(struct kunit *test)
{
	KUNIT_EXPECT_EQ_MSG(test, 1, 2, "this failure is the harness self-test");
}

static struct kunit_case harness_selftest_cases[] = {
	KUNIT_CASE(harness_selftest_passes),
	KUNIT_CASE(harness_selftest_fails),
	{}
};

static struct kunit_suite harness_selftest_suite = {
	.name = "harness_selftest",
	.test_cases = harness_selftest_cases,
};

kunit_test_suite(harness_selftest_suite);

static int __init harness_warn_init(void)
{
	WARN_ON(1);
	return 0;
}
module_init(harness_warn_init);

MODULE_DESCRIPTION("auxlab harness self-test: must be reported as failing");
MODULE_LICENSE("GPL");
