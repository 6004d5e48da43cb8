// SPDX-License-Identifier: GPL-2.0-only
/*
 * The tables policy rules reach, built and published (fib_tables.h,
 * include/xfib/tables.h for what packets read).
 *
 * Such a table is small, and rebuilt whole when it changes: its prefix
 * tree (rib_tslot.tree, or main's for a copy of main) is walked into
 * ranges with the answering prefix's length, the ranges go into a fresh
 * power-of-two block of the family's pool (padded by repeating the last
 * one), and the slot's descriptor is replaced with one 8-byte store. The
 * block it replaced is reused after the flush's grace period (fib.c), as
 * are the nexthop indexes its ranges named (rib_reclaim, in the same
 * grace period): a packet that read the old descriptor finds both intact.
 *
 * A slot with no table, one whose routes are still loading or that no
 * rule reaches any more is published as KERNEL: a rule that names it
 * (published before it changed, or by a previous xfibd) sends its
 * packets to the kernel, never to "no route here".
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fib_tables.h"
#include "fib_tpool.h"
#include "log.h"
#include "pin.h"

struct tblock {
	__u32 off;
	__u8 fam;
	__u8 log2n;
};

struct fib_tables {
	struct xfib_table_desc *desc; /* mmap()ed xfib_tables */
	struct xfib_table_info *info; /* mmap()ed xfib_table_info */
	struct xfib_tr4 *pool4;       /* mmap()ed xfib_tpool4 */
	struct xfib_tr6 *pool6;       /* mmap()ed xfib_tpool6 */
	size_t desc_len, info_len, pool4_len, pool6_len;
	struct fib_tpool pool[XFIB_FAMILIES];
	/* The block each slot's published descriptor names, if READY. */
	struct tblock cur[XFIB_FAMILIES][XFIB_TABLE_SLOTS];
	bool has_block[XFIB_FAMILIES][XFIB_TABLE_SLOTS];
	struct tblock *retired;       /* freed after the next grace period */
	size_t nretired, retired_cap;
	bool all;                     /* the next flush builds every slot */
	bool adopted;                 /* a previous xfibd's blocks may still
				       * be read: the pool is free after a
				       * grace period */
};

/* A range while building: its first address and ptree_plen_value. */
struct trange {
	xfib_u128 first;
	__u32 v;
};

struct trange_buf {
	struct trange *r;
	size_t n, cap, max;
};

static int trange_emit(void *ctx, xfib_u128 first, xfib_u128 last, __u32 v)
{
	struct trange_buf *b = ctx;

	(void)last;
	if (b->n == b->max)
		return -ENOSPC; /* more than the pool holds */
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 64;
		struct trange *r = realloc(b->r, cap * sizeof(*r));

		if (!r)
			return -ENOMEM;
		b->r = r;
		b->cap = cap;
	}
	b->r[b->n].first = first;
	b->r[b->n].v = v;
	b->n++;
	return 0;
}

static __u32 pool_size(int fam)
{
	return fam == XFIB_V4 ? XFIB_TPOOL4_SIZE : XFIB_TPOOL6_SIZE;
}

static __u8 log2_ceil(size_t n)
{
	__u8 l = 0;

	while (((size_t)1 << l) < n)
		l++;
	return l;
}

/* Writes b's ranges to [off, off + 2^log2n) of fam's pool, the last
 * repeated to the end. */
static void ranges_write(struct fib_tables *t, int fam, __u32 off, __u8 log2n,
			 const struct trange_buf *b)
{
	size_t i, n = (size_t)1 << log2n;

	for (i = 0; i < n; i++) {
		const struct trange *r = &b->r[i < b->n ? i : b->n - 1];

		if (fam == XFIB_V4) {
			t->pool4[off + i].start = (__u32)r->first;
			t->pool4[off + i].nh_plen = r->v;
		} else {
			struct xfib_tr6 *e = &t->pool6[off + i];

			e->hi = (__u64)(r->first >> 64);
			e->lo = (__u64)r->first;
			e->nh = r->v & 0xffffffu;
			e->plen = r->v >> 24;
			memset(e->pad, 0, sizeof(e->pad));
		}
	}
}

