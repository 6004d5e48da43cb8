// SPDX-License-Identifier: GPL-2.0-only
/*
 * xfibctl neighbours, nexthops: the dataplane's index arrays, an entry a
 * line (text) or an array element (JSON).
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <arpa/inet.h>

#include "dplookup.h"
#include "output.h"
#include "xfibctl.h"

/*
 * The index arrays as the dataplane reads them. Both are mmap()ed read-only:
 * reading 64k entries one syscall each would take longer than the dump.
 * An entry is in use when it has a family (neighbours) or a kind
 * (nexthops); xfibd zeroes an entry only after a grace period, so an entry
 * just retired still shows.
 */
struct idx_arrays {
	const struct xfib_neigh *neigh;
	const struct xfib_nexthop *nh;
	const struct xfib_nh_group *grp;
	size_t neigh_len, nh_len, grp_len;
};

static int idx_arrays_map(struct xfib_fwd_bpf *skel, struct idx_arrays *a)
{
	a->neigh = xfib_map_mmap(skel->maps.xfib_neighs, false, &a->neigh_len);
	a->nh = xfib_map_mmap(skel->maps.xfib_nexthops, false, &a->nh_len);
	a->grp = xfib_map_mmap(skel->maps.xfib_nh_groups, false, &a->grp_len);
	if (!a->neigh || !a->nh || !a->grp) {
		int err = -errno;

		err_cmd("map %s: %s", !a->neigh ? "xfib_neighs" :
			!a->nh ? "xfib_nexthops" : "xfib_nh_groups", strerror(-err));
		return err;
	}
	return 0;
}

static void idx_arrays_unmap(struct idx_arrays *a)
{
	if (a->neigh)
		munmap((void *)a->neigh, a->neigh_len);
	if (a->nh)
		munmap((void *)a->nh, a->nh_len);
	if (a->grp)
		munmap((void *)a->grp, a->grp_len);
}

/* Opens the router and maps the arrays, after resolving --dev into *dev
 * (0: no filter); *skel to destroy afterwards. */
static int idx_dump_open(struct ctl *c, struct xfib_fwd_bpf **skel,
			 struct idx_arrays *a, __u32 *dev)
{
	int err = resolve_ifname("--dev", c->dev_name, dev);

	if (err)
		return err;
	err = open_dataplane(c, 0, skel);
	if (err)
		return err;
	return idx_arrays_map(*skel, a);
}

static const char *neigh_state_name(__u8 state)
{
	return state == XFIB_NEIGH_VALID ? "valid" : "invalid";
}

/* ---- neighbours --------------------------------------------------------------- */

/* One entry of the neighbour array, in words. */
struct neigh_row {
	__u32 idx;
	const struct xfib_neigh *e;
	char addr[INET6_ADDRSTRLEN], lladdr[18], src_mac[18], dev[IF_NAMESIZE];
};

static void neigh_row_fill(struct neigh_row *w, __u32 idx, const struct xfib_neigh *e)
{
	w->idx = idx;
	w->e = e;
	addr_str(e->family, e->addr, w->addr, sizeof(w->addr));
	mac_str(e->dmac, w->lladdr, sizeof(w->lladdr));
	mac_str(e->smac, w->src_mac, sizeof(w->src_mac));
	dev_str(e->ifindex, w->dev);
}

static void neigh_text(const struct neigh_row *w)
{
	printf("neigh %u %s %s dev %s lladdr %s %s\n", w->idx,
	       fam_name(af_fam(w->e->family)), w->addr, w->dev, w->lladdr,
	       neigh_state_name(w->e->state));
}

static json_object *neigh_json(const struct neigh_row *w)
{
	json_object *o = json_object_new_object();

	js_set(o, "index", js_u64(w->idx));
	js_set(o, "family", js_str(fam_name(af_fam(w->e->family))));
	js_set(o, "address", js_str(w->addr));
	js_set(o, "ifindex", js_u64(w->e->ifindex));
	js_set(o, "dev", js_str(w->dev));
	js_set(o, "lladdr", js_str(w->lladdr));
	js_set(o, "src_mac", js_str(w->src_mac));
	js_set(o, "state", js_str(neigh_state_name(w->e->state)));
	return o;
}

int cmd_neighbours(struct ctl *c, int argc, char **argv)
{
	struct xfib_fwd_bpf *skel = NULL;
	struct idx_arrays arr = { 0 };
	struct out_list list;
	struct neigh_row w;
	__u32 i, ifindex;
	int err;

	err = idx_dump_open(c, &skel, &arr, &ifindex);
	if (err)
		goto out;
	if (c->json)
		out_list_begin(&list);
	for (i = 1; i < XFIB_NEIGH_MAX; i++) {
		struct xfib_neigh e = arr.neigh[i];

		if (!e.family || (c->fam >= 0 && af_fam(e.family) != c->fam) ||
		    (ifindex && e.ifindex != ifindex))
			continue;
		neigh_row_fill(&w, i, &e);
		if (c->json)
			out_list_add(&list, neigh_json(&w));
		else
			neigh_text(&w);
	}
	if (c->json)
		err = out_list_end(&list);
out:
	idx_arrays_unmap(&arr);
	xfib_fwd_bpf__destroy(skel);
	return err;
}

/* ---- nexthops ------------------------------------------------------------------ */

