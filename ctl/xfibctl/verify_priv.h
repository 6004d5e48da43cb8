/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the parts of `xfibctl verify` share: kfib.c (the kernel's
 * answers and routes), verify_dest.c (the mirrored prefixes and the
 * destinations drawn from them) and verify.c (comparing, a run), which
 * calls the other two. Not for the rest of xfibctl (verify.h).
 */
#ifndef XFIB_VERIFY_PRIV_H
#define XFIB_VERIFY_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <linux/types.h>

#include "xfib/maps.h"

struct mnl_socket;
struct nlattr;
struct rtmsg;

/* Dump parts are at most 32 KiB; larger receive buffers save nothing. */
#define DUMP_BUF_SIZE (64 << 10)
#define DUMP_TRIES 5

static inline size_t fam_alen(int fam)
{
	return fam == XFIB_V4 ? 4 : 16;
}

static inline int fam_af(int fam)
{
	return fam == XFIB_V4 ? AF_INET : AF_INET6;
}

static inline const char *fam_str(int fam)
{
	return fam == XFIB_V4 ? "ipv4" : "ipv6";
}

/* ---- kfib.c ----------------------------------------------------------- */

/* A route socket, bound; NULL with errno set. */
struct mnl_socket *rtnl_open(unsigned int *portid);
/* mnl_attr_parse() callback of a route message into tb[RTA_MAX + 1],
 * the u32 attributes read checked. */
int route_attr_cb(const struct nlattr *a, void *data);
/* The route's table: RTA_TABLE, else the header's. */
__u32 route_table(const struct rtmsg *rtm, const struct nlattr **tb);

/* ---- verify_dest.c ---------------------------------------------------- */

struct pfx {
	__u8 dst[16];
	__u8 plen;
};

struct pfxs {
	struct pfx *v;
	size_t n, cap;
};

/* The prefixes of table, the local table and the tables[0..ntables)
 * policy rules reach, per family, sorted, each once (out[XFIB_FAMILIES];
 * the caller frees each .v). -errno. */
int dump_prefixes(__u32 table, const __u32 *tables, size_t ntables,
		  struct pfxs *out);

/* Destinations of one family: every prefix's boundary points, then
 * rnd_left random ones. */
struct gen {
	int fam;
	const struct pfxs *p;
	size_t fixed;          /* next boundary point: prefix fixed / 4 */
	unsigned long rnd_left;
	__u64 rng;
};

/* The next destination into a (16 bytes); false when there is none. */
bool gen_next(struct gen *g, __u8 *a);

#endif /* XFIB_VERIFY_PRIV_H */
