/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The bundle reader of bundle-read.h. Everything read here was written by tprofd, but a state
 * directory can be copied around, edited or damaged, so each manifest is parsed with bounds and
 * every field is optional: a reader shows what it can and marks what it cannot.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "basic/alloc-util.h"
#include "basic/fileio.h"
#include "basic/string-util.h"
#include "basic/time-util.h"
#include "bundle/bundle-cgroups.h"
#include "bundle/bundle-analyze.h"
#include "bundle/bundle-read.h"

BundleManifest *bundle_manifest_free(BundleManifest *m) {
        if (!m)
                return NULL;
        json_value_free(m->json);
        free(m);
        return NULL;
}

static const char *str(const JsonValue *root, const char *path) {
        return json_string_value(json_object_get_path(root, path));
}

static bool u64(const JsonValue *root, const char *path, uint64_t *ret) {
        return json_u64_value(json_object_get_path(root, path), ret);
}

/* Whether the fields a reader relies on, where they are there, have their types: a manifest whose
 * counts are text is damaged, not a bundle of no samples. A field may be absent (older writers)
 * or null. */
static bool fields_typed(const JsonValue *j) {
        static const struct {
                const char *path;
                char kind; /* s: string, n: unsigned integer, o: object, a: array */
        } fields[] = {
                { "id", 's' },           { "short_id", 's' },         { "status", 's' },
                { "host", 's' },         { "rule", 'o' },             { "rule.name", 's' },
                { "event", 'o' },        { "event.t_perf_ns", 'n' },  { "event.t_realtime_usec", 'n' },
                { "event.message", 's' }, { "repeats", 'n' },         { "profile", 'o' },
                { "profile.freq_hz", 'n' }, { "profile.n_cpus", 'n' }, { "slice", 'o' },
                { "slice.from_perf_ns", 'n' }, { "slice.to_perf_ns", 'n' }, { "slice.samples", 'n' }, { "slice.near_samples", 'n' },
                { "slice.lost", 'n' },   { "baseline", 'o' },         { "baseline.samples", 'n' },
                { "windows", 'a' },      { "cgroups", 'a' },          { "threads", 'a' },
                { "renames", 'a' },
        };
        uint64_t u;

        for (size_t i = 0; i < ELEMENTSOF(fields); i++) {
                const JsonValue *v = json_object_get_path(j, fields[i].path);
                if (!v || v->type == JSON_TYPE_NULL)
                        continue;
                switch (fields[i].kind) {
                case 's':
                        if (v->type != JSON_TYPE_STRING)
                                return false;
                        break;
                case 'n':
                        if (!json_u64_value(v, &u))
                                return false;
                        break;
                case 'o':
                        if (v->type != JSON_TYPE_OBJECT)
                                return false;
                        break;
                default:
                        if (v->type != JSON_TYPE_ARRAY)
                                return false;
                }
        }
        return true;
}