/* One entry of the nexthop array, in words. */
struct nh_row {
	__u32 idx;
	const struct xfib_nexthop *e;
	bool out;                 /* has a family and a device */
	bool gw;
	struct xfib_neigh ne;     /* a gateway's neighbour entry, else zeroes */
	char dev[IF_NAMESIZE], gw_addr[INET6_ADDRSTRLEN], lladdr[18];
	/* A group's members in bucket order, and their buckets. */
	__u32 members[XFIB_GROUP_BUCKETS], buckets[XFIB_GROUP_BUCKETS];
	size_t nmembers;
};

static void nh_row_fill(struct nh_row *w, const struct idx_arrays *arr, __u32 idx,
			const struct xfib_nexthop *e)
{
	w->idx = idx;
	w->e = e;
	w->gw = e->kind == XFIB_NH_GATEWAY;
	w->out = w->gw || e->kind == XFIB_NH_CONNECTED;
	memset(&w->ne, 0, sizeof(w->ne));
	if (w->gw && e->neigh && e->neigh < XFIB_NEIGH_MAX)
		w->ne = arr->neigh[e->neigh];
	if (w->out)
		dev_str(e->ifindex, w->dev);
	if (w->gw)
		addr_str(e->family, e->gw, w->gw_addr, sizeof(w->gw_addr));
	mac_str(w->ne.dmac, w->lladdr, sizeof(w->lladdr));
	w->nmembers = 0;
	if (e->kind == XFIB_NH_GROUP)
		w->nmembers = dpl_group_members(arr->grp, e, w->members, w->buckets);
}

static void nh_text(const struct nh_row *w)
{
	const struct xfib_nexthop *e = w->e;
	size_t i;

	printf("nexthop %u %s", w->idx, dpl_kind_name(e->kind));
	if (w->gw)
		printf(" %s dev %s neigh %u lladdr %s %s", w->gw_addr, w->dev,
		       e->neigh, w->lladdr, neigh_state_name(w->ne.state));
	else if (w->out)
		printf(" %s dev %s", fam_name(af_fam(e->family)), w->dev);
	if (e->kind == XFIB_NH_GROUP) {
		printf(" index %u buckets", e->group);
		for (i = 0; i < w->nmembers; i++)
			printf(" %u:%u", w->members[i], w->buckets[i]);
	}
	if (e->mtu)
		printf(" mtu %u", e->mtu);
	if (XFIB_NH_IS_DFLT(w->idx))
		printf(" default_route");
	printf("\n");
}

static json_object *nh_group_json(const struct nh_row *w)
{
	json_object *g = json_object_new_object(), *m = json_object_new_array();
	size_t i;

	js_set(g, "index", js_u64(w->e->group));
	for (i = 0; m && i < w->nmembers; i++) {
		json_object *e = json_object_new_object();

		js_set(e, "nexthop", js_u64(w->members[i]));
		js_set(e, "buckets", js_u64(w->buckets[i]));
		json_object_array_add(m, e);
	}
	js_set(g, "members", m);
	return g;
}

/* Members without a value are null: every entry has the same members. */
static json_object *nh_json(const struct nh_row *w)
{
	const struct xfib_nexthop *e = w->e;
	json_object *o = json_object_new_object(), *ne = NULL;

	js_set(o, "index", js_u64(w->idx));
	js_set(o, "kind", js_str(dpl_kind_name(e->kind)));
	js_set(o, "family", w->out ? js_str(fam_name(af_fam(e->family))) : NULL);
	js_set(o, "gateway", w->gw ? js_str(w->gw_addr) : NULL);
	js_set(o, "ifindex", js_u64(w->out ? e->ifindex : 0));
	js_set(o, "dev", w->out ? js_str(w->dev) : NULL);
	js_set(o, "mtu", js_u64(e->mtu));
	js_set(o, "default_route", js_bool(XFIB_NH_IS_DFLT(w->idx)));
	if (w->gw) {
		ne = json_object_new_object();
		js_set(ne, "index", js_u64(e->neigh));
		js_set(ne, "lladdr", js_str(w->lladdr));
		js_set(ne, "state", js_str(neigh_state_name(w->ne.state)));
	}
	js_set(o, "neigh", ne);
	if (e->kind == XFIB_NH_GROUP)
		js_set(o, "group", nh_group_json(w));
	return o;
}

int cmd_nexthops(struct ctl *c, int argc, char **argv)
{
	struct xfib_fwd_bpf *skel = NULL;
	struct idx_arrays arr = { 0 };
	struct out_list list;
	struct nh_row w;
	__u32 i, ifindex;
	int err;

	err = idx_dump_open(c, &skel, &arr, &ifindex);
	if (err)
		goto out;
	if (c->json)
		out_list_begin(&list);
	for (i = 1; i < XFIB_NEXTHOP_MAX; i++) {
		struct xfib_nexthop e = arr.nh[i];
		bool out = e.kind == XFIB_NH_GATEWAY || e.kind == XFIB_NH_CONNECTED;

		/* Only nexthops with a family and a device match a filter. */
		if (e.kind == XFIB_NH_NONE ||
		    (c->fam >= 0 && (!out || af_fam(e.family) != c->fam)) ||
		    (ifindex && (!out || e.ifindex != ifindex)))
			continue;
		nh_row_fill(&w, &arr, i, &e);
		if (c->json)
			out_list_add(&list, nh_json(&w));
		else
			nh_text(&w);
	}
	if (c->json)
		err = out_list_end(&list);
out:
	idx_arrays_unmap(&arr);
	xfib_fwd_bpf__destroy(skel);
	return err;
}
