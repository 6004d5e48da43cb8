/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the unit tests share: failure reports that name the test and the
 * seed, the seeded PRNG that makes a run replayable, allocation that exits
 * on failure, address arithmetic on u128 in host order for any family
 * width (bits: 32 or 128), and the pieces of the realistic table
 * generators (length mixes, unicast addresses, nexthops, relatives).
 *
 * Header only: each unit test is a single file, and static inline keeps
 * the helpers a test does not use out of its warnings. Define TESTLIB_SEED,
 * the test's default seed, before including this.
 */
#ifndef XFIB_TESTLIB_H
#define XFIB_TESTLIB_H

#include <arpa/inet.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/types.h>

#ifndef TESTLIB_SEED
#error "define TESTLIB_SEED (the test's default seed) first"
#endif

typedef unsigned __int128 u128;

static uint64_t seed = TESTLIB_SEED;
static uint64_t rng_state;
static const char *cur_test = "?";

static inline void __attribute__((format(printf, 1, 2), noreturn))
fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "FAIL [%s]: ", cur_test);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (seed 0x%" PRIx64 ")\n", seed);
	exit(1);
}

#define CHECK(cond, ...)                \
	do {                            \
		if (!(cond))            \
			fail(__VA_ARGS__); \
	} while (0)

/*
 * Starts a run: the seed from arg (a number; NULL keeps the seed as it
 * is), the PRNG from it, stdout line buffered so that a failure's report
 * on stderr follows the last line printed, and the line that replays it.
 */
static inline void testlib_start(const char *prog, const char *arg)
{
	const char *name = strrchr(prog, '/') ? strrchr(prog, '/') + 1 : prog;

	if (arg)
		seed = strtoull(arg, NULL, 0);
	rng_state = seed;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("%s: seed 0x%" PRIx64 " (rerun: %s 0x%" PRIx64 ")\n", name,
	       seed, prog, seed);
}

/* splitmix64: small, fast, and the same sequence everywhere. */
static inline uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Draws nothing for n == 0: the tests rely on that to replay a seed. */
static inline uint64_t rnd_below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

