/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which cgroups a bundle's samples ran in: per cgroup path, the samples in the slice, in the
 * event's own seconds and in the baseline, and the processes that had the most of them in the
 * slice, in the event's own seconds and in the rest of the bundle (a burst at the event, a process
 * that stopped at it: what show names), with their samples in the same three, written into the manifest
 * ("cgroups") with the names profile-cgroup.h derives from the path and the names only the host
 * knows, looked up once when the bundle is written, from local files only (never a network call):
 *
 *  - Docker: /var/lib/docker/containers/<id>/config.v2.json, "Name", or where the kubelet made
 *    the container (dockershim, cri-dockerd) its labels io.kubernetes.container.name,
 *    io.kubernetes.pod.name, .pod.namespace;
 *  - containerd: /run/containerd/io.containerd.runtime.v2.task/k8s.io/<id>/config.json (the CRI),
 *    annotations io.kubernetes.cri.container-name, .sandbox-name, .sandbox-namespace; in the
 *    default namespace, .../default/<id>/config.json, nerdctl's annotation nerdctl/name;
 *  - a container of the kubelet's cgroupfs driver (runtime unknown): each of these in turn;
 *  - CRI-O and podman: /var/lib/containers/storage/overlay-containers/<id>/userdata/config.json,
 *    annotations io.kubernetes.container.name, io.kubernetes.pod.name, .pod.namespace (a podman
 *    container outside Kubernetes has none of them: it is named by its id);
 *  - the kubelet: /var/log/pods/<namespace>_<name>_<uid>/, the pod's namespace and name by UID.
 *
 * Bounded: at most INCIDENT_CGROUPS_MAX cgroups are listed (most samples first).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "basic/json-writer.h"
#include "profile/profile-sample.h"

#define INCIDENT_CGROUPS_MAX 256U
#define INCIDENT_CGROUP_COMMS_MAX 5U

typedef struct IncidentCgroups IncidentCgroups;

IncidentCgroups *incident_cgroups_new(void);
IncidentCgroups *incident_cgroups_free(IncidentCgroups *c);
/* s in the slice or the baseline; in_near: in the event's own seconds too (a part of the slice). */
int incident_cgroups_add(IncidentCgroups *c, const Sample *s, bool in_slice, bool in_near);
/* Writes the "cgroups" array (key included). root is where the host's files are looked up ("/"). */
void incident_cgroups_json(const IncidentCgroups *c, const char *root, JsonWriter *w);

#include "basic/cleanup.h"
DEFINE_TRIVIAL_CLEANUP_FUNC(IncidentCgroups *, incident_cgroups_free);
