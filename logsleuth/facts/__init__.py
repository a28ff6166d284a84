"""Facts the reasoning rules use, as data files with their sources (GPUs, the engines' pinned dependencies).

Each data file names where every row comes from; a loader module beside it reads it once per run."""
