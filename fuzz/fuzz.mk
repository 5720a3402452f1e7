# libFuzzer harnesses (fuzz/fuzz_*.c), included by the Makefile.
#
#   make fuzz [FUZZ_SECONDS=60] [FUZZ=elf] [FUZZ_SEED=n]  build every harness (or those
#       whose name contains FUZZ), seed corpora, run each for FUZZ_SECONDS
#       and print execs and coverage (fuzz/run.sh; docs/robustness.md).
#
# The library is rebuilt with -fsanitize=fuzzer-no-link,address,undefined
# into $(FUZZ_BUILD)/obj, separate from the normal build.
FUZZ_BUILD   ?= $(BUILD)/fuzz
FUZZ_SECONDS ?= 60
FUZZ_CFLAGS  := -std=gnu11 $(WARN) -O1 -g -Iinclude $(SRC_INC) -Itools -Ifuzz \
		-fno-sanitize=kcfi -D_GNU_SOURCE -fno-omit-frame-pointer \
		-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
FUZZ_SRC     := $(sort $(wildcard fuzz/fuzz_*.c))
FUZZ_BIN     := $(patsubst fuzz/%.c,$(FUZZ_BUILD)/%,$(FUZZ_SRC))
# Not the dlsym interposers: src/interpose/dlsym_so.c belongs in the shared
# runtime only (the sanitizers' own dlsym calls would come to it), and
# dlsym_a.c is reached through --wrap only. The static variant's table
# (src/interpose/variant_a.c), not the shared one's, which would pull in
# the shared runtime's early start and dlsym binding.
FUZZ_LIBOBJ  := $(patsubst src/%,$(FUZZ_BUILD)/obj/%.o,$(filter-out src/interpose/dlsym_so.c src/interpose/dlsym_a.c src/interpose/variant_so.c,$(LIB_SRC)) $(OFFLINE_SRC))

$(FUZZ_BUILD)/obj/%.c.o: src/%.c $(HDRS) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(FUZZ_CFLAGS) -fPIC -c $< -o $@

$(FUZZ_BUILD)/obj/%.S.o: src/%.S | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(FUZZ_CFLAGS) -c $< -o $@

# fuzz.mk too: a change of the object list must drop stale members.
$(FUZZ_BUILD)/libfineibt-fuzz.a: $(FUZZ_LIBOBJ) fuzz/fuzz.mk
	@rm -f $@
	ar rcs $@ $(filter %.o,$^)

$(FUZZ_BUILD)/obj/cmd_%.o: tools/cmd_%.c $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(FUZZ_CFLAGS) -c $< -o $@

$(FUZZ_BUILD)/obj/cli.o: tools/cli.c $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(FUZZ_CFLAGS) -c $< -o $@

# fuzz_inspect runs the CLI's own cmd_inspect() (its --diff/--pid part and
# its hardening audit too): every tools/cmd_inspect*.c, and tools/cli.c
# (the parser and the messages).
$(FUZZ_BUILD)/fuzz_inspect: $(patsubst tools/%.c,$(FUZZ_BUILD)/obj/%.o,$(wildcard tools/cmd_inspect*.c) tools/cli.c)
$(FUZZ_BUILD)/fuzz_%: fuzz/fuzz_%.c fuzz/fuzz.h $(HDRS) $(FUZZ_BUILD)/libfineibt-fuzz.a
	$(CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< \
		$(filter %.o,$^) $(FUZZ_BUILD)/libfineibt-fuzz.a -ldl -lpthread

.PHONY: fuzz fuzz-build
fuzz-build: $(FUZZ_BIN)
fuzz: fuzz-build all
	@BUILD=$(BUILD) FUZZ_BUILD=$(FUZZ_BUILD) FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_SEED=$(FUZZ_SEED) \
		bash fuzz/run.sh $(FUZZ)
