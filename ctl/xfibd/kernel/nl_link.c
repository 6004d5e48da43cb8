// SPDX-License-Identifier: GPL-2.0-only
/*
 * The messages about devices: links, their addresses and forwarding
 * settings (netconf), neighbours, and the policy rules (the RIB decides
 * from them whether the mirror can answer for the kernel). Each handler turns one checked
 * message (nl_priv.h) into RIB calls.
 */
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/fib_rules.h>
#include <linux/ipv6.h>
#include <linux/neighbour.h>
#include <linux/netconf.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <libmnl/libmnl.h>

#include "netlink.h"
#include "nl_policy.h"
#include "nl_priv.h"
#include "rib/rib.h"


/* ---- links, addresses, netconf ------------------------------------------ */

/*
 * net.ipv6.conf.<dev>.disable_ipv6 from an IFLA_INET6 nest (in IFLA_AF_SPEC
 * of a link message, in IFLA_PROTINFO of an AF_INET6 one): its
 * IFLA_INET6_CONF is the device's devconf array, indexed by DEVCONF_*.
 * 1 disabled, 0 enabled, -1 not there.
 */
static int inet6_disabled(const struct nlattr *inet6)
{
	const struct nlattr *a;

	mnl_attr_for_each_nested(a, inet6) {
		if (mnl_attr_get_type(a) != IFLA_INET6_CONF)
			continue;
		if (mnl_attr_get_payload_len(a) <
		    (DEVCONF_DISABLE_IPV6 + 1) * sizeof(__s32))
			return -1;
		return ((const __s32 *)mnl_attr_get_payload(a))
			       [DEVCONF_DISABLE_IPV6] != 0;
	}
	return -1;
}

/* The same from IFLA_AF_SPEC: a nest per address family, by family. */
static int af_spec_ipv6_disabled(const struct nlattr *af_spec)
{
	const struct nlattr *a;

	mnl_attr_for_each_nested(a, af_spec) {
		if (mnl_attr_get_type(a) == AF_INET6)
			return inet6_disabled(a);
	}
	return -1;
}

/* A bridge port's STP state from its settings (IFLA_BRPORT_*, checked by
 * the policy); -1 if not there. */
static int brport_state(const struct nlattr *nest)
{
	const struct nlattr *tb[NL_TB_SIZE];
	struct nl_parse_err e;

	if (nl_attrs_parse(mnl_attr_get_payload(nest),
			   mnl_attr_get_payload_len(nest), &nl_brport_attrs,
			   AF_UNSPEC, tb, &e) || !tb[IFLA_BRPORT_STATE])
		return -1;
	return mnl_attr_get_u8(tb[IFLA_BRPORT_STATE]);
}

/* What IFLA_LINKINFO says of a bridge, or of a bridge's port (the policy
 * checked both). */
static void link_bridge_info(const struct nlattr *linkinfo, __u32 master,
			     struct rib_link_msg *m)
{
	const struct nlattr *tb[NL_TB_SIZE], *br[NL_TB_SIZE];
	struct nl_parse_err e;

	if (nl_attrs_parse(mnl_attr_get_payload(linkinfo),
			   mnl_attr_get_payload_len(linkinfo),
			   &nl_linkinfo_attrs, AF_UNSPEC, tb, &e))
		return;
	if (tb[IFLA_INFO_KIND] &&
	    !strcmp(mnl_attr_get_str(tb[IFLA_INFO_KIND]), "bridge")) {
		m->is_bridge = true;
		if (tb[IFLA_INFO_DATA] &&
		    !nl_attrs_parse(mnl_attr_get_payload(tb[IFLA_INFO_DATA]),
				    mnl_attr_get_payload_len(tb[IFLA_INFO_DATA]),
				    &nl_br_attrs, AF_UNSPEC, br, &e)) {
			if (br[IFLA_BR_VLAN_FILTERING])
				m->br_vlan_filtering =
					mnl_attr_get_u8(br[IFLA_BR_VLAN_FILTERING]);
			/* clock_t: USER_HZ, 100 per second */
			if (br[IFLA_BR_AGEING_TIME])
				m->br_ageing_ms = mnl_attr_get_u32(
					br[IFLA_BR_AGEING_TIME]) * 10;
		}
	}
	if (master && tb[IFLA_INFO_SLAVE_KIND] &&
	    !strcmp(mnl_attr_get_str(tb[IFLA_INFO_SLAVE_KIND]), "bridge")) {
		m->br_master = master;
		if (tb[IFLA_INFO_SLAVE_DATA])
			m->br_state = brport_state(tb[IFLA_INFO_SLAVE_DATA]);
	}
}

