"""The registry: protocol and similarity names -> the modules that define them.

This is the only place below the public facade that imports lazily: a protocol or a similarity
module registers itself (``register_protocol`` / ``register_similarity`` at its end) when it is
first imported, and the tables below say which module that is. Adding a protocol or a
similarity is one new file plus one line in :data:`PROTOCOL_MODULES` or
:data:`SIMILARITY_MODULES`; the CLI's ``--protocol`` / ``--iou-type`` choices, the engine and the
distributed runners read their names from here.

Examples
--------
>>> from ioukit.evaluation.registry import make_protocol, protocol_names
>>> protocol_names()[:4]
('coco', 'voc07', 'voc10', 'yolo')
>>> make_protocol("voc10").name
'voc10'
>>> make_protocol("voc10", iou_type="keypoints")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ioukit.errors.ParameterError: iou_type: 'keypoints' needs protocol 'coco', ..., got 'voc10'
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from importlib import import_module
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, runtime_checkable

import numpy as np

from ioukit.dataset import Dataset
from ioukit.errors import DataFormatError, ParameterError

if TYPE_CHECKING:
    from ioukit.evaluation.groups import Similarity
    from ioukit.evaluation.result import ProtocolResult

__all__ = [
    "COCO_JSON_MODULES",
    "PROTOCOL_MODULES",
    "SIMILARITY_MODULES",
    "TRAITS",
    "EvaluationProtocol",
    "ProtocolTraits",
    "SimilarityReads",
    "StatSpec",
    "check_pair",
    "coco_json_reader",
    "get_similarity",
    "has_similarity",
    "make_protocol",
    "protocol_has",
    "protocol_iou_types",
    "protocol_names",
    "protocol_options",
    "protocol_takes",
    "protocol_traits",
    "register_protocol",
    "register_similarity",
    "register_variant",
    "resolve_iou_type",
    "similarity_input",
    "similarity_names",
    "similarity_reads",
]

_P = "ioukit.evaluation.protocols."
_S = "ioukit.evaluation.similarity."

PROTOCOL_MODULES: dict[str, str] = {
    "coco": _P + "coco",
    "voc07": _P + "voc",
    "voc10": _P + "voc",
    "yolo": _P + "yolo",
    "openimages": _P + "openimages",
    "openimages_challenge": _P + "openimages",
    "lvis": _P + "lvis",
    "dota": _P + "rotated",
    "mmrotate": _P + "rotated",
    "crowdpose": _P + "keypoints",
    "caltech": _P + "pedestrian",
    "citypersons": _P + "pedestrian",
    "crowdhuman": _P + "pedestrian",
    "panoptic": _P + "panoptic",
}
"""Protocol name -> the module that registers it (imported on first use)."""

SIMILARITY_MODULES: dict[str, str] = {
    "bbox": _S + "box",
    "bbox-float32": _S + "box",
    "segm": _S + "mask",
    "boundary": _S + "boundary",
    "keypoints": _S + "oks",
    "rotated": _S + "rotated",
    "probiou": _S + "rotated",
}
"""Similarity (``iou_type``) name -> the module that registers it (imported on first use)."""

VARIANT_MODULES: dict[str, str] = {"keypoints": _P + "keypoints"}
"""``iou_type`` -> the module that registers protocol variants for it (COCO and YOLO keypoints
are COCO and YOLO with another similarity and layout: :func:`register_variant`)."""

COCO_JSON_MODULES: dict[str, str] = {"keypoints": "ioukit.io.coco_keypoints"}
"""Dataset column -> the module of its COCO JSON readers where that is not
:mod:`ioukit.io.coco` (imported on first use, by :func:`coco_json_reader`: a box evaluation
loads no keypoint reader)."""


class StatSpec(NamedTuple):
    """One headline number of a summary: which array, threshold, area range and max_dets.

    A named tuple (immutable, compared by value), as are :class:`ProtocolTraits` and
    :class:`SimilarityReads`: these records are defined on every fresh evaluation's path,
    where a frozen dataclass's generated methods cost about five times more to create.

    Attributes
    ----------
    key : str
        Name in ``stats`` (``"AP"``, ``"AP50"``, ``"ARs"``...).
    kind : {"AP", "AR"}
        Mean of ``precision`` (AP) or ``recall`` (AR) over the selected cells (> -1).
    iou : float or None
        One threshold, or None for the mean over all thresholds.
    area : str
        Area range name.
    max_dets : int
    """

    key: str
    kind: str
    iou: float | None
    area: str
    max_dets: int

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (the ``params["stat_layout"]`` rows).

        >>> StatSpec("AP50", "AP", 0.5, "all", 100).to_dict()["iou"]
        0.5
        """
        return {
            "key": self.key,
            "kind": self.kind,
            "iou": self.iou,
            "area": self.area,
            "max_dets": self.max_dets,
        }


