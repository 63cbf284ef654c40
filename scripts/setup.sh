#!/usr/bin/env bash
# Install what gpuopt needs on Debian 12, fetch the pinned tree-sitter Python
# grammar from PyPI (third_party/tree-sitter-python.lock.json, checked by
# hash), install the hash-pinned PyPI packages of requirements/*.txt into
# .venv, and build gpuopt into build/.
# Safe to run again: it installs only what is missing and rebuilds incrementally.
# (Meson reads standard input when it asks the compiler for its include
# paths: every meson call reads /dev/null instead of whatever stdin is.)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(gcc clang libclang-rt-14-dev meson ninja-build pkg-config
          libtree-sitter-dev libjansson-dev libxxhash-dev libcmocka-dev zlib1g-dev
          python3 python3-venv python3-pytest python3-numpy python3-pandas python3-sklearn ca-certificates
          chromium poppler-utils)
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

# Python packages that Debian does not have come from PyPI into a virtual
# environment inside the checkout (.venv, never the system Python): every
# requirements/*.txt, each pinned with hashes (pip --require-hashes), and
# installed again only when one of them changes.
shopt -s nullglob
reqs=(requirements/*.txt)
if [ ${#reqs[@]} -gt 0 ]; then
  stamp=.venv/.gpuopt-requirements
  if ! cat "${reqs[@]}" | cmp -s - "$stamp" 2>/dev/null; then
    [ -x .venv/bin/python ] || /usr/bin/python3 -m venv .venv
    for r in "${reqs[@]}"; do
      .venv/bin/python -m pip install -q --disable-pip-version-check --require-hashes --no-deps -r "$r"
    done
    cat "${reqs[@]}" >"$stamp"
  fi
fi

[ -f build/build.ninja ] || meson setup build --buildtype=release </dev/null >/dev/null
meson compile -C build </dev/null >/dev/null
echo "gpuopt built: build/src/gpuopt"
