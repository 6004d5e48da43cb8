// SPDX-License-Identifier: GPL-2.0-only
/*
 * poptrie6 updates in place (poptrie6.h): copy on write per direct entry.
 *
 * A change rewrites the subtree of every direct entry (/18) its span
 * touches: the entry's current ranges are read back from its subtree,
 * the changed spans laid over them, and, if the result differs, the
 * entry's new subtree is built into scratch, copied into free runs of the
 * node and leaf tables with its indexes moved there, and published by one
 * aligned 32-bit store of the direct entry. A packet reads the old
 * subtree or the new one: nothing it can reach is written. The old
 * subtree's runs are retired, and free only after pt6_reclaim(), which
 * comes after a grace period.
 *
 * Free space: address-ordered runs, allocated first fit and coalesced
 * with their neighbours when freed. Subtrees range from one node to (for
 * a table inside one /18) the whole table, so per-size free lists do not
 * fit them and a buddy allocator would round each up to a power of two,
 * up to half the space lost. First fit over coalesced runs keeps small
 * holes at the front and the long tail a build leaves intact. There is no
 * compaction in place: when no run is long enough (the space is short or
 * fragmented past use), pt6_update fails with -ENOSPC and the caller
 * rebuilds the table into the other slot, which is compact again.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "poptrie6.h"

typedef unsigned __int128 u128;

#define PT6_CHUNK_BITS (128 - XFIB_PT6_TOP_BITS)

/* ---- runs ------------------------------------------------------------- */

static int runs_push(struct pt6_runs *rs, size_t at, __u32 start, __u32 len)
{
	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? rs->cap * 2 : 64;
		struct pt6_run *v = realloc(rs->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		rs->v = v;
		rs->cap = cap;
	}
	memmove(rs->v + at + 1, rs->v + at, (rs->n - at) * sizeof(*rs->v));
	rs->v[at] = (struct pt6_run){ start, len };
	rs->n++;
	return 0;
}

/* First fit. -ENOSPC when no run is long enough. */
static int runs_alloc(struct pt6_runs *rs, __u32 len, __u32 *at)
{
	size_t i;

	*at = 0;
	if (!len)
		return 0;
	for (i = 0; i < rs->n; i++) {
		if (rs->v[i].len < len)
			continue;
		*at = rs->v[i].at;
		rs->v[i].at += len;
		rs->v[i].len -= len;
		if (!rs->v[i].len) {
			rs->n--;
			memmove(rs->v + i, rs->v + i + 1,
				(rs->n - i) * sizeof(*rs->v));
		}
		return 0;
	}
	return -ENOSPC;
}

/* Into the address-ordered free runs, merged with its neighbours. */
static int runs_free(struct pt6_runs *rs, __u32 at, __u32 len)
{
	size_t lo = 0, hi = rs->n;

	if (!len)
		return 0;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (rs->v[mid].at < at)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && rs->v[lo - 1].at + rs->v[lo - 1].len == at) {
		rs->v[lo - 1].len += len;
		if (lo < rs->n && at + len == rs->v[lo].at) {
			rs->v[lo - 1].len += rs->v[lo].len;
			rs->n--;
			memmove(rs->v + lo, rs->v + lo + 1,
				(rs->n - lo) * sizeof(*rs->v));
		}
		return 0;
	}
	if (lo < rs->n && at + len == rs->v[lo].at) {
		rs->v[lo].at = at;
		rs->v[lo].len += len;
		return 0;
	}
	return runs_push(rs, lo, at, len);
}

/* ---- an entry's ranges -------------------------------------------------- */

static u128 bs_start(const struct xfib_bs6_range *r)
{
	return (u128)r->hi << 64 | r->lo;
}

/*
 * Appends [a, ...) -> nh to a list kept merged: a range that starts where
 * the last one does replaces it, one with the last one's answer adds
 * nothing.
 */
