/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rtnetlink: the initial dump and the notifications that keep the RIB equal
 * to the kernel's state. Two sockets, as routing daemons do: one for dump
 * requests, one subscribed to the multicast groups, so a dump is never
 * interleaved with notifications.
 */
#ifndef XFIB_NETLINK_H
#define XFIB_NETLINK_H

#include <stdbool.h>
#include <linux/types.h>

struct rib;
struct mnl_socket;
struct nl_reader;

struct nl {
	struct mnl_socket *req;
	struct mnl_socket *ev;
	unsigned int req_portid;
	unsigned int seq;
	bool dump_intr;
	bool dumping; /* what is parsed comes from a dump */
	bool in_rule_dump;
	int rule_fam; /* XFIB_V4 / XFIB_V6: the rules being dumped */
	struct rib *rib;
	char *buf;
	struct nl_reader *reader; /* reads dumps on a second thread */
	__u64 overruns;
	/* Messages dropped for breaking the attribute policy (nl_policy.c),
	 * and the rate limit of their log lines. */
	__u64 parse_errors;
	__u64 parse_logged_ms, parse_unlogged;
	/* STALE neighbours seen since the last nl_neigh_use() */
	struct nl_neigh_ref {
		int ifindex;
		__u8 family;
		__u8 addr[16];
	} *stale;
	size_t nstale, stale_cap;
	/* Devices whose IPv6 addresses changed since nl_link_refresh() */
	int *refresh;
	size_t nrefresh, refresh_cap;
};

/*
 * Without sockets, for the netlink fuzzer: nl_init_offline() sets nl up to
 * feed rib; nl_feed() dispatches a buffer of netlink messages through the
 * same parsing as received notifications (nl_close() frees what it kept).
 */
void nl_init_offline(struct nl *nl, struct rib *rib);
void nl_feed(struct nl *nl, const void *buf, size_t len);
/* rcvbuf: receive buffer of the notification socket, in bytes. */
int nl_open(struct nl *nl, struct rib *rib, int rcvbuf);
void nl_close(struct nl *nl);
int nl_event_fd(const struct nl *nl);
/* Dumps links, forwarding settings, addresses, neighbours and routes into
 * the RIB, everything marked stale first (rib_sweep_stale after it removes
 * what the dump did not show), notifications queued before it discarded.
 * Retries when the kernel reports the dump was interrupted. */
int nl_dump_all(struct nl *nl);
/* Re-reads the policy rules of both families into the RIB, which decides
 * whether the mirror can answer for them (rib_rules_end). */
int nl_check_rules(struct nl *nl);
/* Applies every pending notification. -ENOBUFS: messages were lost and
 * the caller must resync. */
int nl_read_events(struct nl *nl);
/*
 * Tells the kernel that the STALE neighbours seen since the last call are
 * in use (RTM_NEWNEIGH with NTF_USE), if used(ctx, ifindex) says packets
 * may be forwarded to their device. See nl_neigh_use in netlink.c.
 */
void nl_neigh_use(struct nl *nl, bool (*used)(void *ctx, int ifindex), void *ctx);
/* Reads the devices whose IPv6 addresses changed again: whether IPv6 is
 * disabled on them is announced no other way. */
void nl_link_refresh(struct nl *nl);
struct xfib_fdb_key;
/* Renews bridge FDB entry k, behind member port, as a frame from it
 * would (RTM_NEWNEIGH AF_BRIDGE with NTF_USE): for rib_fdb_renew(). */
void nl_fdb_use(void *nl, const struct xfib_fdb_key *k, __u32 port);

#endif /* XFIB_NETLINK_H */
