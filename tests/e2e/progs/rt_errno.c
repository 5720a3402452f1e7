/* The runtime must leave errno as C promises it at main: zero. */
#include <errno.h>
#include <stdio.h>

int main(void)
{
	printf("errno=%d\n", errno);
	return errno != 0;
}