static int list_emit(struct xfib_bs6_range **v, size_t *n, size_t *cap,
		     u128 a, __u32 nh)
{
	if (*n && bs_start(&(*v)[*n - 1]) == a) {
		(*n)--;
		if (*n && (*v)[*n - 1].nh == nh)
			return 0;
	} else if (*n && (*v)[*n - 1].nh == nh) {
		return 0;
	}
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 256;
		struct xfib_bs6_range *p = realloc(*v, c * sizeof(*p));

		if (!p)
			return -ENOMEM;
		*v = p;
		*cap = c;
	}
	(*v)[(*n)++] = (struct xfib_bs6_range){
		.hi = (__u64)(a >> 64), .lo = (__u64)a, .nh = nh,
	};
	return 0;
}

static int old_emit(struct pt6_state *st, u128 a, __u32 nh)
{
	return list_emit(&st->old, &st->nold, &st->old_cap, a, nh);
}

static int pt6_decode(struct pt6_state *st, __u32 idx, unsigned int o,
		      u128 base);

/* A skip node: its answer around the chain, the node below inside. */
static int pt6_decode_skip(struct pt6_state *st,
			   const struct xfib_pt6_node *nd, unsigned int o,
			   u128 base)
{
	unsigned int s = nd->base_leaf & 63, rem = 128 - o;
	u128 sub = base + ((u128)(nd->vec >> (64 - s)) << (rem - s));
	u128 end = sub + ((u128)1 << (rem - s));
	int err;

	err = old_emit(st, base, (__u32)nd->leafvec);
	if (!err)
		err = pt6_decode(st, nd->base_child, o + s, sub);
	if (!err && end - base < (u128)1 << rem)
		err = old_emit(st, end, (__u32)nd->leafvec);
	return err;
}

/*
 * The answers below node idx at bit o from base, as the lookup reads
 * them. Only the positions where an answer may start are visited: a
 * child, the start of a run of leaves, and a leaf position right after a
 * child (its run goes on from before the child). On the last level only
 * every 16th position is read; the builder starts runs only there.
 */
static int pt6_decode(struct pt6_state *st, __u32 idx, unsigned int o,
		      u128 base)
{
	const struct xfib_pt6_node *nd = &st->s.nodes[idx];
	unsigned int rem = 128 - o, k;
	__u32 child = nd->base_child, leaf = nd->base_leaf - 1;
	__u64 at = nd->vec | nd->leafvec | (nd->vec << 1);
	int err = 0;

	if (nd->base_leaf & XFIB_PT6_SKIP)
		return pt6_decode_skip(st, nd, o, base);
	while (at && !err) {
		u128 a;

		k = __builtin_ctzll(at);
		at &= at - 1;
		a = rem < XFIB_PT6_STRIDE ?
			    base + (k >> (XFIB_PT6_STRIDE - rem)) :
			    base + ((u128)k << (rem - XFIB_PT6_STRIDE));
		if ((nd->leafvec >> k) & 1)
			leaf++;
		if ((nd->vec >> k) & 1)
			err = pt6_decode(st, child++, o + XFIB_PT6_STRIDE, a);
		else
			err = old_emit(st, a, st->s.leaves[leaf]);
	}
	return err;
}

/* Entry d's current ranges into st->old. */
static int entry_ranges(struct pt6_state *st, __u32 d)
{
	__u32 e = st->s.direct[d];
	u128 base = (u128)d << PT6_CHUNK_BITS;

	st->nold = 0;
	if (e & XFIB_PT6_LEAF)
		return old_emit(st, base, e & ~XFIB_PT6_LEAF);
	return pt6_decode(st, e, XFIB_PT6_TOP_BITS, base);
}

static int nw_emit(struct pt6_state *st, u128 a, __u32 nh)
{
	return list_emit(&st->nw, &st->nnw, &st->nw_cap, a, nh);
}

