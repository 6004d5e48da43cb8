// SPDX-License-Identifier: GPL-2.0-only
/* xfibctl attach, detach: our XDP program on ports, and the egress devmap. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "xdpfeat.h"
#include "xfibctl.h"

static int resolve_ifaces(char **names, int n, int *ifindex)
{
	int i;

	for (i = 0; i < n; i++) {
		ifindex[i] = if_nametoindex(names[i]);
		if (!ifindex[i]) {
			err_cmd("%s: no such interface", names[i]);
			return -ENODEV;
		}
	}
	return 0;
}

static int detach_one(struct xfib_fwd_bpf *skel, int ifindex, __u32 prog_id,
		      __u8 mode)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, o, .old_prog_fd = -1);
	__u32 flags = mode == XDP_ATTACHED_SKB ? XDP_FLAGS_SKB_MODE :
						 XDP_FLAGS_DRV_MODE;
	int err, fd;

	/* Remove the egress entry first: no packet is redirected to a port
	 * that is about to stop being ours. */
	if (skel)
		bpf_map_delete_elem(bpf_map__fd(skel->maps.xfib_tx_ports), &ifindex);
	/* Replace only our program, even if someone swapped it meanwhile. */
	fd = bpf_prog_get_fd_by_id(prog_id);
	if (fd >= 0) {
		o.old_prog_fd = fd;
		flags |= XDP_FLAGS_REPLACE;
	}
	err = bpf_xdp_attach(ifindex, -1, flags, &o);
	if (fd >= 0)
		close(fd);
	return err;
}

/* Every port is named once and carries no XDP program: checked before
 * any is touched, so that attach is all or nothing. */
static int ports_free(char **names, int n, const int *ifindex)
{
	char name[BPF_OBJ_NAME_LEN];
	int i, j;

	for (i = 0; i < n; i++) {
		__u32 id = xdp_prog_on(ifindex[i], NULL);

		for (j = 0; j < i; j++) {
			if (ifindex[j] == ifindex[i]) {
				err_cmd("%s: named twice", names[i]);
				return -EINVAL;
			}
		}
		if (!id)
			continue;
		if (prog_is_xfib(id, name, sizeof(name)))
			err_cmd("%s: already attached", names[i]);
		else
			err_cmd("%s: another XDP program is attached (id %u, %s)",
				names[i], id, name);
		return -EEXIST;
	}
	return 0;
}

/* An attached port that takes no redirected frames still receives and
 * forwards to the other ports: a warning, with the reason and the fix. */
static void warn_no_xmit(char **names, int n, const int *ifindex)
{
	char why[256];
	struct xdpfeat x;
	int i;

	if (xdpfeat_open(&x, false))
		return;
	for (i = 0; i < n; i++) {
		if (xdpfeat_get(&x, ifindex[i]))
			continue;
		xdpfeat_explain(&x, ifindex[i], names[i], why, sizeof(why));
		fprintf(stderr, "xfibctl: attach warning: %s %s: %s\n", names[i],
			XFIB_NO_XMIT_TEXT, why);
	}
	xdpfeat_close(&x);
}

int cmd_attach(struct ctl *c, int argc, char **argv)
{
	struct xfib_fwd_bpf *skel = NULL;
	struct xdp_program *xp = NULL;
	int *ifindex, i, done = 0, err;

	ifindex = calloc(argc, sizeof(*ifindex));
	if (!ifindex)
		return -ENOMEM;
	err = resolve_ifaces(argv, argc, ifindex);
	err = err ?: ports_free(argv, argc, ifindex);
	err = err ?: ports_routable(argv, argc, ifindex);
	if (err)
		goto out;
	err = open_dataplane(c, XFIB_OPEN_PROG | XFIB_OPEN_CREATE, &skel);
	if (err)
		goto out;
	xp = xdp_program__from_fd(bpf_program__fd(skel->progs.xfib_fwd));
	if (!xp || libxdp_get_error(xp)) {
		err = xp ? (int)libxdp_get_error(xp) : -ENOMEM;
		xp = NULL;
		err_cmd("%s: %s", XFIB_PROG_NAME, strerror(-err));
		goto out;
	}
	for (i = 0; i < argc; i++, done++) {
		struct bpf_devmap_val dv = { .ifindex = ifindex[i] };

		/* The port's counters run from now: nothing counts them yet. */
		err = port_counters_zero(skel, ifindex[i]);
		if (err) {
			err_cmd("%s: zero port counters: %s", argv[i], strerror(-err));
			goto rollback;
		}
		err = xdp_program__attach(xp, ifindex[i], c->mode, 0);
		if (err) {
			if (err == -EOPNOTSUPP && c->mode == XDP_MODE_NATIVE)
				err_cmd("%s: the driver has no native XDP (try --mode generic)",
					argv[i]);
			else
				err_cmd("%s: %s", argv[i], strerror(-err));
			goto rollback;
		}
		/* A port is an egress once it is in the devmap. */
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.xfib_tx_ports),
					&ifindex[i], &dv, BPF_ANY)) {
			err = -errno;
			err_cmd("%s: add to egress ports: %s", argv[i], strerror(errno));
			done++;
			goto rollback;
		}
	}
	err = 0;
	warn_no_xmit(argv, argc, ifindex);
	goto out;
rollback:
	for (i = 0; i < done; i++) {
		__u8 mode = 0;
		__u32 id = xdp_prog_on(ifindex[i], &mode);

		if (id)
			detach_one(skel, ifindex[i], id, mode);
	}
out:
	if (xp)
		xdp_program__close(xp);
	xfib_fwd_bpf__destroy(skel);
	free(ifindex);
	return err;
}

int cmd_detach(struct ctl *c, int argc, char **argv)
{
	struct xfib_fwd_bpf *skel = NULL;
	int *ifindex, i, err;
	__u32 *ids;
	__u8 *modes;

	ifindex = calloc(argc, sizeof(*ifindex));
	ids = calloc(argc, sizeof(*ids));
	modes = calloc(argc, sizeof(*modes));
	if (!ifindex || !ids || !modes) {
		err = -ENOMEM;
		goto out;
	}
	err = resolve_ifaces(argv, argc, ifindex);
	if (err)
		goto out;
	for (i = 0; i < argc; i++) {
		ids[i] = xdp_prog_on(ifindex[i], &modes[i]);
		if (!ids[i] || !prog_is_xfib(ids[i], NULL, 0)) {
			err_cmd("%s: not attached", argv[i]);
			err = -ENOENT;
			goto out;
		}
	}
	/* The maps may be gone (pin dir removed); detaching still works. */
	if (xfib_pin_dir(c->pin_opt, c->pin_dir, sizeof(c->pin_dir)) ||
	    xfib_open(c->pin_dir, 0, &skel))
		skel = NULL;
	for (i = 0; i < argc; i++) {
		err = detach_one(skel, ifindex[i], ids[i], modes[i]);
		if (err) {
			err_cmd("%s: %s", argv[i], strerror(-err));
			goto out;
		}
	}
out:
	xfib_fwd_bpf__destroy(skel);
	free(ifindex);
	free(ids);
	free(modes);
	return err;
}
