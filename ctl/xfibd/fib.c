// SPDX-License-Identifier: GPL-2.0-only
/*
 * Lookup instances and their selection. See fib.h for the framework.
 *
 * Preferences. bsearch costs one dependent memory read per bit of log2(n)
 * and almost no memory: with a thousand prefixes its table is 16 KiB, the
 * ten probes hit L1/L2, and a lookup costs about what two dir24_8 reads
 * cost. dir24_8 and trie6 cost one or two reads (trie6: one per 8 bits
 * past /24) whatever the size, but an instance holds a 64 MiB first level
 * and 1 KiB per group. So bsearch is preferred for small tables (a VM with
 * a default route and its connected routes) and loses ground with every
 * doubling of the table, the table-based algorithms gain it; they cross
 * near a thousand prefixes:
 *
 *   bsearch:        255 - 13 * log2(n + 1)   (0 if the ranges do not fit)
 *   dir24_8/trie6:   25 + 10 * log2(n + 1)   (at most 250)
 *
 * A switch needs the candidate to beat the current algorithm by more than
 * 5%, evaluated after eval_changes prefix changes or eval_ms after the
 * first change, whichever comes first, so a table oscillating around the
 * crossing point does not flap between instances.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "algo_names.h"
#include "fib.h"
#include "log.h"
#include "pin.h"

#define NH_UNCOVERED 0xffffffffu /* walk default: no local-table prefix */
#define BACKOFF_MIN_MS 1000
#define BACKOFF_MAX_MS 60000

static const char *fam_name(int fam)
{
	return fam == XFIB_V4 ? "ipv4" : "ipv6";
}

static double log2n(size_t n)
{
	return log2((double)n + 1);
}

static unsigned int clamp_pref(double v, unsigned int max)
{
	if (v < 1)
		return 1;
	return v > max ? max : (unsigned int)v;
}

/* ---- ranges from the prefix trees ------------------------------------- */

struct range_buf {
	struct fib_range *r;
	size_t n, cap;
};

static int range_push(struct range_buf *b, xfib_u128 first, xfib_u128 last,
		      __u32 nh)
{
	if (b->n && b->r[b->n - 1].nh == nh && b->r[b->n - 1].last + 1 == first) {
		b->r[b->n - 1].last = last;
		return 0;
	}
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;
		struct fib_range *r = realloc(b->r, cap * sizeof(*r));

		if (!r)
			return -ENOMEM;
		b->r = r;
		b->cap = cap;
	}
	b->r[b->n].first = first;
	b->r[b->n].last = last;
	b->r[b->n].nh = nh;
	b->n++;
	return 0;
}

static int range_emit(void *ctx, xfib_u128 first, xfib_u128 last, __u32 nh)
{
	return range_push(ctx, first, last, nh);
}

int fib_span_ranges(struct rib *r, int fam, const __u8 *dst, unsigned int plen,
		    struct fib_range **out, size_t *n, size_t *cap)
{
	struct range_buf loc = { 0 }, mn = { 0 }, res = { *out, 0, *cap };
	size_t i = 0, j = 0;
	int err;

	/* The kernel consults its local table before the mirrored one:
	 * wherever a local prefix covers an address, it answers. */
	err = ptree_walk_span(&r->tree[fam][1], dst, plen, NH_UNCOVERED,
			      range_emit, &loc);
	err = err ?: ptree_walk_span(&r->tree[fam][0], dst, plen,
				     XFIB_NH_IDX_NONE, range_emit, &mn);
	while (!err && i < loc.n && j < mn.n) {
		const struct fib_range *a = &loc.r[i], *b = &mn.r[j];
		xfib_u128 first = a->first > b->first ? a->first : b->first;
		xfib_u128 last = a->last < b->last ? a->last : b->last;

		err = range_push(&res, first, last,
				 a->nh != NH_UNCOVERED ? a->nh : b->nh);
		if (a->last == last)
			i++;
		if (b->last == last)
			j++;
	}
	free(loc.r);
	free(mn.r);
	*out = res.r;
	*n = res.n;
	*cap = res.cap;
	return err;
}

/* ---- bsearch4 / bsearch6 ---------------------------------------------- */

