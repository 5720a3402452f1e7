#!/usr/bin/env python3
"""Generate a kCFI program with N functions as assembly (hostile.sh).

Usage: hostile_big.py OUT.s [N=100000]

Every function has the compiler's kCFI shape (docs/sequences.md): a
16-byte preamble (movl $hash into the arity register, 11 patchable-entry
nops listed in __patchable_function_entries), endbr64, then one kCFI call
site (listed in .kcfi_traps) calling the next function through a pointer
table; the last returns 42. main calls the first, so running the program
walks all N indirect calls: every rewritten preamble and caller is used.
Writing assembly instead of C keeps the build to seconds (clang takes
minutes for 100k functions on two cores); bench/gen_big.py is the C twin.
"""
import sys

out = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 100000
REGS = ["eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi"]


def hash_of(i):
    # Distinct per arity; never an ENDBR-like value.
    return 0x1a2b3c40 + (i % 8) * 0x01010101


def site(k, callee):
    h = hash_of(callee)
    return ("\tmovq tbl+%d(%%rip), %%r11\n"
            "\tmovl $%d, %%r10d\n"
            "\taddl -15(%%r11), %%r10d\n"
            "\tje .Lok%s\n"
            ".Ltrap%s:\n\tud2\n"
            ".Lok%s:\n\t.byte 0x2e\n\tcall __x86_indirect_thunk_r11\n"
            "\t.pushsection .kcfi_traps,\"a\",@progbits\n"
            "\t.long .Ltrap%s - .\n\t.popsection\n"
            % (8 * callee, (-h) & 0xffffffff, k, k, k, k))


with open(out, "w") as f:
    w = f.write
    w("\t.text\n\t.p2align 4\n\t.hidden __x86_indirect_thunk_r11\n"
      "__x86_indirect_thunk_r11:\n\tjmp *%r11\n")
    for i in range(n):
        w("\t.p2align 4\n__cfi_f%d:\n\tmovl $%d, %%%s\n" % (i, hash_of(i), REGS[i % 8]))
        w(".Lpfe%d:\n\t.fill 11, 1, 0x90\n" % i)
        w("\t.pushsection __patchable_function_entries,\"aw\",@progbits\n"
          "\t.quad .Lpfe%d\n\t.popsection\n" % i)
        w("\t.type f%d,@function\nf%d:\n\tendbr64\n" % (i, i))
        if i + 1 < n:
            w(site(str(i), i + 1))
            w("\tret\n")
        else:
            w("\tmovl $42, %eax\n\tret\n")
    w("\t.globl main\n\t.type main,@function\n\t.p2align 4\nmain:\n\tendbr64\n")
    w(site("m", 0))
    w("\tret\n")
    w("\t.section .data.rel.ro,\"aw\",@progbits\n\t.p2align 3\ntbl:\n")
    for i in range(n):
        w("\t.quad f%d\n" % i)
    w("\t.section .note.GNU-stack,\"\",@progbits\n")
