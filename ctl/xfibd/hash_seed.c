// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <string.h>
#include <sys/random.h>
#include <bpf/bpf.h>

#include "xfib/maps.h"
#include "xfib_fwd.skel.h"
#include "log.h"
#include "hash_seed.h"

static int seed_write(int fd, __u32 seed, __u32 origin)
{
	struct xfib_hash_seed s = { .seed = seed, .origin = origin };
	__u32 key = 0;

	if (bpf_map_update_elem(fd, &key, &s, BPF_ANY)) {
		pr_warn("writing the flow hash seed: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

int hash_seed_init(struct xfib_fwd_bpf *skel, bool set, __u32 value)
{
	int fd = bpf_map__fd(skel->maps.xfib_hash_seed);
	struct xfib_hash_seed cur;
	__u32 key = 0, seed;

	if (bpf_map_lookup_elem(fd, &key, &cur)) {
		pr_warn("reading the flow hash seed: %s", strerror(errno));
		return -errno;
	}
	if (set) {
		if (cur.origin != XFIB_SEED_NONE && cur.seed != value)
			pr_info("flow hash seed 0x%08x set (was 0x%08x): multipath flows may change paths once",
				value, cur.seed);
		return seed_write(fd, value, XFIB_SEED_SET);
	}
	if (cur.origin != XFIB_SEED_NONE)
		return 0;
	/* Once per pin directory; a router that cannot draw one is better
	 * told than given a seed anyone can guess. */
	if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed)) {
		pr_warn("drawing a flow hash seed: %s", strerror(errno));
		return -errno;
	}
	pr_info("flow hash seed 0x%08x drawn at random (kept in the pinned maps)",
		seed);
	return seed_write(fd, seed, XFIB_SEED_RANDOM);
}
