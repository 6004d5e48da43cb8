// SPDX-License-Identifier: GPL-2.0-only
/*
 * fwdbench: the userspace half of the forwarding benchmark.
 *
 *   fwdbench sink-attach --pin-dir DIR IFNAME
 *   fwdbench sink-count  --pin-dir DIR
 *   fwdbench sink-detach --pin-dir DIR
 *   fwdbench fibfwd-attach --pin-dir DIR IFNAME...
 *   fwdbench fibfwd-detach --pin-dir DIR
 *   fwdbench nolookup-attach --pin-dir DIR OUT_IFNAME DST_MAC IFNAME...
 *   fwdbench nolookup-detach --pin-dir DIR
 *   fwdbench gen --ifname IF --dst-mac MAC --src-mac MAC --src IP
 *                --dst-base IP --ndst N (--packets COUNT | --duration SEC)
 *                [--family 4|6] [--stride N] [--cpu N] [--batch N]
 *
 * gen sends to its N destinations in an order shuffled once (the same
 * for every run of a given N), not in address order, so that consecutive
 * frames do not share a route and its cache lines.
 *
 * Every command works on the network namespace it runs in; run it with
 * `nsenter --net=/run/netns/NS` so that bpffs pins stay visible (see
 * tests/lib/netns.sh). The sink is attached through a BPF link pinned in
 * DIR together with its counter map: nothing has to keep running, and
 * removing DIR (or the namespace) detaches it. The baseline forwarder
 * (tests/bench/fibfwd.bpf.c) is attached the same way, one pinned link
 * per port, with its port map filled from inside the router's namespace.
 * So is the lookup-free forwarder (tests/bench/nolookup.bpf.c), which
 * sends everything out of OUT_IFNAME to DST_MAC from OUT_IFNAME's MAC.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <net/if.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fwdbench.h"
#include "fibfwd.skel.h"
#include "nolookup.skel.h"
#include "gen.skel.h"
#include "sink.skel.h"

#define SINK_LINK "link"
#define SINK_COUNT "count"

#include "benchutil.h"

static int parse_mac(const char *s, __u16 out[3])
{
	unsigned char b[6];
	char end;

	if (sscanf(s, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx%c", &b[0], &b[1], &b[2],
		   &b[3], &b[4], &b[5], &end) != 6)
		return -EINVAL;
	memcpy(out, b, sizeof(b));
	return 0;
}

static int parse_u64(const char *s, unsigned long long max,
		     unsigned long long *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 0);
	if (errno || end == s || *end || *out > max || s[0] == '-')
		return -EINVAL;
	return 0;
}

static int pin_path(char *buf, size_t len, const char *dir, const char *name)
{
	if ((size_t)snprintf(buf, len, "%s/%s", dir, name) >= len)
		return -ENAMETOOLONG;
	return 0;
}

/* ---- sink --------------------------------------------------------------- */

static int cmd_sink_attach(const char *dir, const char *ifname)
{
	char lpath[PATH_MAX], cpath[PATH_MAX];
	struct bpf_link *link = NULL;
	struct sink_bpf *skel;
	int ifindex, err;

	ifindex = if_nametoindex(ifname);
	if (!ifindex) {
		err_msg("sink-attach %s: no such interface", ifname);
		return -ENODEV;
	}
	if (pin_path(lpath, sizeof(lpath), dir, SINK_LINK) ||
	    pin_path(cpath, sizeof(cpath), dir, SINK_COUNT)) {
		err_msg("sink-attach: pin directory name too long");
		return -ENAMETOOLONG;
	}
	if (mkdir(dir, 0700) && errno != EEXIST) {
		err = -errno;
		err_msg("sink-attach: mkdir %s: %s", dir, strerror(errno));
		return err;
	}
	skel = sink_bpf__open_and_load();
	if (!skel) {
		err = -errno;
		err_msg("sink-attach: load: %s", strerror(errno));
		goto out_dir;
	}
	/* A link, not a netlink attach: it detaches by itself once its pin
	 * and the last fd are gone, whatever happens to this process. */
	link = bpf_program__attach_xdp(skel->progs.sink, ifindex);
	if (!link) {
		err = -errno;
		err_msg("sink-attach %s: %s", ifname, strerror(errno));
		goto out_skel;
	}
	err = bpf_map__pin(skel->maps.sink_count, cpath);
	if (err) {
		err_msg("sink-attach: pin %s: %s", cpath, strerror(-err));
		goto out_link;
	}
	err = bpf_link__pin(link, lpath);
	if (err) {
		err_msg("sink-attach: pin %s: %s", lpath, strerror(-err));
		unlink(cpath);
		goto out_link;
	}
	err = 0;
out_link:
	bpf_link__destroy(link);
out_skel:
	sink_bpf__destroy(skel);
out_dir:
	if (err)
		rmdir(dir);
	return err;
}

