/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The pprof Profile builder; see pprof-builder.h. The protobuf-c messages are built by hand here
 * (not with protobuf_c_message_free_unpacked()), because labels are shared between samples: every
 * message is owned by one array of this builder and freed from there.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "basic/alloc-util.h"
#include "basic/hashmap.h"
#include "basic/macro.h"
#include "basic/string-util.h"
#include "pprof/pprof-builder.h"
#include "pprof/profile.pb-c.h"
#include "profile/profile-names.h"

typedef Perftools__Profiles__Profile PbProfile;
typedef Perftools__Profiles__ValueType PbValueType;
typedef Perftools__Profiles__Sample PbSample;
typedef Perftools__Profiles__Label PbLabel;
typedef Perftools__Profiles__Mapping PbMapping;
typedef Perftools__Profiles__Location PbLocation;
typedef Perftools__Profiles__Line PbLine;
typedef Perftools__Profiles__Function PbFunction;

#define KERNEL_MAPPING "[kernel.kallsyms]"

/* A sample and everything only it uses, in one allocation: label pointers and location ids follow. */
typedef struct SampleBox {
        PbSample sample;
        int64_t values[2];
        PbLabel time_label;
} SampleBox;

/* A location and its single line. */
typedef struct LocationBox {
        PbLocation location;
        PbLine line;
        PbLine *lines[1];
} LocationBox;

struct PprofBuilder {
        uint64_t period_ns, sample_period_ns;
        int64_t time_nanos, duration_nanos;

        Hashmap *string_index;
        char **strings;
        size_t n_strings, allocated_strings;

        Hashmap *mapping_index;
        PbMapping **mappings;
        size_t n_mappings, allocated_mappings;
        uint64_t *mapping_samples; /* per mapping: the samples of the program it is (see main_mapping()) */
        size_t allocated_mapping_samples;

        Hashmap *function_index;
        PbFunction **functions;
        size_t n_functions, allocated_functions;

        Hashmap *location_index;
        PbLocation **locations; /* each is the first member of a LocationBox */
        size_t n_locations, allocated_locations;

        Hashmap *label_index;
        PbLabel **labels;
        size_t n_labels, allocated_labels;

        PbSample **samples; /* each is the first member of a SampleBox */
        size_t n_samples, allocated_samples;

        PbLabel *common[PPROF_LABELS_MAX];
        size_t n_common;
        int64_t comments[PPROF_COMMENTS_MAX];
        size_t n_comments;

        int64_t key_cpu, key_pid, key_tid, key_comm, key_time, unit_ns;
};

/* Bytes a proto3 string may not hold (it must be UTF-8) or a reader's terminal should not get. */
static bool needs_escape(const char *s, size_t l) {
        for (size_t i = 0; i < l; i++)
                if ((unsigned char) s[i] < 0x20 || s[i] == 0x7f)
                        return true;
        return !utf8_is_valid_n(s, l);
}

/*
 * Returns the string's index in the string table, adding it if new; < 0 on ENOMEM. Raw symbol
 * and file names (system_name, filename, a cgroup path) may hold any byte: those that are not
 * UTF-8 are written as the text \xNN, as everywhere else (protobuf's parsers reject the whole
 * profile over one invalid string).
 */
static int64_t intern(PprofBuilder *b, const char *s) {
        size_t l = strlen(s);
        uint64_t v;
        char *copy;

        if (hashmap_get(b->string_index, s, l, &v))
                return (int64_t) v;
        if (!GREEDY_REALLOC(b->strings, b->allocated_strings, b->n_strings + 1))
                return -ENOMEM;
        copy = needs_escape(s, l) ? escape_text(s, l) : strdup(s);
        if (!copy)
                return -ENOMEM;
        if (hashmap_put(b->string_index, s, l, b->n_strings) < 0) {
                free(copy);
                return -ENOMEM;
        }
        b->strings[b->n_strings] = copy;
        return (int64_t) b->n_strings++;
}

