// SPDX-License-Identifier: GPL-2.0-only
/*
 * From the kernel's IPsec databases to each family's XFRM mode (xfrm.h,
 * include/xfib/xfrm.h). Everything is read again, policies, states and
 * default policies, whenever a notification arrives (an add, update,
 * delete, flush, expiry or new default, or ENOBUFS for lost ones) rather
 * than applied one message at a time: a hard expiry deletes without a
 * delete message, a flush removes a whole type, and a count rebuilt from
 * a dump cannot drift. The notifications of a burst are drained first, so
 * a burst costs one read. The socket is subscribed before the first dump:
 * a change made during it is seen as a notification and read again.
 *
 * Between a change and its publication the dataplane keeps its previous
 * mode, a few milliseconds: configure IPsec before attaching xfib where
 * that matters (see README's security model).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <linux/xfrm.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <libmnl/libmnl.h>

#include "log.h"
#include "monoclock.h"
#include "pin.h"
#include "xfrm.h"

#define XFRM_BUF (64 * 1024)
#define READ_TRIES 3
#define RETRY_MS 1000
#define NOTIFY_RCVBUF (1 << 20)

/* ---- reading ------------------------------------------------------------------ */

struct read_ctx {
	struct xfrm_counts *c;
	bool intr; /* the dump was interrupted by a change */
};

static int read_cb(const struct nlmsghdr *nlh, void *data)
{
	struct read_ctx *r = data;

	if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
		r->intr = true;
	xfrm_count_msg(r->c, nlh);
	return MNL_CB_OK;
}

/*
 * Sends a request of type (a dump if dump, else acknowledged) with
 * payload plen zero bytes, and counts the answer into r. 0 or -errno.
 */
