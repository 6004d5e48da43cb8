/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The daemon's copy of the kernel's forwarding state (links, neighbours,
 * routes, policy rules) and the index arrays it owns in the dataplane
 * (nexthops, neighbours, interfaces). The kernel room (kernel/) feeds it; the fib
 * room (fib/) compiles its routes into lookup instances. Neither is
 * called from here. This header is the room's only door: rib_priv.h
 * lists its parts (links, neighbours, nexthops and groups, routes,
 * prefixes and their answers, nexthop objects, ports, rules) and what
 * they share.
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
#include "objpool.h"
#include "ptree.h"
#include "xfib/maps.h"
#include "xfib/rules.h"

struct xfib_fwd_bpf;

/* An IPv4 address of a link, as the kernel tells one from another. */
struct rib_addr4 {
	__u8 local[4];   /* IFA_LOCAL */
	__u8 address[4]; /* IFA_ADDRESS (the peer of a point-to-point one) */
	__u8 plen;
};

struct rib_link {
	struct htab_node node;
	int ifindex; /* key */
	char name[IF_NAMESIZE];
	__u8 mac[6];
	__u32 mtu;
	__u32 ifflags;   /* IFF_* */
	__u32 group;     /* IFLA_GROUP: the rules' suppress_ifgroup reads it */
	int fwd4, rpf4;  /* from netconf; -1 unknown */
	bool no_ipv6;    /* net.ipv6.conf.<dev>.disable_ipv6, or no IPv6 */
	bool no_xmit;    /* takes no XDP-redirected frames (XFIB_IF_NO_XMIT) */
	bool xmit_known; /* no_xmit came from the kernel */
	/* A bridge (xfib routes through it unless it filters VLANs), and
	 * how long it keeps a learned MAC (rib_fdb.c renews them). */
	bool is_bridge;
	bool br_vlan_filtering;
	__u32 br_ageing_ms;
	/* A member port of bridge br_master (0: none), and its STP state
	 * (BR_STATE_*; -1 not known yet). */
	int br_master;
	int br_state;
	struct rib_addr4 *addr4; /* its IPv4 addresses */
	__u32 naddr4, addr4_cap;
	bool stale;
	bool port_warned; /* said that its ifindex is beyond XFIB_PORT_MAX */
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
	/* A default route's of the mirrored table: its own index, in the
	 * range XFIB_NH_IS_DFLT tells (include/xfib/maps.h), which the
	 * same nexthop of other routes does not share. Only for kinds
	 * nh_key_dflt() takes. */
	__u8 dflt;
	__u8 pad[3];
};

struct rib_group;

/*
 * A nexthop as the dataplane sees it: one xfib_nexthops index. Kind
 * XFIB_NH_GROUP stands for a multipath group; its key holds the group's
 * index in xfib_nh_groups (key.ifindex), which makes it unique, but for
 * a default route's alias of it (key.dflt), which names the same group
 * and keeps it alive by a reference to the group's own nexthop (base).
 */
struct rib_nexthop {
	struct htab_node node;
	struct rib_nh_key key;
	__u32 idx;
	__u32 refs;
	struct rib_neigh *neigh; /* XFIB_NH_GATEWAY */
	struct rib_group *group; /* XFIB_NH_GROUP (NULL when adopted, and
				  * for an alias) */
	struct rib_nexthop *base; /* XFIB_NH_GROUP alias: the group's
				   * nexthop (NULL when adopted) */
};

/* One path of a multipath route or nexthop object. */
struct rib_path {
	struct rib_nh_key key;
	__u32 weight; /* 1..65536 */
};

/*
 * Members of a group: nexthop indexes (ordered by their keys), weights;
 * and the device of the first path as the kernel keeps it (the first of
 * RTA_MULTIPATH, dead or not; a nexthop object group's first member; 0:
 * not known, or an IPv6 route's, which needs none), which an IPv4 rule's
 * suppress_ifgroup reads (struct xfib_nexthop.ifindex of the group):
 * routes of the same paths in another order share no group.
 */
struct rib_group_key {
	__u32 n;
	__u32 first_dev;
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
	struct rib_nhobj *obj;  /* the nexthop object it serves, if any */
};

