// SPDX-License-Identifier: GPL-2.0-only
/*
 * trie6 updates: writes the IPv6 multibit trie of
 * include/xfib/lookup_trie6.h in place while XDP programs read it.
 *
 * Layout. A cell is the set of addresses one entry answers for: a tbl24
 * entry (depth 0) spans 2^104 addresses, an entry of a group at depth k
 * (1..13) spans 2^(104 - 8k). A group hangs below a cell exactly when the
 * answer is not uniform over the cell. That is the fewest groups leaf
 * pushing with these strides allows, and it is a function of the
 * address -> nexthop map alone, so a full build and any sequence of
 * incremental writes that reach the same map have the same groups (up to
 * their numbering): nothing leaks, nothing is kept "just in case".
 *
 * Rules for writing while XDP programs read the tables without a lock:
 *  1. Every entry store is one aligned 32-bit atomic store with release
 *     ordering: a reader sees an entry's old or its new value.
 *  2. A group, and everything below it, is completely filled before the
 *     entry that publishes it is stored. The release store orders the
 *     fill before the publication, and a reader's loads below the entry
 *     depend on the value it loaded.
 *  3. An entry is only ever overwritten with a value under which each
 *     address of its cell has its old answer (outside [first, last]) or
 *     nh (inside). A new group starts as a copy of the answer it replaces.
 *     So at any instant every address reads its old or its new answer,
 *     and addresses outside [first, last] read their old one throughout.
 *  4. Collapse: when a write leaves the 256 entries of a group equal
 *     answers, the entry above is rewritten to that answer first, then
 *     the group is retired. An entry whose whole cell the range covers is
 *     rewritten to nh first, then the group it held and that group's
 *     subtree are retired.
 *  5. A retired group is neither modified nor reused until
 *     trie6_reclaim(), which the caller invokes after an RCU grace period:
 *     a reader that loaded the old entry may still be walking the group
 *     and must find the answers it held.
 *  6. Capacity is reserved before the first store. Only a cell that holds
 *     first or last can be covered partly, and only a partly covered cell
 *     that holds an answer needs a new group, so a write takes at most one
 *     group per level per end (26). trie6_groups_needed() walks both ends
 *     through the current table; when the free groups do not cover that,
 *     the write returns -ENOSPC before any store, and otherwise it cannot
 *     run out halfway.
 *
 * One writer at a time: the writer reads entries with plain loads, since
 * only its own stores change them.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "trie6.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "trie6 tables are __u32 arrays over little-endian __u64 map values"
#endif

#define GROUP_ENTRIES XFIB_TRIE6_GROUP_ENTRIES
_Static_assert(GROUP_ENTRIES == GRPOOL_GROUP_ENTRIES, "a tbl8 group is 256 entries");
#define STRIDE XFIB_TRIE6_GROUP_BITS
#define LEVELS XFIB_TRIE6_MAX_LEVELS
/* Address bits below a tbl24 entry. */
#define TBL24_CELL_BITS (128 - XFIB_TRIE6_TBL24_BITS)

#define ALL_ONES (~(xfib_u128)0)

/* Address bits below one entry of depth k (0: tbl24, 1..13: groups). */
static unsigned int cell_bits(unsigned int k)
{
	return TBL24_CELL_BITS - STRIDE * k;
}

/* bits is at most 104 here, so the shift stays inside the type. */
static xfib_u128 low_mask(unsigned int bits)
{
	return ((xfib_u128)1 << bits) - 1;
}

static __u32 *group(const struct trie6 *t, __u32 g)
{
	return grpool_group(&t->pool, g);
}

/* Rule 1: the only way an entry readers may see is written. */
static void store(__u32 *e, __u32 v)
{
	__atomic_store_n(e, v, __ATOMIC_RELEASE);
}

/*
 * trie6_write_range() reserved the worst case and trie6_build() checks
 * before each call, so grpool_alloc() finds the pool non-empty.
 */
static __u32 group_alloc(struct trie6 *t)
{
	return grpool_alloc(&t->pool);
}

/* Rule 5: g and its subtree stay as they are until trie6_reclaim(). */
static void retire_tree(struct trie6 *t, __u32 g)
{
	const __u32 *grp = group(t, g);
	unsigned int i;

	for (i = 0; i < GROUP_ENTRIES; i++)
		if (XFIB_TRIE6_IS_EXT(grp[i]))
			retire_tree(t, XFIB_TRIE6_GROUP(grp[i]));
	grpool_retire(&t->pool, g);
}

/* All 256 entries the same answer: *v is that answer. */
static bool group_uniform(const __u32 *grp, __u32 *v)
{
	unsigned int i;

	if (XFIB_TRIE6_IS_EXT(grp[0]))
		return false;
	for (i = 1; i < GROUP_ENTRIES; i++)
		if (grp[i] != grp[0])
			return false;
	*v = grp[0];
	return true;
}

static void write_entry(struct trie6 *t, __u32 *e, unsigned int k,
			xfib_u128 cf, xfib_u128 lo, xfib_u128 hi, __u32 nh);

