// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit test of what xfibd counts from NETLINK_XFRM dumps
 * (ctl/xfibd/xfrm/xfrm_count.c), the counts behind each family's XFRM mode.
 *
 * Cases: forward and output policies count for their selector's family,
 * both for a selector without one; input and socket policies do not
 * count. A state counts for its family, and outside transport mode for
 * its selector's too (both without one). Default policies of block for
 * forward and output set their flags, an input block and accepts do not.
 * Other message types count nothing, and every message cut short of its
 * fixed header counts nothing.
 *
 * Usage: unit_test_xfrm_count.
 */
#define TESTLIB_SEED 0x7866726dull
#include "testlib.h"

#include <string.h>
#include <sys/socket.h>
#include <linux/xfrm.h>
#include <libmnl/libmnl.h>

#include "xfrm/xfrm.h"

static char buf[4096];

static struct nlmsghdr *msg(__u16 type, size_t len, void **payload)
{
	struct nlmsghdr *nlh;

	memset(buf, 0, sizeof(buf));
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = type;
	*payload = mnl_nlmsg_put_extra_header(nlh, len);
	return nlh;
}

static struct nlmsghdr *policy(__u8 dir, __u16 sel_family)
{
	struct xfrm_userpolicy_info *p;
	struct nlmsghdr *nlh = msg(XFRM_MSG_NEWPOLICY, sizeof(*p), (void **)&p);

	p->dir = dir;
	p->sel.family = sel_family;
	p->action = XFRM_POLICY_BLOCK;
	return nlh;
}

static struct nlmsghdr *state(__u16 family, __u8 mode, __u16 sel_family)
{
	struct xfrm_usersa_info *sa;
	struct nlmsghdr *nlh = msg(XFRM_MSG_NEWSA, sizeof(*sa), (void **)&sa);

	sa->family = family;
	sa->mode = mode;
	sa->sel.family = sel_family;
	sa->id.proto = IPPROTO_ESP;
	return nlh;
}

static struct nlmsghdr *defaults(__u8 in, __u8 fwd, __u8 out)
{
	struct xfrm_userpolicy_default *d;
	struct nlmsghdr *nlh = msg(XFRM_MSG_GETDEFAULT, sizeof(*d), (void **)&d);

	d->in = in;
	d->fwd = fwd;
	d->out = out;
	return nlh;
}

/* The counts of one message, in order fwd4 fwd6 out4 out6 st4 st6 flags. */
static void expect(const char *name, const struct nlmsghdr *nlh, __u32 fwd4,
		   __u32 fwd6, __u32 out4, __u32 out6, __u32 st4, __u32 st6,
		   __u8 flags)
{
	struct xfrm_counts c = { 0 };

	cur_test = name;
	xfrm_count_msg(&c, nlh);
	CHECK(c.fwd[XFIB_V4] == fwd4 && c.fwd[XFIB_V6] == fwd6 &&
		      c.out[XFIB_V4] == out4 && c.out[XFIB_V6] == out6 &&
		      c.states[XFIB_V4] == st4 && c.states[XFIB_V6] == st6 &&
		      c.flags == flags,
	      "fwd %u/%u out %u/%u states %u/%u flags %#x", c.fwd[XFIB_V4],
	      c.fwd[XFIB_V6], c.out[XFIB_V4], c.out[XFIB_V6], c.states[XFIB_V4],
	      c.states[XFIB_V6], c.flags);
}

/* The same message cut short anywhere in its fixed header of size hdr
 * (the payload is padded beyond it): nothing counts. */
static void expect_truncated_none(const char *name, struct nlmsghdr *nlh,
				  size_t hdr)
{
	__u32 full = nlh->nlmsg_len, len;

	for (len = MNL_NLMSG_HDRLEN; len < MNL_NLMSG_HDRLEN + hdr; len++) {
		nlh->nlmsg_len = len;
		expect(name, nlh, 0, 0, 0, 0, 0, 0, 0);
	}
	nlh->nlmsg_len = full;
}