static int cmd_sink_count(const char *dir)
{
	struct sink_count *v;
	unsigned long long packets = 0, bytes = 0;
	char cpath[PATH_MAX];
	int fd, ncpu, i, err = 0;
	__u32 zero = 0;

	if (pin_path(cpath, sizeof(cpath), dir, SINK_COUNT))
		return -ENAMETOOLONG;
	ncpu = libbpf_num_possible_cpus();
	if (ncpu < 0)
		return ncpu;
	fd = bpf_obj_get(cpath);
	if (fd < 0) {
		err = -errno;
		err_msg("sink-count: %s: %s", cpath, strerror(errno));
		return err;
	}
	v = calloc(ncpu, sizeof(*v));
	if (!v) {
		close(fd);
		return -ENOMEM;
	}
	if (bpf_map_lookup_elem(fd, &zero, v)) {
		err = -errno;
		err_msg("sink-count: read %s: %s", cpath, strerror(errno));
	} else {
		for (i = 0; i < ncpu; i++) {
			packets += v[i].packets;
			bytes += v[i].bytes;
		}
		printf("packets %llu bytes %llu\n", packets, bytes);
	}
	free(v);
	close(fd);
	return err;
}

static int cmd_sink_detach(const char *dir)
{
	char lpath[PATH_MAX], cpath[PATH_MAX];
	int fd, err = 0;

	if (pin_path(lpath, sizeof(lpath), dir, SINK_LINK) ||
	    pin_path(cpath, sizeof(cpath), dir, SINK_COUNT))
		return -ENAMETOOLONG;
	/* Detach explicitly: someone may still hold a reference to the
	 * link (bpftool, a crashed reader), and the unpin alone would then
	 * leave the program attached. */
	fd = bpf_obj_get(lpath);
	if (fd >= 0) {
		if (bpf_link_detach(fd) && errno != ENOLINK) {
			err = -errno;
			err_msg("sink-detach: %s: %s", lpath, strerror(errno));
		}
		close(fd);
	}
	if (unlink(lpath) && errno != ENOENT && !err)
		err = -errno;
	if (unlink(cpath) && errno != ENOENT && !err)
		err = -errno;
	if (rmdir(dir) && errno != ENOENT && !err)
		err = -errno;
	if (err)
		err_msg("sink-detach %s: %s", dir, strerror(-err));
	return err;
}

/* ---- baseline forwarder -------------------------------------------------- */

/* Removes the pinned links in dir (detaching each: a leftover reference
 * would otherwise keep the program attached) and dir itself. */
static int cmd_fibfwd_detach(const char *dir)
{
	char path[PATH_MAX];
	struct dirent *e;
	int fd, err = 0;
	DIR *d;

	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "link-", 5) ||
		    pin_path(path, sizeof(path), dir, e->d_name))
			continue;
		fd = bpf_obj_get(path);
		if (fd >= 0) {
			if (bpf_link_detach(fd) && errno != ENOLINK && !err)
				err = -errno;
			close(fd);
		}
		if (unlink(path) && !err)
			err = -errno;
	}
	closedir(d);
	if (rmdir(dir) && errno != ENOENT && !err)
		err = -errno;
	if (err)
		err_msg("fibfwd-detach %s: %s", dir, strerror(-err));
	return err;
}

/*
 * Attaches prog to ifname (index idx) and pins the link as
 * dir/link-IFNAME, where cmd_fibfwd_detach finds it; what names the
 * command in messages.
 */
static int attach_pinned(const char *what, struct bpf_program *prog,
			 const char *dir, const char *ifname, __u32 idx)
{
	struct bpf_link *link = bpf_program__attach_xdp(prog, idx);
	char path[PATH_MAX];
	int err;

	if (!link) {
		err = -errno;
		err_msg("%s %s: %s", what, ifname, strerror(-err));
		return err;
	}
	if (snprintf(path, sizeof(path), "%s/link-%s", dir, ifname) >=
	    (int)sizeof(path))
		err = -ENAMETOOLONG;
	else
		err = bpf_link__pin(link, path);
	if (err)
		err_msg("%s %s: pin: %s", what, ifname, strerror(-err));
	bpf_link__destroy(link);
	return err;
}

