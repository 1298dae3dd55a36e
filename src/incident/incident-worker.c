/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A thread per job, joined on the event loop; see incident-worker.h. The thread tells the loop it
 * is done through an eventfd: sd-event is not thread-safe, so the thread never touches it.
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "basic/alloc-util.h"
#include "basic/fileio.h"
#include "basic/log.h"
#include "incident/incident-worker.h"

struct IncidentWorker {
        sd_event_source *source;
        int efd;
        IncidentWorkDoneFunc done;
        void *userdata;

        bool running;
        pthread_t thread;
        IncidentWorkFunc work;
        void *job;
};

static void *worker_main(void *p) {
        IncidentWorker *w = p;
        uint64_t one = 1;

        w->work(w->job);
#ifdef __GLIBC__
        /* A bundle's slice is read, folded and written in memory the job frees at its end. glibc
         * keeps what a thread's arena freed resident below any block still in use, so each bundle
         * would leave the daemon's RSS at the largest one's peak (test-reliability-leak once saw
         * RSS grow 18 MiB more than the heap on a busy host): the pages go back now, once a
         * bundle. */
        (void) malloc_trim(0);
#endif
        /* An eventfd write of 1 cannot block or fail short of a counter overflow. */
        (void) !write(w->efd, &one, sizeof one);
        return NULL;
}

/* Joins the thread and hands the job back. */
static void reap(IncidentWorker *w, bool call_done) {
        uint64_t n;
        void *job = w->job;

        if (!w->running)
                return;
        (void) pthread_join(w->thread, NULL);
        (void) !read(w->efd, &n, sizeof n);
        w->running = false;
        w->job = NULL;
        if (call_done)
                w->done(job, w->userdata);
}

static int on_worker_done(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        reap(userdata, true);
        return 0;
}

int incident_worker_new(sd_event *e, int64_t priority, IncidentWorkDoneFunc done, void *userdata,
                        IncidentWorker **ret) {
        _cleanup_(incident_worker_freep) IncidentWorker *w = new0(IncidentWorker, 1);
        int r;

        if (!w)
                return -ENOMEM;
        w->done = done;
        w->userdata = userdata;
        w->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (w->efd < 0)
                return -errno;
        r = sd_event_add_io(e, &w->source, w->efd, EPOLLIN, on_worker_done, w);
        if (r < 0)
                return r;
        r = sd_event_source_set_priority(w->source, priority);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(w);
        return 0;
}

IncidentWorker *incident_worker_free(IncidentWorker *w) {
        if (!w)
                return NULL;
        reap(w, false);
        sd_event_source_disable_unref(w->source);
        safe_close(w->efd);
        free(w);
        return NULL;
}

bool incident_worker_busy(const IncidentWorker *w) {
        return w->running;
}

int incident_worker_start(IncidentWorker *w, IncidentWorkFunc work, void *job) {
        sigset_t all, saved;
        int r;

        if (w->running)
                return -EBUSY;
        w->work = work;
        w->job = job;
        /* Signals are the event loop's: the thread takes none of them. */
        sigfillset(&all);
        r = pthread_sigmask(SIG_SETMASK, &all, &saved);
        if (r != 0)
                return -r;
        r = pthread_create(&w->thread, NULL, worker_main, w);
        (void) pthread_sigmask(SIG_SETMASK, &saved, NULL);
        if (r != 0) {
                w->job = NULL;
                return -r;
        }
        w->running = true;
        return 0;
}

void incident_worker_wait(IncidentWorker *w) {
        reap(w, true);
}
