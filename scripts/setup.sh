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
          python3 python3-venv python3-pytest python3-numpy python3-pandas python3-sklearn
          python3-networkx python3-skimage ca-certificates
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
# requirements/*.txt, pinned with hashes and installed one entry at a time
# (pip --require-hashes --no-deps --no-cache-dir, its temporary files inside
# .venv), so that the disk holds what is installed plus one wheel, not every
# wheel twice; each file again only when it changes (stamps in .venv/.gpuopt-req).
# A file whose first line is "# setup: optional, needs-mb N" is installed only
# where the checkout's file system has N MB free; otherwise setup says so and
# writes the reason to .venv/.gpuopt-skipped, which the tests that need that
# file read to skip with it. A file with a line "# setup: into .venv/DIR" is
# installed into that directory (pip --target), not into .venv itself. Any
# other failure stops the set-up.
shopt -s nullglob
reqs=(requirements/*.txt)
if [ ${#reqs[@]} -gt 0 ]; then
  [ -x .venv/bin/python ] || /usr/bin/python3 -m venv .venv
  rm -f .venv/.gpuopt-requirements  # the one stamp for all files of older set-ups
  mkdir -p .venv/.gpuopt-req .venv/.tmp
  : >.venv/.gpuopt-skipped
  for r in "${reqs[@]}"; do
    stamp=.venv/.gpuopt-req/${r##*/}
    cmp -s "$r" "$stamp" && continue
    need=$(sed -n '1s/^# setup: optional, needs-mb \([0-9][0-9]*\)$/\1/p' "$r")
    free=$(df -Pm .venv | awk 'NR == 2 {print $4}')
    if [ -n "$need" ] && [ "$free" -lt "$need" ]; then
      echo "$r: needs $need MB free, the file system of $PWD has $free MB" >>.venv/.gpuopt-skipped
      echo "gpuopt setup: $r: not installed: it needs $need MB free and $PWD has $free MB; the tests that use it will be skipped" >&2
      continue
    fi
    into=$(sed -n 's/^# setup: into \(\.venv\/[A-Za-z0-9._-]*\)$/\1/p' "$r" | head -1)
    where=()
    [ -n "$into" ] && where=(--target "$into" --upgrade)
    parts=$(mktemp -d .venv/.tmp/req.XXXXXX)
    awk -v dir="$parts" '/^[A-Za-z]/ {n++} n && !/^#/ {print > sprintf("%s/%03d.txt", dir, n)}' "$r"
    for e in "$parts"/*.txt; do
      TMPDIR=$PWD/.venv/.tmp .venv/bin/python -m pip install -q --disable-pip-version-check \
          --no-cache-dir --require-hashes --no-deps "${where[@]}" -r "$e" ||
        { echo "gpuopt setup: $r: pip could not install $(awk 'NR == 1 {print $1}' "$e") ($(df -Pm .venv | awk 'NR == 2 {print $4}') MB free)" >&2; exit 1; }
    done
    rm -rf "$parts"
    cp "$r" "$stamp"
  done
fi

[ -f build/build.ninja ] || meson setup build --buildtype=release </dev/null >/dev/null
meson compile -C build </dev/null >/dev/null
echo "gpuopt built: build/src/gpuopt"
