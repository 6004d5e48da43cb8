/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The memory a lookup reads, counted: the same lookup headers as the timed
 * native loops of lookupbench.c, over the same mmap()ed tables, with table
 * accessors that note each read and the 64-byte cache lines it touches.
 * A separate translation unit: each header defines its lookup function
 * once, with the accessors defined when it is first included, and
 * lookupbench.c includes them with dpl_priv.h's (through dplookup.c).
 */
#ifndef XFIB_LOOKUPREADS_H
#define XFIB_LOOKUPREADS_H

#include <linux/types.h>

#include "dplookup.h"

#define LR_LINE_BYTES 64

struct lr_stats {
	__u64 lookups;
	__u64 reads;     /* accessor calls (XFIB_U32_AT, XFIB_TBL_AT) */
	__u32 reads_max; /* most in one lookup */
	__u64 lines;     /* distinct cache lines per lookup, summed */
	__u64 ws_lines;  /* distinct cache lines over all the lookups */
	__u64 sum;       /* the answers (nexthop indexes) added up */
};

/*
 * n lookups in d's instance, of keys[i & mask] for i from 0, as the timed
 * loops run them: keys in network order, 4 bytes each for IPv4, 16 for
 * IPv6. -ENOTSUP for an algorithm without a lookup header here, -ENOMEM.
 */
int lr_count(struct dpl *d, const __u8 *keys, __u32 mask, __u64 n,
	     struct lr_stats *st);

#endif /* XFIB_LOOKUPREADS_H */
