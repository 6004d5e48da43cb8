// SPDX-License-Identifier: GPL-2.0-only
/*
 * The live instance of a family, mmap()ed for the userspace lookup: the
 * tables the active word names (dir24_8 and trie6 through their outer
 * maps), mapped again whenever xfibd publishes another instance.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "dplookup.h"
#include "dpl_priv.h"
#include "lease.h"
#include "pin.h"
#include "xfib/tbl8_pool.h"


void dpl_tbl_unmap(struct dpl_tbl *t)
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
int dpl_map_tbl24(int outer_fd, __u32 slot, struct dpl_tbl *t)
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
int dpl_map_pool(int outer_fd, __u32 slot, struct dpl_tbl *t)
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

/* Points d at the instance the active word names now. */
static int load_instance(struct dpl *d)
{
	struct xfib_fwd_bpf *s = d->skel;
	int tries, o24, o8, err;

	for (tries = 0; tries < DPL_TRIES; tries++) {
		__u64 w = active_word(d);

		dpl_tbl_unmap(&d->t24);
		dpl_tbl_unmap(&d->t8);
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
		err = dpl_map_tbl24(o24, d->act.slot, &d->t24);
		if (!err)
			err = dpl_map_pool(o8, d->act.slot, &d->t8);
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
	err = dpl_rules_map(d);
	if (err)
		goto err;
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
	dpl_tbl_unmap(&d->t24);
	dpl_tbl_unmap(&d->t8);
	dpl_tbl_unmap(&d->bs);
	dpl_tbl_unmap(&d->dxr_direct);
	dpl_tbl_unmap(&d->dxr_ranges);
	dpl_tbl_unmap(&d->pt6_direct);
	dpl_tbl_unmap(&d->pt6_nodes);
	dpl_tbl_unmap(&d->pt6_leaves);
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
	dpl_rules_unmap(d);
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
