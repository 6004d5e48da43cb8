/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * xfibctl trace, the program's side (include/xfib/trace.h): a packet that
 * matches the filter and the sampling becomes one event in the ring.
 * trace_wanted() is all the fast path runs while nobody traces; the rest
 * is a separate function (a BPF-to-BPF call) that only tracing packets
 * enter, so it stays out of the forwarding code's way.
 */
#ifndef XFIB_BPF_TRACE_H
#define XFIB_BPF_TRACE_H

#include <linux/bpf.h>
#include <linux/in.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "lib/maps.h"
#include "lib/parse.h"
#include "xfib/decide.h"
#include "xfib/trace.h"

#define XFIB_NS_PER_S 1000000000ull

/* Someone traces: one array read (inlined) and one branch per packet. */
static __always_inline int trace_wanted(void)
{
	__u32 zero = 0;
	const struct xfib_trace_cfg *cfg =
		bpf_map_lookup_elem(&xfib_trace_cfg, &zero);

	return cfg && cfg->on;
}

/* The frame's addresses, protocol and ports into e, read again from the
 * packet: the steps keep only what forwarding needs. */
static __always_inline void trace_parse(struct xdp_md *ctx,
					struct xfib_trace_event *e)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	const __u16 *l4 = NULL;
	void *l3 = eth + 1;

	if (l3 > end)
		return;
	e->ethertype = bpf_ntohs(eth->h_proto);
	if (e->ethertype == 0x8100) {
		struct xfib_vlan_hdr *vh = l3;

		if ((void *)(vh + 1) > end)
			return;
		e->ethertype = bpf_ntohs(vh->proto);
		l3 = vh + 1;
	}
	if (e->ethertype == ETH_P_IP) {
		struct iphdr *iph = l3;

		if ((void *)(iph + 1) > end)
			return;
		e->af = XFIB_AF_INET;
		e->proto = iph->protocol;
		e->ttl = iph->ttl;
		__builtin_memcpy(e->saddr, &iph->saddr, 4);
		__builtin_memcpy(e->daddr, &iph->daddr, 4);
		/* Ports only where they are: no options, not a fragment. */
		if (iph->ihl == 5 &&
		    !(iph->frag_off & bpf_htons(XFIB_IP_MF_OFFSET)))
			l4 = (const __u16 *)(iph + 1);
	} else if (e->ethertype == ETH_P_IPV6) {
		struct ipv6hdr *ip6h = l3;

		if ((void *)(ip6h + 1) > end)
			return;
		e->af = XFIB_AF_INET6;
		e->proto = ip6h->nexthdr;
		e->ttl = ip6h->hop_limit;
		__builtin_memcpy(e->saddr, &ip6h->saddr, 16);
		__builtin_memcpy(e->daddr, &ip6h->daddr, 16);
		l4 = (const __u16 *)(ip6h + 1);
	}
	if (l4 && (e->proto == IPPROTO_TCP || e->proto == IPPROTO_UDP) &&
	    (const void *)(l4 + 2) <= end) {
		e->sport = bpf_ntohs(l4[0]);
		e->dport = bpf_ntohs(l4[1]);
	}
}

/* The first len bits of a and p agree (16 bytes each). */
static __always_inline int trace_prefix_match(const __u8 *a, const __u8 *p,
					      __u8 len)
{
	int i;

#pragma unroll
	for (i = 0; i < 16; i++) {
		if (len >= 8) {
			if (a[i] != p[i])
				return 0;
			len -= 8;
		} else {
			return !len || !((a[i] ^ p[i]) & (0xff00 >> len));
		}
	}
	return 1;
}

static __always_inline int trace_match(const struct xfib_trace_cfg *cfg,
				       const struct xfib_trace_event *e)
{
	if (cfg->af && e->af != cfg->af)
		return 0;
	if ((cfg->src_len || cfg->dst_len) && !e->af)
		return 0;
	if (cfg->src_len && !trace_prefix_match(e->saddr, cfg->src, cfg->src_len))
		return 0;
	if (cfg->dst_len && !trace_prefix_match(e->daddr, cfg->dst, cfg->dst_len))
		return 0;
	return 1;
}

/* Sampling: at most cfg->max events, at most cfg->rate a second. The
 * second's count is reset by whichever CPU first sees a new second: a
 * race can let a few more through at the turn, never many. */
static __always_inline int trace_take(const struct xfib_trace_cfg *cfg,
				      struct xfib_trace_state *st)
{
	if (cfg->max && st->emitted >= cfg->max)
		return 0;
	if (cfg->rate) {
		__u64 sec = bpf_ktime_get_ns() / XFIB_NS_PER_S;

		if (st->second != sec) {
			st->second = sec;
			st->in_second = 0;
		}
		/* A plain read first: past the limit, a flood costs no
		 * atomic add on the shared line. */
		if (st->in_second >= cfg->rate ||
		    __sync_fetch_and_add(&st->in_second, 1) >= cfg->rate)
			return 0;
	}
	return 1;
}

/*
 * Writes the event of a packet received on in_ifindex that the steps
 * decided reason for, path as far as they got. A global function: the
 * verifier checks it once, on its own, rather than again for every way
 * the steps reach the call (a static one cost the program's verification
 * about as much as the forwarding code).
 */
__noinline int xfib_trace(struct xdp_md *ctx, __u32 in_ifindex, __u32 reason,
			  const struct xfib_fwd_path *path)
{
	struct xfib_trace_event e = {};
	const struct xfib_trace_cfg *cfg;
	struct xfib_trace_state *st;
	__u32 zero = 0;

	cfg = bpf_map_lookup_elem(&xfib_trace_cfg, &zero);
	st = bpf_map_lookup_elem(&xfib_trace_state, &zero);
	if (!ctx || !path || !cfg || !st || !cfg->on)
		return 0;
	if (cfg->ifindex && cfg->ifindex != in_ifindex)
		return 0;
	if (cfg->reasons && reason < 64 && !(cfg->reasons & (1ull << reason)))
		return 0;
	trace_parse(ctx, &e);
	if (!trace_match(cfg, &e))
		return 0;
	if (!trace_take(cfg, st)) {
		__sync_fetch_and_add(&st->sampled, 1);
		return 0;
	}
	e.ts = bpf_ktime_get_ns();
	e.in_ifindex = in_ifindex;
	e.reason = reason;
	e.len = (__u32)(ctx->data_end - ctx->data);
	e.nh_idx = path->nh_idx;
	e.out_ifindex = path->ifindex;
	if (reason == XFIB_FWD_V4 || reason == XFIB_FWD_V6) {
		__builtin_memcpy(e.dmac, &path->neigh_w0, ETH_ALEN);
		__builtin_memcpy(e.smac, &path->neigh_w1, ETH_ALEN);
	}
	if (bpf_ringbuf_output(&xfib_trace_ring, &e, sizeof(e), 0))
		__sync_fetch_and_add(&st->lost, 1);
	else
		__sync_fetch_and_add(&st->emitted, 1);
	return 0;
}

#endif /* XFIB_BPF_TRACE_H */
