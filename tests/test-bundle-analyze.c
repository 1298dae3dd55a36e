/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bundle-analyze: folded lines read with bounds, top functions (self and total), the z-score, the
 * unusual-in-slice ranking putting a planted anomaly first while stable noise stays out, and each
 * rise's top function, the kernel's where a system call did the work (the one-line answer and where
 * its rise ran: test-bundle-answer.c; the activity grid: test-bundle-activity.c; interrupt work:
 * test-bundle-irq.c).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"
#include "folded-test-util.h"

#include "bundle/bundle-analyze.h"

static void test_folded_parse(void **state) {
        _cleanup_(folded_donep) Folded f = FOLDED_NULL;
        load_text("a;b;c 10\n"
                  "a;b 5\r\n"
                  "no-count\n"
                  "x;y -3\n"
                  "x;y 3 4\n"
                  " 7\n"
                  "\n"
                  "z 0\n"
                  "sp ace;f 2\n",
                  &f);
        assert_int_equal(f.n, 4); /* "x;y 3 4" is read as stack "x;y 3" */
        assert_int_equal(f.total, 10 + 5 + 4 + 2);
        assert_int_equal(f.n_skipped, 3);
        folded_sort_by_count(&f);
        assert_string_equal(f.lines[0].stack, "a;b;c");
}

static void test_functions(void **state) {
        _cleanup_(folded_donep) Folded f = FOLDED_NULL;
        FunctionStat *s = NULL;
        size_t n = 0;

        load_text("p;main;work;spin 6\np;main;work 2\nq;main;main;rec 2\n", &f);
        assert_int_equal(folded_functions(&f, &s, &n), 0);
        assert_int_equal(n, 4);
        assert_string_equal(s[0].name, "spin");
        assert_int_equal(s[0].self, 6);
        for (size_t i = 0; i < n; i++)
                if (streq(s[i].name, "main")) {
                        assert_int_equal(s[i].self, 0);
                        assert_int_equal(s[i].total, 10); /* counted once per stack even when recursive */
                } else if (streq(s[i].name, "work")) {
                        assert_int_equal(s[i].self, 2);
                        assert_int_equal(s[i].total, 8);
                }
        function_stats_free(s, n);
}

static void test_z(void **state) {
        assert_true(proportion_z(10, 100, 10, 100) == 0);
        assert_true(proportion_z(0, 0, 1, 1) == 0);
        /* 20% vs 10% of 1000 each: z = 0.1 / sqrt(0.15 * 0.85 * 0.002) = 6.26 */
        double z = proportion_z(200, 1000, 100, 1000);
        assert_true(z > 6.25 && z < 6.27);
        assert_true(proportion_z(100, 1000, 200, 1000) < 0);
}

/* The motivating case: kubelet at 0.8% of the baseline, 6.5% of the slice in mem_cgroup_nr_lru_pages,
 * noise processes with stable shares (slightly lower in the slice, as the rise must come from somewhere). */
