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
 */
#define LOOKUPS_PER_CALL 16
_Static_assert(LOOKUPS_PER_RUN % LOOKUPS_PER_CALL == 0, "whole calls per run");

/* One run's state, on the program's stack, handed to each call. */
struct run {
	void *t24;
	void *t8;
	__u64 sum;
	__u32 pos;
	__u32 mask;
	__u32 slot;
	__u32 log2n;
};

/* The keys of call n, in order; the mask is applied again so that the
 * verifier sees the index bounded. */
#define FOR_EACH_KEY(r, n, i, k) \
	for (i = 0, k = (r)->pos + (__u32)(n) * LOOKUPS_PER_CALL; \
	     i < LOOKUPS_PER_CALL; i++, k++)
#define KEY_IDX(r, k) ((k) & (r)->mask & (KEYS_MAX - 1))

static long bsearch4_call(__u64 n, struct run *r)
{
	__u32 i, k, slot = r->slot, log2n = r->log2n;
	__u64 sum = 0;

	FOR_EACH_KEY(r, n, i, k) {
		__u32 dst = bpf_ntohl(keys4[KEY_IDX(r, k)]);

		sum += xfib_bs4_lookup(&xfib_bs4, slot, log2n, dst);
	}
	r->sum += sum;
	return 0;
}

static long dir24_8_call(__u64 n, struct run *r)
{
	void *t24 = r->t24, *t8 = r->t8;
	__u64 sum = 0;
	__u32 i, k;

	FOR_EACH_KEY(r, n, i, k) {
		__u32 dst = bpf_ntohl(keys4[KEY_IDX(r, k)]);

		sum += xfib_dir24_lookup(t24, t8, dst);
	}
	r->sum += sum;
	return 0;
}

static long dxr_call(__u64 n, struct run *r)
{
	__u32 i, k, slot = r->slot;
	__u64 sum = 0;

	FOR_EACH_KEY(r, n, i, k) {
		__u32 dst = bpf_ntohl(keys4[KEY_IDX(r, k)]);

		sum += xfib_dxr_lookup(&xfib_dxr_direct, &xfib_dxr_ranges, slot,
				       dst);
	}
	r->sum += sum;
	return 0;
}

static long bsearch6_call(__u64 n, struct run *r)
{
	__u32 i, k, slot = r->slot, log2n = r->log2n;
	__u64 sum = 0;

	FOR_EACH_KEY(r, n, i, k) {
		const __u8 *a = keys6[KEY_IDX(r, k)];

		sum += xfib_bs6_lookup(&xfib_bs6, slot, log2n, load_be64(a),
				       load_be64(a + 8));
	}
	r->sum += sum;
	return 0;
}

static long trie6_call(__u64 n, struct run *r)
{
	void *t24 = r->t24, *t8 = r->t8;
	__u64 sum = 0;
	__u32 i, k;

	FOR_EACH_KEY(r, n, i, k)
		sum += xfib_trie6_lookup(t24, t8, keys6[KEY_IDX(r, k)]);
	r->sum += sum;
	return 0;
}

static long poptrie6_call(__u64 n, struct run *r)
{
	__u32 i, k, slot = r->slot;
	__u64 sum = 0;

	FOR_EACH_KEY(r, n, i, k) {
		const __u8 *a = keys6[KEY_IDX(r, k)];

		sum += xfib_pt6_lookup(&xfib_pt6_direct, &xfib_pt6_nodes,
				       &xfib_pt6_leaves, slot, load_be64(a),
				       load_be64(a + 8));
	}
	r->sum += sum;
	return 0;
}

/* Runs the calls of one run and publishes its results. */
#define RUN(fn, r)                                                          \
	do {                                                                \
		bpf_loop(LOOKUPS_PER_RUN / LOOKUPS_PER_CALL, fn, &(r), 0); \
		pos = (r).pos + LOOKUPS_PER_RUN;                            \
		acc += (r).sum;                                             \
	} while (0)

SEC("xdp")
int lookup_bsearch4(struct xdp_md *ctx)
{
	struct run r = { .pos = pos, .mask = key_mask };
	struct xfib_active act;

	if (active(XFIB_V4, XFIB_ALGO_BSEARCH4, &act))
		return XDP_ABORTED;
	r.slot = act.slot;
	r.log2n = act.log2n;
	RUN(bsearch4_call, r);
	return XDP_DROP;
}

SEC("xdp")
int lookup_dir24_8(struct xdp_md *ctx)
{
	struct run r = { .pos = pos, .mask = key_mask };
	struct xfib_active act;
	__u32 slot;

	if (active(XFIB_V4, XFIB_ALGO_DIR24_8, &act))
		return XDP_ABORTED;
	slot = act.slot;
	r.t24 = bpf_map_lookup_elem(&xfib_dir24_tbl24, &slot);
	r.t8 = bpf_map_lookup_elem(&xfib_dir24_tbl8, &slot);
	if (!r.t24 || !r.t8) {
		mismatches++; /* a slot emptied under a stale word */
		return XDP_ABORTED;
	}
	RUN(dir24_8_call, r);
	return XDP_DROP;
}

