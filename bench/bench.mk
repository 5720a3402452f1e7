# Builds for `make bench` (bench/bench.py runs this with BUILD=...).
# Every output goes under $(BUILD)/bench/; nothing here is part of `make`.

BUILD ?= build
B     ?= $(BUILD)/bench
CC_PLAIN := clang-22
FICC  := $(BUILD)/fineibt-cc
OPT   := -O2 -Ibench
# every variant links with lld, as fineibt-cc does, so layouts compare
LDFLAGS_PLAIN := --ld-path=$(shell command -v ld.lld-22)
NFUNCS ?= 4096

# mode name -> caller and preamble forms of bench/floor.S; each mode also
# as MODE-v618, the same forms in the v6.18 sequence set (FLOOR_SET)
FLOOR_MODES4 := kcfi off fineibt paranoid bhi paranoid-bhi
FLOOR_MODES := $(FLOOR_MODES4) $(addsuffix -v618,$(FLOOR_MODES4))
floor_base = $(patsubst %-v618,%,$*)
floor_set = $(if $(filter %-v618,$*),v618,v4)
FLOOR_FLAGS = -DFLOOR_CALLER=$(caller_$(floor_base)) \
	-DFLOOR_PREAMBLE=$(pre_$(floor_base)) -DFLOOR_SET=$(floor_set)
caller_kcfi := kcfi
pre_kcfi := kcfi
caller_off := off
pre_off := kcfi
caller_fineibt := fineibt
pre_fineibt := fineibt
caller_paranoid := paranoid
pre_paranoid := fineibt
caller_bhi := fineibt
pre_bhi := bhi
caller_paranoid-bhi := paranoid
pre_paranoid-bhi := bhi

CALLS_SRC := bench/calls.c bench/calls_kernel.c $(B)/callees.c
# changes (and so rebuilds everything) when NFUNCS does
NF_STAMP  := $(B)/.nfuncs-$(NFUNCS)
CALLS_DEP := $(CALLS_SRC) bench/calls.h bench/bench.mk $(NF_STAMP)

.PHONY: calls
calls: $(B)/calls-nocfi $(B)/calls-cc $(B)/calls-cc-nort \
       $(patsubst %,$(B)/calls-floor-%,$(FLOOR_MODES)) \
       $(B)/calls-lto $(B)/calls-cfi-icall

$(NF_STAMP):
	@mkdir -p $(@D)
	@rm -f $(B)/.nfuncs-*
	@touch $@

$(B)/callees.c: bench/gen_callees.sh bench/bench.mk $(NF_STAMP)
	@mkdir -p $(@D)
	bash bench/gen_callees.sh $(NFUNCS) >$@.tmp && mv $@.tmp $@

# No CFI at all: the same C, plain clang-22.
$(B)/calls-nocfi: $(CALLS_DEP)
	$(CC_PLAIN) $(OPT) $(LDFLAGS_PLAIN) -DNFUNCS=$(NFUNCS) -o $@ $(CALLS_SRC)

# Peers (issue 13): the same C with plain LTO, and with clang's own CFI
# for indirect calls (LTO, hidden visibility, generalized pointers as
# fineibt-cc hashes them, trap mode: no runtime library).
$(B)/calls-lto: $(CALLS_DEP)
	$(CC_PLAIN) $(OPT) -flto $(LDFLAGS_PLAIN) -DNFUNCS=$(NFUNCS) -o $@ $(CALLS_SRC)

$(B)/calls-cfi-icall: $(CALLS_DEP)
	$(CC_PLAIN) $(OPT) -flto -fvisibility=hidden -fsanitize=cfi-icall \
		-fsanitize-cfi-icall-generalize-pointers -fsanitize-trap=cfi-icall \
		$(LDFLAGS_PLAIN) -DNFUNCS=$(NFUNCS) -o $@ $(CALLS_SRC)

# The product: fineibt-cc; the runtime patches it per FINEIBT_CFI. It also
# carries every floor under its own prefix (calls -f MODE): the runtime
# leaves them alone (no .kcfi_traps entry, no patchable entry, no thunk).
FLOOR_OBJS := $(patsubst %,$(B)/floor-%.o,$(FLOOR_MODES))
$(B)/calls-cc: $(CALLS_DEP) $(FLOOR_OBJS) $(FICC) $(BUILD)/libfineibt.so $(BUILD)/libfineibt_crt.a
	$(FICC) $(OPT) -DNFUNCS=$(NFUNCS) -DCALLS_WITH_FLOORS -o $@ $(CALLS_SRC) $(FLOOR_OBJS)

