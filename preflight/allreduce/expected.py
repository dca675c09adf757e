"""The bus bandwidth each link class should give, from the rate the node reports and one published share.

Every all_reduce figure is read against ``expected = share x rate`` of its link class, where ``rate`` is what
the hardware reports (GB/s per direction, GB = 1e9) and ``share`` the fraction of it that the collective library
is published to reach as all_reduce busbw (the nccl-tests convention, which this check's worker follows). A
figure below ``expected_fraction`` (a check parameter, default 0.4) of expected is slow even when every pair and
group agrees; where no rate is known the report says so and only the relative rule judges.

- ``rdma`` (IB/RoCE between gpu hosts): rate from ``ibstat``'s Active ports (Gb/s / 8); share 0.96. The NCCL
  maintainer: 24 GB/s per 200 Gb/s NIC, 12 per 100 Gb/s (nccl-tests #119); 48-49 GB/s per 400 Gb/s CX-7
  (nccl-tests #267).
- ``npu_roce`` (an NPU's own RoCE port): ``hccn_tool -i k -speed -g`` (Mb/s); share 0.96, taken as RDMA's: no
  published hccl_test figure was found.
- ``nvlink`` (``NV#`` inside a gpu host): # links x ``nvidia-smi nvlink -s`` per-link GB/s; share 0.60 at 64 MiB
  and larger, 0.42 at 16 MiB, none below. nccl-tests on 8 x A100-SXM4 (NV12, 300 GB/s): 169-191 GB/s at 64 MiB,
  113-138 at 16 MiB; the peak is ~0.82 (370 of 450 GB/s on H100 with Ring, nccl-tests #212).
- ``pcie`` (``PIX``/``PXB``/``PHB``/``NODE``/``SYS``): ``nvidia-smi -q`` generation (Max) x width (Current);
  share 0.45, at 16 MiB and larger (a GiB-message figure; smaller sizes are latency-bound). 8 x RTX 5090 on
  PCIe 5 x16: 28-35 GB/s busbw of 63, "determined by the bandwidth your CPU and memory can deliver" (NCCL #1639).
- ``tcp`` (gloo between hosts): ``/sys/class/net/IF/speed`` (Mb/s) of the interface holding the host's address
  (preflight.allreduce.nic), else the declared ``nic_gbps``; share 0.88, at most 1.07 GB/s. The gloo maintainer:
  110 of 125 MB/s on 1 GbE (gloo #21); one gloo thread on 40 GbE: 1.07 GB/s (gloo #248).
- ``hccs`` (NPUs inside a host): none. No tool output read here reports an HCCS rate: the relative rule only.

Sources: https://github.com/NVIDIA/nccl-tests/issues/119, https://github.com/NVIDIA/nccl-tests/issues/267,
https://github.com/NVIDIA/nccl-tests/issues/212, https://github.com/NVIDIA/nccl/issues/1639,
https://github.com/pytorch/gloo/issues/21, https://github.com/pytorch/gloo/issues/248.

The shares are large-message figures; this check stops at 64 MiB with a few iterations, which is why a figure
is judged against ``expected_fraction`` of expected, not against expected itself.

>>> round(expected("rdma", 50.0).gbps, 2), expected("rdma", 50.0).how
(48.0, '0.96 x 50 GB/s (rdma: nccl-tests #119)')
>>> expected("tcp", 5.0).gbps, expected("tcp", 0.125).gbps
(1.07, 0.11)
>>> expected("nvlink", 50.0, size=64 << 20).gbps, expected("nvlink", 50.0, size=4 << 20)
(30.0, None)
>>> expected("hccs", 56.0) is None, expected("rdma", None) is None
(True, True)
>>> pcie_gbps(4, 16), pcie_gbps(3, 8), pcie_gbps(None, 16)
(31.5, 7.88, None)
"""

from __future__ import annotations

from dataclasses import dataclass

MiB = 1 << 20
EXPECTED_FRACTION = 0.4  # the default of checks.allreduce.expected_fraction


@dataclass(frozen=True)
class Share:
    """What the collective library is published to reach of a class's rate, and where that was published."""

    share: float
    source: str  # short: the issue that publishes it
    cap_gbps: float = 0.0  # > 0: never expect more than this (gloo's one thread)
    min_size: int = 0  # judged only at this size or larger


# class -> shares, largest min_size first (the first whose min_size the judged size reaches applies)
SHARES: dict[str, tuple[Share, ...]] = {
    "rdma": (Share(0.96, "nccl-tests #119"),),
    "npu_roce": (Share(0.96, "as rdma: nccl-tests #119"),),
    "nvlink": (Share(0.60, "A100 NV12 nccl-tests at 64 MiB; nccl-tests #212", min_size=64 * MiB),
               Share(0.42, "A100 NV12 nccl-tests at 16 MiB; nccl-tests #212", min_size=16 * MiB)),
    "pcie": (Share(0.45, "NCCL #1639", min_size=16 * MiB),),
    "tcp": (Share(0.88, "gloo #21; at most 1.07 GB/s: gloo #248", cap_gbps=1.07),),
    "hccs": (),
}
# GB/s per lane and direction after line coding: gen1/2 8b/10b, gen3-5 128b/130b, gen6 FLIT (242/256 of 8 GB/s)
PCIE_LANE_GBPS = {1: 0.25, 2: 0.5, 3: 0.985, 4: 1.969, 5: 3.938, 6: 7.563}


@dataclass(frozen=True)
class Expected:
    """A link's expected busbw (GB/s) and how it was derived, for the report."""

    gbps: float
    how: str

    def floor(self, fraction: float) -> float:
        """The figure below which a result is slow.

        >>> Expected(10.0, "").floor(0.4)
        4.0
        """
        return fraction * self.gbps


def expected(klass: str, rate_gbps: float | None, size: int = 1 << 62, what: str = "") -> Expected | None:
    """The expected busbw of a ``klass`` link whose hardware rate is ``rate_gbps`` (GB/s per direction), judged
    at ``size`` bytes; None when the rate or the class's share is unknown, or the size too small to judge."""
    if rate_gbps is None or rate_gbps <= 0:
        return None
    share = next((s for s in SHARES.get(klass, ()) if size >= s.min_size), None)
    if share is None:
        return None
    gbps = share.share * rate_gbps
    capped = share.cap_gbps > 0 and gbps > share.cap_gbps
    value = round(share.cap_gbps if capped else gbps, 4)
    rate = f"{rate_gbps:.4g} GB/s" + (f" {what}" if what else "")
    how = (f"gloo's cap {share.cap_gbps:g} GB/s below {share.share:g} x {rate} ({klass}: {share.source})" if capped
           else f"{share.share:g} x {rate} ({klass}: {share.source})")
    return Expected(value, how)


def pcie_gbps(generation: int | None, width: int | None) -> float | None:
    """A PCIe link's rate in GB/s per direction: generation x lanes; None when either is unknown."""
    if generation not in PCIE_LANE_GBPS or not isinstance(width, int) or width <= 0:
        return None
    return round(PCIE_LANE_GBPS[generation] * width, 2)


def ratio_text(figure: float, exp: Expected | None) -> str:
    """How a figure reads against its expected busbw.

    >>> ratio_text(0.5, Expected(1.0, "0.88 x ...")), ratio_text(0.5, None)
    ('0.5 of expected 1 GB/s', 'no line rate known')
    """
    if exp is None:
        return "no line rate known"
    return f"{figure / exp.gbps:.2g} of expected {exp.gbps:.3g} GB/s"
