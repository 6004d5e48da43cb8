/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The dataplane's decisions around the lookup, written once for the XDP
 * program (bpf/xfib_fwd.bpf.c) and for userspace (ctl/lib/dplookup.c,
 * which answers xfibctl lookup and verify), so that what xfibctl says a
 * packet gets is what the program does with it:
 *
 *  - first, whether anything may be forwarded by the mirror: only while
 *    xfibd's lease on it runs (xfib_lease_check);
 *  - then, whether the family may be forwarded here at all: not while
 *    the kernel has IPsec policies or states for it (xfib_xfrm_check);
 *  - before the lookup, the ingress port's settings for the family and
 *    the address classes the kernel never forwards as plain unicast
 *    (xfib_before_lookup);
 *  - for IPv4, the route back to the source: a local or broadcast source,
 *    and rp_filter (xfib_source_check4);
 *  - after it, the chain from the nexthop index to a verdict
 *    (xfib_after_lookup): multipath member, nexthop kind, egress port
 *    (up, IPv6 enabled, takes redirected frames, MTU), neighbour, the
 *    bridge member behind the neighbour's MAC for a bridge, attached
 *    port, in this order, the first that stops the packet giving its
 *    reason.
 *
 * Like the lookup headers, this compiles with clang -target bpf and with
 * gcc over the same memory (include/xfib/maps.h). The maps are read
 * through accessors the includer defines for its own struct xfib_env,
 * before or after including this header: in the XDP program they are
 * bpf_map_lookup_elem() on the maps; in userspace, reads of the mmap()ed
 * arrays and map lookups by syscall. Each returns NULL for "no such
 * entry", which the chain treats as the program treats a failed map
 * lookup. The per-packet inputs (ingress port, length, flow hash) come in
 * struct xfib_fwd_query and xfib_env_flow_hash(); a query without a packet
 * (xfibctl) sets them so that those checks never stop it.
 */
#ifndef XFIB_DECIDE_H
#define XFIB_DECIDE_H

#include <linux/types.h>
#include "maps.h"
#include "counters.h"
#include "flow_hash.h"
#include "xfrm.h"
#include "lease.h"

#ifndef XFIB_INLINE
#define XFIB_INLINE static inline __attribute__((always_inline))
#endif

/* AF_INET and AF_INET6 (the families in struct xfib_neigh_key): the
 * headers that define them are not for BPF programs. */
#define XFIB_AF_INET 2
#define XFIB_AF_INET6 10



/* ---- accessors: the includer defines these ------------------------------ */

struct xfib_env;

XFIB_INLINE const struct xfib_nexthop *xfib_env_nexthop(struct xfib_env *env,
							 __u32 idx);
XFIB_INLINE const struct xfib_nh_group *xfib_env_group(struct xfib_env *env,
							__u32 idx);
/* The flow hash (flow_hash.h) of what is being forwarded; asked for only
 * when the route is multipath. */
XFIB_INLINE __u32 xfib_env_flow_hash(struct xfib_env *env);
XFIB_INLINE const struct xfib_iface *xfib_env_iface(struct xfib_env *env,
						     __u32 ifindex);
/* xfib_neigh_hosts: the neighbour index of an on-link destination. */
XFIB_INLINE const __u32 *xfib_env_neigh_host(struct xfib_env *env,
					      const struct xfib_neigh_key *key);
XFIB_INLINE const struct xfib_neigh *xfib_env_neigh(struct xfib_env *env,
						     __u32 idx);
/* Non-zero if ifindex is in xfib_tx_ports (attached to xfib). */
XFIB_INLINE int xfib_env_tx_port(struct xfib_env *env, __u32 ifindex);
/* xfib_br_moving: non-zero while MACs moved on bridge ifindex. */
XFIB_INLINE __u32 xfib_env_br_moving(struct xfib_env *env, __u32 ifindex);
/* xfib_xfrm: the family's (XFIB_V4, XFIB_V6) IPsec state. */
XFIB_INLINE const struct xfib_xfrm_info *xfib_env_xfrm(struct xfib_env *env,
							__u32 fam);
/* xfib_nonlocal4: word w (bits 64w..64w+63); 0 if it cannot be read. */
XFIB_INLINE __u64 xfib_env_nonlocal4(struct xfib_env *env, __u32 w);

