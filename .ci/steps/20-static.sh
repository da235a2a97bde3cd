# Types and style.
npm run typecheck >&2
npm run lint >&2
