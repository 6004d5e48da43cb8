// SPDX-License-Identifier: GPL-2.0-only
/*
 * Walking the whole live instance: every range of addresses with its
 * nexthop, in address order, whatever the algorithm (xfibctl routes).
 */

#include "dplookup.h"
#include "dpl_priv.h"


/* ---- walking the whole instance ---------------------------------------- */

struct walk {
	const struct dpl *d;
	dpl_walk_fn fn;
	void *arg;
	bool any;
	__u32 last;
	int err;
};

static void walk_emit(struct walk *w, dpl_addr start, __u32 nh)
{
	if (w->err || (w->any && nh == w->last))
		return;
	w->any = true;
	w->last = nh;
	w->err = w->fn(start, nh, w->arg);
}

/*
 * count entries of a dir24_8/trie6 table from index first, entry j
 * answering for the 2^bits addresses from base + (j << bits); a group
 * entry leads to 256 entries of 2^(bits - 8) addresses each.
 */
static void walk_entries(struct walk *w, struct dpl_tbl *tbl, __u32 first,
			 __u32 count, dpl_addr base, unsigned int bits)
{
	__u32 j;

	for (j = 0; j < count && !w->err; j++) {
		__u32 e = dpl_u32_at(tbl, first + j);
		dpl_addr cell = base + ((dpl_addr)j << bits);

		/* XFIB_DIR24_EXT and XFIB_TRIE6_EXT are the same bit. */
		if (!(e & XFIB_TRIE6_EXT) || bits < XFIB_TRIE6_GROUP_BITS)
			walk_emit(w, cell, e & XFIB_TRIE6_EXT ? XFIB_NH_IDX_NONE : e);
		else
			walk_entries(w, &((struct dpl *)w->d)->t8,
				     XFIB_TRIE6_GROUP(e) << XFIB_TRIE6_GROUP_BITS,
				     XFIB_TRIE6_GROUP_ENTRIES, cell,
				     bits - XFIB_TRIE6_GROUP_BITS);
	}
}

/* Every chunk of the dxr slot: its one answer or its run of entries. */
static void walk_dxr(struct walk *w, struct dpl *d)
{
	__u32 slot = d->act.slot & 1, c;

	for (c = 0; c < XFIB_DXR_CHUNKS && !w->err; c++) {
		__u32 e = dpl_u32_at(&d->dxr_direct, (slot << XFIB_DXR_CHUNK_BITS) | c);
		__u32 pos, n, i;

		if (!(e & XFIB_DXR_RANGE)) {
			walk_emit(w, (dpl_addr)c << XFIB_DXR_CHUNK_BITS, e);
			continue;
		}
		pos = (slot << XFIB_DXR_BASE_BITS) | (e & XFIB_DXR_BASE_MASK);
		n = (e & ~XFIB_DXR_RANGE) >> XFIB_DXR_BASE_BITS;
		if (!n)
			n = dpl_u32_at(&d->dxr_ranges, pos++);
		if (n > XFIB_DXR_CHUNKS) /* a slot being rewritten */
			n = XFIB_DXR_CHUNKS;
		for (i = 0; i < n && !w->err; i++) {
			__u32 r = dpl_u32_at(&d->dxr_ranges, pos + i);

			walk_emit(w, ((dpl_addr)c << XFIB_DXR_CHUNK_BITS) | (r >> 16),
				  r & 0xffff);
		}
	}
}

static void walk_pt6_node(struct walk *w, struct dpl *d, __u32 idx,
			  unsigned int o, dpl_addr base, unsigned int depth);

/* A skip node at bit o from base: its answer around the chain's end. */
static void walk_pt6_skip(struct walk *w, struct dpl *d,
			  const struct xfib_pt6_node *nd, unsigned int o,
			  dpl_addr base, unsigned int depth)
{
	unsigned int s = nd->base_leaf & 63, below = 128 - o - s;
	dpl_addr first, last;

	if (s < XFIB_PT6_STRIDE || s > XFIB_PT6_SKIP_BITS_MAX || o + s > 126)
		return; /* a slot being rewritten */
	first = base | (dpl_addr)(nd->vec >> (64 - s)) << below;
	last = first + (((dpl_addr)1 << below) - 1);
	if (first > base)
		walk_emit(w, base, (__u32)nd->leafvec);
	walk_pt6_node(w, d, nd->base_child, o + s, first, depth + 1);
	if (last < base + (((dpl_addr)1 << (128 - o)) - 1))
		walk_emit(w, last + 1, (__u32)nd->leafvec);
}

