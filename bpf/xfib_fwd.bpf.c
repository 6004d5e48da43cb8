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
#include "xfib/decide.h"

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

static __always_inline __u64 load_be64(const void *p)
{
	return bpf_be64_to_cpu(*(const __u64 *)p);
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

/* ---- the maps behind include/xfib/decide.h ------------------------------ */

struct xfib_env {
	const struct xfib_pkt *pkt;
};

static __always_inline const struct xfib_nexthop *
xfib_env_nexthop(struct xfib_env *env, __u32 idx)
{
	return bpf_map_lookup_elem(&xfib_nexthops, &idx);
}

static __always_inline const struct xfib_nh_group *
xfib_env_group(struct xfib_env *env, __u32 idx)
{
	return bpf_map_lookup_elem(&xfib_nh_groups, &idx);
}

static __always_inline __u32 xfib_env_flow_hash(struct xfib_env *env)
{
	return pkt_flow_hash(env->pkt);
}

static __always_inline const struct xfib_iface *
xfib_env_iface(struct xfib_env *env, __u32 ifindex)
{
	return bpf_map_lookup_elem(&xfib_ifaces, &ifindex);
}

static __always_inline const __u32 *
xfib_env_neigh_host(struct xfib_env *env, const struct xfib_neigh_key *key)
{
	return bpf_map_lookup_elem(&xfib_neigh_hosts, key);
}

static __always_inline const struct xfib_neigh *
xfib_env_neigh(struct xfib_env *env, __u32 idx)
{
	return bpf_map_lookup_elem(&xfib_neighs, &idx);
}

static __always_inline int xfib_env_tx_port(struct xfib_env *env,
					    __u32 ifindex)
{
	return bpf_map_lookup_elem(&xfib_tx_ports, &ifindex) != NULL;
}

SEC("xdp")
int xfib_fwd(struct xdp_md *ctx)
{
	struct xfib_pkt pkt = {};
	struct xfib_env env = { .pkt = &pkt };
	struct xfib_fwd_query q = {};
	struct xfib_fwd_path path = {};
	struct xfib_iface *in;
	struct xfib_active act;
	struct ethhdr *eth;
	__u64 *actp;
	__u32 fam, nh_idx, in_ifindex, l3len, r;

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
		if (xfib_ipv4_special(dst) || xfib_ipv4_special(saddr))
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
		q.af = XFIB_AF_INET;
		q.daddr = &iph->daddr;
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
		if (xfib_ipv6_special(dhi, dlo) ||
		    xfib_ipv6_special(load_be64(&ip6h->saddr.s6_addr[0]),
				      load_be64(&ip6h->saddr.s6_addr[8])))
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
		q.af = XFIB_AF_INET6;
		q.daddr = &ip6h->daddr;
	}

	q.in_ifindex = in_ifindex;
	q.l3len = l3len;
	r = xfib_after_lookup(&env, &q, nh_idx, &path);
	if (r != XFIB_FWD_V4 && r != XFIB_FWD_V6)
		return count(r, pkt.len,
			     r == XFIB_DROP_BLACKHOLE ? XDP_DROP : XDP_PASS);

	/* Past this point the packet is ours. Strip a priority tag first, as
	 * the kernel would: the Ethernet header written below then covers the
	 * old header and the tag. */
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
	if (r == XFIB_FWD_V4) {
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
	__builtin_memcpy(eth->h_dest, &path.neigh_w0, ETH_ALEN);
	__builtin_memcpy(eth->h_source, &path.neigh_w1, ETH_ALEN);

	count(r, pkt.len, 0);
	/* The port was in the devmap a moment ago; should it have been
	 * detached since, drop: the frame is already rewritten, and the
	 * kernel would forward it a second time. */
	return bpf_redirect_map(&xfib_tx_ports, path.ifindex, XDP_DROP);
}
