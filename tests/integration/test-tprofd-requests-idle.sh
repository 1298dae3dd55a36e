#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-tprofd-requests.sh with a server whose main thread only waits, never sampled, and which is
# still there when the bundle is written, the threads of its requests gone.
REQUESTS_MODE=--requests-idle exec "$(dirname "$0")/test-tprofd-requests.sh"
