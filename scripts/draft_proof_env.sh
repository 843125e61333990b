#!/usr/bin/env bash
# Creates the offline proof's interpreter (docs/draft-proof.md): a venv with speculators 0.9.0,
# torch 2.14.0, transformers 5.19.0 and vLLM 0.34.0 (without its CUDA-only requirements), every
# package pinned in tests/draft_proof/requirements.txt and installed with --no-deps, so pip's
# resolver never reaches for the CUDA kernels vLLM's metadata lists.
# Cache: $MLCC_DRAFT_PROOF_CACHE (default ~/.cache/mlcc-draft-proof)/venv, with a stamp (the
# sha256 of the pins, the file's comments left out): a second run installs nothing; a changed pin
# makes it anew.
# About 7 GB installed (torch's nvidia-* libraries are most of it).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
CACHE=${MLCC_DRAFT_PROOF_CACHE:-$HOME/.cache/mlcc-draft-proof}
VENV=$CACHE/venv
REQUIREMENTS=tests/draft_proof/requirements.txt
STAMP=$VENV/.mlcc-requirements.sha256
want=$(grep -v '^#' "$REQUIREMENTS" | sha256sum | cut -d' ' -f1)

if [ -x "$VENV/bin/python" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$want" ]; then
  echo "==> $VENV is ready (pins unchanged)"
  exit 0
fi

echo "==> Creating $VENV: speculators 0.9.0, torch 2.14.0, vLLM 0.34.0 (first run only)."
echo "    About 7 GB; 2-3 minutes where PyPI is fast and the pip cache warm, longer on a slow link."
started=$(date +%s)
rm -rf "$VENV"
mkdir -p "$CACHE"
"$PYTHON" -m venv "$VENV"
"$VENV/bin/pip" install --quiet --upgrade pip
"$VENV/bin/pip" install --progress-bar off --no-deps -r "$REQUIREMENTS"
echo "$want" > "$STAMP"
echo "==> $VENV is ready: $(( $(date +%s) - started )) s, $(du -sh "$VENV" | cut -f1)"
