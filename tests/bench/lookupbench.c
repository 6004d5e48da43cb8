// SPDX-License-Identifier: GPL-2.0-only
/*
 * lookupbench: lookups per second of the live dataplane's longest-prefix
 * match, in the kernel and in native C over the same memory, in one run.
 *
 *   lookupbench --pin-dir DIR --family 4|6 [--keys random,hot]
 *               [--source uniform|prefixes] [--nkeys N] [--hot N]
 *               [--reps N] [--min-time SEC] [--cpu N] [--seed N]
 *               [--baseline lpm_trie|fib_lookup [--iif IFNAME]] [-v]
 *   lookupbench --pin-dir DIR --verifier
 *
 * Kernel: tests/bench/lookup.bpf.c, loaded with the router's pin directory
 * as pin root so that its maps are the live pinned ones, run with
 * BPF_PROG_TEST_RUN; the time per lookup is the run time the kernel
 * reports divided by the lookups per run. Native: ctl/lib/dpl_map.c maps the
 * same tables read-only (what xfibctl lookup does) and the same lookup
 * headers run over them, in a loop shaped like the program's (the active
 * word read once per LOOKUPS_PER_RUN lookups, keys read from the program's
 * own key array through its mmap()ed .bss). Both loops add the nexthop
 * indexes up; over one pass of the keys the two sums must agree, which
 * checks that both looked up the same thing in the same table.
 *
 * Key sets: "random" is --nkeys destinations (65536 by default: more than
 * the caches hold of a big table, as on a busy router), "hot" is --hot
 * destinations (8), all in cache after the first pass. --source uniform
 * draws addresses uniformly from the whole address space; --source
 * prefixes reads prefixes ("ADDR/LEN", one a line) on stdin and draws
 * random addresses inside randomly chosen ones. Lookups are not packets:
 * any address is fine.
 *
 * Each key set is measured in two modes (tests/bench/lookup.bpf.c):
 * throughput, the keys in order, each lookup independent, and latency,
 * each key's index offset by the previous result masked with a runtime
 * zero, so that each lookup waits for the one before. Each is measured
 * --reps times, kernel then native each time, throughput then latency in
 * each repetition, with enough runs for --min-time seconds (0.3); the
 * medians are reported. One JSON object per key set is printed on stdout:
 * bpf_ns_median / native_ns_median (throughput) and lat_bpf_ns_median /
 * lat_native_ns_median (latency), with the samples and a sum check each.
 * The programs are picked by name: lookup_ALGO and lookup_ALGO_lat for
 * the published algorithm, base_BASELINE4|6 and _lat for a baseline. The process pins itself to
 * --cpu (BPF_PROG_TEST_RUN runs the program on the calling CPU), so both
 * measurements run on the same core.
 *
 * --baseline measures, instead of the published instance, what a user
 * would run instead of xfib, over the same keys (same --seed, --source
 * and prefixes give the same keys): lpm_trie, a BPF_MAP_TYPE_LPM_TRIE
 * filled with the prefixes on stdin; fib_lookup, bpf_fib_lookup() against
 * the kernel FIB of the namespace lookupbench runs in, entering by --iif
 * (a port with forwarding on). These have no native twin: only the
 * kernel's time is reported, and instead of a sum check the share of keys
 * that found a route, to compare with the instance's hit rate.
 *
 * For the published instance, an untimed counting pass
 * (tests/bench/lookupreads.c) runs the same lookup headers over the same
 * keys and mmap()ed maps, with accessors that count: reads_per_lookup
 * (mean) and reads_max (accessor calls), lines_per_lookup (distinct
 * 64-byte cache lines per lookup) and working_set_bytes (the distinct
 * lines of the whole key set); reads_check says whether its answers
 * added up to the native loop's over the same lookups.
 *
 * Each result also gives the measured program's size after the verifier
 * (instructions, JITed bytes) and the calls left in it: the helper calls
 * show which map lookups the verifier could not inline.
 *
 * --verifier loads every program of lookup.bpf.c, one at a time, and
 * prints the instructions the verifier processed for each (its margin to
 * the limit), failing if any does not load.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <net/if.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/*
 * The userspace side of the dataplane's lookups, included rather than
 * linked: its table accessors are static, and the native loops below must
 * use exactly them (same bounds checks, same acquire loads) to be the code
 * xfibctl lookup and xfibctl verify run.
 */
#include "dplookup.c"
#include "algo_names.h"
#include "lookup.skel.h"
#include "lookupreads.h"
#include "prog_insns.h"

#define REPS_MAX 99

#include "benchutil.h"

/* splitmix64: reproducible keys for a given --seed. */
static __u64 rnd_state;

