// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit test of dir24_8: the update side (ctl/xfibd/fib/dir24.c) together with the
 * lookup the dataplane runs (include/xfib/lookup_dir24.h).
 *
 * The reference is a prefix set kept twice: a hash of (first address,
 * length) for longest-prefix match by probing every length present, and
 * an array sorted by (first address, length) to find the prefixes inside
 * a span. From it the test derives what an update must write: the new
 * ranges of the span a changed prefix covers (the prefixes inside it plus
 * the longest one around it, compiled by tests/unit/ref/ranges.c and cut to the
 * span), exactly what the daemon writes.
 *
 * Checks:
 *  - exhaustive: every /24 against the complete range list of the set:
 *    a uniform /24 must be a plain tbl24 entry with its value, any other
 *    must point to a group whose 256 lookups match, each group reachable
 *    once, never from the free or retired lists, and the groups in use
 *    must equal the EXT entries (no leak). That covers all 2^32 addresses;
 *  - after every update batch, the incremental tables equal a from-scratch
 *    dir24_build() of the new set, entry for entry and group for group;
 *  - after every single write, the /24s at both ends of the written range
 *    and the addresses just outside it: inside reads the new nexthop,
 *    outside reads exactly what it read before the write;
 *  - dir24_groups_needed() equals what a write, a span of writes and a
 *    daemon-style batch of merged spans take (an exact bound);
 *  - the naive longest match on random addresses and on the first and
 *    last address of every prefix, and one outside each;
 *  - cases: every depth 1..32 in order and back; /0 first and last, with
 *    0.0.0.0/32 and 255.255.255.255/32; a /25 flapped 1000 times in a /24
 *    (a group each time, collapsed each time, retired groups untouched
 *    and not reused before reclaim, no leak); a pool of 3 groups run dry
 *    (-ENOSPC with tables and counters unchanged, byte for byte); the
 *    same set inserted in two orders;
 *  - a reader thread looking up while a writer updates, allocates,
 *    collapses and reclaims (after a grace period the test provides):
 *    addresses outside every write must never read anything else. Races
 *    are caught by chance, not always: the rest is deterministic.
 *
 * The lookup reads the tables the way the BPF program does: as __u64
 * values holding two entries, low half first, while ctl/xfibd/fib/dir24.c writes
 * them as __u32 arrays. So the packing is under test too.
 *
 * Usage: unit_test_dir24 [seed]. The seed is printed first; passing it
 * back replays the same tables and updates.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>

#define TESTLIB_SEED 0xd1224b8a5eed0001ull
#include "testlib.h"
#include "ranges.h"
#include "fib/dir24.h"

/* The memory is written as __u32 by dir24.c: let the __u64 view alias it. */
typedef __u64 __attribute__((may_alias)) u64_alias;

static inline __u32 u32_at(const void *t, __u32 i)
{
	/*
	 * One 64-bit load of the map value, as in BPF; atomic so the reader
	 * thread's loads race with the writer's stores in a defined way.
	 */
	__u64 v = __atomic_load_n(&((const u64_alias *)t)[i >> 1],
				  __ATOMIC_RELAXED);

	return (__u32)(v >> ((i & 1) * 32));
}

#define XFIB_U32_AT(t, i) u32_at((t), (i))
#include "xfib/lookup_dir24.h"

#define TBL24_N XFIB_DIR24_TBL24_ENTRIES
#define GRP_N XFIB_DIR24_GROUP_ENTRIES

static unsigned long long n_lookups, n_writes, n_full;

#define ADDR(a, b, c, d) ((__u32)(a) << 24 | (b) << 16 | (c) << 8 | (d))

/* ---- tables -------------------------------------------------------------- */

/* One instance: the tables as the BPF maps hold them, and their updater. */
struct inst {
	__u64 *t24; /* XFIB_DIR24_TBL24_BYTES */
	__u64 *t8; /* ngroups * XFIB_DIR24_GROUP_VALUES */
	struct dir24 d;
};

static void inst_init(struct inst *in, __u32 ngroups)
{
	int ret;

	in->t24 = xmalloc(XFIB_DIR24_TBL24_BYTES);
	/* Garbage everywhere: init must clear what it owns. */
	memset(in->t24, 0x5a, XFIB_DIR24_TBL24_BYTES);
	in->t8 = xmalloc((size_t)ngroups * XFIB_DIR24_GROUP_VALUES *
			 sizeof(__u64));
	memset(in->t8, 0xa5,
	       (size_t)ngroups * XFIB_DIR24_GROUP_VALUES * sizeof(__u64));
	ret = dir24_init(&in->d, (__u32 *)in->t24, (__u32 *)in->t8, ngroups);
	CHECK(ret == 0, "dir24_init(%u groups): %d", ngroups, ret);
}

static void inst_fini(struct inst *in)
{
	dir24_fini(&in->d);
	free(in->t24);
	free(in->t8);
}

static __u32 lookup(const struct inst *in, __u32 a)
{
	n_lookups++;
	return xfib_dir24_lookup(in->t24, in->t8, a);
}

static __u32 entry(const struct inst *in, __u32 b)
{
	return u32_at(in->t24, b);
}

static const __u32 *group(const struct inst *in, __u32 g)
{
	return (const __u32 *)in->t8 + (size_t)g * GRP_N;
}

static void write_ok(struct inst *in, __u32 first, __u32 last, __u32 nh)
{
	char b1[INET6_ADDRSTRLEN], b2[INET6_ADDRSTRLEN];
	int ret = dir24_write_range(&in->d, first, last, nh);

	CHECK(ret == 0, "write %s-%s nh %u: %d", fmt_addr(32, first, b1),
	      fmt_addr(32, last, b2), nh, ret);
	n_writes++;
}

/* ---- reference prefix set ------------------------------------------------ */

struct rp {
	__u32 start; /* host order, host bits clear */
	__u32 nh;
	__u8 len;
};

struct hslot {
	__u32 start;
	__u32 nh;
	__u8 len;
	__u8 used;
};

struct rset {
	struct rp *v; /* sorted by (start, len) once sorted is set */
	size_t n, cap;
	bool sorted;
	struct hslot *h;
	size_t hmask;
	size_t len_cnt[33];
};

static size_t hpos(const struct rset *rs, __u32 start, unsigned int len)
{
	__u64 x = ((__u64)start << 8 | len) * 0x9e3779b97f4a7c15ull;

	return (size_t)(x >> 29) & rs->hmask;
}

static void rs_init(struct rset *rs, size_t max)
{
	size_t hs = 1024;

	memset(rs, 0, sizeof(*rs));
	while (hs < 2 * max + 16)
		hs *= 2;
	rs->h = calloc(hs, sizeof(*rs->h));
	CHECK(rs->h, "out of memory");
	rs->hmask = hs - 1;
	rs->cap = max + 16;
	rs->v = xmalloc(rs->cap * sizeof(*rs->v));
}

static void rs_free(struct rset *rs)
{
	free(rs->h);
	free(rs->v);
	memset(rs, 0, sizeof(*rs));
}

static struct hslot *h_find(const struct rset *rs, __u32 start,
			    unsigned int len)
{
	size_t i = hpos(rs, start, len);

	for (;; i = (i + 1) & rs->hmask) {
		struct hslot *s = &rs->h[i];

		if (!s->used)
			return NULL;
		if (s->start == start && s->len == len)
			return s;
	}
}

static void h_put(struct rset *rs, __u32 start, unsigned int len, __u32 nh)
{
	size_t i = hpos(rs, start, len);

	while (rs->h[i].used)
		i = (i + 1) & rs->hmask;
	rs->h[i] = (struct hslot){ start, nh, (__u8)len, 1 };
	rs->len_cnt[len]++;
}

static void h_del(struct rset *rs, struct hslot *s)
{
	size_t i = (size_t)(s - rs->h), j = i;

	rs->len_cnt[s->len]--;
	/* Linear probing: shift back the entries the hole would cut off. */
	for (;;) {
		size_t home;

		j = (j + 1) & rs->hmask;
		if (!rs->h[j].used)
			break;
		home = hpos(rs, rs->h[j].start, rs->h[j].len);
		if (((j - home) & rs->hmask) >= ((j - i) & rs->hmask)) {
			rs->h[i] = rs->h[j];
			i = j;
		}
	}
	rs->h[i].used = 0;
}

static int rp_cmp(const void *a, const void *b)
{
	const struct rp *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (int)x->len - (int)y->len;
}

