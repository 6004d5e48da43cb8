// SPDX-License-Identifier: GPL-2.0-only
/* The veths' peers, probed and followed: see vethwatch.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "log.h"
#include "nlreq.h"
#include "vethwatch.h"

/* Notifications: one message per change of a link of any namespace with
 * an nsid here. */
#define VETHWATCH_RCVBUF (1 << 20)

struct vethwatch_veth {
	int ifindex;
	int peer, nsid;	/* where its peer was at the last probe */
	bool stale;	/* not seen in the dump running */
	char why[256];	/* what was said of it last ("" if it takes frames) */
};

static struct vethwatch_veth *veth_find(struct vethwatch *w, int ifindex)
{
	size_t i;

	for (i = 0; i < w->n; i++)
		if (w->v[i].ifindex == ifindex)
			return &w->v[i];
	return NULL;
}

static struct vethwatch_veth *veth_add(struct vethwatch *w, int ifindex)
{
	struct vethwatch_veth *v;

	if (w->n == w->cap) {
		v = realloc(w->v, (w->cap ? 2 * w->cap : 16) * sizeof(*v));
		if (!v)
			return NULL;
		w->v = v;
		w->cap = w->cap ? 2 * w->cap : 16;
	}
	v = &w->v[w->n++];
	memset(v, 0, sizeof(*v));
	v->ifindex = ifindex;
	return v;
}

static void veth_drop(struct vethwatch *w, struct vethwatch_veth *v)
{
	*v = w->v[--w->n];
}

/* Why veth p is not a redirect target ("" if it is). */
static void veth_why(const struct vethwatch *w, const struct vethpeer *p,
		     char *buf, size_t len)
{
	*buf = '\0';
	if (!vethpeer_xmit(p))
		vethpeer_why(p, buf, len);
	else if (p->nsid != VETHPEER_OURS && w->ev && !w->all_nsid)
		snprintf(buf, len,
			 "its veth peer is in another network namespace, whose changes xfibd cannot hear (NETLINK_LISTEN_ALL_NSID needs CAP_NET_BROADCAST)");
}

/* Probes link ifindex again and reports it through cb: a veth by its
 * peer, another link as a redirect target. Says each new reason once: a
 * probe that failed at info level (the port goes to the kernel for a
 * reason of xfib's own), the peer's settings at debug level (rib_link.c
 * says the port's change). */
static void reprobe(struct vethwatch *w, int ifindex, xdpfeat_cb cb, void *ctx)
{
	struct vethwatch_veth *v = veth_find(w, ifindex);
	struct vethpeer p;
	char why[sizeof(v->why)];
	int err = vethpeer_probe(&w->probe, ifindex, &p);

	if (err == -ENODEV || (!err && !p.veth)) {
		if (v)
			veth_drop(w, v);
		if (!err)
			cb(ctx, ifindex, true);
		return;
	}
	if (err) { /* left to the kernel until the next change or dump */
		p.veth = true;
		p.err = err;
		p.step = "reading the link (RTM_GETLINK)";
	}
	veth_why(w, &p, why, sizeof(why));
	if (!v)
		v = veth_add(w, ifindex);
	if (v) {
		v->peer = p.peer;
		v->nsid = p.nsid;
		v->stale = false;
		if (strcmp(v->why, why) && *why)
			log_msg(p.err ? LOG_LEVEL_INFO : LOG_LEVEL_DEBUG,
				"veth %s (ifindex %d): %s",
				*p.ifname ? p.ifname : "?", ifindex, why);
		snprintf(v->why, sizeof(v->why), "%s", why);
	}
	cb(ctx, ifindex, !*why);
}

