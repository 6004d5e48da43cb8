// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit test of xfibd's netlink attribute policy (ctl/xfibd/kernel/nl_policy.c),
 * the check every message passes before a handler reads it.
 *
 * Cases: well-formed messages of each kind are accepted with their
 * attributes in tb[] (an attribute type newer than the headers skipped);
 * each kind of malformation is refused and named (a scalar of the wrong
 * size, an address of the other family's size, a truncated attribute, a
 * short family header, a prefix length out of range, a path overrunning
 * RTA_MULTIPATH, a bad address inside a path, a bad RTA_VIA, bad nested
 * metrics, a partial NHA_GROUP member, a flag with a payload, a missing
 * required attribute, a string without its NUL); messages xfib does not
 * mirror are skipped. Then random byte flips in well-formed messages: the
 * parser never reads past the message (ASan) and every attribute it hands
 * out lies inside it.
 *
 * Usage: unit_test_nl_policy [seed].
 */
#define TESTLIB_SEED 0x6e6c706f6cull
#include "testlib.h"

#include <errno.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>

#include "kernel/nl_policy.h"

static char buf[4096];

static struct nlmsghdr *msg(__u16 type, size_t hdrlen, void **hdr)
{
	struct nlmsghdr *nlh;

	memset(buf, 0, sizeof(buf));
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = type;
	*hdr = mnl_nlmsg_put_extra_header(nlh, hdrlen);
	return nlh;
}

static int parse(const struct nlmsghdr *nlh, const struct nlattr **tb,
		 struct nl_parse_err *err)
{
	return nl_msg_parse(nlh, nl_policy_of(nlh->nlmsg_type), tb, err);
}

#define EXPECT_BAD(nlh, a, n)                                                  \
	do {                                                                   \
		const struct nlattr *tb_[NL_TB_SIZE];                          \
		struct nl_parse_err e_;                                        \
		int r_ = parse(nlh, tb_, &e_);                                 \
		CHECK(r_ == -EINVAL, "line %d: accepted (%d)", __LINE__, r_);  \
		CHECK(e_.attr == (a) && e_.nested == (n) && e_.why,            \
		      "line %d: blamed %d/%d, not %d/%d", __LINE__, e_.attr,   \
		      e_.nested, a, n);                                        \
	} while (0)

/* An IPv4 route with everything xfibd reads; extra: one more attribute. */
static struct nlmsghdr *route4(__u16 extra_type, const void *extra, size_t len)
{
	static const __u8 dst[4] = { 198, 18, 1, 0 }, gw[4] = { 198, 18, 0, 2 };
	static const __u8 via6[18] = { AF_INET6, 0, 0x20, 0x01, 0x0d, 0xb8,
				       [17] = 1 };
	struct rtmsg *rtm;
	struct nlmsghdr *nlh = msg(RTM_NEWROUTE, sizeof(*rtm), (void **)&rtm);
	struct rtnexthop *rtnh;
	struct nlattr *nest;

	rtm->rtm_family = AF_INET;
	rtm->rtm_dst_len = 24;
	mnl_attr_put(nlh, RTA_DST, 4, dst);
	mnl_attr_put_u32(nlh, RTA_TABLE, 254);
	mnl_attr_put_u32(nlh, RTA_PRIORITY, 10);
	nest = mnl_attr_nest_start(nlh, RTA_METRICS);
	mnl_attr_put_u32(nlh, RTAX_MTU, 1400);
	mnl_attr_nest_end(nlh, nest);
	nest = mnl_attr_nest_start(nlh, RTA_MULTIPATH);
	rtnh = mnl_nlmsg_get_payload_tail(nlh);
	nlh->nlmsg_len += sizeof(*rtnh);
	rtnh->rtnh_ifindex = 2;
	mnl_attr_put(nlh, RTA_GATEWAY, 4, gw);
	rtnh->rtnh_len = (char *)mnl_nlmsg_get_payload_tail(nlh) - (char *)rtnh;
	rtnh = mnl_nlmsg_get_payload_tail(nlh);
	nlh->nlmsg_len += sizeof(*rtnh);
	rtnh->rtnh_ifindex = 3;
	mnl_attr_put(nlh, RTA_VIA, sizeof(via6), via6);
	rtnh->rtnh_len = (char *)mnl_nlmsg_get_payload_tail(nlh) - (char *)rtnh;
	mnl_attr_nest_end(nlh, nest);
	mnl_attr_put_u32(nlh, RTA_MAX + 5, 7); /* newer than xfib */
	if (extra)
		mnl_attr_put(nlh, extra_type, len, extra);
	return nlh;
}