/*
 * Link messages of the device itself are AF_UNSPEC. A bridge announces
 * its ports' bridge state (the STP state, which changes without a message
 * of the device's own) as AF_BRIDGE link messages, and a port leaving
 * the bridge as an AF_BRIDGE RTM_DELLINK of the port, which stays; IPv6
 * announces its per-device state (RTNLGRP_IPV6_IFINFO) as AF_INET6
 * RTM_NEWLINK. Only the latter's devconf is read: whether IPv6 is
 * disabled on the device (the kernel then neither receives nor sends
 * IPv6 there).
 */
void parse_link(struct nl *nl, const struct nlmsghdr *nlh,
		const struct nlattr **tb)
{
	const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
	struct rib_link_msg m = { .ifindex = ifi->ifi_index, .br_state = -1 };
	__u32 mtu, master = 0;
	int off;

	if (ifi->ifi_family == AF_BRIDGE) {
		/* The bridge's own (no IFLA_MASTER, no port state) say
		 * nothing of a port. */
		if (nlh->nlmsg_type == RTM_DELLINK)
			rib_link_brport(nl->rib, ifi->ifi_index, 0, -1);
		else if (!attr_u32(tb[IFLA_MASTER], &master) &&
			 master != (__u32)ifi->ifi_index && tb[IFLA_PROTINFO])
			rib_link_brport(nl->rib, ifi->ifi_index, master,
					brport_state(tb[IFLA_PROTINFO]));
		return;
	}
	if (ifi->ifi_family == AF_INET6) {
		off = tb[IFLA_PROTINFO] ? inet6_disabled(tb[IFLA_PROTINFO]) : -1;
		if (nlh->nlmsg_type == RTM_NEWLINK && off >= 0)
			rib_link_ipv6(nl->rib, ifi->ifi_index, off);
		return;
	}
	if (nlh->nlmsg_type == RTM_DELLINK) {
		rib_link_del(nl->rib, ifi->ifi_index);
		return;
	}
	if (tb[IFLA_IFNAME])
		snprintf(m.name, sizeof(m.name), "%s", mnl_attr_get_str(tb[IFLA_IFNAME]));
	if (tb[IFLA_ADDRESS] && mnl_attr_get_payload_len(tb[IFLA_ADDRESS]) == 6)
		memcpy(m.mac, mnl_attr_get_payload(tb[IFLA_ADDRESS]), 6);
	if (!attr_u32(tb[IFLA_MTU], &mtu))
		m.mtu = mtu;
	/* Every RTM_NEWLINK carries it (rtnl_fill_ifinfo()), and a change
	 * of group sends one. */
	attr_u32(tb[IFLA_GROUP], &m.group);
	m.ifflags = ifi->ifi_flags;
	/* No IFLA_INET6 at all: the device has no IPv6 state (an MTU below
	 * 1280 removes it), and the kernel drops IPv6 there too. */
	off = tb[IFLA_AF_SPEC] ? af_spec_ipv6_disabled(tb[IFLA_AF_SPEC]) : -1;
	m.no_ipv6 = off != 0;
	attr_u32(tb[IFLA_MASTER], &master);
	if (tb[IFLA_LINKINFO])
		link_bridge_info(tb[IFLA_LINKINFO], master, &m);
	rib_link_set(nl->rib, &m);
}

/*
 * The kernel announces no change of disable_ipv6 itself, only what
 * follows from it: turning it on deletes the device's IPv6 addresses,
 * turning it off (the device up) adds its link-local one back. So an
 * IPv6 address change makes xfibd ask for the device (nl_link_refresh):
 * the reply is a link message with the devconf in it. Remembered here,
 * asked from the main loop: not in the middle of a dump, whose link part
 * has the devconf already.
 */
static void link_refresh_want(struct nl *nl, int ifindex)
{
	size_t i;
	int *p;

	for (i = 0; i < nl->nrefresh; i++)
		if (nl->refresh[i] == ifindex)
			return;
	if (nl->nrefresh == nl->refresh_cap) {
		size_t cap = nl->refresh_cap ? nl->refresh_cap * 2 : 16;

		p = realloc(nl->refresh, cap * sizeof(*p));
		if (!p)
			return; /* the next address change retries */
		nl->refresh = p;
		nl->refresh_cap = cap;
	}
	nl->refresh[nl->nrefresh++] = ifindex;
}

