/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Why a packet left the fast path (or that it did not). One X-macro list so
 * the enum used by the dataplane and the names printed by xfibctl cannot
 * drift apart. Values index the per-CPU array xfib_stats.
 */
#ifndef XFIB_COUNTERS_H
#define XFIB_COUNTERS_H

#define XFIB_REASONS(X)                                                        \
	X(FWD_V4, "forwarded_v4", "forwarded by XDP, IPv4")                    \
	X(FWD_V6, "forwarded_v6", "forwarded by XDP, IPv6")                    \
	X(DROP_BLACKHOLE, "drop_blackhole", "dropped: blackhole route")        \
	X(PASS_NOT_IP, "pass_not_ip", "to kernel: not IPv4/IPv6")              \
	X(PASS_VLAN, "pass_vlan", "to kernel: VLAN tag other than VID 0")      \
	X(PASS_MALFORMED, "pass_malformed",                                    \
	  "to kernel: truncated or invalid header")                            \
	X(PASS_IP_OPTIONS, "pass_ip_options", "to kernel: IPv4 options")       \
	X(PASS_IPV6_HBH, "pass_ipv6_hbh", "to kernel: IPv6 hop-by-hop header") \
	X(PASS_NOT_FOR_US, "pass_not_for_us",                                  \
	  "to kernel: destination MAC not the ingress port's")                 \
	X(PASS_NO_IFACE, "pass_no_iface",                                      \
	  "to kernel: ingress port not known (xfibd not running?)")            \
	X(PASS_FWD_DISABLED, "pass_fwd_disabled",                              \
	  "to kernel: forwarding disabled on ingress")                         \
	X(PASS_RP_FILTER, "pass_rp_filter",                                    \
	  "to kernel: IPv4 source fails the ingress port's rp_filter")        \
	X(PASS_SPECIAL_ADDR, "pass_special_addr",                              \
	  "to kernel: multicast, link-local, loopback or martian address")     \
	X(PASS_TTL, "pass_ttl", "to kernel: TTL/hop limit <= 1")               \
	X(PASS_NO_FIB, "pass_no_fib", "to kernel: no lookup table published")  \
	X(PASS_NO_ROUTE, "pass_no_route", "to kernel: no route")               \
	X(PASS_LOCAL, "pass_local",                                            \
	  "to kernel: local, broadcast or multicast destination")              \
	X(PASS_UNREACHABLE, "pass_unreachable",                                \
	  "to kernel: unreachable/prohibit/throw route")                       \
	X(PASS_UNSUPPORTED, "pass_unsupported",                                \
	  "to kernel: route kind not mirrored")                                \
	X(PASS_NEIGH, "pass_neigh", "to kernel: neighbour not resolved")       \
	X(PASS_EGRESS_DOWN, "pass_egress_down",                                \
	  "to kernel: egress port down or unknown")                            \
	X(PASS_EGRESS_NOT_ATTACHED, "pass_egress_not_attached",                \
	  "to kernel: egress port not attached to xfib")                       \
	X(PASS_HAIRPIN, "pass_hairpin",                                        \
	  "to kernel: egress is the ingress port (ICMP redirect)")             \
	X(PASS_MTU, "pass_mtu", "to kernel: larger than egress MTU")         \
	X(PASS_LOCAL_SOURCE, "pass_local_source",                              \
	  "to kernel: IPv4 source is a local or broadcast address")            \
	X(DROP_REDIRECT, "drop_redirect",                                      \
	  "dropped: egress port detached while forwarding")                    \
	X(PASS_NETFILTER, "pass_netfilter",                                    \
	  "to kernel: netfilter rules of the family or port xfib cannot stand in for") \
	X(PASS_CT_NEW, "pass_ct_new",                                          \
	  "to kernel: flow not established both ways in conntrack")           \
	X(PASS_CT_TCP_FLAGS, "pass_ct_tcp_flags",                              \
	  "to kernel: TCP SYN, FIN or RST")                                    \
	X(PASS_CT_INVALID, "pass_ct_invalid",                                  \
	  "to kernel: TCP/UDP header conntrack would mark invalid")            \
	X(PASS_CT_NAT, "pass_ct_nat",                                          \
	  "to kernel: flow with a conntrack helper or sequence adjustment, or NAT not set up") \
	X(PASS_CT_PROTO, "pass_ct_proto",                                      \
	  "to kernel: fragment, extension header, ICMP other than echo, other protocol") \
	X(PASS_CT_LEARN, "pass_ct_learn",                                      \
	  "to kernel: flow not yet prepared for XDP by xfibd")                 \
	X(PASS_IPV6_DISABLED, "pass_ipv6_disabled",                            \
	  "to kernel: IPv6 disabled on the ingress or egress port")             \
	X(PASS_EGRESS_NO_XMIT, "pass_egress_no_xmit",                          \
	  "to kernel: egress port cannot take XDP-redirected frames")        \
	X(PASS_XFRM, "pass_xfrm",                                              \
	  "to kernel: IPsec (XFRM) forward/output policies or states of the family") \
	X(PASS_CSUM_PARTIAL, "pass_csum_partial",                              \
	  "to kernel: TCP/UDP checksum left to the device by a local sender")  \
	X(PASS_CT_UNAVAILABLE, "pass_ct_unavailable",                          \
	  "to kernel: stateful rules, but the program was loaded without conntrack kfuncs") \
	X(PASS_STALE, "pass_stale",                                            \
	  "to kernel: no xfibd vouches for the mirror (lease expired)")        \
	X(FWD_NAT_V4, "forwarded_nat_v4",                                      \
	  "forwarded by XDP with conntrack's NAT, IPv4")                       \
	X(FWD_NAT_V6, "forwarded_nat_v6",                                      \
	  "forwarded by XDP with conntrack's NAT, IPv6")                       \
	X(PASS_RULE, "pass_rule",                                              \
	  "to kernel: a policy rule or table xfib leaves to the kernel, or a rule's blackhole/unreachable/prohibit") \
	X(PASS_BRIDGE, "pass_bridge",                                          \
	  "to kernel: bridge member not forwarding (STP), or a bridge xfib does not route through (VLAN filtering, bridge netfilter chains)") \
	X(PASS_BRIDGE_LEARN, "pass_bridge_learn",                              \
	  "to kernel: source MAC not in the bridge's FDB on this member: the bridge learns it") \
	X(PASS_FDB, "pass_fdb",                                                \
	  "to kernel: destination MAC not in the bridge's FDB (flooded), or its member down, blocked or not attached")

enum xfib_reason {
#define XFIB_REASON_ENUM(name, str, help) XFIB_##name,
	XFIB_REASONS(XFIB_REASON_ENUM)
#undef XFIB_REASON_ENUM
	XFIB_REASON_COUNT,
};

/* A step's answer when it does not stop the packet (include/xfib/decide.h,
 * rule_walk.h). */
#define XFIB_NEXT XFIB_REASON_COUNT

#endif /* XFIB_COUNTERS_H */
