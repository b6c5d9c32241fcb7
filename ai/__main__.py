"""``python -m ai`` runs the arena (same as ``python -m ai.arena``)."""

import sys

from ai.arena import main

sys.exit(main())
