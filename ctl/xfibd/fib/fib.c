// SPDX-License-Identifier: GPL-2.0-only
/*
 * Lookup instances and their selection. See fib.h for the framework.
 *
 * Preferences. Each algorithm states one for the table's scale (0..255,
 * higher is better; the formulas and their reasons are at the top of
 * fib_bsearch.c and fib_table.c): bsearch is preferred for small tables
 * (a VM with a default route and its connected routes) and loses ground
 * with every doubling of the table, the table-based algorithms gain it;
 * they cross near a thousand prefixes.
 *
 * A switch needs the candidate to beat the current algorithm by more than
 * 5%, evaluated after eval_changes prefix changes or eval_ms after the
 * first change, whichever comes first, so a table oscillating around the
 * crossing point does not flap between instances.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "algo_names.h"
#include "fib_algo.h"
#include "fib_ranges.h"
#include "fib_tables.h"
#include "log.h"
#include "monoclock.h"
#include "pin.h"

/* The algorithms to choose from. */
static const struct fib_algo *const fib_algos[] = {
	&fib_algo_bsearch4,
	&fib_algo_bsearch6,
	&fib_algo_dir24_8,
	&fib_algo_trie6,
	&fib_algo_dxr,
	&fib_algo_poptrie6,
};

#define NALGOS (sizeof(fib_algos) / sizeof(fib_algos[0]))

static const struct fib_algo *algo_by_id(unsigned int id)
{
	size_t i;

	for (i = 0; i < NALGOS; i++)
		if (fib_algos[i]->id == id)
			return fib_algos[i];
	return NULL;
}

/* The algorithm the family should run now, or NULL to keep the current. */
static const struct fib_algo *select_algo(struct fib *f, int fam, __u64 now)
{
	struct fib_family *ff = &f->fam[fam];
	struct fib_scale s = {
		.prefixes = ptree_count(&f->rib->tree[fam][0]) +
			    ptree_count(&f->rib->tree[fam][1]),
		.ranges = ff->cur.algo && !map_backed(ff->cur.algo) ?
				  ff->cur.nranges : 0,
	};
	const struct fib_algo *want;

	/* The preferences always (xfibctl status shows them). */
	want = fib_choose(fib_algos, NALGOS, fam, &s, ff->cur.algo, ff->pref);
	if (ff->forced)
		return algo_by_id(ff->forced);
	if (!ff->cur.algo || !ff->pref[ff->cur.algo->id])
		return want;
	if (!ff->changes_since_eval)
		return ff->cur.algo;
	if (ff->changes_since_eval < f->eval_changes &&
	    now - ff->first_change_ms < f->eval_ms)
		return ff->cur.algo;
	ff->changes_since_eval = 0;
	if (want != ff->cur.algo)
		pr_info("%s: switching %s -> %s (preference %u -> %u)",
			fam_name(fam), xfib_algo_name(ff->cur.algo->id),
			xfib_algo_name(want->id), ff->pref[ff->cur.algo->id],
			ff->pref[want->id]);
	return want;
}

/* Building want failed with err: the old instance keeps serving, and the
 * build is tried again after a backoff that doubles up to a minute. */
static void retry_later(struct fib_family *ff, int fam,
			const struct fib_algo *want, int err, __u64 now)
{
	ff->backoff_ms = fib_backoff_next(ff->backoff_ms);
	ff->retry_at_ms = now + ff->backoff_ms;
	ff->build_error = -err;
	pr_warn("%s: building %s failed: %s; %s keeps serving, retrying in %u ms",
		fam_name(fam), xfib_algo_name(want->id), strerror(-err),
		ff->cur.algo ? xfib_algo_name(ff->cur.algo->id) : "the kernel",
		ff->backoff_ms);
}

/* Counts the RIB's changes since the last selection (select_algo). */
static void count_changes(struct fib_family *ff,
			  const struct rib_family_state *rs, __u64 now)
{
	if (rs->nchg || rs->chg_overflow) {
		if (!ff->changes_since_eval)
			ff->first_change_ms = now;
		ff->changes_since_eval += rs->nchg ? rs->nchg : 1;
	}
}

/*
 * The table published is of the algorithm wanted: true when it answers
 * as the RIB does without a build (no changes, or updated in place),
 * false when it must be rebuilt.
 */
