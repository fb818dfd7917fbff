#!/usr/bin/env bash
# Same set-up as scripts/setup.sh, then the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
ctest --test-dir build --output-on-failure -j"$(nproc)"
