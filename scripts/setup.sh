#!/usr/bin/env bash
# Install what gpuopt needs on Debian 12, fetch the pinned tree-sitter Python
# grammar from PyPI (third_party/tree-sitter-python.lock.json, checked by
# hash), and build gpuopt into build/.
# Safe to run again: it installs only what is missing and rebuilds incrementally.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(gcc clang libclang-rt-14-dev meson ninja-build pkg-config
          libtree-sitter-dev libjansson-dev libxxhash-dev libcmocka-dev zlib1g-dev
          python3 python3-venv python3-pytest python3-numpy ca-certificates)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Debian's own interpreter, whatever else is first on PATH.
/usr/bin/python3 tools/fetch_grammar.py

[ -f build/build.ninja ] || meson setup build --buildtype=release >/dev/null
meson compile -C build >/dev/null
echo "gpuopt built: build/src/gpuopt"
