/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A netlink request socket and one request on it: the message sent, its
 * answers run through a callback until the ack or the end of the dump.
 * For the short exchanges of ctl/lib (the netdev family, a veth's peer,
 * a namespace's nsid); the daemon's mirror has its own reader.
 */
#ifndef XFIB_NLREQ_H
#define XFIB_NLREQ_H

#include <linux/types.h>
#include <libmnl/libmnl.h>

/* Room for one answer of a dump (libmnl's page-sized default may be
 * smaller than what the kernel packs into one read). */
#define NLREQ_BUF (MNL_SOCKET_BUFFER_SIZE > 8192 ? MNL_SOCKET_BUFFER_SIZE : 8192)

/* A bound socket of protocol proto (flags: SOCK_NONBLOCK or 0), with
 * extended acks on, or NULL with errno set. */
struct mnl_socket *nlreq_open(int proto, int flags);

/* Sends nlh with sequence number seq and runs cb on the answers until
 * the ack or the end of the dump: 0 or -errno. */
int nlreq_run(struct mnl_socket *nl, struct nlmsghdr *nlh, __u32 seq,
	      mnl_cb_t cb, void *data);

#endif /* XFIB_NLREQ_H */