static void test_rises_planted_anomaly(void **state) {
        _cleanup_(folded_donep) Folded slice = FOLDED_NULL, base = FOLDED_NULL;
        Rise *r = NULL;
        size_t n = 0;

        load_text("java;main;compute 3000\n"
                  "nginx;main;epoll_wait 2600\n"
                  "postgres;main;scan 2200\n"
                  "swapper;do_idle;intel_idle 1550\n"
                  "kubelet;main;read;mem_cgroup_nr_lru_pages 600\n"
                  "kubelet;main;futex 50\n",
                  &slice);
        load_text("java;main;compute 32000\n"
                  "nginx;main;epoll_wait 27800\n"
                  "postgres;main;scan 23500\n"
                  "swapper;do_idle;intel_idle 15900\n"
                  "kubelet;main;read;mem_cgroup_nr_lru_pages 100\n"
                  "kubelet;main;futex 700\n",
                  &base);
        assert_int_equal(slice.total, 10000);

        assert_int_equal(folded_rises(&slice, &base, RISE_PROCESS, 5, &r, &n), 0);
        assert_int_equal(n, 1); /* only kubelet rose; the noise fell a little */
        assert_string_equal(r[0].name, "kubelet");
        assert_true(r[0].slice_share > 0.064 && r[0].slice_share < 0.066);
        assert_true(r[0].baseline_share > 0.0079 && r[0].baseline_share < 0.0081);
        assert_true(r[0].z > 10);
        assert_string_equal(r[0].top_function, "mem_cgroup_nr_lru_pages");
        rises_free(r, n);

        assert_int_equal(folded_rises(&slice, &base, RISE_FUNCTION, 5, &r, &n), 0);
        assert_true(n >= 1);
        assert_string_equal(r[0].name, "kubelet;mem_cgroup_nr_lru_pages");
        for (size_t i = 0; i < n; i++)
                assert_true(r[i].slice_share > r[i].baseline_share);
        rises_free(r, n);
}

/* A burst in the event's seconds alone: diluted in the slice, plain against the rest. */
static void test_rest_and_burst(void **state) {
        _cleanup_(folded_donep) Folded slice = FOLDED_NULL, base = FOLDED_NULL, near = FOLDED_NULL, rest = FOLDED_NULL;
        Rise *r = NULL;
        size_t n = 0;

        /* 70 s of slice, 10 s of it around the event, where kubelet spends 65 of its 69 samples. */
        load_text("java;main;compute 6000\n"
                  "swapper;do_idle;intel_idle 3931\n"
                  "kubelet;main;read;mem_cgroup_nr_lru_pages 65\n"
                  "kubelet;main;futex 4\n",
                  &slice);
        load_text("java;main;compute 600\n"
                  "swapper;do_idle;intel_idle 335\n"
                  "kubelet;main;read;mem_cgroup_nr_lru_pages 65\n",
                  &near);
        load_text("java;main;compute 30000\n"
                  "swapper;do_idle;intel_idle 19960\n"
                  "kubelet;main;futex 40\n"
                  "nginx;main;epoll_wait 7\n",
                  &base);

        assert_int_equal(folded_rest(&slice, &base, &near, &rest), 0);
        assert_int_equal(rest.total, slice.total + base.total - near.total);
        folded_sort_by_count(&rest);
        assert_int_equal(rest.n, 4); /* mem_cgroup_nr_lru_pages is all near the event: gone */
        assert_string_equal(rest.lines[0].stack, "java;main;compute");
        assert_int_equal(rest.lines[0].count, 35400);
        assert_string_equal(rest.lines[1].stack, "swapper;do_idle;intel_idle");
        assert_int_equal(rest.lines[1].count, 23556);
        assert_string_equal(rest.lines[2].stack, "kubelet;main;futex");
        assert_int_equal(rest.lines[2].count, 44);
        assert_string_equal(rest.lines[3].stack, "nginx;main;epoll_wait");

        /* The event's seconds against the rest: 6.5% against 0.08%. */
        assert_int_equal(folded_rises(&near, &rest, RISE_PROCESS, 5, &r, &n), 0);
        assert_int_equal(n, 1);
        assert_string_equal(r[0].name, "kubelet");
        assert_true(r[0].slice_share > 0.064 && r[0].slice_share < 0.066);
        assert_true(r[0].z > 20);
        assert_string_equal(r[0].top_function, "mem_cgroup_nr_lru_pages");
        rises_free(r, n);

        /* minus holding more than there is (a file edited by hand): nothing goes negative. */
        folded_done(&rest);
        assert_int_equal(folded_rest(&near, &base, &slice, &rest), 0);
        assert_int_equal(rest.total, (600 + 30000 - 6000) + (335 + 19960 - 3931) + (40 - 4) + 7);
}

