// SPDX-License-Identifier: GPL-2.0-only
/*
 * xfibctl: attach the xfib forwarder to ports, and look at its state.
 * Exit codes: 0 success, 1 the command failed, 2 usage error.
 */
#include <errno.h>
#include <ctype.h>
#include <getopt.h>
#include <math.h>
#include <net/if.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <arpa/inet.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "log.h"
#include "pin.h"
#include "algo_names.h"
#include "verify.h"
#include "xfib/counters.h"
#include "xfib/maps.h"

#define XFIB_PROG_NAME "xfib_fwd"

struct ctl {
	const char *pin_opt;
	char pin_dir[XFIB_PIN_DIR_MAX];
	bool json;
	enum xdp_attach_mode mode;
	unsigned long random;  /* verify --random */
	const char *iif_name;  /* lookup, verify --iif */
	__u32 iif;
	double interval;       /* stats --interval, seconds; 0: one snapshot */
	unsigned long count;   /* stats --count; 0: until SIGINT */
	bool prometheus;       /* stats --prometheus */
	int fam;               /* algo, lookup, neighbours, nexthops; -1: both */
	int algo_want;         /* algo: the algorithm to force, -1: only show */
	__u8 addr[16];         /* lookup */
	const char *dev_name;  /* neighbours, nexthops --dev */
};

/*
 * One option of a command (or of xfibctl itself). The table is the only
 * description of an option: getopt_long's tables, the usage line and the
 * help are all generated from it, so the help (and through it the man page
 * test) cannot miss one.
 */
struct cmd_opt {
	const char *name; /* long name */
	char key;         /* short letter, 0: long only */
	const char *arg;  /* argument in the help, NULL: a flag */
	const char *help; /* '\n' continues on an indented line */
	/* Stores the option; 0, or -EINVAL after printing why. */
	int (*set)(struct ctl *c, const char *arg);
};

struct cmd {
	const char *name;
	const char *alias; /* another spelling, matched by prefix too */
	const char *args;  /* positional arguments, for the usage line */
	const char *help;
	const struct cmd_opt *opts;
	int min_args, max_args; /* max -1: any number */
	/* Checks the arguments and option combinations before anything is
	 * touched; 0, or -EINVAL after printing why (a usage error). */
	int (*check)(struct ctl *c, int argc, char **argv);
	/* Runs the command: 0, -errno after printing why, or 1 (verify:
	 * a mismatch). Never a usage error: those are caught before. */
	int (*fn)(struct ctl *c, int argc, char **argv);
};

static const struct cmd *current_cmd;

#define err_cmd(fmt, ...) \
	fprintf(stderr, "xfibctl: %s " fmt "\n", current_cmd->name, ##__VA_ARGS__)

/* ---- helpers --------------------------------------------------------- */

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

static int open_dataplane(struct ctl *c, unsigned int flags,
			  struct xfib_fwd_bpf **skel)
{
	int err = xfib_pin_dir(c->pin_opt, c->pin_dir, sizeof(c->pin_dir));

	if (err) {
		err_cmd("%s: %s", "pin directory", strerror(-err));
		return err;
	}
	err = xfib_open(c->pin_dir, flags, skel);
	if (err == -ENOENT)
		err_cmd("%s: no xfib dataplane here (attach a port or start xfibd)",
			c->pin_dir);
	else if (err == -ENOTSUP)
		err_cmd("%s: not on a BPF filesystem (mount -t bpf bpf /sys/fs/bpf)",
			c->pin_dir);
	else if (err == -EPERM || err == -EACCES)
		err_cmd("%s: permission denied (run as root)", c->pin_dir);
	else if (err)
		err_cmd("%s: cannot load the dataplane: %s", c->pin_dir,
			strerror(-err));
	return err;
}

/* The id of the XDP program on ifindex and how it is attached (0: none). */
static __u32 xdp_prog_on(int ifindex, __u8 *mode)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);

	if (bpf_xdp_query(ifindex, 0, &q))
		return 0;
	if (mode)
		*mode = q.attach_mode;
	switch (q.attach_mode) {
	case XDP_ATTACHED_DRV:
		return q.drv_prog_id;
	case XDP_ATTACHED_SKB:
		return q.skb_prog_id;
	case XDP_ATTACHED_HW:
		return q.hw_prog_id;
	case XDP_ATTACHED_MULTI:
		return q.drv_prog_id ? q.drv_prog_id : q.skb_prog_id;
	default:
		return 0;
	}
}

static bool prog_is_xfib(__u32 id, char *name, size_t len)
{
	struct bpf_prog_info info = { 0 };
	__u32 ilen = sizeof(info);
	int fd = bpf_prog_get_fd_by_id(id);
	bool ours;

	if (fd < 0)
		return false;
	ours = !bpf_obj_get_info_by_fd(fd, &info, &ilen) &&
	       !strcmp(info.name, XFIB_PROG_NAME);
	if (name)
		snprintf(name, len, "%s", info.name);
	close(fd);
	return ours;
}

static const char *mode_name(__u8 mode)
{
	switch (mode) {
	case XDP_ATTACHED_DRV:
		return "native";
	case XDP_ATTACHED_SKB:
		return "generic";
	case XDP_ATTACHED_HW:
		return "offload";
	case XDP_ATTACHED_MULTI:
		return "multi";
	default:
		return "none";
	}
}

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

/* --iif: the port the kernel's lookups enter by. */
static int resolve_iif(struct ctl *c)
{
	if (!c->iif_name)
		return 0;
	c->iif = if_nametoindex(c->iif_name);
	if (!c->iif) {
		err_cmd("--iif %s: no such interface", c->iif_name);
		return -ENODEV;
	}
	return 0;
}

/* ---- attach / detach ---------------------------------------------------- */

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

