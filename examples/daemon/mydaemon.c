// SPDX-License-Identifier: MIT
/*
 * mydaemon: a small service for docs/ecosystem.md, "On a server". Every
 * tick it runs the jobs of its table; one job was registered with a
 * handler of another type (a plugin's int (*)(int) cast to the table's
 * type), which is the CFI failure the page shows.
 *
 *   mydaemon [-n TICKS] [-i MS] [-d]
 *
 * -n: stop after TICKS ticks (default: run until killed); -i: MS between
 * ticks (default 1000); -d: detach as daemon(3) does (stdio to /dev/null).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

struct job;
typedef int (*job_fn)(struct job *);

struct job {
	const char *name;
	job_fn run;
	long runs;
};

static int job_rotate(struct job *j)
{
	return j->runs % 60 == 0;
}

static int job_flush(struct job *j)
{
	return fflush(stdout) != 0 || !j;
}

/* A plugin's counter, of another type: the bug. */
static int plugin_count(int n)
{
	return n + 1;
}

static struct job jobs[] = {
	{ "rotate", job_rotate, 0 },
	{ "flush", job_flush, 0 },
	{ "count", (job_fn)(void *)plugin_count, 0 },
};

__attribute__((noinline)) static int run_jobs(void)
{
	int bad = 0;

	for (size_t i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++) {
		bad += jobs[i].run(&jobs[i]) < 0;
		jobs[i].runs++;
	}
	return bad;
}

int main(int argc, char **argv)
{
	long ticks = -1, ms = 1000;
	int c;

	while ((c = getopt(argc, argv, "n:i:d")) != -1) {
		if (c == 'n')
			ticks = atol(optarg);
		else if (c == 'i')
			ms = atol(optarg);
		else if (c == 'd' && daemon(0, 0))
			return 1;
		else if (c != 'd')
			return 2;
	}
	printf("mydaemon: %zu jobs, a tick every %ld ms\n",
	       sizeof(jobs) / sizeof(jobs[0]), ms);
	fflush(stdout);
	for (long t = 0; ticks < 0 || t < ticks; t++) {
		struct timespec ts = { ms / 1000, ms % 1000 * 1000000 };

		run_jobs();
		nanosleep(&ts, NULL);
	}
	return 0;
}
