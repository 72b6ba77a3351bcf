/* workload.c -- a container workload (built static, shipped only inside its image): a named spin, or JIT-like code named by a perf map in its /tmp */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

/* a name no file on the host has: only the image's binary can name it */
__attribute__((noinline)) static void ctr_only_spin(void)
{
	volatile unsigned long n = 0;

	for (;;)
		n++;
}

/*
 * "JIT" code: one page of anonymous executable memory spinning in a loop, and a
 * perf map under the process's own pid, as a JIT writes it, in its own /tmp.
 */
static int jit(void)
{
	unsigned char *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char path[64];
	FILE *f;

	if (code == MAP_FAILED)
		return 1;
	/* push %rbp; mov %rsp,%rbp: a frame, as JIT code keeps one; then nops and a jump back */
	memcpy(code, "\x55\x48\x89\xe5", 4);
	memset(code + 4, 0x90, 60);
	code[64] = 0xeb;
	code[65] = (unsigned char)-62;	/* to code + 4 */
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	f = fopen(path, "w");
	if (!f)
		return 1;
	fprintf(f, "%lx 42 jit_ctr_loop\n", (unsigned long)code);
	fclose(f);
	((void (*)(void))code)();
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "jit"))
		return jit();
	ctr_only_spin();
	return 0;
}
