// SPDX-License-Identifier: GPL-2.0-only
/*
 * lookup: the lookup half of the dataplane, alone, for the lookup
 * benchmark (tests/bench/lookupbench.c, tests/bench/lookup.sh).
 *
 * Each program is run with BPF_PROG_TEST_RUN and a repeat count. One run
 * reads the family's xfib_active word once, as bpf/xfib_fwd.bpf.c does
 * per packet, fetches the instance's tables the same way, then looks up
 * LOOKUPS_PER_RUN destinations from keys4/keys6, continuing where the
 * previous run stopped and wrapping at key_mask. The loader sets the pin
 * root to the router's pin directory, so the maps are the live, pinned
 * ones the daemon maintains and the forwarder reads.
 *
 * The dataplane's source is included rather than copied: the table
 * accessors (xfib_u32_at, XFIB_TBL_AT) and the lookup headers are then
 * exactly those the forwarder is built with, and cannot drift. Its
 * xfib_fwd program comes along; the loader does not load it.
 *
 * One program per algorithm, so that each loop is the straight-line code
 * the forwarder runs for that algorithm. A program finding another
 * algorithm published (the daemon switched meanwhile) counts it in
 * mismatches and does nothing: the loader picks the program from the same
 * word, and retries.
 */
#include "xfib_fwd.bpf.c"

/* Lookups per run: enough to make the per-run cost (program entry, the
 * active word, the slot lookups) a small share of the time measured. */
#define LOOKUPS_PER_RUN 256
/* Capacity of the key arrays: a power of two, for the wrap-around mask. */
#define KEYS_MAX 65536

/* Read by the loader: it divides the reported run time by it. */
const volatile __u32 lookups_per_run = LOOKUPS_PER_RUN;

/* Destinations, in network order as they sit in a packet. */
__u32 keys4[KEYS_MAX];
/* 8-byte aligned: bsearch6 loads each half as one __u64, as the forwarder
 * does from the packet. */
__u8 keys6[KEYS_MAX][16] __attribute__((aligned(8)));

/* Written by the loader: keys in use - 1 (a power of two - 1) and where
 * the next run starts. */
__u32 key_mask;
__u32 pos;
__u64 acc;	  /* sum of the nexthop indexes found: the work is used */
__u64 mismatches; /* runs that found another algorithm published */

/* The family's published instance, read once per run. */
static __always_inline int active(__u32 fam, __u32 algo,
				  struct xfib_active *act)
{
	__u64 *actp = bpf_map_lookup_elem(&xfib_active, &fam);

	if (!actp)
		return -1;
	*(__u64 *)act = *(volatile __u64 *)actp;
	if (act->algo != algo) {
		mismatches++;
		return -1;
	}
	return 0;
}

/*
 * Verifying a plain loop of LOOKUPS_PER_RUN lookups walks every
 * iteration, and the branches of bsearch then exceed the verifier's limit
 * on jumps in one path. bpf_loop() is verified once and the verifier
 * inlines it into a loop of direct calls; each call does LOOKUPS_PER_CALL
 * lookups in a row, so the call costs a small share of a lookup.
 *
 * The lookups of a call are a global function (NAME_lookups), not code
 * inlined into the bpf_loop callback. A callback is verified as the body
 * of a loop, and recent verifiers compare the states inside a loop
 * exactly: the constants bsearch's position takes along each path of its
 * steps (0 or 1 << i at each) then never prune each other, and
 * lookup_bsearch4, bsearch6, dxr and trie6 stopped at the verifier's
 * 1,000,000 instructions. A global function is verified once, alone,
 * with unknown arguments and no loop around it, as the forwarder's single
 * lookup is, and every call site of it costs the verifier one
 * instruction. Its arguments are scalars (and ctx), its results a return
 * value and the globals below, which a global function may use.
 */
#define LOOKUPS_PER_CALL 16
_Static_assert(LOOKUPS_PER_RUN % LOOKUPS_PER_CALL == 0, "whole calls per run");