PprofBuilder *pprof_builder_free(PprofBuilder *b) {
        if (!b)
                return NULL;
        for (size_t i = 0; i < b->n_strings; i++)
                free(b->strings[i]);
        free(b->strings);
        for (size_t i = 0; i < b->n_mappings; i++)
                free(b->mappings[i]);
        free(b->mappings);
        free(b->mapping_samples);
        for (size_t i = 0; i < b->n_functions; i++)
                free(b->functions[i]);
        free(b->functions);
        for (size_t i = 0; i < b->n_locations; i++)
                free(b->locations[i]);
        free(b->locations);
        for (size_t i = 0; i < b->n_labels; i++)
                free(b->labels[i]);
        free(b->labels);
        for (size_t i = 0; i < b->n_samples; i++)
                free(b->samples[i]);
        free(b->samples);
        hashmap_free(b->string_index);
        hashmap_free(b->mapping_index);
        hashmap_free(b->function_index);
        hashmap_free(b->location_index);
        hashmap_free(b->label_index);
        free(b);
        return NULL;
}

int pprof_builder_new(uint64_t period_ns, PprofBuilder **ret) {
        _cleanup_(pprof_builder_freep) PprofBuilder *b = NULL;

        b = new0(PprofBuilder, 1);
        if (!b)
                return -ENOMEM;
        b->period_ns = b->sample_period_ns = period_ns ?: 1;
        b->string_index = hashmap_new();
        b->mapping_index = hashmap_new();
        b->function_index = hashmap_new();
        b->location_index = hashmap_new();
        b->label_index = hashmap_new();
        if (!b->string_index || !b->mapping_index || !b->function_index || !b->location_index || !b->label_index)
                return -ENOMEM;
        /* string_table[0] must be "". */
        if (intern(b, "") != 0)
                return -ENOMEM;
        b->key_cpu = intern(b, "cpu");
        b->key_pid = intern(b, "pid");
        b->key_tid = intern(b, "tid");
        b->key_comm = intern(b, "comm");
        b->key_time = intern(b, "time");
        b->unit_ns = intern(b, "nanoseconds");
        if (b->key_cpu < 0 || b->key_pid < 0 || b->key_tid < 0 || b->key_comm < 0 || b->key_time < 0 || b->unit_ns < 0)
                return -ENOMEM;
        /* The sample types and the period type are interned when encoding. */
        *ret = TAKE_PTR(b);
        return 0;
}

/* A shared label (key, str, num, unit), made once. */
static PbLabel *label_get(PprofBuilder *b, int64_t key, int64_t str, int64_t num, int64_t unit) {
        int64_t k[4] = { key, str, num, unit };
        PbLabel *l;
        uint64_t v;

        if (hashmap_get(b->label_index, k, sizeof k, &v))
                return HASHMAP_PTR(v);
        if (!GREEDY_REALLOC(b->labels, b->allocated_labels, b->n_labels + 1))
                return NULL;
        l = new(PbLabel, 1);
        if (!l)
                return NULL;
        *l = (PbLabel) PERFTOOLS__PROFILES__LABEL__INIT;
        l->key = key;
        l->str = str;
        l->num = num;
        l->num_unit = unit;
        if (hashmap_put(b->label_index, k, sizeof k, PTR_HASHMAP(l)) < 0) {
                free(l);
                return NULL;
        }
        b->labels[b->n_labels++] = l;
        return l;
}

static PbLabel *label_from(PprofBuilder *b, const PprofLabel *l);

int pprof_builder_set_common_labels(PprofBuilder *b, const PprofLabel *labels, size_t n) {
        if (n > PPROF_LABELS_MAX - 5)
                return -E2BIG;
        b->n_common = 0;
        for (size_t i = 0; i < n; i++) {
                b->common[b->n_common] = label_from(b, &labels[i]);
                if (!b->common[b->n_common])
                        return -ENOMEM;
                b->n_common++;
        }
        return 0;
}

int pprof_builder_add_comment(PprofBuilder *b, const char *text) {
        int64_t i;

        if (b->n_comments >= PPROF_COMMENTS_MAX)
                return -E2BIG;
        i = intern(b, text);
        if (i < 0)
                return -ENOMEM;
        b->comments[b->n_comments++] = i;
        return 0;
}

void pprof_builder_set_time(PprofBuilder *b, int64_t time_nanos, int64_t duration_nanos) {
        b->time_nanos = time_nanos;
        b->duration_nanos = duration_nanos;
}

