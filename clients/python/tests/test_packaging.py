"""The package in a bare interpreter (``python -I -S``), copied, or installed offline as the README says."""

from __future__ import annotations

import base64
import csv
import hashlib
import importlib.util
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import unittest
import zipfile
from pathlib import Path
from typing import Any, Dict, List

from live import CLIENT_DIR, REPO, live

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

    def test_the_readme_install_command_offline(self) -> None:
        """The README's install command, as written, in a scratch folder where ``python3`` is the
        Python under test: a fresh virtual environment, no index, no pip configuration, nothing
        installed but the pip the venv comes with. The installed files are what the wheel's
        RECORD lists, hashes and all; uninstalling takes them all away again."""
        if self.server.dialect != "sqlite":
            self.skipTest("packaging does not depend on the database: checked on the SQLite run")
        work = self.tmp / "readme-install"
        work.mkdir()
        (work / "clients").symlink_to(REPO / "clients", target_is_directory=True)
        before = _tree(CLIENT_DIR)
        self.run_py(["bash", "-c", readme_install_command()], cwd=work, env=offline_env(self.tmp))
        self.assertEqual(_tree(CLIENT_DIR), before, "building leaves the source folder as it was")
        venv = work / "v"
        site = self.check_installed(venv)
        script = venv / "bin" / "prodgraph-mirror"
        self.assertIn("usage:", self.run_py([str(script), "--help"]))
        self.run_py([str(venv / "bin" / "pip"), "uninstall", "--yes", "--quiet", "prodgraph"], env=offline_env(self.tmp))
        self.assertEqual([p.name for p in site.iterdir() if p.name.startswith("prodgraph")], [])
        self.assertFalse(script.exists())

    def test_editable_and_sdist_installs_offline(self) -> None:
        """``pip install -e`` imports the sources in place; the sdist the backend makes installs
        the same package, offline, with nothing but the standard library to build it."""
        if self.server.dialect != "sqlite":
            self.skipTest("packaging does not depend on the database: checked on the SQLite run")
        env = offline_env(self.tmp)
        venv = self.tmp / "venv-e"
        self.run_py([sys.executable, "-m", "venv", str(venv)], env=env)
        pip = [str(venv / "bin" / "pip"), "install", "--quiet"]
        self.run_py([*pip, "-e", str(CLIENT_DIR)], env=env)
        where = self.run_py([str(venv / "bin" / "python"), "-I", "-c", "import prodgraph; print(prodgraph.__file__)"])
        self.assertEqual(Path(where.strip()), CLIENT_DIR / "prodgraph" / "__init__.py")
        self.run_py([str(venv / "bin" / "pip"), "uninstall", "--yes", "--quiet", "prodgraph"], env=env)
        sdist = self.tmp / "sdist"
        name = backend().build_sdist(str(sdist))
        self.assertEqual(name, f"prodgraph-{prodgraph.__version__}.tar.gz")
        with tarfile.open(sdist / name) as tar:
            names = sorted(m.name.split("/", 1)[1] for m in tar.getmembers())
        self.assertIn("build_backend/prodgraph_build.py", names)
        self.assertIn("prodgraph/py.typed", names)
        self.assertIn("PKG-INFO", names)
        self.run_py([*pip, str(sdist / name)], env=env)
        self.check_installed(venv)

    def check_installed(self, venv: Path) -> Path:
        """The package as installed in ``venv``: imported from there (not the sources), its
        version, every file of the package listed in RECORD with its right hash and size (py.typed
        too), and it works against the server. The site-packages folder."""
        python = str(venv / "bin" / "python")
        code = "import importlib.metadata as m, prodgraph; print(m.version('prodgraph'), prodgraph.__file__)\n" + SMOKE
        out = self.run_py([python, "-I", "-c", code, self.server.url, self.server.admin_key]).split()
        self.assertEqual(out[0], prodgraph.__version__)
        installed = Path(out[1]).parent
        self.assertTrue(installed.resolve().is_relative_to(venv.resolve()), f"imported from {installed}")
        self.assertEqual(out[2], "Nightfall")
        site = installed.parent
        record = site / f"prodgraph-{prodgraph.__version__}.dist-info" / "RECORD"
        rows = {row[0]: row[1:] for row in csv.reader(record.read_text(encoding="utf-8").splitlines())}
        shipped = {f"prodgraph/{p.name}" for p in (CLIENT_DIR / "prodgraph").iterdir() if p.suffix == ".py" or p.name == "py.typed"}
        # pip adds the bytecode it compiled, with no hash: not the wheel's
        rows = {name: row for name, row in rows.items() if "__pycache__" not in name}
        listed = {name for name in rows if name.startswith("prodgraph/")}
        self.assertEqual(listed, shipped, "the wheel holds the package's modules and py.typed, nothing else")
        self.assertIn("prodgraph/py.typed", listed)
        for name, (digest, size) in rows.items():
            if name.endswith(".dist-info/RECORD") or not digest:
                continue  # RECORD cannot hash itself; pip's own additions (INSTALLER...) may not
            data = (site / name).read_bytes()
            self.assertEqual(digest, _record_hash(data), name)
            self.assertEqual(int(size), len(data), name)
        metadata = (record.parent / "METADATA").read_text(encoding="utf-8")
        self.assertIn("Requires-Python: >=3.9", metadata)
        self.assertIn("# prodgraph for Python", metadata, "the README is the long description")
        return site

    def test_builds_are_reproducible_and_the_toml_is_read_as_tomllib_reads_it(self) -> None:
        made = []
        for n in range(2):
            folder = self.tmp / f"wheel-{n}"
            name = backend().build_wheel(str(folder))
            made.append((folder / name).read_bytes())
        self.assertEqual(made[0], made[1], "the same sources make the same wheel, byte for byte")
        with zipfile.ZipFile(io.BytesIO(made[0])) as whl:
            self.assertEqual(whl.testzip(), None)
            wheel = whl.read(f"prodgraph-{prodgraph.__version__}.dist-info/WHEEL").decode()
        self.assertIn("Tag: py3-none-any", wheel)
        text = (CLIENT_DIR / "pyproject.toml").read_text(encoding="utf-8")
        parsed = backend().parse_toml(text)
        self.assertEqual(parsed["build-system"]["requires"], [], "building needs nothing installed")
        if sys.version_info >= (3, 11):
            import tomllib

            self.assertEqual(parsed, tomllib.loads(text))
        with self.assertRaisesRegex(ValueError, "line 2"):
            backend().parse_toml('[project]\nname = 1979-05-27\n')


