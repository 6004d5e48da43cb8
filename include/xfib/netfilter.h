/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Netfilter-aware forwarding: what xfibd found in the host's firewall and
 * what the dataplane does about it, per family. Shared by the XDP program
 * (bpf/lib/ctgate.h), xfibd (ctl/xfibd/nf/) and xfibctl status.
 *
 * xfibd reads the forward path's rules (nftables, legacy iptables) at
 * start and on every change, and publishes one mode per family in
 * xfib_nf_conf:
 *
 *   OFF   no rule on the forward path (or --netfilter=ignore): forward
 *   GATE  rules exist, and every chain a packet of an established flow
 *         crosses accepts it unchanged: forward only packets of flows
 *         conntrack holds as established both ways and not NATed; the
 *         rest goes to the kernel, whose ruleset decides
 *   PASS  rules exist that the gate cannot stand in for (or
 *         --netfilter=pass): every packet of the family to the kernel
 */
#ifndef XFIB_NETFILTER_H
#define XFIB_NETFILTER_H

#include <linux/types.h>

enum xfib_nf_mode {
	XFIB_NF_OFF = 0,
	XFIB_NF_GATE = 1,
	XFIB_NF_PASS = 2,
};

/*
 * Read by the dataplane for every packet it would forward. The timeouts
 * are conntrack's (net.netfilter.nf_conntrack_*_timeout*), in ms: what
 * the kernel would set a flow's timeout to on each packet, and what the
 * dataplane sets it to for the packets it forwards instead.
 */
struct xfib_nf_conf {
	__u8 mode;	/* enum xfib_nf_mode */
	__u8 ports;	/* some port has ingress or egress rules: look the
			 * packet's ports up in xfib_nf_ports */
	__u8 pad[2];
	__u32 tcp_ms;	     /* TCP established */
	__u32 udp_ms;	     /* UDP, replied but not yet a stream */
	__u32 udp_stream_ms; /* UDP, assured */
};
_Static_assert(sizeof(struct xfib_nf_conf) == 16, "xfib_nf_conf size");

/* Where the rules were found (bits of xfib_nf_info.sources). */
enum xfib_nf_source {
	XFIB_NF_SRC_NFT = 1 << 0,	   /* nftables (iptables-nft included) */
	XFIB_NF_SRC_LEGACY = 1 << 1,	   /* legacy iptables / ip6tables */
	XFIB_NF_SRC_ACCT = 1 << 2,	   /* nf_conntrack_acct on */
	XFIB_NF_SRC_ERROR = 1 << 3,	   /* reading failed: assumed present */
};

#define XFIB_NF_WHY_MAX 160

/* What status shows, per family; not read by the fast path. */
struct xfib_nf_info {
	__u8 mode;	  /* enum xfib_nf_mode published */
	__u8 option;	  /* enum xfib_nf_option: --netfilter */
	__u8 sources;	  /* enum xfib_nf_source where rules were found */
	__u8 ports;	  /* ports in xfib_nf_ports (at most 255 counted) */
	__u32 chains;	  /* forward-path base chains with an effect */
	__u64 checked;	  /* CLOCK_REALTIME, seconds, of the last check */
	__u64 changes;	  /* checks that found a different ruleset */
	__u64 learned;	  /* flows xfibd prepared for the fast path */
	__u64 learn_errors; /* ... and failed to (the flow stays slow) */
	char why[XFIB_NF_WHY_MAX]; /* the chain and rule behind PASS */
};
_Static_assert(sizeof(struct xfib_nf_info) == 40 + XFIB_NF_WHY_MAX,
	       "xfib_nf_info size");

/*
 * xfib_nf_ports: ifindex -> enum xfib_nf_port_dir. A port with an ingress
 * chain (inet or netdev) or a netdev egress chain that does more than
 * accept every packet unchanged: packets entering (IN) or leaving (OUT)
 * it go to the kernel, whatever the family's mode. Such chains see
 * packets before conntrack (ingress) or whatever their flow (egress), so
 * the gate cannot stand in for them.
 */
enum xfib_nf_port_dir {
	XFIB_NF_PORT_IN = 1 << 0,
	XFIB_NF_PORT_OUT = 1 << 1,
};

#define XFIB_NF_PORTS_MAX 1024

