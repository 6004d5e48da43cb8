// SPDX-License-Identifier: GPL-2.0-only
/*
 * The RIB's writes into the pinned maps (struct rib_dp): the arrays
 * mmap()ed (BPF_F_MMAPABLE), the hash map by syscall, and grace periods
 * by updating a map-in-map, which returns after synchronize_rcu().
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "pin.h"
#include "rib.h"

struct rib_dp_bpf {
	struct xfib_fwd_bpf *skel;
	size_t nh_len, neigh_len, grp_len, port_len, nonlocal4_len;
	size_t rules_len, rules_active_len, br_moving_len;
	int rcu_inner_fd; /* the value rcu_sync's updates store */
};

static int bpf_neigh_host_set(void *ctx, const struct xfib_neigh_key *k, __u32 idx)
{
	struct rib_dp_bpf *b = ctx;

	return bpf_map_update_elem(bpf_map__fd(b->skel->maps.xfib_neigh_hosts),
				   k, &idx, BPF_ANY) ? -errno : 0;
}

static int bpf_neigh_host_del(void *ctx, const struct xfib_neigh_key *k)
{
	struct rib_dp_bpf *b = ctx;

	return bpf_map_delete_elem(bpf_map__fd(b->skel->maps.xfib_neigh_hosts),
				   k) ? -errno : 0;
}

static int bpf_grace_period(void *ctx)
{
	struct rib_dp_bpf *b = ctx;
	__u32 key = 0;

	/* Updating a map-in-map returns after synchronize_rcu(): every XDP
	 * program that started before this call has finished. */
	if (bpf_map_update_elem(bpf_map__fd(b->skel->maps.xfib_rcu_sync), &key,
				&b->rcu_inner_fd, BPF_ANY))
		return -errno;
	return 0;
}

static void bpf_daemon_info(void *ctx, const struct xfib_daemon *info)
{
	struct rib_dp_bpf *b = ctx;
	__u32 key = 0;

	bpf_map_update_elem(bpf_map__fd(b->skel->maps.xfib_daemon), &key, info,
			    BPF_ANY);
}

static int bpf_fdb_set(void *ctx, const struct xfib_fdb_key *k,
		       const struct xfib_fdb *v)
{
	struct rib_dp_bpf *b = ctx;

	return bpf_map_update_elem(bpf_map__fd(b->skel->maps.xfib_fdb), k, v,
				   BPF_ANY) ? -errno : 0;
}

static void bpf_fdb_del(void *ctx, const struct xfib_fdb_key *k)
{
	struct rib_dp_bpf *b = ctx;

	bpf_map_delete_elem(bpf_map__fd(b->skel->maps.xfib_fdb), k);
}

static int bpf_fdb_get(void *ctx, const struct xfib_fdb_key *k,
		       struct xfib_fdb *v)
{
	struct rib_dp_bpf *b = ctx;

	return bpf_map_lookup_elem(bpf_map__fd(b->skel->maps.xfib_fdb), k, v) ?
		       -errno : 0;
}

static void bpf_fdb_walk(void *ctx,
			 void (*cb)(void *cbctx, const struct xfib_fdb_key *k,
				    const struct xfib_fdb *v),
			 void *cbctx)
{
	struct rib_dp_bpf *b = ctx;
	int fd = bpf_map__fd(b->skel->maps.xfib_fdb);
	struct xfib_fdb_key k, next;
	struct xfib_fdb v;
	bool first = true;

	for (; !bpf_map_get_next_key(fd, first ? NULL : &k, &next); k = next) {
		first = false;
		if (!bpf_map_lookup_elem(fd, &next, &v))
			cb(cbctx, &next, &v);
	}
}

static const struct rib_dp_ops bpf_ops = {
	.neigh_host_set = bpf_neigh_host_set,
	.neigh_host_del = bpf_neigh_host_del,
	.grace_period = bpf_grace_period,
	.daemon_info = bpf_daemon_info,
	.fdb_set = bpf_fdb_set,
	.fdb_del = bpf_fdb_del,
	.fdb_get = bpf_fdb_get,
	.fdb_walk = bpf_fdb_walk,
};

int rib_dp_bpf_open(struct rib_dp *dp, struct xfib_fwd_bpf *skel)
{
	struct rib_dp_bpf *b = calloc(1, sizeof(*b));
	int err;

	memset(dp, 0, sizeof(*dp));
	if (!b)
		return -ENOMEM;
	b->skel = skel;
	dp->ops = &bpf_ops;
	dp->ctx = b;
	dp->nh = xfib_map_mmap(skel->maps.xfib_nexthops, true, &b->nh_len);
	dp->neigh = xfib_map_mmap(skel->maps.xfib_neighs, true, &b->neigh_len);
	dp->grp = xfib_map_mmap(skel->maps.xfib_nh_groups, true, &b->grp_len);
	dp->port = xfib_map_mmap(skel->maps.xfib_ifaces, true, &b->port_len);
	dp->nonlocal4 = xfib_map_mmap(skel->maps.xfib_nonlocal4, true, &b->nonlocal4_len);
	dp->rules = xfib_map_mmap(skel->maps.xfib_rules, true, &b->rules_len);
	dp->rules_active = xfib_map_mmap(skel->maps.xfib_rules_active, true,
					 &b->rules_active_len);
	dp->br_moving = xfib_map_mmap(skel->maps.xfib_br_moving, true,
				      &b->br_moving_len);
	b->rcu_inner_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "xfib_rcu_inner",
					 sizeof(__u32), sizeof(__u32), 1, NULL);
	if (dp->nh && dp->neigh && dp->grp && dp->port && dp->nonlocal4 &&
	    dp->rules && dp->rules_active && dp->br_moving &&
	    b->rcu_inner_fd >= 0)
		return 0;
	err = -errno;
	rib_dp_bpf_close(dp);
	return err;
}

void rib_dp_bpf_close(struct rib_dp *dp)
{
	struct rib_dp_bpf *b = dp->ctx;

	if (!b)
		return;
	if (dp->nh)
		munmap(dp->nh, b->nh_len);
	if (dp->neigh)
		munmap(dp->neigh, b->neigh_len);
	if (dp->grp)
		munmap(dp->grp, b->grp_len);
	if (dp->port)
		munmap(dp->port, b->port_len);
	if (dp->nonlocal4)
		munmap(dp->nonlocal4, b->nonlocal4_len);
	if (dp->rules)
		munmap(dp->rules, b->rules_len);
	if (dp->rules_active)
		munmap(dp->rules_active, b->rules_active_len);
	if (dp->br_moving)
		munmap(dp->br_moving, b->br_moving_len);
	if (b->rcu_inner_fd >= 0)
		close(b->rcu_inner_fd);
	free(b);
	memset(dp, 0, sizeof(*dp));
}
