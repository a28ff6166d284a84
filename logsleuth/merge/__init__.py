"""`logsleuth merge`: the JSON reports of many nodes (each diagnosed where its log lives, by a scheduler: Slurm,
Kubernetes, Ray, pdsh) as one fleet report, the one `diagnose node[01-64]:PATH` would give (docs/at-scale.md).

`read.py` turns a JSON report back into the model it was written from; `combine.py` merges the models.  Called
from `logsleuth.api.merge_reports`; imports neither typer nor rich.
"""
