# A smoke run on Node 22 (the oldest supported line): npm ci without a warning, then a real
# server on the demo answering one request of each kind (.ci/smoke.mjs).
source .ci/lib/node-line.sh
node_line 22
cd "$LINE_TREE"
PATH="$NODE_HOME/bin:$PATH" node .ci/smoke.mjs >&2
