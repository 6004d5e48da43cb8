/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The daemon's copy of the kernel's forwarding state (links, neighbours,
 * routes) and the index arrays it owns in the dataplane (nexthops,
 * neighbours, interfaces). Netlink feeds it; publish.c compiles its routes
 * into lookup instances.
 *
 * Index lifetime: a nexthop or neighbour index is written completely before
 * anything that packets read points at it, and is reused only after it is
 * unreferenced, the instance that referenced it has been replaced, and an
 * RCU grace period has passed (rib_reclaim).
 */
#ifndef XFIB_RIB_H
#define XFIB_RIB_H

#include <stdbool.h>
#include <linux/types.h>
#include <net/if.h>

#include "htab.h"
#include "ptree.h"
#include "xfib/maps.h"

struct xfib_fwd_bpf;

struct rib_link {
	struct htab_node node;
	int ifindex; /* key */
	char name[IF_NAMESIZE];
	__u8 mac[6];
	__u32 mtu;
	__u32 ifflags;   /* IFF_* */
	int fwd4, rpf4;  /* from netconf; -1 unknown */
	int addrs;
	bool stale;
};

struct rib_neigh_key {
	__u32 ifindex;
	__u8 family;
	__u8 pad[3];
	__u8 addr[16];
};

struct rib_neigh {
	struct htab_node node;
	struct rib_neigh_key key;
	__u32 idx;
	__u32 nh_refs;   /* gateway nexthops using it */
	bool in_kernel;  /* the kernel has a neighbour entry */
	bool usable;
	__u8 mac[6];
	bool stale;
};

/* A nexthop as routes see it; deduplicated by content. */
struct rib_nh_key {
	__u8 kind;
	__u8 family;
	__u16 mtu;
	__u32 ifindex;
	__u8 gw[16];
};

struct rib_group;

/*
 * A nexthop as the dataplane sees it: one xfib_nexthops index. Kind
 * XFIB_NH_GROUP stands for a multipath group; its key holds the group's
 * index in xfib_nh_groups (key.ifindex), which makes it unique.
 */
struct rib_nexthop {
	struct htab_node node;
	struct rib_nh_key key;
	__u32 idx;
	__u32 refs;
	struct rib_neigh *neigh; /* XFIB_NH_GATEWAY */
	struct rib_group *group; /* XFIB_NH_GROUP (NULL when adopted) */
};

/* One path of a multipath route or nexthop object. */
struct rib_path {
	struct rib_nh_key key;
	__u32 weight; /* 1..65536 */
};

/* Members of a group: nexthop indexes (ordered by their keys), weights. */
struct rib_group_key {
	__u32 n;
	struct {
		__u32 nh;
		__u32 weight;
	} m[XFIB_GROUP_MEMBERS];
};

/*
 * A multipath group. Groups of RTA_MULTIPATH routes are shared by content
 * (r->groups), as the kernel shares their fib_info; each nexthop object
 * owns one of its own, rewritten in place when the object changes, so the
 * routes that use it never do.
 */
struct rib_group {
	struct htab_node node;
	struct rib_group_key key;
	struct rib_nexthop *member[XFIB_GROUP_MEMBERS];
	struct rib_nexthop *nh; /* kind XFIB_NH_GROUP: what routes point at */
	bool shared;            /* in r->groups */
};

/* A kernel nexthop object (ip nexthop): one path, or a group of others. */
struct rib_nhobj {
	struct htab_node node;
	__u32 id; /* key */
	bool stale;
	bool is_group;
	struct rib_path path; /* !is_group */
	__u16 ngrp;           /* is_group: member ids and weights */
	struct {
		__u32 id;
		__u32 weight;
	} *grp;
	struct rib_group *group; /* what routes by this id use */
};

/* What identifies a route to the kernel: table, prefix, TOS and metric. */
struct rib_route_key {
	__u8 family;
	__u8 plen;
	__u8 tos;
	__u8 pad;
	__u32 table;
	__u32 priority;
	__u8 dst[16];
};

/*
 * One way the kernel holds a route key. IPv4 has one per key. IPv6 keeps
 * a separate route per nexthop for the same prefix and metric (the same
 * prefix on two devices, or an appended path), told apart by oif and
 * gateway; a multipath route is one variant with paths > 1.
 */
struct rib_variant {
	__s32 oif;
	__u8 gw[16];
	__u32 nhid;  /* route by nexthop object */
	__u16 paths;
	__u8 type;  /* RTN_* */
	bool stale;
	struct rib_nexthop *nh;
};

struct rib_prefix;

struct rib_route {
	struct htab_node node;
	struct rib_route_key key;
	struct rib_variant *var;
	__u16 nvar;
	struct rib_prefix *pfx;      /* routes of the same prefix */
	struct rib_route *pfx_next;
};

/*
 * All routes of one prefix in one table class (mirrored table or local
 * table), whatever their metric or TOS: the unit that has one answer in
 * the lookup structures.
 */
struct rib_prefix_key {
	__u8 family;
	__u8 local; /* 1: the kernel's local table, consulted first */
	__u8 plen;
	__u8 pad;
	__u8 dst[16];
};

struct rib_prefix {
	struct htab_node node;
	struct rib_prefix_key key;
	struct rib_route *routes;
	struct rib_prefix *dirty_next;
	bool dirty;
};

/* A prefix whose answer changed: what an in-place update rewrites. */
struct rib_change {
	__u8 dst[16];
	__u8 plen;
	__u8 local;
};

