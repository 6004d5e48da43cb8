// SPDX-License-Identifier: GPL-2.0-only
/*
 * Conntrack requests over ctnetlink. Each request is answered before the
 * next is sent (an ack, the entry asked for, or a dump's entries), on one
 * socket per caller.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_conntrack_tcp.h>
#include <libmnl/libmnl.h>

#include "ctnl.h"
#include "nlreq.h"


#ifndef IPPROTO_ICMPV6
#define IPPROTO_ICMPV6 58
#endif

int ctnl_open(struct mnl_socket **nlp)
{
	/* Errors name the attribute (nlreq_open() asks for extended acks). */
	*nlp = nlreq_open(NETLINK_NETFILTER, 0);
	return *nlp ? 0 : -errno;
}

void ctnl_close(struct mnl_socket *nl)
{
	if (nl)
		mnl_socket_close(nl);
}

struct nlmsghdr *nfnl_msg(char *buf, __u8 subsys, __u16 type, __u16 flags,
			  __u8 family)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *nfg;

	nlh->nlmsg_type = (subsys << 8) | type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = time(NULL);
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = family;
	nfg->version = NFNETLINK_V0;
	nfg->res_id = 0;
	return nlh;
}

static struct nlmsghdr *ctnl_msg(char *buf, __u16 type, __u16 flags, __u8 family)
{
	return nfnl_msg(buf, NFNL_SUBSYS_CTNETLINK, type, flags, family);
}

static void put_tuple(struct nlmsghdr *nlh, __u16 type, const struct ctnl_tuple *t)
{
	struct nlattr *tup, *n;
	bool v4 = t->family == AF_INET;

	tup = mnl_attr_nest_start(nlh, type);
	n = mnl_attr_nest_start(nlh, CTA_TUPLE_IP);
	mnl_attr_put(nlh, v4 ? CTA_IP_V4_SRC : CTA_IP_V6_SRC, v4 ? 4 : 16, t->src);
	mnl_attr_put(nlh, v4 ? CTA_IP_V4_DST : CTA_IP_V6_DST, v4 ? 4 : 16, t->dst);
	mnl_attr_nest_end(nlh, n);
	n = mnl_attr_nest_start(nlh, CTA_TUPLE_PROTO);
	mnl_attr_put_u8(nlh, CTA_PROTO_NUM, t->proto);
	if (t->proto == IPPROTO_ICMP) {
		mnl_attr_put_u16(nlh, CTA_PROTO_ICMP_ID, t->sport);
		mnl_attr_put_u8(nlh, CTA_PROTO_ICMP_TYPE, t->icmp_type);
		mnl_attr_put_u8(nlh, CTA_PROTO_ICMP_CODE, t->icmp_code);
	} else if (t->proto == IPPROTO_ICMPV6) {
		mnl_attr_put_u16(nlh, CTA_PROTO_ICMPV6_ID, t->sport);
		mnl_attr_put_u8(nlh, CTA_PROTO_ICMPV6_TYPE, t->icmp_type);
		mnl_attr_put_u8(nlh, CTA_PROTO_ICMPV6_CODE, t->icmp_code);
	} else {
		mnl_attr_put_u16(nlh, CTA_PROTO_SRC_PORT, t->sport);
		mnl_attr_put_u16(nlh, CTA_PROTO_DST_PORT, t->dport);
	}
	mnl_attr_nest_end(nlh, n);
	mnl_attr_nest_end(nlh, tup);
}

/* ---- reading an entry ------------------------------------------------------ */

struct tb {
	const struct nlattr *a[CTA_MAX + 1];
	unsigned int max;
};

static int tb_fill(const struct nlattr *a, void *data)
{
	struct tb *t = data;
	unsigned int type = mnl_attr_get_type(a);

	if (type <= t->max)
		t->a[type] = a;
	return MNL_CB_OK;
}

static void tb_parse(const struct nlattr *nest, unsigned int max, struct tb *t)
{
	memset(t, 0, sizeof(*t));
	t->max = max < CTA_MAX ? max : CTA_MAX;
	mnl_attr_parse_nested(nest, tb_fill, t);
}

static bool has(const struct nlattr *a, size_t len)
{
	return a && mnl_attr_get_payload_len(a) >= len;
}

