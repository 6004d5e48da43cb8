/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * bsearch4 / bsearch6: longest-prefix match as a search over sorted,
 * non-overlapping address ranges. The daemon compiles the prefixes into
 * ranges (every address belongs to exactly one range, gaps carry the "no
 * route" nexthop) and pads the slot to a power of two by repeating the last
 * range, so the search is a fixed number of branch-free steps.
 *
 * The same code runs in the XDP program (tables are BPF array maps) and in
 * userspace (tables are the mmap()ed maps, or plain arrays in tests). The
 * includer supplies XFIB_TBL_AT(table, index), which yields a pointer to the
 * entry or NULL.
 */
#ifndef XFIB_LOOKUP_BSEARCH_H
#define XFIB_LOOKUP_BSEARCH_H

#include <linux/types.h>
#include "maps.h"

#ifndef XFIB_TBL_AT
#error "define XFIB_TBL_AT(table, index) before including lookup_bsearch.h"
#endif

#ifndef XFIB_INLINE
#define XFIB_INLINE static inline __attribute__((always_inline))
#endif

/* key in host order; slot and log2n from the family's xfib_active word. */
XFIB_INLINE __u32 xfib_bs4_lookup(void *tbl, __u32 slot, __u32 log2n,
				  __u32 key)
{
	const struct xfib_bs4_range *r;
	__u32 base = (slot & 1) << XFIB_BS4_LOG2_MAX;
	__u32 pos = 0;
	int i;

	/* Invariant: range[pos].start <= key. range[0].start is 0.
	 * Unrolled for BPF: as a loop, clang keeps i and pos on the stack
	 * and every lookup pays for all 18 steps (about 30 ns more per
	 * packet in XDP); unrolled, the skipped steps are a compare each. */
#ifdef __clang__
#pragma clang loop unroll(full)
#endif
	for (i = XFIB_BS4_LOG2_MAX - 1; i >= 0; i--) {
		__u32 probe;

		if ((__u32)i >= log2n)
			continue;
		probe = pos + (1u << i);
		r = XFIB_TBL_AT(tbl, base + (probe & (XFIB_BS4_SLOT_SIZE - 1)));
		if (!r)
			return XFIB_NH_IDX_NONE;
		if (r->start <= key)
			pos = probe;
	}
	r = XFIB_TBL_AT(tbl, base + (pos & (XFIB_BS4_SLOT_SIZE - 1)));
	return r ? r->nh : XFIB_NH_IDX_NONE;
}

/* hi, lo: the IPv6 address as two host-order 64-bit halves. */
XFIB_INLINE __u32 xfib_bs6_lookup(void *tbl, __u32 slot, __u32 log2n,
				  __u64 hi, __u64 lo)
{
	const struct xfib_bs6_range *r;
	__u32 base = (slot & 1) << XFIB_BS6_LOG2_MAX;
	__u32 pos = 0;
	int i;

#ifdef __clang__
#pragma clang loop unroll(full)
#endif
	for (i = XFIB_BS6_LOG2_MAX - 1; i >= 0; i--) {
		__u32 probe;

		if ((__u32)i >= log2n)
			continue;
		probe = pos + (1u << i);
		r = XFIB_TBL_AT(tbl, base + (probe & (XFIB_BS6_SLOT_SIZE - 1)));
		if (!r)
			return XFIB_NH_IDX_NONE;
		if (r->hi < hi || (r->hi == hi && r->lo <= lo))
			pos = probe;
	}
	r = XFIB_TBL_AT(tbl, base + (pos & (XFIB_BS6_SLOT_SIZE - 1)));
	return r ? r->nh : XFIB_NH_IDX_NONE;
}

#endif /* XFIB_LOOKUP_BSEARCH_H */
