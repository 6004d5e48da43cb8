// SPDX-License-Identifier: GPL-2.0-only
/*
 * The messages about routes: routes with their paths, gateways and
 * lifetimes, what tells IPv4 routes of one key apart, and nexthop
 * objects. Each handler turns one checked message (nl_priv.h) into RIB
 * calls.
 */
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>
#include <libmnl/libmnl.h>

#include "fnv.h"
#include "netlink.h"
#include "nl_policy.h"
#include "nl_priv.h"
#include "rib/rib.h"


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
		if (!m->paths++)
			m->first_oif = rtnh->rtnh_ifindex;
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

void parse_route(struct nl *nl, const struct nlmsghdr *nlh,
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

void parse_nexthop(struct nl *nl, const struct nlmsghdr *nlh,
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
