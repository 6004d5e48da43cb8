// SPDX-License-Identifier: GPL-2.0-only
/*
 * poptrie6 as a lookup algorithm of fib.c: the tables of poptrie6.c in
 * one of the two slots of the xfib_pt6_direct / xfib_pt6_nodes /
 * xfib_pt6_leaves arrays (mmap()ed here), searched by
 * include/xfib/lookup_poptrie6.h. A build fills the standby slot (one
 * depth-first pass over the ranges) and publishes it with the family's
 * active word, as dxr and bsearch do. Batches of changes then go in
 * place (poptrie6_update.c): each direct entry a change touches gets a
 * new subtree in free space, published by one store of the entry, and
 * the old subtree is free again after fib.c's grace period (reclaim).
 * When no free run is long enough, fib.c rebuilds into the other slot
 * and swaps, which compacts the table.
 *
 * Preference, from make bench-lookup on this machine (65536 random keys
 * inside the table's prefixes, BPF / native ns per lookup, medians of 5;
 * bytes per prefix of the instance):
 *
 *   prefixes   bsearch6    trie6                   poptrie6
 *   10         43 / 42     37 / 16    6.8 MB/pfx   21 / 16    105 kB/pfx
 *   1000       108 / 118   40 / 22    71,008 B     22 / 23    1,111 B
 *   100000     (no fit)    188 / 100   2,419 B     100 / 74      51 B
 *   250000     (no fit)    230 / 102   1,607 B     199 / 169     35 B
 *
 * With random keys poptrie6 looks up faster than trie6 at every size
 * measured, in a fiftieth of the memory or less, and builds faster (198
 * against 376 ms at 250k); only a handful of keys that stay in cache go
 * faster through trie6 (17-20 ns against 20-30: each 6-bit level counts
 * bits in software, BPF has no popcount instruction). Natively trie6 is
 * faster at 250k: userspace builds for any x86-64 and so has no popcount
 * instruction either. The
 * preference is trie6's, raised by more than the 5% hysteresis of fib.c
 * at every size, so poptrie6 replaces trie6 wherever it fits and trie6
 * takes over only beyond. It crosses bsearch6's near 600 prefixes (the
 * switch up at about 700, back down below about 470), where trie6's
 * crossed, although poptrie6 measures faster than bsearch6 from 10
 * prefixes on: small tables keep bsearch6, a few kB where poptrie6
 * publishes a 1 MiB direct table. 0 when the table may not fit the slot:
 *
 *   35 + 11 * log2(n + 1), at most 250
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "fib_algo.h"
#include "fib_ranges.h"
#include "pin.h"
#include "poptrie6.h"

struct fib_pt6_maps {
	__u32 *direct;
	struct xfib_pt6_node *nodes;
	__u32 *leaves;
	size_t direct_len, nodes_len, leaves_len;
};

/*
 * Ranges a slot is meant for: Internet-shaped tables take about 0.85
 * nodes and 1.4 leaves per range, so 500k ranges (some 350k prefixes)
 * fill about 80% of the nodes. Tables shaped otherwise may need more:
 * a build that did not fit is remembered, and the preference is 0 from
 * 90% of its size on.
 */
#define PT6_RANGES_MAX 500000u
static size_t pt6_nofit_ranges;


static unsigned int pt6_preference(const struct fib_scale *s)
{
	size_t ranges = s->ranges ? s->ranges : s->prefixes * 3 / 2;

	if (ranges > PT6_RANGES_MAX ||
	    (pt6_nofit_ranges && ranges >= pt6_nofit_ranges / 10 * 9))
		return 0;
	return fib_clamp_pref(35 + 11 * fib_log2n(s->prefixes), 250);
}