int vethwatch_open(struct vethwatch *w, bool events)
{
	int one = 1, grp = RTNLGRP_LINK, rcvbuf = VETHWATCH_RCVBUF, fd, err;

	memset(w, 0, sizeof(*w));
	w->self_nsid = -1;
	err = vethpeer_open(&w->probe);
	if (err || !events)
		return err;
	w->ev = nlreq_open(NETLINK_ROUTE, SOCK_NONBLOCK);
	if (!w->ev) {
		err = -errno;
		goto fail;
	}
	fd = mnl_socket_get_fd(w->ev);
	if (!setsockopt(fd, SOL_NETLINK, NETLINK_LISTEN_ALL_NSID, &one,
			sizeof(one)))
		w->all_nsid = true;
	else
		pr_info("veth peers in other network namespaces cannot be followed (NETLINK_LISTEN_ALL_NSID: %s; it needs CAP_NET_BROADCAST): the kernel forwards what leaves by their veths",
			strerror(errno));
	if (setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &grp,
		       sizeof(grp))) {
		err = -errno;
		goto fail;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	return 0;
fail:
	vethwatch_close(w);
	return err;
}

void vethwatch_close(struct vethwatch *w)
{
	if (w->ev)
		mnl_socket_close(w->ev);
	w->ev = NULL;
	vethpeer_close(&w->probe);
	free(w->v);
	w->v = NULL;
	w->n = w->cap = 0;
}

int vethwatch_fd(const struct vethwatch *w)
{
	return w->ev ? mnl_socket_get_fd(w->ev) : -1;
}

int vethwatch_get(struct vethwatch *w, int ifindex)
{
	struct vethpeer p;
	int err = vethpeer_probe(&w->probe, ifindex, &p);

	if (err)
		return err;
	if (!p.veth)
		return -ENOENT;
	return vethpeer_xmit(&p);
}

/* ---- the dump ------------------------------------------------------------- */

struct dump_ctx {
	struct dump_link {
		int ifindex;
		bool veth;
	} *l;
	size_t n, cap;
	int err;
};

static int dump_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct ifinfomsg *ifm = mnl_nlmsg_get_payload(nlh);
	struct dump_ctx *d = data;
	struct dump_link *v;

	if (nlh->nlmsg_type != RTM_NEWLINK ||
	    mnl_nlmsg_get_payload_len(nlh) < sizeof(*ifm))
		return MNL_CB_OK;
	if (d->n == d->cap) {
		v = realloc(d->l, (d->cap ? 2 * d->cap : 64) * sizeof(*v));
		if (!v) {
			d->err = -ENOMEM;
			return MNL_CB_STOP;
		}
		d->l = v;
		d->cap = d->cap ? 2 * d->cap : 64;
	}
	d->l[d->n].ifindex = ifm->ifi_index;
	d->l[d->n++].veth = vethpeer_is_veth(nlh);
	return MNL_CB_OK;
}

/* The links are listed first and the veths probed after: the probes'
 * requests go on the socket the dump is still answering on. */
int vethwatch_dump(struct vethwatch *w, xdpfeat_cb cb, void *ctx)
{
	struct dump_ctx d = { 0 };
	char buf[256];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifinfomsg *ifm;
	size_t i;
	int err;

	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	ifm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifm));
	ifm->ifi_family = AF_UNSPEC;
	err = nlreq_run(w->probe.nl, nlh, ++w->probe.seq, dump_cb, &d);
	if (!err)
		err = d.err;
	if (err)
		goto out;
	w->self_nsid = nsid_of_self(w->probe.nl, &w->probe.seq);
	for (i = 0; i < w->n; i++)
		w->v[i].stale = true;
	for (i = 0; i < d.n; i++) {
		if (d.l[i].veth)
			reprobe(w, d.l[i].ifindex, cb, ctx);
		else
			cb(ctx, d.l[i].ifindex, true);
	}
	for (i = 0; i < w->n;) {
		if (w->v[i].stale)
			veth_drop(w, &w->v[i]);
		else
			i++;
	}
out:
	free(d.l);
	return err;
}

/* ---- changes -------------------------------------------------------------- */

struct event_ctx {
	struct vethwatch *w;
	int nsid; /* where the message comes from (VETHPEER_OURS: here) */
	xdpfeat_cb cb;
	void *ctx;
	int err;
};

/* The veths whose peer is link ifindex of namespace nsid, probed again
 * (from a list: probing changes w->v). */