static __u64 rnd64(void)
{
	__u64 z = (rnd_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

struct prefix {
	__u8 addr[16];
	int len;
};

static struct prefix *pfx;
static size_t npfx;

/* Prefixes of family fam on stdin, "ADDR/LEN" (other lines skipped). */
static int read_prefixes(int fam)
{
	int af = fam == XFIB_V4 ? AF_INET : AF_INET6;
	int maxlen = fam == XFIB_V4 ? 32 : 128;
	char line[256], *slash, *end;
	size_t cap = 0;
	long len;

	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, " \t\r\n")] = '\0';
		slash = strchr(line, '/');
		if (!slash)
			continue;
		*slash = '\0';
		len = strtol(slash + 1, &end, 10);
		if (*end || len < 0 || len > maxlen)
			continue;
		if (npfx == cap) {
			cap = cap ? 2 * cap : 4096;
			pfx = realloc(pfx, cap * sizeof(*pfx));
			if (!pfx)
				return -ENOMEM;
		}
		memset(&pfx[npfx], 0, sizeof(*pfx));
		if (inet_pton(af, line, pfx[npfx].addr) != 1)
			continue;
		pfx[npfx++].len = len;
	}
	return npfx ? 0 : -ENOENT;
}

/* One destination (network order, 4 or 16 bytes): uniform, or a random
 * address inside a random prefix. */
static void make_key(int fam, bool in_prefixes, __u8 *out)
{
	int n = fam == XFIB_V4 ? 4 : 16, i;
	__u64 r[2] = { rnd64(), rnd64() };
	const struct prefix *p;

	memcpy(out, r, n);
	if (!in_prefixes)
		return;
	p = &pfx[rnd64() % npfx];
	for (i = 0; i < n; i++) {
		int bits = p->len - 8 * i;
		__u8 m;

		if (bits <= 0)
			break;
		m = bits >= 8 ? 0xff : (__u8)(0xff << (8 - bits));
		out[i] = (p->addr[i] & m) | (out[i] & ~m);
	}
}

struct bench {
	struct lookup_bpf *skel;
	struct xfib_fwd_bpf *fwd; /* the same pinned maps, for dplookup */
	struct dpl d;
	int fam;
	int prog_fd;	  /* throughput mode */
	int prog_lat_fd;  /* latency mode */
	__u32 algo;
	__u32 k; /* lookups per run */
	__u32 mask;
	/* the native loop's own cursor and sum, as the program's in .bss */
	__u32 pos;
	__u64 acc;
	__u64 prev; /* latency mode: the last result */
};

static __u64 live_word(const struct bench *b)
{
	return active_word(&b->d);
}

/*
 * Never written: the latency loops offset each key's index by the
 * previous result masked with it, as lookup.bpf.c does with its dep_mask,
 * so that each lookup waits for the one before.
 */
static volatile __u32 dep_mask;
/* Each result goes through it, as through lookup.bpf.c's lat_link. */
static volatile __u64 lat_link;

/* k lookups from p; LOOKUP(j) looks up key j. Throughput: */
#define TPUT_LOOP(LOOKUP)                                                   \
	for (i = 0; i < k; i++)                                             \
		sum += LOOKUP((p + i) & m)
/* Latency: each key's index waits for the previous result. */
#define LAT_LOOP(LOOKUP)                                                    \
	for (i = 0; i < k; i++) {                                           \
		lat_link = LOOKUP((p + i + ((__u32)prev & dep)) & m);       \
		prev = lat_link;                                            \
		sum += prev;                                                \
	}

#define N_BS4(j) xfib_bs4_lookup(&d->bs, d->act.slot, d->act.log2n, \
				 ntohl(bss->keys4[j]))
#define N_DIR24(j) xfib_dir24_lookup(&d->t24, &d->t8, ntohl(bss->keys4[j]))
#define N_DXR(j) xfib_dxr_lookup(&d->dxr_direct, &d->dxr_ranges, d->act.slot, \
				 ntohl(bss->keys4[j]))
#define N_BS6(j) ({                                                         \
	const __u8 *a = bss->keys6[j];                                      \
	__u64 hi, lo;                                                       \
	memcpy(&hi, a, 8);                                                  \
	memcpy(&lo, a + 8, 8);                                              \
	xfib_bs6_lookup(&d->bs, d->act.slot, d->act.log2n, be64toh(hi),     \
			be64toh(lo));                                       \
})
#define N_TRIE6(j) xfib_trie6_lookup(&d->t24, &d->t8, bss->keys6[j])
#define N_PT6(j) ({                                                         \
	const __u8 *a = bss->keys6[j];                                      \
	__u64 hi, lo;                                                       \
	memcpy(&hi, a, 8);                                                  \
	memcpy(&lo, a + 8, 8);                                              \
	xfib_pt6_lookup(&d->pt6_direct, &d->pt6_nodes, &d->pt6_leaves,      \
			d->act.slot, be64toh(hi), be64toh(lo));             \
})
/* Any other algorithm: through dplookup, as xfibctl lookup does. */
#define N_DPL(j) dpl_lookup(d, b->fam == XFIB_V4 ?                          \
			    (const __u8 *)&bss->keys4[j] : bss->keys6[j])

