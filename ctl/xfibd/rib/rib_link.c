// SPDX-License-Identifier: GPL-2.0-only
/*
 * The RIB's links: their state, IPv4 addresses and forwarding settings,
 * and the xfib_ifaces entry each makes. A link going down or away takes
 * its routes, nexthop objects and neighbours with it, as the kernel's do.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if_bridge.h>
#include <linux/netconf.h>
#include <net/if.h>

#include "log.h"
#include "rib_priv.h"

/*
 * The port's rp_filter flags. The kernel's mode is the larger of
 * net.ipv4.conf.all.rp_filter and the port's (IN_DEV_RPFILTER); 1 is
 * strict, any other non-zero value loose (__fib_validate_source()
 * tests rpf == 1). On a port without an IPv4 address the kernel accepts
 * only a source whose route leaves by the port, as in strict mode,
 * whatever the mode.
 */
static __u8 iface_rpf_flags(const struct rib *r, const struct rib_link *l)
{
	int rpf = l->rpf4 > r->v4_rpf_all ? l->rpf4 : r->v4_rpf_all;

	if (rpf <= 0)
		return 0;
	if (rpf == 1 || !l->naddr4)
		return XFIB_IF_RPF;
	return XFIB_IF_RPF | XFIB_IF_RPF_LOOSE;
}

/* What xfib_ifaces says of link l (rib_check compares). */
void iface_value(const struct rib *r, const struct rib_link *l,
		 struct xfib_iface *out)
{
	struct xfib_iface v = { .mtu = l->mtu, .ifindex = l->ifindex,
				.group = l->group };

	memcpy(v.mac, l->mac, 6);
	if ((l->ifflags & IFF_UP) && (l->ifflags & IFF_RUNNING))
		v.flags |= XFIB_IF_UP;
	if (l->fwd4 > 0)
		v.flags |= XFIB_IF_FWD4;
	if (r->v6_fwd > 0)
		v.flags |= XFIB_IF_FWD6;
	v.flags |= iface_rpf_flags(r, l);
	if (l->no_ipv6)
		v.flags |= XFIB_IF_NO_IPV6;
	if (l->no_xmit)
		v.flags |= XFIB_IF_NO_XMIT;
	if (l->is_bridge && !l->br_vlan_filtering && !r->bridge_nf)
		v.bridge |= XFIB_BR_ROUTED;
	if (l->br_master) {
		v.master = l->br_master;
		if (l->br_state == BR_STATE_FORWARDING)
			v.bridge |= XFIB_BR_PORT_FWD;
	}
	*out = v;
}

/* A port beyond XFIB_PORT_MAX is not in xfib_ifaces: the program hands
 * its packets, and those routed out of it, to the kernel. Said once per
 * link. */
void iface_write(struct rib *r, struct rib_link *l)
{
	struct xfib_iface v;

	if ((__u32)l->ifindex >= XFIB_PORT_MAX) {
		if (!l->port_warned)
			pr_warn("link %s: ifindex %d is beyond xfib's %u ports: "
				"the kernel forwards what arrives on it or "
				"leaves by it", l->name, l->ifindex,
				XFIB_PORT_MAX);
		l->port_warned = true;
		return;
	}
	iface_value(r, l, &v);
	port_write(r, l->ifindex, &v);
}

/* ---- links --------------------------------------------------------- */