static int cmd_fibfwd_attach(const char *dir, int nifs, char **ifs)
{
	struct fibfwd_bpf *skel;
	int i, err = 0;
	__u32 idx;

	if (mkdir(dir, 0700) && errno != EEXIST) {
		err = -errno;
		err_msg("fibfwd-attach: mkdir %s: %s", dir, strerror(errno));
		return err;
	}
	skel = fibfwd_bpf__open_and_load();
	if (!skel) {
		err = -errno;
		err_msg("fibfwd-attach: load: %s", strerror(errno));
		rmdir(dir);
		return err;
	}
	for (i = 0; i < nifs && !err; i++) {
		idx = if_nametoindex(ifs[i]);
		if (!idx) {
			err_msg("fibfwd-attach %s: no such interface", ifs[i]);
			err = -ENODEV;
			break;
		}
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.fibfwd_ports),
					&idx, &idx, BPF_ANY)) {
			err = -errno;
			err_msg("fibfwd-attach %s: port map: %s", ifs[i],
				strerror(errno));
			break;
		}
		err = attach_pinned("fibfwd-attach", skel->progs.fibfwd, dir,
				    ifs[i], idx);
	}
	fibfwd_bpf__destroy(skel);
	if (err)
		cmd_fibfwd_detach(dir);
	return err;
}

/* ---- lookup-free forwarder ------------------------------------------------ */

/* The MAC address of ifname, in the namespace we run in. */
static int if_mac(const char *ifname, unsigned char mac[6])
{
	struct ifreq ifr = {};
	int fd, err = 0;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr))
		err = -errno;
	else
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	close(fd);
	return err;
}

/* Attaches nolookup to the ports ifs, sending out of out to dmac; one
 * pinned link per port in dir, as fibfwd-attach (fibfwd-detach removes
 * them). */
