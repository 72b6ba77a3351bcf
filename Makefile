# Makefile -- builds ebpfprof: BPF object -> skeleton -> userspace binary, plus tests and benchmarks
OUTPUT := build
# the target architecture: the host's by default; ARCH=arm64 on an x86-64 host cross-builds into
# build/arm64 with Debian's cross toolchain and :arm64 libraries (make deps-arm64)
HOST_ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
ARCH ?= $(HOST_ARCH)
ifneq ($(ARCH),$(HOST_ARCH))
OUTPUT := build/$(ARCH)
CROSS_COMPILE ?= $(if $(filter arm64,$(ARCH)),aarch64-linux-gnu-,$(if $(filter x86,$(ARCH)),x86_64-linux-gnu-))
CC := $(CROSS_COMPILE)gcc
CXX := $(CROSS_COMPILE)g++
# the Go fixtures too (Go cross-builds itself; cgo takes CC)
export GOARCH := $(if $(filter x86,$(ARCH)),amd64,$(ARCH))
endif
# make test SANITIZE=1: ASan + UBSan objects in a folder of their own, never mixed with the normal build
ifeq ($(SANITIZE),1)
OUTPUT := $(OUTPUT)/san
endif
# TEST_RUNTIMES=1: the test-only runtimes (runtimes/null) built in too, in a folder of their own
ifeq ($(TEST_RUNTIMES),1)
OUTPUT := $(OUTPUT)/test-rt
endif
CLANG ?= clang
BPFTOOL ?= bpftool
CC ?= cc
VMLINUX_DIR := vmlinux/$(ARCH)

CFLAGS ?= -g -O2
CFLAGS += -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -std=gnu11 \
	-D_GNU_SOURCE -Iinclude -Iuserspace -I$(OUTPUT)
# libhttp-parser-dev is one architecture's at a time (not Multi-Arch: same): a cross build links the
# target's runtime library by its soname, and the host keeps its own dev package (and the header)
HTTP_PARSER_LIB := $(if $(CROSS_COMPILE),-l:libhttp_parser.so.2.9,-lhttp_parser)
LDLIBS := -lbpf -ldw -lelf -lz -llzma -liberty $(HTTP_PARSER_LIB) -lmicrohttpd -ljson-c -lpthread -lm
BPF_CFLAGS := -g -O2 -Wall -target bpf -D__TARGET_ARCH_$(ARCH) -Iinclude -I$(VMLINUX_DIR)

ifeq ($(TEST_RUNTIMES),1)
CFLAGS += -DEBPFPROF_TEST_RUNTIMES
BPF_CFLAGS += -DEBPFPROF_TEST_RUNTIMES
endif

ifeq ($(SANITIZE),1)
CFLAGS += -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
LDFLAGS += -fsanitize=address,undefined
endif

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/%.bpf.o,$(BPF_SRCS))
# the steps builds of the programs that walk (bpf/walk.bpf.h): their bytes ride in the binary beside
# the loop builds'
STEPS_OBJS := $(OUTPUT)/profile_steps.bpf.o $(OUTPUT)/offcpu_steps.bpf.o
BPF_OBJS += $(STEPS_OBJS)
SKELS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/%.skel.h,$(BPF_SRCS)) $(STEPS_OBJS:.bpf.o=.skel.h)

# every folder under userspace/ is a stage of the data path; objects keep their folder under build/
TEST_ONLY_RUNTIMES := userspace/runtimes/null
USER_SRCS := $(shell find userspace -name '*.c' $(if $(filter 1,$(TEST_RUNTIMES)),,\
	$(foreach d,$(TEST_ONLY_RUNTIMES),-not -path '$(d)/*')))
USER_HDRS := $(shell find userspace -name '*.h')
USER_OBJS := $(patsubst userspace/%.c,$(OUTPUT)/userspace/%.o,$(USER_SRCS))
LIB_OBJS := $(filter-out $(OUTPUT)/userspace/main.o,$(USER_OBJS))

