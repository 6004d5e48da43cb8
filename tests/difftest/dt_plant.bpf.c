// SPDX-License-Identifier: GPL-2.0-only
/*
 * dt_plant: a deliberate difference, to prove the differential test finds
 * one. Attached instead of xfib on the router's generator port, it passes
 * every frame to the kernel, but first flips one payload byte of every
 * untagged IPv4 UDP frame (no options) whose test tag (the 12 bytes after
 * the UDP header: "xfDT", index, check) has an index divisible by 97. The
 * byte is the one after the tag, inside the IP packet. difftest.py's
 * planted() must pick the same frames.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define PLANT_EVERY 97
#define TAG_LEN 12

char LICENSE[] SEC("license") = "GPL";

SEC("xdp")
int dt_plant(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *iph = (void *)(eth + 1);
	struct udphdr *uh = (void *)(iph + 1);
	__u8 *tag = (void *)(uh + 1);
	__u32 idx;

	if (tag + TAG_LEN + 1 > (__u8 *)data_end)
		return XDP_PASS;
	if (eth->h_proto != bpf_htons(ETH_P_IP) || iph->version != 4 ||
	    iph->ihl != 5 || iph->protocol != IPPROTO_UDP)
		return XDP_PASS;
	if (bpf_ntohs(iph->tot_len) < (__u8 *)(tag + TAG_LEN + 1) - (__u8 *)iph)
		return XDP_PASS;
	if (tag[0] != 'x' || tag[1] != 'f' || tag[2] != 'D' || tag[3] != 'T')
		return XDP_PASS;
	idx = (__u32)tag[4] << 24 | (__u32)tag[5] << 16 | (__u32)tag[6] << 8 |
	      tag[7];
	if (idx % PLANT_EVERY == 0)
		tag[TAG_LEN] ^= 0xff;
	return XDP_PASS;
}