/* Per-CPU kernel threads by their key; every other comm as it is. */
static void test_comm_key(void **state) {
        static const char *const cases[][2] = {
                { "ksoftirqd/3", "ksoftirqd/*" },   { "ksoftirqd/15", "ksoftirqd/*" },
                { "migration/0", "migration/*" },   { "rcuc/2", "rcuc/*" },
                { "cpuhp/1", "cpuhp/*" },           { "idle_inject/0", "idle_inject/*" },
                { "irq_work/7", "irq_work/*" },     { "rcuop/5", "rcuop/*" },
                { "kworker/0:1", "kworker/*" },     { "kworker/3:2H", "kworker/*" },
                { "kworker/u8:3", "kworker/*" },    { "kworker/R-kblockd", "kworker/*" },
                { "ksoftirqd/*", "ksoftirqd/*" },   { "kworker/*", "kworker/*" },
                /* not merged */
                { "swapper/3", "swapper/3" },       { "swapper", "swapper" },
                { "irq/45-eth0", "irq/45-eth0" },   { "jbd2/sda1-8", "jbd2/sda1-8" },
                { "GC_Thread#0", "GC_Thread#0" },   { "Worker/3", "Worker/3" },
                { "ksoftirqd/", "ksoftirqd/" },     { "/3", "/3" },
                { "kworker/", "kworker/" },         { "ksoftirqd/3a", "ksoftirqd/3a" },
                { "kubelet", "kubelet" },           { "a/b/1", "a/b/1" },
        };
        char buf[FOLDED_COMM_KEY_MAX];

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                assert_string_equal(folded_comm_key(cases[i][0], buf), cases[i][1]);
}

/* Each process rise's top function is its own, also where one comm is the start of another's. */
static void test_rises_top_function_per_process(void **state) {
        _cleanup_(folded_donep) Folded slice = FOLDED_NULL, base = FOLDED_NULL;
        Rise *r = NULL;
        size_t n = 0;

        load_text("java;main 800\nkube;main;alpha 100\nkubelet;main;beta 100\nkubelet;main;gamma 5\n", &slice);
        load_text("java;main 9000\nkubelet;main;gamma 50\n", &base);
        assert_int_equal(folded_rises(&slice, &base, RISE_PROCESS, SIZE_MAX, &r, &n), 0);
        assert_int_equal(n, 2);
        for (size_t i = 0; i < n; i++)
                assert_string_equal(r[i].top_function, streq(r[i].name, "kube") ? "alpha" : "beta");
        rises_free(r, n);
}

/* A rise in the kernel, as tprofd recorded it on Linux 6.18: an agent reading the cgroup v1
 * memory.stat of 300 cgroups (open, read, close; memory_stat_show() of mm/memcontrol.c calls
 * memcg1_stat_format() of mm/memcontrol-v1.c) went from a few samples to 41 in the event's
 * seconds, spread over more than twenty leaves of one to three samples each. None of them is the
 * function that rose: three tie at 3 against 0, and the first in the file is chance. The caller
 * most of the rise ran under says where it was. */
