#!/usr/bin/env bash
# What knowing the caller costs a tool call: the packaged daemon's POST /api/tools/call from 1 and 8 clients with the
# daemon's token and a personal API token (local mode), and with a real Keycloak (TETHER_TEST_KEYCLOAK_URL, as .ci/run starts
# it) a Keycloak JWT and an API token in oidc mode, beside the HTTP floor.
# Usage: bench/identity.sh [seconds=10] [warmup=20]
exec "$(dirname "${BASH_SOURCE[0]}")/run.sh" IdentityBenchmark "$@"