/* A route as parsed from netlink. */
struct rib_route_msg {
	struct rib_route_key key;
	__u8 type;       /* RTN_* */
	__u8 gw_family;  /* 0: no gateway */
	__u8 gw[16];
	int oif;
	__u32 mtu;
	__u32 nhid;      /* RTA_NH_ID: the route uses a nexthop object */
	__u16 paths;     /* nexthops in RTA_MULTIPATH, else 1 */
	bool unsupported; /* something xfib does not mirror: kernel */
	__u16 npath;     /* live paths of RTA_MULTIPATH, in path[] */
	struct rib_path path[XFIB_GROUP_MEMBERS];
};

/* A nexthop object as parsed from netlink. */
struct rib_nhobj_msg {
	__u32 id;
	bool is_group;
	bool unsupported; /* resilient groups, encapsulation, fdb */
	struct rib_path path;
	__u16 ngrp;
	struct {
		__u32 id;
		__u32 weight;
	} grp[XFIB_GROUP_MEMBERS];
};

struct rib_link_msg {
	int ifindex;
	char name[IF_NAMESIZE];
	__u8 mac[6];
	__u32 mtu;
	__u32 ifflags;
};

struct rib_family_state {
	bool dirty;        /* routes changed since the last publish */
	bool rules_ok;     /* the policy rules send everything to our table */
	bool grace_needed; /* standby slot may still be read */
	__u32 routes;
	__u32 changes;
	/* Prefixes whose answer changed since the lookup structure last
	 * consumed them (rib_commit appends, fib.c empties). */
	struct rib_change *chg;
	size_t nchg, chg_cap;
	bool chg_overflow; /* too many to track: rebuild instead */
};

struct rib {
	struct xfib_fwd_bpf *skel;
	__u32 table;
	struct htab links, neighs, nexthops, routes, prefixes, groups, nhobjs;
	struct rib_prefix *dirty_prefixes;
	/* Each prefix's answer, per family: [0] mirrored table, [1] local. */
	struct ptree tree[XFIB_FAMILIES][2];
	struct xfib_nexthop *nh_map;  /* mmap()ed xfib_nexthops */
	struct xfib_neigh *neigh_map; /* mmap()ed xfib_neighs */
	struct xfib_nh_group *grp_map; /* mmap()ed xfib_nh_groups */
	size_t nh_map_len, neigh_map_len, grp_map_len;
	__u32 *nh_free, nh_nfree;     /* free index stacks */
	__u32 *neigh_free, neigh_nfree;
	__u32 *nh_retired, nh_nretired; /* freed after the next grace period */
	__u32 *neigh_retired, neigh_nretired;
	__u32 *grp_free, grp_nfree;
	__u32 *grp_retired, grp_nretired;
	__u32 ngroups;                /* groups allocated */
	int rcu_inner_fd;
	int v6_fwd;                   /* net.ipv6.conf.all.forwarding */
	int v4_rpf_all;               /* net.ipv4.conf.all.rp_filter */
	struct rib_family_state fam[XFIB_FAMILIES];
	bool resync_wanted;
	bool nhid_waiting;   /* routes name nexthop objects not known yet */
	__u32 nh_fallbacks;  /* routes sent to the kernel for want of a
			      * nexthop or group, since the last commit */
	bool rules_changed;  /* re-read the policy rules */
	struct rib_nexthop *nh_unsupported;
};

int rib_init(struct rib *r, struct xfib_fwd_bpf *skel, __u32 table);
void rib_fini(struct rib *r);
/* Takes over the nexthop and neighbour indexes a previous xfibd left in the
 * pinned maps, so packets keep their meaning until we republish. */
int rib_adopt(struct rib *r);

/* Full sync: mark everything stale, dump, then sweep what was not seen. */
void rib_mark_stale(struct rib *r);
void rib_sweep_stale(struct rib *r);

void rib_link_set(struct rib *r, const struct rib_link_msg *m);
void rib_link_del(struct rib *r, int ifindex);
void rib_addr_change(struct rib *r, int ifindex, int delta);
/* fwd/rpf: -1 when the message did not carry it. */
void rib_netconf(struct rib *r, int family, int ifindex, int fwd, int rpf);
void rib_neigh_set(struct rib *r, int family, int ifindex, const __u8 *addr,
		   const __u8 *mac, bool usable);
void rib_neigh_del(struct rib *r, int family, int ifindex, const __u8 *addr);
void rib_route_set(struct rib *r, const struct rib_route_msg *m, bool replace,
		   bool append);
void rib_route_del(struct rib *r, const struct rib_route_msg *m);
void rib_nhobj_set(struct rib *r, const struct rib_nhobj_msg *m);
void rib_nhobj_del(struct rib *r, __u32 id);

/* Brings the prefix trees up to date with the routes changed since the
 * last call, recording which prefixes' answers changed. */
void rib_commit(struct rib *r);
/* True while route changes are not yet in the lookup structures. */
bool rib_pending(const struct rib *r);

/* The nexthop index the dataplane uses for a route. */
__u32 rib_route_nh(struct rib *r, const struct rib_route *rt);
/* Index of a nexthop that hands packets to the kernel (kept referenced). */
__u32 rib_nh_unsupported(struct rib *r);

/* True while retired indexes wait for rib_reclaim. */
bool rib_retired_pending(const struct rib *r);
/* Waits until no packet can still see what was unpublished, then frees the
 * retired indexes. */
int rib_reclaim(struct rib *r);
int rib_rcu_sync(struct rib *r);

/* Writes the xfib_daemon map entry: the daemon's own fields from info,
 * the RIB's counts. */
void rib_write_daemon_info(struct rib *r, struct xfib_daemon *info);

#endif /* XFIB_RIB_H */
