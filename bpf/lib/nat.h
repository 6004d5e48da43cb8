/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Writing conntrack's translation into a packet the forwarder sends: the
 * addresses and TCP/UDP ports xfib_ct_gate_pre() (lib/ctgate.h) read from
 * the flow's entry (or its flow cache kept), with the checksums they cover updated incrementally
 * (RFC 1624), as the kernel's nf_nat_ipv4_manip_pkt() and
 * l4proto_manip_pkt() do:
 *
 *  - IPv4: the header checksum covers the addresses;
 *  - TCP and UDP: the pseudo-header's addresses and the ports;
 *  - a UDP checksum of 0 (none was sent) stays 0, and a computed 0 is
 *    written as 0xffff, which means the same;
 *  - ICMP echo: the identifier; ICMPv6's checksum also covers the
 *    pseudo-header's addresses, ICMP's does not.
 *
 * The packet was parsed by the gate: a TCP header of at least 20 bytes, a
 * UDP or ICMP echo header of 8, directly after the IP header, not a
 * fragment.
 */
#ifndef XFIB_BPF_NAT_H
#define XFIB_BPF_NAT_H

#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>

#include "parse.h"
#include "ctgate.h"

/* The one's complement sum's change when n 32-bit words (as stored)
 * change from old to new: per 16-bit half, ~old + new. */
static __always_inline __u32 nat_csum_diff(__u32 acc, const __u32 *old,
					   const __u32 *new, int n)
{
	int i;

#pragma unroll
	for (i = 0; i < n; i++) {
		acc += (~old[i] & 0xffff) + (~old[i] >> 16);
		acc += (new[i] & 0xffff) + (new[i] >> 16);
	}
	return acc;
}

/* The checksum field check with diff (from nat_csum_diff) applied. */
static __always_inline __u16 nat_csum_apply(__u16 check, __u32 diff)
{
	__u32 sum = (__u16)~check + diff;

	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

/*
 * The TCP or UDP header at l4: the ports rewritten, the checksum updated
 * by addr_diff (the addresses' change) and the ports'. Non-zero if the
 * header is not in the frame (the caller drops: the frame was checked
 * before, so this cannot happen).
 */
static __always_inline int nat_l4(void *l4, const void *data_end,
				  const struct ct_state *cs, __u32 addr_diff)
{
	__be16 *ports = l4;
	__u32 diff;
	__u16 *check;

	if (cs->proto == IPPROTO_TCP) {
		if (l4 + 20 > data_end)
			return -1;
		check = l4 + 16;
	} else {
		if (l4 + 8 > data_end)
			return -1;
		check = l4 + 6;
	}
	diff = addr_diff + (__u16)~ports[0] + cs->sport +
	       (__u16)~ports[1] + cs->dport;
	ports[0] = cs->sport;
	ports[1] = cs->dport;
	if (cs->proto == IPPROTO_UDP) {
		if (!*check)
			return 0;
		*check = nat_csum_apply(*check, diff) ?: 0xffff;
		return 0;
	}
	*check = nat_csum_apply(*check, diff);
	return 0;
}

/* The ICMP or ICMPv6 echo header at l4: the identifier, and the checksum
 * by addr_diff (0 for ICMP) and the identifier's change. */
static __always_inline int nat_echo(void *l4, const void *data_end,
				    const struct ct_state *cs, __u32 addr_diff)
{
	__be16 *h = l4; /* type and code, checksum, identifier */

	if (l4 + 8 > data_end)
		return -1;
	h[1] = nat_csum_apply(h[1], addr_diff + (__u16)~h[2] + cs->sport);
	h[2] = cs->sport;
	return 0;
}

/* IPv4: addresses, header checksum, then the transport header. */
static __always_inline int nat_write4(struct iphdr *iph, const void *data_end,
				      const struct ct_state *cs)
{
	__u32 old[2] = { iph->saddr, iph->daddr };
	__u32 new[2] = { cs->saddr[0], cs->daddr[0] };
	__u32 diff = nat_csum_diff(0, old, new, 2);

	iph->saddr = new[0];
	iph->daddr = new[1];
	iph->check = nat_csum_apply(iph->check, diff);
	if (cs->proto == IPPROTO_ICMP)
		return nat_echo(iph + 1, data_end, cs, 0);
	return nat_l4(iph + 1, data_end, cs, diff);
}

/* IPv6: no header checksum; the pseudo-header's addresses change. */
static __always_inline int nat_write6(struct ipv6hdr *ip6h, const void *data_end,
				      const struct ct_state *cs)
{
	__u32 *a = ip6h->saddr.in6_u.u6_addr32; /* saddr, daddr: 8 words */
	__u32 diff;

	diff = nat_csum_diff(0, a, cs->saddr, 4);
	diff = nat_csum_diff(diff, a + 4, cs->daddr, 4);
	__builtin_memcpy(a, cs->saddr, 16);
	__builtin_memcpy(a + 4, cs->daddr, 16);
	if (cs->proto == IPPROTO_ICMPV6)
		return nat_echo(ip6h + 1, data_end, cs, diff);
	return nat_l4(ip6h + 1, data_end, cs, diff);
}

#endif /* XFIB_BPF_NAT_H */
