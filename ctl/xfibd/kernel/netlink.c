// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <net/if.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/fib_rules.h>
#include <linux/ipv6.h>
#include <linux/neighbour.h>
#include <linux/netconf.h>
#include <linux/netlink.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>
#include <libmnl/libmnl.h>

#include "log.h"
#include "fnv.h"
#include "monoclock.h"
#include "netlink.h"
#include "nl_policy.h"
#include "nl_reader.h"
#include "rib/rib.h"

#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK 11
#endif
#ifndef NETLINK_GET_STRICT_CHK
#define NETLINK_GET_STRICT_CHK 12
#endif

#define NL_BUF_SIZE (1 << 16)
#define NL_DUMP_TRIES 5
/* At most one line about malformed messages per this many milliseconds. */
#define NL_PARSE_LOG_MS 10000

/*
 * The handlers below get tb[] from nl_msg_parse(): every attribute the
 * policy (nl_policy.c) names has its type and size checked, so they read
 * those without checking again; any other attribute is there only to
 * say it is present.
 */

static int attr_u32(const struct nlattr *a, __u32 *v)
{
	if (!a)
		return -1;
	*v = mnl_attr_get_u32(a);
	return 0;
}

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

/*
 * Link messages of the device itself are AF_UNSPEC. A bridge announces
 * its ports' bridge state as AF_BRIDGE link messages, and a port leaving
 * the bridge as an AF_BRIDGE RTM_DELLINK of the port, which stays; IPv6
 * announces its per-device state (RTNLGRP_IPV6_IFINFO) as AF_INET6
 * RTM_NEWLINK. Only the latter's devconf is read: whether IPv6 is
 * disabled on the device (the kernel then neither receives nor sends
 * IPv6 there).
 */
