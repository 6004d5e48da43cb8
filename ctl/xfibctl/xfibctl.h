/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the files of xfibctl share. One file per command group:
 *   main.c     the command table, the options, main()
 *   cmdline.c  option parsing and help, generated from the tables
 *   attach.c   attach, detach          ports.c    XDP programs on ports
 *   status.c   status, algo            stats.c    stats (text, JSON, -i)
 *   prom.c     stats --prometheus      lookup.c   lookup, verify
 *   portstats.c stats --ports, the ports' counters
 *   trace.c    trace: the dataplane's decision per packet
 *   arrays.c   neighbours, nexthops    routes.c   routes
 *   rules.c    rules                   flows.c    flows
 *   output.c   the output model (output.h)
 * verify.c compares the dataplane with the kernel (verify.h).
 */
#ifndef XFIBCTL_H
#define XFIBCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>
#include <net/if.h>
#include <linux/types.h>
#include <xdp/libxdp.h>

#include "pin.h"
#include "xfib/counters.h"
#include "xfib/maps.h"
#include "xfib/netfilter.h"
#include "xfib/tables.h"
#include "xfib/xfrm.h"

#define XFIB_PROG_NAME "xfib_fwd"

/* The options of one invocation, filled by the option table's setters. */
struct ctl {
	const char *pin_opt;
	char pin_dir[XFIB_PIN_DIR_MAX];
	bool json;
	enum xdp_attach_mode mode;
	unsigned long random;  /* verify --random */
	unsigned long flows;   /* verify --rule-flows */
	unsigned long flow_dests; /* verify --flow-dests */
	const char *iif_name;  /* lookup, verify --iif */
	__u32 iif;
	double interval;       /* stats --interval, seconds; 0: one snapshot */
	unsigned long count;   /* stats --count; 0: until SIGINT */
	bool prometheus;       /* stats --prometheus */
	bool ports;            /* stats --ports */
	int fam;               /* algo, lookup, neighbours, nexthops; -1: both */
	int algo_want;         /* algo: the algorithm to force, -1: only show */
	__u8 addr[16];         /* lookup */
	const char *from_arg;  /* lookup --from: the source, as given */
	__u8 from[16];
	int proto;             /* lookup --proto: IPPROTO_*, -1: not given */
	int sport, dport;      /* lookup --sport, --dport, -1: not given */
	int tos;               /* lookup --tos (IPv6: traffic class), -1 */
	const char *dev_name;  /* neighbours, nexthops --dev; trace --dev */
	/* trace: the filter and the sampling */
	__u8 src[16], dst[16]; /* prefixes, host bits zero */
	__u8 src_len, dst_len; /* 0: any */
	int src_fam, dst_fam;  /* XFIB_V4 / XFIB_V6 of a prefix given, else -1 */
	__u64 reasons;         /* bit per enum xfib_reason; 0: any */
	__u32 rate;            /* packets per second; 0: no limit */
	unsigned long trace_max; /* -n; 0: until SIGINT */
};

/* trace --rate unless given. */
#define XFIB_TRACE_RATE_DEFAULT 100

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

/* main.c: the tables, and the command being run (for messages). */
extern const struct cmd xfibctl_cmds[];
extern const size_t xfibctl_ncmds;
extern const struct cmd_opt xfibctl_global_opts[];
extern const struct cmd *current_cmd;

