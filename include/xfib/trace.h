/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * xfibctl trace: the dataplane describes, one event per packet, the
 * decision it took for packets that match a filter, through a BPF ring
 * buffer (xfib_trace_ring). Nobody tracing costs the fast path one load
 * and one branch on xfib_trace_cfg.on; only a tracing packet pays for the
 * filter, the sampling and the event.
 *
 * xfib_trace_cfg is written whole by xfibctl, on last; xfib_trace_state
 * is the program's (atomic adds from every CPU), zeroed by xfibctl before
 * it turns tracing on.
 */
#ifndef XFIB_TRACE_H
#define XFIB_TRACE_H

#include <linux/types.h>
#include "counters.h"

#define XFIB_TRACE_RING_BYTES (256 * 1024)

_Static_assert(XFIB_REASON_COUNT <= 64, "reasons fit the trace's mask");

struct xfib_trace_cfg {
	__u32 on;	/* 0: nobody traces; the only field the fast path reads */
	__u32 owner;	/* pid of the tracing xfibctl */
	__u32 ifindex;	/* ingress port; 0: any */
	__u8 af;	/* XFIB_AF_INET / XFIB_AF_INET6; 0: any (and non-IP) */
	__u8 src_len;	/* source prefix length; 0: any */
	__u8 dst_len;	/* destination prefix length; 0: any */
	__u8 pad;
	__u64 reasons;	/* bit per enum xfib_reason; 0: any */
	__u32 rate;	/* events per second at most (all CPUs); 0: no limit */
	__u32 pad2;
	__u64 max;	/* events in all, then none; 0: no limit */
	__u8 src[16];	/* prefixes, network order, host bits zero */
	__u8 dst[16];
};
_Static_assert(sizeof(struct xfib_trace_cfg) == 72, "xfib_trace_cfg size");

struct xfib_trace_state {
	__u64 second;	 /* the second (ktime) in_second counts in */
	__u64 in_second; /* events taken in that second */
	__u64 emitted;	 /* events written to the ring */
	__u64 sampled;	 /* matching packets left out by --rate or max */
	__u64 lost;	 /* events the full ring had no room for */
};
_Static_assert(sizeof(struct xfib_trace_state) == 40, "xfib_trace_state size");

/* One packet's decision. Addresses and MACs network order, ports host. */
struct xfib_trace_event {
	__u64 ts;	   /* bpf_ktime_get_ns() */
	__u32 in_ifindex;
	__u32 reason;	   /* enum xfib_reason: FWD_*, DROP_*, PASS_* */
	__u32 len;	   /* frame length */
	__u32 nh_idx;	   /* the nexthop taken (a multipath route's member);
			    * 0: the packet stopped before the lookup, or
			    * the lookup found no route */
	__u32 out_ifindex; /* egress port, as far as the decision got; 0: none */
	__u16 sport;
	__u16 dport;
	__u8 af;	   /* XFIB_AF_INET / XFIB_AF_INET6; 0: not IP */
	__u8 proto;	   /* IP protocol / IPv6 next header */
	__u8 ttl;	   /* TTL / hop limit as received */
	__u8 pad;
	__u16 ethertype;   /* host order, after a priority tag */
	__u16 pad2;
	__u8 saddr[16];
	__u8 daddr[16];
	__u8 dmac[6];	   /* forwarded: the MACs written on the frame */
	__u8 smac[6];
	__u32 pad3;
};
_Static_assert(sizeof(struct xfib_trace_event) == 88, "xfib_trace_event size");

#endif /* XFIB_TRACE_H */