/*
 * Native runs: per run, the active word once, then k lookups, as the
 * program does, LOOP being TPUT_LOOP or LAT_LOOP: one function per mode,
 * so that the throughput loop is compiled as it was alone. Returns
 * -EAGAIN if the instance changed under us (the tables mapped are then no
 * longer the published ones).
 */
#define NATIVE_RUNS(fn, LOOP)                                               \
	static int fn(struct bench *b, unsigned long runs)                  \
	{                                                                   \
		const struct lookup_bpf__bss *bss = b->skel->bss;           \
		struct dpl *d = &b->d;                                      \
		__u64 want, sum = 0, prev __attribute__((unused)) = b->prev; \
		__u32 p = b->pos, m = b->mask, k = b->k, i;                 \
		__u32 dep __attribute__((unused)) = dep_mask;               \
		unsigned long r;                                            \
                                                                            \
		memcpy(&want, &d->act, sizeof(want));                       \
		for (r = 0; r < runs; r++) {                                \
			if (live_word(b) != want)                           \
				return -EAGAIN;                             \
			switch (b->algo) {                                  \
			case XFIB_ALGO_BSEARCH4:                            \
				LOOP(N_BS4);                                \
				break;                                      \
			case XFIB_ALGO_DIR24_8:                             \
				LOOP(N_DIR24);                              \
				break;                                      \
			case XFIB_ALGO_DXR:                                 \
				LOOP(N_DXR);                                \
				break;                                      \
			case XFIB_ALGO_BSEARCH6:                            \
				LOOP(N_BS6);                                \
				break;                                      \
			case XFIB_ALGO_TRIE6:                               \
				LOOP(N_TRIE6);                              \
				break;                                      \
			case XFIB_ALGO_POPTRIE6:                            \
				LOOP(N_PT6);                                \
				break;                                      \
			default:                                            \
				LOOP(N_DPL);                                \
				break;                                      \
			}                                                   \
			p += k;                                             \
		}                                                           \
		b->pos = p;                                                 \
		b->acc += sum;                                              \
		b->prev = prev;                                             \
		return 0;                                                   \
	}

NATIVE_RUNS(native_runs_tput, TPUT_LOOP)
NATIVE_RUNS(native_runs_lat, LAT_LOOP)

static int native_runs(struct bench *b, unsigned long runs, bool lat)
{
	return lat ? native_runs_lat(b, runs) : native_runs_tput(b, runs);
}

/*
 * Kernel runs: one BPF_PROG_TEST_RUN with repeat = runs. Returns the mean
 * ns per run the kernel measured, or -EAGAIN if the program found another
 * instance published.
 */
static double bpf_runs(struct bench *b, unsigned long runs, bool lat)
{
	/* Never sent anywhere: the program only needs a context. */
	static __u8 frame[64];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame,
		    .data_size_in = sizeof(frame), .repeat = runs);
	__u64 mm = b->skel->bss->mismatches;

	if (bpf_prog_test_run_opts(lat ? b->prog_lat_fd : b->prog_fd, &o))
		return -errno;
	if (o.retval != XDP_DROP || b->skel->bss->mismatches != mm)
		return -EAGAIN;
	return o.duration;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(const double *v, int n)
{
	double s[REPS_MAX];

	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static void print_list(const double *v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		printf("%s%.4f", i ? "," : "", v[i]);
}

static const char *algo_name(__u32 a)
{
	return xfib_algo_name(a);
}

struct opts {
	const char *pin_dir;
	int fam;
	bool random, hot;
	bool in_prefixes;
	unsigned int nkeys, nhot, reps;
	double min_time;
	int cpu;
	__u64 seed;
	const char *baseline; /* NULL: the published xfib instance */
	const char *iif;
};

/*
 * The measured program's size after the verifier: instructions, JITed
 * bytes, and the calls left in it, helpers (map lookups the verifier did
 * not inline, bpf_fib_lookup) and BPF-to-BPF calls (the bpf_loop body,
 * and the global function of lookups it calls).
 * Printed with each result: what the per-lookup time is made of.
 */
static void print_prog_shape(int prog_fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), n, i, helpers = 0, subprogs = 0;
	struct bpf_insn *insns;

	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return;
	n = info.xlated_prog_len / sizeof(*insns);
	insns = calloc(n, sizeof(*insns));
	if (!insns)
		return;
	memset(&info, 0, sizeof(info));
	info.xlated_prog_len = n * sizeof(*insns);
	info.xlated_prog_insns = (__u64)(unsigned long)insns;
	len = sizeof(info);
	if (!bpf_obj_get_info_by_fd(prog_fd, &info, &len)) {
		for (i = 0; i < n; i++) {
			if (insns[i].code != (BPF_JMP | BPF_CALL))
				continue;
			if (insns[i].src_reg == BPF_PSEUDO_CALL)
				subprogs++;
			else
				helpers++;
		}
		printf(",\"xlated_insns\":%u,\"jited_bytes\":%u,"
		       "\"helper_calls\":%u,\"subprog_calls\":%u",
		       n, info.jited_prog_len, helpers, subprogs);
	}
	free(insns);
}