void rib_link_set(struct rib *r, const struct rib_link_msg *m)
{
	struct rib_link *l = link_find(r, m->ifindex);
	bool was_up, was_running, mac_changed;

	if (!l) {
		l = calloc(1, sizeof(*l));
		if (!l)
			return;
		l->ifindex = m->ifindex;
		l->fwd4 = l->rpf4 = -1;
		l->br_state = -1;
		/* Until the kernel says it takes redirected frames. */
		l->no_xmit = r->xmit_learned;
		r->xmit_wanted |= r->xmit_learned;
		htab_insert(&r->links, l);
		was_up = m->ifflags & IFF_UP;
		was_running = m->ifflags & IFF_RUNNING;
		mac_changed = true;
	} else {
		was_up = l->ifflags & IFF_UP;
		was_running = l->ifflags & IFF_RUNNING;
		mac_changed = memcmp(l->mac, m->mac, 6) != 0;
	}
	/* Rules name devices (iif): a new name or device resolves again. */
	if (strcmp(l->name, m->name))
		r->rules_dirty = true;
	snprintf(l->name, sizeof(l->name), "%s", m->name);
	if (l->is_bridge && !m->is_bridge)
		fdb_flush_bridge(r, l->ifindex);
	if (m->is_bridge && (!l->is_bridge ||
			     l->br_vlan_filtering != m->br_vlan_filtering))
		pr_info("bridge %s: %s", m->name, m->br_vlan_filtering ?
			"filters VLANs: the kernel routes through it" :
			"routed through by xfib on its attached members");
	l->is_bridge = m->is_bridge;
	l->br_vlan_filtering = m->br_vlan_filtering;
	if (m->br_ageing_ms)
		l->br_ageing_ms = m->br_ageing_ms;
	/* The device's own message names its bridge; the STP state comes
	 * with it on a dump, else from the bridge's (rib_link_brport). */
	if (l->br_master != m->br_master)
		l->br_state = -1;
	l->br_master = m->br_master;
	if (m->br_state >= 0)
		l->br_state = m->br_state;
	memcpy(l->mac, m->mac, 6);
	l->mtu = m->mtu;
	if (l->group != m->group && !mac_changed)
		pr_info("link %s: group %u", m->name, m->group);
	/* The walk reads it from the port's entry, rewritten below: no
	 * other state depends on it. */
	l->group = m->group;
	l->ifflags = m->ifflags;
	if (l->no_ipv6 != m->no_ipv6 && !mac_changed)
		pr_info("link %s: IPv6 %s", l->name,
			m->no_ipv6 ? "disabled" : "enabled");
	l->no_ipv6 = m->no_ipv6;
	l->stale = false;
	iface_write(r, l);
	if (mac_changed)
		link_neighs_refresh(r, l->ifindex, false);
	if (was_up && !(m->ifflags & IFF_UP)) {
		pr_info("link %s down: flushing its routes", l->name);
		routes_flush_dev(r, l->ifindex, 0, false);
	}
	if ((was_up && !(m->ifflags & IFF_UP)) ||
	    (was_running && !(m->ifflags & IFF_RUNNING)))
		nhobj_flush_dev(r, l->ifindex);
	if (!was_up && (m->ifflags & IFF_UP)) {
		/* The kernel restores some routes silently: read them back. */
		rib_want_resync(r);
	}
}

void rib_link_ipv6(struct rib *r, int ifindex, bool disabled)
{
	struct rib_link *l = link_find(r, ifindex);

	if (!l || l->no_ipv6 == disabled)
		return;
	pr_info("link %s: IPv6 %s", l->name, disabled ? "disabled" : "enabled");
	l->no_ipv6 = disabled;
	iface_write(r, l);
}

void rib_link_del(struct rib *r, int ifindex)
{
	struct rib_link *l = link_find(r, ifindex);

	routes_flush_dev(r, ifindex, 0, true);
	nhobj_flush_dev(r, ifindex);
	link_neighs_refresh(r, ifindex, true);
	port_write(r, ifindex, NULL);
	r->rules_dirty = true; /* a rule's iif may name it */
	if (l) {
		if (l->is_bridge)
			fdb_flush_bridge(r, ifindex);
		htab_remove(&r->links, l);
		free(l->addr4);
		free(l);
	}
}

void rib_link_brport(struct rib *r, int ifindex, int master, int state)
{
	struct rib_link *l = link_find(r, ifindex);

	if (!l || (l->br_master == master && (state < 0 || l->br_state == state)))
		return;
	if (l->br_master != master)
		l->br_state = -1;
	l->br_master = master;
	if (state >= 0) {
		if (l->br_state >= 0)
			pr_info("link %s: bridge port state %d", l->name, state);
		l->br_state = state;
	}
	iface_write(r, l);
}

