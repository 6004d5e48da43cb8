// SPDX-License-Identifier: GPL-2.0-only
/*
 * Runs of policy rules on the source, compiled into source ranges for the
 * walk (include/xfib/rules.h says what they are, rule_walk.h how they are
 * read).
 *
 * A rule belongs to a run when whether it matches a forwarded packet
 * depends on nothing but the packet's source: what xfib_rule_selectors()
 * reads of it is its source prefix, or a decision xfibd already made
 * (XFIB_RULE_F_MATCH_NONE), inverted by "not" or not. Every other rule
 * ends a run: one with another selector, one the kernel must judge, and
 * an "iif lo" rule, which the rp_filter walk hands to the kernel. So on
 * every source the first rule of a run that matches is fixed, and is
 * computed here once for each range of sources between two prefix
 * boundaries: over those ranges no prefix of the run changes its answer.
 *
 * Pure: reads the rules as rib_rule.c built them, writes their run
 * fields and set->range.
 */
#include <stdlib.h>
#include <string.h>

#include "rib.h"

typedef unsigned __int128 u128;

enum run_kind {
	RUN_NO,     /* reads more than the source: ends a run */
	RUN_NEVER,  /* matches no source */
	RUN_ALWAYS, /* matches every source */
	RUN_PREFIX, /* matches the sources of its prefix (or, with not,
		     * the others) */
};

static enum run_kind run_kind(const struct xfib_rule *x)
{
	bool inv = x->flags & XFIB_RULE_F_INVERT;

	if (x->cls == XFIB_RULE_KERNEL || (x->flags & XFIB_RULE_F_IIF_LOOPBACK))
		return RUN_NO;
	if (x->flags & XFIB_RULE_F_MATCH_NONE)
		return inv ? RUN_ALWAYS : RUN_NEVER;
	if ((x->flags & (XFIB_RULE_F_IIF | XFIB_RULE_F_SPORT | XFIB_RULE_F_DPORT)) ||
	    x->dst_len || x->tos || x->ip_proto)
		return RUN_NO;
	if (!x->src_len)
		return inv ? RUN_NEVER : RUN_ALWAYS;
	return RUN_PREFIX;
}

/* A rule's source prefix as [first, first + size) in a 128-bit space
 * (IPv4 in the low 32 bits); size 0 stands for the whole space. */
static u128 prefix_first(const struct xfib_rule *x, bool v4, u128 *size)
{
	u128 a = 0;
	unsigned int w = v4 ? 32 : 128, i;

	for (i = 0; i < w / 8; i++)
		a = a << 8 | x->src[i];
	if (!x->src_len || x->src_len > w) {
		*size = 0;
		return 0;
	}
	*size = (u128)1 << (w - x->src_len);
	return a & ~(*size - 1);
}

static bool run_matches(const struct xfib_rule *x, u128 src, bool v4)
{
	u128 first, size;

	switch (run_kind(x)) {
	case RUN_ALWAYS:
		return true;
	case RUN_PREFIX:
		first = prefix_first(x, v4, &size);
		return (src - first < size) != !!(x->flags & XFIB_RULE_F_INVERT);
	default:
		return false;
	}
}

static int u128_cmp(const void *a, const void *b)
{
	u128 x = *(const u128 *)a, y = *(const u128 *)b;

	return x < y ? -1 : x > y;
}

/*
 * Compiles rules [a, b) into ranges from set->range[*used], if they fit
 * and save the walk anything. The boundaries of the run's prefixes cut
 * the source space into pieces on each of which every rule's answer is
 * fixed; each piece gets the first rule that matches its first address,
 * and neighbours with the same rule merge.
 */
static void run_compile(struct xfib_rule_set *set, __u32 a, __u32 b, bool v4,
			__u32 *used)
{
	u128 cut[2 * XFIB_RULES_MAX + 1], size, first;
	__u32 ncut = 0, n = 0, i, k, log2n, rule, prev = ~0u;
	struct xfib_rule_range *out = set->range + *used;
	struct xfib_rule_range tmp[2 * XFIB_RULES_MAX + 1];

	cut[ncut++] = 0;
	for (i = a; i < b; i++) {
		if (run_kind(&set->rule[i]) != RUN_PREFIX)
			continue;
		first = prefix_first(&set->rule[i], v4, &size);
		cut[ncut++] = first;
		/* the end of a prefix that reaches the top is no boundary */
		if (first + size != 0 && (!v4 || first + size <= 0xffffffffu))
			cut[ncut++] = first + size;
	}
	qsort(cut, ncut, sizeof(cut[0]), u128_cmp);
	for (i = 0; i < ncut; i++) {
		if (i && cut[i] == cut[i - 1])
			continue;
		for (rule = a; rule < b; rule++)
			if (run_matches(&set->rule[rule], cut[i], v4))
				break;
		if (rule == prev)
			continue;
		tmp[n].hi = (__u64)(cut[i] >> 64);
		tmp[n].lo = (__u64)cut[i];
		tmp[n].rule = rule;
		tmp[n].run_end = 0;
		prev = rule;
		n++;
	}
	/* A run whose first rule answers every source skips nothing. */
	if (n == 1 && tmp[0].rule == a)
		return;
	for (log2n = 0; (1u << log2n) < n; log2n++)
		;
	if (*used + (1u << log2n) > XFIB_RUN_RANGES)
		return; /* walked rule by rule */
	/* Padded to a power of two with copies of the last range, which
	 * the bisection then finds for the same sources. */
	for (k = 0; k < (1u << log2n); k++)
		out[k] = tmp[k < n ? k : n - 1];
	out[0].run_end = b;
	set->rule[a].run = 1;
	set->rule[a].run_log2n = log2n;
	set->rule[a].run_off = *used;
	*used += 1u << log2n;
}

void rib_rule_runs(struct xfib_rule_set *set, int fam)
{
	bool v4 = fam == XFIB_V4;
	__u32 i, start, used = 0, n = set->hdr.count;

	if (n > XFIB_RULES_MAX)
		n = XFIB_RULES_MAX;
	for (i = 0; i < n; i++)
		set->rule[i].run = set->rule[i].run_log2n = set->rule[i].run_off = 0;
	memset(set->range, 0, sizeof(set->range));
	if (!set->hdr.walk)
		return;
	for (i = set->hdr.first; i < n;) {
		if (run_kind(&set->rule[i]) == RUN_NO) {
			i++;
			continue;
		}
		for (start = i; i < n && run_kind(&set->rule[i]) != RUN_NO; i++)
			;
		if (i - start >= 2)
			run_compile(set, start, i, v4, &used);
	}
}
