# fineibt: GNU Make, no generator. `make` builds into build/, `make check` tests.
# Sources are found by wildcard: a new src/<layer>/*.c joins the library, a new
# tools/*.c joins the CLI, a new tests/unit/test_*.c or tests/e2e/*.sh is a test.

CC       := clang-22
SAN      ?=
# SAN=1 (ASan+UBSan) builds into its own directory unless BUILD is given.
ifneq ($(SAN),)
BUILD    ?= build-san
endif
BUILD    ?= build
VERSION  := $(shell sed -n 's/^\#define FINEIBT_VERSION "\(.*\)"/\1/p' include/fineibt.h)
SOVER    := 0

WARN     := -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers
CFLAGS   ?= -O2 -g
# src/ is one folder per layer (docs/architecture.md); headers are included
# by name, so every layer folder is on the include path.
SRC_DIRS := $(sort $(patsubst %/,%,$(dir $(wildcard src/*/*.[chS]))))
SRC_INC  := $(addprefix -I,$(SRC_DIRS))
ALL_CFLAGS := -std=gnu11 $(WARN) $(CFLAGS) -Iinclude $(SRC_INC) -fPIC \
	      -fvisibility=hidden -fno-sanitize=kcfi -D_GNU_SOURCE
ifneq ($(SAN),)
ALL_CFLAGS += -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
LDSAN      := -fsanitize=address,undefined
endif

# src/load/audit.c is an LD_AUDIT library of its own (libfineibt_audit.so).
AUDIT_SRC := src/load/audit.c
# Linked in the order of the file names, whatever their folder (the
# constructors have explicit priorities: src/rt/ctor.h).
# src/offline/ is code the CLI, fineibt-cc and the cache service run, never
# a process being protected (the file writer, the .fineibt encoder, the
# trusted-directory check, the cache filler): libfineibt_offline.a, linked
# into the CLI, fineibt-cc, the tests and the fuzzers, never into
# libfineibt (docs/architecture.md).
OFFLINE_SRC := $(sort $(wildcard src/offline/*.c))
OFFLINE_OBJ := $(patsubst src/%,$(BUILD)/obj/%.o,$(OFFLINE_SRC))
OFFLINE_LIB := $(BUILD)/libfineibt_offline.a
ALL_SRC  := $(filter-out $(AUDIT_SRC) $(OFFLINE_SRC),$(wildcard src/*/*.c) $(wildcard src/*/*.S))
LIB_SRC  := $(foreach n,$(sort $(notdir $(ALL_SRC))),$(filter %/$(n),$(ALL_SRC)))
LIB_OBJ  := $(patsubst src/%,$(BUILD)/obj/%.o,$(LIB_SRC))
TOOL_SRC := $(sort $(wildcard tools/*.c))
TOOL_OBJ := $(patsubst tools/%.c,$(BUILD)/obj/tools/%.o,$(TOOL_SRC))
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRC))
HDRS     := $(wildcard include/*.h src/*/*.h tests/unit/*.h tools/*.h)
# crt/: the small uninstrumented object every module built by fineibt-cc
# links statically (module hook, thunks, BHI stubs, veneers support).
CRT_SRC  := $(sort $(wildcard crt/*.c) $(wildcard crt/*.S))
CRT_OBJ  := $(patsubst crt/%,$(BUILD)/obj/crt/%.o,$(CRT_SRC))
# driver/: the compiler driver build/fineibt-cc.
DRV_SRC  := $(sort $(wildcard driver/*.c))
DRV_OBJ  := $(patsubst driver/%.c,$(BUILD)/obj/driver/%.o,$(DRV_SRC))

# Quiet by default ("  CC      src/x.c"); make V=1 prints every command.
ifeq ($(V),1)
Q   :=
say  = @:
else
Q   := @
say  = @printf '  %-7s %s\n' '$(1)' '$(2)';
endif

# scripts/deps.sh build: what `make` needs; deps.sh test: what `make check`
# needs too (quiet and quick when everything is installed).
DEPS_STAMP := $(BUILD)/.deps-ok
DEPS_TEST_STAMP := $(BUILD)/.deps-test-ok
# The library's object list, rewritten only when it changes: a source
# removed from src/ must leave the libraries too (a prerequisite that is
# gone triggers no relink by itself).
# When it changes, the objects of sources moved or removed from src/ go
# too: tests/e2e/layers.sh reads every object under $(BUILD)/obj/.
LIB_LIST := $(BUILD)/.lib-objs
$(shell mkdir -p $(BUILD) && { echo '$(LIB_OBJ)' | cmp -s - $(LIB_LIST) || { \
	echo '$(LIB_OBJ)' > $(LIB_LIST); \
	for o in $(BUILD)/obj/*/*.[cS].o; do \
		[ "$${o#$(BUILD)/obj/crt/}" = "$$o" ] || continue; \
		s=$${o#$(BUILD)/obj/}; [ -e "src/$${s%.o}" ] || rm -f "$$o"; \
	done; }; })

.PHONY: all check check-real clean demo deps
all: $(BUILD)/libfineibt.a $(BUILD)/libfineibt.so $(BUILD)/fineibt-link/libfineibt.so $(OFFLINE_LIB) $(BUILD)/libfineibt_audit.so $(BUILD)/fineibt \
     $(if $(CRT_SRC),$(BUILD)/libfineibt_crt.a) $(if $(DRV_SRC),$(BUILD)/fineibt-cc $(BUILD)/fineibt-c++ $(BUILD)/fineibt-ld) \
     $(if $(SAN),,$(BUILD)/demo/fi-attack)

$(DEPS_STAMP): scripts/deps.sh
	@bash scripts/deps.sh build
	@mkdir -p $(@D) && touch $@
$(DEPS_TEST_STAMP): scripts/deps.sh $(DEPS_STAMP)
	@bash scripts/deps.sh test
	@mkdir -p $(@D) && touch $@
deps: $(DEPS_TEST_STAMP)

# One section per function and object, so that linking libfineibt.so with
# --gc-sections leaves out what no process reaches: the whole-file ELF
# reader and the CLI's cfi= parser, used by the CLI and driver only.
# DWARF 4 for the library's own debug info: valgrind 3.19 (Debian 12)
# gives up on clang-22's DWARF 5 range lists of such objects, and every
# program using the runtime then stops under valgrind/callgrind (bench).
LIB_CFLAGS := -ffunction-sections -fdata-sections -gdwarf-4

$(BUILD)/obj/%.c.o: src/%.c $(HDRS) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(call say,CC,$<)
	$(Q)$(CC) $(ALL_CFLAGS) $(LIB_CFLAGS) -c $< -o $@

$(BUILD)/obj/%.S.o: src/%.S | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(call say,CC,$<)
	$(Q)$(CC) $(ALL_CFLAGS) $(LIB_CFLAGS) -c $< -o $@

$(BUILD)/obj/tools/%.o: tools/%.c $(HDRS) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(call say,CC,$<)
	$(Q)$(CC) $(ALL_CFLAGS) -Itools -c $< -o $@

$(BUILD)/obj/crt/%.c.o: crt/%.c $(HDRS) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(call say,CC,$<)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/obj/crt/%.S.o: crt/%.S src/seq/thunks.S src/elf/index.h | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(call say,CC,$<)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/obj/driver/%.o: driver/%.c $(HDRS) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(call say,CC,$<)
	$(Q)$(CC) $(ALL_CFLAGS) -Idriver -c $< -o $@

$(BUILD)/libfineibt_crt.a: $(CRT_OBJ)
	@rm -f $@
	$(call say,AR,$@)
	$(Q)ar rcs $@ $^

$(BUILD)/fineibt-cc: $(DRV_OBJ) $(OFFLINE_LIB) $(BUILD)/libfineibt.a
	$(call say,LD,$@)
	$(Q)$(CC) -o $@ $(DRV_OBJ) $(OFFLINE_LIB) $(BUILD)/libfineibt.a $(LDSAN) -ldl -lpthread

# The program `fineibt demo` attacks, built like a user's program would be.
$(BUILD)/demo/fi-attack: examples/demo/attack.c examples/demo/attack_gadget.S include/fineibt.h \
		$(BUILD)/fineibt-cc $(BUILD)/libfineibt.so $(BUILD)/libfineibt_crt.a
	@mkdir -p $(@D)
	$(call say,FIBTCC,$@)
	$(Q)$(BUILD)/fineibt-cc -O2 -Iinclude -o $@ examples/demo/attack.c examples/demo/attack_gadget.S

# The copy `make install` puts in PREFIX/libexec/fineibt/, where the
# installed `fineibt demo` looks for it: the runtime linked in
# (-static-fineibt), so it needs no RUNPATH into the build tree.
$(BUILD)/demo/libexec/fi-attack: examples/demo/attack.c examples/demo/attack_gadget.S include/fineibt.h \
		$(BUILD)/fineibt-cc $(BUILD)/libfineibt.a $(BUILD)/libfineibt_crt.a
	@mkdir -p $(@D)
	$(call say,FIBTCC,$@)
	$(Q)$(BUILD)/fineibt-cc -O2 -Iinclude -static-fineibt -o $@ examples/demo/attack.c examples/demo/attack_gadget.S

# The same driver; invoked as fineibt-c++ it compiles and links with clang++-22.
$(BUILD)/fineibt-c++: $(BUILD)/fineibt-cc
	$(call say,LN,$@)
	$(Q)ln -sf fineibt-cc $@

# The same binary as a linker wrapper (driver/ld.c) for stock clang builds.
$(BUILD)/fineibt-ld: $(BUILD)/fineibt-cc
	$(call say,LN,$@)
	$(Q)ln -sf fineibt-cc $@

# The LD_AUDIT library `fineibt run` loads (src/load/audit.c): its own small
# object, never sanitized (the loader calls it before anything is set up).
# Full RELRO as libfineibt.so: the loader calls into it at every dlopen,
# and a lazily bound GOT would be code pointers in writable memory.
# It reads libfineibt.so's dynamic section with the runtime's one reader
# (src/elf/dyntab.c, which calls nothing), compiled in.
$(BUILD)/libfineibt_audit.so: $(AUDIT_SRC) src/elf/dyntab.c src/elf/dyntab.h | $(DEPS_STAMP)
	$(call say,LD,$@)
	$(Q)$(CC) -std=gnu11 -Wall -Wextra -Werror -O2 -g -fPIC -fvisibility=hidden \
		-fno-sanitize=kcfi -D_GNU_SOURCE -Isrc/elf -shared -Wl,-z,noexecstack \
		-Wl,-z,relro -Wl,-z,now -o $@ $(AUDIT_SRC) src/elf/dyntab.c

# src/interpose/dlsym_so.c interposes dlsym in the shared runtime only (see
# there); src/interpose/dlsym_a.c is the static runtime's (--wrap,
# fineibt-cc -static-fineibt). Each variant's table (src/rt/variant.h):
# src/interpose/variant_so.c, src/interpose/variant_a.c.
# The early start: src/load/early.c (IFUNC) in the shared runtime,
# src/load/preinit.c (DT_PREINIT_ARRAY, executables) in the static one.
# libfineibt.so: full RELRO (its GOT read-only once relocated) and no
# executable stack (docs/protection.md, "No code pointer in writable memory").
# src/load/alloc.c: the early start's allocations, not libc's malloc,
# through --wrap of the shared runtime's calls (FI_SO_WRAP).
# src/load/ownlibc.c: the system-call wrappers and string functions the
# shared runtime calls, its own instead of imports the loader would bind
# at every start (FI_SO_LIBC; not under SAN=1, whose interceptors want
# libc's). -Bsymbolic-functions: the library's calls to its own exported
# functions (fineibt_*, the SIGILL and dlsym interposers) are bound at
# link time, not looked up by the loader at every start.
FI_SO_LIBC := close open pread write readlink fstat mmap munmap mprotect mremap \
	madvise mincore getpid sched_yield process_vm_readv syscall getrlimit \
	clock_gettime getpagesize sysconf sigemptyset sigfillset sigaddset \
	sigismember sigprocmask pthread_sigmask memcpy memmove memset memcmp bcmp \
	memchr strlen strnlen strcmp strncmp strchr strcspn strstr stpcpy strncpy \
	strcpy getenv secure_getenv dladdr snprintf vsnprintf strerror
FI_SO_WRAP := $(foreach f,malloc calloc realloc free strdup malloc_trim qsort \
	$(if $(SAN),,$(FI_SO_LIBC)),-Wl,--wrap=$(f)) -Wl,-Bsymbolic-functions
$(BUILD)/obj/load/ownlibc.c.o: LIB_CFLAGS += -fno-builtin
FI_SO_ONLY := %/dlsym_so.c.o %/variant_so.c.o %/early.c.o %/alloc.c.o %/ownlibc.c.o
FI_A_ONLY := %/dlsym_a.c.o %/variant_a.c.o %/next_a.c.o %/preinit.c.o
$(BUILD)/libfineibt.a: $(filter-out $(FI_SO_ONLY),$(LIB_OBJ)) $(LIB_LIST)
	@rm -f $@
	$(call say,AR,$@)
	$(Q)ar rcs $@ $(filter %.o,$^)

# fi_so_link OUT SONAME: libfineibt.so from the objects.
# -T $(FI_SO_ORDER): the linker's own default script for this link, with
# what src/libfineibt.order lists at the front of two output sections:
# the functions a start-up runs first in .text, right after the PLT (20
# pages for hello's, not 43 of 48), and the .bss variables it touches
# first in .bss (2 pages outside the state, not 5); everything else as
# the default script lays it (docs/bench.md, "What a start touches").
# The list is scripts/startup_order.sh's output; a name it no longer
# matches is laid among the others, never an error.
# --sort-section=alignment: the rest of .bss by alignment, the state and
# the page-aligned arrays first, the small variables together after them
# (docs/bench.md, "Start-up cuts, evening 2026-12-06").
# -nostartfiles and -z nodelete: src/load/ownlibc.c, end.
fi_so_link = $(CC) -shared -nostartfiles -o $(1) $(filter-out $(FI_A_ONLY),$(LIB_OBJ)) -Wl,-soname,$(2) \
	$(FI_SO_ZFLAGS) -Wl,--version-script=src/libfineibt.map -Wl,--gc-sections -Wl,--sort-section=alignment \
	-Wl,-T,$(FI_SO_ORDER) $(FI_SO_WRAP) $(LDSAN) -ldl -lpthread
FI_SO_ZFLAGS := -Wl,-z,noexecstack -Wl,-z,relro -Wl,-z,now -Wl,-z,nodelete
# The default script is the one the linker prints (--verbose) for an
# empty link with the same -z options (they choose among its scripts);
# the list goes in as one input pattern a line, so that each section
# keeps its place: the functions before .text's first line, the
# variables (and the list's ". = ALIGN(4096);" lines) before .bss's
# .bss.* line.
FI_SO_ORDER := $(BUILD)/obj/libfineibt.lds
$(FI_SO_ORDER): src/libfineibt.order Makefile | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(call say,GEN,$@)
	$(Q)$(CC) -shared -nostartfiles $(FI_SO_ZFLAGS) -Wl,--verbose -o $@.so 2>/dev/null | \
	  sed -n '/^=====/,/^=====/p' | sed '1d;$$d' >$@.def && rm -f $@.so
	$(Q)sed -n -e 's/^\(\.text\.[A-Za-z0-9_.]*\)$$/    *(\1)/p' \
	  -e 's/^\([A-Za-z0-9_.+-]*\.a:[A-Za-z0-9_.+-]*\) \.text$$/    *\1(.text .text.*)/p' $< >$@.text
	$(Q)sed -n -e 's/^\(\.bss\.[A-Za-z0-9_.]*\)$$/    *(\1)/p' \
	  -e 's/^\(\. = ALIGN([0-9]*);\)$$/    \1/p' $< >$@.bss
	$(Q)awk -v text=$@.text -v bss=$@.bss \
	  't != 1 && /^ *\*\(\.text\.unlikely / { while ((getline l <text) > 0) print l; t = 1 } \
	  b != 1 && /^ *\*\(\.bss \.bss\.\* / { while ((getline l <bss) > 0) print l; b = 1 } { print } \
	  END { if (t != 1 || b != 1) { print "$@: the default script has no .text.unlikely or .bss line" >"/dev/stderr"; exit 1 } }' \
	  $@.def >$@.tmp && rm -f $@.def $@.text $@.bss && mv $@.tmp $@
$(BUILD)/libfineibt.so: $(LIB_OBJ) src/libfineibt.map $(LIB_LIST) $(FI_SO_ORDER)
	$(call say,LD,$@)
	$(Q)$(call fi_so_link,$@,libfineibt.so.$(SOVER))
	@ln -sf libfineibt.so $(BUILD)/libfineibt.so.$(SOVER)

# The copy fineibt-cc links programs against (docs/runtime.md, "Where
# the runtime is loaded from"): the same library whose soname is the
# absolute path of the runtime, so that a program's DT_NEEDED names that
# file and the loader opens it without searching a directory list.
# `make install` links its own, named after $(LIBDIR).
# `make runtime-link-copy LINKDIR=DIR` writes the one for a copy of the
# runtime in DIR (tests/e2e/protect_runpath.sh).
FI_LINK_DIR := fineibt-link
$(BUILD)/$(FI_LINK_DIR)/libfineibt.so: $(LIB_OBJ) src/libfineibt.map $(LIB_LIST) $(FI_SO_ORDER)
	@mkdir -p $(@D)
	$(call say,LD,$@)
	$(Q)$(call fi_so_link,$@,$(abspath $(BUILD))/libfineibt.so.$(SOVER))

.PHONY: runtime-link-copy
runtime-link-copy: $(LIB_OBJ) src/libfineibt.map $(FI_SO_ORDER)
	@mkdir -p $(LINKDIR)/$(FI_LINK_DIR)
	$(call fi_so_link,$(LINKDIR)/$(FI_LINK_DIR)/libfineibt.so,$(abspath $(LINKDIR))/libfineibt.so.$(SOVER))

$(OFFLINE_LIB): $(OFFLINE_OBJ)
	@rm -f $@
	$(call say,AR,$@)
	$(Q)ar rcs $@ $^

$(BUILD)/fineibt: $(TOOL_OBJ) $(OFFLINE_LIB) $(BUILD)/libfineibt.a
	$(call say,LD,$@)
	$(Q)$(CC) -o $@ $(TOOL_OBJ) $(OFFLINE_LIB) $(BUILD)/libfineibt.a $(LDSAN) -ldl -lpthread

$(BUILD)/tests/%: tests/unit/%.c $(HDRS) $(OFFLINE_LIB) $(BUILD)/libfineibt.a
	@mkdir -p $(@D)
	$(call say,LD,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/unit -o $@ $< $(OFFLINE_LIB) $(BUILD)/libfineibt.a $(LDSAN) -ldl -lpthread

# Test-only (make check): the runtime, linked as libfineibt.so is, plus
# tests/lib/rtdebug.c, whose fineibt_debug_object the shipped library does
# not have. Tests that write to the runtime's objects run against
# $(TESTLIB)/libfineibt.so through LD_LIBRARY_PATH; the -static-fineibt
# test program links rtdebug.o.
TESTLIB  := $(BUILD)/testlib
$(TESTLIB)/rtdebug.o: tests/lib/rtdebug.c tests/lib/rawspawn.h $(HDRS) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(call say,CC,$<)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(TESTLIB)/libfineibt.so: $(LIB_OBJ) $(TESTLIB)/rtdebug.o src/libfineibt.map $(FI_SO_ORDER)
	$(call say,LD,$@)
	$(Q)$(CC) -shared -nostartfiles -o $@ $(filter-out $(FI_A_ONLY),$(LIB_OBJ)) $(TESTLIB)/rtdebug.o \
		-Wl,-soname,libfineibt.so.$(SOVER) -Wl,--version-script=src/libfineibt.map \
		$(FI_SO_ZFLAGS) -Wl,--gc-sections -Wl,--sort-section=alignment -Wl,-T,$(FI_SO_ORDER) $(FI_SO_WRAP) $(LDSAN) -ldl -lpthread
	@ln -sf libfineibt.so $(TESTLIB)/libfineibt.so.$(SOVER)

# make check [T=name]: every test, or those whose name contains T.
check: $(DEPS_TEST_STAMP) all $(UNIT_BIN) $(TESTLIB)/libfineibt.so
	@BUILD=$(BUILD) FINEIBT_SAN=$(SAN) bash tests/run.sh $(T)

# make check-real [REAL="prog ..."]: real programs from Debian source packages
# built with fineibt-cc, their full test sets in every mode, timed
# (scripts/real/run.sh; docs/real-programs.md). Takes tens of minutes.
check-real: all
	@BUILD=$(BUILD) bash scripts/real/run.sh $(REAL)

demo: all
	@$(BUILD)/fineibt demo

# make bench [BENCH_ARGS=--quick]: per-call, start-up and whole-program
# benchmarks (docs/bench.md); ~10 minutes, never part of check. Then the
# peers (bench/peers.py: plain -O2/-flto, CFI-icall, kCFI, every mode;
# hot, chained and independent cold loops, 4k and 16k callees).
.PHONY: bench
bench: all
	@BUILD=$(BUILD) python3 bench/bench.py $(BENCH_ARGS)
	@BUILD=$(BUILD) python3 bench/peers.py $(PEERS_ARGS)

# make bench-real [REAL_ARGS="--reps 15 lua5.4 ..."]: every real program of
# check-real against its peers (plain -O2/-flto, CFI-icall, kCFI as
# compiled, every mode): callgrind instructions and pinned, interleaved wall
# time (bench/real.py, docs/bench.md); hours, never part of check. With
# REAL_ARGS=--readme it rewrites docs/bench.md's table.
.PHONY: bench-real
bench-real: all
	@BUILD=$(BUILD) python3 bench/real.py $(REAL_ARGS)

# make bench-startup: start-up against program size (docs/bench.md);
# the 100k program takes long to compile the first time.
.PHONY: bench-startup
bench-startup: all
	@python3 bench/startup_scale.py

clean:
	rm -rf $(BUILD)

# make install [PREFIX=/usr/local] [DESTDIR=...]: CLI, driver, runtime
# (libfineibt.so.$(VERSION) + soname and dev links, .a), crt, header,
# pkg-config file, man pages, the demo program (libexec/fineibt/) and the
# documentation (share/doc/fineibt/). The driver finds the libraries in
# ../lib (docs/ecosystem.md). make uninstall removes exactly these files.
PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
LIBDIR  ?= $(PREFIX)/lib
INCDIR  ?= $(PREFIX)/include
MANDIR  ?= $(PREFIX)/share/man
LIBEXECDIR ?= $(PREFIX)/libexec
DOCDIR  ?= $(PREFIX)/share/doc/fineibt
# DOCDIR as the man pages print it: a break point (\:) after each '/', so
# that a long prefix wraps at a slash instead of overflowing the line. It
# replaces the sources' PREFIX/share/doc/fineibt, which reads as it is
# with man -l man/PAGE.
FI_MAN_DOCDIR = $(subst /,/\\:,$(DOCDIR))
PCDIR   ?= $(LIBDIR)/pkgconfig
# the shared text cache's service unit (fineibt-cached(8))
UNITDIR ?= $(LIBDIR)/systemd/system
INST_BIN := fineibt fineibt-cc
INST_LIB := libfineibt.a libfineibt_crt.a libfineibt_audit.so libfineibt.so libfineibt.so.$(SOVER) libfineibt.so.$(VERSION)
INST_MAN := man1/fineibt.1 man1/fineibt-cc.1 man7/fineibt-cfi.7 man8/fineibt-cached.8
# Every page of docs/ (the man pages and messages cite them by name).
INST_DOC := $(sort $(wildcard docs/*.md docs/*.png))

.PHONY: install uninstall
install: all $(BUILD)/demo/libexec/fi-attack $(FI_SO_ORDER)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCDIR) \
		$(DESTDIR)$(PCDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man7 \
		$(DESTDIR)$(LIBEXECDIR)/fineibt $(DESTDIR)$(DOCDIR) \
		$(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(UNITDIR)
	install -m 755 $(BUILD)/fineibt $(BUILD)/fineibt-cc $(DESTDIR)$(BINDIR)/
	ln -sf fineibt-cc $(DESTDIR)$(BINDIR)/fineibt-c++
	ln -sf fineibt-cc $(DESTDIR)$(BINDIR)/fineibt-ld
	install -m 755 $(BUILD)/libfineibt.so $(DESTDIR)$(LIBDIR)/libfineibt.so.$(VERSION)
	ln -sf libfineibt.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libfineibt.so.$(SOVER)
	ln -sf libfineibt.so.$(SOVER) $(DESTDIR)$(LIBDIR)/libfineibt.so
	install -m 644 $(BUILD)/libfineibt.a $(BUILD)/libfineibt_crt.a $(DESTDIR)$(LIBDIR)/
	install -m 755 $(BUILD)/libfineibt_audit.so $(DESTDIR)$(LIBDIR)/
	install -d $(DESTDIR)$(LIBDIR)/$(FI_LINK_DIR)
	$(call fi_so_link,$(DESTDIR)$(LIBDIR)/$(FI_LINK_DIR)/libfineibt.so,$(LIBDIR)/libfineibt.so.$(SOVER))
	install -m 644 include/fineibt.h $(DESTDIR)$(INCDIR)/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' -e 's|@BINDIR@|$(BINDIR)|g' \
	    -e 's|@INCDIR@|$(INCDIR)|g' -e 's|@VERSION@|$(VERSION)|g' -e 's|@DOCDIR@|$(DOCDIR)|g' \
	    pkgconfig/fineibt.pc.in >$(DESTDIR)$(PCDIR)/fineibt.pc
	for m in $(INST_MAN); do \
		sed 's|PREFIX/share/doc/fineibt|$(FI_MAN_DOCDIR)|g' man/$${m#*/} >$(DESTDIR)$(MANDIR)/$$m && \
		chmod 644 $(DESTDIR)$(MANDIR)/$$m || exit 1; done
	install -m 755 $(BUILD)/demo/libexec/fi-attack $(DESTDIR)$(LIBEXECDIR)/fineibt/
	install -m 644 $(INST_DOC) $(DESTDIR)$(DOCDIR)/
	sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@DOCDIR@|$(DOCDIR)|g' systemd/fineibt-cached.service.in \
	    >$(DESTDIR)$(UNITDIR)/fineibt-cached.service

uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(INST_BIN) fineibt-c++ fineibt-ld) \
	      $(addprefix $(DESTDIR)$(LIBDIR)/,$(INST_LIB) $(FI_LINK_DIR)/libfineibt.so) \
	      $(DESTDIR)$(INCDIR)/fineibt.h $(DESTDIR)$(PCDIR)/fineibt.pc \
	      $(addprefix $(DESTDIR)$(MANDIR)/,$(INST_MAN)) \
	      $(DESTDIR)$(LIBEXECDIR)/fineibt/fi-attack \
	      $(addprefix $(DESTDIR)$(DOCDIR)/,$(notdir $(INST_DOC))) \
	      $(DESTDIR)$(UNITDIR)/fineibt-cached.service
	rmdir $(DESTDIR)$(LIBDIR)/$(FI_LINK_DIR) $(DESTDIR)$(LIBEXECDIR)/fineibt $(DESTDIR)$(DOCDIR) 2>/dev/null || true

# make fuzz: libFuzzer harnesses (fuzz/fuzz.mk, docs/robustness.md).
include fuzz/fuzz.mk
