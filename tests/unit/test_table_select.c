// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit test of a rules' table's lookup structure chosen by its scale
 * (include/xfib/tables.h): the choice xfibd makes at every build of a
 * table slot (fib_tables_choose(), ctl/xfibd/fib/fib_select.c, main's own
 * selection with its 5% hysteresis), and the slot's lookup the rule walk
 * runs (xfib_table_answer(), include/xfib/rule_walk.h) on what each
 * choice publishes.
 *
 * Per family, a table of random prefixes (a full table's length mix)
 * grows a few prefixes at a time from nothing past the crossing point and
 * shrinks back. After every step:
 *  - the choice given the algorithm serving: a switch only to one whose
 *    preference beats the serving one's by more than 5%, and no switch
 *    while none does; the table must go large on the way up and back to
 *    the ranges on the way down, and the way down must switch at fewer
 *    prefixes than the way up (the hysteresis' gap);
 *  - the chosen structure built as xfibd builds it (the ranges of the
 *    slot's tree with their prefix lengths in a pool, padded to a power
 *    of two; an instance: dir24_8 / trie6 from the tree's range list) and
 *    published by a descriptor; at the steps around each switch and every
 *    16th step besides, lookups through the slot on random
 *    addresses and on the first and last address of random prefixes
 *    answer as a naive longest-prefix match does: the nexthop, and the
 *    prefix's length for the ranges (an instance keeps none, and says
 *    so).
 *
 * Usage: unit_test_table_select [seed].
 */
#include <errno.h>

#define TESTLIB_SEED 0x7ab1e5e1ec7000d5ull
#include "testlib.h"
#include "rib/ptree.h"
#include "fib/fib_algo.h"
#include "fib/fib_ranges.h"
#include "fib/dir24.h"
#include "fib/trie6.h"
#include "algo_names.h"

typedef __u64 __attribute__((may_alias)) u64_alias;

/* As the program reads dir24_8 and trie6 tables: __u64 values of two
 * entries. */
static inline __u32 u32_at(const void *t, __u32 i)
{
	__u64 v = ((const u64_alias *)t)[i >> 1];

	return (__u32)(v >> ((i & 1) * 32));
}

#define XFIB_U32_AT(t, i) u32_at((t), (i))
#include "xfib/lookup_dir24.h"
#include "xfib/lookup_trie6.h"

#define SLOT 1
#define POOL_LOG2 16
#define POOL_SIZE (1u << POOL_LOG2)

/* What packets read: descriptors, the pools, the instance's tables. */
struct xfib_env {
	__u64 desc[XFIB_FAMILIES * XFIB_TABLE_SLOTS];
	struct xfib_tr4 pool4[POOL_SIZE];
	struct xfib_tr6 pool6[POOL_SIZE];
	__u32 *t24[XFIB_INST_SLOTS];
	__u32 *t8[XFIB_INST_SLOTS];
};

static __u64 xfib_env_table(struct xfib_env *env, __u32 fam, __u32 slot)
{
	return env->desc[(fam * XFIB_TABLE_SLOTS + slot) %
			 (XFIB_FAMILIES * XFIB_TABLE_SLOTS)];
}

static const struct xfib_tr4 *xfib_env_tr4(struct xfib_env *env, __u32 idx)
{
	return idx < POOL_SIZE ? &env->pool4[idx] : NULL;
}

static const struct xfib_tr6 *xfib_env_tr6(struct xfib_env *env, __u32 idx)
{
	return idx < POOL_SIZE ? &env->pool6[idx] : NULL;
}

static const struct xfib_nexthop *xfib_env_nexthop(struct xfib_env *env,
						   __u32 idx)
{
	return NULL;
}

/* No rule here suppresses by device group. */
static const struct xfib_nh_group *xfib_env_group(struct xfib_env *env,
						   __u32 idx)
{
	return NULL;
}

static const struct xfib_iface *xfib_env_iface(struct xfib_env *env,
					       __u32 ifindex)
{
	return NULL;
}

#include "xfib/rule_walk.h"

static int xfib_env_rule_ifgroup(struct xfib_env *env, __u32 fam, __u32 group,
				 __u32 nh_idx, __u32 flow_hash, __u32 *hashed)
{
	return xfib_rule_ifgroup(env, fam, group, nh_idx, flow_hash, hashed);
}

static __u32 xfib_env_rule_run(struct xfib_env *env,
			      const struct xfib_rule_set *set,
			      const struct xfib_rule *x,
			      const struct xfib_rflow *f)
{
	return ~0u;
}

static __u32 xfib_env_table_answer(struct xfib_env *env, __u32 fam,
				   __u32 slot, const struct xfib_rflow *f,
				   __u32 *ans)
{
	return xfib_table_answer(env, fam, slot, f, ans);
}

static __u32 xfib_env_table_inst(struct xfib_env *env, __u32 fam, __u32 inst,
				 const struct xfib_rflow *f)
{
	__u8 daddr[16];
	int i;

	if (inst >= XFIB_INST_SLOTS || !env->t24[inst])
		return ~0u;
	if (fam == XFIB_V4)
		return xfib_dir24_lookup(env->t24[inst], env->t8[inst],
					 (__u32)f->dst_lo);
	for (i = 0; i < 8; i++) {
		daddr[i] = f->dst_hi >> (56 - 8 * i);
		daddr[8 + i] = f->dst_lo >> (56 - 8 * i);
	}
	return xfib_trie6_lookup(env->t24[inst], env->t8[inst], daddr);
}

static struct xfib_env *env;

/* ---- the table and its reference ------------------------------------------ */

struct table {
	int fam;
	unsigned int bits;
	struct ptree tree;
	struct npfx *v; /* the same prefixes, for naive_lpm() */
	size_t n, cap;
	unsigned int algo;   /* serving: enum xfib_algo, NONE at first */
	__u32 nranges;       /* of the ranges serving */
	__u32 inst;          /* the instance's map-in-map slot */
	bool stale;          /* the instance is not built yet */
	struct dir24 dir;
	struct trie6 trie;
};

static void table_add(struct table *t)
{
	unsigned int len = t->fam == XFIB_V4 ? len_v4() : len_v6();
	u128 a = pfx_first(t->bits, t->fam == XFIB_V4 ? addr_v4() : addr_v6(), len);
	__u8 b[16];
	__u32 old;

	to_bytes(t->bits, a, b);
	if (!ptree_get(&t->tree, b, len, &old))
		return; /* there already */
	CHECK(ptree_set(&t->tree, b, len, 2 + rnd_below(1000)) >= 0, "ptree_set");
	CHECK(!ptree_get(&t->tree, b, len, &old), "ptree_get after set");
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 256;
		t->v = xrealloc(t->v, t->cap * sizeof(*t->v));
	}
	t->v[t->n++] = (struct npfx){ a, pfx_last(t->bits, a, len), old, len };
}

static void table_del(struct table *t)
{
	size_t i = rnd_below(t->n);
	__u8 b[16];

	to_bytes(t->bits, t->v[i].first, b);
	CHECK(!ptree_del(&t->tree, b, t->v[i].plen), "ptree_del");
	t->v[i] = t->v[--t->n];
}

/* The longest match's nexthop and length (-1: none). */
static __u32 ref_lookup(const struct table *t, u128 a, int *plen)
{
	__u32 nh = naive_lpm(t->v, t->n, a, XFIB_NH_IDX_NONE);
	size_t i;

	*plen = -1;
	for (i = 0; i < t->n; i++)
		if (t->v[i].plen > *plen && a >= t->v[i].first && a <= t->v[i].last)
			*plen = t->v[i].plen;
	return nh;
}

/* ---- publishing, as fib_tables.c does ---------------------------------------- */

struct emit_buf {
	struct table *t;
	__u32 n;
};

static int pool_emit(void *ctx, xfib_u128 first, xfib_u128 last, __u32 v)
{
	struct emit_buf *b = ctx;

	CHECK(b->n < POOL_SIZE, "more ranges than the test's pool");
	if (b->t->fam == XFIB_V4) {
		env->pool4[b->n] = (struct xfib_tr4){ (__u32)first, v };
	} else {
		env->pool6[b->n] = (struct xfib_tr6){
			(__u64)(first >> 64), (__u64)first, v & 0xffffff, v >> 24,
			{ 0 } };
	}
	b->n++;
	return 0;
}

static void desc_set(int fam, struct xfib_table_desc d)
{
	memcpy(&env->desc[fam * XFIB_TABLE_SLOTS + SLOT], &d, sizeof(d));
}

static void inst_free(struct table *t)
{
	if (!env->t24[t->inst])
		return;
	if (t->fam == XFIB_V4)
		dir24_fini(&t->dir);
	else
		trie6_fini(&t->trie);
	free(env->t24[t->inst]);
	free(env->t8[t->inst]);
	env->t24[t->inst] = env->t8[t->inst] = NULL;
}

static void publish_ranges(struct table *t)
{
	static const __u8 zero[16];
	struct emit_buf b = { t, 0 };
	__u32 i, log2n = 0;

	CHECK(!ptree_walk_span_plen(&t->tree, zero, 0, XFIB_NH_IDX_NONE,
				    pool_emit, &b), "walking the tree");
	while ((1u << log2n) < b.n)
		log2n++;
	for (i = b.n; i < (1u << log2n); i++) {
		if (t->fam == XFIB_V4)
			env->pool4[i] = env->pool4[b.n - 1];
		else
			env->pool6[i] = env->pool6[b.n - 1];
	}
	t->nranges = b.n;
	desc_set(t->fam, (struct xfib_table_desc){ .off = 0,
		 .state = XFIB_TABLE_READY, .log2n = log2n });
	inst_free(t);
}

/* A fresh instance in the standby slot, from the tree's range list (the
 * builders and fib_tree_full_ranges() xfibd uses). */
static void publish_instance(struct table *t)
{
	__u32 next = XFIB_TABLE_INST_SLOT(SLOT, env->t24[t->inst] ? !(t->inst & 1) : 0);
	struct fib_range *r = NULL;
	size_t n = 0, cap = 0, groups;
	void *scratch;
	int err;

	CHECK(!fib_tree_full_ranges(&t->tree, &r, &n, &cap), "the tree's ranges");
	/* Room for every level a range can cut. */
	groups = (t->fam == XFIB_V4 ? 1 : XFIB_TRIE6_MAX_LEVELS) * n + 16;
	env->t24[next] = calloc(1, XFIB_DIR24_TBL24_BYTES);
	env->t8[next] = calloc(groups, 256 * sizeof(__u32));
	CHECK(env->t24[next] && env->t8[next], "instance memory");
	inst_free(t);
	t->inst = next;
	if (t->fam == XFIB_V4) {
		scratch = xmalloc(n * sizeof(struct xfib_bs4_range));
		fib_to_bs4(r, n, scratch);
		err = dir24_init_zeroed(&t->dir, env->t24[next], env->t8[next], groups) ?:
		      dir24_build(&t->dir, scratch, n);
	} else {
		scratch = xmalloc(n * sizeof(struct xfib_bs6_range));
		fib_to_bs6(r, n, scratch);
		err = trie6_init_zeroed(&t->trie, env->t24[next], env->t8[next], groups) ?:
		      trie6_build(&t->trie, scratch, n);
	}
	CHECK(!err, "building %s: %d", xfib_algo_name(t->algo), err);
	free(scratch);
	free(r);
	desc_set(t->fam, (struct xfib_table_desc){ .off = next,
		 .state = XFIB_TABLE_INSTANCE, .algo = t->algo });
}

/* ---- the checks -------------------------------------------------------------- */

static void check_one(const struct table *t, u128 a)
{
	struct xfib_rflow f = { 0 };
	__u32 ans = 0, want;
	int plen;
	char buf[64];

	if (t->fam == XFIB_V4) {
		f.dst_lo = (__u64)a;
	} else {
		f.dst_hi = (__u64)(a >> 64);
		f.dst_lo = (__u64)a;
	}
	want = ref_lookup(t, a, &plen);
	CHECK(xfib_table_answer(env, t->fam, SLOT, &f, &ans) == XFIB_NEXT,
	      "%s: %s: the slot is not answered in XDP", xfib_algo_name(t->algo),
	      fmt_addr(t->bits, a, buf));
	CHECK(XFIB_TR4_NH(ans) == want, "%s, %zu prefixes: %s: nexthop %u, want %u",
	      xfib_algo_name(t->algo), t->n, fmt_addr(t->bits, a, buf),
	      XFIB_TR4_NH(ans), want);
	if (t->algo == XFIB_ALGO_DIR24_8 || t->algo == XFIB_ALGO_TRIE6)
		CHECK(XFIB_TR4_PLEN(ans) == XFIB_TABLE_PLEN_UNKNOWN,
		      "an instance's answer claims a prefix length, %u",
		      XFIB_TR4_PLEN(ans));
	else
		CHECK((int)XFIB_TR4_PLEN(ans) == (plen < 0 ? 0 : plen),
		      "%s: %s: prefix length %u, want %d", xfib_algo_name(t->algo),
		      fmt_addr(t->bits, a, buf), XFIB_TR4_PLEN(ans), plen);
}

static unsigned long long n_checked;

static void check_lookups(struct table *t)
{
	size_t i, k;

	if (t->stale)
		publish_instance(t);
	t->stale = false;

	for (i = 0; i < 300; i++)
		check_one(t, rnd_addr(t->bits));
	for (i = 0; i < 100 && t->n; i++) {
		k = rnd_below(t->n);
		check_one(t, t->v[k].first);
		check_one(t, t->v[k].last);
		if (t->v[k].last < last_addr(t->bits))
			check_one(t, t->v[k].last + 1);
	}
	n_checked++;
}

static bool large(unsigned int algo)
{
	return algo == XFIB_ALGO_DIR24_8 || algo == XFIB_ALGO_TRIE6;
}

/*
 * One build of the slot after a change: the choice, checked against the
 * preferences it reports, then the chosen structure published. Returns
 * whether the algorithm changed.
 */
static bool step(struct table *t)
{
	unsigned int pref[XFIB_ALGO_COUNT] = { 0 }, want, other;
	struct fib_scale s = { .prefixes = t->n };
	unsigned int small = t->fam == XFIB_V4 ? XFIB_ALGO_BSEARCH4 : XFIB_ALGO_BSEARCH6;
	unsigned int big = t->fam == XFIB_V4 ? XFIB_ALGO_DIR24_8 : XFIB_ALGO_TRIE6;
	bool switched;

	if (t->algo == small)
		s.ranges = t->nranges;
	want = fib_tables_choose(t->fam, &s, t->algo, pref);
	CHECK(want == small || want == big, "%zu prefixes: chose %s",
	      t->n, xfib_algo_name(want));
	CHECK(pref[small] && pref[big], "%zu prefixes: preferences %u, %u",
	      t->n, pref[small], pref[big]);
	if (t->algo == XFIB_ALGO_NONE) {
		CHECK(pref[want] >= pref[want == small ? big : small],
		      "a first choice not the best");
	} else if (want != t->algo) {
		CHECK(pref[want] * 100 > pref[t->algo] * 105,
		      "%zu prefixes: %s -> %s at preferences %u -> %u, within 5%%",
		      t->n, xfib_algo_name(t->algo), xfib_algo_name(want),
		      pref[t->algo], pref[want]);
	} else {
		other = want == small ? big : small;
		CHECK(pref[other] * 100 <= pref[want] * 105,
		      "%zu prefixes: kept %s at %u where %s prefers %u, more than 5%% better",
		      t->n, xfib_algo_name(want), pref[want],
		      xfib_algo_name(other), pref[other]);
	}
	switched = t->algo != XFIB_ALGO_NONE && want != t->algo;
	t->algo = want;
	/* An instance is built only for the lookups that read it (a 64
	 * MiB table per step is what makes this test slow); the ranges
	 * every time, for the size the next choice reads. */
	t->stale = large(want);
	if (!large(want))
		publish_ranges(t);
	return switched;
}

/* Grows the table from nothing to grow_to prefixes and shrinks it to
 * shrink_to, a few prefixes at a time. */
static void run(int fam, size_t grow_to, size_t shrink_to)
{
	struct table t = { .fam = fam, .bits = fam == XFIB_V4 ? 32 : 128 };
	size_t up = 0, down = 0, i, k;
	unsigned int steps = 0;
	bool sw;

	cur_test = fam == XFIB_V4 ? "ipv4" : "ipv6";
	CHECK(!ptree_init(&t.tree, t.bits), "ptree_init");
	while (t.n < grow_to) {
		k = 1 + rnd_below(40);
		for (i = 0; i < k; i++)
			table_add(&t);
		if (t.n > grow_to)
			continue;
		sw = step(&t);
		if (sw) {
			CHECK(large(t.algo) && !up, "%zu prefixes, growing: switched to %s",
			      t.n, xfib_algo_name(t.algo));
			up = t.n;
			printf("%s: %zu prefixes: switched up to %s\n", cur_test,
			       t.n, xfib_algo_name(t.algo));
		}
		/* Around the switch every step, elsewhere every 16th. */
		if (sw || !(steps++ % 16) || (up && t.n < up + 60))
			check_lookups(&t);
	}
	CHECK(up && large(t.algo), "%zu prefixes and still %s", t.n,
	      xfib_algo_name(t.algo));
	check_lookups(&t);
	while (t.n > shrink_to) {
		k = 1 + rnd_below(40);
		for (i = 0; i < k && t.n > 1; i++)
			table_del(&t);
		sw = step(&t);
		if (sw) {
			CHECK(!large(t.algo) && !down, "%zu prefixes, shrinking: switched to %s",
			      t.n, xfib_algo_name(t.algo));
			down = t.n;
			printf("%s: %zu prefixes: switched down to %s\n", cur_test,
			       t.n, xfib_algo_name(t.algo));
		}
		if (sw || !(steps++ % 16) || (down && t.n + 60 > down))
			check_lookups(&t);
	}
	CHECK(down && !large(t.algo), "%zu prefixes and still %s", t.n,
	      xfib_algo_name(t.algo));
	/* The hysteresis' gap: where both switched, the 5% on either side
	 * of the crossing point. */
	CHECK(down < up, "switched down at %zu prefixes, up at %zu", down, up);
	printf("%s: up at %zu, down at %zu prefixes; %llu lookup checks\n",
	       cur_test, up, down, n_checked);
	inst_free(&t);
	ptree_fini(&t.tree);
	free(t.v);
}

int main(int argc, char **argv)
{
	testlib_start(argv[0], argc > 1 ? argv[1] : NULL);
	env = calloc(1, sizeof(*env));
	CHECK(env, "memory");
	run(XFIB_V4, 1800, 500);
	run(XFIB_V6, 1800, 500);
	/* A descriptor that names another family's algorithm, or a slot
	 * outside the tables', is the kernel's, never a lookup. */
	cur_test = "descriptors";
	desc_set(XFIB_V4, (struct xfib_table_desc){ .off = XFIB_TABLE_INST_SLOT(SLOT, 0),
		 .state = XFIB_TABLE_INSTANCE, .algo = XFIB_ALGO_TRIE6 });
	{
		struct xfib_rflow f = { 0 };
		__u32 ans;

		CHECK(xfib_table_answer(env, XFIB_V4, SLOT, &f, &ans) == XFIB_PASS_RULE,
		      "an IPv4 slot naming trie6 answered");
		desc_set(XFIB_V4, (struct xfib_table_desc){ .off = 0,
			 .state = XFIB_TABLE_INSTANCE, .algo = XFIB_ALGO_DIR24_8 });
		CHECK(xfib_table_answer(env, XFIB_V4, SLOT, &f, &ans) == XFIB_PASS_RULE,
		      "an instance in main's map-in-map slot answered");
	}
	free(env);
	printf("PASS\n");
	return 0;
}
