// SPDX-License-Identifier: GPL-2.0-only
/*
 * The poptrie6 builder (poptrie6.h). One pass over the /18 chunks of the
 * direct table; a chunk that one range covers gets its answer in the
 * direct entry, any other a node, built depth first: a node decides for
 * each of its 64 positions whether one range covers it (a leaf) or not
 * (a child), reserves its children as one block, appends its leaf runs,
 * then builds each child. A node with one child and one answer elsewhere
 * starts a chain: the links that follow with the same answer become one
 * skip node. The ranges are walked forward from the one
 * holding the node's first address, so a build costs O(ranges * depth)
 * plus 64 steps per node.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

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

/* One node's 64 positions, before anything is written. */
struct pt6_shape {
	__u64 vec, leafvec;
	unsigned int nleaf;
	__u32 leaf[64];  /* the answer of each run of leaves, in order */
	size_t at[64];   /* the range holding each position's first address */
};

/* The first address of position k of the node at bit o from base. */
static u128 pos_addr(unsigned int o, u128 base, unsigned int k)
{
	unsigned int rem = 128 - o;

	/* Positions past the address's last bit repeat the one above. */
	if (rem < XFIB_PT6_STRIDE)
		return base + (k >> (XFIB_PT6_STRIDE - rem));
	return base + ((u128)k << (rem - XFIB_PT6_STRIDE));
}

/*
 * The node whose 6 bits start at bit o of the address (from the top),
 * whose first address is base, held by range i. A range that covers a
 * position covers the positions up to its end in one step, so a sparse
 * node costs its ranges, not its 64 positions.
 */
static void pt6_shape(const struct pt6_bld *b, unsigned int o, u128 base,
		      size_t i, struct pt6_shape *sh)
{
	unsigned int rem = 128 - o, k = 0, next;

	sh->vec = sh->leafvec = 0;
	sh->nleaf = 0;
	while (k < 64) {
		u128 a = pos_addr(o, base, k), last = a, end;

		if (rem >= XFIB_PT6_STRIDE)
			last += ((u128)1 << (rem - XFIB_PT6_STRIDE)) - 1;
		i = range_at(b, i, a);
		if (!range_covers(b, i, last)) {
			sh->vec |= 1ull << k;
			sh->at[k++] = i;
			continue;
		}
		if (!sh->nleaf || b->r[i].nh != sh->leaf[sh->nleaf - 1]) {
			sh->leafvec |= 1ull << k;
			sh->leaf[sh->nleaf++] = b->r[i].nh;
		}
		/* On to the first position the range does not cover whole:
		 * the one holding the next range's start. */
		next = k + 1;
		if (rem >= XFIB_PT6_STRIDE) {
			if (i + 1 == b->n)
				next = 64;
			else if ((end = (range_start(b, i + 1) - base) >>
					(rem - XFIB_PT6_STRIDE)) < 64)
				next = (unsigned int)end;
			else
				next = 64;
		}
		k = next;
	}
}

/* One child, one answer everywhere else: a link of a chain. */
static bool shape_is_link(const struct pt6_shape *sh)
{
	return sh->nleaf == 1 && sh->vec && !(sh->vec & (sh->vec - 1));
}

static int pt6_node(struct pt6_bld *b, __u32 idx, unsigned int o, u128 base,
		    size_t i);
static int pt6_put(struct pt6_bld *b, __u32 idx, unsigned int o, u128 base,
		   struct pt6_shape *sh);

/*
 * Writes a skip node at idx for the chain that starts with sh (a link):
 * follows the links with the same other answer, up to 60 bits, then
 * builds the node below them.
 */
static int pt6_skip(struct pt6_bld *b, __u32 idx, unsigned int o, u128 base,
		    struct pt6_shape *sh)
{
	struct xfib_pt6_node nd = { .leafvec = sh->leaf[0] };
	unsigned int s = 0, k;
	bool shaped = false;
	__u64 bits = 0;

	while (s < XFIB_PT6_SKIP_BITS_MAX) {
		k = __builtin_ctzll(sh->vec);
		bits = bits << XFIB_PT6_STRIDE | k;
		s += XFIB_PT6_STRIDE;
		base = pos_addr(o, base, k);
		o += XFIB_PT6_STRIDE;
		if (s == XFIB_PT6_SKIP_BITS_MAX)
			break;
		pt6_shape(b, o, base, sh->at[k], sh);
		shaped = true;
		if (!shape_is_link(sh) || sh->leaf[0] != (__u32)nd.leafvec)
			break;
		shaped = false;
	}
	if (b->use.nodes >= b->node_cap)
		return -ENOSPC;
	nd.vec = bits << (64 - s);
	nd.base_leaf = XFIB_PT6_SKIP | s;
	nd.base_child = b->use.nodes++;
	b->s->nodes[idx] = nd;
	if (shaped)
		return pt6_put(b, nd.base_child, o, base, sh);
	return pt6_node(b, nd.base_child, o, base, sh->at[k]);
}

