/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Shared between the benchmark's BPF programs (gen, sink) and fwdbench,
 * the userspace side that loads them: the frame size, the generator's
 * settings (read-only data set through the skeleton before load) and the
 * map values, so both compilers agree on one layout.
 */
#ifndef FWDBENCH_H
#define FWDBENCH_H

#include <linux/types.h>

/* 64 bytes on the wire without FCS (veth carries none): the usual
 * "64-byte frame" of forwarding benchmarks, large enough for
 * Ethernet + IPv6 + UDP (62 bytes). */
#define FWDBENCH_FRAME_LEN 64

/* Most destinations the generator cycles through (a power of two). */
#define FWDBENCH_NDST_MAX 65536

/* Generator settings. Addresses and MACs are kept as raw network-order
 * words so the program copies them with word stores. */
struct gen_cfg {
	__u16 dmac[3];     /* router ingress port */
	__u16 smac[3];     /* generator port */
	__u32 family;      /* 4 or 6 */
	__u32 ndst;        /* destinations: base + i * stride, i < ndst,
			    * sent in the order of gen's dst_order */
	__u32 src4;        /* network order */
	__u32 dst4;        /* host order: added to before the byte swap */
	__u32 src6[4];     /* network order */
	__u32 dst6[4];     /* network order: the first destination */
	__u32 dst6_lo;     /* host order: dst6[dst6_word] of the first destination */
	__u32 dst6_word;   /* which 32-bit word of the address varies (1 or 3) */
	__u32 stride;      /* destination i is base + i * stride */
	__u16 sport;       /* host order */
	__u16 dport;       /* host order */
};

/* Per-CPU generator state: the next destination index and frames built. */
struct gen_state {
	__u32 next;
	__u32 pad;
	__u64 sent;
};

/* Per-CPU sink totals. */
struct sink_count {
	__u64 packets;
	__u64 bytes;
};

#endif /* FWDBENCH_H */
