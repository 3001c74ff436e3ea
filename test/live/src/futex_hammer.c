/* futex_hammer - many threads hammering a few futexes (live-lab load).
 *
 * USAGE: futex_hammer [threads] [futexes] [seconds]
 * Half the threads FUTEX_WAIT on a word whose value they expect to be 0 while it
 * flips, the other half FUTEX_WAKE it: every call takes the futex hash-bucket
 * spin lock, so the kernel time concentrates in futex_wait/futex_wake.
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static uint32_t *words;
static int nwords;
static volatile int stop;

static long futex(uint32_t *uaddr, int op, uint32_t val)
{
	struct timespec ts = { 0, 1000 * 1000 };	/* waiters never sleep long */
	return syscall(SYS_futex, uaddr, op, val, op == FUTEX_WAIT_PRIVATE ? &ts : NULL, NULL, 0);
}

static void *hammer(void *arg)
{
	long id = (long)arg;
	unsigned i = (unsigned)id;

	while (!stop) {
		uint32_t *w = &words[i++ % nwords];
		if (id & 1) {
			__atomic_fetch_add(w, 1, __ATOMIC_RELAXED);
			futex(w, FUTEX_WAKE_PRIVATE, 1);
		} else {
			futex(w, FUTEX_WAIT_PRIVATE, __atomic_load_n(w, __ATOMIC_RELAXED));
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 16;
	int seconds = argc > 3 ? atoi(argv[3]) : 60;
	pthread_t *tids = calloc(threads, sizeof(*tids));

	nwords = argc > 2 ? atoi(argv[2]) : 2;
	words = calloc(nwords, 64);
	if (!tids || !words || threads < 1 || nwords < 1) {
		fprintf(stderr, "usage: futex_hammer [threads] [futexes] [seconds]\n");
		return 2;
	}
	for (long t = 0; t < threads; t++)
		pthread_create(&tids[t], NULL, hammer, (void *)t);
	sleep(seconds);
	stop = 1;
	for (int t = 0; t < threads; t++)
		pthread_join(tids[t], NULL);
	return 0;
}
