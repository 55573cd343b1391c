#!/usr/bin/env bash
# The project's test command: every package's tests, statistical sketch
# tests and process-level tests included.
set -euo pipefail
cd "$(dirname "$0")/.."
go test -count=1 "$@" ./...
