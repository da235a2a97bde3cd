#!/usr/bin/env python3
"""Runs the Python client's tests on every database and Python asked for (``npm run test:python``).

    python3 clients/python/tests/run.py                  # this Python, SQLite (+ PostgreSQL when
                                                         # PRODGRAPH_TEST_PG is set)
    PRODGRAPH_TEST_PYTHONS="/path/python3.9 /path/python3.13" python3 clients/python/tests/run.py
    python3 clients/python/tests/run.py -k test_retries  # only files whose name matches

Each (Python, database) pair is one unittest process with one live server of its own (its own
temporary folder and PostgreSQL schema), so pairs run side by side: ``PRODGRAPH_TEST_PY_JOBS``
of them at once (default 2; much of each run waits on retries, back-offs and timeouts). Each
run's output is printed whole when it ends. A ResourceWarning (a socket or file not closed)
anywhere in a run counts as a failure. The last line is ``python client: N passed, N failed,
N skipped``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import List, Tuple

HERE = Path(__file__).resolve().parent


def _pythons() -> List[str]:
    given = os.environ.get("PRODGRAPH_TEST_PYTHONS", "").split()
    return given or [sys.executable]


def _databases() -> List[Tuple[str, str]]:
    dbs = [("sqlite", "sqlite")]
    pg = os.environ.get("PRODGRAPH_TEST_PG")
    if pg:
        dbs.append(("postgres", pg))
    return dbs


def _run(python: str, db: str, pattern: str) -> Tuple[str, Tuple[int, ...]]:
    """The output and (ran, failed, errors, skipped, leaked) of one unittest process."""
    # A ResourceWarning is a socket or file left to the garbage collector: an error, here and in
    # every Python the tests start (the mirror's command, the README's snippets). Raised inside
    # a finaliser it cannot fail the test that leaked (Python prints it and goes on), so the
    # output is searched for it too.
    env = dict(os.environ, PRODGRAPH_PY_DB=db, PYTHONDONTWRITEBYTECODE="1", PYTHONWARNINGS="error::ResourceWarning")
    cmd = [python, "-m", "unittest", "discover", "-s", str(HERE), "-t", str(HERE), "-p", pattern]
    done = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = done.stdout
    leaks = sum(1 for line in out.splitlines() if "ResourceWarning" in line)
    if leaks:
        out += f"── {leaks} ResourceWarning line(s) above: a socket or file was not closed\n"
    ran = int((re.search(r"^Ran (\d+) tests?", out, re.M) or [0, 0])[1])
    status = re.search(r"^(OK|FAILED)(?: \((.*)\))?$", out, re.M)
    detail = dict(re.findall(r"(\w+)=(\d+)", status.group(2) or "")) if status else {}
    failed, errors = int(detail.get("failures", 0)), int(detail.get("errors", 0))
    if done.returncode != 0 and failed + errors == 0:
        errors = 1  # the process itself failed (e.g. the server did not start)
    return out, (ran, failed, errors, int(detail.get("skipped", 0)), 1 if leaks else 0)


def _pair(python: str, name: str, db: str, pattern: str) -> Tuple[str, Tuple[int, ...]]:
    version = subprocess.run([python, "-c", "import sys; print(sys.version.split()[0])"], capture_output=True, text=True)
    started = time.monotonic()
    out, counts = _run(python, db, pattern)
    head = f"── Python {version.stdout.strip()} ({python}), {name}\n"
    return head + out + f"── {counts[0]} tests in {time.monotonic() - started:.0f} s\n", counts


def main() -> int:
    pattern = "test_*.py"
    if len(sys.argv) > 2 and sys.argv[1] == "-k":
        pattern = f"*{sys.argv[2]}*.py"
    pairs = [(python, name, db) for python in _pythons() for name, db in _databases()]
    jobs = max(1, int(os.environ.get("PRODGRAPH_TEST_PY_JOBS", "2")))
    total = [0, 0, 0, 0, 0]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for out, counts in pool.map(lambda p: _pair(*p, pattern), pairs):
            sys.stdout.write(out)
            sys.stdout.flush()
            total = [a + b for a, b in zip(total, counts)]
    ran, failed, errors, skipped, leaked = total
    passed = ran - failed - errors - skipped
    # a run that leaked counts as one failure more (its tests may all have passed)
    print(f"python client: {passed} passed, {failed + errors + leaked} failed, {skipped} skipped")
    return 0 if failed + errors + leaked == 0 and ran > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
