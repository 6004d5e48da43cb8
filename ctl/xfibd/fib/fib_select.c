// SPDX-License-Identifier: GPL-2.0-only
/*
 * Choosing a lookup structure by table scale, for main's instance (fib.c)
 * and for each table policy rules reach (fib_tables.c): the algorithms'
 * preferences (the formulas' reasons are at the top of fib_bsearch.c and
 * fib_table.c) and the one choice with its 5% hysteresis. Nothing here
 * touches a map, so the unit tests run it as the daemon does.
 */
#include "algo_names.h"
#include "fib_algo.h"

static unsigned int bs_preference(size_t ranges, size_t slot, size_t prefixes)
{
	/* A table needs at most 2n + 1 ranges; before a build only that bound
	 * is known. */
	if ((ranges ? ranges : 2 * prefixes + 1) > slot)
		return 0;
	return fib_clamp_pref(255 - 13 * fib_log2n(prefixes), 255);
}

unsigned int fib_bs4_preference(const struct fib_scale *s)
{
	return bs_preference(s->ranges, XFIB_BS4_SLOT_SIZE, s->prefixes);
}

unsigned int fib_bs6_preference(const struct fib_scale *s)
{
	return bs_preference(s->ranges, XFIB_BS6_SLOT_SIZE, s->prefixes);
}

unsigned int fib_table_preference(const struct fib_scale *s)
{
	return fib_clamp_pref(25 + 10 * fib_log2n(s->prefixes), 250);
}

const struct fib_algo *fib_choose(const struct fib_algo *const *cand, size_t n,
				  int fam, const struct fib_scale *s,
				  const struct fib_algo *cur, unsigned int *pref)
{
	const struct fib_algo *best = NULL;
	size_t i;

	for (i = 0; i < n; i++)
		if (xfib_algo_family(cand[i]->id) == fam)
			pref[cand[i]->id] = cand[i]->preference(s);
	for (i = 0; i < n; i++) {
		const struct fib_algo *a = cand[i];

		if (xfib_algo_family(a->id) != fam || !pref[a->id])
			continue;
		if (!best || pref[a->id] > pref[best->id])
			best = a;
	}
	if (!cur || !pref[cur->id])
		return best; /* none yet, or the current one cannot hold it */
	/* Hysteresis: only a candidate more than 5% better is worth a
	 * rebuild, so a table hovering at the crossing point stays put. */
	if (best && best != cur && pref[best->id] * 100 > pref[cur->id] * 105)
		return best;
	return cur;
}

/*
 * What a rules' table can run, as far as choosing goes: the sorted ranges
 * of the family's pool, which are bsearch's structure (the same bisection
 * over the same ranges, so bsearch's preference), or an instance of the
 * family's map-backed algorithm, the only ones with slots to spare
 * (include/xfib/tables.h).
 */
static const struct fib_algo table_choices[] = {
	{ .id = XFIB_ALGO_BSEARCH4, .preference = fib_bs4_preference },
	{ .id = XFIB_ALGO_DIR24_8, .preference = fib_table_preference },
	{ .id = XFIB_ALGO_BSEARCH6, .preference = fib_bs6_preference },
	{ .id = XFIB_ALGO_TRIE6, .preference = fib_table_preference },
};

#define NCHOICES (sizeof(table_choices) / sizeof(table_choices[0]))

unsigned int fib_tables_choose(int fam, const struct fib_scale *s,
			       unsigned int cur, unsigned int *pref)
{
	const struct fib_algo *cand[NCHOICES], *now = NULL, *a;
	size_t i;

	for (i = 0; i < NCHOICES; i++) {
		cand[i] = &table_choices[i];
		if (table_choices[i].id == cur)
			now = &table_choices[i];
	}
	a = fib_choose(cand, NCHOICES, fam, s, now, pref);
	return a ? a->id : XFIB_ALGO_NONE;
}
