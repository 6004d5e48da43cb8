/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the parts of the userspace lookup share: dpl_map.c maps the live
 * instance, dplookup.c looks up and decides with the dataplane's code,
 * dpl_walk.c walks a whole instance. Not for the users of dplookup.h.
 */
#ifndef XFIB_DPL_PRIV_H
#define XFIB_DPL_PRIV_H

#include "dplookup.h"

/* Consecutive instance swaps tolerated while answering one batch. */
#define DPL_TRIES 100

/* The family's xfib_active word: the instance answering. */
static inline __u64 active_word(const struct dpl *d)
{
	return __atomic_load_n((const __u64 *)&d->active[d->fam], __ATOMIC_ACQUIRE);
}

/* The table accessors of the lookup headers (XFIB_TBL_AT, XFIB_U32_AT):
 * an index past the end reads as nothing, as a map lookup does. */
static inline void *dpl_tbl_at(void *tbl, __u32 idx)
{
	struct dpl_tbl *t = tbl;

	if (idx >= t->n)
		return NULL;
	return (char *)t->base + (size_t)idx * t->esz;
}

/* Acquire: a tbl8 group is filled before the entry that leads to it is
 * published (the BPF side gets this order from the address dependency). */
static inline __u32 dpl_u32_at(void *tbl, __u32 idx)
{
	struct dpl_tbl *t = tbl;

	if (idx >= t->n)
		return XFIB_NH_IDX_NONE;
	return __atomic_load_n((const __u32 *)t->base + idx, __ATOMIC_ACQUIRE);
}


/* dpl_map.c: slot `slot` of a dir24_8/trie6 outer map, mapped read-only:
 * its tbl24, and its pool's chunks back to back (-ENOENT: none). */
int dpl_map_tbl24(int outer_fd, __u32 slot, struct dpl_tbl *t);
int dpl_map_pool(int outer_fd, __u32 slot, struct dpl_tbl *t);
void dpl_tbl_unmap(struct dpl_tbl *t);

/* The lookup code the XDP program runs, on these accessors. */
#define XFIB_TBL_AT(tbl, idx) dpl_tbl_at((tbl), (idx))
#define XFIB_U32_AT(tbl, idx) dpl_u32_at((tbl), (idx))
#include "xfib/lookup_bsearch.h"
#include "xfib/lookup_dir24.h"
#include "xfib/lookup_trie6.h"
#include "xfib/lookup_dxr.h"
#include "xfib/lookup_poptrie6.h"

#endif /* XFIB_DPL_PRIV_H */