/* First index whose (start, len) is not below the given one. */
static size_t rs_lower(const struct rset *rs, __u32 start, unsigned int len)
{
	size_t lo = 0, hi = rs->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct rp *p = &rs->v[mid];

		if (p->start < start || (p->start == start && p->len < len))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool rs_has(const struct rset *rs, __u32 start, unsigned int len)
{
	return h_find(rs, start, len) != NULL;
}

/* Bulk loading: append, then rs_sort() once. */
static void rs_append(struct rset *rs, __u32 start, unsigned int len, __u32 nh)
{
	if (rs->n == rs->cap) {
		rs->cap *= 2;
		rs->v = xrealloc(rs->v, rs->cap * sizeof(*rs->v));
	}
	rs->v[rs->n++] = (struct rp){ start, nh, (__u8)len };
	rs->sorted = false;
	h_put(rs, start, len, nh);
}

static void rs_sort(struct rset *rs)
{
	qsort(rs->v, rs->n, sizeof(*rs->v), rp_cmp);
	rs->sorted = true;
}

/* Adds or replaces; returns the previous nexthop or -1. */
static long rs_set(struct rset *rs, __u32 start, unsigned int len, __u32 nh)
{
	struct hslot *s = h_find(rs, start, len);
	size_t i;

	CHECK(rs->sorted, "test bug: rs_set on an unsorted set");
	i = rs_lower(rs, start, len);
	if (s) {
		long old = s->nh;

		s->nh = nh;
		rs->v[i].nh = nh;
		return old;
	}
	if (rs->n == rs->cap) {
		rs->cap *= 2;
		rs->v = xrealloc(rs->v, rs->cap * sizeof(*rs->v));
	}
	memmove(&rs->v[i + 1], &rs->v[i], (rs->n - i) * sizeof(*rs->v));
	rs->v[i] = (struct rp){ start, nh, (__u8)len };
	rs->n++;
	h_put(rs, start, len, nh);
	return -1;
}

/* Returns whether it was there. */
static bool rs_del(struct rset *rs, __u32 start, unsigned int len)
{
	struct hslot *s = h_find(rs, start, len);
	size_t i;

	if (!s)
		return false;
	h_del(rs, s);
	i = rs_lower(rs, start, len);
	memmove(&rs->v[i], &rs->v[i + 1], (rs->n - i - 1) * sizeof(*rs->v));
	rs->n--;
	return true;
}

/* Longest match among prefixes strictly shorter than below (33: all). */
static __u32 rs_lpm_below(const struct rset *rs, __u32 a, unsigned int below)
{
	unsigned int len;

	for (len = below; len-- > 0;) {
		const struct hslot *s;

		if (!rs->len_cnt[len])
			continue;
		s = h_find(rs, pfx_first(32, a, len), len);
		if (s)
			return s->nh;
	}
	return XFIB_NH_IDX_NONE;
}

static __u32 rs_lpm(const struct rset *rs, __u32 a)
{
	return rs_lpm_below(rs, a, 33);
}

/* ---- ranges from the reference ------------------------------------------- */

struct vec {
	struct xfib_pfx *p;
	size_t np, capp;
	struct xfib_bs4_range *r;
	size_t nr, capr;
};

static void vec_pfx(struct vec *v, __u32 start, unsigned int len, __u32 nh)
{
	struct xfib_pfx *p;

	if (v->np == v->capp) {
		v->capp = v->capp ? 2 * v->capp : 64;
		v->p = xrealloc(v->p, v->capp * sizeof(*v->p));
	}
	p = &v->p[v->np++];
	memset(p, 0, sizeof(*p));
	p->addr[0] = start >> 24;
	p->addr[1] = start >> 16;
	p->addr[2] = start >> 8;
	p->addr[3] = start;
	p->plen = len;
	p->nh = nh;
}

static void vec_compile(struct vec *v)
{
	int ret;

	if (v->capr < 2 * v->np + 1) {
		v->capr = 2 * v->np + 1;
		v->r = xrealloc(v->r, v->capr * sizeof(*v->r));
	}
	ret = xfib_ranges4_build(v->p, v->np, NULL, 0, v->r, v->capr);
	CHECK(ret > 0, "test bug: ranges build of %zu prefixes: %d", v->np,
	      ret);
	v->nr = ret;
}

static void vec_free(struct vec *v)
{
	free(v->p);
	free(v->r);
	memset(v, 0, sizeof(*v));
}

/* The complete range list of the set, into v->r. */
static void full_ranges(const struct rset *rs, struct vec *v)
{
	size_t i;

	v->np = 0;
	for (i = 0; i < rs->n; i++)
		vec_pfx(v, rs->v[i].start, rs->v[i].len, rs->v[i].nh);
	vec_compile(v);
}

/*
 * The ranges of a complete list r[0..n-1] that meet [first, last], the
 * first one cut to start at first, into out (which may be r). Returns
 * their count.
 */
static size_t cut_ranges(const struct xfib_bs4_range *r, size_t n, __u32 first,
			 __u32 last, struct xfib_bs4_range *out)
{
	size_t lo = 0, hi = n, k, m = 0;

	/* The last range starting at or before first. */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (r[mid].start <= first)
			lo = mid;
		else
			hi = mid;
	}
	for (k = lo; k < n && r[k].start <= last; k++) {
		out[m].start = r[k].start < first ? first : r[k].start;
		out[m].nh = r[k].nh;
		m++;
	}
	return m;
}

/*
 * The ranges of span [start, start | host_mask(len)] in the set as it is
 * now, into v->r (v->nr of them, the first starting at start). This is
 * what an update of that prefix rewrites. The _as form takes the prefix
 * itself as having nexthop self_nh (absent if negative) whatever the set
 * holds, so a change can be written without applying it to the set.
 */
static __u32 span_ranges_as(const struct rset *rs, __u32 start,
			    unsigned int len, long self_nh, struct vec *v)
{
	__u32 last = pfx_last(32, start, len);
	size_t i;

	v->np = 0;
	/* The longest prefix around the span decides where nothing inside does. */
	if (len > 0)
		vec_pfx(v, 0, 0, rs_lpm_below(rs, start, len));
	i = rs_lower(rs, start, len);
	if (i < rs->n && rs->v[i].start == start && rs->v[i].len == len)
		i++;
	if (self_nh >= 0)
		vec_pfx(v, start, len, (__u32)self_nh);
	for (; i < rs->n && rs->v[i].start <= last; i++)
		vec_pfx(v, rs->v[i].start, rs->v[i].len, rs->v[i].nh);
	vec_compile(v);
	v->nr = cut_ranges(v->r, v->nr, start, last, v->r);
	return last;
}

static __u32 span_ranges(const struct rset *rs, __u32 start, unsigned int len,
			 struct vec *v)
{
	const struct hslot *h = h_find(rs, start, len);

	return span_ranges_as(rs, start, len, h ? (long)h->nh : -1, v);
}

/* ---- checks -------------------------------------------------------------- */

/* Marks of the group states, for the accounting check. */
enum { G_UNSEEN, G_FREE, G_RETIRED, G_USED };

/*
 * The whole table against a complete, merged range list: see the top.
 * All 2^24 entries and all 256 entries of every reachable group.
 */
static void check_full(const struct inst *in, const struct xfib_bs4_range *r,
		       size_t n, const char *what)
{
	const struct dir24 *d = &in->d;
	__u8 *st = calloc(d->pool.ngroups + 1, 1);
	__u32 b = 0, ext = 0, i;
	char buf[INET6_ADDRSTRLEN];
	size_t k = 0;

	CHECK(st, "out of memory");
	CHECK(n >= 1 && r[0].start == 0, "test bug: bad range list");
	for (k = 1; k < n; k++)
		CHECK(r[k].start > r[k - 1].start && r[k].nh != r[k - 1].nh,
		      "test bug: range list not merged");
	CHECK(d->pool.nfree + d->pool.nretired <= d->pool.ngroups,
	      "%s: %u free + %u retired > %u groups", what, d->pool.nfree,
	      d->pool.nretired, d->pool.ngroups);
	for (i = 0; i < d->pool.nfree; i++) {
		CHECK(d->pool.free[i] < d->pool.ngroups && st[d->pool.free[i]] == G_UNSEEN,
		      "%s: free list entry %u (group %u) bad or repeated", what,
		      i, d->pool.free[i]);
		st[d->pool.free[i]] = G_FREE;
	}
	for (i = 0; i < d->pool.nretired; i++) {
		CHECK(d->pool.retired[i] < d->pool.ngroups &&
			      st[d->pool.retired[i]] == G_UNSEEN,
		      "%s: retired entry %u (group %u) bad or repeated", what,
		      i, d->pool.retired[i]);
		st[d->pool.retired[i]] = G_RETIRED;
	}

	k = 0;
	while (b < TBL24_N) {
		__u32 base = b << 8, end, e, g, a;
		size_t j;

		while (k + 1 < n && r[k + 1].start <= base)
			k++;
		end = k + 1 < n ? r[k + 1].start >> 8 : TBL24_N;
		/* /24s that one range covers: plain entries, its nexthop. */
		if (end > b) {
			/* nh has no EXT bit: equal means plain and right. */
			for (; b < end; b++)
				if (entry(in, b) != r[k].nh)
					fail("%s: /24 %s: entry 0x%x, expected plain %u",
					     what, fmt_addr(32, b << 8, buf),
					     entry(in, b), r[k].nh);
			continue;
		}

		/* A value changes inside /24 b: it must have a group. */
		e = entry(in, b);
		CHECK(XFIB_DIR24_IS_EXT(e),
		      "%s: /24 %s holds a longer prefix but entry is plain 0x%x",
		      what, fmt_addr(32, base, buf), e);
		g = XFIB_DIR24_GROUP(e);
		CHECK(g < d->pool.ngroups, "%s: /24 %s: group %u out of %u", what,
		      fmt_addr(32, base, buf), g, d->pool.ngroups);
		CHECK(st[g] == G_UNSEEN, "%s: /24 %s: group %u is %s", what,
		      fmt_addr(32, base, buf), g,
		      st[g] == G_FREE ? "free" :
		      st[g] == G_RETIRED ? "retired" : "shared with another /24");
		st[g] = G_USED;
		ext++;
		for (a = 0, j = k; a < GRP_N; a++) {
			while (j + 1 < n && r[j + 1].start <= (base | a))
				j++;
			e = lookup(in, base | a);
			CHECK(e == r[j].nh, "%s: %s: lookup %u, expected %u",
			      what, fmt_addr(32, base | a, buf), e, r[j].nh);
		}
		b++;
	}
	CHECK(ext == dir24_groups_used(d),
	      "%s: %u groups reachable, %u counted as used (leak)", what, ext,
	      dir24_groups_used(d));
	free(st);
	n_full++;
}

