"""Speculative-decoding LLM endpoints on SageMaker HyperPod (EKS), as a Pulumi program."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Sequence
from types import ModuleType

# Module paths that Pulumi state written before the modules moved into packages still names.
# A dynamic provider is pickled into the state by reference: the pickle names the module of
# every class it holds (the provider's and its polling backoff's), so each must still import.
MOVED_MODULES = {
    "mlcc.providers": "mlcc.recommendation",
    "mlcc.providers.recommendation_provider": "mlcc.recommendation.provider",
    "mlcc.recommendation_polling": "mlcc.recommendation.polling",
}


class _MovedModuleFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports an old module path as the module that now lives at its new path."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOVED_MODULES:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return importlib.import_module(MOVED_MODULES[spec.name])

    def exec_module(self, module: ModuleType) -> None:
        """The module is the already-imported new one: nothing to run."""


if not any(isinstance(finder, _MovedModuleFinder) for finder in sys.meta_path):
    sys.meta_path.insert(0, _MovedModuleFinder())