#define err_cmd(fmt, ...) \
	fprintf(stderr, "xfibctl: %s " fmt "\n", current_cmd->name, ##__VA_ARGS__)

/* What a port without NETDEV_XDP_ACT_NDO_XMIT means for xfib (status,
 * attach). */
#define XFIB_NO_XMIT_TEXT \
	"cannot take XDP-redirected frames (the kernel forwards what leaves by it)"

/* cmdline.c */
enum { OPT_HELP = 1 };
int parse_opts(struct ctl *c, const struct cmd_opt *opts, bool global,
	       int argc, char **argv);
const struct cmd *find_cmd(const char *name);
void usage(FILE *f);
void cmd_usage(FILE *f, const struct cmd *cmd);

/* main.c: what every command needs. */
/* Opens the router's maps (XFIB_OPEN_* flags); says why not, once. */
int open_dataplane(struct ctl *c, unsigned int flags,
		   struct xfib_fwd_bpf **skel);
/* An interface name given with option opt ("--iif"); 0 if name is NULL. */
int resolve_ifname(const char *opt, const char *name, __u32 *ifindex);
/* XFIB_V4 / XFIB_V6 for "ipv4", "4", "inet", ...; -1 if none. */
int parse_family(const char *s);

/* ports.c: our XDP program on the ports. */
struct port {
	char name[IF_NAMESIZE];
	__u32 ifindex;
	__u8 mode;        /* XDP_ATTACHED_* */
	__u32 prog_id;
	bool counted;     /* ifindex < XFIB_PORT_MAX: the dataplane counts it */
	struct xfib_port_counters c; /* summed over the CPUs (portstats.c) */
	int xmit;         /* takes XDP-redirected frames: 1, 0, or -1 unknown
			   * (ports_read_xmit) */
	char no_xmit_why[256]; /* xmit 0: why, and the fix */
};

/* The id of the XDP program on ifindex and how it is attached (0: none). */
__u32 xdp_prog_on(int ifindex, __u8 *mode);
/* Every device can be a routed port (portcheck.c): not a bridge or bond
 * member, an Ethernet address; else the first that cannot, printed. */
int ports_routable(char **names, int n, const int *ifindex);
/* The program is xfib's forwarder; its name into name (may be NULL). */
bool prog_is_xfib(__u32 id, char *name, size_t len);
/* "native", "generic", ... for an XDP_ATTACHED_* mode. */
const char *mode_name(__u8 mode);
/* The ports our program is attached to, in ifindex order: *ports to
 * free(); none if the kernel cannot list the interfaces. */
void ports_attached(struct port **ports, size_t *n);
/* Whether each port takes XDP-redirected frames, from the kernel (the
 * "netdev" netlink family), and why not. */
void ports_read_xmit(struct port *ports, size_t n);

/* status.c: the state status and stats --prometheus show. */
struct status {
	const char *pin_dir;
	int pid;                /* the daemon's; 0: not running */
	struct xfib_daemon daemon;
	struct xfib_lease lease; /* the daemon's word for the mirror */
	__u64 lease_now;         /* xfib_lease_clock() when read */
	struct xfib_hash_seed seed; /* the multipath flow hash's */
	struct xfib_layout layout;  /* the maps' layout, and their upgrade */
	/* entries the dataplane's arrays hold */
	__u32 cap_neighs, cap_nexthops, cap_groups;
	struct port *ports;     /* attached ports */
	size_t nports;
	struct xfib_fib_info fi[XFIB_FAMILIES];
	struct xfib_nf_info nf[XFIB_FAMILIES];
	/* xfib_nf_ports: ports whose packets go to the kernel. */
	unsigned int nf_nports;
	__u32 nf_port[64], nf_port_dir[64];
	struct xfib_xfrm_info xfrm[XFIB_FAMILIES];
	/* xfib_rules: why the rules send a family to the kernel (enum
	 * xfib_rules_fallback), how many the kernel has; -1: not read. */
	int rules_fallback[XFIB_FAMILIES];
	__u32 rules_total[XFIB_FAMILIES];
	/* The tables rules reach besides main, by slot (xfib_table_info;
	 * table 0: none). */
	struct xfib_table_info tables[XFIB_FAMILIES][XFIB_TABLE_SLOTS];
	char release[65];            /* uname -r */
	struct xfib_prog_info prog;  /* the forwarder as last loaded */
	unsigned int lacks;          /* enum xfib_kernel_lack */
};

/* What this kernel lacks that xfib would use (kernelstatus.c). */
enum xfib_kernel_lack {
	XFIB_LACKS_CT_KFUNCS = 1 << 0,
	XFIB_LACKS_CT_KFUNCS_SINCE = 1 << 1, /* at load, not now */
	XFIB_LACKS_UDP_STREAM = 1 << 2,
	XFIB_LACKS_NETDEV_FAMILY = 1 << 3,
};

void status_read(struct xfib_fwd_bpf *skel, const char *pin_dir,
		 struct status *st);
void status_free(struct status *st);

/* nfstatus.c: the netfilter part of status, and a family's mode as
 * status -j names it (forward, gate, pass). */
const char *nf_mode_name(__u8 mode);
void nf_status_read(struct xfib_fwd_bpf *skel, struct status *st);
void nf_status_text(const struct status *st);
struct json_object *nf_status_json(const struct status *st);
void nf_status_prom(const struct status *st);

/* kernelstatus.c: the kernel part of status. */
void kernel_status_read(struct xfib_fwd_bpf *skel, struct status *st);
void kernel_status_text(const struct status *st);
struct json_object *kernel_status_json(const struct status *st);

/* xfrmstatus.c: the IPsec part of status. */
void xfrm_status_read(struct xfib_fwd_bpf *skel, struct status *st);
void xfrm_status_text(const struct status *st);
struct json_object *xfrm_status_json(const struct status *st);
void xfrm_status_prom(const struct status *st);

/* stats.c: the counters' names ("forwarded_v4") and help lines, and a
 * pass reason's help without its "to kernel: " lead. */
const char *reason_name(enum xfib_reason r);
const char *reason_help(enum xfib_reason r);
const char *pass_why(enum xfib_reason r);

/* stats.c: what the -i monitors share. */
const char *bitrate_str(double bps, char *buf, size_t len);
double clock_s(clockid_t id);
/* SIGINT and SIGTERM end the monitor: sleep_until() then returns false. */
void monitor_signals(void);
bool sleep_until(double deadline);
/* An interval's first line: its end (CLOCK_REALTIME) and length. */
void interval_head(double now, double secs);

/* portstats.c: each port's counters (xfib_port_stats). */
struct port_totals {
	struct xfib_counter rx, tx, forwarded, to_kernel, dropped;
};

bool reason_is_fwd(enum xfib_reason r);
bool reason_is_drop(enum xfib_reason r);
void port_totals(const struct xfib_port_counters *c, struct port_totals *t);
/* Fills counted and c of the n ports; 0 or -errno after saying why. */
int ports_read_counters(struct xfib_fwd_bpf *skel, struct port *ports, size_t n);
/* Zeroes the port's counters (attach); 0 or -errno. */
int port_counters_zero(struct xfib_fwd_bpf *skel, __u32 ifindex);
/* stats --ports: the table, JSON, or rates every interval. */
int stats_ports(struct ctl *c, struct xfib_fwd_bpf *skel);
/* A port's totals as a JSON object (status -j). */
struct json_object;
struct json_object *port_totals_json(const struct port *p);

/* prom.c: the status and the counters (summed over the CPUs) in the
 * Prometheus text format. */
void stats_prometheus(const struct status *st, const struct xfib_counter *sum);

/* The commands and their argument checks. */
int cmd_attach(struct ctl *c, int argc, char **argv);
int cmd_detach(struct ctl *c, int argc, char **argv);
int cmd_status(struct ctl *c, int argc, char **argv);
int algo_check(struct ctl *c, int argc, char **argv);
int cmd_algo(struct ctl *c, int argc, char **argv);
int stats_check(struct ctl *c, int argc, char **argv);
int cmd_stats(struct ctl *c, int argc, char **argv);
int lookup_check(struct ctl *c, int argc, char **argv);
int cmd_lookup(struct ctl *c, int argc, char **argv);
int cmd_verify(struct ctl *c, int argc, char **argv);
int cmd_neighbours(struct ctl *c, int argc, char **argv);
int cmd_nexthops(struct ctl *c, int argc, char **argv);
int cmd_routes(struct ctl *c, int argc, char **argv);
int cmd_rules(struct ctl *c, int argc, char **argv);
/* rules.c: status's word on the rules, when they are why a family goes
 * to the kernel for a reason other than their order. */
void rules_status_read(struct xfib_fwd_bpf *skel, struct status *st);
void rules_status_text(const struct status *st, __u32 fam);
void rules_status_json(const struct status *st, __u32 fam,
		       struct json_object *o);
int cmd_flows(struct ctl *c, int argc, char **argv);
int trace_check(struct ctl *c, int argc, char **argv);
int cmd_trace(struct ctl *c, int argc, char **argv);

/* trace.c: its arguments. 0 or -EINVAL. */
int parse_prefix(const char *s, int *fam, __u8 *addr, __u8 *plen);
int parse_reasons(const char *s, __u64 *mask);

#endif /* XFIBCTL_H */