static void parse_link(struct nl *nl, const struct nlmsghdr *nlh,
		       const struct nlattr **tb)
{
	const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
	struct rib_link_msg m = { .ifindex = ifi->ifi_index };
	__u32 mtu;
	int off;

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
	m.ifflags = ifi->ifi_flags;
	/* No IFLA_INET6 at all: the device has no IPv6 state (an MTU below
	 * 1280 removes it), and the kernel drops IPv6 there too. */
	off = tb[IFLA_AF_SPEC] ? af_spec_ipv6_disabled(tb[IFLA_AF_SPEC]) : -1;
	m.no_ipv6 = off != 0;
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
static void parse_addr(struct nl *nl, const struct nlmsghdr *nlh,
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

static void parse_netconf(struct nl *nl, const struct nlmsghdr *nlh,
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

static void parse_neigh(struct nl *nl, const struct nlmsghdr *nlh,
			const struct nlattr **tb)
{
	const struct ndmsg *ndm = mnl_nlmsg_get_payload(nlh);
	size_t alen = ndm->ndm_family == AF_INET ? 4 : 16;
	const __u8 *mac = NULL, *dst = mnl_attr_get_payload(tb[NDA_DST]);

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

/* ---- routes -------------------------------------------------------------- */

/*
 * The one gateway decoder, for routes, the paths of RTA_MULTIPATH and
 * nexthop objects: RTA_GATEWAY (NHA_GATEWAY), an address of the message's
 * family, or RTA_VIA, an address of its own family (an IPv4 route via an
 * IPv6 gateway, RFC 5549). Into gw_family (0: none) and addr. False for
 * an RTA_VIA of a family xfib does not forward to.
 */
static bool parse_gateway(const struct nlattr *gw, const struct nlattr *via,
			  int family, __u8 *gw_family, __u8 *addr)
{
	const struct rtvia *v;

	if (gw) {
		*gw_family = family;
		memcpy(addr, mnl_attr_get_payload(gw), family == AF_INET ? 4 : 16);
	} else if (via) {
		/* nl_policy.c checked the address against its family. */
		v = mnl_attr_get_payload(via);
		if (v->rtvia_family != AF_INET && v->rtvia_family != AF_INET6)
			return false;
		*gw_family = v->rtvia_family;
		memcpy(addr, v->rtvia_addr, v->rtvia_family == AF_INET ? 4 : 16);
	}
	return true;
}

/* One path of RTA_MULTIPATH, not dead. */
static void parse_path(const struct rtnexthop *rtnh, int family,
		       struct rib_path *p)
{
	const struct nlattr *tb[RTA_MAX + 1];
	struct nl_parse_err err;
	__u8 gw_family = 0;

	memset(p, 0, sizeof(*p));
	p->weight = rtnh->rtnh_hops + 1;
	/* Checked by the policy before: this parse cannot fail. */
	if (nl_attrs_parse(RTNH_DATA(rtnh), rtnh->rtnh_len - sizeof(*rtnh),
			   &nl_path_attrs, family, tb, &err) ||
	    !parse_gateway(tb[RTA_GATEWAY], tb[RTA_VIA], family, &gw_family,
			   p->key.gw) ||
	    rtnh->rtnh_ifindex <= 0 || tb[RTA_ENCAP]) {
		memset(&p->key, 0, sizeof(p->key));
		p->key.kind = XFIB_NH_UNSUPPORTED;
		return;
	}
	p->key.kind = gw_family ? XFIB_NH_GATEWAY : XFIB_NH_CONNECTED;
	p->key.family = gw_family ? gw_family : family;
	p->key.ifindex = rtnh->rtnh_ifindex;
}

/*
 * The paths of RTA_MULTIPATH (their layout checked by the policy). Dead
 * ones (their device is down) are left out, as the kernel's path
 * selection skips them; too many paths, or none alive, leave the route
 * to the kernel.
 */
static void parse_multipath(const struct nlattr *mp, int family,
			    struct rib_route_msg *m)
{
	const struct rtnexthop *rtnh = mnl_attr_get_payload(mp);
	int len = mnl_attr_get_payload_len(mp);

	m->paths = 0;
	m->npath = 0;
	while (len >= (int)sizeof(*rtnh) && rtnh->rtnh_len >= sizeof(*rtnh) &&
	       rtnh->rtnh_len <= len) {
		m->paths++;
		if (m->npath == XFIB_GROUP_MEMBERS)
			m->unsupported = true;
		else if (!(rtnh->rtnh_flags & RTNH_F_DEAD))
			parse_path(rtnh, family, &m->path[m->npath++]);
		len -= RTNH_ALIGN(rtnh->rtnh_len);
		rtnh = (const void *)((const char *)rtnh + RTNH_ALIGN(rtnh->rtnh_len));
	}
	if (!m->npath)
		m->unsupported = true;
}
/* ---- what tells IPv4 routes of one key apart ------------------------------ */

/* Flags of a route or path that describe it, not its state. */
#define RTNH_F_IDENT (RTNH_F_ONLINK | RTNH_F_PERVASIVE)

static __u64 fnv64_attr(__u64 h, const struct nlattr *a)
{
	__u16 type = mnl_attr_get_type(a);

	h = xfib_fnv1a(h, &type, sizeof(type));
	return xfib_fnv1a(h, mnl_attr_get_payload(a), mnl_attr_get_payload_len(a));
}

/* The paths of RTA_MULTIPATH without their state flags (dead, linkdown,
 * offload), which change while the route stays the same. */
static __u64 fnv64_multipath(__u64 h, const struct nlattr *mp)
{
	const struct rtnexthop *rtnh = mnl_attr_get_payload(mp);
	int len = mnl_attr_get_payload_len(mp);

	while (len >= (int)sizeof(*rtnh) && rtnh->rtnh_len >= sizeof(*rtnh) &&
	       rtnh->rtnh_len <= len) {
		struct rtnexthop n = *rtnh;

		n.rtnh_flags &= RTNH_F_IDENT;
		h = xfib_fnv1a(h, &n, sizeof(n));
		h = xfib_fnv1a(h, RTNH_DATA(rtnh), rtnh->rtnh_len - sizeof(*rtnh));
		len -= RTNH_ALIGN(rtnh->rtnh_len);
		rtnh = (const void *)((const char *)rtnh + RTNH_ALIGN(rtnh->rtnh_len));
	}
	return h;
}

/*
 * IPv4 keeps several routes of one key (table, prefix, TOS, metric) when
 * anything else of them differs: type, protocol, scope, nexthops,
 * preferred source, metrics, realm, encapsulation. A hash of exactly
 * those names one of them in every message about it (new, dump, delete).
 * Compat mode repeats a nexthop object's paths in routes by it; they are
 * the object's, not the route's, and are left out.
 */
static __u64 route_ident(const struct rtmsg *rtm, const struct nlattr **tb)
{
	static const int own[] = { RTA_PREFSRC, RTA_METRICS, RTA_FLOW,
				   RTA_NEWDST, RTA_NH_ID };
	static const int path[] = { RTA_OIF, RTA_GATEWAY, RTA_VIA,
				    RTA_ENCAP_TYPE, RTA_ENCAP };
	__u8 hdr[4] = { rtm->rtm_type, rtm->rtm_protocol, rtm->rtm_scope,
			rtm->rtm_flags & RTNH_F_IDENT };
	__u64 h = xfib_fnv1a(XFIB_FNV1A_BASIS, hdr, sizeof(hdr));
	size_t i;

	for (i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (tb[own[i]])
			h = fnv64_attr(h, tb[own[i]]);
	if (tb[RTA_NH_ID])
		return h;
	for (i = 0; i < sizeof(path) / sizeof(path[0]); i++)
		if (tb[path[i]])
			h = fnv64_attr(h, tb[path[i]]);
	if (tb[RTA_MULTIPATH])
		h = fnv64_multipath(h, tb[RTA_MULTIPATH]);
	return h;
}

/*
 * The lifetime of an expiring route (IPv6 RTF_EXPIRES): rta_expires of
 * RTA_CACHEINFO, in clock ticks (USER_HZ) from the moment the message was
 * made, negative once it has passed; 0 when the route does not expire.
 */
static void parse_expires(const struct nlattr **tb, struct rib_route_msg *m)
{
	static long hz;
	const struct rta_cacheinfo *ci;
	__u32 v;

	if (tb[RTA_CACHEINFO]) {
		ci = mnl_attr_get_payload(tb[RTA_CACHEINFO]);
		if (!ci->rta_expires)
			return;
		if (!hz)
			hz = sysconf(_SC_CLK_TCK) > 0 ? sysconf(_SC_CLK_TCK) : 100;
		m->has_expires = true;
		m->expires_ms = (__s32)((__s64)(__s32)ci->rta_expires * 1000 / hz);
	} else if (!attr_u32(tb[RTA_EXPIRES], &v) && v) {
		m->has_expires = true;
		m->expires_ms = v > 0x7fffffff / 1000 ? 0x7fffffff : (__s32)(v * 1000);
	}
}

static enum rib_route_op route_op(const struct nl *nl, const struct nlmsghdr *nlh)
{
	if (nl->dumping)
		return RIB_ROUTE_DUMPED;
	if (nlh->nlmsg_flags & NLM_F_REPLACE)
		return RIB_ROUTE_REPLACE;
	if (nlh->nlmsg_flags & NLM_F_APPEND)
		return RIB_ROUTE_APPEND;
	/* NLM_F_EXCL | NLM_F_CREATE: a new key; NLM_F_CREATE: prepend. */
	return RIB_ROUTE_PREPEND;
}

static void parse_route(struct nl *nl, const struct nlmsghdr *nlh,
			const struct nlattr **tb)
{
	const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);
	static struct rib_route_msg m; /* 2 KiB: kept off the stack */
	size_t alen = rtm->rtm_family == AF_INET ? 4 : 16;
	__u32 v;

	memset(&m, 0, sizeof(m));
	m.key.family = rtm->rtm_family;
	m.key.plen = rtm->rtm_dst_len;
	m.key.tos = rtm->rtm_tos;
	m.key.table = rtm->rtm_table;
	if (!attr_u32(tb[RTA_TABLE], &v))
		m.key.table = v;
	if (!attr_u32(tb[RTA_PRIORITY], &v))
		m.key.priority = v;
	if (tb[RTA_DST])
		memcpy(m.key.dst, mnl_attr_get_payload(tb[RTA_DST]), alen);
	/* A source-specific route is a route of its own beside the
	 * destination's plain ones (the kernel's source subtree). */
	m.key.src_plen = rtm->rtm_src_len;
	if (tb[RTA_SRC] && rtm->rtm_src_len)
		memcpy(m.key.src, mnl_attr_get_payload(tb[RTA_SRC]), alen);
	m.type = rtm->rtm_type;
	m.paths = 1;
	if (!attr_u32(tb[RTA_OIF], &v))
		m.oif = v;
	if (!parse_gateway(tb[RTA_GATEWAY], tb[RTA_VIA], rtm->rtm_family,
			   &m.gw_family, m.gw))
		m.unsupported = true;
	if (tb[RTA_ENCAP])
		m.unsupported = true; /* lightweight tunnels: the kernel's */
	if (tb[RTA_METRICS]) {
		const struct nlattr *mt[RTAX_MAX + 1];
		struct nl_parse_err err;

		/* Checked by the policy before: this parse cannot fail. */
		if (!nl_attrs_parse(mnl_attr_get_payload(tb[RTA_METRICS]),
				    mnl_attr_get_payload_len(tb[RTA_METRICS]),
				    &nl_metrics_attrs, rtm->rtm_family, mt, &err) &&
		    !attr_u32(mt[RTAX_MTU], &v))
			m.mtu = v;
	}
	if (rtm->rtm_family == AF_INET)
		m.ident = route_ident(rtm, tb);
	parse_expires(tb, &m);
	/* By nexthop object: RTA_NH_ID rules; what compat mode adds
	 * (RTA_GATEWAY, RTA_MULTIPATH expanded from the object) is ignored. */
	if (!attr_u32(tb[RTA_NH_ID], &v)) {
		m.nhid = v;
	} else if (tb[RTA_MULTIPATH]) {
		__u16 i;

		parse_multipath(tb[RTA_MULTIPATH], rtm->rtm_family, &m);
		for (i = 0; i < m.npath; i++)
			m.path[i].key.mtu = m.mtu > 0xffff ? 0xffff : m.mtu;
	}

	if (nlh->nlmsg_type == RTM_DELROUTE)
		rib_route_del(nl->rib, &m);
	else
		rib_route_set(nl->rib, &m, route_op(nl, nlh));
}

/* ---- nexthop objects ------------------------------------------------------ */

/* NHA_GROUP, a whole array of members (checked by the policy). */
static void parse_nexthop_group(const struct nlattr **tb,
				struct rib_nhobj_msg *m)
{
	const struct nexthop_grp *g = mnl_attr_get_payload(tb[NHA_GROUP]);
	size_t i, n = mnl_attr_get_payload_len(tb[NHA_GROUP]) / sizeof(*g);
	__u16 type = NEXTHOP_GRP_TYPE_MPATH;

	if (tb[NHA_GROUP_TYPE])
		type = mnl_attr_get_u16(tb[NHA_GROUP_TYPE]);
	m->is_group = true;
	if (type != NEXTHOP_GRP_TYPE_MPATH || n > XFIB_GROUP_MEMBERS) {
		/* Resilient groups keep their own bucket table, which xfib
		 * does not reproduce: the kernel's. */
		m->is_group = false;
		m->path.key.kind = XFIB_NH_UNSUPPORTED;
		return;
	}
	for (i = 0; i < n; i++) {
		m->grp[i].id = g[i].id;
		m->grp[i].weight = ((__u32)g[i].weight_high << 8 | g[i].weight) + 1;
	}
	m->ngrp = n;
}

static void parse_nexthop(struct nl *nl, const struct nlmsghdr *nlh,
			  const struct nlattr **tb)
{
	const struct nhmsg *nhm = mnl_nlmsg_get_payload(nlh);
	struct rib_nhobj_msg m = { 0 };
	struct rib_path *p = &m.path;
	__u8 gw_family = 0;
	__u32 v;

	m.id = mnl_attr_get_u32(tb[NHA_ID]); /* the policy requires it */
	if (nlh->nlmsg_type == RTM_DELNEXTHOP) {
		rib_nhobj_del(nl->rib, m.id);
		return;
	}
	p->weight = 1;
	if (tb[NHA_GROUP]) {
		parse_nexthop_group(tb, &m);
	} else if (tb[NHA_BLACKHOLE]) {
		p->key.kind = XFIB_NH_BLACKHOLE;
	} else if (tb[NHA_ENCAP] || tb[NHA_FDB] || attr_u32(tb[NHA_OIF], &v) ||
		   (nhm->nh_flags & RTNH_F_DEAD)) {
		p->key.kind = XFIB_NH_UNSUPPORTED;
	} else {
		parse_gateway(tb[NHA_GATEWAY], NULL, nhm->nh_family, &gw_family,
			      p->key.gw);
		p->key.kind = gw_family ? XFIB_NH_GATEWAY : XFIB_NH_CONNECTED;
		p->key.family = gw_family ? gw_family : nhm->nh_family;
		p->key.ifindex = v;
	}
	rib_nhobj_set(nl->rib, &m);
}

/* ---- policy rules --------------------------------------------------------- */

/* 1 if the rule sends every packet to one table, whatever else it holds. */
static bool rule_is_plain_lookup(const struct nlmsghdr *nlh,
				 const struct nlattr **tb, __u32 *table)
{
	const struct fib_rule_hdr *frh = mnl_nlmsg_get_payload(nlh);
	unsigned int type;
	__u32 v;

	if (frh->action != FR_ACT_TO_TBL || frh->dst_len || frh->src_len ||
	    frh->tos || (frh->flags & FIB_RULE_INVERT))
		return false;
	for (type = 1; type <= FRA_MAX; type++) {
		if (!tb[type])
			continue;
		switch (type) {
		case FRA_PRIORITY:
		case FRA_TABLE:
		case FRA_PROTOCOL:
			break;
		case FRA_SUPPRESS_PREFIXLEN:
		case FRA_SUPPRESS_IFGROUP:
			/* Present with -1 ("off") in every dump. */
			if (attr_u32(tb[type], &v) || v != 0xffffffff)
				return false;
			break;
		default:
			/* Any selector (iif, oif, fwmark, uid, ports, ...) or
			 * action argument: not one table for everything. */
			return false;
		}
	}
	*table = frh->table;
	if (!attr_u32(tb[FRA_TABLE], &v))
		*table = v;
	return true;
}

/*
 * The mirror answers like the kernel only if the kernel's rules are: first
 * "lookup local", then "lookup <our table>", for every packet. What follows
 * does not matter: whatever our table does not match goes to the kernel,
 * which then walks the rest of the rules itself. tb NULL: a malformed
 * rule, which cannot be one of those two.
 */
static void parse_rule_dumped(struct nl *nl, const struct nlmsghdr *nlh,
			      const struct nlattr **tb)
{
	__u32 table, want;

	if (nl->rule_idx >= 2) {
		nl->rule_idx++;
		return;
	}
	want = nl->rule_idx == 0 ? RT_TABLE_LOCAL : nl->rib->table;
	if (!tb || !rule_is_plain_lookup(nlh, tb, &table) || table != want)
		nl->rules_ok = false;
	nl->rule_idx++;
}

/* ---- dispatch ------------------------------------------------------------ */

/*
 * A message that breaks the policy is dropped whole, counted (shown by
 * xfibctl status) and logged: the first at once, then at most one line
 * per NL_PARSE_LOG_MS, saying how many went unlogged, so a kernel that
 * sends them by the thousand cannot flood the log.
 */
static void nl_parse_failed(struct nl *nl, const struct nl_msg_policy *p,
			    const struct nlmsghdr *nlh,
			    const struct nl_parse_err *err)
{
	__u64 now = mono_ms();
	char where[48] = "family header";

	nl->parse_errors++;
	if (nl->parse_logged_ms && now - nl->parse_logged_ms < NL_PARSE_LOG_MS) {
		nl->parse_unlogged++;
		return;
	}
	if (err->attr >= 0 && err->nested >= 0)
		snprintf(where, sizeof(where), "attribute %d, nested %d",
			 err->attr, err->nested);
	else if (err->attr >= 0)
		snprintf(where, sizeof(where), "attribute %d", err->attr);
	pr_warn("netlink: malformed %s message (type %u, %u bytes): %s: %s; dropped (%llu malformed, %llu not logged)",
		p->name, nlh->nlmsg_type, nlh->nlmsg_len, where, err->why,
		(unsigned long long)nl->parse_errors,
		(unsigned long long)nl->parse_unlogged);
	nl->parse_logged_ms = now;
	nl->parse_unlogged = 0;
}

/* Every message read, from dumps and notifications, goes through here. */
static int nl_msg_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[NL_TB_SIZE];
	const struct nl_msg_policy *p;
	struct nl_parse_err err;
	struct nl *nl = data;
	int ret;

	if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
		nl->dump_intr = true;
	p = nl_policy_of(nlh->nlmsg_type);
	if (!p)
		return MNL_CB_OK;
	if ((nlh->nlmsg_type == RTM_NEWRULE || nlh->nlmsg_type == RTM_DELRULE) &&
	    !nl->in_rule_dump) {
		/* Rules are judged by a dump of all of them (nl_check_rules). */
		nl->rib->rules_changed = true;
		return MNL_CB_OK;
	}
	ret = nl_msg_parse(nlh, p, tb, &err);
	if (ret < 0) {
		nl_parse_failed(nl, p, nlh, &err);
		if (nl->in_rule_dump)
			parse_rule_dumped(nl, nlh, NULL);
		return MNL_CB_OK;
	}
	if (!ret)
		return MNL_CB_OK; /* not a message xfib mirrors */

	switch (nlh->nlmsg_type) {
	case RTM_NEWLINK:
	case RTM_DELLINK:
		parse_link(nl, nlh, tb);
		break;
	case RTM_NEWADDR:
	case RTM_DELADDR:
		parse_addr(nl, nlh, tb);
		break;
	case RTM_NEWNETCONF:
	case RTM_DELNETCONF:
		parse_netconf(nl, nlh, tb);
		break;
	case RTM_NEWNEIGH:
	case RTM_DELNEIGH:
		parse_neigh(nl, nlh, tb);
		break;
	case RTM_NEWROUTE:
	case RTM_DELROUTE:
		parse_route(nl, nlh, tb);
		break;
	case RTM_NEWNEXTHOP:
	case RTM_DELNEXTHOP:
		parse_nexthop(nl, nlh, tb);
		break;
	case RTM_NEWRULE:
	case RTM_DELRULE:
		parse_rule_dumped(nl, nlh, tb);
		break;
	default:
		break;
	}
	return MNL_CB_OK;
}

void nl_init_offline(struct nl *nl, struct rib *rib)
{
	memset(nl, 0, sizeof(*nl));
	nl->rib = rib;
}

void nl_feed(struct nl *nl, const void *buf, size_t len)
{
	const struct nlmsghdr *nlh = buf;
	size_t step;

	/* One message at a time, so that a DONE or an error in the stream
	 * does not end it; each is checked and dispatched as a received
	 * notification is. (Not mnl_nlmsg_ok(): it takes a length of 2^31
	 * or more for a negative one, and accepts it.) */
	while (len >= sizeof(*nlh) && nlh->nlmsg_len >= sizeof(*nlh) &&
	       nlh->nlmsg_len <= len) {
		mnl_cb_run(nlh, nlh->nlmsg_len, 0, 0, nl_msg_cb, nl);
		step = NLMSG_ALIGN(nlh->nlmsg_len);
		if (step >= len)
			break;
		len -= step;
		nlh = (const void *)((const char *)nlh + step);
	}
}

/* ---- dumps --------------------------------------------------------------- */

/*
 * The parts are read on a second thread (nl_reader.c) and parsed here,
 * in order, into the RIB, which only this thread touches. After the
 * first error the rest of the dump is still read, unparsed: nothing of
 * it is left on the socket to derail the next dump.
 */
/*
 * A dump's buffer holds a few hundred routes: start loading the hash
 * buckets that will find them before the first is parsed, so that their
 * cache misses overlap instead of coming one per route.
 */
static void dump_prefetch_routes(struct nl *nl, const void *buf, int len)
{
	const struct nlmsghdr *nlh = buf;

	for (; mnl_nlmsg_ok(nlh, len); nlh = mnl_nlmsg_next(nlh, &len)) {
		const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);
		const struct nlattr *a;
		struct rib_route_key k;

		if (nlh->nlmsg_type != RTM_NEWROUTE ||
		    nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*rtm)))
			continue;
		memset(&k, 0, sizeof(k));
		k.family = rtm->rtm_family;
		k.plen = rtm->rtm_dst_len;
		k.table = rtm->rtm_table;
		mnl_attr_for_each(a, nlh, sizeof(*rtm)) {
			size_t n = mnl_attr_get_payload_len(a);

			if (mnl_attr_get_type(a) == RTA_DST && n <= sizeof(k.dst))
				memcpy(k.dst, mnl_attr_get_payload(a), n);
			else if (mnl_attr_get_type(a) == RTA_TABLE && n == 4)
				k.table = mnl_attr_get_u32(a);
		}
		rib_route_prefetch(nl->rib, &k);
	}
}

