/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The poptrie6 builder: sorted IPv6 ranges into one slot of the direct,
 * node and leaf tables (layout: include/xfib/lookup_poptrie6.h).
 */
#ifndef XFIB_POPTRIE6_H
#define XFIB_POPTRIE6_H

#include <stddef.h>
#include <linux/types.h>

#include "xfib/maps.h"
#include "xfib/lookup_poptrie6.h"

/* One slot's part of each table, and their capacities. */
struct pt6_slot {
	__u32 *direct;                /* XFIB_PT6_TOP entries */
	struct xfib_pt6_node *nodes;
	size_t node_cap;
	__u32 *leaves;
	size_t leaf_cap;
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

/* Bytes a slot with this usage takes. */
static inline __u64 pt6_bytes(const struct pt6_usage *u)
{
	return (__u64)XFIB_PT6_TOP * sizeof(__u32) +
	       u->nodes * sizeof(struct xfib_pt6_node) +
	       u->leaves * sizeof(__u32);
}

#endif /* XFIB_POPTRIE6_H */
