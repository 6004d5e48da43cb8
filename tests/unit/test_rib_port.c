// SPDX-License-Identifier: GPL-2.0-only
/*
 * xfibd's writes of xfib_ifaces (ctl/xfibd/rib/rib_port.c) against the rule
 * that keeps packets from reading a half-written entry: a copy of a port
 * is written only while live names the other copy (or none) and only
 * after a grace period has passed since the copy was last live. Random
 * writes, removals and grace periods on a few ports; after each step the
 * copies that changed are checked against that rule, and after each grace
 * period (and the flush that follows it) every port must say what was
 * last asked of it. Then the wrap of live past 2^32 - 1, and the sweep of
 * entries without a link.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rib/rib_priv.h"

#define PORTS 6
#define STEPS 200000

static int failed;

#define CHECK(cond, ...)                                                   \
	do {                                                               \
		if (!(cond)) {                                             \
			printf("FAIL " __VA_ARGS__);                       \
			printf("\n");                                      \
			if (++failed > 10)                                 \
				exit(1);                                   \
		}                                                          \
	} while (0)

static struct rib r;
static struct xfib_port port_mem[XFIB_PORT_MAX];
/* The model: per port, what was last asked (present, value), and per
 * copy the epoch it stopped being live (0: never was, or is live). */
static bool want_present[PORTS];
static struct xfib_iface want[PORTS];
static __u64 left[PORTS][2];

static void setup(void)
{
	memset(&r, 0, sizeof(r));
	memset(port_mem, 0, sizeof(port_mem));
	r.dp.port = port_mem;
	r.ports = calloc(XFIB_PORT_MAX, sizeof(*r.ports));
	if (!r.ports || htab_init(&r.links, offsetof(struct rib_link, node),
				  offsetof(struct rib_link, ifindex), sizeof(int)))
		exit(1);
	port_init(&r);
}

static void grace_period(void)
{
	r.epoch++; /* as rib_rcu_sync() after the kernel's grace period */
	port_flush(&r);
}

static struct xfib_iface value(__u32 i, unsigned int x)
{
	struct xfib_iface v = { .mac = { 2, 0, 0, 0, (__u8)i, (__u8)x },
				.flags = x & 0x7f, .mtu = 1280 + x,
				.ifindex = i };
	return v;
}

/* Copies that changed since before must have been free to write. */
static void check_step(__u32 i, const struct xfib_port *before, long step)
{
	const struct xfib_port *now = &port_mem[i];
	int c;

	for (c = 0; c < 2; c++) {
		bool was_live = before->live && (before->live & 1) == (__u32)c;

		if (!memcmp(&before->copy[c], &now->copy[c], sizeof(now->copy[c])))
			continue;
		CHECK(!was_live, "step %ld: port %u: copy %d written while live",
		      step, i, c);
		CHECK(left[i][c] && r.epoch > left[i][c],
		      "step %ld: port %u: copy %d written without a grace period since it was live",
		      step, i, c);
	}
	/* The copy live before and not now has just been left. */
	if (before->live && before->live != now->live)
		left[i][before->live & 1] = r.epoch;
	if (now->live)
		left[i][now->live & 1] = 0;
	CHECK(!now->live || now->live != before->live ||
	      !memcmp(xfib_port_iface(now, now->live),
		      xfib_port_iface(before, before->live), sizeof(want[i])),
	      "step %ld: port %u: live copy changed in place", step, i);
}

static void check_settled(long step)
{
	const struct xfib_port *e;
	__u32 i;

	for (i = 1; i < PORTS; i++) {
		e = &port_mem[i];
		if (!want_present[i]) {
			CHECK(!e->live, "step %ld: port %u present, removed", step, i);
			continue;
		}
		CHECK(e->live && !memcmp(xfib_port_iface(e, e->live), &want[i],
					 sizeof(want[i])),
		      "step %ld: port %u does not say what was last written",
		      step, i);
	}
	CHECK(!r.ports_pending, "step %ld: changes still wait after a grace period",
	      step);
}

static void random_steps(void)
{
	struct xfib_port before;
	long step;
	__u32 i, c;

	srandom(1);
	/* Nothing the previous daemon left is known to be unread. */
	for (i = 1; i < PORTS; i++)
		left[i][0] = left[i][1] = r.epoch;
	for (step = 0; step < STEPS; step++) {
		unsigned int op = random() % 10;

		if (op == 0) {
			struct xfib_port all[PORTS];

			memcpy(all, port_mem, sizeof(all));
			grace_period();
			for (i = 1; i < PORTS; i++)
				check_step(i, &all[i], step);
			check_settled(step);
			continue;
		}
		i = 1 + random() % (PORTS - 1);
		before = port_mem[i];
		if (op == 1) {
			port_write(&r, i, NULL);
			want_present[i] = false;
		} else {
			c = random() % 4; /* often the same value again */
			want[i] = value(i, c);
			want_present[i] = true;
			port_write(&r, i, &want[i]);
		}
		check_step(i, &before, step);
	}
	grace_period();
	check_settled(step);
	printf("ok   %d random writes, removals and grace periods on %d ports\n",
	       STEPS, PORTS - 1);
}

static void wrap(void)
{
	struct xfib_iface a = value(7, 1), b = value(7, 2);
	struct xfib_port *e = &port_mem[7];

	r.ports[7].last = 0xffffffffu;
	grace_period();
	port_write(&r, 7, &a);
	CHECK(e->live == 2, "live after 2^32 - 1 is %u, not 2 (0 is absent)",
	      e->live);
	grace_period();
	port_write(&r, 7, &b);
	CHECK(e->live == 3 && !memcmp(&e->copy[1], &b, sizeof(b)) &&
	      !memcmp(&e->copy[0], &a, sizeof(a)),
	      "after the wrap: live %u, copies not alternating", e->live);
	printf("ok   live skips 0 when it wraps, copies keep alternating\n");
}

static void sweep(void)
{
	struct rib_link *l = calloc(1, sizeof(*l));
	struct xfib_iface v = value(9, 3);

	if (!l)
		exit(1);
	/* Left by a previous daemon: a port with a link, one without. */
	port_mem[9].live = 5;
	port_mem[9].copy[1] = v;
	port_mem[10].live = 8;
	port_init(&r);
	l->ifindex = 9;
	htab_insert(&r.links, l);
	port_sweep(&r);
	CHECK(port_mem[9].live == 5, "sweep removed a port with a link");
	CHECK(port_mem[10].live == 0, "sweep kept a port without a link");
	port_write(&r, 9, &v);
	CHECK(port_mem[9].live == 5 && !r.ports_pending,
	      "an adopted port rewritten with what it holds");
	v.mtu = 9000;
	port_write(&r, 9, &v);
	CHECK(port_mem[9].live == 5 && r.ports_pending,
	      "an adopted port changed before the first grace period");
	grace_period();
	CHECK(port_mem[9].live == 6 && port_mem[9].copy[0].mtu == 9000,
	      "an adopted port's change after the grace period");
	htab_remove(&r.links, l);
	free(l);
	printf("ok   adoption: sweep removes ports without a link, changes wait for a grace period\n");
}

int main(void)
{
	setup();
	random_steps();
	wrap();
	sweep();
	htab_free(&r.links);
	free(r.ports);
	if (failed)
		printf("%d checks failed\n", failed);
	return failed ? 1 : 0;
}
