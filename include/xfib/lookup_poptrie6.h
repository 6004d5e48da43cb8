/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * poptrie6: IPv6 longest-prefix match in a compressed multibit trie, in
 * the manner of Poptrie (Asai, Ohara: "Poptrie: A Compressed Trie with
 * Population Count for Fast and Scalable Software IP Routing Table
 * Lookup", SIGCOMM 2015).
 *
 * The direct table has one __u32 entry per /18, indexed by the top 18
 * bits of the address: with XFIB_PT6_LEAF set, the low bits are the
 * answer for the whole /18 (a nexthop index, 0 for no route); otherwise
 * they are the index of the node that covers it.
 *
 * A node covers the next 6 bits of the address: 64 positions. Bit k of
 * vec says position k leads to a child node; the children of a node are
 * consecutive in the node table from base_child, in the order of their
 * positions, so child k is base_child + popcount(vec & mask(k)) - 1, with
 * mask(k) the bits 0..k. Every other position is a leaf: the answer for
 * every address below it (prefixes are leaf-pushed, so the walk stops at
 * the first leaf and never backtracks). Runs of leaf positions with the
 * same answer share one leaf: bit k of leafvec is set where a leaf
 * position's answer differs from the previous leaf position's (child
 * positions in between do not count), and at the first leaf position.
 * The leaves of a node are consecutive in the leaf table from base_leaf,
 * so the leaf of position k is base_leaf + popcount(leafvec & mask(k)) - 1.
 *
 * 18 + 6 * 19 > 128: a node of the 19th level holds the last two address
 * bits at the top of its 6; a lookup shifts zeros in below the address,
 * so only the positions that are multiples of 16 are ever read there.
 *
 * Path compression: a chain of nodes that each have one child and one
 * answer for all their other positions, the same answer along the chain
 * (a prefix alone under a shorter one, down to its /48 or /128), is one
 * skip node: XFIB_PT6_SKIP in base_leaf with the chain's length in bits
 * (6 per node, up to 60) in the low bits, the address bits that lead
 * down the chain left-aligned in vec, the other answer in leafvec and the
 * node below the chain in base_child. An address whose next bits match
 * goes on below the chain, any other has the answer.
 *
 * Memory: the direct table is 2^18 entries (1 MiB per slot); a node is
 * 24 bytes, a leaf 4. The builder (ctl/xfibd/fib/poptrie6.c) reports how
 * many of each a table takes.
 *
 * Every table has two slots (active and standby) in fixed-size BPF array
 * maps, so the verifier inlines every read: direct and leaves are arrays
 * of __u64 values holding two __u32 entries each (the layout
 * lookup_dir24.h describes), nodes an array of struct xfib_pt6_node.
 * Indexes inside the tables are relative to their slot. A build fills
 * the standby slot; one store of the family's xfib_active word publishes
 * it, so a packet never sees a half-built slot.
 *
 * The same code runs in the XDP program and in userspace. The includer
 * defines XFIB_U32_AT(table, index) as for lookup_dir24.h and
 * XFIB_TBL_AT(table, index) as for lookup_bsearch.h (a pointer to the
 * value at index, NULL past the end), then includes this header; without
 * them the header only describes the layout.
 */
#ifndef XFIB_LOOKUP_POPTRIE6_H
#define XFIB_LOOKUP_POPTRIE6_H

#include <linux/types.h>

struct xfib_pt6_node {
	__u64 vec;        /* bit k: position k leads to a child node */
	__u64 leafvec;    /* bit k: position k starts a run of leaves */
	__u32 base_leaf;  /* first leaf of the node (slot relative) */
	__u32 base_child; /* first child of the node (slot relative) */
};
_Static_assert(sizeof(struct xfib_pt6_node) == 24, "xfib_pt6_node size");

#define XFIB_PT6_TOP_BITS 18
#define XFIB_PT6_TOP (1u << XFIB_PT6_TOP_BITS)
#define XFIB_PT6_STRIDE 6
/* Node levels below the direct table: ceil((128 - 18) / 6). */
#define XFIB_PT6_LEVELS 19
/* A direct entry with this bit is an answer; without, a node index. */
#define XFIB_PT6_LEAF 0x80000000u
/* In base_leaf: a skip node; the low bits are the bits it skips. */
#define XFIB_PT6_SKIP 0x80000000u
#define XFIB_PT6_SKIP_BITS_MAX 60

/*
 * Per slot: nodes (24 B each) and leaves (4 B each). Internet-shaped
 * tables take about 0.85 nodes and 1.4 leaves per range (1.2 nodes and 2
 * leaves per prefix): room for some 400k prefixes, in 12 + 4 MiB per
 * slot.
 */
#define XFIB_PT6_NODE_BITS 19
#define XFIB_PT6_SLOT_NODES (1u << XFIB_PT6_NODE_BITS)
#define XFIB_PT6_LEAF_BITS 20
#define XFIB_PT6_SLOT_LEAVES (1u << XFIB_PT6_LEAF_BITS)

/* Sizes of the BPF array maps, both slots: __u64 values (two entries
 * each) for direct and leaves, one node per value for nodes. */
#define XFIB_PT6_DIRECT_VALUES XFIB_PT6_TOP
#define XFIB_PT6_NODE_VALUES (2 * XFIB_PT6_SLOT_NODES)
#define XFIB_PT6_LEAF_VALUES XFIB_PT6_SLOT_LEAVES

#endif /* XFIB_LOOKUP_POPTRIE6_H */

#if defined(XFIB_U32_AT) && defined(XFIB_TBL_AT) && \
	!defined(XFIB_LOOKUP_POPTRIE6_FN)
#define XFIB_LOOKUP_POPTRIE6_FN

#ifndef XFIB_INLINE
#define XFIB_INLINE static inline __attribute__((always_inline))
#endif

#if defined(__clang__)
#define XFIB_PT6_UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#define XFIB_PT6_UNROLL _Pragma("GCC unroll 19")
#else
#define XFIB_PT6_UNROLL
#endif

/*
 * The bits set in x. BPF has no population count instruction: this is
 * the branch-free SWAR count, 12 ALU instructions and one multiply.
 */
XFIB_INLINE __u32 xfib_popcount64(__u64 x)
{
	x = x - ((x >> 1) & 0x5555555555555555ull);
	x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (__u32)((x * 0x0101010101010101ull) >> 56);
}

/*
 * hi, lo: the address in host order, as two halves. slot from the
 * family's xfib_active word. Returns the nexthop index, 0 for no route.
 */
XFIB_INLINE __u32 xfib_pt6_lookup(void *direct, void *nodes, void *leaves,
				  __u32 slot, __u64 hi, __u64 lo)
{
	__u32 nbase = (slot & 1) << XFIB_PT6_NODE_BITS;
	__u32 lbase = (slot & 1) << XFIB_PT6_LEAF_BITS;
	__u32 e = XFIB_U32_AT(direct, ((slot & 1) << XFIB_PT6_TOP_BITS) |
					      (__u32)(hi >> (64 - XFIB_PT6_TOP_BITS)));
	int i;

	if (e & XFIB_PT6_LEAF)
		return e & ~XFIB_PT6_LEAF;
	hi = hi << XFIB_PT6_TOP_BITS | lo >> (64 - XFIB_PT6_TOP_BITS);
	lo <<= XFIB_PT6_TOP_BITS;
	XFIB_PT6_UNROLL
	for (i = 0; i < XFIB_PT6_LEVELS; i++) {
		const struct xfib_pt6_node *nd = XFIB_TBL_AT(nodes, nbase | e);
		__u32 v = (__u32)(hi >> (64 - XFIB_PT6_STRIDE)), s;
		/* bits 0..v; for v = 63 the shift drops out and -1 is all */
		__u64 mask = (2ull << v) - 1;

		if (!nd)
			return 0;
		if (nd->base_leaf & XFIB_PT6_SKIP) {
			/* 6..60, so neither shift below is by 64 */
			s = nd->base_leaf & 63;
			if (s < XFIB_PT6_STRIDE || s > XFIB_PT6_SKIP_BITS_MAX)
				return 0;
			if ((hi & (~0ull << (64 - s))) != nd->vec)
				return (__u32)nd->leafvec;
			hi = hi << s | lo >> (64 - s);
			lo <<= s;
			e = nd->base_child;
			continue;
		}
		if (!((nd->vec >> v) & 1))
			return XFIB_U32_AT(leaves,
					   lbase | (nd->base_leaf - 1 +
						    xfib_popcount64(nd->leafvec & mask)));
		e = nd->base_child - 1 + xfib_popcount64(nd->vec & mask);
		hi = hi << XFIB_PT6_STRIDE | lo >> (64 - XFIB_PT6_STRIDE);
		lo <<= XFIB_PT6_STRIDE;
	}
	/* The last level never holds a child: this table is corrupt. */
	return 0;
}

#endif /* XFIB_U32_AT && XFIB_TBL_AT && !XFIB_LOOKUP_POPTRIE6_FN */
