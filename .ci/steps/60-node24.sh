# The whole suite on Node 24 (the active LTS) in a tree of its own (.ci/lib/node-line.sh), on
# SQLite: what differs between Node lines is the runtime, not the database driver's SQL, and the
# machine's Node runs every file on SQLite and PostgreSQL last (90-suite.sh). Keeps CI in budget.
source .ci/lib/node-line.sh
node_line 24
cd "$LINE_TREE"
PATH="$NODE_HOME/bin:$PATH" npm run typecheck >&2
PATH="$NODE_HOME/bin:$PATH" env -u PRODGRAPH_TEST_PG npm test >&2
