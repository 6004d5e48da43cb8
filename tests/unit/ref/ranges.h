/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The tests' reference compiler: a set of prefixes into the sorted,
 * non-overlapping ranges that the bsearch4/bsearch6 lookups search
 * (include/xfib/lookup_bsearch.h), by sort and sweep. The daemon derives
 * its ranges from its prefix tree (ctl/xfibd/rib/ptree.c) instead; keeping this
 * independent implementation lets the tests check one against the other.
 */
#ifndef XFIB_RANGES_H
#define XFIB_RANGES_H

#include <stddef.h>
#include <linux/types.h>
#include "xfib/maps.h"

/* One prefix as the builder sees it. */
struct xfib_pfx {
	__u8 addr[16]; /* network order; IPv4 uses the first 4 bytes */
	__u8 plen;
	__u8 pad[3];
	__u32 nh;      /* nexthop index */
};

/*
 * Builds ranges with longest-prefix-match semantics from main[] and over[].
 * An address covered by any prefix of over[] takes the longest match among
 * over[] whatever main[] holds (the kernel consults its local table before
 * the main table); otherwise the longest match among main[]; otherwise
 * XFIB_NH_IDX_NONE. Host bits beyond plen are ignored. Within one list,
 * (addr, plen) must be unique (after clearing host bits); the same prefix
 * may appear once in each list. Adjacent ranges with the same nexthop are
 * merged; out[0].start is 0 and the ranges cover the whole address space.
 * The result depends only on the two sets, not on the order of entries.
 *
 * n prefixes give at most 2n + 1 ranges. Range starts are in host order
 * (bs6: hi and lo are the host-order halves of the address). Runs in
 * O(n log n) time and O(n) extra memory; the inputs are not modified.
 *
 * Returns the number of ranges written to out (at most cap), -ENOSPC if cap
 * is too small, -EINVAL on a plen above 32 (IPv4) or 128 (IPv6) or on a
 * duplicate within one list, -ENOMEM. On error nothing past out[cap - 1]
 * has been written, but out's contents are unspecified.
 */
int xfib_ranges4_build(const struct xfib_pfx *main, size_t nmain,
		       const struct xfib_pfx *over, size_t nover,
		       struct xfib_bs4_range *out, size_t cap);
int xfib_ranges6_build(const struct xfib_pfx *main, size_t nmain,
		       const struct xfib_pfx *over, size_t nover,
		       struct xfib_bs6_range *out, size_t cap);

/*
 * The same for a family of bits (32 or 128), decoded: *start gets each
 * range's first address (host order) and *nh its nexthop, in two arrays
 * the caller frees. Returns the number of ranges or -errno.
 */
int xfib_ranges_build_decoded(unsigned int bits, const struct xfib_pfx *main,
			      size_t nmain, const struct xfib_pfx *over,
			      size_t nover, unsigned __int128 **start,
			      __u32 **nh);

/* In such a decoded list of n ranges: the range holding address a. */
size_t xfib_ranges_at(const unsigned __int128 *start, size_t n,
		      unsigned __int128 a);
/* Range i of it clipped to [first, last] (the two must overlap): its
 * first and last address inside, in *cfirst and *clast. */
void xfib_ranges_clip(const unsigned __int128 *start, size_t n, size_t i,
		      unsigned __int128 first, unsigned __int128 last,
		      unsigned __int128 *cfirst, unsigned __int128 *clast);

/*
 * Pads n ranges (n >= 1) to the next power of two by repeating the last
 * range, as the lookup requires. r must hold 2^log2n entries, where log2n
 * is the smallest value with 2^log2n >= n. Returns log2n (0 for n <= 1;
 * nothing is written for n == 0). For a table that fits a slot
 * (n <= XFIB_BS4_SLOT_SIZE / XFIB_BS6_SLOT_SIZE) log2n is at most
 * XFIB_BS4_LOG2_MAX / XFIB_BS6_LOG2_MAX.
 */
unsigned int xfib_ranges4_pad(struct xfib_bs4_range *r, size_t n);
unsigned int xfib_ranges6_pad(struct xfib_bs6_range *r, size_t n);

#endif /* XFIB_RANGES_H */