void pprof_builder_set_sample_period(PprofBuilder *b, uint64_t period_ns) {
        b->sample_period_ns = period_ns ?: b->period_ns;
}

static const char *mapping_name(const Frame *f) {
        if (f->kernel && (isempty(f->dso) || streq(f->dso, "[unknown]")))
                return KERNEL_MAPPING;
        return isempty(f->dso) ? "[unknown]" : f->dso;
}

/*
 * A mapping's range grows to cover every address seen in it. A user frame's address is where it
 * sits in its file (the symbolizer's in-file offset, the same in every process), not where a
 * process had the file mapped: such a mapping maps each address to itself, its file_offset (the
 * offset of memory_start in the file) equal to its memory_start, so that a reader that looks the
 * file up computes the file offset, address - memory_start + file_offset, as the address itself.
 * Kernel addresses are the kernel's own, and [kernel.kallsyms] is no file: offset 0.
 */
static void mapping_cover(PbMapping *m, bool kernel, uint64_t addr) {
        if (addr < m->memory_start)
                m->memory_start = addr;
        if (addr >= m->memory_limit)
                m->memory_limit = addr + 1;
        if (!kernel)
                m->file_offset = m->memory_start;
}

/*
 * The mapping of a DSO and build id (NULL: unknown), made once. Two builds of one path are two
 * mappings, as pprof tells them apart; a frame whose build id is unknown (a window written before
 * its file was read, or by an older tprof) belongs to the path's first mapping, which takes the
 * first build id that turns up for the path if it has none yet. The index holds a mapping under
 * its path (the path's first) and under path, NUL, build id.
 */
static PbMapping *mapping_get(PprofBuilder *b, const char *dso, const char *build_id, bool kernel, uint64_t addr) {
        _cleanup_free_ char *key = NULL;
        PbMapping *m, *first = NULL;
        size_t dl = strlen(dso), kl = 0;
        uint64_t v;
        int64_t name, bid;

        if (hashmap_get(b->mapping_index, dso, dl, &v))
                first = HASHMAP_PTR(v);
        if (isempty(build_id) && first) {
                mapping_cover(first, kernel, addr);
                return first;
        }
        if (!isempty(build_id)) {
                if (asprintf(&key, "%s%c%s", dso, 0, build_id) < 0)
                        return NULL;
                kl = dl + 1 + strlen(build_id);
                if (hashmap_get(b->mapping_index, key, kl, &v)) {
                        m = HASHMAP_PTR(v);
                        mapping_cover(m, kernel, addr);
                        return m;
                }
                bid = intern(b, build_id);
                if (bid < 0)
                        return NULL;
                if (first && first->build_id == 0) { /* its frames' build id was not known: it is this one */
                        if (hashmap_put(b->mapping_index, key, kl, PTR_HASHMAP(first)) < 0)
                                return NULL;
                        first->build_id = bid;
                        mapping_cover(first, kernel, addr);
                        return first;
                }
        } else
                bid = 0; /* "" */
        name = intern(b, dso);
        if (name < 0 || !GREEDY_REALLOC(b->mappings, b->allocated_mappings, b->n_mappings + 1) ||
            !GREEDY_REALLOC0(b->mapping_samples, b->allocated_mapping_samples, b->n_mappings + 1))
                return NULL;
        m = new(PbMapping, 1);
        if (!m)
                return NULL;
        *m = (PbMapping) PERFTOOLS__PROFILES__MAPPING__INIT;
        m->id = b->n_mappings + 1;
        m->memory_start = addr;
        m->memory_limit = addr + 1;
        mapping_cover(m, kernel, addr);
        m->filename = name;
        m->build_id = bid;
        m->has_functions = true;
        /* The builder owns it before the index names it: a second put that fails leaves the first
         * pointing at a mapping that is still there, not at freed memory. */
        b->mappings[b->n_mappings++] = m;
        if ((!first && hashmap_put(b->mapping_index, dso, dl, PTR_HASHMAP(m)) < 0) ||
            (key && hashmap_put(b->mapping_index, key, kl, PTR_HASHMAP(m)) < 0))
                return NULL;
        return m;
}

/* The function named as the folded file names the frame: the tidied symbol, or [dso] when unknown;
 * in a process whose name starts with "java" without the leading 'L' of a class name. */
