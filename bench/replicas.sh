#!/usr/bin/env bash
# Replicas on one PostgreSQL (the tests' TETHER_TEST_POSTGRES*), plain node fixture servers, Debian's haproxy: warm tool
# calls/s from 1, 8 and 32 clients against one replica alone and through HAProxy round robin over three, with the CPU
# each call cost the daemons, their children, HAProxy and the client (/proc); the forwarding hop's p50/p90 (a call to
# the owner against the same call through a peer); the time until a replica's connection is served again after kill -9
# of it and after its SIGTERM, under the lease TTL and heartbeat given (default the daemon's: 15 s and 5 s).
# Usage: bench/replicas.sh [samples=500] [seconds=5] [warmup=90] [clients=1,8,32] [connections=6] [moves=3] [lease-ttl=15] [heartbeat=5]
#        [figures=calls,forwarding,moves]
: "${TETHER_TEST_POSTGRES:?replicas need PostgreSQL: set TETHER_TEST_POSTGRES=host:port/database (and TETHER_TEST_POSTGRES_USER, TETHER_TEST_POSTGRES_PASSWORD unless both are tether), as the tests take it}"
exec "$(dirname "${BASH_SOURCE[0]}")/run.sh" ReplicasBenchmark "$@"