/* n entries whose cells the range covers whole: all become nh. */
static void write_whole(struct trie6 *t, __u32 *e, size_t n, __u32 nh)
{
	size_t j;

	for (j = 0; j < n; j++) {
		__u32 old = e[j];

		if (old == nh)
			continue;
		store(&e[j], nh);
		if (XFIB_TRIE6_IS_EXT(old))
			retire_tree(t, XFIB_TRIE6_GROUP(old));
	}
}

/*
 * Writes [lo, hi] into the entries of depth k at e: the entries of one
 * group, or tbl24. Entry j answers for the cell base + (j << cell_bits(k)),
 * and [lo, hi] lies inside those cells. Only the first and the last entry
 * can be covered partly; the ones between (up to 2^24 - 2 in tbl24 for a
 * short prefix) take the short way.
 */
static void write_entries(struct trie6 *t, __u32 *e, unsigned int k,
			  xfib_u128 base, xfib_u128 lo, xfib_u128 hi, __u32 nh)
{
	unsigned int bits = cell_bits(k);
	size_t i = (size_t)((lo - base) >> bits);
	size_t last = (size_t)((hi - base) >> bits);
	xfib_u128 cf = base + ((xfib_u128)i << bits);

	if (i == last) {
		write_entry(t, &e[i], k, cf, lo, hi, nh);
		return;
	}
	write_entry(t, &e[i], k, cf, lo, cf | low_mask(bits), nh);
	write_whole(t, &e[i + 1], last - i - 1, nh);
	cf = base + ((xfib_u128)last << bits);
	write_entry(t, &e[last], k, cf, cf, hi, nh);
}

/*
 * Entry e of depth k answers for the cell starting at cf; [lo, hi] is the
 * part of the range inside that cell.
 */
static void write_entry(struct trie6 *t, __u32 *e, unsigned int k,
			xfib_u128 cf, xfib_u128 lo, xfib_u128 hi, __u32 nh)
{
	xfib_u128 cl = cf | low_mask(cell_bits(k));
	__u32 old = *e, g, v;

	if (lo == cf && hi == cl) {
		/* The whole cell: an answer, whatever was below. */
		if (old == nh)
			return;
		store(e, nh);
		if (XFIB_TRIE6_IS_EXT(old))
			retire_tree(t, XFIB_TRIE6_GROUP(old));
		return;
	}
	/* Part of the cell; a depth-13 cell is one address, so k < 13. */
	if (!XFIB_TRIE6_IS_EXT(old)) {
		unsigned int i;

		if (old == nh)
			return;
		/*
		 * Readers cannot reach g yet: fill it with the old answer,
		 * write the range into it (and below), then publish.
		 */
		g = group_alloc(t);
		for (i = 0; i < GROUP_ENTRIES; i++)
			store(&group(t, g)[i], old);
		write_entries(t, group(t, g), k + 1, cf, lo, hi, nh);
		store(e, XFIB_TRIE6_EXT | g);
		return;
	}
	g = XFIB_TRIE6_GROUP(old);
	write_entries(t, group(t, g), k + 1, cf, lo, hi, nh);
	/*
	 * Groups below were collapsed on the way back up, so a uniform
	 * group here holds only answers: no subtree to retire with it.
	 */
	if (group_uniform(group(t, g), &v)) {
		store(e, v);
		retire_tree(t, g);
	}
}

/*
 * New groups a write of [first, last] may take on the way down to a (first
 * or last). A cell is covered partly iff it holds an end and is not inside
 * the range; once the walk meets an answer on a partly covered cell, each
 * partly covered cell from there down may need a new group. Cells that
 * also hold *shared (the other end) were counted with it.
 */
static __u32 path_needed(const struct trie6 *t, xfib_u128 first,
			 xfib_u128 last, xfib_u128 a, const xfib_u128 *shared)
{
	const __u32 *e = &t->tbl24[a >> TBL24_CELL_BITS];
	bool fresh = false;
	unsigned int k;
	__u32 n = 0;

	for (k = 0; k < LEVELS; k++) {
		unsigned int bits = cell_bits(k);
		xfib_u128 cf = a & ~low_mask(bits);

		if (first <= cf && (cf | low_mask(bits)) <= last)
			break;
		if (!fresh && !XFIB_TRIE6_IS_EXT(*e))
			fresh = true;
		if (fresh && !(shared && (*shared >> bits) == (a >> bits)))
			n++;
		if (!fresh)
			e = &group(t, XFIB_TRIE6_GROUP(*e))
				[(a >> (bits - STRIDE)) & (GROUP_ENTRIES - 1)];
	}
	return n;
}

__u32 trie6_groups_needed(const struct trie6 *t, xfib_u128 first,
			  xfib_u128 last)
{
	if (first > last)
		return 0;
	return path_needed(t, first, last, first, NULL) +
	       path_needed(t, first, last, last, &first);
}

int trie6_write_range(struct trie6 *t, xfib_u128 first, xfib_u128 last,
		      __u32 nh)
{
	if (first > last || nh > XFIB_TRIE6_NH_MAX)
		return -EINVAL;
	/* Rule 6: all or nothing. */
	if (trie6_groups_needed(t, first, last) > t->pool.nfree)
		return -ENOSPC;
	write_entries(t, t->tbl24, 0, 0, first, last, nh);
	return 0;
}