int bundle_manifest_parse(const char *text, size_t size, BundleManifest **ret, size_t *reterr_offset) {
        _cleanup_(bundle_manifest_freep) BundleManifest *m = NULL;
        const JsonValue *j;
        int r;

        m = new0(BundleManifest, 1);
        if (!m)
                return -ENOMEM;
        r = json_parse(text, size, JSON_READER_DEPTH_DEFAULT, &m->json, reterr_offset);
        if (r < 0)
                return r;
        j = m->json;
        if (j->type != JSON_TYPE_OBJECT)
                return -EUCLEAN;
        /* A manifest without "format" is taken as version 1; a newer one we do not understand. */
        if (u64(j, "format", &m->format) && m->format > BUNDLE_FORMAT_VERSION)
                return -EPROTO;
        if (!fields_typed(j))
                return -EUCLEAN;

        m->id = str(j, "id");
        m->short_id = str(j, "short_id");
        m->status = str(j, "status");
        m->tprof_version = str(j, "tprof_version");
        m->created_utc = str(j, "created_utc");
        m->host = str(j, "host");
        m->boot_id = str(j, "boot_id");
        m->kernel_release = str(j, "kernel_release");

        m->rule_name = str(j, "rule.name");
        m->rule_description = str(j, "rule.description");
        m->rule_match = str(j, "rule.match");
        m->rule_severity = str(j, "rule.severity");
        m->rule_source = str(j, "rule.source");
        (void) u64(j, "rule.before_usec", &m->rule_before_usec);
        (void) u64(j, "rule.after_usec", &m->rule_after_usec);
        (void) u64(j, "rule.cooldown_usec", &m->rule_cooldown_usec);

        m->has_event_perf_ns = u64(j, "event.t_perf_ns", &m->event_t_perf_ns);
        m->has_event_realtime = u64(j, "event.t_realtime_usec", &m->event_realtime_usec);
        m->event_utc = str(j, "event.utc");
        m->event_source = str(j, "event.source");
        m->event_message = str(j, "event.message");
        m->event_unit = str(j, "event.unit");
        m->event_comm = str(j, "event.comm");
        if (!json_i64_value(json_object_get_path(j, "event.priority"), &m->event_priority))
                m->event_priority = -1;
        m->event_captures = json_object_get_path(j, "event.captures");
        if (m->event_captures && m->event_captures->type != JSON_TYPE_OBJECT)
                m->event_captures = NULL;
        m->alignment_method = str(j, "event.alignment.method");
        m->alignment_clock_map = str(j, "event.alignment.clock_map");
        m->has_alignment_error = u64(j, "event.alignment.error_ns", &m->alignment_error_ns);

        if (!u64(j, "repeats", &m->repeats))
                m->repeats = 1;
        (void) u64(j, "last_repeat_perf_ns", &m->last_repeat_perf_ns);
        m->rule_group = str(j, "rule.group");
        m->joined_rules = json_object_get(j, "joined_rules");
        if (m->joined_rules && m->joined_rules->type != JSON_TYPE_OBJECT)
                m->joined_rules = NULL;
        m->note = str(j, "note");
        m->interrupted = json_object_get(j, "interrupted") && !json_is_null(json_object_get(j, "interrupted"));
        m->interrupted_resumed_utc = str(j, "interrupted.resumed_utc");
        m->profile_event = str(j, "profile.event");
        (void) u64(j, "profile.freq_hz", &m->profile_freq_hz);
        (void) u64(j, "profile.n_cpus", &m->profile_n_cpus);

        m->has_slice = u64(j, "slice.from_perf_ns", &m->slice_from_perf_ns) &&
                       u64(j, "slice.to_perf_ns", &m->slice_to_perf_ns) &&
                       m->slice_to_perf_ns >= m->slice_from_perf_ns;
        (void) u64(j, "slice.samples", &m->slice_samples);
        (void) u64(j, "slice.near_samples", &m->slice_near_samples);
        (void) u64(j, "slice.lost", &m->slice_lost);
        (void) u64(j, "slice.covered_from_perf_ns", &m->slice_covered_from_perf_ns);
        (void) u64(j, "slice.covered_to_perf_ns", &m->slice_covered_to_perf_ns);
        m->has_baseline = u64(j, "baseline.samples", &m->baseline_samples);
        (void) u64(j, "baseline.from_perf_ns", &m->baseline_from_perf_ns);
        (void) u64(j, "baseline.to_perf_ns", &m->baseline_to_perf_ns);
        m->n_windows = json_length(json_object_get(j, "windows"));

        *ret = TAKE_PTR(m);
        return 0;
}

int bundle_manifest_load(const char *path, BundleManifest **ret, size_t *reterr_offset) {
        _cleanup_free_ char *data = NULL;
        size_t size;
        int r;

        r = read_full_file(path, BUNDLE_MANIFEST_BYTES_MAX, &data, &size);
        if (r < 0)
                return r;
        return bundle_manifest_parse(data, size, ret, reterr_offset);
}

