/* trap_fifo's library: the confused call, in a module whose file the
 * test replaces before the call (tests/e2e/trap_fifo.sh). */
typedef int (*tf_fn)(int);

int tf_call(tf_fn f, int x)
{
	return f(x);
}