/* Two instances agree entry for entry and group for group. */
static void check_same(const struct inst *x, const struct inst *y,
		       const char *what)
{
	char buf[INET6_ADDRSTRLEN];
	__u32 b;

	for (b = 0; b < TBL24_N; b++) {
		__u32 ex = entry(x, b), ey = entry(y, b);

		if (ex == ey && !XFIB_DIR24_IS_EXT(ex))
			continue;
		CHECK(XFIB_DIR24_IS_EXT(ex) && XFIB_DIR24_IS_EXT(ey),
		      "%s: /24 %s: entries 0x%x and 0x%x", what,
		      fmt_addr(32, b << 8, buf), ex, ey);
		CHECK(!memcmp(group(x, XFIB_DIR24_GROUP(ex)),
			      group(y, XFIB_DIR24_GROUP(ey)), GRP_N * 4),
		      "%s: /24 %s: groups %u and %u differ", what,
		      fmt_addr(32, b << 8, buf), XFIB_DIR24_GROUP(ex),
		      XFIB_DIR24_GROUP(ey));
	}
	CHECK(dir24_groups_used(&x->d) == dir24_groups_used(&y->d),
	      "%s: %u and %u groups used", what, dir24_groups_used(&x->d),
	      dir24_groups_used(&y->d));
}

/* The naive longest match on random and on boundary addresses. */
static void check_naive(const struct inst *in, const struct rset *rs,
			size_t nrandom, const char *what)
{
	char buf[INET6_ADDRSTRLEN];
	size_t i;

	for (i = 0; i < rs->n + nrandom; i++) {
		__u32 pts[4], k, np = 0;

		if (i < rs->n) {
			__u32 f = rs->v[i].start,
			      l = pfx_last(32, f, rs->v[i].len);

			pts[np++] = f;
			pts[np++] = l;
			if (f)
				pts[np++] = f - 1;
			if (l != ~0u)
				pts[np++] = l + 1;
		} else {
			pts[np++] = (__u32)rnd();
		}
		for (k = 0; k < np; k++) {
			__u32 exp = rs_lpm(rs, pts[k]),
			      got = lookup(in, pts[k]);

			CHECK(exp == got, "%s: %s: lookup %u, longest match %u",
			      what, fmt_addr(32, pts[k], buf), got, exp);
		}
	}
}

/*
 * Builds the complete ranges of rs into a fresh instance and checks it.
 * The caller provides the scratch instance (64 MiB, allocated once).
 */
static void check_against_build(const struct inst *in, struct inst *fresh,
				const struct rset *rs, struct vec *v,
				const char *what)
{
	int ret;

	full_ranges(rs, v);
	check_full(in, v->r, v->nr, what);
	ret = dir24_build(&fresh->d, v->r, v->nr);
	CHECK(ret == 0, "%s: build of %zu ranges: %d", what, v->nr, ret);
	check_same(in, fresh, what);
}

/* Lookups of the addresses a write must not disturb, before the write. */
struct probe {
	__u32 addr[2 * GRP_N + 2];
	__u32 nh[2 * GRP_N + 2];
	unsigned int n;
};

static void probe_take(struct probe *p, const struct inst *in, __u32 first,
		       __u32 last)
{
	__u32 a;

	p->n = 0;
	for (a = 0; a < GRP_N; a++)
		p->addr[p->n++] = (first & ~0xffu) | a;
	if ((first >> 8) != (last >> 8))
		for (a = 0; a < GRP_N; a++)
			p->addr[p->n++] = (last & ~0xffu) | a;
	if (first)
		p->addr[p->n++] = first - 1;
	if (last != ~0u)
		p->addr[p->n++] = last + 1;
	for (a = 0; a < p->n; a++)
		p->nh[a] = lookup(in, p->addr[a]);
}

static void probe_check(const struct probe *p, const struct inst *in,
			__u32 first, __u32 last, __u32 nh)
{
	char b1[INET6_ADDRSTRLEN], b2[INET6_ADDRSTRLEN], b3[INET6_ADDRSTRLEN];
	unsigned int i;

	for (i = 0; i < p->n; i++) {
		__u32 a = p->addr[i], got = lookup(in, a);
		__u32 exp = a >= first && a <= last ? nh : p->nh[i];

		CHECK(got == exp,
		      "write of nh %u over %s-%s: %s reads %u, expected %u", nh,
		      fmt_addr(32, first, b1), fmt_addr(32, last, b2),
		      fmt_addr(32, a, b3), got, exp);
	}
}

struct span_stats {
	unsigned long long spans, writes, allocated, needed;
};

/*
 * Writes a sequence of ranges (range k up to the next start, the last one
 * to span_last), checking the reservation and, with check, the
 * neighbourhood of each write.
 */
static void apply_ranges(struct inst *in, const struct xfib_bs4_range *r,
			 size_t n, __u32 span_last, bool check,
			 struct span_stats *ss)
{
	__u32 need = dir24_groups_needed(&in->d, r, n, span_last);
	__u32 free0 = dir24_groups_free(&in->d), used;
	struct probe pr;
	size_t k;

	CHECK(need <= free0, "test bug: pool too small (%u needed, %u free)",
	      need, free0);
	for (k = 0; k < n; k++) {
		__u32 first = r[k].start, nh = r[k].nh;
		__u32 last = k + 1 < n ? r[k + 1].start - 1 : span_last;
		__u32 need1 = dir24_groups_needed(&in->d, &r[k], 1, last);
		__u32 f1 = dir24_groups_free(&in->d);

		if (check)
			probe_take(&pr, in, first, last);
		write_ok(in, first, last, nh);
		CHECK(f1 - dir24_groups_free(&in->d) == need1,
		      "write took %u groups, groups_needed said %u",
		      f1 - dir24_groups_free(&in->d), need1);
		if (check)
			probe_check(&pr, in, first, last, nh);
	}
	used = free0 - dir24_groups_free(&in->d);
	CHECK(used == need,
	      "span of %zu ranges took %u groups, groups_needed said %u", n,
	      used, need);
	if (ss) {
		ss->spans++;
		ss->writes += n;
		ss->allocated += used;
		ss->needed += need;
	}
}

static void apply_span(struct inst *in, const struct vec *v, __u32 span_last,
		       bool check, struct span_stats *ss)
{
	apply_ranges(in, v->r, v->nr, span_last, check, ss);
}

/* Changes the set and writes the span of the changed prefix. */
static void update(struct inst *in, struct rset *rs, struct vec *v, __u32 start,
		   unsigned int len, long nh, bool check, struct span_stats *ss)
{
	__u32 last;

	if (nh < 0)
		rs_del(rs, start, len);
	else
		rs_set(rs, start, len, (__u32)nh);
	last = span_ranges(rs, start, len, v);
	apply_span(in, v, last, check, ss);
}

/* ---- table generator ----------------------------------------------------- */

/* A realistic IPv4 mix: /24 dominates, few longer, few /16 or shorter. */
static const struct len_band len_mix[] = {
	LEN_BAND(30, 8, 4),
	LEN_SPLIT(700, 16, 0, 12, 4),
	LEN_BAND(4100, 17, 7),
	LEN_BAND(9600, 24, 0),
	LEN_BAND(10000, 25, 8),
};

/*
 * A new prefix not in rs: spread % at random, the rest next to or inside
 * an existing prefix (nesting, runs of neighbours), often with its nexthop.
 */
static void gen_prefix(const struct rset *rs, unsigned int spread, __u32 *start,
		       unsigned int *plen, __u32 *nh)
{
	for (;;) {
		unsigned int len = rnd_len(len_mix);
		__u32 a;

		*nh = rnd_nh(2, 60);
		if (rnd_below(100) < spread || !rs->n) {
			a = addr_v4();
		} else {
			const struct rp *q = &rs->v[rnd_below(rs->n)];

			if (rnd_below(100) < 60)
				*nh = q->nh;
			if (rnd_below(2) && q->len < len) {
				a = q->start |
				    ((__u32)rnd() & host_mask(32, q->len));
			} else {
				__u32 step = host_mask(32, len) + 1;

				a = pfx_first(32, q->start, len);
				a = rnd_below(2) ? a + step : a - step;
			}
		}
		a = pfx_first(32, a, len);
		if (!rs_has(rs, a, len)) {
			*start = a;
			*plen = len;
			return;
		}
	}
}

static void gen_table(struct rset *rs, size_t n, unsigned int spread)
{
	while (rs->n < n) {
		unsigned int len;
		__u32 a, nh;

		gen_prefix(rs, spread, &a, &len, &nh);
		rs_append(rs, a, len, nh);
	}
	rs_sort(rs);
}

static void print_mix(const struct rset *rs)
{
	size_t le16 = 0, mid = 0, l24 = 0, gt24 = 0, i;

	for (i = 0; i < rs->n; i++) {
		unsigned int l = rs->v[i].len;

		if (l <= 16)
			le16++;
		else if (l < 24)
			mid++;
		else if (l == 24)
			l24++;
		else
			gt24++;
	}
	printf("    %zu prefixes: /24 %.1f%%, >/24 %.1f%%, <=/16 %.1f%%, /17-/23 %.1f%%\n",
	       rs->n, 100.0 * l24 / rs->n, 100.0 * gt24 / rs->n,
	       100.0 * le16 / rs->n, 100.0 * mid / rs->n);
}

