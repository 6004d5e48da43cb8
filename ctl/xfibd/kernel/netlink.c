// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/if_addr.h>
#include <linux/fib_rules.h>
#include <linux/neighbour.h>
#include <linux/netconf.h>
#include <linux/netlink.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>
#include <libmnl/libmnl.h>

#include "log.h"
#include "monoclock.h"
#include "netlink.h"
#include "nl_policy.h"
#include "nl_reader.h"
#include "nl_priv.h"
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

static int nl_dump_rules(struct nl *nl, int fam,
			 enum xfib_rules_fallback *why)
{
	int err;

	nl->in_rule_dump = true;
	nl->rule_fam = fam;
	rib_rules_begin(nl->rib, fam);
	err = nl_dump(nl, RTM_GETRULE, fam == XFIB_V4 ? AF_INET : AF_INET6,
		      sizeof(struct fib_rule_hdr));
	nl->in_rule_dump = false;
	*why = rib_rules_end(nl->rib, fam, !err);
	return err;
}

/* Why the family's rules send it to the kernel, for the log. */
static void rules_fallback_log(const struct nl *nl, int fam,
			       enum xfib_rules_fallback why)
{
	const char *f = fam == XFIB_V4 ? "ipv4" : "ipv6";

	if (why == XFIB_RULES_TOO_MANY)
		pr_warn("%s: more than %u policy rules: this traffic goes to the kernel",
			f, XFIB_RULES_MAX);
	else if (why == XFIB_RULES_UNREADABLE)
		pr_warn("%s: a policy rule xfibd could not read: this traffic goes to the kernel",
			f);
	else if (why == XFIB_RULES_LOCAL_ROUTES)
		pr_warn("%s: the local table holds routes other than local ones, and rules follow it: this traffic goes to the kernel",
			f);
	else
		pr_warn("%s: the first policy rule is not \"lookup local\" for every packet: this traffic goes to the kernel",
			f);
}

int nl_check_rules(struct nl *nl)
{
	enum xfib_rules_fallback why;
	int fam, err;

	nl->rib->rules_changed = false;
	for (fam = 0; fam < XFIB_FAMILIES; fam++) {
		struct rib_family_state *f = &nl->rib->fam[fam];
		bool ok;

		err = nl_dump_rules(nl, fam, &why);
		if (err) {
			nl->rib->rules_changed = true;
			return err;
		}
		ok = why == XFIB_RULES_OK;
		if (ok != f->rules_ok) {
			if (!ok)
				rules_fallback_log(nl, fam, why);
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
		/* The bridges' forwarding databases: asked for apart, as
		 * AF_UNSPEC dumps the neighbour tables only. */
		err = err ?: nl_dump(nl, RTM_GETNEIGH, AF_BRIDGE, sizeof(struct ndmsg));
		/* Nexthop objects before the routes that use them; rules
		 * before the routes too: they say which tables are
		 * mirrored (a table a rule newly reaches loads with them). */
		err = err ?: nl_dump(nl, RTM_GETNEXTHOP, AF_UNSPEC, sizeof(struct nhmsg));
		err = err ?: nl_check_rules(nl);
		err = err ?: nl_dump(nl, RTM_GETROUTE, AF_INET, sizeof(struct rtmsg));
		err = err ?: nl_dump(nl, RTM_GETROUTE, AF_INET6, sizeof(struct rtmsg));
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

/*
 * An RTM_NEWNEIGH with NTF_USE (and flags) on the request socket: "in
 * use" for a neighbour, or for a bridge's FDB entry. Returns the message
 * to add the entry's address to, and its sequence number in *seq.
 */
static struct nlmsghdr *neigh_use_msg(struct nl *nl, __u8 family, int ifindex,
				      __u8 flags, __u16 state, unsigned int *seq)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(nl->buf);
	struct ndmsg *ndm;

	*seq = ++nl->seq;
	nlh->nlmsg_type = RTM_NEWNEIGH;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = *seq;
	ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));
	ndm->ndm_family = family;
	ndm->ndm_ifindex = ifindex;
	ndm->ndm_flags = NTF_USE | flags;
	ndm->ndm_state = state;
	return nlh;
}

/* Sends nlh and reads its acknowledgement here: a reply left on the
 * socket would derail the next dump. 0 or -errno. */
static int request_acked(struct nl *nl, struct nlmsghdr *nlh, unsigned int seq)
{
	ssize_t n;

	if (mnl_socket_sendto(nl->req, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	n = mnl_socket_recvfrom(nl->req, nl->buf, NL_BUF_SIZE);
	if (n < 0)
		return -errno;
	return mnl_cb_run(nl->buf, n, seq, nl->req_portid, NULL, NULL) < 0 ?
		       -errno : 0;
}

static int nl_neigh_use_one(struct nl *nl, const struct nl_neigh_ref *r)
{
	unsigned int seq;
	struct nlmsghdr *nlh = neigh_use_msg(nl, r->family, r->ifindex, 0, 0, &seq);

	mnl_attr_put(nlh, NDA_DST, r->family == AF_INET ? 4 : 16, r->addr);
	return request_acked(nl, nlh, seq);
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

void nl_fdb_use(void *ctx, const struct xfib_fdb_key *k, __u32 port)
{
	struct nl *nl = ctx;
	unsigned int seq;
	/* br_fdb_add() wants a state; NTF_MASTER: the bridge's entry. */
	struct nlmsghdr *nlh = neigh_use_msg(nl, AF_BRIDGE, port, NTF_MASTER,
					     NUD_REACHABLE, &seq);
	int err;

	mnl_attr_put(nlh, NDA_LLADDR, 6, k->mac);
	err = request_acked(nl, nlh, seq);
	/* EPERM: the port stopped learning (STP); ENODEV, EINVAL: it left
	 * the bridge or went. Their notifications are on their way. */
	if (err)
		pr_debug("bridge FDB entry on ifindex %u: NTF_USE: %s", port,
			 strerror(-err));
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