static int pt6_fib_build(struct fib *f, int fam, struct fib_inst *in,
			 const struct fib_range *r, size_t n)
{
	struct fib_pt6_maps *m = f->pt6;
	size_t slot = in->slot & 1;
	struct pt6_slot s = {
		.direct = m->direct + slot * XFIB_PT6_TOP,
		.nodes = m->nodes + slot * XFIB_PT6_SLOT_NODES,
		.node_cap = XFIB_PT6_SLOT_NODES,
		.leaves = m->leaves + slot * XFIB_PT6_SLOT_LEAVES,
		.leaf_cap = XFIB_PT6_SLOT_LEAVES,
	};
	struct xfib_bs6_range *t;
	struct pt6_state *st;
	int err;

	st = calloc(1, sizeof(*st));
	t = malloc((n ? n : 1) * sizeof(*t));
	if (!st || !t) {
		free(st);
		free(t);
		return -ENOMEM;
	}
	in->priv = st; /* destroy() frees it, also after a failed build */
	fib_to_bs6(r, n, t);
	err = pt6_state_build(st, &s, t, n);
	free(t);
	if (err == -ENOSPC)
		pt6_nofit_ranges = n;
	if (err)
		return err;
	if (pt6_nofit_ranges && n >= pt6_nofit_ranges)
		pt6_nofit_ranges = 0;
	in->nranges = n;
	in->capacity = PT6_RANGES_MAX;
	in->mem_bytes = pt6_bytes(&st->use);
	return 0;
}

/*
 * The changed spans into the published slot (poptrie6_update.c). Every
 * failure is -ENOSPC to fib.c, which then rebuilds into the other slot:
 * no free run long enough is what a rebuild fixes (it compacts), a
 * batch that would rewrite most of a large table is faster built whole
 * (-E2BIG), and anything else (no memory, a nexthop the format cannot
 * hold) the rebuild meets again, reports and retries with backoff.
 */
static int pt6_fib_update(struct fib_inst *in, const struct fib_range *r,
			  size_t n)
{
	struct pt6_state *st = in->priv;
	struct pt6_change *c;
	long long ranges;
	size_t i;
	int err;

	if (!st)
		return -ENOSPC;
	c = malloc((n ? n : 1) * sizeof(*c));
	if (!c)
		return -ENOSPC;
	for (i = 0; i < n; i++)
		c[i] = (struct pt6_change){ r[i].first, r[i].last, r[i].nh };
	err = pt6_update(st, c, n);
	free(c);
	in->mem_bytes = pt6_bytes(&st->use);
	ranges = (long long)in->nranges + st->ranges_delta;
	in->nranges = ranges > 1 ? (__u32)ranges : 1;
	st->ranges_delta = 0;
	return err ? -ENOSPC : 0;
}

static void pt6_fib_reclaim(struct fib_inst *in)
{
	if (in->priv)
		pt6_reclaim(in->priv);
}

static bool pt6_fib_has_retired(struct fib_inst *in)
{
	return in->priv && pt6_has_retired(in->priv);
}

/* The slots are fixed maps mapped by fib_pt6_map(): only the state goes. */
static void pt6_destroy(struct fib *f, struct fib_inst *in)
{
	if (!in->priv)
		return;
	pt6_state_fini(in->priv);
	free(in->priv);
	in->priv = NULL;
}

int fib_pt6_map(struct fib *f)
{
	const struct xfib_fwd_bpf *s = f->skel;
	struct fib_pt6_maps *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	f->pt6 = m;
	m->direct = xfib_map_mmap(s->maps.xfib_pt6_direct, true, &m->direct_len);
	m->nodes = xfib_map_mmap(s->maps.xfib_pt6_nodes, true, &m->nodes_len);
	m->leaves = xfib_map_mmap(s->maps.xfib_pt6_leaves, true, &m->leaves_len);
	if (!m->direct || !m->nodes || !m->leaves)
		return -errno;
	return 0;
}

void fib_pt6_unmap(struct fib *f)
{
	struct fib_pt6_maps *m = f->pt6;

	if (!m)
		return;
	if (m->direct)
		munmap(m->direct, m->direct_len);
	if (m->nodes)
		munmap(m->nodes, m->nodes_len);
	if (m->leaves)
		munmap(m->leaves, m->leaves_len);
	free(m);
	f->pt6 = NULL;
}

const struct fib_algo fib_algo_poptrie6 = {
	.id = XFIB_ALGO_POPTRIE6,
	.preference = pt6_preference,
	.build = pt6_fib_build,
	.update = pt6_fib_update,
	.reclaim = pt6_fib_reclaim,
	.has_retired = pt6_fib_has_retired,
	.destroy = pt6_destroy,
};
