"""Where log bytes come from.  Everything downstream sees only a `Source`."""

from logsleuth.sources.base import Source, SSHOptions, open_source, open_sources
from logsleuth.sources.local import LocalFileSource, open_stdin

__all__ = ["SSHOptions", "Source", "LocalFileSource", "open_source", "open_sources", "open_stdin"]