# unit tests mirror the folders: tests/unit/<stage>/test_x.c -> build/tests/unit/<stage>/test_x, so two
# stages may each have a test of the same name
UNIT_SRCS := $(shell find tests/unit -name 'test_*.c')
UNIT_BINS := $(patsubst %.c,$(OUTPUT)/%,$(UNIT_SRCS))

# Debian packages, by target; each deps target installs the missing ones (apt-get update only then).
# make, make run: building and running ebpfprof (the top list is our own convert --format top)
DEPS_BUILD := clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev pkg-config make gcc libc6-dev binutils \
	libcurl4-openssl-dev libhttp-parser-dev libmicrohttpd-dev libjson-c-dev libdw-dev liblzma-dev \
	libdebuginfod-dev libiberty-dev xxd
# the fixtures (tests/fixtures/*.mk): C++ and Go programs, the collector built against Debian's pprof
# package, dwz and xz for debug-info layouts, jemalloc linked into a program; go tool pprof reads every
# profile back
DEPS_FIXTURES := g++ golang-go golang-github-google-pprof-dev dwz xz-utils python3 libjemalloc-dev
# make test, make check: what the suites run beside the fixtures. python3-yaml: deploy/ manifests;
# protoc and python3-protobuf decode the OTLP export; chromium renders the flame graph; docker.io and
# debootstrap: the container suite; debuginfod, nodejs (perf maps; its npm fetches the Node
# binaries test_node profiles into /var/cache/ebpfprof/node) and a JDK are profiled or served;
# libclang-rt-dev holds libFuzzer and the sanitizers' runtimes (clang only recommends it);
# util-linux: setpriv, unshare; ruby, php-cli, php-fpm, PHP as Apache's module (apache2-bin,
# libapache2-mod-php) and perl are profiled (Debian 13's through
# tests/lib/trixie_root.sh, Ruby 3.4 through tests/lib/ruby34_root.sh); jemalloc and tcmalloc are
# preloaded into the allocation fixture
DEPS_TEST := $(DEPS_FIXTURES) python3-yaml protobuf-compiler python3-protobuf chromium docker.io \
	debootstrap debuginfod nodejs openjdk-17-jdk-headless libclang-rt-dev util-linux curl \
	ruby php-cli php-fpm apache2-bin libapache2-mod-php perl libjemalloc2 libtcmalloc-minimal4
# make vmtest: Debian kernels booted under qemu with a busybox initramfs (tests/vm); the guests' Java
# runs a JRE jlink makes from OpenJDK 17, and libc's symbols name the thread entries their stacks start in
DEPS_VMTEST := $(DEPS_FIXTURES) $(if $(filter arm64,$(ARCH)),qemu-system-arm,qemu-system-x86) busybox-static \
	cpio bc openjdk-17-jdk-headless libc6-dbg
# make bench: perf and bpftrace side by side; the flame, Java and Node benches; eu-addr2line
DEPS_BENCH := $(DEPS_FIXTURES) bpftrace linux-perf chromium nodejs openjdk-17-jdk-headless elfutils curl
# make deps-arm64: the cross toolchain and the :arm64 libraries of DEPS_BUILD (dpkg learns of arm64
# first), for make ARCH=arm64 on an x86-64 host; qemu-system-arm boots the arm64 kernels (vmtest)
DEPS_ARM64 := gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-system-arm \
	$(addsuffix :arm64,libbpf-dev libelf-dev zlib1g-dev libcurl4-openssl-dev libhttp-parser2.9 \
	libmicrohttpd-dev libjson-c-dev libdw-dev liblzma-dev libdebuginfod-dev libiberty-dev)
# make image: Docker, and debootstrap for the images' offline Debian bases (deploy/image.sh); qemu-user
# runs an arm64 base's setup and its check (ARCH=arm64)
DEPS_IMAGE := docker.io debootstrap $(if $(CROSS_COMPILE),qemu-user-static)