static int cmd_attach(struct ctl *c, int argc, char **argv)
{
	struct xfib_fwd_bpf *skel = NULL;
	struct xdp_program *xp = NULL;
	int *ifindex, i, done = 0, err;
	char name[BPF_OBJ_NAME_LEN];

	ifindex = calloc(argc, sizeof(*ifindex));
	if (!ifindex)
		return -ENOMEM;
	err = resolve_ifaces(argv, argc, ifindex);
	if (err)
		goto out;
	/* Check every port before touching any: all or nothing. */
	for (i = 0; i < argc; i++) {
		__u32 id = xdp_prog_on(ifindex[i], NULL);
		int j;

		for (j = 0; j < i; j++) {
			if (ifindex[j] == ifindex[i]) {
				err_cmd("%s: named twice", argv[i]);
				err = -EINVAL;
				goto out;
			}
		}
		if (!id)
			continue;
		if (prog_is_xfib(id, name, sizeof(name)))
			err_cmd("%s: already attached", argv[i]);
		else
			err_cmd("%s: another XDP program is attached (id %u, %s)",
				argv[i], id, name);
		err = -EEXIST;
		goto out;
	}
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

static int cmd_detach(struct ctl *c, int argc, char **argv)
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

/* ---- status ----------------------------------------------------------------- */

static const char *fallback_name(__u32 f)
{
	switch (f) {
	case XFIB_FALLBACK_NONE:
		return "none";
	case XFIB_FALLBACK_TOO_LARGE:
		return "too_large";
	case XFIB_FALLBACK_RULES:
		return "policy_rules";
	default:
		return "unknown";
	}
}

static const char *fallback_help(__u32 f)
{
	switch (f) {
	case XFIB_FALLBACK_TOO_LARGE:
		return "the table is too large for the lookup algorithm";
	case XFIB_FALLBACK_RULES:
		return "policy rules (ip rule) select routes by more than the destination";
	default:
		return "unknown reason";
	}
}

static const char *fam_name(__u32 fam)
{
	return fam == XFIB_V4 ? "ipv4" : "ipv6";
}

/* One family's instance, for status and algo. */
static void print_fib_info(struct ctl *c, __u32 fam, const struct xfib_fib_info *fi)
{
	char when[32] = "never";
	time_t t = fi->last_swap;
	unsigned int a;
	bool first = true;

	if (t)
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", localtime(&t));
	if (c->json) {
		printf(",\"%s\":{\"algorithm\":\"%s\",\"forced\":%s,"
		       "\"routes\":%u,\"ranges\":%u,\"capacity\":%u,"
		       "\"generation\":%u,\"swaps\":%llu,\"last_swap\":%llu,"
		       "\"updates\":%llu,\"build_us\":%llu,\"memory\":%llu,"
		       "\"bytes_per_prefix\":%.1f,\"fallback\":\"%s\","
		       "\"build_error\":\"%s\","
		       "\"preferences\":{",
		       fam_name(fam), xfib_algo_name(fi->algo),
		       fi->forced ? "true" : "false", fi->routes, fi->ranges,
		       fi->capacity, fi->generation,
		       (unsigned long long)fi->swaps,
		       (unsigned long long)fi->last_swap,
		       (unsigned long long)fi->updates,
		       (unsigned long long)fi->build_us,
		       (unsigned long long)fi->mem_bytes,
		       fi->routes ? (double)fi->mem_bytes / fi->routes : 0.0,
		       fallback_name(fi->fallback),
		       fi->build_error ? strerror(fi->build_error) : "");
		for (a = 1; a < XFIB_ALGO_COUNT; a++) {
			if (xfib_algo_family(a) != (int)fam)
				continue;
			printf("%s\"%s\":%u", first ? "" : ",", xfib_algo_name(a),
			       fi->pref[a]);
			first = false;
		}
		printf("}}");
		return;
	}
	printf("%s:        %s%s, %u prefixes, generation %u, %llu swaps (last %s)\n",
	       fam_name(fam), xfib_algo_name(fi->algo),
	       fi->forced ? " (forced)" : "", fi->routes, fi->generation,
	       (unsigned long long)fi->swaps, when);
	if (fi->algo)
		printf("             %.1f MiB, %.1f bytes/prefix, %s %u of %u, built in %llu us, %llu in-place updates\n",
		       fi->mem_bytes / 1048576.0,
		       fi->routes ? (double)fi->mem_bytes / fi->routes : 0.0,
		       fi->algo == XFIB_ALGO_DIR24_8 || fi->algo == XFIB_ALGO_TRIE6 ?
			       "groups" : "ranges",
		       fi->ranges, fi->capacity,
		       (unsigned long long)fi->build_us,
		       (unsigned long long)fi->updates);
	if (fi->fallback)
		printf("             all traffic to the kernel: %s\n",
		       fallback_help(fi->fallback));
	if (fi->build_error)
		printf("             last build failed: %s (retrying; the instance above keeps serving)\n",
		       strerror(fi->build_error));
}

static int cmd_status(struct ctl *c, int argc, char **argv)
{
	struct xfib_fwd_bpf *skel = NULL;
	struct if_nameindex *ifs, *it;
	struct xfib_daemon d = { 0 };
	struct xfib_fib_info fi[XFIB_FAMILIES] = { 0 };
	__u32 key = 0, fam;
	int pid, nif = 0, err;

	err = open_dataplane(c, 0, &skel);
	if (err)
		return err;
	pid = xfib_daemon_pid(skel);
	bpf_map_lookup_elem(bpf_map__fd(skel->maps.xfib_daemon), &key, &d);
	for (fam = 0; fam < XFIB_FAMILIES; fam++)
		bpf_map_lookup_elem(bpf_map__fd(skel->maps.xfib_fib_info), &fam,
				    &fi[fam]);
	ifs = if_nameindex();

	if (c->json) {
		printf("{\"pin_dir\":");
		json_str(c->pin_dir);
		printf(",\"daemon\":{\"running\":%s,\"pid\":%d,\"table\":%u,"
		       "\"synced\":%s,\"started\":%llu,\"last_sync\":%llu,"
		       "\"resyncs\":%llu,\"overruns\":%llu,\"links\":%u,"
		       "\"neighbours\":%u,\"nexthops\":%u,\"groups\":%u,"
		       "\"nexthop_objects\":%u,\"no_room\":%u,"
		       "\"capacity\":{\"neighbours\":%u,\"nexthops\":%u,"
		       "\"groups\":%u}},"
		       "\"interfaces\":[",
		       pid ? "true" : "false", pid, d.table,
		       pid && d.last_sync ? "true" : "false",
		       (unsigned long long)d.started,
		       (unsigned long long)d.last_sync,
		       (unsigned long long)d.resyncs,
		       (unsigned long long)d.overruns, d.links, d.neighs,
		       d.nexthops, d.groups, d.nhobjs, d.no_room,
		       bpf_map__max_entries(skel->maps.xfib_neighs),
		       bpf_map__max_entries(skel->maps.xfib_nexthops),
		       bpf_map__max_entries(skel->maps.xfib_nh_groups));
	} else {
		printf("pin dir:     %s\n", c->pin_dir);
		if (pid) {
			char when[32] = "never";
			time_t t = d.last_sync;

			if (t)
				strftime(when, sizeof(when), "%F %T", localtime(&t));
			printf("daemon:      running (pid %d), table %u, %s\n",
			       pid, d.table, d.last_sync ? "synced" : "syncing");
			printf("mirror:      %u links, %u neighbours, %u nexthops, %u groups, %u nexthop objects;\n"
			       "             last full sync %s, %llu resyncs after %llu overruns\n",
			       d.links, d.neighs, d.nexthops, d.groups, d.nhobjs, when,
			       (unsigned long long)d.resyncs,
			       (unsigned long long)d.overruns);
			printf("capacity:    %u neighbours, %u nexthops, %u groups; %u routes to the kernel for want of room\n",
			       bpf_map__max_entries(skel->maps.xfib_neighs),
			       bpf_map__max_entries(skel->maps.xfib_nexthops),
			       bpf_map__max_entries(skel->maps.xfib_nh_groups),
			       d.no_room);
		}
		else
			printf("daemon:      not running (the dataplane forwards with its last state)\n");
		printf("interfaces:  ");
	}
	for (it = ifs; it && it->if_index; it++) {
		__u8 mode = 0;
		__u32 id = xdp_prog_on(it->if_index, &mode);

		if (!id || !prog_is_xfib(id, NULL, 0))
			continue;
		if (c->json) {
			printf("%s{\"name\":", nif ? "," : "");
			json_str(it->if_name);
			printf(",\"ifindex\":%u,\"mode\":\"%s\",\"prog_id\":%u}",
			       it->if_index, mode_name(mode), id);
		} else {
			printf("%s%s (%s)", nif ? ", " : "", it->if_name,
			       mode_name(mode));
		}
		nif++;
	}
	if (c->json)
		printf("]");
	else
		printf("%s\n", nif ? "" : "none");
	for (fam = 0; fam < XFIB_FAMILIES; fam++)
		print_fib_info(c, fam, &fi[fam]);
	if (c->json)
		printf("}\n");
	if (ifs)
		if_freenameindex(ifs);
	xfib_fwd_bpf__destroy(skel);
	return 0;
}

/* ---- algo ------------------------------------------------------------------ */

static int parse_family(const char *s)
{
	if (!strcmp(s, "ipv4") || !strcmp(s, "4") || !strcmp(s, "inet"))
		return XFIB_V4;
	if (!strcmp(s, "ipv6") || !strcmp(s, "6") || !strcmp(s, "inet6"))
		return XFIB_V6;
	return -1;
}

/* algo [FAMILY [NAME|auto]]: a usage error unless both name something. */
static int algo_check(struct ctl *c, int argc, char **argv)
{
	int fam = -1, want = -1;

	if (argc >= 1) {
		fam = parse_family(argv[0]);
		if (fam < 0) {
			err_cmd("%s: not a family (ipv4, ipv6)", argv[0]);
			return -EINVAL;
		}
	}
	if (argc == 2) {
		want = strcmp(argv[1], "auto") ? xfib_algo_by_name(argv[1]) : XFIB_ALGO_NONE;
		if (want < 0 || (want && xfib_algo_family(want) != fam)) {
			err_cmd("%s: not an %s algorithm (%s, auto)", argv[1],
				fam_name(fam), fam == XFIB_V4 ? "bsearch4, dir24_8" :
								"bsearch6, trie6");
			return -EINVAL;
		}
	}
	c->fam = fam;
	c->algo_want = want;
	return 0;
}

static int cmd_algo(struct ctl *c, int argc, char **argv)
{
	int fd_info, fd_ctl, fam = c->fam, want = c->algo_want, err, i;
	struct xfib_fwd_bpf *skel = NULL;
	struct xfib_fib_info fi;
	struct xfib_control ctl;
	__u32 key;

	err = open_dataplane(c, 0, &skel);
	if (err)
		return err;
	fd_info = bpf_map__fd(skel->maps.xfib_fib_info);
	fd_ctl = bpf_map__fd(skel->maps.xfib_control);
	if (want >= 0) {
		key = fam;
		if (bpf_map_lookup_elem(fd_ctl, &key, &ctl)) {
			err = -errno;
			goto out;
		}
		ctl.algo = want;
		ctl.seq++;
		if (bpf_map_update_elem(fd_ctl, &key, &ctl, BPF_ANY)) {
			err = -errno;
			err_cmd("%s: %s", fam_name(fam), strerror(errno));
			goto out;
		}
		if (!xfib_daemon_pid(skel)) {
			fprintf(stderr, "xfibctl: algo %s: xfibd is not running; it applies the request when it starts\n",
				fam_name(fam));
			goto out;
		}
		/* The daemon builds and swaps; wait for it to report. */
		for (i = 0; i < 300; i++) {
			if (!bpf_map_lookup_elem(fd_info, &key, &fi) &&
			    fi.forced == (__u32)want &&
			    (!want || fi.algo == (__u32)want || fi.fallback ||
			     fi.build_error))
				break;
			usleep(20000);
		}
		if (i == 300) {
			err = -ETIMEDOUT;
			err_cmd("%s: xfibd did not apply %s within 6 s", fam_name(fam),
				argv[1]);
			goto out;
		}
		if (want && fi.algo != (__u32)want && fi.build_error) {
			err = -fi.build_error;
			err_cmd("%s: building %s failed: %s; xfibd retries with backoff, %s keeps serving",
				fam_name(fam), argv[1], strerror(fi.build_error),
				xfib_algo_name(fi.algo));
			goto out;
		}
		if (want && fi.algo != (__u32)want) {
			err = -ENOSPC;
			err_cmd("%s: %s cannot hold this table: %s", fam_name(fam),
				argv[1], fallback_help(fi.fallback));
			goto out;
		}
	}
	if (c->json)
		printf("{\"pin_dir\":"), json_str(c->pin_dir);
	for (key = 0; key < XFIB_FAMILIES; key++) {
		if (fam >= 0 && key != (__u32)fam)
			continue;
		if (bpf_map_lookup_elem(fd_info, &key, &fi))
			memset(&fi, 0, sizeof(fi));
		print_fib_info(c, key, &fi);
		if (!c->json) {
			unsigned int a;

			printf("             preferences:");
			for (a = 1; a < XFIB_ALGO_COUNT; a++)
				if (xfib_algo_family(a) == (int)key)
					printf(" %s %u%s", xfib_algo_name(a), fi.pref[a],
					       a == fi.algo ? " (current)" : "");
			printf("\n");
		}
	}
	if (c->json)
		printf("}\n");
out:
	xfib_fwd_bpf__destroy(skel);
	return err;
}

/* ---- stats -------------------------------------------------------------------- */

static const char *const reason_names[] = {
#define X(name, str, help) str,
	XFIB_REASONS(X)
#undef X
};

static const char *const reason_help[] = {
#define X(name, str, help) help,
	XFIB_REASONS(X)
#undef X
};

/* Every counter summed over the CPUs; pc is scratch for one per-CPU value. */
static int stats_read(int fd, struct xfib_counter *pc, int ncpu,
		      struct xfib_counter *sum)
{
	__u32 r;
	int cpu;

	for (r = 0; r < XFIB_REASON_COUNT; r++) {
		if (bpf_map_lookup_elem(fd, &r, pc)) {
			int err = -errno;

			err_cmd("read counters: %s", strerror(-err));
			return err;
		}
		sum[r].packets = 0;
		sum[r].bytes = 0;
		for (cpu = 0; cpu < ncpu; cpu++) {
			sum[r].packets += pc[cpu].packets;
			sum[r].bytes += pc[cpu].bytes;
		}
	}
	return 0;
}

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A bit rate with an SI prefix, as ifstat and tc print them. */
static const char *bitrate_str(double bps, char *buf, size_t len)
{
	static const char *const unit[] = { "bit/s", "kbit/s", "Mbit/s", "Gbit/s",
					    "Tbit/s" };
	unsigned int u = 0;

	while (bps >= 1000 && u < sizeof(unit) / sizeof(unit[0]) - 1) {
		bps /= 1000;
		u++;
	}
	snprintf(buf, len, "%.2f %s", bps, unit[u]);
	return buf;
}

static volatile sig_atomic_t stats_stop;

static void stats_on_signal(int sig)
{
	stats_stop = 1;
}

/*
 * stats -i: rates of the counters that moved, every interval. Deadlines
 * are absolute on CLOCK_MONOTONIC so the output does not drift, but each
 * rate is computed over the time actually elapsed between two reads: a
 * late wake-up must not inflate it.
 */
static int stats_monitor(struct ctl *c, int fd, struct xfib_counter *pc, int ncpu)
{
	/* No SA_RESTART: SIGINT must cut the sleep short. */
	struct sigaction sa = { .sa_handler = stats_on_signal };
	struct xfib_counter prev[XFIB_REASON_COUNT], cur[XFIB_REASON_COUNT];
	double t0, t1, next, dt;
	unsigned long n;
	int err;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	t0 = clock_s(CLOCK_MONOTONIC);
	err = stats_read(fd, pc, ncpu, prev);
	if (err)
		return err;
	next = t0;
	for (n = 0; !c->count || n < c->count; n++) {
		struct timespec ts;
		char when[32], b[32];
		bool moved = false;
		time_t now_s;
		double now;
		__u32 r;

		next += c->interval;
		ts.tv_sec = (time_t)next;
		ts.tv_nsec = (long)((next - ts.tv_sec) * 1e9);
		while (!stats_stop &&
		       clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		if (stats_stop)
			break;
		t1 = clock_s(CLOCK_MONOTONIC);
		now = clock_s(CLOCK_REALTIME);
		err = stats_read(fd, pc, ncpu, cur);
		if (err)
			return err;
		dt = t1 - t0;
		/* Suspended (SIGSTOP, a slow terminal): skip the missed ticks
		 * rather than print a burst of them. */
		if (t1 - next > c->interval)
			next = t1;
		if (c->json) {
			printf("{\"time\":%.3f,\"interval\":%.3f,\"rates\":{", now, dt);
		} else {
			now_s = (time_t)now;
			strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S",
				 localtime(&now_s));
			printf("%s.%03d  (%.3f s)\n", when,
			       (int)((now - now_s) * 1000), dt);
		}
		for (r = 0; r < XFIB_REASON_COUNT; r++) {
			/* Counters only grow; guard the subtraction anyway. */
			__u64 dp = cur[r].packets >= prev[r].packets ?
					   cur[r].packets - prev[r].packets : 0;
			__u64 db = cur[r].bytes >= prev[r].bytes ?
					   cur[r].bytes - prev[r].bytes : 0;

			if (!dp)
				continue;
			if (c->json)
				printf("%s\"%s\":{\"pps\":%.3f,\"bps\":%.3f}",
				       moved ? "," : "", reason_names[r], dp / dt,
				       db * 8 / dt);
			else
				printf("  %-26s %14.1f pps %16s\n", reason_names[r],
				       dp / dt, bitrate_str(db * 8 / dt, b, sizeof(b)));
			moved = true;
		}
		if (c->json)
			printf("}}\n");
		else if (!moved)
			printf("  no counter moved\n");
		/* Each interval reaches a pipe (jq, a log) when it ends. */
		fflush(stdout);
		memcpy(prev, cur, sizeof(prev));
		t0 = t1;
	}
	return 0;
}

/* A label value of the Prometheus text format: \, " and newline escaped. */
static void prom_label(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			printf("\\%c", *s);
		else if (*s == '\n')
			printf("\\n");
		else
			putchar(*s);
	}
	putchar('"');
}

