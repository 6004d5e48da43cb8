// SPDX-License-Identifier: GPL-2.0-only
/*
 * xfib_nonlocal4: where an IPv4 source cannot be one of the router's own
 * (include/xfib/maps.h): a bit per /16 for the local prefixes shorter than
 * /32, a bit per hash slot for the local /32s. Where a source's two bits
 * are set, the forwarder skips its lookup on ports without rp_filter.
 *
 * Per bit, the RIB counts the committed IPv4 prefixes whose answer is a
 * local nexthop and that fall under it: of main and local, and of the
 * tables policy rules reach, where the kernel's check of a source (with
 * rules, a lookup through them even with rp_filter off:
 * fib_validate_source()) finds a local route as well. A bit must be
 * clear while any packet can still find a local answer under it, so:
 *  - a bit is cleared as its count leaves 0, at the commit, before the
 *    lookup structures hear of the prefix;
 *  - a bit whose count returns to 0 is set only once those structures no
 *    longer hold the prefix (rib_local4_settle, after the family's flush
 *    has reached them).
 * A packet reads its bits before it looks anything up, so either order it
 * sees is one the kernel could have given. Until the first settle every
 * bit is clear: a previous xfibd's instance may still serve, with local
 * routes this one has not read yet. (A map nobody wrote is all clear too:
 * the program then looks every source up.)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rib_priv.h"

#define STALE_WORDS (XFIB_NONLOCAL4_WORDS / 64)

static void word_store(struct rib *r, __u32 w, __u64 v)
{
	/* Before anything written after it: a lookup structure must not
	 * hold a local answer under a bit that still rules it out. */
	__atomic_store_n(&r->dp.nonlocal4[w], v, __ATOMIC_SEQ_CST);
}

static bool nonlocal_bit(const struct rib *r, __u32 b)
{
	return r->dp.nonlocal4[b / 64] >> (b % 64) & 1;
}

int local4_init(struct rib *r)
{
	__u32 w;

	r->local4_count = calloc(XFIB_NONLOCAL4_BITS, sizeof(*r->local4_count));
	r->local4_stale = calloc(STALE_WORDS, sizeof(*r->local4_stale));
	if (!r->local4_count || !r->local4_stale)
		return -ENOMEM;
	for (w = 0; w < XFIB_NONLOCAL4_WORDS; w++)
		word_store(r, w, 0);
	memset(r->local4_stale, 0xff, STALE_WORDS * sizeof(*r->local4_stale));
	return 0;
}

void local4_fini(struct rib *r)
{
	free(r->local4_count);
	free(r->local4_stale);
}

/* The bits an IPv4 prefix sets: first, and how many. */
static void prefix_bits(const struct rib_prefix *p, __u32 *first, __u32 *n)
{
	const __u8 *a = p->key.dst;
	__u32 addr = (__u32)a[0] << 24 | (__u32)a[1] << 16 | (__u32)a[2] << 8 | a[3];
	unsigned int plen = p->key.plen;

	if (plen == 32) {
		*first = XFIB_NONLOCAL4_SLOT_BIT(addr);
		*n = 1;
	} else if (plen >= 16) {
		*first = XFIB_NONLOCAL4_BLOCK_BIT(addr);
		*n = 1;
	} else {
		*n = 1u << (16 - plen);
		*first = XFIB_NONLOCAL4_BLOCK_BIT(addr) & ~(*n - 1);
	}
}

void local4_commit(struct rib *r, struct rib_prefix *p, bool local)
{
	__u32 first, n, b, w;

	if (p->answer_local == local)
		return;
	p->answer_local = local;
	prefix_bits(p, &first, &n);
	for (b = first; b < first + n; b++) {
		w = b / 64;
		if (local) {
			if (r->local4_count[b]++ == 0 && nonlocal_bit(r, b))
				word_store(r, w, r->dp.nonlocal4[w] & ~(1ull << (b % 64)));
		} else if (--r->local4_count[b] == 0) {
			r->local4_stale[w / 64] |= 1ull << (w % 64);
		}
	}
}

/* What word w is to say: its bits whose count is 0 are set. */
static __u64 word_wanted(const struct rib *r, __u32 w)
{
	__u64 v = 0;
	__u32 i;

	for (i = 0; i < 64; i++)
		if (!r->local4_count[w * 64 + i])
			v |= 1ull << i;
	return v;
}

void rib_local4_settle(struct rib *r)
{
	__u32 s, w;
	__u64 v;

	for (s = 0; s < STALE_WORDS; s++) {
		while (r->local4_stale[s]) {
			w = s * 64 + __builtin_ctzll(r->local4_stale[s]);
			r->local4_stale[s] &= r->local4_stale[s] - 1;
			v = word_wanted(r, w);
			if (r->dp.nonlocal4[w] != v)
				word_store(r, w, v);
		}
	}
}

/* Counts each bit's local prefixes again, from the committed answers. */
static bool recount(const struct rib *r, __u32 *count, char *why, size_t len)
{
	struct rib_prefix *p;
	__u32 nh, first, n, b;
	size_t i;

	htab_for_each(&r->prefixes[XFIB_V4], p, tmp, i) {
		bool local;

		const struct ptree *t = p->key.tclass > RIB_TCLASS_LOCAL ?
			&r->tslot[XFIB_V4][p->key.tclass - 1].tree :
			&r->tree[XFIB_V4][p->key.tclass];

		local = !ptree_get(t, p->key.dst, p->key.plen, &nh) &&
			r->dp.nh[nh & ~RIB_TABLE_SRC].kind == XFIB_NH_LOCAL;

		if (local != p->answer_local) {
			snprintf(why, len, "local4: a /%u %s local, counted %s",
				 p->key.plen, local ? "answers" : "does not answer",
				 p->answer_local ? "local" : "not");
			return false;
		}
		if (!local)
			continue;
		prefix_bits(p, &first, &n);
		for (b = first; b < first + n; b++)
			count[b]++;
	}
	return true;
}

bool local4_check(const struct rib *r, char *why, size_t len)
{
	__u32 *count = calloc(XFIB_NONLOCAL4_BITS, sizeof(*count));
	bool ok = false;
	__u32 b, w;

	if (!count) {
		snprintf(why, len, "out of memory");
		return false;
	}
	if (!recount(r, count, why, len))
		goto out;
	for (b = 0; b < XFIB_NONLOCAL4_BITS; b++) {
		w = b / 64;
		if (count[b] != r->local4_count[b]) {
			snprintf(why, len, "local4: bit %u counts %u, holds %u",
				 b, r->local4_count[b], count[b]);
			goto out;
		}
		if (count[b] && nonlocal_bit(r, b)) {
			snprintf(why, len, "local4: bit %u set over a local answer", b);
			goto out;
		}
		if (!count[b] && !nonlocal_bit(r, b) &&
		    !(r->local4_stale[w / 64] >> (w % 64) & 1)) {
			snprintf(why, len, "local4: bit %u clear, nothing local, not stale", b);
			goto out;
		}
	}
	ok = true;
out:
	free(count);
	return ok;
}
