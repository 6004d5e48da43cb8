// SPDX-License-Identifier: GPL-2.0-only
/*
 * The nftables ruleset (iptables-nft's tables included) read over
 * NETLINK_NETFILTER into the check's form (nfrules.h): tables, chains with
 * their hooks, rules, and the elements of the sets the ct state is looked
 * up in. One consistent generation: the ruleset's generation id before and
 * after the dumps must agree, and no dump may be interrupted, else it is
 * read again. Change notifications come on NFNLGRP_NFTABLES.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nf_tables.h>
#include <libmnl/libmnl.h>

#include "ctnl.h"
#include "log.h"
#include "nfrules.h"
#include "nftexpr.h"
#include "nft.h"

#define NFT_BUF (1 << 16)
#define NFT_TRIES 5
#define ATTRS_MAX 32

struct attrs {
	const struct nlattr *a[ATTRS_MAX];
};

static int attrs_fill(const struct nlattr *a, void *data)
{
	struct attrs *t = data;
	unsigned int type = mnl_attr_get_type(a);

	if (type < ATTRS_MAX)
		t->a[type] = a;
	return MNL_CB_OK;
}

static void attrs_msg(const struct nlmsghdr *nlh, struct attrs *t)
{
	memset(t, 0, sizeof(*t));
	mnl_attr_parse(nlh, sizeof(struct nfgenmsg), attrs_fill, t);
}

static void attrs_nest(const struct nlattr *nest, struct attrs *t)
{
	memset(t, 0, sizeof(*t));
	if (nest)
		mnl_attr_parse_nested(nest, attrs_fill, t);
}

static const char *str(const struct nlattr *a)
{
	return a ? mnl_attr_get_str(a) : NULL;
}

static __u32 be32(const struct nlattr *a, __u32 dflt)
{
	return a && mnl_attr_get_payload_len(a) >= 4 ? ntohl(mnl_attr_get_u32(a)) : dflt;
}

static __u8 msg_family(const struct nlmsghdr *nlh)
{
	return ((const struct nfgenmsg *)mnl_nlmsg_get_payload(nlh))->nfgen_family;
}

/* ---- requests -------------------------------------------------------------- */

struct dump {
	struct mnl_socket *nl;
	struct nfx_ruleset *rs;
	bool intr;     /* a dump was interrupted by a change */
	int err;       /* first failure inside a callback */
	__u32 genid;
};

static struct nlmsghdr *nft_msg(char *buf, __u16 type, __u16 flags, __u8 family)
{
	return nfnl_msg(buf, NFNL_SUBSYS_NFTABLES, type, flags, family);
}