static PbFunction *function_get(PprofBuilder *b, const Frame *f, const char *dso, const char *tidy_comm) {
        char sym[PROFILE_NAME_BYTES_MAX], tdso[PROFILE_NAME_BYTES_MAX], name[PROFILE_NAME_BYTES_MAX + 2];
        _cleanup_free_ char *key = NULL;
        PbFunction *fn;
        int64_t n, sn;
        uint64_t v;

        profile_symbol_tidy(f->symbol ?: "[unknown]", sym, sizeof sym);
        profile_dso_tidy(dso, tdso, sizeof tdso);
        profile_folded_frame(tidy_comm, sym, tdso, name, sizeof name);
        /* system_name only when it tells more than name. pprof takes a function whose two names
         * are equal for one it has still to demangle, and "simplifies" what looks like C++ by
         * cutting every <...> and (...): "<Vec<T> as Drop>::drop" and "<File as Drop>::drop"
         * would both show as "::drop", one function. An empty system_name leaves name alone. */
        const char *system_name = streq(name, f->symbol ?: "[unknown]") ? "" : f->symbol ?: "[unknown]";
        /* A function is its two names, whatever DSO it is in, as pprof tells functions apart (an
         * unresolved frame's name, [dso], names its DSO). */
        if (asprintf(&key, "%s%c%s", name, 0, system_name) < 0)
                return NULL;
        size_t kl = strlen(name) + 1 + strlen(system_name);
        if (hashmap_get(b->function_index, key, kl, &v))
                return HASHMAP_PTR(v);
        n = intern(b, name);
        sn = intern(b, system_name);
        if (n < 0 || sn < 0 || !GREEDY_REALLOC(b->functions, b->allocated_functions, b->n_functions + 1))
                return NULL;
        fn = new(PbFunction, 1);
        if (!fn)
                return NULL;
        *fn = (PbFunction) PERFTOOLS__PROFILES__FUNCTION__INIT;
        fn->id = b->n_functions + 1;
        fn->name = n;
        fn->system_name = sn;
        /* filename is the source file (pprof -list prints it as source code), which tprof does not
         * know: "", not the DSO, which the location's mapping names. */
        if (hashmap_put(b->function_index, key, kl, PTR_HASHMAP(fn)) < 0) {
                free(fn);
                return NULL;
        }
        b->functions[b->n_functions++] = fn;
        return fn;
}

/* The location of a frame, keyed by (mapping, address, function): returns its id, 0 on ENOMEM. */
static uint64_t location_get(PprofBuilder *b, const Frame *f, const char *tidy_comm) {
        const char *dso = mapping_name(f);
        PbMapping *m;
        PbFunction *fn;
        LocationBox *lb;
        uint64_t key[3], v;

        m = mapping_get(b, dso, f->build_id, f->kernel, f->addr);
        if (!m)
                return 0;
        fn = function_get(b, f, dso, tidy_comm);
        if (!fn)
                return 0;
        key[0] = m->id;
        key[1] = f->addr;
        key[2] = fn->id;
        if (hashmap_get(b->location_index, key, sizeof key, &v))
                return v;
        if (!GREEDY_REALLOC(b->locations, b->allocated_locations, b->n_locations + 1))
                return 0;
        lb = new(LocationBox, 1);
        if (!lb)
                return 0;
        lb->location = (PbLocation) PERFTOOLS__PROFILES__LOCATION__INIT;
        lb->line = (PbLine) PERFTOOLS__PROFILES__LINE__INIT;
        lb->line.function_id = fn->id;
        lb->lines[0] = &lb->line;
        lb->location.id = b->n_locations + 1;
        lb->location.mapping_id = m->id;
        lb->location.address = f->addr;
        lb->location.n_line = 1;
        lb->location.line = lb->lines;
        if (hashmap_put(b->location_index, key, sizeof key, lb->location.id) < 0) {
                free(lb);
                return 0;
        }
        b->locations[b->n_locations++] = &lb->location;
        return lb->location.id;
}