/* What the chain needs to know about the packet (each caller's own, not
 * a map value: no fixed layout needed). */
struct xfib_fwd_query {
	const void *daddr; /* destination, network order (4 or 16 bytes) */
	__u32 in_ifindex;  /* ingress port; XFIB_IFINDEX_NONE without a packet */
	__u32 l3len;	   /* IP packet length the egress MTU must carry;
			    * 0 without a packet */
	__u8 af;	   /* XFIB_AF_INET or XFIB_AF_INET6 */
};

/* Where a forwarded packet goes: filled as far as the chain got. */
struct xfib_fwd_path {
	__u32 nh_idx;	/* the nexthop taken: the lookup's, or for a
			 * multipath route the member the flow hashes to */
	__u32 ifindex;	/* egress port: the device the route names */
	__u32 tx_ifindex; /* the port the frame is sent by: ifindex, or
			   * for a bridge the member its FDB names */
	__u64 neigh_w0;	/* the neighbour's first two words, each read once: */
	__u64 neigh_w1;	/* dmac and state, smac (struct xfib_neigh) */
};

/* ---- first: the family -------------------------------------------------- */

/*
 * The kernel checks a forwarded packet against the forward policies and
 * looks up output policies for it (include/xfib/xfrm.h): while family fam
 * has any, XFIB_PASS_XFRM, so that the kernel applies them. Checked before
 * everything else: whatever else would be said of the packet, it is not
 * to be forwarded here.
 */
XFIB_INLINE __u32 xfib_xfrm_check(struct xfib_env *env, __u32 fam)
{
	const struct xfib_xfrm_info *x = xfib_env_xfrm(env, fam);

	return x && x->mode != XFIB_XFRM_OFF ? XFIB_PASS_XFRM : XFIB_NEXT;
}

/* ---- before the lookup -------------------------------------------------- */

/* An IPv4 address, host order, of a class the kernel never forwards as
 * plain unicast: 0/8, loopback, multicast, reserved, limited broadcast. */
XFIB_INLINE int xfib_ipv4_special(__u32 addr)
{
	__u8 a = addr >> 24;

	return a == 0 || a == 127 || a >= 224;
}

/* The same for IPv6, the address as two host-order halves. */
XFIB_INLINE int xfib_ipv6_special(__u64 hi, __u64 lo)
{
	/* multicast ff00::/8, link-local fe80::/10 */
	if ((hi >> 56) == 0xff || (hi >> 54) == (0xfe80ull >> 6))
		return 1;
	/* ::/80, which holds the unspecified and loopback addresses, the
	 * deprecated IPv4-compatible ::/96 and the IPv4-mapped ::ffff:0:0/96
	 * that never appear on the wire: the kernel decides. */
	return hi == 0 && (lo >> 32) <= 0xffff;
}

/* IPv6 on a port where the kernel has it disabled (disable_ipv6): the
 * kernel drops what arrives there and sends nothing out of it. For the
 * ingress port before the lookup, for the egress port after it. */
XFIB_INLINE int xfib_port_no_ipv6(const struct xfib_iface *port, __u8 af)
{
	return af == XFIB_AF_INET6 && (port->flags & XFIB_IF_NO_IPV6);
}

/* A TTL or hop limit for a query without a packet: one that never stops
 * it. */
#define XFIB_HOPS_NONE 255

/*
 * The checks between the IP header's and the lookup, in the program's
 * order (route4/route6): the ingress port in (NULL for a query without
 * one) takes the family, IPv6 enabled (ipv6_rcv() drops it otherwise)
 * and forwarding on; special (xfib_ipv4_special or xfib_ipv6_special of
 * the destination or of the source) is not set; hops, the TTL or hop
 * limit, leaves something to decrement (XFIB_HOPS_NONE without a packet).
 */
XFIB_INLINE __u32 xfib_before_lookup(const struct xfib_iface *in, __u8 af,
				     int special, __u8 hops)
{
	if (in) {
		if (xfib_port_no_ipv6(in, af))
			return XFIB_PASS_IPV6_DISABLED;
		if (!(in->flags & (af == XFIB_AF_INET ? XFIB_IF_FWD4 :
							XFIB_IF_FWD6)))
			return XFIB_PASS_FWD_DISABLED;
	}
	if (special)
		return XFIB_PASS_SPECIAL_ADDR;
	if (hops <= 1)
		return XFIB_PASS_TTL;
	return XFIB_NEXT;
}

