// SPDX-License-Identifier: GPL-2.0-only
/*
 * lookupbench: lookups per second of the live dataplane's longest-prefix
 * match, in the kernel and in native C over the same memory, in one run.
 *
 *   lookupbench --pin-dir DIR --family 4|6 [--keys random,hot]
 *               [--source uniform|prefixes] [--nkeys N] [--hot N]
 *               [--reps N] [--min-time SEC] [--cpu N] [--seed N]
 *               [--baseline lpm_trie|fib_lookup [--iif IFNAME]] [-v]
 *
 * Kernel: tests/bench/lookup.bpf.c, loaded with the router's pin directory
 * as pin root so that its maps are the live pinned ones, run with
 * BPF_PROG_TEST_RUN; the time per lookup is the run time the kernel
 * reports divided by the lookups per run. Native: ctl/lib/dplookup.c maps the
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
 * Each key set is measured --reps times, kernel then native each time, with
 * enough runs for --min-time seconds (0.3); the medians are reported. One
 * JSON object per key set is printed on stdout. The process pins itself to
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
 * Each result also gives the measured program's size after the verifier
 * (instructions, JITed bytes) and the calls left in it: the helper calls
 * show which map lookups the verifier could not inline.
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
#include "lookup.skel.h"

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
	int prog_fd;
	__u32 algo;
	__u32 k; /* lookups per run */
	__u32 mask;
	/* the native loop's own cursor and sum, as the program's in .bss */
	__u32 pos;
	__u64 acc;
};

static __u64 live_word(const struct bench *b)
{
	return active_word(&b->d);
}

/*
 * Native runs: per run, the active word once, then k lookups, as the
 * program does. Returns -EAGAIN if the instance changed under us (the
 * tables mapped are then no longer the published ones).
 */
static int native_runs(struct bench *b, unsigned long runs)
{
	const struct lookup_bpf__bss *bss = b->skel->bss;
	struct dpl *d = &b->d;
	__u64 want, sum = 0;
	__u32 p = b->pos, m = b->mask, k = b->k, i;
	unsigned long r;

	memcpy(&want, &d->act, sizeof(want));
	for (r = 0; r < runs; r++) {
		if (live_word(b) != want)
			return -EAGAIN;
		switch (b->algo) {
		case XFIB_ALGO_BSEARCH4:
			for (i = 0; i < k; i++)
				sum += xfib_bs4_lookup(&d->bs, d->act.slot,
						       d->act.log2n,
						       ntohl(bss->keys4[(p + i) & m]));
			break;
		case XFIB_ALGO_DIR24_8:
			for (i = 0; i < k; i++)
				sum += xfib_dir24_lookup(&d->t24, &d->t8,
							 ntohl(bss->keys4[(p + i) & m]));
			break;
		case XFIB_ALGO_DXR:
			for (i = 0; i < k; i++)
				sum += xfib_dxr_lookup(&d->dxr_direct, &d->dxr_ranges,
						       d->act.slot,
						       ntohl(bss->keys4[(p + i) & m]));
			break;
		case XFIB_ALGO_BSEARCH6:
			for (i = 0; i < k; i++) {
				const __u8 *a = bss->keys6[(p + i) & m];
				__u64 hi, lo;

				memcpy(&hi, a, 8);
				memcpy(&lo, a + 8, 8);
				sum += xfib_bs6_lookup(&d->bs, d->act.slot,
						       d->act.log2n, be64toh(hi),
						       be64toh(lo));
			}
			break;
		case XFIB_ALGO_TRIE6:
			for (i = 0; i < k; i++)
				sum += xfib_trie6_lookup(&d->t24, &d->t8,
							 bss->keys6[(p + i) & m]);
			break;
		case XFIB_ALGO_POPTRIE6:
			for (i = 0; i < k; i++) {
				const __u8 *a = bss->keys6[(p + i) & m];
				__u64 hi, lo;

				memcpy(&hi, a, 8);
				memcpy(&lo, a + 8, 8);
				sum += xfib_pt6_lookup(&d->pt6_direct, &d->pt6_nodes,
						       &d->pt6_leaves, d->act.slot,
						       be64toh(hi), be64toh(lo));
			}
			break;
		}
		p += k;
	}
	b->pos = p;
	b->acc += sum;
	return 0;
}

/*
 * Kernel runs: one BPF_PROG_TEST_RUN with repeat = runs. Returns the mean
 * ns per run the kernel measured, or -EAGAIN if the program found another
 * instance published.
 */
static double bpf_runs(struct bench *b, unsigned long runs)
{
	/* Never sent anywhere: the program only needs a context. */
	static __u8 frame[64];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame,
		    .data_size_in = sizeof(frame), .repeat = runs);
	__u64 mm = b->skel->bss->mismatches;

	if (bpf_prog_test_run_opts(b->prog_fd, &o))
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

static void print_list(const char *name, const double *v, int n)
{
	int i;

	printf(",\"%s\":[", name);
	for (i = 0; i < n; i++)
		printf("%s%.4f", i ? "," : "", v[i]);
	printf("]");
}

