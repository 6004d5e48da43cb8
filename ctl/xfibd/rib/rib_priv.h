/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the parts of the RIB share among themselves. Not for the rest of
 * the daemon. The parts call each other one way, from the top down:
 *
 *   rib.c          setup, full sync, adoption, grace periods
 *   rib_link.c     links, their addresses and settings
 *   rib_route.c    routes and their variants  <->  rib_nhobj.c  nexthop
 *                  objects (a variant uses an object, an object updates
 *                  the variants that use it)
 *   rib_expiry.c   routes' lifetimes
 *   rib_prefix.c   prefixes, the routes found through them, their
 *                  answers, the commit
 *   rib_nexthop.c  neighbours, nexthops, groups: the shared core
 *   rib_port.c, rib_local4.c  the xfib_ifaces and xfib_nonlocal4 writers
 *   rib_rule.c     policy rules, published in xfib_rules  ->
 *                  rib_rule_class.c  what xfib can do with each,
 *                  rib_table.c  the slots of the tables they reach
 *
 * rib_check.c reads them all; rib_dp_bpf.c gives the RIB its maps.
 */
#ifndef XFIB_RIB_PRIV_H
#define XFIB_RIB_PRIV_H

#include <errno.h>
#include <stddef.h>
#include <sys/socket.h>
#include <linux/rtnetlink.h>

#include "rib.h"

static inline int family_index(int family)
{
	return family == AF_INET6 ? XFIB_V6 : XFIB_V4;
}

/* Bytes of an address of the family at index fam. */
static inline size_t family_addr_len(int fam)
{
	return fam == XFIB_V6 ? 16 : 4;
}

/* The hashed part of a prefix's key (rib_prefix_key, rib_prefix). */
static inline size_t prefix_key_len(int fam)
{
	return offsetof(struct rib_prefix_key, dst) + family_addr_len(fam);
}

/* The class of fam's routes of kernel table id table (RIB_TCLASS_*, or
 * 1 + the slot a rule's table has), RIB_TCLASS_NONE if not mirrored.
 * Main and local first: the other tables cost their routes nothing. */
static inline __u8 rib_table_class(const struct rib *r, int fam, __u32 table)
{
	unsigned int s;

	if (table == r->table)
		return RIB_TCLASS_MAIN;
	if (table == RT_TABLE_LOCAL)
		return RIB_TCLASS_LOCAL;
	for (s = 1; s < XFIB_TABLE_SLOTS; s++) {
		const struct rib_tslot *ts = &r->tslot[fam][s];

		if (ts->table == table && !ts->main_copy && !ts->retiring)
			return 1 + s;
	}
	return RIB_TCLASS_NONE;
}

static inline struct rib_link *link_find(struct rib *r, int ifindex)
{
	return htab_find(&r->links, &ifindex);
}

/* Index stacks: the free indexes of an array, taken from the top. */
static inline int idx_alloc(__u32 *stack, __u32 *n, __u32 *idx)
{
	if (!*n)
		return -ENOSPC;
	*idx = stack[--*n];
	return 0;
}

/* Takes idx out of the stack (adoption: an index the pinned map uses). */
static inline void idx_take(__u32 *stack, __u32 *n, __u32 idx)
{
	__u32 i;

	for (i = 0; i < *n; i++) {
		if (stack[i] == idx) {
			stack[i] = stack[--*n];
			return;
		}
	}
}

/* ---- rib_nexthop.c ---------------------------------------------------- */

/*
 * The nexthops of the default routes of the mirrored table take indexes
 * of their own (include/xfib/maps.h): those of the kinds whose route
 * the kernel's suppress_prefixlength suppresses (a lookup that found a
 * route, not a blackhole, unreachable or prohibit one's error:
 * fib_rules_lookup) and that XDP itself acts on (a local or unsupported
 * answer goes to the kernel, which suppresses it itself).
 */
static inline bool nh_kind_dflt(__u8 kind)
{
	return kind == XFIB_NH_GATEWAY || kind == XFIB_NH_CONNECTED ||
	       kind == XFIB_NH_GROUP;
}

/* The group of a group nexthop, or of a default route's alias of one;
 * NULL for an adopted one. */
static inline struct rib_group *nexthop_group(const struct rib_nexthop *nh)
{
	return nh->base ? nh->base->group : nh->group;
}

/* Makes k a default route's (dflt) or another route's key. A group's
 * takes group_nh_dflt(). */