/* ---- the source: fib_validate_source() ---------------------------------- */

/* A nexthop that leads out of a port (a unicast route's). */
XFIB_INLINE int xfib_nh_via_port(const struct xfib_nexthop *nh)
{
	return nh->kind == XFIB_NH_GATEWAY || nh->kind == XFIB_NH_CONNECTED;
}

/*
 * A route back to the source through nexthop nh, for a packet received
 * on port in_ifindex: XFIB_NEXT if the mode accepts it (loose: any port;
 * strict: that port), XFIB_PASS_RP_FILTER if not or if nh leads out of
 * no port.
 */
XFIB_INLINE __u32 xfib_rpf_nexthop(const struct xfib_nexthop *nh,
				   __u32 in_ifindex, int loose)
{
	if (!xfib_nh_via_port(nh))
		return XFIB_PASS_RP_FILTER;
	return loose || nh->ifindex == in_ifindex ? XFIB_NEXT :
						     XFIB_PASS_RP_FILTER;
}

/*
 * A multipath route back: in strict mode one member leaving by the port
 * will do (fib_info_nh_uses_dev() looks at every path), in loose mode the
 * route exists. A member that is not a gateway or connected nexthop (a
 * blackhole, a group, an empty bucket: a group without members has only
 * those) is not a route xfib can vouch for. Members fill runs of buckets
 * (rib_nexthop.c group_write()), so each run's member is read once.
 *
 * The scan goes bucket by bucket (xfib_rpf_bucket); the includer drives
 * it (xfib_env_rpf_scan): a plain loop in userspace, bpf_loop() in the
 * XDP program, whose verifier would otherwise walk all 256 iterations.
 */
struct xfib_rpf_scan {
	__u32 group;	  /* index into xfib_nh_groups */
	__u32 in_ifindex;
	__u32 loose;	  /* XFIB_IF_RPF_LOOSE on the ingress port */
	__u32 last;	  /* the previous bucket's member */
	__u32 r;	  /* the answer, once stopped */
	__u32 stopped;
};

/* Bucket i of the scan: 0 to go on, 1 when it stopped with s->r. */
XFIB_INLINE int xfib_rpf_bucket(struct xfib_env *env, __u32 i,
				struct xfib_rpf_scan *s)
{
	const struct xfib_nh_group *g = xfib_env_group(env, s->group);
	const struct xfib_nexthop *m;
	__u32 idx;

	s->stopped = 1;
	s->r = XFIB_PASS_RP_FILTER;
	if (!g || i >= XFIB_GROUP_BUCKETS)
		return 1;
	idx = g->nh[i];
	if (idx != s->last) {
		s->last = idx;
		m = xfib_env_nexthop(env, idx);
		if (!m || !xfib_nh_via_port(m))
			return 1;
		if (!s->loose && m->ifindex == s->in_ifindex) {
			s->r = XFIB_NEXT;
			return 1;
		}
	}
	s->stopped = 0;
	return 0;
}

/* Runs xfib_rpf_bucket() over the buckets in order until it stops. */
XFIB_INLINE void xfib_env_rpf_scan(struct xfib_env *env,
				   struct xfib_rpf_scan *s);

XFIB_INLINE __u32 xfib_rpf_group(struct xfib_env *env,
				 const struct xfib_nexthop *nh,
				 __u32 in_ifindex, int loose)
{
	struct xfib_rpf_scan s = {
		.group = nh->group,
		.in_ifindex = in_ifindex,
		.loose = loose,
		.last = 0xffffffffu,
	};

	xfib_env_rpf_scan(env, &s);
	if (s.stopped)
		return s.r;
	return loose ? XFIB_NEXT : XFIB_PASS_RP_FILTER;
}

/* Bit b of xfib_nonlocal4. */
XFIB_INLINE int xfib_nonlocal4_bit(struct xfib_env *env, __u32 b)
{
	return (xfib_env_nonlocal4(env, b / 64) >> (b % 64)) & 1;
}