static void test_routes(void)
{
	const struct nlattr *tb[NL_TB_SIZE];
	struct nl_parse_err err;
	struct nlmsghdr *nlh;
	struct rtmsg *rtm;
	__u8 b[20] = { 0 };
	__u32 oif = 4;

	cur_test = "routes";
	nlh = route4(RTA_OIF, &oif, 4);
	CHECK(parse(nlh, tb, &err) == 1, "well-formed route refused: %d/%d %s",
	      err.attr, err.nested, err.why);
	CHECK(tb[RTA_DST] && tb[RTA_OIF] && tb[RTA_MULTIPATH] && tb[RTA_METRICS],
	      "attributes missing from tb");
	CHECK(mnl_attr_get_u32(tb[RTA_OIF]) == 4, "RTA_OIF read wrong");

	EXPECT_BAD(route4(RTA_OIF, b, 2), RTA_OIF, -1);
	EXPECT_BAD(route4(RTA_GATEWAY, b, 16), RTA_GATEWAY, -1);
	EXPECT_BAD(route4(RTA_PRIORITY, b, 8), RTA_PRIORITY, -1);
	EXPECT_BAD(route4(RTA_CACHEINFO, b, 8), RTA_CACHEINFO, -1);
	b[0] = AF_INET6; /* struct rtvia, little-endian family */
	EXPECT_BAD(route4(RTA_VIA, b, 2 + 4), RTA_VIA, -1);
	EXPECT_BAD(route4(RTA_VIA, b, 1), RTA_VIA, -1);

	/* The last attribute cut short: libmnl alone would stop quietly. */
	nlh = route4(0, NULL, 0);
	nlh->nlmsg_len -= 2;
	EXPECT_BAD(nlh, -1, -1);

	nlh = route4(0, NULL, 0);
	rtm = mnl_nlmsg_get_payload(nlh);
	rtm->rtm_dst_len = 33;
	EXPECT_BAD(nlh, -1, -1);
	nlh->nlmsg_len = NLMSG_HDRLEN + 4;
	EXPECT_BAD(nlh, -1, -1);
	nlh = route4(0, NULL, 0);
	rtm = mnl_nlmsg_get_payload(nlh);
	rtm->rtm_src_len = 33;
	EXPECT_BAD(nlh, -1, -1);
	rtm->rtm_src_len = 32;
	mnl_attr_put(nlh, RTA_SRC, 16, b); /* an IPv6-sized source on IPv4 */
	EXPECT_BAD(nlh, RTA_SRC, -1);

	nlh = route4(0, NULL, 0);
	rtm = mnl_nlmsg_get_payload(nlh);
	rtm->rtm_flags |= RTM_F_CLONED;
	CHECK(parse(nlh, tb, &err) == 0, "cloned route not skipped");
	rtm->rtm_flags = 0;
	rtm->rtm_family = 28; /* AF_MPLS */
	CHECK(parse(nlh, tb, &err) == 0, "MPLS route not skipped");
}

/* Finds attribute type in the top level of a route4() message. */
static struct nlattr *find(struct nlmsghdr *nlh, __u16 type)
{
	struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct rtmsg))
		if (mnl_attr_get_type(a) == type)
			return a;
	fail("attribute %u not found", type);
}