static void prom_head(const char *name, const char *type, const char *help)
{
	printf("# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/*
 * stats --prometheus: the text exposition format, for node_exporter's
 * textfile collector (write to a temporary file and rename it into the
 * collector's directory, so it never reads half a file).
 */
static void stats_prometheus(struct xfib_fwd_bpf *skel, const struct xfib_counter *sum)
{
	struct xfib_fib_info fi[XFIB_FAMILIES] = { 0 };
	struct if_nameindex *ifs, *it;
	struct xfib_daemon d = { 0 };
	__u32 key = 0, fam, r;
	int pid;

	pid = xfib_daemon_pid(skel);
	bpf_map_lookup_elem(bpf_map__fd(skel->maps.xfib_daemon), &key, &d);
	for (fam = 0; fam < XFIB_FAMILIES; fam++)
		bpf_map_lookup_elem(bpf_map__fd(skel->maps.xfib_fib_info), &fam,
				    &fi[fam]);

	prom_head("xfib_packets_total", "counter",
		  "Packets seen by the XDP forwarder, by outcome: forwarded, dropped, or passed to the kernel and why.");
	for (r = 0; r < XFIB_REASON_COUNT; r++)
		printf("xfib_packets_total{reason=\"%s\"} %llu\n", reason_names[r],
		       (unsigned long long)sum[r].packets);
	prom_head("xfib_bytes_total", "counter",
		  "Bytes of the packets in xfib_packets_total (frame length).");
	for (r = 0; r < XFIB_REASON_COUNT; r++)
		printf("xfib_bytes_total{reason=\"%s\"} %llu\n", reason_names[r],
		       (unsigned long long)sum[r].bytes);

	prom_head("xfib_routes", "gauge", "Prefixes in the published lookup instance.");
	for (fam = 0; fam < XFIB_FAMILIES; fam++)
		printf("xfib_routes{family=\"%s\"} %u\n", fam_name(fam), fi[fam].routes);
	prom_head("xfib_algorithm_info", "gauge",
		  "Lookup algorithm of the published instance (none: every packet goes to the kernel).");
	for (fam = 0; fam < XFIB_FAMILIES; fam++) {
		printf("xfib_algorithm_info{family=\"%s\",algorithm=", fam_name(fam));
		prom_label(xfib_algo_name(fi[fam].algo));
		printf("} 1\n");
	}
	prom_head("xfib_generation", "gauge", "Generation of the published lookup instance.");
	for (fam = 0; fam < XFIB_FAMILIES; fam++)
		printf("xfib_generation{family=\"%s\"} %u\n", fam_name(fam),
		       fi[fam].generation);
	prom_head("xfib_swaps_total", "counter",
		  "Lookup instances published (builds and algorithm switches).");
	for (fam = 0; fam < XFIB_FAMILIES; fam++)
		printf("xfib_swaps_total{family=\"%s\"} %llu\n", fam_name(fam),
		       (unsigned long long)fi[fam].swaps);
	prom_head("xfib_instance_bytes", "gauge", "Memory of the published lookup instance.");
	for (fam = 0; fam < XFIB_FAMILIES; fam++)
		printf("xfib_instance_bytes{family=\"%s\"} %llu\n", fam_name(fam),
		       (unsigned long long)fi[fam].mem_bytes);

	prom_head("xfib_daemon_up", "gauge",
		  "1 if xfibd maintains the maps; at 0 the dataplane forwards with its last state.");
	printf("xfib_daemon_up %d\n", pid ? 1 : 0);
	prom_head("xfib_resyncs_total", "counter",
		  "Full netlink dumps xfibd made after losing messages (socket overruns).");
	printf("xfib_resyncs_total %llu\n", (unsigned long long)d.resyncs);
	prom_head("xfib_netlink_overruns_total", "counter",
		  "Netlink notifications xfibd lost to receive buffer overruns.");
	printf("xfib_netlink_overruns_total %llu\n", (unsigned long long)d.overruns);

	/* Attached ports as status finds them: our program on the port. */
	prom_head("xfib_attached", "gauge",
		  "1 for every interface the XDP forwarder is attached to, with the attach mode.");
	ifs = if_nameindex();
	for (it = ifs; it && it->if_index; it++) {
		__u8 mode = 0;
		__u32 id = xdp_prog_on(it->if_index, &mode);

		if (!id || !prog_is_xfib(id, NULL, 0))
			continue;
		printf("xfib_attached{interface=");
		prom_label(it->if_name);
		printf(",mode=\"%s\"} 1\n", mode_name(mode));
	}
	if (ifs)
		if_freenameindex(ifs);
}

static int cmd_stats(struct ctl *c, int argc, char **argv)
{
	struct xfib_counter sum[XFIB_REASON_COUNT];
	struct xfib_fwd_bpf *skel = NULL;
	int ncpu = libbpf_num_possible_cpus(), err = 0;
	struct xfib_counter *pc;
	__u32 r;

	if (ncpu < 1)
		return ncpu;
	pc = calloc(ncpu, sizeof(*pc));
	if (!pc)
		return -ENOMEM;
	err = open_dataplane(c, 0, &skel);
	if (err)
		goto out;
	if (c->interval > 0) {
		err = stats_monitor(c, bpf_map__fd(skel->maps.xfib_stats), pc, ncpu);
		goto out;
	}
	err = stats_read(bpf_map__fd(skel->maps.xfib_stats), pc, ncpu, sum);
	if (err)
		goto out;
	if (c->prometheus) {
		stats_prometheus(skel, sum);
		goto out;
	}
	if (c->json)
		printf("{");
	else
		printf("%-26s %14s %16s\n", "counter", "packets", "bytes");
	for (r = 0; r < XFIB_REASON_COUNT; r++) {
		if (c->json)
			printf("%s\"%s\":{\"packets\":%llu,\"bytes\":%llu}",
			       r ? "," : "", reason_names[r],
			       (unsigned long long)sum[r].packets,
			       (unsigned long long)sum[r].bytes);
		else
			printf("%-26s %14llu %16llu  %s\n", reason_names[r],
			       (unsigned long long)sum[r].packets,
			       (unsigned long long)sum[r].bytes, reason_help[r]);
	}
	if (c->json)
		printf("}\n");
out:
	xfib_fwd_bpf__destroy(skel);
	free(pc);
	return err;
}

/* ---- lookup / verify ------------------------------------------------------------ */

static const char *addr_str(int af, const __u8 *a, char *buf, size_t len)
{
	if (!inet_ntop(af, a, buf, len))
		snprintf(buf, len, "?");
	return buf;
}

static const char *mac_str(const __u8 *m, char *buf, size_t len)
{
	snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2],
		 m[3], m[4], m[5]);
	return buf;
}

/* Names are those of our namespace (the router's): ask the kernel, not
 * /sys, which nsenter leaves pointing at another namespace. */
static const char *dev_str(__u32 ifindex, char *buf)
{
	if (!ifindex || !if_indextoname(ifindex, buf))
		snprintf(buf, IF_NAMESIZE, "if%u", ifindex);
	return buf;
}

static const char *table_str(__u32 table, char *buf, size_t len)
{
	if (table == RT_TABLE_MAIN)
		return "main";
	if (table == RT_TABLE_LOCAL)
		return "local";
	if (table == RT_TABLE_DEFAULT)
		return "default";
	snprintf(buf, len, "%u", table);
	return buf;
}

/* A pass reason's help without its "to kernel: " lead. */
static const char *pass_why(enum xfib_reason a)
{
	static const char lead[] = "to kernel: ";
	const char *h = reason_help[a];

	return strncmp(h, lead, strlen(lead)) ? h : h + strlen(lead);
}

static const char *action_str(enum xfib_reason a)
{
	if (a == XFIB_FWD_V4 || a == XFIB_FWD_V6)
		return "forward";
	if (a == XFIB_DROP_BLACKHOLE)
		return "drop";
	return "pass";
}

/* xfib's answer in a few words: "gateway 198.18.2.2 dev r-sink (nexthop 5)". */
static void xfib_answer_str(const struct xfib_nexthop *nh, __u32 idx,
			    char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN], dev[IF_NAMESIZE];

	if (nh->kind == XFIB_NH_GATEWAY)
		snprintf(buf, len, "gateway %s dev %s (nexthop %u)",
			 addr_str(nh->family, nh->gw, a, sizeof(a)),
			 dev_str(nh->ifindex, dev), idx);
	else if (nh->kind == XFIB_NH_CONNECTED)
		snprintf(buf, len, "connected dev %s (nexthop %u)",
			 dev_str(nh->ifindex, dev), idx);
	else
		snprintf(buf, len, "%s (nexthop %u)", dpl_kind_name(nh->kind), idx);
}

