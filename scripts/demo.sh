#!/usr/bin/env bash
# Builds krafla and shows it at work on a small model.
set -euo pipefail
cd "$(dirname "$0")/.."
go build -o krafla ./cmd/krafla
./krafla --help
