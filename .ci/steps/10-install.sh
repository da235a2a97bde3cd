# npm packages (builds better-sqlite3 against this Node and dist/ through `prepare`).
npm ci --no-audit --no-fund >&2
