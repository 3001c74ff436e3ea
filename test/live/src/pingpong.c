/* pingpong - context-switch storm: pairs of tasks ping-ponging a byte over pipes across CPUs.
 *
 * USAGE: pingpong [pairs] [seconds] [cross|local]
 * cross (default): pair i runs one task pinned to CPU (2i) % ncpu and one to CPU (2i+1) % ncpu.
 * Every byte is a wakeup of a task on the other CPU (a rescheduling IPI, a context switch on
 * both sides, the CPU idling in between).
 * local: both tasks of pair i are pinned to CPU i % ncpu. Every byte is a switch from the
 * writer to the reader on the same CPU, with no idle time in between, so __schedule and
 * finish_task_switch take a large, steady share of the CPU whatever the wakeup path costs.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* Serve side of a local pair: after this many round trips, sleep PAUSE_NS so the CPU goes idle.
 * A same-CPU pipe ping-pong that never sleeps starves every other task on that CPU on 6.x
 * kernels, whatever its nice level (a `sleep 1` took 7 s): the capture and the test harness
 * would stall with it. */
#define BURST_ROUND_TRIPS 500
#define PAUSE_NS 1000000L

static void bounce(int in, int out, int serve, int paced, time_t end)
{
	const struct timespec pause = { 0, PAUSE_NS };
	char byte = 0;
	long trips = 0;

	if (serve && write(out, &byte, 1) != 1)
		_exit(1);
	while (time(NULL) < end) {
		ssize_t got = read(in, &byte, 1);

		if (got == 0)           /* the partner has ended */
			_exit(0);
		if (got != 1)
			_exit(1);
		if (paced && serve && ++trips % BURST_ROUND_TRIPS == 0)
			nanosleep(&pause, NULL);
		if (write(out, &byte, 1) != 1)
			_exit(1);
	}
	_exit(0);
}

int main(int argc, char **argv)
{
	int pairs = argc > 1 ? atoi(argv[1]) : 1;
	time_t end = time(NULL) + (argc > 2 ? atoi(argv[2]) : 60);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int local = argc > 3 && strcmp(argv[3], "local") == 0;

	if (pairs < 1 || pairs > 64 || (argc > 3 && !local && strcmp(argv[3], "cross") != 0)) {
		fprintf(stderr, "usage: pingpong [pairs 1..64] [seconds] [cross|local]\n");
		return 2;
	}
	for (int p = 0; p < pairs; p++) {
		int ab[2], ba[2];

		if (pipe(ab) != 0 || pipe(ba) != 0) {
			perror("pingpong: pipe");
			return 1;
		}
		if (fork() == 0) {
			pin_to((local ? p : 2 * p) % cpus);
			close(ab[0]); close(ba[1]);
			bounce(ba[0], ab[1], 1, local, end);
		}
		if (fork() == 0) {
			pin_to((local ? p : 2 * p + 1) % cpus);
			close(ba[0]); close(ab[1]);
			bounce(ab[0], ba[1], 0, local, end);
		}
		close(ab[0]); close(ab[1]); close(ba[0]); close(ba[1]);
	}
	while (wait(NULL) > 0)
		;
	return 0;
}
