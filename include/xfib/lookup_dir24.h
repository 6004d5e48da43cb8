/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dir24_8: IPv4 longest-prefix match in at most two memory reads.
 *
 * tbl24 has one entry per /24: the top 24 bits of the address index it.
 * An entry either is the answer for the whole /24 (a nexthop index, 0 for
 * "no route") or, with XFIB_DIR24_EXT set, names a tbl8 group: 256 entries,
 * one per address of that /24, indexed by the low 8 bits. Group entries
 * are always nexthop indexes, never EXT. Prefixes of length 24 or less are
 * expanded into tbl24 entries; a /24 that holds a longer prefix gets a
 * group. The update side (ctl/xfibd/fib/dir24.c) keeps every entry a reader can
 * reach correct at all times, so this lookup needs no lock and no retry.
 *
 * Memory: both tables are arrays of __u32 entries. In BPF, tbl24 is an
 * array map of one 64 MiB value (2^24 entries): the program fetches the
 * value's address once and reads entries by index, plain loads the
 * verifier bounds by the value's size, with no map lookup per read.
 * Groups are array maps of __u64 values holding two entries each (array
 * values are rounded up to 8 bytes): entry i is the low half of value
 * i / 2 when i is even, the high half when i is odd. On the little-endian
 * machines XDP runs on, both are the same memory as a plain __u32 array,
 * which is how userspace sees the mmap()ed maps. A pool of G groups is
 * 256 * G entries (1 KiB per group), in BPF chunk maps of 1024 groups.
 *
 * The same code runs in the XDP program and in userspace (xfibctl, tests).
 * The includer defines XFIB_U32_AT(table, index), which yields the __u32
 * entry at index (in BPF: one bpf_map_lookup_elem() of index >> 1 and the
 * half that index & 1 selects; 0 if the lookup fails), then includes this
 * header. tbl24 entries are read with XFIB_TBL24_AT(tbl24, index) and
 * group entries with XFIB_GROUP_U32_AT(tbl8, index), both XFIB_U32_AT
 * unless the includer defines them (BPF: tbl24 is the value's address,
 * the pool a run of chunk maps, include/xfib/tbl8_pool.h). Without
 * XFIB_U32_AT the header only describes the layout, for map definitions
 * and the update side; including it again after defining XFIB_U32_AT adds
 * the lookup.
 */
#ifndef XFIB_LOOKUP_DIR24_H
#define XFIB_LOOKUP_DIR24_H

#include <linux/types.h>

/* An entry with this bit set is a tbl8 group index in the low bits. */
#define XFIB_DIR24_EXT 0x80000000u
#define XFIB_DIR24_IS_EXT(e) (((e) & XFIB_DIR24_EXT) != 0)
#define XFIB_DIR24_GROUP(e) ((e) & ~XFIB_DIR24_EXT)
/* Nexthop indexes must stay below the EXT bit. */
#define XFIB_DIR24_NH_MAX (XFIB_DIR24_EXT - 1)

#define XFIB_DIR24_TBL24_BITS 24
#define XFIB_DIR24_TBL24_ENTRIES (1u << XFIB_DIR24_TBL24_BITS)
#define XFIB_DIR24_GROUP_BITS 8
#define XFIB_DIR24_GROUP_ENTRIES (1u << XFIB_DIR24_GROUP_BITS)
/*
 * At most 2^24 groups, so that group * 256 + low byte fits a __u32 index
 * (and the pool is at most 16 GiB, far beyond any table: every group holds
 * a prefix longer than /24).
 */
#define XFIB_DIR24_GROUPS_MAX (1u << (32 - XFIB_DIR24_GROUP_BITS))

/* tbl24's one BPF map value; groups: __u64 values, two entries each. */
#define XFIB_DIR24_TBL24_BYTES (XFIB_DIR24_TBL24_ENTRIES * 4u)
#define XFIB_DIR24_GROUP_VALUES (XFIB_DIR24_GROUP_ENTRIES / 2)

#endif /* XFIB_LOOKUP_DIR24_H */

#if defined(XFIB_U32_AT) && !defined(XFIB_LOOKUP_DIR24_FN)
#define XFIB_LOOKUP_DIR24_FN

#ifndef XFIB_GROUP_U32_AT
#define XFIB_GROUP_U32_AT(tbl8, idx) XFIB_U32_AT(tbl8, idx)
#endif
#ifndef XFIB_TBL24_AT
#define XFIB_TBL24_AT(tbl24, idx) XFIB_U32_AT(tbl24, idx)
#endif

#ifndef XFIB_INLINE
#define XFIB_INLINE static inline __attribute__((always_inline))
#endif

/* addr in host order. Returns the nexthop index, 0 for no route. */
XFIB_INLINE __u32 xfib_dir24_lookup(void *tbl24, void *tbl8, __u32 addr)
{
	__u32 e = XFIB_TBL24_AT(tbl24, addr >> (32 - XFIB_DIR24_TBL24_BITS));

	if (!(e & XFIB_DIR24_EXT))
		return e;
	/*
	 * Shifting the entry left by 8 drops the EXT bit with the other high
	 * bits, which are zero for a group below XFIB_DIR24_GROUPS_MAX: what
	 * is left is the group's first entry.
	 */
	return XFIB_GROUP_U32_AT(tbl8,
				 (e << XFIB_DIR24_GROUP_BITS) |
				 (addr & (XFIB_DIR24_GROUP_ENTRIES - 1)));
}

#endif /* XFIB_U32_AT && !XFIB_LOOKUP_DIR24_FN */
