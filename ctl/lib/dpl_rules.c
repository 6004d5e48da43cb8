// SPDX-License-Identifier: GPL-2.0-only
/*
 * The policy rules' walk from userspace, with the program's own code
 * (include/xfib/rule_walk.h) over the pinned maps mmap()ed read-only:
 * what xfibctl lookup and verify say a packet's rules choose is what the
 * program's do.
 *
 * Consistency: the daemon rewrites a family's half of the rules only
 * while the other is published (include/xfib/rules.h), and a table's
 * ranges only where no descriptor points (include/xfib/tables.h). A walk
 * copies the half it reads and checks xfib_rules_active before and
 * after; a table's descriptor is read before and after its ranges. Either
 * moving means the walk is redone.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/rtnetlink.h>
#include <bpf/libbpf.h>

#include "dpl_priv.h"
#include "pin.h"
#include "xfib_fwd.skel.h"

struct xfib_env {
	const struct dpl *d;
	bool torn; /* a table changed while it was read */
	struct xfib_iface iface; /* copied from xfib_ifaces (dpl_port) */
};

static __u64 xfib_env_table(struct xfib_env *env, __u32 fam, __u32 slot)
{
	__u32 k = fam * XFIB_TABLE_SLOTS + slot;

	if (k >= XFIB_FAMILIES * XFIB_TABLE_SLOTS)
		return 0;
	return __atomic_load_n((const __u64 *)&env->d->tables[k], __ATOMIC_ACQUIRE);
}

static const struct xfib_tr4 *xfib_env_tr4(struct xfib_env *env, __u32 idx)
{
	return idx < XFIB_TPOOL4_SIZE ? &env->d->tpool4[idx] : NULL;
}

static const struct xfib_tr6 *xfib_env_tr6(struct xfib_env *env, __u32 idx)
{
	return idx < XFIB_TPOOL6_SIZE ? &env->d->tpool6[idx] : NULL;
}

static const struct xfib_nexthop *xfib_env_nexthop(struct xfib_env *env,
						   __u32 idx)
{
	return idx < XFIB_NEXTHOP_MAX ? &env->d->nh[idx] : NULL;
}

static const struct xfib_nh_group *xfib_env_group(struct xfib_env *env,
						   __u32 idx)
{
	return idx < XFIB_GROUP_MAX ? &env->d->grp[idx] : NULL;
}

static const struct xfib_iface *xfib_env_iface(struct xfib_env *env,
					       __u32 ifindex)
{
	return dpl_port(env->d, ifindex, &env->iface) ? &env->iface : NULL;
}

#include "xfib/rule_walk.h"

static int xfib_env_rule_ifgroup(struct xfib_env *env, __u32 fam, __u32 group,
				 __u32 nh_idx, __u32 flow_hash, __u32 *hashed)
{
	return xfib_rule_ifgroup(env, fam, group, nh_idx, flow_hash, hashed);
}

/* A large table's instance as mapped for the descriptor word desc. */
struct dpl_table_inst {
	__u64 desc;
	bool mapped;
	struct dpl_tbl t24, t8;
};

static void table_inst_unmap(struct dpl_table_inst *ti)
{
	dpl_tbl_unmap(&ti->t24);
	dpl_tbl_unmap(&ti->t8);
	ti->mapped = false;
}

/*
 * Maps map-in-map slot inst of the family's table algorithm for the
 * table slot whose descriptor reads desc now, unless it is mapped for
 * that word already. The caller reads the descriptor again after the
 * lookup (xfib_env_table_answer): a slot replaced meanwhile is a torn
 * read, redone.
 */
static struct dpl_table_inst *table_inst_map(const struct dpl *d, __u32 inst,
					     __u64 desc)
{
	struct xfib_fwd_bpf *s = d->skel;
	struct dpl_table_inst *ti;
	int o24, o8;

	if (!d->inst || inst < XFIB_SLOTS || inst >= XFIB_INST_SLOTS)
		return NULL;
	ti = &d->inst[(inst - XFIB_SLOTS) / 2];
	if (ti->mapped && ti->desc == desc)
		return ti;
	table_inst_unmap(ti);
	o24 = bpf_map__fd(d->fam == XFIB_V4 ? s->maps.xfib_dir24_tbl24 :
					      s->maps.xfib_trie6_tbl24);
	o8 = bpf_map__fd(d->fam == XFIB_V4 ? s->maps.xfib_dir24_tbl8 :
					     s->maps.xfib_trie6_tbl8);
	if (dpl_map_tbl24(o24, inst, &ti->t24) || dpl_map_pool(o8, inst, &ti->t8)) {
		table_inst_unmap(ti);
		return NULL;
	}
	ti->desc = desc;
	ti->mapped = true;
	return ti;
}

