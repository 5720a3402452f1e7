# Builds for `make bench` (bench/bench.py runs this with BUILD=...).
# Every output goes under $(BUILD)/bench/; nothing here is part of `make`.

BUILD ?= build
B     := $(BUILD)/bench
CC_PLAIN := clang-22
FICC  := $(BUILD)/fineibt-cc
OPT   := -O2 -Ibench
# every variant links with lld, as fineibt-cc does, so layouts compare
LDFLAGS_PLAIN := --ld-path=$(shell command -v ld.lld-22)
NFUNCS ?= 16384

# mode name -> caller and preamble forms of bench/floor.S
FLOOR_MODES := kcfi off fineibt paranoid bhi paranoid-bhi
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
CALLS_DEP := $(CALLS_SRC) bench/calls.h bench/bench.mk

.PHONY: calls
calls: $(B)/calls-nocfi $(B)/calls-cc $(B)/calls-cc-nort \
       $(patsubst %,$(B)/calls-floor-%,$(FLOOR_MODES))

$(B)/callees.c: bench/gen_callees.sh bench/bench.mk
	@mkdir -p $(@D)
	bash bench/gen_callees.sh $(NFUNCS) >$@.tmp && mv $@.tmp $@

# No CFI at all: the same C, plain clang-22.
$(B)/calls-nocfi: $(CALLS_DEP)
	$(CC_PLAIN) $(OPT) $(LDFLAGS_PLAIN) -DNFUNCS=$(NFUNCS) -o $@ $(CALLS_SRC)

# The product: fineibt-cc; the runtime patches it per FINEIBT_CFI.
$(B)/calls-cc: $(CALLS_DEP) $(FICC) $(BUILD)/libfineibt.so $(BUILD)/libfineibt_crt.a
	$(FICC) $(OPT) -DNFUNCS=$(NFUNCS) -o $@ $(CALLS_SRC)

# The same objects without the runtime: kCFI exactly as compiled
# (calls through the retpoline-style thunk, which crt/thunks.S provides).
$(B)/calls-cc-nort: $(CALLS_DEP) $(FICC) crt/thunks.S
	$(FICC) --fineibt-no-runtime $(OPT) -DNFUNCS=$(NFUNCS) -o $@ $(CALLS_SRC) crt/thunks.S

# The floor: the same loops with the sequences written by hand.
$(B)/calls-floor-%: bench/calls.c bench/calls.h bench/floor.S bench/bench.mk
	$(CC_PLAIN) $(OPT) $(LDFLAGS_PLAIN) -DNFUNCS=$(NFUNCS) -DFLOOR_CALLER=$(caller_$*) \
		-DFLOOR_PREAMBLE=$(pre_$*) -o $@ bench/calls.c bench/floor.S
