# The Python client (clients/python), standard library only, even to build it.
#
# 1. Its README's install command, exactly as written, on every Python 3.9+ under pyenv: in a
#    scratch folder where `python3` is that Python, a fresh venv, offline (no index, no pip
#    configuration, no find-links), nothing installed but the pip the venv comes with; then the
#    installed package is imported from the venv and its command runs.
# 2. Its tests against a live server on SQLite and PostgreSQL, on the oldest and newest of them
#    (the packaging test installs it the README's way again, and checks every installed file).
# 3. Its annotations (py.typed) checked by a type checker.
pythons=()
for v in $(ls -d "$HOME"/.pyenv/versions/3.* 2>/dev/null | sed 's|.*/||' | sort -t. -k1,1n -k2,2n -k3,3n); do
  minor=${v#3.}; minor=${minor%%.*}
  if [ "$minor" -ge 9 ] && [ -x "$HOME/.pyenv/versions/$v/bin/python3" ]; then pythons+=("$HOME/.pyenv/versions/$v/bin/python3"); fi
done
if [ ${#pythons[@]} -eq 0 ]; then
  pythons=("$(command -v python3)")
fi
repo=$PWD
install=$(awk '/^## Install/ {f = 1} f && /^```sh/ {getline; print; exit}' clients/python/README.md)
[ -n "$install" ] || { echo "clients/python/README.md: no install command under ## Install" >&2; exit 1; }
for python in "${pythons[@]}"; do
  scratch=$(mktemp -d)
  mkdir "$scratch/bin" && ln -s "$python" "$scratch/bin/python3" && ln -s "$repo/clients" "$scratch/clients"
  echo "README install with $("$python" -V): $install" >&2
  (cd "$scratch" && env -u PIP_FIND_LINKS -u PIP_INDEX_URL -u PIP_EXTRA_INDEX_URL PIP_NO_INDEX=1 PIP_CONFIG_FILE=/dev/null \
    PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1 PATH="$scratch/bin:$PATH" bash -c "$install" >&2)
  "$scratch/v/bin/python" -I -c 'import prodgraph, prodgraph.mirror, importlib.metadata as m; assert m.version("prodgraph") == prodgraph.__version__; print("  installed", prodgraph.__version__, prodgraph.__file__)' >&2
  "$scratch/v/bin/prodgraph-mirror" --help >/dev/null
  rm -rf "$scratch"
done
oldest=${pythons[0]}
newest=${pythons[${#pythons[@]}-1]}
export PRODGRAPH_TEST_PYTHONS="$oldest"
[ "$newest" != "$oldest" ] && PRODGRAPH_TEST_PYTHONS="$oldest $newest"
echo "Python client tests with: $PRODGRAPH_TEST_PYTHONS" >&2
"$newest" clients/python/tests/run.py >&2
# The package's annotations (py.typed) and the build backend, checked by a type checker for the
# oldest and newest Python it supports (pyright from the npm registry, pinned; not a dependency
# of the server).
for v in 3.9 3.13; do
  npx --yes pyright@1.1.414 --pythonversion "$v" clients/python/prodgraph clients/python/build_backend >&2
done
