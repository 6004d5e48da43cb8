/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The query array xfibctl's verify and lookup share with the referee
 * program bpf/xfib_verify.bpf.c: fixed-width types only.
 */
#ifndef XFIB_VERIFY_WIRE_H
#define XFIB_VERIFY_WIRE_H

#include <linux/types.h>

/*
 * Queries per BPF_PROG_TEST_RUN. Thousands amortise the syscall; the run
 * is not preemptible, so a batch is kept to a few milliseconds of FIB
 * lookups.
 */
#define XV_BATCH 4096

struct xv_query {
	__u8 family;   /* in: AF_INET or AF_INET6; out: family of addr */
	__u8 pad[3];
	__s32 ret;     /* out: BPF_FIB_LKUP_RET_* (>= 0) or -errno */
	__u32 ifindex; /* out: egress device */
	__u32 pad2;
	__u8 addr[16]; /* in: destination; out: gateway on success, if any */
	/* in, for the policy rules (all 0: none): the packet's source,
	 * TOS (IPv6: traffic class), transport protocol and ports (network
	 * order) */
	__u8 src[16];
	__u8 tos;
	__u8 l4_protocol;
	__be16 sport;
	__be16 dport;
	__u8 pad3[10];
};
_Static_assert(sizeof(struct xv_query) == 64, "xv_query size");

#endif /* XFIB_VERIFY_WIRE_H */
