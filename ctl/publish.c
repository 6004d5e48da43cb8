// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <arpa/inet.h>
#include <linux/rtnetlink.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "log.h"
#include "pin.h"
#include "publish.h"

static const char *const algo_names[XFIB_ALGO_COUNT] = {
	[XFIB_ALGO_NONE] = "none",
	[XFIB_ALGO_BSEARCH4] = "bsearch4",
	[XFIB_ALGO_BSEARCH6] = "bsearch6",
};

const char *fib_algo_name(unsigned int id)
{
	return id < XFIB_ALGO_COUNT && algo_names[id] ? algo_names[id] : "unknown";
}

/* ---- bsearch4 / bsearch6 ---------------------------------------------- */

static int bs4_build(struct publisher *p, unsigned int slot,
		     const struct xfib_pfx *main, size_t nmain,
		     const struct xfib_pfx *over, size_t nover,
		     struct xfib_active *act, struct xfib_fib_info *info)
{
	struct xfib_bs4_range *base = p->bs4 + (size_t)slot * XFIB_BS4_SLOT_SIZE;
	int n = xfib_ranges4_build(main, nmain, over, nover, base,
				   XFIB_BS4_SLOT_SIZE);

	if (n < 0)
		return n;
	act->log2n = xfib_ranges4_pad(base, n);
	info->ranges = n;
	info->mem_bytes = (1ull << act->log2n) * sizeof(*base);
	return 0;
}

static int bs6_build(struct publisher *p, unsigned int slot,
		     const struct xfib_pfx *main, size_t nmain,
		     const struct xfib_pfx *over, size_t nover,
		     struct xfib_active *act, struct xfib_fib_info *info)
{
	struct xfib_bs6_range *base = p->bs6 + (size_t)slot * XFIB_BS6_SLOT_SIZE;
	int n = xfib_ranges6_build(main, nmain, over, nover, base,
				   XFIB_BS6_SLOT_SIZE);

	if (n < 0)
		return n;
	act->log2n = xfib_ranges6_pad(base, n);
	info->ranges = n;
	info->mem_bytes = (1ull << act->log2n) * sizeof(*base);
	return 0;
}

static const struct fib_algo fib_algos[] = {
	{ "bsearch4", XFIB_ALGO_BSEARCH4, XFIB_V4, bs4_build },
	{ "bsearch6", XFIB_ALGO_BSEARCH6, XFIB_V6, bs6_build },
};

/* The algorithm for a family. Only one per family exists so far; selection
 * by table scale plugs in here. */
static const struct fib_algo *fib_algo_select(int fam)
{
	size_t i;

	for (i = 0; i < sizeof(fib_algos) / sizeof(fib_algos[0]); i++)
		if (fib_algos[i].family == fam)
			return &fib_algos[i];
	return NULL;
}

/* ---- RIB -> prefix lists ---------------------------------------------- */

static int route_cmp(const void *a, const void *b)
{
	const struct rib_route *x = *(struct rib_route *const *)a;
	const struct rib_route *y = *(struct rib_route *const *)b;
	int c = memcmp(x->key.dst, y->key.dst, 16);

	if (c)
		return c;
	if (x->key.plen != y->key.plen)
		return x->key.plen - y->key.plen;
	/* TOS 0 first, then the lowest metric: the route the kernel uses for
	 * packets without a matching TOS route. */
	if (x->key.tos != y->key.tos)
		return x->key.tos - y->key.tos;
	return x->key.priority < y->key.priority ? -1 :
	       x->key.priority > y->key.priority;
}

/*
 * Picks one route per (prefix, length) as the kernel would: the lowest
 * metric. A prefix that also has TOS-specific IPv4 routes is handed to the
 * kernel, which knows the packet's TOS.
 */
static size_t routes_to_pfx(struct rib *r, struct rib_route **rts, size_t n,
			    struct xfib_pfx *out)
{
	size_t i = 0, j, k = 0;

	qsort(rts, n, sizeof(*rts), route_cmp);
	while (i < n) {
		bool tos = rts[i]->key.tos != 0;

		for (j = i + 1; j < n && rts[j]->key.plen == rts[i]->key.plen &&
			    !memcmp(rts[j]->key.dst, rts[i]->key.dst, 16);
		     j++)
			tos |= rts[j]->key.tos != 0;
		memset(&out[k], 0, sizeof(out[k]));
		memcpy(out[k].addr, rts[i]->key.dst, 16);
		out[k].plen = rts[i]->key.plen;
		out[k].nh = tos ? rib_nh_unsupported(r) : rib_route_nh(r, rts[i]);
		k++;
		i = j;
	}
	return k;
}

