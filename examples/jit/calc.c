/* SPDX-License-Identifier: MIT */
/*
 * calc: a tiny JIT that takes part in CFI.
 *
 * Integer expressions over x (and y), e.g. "(x - y) * 7 + f(x)", compiled
 * to x86-64 in mmap'd memory that is made read+execute once written. Each
 * generated function carries the preamble a compiled C function of its
 * type has in this process (fineibt_emit_preamble), so this file's
 * instrumented C code calls it through ordinary function pointers; calls
 * it makes back into C (f(e) -> twice(), bad(e) -> pair()) go through
 * checked call sites (fineibt_emit_call). It works the same in every
 * FINEIBT_CFI mode because the API emits the sequences of the mode the
 * process runs in.
 *
 * Usage: calc [run | confused-in | confused-out | EXPR [X [Y]]]
 *   run           compile a few expressions, compare every result with an
 *                 interpreter over a grid of arguments, print "ok: N"
 *   confused-in   call a long(long, long) JIT function through an
 *                 int (*)(int) pointer: a CFI failure in C calling JIT code
 *   confused-out  JIT code calls pair(), a long(long, long), through a
 *                 call site checking for long(long): a CFI failure in JIT
 *                 code calling C
 *   EXPR X Y      compile EXPR and print its value
 * Exit status 0 on success, 1 on a mismatch or error; a CFI failure kills
 * the process with SIGILL unless FINEIBT_CFI has warn.
 *
 * The arithmetic instructions below are this JIT's own code generator;
 * every CFI sequence comes from libfineibt.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <fineibt.h>

typedef long (*fn1_t)(long);
typedef long (*fn2_t)(long, long);
typedef int (*int_fn_t)(int);

/* ------------------------------------------------ instrumented callees */

/* f(e) in an expression. Also gives the JIT the hash of long(long). */
__attribute__((noinline)) long twice(long v)
{
	return 2 * v + 1;
}

/* bad(e): really a long(long, long); JIT code calls it as long(long). */
__attribute__((noinline)) long pair(long a, long b)
{
	return a * 1000 + (b & 0xff);
}

/* Compiled only so the JIT can read the hash of long(long, long). */
__attribute__((noinline)) long proto2(long x, long y)
{
	return x - y;
}

/* Keep the compiler from seeing through the function pointers. */
static void *volatile keep[] = { (void *)twice, (void *)pair, (void *)proto2 };

/* ------------------------------------------------------------- parser */

enum op { NUM, VAR_X, VAR_Y, ADD, SUB, MUL, NEG, CALL_F, CALL_BAD };

struct node {
	enum op op;
	long num;
	struct node *l, *r;
};

struct parser {
	const char *s;
	struct node pool[256];
	int n;
	bool err;
};

static struct node *mk(struct parser *p, enum op op, struct node *l, struct node *r)
{
	struct node *n;

	if (p->n == (int)(sizeof(p->pool) / sizeof(p->pool[0]))) {
		p->err = true;
		return &p->pool[0];
	}
	n = &p->pool[p->n++];
	*n = (struct node){ .op = op, .l = l, .r = r };
	return n;
}

static char peek(struct parser *p)
{
	while (*p->s == ' ')
		p->s++;
	return *p->s;
}

static bool eat(struct parser *p, const char *tok)
{
	size_t n = strlen(tok);

	peek(p);
	if (strncmp(p->s, tok, n))
		return false;
	p->s += n;
	return true;
}

static struct node *expr(struct parser *p);

static struct node *call(struct parser *p, enum op op)
{
	struct node *arg;

	if (!eat(p, "(")) {
		p->err = true;
		return mk(p, NUM, NULL, NULL);
	}
	arg = expr(p);
	if (!eat(p, ")"))
		p->err = true;
	return mk(p, op, arg, NULL);
}

static struct node *primary(struct parser *p)
{
	struct node *n;
	char c = peek(p);

	if (c >= '0' && c <= '9') {
		n = mk(p, NUM, NULL, NULL);
		n->num = strtol(p->s, (char **)&p->s, 10);
		return n;
	}
	if (eat(p, "bad"))
		return call(p, CALL_BAD);
	if (eat(p, "f"))
		return call(p, CALL_F);
	if (eat(p, "x"))
		return mk(p, VAR_X, NULL, NULL);
	if (eat(p, "y"))
		return mk(p, VAR_Y, NULL, NULL);
	if (eat(p, "(")) {
		n = expr(p);
		if (!eat(p, ")"))
			p->err = true;
		return n;
	}
	p->err = true;
	return mk(p, NUM, NULL, NULL);
}

static struct node *unary(struct parser *p)
{
	if (eat(p, "-"))
		return mk(p, NEG, unary(p), NULL);
	return primary(p);
}

static struct node *term(struct parser *p)
{
	struct node *n = unary(p);