void rib_bridge_nf(struct rib *r, bool present)
{
	struct rib_link *l;
	size_t i;

	if (r->bridge_nf == present)
		return;
	r->bridge_nf = present;
	pr_info("bridge-family netfilter chains %s: %s",
		present ? "found" : "gone",
		present ? "the kernel routes through every bridge" :
			  "xfib routes through bridges again");
	htab_for_each(&r->links, l, t, i)
		if (l->is_bridge)
			iface_write(r, l);
}

void rib_link_xmit(struct rib *r, int ifindex, bool xmit)
{
	struct rib_link *l = link_find(r, ifindex);
	bool known;

	if (!l || (l->xmit_known && l->no_xmit == !xmit))
		return;
	known = l->xmit_known;
	l->xmit_known = true;
	if (l->no_xmit == !xmit)
		return;
	l->no_xmit = !xmit;
	if (known && !xmit)
		pr_info("link %s cannot take XDP-redirected frames: the kernel forwards what leaves by it",
			l->name);
	else if (known)
		pr_info("link %s takes XDP-redirected frames again", l->name);
	else
		pr_debug("link %s %s XDP-redirected frames", l->name,
			 xmit ? "takes" : "cannot take");
	iface_write(r, l);
}

static struct rib_addr4 *addr4_find(struct rib_link *l, const struct rib_addr4 *a)
{
	__u32 i;

	for (i = 0; i < l->naddr4; i++)
		if (!memcmp(&l->addr4[i], a, sizeof(*a)))
			return &l->addr4[i];
	return NULL;
}

/* Addresses are kept, not counted: a notification replayed after a dump
 * that already had its change changes nothing. */
void rib_addr4_set(struct rib *r, int ifindex, const struct rib_addr4 *a,
		   bool dumped)
{
	struct rib_link *l = link_find(r, ifindex);

	if (!l || addr4_find(l, a))
		return;
	/* The first address back: the kernel revives the multipath paths
	 * that died with the last one (fib_sync_up), silently. */
	if (!l->naddr4 && !dumped)
		rib_want_resync(r);
	if (l->naddr4 == l->addr4_cap) {
		__u32 cap = l->addr4_cap ? 2 * l->addr4_cap : 4;
		void *p = realloc(l->addr4, cap * sizeof(*l->addr4));

		if (!p)
			return; /* only a flush would be missed: resync then */
		l->addr4 = p;
		l->addr4_cap = cap;
	}
	l->addr4[l->naddr4++] = *a;
	/* Loose rp_filter applies again (iface_rpf_flags()). */
	if (l->naddr4 == 1)
		iface_write(r, l);
}

void rib_addr4_del(struct rib *r, int ifindex, const struct rib_addr4 *a)
{
	struct rib_link *l = link_find(r, ifindex);
	struct rib_addr4 *e = l ? addr4_find(l, a) : NULL;

	if (!e)
		return;
	*e = l->addr4[--l->naddr4];
	if (l->naddr4)
		return;
	iface_write(r, l); /* rp_filter is strict now (iface_rpf_flags()) */
	/* fib_disable_ip(): nothing IPv4 leaves by a device without an IPv4
	 * address, and the kernel says nothing about it. */
	pr_info("link %s has no IPv4 address left: flushing its IPv4 routes",
		l->name);
	routes_flush_dev(r, ifindex, AF_INET, true);
}

void rib_netconf(struct rib *r, int family, int ifindex, int fwd, int rpf)
{
	struct rib_link *l;
	size_t i;

	if (family == AF_INET6) {
		/* ip6_forward() checks the "all" switch, not the device's. */
		if (ifindex != NETCONFA_IFINDEX_ALL || fwd < 0 || fwd == r->v6_fwd)
			return;
		r->v6_fwd = fwd;
	} else if (ifindex == NETCONFA_IFINDEX_ALL) {
		if (rpf < 0 || rpf == r->v4_rpf_all)
			return;
		r->v4_rpf_all = rpf;
	} else if (ifindex > 0) {
		l = link_find(r, ifindex);
		if (!l)
			return;
		if (fwd >= 0)
			l->fwd4 = fwd;
		if (rpf >= 0)
			l->rpf4 = rpf;
		iface_write(r, l);
		return;
	} else {
		return;
	}
	htab_for_each(&r->links, l, tmp, i)
		iface_write(r, l);
}
