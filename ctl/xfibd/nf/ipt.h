/* SPDX-License-Identifier: GPL-2.0-only */
/* Legacy iptables and ip6tables tables (ipt.c). */
#ifndef XFIB_IPT_H
#define XFIB_IPT_H

#include <linux/types.h>
#include "nfrules.h"

/*
 * Adds the legacy tables of this network namespace to rs, and sets *hash
 * to a hash of their rules (not their counters), which changes when a
 * rule does. 0, -EAGAIN if a table changed while read, or -errno.
 */
int ipt_read(struct nfx_ruleset *rs, __u64 *hash);

#endif /* XFIB_IPT_H */