class ProtocolTraits(NamedTuple):
    """What a protocol is, for the code above it that must not compare its name.

    Each protocol declares its traits once, where it registers (:func:`register_protocol`);
    the analyses, the result and the readers ask :func:`protocol_traits`.

    Attributes
    ----------
    summary : callable or None
        ``summary(result) -> str | None``: the protocol's own text block for a
        :class:`~ioukit.evaluation.result.ProtocolResult` (COCO: pycocotools' lines; LVIS:
        lvis-api's); None (or a None answer): the stats as a short table.
    rematch : callable or None
        ``rematch(gt, pred, thresholds, similarity) -> DatasetMatches``: the match at one
        threshold that the curves use when the evaluation's outcome does not hold it; None:
        the VOC rule (highest IoU, no crowd), as for any protocol without its own.
    rematch_similarity : callable or None
        ``rematch_similarity(iou_type, params, confusion) -> Similarity | None``: what
        matched IoUs, curves and (``confusion=True``) the confusion matrix match with when
        they cannot read the outcome; None: the registered similarity for oriented boxes, box
        IoU (None) otherwise.
    ultralytics_curves : bool
        Confidence curves as Ultralytics draws them (float32 thresholds, its order).
    coco_pairing : bool
        Its outcome is COCO's greedy match (crowd, ignore, max_dets per image and class),
        which the TIDE and per-image tables reuse under default options.
    strict_compat : str or None
        The ``compat`` value under which the ground truth must give ``iscrowd`` on every
        annotation (COCO: ``"pycocotools"``, whose ``evaluateImg`` reads it).
    error_analysis : bool
        TIDE error analysis (:mod:`ioukit.analysis.errors`) reads its match (``--errors``).
    unlisted_classes : bool
        A prediction of a class without ground truth is a false positive of a class that gets
        no AP (Ultralytics' ``ap_per_class``): the class list may come from the predictions.
    federated : bool
        Its ground truth carries per-image label lists (LVIS's negative and not-exhaustive
        classes): read by its own reader, no class or image selection, no figures from a
        rematch.
    evaluate_inputs : callable or None
        ``evaluate_inputs(gt, predictions, *, iou_type, **options) -> (ProtocolResult,
        gt Dataset, predictions Dataset)``: a protocol whose inputs carry what a Dataset pair
        cannot (LVIS's federated labels) reads and evaluates them itself; None: the engine
        reads a Dataset pair.
    own_files : bool
        It evaluates files of its own (``evaluate_files``: each side's file and folder, COCO
        panoptic JSON and PNGs), not a Dataset pair; ``rows()`` and ``document()`` give its
        table and JSON.

    The flags are asked by name with :func:`protocol_has` (their names are :data:`TRAITS`).

    Examples
    --------
    >>> protocol_traits("coco").coco_pairing, protocol_traits("voc10").coco_pairing
    (True, False)
    >>> protocol_traits("no-such-protocol") == ProtocolTraits()
    True
    """

    summary: Callable[[Any], str | None] | None = None
    rematch: Callable[..., Any] | None = None
    rematch_similarity: Callable[[str, Any, bool], Any] | None = None
    ultralytics_curves: bool = False
    coco_pairing: bool = False
    strict_compat: str | None = None
    evaluate_inputs: Callable[..., tuple[Any, Any, Any]] | None = None
    error_analysis: bool = False
    unlisted_classes: bool = False
    federated: bool = False
    own_files: bool = False


TRAITS: tuple[str, ...] = ("error_analysis", "unlisted_classes", "federated", "own_files")
"""The capability flags of :class:`ProtocolTraits` that :func:`protocol_has` answers."""


