// SPDX-License-Identifier: GPL-2.0-only
/*
 * dir24_8 updates. The lookup (include/xfib/lookup_dir24.h) is two reads
 * and no checks; everything hard sits here, in the update path.
 *
 * Readers (XDP programs on every CPU) run concurrently with every write
 * and take no lock, so the tables must be correct for them after every
 * single store, not just at the end of an update:
 *
 *  - Every store to an entry a reader can reach is one aligned 32-bit
 *    __atomic_store_n (release). A reader's load, 32- or 64-bit (BPF reads
 *    the two entries of a __u64 map value together), then sees each entry
 *    either old or new, never torn.
 *
 *  - A new tbl8 group is filled completely (the /24's old value outside
 *    the written range, the new one inside) before the release store of
 *    the tbl24 entry that publishes it. A reader that sees the EXT entry
 *    reaches a finished group through an address dependency on it.
 *
 *  - Collapse: when a write leaves all 256 entries of a group equal, the
 *    tbl24 entry is rewritten to that value first and only then is the
 *    group unlinked. Readers that already hold the EXT entry still find
 *    the right values in the group, because the group is retired, not
 *    cleared: it keeps its contents and is not handed out again until
 *    dir24_reclaim(), which the caller calls only after an RCU grace
 *    period (no reader can still be inside it). The same goes for a write
 *    of a whole /24 over a group-backed entry: tbl24 first, then retire.
 *    Collapsing on every write also keeps the tables canonical: no
 *    reachable group is uniform, so one set of ranges has exactly one
 *    tbl24 image, whatever sequence of updates produced it, and the pool
 *    never fills up with groups that do not need to exist.
 *
 *  - Reserve first: a range cuts into at most two /24s (its ends); each
 *    needs a new group only if its tbl24 entry is a plain nexthop other
 *    than the one being written. Those are counted and checked against
 *    the free pool before the first store, so a write either happens
 *    completely or not at all (-ENOSPC, nothing written) and the tables
 *    never hold a half-applied update. dir24_groups_needed() replays a
 *    whole sequence of writes the same way (collapses and re-splits
 *    included) and counts what it will take, so the daemon can reserve
 *    for a batch and rebuild with a larger pool instead of starting it.
 *
 * Together: an address outside [first, last] reads its old value at
 * every instant of dir24_write_range(); an address inside reads the old
 * or the new value. Entries and groups are written in place only where
 * the write changes something, so untouched memory is not dirtied.
 *
 * dir24_build() is the exception: it writes a table no reader can reach
 * (a standby instance, swapped in whole later), with plain stores.
 *
 * The groups are handed out and retired by the pool of grpool.h, shared
 * with trie6: a group is in use (reachable from tbl24), free or retired,
 * so a leak shows as used > the number of EXT entries in tbl24.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "dir24.h"

#define GROUP_ENTRIES XFIB_DIR24_GROUP_ENTRIES
#define LOW_MASK (GROUP_ENTRIES - 1)
#define GROUP_BITS XFIB_DIR24_GROUP_BITS

static inline void store_publish(__u32 *p, __u32 v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/* For entries of a group no reader can reach yet. */
static inline void store_private(__u32 *p, __u32 v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

_Static_assert(GROUP_ENTRIES == GRPOOL_GROUP_ENTRIES, "a tbl8 group is 256 entries");

static __u32 *group_at(const struct dir24 *d, __u32 g)
{
	return grpool_group(&d->pool, g);
}

static int init(struct dir24 *d, __u32 *tbl24, __u32 *tbl8, __u32 ngroups,
		bool clear)
{
	int err;

	memset(d, 0, sizeof(*d));
	if (!tbl24 || ngroups > XFIB_DIR24_GROUPS_MAX)
		return -EINVAL;
	err = grpool_init(&d->pool, tbl8, ngroups, clear);
	if (err)
		return err;
	d->tbl24 = tbl24;
	if (clear)
		memset(tbl24, 0, (size_t)XFIB_DIR24_TBL24_ENTRIES * sizeof(*tbl24));
	return 0;
}

int dir24_init(struct dir24 *d, __u32 *tbl24, __u32 *tbl8, __u32 ngroups)
{
	return init(d, tbl24, tbl8, ngroups, true);
}

int dir24_init_zeroed(struct dir24 *d, __u32 *tbl24, __u32 *tbl8,
		      __u32 ngroups)
{
	return init(d, tbl24, tbl8, ngroups, false);
}

void dir24_fini(struct dir24 *d)
{
	grpool_fini(&d->pool);
	memset(d, 0, sizeof(*d));
}

/* Writing nh over part of /24 b takes a new group. */
static bool cut_needs_group(const struct dir24 *d, __u32 b, __u32 nh)
{
	__u32 e = d->tbl24[b];

	return !XFIB_DIR24_IS_EXT(e) && e != nh;
}

/* All 256 addresses of /24 b become nh. */
static void write_whole(struct dir24 *d, __u32 b, __u32 nh)
{
	__u32 e = d->tbl24[b];

	if (e == nh)
		return;
	store_publish(&d->tbl24[b], nh);
	/* Readers holding the old entry may still be in the group. */
	if (XFIB_DIR24_IS_EXT(e))
		grpool_retire(&d->pool, XFIB_DIR24_GROUP(e));
}

/* Addresses lo..hi of /24 b become nh; 0 < lo or hi < 255. */
static void write_cut(struct dir24 *d, __u32 b, __u32 lo, __u32 hi, __u32 nh)
{
	__u32 e = d->tbl24[b], gi, first, i;
	__u32 *g;

	if (!XFIB_DIR24_IS_EXT(e)) {
		if (e == nh)
			return;
		gi = grpool_alloc(&d->pool);
		g = group_at(d, gi);
		for (i = 0; i < GROUP_ENTRIES; i++)
			store_private(&g[i], i >= lo && i <= hi ? nh : e);
		/* Release: the filled group becomes visible before the link. */
		store_publish(&d->tbl24[b], XFIB_DIR24_EXT | gi);
		return;
	}

	gi = XFIB_DIR24_GROUP(e);
	g = group_at(d, gi);
	for (i = lo; i <= hi; i++)
		if (g[i] != nh)
			store_publish(&g[i], nh);
	first = g[0];
	for (i = 1; i < GROUP_ENTRIES; i++)
		if (g[i] != first)
			return;
	/* Uniform: tbl24 answers for the /24 before the group goes away. */
	store_publish(&d->tbl24[b], first);
	grpool_retire(&d->pool, gi);
}

int dir24_write_range(struct dir24 *d, __u32 first, __u32 last, __u32 nh)
{
	__u32 fb = first >> GROUP_BITS, lb = last >> GROUP_BITS;
	__u32 lo = first & LOW_MASK, hi = last & LOW_MASK;
	__u32 need = 0, b, end;

	if (first > last || nh > XFIB_DIR24_NH_MAX)
		return -EINVAL;

	if (fb == lb) {
		if (lo == 0 && hi == LOW_MASK) {
			write_whole(d, fb, nh);
			return 0;
		}
		if (cut_needs_group(d, fb, nh) && !d->pool.nfree)
			return -ENOSPC;
		write_cut(d, fb, lo, hi, nh);
		return 0;
	}

	if (lo && cut_needs_group(d, fb, nh))
		need++;
	if (hi != LOW_MASK && cut_needs_group(d, lb, nh))
		need++;
	if (need > d->pool.nfree)
		return -ENOSPC;

	b = fb;
	if (lo) {
		write_cut(d, fb, lo, LOW_MASK, nh);
		b++;
	}
	/* lb < 2^24, so lb + 1 cannot wrap. */
	end = hi == LOW_MASK ? lb + 1 : lb;
	for (; b < end; b++)
		write_whole(d, b, nh);
	if (hi != LOW_MASK)
		write_cut(d, lb, 0, hi, nh);
	return 0;
}

/*
 * dir24_groups_needed() replays the cuts into one /24 on a copy of it,
 * with write_cut()'s rules: a cut into a plain /24 with another value
 * takes a group, a cut into a split one may collapse it, and a later cut
 * may split it again. Cuts into different /24s do not interact and whole
 * /24s never take a group, so one copy at a time suffices: the ranges are
 * sorted, so all cuts into a /24 come one after the other.
 */
struct cut_sim {
	bool active;
	bool split;  /* the /24 holds a group (in the replay) */
	__u32 block;
	__u32 value; /* its value while plain */
	__u32 g[GROUP_ENTRIES];
};

static __u32 sim_cut(const struct dir24 *d, struct cut_sim *s, __u32 b,
		     __u32 lo, __u32 hi, __u32 nh)
{
	__u32 i;

	if (!s->active || s->block != b) {
		__u32 e = d->tbl24[b];

		s->active = true;
		s->block = b;
		s->split = XFIB_DIR24_IS_EXT(e);
		if (s->split)
			memcpy(s->g, group_at(d, XFIB_DIR24_GROUP(e)),
			       sizeof(s->g));
		else
			s->value = e;
	}
	if (!s->split) {
		if (nh == s->value)
			return 0;
		for (i = 0; i < GROUP_ENTRIES; i++)
			s->g[i] = i >= lo && i <= hi ? nh : s->value;
		s->split = true;
		return 1;
	}
	for (i = lo; i <= hi; i++)
		s->g[i] = nh;
	for (i = 1; i < GROUP_ENTRIES && s->g[i] == s->g[0]; i++)
		;
	if (i == GROUP_ENTRIES) {
		s->split = false;
		s->value = s->g[0];
	}
	return 0;
}

__u32 dir24_groups_needed(const struct dir24 *d, const struct xfib_bs4_range *r,
			  size_t n, __u32 span_last)
{
	struct cut_sim sim;
	__u32 need = 0;
	size_t i;

	sim.active = false;
	for (i = 0; i < n; i++) {
		__u32 first = r[i].start, nh = r[i].nh, last, fb, lb, lo, hi;

		if (i + 1 < n) {
			if (r[i + 1].start <= first)
				continue; /* empty */
			last = r[i + 1].start - 1;
		} else {
			if (span_last < first)
				continue;
			last = span_last;
		}
		fb = first >> GROUP_BITS;
		lb = last >> GROUP_BITS;
		lo = first & LOW_MASK;
		hi = last & LOW_MASK;
		if (fb == lb) {
			if (lo || hi != LOW_MASK)
				need += sim_cut(d, &sim, fb, lo, hi, nh);
			continue;
		}
		if (lo)
			need += sim_cut(d, &sim, fb, lo, LOW_MASK, nh);
		if (hi != LOW_MASK)
			need += sim_cut(d, &sim, lb, 0, hi, nh);
	}
	return need;
}

/* Validates a complete range list; returns the groups it needs or -EINVAL. */
static int count_groups(const struct xfib_bs4_range *r, size_t n)
{
	__u32 cnt = 0, last_b = 0;
	bool counted = false;
	size_t k;

	if (!n || r[0].start != 0 || r[0].nh > XFIB_DIR24_NH_MAX)
		return -EINVAL;
	for (k = 1; k < n; k++) {
		__u32 b = r[k].start >> GROUP_BITS;

		if (r[k].start <= r[k - 1].start || r[k].nh > XFIB_DIR24_NH_MAX)
			return -EINVAL;
		/*
		 * A /24 needs a group iff the value changes inside it (at
		 * an address that does not begin it). Unmerged neighbours
		 * with the same nexthop change nothing.
		 */
		if (!(r[k].start & LOW_MASK) || r[k].nh == r[k - 1].nh)
			continue;
		if (!counted || b != last_b)
			cnt++;
		counted = true;
		last_b = b;
	}
	return (int)cnt; /* at most 2^24 */
}

int dir24_build(struct dir24 *d, const struct xfib_bs4_range *r, size_t n)
{
	__u32 buf[GROUP_ENTRIES], b = 0;
	size_t k = 0;
	int groups;

	groups = count_groups(r, n);
	if (groups < 0)
		return groups;
	if ((__u32)groups > d->pool.ngroups)
		return -ENOSPC;
	/* The count is exact, so grpool_alloc() below cannot run dry. */
	grpool_reset(&d->pool);

	while (b < XFIB_DIR24_TBL24_ENTRIES) {
		__u32 base = b << GROUP_BITS, end, a, gi;
		size_t j;

		while (k + 1 < n && r[k + 1].start <= base)
			k++;
		/* /24s that r[k] covers entirely, from b on: one run. */
		end = k + 1 < n ? r[k + 1].start >> GROUP_BITS :
				  XFIB_DIR24_TBL24_ENTRIES;
		if (end > b) {
			for (; b < end; b++)
				d->tbl24[b] = r[k].nh;
			continue;
		}

		/* r[k + 1] starts inside /24 b. */
		for (a = 0, j = k; a < GROUP_ENTRIES; a++) {
			while (j + 1 < n && r[j + 1].start <= (base | a))
				j++;
			buf[a] = r[j].nh;
		}
		for (a = 1; a < GROUP_ENTRIES && buf[a] == buf[0]; a++)
			;
		if (a == GROUP_ENTRIES) {
			d->tbl24[b] = buf[0];
		} else {
			gi = grpool_alloc(&d->pool);
			memcpy(group_at(d, gi), buf, sizeof(buf));
			d->tbl24[b] = XFIB_DIR24_EXT | gi;
		}
		b++;
	}
	return 0;
}

void dir24_reclaim(struct dir24 *d)
{
	grpool_reclaim(&d->pool);
}

__u32 dir24_groups_used(const struct dir24 *d)
{
	return grpool_used(&d->pool);
}

__u32 dir24_groups_retired(const struct dir24 *d)
{
	return d->pool.nretired;
}

__u32 dir24_groups_free(const struct dir24 *d)
{
	return d->pool.nfree;
}
