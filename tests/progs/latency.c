// SPDX-License-Identifier: GPL-2.0
/*
 * latency: how long a task that wants the CPU can be kept from it.
 *
 *   latency STOPFILE
 *
 * One thread per CPU, pinned to it, sleeps 5 ms at a time and measures how
 * late it wakes up, until STOPFILE exists.  Kernel code that loops without
 * yielding (no cond_resched() on a kernel without forced preemption) keeps
 * the thread on its CPU waiting for as long as the loop runs.  Prints
 * "latency: cpu N max M ms" per CPU and "latency: max M ms".
 * Exit status: 0, or 2 on usage or setup errors.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define TICK_NS 5000000L

static const char *stop_file;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void *probe(void *arg)
{
	long cpu = (long)arg;
	struct timespec tick = { 0, TICK_NS };
	double worst = 0;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set)) {
		fprintf(stderr, "latency: cannot pin a thread to cpu %ld\n", cpu);
		exit(2);
	}
	while (access(stop_file, F_OK)) {
		double start = now_ms(), late;

		nanosleep(&tick, NULL);
		late = now_ms() - start - TICK_NS / 1e6;
		if (late > worst)
			worst = late;
	}
	printf("latency: cpu %ld max %.0f ms\n", cpu, worst);
	return (void *)(long)(worst + 0.5);
}

int main(int argc, char **argv)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN), cpu, worst = 0;
	pthread_t threads[64];

	if (argc != 2 || cpus < 1 || cpus > 64) {
		fprintf(stderr, "usage: latency STOPFILE\n");
		return 2;
	}
	stop_file = argv[1];
	for (cpu = 0; cpu < cpus; cpu++)
		if (pthread_create(&threads[cpu], NULL, probe, (void *)cpu)) {
			fprintf(stderr, "latency: cannot start a thread\n");
			return 2;
		}
	for (cpu = 0; cpu < cpus; cpu++) {
		void *ms;

		pthread_join(threads[cpu], &ms);
		if ((long)ms > worst)
			worst = (long)ms;
	}
	printf("latency: max %ld ms\n", worst);
	return 0;
}
