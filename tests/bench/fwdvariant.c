// SPDX-License-Identifier: GPL-2.0-only
/*
 * fwdvariant: attaches a build of xfib's forwarder made for a measurement
 * (make bench-fwd: without the per-port counters, or without the trace
 * hook) to router ports, sharing the router's pinned maps as xfibctl
 * attach does, so that the daemon keeps feeding it and xfibctl detach
 * removes it.
 *
 *   fwdvariant --obj FILE --pin-dir DIR IFNAME...
 *   fwdvariant --time N --pin-dir DIR --ifindex I --frame HEX PROG...
 *
 * --time runs each program on the frame (hex bytes) as received on
 * ifindex I with BPF_PROG_TEST_RUN, N runs of one packet per round (the
 * kernel's timing of each run included), rounds alternating between the
 * programs (21 rounds), and prints per program the mean nanoseconds per
 * packet of the middle 11 rounds and the verdict: the program's own cost,
 * without the veth and the sinks that make forwarding rates noisy. A PROG
 * is a build of xfib's forwarder (FILE, loaded on DIR's maps) or
 * link:PATH, the program of the XDP link pinned at PATH as it runs (the
 * benchmark's other forwarders, timed the same way for comparison).
 */
#include <errno.h>
#include <stdlib.h>
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

#define ROUNDS 21
#define MAX_OBJS 8

static int load(const char *obj_path, const char *dir, struct bpf_object **objp)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .pin_root_path = dir);
	struct bpf_object *obj = bpf_object__open_file(obj_path, &opts);
	char path[512];
	int err, tx_fd;

	if (!obj)
		return -errno;
	snprintf(path, sizeof(path), "%s/xfib_tx_ports", dir);
	tx_fd = bpf_obj_get(path);
	if (tx_fd < 0) {
		bpf_object__close(obj);
		return -ENOENT;
	}
	err = bpf_map__reuse_fd(bpf_object__find_map_by_name(obj, "xfib_tx_ports"), tx_fd);
	close(tx_fd);
	err = err ?: bpf_object__load(obj);
	if (err) {
		bpf_object__close(obj);
		return err;
	}
	*objp = obj;
	return 0;
}

/* The program of the XDP link pinned at path: a new fd, or -errno. */
static int link_prog_fd(const char *path)
{
	struct bpf_link_info info = {};
	__u32 len = sizeof(info);
	int fd = bpf_obj_get(path), err = 0;

	if (fd < 0)
		return -errno;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		err = -errno;
	close(fd);
	if (err)
		return err;
	fd = bpf_prog_get_fd_by_id(info.prog_id);
	return fd < 0 ? -errno : fd;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int timing(int argc, char **argv)
{
	unsigned char frame[256], out[512];
	struct bpf_object *objs[MAX_OBJS] = { 0 };
	int fds[MAX_OBJS];
	double ns[MAX_OBJS][ROUNDS];
	__u32 verdict[MAX_OBJS];
	unsigned int reps, flen = 0, ifindex;
	const char *dir, *hex;
	int nobj, i, r, err = 0;

	if (argc < 10 || strcmp(argv[3], "--pin-dir") || strcmp(argv[5], "--ifindex") ||
	    strcmp(argv[7], "--frame"))
		return -EINVAL;
	reps = strtoul(argv[2], NULL, 0);
	dir = argv[4];
	ifindex = strtoul(argv[6], NULL, 0);
	for (hex = argv[8]; hex[0] && hex[1] && flen < sizeof(frame); hex += 2) {
		char b[3] = { hex[0], hex[1], 0 };

		frame[flen++] = (unsigned char)strtoul(b, NULL, 16);
	}
	nobj = argc - 9;
	if (nobj > MAX_OBJS || !reps)
		return -EINVAL;
	for (i = 0; i < nobj; i++)
		fds[i] = -1;
	for (i = 0; i < nobj && !err; i++) {
		if (!strncmp(argv[9 + i], "link:", 5)) {
			fds[i] = link_prog_fd(argv[9 + i] + 5);
			err = fds[i] < 0 ? fds[i] : 0;
			continue;
		}
		err = load(argv[9 + i], dir, &objs[i]);
		if (!err)
			fds[i] = bpf_program__fd(bpf_object__find_program_by_name(objs[i], "xfib_fwd"));
	}
	for (r = 0; r < ROUNDS && !err; r++) {
		for (i = 0; i < nobj && !err; i++) {
			int fd = fds[i];
			unsigned long long total = 0;
			unsigned int k;

			/* One run per call: the program rewrites the frame, and
			 * repeat would run it again on its own output. */
			for (k = 0; k < reps && !err; k++) {
				struct xdp_md ctx = { .data_end = flen, .ingress_ifindex = ifindex };
				LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame,
					    .data_size_in = flen, .data_out = out,
					    .data_size_out = sizeof(out), .ctx_in = &ctx,
					    .ctx_size_in = sizeof(ctx), .repeat = 1);

				if (bpf_prog_test_run_opts(fd, &o))
					err = -errno;
				total += o.duration;
				verdict[i] = o.retval;
			}
			ns[i][r] = (double)total / reps;
		}
	}
	for (i = 0; i < nobj && !err; i++) {
		double sum = 0;

		qsort(ns[i], ROUNDS, sizeof(double), cmp_double);
		for (r = 5; r < ROUNDS - 5; r++)
			sum += ns[i][r];
		printf("%s %.2f %u\n", argv[9 + i], sum / (ROUNDS - 10), verdict[i]);
	}
	for (i = 0; i < nobj; i++) {
		if (objs[i])
			bpf_object__close(objs[i]);
		else if (fds[i] >= 0)
			close(fds[i]);
	}
	return err;
}

int main(int argc, char **argv)
{
	int err;

	if (argc > 2 && !strcmp(argv[1], "--time")) {
		err = timing(argc, argv);
		if (err)
			fprintf(stderr, "fwdvariant --time: %s\n", strerror(-err));
		return err ? 1 : 0;
	}

	if (argc < 6 || strcmp(argv[1], "--obj") || strcmp(argv[3], "--pin-dir")) {
		fprintf(stderr, "usage: fwdvariant --obj FILE --pin-dir DIR IFNAME...\n");
		return 2;
	}
	err = attach(argv[2], argv[4], argc - 5, argv + 5);
	if (err)
		fprintf(stderr, "fwdvariant: %s: %s\n", argv[2], strerror(-err));
	return err ? 1 : 0;
}