static const char *algo_name(__u32 a)
{
	switch (a) {
	case XFIB_ALGO_BSEARCH4:
		return "bsearch4";
	case XFIB_ALGO_DIR24_8:
		return "dir24_8";
	case XFIB_ALGO_DXR:
		return "dxr";
	case XFIB_ALGO_BSEARCH6:
		return "bsearch6";
	case XFIB_ALGO_TRIE6:
		return "trie6";
	case XFIB_ALGO_POPTRIE6:
		return "poptrie6";
	default:
		return "none";
	}
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
 * not inline, bpf_fib_lookup) and BPF-to-BPF calls (the bpf_loop body).
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

/* Measures one key set: keys already written, n of them (a power of 2). */
static int measure(struct bench *b, const struct opts *o, const char *name,
		   unsigned int n)
{
	double bpf_ns[REPS_MAX], nat_ns[REPS_MAX], t0, per_run;
	unsigned long runs, pass;
	__u64 bpf_sum, nat_sum;
	unsigned int hits = 0, i, rep;
	int err;

	b->mask = n - 1;
	b->skel->bss->key_mask = n - 1;
	/* Hit rate: keys with a route (native, one lookup per key). */
	for (i = 0; i < n; i++) {
		const __u8 *a = b->fam == XFIB_V4 ?
			(const __u8 *)&b->skel->bss->keys4[i] :
			b->skel->bss->keys6[i];

		hits += dpl_lookup(&b->d, a) != XFIB_NH_IDX_NONE;
	}
	/* One pass over the keys (or one run, if there are fewer keys than
	 * lookups per run) from position 0 in both: the sums must agree. */
	pass = n >= b->k ? n / b->k : 1;
	b->skel->bss->pos = 0;
	b->skel->bss->acc = 0;
	b->pos = 0;
	b->acc = 0;
	per_run = bpf_runs(b, pass);
	err = native_runs(b, pass);
	if (per_run == -EAGAIN || err == -EAGAIN)
		return -EAGAIN;
	if (per_run < 0)
		return per_run;
	bpf_sum = b->skel->bss->acc;
	nat_sum = b->acc;
	if (bpf_sum != nat_sum)
		err_msg("%s: kernel and native sums differ over one pass: %llu vs %llu",
			name, (unsigned long long)bpf_sum,
			(unsigned long long)nat_sum);

	/* Calibrate on the kernel side (also warms caches and TLB). */
	per_run = bpf_runs(b, 2000);
	if (per_run < 0)
		return per_run;
	if (per_run < 1)
		per_run = 1;
	runs = o->min_time * 1e9 / per_run + 1;
	if (runs > UINT_MAX)
		runs = UINT_MAX;
	if (native_runs(b, runs / 10 + 1))
		return -EAGAIN;

	for (rep = 0; rep < o->reps; rep++) {
		double d = bpf_runs(b, runs);

		if (d < 0)
			return d;
		bpf_ns[rep] = d / b->k;
		t0 = now_s() * 1e9;
		err = native_runs(b, runs);
		if (err)
			return err;
		nat_ns[rep] = (now_s() * 1e9 - t0) / ((double)runs * b->k);
		if (verbose)
			fprintf(stderr, "%s %s rep %u: kernel %.3f ns, native %.3f ns\n",
				algo_name(b->algo), name, rep, bpf_ns[rep],
				nat_ns[rep]);
	}
	printf("{\"family\":\"ipv%d\",\"algorithm\":\"%s\",\"generation\":%u,"
	       "\"slot\":%u,\"keys\":\"%s\",\"key_source\":\"%s\","
	       "\"nkeys\":%u,\"hit_pct\":%.2f,\"lookups_per_run\":%u,"
	       "\"runs\":%lu,\"repetitions\":%u,\"check\":%s,"
	       "\"bpf_ns_median\":%.4f,\"native_ns_median\":%.4f",
	       b->fam == XFIB_V4 ? 4 : 6, algo_name(b->algo),
	       b->d.act.generation, b->d.act.slot, name,
	       o->in_prefixes ? "prefixes" : "uniform", n, 100.0 * hits / n,
	       b->k, runs, o->reps, bpf_sum == nat_sum ? "true" : "false",
	       median(bpf_ns, o->reps), median(nat_ns, o->reps));
	print_list("bpf_ns", bpf_ns, o->reps);
	print_list("native_ns", nat_ns, o->reps);
	print_prog_shape(b->prog_fd);
	printf("}\n");
	fflush(stdout);
	return 0;
}

/*
 * A baseline's key set: kernel runs only. The hit rate comes from the
 * program's own count over one pass of the keys.
 */
