/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dxr: IPv4 longest-prefix match over compact range tables, in the manner
 * of DXR (Zec, Rizzo, Mikuc: "DXR: towards a billion routing lookups per
 * second in software", 2012).
 *
 * The address space is cut into 2^16 chunks of 2^16 addresses (a /16
 * each). The direct table has one 32-bit descriptor per chunk, indexed by
 * the top 16 bits of the address:
 *
 *   bit 31 clear  the whole chunk has one answer: the descriptor is the
 *                 nexthop index (0 for no route);
 *   bit 31 set    the chunk's answers are a run of range entries in the
 *                 range table: bits 0-21 the run's first entry, bits
 *                 22-30 its length (1..511); length 0 marks a long run,
 *                 whose length is the __u32 at the first entry and whose
 *                 entries follow it.
 *
 * A range entry is (offset << 16) | nexthop: the range starts at that
 * offset (the low 16 bits of the address) and runs to the next entry's
 * offset; a run's first entry has offset 0. Nexthop indexes are below
 * XFIB_NEXTHOP_MAX (2^16), so every entry is 4 bytes. A lookup reads the
 * descriptor and, for a chunk with more than one answer, binary-searches
 * its run: at most 16 steps (a run holds at most 2^16 entries), typically
 * a handful within one or two cache lines.
 *
 * Memory: 256 KiB of descriptors plus 4 bytes per range entry, about one
 * entry per prefix on Internet-shaped tables.
 *
 * Both tables have two slots (active and standby) in fixed-size BPF array
 * maps of __u64 values holding two __u32 entries each, the layout
 * lookup_dir24.h describes (entry i is __u32 i of the mmap()ed map). A
 * build fills the standby slot; one store of the family's xfib_active word
 * publishes it, so a packet never sees a half-built slot.
 *
 * The same code runs in the XDP program and in userspace. The includer
 * defines XFIB_U32_AT(table, index) as for lookup_dir24.h, then includes
 * this header; without it the header only describes the layout.
 */
#ifndef XFIB_LOOKUP_DXR_H
#define XFIB_LOOKUP_DXR_H

#include <linux/types.h>

#define XFIB_DXR_CHUNK_BITS 16
#define XFIB_DXR_CHUNKS (1u << XFIB_DXR_CHUNK_BITS)
#define XFIB_DXR_RANGE 0x80000000u
#define XFIB_DXR_BASE_BITS 22
#define XFIB_DXR_BASE_MASK ((1u << XFIB_DXR_BASE_BITS) - 1)
#define XFIB_DXR_LEN_MAX 511u /* longer runs store their length */
/* Range entries per slot: enough for 2n + 1 ranges of two million
 * prefixes plus a split and a length word per chunk. */
#define XFIB_DXR_SLOT_RANGES (1u << XFIB_DXR_BASE_BITS)
/* Longest binary search: a run holds at most 2^16 entries. */
#define XFIB_DXR_STEPS (XFIB_DXR_CHUNK_BITS + 1)

/* Sizes of the BPF array maps (both slots): __u64 values, two entries each. */
#define XFIB_DXR_DIRECT_VALUES XFIB_DXR_CHUNKS
#define XFIB_DXR_RANGE_VALUES XFIB_DXR_SLOT_RANGES

#define XFIB_DXR_ENTRY(off, nh) (((__u32)(off) << 16) | (nh))
#define XFIB_DXR_DESC(base, len) \
	(XFIB_DXR_RANGE | ((__u32)(len) << XFIB_DXR_BASE_BITS) | (base))

#endif /* XFIB_LOOKUP_DXR_H */

#if defined(XFIB_U32_AT) && !defined(XFIB_LOOKUP_DXR_FN)
#define XFIB_LOOKUP_DXR_FN

#ifndef XFIB_INLINE
#define XFIB_INLINE static inline __attribute__((always_inline))
#endif

/* addr in host order; slot from the family's xfib_active word. Returns
 * the nexthop index, 0 for no route. */
XFIB_INLINE __u32 xfib_dxr_lookup(void *direct, void *ranges, __u32 slot,
				  __u32 addr)
{
	__u32 d = XFIB_U32_AT(direct, ((slot & 1) << XFIB_DXR_CHUNK_BITS) |
					      (addr >> XFIB_DXR_CHUNK_BITS));
	/* entry <= key exactly when the entry's offset <= addr's offset */
	__u32 key = (addr << 16) | 0xffff;
	__u32 pos, n;
	int i;

	if (!(d & XFIB_DXR_RANGE))
		return d;
	pos = ((slot & 1) << XFIB_DXR_BASE_BITS) | (d & XFIB_DXR_BASE_MASK);
	n = (d & ~XFIB_DXR_RANGE) >> XFIB_DXR_BASE_BITS;
	if (!n) {
		n = XFIB_U32_AT(ranges, pos);
		pos++;
	}
	/* Invariant: entry pos starts at or below addr; the answer is among
	 * the n entries from pos. */
	for (i = 0; i < XFIB_DXR_STEPS; i++) {
		__u32 half = n >> 1;

		if (n <= 1)
			break;
		if (XFIB_U32_AT(ranges, pos + half) <= key)
			pos += half;
		n -= half;
	}
	return XFIB_U32_AT(ranges, pos) & 0xffff;
}

#endif /* XFIB_U32_AT && !XFIB_LOOKUP_DXR_FN */
