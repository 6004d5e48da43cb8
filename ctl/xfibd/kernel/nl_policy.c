// SPDX-License-Identifier: GPL-2.0-only
/*
 * The netlink attribute policy: one table per kind of payload, indexed by
 * attribute type, as BIRD's netlink code keeps them. Each attribute a
 * handler reads has its type (libmnl's: U16, U32, FLAG, NUL_STRING,
 * NESTED, BINARY), a size where one is fixed (NL_ALEN: an address of the
 * message's family, 4 or 16 bytes), a least size for structures, and a
 * check of its own structure where it has one (the paths of
 * RTA_MULTIPATH, the members of NHA_GROUP, RTA_VIA, nested metrics).
 * Attribute types past the table (newer than these headers) are skipped,
 * as the kernel adds attributes freely; a malformed attribute makes the
 * whole message malformed, so no handler sees half of one.
 *
 * The kernel sends no malformed messages, so the namespace tests check the
 * other side: a test whose xfibd dropped one fails (tests/lib/netns.sh),
 * which catches a policy stricter than the kernel. Malformed input comes
 * from the netlink fuzzer, which feeds recorded kernel messages, mutated,
 * through nl_msg_cb (the one dispatch point): the recorded corpus as it is
 * must leave nl->parse_errors at 0, and mutated messages must be counted
 * there or handled, never crash or read past an attribute (ASan/UBSan).
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>

#include "nl_policy.h"

/* An exact payload length that depends on the message's family. */
#define NL_ALEN 0xffff

struct nl_attr_policy {
	/* MNL_TYPE_UNSPEC: not read, kept for its presence only. */
	enum mnl_attr_data_type type;
	__u16 len; /* MNL_TYPE_BINARY: exact payload length, 0: any */
	__u16 min; /* MNL_TYPE_BINARY: least payload length */
	bool need; /* a message without it is malformed */
	/* The payload's own structure: 0, or -EINVAL with err filled. */
	int (*check)(const struct nlattr *a, int family,
		     struct nl_parse_err *err);
};

struct nl_attr_set {
	const struct nl_attr_policy *attr;
	unsigned int maxtype;
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define SET(pol) { pol, ARRAY_SIZE(pol) - 1 }

#define U16 { .type = MNL_TYPE_U16 }
#define U32 { .type = MNL_TYPE_U32 }
#define FLAG { .type = MNL_TYPE_FLAG }
#define STRING { .type = MNL_TYPE_NUL_STRING }
#define NESTED { .type = MNL_TYPE_NESTED }
#define BYTES { .type = MNL_TYPE_BINARY }
#define ADDR { .type = MNL_TYPE_BINARY, .len = NL_ALEN }
#define AT_LEAST(n) { .type = MNL_TYPE_BINARY, .min = (n) }

static int fail(struct nl_parse_err *err, int nested, const char *why)
{
	err->nested = nested;
	err->why = why;
	return -EINVAL;
}

static size_t family_alen(int family)
{
	return family == AF_INET ? 4 : family == AF_INET6 ? 16 : 0;
}

/* ---- structured payloads ------------------------------------------------- */

/* struct rtvia: an address family, then an address of that family. */
static int via_check(const struct nlattr *a, int family,
		     struct nl_parse_err *err)
{
	const struct rtvia *v = mnl_attr_get_payload(a);
	size_t want = family_alen(v->rtvia_family);

