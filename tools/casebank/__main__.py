from __future__ import annotations

import sys

from casebank.cli import main

sys.exit(main())
