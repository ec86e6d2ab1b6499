#!/usr/bin/env bash
# Everything the tests need, then go vet and the tests (also with -tags purego,
# which compiles out every assembly kernel so the pure-Go twins run alone).
set -euo pipefail
cd "$(dirname "$0")/.."

command -v go >/dev/null || { echo "test.sh: Go 1.26 is required (https://go.dev/dl)" >&2; exit 1; }
go mod download
go vet ./...
(cd asm/_gen && go vet ./...)  # the kernel generator, its own module
go test -count=1 -timeout 5m ./...
go test -count=1 -timeout 5m -tags purego ./...

# arm64 kernels under qemu-user (issue 23): -cpu max has dotprod and i8mm,
# cortex-a53 (ARMv8.0) has neither, so the plain-NEON variant runs too. The
# asm tests and the infer bit-identity test of every variant against pure Go.
if ! command -v qemu-aarch64-static >/dev/null && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  (apt-get update -qq && apt-get install -y -qq qemu-user-static) >/dev/null || true
fi
if command -v qemu-aarch64-static >/dev/null; then
  GOARCH=arm64 go vet ./...
  GOARCH=arm64 go vet -tags purego ./asm/
  QEMU_CPU=max GOARCH=arm64 go test -short -count=1 -timeout 10m -exec qemu-aarch64-static ./asm/
  QEMU_CPU=max GOARCH=arm64 go test -count=1 -timeout 10m -exec qemu-aarch64-static ./infer/ -run 'KernelVariants|FloatKernels|LogitsHash'
  QEMU_CPU=cortex-a53 GOARCH=arm64 go test -short -count=1 -timeout 10m -exec qemu-aarch64-static ./asm/ -run 'Select|Use|Tiles|FuzzProducts|Quantize|F16Sweep|FloatKernels'
else
  echo "test.sh: qemu-aarch64-static not available (no apt-get or not root): arm64 kernel tests SKIPPED" >&2
fi
