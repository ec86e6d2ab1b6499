#!/usr/bin/env bash
# release.sh [VERSION]: cross-compile krafla for the release targets into
# dist/ (KRAFLA_DIST to change it), with SHA-256 checksums, and check them.
#
#   scripts/release.sh v0.3.0        # VERSION defaults to `git describe`
#
# Pure Go (CGO_ENABLED=0), -trimpath, the version and commit stamped with
# -ldflags -X (`krafla --version` prints them). Every binary is checked: its
# executable header names the target's format and CPU, it holds the version
# and commit strings, and the one this machine can run (and linux/arm64
# under qemu-aarch64-static, where installed) prints them on --version.
# The binaries are written into a temporary folder moved into place at the
# end, so dist/ never holds a half-built release.
set -euo pipefail
cd "$(dirname "$0")/.."

targets=(linux/amd64 linux/arm64 darwin/arm64 darwin/amd64 windows/amd64)
version=${1:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
dist=${KRAFLA_DIST:-dist}
case $version in
  *[!A-Za-z0-9._+-]*) echo "release.sh: version $version: use letters, digits and . _ + -" >&2; exit 2 ;;
esac

mkdir -p "$(dirname "$dist")"
tmp=$(mktemp -d "$dist.tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# header FILE: the executable format and CPU from the first bytes, as
# "elf/amd64", "macho/arm64", "pe/amd64" and so on.
header() {
  local magic
  magic=$(od -An -tx1 -N4 "$1" | tr -d ' \n')
  case $magic in
    7f454c46) # ELF: e_machine at 18, little-endian u16
      case $(od -An -tx1 -j18 -N2 "$1" | tr -d ' \n') in
        3e00) echo elf/amd64 ;; b700) echo elf/arm64 ;; *) echo elf/other ;;
      esac ;;
    cffaedfe) # Mach-O 64-bit little-endian: cputype at 4
      case $(od -An -tx1 -j4 -N4 "$1" | tr -d ' \n') in
        07000001) echo macho/amd64 ;; 0c000001) echo macho/arm64 ;; *) echo macho/other ;;
      esac ;;
    4d5a*) # MZ: the PE header's offset at 0x3c, then "PE\0\0" and the machine
      local off
      off=$(od -An -tu4 -j60 -N4 "$1" | tr -d ' ')
      case $(od -An -tx1 -j"$off" -N6 "$1" | tr -d ' \n') in
        504500006486) echo pe/amd64 ;; 50450000aa64) echo pe/arm64 ;; *) echo pe/other ;;
      esac ;;
    *) echo unknown ;;
  esac
}

declare -A want=([linux]=elf [darwin]=macho [windows]=pe)
for t in "${targets[@]}"; do
  os=${t%/*} arch=${t#*/} ext=
  [ "$os" = windows ] && ext=.exe
  bin=krafla-$version-$os-$arch$ext
  CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath \
    -ldflags "-s -w -X main.buildVersion=$version -X main.buildCommit=$commit" \
    -o "$tmp/$bin" ./cmd/krafla
  got=$(header "$tmp/$bin")
  if [ "$got" != "${want[$os]}/$arch" ]; then
    echo "release.sh: $bin: header says $got, want ${want[$os]}/$arch" >&2
    exit 1
  fi
  for s in "$version" "$commit"; do
    if ! grep -aqF -- "$s" "$tmp/$bin"; then
      echo "release.sh: $bin: $s is not stamped in the binary" >&2
      exit 1
    fi
  done
  run=
  if [ "$os" = "$(go env GOHOSTOS)" ] && [ "$arch" = "$(go env GOHOSTARCH)" ]; then
    run="$tmp/$bin"
  elif [ "$t" = linux/arm64 ] && [ "$(go env GOHOSTOS)" = linux ] && command -v qemu-aarch64-static >/dev/null; then
    run="qemu-aarch64-static $tmp/$bin"
  fi
  if [ -n "$run" ]; then
    v=$($run --version)
    case $v in
      *"$version (${commit:0:12})"*"$os/$arch"*) ;;
      *) echo "release.sh: $bin --version printed \"$v\", want $version (${commit:0:12}) … $os/$arch" >&2; exit 1 ;;
    esac
    echo "$bin: $got, $v"
  else
    echo "$bin: $got, stamped $version ${commit:0:12}"
  fi
done
(cd "$tmp" && sha256sum krafla-* > SHA256SUMS && sha256sum --quiet -c SHA256SUMS)

rm -rf "$dist"
mv "$tmp" "$dist"
trap - EXIT
echo "release.sh: ${#targets[@]} binaries and SHA256SUMS in $dist"