/* Returns the direction's own zone (CTA_TUPLE_ZONE), 0 if it has none. */
static __u16 get_tuple(const struct nlattr *nest, __u8 family, struct ctnl_tuple *t)
{
	struct tb ip, proto, top;
	size_t alen = family == AF_INET ? 4 : 16;
	__u16 zone;

	memset(t, 0, sizeof(*t));
	t->family = family;
	tb_parse(nest, CTA_TUPLE_MAX, &top);
	if (top.a[CTA_TUPLE_IP]) {
		tb_parse(top.a[CTA_TUPLE_IP], CTA_IP_MAX, &ip);
		if (has(ip.a[family == AF_INET ? CTA_IP_V4_SRC : CTA_IP_V6_SRC], alen))
			memcpy(t->src, mnl_attr_get_payload(ip.a[family == AF_INET ?
					CTA_IP_V4_SRC : CTA_IP_V6_SRC]), alen);
		if (has(ip.a[family == AF_INET ? CTA_IP_V4_DST : CTA_IP_V6_DST], alen))
			memcpy(t->dst, mnl_attr_get_payload(ip.a[family == AF_INET ?
					CTA_IP_V4_DST : CTA_IP_V6_DST]), alen);
	}
	zone = has(top.a[CTA_TUPLE_ZONE], 2) ?
		       ntohs(mnl_attr_get_u16(top.a[CTA_TUPLE_ZONE])) : 0;
	if (!top.a[CTA_TUPLE_PROTO])
		return zone;
	tb_parse(top.a[CTA_TUPLE_PROTO], CTA_PROTO_MAX, &proto);
	if (has(proto.a[CTA_PROTO_NUM], 1))
		t->proto = mnl_attr_get_u8(proto.a[CTA_PROTO_NUM]);
	if (has(proto.a[CTA_PROTO_SRC_PORT], 2))
		t->sport = mnl_attr_get_u16(proto.a[CTA_PROTO_SRC_PORT]);
	if (has(proto.a[CTA_PROTO_DST_PORT], 2))
		t->dport = mnl_attr_get_u16(proto.a[CTA_PROTO_DST_PORT]);
	if (has(proto.a[CTA_PROTO_ICMP_ID], 2))
		t->sport = mnl_attr_get_u16(proto.a[CTA_PROTO_ICMP_ID]);
	if (has(proto.a[CTA_PROTO_ICMP_TYPE], 1))
		t->icmp_type = mnl_attr_get_u8(proto.a[CTA_PROTO_ICMP_TYPE]);
	if (has(proto.a[CTA_PROTO_ICMPV6_ID], 2))
		t->sport = mnl_attr_get_u16(proto.a[CTA_PROTO_ICMPV6_ID]);
	if (has(proto.a[CTA_PROTO_ICMPV6_TYPE], 1))
		t->icmp_type = mnl_attr_get_u8(proto.a[CTA_PROTO_ICMPV6_TYPE]);
	return zone;
}

static void get_tcp(const struct nlattr *protoinfo, struct ctnl_entry *e)
{
	struct tb pi, tcp;

	tb_parse(protoinfo, CTA_PROTOINFO_MAX, &pi);
	if (!pi.a[CTA_PROTOINFO_TCP])
		return;
	tb_parse(pi.a[CTA_PROTOINFO_TCP], CTA_PROTOINFO_TCP_MAX, &tcp);
	e->tcp = true;
	if (has(tcp.a[CTA_PROTOINFO_TCP_STATE], 1))
		e->tcp_state = mnl_attr_get_u8(tcp.a[CTA_PROTOINFO_TCP_STATE]);
	if (has(tcp.a[CTA_PROTOINFO_TCP_FLAGS_ORIGINAL], 1))
		e->tcp_flags[0] = *(const __u8 *)mnl_attr_get_payload(
			tcp.a[CTA_PROTOINFO_TCP_FLAGS_ORIGINAL]);
	if (has(tcp.a[CTA_PROTOINFO_TCP_FLAGS_REPLY], 1))
		e->tcp_flags[1] = *(const __u8 *)mnl_attr_get_payload(
			tcp.a[CTA_PROTOINFO_TCP_FLAGS_REPLY]);
}

/* The name of the entry's helper, if it has one. */
static void get_helper(const struct nlattr *help, struct ctnl_entry *e)
{
	struct tb h;

	tb_parse(help, CTA_HELP_MAX, &h);
	if (h.a[CTA_HELP_NAME] &&
	    !mnl_attr_validate(h.a[CTA_HELP_NAME], MNL_TYPE_NUL_STRING))
		snprintf(e->helper, sizeof(e->helper), "%s",
			 mnl_attr_get_str(h.a[CTA_HELP_NAME]));
}