/* The old answers over [from, to] into st->nw, from old range *o on. */
static int copy_old(struct pt6_state *st, size_t *o, u128 from, u128 to)
{
	int err;

	while (*o + 1 < st->nold && bs_start(&st->old[*o + 1]) <= from)
		(*o)++;
	err = nw_emit(st, from, st->old[*o].nh);
	while (!err && *o + 1 < st->nold && bs_start(&st->old[*o + 1]) <= to) {
		(*o)++;
		err = nw_emit(st, bs_start(&st->old[*o]), st->old[*o].nh);
	}
	return err;
}

/*
 * Entry d's new ranges into st->nw: the changes c[p..] (disjoint, sorted,
 * c[p] the first to reach d) over its old ones, which are read back only
 * where the changes leave a gap (*have_old then).
 */
static int entry_new(struct pt6_state *st, __u32 d, const struct pt6_change *c,
		     size_t n, size_t p, bool *have_old)
{
	u128 first = (u128)d << PT6_CHUNK_BITS, pos = first;
	u128 last = first + (((u128)1 << PT6_CHUNK_BITS) - 1);
	size_t o = 0;
	int err = 0;

	st->nnw = 0;
	for (; p < n && c[p].first <= last; p++) {
		u128 f = c[p].first > pos ? c[p].first : pos;
		u128 l = c[p].last < last ? c[p].last : last;

		if (c[p].nh & XFIB_PT6_LEAF)
			return -ERANGE;
		if (f > pos && !*have_old) {
			err = entry_ranges(st, d);
			*have_old = true;
		}
		if (!err && f > pos)
			err = copy_old(st, &o, pos, f - 1);
		if (!err)
			err = nw_emit(st, f, c[p].nh);
		if (err || l == last)
			return err;
		pos = l + 1;
	}
	if (!*have_old) {
		err = entry_ranges(st, d);
		*have_old = true;
	}
	return err ? err : copy_old(st, &o, pos, last);
}

static int grow(void **p, size_t *cap, size_t esz, size_t min, size_t max)
{
	size_t c = *cap ? *cap * 2 : min;
	void *v;

	if (c > max)
		c = max;
	v = realloc(*p, c * esz);
	if (!v)
		return -ENOMEM;
	*p = v;
	*cap = c;
	return 0;
}

/* Entry d's subtree from st->nw into scratch, grown as it needs. */
static int scratch_build(struct pt6_state *st, __u32 d, struct pt6_usage *u)
{
	/* Room for twice the old subtree saves builds that stop short. */
	size_t want = 2 * (size_t)st->s.ext[d].nodes;

	while (st->sn_cap < want && st->sn_cap < st->s.node_cap)
		if (grow((void **)&st->sn, &st->sn_cap, sizeof(*st->sn), 1024,
			 st->s.node_cap))
			return -ENOMEM;
	want = 2 * (size_t)st->s.ext[d].leaves;
	while (st->sl_cap < want && st->sl_cap < st->s.leaf_cap)
		if (grow((void **)&st->sl, &st->sl_cap, sizeof(*st->sl), 4096,
			 st->s.leaf_cap))
			return -ENOMEM;
	for (;;) {
		struct pt6_slot s = {
			.nodes = st->sn, .node_cap = st->sn_cap,
			.leaves = st->sl, .leaf_cap = st->sl_cap,
		};
		__u32 e;
		int err = pt6_build_entry(st->nw, st->nnw, d, &s, u, &e);

		if (err != -ENOSPC)
			return err;
		if (st->sn_cap >= st->s.node_cap && st->sl_cap >= st->s.leaf_cap)
			return err;
		if (st->sn_cap < st->s.node_cap)
			err = grow((void **)&st->sn, &st->sn_cap, sizeof(*st->sn),
				   1024, st->s.node_cap);
		if (!err && st->sl_cap < st->s.leaf_cap)
			err = grow((void **)&st->sl, &st->sl_cap, sizeof(*st->sl),
				   4096, st->s.leaf_cap);
		if (err)
			return err;
	}
}

