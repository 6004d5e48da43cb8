// SPDX-License-Identifier: GPL-2.0-only
/* One netlink request and its answers: see nlreq.h. */
#include <errno.h>
#include <sys/socket.h>
#include <linux/netlink.h>

#include "nlreq.h"

struct mnl_socket *nlreq_open(int proto, int flags)
{
	struct mnl_socket *nl = mnl_socket_open2(proto, SOCK_CLOEXEC | flags);
	int one = 1, err;

	if (!nl)
		return NULL;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		err = errno;
		mnl_socket_close(nl);
		errno = err;
		return NULL;
	}
	mnl_socket_setsockopt(nl, NETLINK_EXT_ACK, &one, sizeof(one));
	return nl;
}

int nlreq_run(struct mnl_socket *nl, struct nlmsghdr *nlh, __u32 seq,
	      mnl_cb_t cb, void *data)
{
	char buf[NLREQ_BUF];
	unsigned int portid = mnl_socket_get_portid(nl);
	ssize_t n;
	int ret;

	nlh->nlmsg_seq = seq;
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	do {
		n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
		if (n < 0)
			return -errno;
		ret = mnl_cb_run(buf, n, seq, portid, cb, data);
	} while (ret > 0);
	return ret < 0 ? -errno : 0;
}