static unsigned int bs_preference(size_t ranges, size_t slot, size_t prefixes)
{
	/* A table needs at most 2n + 1 ranges; before a build only that bound
	 * is known. */
	if ((ranges ? ranges : 2 * prefixes + 1) > slot)
		return 0;
	return clamp_pref(255 - 13 * log2n(prefixes), 255);
}

static unsigned int bs4_preference(const struct fib_scale *s)
{
	return bs_preference(s->ranges, XFIB_BS4_SLOT_SIZE, s->prefixes);
}

static unsigned int bs6_preference(const struct fib_scale *s)
{
	return bs_preference(s->ranges, XFIB_BS6_SLOT_SIZE, s->prefixes);
}

static unsigned int pad_log2(size_t n)
{
	unsigned int l = 0;

	while (((size_t)1 << l) < n)
		l++;
	return l;
}

/* The range formats the builders take: first address and nexthop. */
static void to_bs4(const struct fib_range *r, size_t n, struct xfib_bs4_range *out)
{
	size_t i;

	for (i = 0; i < n; i++) {
		out[i].start = (__u32)r[i].first;
		out[i].nh = r[i].nh;
	}
}

static void to_bs6(const struct fib_range *r, size_t n, struct xfib_bs6_range *out)
{
	size_t i;

	for (i = 0; i < n; i++) {
		out[i].hi = (__u64)(r[i].first >> 64);
		out[i].lo = (__u64)r[i].first;
		out[i].nh = r[i].nh;
		out[i].pad = 0;
	}
}

/* Writes the slot with plain stores: no packet reads it until publish. */
static int bs4_build(struct fib *f, int fam, struct fib_inst *in,
		     const struct fib_range *r, size_t n)
{
	struct xfib_bs4_range *t = f->bs4 + (size_t)in->slot * XFIB_BS4_SLOT_SIZE;
	size_t i, size;

	if (n > XFIB_BS4_SLOT_SIZE)
		return -ENOSPC;
	in->capacity = XFIB_BS4_SLOT_SIZE;
	to_bs4(r, n, t);
	/* Pad to a power of two by repeating the last range: the search
	 * then takes a fixed number of steps. */
	size = (size_t)1 << pad_log2(n);
	for (i = n; i < size; i++)
		t[i] = t[n - 1];
	in->nranges = n;
	in->mem_bytes = size * sizeof(*t);
	return 0;
}

static int bs6_build(struct fib *f, int fam, struct fib_inst *in,
		     const struct fib_range *r, size_t n)
{
	struct xfib_bs6_range *t = f->bs6 + (size_t)in->slot * XFIB_BS6_SLOT_SIZE;
	size_t i, size;

	if (n > XFIB_BS6_SLOT_SIZE)
		return -ENOSPC;
	in->capacity = XFIB_BS6_SLOT_SIZE;
	to_bs6(r, n, t);
	size = (size_t)1 << pad_log2(n);
	for (i = n; i < size; i++)
		t[i] = t[n - 1];
	in->nranges = n;
	in->mem_bytes = size * sizeof(*t);
	return 0;
}

static void bs_destroy(struct fib *f, struct fib_inst *in)
{
}

/* ---- dir24_8 / trie6: instances in map-in-map slots ---------------------- */

#define TBL24_VALUES (1u << 23)  /* 2^24 __u32 entries, two per value */
#define GROUP_VALUES 128         /* 256 __u32 entries */
#define GROUPS_MIN 1024
#define GROUPS_MAX (1u << 20)    /* 1 GiB of groups */

