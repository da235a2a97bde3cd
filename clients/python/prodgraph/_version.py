# The client's version is the server's (package.json at the repository root); a test checks it.
__version__ = "0.1.0"