/* ---- full build ------------------------------------------------------ */

struct build {
	struct trie6 *t;
	const struct xfib_bs6_range *r;
	size_t n;
	size_t i; /* the range holding the next address to fill */
};

static xfib_u128 range_start(const struct xfib_bs6_range *r)
{
	return (xfib_u128)r->hi << 64 | r->lo;
}

static xfib_u128 range_last(const struct build *b)
{
	return b->i + 1 < b->n ? range_start(&b->r[b->i + 1]) - 1 : ALL_ONES;
}

static int build_group(struct build *b, unsigned int k, xfib_u128 cf,
		       __u32 *out);

/*
 * Fills count entries of depth k; entry j answers for the cell starting
 * at base + (j << cell_bits(k)). Cells are filled in address order, so the
 * range cursor only moves forward: the build is linear in ranges plus
 * entries written.
 */
static int build_entries(struct build *b, __u32 *e, size_t count,
			 unsigned int k, xfib_u128 base)
{
	unsigned int bits = cell_bits(k);
	size_t j = 0;
	int err;

	while (j < count) {
		xfib_u128 cf = base + ((xfib_u128)j << bits);
		xfib_u128 end;
		__u32 v;

		while (b->i + 1 < b->n && range_start(&b->r[b->i + 1]) <= cf)
			b->i++;
		end = range_last(b);
		if (end >= (cf | low_mask(bits))) {
			/* A run of cells inside one range: all its nexthop. */
			size_t stop = count;

			/* end >= base here; end + 1 wraps only at the top. */
			if (end != ALL_ONES) {
				xfib_u128 whole = (end - base + 1) >> bits;

				if (whole < count)
					stop = (size_t)whole;
			}
			for (; j < stop; j++)
				store(&e[j], b->r[b->i].nh);
			continue;
		}
		err = build_group(b, k, cf, &v);
		if (err)
			return err;
		store(&e[j++], v);
	}
	return 0;
}

/* The cell of depth k at cf holds a range boundary: the entry for it. */
static int build_group(struct build *b, unsigned int k, xfib_u128 cf,
		       __u32 *out)
{
	struct trie6 *t = b->t;
	__u32 g, v;
	int err;

	if (!t->pool.nfree)
		return -ENOSPC;
	g = group_alloc(t);
	err = build_entries(b, group(t, g), GROUP_ENTRIES, k + 1, cf);
	if (err)
		return err;
	/* Neighbouring ranges with one nexthop: no group needed after all. */
	if (group_uniform(group(t, g), &v)) {
		grpool_put(&t->pool, g);
		*out = v;
	} else {
		*out = XFIB_TRIE6_EXT | g;
	}
	return 0;
}

int trie6_build(struct trie6 *t, const struct xfib_bs6_range *r, size_t n)
{
	struct build b = { .t = t, .r = r, .n = n };
	size_t i;

	if (!n || range_start(&r[0]) != 0)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (r[i].nh > XFIB_TRIE6_NH_MAX)
			return -EINVAL;
		if (i && range_start(&r[i]) <= range_start(&r[i - 1]))
			return -EINVAL;
	}
	grpool_reset(&t->pool);
	return build_entries(&b, t->tbl24, XFIB_TRIE6_TBL24_ENTRIES, 0, 0);
}

/* ---- instance -------------------------------------------------------- */

static int init(struct trie6 *t, __u32 *tbl24, __u32 *tbl8, __u32 ngroups,
		bool clear)
{
	int err;

	memset(t, 0, sizeof(*t));
	if (!tbl24 || ngroups > XFIB_TRIE6_GROUPS_MAX)
		return -EINVAL;
	err = grpool_init(&t->pool, tbl8, ngroups, clear);
	if (err)
		return err;
	t->tbl24 = tbl24;
	/* XFIB_NH_IDX_NONE is 0: all-zero tables have no route anywhere. */
	if (clear)
		memset(tbl24, 0, (size_t)XFIB_TRIE6_TBL24_ENTRIES * sizeof(*tbl24));
	return 0;
}

int trie6_init(struct trie6 *t, __u32 *tbl24, __u32 *tbl8, __u32 ngroups)
{
	return init(t, tbl24, tbl8, ngroups, true);
}

int trie6_init_zeroed(struct trie6 *t, __u32 *tbl24, __u32 *tbl8,
		      __u32 ngroups)
{
	return init(t, tbl24, tbl8, ngroups, false);
}

void trie6_fini(struct trie6 *t)
{
	grpool_fini(&t->pool);
	memset(t, 0, sizeof(*t));
}

void trie6_reclaim(struct trie6 *t)
{
	grpool_reclaim(&t->pool);
}

__u32 trie6_groups_used(const struct trie6 *t)
{
	return grpool_used(&t->pool);
}

__u32 trie6_groups_retired(const struct trie6 *t)
{
	return t->pool.nretired;
}