/* IPv4 addresses: a device that loses its last one loses its routes.
 * IPv6 ones only say that the device's IPv6 state may have changed. */
void parse_addr(struct nl *nl, const struct nlmsghdr *nlh,
		const struct nlattr **tb)
{
	const struct ifaddrmsg *ifa = mnl_nlmsg_get_payload(nlh);
	struct rib_addr4 a = { .plen = ifa->ifa_prefixlen };

	if (ifa->ifa_family == AF_INET6) {
		if (!nl->dumping)
			link_refresh_want(nl, ifa->ifa_index);
		return;
	}
	if (tb[IFA_LOCAL])
		memcpy(a.local, mnl_attr_get_payload(tb[IFA_LOCAL]), 4);
	if (tb[IFA_ADDRESS])
		memcpy(a.address, mnl_attr_get_payload(tb[IFA_ADDRESS]), 4);
	if (nlh->nlmsg_type == RTM_NEWADDR)
		rib_addr4_set(nl->rib, ifa->ifa_index, &a, nl->dumping);
	else
		rib_addr4_del(nl->rib, ifa->ifa_index, &a);
}

static int attr_s32(const struct nlattr *a)
{
	return a ? (int)mnl_attr_get_u32(a) : -1;
}

void parse_netconf(struct nl *nl, const struct nlmsghdr *nlh,
		   const struct nlattr **tb)
{
	const struct netconfmsg *ncm = mnl_nlmsg_get_payload(nlh);

	if (nlh->nlmsg_type != RTM_NEWNETCONF)
		return;
	rib_netconf(nl->rib, ncm->ncm_family, attr_s32(tb[NETCONFA_IFINDEX]),
		    attr_s32(tb[NETCONFA_FORWARDING]),
		    attr_s32(tb[NETCONFA_RP_FILTER]));
}
/* ---- neighbours ---------------------------------------------------------- */

/* States in which the kernel would transmit to the cached address. */
#define NUD_USABLE (NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE | \
		    NUD_PERMANENT | NUD_NOARP)

/*
 * The kernel confirms a STALE neighbour only when it sends to it itself:
 * the first packet moves it to DELAY, then PROBE (unicast probes), then
 * REACHABLE, or FAILED if nobody answers. Packets xfib forwards bypass
 * that, so a neighbour used only by xfib would stay STALE forever, and a
 * host that went away or silently changed its MAC would keep receiving
 * traffic the kernel would have stopped sending after its probes failed.
 * So xfibd says "in use" for every STALE neighbour on a port xfib
 * forwards to, as the kernel's own output path does (neigh_event_send).
 * Remembered here, sent from the main loop: not in the middle of a dump.
 */
static void neigh_stale_seen(struct nl *nl, int family, int ifindex,
			     const void *addr, size_t alen)
{
	struct nl_neigh_ref *r;

	if (nl->nstale == nl->stale_cap) {
		size_t cap = nl->stale_cap ? nl->stale_cap * 2 : 64;

		r = realloc(nl->stale, cap * sizeof(*r));
		if (!r)
			return; /* the next STALE notification retries */
		nl->stale = r;
		nl->stale_cap = cap;
	}
	r = &nl->stale[nl->nstale++];
	memset(r, 0, sizeof(*r));
	r->ifindex = ifindex;
	r->family = family;
	memcpy(r->addr, addr, alen);
}

/*
 * A bridge's forwarding database entry: MAC NDA_LLADDR of bridge
 * NDA_MASTER is behind port ndm_ifindex (the bridge itself for its own
 * addresses). Permanent entries are local (delivered up), NOARP ones
 * static; the bridge ages the others, but those an external learner
 * (switchdev, a VXLAN controller) added.
 */
static void parse_fdb(struct nl *nl, const struct nlmsghdr *nlh,
		      const struct nlattr **tb)
{
	const struct ndmsg *ndm = mnl_nlmsg_get_payload(nlh);
	struct xfib_fdb_key k = { 0 };
	__u8 flags = 0;

	if (attr_u32(tb[NDA_MASTER], &k.bridge))
		return;
	memcpy(k.mac, mnl_attr_get_payload(tb[NDA_LLADDR]), 6);
	if (tb[NDA_VLAN])
		k.vlan = mnl_attr_get_u16(tb[NDA_VLAN]);
	if (nlh->nlmsg_type == RTM_DELNEIGH) {
		rib_fdb_del(nl->rib, &k);
		return;
	}
	if ((ndm->ndm_state & NUD_PERMANENT) || ndm->ndm_ifindex == (int)k.bridge)
		flags |= XFIB_FDB_LOCAL;
	else if (!(ndm->ndm_state & NUD_NOARP) &&
		 !(ndm->ndm_flags & NTF_EXT_LEARNED))
		flags |= XFIB_FDB_DYNAMIC;
	rib_fdb_set(nl->rib, &k, ndm->ndm_ifindex, flags);
}