static inline void *xmalloc(size_t sz)
{
	void *p = malloc(sz ? sz : 1);

	if (!p) {
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
	return p;
}

static inline void *xrealloc(void *p, size_t sz)
{
	p = realloc(p, sz ? sz : 1);
	if (!p) {
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
	return p;
}

static inline double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- addresses of a family of width bits, host order -------------------- */

static inline u128 last_addr(unsigned int bits)
{
	return bits == 128 ? ~(u128)0 : ((u128)1 << bits) - 1;
}

static inline u128 host_mask(unsigned int bits, unsigned int plen)
{
	return plen == 0 ? last_addr(bits) : ((u128)1 << (bits - plen)) - 1;
}

static inline u128 pfx_first(unsigned int bits, u128 a, unsigned int plen)
{
	return a & ~host_mask(bits, plen);
}

static inline u128 pfx_last(unsigned int bits, u128 a, unsigned int plen)
{
	return a | host_mask(bits, plen);
}

static inline u128 rnd_addr(unsigned int bits)
{
	u128 a = ((u128)rnd() << 64) | rnd();

	return a & last_addr(bits);
}

/* Writes exactly bits / 8 bytes, so exact buffers catch over-reads. */
static inline void to_bytes(unsigned int bits, u128 a, __u8 *b)
{
	unsigned int i, nb = bits / 8;

	for (i = 0; i < nb; i++)
		b[i] = (__u8)(a >> (8 * (nb - 1 - i)));
}

static inline u128 from_bytes(unsigned int bits, const __u8 *b)
{
	unsigned int i;
	u128 a = 0;

	for (i = 0; i < bits / 8; i++)
		a = (a << 8) | b[i];
	return a;
}

/* buf holds INET6_ADDRSTRLEN bytes. */
static inline const char *fmt_addr(unsigned int bits, u128 a, char *buf)
{
	__u8 b[16];

	to_bytes(bits, a, b);
	inet_ntop(bits == 32 ? AF_INET : AF_INET6, b, buf, INET6_ADDRSTRLEN);
	return buf;
}

#define FA(bits, a) fmt_addr((bits), (a), (char[INET6_ADDRSTRLEN]){ 0 })

/* Parses "a.b.c.d" or an IPv6 address; test literals only. */
static inline u128 A(unsigned int bits, const char *s)
{
	__u8 b[16];

	if (inet_pton(bits == 32 ? AF_INET : AF_INET6, s, b) != 1) {
		fprintf(stderr, "bad test address %s\n", s);
		exit(2);
	}
	return from_bytes(bits, b);
}

/* Hash of a prefix for the references' tables; tag: length and the like. */
static inline size_t pfx_hash(u128 key, uint64_t tag)
{
	uint64_t x = (uint64_t)key ^
		     (uint64_t)(key >> 64) * 0x9e3779b97f4a7c15ull;

	x ^= tag * 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 29;
	return (size_t)x;
}

/* A prefix as the linear references scan it. */
struct npfx {
	u128 first, last;
	__u32 nh;
	int plen;
};

/* The definition itself: the nexthop of the longest match, def if none. */
static inline __u32 naive_lpm(const struct npfx *v, size_t n, u128 a,
			      __u32 def)
{
	__u32 nh = def;
	int best = -1;
	size_t i;

	for (i = 0; i < n; i++) {
		if (v[i].plen > best && a >= v[i].first && a <= v[i].last) {
			best = v[i].plen;
			nh = v[i].nh;
		}
	}
	return nh;
}

/* ---- realistic tables ---------------------------------------------------- */

/*
 * A length mix: bands of a draw below 10000, the last one ending at 10000.
 * A band gives lo + rnd_below(n); a split one lets a coin pick that or
 * alt_lo + rnd_below(alt_n). n == 0 draws nothing, as in the mixes the
 * seeds were recorded with.
 */
struct len_band {
	unsigned int below;
	unsigned int lo, n;
	bool split;
	unsigned int alt_lo, alt_n;
};

#define LEN_BAND(b, l, k) { .below = (b), .lo = (l), .n = (k) }
#define LEN_SPLIT(b, l, k, l2, k2)                                    \
	{ .below = (b), .lo = (l), .n = (k), .split = true, .alt_lo = (l2), \
	  .alt_n = (k2) }

static inline unsigned int rnd_len(const struct len_band *band)
{
	unsigned int r = rnd_below(10000);

	while (r >= band->below)
		band++;
	if (band->split)
		return rnd_below(2) ? band->lo + rnd_below(band->n) :
				      band->alt_lo + rnd_below(band->alt_n);
	return band->lo + rnd_below(band->n);
}

/* IPv4 as in a full table: /24 dominates, /0../8 rare. */
static inline unsigned int len_v4(void)
{
	static const struct len_band mix[] = {
		LEN_BAND(5, 0, 9),
		LEN_BAND(105, 9, 7),
		LEN_BAND(3600, 16, 8),
		LEN_BAND(9500, 24, 0),
		LEN_BAND(10000, 25, 8),
	};

	return rnd_len(mix);
}

/* IPv6 as in a full table: /32 and /48 dominate, some /64 and /128. */
static inline unsigned int len_v6(void)
{
	static const struct len_band mix[] = {
		LEN_BAND(5, 0, 29),
		LEN_BAND(1500, 32, 0),
		LEN_BAND(4000, 29, 16),
		LEN_BAND(8500, 48, 0),
		LEN_SPLIT(9000, 45, 3, 49, 15),
		LEN_BAND(9700, 64, 0),
		LEN_BAND(10000, 128, 0),
	};

	return rnd_len(mix);
}

/* Where unrelated prefixes land: unicast space. */
static inline u128 addr_v4(void)
{
	return (u128)(1 + rnd_below(223)) << 24 | (rnd() & 0xffffff);
}

/* 2000::/3 */
static inline u128 addr_v6(void)
{
	return ((u128)((rnd() & ((1ull << 61) - 1)) | (1ull << 61)) << 64) |
	       rnd();
}

/* A few upstreams carry most routes: base + 0..3 mostly, else of nhs. */
static inline __u32 rnd_nh(__u32 base, unsigned int nhs)
{
	return base + (rnd_below(4) ? rnd_below(4) : rnd_below(nhs));
}

/*
 * An address for a new /len related to prefix q (qa/qplen) the way
 * routing tables grow: inside q if inside is set and q is shorter, else
 * in the /len block just before or after the one holding qa. len > 0.
 */
static inline u128 pfx_near(unsigned int bits, u128 qa, unsigned int qplen,
			    unsigned int len, bool inside)
{
	u128 step, a;

	if (inside && qplen < len)
		return qa | (rnd_addr(bits) & host_mask(bits, qplen));
	step = host_mask(bits, len) + 1;
	a = pfx_first(bits, qa, len);
	a = rnd_below(2) ? a + step : a - step;
	return a & last_addr(bits);
}

/* Prints the lengths holding at least 1/share of the n prefixes. */
static inline void print_len_mix(const char *name, const size_t *cnt,
				 unsigned int bits, size_t n,
				 unsigned int share)
{
	unsigned int len;

	printf("    %s%slength mix:", name, *name ? " " : "");
	for (len = 0; len <= bits; len++)
		if (cnt[len] * share >= n)
			printf(" /%u:%zu", len, cnt[len]);
	printf("\n");
}

#endif /* XFIB_TESTLIB_H */
