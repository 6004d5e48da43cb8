// SPDX-License-Identifier: GPL-2.0-only
/*
 * The prefixes `xfibctl verify` draws its destinations from
 * (verify_gen.c): those of the tables xfibd mirrors, dumped here over
 * rtnetlink.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <linux/rtnetlink.h>
#include <libmnl/libmnl.h>

#include "verify.h"
#include "verify_priv.h"


/* ---- the mirrored prefixes ------------------------------------------------ */



struct dump {
	__u32 table;
	const __u32 *tables; /* those rules reach */
	size_t ntables;
	struct pfxs *out; /* [XFIB_FAMILIES] */
	bool intr;
	int err;
};

static bool table_listed(const struct dump *dp, __u32 table)
{
	size_t i;

	for (i = 0; i < dp->ntables; i++)
		if (dp->tables[i] == table)
			return true;
	return false;
}

static int dump_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[RTA_MAX + 1] = { 0 };
	const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);
	struct dump *dp = data;
	struct pfxs *l;
	struct pfx *p;
	__u32 table;
	size_t alen;

	if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
		dp->intr = true;
	if (nlh->nlmsg_type != RTM_NEWROUTE ||
	    mnl_nlmsg_get_payload_len(nlh) < sizeof(*rtm))
		return MNL_CB_OK;
	if (rtm->rtm_family != AF_INET && rtm->rtm_family != AF_INET6)
		return MNL_CB_OK;
	/* Cached clones are not routes of the table. */
	if (rtm->rtm_flags & RTM_F_CLONED)
		return MNL_CB_OK;
	mnl_attr_parse(nlh, sizeof(*rtm), route_attr_cb, tb);
	table = route_table(rtm, tb);
	if (table != dp->table && table != RT_TABLE_LOCAL &&
	    !table_listed(dp, table))
		return MNL_CB_OK;
	alen = rtm->rtm_family == AF_INET ? 4 : 16;
	if (rtm->rtm_dst_len > alen * 8)
		return MNL_CB_OK;
	l = &dp->out[rtm->rtm_family == AF_INET ? XFIB_V4 : XFIB_V6];
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 1024;

		p = realloc(l->v, cap * sizeof(*p));
		if (!p) {
			dp->err = -ENOMEM;
			return MNL_CB_ERROR;
		}
		l->v = p;
		l->cap = cap;
	}
	p = &l->v[l->n++];
	memset(p, 0, sizeof(*p));
	p->plen = rtm->rtm_dst_len;
	if (tb[RTA_DST] && mnl_attr_get_payload_len(tb[RTA_DST]) == alen)
		memcpy(p->dst, mnl_attr_get_payload(tb[RTA_DST]), alen);
	return MNL_CB_OK;
}

static int dump_family(struct mnl_socket *nl, unsigned int portid, int af,
		       struct dump *dp, char *buf, size_t blen)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	unsigned int seq = time(NULL) + af;
	struct rtmsg *rtm;
	ssize_t n;
	int ret;

	nlh->nlmsg_type = RTM_GETROUTE;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = seq;
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = af;
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	for (;;) {
		n = mnl_socket_recvfrom(nl, buf, blen);
		if (n < 0)
			return -errno;
		ret = mnl_cb_run(buf, n, seq, portid, dump_cb, dp);
		if (ret == MNL_CB_STOP)
			return 0;
		if (ret < 0)
			return dp->err ? dp->err : -errno;
	}
}

static int pfx_cmp(const void *a, const void *b)
{
	const struct pfx *x = a, *y = b;
	int c = memcmp(x->dst, y->dst, 16);

	return c ? c : (int)x->plen - (int)y->plen;
}

/* Host bits cleared; one entry per prefix, whichever table it is in. */
static void pfx_normalise(struct pfxs *l)
{
	size_t i, j, k;

	for (i = 0; i < l->n; i++) {
		for (k = 0; k < 16; k++) {
			unsigned int bits = l->v[i].plen > k * 8 ? l->v[i].plen - k * 8 : 0;

			if (bits < 8)
				l->v[i].dst[k] &= (__u8)(0xff00 >> bits);
		}
	}
	if (!l->n)
		return;
	qsort(l->v, l->n, sizeof(*l->v), pfx_cmp);
	for (i = 1, j = 1; i < l->n; i++)
		if (pfx_cmp(&l->v[i], &l->v[j - 1]))
			l->v[j++] = l->v[i];
	l->n = j;
}

int dump_prefixes(__u32 table, const __u32 *tables, size_t ntables,
		  struct pfxs *out)
{
	size_t blen = DUMP_BUF_SIZE;
	struct mnl_socket *nl = NULL;
	unsigned int portid;
	char *buf = malloc(blen);
	int tries, fam, err = 0;

	if (!buf)
		return -ENOMEM;
	nl = rtnl_open(&portid);
	if (!nl) {
		err = -errno;
		goto out;
	}
	for (tries = 0; tries < DUMP_TRIES; tries++) {
		struct dump dp = { .table = table, .tables = tables,
				   .ntables = ntables, .out = out };

		for (fam = 0; fam < XFIB_FAMILIES; fam++)
			out[fam].n = 0;
		err = dump_family(nl, portid, AF_INET, &dp, buf, blen);
		if (!err)
			err = dump_family(nl, portid, AF_INET6, &dp, buf, blen);
		if (err)
			goto out;
		/* The tables changed during the dump: take another. */
		if (!dp.intr)
			break;
	}
	if (tries == DUMP_TRIES) {
		err = -EINTR;
		goto out;
	}
	for (fam = 0; fam < XFIB_FAMILIES; fam++)
		pfx_normalise(&out[fam]);
out:
	if (nl)
		mnl_socket_close(nl);
	free(buf);
	return err;
}