/*
 * A kernel nexthop object (ip nexthop): one path, or a group of others.
 * Objects cost the dataplane nothing until routes use them: routes by a
 * single object point at the deduplicated nexthop of its path (and are
 * re-pointed when the object changes); a group object takes an
 * xfib_nh_groups entry when its first route comes, rewritten in place
 * when the object changes, and gives it back with its last route.
 */
struct rib_variant;

struct rib_nhobj {
	struct htab_node node;
	__u32 id; /* key */
	bool known; /* false: named by routes or groups, not announced yet */
	bool stale;
	bool is_group;
	struct rib_path path; /* !is_group */
	__u16 ngrp;           /* is_group: member ids and weights */
	struct {
		__u32 id;
		__u32 weight;
	} *grp;
	struct rib_group *group;   /* is_group: while routes use it */
	struct rib_variant *users; /* route variants by this id */
	__u32 nusers;
	__u32 *parents;            /* ids of the groups that list this id */
	__u32 nparents, parents_cap;
};

/* What identifies a route to the kernel: table, prefix, TOS and metric. */
struct rib_route_key {
	__u8 family;
	__u8 plen;
	__u8 tos;
	__u8 src_plen; /* IPv6 source-specific route ("from"): src/src_plen */
	__u32 table;
	__u32 priority;
	__u8 dst[16];
	__u8 src[16];
};

/*
 * One route the kernel holds under a key. IPv4 keeps aliases: several
 * routes of one key (ip route append/prepend, the same subnet on two
 * ports), in an order that decides which one answers (the first); they
 * are told apart by everything else the kernel stores with them (ident).
 * IPv6 keeps a separate route per nexthop for the same prefix and metric
 * (the same prefix on two devices, or an appended path), told apart by
 * oif and gateway; a multipath route is one variant with paths > 1.
 */
struct rib_variant {
	struct rib_variant *next;   /* the route's variants, in kernel order */
	struct rib_route *rt;
	/* A route by nexthop object has no gateway of its own, and only
	 * such a route is one of its object's users (rib_nhobj.c). */
	union {
		__u8 gw[16];   /* !nhid */
		struct {       /* nhid: nhobj->users */
			struct rib_variant *user_next, **user_pprev;
		};
	};
	union {
		__u64 ident;   /* IPv4: hash of the route's own attributes */
		__u64 expires; /* IPv6: CLOCK_MONOTONIC ms when the kernel
				* stops using it; 0: never. IPv4 routes have
				* no lifetime: the kernel ignores it. */
	};
	__s32 oif;
	__u32 nhid;     /* route by nexthop object */
	__u32 mtu;      /* route MTU (RTAX_MTU) */
	__u16 paths;
	__u8 type;      /* RTN_* */
	/* Bits, so that a variant takes 64 bytes, not 72. */
	bool stale : 1;
	bool expired : 1;   /* past expires: the kernel decides until it deletes it */
	bool expiry_seen : 1; /* the kernel itself said it has expired */
	bool no_room : 1;   /* no nexthop or group index for it: the kernel's */
	struct rib_nexthop *nh;
};

struct rib_prefix;

/*
 * A route: its prefix is the rest of its key (rib_route_key). Only a
 * source-specific IPv6 route has src, from its own pool: the others take
 * 40 bytes, not 56.
 */
struct rib_route {
	struct rib_variant *vars;
	struct rib_prefix *pfx;      /* routes of the same prefix */
	struct rib_route *pfx_next;
	__u32 table;
	__u32 priority;
	__u8 tos;
	__u8 src_plen;
	__u16 nvar;
	__u8 src[];                  /* 16 bytes if src_plen */
};

/*
 * All routes of one prefix in one table class (mirrored table, local
 * table, or a table a policy rule reaches), whatever their metric or TOS:
 * the unit that has one answer in the lookup structures.
 */
#define RIB_TCLASS_MAIN 0
#define RIB_TCLASS_LOCAL 1 /* the kernel's local table, consulted first */
/* 1 + slot: the table of that slot (include/xfib/tables.h). */
#define RIB_TCLASS_NONE 0xff /* a table xfibd does not mirror */

struct rib_prefix_key {
	__u8 family;
	__u8 tclass; /* RIB_TCLASS_* */
	__u8 plen;
	__u8 dst[16]; /* IPv4: only the first 4 exist (rib_prefix) */
};

