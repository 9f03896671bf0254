# SPDX-License-Identifier: GPL-2.0
#
# Builds dm-nswap2l.ko against the headers of one kernel.
#
#   make                      build for Debian 12's default kernel (6.1)
#   make KVER=6.12            build for the newest installed 6.12 headers
#   make KVER=$(uname -r)     build for the running kernel
#   make test [KVER=...]      run the whole test suite: nswapd on the host, the module
#                             in guests of 6.1 and of 6.12 (KVER=...: only that one;
#                             installs what it needs); TESTS="..." picks guest cases;
#                             TEST_JOBS=N guests at a time (default 2)
#   make demo                 boot a guest and swap to the device over its tiers
#   make bench [KVER=...]     run the benchmarks in a guest
#   make deps                 install the Debian packages the tests need (QEMU, and the
#                             headers of the guests' kernels, not the running kernel's)
#   make dkms-install         copy the module's sources to /usr/src and dkms install them
#   make man                  the manual pages, in build/man (man -l build/man/nswapd.8)
#   make deb                  Debian packages (dm-nswap2l-dkms, nswapd, nswap2l) in build/deb,
#                             checked by lintian
#   make build-check          W=1 -Werror builds for Debian 12's 6.1 and 6.12
#                             (make test builds the same way: a warning fails it)

KVER_FULL := $(shell scripts/kernel-version $(KVER))
KDIR ?= /lib/modules/$(KVER_FULL)/build
# The kernel series the module must work on (DESIGN: Debian 12's 6.1 and 6.12).
KERNELS := 6.1 6.12
# kbuild's jobs for one module build, unless make was given -j (its jobserver)
BUILD_JOBS = $(if $(findstring -j,$(MAKEFLAGS)),,-j$(shell nproc))

# What DKMS builds from: the Kbuild sources, not the tests, tools or build/.
DKMS_VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
DKMS_SRC ?= /usr/src/dm-nswap2l-$(DKMS_VERSION)
DKMS_SOURCES := Kbuild dkms.conf $(filter-out %.mod.c,$(wildcard *.c *.h policy/*.c policy/*.h include/uapi/linux/*.h))

.PHONY: all module build-check deps test demo bench dkms-source dkms-install man deb clean help

all: module

module:
	@test -n "$(KVER_FULL)" || { \
		echo "no kernel headers found for '$(or $(KVER),Debian 12's default kernel)':" \
			"apt-get install linux-headers-$(or $(KVER),amd64)" >&2; \
		echo "(make deps installs the headers of the test guests' kernels, 6.1 and 6.12)" >&2; \
		exit 1; }
	$(MAKE) $(BUILD_JOBS) -C $(KDIR) M=$(CURDIR) W=1 modules

# The kernels the module must build warning-free for (DESIGN: 6.1 and 6.12).
build-check: deps
	for k in $(KERNELS); do $(MAKE) module KVER=$$k KCFLAGS=-Werror || exit; done

deps:
	scripts/install-deps

# Guests booted at a time by the guest suites (tests/run --jobs): a guest
# alone keeps about one of the two cores of CI's machines busy; two at a
# time took 12-21 % less wall time (tests/README.md).
TEST_JOBS ?= 2

# One module per kernel, kept under build/modules/<version>/ for its suite,
# built as build-check builds it, so that CI need not build it twice.
test: deps
	@set -e; suites=; \
	for k in $(if $(KVER),$(KVER),$(KERNELS)); do \
		v=$$(scripts/kernel-version $$k); \
		test -n "$$v" || { echo "no kernel headers found for '$$k': run 'make deps'" >&2; exit 1; }; \
		$(MAKE) module KVER=$$v KCFLAGS=-Werror; \
		mkdir -p build/modules/$$v; cp dm-nswap2l.ko build/modules/$$v/; \
		suites="$$suites --kver $$v --module $(CURDIR)/build/modules/$$v/dm-nswap2l.ko"; \
	done; \
	tests/all --jobs=$(TEST_JOBS) $$suites $(TESTS)

demo: deps
	$(MAKE) module KVER=$(KVER)
	tests/run --verbose --kver "$$(scripts/kernel-version $(KVER))" --module $(CURDIR)/dm-nswap2l.ko 46-swap-demo

bench: deps
	$(MAKE) module KVER=$(KVER)
	bench/run --kver "$$(scripts/kernel-version $(KVER))" --module $(CURDIR)/dm-nswap2l.ko

dkms-source:
	rm -rf $(DKMS_SRC)
	install -d $(DKMS_SRC)
	cp --parents $(DKMS_SOURCES) $(DKMS_SRC)/

dkms-install: dkms-source
	@command -v dkms >/dev/null || { echo "dkms not found: apt-get install dkms linux-headers-$$(uname -r)" >&2; exit 1; }
	dkms install dm-nswap2l/$(DKMS_VERSION)

clean:
	@if [ -d "$(KDIR)" ]; then $(MAKE) -C $(KDIR) M=$(CURDIR) clean; fi
	$(MAKE) -C tools clean
	rm -rf build

# nswapd(8) and nswap2l(8) are made from the programs' --help
man:
	$(MAKE) -C tools/nswapd nswapd
	man/make-man --out build/man

# The packages are built in a copy of the tree (the files git knows, as
# they are now; without git, everything but build/), so that the build
# leaves the tree as it was; lintian must find no error.
deb:
	rm -rf build/deb
	mkdir -p build/deb/src
	if git rev-parse --git-dir >/dev/null 2>&1; then \
		git ls-files -z | xargs -0 cp --parents -t build/deb/src; \
	else \
		tar --exclude=./build -cf - . | tar -xf - -C build/deb/src; \
	fi
	cd build/deb/src && dpkg-buildpackage -us -uc -b
	lintian --fail-on error build/deb/*.changes

help:
	@sed -n '3,21s/^# \{0,1\}//p' Makefile
