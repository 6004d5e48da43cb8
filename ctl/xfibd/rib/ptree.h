/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The daemon's control-plane prefix tree: (prefix, length) -> nexthop index
 * for one family, the source from which the lookup structures (DIR-24-8,
 * the IPv6 multibit trie, bsearch ranges) are written. Besides exact-match
 * updates and a longest-prefix-match lookup it answers "what does longest
 * prefix match give over this prefix's span", as maximal ranges, which is
 * what an incremental update of a lookup structure rewrites when one
 * prefix changes.
 *
 * Addresses are network-order byte arrays of 4 (IPv4) or 16 (IPv6) bytes.
 * Range bounds are host-order integers (IPv4 in the low 32 bits). The tree
 * is not thread-safe: one writer, and no reader while it writes.
 */
#ifndef XFIB_PTREE_H
#define XFIB_PTREE_H

#include <stddef.h>
#include <linux/types.h>

typedef unsigned __int128 xfib_u128;

/*
 * Defined here so callers can embed it; the fields are private to
 * ctl/xfibd/rib/ptree.c. Nodes live in fixed-size chunks and refer to each other by
 * 32-bit index, 0 meaning none.
 */
struct ptree {
	unsigned char **chunks;
	__u32 nchunks;    /* chunks allocated */
	__u32 chunks_cap; /* slots in chunks[] */
	__u32 root;
	__u32 free_head;  /* freed nodes, linked through child[0] */
	__u32 next_fresh; /* first never-used index */
	__u32 bits;       /* 32 or 128 */
	__u32 stride;     /* bytes per node: depends on the key width */
	size_t routes;
	size_t nodes;     /* routes plus glue nodes */
};

/* bits = 32 (IPv4) or 128 (IPv6). Returns 0 or -EINVAL. Allocates nothing. */
int ptree_init(struct ptree *t, int bits);

/* Frees every node; t may be initialised again afterwards. */
void ptree_fini(struct ptree *t);

/*
 * Inserts or updates (addr, plen) -> nh. Host bits beyond plen are
 * ignored; any nh is valid, including 0. Returns 1 if inserted, 0 if an
 * existing route was updated, -EINVAL if plen exceeds the family's width,
 * -ENOMEM (the tree is then unchanged).
 */
int ptree_set(struct ptree *t, const __u8 *addr, unsigned int plen, __u32 nh);

/* As ptree_set; when it returns 0 (an update), *old is the nexthop the
 * route had: one walk where a get and a set take two. */
int ptree_set_old(struct ptree *t, const __u8 *addr, unsigned int plen,
		  __u32 nh, __u32 *old);

/* Removes (addr, plen). Returns 0, -ENOENT if absent, -EINVAL on a bad plen. */
int ptree_del(struct ptree *t, const __u8 *addr, unsigned int plen);

/* Exact match: 0 and *nh, -ENOENT if absent, -EINVAL on a bad plen. */
int ptree_get(const struct ptree *t, const __u8 *addr, unsigned int plen,
	      __u32 *nh);

/*
 * Longest-prefix match of one address. Returns the nexthop of the longest
 * prefix covering addr, or def when none does. If plen_out is not NULL it
 * receives the length of that prefix, or 0 when nothing matched (tell the
 * two /0 cases apart by def, or by ptree_get of the default route).
 */
__u32 ptree_lookup(const struct ptree *t, const __u8 *addr,
		   unsigned int *plen_out, __u32 def);

/*
 * Calls emit(ctx, first, last, nh) for consecutive maximal ranges that
 * together cover exactly the span of (addr, plen) (its first to its last
 * address, inclusive), in ascending order, where nh is the longest-prefix
 * match result over all prefixes in the tree (including those containing
 * (addr, plen)) or def where no prefix covers the address. Adjacent ranges
 * with equal nh are merged, so neighbouring calls always differ in nh.
 * Host bits of addr beyond plen are ignored.
 *
 * Costs O(depth + prefixes inside the span). The tree must not be
 * modified from emit. Returns 0 once the span is covered, emit's value as
 * soon as emit returns non-zero (no further calls), or -EINVAL on a bad
 * plen (no calls).
 */
int ptree_walk_span(const struct ptree *t, const __u8 *addr, unsigned int plen,
		    __u32 def,
		    int (*emit)(void *ctx, xfib_u128 first, xfib_u128 last,
				__u32 nh),
		    void *ctx);

/*
 * As ptree_walk_span, but each range's value is ptree_plen_value(nh,
 * len): its nexthop and the length of the prefix that answers for it (0
 * where none does), and ranges are merged only where both are equal.
 * For tables whose values fit 24 bits.
 */
static inline __u32 ptree_plen_value(__u32 nh, unsigned int len)
{
	return (__u32)len << 24 | (nh & 0xffffffu);
}

int ptree_walk_span_plen(const struct ptree *t, const __u8 *addr,
			 unsigned int plen, __u32 def,
			 int (*emit)(void *ctx, xfib_u128 first,
				     xfib_u128 last, __u32 v),
			 void *ctx);
/* Routes held. */
size_t ptree_count(const struct ptree *t);

/*
 * Heap bytes held by the tree: node chunks (including freed nodes kept for
 * reuse) and the chunk table. sizeof(struct ptree) itself is not counted.
 */
size_t ptree_mem_bytes(const struct ptree *t);

#endif /* XFIB_PTREE_H */
