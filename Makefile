# SPDX-License-Identifier: GPL-2.0-only
#
# xfib: XDP forwarding dataplane and its controller.
#   make            build build/xfibd and build/xfibctl
#   make test       install missing dependencies, build, run all tests (root)
#   make test-quick the unit, packet and core forwarding tests, a few minutes
#   make demo       install missing dependencies, build, run the namespaced demo
#   make bench      install missing dependencies, build, run every benchmark (root)
#   make test-kernels  the tests on Debian 12's 6.1 and 6.12 kernels under qemu (root)
#   make difftest   the router with and without xfib on crafted frames (root)
#   make install    install under PREFIX (/usr/local); make deb: the Debian package
#   make clean
# V=1 shows the full commands. SAN=1 builds xfibd, xfibctl and the tests
# with ASan, UBSan and LSan into build/asan, and the test runner then fails
# a test on any sanitizer report (make test SAN=1 runs every test so; make
# test runs the mirror tests so, make test-san only those). TESTS="net/test_ecmp ..." runs only
# those tests (or suites). The runner runs several tests at a time:
# XFIB_TEST_JOBS=N (tests/run.sh -j N) sets how many.

SAN        ?= 0
ifeq ($(SAN),1)
BUILD      ?= build/asan
endif
BUILD      ?= build
CC         ?= gcc
CLANG      ?= clang
BPFTOOL    ?= bpftool
ARCH_INC   := /usr/include/$(shell $(CC) -dumpmachine 2>/dev/null)

CFLAGS     ?= -O2 -g
CFLAGS     += -Wall -Wextra -Werror -Wno-unused-parameter -std=gnu11 \
              -D_GNU_SOURCE -Iinclude -Ictl/lib -I$(BUILD)
# Every object also writes a .d file listing the headers it read, so a
# header change rebuilds exactly what includes it.
DEPFLAGS   = -MMD -MP
# -mcpu=v3: 32-bit ALU and jump instructions (Linux 5.1, older than
# anything else the forwarder needs). Without them every 32-bit value
# (an address, a table entry, an index) is widened by shift pairs: the
# forwarder is 6% fewer instructions with them and measured 13% cheaper
# per IPv4 packet (docs/BENCHMARKS.md).
BPF_CFLAGS := -O2 -g -target bpf -mcpu=v3 -Wall -Wextra -Werror \
              -Wno-unused-parameter -Iinclude -Ibpf -I$(ARCH_INC)
LDLIBS     := -lxdp -lbpf -lmnl -lelf -lz -lm
SAN_FLAGS  := -fsanitize=address,undefined -fno-omit-frame-pointer \
              -fno-sanitize-recover=all
ifeq ($(SAN),1)
CFLAGS     += $(SAN_FLAGS)
endif
# LAYOUT_TEST=1: a copy whose maps differ from the default build's and
# whose layout is one newer (include/xfib/maps.h), built into a BUILD of
# its own by tests/net/test_upgrade.sh to upgrade a router to and from.
ifeq ($(LAYOUT_TEST),1)
CFLAGS     += -DXFIB_LAYOUT_TEST
BPF_CFLAGS += -DXFIB_LAYOUT_TEST
endif

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: all deps test test-san test-quick test-unit test-prog test-net test-doc demo clean \
	difftest