static void test_rises_kernel_spread(void **state) {
        _cleanup_(folded_donep) Folded near = FOLDED_NULL, rest = FOLDED_NULL, near5 = FOLDED_NULL;
        Rise *r = NULL;
        size_t n = 0;
        char *text = NULL;
        static const char stacks[] =
                "kubelet;main;__open;__pi___x86_indirect_thunk_rax 1\n"
                "kubelet;main;__open;entry_SYSCALL_64_after_hwframe;do_syscall_64 1\n"
                "kubelet;main;__open;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_openat;do_sys_openat2;alloc_fd 1\n"
                "kubelet;main;__open;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_openat;do_sys_openat2;do_filp_open;path_openat;link_path_walk;inode_permission;kernfs_iop_permission;kernfs_refresh_inode;__kernfs_iattrs 1\n"
                "kubelet;main;__open;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_openat;do_sys_openat2;do_filp_open;path_openat;link_path_walk;inode_permission;kernfs_iop_permission;up_read 1\n"
                "kubelet;main;__open;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_openat;do_sys_openat2;do_filp_open;path_openat;link_path_walk;walk_component;lookup_fast;__d_lookup;_raw_spin_lock 1\n"
                "kubelet;main;__open;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_openat;do_sys_openat2;do_filp_open;path_openat;link_path_walk;walk_component;lookup_fast;__d_lookup;_raw_spin_unlock 1\n"
                "kubelet;main;__open;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_openat;do_sys_openat2;do_filp_open;path_openat;link_path_walk;walk_component;lookup_fast;__d_lookup;_raw_spin_unlock;__raw_callee_save___pv_queued_spin_unlock 1\n"
                "kubelet;main;__open;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_openat;do_sys_openat2;do_filp_open;path_openat;lookup_fast;kernfs_dop_revalidate 2\n"
                "kubelet;main;__open;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_openat;do_sys_openat2;do_filp_open;path_openat;lookup_fast;kernfs_dop_revalidate;strcmp 1\n"
                "kubelet;main;__open;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_openat;do_sys_openat2;fd_install 1\n"
                "kubelet;main;access;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_access;do_faccessat;user_path_at;filename_lookup;path_lookupat;walk_component;lookup_fast;__d_lookup_rcu 1\n"
                "kubelet;main;clock_gettime@@GLIBC_2.17;clock_gettime 1\n"
                "kubelet;main;close 1\n"
                "kubelet;main;close;entry_SYSCALL_64_after_hwframe;do_syscall_64 1\n"
                "kubelet;main;close;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_close;__fput;kernfs_fop_release;cgroup_file_release 1\n"
                "kubelet;main;close;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_close;__fput;kernfs_fop_release;kernfs_unlink_open_file;_raw_spin_unlock_irqrestore 1\n"
                "kubelet;main;close;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_close;__fput;kmem_cache_free 1\n"
                "kubelet;main;read;entry_SYSCALL_64_after_hwframe;do_syscall_64;ksys_read;vfs_read;seq_read_iter;__kvmalloc_node_noprof 1\n"
                "kubelet;main;read;entry_SYSCALL_64_after_hwframe;do_syscall_64;ksys_read;vfs_read;seq_read_iter;_copy_to_iter 1\n"
                "kubelet;main;read;entry_SYSCALL_64_after_hwframe;do_syscall_64;ksys_read;vfs_read;seq_read_iter;cgroup_seqfile_show 3\n"
                "kubelet;main;read;entry_SYSCALL_64_after_hwframe;do_syscall_64;ksys_read;vfs_read;seq_read_iter;kernfs_seq_next 1\n"
                "kubelet;main;read;entry_SYSCALL_64_after_hwframe;do_syscall_64;ksys_read;vfs_read;seq_read_iter;memory_stat_show;__seq_puts;strlen 1\n"
                "kubelet;main;read;entry_SYSCALL_64_after_hwframe;do_syscall_64;ksys_read;vfs_read;seq_read_iter;memory_stat_show;memcg1_stat_format 1\n"
                "kubelet;main;read;entry_SYSCALL_64_after_hwframe;do_syscall_64;ksys_read;vfs_read;seq_read_iter;memory_stat_show;memcg1_stat_format;__mem_cgroup_flush_stats 3\n"
                "kubelet;main;read;entry_SYSCALL_64_after_hwframe;do_syscall_64;ksys_read;vfs_read;seq_read_iter;memory_stat_show;memcg1_stat_format;memcg1_shown_max 2\n"
                "kubelet;main;read;entry_SYSCALL_64_after_hwframe;do_syscall_64;ksys_read;vfs_read;seq_read_iter;memory_stat_show;memcg1_stat_format;memcg_page_state_local_output 2\n"
                "kubelet;main;read;entry_SYSCALL_64_after_hwframe;do_syscall_64;ksys_read;vfs_read;seq_read_iter;memory_stat_show;memcg1_stat_format;seq_buf_printf;vsnprintf 2\n"
                "kubelet;main;read;entry_SYSCALL_64_after_hwframe;do_syscall_64;ksys_read;vfs_read;seq_read_iter;memory_stat_show;memcg1_stat_format;seq_buf_printf;vsnprintf;format_decode 3\n"
                "kubelet;main;read;entry_SYSCALL_64_after_hwframe;do_syscall_64;ksys_read;vfs_read;seq_read_iter;memory_stat_show;memcg1_stat_format;seq_buf_printf;vsnprintf;memcpy 1\n"
                "kubelet;main;usleep;__nanosleep 1\n";

        assert_true(asprintf(&text, "java;main;compute 1889\n%s", stacks) > 0);
        load_text(text, &near);
        free(text);
        load_text("java;main;compute 2946\n"
                  "kubelet;main;__open;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_openat;do_sys_openat2;do_filp_open;path_openat;lookup_fast;kernfs_dop_revalidate 4\n"
                  "kubelet;main;read;entry_SYSCALL_64_after_hwframe;do_syscall_64;ksys_read;vfs_read;seq_read_iter;memory_stat_show;memcg1_stat_format;seq_buf_printf;vsnprintf 4\n"
                  "kubelet;main;close;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_close;__fput;kmem_cache_free 2\n"
                  "kubelet;main;usleep;__nanosleep 10\n",
                  &rest);
        assert_int_equal(near.total, 1930);

        assert_int_equal(folded_rises(&near, &rest, RISE_PROCESS, SIZE_MAX, &r, &n), 0);
        assert_int_equal(n, 1);
        assert_string_equal(r[0].name, "kubelet");
        assert_int_equal(r[0].slice, 41);
        assert_null(r[0].top_function);
        rises_free(r, n);

        /* The answer names it by the kernel function most of the rise ran under. */
        AnswerInput in = { .near = &near, .rest = &rest, .n_cpus = 2 };
        Answer a = {};
        Rise *np = NULL;
        size_t n_np = 0;
        assert_int_equal(folded_rises(&near, &rest, RISE_PROCESS, SIZE_MAX, &np, &n_np), 0);
        in.near_proc = np;
        in.n_near_proc = n_np;
        assert_int_equal(answer_choose(&in, &near, &rest, &a), 0);
        assert_non_null(a.rise.name);
        assert_string_equal(a.rise.name, "kubelet");
        assert_int_equal(a.from, ANSWER_NEAR_PROCESS);
        assert_null(a.rise.top_function);
        assert_non_null(a.under);
        assert_string_equal(a.under, "seq_read_iter");
        answer_done(&a);
        rises_free(np, n_np);

        /* A leaf with as many samples as any rise needs is its function that rose. */
        assert_true(asprintf(&text, "java;main;compute 1885\n%s%s", stacks,
                             "kubelet;main;read;entry_SYSCALL_64_after_hwframe;do_syscall_64;ksys_read;vfs_read;"
                             "seq_read_iter;memory_stat_show;memcg1_stat_format;seq_buf_printf;vsnprintf;format_decode 2\n") > 0);
        load_text(text, &near5);
        free(text);
        assert_int_equal(folded_rises(&near5, &rest, RISE_PROCESS, SIZE_MAX, &r, &n), 0);
        assert_int_equal(n, 1);
        assert_string_equal(r[0].top_function, "format_decode");
        rises_free(r, n);
}