	(void)family;
	if (want && mnl_attr_get_payload_len(a) - sizeof(*v) != want)
		return fail(err, -1, "gateway address of the wrong length");
	return 0;
}

static const struct nl_attr_policy metrics_policy[RTAX_MAX + 1] = {
	[RTAX_MTU] = U32,
};

const struct nl_attr_set nl_metrics_attrs = SET(metrics_policy);

static int nested_check(const struct nlattr *a, int family,
			const struct nl_attr_set *set, struct nl_parse_err *err)
{
	const struct nlattr *tb[NL_TB_SIZE];
	struct nl_parse_err e;

	if (nl_attrs_parse(mnl_attr_get_payload(a), mnl_attr_get_payload_len(a),
			   set, family, tb, &e))
		return fail(err, e.attr, e.why);
	return 0;
}

static int metrics_check(const struct nlattr *a, int family,
			 struct nl_parse_err *err)
{
	return nested_check(a, family, &nl_metrics_attrs, err);
}

/* A path of RTA_MULTIPATH: a struct rtnexthop, then its attributes. */
static const struct nl_attr_policy path_policy[RTA_MAX + 1] = {
	[RTA_GATEWAY] = ADDR,
	[RTA_VIA] = { .type = MNL_TYPE_BINARY, .min = sizeof(struct rtvia),
		      .check = via_check },
	[RTA_ENCAP] = NESTED,
	[RTA_ENCAP_TYPE] = U16,
};

const struct nl_attr_set nl_path_attrs = SET(path_policy);

_Static_assert(RTAX_MAX < NL_TB_SIZE && RTA_MAX < NL_TB_SIZE,
	       "nested attribute tables fit NL_TB_SIZE");

/* Paths end where the attribute ends, each within it, each at least its
 * header; a path's length is 4-aligned, so no gap is left between them. */
static int multipath_check(const struct nlattr *a, int family,
			   struct nl_parse_err *err)
{
	const struct rtnexthop *rtnh = mnl_attr_get_payload(a);
	int left = mnl_attr_get_payload_len(a);
	const struct nlattr *tb[NL_TB_SIZE];
	struct nl_parse_err e;

	while (left > 0) {
		if (left < (int)sizeof(*rtnh) || rtnh->rtnh_len < sizeof(*rtnh) ||
		    rtnh->rtnh_len > left)
			return fail(err, -1, "a path overruns the attribute");
		if (nl_attrs_parse(RTNH_DATA(rtnh), rtnh->rtnh_len - sizeof(*rtnh),
				   &nl_path_attrs, family, tb, &e))
			return fail(err, e.attr, e.why);
		left -= RTNH_ALIGN(rtnh->rtnh_len);
		rtnh = (const void *)((const char *)rtnh + RTNH_ALIGN(rtnh->rtnh_len));
	}
	return 0;
}

/* NHA_GROUP: a non-empty array of struct nexthop_grp. */
static int group_check(const struct nlattr *a, int family,
		       struct nl_parse_err *err)
{
	size_t len = mnl_attr_get_payload_len(a);

	(void)family;
	if (!len || len % sizeof(struct nexthop_grp))
		return fail(err, -1, "not an array of group members");
	return 0;
}

/*
 * IFLA_LINKINFO: the device's kind and its settings (IFLA_INFO_DATA: a
 * bridge's), and as a port of another device, that one's kind and the
 * port's settings (IFLA_INFO_SLAVE_DATA: a bridge port's). What xfibd
 * reads of them: a bridge's VLAN filtering and ageing time, a bridge
 * port's STP state.
 */
static const struct nl_attr_policy br_policy[IFLA_BR_MAX + 1] = {
	[IFLA_BR_AGEING_TIME] = U32,
	[IFLA_BR_VLAN_FILTERING] = { .type = MNL_TYPE_U8 },
};

static const struct nl_attr_policy brport_policy[IFLA_BRPORT_MAX + 1] = {
	[IFLA_BRPORT_STATE] = { .type = MNL_TYPE_U8 },
};

const struct nl_attr_set nl_br_attrs = SET(br_policy);
const struct nl_attr_set nl_brport_attrs = SET(brport_policy);

static const struct nl_attr_policy linkinfo_policy[IFLA_INFO_MAX + 1] = {
	[IFLA_INFO_KIND] = STRING,
	[IFLA_INFO_DATA] = NESTED,
	[IFLA_INFO_SLAVE_KIND] = STRING,
	[IFLA_INFO_SLAVE_DATA] = NESTED,
};

const struct nl_attr_set nl_linkinfo_attrs = SET(linkinfo_policy);

_Static_assert(IFLA_BR_MAX < NL_TB_SIZE && IFLA_BRPORT_MAX < NL_TB_SIZE &&
	       IFLA_INFO_MAX < NL_TB_SIZE,
	       "bridge attribute tables fit NL_TB_SIZE");

/* A bridge's data and a bridge port's are checked; other kinds' are not
 * read. */
static int linkinfo_check(const struct nlattr *a, int family,
			  struct nl_parse_err *err)
{
	const struct nlattr *tb[NL_TB_SIZE];
	struct nl_parse_err e;