/* A label given by strings, interned and shared. */
static PbLabel *label_from(PprofBuilder *b, const PprofLabel *l) {
        int64_t key = intern(b, l->key), str = 0, unit = 0;

        if (key < 0)
                return NULL;
        if (l->str) {
                str = intern(b, l->str);
                if (str < 0)
                        return NULL;
        } else {
                /* Without a unit of its own a number gets its key, so that 0 survives (see
                 * pprof_builder_add_sample()). */
                unit = l->num_unit ? intern(b, l->num_unit) : key;
                if (unit < 0)
                        return NULL;
        }
        return label_get(b, key, str, l->str ? 0 : l->num, unit);
}

/* A file that is no shared library (lib*.so, *.so.N): a program, whose main() or _start every one of
 * its threads runs under, beneath the C library's thread start and a language runtime's. Nor a JIT
 * map (/tmp/perf-PID.map, which names the frames of a runtime's compiled code: tools/perf/
 * Documentation/jit-interface.txt, Linux 6.18), code of no file, which a JVM's threads run above
 * its libjvm.so. */
static bool is_program(const char *dso) {
        const char *base, *so, *pid;

        if (!dso || dso[0] != '/')
                return false;
        pid = startswith(dso, "/tmp/perf-");
        if (pid && strspn(pid, "0123456789") > 0 && streq(pid + strspn(pid, "0123456789"), ".map"))
                return false;
        base = strrchr(dso, '/') + 1;
        for (so = strstr(base, ".so"); so; so = strstr(so + 1, ".so"))
                if (so[3] == '\0' || so[3] == '.' || so[3] == ' ')
                        return false;
        return true;
}

int pprof_builder_add_sample(PprofBuilder *b, const Sample *s, int64_t time_ns, const PprofLabel *extra,
                             size_t n_extra) {
        char comm[64];
        size_t n_labels = 4 + b->n_common + n_extra, n_frames = MIN(s->n_frames, PROFILE_STACK_DEPTH_MAX);
        PbLabel **labels;
        uint64_t *locs;
        SampleBox *box;
        int64_t comm_i;

        if (b->n_samples >= PPROF_SAMPLES_MAX)
                return -EFBIG;
        if (b->n_common + n_extra > PPROF_LABELS_MAX - 5)
                return -E2BIG;
        if (!GREEDY_REALLOC(b->samples, b->allocated_samples, b->n_samples + 1))
                return -ENOMEM;
        box = malloc(sizeof(SampleBox) + (n_labels + 1) * sizeof(PbLabel *) + n_frames * sizeof(uint64_t));
        if (!box)
                return -ENOMEM;
        labels = (PbLabel **) (box + 1);
        locs = (uint64_t *) (labels + n_labels + 1);

        box->sample = (PbSample) PERFTOOLS__PROFILES__SAMPLE__INIT;
        box->values[0] = 1;
        box->values[1] = (int64_t) b->sample_period_ns;
        box->sample.n_value = 2;
        box->sample.value = box->values;

        profile_comm_tidy(s->comm ?: "", comm, sizeof comm);
        for (size_t i = 0; i < n_frames; i++) {
                locs[i] = location_get(b, &s->frames[i], comm);
                if (locs[i] == 0) {
                        free(box);
                        return -ENOMEM;
                }
        }
        box->sample.n_location_id = n_frames;
        box->sample.location_id = locs;
        /* the program the sample ran: its outermost frame in a program file */
        for (size_t i = n_frames; i > 0; i--)
                if (!s->frames[i - 1].kernel && is_program(s->frames[i - 1].dso)) {
                        b->mapping_samples[b->locations[locs[i - 1] - 1]->mapping_id - 1]++;
                        break;
                }

        comm_i = intern(b, comm);
        /* A number's unit is its key, as pprof assumes for one without a unit: readers (Go's
         * profile package, which go tool pprof, Pyroscope and Parca use) drop a numeric label
         * whose value is 0 unless it has a unit, and cpu 0, pid 0 and tid 0 are real values. */
        labels[0] = label_get(b, b->key_cpu, 0, s->cpu, b->key_cpu);
        labels[1] = label_get(b, b->key_pid, 0, s->pid, b->key_pid);
        labels[2] = label_get(b, b->key_tid, 0, s->tid, b->key_tid);
        labels[3] = comm_i < 0 ? NULL : label_get(b, b->key_comm, comm_i, 0, 0);
        if (!labels[0] || !labels[1] || !labels[2] || !labels[3]) {
                free(box);
                return -ENOMEM;
        }
        for (size_t i = 0; i < b->n_common; i++)
                labels[4 + i] = b->common[i];
        for (size_t i = 0; i < n_extra; i++) {
                labels[4 + b->n_common + i] = label_from(b, &extra[i]);
                if (!labels[4 + b->n_common + i]) {
                        free(box);
                        return -ENOMEM;
                }
        }
        /* The time label is the sample's own: not shared, not indexed. */
        box->time_label = (PbLabel) PERFTOOLS__PROFILES__LABEL__INIT;
        box->time_label.key = b->key_time;
        box->time_label.num = time_ns;
        box->time_label.num_unit = b->unit_ns;
        labels[n_labels] = &box->time_label;
        box->sample.n_label = n_labels + 1;
        box->sample.label = labels;

        b->samples[b->n_samples++] = &box->sample;
        return 0;
}

