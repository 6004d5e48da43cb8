// SPDX-License-Identifier: GPL-2.0-only
/*
 * dxr as a lookup algorithm of fib.c: the tables of dxr.c in one of the
 * two slots of the xfib_dxr_direct / xfib_dxr_ranges arrays (mmap()ed by
 * fib.c), searched by include/xfib/lookup_dxr.h. Every change rebuilds
 * the standby slot (a full build is one pass over the ranges) and
 * publishes it with the family's active word, as bsearch does.
 *
 * Preference, from make bench-lookup on this machine (65536 random keys
 * inside the table's prefixes, BPF / native ns per lookup):
 *
 *   prefixes   bsearch4      dxr          dir24_8
 *   1000       128 / 41      17 / 13      5.1 / 2.1
 *   10000      161 / 130     29 / 35      12 / 7.2
 *   100000     214 / 176     57 / 80      12 / 14
 *   1000000    (no fit)      76 / 48      21 / 29
 *
 * dxr needs about 5-9 bytes per prefix where dir24_8 needs 64 MiB plus
 * 1 KiB per cut /24, but its binary search within a /16 chunk is a chain
 * of dependent reads, so it looks up 3-5x slower than dir24_8 at every
 * size measured, and 4-7x faster than bsearch4 from a thousand prefixes
 * on. The preference follows that order: below dir24_8's everywhere (the
 * automatic selection keeps dir24_8 while it fits), above bsearch4's past
 * their crossing near two thousand prefixes; 0 when the table may not fit
 * the slot:
 *
 *   20 + 8 * log2(n + 1), at most 200
 */
#include <errno.h>
#include <stdlib.h>

#include "dxr.h"
#include "fib_algo.h"
#include "fib_ranges.h"

/* Range entries a table of n prefixes may take: 2n + 1 ranges, a split
 * and a length word per chunk. */
static size_t dxr_entries_bound(size_t prefixes)
{
	return 2 * prefixes + 1 + 2 * (size_t)XFIB_DXR_CHUNKS;
}

static unsigned int dxr_preference(const struct fib_scale *s)
{
	size_t need = s->ranges ? s->ranges + 2 * (size_t)XFIB_DXR_CHUNKS :
				  dxr_entries_bound(s->prefixes);

	if (need > XFIB_DXR_SLOT_RANGES)
		return 0;
	return fib_clamp_pref(20 + 8 * fib_log2n(s->prefixes), 200);
}

static int dxr_fib_build(struct fib *f, int fam, struct fib_inst *in,
			 const struct fib_range *r, size_t n)
{
	__u32 *direct = f->dxr_direct + (size_t)in->slot * XFIB_DXR_CHUNKS;
	__u32 *ranges = f->dxr_ranges + (size_t)in->slot * XFIB_DXR_SLOT_RANGES;
	struct xfib_bs4_range *t;
	long used;

	t = malloc((n ? n : 1) * sizeof(*t));
	if (!t)
		return -ENOMEM;
	fib_to_bs4(r, n, t);
	used = dxr_build(t, n, direct, ranges, XFIB_DXR_SLOT_RANGES);
	free(t);
	if (used < 0)
		return used;
	in->nranges = n;
	in->capacity = XFIB_DXR_SLOT_RANGES;
	in->mem_bytes = (XFIB_DXR_CHUNKS + (__u64)used) * sizeof(__u32);
	return 0;
}

/* The slots are fixed maps that fib.c owns: nothing to release. */
static void dxr_destroy(struct fib *f, struct fib_inst *in)
{
}

const struct fib_algo fib_algo_dxr = {
	.id = XFIB_ALGO_DXR,
	.preference = dxr_preference,
	.build = dxr_fib_build,
	.destroy = dxr_destroy,
};
