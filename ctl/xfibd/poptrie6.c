// SPDX-License-Identifier: GPL-2.0-only
/*
 * The poptrie6 builder (poptrie6.h). One pass over the /18 chunks of the
 * direct table; a chunk that one range covers gets its answer in the
 * direct entry, any other a node, built depth first: a node decides for
 * each of its 64 positions whether one range covers it (a leaf) or not
 * (a child), reserves its children as one block, appends its leaf runs,
 * then builds each child. The ranges are walked forward from the one
 * holding the node's first address, so a build costs O(ranges * depth)
 * plus 64 steps per node.
 */
#include <errno.h>
#include <stdbool.h>

#include "poptrie6.h"

typedef unsigned __int128 u128;

struct pt6_bld {
	const struct xfib_bs6_range *r;
	size_t n;
	struct pt6_slot *s;
	size_t node_cap, leaf_cap;
	struct pt6_usage use;
};

static u128 range_start(const struct pt6_bld *b, size_t i)
{
	return (u128)b->r[i].hi << 64 | b->r[i].lo;
}

/* The range holding address a, searching forward from range i. */
static size_t range_at(const struct pt6_bld *b, size_t i, u128 a)
{
	while (i + 1 < b->n && range_start(b, i + 1) <= a)
		i++;
	return i;
}

/* Whether range i, which holds the span's first address, holds its last. */
static bool range_covers(const struct pt6_bld *b, size_t i, u128 last)
{
	return i + 1 == b->n || range_start(b, i + 1) > last;
}

/*
 * Builds node idx (already reserved), whose 6 bits start at bit o of the
 * address (from the top) and whose first address is base, held by range
 * i. Positions past the address's last bit repeat the one above them.
 */
static int pt6_node(struct pt6_bld *b, __u32 idx, unsigned int o, u128 base,
		    size_t i)
{
	unsigned int rem = 128 - o, k;
	size_t at[64], nchild = 0, nleaf = 0;
	struct xfib_pt6_node nd = { 0 };
	__u32 prev = 0;
	int err;

	nd.base_leaf = b->use.leaves;
	for (k = 0; k < 64; k++) {
		u128 a, last;

		if (rem >= XFIB_PT6_STRIDE) {
			a = base + ((u128)k << (rem - XFIB_PT6_STRIDE));
			last = a + (((u128)1 << (rem - XFIB_PT6_STRIDE)) - 1);
		} else {
			a = base + (k >> (XFIB_PT6_STRIDE - rem));
			last = a;
		}
		i = range_at(b, i, a);
		at[k] = i;
		if (!range_covers(b, i, last)) {
			nd.vec |= 1ull << k;
			nchild++;
			continue;
		}
		if (nleaf && b->r[i].nh == prev)
			continue;
		if (b->use.leaves >= b->leaf_cap)
			return -ENOSPC;
		nd.leafvec |= 1ull << k;
		prev = b->r[i].nh;
		b->s->leaves[b->use.leaves++] = prev;
		nleaf++;
	}
	if (b->use.nodes + nchild > b->node_cap)
		return -ENOSPC;
	nd.base_child = b->use.nodes;
	b->use.nodes += nchild;
	b->s->nodes[idx] = nd;
	for (k = 0; k < 64; k++) {
		if (!(nd.vec & (1ull << k)))
			continue;
		err = pt6_node(b, nd.base_child++, o + XFIB_PT6_STRIDE,
			       base + ((u128)k << (rem - XFIB_PT6_STRIDE)), at[k]);
		if (err)
			return err;
	}
	return 0;
}

static int pt6_check(const struct xfib_bs6_range *r, size_t n)
{
	size_t i;

	if (!n || r[0].hi || r[0].lo)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (r[i].nh & XFIB_PT6_LEAF)
			return -ERANGE;
		if (i && (r[i].hi < r[i - 1].hi ||
			  (r[i].hi == r[i - 1].hi && r[i].lo <= r[i - 1].lo)))
			return -EINVAL;
	}
	return 0;
}

int pt6_build(const struct xfib_bs6_range *r, size_t n, struct pt6_slot *s,
	      struct pt6_usage *use)
{
	const unsigned int chunk = 128 - XFIB_PT6_TOP_BITS;
	struct pt6_bld b = { .r = r, .n = n, .s = s };
	size_t i = 0;
	__u32 c;
	int err;

	err = pt6_check(r, n);
	if (err)
		return err;
	b.node_cap = s->node_cap < XFIB_PT6_SLOT_NODES ? s->node_cap :
							  XFIB_PT6_SLOT_NODES;
	b.leaf_cap = s->leaf_cap < XFIB_PT6_SLOT_LEAVES ? s->leaf_cap :
							   XFIB_PT6_SLOT_LEAVES;
	for (c = 0; c < XFIB_PT6_TOP; c++) {
		u128 a = (u128)c << chunk;

		i = range_at(&b, i, a);
		if (range_covers(&b, i, a + (((u128)1 << chunk) - 1))) {
			s->direct[c] = XFIB_PT6_LEAF | r[i].nh;
			continue;
		}
		if (b.use.nodes >= b.node_cap)
			return -ENOSPC;
		s->direct[c] = b.use.nodes++;
		err = pt6_node(&b, s->direct[c], XFIB_PT6_TOP_BITS, a, i);
		if (err)
			return err;
	}
	*use = b.use;
	return 0;
}
