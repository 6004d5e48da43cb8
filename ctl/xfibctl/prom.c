// SPDX-License-Identifier: GPL-2.0-only
/*
 * stats --prometheus: the text exposition format, for node_exporter's
 * textfile collector (write to a temporary file and rename it into the
 * collector's directory, so it never reads half a file).
 */
#include <stdlib.h>
#include <string.h>

#include "algo_names.h"
#include "lease.h"
#include "output.h"
#include "utf8.h"
#include "xfibctl.h"

/*
 * A label value: \, " and newline escaped. The format is UTF-8, and one bad
 * label would cost the whole file: invalid bytes are repaired as in JSON.
 */
static void prom_label(const char *s)
{
	char *fixed = NULL;

	if (!utf8_valid(s)) {
		fixed = malloc(3 * strlen(s) + 1);
		if (fixed) {
			utf8_repair(s, fixed);
			s = fixed;
		} else {
			s = UTF8_REPLACEMENT;
		}
	}
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
	free(fixed);
}

static void prom_head(const char *name, const char *type, const char *help)
{
	printf("# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void prom_counters(const struct xfib_counter *sum)
{
	__u32 r;

	prom_head("xfib_packets_total", "counter",
		  "Packets seen by the XDP forwarder, by outcome: forwarded, dropped, or passed to the kernel and why.");
	for (r = 0; r < XFIB_REASON_COUNT; r++)
		printf("xfib_packets_total{reason=\"%s\"} %llu\n", reason_name(r),
		       (unsigned long long)sum[r].packets);
	prom_head("xfib_bytes_total", "counter",
		  "Bytes of the packets in xfib_packets_total (frame length).");
	for (r = 0; r < XFIB_REASON_COUNT; r++)
		printf("xfib_bytes_total{reason=\"%s\"} %llu\n", reason_name(r),
		       (unsigned long long)sum[r].bytes);
}

static void prom_instances(const struct xfib_fib_info *fi)
{
	__u32 fam;

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
}

static void prom_daemon(const struct status *st)
{
	prom_head("xfib_daemon_up", "gauge",
		  "1 if xfibd maintains the maps; at 0 the dataplane forwards with its last state while the lease runs.");
	printf("xfib_daemon_up %d\n", st->pid ? 1 : 0);
	prom_head("xfib_lease_valid", "gauge",
		  "1 while xfibd's lease on the mirror runs; at 0 every packet goes to the kernel (pass_stale).");
	printf("xfib_lease_valid %d\n",
	       xfib_lease_valid(&st->lease, st->lease_now) ? 1 : 0);
	prom_head("xfib_lease_seconds", "gauge",
		  "How long the dataplane forwards by the mirror after xfibd's last renewal (xfibd --lease).");
	printf("xfib_lease_seconds %llu\n",
	       (unsigned long long)st->lease.lease_ms / 1000);
	prom_head("xfib_resyncs_total", "counter",
		  "Full netlink dumps xfibd made after losing messages (socket overruns).");
	printf("xfib_resyncs_total %llu\n", (unsigned long long)st->daemon.resyncs);
	prom_head("xfib_netlink_overruns_total", "counter",
		  "Netlink notifications xfibd lost to receive buffer overruns.");
	printf("xfib_netlink_overruns_total %llu\n",
	       (unsigned long long)st->daemon.overruns);
}

/* Each attached port's counters, labelled with its name. */
static void prom_ports(const struct status *st)
{
	static const char *const what[] = { "packets", "bytes" };
	size_t i, w;
	__u32 r;

	for (w = 0; w < 2; w++) {
		printf("# HELP xfib_port_received_%s_total %s received on the port, by outcome (forwarded, dropped, or passed to the kernel and why).\n"
		       "# TYPE xfib_port_received_%s_total counter\n",
		       what[w], w ? "Bytes" : "Packets", what[w]);
		for (i = 0; i < st->nports; i++) {
			const struct port *p = &st->ports[i];

			for (r = 0; p->counted && r < XFIB_REASON_COUNT; r++) {
				printf("xfib_port_received_%s_total{port=", what[w]);
				prom_label(p->name);
				printf(",reason=\"%s\"} %llu\n", reason_name(r),
				       (unsigned long long)(w ? p->c.in[r].bytes :
								p->c.in[r].packets));
			}
		}
		printf("# HELP xfib_port_sent_%s_total %s the XDP forwarder sent out of the port.\n"
		       "# TYPE xfib_port_sent_%s_total counter\n",
		       what[w], w ? "Bytes" : "Packets", what[w]);
		for (i = 0; i < st->nports; i++) {
			const struct port *p = &st->ports[i];

			if (!p->counted)
				continue;
			printf("xfib_port_sent_%s_total{port=", what[w]);
			prom_label(p->name);
			printf("} %llu\n", (unsigned long long)(w ? p->c.tx.bytes :
								   p->c.tx.packets));
		}
	}
}

void stats_prometheus(const struct status *st, const struct xfib_counter *sum)
{
	size_t i;

	prom_counters(sum);
	prom_instances(st->fi);
	prom_daemon(st);
	nf_status_prom(st);
	xfrm_status_prom(st);
	/* Attached ports as status finds them: our program on the port. */
	prom_head("xfib_attached", "gauge",
		  "1 for every interface the XDP forwarder is attached to, with the attach mode.");
	for (i = 0; i < st->nports; i++) {
		printf("xfib_attached{interface=");
		prom_label(st->ports[i].name);
		printf(",mode=\"%s\"} 1\n", mode_name(st->ports[i].mode));
	}
	prom_ports(st);
}