/* A rise in the kernel under a loop of system calls, as tprofd recorded it on Linux 6.18: a sender
 * of UDP datagrams to a loopback socket, 20% of a CPU for 4 s around the event, and the samples
 * of do_syscall_64() as the leaf that a second run of it had. Its leaves with most samples are the
 * C library's sendto(), where the samples due on the kernel's way back to user space land, and
 * do_syscall_64(), where those due on its way in do (interrupts are disabled on both:
 * syscall_enter_from_user_mode(), syscall_exit_to_user_mode(), include/linux/entry-common.h); no
 * function rose there. Its function that rose is the kernel's (fib_table_lookup, the route of
 * each datagram), under udp_sendmsg. */
static void test_rises_syscall_wrapper(void **state) {
        _cleanup_(folded_donep) Folded near = FOLDED_NULL, rest = FOLDED_NULL;
        Rise *r = NULL;
        size_t n = 0;

        load_text("java;main;compute 1885\n"
                  "udp-sender;main;pace_udp;sendto 8\n"
                  "udp-sender;main;pace_udp;sendto;entry_SYSCALL_64_after_hwframe;do_syscall_64 8\n"
                  "udp-sender;main;pace_udp;sendto;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_sendto;__sys_sendto;udp_sendmsg;ip_route_output_flow;ip_route_output_key_hash_rcu;fib_table_lookup 7\n"
                  "udp-sender;main;pace_udp;sendto;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_sendto;__sys_sendto;udp_sendmsg;udp_send_skb;ip_send_skb;ip_output;ip_finish_output2;__dev_queue_xmit;__local_bh_enable_ip;do_softirq.part.0;handle_softirqs;net_rx_action;__napi_poll;process_backlog;_raw_spin_unlock_irq 4\n"
                  "udp-sender;main;pace_udp;sendto;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_sendto;__sys_sendto;udp_sendmsg;ip_make_skb;__ip_append_data;ip_generic_getfrag;_copy_from_iter 4\n"
                  "udp-sender;main;pace_udp;sendto;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_sendto;__sys_sendto;udp_sendmsg;ip_make_skb;__ip_make_skb 3\n"
                  "udp-sender;main;pace_udp 3\n"
                  "udp-sender;main;pace_udp;sendto;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_sendto;__sys_sendto;udp_sendmsg;udp_send_skb;ip_send_skb;ip_output;ip_finish_output2;__dev_queue_xmit;validate_xmit_skb.isra.0 2\n"
                  "udp-sender;main;pace_udp;sendto;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_sendto;__sys_sendto;udp_sendmsg;udp_send_skb;ip_send_skb;ip_output;ip_finish_output2;__dev_queue_xmit;dev_hard_start_xmit;loopback_xmit;sock_wfree 2\n"
                  "udp-sender;main;pace_udp;sendto;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_sendto;__sys_sendto;udp_sendmsg;udp_send_skb;ip_send_skb;__ip_local_out;ip_send_check 2\n"
                  "udp-sender;main;pace_udp;sendto;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_sendto;__sys_sendto;udp_sendmsg;udp_send_skb;ip_send_skb;__ip_local_out 2\n"
                  "udp-sender;main;pace_udp;sendto;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_sendto;__sys_sendto;udp_sendmsg;ip_make_skb;__ip_append_data;sock_alloc_send_pskb;alloc_skb_with_frags;__alloc_skb;kmalloc_reserve;__kmalloc_node_track_caller_noprof 2\n"
                  "udp-sender;main;pace_udp;sendto;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_sendto;__sys_sendto;udp_sendmsg;ip_make_skb;__ip_append_data;ip_generic_getfrag;__check_object_size;__check_heap_object 2\n"
                  "udp-sender;main;pace_udp;sendto;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_sendto;__sys_sendto;udp_sendmsg;ip_make_skb 2\n",
                  &near);
        load_text("java;main;compute 2948\n", &rest);
        assert_int_equal(near.total, 1936);

        assert_int_equal(folded_rises(&near, &rest, RISE_PROCESS, SIZE_MAX, &r, &n), 0);
        assert_int_equal(n, 1);
        assert_string_equal(r[0].name, "udp-sender");
        assert_non_null(r[0].top_function);
        assert_string_equal(r[0].top_function, "fib_table_lookup");

        /* The answer: the kernel's function, under the kernel's sending of a datagram. */
        AnswerInput in = { .near = &near, .rest = &rest, .near_proc = r, .n_near_proc = n, .n_cpus = 2 };
        Answer a = {};
        assert_int_equal(answer_choose(&in, &near, &rest, &a), 0);
        assert_string_equal(a.rise.name, "udp-sender");
        assert_string_equal(a.rise.top_function, "fib_table_lookup");
        assert_non_null(a.under);
        assert_string_equal(a.under, "udp_sendmsg");
        answer_done(&a);
        rises_free(r, n);
}

