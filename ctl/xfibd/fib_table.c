// SPDX-License-Identifier: GPL-2.0-only
/*
 * What dir24_8 and trie6 share: an instance is a tbl24 map and a map of
 * tbl8 groups, created fresh for every build, mmap()ed so the daemon
 * writes entries with plain (atomic) stores, and linked into the
 * standby slot of two outer map-in-map maps when it is published. Route
 * changes are written in place after reserving the groups they take; a
 * pool that runs out makes fib.c rebuild with a larger one.
 *
 * Preference: one or two reads per lookup (trie6: one per 8 bits past
 * /24) whatever the size, but a 64 MiB first level and 1 KiB per group,
 * so these win from about a thousand prefixes on (fib.c):
 *
 *   25 + 10 * log2(n + 1), at most 250
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fib_algo.h"
#include "pin.h"

#define TBL24_VALUES (1u << 23)  /* 2^24 __u32 entries, two per value */
#define GROUP_VALUES 128         /* 256 __u32 entries */
#define GROUPS_MIN 1024
#define GROUPS_MAX (1u << 20)    /* 1 GiB of groups */

unsigned int fib_table_preference(const struct fib_scale *s)
{
	return fib_clamp_pref(25 + 10 * fib_log2n(s->prefixes), 250);
}

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
 * what the last full pool asked for. */
static __u32 pool_size(struct fib *f, int fam, size_t needed)
{
	size_t g = needed + needed / 4 + 256;

	if (g < f->fam[fam].grow_groups)
		g = f->fam[fam].grow_groups;
	if (g < GROUPS_MIN)
		g = GROUPS_MIN;
	if (g > GROUPS_MAX)
		g = GROUPS_MAX;
	return g;
}

static void maps_destroy(struct fib_inst *in)
{
	if (in->m24)
		munmap(in->m24, in->len24);
	if (in->m8)
		munmap(in->m8, in->len8);
	if (in->fd24 >= 0)
		close(in->fd24);
	if (in->fd8 >= 0)
		close(in->fd8);
	in->m24 = in->m8 = NULL;
	in->fd24 = in->fd8 = -1;
}

static void *map_mmap(int fd, size_t len)
{
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	return m == MAP_FAILED ? NULL : m;
}

static int maps_create(struct fib_inst *in, __u32 ngroups)
{
	LIBBPF_OPTS(bpf_map_create_opts, o24, .map_flags = BPF_F_MMAPABLE);
	LIBBPF_OPTS(bpf_map_create_opts, o8,
		    .map_flags = BPF_F_MMAPABLE | BPF_F_INNER_MAP);
	int err;

	in->fd24 = in->fd8 = -1;
	in->m24 = in->m8 = NULL;
	in->len24 = (size_t)TBL24_VALUES * 8;
	in->len8 = (size_t)ngroups * GROUP_VALUES * 8;
	in->fd24 = bpf_map_create(BPF_MAP_TYPE_ARRAY, "xfib_tbl24", 4, 8,
				  TBL24_VALUES, &o24);
	if (in->fd24 < 0)
		goto err;
	in->fd8 = bpf_map_create(BPF_MAP_TYPE_ARRAY, "xfib_tbl8", 4, 8,
				 ngroups * GROUP_VALUES, &o8);
	if (in->fd8 < 0)
		goto err;
	in->m24 = map_mmap(in->fd24, in->len24);
	if (!in->m24)
		goto err;
	in->m8 = map_mmap(in->fd8, in->len8);
	if (!in->m8)
		goto err;
	in->ngroups = ngroups;
	in->capacity = ngroups;
	in->mem_bytes = in->len24 + in->len8;
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

	err = maps_create(in, pool_size(f, fam, groups_for(r, n, t->levels,
							   t->bits)));
	if (err)
		return err;
	scratch = malloc(n * t->range_size);
	if (!scratch)
		return -ENOMEM;
	err = t->build(in, r, n, scratch);
	free(scratch);
	return err;
}

int fib_table_update(struct fib_inst *in, const struct fib_range *r, size_t n)
{
	const struct fib_table_ops *t = in->algo->table;
	__u32 need = 0;
	size_t i;
	int err;

	/* Reserve for the batch first; this catches almost every exhaustion
	 * before anything is written (see fib.h on why not all). */
	for (i = 0; i < n; i++)
		need += t->groups_needed(in, &r[i]);
	if (need > t->pool(in)->nfree)
		return -ENOSPC;
	for (i = 0; i < n; i++) {
		err = t->write(in, &r[i]);
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
	if (bpf_map_update_elem(o8, &in->slot, &in->fd8, BPF_ANY) ||
	    bpf_map_update_elem(o24, &in->slot, &in->fd24, BPF_ANY))
		return -errno;
	return 0;
}

void fib_table_unlink(struct fib *f, const struct fib_inst *in)
{
	int o24, o8;

	in->algo->table->outer_maps(f->skel, &o24, &o8);
	bpf_map_delete_elem(o24, &in->slot);
	bpf_map_delete_elem(o8, &in->slot);
}
