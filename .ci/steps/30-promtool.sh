# Prometheus's own `promtool check metrics` checks the service's /metrics in test/metrics.test.ts,
# on SQLite and PostgreSQL; .ci/run exports CI=true, under which that test fails when promtool is
# missing instead of skipping.
if ! command -v promtool >/dev/null 2>&1; then
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >&2
fi
promtool --version 2>&1 | head -n 1 >&2
