// SPDX-License-Identifier: GPL-2.0-only
/*
 * xfib_fwd: the XDP forwarder. Parses Ethernet (+ one priority tag), IPv4
 * and IPv6, looks the destination up in the family's published instance,
 * resolves nexthop and neighbour through index arrays, decrements TTL/hop
 * limit, rewrites the MACs and redirects to the egress port.
 *
 * Rule: whatever the kernel would treat specially (local delivery, ICMP
 * errors, neighbour resolution, fragmentation, options, policy) goes to
 * the kernel with XDP_PASS and a counted reason. When in doubt, pass.
 */
#include <linux/bpf.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "lib/parse.h"
#include "lib/maps.h"

#define XFIB_TBL_AT(map, idx) bpf_map_lookup_elem(map, &(__u32){ (idx) })
#include "xfib/lookup_bsearch.h"

/*
 * dir24_8 and trie6 tables are arrays of __u64 holding two __u32 entries
 * each. One 8-byte load takes both halves from the same store, so a
 * concurrent update of the other half cannot tear the entry read.
 */
static __always_inline __u32 xfib_u32_at(void *map, __u32 idx)
{
	__u32 key = idx >> 1;
	__u64 *v = bpf_map_lookup_elem(map, &key);

	if (!v)
		return XFIB_NH_IDX_NONE;
	return (__u32)(*(volatile __u64 *)v >> ((idx & 1) * 32));
}

#define XFIB_U32_AT(map, idx) xfib_u32_at(map, idx)
#include "xfib/lookup_dir24.h"
#include "xfib/lookup_trie6.h"
#include "xfib/flow_hash.h"

#ifndef AF_INET
#define AF_INET 2
#endif
#ifndef AF_INET6
#define AF_INET6 10
#endif

#define ETH_P_8021Q_ 0x8100

char LICENSE[] SEC("license") = "GPL";

static __always_inline int count(__u32 reason, __u32 len, int verdict)
{
	struct xfib_counter *c = bpf_map_lookup_elem(&xfib_stats, &reason);

	if (c) {
		c->packets++;
		c->bytes += len;
	}
	return verdict;
}

#define PASS(reason) count(XFIB_##reason, pkt.len, XDP_PASS)

/* Addresses the kernel never forwards as plain unicast: hand them over. */
static __always_inline int ipv4_special(__u32 saddr, __u32 daddr)
{
	__u8 s = saddr >> 24, d = daddr >> 24;

	return d == 0 || d == 127 || d >= 224 || s == 0 || s == 127 ||
	       s >= 224;
}

static __always_inline int ipv6_special(__u64 shi, __u64 slo, __u64 dhi,
					__u64 dlo)
{
	/* multicast ff00::/8, link-local fe80::/10 */
	if ((dhi >> 56) == 0xff || (dhi >> 54) == (0xfe80ull >> 6))
		return 1;
	if ((shi >> 56) == 0xff || (shi >> 54) == (0xfe80ull >> 6))
		return 1;
	/* ::/80, which holds the unspecified and loopback addresses, the
	 * deprecated IPv4-compatible ::/96 and the IPv4-mapped ::ffff:0:0/96
	 * that never appear on the wire: the kernel decides. */
	if (dhi == 0 && (dlo >> 32) <= 0xffff)
		return 1;
	if (shi == 0 && (slo >> 32) <= 0xffff)
		return 1;
	return 0;
}

static __always_inline __u64 load_be64(const void *p)
{
	return bpf_be64_to_cpu(*(const __u64 *)p);
}

/* Finds the neighbour for nexthop nh and destination addr. */
static __always_inline struct xfib_neigh *
resolve_neigh(const struct xfib_nexthop *nh, __u8 family, const void *daddr)
{
	struct xfib_neigh_key key = {};
	__u32 *idx, nidx;

	if (nh->kind == XFIB_NH_GATEWAY) {
		nidx = nh->neigh;
	} else {
		key.ifindex = nh->ifindex;
		key.family = family;
		if (family == AF_INET)
			__builtin_memcpy(key.addr, daddr, 4);
		else
			__builtin_memcpy(key.addr, daddr, 16);
		idx = bpf_map_lookup_elem(&xfib_neigh_hosts, &key);
		if (!idx)
			return NULL;
		nidx = *idx;
	}
	return bpf_map_lookup_elem(&xfib_neighs, &nidx);
}

