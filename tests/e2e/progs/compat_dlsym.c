// SPDX-License-Identifier: MIT
/*
 * Function pointers from dlsym/dlvsym into uninstrumented libraries
 * (docs/compat.md, "Foreign function pointers"): libm's cos called
 * through its own type and through another one, libc's strlen from
 * dlvsym, many calls from the same sites and from a tail call.
 *
 *   compat_dlsym N          N rounds of every call; prints a checksum
 *   compat_dlsym plus16 LIB cos + 16 (an address inside cos, not from
 *                           dlsym: LIB's raw_dlsym gives the plain cos)
 *                           through double (*)(double): must trap
 *                           where the caller checks
 *   compat_dlsym veneer16   the pointer dlsym gave + 16: the same
 *   compat_dlsym confused   an instrumented function of another type
 *                           through the same site: must trap
 * Each of the last three first calls cos through the site once, so the
 * site has met a veneer before it meets the bad target.
 *   compat_dlsym data       dlsym of a data object is left alone
 *   compat_dlsym same       dlsym twice gives the same pointer
 *   compat_dlsym uninst LIB  LIB's raw_dlsym (uninstrumented code calling
 *                           dlsym) gets the plain pointer, which dladdr
 *                           knows; this program's dlsym gets a veneer
 *   compat_dlsym hold       one round (sites opened), "ready", then wait
 *                           for stdin to close (fineibt inspect --pid)
 *   compat_dlsym threads    8 threads released at once into the same
 *                           sites (several may trap before one opens
 *                           them); prints a checksum
 *   compat_dlsym fork N     a thread asks dlsym for libm functions
 *                           without a pause while the main thread forks
 *                           N times; each child asks for a function no
 *                           one asked for yet and calls it. Prints
 *                           "forks N hung H": a child that inherited the
 *                           veneer lock held by the other thread hangs
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef double (*d_fn)(double);
typedef size_t (*len_fn)(const char *);
typedef long (*other_fn)(const char *);

static d_fn volatile vcos;

__attribute__((noinline)) int not_a_double_fn(int a, int b)
{
	return a + b;
}
static len_fn volatile vlen;

__attribute__((noinline)) static double call_d(d_fn f, double x)
{
	return f(x);
}

/* A tail call through the pointer (a `cs jmp` site). */
__attribute__((noinline)) static size_t tail_len(const char *s)
{
	return vlen(s);
}

static pthread_barrier_t go;

static double rounds(long n)
{
	double sum = 0;

	for (long i = 0; i < n; i++) {
		sum += call_d(vcos, 0.0);
		sum += (double)tail_len("four");
		sum += (double)((other_fn)vlen)("sixsix");
	}
	return sum;
}

static void *worker(void *arg)
{
	pthread_barrier_wait(&go);
	*(double *)arg = rounds(2000);
	return NULL;
}

static int threads(void)
{
	pthread_t t[8];
	double r[8], sum = 0;

	pthread_barrier_init(&go, NULL, 8);
	for (int i = 0; i < 8; i++) {
		if (pthread_create(&t[i], NULL, worker, &r[i]))
			return 5;
	}
	for (int i = 0; i < 8; i++) {
		pthread_join(t[i], NULL);
		sum += r[i];
	}
	printf("%.1f\n", sum);
	return 0;
}

static const char *const fork_names[] = {
	"sin", "tan", "exp", "log", "sqrt", "floor", "ceil", "fabs", "atan",
	"asin", "acos", "sinh", "cosh", "tanh", "log10", "log2", "exp2",
	"cbrt", "erf", "erfc", "expm1", "log1p", "trunc", "round", "rint",
};
#define FORK_NAMES (sizeof(fork_names) / sizeof(fork_names[0]))

static void *m_lib;
static volatile int fork_stop;

static void *fork_asker(void *arg)
{
	double sum = 0;

	for (unsigned i = 0; !fork_stop; i++) {
		d_fn f = (d_fn)dlsym(m_lib, fork_names[i % FORK_NAMES]);

		if (f)
			sum += f(0.5);
	}
	*(double *)arg = sum;
	return NULL;
}

