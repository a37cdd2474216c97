#!/usr/bin/env bash
# `npm run test:prometheus`: starts a real Prometheus and Alertmanager on loopback (the Debian
# packages prometheus and prometheus-alertmanager, or binaries PROMETHEUS_BIN / ALERTMANAGER_BIN
# name) and runs the Prometheus measure source and the Alertmanager webhooks against them. Opt-in:
# not part of `npm test`. Skips, saying why, when the binaries are not installed.
set -euo pipefail
cd "$(dirname "$0")/.."
PROMETHEUS_BIN="${PROMETHEUS_BIN:-$(command -v prometheus || true)}"
ALERTMANAGER_BIN="${ALERTMANAGER_BIN:-$(command -v prometheus-alertmanager || command -v alertmanager || true)}"
if [ -z "$PROMETHEUS_BIN" ] || [ -z "$ALERTMANAGER_BIN" ]; then
  echo "test:prometheus skipped: needs prometheus and alertmanager (apt-get install prometheus prometheus-alertmanager, or set PROMETHEUS_BIN and ALERTMANAGER_BIN)"
  exit 0
fi
export PROMETHEUS_BIN ALERTMANAGER_BIN
exec node --import tsx --test --test-timeout=180000 test/prometheus/*.real.ts