/*
 * One pass over the keys (or one run, if there are fewer keys than
 * lookups per run) from position 0, in mode lat, in the kernel and, for
 * an xfib instance, natively: the sums must agree. Returns 1 if they do,
 * 0 if not, a negative error (-EAGAIN: the instance changed).
 */
static int check_pass(struct bench *b, const char *name, unsigned long pass,
		      bool lat, bool native)
{
	struct lookup_bpf__bss *bss = b->skel->bss;
	double d;

	bss->pos = 0;
	bss->acc = 0;
	bss->lat_prev = 0;
	b->pos = 0;
	b->acc = 0;
	b->prev = 0;
	d = bpf_runs(b, pass, lat);
	if (d < 0)
		return d;
	if (!native) {
		b->acc = bss->acc; /* the baseline's hits */
		return 1;
	}
	if (native_runs(b, pass, lat))
		return -EAGAIN;
	if (bss->acc == b->acc)
		return 1;
	err_msg("%s%s: kernel and native sums differ over one pass: %llu vs %llu",
		name, lat ? " (latency)" : "", (unsigned long long)bss->acc,
		(unsigned long long)b->acc);
	return 0;
}

/* Runs for --min-time seconds in mode lat, calibrated on the kernel side
 * (which also warms caches and TLB), then the native side warmed too. */
static long calibrate(struct bench *b, const struct opts *o, bool lat,
		      bool native)
{
	double per_run = bpf_runs(b, 2000, lat);
	unsigned long runs;

	if (per_run < 0)
		return per_run;
	if (per_run < 1)
		per_run = 1;
	runs = o->min_time * 1e9 / per_run + 1;
	if (runs > UINT_MAX)
		runs = UINT_MAX;
	if (native && native_runs(b, runs / 10 + 1, lat))
		return -EAGAIN;
	return runs;
}

/* Mode x path: [0] throughput, [1] latency; [0] kernel, [1] native. */
struct result {
	double ns[2][2][REPS_MAX];
	long runs[2];
	int ok[2];
	double hit_pct;
	struct lr_stats reads; /* the counting pass (lookups 0: none) */
	bool reads_ok;         /* its sum is the native loop's */
};

/*
 * The counting pass (tests/bench/lookupreads.c), untimed, over the
 * lookups of a check pass: n from position 0. Its answers must add up to
 * sum, the native throughput loop's over the same lookups. -EAGAIN if
 * the instance changed meanwhile.
 */
static int count_reads(struct bench *b, __u64 n, __u64 sum,
		       struct result *res)
{
	const struct lookup_bpf__bss *bss = b->skel->bss;
	const __u8 *keys = b->fam == XFIB_V4 ? (const __u8 *)bss->keys4 :
					       (const __u8 *)bss->keys6;
	__u64 want;
	int err;

	memcpy(&want, &b->d.act, sizeof(want));
	err = lr_count(&b->d, keys, b->mask, n, &res->reads);
	if (err == -ENOTSUP)
		return 0; /* no header for it: no counts */
	if (err)
		return err;
	if (live_word(b) != want)
		return -EAGAIN;
	res->reads_ok = res->reads.sum == sum;
	if (!res->reads_ok)
		err_msg("%s: the counting pass's sum differs from the native loop's: %llu vs %llu",
			algo_name(b->algo), (unsigned long long)res->reads.sum,
			(unsigned long long)sum);
	return 0;
}

/* The counting pass's figures, in the JSON object of a key set. */
static void print_reads(const struct result *res)
{
	const struct lr_stats *r = &res->reads;

	if (!r->lookups)
		return;
	printf(",\"reads_per_lookup\":%.4f,\"reads_max\":%u,"
	       "\"lines_per_lookup\":%.4f,\"working_set_lines\":%llu,"
	       "\"working_set_bytes\":%llu,\"reads_check\":%s",
	       (double)r->reads / r->lookups, r->reads_max,
	       (double)r->lines / r->lookups, (unsigned long long)r->ws_lines,
	       (unsigned long long)r->ws_lines * LR_LINE_BYTES,
	       res->reads_ok ? "true" : "false");
}

