/* pingpong - context-switch storm: pairs of tasks ping-ponging a byte over pipes across CPUs.
 *
 * USAGE: pingpong [pairs] [seconds]
 * Pair i runs one task pinned to CPU (2i) % ncpu and one to CPU (2i+1) % ncpu. Every byte is a
 * wakeup of a task on the other CPU (an IPI, a context switch on both sides, the CPU idling
 * in between), so the kernel time lands in schedule/__schedule/try_to_wake_up.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void bounce(int in, int out, int serve, time_t end)
{
	char byte = 0;

	if (serve && write(out, &byte, 1) != 1)
		_exit(1);
	while (time(NULL) < end) {
		if (read(in, &byte, 1) != 1 || write(out, &byte, 1) != 1)
			_exit(1);
	}
	_exit(0);
}

int main(int argc, char **argv)
{
	int pairs = argc > 1 ? atoi(argv[1]) : 1;
	time_t end = time(NULL) + (argc > 2 ? atoi(argv[2]) : 60);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (pairs < 1 || pairs > 64) {
		fprintf(stderr, "usage: pingpong [pairs 1..64] [seconds]\n");
		return 2;
	}
	for (int p = 0; p < pairs; p++) {
		int ab[2], ba[2];

		if (pipe(ab) != 0 || pipe(ba) != 0) {
			perror("pingpong: pipe");
			return 1;
		}
		if (fork() == 0) {
			pin_to((2 * p) % cpus);
			bounce(ba[0], ab[1], 1, end);
		}
		if (fork() == 0) {
			pin_to((2 * p + 1) % cpus);
			bounce(ab[0], ba[1], 0, end);
		}
		close(ab[0]); close(ab[1]); close(ba[0]); close(ba[1]);
	}
	while (wait(NULL) > 0)
		;
	return 0;
}