static bool keep_current(struct fib *f, int fam, const struct fib_algo *want)
{
	struct fib_family *ff = &f->fam[fam];
	const struct rib_family_state *rs = &f->rib->fam[fam];
	int err;

	if (want != ff->cur.algo || ff->rebuild || rs->chg_overflow ||
	    ff->fallback != XFIB_FALLBACK_NONE)
		return false;
	if (!rs->nchg)
		return true;
	if (!want->update)
		return false;
	err = fib_update_in_place(f, fam);
	if (!err)
		return true;
	/* Pool exhausted and it cannot grow in place (at the slot's limit,
	 * or no memory for chunks): rebuild with a larger one and swap.
	 * poptrie6: no free run long enough (the rebuild compacts), or a
	 * batch that rewrites most of the table (a build is faster). */
	if (err != -ENOSPC) {
		/* Anything else (out of memory): the changes may be half
		 * written, and dropping them would leave the table stale.
		 * Rebuild. */
		pr_warn("%s: %s: updating in place: %s: rebuilding",
			fam_name(fam), xfib_algo_name(want->id), strerror(-err));
	} else if (map_backed(want)) {
		ff->grow_groups = ff->cur.ngroups * 2;
		pr_info("%s: %s group pool full (%u): rebuilding with %u",
			fam_name(fam), xfib_algo_name(want->id),
			ff->cur.ngroups, ff->grow_groups);
	} else {
		pr_info("%s: %s: rebuilding instead of updating in place",
			fam_name(fam), xfib_algo_name(want->id));
	}
	return false;
}

/* *settle: the family's answers are the RIB's once the rules' tables
 * built after it are published too (xfib_nonlocal4 may then be set where
 * no local prefix is left: rib_local4.c). */
static int flush_family(struct fib *f, int fam, __u64 now, bool *settle)
{
	struct fib_family *ff = &f->fam[fam];
	struct rib_family_state *rs = &f->rib->fam[fam];
	const struct fib_algo *want;
	/* The dataplane has every committed change: none, or the instance
	 * is (again) the RIB's. Not while a failed build's retry waits. */
	bool current = false;
	int err = 0;

	count_changes(ff, rs, now);
	/* A local table that got a unicast route hands a walked family to
	 * the kernel from this commit on, not from the rules' publication
	 * after it. */
	if (!rs->rules_ok || rib_rules_local_routes(f->rib, fam)) {
		ff->changes_since_eval = 0; /* nothing to select meanwhile */
		err = fib_publish_none(f, fam, XFIB_FALLBACK_RULES);
		current = true;
		goto done;
	}
	if (ff->retry_at_ms && now < ff->retry_at_ms) {
		/* A build failed: the retry rebuilds everything anyway. */
		ff->rebuild = true;
		goto done;
	}
	want = select_algo(f, fam, now);
	if (!want) {
		err = fib_publish_none(f, fam, XFIB_FALLBACK_TOO_LARGE);
		current = true;
		goto done;
	}
	current = true;
	if (keep_current(f, fam, want))
		goto done;
	err = fib_build(f, fam, want);
	if (err == -ENOSPC && !map_backed(want)) {
		err = fib_publish_none(f, fam, XFIB_FALLBACK_TOO_LARGE);
		goto done;
	}
	if (err) {
		retry_later(ff, fam, want, err, now);
		fib_write_info(f, fam);
		return err;
	}
	ff->fallback = XFIB_FALLBACK_NONE;
	ff->build_error = 0;
	ff->backoff_ms = 0;
	ff->retry_at_ms = 0;
	ff->rebuild = false;
done:
	*settle = current && !err;
	rib_changes_done(f->rib, fam);
	rs->dirty = false;
	fib_write_info(f, fam);
	return err;
}

/* One family's share of fib_flush(). */
struct fam_job {
	struct fib *f;
	int fam;
	__u64 now;
	int err;
	bool settle;
};

static void *fam_job_run(void *arg)
{
	struct fam_job *j = arg;

	rib_commit_family(j->f->rib, j->fam);
	j->err = flush_family(j->f, j->fam, j->now, &j->settle);
	return NULL;
}

/* A fresh tbl24 no build of the start took is 64 MiB held for nothing. */
static void fresh_tbl24_drop(struct fib *f)
{
	int fd = fib_take_fresh_tbl24(f);

	if (fd >= 0)
		close(fd);
}