static void test_nested(void)
{
	struct nlmsghdr *nlh;
	struct rtnexthop *rtnh;
	struct nlattr *a;

	cur_test = "nested";
	/* A path longer than what is left of RTA_MULTIPATH. */
	nlh = route4(0, NULL, 0);
	rtnh = mnl_attr_get_payload(find(nlh, RTA_MULTIPATH));
	rtnh->rtnh_len += 8;
	EXPECT_BAD(nlh, RTA_MULTIPATH, -1);
	/* The first path's gateway 2 bytes short, path length unchanged. */
	nlh = route4(0, NULL, 0);
	rtnh = mnl_attr_get_payload(find(nlh, RTA_MULTIPATH));
	a = (struct nlattr *)RTNH_DATA(rtnh);
	a->nla_len -= 2;
	EXPECT_BAD(nlh, RTA_MULTIPATH, RTA_GATEWAY);
	/* A metric of the wrong size. */
	nlh = route4(0, NULL, 0);
	a = mnl_attr_get_payload(find(nlh, RTA_METRICS));
	a->nla_len = MNL_ATTR_HDRLEN + 2;
	EXPECT_BAD(nlh, RTA_METRICS, RTAX_MTU);
}

static void test_nexthops(void)
{
	const struct nlattr *tb[NL_TB_SIZE];
	struct nexthop_grp g[2] = { { .id = 1 }, { .id = 2 } };
	__u8 gw[4] = { 198, 18, 0, 1 };
	struct nl_parse_err err;
	struct nlmsghdr *nlh;
	struct nhmsg *nhm;

	cur_test = "nexthops";
	nlh = msg(RTM_NEWNEXTHOP, sizeof(*nhm), (void **)&nhm);
	mnl_attr_put_u32(nlh, NHA_ID, 5);
	mnl_attr_put(nlh, NHA_GROUP, sizeof(g), g);
	CHECK(parse(nlh, tb, &err) == 1 && tb[NHA_GROUP], "group refused");
	mnl_attr_put(nlh, NHA_GATEWAY, 4, gw); /* in an AF_UNSPEC message */
	EXPECT_BAD(nlh, NHA_GATEWAY, -1);

	nlh = msg(RTM_NEWNEXTHOP, sizeof(*nhm), (void **)&nhm);
	mnl_attr_put_u32(nlh, NHA_ID, 5);
	mnl_attr_put(nlh, NHA_GROUP, sizeof(g) - 4, g);
	EXPECT_BAD(nlh, NHA_GROUP, -1);

	nlh = msg(RTM_NEWNEXTHOP, sizeof(*nhm), (void **)&nhm);
	nhm->nh_family = AF_INET;
	mnl_attr_put_u32(nlh, NHA_OIF, 2);
	mnl_attr_put(nlh, NHA_GATEWAY, 4, gw);
	EXPECT_BAD(nlh, NHA_ID, -1); /* required */
	mnl_attr_put_u32(nlh, NHA_ID, 6);
	CHECK(parse(nlh, tb, &err) == 1 && tb[NHA_GATEWAY], "nexthop refused");
	mnl_attr_put_u32(nlh, NHA_BLACKHOLE, 1);
	EXPECT_BAD(nlh, NHA_BLACKHOLE, -1);
}

/* A bridge's and a bridge port's settings in IFLA_LINKINFO are checked
 * where xfibd reads them; another kind's are not. */