/*
 * Its key comes last, so that an IPv4 prefix is allocated without the 12
 * address bytes it does not use: 32 bytes, not 48. Each family has its
 * own hash table and pool, keyed by that family's part of the key.
 */
struct rib_prefix {
	struct htab_node node;
	struct rib_route *routes;
	bool dirty : 1;        /* in rib.dirty */
	bool answer_local : 1; /* IPv4: counted in rib.local4_count */
	bool local_odd : 1;    /* local table: a route of a type other than
				* local, broadcast, anycast, multicast
				* (counted in rib.local_odd) */
	struct rib_prefix_key key;
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
	__u64 ident;     /* hash of what tells IPv4 aliases apart */
	__u8 type;       /* RTN_* */
	__u8 gw_family;  /* 0: no gateway */
	__u8 gw[16];
	int oif;
	__u32 mtu;
	__u32 nhid;      /* RTA_NH_ID: the route uses a nexthop object */
	__u16 paths;     /* nexthops in RTA_MULTIPATH, else 1 */
	bool unsupported; /* something xfib does not mirror: kernel */
	bool has_expires; /* the route expires (IPv6 RTF_EXPIRES) ... */
	__s32 expires_ms; /* ... in this many ms (<= 0: already expired) */
	__u16 npath;     /* live paths of RTA_MULTIPATH, in path[] */
	int first_oif;   /* the device of RTA_MULTIPATH's first path, dead
			  * or not (fib_info_nhc(fi, 0)) */
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
	__u32 group;  /* IFLA_GROUP (ip link set ... group); 0 if not said */
	bool no_ipv6; /* IPv6 disabled on the device, or not there */
	bool is_bridge;        /* IFLA_INFO_KIND "bridge": */
	bool br_vlan_filtering;
	__u32 br_ageing_ms;    /* 0: not said */
	int br_master;         /* a bridge's port: the bridge, else 0 */
	int br_state;          /* its STP state; -1: not said */
};

/* A bridge's forwarding database entry, mirrored (rib_fdb.c). */
struct rib_fdb {
	struct htab_node node;
	struct xfib_fdb_key key;
	struct xfib_fdb val; /* as published (no marks) */
	bool stale;
	bool moved_seen; /* the last renewal found it marked moved */
};

struct rib_family_state {
	bool dirty;        /* routes changed since the last publish */
	bool rules_ok;     /* the policy rules send everything to our table */
	bool grace_needed; /* standby slot may still be read */
	__u32 routes;
	__u32 changes;
	/* Prefixes whose answer changed since the lookup structure last
	 * consumed them (rib_commit appends, rib_changes_done empties). */
	struct rib_change *chg;
	size_t nchg, chg_cap;
	bool chg_overflow; /* too many to track: rebuild instead */
	bool main_changed; /* the mirrored table's answers changed since
			    * its copy (a table slot) was last built */
};

/*
 * A table a policy rule's lookup reaches, besides main and local, in a
 * slot of include/xfib/tables.h (rib_table.c assigns them, fib_tables.c
 * builds them). Its routes are prefixes of class 1 + slot; a copy of
 * main (for a suppress_prefixlength other than 0) has none of its own:
 * it is built from main's tree.
 */
struct rib_tslot {
	__u32 table;      /* kernel table id; 0: free */
	bool main_copy;
	bool loading;     /* assigned since the last full sync: its routes
			   * are not all here yet */
	bool retiring;    /* no rule reaches it: freed once rules that do
			   * not name it are published */
	bool dirty;       /* changed since fib_tables.c last looked */
	__u32 src_routes; /* IPv6 source-specific prefixes it holds */
	struct ptree tree; /* prefix -> answer (RIB_TABLE_SRC marks a
			    * source-specific one) */
};

/* In a slot's tree: the prefix has source-specific routes. */
#define RIB_TABLE_SRC (1u << 31)

/* A route key with a time at which its variants' expiry is checked. */
struct rib_expiry {
	__u64 when; /* CLOCK_MONOTONIC ms */
	struct rib_route_key key;
};

/*
 * Where the RIB writes what packets read. xfibd's is the pinned maps
 * (rib_dp_bpf.c: the arrays mmap()ed, the hash map by syscall, a grace
 * period by a map-in-map update); the netlink fuzzer's is plain memory.
 * The arrays hold XFIB_NEXTHOP_MAX, XFIB_NEIGH_MAX, XFIB_GROUP_MAX and
 * XFIB_PORT_MAX (port, by ifindex: rib_port.c) entries.
 */
