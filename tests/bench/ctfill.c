// SPDX-License-Identifier: GPL-2.0-only
/*
 * ctfill: conntrack entries for the flows the forwarding benchmark's
 * generator sends, so that the conntrack gate finds them established.
 *
 *   ctfill --family 4|6 --src IP --dst-base IP --ndst N --stride S
 *          [--port P] [--timeout SECONDS] [--snat IP]
 *
 * Runs in the router's namespace. The generator (tests/bench/gen.bpf.c,
 * fwdbench gen) sends UDP from SRC port P to port P of NDST destinations:
 * IPv4 DST-BASE + i * S; IPv6 DST-BASE with i * S added to its second
 * 32-bit word if S > 1, else to its last. Each gets an entry replied and
 * assured, as a UDP stream both ways would leave it; with --snat, source
 * NATed to that address, as a masquerading router's entries are. An entry
 * already there is left as it is. Prints "created N existing M".
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/netfilter/nf_conntrack_common.h>

#include "ctnl.h"

static void usage(void)
{
	fprintf(stderr, "usage: ctfill --family 4|6 --src IP --dst-base IP --ndst N "
			"--stride S [--port P] [--timeout SECONDS] [--snat IP]\n");
	exit(2);
}

static unsigned long num(const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 0);

	if (!*s || *end)
		usage();
	return v;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "family", required_argument, NULL, 'f' },
		{ "src", required_argument, NULL, 's' },
		{ "dst-base", required_argument, NULL, 'd' },
		{ "ndst", required_argument, NULL, 'n' },
		{ "stride", required_argument, NULL, 'S' },
		{ "port", required_argument, NULL, 'p' },
		{ "timeout", required_argument, NULL, 't' },
		{ "snat", required_argument, NULL, 'N' },
		{ 0 },
	};
	unsigned long family = 0, ndst = 0, stride = 1, port = 9, timeout = 3600, i;
	struct ctnl_change c = { .status = IPS_SEEN_REPLY | IPS_ASSURED, .tcp_state = -1 };
	const char *src = NULL, *dst = NULL, *snat = NULL;
	__u8 snat_addr[16];
	unsigned long created = 0, existing = 0;
	struct ctnl_tuple t = { .proto = IPPROTO_UDP };
	struct mnl_socket *nl;
	__u32 base, word;
	int o, err;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'f': family = num(optarg); break;
		case 's': src = optarg; break;
		case 'd': dst = optarg; break;
		case 'n': ndst = num(optarg); break;
		case 'S': stride = num(optarg); break;
		case 'p': port = num(optarg); break;
		case 't': timeout = num(optarg); break;
		case 'N': snat = optarg; break;
		default: usage();
		}
	}
	if ((family != 4 && family != 6) || !src || !dst || !ndst || port > 65535)
		usage();
	t.family = family == 4 ? AF_INET : AF_INET6;
	if (inet_pton(t.family, src, t.src) != 1 || inet_pton(t.family, dst, t.dst) != 1)
		usage();
	if (snat) {
		if (inet_pton(t.family, snat, snat_addr) != 1)
			usage();
		c.snat = snat_addr;
	}
	t.sport = t.dport = htons(port);
	c.timeout = timeout;
	/* The 32-bit word that varies, as the generator varies it. */
	word = family == 4 ? 0 : stride > 1 ? 1 : 3;
	memcpy(&base, t.dst + 4 * word, 4);
	base = ntohl(base);
	err = ctnl_open(&nl);
	if (err) {
		fprintf(stderr, "ctfill: ctnetlink: %s\n", strerror(-err));
		return 1;
	}
	for (i = 0; i < ndst; i++) {
		__u32 v = htonl(base + (__u32)(i * stride));

		memcpy(t.dst + 4 * word, &v, 4);
		err = ctnl_create(nl, &t, &c);
		if (err == -EEXIST) {
			existing++;
		} else if (err) {
			fprintf(stderr, "ctfill: entry %lu: %s\n", i, strerror(-err));
			ctnl_close(nl);
			return 1;
		} else {
			created++;
		}
	}
	ctnl_close(nl);
	printf("created %lu existing %lu\n", created, existing);
	return 0;
}
