#!/usr/bin/env bash
# `npm run test:openstack`: brings up the loopback OpenStack of ../shared/openstack (or uses the one
# REAL_OPENSTACK_AUTH_URL names) and runs the real-OpenStack scenario against it. Opt-in: not part
# of `npm test`.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${REAL_OPENSTACK_AUTH_URL:-}" ]; then
  if [ ! -d ../shared/openstack ]; then
    echo "test:openstack needs ../shared/openstack (or REAL_OPENSTACK_AUTH_URL pointing at an OpenStack)" >&2
    exit 2
  fi
  bash ../shared/openstack/setup.sh
fi
exec node --import tsx --test test/openstack/*.real.ts