/* The kernel's gateway, if bpf_fib_lookup() wrote one over dst. */
static bool kfib_gateway(int af, const __u8 *dst, const struct xv_query *k)
{
	return k->ret == BPF_FIB_LKUP_RET_SUCCESS &&
	       (k->family != af || memcmp(k->addr, dst, af == AF_INET ? 4 : 16));
}

static void kfib_answer_str(int af, const __u8 *dst, const struct xv_query *k,
			    char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN], dev[IF_NAMESIZE];

	if (k->ret != BPF_FIB_LKUP_RET_SUCCESS)
		snprintf(buf, len, "%s", kfib_ret_name(k->ret));
	else if (kfib_gateway(af, dst, k))
		snprintf(buf, len, "success via %s dev %s",
			 addr_str(k->family, k->addr, a, sizeof(a)),
			 dev_str(k->ifindex, dev));
	else
		snprintf(buf, len, "success dev %s", dev_str(k->ifindex, dev));
}

static void json_kfib(int af, const __u8 *dst, const struct xv_query *k)
{
	char a[INET6_ADDRSTRLEN], dev[IF_NAMESIZE];

	printf("{\"result\":\"%s\"", kfib_ret_name(k->ret));
	if (k->ret == BPF_FIB_LKUP_RET_SUCCESS) {
		printf(",\"ifindex\":%u,\"dev\":", k->ifindex);
		json_str(dev_str(k->ifindex, dev));
		if (kfib_gateway(af, dst, k))
			printf(",\"gateway\":\"%s\"",
			       addr_str(k->family, k->addr, a, sizeof(a)));
	}
	printf("}");
}

static void json_xfib_nh(const struct xfib_nexthop *nh, __u32 idx)
{
	char a[INET6_ADDRSTRLEN], dev[IF_NAMESIZE];

	printf("{\"nexthop\":%u,\"kind\":\"%s\"", idx, dpl_kind_name(nh->kind));
	if (nh->kind == XFIB_NH_GATEWAY || nh->kind == XFIB_NH_CONNECTED) {
		printf(",\"ifindex\":%u,\"dev\":", nh->ifindex);
		json_str(dev_str(nh->ifindex, dev));
	}
	if (nh->kind == XFIB_NH_GATEWAY)
		printf(",\"gateway\":\"%s\"", addr_str(nh->family, nh->gw, a, sizeof(a)));
	printf("}");
}

static int parse_addr(const char *s, int *fam, __u8 *addr)
{
	memset(addr, 0, 16);
	if (inet_pton(AF_INET, s, addr) == 1)
		*fam = XFIB_V4;
	else if (inet_pton(AF_INET6, s, addr) == 1)
		*fam = XFIB_V6;
	else
		return -EAFNOSUPPORT;
	return 0;
}

static void print_lookup(struct ctl *c, const struct dpl_result *r,
			 const struct kroute *kr, const struct xv_query *k,
			 enum verify_outcome agree, __u32 iif)
{
	int af = r->fam == XFIB_V4 ? AF_INET : AF_INET6;
	char a[INET6_ADDRSTRLEN], m1[18], m2[18], dev[IF_NAMESIZE], t[16], ans[128];
	bool out = r->nh.kind == XFIB_NH_GATEWAY || r->nh.kind == XFIB_NH_CONNECTED;
	static const char *const agree_str[] = {
		[VERIFY_MATCH] = "agrees",
		[VERIFY_DEFERRED] = "deferred to the kernel",
		[VERIFY_MISMATCH] = "MISMATCH",
	};

	if (c->json) {
		printf("{\"address\":\"%s\",\"family\":\"%s\",\"algorithm\":\"%s\","
		       "\"generation\":%u,\"nexthop\":{\"index\":%u,\"kind\":\"%s\",\"mtu\":%u},",
		       addr_str(af, r->addr, a, sizeof(a)), fam_name(r->fam),
		       xfib_algo_name(r->act.algo), r->act.generation, r->nh_idx,
		       dpl_kind_name(r->nh.kind), r->nh.mtu);
		if (r->group)
			printf("\"group\":{\"nexthop\":%u,\"index\":%u,\"members\":%u},",
			       r->group_nh_idx, r->group_nh.group, r->members);
		printf("\"egress\":");
		if (out) {
			printf("{\"ifindex\":%u,\"name\":", r->nh.ifindex);
			json_str(dev_str(r->nh.ifindex, dev));
			printf(",\"known\":%s,\"up\":%s,\"attached\":%s}",
			       r->have_iface ? "true" : "false",
			       r->have_iface && (r->iface.flags & XFIB_IF_UP) ? "true" : "false",
			       r->attached ? "true" : "false");
		} else {
			printf("null");
		}
		if (r->nh.kind == XFIB_NH_GATEWAY)
			printf(",\"gateway\":\"%s\"", addr_str(r->nh.family, r->nh.gw, a, sizeof(a)));
		else
			printf(",\"gateway\":null");
		printf(",\"neighbour\":");
		if (out && r->have_neigh)
			printf("{\"index\":%u,\"state\":\"%s\",\"dst_mac\":\"%s\",\"src_mac\":\"%s\"}",
			       r->neigh_idx,
			       r->neigh.state == XFIB_NEIGH_VALID ? "valid" : "invalid",
			       mac_str(r->neigh.dmac, m1, sizeof(m1)),
			       mac_str(r->neigh.smac, m2, sizeof(m2)));
		else
			printf("null");
		printf(",\"action\":\"%s\",\"reason\":\"%s\",\"kernel\":{",
		       action_str(r->action), reason_names[r->action]);
		if (kr->err) {
			printf("\"error\":");
			json_str(strerror(-kr->err));
		} else {
			printf("\"prefix\":\"%s/%u\",\"table\":\"%s\",\"type\":\"%s\"",
			       addr_str(kr->family, kr->dst, a, sizeof(a)), kr->plen,
			       table_str(kr->table, t, sizeof(t)), kroute_type_name(kr->type));
			if (kr->oif) {
				printf(",\"dev\":");
				json_str(dev_str(kr->oif, dev));
			}
			if (kr->gw_family)
				printf(",\"gateway\":\"%s\"",
				       addr_str(kr->gw_family, kr->gw, a, sizeof(a)));
		}
		printf("},\"kernel_fib\":");
		json_kfib(af, r->addr, k);
		printf(",\"iif\":");
		json_str(dev_str(iif, dev));
		printf(",\"verdict\":\"%s\"}\n", agree == VERIFY_MATCH ? "match" :
						 agree == VERIFY_DEFERRED ? "deferred" : "mismatch");
		return;
	}