bool bundle_manifest_capture_cpu(const BundleManifest *m, unsigned *ret_cpu) {
        const JsonValue *v;
        const char *s;
        uint64_t u;

        if (!m)
                return false;
        v = json_object_get(m->event_captures, "cpu");
        if (json_u64_value(v, &u) && u < 65536) {
                *ret_cpu = (unsigned) u;
                return true;
        }
        s = json_string_value(v);
        if (!s || !*s || strlen(s) > 5)
                return false;
        for (const char *p = s; *p; p++)
                if (*p < '0' || *p > '9')
                        return false;
        u = strtoull(s, NULL, 10);
        if (u >= 65536)
                return false;
        *ret_cpu = (unsigned) u;
        return true;
}

const char *bundle_entry_state_to_string(BundleEntryState s) {
        static const char *const table[_BUNDLE_ENTRY_STATE_MAX] = {
                [BUNDLE_ENTRY_COMPLETE] = "complete",  [BUNDLE_ENTRY_PARTIAL] = "partial",
                [BUNDLE_ENTRY_NO_COVERAGE] = "no-coverage", [BUNDLE_ENTRY_PENDING] = "pending",
                [BUNDLE_ENTRY_CORRUPT] = "corrupt",
        };
        return s >= 0 && s < _BUNDLE_ENTRY_STATE_MAX ? table[s] : NULL;
}

static void entry_done(BundleEntry *e) {
        free(e->id);
        free(e->dirname);
        free(e->path);
        free(e->rule);
        bundle_manifest_free(e->manifest);
}

void bundle_list_done(BundleList *l) {
        for (size_t i = 0; i < l->n; i++)
                entry_done(&l->entries[i]);
        free(l->entries);
        *l = BUNDLE_LIST_NULL;
}

/* "<yyyymmddThhmmssZ>-<rule>-<short id>": fills in what the name tells when the manifest cannot. */
static void parse_name(BundleEntry *e) {
        const char *id = e->id;
        size_t n = strlen(id);
        struct tm tm = {};

        if (n > BUNDLE_SHORT_ID_LEN + 1 && id[n - BUNDLE_SHORT_ID_LEN - 1] == '-') {
                const char *s = id + n - BUNDLE_SHORT_ID_LEN;
                bool hex = true;
                for (size_t i = 0; i < BUNDLE_SHORT_ID_LEN; i++)
                        if (!strchr("0123456789abcdef", s[i]) || s[i] == '\0')
                                hex = false;
                if (hex)
                        memcpy(e->short_id, s, BUNDLE_SHORT_ID_LEN + 1);
        }
        if (n >= 17 && id[8] == 'T' && id[15] == 'Z' &&
            sscanf(id, "%4d%2d%2dT%2d%2d%2d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
                   &tm.tm_sec) == 6) {
                tm.tm_year -= 1900;
                tm.tm_mon -= 1;
                time_t t = timegm(&tm);
                if (t > 0)
                        e->realtime_usec = (uint64_t) t * USEC_PER_SEC;
        }
        if (!e->rule && n >= 17 + BUNDLE_SHORT_ID_LEN + 2 && id[16] == '-' && e->short_id[0])
                e->rule = strndup(id + 17, n - 17 - BUNDLE_SHORT_ID_LEN - 1);
}

static void measure(BundleEntry *e, int dir_fd) {
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;

        if (opendir_at(dir_fd, ".", 0, &d) < 0)
                return;
        while ((de = readdir(d))) {
                struct stat st;
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                if (S_ISREG(st.st_mode))
                        e->bytes += (uint64_t) st.st_size;
                else if (S_ISDIR(st.st_mode) && streq(de->d_name, BUNDLE_WINDOWS_DIR)) {
                        _cleanup_closedir_ DIR *w = NULL;
                        if (opendir_at(dirfd(d), de->d_name, O_NOFOLLOW, &w) < 0)
                                continue;
                        struct dirent *we;
                        while ((we = readdir(w))) {
                                struct stat wst;
                                if (fstatat(dirfd(w), we->d_name, &wst, AT_SYMLINK_NOFOLLOW) >= 0 &&
                                    S_ISREG(wst.st_mode)) {
                                        e->windows_bytes += (uint64_t) wst.st_size;
                                        e->n_windows++;
                                }
                        }
                }
        }
}