/*
 * Two modes per algorithm and baseline, over the same keys:
 *
 *  - throughput (lookup_X): the keys are read in order, each lookup
 *    independent of the others, so the CPU overlaps the cache misses of
 *    several lookups: lookups per second of a batch;
 *  - latency (lookup_X_lat): the index of each key is offset by the
 *    previous lookup's result masked with dep_mask, so the next lookup
 *    cannot start before the previous one has returned, as in a packet's
 *    serial work: the time of one lookup, misses included.
 *
 * dep_mask is zero (the loader never writes it), so the keys, and the
 * nexthop sums, are those of throughput mode; the compiler and the CPU
 * cannot know it, so the dependency is real.
 *
 * Each result goes through lat_link, a store and a load (a few cycles,
 * the same in lookupbench's native loop): the verifier then sees an
 * unknown value, not one it tracks per branch of the lookup into the
 * next key's index.
 */
__u32 dep_mask;
__u64 lat_link;
/* The last result of a latency run: the chain goes on across calls and
 * runs. */
__u64 lat_prev;

/* One run's state, on the program's stack, handed to each call. */
struct run {
	struct xdp_md *ctx; /* bpf_fib_lookup() needs it */
	__u64 sum;
	__u32 pos;
};

/* The run's instance, from its xfib_active word: written by the program
 * before its calls, read by the global functions (as globals, not
 * arguments: clang leaves an argument unset where the callee ignores it,
 * and the verifier refuses an unset scalar argument). */
__u8 run_slot;
__u8 run_log2n;

/*
 * The keys of one call, from index first on, in order, written out:
 * clang unrolls a loop of 16 heavy lookups only partly, and the loop left
 * would be a loop for the verifier again. EACH_KEY(S, L) is
 * S(L, 0)..S(L, 15).
 * The index is masked with kmask: the loader's mask, bounded by the
 * array's size so that the verifier sees every index in range, one AND
 * per key as in lookupbench's native loop.
 */
#define KEYS_2(S, L, j) S(L, j) S(L, j + 1)
#define KEYS_4(S, L, j) KEYS_2(S, L, j) KEYS_2(S, L, j + 2)
#define KEYS_8(S, L, j) KEYS_4(S, L, j) KEYS_4(S, L, j + 4)
#define EACH_KEY(S, L) KEYS_8(S, L, 0) KEYS_8(S, L, 8)
_Static_assert(LOOKUPS_PER_CALL == 16, "EACH_KEY writes out 16 keys");
#define KEY_IDX(k) ((k) & kmask)

/* The instance's tables, fetched once per call. A slot emptied under a
 * stale word (the run's set-up found it) is counted as a mismatch. */
#define T24_OF(outer)                                                   \
	void *t24 = (void *)tbl24_of(outer, run_slot);                  \
	if (!t24) {                                                     \
		mismatches++;                                           \
		return 0;                                               \
	}
#define NO_T24
#define T24_DIR24 T24_OF(&xfib_dir24_tbl24)
#define T24_TRIE6 T24_OF(&xfib_trie6_tbl24)

/*
 * The locals every LOOKUP expression may use. ctx is checked (the
 * verifier knows it is never NULL) so that it is used: clang leaves an
 * argument the callee ignores unset, and the verifier refuses a global
 * function's ctx argument that is not the context.
 */
#define CALL_LOCALS                                                     \
	if (!ctx)                                                       \
		return 0;                                               \
	__u32 slot __attribute__((unused)) = run_slot;                  \
	struct xfib_pool t8_dir24 __attribute__((unused)) =            \
		XFIB_POOL(&xfib_dir24_tbl8, slot);                     \
	struct xfib_pool t8_trie6 __attribute__((unused)) =            \
		XFIB_POOL(&xfib_trie6_tbl8, slot);                     \
	__u32 kmask = key_mask & (KEYS_MAX - 1);                        \
	__u64 sum = 0

/* Key j of a call, looked up with LOOKUP, in each mode. */
#define TPUT_KEY(LOOKUP, j) sum += LOOKUP(KEY_IDX(first + (j)));
#define LAT_KEY(LOOKUP, j)                                              \
	*(volatile __u64 *)&lat_link =                                  \
		LOOKUP(KEY_IDX(first + (j) + ((__u32)prev & dep)));     \
	prev = *(volatile __u64 *)&lat_link;                            \
	sum += prev;