static __u32 xfib_env_table_inst(struct xfib_env *env, __u32 fam, __u32 inst,
				 const struct xfib_rflow *f)
{
	__u32 slot = XFIB_TABLE_SLOTS, s;
	struct dpl_table_inst *ti;
	__u8 daddr[16];
	int i;

	/* The table slot whose instance slot this is: its descriptor keys
	 * the mapping. */
	s = (inst - XFIB_SLOTS) / 2 + 1;
	if (s < XFIB_TABLE_SLOTS)
		slot = s;
	ti = table_inst_map(env->d, inst, xfib_env_table(env, fam, slot));
	if (!ti)
		return ~0u;
	if (fam == XFIB_V4)
		return xfib_dir24_lookup(&ti->t24, &ti->t8, (__u32)f->dst_lo);
	for (i = 0; i < 8; i++) {
		daddr[i] = f->dst_hi >> (56 - 8 * i);
		daddr[8 + i] = f->dst_lo >> (56 - 8 * i);
	}
	return xfib_trie6_lookup(&ti->t24, &ti->t8, daddr);
}

static __u32 xfib_env_table_answer(struct xfib_env *env, __u32 fam,
				   __u32 slot, const struct xfib_rflow *f,
				   __u32 *ans)
{
	__u64 before = xfib_env_table(env, fam, slot & (XFIB_TABLE_SLOTS - 1));
	__u32 r = xfib_table_answer(env, fam, slot, f, ans);

	if (xfib_env_table(env, fam, slot & (XFIB_TABLE_SLOTS - 1)) != before)
		env->torn = true;
	return r;
}

static __u32 xfib_env_rule_run(struct xfib_env *env,
			      const struct xfib_rule_set *set,
			      const struct xfib_rule *x,
			      const struct xfib_rflow *f)
{
	return xfib_rule_run_next(set, x->run_off, x->run_log2n, f->src_hi,
				  f->src_lo);
}

int dpl_rules_map(struct dpl *d)
{
	struct xfib_fwd_bpf *s = d->skel;

	d->rules = xfib_map_mmap(s->maps.xfib_rules, false, &d->rules_len);
	if (!d->rules)
		return -errno;
	d->rules_active = xfib_map_mmap(s->maps.xfib_rules_active, false,
					&d->rules_active_len);
	if (!d->rules_active)
		return -errno;
	d->tables = xfib_map_mmap(s->maps.xfib_tables, false, &d->tables_len);
	if (!d->tables)
		return -errno;
	d->table_info = xfib_map_mmap(s->maps.xfib_table_info, false,
				      &d->table_info_len);
	if (!d->table_info)
		return -errno;
	if (d->fam == XFIB_V4)
		d->tpool4 = xfib_map_mmap(s->maps.xfib_tpool4, false, &d->tpool_len);
	else
		d->tpool6 = xfib_map_mmap(s->maps.xfib_tpool6, false, &d->tpool_len);
	if (!d->tpool4 && !d->tpool6)
		return -errno;
	d->inst = calloc(XFIB_TABLE_SLOTS - 1, sizeof(*d->inst));
	if (!d->inst)
		return -ENOMEM;
	return 0;
}

static void unmap(void *p, size_t len)
{
	if (p)
		munmap(p, len);
}

void dpl_rules_unmap(struct dpl *d)
{
	unmap(d->rules, d->rules_len);
	unmap(d->rules_active, d->rules_active_len);
	unmap(d->tables, d->tables_len);
	unmap(d->table_info, d->table_info_len);
	unmap(d->tpool4 ? (void *)d->tpool4 : (void *)d->tpool6, d->tpool_len);
	if (d->inst) {
		__u32 s;

		for (s = 0; s < XFIB_TABLE_SLOTS - 1; s++)
			table_inst_unmap(&d->inst[s]);
		free(d->inst);
		d->inst = NULL;
	}
}

/* The family's published half into *set (its header, and its rules only
 * if the family walks them: verify asks for every address); its
 * xfib_rules_active word. */
