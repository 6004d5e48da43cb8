// SPDX-License-Identifier: GPL-2.0-only
/*
 * dir24_8 as a lookup algorithm of fib.c: the tables of dir24.c in a
 * map-in-map slot, managed by fib_table.c.
 */
#include "fib_algo.h"
#include "fib_ranges.h"
#include "pin.h"

static void dir24_outer_maps(const struct xfib_fwd_bpf *s, int *o24, int *o8)
{
	*o24 = bpf_map__fd(s->maps.xfib_dir24_tbl24);
	*o8 = bpf_map__fd(s->maps.xfib_dir24_tbl8);
}

static int dir24_table_build(struct fib_inst *in, const struct fib_range *r,
			     size_t n, void *scratch)
{
	fib_to_bs4(r, n, scratch);
	return dir24_init_zeroed(&in->dir, in->m24, in->t8.base, in->ngroups) ?:
	       dir24_build(&in->dir, scratch, n);
}

static __u32 dir24_table_needed(const struct fib_inst *in,
				const struct fib_range *r)
{
	struct xfib_bs4_range one = { .start = (__u32)r->first, .nh = r->nh };

	return dir24_groups_needed(&in->dir, &one, 1, (__u32)r->last);
}

static int dir24_table_write(struct fib_inst *in, const struct fib_range *r)
{
	return dir24_write_range(&in->dir, (__u32)r->first, (__u32)r->last,
				 r->nh);
}

static struct grpool *dir24_table_pool(struct fib_inst *in)
{
	return &in->dir.pool;
}

static void dir24_table_fini(struct fib_inst *in)
{
	dir24_fini(&in->dir);
}

static const struct fib_table_ops dir24_table = {
	.levels = 1, .bits = 32,
	.outer_maps = dir24_outer_maps,
	.range_size = sizeof(struct xfib_bs4_range),
	.build = dir24_table_build,
	.groups_needed = dir24_table_needed,
	.write = dir24_table_write,
	.pool = dir24_table_pool,
	.fini = dir24_table_fini,
};

const struct fib_algo fib_algo_dir24_8 =
	FIB_TABLE_ALGO(XFIB_ALGO_DIR24_8, &dir24_table);
