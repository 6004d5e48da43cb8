// SPDX-License-Identifier: GPL-2.0-only
/*
 * trie6 as a lookup algorithm of fib.c: the tables of trie6.c in a
 * map-in-map slot, managed by fib_table.c.
 */
#include "fib_algo.h"
#include "fib_ranges.h"
#include "pin.h"

static void trie6_outer_maps(const struct xfib_fwd_bpf *s, int *o24, int *o8)
{
	*o24 = bpf_map__fd(s->maps.xfib_trie6_tbl24);
	*o8 = bpf_map__fd(s->maps.xfib_trie6_tbl8);
}

static int trie6_table_build(struct fib_inst *in, const struct fib_range *r,
			     size_t n, void *scratch)
{
	fib_to_bs6(r, n, scratch);
	return trie6_init_zeroed(&in->trie, in->m24, in->t8.base,
				 in->ngroups) ?:
	       trie6_build(&in->trie, scratch, n);
}

/* The worst case of one write; fib_table_update() adds them up. */
static __u32 trie6_table_needed(const struct fib_inst *in,
				const struct fib_range *r)
{
	return trie6_groups_needed(&in->trie, r->first, r->last);
}

static int trie6_table_write(struct fib_inst *in, const struct fib_range *r)
{
	return trie6_write_range(&in->trie, r->first, r->last, r->nh);
}

static struct grpool *trie6_table_pool(struct fib_inst *in)
{
	return &in->trie.pool;
}

static void trie6_table_fini(struct fib_inst *in)
{
	trie6_fini(&in->trie);
}

static const struct fib_table_ops trie6_table = {
	.levels = XFIB_TRIE6_MAX_LEVELS, .bits = 128,
	.outer_maps = trie6_outer_maps,
	.range_size = sizeof(struct xfib_bs6_range),
	.build = trie6_table_build,
	.groups_needed = trie6_table_needed,
	.write = trie6_table_write,
	.pool = trie6_table_pool,
	.fini = trie6_table_fini,
};

const struct fib_algo fib_algo_trie6 =
	FIB_TABLE_ALGO(XFIB_ALGO_TRIE6, &trie6_table);
