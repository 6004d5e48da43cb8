// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit test of a group pool that grows in place (ctl/xfibd/fib/grpool.c), the
 * way xfibd grows a live dir24_8 or trie6 pool by chunks:
 *  - grpool_grow() keeps every group in use, free or retired as it was,
 *    puts the new groups on the free stack (the lowest on top), hands out
 *    each group exactly once, and the counts keep adding up to ngroups;
 *    growing by nothing changes nothing, shrinking is refused;
 *  - a dir24_8 table whose pool runs dry (-ENOSPC, nothing written) goes
 *    on after the pool grows over memory that was there all along: the
 *    groups written before keep their numbers and contents, every /24
 *    looks up right, the new write takes groups past the old end, and
 *    retired groups stay retired until reclaim.
 *
 * Deterministic: the seed testlib.h asks for is not used.
 */
#include <errno.h>

#define TESTLIB_SEED 0x6a900165eed00001ull
#include "testlib.h"
#include "fib/dir24.h"

#define XFIB_U32_AT(t, i) (((const __u32 *)(t))[i])
#include "xfib/lookup_dir24.h"

#define ADDR(a, b, c, d) ((__u32)(a) << 24 | (b) << 16 | (c) << 8 | (d))

static void test_counts(void)
{
	enum { OLD = 8, NEW = 20 };
	__u32 *mem = calloc(NEW, GRPOOL_GROUP_ENTRIES * sizeof(__u32));
	bool seen[NEW] = { false };
	struct grpool p;
	__u32 used[3], ret, g, i;

	cur_test = "counts";
	CHECK(mem && !grpool_init(&p, mem, OLD, true), "init");
	for (i = 0; i < 3; i++)
		used[i] = grpool_alloc(&p);
	ret = grpool_alloc(&p);
	grpool_retire(&p, ret);
	CHECK(grpool_grow(&p, OLD - 1) == -EINVAL, "shrinking accepted");
	CHECK(!grpool_grow(&p, OLD), "growing by nothing failed");
	CHECK(p.ngroups == OLD && p.nfree == OLD - 4,
	      "growing by nothing changed the pool");
	CHECK(!grpool_grow(&p, NEW), "growing failed");
	CHECK(p.ngroups == NEW && grpool_used(&p) == 3 && p.nretired == 1 &&
		      p.nfree == NEW - 4,
	      "after growing: %u groups, %u used, %u free, %u retired",
	      p.ngroups, grpool_used(&p), p.nfree, p.nretired);
	CHECK(p.free[p.nfree - 1] == OLD, "the lowest new group is not on top");
	for (i = 0; i < 3; i++)
		seen[used[i]] = true;
	CHECK(p.retired[0] == ret, "the retired group changed");
	seen[ret] = true;
	while (p.nfree) {
		g = grpool_alloc(&p);
		CHECK(g < NEW && !seen[g],
		      "group %u handed out twice or out of range", g);
		seen[g] = true;
	}
	grpool_reclaim(&p);
	CHECK(p.nfree == 1 && p.free[0] == ret && grpool_used(&p) == NEW - 1,
	      "reclaim after growing");
	grpool_fini(&p);
	free(mem);
}

static void check_all(const struct dir24 *d, const __u32 *nh_of)
{
	__u32 b, lo, hi;

	for (b = 0; b < 64; b++) {
		lo = xfib_dir24_lookup(d->tbl24, d->pool.tbl8,
				       ADDR(10, b, 0, 0));
		hi = xfib_dir24_lookup(d->tbl24, d->pool.tbl8,
				       ADDR(10, b, 0, 128));
		CHECK(lo == nh_of[b] && hi == 1,
		      "10.%u.0.0: %u/%u, want %u/1", b, lo, hi, nh_of[b]);
	}
}

static void test_dir24(void)
{
	enum { OLD = 16, NEW = 64 };
	__u32 *tbl24 = calloc(XFIB_DIR24_TBL24_ENTRIES, sizeof(__u32));
	__u32 *tbl8 = calloc(NEW, GRPOOL_GROUP_ENTRIES * sizeof(__u32));
	__u32 nh_of[64], saved[OLD][GRPOOL_GROUP_ENTRIES], b, e, g;
	struct dir24 d;

	cur_test = "dir24";
	CHECK(tbl24 && tbl8 && !dir24_init(&d, tbl24, tbl8, OLD), "init");
	CHECK(!dir24_write_range(&d, ADDR(10, 0, 0, 0), ADDR(10, 63, 255, 255),
				 1), "/10");
	for (b = 0; b < 64; b++)
		nh_of[b] = 1;
	/* Each /25 splits its own /24: a group each, until the pool is dry. */
	for (b = 0; b < OLD; b++) {
		CHECK(!dir24_write_range(&d, ADDR(10, b, 0, 0),
					 ADDR(10, b, 0, 127), 2 + b),
		      "10.%u.0.0/25", b);
		nh_of[b] = 2 + b;
	}
	CHECK(d.pool.nfree == 0, "%u groups free", d.pool.nfree);
	CHECK(dir24_write_range(&d, ADDR(10, OLD, 0, 0), ADDR(10, OLD, 0, 127),
				99) == -ENOSPC,
	      "a dry pool took a write");
	check_all(&d, nh_of);
	/* A collapse retires a group: it must stay retired across growth. */
	CHECK(!dir24_write_range(&d, ADDR(10, 0, 0, 0), ADDR(10, 0, 0, 127), 1),
	      "collapse");
	nh_of[0] = 1;
	CHECK(d.pool.nretired == 1, "no group retired");
	memcpy(saved, tbl8, sizeof(saved));
	CHECK(!grpool_grow(&d.pool, NEW), "growing");
	CHECK(!memcmp(saved, tbl8, sizeof(saved)),
	      "growing touched the old groups");
	for (b = OLD; b < 64; b++) {
		CHECK(!dir24_write_range(&d, ADDR(10, b, 0, 0),
					 ADDR(10, b, 0, 127), 2 + b),
		      "10.%u.0.0/25 after growing", b);
		nh_of[b] = 2 + b;
		e = tbl24[ADDR(10, b, 0, 0) >> 8];
		g = e & ~XFIB_DIR24_EXT;
		CHECK((e & XFIB_DIR24_EXT) && g >= OLD && g < NEW,
		      "10.%u.0.0/24 in group %u, not a new one", b, g);
	}
	CHECK(d.pool.nretired == 1 && d.pool.nfree == 0 &&
		      grpool_used(&d.pool) == NEW - 1,
	      "pool after growing: %u used, %u free, %u retired",
	      grpool_used(&d.pool), d.pool.nfree, d.pool.nretired);
	check_all(&d, nh_of);
	dir24_reclaim(&d);
	CHECK(d.pool.nfree == 1, "reclaim");
	dir24_fini(&d);
	free(tbl24);
	free(tbl8);
}

int main(void)
{
	test_counts();
	test_dir24();
	printf("PASS\n");
	return 0;
}
