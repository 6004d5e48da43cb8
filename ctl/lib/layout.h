/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The layout of a pin directory's maps (struct xfib_layout): which xfib
 * made them, and whether this build may use them, upgrade them or must
 * leave them alone.
 */
#ifndef XFIB_LAYOUT_H
#define XFIB_LAYOUT_H

#include <stddef.h>
#include "xfib/maps.h"

struct xfib_fwd_bpf;

/*
 * The layout of the maps pinned in pin_dir: the version in their
 * xfib_layout, 0 if none is pinned there (no maps, or maps of a build from
 * before the layout was kept), or -errno.
 */
int xfib_pin_layout(const char *pin_dir);

/* The whole xfib_layout entry pinned in pin_dir into *l (the part both
 * builds know; the rest zero): 0 or -errno. */
int xfib_pin_layout_read(const char *pin_dir, struct xfib_layout *l);

/* Writes this build's layout into the opened maps if they carry none yet
 * (just created, or pinned by a build from before the layout was kept). */
void xfib_layout_stamp(struct xfib_fwd_bpf *skel);

enum xfib_stale {
	XFIB_STALE_NONE = 0,
	XFIB_STALE_NEWER,    /* a newer xfib's layout: left alone */
	XFIB_STALE_OLDER,    /* an older xfib's: this one's xfibd upgrades it */
	XFIB_STALE_MISMATCH, /* maps that differ from this build's at the same
			      * layout, or at none: refused (xfib_pin_mismatch) */
};

/*
 * Why xfib_open() found pin_dir's maps stale (-ESTALE): the kind, with
 * *pinned set to the pinned layout, and why filled in with what to say
 * (the layouts, or the map that differs and both definitions).
 */
enum xfib_stale xfib_stale_why(const char *pin_dir, int *pinned, char *why,
			       size_t len);

#endif /* XFIB_LAYOUT_H */