/* Returns 1 if name is a bundle and *e was filled in, 0 if it is not one, < 0 on error. */
static int load_entry(int incidents_fd, const char *incidents_path, const char *name, BundleEntry *e) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *manifest_path = NULL;
        const char *id = name;
        bool pending = false;
        struct stat st;
        int open_error;

        if (startswith(name, BUNDLE_TMP_PREFIX)) {
                id = name + strlen(BUNDLE_TMP_PREFIX);
                pending = true;
        }
        fd = openat(incidents_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        open_error = fd < 0 ? -errno : 0;
        /* A directory this user may not open is a bundle all the same, listed as unreadable (its
         * manifest error says why), not left out as if there were none. */
        if (open_error < 0 && open_error != -EACCES && open_error != -EPERM)
                return 0; /* not a directory (or gone): not a bundle */
        /* A .tmp- directory without "pending" is being finished or was left by a crash: skip it. */
        if (pending && (fd < 0 || fstatat(fd, BUNDLE_PENDING, &st, 0) < 0 || !S_ISREG(st.st_mode)))
                return 0;

        *e = (BundleEntry) {};
        e->id = strdup(id);
        e->dirname = strdup(name);
        if (asprintf(&e->path, "%s/%s", incidents_path, name) < 0)
                e->path = NULL;
        if (asprintf(&manifest_path, "%s/%s", e->path ?: "", pending ? BUNDLE_PENDING : BUNDLE_MANIFEST) < 0)
                manifest_path = NULL;
        if (!e->id || !e->dirname || !e->path || !manifest_path) {
                entry_done(e);
                return -ENOMEM;
        }

        e->manifest_error = open_error < 0 ? open_error
                                           : bundle_manifest_load(manifest_path, &e->manifest, &e->manifest_error_offset);
        if (e->manifest_error == -ENOMEM) {
                entry_done(e);
                return -ENOMEM;
        }
        if (e->manifest_error < 0) {
                e->manifest = NULL;
                e->state = BUNDLE_ENTRY_CORRUPT;
        } else if (pending)
                e->state = BUNDLE_ENTRY_PENDING;
        else {
                const char *s = e->manifest->status;
                if (s && streq(s, "partial"))
                        e->state = BUNDLE_ENTRY_PARTIAL;
                else if (s && streq(s, "no-coverage"))
                        e->state = BUNDLE_ENTRY_NO_COVERAGE;
                else if (s && streq(s, "complete"))
                        e->state = BUNDLE_ENTRY_COMPLETE;
                else {
                        /* No status is damage; one we do not know, a newer writer's. */
                        e->state = BUNDLE_ENTRY_CORRUPT;
                        e->manifest_error = s ? -EPROTO : -EUCLEAN;
                }
        }
        if (e->manifest) {
                if (e->manifest->rule_name)
                        e->rule = strdup(e->manifest->rule_name);
                if (e->manifest->has_event_realtime)
                        e->realtime_usec = e->manifest->event_realtime_usec;
        }
        parse_name(e);
        if (e->manifest && e->manifest->has_event_realtime)
                e->realtime_usec = e->manifest->event_realtime_usec;
        if (fd >= 0)
                measure(e, fd);
        return 1;
}

static int entry_compare(const void *a, const void *b) {
        const BundleEntry *x = a, *y = b;
        if (x->realtime_usec != y->realtime_usec)
                return x->realtime_usec < y->realtime_usec ? -1 : 1;
        return strcmp(x->id, y->id);
}