BPF_SRCS  := $(wildcard bpf/*.bpf.c)
BPF_OBJS  := $(patsubst bpf/%.bpf.c,$(BUILD)/%.bpf.o,$(BPF_SRCS))
BPF_SKELS := $(patsubst bpf/%.bpf.c,$(BUILD)/%.skel.h,$(BPF_SRCS)) \
             $(BUILD)/xfib_fwd_ct.skel.h

# ctl/ holds one folder per program and one they share:
#   ctl/lib      pin directory, logging, the dataplane's lookup, names
#   ctl/xfibd    the daemon, a folder per subsystem (kernel, rib, fib,
#                nf, xfrm) and the main loop at its top (README.md)
#   ctl/xfibctl  the CLI
# A program's objects see ctl/lib and their own folder (xfibd's rooms
# include each other as "rib/rib.h"). ctl/lib is an archive, so each
# binary links only the shared objects it calls.
CTL_LIB_SRCS := $(wildcard ctl/lib/*.c)
XFIBD_SRCS   := $(wildcard ctl/xfibd/*.c ctl/xfibd/*/*.c)
XFIBCTL_SRCS := $(wildcard ctl/xfibctl/*.c)
ctl_objs = $(patsubst %.c,$(BUILD)/%.o,$(1))
CTL_LIB_OBJS := $(call ctl_objs,$(CTL_LIB_SRCS))
XFIBD_OBJS   := $(call ctl_objs,$(XFIBD_SRCS))
XFIBCTL_OBJS := $(call ctl_objs,$(XFIBCTL_SRCS))
CTL_LIB_A    := $(BUILD)/ctl/libxfib.a

all: $(BUILD)/xfibd $(BUILD)/xfibctl

# prog-insns: the instructions the verifier processed for loaded programs
# (tests/lib/prog_insns.c; front end scripts/prog-insns.sh), for the
# benchmarks and the tests that report a program's margin to the limit.
# Built with them, not by all: the package's sources have no tests/.
PROG_INSNS := $(BUILD)/prog-insns
$(BUILD)/prog-insns: tests/lib/prog_insns.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -Itests/lib $(DEPFLAGS) $< -o $@ -lbpf

# Every BPF object depends on this file, which holds BPF_CFLAGS and is
# rewritten only when they change: new flags rebuild every BPF object, and
# nothing else does.
BPF_FLAGS_FILE := $(BUILD)/bpf-cflags
$(BPF_FLAGS_FILE): FORCE | $(BUILD)
	$(Q)echo '$(BPF_CFLAGS)' | cmp -s - $@ || echo '$(BPF_CFLAGS)' > $@
.PHONY: FORCE
FORCE:

$(BUILD)/%.bpf.o: bpf/%.bpf.c $(BPF_FLAGS_FILE) | $(BUILD)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@

# The forwarder is built twice (bpf/lib/ctgate.h): xfib_fwd.bpf.o calls
# the conntrack kfuncs, which a kernel without nf_conntrack loaded lacks,
# xfib_fwd_noct.bpf.o does not. The programs reach both through the
# skeleton of the second (its maps and programs are the first's less
# the kconfig map); the first's skeleton only carries its bytes, which
# the loader opens instead where the kernel has the kfuncs (ctl/lib/pin.c).
$(BUILD)/xfib_fwd_noct.bpf.o: bpf/xfib_fwd.bpf.c $(BPF_FLAGS_FILE) | $(BUILD)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -DXFIB_NO_CT_KFUNCS $(DEPFLAGS) -c $< -o $@

$(BUILD)/xfib_fwd.skel.h: $(BUILD)/xfib_fwd_noct.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name xfib_fwd_bpf > $@

$(BUILD)/xfib_fwd_ct.skel.h: $(BUILD)/xfib_fwd.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name xfib_fwd_ct_bpf > $@

# The skeletons are generated headers: built before any C file that may
# include them; the .d files then record who really does.
$(BUILD)/ctl/%.o: ctl/%.c | $(BPF_SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -Ictl/$(firstword $(subst /, ,$*)) $(DEPFLAGS) -c $< -o $@

$(CTL_LIB_A): $(CTL_LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

# -pthread: dumps are read on a second thread (ctl/xfibd/kernel/nl_reader.c).
$(BUILD)/xfibd: $(XFIBD_OBJS) $(CTL_LIB_A)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS) -pthread

# json-c builds xfibctl's JSON output; only xfibctl links it.
$(BUILD)/xfibctl: $(XFIBCTL_OBJS) $(CTL_LIB_A)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS) -ljson-c

$(BUILD) $(BUILD)/tests:
	$(Q)mkdir -p $@

# ---- tests --------------------------------------------------------------

# The unit tests link the daemon's table code and its choice of them, its
# policy rule classifier, its netlink attribute policy and dump reader,
# its netfilter check and XFRM counting, and xfibctl's UTF-8 repair and
# algorithm names, built again sanitized.
UNIT_SAN_OBJS := $(patsubst %.c,$(BUILD)/san/%.o,tests/unit/ref/ranges.c \
                   $(addprefix ctl/xfibd/fib/,dir24.c dxr.c poptrie6.c \
                     poptrie6_update.c trie6.c grpool.c fib_ranges.c \
                     fib_tpool.c fib_select.c) \
                   $(addprefix ctl/xfibd/rib/,ptree.c rib_port.c htab.c \
                     rib_rule_class.c rib_rule_runs.c) \
                   $(addprefix ctl/xfibd/kernel/,nl_policy.c nl_reader.c) \
                   $(addprefix ctl/xfibd/nf/,nfcheck.c nfrules.c) \
                   ctl/xfibd/xfrm/xfrm_count.c ctl/xfibctl/utf8.c \
                   ctl/lib/algo_names.c)
$(BUILD)/san/%.o: %.c
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(SAN_FLAGS) -Itests/unit/ref -Ictl/xfibd -Ictl/xfibctl $(DEPFLAGS) -c $< -o $@

$(BUILD)/tests/unit_%: $(BUILD)/san/tests/unit/%.o $(UNIT_SAN_OBJS) | $(BUILD)/tests
	$(call msg,LINK-SAN,$@)
	$(Q)$(CC) $(CFLAGS) $(SAN_FLAGS) $^ -o $@ -lmnl -lm -pthread

# test_rib_dflt drives the whole RIB over arrays in memory
# (tests/unit/ref/mem_dp.c, the fuzzer's too).
RIB_SAN_OBJS := $(patsubst %.c,$(BUILD)/san/%.o,$(addprefix ctl/xfibd/rib/, \
                  rib.c rib_link.c rib_nexthop.c rib_route.c rib_nhobj.c \
                  rib_check.c rib_local4.c rib_prefix.c rib_expiry.c \
                  rib_rule.c rib_table.c rib_fdb.c objpool.c))
$(BUILD)/tests/unit_test_rib_dflt: $(BUILD)/san/tests/unit/test_rib_dflt.o \
		$(BUILD)/san/tests/unit/ref/mem_dp.o $(UNIT_SAN_OBJS) $(RIB_SAN_OBJS) \
		| $(BUILD)/tests
	$(call msg,LINK-SAN,$@)
	$(Q)$(CC) $(CFLAGS) $(SAN_FLAGS) $^ -o $@ -lmnl -lm -pthread

# test_verify_flow checks the flows xfibctl verify makes from the rules.
$(BUILD)/tests/unit_test_verify_flow: $(BUILD)/san/tests/unit/test_verify_flow.o \
		$(BUILD)/san/ctl/xfibctl/verify_flow.o $(BUILD)/san/ctl/xfibctl/verify_gen.o \
		$(UNIT_SAN_OBJS) | $(BUILD)/tests
	$(call msg,LINK-SAN,$@)
	$(Q)$(CC) $(CFLAGS) $(SAN_FLAGS) $^ -o $@ -lmnl -lm -pthread

# Packet tests link ctl/lib too: they put the program's questions to the
# userspace lookup xfibctl answers with.
$(BUILD)/tests/prog_%: tests/prog/%.c $(CTL_LIB_A) | $(BPF_SKELS) $(BUILD)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(DEPFLAGS) $< $(CTL_LIB_A) -o $@ $(LDLIBS)

# The differential test's XDP programs and the tool that creates its NAT
# run's conntrack entries (tests/difftest).
DIFFTEST_OBJS := $(BUILD)/tests/dt_pass.bpf.o $(BUILD)/tests/dt_plant.bpf.o \
                 $(BUILD)/tests/dt_ct
$(BUILD)/tests/dt_%.bpf.o: tests/difftest/dt_%.bpf.c $(BPF_FLAGS_FILE) | $(BUILD)/tests
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/tests/dt_ct: tests/difftest/dt_ct.c $(CTL_LIB_A) | $(BUILD)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(DEPFLAGS) $^ -o $@ $(LDLIBS)

UNIT_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/tests/unit_%,$(wildcard tests/unit/*.c))
PROG_TESTS := $(patsubst tests/prog/%.c,$(BUILD)/tests/prog_%,$(wildcard tests/prog/*.c))

# The netlink fuzzer (libFuzzer, ASan, UBSan): xfibd's netlink parsing and
# RIB, the maps replaced by memory (test_rib_dflt's); nlcapture records
# its seed corpus.
FUZZ_SRCS := tests/fuzz/fuzz_netlink.c tests/unit/ref/mem_dp.c \
             $(addprefix ctl/xfibd/kernel/,netlink.c nl_link.c nl_route.c \
               nl_reader.c nl_policy.c) \
             $(addprefix ctl/xfibd/rib/,rib.c rib_link.c rib_nexthop.c \
               rib_port.c rib_route.c rib_nhobj.c rib_check.c rib_local4.c \
               rib_prefix.c rib_expiry.c rib_rule.c rib_rule_class.c rib_rule_runs.c \
               rib_table.c rib_fdb.c htab.c objpool.c ptree.c) \
             ctl/lib/log.c
FUZZ_BINS := $(BUILD)/fuzz/fuzz_netlink $(BUILD)/fuzz/nlcapture

$(BUILD)/fuzz/fuzz_netlink: $(FUZZ_SRCS)
	$(call msg,FUZZER,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -g -O1 -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=all -Wall -Wextra -Werror \
		-Wno-unused-parameter -std=gnu11 -D_GNU_SOURCE -Iinclude \
		-Ictl/lib -Ictl/xfibd -Itests/unit/ref -I$(BUILD) $(DEPFLAGS) \
		-MF $@.d $(FUZZ_SRCS) \
		-o $@ -lmnl -lbpf -lxdp -pthread

$(BUILD)/fuzz/nlcapture: tests/fuzz/nlcapture.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(DEPFLAGS) $< -o $@

# make fuzz: FUZZ_SECONDS (default 600) of fuzzing from the seed corpus;
# make fuzz-corpus (root) records the seed corpus again.
.PHONY: fuzz fuzz-corpus
fuzz: $(FUZZ_BINS)
	$(Q)BUILD=$(abspath $(BUILD)) FUZZ_SECONDS=$${FUZZ_SECONDS:-600} \
		tests/fuzz/test_netlink_fuzz.sh
fuzz-corpus: $(BUILD)/fuzz/nlcapture
	$(Q)NLCAPTURE=$< tests/fuzz/make-corpus.sh tests/fuzz/corpus

deps:
	$(Q)scripts/install-deps.sh

# The runner finds the binaries and records sanitizer reports by these.
RUN_TESTS = BUILD=$(abspath $(BUILD)) XFIB_SAN=$(SAN) tests/run.sh

# The tests of the mirror: what xfibd does with every kind of netlink
# input. make test runs them sanitized.
MIRROR_TESTS := net/test_route_update net/test_gateways net/test_ecmp \
                net/test_group_full net/test_links net/test_neigh_states \
                net/test_neigh_change net/test_overrun net/test_dump_intr \
                net/test_torture net/test_restart net/test_kill9 \
                net/test_route_alias net/test_shared_subnet \
                net/test_route_expiry net/test_verify_linkdown \
                net/test_nexthop_scale net/test_replay net/test_dump_large \
                net/test_neigh_host_delete

# make test-san: the mirror tests with xfibd and xfibctl under ASan,
# UBSan and LSan, and the CLI's golden test, which runs every xfibctl
# command (the other tests run xfibctl without the leak check: see
# xfibctl_without_leak_check in tests/lib/netns.sh).
SAN_TESTS := $(MIRROR_TESTS) net/test_cli_golden

# make test: every test; SAN_TESTS with xfibd and xfibctl built with the
# sanitizers (build/asan), where they check most, the others with the
# plain build. net/test_bench_gen_order runs the forwarding benchmark's
# generator.
# Its builds run a job per CPU, unless make was given a -j of its own.
SAN_BUILD := build/asan
TEST_BUILD_JOBS = $(if $(findstring -j,$(MAKEFLAGS)),,-j$(shell nproc 2>/dev/null || echo 1))
test: deps
	$(Q)$(MAKE) --no-print-directory $(TEST_BUILD_JOBS) all $(UNIT_TESTS) \
		$(PROG_TESTS) $(FUZZ_BINS) $(DIFFTEST_OBJS) $(BENCH_DIR)/fwdbench $(PROG_INSNS)
	$(Q)$(MAKE) --no-print-directory $(TEST_BUILD_JOBS) SAN=1 BUILD=$(SAN_BUILD) all
	$(Q)XFIB_SAN_TESTS="$(SAN_TESTS)" XFIB_SAN_BUILD=$(abspath $(SAN_BUILD)) \
		$(RUN_TESTS) $(TESTS)

# The mirror tests use xfibd and xfibctl only: test-san builds just those
# (with the BPF objects) with the sanitizers, not every test's binary,
# and runs only SAN_TESTS: the sanitized part of make test, on its own.
# The torture test runs 30 s here (TORTURE_SECONDS; 60 in make test).
test-san:
	$(Q)TORTURE_SECONDS=$${TORTURE_SECONDS:-30} $(MAKE) --no-print-directory SAN=1 test-san-run TESTS="$(SAN_TESTS)"

.PHONY: test-san-run
test-san-run: deps all
	$(Q)$(RUN_TESTS) $(TESTS)

# make test-quick: the edit-test loop, a few minutes: the unit and packet
# tests, the layout check (scripts/check-layout.py) and the core
# forwarding tests (traffic forwarded by XDP, route changes, TTL expiry,
# neighbour changes, detach).
QUICK_TESTS := unit prog doc/test_layout net/test_forward net/test_route_update \
               net/test_ttl_exceeded net/test_neigh_change net/test_detach
test-quick: all $(UNIT_TESTS) $(PROG_TESTS)
	$(Q)$(RUN_TESTS) $(QUICK_TESTS)

test-unit: $(UNIT_TESTS)
	$(Q)$(RUN_TESTS) unit
test-prog: all $(PROG_TESTS)
	$(Q)$(RUN_TESTS) prog
test-net: all $(DIFFTEST_OBJS) $(BENCH_DIR)/fwdbench $(PROG_INSNS)
	$(Q)$(RUN_TESTS) net
test-doc: all
	$(Q)$(RUN_TESTS) doc
# make check-layout: xfibd's rooms, the direction of their includes and
# calls (from the objects), and the length of functions in ctl/ (also
# run by tests/doc/test_layout.sh).
.PHONY: check-layout
check-layout: all
	$(Q)scripts/check-layout.py . $(BUILD)

# make test-kernels (root): the kernel matrix (tests/kernels/matrix.sh):
# Debian 12's own kernels, 6.1 and 6.12 (KERNELS), booted under qemu with
# this machine's userspace, running the checks of KERNEL_MODE: load (the
# programs load, xfibd starts without netfilter modules, ports forward in
# XDP; what CI runs) or full (that and a core subset of the suite).
KERNEL_MODE ?= full
KERNELS     ?= 6.1 6.12
.PHONY: test-kernels
test-kernels: deps
	$(Q)$(MAKE) --no-print-directory all $(PROG_TESTS) $(DIFFTEST_OBJS)
	$(Q)BUILD=$(abspath $(BUILD)) tests/kernels/matrix.sh -m $(KERNEL_MODE) $(KERNELS)

# make soak (root; not CI): tests/soak/soak.sh, SOAK_MINUTES (default 30)
# of churn, restarts and steady traffic, sampled every minute; the report
# and plot go to $(BUILD)/soak/ (docs/SOAK.md is one such run).
.PHONY: soak
soak: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)BUILD=$(abspath $(BUILD)) tests/soak/soak.sh

# make difftest [N=frames] [SEED=n] [NAT=1|RULES=1] (root): the differential
# packet test, the router with and without xfib (tests/difftest/run.sh);
# N=1000000 and more run in chunks of 50000. NAT=1: its NAT run (run.sh
# -N), a stateful ruleset with masquerade and a port forward, in chunks of
# 9000. RULES=1: its policy-routing run (run.sh -R), a rule set with every
# selector and action. make test runs it with 20000 frames, the NAT run
# with 6000 and the policy-routing run with 4000.
N    ?= 200000
SEED ?= 1
difftest: deps
	$(Q)$(MAKE) --no-print-directory all $(DIFFTEST_OBJS)
	$(Q)BUILD=$(abspath $(BUILD)) tests/difftest/run.sh -n $(N) -s $(SEED) \
		$(if $(filter 1,$(NAT)),-N) $(if $(filter 1,$(RULES)),-R)

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)scripts/demo.sh

clean:
	rm -rf $(BUILD)

# ---- install ------------------------------------------------------------
# make install [PREFIX=/usr/local] [DESTDIR=...]: binaries (the BPF object
# is embedded in them), man pages, the systemd unit and its helper, bash
# completion for xfibctl (PREFIX/share/bash-completion/completions, where
# bash-completion looks for /usr/local and /usr), and a default
# /etc/xfib/xfibd.conf unless one exists. make uninstall removes all but
# the configuration. make deb builds the Debian package instead
# (scripts/build-deb.sh, packaging in scripts/debian/): $(BUILD)/xfib_*.deb.
PREFIX     ?= /usr/local
SBINDIR    ?= $(PREFIX)/sbin
MANDIR     ?= $(PREFIX)/share/man
LIBEXECDIR ?= $(PREFIX)/libexec/xfib
UNITDIR    ?= $(PREFIX)/lib/systemd/system
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
SYSCONFDIR ?= /etc
SUBST      := sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@LIBEXECDIR@|$(LIBEXECDIR)|g' \
                  -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g'
MANPAGES   := $(wildcard man/*.8)

.PHONY: install uninstall deb
install: all
	$(Q)install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(LIBEXECDIR) \
		$(DESTDIR)$(UNITDIR) $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(SYSCONFDIR)/xfib \
		$(DESTDIR)$(BASHCOMPDIR)
	$(Q)install -m 0755 $(BUILD)/xfibd $(BUILD)/xfibctl $(DESTDIR)$(SBINDIR)/
	$(Q)$(SUBST) scripts/service/xfib-service.in > $(DESTDIR)$(LIBEXECDIR)/xfib-service
	$(Q)chmod 0755 $(DESTDIR)$(LIBEXECDIR)/xfib-service
	$(Q)$(SUBST) scripts/service/xfibd.service.in > $(DESTDIR)$(UNITDIR)/xfibd.service
	$(Q)chmod 0644 $(DESTDIR)$(UNITDIR)/xfibd.service
	$(Q)$(if $(MANPAGES),install -m 0644 $(MANPAGES) $(DESTDIR)$(MANDIR)/man8/,true)
	$(Q)install -m 0644 scripts/completion/xfibctl $(DESTDIR)$(BASHCOMPDIR)/xfibctl
	$(Q)test -e $(DESTDIR)$(SYSCONFDIR)/xfib/xfibd.conf || \
		install -m 0644 scripts/service/xfibd.conf $(DESTDIR)$(SYSCONFDIR)/xfib/xfibd.conf
	@echo "installed under $(DESTDIR)$(PREFIX); settings in $(DESTDIR)$(SYSCONFDIR)/xfib/xfibd.conf"

uninstall:
	$(Q)rm -f $(DESTDIR)$(SBINDIR)/xfibd $(DESTDIR)$(SBINDIR)/xfibctl \
		$(DESTDIR)$(LIBEXECDIR)/xfib-service $(DESTDIR)$(UNITDIR)/xfibd.service \
		$(DESTDIR)$(MANDIR)/man8/xfibd.8 $(DESTDIR)$(MANDIR)/man8/xfibctl.8 \
		$(DESTDIR)$(BASHCOMPDIR)/xfibctl
	$(Q)rmdir $(DESTDIR)$(LIBEXECDIR) 2>/dev/null || true
	@echo "removed; $(DESTDIR)$(SYSCONFDIR)/xfib/xfibd.conf is kept"

deb:
	$(Q)BUILD=$(abspath $(BUILD)) scripts/build-deb.sh

# ---- bench: forwarding rate, kernel stack vs xfib ------------------------
# make bench-fwd (root): builds the traffic generator and sink (tests/bench)
# and runs tests/bench/fwd.sh, which prints a table and writes
# $(BUILD)/bench/fwd.json. SCALE=small gives a run of a few minutes.
BENCH_DIR     := $(BUILD)/bench
BENCH_BPF_OBJS := $(patsubst tests/bench/%.bpf.c,$(BENCH_DIR)/%.bpf.o,$(wildcard tests/bench/*.bpf.c))
BENCH_SKELS   := $(BENCH_BPF_OBJS:.bpf.o=.skel.h)

.PHONY: bench-fwd

$(BENCH_DIR):
	$(Q)mkdir -p $@

# The lookup benchmark includes the forwarder for its maps but loads none
# of its code: built without the conntrack kfuncs, it loads on a kernel
# without nf_conntrack too (bpf/lib/ctgate.h).
$(BENCH_DIR)/lookup.bpf.o: BPF_CFLAGS += -DXFIB_NO_CT_KFUNCS

# Shorter stems than the $(BUILD)/%... rules above, so make picks these.
$(BENCH_DIR)/%.bpf.o: tests/bench/%.bpf.c $(BPF_FLAGS_FILE) | $(BENCH_DIR)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -Itests/bench $(DEPFLAGS) -c $< -o $@

$(BENCH_DIR)/%.skel.h: $(BENCH_DIR)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@

$(BENCH_DIR)/fwdbench: tests/bench/fwdbench.c | $(BENCH_SKELS) $(BENCH_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -Itests/bench -I$(BENCH_DIR) $(DEPFLAGS) $< -o $@ -lbpf -lelf -lz

# Builds of the forwarder for fwd.sh's cost measurements: without the
# per-port counters, without the trace hook, looking every IPv4 source up
# (bpf/xfib_fwd.bpf.c).
$(BENCH_DIR)/xfib_fwd_noport.bpf.o: bpf/xfib_fwd.bpf.c $(BPF_FLAGS_FILE) | $(BENCH_DIR)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -DXFIB_BENCH_WITHOUT_PORT_STATS $(DEPFLAGS) -c $< -o $@

$(BENCH_DIR)/xfib_fwd_notrace.bpf.o: bpf/xfib_fwd.bpf.c $(BPF_FLAGS_FILE) | $(BENCH_DIR)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -DXFIB_BENCH_WITHOUT_TRACE $(DEPFLAGS) -c $< -o $@

$(BENCH_DIR)/xfib_fwd_srcalways.bpf.o: bpf/xfib_fwd.bpf.c $(BPF_FLAGS_FILE) | $(BENCH_DIR)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -DXFIB_BENCH_SOURCE_ALWAYS $(DEPFLAGS) -c $< -o $@

$(BENCH_DIR)/fwdvariant: tests/bench/fwdvariant.c | $(BENCH_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(DEPFLAGS) $< -o $@ -lbpf -lelf -lz

FWD_VARIANTS := $(BENCH_DIR)/fwdvariant $(BENCH_DIR)/xfib_fwd_noport.bpf.o \
                $(BENCH_DIR)/xfib_fwd_notrace.bpf.o \
                $(BENCH_DIR)/xfib_fwd_srcalways.bpf.o

# ctfill: conntrack entries for the generator's flows (the gate case).
$(BENCH_DIR)/ctfill: tests/bench/ctfill.c $(CTL_LIB_A) | $(BENCH_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(DEPFLAGS) $^ -o $@ $(LDLIBS)

bench-fwd: deps
	$(Q)$(MAKE) --no-print-directory all $(BENCH_DIR)/fwdbench $(BENCH_DIR)/ctfill \
		$(FWD_VARIANTS) $(PROG_INSNS)
	$(Q)tests/bench/fwd.sh

# ---- bench: lookups per second, BPF vs native ----------------------------
# make bench-lookup (root): builds tests/bench/lookupbench and runs
# tests/bench/lookup.sh, which measures every lookup algorithm at several
# table sizes on a router's live maps, in the kernel and natively; prints
# a table and writes $(BUILD)/bench/lookup.json. SCALE=small gives a run
# of a minute or two.
.PHONY: bench-lookup

# lookupbench.c includes ctl/lib/dplookup.c (the .d file records it) and
# tests/lib/prog_insns.h; the mapping of the instance (dpl_map.c) comes
# from libxfib.
# The algorithm names come from libxfib (ctl/lib/algo_names.c); the
# counting pass (lookupreads.c) includes the lookup headers and
# ctl/lib/dpl_dispatch.h again, with its own accessors, in its own object.
$(BENCH_DIR)/lookupreads.o: tests/bench/lookupreads.c | $(BENCH_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -Itests/bench $(DEPFLAGS) -c $< -o $@

$(BENCH_DIR)/lookupbench: tests/bench/lookupbench.c $(BENCH_DIR)/lookupreads.o $(CTL_LIB_A) | $(BENCH_DIR)/lookup.skel.h $(BENCH_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -Itests/bench -Itests/lib -I$(BENCH_DIR) $(DEPFLAGS) $< $(BENCH_DIR)/lookupreads.o \
		$(CTL_LIB_A) -o $@ $(LDLIBS)

# The verifier-margin test loads the lookup benchmark's programs too.
$(BUILD)/tests/prog_test_verifier_margin: CFLAGS += -Itests/lib -I$(BENCH_DIR)
$(BUILD)/tests/prog_test_verifier_margin: | $(BENCH_DIR)/lookup.skel.h

bench-lookup: deps
	$(Q)$(MAKE) --no-print-directory all $(BENCH_DIR)/lookupbench
	$(Q)tests/bench/lookup.sh

# ---- bench: all of them ---------------------------------------------------
# make bench (root): lookup, forwarding and control plane in one run, then
# tests/bench/report.py: $(BUILD)/bench/results.json, report.md, *.png.
# SCALE=small: a smoke run of a few minutes (CI).
.PHONY: bench
BENCH_BINS := $(BENCH_DIR)/lookupbench $(BENCH_DIR)/fwdbench $(BENCH_DIR)/ctlprobe \
              $(BENCH_DIR)/ctlwatch $(BENCH_DIR)/ctfill $(FWD_VARIANTS) $(PROG_INSNS)

bench: deps
	$(Q)$(MAKE) --no-print-directory bench-build
	$(Q)tests/bench/run.sh

# What make bench runs, built (CI builds it before running the benchmarks
# beside the kernel matrix, so that two makes never build at once).
.PHONY: bench-build
bench-build: all $(BENCH_BINS)

# ---- bench: control plane -------------------------------------------------
# make bench-ctl (root): builds tests/bench/ctlprobe and ctlwatch and runs
# tests/bench/ctl.sh: cold start, mirror lag during a full-table install
# by `ip -batch` and by FRR, single change latency, updates per second,
# memory; writes $(BUILD)/bench/ctl.json.
.PHONY: bench-ctl

$(BENCH_DIR)/ctlprobe: tests/bench/ctlprobe.c $(CTL_LIB_A) | $(BENCH_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(DEPFLAGS) $^ -o $@ $(LDLIBS)

$(BENCH_DIR)/ctlwatch: tests/bench/ctlwatch.c $(CTL_LIB_A) | $(BENCH_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(DEPFLAGS) $^ -o $@ $(LDLIBS)

bench-ctl: deps
	$(Q)$(MAKE) --no-print-directory all $(BENCH_DIR)/ctlprobe $(BENCH_DIR)/ctlwatch
	$(Q)tests/bench/ctl.sh

# Header dependencies recorded by the compilers (-MMD).
-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
