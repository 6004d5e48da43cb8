// SPDX-License-Identifier: GPL-2.0-only
/*
 * xfibctl: attach the xfib forwarder to ports, and look at its state.
 * This file holds the command table, the options and main(); each command
 * lives in its group's file (xfibctl.h lists them).
 * Exit codes: 0 success, 1 the command failed, 2 usage error.
 */
#include <errno.h>
#include <netdb.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "layout.h"
#include "verify.h"
#include "xfibctl.h"

const struct cmd *current_cmd;

int open_dataplane(struct ctl *c, unsigned int flags,
		   struct xfib_fwd_bpf **skel)
{
	int err = xfib_pin_dir(c->pin_opt, c->pin_dir, sizeof(c->pin_dir));
	enum xfib_stale stale = XFIB_STALE_NONE;
	char why[512];
	int layout;

	if (err) {
		err_cmd("%s: %s", "pin directory", strerror(-err));
		return err;
	}
	err = xfib_open(c->pin_dir, flags, skel);
	if (err == -EPERM && xfib_pin_dir_safe(c->pin_dir, why, sizeof(why)) == -EPERM)
		err_cmd("%s: refusing a pin directory that others could change: %s "
			"(make it root's with mode 0700, or remove it)", c->pin_dir, why);
	else if (err == -ESTALE &&
		 (stale = xfib_stale_why(c->pin_dir, &layout, why, sizeof(why))) ==
			 XFIB_STALE_MISMATCH)
		err_cmd("%s: %s (to upgrade: stop xfibd, xfibctl detach every port, "
			"rm -r %s, then attach and start xfibd again)",
			c->pin_dir, why, c->pin_dir);
	else if (err == -ESTALE && stale != XFIB_STALE_NONE)
		err_cmd("%s: %s", c->pin_dir, why);
	else if (err == -ENOENT)
		err_cmd("%s: no xfib dataplane here (attach a port or start xfibd)",
			c->pin_dir);
	else if (err == -ENOTSUP)
		err_cmd("%s: not on a BPF filesystem (mount -t bpf bpf /sys/fs/bpf)",
			c->pin_dir);
	else if (err == -EPERM || err == -EACCES)
		err_cmd("%s: permission denied (run as root)", c->pin_dir);
	else if (err && log_verifier_tail())
		err_cmd("%s: cannot load the dataplane: %s; the kernel's verifier "
			"refused the program (all of its log with -v), ending:\n%s",
			c->pin_dir, strerror(-err), log_verifier_tail());
	else if (err)
		err_cmd("%s: cannot load the dataplane: %s", c->pin_dir,
			strerror(-err));
	return err;
}

int resolve_ifname(const char *opt, const char *name, __u32 *ifindex)
{
	*ifindex = 0;
	if (!name)
		return 0;
	*ifindex = if_nametoindex(name);
	if (!*ifindex) {
		err_cmd("%s %s: no such interface", opt, name);
		return -ENODEV;
	}
	return 0;
}

int parse_family(const char *s)
{
	if (!strcmp(s, "ipv4") || !strcmp(s, "4") || !strcmp(s, "inet"))
		return XFIB_V4;
	if (!strcmp(s, "ipv6") || !strcmp(s, "6") || !strcmp(s, "inet6"))
		return XFIB_V6;
	return -1;
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

/* A count for an option: digits only (no sign, no suffix). */
static int parse_count(const char *opt, const char *arg, const char *what,
		       unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(arg, &end, 0);
	if (*end || !*arg || *arg == '-' || errno) {
		err_cmd("--%s '%s': not a number of %s", opt, arg, what);
		return -EINVAL;
	}
	return 0;
}

static int set_flows(struct ctl *c, const char *arg)
{
	return parse_count("rule-flows", arg, "flows", &c->flows);
}

static int set_flow_dests(struct ctl *c, const char *arg)
{
	return parse_count("flow-dests", arg, "destinations", &c->flow_dests);
}

static int set_iif(struct ctl *c, const char *arg)
{
	c->iif_name = arg;
	return 0;
}

static int set_from(struct ctl *c, const char *arg)
{
	c->from_arg = arg;
	return 0;
}

/* A number in [0, max], decimal or 0x hex, into *out. */
static int number_opt(const char *opt, const char *arg, long max, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 0);
	if (*end || !*arg || errno || v < 0 || v > max) {
		err_cmd("--%s '%s': not a number from 0 to %ld", opt, arg, max);
		return -EINVAL;
	}
	*out = (int)v;
	return 0;
}

