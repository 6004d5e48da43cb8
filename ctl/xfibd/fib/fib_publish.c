// SPDX-License-Identifier: GPL-2.0-only
/*
 * Publishing a family's lookup instance: building one from the RIB's
 * ranges and making it the dataplane's with one store of the active
 * word, updating it in place, or publishing none (the kernel answers);
 * then the family's xfib_fib_info. fib.c decides which and when.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "algo_names.h"
#include "fib_algo.h"
#include "fib_ranges.h"
#include "log.h"
#include "monoclock.h"
#include "pin.h"

void fib_write_info(struct fib *f, int fam)
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
		info.ranges = fib_table_groups_used(&ff->cur);
	else
		info.ranges = ff->cur.nranges;
	for (i = 0; i < XFIB_ALGO_COUNT && i < sizeof(info.pref); i++)
		info.pref[i] = ff->pref[i];
	if (!bpf_map_lookup_elem(bpf_map__fd(f->skel->maps.xfib_fib_info),
				 &key, &old))
		info.last_swap = old.last_swap;
	if (old.generation != info.generation || !info.last_swap)
		info.last_swap = time(NULL);
	bpf_map_update_elem(bpf_map__fd(f->skel->maps.xfib_fib_info), &key,
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
	int err;

	if (map_backed(next->algo)) {
		/* Both slot entries before the word that sends packets there. */
		err = fib_table_link(f, next);
		if (err)
			return err;
	}
	if (next->algo) {
		act.algo = next->algo->id;
		act.slot = next->slot;
		act.log2n = next->log2n;
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
		if (map_backed(old.algo))
			fib_table_unlink(f, &old);
		old.algo->destroy(f, &old);
	}
	fib_write_info(f, fam);
	return 0;
}

int fib_build(struct fib *f, int fam, const struct fib_algo *a)
{
	struct fib_family *ff = &f->fam[fam];
	struct fib_range *r = NULL;
	struct fib_inst in = { .algo = a, .fd24 = -1 };
	const struct fib_algo *prev = ff->cur.algo;
	size_t n = 0, cap = 0;
	__u64 t0 = mono_us();
	int err;

	err = fib_full_ranges(f->rib, fam, &r, &n, &cap);
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

int fib_publish_none(struct fib *f, int fam, __u32 why)
{
	struct fib_inst none = { .fd24 = -1 };

	f->fam[fam].fallback = why;
	if (!f->fam[fam].cur.algo) {
		fib_write_info(f, fam);
		return 0;
	}
	return publish(f, fam, &none);
}

/* Applies the changed prefixes in place. -ENOSPC: a rebuild is needed. */
int fib_update_in_place(struct fib *f, int fam)
{
	struct fib_inst *in = &f->fam[fam].cur;
	struct fib_range *r = NULL;
	size_t n = 0;
	int err;

	err = fib_changed_ranges(f->rib, fam, &r, &n);
	if (!err)
		err = in->algo->update(in, r, n);
	if (!err)
		f->fam[fam].updates += f->rib->fam[fam].nchg;
	free(r);
	return err;
}
