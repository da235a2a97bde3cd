# The whole suite on Node 24 (the active LTS), on SQLite and PostgreSQL, in a tree of its own
# (.ci/lib/node-line.sh); the machine's Node runs it again last (90-suite.sh).
source .ci/lib/node-line.sh
node_line 24
cd "$LINE_TREE"
PATH="$NODE_HOME/bin:$PATH" npm run typecheck >&2
PATH="$NODE_HOME/bin:$PATH" npm test >&2
