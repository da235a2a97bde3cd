# The README's test command with PRODGRAPH_TEST_PG set: every suite on SQLite and PostgreSQL.
# Last, so the test runner's summary is the run's last line.
npm test 2>&1
