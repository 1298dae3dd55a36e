/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A bundle's cgroups and their names; see incident-cgroups.h.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basic/alloc-util.h"
#include "basic/fileio.h"
#include "basic/hashmap.h"
#include "basic/json-reader.h"
#include "basic/macro.h"
#include "incident/incident-cgroups.h"
#include "profile/profile-cgroup.h"

#define METADATA_FILE_BYTES_MAX (4U * 1024U * 1024U)
#define PODS_LISTED_MAX 10000U

typedef struct CgroupEntry {
        char *path; /* "" for samples without a cgroup */
        uint64_t slice, near, baseline;
        /* comm -> samples in the slice, in the event's own seconds (a part of the slice), in the
         * baseline: where a process ran in two cgroups, which of them rose where */
        Hashmap *comms, *comms_near, *comms_baseline;
} CgroupEntry;

struct IncidentCgroups {
        Hashmap *index; /* path -> entry */
        CgroupEntry *entries;
        size_t n, allocated;
        uint64_t dropped;
};

IncidentCgroups *incident_cgroups_new(void) {
        IncidentCgroups *c = new0(IncidentCgroups, 1);

        if (!c)
                return NULL;
        c->index = hashmap_new();
        if (!c->index)
                return mfree(c);
        return c;
}

static void entry_done(CgroupEntry *e) {
        free(e->path);
        hashmap_free(e->comms);
        hashmap_free(e->comms_near);
        hashmap_free(e->comms_baseline);
}

static int count_comm(Hashmap *h, const Sample *s) {
        uint64_t *n = hashmap_slot(h, s->comm ?: "", strlen(s->comm ?: ""), 0, NULL);

        if (!n)
                return -ENOMEM;
        (*n)++;
        return 0;
}

IncidentCgroups *incident_cgroups_free(IncidentCgroups *c) {
        if (!c)
                return NULL;
        for (size_t i = 0; i < c->n; i++)
                entry_done(&c->entries[i]);
        free(c->entries);
        hashmap_free(c->index);
        return mfree(c);
}

/* Distinct cgroups kept while counting: far more than are listed, few enough to bound memory. */
#define CGROUPS_COUNTED_MAX 65536U

int incident_cgroups_add(IncidentCgroups *c, const Sample *s, bool in_slice, bool in_near) {
        const char *path = s->cgroup ?: "";
        size_t l = strlen(path);
        CgroupEntry *e;
        uint64_t v;

        if (!hashmap_get(c->index, path, l, &v)) {
                if (c->n >= CGROUPS_COUNTED_MAX) {
                        c->dropped++;
                        return 0;
                }
                if (!GREEDY_REALLOC(c->entries, c->allocated, c->n + 1))
                        return -ENOMEM;
                e = &c->entries[c->n];
                *e = (CgroupEntry) { .path = strdup(path), .comms = hashmap_new(), .comms_near = hashmap_new(),
                                     .comms_baseline = hashmap_new() };
                if (!e->path || !e->comms || !e->comms_near || !e->comms_baseline ||
                    hashmap_put(c->index, path, l, c->n) < 0) {
                        entry_done(e);
                        return -ENOMEM;
                }
                v = c->n++;
        }
        e = &c->entries[v];
        if (!in_slice) {
                e->baseline++;
                return count_comm(e->comms_baseline, s);
        }
        e->slice++;
        if (in_near) {
                e->near++;
                if (count_comm(e->comms_near, s) < 0)
                        return -ENOMEM;
        }
        return count_comm(e->comms, s);
}

/* ---------------------------------------------------------------- host metadata */

static JsonValue *load_json(const char *root, const char *path) {
        _cleanup_free_ char *fn = NULL, *data = NULL;
        JsonValue *v = NULL;
        size_t size;

        if (asprintf(&fn, "%s%s", streq(root, "/") ? "" : root, path) < 0)
                return NULL;
        if (read_full_file(fn, METADATA_FILE_BYTES_MAX, &data, &size) < 0)
                return NULL;
        if (json_parse(data, size, 64, &v, NULL) < 0)
                return NULL;
        return v;
}

