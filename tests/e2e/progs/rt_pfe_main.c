// SPDX-License-Identifier: MIT
/* tests/e2e/rt_pfe_clean.sh: calls through the library's table, then
 * prints how many of its entry pages stayed clean. */
#include <stdio.h>

int pfe_pages(int *clean);
int pfe_call(int i, int x);

int main(void)
{
	int clean, n = pfe_pages(&clean);

	printf("calls %d %d %d\n", pfe_call(0, 1), pfe_call(1, 1),
	       pfe_call(2, 1));
	printf("pages %d clean %d\n", n, clean);
	return 0;
}