/* ---- tests --------------------------------------------------------------- */

static void test_empty(struct inst *in)
{
	struct xfib_bs4_range none = { 0, XFIB_NH_IDX_NONE };

	cur_test = "empty";
	/* inst_init() filled the memory with garbage before dir24_init(). */
	check_full(in, &none, 1, "after init");
	CHECK(dir24_groups_used(&in->d) == 0 &&
		      dir24_groups_retired(&in->d) == 0 &&
		      dir24_groups_free(&in->d) == in->d.pool.ngroups,
	      "counters after init: %u used %u retired %u free",
	      dir24_groups_used(&in->d), dir24_groups_retired(&in->d),
	      dir24_groups_free(&in->d));
}

static void test_einval(void)
{
	struct xfib_bs4_range bad_first[] = { { 1, 2 } };
	struct xfib_bs4_range unsorted[] = { { 0, 2 }, { 50, 3 }, { 50, 4 } };
	struct xfib_bs4_range big_nh[] = { { 0, 2 }, { 7, XFIB_DIR24_EXT } };
	struct xfib_bs4_range two[] = {
		{ 0, 2 }, { 0x0a000080, 3 }, { 0x0a000100, 2 },
	};
	struct dir24 d;
	__u32 t8[GRP_N];
	__u32 *t24;
	int ret;

	cur_test = "einval";
	CHECK(dir24_init(&d, NULL, t8, 1) == -EINVAL, "init without tbl24");
	t24 = xmalloc((size_t)TBL24_N * 4);
	CHECK(dir24_init(&d, t24, NULL, 1) == -EINVAL, "init without tbl8");
	CHECK(dir24_init(&d, t24, t8, XFIB_DIR24_GROUPS_MAX + 1) == -EINVAL,
	      "init with too many groups");
	CHECK(dir24_init(&d, t24, NULL, 0) == 0, "init without a pool");
	ret = dir24_write_range(&d, 10, 9, 2);
	CHECK(ret == -EINVAL, "write of an empty range: %d", ret);
	ret = dir24_write_range(&d, 0, 9, XFIB_DIR24_EXT);
	CHECK(ret == -EINVAL, "write of nh 0x%x: %d", XFIB_DIR24_EXT, ret);
	CHECK(dir24_build(&d, bad_first, 1) == -EINVAL, "build from 1");
	CHECK(dir24_build(&d, bad_first, 0) == -EINVAL, "build of nothing");
	CHECK(dir24_build(&d, unsorted, 3) == -EINVAL, "build unsorted");
	CHECK(dir24_build(&d, big_nh, 2) == -EINVAL, "build with EXT nh");
	/* No pool: a cut into a /24 cannot be served, a whole /24 can. */
	ret = dir24_build(&d, two, 3);
	CHECK(ret == -ENOSPC, "build needing a group without a pool: %d", ret);
	ret = dir24_write_range(&d, 0x0a000080, 0x0a0000ff, 3);
	CHECK(ret == -ENOSPC, "cut without a pool: %d", ret);
	ret = dir24_write_range(&d, 0x0a000000, 0x0a0001ff, 3);
	CHECK(ret == 0 && t24[0x0a0000] == 3 && t24[0x0a0001] == 3,
	      "whole /24s without a pool: %d", ret);
	/* A cut with the value the /24 already has needs nothing. */
	ret = dir24_write_range(&d, 0x0a000080, 0x0a0000ff, 3);
	CHECK(ret == 0, "no-op cut without a pool: %d", ret);
	dir24_fini(&d);
	free(t24);
}

/* Hand-made updates with known group counts. */
static void test_basic(struct inst *in)
{
	struct dir24 *d = &in->d;
	__u32 x = ADDR(198, 18, 1, 0), y = ADDR(198, 18, 0, 0) >> 8, e, g;

	cur_test = "basic";
	write_ok(in, ADDR(198, 18, 0, 0), ADDR(198, 18, 255, 255), 2); /* /16 */
	CHECK(lookup(in, x) == 2 && lookup(in, ADDR(198, 17, 255, 255)) == 0 &&
		      lookup(in, ADDR(198, 19, 0, 0)) == 0 &&
		      dir24_groups_used(d) == 0,
	      "/16");
	write_ok(in, x + 128, x + 255, 3); /* /25 */
	e = entry(in, x >> 8);
	CHECK(XFIB_DIR24_IS_EXT(e) && dir24_groups_used(d) == 1 &&
		      lookup(in, x + 127) == 2 && lookup(in, x + 128) == 3 &&
		      lookup(in, x + 255) == 3 && lookup(in, x + 256) == 2,
	      "/25 in a /16: entry 0x%x, %u used", e, dir24_groups_used(d));
	g = XFIB_DIR24_GROUP(e);
	write_ok(in, x + 200, x + 200, 4); /* /32 inside: same group */
	CHECK(entry(in, x >> 8) == e && lookup(in, x + 200) == 4 &&
		      lookup(in, x + 199) == 3 && lookup(in, x + 201) == 3,
	      "/32 into a group");
	/* Replace the nexthop of the whole /24 range: tbl24, group retired. */
	write_ok(in, x, x + 255, 5);
	CHECK(entry(in, x >> 8) == 5 && dir24_groups_used(d) == 0 &&
		      dir24_groups_retired(d) == 1 && d->pool.retired[0] == g,
	      "/24 over a group: entry 0x%x, %u used, %u retired",
	      entry(in, x >> 8), dir24_groups_used(d), dir24_groups_retired(d));
	/* The retired group still answers for readers that hold it. */
	CHECK(group(in, g)[0] == 2 && group(in, g)[128] == 3 &&
		      group(in, g)[200] == 4,
	      "retired group was modified");
	dir24_reclaim(d);
	CHECK(dir24_groups_retired(d) == 0 &&
		      dir24_groups_free(d) == d->pool.ngroups,
	      "reclaim");
	/* A range over many /24s with both ends cutting: two groups. */
	write_ok(in, ADDR(198, 18, 10, 7), ADDR(198, 18, 20, 9), 6);
	CHECK(dir24_groups_used(d) == 2 && entry(in, y + 10) != 6 &&
		      entry(in, y + 11) == 6 && entry(in, y + 19) == 6 &&
		      lookup(in, ADDR(198, 18, 10, 6)) == 2 &&
		      lookup(in, ADDR(198, 18, 10, 7)) == 6 &&
		      lookup(in, ADDR(198, 18, 20, 9)) == 6 &&
		      lookup(in, ADDR(198, 18, 20, 10)) == 2,
	      "range over /24s");
	/* Undo: both groups collapse back to the /16's value. */
	write_ok(in, ADDR(198, 18, 10, 7), ADDR(198, 18, 20, 9), 2);
	CHECK(dir24_groups_used(d) == 0 && dir24_groups_retired(d) == 2 &&
		      entry(in, y + 10) == 2 && entry(in, y + 20) == 2,
	      "undo range over /24s");
	write_ok(in, ADDR(198, 18, 0, 0), ADDR(198, 18, 255, 255), 0);
	write_ok(in, x, x + 255, 0);
	dir24_reclaim(d);
	{
		struct xfib_bs4_range none = { 0, XFIB_NH_IDX_NONE };

		check_full(in, &none, 1, "basic undone");
	}
}

/* Every depth 1..32 on one chain, added in order, removed in reverse. */
static void test_depth(struct inst *in, struct inst *fresh)
{
	__u32 x = ADDR(198, 18, 0, 0) | ((__u32)rnd() & 0x1ffff);
	struct rset rs;
	struct vec v = { 0 };
	unsigned int len;

	cur_test = "depth";
	rs_init(&rs, 64);
	rs.sorted = true;
	for (len = 1; len <= 32; len++) {
		update(in, &rs, &v, pfx_first(32, x, len), len, 100 + len, true,
		       NULL);
		check_naive(in, &rs, 100, "depth add");
		/* Whole-table checks where the structure changes shape. */
		if (len <= 1 || len == 16 || len >= 23)
			check_against_build(in, fresh, &rs, &v, "depth add");
	}
	CHECK(dir24_groups_used(&in->d) == 1, "depth 32: %u groups used",
	      dir24_groups_used(&in->d));
	for (len = 32; len >= 1; len--) {
		update(in, &rs, &v, pfx_first(32, x, len), len, -1, true, NULL);
		check_naive(in, &rs, 100, "depth del");
		if (len <= 1 || len == 16 || len >= 23)
			check_against_build(in, fresh, &rs, &v, "depth del");
		if (len == 25)
			CHECK(dir24_groups_used(&in->d) == 0,
			      "depth 24: %u groups used",
			      dir24_groups_used(&in->d));
	}
	dir24_reclaim(&in->d);
	CHECK(rs.n == 0 && dir24_groups_used(&in->d) == 0,
	      "depth: not empty at the end");
	vec_free(&v);
	rs_free(&rs);
}