/* Source and destination ports of a TCP or UDP packet whose transport
 * header starts at l4, as (sport << 16 | dport); 0 otherwise. */
static __always_inline __u32 l4_ports(const struct xfib_pkt *pkt,
				      const void *l4, __u8 proto)
{
	const __u32 *ports = l4;

	if (proto != IPPROTO_TCP && proto != IPPROTO_UDP)
		return 0;
	if ((const void *)(ports + 1) > pkt->data_end)
		return 0;
	return bpf_ntohl(*ports);
}

/* The flow hash of the packet (include/xfib/flow_hash.h). Fragments hash
 * without ports, so all fragments of a datagram take one path. */
static __always_inline __u32 pkt_flow_hash(const struct xfib_pkt *pkt)
{
	if (pkt->proto == ETH_P_IP) {
		const struct iphdr *iph = pkt->l3;
		__u32 ports = 0;

		if ((const void *)(iph + 1) > pkt->data_end)
			return 0;
		if (!(iph->frag_off & bpf_htons(0x3fff)))
			ports = l4_ports(pkt, iph + 1, iph->protocol);
		return xfib_flow_hash(&iph->saddr, &iph->daddr, 1, iph->protocol,
				      ports);
	} else {
		const struct ipv6hdr *ip6h = pkt->l3;

		if ((const void *)(ip6h + 1) > pkt->data_end)
			return 0;
		return xfib_flow_hash(ip6h->saddr.s6_addr32,
				      ip6h->daddr.s6_addr32, 4, ip6h->nexthdr,
				      l4_ports(pkt, ip6h + 1, ip6h->nexthdr));
	}
}

/*
 * The kernel drops an IPv4 packet whose source is one of its own addresses
 * as a martian, even with rp_filter off (fib_validate_source()). True if
 * saddr (host order) has a local or broadcast route in the instance act,
 * the one the destination was looked up in.
 */
static __always_inline int v4_local_source(const struct xfib_active *act,
					   __u32 saddr)
{
	struct xfib_nexthop *nh;
	__u32 idx;

	if (act->algo == XFIB_ALGO_DIR24_8) {
		__u32 slot = act->slot;
		void *t24 = bpf_map_lookup_elem(&xfib_dir24_tbl24, &slot);
		void *t8 = bpf_map_lookup_elem(&xfib_dir24_tbl8, &slot);

		if (!t24 || !t8)
			return 1;
		idx = xfib_dir24_lookup(t24, t8, saddr);
	} else {
		idx = xfib_bs4_lookup(&xfib_bs4, act->slot, act->log2n, saddr);
	}
	nh = bpf_map_lookup_elem(&xfib_nexthops, &idx);
	return nh && nh->kind == XFIB_NH_LOCAL;
}

/*
 * The kernel trims a packet to its IP length (ip_rcv_core(), ipv6_rcv()):
 * Ethernet padding and whatever else follows the packet is not forwarded,
 * and only the IP length counts against the egress MTU. Cuts the frame
 * after l3len bytes of IP; non-zero if that failed (nothing changed).
 */
static __always_inline int trim_to_ip_len(struct xdp_md *ctx,
					  struct xfib_pkt *pkt, __u32 l3len)
{
	__u32 l2len = sizeof(struct ethhdr) +
		      (pkt->vlan0 ? sizeof(struct xfib_vlan_hdr) : 0);
	int excess = (int)pkt->len - (int)(l2len + l3len);

