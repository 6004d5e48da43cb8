// SPDX-License-Identifier: GPL-2.0-only
/*
 * What dir24_8 and trie6 share: an instance is a tbl24 map and a pool of
 * tbl8 groups in chunk maps (tbl8_maps.h), created fresh for every build,
 * mmap()ed so the daemon writes entries with plain (atomic) stores. The
 * chunks go into the standby slot's entries of their outer map as they
 * are created, tbl24 into its outer map when the instance is published.
 * Route changes are written in place after reserving the groups they
 * take. A pool that runs out grows in place by whole chunks (at least
 * doubling): the new chunks are linked into the live slot before any of
 * their groups is handed out, and the groups already written keep their
 * numbers. Only a pool at the slot's limit (XFIB_POOL_GROUPS_MAX) or one
 * whose new chunks cannot be created makes fib.c rebuild (-ENOSPC).
 *
 * Preference: one or two reads per lookup (trie6: one per 8 bits past
 * /24) whatever the size, but a 64 MiB first level and 1 KiB per group,
 * so these win from about a thousand prefixes on (fib.c):
 *
 *   25 + 10 * log2(n + 1), at most 250
 *
 * (fib_select.c computes it.)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "algo_names.h"
#include "fib_algo.h"
#include "log.h"
#include "monoclock.h"
#include "pin.h"
#include "xfib/tbl8_pool.h"

#define GROUPS_MIN XFIB_POOL_CHUNK_GROUPS
#define GROUPS_MAX XFIB_POOL_GROUPS_MAX /* 1 GiB of groups */

/*
 * Groups a fresh build of these ranges allocates: one per block that a
 * range boundary cuts, at every level (dir24_8: the /24 blocks; trie6:
 * the /24, /32, ... /120 blocks). Ranges are sorted, so at each level the
 * cut blocks come in order and counting distinct ones is a comparison.
 */
static size_t groups_for(const struct fib_range *r, size_t n, int levels,
			 int bits)
{
	xfib_u128 prev[16];
	size_t count = 0, i;
	int l;

	for (l = 0; l < levels; l++)
		prev[l] = ~(xfib_u128)0;
	for (i = 1; i < n; i++) {
		xfib_u128 b = r[i].first;

		for (l = 0; l < levels; l++) {
			int shift = bits - 24 - 8 * l; /* bits below the block */
			xfib_u128 block = b >> shift;

			if (!(b & ((((xfib_u128)1) << shift) - 1)))
				break; /* aligned: no cut at this level or below */
			if (block != prev[l]) {
				prev[l] = block;
				count++;
			}
		}
	}
	return count;
}

/* Room for what a build needs, a quarter more for updates, and at least
 * what the last full pool asked for, in whole chunks. */
static __u32 pool_size(struct fib *f, int fam, size_t needed)
{
	size_t g = needed + needed / 4 + 256;

	if (g < f->fam[fam].grow_groups)
		g = f->fam[fam].grow_groups;
	if (g < GROUPS_MIN)
		g = GROUPS_MIN;
	if (g > GROUPS_MAX)
		g = GROUPS_MAX;
	/* GROUPS_MAX is whole chunks: rounding up stays below it. */
	return (g + XFIB_POOL_CHUNK_GROUPS - 1) &
	       ~(size_t)(XFIB_POOL_CHUNK_GROUPS - 1);
}

static void maps_destroy(struct fib_inst *in)
{
	if (in->m24)
		munmap(in->m24, in->len24);
	if (in->fd24 >= 0)
		close(in->fd24);
	tbl8_maps_destroy(&in->t8);
	in->m24 = NULL;
	in->fd24 = -1;
}

static void *map_mmap(int fd, size_t len)
{
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	return m == MAP_FAILED ? NULL : m;
}

/* The slot's chunks that no packet reads (any more). */
static void pool_release(struct fib *f, const struct fib_inst *in)
{
	int o24, o8, err;

	in->algo->table->outer_maps(f->skel, &o24, &o8);
	pthread_mutex_lock(&f->spare_lock);
	err = tbl8_maps_clear(&f->tbl8_spare, o8, in->slot);
	pthread_mutex_unlock(&f->spare_lock);
	if (err)
		pr_warn("releasing the group pool of slot %u: %s", in->slot,
			strerror(-err));
}

int fib_take_fresh_tbl24(struct fib *f)
{
	/* Both families' builds may ask at once. */
	return __atomic_exchange_n(&f->fresh_tbl24, -1, __ATOMIC_ACQ_REL);
}

/* ngroups: whole chunks. The chunks go into the instance's slot at once
 * (the standby slot: fib_publish.c builds only there). */