static int reprobe_peers_of(struct event_ctx *e, int ifindex)
{
	struct vethwatch *w = e->w;
	size_t i, n = 0;
	int *hit;

	for (i = 0; i < w->n; i++)
		n += w->v[i].nsid == e->nsid && w->v[i].peer == ifindex;
	if (!n)
		return 0;
	hit = malloc(n * sizeof(*hit));
	if (!hit)
		return -ENOMEM;
	for (i = 0, n = 0; i < w->n; i++)
		if (w->v[i].nsid == e->nsid && w->v[i].peer == ifindex)
			hit[n++] = w->v[i].ifindex;
	for (i = 0; i < n; i++)
		reprobe(w, hit[i], e->cb, e->ctx);
	free(hit);
	return 0;
}

static int event_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct ifinfomsg *ifm = mnl_nlmsg_get_payload(nlh);
	struct event_ctx *e = data;
	struct vethwatch_veth *v;

	if ((nlh->nlmsg_type != RTM_NEWLINK && nlh->nlmsg_type != RTM_DELLINK) ||
	    mnl_nlmsg_get_payload_len(nlh) < sizeof(*ifm))
		return MNL_CB_OK;
	/* One of our veths: new, changed (a new or moved peer), deleted. */
	if (e->nsid == VETHPEER_OURS) {
		v = veth_find(e->w, ifm->ifi_index);
		if (nlh->nlmsg_type == RTM_DELLINK) {
			if (v)
				veth_drop(e->w, v);
		} else if (v || vethpeer_is_veth(nlh)) {
			reprobe(e->w, ifm->ifi_index, e->cb, e->ctx);
		}
	}
	/* A peer: its GRO, XDP program, up or down, or its leaving. */
	e->err = reprobe_peers_of(e, ifm->ifi_index);
	return e->err ? MNL_CB_ERROR : MNL_CB_OK;
}

/* The namespace a notification comes from: the nsid the kernel adds to
 * those of other namespaces (NETLINK_LISTEN_ALL_NSID), none for ours
 * unless ours has an nsid of its own. */
static int event_nsid(const struct vethwatch *w, struct msghdr *m)
{
	struct cmsghdr *cm;
	int nsid = VETHPEER_OURS;

	for (cm = CMSG_FIRSTHDR(m); cm; cm = CMSG_NXTHDR(m, cm))
		if (cm->cmsg_level == SOL_NETLINK &&
		    cm->cmsg_type == NETLINK_LISTEN_ALL_NSID &&
		    cm->cmsg_len >= CMSG_LEN(sizeof(int)))
			memcpy(&nsid, CMSG_DATA(cm), sizeof(int));
	return nsid == w->self_nsid ? VETHPEER_OURS : nsid;
}

/* One datagram of notifications: 0, -EAGAIN when there is none, or
 * -errno (-ENOBUFS: some were lost, or one cut short). */
static int read_one(struct vethwatch *w, xdpfeat_cb cb, void *ctx)
{
	char buf[NLREQ_BUF];
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} cbuf;
	struct sockaddr_nl sa;
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct msghdr m = {
		.msg_name = &sa, .msg_namelen = sizeof(sa),
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf.buf, .msg_controllen = sizeof(cbuf.buf),
	};
	struct event_ctx e = { .w = w, .cb = cb, .ctx = ctx };
	ssize_t n = recvmsg(mnl_socket_get_fd(w->ev), &m, 0);

	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	if (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC))
		return -ENOBUFS;
	if (sa.nl_pid) /* not from the kernel */
		return 0;
	e.nsid = event_nsid(w, &m);
	/* Notifications carry sequence number and port id 0. */
	if (mnl_cb_run(buf, n, 0, 0, event_cb, &e) < 0)
		return e.err ? e.err : -errno;
	return 0;
}

int vethwatch_read(struct vethwatch *w, xdpfeat_cb cb, void *ctx)
{
	int err;

	if (!w->ev)
		return 0;
	do
		err = read_one(w, cb, ctx);
	while (!err);
	return err == -EAGAIN ? 0 : err;
}
