/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Checking the dataplane against the kernel: for a set of destinations,
 * xfib's answer (dplookup.h: the live instance, with the dataplane's code)
 * against the kernel's own (bpf_fib_lookup(), run in batches by
 * bpf/xfib_verify.bpf.c). Used by `xfibctl verify` and `xfibctl lookup`.
 */
#ifndef XFIB_VERIFY_H
#define XFIB_VERIFY_H

#include <stdbool.h>
#include <stddef.h>

#include "xfib/verify.h"
#include "dplookup.h"

struct xfib_fwd_bpf;

/* ---- the kernel's answers ------------------------------------------ */

struct kfib;

/* Loads bpf/xfib_verify.bpf.c (unpinned; freed by kfib_close). */
int kfib_open(struct kfib **k);
void kfib_close(struct kfib *k);
/* The program's query array: XV_BATCH entries. */
struct xv_query *kfib_queries(struct kfib *k);
/* Answers queries [0, n) (n <= XV_BATCH) as for packets entering by iif. */
int kfib_run(struct kfib *k, __u32 iif, size_t n);
/* "success", "blackhole", ... for a BPF_FIB_LKUP_RET_* value. */
const char *kfib_ret_name(int ret);

/* The kernel route matching a destination (`ip route get fibmatch`). */
struct kroute {
	int err;        /* 0, or the kernel's -errno (no route, ...) */
	__u8 family;
	__u8 plen;
	__u8 type;      /* RTN_* */
	__u8 gw_family; /* 0: no gateway */
	__u32 table;
	__u32 oif;
	__u32 priority;
	__u8 dst[16];
	__u8 gw[16];
};

/* Asks the kernel over rtnetlink. A kernel refusal (no route, blackhole)
 * goes to kr->err and returns 0; -errno if the question failed. */
int kroute_fibmatch(int fam, const __u8 *addr, struct kroute *kr);
const char *kroute_type_name(__u8 type);

/* ---- comparing ---------------------------------------------------- */

enum verify_outcome {
	VERIFY_MATCH,
	VERIFY_DEFERRED, /* the dataplane hands it to the kernel unasked */
	VERIFY_MISMATCH,
};

/*
 * One destination: ready and nh are xfib's answer (dpl), k the kernel's.
 * The mapping is documented at the function.
 */
enum verify_outcome verify_compare(const struct dpl *d, int fam,
				   const __u8 *addr, bool ready,
				   const struct xfib_nexthop *nh,
				   const struct xv_query *k);

/* The first port xfib is attached to, else the loopback device. */
int verify_default_iif(struct xfib_fwd_bpf *skel);

/* ---- a whole run -------------------------------------------------- */

/* Rule flows per family at most, and destinations asked per flow, unless
 * told otherwise (verify_opts). */
#define VERIFY_FLOWS_DEFAULT 4096
#define VERIFY_FLOW_DESTS_DEFAULT 8

struct verify_opts {
	unsigned long random; /* random destinations per family */
	__u32 iif;            /* ingress ifindex; 0: verify_default_iif() */
	__u32 table;          /* table xfibd mirrors; 0: read xfib_daemon */
	size_t max_reports;   /* mismatches kept with their details */
	__u64 seed;           /* 0: from the clock */
	/* Where a family's rules are walked: flows taken from their
	 * selectors, at most flows per family (0: none), each asked for
	 * flow_dests destinations. */
	unsigned long flows;
	unsigned long flow_dests;
};

/*
 * What a query asks besides the destination: the packet's source (0:
 * none), ingress port, TOS (IPv6: traffic class), transport protocol
 * and ports (host order; 0 for none), as the policy rules see them.
 */
struct verify_flow {
	__u8 src[16];
	__u32 iif;
	__u16 sport, dport;
	__u8 proto;
	__u8 tos;
};

struct verify_mismatch {
	int fam;
	__u8 addr[16];
	__u32 nh_idx;
	struct xfib_nexthop nh; /* xfib's answer */
	struct xv_query kernel; /* the kernel's */
	/* Both say local, but xfib_nonlocal4 rules the address out as a
	 * local source: the forwarder would not look it up (IPv4). */
	bool source_ruled_out;
	/* Found by a rule flow (flow), not by the destination sweep. */
	bool rule_flow;
	struct verify_flow flow;
};

struct verify_counts {
	unsigned long checked, matched, deferred, mismatched;
	unsigned long rechecked; /* disagreements looked at twice */
};

struct verify_family {
	struct xfib_active act; /* instance checked (at the end) */
	size_t prefixes;        /* distinct prefixes of the mirrored tables */
	struct verify_counts dests; /* the destination sweep */
	/* Flows from the rules' selectors (none unless the rules are
	 * walked): how many asked, of how many the selectors give. */
	unsigned long flows, combinations;
	struct verify_counts flow; /* their queries */
};

struct verify_report {
	__u32 iif;
	__u32 table;
	__u64 seed;
	unsigned long flow_dests; /* destinations asked per rule flow */
	struct verify_family fam[XFIB_FAMILIES];
	struct verify_mismatch *mis; /* the first max_reports */
	size_t nmis;
	double seconds;
	/* Addresses deferred because xfibd's lease had expired when they
	 * were checked: the dataplane handed every packet to the kernel. */
	unsigned long stale;
	char err[160]; /* on failure: what failed, and why */
};

/*
 * Checks the first and last address of every prefix of the mirrored and
 * the local table, the addresses just outside them, and o->random random
 * destinations per family, with no source, no transport, entering by
 * rep->iif; then, for a family whose rules are walked, the flows its
 * rules' selectors give (verify_flow.c), each for o->flow_dests of those
 * destinations. Returns 0 when the run completed (whatever it found), or
 * -errno with rep->err saying what failed.
 */
int verify_run(struct xfib_fwd_bpf *skel, const struct verify_opts *o,
	       struct verify_report *rep);
void verify_report_free(struct verify_report *rep);

#endif /* XFIB_VERIFY_H */