	printf("address:    %s (%s)\n", addr_str(af, r->addr, a, sizeof(a)), fam_name(r->fam));
	printf("instance:   %s, generation %u\n", xfib_algo_name(r->act.algo),
	       r->act.generation);
	if (r->ready && r->group)
		printf("multipath:  nexthop %u, group %u of %u members; a flow with no\n"
		       "            ports takes:\n", r->group_nh_idx, r->group_nh.group,
		       r->members);
	if (r->ready)
		printf("nexthop:    %u, %s%s\n", r->nh_idx, dpl_kind_name(r->nh.kind),
		       r->nh_idx == XFIB_NH_IDX_NONE ? " (no route)" : "");
	if (out) {
		printf("egress:     %s (ifindex %u): %s, %s\n",
		       dev_str(r->nh.ifindex, dev), r->nh.ifindex,
		       !r->have_iface ? "unknown to xfibd" :
		       (r->iface.flags & XFIB_IF_UP) ? "up" : "down",
		       r->attached ? "attached" : "not attached");
		if (r->nh.kind == XFIB_NH_GATEWAY)
			printf("gateway:    %s\n", addr_str(r->nh.family, r->nh.gw, a, sizeof(a)));
		if (r->have_neigh)
			printf("neighbour:  %u, %s, dst %s, src %s\n", r->neigh_idx,
			       r->neigh.state == XFIB_NEIGH_VALID ? "valid" : "not resolved",
			       mac_str(r->neigh.dmac, m1, sizeof(m1)),
			       mac_str(r->neigh.smac, m2, sizeof(m2)));
		else
			printf("neighbour:  none\n");
	}
	if (r->action == XFIB_FWD_V4 || r->action == XFIB_FWD_V6)
		printf("action:     forward\n");
	else if (r->action == XFIB_DROP_BLACKHOLE)
		printf("action:     drop (blackhole)\n");
	else
		printf("action:     pass to the kernel: %s\n", pass_why(r->action));
	if (kr->err) {
		printf("kernel:     %s\n", strerror(-kr->err));
	} else {
		printf("kernel:     %s/%u table %s type %s",
		       addr_str(kr->family, kr->dst, a, sizeof(a)), kr->plen,
		       table_str(kr->table, t, sizeof(t)), kroute_type_name(kr->type));
		if (kr->gw_family)
			printf(" via %s", addr_str(kr->gw_family, kr->gw, a, sizeof(a)));
		if (kr->oif)
			printf(" dev %s", dev_str(kr->oif, dev));
		printf("\n");
	}
	kfib_answer_str(af, r->addr, k, ans, sizeof(ans));
	printf("kernel fib: %s (bpf_fib_lookup from %s): %s\n", ans,
	       dev_str(iif, dev), agree_str[agree]);
}

static int cmd_lookup(struct ctl *c, int argc, char **argv)
{
	struct xfib_fwd_bpf *skel = NULL;
	struct kfib *kf = NULL;
	struct dpl_result r;
	struct kroute kr;
	struct xv_query *k;
	struct dpl d = { 0 };
	const char *arg = argv[0];
	enum verify_outcome agree;
	const __u8 *addr = c->addr;
	int fam = c->fam, err;
	__u32 iif;

	err = resolve_iif(c);
	if (err)
		return err;
	err = open_dataplane(c, 0, &skel);
	if (err)
		return err;
	iif = c->iif;
	if (!iif)
		iif = verify_default_iif(skel);
	err = dpl_open(&d, skel, fam);
	if (err) {
		err_cmd("%s: open the %s lookup table: %s", arg, fam_name(fam),
			strerror(-err));
		goto out;
	}
	err = dpl_resolve(&d, addr, &r);
	if (err) {
		err_cmd("%s: %s lookup: %s", arg, fam_name(fam), strerror(-err));
		goto out;
	}
	err = kroute_fibmatch(fam, addr, &kr);
	if (err) {
		err_cmd("%s: ask the kernel (rtnetlink RTM_GETROUTE): %s", arg,
			strerror(-err));
		goto out;
	}
	err = kfib_open(&kf);
	if (err) {
		err_cmd("load the kernel lookup program xfib_verify: %s", strerror(-err));
		goto out;
	}
	k = kfib_queries(kf);
	memset(k, 0, sizeof(*k));
	k->family = fam == XFIB_V4 ? AF_INET : AF_INET6;
	memcpy(k->addr, addr, 16);
	err = kfib_run(kf, iif, 1);
	if (!err && k->ret < 0)
		err = k->ret;
	if (err) {
		err_cmd("%s: bpf_fib_lookup: %s", arg, strerror(-err));
		goto out;
	}
	agree = verify_compare(&d, fam, addr, r.ready, r.group ? &r.group_nh : &r.nh, k);
	print_lookup(c, &r, &kr, k, agree, iif);
out:
	kfib_close(kf);
	if (d.skel)
		dpl_close(&d);
	xfib_fwd_bpf__destroy(skel);
	return err;
}

/* Lines of mismatches shown; the summary counts them all. */
#define VERIFY_SHOW 20

static int cmd_verify(struct ctl *c, int argc, char **argv)
{
	struct verify_opts o = { .random = c->random, .iif = c->iif,
				 .max_reports = VERIFY_SHOW };
	struct xfib_fwd_bpf *skel = NULL;
	struct verify_report rep;
	unsigned long total = 0, bad = 0;
	char a[INET6_ADDRSTRLEN], x[128], k[128], dev[IF_NAMESIZE], t[16];
	size_t i;
	int fam, err;

	err = resolve_iif(c);
	if (err)
		return err;
	o.iif = c->iif;
	err = open_dataplane(c, 0, &skel);
	if (err)
		return err;
	if (!xfib_daemon_pid(skel))
		fprintf(stderr, "xfibctl: verify: xfibd is not running: checking the state it left\n");
	err = verify_run(skel, &o, &rep);
	if (err) {
		err_cmd("%s", rep.err);
		goto out;
	}
	for (fam = 0; fam < XFIB_FAMILIES; fam++) {
		total += rep.fam[fam].checked;
		bad += rep.fam[fam].mismatched;
	}
	if (c->json) {
		printf("{\"table\":\"%s\",\"iif\":", table_str(rep.table, t, sizeof(t)));
		json_str(dev_str(rep.iif, dev));
		printf(",\"seconds\":%.3f", rep.seconds);
		for (fam = 0; fam < XFIB_FAMILIES; fam++) {
			const struct verify_family *f = &rep.fam[fam];

			printf(",\"%s\":{\"algorithm\":\"%s\",\"generation\":%u,"
			       "\"prefixes\":%zu,\"checked\":%lu,\"matched\":%lu,"
			       "\"deferred\":%lu,\"mismatched\":%lu,\"rechecked\":%lu}",
			       fam_name(fam), xfib_algo_name(f->act.algo),
			       f->act.generation, f->prefixes, f->checked, f->matched,
			       f->deferred, f->mismatched, f->rechecked);
		}
		printf(",\"mismatches\":[");
		for (i = 0; i < rep.nmis; i++) {
			const struct verify_mismatch *m = &rep.mis[i];
			int af = m->fam == XFIB_V4 ? AF_INET : AF_INET6;

			printf("%s{\"family\":\"%s\",\"address\":\"%s\",\"xfib\":",
			       i ? "," : "", fam_name(m->fam),
			       addr_str(af, m->addr, a, sizeof(a)));
			json_xfib_nh(&m->nh, m->nh_idx);
			printf(",\"kernel\":");
			json_kfib(af, m->addr, &m->kernel);
			printf("}");
		}
		printf("]}\n");
	} else {
		for (i = 0; i < rep.nmis; i++) {
			const struct verify_mismatch *m = &rep.mis[i];
			int af = m->fam == XFIB_V4 ? AF_INET : AF_INET6;

			xfib_answer_str(&m->nh, m->nh_idx, x, sizeof(x));
			kfib_answer_str(af, m->addr, &m->kernel, k, sizeof(k));
			printf("mismatch: %s %s: xfib %s, kernel %s\n", fam_name(m->fam),
			       addr_str(af, m->addr, a, sizeof(a)), x, k);
		}
		if (bad > rep.nmis)
			printf("... and %lu more mismatches\n", bad - rep.nmis);
		for (fam = 0; fam < XFIB_FAMILIES; fam++) {
			const struct verify_family *f = &rep.fam[fam];

			printf("%s: %s generation %u, %zu prefixes: %lu checked, %lu matched, "
			       "%lu deferred to the kernel, %lu mismatched\n",
			       fam_name(fam), xfib_algo_name(f->act.algo),
			       f->act.generation, f->prefixes, f->checked, f->matched,
			       f->deferred, f->mismatched);
		}
		printf("%lu addresses in %.2f s (%.0f/s), table %s, kernel lookups from %s\n",
		       total, rep.seconds, rep.seconds > 0 ? total / rep.seconds : 0.0,
		       table_str(rep.table, t, sizeof(t)), dev_str(rep.iif, dev));
	}
	/* Exit status 1: the dataplane disagrees with the kernel. */
	err = bad ? 1 : 0;
out:
	verify_report_free(&rep);
	xfib_fwd_bpf__destroy(skel);
	return err;
}

/* ---- neighbours / nexthops ------------------------------------------------------ */