/* Writes node idx (already reserved) from its shape, then its children. */
static int pt6_put(struct pt6_bld *b, __u32 idx, unsigned int o, u128 base,
		   struct pt6_shape *sh)
{
	struct xfib_pt6_node nd = { .vec = sh->vec, .leafvec = sh->leafvec };
	size_t nchild = __builtin_popcountll(sh->vec);
	unsigned int k;
	int err;

	if (shape_is_link(sh) && o + XFIB_PT6_STRIDE < 128)
		return pt6_skip(b, idx, o, base, sh);
	if (b->use.leaves + sh->nleaf > b->leaf_cap ||
	    b->use.nodes + nchild > b->node_cap)
		return -ENOSPC;
	nd.base_leaf = b->use.leaves;
	memcpy(b->s->leaves + b->use.leaves, sh->leaf, sh->nleaf * sizeof(__u32));
	b->use.leaves += sh->nleaf;
	nd.base_child = b->use.nodes;
	b->use.nodes += nchild;
	b->s->nodes[idx] = nd;
	for (k = 0; k < 64; k++) {
		if (!(nd.vec & (1ull << k)))
			continue;
		err = pt6_node(b, nd.base_child++, o + XFIB_PT6_STRIDE,
			       pos_addr(o, base, k), sh->at[k]);
		if (err)
			return err;
	}
	return 0;
}

/* Builds node idx (already reserved) at bit o from base, held by range i. */
static int pt6_node(struct pt6_bld *b, __u32 idx, unsigned int o, u128 base,
		    size_t i)
{
	struct pt6_shape sh;

	pt6_shape(b, o, base, i, &sh);
	return pt6_put(b, idx, o, base, &sh);
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

static void pt6_caps(struct pt6_bld *b, const struct pt6_slot *s)
{
	b->node_cap = s->node_cap < XFIB_PT6_SLOT_NODES ? s->node_cap :
							  XFIB_PT6_SLOT_NODES;
	b->leaf_cap = s->leaf_cap < XFIB_PT6_SLOT_LEAVES ? s->leaf_cap :
							   XFIB_PT6_SLOT_LEAVES;
}

/* Direct entry c into *entry and its subtree, from range *i on. */
static int pt6_entry(struct pt6_bld *b, size_t *i, __u32 c, __u32 *entry)
{
	const unsigned int chunk = 128 - XFIB_PT6_TOP_BITS;
	u128 a = (u128)c << chunk;

	*i = range_at(b, *i, a);
	if (range_covers(b, *i, a + (((u128)1 << chunk) - 1))) {
		if (b->r[*i].nh & XFIB_PT6_LEAF)
			return -ERANGE;
		*entry = XFIB_PT6_LEAF | b->r[*i].nh;
		return 0;
	}
	if (b->use.nodes >= b->node_cap)
		return -ENOSPC;
	*entry = b->use.nodes++;
	return pt6_node(b, *entry, XFIB_PT6_TOP_BITS, a, *i);
}

int pt6_build_entry(const struct xfib_bs6_range *r, size_t n, __u32 c,
		    struct pt6_slot *s, struct pt6_usage *use, __u32 *entry)
{
	struct pt6_bld b = { .r = r, .n = n, .s = s };
	size_t i = 0;
	int err;

	pt6_caps(&b, s);
	err = pt6_entry(&b, &i, c, entry);
	*use = b.use;
	return err;
}

int pt6_build(const struct xfib_bs6_range *r, size_t n, struct pt6_slot *s,
	      struct pt6_usage *use)
{
	struct pt6_bld b = { .r = r, .n = n, .s = s };
	size_t i = 0;
	__u32 c;
	int err;

	err = pt6_check(r, n);
	if (err)
		return err;
	pt6_caps(&b, s);
	for (c = 0; c < XFIB_PT6_TOP; c++) {
		struct pt6_usage u0 = b.use;

		err = pt6_entry(&b, &i, c, &s->direct[c]);
		if (err)
			return err;
		if (s->ext)
			s->ext[c] = (struct pt6_ext){
				.leaf = u0.leaves,
				.nodes = b.use.nodes - u0.nodes,
				.leaves = b.use.leaves - u0.leaves,
			};
	}
	*use = b.use;
	return 0;
}
