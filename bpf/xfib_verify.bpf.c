// SPDX-License-Identifier: GPL-2.0-only
/*
 * xfib_verify: the kernel's own forwarding answer for a batch of
 * destinations, for `xfibctl verify` and `xfibctl lookup`.
 *
 * Run with BPF_PROG_TEST_RUN on a dummy frame: the frame is never read.
 * Userspace writes up to XV_BATCH queries into xv_queries (.bss, mmap()ed
 * through the skeleton), sets xv_count and xv_iif, runs the program once,
 * and reads the answers back from the same array. One run answers
 * thousands of destinations, so the per-run syscall cost disappears in
 * the ~0.5 us the kernel's FIB lookup takes.
 *
 * This program is xfib's referee, not part of it: it has its own maps
 * (only .bss), is never pinned and never reads the dataplane's maps.
 *
 * bpf_fib_lookup() as called here:
 *  - no BPF_FIB_LOOKUP_DIRECT: the policy rules are consulted, as for a
 *    forwarded packet;
 *  - BPF_FIB_LOOKUP_SKIP_NEIGH (kernel >= 6.5): the answer does not
 *    depend on whether the neighbour is resolved; on success the kernel
 *    writes the gateway, if any, over the destination (switching to
 *    AF_INET6 for an IPv6 gateway of an IPv4 route) and the egress
 *    ifindex over the ingress one;
 *  - tot_len 0: no MTU verdict;
 *  - ifindex: the port the packet would enter by (forwarding must be on
 *    there, else FWD_DISABLED);
 *  - the source, TOS, protocol and ports the query gives, which the
 *    kernel's policy rules see as a received packet's (no rp_filter: the
 *    helper checks no source).
 * The netns is that of the process running the test (the dummy frame
 * "arrives" on its loopback device).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "xfib/verify.h"

#ifndef AF_INET
#define AF_INET 2
#endif

/* BPF_FIB_LOOKUP_SKIP_NEIGH, spelled out for uapi headers older than the
 * kernel that runs this (the flag is ABI). */
#define XV_FIB_SKIP_NEIGH (1U << 2)

char LICENSE[] SEC("license") = "GPL"; /* bpf_fib_lookup() is GPL-only */

struct xv_query xv_queries[XV_BATCH];
__u32 xv_count;
__u32 xv_iif;

struct xv_loop {
	struct xdp_md *xdp;
};

static long xv_one(__u32 i, void *data)
{
	struct xv_loop *l = data;
	struct bpf_fib_lookup p = {};
	struct xv_query *q;
	long ret;

	if (i >= XV_BATCH)
		return 1;
	q = &xv_queries[i];
	p.family = q->family;
	p.ifindex = xv_iif;
	p.l4_protocol = q->l4_protocol;
	p.sport = q->sport;
	p.dport = q->dport;
	if (q->family == AF_INET) {
		__builtin_memcpy(&p.ipv4_dst, q->addr, 4);
		__builtin_memcpy(&p.ipv4_src, q->src, 4);
		p.tos = q->tos;
	} else {
		__builtin_memcpy(p.ipv6_dst, q->addr, 16);
		__builtin_memcpy(p.ipv6_src, q->src, 16);
		/* the traffic class, as the flow's first 12 bits */
		p.flowinfo = __builtin_bswap32((__u32)q->tos << 20);
	}

	ret = bpf_fib_lookup(l->xdp, &p, sizeof(p), XV_FIB_SKIP_NEIGH);

	q->ret = ret;
	q->ifindex = p.ifindex;
	q->family = p.family;
	if (p.family == AF_INET)
		__builtin_memcpy(q->addr, &p.ipv4_dst, 4);
	else
		__builtin_memcpy(q->addr, p.ipv6_dst, 16);
	return 0;
}

SEC("xdp")
int xfib_verify(struct xdp_md *ctx)
{
	struct xv_loop l = { .xdp = ctx };

	/* bpf_loop: one verified body for any count (a bounded loop would be
	 * verified once per iteration). */
	bpf_loop(xv_count, xv_one, &l, 0);
	return XDP_PASS;
}
