/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The tbl8 group pool of dir24_8 and trie6: the groups (256 __u32 entries
 * each, in memory the caller provides), which of them are free to hand
 * out, and which were unlinked while readers may still be inside them.
 *
 * A group is in use (reachable from the table), free or retired, so the
 * three counts always add up to ngroups. A retired group is neither
 * written nor handed out again until grpool_reclaim(), which the caller
 * calls only after an RCU grace period: a reader that loaded the entry
 * pointing to it may still be reading it and must find the values it held.
 */
#ifndef XFIB_GRPOOL_H
#define XFIB_GRPOOL_H

#include <stdbool.h>
#include <stdlib.h>
#include <linux/types.h>

#define GRPOOL_GROUP_ENTRIES 256

struct grpool {
	__u32 *tbl8;    /* ngroups * GRPOOL_GROUP_ENTRIES entries */
	__u32 ngroups;
	__u32 nfree;
	__u32 nretired;
	__u32 *free;    /* stack of free groups, top at free[nfree - 1] */
	__u32 *retired; /* unlinked since the last grpool_reclaim() */
};

/*
 * Takes over tbl8 (ngroups groups; may be NULL when ngroups is 0), every
 * group free. With clear, the groups are zeroed; without, the caller
 * knows they are (new BPF array maps are), and a mostly unused pool is
 * not touched page by page. Returns 0, -EINVAL or -ENOMEM.
 */
int grpool_init(struct grpool *p, __u32 *tbl8, __u32 ngroups, bool clear);
void grpool_fini(struct grpool *p);
/*
 * The pool grows to ngroups: the groups past the old end (zeroed, at
 * their place after the others in tbl8, which the caller has made
 * readable to the lookups) become free; the groups in use and retired
 * keep their numbers. Returns 0, -EINVAL (fewer groups) or -ENOMEM
 * (nothing changed).
 */
int grpool_grow(struct grpool *p, __u32 ngroups);
/* Every group free again, retired ones included (for a table no reader
 * can reach); the lowest numbers are handed out first. */
void grpool_reset(struct grpool *p);
/* After a grace period: the retired groups become free. */
void grpool_reclaim(struct grpool *p);

static inline __u32 *grpool_group(const struct grpool *p, __u32 g)
{
	return p->tbl8 + (size_t)g * GRPOOL_GROUP_ENTRIES;
}

/*
 * Callers reserve before they write, so the pool cannot be empty here;
 * going on would corrupt a table readers are using.
 */
static inline __u32 grpool_alloc(struct grpool *p)
{
	if (!p->nfree)
		abort();
	return p->free[--p->nfree];
}

/* Back to the free stack: for a group no reader has seen. */
static inline void grpool_put(struct grpool *p, __u32 g)
{
	p->free[p->nfree++] = g;
}

/* Unlinked from the table: free only after the next grace period. */
static inline void grpool_retire(struct grpool *p, __u32 g)
{
	p->retired[p->nretired++] = g;
}

static inline __u32 grpool_used(const struct grpool *p)
{
	return p->ngroups - p->nfree - p->nretired;
}

#endif /* XFIB_GRPOOL_H */
