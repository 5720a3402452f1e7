// SPDX-License-Identifier: MIT
/*
 * C++ through fineibt-c++: virtual calls, std::function (whose invoker is
 * called through a checked function pointer), a std::sort comparator
 * (libstdc++'s template code, instantiated here), and a type-confused
 * call through a function pointer.
 *
 * clang's kCFI does not check C++ virtual calls, nor indirect calls
 * emitted as invokes: see docs/runtime.md, Limits.
 *
 *   rt_cxx            prints "cxx ok"
 *   rt_cxx confuse    calls half(double) through a long (*)(long)
 */
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

struct Base {
	virtual long f(long x) = 0;
	virtual ~Base() {}
};
struct Inc : Base {
	long f(long x) override { return x + 1; }
};
struct Dbl : Base {
	long f(long x) override { return x * 2; }
};
__attribute__((noinline)) double half(double x)
{
	return x / 2;
}

/* No cleanups in here: an indirect call emitted as an LLVM `invoke` (in
 * a function with destructors to run or a try block) gets no kCFI check
 * from clang-22. */
__attribute__((noinline)) static long call_p(long (*f)(long), long x)
{
	return f(x) + 1;
}

static long (*volatile as_long)(long) =
	reinterpret_cast<long (*)(long)>(reinterpret_cast<void *>(half));

__attribute__((noinline)) static Base *make(int i)
{
	if (i % 2)
		return new Dbl;
	return new Inc;
}

__attribute__((noinline)) static long call_f(Base *b, long x)
{
	return b->f(x) + 0;
}

int main(int argc, char **argv)
{
	std::vector<std::unique_ptr<Base>> v;
	long s = 0;

	setvbuf(stdout, nullptr, _IONBF, 0);
	for (int i = 0; i < 4; i++)
		v.emplace_back(make(i + argc));
	for (auto &p : v)
		s += call_f(p.get(), 10);
	std::function<long(long)> g = [&](long x) { return x + s; };
	std::vector<int> w = { 3, 1, 2, 5, 4 };
	std::sort(w.begin(), w.end(), [](int a, int b) { return a > b; });
	if (s != 62 || g(1) != 63 || w[0] != 5 || w[4] != 1) {
		std::fprintf(stderr, "rt_cxx: wrong results %ld %ld %d\n", s,
			     g(1), w[0]);
		return 1;
	}
	if (argc > 1 && !std::strcmp(argv[1], "confuse")) {
		call_p(as_long, 1);
		std::printf("survived\n");
		return 0;
	}
	std::printf("cxx ok\n");
	return 0;
}
