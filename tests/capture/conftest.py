"""Make the shared test helpers in tests/ (program_runs) importable from tests/infra."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