# apt_missing PACKAGES: installs those not installed yet; a no-op when all are
define apt_missing
	@missing=$$(for p in $(sort $(1)); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; \
	done); \
	if [ -n "$$missing" ]; then \
		echo "installing:" $$missing; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi
endef

.PHONY: all deps deps-test deps-vmtest deps-bench deps-image deps-arm64 run test check bench clean vmlinux fixtures \
	fuzz image vmtest vmtest-build test-runtimes
.DELETE_ON_ERROR:
.SECONDARY: $(BPF_OBJS) $(SKELS)

all: $(OUTPUT)/ebpfprof

deps:
	$(call apt_missing,$(DEPS_BUILD))
deps-test:
	$(call apt_missing,$(DEPS_BUILD) $(DEPS_TEST))
deps-vmtest:
	$(call apt_missing,$(DEPS_BUILD) $(DEPS_VMTEST))
deps-bench:
	$(call apt_missing,$(DEPS_BUILD) $(DEPS_BENCH))
deps-image:
	$(call apt_missing,$(DEPS_IMAGE))
deps-arm64:
	@dpkg --print-foreign-architectures | grep -qx arm64 || dpkg --add-architecture arm64
	$(call apt_missing,$(DEPS_BUILD) $(DEPS_VMTEST) $(DEPS_ARM64))

$(OUTPUT) $(OUTPUT)/userspace:
	$(Q)mkdir -p $@