static int nl_dump(struct nl *nl, int type, int family, size_t hdrlen)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(nl->buf);
	unsigned int seq = ++nl->seq;
	int ret = MNL_CB_OK, err = 0;
	struct nl_part *p;
	void *hdr;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = seq;
	/* Strict checking wants the family header present and zeroed. */
	hdr = mnl_nlmsg_put_extra_header(nlh, hdrlen);
	*(__u8 *)hdr = family;
	if (mnl_socket_sendto(nl->req, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	nl_reader_start(nl->reader, nl->req, seq);
	nl->dumping = true;
	while ((p = nl_reader_next(nl->reader))) {
		if (ret > MNL_CB_STOP && p->len < 0) {
			ret = MNL_CB_ERROR;
			err = p->len;
		} else if (ret > MNL_CB_STOP) {
			/* Noted for nl_dump_all() to dump again. */
			if (p->intr)
				nl->dump_intr = true;
			if (type == RTM_GETROUTE)
				dump_prefetch_routes(nl, p->buf, p->len);
			ret = mnl_cb_run(p->buf, p->len, seq, nl->req_portid,
					 nl_msg_cb, nl);
			if (ret < 0)
				err = -errno;
		}
		nl_reader_release(nl->reader);
	}
	nl_reader_join(nl->reader);
	nl->dumping = false;
	return ret < 0 ? err : 0;
}

static int nl_dump_rules(struct nl *nl, int family, bool *ok)
{
	int err;

	nl->in_rule_dump = true;
	nl->rule_idx = 0;
	nl->rules_ok = true;
	err = nl_dump(nl, RTM_GETRULE, family, sizeof(struct fib_rule_hdr));
	nl->in_rule_dump = false;
	*ok = nl->rules_ok && nl->rule_idx >= 2;
	return err;
}

int nl_check_rules(struct nl *nl)
{
	static const int families[XFIB_FAMILIES] = { AF_INET, AF_INET6 };
	int fam, err;

	nl->rib->rules_changed = false;
	for (fam = 0; fam < XFIB_FAMILIES; fam++) {
		struct rib_family_state *f = &nl->rib->fam[fam];
		bool ok;

		err = nl_dump_rules(nl, families[fam], &ok);
		if (err) {
			nl->rib->rules_changed = true;
			return err;
		}
		if (ok != f->rules_ok) {
			if (!ok)
				pr_warn("%s: policy rules other than \"lookup local\" then \"lookup %u\" come first: this traffic goes to the kernel",
					fam == XFIB_V4 ? "ipv4" : "ipv6",
					nl->rib->table);
			else
				pr_info("%s: policy rules allow the fast path again",
					fam == XFIB_V4 ? "ipv4" : "ipv6");
			f->rules_ok = ok;
			f->dirty = true;
		}
	}
	return 0;
}

/*
 * Notifications queued before a dump describe changes the dump shows
 * anyway; replayed after it, some would be applied to a state that has
 * moved on (a route replacing "the first of its key" when that one is
 * gone since). Discarded, they cannot. What arrives during the dump is
 * still read and applied after it.
 * Emptying the queue also re-arms overrun reports: after one, the kernel
 * drops every notification without reporting ENOBUFS again until the
 * receive queue has been emptied. A resync that dumped with notifications
 * still queued lost those sent meanwhile without a word (test_scale:
 * IPv6 routes added during a long resync never reached the mirror).
 */
static void nl_drain_events(struct nl *nl)
{
	ssize_t n;

	do
		n = mnl_socket_recvfrom(nl->ev, nl->buf, NL_BUF_SIZE);
	while (n > 0 || (n < 0 && (errno == EINTR || errno == ENOBUFS)));
}

int nl_dump_all(struct nl *nl)
{
	__u64 t0 = mono_ms();
	int tries, err = 0;

	nl_drain_events(nl);
	for (tries = 0; tries < NL_DUMP_TRIES; tries++) {
		/* Each try starts over: what a retry does not see goes, and
		 * routes of one key take the order it gives. */
		rib_mark_stale(nl->rib);
		nl->dump_intr = false;
		/* Links first: everything else refers to them. */
		err = nl_dump(nl, RTM_GETLINK, AF_UNSPEC, sizeof(struct ifinfomsg));
		err = err ?: nl_dump(nl, RTM_GETNETCONF, AF_INET, sizeof(struct netconfmsg));
		err = err ?: nl_dump(nl, RTM_GETNETCONF, AF_INET6, sizeof(struct netconfmsg));
		err = err ?: nl_dump(nl, RTM_GETADDR, AF_UNSPEC, sizeof(struct ifaddrmsg));
		err = err ?: nl_dump(nl, RTM_GETNEIGH, AF_UNSPEC, sizeof(struct ndmsg));
		/* Nexthop objects before the routes that use them. */
		err = err ?: nl_dump(nl, RTM_GETNEXTHOP, AF_UNSPEC, sizeof(struct nhmsg));
		err = err ?: nl_dump(nl, RTM_GETROUTE, AF_INET, sizeof(struct rtmsg));
		err = err ?: nl_dump(nl, RTM_GETROUTE, AF_INET6, sizeof(struct rtmsg));
		err = err ?: nl_check_rules(nl);
		if (err)
			return err;
		if (!nl->dump_intr) {
			pr_debug("netlink dumps read in %llu ms",
				 (unsigned long long)(mono_ms() - t0));
			return 0;
		}
		/* The kernel changed its tables while dumping them: what we
		 * read may be inconsistent. Read everything again. */
		pr_info("netlink dump interrupted by a change, retrying");
	}
	pr_warn("netlink dumps kept being interrupted; using the last one");
	return 0;
}

int nl_read_events(struct nl *nl)
{
	ssize_t n;

	for (;;) {
		n = mnl_socket_recvfrom(nl->ev, nl->buf, NL_BUF_SIZE);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS) {
				nl->overruns++;
				return -ENOBUFS;
			}
			return -errno;
		}
		/* Notifications carry seq 0 and the kernel's port id 0. */
		mnl_cb_run(nl->buf, n, 0, 0, nl_msg_cb, nl);
	}
}