static int cmd_nolookup_attach(const char *dir, const char *out,
			       const char *dmac, int nifs, char **ifs)
{
	struct nolookup_bpf *skel;
	__u32 oidx, idx, zero = 0;
	__u16 mac[3];
	int i, err;

	oidx = if_nametoindex(out);
	if (!oidx || parse_mac(dmac, mac)) {
		err_msg("nolookup-attach: bad port %s or MAC %s", out, dmac);
		return -EINVAL;
	}
	if (mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	skel = nolookup_bpf__open();
	err = skel ? 0 : -errno;
	if (!err) {
		memcpy((void *)skel->rodata->out_dmac, mac, 6);
		err = if_mac(out, (unsigned char *)skel->rodata->out_smac);
	}
	if (!err)
		err = nolookup_bpf__load(skel);
	if (!err && bpf_map_update_elem(bpf_map__fd(skel->maps.nolookup_port),
					&zero, &oidx, BPF_ANY))
		err = -errno;
	for (i = 0; i < nifs && !err; i++) {
		idx = if_nametoindex(ifs[i]);
		err = idx ? attach_pinned("nolookup-attach", skel->progs.nolookup,
					  dir, ifs[i], idx) : -ENODEV;
	}
	if (err)
		err_msg("nolookup-attach: %s", strerror(-err));
	nolookup_bpf__destroy(skel);
	if (err)
		cmd_fibfwd_detach(dir);
	return err;
}

/* ---- generator ---------------------------------------------------------- */

struct gen_opts {
	const char *ifname;
	struct gen_cfg cfg;
	int have_dmac, have_smac, have_src, have_dst, family, cpu;
	unsigned long long packets, batch;
	double duration;
};

/* One live-frames test run of `count` frames. */
static int gen_run(int prog_fd, int ifindex, __u32 count, __u32 batch)
{
	unsigned char frame[FWDBENCH_FRAME_LEN] = {};
	struct xdp_md ctx = {
		.data_end = sizeof(frame),
		.ingress_ifindex = ifindex,
	};
	LIBBPF_OPTS(bpf_test_run_opts, o,
		.data_in = frame,
		.data_size_in = sizeof(frame),
		.ctx_in = &ctx,
		.ctx_size_in = sizeof(ctx),
		.repeat = count,
		.flags = BPF_F_TEST_XDP_LIVE_FRAMES,
		.batch_size = batch,
	);

	if (bpf_prog_test_run_opts(prog_fd, &o))
		return -errno;
	return 0;
}

static unsigned long long gen_sent(struct gen_bpf *skel)
{
	unsigned long long sum = 0;
	struct gen_state *v;
	int ncpu, i;
	__u32 zero = 0;

	ncpu = libbpf_num_possible_cpus();
	if (ncpu < 0)
		return 0;
	v = calloc(ncpu, sizeof(*v));
	if (!v)
		return 0;
	if (!bpf_map_lookup_elem(bpf_map__fd(skel->maps.gen_state), &zero, v))
		for (i = 0; i < ncpu; i++)
			sum += v[i].sent;
	free(v);
	return sum;
}

/*
 * dst_order: 0..n-1 shuffled (Fisher-Yates), the same for every run of a
 * given n, so that repetitions and paths see the same sequence.
 */
static void shuffle_dsts(__u32 *order, __u32 n)
{
	__u64 state = 0x9e3779b97f4a7c15ull * n, z;
	__u32 i, j, t;

	for (i = 0; i < n; i++)
		order[i] = i;
	for (i = n - 1; i > 0; i--) {
		/* splitmix64 */
		z = (state += 0x9e3779b97f4a7c15ull);
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		z ^= z >> 31;
		j = z % (i + 1);
		t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
}

static int cmd_gen(struct gen_opts *g)
{
	unsigned long long done = 0, chunk = 65536, sent;
	struct gen_bpf *skel;
	double t0, t, left, elapsed;
	int ifindex, fd, err;

	ifindex = if_nametoindex(g->ifname);
	if (!ifindex) {
		err_msg("gen %s: no such interface", g->ifname);
		return -ENODEV;
	}
	if (g->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(g->cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			err = -errno;
			err_msg("gen: pin to CPU %d: %s", g->cpu, strerror(errno));
			return err;
		}
	}
	skel = gen_bpf__open();
	if (!skel) {
		err = -errno;
		err_msg("gen: open: %s", strerror(errno));
		return err;
	}
	skel->rodata->cfg = g->cfg;
	shuffle_dsts(skel->bss->dst_order, g->cfg.ndst);
	err = gen_bpf__load(skel);
	if (err) {
		err_msg("gen: load: %s", strerror(-err));
		goto out;
	}
	fd = bpf_program__fd(skel->progs.gen);

	t0 = now_s();
	if (g->packets) {
		err = gen_run(fd, ifindex, g->packets, g->batch);
	} else {
		/* Runs of ~50 ms each, sized from the rate seen so far, so
		 * the total overshoots the duration by little and a signal
		 * is never held off for long. */
		for (;;) {
			err = gen_run(fd, ifindex, chunk, g->batch);
			if (err)
				break;
			done += chunk;
			t = now_s() - t0;
			if (t >= g->duration)
				break;
			left = g->duration - t;
			chunk = done / t * (left < 0.05 ? left : 0.05);
			if (chunk < 1024)
				chunk = 1024;
			if (chunk > UINT32_MAX)
				chunk = UINT32_MAX;
		}
	}
	elapsed = now_s() - t0;
	if (err) {
		err_msg("gen: BPF_PROG_TEST_RUN on %s: %s", g->ifname,
			strerror(-err));
		goto out;
	}
	/* What the program built, not what was asked for: the two only
	 * differ if the kernel cut a run short. */
	sent = gen_sent(skel);
	printf("sent %llu seconds %.6f mpps %.4f\n", sent, elapsed,
	       sent / elapsed / 1e6);
out:
	gen_bpf__destroy(skel);
	return err;
}

static int gen_parse(int argc, char **argv, struct gen_opts *g)
{
	static const struct option opts[] = {
		{ "ifname", required_argument, NULL, 'i' },
		{ "dst-mac", required_argument, NULL, 'D' },
		{ "src-mac", required_argument, NULL, 'S' },
		{ "src", required_argument, NULL, 's' },
		{ "dst-base", required_argument, NULL, 'd' },
		{ "ndst", required_argument, NULL, 'n' },
		{ "packets", required_argument, NULL, 'p' },
		{ "duration", required_argument, NULL, 't' },
		{ "family", required_argument, NULL, 'f' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "batch", required_argument, NULL, 'b' },
		{ "stride", required_argument, NULL, 'T' },
		{}
	};
	const char *src = NULL, *dst = NULL;
	unsigned long long v;
	struct in6_addr a6;
	int c, li = 0;
	char *end;

	g->cfg.ndst = 1;
	g->cfg.sport = 9;
	g->cfg.dport = 9;
	g->cfg.stride = 1;
	g->cpu = -1;
	g->batch = 64;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, &li)) != -1) {
		switch (c) {
		case 'i':
			g->ifname = optarg;
			break;
		case 'D':
			if (parse_mac(optarg, g->cfg.dmac))
				goto bad;
			g->have_dmac = 1;
			break;
		case 'S':
			if (parse_mac(optarg, g->cfg.smac))
				goto bad;
			g->have_smac = 1;
			break;
		case 's':
			src = optarg;
			break;
		case 'd':
			dst = optarg;
			break;
		case 'n':
			if (parse_u64(optarg, FWDBENCH_NDST_MAX, &v) || !v)
				goto bad;
			g->cfg.ndst = v;
			break;
		case 'p':
			if (parse_u64(optarg, UINT32_MAX, &v) || !v)
				goto bad;
			g->packets = v;
			break;
		case 't':
			g->duration = strtod(optarg, &end);
			if (*end || !(g->duration > 0 && g->duration < 3600))
				goto bad;
			break;
		case 'f':
			if (strcmp(optarg, "4") && strcmp(optarg, "6"))
				goto bad;
			g->family = atoi(optarg);
			break;
		case 'c':
			if (parse_u64(optarg, CPU_SETSIZE - 1, &v))
				goto bad;
			g->cpu = v;
			break;
		case 'T':
			if (parse_u64(optarg, UINT32_MAX, &v) || !v)
				goto bad;
			g->cfg.stride = v;
			break;
		case 'b':
			/* The kernel caps a live-frames batch at 256. */
			if (parse_u64(optarg, 256, &v) || !v)
				goto bad;
			g->batch = v;
			break;
		default:
			return -EINVAL;
		}
	}
	if (optind != argc || !g->ifname || !g->have_dmac || !g->have_smac ||
	    !src || !dst || !g->packets == !g->duration) {
		err_msg("gen: needs --ifname, --dst-mac, --src-mac, --src, --dst-base and one of --packets, --duration");
		return -EINVAL;
	}
	if (!g->family)
		g->family = strchr(src, ':') ? 6 : 4;
	g->cfg.family = g->family;
	if (g->family == 4) {
		struct in_addr s4, d4;

		if (inet_pton(AF_INET, src, &s4) != 1 ||
		    inet_pton(AF_INET, dst, &d4) != 1) {
			err_msg("gen: --src and --dst-base must be IPv4 addresses with --family 4");
			return -EINVAL;
		}
		g->cfg.src4 = s4.s_addr;
		g->cfg.dst4 = ntohl(d4.s_addr);
		if ((unsigned long long)g->cfg.dst4 +
			    (unsigned long long)(g->cfg.ndst - 1) * g->cfg.stride > UINT32_MAX) {
			err_msg("gen: %s + %u destinations wrap around", dst,
				g->cfg.ndst);
			return -EINVAL;
		}
	} else {
		if (inet_pton(AF_INET6, src, &a6) != 1) {
			err_msg("gen: --src %s: not an IPv6 address", src);
			return -EINVAL;
		}
		memcpy(g->cfg.src6, &a6, sizeof(a6));
		if (inet_pton(AF_INET6, dst, &a6) != 1) {
			err_msg("gen: --dst-base %s: not an IPv6 address", dst);
			return -EINVAL;
		}
		memcpy(g->cfg.dst6, &a6, 16);
		/* The word that varies: the last one by default; with a
		 * stride, the second (bits 32..63), which spreads the
		 * destinations over the prefixes of a /32 rather than the
		 * hosts of one /64. */
		g->cfg.dst6_word = g->cfg.stride > 1 ? 1 : 3;
		g->cfg.dst6_lo = ntohl(a6.s6_addr32[g->cfg.dst6_word]);
		/* Only that word varies, without a carry into the rest. */
		if ((unsigned long long)g->cfg.dst6_lo +
			    (unsigned long long)(g->cfg.ndst - 1) * g->cfg.stride > UINT32_MAX) {
			err_msg("gen: %s + %u destinations carry past their 32 bits",
				dst, g->cfg.ndst);
			return -EINVAL;
		}
	}
	return 0;
