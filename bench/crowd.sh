#!/usr/bin/env bash
# A crowd against one packaged daemon: 10,000 kept-alive connections (a request on each as it opens, its resident
# memory and open files with all of them idle, then a second request on each at once), and 50 ordinary requests while
# 1,000 slowloris sockets are open, beside the same 50 alone. Every request's outcome is counted: 200, shed (503/429
# with Retry-After), anything else, reset or closed unanswered.
# Usage: bench/crowd.sh [connections=10000] [opening=500] [slow=1000] [ordinary=50] [path=/api/integrations] [settle=5] [--tether.x=y ...]
# Each connection costs a file on both sides: the client and the daemon it starts get the hard limit of open files.
ulimit -n "$(ulimit -Hn)"
exec "$(dirname "${BASH_SOURCE[0]}")/run.sh" CrowdBenchmark "$@"