/* A function that enters the kernel itself now and then but does its own work: the vDSO's
 * clock_gettime() reads CLOCK_MONOTONIC in user space and makes the system call, from within itself,
 * only for a clock it cannot read, such as a CPU-time clock (__cvdso_clock_gettime_data(),
 * lib/vdso/gettimeofday.c; clock_gettime_fallback(), arch/x86/include/asm/vdso/gettimeofday.h;
 * posix_cpu_clock_get(), kernel/time/posix-cpu-timers.c; Linux 6.18). A process that polls the
 * clock rose in it: its samples as the leaf are far more than the way back of its few system calls
 * could have gathered, and it is the function that rose. */
static void test_rises_vdso_function_not_a_wrapper(void **state) {
        _cleanup_(folded_donep) Folded near = FOLDED_NULL, rest = FOLDED_NULL;
        Rise *r = NULL;
        size_t n = 0;

        load_text("java;main;compute 1500\n"
                  "poller;main;poll_clock;__vdso_clock_gettime 300\n"
                  "poller;main;poll_clock 40\n"
                  "poller;main;poll_clock;__vdso_clock_gettime;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_clock_gettime;posix_cpu_clock_get;cpu_clock_sample;task_sched_runtime 3\n"
                  "poller;main;poll_clock;__vdso_clock_gettime;entry_SYSCALL_64_after_hwframe;do_syscall_64 1\n",
                  &near);
        load_text("java;main;compute 2900\n"
                  "poller;main;poll_clock;__vdso_clock_gettime 20\n"
                  "poller;main;poll_clock 3\n",
                  &rest);

        assert_int_equal(folded_rises(&near, &rest, RISE_PROCESS, SIZE_MAX, &r, &n), 0);
        assert_int_equal(n, 1);
        assert_string_equal(r[0].name, "poller");
        assert_non_null(r[0].top_function);
        assert_string_equal(r[0].top_function, "__vdso_clock_gettime");
        rises_free(r, n);
}