	if (nl_attrs_parse(mnl_attr_get_payload(a), mnl_attr_get_payload_len(a),
			   &nl_linkinfo_attrs, family, tb, &e))
		return fail(err, e.attr, e.why);
	if (tb[IFLA_INFO_KIND] && tb[IFLA_INFO_DATA] &&
	    !strcmp(mnl_attr_get_str(tb[IFLA_INFO_KIND]), "bridge") &&
	    nested_check(tb[IFLA_INFO_DATA], family, &nl_br_attrs, err))
		return -EINVAL;
	if (tb[IFLA_INFO_SLAVE_KIND] && tb[IFLA_INFO_SLAVE_DATA] &&
	    !strcmp(mnl_attr_get_str(tb[IFLA_INFO_SLAVE_KIND]), "bridge") &&
	    nested_check(tb[IFLA_INFO_SLAVE_DATA], family, &nl_brport_attrs, err))
		return -EINVAL;
	return 0;
}

/* ---- the tables ------------------------------------------------------------ */

static const struct nl_attr_policy link_policy[IFLA_MAX + 1] = {
	[IFLA_IFNAME] = STRING,
	[IFLA_ADDRESS] = BYTES, /* 6 on Ethernet, other sizes elsewhere */
	[IFLA_MTU] = U32,
	[IFLA_GROUP] = U32,
	[IFLA_MASTER] = U32,
	/* AF_INET6: IFLA_INET6_*; AF_BRIDGE: IFLA_BRPORT_* */
	[IFLA_PROTINFO] = NESTED,
	[IFLA_AF_SPEC] = NESTED,  /* a nest per address family */
	[IFLA_LINKINFO] = { .type = MNL_TYPE_NESTED, .check = linkinfo_check },
};

static const struct nl_attr_policy addr_policy[IFA_MAX + 1] = {
	[IFA_LOCAL] = ADDR,
	[IFA_ADDRESS] = ADDR,
};

static const struct nl_attr_policy netconf_policy[NETCONFA_MAX + 1] = {
	[NETCONFA_IFINDEX] = { .type = MNL_TYPE_U32, .need = true },
	[NETCONFA_FORWARDING] = U32,
	[NETCONFA_RP_FILTER] = U32,
};

static const struct nl_attr_policy neigh_policy[NDA_MAX + 1] = {
	[NDA_DST] = { .type = MNL_TYPE_BINARY, .len = NL_ALEN, .need = true },
	[NDA_LLADDR] = BYTES, /* the device's address length, maybe 0 */
};

/* A bridge's forwarding database entry (AF_BRIDGE): a MAC, the bridge
 * it belongs to, its VLAN. Entries of a device's own address lists
 * (NTF_SELF) have no NDA_MASTER. */
static const struct nl_attr_policy fdb_policy[NDA_MAX + 1] = {
	[NDA_LLADDR] = { .type = MNL_TYPE_BINARY, .len = 6, .need = true },
	[NDA_MASTER] = U32,
	[NDA_VLAN] = U16,
};

/* Attributes only hashed into a route's identity (RTA_NEWDST) or only
 * tested for presence are kept unchecked. */
static const struct nl_attr_policy route_policy[RTA_MAX + 1] = {
	[RTA_DST] = ADDR,
	[RTA_SRC] = ADDR,
	[RTA_GATEWAY] = ADDR,
	[RTA_VIA] = { .type = MNL_TYPE_BINARY, .min = sizeof(struct rtvia),
		      .check = via_check },
	[RTA_PREFSRC] = ADDR,
	[RTA_OIF] = U32,
	[RTA_TABLE] = U32,
	[RTA_PRIORITY] = U32,
	[RTA_FLOW] = U32,
	[RTA_NH_ID] = U32,
	[RTA_EXPIRES] = U32,
	[RTA_CACHEINFO] = AT_LEAST(sizeof(struct rta_cacheinfo)),
	[RTA_METRICS] = { .type = MNL_TYPE_NESTED, .check = metrics_check },
	[RTA_MULTIPATH] = { .type = MNL_TYPE_BINARY, .check = multipath_check },
	[RTA_ENCAP] = NESTED,
	[RTA_ENCAP_TYPE] = U16,
};

static const struct nl_attr_policy nexthop_policy[NHA_MAX + 1] = {
	[NHA_ID] = { .type = MNL_TYPE_U32, .need = true },
	[NHA_GROUP] = { .type = MNL_TYPE_BINARY, .check = group_check },
	[NHA_GROUP_TYPE] = U16,
	[NHA_BLACKHOLE] = FLAG,
	[NHA_OIF] = U32,
	[NHA_GATEWAY] = ADDR,
	[NHA_ENCAP] = NESTED,
	[NHA_FDB] = FLAG,
};

/* Every attribute of a rule the kernel sends, but FRA_PAD (the
 * alignment of FRA_TUN_ID), and the old FRA_UNUSED* numbers, which are
 * kept for their presence only. */
static const struct nl_attr_policy rule_policy[FRA_MAX + 1] = {
	[FRA_DST] = ADDR,
	[FRA_SRC] = ADDR,
	[FRA_IIFNAME] = STRING,
	[FRA_GOTO] = U32,
	[FRA_PRIORITY] = U32,
	[FRA_FWMARK] = U32,
	[FRA_FLOW] = U32,
	[FRA_TUN_ID] = { .type = MNL_TYPE_U64 },
	[FRA_SUPPRESS_IFGROUP] = U32,
	[FRA_SUPPRESS_PREFIXLEN] = U32,
	[FRA_TABLE] = U32,
	[FRA_FWMASK] = U32,
	[FRA_OIFNAME] = STRING,
	[FRA_L3MDEV] = { .type = MNL_TYPE_U8 },
	[FRA_UID_RANGE] = { .type = MNL_TYPE_BINARY,
			    .len = sizeof(struct fib_rule_uid_range) },
	[FRA_PROTOCOL] = { .type = MNL_TYPE_U8 },
	[FRA_IP_PROTO] = { .type = MNL_TYPE_U8 },
	[FRA_SPORT_RANGE] = { .type = MNL_TYPE_BINARY,
			      .len = sizeof(struct fib_rule_port_range) },
	[FRA_DPORT_RANGE] = { .type = MNL_TYPE_BINARY,
			      .len = sizeof(struct fib_rule_port_range) },
};

static const struct nl_attr_set link_attrs = SET(link_policy);
static const struct nl_attr_set addr_attrs = SET(addr_policy);
static const struct nl_attr_set netconf_attrs = SET(netconf_policy);
static const struct nl_attr_set neigh_attrs = SET(neigh_policy);
static const struct nl_attr_set fdb_attrs = SET(fdb_policy);
static const struct nl_attr_set route_attrs = SET(route_policy);
static const struct nl_attr_set nexthop_attrs = SET(nexthop_policy);
static const struct nl_attr_set rule_attrs = SET(rule_policy);

/* ---- which messages are xfib's --------------------------------------------- */

/* The device's own (AF_UNSPEC), IPv6's state of it (AF_INET6), and a
 * bridge's view of its ports (AF_BRIDGE: their STP state). */
static int link_family(const void *hdr)
{
	const struct ifinfomsg *ifi = hdr;

	if (ifi->ifi_family != AF_UNSPEC && ifi->ifi_family != AF_INET6 &&
	    ifi->ifi_family != AF_BRIDGE)
		return NL_SKIP;
	return ifi->ifi_family;
}

/* IPv6 addresses play no part in the mirror; their changes only say that
 * IPv6 may have been disabled or enabled on the device. */
static int addr_family(const void *hdr)
{
	const struct ifaddrmsg *ifa = hdr;

	if (ifa->ifa_family != AF_INET && ifa->ifa_family != AF_INET6)
		return NL_SKIP;
	return ifa->ifa_family;
}

/* Proxy entries answer for others: never a next hop. */
static int neigh_family(const void *hdr)
{
	const struct ndmsg *ndm = hdr;

	if (ndm->ndm_family != AF_INET && ndm->ndm_family != AF_INET6)
		return NL_SKIP;
	return ndm->ndm_flags & NTF_PROXY ? NL_SKIP : ndm->ndm_family;
}

/* A bridge's own entries (NTF_MASTER's view, NDA_MASTER set); not a
 * device's address lists (NTF_SELF). */
static int fdb_family(const void *hdr)
{
	const struct ndmsg *ndm = hdr;

	if (ndm->ndm_family != AF_BRIDGE || (ndm->ndm_flags & NTF_SELF))
		return NL_SKIP;
	return AF_BRIDGE;
}

/* Cached clones (PMTU exceptions, redirects) are not routes of a table. */
static int route_family(const void *hdr)
{
	const struct rtmsg *rtm = hdr;

	if (rtm->rtm_family != AF_INET && rtm->rtm_family != AF_INET6)
		return NL_SKIP;
	if (rtm->rtm_flags & RTM_F_CLONED)
		return NL_SKIP;
	if (rtm->rtm_dst_len > family_alen(rtm->rtm_family) * 8 ||
	    rtm->rtm_src_len > family_alen(rtm->rtm_family) * 8)
		return NL_BAD;
	return rtm->rtm_family;
}

/* Groups are AF_UNSPEC, and have no gateway. */
static int nexthop_family(const void *hdr)
{
	return ((const struct nhmsg *)hdr)->nh_family;
}

/* IPv4 and IPv6 rules; not those of multicast routing (RTNL_FAMILY_IPMR,
 * announced to the same groups), nor DECnet's. */
static int rule_family(const void *hdr)
{
	const struct fib_rule_hdr *frh = hdr;

	if (frh->family != AF_INET && frh->family != AF_INET6)
		return NL_SKIP;
	if (frh->src_len > family_alen(frh->family) * 8 ||
	    frh->dst_len > family_alen(frh->family) * 8)
		return NL_BAD;
	return frh->family;
}

static const struct nl_msg_policy link_msg = {
	"link", sizeof(struct ifinfomsg), &link_attrs, link_family, NULL };
static const struct nl_msg_policy addr_msg = {
	"address", sizeof(struct ifaddrmsg), &addr_attrs, addr_family, NULL };
static const struct nl_msg_policy netconf_msg = {
	"netconf", sizeof(struct netconfmsg), &netconf_attrs, NULL, NULL };
static const struct nl_msg_policy fdb_msg = {
	"bridge fdb entry", sizeof(struct ndmsg), &fdb_attrs, fdb_family, NULL };
static const struct nl_msg_policy neigh_msg = {
	"neighbour", sizeof(struct ndmsg), &neigh_attrs, neigh_family,
	&fdb_msg };
static const struct nl_msg_policy route_msg = {
	"route", sizeof(struct rtmsg), &route_attrs, route_family, NULL };
static const struct nl_msg_policy nexthop_msg = {
	"nexthop", sizeof(struct nhmsg), &nexthop_attrs, nexthop_family, NULL };
static const struct nl_msg_policy rule_msg = {
	"rule", sizeof(struct fib_rule_hdr), &rule_attrs, rule_family, NULL };

static const struct nl_msg_policy *const msg_policy[] = {
	[RTM_NEWLINK] = &link_msg,       [RTM_DELLINK] = &link_msg,
	[RTM_NEWADDR] = &addr_msg,       [RTM_DELADDR] = &addr_msg,
	[RTM_NEWNETCONF] = &netconf_msg, [RTM_DELNETCONF] = &netconf_msg,
	[RTM_NEWNEIGH] = &neigh_msg,     [RTM_DELNEIGH] = &neigh_msg,
	[RTM_NEWROUTE] = &route_msg,     [RTM_DELROUTE] = &route_msg,
	[RTM_NEWNEXTHOP] = &nexthop_msg, [RTM_DELNEXTHOP] = &nexthop_msg,
	[RTM_NEWRULE] = &rule_msg,       [RTM_DELRULE] = &rule_msg,
};

const struct nl_msg_policy *nl_policy_of(__u16 nlmsg_type)
{
	return nlmsg_type < ARRAY_SIZE(msg_policy) ? msg_policy[nlmsg_type] : NULL;
}

/* ---- the parser -------------------------------------------------------------- */

struct attr_walk {
	const struct nl_attr_set *set;
	int family;
	const struct nlattr **tb;
	const char *end; /* where the last attribute read ends */
	struct nl_parse_err *err;
};

static int attr_check(const struct nl_attr_policy *p, const struct nlattr *a,
		      int family, struct nl_parse_err *err)
{
	size_t len = p->len;

	if (p->type == MNL_TYPE_UNSPEC)
		return 0;
	if (len == NL_ALEN) {
		len = family_alen(family);
		if (!len)
			return fail(err, -1, "an address in a message of no address family");
	}
	if (p->type == MNL_TYPE_BINARY) {
		if (mnl_attr_validate2(a, p->type, len) < 0 ||
		    mnl_attr_get_payload_len(a) < p->min)
			return fail(err, -1, "wrong length");
	} else if (mnl_attr_validate(a, p->type) < 0) {
		return fail(err, -1, "wrong length or type");
	}
	return p->check ? p->check(a, family, err) : 0;
}

static int attr_cb(const struct nlattr *a, void *data)
{
	struct attr_walk *w = data;
	unsigned int type = mnl_attr_get_type(a);

	w->end = (const char *)a + MNL_ALIGN(a->nla_len);
	if (mnl_attr_type_valid(a, w->set->maxtype) < 0)
		return MNL_CB_OK; /* newer than xfib: not read */
	w->err->attr = type;
	if (attr_check(&w->set->attr[type], a, w->family, w->err))
		return MNL_CB_ERROR;
	w->tb[type] = a;
	return MNL_CB_OK;
}

int nl_attrs_parse(const void *buf, size_t len, const struct nl_attr_set *set,
		   int family, const struct nlattr **tb,
		   struct nl_parse_err *err)
{
	struct attr_walk w = { set, family, tb, buf, err };
	unsigned int type;