static unsigned int table_preference(const struct fib_scale *s)
{
	return clamp_pref(25 + 10 * log2n(s->prefixes), 250);
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

static int maps_create(struct fib *f, struct fib_inst *in, __u32 ngroups)
{
	LIBBPF_OPTS(bpf_map_create_opts, o24, .map_flags = BPF_F_MMAPABLE);
	LIBBPF_OPTS(bpf_map_create_opts, o8,
		    .map_flags = BPF_F_MMAPABLE | BPF_F_INNER_MAP);
	int err;

	in->fd24 = in->fd8 = -1;
	in->fd24 = bpf_map_create(BPF_MAP_TYPE_ARRAY, "xfib_tbl24", 4, 8,
				  TBL24_VALUES, &o24);
	if (in->fd24 < 0)
		return -errno;
	in->fd8 = bpf_map_create(BPF_MAP_TYPE_ARRAY, "xfib_tbl8", 4, 8,
				 ngroups * GROUP_VALUES, &o8);
	if (in->fd8 < 0)
		goto err;
	in->len24 = (size_t)TBL24_VALUES * 8;
	in->len8 = (size_t)ngroups * GROUP_VALUES * 8;
	in->m24 = mmap(NULL, in->len24, PROT_READ | PROT_WRITE, MAP_SHARED,
		       in->fd24, 0);
	if (in->m24 == MAP_FAILED) {
		in->m24 = NULL;
		goto err;
	}
	in->m8 = mmap(NULL, in->len8, PROT_READ | PROT_WRITE, MAP_SHARED,
		      in->fd8, 0);
	if (in->m8 == MAP_FAILED) {
		in->m8 = NULL;
		goto err;
	}
	in->ngroups = ngroups;
	in->capacity = ngroups;
	in->mem_bytes = in->len24 + in->len8;
	return 0;
err:
	err = -errno;
	if (in->m24)
		munmap(in->m24, in->len24);
	if (in->fd8 >= 0)
		close(in->fd8);
	close(in->fd24);
	in->m24 = in->m8 = NULL;
	in->fd24 = in->fd8 = -1;
	return err;
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

static int dir24_algo_build(struct fib *f, int fam, struct fib_inst *in,
			    const struct fib_range *r, size_t n)
{
	struct xfib_bs4_range *br;
	int err;

	err = maps_create(f, in, pool_size(f, fam, groups_for(r, n, 1, 32)));
	if (err)
		return err;
	br = malloc(n * sizeof(*br));
	if (!br)
		return -ENOMEM;
	to_bs4(r, n, br);
	err = dir24_init_zeroed(&in->dir, in->m24, in->m8, in->ngroups);
	err = err ?: dir24_build(&in->dir, br, n);
	free(br);
	return err;
}

static int dir24_algo_update(struct fib_inst *in, const struct fib_range *r,
			     size_t n)
{
	struct xfib_bs4_range one;
	__u32 need = 0;
	size_t i;
	int err;

	/* Reserve for the batch first; this catches almost every exhaustion
	 * before anything is written (see fib.h on why not all). */
	for (i = 0; i < n; i++) {
		one.start = (__u32)r[i].first;
		one.nh = r[i].nh;
		need += dir24_groups_needed(&in->dir, &one, 1, (__u32)r[i].last);
	}
	if (need > in->ngroups - dir24_groups_used(&in->dir) -
			   dir24_groups_retired(&in->dir))
		return -ENOSPC;
	for (i = 0; i < n; i++) {
		err = dir24_write_range(&in->dir, (__u32)r[i].first,
					(__u32)r[i].last, r[i].nh);
		if (err)
			return err;
	}
	return 0;
}

static void dir24_algo_reclaim(struct fib_inst *in)
{
	dir24_reclaim(&in->dir);
}

static bool dir24_algo_has_retired(const struct fib_inst *in)
{
	return dir24_groups_retired(&in->dir) != 0;
}

static void dir24_algo_destroy(struct fib *f, struct fib_inst *in)
{
	dir24_fini(&in->dir);
	maps_destroy(in);
}

static int trie6_algo_build(struct fib *f, int fam, struct fib_inst *in,
			    const struct fib_range *r, size_t n)
{
	struct xfib_bs6_range *br;
	int err;

	err = maps_create(f, in, pool_size(f, fam, groups_for(r, n, 13, 128)));
	if (err)
		return err;
	br = malloc(n * sizeof(*br));
	if (!br)
		return -ENOMEM;
	to_bs6(r, n, br);
	err = trie6_init_zeroed(&in->trie, in->m24, in->m8, in->ngroups);
	err = err ?: trie6_build(&in->trie, br, n);
	free(br);
	return err;
}

static int trie6_algo_update(struct fib_inst *in, const struct fib_range *r,
			     size_t n)
{
	__u32 need = 0;
	size_t i;
	int err;

	for (i = 0; i < n; i++)
		need += trie6_groups_needed(&in->trie, r[i].first, r[i].last);
	if (need > in->ngroups - trie6_groups_used(&in->trie) -
			   trie6_groups_retired(&in->trie))
		return -ENOSPC;
	for (i = 0; i < n; i++) {
		err = trie6_write_range(&in->trie, r[i].first, r[i].last,
					r[i].nh);
		if (err)
			return err;
	}
	return 0;
}

static void trie6_algo_reclaim(struct fib_inst *in)
{
	trie6_reclaim(&in->trie);
}

static bool trie6_algo_has_retired(const struct fib_inst *in)
{
	return trie6_groups_retired(&in->trie) != 0;
}

static void trie6_algo_destroy(struct fib *f, struct fib_inst *in)
{
	trie6_fini(&in->trie);
	maps_destroy(in);
}

static const struct fib_algo fib_algos[] = {
	{
		.id = XFIB_ALGO_BSEARCH4,
		.preference = bs4_preference, .build = bs4_build,
		.destroy = bs_destroy,
	},
	{
		.id = XFIB_ALGO_BSEARCH6,
		.preference = bs6_preference, .build = bs6_build,
		.destroy = bs_destroy,
	},
	{
		.id = XFIB_ALGO_DIR24_8,
		.preference = table_preference, .build = dir24_algo_build,
		.update = dir24_algo_update,
		.reclaim = dir24_algo_reclaim,
		.has_retired = dir24_algo_has_retired,
		.destroy = dir24_algo_destroy,
	},
	{
		.id = XFIB_ALGO_TRIE6,
		.preference = table_preference, .build = trie6_algo_build,
		.update = trie6_algo_update,
		.reclaim = trie6_algo_reclaim,
		.has_retired = trie6_algo_has_retired,
		.destroy = trie6_algo_destroy,
	},
};

#define NALGOS (sizeof(fib_algos) / sizeof(fib_algos[0]))

static const struct fib_algo *algo_by_id(unsigned int id)
{
	size_t i;

	for (i = 0; i < NALGOS; i++)
		if (fib_algos[i].id == id)
			return &fib_algos[i];
	return NULL;
}

static bool map_backed(const struct fib_algo *a)
{
	return a && a->update;
}

/* The outer maps holding a map-backed algorithm's slots. */
static void outer_fds(struct fib *f, const struct fib_algo *a, int *o24, int *o8)
{
	struct xfib_fwd_bpf *s = f->rib->skel;

	if (a->id == XFIB_ALGO_DIR24_8) {
		*o24 = bpf_map__fd(s->maps.xfib_dir24_tbl24);
		*o8 = bpf_map__fd(s->maps.xfib_dir24_tbl8);
	} else {
		*o24 = bpf_map__fd(s->maps.xfib_trie6_tbl24);
		*o8 = bpf_map__fd(s->maps.xfib_trie6_tbl8);
	}
}

/* ---- publishing ------------------------------------------------------- */

static __u64 mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000ull + ts.tv_nsec / 1000;
}

static void write_info(struct fib *f, int fam)
{
	struct fib_family *ff = &f->fam[fam];
	struct xfib_fib_info info = {
		.algo = ff->cur.algo ? ff->cur.algo->id : XFIB_ALGO_NONE,
		.generation = ff->generation,
		.routes = ptree_count(&f->rib->tree[fam][0]) +
			  ptree_count(&f->rib->tree[fam][1]),
		.swaps = ff->swaps,
		.last_swap = 0,
		.mem_bytes = ff->cur.mem_bytes,
		.fallback = ff->fallback,
		.forced = ff->forced,
		.updates = ff->updates,
		.build_us = ff->build_us,
		.capacity = ff->cur.capacity,
		.build_error = ff->build_error,
	};
	struct xfib_fib_info old = { 0 };
	__u32 key = fam, i;

	if (ff->cur.algo == NULL)
		info.ranges = 0;
	else if (map_backed(ff->cur.algo))
		info.ranges = ff->cur.algo->id == XFIB_ALGO_DIR24_8 ?
				      dir24_groups_used(&ff->cur.dir) :
				      trie6_groups_used(&ff->cur.trie);
	else
		info.ranges = ff->cur.nranges;
	for (i = 0; i < XFIB_ALGO_COUNT && i < sizeof(info.pref); i++)
		info.pref[i] = ff->pref[i];
	if (!bpf_map_lookup_elem(bpf_map__fd(f->rib->skel->maps.xfib_fib_info),
				 &key, &old))
		info.last_swap = old.last_swap;
	if (old.generation != info.generation || !info.last_swap)
		info.last_swap = time(NULL);
	bpf_map_update_elem(bpf_map__fd(f->rib->skel->maps.xfib_fib_info), &key,
			    &info, BPF_ANY);
}

/*
 * Makes `next` the family's instance: one atomic store of the active word.
 * Afterwards, and after a grace period, the old instance is destroyed.
 */
static int publish(struct fib *f, int fam, struct fib_inst *next)
{
	struct fib_family *ff = &f->fam[fam];
	struct xfib_active act = { 0 };
	struct fib_inst old = ff->cur;
	int o24, o8, err;

	if (map_backed(next->algo)) {
		outer_fds(f, next->algo, &o24, &o8);
		/* Both slot entries before the word that sends packets there. */
		if (bpf_map_update_elem(o8, &next->slot, &next->fd8, BPF_ANY) ||
		    bpf_map_update_elem(o24, &next->slot, &next->fd24, BPF_ANY))
			return -errno;
	}
	if (next->algo) {
		act.algo = next->algo->id;
		act.slot = next->slot;
		act.log2n = map_backed(next->algo) ? 0 : pad_log2(next->nranges);
	}
	act.generation = ++ff->generation;
	__atomic_store_n((__u64 *)&f->active[fam], *(__u64 *)&act,
			 __ATOMIC_RELEASE);
	ff->cur = *next;
	ff->swaps++;

	/* No packet may still be reading the old instance when it goes. */
	err = rib_rcu_sync(f->rib);
	if (err)
		pr_warn("%s: grace period: %s", fam_name(fam), strerror(-err));
	/* Builds always go to the standby slot, so old and next never share
	 * storage. The outer slot goes first: nothing can reach the old
	 * tables any more when they are unmapped. */
	if (old.algo) {
		if (map_backed(old.algo)) {
			outer_fds(f, old.algo, &o24, &o8);
			bpf_map_delete_elem(o24, &old.slot);
			bpf_map_delete_elem(o8, &old.slot);
		}
		old.algo->destroy(f, &old);
	}
	write_info(f, fam);
	return 0;
}

static int full_ranges(struct fib *f, int fam, struct fib_range **r, size_t *n,
		       size_t *cap)
{
	static const __u8 zero[16];

	return fib_span_ranges(f->rib, fam, zero, 0, r, n, cap);
}

static int build(struct fib *f, int fam, const struct fib_algo *a)
{
	struct fib_family *ff = &f->fam[fam];
	struct fib_range *r = NULL;
	struct fib_inst in = { .algo = a, .fd24 = -1, .fd8 = -1 };
	const struct fib_algo *prev = ff->cur.algo;
	size_t n = 0, cap = 0;
	__u64 t0 = mono_us();
	int err;

	err = full_ranges(f, fam, &r, &n, &cap);
	if (err)
		goto out;
	/* The standby slot; a grace period has passed since it was last
	 * published (publish waits one), so nothing reads it. */
	in.slot = ff->cur.algo == a ? !ff->cur.slot : 0;
	err = a->build(f, fam, &in, r, n);
	if (err) {
		a->destroy(f, &in);
		goto out;
	}
	err = publish(f, fam, &in);
	if (err) {
		a->destroy(f, &in);
		goto out;
	}
	ff->build_us = mono_us() - t0;
	ff->grow_groups = 0;
	/* bsearch rebuilds on every change: only a new algorithm, a grown
	 * pool or a first build is worth a line at the default level. */
	log_msg(prev == a && !map_backed(a) ? LOG_LEVEL_DEBUG : LOG_LEVEL_INFO,
		"%s: published %s (generation %u): %zu prefixes, %zu ranges, %llu bytes, built in %llu us",
		fam_name(fam), xfib_algo_name(a->id), ff->generation,
		ptree_count(&f->rib->tree[fam][0]) + ptree_count(&f->rib->tree[fam][1]),
		n, (unsigned long long)in.mem_bytes,
		(unsigned long long)ff->build_us);
out:
	free(r);
	return err;
}

static int publish_none(struct fib *f, int fam, __u32 why)
{
	struct fib_inst none = { .fd24 = -1, .fd8 = -1 };

	f->fam[fam].fallback = why;
	if (!f->fam[fam].cur.algo) {
		write_info(f, fam);
		return 0;
	}
	return publish(f, fam, &none);
}

/* Applies the changed prefixes in place. -ENOSPC: a rebuild is needed. */
static int update_in_place(struct fib *f, int fam)
{
	struct rib_family_state *rs = &f->rib->fam[fam];
	struct fib_inst *in = &f->fam[fam].cur;
	struct fib_range *r = NULL;
	size_t n = 0, cap = 0, i;
	struct range_buf all = { 0 };
	int err = 0;

	for (i = 0; i < rs->nchg && !err; i++) {
		size_t k;

		err = fib_span_ranges(f->rib, fam, rs->chg[i].dst, rs->chg[i].plen,
				      &r, &n, &cap);
		for (k = 0; k < n && !err; k++)
			err = range_push(&all, r[k].first, r[k].last, r[k].nh);
	}
	free(r);
	if (!err)
		err = in->algo->update(in, all.r, all.n);
	if (!err)
		f->fam[fam].updates += rs->nchg;
	free(all.r);
	return err;
}

static const struct fib_algo *best_algo(struct fib *f, int fam)
{
	const struct fib_algo *best = NULL;
	size_t i;

	for (i = 0; i < NALGOS; i++) {
		if (xfib_algo_family(fib_algos[i].id) != fam || !f->fam[fam].pref[fib_algos[i].id])
			continue;
		if (!best || f->fam[fam].pref[fib_algos[i].id] > f->fam[fam].pref[best->id])
			best = &fib_algos[i];
	}
	return best;
}

static void compute_prefs(struct fib *f, int fam)
{
	struct fib_scale s = {
		.prefixes = ptree_count(&f->rib->tree[fam][0]) +
			    ptree_count(&f->rib->tree[fam][1]),
		.ranges = f->fam[fam].cur.algo && !map_backed(f->fam[fam].cur.algo) ?
				  f->fam[fam].cur.nranges : 0,
	};
	size_t i;

	for (i = 0; i < NALGOS; i++)
		if (xfib_algo_family(fib_algos[i].id) == fam)
			f->fam[fam].pref[fib_algos[i].id] = fib_algos[i].preference(&s);
}

/* The algorithm the family should run now, or NULL to keep the current. */
static const struct fib_algo *select_algo(struct fib *f, int fam, __u64 now)
{
	struct fib_family *ff = &f->fam[fam];
	const struct fib_algo *best;

	compute_prefs(f, fam);
	if (ff->forced)
		return algo_by_id(ff->forced);
	best = best_algo(f, fam);
	if (!ff->cur.algo)
		return best;
	if (!ff->pref[ff->cur.algo->id])
		return best; /* the current one cannot hold the table */
	if (!ff->changes_since_eval)
		return ff->cur.algo;
	if (ff->changes_since_eval < f->eval_changes &&
	    now - ff->first_change_ms < f->eval_ms)
		return ff->cur.algo;
	ff->changes_since_eval = 0;
	/* Hysteresis: only a candidate more than 5% better is worth a
	 * rebuild, so a table hovering at the crossing point stays put. */
	if (best && best != ff->cur.algo &&
	    ff->pref[best->id] * 100 > ff->pref[ff->cur.algo->id] * 105) {
		pr_info("%s: switching %s -> %s (preference %u -> %u)",
			fam_name(fam), xfib_algo_name(ff->cur.algo->id), xfib_algo_name(best->id),
			ff->pref[ff->cur.algo->id], ff->pref[best->id]);
		return best;
	}
	return ff->cur.algo;
}

static int flush_family(struct fib *f, int fam, __u64 now)
{
	struct fib_family *ff = &f->fam[fam];
	struct rib_family_state *rs = &f->rib->fam[fam];
	const struct fib_algo *want;
	int err = 0;

	if (rs->nchg || rs->chg_overflow) {
		if (!ff->changes_since_eval)
			ff->first_change_ms = now;
		ff->changes_since_eval += rs->nchg ? rs->nchg : 1;
	}
	if (!rs->rules_ok) {
		ff->changes_since_eval = 0; /* nothing to select meanwhile */
		err = publish_none(f, fam, XFIB_FALLBACK_RULES);
		goto done;
	}
	if (ff->retry_at_ms && now < ff->retry_at_ms) {
		/* A build failed: the retry rebuilds everything anyway. */
		ff->rebuild = true;
		goto done;
	}
	want = select_algo(f, fam, now);
	if (!want) {
		err = publish_none(f, fam, XFIB_FALLBACK_TOO_LARGE);
		goto done;
	}
	if (want == ff->cur.algo && !ff->rebuild && !rs->chg_overflow &&
	    ff->fallback == XFIB_FALLBACK_NONE) {
		if (!rs->nchg)
			goto done;
		if (want->update) {
			err = update_in_place(f, fam);
			if (err != -ENOSPC)
				goto done;
			/* Pool exhausted: rebuild with a larger one and swap. */
			ff->grow_groups = ff->cur.ngroups * 2;
			pr_info("%s: %s group pool full (%u): rebuilding with %u",
				fam_name(fam), xfib_algo_name(want->id), ff->cur.ngroups,
				ff->grow_groups);
		}
	}
	err = build(f, fam, want);
	if (err == -ENOSPC && !map_backed(want)) {
		err = publish_none(f, fam, XFIB_FALLBACK_TOO_LARGE);
		goto done;
	}
	if (err) {
		/* The old instance keeps serving; try again later. */
		ff->backoff_ms = ff->backoff_ms ? ff->backoff_ms * 2 : BACKOFF_MIN_MS;
		if (ff->backoff_ms > BACKOFF_MAX_MS)
			ff->backoff_ms = BACKOFF_MAX_MS;
		ff->retry_at_ms = now + ff->backoff_ms;
		ff->build_error = -err;
		pr_warn("%s: building %s failed: %s; %s keeps serving, retrying in %u ms",
			fam_name(fam), xfib_algo_name(want->id), strerror(-err),
			ff->cur.algo ? xfib_algo_name(ff->cur.algo->id) : "the kernel",
			ff->backoff_ms);
		write_info(f, fam);
		return err;
	}
	ff->fallback = XFIB_FALLBACK_NONE;
	ff->build_error = 0;
	ff->backoff_ms = 0;
	ff->retry_at_ms = 0;
	ff->rebuild = false;
done:
	rs->nchg = 0;
	rs->chg_overflow = false;
	rs->dirty = false;
	write_info(f, fam);
	return err;
}

int fib_flush(struct fib *f, __u64 now_ms)
{
	bool retired = false;
	int fam, err = 0, e;

	rib_commit(f->rib);
	for (fam = 0; fam < XFIB_FAMILIES; fam++) {
		e = flush_family(f, fam, now_ms);
		if (e && !err)
			err = e;
	}
	/* One grace period covers the indexes and groups retired above. */
	for (fam = 0; fam < XFIB_FAMILIES; fam++) {
		const struct fib_inst *in = &f->fam[fam].cur;

		if (in->algo && in->algo->has_retired && in->algo->has_retired(in))
			retired = true;
	}
	if (retired || rib_retired_pending(f->rib)) {
		e = rib_rcu_sync(f->rib);
		if (e)
			return e;
		for (fam = 0; fam < XFIB_FAMILIES; fam++) {
			struct fib_inst *in = &f->fam[fam].cur;

			if (in->algo && in->algo->reclaim)
				in->algo->reclaim(in);
		}
		rib_reclaim(f->rib);
	}
	return err;
}

bool fib_poll_control(struct fib *f)
{
	bool any = false;
	__u32 fam;

	for (fam = 0; fam < XFIB_FAMILIES; fam++) {
		struct xfib_control c;
		struct fib_family *ff = &f->fam[fam];

		if (bpf_map_lookup_elem(bpf_map__fd(f->rib->skel->maps.xfib_control),
					&fam, &c) || c.seq == ff->ctl_seq)
			continue;
		ff->ctl_seq = c.seq;
		if (c.algo && (!algo_by_id(c.algo) || xfib_algo_family(c.algo) != (int)fam)) {
			pr_warn("%s: ignoring request for algorithm %u", fam_name(fam), c.algo);
			continue;
		}
		if (c.algo != ff->forced)
			pr_info("%s: algorithm %s by operator request", fam_name(fam),
				c.algo ? xfib_algo_name(c.algo) : "automatic");
		ff->forced = c.algo;
		/* Automatic again: evaluate at once. */
		ff->changes_since_eval = f->eval_changes;
		ff->retry_at_ms = 0;
		f->rib->fam[fam].dirty = true;
		any = true;
	}
	return any;
}

int fib_timeout(const struct fib *f, __u64 now)
{
	int fam, t = -1;

	for (fam = 0; fam < XFIB_FAMILIES; fam++) {
		const struct fib_family *ff = &f->fam[fam];
		__u64 due = 0;

		if (ff->retry_at_ms)
			due = ff->retry_at_ms;
		else if (ff->changes_since_eval && !ff->forced)
			due = ff->first_change_ms + f->eval_ms;
		if (!due)
			continue;
		due = due > now ? due - now : 0;
		if (t < 0 || (int)due < t)
			t = due > 60000 ? 60000 : (int)due;
	}
	return t;
}

int fib_init(struct fib *f, struct rib *r, __u32 eval_changes, __u32 eval_ms)
{
	struct xfib_fwd_bpf *s = r->skel;
	struct xfib_fib_info info;
	struct xfib_control c;
	__u32 fam;

	memset(f, 0, sizeof(*f));
	f->rib = r;
	f->eval_changes = eval_changes;
	f->eval_ms = eval_ms;
	f->active = xfib_map_mmap(s->maps.xfib_active, true, &f->active_len);
	f->bs4 = xfib_map_mmap(s->maps.xfib_bs4, true, &f->bs4_len);
	f->bs6 = xfib_map_mmap(s->maps.xfib_bs6, true, &f->bs6_len);
	if (!f->active || !f->bs4 || !f->bs6)
		return -errno;
	for (fam = 0; fam < XFIB_FAMILIES; fam++) {
		struct fib_family *ff = &f->fam[fam];
		struct xfib_active cur;

		ff->cur.fd24 = ff->cur.fd8 = -1;
		/* Continue the previous xfibd's generations and counts, and
		 * its operator's choice. Its instance keeps serving until our
		 * first build replaces it; we never write into it (we do not
		 * know its allocator state), so the first build goes to the
		 * other slot. */
		*(__u64 *)&cur = __atomic_load_n((__u64 *)&f->active[fam], __ATOMIC_ACQUIRE);
		ff->generation = cur.generation;
		ff->cur.algo = algo_by_id(cur.algo);
		ff->cur.slot = cur.slot;
		if (!bpf_map_lookup_elem(bpf_map__fd(s->maps.xfib_fib_info), &fam, &info))
			ff->swaps = info.swaps;
		if (!bpf_map_lookup_elem(bpf_map__fd(s->maps.xfib_control), &fam, &c)) {
			ff->ctl_seq = c.seq;
			ff->forced = c.algo;
		}
		ff->rebuild = true;
	}
	return 0;
}

void fib_fini(struct fib *f)
{
	int fam;

	/* Instances stay published: the dataplane keeps forwarding. Only our
	 * mappings and descriptors go (the outer maps hold the tables). */
	for (fam = 0; fam < XFIB_FAMILIES; fam++) {
		struct fib_inst *in = &f->fam[fam].cur;

		if (map_backed(in->algo))
			in->algo->destroy(f, in);
	}
	if (f->active)
		munmap(f->active, f->active_len);
	if (f->bs4)
		munmap(f->bs4, f->bs4_len);
	if (f->bs6)
		munmap(f->bs6, f->bs6_len);
}