/*
 * LOOKUP_CALLS(name, T24, LOOKUP): the global functions name_lookups
 * (throughput) and name_lat_lookups (latency), each the lookups of one
 * call returning the sum of their results, and their bpf_loop callbacks
 * name_call and name_lat_call. T24 fetches the tbl24 the lookups need
 * (or nothing); LOOKUP(idx) is the lookup of key idx, an expression of
 * the nexthop index (or hit count) found.
 */
#define LOOKUP_CALLS(name, T24, LOOKUP)                                     \
	__attribute__((noinline)) __u64 name##_lookups(                     \
		struct xdp_md *ctx, __u32 first)                            \
	{                                                                   \
		T24                                                         \
		CALL_LOCALS;                                                \
                                                                            \
		EACH_KEY(TPUT_KEY, LOOKUP)                                  \
		return sum;                                                 \
	}                                                                   \
	__attribute__((noinline)) __u64 name##_lat_lookups(                 \
		struct xdp_md *ctx, __u32 first)                            \
	{                                                                   \
		T24                                                         \
		CALL_LOCALS;                                                \
		__u64 prev = lat_prev;                                      \
		__u32 dep = dep_mask;                                       \
                                                                            \
		EACH_KEY(LAT_KEY, LOOKUP)                                   \
		lat_prev = prev;                                            \
		return sum;                                                 \
	}                                                                   \
	static long name##_call(__u64 n, struct run *r)                     \
	{                                                                   \
		r->sum += name##_lookups(r->ctx,                            \
			r->pos + (__u32)n * LOOKUPS_PER_CALL);              \
		return 0;                                                   \
	}                                                                   \
	static long name##_lat_call(__u64 n, struct run *r)                 \
	{                                                                   \
		r->sum += name##_lat_lookups(r->ctx,                        \
			r->pos + (__u32)n * LOOKUPS_PER_CALL);              \
		return 0;                                                   \
	}

/*
 * bsearch's log2n is read anew for each lookup, as the forwarder reads it
 * from the active word per packet. Read once per call, the verifier
 * carried what the first lookup's branches on it had learnt (log2n is 17,
 * or below 17, ...) into the next ones: each of the 16 lookups was
 * verified once per such range, some 19 times (117k instructions
 * processed instead of 14k).
 */
#define LOG2N (*(volatile __u8 *)&run_log2n)
#define BS4(idx) xfib_bs4_lookup(&xfib_bs4, slot, LOG2N, bpf_ntohl(keys4[idx]))
#define DIR24(idx) xfib_dir24_lookup(t24, &t8_dir24, bpf_ntohl(keys4[idx]))
#define DXR(idx) \
	xfib_dxr_lookup(&xfib_dxr_direct, &xfib_dxr_ranges, slot, bpf_ntohl(keys4[idx]))
#define BS6(idx) ({                                                     \
	const __u8 *a = keys6[idx];                                     \
	xfib_bs6_lookup(&xfib_bs6, slot, LOG2N, load_be64(a),           \
			load_be64(a + 8));                              \
})
#define TRIE6(idx) xfib_trie6_lookup(t24, &t8_trie6, keys6[idx])
#define PT6(idx) ({                                                     \
	const __u8 *a = keys6[idx];                                     \
	xfib_pt6_lookup(&xfib_pt6_direct, &xfib_pt6_nodes,              \
			&xfib_pt6_leaves, slot, load_be64(a),           \
			load_be64(a + 8));                              \
})

LOOKUP_CALLS(bsearch4, NO_T24, BS4)
LOOKUP_CALLS(dir24_8, T24_DIR24, DIR24)
LOOKUP_CALLS(dxr, NO_T24, DXR)
LOOKUP_CALLS(bsearch6, NO_T24, BS6)
LOOKUP_CALLS(trie6, T24_TRIE6, TRIE6)
LOOKUP_CALLS(poptrie6, NO_T24, PT6)

