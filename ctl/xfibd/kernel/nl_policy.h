/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The netlink attribute policy of xfibd: for each message type it mirrors,
 * the family header's size, which messages are not for xfib, and the
 * attributes read with their types and sizes (nested ones included). A
 * message is checked against it as a whole before any handler runs, so
 * handlers read what the policy names without checking it again.
 */
#ifndef XFIB_NL_POLICY_H
#define XFIB_NL_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/fib_rules.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/netconf.h>
#include <linux/netlink.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>

#define NL_MAX2(a, b) ((a) > (b) ? (a) : (b))
/* Entries of an attribute table big enough for every message type. */
#define NL_TB_SIZE (1 + NL_MAX2(NL_MAX2(NL_MAX2(IFLA_MAX, IFA_MAX), \
					NL_MAX2(NETCONFA_MAX, NDA_MAX)), \
				NL_MAX2(NL_MAX2(RTA_MAX, NHA_MAX), FRA_MAX)))

/* Where a message or attribute broke the policy, for the log. */
struct nl_parse_err {
	int attr;   /* attribute type; -1: the family header */
	int nested; /* attribute type inside it; -1: none */
	const char *why;
};

/* The attributes of one kind of payload (see nl_policy.c). */
struct nl_attr_set;

/* The metrics of a route (RTA_METRICS) and a path of RTA_MULTIPATH. */
extern const struct nl_attr_set nl_metrics_attrs;
extern const struct nl_attr_set nl_path_attrs;
/* IFLA_LINKINFO, a bridge's IFLA_INFO_DATA, a bridge port's
 * IFLA_INFO_SLAVE_DATA (and the AF_BRIDGE IFLA_PROTINFO of a port). */
extern const struct nl_attr_set nl_linkinfo_attrs;
extern const struct nl_attr_set nl_br_attrs;
extern const struct nl_attr_set nl_brport_attrs;

struct nl_msg_policy {
	const char *name;
	size_t hdrlen; /* the family header (struct rtmsg, ...) */
	const struct nl_attr_set *attrs;
	/* The address family of the message (the length of its addresses),
	 * NL_SKIP for one xfib does not mirror, NL_BAD for a malformed
	 * header; NULL: no addresses, AF_UNSPEC. */
	int (*family)(const void *hdr);
	/* The policy of the type's AF_BRIDGE messages, if they differ
	 * (a bridge's forwarding database as neighbour messages). */
	const struct nl_msg_policy *bridge;
};

#define NL_SKIP (-1)
#define NL_BAD (-2)

/* The policy of a message type; NULL if xfibd reads no such message. */
const struct nl_msg_policy *nl_policy_of(__u16 nlmsg_type);

/*
 * Checks a message against its policy and fills tb[NL_TB_SIZE] with its
 * attributes: those the policy names are valid, others are there for
 * their presence only (their payload was not checked). 1: parsed, 0: not
 * a message xfib mirrors, -EINVAL: malformed (err says where).
 */
int nl_msg_parse(const struct nlmsghdr *nlh, const struct nl_msg_policy *p,
		 const struct nlattr **tb, struct nl_parse_err *err);

/* The same for a run of attributes (nested ones): 0 or -EINVAL. tb must
 * hold the set's highest type + 1 entries. */
int nl_attrs_parse(const void *buf, size_t len, const struct nl_attr_set *set,
		   int family, const struct nlattr **tb,
		   struct nl_parse_err *err);

#endif /* XFIB_NL_POLICY_H */