static void test_bridge_links(void)
{
	const struct nlattr *tb[NL_TB_SIZE];
	struct nl_parse_err err;
	struct nlattr *li, *data;
	struct ifinfomsg *ifi;
	struct nlmsghdr *nlh;
	int bad;

	for (bad = 0; bad < 2; bad++) {
		nlh = msg(RTM_NEWLINK, sizeof(*ifi), (void **)&ifi);
		li = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
		mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "bridge");
		data = mnl_attr_nest_start(nlh, IFLA_INFO_DATA);
		if (bad)
			mnl_attr_put_u32(nlh, IFLA_BR_VLAN_FILTERING, 1);
		else
			mnl_attr_put_u8(nlh, IFLA_BR_VLAN_FILTERING, 1);
		mnl_attr_put_u32(nlh, IFLA_BR_AGEING_TIME, 30000);
		mnl_attr_nest_end(nlh, data);
		mnl_attr_put_strz(nlh, IFLA_INFO_SLAVE_KIND, "bridge");
		data = mnl_attr_nest_start(nlh, IFLA_INFO_SLAVE_DATA);
		mnl_attr_put_u8(nlh, IFLA_BRPORT_STATE, 3);
		mnl_attr_nest_end(nlh, data);
		mnl_attr_nest_end(nlh, li);
		mnl_attr_put_u32(nlh, IFLA_MASTER, 5);
		if (bad)
			EXPECT_BAD(nlh, IFLA_LINKINFO, IFLA_BR_VLAN_FILTERING);
		else
			CHECK(parse(nlh, tb, &err) == 1 && tb[IFLA_LINKINFO] &&
			      tb[IFLA_MASTER], "bridge link refused");
	}
	/* Another kind's data is not read: not checked either. */
	nlh = msg(RTM_NEWLINK, sizeof(*ifi), (void **)&ifi);
	li = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
	mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "vxlan");
	data = mnl_attr_nest_start(nlh, IFLA_INFO_DATA);
	mnl_attr_put_u32(nlh, IFLA_BR_VLAN_FILTERING, 1);
	mnl_attr_nest_end(nlh, data);
	mnl_attr_nest_end(nlh, li);
	CHECK(parse(nlh, tb, &err) == 1, "another kind's link data checked");
	/* A bridge port's STP state of the wrong size. */
	nlh = msg(RTM_NEWLINK, sizeof(*ifi), (void **)&ifi);
	li = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
	mnl_attr_put_strz(nlh, IFLA_INFO_SLAVE_KIND, "bridge");
	data = mnl_attr_nest_start(nlh, IFLA_INFO_SLAVE_DATA);
	mnl_attr_put_u16(nlh, IFLA_BRPORT_STATE, 3);
	mnl_attr_nest_end(nlh, data);
	mnl_attr_nest_end(nlh, li);
	EXPECT_BAD(nlh, IFLA_LINKINFO, IFLA_BRPORT_STATE);
}

