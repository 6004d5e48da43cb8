// SPDX-License-Identifier: GPL-2.0-only
/*
 * sink: counts and drops everything arriving on the sink's veth. Kept to
 * one per-CPU total on purpose: anything per destination (a hash map
 * update per frame) costs more than the forwarder being measured.
 *
 * Having an XDP program attached is also what makes a veth accept frames
 * redirected to it (ndo_xdp_xmit); without one (or GRO) they are dropped.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "fwdbench.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sink_count);
} sink_count SEC(".maps");

SEC("xdp")
int sink(struct xdp_md *ctx)
{
	struct sink_count *c;
	__u32 zero = 0;

	c = bpf_map_lookup_elem(&sink_count, &zero);
	if (c) {
		c->packets++;
		c->bytes += ctx->data_end - ctx->data;
	}
	return XDP_DROP;
}