static int measure_base(struct bench *b, const struct opts *o,
			const char *name, unsigned int n)
{
	double bpf_ns[REPS_MAX], per_run;
	unsigned long runs, pass;
	unsigned int rep;

	b->skel->bss->key_mask = n - 1;
	pass = n >= b->k ? n / b->k : 1;
	b->skel->bss->pos = 0;
	b->skel->bss->acc = 0;
	per_run = bpf_runs(b, pass);
	if (per_run < 0)
		return per_run;
	b->acc = b->skel->bss->acc;

	per_run = bpf_runs(b, 2000);
	if (per_run < 0)
		return per_run;
	if (per_run < 1)
		per_run = 1;
	runs = o->min_time * 1e9 / per_run + 1;
	if (runs > UINT_MAX)
		runs = UINT_MAX;
	for (rep = 0; rep < o->reps; rep++) {
		double d = bpf_runs(b, runs);

		if (d < 0)
			return d;
		bpf_ns[rep] = d / b->k;
		if (verbose)
			fprintf(stderr, "%s %s rep %u: kernel %.3f ns\n",
				o->baseline, name, rep, bpf_ns[rep]);
	}
	printf("{\"family\":\"ipv%d\",\"algorithm\":\"%s\",\"baseline\":true,"
	       "\"keys\":\"%s\",\"key_source\":\"%s\",\"nkeys\":%u,"
	       "\"hit_pct\":%.2f,\"lookups_per_run\":%u,\"runs\":%lu,"
	       "\"repetitions\":%u,\"check\":true,\"bpf_ns_median\":%.4f,"
	       "\"native_ns_median\":null",
	       b->fam == XFIB_V4 ? 4 : 6, o->baseline, name,
	       o->in_prefixes ? "prefixes" : "uniform", n,
	       100.0 * b->acc / ((double)pass * b->k), b->k, runs, o->reps,
	       median(bpf_ns, o->reps));
	print_list("bpf_ns", bpf_ns, o->reps);
	print_prog_shape(b->prog_fd);
	printf(",\"native_ns\":[]}\n");
	fflush(stdout);
	return 0;
}

/*
 * Points b at the family's published instance: maps its tables and picks
 * the program for its algorithm. -ENOENT if the family has no instance
 * (no table published: nothing to measure).
 */
static int open_instance(struct bench *b)
{
	struct bpf_program *prog;
	int err;

	dpl_close(&b->d);
	err = dpl_open(&b->d, b->fwd, b->fam);
	if (err)
		return err;
	if (!b->d.ready)
		return -ENOENT;
	b->algo = b->d.act.algo;
	switch (b->algo) {
	case XFIB_ALGO_BSEARCH4:
		prog = b->skel->progs.lookup_bsearch4;
		break;
	case XFIB_ALGO_DIR24_8:
		prog = b->skel->progs.lookup_dir24_8;
		break;
	case XFIB_ALGO_DXR:
		prog = b->skel->progs.lookup_dxr;
		break;
	case XFIB_ALGO_BSEARCH6:
		prog = b->skel->progs.lookup_bsearch6;
		break;
	case XFIB_ALGO_TRIE6:
		prog = b->skel->progs.lookup_trie6;
		break;
	case XFIB_ALGO_POPTRIE6:
		prog = b->skel->progs.lookup_poptrie6;
		break;
	default:
		return -ENOENT;
	}
	b->prog_fd = bpf_program__fd(prog);
	return 0;
}

/* Loads the benchmark program over the maps pinned in pin_dir. */
static int load_prog(const char *pin_dir, int fam, const char *baseline,
		     struct lookup_bpf **skelp)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .pin_root_path = pin_dir);
	char tx_path[XFIB_PIN_DIR_MAX + 32];
	bool v4 = fam == XFIB_V4;
	struct bpf_program *prog;
	struct lookup_bpf *skel;
	int err, fd;

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
		bpf_program__set_autoload(v4 ? skel->progs.lookup_bsearch4 :
					       skel->progs.lookup_bsearch6, true);
		bpf_program__set_autoload(v4 ? skel->progs.lookup_dir24_8 :
					       skel->progs.lookup_trie6, true);
		bpf_program__set_autoload(v4 ? skel->progs.lookup_dxr :
					       skel->progs.lookup_poptrie6, true);
	} else if (!strcmp(baseline, "lpm_trie")) {
		bpf_program__set_autoload(v4 ? skel->progs.base_lpm_trie4 :
					       skel->progs.base_lpm_trie6, true);
	} else {
		bpf_program__set_autoload(v4 ? skel->progs.base_fib_lookup4 :
					       skel->progs.base_fib_lookup6, true);
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
	bool v4 = b->fam == XFIB_V4;
	struct bpf_program *prog;
	int err;

	if (!strcmp(o->baseline, "lpm_trie")) {
		prog = v4 ? b->skel->progs.base_lpm_trie4 :
			    b->skel->progs.base_lpm_trie6;
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
		prog = v4 ? b->skel->progs.base_fib_lookup4 :
			    b->skel->progs.base_fib_lookup6;
		b->skel->bss->fib_iif = idx;
	}
	b->prog_fd = bpf_program__fd(prog);
	return 0;
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
		return measure_base(b, o, name, n);
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
		{}
	};
	struct opts o = {
		.fam = -1, .random = true, .hot = true, .nkeys = 65536,
		.nhot = 8, .reps = 5, .min_time = 0.3, .cpu = -1, .seed = 1,
	};
	struct bench b = { 0 };
	unsigned int keys_max;
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
		default:
			usage();
		}
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
	err = load_prog(o.pin_dir, o.fam, o.baseline, &b.skel);
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
