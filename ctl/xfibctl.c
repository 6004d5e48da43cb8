// SPDX-License-Identifier: GPL-2.0-only
/*
 * xfibctl: attach the xfib forwarder to ports, and look at its state.
 * Exit codes: 0 success, 1 the command failed, 2 usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "log.h"
#include "pin.h"
#include "publish.h"
#include "xfib/counters.h"
#include "xfib/maps.h"

#define XFIB_PROG_NAME "xfib_fwd"

struct ctl {
	const char *pin_opt;
	char pin_dir[XFIB_PIN_DIR_MAX];
	bool json;
	enum xdp_attach_mode mode;
};

struct cmd {
	const char *name;
	const char *args;
	const char *help;
	int (*fn)(struct ctl *c, int argc, char **argv);
	bool needs_root;
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

	if (argc < 1) {
		err_cmd("needs at least one interface");
		return -EINVAL;
	}
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

	if (argc < 1) {
		err_cmd("needs at least one interface");
		return -EINVAL;
	}
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

static int cmd_status(struct ctl *c, int argc, char **argv)
{
	struct xfib_fwd_bpf *skel = NULL;
	struct if_nameindex *ifs, *it;
	struct xfib_daemon d = { 0 };
	struct xfib_fib_info fi[XFIB_FAMILIES] = { 0 };
	__u32 key = 0, fam;
	int pid, nif = 0, err;

	if (argc) {
		err_cmd("unexpected argument '%s'", argv[0]);
		return -EINVAL;
	}
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
		       "\"resyncs\":%llu},\"interfaces\":[",
		       pid ? "true" : "false", pid, d.table,
		       pid && d.last_sync ? "true" : "false",
		       (unsigned long long)d.started,
		       (unsigned long long)d.last_sync,
		       (unsigned long long)d.resyncs);
	} else {
		printf("pin dir:     %s\n", c->pin_dir);
		if (pid)
			printf("daemon:      running (pid %d), table %u, %s\n",
			       pid, d.table, d.last_sync ? "synced" : "syncing");
		else
			printf("daemon:      not running (the dataplane forwards with its last state)\n");
		printf("interfaces:");
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
			printf(" %s (%s)", it->if_name, mode_name(mode));
		}
		nif++;
	}
	if (c->json)
		printf("]");
	else
		printf("%s\n", nif ? "" : " none");
	for (fam = 0; fam < XFIB_FAMILIES; fam++) {
		const char *fname = fam == XFIB_V4 ? "ipv4" : "ipv6";

		if (c->json)
			printf(",\"%s\":{\"algorithm\":\"%s\",\"routes\":%u,"
			       "\"ranges\":%u,\"generation\":%u,\"swaps\":%llu,"
			       "\"last_swap\":%llu,\"memory\":%llu,\"fallback\":\"%s\"}",
			       fname, fib_algo_name(fi[fam].algo), fi[fam].routes,
			       fi[fam].ranges, fi[fam].generation,
			       (unsigned long long)fi[fam].swaps,
			       (unsigned long long)fi[fam].last_swap,
			       (unsigned long long)fi[fam].mem_bytes,
			       fallback_name(fi[fam].fallback));
		else
			printf("%s:        %s, %u routes, %u ranges, generation %u, %llu bytes%s%s\n",
			       fname, fib_algo_name(fi[fam].algo), fi[fam].routes,
			       fi[fam].ranges, fi[fam].generation,
			       (unsigned long long)fi[fam].mem_bytes,
			       fi[fam].fallback ? "\n             all traffic to the kernel: " : "",
			       fi[fam].fallback ? fallback_help(fi[fam].fallback) : "");
	}
	if (c->json)
		printf("}\n");
	if (ifs)
		if_freenameindex(ifs);
	xfib_fwd_bpf__destroy(skel);
	return 0;
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

static int cmd_stats(struct ctl *c, int argc, char **argv)
{
	struct xfib_fwd_bpf *skel = NULL;
	int ncpu = libbpf_num_possible_cpus(), err = 0;
	struct xfib_counter *pc;
	__u32 r;

	if (argc) {
		err_cmd("unexpected argument '%s'", argv[0]);
		return -EINVAL;
	}
	if (ncpu < 1)
		return ncpu;
	pc = calloc(ncpu, sizeof(*pc));
	if (!pc)
		return -ENOMEM;
	err = open_dataplane(c, 0, &skel);
	if (err)
		goto out;
	if (c->json)
		printf("{");
	else
		printf("%-26s %14s %16s\n", "counter", "packets", "bytes");
	for (r = 0; r < XFIB_REASON_COUNT; r++) {
		struct xfib_counter sum = { 0 };
		int cpu;

		if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.xfib_stats), &r, pc)) {
			err = -errno;
			err_cmd("read counters: %s", strerror(errno));
			goto out;
		}
		for (cpu = 0; cpu < ncpu; cpu++) {
			sum.packets += pc[cpu].packets;
			sum.bytes += pc[cpu].bytes;
		}
		if (c->json)
			printf("%s\"%s\":{\"packets\":%llu,\"bytes\":%llu}",
			       r ? "," : "", reason_names[r],
			       (unsigned long long)sum.packets,
			       (unsigned long long)sum.bytes);
		else
			printf("%-26s %14llu %16llu  %s\n", reason_names[r],
			       (unsigned long long)sum.packets,
			       (unsigned long long)sum.bytes, reason_help[r]);
	}
	if (c->json)
		printf("}\n");
out:
	xfib_fwd_bpf__destroy(skel);
	free(pc);
	return err;
}

/* ---- command table ----------------------------------------------------------- */