/* --proto: a number or a name ip rule takes (tcp, udp, icmp, ...). */
static int set_proto(struct ctl *c, const char *arg)
{
	const struct protoent *pe;

	if (*arg >= '0' && *arg <= '9')
		return number_opt("proto", arg, 255, &c->proto);
	pe = getprotobyname(arg);
	if (!pe) {
		err_cmd("--proto '%s': not a protocol number or name", arg);
		return -EINVAL;
	}
	c->proto = pe->p_proto;
	return 0;
}

static int set_sport(struct ctl *c, const char *arg)
{
	return number_opt("sport", arg, 65535, &c->sport);
}

static int set_dport(struct ctl *c, const char *arg)
{
	return number_opt("dport", arg, 65535, &c->dport);
}

static int set_tos(struct ctl *c, const char *arg)
{
	return number_opt("tos", arg, 255, &c->tos);
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

static int set_ports(struct ctl *c, const char *arg)
{
	c->ports = true;
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

static int set_src(struct ctl *c, const char *arg)
{
	if (parse_prefix(arg, &c->src_fam, c->src, &c->src_len)) {
		err_cmd("--src '%s': not an address or prefix", arg);
		return -EINVAL;
	}
	return 0;
}

static int set_dst(struct ctl *c, const char *arg)
{
	if (parse_prefix(arg, &c->dst_fam, c->dst, &c->dst_len)) {
		err_cmd("--dst '%s': not an address or prefix", arg);
		return -EINVAL;
	}
	return 0;
}

static int set_reasons(struct ctl *c, const char *arg)
{
	if (parse_reasons(arg, &c->reasons)) {
		err_cmd("--reason '%s': not a reason (see xfibctl stats), nor forwarded, drop or pass",
			arg);
		return -EINVAL;
	}
	return 0;
}

static int set_rate(struct ctl *c, const char *arg)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (!strcmp(end, "/s"))
		end += 2;
	if (*end || end == arg || errno || *arg == '-' || v > 1000000) {
		err_cmd("--rate '%s': not a number of packets per second (0 to 1000000, 0: no limit)",
			arg);
		return -EINVAL;
	}
	c->rate = (__u32)v;
	return 0;
}

static int set_trace_max(struct ctl *c, const char *arg)
{
	char *end;

	errno = 0;
	c->trace_max = strtoul(arg, &end, 10);
	if (*end || end == arg || errno || *arg == '-' || !c->trace_max) {
		err_cmd("--count '%s': not a number of packets > 0", arg);
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

const struct cmd_opt xfibctl_global_opts[] = {
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
	{ "ports", 'P', NULL,
	  "per attached port: received, sent, and what became\n"
	  "of the packets received (with -i: rates)", set_ports },
	OPT_JSON,
	{ 0 },
};

static const struct cmd_opt lookup_opts[] = {
	{ "from", 's', "ADDR",
	  "the answer for a packet from ADDR entering by the\n"
	  "--iif port: that port's checks, and for IPv4 the\n"
	  "source's (rp_filter, local source)", set_from },
	OPT_IIF,
	{ "proto", 0, "PROTO", "its transport protocol (number or name),\n"
	  "for the policy rules", set_proto },
	{ "sport", 0, "PORT", "its source port (needs --proto)", set_sport },
	{ "dport", 0, "PORT", "its destination port (needs --proto)", set_dport },
	{ "tos", 0, "TOS", "its TOS byte (IPv6: traffic class)", set_tos },
	OPT_JSON,
	{ 0 },
};

static const struct cmd_opt verify_opts[] = {
	{ "random", 'r', "N", "also check N random addresses per family", set_random },
	OPT_IIF,
	{ "rule-flows", 0, "N",
	  "where the policy rules are walked, also check at most\n"
	  "N flows per family made from their selectors\n"
	  "(default 4096; 0: none)", set_flows },
	{ "flow-dests", 0, "N", "destinations per flow (default 8)", set_flow_dests },
	OPT_JSON,
	{ 0 },
};

static const struct cmd_opt dump_opts[] = { OPT_FILTERS, OPT_JSON, { 0 } };

static const struct cmd_opt routes_opts[] = {
	{ "family", 'f', "ipv4|ipv6", "only this family", set_family },
	OPT_JSON,
	{ 0 },
};

static int set_ipv4(struct ctl *c, const char *arg)
{
	c->fam = XFIB_V4;
	return 0;
}

static int set_ipv6(struct ctl *c, const char *arg)
{
	c->fam = XFIB_V6;
	return 0;
}

static const struct cmd_opt rules_opts[] = {
	{ "ipv4", '4', NULL, "only IPv4's rules", set_ipv4 },
	{ "ipv6", '6', NULL, "only IPv6's rules", set_ipv6 },
	OPT_JSON,
	{ 0 },
};

static const struct cmd_opt flows_opts[] = {
	{ "ipv4", '4', NULL, "only IPv4's flows", set_ipv4 },
	{ "ipv6", '6', NULL, "only IPv6's flows", set_ipv6 },
	OPT_JSON,
	{ 0 },
};

static const struct cmd_opt trace_opts[] = {
	{ "dev", 'd', "IFNAME", "only packets received on this port", set_dev },
	{ "family", 'f', "ipv4|ipv6", "only this family", set_family },
	{ "src", 's', "PREFIX", "only packets from this prefix (or address)", set_src },
	{ "dst", 't', "PREFIX", "only packets to this prefix (or address)", set_dst },
	{ "reason", 'r', "NAME[,NAME]",
	  "only packets with these outcomes: counter names\n"
	  "(xfibctl stats), or forwarded, drop, pass", set_reasons },
	{ "count", 'n', "COUNT", "stop after COUNT packets (default: at SIGINT)",
	  set_trace_max },
	{ "rate", 0, "N[/s]",
	  "at most N packets a second, sampled in the dataplane\n"
	  "(default 100; 0: every matching packet)", set_rate },
	{ "json", 'j', NULL, "one JSON object per packet, a line each", set_json },
	{ 0 },
};

const struct cmd xfibctl_cmds[] = {
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
	{ "rules", NULL, "", "the policy rules (ip rule) xfibd mirrors, and what xfib does with them",
	  rules_opts, 0, 0, NULL, cmd_rules },
	{ "flows", NULL, "", "conntrack's flows: whether XDP forwards them, and where each direction goes",
	  flows_opts, 0, 0, NULL, cmd_flows },
	{ "trace", NULL, "", "show live the dataplane's decision for the packets that match a filter",
	  trace_opts, 0, 0, trace_check, cmd_trace },
};

const size_t xfibctl_ncmds = sizeof(xfibctl_cmds) / sizeof(xfibctl_cmds[0]);

enum { EXIT_FAILED = 1, EXIT_USAGE = 2 };

int main(int argc, char **argv)
{
	struct ctl c = { .mode = XDP_MODE_NATIVE, .fam = -1, .algo_want = -1,
			 .src_fam = -1, .dst_fam = -1, .proto = -1, .sport = -1,
			 .dport = -1, .tos = -1, .rate = XFIB_TRACE_RATE_DEFAULT,
			 .flows = VERIFY_FLOWS_DEFAULT,
			 .flow_dests = VERIFY_FLOW_DESTS_DEFAULT };
	const struct cmd *cmd;
	int err, nargs;
	char **args;

	err = parse_opts(&c, xfibctl_global_opts, true, argc, argv);
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