struct rib_dp_ops {
	int (*neigh_host_set)(void *ctx, const struct xfib_neigh_key *k, __u32 idx);
	/* 0, -ENOENT if there was no entry, or -errno. */
	int (*neigh_host_del)(void *ctx, const struct xfib_neigh_key *k);
	/* Returns once no packet can still see what was unpublished. */
	int (*grace_period)(void *ctx);
	void (*daemon_info)(void *ctx, const struct xfib_daemon *info);
	/* xfib_fdb; NULL: not mirrored (the fuzzer). set: 0 or -errno. */
	int (*fdb_set)(void *ctx, const struct xfib_fdb_key *k,
		       const struct xfib_fdb *v);
	void (*fdb_del)(void *ctx, const struct xfib_fdb_key *k);
	/* The entry as the dataplane holds it (its marks): 0 or -errno. */
	int (*fdb_get)(void *ctx, const struct xfib_fdb_key *k,
		       struct xfib_fdb *v);
	/* Every entry in the map, to cb. */
	void (*fdb_walk)(void *ctx,
			 void (*cb)(void *cbctx, const struct xfib_fdb_key *k,
				    const struct xfib_fdb *v),
			 void *cbctx);
};

struct rib_dp {
	const struct rib_dp_ops *ops;
	void *ctx;
	struct xfib_nexthop *nh;
	struct xfib_neigh *neigh;
	struct xfib_nh_group *grp;
	struct xfib_port *port;
	__u64 *nonlocal4; /* XFIB_NONLOCAL4_WORDS (rib_local4.c) */
	/* xfib_rules (2 halves per family) and xfib_rules_active
	 * (rib_rule.c); NULL: the rules are not published (the fuzzer). */
	struct xfib_rule_set *rules;
	struct xfib_rules_active *rules_active;
	/* xfib_br_moving (XFIB_PORT_MAX counts, rib_fdb.c); NULL: not
	 * mirrored (the fuzzer). */
	__u64 *br_moving;
};

/* A family's policy rules, in the kernel's order (rib_rule.c). */
struct rib_rules {
	struct xfib_rule *v;
	__u32 n, cap;
	bool unreadable; /* a rule broke the attribute policy */
	bool nomem;      /* a rule could not be kept */
};

/* The writer's side of a port's xfib_ifaces entry (rib_port.c). */
struct rib_port {
	__u32 last;       /* the last value of live published, 0: none */
	__u64 flip_epoch; /* rib.epoch when it was */
	bool pending;     /* want waits for a grace period */
	struct xfib_iface want;
};

/* The pinned maps of skel as a struct rib_dp; rib_dp_bpf_close undoes it. */
int rib_dp_bpf_open(struct rib_dp *dp, struct xfib_fwd_bpf *skel);
void rib_dp_bpf_close(struct rib_dp *dp);

