# (a) Plain Make: make -f plain.mk CC=fineibt-cc
# Nothing fineibt-specific: the compiler driver adds the kCFI flags and
# links the runtime. The program finds libsorter.so next to itself.
CC      ?= fineibt-cc
CFLAGS  ?= -O2 -g

all: sortdemo

libsorter.so: sorter.c sorter.h
	$(CC) $(CFLAGS) -fPIC -shared -Wl,-soname,libsorter.so -o $@ sorter.c

sortdemo: main.c sorter.h libsorter.so
	$(CC) $(CFLAGS) -o $@ main.c -L. -lsorter -Wl,-rpath,'$$ORIGIN'

clean:
	rm -f sortdemo libsorter.so

.PHONY: all clean
