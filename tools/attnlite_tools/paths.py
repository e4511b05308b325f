"""Where the repository's models, fixtures and the shared corpus are."""
import os

TOOLS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(TOOLS)
MODELS_DIR = os.path.join(ROOT, "models")
FIXTURES_DIR = os.path.join(ROOT, "tests", "fixtures")
DEFAULT_CORPUS = os.path.join(ROOT, "..", "shared", "data", "fra-eng", "fra.txt")
