// SPDX-License-Identifier: GPL-2.0-only
/*
 * gen: the traffic generator of the forwarding benchmark. fwdbench runs it
 * with BPF_PROG_TEST_RUN and BPF_F_TEST_XDP_LIVE_FRAMES, ctx ingress_ifindex
 * = the generator's veth; XDP_TX then becomes a redirect to that veth, so
 * each frame leaves through it towards the router.
 *
 * The live-frames mode initialises a page with the input frame only when
 * the page pool allocates it. Recycled pages come back with whatever the
 * receivers wrote into them (the router rewrites MACs and TTL, and the
 * kernel path may touch more), so every header byte the router looks at is
 * written again here for every frame, and the checksums are computed from
 * scratch rather than patched.
 */
#include <linux/bpf.h>
#include <linux/in.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "fwdbench.h"

char LICENSE[] SEC("license") = "GPL";

/* Frozen at load: the verifier sees the family as a constant and drops
 * the other family's code. */
const volatile struct gen_cfg cfg = {};

/*
 * The order of the destinations: frame n goes to destination
 * dst_order[n % ndst], a shuffle of 0..ndst-1 fwdbench writes before the
 * load. In address order, consecutive frames would share a route, a
 * tbl24 entry, a cache line (256 frames in a row through one /24 entry
 * with 65536 destinations over a /16): a router's caches would see far
 * fewer misses than under a real mix of traffic.
 */
__u32 dst_order[FWDBENCH_NDST_MAX];

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gen_state);
} gen_state SEC(".maps");

#define IP4_HLEN 20
#define IP6_HLEN 40
#define UDP_HLEN 8

/* Ones' complement sum of raw 16-bit loads: byte order does not matter as
 * long as the result is stored the same raw way. */
static __always_inline __u32 csum_add16(__u32 sum, const __u16 *p, int n)
{
#pragma unroll
	for (int i = 0; i < n; i++)
		sum += p[i];
	return sum;
}

static __always_inline __u16 csum_fold(__u32 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

static __always_inline void write_eth(struct ethhdr *eth, __u16 proto)
{
	__u16 *d = (__u16 *)eth->h_dest, *s = (__u16 *)eth->h_source;

	d[0] = cfg.dmac[0];
	d[1] = cfg.dmac[1];
	d[2] = cfg.dmac[2];
	s[0] = cfg.smac[0];
	s[1] = cfg.smac[1];
	s[2] = cfg.smac[2];
	eth->h_proto = bpf_htons(proto);
}

static __always_inline void write_udp(struct udphdr *udp, __u16 len)
{
	udp->source = bpf_htons(cfg.sport);
	udp->dest = bpf_htons(cfg.dport);
	udp->len = bpf_htons(len);
	udp->check = 0;
}

static __always_inline void write_ipv4(struct iphdr *ip, __u32 idx)
{
	__u16 *w = (__u16 *)ip;

	/* version 4, IHL 5 (no options: xfib passes options to the kernel) */
	*(__u8 *)ip = 0x45;
	ip->tos = 0;
	ip->tot_len = bpf_htons(FWDBENCH_FRAME_LEN - ETH_HLEN);
	ip->id = 0;
	ip->frag_off = 0;
	ip->ttl = 64;
	ip->protocol = IPPROTO_UDP;
	ip->check = 0;
	ip->saddr = cfg.src4;
	ip->daddr = bpf_htonl(cfg.dst4 + idx * cfg.stride);
	/* Both forwarders drop or pass a frame with a bad header checksum. */
	ip->check = csum_fold(csum_add16(0, w, IP4_HLEN / 2));
	/* UDP checksum 0: "none", legal in IPv4. */
	write_udp((struct udphdr *)(ip + 1),
		  FWDBENCH_FRAME_LEN - ETH_HLEN - IP4_HLEN);
}

static __always_inline void write_ipv6(struct ipv6hdr *ip6, __u32 idx)
{
	struct udphdr *udp = (struct udphdr *)(ip6 + 1);
	__u16 ulen = FWDBENCH_FRAME_LEN - ETH_HLEN - IP6_HLEN;
	__u32 *s = ip6->saddr.in6_u.u6_addr32, *d = ip6->daddr.in6_u.u6_addr32;
	__u16 *payload = (__u16 *)(udp + 1), sum16, pseudo;
	__u32 sum;

	/* version 6, traffic class 0, flow label 0 */
	*(__be32 *)ip6 = bpf_htonl(0x60000000);
	ip6->payload_len = bpf_htons(ulen);
	ip6->nexthdr = IPPROTO_UDP;
	ip6->hop_limit = 64;
	s[0] = cfg.src6[0];
	s[1] = cfg.src6[1];
	s[2] = cfg.src6[2];
	s[3] = cfg.src6[3];
	d[0] = cfg.dst6[0];
	d[1] = cfg.dst6[1];
	d[2] = cfg.dst6[2];
	d[3] = cfg.dst6[3];
	/* The varying word; the verifier folds the constant choice. */
	if (cfg.dst6_word == 1)
		d[1] = bpf_htonl(cfg.dst6_lo + idx * cfg.stride);
	else
		d[3] = bpf_htonl(cfg.dst6_lo + idx * cfg.stride);
	write_udp(udp, ulen);
	/* The payload (2 bytes in a 64-byte frame) is covered by the
	 * checksum, so it is written too. */
	payload[0] = 0;

	/* IPv6 makes the UDP checksum mandatory: pseudo header (addresses,
	 * upper-layer length, next header), UDP header, payload. Neither
	 * forwarder verifies it, but a frame should be one a host accepts. */
	sum = csum_add16(0, (__u16 *)s, 8);
	sum = csum_add16(sum, (__u16 *)d, 8);
	sum += bpf_htons(ulen) + bpf_htons(IPPROTO_UDP);
	/* A finished checksum equal to the folded pseudo-header sum is what
	 * a sender leaving it to the device writes; xfib hands such a frame
	 * to the kernel (pass_csum_partial). One destination in 65536 or so
	 * would: its payload word is 1 instead, so every frame takes the
	 * path measured. */
	pseudo = (__u16)~csum_fold(sum);
	sum = csum_add16(sum, (__u16 *)udp, UDP_HLEN / 2);
	sum16 = csum_fold(sum) ?: 0xffff; /* 0 is "none": sent as all ones */
	if (sum16 == pseudo) {
		payload[0] = bpf_htons(1);
		sum16 = csum_fold(sum + payload[0]) ?: 0xffff;
	}
	udp->check = sum16;
}

SEC("xdp")
int gen(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct gen_state *st;
	__u32 zero = 0, idx;

	if (data + FWDBENCH_FRAME_LEN > data_end)
		return XDP_ABORTED;
	st = bpf_map_lookup_elem(&gen_state, &zero);
	if (!st)
		return XDP_ABORTED;
	/* Cycle through the destinations without a division per frame. */
	idx = st->next;
	if (idx >= cfg.ndst)
		idx = 0;
	st->next = idx + 1;
	st->sent++;
	idx = dst_order[idx & (FWDBENCH_NDST_MAX - 1)];

	if (cfg.family == 6) {
		write_eth(data, ETH_P_IPV6);
		write_ipv6(data + ETH_HLEN, idx);
	} else {
		write_eth(data, ETH_P_IP);
		write_ipv4(data + ETH_HLEN, idx);
	}
	return XDP_TX;
}