/*
 * The index arrays as the dataplane reads them. Both are mmap()ed read-only:
 * reading 64k entries one syscall each would take longer than the dump.
 * An entry is in use when it has a family (neighbours) or a kind
 * (nexthops); xfibd zeroes an entry only after a grace period, so an entry
 * just retired still shows.
 */
struct idx_arrays {
	const struct xfib_neigh *neigh;
	const struct xfib_nexthop *nh;
	const struct xfib_nh_group *grp;
	size_t neigh_len, nh_len, grp_len;
};

static int idx_arrays_map(struct xfib_fwd_bpf *skel, struct idx_arrays *a)
{
	a->neigh = xfib_map_mmap(skel->maps.xfib_neighs, false, &a->neigh_len);
	a->nh = xfib_map_mmap(skel->maps.xfib_nexthops, false, &a->nh_len);
	a->grp = xfib_map_mmap(skel->maps.xfib_nh_groups, false, &a->grp_len);
	if (!a->neigh || !a->nh || !a->grp) {
		int err = -errno;

		err_cmd("map %s: %s", !a->neigh ? "xfib_neighs" :
			!a->nh ? "xfib_nexthops" : "xfib_nh_groups", strerror(-err));
		return err;
	}
	return 0;
}

static void idx_arrays_unmap(struct idx_arrays *a)
{
	if (a->neigh)
		munmap((void *)a->neigh, a->neigh_len);
	if (a->nh)
		munmap((void *)a->nh, a->nh_len);
	if (a->grp)
		munmap((void *)a->grp, a->grp_len);
}

/* A group's members in bucket order, as "nexthop:buckets" (text) or
 * objects (JSON). */
static void print_group_members(const struct idx_arrays *a,
				const struct xfib_nexthop *nh, bool json)
{
	__u32 m[XFIB_GROUP_BUCKETS], b[XFIB_GROUP_BUCKETS];
	size_t i, n = dpl_group_members(a->grp, nh, m, b);

	for (i = 0; i < n; i++) {
		if (json)
			printf("%s{\"nexthop\":%u,\"buckets\":%u}", i ? "," : "",
			       m[i], b[i]);
		else
			printf(" %u:%u", m[i], b[i]);
	}
}

static int af_fam(int af)
{
	return af == AF_INET ? XFIB_V4 : af == AF_INET6 ? XFIB_V6 : -1;
}

/* The --dev filter, resolved in the router's namespace. */
static int resolve_dev(struct ctl *c, __u32 *ifindex)
{
	*ifindex = 0;
	if (!c->dev_name)
		return 0;
	*ifindex = if_nametoindex(c->dev_name);
	if (!*ifindex) {
		err_cmd("--dev %s: no such interface", c->dev_name);
		return -ENODEV;
	}
	return 0;
}

static const char *neigh_state_name(__u8 state)
{
	return state == XFIB_NEIGH_VALID ? "valid" : "invalid";
}

/* Opens the router and maps the arrays; *skel to destroy afterwards. */
static int idx_dump_open(struct ctl *c, struct xfib_fwd_bpf **skel,
			 struct idx_arrays *a, __u32 *dev)
{
	int err = resolve_dev(c, dev);

	if (err)
		return err;
	err = open_dataplane(c, 0, skel);
	if (err)
		return err;
	return idx_arrays_map(*skel, a);
}

static int cmd_neighbours(struct ctl *c, int argc, char **argv)
{
	char a[INET6_ADDRSTRLEN], m1[18], m2[18], dev[IF_NAMESIZE];
	struct xfib_fwd_bpf *skel = NULL;
	struct idx_arrays arr = { 0 };
	unsigned int n = 0;
	__u32 i, ifindex;
	int err;

	err = idx_dump_open(c, &skel, &arr, &ifindex);
	if (err)
		goto out;
	if (c->json)
		printf("[");
	for (i = 1; i < XFIB_NEIGH_MAX; i++) {
		struct xfib_neigh e = arr.neigh[i];

		if (!e.family || (c->fam >= 0 && af_fam(e.family) != c->fam) ||
		    (ifindex && e.ifindex != ifindex))
			continue;
		addr_str(e.family, e.addr, a, sizeof(a));
		mac_str(e.dmac, m1, sizeof(m1));
		mac_str(e.smac, m2, sizeof(m2));
		dev_str(e.ifindex, dev);
		if (c->json) {
			printf("%s{\"index\":%u,\"family\":\"%s\",\"address\":\"%s\","
			       "\"ifindex\":%u,\"dev\":",
			       n ? "," : "", i, fam_name(af_fam(e.family)), a, e.ifindex);
			json_str(dev);
			printf(",\"lladdr\":\"%s\",\"src_mac\":\"%s\",\"state\":\"%s\"}",
			       m1, m2, neigh_state_name(e.state));
		} else {
			printf("neigh %u %s %s dev %s lladdr %s %s\n", i,
			       fam_name(af_fam(e.family)), a, dev, m1,
			       neigh_state_name(e.state));
		}
		n++;
	}
	if (c->json)
		printf("]\n");
out:
	idx_arrays_unmap(&arr);
	xfib_fwd_bpf__destroy(skel);
	return err;
}

static int cmd_nexthops(struct ctl *c, int argc, char **argv)
{
	char a[INET6_ADDRSTRLEN], m[18], dev[IF_NAMESIZE];
	struct xfib_fwd_bpf *skel = NULL;
	struct idx_arrays arr = { 0 };
	unsigned int n = 0;
	__u32 i, ifindex;
	int err;

	err = idx_dump_open(c, &skel, &arr, &ifindex);
	if (err)
		goto out;
	if (c->json)
		printf("[");
	for (i = 1; i < XFIB_NEXTHOP_MAX; i++) {
		struct xfib_nexthop e = arr.nh[i];
		bool gw = e.kind == XFIB_NH_GATEWAY;
		bool out = gw || e.kind == XFIB_NH_CONNECTED;
		struct xfib_neigh ne = { 0 };

		/* Only nexthops with a family and a device match a filter. */
		if (e.kind == XFIB_NH_NONE ||
		    (c->fam >= 0 && (!out || af_fam(e.family) != c->fam)) ||
		    (ifindex && (!out || e.ifindex != ifindex)))
			continue;
		if (gw && e.neigh && e.neigh < XFIB_NEIGH_MAX)
			ne = arr.neigh[e.neigh];
		if (out)
			dev_str(e.ifindex, dev);
		if (gw)
			addr_str(e.family, e.gw, a, sizeof(a));
		mac_str(ne.dmac, m, sizeof(m));
		if (c->json) {
			printf("%s{\"index\":%u,\"kind\":\"%s\",\"family\":", n ? "," : "",
			       i, dpl_kind_name(e.kind));
			if (out)
				printf("\"%s\",\"gateway\":", fam_name(af_fam(e.family)));
			else
				printf("null,\"gateway\":");
			if (gw)
				printf("\"%s\"", a);
			else
				printf("null");
			printf(",\"ifindex\":%u,\"dev\":", out ? e.ifindex : 0);
			if (out)
				json_str(dev);
			else
				printf("null");
			printf(",\"mtu\":%u,\"neigh\":", e.mtu);
			if (gw)
				printf("{\"index\":%u,\"lladdr\":\"%s\",\"state\":\"%s\"}",
				       e.neigh, m, neigh_state_name(ne.state));
			else
				printf("null");
			if (e.kind == XFIB_NH_GROUP) {
				printf(",\"group\":{\"index\":%u,\"members\":[", e.group);
				print_group_members(&arr, &e, true);
				printf("]}");
			}
			printf("}");
		} else {
			printf("nexthop %u %s", i, dpl_kind_name(e.kind));
			if (gw)
				printf(" %s dev %s neigh %u lladdr %s %s", a, dev,
				       e.neigh, m, neigh_state_name(ne.state));
			else if (out)
				printf(" %s dev %s", fam_name(af_fam(e.family)), dev);
			if (e.kind == XFIB_NH_GROUP) {
				printf(" index %u buckets", e.group);
				print_group_members(&arr, &e, false);
			}
			if (e.mtu)
				printf(" mtu %u", e.mtu);
			printf("\n");
		}
		n++;
	}
	if (c->json)
		printf("]\n");
out:
	idx_arrays_unmap(&arr);
	xfib_fwd_bpf__destroy(skel);
	return err;
}

/* ---- routes: the dataplane's table as prefixes ---------------------------------- */

struct range_list {
	struct {
		dpl_addr start;
		__u32 nh;
	} *v;
	size_t n, cap;
};

static int range_add(dpl_addr start, __u32 nh, void *arg)
{
	struct range_list *l = arg;

	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 4096;
		void *p = realloc(l->v, cap * sizeof(*l->v));

		if (!p)
			return -ENOMEM;
		l->v = p;
		l->cap = cap;
	}
	l->v[l->n].start = start;
	l->v[l->n++].nh = nh;
	return 0;
}

/* The ranges of the family's live instance, consistent with one
 * generation. */
static int routes_ranges(struct dpl *d, struct range_list *l)
{
	int tries, err;

	for (tries = 0; tries < 10; tries++) {
		l->n = 0;
		err = dpl_walk(d, range_add, l);
		if (err)
			return err;
		err = dpl_refresh(d);
		if (err <= 0)
			return err;
	}
	return -EBUSY;
}

static void print_route(struct ctl *c, struct dpl *d, dpl_addr a, unsigned int plen,
			__u32 idx, unsigned int *n)
{
	int af = d->fam == XFIB_V4 ? AF_INET : AF_INET6;
	char p[INET6_ADDRSTRLEN], ans[160];
	struct xfib_nexthop nh;
	__u8 b[16] = { 0 };
	int i;

	if (d->fam == XFIB_V4) {
		for (i = 0; i < 4; i++)
			b[i] = (__u8)(a >> (24 - 8 * i));
	} else {
		for (i = 0; i < 16; i++)
			b[i] = (__u8)(a >> (120 - 8 * i));
	}
	addr_str(af, b, p, sizeof(p));
	dpl_nexthop(d, idx, &nh);
	if (c->json) {
		printf("%s{\"prefix\":\"%s/%u\",\"nexthop\":%u,\"kind\":\"%s\"}",
		       *n ? "," : "", p, plen, idx, dpl_kind_name(nh.kind));
	} else {
		xfib_answer_str(&nh, idx, ans, sizeof(ans));
		printf("%s/%u %s\n", p, plen, ans);
	}
	(*n)++;
}