void parse_neigh(struct nl *nl, const struct nlmsghdr *nlh,
		 const struct nlattr **tb)
{
	const struct ndmsg *ndm = mnl_nlmsg_get_payload(nlh);
	size_t alen = ndm->ndm_family == AF_INET ? 4 : 16;
	const __u8 *mac = NULL, *dst;

	if (ndm->ndm_family == AF_BRIDGE) {
		parse_fdb(nl, nlh, tb);
		return;
	}
	dst = mnl_attr_get_payload(tb[NDA_DST]);

	/* Multicast entries (NOARP, created without a notification) are
	 * never a unicast next hop: the dataplane passes multicast. */
	if (ndm->ndm_family == AF_INET ? (dst[0] & 0xf0) == 0xe0 : dst[0] == 0xff)
		return;
	if (nlh->nlmsg_type == RTM_DELNEIGH) {
		rib_neigh_del(nl->rib, ndm->ndm_family, ndm->ndm_ifindex, dst);
		return;
	}
	if (tb[NDA_LLADDR] && mnl_attr_get_payload_len(tb[NDA_LLADDR]) == 6)
		mac = mnl_attr_get_payload(tb[NDA_LLADDR]);
	if ((ndm->ndm_state & NUD_STALE) && mac)
		neigh_stale_seen(nl, ndm->ndm_family, ndm->ndm_ifindex, dst, alen);
	rib_neigh_set(nl->rib, ndm->ndm_family, ndm->ndm_ifindex, dst, mac,
		      (ndm->ndm_state & NUD_USABLE) != 0);
}

/* ---- policy rules --------------------------------------------------------- */

/* The selectors of a rule that need more than a copy. */
static void rule_selectors(const struct nlattr **tb, struct xfib_rule *x)
{
	const struct fib_rule_port_range *pr;
	const struct fib_rule_uid_range *ur;

	if (tb[FRA_FWMARK] || tb[FRA_FWMASK]) {
		/* Without a mask the kernel compares every bit of a mark
		 * other than 0 (fib_nl2rule). */
		x->flags |= XFIB_RULE_F_FWMARK;
		attr_u32(tb[FRA_FWMARK], &x->fwmark);
		x->fwmask = x->fwmark ? 0xffffffff : 0;
		attr_u32(tb[FRA_FWMASK], &x->fwmask);
	}
	if (tb[FRA_UID_RANGE]) {
		ur = mnl_attr_get_payload(tb[FRA_UID_RANGE]);
		x->flags |= XFIB_RULE_F_UID;
		x->uid_start = ur->start;
		x->uid_end = ur->end;
	}
	if (tb[FRA_SPORT_RANGE]) {
		pr = mnl_attr_get_payload(tb[FRA_SPORT_RANGE]);
		x->flags |= XFIB_RULE_F_SPORT;
		x->sport_lo = pr->start;
		x->sport_hi = pr->end;
	}
	if (tb[FRA_DPORT_RANGE]) {
		pr = mnl_attr_get_payload(tb[FRA_DPORT_RANGE]);
		x->flags |= XFIB_RULE_F_DPORT;
		x->dport_lo = pr->start;
		x->dport_hi = pr->end;
	}
	if (tb[FRA_TUN_ID]) {
		x->flags |= XFIB_RULE_F_TUN_ID;
		x->tun_id = be64toh(mnl_attr_get_u64(tb[FRA_TUN_ID]));
	}
	if (tb[FRA_L3MDEV] && mnl_attr_get_u8(tb[FRA_L3MDEV])) {
		x->flags |= XFIB_RULE_F_L3MDEV;
		x->l3mdev = mnl_attr_get_u8(tb[FRA_L3MDEV]);
	}
	if (tb[FRA_FLOW]) {
		x->flags |= XFIB_RULE_F_REALMS;
		x->realms = mnl_attr_get_u32(tb[FRA_FLOW]);
	}
	if (tb[FRA_IP_PROTO])
		x->ip_proto = mnl_attr_get_u8(tb[FRA_IP_PROTO]);
}

