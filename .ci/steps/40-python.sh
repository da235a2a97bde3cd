# The Python client (clients/python) against a live server on SQLite and PostgreSQL, on the
# oldest and newest Python 3 (3.9+) the machine has under pyenv. Standard library only, so
# nothing is installed for it. Its packaging test installs it offline with `pip install
# --no-build-isolation` into a venv of each Python under test, building with that Python's own
# setuptools when it is 61+, else with the setuptools and wheel wheels CPython ships with its
# tests; Debian's setuptools and wheel serve when the only Python is Debian's.
if ! dpkg -s python3-setuptools python3-wheel python3-pip >/dev/null 2>&1; then
  apt-get update -qq >&2 && apt-get install -y -qq python3-setuptools python3-wheel python3-pip >&2
fi
pythons=()
for v in $(ls -d "$HOME"/.pyenv/versions/3.* 2>/dev/null | sed 's|.*/||' | sort -t. -k1,1n -k2,2n -k3,3n); do
  minor=${v#3.}; minor=${minor%%.*}
  if [ "$minor" -ge 9 ] && [ -x "$HOME/.pyenv/versions/$v/bin/python" ]; then pythons+=("$HOME/.pyenv/versions/$v/bin/python"); fi
done
if [ ${#pythons[@]} -eq 0 ]; then
  pythons=("$(command -v python3)")
fi
oldest=${pythons[0]}
newest=${pythons[${#pythons[@]}-1]}
export PRODGRAPH_TEST_PYTHONS="$oldest"
[ "$newest" != "$oldest" ] && PRODGRAPH_TEST_PYTHONS="$oldest $newest"
echo "Python client tests with: $PRODGRAPH_TEST_PYTHONS" >&2
"$newest" clients/python/tests/run.py >&2
# The package's annotations (py.typed) checked by a type checker, for the oldest and newest Python
# it supports (pyright from the npm registry, pinned; not a dependency of the server).
for v in 3.9 3.13; do
  npx --yes pyright@1.1.414 --pythonversion "$v" clients/python/prodgraph >&2
done