static inline void nh_key_dflt(struct rib_nh_key *k, bool dflt)
{
	k->dflt = dflt && nh_kind_dflt(k->kind) && k->kind != XFIB_NH_GROUP;
}

/* Writes n's MAC, state and source MAC to its entry. */
void neigh_write_words(struct rib *r, struct rib_neigh *n);
/* Frees n if nothing needs it any more. */
void neigh_put(struct rib *r, struct rib_neigh *n);
/* Rewrites the neighbours of a link (its MAC changed), or drops them
 * (drop: the link went away). */
void link_neighs_refresh(struct rib *r, int ifindex, bool drop);

/* The nexthop of key k, with a reference; NULL when there is no room. */
struct rib_nexthop *nexthop_get(struct rib *r, const struct rib_nh_key *k);
void nexthop_put(struct rib *r, struct rib_nexthop *nh);
/* Frees nh, whose last reference is gone (or an adopted one none took). */
void nexthop_free(struct rib *r, struct rib_nexthop *nh);
/* The kernel-decides nexthop, with a reference: never fails once
 * rib_nh_unsupported() has succeeded. */
struct rib_nexthop *nexthop_unsupported(struct rib *r);

int group_members(struct rib *r, const struct rib_path *p, __u16 n,
		  struct rib_group_key *k, struct rib_nexthop **member);
struct rib_group *group_new(struct rib *r, const struct rib_group_key *k,
			    struct rib_nexthop **member, bool shared);
void group_set(struct rib *r, struct rib_group *g, const struct rib_path *p,
	       __u16 n, __u32 first_dev);
__u16 group_paths(const struct rib_group *g, struct rib_path *p);
/* The nexthop of a set of paths, with a reference (a shared group for
 * more than one), a default route's if dflt; first_dev: the device of
 * the route's first path (struct rib_group_key), 0 for none. NULL when
 * there is no room. */
struct rib_nexthop *paths_nexthop(struct rib *r, const struct rib_path *p,
				  __u16 n, __u32 first_dev, bool dflt);
/* The default routes' alias of group nexthop gnh, with a reference;
 * takes over the caller's reference on gnh (which keeps the group alive
 * while the alias lives). NULL, gnh let go, when there is no room. */
struct rib_nexthop *group_nh_dflt(struct rib *r, struct rib_nexthop *gnh);
/* Something had to go to the kernel for want of an index: logged once,
 * then counted and reported at most every few seconds
 * (rib_report_no_room). */
void rib_no_room(struct rib *r, const char *what, __u32 capacity);

/* ---- rib_link.c ------------------------------------------------------- */

/* What xfib_ifaces is to say of link l. */
void iface_value(const struct rib *r, const struct rib_link *l,
		 struct xfib_iface *out);
/* Writes l's xfib_ifaces entry (if it has one: XFIB_PORT_MAX). */
void iface_write(struct rib *r, struct rib_link *l);

/* ---- rib_fdb.c -------------------------------------------------------- */

int fdb_init(struct rib *r);
void fdb_fini(struct rib *r);
/* Takes over the entries a previous xfibd left in xfib_fdb. */
void fdb_adopt(struct rib *r);
void fdb_mark_stale(struct rib *r);
void fdb_sweep_stale(struct rib *r);
/* Forgets the entries of a bridge that is gone or no longer one. */
void fdb_flush_bridge(struct rib *r, int bridge);
/* The member neighbour n's MAC is behind on its bridge, 0 if none (not a
 * bridge, unknown, the bridge's own): struct xfib_neigh.tx_port. */
__u32 fdb_neigh_port(const struct rib *r, const struct rib_neigh *n);

/* ---- rib_port.c ------------------------------------------------------- */

/* Takes over the ports' entries as the pinned array has them. */
void port_init(struct rib *r);
/* Port ifindex is now v, or absent (v NULL); nothing at or above
 * XFIB_PORT_MAX. Written at once, or after the next grace period. */
void port_write(struct rib *r, __u32 ifindex, const struct xfib_iface *v);
/* After a grace period: writes the changes that waited for it. */
void port_flush(struct rib *r);
/* Clears the entries of ports that are not links (left by a previous
 * xfibd for devices gone since). */
void port_sweep(struct rib *r);

/* ---- rib_route.c ------------------------------------------------------ */