typedef struct Meta {
        char *container_name, *pod_name, *pod_namespace;
} Meta;

static void meta_done(Meta *m) {
        free(m->container_name);
        free(m->pod_name);
        free(m->pod_namespace);
        *m = (Meta) {};
}

static void take(char **dst, const JsonValue *v) {
        const char *s = json_string_value(v);

        if (!*dst && !isempty(s))
                *dst = strdup(s);
}

/* The names the kubelet gives a container it made, as labels (Docker's) or annotations (the OCI
 * config's, CRI-O's and podman's): kv is the object that holds them. */
static void take_kubelet_names(const JsonValue *kv, Meta *m) {
        take(&m->container_name, json_object_get(kv, "io.kubernetes.container.name"));
        take(&m->pod_name, json_object_get(kv, "io.kubernetes.pod.name"));
        take(&m->pod_namespace, json_object_get(kv, "io.kubernetes.pod.namespace"));
}

/* Docker's config.v2.json: the kubelet's labels where cri-dockerd made the container (its Name
 * there is "k8s_<container>_<pod>_<namespace>_<uid>_<attempt>"), else its Name. */
static void meta_docker(const char *root, const char *id, Meta *m) {
        _cleanup_(json_value_freep) JsonValue *v = NULL;
        char path[256];

        snprintf(path, sizeof path, "/var/lib/docker/containers/%s/config.v2.json", id);
        v = load_json(root, path);
        if (!v)
                return;
        take_kubelet_names(json_object_get(json_object_get(v, "Config"), "Labels"), m);
        const char *name = json_string_value(json_object_get(v, "Name"));
        if (!m->container_name && !isempty(name) && !streq(name, "/"))
                m->container_name = strdup(name[0] == '/' ? name + 1 : name);
}

/* containerd's bundle, in the CRI's namespace (its annotations) or the default one (nerdctl's). */
static void meta_containerd(const char *root, const char *id, Meta *m) {
        static const char *const namespaces[] = { "k8s.io", "default" };

        for (size_t i = 0; i < ELEMENTSOF(namespaces) && !m->container_name; i++) {
                _cleanup_(json_value_freep) JsonValue *v = NULL;
                char path[256];

                snprintf(path, sizeof path, "/run/containerd/io.containerd.runtime.v2.task/%s/%s/config.json",
                         namespaces[i], id);
                v = load_json(root, path);
                if (!v)
                        continue;
                const JsonValue *a = json_object_get(v, "annotations");
                take(&m->container_name, json_object_get(a, "io.kubernetes.cri.container-name"));
                take(&m->pod_name, json_object_get(a, "io.kubernetes.cri.sandbox-name"));
                take(&m->pod_namespace, json_object_get(a, "io.kubernetes.cri.sandbox-namespace"));
                take(&m->container_name, json_object_get(a, "nerdctl/name"));
        }
}

/* containers/storage's, CRI-O's and podman's: the kubelet's annotations where there are any. */
static void meta_containers_storage(const char *root, const char *id, Meta *m) {
        _cleanup_(json_value_freep) JsonValue *v = NULL;
        char path[256];

        snprintf(path, sizeof path, "/var/lib/containers/storage/overlay-containers/%s/userdata/config.json", id);
        v = load_json(root, path);
        if (!v)
                return;
        take_kubelet_names(json_object_get(v, "annotations"), m);
}

static void meta_container(const char *root, const CgroupNames *n, Meta *m) {
        switch (n->runtime) {
        case CGROUP_RUNTIME_DOCKER:
                meta_docker(root, n->container_id, m);
                break;
        case CGROUP_RUNTIME_CONTAINERD:
                meta_containerd(root, n->container_id, m);
                break;
        case CGROUP_RUNTIME_CRI: /* the kubelet's cgroupfs driver: any runtime it can have */
                meta_containerd(root, n->container_id, m);
                if (!m->container_name)
                        meta_containers_storage(root, n->container_id, m);
                if (!m->container_name)
                        meta_docker(root, n->container_id, m);
                break;
        case CGROUP_RUNTIME_CRIO:
        case CGROUP_RUNTIME_PODMAN:
                meta_containers_storage(root, n->container_id, m);
                break;
        case CGROUP_RUNTIME_LXC: /* the path names the guest */
                m->container_name = strdup(n->container_id);
                break;
        default:
                break;
        }
}

