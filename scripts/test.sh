#!/usr/bin/env bash
# Same set-up as scripts/setup.sh, then the whole test suite: the C++ tests (ctest), then the
# Python package installed into a fresh virtual environment and its pytest tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake --build build -j"$(nproc)"
ctest --test-dir build --output-on-failure -j"$(nproc)"

rm -rf build/venv
# Debian's python3 with --system-site-packages: its python3-torch (from setup.sh) for the
# torch.nn.Module tests (another python3 first on PATH, such as pyenv's, would not see it).
python=/usr/bin/python3
[ -x "$python" ] || python=python3
"$python" -m venv --system-site-packages build/venv
build/venv/bin/python -m pip install --quiet . pytest pandas
status=0
build/venv/bin/python -m pytest tests/python -q || status=$?
if [ "$status" -eq 5 ]; then
  echo "test: pytest collected no tests from tests/python" >&2
fi
exit "$status"
