// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit test of the table pools' buddy allocator (ctl/xfibd/fib/fib_tpool.c),
 * against a naive reference (an owner per entry): random allocations of
 * random orders and frees in random order, in a small pool, check that
 *  - every block is aligned to its size and inside the pool, and overlaps
 *    no block in use;
 *  - an allocation fails (-ENOSPC) only when no aligned run of free
 *    entries of its size exists (buddies merge: freed space is found
 *    again);
 *  - once everything is freed, the whole pool is one free block again.
 */
#include <errno.h>

#define TESTLIB_SEED 0x7b0017ab7204ull
#include "testlib.h"
#include "fib/fib_tpool.h"

#define LOG2 10
#define SIZE (1u << LOG2)
#define NBLK 256

static int owner[SIZE]; /* block number using the entry, or -1 */

struct blk {
	bool used;
	__u32 off, order;
};

/* Whether an aligned free run of 2^order entries exists. */
static bool ref_fits(__u32 order)
{
	__u32 off, i;

	for (off = 0; off < SIZE; off += 1u << order) {
		for (i = 0; i < 1u << order && owner[off + i] < 0; i++)
			;
		if (i == 1u << order)
			return true;
	}
	return false;
}

static void one_run(unsigned int steps)
{
	struct blk b[NBLK] = { 0 };
	struct fib_tpool p;
	__u32 i, k, off;
	unsigned int s;

	for (i = 0; i < SIZE; i++)
		owner[i] = -1;
	CHECK(!fib_tpool_init(&p, LOG2), "init");
	for (s = 0; s < steps; s++) {
		k = rnd_below(NBLK);
		if (b[k].used) {
			fib_tpool_free(&p, b[k].off, b[k].order);
			for (i = 0; i < 1u << b[k].order; i++)
				owner[b[k].off + i] = -1;
			b[k].used = false;
			continue;
		}
		b[k].order = rnd_below(rnd_below(2) ? 4 : LOG2 + 1);
		if (fib_tpool_alloc(&p, b[k].order, &off)) {
			CHECK(!ref_fits(b[k].order), "step %u: order %u refused, but an aligned run is free",
			      s, b[k].order);
			continue;
		}
		CHECK(!(off & ((1u << b[k].order) - 1)) && off + (1u << b[k].order) <= SIZE,
		      "step %u: block %u of order %u", s, off, b[k].order);
		for (i = 0; i < 1u << b[k].order; i++) {
			CHECK(owner[off + i] < 0, "step %u: entry %u given twice", s, off + i);
			owner[off + i] = k;
		}
		b[k].used = true;
		b[k].off = off;
	}
	for (k = 0; k < NBLK; k++)
		if (b[k].used)
			fib_tpool_free(&p, b[k].off, b[k].order);
	CHECK(!fib_tpool_alloc(&p, LOG2, &off) && off == 0,
	      "everything freed, but the whole pool is not one block");
	fib_tpool_fini(&p);
}

int main(int argc, char **argv)
{
	int run;

	testlib_start(argv[0], argc > 1 ? argv[1] : NULL);
	cur_test = "random";
	for (run = 0; run < 200; run++)
		one_run(2000);
	printf("PASS\n");
	return 0;
}