static int entry_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nfgenmsg *nfg = mnl_nlmsg_get_payload(nlh);
	struct ctnl_entry *e = data;
	struct tb t = { .max = CTA_MAX };
	__u16 zone[2] = { 0, 0 };

	memset(e, 0, sizeof(*e));
	mnl_attr_parse(nlh, sizeof(*nfg), tb_fill, &t);
	if (t.a[CTA_TUPLE_ORIG])
		zone[0] = get_tuple(t.a[CTA_TUPLE_ORIG], nfg->nfgen_family, &e->orig);
	if (t.a[CTA_TUPLE_REPLY])
		zone[1] = get_tuple(t.a[CTA_TUPLE_REPLY], nfg->nfgen_family, &e->reply);
	/* A zone of one direction only comes in that direction's tuple. */
	e->zone = zone[0] ?: zone[1];
	if (has(t.a[CTA_ID], 4))
		e->id = ntohl(mnl_attr_get_u32(t.a[CTA_ID]));
	if (has(t.a[CTA_STATUS], 4))
		e->status = ntohl(mnl_attr_get_u32(t.a[CTA_STATUS]));
	if (has(t.a[CTA_TIMEOUT], 4))
		e->timeout = ntohl(mnl_attr_get_u32(t.a[CTA_TIMEOUT]));
	if (has(t.a[CTA_MARK], 4))
		e->mark = ntohl(mnl_attr_get_u32(t.a[CTA_MARK]));
	if (has(t.a[CTA_ZONE], 2))
		e->zone = ntohs(mnl_attr_get_u16(t.a[CTA_ZONE]));
	if (t.a[CTA_PROTOINFO])
		get_tcp(t.a[CTA_PROTOINFO], e);
	if (t.a[CTA_HELP])
		get_helper(t.a[CTA_HELP], e);
	return MNL_CB_OK;
}

/* ---- requests ---------------------------------------------------------------- */

/* Sends the request in buf and runs cb on the answer until the ack, or
 * for a dump until its NLMSG_DONE (the kernel answers a dump's request
 * with no ack). */
static int ctnl_talk(struct mnl_socket *nl, struct nlmsghdr *nlh,
		     mnl_cb_t cb, void *data)
{
	nlh->nlmsg_flags |= NLM_F_ACK;
	return nlreq_run(nl, nlh, nlh->nlmsg_seq, cb, data);
}

int ctnl_get(struct mnl_socket *nl, const struct ctnl_tuple *t,
	     struct ctnl_entry *e)
{
	char buf[1024];
	struct nlmsghdr *nlh = ctnl_msg(buf, IPCTNL_MSG_CT_GET, 0, t->family);

	put_tuple(nlh, CTA_TUPLE_ORIG, t);
	memset(e, 0, sizeof(*e));
	return ctnl_talk(nl, nlh, entry_cb, e);
}

struct dump {
	int (*fn)(const struct ctnl_entry *e, void *arg);
	void *arg;
	int ret; /* fn's first non-zero return */
};

static int dump_cb(const struct nlmsghdr *nlh, void *data)
{
	struct dump *d = data;
	struct ctnl_entry e;

	entry_cb(nlh, &e);
	d->ret = d->fn(&e, d->arg);
	return d->ret ? MNL_CB_ERROR : MNL_CB_OK;
}

int ctnl_dump(struct mnl_socket *nl, __u8 family,
	      int (*fn)(const struct ctnl_entry *e, void *arg), void *arg)
{
	char buf[256];
	struct nlmsghdr *nlh = ctnl_msg(buf, IPCTNL_MSG_CT_GET, NLM_F_DUMP, family);
	struct dump d = { .fn = fn, .arg = arg };
	int err = ctnl_talk(nl, nlh, dump_cb, &d);

	return d.ret ?: err;
}

/* status: the IPS_* bits to send, 0 for none. */
static void put_change(struct nlmsghdr *nlh, const struct ctnl_change *c,
		       __u32 status)
{
	struct nlattr *pi, *tcp;

	if (c->timeout)
		mnl_attr_put_u32(nlh, CTA_TIMEOUT, htonl(c->timeout));
	if (status)
		mnl_attr_put_u32(nlh, CTA_STATUS, htonl(status));
	if (!c->tcp_liberal && c->tcp_state < 0)
		return;
	pi = mnl_attr_nest_start(nlh, CTA_PROTOINFO);
	tcp = mnl_attr_nest_start(nlh, CTA_PROTOINFO_TCP);
	if (c->tcp_state >= 0)
		mnl_attr_put_u8(nlh, CTA_PROTOINFO_TCP_STATE, c->tcp_state);
	if (c->tcp_liberal) {
		struct nf_ct_tcp_flags f = {
			.flags = IP_CT_TCP_FLAG_BE_LIBERAL,
			.mask = IP_CT_TCP_FLAG_BE_LIBERAL,
		};

		mnl_attr_put(nlh, CTA_PROTOINFO_TCP_FLAGS_ORIGINAL, sizeof(f), &f);
		mnl_attr_put(nlh, CTA_PROTOINFO_TCP_FLAGS_REPLY, sizeof(f), &f);
	}
	mnl_attr_nest_end(nlh, tcp);
	mnl_attr_nest_end(nlh, pi);
}