/* Removes v from its route (freeing the route with its last variant). */
void variant_remove(struct rib *r, struct rib_variant *v);
/* Marks v as left to the kernel for want of an index, or not. */
void variant_no_room(struct rib *r, struct rib_variant *v, bool no_room);
/* Points v at nh (whose reference it takes). */
void variant_set_nh(struct rib *r, struct rib_variant *v, struct rib_nexthop *nh);
/* Whether v is a default route (a /0) of the mirrored table, whose
 * nexthop is of the default routes' own (include/xfib/maps.h). */
static inline bool variant_dflt(const struct rib_variant *v)
{
	const struct rib_prefix *p = v->rt->pfx;

	return p->key.tclass == RIB_TCLASS_MAIN && p->key.plen == 0;
}
/* The kernel flushes routes through a device that goes down (gone
 * false), away, or loses its last IPv4 address (gone true); family 0:
 * both. */
void routes_flush_dev(struct rib *r, int ifindex, int family, bool gone);
void routes_mark_stale(struct rib *r);
void routes_sweep_stale(struct rib *r);
void routes_free_all(struct rib *r);
/* Removes fam's routes of class tclass (a table no rule reaches now). */
void routes_flush_class(struct rib *r, int fam, __u8 tclass);

/* ---- rib_expiry.c ----------------------------------------------------- */

/* Sets v's deadline from m (none without a lifetime) and queues its
 * check. */
void variant_expiry_set(struct rib *r, struct rib_variant *v,
			const struct rib_route_msg *m);

/* ---- rib_prefix.c ----------------------------------------------------- */

/* The route of key k among p's; NULL if there is none. */
struct rib_route *route_in(struct rib_prefix *p, const struct rib_route_key *k);
/* The route of key k, found through its prefix; NULL if there is none. */
struct rib_route *route_find(struct rib *r, const struct rib_route_key *k);
void route_key_of(const struct rib_route *rt, struct rib_route_key *k);

/* The prefix of route key rk, created if need be; NULL without memory. */
struct rib_prefix *prefix_get(struct rib *r, const struct rib_route_key *rk);
/* k of rk's prefix; k->tclass RIB_TCLASS_NONE: a table not mirrored. */
void prefix_key(const struct rib *r, const struct rib_route_key *rk,
		struct rib_prefix_key *k);
/* p's routes changed: its answer is worked out again at the next commit. */
void prefix_mark(struct rib *r, struct rib_prefix *p);
/* rt changed: its prefix's answer is worked out again. */
static inline void route_changed(struct rib *r, struct rib_route *rt)
{
	prefix_mark(r, rt->pfx);
}
void prefix_unlink(struct rib_prefix *p, struct rib_route *rt);
void prefix_free(struct rib *r, struct rib_prefix *p);

/* ---- rib_local4.c ----------------------------------------------------- */

int local4_init(struct rib *r);
void local4_fini(struct rib *r);
/* IPv4 prefix p's committed answer is local, or not (or p goes). */
void local4_commit(struct rib *r, struct rib_prefix *p, bool local);
/* The counts and xfib_nonlocal4 against the committed answers (rib_check). */
bool local4_check(const struct rib *r, char *why, size_t len);

/* ---- rib_table.c ------------------------------------------------------ */

/* Gives each table fam's rules reach a slot (keeping the slots of those
 * still reached), retires the slots no rule reaches. */
void tables_assign(struct rib *r, int fam);
/* The slot a lookup rule's table has: XFIB_TSLOT_MAIN, XFIB_TSLOT_LOCAL,
 * 1.., or XFIB_TSLOT_NONE. */
__u8 tables_rule_slot(const struct rib *r, int fam, const struct xfib_rule *x);
/* Rules naming no retiring slot are published: frees those slots. */
void tables_release(struct rib *r);
/* A full sync has read every route: the slots it loaded are complete. */
void tables_loaded(struct rib *r);
int tables_init(struct rib *r);
void tables_fini(struct rib *r);

/* ---- rib_nhobj.c ------------------------------------------------------ */

/* Links v (v->nhid set) to its object, creating a placeholder for an id
 * not known yet, and returns the nexthop its route uses, with a
 * reference: the unsupported one until the object is known or if there
 * is no room (v->no_room). */
struct rib_nexthop *nhobj_attach(struct rib *r, struct rib_variant *v);
/* Unlinks v from its object. */
void nhobj_detach(struct rib *r, struct rib_variant *v);
void nhobj_flush_dev(struct rib *r, int ifindex);
void nhobjs_mark_stale(struct rib *r);
void nhobjs_sweep_stale(struct rib *r);
void nhobjs_free_all(struct rib *r);

#endif /* XFIB_RIB_PRIV_H */