void pprof_builder_get_stats(const PprofBuilder *b, PprofBuilderStats *ret) {
        *ret = (PprofBuilderStats) {
                .samples = b->n_samples,
                .locations = b->n_locations,
                .functions = b->n_functions,
                .mappings = b->n_mappings,
                .strings = b->n_strings,
                .labels = b->n_labels,
        };
}

/*
 * go tool pprof prints the first mapping's file as the profile's "File:", and takes it for the main
 * binary (mapping id 1, as Go's own profiles have their executable): the program most samples ran,
 * by the outermost frame of each in a program file (not a shared library, whose code all programs
 * share; not the kernel or [unknown], no files to look symbols up in), is what a system-wide
 * profile is most about. Without any, the order stays the order seen. The index of that mapping,
 * 0 if it is first already.
 */
static size_t main_mapping(const PprofBuilder *b) {
        size_t best = 0;

        for (size_t i = 1; i < b->n_mappings; i++)
                if (b->mapping_samples[i] > b->mapping_samples[best])
                        best = i;
        return best;
}

/* Swaps mapping k with the first, ids and all: called again, it undoes itself. */
static void mapping_swap_first(PprofBuilder *b, size_t k) {
        PbMapping *m;
        uint64_t first = 1, other = k + 1;

        if (k == 0)
                return;
        m = b->mappings[0];
        b->mappings[0] = b->mappings[k];
        b->mappings[k] = m;
        b->mappings[0]->id = first;
        b->mappings[k]->id = other;
        for (size_t i = 0; i < b->n_locations; i++)
                if (b->locations[i]->mapping_id == first)
                        b->locations[i]->mapping_id = other;
                else if (b->locations[i]->mapping_id == other)
                        b->locations[i]->mapping_id = first;
}

/* Fills p with pointers into b; valid until b changes. Interns the type names first. */
static int assemble(PprofBuilder *b, PbProfile *p, PbValueType types[2], PbValueType **type_ptrs,
                    PbValueType *period_type) {
        int64_t samples = intern(b, "samples"), count = intern(b, "count"), cpu = intern(b, "cpu"),
                ns = b->unit_ns;

        if (samples < 0 || count < 0 || cpu < 0)
                return -ENOMEM;
        *p = (PbProfile) PERFTOOLS__PROFILES__PROFILE__INIT;
        types[0] = (PbValueType) PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
        types[0].type = samples;
        types[0].unit = count;
        types[1] = (PbValueType) PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
        types[1].type = cpu;
        types[1].unit = ns;
        type_ptrs[0] = &types[0];
        type_ptrs[1] = &types[1];
        *period_type = types[1];
        p->n_sample_type = 2;
        p->sample_type = type_ptrs;
        p->n_sample = b->n_samples;
        p->sample = b->samples;
        p->n_mapping = b->n_mappings;
        p->mapping = b->mappings;
        p->n_location = b->n_locations;
        p->location = b->locations;
        p->n_function = b->n_functions;
        p->function = b->functions;
        p->n_string_table = b->n_strings;
        p->string_table = b->strings;
        p->time_nanos = b->time_nanos;
        p->duration_nanos = b->duration_nanos;
        p->period_type = period_type;
        p->period = (int64_t) b->period_ns;
        p->n_comment = b->n_comments;
        p->comment = b->comments;
        p->default_sample_type = cpu; /* index into the string table: the type's name */
        return 0;
}