/* The scratch subtree into the slot at nodes nat, leaves lat. */
static void entry_copy(struct pt6_state *st, const struct pt6_usage *u,
		       __u32 nat, __u32 lat)
{
	size_t i;

	for (i = 0; i < u->nodes; i++) {
		struct xfib_pt6_node nd = st->sn[i];

		if (!(nd.base_leaf & XFIB_PT6_SKIP))
			nd.base_leaf += lat;
		nd.base_child += nat;
		st->s.nodes[nat + i] = nd;
	}
	memcpy(st->s.leaves + lat, st->sl, u->leaves * sizeof(*st->sl));
	if (nat + u->nodes > st->node_top)
		st->node_top = nat + u->nodes;
	if (lat + u->leaves > st->leaf_top)
		st->leaf_top = lat + u->leaves;
}

static int retire(struct pt6_runs *rs, __u32 at, __u32 len)
{
	return len ? runs_push(rs, rs->n, at, len) : 0;
}

/* Publishes st->nw as entry d; its old subtree is retired. */
static int entry_write(struct pt6_state *st, __u32 d)
{
	struct pt6_ext ext = { 0 }, was = st->s.ext[d];
	struct pt6_usage u = { 0 };
	__u32 e, old = st->s.direct[d], nat = 0;
	int err;

	if (st->nnw == 1) {
		e = XFIB_PT6_LEAF | st->nw[0].nh;
	} else {
		err = scratch_build(st, d, &u);
		if (!err)
			err = runs_alloc(&st->free[0], u.nodes, &nat);
		if (err)
			return err;
		err = runs_alloc(&st->free[1], u.leaves, &ext.leaf);
		if (err) {
			/* Never reachable: free at once. */
			runs_free(&st->free[0], nat, u.nodes);
			return err;
		}
		entry_copy(st, &u, nat, ext.leaf);
		ext.nodes = u.nodes;
		ext.leaves = u.leaves;
		e = nat; /* the root is the scratch's node 0 */
	}
	/* Everything below e is written: one store sends packets there. */
	__atomic_store_n(&st->s.direct[d], e, __ATOMIC_RELEASE);
	st->s.ext[d] = ext;
	st->use.nodes += u.nodes;
	st->use.leaves += u.leaves;
	st->entries_written++;
	if (old & XFIB_PT6_LEAF)
		return 0;
	st->use.nodes -= was.nodes;
	st->use.leaves -= was.leaves;
	err = retire(&st->retired[0], old, was.nodes);
	return err ? err : retire(&st->retired[1], was.leaf, was.leaves);
}

static int entry_update(struct pt6_state *st, __u32 d,
			const struct pt6_change *c, size_t n, size_t p)
{
	bool have_old = false;
	int err;

	err = entry_new(st, d, c, n, p, &have_old);
	if (err)
		return err;
	if (st->nnw == 1 && st->s.direct[d] == (XFIB_PT6_LEAF | st->nw[0].nh))
		return 0;
	if (!have_old)
		err = entry_ranges(st, d);
	if (err)
		return err;
	if (st->nold == st->nnw &&
	    !memcmp(st->old, st->nw, st->nnw * sizeof(*st->nw)))
		return 0; /* the same answers */
	err = entry_write(st, d);
	if (!err)
		st->ranges_delta += (long long)st->nnw - (long long)st->nold;
	return err;
}

static int chg_cmp(const void *a, const void *b)
{
	const struct pt6_change *x = a, *y = b;

	return x->first < y->first ? -1 : x->first > y->first;
}

/* Sorted and cut where they overlap (they agree there): disjoint. */
static size_t chg_normalize(struct pt6_change *c, size_t n)
{
	size_t i, m = 0;

	if (n)
		qsort(c, n, sizeof(*c), chg_cmp);
	for (i = 0; i < n; i++) {
		if (m && c[i].last <= c[m - 1].last)
			continue;
		if (m && c[i].first <= c[m - 1].last)
			c[i].first = c[m - 1].last + 1;
		c[m++] = c[i];
	}
	return m;
}

