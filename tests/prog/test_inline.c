// SPDX-License-Identifier: GPL-2.0-only
/*
 * The XDP forwarder's per-packet port lookups are inlined by the verifier:
 * xfib_ifaces is a plain array (include/xfib/maps.h, struct xfib_port), so
 * its lookups become a bounds check and an add, with no call left.
 *
 * Loads bpf/xfib_fwd.bpf.c with private maps, reads the program back as
 * the verifier left it (xlated instructions, which name each map they
 * load by id) and follows r1 from each map load to the next call: a call
 * made with a map in r1 is a lookup not inlined (a helper, or the hash
 * table's lookup function). Checks that xfib_ifaces is loaded at least
 * twice (ingress and egress port) and never called with, and, so that
 * the walk is known to see calls, that xfib_neigh_hosts (a hash map) is
 * looked up by call. Prints the program's size and its calls.
 *
 * Exit status: 0 pass, 1 failure, 77 cannot run here (reason on stdout).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "xfib/maps.h"
#include "pin.h"
#include "progtest.h"

static void die(const char *what, int err)
{
	printf("FAIL %s: %s\n", what, strerror(err));
	exit(1);
}

static __u32 map_id(const struct bpf_map *m)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(bpf_map__fd(m), &info, &len))
		die("map info", errno);
	return info.id;
}

/* The program as the verifier left it; *n instructions. */
static struct bpf_insn *xlated(int fd, __u32 *n)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	struct bpf_insn *insns;

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		die("program info", errno);
	*n = info.xlated_prog_len / sizeof(*insns);
	insns = calloc(*n, sizeof(*insns));
	if (!insns)
		die("calloc", ENOMEM);
	memset(&info, 0, sizeof(info));
	info.xlated_prog_len = *n * sizeof(*insns);
	info.xlated_prog_insns = (__u64)(unsigned long)insns;
	len = sizeof(info);
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		die("program instructions", errno);
	return insns;
}

struct walk {
	__u32 helpers;		/* calls other than BPF-to-BPF */
	__u32 loads[2];		/* map loads of ids[i] */
	__u32 calls[2];		/* calls made with ids[i] in r1 */
	__u32 ids[2];
};

/* r1 holds the map it was last loaded with until anything else writes
 * it; a call consumes it. Straight-line code is all a lookup is. */
static void walk(const struct bpf_insn *in, __u32 n, struct walk *w)
{
	__u32 i, r1 = 0, k, cls;

	for (i = 0; i < n; i++) {
		cls = BPF_CLASS(in[i].code);
		if (in[i].code == (BPF_LD | BPF_IMM | BPF_DW)) {
			if (in[i].dst_reg == BPF_REG_1)
				r1 = in[i].src_reg == BPF_PSEUDO_MAP_FD ? in[i].imm : 0;
			for (k = 0; k < 2; k++)
				w->loads[k] += in[i].src_reg == BPF_PSEUDO_MAP_FD &&
					       (__u32)in[i].imm == w->ids[k];
			i++; /* the second half */
			continue;
		}
		if (in[i].code == (BPF_JMP | BPF_CALL)) {
			if (in[i].src_reg != BPF_PSEUDO_CALL)
				w->helpers++;
			for (k = 0; k < 2; k++)
				w->calls[k] += r1 && r1 == w->ids[k];
			r1 = 0;
			continue;
		}
		if (in[i].dst_reg == BPF_REG_1 &&
		    (cls == BPF_ALU || cls == BPF_ALU64 || cls == BPF_LDX ||
		     cls == BPF_LD))
			r1 = 0;
	}
}

int main(void)
{
	struct xfib_fwd_bpf *skel;
	struct bpf_insn *insns;
	struct bpf_map *map;
	struct walk w = {};
	__u32 n;
	int err;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (geteuid() != 0) {
		printf("SKIP: needs root (BPF)\n");
		return SKIP;
	}
	skel = xfib_fwd_open(NULL, xfib_ct_kfuncs()); /* the build attach would load */
	if (!skel)
		die("open skeleton", errno);
	/* Private maps: nothing is pinned or reused from /sys/fs/bpf. */
	bpf_object__for_each_map(map, skel->obj)
		if (bpf_map__set_pin_path(map, NULL))
			die("unpin", errno);
	err = xfib_fwd_bpf__load(skel);
	if (err)
		die("load", -err);
	w.ids[0] = map_id(skel->maps.xfib_ifaces);
	w.ids[1] = map_id(skel->maps.xfib_neigh_hosts);
	insns = xlated(bpf_program__fd(skel->progs.xfib_fwd), &n);
	walk(insns, n, &w);
	printf("xfib_fwd: %u xlated instructions, %u calls to helpers or map functions\n",
	       n, w.helpers);

	expect(w.loads[1] >= 1 && w.calls[1] >= 1,
	       "the walk sees lookups by call: xfib_neigh_hosts (hash) loaded %u times, looked up by call %u times",
	       w.loads[1], w.calls[1]);
	expect(w.loads[0] >= 2,
	       "xfib_ifaces loaded %u times (ingress and egress port: at least %u)",
	       w.loads[0], 2);
	expect(w.calls[0] == 0,
	       "xfib_ifaces looked up by call %u times (inlined: %u)",
	       w.calls[0], 0);

	free(insns);
	xfib_fwd_bpf__destroy(skel);
	printf("\n%d cases, %d failed\n", ncases, nfailed);
	return nfailed ? 1 : 0;
}
