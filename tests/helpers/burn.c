/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A CPU burner with a known call path, for the sampler tests and the benchmark:
 *
 *   burn [SECONDS]                 main -> burn_outer -> burn_middle -> burn_leaf, in user space
 *   burn --syscall [SECONDS]       getppid() in a loop: the time goes to the kernel (comm "burn-sys")
 *   burn --sendto [SECONDS]        sendto() of datagrams to a UDP socket of its own on the loopback,
 *                                  never read: the time goes to the kernel's sending (and receiving)
 *   burn --jit [SECONDS]           runs machine code copied into an anonymous executable mapping and
 *                                  describes it in /tmp/perf-PID.map as "jit_burn_loop" (x86-64 only)
 *   burn --file-code PATH [SECONDS] the same code, written to PATH (not an ELF file) and mapped from it
 *   burn --thread NAME [SECONDS]   the user-space path in a thread named NAME, while the main thread
 *                                  (comm "burn") waits for it and never runs
 *   burn --threads N [SECONDS]     the user-space path in N threads (at most 64) named COMM-0 ...
 *                                  COMM-(N-1) after the process's comm, each a quarter of a CPU
 *                                  (10 ms of every 40), while the main thread waits for them
 *   burn --stuck N [SECONDS]       N threads (3 to 64) named COMM-0 ... COMM-(N-1), each a twentieth of a
 *                                  CPU (5 ms of every 100) for the first third of the seconds; then COMM-2
 *                                  spins alone while the others sleep: one thread of a pool stuck
 *   burn --rename NAME [SECONDS]   the user-space path, renaming itself NAME (PR_SET_NAME) when half
 *                                  the seconds have passed
 *   burn --requests [SECONDS]      a thread for each request, two at a time, each one call of the
 *                                  user-space path (a few milliseconds) and gone, named COMM-0,
 *                                  COMM-1, ... on and on after the process's comm (its first 8
 *                                  bytes), while the main thread accepts them (a twentieth of
 *                                  that work for each) and waits for them
 *   burn --requests-idle [SECONDS] the same, made by a thread named "acceptor" with none of the
 *                                  accepting work, while the main thread only waits for it, never
 *                                  sampled; then the process stays, its requests' threads gone,
 *                                  until it is killed
 *
 * Built with frame pointers and no sibling calls, so every frame is in the chain.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

static double now(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* The volatile local gives the function a stack frame: GCC 12 sets up no frame pointer in a leaf
 * function that needs no stack, whatever -fno-omit-frame-pointer says, and the caller would then
 * vanish from frame-pointer stacks (as it does for perf). */
__attribute__((noinline)) static uint64_t burn_leaf(uint64_t n) {
        volatile uint64_t frame = n;
        uint64_t x = frame;
        for (uint64_t i = 0; i < 2000000; i++)
                x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        frame = x;
        return frame;
}

__attribute__((noinline)) static uint64_t burn_middle(uint64_t n) {
        uint64_t r = burn_leaf(n);
        sink += r;
        return r ^ n;
}

__attribute__((noinline)) static uint64_t burn_outer(double end) {
        uint64_t n = 0;
        while (now() < end)
                n += burn_middle(n);
        sink += n;
        return n;
}

__attribute__((noinline)) static void burn_syscall(double end) {
        while (now() < end)
                for (int i = 0; i < 1000; i++)
                        (void) syscall(SYS_getppid);
}

static int burn_sendto(double end) {
        struct sockaddr_in to = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof(to);
        char buf[512] = "";
        int rx = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), tx = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

        if (rx < 0 || tx < 0 || bind(rx, (struct sockaddr *) &to, sizeof(to)) < 0 ||
            getsockname(rx, (struct sockaddr *) &to, &len) < 0)
                return 1;
        while (now() < end)
                for (int i = 0; i < 100; i++)
                        (void) sendto(tx, buf, sizeof(buf), 0, (struct sockaddr *) &to, sizeof(to));
        return 0;
}

