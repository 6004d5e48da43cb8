/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Writing conntrack's translation into a packet the forwarder sends: the
 * addresses and TCP/UDP ports xfib_ct_gate_pre() (lib/ctgate.h) read from
 * the flow's entry (or its flow cache kept), with the checksums they
 * cover updated incrementally (RFC 1624) by the change ct_nat_csum()
 * found once for the flow, as the kernel's nf_nat_ipv4_manip_pkt() and
 * l4proto_manip_pkt() update them:
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

/* The checksum field check with diff (ct_state's csum_addr or csum_l4)
 * applied. */
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
 * by the change ct_nat_csum() found (addresses and ports). Non-zero if
 * the header is not in the frame (the caller drops: the frame was checked
 * before, so this cannot happen).
 */
static __always_inline int nat_l4(void *l4, const void *data_end,
				  const struct ct_state *cs)
{
	__be16 *ports = l4;
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
	ports[0] = cs->sport;
	ports[1] = cs->dport;
	if (cs->proto == IPPROTO_UDP) {
		if (!*check)
			return 0;
		*check = nat_csum_apply(*check, cs->csum_l4) ?: 0xffff;
		return 0;
	}
	*check = nat_csum_apply(*check, cs->csum_l4);
	return 0;
}

/* The ICMP or ICMPv6 echo header at l4: the identifier, and the checksum
 * (ICMPv6's covers the pseudo-header's addresses too: in csum_l4). */
static __always_inline int nat_echo(void *l4, const void *data_end,
				    const struct ct_state *cs)
{
	__be16 *h = l4; /* type and code, checksum, identifier */

	if (l4 + 8 > data_end)
		return -1;
	h[1] = nat_csum_apply(h[1], cs->csum_l4);
	h[2] = cs->sport;
	return 0;
}

/* IPv4: addresses, header checksum, then the transport header. */
static __always_inline int nat_write4(struct iphdr *iph, const void *data_end,
				      const struct ct_state *cs)
{
	iph->saddr = cs->saddr[0];
	iph->daddr = cs->daddr[0];
	iph->check = nat_csum_apply(iph->check, cs->csum_addr);
	if (cs->proto == IPPROTO_ICMP)
		return nat_echo(iph + 1, data_end, cs);
	return nat_l4(iph + 1, data_end, cs);
}

/* IPv6: no header checksum; the pseudo-header's addresses change. */
static __always_inline int nat_write6(struct ipv6hdr *ip6h, const void *data_end,
				      const struct ct_state *cs)
{
	__u32 *a = ip6h->saddr.in6_u.u6_addr32; /* saddr, daddr: 8 words */

	__builtin_memcpy(a, cs->saddr, 16);
	__builtin_memcpy(a + 4, cs->daddr, 16);
	if (cs->proto == IPPROTO_ICMPV6)
		return nat_echo(ip6h + 1, data_end, cs);
	return nat_l4(ip6h + 1, data_end, cs);
}

#endif /* XFIB_BPF_NAT_H */