/* /0 first, last, and together with 255.255.255.255/32 and 0.0.0.0/32. */
static void test_default(struct inst *in, struct inst *fresh)
{
	static const struct {
		__u32 a;
		unsigned int len;
		long nh;
	} seq[][6] = {
		/* /0 first, then the all-ones /32, removed in both orders. */
		{ { 0, 0, 2 }, { ~0u, 32, 3 }, { ~0u, 32, -1 }, { 0, 0, -1 } },
		{ { 0, 0, 2 }, { ~0u, 32, 3 }, { 0, 0, -1 }, { ~0u, 32, -1 } },
		/* /0 last, added while the /32 exists, and replaced. */
		{ { ~0u, 32, 3 }, { 0, 0, 2 }, { 0, 0, 4 }, { 0, 0, -1 },
		  { ~0u, 32, -1 } },
		/* Both ends of the space. */
		{ { 0, 32, 5 }, { ~0u, 32, 3 }, { 0, 0, 2 }, { 0, 32, -1 },
		  { 0, 0, -1 }, { ~0u, 32, -1 } },
	};
	struct vec v = { 0 };
	struct rset rs;
	unsigned int s, i;
	char what[64];

	cur_test = "default";
	rs_init(&rs, 16);
	rs.sorted = true;
	for (s = 0; s < sizeof(seq) / sizeof(seq[0]); s++) {
		for (i = 0; i < 6 && (seq[s][i].nh || seq[s][i].len); i++) {
			update(in, &rs, &v, seq[s][i].a, seq[s][i].len,
			       seq[s][i].nh, true, NULL);
			snprintf(what, sizeof(what), "sequence %u step %u", s,
				 i);
			check_naive(in, &rs, 100, what);
			CHECK(lookup(in, ~0u) == rs_lpm(&rs, ~0u) &&
				      lookup(in, 0) == rs_lpm(&rs, 0),
			      "%s: ends of the space", what);
			check_against_build(in, fresh, &rs, &v, what);
		}
		CHECK(rs.n == 0, "test bug: sequence %u leaves prefixes", s);
		dir24_reclaim(&in->d);
	}
	vec_free(&v);
	rs_free(&rs);
}

/*
 * A /25 added to and removed from a /24 1000 times: a group each time,
 * collapsed each time, never reused before reclaim, no leak. Run with
 * the /24 holding a route and with it empty.
 */
static void test_flap(struct inst *in)
{
	struct dir24 *d = &in->d;
	__u32 base_nh, x = ADDR(198, 18, 7, 0), b = x >> 8;
	unsigned int i, k, ngroups = d->pool.ngroups;
	__u32 snap[GRP_N];

	cur_test = "flap";
	for (base_nh = 0; base_nh <= 5; base_nh += 5) {
		__u32 last_retired = ~0u;

		write_ok(in, x, x + 255, base_nh);
		dir24_reclaim(d);
		for (i = 0; i < 1000; i++) {
			__u32 e, g;

			write_ok(in, x + 128, x + 255, 6);
			e = entry(in, b);
			CHECK(XFIB_DIR24_IS_EXT(e) && dir24_groups_used(d) == 1,
			      "flap %u: add gave entry 0x%x, %u used", i, e,
			      dir24_groups_used(d));
			g = XFIB_DIR24_GROUP(e);
			/* Reclaimed every 10th round: until then, no reuse. */
			for (k = 0; k < d->pool.nretired; k++)
				CHECK(d->pool.retired[k] != g,
				      "flap %u: retired group %u reused before reclaim",
				      i, g);
			CHECK(lookup(in, x + 127) == base_nh &&
				      lookup(in, x + 128) == 6 &&
				      lookup(in, x - 1) == 0 &&
				      lookup(in, x + 256) == 0,
			      "flap %u: lookups after add", i);
			/* The last round's group, retired: untouched since. */
			CHECK(last_retired == ~0u ||
				      !memcmp(snap, group(in, last_retired),
					      sizeof(snap)),
			      "flap %u: retired group %u was modified", i,
			      last_retired);
			write_ok(in, x + 128, x + 255, base_nh);
			CHECK(entry(in, b) == base_nh &&
				      dir24_groups_used(d) == 0 &&
				      d->pool.retired[d->pool.nretired - 1] == g,
			      "flap %u: delete gave entry 0x%x, %u used", i,
			      entry(in, b), dir24_groups_used(d));
			/*
			 * Retired, not cleared: a reader that still holds
			 * the old entry reads the /24's value from it.
			 */
			for (k = 0; k < GRP_N; k++)
				CHECK(group(in, g)[k] == base_nh,
				      "flap %u: retired group %u entry %u is %u",
				      i, g, k, group(in, g)[k]);
			memcpy(snap, group(in, g), sizeof(snap));
			last_retired = g;
			if (i % 10 == 9) {
				CHECK(dir24_groups_retired(d) == 10,
				      "flap %u: %u retired", i,
				      dir24_groups_retired(d));
				dir24_reclaim(d);
				last_retired = ~0u;
			}
		}
		CHECK(dir24_groups_used(d) == 0 &&
			      dir24_groups_retired(d) == 0 &&
			      dir24_groups_free(d) == ngroups,
		      "flap: pool leaks: %u used, %u retired, %u free of %u",
		      dir24_groups_used(d), dir24_groups_retired(d),
		      dir24_groups_free(d), ngroups);
	}
	write_ok(in, x, x + 255, 0);
}

static bool tables_equal(const struct inst *in, const __u64 *t24,
			 const __u64 *t8)
{
	return !memcmp(in->t24, t24, XFIB_DIR24_TBL24_BYTES) &&
	       !memcmp(in->t8, t8, (size_t)in->d.pool.ngroups * GRP_N * 4);
}

/* A tiny pool runs dry: -ENOSPC, nothing written, retired groups stay out. */
static void test_exhaust(void)
{
	struct xfib_bs4_range two_cuts = { 0, 4 }, r3[3];
	__u32 x = ADDR(198, 18, 0, 0), i, e, g1, nf, nr;
	struct inst in;
	struct dir24 *d = &in.d;
	__u64 *s24, *s8;
	int ret;

	cur_test = "exhaust";
	inst_init(&in, 3);
	s24 = xmalloc(XFIB_DIR24_TBL24_BYTES);
	s8 = xmalloc(3 * GRP_N * 4);
#define SNAP()                                                            \
	do {                                                              \
		memcpy(s24, in.t24, XFIB_DIR24_TBL24_BYTES); \
		memcpy(s8, in.t8, 3 * GRP_N * 4);                         \
		nf = d->pool.nfree;                                            \
		nr = d->pool.nretired;                                         \
	} while (0)
#define UNCHANGED() \
	(tables_equal(&in, s24, s8) && d->pool.nfree == nf && d->pool.nretired == nr)

	write_ok(&in, x, x + 0xffff, 2); /* a /16 */
	for (i = 0; i < 3; i++)
		write_ok(&in, x + i * 256 + 128, x + i * 256 + 255, 3);
	CHECK(dir24_groups_used(d) == 3 && dir24_groups_free(d) == 0,
	      "3 cuts: %u used", dir24_groups_used(d));
	SNAP();

	/* One more cut into a plain /24. */
	ret = dir24_write_range(d, x + 3 * 256 + 128, x + 3 * 256 + 255, 3);
	CHECK(ret == -ENOSPC && UNCHANGED(),
	      "cut with an empty pool: %d, or tables changed", ret);
	/* Whole /24s in the middle, cuts at both ends: all or nothing. */
	two_cuts.start = x + 5 * 256 + 1;
	ret = dir24_write_range(d, two_cuts.start, x + 9 * 256 + 7, 4);
	CHECK(ret == -ENOSPC && UNCHANGED(),
	      "range with two cuts: %d, or tables changed", ret);
	CHECK(dir24_groups_needed(d, &two_cuts, 1, x + 9 * 256 + 7) == 2,
	      "groups_needed of a two-cut range");
	/* A build that does not fit leaves everything alone too. */
	r3[0] = (struct xfib_bs4_range){ 0, 2 };
	for (i = 1; i < 3; i++)
		r3[i] = (struct xfib_bs4_range){ x + i * 256 * 2 + i, 2 + i };
	ret = dir24_build(d, r3, 3);
	CHECK(ret == 0, "build needing 2 of 3 groups: %d", ret);
	write_ok(&in, 0, ~0u, 2);
	dir24_reclaim(d);
	write_ok(&in, x, x + 0xffff, 2);
	for (i = 0; i < 3; i++)
		write_ok(&in, x + i * 256 + 128, x + i * 256 + 255, 3);
	SNAP();
	{
		struct xfib_bs4_range r5[5] = {
			{ 0, 2 }, { 0x01000001, 3 }, { 0x02000001, 4 },
			{ 0x03000001, 5 }, { 0x04000001, 6 },
		};

		ret = dir24_build(d, r5, 5);
		CHECK(ret == -ENOSPC && UNCHANGED(),
		      "build needing 4 of 3 groups: %d, or tables changed",
		      ret);
	}

	/* What needs no group still works with an empty pool. */
	write_ok(&in, x + 10, x + 20, 5); /* into a group */
	write_ok(&in, x + 4 * 256, x + 6 * 256 - 1, 7); /* whole /24s */
	write_ok(&in, x + 3 * 256 + 1, x + 3 * 256 + 9, 2); /* no-op cut */
	CHECK(lookup(&in, x + 10) == 5 && lookup(&in, x + 9) == 2 &&
		      lookup(&in, x + 4 * 256) == 7 &&
		      lookup(&in, x + 6 * 256) == 2 &&
		      dir24_groups_free(d) == 0,
	      "writes that need no group");

	/* A collapse retires a group; it stays unavailable until reclaim. */
	e = entry(&in, (x >> 8) + 1);
	g1 = XFIB_DIR24_GROUP(e);
	write_ok(&in, x + 256 + 128, x + 256 + 255, 2);
	CHECK(entry(&in, (x >> 8) + 1) == 2 && dir24_groups_used(d) == 2 &&
		      dir24_groups_retired(d) == 1 && dir24_groups_free(d) == 0,
	      "collapse: entry 0x%x, %u used, %u retired",
	      entry(&in, (x >> 8) + 1), dir24_groups_used(d),
	      dir24_groups_retired(d));
	SNAP();
	ret = dir24_write_range(d, x + 3 * 256 + 128, x + 3 * 256 + 255, 3);
	CHECK(ret == -ENOSPC && UNCHANGED(),
	      "cut with only a retired group: %d, or tables changed", ret);
	dir24_reclaim(d);
	SNAP();
	/* One free group, a range that needs two: still nothing written. */
	ret = dir24_write_range(d, two_cuts.start, x + 9 * 256 + 7, 4);
	CHECK(ret == -ENOSPC && UNCHANGED(),
	      "two cuts with one group free: %d, or tables changed", ret);
	write_ok(&in, x + 3 * 256 + 128, x + 3 * 256 + 255, 3);
	CHECK(entry(&in, (x >> 8) + 3) == (XFIB_DIR24_EXT | g1),
	      "the reclaimed group was not the one handed out");
#undef SNAP
#undef UNCHANGED
	free(s24);
	free(s8);
	inst_fini(&in);
}

