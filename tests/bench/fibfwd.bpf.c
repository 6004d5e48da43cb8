// SPDX-License-Identifier: GPL-2.0-only
/*
 * fibfwd: the baseline XDP forwarder of the forwarding benchmark, what a
 * user gets from the kernel's own helper without xfib: the behaviour of
 * the kernel's samples/bpf xdp_fwd, written for this benchmark.
 *
 * Per packet: parse Ethernet and IPv4/IPv6, bpf_fib_lookup() in the
 * kernel FIB of the router's namespace (policy rules, routes and the
 * neighbour table, flags 0), and on success decrement the TTL / hop limit,
 * take the MACs the helper returned and redirect through a DEVMAP of the
 * ports. Anything else (TTL <= 1, no route, unresolved neighbour, a
 * packet too big for the egress MTU, an egress port not in the map) goes
 * to the kernel with XDP_PASS, as in the sample.
 *
 * No counters: the benchmark counts at the sink and reads the router
 * kernel's forwarding counters to tell which path forwarded.
 */
#include <linux/bpf.h>
#include <linux/in.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "lib/parse.h" /* ipv4_decrease_ttl(), as the dataplane's */

#ifndef AF_INET
#define AF_INET 2
#endif
#ifndef AF_INET6
#define AF_INET6 10
#endif

char LICENSE[] SEC("license") = "GPL"; /* bpf_fib_lookup() is GPL-only */

/* Egress ports, key and value the ifindex (written from inside the
 * router's namespace: devmap ifindexes resolve in the writer's netns). */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, __u32);
} fibfwd_ports SEC(".maps");

static __always_inline int redirect(struct ethhdr *eth,
				    struct bpf_fib_lookup *p)
{
	/* The sample checks the port is in the map first: a redirect to a
	 * missing entry would drop the packet instead of passing it. */
	if (!bpf_map_lookup_elem(&fibfwd_ports, &p->ifindex))
		return XDP_PASS;
	__builtin_memcpy(eth->h_dest, p->dmac, ETH_ALEN);
	__builtin_memcpy(eth->h_source, p->smac, ETH_ALEN);
	return bpf_redirect_map(&fibfwd_ports, p->ifindex, 0);
}

SEC("xdp")
int fibfwd(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct bpf_fib_lookup p = {};
	struct ethhdr *eth = data;
	__u16 proto;

	if ((void *)(eth + 1) > data_end)
		return XDP_PASS;
	proto = eth->h_proto;
	p.ifindex = ctx->ingress_ifindex;

	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);

		if ((void *)(ip + 1) > data_end || ip->ttl <= 1)
			return XDP_PASS;
		p.family = AF_INET;
		p.tos = ip->tos;
		p.l4_protocol = ip->protocol;
		p.tot_len = bpf_ntohs(ip->tot_len);
		p.ipv4_src = ip->saddr;
		p.ipv4_dst = ip->daddr;
		if (bpf_fib_lookup(ctx, &p, sizeof(p), 0) !=
		    BPF_FIB_LKUP_RET_SUCCESS)
			return XDP_PASS;
		ipv4_decrease_ttl(ip);
		return redirect(eth, &p);
	}
	if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		if ((void *)(ip6 + 1) > data_end || ip6->hop_limit <= 1)
			return XDP_PASS;
		p.family = AF_INET6;
		p.flowinfo = *(__be32 *)ip6 & bpf_htonl(0x0fffffff);
		p.l4_protocol = ip6->nexthdr;
		p.tot_len = bpf_ntohs(ip6->payload_len);
		__builtin_memcpy(p.ipv6_src, &ip6->saddr, 16);
		__builtin_memcpy(p.ipv6_dst, &ip6->daddr, 16);
		if (bpf_fib_lookup(ctx, &p, sizeof(p), 0) !=
		    BPF_FIB_LKUP_RET_SUCCESS)
			return XDP_PASS;
		ip6->hop_limit--;
		return redirect(eth, &p);
	}
	return XDP_PASS;
}