static void test_others(void)
{
	const struct nlattr *tb[NL_TB_SIZE];
	__u8 dst6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
	struct nl_parse_err err;
	struct ifinfomsg *ifi;
	struct nlmsghdr *nlh;
	struct ndmsg *ndm;

	cur_test = "neighbours, links";
	nlh = msg(RTM_NEWNEIGH, sizeof(*ndm), (void **)&ndm);
	ndm->ndm_family = AF_INET6;
	EXPECT_BAD(nlh, NDA_DST, -1); /* required */
	mnl_attr_put(nlh, NDA_DST, 4, dst6);
	EXPECT_BAD(nlh, NDA_DST, -1);
	nlh = msg(RTM_NEWNEIGH, sizeof(*ndm), (void **)&ndm);
	ndm->ndm_family = AF_INET6;
	mnl_attr_put(nlh, NDA_DST, 16, dst6);
	mnl_attr_put(nlh, NDA_LLADDR, 0, NULL);
	CHECK(parse(nlh, tb, &err) == 1 && tb[NDA_DST], "neighbour refused");
	ndm->ndm_flags = NTF_PROXY;
	CHECK(parse(nlh, tb, &err) == 0, "proxy neighbour not skipped");
	ndm->ndm_flags = 0;

	/* A bridge's forwarding database entry: a 6-byte MAC, its bridge. */
	nlh = msg(RTM_NEWNEIGH, sizeof(*ndm), (void **)&ndm);
	ndm->ndm_family = AF_BRIDGE;
	EXPECT_BAD(nlh, NDA_LLADDR, -1); /* required */
	mnl_attr_put(nlh, NDA_LLADDR, 4, "abcd");
	EXPECT_BAD(nlh, NDA_LLADDR, -1);
	nlh = msg(RTM_NEWNEIGH, sizeof(*ndm), (void **)&ndm);
	ndm->ndm_family = AF_BRIDGE;
	mnl_attr_put(nlh, NDA_LLADDR, 6, "abcdef");
	mnl_attr_put_u32(nlh, NDA_MASTER, 7);
	mnl_attr_put_u16(nlh, NDA_VLAN, 0);
	CHECK(parse(nlh, tb, &err) == 1 && tb[NDA_LLADDR] && tb[NDA_MASTER] &&
	      tb[NDA_VLAN], "bridge entry refused");
	ndm->ndm_flags = NTF_SELF; /* a device's own address list */
	CHECK(parse(nlh, tb, &err) == 0, "device address list entry not skipped");
	ndm->ndm_flags = 0;
	mnl_attr_put(nlh, NDA_VLAN, 1, "a");
	EXPECT_BAD(nlh, NDA_VLAN, -1);

	nlh = msg(RTM_NEWLINK, sizeof(*ifi), (void **)&ifi);
	mnl_attr_put_strz(nlh, IFLA_IFNAME, "r-sink");
	mnl_attr_put_u32(nlh, IFLA_MTU, 1500);
	mnl_attr_put_u32(nlh, IFLA_GROUP, 7);
	CHECK(parse(nlh, tb, &err) == 1 && tb[IFLA_IFNAME] && tb[IFLA_GROUP] &&
	      mnl_attr_get_u32(tb[IFLA_GROUP]) == 7, "link with its group refused");
	ifi->ifi_family = AF_BRIDGE; /* a bridge's view of its port */
	CHECK(parse(nlh, tb, &err) == 1, "bridge port message refused");
	nlh->nlmsg_type = RTM_DELLINK;
	CHECK(parse(nlh, tb, &err) == 1, "bridge port removal refused");
	ifi->ifi_family = AF_INET6; /* IPv6's per-device state */
	CHECK(parse(nlh, tb, &err) == 1, "IPv6 link state refused");
	ifi->ifi_family = AF_UNSPEC;
	nlh->nlmsg_type = RTM_NEWLINK;
	mnl_attr_put(nlh, IFLA_AF_SPEC, 2, "ab");
	EXPECT_BAD(nlh, IFLA_AF_SPEC, -1);
	/* the device group a rule's suppress_ifgroup compares: a u32 */
	nlh = msg(RTM_NEWLINK, sizeof(*ifi), (void **)&ifi);
	mnl_attr_put_strz(nlh, IFLA_IFNAME, "r-sink");
	mnl_attr_put(nlh, IFLA_GROUP, 2, "ab");
	EXPECT_BAD(nlh, IFLA_GROUP, -1);
	nlh = msg(RTM_NEWLINK, sizeof(*ifi), (void **)&ifi);
	mnl_attr_put(nlh, IFLA_IFNAME, 3, "abc");
	EXPECT_BAD(nlh, IFLA_IFNAME, -1);
	test_bridge_links();
	CHECK(!nl_policy_of(RTM_NEWQDISC), "a policy for qdiscs");
}

/* Whatever bytes change, what the parser hands out lies in the message. */
static void test_flips(void)
{
	const struct nlattr *tb[NL_TB_SIZE];
	struct nl_parse_err err;
	struct nlmsghdr *nlh;
	const char *end;
	int i, j, n, ok = 0;

	cur_test = "random flips";
	for (i = 0; i < 200000; i++) {
		nlh = route4(0, NULL, 0);
		end = (char *)nlh + nlh->nlmsg_len;
		n = 1 + rnd_below(3);
		for (j = 0; j < n; j++)
			((__u8 *)nlh)[NLMSG_HDRLEN + rnd_below(nlh->nlmsg_len -
							   NLMSG_HDRLEN)] ^=
				1 << rnd_below(8);
		if (parse(nlh, tb, &err) != 1)
			continue;
		ok++;
		for (j = 0; j < NL_TB_SIZE; j++)
			CHECK(!tb[j] || (const char *)tb[j] + tb[j]->nla_len <= end,
			      "attribute %d past the message", j);
	}
	CHECK(ok > 0, "no mutated message accepted: the test tests nothing");
	printf("random flips: %d of %d accepted\n", ok, i);
}

int main(int argc, char **argv)
{
	testlib_start(argv[0], argc > 1 ? argv[1] : NULL);
	test_routes();
	test_nested();
	test_nexthops();
	test_others();
	test_flips();
	printf("PASS\n");
	return 0;
}