/* The range holding address x (ranges start at 0 and are sorted). */
static size_t range_of(const struct range_list *l, dpl_addr x)
{
	size_t lo = 0, hi = l->n - 1;

	while (lo < hi) {
		size_t mid = (lo + hi + 1) / 2;

		if (l->v[mid].start <= x)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

struct cover {
	struct ctl *c;
	struct dpl *d;
	const struct range_list *l;
	unsigned int bits, n;
};

/* Addresses of the block [a, last] whose answer is nh. */
static dpl_addr block_share(const struct range_list *l, size_t i, size_t j,
			    dpl_addr a, dpl_addr last, __u32 nh)
{
	dpl_addr sum = 0;
	size_t m;

	for (m = i; m <= j; m++)
		if (l->v[m].nh == nh)
			sum += (m == j ? last : l->v[m + 1].start - 1) -
			       (m == i ? a : l->v[m].start) + 1;
	return sum;
}

/*
 * The table as nested prefixes, like routes. The block of 2^k addresses
 * at a takes the answer of its first or its last address, whichever
 * covers more of it, and gets a prefix when that differs from what the
 * enclosing prefix gives; then each half is done the same way. A block
 * reaching into addresses without a route gets none (such holes cannot
 * be written as routes). Longest-prefix match over the output gives
 * exactly the dataplane's answers; a covering route that more specific
 * ones split may come out as several prefixes.
 */
static void cover_block(struct cover *cv, dpl_addr a, unsigned int k, __u32 outer)
{
	const struct range_list *l = cv->l;
	dpl_addr last = a + (k == 128 ? ~(dpl_addr)0 : ((dpl_addr)1 << k) - 1);
	size_t i = range_of(l, a), j = range_of(l, last);
	__u32 first_nh = l->v[i].nh, last_nh = l->v[j].nh, nh;

	nh = block_share(l, i, j, a, last, last_nh) >
			     block_share(l, i, j, a, last, first_nh) ?
		     last_nh : first_nh;
	if (outer == XFIB_NH_IDX_NONE &&
	    (first_nh == XFIB_NH_IDX_NONE || last_nh == XFIB_NH_IDX_NONE))
		nh = outer;
	if (nh != outer) {
		outer = nh;
		print_route(cv->c, cv->d, a, cv->bits - k, nh, &cv->n);
	}
	if (i == j)
		return;
	cover_block(cv, a, k - 1, outer);
	cover_block(cv, a + ((dpl_addr)1 << (k - 1)), k - 1, outer);
}

static int cmd_routes(struct ctl *c, int argc, char **argv)
{
	struct xfib_fwd_bpf *skel = NULL;
	struct range_list l = { 0 };
	unsigned int n = 0;
	int fam, err;

	err = open_dataplane(c, 0, &skel);
	if (err)
		return err;
	if (c->json)
		printf("[");
	for (fam = 0; fam < XFIB_FAMILIES; fam++) {
		struct dpl d;

		if (c->fam >= 0 && fam != c->fam)
			continue;
		err = dpl_open(&d, skel, fam);
		if (err) {
			err_cmd("open the %s lookup table: %s", fam_name(fam),
				strerror(-err));
			break;
		}
		err = routes_ranges(&d, &l);
		if (err) {
			err_cmd("read the %s lookup table: %s", fam_name(fam),
				strerror(-err));
		} else if (l.n) {
			struct cover cv = { c, &d, &l, fam == XFIB_V4 ? 32 : 128, n };

			cover_block(&cv, 0, cv.bits, XFIB_NH_IDX_NONE);
			n = cv.n;
		}
		dpl_close(&d);
		if (err)
			break;
	}
	if (c->json)
		printf("]\n");
	free(l.v);
	xfib_fwd_bpf__destroy(skel);
	return err;
}

/* ---- options ---------------------------------------------------------------------- */

static int set_json(struct ctl *c, const char *arg)
{
	c->json = true;
	return 0;
}

static int set_pin_dir(struct ctl *c, const char *arg)
{
	c->pin_opt = arg;
	return 0;
}

static int set_verbose(struct ctl *c, const char *arg)
{
	log_level++;
	return 0;
}

static int set_mode(struct ctl *c, const char *arg)
{
	if (!strcmp(arg, "native")) {
		c->mode = XDP_MODE_NATIVE;
	} else if (!strcmp(arg, "generic")) {
		c->mode = XDP_MODE_SKB;
	} else {
		err_cmd("--mode '%s': use native or generic", arg);
		return -EINVAL;
	}
	return 0;
}

static int set_random(struct ctl *c, const char *arg)
{
	char *end;

	errno = 0;
	c->random = strtoul(arg, &end, 0);
	if (*end || !*arg || *arg == '-' || errno) {
		err_cmd("--random '%s': not a number of addresses", arg);
		return -EINVAL;
	}
	return 0;
}

static int set_iif(struct ctl *c, const char *arg)
{
	c->iif_name = arg;
	return 0;
}

static int set_interval(struct ctl *c, const char *arg)
{
	char *end;

	errno = 0;
	c->interval = strtod(arg, &end);
	/* 1 ms floor: a smaller interval only spins on the map reads. */
	if (*end || end == arg || errno || !isfinite(c->interval) ||
	    c->interval < 0.001 || c->interval > 86400) {
		err_cmd("--interval '%s': not a number of seconds from 0.001 to 86400",
			arg);
		return -EINVAL;
	}
	return 0;
}

static int set_count(struct ctl *c, const char *arg)
{
	char *end;

	errno = 0;
	c->count = strtoul(arg, &end, 10);
	if (*end || end == arg || errno || *arg == '-' || !c->count) {
		err_cmd("--count '%s': not a number of intervals > 0", arg);
		return -EINVAL;
	}
	return 0;
}

static int set_prometheus(struct ctl *c, const char *arg)
{
	c->prometheus = true;
	return 0;
}

static int set_family(struct ctl *c, const char *arg)
{
	c->fam = parse_family(arg);
	if (c->fam < 0) {
		err_cmd("--family '%s': not a family (ipv4, ipv6)", arg);
		return -EINVAL;
	}
	return 0;
}

static int set_dev(struct ctl *c, const char *arg)
{
	c->dev_name = arg;
	return 0;
}

/* ---- argument checks: usage errors, before anything is touched --------------------- */

/* Options of stats that do not go together. */
static int stats_check(struct ctl *c, int argc, char **argv)
{
	if (c->prometheus && c->interval > 0) {
		err_cmd("--prometheus is a snapshot: it does not take --interval");
		return -EINVAL;
	}
	if (c->prometheus && c->json) {
		err_cmd("--prometheus and --json are two output formats: choose one");
		return -EINVAL;
	}
	if (c->count && !c->interval) {
		err_cmd("--count needs --interval");
		return -EINVAL;
	}
	return 0;
}

static int lookup_check(struct ctl *c, int argc, char **argv)
{
	if (parse_addr(argv[0], &c->fam, c->addr)) {
		err_cmd("%s: not an IPv4 or IPv6 address", argv[0]);
		return -EINVAL;
	}
	return 0;
}

/* ---- command table ------------------------------------------------------------------ */

#define OPT_JSON { "json", 'j', NULL, "JSON output", set_json }
#define OPT_IIF                                                             \
	{ "iif", 'i', "IFNAME",                                             \
	  "port the kernel's lookups enter by\n"                            \
	  "(default: the first attached port, else lo)", set_iif }
#define OPT_FILTERS                                                         \
	{ "family", 'f', "ipv4|ipv6", "only this family", set_family },     \
	{ "dev", 'd', "IFNAME", "only entries on this interface", set_dev }

static const struct cmd_opt global_opts[] = {
	{ "pin-dir", 'p', "DIR",
	  "pinned maps of the router (default: per network namespace)", set_pin_dir },
	OPT_JSON,
	{ "verbose", 'v', NULL, "show library messages (twice: debug too)", set_verbose },
	{ 0 },
};

static const struct cmd_opt attach_opts[] = {
	{ "mode", 'm', "native|generic", "XDP mode (default: native)", set_mode },
	{ 0 },
};

static const struct cmd_opt no_opts[] = { { 0 } };

static const struct cmd_opt show_opts[] = { OPT_JSON, { 0 } };

static const struct cmd_opt stats_opts[] = {
	{ "interval", 'i', "SECS",
	  "every SECS (fractional, >= 0.001), the rate of each\n"
	  "counter that moved; with -j one JSON object a line", set_interval },
	{ "count", 'c', "N", "stop after N intervals (default: at SIGINT)", set_count },
	{ "prometheus", 0, NULL,
	  "Prometheus text format (node_exporter textfile collector)", set_prometheus },
	OPT_JSON,
	{ 0 },
};

static const struct cmd_opt lookup_opts[] = { OPT_IIF, OPT_JSON, { 0 } };

static const struct cmd_opt verify_opts[] = {
	{ "random", 'r', "N", "also check N random addresses per family", set_random },
	OPT_IIF,
	OPT_JSON,
	{ 0 },
};

static const struct cmd_opt dump_opts[] = { OPT_FILTERS, OPT_JSON, { 0 } };

static const struct cmd_opt routes_opts[] = {
	{ "family", 'f', "ipv4|ipv6", "only this family", set_family },
	OPT_JSON,
	{ 0 },
};

static const struct cmd cmds[] = {
	{ "attach", NULL, "IFNAME...", "attach the forwarder to ports (all or none)",
	  attach_opts, 1, -1, NULL, cmd_attach },
	{ "detach", NULL, "IFNAME...", "detach the forwarder from ports",
	  no_opts, 1, -1, NULL, cmd_detach },
	{ "status", NULL, "", "daemon, attached ports, lookup instances",
	  show_opts, 0, 0, NULL, cmd_status },
	{ "stats", NULL, "", "packets forwarded, dropped, and passed to the kernel by reason",
	  stats_opts, 0, 0, stats_check, cmd_stats },
	{ "algo", NULL, "[ipv4|ipv6 [NAME|auto]]",
	  "show the lookup algorithms' preferences, or force one",
	  show_opts, 0, 2, algo_check, cmd_algo },
	{ "lookup", NULL, "ADDR", "the dataplane's answer for an address, beside the kernel's",
	  lookup_opts, 1, 1, lookup_check, cmd_lookup },
	{ "verify", NULL, "", "check the dataplane's answers against the kernel's FIB",
	  verify_opts, 0, 0, NULL, cmd_verify },
	{ "neighbours", "neighbors", "", "the dataplane's neighbour array (entries in use)",
	  dump_opts, 0, 0, NULL, cmd_neighbours },
	{ "nexthops", NULL, "", "the dataplane's nexthop array (entries in use)",
	  dump_opts, 0, 0, NULL, cmd_nexthops },
	{ "routes", NULL, "", "the live lookup table as prefixes, with their nexthops",
	  routes_opts, 0, 0, NULL, cmd_routes },
};

#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

static const struct cmd_opt help_opt = { "help", 'h', NULL, "this help", NULL };

/* "-m, --mode native|generic" or "    --prometheus". */
static int opt_label(char *buf, size_t len, const struct cmd_opt *o)
{
	char s[8] = "   ";

	if (o->key)
		snprintf(s, sizeof(s), "-%c,", o->key);
	return snprintf(buf, len, "%s --%s%s%s", s, o->name, o->arg ? " " : "",
			o->arg ? o->arg : "");
}

static void opts_help(FILE *f, const struct cmd_opt *opts)
{
	const struct cmd_opt *o;
	char label[64];
	int w = 0, l;

	for (o = opts; o->name; o++) {
		l = opt_label(label, sizeof(label), o);
		w = l > w ? l : w;
	}
	for (o = opts; ; o++) {
		const char *h, *nl;

		if (!o->name)
			o = &help_opt;
		opt_label(label, sizeof(label), o);
		fprintf(f, "  %-*s  ", w, label);
		for (h = o->help; (nl = strchr(h, '\n')); h = nl + 1)
			fprintf(f, "%.*s\n  %-*s  ", (int)(nl - h), h, w, "");
		fprintf(f, "%s\n", h);
		if (o == &help_opt)
			break;
	}
}

/* The usage line's options: "[-m native|generic] [--prometheus]". */
static void opts_synopsis(FILE *f, const struct cmd_opt *opts)
{
	const struct cmd_opt *o;

	for (o = opts; o->name; o++) {
		if (o->key)
			fprintf(f, " [-%c", o->key);
		else
			fprintf(f, " [--%s", o->name);
		fprintf(f, "%s%s]", o->arg ? " " : "", o->arg ? o->arg : "");
	}
}

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "Usage: xfibctl");
	opts_synopsis(f, global_opts);
	fprintf(f, " COMMAND [OPTIONS] [ARGS]\n"
		   "       xfibctl COMMAND -h\n\nCommands:\n");
	for (i = 0; i < NCMDS; i++)
		fprintf(f, "  %-11s %s\n", cmds[i].name, cmds[i].help);
	fprintf(f, "\nOptions:\n");
	opts_help(f, global_opts);
	fprintf(f, "\nCommands may be shortened to a unique prefix (\"neigh\" is neighbours).\n"
		   "Exit status: 0 success, 1 failure, 2 usage error.\n");
}