bad:
	err_msg("gen: bad value for --%s: %s", opts[li].name, optarg);
	return -EINVAL;
}

/* ---- commands ----------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: fwdbench [-v] COMMAND ...\n"
		"  sink-attach --pin-dir DIR IFNAME   count and drop on IFNAME (pins DIR/link, DIR/count)\n"
		"  sink-count  --pin-dir DIR          print \"packets N bytes N\"\n"
		"  sink-detach --pin-dir DIR          detach and remove DIR\n"
		"  gen --ifname IF --dst-mac MAC --src-mac MAC --src IP --dst-base IP\n"
		"      --ndst N (--packets COUNT | --duration SEC) [--family 4|6]\n"
		"      [--stride N] [--cpu N] [--batch N]\n"
		"                                     send 64-byte UDP frames out of IF\n"
		"                                     with BPF_PROG_TEST_RUN live frames;\n"
		"                                     prints \"sent N seconds S mpps R\";\n"
		"                                     destination i is base + i * stride\n"
		"                                     (IPv6 with a stride: in bits 32..63),\n"
		"                                     i < N <= 65536, sent in a shuffled order\n"
		"  fibfwd-attach --pin-dir DIR IFNAME...  the bpf_fib_lookup forwarder on the ports\n"
		"  fibfwd-detach --pin-dir DIR        detach it and remove DIR\n"
		"  nolookup-attach --pin-dir DIR OUT_IFNAME DST_MAC IFNAME...\n"
		"                                     the lookup-free forwarder on the ports:\n"
		"                                     everything out of OUT_IFNAME to DST_MAC\n"
		"  nolookup-detach --pin-dir DIR      detach it and remove DIR\n");
}

/* --pin-dir DIR [ARG]: the sink commands' arguments. */
static int sink_args(int argc, char **argv, const char **dir, int nargs,
		     const char **arg)
{
	static const struct option opts[] = {
		{ "pin-dir", required_argument, NULL, 'P' },
		{}
	};
	int c;

	*dir = NULL;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c != 'P')
			return -EINVAL;
		*dir = optarg;
	}
	if (!*dir || argc - optind != nargs) {
		usage(stderr);
		return -EINVAL;
	}
	if (nargs)
		*arg = argv[optind];
	return 0;
}