#if defined(__x86_64__)
/* mov %rdi,%rax; 1: dec %rax; jnz 1b; ret */
static const uint8_t loop_code[] = { 0x48, 0x89, 0xf8, 0x48, 0xff, 0xc8, 0x75, 0xfb, 0xc3 };

__attribute__((noinline)) static void burn_code(void *code, double end) {
        uint64_t (*f)(uint64_t) = (uint64_t (*)(uint64_t)) code;
        while (now() < end)
                sink += f(20000000);
}

static int run_jit(double end) {
        char path[64];
        void *code;
        FILE *f;

        code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (code == MAP_FAILED)
                return 1;
        memcpy(code, loop_code, sizeof(loop_code));
        if (mprotect(code, 4096, PROT_READ | PROT_EXEC) < 0)
                return 1;
        snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int) getpid());
        f = fopen(path, "we");
        if (!f)
                return 1;
        fprintf(f, "%lx %zx jit_burn_loop\n", (unsigned long) (uintptr_t) code, sizeof(loop_code));
        fclose(f);
        burn_code(code, end);
        unlink(path);
        return 0;
}

static int run_file_code(const char *path, double end) {
        uint8_t page[4096] = {};
        void *code;
        int fd;

        memcpy(page, loop_code, sizeof(loop_code));
        fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 || write(fd, page, sizeof(page)) != (ssize_t) sizeof(page))
                return 1;
        code = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
        if (code == MAP_FAILED)
                return 1;
        close(fd);
        burn_code(code, end);
        return 0;
}
#endif

static double thread_end;

static void *burn_thread(void *userdata) {
        (void) userdata;
        sink += burn_outer(thread_end);
        return NULL;
}

static int run_thread(const char *name, double end) {
        pthread_t t;

        thread_end = end;
        if (pthread_create(&t, NULL, burn_thread, NULL) != 0)
                return 1;
        (void) pthread_setname_np(t, name);
        return pthread_join(t, NULL) == 0 ? 0 : 1;
}

static void *pool_thread(void *userdata) {
        (void) userdata;
        while (now() < thread_end) {
                struct timespec pause = { 0, 30 * 1000 * 1000 };

                sink += burn_outer(now() + 0.01);
                (void) nanosleep(&pause, NULL);
        }
        return NULL;
}

/* --stuck: until stuck_at, a twentieth of a CPU; then thread 2 spins to the end and the others sleep. */
static double stuck_at;

static void *stuck_thread(void *userdata) {
        bool stuck = (intptr_t) userdata == 2;

        while (now() < stuck_at) {
                struct timespec pause = { 0, 95 * 1000 * 1000 };

                sink += burn_outer(now() + 0.005);
                (void) nanosleep(&pause, NULL);
        }
        if (stuck)
                sink += burn_outer(thread_end);
        else
                while (now() < thread_end) {
                        struct timespec pause = { 0, 50 * 1000 * 1000 };
                        (void) nanosleep(&pause, NULL);
                }
        return NULL;
}

/* --requests: each thread names itself as it starts, so that none of its work is under the
 * process's name. */
static char request_comm[16];

static void *request_thread(void *userdata) {
        char name[16];

        snprintf(name, sizeof(name), "%.8s-%u", request_comm, (unsigned) (uintptr_t) userdata);
        (void) prctl(PR_SET_NAME, name);
        sink += burn_middle((uint64_t) (uintptr_t) userdata);
        return NULL;
}

/* The main thread's part: sampled in the slice, it names the process its threads are of. */
__attribute__((noinline)) static uint64_t accept_request(uint64_t n) {
        volatile uint64_t frame = n;
        uint64_t x = frame;
        for (uint64_t i = 0; i < 200000; i++)
                x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        frame = x;
        return frame;
}