def readme_install_command() -> str:
    """The first command of the README's Install section, exactly as written there."""
    text = (CLIENT_DIR / "README.md").read_text(encoding="utf-8")
    section = text[text.index("\n## Install\n") :]
    match = re.search(r"```sh\n([^\n]+)\n", section)
    assert match, "the README's Install section has no sh block"
    return match.group(1)


def offline_env(tmp: Path) -> Dict[str, str]:
    """This environment with ``python3`` the Python under test, pip offline whatever the
    machine's pip configuration names (no index, no find-links), and pip's warnings its own."""
    bin_dir = tmp / "bin"
    if not bin_dir.exists():
        bin_dir.mkdir()
        (bin_dir / "python3").symlink_to(sys.executable)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_") and k != "PYTHONWARNINGS"}
    env.update(PIP_NO_INDEX="1", PIP_CONFIG_FILE=os.devnull, PIP_NO_INPUT="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    return env


def backend() -> Any:
    """The build backend, imported as pip imports it (from its backend-path folder)."""
    spec = importlib.util.spec_from_file_location("prodgraph_build", CLIENT_DIR / "build_backend" / "prodgraph_build.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _tree(folder: Path) -> List[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if "__pycache__" not in p.parts)


def _scenes() -> list:
    from live import client

    c = client()
    rows = list(c.list_scenes())
    c.close()
    return rows


if __name__ == "__main__":
    unittest.main()
