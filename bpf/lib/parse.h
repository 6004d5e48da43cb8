/* SPDX-License-Identifier: GPL-2.0-only */
/* Packet parsing helpers for the XDP forwarder. Every access is bounds-
 * checked against data_end; the verifier rejects the program otherwise. */
#ifndef XFIB_BPF_PARSE_H
#define XFIB_BPF_PARSE_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

/* frag_off's more-fragments flag and offset (IP_MF | IP_OFFSET, which no
 * UAPI header defines): non-zero in a fragment, first or later. */
#define XFIB_IP_MF_OFFSET 0x3fff

/* 802.1Q header following the MAC addresses. */
struct xfib_vlan_hdr {
	__be16 tci;
	__be16 proto;
};

struct xfib_pkt {
	void *data;
	void *data_end;
	struct ethhdr *eth;
	void *l3;
	__u16 proto;   /* ETH_P_IP / ETH_P_IPV6, host order */
	__u8 vlan0;    /* a priority tag (VID 0) sits before l3 */
	__u8 pad;
	__u32 len;     /* frame length */
	__u32 l3len;   /* IP packet length its header gives */
};

static __always_inline int mac_equal(const __u8 *a, const __u8 *b)
{
	return *(const __u32 *)a == *(const __u32 *)b &&
	       *(const __u16 *)(a + 4) == *(const __u16 *)(b + 4);
}

/* IPv4 header checksum over a 20-byte header; 0 when valid. */
static __always_inline __u16 ipv4_csum_check(const struct iphdr *iph)
{
	const __u16 *w = (const __u16 *)iph;
	__u32 sum = 0;
	int i;

#pragma unroll
	for (i = 0; i < 10; i++)
		sum += w[i];
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

/* RFC 1624 incremental update for TTL - 1 (as the kernel's ip_decrease_ttl). */
static __always_inline void ipv4_decrease_ttl(struct iphdr *iph)
{
	__u32 check = iph->check;

	check += bpf_htons(0x0100);
	iph->check = (__u16)(check + (check >= 0xffff));
	iph->ttl--;
}

#endif /* XFIB_BPF_PARSE_H */