static __u64 rules_copy(const struct dpl *d, struct xfib_rule_set *set)
{
	const struct xfib_rules_active *a = &d->rules_active[d->fam];
	__u64 w = __atomic_load_n((const __u64 *)a, __ATOMIC_ACQUIRE);
	const struct xfib_rule_set *src;
	struct xfib_rules_active cur;
	__u32 n;

	memcpy(&cur, &w, sizeof(cur));
	src = &d->rules[d->fam * 2 + (cur.half & 1)];
	memcpy(&set->hdr, &src->hdr, sizeof(set->hdr));
	n = set->hdr.count < XFIB_RULES_MAX ? set->hdr.count : XFIB_RULES_MAX;
	if (set->hdr.walk || set->hdr.fallback) {
		memcpy(set->rule, src->rule, n * sizeof(set->rule[0]));
		memcpy(set->range, src->range, sizeof(set->range));
	}
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return w;
}

int dpl_rules_route(const struct dpl *d, const struct xfib_rflow *f,
		    __u32 main_nh, __u32 flow_hash, struct dpl_rules_answer *out)
{
	static struct xfib_rule_set set; /* 24 KiB: not on the stack */
	struct xfib_env env = { .d = d };
	const struct xfib_nexthop *nh;
	int tries, n;

	for (tries = 0; tries < DPL_TRIES; tries++) {
		__u64 w = rules_copy(d, &set);

		memset(out, 0, sizeof(*out));
		env.torn = false;
		out->reason = XFIB_NEXT;
		out->nh = main_nh;
		out->count = set.hdr.count < XFIB_RULES_MAX ? set.hdr.count
							    : XFIB_RULES_MAX;
		if (!set.hdr.walk && !set.hdr.fallback)
			goto done;
		out->walked = true;
		out->w.main_nh = main_nh;
		out->w.flow_hash = flow_hash;
		out->w.rule = set.hdr.first;
		out->w.nh = XFIB_NH_IDX_NONE;
		out->w.reason = XFIB_PASS_RULE;
		nh = main_nh < XFIB_NEXTHOP_MAX ? &d->nh[main_nh] : NULL;
		if (set.hdr.fallback != XFIB_RULES_OK) {
			out->reason = XFIB_PASS_RULE;
			out->fallback = set.hdr.fallback;
			out->w.rule = out->count;
		} else if (nh && nh->kind == XFIB_NH_LOCAL) {
			/* local's route: the kernel's (rule_walk.h) */
			out->w.rule = 0;
			out->w.reason = XFIB_NEXT;
			out->w.nh = main_nh;
			out->w.table = RT_TABLE_LOCAL;
			out->reason = XFIB_NEXT;
		} else if (xfib_rules_by_source(&env, d->fam, &set, f, &out->w)) {
			/* as the program does first (rule_walk.h) */
			out->reason = out->w.reason;
			out->nh = out->w.nh;
		} else {
			for (n = 0; n <= XFIB_RULES_MAX; n++)
				if (xfib_rule_step(&env, d->fam, &set, f, &out->w))
					break;
			out->reason = out->w.reason;
			out->nh = out->w.nh;
		}
		if (out->w.rule < out->count)
			out->rule = set.rule[out->w.rule];
done:
		if (env.torn ||
		    __atomic_load_n((const __u64 *)&d->rules_active[d->fam],
				    __ATOMIC_ACQUIRE) != w)
			continue;
		return 0;
	}
	return -EBUSY;
}

int dpl_rules_snapshot(const struct dpl *d, struct xfib_rule_set *set)
{
	int tries;

	for (tries = 0; tries < DPL_TRIES; tries++) {
		__u64 w = rules_copy(d, set);

		if (__atomic_load_n((const __u64 *)&d->rules_active[d->fam],
				    __ATOMIC_ACQUIRE) == w)
			return 0;
	}
	return -EBUSY;
}

void dpl_table_info(const struct dpl *d, __u32 slot, struct xfib_table_info *ti)
{
	memset(ti, 0, sizeof(*ti));
	if (slot < XFIB_TABLE_SLOTS)
		memcpy(ti, &d->table_info[d->fam * XFIB_TABLE_SLOTS + slot],
		       sizeof(*ti));
}

bool dpl_rules_judgeable(int fam, const struct dpl_rules_answer *a)
{
	return !(fam == XFIB_V6 && a->walked && a->w.suppressed);
}
