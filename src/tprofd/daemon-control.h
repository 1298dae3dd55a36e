/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The control socket's requests, answered from the running daemon's parts: "status" (counts of
 * every part, as tprof-bundle status prints them) and "capture" (an incident without a log line,
 * answered when its bundle is written).
 */
#pragma once

#include <stdint.h>

#include "basic/clock-map.h"
#include "control/control-server.h"
#include "incident/incident-manager.h"
#include "logsrc/logsrc-journal.h"
#include "logsrc/logsrc-kmsg.h"
#include "rules/rules.h"
#include "sampler/sampler.h"
#include "store/ring-store.h"
#include "tprofd/tprofd-config.h"

/* What a request is answered from, as it is at the moment of the request (the journal may be
 * followed only later, the rules change on reload). */
typedef struct DaemonParts {
        const TprofdConfig *config;
        const RuleSet *rules;
        Sampler *sampler;
        RingStore *ring;
        IncidentManager *incidents;
        KmsgSource *kmsg;
        JournalSource *journal; /* NULL while not followed */
        const ClockMap *clock;
        uint64_t started_usec; /* CLOCK_MONOTONIC */
} DaemonParts;

/* Answers req now (status, an error) or once the capture's bundle is done. */
void daemon_control_request(const DaemonParts *p, ControlRequest *req, const ControlMessage *msg);
