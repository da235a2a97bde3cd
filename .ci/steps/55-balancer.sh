# Several servers behind a real balancer: HAProxy (installed by 10-install.sh) running
# deploy/haproxy.cfg in front of three servers on one PostgreSQL (PRODGRAPH_TEST_PG, set by
# .ci/run), under a mixed load while keys and grants are revoked, each server is restarted in
# turn and one is killed (docs/operations.md, "Several servers"). Two to three minutes.
npm run test:balancer >&2