static void test_policies(void)
{
	expect("fwd policy, IPv4", policy(XFRM_POLICY_FWD, AF_INET), 1, 0, 0, 0, 0, 0, 0);
	expect("fwd policy, IPv6", policy(XFRM_POLICY_FWD, AF_INET6), 0, 1, 0, 0, 0, 0, 0);
	expect("fwd policy, no family", policy(XFRM_POLICY_FWD, AF_UNSPEC), 1, 1, 0, 0, 0, 0, 0);
	expect("out policy, IPv4", policy(XFRM_POLICY_OUT, AF_INET), 0, 0, 1, 0, 0, 0, 0);
	expect("out policy, IPv6", policy(XFRM_POLICY_OUT, AF_INET6), 0, 0, 0, 1, 0, 0, 0);
	expect("out policy, unknown family", policy(XFRM_POLICY_OUT, 99), 0, 0, 1, 1, 0, 0, 0);
	expect("in policy", policy(XFRM_POLICY_IN, AF_INET), 0, 0, 0, 0, 0, 0, 0);
	expect("socket out policy", policy(XFRM_POLICY_MAX + XFRM_POLICY_OUT, AF_INET),
	       0, 0, 0, 0, 0, 0, 0);
	expect("socket in policy", policy(XFRM_POLICY_MAX + XFRM_POLICY_IN, AF_INET6),
	       0, 0, 0, 0, 0, 0, 0);
	expect_truncated_none("fwd policy, truncated", policy(XFRM_POLICY_FWD, AF_INET),
			      sizeof(struct xfrm_userpolicy_info));
}

static void test_states(void)
{
	expect("transport state, IPv4", state(AF_INET, XFRM_MODE_TRANSPORT, AF_UNSPEC),
	       0, 0, 0, 0, 1, 0, 0);
	expect("transport state, IPv6", state(AF_INET6, XFRM_MODE_TRANSPORT, AF_INET6),
	       0, 0, 0, 0, 0, 1, 0);
	expect("tunnel state, IPv4 in IPv4", state(AF_INET, XFRM_MODE_TUNNEL, AF_INET),
	       0, 0, 0, 0, 1, 0, 0);
	expect("tunnel state, IPv6 in IPv4", state(AF_INET, XFRM_MODE_TUNNEL, AF_INET6),
	       0, 0, 0, 0, 1, 1, 0);
	expect("tunnel state, no selector family", state(AF_INET6, XFRM_MODE_TUNNEL, AF_UNSPEC),
	       0, 0, 0, 0, 1, 1, 0);
	expect("beet state, IPv4 in IPv6", state(AF_INET6, XFRM_MODE_BEET, AF_INET),
	       0, 0, 0, 0, 1, 1, 0);
	expect_truncated_none("state, truncated", state(AF_INET, XFRM_MODE_TUNNEL, AF_INET),
			      sizeof(struct xfrm_usersa_info));
}

static void test_defaults(void)
{
	expect("defaults accept", defaults(XFRM_USERPOLICY_ACCEPT, XFRM_USERPOLICY_ACCEPT,
					   XFRM_USERPOLICY_ACCEPT), 0, 0, 0, 0, 0, 0, 0);
	expect("defaults unspecified", defaults(0, 0, 0), 0, 0, 0, 0, 0, 0, 0);
	expect("default in block", defaults(XFRM_USERPOLICY_BLOCK, XFRM_USERPOLICY_ACCEPT,
					    XFRM_USERPOLICY_ACCEPT), 0, 0, 0, 0, 0, 0, 0);
	expect("default fwd block", defaults(XFRM_USERPOLICY_ACCEPT, XFRM_USERPOLICY_BLOCK,
					     XFRM_USERPOLICY_ACCEPT),
	       0, 0, 0, 0, 0, 0, XFIB_XFRM_FWD_BLOCK);
	expect("default out block", defaults(XFRM_USERPOLICY_ACCEPT, XFRM_USERPOLICY_ACCEPT,
					     XFRM_USERPOLICY_BLOCK),
	       0, 0, 0, 0, 0, 0, XFIB_XFRM_OUT_BLOCK);
	expect_truncated_none("defaults, truncated",
			      defaults(0, XFRM_USERPOLICY_BLOCK, XFRM_USERPOLICY_BLOCK),
			      sizeof(struct xfrm_userpolicy_default));
}

static void test_others(void)
{
	struct nlmsghdr *nlh = policy(XFRM_POLICY_FWD, AF_INET);

	/* A delete notification or a policy expiry is not a dump entry. */
	nlh->nlmsg_type = XFRM_MSG_DELPOLICY;
	expect("DELPOLICY", nlh, 0, 0, 0, 0, 0, 0, 0);
	nlh->nlmsg_type = XFRM_MSG_POLEXPIRE;
	expect("POLEXPIRE", nlh, 0, 0, 0, 0, 0, 0, 0);
	nlh = state(AF_INET, XFRM_MODE_TUNNEL, AF_INET);
	nlh->nlmsg_type = XFRM_MSG_NEWAE;
	expect("NEWAE", nlh, 0, 0, 0, 0, 0, 0, 0);
	nlh->nlmsg_type = NLMSG_DONE;
	expect("NLMSG_DONE", nlh, 0, 0, 0, 0, 0, 0, 0);
}

int main(void)
{
	test_policies();
	test_states();
	test_defaults();
	test_others();
	printf("PASS\n");
	return 0;
}
