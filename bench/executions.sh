#!/usr/bin/env bash
# POST /api/executions on the packaged daemon: the first execution (GraalJS engine built), then code with no
# tool call and with one, beside the same call through POST /api/tools/call; executions/s from 1 and 8 clients;
# memory bombs (100,000 parked calls among them) and resident memory around them; the jar size; the load average.
# Usage: bench/executions.sh [samples=200] [seconds=10]
exec "$(dirname "${BASH_SOURCE[0]}")/run.sh" ExecutionsBenchmark "$@"