static int nl_neigh_use_one(struct nl *nl, const struct nl_neigh_ref *r)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(nl->buf);
	unsigned int seq = ++nl->seq;
	struct ndmsg *ndm;
	ssize_t n;

	nlh->nlmsg_type = RTM_NEWNEIGH;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = seq;
	ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));
	ndm->ndm_family = r->family;
	ndm->ndm_ifindex = r->ifindex;
	ndm->ndm_flags = NTF_USE;
	mnl_attr_put(nlh, NDA_DST, r->family == AF_INET ? 4 : 16, r->addr);
	if (mnl_socket_sendto(nl->req, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	/* Read the acknowledgement here: a reply left on the socket would
	 * derail the next dump. */
	n = mnl_socket_recvfrom(nl->req, nl->buf, NL_BUF_SIZE);
	if (n < 0)
		return -errno;
	return mnl_cb_run(nl->buf, n, seq, nl->req_portid, NULL, NULL) < 0 ?
		       -errno : 0;
}

void nl_neigh_use(struct nl *nl, bool (*used)(void *ctx, int ifindex), void *ctx)
{
	size_t i;
	int err;

	for (i = 0; i < nl->nstale; i++) {
		if (!used(ctx, nl->stale[i].ifindex))
			continue;
		/* ENOENT: gone meanwhile, and its removal is on its way. */
		err = nl_neigh_use_one(nl, &nl->stale[i]);
		if (err && err != -ENOENT)
			pr_debug("neighbour on ifindex %d: NTF_USE: %s",
				 nl->stale[i].ifindex, strerror(-err));
	}
	nl->nstale = 0;
}

static int nl_link_refresh_one(struct nl *nl, int ifindex)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(nl->buf);
	unsigned int seq = ++nl->seq;
	struct ifinfomsg *ifi;
	ssize_t n;
	int ret;

	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	nlh->nlmsg_seq = seq;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	if (mnl_socket_sendto(nl->req, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	/* The reply (or the error) is read here, as NTF_USE's is. */
	n = mnl_socket_recvfrom(nl->req, nl->buf, NL_BUF_SIZE);
	if (n < 0)
		return -errno;
	ret = mnl_cb_run(nl->buf, n, seq, nl->req_portid, nl_msg_cb, nl);
	return ret < 0 ? -errno : 0;
}

void nl_link_refresh(struct nl *nl)
{
	size_t i;
	int err;

	for (i = 0; i < nl->nrefresh; i++) {
		/* ENODEV: gone meanwhile, and its RTM_DELLINK is on its way. */
		err = nl_link_refresh_one(nl, nl->refresh[i]);
		if (err && err != -ENODEV)
			pr_debug("ifindex %d: reading the link: %s",
				 nl->refresh[i], strerror(-err));
	}
	nl->nrefresh = 0;
}

/* ---- sockets ------------------------------------------------------------- */

static const unsigned int nl_groups[] = {
	RTNLGRP_LINK,        RTNLGRP_NEIGH,       RTNLGRP_IPV4_IFADDR,
	RTNLGRP_IPV6_IFADDR, RTNLGRP_IPV4_ROUTE,  RTNLGRP_IPV6_ROUTE,
	RTNLGRP_IPV4_NETCONF, RTNLGRP_IPV6_NETCONF, RTNLGRP_IPV4_RULE,
	RTNLGRP_IPV6_RULE,   RTNLGRP_NEXTHOP,     RTNLGRP_IPV6_IFINFO,
};

int nl_open(struct nl *nl, struct rib *rib, int rcvbuf)
{
	int one = 1, fd;
	size_t i;

	memset(nl, 0, sizeof(*nl));
	nl->rib = rib;
	nl->seq = time(NULL);
	nl->buf = malloc(NL_BUF_SIZE);
	nl->reader = nl_reader_new();
	nl->req = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	nl->ev = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (!nl->buf || !nl->reader || !nl->req || !nl->ev)
		goto err;
	if (mnl_socket_bind(nl->req, 0, MNL_SOCKET_AUTOPID) < 0 ||
	    mnl_socket_bind(nl->ev, 0, MNL_SOCKET_AUTOPID) < 0)
		goto err;
	nl->req_portid = mnl_socket_get_portid(nl->req);
	/* Best effort: older kernels lack them, and dumps work without. */
	mnl_socket_setsockopt(nl->req, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(nl->req, NETLINK_GET_STRICT_CHK, &one, sizeof(one));

	/* A full-table load floods notifications: a large buffer avoids most
	 * overruns, and a resync repairs the rest. Never NETLINK_NO_ENOBUFS. */
	fd = mnl_socket_get_fd(nl->ev);
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	for (i = 0; i < sizeof(nl_groups) / sizeof(nl_groups[0]); i++) {
		if (mnl_socket_setsockopt(nl->ev, NETLINK_ADD_MEMBERSHIP,
					  (void *)&nl_groups[i], sizeof(int)) < 0)
			goto err;
	}
	return 0;
err:
	i = errno;
	nl_close(nl);
	return -(int)i;
}

void nl_close(struct nl *nl)
{
	if (nl->req)
		mnl_socket_close(nl->req);
	if (nl->ev)
		mnl_socket_close(nl->ev);
	nl_reader_free(nl->reader);
	free(nl->buf);
	free(nl->stale);
	free(nl->refresh);
	memset(nl, 0, sizeof(*nl));
}

int nl_event_fd(const struct nl *nl)
{
	return mnl_socket_get_fd(nl->ev);
}