/*
 * Whether xfib_source_check4() has anything to find for IPv4 source saddr
 * (host order) received on a port with flags in_flags. Without rp_filter
 * only a local source stops the packet, and xfib_nonlocal4 says where none
 * can be (include/xfib/maps.h): there the source needs no lookup, as the
 * kernel's fib_validate_source() makes none without rp_filter. That lookup
 * is a second longest-prefix match per packet, a large share of the
 * program's time.
 */
XFIB_INLINE int xfib_source_wanted4(struct xfib_env *env, __u32 saddr,
				    __u8 in_flags)
{
	if (in_flags & XFIB_IF_RPF)
		return 1;
	return !xfib_nonlocal4_bit(env, XFIB_NONLOCAL4_BLOCK_BIT(saddr)) ||
	       !xfib_nonlocal4_bit(env, XFIB_NONLOCAL4_SLOT_BIT(saddr));
}

/*
 * The kernel's checks of an IPv4 source (fib_validate_source(),
 * __fib_validate_source() in net/ipv4/fib_frontend.c), given the nexthop
 * index the source looks up to in the instance the destination was
 * looked up in (src_nh_idx) and the ingress port's flags (struct
 * xfib_iface). XFIB_NEXT if the kernel would accept the source for
 * forwarding; otherwise the reason to hand the packet to it, which then
 * drops it or decides:
 *
 *  - XFIB_PASS_LOCAL_SOURCE: the source's route is local, broadcast,
 *    anycast or multicast. With rp_filter off the kernel drops a source
 *    that is one of its own addresses (inet_lookup_ifaddr_rcu()); with it
 *    on, any route back of a type other than unicast (a local address, a
 *    subnet's broadcast address: -EINVAL, a martian source). It forwards
 *    from a broadcast address with rp_filter off, or accepts a local one
 *    with accept_local: it decides.
 *  - rp_filter on (XFIB_IF_RPF), XFIB_PASS_RP_FILTER when there is no
 *    route back, or it is blackhole, unreachable, prohibit or throw (the
 *    kernel's fib_lookup() fails: -EXDEV), or, strict mode, it does not
 *    leave by the ingress port: no path of it has that port. Loose mode
 *    (XFIB_IF_RPF_LOOSE) accepts any unicast route back. On a port
 *    without an IPv4 address the kernel applies the strict rule in either
 *    mode; the daemon marks such a port strict. A route back the mirror
 *    does not model (XFIB_NH_UNSUPPORTED) goes to the kernel the same
 *    way.
 *
 * With policy rules the kernel looks the source up through them, with
 * rp_filter off too (fib_validate_source(): fib4_has_custom_rules()), and
 * drops one whose route back is local in any table they reach: the
 * program then passes src_nh_idx the reversed walk's answer
 * (include/xfib/rule_walk.h), and xfib_nonlocal4 covers those tables.
 */
XFIB_INLINE __u32 xfib_source_check4(struct xfib_env *env, __u32 src_nh_idx,
				     __u32 in_ifindex, __u8 in_flags)
{
	const struct xfib_nexthop *nh = xfib_env_nexthop(env, src_nh_idx);
	int loose = !!(in_flags & XFIB_IF_RPF_LOOSE);

	if (nh && nh->kind == XFIB_NH_LOCAL)
		return XFIB_PASS_LOCAL_SOURCE;
	if (!(in_flags & XFIB_IF_RPF))
		return XFIB_NEXT;
	if (!nh)
		return XFIB_PASS_RP_FILTER;
	if (nh->kind == XFIB_NH_GROUP)
		return xfib_rpf_group(env, nh, in_ifindex, loose);
	return xfib_rpf_nexthop(nh, in_ifindex, loose);
}

/* ---- after the lookup: the steps ---------------------------------------- */

/*
 * Multipath: the member nexthop in the bucket the flow hashes to, its
 * index into *nh_idx. NULL if the group or the member is missing. A member
 * is never a group; one that is falls to "no route" in the next step.
 */
XFIB_INLINE const struct xfib_nexthop *
xfib_group_member(struct xfib_env *env, const struct xfib_nexthop *nh,
		  __u32 *nh_idx)
{
	const struct xfib_nh_group *g = xfib_env_group(env, nh->group);

	if (!g) {
		*nh_idx = XFIB_NH_IDX_NONE;
		return NULL;
	}
	*nh_idx = g->nh[xfib_flow_bucket(xfib_env_flow_hash(env))];
	return xfib_env_nexthop(env, *nh_idx);
}