/*
 * Every position of poptrie6 node idx (slot relative), whose 6 bits start
 * at bit o and whose first address is base. At most XFIB_PT6_LEVELS deep,
 * whatever a slot being rewritten holds.
 */
static void walk_pt6_node(struct walk *w, struct dpl *d, __u32 idx,
			  unsigned int o, dpl_addr base, unsigned int depth)
{
	__u32 slot = d->act.slot & 1, k, child, rem = 128 - o;
	const struct xfib_pt6_node *nd;

	nd = dpl_tbl_at(&d->pt6_nodes, (slot << XFIB_PT6_NODE_BITS) | idx);
	if (!nd || depth >= XFIB_PT6_LEVELS || o >= 128)
		return;
	if (nd->base_leaf & XFIB_PT6_SKIP) {
		walk_pt6_skip(w, d, nd, o, base, depth);
		return;
	}
	for (k = 0; k < 64 && !w->err; k++) {
		__u64 mask = (2ull << k) - 1;
		dpl_addr a;

		if (rem >= XFIB_PT6_STRIDE) {
			a = base + ((dpl_addr)k << (rem - XFIB_PT6_STRIDE));
		} else {
			/* Only every 2^(6 - rem)th position is reachable. */
			if (k & ((1u << (XFIB_PT6_STRIDE - rem)) - 1))
				continue;
			a = base + (k >> (XFIB_PT6_STRIDE - rem));
		}
		if (!(nd->vec & (1ull << k))) {
			walk_emit(w, a, dpl_u32_at(&d->pt6_leaves,
				  (slot << XFIB_PT6_LEAF_BITS) |
				  (nd->base_leaf - 1 + xfib_popcount64(nd->leafvec & mask))));
			continue;
		}
		child = nd->base_child - 1 + xfib_popcount64(nd->vec & mask);
		walk_pt6_node(w, d, child, o + XFIB_PT6_STRIDE, a, depth + 1);
	}
}

static void walk_pt6(struct walk *w, struct dpl *d)
{
	__u32 slot = d->act.slot & 1, c;

	for (c = 0; c < XFIB_PT6_TOP && !w->err; c++) {
		__u32 e = dpl_u32_at(&d->pt6_direct, (slot << XFIB_PT6_TOP_BITS) | c);
		dpl_addr a = (dpl_addr)c << (128 - XFIB_PT6_TOP_BITS);

		if (e & XFIB_PT6_LEAF)
			walk_emit(w, a, e & ~XFIB_PT6_LEAF);
		else
			walk_pt6_node(w, d, e, XFIB_PT6_TOP_BITS, a, 0);
	}
}

int dpl_walk(struct dpl *d, dpl_walk_fn fn, void *arg)
{
	struct walk w = { .d = d, .fn = fn, .arg = arg };
	__u32 i, n;

	if (!d->ready)
		return 0;
	switch (d->act.algo) {
	case XFIB_ALGO_BSEARCH4:
	case XFIB_ALGO_BSEARCH6:
		n = 1u << d->act.log2n;
		for (i = 0; i < n && !w.err; i++) {
			__u32 idx = (d->fam == XFIB_V4 ? XFIB_BS4_SLOT_SIZE :
							 XFIB_BS6_SLOT_SIZE) * d->act.slot + i;
			const void *e = dpl_tbl_at(&d->bs, idx);

			if (!e)
				break;
			if (d->fam == XFIB_V4) {
				const struct xfib_bs4_range *r = e;

				walk_emit(&w, r->start, r->nh);
			} else {
				const struct xfib_bs6_range *r = e;

				walk_emit(&w, (dpl_addr)r->hi << 64 | r->lo, r->nh);
			}
		}
		break;
	case XFIB_ALGO_DXR:
		walk_dxr(&w, d);
		break;
	case XFIB_ALGO_POPTRIE6:
		walk_pt6(&w, d);
		break;
	case XFIB_ALGO_DIR24_8:
		walk_entries(&w, &d->t24, 0, XFIB_DIR24_TBL24_ENTRIES, 0,
			     32 - XFIB_DIR24_TBL24_BITS);
		break;
	case XFIB_ALGO_TRIE6:
		walk_entries(&w, &d->t24, 0, XFIB_TRIE6_TBL24_ENTRIES, 0,
			     128 - XFIB_TRIE6_TBL24_BITS);
		break;
	}
	return w.err;
}