/* The kubelet names each pod's log directory <namespace>_<name>_<uid>; neither namespaces nor
 * names may hold '_' (DNS labels), so the split is unambiguous. */
static void meta_pod(const char *root, const char *uid, Meta *m) {
        _cleanup_free_ char *dir = NULL;
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        size_t ul = strlen(uid);
        unsigned seen = 0;

        if (m->pod_name && m->pod_namespace)
                return;
        if (asprintf(&dir, "%s/var/log/pods", streq(root, "/") ? "" : root) < 0)
                return;
        d = opendir(dir);
        if (!d)
                return;
        while ((de = readdir(d)) && seen++ < PODS_LISTED_MAX) {
                size_t l = strlen(de->d_name);
                const char *a, *b;

                if (l <= ul + 1 || strcmp(de->d_name + l - ul, uid) != 0 || de->d_name[l - ul - 1] != '_')
                        continue;
                a = strchr(de->d_name, '_');
                b = de->d_name + l - ul - 1;
                if (!a || a >= b)
                        continue;
                free(m->pod_namespace);
                free(m->pod_name);
                m->pod_namespace = strndup(de->d_name, (size_t) (a - de->d_name));
                m->pod_name = strndup(a + 1, (size_t) (b - a - 1));
                return;
        }
}

/* ---------------------------------------------------------------- output */

static int cmp_entry(const void *a, const void *b) {
        const CgroupEntry *x = *(CgroupEntry *const *) a, *y = *(CgroupEntry *const *) b;

        if (x->slice != y->slice)
                return x->slice > y->slice ? -1 : 1;
        if (x->baseline != y->baseline)
                return x->baseline > y->baseline ? -1 : 1;
        return strcmp(x->path, y->path);
}

typedef struct CommCount {
        const char *comm;
        size_t len;
        uint64_t n;
} CommCount;

static int cmp_comm(const void *a, const void *b) {
        const CommCount *x = a, *y = b;
        int c;

        if (x->n != y->n)
                return x->n > y->n ? -1 : 1;
        c = memcmp(x->comm, y->comm, MIN(x->len, y->len));
        return c != 0 ? c : (x->len > y->len) - (x->len < y->len);
}

/* The comms of e with the most samples by one count: in the slice, in the event's own seconds, or
 * in the rest of the bundle (the slice outside them and the baseline), into top (the largest
 * INCIDENT_CGROUP_COMMS_MAX, n as the count, largest first). */
typedef enum CommRank {
        COMM_RANK_SLICE,
        COMM_RANK_NEAR,
        COMM_RANK_REST,
        _COMM_RANK_MAX,
} CommRank;

static uint64_t comm_get(const Hashmap *h, const void *k, size_t kl) {
        uint64_t v;
        return hashmap_get(h, k, kl, &v) ? v : 0;
}

static size_t comms_top(const CgroupEntry *e, CommRank rank, CommCount top[static INCIDENT_CGROUP_COMMS_MAX + 1]) {
        const void *k;
        size_t kl, n = 0;
        uint64_t v;

        /* keep the largest few: insert and cut */
        for (size_t i = 0; hashmap_iterate(e->comms, &i, &k, &kl, &v);) {
                uint64_t near = comm_get(e->comms_near, k, kl);
                uint64_t x = rank == COMM_RANK_SLICE ? v
                             : rank == COMM_RANK_NEAR ? near
                                                      : v - MIN(near, v) + comm_get(e->comms_baseline, k, kl);
                if (x == 0)
                        continue;
                top[n++] = (CommCount) { k, kl, x };
                qsort(top, n, sizeof top[0], cmp_comm);
                if (n > INCIDENT_CGROUP_COMMS_MAX)
                        n = INCIDENT_CGROUP_COMMS_MAX;
        }
        return n;
}

