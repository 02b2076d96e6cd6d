#!/usr/bin/env bash
# The inspector's browser test, runnable anywhere CI runs: installs what is
# missing (Debian's `chromium`, Node.js, and playwright-core from
# package-lock.json), then runs the Rust test that starts
# `doecs run --inspect 127.0.0.1:0` and drives headless Chromium against it
# (crates/doecs-cli/tests/inspector_browser.rs, which runs test.mjs).
#
#   crates/doecs-inspect/browser-test/run.sh                # screenshot: target/inspector.png
#   crates/doecs-inspect/browser-test/run.sh --update-docs  # screenshot: docs/inspector.png
#
# With --update-docs the picture is quantised with pngquant when it is
# installed (apt-get install pngquant), which keeps it near 100 kB instead
# of over 300 kB; without pngquant it is kept as Chromium wrote it.
#
# CHROMIUM overrides the browser's path (default /usr/bin/chromium).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
screenshot="${DOECS_SCREENSHOT:-$root/target/inspector.png}"
update_docs=
case "${1:-}" in
    --update-docs) screenshot="$root/docs/inspector.png"; update_docs=1 ;;
    "") ;;
    *) echo "usage: $0 [--update-docs]" >&2; exit 2 ;;
esac

as_root() {
    if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}
apt_updated=
apt_install() {
    if [ -z "$apt_updated" ]; then
        as_root apt-get update -qq
        apt_updated=1
    fi
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

chromium="${CHROMIUM:-/usr/bin/chromium}"
if [ ! -x "$chromium" ]; then
    echo "browser test: installing chromium (Debian package)"
    apt_install chromium
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "browser test: installing nodejs and npm (Debian packages)"
    apt_install nodejs npm
fi
if [ ! -d "$here/node_modules/playwright-core" ]; then
    echo "browser test: installing playwright-core (npm ci)"
    (cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
fi

mkdir -p "$(dirname "$screenshot")"
cd "$root"
echo "browser test: cargo test -p doecs-cli --test inspector_browser (screenshot: $screenshot)"
DOECS_BROWSER_TEST=1 DOECS_SCREENSHOT="$screenshot" CHROMIUM="$chromium" \
    cargo test -p doecs-cli --test inspector_browser -- --nocapture
if [ -n "$update_docs" ]; then
    if command -v pngquant >/dev/null; then
        # Exit 98/99: the quantised picture would be larger or too poor; keep it.
        pngquant --force --skip-if-larger --quality 70-95 --speed 1 --output "$screenshot" "$screenshot" || true
    else
        echo "browser test: pngquant not installed; $screenshot is not quantised"
    fi
    echo "browser test: $screenshot is $(wc -c <"$screenshot") bytes"
fi
