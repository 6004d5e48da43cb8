/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Between fib.c and the algorithm modules: the algorithms fib.c chooses
 * from, the scale helpers their preferences share, and what fib_table.c
 * does for every algorithm whose instance is a pair of tables in a
 * map-in-map slot (dir24_8, trie6).
 */
#ifndef XFIB_FIB_ALGO_H
#define XFIB_FIB_ALGO_H

#include <math.h>

#include "fib.h"
#include "grpool.h"

/* A build that failed is tried again after a backoff that doubles from
 * a second up to a minute: main's instance (fib.c), a rule's table's
 * (fib_tables.c). The next backoff after b (0: none yet). */
#define FIB_BACKOFF_MIN_MS 1000
#define FIB_BACKOFF_MAX_MS 60000

static inline __u32 fib_backoff_next(__u32 b)
{
	if (!b)
		return FIB_BACKOFF_MIN_MS;
	return b >= FIB_BACKOFF_MAX_MS / 2 ? FIB_BACKOFF_MAX_MS : 2 * b;
}

extern const struct fib_algo fib_algo_bsearch4;
extern const struct fib_algo fib_algo_bsearch6;
extern const struct fib_algo fib_algo_dir24_8;
extern const struct fib_algo fib_algo_trie6;
extern const struct fib_algo fib_algo_dxr;
extern const struct fib_algo fib_algo_poptrie6;

/* fib_select.c: the algorithms' preferences (bsearch4, bsearch6; the
 * table algorithms dir24_8 and trie6) ... */
unsigned int fib_bs4_preference(const struct fib_scale *s);
unsigned int fib_bs6_preference(const struct fib_scale *s);

/*
 * ... and the algorithm among the n candidates (those of family fam count)
 * for a table at scale s, the one selection main's instance and the
 * rules' tables (fib_tables.c) share: the most preferred, but one other
 * than cur (the algorithm serving now, NULL for none) only when it is
 * more than 5% better, unless cur cannot hold the table. pref[] (by
 * enum xfib_algo) receives the candidates' preferences. NULL: none can
 * hold the table.
 */
const struct fib_algo *fib_choose(const struct fib_algo *const *cand, size_t n,
				  int fam, const struct fib_scale *s,
				  const struct fib_algo *cur, unsigned int *pref);

/*
 * The same choice for a table policy rules reach (fib_tables.c), between
 * the family's range pool (bsearch4 / bsearch6, whose structure it is)
 * and an instance of dir24_8 / trie6: the enum xfib_algo to run, given
 * cur, the one running (XFIB_ALGO_NONE for none); XFIB_ALGO_NONE if
 * neither can hold the table. pref[] as above.
 */
unsigned int fib_tables_choose(int fam, const struct fib_scale *s,
			       unsigned int cur, unsigned int *pref);

/* fib_poptrie6.c: mmap()s its tables into f->pt6 (-errno) / unmaps them. */
int fib_pt6_map(struct fib *f);
void fib_pt6_unmap(struct fib *f);

static inline double fib_log2n(size_t n)
{
	return log2((double)n + 1);
}

/* A preference in 1..max. */
static inline unsigned int fib_clamp_pref(double v, unsigned int max)
{
	if (v < 1)
		return 1;
	return v > max ? max : (unsigned int)v;
}

/*
 * A table algorithm's instance: a tbl24 map and a pool of tbl8 groups in
 * chunk maps (tbl8_maps.h), all new BPF array maps (zeroed, mmap()ed into
 * in->m24 and in->t8.base), reached by packets through the slot of two
 * outer map-in-map maps. Updates go in place; the groups come from the
 * pool of grpool.h. What differs between the algorithms is below.
 */
struct fib_table_ops {
	/* Levels of groups under tbl24 and address bits: for sizing the
	 * pool of a build (dir24_8: 1, 32; trie6: 13, 128). */
	int levels, bits;
	/* The outer maps: tbl24 by slot, the pools' chunks by slot and
	 * chunk (include/xfib/tbl8_pool.h). */
	void (*outer_maps)(const struct xfib_fwd_bpf *s, int *o24, int *o8);
	/* The builder's range format: bytes per range in scratch. */
	size_t range_size;
	/* Takes over the instance's maps and fills them from the complete
	 * range list; scratch has room for n ranges of range_size. */
	int (*build)(struct fib_inst *in, const struct fib_range *r, size_t n,
		     void *scratch);
	/* Free groups writing one range takes on the tables as they are. */
	__u32 (*groups_needed)(const struct fib_inst *in,
			       const struct fib_range *r);
	int (*write)(struct fib_inst *in, const struct fib_range *r);
	struct grpool *(*pool)(struct fib_inst *in);
	/* Releases what build took over (not the maps). */
	void (*fini)(struct fib_inst *in);
};

/* The struct fib_algo callbacks of a table algorithm (fib_table.c;
 * its preference: fib_select.c). */
unsigned int fib_table_preference(const struct fib_scale *s);
int fib_table_build(struct fib *f, int fam, struct fib_inst *in,
		    const struct fib_range *r, size_t n);
int fib_table_update(struct fib_inst *in, const struct fib_range *r, size_t n);
void fib_table_reclaim(struct fib_inst *in);
bool fib_table_has_retired(struct fib_inst *in);
void fib_table_destroy(struct fib *f, struct fib_inst *in);
/* Groups in use, for status. */
__u32 fib_table_groups_used(struct fib_inst *in);

/* The struct fib_algo of a table algorithm with these ops. */
#define FIB_TABLE_ALGO(algo_id, ops)					\
	{								\
		.id = (algo_id),					\
		.preference = fib_table_preference,			\
		.build = fib_table_build,				\
		.update = fib_table_update,				\
		.reclaim = fib_table_reclaim,				\
		.has_retired = fib_table_has_retired,			\
		.destroy = fib_table_destroy,				\
		.table = (ops),						\
	}

static inline const char *fam_name(int fam)
{
	return fam == XFIB_V4 ? "ipv4" : "ipv6";
}

/* The instance lives in maps of its own, in a map-in-map slot. */
static inline bool map_backed(const struct fib_algo *a)
{
	return a && a->table;
}

/* ---- fib_publish.c ---------------------------------------------------- */

/* Writes the family's xfib_fib_info from its state. */
void fib_write_info(struct fib *f, int fam);
/* Builds an instance of a from the RIB and publishes it. -errno. */
int fib_build(struct fib *f, int fam, const struct fib_algo *a);
/* Publishes no instance (the kernel answers), for reason why
 * (XFIB_FALLBACK_*). */
int fib_publish_none(struct fib *f, int fam, __u32 why);
/* Applies the changed prefixes in place. -ENOSPC: a rebuild is needed. */
int fib_update_in_place(struct fib *f, int fam);

/* The fresh tbl24 map (struct fib) for the caller to own, or -1 if it is
 * taken. */
int fib_take_fresh_tbl24(struct fib *f);

/* Links the instance's tbl24 into its outer slot (its pool's chunks are
 * there since the build): both must be there before the active word
 * sends packets to the slot. -errno. */
int fib_table_link(struct fib *f, const struct fib_inst *in);
/* Unlinks a retired instance's slot, before its maps go. */
void fib_table_unlink(struct fib *f, const struct fib_inst *in);

#endif /* XFIB_FIB_ALGO_H */
