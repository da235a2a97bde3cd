"""The package in a bare interpreter (``python -I -S``), copied or pip-installed offline."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from live import CLIENT_DIR, live

import prodgraph

SMOKE = """
import prodgraph, sys
client = prodgraph.Client(sys.argv[1], sys.argv[2])
print(client.get_production()["title"], prodgraph.__version__, len(list(client.list_scenes(limit=2))))
"""


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

    def outside_the_stdlib(self, *flags: str, also: str = "") -> List[str]:
        """The modules importing the package (and ``also``) loads from outside the stdlib folders."""
        code = (
            "import json, os, sys, sysconfig\n"
            "roots = {os.path.realpath(sysconfig.get_paths()[k]) + os.sep for k in ('stdlib', 'platstdlib')}\n"
            f"own = os.path.realpath({str(CLIENT_DIR / 'prodgraph')!r}) + os.sep\n"
            f"sys.path.insert(0, {str(CLIENT_DIR)!r}); before = set(sys.modules)\n"
            f"import prodgraph, prodgraph.mirror, prodgraph.types, prodgraph.__main__{also}\n"
            "outside = []\n"
            "for name in sorted(set(sys.modules) - before):\n"
            "    where = getattr(sys.modules[name], '__file__', None)\n"
            "    if where is None:\n"
            "        continue  # built into the interpreter, or frozen\n"
            "    where = os.path.realpath(where)\n"
            "    parts = where.split(os.sep)\n"
            "    in_std = any(where.startswith(r) for r in roots)\n"
            "    if where.startswith(own) or (in_std and 'site-packages' not in parts and 'dist-packages' not in parts):\n"
            "        continue\n"
            "    outside.append(name)\n"
            "print(json.dumps(outside))\n"
        )
        return json.loads(self.run_py([sys.executable, *flags, "-c", code]))

    def test_imports_nothing_outside_the_standard_library(self) -> None:
        # each module loaded is a file of the interpreter's own library folders (site-packages
        # excluded), on every Python: sys.stdlib_module_names only exists from 3.10 on
        self.assertEqual(self.outside_the_stdlib("-I"), [], "with site-packages on the path")
        self.assertEqual(self.outside_the_stdlib("-I", "-S"), [], "in a bare interpreter")
        if sys.version_info >= (3, 10):
            code = (
                f"import sys; sys.path.insert(0, {str(CLIENT_DIR)!r}); before = set(sys.modules)\n"
                "import prodgraph, prodgraph.mirror, prodgraph.types, prodgraph.__main__\n"
                "new = {m.split('.')[0] for m in set(sys.modules) - before} - {'prodgraph'}\n"
                "print(sorted(m for m in new if m not in sys.stdlib_module_names))\n"
            )
            self.assertEqual(self.run_py([sys.executable, "-I", "-S", "-c", code]).strip(), "[]")

    def test_the_stdlib_check_sees_a_package_from_site_packages(self) -> None:
        """The check above can fail: pip, imported beside the package, is reported."""
        probe = subprocess.run([sys.executable, "-I", "-c", "import pip"], capture_output=True)
        if probe.returncode != 0:
            self.skipTest("this Python has no pip in its site-packages to try the check with")
        self.assertIn("pip", self.outside_the_stdlib("-I", also=", pip"))

    def test_pip_install_offline(self) -> None:
        """``pip install --no-build-isolation`` into a virtual environment of the Python under
        test, with no index: what a TD does on a box with no network."""
        if self.server.dialect != "sqlite":
            self.skipTest("packaging does not depend on the database: checked on the SQLite run")
        if subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True).returncode != 0:
            self.skipTest("this Python has no pip")
        venv = self.tmp / "venv"
        # --system-site-packages: the venv uses this Python's own pip (and setuptools, if new enough)
        self.run_py([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)])
        python = str(venv / "bin" / "python")
        # offline, whatever the machine's pip configuration names; and pip's own warnings are its own
        env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_") and k != "PYTHONWARNINGS"}
        env.update(PIP_NO_INDEX="1", PIP_CONFIG_FILE=os.devnull, PIP_NO_INPUT="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
        pip = [python, "-m", "pip", "install", "--quiet", "--no-deps"]
        if not _can_build(python):
            backend = _backend_wheels()
            if backend is None:
                self.skipTest("no setuptools 61+ (with wheel) here to build with, installed or as wheel files")
            self.run_py([*pip, *backend], env=env)
        # from a copy: building in place would leave build/ and *.egg-info in the repository
        source = self.tmp / "source"
        leave_out = shutil.ignore_patterns("__pycache__", "tests", "tools", "examples", "build", "*.egg-info")
        shutil.copytree(CLIENT_DIR, source, ignore=leave_out)
        self.run_py([*pip, "--no-build-isolation", str(source)], env=env)
        code = "import importlib.metadata as m, prodgraph; print(m.version('prodgraph'), prodgraph.__file__)\n" + SMOKE
        out = self.run_py([python, "-I", "-c", code, self.server.url, self.server.admin_key]).split()
        self.assertEqual(out[0], prodgraph.__version__)
        self.assertTrue(Path(out[1]).resolve().is_relative_to(venv.resolve()), f"imported from {out[1]}")
        self.assertTrue((Path(out[1]).parent / "py.typed").exists(), "py.typed ships with the package")
        self.assertEqual(out[2], "Nightfall")


def _can_build(python: str) -> bool:
    """Whether this interpreter has a setuptools that reads pyproject.toml (61+), and the wheel
    package where that setuptools still needs it (before 70.1)."""
    probe = (
        "import setuptools, sys\n"
        "v = tuple(int(x) for x in setuptools.__version__.split('.')[:2])\n"
        "ok = v >= (61, 0)\n"
        "if ok and v < (70, 1):\n"
        "    import wheel\n"
        "sys.exit(0 if ok else 1)\n"
    )
    return subprocess.run([python, "-c", probe], capture_output=True).returncode == 0


def _backend_wheels() -> Optional[List[str]]:
    """A build backend to install offline: setuptools 61+ and wheel as the wheel files CPython
    ships with its own tests (pyenv keeps them). Debian's setuptools wheel is left out: it is
    patched for Debian's Python and fails to build under any other."""
    found: Dict[str, List[Tuple[Tuple[int, ...], str]]] = {"setuptools": [], "wheel": []}
    # this interpreter's and its siblings' (pyenv's versions/*): pure-Python wheels, any will do
    for whl in Path(sys.base_prefix).parent.glob("*/lib/python3*/test/**/*.whl"):
        name, _, rest = whl.name.partition("-")
        version = tuple(int(x) for x in rest.split("-")[0].split(".")[:3] if x.isdigit())
        if name in found:
            found[name].append((version, str(whl)))
    setuptools = [w for w in found["setuptools"] if w[0] >= (61,)]
    if not setuptools:
        return None
    best = max(setuptools)
    if best[0] >= (70, 1):
        return [best[1]]
    return [best[1], max(found["wheel"])[1]] if found["wheel"] else None


def _scenes() -> list:
    from live import client

    c = client()
    rows = list(c.list_scenes())
    c.close()
    return rows


if __name__ == "__main__":
    unittest.main()
