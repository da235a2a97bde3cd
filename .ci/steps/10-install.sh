# curl and jq: test/readme-turnover-walk.test.ts runs README's turnover walk-through with them.
if ! command -v curl >/dev/null 2>&1 || ! command -v jq >/dev/null 2>&1; then
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends curl jq ca-certificates >&2
fi
# HAProxy: npm run test:balancer (.ci/steps/55-balancer.sh) puts Debian's haproxy in front of
# three servers; under CI=true that test fails, instead of skipping, when haproxy is missing.
if ! command -v haproxy >/dev/null 2>&1 && [ ! -x /usr/sbin/haproxy ]; then
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends haproxy >&2
fi
# npm packages (builds better-sqlite3 against this Node and dist/ through `prepare`).
npm ci --no-audit --no-fund >&2