$(OUTPUT)/%.bpf.o: bpf/%.bpf.c $(wildcard include/*.h bpf/*.h) $(VMLINUX_DIR)/vmlinux.h | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp && rm -f $@.tmp

$(OUTPUT)/%_steps.bpf.o: bpf/%.bpf.c $(wildcard include/*.h bpf/*.h) $(VMLINUX_DIR)/vmlinux.h | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -DEBPFPROF_STEPS_WALK -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp && rm -f $@.tmp

$(OUTPUT)/%.skel.h: $(OUTPUT)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

$(OUTPUT)/userspace/%.o: userspace/%.c $(USER_HDRS) $(wildcard include/*.h) $(SKELS) | $(OUTPUT)/userspace
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

# the flame graph page (userspace/profile/flame.html) goes into the binary as a byte array
$(OUTPUT)/flame_html.h: userspace/profile/flame.html | $(OUTPUT)
	$(call msg,XXD,$@)
	$(Q)xxd -i -n flame_html $< > $@.tmp && mv $@.tmp $@
$(OUTPUT)/userspace/profile/flame.o: $(OUTPUT)/flame_html.h

$(OUTPUT)/ebpfprof: $(USER_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(OUTPUT)/tests/unit/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(LIB_OBJS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -Itests/unit -DFIXTURES_DIR='"$(FIXTURES_DIR)/"' $(LDFLAGS) $< $(LIB_OBJS) \
		$(LDLIBS) -o $@

# Fixture programs: each tests/fixtures/*.mk appends its products to FIXTURES.
FIXTURES_DIR := $(OUTPUT)/fixtures
FIXTURES :=
include $(wildcard tests/fixtures/*.mk)

$(FIXTURES_DIR):
	$(Q)mkdir -p $@

fixtures: $(FIXTURES)

# Fuzz targets (make fuzz): tests/fuzz/*.mk
include $(wildcard tests/fuzz/*.mk)

run: deps all
	$(OUTPUT)/ebpfprof --duration 10 --output ebpfprof.pb.gz
	@echo "top functions (ebpfprof convert ebpfprof.pb.gz --format top):"
	@$(OUTPUT)/ebpfprof convert ebpfprof.pb.gz --format top --top 25

test: deps-test all $(UNIT_BINS) fixtures test-runtimes
	@BUILD=$(abspath $(OUTPUT)) EBPFPROF=$(abspath $(OUTPUT))/ebpfprof bash tests/run.sh

# the quick edit loop: every unit test, the fuzz smoke, and one short end-to-end run per stage
# (a one-shot CPU profile read back by go tool pprof, off-CPU mode, the agent's pull endpoint on
# loopback, a Python process named), picked from the suites by case (tests/run.sh)
CHECK_TESTS := unit fuzz oneshot/cpu_split wall/offcpu_chain agent/pull python/static-alternate null/split
CHECK_FUZZ_SECONDS ?= 2
check: deps-test all $(UNIT_BINS) fixtures test-runtimes
	@TESTS="$(CHECK_TESTS)" FUZZ_SMOKE_SECONDS=$(CHECK_FUZZ_SECONDS) BUILD=$(abspath $(OUTPUT)) \
		EBPFPROF=$(abspath $(OUTPUT))/ebpfprof bash tests/run.sh

# ebpfprof with the test-only runtimes, for tests/integration/test_null.sh: $(OUTPUT)/test-rt/ebpfprof
test-runtimes:
	$(Q)$(MAKE) --no-print-directory TEST_RUNTIMES=1 all

# the compatibility suite in Debian's kernels under qemu: KERNELS="5.10 6.1 6.12 6.12-bpo host" (tests/vm/vmtest.sh);
# ARCH=arm64 on an x86-64 host: Debian's arm64 kernels (6.1 6.12), the fixtures the guest runs cross-built
VM_FIXTURES := $(addprefix $(FIXTURES_DIR)/,cpu_split syscall_heavy fgprof collector short_lived \
	unwind/unwind_deep unwind/unwind_cxx unwind/unwind_gosha unwind/unwind_signal)
# vmtest-build: what the guests run, built (CI builds the arm64 one while other tests run)
ifeq ($(ARCH),$(HOST_ARCH))
vmtest-build: deps-vmtest all fixtures
else
vmtest-build: deps-arm64 all $(VM_FIXTURES)
endif
vmtest-build: $(OUTPUT)/tests/unit/unwind/test_user_regs $(OUTPUT)/tests/unit/collect/test_offcpu
vmtest: vmtest-build
	@ARCH=$(ARCH) BUILD=$(abspath $(OUTPUT)) bash tests/vm/vmtest.sh

# the agent image ebpfprof:latest, built with Docker offline (deploy/image.sh); ARCH=arm64 on an
# x86-64 host: ebpfprof:arm64, the cross build on an arm64 base, checked under qemu-user
image: deps-image $(if $(CROSS_COMPILE),deps-arm64)
	@ARCH=$(ARCH) bash deploy/image.sh

bench: deps-bench all fixtures
	@bash tests/bench/run.sh
	@bash tests/bench/symbols.sh
	@bash tests/bench/offcpu.sh
	@bash tests/bench/agent.sh
	@bash tests/bench/unwind.sh
	@bash tests/bench/completeness.sh
	@bash tests/bench/churn.sh
	@bash tests/bench/exec_idle.sh
	@[ -z "$(BENCH_BEFORE)" ] || bash tests/bench/ab.sh $(BENCH_BEFORE) $(abspath $(OUTPUT))/ebpfprof
	@bash tests/bench/flame.sh
	@bash tests/bench/python.sh
	@bash tests/bench/java.sh
	@bash tests/bench/node.sh
	@bash tests/bench/php.sh
	@bash tests/bench/ruby.sh
	@bash tests/bench/labels.sh
	@bash tests/bench/perl.sh
	@bash tests/bench/compare.sh

vmlinux:
	mkdir -p $(VMLINUX_DIR)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $(VMLINUX_DIR)/vmlinux.h

# arm64's is generated, not kept in git: the running kernel's BTF on an arm64 host, else that of
# Debian 12's arm64 kernel (vmlinux/gen.sh)
vmlinux/arm64/vmlinux.h: vmlinux/gen.sh vmlinux/btf_of_image.py
	$(call msg,GEN,$@)
	$(Q)BPFTOOL=$(BPFTOOL) bash vmlinux/gen.sh arm64 $@

clean:
	rm -rf $(OUTPUT)
