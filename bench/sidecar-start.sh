#!/usr/bin/env bash
# The desktop app's wait for its sidecar: bin/executor-sidecar started as the app starts it, timed from exec to the
# EXECUTOR_READY line and to the first 200 of the UI's first calls (p50 of `runs`), with idle RSS.
# Usage: bench/sidecar-start.sh [runs=5] [settle=5] [data=kept|fresh]  (kept: the app's daily start; fresh: its first)
exec "$(dirname "${BASH_SOURCE[0]}")/run.sh" SidecarStartBenchmark "$@"
