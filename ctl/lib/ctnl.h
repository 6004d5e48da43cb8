/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Conntrack over ctnetlink (NETLINK_NETFILTER, NFNL_SUBSYS_CTNETLINK): read
 * one entry or all of them, change an existing one (timeout, TCP flags),
 * create one. xfibd uses it to prepare flows for the XDP fast path,
 * xfibctl flows to list them; the packet tests and the benchmark create
 * entries with it.
 */
#ifndef XFIB_CTNL_H
#define XFIB_CTNL_H

#include <stdbool.h>
#include <linux/types.h>

struct mnl_socket;

/* One direction of a flow, as conntrack keys it. Addresses and ports in
 * network order, IPv4 in the first 4 bytes. */
struct ctnl_tuple {
	__u8 family;	/* AF_INET, AF_INET6 */
	__u8 proto;	/* IPPROTO_TCP, _UDP, _ICMP, _ICMPV6 */
	__u8 icmp_type;
	__u8 icmp_code;
	__be16 sport;	/* ICMP echo: the identifier */
	__be16 dport;
	__u8 src[16];
	__u8 dst[16];
};

/* The longest helper name conntrack has (NF_CT_HELPER_NAME_LEN). */
#define CTNL_HELPER_NAME_LEN 16

/* An entry as ctnl_get and ctnl_dump read it. */
struct ctnl_entry {
	struct ctnl_tuple orig, reply;
	__u32 id;	 /* conntrack's id of the entry */
	__u32 status;	 /* IPS_* */
	__u32 timeout;	 /* seconds left */
	__u32 mark;
	__u16 zone;	 /* the entry's zone, or if it has none the zone of
			  * one of its directions; 0: the default zone */
	bool tcp;	 /* the TCP fields are set */
	__u8 tcp_state;	 /* enum tcp_conntrack */
	__u8 tcp_flags[2]; /* IP_CT_TCP_FLAG_* per direction */
	char helper[CTNL_HELPER_NAME_LEN]; /* the helper's name; "": none */
};

/* What ctnl_update and ctnl_create set. */
struct ctnl_change {
	__u32 timeout;	   /* seconds; 0 leaves it (update) */
	__u32 status;	   /* create: IPS_* bits to set (SEEN_REPLY, ASSURED);
			    * ignored by update */
	bool tcp_liberal;  /* IP_CT_TCP_FLAG_BE_LIBERAL in both directions */
	int tcp_state;	   /* create: enum tcp_conntrack; -1 leaves it */
	__u16 zone;	   /* create: conntrack zone */
	const __u8 *snat;  /* create: source NAT to this address ... */
	__be16 snat_port;  /* ... and port (TCP/UDP, ICMP echo id), if not 0 */
	const __u8 *dnat;  /* create: destination NAT to this address ... */
	__be16 dnat_port;  /* ... and port (TCP/UDP), if not 0 */
	const char *helper; /* create: attach this conntrack helper ("ftp") */
};

/* A socket for requests in the caller's network namespace: 0 or -errno. */
struct nlmsghdr;
/* The header of a netfilter netlink request of subsystem subsys
 * (NFNL_SUBSYS_*) and message type, for family, in buf. */
struct nlmsghdr *nfnl_msg(char *buf, __u8 subsys, __u16 type, __u16 flags,
			  __u8 family);
int ctnl_open(struct mnl_socket **nl);
void ctnl_close(struct mnl_socket *nl);

/* The entry either of whose tuples is t (default zone): 0, -ENOENT, or
 * -errno. */
int ctnl_get(struct mnl_socket *nl, const struct ctnl_tuple *t,
	     struct ctnl_entry *e);

/* Calls fn for every entry of family (AF_INET, AF_INET6, or AF_UNSPEC:
 * both) in the caller's network namespace, in conntrack's order. Stops at
 * fn's first non-zero return, which it returns; else 0 or -errno (-EPERM
 * without CAP_NET_ADMIN). An entry may be seen twice if the table is
 * resized meanwhile (same id). */
int ctnl_dump(struct mnl_socket *nl, __u8 family,
	      int (*fn)(const struct ctnl_entry *e, void *arg), void *arg);

/* Changes the existing entry either of whose tuples is t: 0, -ENOENT if
 * there is none, or -errno. */
int ctnl_update(struct mnl_socket *nl, const struct ctnl_tuple *t,
		const struct ctnl_change *c);

/* Deletes the entry one of whose tuples is t: 0, -ENOENT, or -errno. */
int ctnl_delete(struct mnl_socket *nl, const struct ctnl_tuple *t);

/* Creates a confirmed entry with original tuple t (the reply tuple is its
 * inverse, or NAT's): 0, -EEXIST, or -errno. */
int ctnl_create(struct mnl_socket *nl, const struct ctnl_tuple *t,
		const struct ctnl_change *c);

/* The tuple of the other direction of a flow without NAT. */
void ctnl_tuple_invert(const struct ctnl_tuple *t, struct ctnl_tuple *inv);

#endif /* XFIB_CTNL_H */