/*
 * dir24_groups_needed() against what sequences really take, on a model
 * of four /24s: random starting states (plain or split, from earlier
 * writes), random sorted sequences over random spans with few nexthops,
 * unmerged neighbours included, so that collapses and re-splits happen.
 * Single writes must take exactly what the bound says.
 */
static void test_needed(unsigned int rounds)
{
	__u32 base = ADDR(198, 18, 0, 0), model[4 * GRP_N];
	unsigned long long taken = 0, reserved = 0;
	struct xfib_bs4_range seq[8];
	unsigned int it, i, k;
	struct inst in;
	char buf[INET6_ADDRSTRLEN];

	cur_test = "groups_needed";
	inst_init(&in, 16);
	for (it = 0; it < rounds; it++) {
		__u32 f, l, need, free0, used, a;

		write_ok(&in, base, base + 4 * GRP_N - 1, 2);
		for (a = 0; a < 4 * GRP_N; a++)
			model[a] = 2;
		for (i = rnd_below(6); i > 0; i--) {
			f = rnd_below(4 * GRP_N);
			l = f + rnd_below(rnd_below(2) ? 16 : 4 * GRP_N - f);
			if (l >= 4 * GRP_N)
				l = 4 * GRP_N - 1;
			k = 2 + rnd_below(3);
			write_ok(&in, base + f, base + l, k);
			for (a = f; a <= l; a++)
				model[a] = k;
		}
		dir24_reclaim(&in.d);

		/* The span, and its cut points, often on /24 edges. */
		f = rnd_below(4 * GRP_N);
		if (rnd_below(3) == 0)
			f &= ~(GRP_N - 1);
		l = f + rnd_below(4 * GRP_N - f);
		if (rnd_below(3) == 0)
			l |= GRP_N - 1;
		seq[0] = (struct xfib_bs4_range){ base + f, 2 + rnd_below(3) };
		for (k = 1; k < 8 && rnd_below(4); k++) {
			__u32 p = seq[k - 1].start - base + 1 +
				  rnd_below(rnd_below(2) ? 8 : GRP_N);

			if (rnd_below(4) == 0)
				p = (p + GRP_N - 1) & ~(GRP_N - 1);
			if (p > l)
				break;
			seq[k] = (struct xfib_bs4_range){ base + p,
							  2 + rnd_below(3) };
		}
		need = dir24_groups_needed(&in.d, seq, k, base + l);
		free0 = dir24_groups_free(&in.d);
		for (i = 0; i < k; i++) {
			__u32 first = seq[i].start;
			__u32 last =
				i + 1 < k ? seq[i + 1].start - 1 : base + l;
			__u32 need1 =
				dir24_groups_needed(&in.d, &seq[i], 1, last);
			__u32 f1 = dir24_groups_free(&in.d);

			write_ok(&in, first, last, seq[i].nh);
			CHECK(f1 - dir24_groups_free(&in.d) == need1,
			      "round %u: a write took %u groups, groups_needed said %u",
			      it, f1 - dir24_groups_free(&in.d), need1);
			for (a = first - base; a <= last - base; a++)
				model[a] = seq[i].nh;
		}
		used = free0 - dir24_groups_free(&in.d);
		CHECK(used == need,
		      "round %u: %u ranges took %u groups, groups_needed said %u",
		      it, k, used, need);
		taken += used;
		reserved += need;
		for (a = 0; a < 4 * GRP_N; a++)
			CHECK(lookup(&in, base + a) == model[a],
			      "round %u: %s reads %u, expected %u", it,
			      fmt_addr(32, base + a, buf),
			      lookup(&in, base + a), model[a]);
		CHECK(lookup(&in, base - 1) == 0 &&
			      lookup(&in, base + 4 * GRP_N) == 0,
		      "round %u: outside the model", it);
		dir24_reclaim(&in.d);
	}
	printf("    %u sequences: %llu groups taken, %llu reserved\n", rounds,
	       taken, reserved);
	inst_fini(&in);
}

/* The realistic random table: build, check exhaustively and naively. */
static void test_random(struct inst *in, struct rset *rs, size_t n)
{
	struct vec v = { 0 };
	double t;
	int ret;

	cur_test = "random";
	gen_table(rs, n, 30);
	print_mix(rs);
	full_ranges(rs, &v);
	t = now();
	ret = dir24_build(&in->d, v.r, v.nr);
	t = now() - t;
	CHECK(ret == 0, "build of %zu ranges: %d", v.nr, ret);
	printf("    %zu ranges -> %u groups, built in %.0f ms\n", v.nr,
	       dir24_groups_used(&in->d), t * 1e3);
	t = now();
	check_full(in, v.r, v.nr, "random build");
	check_naive(in, rs, 1000000, "random build");
	printf("    checked every /24 and group, %zu prefix ends and 1M random addresses in %.1fs\n",
	       rs->n, now() - t);
	vec_free(&v);
}

/* Picks an existing prefix, sometimes a short, covering one. */
static const struct rp *pick(const struct rset *rs, bool short_one)
{
	const struct rp *p = &rs->v[rnd_below(rs->n)];
	int tries;

	for (tries = 0; short_one && tries < 200 && p->len > 16; tries++)
		p = &rs->v[rnd_below(rs->n)];
	return p;
}

/* Picks and applies one random change to rs; returns the prefix changed. */
static void random_change(struct rset *rs, __u32 *start, unsigned int *plen,
			  long *nh_out, unsigned int *nop)
{
	unsigned int op = rnd_below(100), len;
	const struct rp *p;
	__u32 a, nh;

	if (op < 40) { /* add */
		gen_prefix(rs, 30, &a, &len, &nh);
		*nh_out = nh;
		nop[0]++;
	} else if (op < 70) { /* delete */
		p = pick(rs, rnd_below(10) == 0);
		a = p->start;
		len = p->len;
		*nh_out = -1;
		nop[1]++;
	} else if (op < 95) { /* replace the nexthop */
		p = pick(rs, rnd_below(10) == 0);
		a = p->start;
		len = p->len;
		*nh_out = p->nh == 2 ? 3 : 2 + rnd_below(8);
		nop[2]++;
	} else { /* delete what is not there: no change */
		gen_prefix(rs, 30, &a, &len, &nh);
		*nh_out = -1;
		nop[3]++;
	}
	*start = a;
	*plen = len;
}

struct span {
	__u32 first, last;
};

static int span_cmp(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	return x->last > y->last ? -1 : x->last < y->last;
}

/*
 * A batch as the daemon applies it: change the set, compile it once,
 * merge the changed spans (overlapping, or cutting the same /24), reserve
 * for all of them, then write. The reservation must be exact.
 */
static void daemon_batch(struct inst *in, struct rset *rs, struct vec *v,
			 unsigned int changes, unsigned int *nop,
			 struct span_stats *ss)
{
	struct span *sp = xmalloc(changes * sizeof(*sp));
	struct xfib_bs4_range *cut;
	__u32 reserve = 0, free0;
	size_t ns = 0, i, m;

	for (i = 0; i < changes; i++) {
		unsigned int len;
		__u32 a;
		long nh;

		random_change(rs, &a, &len, &nh, nop);
		if (nh < 0)
			rs_del(rs, a, len);
		else
			rs_set(rs, a, len, (__u32)nh);
		sp[i] = (struct span){ a, pfx_last(32, a, len) };
	}
	qsort(sp, changes, sizeof(*sp), span_cmp);
	for (i = 1; i < changes; i++) {
		struct span *cur = &sp[ns];

		if (sp[i].first <= cur->last ||
		    sp[i].first >> 8 == cur->last >> 8) {
			if (sp[i].last > cur->last)
				cur->last = sp[i].last;
		} else {
			sp[++ns] = sp[i];
		}
	}
	ns++;
	full_ranges(rs, v);
	cut = xmalloc(v->nr * sizeof(*cut));
	for (i = 0; i < ns; i++) {
		m = cut_ranges(v->r, v->nr, sp[i].first, sp[i].last, cut);
		reserve += dir24_groups_needed(&in->d, cut, m, sp[i].last);
	}
	free0 = dir24_groups_free(&in->d);
	CHECK(reserve <= free0, "test bug: pool too small");
	for (i = 0; i < ns; i++) {
		m = cut_ranges(v->r, v->nr, sp[i].first, sp[i].last, cut);
		apply_ranges(in, cut, m, sp[i].last, i % 4 == 0, ss);
	}
	CHECK(free0 - dir24_groups_free(&in->d) == reserve,
	      "batch of %zu spans took %u groups, reserved %u", ns,
	      free0 - dir24_groups_free(&in->d), reserve);
	free(cut);
	free(sp);
}

