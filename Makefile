# SPDX-License-Identifier: GPL-2.0-only
#
# xfib: XDP forwarding dataplane and its controller.
#   make            build build/xfibd and build/xfibctl
#   make test       install missing dependencies, build, run all tests (root)
#   make demo       install missing dependencies, build, run the namespaced demo
#   make bench      install missing dependencies, build, run every benchmark (root)
#   make clean
# V=1 shows the full commands.

BUILD      ?= build
CC         ?= gcc
CLANG      ?= clang
BPFTOOL    ?= bpftool
ARCH_INC   := /usr/include/$(shell $(CC) -dumpmachine 2>/dev/null)

CFLAGS     ?= -O2 -g
CFLAGS     += -Wall -Wextra -Werror -Wno-unused-parameter -std=gnu11 \
              -D_GNU_SOURCE -Iinclude -Ictl -I$(BUILD)
BPF_CFLAGS := -O2 -g -target bpf -Wall -Wextra -Werror -Wno-unused-parameter \
              -Iinclude -Ibpf -I$(ARCH_INC)
LDLIBS     := -lxdp -lbpf -lmnl -lelf -lz -lm

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: all deps test test-unit test-prog test-net test-doc demo clean

BPF_SRCS  := $(wildcard bpf/*.bpf.c)
BPF_OBJS  := $(patsubst bpf/%.bpf.c,$(BUILD)/%.bpf.o,$(BPF_SRCS))
BPF_SKELS := $(patsubst bpf/%.bpf.c,$(BUILD)/%.skel.h,$(BPF_SRCS))
HDRS      := $(wildcard include/xfib/*.h ctl/*.h bpf/lib/*.h tests/unit/ref/*.h)

CTL_LIB   := log pin htab ptree rib dir24 trie6 fib netlink dplookup verify
CTL_LIB_OBJS := $(patsubst %,$(BUILD)/ctl/%.o,$(CTL_LIB))

all: $(BUILD)/xfibd $(BUILD)/xfibctl

$(BUILD)/%.bpf.o: bpf/%.bpf.c $(HDRS) | $(BUILD)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@

$(BUILD)/ctl/%.o: ctl/%.c $(HDRS) $(BPF_SKELS) | $(BUILD)/ctl
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/xfibd: $(BUILD)/ctl/xfibd.o $(CTL_LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS)

$(BUILD)/xfibctl: $(BUILD)/ctl/xfibctl.o $(CTL_LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS)

$(BUILD) $(BUILD)/ctl $(BUILD)/tests:
	$(Q)mkdir -p $@

# ---- tests --------------------------------------------------------------
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer \
             -fno-sanitize-recover=all

$(BUILD)/tests/unit_%: tests/unit/%.c tests/unit/ref/ranges.c ctl/dir24.c ctl/trie6.c ctl/ptree.c $(HDRS) | $(BUILD)/tests
	$(call msg,CC-SAN,$@)
	$(Q)$(CC) $(CFLAGS) $(SAN_FLAGS) -Itests/unit/ref $< tests/unit/ref/ranges.c ctl/dir24.c ctl/trie6.c ctl/ptree.c -o $@

$(BUILD)/tests/prog_%: tests/prog/%.c $(BPF_SKELS) $(HDRS) | $(BUILD)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $< -o $@ $(LDLIBS)

UNIT_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/tests/unit_%,$(wildcard tests/unit/*.c))
PROG_TESTS := $(patsubst tests/prog/%.c,$(BUILD)/tests/prog_%,$(wildcard tests/prog/*.c))

deps:
	$(Q)scripts/install-deps.sh

test: deps
	$(Q)$(MAKE) --no-print-directory all $(UNIT_TESTS) $(PROG_TESTS)
	$(Q)tests/run.sh

test-unit: $(UNIT_TESTS)
	$(Q)tests/run.sh unit
test-prog: all $(PROG_TESTS)
	$(Q)tests/run.sh prog
test-net: all
	$(Q)tests/run.sh net
test-doc: all
	$(Q)tests/run.sh doc

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)scripts/demo.sh

clean:
	rm -rf $(BUILD)

# ---- install ------------------------------------------------------------
# make install [PREFIX=/usr/local] [DESTDIR=...]: binaries (the BPF object
# is embedded in them), man pages, the systemd unit and its helper, and a
# default /etc/xfib/xfibd.conf unless one exists. make uninstall removes
# all but the configuration.
PREFIX     ?= /usr/local
SBINDIR    ?= $(PREFIX)/sbin
MANDIR     ?= $(PREFIX)/share/man
LIBEXECDIR ?= $(PREFIX)/libexec/xfib
UNITDIR    ?= $(PREFIX)/lib/systemd/system
SYSCONFDIR ?= /etc
SUBST      := sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@LIBEXECDIR@|$(LIBEXECDIR)|g' \
                  -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g'
MANPAGES   := $(wildcard man/*.8)

.PHONY: install uninstall
install: all
	$(Q)install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(LIBEXECDIR) \
		$(DESTDIR)$(UNITDIR) $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(SYSCONFDIR)/xfib
	$(Q)install -m 0755 $(BUILD)/xfibd $(BUILD)/xfibctl $(DESTDIR)$(SBINDIR)/
	$(Q)$(SUBST) scripts/service/xfib-service.in > $(DESTDIR)$(LIBEXECDIR)/xfib-service
	$(Q)chmod 0755 $(DESTDIR)$(LIBEXECDIR)/xfib-service
	$(Q)$(SUBST) scripts/service/xfibd.service.in > $(DESTDIR)$(UNITDIR)/xfibd.service
	$(Q)chmod 0644 $(DESTDIR)$(UNITDIR)/xfibd.service
	$(Q)$(if $(MANPAGES),install -m 0644 $(MANPAGES) $(DESTDIR)$(MANDIR)/man8/,true)
	$(Q)test -e $(DESTDIR)$(SYSCONFDIR)/xfib/xfibd.conf || \
		install -m 0644 scripts/service/xfibd.conf $(DESTDIR)$(SYSCONFDIR)/xfib/xfibd.conf
	@echo "installed under $(DESTDIR)$(PREFIX); settings in $(DESTDIR)$(SYSCONFDIR)/xfib/xfibd.conf"

uninstall:
	$(Q)rm -f $(DESTDIR)$(SBINDIR)/xfibd $(DESTDIR)$(SBINDIR)/xfibctl \
		$(DESTDIR)$(LIBEXECDIR)/xfib-service $(DESTDIR)$(UNITDIR)/xfibd.service \
		$(DESTDIR)$(MANDIR)/man8/xfibd.8 $(DESTDIR)$(MANDIR)/man8/xfibctl.8
	$(Q)rmdir $(DESTDIR)$(LIBEXECDIR) 2>/dev/null || true
	@echo "removed; $(DESTDIR)$(SYSCONFDIR)/xfib/xfibd.conf is kept"

# ---- bench: forwarding rate, kernel stack vs xfib ------------------------
# make bench-fwd (root): builds the traffic generator and sink (tests/bench)
# and runs tests/bench/fwd.sh, which prints a table and writes
# $(BUILD)/bench/fwd.json. SCALE=small gives a run of under a minute.
BENCH_DIR     := $(BUILD)/bench
BENCH_BPF_OBJS := $(patsubst tests/bench/%.bpf.c,$(BENCH_DIR)/%.bpf.o,$(wildcard tests/bench/*.bpf.c))
BENCH_SKELS   := $(BENCH_BPF_OBJS:.bpf.o=.skel.h)
BENCH_HDRS    := $(wildcard tests/bench/*.h)

.PHONY: bench-fwd

$(BENCH_DIR):
	$(Q)mkdir -p $@

# Shorter stems than the $(BUILD)/%... rules above, so make picks these.
$(BENCH_DIR)/%.bpf.o: tests/bench/%.bpf.c $(BENCH_HDRS) | $(BENCH_DIR)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -Itests/bench -c $< -o $@

$(BENCH_DIR)/%.skel.h: $(BENCH_DIR)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@

$(BENCH_DIR)/fwdbench: tests/bench/fwdbench.c $(BENCH_SKELS) $(BENCH_HDRS) | $(BENCH_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -Itests/bench -I$(BENCH_DIR) $< -o $@ -lbpf -lelf -lz

bench-fwd: deps
	$(Q)$(MAKE) --no-print-directory all $(BENCH_DIR)/fwdbench
	$(Q)tests/bench/fwd.sh

# ---- bench: lookups per second, BPF vs native ----------------------------
# make bench-lookup (root): builds tests/bench/lookupbench and runs
# tests/bench/lookup.sh, which measures every lookup algorithm at several
# table sizes on a router's live maps, in the kernel and natively; prints
# a table and writes $(BUILD)/bench/lookup.json. SCALE=small gives a run
# of under two minutes.
.PHONY: bench-lookup

# lookup.bpf.c includes the forwarder's source, lookupbench.c dplookup.c.
$(BENCH_DIR)/lookup.bpf.o: bpf/xfib_fwd.bpf.c $(HDRS)

$(BENCH_DIR)/lookupbench: tests/bench/lookupbench.c ctl/dplookup.c $(BENCH_DIR)/lookup.skel.h $(BUILD)/ctl/pin.o $(HDRS) $(BENCH_HDRS) | $(BENCH_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -Itests/bench -I$(BENCH_DIR) $< $(BUILD)/ctl/pin.o -o $@ -lbpf -lelf -lz

bench-lookup: deps
	$(Q)$(MAKE) --no-print-directory all $(BENCH_DIR)/lookupbench
	$(Q)tests/bench/lookup.sh

# ---- bench: all of them ---------------------------------------------------
# make bench (root): lookup, forwarding and control plane in one run, then
# tests/bench/report.py: $(BUILD)/bench/results.json, report.md, *.png.
# SCALE=small: a smoke run of under two minutes (CI).
.PHONY: bench
BENCH_BINS := $(BENCH_DIR)/lookupbench $(BENCH_DIR)/fwdbench $(BENCH_DIR)/ctlprobe

bench: deps
	$(Q)$(MAKE) --no-print-directory all $(BENCH_BINS)
	$(Q)tests/bench/run.sh

# ---- bench: control plane -------------------------------------------------
# make bench-ctl (root): builds tests/bench/ctlprobe and runs
# tests/bench/ctl.sh: cold start, mirror lag during a full-table install,
# single change latency, updates per second, memory; writes
# $(BUILD)/bench/ctl.json.
.PHONY: bench-ctl

$(BENCH_DIR)/ctlprobe: tests/bench/ctlprobe.c $(BUILD)/ctl/dplookup.o $(BUILD)/ctl/pin.o $(BUILD)/ctl/log.o $(HDRS) | $(BENCH_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $< $(BUILD)/ctl/dplookup.o $(BUILD)/ctl/pin.o $(BUILD)/ctl/log.o -o $@ $(LDLIBS)

bench-ctl: deps
	$(Q)$(MAKE) --no-print-directory all $(BENCH_DIR)/ctlprobe
	$(Q)tests/bench/ctl.sh
