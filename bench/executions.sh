#!/usr/bin/env bash
# POST /api/executions on the packaged daemon: the first execution (GraalJS engine built), then code with no
# tool call and with one, beside the same call through POST /api/tools/call; executions/s from 1 and 8 clients;
# memory bombs and resident memory around them; the jar size.
# Usage: bench/executions.sh [samples=200] [seconds=10]
exec "$(dirname "${BASH_SOURCE[0]}")/run.sh" ExecutionsBenchmark "$@"