static void print_result(const struct bench *b, const struct opts *o,
			 const char *name, unsigned int n,
			 const struct result *res)
{
	bool nat = !o->baseline;
	int m;

	printf("{\"family\":\"ipv%d\",\"algorithm\":\"%s\",",
	       b->fam == XFIB_V4 ? 4 : 6, nat ? algo_name(b->algo) : o->baseline);
	if (nat)
		printf("\"generation\":%u,\"slot\":%u,", b->d.act.generation,
		       b->d.act.slot);
	else
		printf("\"baseline\":true,");
	printf("\"keys\":\"%s\",\"key_source\":\"%s\",\"nkeys\":%u,"
	       "\"hit_pct\":%.2f,\"lookups_per_run\":%u,\"repetitions\":%u",
	       name, o->in_prefixes ? "prefixes" : "uniform", n, res->hit_pct,
	       b->k, o->reps);
	for (m = 0; m < 2; m++) {
		const char *p = m ? "lat_" : "";

		printf(",\"%sruns\":%ld,\"%scheck\":%s,\"%sbpf_ns_median\":%.4f",
		       p, res->runs[m], p, res->ok[m] ? "true" : "false", p,
		       median(res->ns[m][0], o->reps));
		if (nat)
			printf(",\"%snative_ns_median\":%.4f", p,
			       median(res->ns[m][1], o->reps));
		else
			printf(",\"%snative_ns_median\":null", p);
		printf(",\"%sbpf_ns\":[", p);
		print_list(res->ns[m][0], o->reps);
		printf("],\"%snative_ns\":[", p);
		print_list(res->ns[m][1], nat ? o->reps : 0);
		printf("]");
	}
	print_reads(res);
	print_prog_shape(b->prog_fd);
	printf("}\n");
	fflush(stdout);
}

/*
 * Measures one key set (keys already written, n of them, a power of 2)
 * in both modes: --reps repetitions, each running the kernel then the
 * native loop (none for a baseline) in throughput mode, then in latency
 * mode, so that a slow phase of the machine hits both.
 */
static int measure(struct bench *b, const struct opts *o, const char *name,
		   unsigned int n)
{
	bool nat = !o->baseline;
	struct result res = { 0 };
	unsigned long pass;
	unsigned int hits = 0, i, rep;
	double t0, d;
	int m, err;

	b->mask = n - 1;
	b->skel->bss->key_mask = n - 1;
	/* Hit rate: keys with a route (native, one lookup per key). */
	for (i = 0; nat && i < n; i++) {
		const __u8 *a = b->fam == XFIB_V4 ?
			(const __u8 *)&b->skel->bss->keys4[i] :
			b->skel->bss->keys6[i];

		hits += dpl_lookup(&b->d, a) != XFIB_NH_IDX_NONE;
	}
	res.hit_pct = 100.0 * hits / n;
	pass = n >= b->k ? n / b->k : 1;
	for (m = 1; m >= 0; m--) {
		res.ok[m] = check_pass(b, name, pass, m, nat);
		if (res.ok[m] < 0)
			return res.ok[m];
	}
	/* A baseline's hit rate: its own count over the throughput pass. */
	if (!nat)
		res.hit_pct = 100.0 * b->acc / ((double)pass * b->k);
	/* b->acc: the native throughput sum of that pass. */
	err = nat ? count_reads(b, (__u64)pass * b->k, b->acc, &res) : 0;
	if (err)
		return err;
	for (m = 0; m < 2; m++) {
		res.runs[m] = calibrate(b, o, m, nat);
		if (res.runs[m] < 0)
			return res.runs[m];
	}
	for (rep = 0; rep < o->reps; rep++) {
		for (m = 0; m < 2; m++) {
			d = bpf_runs(b, res.runs[m], m);
			if (d < 0)
				return d;
			res.ns[m][0][rep] = d / b->k;
			if (!nat)
				continue;
			t0 = now_s() * 1e9;
			err = native_runs(b, res.runs[m], m);
			if (err)
				return err;
			res.ns[m][1][rep] = (now_s() * 1e9 - t0) /
					    ((double)res.runs[m] * b->k);
		}
		if (verbose)
			fprintf(stderr, "%s %s rep %u: kernel %.3f / %.3f ns, native %.3f / %.3f ns (throughput / latency)\n",
				nat ? algo_name(b->algo) : o->baseline, name, rep,
				res.ns[0][0][rep], res.ns[1][0][rep],
				res.ns[0][1][rep], res.ns[1][1][rep]);
	}
	print_result(b, o, name, n, &res);
	return 0;
}

/*
 * The programs of one algorithm or baseline, by name: PREFIXNAME
 * (throughput) and PREFIXNAME_lat (latency), in lookup.bpf.c. -ENOENT if
 * there are none (an algorithm lookup.bpf.c has no loop for).
 */
static int pick_progs(struct bench *b, const char *prefix, const char *name)
{
	struct bpf_program *tp, *lat;
	char pn[64];

	snprintf(pn, sizeof(pn), "%s%s", prefix, name);
	tp = bpf_object__find_program_by_name(b->skel->obj, pn);
	snprintf(pn, sizeof(pn), "%s%s_lat", prefix, name);
	lat = bpf_object__find_program_by_name(b->skel->obj, pn);
	if (!tp || !lat || bpf_program__fd(tp) < 0 || bpf_program__fd(lat) < 0) {
		err_msg("no loaded program %s%s (and _lat) in lookup.bpf.c",
			prefix, name);
		return -ENOENT;
	}
	b->prog_fd = bpf_program__fd(tp);
	b->prog_lat_fd = bpf_program__fd(lat);
	return 0;
}

