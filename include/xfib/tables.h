/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The routing tables policy rules reach, besides main and local: their
 * lookup structures, shared by the XDP program's rule walk, xfibd
 * (ctl/xfibd/fib/fib_tables.c), which builds them, and xfibctl.
 *
 * Per family, table slot 0 is the mirrored table (main) merged with the
 * local table: the family's xfib_active instance, chosen by scale like
 * always. Slots 1 .. XFIB_TABLE_SLOTS - 1 hold the other tables a rule's
 * lookup reaches (include/xfib/rules.h, xfib_rule.tslot), and a copy of
 * main without local when a rule looks main up with a
 * suppress_prefixlength other than 0 (which needs the length of the
 * prefix that matched, which slot 0's structures do not keep; whether it
 * is a /0, all that suppress_prefixlength 0 asks, its nexthop index
 * says: include/xfib/maps.h).
 *
 * Each slot's lookup structure is chosen by its table's scale, by the
 * choice main's is made by (ctl/xfibd/fib/fib_select.c: the same
 * preferences and 5% hysteresis):
 *  - most such tables are small (a default route per uplink, a VPN's
 *    prefixes, a tailnet's hosts): a sorted range array searched by
 *    bisection (as bsearch4/bsearch6), in one pool per family. A table of
 *    n prefixes takes at most 2n + 1 ranges, rounded up to a power of
 *    two, so memory follows the tables' sizes;
 *  - a large one (a second uplink's full table) gets an instance of
 *    dir24_8 (IPv4) or trie6 (IPv6) of its own, in two map-in-map slots of
 *    that algorithm's outer maps reserved for the table slot
 *    (XFIB_TABLE_INST_SLOT; one serves, the other takes the next build).
 *    Nothing of it exists until the table is that large: the outer
 *    entries are empty, and an empty map-in-map entry costs a pointer.
 *    Only the algorithms whose instances live in map-in-map slots can
 *    serve a table: dxr and poptrie6 have two fixed slots, main's.
 * A copy of main for suppress_prefixlength is always ranges: it exists
 * for the prefix lengths, which the large structures do not keep (an
 * instance answers XFIB_TABLE_PLEN_UNKNOWN, and a rule with
 * suppress_prefixlength that reaches one hands its packets to the
 * kernel); one too large for the pool leaves its rules to the kernel.
 *
 * Each range keeps the nexthop index of the prefix that answers for it
 * and that prefix's length (for suppress_prefixlength). A range no prefix
 * covers, or covered by a throw route, answers XFIB_NH_IDX_NONE: to the
 * kernel's rules both are "no route here", on to the next rule
 * (fib_table_lookup returns -EAGAIN for either).
 *
 * A table is rebuilt whole when it changes, into free space of the pool
 * or the table slot's standby instance slot, and published with one
 * 8-byte store of its descriptor (xfib_table_desc); the space it held is
 * reused after an RCU grace period. The program reads a descriptor once
 * per lookup.
 */
#ifndef XFIB_TABLES_H
#define XFIB_TABLES_H

#include <linux/types.h>
#include "maps.h"

#define XFIB_TABLE_SLOTS 16
/* Slot 0: the family's main instance (xfib_active), merged with local. */
#define XFIB_TSLOT_MAIN 0
/* xfib_rule.tslot of a rule whose table has no slot: to the kernel. */
#define XFIB_TSLOT_NONE 0xff
/* ... of "lookup local" after the first rule: the walk starts where slot
 * 0's lookup found no local route, so it finds none here either. */
#define XFIB_TSLOT_LOCAL 0xfe

/*
 * Map-in-map slots of the dir24_8 and trie6 outer maps: main's XFIB_SLOTS,
 * then two per table slot 1 .. XFIB_TABLE_SLOTS - 1 (which of the two is
 * odd). Layout 6.
 */
#define XFIB_INST_SLOTS (XFIB_SLOTS + 2 * (XFIB_TABLE_SLOTS - 1))
#define XFIB_TABLE_INST_SLOT(slot, odd) \
	(XFIB_SLOTS + 2 * ((slot) - 1) + ((odd) & 1))

/* The prefix length an instance answers with: it keeps none. */
#define XFIB_TABLE_PLEN_UNKNOWN 0xff

/* Ranges in each family's pool: 8 MiB (IPv4), 6 MiB (IPv6). */
#define XFIB_TPOOL4_LOG2 20
#define XFIB_TPOOL6_LOG2 18
#define XFIB_TPOOL4_SIZE (1u << XFIB_TPOOL4_LOG2)
#define XFIB_TPOOL6_SIZE (1u << XFIB_TPOOL6_LOG2)

/* nh_plen of an IPv4 range: nexthop index in the low 24 bits, the
 * answering prefix's length in the top 8. */
#define XFIB_TR4_NH(v) ((v) & 0xffffffu)
#define XFIB_TR4_PLEN(v) ((v) >> 24)
#define XFIB_TR4_PACK(nh, plen) (((__u32)(plen) << 24) | ((nh) & 0xffffffu))

/* [start, next range's start) -> nh_plen; start in host order. */
struct xfib_tr4 {
	__u32 start;
	__u32 nh_plen;
};
_Static_assert(sizeof(struct xfib_tr4) == 8, "xfib_tr4 size");

struct xfib_tr6 {
	__u64 hi; /* start, host-order halves */
	__u64 lo;
	__u32 nh;
	__u8 plen;
	__u8 pad[3];
};
_Static_assert(sizeof(struct xfib_tr6) == 24, "xfib_tr6 size");

enum xfib_table_state {
	XFIB_TABLE_EMPTY = 0,     /* no routes (or none published yet): a
				   * lookup finds nothing, on to the next rule */
	XFIB_TABLE_READY = 1,     /* 2^log2n ranges from off */
	XFIB_TABLE_KERNEL = 2,    /* not mirrored (too large, a route xfib
				   * cannot model): the packets that reach
				   * it go to the kernel */
	XFIB_TABLE_INSTANCE = 3,  /* an instance of algo (dir24_8, trie6) in
				   * map-in-map slot off of its outer maps */
};

/*
 * xfib_tables[fam * XFIB_TABLE_SLOTS + slot]: one 8-byte word, written
 * with one store, read once per lookup. Slot 0's is unused (main is
 * xfib_active). The ranges of a READY table are pool[off .. off +
 * 2^log2n); the first starts at address 0; entries past the table's last
 * range repeat it (bisection needs a power of two).
 */
struct xfib_table_desc {
	__u32 off;   /* READY: the first range; INSTANCE: the slot */
	__u8 state;  /* enum xfib_table_state */
	__u8 log2n;  /* READY */
	__u8 algo;   /* INSTANCE: enum xfib_algo */
	__u8 gen;    /* counts publications (mod 256), for readers that look
		      * twice: their two reads are microseconds apart, 256
		      * publications of a slot take as many grace periods */
} __attribute__((aligned(8)));
_Static_assert(sizeof(struct xfib_table_desc) == 8, "xfib_table_desc size");

/* Per slot, for xfibctl and bpftool: which table it is and how big. */
struct xfib_table_info {
	__u32 table;   /* kernel table id; 0: slot free */
	__u32 routes;  /* prefixes */
	__u32 ranges;  /* ranges built (READY), groups used (INSTANCE) */
	__u8 main_copy; /* a copy of main for suppress_prefixlength 1.. */
	__u8 state;    /* as the descriptor */
	__u8 reason;   /* KERNEL: enum xfib_table_reason */
	__u8 algo;     /* enum xfib_algo serving it: bsearch4/bsearch6 for
			* the ranges, dir24_8/trie6 for an instance */
	__u64 mem_bytes; /* what its structure takes */
};
_Static_assert(sizeof(struct xfib_table_info) == 24, "xfib_table_info size");

enum xfib_table_reason {
	XFIB_TABLE_R_NONE = 0,
	XFIB_TABLE_R_TOO_LARGE = 1,   /* its ranges do not fit the pool */
	XFIB_TABLE_R_UNSUPPORTED = 2, /* a route xfib does not model (an
				       * IPv6 source-specific route) */
	XFIB_TABLE_R_BUILD_FAILED = 3, /* its instance could not be built
					* (memory): retried at its next
					* change */
};

#endif /* XFIB_TABLES_H */