class SimilarityReads(NamedTuple):
    """The Dataset column a similarity compares, as questions callers ask instead of
    comparing ``iou_type`` names (:func:`similarity_reads`).

    Attributes
    ----------
    column : str or None
        ``"boxes"``, ``"segmentation"``, ``"keypoints"`` or ``"rotated"``; None for a name
        that is not a similarity.

    Examples
    --------
    >>> similarity_reads("boundary").masks, similarity_reads("probiou").oriented
    (True, True)
    """

    column: str | None

    @property
    def masks(self) -> bool:
        """It compares masks (``segmentation``: mask IoU, boundary IoU)."""
        return self.column == "segmentation"

    @property
    def keypoints(self) -> bool:
        """It compares keypoints (OKS)."""
        return self.column == "keypoints"

    @property
    def oriented(self) -> bool:
        """It compares oriented boxes (``rotated``: rotated IoU, probiou)."""
        return self.column == "rotated"


@runtime_checkable
class EvaluationProtocol(Protocol):
    """What the registry dispatches to: a named protocol that evaluates a dataset pair."""

    @property
    def name(self) -> str:
        """The protocol's name (``"coco"``, ``"voc07"``...)."""
        ...

    def evaluate(self, gt: Dataset, pred: Dataset, /, *, iou_type: str = "bbox") -> ProtocolResult:
        """Evaluate ``pred`` against ``gt`` (validated datasets sharing an image table)."""
        ...


def check_pair(gt: Dataset, pred: Dataset) -> None:
    """Raise unless ``gt`` is ground truth and ``pred`` predictions over the same images."""
    if not isinstance(gt, Dataset) or not isinstance(pred, Dataset):
        raise DataFormatError(
            f"gt, pred: expected two ioukit.dataset.Dataset objects, got "
            f"{type(gt).__name__} and {type(pred).__name__}"
        )
    if gt.is_prediction:
        raise DataFormatError("ground_truth: expected a dataset without scores, got predictions")
    if pred.scores is None:
        raise DataFormatError("predictions: expected a dataset with scores, got ground truth")
    if pred.images is not gt.images and not (
        len(pred.images) == len(gt.images) and np.array_equal(pred.images.ids, gt.images.ids)
    ):
        raise DataFormatError(
            "predictions: expected the ground truth's image table "
            f"({len(gt.images)} images), got {len(pred.images)} images"
            + ("" if len(pred.images) != len(gt.images) else " with other ids or order")
        )


# ------------------------------------------------------------------------------ registries

_PROTOCOLS: dict[str, tuple[Callable[..., EvaluationProtocol], tuple[str, ...] | None]] = {}
_VARIANTS: dict[tuple[str, str], Callable[..., EvaluationProtocol]] = {}
_SIMILARITIES: dict[str, Callable[..., Similarity]] = {}
_TRAITS: dict[str, ProtocolTraits] = {}


def _check_name(name: object, table: dict[Any, Any], replace: bool) -> None:
    if not isinstance(name, str) or not name:
        raise ParameterError(f"name: expected a non-empty string, got {name!r}")
    if name in table and not replace:
        raise ParameterError(f"name: {name!r} is already registered (pass replace=True)")


def register_protocol(
    name: str,
    factory: Callable[..., EvaluationProtocol],
    /,
    *,
    iou_types: Sequence[str] | None = ("bbox",),
    traits: ProtocolTraits | None = None,
    replace: bool = False,
) -> None:
    """Make ``protocol=name`` build ``factory(**options)``.

    Parameters
    ----------
    name : str
    factory : callable
        Receives the user's protocol options as keywords; raises ``TypeError`` for unknown
        ones and ``ValueError`` for bad values.
    iou_types : sequence of str or None
        Similarities the protocol accepts (the first is its own); None accepts every registered
        one.
    traits : ProtocolTraits or None
        What the protocol is (:func:`protocol_traits`); None: the defaults.
    replace : bool
        Allow replacing an existing registration.

    Examples
    --------
    >>> register_protocol("coco", lambda: None)
    Traceback (most recent call last):
    ...
    ioukit.errors.ParameterError: name: 'coco' is already registered (pass replace=True)
    """
    if isinstance(name, str):
        _provide_protocol(name)
    _check_name(name, _PROTOCOLS, replace)
    _PROTOCOLS[name] = (factory, None if iou_types is None else tuple(iou_types))
    _TRAITS[name] = ProtocolTraits() if traits is None else traits