	if (excess <= 0)
		return 0;
	if (bpf_xdp_adjust_tail(ctx, -excess))
		return -1;
	pkt->data = (void *)(long)ctx->data;
	pkt->data_end = (void *)(long)ctx->data_end;
	pkt->l3 = pkt->data + l2len;
	return 0;
}

SEC("xdp")
int xfib_fwd(struct xdp_md *ctx)
{
	struct xfib_pkt pkt = {};
	struct xfib_iface *in, *out;
	struct xfib_active act;
	struct xfib_nexthop *nh;
	struct xfib_neigh *nb;
	struct ethhdr *eth;
	__u64 *actp, dword, sword;
	__u32 fam, nh_idx, ifindex, in_ifindex, l3len, mtu;
	__u8 family;
	const void *daddr;

	pkt.data = (void *)(long)ctx->data;
	pkt.data_end = (void *)(long)ctx->data_end;
	pkt.len = pkt.data_end - pkt.data;

	eth = pkt.data;
	if ((void *)(eth + 1) > pkt.data_end)
		return PASS(PASS_MALFORMED);
	pkt.proto = bpf_ntohs(eth->h_proto);
	pkt.l3 = eth + 1;
	if (pkt.proto == ETH_P_8021Q_) {
		struct xfib_vlan_hdr *vh = pkt.l3;

		if ((void *)(vh + 1) > pkt.data_end)
			return PASS(PASS_MALFORMED);
		/* Only a priority tag (VID 0) means "untagged" to the kernel. */
		if (bpf_ntohs(vh->tci) & 0x0fff)
			return PASS(PASS_VLAN);
		pkt.proto = bpf_ntohs(vh->proto);
		pkt.l3 = vh + 1;
		pkt.vlan0 = 1;
	}
	if (pkt.proto != ETH_P_IP && pkt.proto != ETH_P_IPV6)
		return PASS(PASS_NOT_IP);

	in_ifindex = ctx->ingress_ifindex;
	in = bpf_map_lookup_elem(&xfib_ifaces, &in_ifindex);
	if (!in)
		return PASS(PASS_NO_IFACE);
	/* The kernel forwards only frames addressed to the port (PACKET_HOST). */
	if (!mac_equal(eth->h_dest, in->mac))
		return PASS(PASS_NOT_FOR_US);

	if (pkt.proto == ETH_P_IP) {
		struct iphdr *iph = pkt.l3;
		__u32 saddr, dst;

		if ((void *)(iph + 1) > pkt.data_end)
			return PASS(PASS_MALFORMED);
		if (iph->version != 4 || iph->ihl < 5)
			return PASS(PASS_MALFORMED);
		if (iph->ihl > 5)
			return PASS(PASS_IP_OPTIONS);
		l3len = bpf_ntohs(iph->tot_len);
		if (l3len < sizeof(*iph) || pkt.l3 + l3len > pkt.data_end)
			return PASS(PASS_MALFORMED);
		/* ip_rcv drops a bad header checksum; never forward one. */
		if (ipv4_csum_check(iph))
			return PASS(PASS_MALFORMED);
		if (!(in->flags & XFIB_IF_FWD4))
			return PASS(PASS_FWD_DISABLED);
		if (in->flags & XFIB_IF_RPF)
			return PASS(PASS_RP_FILTER);
		saddr = bpf_ntohl(iph->saddr);
		dst = bpf_ntohl(iph->daddr);
		if (ipv4_special(saddr, dst))
			return PASS(PASS_SPECIAL_ADDR);
		if (iph->ttl <= 1)
			return PASS(PASS_TTL);

		fam = XFIB_V4;
		actp = bpf_map_lookup_elem(&xfib_active, &fam);
		if (!actp)
			return PASS(PASS_NO_FIB);
		/* One load: the whole packet uses one generation. */
		*(__u64 *)&act = *(volatile __u64 *)actp;
		if (act.algo == XFIB_ALGO_DIR24_8) {
			__u32 slot = act.slot;
			void *t24 = bpf_map_lookup_elem(&xfib_dir24_tbl24, &slot);
			void *t8 = bpf_map_lookup_elem(&xfib_dir24_tbl8, &slot);

			if (!t24 || !t8)
				return PASS(PASS_NO_FIB);
			nh_idx = xfib_dir24_lookup(t24, t8, dst);
		} else if (act.algo == XFIB_ALGO_BSEARCH4) {
			nh_idx = xfib_bs4_lookup(&xfib_bs4, act.slot, act.log2n, dst);
		} else {
			return PASS(PASS_NO_FIB);
		}
		if (v4_local_source(&act, saddr))
			return PASS(PASS_LOCAL_SOURCE);
		family = AF_INET;
		daddr = &iph->daddr;
	} else {
		struct ipv6hdr *ip6h = pkt.l3;
		__u64 dhi, dlo;

		if ((void *)(ip6h + 1) > pkt.data_end)
			return PASS(PASS_MALFORMED);
		if (ip6h->version != 6)
			return PASS(PASS_MALFORMED);
		l3len = bpf_ntohs(ip6h->payload_len);
		/* payload_len 0 is a jumbogram (hop-by-hop option): kernel. */
		if (l3len == 0 && ip6h->nexthdr != IPPROTO_HOPOPTS)
			return PASS(PASS_MALFORMED);
		l3len += sizeof(*ip6h);
		if (pkt.l3 + l3len > pkt.data_end)
			return PASS(PASS_MALFORMED);
		if (ip6h->nexthdr == IPPROTO_HOPOPTS)
			return PASS(PASS_IPV6_HBH);
		if (!(in->flags & XFIB_IF_FWD6))
			return PASS(PASS_FWD_DISABLED);
		dhi = load_be64(&ip6h->daddr.s6_addr[0]);
		dlo = load_be64(&ip6h->daddr.s6_addr[8]);
		if (ipv6_special(load_be64(&ip6h->saddr.s6_addr[0]),
				 load_be64(&ip6h->saddr.s6_addr[8]), dhi, dlo))
			return PASS(PASS_SPECIAL_ADDR);
		if (ip6h->hop_limit <= 1)
			return PASS(PASS_TTL);

		fam = XFIB_V6;
		actp = bpf_map_lookup_elem(&xfib_active, &fam);
		if (!actp)
			return PASS(PASS_NO_FIB);
		*(__u64 *)&act = *(volatile __u64 *)actp;
		if (act.algo == XFIB_ALGO_TRIE6) {
			__u32 slot = act.slot;
			void *t24 = bpf_map_lookup_elem(&xfib_trie6_tbl24, &slot);
			void *t8 = bpf_map_lookup_elem(&xfib_trie6_tbl8, &slot);

			if (!t24 || !t8)
				return PASS(PASS_NO_FIB);
			nh_idx = xfib_trie6_lookup(t24, t8, ip6h->daddr.s6_addr);
		} else if (act.algo == XFIB_ALGO_BSEARCH6) {
			nh_idx = xfib_bs6_lookup(&xfib_bs6, act.slot, act.log2n, dhi, dlo);
		} else {
			return PASS(PASS_NO_FIB);
		}
		family = AF_INET6;
		daddr = &ip6h->daddr;
	}

	nh = bpf_map_lookup_elem(&xfib_nexthops, &nh_idx);
	if (!nh)
		return PASS(PASS_NO_ROUTE);
	if (nh->kind == XFIB_NH_GROUP) {
		__u32 gidx = nh->group;
		struct xfib_nh_group *g = bpf_map_lookup_elem(&xfib_nh_groups, &gidx);

		if (!g)
			return PASS(PASS_NO_ROUTE);
		nh_idx = g->nh[xfib_flow_bucket(pkt_flow_hash(&pkt))];
		nh = bpf_map_lookup_elem(&xfib_nexthops, &nh_idx);
		if (!nh)
			return PASS(PASS_NO_ROUTE);
		/* A member is never a group: that falls to the default. */
	}
	switch (nh->kind) {
	case XFIB_NH_GATEWAY:
	case XFIB_NH_CONNECTED:
		break;
	case XFIB_NH_BLACKHOLE:
		return count(XFIB_DROP_BLACKHOLE, pkt.len, XDP_DROP);
	case XFIB_NH_LOCAL:
		return PASS(PASS_LOCAL);
	case XFIB_NH_UNREACHABLE:
		return PASS(PASS_UNREACHABLE);
	case XFIB_NH_UNSUPPORTED:
		return PASS(PASS_UNSUPPORTED);
	default:
		return PASS(PASS_NO_ROUTE);
	}

	ifindex = nh->ifindex;
	if (ifindex == in_ifindex)
		return PASS(PASS_HAIRPIN);
	out = bpf_map_lookup_elem(&xfib_ifaces, &ifindex);
	if (!out || !(out->flags & XFIB_IF_UP))
		return PASS(PASS_EGRESS_DOWN);
	/* A route MTU can only lower the device's: frames above the device
	 * MTU would be dropped by the egress driver. */
	mtu = nh->mtu && nh->mtu < out->mtu ? nh->mtu : out->mtu;
	if (l3len > mtu)
		return PASS(PASS_MTU);

	nb = resolve_neigh(nh, family, daddr);
	if (!nb)
		return PASS(PASS_NEIGH);
	/* Each word read once: a concurrent MAC change is seen whole. */
	dword = *(volatile __u64 *)nb;
	sword = *(volatile __u64 *)((__u8 *)nb + 8);
	if (((struct xfib_neigh *)&dword)->state != XFIB_NEIGH_VALID ||
	    nb->ifindex != ifindex)
		return PASS(PASS_NEIGH);
	if (!bpf_map_lookup_elem(&xfib_tx_ports, &ifindex))
		return PASS(PASS_EGRESS_NOT_ATTACHED);

	/* Past this point the packet is ours. */
	if (trim_to_ip_len(ctx, &pkt, l3len))
		return PASS(PASS_MALFORMED);
	eth = pkt.data;
	if ((void *)(eth + 1) > pkt.data_end)
		return XDP_DROP;
	/* Strip a priority tag, as the kernel would: the Ethernet header
	 * written below then covers the old header and the tag. */
	if (pkt.vlan0) {
		if (bpf_xdp_adjust_head(ctx, (int)sizeof(struct xfib_vlan_hdr)))
			return PASS(PASS_MALFORMED);
		pkt.data = (void *)(long)ctx->data;
		pkt.data_end = (void *)(long)ctx->data_end;
		eth = pkt.data;
		if ((void *)(eth + 1) > pkt.data_end)
			return XDP_DROP;
		pkt.l3 = eth + 1;
		eth->h_proto = bpf_htons(pkt.proto);
	}
	if (family == AF_INET) {
		struct iphdr *iph = pkt.l3;

		if ((void *)(iph + 1) > pkt.data_end)
			return XDP_DROP;
		ipv4_decrease_ttl(iph);
	} else {
		struct ipv6hdr *ip6h = pkt.l3;

		if ((void *)(ip6h + 1) > pkt.data_end)
			return XDP_DROP;
		ip6h->hop_limit--;
	}
	__builtin_memcpy(eth->h_dest, &dword, ETH_ALEN);
	__builtin_memcpy(eth->h_source, &sword, ETH_ALEN);

	/* The port was in the devmap a moment ago; should it have been
	 * detached since, drop: the frame is already rewritten, and the
	 * kernel would forward it a second time. Forwarded counts only what
	 * the redirect took. */
	if (bpf_redirect_map(&xfib_tx_ports, ifindex, XDP_DROP) != XDP_REDIRECT)
		return count(XFIB_DROP_REDIRECT, pkt.len, XDP_DROP);
	return count(family == AF_INET ? XFIB_FWD_V4 : XFIB_FWD_V6, pkt.len,
		     XDP_REDIRECT);
}
