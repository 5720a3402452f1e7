#include <stdio.h>
#include <string.h>
static int twice(int x) { return 2 * x; }
static int len(const char *s) { return (int)strlen(s); }
int main(int argc, char **argv)
{
	int (*volatile f)(int) = twice;
	if (argc > 1 && !strcmp(argv[1], "confused"))
		f = (int (*)(int))(void *)len;
	printf("%d\n", f(21));
	return 0;
}