def register_variant(
    name: str, iou_type: str, factory: Callable[..., EvaluationProtocol], /
) -> None:
    """Make ``protocol=name, iou_type=iou_type`` build ``factory(**options)`` instead of the
    protocol's own factory (COCO keypoints: COCO with OKS and its own summary layout)."""
    _VARIANTS[(name, iou_type)] = factory


def register_similarity(
    name: str, factory: Callable[..., Similarity], /, *, replace: bool = False
) -> None:
    """Make ``factory(**options)`` available as ``iou_type=name``.

    Parameters
    ----------
    name : str
        E.g. ``"keypoints"`` (OKS) or ``"rotated"``.
    factory : callable
        Returns a :class:`~ioukit.evaluation.groups.Similarity`; receives the protocol's
        similarity options.
    replace : bool
        Allow replacing an existing registration.

    Examples
    --------
    >>> register_similarity("bbox", dict)
    Traceback (most recent call last):
    ...
    ioukit.errors.ParameterError: name: 'bbox' is already registered (pass replace=True)
    """
    if isinstance(name, str):
        _provide_similarity(name)
    _check_name(name, _SIMILARITIES, replace)
    _SIMILARITIES[name] = factory


def _provide_protocol(name: str) -> None:
    module = PROTOCOL_MODULES.get(name)
    if module is not None and name not in _PROTOCOLS:
        import_module(module)


def _provide_similarity(name: str) -> None:
    module = SIMILARITY_MODULES.get(name)
    if module is not None and name not in _SIMILARITIES:
        import_module(module)


def coco_json_reader(column: str, name: str) -> Callable[..., Any]:
    """The function ``name`` of the COCO JSON reader module of Dataset column ``column``
    (:data:`COCO_JSON_MODULES`), imported on first use.

    >>> coco_json_reader("keypoints", "read_crowd_index")({"images": [{"id": 3, "crowdIndex": 1}]})
    {3: 1.0}
    """
    function: Callable[..., Any] = getattr(import_module(COCO_JSON_MODULES[column]), name)
    return function


def protocol_names() -> tuple[str, ...]:
    """Protocol names: the built-in ones in table order, then registered ones (imports nothing).

    >>> "lvis" in protocol_names()
    True
    """
    return tuple(PROTOCOL_MODULES) + tuple(n for n in _PROTOCOLS if n not in PROTOCOL_MODULES)


def similarity_names() -> tuple[str, ...]:
    """Similarity (``iou_type``) names, sorted (imports nothing).

    >>> similarity_names()[:2]
    ('bbox', 'bbox-float32')
    """
    return tuple(sorted({*SIMILARITY_MODULES, *_SIMILARITIES}))


def has_similarity(name: str) -> bool:
    """Whether ``name`` is a similarity (imports nothing).

    >>> has_similarity("rotated"), has_similarity("cosine")
    (True, False)
    """
    return name in SIMILARITY_MODULES or name in _SIMILARITIES


def get_similarity(name: str, /, **options: Any) -> Similarity:
    """The similarity registered as ``name``, built with ``options``.

    Raises
    ------
    ParameterError
        ``name`` is not registered (the message lists the registered names).

    Examples
    --------
    >>> type(get_similarity("bbox")).__name__
    'BoxIoU'
    """
    _provide_similarity(name)
    if name not in _SIMILARITIES:
        raise ParameterError(
            f"iou_type: expected one of {', '.join(similarity_names())}, got {name!r}"
        )
    return _SIMILARITIES[name](**options)


def similarity_input(name: str) -> str | None:
    """The Dataset column similarity ``name`` compares (its ``reads``): ``"boxes"``,
    ``"segmentation"``, ``"keypoints"`` or ``"rotated"``; None for an unknown name.

    Callers ask this instead of comparing ``iou_type`` names: which reader, which columns.

    >>> similarity_input("segm"), similarity_input("probiou"), similarity_input("cosine")
    ('segmentation', 'rotated', None)
    """
    if not has_similarity(name):
        return None
    _provide_similarity(name)
    return str(getattr(_SIMILARITIES[name], "reads", "boxes"))


