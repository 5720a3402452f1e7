/*
 * trap_reentry's uninstrumented library (plain clang-22): a function and
 * its address as data, so the program holds a raw pointer to it (not a
 * dlsym veneer) and a checking caller traps on it.
 */
int reentry_plain(int x)
{
	return x + 1;
}

int (*const reentry_plain_ptr)(int) = reentry_plain;