/* Replaces the slot's descriptor, and retires the block it named. */
static int desc_publish(struct fib_tables *t, int fam, int s,
			struct xfib_table_desc d, const struct tblock *blk)
{
	struct xfib_table_desc *cur = &t->desc[fam * XFIB_TABLE_SLOTS + s];
	__u64 word;

	d.gen = cur->gen + 1;
	memcpy(&word, &d, sizeof(word));
	/* After the ranges: a reader that sees the descriptor sees them. */
	__atomic_store_n((__u64 *)cur, word, __ATOMIC_RELEASE);
	if (t->has_block[fam][s]) {
		if (t->nretired == t->retired_cap) {
			size_t cap = t->retired_cap ? 2 * t->retired_cap : 16;
			struct tblock *v = realloc(t->retired, cap * sizeof(*v));

			/* Without memory the block is lost to the pool,
			 * never reused early. */
			if (!v)
				return -ENOMEM;
			t->retired = v;
			t->retired_cap = cap;
		}
		t->retired[t->nretired++] = t->cur[fam][s];
	}
	t->has_block[fam][s] = blk != NULL;
	if (blk)
		t->cur[fam][s] = *blk;
	return 0;
}

/* Walks the slot's table into b; the reason it cannot be mirrored, or
 * NONE. */
static int table_ranges(struct fib *f, int fam, const struct rib_tslot *ts,
			struct trange_buf *b, __u8 *reason)
{
	static const __u8 zero[16];
	const struct ptree *tree = ts->main_copy ? &f->rib->tree[fam][0] :
						   &ts->tree;
	int err;

	*reason = XFIB_TABLE_R_NONE;
	if (!ts->main_copy && ts->src_routes) {
		*reason = XFIB_TABLE_R_UNSUPPORTED;
		return 0;
	}
	/* A tree of more prefixes than the pool has entries (a copy of a
	 * full main table) has more ranges in practice: not walked at
	 * every change of main only to find so. */
	b->max = pool_size(fam);
	if (ptree_count(tree) > b->max) {
		*reason = XFIB_TABLE_R_TOO_LARGE;
		return 0;
	}
	err = ptree_walk_span_plen(tree, zero, 0, XFIB_NH_IDX_NONE,
				   trange_emit, b);
	if (err == -ENOSPC) {
		*reason = XFIB_TABLE_R_TOO_LARGE;
		return 0;
	}
	return err;
}

/* Builds slot s of fam into a new block and publishes it (or the state
 * that stands for it). */
static int slot_build(struct fib *f, struct fib_tables *t, int fam, int s)
{
	const struct rib_tslot *ts = &f->rib->tslot[fam][s];
	struct xfib_table_info in = {
		.table = ts->table,
		.main_copy = ts->main_copy,
		.routes = ptree_count(ts->main_copy ? &f->rib->tree[fam][0] :
						      &ts->tree),
	};
	struct xfib_table_desc d = { .state = XFIB_TABLE_KERNEL };
	struct trange_buf b = { 0 };
	struct tblock blk = { .fam = fam };
	int err = 0;

	if (!ts->table || ts->loading || ts->retiring || !in.routes) {
		if (ts->table && !ts->loading && !ts->retiring)
			d.state = XFIB_TABLE_EMPTY;
		goto publish;
	}
	err = table_ranges(f, fam, ts, &b, &in.reason);
	if (err || in.reason)
		goto publish;
	in.ranges = b.n;
	blk.log2n = log2_ceil(b.n);
	if (fib_tpool_alloc(&t->pool[fam], blk.log2n, &blk.off)) {
		in.reason = XFIB_TABLE_R_TOO_LARGE;
		goto publish;
	}
	ranges_write(t, fam, blk.off, blk.log2n, &b);
	d = (struct xfib_table_desc){
		.off = blk.off,
		.state = XFIB_TABLE_READY,
		.log2n = blk.log2n,
	};
publish:
	free(b.r);
	if (err) /* out of memory: the table keeps what it had */
		return err;
	in.state = d.state;
	err = desc_publish(t, fam, s, d, d.state == XFIB_TABLE_READY ? &blk : NULL);
	t->info[fam * XFIB_TABLE_SLOTS + s] = in;
	return err;
}