/* xfibd --netfilter. */
enum xfib_nf_option {
	XFIB_NF_OPT_CONNTRACK = 0,
	XFIB_NF_OPT_PASS = 1,
	XFIB_NF_OPT_IGNORE = 2,
};

/*
 * An ICMP echo flow xfibd found established in conntrack (the conntrack
 * kfuncs look up TCP and UDP only): the requester's and responder's
 * addresses (IPv4 in the first 4 bytes) and the echo identifier, network
 * order. Written by xfibd, read by the dataplane for echo requests and
 * replies.
 */
struct xfib_ct_echo_key {
	__u8 family; /* AF_INET / AF_INET6 */
	__u8 pad;
	__be16 id;
	__u8 requester[16];
	__u8 responder[16];
};
_Static_assert(sizeof(struct xfib_ct_echo_key) == 36, "xfib_ct_echo_key size");

struct xfib_ct_echo {
	__u64 valid_until; /* CLOCK_MONOTONIC ns: conntrack still holds the
			    * flow until then, whatever happens */
	__u64 last_used;   /* CLOCK_MONOTONIC ns of the last packet the
			    * dataplane forwarded (coarse) */
	/* A flow conntrack translates has a key per side: the requester's
	 * (its requests leave translated), the responder's (its replies
	 * do), each with the addresses and identifier they leave with. */
	__u8 nat;	   /* enum xfib_ct_echo_nat */
	__u8 pad;
	__be16 id;	   /* identifier the packet leaves with */
	__u8 pad2[4];
	__u8 saddr[16];	   /* source and destination it leaves with */
	__u8 daddr[16];
};
_Static_assert(sizeof(struct xfib_ct_echo) == 56, "xfib_ct_echo size");

enum xfib_ct_echo_nat {
	XFIB_ECHO_NAT_NONE = 0,	   /* requests and replies forwarded as they are */
	XFIB_ECHO_NAT_REQUEST = 1, /* requests translated; no reply has this key */
	XFIB_ECHO_NAT_REPLY = 2,   /* replies translated; no request has it */
};

/*
 * A flow the dataplane found established but not yet prepared (a TCP flow
 * whose conntrack entry is not yet BE_LIBERAL, an echo flow not in
 * xfib_ct_echo): sent to xfibd through the xfib_ct_events ring, at most
 * once per XFIB_CT_LEARN_RETRY_NS per flow.
 */
struct xfib_ct_event {
	__u8 family; /* AF_INET / AF_INET6 */
	__u8 proto;  /* IPPROTO_TCP, IPPROTO_ICMP, IPPROTO_ICMPV6 */
	__u8 icmp_type;
	__u8 pad;
	__be16 sport; /* TCP ports, or the echo identifier in sport */
	__be16 dport;
	__u8 saddr[16]; /* the packet's, network order */
	__u8 daddr[16];
};
_Static_assert(sizeof(struct xfib_ct_event) == 40, "xfib_ct_event size");

#define XFIB_CT_LEARN_RETRY_NS 100000000ull

/*
 * The dataplane's flow cache (bpf/lib/ctgate.h): a flow conntrack said
 * the gate forwards is forwarded for XFIB_CT_CACHE_NS without asking
 * again, then asked again (which also refreshes its timeout). So a change
 * conntrack makes to an entry that the kernel does not see a packet for
 * reaches the fast path within that time: a deletion (conntrack -D, a
 * flush, a timeout), the other direction's FIN or RST. The flow's own
 * SYN, FIN and RST go to the kernel and clear its cache slot at once.
 * XFIB_CT_CACHE_SETS sets of two flows per CPU (8192 flows, 768 KiB).
 */
#define XFIB_CT_CACHE_NS 25000000ull
#define XFIB_CT_CACHE_SETS_LOG2 12
#define XFIB_CT_CACHE_SETS (1u << XFIB_CT_CACHE_SETS_LOG2)

/* At most this many flows per CPU per XFIB_CT_LEARN_WINDOW_NS are sent to
 * xfibd, whatever arrives: each costs it a ctnetlink request. */
#define XFIB_CT_LEARN_BURST 256
#define XFIB_CT_LEARN_WINDOW_NS 100000000ull

#endif /* XFIB_NETFILTER_H */