/*
 * Points b at the family's published instance: maps its tables and picks
 * the program for its algorithm. -ENOENT if the family has no instance
 * (no table published: nothing to measure).
 */
static int open_instance(struct bench *b)
{
	int err;

	dpl_close(&b->d);
	err = dpl_open(&b->d, b->fwd, b->fam);
	if (err)
		return err;
	if (!b->d.ready)
		return -ENOENT;
	b->algo = b->d.act.algo;
	return pick_progs(b, "lookup_", algo_name(b->algo));
}

/* Loads PREFIXNAME and PREFIXNAME_lat, those of them that exist. */
static void autoload(struct lookup_bpf *skel, const char *prefix,
		     const char *name)
{
	struct bpf_program *prog;
	char pn[64];

	snprintf(pn, sizeof(pn), "%s%s", prefix, name);
	prog = bpf_object__find_program_by_name(skel->obj, pn);
	if (prog)
		bpf_program__set_autoload(prog, true);
	snprintf(pn, sizeof(pn), "%s%s_lat", prefix, name);
	prog = bpf_object__find_program_by_name(skel->obj, pn);
	if (prog)
		bpf_program__set_autoload(prog, true);
}

/* Loads the benchmark programs over the maps pinned in pin_dir. */
static int load_prog(const char *pin_dir, int fam, const char *baseline,
		     __u32 only, struct lookup_bpf **skelp)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .pin_root_path = pin_dir);
	char tx_path[XFIB_PIN_DIR_MAX + 32];
	bool v4 = fam == XFIB_V4;
	struct bpf_program *prog;
	struct lookup_bpf *skel;
	char name[32];
	int err, fd;
	__u32 id;

	skel = lookup_bpf__open_opts(&oo);
	if (!skel)
		return -errno;
	/* Room for every prefix read (the trie allocates per insert). */
	if (npfx) {
		bpf_map__set_max_entries(skel->maps.base_lpm4, npfx);
		bpf_map__set_max_entries(skel->maps.base_lpm6, npfx);
	}
	/*
	 * Only the programs this run can use are loaded: the forwarder
	 * comes with the included source, and verifying every program
	 * costs seconds per run.
	 */
	bpf_object__for_each_program(prog, skel->obj)
		bpf_program__set_autoload(prog, false);
	if (!baseline) {
		/* The published algorithm (only), else every algorithm of
		 * the family, by name, both modes. */
		for (id = 1; id < XFIB_ALGO_COUNT; id++) {
			if (xfib_algo_family(id) != fam || (only && id != only))
				continue;
			autoload(skel, "lookup_", xfib_algo_name(id));
		}
	} else {
		snprintf(name, sizeof(name), "%s%d", baseline, v4 ? 4 : 6);
		autoload(skel, "base_", name);
	}
	/*
	 * xfib_tx_ports is pinned by ctl/lib/pin.c, not by libbpf (see
	 * bpf/lib/maps.h). Nothing here uses it; reusing the pin only
	 * spares creating a private copy.
	 */
	snprintf(tx_path, sizeof(tx_path), "%s/xfib_tx_ports", pin_dir);
	fd = bpf_obj_get(tx_path);
	if (fd >= 0) {
		err = bpf_map__reuse_fd(skel->maps.xfib_tx_ports, fd);
		close(fd);
		if (err)
			goto err;
	}
	err = lookup_bpf__load(skel);
	if (err)
		goto err;
	*skelp = skel;
	return 0;
err:
	lookup_bpf__destroy(skel);
	return err;
}

/*
 * --verifier: every program of lookup.bpf.c (the forwarder it includes
 * aside: xfibctl attach loads that one, fwd.sh reports it), each loaded
 * alone over the maps pinned in pin_dir, and the instructions the
 * verifier processed for it, against its limit: one JSON object on
 * stdout. Non-zero if any program fails to load: a benchmark whose
 * program cannot load is broken, however the rest measures.
 */
