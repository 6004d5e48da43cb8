/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel's policy rules (ip rule) as xfibd publishes them in
 * xfib_rules, per family, in the kernel's order (by priority; rules of
 * one priority in the order they were added), with what xfib could do
 * with each for a packet it forwards. Shared by the XDP program (whose
 * rule walk, include/xfib/rule_walk.h, reads them when hdr.walk is set; a
 * family whose hdr.fallback is not XFIB_RULES_OK goes to the kernel
 * whole, XFIB_FALLBACK_RULES), xfibd (ctl/xfibd/rib/rib_rule.c) and
 * xfibctl rules.
 *
 * Each family has two halves in xfib_rules (index fam * 2 + half); the
 * daemon fills the half not in xfib_rules_active, then publishes it there
 * with one 8-byte write of {half, generation}, then waits for an RCU grace
 * period before it may write the other half again. A reader reads
 * xfib_rules_active once, then that half, whose hdr.generation equals the
 * one it read unless the daemon wrote meanwhile (userspace readers: read
 * again).
 *
 * The classification follows net/core/fib_rules.c (fib_rule_match, and
 * fib_rules_lookup for the actions) and the family matches
 * (net/ipv4/fib_rules.c fib4_rule_match and fib4_rule_suppress,
 * net/ipv6/fib6_rules.c fib6_rule_match), for a packet that arrived on a
 * port and is being routed (ip_route_input_slow, ip6_route_input):
 *  - flowi_oif is 0, so a rule with oif never matches (oifindex is the
 *    device's, or -1 when it is gone; never 0);
 *  - flowi_iif is the ingress device: iif compares the ifindex the
 *    kernel resolved from the name (-1 while no such device exists,
 *    FIB_RULE_IIF_DETACHED), and never equals lo's (a packet on a port);
 *  - flowi_uid is sock_net_uid(net, NULL), uid 0 of the namespace's user
 *    namespace (IPv4), or 0 (IPv6): a uidrange matches every forwarded
 *    packet if it holds 0, none otherwise (as xfibd, in the initial user
 *    namespace, reads the range);
 *  - flowi_mark is skb->mark, 0 for a received packet unless netfilter
 *    sets one before routing (mangle, CONNMARK, nft meta mark set in a
 *    prerouting chain), which xfibd reads from the ruleset: while none
 *    can, xfibd decides each fwmark selector for mark 0 (setting
 *    XFIB_RULE_F_MATCH_NONE where it fails) and the walk ignores it;
 *    while one can, fwmark rules are left to the kernel. (A tc ingress
 *    program or action runs after XDP: a packet xfib forwards never meets
 *    it, marked or not.);
 *  - tun_id compares tunnel metadata, l3mdev asks the VRF device, realms
 *    (FRA_FLOW) classify the route: left to the kernel;
 *  - src, dst, tos/dsfield, ipproto, sport and dport are the packet's
 *    (ports and protocol as the flow dissector reads them: none in a
 *    later fragment); how tos compares differs between kernels (IPv4
 *    masks the header's TOS, IPv6 compares the traffic class with or
 *    without ECN), which the evaluator will have to follow; `not`
 *    inverts the whole match, so a rule with a selector that never
 *    matches, inverted, matches every forwarded packet.
 * suppress_prefixlength and suppress_ifgroup judge the route found (its
 * prefix length, its device's group) when the lookup found one
 * (fib_rules_lookup: not a blackhole, unreachable or prohibit route,
 * whose error is the answer); xfib judges the length (in main, only
 * whether the route is a /0: include/xfib/maps.h) and the group (of the
 * device of an IPv4 route's first path, of the path an IPv6 route's
 * lookup selected: include/xfib/rule_walk.h).
 */
#ifndef XFIB_RULES_H
#define XFIB_RULES_H

#include <linux/types.h>
#include "tables.h"

/* Rules per family in xfib_rules: more and the family goes to the kernel. */
#define XFIB_RULES_MAX 128
/* xfib_rule.goto_idx of a goto whose target priority has no rule: the
 * kernel then goes on with the next rule (FIB_RULE_UNRESOLVED). */
#define XFIB_RULE_NO_TARGET 0xffff

enum xfib_rule_class {
	XFIB_RULE_EXACT = 0,  /* xfib can evaluate it as the kernel does */
	XFIB_RULE_NEVER = 1,  /* it cannot match a forwarded packet */
	XFIB_RULE_KERNEL = 2, /* only the kernel can tell (reason says why) */
};

/* X(name, class, text): why a rule is of its class. */
#define XFIB_RULE_REASONS(X)                                                   \
	X(NONE, EXACT, "")                                                     \
	X(ALWAYS, EXACT, "matches every forwarded packet (not of a selector that never does)") \
	X(OIF, NEVER, "oif: a forwarded packet has no output device when the rules are read") \
	X(IIF_LOOPBACK, NEVER, "iif lo: only packets this host sends")         \
	X(IIF_MISSING, NEVER, "iif names no device (detached)")                \
	X(UID, NEVER, "uidrange without uid 0, the uid of forwarded packets")  \
	X(FWMARK, KERNEL, "fwmark: netfilter or tc may mark packets before routing, which xfib does not follow") \
	X(L3MDEV, KERNEL, "l3mdev: the table of a VRF device")                 \
	X(TUN_ID, KERNEL, "tun_id: tunnel metadata")                           \
	X(REALMS, KERNEL, "realms: route classification")                      \
	X(ACTION, KERNEL, "an action xfib does not know")                      \
	X(ATTR, KERNEL, "an attribute xfib does not know")                     \
	X(TABLE, KERNEL, "its table is not mirrored (see xfibctl rules)")

#define XFIB_RULE_REASON_ENUM(name, cls, text) XFIB_RULE_R_##name,
enum xfib_rule_reason { XFIB_RULE_REASONS(XFIB_RULE_REASON_ENUM) XFIB_RULE_R_COUNT };
#undef XFIB_RULE_REASON_ENUM

/* xfib_rule.flags */
enum xfib_rule_flag {
	XFIB_RULE_F_INVERT = 1 << 0,      /* not (FIB_RULE_INVERT) */
	XFIB_RULE_F_IIF = 1 << 1,         /* iif selector; iif holds its ifindex */
	XFIB_RULE_F_IIF_DETACHED = 1 << 2, /* ... naming no device */
	XFIB_RULE_F_IIF_LOOPBACK = 1 << 3, /* ... naming a loopback device */
	XFIB_RULE_F_OIF = 1 << 4,         /* oif selector */
	XFIB_RULE_F_OIF_DETACHED = 1 << 5,
	XFIB_RULE_F_FWMARK = 1 << 6,      /* fwmark/fwmask */
	XFIB_RULE_F_UID = 1 << 7,         /* uidrange */
	XFIB_RULE_F_SPORT = 1 << 8,       /* sport range */
	XFIB_RULE_F_DPORT = 1 << 9,       /* dport range */
	XFIB_RULE_F_L3MDEV = 1 << 10,
	XFIB_RULE_F_TUN_ID = 1 << 11,
	XFIB_RULE_F_REALMS = 1 << 12,     /* FRA_FLOW */
	XFIB_RULE_F_UNKNOWN = 1 << 13,    /* an attribute xfib does not know
					   * (its type in reason_arg) */
	XFIB_RULE_F_UNRESOLVED = 1 << 14, /* goto without a target rule */
	XFIB_RULE_F_MATCH_NONE = 1 << 15, /* a selector never matches a
					   * forwarded packet (before not);
					   * the walk then reads no other */
};

/*
 * One rule. Addresses in network order (IPv4 in the first 4 bytes), the
 * rest in host order. Names are the kernel's, for xfibctl; the dataplane
 * uses iif (an ifindex xfibd resolves from iifname, again when links
 * change) and flags.
 */
struct xfib_rule {
	__u32 priority;
	__u32 table;       /* FR_ACT_TO_TBL: FRA_TABLE, else the header's */
	__u32 goto_prio;   /* FR_ACT_GOTO: the target priority */
	__u16 goto_idx;    /* ... the index of its first rule in this set,
			    * or XFIB_RULE_NO_TARGET */
	__u16 flags;       /* enum xfib_rule_flag */
	__u8 action;       /* FR_ACT_* */
	__u8 cls;          /* enum xfib_rule_class */
	__u8 reason;       /* enum xfib_rule_reason */
	__u8 protocol;     /* RTPROT_* of who added it (not a selector) */
	__u8 src_len, dst_len;
	__u8 tos;          /* tos (IPv4) or dsfield/tclass (IPv6) */
	__u8 ip_proto;     /* 0: any */
	__u8 src[16];
	__u8 dst[16];
	__u32 iif;         /* XFIB_RULE_F_IIF and not detached: ifindex */
	__u16 sport_lo, sport_hi; /* XFIB_RULE_F_SPORT */
	__u16 dport_lo, dport_hi; /* XFIB_RULE_F_DPORT */
	__u32 fwmark, fwmask;
	__u32 uid_start, uid_end; /* XFIB_RULE_F_UID */
	__u32 suppress_prefixlen; /* 0xffffffff: none */
	__u32 suppress_ifgroup;   /* 0xffffffff: none */
	__u32 realms;             /* FRA_FLOW: from << 16 | to */
	__u16 reason_arg;         /* ATTR: the attribute type; ACTION: the action */
	__u8 l3mdev;
	__u8 tslot;               /* FR_ACT_TO_TBL: its table's slot
				   * (include/xfib/tables.h),
				   * XFIB_TSLOT_LOCAL, or XFIB_TSLOT_NONE */
	__u8 tos_mask;            /* tos selector: the bits of the packet's
				   * TOS / traffic class this kernel
				   * compares with tos (xfibd knows which) */
	__u8 run;                 /* a run of rules on the source starts
				   * here (xfib_rule_set.range) ... */
	__u8 run_log2n;           /* ... of 2^run_log2n ranges */
	__u8 run_off;             /* ... from range[run_off] */
	__u64 tun_id;             /* host order */
	char iifname[16];
	char oifname[16];
};
_Static_assert(sizeof(struct xfib_rule) == 144, "xfib_rule size");

/* Why the family's rules send it to the kernel (xfib_rules_hdr.fallback). */
enum xfib_rules_fallback {
	XFIB_RULES_OK = 0,        /* xfib walks them (or needs not) */
	XFIB_RULES_ORDER = 1,     /* "lookup local" is not the first rule */
	XFIB_RULES_TOO_MANY = 2,  /* more than XFIB_RULES_MAX rules */
	XFIB_RULES_UNREADABLE = 3, /* a rule xfibd could not parse */
	XFIB_RULES_LOCAL_ROUTES = 4, /* the local table has routes other
				      * than local, broadcast, anycast and
				      * multicast ones, and rules follow
				      * it: main cannot stand in for it */
};

/*
 * walk 0: the rules are "lookup local", "lookup main" and what follows
 * it (which a packet main has no route for reaches: the kernel's), so the
 * plain lookup of slot 0 answers. walk 1: a packet walks rule[first ..
 * count) (first: the rule after "lookup local", which slot 0's lookup
 * answers with main: see rule_walk.h). walk is 0 whenever fallback is
 * not XFIB_RULES_OK (the family is the kernel's anyway).
 *
 * What xfibd sets in each rule for the walk: tslot for FR_ACT_TO_TBL only
 * (XFIB_TSLOT_NONE for other actions; XFIB_TSLOT_LOCAL for every "lookup
 * local", the first included; XFIB_TSLOT_MAIN for "lookup <mirrored
 * table>" without suppress_prefixlength, or with suppress_prefixlength 0
 * (wg-quick's: slot 0's answers say which came from a default route, at
 * any size of main; suppress_ifgroup reads only the answer's nexthop, so
 * it does not matter); a slot, with main_copy set
 * in its xfib_table_info, with another length); tos_mask on every rule
 * (0x1c for IPv4, 0xfc for IPv6 on 5.18 and later, 0xff before);
 * XFIB_RULE_F_MATCH_NONE also for an fwmark that fails for mark 0 while
 * netfilter cannot mark before routing (the class is then EXACT, reason
 * NONE, or ALWAYS with not). A rule whose table's slot is in state
 * KERNEL stays EXACT: the walk reads the descriptor and passes.
 */
struct xfib_rules_hdr {
	__u32 generation; /* equals xfib_rules_active's when published */
	__u32 count;      /* rules in rule[] */
	__u32 total;      /* rules the kernel has (count, or more) */
	__u32 fallback;   /* enum xfib_rules_fallback */
	__u32 walk;
	__u32 first;
	/* A rule has suppress_ifgroup: an IPv6 walk needs the packet's
	 * flow hash (struct xfib_rwalk), which costs nothing otherwise. */
	__u32 ifgroup;
	__u32 pad;
};

/*
 * Runs of rules on the source. Rules whose match depends on the packet's
 * source address alone (from, not, selectors xfibd decided: the
 * multi-homing and cloud rule sets, fwmark rules for unmarked packets)
 * are the bulk of real rule sets, and reading them one by one is what a
 * walk costs (one rule a bpf_loop() call). So xfibd compiles each run of
 * two or more consecutive such rules into sorted source ranges, each
 * naming the first rule of the run that matches its sources (or the
 * rule after the run when none does): the walk, reaching the run's first
 * rule, bisects them and goes on at that rule, whose selectors it then
 * reads as any other's. A run only skips rules that do not match, so
 * the answer is the linear walk's (a goto into the middle of a run walks
 * on from there rule by rule). IPv4 ranges hold the address in lo.
 */
#define XFIB_RUN_RANGES_LOG2 8
#define XFIB_RUN_RANGES (1u << XFIB_RUN_RANGES_LOG2)

struct xfib_rule_range {
	__u64 hi, lo;  /* the range's first source, host order */
	__u32 rule;    /* the rule the walk goes on at for it */
	__u32 run_end; /* in a run's first range: the index of the rule
			* after the run (for xfibctl rules) */
};
_Static_assert(sizeof(struct xfib_rule_range) == 24, "xfib_rule_range size");

/* One half of a family's rules. */
struct xfib_rule_set {
	struct xfib_rules_hdr hdr;
	struct xfib_rule rule[XFIB_RULES_MAX];
	struct xfib_rule_range range[XFIB_RUN_RANGES];
};

/* Per family: the half readers use. 8 bytes, written at once. */
struct xfib_rules_active {
	__u32 half;       /* 0 or 1 */
	__u32 generation; /* 0: nothing published yet */
};
_Static_assert(sizeof(struct xfib_rules_active) == 8, "xfib_rules_active size");

/* The loopback device's ifindex in every namespace (LOOPBACK_IFINDEX). */
#define XFIB_LOOPBACK_IFINDEX 1

/*
 * The walk's input and output (include/xfib/rule_walk.h).
 *
 * The flow the rules see (the kernel's flowi4 / flowi6 for an input
 * route): addresses as host-order 64-bit halves (IPv4 in the low 32
 * bits of the _lo half), ports in host order, 0 where the kernel's flow
 * dissector finds none (a protocol without ports, a fragment).
 */
struct xfib_rflow {
	__u64 src_hi, src_lo;
	__u64 dst_hi, dst_lo;
	__u32 iif;
	__u16 sport, dport;
	__u8 tos;          /* IPv4 TOS byte, IPv6 traffic class */
	__u8 proto;        /* transport protocol, 0: not known */
	__u8 l4_unknown;   /* an IPv6 extension header hides the transport:
			    * rules on protocol or ports go to the kernel */
	__u8 reverse;      /* the source's lookup (iif lo) */
};

/* The walk's answer. */
struct xfib_rwalk {
	__u32 main_nh;     /* in: slot 0's answer for the destination
			    * (XFIB_NH_IS_DFLT: a default route of main's) */
	__u32 nh;          /* out: the nexthop index the rules chose;
			    * XFIB_NH_IDX_NONE: no route */
	__u32 reason;      /* out: XFIB_NEXT (nh), or why the kernel's */
	__u32 rule;        /* out: index of the rule that decided; count:
			    * none did */
	__u32 table;       /* out: the table that answered (kernel id) */
	__u32 suppressed;  /* out: a rule's answer was suppressed on the way
			    * (suppress_prefixlength, suppress_ifgroup), or
			    * an IPv6 multipath answer's group was judged
			    * on the member this flow hashes to */
	__u32 flow_hash;   /* in: the packet's flow hash
			    * (include/xfib/flow_hash.h), as the forwarding
			    * path computes it to pick a multipath member:
			    * IPv6's suppress_ifgroup reads the member's
			    * device; only when hdr.ifgroup */
};

#endif /* XFIB_RULES_H */
