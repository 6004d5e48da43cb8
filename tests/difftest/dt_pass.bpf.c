// SPDX-License-Identifier: GPL-2.0-only
/*
 * dt_pass: hands every frame to the stack. Attached to the differential
 * test's host ports: a veth accepts frames redirected to it (by xfib) only
 * with an XDP program attached or with GRO on, and GRO would merge TCP
 * segments that the comparison counts one by one.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

SEC("xdp")
int dt_pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}