/* Runs the calls of one run and publishes its results. */
#define RUN(fn, r)                                                          \
	do {                                                                \
		bpf_loop(LOOKUPS_PER_RUN / LOOKUPS_PER_CALL, fn, &(r), 0); \
		pos = (r).pos + LOOKUPS_PER_RUN;                            \
		acc += (r).sum;                                             \
	} while (0)

/* Instance set-ups: the published word, then (dir24_8, trie6) whether
 * the slot holds a table, as the forwarder checks. */
static __always_inline int setup_bs(struct run *r, __u32 fam, __u32 algo)
{
	struct xfib_active act;

	if (active(fam, algo, &act))
		return -1;
	run_slot = act.slot;
	run_log2n = act.log2n;
	return 0;
}

static __always_inline int setup_bsearch4(struct run *r)
{
	return setup_bs(r, XFIB_V4, XFIB_ALGO_BSEARCH4);
}

static __always_inline int setup_dxr(struct run *r)
{
	return setup_bs(r, XFIB_V4, XFIB_ALGO_DXR);
}

static __always_inline int setup_bsearch6(struct run *r)
{
	return setup_bs(r, XFIB_V6, XFIB_ALGO_BSEARCH6);
}

static __always_inline int setup_poptrie6(struct run *r)
{
	return setup_bs(r, XFIB_V6, XFIB_ALGO_POPTRIE6);
}

static __always_inline int setup_dir24_8(struct run *r)
{
	struct xfib_active act;
	__u32 slot;

	if (active(XFIB_V4, XFIB_ALGO_DIR24_8, &act))
		return -1;
	slot = act.slot;
	run_slot = slot;
	if (!tbl24_of(&xfib_dir24_tbl24, slot)) {
		mismatches++; /* a slot emptied under a stale word */
		return -1;
	}
	return 0;
}

static __always_inline int setup_trie6(struct run *r)
{
	struct xfib_active act;
	__u32 slot;

	if (active(XFIB_V6, XFIB_ALGO_TRIE6, &act))
		return -1;
	slot = act.slot;
	run_slot = slot;
	if (!tbl24_of(&xfib_trie6_tbl24, slot)) {
		mismatches++; /* a slot emptied under a stale word */
		return -1;
	}
	return 0;
}

