#!/usr/bin/env bash
# Install what gpuopt needs on Debian 12, fetch the pinned tree-sitter Python
# grammar (package-lock.json), and build gpuopt into build/.
# Safe to run again: it installs only what is missing and rebuilds incrementally.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(gcc clang libclang-rt-14-dev meson ninja-build pkg-config
          libtree-sitter-dev libjansson-dev libxxhash-dev libcmocka-dev zlib1g-dev
          nodejs npm python3 python3-pytest python3-numpy)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# nodejs/npm may come from elsewhere than Debian (e.g. a preinstalled Node):
# only ask apt for them when the commands are missing too.
filtered=()
for p in "${missing[@]}"; do
  case "$p" in
    nodejs) command -v node >/dev/null || filtered+=("$p") ;;
    npm) command -v npm >/dev/null || filtered+=("$p") ;;
    *) filtered+=("$p") ;;
  esac
done
if [ ${#filtered[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${filtered[@]}" >/dev/null
fi

# npm ci checks every package against the integrity hashes in the lock file.
if ! cmp -s package-lock.json node_modules/.gpuopt-lock 2>/dev/null; then
  npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
  cp package-lock.json node_modules/.gpuopt-lock
fi

[ -f build/build.ninja ] || meson setup build --buildtype=release >/dev/null
meson compile -C build >/dev/null
echo "gpuopt built: build/src/gpuopt"
