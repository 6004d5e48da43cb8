// SPDX-License-Identifier: GPL-2.0-only
/*
 * The slots of the tables policy rules reach (include/xfib/tables.h):
 * which table each holds, per family.
 *
 * A table keeps its slot for as long as a rule reaches it, so its routes
 * never change class; a table newly reached takes a free slot, first
 * come, and its routes come with the next full sync (until then it is
 * "loading", and fib_tables.c leaves it to the kernel). A slot no rule
 * reaches retires: its routes go at once, its descriptor says KERNEL,
 * and it is free again only once rules that do not name it are
 * published, so a rule never reads a slot that holds another table than
 * the one it was published for. Rules wait for the descriptors
 * (tables_pending) for the same reason. A "lookup main
 * suppress_prefixlength" of another length than 0 takes a slot of its
 * own: a copy of main without local, built from main's tree, with no
 * routes of its own.
 */
#include <linux/fib_rules.h>
#include <linux/rtnetlink.h>

#include "log.h"
#include "rib_priv.h"

/*
 * Whether a lookup of main (the mirrored table) is slot 0's: without
 * suppress_prefixlength, or with 0, wg-quick's, which slot 0's answers
 * can follow at any size of main: an answer from a default route has an
 * index of its own (include/xfib/maps.h, rib_nexthop.c). Another length
 * needs the length of every prefix, kept by a copy in a slot.
 * suppress_ifgroup needs only the answer's nexthop, which either has.
 */
static bool rule_main_slot0(const struct xfib_rule *x)
{
	return x->suppress_prefixlen == 0xffffffff || x->suppress_prefixlen == 0;
}

/* What slot x's lookup needs: false for none (main, local, no lookup). */
static bool rule_table(const struct rib *r, const struct xfib_rule *x,
		       __u32 *table, bool *copy)
{
	if (x->action != FR_ACT_TO_TBL || x->table == RT_TABLE_LOCAL)
		return false;
	*copy = x->table == r->table;
	if (*copy && rule_main_slot0(x))
		return false;
	*table = x->table;
	return true;
}

static int slot_find(const struct rib *r, int fam, __u32 table, bool copy)
{
	int s;

	for (s = 1; s < XFIB_TABLE_SLOTS; s++) {
		const struct rib_tslot *ts = &r->tslot[fam][s];

		if (ts->table == table && ts->main_copy == copy && !ts->retiring)
			return s;
	}
	return -1;
}

__u8 tables_rule_slot(const struct rib *r, int fam, const struct xfib_rule *x)
{
	__u32 table;
	bool copy;
	int s;

	if (x->action != FR_ACT_TO_TBL)
		return XFIB_TSLOT_NONE;
	if (x->table == RT_TABLE_LOCAL)
		return XFIB_TSLOT_LOCAL;
	if (!rule_table(r, x, &table, &copy))
		return XFIB_TSLOT_MAIN;
	s = slot_find(r, fam, table, copy);
	return s < 0 ? XFIB_TSLOT_NONE : s;
}

static bool slot_reached(const struct rib *r, int fam, const struct rib_tslot *ts)
{
	const struct rib_rules *l = &r->rules[fam];
	__u32 i, n = l->n < XFIB_RULES_MAX ? l->n : XFIB_RULES_MAX;
	__u32 table;
	bool copy;

	for (i = 0; i < n; i++)
		if (rule_table(r, &l->v[i], &table, &copy) &&
		    table == ts->table && copy == ts->main_copy)
			return true;
	return false;
}

static void slot_retire(struct rib *r, int fam, int s)
{
	struct rib_tslot *ts = &r->tslot[fam][s];

	pr_info("%s: table %u%s no longer reached by a rule: slot %d freed",
		fam == XFIB_V4 ? "ipv4" : "ipv6", ts->table,
		ts->main_copy ? " (copy)" : "", s);
	ts->retiring = true;
	ts->loading = false;
	ts->dirty = true;
	if (!ts->main_copy)
		routes_flush_class(r, fam, 1 + s);
}

/* Gives table (copy: of main) a free slot; false if none is left. */
static bool slot_take(struct rib *r, int fam, __u32 table, bool copy)
{
	int s;

	for (s = 1; s < XFIB_TABLE_SLOTS; s++) {
		struct rib_tslot *ts = &r->tslot[fam][s];

		if (ts->table || ts->retiring)
			continue;
		ts->table = table;
		ts->main_copy = copy;
		ts->dirty = true;
		ts->src_routes = 0;
		/* A copy of main has its routes already. */
		ts->loading = !copy;
		if (!copy)
			rib_want_resync(r);
		pr_info("%s: table %u%s reached by a rule: slot %d",
			fam == XFIB_V4 ? "ipv4" : "ipv6", table,
			copy ? " (copy of main for suppress_prefixlength)" : "", s);
		return true;
	}
	return false;
}

void tables_assign(struct rib *r, int fam)
{
	const struct rib_rules *l = &r->rules[fam];
	__u32 i, n = l->n < XFIB_RULES_MAX ? l->n : XFIB_RULES_MAX;
	bool changed = false, full = false;
	__u32 table;
	bool copy;
	int s;

	for (s = 1; s < XFIB_TABLE_SLOTS; s++) {
		struct rib_tslot *ts = &r->tslot[fam][s];

		if (ts->table && !ts->retiring && !slot_reached(r, fam, ts)) {
			slot_retire(r, fam, s);
			changed = true;
		}
	}
	for (i = 0; i < n; i++) {
		if (!rule_table(r, &l->v[i], &table, &copy) ||
		    slot_find(r, fam, table, copy) >= 0)
			continue;
		if (slot_take(r, fam, table, copy))
			changed = true;
		else if (!full)
			full = true;
	}
	if (full)
		pr_warn("%s: rules reach more than %d tables besides main and local: the rules of the others are left to the kernel",
			fam == XFIB_V4 ? "ipv4" : "ipv6", XFIB_TABLE_SLOTS - 1);
	if (changed) {
		r->tables_pending = true;
		r->rules_dirty = true;
	}
}

void tables_release(struct rib *r)
{
	int fam, s;

	for (fam = 0; fam < XFIB_FAMILIES; fam++) {
		for (s = 1; s < XFIB_TABLE_SLOTS; s++) {
			struct rib_tslot *ts = &r->tslot[fam][s];

			if (!ts->retiring)
				continue;
			ts->retiring = false;
			ts->table = 0;
			ts->main_copy = false;
			ts->dirty = true;
			r->tables_pending = true;
		}
	}
}

void tables_loaded(struct rib *r)
{
	int fam, s;

	for (fam = 0; fam < XFIB_FAMILIES; fam++) {
		for (s = 1; s < XFIB_TABLE_SLOTS; s++) {
			struct rib_tslot *ts = &r->tslot[fam][s];

			if (!ts->loading)
				continue;
			ts->loading = false;
			ts->dirty = true;
			r->tables_pending = true;
		}
	}
}

int tables_init(struct rib *r)
{
	int fam, s, err = 0;

	for (fam = 0; fam < XFIB_FAMILIES; fam++)
		for (s = 0; s < XFIB_TABLE_SLOTS; s++)
			err = err ?: ptree_init(&r->tslot[fam][s].tree,
						fam == XFIB_V4 ? 32 : 128);
	return err;
}

void tables_fini(struct rib *r)
{
	int fam, s;

	for (fam = 0; fam < XFIB_FAMILIES; fam++)
		for (s = 0; s < XFIB_TABLE_SLOTS; s++)
			ptree_fini(&r->tslot[fam][s].tree);
}
