// SPDX-License-Identifier: GPL-2.0
/*
 * AUX area mmap ABI: the validation a request gets, and its errno.
 *
 * These run on any machine: the checks below all happen before the kernel
 * asks the PMU for an AUX buffer, so the software dummy event serves, and
 * the final step, asking a PMU without AUX support for one, must fail with
 * EOPNOTSUPP.  Each failed request must leave the data mapping intact.
 *
 * The rules (include/uapi/linux/perf_event.h, struct perf_event_mmap_page):
 * the AUX area is mapped at file offset aux_offset, which userspace writes
 * into the user page first, together with aux_size; it must lie above the
 * data area, be page aligned, match the mapping's offset and length, and
 * be a power-of-two number of pages.  A second mapping must agree with the
 * first.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "../kselftest_harness.h"

#define DATA_PAGES	8

struct aux_ctx {
	int fd;
	long psz;
	size_t data_len;
	struct perf_event_mmap_page *pg;
};

FIXTURE(aux_abi)
{
	struct aux_ctx c;
};

FIXTURE_SETUP(aux_abi)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
		.disabled = 1,
		.exclude_kernel = 1,
	};

	struct aux_ctx *c = &self->c;

	c->psz = sysconf(_SC_PAGESIZE);
	c->data_len = (1 + DATA_PAGES) * c->psz;
	c->pg = MAP_FAILED;
	c->fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	if (c->fd < 0)
		SKIP(return, "perf_event_open: %s", strerror(errno));
}

FIXTURE_TEARDOWN(aux_abi)
{
	if (self->c.pg != MAP_FAILED)
		munmap(self->c.pg, self->c.data_len);
	if (self->c.fd >= 0)
		close(self->c.fd);
}

static void *map(int fd, size_t len, off_t off, int prot, int flags)
{
	return mmap(NULL, len, prot, flags, fd, off);
}

/* Map the data area once; 0 or the errno. */
static int map_data(struct aux_ctx *c)
{
	if (c->pg == MAP_FAILED)
		c->pg = map(c->fd, c->data_len, 0, PROT_READ | PROT_WRITE,
			    MAP_SHARED);
	return c->pg == MAP_FAILED ? errno : 0;
}

/*
 * Map the data area, publish aux_offset/aux_size in the user page and map
 * @len bytes at file offset @off: 0 or the errno of the AUX mmap, or -1 if
 * the data area itself could not be mapped.
 */
static int aux_request(struct aux_ctx *c, off_t off, size_t len,
		       __u64 aux_offset, __u64 aux_size)
{
	void *aux;

	if (map_data(c))
		return -1;
	c->pg->aux_offset = aux_offset;
	c->pg->aux_size = aux_size;
	aux = map(c->fd, len, off, PROT_READ | PROT_WRITE, MAP_SHARED);
	if (aux == MAP_FAILED)
		return errno;
	munmap(aux, len);
	return 0;
}

/* After a refused request, the data area must still be mapped and sane. */
static void data_still_usable(struct __test_metadata *_metadata,
			      struct aux_ctx *c)
{
	ASSERT_NE(c->pg, MAP_FAILED);
	EXPECT_EQ(c->pg->data_offset, (__u64)c->psz);
	EXPECT_EQ(c->pg->data_size, (__u64)(DATA_PAGES * c->psz));
	EXPECT_EQ(c->pg->aux_head, (__u64)0);
}

TEST_F(aux_abi, aux_without_data_area)
{
	struct aux_ctx *c = &self->c;
	size_t len = 4 * c->psz;
	void *aux = map(c->fd, len, c->data_len, PROT_READ | PROT_WRITE,
			MAP_SHARED);

	ASSERT_EQ(aux, MAP_FAILED);
	EXPECT_EQ(errno, EINVAL);
}

TEST_F(aux_abi, offset_inside_data_area)
{
	struct aux_ctx *c = &self->c;
	off_t off = c->data_len - c->psz;

	EXPECT_EQ(aux_request(c, off, 4 * c->psz, off, 4 * c->psz), EINVAL);
	data_still_usable(_metadata, c);
}

TEST_F(aux_abi, offset_differs_from_mapping)
{
	struct aux_ctx *c = &self->c;
	size_t len = 4 * c->psz;

	EXPECT_EQ(aux_request(c, c->data_len, len, c->data_len + len, len),
		  EINVAL);
	data_still_usable(_metadata, c);
}

TEST_F(aux_abi, size_differs_from_mapping)
{
	struct aux_ctx *c = &self->c;
	size_t len = 4 * c->psz;

	EXPECT_EQ(aux_request(c, c->data_len, len, c->data_len, 2 * len),
		  EINVAL);
	data_still_usable(_metadata, c);
}

TEST_F(aux_abi, size_not_power_of_two)
{
	struct aux_ctx *c = &self->c;
	size_t len = 3 * c->psz;

	EXPECT_EQ(aux_request(c, c->data_len, len, c->data_len, len),
		  EINVAL);
	data_still_usable(_metadata, c);
}

TEST_F(aux_abi, private_mapping)
{
	struct aux_ctx *c = &self->c;
	size_t len = 4 * c->psz;
	void *aux;

	ASSERT_EQ(map_data(c), 0);
	c->pg->aux_offset = c->data_len;
	c->pg->aux_size = len;
	aux = map(c->fd, len, c->data_len, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE);
	ASSERT_EQ(aux, MAP_FAILED);
	EXPECT_EQ(errno, EINVAL);
	data_still_usable(_metadata, c);
}

TEST_F(aux_abi, pmu_without_aux_support)
{
	struct aux_ctx *c = &self->c;
	size_t len = 4 * c->psz;

	EXPECT_EQ(aux_request(c, c->data_len, len, c->data_len, len),
		  EOPNOTSUPP);
	data_still_usable(_metadata, c);
	/* Refusals are repeatable: nothing was left half set up. */
	EXPECT_EQ(aux_request(c, c->data_len, len, c->data_len, len),
		  EOPNOTSUPP);
}

TEST_F(aux_abi, data_area_remaps_after_refusals)
{
	struct aux_ctx *c = &self->c;
	size_t len = 4 * c->psz;
	void *again;

	ASSERT_EQ(aux_request(c, c->data_len, len, c->data_len, len),
		  EOPNOTSUPP);
	ASSERT_EQ(munmap(c->pg, c->data_len), 0);
	c->pg = MAP_FAILED;
	again = map(c->fd, c->data_len, 0, PROT_READ | PROT_WRITE,
		    MAP_SHARED);
	ASSERT_NE(again, MAP_FAILED);
	c->pg = again;
	data_still_usable(_metadata, c);
}

TEST_HARNESS_MAIN