static int maps_create(struct fib *f, struct fib_inst *in, __u32 ngroups)
{
	LIBBPF_OPTS(bpf_map_create_opts, o24, .map_flags = BPF_F_MMAPABLE);
	int o24_outer, o8_outer, err;

	in->fd24 = -1;
	in->m24 = NULL;
	/* One value of 2^24 entries (bpf/lib/maps.h); both families' tbl24
	 * have that size. */
	in->len24 = XFIB_DIR24_TBL24_BYTES;
	in->fd24 = fib_take_fresh_tbl24(f);
	if (in->fd24 < 0)
		in->fd24 = bpf_map_create(BPF_MAP_TYPE_ARRAY, "xfib_tbl24", 4,
					  XFIB_DIR24_TBL24_BYTES, 1, &o24);
	if (in->fd24 < 0)
		goto err;
	in->m24 = map_mmap(in->fd24, in->len24);
	if (!in->m24)
		goto err;
	in->algo->table->outer_maps(f->skel, &o24_outer, &o8_outer);
	err = tbl8_maps_create(&in->t8, ngroups / XFIB_POOL_CHUNK_GROUPS,
			       o8_outer, in->slot);
	if (err) {
		pool_release(f, in);
		maps_destroy(in);
		return err;
	}
	in->ngroups = ngroups;
	in->capacity = ngroups;
	in->mem_bytes = in->len24 + in->t8.len;
	return 0;
err:
	err = -errno;
	maps_destroy(in);
	return err;
}

int fib_table_build(struct fib *f, int fam, struct fib_inst *in,
		    const struct fib_range *r, size_t n)
{
	const struct fib_table_ops *t = in->algo->table;
	void *scratch;
	int err;

	err = maps_create(f, in, pool_size(f, fam, groups_for(r, n, t->levels,
							      t->bits)));
	if (err)
		return err;
	scratch = malloc(n * t->range_size);
	err = scratch ? t->build(in, r, n, scratch) : -ENOMEM;
	free(scratch);
	if (err)
		pool_release(f, in);
	return err;
}

/*
 * Room for need free groups, in place: the pool at least doubles, in
 * whole chunks, up to the slot's limit. -ENOSPC when it cannot (at the
 * limit, or the chunks cannot be had): fib.c then rebuilds.
 */
static int pool_grow(struct fib_inst *in, __u32 need)
{
	struct grpool *p = in->algo->table->pool(in);
	__u64 t0 = mono_us(), g = (__u64)p->ngroups * 2;
	int err;

	if (g < (__u64)p->ngroups - p->nfree + need)
		g = (__u64)p->ngroups - p->nfree + need;
	g = (g + XFIB_POOL_CHUNK_GROUPS - 1) &
	    ~(__u64)(XFIB_POOL_CHUNK_GROUPS - 1);
	if (g > GROUPS_MAX)
		g = GROUPS_MAX;
	if (g == p->ngroups)
		return -ENOSPC; /* the slot's limit */
	/* The chunks are in the outer map when this returns: only then may
	 * a table entry refer to their groups. */
	err = tbl8_maps_grow(&in->t8, g / XFIB_POOL_CHUNK_GROUPS) ?:
	      grpool_grow(p, g);
	if (err) {
		pr_warn("%s group pool full (%u): growing to %llu failed: %s",
			xfib_algo_name(in->algo->id), p->ngroups,
			(unsigned long long)g, strerror(-err));
		return -ENOSPC;
	}
	pr_info("%s group pool full (%u): grown in place to %u in %llu us",
		xfib_algo_name(in->algo->id), in->ngroups, p->ngroups,
		(unsigned long long)(mono_us() - t0));
	in->ngroups = p->ngroups;
	in->capacity = p->ngroups;
	in->mem_bytes = in->len24 + in->t8.len;
	return p->nfree >= need ? 0 : -ENOSPC;
}

int fib_table_update(struct fib_inst *in, const struct fib_range *r, size_t n)
{
	const struct fib_table_ops *t = in->algo->table;
	struct grpool *p = t->pool(in);
	__u64 need = 0;
	size_t i;
	int err;

	/* Room for the batch first, one growth for all of it (the sum is
	 * a bound of the worst case, see fib.h; past the slot's limit the
	 * writes below grow as far as they need). */
	for (i = 0; i < n; i++)
		need += t->groups_needed(in, &r[i]);
	if (need > p->nfree)
		pool_grow(in, need > GROUPS_MAX ? GROUPS_MAX : (__u32)need);
	for (i = 0; i < n; i++) {
		err = t->write(in, &r[i]);
		/* A single write stores nothing when it returns -ENOSPC:
		 * grow and write it again. */
		if (err == -ENOSPC)
			err = pool_grow(in, t->groups_needed(in, &r[i])) ?:
			      t->write(in, &r[i]);
		if (err)
			return err;
	}
	return 0;
}

void fib_table_reclaim(struct fib_inst *in)
{
	grpool_reclaim(in->algo->table->pool(in));
}

bool fib_table_has_retired(struct fib_inst *in)
{
	return in->algo->table->pool(in)->nretired != 0;
}

__u32 fib_table_groups_used(struct fib_inst *in)
{
	return grpool_used(in->algo->table->pool(in));
}

void fib_table_destroy(struct fib *f, struct fib_inst *in)
{
	in->algo->table->fini(in);
	maps_destroy(in);
}

int fib_table_link(struct fib *f, const struct fib_inst *in)
{
	int o24, o8;

	in->algo->table->outer_maps(f->skel, &o24, &o8);
	if (bpf_map_update_elem(o24, &in->slot, &in->fd24, BPF_ANY)) {
		int err = -errno;

		pool_release(f, in);
		return err;
	}
	return 0;
}

/* Also for an instance a previous xfibd left (its pool size unknown):
 * whatever the slot holds goes. */
void fib_table_unlink(struct fib *f, const struct fib_inst *in)
{
	int o24, o8;

	in->algo->table->outer_maps(f->skel, &o24, &o8);
	bpf_map_delete_elem(o24, &in->slot);
	pool_release(f, in);
}