struct rib {
	struct rib_dp dp;
	__u32 table;
	struct htab links, neighs, nexthops, groups, nhobjs;
	struct htab fdb;          /* struct rib_fdb (rib_fdb.c) */
	bool fdb_full_warned;
	/* Bridge-family netfilter chains see what a bridge passes up and
	 * sends: no bridge is routed through (xfibd.c tells, from nf/). */
	bool bridge_nf;
	struct htab prefixes[XFIB_FAMILIES];
	/* Where routes, their variants and prefixes live (objpool.h). */
	struct objpool route_pool, route_src_pool, variant_pool;
	struct objpool prefix_pool[XFIB_FAMILIES];
	/* Prefixes whose routes changed since the last commit, per family
	 * (the two commit side by side). A list that cannot grow sets
	 * dirty_all: the commit looks at every prefix. */
	struct rib_prefix **dirty[XFIB_FAMILIES];
	size_t ndirty[XFIB_FAMILIES], dirty_cap[XFIB_FAMILIES];
	bool dirty_all;
	/* Each prefix's answer, per family: [0] mirrored table, [1] local. */
	struct ptree tree[XFIB_FAMILIES][2];
	/* The tables rules reach, per family (slot 0 unused: main). */
	struct rib_tslot tslot[XFIB_FAMILIES][XFIB_TABLE_SLOTS];
	bool tables_pending; /* slots changed: the rules wait until the
			      * tables' descriptors say so (fib_tables.c) */
	/* Local-table prefixes with a route other than local, broadcast,
	 * anycast or multicast: main, merged with local, cannot stand for
	 * local in a rule walk (XFIB_RULES_LOCAL_ROUTES). */
	__u32 local_odd[XFIB_FAMILIES];
	/* Netfilter may set a packet's mark before routing: fwmark rules
	 * are the kernel's (xfibd.c tells, from nf/). */
	bool marks[XFIB_FAMILIES];
	struct xfib_nexthop *nh_map;  /* dp.nh, dp.neigh, dp.grp */
	struct xfib_neigh *neigh_map;
	struct xfib_nh_group *grp_map;
	__u32 *nh_free, nh_nfree;     /* free index stacks */
	__u32 *nh_dflt_free, nh_dflt_nfree; /* ... of default routes'
					     * nexthops (XFIB_NH_IS_DFLT) */
	__u32 *neigh_free, neigh_nfree;
	__u32 *nh_retired, nh_nretired; /* freed after the next grace period */
	__u32 *neigh_retired, neigh_nretired;
	__u32 *grp_free, grp_nfree;
	__u32 *grp_retired, grp_nretired;
	__u32 *grp_first; /* per group index: its key's first_dev, which its
			   * nexthops' entries carry */
	__u32 ngroups;                /* groups allocated */
	int v6_fwd;                   /* net.ipv6.conf.all.forwarding */
	int v4_rpf_all;               /* net.ipv4.conf.all.rp_filter */
	struct rib_family_state fam[XFIB_FAMILIES];
	/* A full resync is due. Set by both families' commits, which run on
	 * two threads at once (fib_flush()): reach it only through
	 * rib_want_resync(), rib_resync_wanted() and rib_resync_done(). */
	bool resync_wanted;
	bool routes_stale;   /* a sync marked routes stale: sweep them */
	__u32 no_room;       /* variants left to the kernel for want of a
			      * nexthop, neighbour or group index */
	__u32 no_room_new;   /* ... of which new since the last report */
	__u64 no_room_logged; /* when the last report was logged (ms) */
	__u32 nhobjs_known;  /* nexthop objects the kernel announced */
	struct rib_expiry *exp; /* min-heap by when */
	size_t nexp, exp_cap;
	bool rules_changed;  /* re-read the policy rules */
	/* The policy rules of each family, and the list a dump is filling. */
	struct rib_rules rules[XFIB_FAMILIES], rules_new[XFIB_FAMILIES];
	bool rules_dirty;    /* rules or their devices changed: publish */
	struct rib_nexthop *nh_unsupported;
	/* The ports' XDP features are learned (xdpfeat.h): a new link is no
	 * redirect target until they say it takes redirected frames, and
	 * xmit_wanted asks for them. */
	bool xmit_learned;
	bool xmit_wanted;
	/* Grace periods completed (rib_rcu_sync), counted from 1. */
	__u64 epoch;
	struct rib_port *ports; /* XFIB_PORT_MAX, by ifindex */
	bool ports_pending;     /* a port's change waits for a grace period */
	/* xfib_nonlocal4 (rib_local4.c): per bit, the committed IPv4 prefixes
	 * whose answer is local and that fall under it; and, one bit per word
	 * of dp.nonlocal4, the words that may have bits to set at the next
	 * settle. */
	__u32 *local4_count;
	__u64 *local4_stale;
};

/* dp: where the RIB writes what packets read (copied; the caller closes
 * it after rib_fini). */
int rib_init(struct rib *r, const struct rib_dp *dp, __u32 table);
void rib_fini(struct rib *r);
/* Takes over the nexthop and neighbour indexes a previous xfibd left in the
 * pinned maps, so packets keep their meaning until we republish. */
int rib_adopt(struct rib *r);

/* Full sync: mark everything stale, dump, then sweep what was not seen. */
void rib_mark_stale(struct rib *r);
void rib_sweep_stale(struct rib *r);

void rib_link_set(struct rib *r, const struct rib_link_msg *m);
void rib_link_del(struct rib *r, int ifindex);
/* IPv6 disabled on a known device, or enabled again. */
void rib_link_ipv6(struct rib *r, int ifindex, bool disabled);
/* A bridge's view of its port ifindex (AF_BRIDGE link messages): its
 * bridge (0: it left it) and STP state (-1: not said). */