SEC("xdp")
int lookup_dxr(struct xdp_md *ctx)
{
	struct run r = { .pos = pos, .mask = key_mask };
	struct xfib_active act;

	if (active(XFIB_V4, XFIB_ALGO_DXR, &act))
		return XDP_ABORTED;
	r.slot = act.slot;
	RUN(dxr_call, r);
	return XDP_DROP;
}

SEC("xdp")
int lookup_bsearch6(struct xdp_md *ctx)
{
	struct run r = { .pos = pos, .mask = key_mask };
	struct xfib_active act;

	if (active(XFIB_V6, XFIB_ALGO_BSEARCH6, &act))
		return XDP_ABORTED;
	r.slot = act.slot;
	r.log2n = act.log2n;
	RUN(bsearch6_call, r);
	return XDP_DROP;
}

SEC("xdp")
int lookup_trie6(struct xdp_md *ctx)
{
	struct run r = { .pos = pos, .mask = key_mask };
	struct xfib_active act;
	__u32 slot;

	if (active(XFIB_V6, XFIB_ALGO_TRIE6, &act))
		return XDP_ABORTED;
	slot = act.slot;
	r.t24 = bpf_map_lookup_elem(&xfib_trie6_tbl24, &slot);
	r.t8 = bpf_map_lookup_elem(&xfib_trie6_tbl8, &slot);
	if (!r.t24 || !r.t8) {
		mismatches++; /* a slot emptied under a stale word */
		return XDP_ABORTED;
	}
	RUN(trie6_call, r);
	return XDP_DROP;
}

SEC("xdp")
int lookup_poptrie6(struct xdp_md *ctx)
{
	struct run r = { .pos = pos, .mask = key_mask };
	struct xfib_active act;

	if (active(XFIB_V6, XFIB_ALGO_POPTRIE6, &act))
		return XDP_ABORTED;
	r.slot = act.slot;
	RUN(poptrie6_call, r);
	return XDP_DROP;
}

/*
 * Baselines: what a user would take instead of xfib, over the same keys,
 * in the same loop shape (bpf_loop, LOOKUPS_PER_CALL in a row), so the
 * only difference measured is the lookup itself.
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

/* The baselines' run state: the context is needed by bpf_fib_lookup(). */
struct base_run {
	struct xdp_md *ctx;
	__u64 sum;
	__u32 pos;
	__u32 mask;
	__u32 iif;
};

static long lpm4_call(__u64 n, struct base_run *r)
{
	struct lpm4_key key = { .prefixlen = 32 };
	__u64 sum = 0;
	__u32 i, k, *v;

	FOR_EACH_KEY(r, n, i, k) {
		key.addr = keys4[KEY_IDX(r, k)];
		v = bpf_map_lookup_elem(&base_lpm4, &key);
		sum += v ? *v : 0;
	}
	r->sum += sum;
	return 0;
}

static long lpm6_call(__u64 n, struct base_run *r)
{
	struct lpm6_key key = { .prefixlen = 128 };
	__u64 sum = 0;
	__u32 i, k, *v;

	FOR_EACH_KEY(r, n, i, k) {
		__builtin_memcpy(key.addr, keys6[KEY_IDX(r, k)], 16);
		v = bpf_map_lookup_elem(&base_lpm6, &key);
		sum += v ? *v : 0;
	}
	r->sum += sum;
	return 0;
}

static long fib4_call(__u64 n, struct base_run *r)
{
	struct bpf_fib_lookup p;
	__u64 sum = 0;
	__u32 i, k;

	FOR_EACH_KEY(r, n, i, k) {
		__builtin_memset(&p, 0, sizeof(p));
		p.family = XFIB_AF_INET;
		p.ifindex = r->iif;
		p.ipv4_dst = keys4[KEY_IDX(r, k)];
		sum += bpf_fib_lookup(r->ctx, &p, sizeof(p),
				      BASE_FIB_SKIP_NEIGH) ==
		       BPF_FIB_LKUP_RET_SUCCESS;
	}
	r->sum += sum;
	return 0;
}

static long fib6_call(__u64 n, struct base_run *r)
{
	struct bpf_fib_lookup p;
	__u64 sum = 0;
	__u32 i, k;

	FOR_EACH_KEY(r, n, i, k) {
		__builtin_memset(&p, 0, sizeof(p));
		p.family = XFIB_AF_INET6;
		p.ifindex = r->iif;
		__builtin_memcpy(p.ipv6_dst, keys6[KEY_IDX(r, k)], 16);
		sum += bpf_fib_lookup(r->ctx, &p, sizeof(p),
				      BASE_FIB_SKIP_NEIGH) ==
		       BPF_FIB_LKUP_RET_SUCCESS;
	}
	r->sum += sum;
	return 0;
}

#define BASE_PROG(name, fn)                                                 \
	SEC("xdp")                                                          \
	int name(struct xdp_md *ctx)                                        \
	{                                                                   \
		struct base_run r = { .ctx = ctx, .pos = pos,               \
				      .mask = key_mask, .iif = fib_iif };   \
		RUN(fn, r);                                                 \
		return XDP_DROP;                                            \
	}

BASE_PROG(base_lpm_trie4, lpm4_call)
BASE_PROG(base_lpm_trie6, lpm6_call)
BASE_PROG(base_fib_lookup4, fib4_call)
BASE_PROG(base_fib_lookup6, fib6_call)