def protocol_iou_types(name: str) -> tuple[str, ...]:
    """The ``iou_type`` values protocol ``name`` accepts, its own first.

    >>> protocol_iou_types("crowdpose")
    ('keypoints',)
    """
    _provide_protocol(name)
    if name not in _PROTOCOLS:
        raise ParameterError(
            f"protocol: expected one of {', '.join(protocol_names())}, got {name!r}"
        )
    allowed = _PROTOCOLS[name][1]
    return similarity_names() if allowed is None else allowed


def protocol_takes(name: str, option: str) -> bool:
    """Whether protocol ``name`` takes the option ``option`` (a keyword of its factory).

    Callers ask this instead of comparing protocol names: which side data to read.

    >>> protocol_takes("crowdpose", "crowd_index"), protocol_takes("coco", "crowd_index")
    (True, False)
    """
    protocol_iou_types(name)  # registers it, or names the unknown protocol
    parameters = inspect.signature(_PROTOCOLS[name][0]).parameters
    return option in parameters and parameters[option].kind is not inspect.Parameter.VAR_KEYWORD


def protocol_traits(name: object) -> ProtocolTraits:
    """What protocol ``name`` declared about itself (:class:`ProtocolTraits`); the defaults
    for a name that is not registered (a result built by hand).

    Callers ask this instead of comparing protocol names: which summary, which rematch.

    >>> protocol_traits("lvis").summary is not None, protocol_traits("yolo").ultralytics_curves
    (True, True)
    """
    if isinstance(name, str):
        _provide_protocol(name)
    return _TRAITS.get(name, _DEFAULT_TRAITS) if isinstance(name, str) else _DEFAULT_TRAITS


_DEFAULT_TRAITS = ProtocolTraits()


def similarity_reads(name: object) -> SimilarityReads:
    """The Dataset column similarity ``name`` compares, with its questions
    (:class:`SimilarityReads`: ``masks``, ``keypoints``, ``oriented``).

    >>> similarity_reads("keypoints").keypoints, similarity_reads("bbox").masks
    (True, False)
    """
    return SimilarityReads(similarity_input(name) if isinstance(name, str) else None)


def resolve_iou_type(protocol: str, iou_type: str | None) -> str:
    """``iou_type``, or the protocol's only one where it is None or the default ``"bbox"`` that
    the protocol does not take (``protocol="crowdpose"`` evaluates keypoints; ``"dota"``, which
    takes ``"rotated"`` and ``"probiou"``, asks).

    Examples
    --------
    >>> resolve_iou_type("crowdpose", "bbox"), resolve_iou_type("dota", "bbox")
    ('keypoints', 'bbox')
    """
    if protocol not in PROTOCOL_MODULES:
        return "bbox" if iou_type is None else iou_type
    own = protocol_iou_types(protocol)
    if len(own) == 1 and (iou_type is None or (iou_type == "bbox" and "bbox" not in own)):
        return own[0]
    return "bbox" if iou_type is None else iou_type


def _needs_variant(iou_type: str, name: str) -> str | None:
    """The error when ``iou_type`` exists only as variants of other protocols, else None."""
    module = VARIANT_MODULES.get(iou_type)
    if module is None:
        return None
    import_module(module)
    names = sorted(
        {p for p, t in _VARIANTS if t == iou_type}
        | {p for p, (_, types) in _PROTOCOLS.items() if types == (iou_type,)}
    )
    quoted = [repr(n) for n in names]
    listed = ", ".join(quoted[:-1]) + " or " + quoted[-1] if len(quoted) > 1 else quoted[0]
    return f"iou_type: {iou_type!r} needs protocol {listed}, got {name!r}"


