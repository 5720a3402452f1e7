/* SPDX-License-Identifier: MIT */
/*
 * hostile.sh: the half of a mixed executable built without kCFI (plain
 * `call *%reg`, or thunk calls without a check when built with the
 * retpoline-thunk flags only). Its indirect calls must keep working in
 * every mode after the kCFI half is rewritten.
 */
static long sq(long x) { return x * x; }
static long neg(long x) { return -x; }

long plain_apply(long (*fn)(long), long x)
{
	return fn(x) + 1;
}

long plain_own(long x)
{
	long (*volatile t[2])(long) = { sq, neg };

	return t[0](x) + t[1](x);
}

long plain_tail(long (*fn)(long, long), long a, long b)
{
	return fn(a, b);
}