int pprof_builder_encode(PprofBuilder *b, bool gzip, uint8_t **ret, size_t *ret_size) {
        PbValueType types[2], *type_ptrs[2], period_type;
        PbProfile p;
        uint8_t *buf;
        size_t n, k, packed;
        int r;

        r = assemble(b, &p, types, type_ptrs, &period_type);
        if (r < 0)
                return r;
        /* Swapped before the size is taken: ids of one byte and of two trade places. */
        k = main_mapping(b);
        mapping_swap_first(b, k);
        n = perftools__profiles__profile__get_packed_size(&p);
        buf = malloc(n ?: 1);
        packed = buf ? perftools__profiles__profile__pack(&p, buf) : 0;
        mapping_swap_first(b, k); /* the ids the builder goes on with */
        if (!buf)
                return -ENOMEM;
        if (packed != n) {
                free(buf);
                return -EIO;
        }
        if (gzip) {
                uLong bound = compressBound(n) + 32;
                uint8_t *z = malloc(bound);
                z_stream zs = {};
                if (!z) {
                        free(buf);
                        return -ENOMEM;
                }
                if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
                        free(buf);
                        free(z);
                        return -ENOMEM;
                }
                zs.next_in = buf;
                zs.avail_in = n;
                zs.next_out = z;
                zs.avail_out = bound;
                r = deflate(&zs, Z_FINISH);
                n = zs.total_out;
                deflateEnd(&zs);
                free(buf);
                if (r != Z_STREAM_END) {
                        free(z);
                        return -EIO;
                }
                buf = z;
        }
        *ret = buf;
        *ret_size = n;
        return 0;
}

/* A protobuf-c output buffer that gzips what it is given straight into a FILE. */
typedef struct GzipBuffer {
        ProtobufCBuffer base;
        z_stream zs;
        FILE *out;
        int error;
        uint8_t chunk[64 * 1024];
} GzipBuffer;

static int gzip_pump(GzipBuffer *g, int flush) {
        int zr;

        do {
                g->zs.next_out = g->chunk;
                g->zs.avail_out = sizeof g->chunk;
                zr = deflate(&g->zs, flush);
                if (zr == Z_STREAM_ERROR)
                        return -EIO;
                size_t have = sizeof g->chunk - g->zs.avail_out;
                errno = 0;
                if (have > 0 && fwrite(g->chunk, 1, have, g->out) != have)
                        return errno > 0 ? -errno : -EIO; /* ENOSPC, EPIPE: what the writer hit */
        } while (g->zs.avail_out == 0);
        return 0;
}

static void gzip_append(ProtobufCBuffer *buffer, size_t len, const uint8_t *data) {
        GzipBuffer *g = (GzipBuffer *) buffer;

        if (g->error < 0)
                return;
        g->zs.next_in = (uint8_t *) data;
        g->zs.avail_in = len;
        g->error = gzip_pump(g, Z_NO_FLUSH);
}

int pprof_builder_write(PprofBuilder *b, FILE *out) {
        PbValueType types[2], *type_ptrs[2], period_type;
        _cleanup_free_ GzipBuffer *g = NULL;
        PbProfile p;
        int r;

        r = assemble(b, &p, types, type_ptrs, &period_type);
        if (r < 0)
                return r;
        g = new0(GzipBuffer, 1);
        if (!g)
                return -ENOMEM;
        g->base.append = gzip_append;
        g->out = out;
        if (deflateInit2(&g->zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
                return -ENOMEM;
        size_t k = main_mapping(b);
        mapping_swap_first(b, k);
        (void) perftools__profiles__profile__pack_to_buffer(&p, &g->base);
        mapping_swap_first(b, k); /* the ids the builder goes on with */
        r = g->error;
        if (r >= 0) {
                g->zs.next_in = NULL;
                g->zs.avail_in = 0;
                r = gzip_pump(g, Z_FINISH);
        }
        deflateEnd(&g->zs);
        if (r >= 0 && fflush(out) != 0)
                r = -errno;
        return r;
}
