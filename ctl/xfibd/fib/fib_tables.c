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
 * Each table's structure is chosen by its scale at every build, by the
 * selection main uses (fib_tables_choose(), fib_select.c: the same
 * preferences and 5% hysteresis): the ranges above for most, an instance
 * of dir24_8 or trie6 for a large one, built whole (fib_table.c's
 * build, as main's) into the table slot's standby map-in-map slot
 * (XFIB_TABLE_INST_SLOT), linked there, and published by the descriptor
 * the same way. The instance it replaced is unlinked and destroyed after
 * the flush's grace period, with the blocks. A rebuild per change is what
 * the ranges do too; a large table pays 64 MiB and a build per flush
 * that changes it (batched as main's changes are), where main updates in
 * place: the RIB keeps no list of a rules' table's changes yet.
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

#include "algo_names.h"
#include "fib_algo.h"
#include "fib_ranges.h"
#include "fib_tables.h"
#include "fib_tpool.h"
#include "log.h"
#include "monoclock.h"
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
	/* Each slot's large-table instance (algo NULL: none), and the
	 * algorithm its table runs (XFIB_ALGO_NONE: none published). */
	struct fib_inst inst[XFIB_FAMILIES][XFIB_TABLE_SLOTS];
	__u8 algo[XFIB_FAMILIES][XFIB_TABLE_SLOTS];
	struct fib_inst *inst_retired; /* destroyed after the grace period */
	size_t ninst_retired, inst_retired_cap;
	bool all;                     /* the next flush builds every slot */
	bool adopted;                 /* a previous xfibd's blocks may still
				       * be read: the pool is free after a
				       * grace period */
	/* ... and the slots it published instances in, emptied then. */
	bool adopted_inst[XFIB_FAMILIES][XFIB_TABLE_SLOTS];
	/* A slot whose instance failed to build (the kernel keeps its
	 * table): when it is built again, and the backoff that led there. */
	__u64 retry_at_ms[XFIB_FAMILIES][XFIB_TABLE_SLOTS];
	__u32 backoff_ms[XFIB_FAMILIES][XFIB_TABLE_SLOTS];
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

/* The slot's instance, if any, is destroyed after the next grace period
 * (the descriptor no longer names it). */
static int inst_retire(struct fib *f, struct fib_tables *t, int fam, int s)
{
	struct fib_inst *in = &t->inst[fam][s];
	int err = 0;

	if (!in->algo)
		return 0;
	if (t->ninst_retired == t->inst_retired_cap) {
		size_t cap = t->inst_retired_cap ? 2 * t->inst_retired_cap : 4;
		struct fib_inst *v = realloc(t->inst_retired, cap * sizeof(*v));

		if (!v) {
			/* No room to defer it: its grace period here. */
			err = rib_rcu_sync(f->rib);
			if (!err) {
				fib_table_unlink(f, in);
				in->algo->destroy(f, in);
			}
			/* else its maps stay, linked and mapped (lost
			 * until xfibd restarts), never freed early */
			goto out;
		}
		t->inst_retired = v;
		t->inst_retired_cap = cap;
	}
	t->inst_retired[t->ninst_retired++] = *in;
out:
	memset(in, 0, sizeof(*in));
	in->fd24 = -1;
	return err;
}

/* No retired instance is left in in's map-in-map slot. */
static int inst_slot_wait(struct fib *f, struct fib_tables *t,
			  const struct fib_inst *in)
{
	size_t i;
	int err;

	for (i = 0; i < t->ninst_retired; i++) {
		if (t->inst_retired[i].algo != in->algo ||
		    t->inst_retired[i].slot != in->slot)
			continue;
		err = rib_rcu_sync(f->rib);
		if (err)
			return err;
		fib_tables_reclaim(f);
		break;
	}
	return 0;
}

static const struct fib_algo *table_algo(int fam)
{
	return fam == XFIB_V4 ? &fib_algo_dir24_8 : &fib_algo_trie6;
}

/*
 * Builds the slot's table as an instance of the family's table algorithm
 * in the map-in-map slot its current instance does not use, and links it
 * there: *d is then the descriptor that publishes it, *in the instance.
 */
static int inst_build(struct fib *f, struct fib_tables *t, int fam, int s,
		      const struct ptree *tree, struct fib_inst *in,
		      struct xfib_table_desc *d)
{
	const struct fib_inst *cur = &t->inst[fam][s];
	struct fib_range *r = NULL;
	size_t n = 0, cap = 0;
	int err;

	memset(in, 0, sizeof(*in));
	in->algo = table_algo(fam);
	in->fd24 = -1;
	/* The standby slot: the other one than the instance serving. Its
	 * last instance was retired by an earlier flush, and is normally
	 * gone with that flush's grace period; if that grace period failed,
	 * it is waited for here, before the slot is written. */
	in->slot = XFIB_TABLE_INST_SLOT(s, cur->algo ? !(cur->slot & 1) : 0);
	err = inst_slot_wait(f, t, in);
	if (err)
		return err;
	/* main's build, sized by these ranges (and by what main's last
	 * full pool asked for, fib_table.c: a bound, never a limit) */
	err = fib_tree_full_ranges(tree, &r, &n, &cap);
	err = err ?: in->algo->build(f, fam, in, r, n);
	free(r);
	if (err) {
		in->algo->destroy(f, in);
		return err;
	}
	/* Both outer entries before the descriptor that sends packets
	 * there. */
	err = fib_table_link(f, in);
	if (err) {
		in->algo->destroy(f, in);
		return err;
	}
	*d = (struct xfib_table_desc){
		.off = in->slot,
		.state = XFIB_TABLE_INSTANCE,
		.algo = in->algo->id,
	};
	return 0;
}

/* The algorithm slot s's table of n prefixes should run (fib_select.c). */
static unsigned int slot_choose(const struct fib_tables *t, int fam, int s,
				const struct rib_tslot *ts, size_t n)
{
	const struct xfib_table_info *cur = &t->info[fam * XFIB_TABLE_SLOTS + s];
	struct fib_scale sc = { .prefixes = n };
	unsigned int pref[XFIB_ALGO_COUNT] = { 0 };
	unsigned int now = t->algo[fam][s];

	/* A copy of main exists for suppress_prefixlength, which needs the
	 * prefix lengths only the ranges keep. */
	if (ts->main_copy)
		return fam == XFIB_V4 ? XFIB_ALGO_BSEARCH4 : XFIB_ALGO_BSEARCH6;
	if (now == XFIB_ALGO_BSEARCH4 || now == XFIB_ALGO_BSEARCH6)
		sc.ranges = cur->ranges;
	return fib_tables_choose(fam, &sc, now, pref);
}

/* The slot's table as an instance into *inst, and the descriptor and
 * info that publish it; or, when that fails, those that leave it to the
 * kernel: the old structure would answer for a table that changed. */
static void slot_build_inst(struct fib *f, struct fib_tables *t, int fam,
			    int s, struct fib_inst *inst,
			    struct xfib_table_desc *d, struct xfib_table_info *in)
{
	const struct rib_tslot *ts = &f->rib->tslot[fam][s];
	__u64 t0 = mono_us();
	int err = inst_build(f, t, fam, s, &ts->tree, inst, d);

	if (err) {
		pr_warn("%s: table %u: building %s: %s", fam_name(fam),
			ts->table, xfib_algo_name(table_algo(fam)->id),
			strerror(-err));
		in->reason = XFIB_TABLE_R_BUILD_FAILED;
		return;
	}
	/* A rebuild per change: the first one at the default level. */
	log_msg(t->inst[fam][s].algo ? LOG_LEVEL_DEBUG : LOG_LEVEL_INFO,
		"%s: table %u: built %s in slot %u: %u prefixes, %llu bytes, in %llu us",
		fam_name(fam), ts->table, xfib_algo_name(inst->algo->id),
		inst->slot, in->routes, (unsigned long long)inst->mem_bytes,
		(unsigned long long)(mono_us() - t0));
	in->algo = inst->algo->id;
	in->ranges = fib_table_groups_used(inst);
	in->mem_bytes = inst->mem_bytes;
}

/* Builds slot s of fam into a new block and publishes it (or the state
 * that stands for it): 0, 1 if that state is the kernel's because an
 * instance failed to build (to be tried again), or an error (the slot
 * keeps what it had). */
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
	struct fib_inst inst;
	unsigned int algo;
	int err = 0;

	if (!ts->table || ts->loading || ts->retiring || !in.routes) {
		if (ts->table && !ts->loading && !ts->retiring)
			d.state = XFIB_TABLE_EMPTY;
		goto publish;
	}
	if (!ts->main_copy && ts->src_routes) {
		in.reason = XFIB_TABLE_R_UNSUPPORTED;
		goto publish;
	}
	algo = slot_choose(t, fam, s, ts, in.routes);
	if (algo != t->algo[fam][s])
		pr_info("%s: table %u: %s -> %s (%u prefixes)", fam_name(fam),
			ts->table,
			t->algo[fam][s] ? xfib_algo_name(t->algo[fam][s]) : "none",
			algo ? xfib_algo_name(algo) : "the kernel", in.routes);
	if (algo == XFIB_ALGO_DIR24_8 || algo == XFIB_ALGO_TRIE6) {
		slot_build_inst(f, t, fam, s, &inst, &d, &in);
		goto publish;
	}
	if (algo == XFIB_ALGO_NONE) {
		in.reason = XFIB_TABLE_R_TOO_LARGE;
		goto publish;
	}
	err = table_ranges(f, fam, ts, &b, &in.reason);
	if (err || in.reason)
		goto publish;
	in.ranges = b.n;
	in.algo = algo;
	blk.log2n = log2_ceil(b.n);
	if (fib_tpool_alloc(&t->pool[fam], blk.log2n, &blk.off)) {
		in.reason = XFIB_TABLE_R_TOO_LARGE;
		goto publish;
	}
	ranges_write(t, fam, blk.off, blk.log2n, &b);
	in.mem_bytes = ((__u64)1 << blk.log2n) *
		       (fam == XFIB_V4 ? sizeof(struct xfib_tr4) :
					 sizeof(struct xfib_tr6));
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
	if (d.state != XFIB_TABLE_READY && d.state != XFIB_TABLE_INSTANCE)
		in.algo = XFIB_ALGO_NONE;
	err = desc_publish(t, fam, s, d, d.state == XFIB_TABLE_READY ? &blk : NULL);
	/* Whatever it published, the instance it replaced is no longer
	 * named. */
	err = inst_retire(f, t, fam, s) ?: err;
	if (d.state == XFIB_TABLE_INSTANCE)
		t->inst[fam][s] = inst;
	t->algo[fam][s] = in.algo;
	t->info[fam * XFIB_TABLE_SLOTS + s] = in;
	return err ?: in.reason == XFIB_TABLE_R_BUILD_FAILED;
}

/* Slot s's instance failed to build: its table stays the kernel's until
 * a build after the next backoff (or a change of the table: the build
 * then waits for the backoff too). */
static void slot_retry_later(struct fib *f, struct fib_tables *t, int fam,
			     int s, __u64 now)
{
	__u32 *b = &t->backoff_ms[fam][s];

	*b = fib_backoff_next(*b);
	t->retry_at_ms[fam][s] = now + *b;
	pr_warn("%s: table %u: the kernel keeps it; building again in %u ms",
		fam_name(fam), f->rib->tslot[fam][s].table, *b);
}

int fib_tables_timeout(const struct fib *f, __u64 now)
{
	const struct fib_tables *t = f->tables;
	int fam, s, ms = -1;

	for (fam = 0; fam < XFIB_FAMILIES; fam++)
		for (s = 1; s < XFIB_TABLE_SLOTS; s++) {
			__u64 at = t->retry_at_ms[fam][s];
			int due;

			if (!at)
				continue;
			due = at > now ? (int)(at - now < 60000 ? at - now : 60000) : 0;
			if (ms < 0 || due < ms)
				ms = due;
		}
	return ms;
}

/*
 * The instance slots of the table slots a previous xfibd published an
 * instance in, emptied, both of each (its standby may hold a retired one
 * it had no time to free): none is ours yet, and the descriptors that
 * named them were replaced a grace period ago. Only those: every update
 * of an outer map waits for a grace period, even one that finds the
 * entry empty. What a slot never published keeps, a build of ours
 * replaces.
 */
static void inst_slots_clear(struct fib *f, struct fib_tables *t)
{
	struct fib_inst old = { .fd24 = -1 };
	int fam, s, odd;

	for (fam = 0; fam < XFIB_FAMILIES; fam++) {
		old.algo = table_algo(fam);
		for (s = 1; s < XFIB_TABLE_SLOTS; s++) {
			if (!t->adopted_inst[fam][s])
				continue;
			for (odd = 0; odd < 2; odd++) {
				old.slot = XFIB_TABLE_INST_SLOT(s, odd);
				fib_table_unlink(f, &old);
			}
			t->adopted_inst[fam][s] = false;
		}
	}
}

int fib_tables_flush(struct fib *f, __u64 now)
{
	struct fib_tables *t = f->tables;
	struct rib *r = f->rib;
	int fam, s, err = 0, e;

	if (t->adopted) {
		err = rib_rcu_sync(r);
		if (err)
			return err;
		inst_slots_clear(f, t);
		t->adopted = false;
	}
	for (fam = 0; fam < XFIB_FAMILIES; fam++) {
		bool main_changed = r->fam[fam].main_changed;

		for (s = 1; s < XFIB_TABLE_SLOTS; s++) {
			struct rib_tslot *ts = &r->tslot[fam][s];

			__u64 *retry = &t->retry_at_ms[fam][s];

			if (!t->all && !ts->dirty &&
			    !(ts->main_copy && main_changed) && !*retry)
				continue;
			if (!t->all && *retry && now < *retry)
				continue;
			e = slot_build(f, t, fam, s);
			if (e < 0) {
				err = err ?: e;
				continue;
			}
			ts->dirty = false;
			if (e) {
				slot_retry_later(f, t, fam, s, now);
			} else {
				*retry = 0;
				t->backoff_ms[fam][s] = 0;
			}
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
	return f->tables->nretired || f->tables->ninst_retired;
}

void fib_tables_reclaim(struct fib *f)
{
	struct fib_tables *t = f->tables;
	size_t i;

	for (i = 0; i < t->nretired; i++)
		fib_tpool_free(&t->pool[t->retired[i].fam], t->retired[i].off,
			       t->retired[i].log2n);
	t->nretired = 0;
	/* The outer entries first: nothing reaches the maps when they go. */
	for (i = 0; i < t->ninst_retired; i++) {
		fib_table_unlink(f, &t->inst_retired[i]);
		t->inst_retired[i].algo->destroy(f, &t->inst_retired[i]);
	}
	t->ninst_retired = 0;
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
		if (t->desc[i].state == XFIB_TABLE_READY ||
		    t->desc[i].state == XFIB_TABLE_INSTANCE)
			t->adopted = true;
		if (t->desc[i].state == XFIB_TABLE_INSTANCE)
			t->adopted_inst[i / XFIB_TABLE_SLOTS][i % XFIB_TABLE_SLOTS] = true;
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
	size_t i;
	int fam, s;

	/* The tables stay published, like the main instances: only our
	 * mappings of their instances go. */
	if (!t)
		return;
	for (fam = 0; fam < XFIB_FAMILIES; fam++)
		for (s = 1; s < XFIB_TABLE_SLOTS; s++)
			if (t->inst[fam][s].algo)
				t->inst[fam][s].algo->destroy(f, &t->inst[fam][s]);
	for (i = 0; i < t->ninst_retired; i++)
		t->inst_retired[i].algo->destroy(f, &t->inst_retired[i]);
	free(t->inst_retired);
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