/* One child: a veneer no one made yet (the lock must be free), called. */
static void fork_child(unsigned k)
{
	static const char *const fresh[] = { "j0", "j1", "y0", "y1", "lgamma", "tgamma" };
	d_fn f = (d_fn)dlsym(m_lib, fresh[k % 6]);

	_exit(f && f(1.0) == f(1.0) ? 0 : 9);
}

static int forks(long n)
{
	long hung = 0;
	double r;
	pthread_t t;

	if (pthread_create(&t, NULL, fork_asker, &r))
		return 5;
	for (long k = 0; k < n; k++) {
		pid_t pid = fork();
		int st = 0, waited = 0;

		if (pid < 0)
			return 6;
		if (pid == 0)
			fork_child((unsigned)k);
		/* 2 s per child: a hung one is killed and counted. */
		while (waitpid(pid, &st, WNOHANG) == 0 && waited < 2000) {
			usleep(1000);
			waited++;
		}
		if (waited == 2000) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			hung++;
		} else if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			return 7;
		}
	}
	fork_stop = 1;
	pthread_join(t, NULL);
	printf("forks %ld hung %ld\n", n, hung);
	return 0;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "1";
	void *m = dlopen("libm.so.6", RTLD_NOW | RTLD_GLOBAL);
	void *c = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	double sum = 0;
	long n;

	if (!m || !c)
		return 2;
	vcos = (d_fn)dlsym(m, "cos");
	vlen = (len_fn)dlvsym(c, "strlen", "GLIBC_2.2.5");
	if (!vcos || !vlen)
		return 3;
	if (!strcmp(what, "confused")) {
		sum = call_d(vcos, 0.0);
		printf("%f\n", call_d((d_fn)(void *)not_a_double_fn, sum));
		return 0;
	}
	if (!strcmp(what, "plus16") || !strcmp(what, "veneer16")) {
		char *f = (char *)vcos;

		if (what[0] == 'p') {
			void *lib = argc > 2 ? dlopen(argv[2], RTLD_NOW) : NULL;
			void *(*raw)(void *, const char *) =
				lib ? (void *(*)(void *, const char *))dlsym(lib, "raw_dlsym") : NULL;

			f = raw ? raw(m, "cos") : NULL;
		}
		if (!f || (what[0] == 'p' && f == (char *)vcos))
			return 4;
		sum = call_d(vcos, 0.0);
		printf("%f\n", call_d((d_fn)(f + 16), sum));
		return 0;
	}
	if (!strcmp(what, "data"))
		return dlsym(c, "environ") == (void *)&environ ? 0 : 1;
	if (!strcmp(what, "same"))
		return dlsym(m, "cos") == (void *)vcos &&
		       dlsym(RTLD_DEFAULT, "cos") == (void *)vcos ? 0 : 1;
	if (!strcmp(what, "uninst") && argc > 2) {
		void *lib = dlopen(argv[2], RTLD_NOW);
		void *(*raw)(void *, const char *);
		Dl_info info;
		void *p;

		if (!lib)
			return 6;
		raw = (void *(*)(void *, const char *))dlsym(lib, "raw_dlsym");
		p = raw ? raw(m, "cos") : NULL;
		if (!p || !dladdr(p, &info) || !strstr(info.dli_fname, "libm"))
			return 7;
		/* A veneer only where the checks need one. */
		return p != (void *)vcos || !getenv("FINEIBT_EXPECT_VENEER") ? 0 : 8;
	}
	if (!strcmp(what, "threads"))
		return threads();
	if (!strcmp(what, "fork")) {
		m_lib = m;
		return forks(argc > 2 ? atol(argv[2]) : 100);
	}
	if (!strcmp(what, "hold")) {
		char c;

		printf("%.1f\nready\n", rounds(1));
		fflush(stdout);
		while (read(0, &c, 1) > 0)
			;
		return 0;
	}
	n = atol(what);
	printf("%.1f\n", rounds(n));
	return 0;
}
