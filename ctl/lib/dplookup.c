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
#include <unistd.h>
#include <sys/mman.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "dplookup.h"
#include "lease.h"
#include "pin.h"
#include "xfib/tbl8_pool.h"

static void *dpl_tbl_at(void *tbl, __u32 idx)
{
	struct dpl_tbl *t = tbl;

	if (idx >= t->n)
		return NULL;
	return (char *)t->base + (size_t)idx * t->esz;
}

/* Acquire: a tbl8 group is filled before the entry that leads to it is
 * published (the BPF side gets this order from the address dependency). */
static __u32 dpl_u32_at(void *tbl, __u32 idx)
{
	struct dpl_tbl *t = tbl;

	if (idx >= t->n)
		return XFIB_NH_IDX_NONE;
	return __atomic_load_n((const __u32 *)t->base + idx, __ATOMIC_ACQUIRE);
}

#define XFIB_TBL_AT(tbl, idx) dpl_tbl_at((tbl), (idx))
#define XFIB_U32_AT(tbl, idx) dpl_u32_at((tbl), (idx))
#include "xfib/lookup_bsearch.h"
#include "xfib/lookup_dir24.h"
#include "xfib/lookup_trie6.h"
#include "xfib/lookup_dxr.h"
#include "xfib/lookup_poptrie6.h"
#include "dpl_dispatch.h"
#include "xfib/flow_hash.h"
#include "xfib/decide.h"

/* Consecutive instance swaps tolerated while answering one batch. */
#define DPL_TRIES 100

static void tbl_unmap(struct dpl_tbl *t)
{
	if (t->base)
		munmap(t->base, t->len);
	memset(t, 0, sizeof(*t));
}

/*
 * Maps the tbl24 in slot `slot` of an ARRAY_OF_MAPS read-only: one value
 * of 2^24 __u32 entries (bpf/lib/maps.h). From userspace an outer map's
 * value is the inner map's id. The mapping keeps the inner map alive even
 * after the daemon drops it from the slot.
 */
static int map_tbl24(int outer_fd, __u32 slot, struct dpl_tbl *t)
{
	struct bpf_map_info info = { 0 };
	__u32 id, ilen = sizeof(info);
	size_t page = sysconf(_SC_PAGESIZE), len;
	void *p;
	int fd, err = 0;

	if (bpf_map_lookup_elem(outer_fd, &slot, &id))
		return -errno;
	fd = bpf_map_get_fd_by_id(id);
	if (fd < 0)
		return -errno;
	if (bpf_obj_get_info_by_fd(fd, &info, &ilen)) {
		err = -errno;
		goto out;
	}
	if (info.value_size != XFIB_DIR24_TBL24_BYTES || info.max_entries != 1) {
		err = -EPROTO;
		goto out;
	}
	len = ((size_t)info.value_size + page - 1) & ~(page - 1);
	p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		err = -errno;
		goto out;
	}
	t->base = p;
	t->len = len;
	t->esz = sizeof(__u32);
	t->n = XFIB_DIR24_TBL24_ENTRIES;
out:
	close(fd);
	return err;
}

