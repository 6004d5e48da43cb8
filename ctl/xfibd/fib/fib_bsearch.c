// SPDX-License-Identifier: GPL-2.0-only
/*
 * bsearch4 and bsearch6: the range list itself, sorted, in one of the two
 * slots of the family's xfib_bs4 / xfib_bs6 array (mmap()ed by fib.c),
 * searched by include/xfib/lookup_bsearch.h. Every change rebuilds the
 * standby slot.
 *
 * Preference: one dependent read per bit of log2(n) and almost no memory:
 * with a thousand prefixes the table is 16 KiB, the ten probes hit L1/L2,
 * and a lookup costs about what two dir24_8 reads cost. So bsearch wins
 * small tables and loses ground with every doubling (fib.c):
 *
 *   255 - 13 * log2(n + 1), 0 if the ranges do not fit the slot
 *
 * (fib_select.c computes it.)
 */
#include <errno.h>
#include <string.h>

#include "fib_algo.h"
#include "fib_ranges.h"

static unsigned int pad_log2(size_t n)
{
	unsigned int l = 0;

	while (((size_t)1 << l) < n)
		l++;
	return l;
}

/*
 * Pads the n ranges at t (each esize bytes) to a power of two by
 * repeating the last one: the search then takes a fixed number of steps.
 * Plain stores: no packet reads the standby slot until it is published.
 */
static void bs_pad(struct fib_inst *in, void *t, size_t esize, size_t n)
{
	size_t i, size;

	in->log2n = pad_log2(n);
	size = (size_t)1 << in->log2n;
	for (i = n; i < size; i++)
		memcpy((char *)t + i * esize, (char *)t + (n - 1) * esize, esize);
	in->nranges = n;
	in->mem_bytes = size * esize;
}

static int bs4_build(struct fib *f, int fam, struct fib_inst *in,
		     const struct fib_range *r, size_t n)
{
	struct xfib_bs4_range *t = f->bs4 + (size_t)in->slot * XFIB_BS4_SLOT_SIZE;

	if (n > XFIB_BS4_SLOT_SIZE)
		return -ENOSPC;
	in->capacity = XFIB_BS4_SLOT_SIZE;
	fib_to_bs4(r, n, t);
	bs_pad(in, t, sizeof(*t), n);
	return 0;
}

static int bs6_build(struct fib *f, int fam, struct fib_inst *in,
		     const struct fib_range *r, size_t n)
{
	struct xfib_bs6_range *t = f->bs6 + (size_t)in->slot * XFIB_BS6_SLOT_SIZE;

	if (n > XFIB_BS6_SLOT_SIZE)
		return -ENOSPC;
	in->capacity = XFIB_BS6_SLOT_SIZE;
	fib_to_bs6(r, n, t);
	bs_pad(in, t, sizeof(*t), n);
	return 0;
}

/* The slots are fixed maps that fib.c owns: nothing to release. */
static void bs_destroy(struct fib *f, struct fib_inst *in)
{
}

const struct fib_algo fib_algo_bsearch4 = {
	.id = XFIB_ALGO_BSEARCH4,
	.preference = fib_bs4_preference,
	.build = bs4_build,
	.destroy = bs_destroy,
};

const struct fib_algo fib_algo_bsearch6 = {
	.id = XFIB_ALGO_BSEARCH6,
	.preference = fib_bs6_preference,
	.build = bs6_build,
	.destroy = bs_destroy,
};