/* lookup_NAME and lookup_NAME_lat: the two modes of one algorithm. */
#define XFIB_PROGS(name)                                                    \
	SEC("xdp")                                                          \
	int lookup_##name(struct xdp_md *ctx)                               \
	{                                                                   \
		struct run r = { .ctx = ctx, .pos = pos }; \
                                                                            \
		if (setup_##name(&r))                                       \
			return XDP_ABORTED;                                 \
		RUN(name##_call, r);                                        \
		return XDP_DROP;                                            \
	}                                                                   \
	SEC("xdp")                                                          \
	int lookup_##name##_lat(struct xdp_md *ctx)                         \
	{                                                                   \
		struct run r = { .ctx = ctx, .pos = pos }; \
                                                                            \
		if (setup_##name(&r))                                       \
			return XDP_ABORTED;                                 \
		RUN(name##_lat_call, r);                                    \
		return XDP_DROP;                                            \
	}

XFIB_PROGS(bsearch4)
XFIB_PROGS(dir24_8)
XFIB_PROGS(dxr)
XFIB_PROGS(bsearch6)
XFIB_PROGS(trie6)
XFIB_PROGS(poptrie6)

/*
 * Baselines: what a user would take instead of xfib, over the same keys,
 * in the same loop shape (bpf_loop, a global function per
 * LOOKUPS_PER_CALL lookups), so the only difference measured is the
 * lookup itself.
 *
 * base_lpm4 / base_lpm6: BPF_MAP_TYPE_LPM_TRIE maps the loader sizes and
 * fills with the table's prefixes (value 1). acc counts the hits.
 *
 * fib4 / fib6: bpf_fib_lookup() against the kernel FIB of the namespace
 * the loader runs in (the dummy frame arrives on its loopback device),
 * as a bpf_fib_lookup forwarder calls it, minus the neighbour:
 *  - ifindex = fib_iif, a port with forwarding on (the helper answers
 *    FWD_DISABLED before any lookup otherwise);
 *  - no BPF_FIB_LOOKUP_DIRECT: the policy rules are walked, as for a
 *    forwarded packet;
 *  - BPF_FIB_LOOKUP_SKIP_NEIGH (kernel >= 6.5): the neighbour table is
 *    not consulted, so the time is the FIB's, as for the lookups above.
 * acc counts BPF_FIB_LKUP_RET_SUCCESS answers.
 */
#define BASE_FIB_SKIP_NEIGH (1U << 2) /* ABI; older uapi headers lack it */

struct lpm4_key {
	__u32 prefixlen;
	__u32 addr; /* network order */
};

struct lpm6_key {
	__u32 prefixlen;
	__u8 addr[16];
};

/* max_entries is set by the loader to the table's size before load. */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__type(key, struct lpm4_key);
	__type(value, __u32);
} base_lpm4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__type(key, struct lpm6_key);
	__type(value, __u32);
} base_lpm6 SEC(".maps");

__u32 fib_iif;

#define LPM4(idx) ({                                                    \
	struct lpm4_key key = { .prefixlen = 32, .addr = keys4[idx] };  \
	__u32 *v = bpf_map_lookup_elem(&base_lpm4, &key);               \
	v ? *v : 0;                                                     \
})
#define LPM6(idx) ({                                                    \
	struct lpm6_key key = { .prefixlen = 128 };                     \
	__u32 *v;                                                       \
	__builtin_memcpy(key.addr, keys6[idx], 16);                     \
	v = bpf_map_lookup_elem(&base_lpm6, &key);                      \
	v ? *v : 0;                                                     \
})
#define FIB4(idx) ({                                                    \
	struct bpf_fib_lookup p;                                        \
	__builtin_memset(&p, 0, sizeof(p));                             \
	p.family = XFIB_AF_INET;                                        \
	p.ifindex = fib_iif;                                             \
	p.ipv4_dst = keys4[idx];                                        \
	bpf_fib_lookup(ctx, &p, sizeof(p), BASE_FIB_SKIP_NEIGH) ==   \
		BPF_FIB_LKUP_RET_SUCCESS;                               \
})
#define FIB6(idx) ({                                                    \
	struct bpf_fib_lookup p;                                        \
	__builtin_memset(&p, 0, sizeof(p));                             \
	p.family = XFIB_AF_INET6;                                       \
	p.ifindex = fib_iif;                                             \
	__builtin_memcpy(p.ipv6_dst, keys6[idx], 16);                   \
	bpf_fib_lookup(ctx, &p, sizeof(p), BASE_FIB_SKIP_NEIGH) ==   \
		BPF_FIB_LKUP_RET_SUCCESS;                               \
})

LOOKUP_CALLS(lpm4, NO_T24, LPM4)
LOOKUP_CALLS(lpm6, NO_T24, LPM6)
LOOKUP_CALLS(fib4, NO_T24, FIB4)
LOOKUP_CALLS(fib6, NO_T24, FIB6)

#define BASE_PROG(name, fn)                                                 \
	SEC("xdp")                                                          \
	int name(struct xdp_md *ctx)                                        \
	{                                                                   \
		struct run r = { .ctx = ctx, .pos = pos };                  \
		RUN(fn##_call, r);                                          \
		return XDP_DROP;                                            \
	}                                                                   \
	SEC("xdp")                                                          \
	int name##_lat(struct xdp_md *ctx)                                  \
	{                                                                   \
		struct run r = { .ctx = ctx, .pos = pos };                  \
		RUN(fn##_lat_call, r);                                      \
		return XDP_DROP;                                            \
	}

BASE_PROG(base_lpm_trie4, lpm4)
BASE_PROG(base_lpm_trie6, lpm6)
BASE_PROG(base_fib_lookup4, fib4)
BASE_PROG(base_fib_lookup6, fib6)