int ctnl_delete(struct mnl_socket *nl, const struct ctnl_tuple *t)
{
	char buf[1024];
	struct nlmsghdr *nlh = ctnl_msg(buf, IPCTNL_MSG_CT_DELETE, 0, t->family);

	put_tuple(nlh, CTA_TUPLE_ORIG, t);
	return ctnl_talk(nl, nlh, NULL, NULL);
}

int ctnl_update(struct mnl_socket *nl, const struct ctnl_tuple *t,
		const struct ctnl_change *c)
{
	char buf[1024];
	/* Without NLM_F_CREATE the kernel changes an entry or says ENOENT. */
	struct nlmsghdr *nlh = ctnl_msg(buf, IPCTNL_MSG_CT_NEW, 0, t->family);

	put_tuple(nlh, CTA_TUPLE_ORIG, t);
	put_change(nlh, c, 0);
	return ctnl_talk(nl, nlh, NULL, NULL);
}

/* A NAT binding of type (CTA_NAT_SRC, CTA_NAT_DST) to one address and,
 * if port is not 0, one port. */
static void put_nat(struct nlmsghdr *nlh, __u16 type, __u8 family,
		    const __u8 *addr, __be16 port)
{
	struct nlattr *nat = mnl_attr_nest_start(nlh, type), *proto;
	bool v4 = family == AF_INET;

	mnl_attr_put(nlh, v4 ? CTA_NAT_V4_MINIP : CTA_NAT_V6_MINIP, v4 ? 4 : 16, addr);
	mnl_attr_put(nlh, v4 ? CTA_NAT_V4_MAXIP : CTA_NAT_V6_MAXIP, v4 ? 4 : 16, addr);
	if (port) {
		proto = mnl_attr_nest_start(nlh, CTA_NAT_PROTO);
		mnl_attr_put_u16(nlh, CTA_PROTONAT_PORT_MIN, port);
		mnl_attr_put_u16(nlh, CTA_PROTONAT_PORT_MAX, port);
		mnl_attr_nest_end(nlh, proto);
	}
	mnl_attr_nest_end(nlh, nat);
}

int ctnl_create(struct mnl_socket *nl, const struct ctnl_tuple *t,
		const struct ctnl_change *c)
{
	char buf[1024];
	struct nlmsghdr *nlh = ctnl_msg(buf, IPCTNL_MSG_CT_NEW,
					NLM_F_CREATE | NLM_F_EXCL, t->family);
	struct ctnl_tuple inv;

	ctnl_tuple_invert(t, &inv);
	put_tuple(nlh, CTA_TUPLE_ORIG, t);
	put_tuple(nlh, CTA_TUPLE_REPLY, &inv);
	if (c->zone)
		mnl_attr_put_u16(nlh, CTA_ZONE, htons(c->zone));
	if (c->snat)
		put_nat(nlh, CTA_NAT_SRC, t->family, c->snat, c->snat_port);
	if (c->dnat)
		put_nat(nlh, CTA_NAT_DST, t->family, c->dnat, c->dnat_port);
	if (c->helper) {
		struct nlattr *help = mnl_attr_nest_start(nlh, CTA_HELP);

		mnl_attr_put_strz(nlh, CTA_HELP_NAME, c->helper);
		mnl_attr_nest_end(nlh, help);
	}
	/* The kernel marks a created entry confirmed before it applies the
	 * status, and refuses a status that would clear that bit. */
	put_change(nlh, c, c->status ? c->status | IPS_CONFIRMED : 0);
	return ctnl_talk(nl, nlh, NULL, NULL);
}

void ctnl_tuple_invert(const struct ctnl_tuple *t, struct ctnl_tuple *inv)
{
	*inv = *t;
	memcpy(inv->src, t->dst, sizeof(inv->src));
	memcpy(inv->dst, t->src, sizeof(inv->dst));
	if (t->proto == IPPROTO_ICMP)
		inv->icmp_type = t->icmp_type == 8 ? 0 : 8;
	else if (t->proto == IPPROTO_ICMPV6)
		inv->icmp_type = t->icmp_type == 128 ? 129 : 128;
	else {
		inv->sport = t->dport;
		inv->dport = t->sport;
	}
}