/* What the nexthop's kind does with the packet: XFIB_NEXT for the kinds
 * that forward through a port. */
XFIB_INLINE __u32 xfib_nh_kind_reason(__u8 kind)
{
	switch (kind) {
	case XFIB_NH_GATEWAY:
	case XFIB_NH_CONNECTED:
		return XFIB_NEXT;
	case XFIB_NH_BLACKHOLE:
		return XFIB_DROP_BLACKHOLE;
	case XFIB_NH_LOCAL:
		return XFIB_PASS_LOCAL;
	case XFIB_NH_UNREACHABLE:
		return XFIB_PASS_UNREACHABLE;
	case XFIB_NH_UNSUPPORTED:
		return XFIB_PASS_UNSUPPORTED;
	default:
		return XFIB_PASS_NO_ROUTE;
	}
}

/* The egress port: not the ingress one (the kernel sends an ICMP
 * redirect), known and up, IPv6 not disabled on it for IPv6, able to
 * take redirected frames (else the kernel drops them silently: the
 * kernel forwards them instead), and its MTU holds the packet. Its
 * bridge flags into *bridge, for xfib_bridge_egress. */
XFIB_INLINE __u32 xfib_egress_check(struct xfib_env *env,
				    const struct xfib_fwd_query *q,
				    const struct xfib_nexthop *nh,
				    __u32 ifindex, __u8 *bridge)
{
	const struct xfib_iface *out;
	__u32 mtu;

	if (ifindex == q->in_ifindex)
		return XFIB_PASS_HAIRPIN;
	out = xfib_env_iface(env, ifindex);
	if (!out || !(out->flags & XFIB_IF_UP))
		return XFIB_PASS_EGRESS_DOWN;
	if (xfib_port_no_ipv6(out, q->af))
		return XFIB_PASS_IPV6_DISABLED;
	*bridge = out->bridge;
	/* A bridge takes no redirected frames: its member does
	 * (xfib_bridge_egress). */
	if ((out->flags & XFIB_IF_NO_XMIT) && !(out->bridge & XFIB_BR_ROUTED))
		return XFIB_PASS_EGRESS_NO_XMIT;
	/* A route MTU can only lower the device's: frames above the device
	 * MTU would be dropped by the egress driver. */
	mtu = nh->mtu && nh->mtu < out->mtu ? nh->mtu : out->mtu;
	if (q->l3len > mtu)
		return XFIB_PASS_MTU;
	return XFIB_NEXT;
}

/*
 * The neighbour a packet to daddr leaves by through nexthop nh on port
 * ifindex: a gateway's own, or the on-link destination's entry for the
 * port. Its index into *idx; NULL if there is none.
 */
XFIB_INLINE const struct xfib_neigh *
xfib_nh_neigh(struct xfib_env *env, const struct xfib_nexthop *nh,
	      __u32 ifindex, __u8 af, const void *daddr, __u32 *idx)
{
	struct xfib_neigh_key key = {};
	const __u32 *hidx;

	if (nh->kind == XFIB_NH_GATEWAY) {
		*idx = nh->neigh;
	} else {
		key.ifindex = ifindex;
		key.family = af;
		if (af == XFIB_AF_INET)
			__builtin_memcpy(key.addr, daddr, 4);
		else
			__builtin_memcpy(key.addr, daddr, 16);
		hidx = xfib_env_neigh_host(env, &key);
		if (!hidx)
			return NULL;
		*idx = *hidx;
	}
	return xfib_env_neigh(env, *idx);
}

/* The state byte of a neighbour's first word, as read into w0. */
XFIB_INLINE __u8 xfib_neigh_w0_state(const __u64 *w0)
{
	return ((const __u8 *)w0)[__builtin_offsetof(struct xfib_neigh, state)];
}

/* The neighbour is resolved and on the egress port; its MACs go into
 * path for the rewrite. */
XFIB_INLINE __u32 xfib_neigh_check(struct xfib_env *env,
				   const struct xfib_fwd_query *q,
				   const struct xfib_nexthop *nh,
				   struct xfib_fwd_path *path)
{
	const struct xfib_neigh *nb;
	__u32 idx;

