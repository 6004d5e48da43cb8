/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The update side of the trie6 IPv6 lookup (include/xfib/lookup_trie6.h):
 * writes the tbl24 and tbl8 tables in place while XDP programs read them.
 * The tables are caller-provided memory: the mmap()ed BPF array maps in
 * the daemon, plain arrays in tests. The rules that keep concurrent
 * lookups correct are described at the top of trie6.c.
 *
 * Addresses are host-order 128-bit integers. Nexthop indexes must be at
 * most XFIB_TRIE6_NH_MAX; 0 is "no route". One writer at a time: callers
 * serialise all calls on one struct trie6.
 */
#ifndef XFIB_TRIE6_H
#define XFIB_TRIE6_H

#include <stddef.h>
#include <linux/types.h>

#include "xfib/maps.h"
#include "xfib/lookup_trie6.h"
#include "grpool.h"

#ifndef XFIB_U128_DEFINED
#define XFIB_U128_DEFINED
/* C11 allows the same typedef twice (ctl/xfibd/rib/ptree.h has it too). */
typedef unsigned __int128 xfib_u128;
#endif

/*
 * Defined here so callers can embed it; the pool is private to
 * ctl/xfibd/fib/trie6.c (tests look at it).
 */
struct trie6 {
	__u32 *tbl24;    /* XFIB_TRIE6_TBL24_ENTRIES entries */
	struct grpool pool; /* the tbl8 groups */
};

/*
 * Takes over tbl24 (XFIB_TRIE6_TBL24_ENTRIES entries) and tbl8 (ngroups
 * groups of XFIB_TRIE6_GROUP_ENTRIES entries; may be NULL if ngroups is 0)
 * and clears them: every address has no route, every group is free. The
 * tables must not be published to readers yet. Returns 0, -EINVAL
 * (ngroups above XFIB_TRIE6_GROUPS_MAX, missing table) or -ENOMEM.
 */
int trie6_init(struct trie6 *t, __u32 *tbl24, __u32 *tbl8, __u32 ngroups);
/* The same for tables known to be all zero already: no clearing (see
 * grpool_init()). */
int trie6_init_zeroed(struct trie6 *t, __u32 *tbl24, __u32 *tbl8,
		      __u32 ngroups);
/* Frees the allocator state; the tables stay the caller's. */
void trie6_fini(struct trie6 *t);

/*
 * Gives every address of [first, last] (inclusive) the nexthop nh, with
 * readers running: addresses outside the range keep their answer at every
 * instant, each address inside moves from its old answer to nh in one
 * step. The groups the write may need are reserved first: -ENOSPC, with
 * nothing written, if the free groups cannot cover the worst case
 * (trie6_groups_needed()); groups retired by earlier writes do not count
 * until trie6_reclaim(). Returns 0, -ENOSPC or -EINVAL (first > last, nh
 * above XFIB_TRIE6_NH_MAX).
 */
int trie6_write_range(struct trie6 *t, xfib_u128 first, xfib_u128 last,
		      __u32 nh);
/*
 * Worst-case number of groups one trie6_write_range(first, last) takes on
 * the table as it is now (at most 2 * XFIB_TRIE6_MAX_LEVELS). It depends
 * on the current table: a write can collapse a group that a later write
 * splits again, so the sum over several writes computed up front is not a
 * bound for the batch. trie6_write_range() checks it for each write; a
 * batch that must be all-or-nothing can reserve 2 * XFIB_TRIE6_MAX_LEVELS
 * per write.
 */
__u32 trie6_groups_needed(const struct trie6 *t, xfib_u128 first,
			  xfib_u128 last);

/*
 * Rebuilds the whole table from the complete range list of ctl/ranges.h:
 * n >= 1 ranges, r[0] starts at ::, starts strictly increase, r[i] runs to
 * the start of r[i + 1] (the last one to the end of the space). Adjacent
 * ranges may share a nexthop. For a table readers do not see (after
 * trie6_init(), before publishing): entries are overwritten in place and
 * every group, retired or not, is reused. The result has a group exactly
 * where the answer below an entry is not uniform, the same layout the
 * incremental writes maintain. Returns 0, -EINVAL (malformed list, nh
 * above XFIB_TRIE6_NH_MAX) or -ENOSPC (the pool is too small; the tables
 * then hold a partial build and must be rebuilt or cleared).
 */
int trie6_build(struct trie6 *t, const struct xfib_bs6_range *r, size_t n);

/*
 * Call once every reader that could have seen the table before the last
 * write has finished, i.e. after an RCU grace period (in the daemon, an
 * update of a map-in-map waits for one): the groups retired by the writes
 * so far become free.
 */
void trie6_reclaim(struct trie6 *t);

/* Groups reachable from tbl24. */
__u32 trie6_groups_used(const struct trie6 *t);
/* Groups waiting for trie6_reclaim(). */
__u32 trie6_groups_retired(const struct trie6 *t);

#endif /* XFIB_TRIE6_H */
