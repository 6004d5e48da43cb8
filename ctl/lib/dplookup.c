// SPDX-License-Identifier: GPL-2.0-only
/*
 * Userspace lookups in the live dataplane, with the dataplane's code.
 *
 * The lookup headers are written against two accessors, the decision
 * code after the lookup (include/xfib/decide.h) against a few more. In
 * the XDP program they are BPF map lookups; here they read the mmap()ed
 * maps, with the same "past the end reads as nothing" rule the map
 * lookups have, so a corrupt or concurrently rewritten table cannot make
 * us fault where the dataplane would not.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>
#include <netinet/in.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "dplookup.h"
#include "dpl_priv.h"
#include "lease.h"
#include "pin.h"

#include "dpl_dispatch.h"
#include "xfib/flow_hash.h"
#include "xfib/decide.h"

__u32 dpl_lookup(struct dpl *d, const __u8 *addr)
{
	if (!d->ready)
		return XFIB_NH_IDX_NONE;
	return dpl_dispatch(d, addr);
}

/*
 * No grace period waits for us: xfibd may rewrite the copy we read once
 * it is no longer live (struct xfib_port). live only counts up, and a
 * grace period (a full barrier) separates the store that moves it away
 * from a copy and any later write of that copy: if live reads the same
 * after the copy, the copy was not written meanwhile.
 */
