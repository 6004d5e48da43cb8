/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * How dir24_8 and trie6 keep their tbl8 groups in BPF maps: a pool is a
 * run of chunks, each a BPF array map of XFIB_POOL_CHUNK_GROUPS groups,
 * all of the same size, and the chunks of slot s sit at indexes
 * s * XFIB_POOL_SLOT_CHUNKS + 0, 1, ... of the family's outer
 * ARRAY_OF_MAPS (xfib_dir24_tbl8, xfib_trie6_tbl8).
 *
 * Why chunks: the verifier inlines a lookup in an inner array map only if
 * every map the outer map may hold has the template's size (no
 * BPF_F_INNER_MAP). One pool map per slot would then have a fixed size;
 * chunks of a fixed size give a pool of any size, a whole chunk at a
 * time, and both lookups of a tbl8 read (outer, then chunk) are inlined:
 * no helper call, no branch on the pool's size. Entry i of a pool (group
 * i >> 8, address byte i & 255) is entry i % XFIB_POOL_CHUNK_ENTRIES of
 * chunk i / XFIB_POOL_CHUNK_ENTRIES.
 *
 * Userspace maps a pool's chunks back to back into one reserved range of
 * addresses, so the update side and xfibctl see one array of groups, as
 * the lookup headers' XFIB_U32_AT expects.
 */
#ifndef XFIB_TBL8_POOL_H
#define XFIB_TBL8_POOL_H

#include <linux/types.h>

/* 1024 groups of 256 __u32 entries: 1 MiB, the smallest pool. */
#define XFIB_POOL_CHUNK_GROUP_BITS 10
#define XFIB_POOL_CHUNK_GROUPS (1u << XFIB_POOL_CHUNK_GROUP_BITS)
#define XFIB_POOL_CHUNK_ENTRY_BITS (XFIB_POOL_CHUNK_GROUP_BITS + 8)
#define XFIB_POOL_CHUNK_ENTRIES (1u << XFIB_POOL_CHUNK_ENTRY_BITS)
/* Array values of a chunk: __u64, two entries each. */
#define XFIB_POOL_CHUNK_VALUES (XFIB_POOL_CHUNK_ENTRIES / 2)
#define XFIB_POOL_CHUNK_BYTES ((__u64)XFIB_POOL_CHUNK_VALUES * 8)
/* At most 2^20 groups (1 GiB) per pool. */
#define XFIB_POOL_SLOT_CHUNKS 1024u
#define XFIB_POOL_GROUPS_MAX (XFIB_POOL_SLOT_CHUNKS * XFIB_POOL_CHUNK_GROUPS)

/*
 * The maps are named, so that a reader walking a slot's chunks (xfibctl)
 * tells them from the placeholder the daemon leaves in the chunks of a
 * retired pool (an outer map's entry is emptied one grace period per
 * entry; replacing a run of them with one shared placeholder takes one).
 */
#define XFIB_POOL_CHUNK_NAME "xfib_tbl8"
#define XFIB_POOL_SPARE_NAME "xfib_tbl8_none"

#endif /* XFIB_TBL8_POOL_H */