/*
 * Random add/delete/replace batches on the big table. Odd batches apply
 * change by change (span of each prefix rewritten, every write checked),
 * even ones as the daemon does (daemon_batch()). After each batch and a
 * simulated grace period, the tables must equal a fresh build.
 */
static void test_incremental(struct inst *in, struct inst *fresh,
			     struct rset *rs, unsigned int batches,
			     unsigned int changes)
{
	struct span_stats ss = { 0 };
	unsigned int bt, c, nop[4] = { 0 };
	struct vec v = { 0 };
	char what[64];
	double t = now();

	cur_test = "incremental";
	for (bt = 0; bt < batches; bt++) {
		if (bt % 2 == 0) {
			daemon_batch(in, rs, &v, changes, nop, &ss);
		} else {
			for (c = 0; c < changes; c++) {
				__u32 a, f0 = dir24_groups_free(&in->d);
				__u32 r0 = dir24_groups_retired(&in->d);
				unsigned int len, noops = nop[3];
				long nh;

				random_change(rs, &a, &len, &nh, nop);
				update(in, rs, &v, a, len, nh, true, &ss);
				CHECK(nop[3] == noops ||
					      (dir24_groups_free(&in->d) ==
						       f0 &&
					       dir24_groups_retired(&in->d) ==
						       r0),
				      "rewriting unchanged ranges moved groups");
			}
		}
		/* The batch is out; readers have moved on: reclaim. */
		dir24_reclaim(&in->d);
		snprintf(what, sizeof(what), "after batch %u", bt);
		check_against_build(in, fresh, rs, &v, what);
	}
	check_naive(in, rs, 200000, "incremental");
	printf("    %u batches of %u changes (%u adds, %u deletes, %u replaces, %u no-ops): %llu spans, %llu writes, %llu groups taken, %llu reserved, %.1fs\n",
	       batches, changes, nop[0], nop[1], nop[2], nop[3], ss.spans,
	       ss.writes, ss.allocated, ss.needed, now() - t);
	vec_free(&v);
}

/*
 * One set inserted prefix by prefix in two different orders (and
 * emptied in between): the same tables as a build, and empty at the end.
 */
static void test_order(struct inst *in, struct inst *fresh, size_t n)
{
	struct xfib_bs4_range none = { 0, XFIB_NH_IDX_NONE };
	struct rset all, rs;
	struct vec v = { 0 };
	struct rp *ord;
	size_t i, j;
	int pass;

	cur_test = "order";
	rs_init(&all, n);
	/* Dense: mostly relatives of earlier prefixes, many overlaps. */
	gen_table(&all, n, 3);
	ord = xmalloc(n * sizeof(*ord));
	memcpy(ord, all.v, n * sizeof(*ord));
	for (i = n - 1; i > 0; i--) {
		struct rp tmp = ord[i];

		j = rnd_below(i + 1);
		ord[i] = ord[j];
		ord[j] = tmp;
	}
	rs_init(&rs, n);
	rs.sorted = true;
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < n; i++) {
			const struct rp *p = &ord[pass ? n - 1 - i : i];

			update(in, &rs, &v, p->start, p->len, p->nh,
			       i % 16 == 0, NULL);
		}
		dir24_reclaim(&in->d);
		check_against_build(in, fresh, &all, &v,
				    pass ? "inserted backwards" :
					   "inserted forwards");
		check_naive(in, &all, 10000, "inserted");
		for (i = 0; i < n; i++) {
			const struct rp *p = &ord[(i * 7919) % n];

			update(in, &rs, &v, p->start, p->len, -1, i % 16 == 0,
			       NULL);
		}
		dir24_reclaim(&in->d);
		check_full(in, &none, 1, "all deleted");
		CHECK(dir24_groups_free(&in->d) == in->d.pool.ngroups,
		      "all deleted: %u of %u groups free",
		      dir24_groups_free(&in->d), in->d.pool.ngroups);
	}
	printf("    %zu prefixes inserted forwards and backwards, deleted in between\n",
	       n);
	free(ord);
	vec_free(&v);
	rs_free(&rs);
	rs_free(&all);
}

/* ---- a reader during updates --------------------------------------------- */

/*
 * A few /24s, each with a route of its own (nexthop 100 + i) inside a
 * /16 with nexthop 7. The first half flap a /25, a /26 and a /32 in their
 * upper half; the others flap their own nexthop (to 500 + i), a /25, and
 * whole-/24 rewrites over their group. The reader checks every address
 * against what any state could give: the lower halves of the first half
 * and the /16 around never change, so they must never read anything else.
 * A group published before it is filled, or reused while a reader may
 * still be in it, shows up there as another /24's value or as 0.
 */
#define C_BLOCKS 8 /* few: the reader must often hit the /24 being written */
#define C_SPLIT (C_BLOCKS / 2)
#define C_POOL 24
#define C_BASE (ADDR(198, 18, 64, 0) >> 8)

struct conc {
	struct inst *in;
	int stop;
	unsigned long seq; /* reader progress: the writer's grace period */
	unsigned long long reads;
	int failed;
	__u32 bad_addr, bad_nh;
};

static bool conc_ok(__u32 a, __u32 nh)
{
	__u32 blk = (a >> 8) - C_BASE, low = a & 255;

	if ((a >> 8) < C_BASE || blk >= C_BLOCKS)
		return nh == 7;
	if (blk < C_SPLIT) {
		if (low < 128)
			return nh == 100 + blk;
		return nh == 100 + blk || nh == 200 + blk || nh == 300 + blk ||
		       nh == 400;
	}
	if (low < 128)
		return nh == 100 + blk || nh == 500 + blk;
	return nh == 100 + blk || nh == 500 + blk || nh == 600 + blk;
}