void rib_link_brport(struct rib *r, int ifindex, int master, int state);
/* Bridge-family netfilter chains appeared or went. */
void rib_bridge_nf(struct rib *r, bool present);
/* A bridge's forwarding database entry (rib_fdb.c): MAC k->mac of
 * bridge k->bridge is behind port; flags enum xfib_fdb_flags. */
void rib_fdb_set(struct rib *r, const struct xfib_fdb_key *k, __u32 port,
		 __u8 flags);
void rib_fdb_del(struct rib *r, const struct xfib_fdb_key *k);
/* Clears the count of moves of each bridge on which every MAC the
 * dataplane saw move has been mirrored since (its entry rewritten).
 * True if a count is left: call again soon. */
bool rib_fdb_moving_settle(struct rib *r);
/* How often rib_fdb_renew() is due (ms). */
__u64 rib_fdb_renew_ms(const struct rib *r);
/* Renews, with use(), each aged entry the dataplane routed from since
 * the last call; returns how many. */
__u32 rib_fdb_renew(struct rib *r,
		    void (*use)(void *ctx, const struct xfib_fdb_key *k,
				__u32 port),
		    void *ctx);
/* Whether link ifindex takes XDP-redirected frames (NETDEV_XDP_ACT_NDO_XMIT). */
void rib_link_xmit(struct rib *r, int ifindex, bool xmit);
/* An IPv4 address added or removed. The kernel flushes the IPv4 routes
 * through a device that loses its last IPv4 address, silently. */
void rib_addr4_set(struct rib *r, int ifindex, const struct rib_addr4 *a,
		   bool dumped);
void rib_addr4_del(struct rib *r, int ifindex, const struct rib_addr4 *a);
/* fwd/rpf: -1 when the message did not carry it. */
void rib_netconf(struct rib *r, int family, int ifindex, int fwd, int rpf);
void rib_neigh_set(struct rib *r, int family, int ifindex, const __u8 *addr,
		   const __u8 *mac, bool usable);
void rib_neigh_del(struct rib *r, int family, int ifindex, const __u8 *addr);
/* Where the kernel put a route it announced, among those of its key. */
enum rib_route_op {
	RIB_ROUTE_DUMPED,  /* in a dump: after those dumped before it */
	RIB_ROUTE_PREPEND, /* new key, or ip route prepend: first */
	RIB_ROUTE_APPEND,  /* NLM_F_APPEND: last */
	RIB_ROUTE_REPLACE, /* NLM_F_REPLACE: in place of the first */
};

void rib_route_set(struct rib *r, const struct rib_route_msg *m,
		   enum rib_route_op op);
void rib_route_del(struct rib *r, const struct rib_route_msg *m);
/* A route of this key is about to be set: start loading what finds it. */
void rib_route_prefetch(struct rib *r, const struct rib_route_key *k);
void rib_nhobj_set(struct rib *r, const struct rib_nhobj_msg *m);
void rib_nhobj_del(struct rib *r, __u32 id);

/* CLOCK_MONOTONIC ms when rib_expire() has work next; 0: none. */
__u64 rib_next_expiry(const struct rib *r);
/* Stops using routes whose lifetime has ended, as the kernel does before
 * it gets round to deleting them. */
void rib_expire(struct rib *r, __u64 now_ms);

/* Brings the prefix trees up to date with the routes changed since the
 * last call, recording which prefixes' answers changed. */
void rib_commit(struct rib *r);
/* The same in three steps: begin, each family's (on any thread: the
 * families share nothing these write), end once both are done. */
void rib_commit_begin(struct rib *r);
void rib_commit_family(struct rib *r, int fam);
void rib_commit_end(struct rib *r);
/* The family's changes are consumed: forgets them. A list grown large (a
 * table load) is freed, not kept at its peak for the next batch. */
void rib_changes_done(struct rib *r, int fam);
/* The IPv4 lookup structures have every change committed so far: sets
 * the xfib_nonlocal4 bits no local answer holds clear any more
 * (rib_local4.c). */
void rib_local4_settle(struct rib *r);
/* True while route changes are not yet in the lookup structures. */
bool rib_pending(const struct rib *r);