int fib_flush(struct fib *f, __u64 now_ms)
{
	struct fam_job job[XFIB_FAMILIES];
	bool retired = false, threaded;
	int fam, err, e, tables_err;
	pthread_t v6;

	for (fam = 0; fam < XFIB_FAMILIES; fam++)
		job[fam] = (struct fam_job){ f, fam, now_ms, 0, false };
	/*
	 * The families share no prefix tree, lookup table, map or slot, and
	 * what they do share is locked (the log, the spare group maps) or
	 * made before they start (rib_commit_begin): IPv6 commits and builds
	 * on a thread of its own meanwhile. A full table's start takes the
	 * longer of the two instead of their sum. Without the thread, one
	 * after the other.
	 */
	rib_commit_begin(f->rib);
	threaded = !pthread_create(&v6, NULL, fam_job_run, &job[XFIB_V6]);
	fam_job_run(&job[XFIB_V4]);
	if (threaded)
		pthread_join(v6, NULL);
	else
		fam_job_run(&job[XFIB_V6]);
	rib_commit_end(f->rib);
	fresh_tbl24_drop(f);
	err = job[XFIB_V4].err ?: job[XFIB_V6].err;
	/* The rules' tables, from the same commit: the indexes their old
	 * ranges named are reclaimed below, after they are replaced. */
	tables_err = fib_tables_flush(f, now_ms);
	err = err ?: tables_err;
	/* After the rules' tables too: a local route may have left one. */
	if (job[XFIB_V4].settle && !tables_err)
		rib_local4_settle(f->rib);
	if (fib_tables_has_retired(f))
		retired = true;
	/* One grace period covers the indexes, groups and blocks retired
	 * above. */
	for (fam = 0; fam < XFIB_FAMILIES; fam++) {
		struct fib_inst *in = &f->fam[fam].cur;

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
		fib_tables_reclaim(f);
		/* A table that failed to build still names the indexes its
		 * old ranges did: they wait for a build that replaces it. */
		if (!tables_err)
			rib_reclaim(f->rib);
	}
	/* Rules that name a slot are published once its descriptor says
	 * what it holds (rib_table.c). */
	e = rib_rules_publish(f->rib);
	return err ?: e;
}

bool fib_poll_control(struct fib *f)
{
	bool any = false;
	__u32 fam;

	for (fam = 0; fam < XFIB_FAMILIES; fam++) {
		struct xfib_control c;
		struct fib_family *ff = &f->fam[fam];

		if (bpf_map_lookup_elem(bpf_map__fd(f->skel->maps.xfib_control),
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
	fam = fib_tables_timeout(f, now);
	if (fam >= 0 && (t < 0 || fam < t))
		t = fam;
	return t;
}

int fib_init(struct fib *f, struct rib *r, struct xfib_fwd_bpf *skel,
	     int fresh_tbl24, __u32 eval_changes, __u32 eval_ms)
{
	struct xfib_fwd_bpf *s = skel;
	struct xfib_fib_info info;
	struct xfib_control c;
	__u32 fam;
	int err;

	memset(f, 0, sizeof(*f));
	f->fresh_tbl24 = fresh_tbl24;
	f->rib = r;
	f->skel = skel;
	f->eval_changes = eval_changes;
	f->eval_ms = eval_ms;
	f->tbl8_spare.fd = -1;
	pthread_mutex_init(&f->spare_lock, NULL);
	f->active = xfib_map_mmap(s->maps.xfib_active, true, &f->active_len);
	f->bs4 = xfib_map_mmap(s->maps.xfib_bs4, true, &f->bs4_len);
	f->bs6 = xfib_map_mmap(s->maps.xfib_bs6, true, &f->bs6_len);
	f->dxr_direct = xfib_map_mmap(s->maps.xfib_dxr_direct, true,
				      &f->dxr_direct_len);
	f->dxr_ranges = xfib_map_mmap(s->maps.xfib_dxr_ranges, true,
				      &f->dxr_ranges_len);
	if (!f->active || !f->bs4 || !f->bs6 || !f->dxr_direct || !f->dxr_ranges)
		return -errno;
	err = fib_pt6_map(f);
	err = err ?: fib_tables_init(f);
	if (err)
		return err;
	for (fam = 0; fam < XFIB_FAMILIES; fam++) {
		struct fib_family *ff = &f->fam[fam];
		struct xfib_active cur;

		ff->cur.fd24 = -1;
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

		if (map_backed(in->algo) || in->priv)
			in->algo->destroy(f, in);
	}
	tbl8_spare_fini(&f->tbl8_spare);
	fresh_tbl24_drop(f);
	if (f->active)
		munmap(f->active, f->active_len);
	if (f->bs4)
		munmap(f->bs4, f->bs4_len);
	if (f->bs6)
		munmap(f->bs6, f->bs6_len);
	if (f->dxr_direct)
		munmap(f->dxr_direct, f->dxr_direct_len);
	if (f->dxr_ranges)
		munmap(f->dxr_ranges, f->dxr_ranges_len);
	fib_pt6_unmap(f);
	fib_tables_fini(f);
}
