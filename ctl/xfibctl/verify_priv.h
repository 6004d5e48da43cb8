/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the parts of `xfibctl verify` share: kfib.c (the kernel's
 * answers and routes), verify_dest.c (the mirrored prefixes),
 * verify_gen.c (the destinations drawn from them), verify_flow.c (the
 * flows drawn from the policy rules) and verify.c (comparing, a run),
 * which calls the others. Not for the rest of xfibctl (verify.h).
 */
#ifndef XFIB_VERIFY_PRIV_H
#define XFIB_VERIFY_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <linux/types.h>

#include "xfib/maps.h"
#include "xfib/rules.h"

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

/* splitmix64: the runs' reproducible random numbers (from the seed). */
static inline __u64 splitmix64(__u64 *s)
{
	__u64 z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* ---- kfib.c ----------------------------------------------------------- */

/* A route socket, bound; NULL with errno set. */
struct mnl_socket *rtnl_open(unsigned int *portid);
/* mnl_attr_parse() callback of a route message into tb[RTA_MAX + 1],
 * the u32 attributes read checked. */
int route_attr_cb(const struct nlattr *a, void *data);
/* The route's table: RTA_TABLE, else the header's. */
__u32 route_table(const struct rtmsg *rtm, const struct nlattr **tb);

/* The selectors of the kernel's policy rules of family fam (from, to,
 * iif, ipproto, sport, dport, tos; an iif resolved in this namespace) as
 * xfib_rules, at most max, into v; how many into *n. -errno. */
int krules_dump(int fam, struct xfib_rule *v, size_t max, size_t *n);

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

/* ---- verify_gen.c ----------------------------------------------------- */

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

/* One destination of the kind gen_next() gives, drawn at random into a
 * (16 bytes): a boundary point of a prefix of p[0] or p[1], or (one in
 * four, or when they have none) a random address. */
void gen_pick(int fam, const struct pfxs *p, __u64 *rng, __u8 *a);

/* Address `which` of prefix/plen (4 or 16 bytes): 0 first, 1 last,
 * 2 before, 3 after; false if it has none (before 0.0.0.0, ...). */
bool pfx_point(const struct pfx *p, size_t alen, int which, __u8 *a);

/* ---- verify_flow.c ---------------------------------------------------- */

/* The flows a family's rules select on, for verify_run(). */
struct flows {
	struct verify_flow *v;
	size_t n;
	unsigned long combinations; /* of the values found; n is at most */
};

/*
 * The flows of the rules in set (fam's, walked): the values of every
 * selector inside and just outside each rule's, combined, grouped by
 * ingress port (ports[0..nports): the attached ports, ascending; iif: the
 * port of the destination sweep), at most max of them (sampled with rng
 * when the combinations are more). out->v is the caller's to free.
 * -errno.
 */
int rule_flows(int fam, const struct xfib_rule_set *set, const __u32 *ports,
	       size_t nports, __u32 iif, unsigned long max, __u64 *rng,
	       struct flows *out);

/* The rules' destination prefixes (to), in out (the caller frees
 * out->v): flows are asked for their edges too. -errno. */
int rule_dst_prefixes(int fam, const struct xfib_rule_set *set,
		      struct pfxs *out);

#endif /* XFIB_VERIFY_PRIV_H */
