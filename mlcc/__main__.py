import sys

from mlcc.cli import main

sys.exit(main())
