"""The package in a bare interpreter (``python -I -S``), copied or pip-installed offline."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from typing import List, Optional

from live import CLIENT_DIR, live

import prodgraph

SMOKE = """
import prodgraph, sys
client = prodgraph.Client(sys.argv[1], sys.argv[2])
print(client.get_production()["title"], prodgraph.__version__, len(list(client.list_scenes(limit=2))))
"""


def _builder() -> Optional[str]:
    """An interpreter that can build the package offline: setuptools 61+, and wheel before 70.1."""
    probe = (
        "import setuptools, sys\n"
        "v = tuple(int(x) for x in setuptools.__version__.split('.')[:2])\n"
        "ok = v >= (61, 0)\n"
        "if ok and v < (70, 1):\n"
        "    import wheel\n"
        "sys.exit(0 if ok else 1)\n"
    )
    for candidate in (sys.executable, "/usr/bin/python3"):
        if not candidate or not Path(candidate).exists():
            continue
        done = subprocess.run([candidate, "-c", probe], capture_output=True)
        if done.returncode == 0 and subprocess.run([candidate, "-m", "pip", "--version"], capture_output=True).returncode == 0:
            return candidate
    return None


class Packaging(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.server = live()
        cls.tmp = Path(tempfile.mkdtemp(prefix="prodgraph-pkg-"))

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def run_py(self, args: List[str], **kwargs: object) -> str:
        done = subprocess.run(args, capture_output=True, text=True, timeout=120, **kwargs)  # type: ignore[call-overload]
        self.assertEqual(done.returncode, 0, done.stderr)
        return done.stdout

    def test_copied_folder_in_a_bare_interpreter(self) -> None:
        """What a TD does for a DCC: copy the one folder somewhere on sys.path."""
        target = self.tmp / "dcc-scripts"
        shutil.copytree(CLIENT_DIR / "prodgraph", target / "prodgraph", ignore=shutil.ignore_patterns("__pycache__"))
        code = f"import sys; sys.path.insert(0, {str(target)!r})\n" + SMOKE
        out = self.run_py([sys.executable, "-I", "-S", "-c", code, self.server.url, self.server.admin_key])
        self.assertEqual(out.split(), ["Nightfall", prodgraph.__version__, str(len(list(_scenes())))])
        self.assertEqual(
            self.run_py([sys.executable, "-I", "-S", "-c", f"import sys; sys.path.insert(0, {str(target)!r}); import prodgraph.__main__"]),
            "",
        )

    def test_imports_nothing_outside_the_standard_library(self) -> None:
        code = (
            f"import sys; sys.path.insert(0, {str(CLIENT_DIR)!r}); before = set(sys.modules)\n"
            "import prodgraph, prodgraph.mirror, prodgraph.types\n"
            "std = set(getattr(sys, 'stdlib_module_names', ()))\n"
            "new = {m.split('.')[0] for m in set(sys.modules) - before} - {'prodgraph'}\n"
            "print(sorted(m for m in new if std and m not in std and not m.startswith('_')))\n"
        )
        out = self.run_py([sys.executable, "-I", "-S", "-c", code])
        self.assertEqual(out.strip(), "[]")

    def test_pip_install_offline(self) -> None:
        if self.server.dialect != "sqlite":
            self.skipTest("packaging does not depend on the database: checked on the SQLite run")
        builder = _builder()
        if builder is None:
            self.skipTest("no interpreter here has setuptools 61+ (and wheel) to build with")
        target = self.tmp / "site"
        self.run_py(
            [builder, "-m", "pip", "install", "--no-build-isolation", "--no-index", "--no-deps", "--quiet",
             "--target", str(target), str(CLIENT_DIR)],
            env=dict(os.environ, PIP_NO_INPUT="1", PIP_DISABLE_PIP_VERSION_CHECK="1"),
        )
        self.assertTrue((target / "prodgraph" / "py.typed").exists(), "py.typed ships with the package")
        code = "import importlib.metadata as m; print(m.version('prodgraph'))\n" + SMOKE
        out = self.run_py([builder, "-c", code, self.server.url, self.server.admin_key], env=dict(os.environ, PYTHONPATH=str(target)))
        self.assertEqual(out.split()[0], prodgraph.__version__)
        self.assertEqual(out.split()[1], "Nightfall")


def _scenes() -> list:
    from live import client

    c = client()
    rows = list(c.list_scenes())
    c.close()
    return rows


if __name__ == "__main__":
    unittest.main()
