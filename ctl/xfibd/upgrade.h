/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Upgrading a dataplane pinned by an older xfib (an older layout,
 * include/xfib/maps.h) without a gap: this xfib's maps and program are
 * made beside the old ones in a staging directory, filled by a full sync
 * and what the old maps hold that the kernel does not (the flow hash
 * seed, the egress ports, forced algorithms); only then is the program
 * replaced on every port the old one runs on, each port at once
 * (XDP_FLAGS_REPLACE), and the staging directory exchanged with the pin
 * directory in one rename. Until that switch the old dataplane forwards,
 * untouched; a failure before it leaves nothing behind, and one during
 * it puts the old program back on the ports already switched.
 */
#ifndef XFIBD_UPGRADE_H
#define XFIBD_UPGRADE_H

#include <stdbool.h>
#include <linux/types.h>
#include "pin.h"

struct upgrade {
	bool on;       /* this start upgrades the pinned maps */
	bool switched; /* the ports run the new program, the pins are new */
	int from;      /* the pinned (older) layout */
	int stage_lock; /* the staging directory's lock, or -1 */
	char pin_dir[XFIB_PIN_DIR_MAX];
	char stage[XFIB_PIN_DIR_MAX];
};

/*
 * For a pin directory whose maps are of the older layout from: creates the
 * staging directory beside pin_dir (removing one a crashed upgrade left),
 * opens this build's maps and program there into *skel (and *tbl24_fd, as
 * xfib_open_tbl24()), and carries over the old maps' seed, algorithm
 * requests and egress ports. 0, or -errno after saying why with nothing
 * left behind.
 */
int upgrade_open(struct upgrade *u, const char *pin_dir, int from,
		 struct xfib_fwd_bpf **skel, int *tbl24_fd);

/*
 * After the first full sync into skel's maps (sync_ms long): the switch.
 * On success the lock of the pin directory in *lock_fd is the staging
 * directory's (now the pin directory) and the old pins are gone. 0, or
 * -errno after saying why, every port back on the old program.
 */
int upgrade_switch(struct upgrade *u, struct xfib_fwd_bpf *skel, int *lock_fd,
		   __u64 sync_ms);

/* Unless switched: removes the staging directory and its pins (the
 * caller closes the maps). */
void upgrade_abort(struct upgrade *u);

#endif /* XFIBD_UPGRADE_H */
