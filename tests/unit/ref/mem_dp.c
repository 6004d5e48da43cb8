// SPDX-License-Identifier: GPL-2.0-only
/* The dataplane's maps as plain memory (mem_dp.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "mem_dp.h"

static size_t host_find(struct mem_dp *m, const struct xfib_neigh_key *k)
{
	size_t i;

	for (i = 0; i < m->nhosts; i++)
		if (!memcmp(&m->host[i].k, k, sizeof(*k)))
			break;
	return i;
}

static int mem_neigh_host_set(void *ctx, const struct xfib_neigh_key *k, __u32 idx)
{
	struct mem_dp *m = ctx;
	size_t i = host_find(m, k);

	if (i == m->nhosts) {
		if (m->nhosts == sizeof(m->host) / sizeof(m->host[0]))
			return -1;
		m->host[m->nhosts++].k = *k;
	}
	m->host[i].idx = idx;
	return 0;
}

static int mem_neigh_host_del(void *ctx, const struct xfib_neigh_key *k)
{
	struct mem_dp *m = ctx;
	size_t i = host_find(m, k);

	if (i >= m->nhosts)
		return -ENOENT;
	m->host[i] = m->host[--m->nhosts];
	return 0;
}

static int mem_grace_period(void *ctx)
{
	return 0; /* no packet reads this memory */
}

static void mem_daemon_info(void *ctx, const struct xfib_daemon *info)
{
}

static const struct rib_dp_ops mem_ops = {
	.neigh_host_set = mem_neigh_host_set,
	.neigh_host_del = mem_neigh_host_del,
	.grace_period = mem_grace_period,
	.daemon_info = mem_daemon_info,
};

#define NH_LEN (XFIB_NEXTHOP_MAX * sizeof(struct xfib_nexthop))
#define NEIGH_LEN (XFIB_NEIGH_MAX * sizeof(struct xfib_neigh))
#define GRP_LEN (XFIB_GROUP_MAX * sizeof(struct xfib_nh_group))
#define PORT_LEN (XFIB_PORT_MAX * sizeof(struct xfib_port))
#define NONLOCAL4_LEN (XFIB_NONLOCAL4_WORDS * sizeof(__u64))
#define RULES_LEN (2 * XFIB_FAMILIES * sizeof(struct xfib_rule_set))
#define RULES_ACTIVE_LEN (XFIB_FAMILIES * sizeof(struct xfib_rules_active))

/* Pages cost only when touched: the fuzzer maps fresh arrays per input. */
static void *zeroed(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		abort();
	return p;
}

void mem_dp_open(struct rib_dp *dp, struct mem_dp *m, bool with_rules)
{
	memset(m, 0, sizeof(*m));
	memset(dp, 0, sizeof(*dp));
	dp->ops = &mem_ops;
	dp->ctx = m;
	dp->nh = zeroed(NH_LEN);
	dp->neigh = zeroed(NEIGH_LEN);
	dp->grp = zeroed(GRP_LEN);
	dp->port = zeroed(PORT_LEN);
	dp->nonlocal4 = zeroed(NONLOCAL4_LEN);
	if (with_rules) {
		dp->rules = zeroed(RULES_LEN);
		dp->rules_active = zeroed(RULES_ACTIVE_LEN);
	}
}

void mem_dp_close(struct rib_dp *dp)
{
	munmap(dp->nh, NH_LEN);
	munmap(dp->neigh, NEIGH_LEN);
	munmap(dp->grp, GRP_LEN);
	munmap(dp->port, PORT_LEN);
	munmap(dp->nonlocal4, NONLOCAL4_LEN);
	if (dp->rules)
		munmap(dp->rules, RULES_LEN);
	if (dp->rules_active)
		munmap(dp->rules_active, RULES_ACTIVE_LEN);
}