/*
 * Linux 6.16 added port masks (newer than these headers): for a single
 * port (sport 80) the kernel keeps and sends the mask 0xffff, which
 * compares the whole port as the range alone does. Another mask is a
 * selector xfib does not know.
 */
#ifndef FRA_SPORT_MASK
#define FRA_SPORT_MASK 28
#define FRA_DPORT_MASK 29
#endif

static bool port_mask_whole(const struct nlattr *a)
{
	return mnl_attr_get_payload_len(a) == sizeof(__u16) &&
	       mnl_attr_get_u16(a) == 0xffff;
}

/* The first attribute type xfibd does not read, 0 if none: newer than
 * its headers (FRA_DSCP, FRA_FLOWLABEL, ...), or one it has no use for. */
static __u16 rule_unknown_attr(const struct nlmsghdr *nlh)
{
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct fib_rule_hdr)) {
		__u16 type = mnl_attr_get_type(a);

		if ((type == FRA_SPORT_MASK || type == FRA_DPORT_MASK) &&
		    port_mask_whole(a))
			continue;
		if (type > FRA_MAX || type == FRA_UNUSED2 ||
		    type == FRA_UNUSED3 || type == FRA_UNUSED4 ||
		    type == FRA_UNUSED5 || type == FRA_UNSPEC)
			return type;
	}
	return 0;
}

/* A rule message, checked against the policy, as xfib_rules holds it. */
static void rule_parse(const struct nlmsghdr *nlh, const struct nlattr **tb,
		       struct xfib_rule *x)
{
	const struct fib_rule_hdr *frh = mnl_nlmsg_get_payload(nlh);

	memset(x, 0, sizeof(*x));
	x->action = frh->action;
	x->src_len = frh->src_len;
	x->dst_len = frh->dst_len;
	x->tos = frh->tos;
	x->table = frh->table;
	x->suppress_prefixlen = x->suppress_ifgroup = 0xffffffff;
	if (frh->flags & FIB_RULE_INVERT)
		x->flags |= XFIB_RULE_F_INVERT;
	attr_u32(tb[FRA_PRIORITY], &x->priority);
	attr_u32(tb[FRA_TABLE], &x->table);
	attr_u32(tb[FRA_GOTO], &x->goto_prio);
	attr_u32(tb[FRA_SUPPRESS_PREFIXLEN], &x->suppress_prefixlen);
	attr_u32(tb[FRA_SUPPRESS_IFGROUP], &x->suppress_ifgroup);
	if (tb[FRA_PROTOCOL])
		x->protocol = mnl_attr_get_u8(tb[FRA_PROTOCOL]);
	if (tb[FRA_SRC])
		memcpy(x->src, mnl_attr_get_payload(tb[FRA_SRC]),
		       mnl_attr_get_payload_len(tb[FRA_SRC]));
	if (tb[FRA_DST])
		memcpy(x->dst, mnl_attr_get_payload(tb[FRA_DST]),
		       mnl_attr_get_payload_len(tb[FRA_DST]));
	if (tb[FRA_IIFNAME]) {
		x->flags |= XFIB_RULE_F_IIF;
		snprintf(x->iifname, sizeof(x->iifname), "%s",
			 mnl_attr_get_str(tb[FRA_IIFNAME]));
	}
	if (tb[FRA_OIFNAME]) {
		x->flags |= XFIB_RULE_F_OIF;
		snprintf(x->oifname, sizeof(x->oifname), "%s",
			 mnl_attr_get_str(tb[FRA_OIFNAME]));
		if (frh->flags & FIB_RULE_OIF_DETACHED)
			x->flags |= XFIB_RULE_F_OIF_DETACHED;
	}
	rule_selectors(tb, x);
	x->reason_arg = rule_unknown_attr(nlh);
	if (x->reason_arg)
		x->flags |= XFIB_RULE_F_UNKNOWN;
}

/* A rule of a rule dump (nl_check_rules); tb NULL: a malformed one. */
void parse_rule_dumped(struct nl *nl, const struct nlmsghdr *nlh,
		       const struct nlattr **tb)
{
	struct xfib_rule x;

	if (!tb) {
		rib_rule_dumped(nl->rib, nl->rule_fam, NULL);
		return;
	}
	rule_parse(nlh, tb, &x);
	rib_rule_dumped(nl->rib, nl->rule_fam, &x);
}
