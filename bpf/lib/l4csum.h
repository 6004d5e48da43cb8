/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * TCP and UDP checksums left to the device.
 *
 * A local sender whose device offloads checksums (a veth does) hands the
 * frame on with CHECKSUM_PARTIAL: the checksum field holds only the folded
 * pseudo-header sum, and a mark in the skb says the rest is still to be
 * added. Over veth the frame crosses into the next namespace like that;
 * when the kernel forwards it, the mark travels with it and the egress
 * device or the receiving host deals with it. An XDP redirect sends only
 * the bytes: the receiver would find a bad checksum and drop the segment.
 * Such packets must go to the kernel.
 *
 * XDP sees no such mark, but the field tells: it holds exactly the folded
 * pseudo-header sum (~csum_tcpudp_magic(..., 0) / ~csum_ipv6_magic(...)),
 * which a finished checksum equals only for about one payload in 65536
 * (those then take the kernel's path, which forwards them too).
 */
#ifndef XFIB_BPF_L4CSUM_H
#define XFIB_BPF_L4CSUM_H

#include <stdbool.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_endian.h>

#include "parse.h"

static __always_inline __u16 csum_fold32(__u32 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)sum;
}

/* Offset of the checksum field in a TCP or UDP header; 0 for other
 * protocols (nothing to check). */
static __always_inline __u32 l4_csum_offset(__u8 proto)
{
	if (proto == IPPROTO_TCP)
		return 16;
	if (proto == IPPROTO_UDP)
		return 6;
	return 0;
}

/* Does the checksum field at l4 + off hold the folded sum psum? */
static __always_inline bool l4_field_is(const struct xfib_pkt *pkt,
					const void *l4, __u32 off, __u32 psum)
{
	const __u16 *field = l4 + off;

	if ((const void *)(field + 1) > pkt->data_end)
		return false;
	return *field == csum_fold32(psum);
}

/* An IPv4 packet (20-byte header, pkt->l3len checked) whose TCP or UDP
 * checksum is left to the device. Fragments never are. */
static __always_inline bool l4_csum_partial4(const struct xfib_pkt *pkt)
{
	const struct iphdr *iph = pkt->l3;
	__u32 off, psum;

	if ((const void *)(iph + 1) > pkt->data_end ||
	    iph->frag_off & bpf_htons(XFIB_IP_MF_OFFSET))
		return false;
	off = l4_csum_offset(iph->protocol);
	if (!off)
		return false;
	/* Summed as stored (network order), as the field is. */
	psum = (iph->saddr & 0xffff) + (iph->saddr >> 16) +
	       (iph->daddr & 0xffff) + (iph->daddr >> 16) +
	       bpf_htons(iph->protocol) +
	       bpf_htons((__u16)(pkt->l3len - sizeof(*iph)));
	return l4_field_is(pkt, iph + 1, off, psum);
}

/* The same for IPv6, when TCP or UDP follows the fixed header directly. */
static __always_inline bool l4_csum_partial6(const struct xfib_pkt *pkt)
{
	const struct ipv6hdr *ip6h = pkt->l3;
	const __u32 *a;
	__u32 off, psum;
	int i;

	if ((const void *)(ip6h + 1) > pkt->data_end)
		return false;
	off = l4_csum_offset(ip6h->nexthdr);
	if (!off)
		return false;
	a = (const __u32 *)&ip6h->saddr; /* saddr and daddr, 8 words */
	psum = bpf_htons(ip6h->nexthdr) +
	       bpf_htons((__u16)(pkt->l3len - sizeof(*ip6h)));
#pragma unroll
	for (i = 0; i < 8; i++)
		psum += (a[i] & 0xffff) + (a[i] >> 16);
	return l4_field_is(pkt, ip6h + 1, off, psum);
}

#endif /* XFIB_BPF_L4CSUM_H */
