# fuzz.mk -- libFuzzer targets for the parsers of untrusted input: make fuzz (FUZZ_SECONDS each), make fuzz-smoke
#
# Every target links its modules compiled again with the fuzzing sanitizers
# into $(FUZZ_DIR)/obj, never the objects of the normal build. Seed corpora
# come from this machine's real files (tests/fuzz/seeds.sh) plus the crafted
# text seeds in tests/fuzz/seeds/TARGET/; inputs that once crashed a target
# live in tests/fuzz/regressions/TARGET/ and run on every smoke run.
FUZZ_DIR := $(OUTPUT)/fuzz
FUZZ_CC ?= $(CLANG)
FUZZ_SECONDS ?= 60
FUZZ_SMOKE_SECONDS ?= 5
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS := -g -O1 $(FUZZ_SAN) -Wall -Wextra -Wno-unused-parameter \
	-Wno-missing-field-initializers -std=gnu11 -D_GNU_SOURCE -Iinclude -Iuserspace -Itests/fuzz

# target -> the userspace modules it links
FUZZ_MODS_kallsyms := kallsyms procfs
FUZZ_MODS_proc_maps := proc_maps procfs
FUZZ_MODS_cgroup := cgroup procfs
FUZZ_MODS_cpus := cpus
FUZZ_MODS_elf_syms := elf_syms array
FUZZ_MODS_elf_notes := elf_syms array
FUZZ_MODS_spool := spool fdio array
FUZZ_MODS_push_url := push_url pbuf array
FUZZ_MODS_prom := prom
FUZZ_MODS_config := config config_agent log procfs
FUZZ_MODS_pprof := pprof pprof_write folded top pbuf hashmap array
FUZZ_MODS_hashmap := hashmap
FUZZ_MODS_perfmap := perfmap procfs array
FUZZ_MODS_demangle := demangle
FUZZ_MODS_ehframe := ehframe ehframe_cfa unwind_table array
FUZZ_MODS_gopclntab := gopclntab gopclntab_elf gopclntab_inline array
FUZZ_MODS_http_request := http_request

FUZZ_ALL := kallsyms proc_maps cgroup cpus elf_syms elf_notes spool push_url prom config pprof hashmap \
	perfmap demangle ehframe gopclntab http_request
# which ones make fuzz / fuzz-smoke run, e.g. make fuzz FUZZ_TARGETS="cgroup kallsyms"
FUZZ_TARGETS ?= $(FUZZ_ALL)
FUZZ_BINS := $(patsubst %,$(FUZZ_DIR)/fuzz_%,$(FUZZ_ALL))
FUZZ_SEEDS := $(FUZZ_DIR)/seeds/.stamp

.PHONY: fuzz fuzz-smoke fuzz-build

$(FUZZ_DIR)/obj:
	$(Q)mkdir -p $@

# coverage instrumentation without libFuzzer's main: only the targets link that
$(FUZZ_DIR)/obj/%.o: userspace/%.c $(wildcard userspace/*.h include/*.h) tests/fuzz/fuzz.mk \
		| $(FUZZ_DIR)/obj
	$(call msg,FUZZ-CC,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

define fuzz_target
$(FUZZ_DIR)/fuzz_$(1): tests/fuzz/fuzz_$(1).c tests/fuzz/fuzz.h \
		$(patsubst %,$(FUZZ_DIR)/obj/%.o,$(FUZZ_MODS_$(1)))
	$$(call msg,FUZZ-LD,$$@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $$< $$(filter %.o,$$^) $(LDLIBS) -o $$@
endef
$(foreach t,$(FUZZ_ALL),$(eval $(call fuzz_target,$(t))))

# writes real spool files through spool.c itself; a plain build, it only makes seeds
$(FUZZ_DIR)/seed_spool: tests/fuzz/seed_spool.c userspace/spool.c userspace/fdio.c userspace/array.c \
		userspace/spool.h | $(FUZZ_DIR)/obj
	$(call msg,CC,$@)
	$(Q)$(CC) -g -O1 -std=gnu11 -D_GNU_SOURCE -Iinclude -Iuserspace $(filter %.c,$^) -lz -o $@

# the synthetic Go binaries of test_gopclntab, one per table format
$(FUZZ_DIR)/seed_gopclntab: tests/fuzz/seed_gopclntab.c tests/unit/gopcln_synth.h | $(FUZZ_DIR)/obj
	$(call msg,CC,$@)
	$(Q)$(CC) -g -O1 -std=gnu11 -D_GNU_SOURCE $< -o $@

$(FUZZ_SEEDS): tests/fuzz/seeds.sh tests/fuzz/config.args $(FUZZ_DIR)/seed_spool \
		$(FUZZ_DIR)/seed_gopclntab
	$(call msg,SEEDS,$(FUZZ_DIR)/seeds)
	$(Q)bash tests/fuzz/seeds.sh $(FUZZ_DIR)/seeds $(FUZZ_DIR)/seed_spool $(FIXTURES_DIR) \
		$(FUZZ_DIR)/seed_gopclntab
	$(Q)touch $@

fuzz-build: $(FUZZ_BINS) $(FUZZ_SEEDS)

# the persistent corpus in $(FUZZ_DIR)/corpus grows run after run
fuzz: fuzz-build
	@bash tests/fuzz/run.sh -c -s $(FUZZ_SECONDS) $(FUZZ_TARGETS)

fuzz-smoke: fuzz-build
	@bash tests/fuzz/run.sh -r -s $(FUZZ_SMOKE_SECONDS) $(FUZZ_TARGETS)