/* The processes of the cgroup the rankings of show may name: the most slice samples, and also
 * those with the most in the event's own seconds (a burst there, diluted over the slice) and in
 * the rest (one that stopped at the event), listed by slice samples. */
static void comms_json(const CgroupEntry *e, JsonWriter *w) {
        CommCount list[_COMM_RANK_MAX * INCIDENT_CGROUP_COMMS_MAX], top[INCIDENT_CGROUP_COMMS_MAX + 1];
        size_t n = 0;

        for (CommRank rank = 0; rank < _COMM_RANK_MAX; rank++) {
                size_t m = comms_top(e, rank, top);

                for (size_t i = 0; i < m; i++) {
                        bool dup = false;

                        for (size_t j = 0; j < n && !dup; j++)
                                dup = list[j].len == top[i].len && memcmp(list[j].comm, top[i].comm, top[i].len) == 0;
                        if (dup)
                                continue;
                        top[i].n = comm_get(e->comms, top[i].comm, top[i].len);
                        list[n++] = top[i];
                }
        }
        if (n > 1)
                qsort(list, n, sizeof list[0], cmp_comm);
        json_key(w, "comms");
        json_begin_array(w);
        for (size_t i = 0; i < n; i++) {
                json_begin_object(w);
                json_key(w, "comm");
                json_string_n(w, list[i].comm, list[i].len);
                json_kv_u64(w, "samples", list[i].n);
                json_kv_u64(w, "near_samples", comm_get(e->comms_near, list[i].comm, list[i].len));
                json_kv_u64(w, "baseline_samples", comm_get(e->comms_baseline, list[i].comm, list[i].len));
                json_end_object(w);
        }
        json_end_array(w);
}

static void kv_nonempty(JsonWriter *w, const char *k, const char *v) {
        if (!isempty(v))
                json_kv_string(w, k, v);
}

void incident_cgroups_json(const IncidentCgroups *c, const char *root, JsonWriter *w) {
        _cleanup_free_ CgroupEntry **order = new(CgroupEntry *, c->n ?: 1);
        size_t n = 0;

        json_key(w, "cgroups");
        json_begin_array(w);
        if (order) {
                for (size_t i = 0; i < c->n; i++)
                        order[n++] = &c->entries[i];
                qsort(order, n, sizeof order[0], cmp_entry);
        }
        for (size_t i = 0; i < MIN(n, (size_t) INCIDENT_CGROUPS_MAX); i++) {
                const CgroupEntry *e = order[i];
                Meta m = {};
                CgroupNames names;

                cgroup_names_parse(e->path, &names);
                if (names.container_id[0])
                        meta_container(root, &names, &m);
                if (names.pod_uid[0])
                        meta_pod(root, names.pod_uid, &m);
                json_begin_object(w);
                if (e->path[0])
                        json_kv_string(w, "path", e->path);
                else
                        json_kv_string(w, "path", NULL);
                json_kv_u64(w, "samples", e->slice);
                json_kv_u64(w, "near_samples", e->near);
                json_kv_u64(w, "baseline_samples", e->baseline);
                kv_nonempty(w, "unit", names.unit);
                if (names.container_id[0]) {
                        json_kv_string(w, "container_runtime", cgroup_runtime_to_string(names.runtime));
                        json_kv_string(w, "container_id", names.container_id);
                        kv_nonempty(w, "container_name", m.container_name);
                }
                if (names.pod_uid[0]) {
                        json_kv_string(w, "pod_uid", names.pod_uid);
                        json_kv_string(w, "pod_qos", kube_qos_to_string(names.qos));
                        kv_nonempty(w, "pod_namespace", m.pod_namespace);
                        kv_nonempty(w, "pod_name", m.pod_name);
                }
                comms_json(e, w);
                json_end_object(w);
                meta_done(&m);
        }
        json_end_array(w);
}