static const struct cmd cmds[] = {
	{ "attach", "[--mode native|generic] IFNAME...",
	  "attach the forwarder to ports (all or none)", cmd_attach, true },
	{ "detach", "IFNAME...", "detach the forwarder from ports", cmd_detach, true },
	{ "status", "[-j]", "daemon, attached ports, lookup instances", cmd_status, true },
	{ "stats", "[-j]", "packets forwarded, dropped, and passed to the kernel by reason",
	  cmd_stats, true },
};

#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "Usage: xfibctl [-p DIR] [-j] COMMAND [ARGS]\n\nCommands:\n");
	for (i = 0; i < NCMDS; i++)
		fprintf(f, "  %-8s %-36s %s\n", cmds[i].name, cmds[i].args, cmds[i].help);
	fprintf(f, "\nOptions:\n"
		   "  -p, --pin-dir DIR   pinned maps of the router (default: per network namespace)\n"
		   "  -j, --json          JSON output\n"
		   "  -v, --verbose       show library messages\n"
		   "  -h, --help          this help; COMMAND -h for a command's\n"
		   "\nExit status: 0 success, 1 failure, 2 usage error.\n");
}

static void cmd_usage(FILE *f, const struct cmd *cmd)
{
	fprintf(f, "Usage: xfibctl %s %s\n%s\n", cmd->name, cmd->args, cmd->help);
	if (cmd->fn == cmd_attach)
		fprintf(f, "  -m, --mode native|generic  XDP mode (default: native)\n");
	fprintf(f, "  -j, --json                 JSON output\n");
}

/* Commands may be abbreviated to any unique prefix. */
static const struct cmd *find_cmd(const char *name)
{
	const struct cmd *found = NULL;
	size_t i, len = strlen(name);

	for (i = 0; i < NCMDS; i++) {
		if (!strcmp(cmds[i].name, name))
			return &cmds[i];
		if (!strncmp(cmds[i].name, name, len)) {
			if (found) {
				fprintf(stderr, "xfibctl: '%s' is ambiguous (%s, %s)\n",
					name, found->name, cmds[i].name);
				return NULL;
			}
			found = &cmds[i];
		}
	}
	if (!found)
		fprintf(stderr, "xfibctl: unknown command '%s' (see xfibctl -h)\n", name);
	return found;
}

int main(int argc, char **argv)
{
	static const struct option gopts[] = {
		{ "pin-dir", required_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	static const struct option copts[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct ctl c = { .mode = XDP_MODE_NATIVE };
	const struct cmd *cmd;
	int opt, err;

	/* '+': stop at the command; its own options are parsed below. */
	while ((opt = getopt_long(argc, argv, "+p:jvh", gopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			c.pin_opt = optarg;
			break;
		case 'j':
			c.json = true;
			break;
		case 'v':
			log_level++;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	cmd = find_cmd(argv[optind]);
	if (!cmd)
		return 2;
	current_cmd = cmd;
	argc -= optind;
	argv += optind;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "+m:jh", copts, NULL)) != -1) {
		switch (opt) {
		case 'm':
			if (cmd->fn != cmd_attach) {
				err_cmd("--mode applies to attach only");
				return 2;
			}
			if (!strcmp(optarg, "native"))
				c.mode = XDP_MODE_NATIVE;
			else if (!strcmp(optarg, "generic"))
				c.mode = XDP_MODE_SKB;
			else {
				err_cmd("--mode '%s': use native or generic", optarg);
				return 2;
			}
			break;
		case 'j':
			c.json = true;
			break;
		case 'h':
			cmd_usage(stdout, cmd);
			return 0;
		default:
			cmd_usage(stderr, cmd);
			return 2;
		}
	}
	log_init("xfibctl", 0);
	log_level = log_level > 0 ? log_level + 1 : LOG_LEVEL_WARN;
	log_setup_libbpf();
	if (cmd->needs_root && geteuid() != 0) {
		/* Name what was asked for: the ports, or the router's maps. */
		if (argc - optind > 0)
			err_cmd("%s: permission denied: needs root (CAP_BPF, CAP_NET_ADMIN, CAP_SYS_ADMIN)",
				argv[optind]);
		else if (!xfib_pin_dir(c.pin_opt, c.pin_dir, sizeof(c.pin_dir)))
			err_cmd("%s: permission denied: needs root (CAP_BPF, CAP_NET_ADMIN, CAP_SYS_ADMIN)",
				c.pin_dir);
		else
			err_cmd("permission denied: needs root");
		return 1;
	}
	err = cmd->fn(&c, argc - optind, argv + optind);
	if (err == -EINVAL && (cmd->fn == cmd_attach || cmd->fn == cmd_detach) &&
	    argc - optind < 1)
		return 2;
	return err ? 1 : 0;
}
