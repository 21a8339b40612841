#!/usr/bin/env bash
# The fleet tests against a real Redis: the store's Redis backend (unit tests) and the fleet
# tier (tests/fleet/): three grundy-server replicas sharing one Redis (shared_store: PutGraph
# through one, Evaluate and GetValues by id through the other two), the --store-dir kill -9
# test and the unreachable-Redis test, and the client's failover (failover: a judge run
# through three replicas on the same Redis, one killed and one restarted). redis-server is
# installed and started by scripts/with-redis.sh.
#
#   scripts/fleet-test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/with-redis.sh cargo test --lib service::store:: -- --include-ignored
scripts/with-redis.sh cargo test --test fleet -- --include-ignored
