# (d) A stock compiler and pkg-config, no driver:
#     make -f pkgconfig.mk CC=clang-22
# `pkg-config --cflags fineibt` gives the kCFI flags, `--libs` the
# per-module crt (linked whole) and the runtime. Every module, the
# shared library too, links both.
CC          ?= clang-22
PKG_CONFIG  ?= pkg-config
CFLAGS      ?= -O2 -g
FI_CFLAGS   := $(shell $(PKG_CONFIG) --cflags fineibt)
FI_LIBS     := $(shell $(PKG_CONFIG) --libs fineibt)

all: sortdemo

libsorter.so: sorter.c sorter.h
	$(CC) $(CFLAGS) $(FI_CFLAGS) -fPIC -shared -Wl,-soname,libsorter.so -o $@ sorter.c $(FI_LIBS)

sortdemo: main.c sorter.h libsorter.so
	$(CC) $(CFLAGS) $(FI_CFLAGS) -o $@ main.c -L. -lsorter -Wl,-rpath,'$$ORIGIN' $(FI_LIBS)

clean:
	rm -f sortdemo libsorter.so

.PHONY: all clean
