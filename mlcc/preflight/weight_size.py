"""How large a model's weights are, from what the Hub or a directory lists: the safetensors
index's total_size, the weight files' sizes, or the parameter counts times their dtype's bytes.

Pure: `mlcc.preflight.hub` reads the index and the Hub's file metadata and hands them here. A
figure is believed only when it is a whole number of bytes up to MAX_WEIGHT_BYTES; what is not
believed becomes a note (a warning), never a size.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from mlcc.preflight.bounded.values import shown

INDEX_FILE = "model.safetensors.index.json"
# The largest open checkpoints take about 2 TB; a listed size above this is no checkpoint's.
MAX_WEIGHT_BYTES = 16 * 1024**4
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt")
# safetensors dtype names (the Hub's `safetensors.parameters` keys) -> bytes per parameter
_SAFETENSORS_BYTES = {
    "F64": 8,
    "F32": 4,
    "I64": 8,
    "I32": 4,
    "BF16": 2,
    "F16": 2,
    "F8_E4M3": 1,
    "F8_E5M2": 1,
    "I8": 1,
    "U8": 1,
}


def believable(value: object) -> int | None:
    """A whole number of bytes up to MAX_WEIGHT_BYTES; a float that is whole (16060522496.0,
    as some writers of the index put it) is that number."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if 0 < value <= MAX_WEIGHT_BYTES else None


def index_figures(index: object, notes: list[str]) -> tuple[int | None, frozenset[str] | None]:
    metadata = index.get("metadata") if isinstance(index, Mapping) else None
    total = metadata.get("total_size") if isinstance(metadata, Mapping) else None
    weight_map = index.get("weight_map") if isinstance(index, Mapping) else None
    shards = None
    if isinstance(weight_map, Mapping):
        shards = frozenset(v for v in weight_map.values() if isinstance(v, str))
    size = believable(total)
    if total is not None and size is None:
        notes.append(
            f"its {INDEX_FILE}'s total_size is {shown(total)}, not a size of weights "
            f"(a whole number of bytes up to {MAX_WEIGHT_BYTES >> 40} TiB)"
        )
    return size, shards


def listed_size(info: object, shards: frozenset[str] | None, notes: list[str]) -> int | None:
    """The sum of the weight files' sizes the Hub lists (the index's shards when there is an
    index), else the safetensors parameter counts times their dtype's bytes."""
    sizes: dict[str, int] = {}
    for sibling in getattr(info, "siblings", None) or []:
        name, size = getattr(sibling, "rfilename", None), getattr(sibling, "size", None)
        if isinstance(name, str) and isinstance(size, int) and not isinstance(size, bool):
            if size < 0:
                return None  # a listing with a negative size says nothing true
            sizes[name] = size
    groups: Iterable[Iterable[str]]
    if shards is not None:
        groups = [shards] if shards and shards <= sizes.keys() else []
    else:
        groups = [[n for n in sizes if n.endswith(suffix)] for suffix in _WEIGHT_SUFFIXES]
    for names in groups:
        total = sum(sizes[n] for n in names)
        if total:
            return _within(total, "its files on the Hub", notes)
    if shards is not None:
        return None
    parameters = getattr(getattr(info, "safetensors", None), "parameters", None)
    if not isinstance(parameters, Mapping):
        return None
    counts = [
        (count, _SAFETENSORS_BYTES.get(str(dtype), 2))
        for dtype, count in parameters.items()
        if isinstance(count, int) and not isinstance(count, bool) and count > 0
    ]
    counted = sum(count * width for count, width in counts)
    return _within(counted, "its parameter counts on the Hub", notes) if counted else None


def _within(total: int, source: str, notes: list[str]) -> int | None:
    if total <= MAX_WEIGHT_BYTES:
        return total
    notes.append(
        f"{source} add up to {total:,} bytes, more than any checkpoint "
        f"({MAX_WEIGHT_BYTES >> 40} TiB): not believed"
    )
    return None
