/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The compiled table as a list of ranges: what every lookup structure is
 * built from. The RIB's prefix trees (the mirrored table and the local
 * one, which the kernel consults first) are walked into sorted,
 * non-overlapping ranges [first, last] -> nexthop, adjacent ranges with
 * the same nexthop merged.
 */
#ifndef XFIB_FIB_RANGES_H
#define XFIB_FIB_RANGES_H

#include "fib.h"

/* The merged answer over a prefix's span, main's wherever no prefix of
 * local covers an address, into *out (grown as needed; *cap is its
 * size). A local prefix's nexthop must not be 0xffffffff. */
int fib_tree_ranges(const struct ptree *main, const struct ptree *local,
		    const __u8 *dst, unsigned int plen, struct fib_range **out,
		    size_t *n, size_t *cap);
/* The same over the RIB's trees of a family (local table first). */
int fib_span_ranges(struct rib *r, int fam, const __u8 *dst, unsigned int plen,
		    struct fib_range **out, size_t *n, size_t *cap);
/* The whole address space of a family. */
int fib_full_ranges(struct rib *r, int fam, struct fib_range **out, size_t *n,
		    size_t *cap);
/* The whole address space of one tree alone (a rules' table). */
int fib_tree_full_ranges(const struct ptree *t, struct fib_range **out,
			 size_t *n, size_t *cap);
/* The spans of the prefixes changed since the last flush, one after the
 * other (a malloc()ed list the caller frees). */
int fib_changed_ranges(struct rib *r, int fam, struct fib_range **out,
		       size_t *n);

/* The range formats the builders take: first address and nexthop. */
void fib_to_bs4(const struct fib_range *r, size_t n, struct xfib_bs4_range *out);
void fib_to_bs6(const struct fib_range *r, size_t n, struct xfib_bs6_range *out);

#endif /* XFIB_FIB_RANGES_H */