/* --pin-dir DIR IFNAME...: one or more arguments after the options. */
static int sink_args_n(int argc, char **argv, const char **dir)
{
	static const struct option opts[] = {
		{ "pin-dir", required_argument, NULL, 'P' },
		{}
	};
	int c;

	*dir = NULL;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c != 'P')
			return -EINVAL;
		*dir = optarg;
	}
	if (!*dir || optind >= argc) {
		usage(stderr);
		return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *cmd, *dir, *ifname = NULL;
	struct gen_opts g = {};
	int err;

	if (argc > 1 && !strcmp(argv[1], "-v")) {
		verbose = 1;
		argc--;
		argv++;
	}
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
		usage(stdout);
		return 0;
	}
	libbpf_set_print(libbpf_print);
	argc--;
	argv++;
	if (!strcmp(cmd, "sink-attach")) {
		if (sink_args(argc, argv, &dir, 1, &ifname))
			return 2;
		err = cmd_sink_attach(dir, ifname);
	} else if (!strcmp(cmd, "sink-count")) {
		if (sink_args(argc, argv, &dir, 0, NULL))
			return 2;
		err = cmd_sink_count(dir);
	} else if (!strcmp(cmd, "sink-detach")) {
		if (sink_args(argc, argv, &dir, 0, NULL))
			return 2;
		err = cmd_sink_detach(dir);
	} else if (!strcmp(cmd, "fibfwd-attach")) {
		if (sink_args_n(argc, argv, &dir))
			return 2;
		err = cmd_fibfwd_attach(dir, argc - optind, argv + optind);
	} else if (!strcmp(cmd, "nolookup-attach")) {
		if (sink_args_n(argc, argv, &dir) || argc - optind < 3) {
			usage(stderr);
			return 2;
		}
		err = cmd_nolookup_attach(dir, argv[optind], argv[optind + 1],
					  argc - optind - 2, argv + optind + 2);
	} else if (!strcmp(cmd, "fibfwd-detach") ||
		   !strcmp(cmd, "nolookup-detach")) {
		if (sink_args(argc, argv, &dir, 0, NULL))
			return 2;
		err = cmd_fibfwd_detach(dir);
	} else if (!strcmp(cmd, "gen")) {
		if (gen_parse(argc, argv, &g))
			return 2;
		err = cmd_gen(&g);
	} else {
		err_msg("unknown command '%s'", cmd);
		usage(stderr);
		return 2;
	}
	return err ? 1 : 0;
}