$(B)/floor-%.o: bench/floor.S bench/calls.h bench/bench.mk $(NF_STAMP)
	$(CC_PLAIN) $(OPT) -DNFUNCS=$(NFUNCS) $(FLOOR_FLAGS) \
		-DFLOOR_PREFIX=floor_$(subst -,_,$*)_ -c -o $@ $<

# The same objects without the runtime: kCFI exactly as compiled
# (calls through the retpoline-style thunk, which crt/thunks.S provides).
$(B)/calls-cc-nort: $(CALLS_DEP) $(FICC) crt/thunks.S
	$(FICC) --fineibt-no-runtime $(OPT) -DNFUNCS=$(NFUNCS) -o $@ $(CALLS_SRC) crt/thunks.S

# The floor: the same loops with the sequences written by hand.
$(B)/calls-floor-%: bench/calls.c bench/calls.h bench/floor.S bench/bench.mk $(NF_STAMP)
	$(CC_PLAIN) $(OPT) $(LDFLAGS_PLAIN) -DNFUNCS=$(NFUNCS) $(FLOOR_FLAGS) \
		-o $@ bench/calls.c bench/floor.S

# ---- start-up: bench/gen_big.py's program (>= 100k functions, each
# address-taken with one call site), main from bench/startup_main.c.
STARTUP_N     ?= 100000
STARTUP_PARTS := 20
S := $(B)/startup
PART_IDS  := $(shell seq -f %02g 0 $$(($(STARTUP_PARTS) - 1)))
PART_OBJS := $(patsubst %,$(S)/part_%.o,$(PART_IDS))
START_OBJS := $(PART_OBJS) $(S)/main.o $(S)/startup_main.o

.PHONY: startup
startup: $(S)/big $(S)/big-nort

$(S)/.gen-$(STARTUP_N): bench/gen_big.py
	@mkdir -p $(@D)
	rm -f $(S)/part_*.c $(S)/.gen-*
	python3 bench/gen_big.py $(S) $(STARTUP_N) $(STARTUP_PARTS)
	touch $@

# All sources come from one gen_big.py run; kept (not intermediates).
GEN_SRC := $(patsubst %,$(S)/part_%.c,$(PART_IDS)) $(S)/main.c
.SECONDARY: $(GEN_SRC)
$(GEN_SRC): $(S)/.gen-$(STARTUP_N)
	@test -f $@ || { rm -f $<; echo "$@ missing: rm $< and run again" >&2; exit 1; }

# Objects need fineibt-cc to exist, not to be older: its flags rarely
# change while the runtime does all the time, and these take minutes.
# After a change of the compile flags: rm -r $(S).
$(S)/part_%.o: $(S)/part_%.c | $(FICC)
	$(FICC) -O1 -c $< -o $@

$(S)/main.o: $(S)/main.c | $(FICC)
	$(FICC) -O1 -Dmain=gen_big_main -c $< -o $@

$(S)/startup_main.o: bench/startup_main.c | $(FICC)
	@mkdir -p $(@D)
	$(FICC) -O2 -c $< -o $@

# With the runtime (libfineibt.so), patched per FINEIBT_CFI.
$(S)/big: $(START_OBJS) $(BUILD)/libfineibt.so $(BUILD)/libfineibt_crt.a
	$(FICC) -o $@ $(START_OBJS)

# The same objects, no runtime at all: the baseline of the start-up cost.
$(S)/big-nort: $(START_OBJS) crt/thunks.S
	$(FICC) --fineibt-no-runtime -o $@ $(START_OBJS) crt/thunks.S

# The passes alone on the same file (bench/patch_speed.c, from the patch
# work): fi_patch_image timed without reading the file or starting up.
$(B)/patch_speed: bench/patch_speed.c $(BUILD)/libfineibt.a
	$(CC_PLAIN) -O2 -Iinclude $(addprefix -I,$(patsubst %/,%,$(wildcard src/*/))) -o $@ $< $(BUILD)/libfineibt.a
startup: $(B)/patch_speed
