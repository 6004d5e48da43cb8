/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Lookup instances: compiling the RIB's prefix trees into the dataplane's
 * lookup structures, choosing the structure by table scale, and publishing.
 *
 * Each algorithm is a module behind struct fib_algo, in the spirit of
 * FreeBSD's modular FIB lookup framework: it reports a preference for the
 * table's scale, builds an instance from the complete range list, and, if
 * it can, applies changes in place. An instance is built completely in a
 * standby slot and published with one atomic store of the family's
 * xfib_active word, which packets read once; the previous instance is
 * destroyed after an RCU grace period. A failed build leaves the old
 * instance serving and is retried with backoff.
 *
 * Files: fib.c selects, by the preferences and the one choice of
 * fib_select.c; fib_publish.c builds and publishes; fib_ranges.c
 * compiles the prefix trees into the range list every build starts from;
 * the algorithms are fib_bsearch.c (bsearch4, bsearch6), fib_dxr.c (dxr),
 * fib_poptrie6.c (poptrie6), fib_dir24.c (dir24_8) and fib_trie6.c
 * (trie6), the last two over what fib_table.c does for every table in
 * map-in-map slots (fib_algo.h). fib_tables.c builds the other tables
 * policy rules reach (include/xfib/tables.h), chosen by fib_select.c
 * too: ranges in pools fib_tpool.c allocates, or instances of dir24_8
 * and trie6 of their own. The lookup structures themselves are
 * dir24.c, dxr.c, trie6.c and poptrie6*.c, with their pools (grpool.c,
 * tbl8_maps.c). This header is the fib room's door: the rest of the
 * daemon sees nothing else of it. The room calls the RIB (rib/rib.h),
 * never the other way.
 */
#ifndef XFIB_FIB_H
#define XFIB_FIB_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "dir24.h"
#include "rib/rib.h"
#include "tbl8_maps.h"
#include "trie6.h"

struct fib;
struct fib_inst;
struct fib_table_ops;

/* One range of the compiled table: [first, last] -> nh. */
struct fib_range {
	xfib_u128 first;
	xfib_u128 last;
	__u32 nh;
};

/* What the algorithms' preferences are computed from. */
struct fib_scale {
	size_t prefixes;
	size_t ranges; /* 0 when not known yet */
};

struct fib_algo {
	enum xfib_algo id; /* its name and family: algo_names.h */
	/* 0..255, higher is better; 0: cannot hold this table. */
	unsigned int (*preference)(const struct fib_scale *s);
	/* Allocates the instance's tables in in->slot and fills them with
	 * the complete, sorted range list. -ENOSPC: the table does not fit. */
	int (*build)(struct fib *f, int fam, struct fib_inst *in,
		     const struct fib_range *r, size_t n);
	/* Rewrites ranges in place in a published instance; NULL if the
	 * algorithm only rebuilds. Every single write leaves the instance
	 * consistent (each address reads its old or its new answer), but a
	 * batch may stop with -ENOSPC partway: a collapse by one write can be
	 * undone by the next, so no up-front sum bounds a batch exactly.
	 * dir24_8 and trie6 grow their pools in place first (fib_table.c);
	 * -ENOSPC is what is left: the caller then rebuilds with a larger
	 * pool, which replaces the instance as a whole. */
	int (*update)(struct fib_inst *in, const struct fib_range *r, size_t n);
	/* After a grace period: storage retired by updates is reusable. */
	void (*reclaim)(struct fib_inst *in);
	bool (*has_retired)(struct fib_inst *in);
	void (*destroy)(struct fib *f, struct fib_inst *in);
	/* dir24_8, trie6: tables in map-in-map slots (fib_algo.h); NULL for
	 * algorithms whose slots are fixed maps. */
	const struct fib_table_ops *table;
};

struct fib_inst {
	const struct fib_algo *algo; /* NULL: no instance */
	unsigned int slot;
	__u32 nranges;   /* ranges built (bsearch, dxr) */
	__u8 log2n;      /* bsearch: the slot holds 2^log2n ranges */
	__u64 mem_bytes;
	__u32 capacity;  /* groups or ranges */
	/* dir24_8 / trie6: the slot's tbl24 map and pool chunks, mmap()ed */
	int fd24;
	void *m24;
	size_t len24;
	struct tbl8_maps t8;
	__u32 ngroups;
	struct dir24 dir;
	struct trie6 trie;
	void *priv;      /* poptrie6: its in-place state (fib_poptrie6.c) */
};

struct fib_family {
	struct fib_inst cur;
	__u32 forced;        /* enum xfib_algo, 0: automatic */
	__u32 ctl_seq;       /* last xfibctl request seen */
	bool rebuild;        /* the next flush builds a new instance */
	__u32 grow_groups;   /* next build needs at least this many groups */
	__u32 changes_since_eval;
	__u64 first_change_ms;
	__u64 retry_at_ms;   /* a failed build is retried then */
	__u32 backoff_ms;
	__u32 generation;
	__u64 swaps, updates, build_us;
	__u32 fallback;
	__u32 build_error;   /* errno of the last failed build, 0 after success */
	unsigned int pref[XFIB_ALGO_COUNT];
};

struct fib_pt6_maps;
struct fib_tables;

struct fib {
	struct rib *rib;
	struct xfib_fwd_bpf *skel;  /* the pinned maps instances go into */
	struct xfib_active *active; /* mmap()ed xfib_active */
	struct xfib_bs4_range *bs4; /* mmap()ed xfib_bs4 */
	struct xfib_bs6_range *bs6; /* mmap()ed xfib_bs6 */
	__u32 *dxr_direct;          /* mmap()ed xfib_dxr_direct */
	__u32 *dxr_ranges;          /* mmap()ed xfib_dxr_ranges */
	size_t active_len, bs4_len, bs6_len, dxr_direct_len, dxr_ranges_len;
	struct tbl8_spare tbl8_spare; /* for retired pools (tbl8_maps.h) */
	pthread_mutex_t spare_lock;   /* both families' tables use the spare */
	struct fib_pt6_maps *pt6;   /* fib_poptrie6.c: its mmap()ed tables */
	struct fib_tables *tables;  /* fib_tables.c: the rules' tables */
	/* A fresh, zeroed map of the tbl24 shape (xfib_open_tbl24) for the
	 * first dir24_8 or trie6 build of the start to take, or -1. */
	int fresh_tbl24;
	struct fib_family fam[XFIB_FAMILIES];
	/* Selection: re-evaluate after this many changes or this long. */
	__u32 eval_changes;
	__u32 eval_ms;
};

/* fresh_tbl24: see struct fib, -1 for none; f owns it from here on. */
int fib_init(struct fib *f, struct rib *r, struct xfib_fwd_bpf *skel,
	     int fresh_tbl24, __u32 eval_changes, __u32 eval_ms);
void fib_fini(struct fib *f);
/* Commits the RIB and brings both families' instances up to date, the
 * two families side by side on two threads. */
int fib_flush(struct fib *f, __u64 now_ms);
/* Reads operator requests (xfibctl algo); true if one arrived. */
bool fib_poll_control(struct fib *f);
/* Milliseconds until fib_flush has timed work (selection, retries), or -1. */
int fib_timeout(const struct fib *f, __u64 now_ms);

#endif /* XFIB_FIB_H */
