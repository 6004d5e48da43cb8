/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * trie6: IPv6 longest-prefix match in a multibit trie with a 24-bit first
 * level and 8-bit strides below it (the shape of DPDK's rte_lpm6 and
 * rte_fib6 trie).
 *
 * tbl24 has one entry per /24: the first three bytes of the address index
 * it. An entry either is the answer for every address below it (a nexthop
 * index, 0 for "no route") or, with XFIB_TRIE6_EXT set, names a tbl8 group:
 * 256 entries indexed by the next address byte, each of which is again an
 * answer or a group one level down. Bytes 3..15 of the address select the
 * entries of up to 13 levels of groups; an entry of the last level (byte
 * 15, one address) is always an answer. Prefixes are leaf-pushed: every
 * entry holds the longest match for all the addresses below it, so the
 * walk stops at the first answer and never backtracks. A group exists
 * only where the answer below an entry is not uniform. The update side
 * (ctl/xfibd/fib/trie6.c) keeps every entry a reader can reach correct at all times,
 * so this lookup needs no lock and no retry.
 *
 * Memory: both tables are arrays of __u32 entries, in BPF maps laid out
 * as dir24_8's (include/xfib/lookup_dir24.h): tbl24 one 64 MiB map value
 * read by index, groups __u64 values of two entries each. A pool of G
 * groups is 256 * G entries (1 KiB per group), in BPF chunk maps of 1024
 * groups.
 *
 * The same code runs in the XDP program and in userspace (xfibctl, tests).
 * The includer defines XFIB_U32_AT(table, index), which yields the __u32
 * entry at index (in BPF: one bpf_map_lookup_elem() of index >> 1 and the
 * half that index & 1 selects; 0 if the lookup fails), then includes this
 * header. tbl24 and group entries are read with XFIB_TBL24_AT and
 * XFIB_GROUP_U32_AT, as in lookup_dir24.h. Without XFIB_U32_AT the header
 * only describes the layout, for map definitions and the update side;
 * including it again after defining XFIB_U32_AT adds the lookup.
 */
#ifndef XFIB_LOOKUP_TRIE6_H
#define XFIB_LOOKUP_TRIE6_H

#include <linux/types.h>

/* An entry with this bit set is a tbl8 group index in the low bits. */
#define XFIB_TRIE6_EXT 0x80000000u
#define XFIB_TRIE6_IS_EXT(e) (((e) & XFIB_TRIE6_EXT) != 0)
#define XFIB_TRIE6_GROUP(e) ((e) & ~XFIB_TRIE6_EXT)
/* Nexthop indexes must stay below the EXT bit. */
#define XFIB_TRIE6_NH_MAX (XFIB_TRIE6_EXT - 1)

#define XFIB_TRIE6_TBL24_BITS 24
#define XFIB_TRIE6_TBL24_ENTRIES (1u << XFIB_TRIE6_TBL24_BITS)
#define XFIB_TRIE6_GROUP_BITS 8
#define XFIB_TRIE6_GROUP_ENTRIES (1u << XFIB_TRIE6_GROUP_BITS)
/* Group levels below tbl24: (128 - 24) / 8, one per remaining byte. */
#define XFIB_TRIE6_MAX_LEVELS 13
/*
 * At most 2^24 groups, so that group * 256 + byte fits a __u32 index (and
 * the pool is at most 16 GiB, far beyond any table).
 */
#define XFIB_TRIE6_GROUPS_MAX (1u << (32 - XFIB_TRIE6_GROUP_BITS))

/* tbl24's one BPF map value; groups: __u64 values, two entries each. */
#define XFIB_TRIE6_TBL24_BYTES (XFIB_TRIE6_TBL24_ENTRIES * 4u)
#define XFIB_TRIE6_GROUP_VALUES (XFIB_TRIE6_GROUP_ENTRIES / 2)

#endif /* XFIB_LOOKUP_TRIE6_H */

#if defined(XFIB_U32_AT) && !defined(XFIB_LOOKUP_TRIE6_FN)
#define XFIB_LOOKUP_TRIE6_FN

#ifndef XFIB_GROUP_U32_AT
#define XFIB_GROUP_U32_AT(tbl8, idx) XFIB_U32_AT(tbl8, idx)
#endif
#ifndef XFIB_TBL24_AT
#define XFIB_TBL24_AT(tbl24, idx) XFIB_U32_AT(tbl24, idx)
#endif

#ifndef XFIB_INLINE
#define XFIB_INLINE static inline __attribute__((always_inline))
#endif

/*
 * The verifier accepts bounded loops, but unrolled, each level reads the
 * address byte at a constant offset (packet bounds proven once by the
 * caller) and there is no loop state to track.
 */
#if defined(__clang__)
#define XFIB_TRIE6_UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#define XFIB_TRIE6_UNROLL _Pragma("GCC unroll 13")
#else
#define XFIB_TRIE6_UNROLL
#endif

/*
 * addr: the 16 bytes of the address in network order (in BPF: packet
 * memory already bounds-checked for 16 bytes, or the stack). Returns the
 * nexthop index, 0 for no route.
 */
XFIB_INLINE __u32 xfib_trie6_lookup(void *tbl24, void *tbl8, const __u8 *addr)
{
	__u32 e = XFIB_TBL24_AT(tbl24, (__u32)addr[0] << 16 |
					       (__u32)addr[1] << 8 | addr[2]);
	int i;

	XFIB_TRIE6_UNROLL
	for (i = 0; i < XFIB_TRIE6_MAX_LEVELS; i++) {
		if (!(e & XFIB_TRIE6_EXT))
			return e;
		/*
		 * Shifting the entry left by 8 drops the EXT bit with the
		 * other high bits, which are zero for a group below
		 * XFIB_TRIE6_GROUPS_MAX: what is left is the group's first
		 * entry.
		 */
		e = XFIB_GROUP_U32_AT(tbl8, (e << XFIB_TRIE6_GROUP_BITS) |
						    addr[3 + i]);
	}
	/* The last level never holds a group: this table is corrupt. */
	return (e & XFIB_TRIE6_EXT) ? 0 : e;
}

#endif /* XFIB_U32_AT && !XFIB_LOOKUP_TRIE6_FN */