/* Nodes of the subtrees the changes c (normalized) would rewrite. */
static size_t rewrite_nodes(const struct pt6_state *st,
			    const struct pt6_change *c, size_t n)
{
	__u32 next = 0, d, lo, hi;
	size_t i, sum = 0;

	for (i = 0; i < n; i++) {
		lo = (__u32)(c[i].first >> PT6_CHUNK_BITS);
		hi = (__u32)(c[i].last >> PT6_CHUNK_BITS);
		for (d = lo < next ? next : lo; d <= hi; d++)
			if (!(st->s.direct[d] & XFIB_PT6_LEAF))
				sum += st->s.ext[d].nodes;
		if (hi + 1 > next)
			next = hi + 1;
	}
	return sum;
}

int pt6_update(struct pt6_state *st, struct pt6_change *c, size_t n)
{
	__u32 next = 0, d, lo, hi;
	size_t i, p = 0;
	int err;

	n = chg_normalize(c, n);
	/* Each subtree is read back, built and copied: more than half of a
	 * large table costs more than one build of it all. */
	if (st->use.nodes >= PT6_REWRITE_MIN_NODES &&
	    2 * rewrite_nodes(st, c, n) > st->use.nodes)
		return -E2BIG;
	for (i = 0; i < n; i++) {
		lo = (__u32)(c[i].first >> PT6_CHUNK_BITS);
		hi = (__u32)(c[i].last >> PT6_CHUNK_BITS);
		for (d = lo < next ? next : lo; d <= hi; d++) {
			while (c[p].last < (u128)d << PT6_CHUNK_BITS)
				p++;
			err = entry_update(st, d, c, n, p);
			if (err)
				return err;
		}
		if (hi + 1 > next)
			next = hi + 1;
	}
	return 0;
}

/* ---- the state ------------------------------------------------------- */

int pt6_state_build(struct pt6_state *st, const struct pt6_slot *s,
		    const struct xfib_bs6_range *r, size_t n)
{
	int err;

	memset(st, 0, sizeof(*st));
	st->s = *s;
	if (st->s.node_cap > XFIB_PT6_SLOT_NODES)
		st->s.node_cap = XFIB_PT6_SLOT_NODES;
	if (st->s.leaf_cap > XFIB_PT6_SLOT_LEAVES)
		st->s.leaf_cap = XFIB_PT6_SLOT_LEAVES;
	st->s.ext = calloc(XFIB_PT6_TOP, sizeof(*st->s.ext));
	if (!st->s.ext)
		return -ENOMEM;
	err = pt6_build(r, n, &st->s, &st->use);
	if (err)
		return err;
	st->node_top = st->use.nodes;
	st->leaf_top = st->use.leaves;
	err = runs_free(&st->free[0], st->use.nodes,
			st->s.node_cap - st->use.nodes);
	return err ? err : runs_free(&st->free[1], st->use.leaves,
				     st->s.leaf_cap - st->use.leaves);
}

void pt6_state_fini(struct pt6_state *st)
{
	int t;

	for (t = 0; t < 2; t++) {
		free(st->free[t].v);
		free(st->retired[t].v);
	}
	free(st->s.ext);
	free(st->old);
	free(st->nw);
	free(st->sn);
	free(st->sl);
	memset(st, 0, sizeof(*st));
}

bool pt6_has_retired(const struct pt6_state *st)
{
	return st->retired[0].n || st->retired[1].n;
}

void pt6_reclaim(struct pt6_state *st)
{
	size_t i;
	int t;

	/* A run that finds no memory for its record stays unused: lost
	 * space until the next build, never a run handed out twice. */
	for (t = 0; t < 2; t++) {
		for (i = 0; i < st->retired[t].n; i++)
			runs_free(&st->free[t], st->retired[t].v[i].at,
				  st->retired[t].v[i].len);
		st->retired[t].n = 0;
	}
}

size_t pt6_free_entries(const struct pt6_state *st, int t)
{
	size_t i, sum = 0;

	for (i = 0; i < st->free[t].n; i++)
		sum += st->free[t].v[i].len;
	return sum;
}
