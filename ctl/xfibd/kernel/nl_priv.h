/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What netlink.c (sockets, dumps, dispatch) shares with the message
 * handlers: nl_link.c (links, addresses, netconf, neighbours, rules) and
 * nl_route.c (routes, nexthop objects). The handlers call the RIB, never
 * netlink.c. Not for the rest of the daemon.
 *
 * The handlers get tb[] from nl_msg_parse(): every attribute the policy
 * (nl_policy.c) names has its type and size checked, so they read those
 * without checking again; any other attribute is there only to say it
 * is present.
 */
#ifndef XFIB_NL_PRIV_H
#define XFIB_NL_PRIV_H

#include <libmnl/libmnl.h>
#include <linux/netlink.h>

#include "netlink.h"

static inline int attr_u32(const struct nlattr *a, __u32 *v)
{
	if (!a)
		return -1;
	*v = mnl_attr_get_u32(a);
	return 0;
}

/* ---- nl_link.c -------------------------------------------------------- */

void parse_link(struct nl *nl, const struct nlmsghdr *nlh,
		const struct nlattr **tb);
void parse_addr(struct nl *nl, const struct nlmsghdr *nlh,
		const struct nlattr **tb);
void parse_netconf(struct nl *nl, const struct nlmsghdr *nlh,
		   const struct nlattr **tb);
void parse_neigh(struct nl *nl, const struct nlmsghdr *nlh,
		 const struct nlattr **tb);
/* A rule of a rule dump (nl_check_rules); tb NULL: one that broke the
 * policy, which the mirror cannot answer for. */
void parse_rule_dumped(struct nl *nl, const struct nlmsghdr *nlh,
		       const struct nlattr **tb);

/* ---- nl_route.c ------------------------------------------------------- */

void parse_route(struct nl *nl, const struct nlmsghdr *nlh,
		 const struct nlattr **tb);
void parse_nexthop(struct nl *nl, const struct nlmsghdr *nlh,
		   const struct nlattr **tb);

#endif /* XFIB_NL_PRIV_H */
