/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dir24_8 update side: builds and edits the tables that
 * include/xfib/lookup_dir24.h reads, in memory the caller provides (the
 * daemon passes the mmap()ed BPF maps, tests plain allocations), while
 * readers may be looking up concurrently. The rules that make that safe
 * are at the top of dir24.c.
 *
 * All addresses are host order. Nexthop indexes must be at most
 * XFIB_DIR24_NH_MAX. One writer at a time: callers serialise.
 */
#ifndef XFIB_DIR24_H
#define XFIB_DIR24_H

#include <stddef.h>
#include <linux/types.h>
#include "xfib/maps.h"
#include "xfib/lookup_dir24.h"
#include "grpool.h"

/*
 * The tables are viewed as __u32 arrays; the BPF maps store them as __u64
 * values, low half first. The two agree only on little-endian machines.
 */
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "dir24: the __u32 view of the __u64 map values assumes little endian"
#endif

struct dir24 {
	__u32 *tbl24;   /* XFIB_DIR24_TBL24_ENTRIES entries */
	struct grpool pool; /* the tbl8 groups */
};

/*
 * Takes over tbl24 and tbl8 (ngroups groups, at most XFIB_DIR24_GROUPS_MAX;
 * tbl8 may be NULL when ngroups is 0) and clears both: every entry "no
 * route", every group free. The tables must not be reachable by readers
 * yet. Returns 0, -EINVAL or -ENOMEM.
 */
int dir24_init(struct dir24 *d, __u32 *tbl24, __u32 *tbl8, __u32 ngroups);
/* The same for tables known to be all zero already: no clearing (see
 * grpool_init()). */
int dir24_init_zeroed(struct dir24 *d, __u32 *tbl24, __u32 *tbl8,
		      __u32 ngroups);

/* Frees the allocator state only; the tables belong to the caller. */
void dir24_fini(struct dir24 *d);

/*
 * Rewrites [first, last] (inclusive) to nh, safely for concurrent
 * readers: addresses outside the range read their old value throughout,
 * addresses inside read the old or the new one. Needs up to two free
 * groups (one at each end that cuts into a /24); checks for them before
 * writing anything. Returns 0, -EINVAL (first > last, nh above
 * XFIB_DIR24_NH_MAX) or -ENOSPC (not enough free groups: nothing written).
 */
int dir24_write_range(struct dir24 *d, __u32 first, __u32 last, __u32 nh);

/*
 * Free groups that writing r[0..n-1] in order takes: range i runs from
 * r[i].start to r[i + 1].start - 1, the last one to span_last. The
 * ranges must be sorted by start and not overlap (as after cutting the
 * output of ctl/ranges.h to the addresses a change covers); adjacent
 * ranges may share a nexthop. Exact for the tables as they stand.
 * O(n + 256 per /24 cut into).
 *
 * For a batch, the daemon reserves before writing anything (and rebuilds
 * with a larger pool if the sum exceeds dir24_groups_free()). Spans whose
 * writes could interact must be one span: merge spans that overlap or cut
 * into the same /24 (the addresses between them keep their values, and
 * rewriting a value an entry already holds changes nothing and takes no
 * group). The counts of spans that share no /24 add up exactly.
 */
__u32 dir24_groups_needed(const struct dir24 *d, const struct xfib_bs4_range *r,
			  size_t n, __u32 span_last);

/*
 * Writes the whole table from the complete sorted range list of
 * ctl/ranges.h (r[0].start == 0, starts strictly increasing, the last
 * range running to 255.255.255.255) in O(n + 2^24) time. For tables no
 * reader can reach (a standby instance): entries are written in no
 * particular order and every group is considered free beforehand, retired
 * ones included. Returns 0, -EINVAL (malformed list, nexthop too large)
 * or -ENOSPC (the pool is too small: nothing written).
 */
int dir24_build(struct dir24 *d, const struct xfib_bs4_range *r, size_t n);

/*
 * Makes the groups retired since the last call free again. Call only
 * after an RCU grace period has passed since the updates that retired
 * them (no reader can still be inside one of them).
 */
void dir24_reclaim(struct dir24 *d);

/* Groups reachable from tbl24. */
__u32 dir24_groups_used(const struct dir24 *d);
/* Groups unlinked and waiting for dir24_reclaim(). */
__u32 dir24_groups_retired(const struct dir24 *d);
/* Groups available to the next writes. */
__u32 dir24_groups_free(const struct dir24 *d);

#endif /* XFIB_DIR24_H */