static void cmd_usage(FILE *f, const struct cmd *cmd)
{
	fprintf(f, "Usage: xfibctl %s", cmd->name);
	opts_synopsis(f, cmd->opts);
	fprintf(f, "%s%s\n", *cmd->args ? " " : "", cmd->args);
	if (cmd->alias)
		fprintf(f, "       xfibctl %s ...\n", cmd->alias);
	fprintf(f, "%c%s.\n\nOptions:\n", toupper((unsigned char)cmd->help[0]),
		cmd->help + 1);
	opts_help(f, cmd->opts);
}

/* Commands may be abbreviated to any unique prefix of a name or alias. */
static const struct cmd *find_cmd(const char *name)
{
	const struct cmd *found = NULL;
	size_t i, len = strlen(name);

	for (i = 0; i < NCMDS; i++) {
		const struct cmd *k = &cmds[i];

		if (!strcmp(k->name, name) || (k->alias && !strcmp(k->alias, name)))
			return k;
		if (strncmp(k->name, name, len) &&
		    (!k->alias || strncmp(k->alias, name, len)))
			continue;
		if (found) {
			fprintf(stderr, "xfibctl: '%s' is ambiguous (%s, %s)\n",
				name, found->name, k->name);
			return NULL;
		}
		found = k;
	}
	if (!found)
		fprintf(stderr, "xfibctl: unknown command '%s' (see xfibctl -h)\n", name);
	return found;
}

enum { EXIT_FAILED = 1, EXIT_USAGE = 2, OPT_HELP = 1 };

/*
 * Parses the options of opts (and -h) from argv[1..] with getopt_long,
 * its tables built from opts. Returns OPT_HELP for -h, 0, or -EINVAL
 * after printing one line naming the command, if any, and the option.
 * Global options stop at the command ('+'); a command's may follow its
 * arguments (xfibctl lookup ADDR -j). getopt's own messages are off
 * (opterr): they would not name the command.
 */
static int parse_opts(struct ctl *c, const struct cmd_opt *opts, bool global,
		      int argc, char **argv)
{
	struct option lo[16]; /* the longest table has 4 options, plus -h */
	char so[48] = "", *p = so;
	const char *what = global ? "" : current_cmd->name;
	const struct cmd_opt *o;
	int n = 0, opt, li;

	p += sprintf(p, "%s:h", global ? "+" : "");
	for (o = opts; o->name && n < 14; o++, n++) {
		lo[n] = (struct option){ o->name, o->arg ? required_argument : no_argument,
					 NULL, 256 + n };
		if (o->key)
			p += sprintf(p, "%c%s", o->key, o->arg ? ":" : "");
	}
	lo[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	lo[n] = (struct option){ 0 };
	opterr = 0;
	optind = 0; /* glibc: start over, with this optstring's mode */
	while ((opt = getopt_long(argc, argv, so, lo, NULL)) != -1) {
		const char *bad = argv[optind - 1];

		if (opt == 'h')
			return OPT_HELP;
		if (opt == '?' || opt == ':') {
			char sh[3] = { '-', (char)optopt, 0 };

			/* optopt names a bad short option; a long one is in argv. */
			if (optopt && optopt < 256)
				bad = sh;
			fprintf(stderr, "xfibctl: %s%s%s: %s (see xfibctl %s%s-h)\n",
				what, *what ? " " : "", bad,
				opt == ':' ? "needs an argument" : "unknown option",
				what, *what ? " " : "");
			return -EINVAL;
		}
		for (li = 0, o = opts; o->name; o++, li++)
			if (opt == 256 + li || (o->key && opt == o->key))
				break;
		if (o->set(c, optarg))
			return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct ctl c = { .mode = XDP_MODE_NATIVE, .fam = -1, .algo_want = -1 };
	const struct cmd *cmd;
	int err, nargs;
	char **args;

	err = parse_opts(&c, global_opts, true, argc, argv);
	if (err == OPT_HELP) {
		usage(stdout);
		return 0;
	}
	if (err)
		return EXIT_USAGE;
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	cmd = find_cmd(argv[optind]);
	if (!cmd)
		return EXIT_USAGE;
	current_cmd = cmd;
	argc -= optind;
	argv += optind;
	err = parse_opts(&c, cmd->opts, false, argc, argv);
	if (err == OPT_HELP) {
		cmd_usage(stdout, cmd);
		return 0;
	}
	if (err)
		return EXIT_USAGE;
	args = argv + optind;
	nargs = argc - optind;
	if (nargs < cmd->min_args) {
		err_cmd("needs %s (see xfibctl %s -h)", cmd->args, cmd->name);
		return EXIT_USAGE;
	}
	if (cmd->max_args >= 0 && nargs > cmd->max_args) {
		err_cmd("%s: unexpected argument (see xfibctl %s -h)",
			args[cmd->max_args], cmd->name);
		return EXIT_USAGE;
	}
	if (cmd->check && cmd->check(&c, nargs, args))
		return EXIT_USAGE;

	log_init("xfibctl", 0);
	log_level = log_level > 0 ? log_level + 1 : LOG_LEVEL_WARN;
	log_setup_libbpf();
	if (geteuid() != 0) {
		/* Name what was asked for: the ports, or the router's maps. */
		if (nargs > 0)
			err_cmd("%s: permission denied: needs root (CAP_BPF, CAP_NET_ADMIN, CAP_SYS_ADMIN)",
				args[0]);
		else if (!xfib_pin_dir(c.pin_opt, c.pin_dir, sizeof(c.pin_dir)))
			err_cmd("%s: permission denied: needs root (CAP_BPF, CAP_NET_ADMIN, CAP_SYS_ADMIN)",
				c.pin_dir);
		else
			err_cmd("permission denied: needs root");
		return EXIT_FAILED;
	}
	return cmd->fn(&c, nargs, args) ? EXIT_FAILED : 0;
}
