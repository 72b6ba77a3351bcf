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
	-Wno-missing-field-initializers -std=gnu11 -D_GNU_SOURCE -Iinclude -Iuserspace -Itests/fuzz -I$(OUTPUT)

# target (named after the module it fuzzes) -> the userspace modules it links, by folder
FUZZ_MODS_kallsyms := symbolize/kallsyms lib/hashmap lib/array lib/fdio
FUZZ_MODS_proc_maps := symbolize/proc_maps symbolize/procfs
FUZZ_MODS_cgroup := agent/cgroup symbolize/procfs
FUZZ_MODS_cpus := collect/cpus
FUZZ_MODS_elf_syms := symbolize/elf_syms lib/array lib/hashmap
FUZZ_MODS_elf_notes := symbolize/elf_syms lib/array lib/hashmap
FUZZ_MODS_spool := deliver/spool lib/fdio lib/array
FUZZ_MODS_push_url := deliver/push_url profile/pbuf lib/array lib/utf8
FUZZ_MODS_prom := deliver/prom lib/stats
FUZZ_MODS_config := cli/config cli/config_agent cli/config_convert lib/log symbolize/procfs
FUZZ_MODS_pprof := profile/pprof profile/pprof_write profile/folded profile/top profile/pbuf lib/hashmap lib/array \
	lib/utf8
FUZZ_MODS_pprof_read := profile/pprof_read profile/pprof profile/pprof_write profile/folded profile/top \
	profile/flame profile/pbuf lib/pbread lib/hashmap lib/array lib/utf8
FUZZ_MODS_utf8 := lib/utf8
FUZZ_MODS_hashmap := lib/hashmap
FUZZ_MODS_perfmap := symbolize/perfmap symbolize/procfs lib/array lib/proc_image lib/hashmap
FUZZ_MODS_demangle := symbolize/demangle
FUZZ_MODS_ehframe := unwind/ehframe/ehframe unwind/ehframe/ehframe_cfa unwind/unwind_table lib/array
FUZZ_MODS_gopclntab := symbolize/go/gopclntab symbolize/go/gopclntab_elf symbolize/go/gopclntab_inline lib/array \
	lib/hashmap lib/log lib/sigbus
FUZZ_MODS_http_request := deliver/http_request
FUZZ_MODS_http_post := deliver/http_post
FUZZ_MODS_docker_meta := agent/docker_meta lib/fdio lib/utf8
FUZZ_MODS_python := runtimes/python/python_lines runtimes/python/python_layout lib/utf8
FUZZ_MODS_java := runtimes/java/java_vmstructs runtimes/java/java_layout runtimes/java/java_stream lib/array
FUZZ_MODS_proc_stat := lib/proc_image lib/hashmap
FUZZ_MODS_v8 := runtimes/v8/v8_parse lib/utf8
FUZZ_MODS_goheap := collect/goheap/goheap_walk collect/goheap/goheap_parse lib/hashmap lib/array
FUZZ_MODS_php := runtimes/php/php_parse lib/utf8
FUZZ_MODS_ruby := runtimes/ruby/ruby_parse runtimes/ruby/ruby_code
FUZZ_MODS_perl := runtimes/perl/perl_names
FUZZ_MODS_go_layout := runtimes/labels/go_layout
FUZZ_MODS_labels_elf := runtimes/labels/labels_elf runtimes/labels/go_layout runtimes/static_tls runtimes/thread_local \
	symbolize/elf_find symbolize/procfs lib/proc_mem \
	symbolize/elf_syms lib/array lib/hashmap
FUZZ_MODS_otel_ctx := runtimes/labels/otel_ctx lib/pbread lib/proc_mem
FUZZ_MODS_vdso := unwind/unwind_table_elf unwind/unwind_table_leaf unwind/unwind_table unwind/unwind_table_go \
	unwind/ehframe/ehframe unwind/ehframe/ehframe_cfa symbolize/elf_syms symbolize/go/gopclntab \
	symbolize/go/gopclntab_elf symbolize/go/gopclntab_inline lib/array lib/hashmap lib/log lib/sigbus

FUZZ_ALL := kallsyms proc_maps cgroup cpus elf_syms elf_notes spool push_url prom config pprof hashmap \
	perfmap demangle ehframe gopclntab http_request http_post utf8 python docker_meta pprof_read java \
	proc_stat v8 goheap php ruby go_layout labels_elf perl otel_ctx vdso
# which ones make fuzz / fuzz-smoke run, e.g. make fuzz FUZZ_TARGETS="cgroup kallsyms"
FUZZ_TARGETS ?= $(FUZZ_ALL)
FUZZ_BINS := $(patsubst %,$(FUZZ_DIR)/fuzz_%,$(FUZZ_ALL))
FUZZ_SEEDS := $(FUZZ_DIR)/seeds/.stamp

.PHONY: fuzz fuzz-smoke fuzz-build

$(FUZZ_DIR)/obj:
	$(Q)mkdir -p $@

# coverage instrumentation without libFuzzer's main: only the targets link that
$(FUZZ_DIR)/obj/%.o: userspace/%.c $(USER_HDRS) $(wildcard include/*.h) tests/fuzz/fuzz.mk \
		| $(FUZZ_DIR)/obj
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

define fuzz_target
$(FUZZ_DIR)/fuzz_$(1): tests/fuzz/fuzz_$(1).c tests/fuzz/fuzz.h \
		$(patsubst %,$(FUZZ_DIR)/obj/%.o,$(FUZZ_MODS_$(1)))
	$$(call msg,FUZZ-LD,$$@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $$< $$(filter %.o,$$^) $(LDLIBS) -o $$@
endef
$(foreach t,$(FUZZ_ALL),$(eval $(call fuzz_target,$(t))))

# writes real spool files through spool.c itself; a plain build, it only makes seeds
$(FUZZ_DIR)/seed_spool: tests/fuzz/seed_spool.c userspace/deliver/spool.c userspace/lib/fdio.c userspace/lib/array.c \
		userspace/deliver/spool.h | $(FUZZ_DIR)/obj
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

# the page flame.c embeds
$(FUZZ_DIR)/obj/profile/flame.o: $(OUTPUT)/flame_html.h

fuzz-build: $(FUZZ_BINS) $(FUZZ_SEEDS)

# the persistent corpus in $(FUZZ_DIR)/corpus grows run after run
fuzz: fuzz-build
	@bash tests/fuzz/run.sh -c -s $(FUZZ_SECONDS) $(FUZZ_TARGETS)

fuzz-smoke: fuzz-build
	@bash tests/fuzz/run.sh -r -s $(FUZZ_SMOKE_SECONDS) $(FUZZ_TARGETS)