bool dpl_port(const struct dpl *d, __u32 ifindex, struct xfib_iface *out)
{
	const struct xfib_port *p;
	__u32 live;

	if (ifindex >= XFIB_PORT_MAX)
		return false;
	p = &d->port[ifindex];
	do {
		live = __atomic_load_n(&p->live, __ATOMIC_ACQUIRE);
		if (!live)
			return false;
		memcpy(out, xfib_port_iface(p, live), sizeof(*out));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while (__atomic_load_n(&p->live, __ATOMIC_RELAXED) != live);
	return true;
}

void dpl_nexthop(const struct dpl *d, __u32 idx, struct xfib_nexthop *nh)
{
	if (idx >= XFIB_NEXTHOP_MAX) {
		memset(nh, 0, sizeof(*nh));
		return;
	}
	*nh = d->nh[idx];
}

bool dpl_special(int fam, const __u8 *addr)
{
	__u64 hi, lo;

	if (fam == XFIB_V4)
		return xfib_ipv4_special(dpl_addr4_host(addr));
	memcpy(&hi, addr, 8);
	memcpy(&lo, addr + 8, 8);
	return xfib_ipv6_special(be64toh(hi), be64toh(lo));
}

/* ---- the maps behind include/xfib/decide.h ------------------------------ */

/*
 * The arrays are read where they are mmap()ed, the hash maps copied into
 * the environment by syscall. A packet of the query, unless it is a
 * flow's, has no ports and protocol 0, and any source: the flow hash
 * takes source 0.
 */
struct xfib_env {
	const struct dpl *d;
	const __u8 *addr;	/* the destination, network order */
	const __u8 *src;	/* the source, or NULL: 0 */
	const struct dpl_flow *flow; /* the packet's flow, or NULL */
	__u32 neigh_idx;	/* copied from xfib_neigh_hosts */
	struct xfib_iface iface; /* copied from xfib_ifaces (dpl_port) */
	struct xfib_xfrm_info xfrm; /* copied from xfib_xfrm */
};

static const struct xfib_nexthop *xfib_env_nexthop(struct xfib_env *env,
						    __u32 idx)
{
	return idx < XFIB_NEXTHOP_MAX ? &env->d->nh[idx] : NULL;
}

static const struct xfib_nh_group *xfib_env_group(struct xfib_env *env,
						   __u32 idx)
{
	return idx < XFIB_GROUP_MAX ? &env->d->grp[idx] : NULL;
}

/* As the program's pkt_flow_hash(): TCP and UDP hash their ports. */
static __u32 flow_hash_of(__u32 seed, const struct dpl_flow *f, int words)
{
	__u32 src[4], dst[4], ports = 0;

	memcpy(src, f->src, sizeof(src));
	memcpy(dst, f->dst, sizeof(dst));
	if (f->proto == IPPROTO_TCP || f->proto == IPPROTO_UDP)
		ports = (__u32)be16toh(f->sport) << 16 | be16toh(f->dport);
	return xfib_flow_hash(seed, src, dst, words, f->proto, ports);
}

static __u32 xfib_env_flow_hash(struct xfib_env *env)
{
	static const __u32 zero[4];
	const __u32 *src = env->src ? (const __u32 *)env->src : zero;
	__u32 seed = __atomic_load_n(&env->d->seed->seed, __ATOMIC_RELAXED);
	int words = env->d->fam == XFIB_V4 ? 1 : 4;

	if (env->flow)
		return flow_hash_of(seed, env->flow, words);
	return xfib_flow_hash(seed, src, (const __u32 *)env->addr, words, 0, 0);
}

static const struct xfib_iface *xfib_env_iface(struct xfib_env *env,
					       __u32 ifindex)
{
	return dpl_port(env->d, ifindex, &env->iface) ? &env->iface : NULL;
}

static const __u32 *xfib_env_neigh_host(struct xfib_env *env,
					const struct xfib_neigh_key *key)
{
	int fd = bpf_map__fd(env->d->skel->maps.xfib_neigh_hosts);

	if (bpf_map_lookup_elem(fd, key, &env->neigh_idx))
		return NULL;
	return &env->neigh_idx;
}

static const struct xfib_neigh *xfib_env_neigh(struct xfib_env *env,
					       __u32 idx)
{
	return idx < XFIB_NEIGH_MAX ? &env->d->neigh[idx] : NULL;
}

static void xfib_env_rpf_scan(struct xfib_env *env, struct xfib_rpf_scan *s)
{
	__u32 i;

	for (i = 0; i < XFIB_GROUP_BUCKETS; i++)
		if (xfib_rpf_bucket(env, i, s))
			return;
}

static int xfib_env_tx_port(struct xfib_env *env, __u32 ifindex)
{
	int fd = bpf_map__fd(env->d->skel->maps.xfib_tx_ports);
	struct bpf_devmap_val v;

	return !bpf_map_lookup_elem(fd, &ifindex, &v);
}

static __u32 xfib_env_br_moving(struct xfib_env *env, __u32 ifindex)
{
	int fd = bpf_map__fd(env->d->skel->maps.xfib_br_moving);
	__u64 n;

	return bpf_map_lookup_elem(fd, &ifindex, &n) ? 1 : n != 0;
}

static const struct xfib_xfrm_info *xfib_env_xfrm(struct xfib_env *env,
						  __u32 fam)
{
	int fd = bpf_map__fd(env->d->skel->maps.xfib_xfrm);

	if (bpf_map_lookup_elem(fd, &fam, &env->xfrm))
		return NULL;
	return &env->xfrm;
}

static __u64 xfib_env_nonlocal4(struct xfib_env *env, __u32 w)
{
	int fd = bpf_map__fd(env->d->skel->maps.xfib_nonlocal4);
	__u64 v;

	return bpf_map_lookup_elem(fd, &w, &v) ? 0 : v;
}

bool dpl_source_wanted4(const struct dpl *d, const __u8 *addr)
{
	struct xfib_env env = { .d = d };

	return xfib_source_wanted4(&env, dpl_addr4_host(addr), 0);
}

/*
 * The egress port and the neighbour of r's nexthop as the dataplane's maps
 * hold them, for display: also where the decision stopped before reading
 * them (a down port's neighbour, an unattached port's state).
 */
static void egress_state(struct xfib_env *env, struct dpl_result *r, __u8 af)
{
	__u32 ifindex = r->nh.ifindex;
	const struct xfib_neigh *nb;

	if (xfib_env_iface(env, ifindex)) {
		r->have_iface = true;
		r->iface = env->iface;
	}
	r->attached = xfib_env_tx_port(env, r->tx_ifindex ?: ifindex);
	nb = xfib_nh_neigh(env, &r->nh, ifindex, af, r->addr, &r->neigh_idx);
	if (nb) {
		r->have_neigh = true;
		r->neigh = *nb;
	}
}

/* A packet received on a bridge member is routed as its bridge's
 * (check_bridge_ingress in the program): the bridge becomes r->iif, for
 * the rules and the checks, the member r->in_port. */
static void bridge_ingress(const struct dpl *d, struct dpl_result *r)
{
	struct xfib_iface in;

	if (r->iif == XFIB_IFINDEX_NONE || !dpl_port(d, r->iif, &in) ||
	    !in.master)
		return;
	r->in_port = r->iif;
	r->iif = in.master;
}

/* The ingress port is known (check_ingress in the program), and for a
 * bridge member, it forwards and xfib routes through its bridge; the
 * flags into r->in. */
static enum xfib_reason ingress_known(struct xfib_env *env,
				      struct dpl_result *r)
{
	if (r->in_port &&
	    (!xfib_env_iface(env, r->in_port) ||
	     !(env->iface.bridge & XFIB_BR_PORT_FWD)))
		return XFIB_PASS_BRIDGE;
	if (!xfib_env_iface(env, r->iif))
		return XFIB_PASS_NO_IFACE;
	if (r->in_port && !(env->iface.bridge & XFIB_BR_ROUTED))
		return XFIB_PASS_BRIDGE;
	r->have_in = true;
	r->in = env->iface;
	return XFIB_NEXT;
}

/*
 * What the XDP program decides for a packet to r->addr that passed the
 * checks that need a packet (header, TTL, size; without r->have_src or
 * r->iif also source and ingress port), with the program's own code, in
 * its order.
 */
static void follow_route(struct dpl *d, struct dpl_result *r,
			 const struct dpl_flow *f)
{
	struct xfib_env env = {
		.d = d,
		.addr = r->addr,
		.src = r->have_src ? r->src : NULL,
		.flow = f,
	};
	struct xfib_fwd_query q = {
		.daddr = r->addr,
		.af = r->fam == XFIB_V4 ? XFIB_AF_INET : XFIB_AF_INET6,
	};
	struct xfib_fwd_path path;
	enum xfib_reason first = XFIB_NEXT;

	if (r->iif != XFIB_IFINDEX_NONE)
		first = ingress_known(&env, r);
	q.in_ifindex = r->iif;
	if (first == XFIB_NEXT)
		first = xfib_before_lookup(r->have_in ? &r->in : NULL, q.af,
					   dpl_special(r->fam, r->addr) ||
					   (r->have_src &&
					    dpl_special(r->fam, r->src)),
					   XFIB_HOPS_NONE);
	if (first != XFIB_NEXT) {
		r->action = first;
		return;
	}
	if (!r->ready) {
		r->action = XFIB_PASS_NO_FIB;
		return;
	}
	/* The rules' verdict, then the source's checks, stop the packet
	 * before the chain after the lookup, which runs anyway to show
	 * where the route leads. With rules, the route back is the rules'
	 * (xfib_check_source4() in the program). */
	if (r->rules.walked && r->rules.reason != XFIB_NEXT)
		first = r->rules.reason;
	else if (r->have_src && r->fam == XFIB_V4 &&
		 xfib_source_wanted4(&env, dpl_addr4_host(r->src),
				     r->have_in ? r->in.flags : 0)) {
		__u8 fl = r->have_in ? r->in.flags : 0;
		__u32 src_nh = r->src_nh_idx;

		if (r->src_rules.walked) {
			if (r->src_rules.reason != XFIB_NEXT)
				first = r->src_rules.reason;
			else
				src_nh = r->src_rules.nh;
		}
		if (first == XFIB_NEXT)
			first = xfib_source_check4(&env, src_nh, r->iif, fl);
	}
	if (r->nh.kind == XFIB_NH_GROUP) {
		__u32 m[XFIB_GROUP_BUCKETS];

		r->group = true;
		r->group_nh_idx = r->nh_idx;
		r->group_nh = r->nh;
		r->members = dpl_group_members(d->grp, &r->nh, m, NULL);
	}
	path.tx_ifindex = 0;
	r->action = xfib_after_lookup(&env, &q, r->nh_idx, &path);
	r->tx_ifindex = path.tx_ifindex;
	if (first != XFIB_NEXT)
		r->action = first;
	/* For a multipath route, the member the flow takes. */
	r->nh_idx = path.nh_idx;
	dpl_nexthop(d, r->nh_idx, &r->nh);
	if (r->nh.kind == XFIB_NH_GATEWAY || r->nh.kind == XFIB_NH_CONNECTED)
		egress_state(&env, r, q.af);
}

/*
 * The same, with the checks that the program makes before all the others:
 * the route is still followed, for display, but the daemon's lease, then
 * (the ingress port known) the family's IPsec policies decide.
 */
__u32 dpl_lease_check(const struct dpl *d)
{
	__u64 until = __atomic_load_n(&d->lease->until, __ATOMIC_ACQUIRE);

	return xfib_lease_check(until, xfib_lease_clock());
}

static void follow(struct dpl *d, struct dpl_result *r, const struct dpl_flow *f)
{
	struct xfib_env env = { .d = d, .addr = r->addr };
	__u32 x;

	follow_route(d, r, f);
	x = dpl_lease_check(d);
	if (x == XFIB_NEXT && r->action != XFIB_PASS_NO_IFACE)
		x = xfib_xfrm_check(&env, r->fam);
	if (x != XFIB_NEXT)
		r->action = x;
}

void dpl_rflow_addr(int fam, const __u8 *a, __u64 *hi, __u64 *lo)
{
	__u64 h = 0, l = 0;
	int i;

	if (fam == XFIB_V4) {
		*hi = 0;
		*lo = (__u32)a[0] << 24 | (__u32)a[1] << 16 | (__u32)a[2] << 8 | a[3];
		return;
	}
	for (i = 0; i < 8; i++) {
		h = h << 8 | a[i];
		l = l << 8 | a[8 + i];
	}
	*hi = h;
	*lo = l;
}

/*
 * The policy rules' walk for r's packet (as the program's rflow4/rflow6:
 * the flow's protocol and ports where it has them), and for IPv4 with a
 * source the reversed walk of the route back (rflow_reverse).
 */
static int rules_route(struct dpl *d, struct dpl_result *r,
		       const struct dpl_flow *f)
{
	static const __u8 zero[16];
	struct xfib_rflow rf = { .iif = r->iif };
	struct xfib_env env = { .d = d, .addr = r->addr,
				.src = r->have_src ? r->src : NULL, .flow = f };
	struct xfib_rflow rev;
	int err;

	if (r->iif == XFIB_IFINDEX_NONE && f)
		rf.iif = f->iif;
	dpl_rflow_addr(d->fam, r->have_src ? r->src : zero, &rf.src_hi, &rf.src_lo);
	dpl_rflow_addr(d->fam, r->addr, &rf.dst_hi, &rf.dst_lo);
	if (f) {
		rf.proto = f->proto;
		rf.sport = be16toh(f->sport);
		rf.dport = be16toh(f->dport);
		rf.tos = f->tos;
	}
	/* The hash xfib_after_lookup() picks a member with. */
	err = dpl_rules_route(d, &rf, r->nh_idx, xfib_env_flow_hash(&env),
			      &r->rules);
	if (err)
		return err;
	if (r->rules.walked && r->rules.reason == XFIB_NEXT) {
		r->nh_idx = r->rules.nh;
		dpl_nexthop(d, r->nh_idx, &r->nh);
	}
	if (!r->have_src || d->fam != XFIB_V4 || !r->rules.walked)
		return 0;
	rev = rf;
	rev.src_lo = rf.dst_lo;
	rev.dst_lo = rf.src_lo;
	rev.sport = rf.dport;
	rev.dport = rf.sport;
	rev.iif = XFIB_LOOPBACK_IFINDEX;
	rev.reverse = 1;
	/* IPv4 only: its suppress_ifgroup reads no member. */
	return dpl_rules_route(d, &rev, r->src_nh_idx, 0, &r->src_rules);
}

static int resolve(struct dpl *d, const __u8 *addr, const __u8 *src,
		   __u32 iif, const struct dpl_flow *f, struct dpl_result *r)
{
	size_t alen = d->fam == XFIB_V4 ? 4 : 16;
	int tries, err;

	for (tries = 0; tries < DPL_TRIES; tries++) {
		memset(r, 0, sizeof(*r));
		r->fam = d->fam;
		memcpy(r->addr, addr, alen);
		r->iif = iif;
		bridge_ingress(d, r);
		r->act = d->act;
		r->ready = d->ready;
		r->nh_idx = dpl_lookup(d, addr);
		dpl_nexthop(d, r->nh_idx, &r->nh);
		if (src) {
			r->have_src = true;
			memcpy(r->src, src, alen);
			r->src_nh_idx = dpl_lookup(d, src);
			dpl_nexthop(d, r->src_nh_idx, &r->src_nh);
		}
		if (r->ready) {
			err = rules_route(d, r, f);
			if (err)
				return err;
		}
		err = dpl_refresh(d);
		if (err < 0)
			return err;
		if (err == 0) {
			follow(d, r, f);
			return 0;
		}
	}
	return -EBUSY;
}

int dpl_resolve_from(struct dpl *d, const __u8 *addr, const __u8 *src,
		     __u32 iif, struct dpl_result *r)
{
	return resolve(d, addr, src, iif, NULL, r);
}

int dpl_resolve_flow(struct dpl *d, const __u8 *addr, const struct dpl_flow *f,
		     struct dpl_result *r)
{
	return resolve(d, addr, f->src, XFIB_IFINDEX_NONE, f, r);
}

int dpl_resolve_packet(struct dpl *d, const __u8 *addr, const __u8 *src,
		       __u32 iif, const struct dpl_flow *f, struct dpl_result *r)
{
	return resolve(d, addr, src, iif, f, r);
}

int dpl_resolve(struct dpl *d, const __u8 *addr, struct dpl_result *r)
{
	return dpl_resolve_from(d, addr, NULL, XFIB_IFINDEX_NONE, r);
}

const char *dpl_kind_name(unsigned int kind)
{
	static const char *const names[XFIB_NH_KIND_COUNT] = {
		[XFIB_NH_NONE] = "none",
		[XFIB_NH_GATEWAY] = "gateway",
		[XFIB_NH_CONNECTED] = "connected",
		[XFIB_NH_BLACKHOLE] = "blackhole",
		[XFIB_NH_LOCAL] = "local",
		[XFIB_NH_UNREACHABLE] = "unreachable",
		[XFIB_NH_UNSUPPORTED] = "unsupported",
		[XFIB_NH_GROUP] = "group",
	};

	return kind < XFIB_NH_KIND_COUNT ? names[kind] : "invalid";
}

size_t dpl_group_members(const struct xfib_nh_group *grp,
			 const struct xfib_nexthop *nh, __u32 *out,
			 __u32 *buckets)
{
	const __u32 *b;
	size_t i, n = 0;

	if (nh->kind != XFIB_NH_GROUP || nh->group >= XFIB_GROUP_MAX)
		return 0;
	b = grp[nh->group].nh;
	/* A member's buckets are one run (rib_nexthop.c group_write()). */
	for (i = 0; i < XFIB_GROUP_BUCKETS; i++) {
		if (!b[i])
			continue;
		if (!n || out[n - 1] != b[i]) {
			if (buckets)
				buckets[n] = 0;
			out[n++] = b[i];
		}
		if (buckets)
			buckets[n - 1]++;
	}
	return n;
}