static void *conc_reader(void *arg)
{
	struct conc *c = arg;
	uint64_t st = seed ^ 0x5eed;
	unsigned int i;

	while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
		/* One read-side critical section: 64 lookups. */
		for (i = 0; i < 64; i++) {
			__u32 a, nh;

			st = st * 6364136223846793005ull +
			     1442695040888963407ull;
			a = (C_BASE - 1 + (__u32)((st >> 33) % (C_BLOCKS + 2)))
				    << 8 |
			    (__u32)(st >> 20 & 255);
			nh = xfib_dir24_lookup(c->in->t24, c->in->t8, a);
			if (!conc_ok(a, nh) &&
			    !__atomic_load_n(&c->failed, __ATOMIC_ACQUIRE)) {
				c->bad_addr = a;
				c->bad_nh = nh;
				__atomic_store_n(&c->failed, 1,
						 __ATOMIC_RELEASE);
			}
		}
		c->reads += 64;
		__atomic_fetch_add(&c->seq, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

/* Waits until every critical section running at the call has ended. */
static void conc_grace(struct conc *c)
{
	unsigned long s = __atomic_load_n(&c->seq, __ATOMIC_ACQUIRE);

	while (__atomic_load_n(&c->seq, __ATOMIC_ACQUIRE) < s + 2 &&
	       !__atomic_load_n(&c->failed, __ATOMIC_ACQUIRE))
		sched_yield();
}

static void test_concurrent(double seconds)
{
	static __u32 truth[C_BLOCKS][GRP_N];
	bool on[C_BLOCKS][3] = { { false } };
	struct inst in;
	struct conc c = { .in = &in };
	unsigned long long ops = 0, grace = 0;
	pthread_t th;
	double t0;
	char buf[INET6_ADDRSTRLEN];
	__u32 i, a;

	cur_test = "concurrent";
	inst_init(&in, C_POOL);
	write_ok(&in, ADDR(198, 18, 0, 0), ADDR(198, 18, 255, 255), 7);
	for (i = 0; i < C_BLOCKS; i++) {
		write_ok(&in, (C_BASE + i) << 8, (C_BASE + i) << 8 | 255,
			 100 + i);
		for (a = 0; a < GRP_N; a++)
			truth[i][a] = 100 + i;
	}
	CHECK(pthread_create(&th, NULL, conc_reader, &c) == 0,
	      "pthread_create");
	t0 = now();
	while (now() - t0 < seconds &&
	       !__atomic_load_n(&c.failed, __ATOMIC_ACQUIRE)) {
		__u32 blk = rnd_below(C_BLOCKS), op = rnd_below(3);
		__u32 base = (C_BASE + blk) << 8, lo, hi, s, need;
		struct xfib_bs4_range runs[GRP_N];
		size_t nr = 0;
		bool *f = on[blk];

		/* Flip one prefix; recompute its span; write the runs. */
		f[op] = !f[op];
		if (blk < C_SPLIT) {
			lo = op == 0 ? 128 : op == 1 ? 192 : 255;
			hi = 255;
			for (a = 128; a < GRP_N; a++)
				truth[blk][a] = a == 255 && f[2] ? 400 :
						a >= 192 && f[1] ? 300 + blk :
						f[0]		 ? 200 + blk :
								   100 + blk;
		} else {
			/* op 0: own nexthop; 1: the /25; 2: /24 rewrite dropping the /25. */
			if (op == 2) {
				f[2] = false;
				f[1] = false;
				f[0] = !f[0];
			}
			lo = op == 1 ? 128 : 0;
			hi = 255;
			for (a = 0; a < GRP_N; a++)
				truth[blk][a] = a >= 128 && f[1] ? 600 + blk :
						f[0]		 ? 500 + blk :
								   100 + blk;
		}
		for (a = lo; a <= hi; a++)
			if (!nr || truth[blk][a] != runs[nr - 1].nh)
				runs[nr++] = (struct xfib_bs4_range){
					base | a, truth[blk][a]
				};
		need = dir24_groups_needed(&in.d, runs, nr, base | hi);
		if (need > dir24_groups_free(&in.d)) {
			conc_grace(&c);
			dir24_reclaim(&in.d);
			grace++;
		}
		CHECK(need <= dir24_groups_free(&in.d),
		      "pool exhausted: %u used", dir24_groups_used(&in.d));
		for (s = 0; s < nr; s++)
			write_ok(&in, runs[s].start,
				 s + 1 < nr ? runs[s + 1].start - 1 : base | hi,
				 runs[s].nh);
		ops++;
	}
	__atomic_store_n(&c.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	CHECK(!c.failed, "reader saw nh %u at %s during an update", c.bad_nh,
	      fmt_addr(32, c.bad_addr, buf));
	CHECK(c.reads > 10000 && grace > 10,
	      "test bug: too little overlap (%llu reads, %llu grace periods)",
	      c.reads, grace);
	/* And the final state is exact. */
	for (i = 0; i < C_BLOCKS; i++)
		for (a = 0; a < GRP_N; a++)
			CHECK(lookup(&in, (C_BASE + i) << 8 | a) == truth[i][a],
			      "final state of %s",
			      fmt_addr(32, (C_BASE + i) << 8 | a, buf));
	printf("    %llu updates, %llu reclaims after a grace period, %llu concurrent lookups\n",
	       ops, grace, c.reads);
	inst_fini(&in);
}

/* ---- timing (informational) ---------------------------------------------- */

/* Writes a span as the daemon would: reserve, then write; returns seconds. */
static double timed_apply(struct inst *in, const struct vec *v, __u32 span_last)
{
	double t = now();
	size_t k;

	CHECK(dir24_groups_needed(&in->d, v->r, v->nr, span_last) <=
		      dir24_groups_free(&in->d),
	      "bench: pool too small");
	for (k = 0; k < v->nr; k++)
		write_ok(in, v->r[k].start,
			 k + 1 < v->nr ? v->r[k + 1].start - 1 : span_last,
			 v->r[k].nh);
	return now() - t;
}

struct tstat {
	const char *name;
	double sec;
	unsigned long long ops, writes;
};

static void tstat_print(const struct tstat *s)
{
	if (s->ops)
		printf("      %-28s %8.2f us  (%.1f writes per change, %llu changes)\n",
		       s->name, s->sec / s->ops * 1e6,
		       (double)s->writes / s->ops, s->ops);
}

/*
 * Writes one change (span computed untimed) and accounts its write time.
 * With apply the set changes too; otherwise the change is written as if
 * made (span_ranges_as()) and must be undone the same way, which spares
 * the sorted array a 12 MB move per change.
 */
static void timed_update(struct inst *in, struct rset *rs, struct vec *v,
			 __u32 start, unsigned int len, long nh, bool apply,
			 struct tstat *s)
{
	__u32 last;

	if (apply) {
		rs_set(rs, start, len, (__u32)nh);
		last = span_ranges(rs, start, len, v);
	} else {
		last = span_ranges_as(rs, start, len, nh, v);
	}
	s->sec += timed_apply(in, v, last);
	s->ops++;
	s->writes += v->nr;
}

static void bench(struct inst *in, struct inst *fresh, size_t n)
{
	struct tstat st[] = {
		{ .name = "add /24 (new)" },
		{ .name = "delete /24" },
		{ .name = "add /25-/32 (group)" },
		{ .name = "delete it (collapse)" },
		{ .name = "replace /24 nexthop" },
		{ .name = "replace /16 nexthop" },
		{ .name = "replace /8-/11 nexthop" },
	};
	struct vec v = { 0 };
	struct rset rs;
	double t;
	unsigned int i;
	int ret;

	cur_test = "bench";
	rs_init(&rs, n);
	gen_table(&rs, n, 30);
	print_mix(&rs);
	full_ranges(&rs, &v);
	t = now();
	ret = dir24_build(&in->d, v.r, v.nr);
	t = now() - t;
	CHECK(ret == 0, "build of %zu ranges: %d", v.nr, ret);
	printf("    dir24_build: %zu ranges in %.0f ms; %u groups (%.1f MiB tbl8) + 64 MiB tbl24 = %.1f bytes/prefix\n",
	       v.nr, t * 1e3, dir24_groups_used(&in->d),
	       dir24_groups_used(&in->d) / 1024.0,
	       (64.0 * 1048576 + dir24_groups_used(&in->d) * 1024.0) / n);

	for (i = 0; i < 300; i++) {
		const struct rp *p;
		__u32 a, nh;
		unsigned int len;

		/* A /24 that is not in the table, added and withdrawn. */
		do {
			a = pfx_first(32, addr_v4(), 24);
		} while (rs_has(&rs, a, 24));
		nh = rnd_nh(2, 60);
		timed_update(in, &rs, &v, a, 24, nh, false, &st[0]);
		timed_update(in, &rs, &v, a, 24, -1, false, &st[1]);

		/* A more-specific of an existing /24 that has no group. */
		do {
			p = pick(&rs, false);
		} while (p->len != 24 ||
			 XFIB_DIR24_IS_EXT(entry(in, p->start >> 8)));
		len = 25 + rnd_below(8);
		a = p->start | ((__u32)rnd() & 255);
		a = pfx_first(32, a, len);
		nh = p->nh + 1;
		if (!rs_has(&rs, a, len)) {
			timed_update(in, &rs, &v, a, len, nh, false, &st[2]);
			timed_update(in, &rs, &v, a, len, -1, false, &st[3]);
		}

		p = pick(&rs, false);
		while (p->len != 24)
			p = pick(&rs, false);
		a = p->start;
		timed_update(in, &rs, &v, a, 24, p->nh ^ 1, true, &st[4]);

		if (i % 3 == 0) {
			p = pick(&rs, true);
			if (p->len == 16)
				timed_update(in, &rs, &v, p->start, 16,
					     p->nh ^ 1, true, &st[5]);
		}
		if (i % 10 == 0) {
			unsigned int k;

			for (k = 0; k < 100000; k++) {
				p = &rs.v[rnd_below(rs.n)];
				if (p->len <= 11)
					break;
			}
			if (p->len <= 11)
				timed_update(in, &rs, &v, p->start, p->len,
					     p->nh ^ 1, true, &st[6]);
		}
	}
	dir24_reclaim(&in->d);
	printf("    single-prefix updates (write time, spans precomputed):\n");
	for (i = 0; i < sizeof(st) / sizeof(st[0]); i++)
		tstat_print(&st[i]);
	/* The updates must have been right, too. */
	check_against_build(in, fresh, &rs, &v, "bench updates");
	vec_free(&v);
	rs_free(&rs);
}

int main(int argc, char **argv)
{
	double t0 = now(), t;
	struct inst a, b;
	struct rset rs;

	testlib_start(argv[0], argc > 1 ? argv[1] : NULL);

	inst_init(&a, 64);
	inst_init(&b, 64);
	test_empty(&a);
	test_einval();
	test_basic(&a);
	printf("  basic cases ok (%.1fs)\n", now() - t0);
	t = now();
	test_depth(&a, &b);
	test_default(&a, &b);
	printf("  depths 0-32 and the ends of the space ok (%.1fs)\n",
	       now() - t);
	t = now();
	test_flap(&a);
	test_exhaust();
	test_needed(5000);
	inst_fini(&a);
	inst_fini(&b);
	printf("  flapping, exhaustion and reservations ok (%.1fs)\n",
	       now() - t);

	t = now();
	{
		/*
		 * The writer runs for a time, not a count: its own random
		 * stream keeps the rest of the run replayable from the seed.
		 */
		uint64_t saved = rng_state;

		rng_state = seed ^ 0xc0cc0cc0ull;
		test_concurrent(1.5);
		rng_state = saved;
	}
	printf("  concurrent reader ok (%.1fs)\n", now() - t);

	t = now();
	inst_init(&a, 16384);
	inst_init(&b, 16384);
	test_order(&a, &b, 20000);
	printf("  insertion order ok (%.1fs)\n", now() - t);

	t = now();
	rs_init(&rs, 250000);
	test_random(&a, &rs, 220000);
	test_incremental(&a, &b, &rs, 12, 300);
	rs_free(&rs);
	inst_fini(&a);
	inst_fini(&b);
	printf("  random table and incremental updates ok (%.1fs)\n",
	       now() - t);

	inst_init(&a, 65536);
	inst_init(&b, 65536);
	printf("  timing (informational; sanitizer builds are several times slower):\n");
	bench(&a, &b, 1000000);
	inst_fini(&a);
	inst_fini(&b);

	printf("test_dir24: ok: %llu writes, %llu whole-table checks, %llu lookups, %.1fs\n",
	       n_writes, n_full, n_lookups, now() - t0);
	return 0;
}