	while (!p->err && eat(p, "*"))
		n = mk(p, MUL, n, unary(p));
	return n;
}

static struct node *expr(struct parser *p)
{
	struct node *n = term(p);

	for (;;) {
		if (eat(p, "+"))
			n = mk(p, ADD, n, term(p));
		else if (eat(p, "-"))
			n = mk(p, SUB, n, term(p));
		else
			return n;
	}
}

static bool uses_y(const struct node *n)
{
	return n && (n->op == VAR_Y || uses_y(n->l) || uses_y(n->r));
}

/* The reference semantics (wrapping like the generated code). */
static long eval(const struct node *n, long x, long y)
{
	switch (n->op) {
	case NUM:	return n->num;
	case VAR_X:	return x;
	case VAR_Y:	return y;
	case ADD:	return (long)((unsigned long)eval(n->l, x, y) + (unsigned long)eval(n->r, x, y));
	case SUB:	return (long)((unsigned long)eval(n->l, x, y) - (unsigned long)eval(n->r, x, y));
	case MUL:	return (long)((unsigned long)eval(n->l, x, y) * (unsigned long)eval(n->r, x, y));
	case NEG:	return (long)-(unsigned long)eval(n->l, x, y);
	case CALL_F:	return twice(eval(n->l, x, y));
	case CALL_BAD:	return pair(eval(n->l, x, y), 0);
	}
	return 0;
}

/* ------------------------------------------------------------- codegen */

struct jit {
	uint8_t *mem;		/* writable view of the code region */
	uint64_t base;		/* run-time address of mem[0] */
	size_t cap, len;
	int depth;		/* 8-byte pushes beyond the aligned frame */
	int err;
	struct fineibt_hash h_long;	/* run-time hash of long(long) */
};

static void put(struct jit *j, const void *bytes, size_t n)
{
	if (j->err)
		return;
	if (n > j->cap - j->len) {
		j->err = -ENOSPC;
		return;
	}
	memcpy(j->mem + j->len, bytes, n);
	j->len += n;
}

#define PUT(j, ...) put((j), (const uint8_t[]){ __VA_ARGS__ }, \
			sizeof((const uint8_t[]){ __VA_ARGS__ }))

static void put_imm64(struct jit *j, uint64_t v)
{
	put(j, &v, sizeof(v));
}

/* A checked call (or tail jump) to @target, of type long(long), via rdx. */
static void put_call(struct jit *j, void *target, bool tail)
{
	size_t n = 0;

	PUT(j, 0x48, 0xba);			/* movabs $target, %rdx */
	put_imm64(j, (uint64_t)(uintptr_t)target);
	if (j->err)
		return;
	j->err = fineibt_emit_call(j->mem + j->len, j->cap - j->len,
				   j->base + j->len, j->h_long, 2 /* rdx */,
				   tail, &n);
	j->len += n;
}

static void put_epilogue(struct jit *j)
{
	PUT(j, 0x41, 0x5c);			/* pop %r12 */
	PUT(j, 0x5b);				/* pop %rbx */
	PUT(j, 0x5d);				/* pop %rbp */
}

static void gen(struct jit *j, const struct node *n, bool tail);

static void gen_call(struct jit *j, const struct node *n, bool tail)
{
	bool pad = j->depth & 1;
	void *target = n->op == CALL_F ? (void *)twice : (void *)pair;

	gen(j, n->l, false);
	PUT(j, 0x48, 0x89, 0xc7);		/* mov %rax, %rdi */
	if (tail) {
		/* Our frame goes first: the callee returns to our caller. */
		put_epilogue(j);
		put_call(j, target, true);
		return;
	}
	if (pad)
		PUT(j, 0x48, 0x83, 0xec, 0x08);	/* sub $8, %rsp */
	put_call(j, target, false);
	if (pad)
		PUT(j, 0x48, 0x83, 0xc4, 0x08);	/* add $8, %rsp */
}

static void gen_binary(struct jit *j, const struct node *n)
{
	gen(j, n->l, false);
	PUT(j, 0x50);				/* push %rax */
	j->depth++;
	gen(j, n->r, false);
	PUT(j, 0x48, 0x89, 0xc1);		/* mov %rax, %rcx */
	PUT(j, 0x58);				/* pop %rax */
	j->depth--;
	if (n->op == ADD)
		PUT(j, 0x48, 0x01, 0xc8);	/* add %rcx, %rax */
	else if (n->op == SUB)
		PUT(j, 0x48, 0x29, 0xc8);	/* sub %rcx, %rax */
	else
		PUT(j, 0x48, 0x0f, 0xaf, 0xc1);	/* imul %rcx, %rax */
}