/* arm64 (arch/arm64/kernel/entry.S, entry-common.c, syscall.c, Linux 6.12): a system call goes in
 * through the vector every synchronous exception takes, el0t_64_sync and its handler, then el0_svc;
 * the wrapper is the frame above the vector. A page fault takes the same vector to el0_da: the
 * function that faulted made no system call and stays a function that rose. */
static void test_rises_syscall_wrapper_arm64(void **state) {
        _cleanup_(folded_donep) Folded near = FOLDED_NULL, rest = FOLDED_NULL;
        Rise *r = NULL;
        size_t n = 0;

#define ARM64_SENDTO "udp-sender;main;pace_udp;sendto;el0t_64_sync;el0t_64_sync_handler;el0_svc;do_el0_svc;" \
                     "el0_svc_common.constprop.0"
#define ARM64_FAULT "hog;main;touch;el0t_64_sync;el0t_64_sync_handler;el0_da;do_mem_abort;do_translation_fault;" \
                    "do_page_fault;handle_mm_fault"
        load_text("java;main;compute 1800\n"
                  "udp-sender;main;pace_udp;sendto 8\n"
                  ARM64_SENDTO " 7\n"
                  ARM64_SENDTO ";invoke_syscall.constprop.0;__arm64_sys_sendto;__sys_sendto;udp_sendmsg;"
                  "ip_route_output_flow;fib_table_lookup 6\n"
                  ARM64_SENDTO ";invoke_syscall.constprop.0;__arm64_sys_sendto;__sys_sendto;udp_sendmsg;ip_make_skb;"
                  "__ip_append_data 4\n"
                  ARM64_SENDTO ";invoke_syscall.constprop.0;__arm64_sys_sendto;__sys_sendto;udp_sendmsg;udp_send_skb 3\n"
                  "udp-sender;main;pace_udp 3\n"
                  "hog;main;touch 40\n"
                  ARM64_FAULT ";clear_page 12\n"
                  ARM64_FAULT " 2\n",
                  &near);
#undef ARM64_SENDTO
#undef ARM64_FAULT
        load_text("java;main;compute 2948\n", &rest);

        assert_int_equal(folded_rises(&near, &rest, RISE_PROCESS, SIZE_MAX, &r, &n), 0);
        assert_int_equal(n, 2);
        for (size_t i = 0; i < n; i++) {
                assert_non_null(r[i].top_function);
                if (streq(r[i].name, "udp-sender"))
                        assert_string_equal(r[i].top_function, "fib_table_lookup");
                else {
                        assert_string_equal(r[i].name, "hog");
                        assert_string_equal(r[i].top_function, "touch");
                }
        }
        rises_free(r, n);
}

