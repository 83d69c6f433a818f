import sys
from pathlib import Path

# The package is imported from this checkout (sdks/python), installed or not.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