/* One chunk of a pool, mapped read-only at `at`; -ENOENT past the end. */
static int map_chunk(int outer_fd, __u32 key, void *at)
{
	struct bpf_map_info info = { 0 };
	__u32 id, ilen = sizeof(info);
	int fd, err = 0;

	if (bpf_map_lookup_elem(outer_fd, &key, &id))
		return errno == ENOENT ? -ENOENT : -errno;
	fd = bpf_map_get_fd_by_id(id);
	if (fd < 0)
		return -errno;
	if (bpf_obj_get_info_by_fd(fd, &info, &ilen))
		err = -errno;
	else if (!strcmp(info.name, XFIB_POOL_SPARE_NAME))
		err = -ENOENT;
	else if (info.value_size != sizeof(__u64) ||
		 info.max_entries != XFIB_POOL_CHUNK_VALUES)
		err = -EPROTO;
	else if (mmap(at, XFIB_POOL_CHUNK_BYTES, PROT_READ,
		      MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED)
		err = -errno;
	close(fd);
	return err;
}

/*
 * Maps the chunks of slot `slot`'s group pool (include/xfib/tbl8_pool.h)
 * read-only, back to back, as one table: from the slot's first chunk to
 * the first entry that is empty or holds the daemon's placeholder for a
 * retired pool. -ENOENT if there is none.
 */
static int map_pool(int outer_fd, __u32 slot, struct dpl_tbl *t)
{
	size_t len = (size_t)XFIB_POOL_SLOT_CHUNKS * XFIB_POOL_CHUNK_BYTES;
	__u32 c;
	char *base;
	int err = 0;

	/* Addresses only: each chunk is mapped over its part of them. */
	base = mmap(NULL, len, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED)
		return -errno;
	t->base = base;
	t->len = len;
	t->esz = sizeof(__u32);
	for (c = 0; c < XFIB_POOL_SLOT_CHUNKS; c++) {
		err = map_chunk(outer_fd, slot * XFIB_POOL_SLOT_CHUNKS + c,
				base + (size_t)c * XFIB_POOL_CHUNK_BYTES);
		if (err)
			break;
	}
	t->n = (size_t)c * XFIB_POOL_CHUNK_ENTRIES;
	if (err == -ENOENT)
		err = c ? 0 : -ENOENT; /* the end of the pool */
	return err;
}

static __u64 active_word(const struct dpl *d)
{
	return __atomic_load_n((const __u64 *)&d->active[d->fam], __ATOMIC_ACQUIRE);
}

/* Points d at the instance the active word names now. */
static int load_instance(struct dpl *d)
{
	struct xfib_fwd_bpf *s = d->skel;
	int tries, o24, o8, err;

	for (tries = 0; tries < DPL_TRIES; tries++) {
		__u64 w = active_word(d);

		tbl_unmap(&d->t24);
		tbl_unmap(&d->t8);
		memcpy(&d->act, &w, sizeof(w));
		d->ready = false;
		switch (d->act.algo) {
		case XFIB_ALGO_BSEARCH4:
			d->ready = d->fam == XFIB_V4;
			return 0;
		case XFIB_ALGO_BSEARCH6:
			d->ready = d->fam == XFIB_V6;
			return 0;
		case XFIB_ALGO_DXR:
			d->ready = d->fam == XFIB_V4;
			return 0;
		case XFIB_ALGO_POPTRIE6:
			d->ready = d->fam == XFIB_V6;
			return 0;
		case XFIB_ALGO_DIR24_8:
			if (d->fam != XFIB_V4)
				return 0;
			o24 = bpf_map__fd(s->maps.xfib_dir24_tbl24);
			o8 = bpf_map__fd(s->maps.xfib_dir24_tbl8);
			break;
		case XFIB_ALGO_TRIE6:
			if (d->fam != XFIB_V6)
				return 0;
			o24 = bpf_map__fd(s->maps.xfib_trie6_tbl24);
			o8 = bpf_map__fd(s->maps.xfib_trie6_tbl8);
			break;
		default:
			/* No instance: the XDP program passes everything. */
			return 0;
		}
		err = map_tbl24(o24, d->act.slot, &d->t24);
		if (!err)
			err = map_pool(o8, d->act.slot, &d->t8);
		/*
		 * The slot may have been emptied or refilled between reading
		 * the word and the slot (a swap): only tables fetched while
		 * the word stayed the same belong to it.
		 */
		if (active_word(d) != w)
			continue;
		if (err == -ENOENT)
			return 0; /* empty slot: packets get PASS_NO_FIB too */
		if (err)
			return err;
		d->ready = true;
		return 0;
	}
	return -EBUSY;
}

/* A fixed array of __u64 values as a table of __u32 entries. */
static int map_u32(const struct bpf_map *m, struct dpl_tbl *t)
{
	t->base = xfib_map_mmap(m, false, &t->len);
	if (!t->base)
		return -errno;
	t->esz = sizeof(__u32);
	t->n = (size_t)bpf_map__max_entries(m) * 2;
	return 0;
}

int dpl_open(struct dpl *d, struct xfib_fwd_bpf *skel, int fam)
{
	const struct bpf_map *bs;
	int err;

	memset(d, 0, sizeof(*d));
	if (fam != XFIB_V4 && fam != XFIB_V6)
		return -EINVAL;
	d->skel = skel;
	d->fam = fam;
	bs = fam == XFIB_V4 ? skel->maps.xfib_bs4 : skel->maps.xfib_bs6;
	d->active = xfib_map_mmap(skel->maps.xfib_active, false, &d->active_len);
	if (!d->active)
		goto err_errno;
	d->bs.base = xfib_map_mmap(bs, false, &d->bs.len);
	if (!d->bs.base)
		goto err_errno;
	d->bs.esz = bpf_map__value_size(bs);
	d->bs.n = bpf_map__max_entries(bs);
	if (fam == XFIB_V4) {
		err = map_u32(skel->maps.xfib_dxr_direct, &d->dxr_direct) ?:
		      map_u32(skel->maps.xfib_dxr_ranges, &d->dxr_ranges);
		if (err)
			goto err;
	} else {
		err = map_u32(skel->maps.xfib_pt6_direct, &d->pt6_direct) ?:
		      map_u32(skel->maps.xfib_pt6_leaves, &d->pt6_leaves);
		if (err)
			goto err;
		d->pt6_nodes.base = xfib_map_mmap(skel->maps.xfib_pt6_nodes, false,
						  &d->pt6_nodes.len);
		if (!d->pt6_nodes.base)
			goto err_errno;
		d->pt6_nodes.esz = sizeof(struct xfib_pt6_node);
		d->pt6_nodes.n = XFIB_PT6_NODE_VALUES;
	}
	d->nh = xfib_map_mmap(skel->maps.xfib_nexthops, false, &d->nh_len);
	if (!d->nh)
		goto err_errno;
	d->neigh = xfib_map_mmap(skel->maps.xfib_neighs, false, &d->neigh_len);
	if (!d->neigh)
		goto err_errno;
	d->grp = xfib_map_mmap(skel->maps.xfib_nh_groups, false, &d->grp_len);
	if (!d->grp)
		goto err_errno;
	d->port = xfib_map_mmap(skel->maps.xfib_ifaces, false, &d->port_len);
	if (!d->port)
		goto err_errno;
	d->lease = xfib_map_mmap(skel->maps.xfib_lease, false, &d->lease_len);
	if (!d->lease)
		goto err_errno;
	d->seed = xfib_map_mmap(skel->maps.xfib_hash_seed, false, &d->seed_len);
	if (!d->seed)
		goto err_errno;
	err = load_instance(d);
	if (err)
		goto err;
	return 0;
err_errno:
	err = -errno;
err:
	dpl_close(d);
	return err;
}

void dpl_close(struct dpl *d)
{
	tbl_unmap(&d->t24);
	tbl_unmap(&d->t8);
	tbl_unmap(&d->bs);
	tbl_unmap(&d->dxr_direct);
	tbl_unmap(&d->dxr_ranges);
	tbl_unmap(&d->pt6_direct);
	tbl_unmap(&d->pt6_nodes);
	tbl_unmap(&d->pt6_leaves);
	if (d->active)
		munmap(d->active, d->active_len);
	if (d->nh)
		munmap(d->nh, d->nh_len);
	if (d->neigh)
		munmap(d->neigh, d->neigh_len);
	if (d->grp)
		munmap(d->grp, d->grp_len);
	if (d->port)
		munmap(d->port, d->port_len);
	if (d->lease)
		munmap(d->lease, d->lease_len);
	if (d->seed)
		munmap(d->seed, d->seed_len);
	memset(d, 0, sizeof(*d));
}

int dpl_refresh(struct dpl *d)
{
	__u64 w = active_word(d);
	int err;

	if (!memcmp(&w, &d->act, sizeof(w)))
		return 0;
	err = load_instance(d);
	return err ? err : 1;
}

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
 * the environment by syscall. A packet of the query has no ports and
 * protocol 0, and any source: the flow hash takes source 0.
 */
struct xfib_env {
	const struct dpl *d;
	const __u8 *addr;	/* the destination, network order */
	const __u8 *src;	/* the source, or NULL: 0 */
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

static __u32 xfib_env_flow_hash(struct xfib_env *env)
{
	static const __u32 zero[4];
	const __u32 *src = env->src ? (const __u32 *)env->src : zero;

	return xfib_flow_hash(__atomic_load_n(&env->d->seed->seed, __ATOMIC_RELAXED),
			      src, (const __u32 *)env->addr,
			      env->d->fam == XFIB_V4 ? 1 : 4, 0, 0);
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
	r->attached = xfib_env_tx_port(env, ifindex);
	nb = xfib_nh_neigh(env, &r->nh, ifindex, af, r->addr, &r->neigh_idx);
	if (nb) {
		r->have_neigh = true;
		r->neigh = *nb;
	}
}

/* The ingress port is known (check_ingress in the program); its flags
 * into r->in. */
static enum xfib_reason ingress_known(struct xfib_env *env,
				      struct dpl_result *r)
{
	if (!xfib_env_iface(env, r->iif))
		return XFIB_PASS_NO_IFACE;
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
static void follow_route(struct dpl *d, struct dpl_result *r)
{
	struct xfib_env env = {
		.d = d,
		.addr = r->addr,
		.src = r->have_src ? r->src : NULL,
	};
	struct xfib_fwd_query q = {
		.daddr = r->addr,
		.in_ifindex = r->iif,
		.af = r->fam == XFIB_V4 ? XFIB_AF_INET : XFIB_AF_INET6,
	};
	struct xfib_fwd_path path;
	enum xfib_reason first = XFIB_NEXT;

	if (r->iif != XFIB_IFINDEX_NONE)
		first = ingress_known(&env, r);
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
	/* The source's checks stop the packet before the chain after the
	 * lookup, which runs anyway to show where the route leads. */
	if (r->have_src && r->fam == XFIB_V4 &&
	    xfib_source_wanted4(&env, dpl_addr4_host(r->src),
				r->have_in ? r->in.flags : 0))
		first = xfib_source_check4(&env, r->src_nh_idx, r->iif,
					   r->have_in ? r->in.flags : 0);
	if (r->nh.kind == XFIB_NH_GROUP) {
		__u32 m[XFIB_GROUP_BUCKETS];

		r->group = true;
		r->group_nh_idx = r->nh_idx;
		r->group_nh = r->nh;
		r->members = dpl_group_members(d->grp, &r->nh, m, NULL);
	}
	r->action = xfib_after_lookup(&env, &q, r->nh_idx, &path);
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
static void follow(struct dpl *d, struct dpl_result *r)
{
	struct xfib_env env = { .d = d, .addr = r->addr };
	__u64 until = __atomic_load_n(&d->lease->until, __ATOMIC_ACQUIRE);
	__u32 x;

	follow_route(d, r);
	x = xfib_lease_check(until, xfib_lease_clock());
	if (x == XFIB_NEXT && r->action != XFIB_PASS_NO_IFACE)
		x = xfib_xfrm_check(&env, r->fam);
	if (x != XFIB_NEXT)
		r->action = x;
}

int dpl_resolve_from(struct dpl *d, const __u8 *addr, const __u8 *src,
		     __u32 iif, struct dpl_result *r)
{
	size_t alen = d->fam == XFIB_V4 ? 4 : 16;
	int tries, err;

	for (tries = 0; tries < DPL_TRIES; tries++) {
		memset(r, 0, sizeof(*r));
		r->fam = d->fam;
		memcpy(r->addr, addr, alen);
		r->iif = iif;
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
		err = dpl_refresh(d);
		if (err < 0)
			return err;
		if (err == 0) {
			follow(d, r);
			return 0;
		}
	}
	return -EBUSY;
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

/* ---- walking the whole instance ---------------------------------------- */

struct walk {
	const struct dpl *d;
	dpl_walk_fn fn;
	void *arg;
	bool any;
	__u32 last;
	int err;
};

static void walk_emit(struct walk *w, dpl_addr start, __u32 nh)
{
	if (w->err || (w->any && nh == w->last))
		return;
	w->any = true;
	w->last = nh;
	w->err = w->fn(start, nh, w->arg);
}

/*
 * count entries of a dir24_8/trie6 table from index first, entry j
 * answering for the 2^bits addresses from base + (j << bits); a group
 * entry leads to 256 entries of 2^(bits - 8) addresses each.
 */
static void walk_entries(struct walk *w, struct dpl_tbl *tbl, __u32 first,
			 __u32 count, dpl_addr base, unsigned int bits)
{
	__u32 j;

	for (j = 0; j < count && !w->err; j++) {
		__u32 e = dpl_u32_at(tbl, first + j);
		dpl_addr cell = base + ((dpl_addr)j << bits);

		/* XFIB_DIR24_EXT and XFIB_TRIE6_EXT are the same bit. */
		if (!(e & XFIB_TRIE6_EXT) || bits < XFIB_TRIE6_GROUP_BITS)
			walk_emit(w, cell, e & XFIB_TRIE6_EXT ? XFIB_NH_IDX_NONE : e);
		else
			walk_entries(w, &((struct dpl *)w->d)->t8,
				     XFIB_TRIE6_GROUP(e) << XFIB_TRIE6_GROUP_BITS,
				     XFIB_TRIE6_GROUP_ENTRIES, cell,
				     bits - XFIB_TRIE6_GROUP_BITS);
	}
}

/* Every chunk of the dxr slot: its one answer or its run of entries. */
static void walk_dxr(struct walk *w, struct dpl *d)
{
	__u32 slot = d->act.slot & 1, c;

	for (c = 0; c < XFIB_DXR_CHUNKS && !w->err; c++) {
		__u32 e = dpl_u32_at(&d->dxr_direct, (slot << XFIB_DXR_CHUNK_BITS) | c);
		__u32 pos, n, i;

		if (!(e & XFIB_DXR_RANGE)) {
			walk_emit(w, (dpl_addr)c << XFIB_DXR_CHUNK_BITS, e);
			continue;
		}
		pos = (slot << XFIB_DXR_BASE_BITS) | (e & XFIB_DXR_BASE_MASK);
		n = (e & ~XFIB_DXR_RANGE) >> XFIB_DXR_BASE_BITS;
		if (!n)
			n = dpl_u32_at(&d->dxr_ranges, pos++);
		if (n > XFIB_DXR_CHUNKS) /* a slot being rewritten */
			n = XFIB_DXR_CHUNKS;
		for (i = 0; i < n && !w->err; i++) {
			__u32 r = dpl_u32_at(&d->dxr_ranges, pos + i);

			walk_emit(w, ((dpl_addr)c << XFIB_DXR_CHUNK_BITS) | (r >> 16),
				  r & 0xffff);
		}
	}
}

static void walk_pt6_node(struct walk *w, struct dpl *d, __u32 idx,
			  unsigned int o, dpl_addr base, unsigned int depth);

/* A skip node at bit o from base: its answer around the chain's end. */
static void walk_pt6_skip(struct walk *w, struct dpl *d,
			  const struct xfib_pt6_node *nd, unsigned int o,
			  dpl_addr base, unsigned int depth)
{
	unsigned int s = nd->base_leaf & 63, below = 128 - o - s;
	dpl_addr first, last;

	if (s < XFIB_PT6_STRIDE || s > XFIB_PT6_SKIP_BITS_MAX || o + s > 126)
		return; /* a slot being rewritten */
	first = base | (dpl_addr)(nd->vec >> (64 - s)) << below;
	last = first + (((dpl_addr)1 << below) - 1);
	if (first > base)
		walk_emit(w, base, (__u32)nd->leafvec);
	walk_pt6_node(w, d, nd->base_child, o + s, first, depth + 1);
	if (last < base + (((dpl_addr)1 << (128 - o)) - 1))
		walk_emit(w, last + 1, (__u32)nd->leafvec);
}

/*
 * Every position of poptrie6 node idx (slot relative), whose 6 bits start
 * at bit o and whose first address is base. At most XFIB_PT6_LEVELS deep,
 * whatever a slot being rewritten holds.
 */
static void walk_pt6_node(struct walk *w, struct dpl *d, __u32 idx,
			  unsigned int o, dpl_addr base, unsigned int depth)
{
	__u32 slot = d->act.slot & 1, k, child, rem = 128 - o;
	const struct xfib_pt6_node *nd;

	nd = dpl_tbl_at(&d->pt6_nodes, (slot << XFIB_PT6_NODE_BITS) | idx);
	if (!nd || depth >= XFIB_PT6_LEVELS || o >= 128)
		return;
	if (nd->base_leaf & XFIB_PT6_SKIP) {
		walk_pt6_skip(w, d, nd, o, base, depth);
		return;
	}
	for (k = 0; k < 64 && !w->err; k++) {
		__u64 mask = (2ull << k) - 1;
		dpl_addr a;

		if (rem >= XFIB_PT6_STRIDE) {
			a = base + ((dpl_addr)k << (rem - XFIB_PT6_STRIDE));
		} else {
			/* Only every 2^(6 - rem)th position is reachable. */
			if (k & ((1u << (XFIB_PT6_STRIDE - rem)) - 1))
				continue;
			a = base + (k >> (XFIB_PT6_STRIDE - rem));
		}
		if (!(nd->vec & (1ull << k))) {
			walk_emit(w, a, dpl_u32_at(&d->pt6_leaves,
				  (slot << XFIB_PT6_LEAF_BITS) |
				  (nd->base_leaf - 1 + xfib_popcount64(nd->leafvec & mask))));
			continue;
		}
		child = nd->base_child - 1 + xfib_popcount64(nd->vec & mask);
		walk_pt6_node(w, d, child, o + XFIB_PT6_STRIDE, a, depth + 1);
	}
}

static void walk_pt6(struct walk *w, struct dpl *d)
{
	__u32 slot = d->act.slot & 1, c;

	for (c = 0; c < XFIB_PT6_TOP && !w->err; c++) {
		__u32 e = dpl_u32_at(&d->pt6_direct, (slot << XFIB_PT6_TOP_BITS) | c);
		dpl_addr a = (dpl_addr)c << (128 - XFIB_PT6_TOP_BITS);

		if (e & XFIB_PT6_LEAF)
			walk_emit(w, a, e & ~XFIB_PT6_LEAF);
		else
			walk_pt6_node(w, d, e, XFIB_PT6_TOP_BITS, a, 0);
	}
}

int dpl_walk(struct dpl *d, dpl_walk_fn fn, void *arg)
{
	struct walk w = { .d = d, .fn = fn, .arg = arg };
	__u32 i, n;

	if (!d->ready)
		return 0;
	switch (d->act.algo) {
	case XFIB_ALGO_BSEARCH4:
	case XFIB_ALGO_BSEARCH6:
		n = 1u << d->act.log2n;
		for (i = 0; i < n && !w.err; i++) {
			__u32 idx = (d->fam == XFIB_V4 ? XFIB_BS4_SLOT_SIZE :
							 XFIB_BS6_SLOT_SIZE) * d->act.slot + i;
			const void *e = dpl_tbl_at(&d->bs, idx);

			if (!e)
				break;
			if (d->fam == XFIB_V4) {
				const struct xfib_bs4_range *r = e;

				walk_emit(&w, r->start, r->nh);
			} else {
				const struct xfib_bs6_range *r = e;

				walk_emit(&w, (dpl_addr)r->hi << 64 | r->lo, r->nh);
			}
		}
		break;
	case XFIB_ALGO_DXR:
		walk_dxr(&w, d);
		break;
	case XFIB_ALGO_POPTRIE6:
		walk_pt6(&w, d);
		break;
	case XFIB_ALGO_DIR24_8:
		walk_entries(&w, &d->t24, 0, XFIB_DIR24_TBL24_ENTRIES, 0,
			     32 - XFIB_DIR24_TBL24_BITS);
		break;
	case XFIB_ALGO_TRIE6:
		walk_entries(&w, &d->t24, 0, XFIB_TRIE6_TBL24_ENTRIES, 0,
			     128 - XFIB_TRIE6_TBL24_BITS);
		break;
	}
	return w.err;
}
