"""One ``NCCL_IB_HCA`` reading (preflight/ib_hca.py) for gpu.fabric, the all_reduce floor and nccl.ib_hca.

The two parsers it replaces (preflight/ib_hca.py's port filter, checks/nccl_env.py's device filter) agreed on
the documented forms and differed on the rest; these cases are NCCL's own reading (src/misc/utils.cc
parseStringList / matchIfList, src/transport/net_ib/init.cc), each marked with what the old parsers said.
"""

from __future__ import annotations

import pytest

from preflight.checks.nccl_env import _ib_hca
from preflight.ib_hca import parse, selected_ports
from preflight.model import Status

PORTS = [("mlx5_0", 1), ("mlx5_0", 2), ("mlx5_1", 1), ("mlx5_10", 1)]
ALL = PORTS


@pytest.mark.parametrize(("spec", "selected"), [
    # NCCL's documented forms: both old parsers agreed
    ("mlx5", ALL),
    ("=mlx5_0:1,mlx5_1:1", [("mlx5_0", 1), ("mlx5_1", 1)]),
    ("mlx5_1", [("mlx5_1", 1), ("mlx5_10", 1)]),
    ("=mlx5_1", [("mlx5_1", 1)]),
    ("^=mlx5_1,mlx5_10", [("mlx5_0", 1), ("mlx5_0", 2)]),
    ("^mlx5_0:2", [("mlx5_0", 1), ("mlx5_1", 1), ("mlx5_10", 1)]),
    ("mlx4", []),
    ("=mlx5_0:1:4", [("mlx5_0", 1)]),  # a rail after the port does not select
    # an empty list matches every port: all used (old: none), none with ^ (old device filter: all)
    ("", ALL), (",", ALL), ("=", ALL), ("^", []), ("^,", []),
    # the port read with atoi: junk is port 0, which no device has (old port filter: the entry dropped, so
    # ^ excluded nothing and selected nothing; old device filter: every port)
    ("mlx5_0:x", []), ("^=mlx5_0:x", ALL), ("=mlx5_0:1x", [("mlx5_0", 1)]),
    # an empty port is every port (old port filter: the entry dropped)
    ("=mlx5_0:", [("mlx5_0", 1), ("mlx5_0", 2)]),
    # nothing stripped: " mlx5_1" names no device (old: both stripped it)
    ("=mlx5_0, mlx5_1", [("mlx5_0", 1), ("mlx5_0", 2)]), (" ^mlx5_0", []),
])
def test_selected_ports(spec: str, selected: list[tuple[str, int]]) -> None:
    assert selected_ports(spec, PORTS) == selected


def test_devices_ignore_ports() -> None:
    assert parse("=mlx5_0:2").devices(["mlx5_0", "mlx5_1"]) == ["mlx5_0"]
    assert parse("^mlx5_0:2").devices(["mlx5_0", "mlx5_1"]) == ["mlx5_1"]  # a device named is excluded whole


FABRIC = {"cas": [{"name": "mlx5_0", "ports": [{"port": 1}]}, {"name": "mlx5_1", "ports": [{"port": 1}]}]}


@pytest.mark.parametrize(("value", "status", "observed"), [
    ("=mlx5_0:1,mlx5_1:1", Status.PASS, "mlx5_0, mlx5_1"),
    ("", Status.PASS, "mlx5_0, mlx5_1"),  # set but empty: NCCL uses every HCA (old: "selects no HCA", fail)
    ("mlx5_0, mlx5_1", Status.FAIL, "selects mlx5_0"),  # " mlx5_1" is no HCA (old: pass)
    ("=mlx5_0:x", Status.FAIL, "selects mlx5_0"),  # port 0: mlx5_0 named, none of its ports (old: pass)
    ("^", Status.FAIL, "selects nothing"),
])
def test_nccl_ib_hca_check(value: str, status: Status, observed: str) -> None:
    got = _ib_hca("n1", {"NCCL_IB_HCA": (value, "hosts.yaml")}, FABRIC)
    assert (got.status, got.observed) == (status, observed), got.message
