/* rt_ctor: the kCFI library rt_ctor.c's first constructor dlopens. */
int ctor_lib_twice(int x)
{
	return 2 * x;
}