static int run_requests(double end, bool accept) {
        unsigned n = 0;

        while (now() < end) {
                pthread_t t[2];

                if (accept)
                        sink += accept_request(n);
                for (int i = 0; i < 2; i++)
                        if (pthread_create(&t[i], NULL, request_thread, (void *) (uintptr_t) n++) != 0)
                                return 1;
                for (int i = 0; i < 2; i++)
                        if (pthread_join(t[i], NULL) != 0)
                                return 1;
        }
        return 0;
}

static double acceptor_end;

static void *acceptor_thread(void *userdata) {
        (void) prctl(PR_SET_NAME, "acceptor");
        return (void *) (intptr_t) run_requests(acceptor_end, false);
}

/* --requests-idle: the main thread waits on the acceptor, then on nothing, to be killed. */
static int run_requests_idle(double end) {
        pthread_t t;
        void *r;

        acceptor_end = end;
        if (pthread_create(&t, NULL, acceptor_thread, NULL) != 0 || pthread_join(t, &r) != 0 || r)
                return 1;
        for (;;)
                (void) pause();
}

static int run_threads(int n, double end, bool stuck) {
        pthread_t t[64];
        char comm[16] = "", name[16];
        int r = 0;

        if (n < (stuck ? 3 : 1) || n > 64)
                return 2;
        thread_end = end;
        (void) prctl(PR_GET_NAME, comm);
        for (int i = 0; i < n; i++) {
                if (pthread_create(&t[i], NULL, stuck ? stuck_thread : pool_thread, (void *) (intptr_t) i) != 0)
                        return 1;
                snprintf(name, sizeof(name), "%.12s-%d", comm, i);
                (void) pthread_setname_np(t[i], name);
        }
        for (int i = 0; i < n; i++)
                r |= pthread_join(t[i], NULL) != 0;
        return r;
}

int main(int argc, char *argv[]) {
        double seconds = 5;
        const char *mode = NULL, *path = NULL;
        int i = 1;

        if (i < argc && argv[i][0] == '-' && argv[i][1] == '-') {
                mode = argv[i++];
                if (strcmp(mode, "--file-code") == 0 || strcmp(mode, "--thread") == 0 ||
                    strcmp(mode, "--threads") == 0 || strcmp(mode, "--stuck") == 0 || strcmp(mode, "--rename") == 0) {
                        if (i >= argc)
                                return 2;
                        path = argv[i++];
                }
        }
        if (i < argc)
                seconds = atof(argv[i]);

        double end = now() + seconds;

        if (!mode) {
                sink += burn_outer(end);
                return 0;
        }
        if (strcmp(mode, "--syscall") == 0) {
                (void) prctl(PR_SET_NAME, "burn-sys");
                burn_syscall(end);
                return 0;
        }
        if (strcmp(mode, "--sendto") == 0)
                return burn_sendto(end);
        if (strcmp(mode, "--thread") == 0)
                return run_thread(path, end);
        if (strcmp(mode, "--threads") == 0)
                return run_threads(atoi(path), end, false);
        (void) prctl(PR_GET_NAME, request_comm);
        if (strcmp(mode, "--requests") == 0)
                return run_requests(end, true);
        if (strcmp(mode, "--requests-idle") == 0)
                return run_requests_idle(end);
        if (strcmp(mode, "--stuck") == 0) {
                stuck_at = end - seconds * 2 / 3;
                return run_threads(atoi(path), end, true);
        }
        if (strcmp(mode, "--rename") == 0) {
                sink += burn_outer(end - seconds / 2);
                (void) prctl(PR_SET_NAME, path);
                sink += burn_outer(end);
                return 0;
        }
#if defined(__x86_64__)
        if (strcmp(mode, "--jit") == 0)
                return run_jit(end);
        if (strcmp(mode, "--file-code") == 0)
                return run_file_code(path, end);
#endif
        fprintf(stderr, "burn: unsupported mode %s\n", mode);
        return 2;
}