/* Counts that overflow as integer sums: z stays a number. */
static void test_z_huge(void **state) {
        double z = proportion_z(UINT64_MAX / 2, UINT64_MAX - 1, UINT64_MAX / 4, UINT64_MAX - 1);
        assert_true(isfinite(z));
        assert_true(z > 0);
}

static void test_rises_nothing(void **state) {
        _cleanup_(folded_donep) Folded a = FOLDED_NULL, b = FOLDED_NULL, empty = FOLDED_NULL;
        Rise *r = NULL;
        size_t n = 7;

        load_text("x;f 100\ny;g 100\n", &a);
        load_text("x;f 1000\ny;g 1000\n", &b);
        assert_int_equal(folded_rises(&a, &b, RISE_PROCESS, 5, &r, &n), 0);
        assert_int_equal(n, 0);
        assert_int_equal(folded_rises(&a, &empty, RISE_PROCESS, 5, &r, &n), 0);
        assert_int_equal(n, 0);
        rises_free(r, n);
}

static void test_rises_tiny_counts(void **state) {
        _cleanup_(folded_donep) Folded a = FOLDED_NULL, b = FOLDED_NULL;
        Rise *r = NULL;
        size_t n = 7;

        /* 4 samples of a new process is not a finding, however large its share change. */
        load_text("x;f 20\nnew;g 4\n", &a);
        load_text("x;f 100000\n", &b);
        assert_int_equal(folded_rises(&a, &b, RISE_PROCESS, 5, &r, &n), 0);
        assert_int_equal(n, 0);
        rises_free(r, n);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_folded_parse),
                cmocka_unit_test(test_functions),
                cmocka_unit_test(test_z),
                cmocka_unit_test(test_rises_planted_anomaly),
                cmocka_unit_test(test_rest_and_burst),
                cmocka_unit_test(test_comm_key),
                cmocka_unit_test(test_rises_top_function_per_process),
                cmocka_unit_test(test_rises_kernel_spread),
                cmocka_unit_test(test_rises_syscall_wrapper),
                cmocka_unit_test(test_rises_vdso_function_not_a_wrapper),
                cmocka_unit_test(test_rises_syscall_wrapper_arm64),
                cmocka_unit_test(test_z_huge),
                cmocka_unit_test(test_rises_nothing),
                cmocka_unit_test(test_rises_tiny_counts),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
