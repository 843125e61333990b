"""Whether a cluster serves a kind: its group version's discovery document
(`/apis/<group>/<version>`, Kubernetes "API Overview", discovery) lists the resource. Read with
the deploy wait's bounded requests (mlcc/deploy/cluster.py); used by `mlcc draft status` and by
the program before it declares a HyperPodPyTorchJob in Kubernetes-only mode.
"""

from __future__ import annotations

from mlcc.deploy.cluster import Cluster
from mlcc.deploy.snapshot import items_of


class KindReader(Cluster):
    def serves(self, group: str, version: str, plural: str) -> bool:
        """True when /apis/<group>/<version> lists `plural`; False when the API says 404 or
        does not list it. Any other failure is an ApiError."""
        path = f"/apis/{group}/{version}"
        found = self._json_or_none(f"read {path}", path)
        if found is None:
            return False
        return plural in {r.get("name") for r in items_of(found.get("resources"))}