int bundle_list_load(const char *state_dir, BundleList *ret) {
        _cleanup_(bundle_list_donep) BundleList l = BUNDLE_LIST_NULL;
        _cleanup_free_ char *path = NULL;
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        int r;

        if (asprintf(&path, "%s/incidents", state_dir) < 0)
                return -ENOMEM;
        d = opendir(path);
        if (!d) {
                if (errno == ENOENT) {
                        *ret = BUNDLE_LIST_NULL;
                        return 0;
                }
                return -errno;
        }
        while ((de = readdir(d))) {
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if (de->d_name[0] == '.' && !startswith(de->d_name, BUNDLE_TMP_PREFIX))
                        continue;
                if (l.n >= BUNDLE_LIST_MAX)
                        return -E2BIG;
                if (!GREEDY_REALLOC(l.entries, l.allocated, l.n + 1))
                        return -ENOMEM;
                r = load_entry(dirfd(d), path, de->d_name, &l.entries[l.n]);
                if (r < 0)
                        return r;
                if (r > 0)
                        l.n++;
        }
        if (l.n > 0)
                qsort(l.entries, l.n, sizeof(BundleEntry), entry_compare);
        *ret = l;
        l = BUNDLE_LIST_NULL;
        return 0;
}

static bool scalar_equals(const JsonValue *v, const char *value) {
        char buf[64];

        if (!v)
                return false;
        switch (v->type) {
        case JSON_TYPE_STRING:
                return streq(v->string.s, value);
        case JSON_TYPE_INTEGER:
                snprintf(buf, sizeof buf, "%lld", (long long) v->i);
                return streq(buf, value);
        case JSON_TYPE_UNSIGNED:
                snprintf(buf, sizeof buf, "%llu", (unsigned long long) v->u);
                return streq(buf, value);
        case JSON_TYPE_BOOLEAN:
                return streq(value, v->b ? "true" : "false");
        case JSON_TYPE_NULL:
                return streq(value, "null");
        case JSON_TYPE_REAL: {
                char *end;
                double d = strtod(value, &end);
                return *value && *end == '\0' && d == v->d;
        }
        default:
                return false;
        }
}

static bool is_scalar(const JsonValue *v) {
        return v && v->type != JSON_TYPE_OBJECT && v->type != JSON_TYPE_ARRAY;
}

/* A filter's FIELD in the manifest: the first scalar of that name as a dotted path, then at the
 * top level, under "event", "event.captures" and "rule". NULL if none. */
static const JsonValue *manifest_field(const BundleManifest *m, const char *field) {
        static const char *const scopes[] = { "", "event.", "event.captures.", "rule." };

        for (size_t i = 0; m && i < ELEMENTSOF(scopes); i++) {
                char path[300];
                snprintf(path, sizeof path, "%s%s", scopes[i], field);
                const JsonValue *v = json_object_get_path(m->json, path);
                if (is_scalar(v))
                        return v;
        }
        return NULL;
}

/* The fields an entry has whatever its manifest holds. */
static bool entry_field(const char *field) {
        return streq(field, "status") || streq(field, "rule") || streq(field, "id") || streq(field, "short_id");
}

bool bundle_entry_has_field(const BundleEntry *e, const char *field) {
        return entry_field(field) || bundle_cgroups_field(field) || manifest_field(e->manifest, field);
}

bool bundle_entry_matches(const BundleEntry *e, const char *filter) {
        const char *eq = strchr(filter, '=');
        char field[256];
        const char *value;

        if (!eq)
                return e->rule && streq(e->rule, filter);
        if ((size_t) (eq - filter) >= sizeof field || eq == filter)
                return false;
        memcpy(field, filter, (size_t) (eq - filter));
        field[eq - filter] = '\0';
        value = eq + 1;

        if (streq(field, "status"))
                return streq(bundle_entry_state_to_string(e->state), value);
        if (streq(field, "rule"))
                return e->rule && streq(e->rule, value);
        if (streq(field, "id"))
                return streq(e->id, value);
        if (streq(field, "short_id"))
                return streq(e->short_id, value);
        if (!e->manifest)
                return false;
        /* unit= also matches a journal event's unit below, as it did before bundles knew cgroups */
        if (bundle_cgroups_field(field) && bundle_cgroups_match(e->manifest, field, value))
                return true;

        const JsonValue *v = manifest_field(e->manifest, field);
        return v && scalar_equals(v, value);
}