/* Value of @n into rax; @tail: @n is the whole body and may tail-call. */
static void gen(struct jit *j, const struct node *n, bool tail)
{
	switch (n->op) {
	case NUM:
		PUT(j, 0x48, 0xb8);		/* movabs $num, %rax */
		put_imm64(j, (uint64_t)n->num);
		break;
	case VAR_X:
		PUT(j, 0x48, 0x89, 0xd8);	/* mov %rbx, %rax */
		break;
	case VAR_Y:
		PUT(j, 0x4c, 0x89, 0xe0);	/* mov %r12, %rax */
		break;
	case NEG:
		gen(j, n->l, false);
		PUT(j, 0x48, 0xf7, 0xd8);	/* neg %rax */
		break;
	case CALL_F:
	case CALL_BAD:
		gen_call(j, n, tail);
		return;
	default:
		gen_binary(j, n);
		break;
	}
	if (tail) {
		put_epilogue(j);
		PUT(j, 0xc3);			/* ret */
	}
}

/*
 * Compile @n as a function of @hash (long(long) or long(long, long)) and
 * @arity; returns its address (what callers use), or NULL.
 */
static void *compile(struct jit *j, const struct node *n,
		     struct fineibt_hash hash, int arity)
{
	size_t start, plen = 0;

	/* Functions start 16-byte aligned, like compiled ones. */
	while ((j->len & 15) && !j->err)
		PUT(j, 0xcc);			/* int3 padding */
	start = j->len;
	if (!j->err)
		j->err = fineibt_emit_preamble(j->mem + j->len, j->cap - j->len,
					       j->base + j->len, hash, arity, &plen);
	j->len += plen;
	PUT(j, 0x55);				/* push %rbp */
	PUT(j, 0x48, 0x89, 0xe5);		/* mov %rsp, %rbp */
	PUT(j, 0x53);				/* push %rbx */
	PUT(j, 0x41, 0x54);			/* push %r12 */
	PUT(j, 0x48, 0x89, 0xfb);		/* mov %rdi, %rbx */
	PUT(j, 0x49, 0x89, 0xf4);		/* mov %rsi, %r12 */
	j->depth = 0;
	gen(j, n, true);
	if (j->err)
		return NULL;
	return (void *)(uintptr_t)(j->base + start + FINEIBT_PREAMBLE_SIZE);
}

/* ----------------------------------------------------------- memory */

#define REGION_SIZE	(64 * 1024)

/*
 * Memory the emitter can use: under cfi=bhi, preambles call the BHI stubs
 * with a rel32, so the region must lie in the window fineibt_jit_reach()
 * gives; elsewhere anywhere will do.
 */