static int verify_all(const char *pin_dir)
{
	struct bpf_object_open_opts oo = { .sz = sizeof(oo), .pin_root_path = pin_dir };
	struct bpf_program *prog, *p;
	struct lookup_bpf *skel;
	const char *sep = "";
	char name[64];
	int failed = 0, err;
	__u32 n;

	skel = lookup_bpf__open_opts(&oo);
	if (!skel)
		return -errno;
	printf("{\"verifier_limit\":%u,\"programs\":[", XFIB_VERIFIER_LIMIT);
	bpf_object__for_each_program(prog, skel->obj) {
		struct lookup_bpf *one;

		snprintf(name, sizeof(name), "%s", bpf_program__name(prog));
		if (!strcmp(name, "xfib_fwd"))
			continue;
		one = lookup_bpf__open_opts(&oo);
		if (!one) {
			err = -errno;
			goto out;
		}
		bpf_object__for_each_program(p, one->obj)
			bpf_program__set_autoload(p, !strcmp(bpf_program__name(p), name));
		p = bpf_object__find_program_by_name(one->obj, name);
		err = prog_insns_load(one->obj, p, &n);
		printf("%s{\"program\":\"%s\",\"loaded\":%s,\"verified_insns\":%u}",
		       sep, name, err ? "false" : "true", n);
		sep = ",";
		if (err) {
			err_msg("%s: the verifier refused it (%s, %u instructions processed)",
				name, strerror(-err), n);
			failed++;
		}
		lookup_bpf__destroy(one);
	}
	err = failed ? -ENOEXEC : 0;
out:
	printf("]}\n");
	lookup_bpf__destroy(skel);
	return err;
}

/* Fills the family's LPM_TRIE with the prefixes read, value 1. */
static int fill_lpm(struct bench *b)
{
	int fd = bpf_map__fd(b->fam == XFIB_V4 ? b->skel->maps.base_lpm4 :
						 b->skel->maps.base_lpm6);
	struct { __u32 len; __u8 addr[16]; } key;
	__u32 one = 1;
	size_t i;

	for (i = 0; i < npfx; i++) {
		key.len = pfx[i].len;
		memcpy(key.addr, pfx[i].addr, 16);
		/* Duplicates in the input only overwrite. */
		if (bpf_map_update_elem(fd, &key, &one, BPF_ANY))
			return -errno;
	}
	return 0;
}

/* Picks the baseline's program and prepares its table. */
static int open_baseline(struct bench *b, const struct opts *o)
{
	char name[32];
	int err;

	if (!strcmp(o->baseline, "lpm_trie")) {
		err = fill_lpm(b);
		if (err) {
			err_msg("filling the LPM trie: %s", strerror(-err));
			return err;
		}
	} else {
		unsigned int idx = o->iif ? if_nametoindex(o->iif) : 0;

		if (!idx) {
			err_msg("--baseline fib_lookup needs --iif, a port with forwarding on");
			return -EINVAL;
		}
		b->skel->bss->fib_iif = idx;
	}
	snprintf(name, sizeof(name), "%s%d", o->baseline,
		 b->fam == XFIB_V4 ? 4 : 6);
	return pick_progs(b, "base_", name);
}

static void write_keys(struct bench *b, const struct opts *o, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (b->fam == XFIB_V4)
			make_key(b->fam, o->in_prefixes,
				 (__u8 *)&b->skel->bss->keys4[i]);
		else
			make_key(b->fam, o->in_prefixes,
				 b->skel->bss->keys6[i]);
	}
}

/* Writes n keys and measures them, again if the daemon swaps instances
 * meanwhile. */
static int run_set(struct bench *b, const struct opts *o, const char *name,
		   unsigned int n, __u64 seed)
{
	int tries, err;

	rnd_state = seed;
	write_keys(b, o, n);
	if (o->baseline)
		return measure(b, o, name, n);
	for (tries = 0; tries < 5; tries++) {
		err = open_instance(b);
		if (err)
			return err;
		err = measure(b, o, name, n);
		if (err != -EAGAIN)
			return err;
		err_msg("%s: the instance changed during the measurement; again",
			name);
	}
	return err;
}

static bool pow2(unsigned long v)
{
	return v && !(v & (v - 1));
}