int fib_tables_flush(struct fib *f)
{
	struct fib_tables *t = f->tables;
	struct rib *r = f->rib;
	int fam, s, err = 0, e;

	if (t->adopted) {
		err = rib_rcu_sync(r);
		if (err)
			return err;
		t->adopted = false;
	}
	for (fam = 0; fam < XFIB_FAMILIES; fam++) {
		bool main_changed = r->fam[fam].main_changed;

		for (s = 1; s < XFIB_TABLE_SLOTS; s++) {
			struct rib_tslot *ts = &r->tslot[fam][s];

			if (!t->all && !ts->dirty &&
			    !(ts->main_copy && main_changed))
				continue;
			e = slot_build(f, t, fam, s);
			if (e)
				err = err ?: e;
			else
				ts->dirty = false;
		}
		r->fam[fam].main_changed = false;
	}
	if (!err) {
		t->all = false;
		rib_tables_published(r);
	}
	return err;
}

bool fib_tables_has_retired(const struct fib *f)
{
	return f->tables->nretired;
}

void fib_tables_reclaim(struct fib *f)
{
	struct fib_tables *t = f->tables;
	size_t i;

	for (i = 0; i < t->nretired; i++)
		fib_tpool_free(&t->pool[t->retired[i].fam], t->retired[i].off,
			       t->retired[i].log2n);
	t->nretired = 0;
}

/* What a previous xfibd published is left to the kernel: this one does
 * not know its slots' tables, nor which blocks of the pool they use. */
static void tables_adopt(struct fib_tables *t)
{
	size_t i;

	for (i = 0; i < XFIB_FAMILIES * XFIB_TABLE_SLOTS; i++) {
		struct xfib_table_desc d = {
			.state = XFIB_TABLE_KERNEL,
			.gen = t->desc[i].gen + 1,
		};
		__u64 word;

		if (i % XFIB_TABLE_SLOTS == XFIB_TSLOT_MAIN)
			continue; /* unused: main is xfib_active */
		if (t->desc[i].state == XFIB_TABLE_READY)
			t->adopted = true;
		memcpy(&word, &d, sizeof(word));
		__atomic_store_n((__u64 *)&t->desc[i], word, __ATOMIC_RELEASE);
		memset(&t->info[i], 0, sizeof(t->info[i]));
	}
}

int fib_tables_init(struct fib *f)
{
	struct xfib_fwd_bpf *s = f->skel;
	struct fib_tables *t = calloc(1, sizeof(*t));
	int err;

	if (!t)
		return -ENOMEM;
	f->tables = t;
	t->desc = xfib_map_mmap(s->maps.xfib_tables, true, &t->desc_len);
	t->info = xfib_map_mmap(s->maps.xfib_table_info, true, &t->info_len);
	t->pool4 = xfib_map_mmap(s->maps.xfib_tpool4, true, &t->pool4_len);
	t->pool6 = xfib_map_mmap(s->maps.xfib_tpool6, true, &t->pool6_len);
	if (!t->desc || !t->info || !t->pool4 || !t->pool6)
		return -errno;
	err = fib_tpool_init(&t->pool[XFIB_V4], XFIB_TPOOL4_LOG2);
	err = err ?: fib_tpool_init(&t->pool[XFIB_V6], XFIB_TPOOL6_LOG2);
	if (err)
		return err;
	tables_adopt(t);
	t->all = true;
	return 0;
}

void fib_tables_fini(struct fib *f)
{
	struct fib_tables *t = f->tables;

	/* The tables stay published, like the main instances. */
	if (!t)
		return;
	if (t->desc)
		munmap(t->desc, t->desc_len);
	if (t->info)
		munmap(t->info, t->info_len);
	if (t->pool4)
		munmap(t->pool4, t->pool4_len);
	if (t->pool6)
		munmap(t->pool6, t->pool6_len);
	fib_tpool_fini(&t->pool[XFIB_V4]);
	fib_tpool_fini(&t->pool[XFIB_V6]);
	free(t->retired);
	free(t);
	f->tables = NULL;
}
