// SPDX-License-Identifier: MIT
/*
 * A callback cast between pointer types, as real C code does: the table
 * holds void (*)(void *) and the function takes struct item *. With
 * fineibt-cc's default (-fsanitize-cfi-icall-generalize-pointers) pointer
 * parameters hash alike and this runs; with FINEIBT_CC_EXACT=1 kCFI's
 * exact types call it a type confusion. Prints "generalized ok".
 */
#include <stdio.h>

struct item {
	int value;
};

typedef void (*visit_t)(void *);

static void bump(struct item *it)
{
	it->value++;
}

static visit_t volatile visit = (visit_t)bump;

int main(void)
{
	struct item it = { 41 };

	visit(&it);
	if (it.value != 42)
		return 1;
	printf("generalized ok\n");
	return 0;
}
