#!/usr/bin/env bash
# Same set-up as scripts/setup.sh, then the whole test suite: on the release build, then again
# under ASan + UBSan (scripts/sanitize.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --with-sanitizers
ctest --test-dir build --output-on-failure -j"$(nproc)"
scripts/sanitize.sh
