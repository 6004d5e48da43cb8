// SPDX-License-Identifier: GPL-2.0-only
/*
 * fwdvariant: attaches a build of xfib's forwarder made for a measurement
 * (make bench-fwd: without the per-port counters, or without the trace
 * hook) to router ports, sharing the router's pinned maps as xfibctl
 * attach does, so that the daemon keeps feeding it and xfibctl detach
 * removes it.
 *
 *   fwdvariant --obj FILE --pin-dir DIR IFNAME...
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

static int attach(const char *obj_path, const char *dir, int nifs, char **ifs)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .pin_root_path = dir);
	struct bpf_object *obj;
	struct bpf_map *tx;
	char path[512];
	int i, err, fd, tx_fd;

	obj = bpf_object__open_file(obj_path, &opts);
	if (!obj)
		return -errno;
	/* The devmap is pinned by xfib's loader, not by libbpf (bpf/lib/maps.h). */
	tx = bpf_object__find_map_by_name(obj, "xfib_tx_ports");
	snprintf(path, sizeof(path), "%s/xfib_tx_ports", dir);
	tx_fd = bpf_obj_get(path);
	if (!tx || tx_fd < 0) {
		err = -ENOENT;
		goto out;
	}
	err = bpf_map__reuse_fd(tx, tx_fd);
	close(tx_fd);
	err = err ?: bpf_object__load(obj);
	if (err)
		goto out;
	fd = bpf_program__fd(bpf_object__find_program_by_name(obj, "xfib_fwd"));
	for (i = 0; i < nifs; i++) {
		struct bpf_devmap_val dv = { .ifindex = if_nametoindex(ifs[i]) };

		if (!dv.ifindex) {
			err = -ENODEV;
			break;
		}
		err = bpf_xdp_attach(dv.ifindex, fd, XDP_FLAGS_DRV_MODE, NULL);
		if (!err && bpf_map_update_elem(bpf_map__fd(tx), &dv.ifindex, &dv, 0))
			err = -errno;
		if (err)
			break;
	}
out:
	bpf_object__close(obj);
	return err;
}

int main(int argc, char **argv)
{
	int err;

	if (argc < 6 || strcmp(argv[1], "--obj") || strcmp(argv[3], "--pin-dir")) {
		fprintf(stderr, "usage: fwdvariant --obj FILE --pin-dir DIR IFNAME...\n");
		return 2;
	}
	err = attach(argv[2], argv[4], argc - 5, argv + 5);
	if (err)
		fprintf(stderr, "fwdvariant: %s: %s\n", argv[2], strerror(-err));
	return err ? 1 : 0;
}