static uint8_t *map_region(void)
{
	const uint64_t step = 64ull << 20;
	uint64_t lo, hi;
	void *p;

	if (fineibt_jit_reach(&lo, &hi))
		return NULL;
	if (lo == 0 && hi == UINT64_MAX) {
		p = mmap(NULL, REGION_SIZE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		return p == MAP_FAILED ? NULL : p;
	}
	for (uint64_t at = hi - step; at > lo && at < hi; at -= step) {
		p = mmap((void *)(uintptr_t)at, REGION_SIZE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (p != MAP_FAILED)
			return p;
	}
	return NULL;
}

/* ------------------------------------------------------------- driver */

/* CALC_DUMP=file: the finished code, for a disassembler (tests). */
static void dump_region(const struct jit *j)
{
	const char *path = getenv("CALC_DUMP");
	FILE *f;

	if (!path)
		return;
	f = fopen(path, "wb");
	if (!f || fwrite(j->mem, 1, j->len, f) != j->len)
		fprintf(stderr, "calc: cannot write %s\n", path);
	if (f)
		fclose(f);
}

struct compiled {
	const char *src;
	struct node *root;
	int nargs;
	void *fn;
};

static int parse(const char *src, struct parser *p, struct node **root)
{
	p->s = src;
	p->n = 0;
	p->err = false;
	*root = expr(p);
	if (p->err || peek(p)) {
		fprintf(stderr, "calc: cannot parse '%s' near '%s'\n", src, p->s);
		return -1;
	}
	return 0;
}

static long call_jit(const struct compiled *c, long x, long y)
{
	/* Indirect calls from instrumented code: checked like any other. */
	if (c->nargs == 1)
		return ((fn1_t)c->fn)(x);
	return ((fn2_t)c->fn)(x, y);
}

static int self_check(const struct compiled *c, struct fineibt_hash want)
{
	struct fineibt_hash h;
	int arity = fineibt_func_arity(c->fn);

	if (fineibt_func_hash(c->fn, &h) || h.val != want.val) {
		fprintf(stderr, "calc: %s: hash does not read back\n", c->src);
		return -1;
	}
	printf("jit: %-22s at %#" PRIxPTR " hash %#010x arity %d\n", c->src,
	       (uintptr_t)c->fn, h.val, arity);
	return 0;
}

static struct parser parsers[4];

static int run(int argc, char **argv, const char *what)
{
	static const char *const srcs[] = {
		"x * x + 3", "(x - y) * 7 + f(x)", "f(x * y - 2)", "-(y - f(f(x))) * 3",
	};
	const char *one[1];
	struct compiled c[4];
	struct fineibt_hash h1, h2;
	struct fineibt_config cfg;
	struct jit j = { 0 };
	char mode[64];
	int n = 4, checks = 0, err;

	if (!strcmp(what, "expr")) {
		one[0] = argv[1];
		n = 1;
	} else if (!strcmp(what, "confused-out")) {
		one[0] = "bad(x) + 1";
		n = 1;
	} else if (!strcmp(what, "confused-in")) {
		one[0] = srcs[1];
		n = 1;
	}
	fineibt_get_config(&cfg);
	fineibt_config_str(&cfg, mode, sizeof(mode));
	printf("mode: %s\n", mode);
	/* Run-time type hashes, read off compiled functions of those types. */
	if ((err = fineibt_func_hash((void *)twice, &h1)) ||
	    (err = fineibt_func_hash((void *)proto2, &h2))) {
		fprintf(stderr, "calc: no kCFI preamble on twice/proto2 (%s): "
			"build with fineibt-cc\n", strerror(-err));
		return 1;
	}
	printf("types: long(long) %#010x arity %d, long(long,long) %#010x arity %d\n",
	       h1.val, fineibt_func_arity((void *)twice), h2.val,
	       fineibt_func_arity((void *)proto2));

	j.mem = map_region();
	if (!j.mem) {
		fprintf(stderr, "calc: cannot map memory within reach of the BHI stubs\n");
		return 1;
	}
	j.base = (uint64_t)(uintptr_t)j.mem;
	j.cap = REGION_SIZE;
	j.h_long = h1;
	for (int i = 0; i < n; i++) {
		c[i].src = n == 4 ? srcs[i] : one[0];
		if (parse(c[i].src, &parsers[i], &c[i].root))
			return 1;
		c[i].nargs = uses_y(c[i].root) ? 2 : 1;
		c[i].fn = compile(&j, c[i].root, c[i].nargs == 1 ? h1 : h2, c[i].nargs);
		if (!c[i].fn) {
			fprintf(stderr, "calc: emitting '%s': %s\n", c[i].src,
				strerror(-j.err));
			return 1;
		}
	}
	/* W^X: the code becomes executable only once it is complete. */
	if (mprotect(j.mem, REGION_SIZE, PROT_READ | PROT_EXEC) ||
	    (err = fineibt_jit_register(j.mem, j.len))) {
		fprintf(stderr, "calc: cannot seal/register the code region\n");
		return 1;
	}
	printf("jit: region %#" PRIxPTR "-%#" PRIxPTR "\n", (uintptr_t)j.mem,
	       (uintptr_t)(j.mem + j.len));
	dump_region(&j);
	for (int i = 0; i < n; i++)
		if (self_check(&c[i], c[i].nargs == 1 ? h1 : h2))
			return 1;
	fflush(stdout);

	if (!strcmp(what, "expr")) {
		long x = argc > 2 ? atol(argv[2]) : 0, y = argc > 3 ? atol(argv[3]) : 0;

		printf("%ld\n", call_jit(&c[0], x, y));
		return 0;
	}
	if (!strcmp(what, "confused-in")) {
		int r;

		printf("confused-in: calling %#" PRIxPTR " as int (*)(int)\n",
		       (uintptr_t)c[0].fn);
		fflush(stdout);
		r = ((int_fn_t)c[0].fn)(5);
		printf("confused-in: returned %d\n", r);
		return 0;
	}
	if (!strcmp(what, "confused-out")) {
		printf("confused-out: JIT code calls pair() at %#" PRIxPTR " as long(long)\n",
		       (uintptr_t)(void *)pair);
		fflush(stdout);
		printf("confused-out: returned %ld\n", call_jit(&c[0], 4, 0));
		return 0;
	}
	for (int i = 0; i < n; i++) {
		for (long x = -4; x <= 4; x++) {
			for (long y = -3; y <= 3; y++) {
				long got = call_jit(&c[i], x, y);
				long want = eval(c[i].root, x, y);

				checks++;
				if (got != want) {
					printf("MISMATCH: %s at x=%ld y=%ld: jit %ld, C %ld\n",
					       c[i].src, x, y, got, want);
					return 1;
				}
			}
		}
	}
	printf("ok: %d checks\n", checks);
	fineibt_jit_unregister(j.mem);
	munmap(j.mem, REGION_SIZE);
	return 0;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "run";

	(void)keep;
	if (!strcmp(what, "run") || !strcmp(what, "confused-in") ||
	    !strcmp(what, "confused-out"))
		return run(argc, argv, what);
	return run(argc, argv, "expr");
}