/*
 * Policy rules (rib_rule.c). A dump of a family's rules is begun, fed
 * rule by rule (x NULL: one that broke the attribute policy), and ended:
 * complete false (the dump failed) keeps the previous rules. The end
 * returns why the family's rules send it to the kernel (enum
 * xfib_rules_fallback; XFIB_RULES_OK: they do not, the first two being
 * "lookup local" and "lookup <table>" for every packet).
 */
void rib_rules_begin(struct rib *r, int fam);
void rib_rule_dumped(struct rib *r, int fam, const struct xfib_rule *x);
enum xfib_rules_fallback rib_rules_end(struct rib *r, int fam, bool complete);
/* Writes the rules to xfib_rules if they, or the devices they name,
 * changed since the last call (r->rules_dirty). */
int rib_rules_publish(struct rib *r);
/*
 * Sets x->cls and x->reason for a packet xfib forwards, from what x
 * holds (its flags: the iif resolved or not; its tslot) and whether
 * netfilter may mark packets before routing (marks; without, an fwmark
 * selector is decided for mark 0). include/xfib/rules.h says which
 * kernel code each decision follows. Pure: no I/O.
 */
void rib_rule_classify(struct xfib_rule *x, bool marks);
/*
 * Compiles the runs of set's rules that read the source alone into
 * set->range and the run fields of their first rules (include/xfib/rules.h),
 * for the walk of a family of rules built otherwise whole. Pure.
 */
void rib_rule_runs(struct xfib_rule_set *set, int fam);
/* Whether fam's rules, as last dumped, and its local table's routes, as
 * last committed, send it to the kernel (XFIB_RULES_LOCAL_ROUTES): the
 * routes may have changed since the rules were published. Reads only
 * what the family's commit does not write. */
bool rib_rules_local_routes(const struct rib *r, int fam);
/* Whether netfilter may set fam's packets' mark before routing; the
 * rules are published again when that changes. */
void rib_rules_marks(struct rib *r, int fam, bool marks);
/* The tables' descriptors say what the slots hold now (fib_tables.c):
 * the rules that waited for them may be published. */
void rib_tables_published(struct rib *r);

/* The nexthop index the dataplane uses for a route. */
__u32 rib_route_nh(struct rib *r, const struct rib_route *rt);
/* Index of a nexthop that hands packets to the kernel (kept referenced). */
__u32 rib_nh_unsupported(struct rib *r);

/* True while retired indexes, or ports' changes, wait for rib_reclaim. */
bool rib_retired_pending(const struct rib *r);
/* Waits until no packet can still see what was unpublished, then frees the
 * retired indexes and writes the ports' changes that waited. */
int rib_reclaim(struct rib *r);
int rib_rcu_sync(struct rib *r);

/* The RIB's invariants (rib_check.c); false with why filled in if one
 * does not hold. For the netlink fuzzer. */
bool rib_check(const struct rib *r, char *why, size_t len);

/* Logs how often a table was full since the last line, at most every 10 s
 * (the first time is logged at once). */
void rib_report_no_room(struct rib *r);

/* The RIB's own memory, in bytes, by what holds it. */
struct rib_mem {
	size_t routes;  /* routes, their variants and prefixes (pools) */
	size_t trees;   /* the prefix trees */
	size_t buckets; /* the hash tables' bucket arrays */
};

void rib_mem(const struct rib *r, struct rib_mem *m);

/* Writes the xfib_daemon map entry: the daemon's own fields from info,
 * the RIB's counts. */
void rib_write_daemon_info(struct rib *r, struct xfib_daemon *info);

/*
 * Relaxed atomics are enough: the two commit threads only ever store
 * true, and pthread_join() orders their stores before the main loop's
 * next read.
 */
static inline void rib_want_resync(struct rib *r)
{
	__atomic_store_n(&r->resync_wanted, true, __ATOMIC_RELAXED);
}

static inline bool rib_resync_wanted(struct rib *r)
{
	return __atomic_load_n(&r->resync_wanted, __ATOMIC_RELAXED);
}

static inline void rib_resync_done(struct rib *r)
{
	__atomic_store_n(&r->resync_wanted, false, __ATOMIC_RELAXED);
}

#endif /* XFIB_RIB_H */