def make_protocol(name: str, /, *, iou_type: str | None = None, **options: Any) -> Any:
    """Validate ``name``, ``iou_type`` and ``options``; return the protocol object.

    Parameters
    ----------
    name : str
        A name of :func:`protocol_names`.
    iou_type : str or None
        The similarity; None is the protocol's own (``"bbox"`` for most, ``"keypoints"`` for
        CrowdPose).
    **options
        The protocol's options.

    Raises
    ------
    ParameterError
        Unknown protocol, an ``iou_type`` the protocol or the similarity registry does not
        know, or an unknown option (the message names it).
    """
    allowed = protocol_iou_types(name)
    factory = _PROTOCOLS[name][0]
    if iou_type is None:
        iou_type = allowed[0] if _PROTOCOLS[name][1] is not None else "bbox"
    if iou_type in VARIANT_MODULES:
        import_module(VARIANT_MODULES[iou_type])
    _provide_similarity(iou_type)  # a similarity module may register variants (boundary AP)
    variant = _VARIANTS.get((name, iou_type))
    if variant is None and iou_type not in allowed:
        raise ParameterError(
            _needs_variant(iou_type, name)
            or f"iou_type: protocol {name!r} supports {', '.join(repr(t) for t in allowed)}, "
            f"got {iou_type!r}"
        )
    if variant is None and not has_similarity(iou_type):
        raise ParameterError(
            f"iou_type: expected one of {', '.join(similarity_names())}, got {iou_type!r}"
        )
    label = repr(name) if variant is None else f"{name!r} ({iou_type})"
    chosen = factory if variant is None else variant
    declared = _declared_options(chosen)
    unknown = [key for key in options if declared is not None and key not in declared]
    if unknown:  # name the option and list the protocol's own (the CLI reads the wording)
        assert declared is not None
        raise ParameterError(
            f"options of protocol {label}: unexpected keyword argument {unknown[0]!r}; its "
            f"options are {', '.join(declared) or 'none'}"
        )
    try:
        return chosen(**options)
    except TypeError as exc:
        raise ParameterError(f"options of protocol {label}: {exc}") from None


def protocol_has(name: str, trait: str) -> bool:
    """Whether protocol ``name`` declared the capability ``trait`` (one of :data:`TRAITS`) in
    its :class:`ProtocolTraits`.

    Callers ask this instead of comparing protocol names: ``--errors`` asks
    ``"error_analysis"``, the LVIS route ``"federated"``.

    Raises
    ------
    ParameterError
        An unknown protocol or trait.

    Examples
    --------
    >>> protocol_has("coco", "error_analysis"), protocol_has("voc07", "error_analysis")
    (True, False)
    >>> protocol_has("yolo", "unlisted_classes"), protocol_has("lvis", "federated")
    (True, True)
    """
    if trait not in TRAITS:
        raise ParameterError(f"trait: expected one of {', '.join(TRAITS)}, got {trait!r}")
    protocol_iou_types(name)  # registers it, or names the unknown protocol
    return bool(getattr(protocol_traits(name), trait))


def _declared_options(factory: Callable[..., Any]) -> tuple[str, ...] | None:
    """The keyword parameters of ``factory``; None when it takes any keyword.

    A classmethod factory that passes ``**options`` on to the same method of a base class
    (``KeypointProtocol.from_options`` to ``COCOProtocol.from_options``) declares its own
    keywords and those of the base's; any other ``**`` factory takes any keyword.
    """
    params = inspect.signature(factory).parameters.values()
    named = tuple(
        p.name
        for p in params
        if p.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    )
    if not any(p.kind == inspect.Parameter.VAR_KEYWORD for p in params):
        return named
    owner, method = getattr(factory, "__self__", None), getattr(factory, "__name__", "")
    bases = owner.__mro__[1:] if isinstance(owner, type) else ()
    base = next((b for b in bases if method in vars(b)), None)
    inherited = None if base is None else _declared_options(getattr(base, method))
    if inherited is None:
        return None
    return named + tuple(n for n in inherited if n not in named)


def protocol_options(name: str, /, *, iou_type: str | None = None) -> tuple[str, ...] | None:
    """The options protocol ``name`` declares (for ``iou_type``'s variant where it has one):
    its factory's keyword parameters; None when the factory takes any keyword.

    Examples
    --------
    >>> protocol_options("voc10")
    ('iou_threshold', 'pixel_inclusive', 'strict_threshold', 'exact_grid')
    >>> make_protocol("voc10", tie="first")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ioukit.errors.ParameterError: options of protocol 'voc10': unexpected keyword argument \
'tie'; its options are iou_threshold, pixel_inclusive, strict_threshold, exact_grid
    """
    protocol_iou_types(name)  # imports the module, refuses an unknown name
    if iou_type is not None and iou_type in VARIANT_MODULES:
        import_module(VARIANT_MODULES[iou_type])
    if iou_type is not None and has_similarity(iou_type):
        _provide_similarity(iou_type)  # a similarity module may register variants (boundary)
    variant = _VARIANTS.get((name, iou_type)) if iou_type is not None else None
    return _declared_options(variant if variant is not None else _PROTOCOLS[name][0])
