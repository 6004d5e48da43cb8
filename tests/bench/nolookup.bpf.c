// SPDX-License-Identifier: GPL-2.0-only
/*
 * nolookup: the forwarding benchmark's lookup-free XDP forwarder, the
 * floor under every path: what a packet costs the shared core (generator,
 * router and sinks) when the router does the least a router does.
 *
 * Per packet: parse Ethernet and IPv4/IPv6, decrement the TTL / hop limit
 * (IPv4 checksum updated), write fixed MACs and redirect through a DEVMAP
 * to one fixed port. No route lookup, no neighbour, no counters. Anything
 * else (not IP, TTL <= 1) goes to the kernel with XDP_PASS.
 *
 * tests/bench/fwd.sh subtracts this path's time per packet from each
 * other path's to get the router's own cost per packet.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "lib/parse.h" /* ipv4_decrease_ttl(), as the dataplane's */

char LICENSE[] SEC("license") = "GPL";

/* Set by the loader before load (fwdbench nolookup-attach). */
const volatile __u8 out_dmac[ETH_ALEN];
const volatile __u8 out_smac[ETH_ALEN];

/* Key 0: the egress port (written from inside the router's namespace). */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} nolookup_port SEC(".maps");

SEC("xdp")
int nolookup(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	int i;

	if ((void *)(eth + 1) > data_end)
		return XDP_PASS;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);

		if ((void *)(ip + 1) > data_end || ip->ttl <= 1)
			return XDP_PASS;
		ipv4_decrease_ttl(ip);
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		if ((void *)(ip6 + 1) > data_end || ip6->hop_limit <= 1)
			return XDP_PASS;
		ip6->hop_limit--;
	} else {
		return XDP_PASS;
	}
	for (i = 0; i < ETH_ALEN; i++) {
		eth->h_dest[i] = out_dmac[i];
		eth->h_source[i] = out_smac[i];
	}
	return bpf_redirect_map(&nolookup_port, 0, 0);
}