int publish_family(struct publisher *p, int fam)
{
	struct rib *r = p->rib;
	int family = fam == XFIB_V4 ? AF_INET : AF_INET6;
	const struct fib_algo *algo = fib_algo_select(fam);
	struct rib_route **mains = NULL, **overs = NULL, *rt;
	struct xfib_pfx *mpfx = NULL, *opfx = NULL;
	size_t nm = 0, no = 0, npm, npo, i;
	struct xfib_active cur, next = { 0 };
	struct xfib_fib_info info = { 0 };
	__u32 key = fam;
	int err = -ENOMEM;

	mains = calloc(r->routes.count + 1, sizeof(*mains));
	overs = calloc(r->routes.count + 1, sizeof(*overs));
	mpfx = calloc(r->routes.count + 1, sizeof(*mpfx));
	opfx = calloc(r->routes.count + 1, sizeof(*opfx));
	if (!mains || !overs || !mpfx || !opfx)
		goto out;
	htab_for_each(&r->routes, rt, tmp, i) {
		if (rt->key.family != family)
			continue;
		if (rt->key.table == RT_TABLE_LOCAL)
			overs[no++] = rt;
		else
			mains[nm++] = rt;
	}
	npm = routes_to_pfx(r, mains, nm, mpfx);
	npo = routes_to_pfx(r, overs, no, opfx);

	/* Packets may still be reading the standby slot from before the
	 * last swap: wait until they are done before overwriting it. */
	if (r->fam[fam].grace_needed) {
		err = rib_rcu_sync(r);
		if (err)
			goto out;
		r->fam[fam].grace_needed = false;
	}

	*(__u64 *)&cur = __atomic_load_n((__u64 *)&p->active[fam], __ATOMIC_ACQUIRE);
	next.algo = algo->id;
	next.slot = cur.algo == XFIB_ALGO_NONE ? 0 : !cur.slot;
	next.generation = cur.generation + 1;
	if (!r->fam[fam].rules_ok) {
		/* Policy routing decides per packet with more than the
		 * destination: only the kernel can answer. */
		next.algo = XFIB_ALGO_NONE;
		info.fallback = XFIB_FALLBACK_RULES;
		err = 0;
	} else {
		err = algo->build(p, next.slot, mpfx, npm, opfx, npo, &next, &info);
	}
	if (err == -ENOSPC) {
		/* Better no fast path than a wrong one: everything goes to
		 * the kernel until the table fits again. */
		pr_warn("%s: %zu routes do not fit the %s table: all %s traffic goes to the kernel",
			fam == XFIB_V4 ? "ipv4" : "ipv6", nm + no, algo->name,
			fam == XFIB_V4 ? "IPv4" : "IPv6");
		next.algo = XFIB_ALGO_NONE;
		next.log2n = 0;
		info.fallback = XFIB_FALLBACK_TOO_LARGE;
		info.ranges = 0;
		info.mem_bytes = 0;
	} else if (err) {
		goto out;
	}

	__atomic_store_n((__u64 *)&p->active[fam], *(__u64 *)&next, __ATOMIC_RELEASE);
	r->fam[fam].grace_needed = true;
	r->fam[fam].dirty = false;
	r->fam[fam].changes = 0;

	info.algo = next.algo;
	info.generation = next.generation;
	info.routes = nm + no;
	info.swaps = ++p->swaps[fam];
	info.last_swap = time(NULL);
	if (bpf_map_update_elem(bpf_map__fd(r->skel->maps.xfib_fib_info), &key,
				&info, BPF_ANY))
		pr_warn("update fib info: %s", strerror(errno));
	pr_debug("%s: published %s generation %u: %u routes, %u ranges",
		 fam == XFIB_V4 ? "ipv4" : "ipv6", fib_algo_name(next.algo),
		 next.generation, info.routes, info.ranges);
	err = 0;
out:
	free(mains);
	free(overs);
	free(mpfx);
	free(opfx);
	return err;
}

int publish_init(struct publisher *p, struct rib *r)
{
	struct xfib_fib_info info;
	__u32 fam;

	memset(p, 0, sizeof(*p));
	p->rib = r;
	p->active = xfib_map_mmap(r->skel->maps.xfib_active, true, &p->active_len);
	p->bs4 = xfib_map_mmap(r->skel->maps.xfib_bs4, true, &p->bs4_len);
	p->bs6 = xfib_map_mmap(r->skel->maps.xfib_bs6, true, &p->bs6_len);
	if (!p->active || !p->bs4 || !p->bs6)
		return -errno;
	/* Continue the swap count of a previous xfibd; the slot that is
	 * active now may still be in use, so the first build waits. */
	for (fam = 0; fam < XFIB_FAMILIES; fam++) {
		if (!bpf_map_lookup_elem(bpf_map__fd(r->skel->maps.xfib_fib_info),
					 &fam, &info))
			p->swaps[fam] = info.swaps;
		r->fam[fam].grace_needed = true;
	}
	return 0;
}

void publish_fini(struct publisher *p)
{
	if (p->active)
		munmap(p->active, p->active_len);
	if (p->bs4)
		munmap(p->bs4, p->bs4_len);
	if (p->bs6)
		munmap(p->bs6, p->bs6_len);
}