	memset(tb, 0, (set->maxtype + 1) * sizeof(*tb));
	err->attr = err->nested = -1;
	err->why = NULL;
	if (mnl_attr_parse_payload(buf, len, attr_cb, &w) != MNL_CB_OK)
		return -EINVAL;
	/* libmnl stops quietly at an attribute that overruns the rest. */
	if (w.end < (const char *)buf + len) {
		err->attr = -1;
		err->why = "a truncated attribute or trailing bytes";
		return -EINVAL;
	}
	for (type = 0; type <= set->maxtype; type++) {
		if (set->attr[type].need && !tb[type]) {
			err->attr = type;
			err->why = "missing";
			return -EINVAL;
		}
	}
	return 0;
}

int nl_msg_parse(const struct nlmsghdr *nlh, const struct nl_msg_policy *p,
		 const struct nlattr **tb, struct nl_parse_err *err)
{
	size_t plen = mnl_nlmsg_get_payload_len(nlh), off = MNL_ALIGN(p->hdrlen);
	const void *hdr = mnl_nlmsg_get_payload(nlh);
	int family;

	err->attr = err->nested = -1;
	if (plen < p->hdrlen) {
		err->why = "shorter than its family header";
		return -EINVAL;
	}
	/* The first byte of every family header is its family. */
	if (p->bridge && plen && *(const __u8 *)hdr == AF_BRIDGE)
		p = p->bridge;
	family = p->family ? p->family(hdr) : AF_UNSPEC;
	if (family == NL_SKIP)
		return 0;
	if (family == NL_BAD) {
		err->why = "family header out of range";
		return -EINVAL;
	}
	if (nl_attrs_parse((const char *)hdr + off, plen > off ? plen - off : 0,
			   p->attrs, family, tb, err))
		return -EINVAL;
	return 1;
}
