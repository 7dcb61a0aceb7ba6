"""Type stub of the extension module _edgert (python/src/edgert_ext.cc). Use the edgert package:
it subclasses _Bundle and _Context as edgert.Bundle and edgert.Context."""
import os
from typing import Any, Dict, List, Mapping, MutableMapping, Optional, Tuple, Union

import numpy as np

__version__: str

def _set_error_classes(classes: List[Optional[type]], closed: type) -> None: ...
def status_name(status: int) -> str: ...
def dtype_name(dtype: int) -> str: ...
def runtime_ports() -> str: ...
def signatures_supported() -> bool: ...
def prepare(path: str, out: str, device: int, allow_source_build: bool) -> None: ...

class _Bundle:
    def __init__(self, source: Union[str, bytes, bytearray, memoryview], trusted_keys: bytes, map_in_place: bool) -> None: ...
    def close(self) -> None:
        """Closes the bundle; contexts made from it keep running (they hold it until they close)."""
    @property
    def closed(self) -> bool: ...
    def _tensors(self, outputs: bool) -> List[Tuple[str, int, Tuple[int, ...], int]]: ...
    @property
    def arena_size(self) -> int:
        """Bytes of the arena each context allocates."""
    @property
    def port(self) -> str:
        """The runtime port the bundle's target names: 'cpu', 'opencl'."""
    @property
    def _target(self) -> Dict[str, Any]: ...
    @property
    def signer(self) -> Optional[bytes]:
        """The Ed25519 public key in the bundle's signature trailer (32 bytes), None when unsigned."""
    @property
    def signature_verified(self) -> bool:
        """Whether the open checked the signature against trusted_keys (signed mode)."""
    def _reference(self, is_output: bool, index: int) -> Optional[Tuple[bytes, float, float]]: ...
    def _commands(self) -> List[Tuple[str, bool, int, int]]: ...

class _Context:
    def __init__(self, bundle: _Bundle, threads: int, allow_source_build: bool, device: int) -> None: ...
    def run(self, inputs: Mapping[str, Any], out: Optional[MutableMapping[str, np.ndarray]] = None,
            copy: bool = False) -> Dict[str, np.ndarray]:
        """Runs the bundle once: inputs {name: array} bound in place (dtype, shape and C order must
        match, else InvalidArgumentError naming the input, unless copy=True); outputs written into
        out's arrays (returned) or into new arrays. The GIL is released while it runs."""
    def close(self) -> None: ...
    @property
    def closed(self) -> bool: ...
    profiling: bool
    def _command_times(self) -> List[int]: ...
    def timestamps(self) -> List[int]:
        """The bundle's Timestamp commands of the last run, in ns."""
    def stats(self) -> Dict[str, Any]:
        """{'port', 'device', 'programs_built', 'programs_loaded', 'buffer_bytes', 'image_bytes', 'arena_bytes'}"""
