#!/usr/bin/env bash
# The Python worker SDK installs offline into a fresh venv with Debian's setuptools, the way
# worker-sdk/python/README.md says, and the installed package imports and finds its scripts.
#   tests/python/pip_install.sh SOURCE_DIR
set -euo pipefail
source_dir=$1
python=/usr/bin/python3
scratch=$(mktemp -d /tmp/rowpump-pip-XXXXXX)
trap 'rm -rf "$scratch"' EXIT

# A copy, so that the build leaves nothing in the source tree.
cp -r "$source_dir/worker-sdk/python" "$scratch/src"
"$python" -m venv --system-site-packages "$scratch/venv"
"$scratch/venv/bin/pip" install --quiet --no-build-isolation --no-index "$scratch/src"

cd "$scratch"  # not the source tree: the import must find the installed package
"$scratch/venv/bin/python" - <<'PY'
import pathlib
import rowpump
from rowpump.protocol import scripts
from rowpump.protocol.messages import parse_ready

installed = pathlib.Path(rowpump.__file__).parent
assert "venv" in str(installed), f"imported from {installed}, not from the venv"
assert (installed / "py.typed").exists(), "py.typed is not installed"
for name in scripts.SCRIPT_NAMES:
    assert scripts.Script.load(name).body.strip(), f"lua/{name}.lua is empty"
task = parse_ready("42:7F3A9C01D2E4B5A6-1-2A a=1")
assert (task.id, task.attempt, task.fields) == ("42", 1, {"a": "1"})
worker = rowpump.Worker("users")  # options only: it connects lazily
print(f"rowpump {rowpump.__version__} installed in {installed}, worker {worker.worker_id}")
PY
