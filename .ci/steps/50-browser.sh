# The console in a real browser: Debian's Chromium driven by playwright-core, against a real
# server on SQLite and PostgreSQL (PRODGRAPH_TEST_PG, set by .ci/run). Installs Chromium when
# the machine lacks it. Screenshots land in test-results/console/ (ignored by git).
if [ ! -x /usr/bin/chromium ]; then
  echo "Chromium is missing; installing Debian's package" >&2
  apt-get update >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y chromium >&2
fi
npm run test:browser >&2
