"""The registry: every listed name registers when its module is imported, each module registers
only what it lists, errors name the argument, and the lazy tables import nothing up front."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

from ioukit.analysis.curves import pr_curves
from ioukit.dataset import Dataset
from ioukit.engine import evaluate
from ioukit.errors import ParameterError
from ioukit.evaluation import registry
from ioukit.evaluation.protocols.coco import rematch as coco_rematch
from ioukit.evaluation.result import ProtocolResult
from ioukit.synthetic import make_detections


@pytest.mark.parametrize("name", sorted(registry.SIMILARITY_MODULES))
def test_every_listed_similarity_registers_itself(name: str) -> None:
    sim = registry.get_similarity(name)
    assert hasattr(sim, "matrices")
    assert registry.similarity_input(name) in ("boxes", "segmentation", "keypoints", "rotated")
    assert type(sim).__module__ == registry.SIMILARITY_MODULES[name]


@pytest.mark.parametrize("name", registry.protocol_names())
def test_every_listed_protocol_registers_itself(name: str) -> None:
    own = registry.protocol_iou_types(name)
    protocol = registry.make_protocol(name, iou_type=own[0])
    assert hasattr(protocol, "evaluate")
    assert type(protocol).__module__.startswith("ioukit.evaluation.protocols.")


def test_keypoint_variants_and_the_hint() -> None:
    for name in ("coco", "yolo", "crowdpose"):
        assert registry.make_protocol(name, iou_type="keypoints") is not None
    with pytest.raises(ParameterError, match=r"iou_type: 'keypoints' needs protocol 'coco', "):
        registry.make_protocol("voc07", iou_type="keypoints")
    with pytest.raises(ParameterError, match=r"protocol: expected one of coco, voc07"):
        registry.make_protocol("kitti")
    with pytest.raises(ParameterError, match=r"options of protocol 'coco' \(keypoints\)"):
        registry.make_protocol("coco", iou_type="keypoints", tie="first")
    assert registry.similarity_input("cosine") is None


def test_names_come_from_the_tables_without_importing_the_modules() -> None:
    code = (
        "import sys; from ioukit.evaluation import registry as r; "
        "names = r.protocol_names(), r.similarity_names(); "
        "print(any(m.startswith(('ioukit.evaluation.protocols.', "
        "'ioukit.evaluation.similarity.')) for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@dataclasses.dataclass(frozen=True)
class _PluggedVOC:
    """A protocol from outside ioukit: VOC10's numbers under its own name, no outcome kept."""

    name: str = "plugged-voc"

    def evaluate(self, gt: Dataset, pred: Dataset, /, *, iou_type: str = "bbox") -> Any:
        result: ProtocolResult = registry.make_protocol("voc10").evaluate(gt, pred)
        return dataclasses.replace(result, protocol=self.name, outcome=None)


def test_a_plugged_in_protocol_is_summarized_and_rematched_by_its_traits() -> None:
    """The result asks the protocol's declared traits (summary, rematch), never its name."""
    traits = registry.ProtocolTraits(
        summary=lambda r: f"plugged mAP {r.stats['mAP']:.6f}", rematch=coco_rematch
    )
    registry.register_protocol("plugged-voc", _PluggedVOC, traits=traits)
    try:
        assert registry.protocol_traits("plugged-voc") is traits
        gt, dets = make_detections(num_images=12, num_classes=3, seed=4, crowd_fraction=0.1)
        got = evaluate(gt, dets, protocol="plugged-voc")
        ref = evaluate(gt, dets, protocol="voc10")
        assert got.stats == ref.stats
        assert got.summary() == f"plugged mAP {ref.stats['mAP']:.6f}"
        assert ref.summary().startswith("voc10\n")  # VOC declares no block: the table
        curves = got.curves(iou_threshold=0.6)  # no outcome: the declared (COCO) rematch
        coco = pr_curves(got.ground_truth, got.predictions, iou_threshold=0.6, protocol="coco")
        voc = pr_curves(got.ground_truth, got.predictions, iou_threshold=0.6, protocol="voc10")
        np.testing.assert_array_equal(curves.precision, coco.precision)
        np.testing.assert_array_equal(curves.f1_at_confidence, coco.f1_at_confidence)
        assert not np.array_equal(voc.precision, coco.precision)  # crowds: the rules differ
    finally:
        registry._PROTOCOLS.pop("plugged-voc", None)
        registry._TRAITS.pop("plugged-voc", None)
    assert registry.protocol_traits("plugged-voc") == registry.ProtocolTraits()


def test_similarity_reads_answers_for_every_similarity() -> None:
    for name in registry.similarity_names():
        reads = registry.similarity_reads(name)
        assert reads.column == registry.similarity_input(name)
        assert [reads.masks, reads.keypoints, reads.oriented].count(True) <= 1
    assert registry.similarity_reads("cosine") == registry.SimilarityReads(None)


def test_traits_are_declared_capabilities() -> None:
    """``protocol_has``: what the callers ask instead of comparing protocol names (#22)."""
    from ioukit.evaluation.registry import TRAITS, protocol_has, protocol_names

    having = {t: [n for n in protocol_names() if protocol_has(n, t)] for t in TRAITS}
    assert having == {
        "error_analysis": ["coco"],
        "unlisted_classes": ["yolo"],
        "federated": ["lvis"],
        "own_files": ["panoptic"],
    }
    with pytest.raises(ParameterError, match="trait: expected one of error_analysis"):
        protocol_has("coco", "tide")
    with pytest.raises(ParameterError, match="protocol: expected one of coco"):
        protocol_has("cocoa", "federated")
    # declared once, where the protocol registers: crowdpose (a COCO keypoint protocol)
    # declares no TIDE analysis, and a registration without traits has none
    assert not protocol_has("crowdpose", "error_analysis")
    assert registry.protocol_traits("lvis").federated is True


def test_protocol_options_are_the_factorys_keywords() -> None:
    from ioukit.evaluation.registry import protocol_options

    boundary = protocol_options("coco", iou_type="boundary") or ()
    assert boundary[:2] == ("dilation_ratio", "compat") and "iou_thresholds" in boundary
    assert "range_area" in (protocol_options("coco", iou_type="keypoints") or ())
    assert protocol_options("citypersons")[:2] == ("setups", "iou_threshold")  # type: ignore[index]
