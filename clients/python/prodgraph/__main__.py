"""``python -m prodgraph``: command-line tools of the Python client.

    python -m prodgraph mirror DIR [--follow] [--keep] [--quiet]
    python -m prodgraph version
"""

from __future__ import annotations

import sys
from typing import List, Optional

USAGE = """usage: python -m prodgraph COMMAND ...

commands:
  mirror DIR   keep DIR current with the bundles, images, turnovers (and their packages) and
               submissions this key may see
               (python -m prodgraph mirror --help for its options)
  version      print the client's version

The server and key come from PRODGRAPH_URL and PRODGRAPH_KEY.
"""


def main(argv: Optional[List[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        sys.stdout.write(USAGE)
        return 0 if args else 2
    command, rest = args[0], args[1:]
    if command == "mirror":
        from .mirror import main as mirror_main

        return mirror_main(rest)
    if command in ("version", "--version"):
        from ._version import __version__

        print(__version__)
        return 0
    sys.stderr.write(f"python -m prodgraph: unknown command {command!r}\n\n{USAGE}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
