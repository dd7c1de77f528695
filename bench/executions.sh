#!/usr/bin/env bash
# POST /api/executions on the packaged daemon: the first execution (GraalJS engine built), then code with no
# tool call and with one, beside the same call through POST /api/tools/call; memory before and after.
# Usage: bench/executions.sh [samples=200]
exec "$(dirname "${BASH_SOURCE[0]}")/run.sh" ExecutionsBenchmark "$@"
