# The OpenAPI document the server serves, dumped and linted with the recommended rules, every
# warning an error (redocly.yaml): a document generators and linters stumble on fails the run.
npm run lint:openapi >&2