static int request(struct xfrm_watch *w, __u16 type, bool dump, size_t plen,
		   struct read_ctx *r)
{
	static char buf[XFRM_BUF];
	unsigned int portid = mnl_socket_get_portid(w->req);
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	unsigned int seq = ++w->seq;
	ssize_t n;
	int ret;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | (dump ? NLM_F_DUMP : NLM_F_ACK);
	nlh->nlmsg_seq = seq;
	if (plen)
		memset(mnl_nlmsg_put_extra_header(nlh, plen), 0, plen);
	if (mnl_socket_sendto(w->req, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	do {
		n = mnl_socket_recvfrom(w->req, buf, sizeof(buf));
		if (n < 0)
			return -errno;
		ret = mnl_cb_run(buf, n, seq, portid, read_cb, r);
	} while (ret > 0);
	return ret < 0 ? -errno : 0;
}

/* Policies, states and defaults into c; retried when a dump was
 * interrupted. 0 or -errno. */
static int read_all(struct xfrm_watch *w, struct xfrm_counts *c)
{
	struct read_ctx r = { .c = c };
	int tries, err;

	for (tries = 0; tries < READ_TRIES; tries++) {
		memset(c, 0, sizeof(*c));
		r.intr = false;
		err = request(w, XFRM_MSG_GETPOLICY, true, 0, &r);
		err = err ?: request(w, XFRM_MSG_GETSA, true, 0, &r);
		if (!err) {
			err = request(w, XFRM_MSG_GETDEFAULT, false,
				      sizeof(struct xfrm_userpolicy_default), &r);
			/* A kernel without default policies accepts. */
			if (err == -EINVAL || err == -EOPNOTSUPP)
				err = 0;
		}
		if (err || !r.intr)
			return err;
	}
	return -EINTR;
}

/* ---- publishing ----------------------------------------------------------------- */

static void info_text(const struct xfib_xfrm_info *in, char *buf, size_t len)
{
	if (in->mode == XFIB_XFRM_OFF) {
		snprintf(buf, len, "forward");
		return;
	}
	snprintf(buf, len, "to the kernel (%u forward, %u output policies, %u states%s%s%s)",
		 in->fwd_policies, in->out_policies, in->states,
		 in->flags & XFIB_XFRM_FWD_BLOCK ? ", default forward block" : "",
		 in->flags & XFIB_XFRM_OUT_BLOCK ? ", default output block" : "",
		 in->flags & XFIB_XFRM_ERROR ? ", unreadable" : "");
}

static void publish(struct xfrm_watch *w, const struct xfrm_counts *c, int err)
{
	int fd = bpf_map__fd(w->skel->maps.xfib_xfrm);
	__u32 fam;

	for (fam = 0; fam < XFIB_FAMILIES; fam++) {
		struct xfib_xfrm_info *in = &w->info[fam], old = *in;
		char text[160];

		in->fwd_policies = err ? 0 : c->fwd[fam];
		in->out_policies = err ? 0 : c->out[fam];
		in->states = err ? 0 : c->states[fam];
		in->flags = err ? XFIB_XFRM_ERROR : c->flags;
		in->mode = in->fwd_policies || in->out_policies || in->states ||
				   in->flags ? XFIB_XFRM_PASS : XFIB_XFRM_OFF;
		in->checked = time(NULL);
		if (w->published && (old.fwd_policies != in->fwd_policies ||
				     old.out_policies != in->out_policies ||
				     old.states != in->states || old.flags != in->flags))
			in->changes++;
		if (bpf_map_update_elem(fd, &fam, in, BPF_ANY))
			pr_warn("xfrm: publish %s: %s", fam ? "ipv6" : "ipv4",
				strerror(errno));
		if (!w->published || old.mode != in->mode) {
			info_text(in, text, sizeof(text));
			pr_info("xfrm: %s: %s", fam ? "ipv6" : "ipv4", text);
		}
	}
	w->published = true;
}

static void read_publish(struct xfrm_watch *w, __u64 now_ms)
{
	struct xfrm_counts c;
	int err = read_all(w, &c);

	w->dirty = false;
	w->retry_ms = 0;
	if (err) {
		/* Unknown policies may apply: both families to the kernel. */
		pr_warn("xfrm: reading policies and states: %s; retrying", strerror(-err));
		w->retry_ms = now_ms + RETRY_MS;
	}
	publish(w, &c, err);
}

/* ---- the sockets ------------------------------------------------------------------ */

static int open_notify(struct xfrm_watch *w)
{
	/* ACQUIRE: the kernel made a larval state for an output policy's
	 * template. States made by XFRM_MSG_ALLOCSPI are announced to no
	 * one: the next read finds them (they carry no traffic until
	 * completed by an update, which is announced). */
	static const int groups[] = { XFRMNLGRP_POLICY, XFRMNLGRP_SA, XFRMNLGRP_EXPIRE,
				      XFRMNLGRP_ACQUIRE };
	int rcvbuf = NOTIFY_RCVBUF, fd;
	unsigned int i;

	w->notify = mnl_socket_open2(NETLINK_XFRM, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (!w->notify || mnl_socket_bind(w->notify, 0, MNL_SOCKET_AUTOPID) < 0)
		return -errno;
	for (i = 0; i < sizeof(groups) / sizeof(groups[0]); i++) {
		int g = groups[i];

		if (mnl_socket_setsockopt(w->notify, NETLINK_ADD_MEMBERSHIP, &g,
					  sizeof(g)))
			return -errno;
	}
	fd = mnl_socket_get_fd(w->notify);
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	return 0;
}

/* Anything received, or lost (ENOBUFS): 1; nothing: 0; or -errno. */
static int drain(struct xfrm_watch *w)
{
	static char buf[XFRM_BUF];
	int got = 0;

	for (;;) {
		ssize_t n = mnl_socket_recvfrom(w->notify, buf, sizeof(buf));

		if (n >= 0) {
			got = 1;
			continue;
		}
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return got;
		if (errno == EINTR)
			continue;
		return errno == ENOBUFS ? 1 : -errno;
	}
}

int xfrm_watch_init(struct xfrm_watch *w, struct xfib_fwd_bpf *skel)
{
	int err;

	memset(w, 0, sizeof(*w));
	w->skel = skel;
	err = open_notify(w);
	if (!err) {
		w->req = mnl_socket_open2(NETLINK_XFRM, SOCK_CLOEXEC);
		if (!w->req || mnl_socket_bind(w->req, 0, MNL_SOCKET_AUTOPID) < 0)
			err = -errno;
	}
	if (err) {
		struct xfrm_counts none = { 0 };

		/* Policies may exist all the same (PF_KEY, or a kernel
		 * without xfrm_user): both families to the kernel. */
		pr_warn("xfrm: NETLINK_XFRM: %s; IPv4 and IPv6 go to the kernel",
			strerror(-err));
		xfrm_watch_fini(w);
		publish(w, &none, err);
		return 0;
	}
	read_publish(w, mono_ms());
	return 0;
}

void xfrm_watch_fini(struct xfrm_watch *w)
{
	if (w->notify)
		mnl_socket_close(w->notify);
	if (w->req)
		mnl_socket_close(w->req);
	w->notify = w->req = NULL;
}

int xfrm_watch_fds(struct xfrm_watch *w, struct pollfd *pfd)
{
	if (!w->notify)
		return 0;
	*pfd = (struct pollfd){ .fd = mnl_socket_get_fd(w->notify), .events = POLLIN };
	return 1;
}

int xfrm_watch_timeout(struct xfrm_watch *w, __u64 now_ms)
{
	if (!w->req)
		return 1000;
	if (w->dirty)
		return 0;
	if (!w->retry_ms)
		return 1000;
	return w->retry_ms > now_ms ? (int)(w->retry_ms - now_ms) : 0;
}

void xfrm_watch_run(struct xfrm_watch *w, __u64 now_ms)
{
	int err;

	if (!w->req)
		return;
	err = drain(w);

	if (err > 0)
		w->dirty = true;
	else if (err < 0)
		pr_warn("xfrm notifications: %s", strerror(-err));
	if (w->dirty || (w->retry_ms && now_ms >= w->retry_ms))
		read_publish(w, now_ms);
}

void xfrm_watch_resync(struct xfrm_watch *w, __u64 now_ms)
{
	if (!w->req)
		return;
	drain(w);
	read_publish(w, now_ms);
}