	nb = xfib_nh_neigh(env, nh, path->ifindex, q->af, q->daddr, &idx);
	if (!nb)
		return XFIB_PASS_NEIGH;
	/* Each word read once: a concurrent MAC change is seen whole. */
	path->neigh_w0 = *(const volatile __u64 *)nb;
	path->neigh_w1 = *(const volatile __u64 *)((const __u8 *)nb + 8);
	path->tx_ifindex = *(const volatile __u32 *)&nb->tx_port;
	if (xfib_neigh_w0_state(&path->neigh_w0) != XFIB_NEIGH_VALID ||
	    nb->ifindex != path->ifindex)
		return XFIB_PASS_NEIGH;
	return XFIB_NEXT;
}

/*
 * A route out of a bridge: the frame leaves by the member the bridge's
 * forwarding database names for the neighbour's MAC, as br_dev_xmit()
 * sends it; xfibd keeps that member in the neighbour (tx_port, read by
 * xfib_neigh_check into path->tx_ifindex). That member must be up,
 * forwarding (STP), able to take redirected frames, and its MTU must
 * hold the packet (the bridge's may be larger: the kernel drops what the
 * member cannot carry). A MAC the bridge does not know is flooded, and
 * its own is delivered up: both the kernel's to do; so is every route
 * out of a bridge on which a host was just seen moving, until xfibd has
 * followed it. path->tx_ifindex is then the port the frame is sent by.
 * bridge: the egress port's bridge flags (xfib_egress_check).
 */
XFIB_INLINE __u32 xfib_bridge_egress(struct xfib_env *env,
				     const struct xfib_fwd_query *q,
				     struct xfib_fwd_path *path, __u8 bridge)
{
	const struct xfib_iface *m;
	__u32 port = path->tx_ifindex;

	path->tx_ifindex = path->ifindex;
	if (!(bridge & XFIB_BR_ROUTED))
		return XFIB_NEXT;
	if (!port || xfib_env_br_moving(env, path->ifindex))
		return XFIB_PASS_FDB;
	m = xfib_env_iface(env, port);
	if (!m || m->master != path->ifindex || !(m->flags & XFIB_IF_UP) ||
	    !(m->bridge & XFIB_BR_PORT_FWD) || (m->flags & XFIB_IF_NO_XMIT))
		return XFIB_PASS_FDB;
	if (q->l3len > m->mtu)
		return XFIB_PASS_MTU;
	path->tx_ifindex = port;
	return XFIB_NEXT;
}

/* ---- after the lookup: the chain ---------------------------------------- */

/*
 * From the lookup's nexthop index to what happens to the packet:
 * XFIB_FWD_V4 or XFIB_FWD_V6 to forward it along *path, or the reason it
 * is dropped or handed to the kernel.
 */
XFIB_INLINE __u32 xfib_after_lookup(struct xfib_env *env,
				    const struct xfib_fwd_query *q,
				    __u32 nh_idx, struct xfib_fwd_path *path)
{
	const struct xfib_nexthop *nh = xfib_env_nexthop(env, nh_idx);
	__u8 bridge = 0;
	__u32 r;

	path->nh_idx = nh_idx;
	if (!nh)
		return XFIB_PASS_NO_ROUTE;
	if (nh->kind == XFIB_NH_GROUP) {
		nh = xfib_group_member(env, nh, &path->nh_idx);
		if (!nh)
			return XFIB_PASS_NO_ROUTE;
	}
	r = xfib_nh_kind_reason(nh->kind);
	if (r != XFIB_NEXT)
		return r;
	path->ifindex = nh->ifindex;
	r = xfib_egress_check(env, q, nh, path->ifindex, &bridge);
	if (r != XFIB_NEXT)
		return r;
	r = xfib_neigh_check(env, q, nh, path);
	if (r != XFIB_NEXT)
		return r;
	r = xfib_bridge_egress(env, q, path, bridge);
	if (r != XFIB_NEXT)
		return r;
	if (!xfib_env_tx_port(env, path->tx_ifindex))
		return XFIB_PASS_EGRESS_NOT_ATTACHED;
	return q->af == XFIB_AF_INET ? XFIB_FWD_V4 : XFIB_FWD_V6;
}

#endif /* XFIB_DECIDE_H */
