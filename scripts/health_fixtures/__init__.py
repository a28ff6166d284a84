"""Generated `logsleuth health` fixtures: SGLang's and vLLM's steady-state lines per version (see generate.py)."""

from scripts.health_fixtures.steady import PLANTS, write_steady_state

__all__ = ["PLANTS", "write_steady_state"]
