#!/usr/bin/env bash
# POST /api/executions on the packaged daemon: the first execution (GraalJS engine built), then code with no
# tool call and with one, beside the same call through POST /api/tools/call; executions/s from 1 and 8 clients;
# memory bombs (100,000 parked calls among them) and resident memory around them; the jar size; the load average;
# then what durable executions cost: the journal's share of `return 1` and of one tool call (beside a daemon with
# tether.execution.durable=false), and the rebuild by replay of a pause with 20 recorded calls after a restart.
# Usage: bench/executions.sh [samples=200] [seconds=10] [rebuilds=20]
exec "$(dirname "${BASH_SOURCE[0]}")/run.sh" ExecutionsBenchmark "$@"