static void usage(void)
{
	fprintf(stderr,
		"usage: lookupbench --pin-dir DIR --family 4|6 [--keys random,hot]\n"
		"                   [--source uniform|prefixes] [--nkeys N] [--hot N]\n"
		"                   [--reps N] [--min-time SEC] [--cpu N] [--seed N]\n"
		"                   [--baseline lpm_trie|fib_lookup [--iif IFNAME]] [-v]\n"
		"       lookupbench --pin-dir DIR --verifier\n"
		"  --source prefixes and --baseline lpm_trie read ADDR/LEN lines on stdin\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "pin-dir", required_argument, NULL, 'p' },
		{ "family", required_argument, NULL, 'f' },
		{ "keys", required_argument, NULL, 'k' },
		{ "source", required_argument, NULL, 's' },
		{ "nkeys", required_argument, NULL, 'n' },
		{ "hot", required_argument, NULL, 'H' },
		{ "reps", required_argument, NULL, 'r' },
		{ "min-time", required_argument, NULL, 't' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "seed", required_argument, NULL, 'S' },
		{ "baseline", required_argument, NULL, 'B' },
		{ "iif", required_argument, NULL, 'I' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "verifier", no_argument, NULL, 'V' },
		{}
	};
	struct opts o = {
		.fam = -1, .random = true, .hot = true, .nkeys = 65536,
		.nhot = 8, .reps = 5, .min_time = 0.3, .cpu = -1, .seed = 1,
	};
	struct bench b = { 0 };
	unsigned int keys_max;
	bool verifier = false;
	__u32 algo = 0;
	int c, err = 0;

	while ((c = getopt_long(argc, argv, "v", lopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			o.pin_dir = optarg;
			break;
		case 'f':
			if (!strcmp(optarg, "4") || !strcmp(optarg, "ipv4"))
				o.fam = XFIB_V4;
			else if (!strcmp(optarg, "6") || !strcmp(optarg, "ipv6"))
				o.fam = XFIB_V6;
			else
				usage();
			break;
		case 'k':
			o.random = strstr(optarg, "random") != NULL;
			o.hot = strstr(optarg, "hot") != NULL;
			break;
		case 's':
			if (!strcmp(optarg, "prefixes"))
				o.in_prefixes = true;
			else if (strcmp(optarg, "uniform"))
				usage();
			break;
		case 'n':
			o.nkeys = strtoul(optarg, NULL, 0);
			break;
		case 'H':
			o.nhot = strtoul(optarg, NULL, 0);
			break;
		case 'r':
			o.reps = strtoul(optarg, NULL, 0);
			break;
		case 't':
			o.min_time = strtod(optarg, NULL);
			break;
		case 'c':
			o.cpu = atoi(optarg);
			break;
		case 'S':
			o.seed = strtoull(optarg, NULL, 0);
			break;
		case 'B':
			if (strcmp(optarg, "lpm_trie") && strcmp(optarg, "fib_lookup"))
				usage();
			o.baseline = optarg;
			break;
		case 'I':
			o.iif = optarg;
			break;
		case 'v':
			verbose = 1;
			break;
		case 'V':
			verifier = true;
			break;
		default:
			usage();
		}
	}
	if (verifier && o.pin_dir && optind == argc) {
		libbpf_set_print(libbpf_print);
		err = verify_all(o.pin_dir);
		if (err && err != -ENOEXEC)
			err_msg("loading lookup.bpf.c over %s: %s", o.pin_dir,
				strerror(-err));
		return err ? 1 : 0;
	}
	if (!o.pin_dir || o.fam < 0 || optind != argc || (!o.random && !o.hot))
		usage();
	keys_max = sizeof(((struct lookup_bpf__bss *)0)->keys4) / sizeof(__u32);
	if (!pow2(o.nkeys) || o.nkeys > keys_max || !pow2(o.nhot) ||
	    o.nhot > keys_max) {
		err_msg("--nkeys and --hot must be powers of two, at most %u", keys_max);
		return 2;
	}
	if (o.reps < 1 || o.reps > REPS_MAX || !(o.min_time > 0)) {
		err_msg("--reps must be 1..%d, --min-time positive", REPS_MAX);
		return 2;
	}
	if (o.cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(o.cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			err_msg("cpu %d: %s", o.cpu, strerror(errno));
			return 1;
		}
	}
	/* The LPM trie holds the prefixes on stdin, whatever the keys. */
	if (o.in_prefixes || (o.baseline && !strcmp(o.baseline, "lpm_trie"))) {
		err = read_prefixes(o.fam);
		if (err) {
			err_msg("no IPv%d prefixes on stdin", o.fam == XFIB_V4 ? 4 : 6);
			return 1;
		}
	}
	libbpf_set_print(libbpf_print);

	b.fam = o.fam;
	err = xfib_open(o.pin_dir, 0, &b.fwd);
	if (err) {
		err_msg("%s: %s", o.pin_dir, strerror(-err));
		return 1;
	}
	/*
	 * The algorithm published now: only its programs are loaded
	 * (verifying all of them costs seconds). lookup.sh forces it
	 * before the run; should it change meanwhile, the retry in run_set
	 * finds no program for the new one and says so.
	 */
	if (!o.baseline && !dpl_open(&b.d, b.fwd, o.fam) && b.d.ready)
		algo = b.d.act.algo;
	err = load_prog(o.pin_dir, o.fam, o.baseline, algo, &b.skel);
	if (err) {
		err_msg("loading the lookup programs over %s: %s", o.pin_dir,
			strerror(-err));
		goto out;
	}
	b.k = b.skel->rodata->lookups_per_run;
	if (o.baseline) {
		err = open_baseline(&b, &o);
		if (err)
			goto out;
	}
	if (o.random)
		err = run_set(&b, &o, "random", o.nkeys, o.seed);
	if (!err && o.hot)
		err = run_set(&b, &o, "hot", o.nhot, o.seed + 1);
	if (err == -ENOENT)
		err_msg("IPv%d: no lookup table published",
			o.fam == XFIB_V4 ? 4 : 6);
	else if (err)
		err_msg("%s", strerror(-err));
out:
	dpl_close(&b.d);
	lookup_bpf__destroy(b.skel);
	xfib_fwd_bpf__destroy(b.fwd);
	free(pfx);
	return err ? 1 : 0;
}
