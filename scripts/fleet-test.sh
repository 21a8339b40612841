#!/usr/bin/env bash
# The fleet tests against a real Redis: the store's Redis backend (unit tests) and three
# grundy-server replicas sharing one Redis (tests/fleet.rs: PutGraph through one, Evaluate
# and GetValues by id through the other two), plus the --store-dir kill -9 test and the
# unreachable-Redis test, and the client's failover (tests/failover.rs). redis-server is
# installed and started by scripts/with-redis.sh.
#
#   scripts/fleet-test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/with-redis.sh cargo test --lib service::store::
scripts/with-redis.sh cargo test --test fleet
# A judge run through three replicas on the same Redis, one killed and one restarted.
scripts/with-redis.sh cargo test --test failover