/* Sends nlh and runs cb on every answer until the end of the dump. */
static int nft_talk(struct dump *d, struct nlmsghdr *nlh, mnl_cb_t cb)
{
	static char buf[NFT_BUF];
	unsigned int portid = mnl_socket_get_portid(d->nl);
	__u32 seq = nlh->nlmsg_seq;
	int ret;

	if (mnl_socket_sendto(d->nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	do {
		ssize_t n = mnl_socket_recvfrom(d->nl, buf, sizeof(buf));
		const struct nlmsghdr *m = (const void *)buf;
		int left = n;

		if (n < 0)
			return -errno;
		for (; mnl_nlmsg_ok(m, left); m = mnl_nlmsg_next(m, &left))
			if (m->nlmsg_flags & NLM_F_DUMP_INTR)
				d->intr = true;
		ret = mnl_cb_run(buf, n, seq, portid, cb, d);
	} while (ret > 0);
	if (ret < 0)
		return -errno;
	return d->err;
}

static int gen_cb(const struct nlmsghdr *nlh, void *data)
{
	struct dump *d = data;
	struct attrs t;

	attrs_msg(nlh, &t);
	d->genid = be32(t.a[NFTA_GEN_ID], 0);
	return MNL_CB_OK;
}

static int read_genid(struct dump *d, __u32 *genid)
{
	char buf[256];
	int err = nft_talk(d, nft_msg(buf, NFT_MSG_GETGEN, NLM_F_ACK, NFPROTO_UNSPEC),
			   gen_cb);

	*genid = d->genid;
	return err;
}

/* ---- tables, chains, sets, rules ----------------------------------------------- */

/* "inet fw": the table as nft names it, for messages. */
static const char *family_name(__u8 f)
{
	switch (f) {
	case NFPROTO_INET: return "inet";
	case NFPROTO_IPV4: return "ip";
	case NFPROTO_IPV6: return "ip6";
	case NFPROTO_NETDEV: return "netdev";
	case NFPROTO_ARP: return "arp";
	case NFPROTO_BRIDGE: return "bridge";
	default: return "?";
	}
}

static int table_cb(const struct nlmsghdr *nlh, void *data)
{
	struct dump *d = data;
	struct nfx_table *tbl;
	struct attrs t;

	attrs_msg(nlh, &t);
	if (!t.a[NFTA_TABLE_NAME])
		return MNL_CB_OK;
	/* A dormant table's chains are not hooked: they see nothing. */
	if (be32(t.a[NFTA_TABLE_FLAGS], 0) & NFT_TABLE_F_DORMANT)
		return MNL_CB_OK;
	tbl = nfx_table_add(d->rs, msg_family(nlh), str(t.a[NFTA_TABLE_NAME]), false);
	if (!tbl)
		d->err = -ENOMEM;
	else
		tbl->prefix = family_name(tbl->family);
	return MNL_CB_OK;
}

static int chain_hook(struct nfx_chain *c, const struct nlattr *hook)
{
	const struct nlattr *dev;
	struct attrs h;

	attrs_nest(hook, &h);
	c->base = true;
	c->hook = be32(h.a[NFTA_HOOK_HOOKNUM], ~0u);
	c->prio = (__s32)be32(h.a[NFTA_HOOK_PRIORITY], 0);
	if (h.a[NFTA_HOOK_DEV] && nfx_chain_add_dev(c, str(h.a[NFTA_HOOK_DEV])))
		return -ENOMEM;
	if (h.a[NFTA_HOOK_DEVS])
		mnl_attr_for_each_nested(dev, h.a[NFTA_HOOK_DEVS])
			if (nfx_chain_add_dev(c, mnl_attr_get_str(dev)))
				return -ENOMEM;
	return 0;
}

static int chain_cb(const struct nlmsghdr *nlh, void *data)
{
	struct dump *d = data;
	struct nfx_table *tbl;
	struct nfx_chain *c;
	struct attrs t;

	attrs_msg(nlh, &t);
	tbl = nfx_table_find(d->rs, msg_family(nlh), str(t.a[NFTA_CHAIN_TABLE]) ?: "");
	if (!tbl || !t.a[NFTA_CHAIN_NAME])
		return MNL_CB_OK;
	c = nfx_chain_add(tbl, str(t.a[NFTA_CHAIN_NAME]));
	if (!c) {
		d->err = -ENOMEM;
		return MNL_CB_OK;
	}
	if (t.a[NFTA_CHAIN_HOOK] && chain_hook(c, t.a[NFTA_CHAIN_HOOK]))
		d->err = -ENOMEM;
	c->policy = be32(t.a[NFTA_CHAIN_POLICY], NF_ACCEPT);
	c->nat = t.a[NFTA_CHAIN_TYPE] && !strcmp(str(t.a[NFTA_CHAIN_TYPE]), "nat");
	return MNL_CB_OK;
}

static int set_cb(const struct nlmsghdr *nlh, void *data)
{
	struct dump *d = data;
	struct nfx_table *tbl;
	struct nfx_set *s;
	struct attrs t;

	attrs_msg(nlh, &t);
	tbl = nfx_table_find(d->rs, msg_family(nlh), str(t.a[NFTA_SET_TABLE]) ?: "");
	if (!tbl || !t.a[NFTA_SET_NAME])
		return MNL_CB_OK;
	s = nfx_set_add(tbl, str(t.a[NFTA_SET_NAME]));
	if (!s) {
		d->err = -ENOMEM;
		return MNL_CB_OK;
	}
	s->flags = be32(t.a[NFTA_SET_FLAGS], 0);
	s->klen = be32(t.a[NFTA_SET_KEY_LEN], 0);
	s->vmap = (s->flags & NFT_SET_MAP) &&
		  be32(t.a[NFTA_SET_DATA_TYPE], 0) == NFT_DATA_VERDICT;
	return MNL_CB_OK;
}

static int rule_cb(const struct nlmsghdr *nlh, void *data)
{
	struct dump *d = data;
	struct nfx_table *tbl;
	struct nfx_chain *c;
	struct nfx_rule *r;
	struct attrs t;
	unsigned int i;

	attrs_msg(nlh, &t);
	tbl = nfx_table_find(d->rs, msg_family(nlh), str(t.a[NFTA_RULE_TABLE]) ?: "");
	c = tbl ? nfx_chain_find(tbl, str(t.a[NFTA_RULE_CHAIN]) ?: "") : NULL;
	if (!c)
		return MNL_CB_OK;
	r = nfx_rule_add(c, t.a[NFTA_RULE_HANDLE] ?
				    be64toh(mnl_attr_get_u64(t.a[NFTA_RULE_HANDLE])) : 0);
	if (!r || (t.a[NFTA_RULE_EXPRESSIONS] &&
		   nft_rule_exprs(r, t.a[NFTA_RULE_EXPRESSIONS]))) {
		d->err = -ENOMEM;
		return MNL_CB_OK;
	}
	for (i = 0; i < r->n; i++)
		if (nft_rule_needs_set(r, i)) {
			struct nfx_set *s = nfx_set_find(tbl, r->e[i].name);

			if (s)
				s->needed = true;
		}
	return MNL_CB_OK;
}

/* ---- set elements ----------------------------------------------------------------- */

struct elem_dump {
	struct dump *d;
	struct nfx_set *s;
};

static int elem_add(struct nfx_set *s, const struct nlattr *el)
{
	struct attrs t, k;
	const char *chain = NULL;
	int verdict = 0;
	__u32 key = 0;

	attrs_nest(el, &t);
	attrs_nest(t.a[NFTA_SET_ELEM_KEY], &k);
	if (!k.a[NFTA_DATA_VALUE] || mnl_attr_get_payload_len(k.a[NFTA_DATA_VALUE]) != 4)
		return -EINVAL;
	if (be32(t.a[NFTA_SET_ELEM_FLAGS], 0) & NFT_SET_ELEM_INTERVAL_END)
		return -EINVAL;
	memcpy(&key, mnl_attr_get_payload(k.a[NFTA_DATA_VALUE]), 4);
	if (s->vmap && nft_verdict(t.a[NFTA_SET_ELEM_DATA], &verdict, &chain))
		return -EINVAL;
	return nfx_set_add_elem(s, key, verdict, chain);
}

static int elem_cb(const struct nlmsghdr *nlh, void *data)
{
	struct elem_dump *ed = data;
	const struct nlattr *el;
	struct attrs t;

	attrs_msg(nlh, &t);
	if (!t.a[NFTA_SET_ELEM_LIST_ELEMENTS])
		return MNL_CB_OK;
	mnl_attr_for_each_nested(el, t.a[NFTA_SET_ELEM_LIST_ELEMENTS])
		if (elem_add(ed->s, el))
			ed->s->complete = false;
	return MNL_CB_OK;
}

/* Reads the elements of s (in table tbl); a set they cannot all be read
 * of stays incomplete, and lookups in it undecided. */
static int read_elems(struct dump *d, const struct nfx_table *tbl, struct nfx_set *s)
{
	char buf[512];
	struct nlmsghdr *nlh;
	struct elem_dump ed = { .d = d, .s = s };
	static char rbuf[NFT_BUF];
	unsigned int portid = mnl_socket_get_portid(d->nl);
	int ret;

	if (s->klen != 4 || (s->flags & NFT_SET_INTERVAL))
		return 0;
	nlh = nft_msg(buf, NFT_MSG_GETSETELEM, NLM_F_DUMP, tbl->family);
	mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_TABLE, tbl->name);
	mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_SET, s->name);
	s->complete = true;
	if (mnl_socket_sendto(d->nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	do {
		ssize_t n = mnl_socket_recvfrom(d->nl, rbuf, sizeof(rbuf));

		if (n < 0)
			return -errno;
		ret = mnl_cb_run(rbuf, n, nlh->nlmsg_seq, portid, elem_cb, &ed);
	} while (ret > 0);
	if (ret < 0) {
		s->complete = false;
		return -errno;
	}
	return 0;
}

/* ---- one generation --------------------------------------------------------------- */

static int read_once(struct dump *d)
{
	static const __u16 order[] = { NFT_MSG_GETTABLE, NFT_MSG_GETCHAIN,
				       NFT_MSG_GETSET, NFT_MSG_GETRULE };
	static const mnl_cb_t cbs[] = { table_cb, chain_cb, set_cb, rule_cb };
	unsigned int i, j;
	int err;

	for (i = 0; i < 4; i++) {
		char buf[256];

		err = nft_talk(d, nft_msg(buf, order[i], NLM_F_DUMP, NFPROTO_UNSPEC),
			       cbs[i]);
		if (err)
			return err;
	}
	for (i = 0; i < d->rs->n; i++)
		for (j = 0; j < d->rs->tables[i].nsets; j++)
			if (d->rs->tables[i].sets[j].needed) {
				err = read_elems(d, &d->rs->tables[i],
						 &d->rs->tables[i].sets[j]);
				if (err)
					return err;
			}
	return 0;
}

int nft_read(struct nfx_ruleset *rs)
{
	struct dump d = { .rs = rs };
	__u32 gen0, gen1;
	int err, tries;

	d.nl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC);
	if (!d.nl)
		return -errno;
	if (mnl_socket_bind(d.nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		err = -errno;
		goto out;
	}
	for (tries = 0; tries < NFT_TRIES; tries++) {
		nfx_ruleset_free(rs);
		d.intr = false;
		d.err = 0;
		err = read_genid(&d, &gen0);
		err = err ?: read_once(&d);
		err = err ?: read_genid(&d, &gen1);
		if (err == -EINTR || (!err && (d.intr || gen0 != gen1)))
			continue;
		break;
	}
	if (!err && tries == NFT_TRIES)
		err = -EAGAIN;
out:
	mnl_socket_close(d.nl);
	if (err)
		nfx_ruleset_free(rs);
	return err;
}

/* ---- notifications ------------------------------------------------------------------ */

int nft_notify_open(struct mnl_socket **nlp)
{
	struct mnl_socket *nl = mnl_socket_open2(NETLINK_NETFILTER,
						 SOCK_CLOEXEC | SOCK_NONBLOCK);
	int group = NFNLGRP_NFTABLES, err;

	if (!nl)
		return -errno;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0 ||
	    mnl_socket_setsockopt(nl, NETLINK_ADD_MEMBERSHIP, &group, sizeof(group))) {
		err = -errno;
		mnl_socket_close(nl);
		return err;
	}
	*nlp = nl;
	return 0;
}

int nft_notify_drain(struct mnl_socket *nl)
{
	static char buf[NFT_BUF];
	int got = 0;

	for (;;) {
		ssize_t n = mnl_socket_recvfrom(nl, buf, sizeof(buf));

		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return got;
			if (errno == EINTR)
				continue;
			/* ENOBUFS: notifications were lost; read it all again. */
			return errno == ENOBUFS ? 1 : -errno;
		}
		got = 1;
	}
}
