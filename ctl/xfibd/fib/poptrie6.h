/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The poptrie6 builder: sorted IPv6 ranges into one slot of the direct,
 * node and leaf tables (layout: include/xfib/lookup_poptrie6.h).
 */
#ifndef XFIB_POPTRIE6_H
#define XFIB_POPTRIE6_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "xfib/maps.h"
#include "xfib/lookup_poptrie6.h"

/*
 * Where the subtree of a direct entry that is not an answer lies: a build
 * writes each entry's subtree depth first, so its nodes are the run
 * [direct entry, + nodes) and its leaves the run [leaf, + leaves).
 */
struct pt6_ext {
	__u32 leaf, nodes, leaves;
};

/* One slot's part of each table, and their capacities. */
struct pt6_slot {
	__u32 *direct;                /* XFIB_PT6_TOP entries */
	struct xfib_pt6_node *nodes;
	size_t node_cap;
	__u32 *leaves;
	size_t leaf_cap;
	struct pt6_ext *ext;          /* NULL, or XFIB_PT6_TOP: filled by builds */
};

/* What a build used. */
struct pt6_usage {
	size_t nodes, leaves;
};

/*
 * Fills the slot from n ranges sorted by start, the first at 0, covering
 * the whole address space. Plain stores: nothing reads the slot until it
 * is published. 0, -ENOSPC if the nodes or leaves do not fit (capacities
 * above the slot sizes of lookup_poptrie6.h count as those), -ERANGE for
 * a nexthop index with XFIB_PT6_LEAF set, -EINVAL for ranges that do not
 * start at 0 or are not sorted.
 */
int pt6_build(const struct xfib_bs6_range *r, size_t n, struct pt6_slot *s,
	      struct pt6_usage *use);

/*
 * The subtree of direct entry c alone, from n ranges sorted by start that
 * cover the entry's /18, the first starting at or before it: its nodes
 * from s->nodes[0] and its leaves from s->leaves[0] (indexes relative to
 * those), the direct entry's value in *entry (node 0, or an answer), what
 * it took in *use. Errors as pt6_build (no -EINVAL checks).
 */
int pt6_build_entry(const struct xfib_bs6_range *r, size_t n, __u32 c,
		    struct pt6_slot *s, struct pt6_usage *use, __u32 *entry);

/* Bytes a slot with this usage takes. */
static inline __u64 pt6_bytes(const struct pt6_usage *u)
{
	return (__u64)XFIB_PT6_TOP * sizeof(__u32) +
	       u->nodes * sizeof(struct xfib_pt6_node) +
	       u->leaves * sizeof(__u32);
}

/* ---- updates in place (poptrie6_update.c) ---------------------------- */

/* Runs of free or retired entries of the node or the leaf table. */
struct pt6_run {
	__u32 at, len;
};

struct pt6_runs {
	struct pt6_run *v;
	size_t n, cap;
};

/* A changed span of the address space: [first, last] -> nh. */
struct pt6_change {
	unsigned __int128 first, last;
	__u32 nh;
};

/*
 * A published slot that changes in place. Each write of a direct entry's
 * subtree goes into free runs, the entry is switched with one 32-bit
 * store, and the runs of the old subtree are retired: they are free again
 * only after pt6_reclaim(), which the caller calls after a grace period.
 */
struct pt6_state {
	struct pt6_slot s;           /* s.ext: owned, one per direct entry */
	struct pt6_usage use;        /* entries that packets can reach */
	size_t node_top, leaf_top;   /* no entry at or above was written */
	struct pt6_runs free[2];     /* [0] nodes, [1] leaves: address order */
	struct pt6_runs retired[2];
	/* scratch for one entry: its ranges before and after, its build */
	struct xfib_bs6_range *old, *nw;
	size_t nold, nnw, old_cap, nw_cap;
	struct xfib_pt6_node *sn;
	__u32 *sl;
	size_t sn_cap, sl_cap;
	__u64 entries_written;       /* direct entries rewritten, ever */
	/* ranges added less ranges removed by updates, counted per direct
	 * entry (an estimate of the change in the table's ranges) */
	long long ranges_delta;
};

/*
 * pt6_build into the slot s, keeping what updates need. Errors as
 * pt6_build, -ENOMEM.
 */
int pt6_state_build(struct pt6_state *st, const struct pt6_slot *s,
		    const struct xfib_bs6_range *r, size_t n);
void pt6_state_fini(struct pt6_state *st);
/*
 * Applies n changed spans (their current answers; in any order, and
 * overlapping ones agree where they overlap; c is sorted in place). Each
 * direct entry is rewritten at most once, and every store leaves the
 * slot consistent. -ENOSPC: no free run is long enough (the free space is
 * short or fragmented): the caller rebuilds into the other slot, which
 * compacts. -E2BIG, before anything is written: in a table of
 * PT6_REWRITE_MIN_NODES nodes or more, the subtrees to rewrite hold more
 * than half of them, and a full build is faster. -ERANGE, -ENOMEM.
 * Entries rewritten before an error stay.
 */
#define PT6_REWRITE_MIN_NODES 65536
int pt6_update(struct pt6_state *st, struct pt6_change *c, size_t n);
bool pt6_has_retired(const struct pt6_state *st);
/* After a grace period: the retired runs are free. */
void pt6_reclaim(struct pt6_state *st);
/* Entries in the free runs of table t (0 nodes, 1 leaves). */
size_t pt6_free_entries(const struct pt6_state *st, int t);

#endif /* XFIB_POPTRIE6_H */
