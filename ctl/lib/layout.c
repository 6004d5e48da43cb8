// SPDX-License-Identifier: GPL-2.0-only
/*
 * The layout of the pinned maps (include/xfib/maps.h): read through a pin
 * of its own, not through the skeleton, since the maps around it may be
 * another build's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "layout.h"
#include "pin.h"

int xfib_pin_layout_read(const char *pin_dir, struct xfib_layout *l)
{
	struct bpf_map_info info = {};
	__u32 ilen = sizeof(info), key = 0;
	char path[XFIB_PIN_DIR_MAX + 32];
	void *buf = NULL;
	int fd, err = 0;

	memset(l, 0, sizeof(*l));
	snprintf(path, sizeof(path), "%s/xfib_layout", pin_dir);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	/* A later layout may carry a longer value: read it whole, keep
	 * what this build knows. */
	if (bpf_obj_get_info_by_fd(fd, &info, &ilen))
		err = -errno;
	else if (info.type != BPF_MAP_TYPE_ARRAY || info.key_size != 4 ||
		 info.value_size < sizeof(l->version))
		err = -EPROTO;
	else if (!(buf = calloc(1, info.value_size)))
		err = -ENOMEM;
	else if (bpf_map_lookup_elem(fd, &key, buf))
		err = -errno;
	else
		memcpy(l, buf, info.value_size < sizeof(*l) ? info.value_size :
							       sizeof(*l));
	free(buf);
	close(fd);
	return err;
}

int xfib_pin_layout(const char *pin_dir)
{
	struct xfib_layout l;
	int err = xfib_pin_layout_read(pin_dir, &l);

	if (err == -ENOENT)
		return 0;
	return err ?: (int)l.version;
}

void xfib_layout_stamp(struct xfib_fwd_bpf *skel)
{
	int fd = bpf_map__fd(skel->maps.xfib_layout);
	struct xfib_layout l = {};
	__u32 key = 0;

	if (bpf_map_lookup_elem(fd, &key, &l) || l.version)
		return;
	l.version = XFIB_LAYOUT_VERSION;
	bpf_map_update_elem(fd, &key, &l, BPF_ANY);
}

enum xfib_stale xfib_stale_why(const char *pin_dir, int *pinned, char *why,
			       size_t len)
{
	char what[320];
	int v = xfib_pin_layout(pin_dir);

	*pinned = v > 0 ? v : 0;
	if (v > XFIB_LAYOUT_VERSION) {
		snprintf(why, len, "the pinned maps are layout %d, a newer xfib's; "
			 "this xfib is layout %d and leaves them alone (use the "
			 "newer xfib's xfibd and xfibctl)", v, XFIB_LAYOUT_VERSION);
		return XFIB_STALE_NEWER;
	}
	if (v > 0 && v < XFIB_LAYOUT_VERSION) {
		snprintf(why, len, "the pinned maps are layout %d, an older xfib's; "
			 "this xfib is layout %d: its xfibd upgrades them, taking "
			 "the attached ports over without a gap", v,
			 XFIB_LAYOUT_VERSION);
		return XFIB_STALE_OLDER;
	}
	if (xfib_pin_mismatch(pin_dir, what, sizeof(what))) {
		snprintf(why, len, "the pinned maps are another version of xfib's: %s",
			 what);
		return XFIB_STALE_MISMATCH;
	}
	return XFIB_STALE_NONE;
}