int bundle_list_resolve(const BundleList *l, const char *query, size_t **ret_candidates,
                        size_t *ret_n_candidates) {
        _cleanup_free_ size_t *c = NULL;
        size_t n = 0, allocated = 0, qlen;

        if (isempty(query))
                return -ENOENT;
        /* An exact id wins even if it is also the prefix of a longer one. */
        for (size_t i = 0; i < l->n; i++)
                if (streq(l->entries[i].id, query) || streq(l->entries[i].dirname, query))
                        return (int) i;

        qlen = strlen(query);
        for (size_t i = 0; i < l->n; i++) {
                const BundleEntry *e = &l->entries[i];
                if (strneq(e->id, query, qlen) || strneq(e->dirname, query, qlen) ||
                    (e->short_id[0] && strneq(e->short_id, query, qlen))) {
                        if (!GREEDY_REALLOC(c, allocated, n + 1))
                                return -ENOMEM;
                        c[n++] = i;
                }
        }
        if (n == 0)
                return -ENOENT;
        if (n == 1)
                return (int) c[0];
        if (ret_candidates) {
                *ret_candidates = TAKE_PTR(c);
                *ret_n_candidates = n;
        }
        return -ENOTUNIQ;
}

void bundle_sampled_cpus(const BundleManifest *m, uint64_t slice, uint64_t baseline, uint64_t near, uint64_t rest,
                         SampledCpus *ret) {
        uint64_t slice_ns, near_ns = 0, baseline_ns = 0, from, to;
        double cap;

        *ret = (SampledCpus) {};
        if (!m || !m->has_slice || m->profile_freq_hz == 0 || m->slice_to_perf_ns <= m->slice_from_perf_ns)
                return;
        /* The seconds that were sampled: where the daemon sampled part of the slice only, those. */
        from = m->slice_from_perf_ns;
        to = m->slice_to_perf_ns;
        if (m->slice_covered_to_perf_ns > m->slice_covered_from_perf_ns && m->slice_covered_from_perf_ns >= from &&
            m->slice_covered_to_perf_ns <= to) {
                from = m->slice_covered_from_perf_ns;
                to = m->slice_covered_to_perf_ns;
        }
        slice_ns = to - from;
        if (m->has_event_perf_ns) {
                uint64_t a, b;
                bundle_near_event_range(m->event_t_perf_ns, from, to, &a, &b);
                near_ns = b > a ? b - a : 0;
        }
        /* The baseline's first and last sample, around the slice or on one side of it. */
        if (m->has_baseline && m->baseline_to_perf_ns > m->baseline_from_perf_ns) {
                baseline_ns = m->baseline_to_perf_ns - m->baseline_from_perf_ns;
                if (m->baseline_from_perf_ns < m->slice_from_perf_ns && m->baseline_to_perf_ns > m->slice_to_perf_ns)
                        baseline_ns -= MIN(baseline_ns, m->slice_to_perf_ns - m->slice_from_perf_ns);
        }
        ret->slice = sampled_cpus(slice, m->profile_freq_hz, slice_ns);
        ret->near = sampled_cpus(near, m->profile_freq_hz, near_ns);
        ret->baseline = sampled_cpus(baseline, m->profile_freq_hz, baseline_ns);
        ret->rest = slice_ns > near_ns && baseline_ns > 0 ?
                sampled_cpus(rest, m->profile_freq_hz, slice_ns - near_ns + baseline_ns) : 0;
        /* Never more than the host has: the seconds of a few samples are rough. */
        cap = m->profile_n_cpus > 0 ? (double) m->profile_n_cpus : INFINITY;
        ret->slice = MIN(ret->slice, cap);
        ret->near = MIN(ret->near, cap);
        ret->baseline = MIN(ret->baseline, cap);
        ret->rest = MIN(ret->rest, cap);
}
