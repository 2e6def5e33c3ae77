"""Layers use each other's public names only.

A module of one layer (a top-level module or sub-package of ``ioukit``: ``masks``, ``engine``,
``evaluation``, ``metrics``, ``io``, ``cli``...) must not import, or reach through an attribute,
a private name (``_x``) of another layer. The private shared modules (``ioukit._array``,
``ioukit._host``, ``ioukit._kernels``) are meant for every layer and are not checked.
``KNOWN`` lists the crossings that remain (each a candidate for a public name); the test fails
on any new one, and on a listed one that is gone (so the list only shrinks). It is empty now:
helpers shared by several layers live in private shared modules (``ioukit._box_formats``,
``ioukit._rotated_corners``, ``ioukit._evaluate_inputs``, ``ioukit._process_group``...).
"""

from __future__ import annotations

import ast
import fnmatch
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "src" / "ioukit"

KNOWN: set[tuple[str, str]] = set()


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def crossings() -> set[tuple[str, str]]:
    """(file relative to src/ioukit, the private name of another layer it uses)."""
    found: set[tuple[str, str]] = set()
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        module = ".".join(("ioukit", *rel.with_suffix("").parts)).removesuffix(".__init__")
        own = _layer(module)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        bound: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ioukit"):
                assert node.module is not None
                for alias in node.names:
                    target = f"{node.module}.{alias.name}"
                    bound[alias.asname or alias.name] = target
                    layer = _layer(target if node.module == "ioukit" else node.module)
                    if _private(alias.name) and layer != own and not layer.startswith("_"):
                        found.add((rel.as_posix(), target))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                target = bound.get(node.value.id, "")
                layer = _layer(target)
                if target and _private(node.attr) and layer != own and not layer.startswith("_"):
                    found.add((rel.as_posix(), f"{target}.{node.attr}"))
    return found


def test_no_new_private_names_across_layers() -> None:
    found = crossings()
    new = sorted(found - KNOWN)
    assert not new, "private names of another layer (give them a public name):\n" + "\n".join(
        f"  {f}: {n}" for f, n in new
    )
    gone = sorted(KNOWN - found)
    assert not gone, "fixed crossings still listed in KNOWN (remove them):\n" + "\n".join(
        f"  {f}: {n}" for f, n in gone
    )


def test_masks_has_no_private_users() -> None:
    assert not [c for c in crossings() if c[1].startswith("ioukit.masks.")]


# ---------------------------------------------------------------- the one-way rule (#22 item 10)

# Files that may import ioukit's own modules inside a function body, and why: everything else
# imports at the top of the file, so the import graph is the graph a reader sees.
BODY_IMPORTS_ALLOWED = {
    "__init__.py": "the facade: public names load on first use",
    "compat/__init__.py": "init_as_pycocotools/lvis() bind the compat modules on request",
    "analysis/result.py": "EvaluationResult's analysis methods load their module on first use",
    "cli/eval_command.py": "the optional outputs whose modules cost start-up for every run: "
    "--workers (distributed), --plots (plots), --html (report.html), keypoint errors",
}
# the other lazy points are tables read by importlib, not import statements: the commands
# (ioukit.cli.COMMANDS), the file formats (ioukit.io.formats), the protocols and similarities
# (ioukit.evaluation.registry)


def _module_of(path: Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _import_targets(node: ast.AST, module: str, is_package: bool, known: set[str]) -> set[str]:
    names: list[str] = []
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            parts = module.split(".")
            parts = parts if is_package else parts[:-1]
            parts = parts[: len(parts) - node.level + 1]
            base = ".".join([*parts, *([base] if base else [])])
        subs = [f"{base}.{a.name}" for a in node.names]
        # a name that is not a submodule is an attribute of ``base`` (the package's own code)
        names = [n for n in subs if n in known] + ([base] if set(subs) - known else [])
    hits = set()
    for name in names:
        while name and name not in known:
            name = name.rpartition(".")[0]
        if name and name != module:
            hits.add(name)
    return hits


def _graph() -> tuple[dict[str, set[str]], dict[str, int]]:
    files = {_module_of(p): p for p in ROOT.rglob("*.py")}
    known = set(files)
    edges: dict[str, set[str]] = {m: set() for m in files}
    body: dict[str, int] = {}
    for module, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        stack: list[tuple[ast.AST, bool]] = [(n, False) for n in tree.body]
        while stack:
            node, in_function = stack.pop()
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                stack.extend((n, in_function) for n in node.orelse)
                continue
            if isinstance(node, ast.Import | ast.ImportFrom):
                hits = _import_targets(node, module, path.name == "__init__.py", known)
                edges[module] |= hits
                if hits and in_function:
                    rel = path.relative_to(ROOT).as_posix()
                    body[rel] = body.get(rel, 0) + 1
                continue
            inside = in_function or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            stack.extend((n, inside) for n in ast.iter_child_nodes(node))
    return edges, body


def test_no_import_cycle() -> None:
    edges, _ = _graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        on_stack.append(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = on_stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                cycles.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    assert not cycles, f"import cycles (function-body imports included): {cycles}"


def test_function_body_imports_only_where_allowed() -> None:
    _, body = _graph()
    stray = {f: n for f, n in body.items() if f not in BODY_IMPORTS_ALLOWED}
    assert not stray, f"imports of ioukit's own modules inside functions (hoist them): {stray}"
    # 20: analysis/result.py also loads calibration, label_errors and trust on first use (a
    # COCO evaluation imports 22 modules fewer, #27)
    assert sum(body.values()) <= 20, body  # the lazy facades and commands: keep it shrinking


# ------------------------------------------------- protocol / iou_type names (#22 item 10)

# the names of protocols and similarities (iou_type), as /work/shared/tools/import_graph.py
NAMES = {
    "coco", "voc07", "voc10", "voc", "yolo", "lvis", "openimages", "openimages_challenge",
    "crowdpose", "dota", "mmrotate", "keypoints", "segm", "bbox", "rotated", "probiou",
    "boundary", "panoptic",
}  # fmt: skip
# the files that may know them: everywhere else asks the registries
NAMES_ALLOWED = ("evaluation/registry.py", "evaluation/protocols/*", "evaluation/similarity/*")


def _compared_names(tree: ast.AST) -> list[int]:
    """Lines of the comparisons in ``tree`` with a string constant of :data:`NAMES`."""
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        if not any(isinstance(o, ast.Eq | ast.NotEq | ast.In | ast.NotIn) for o in node.ops):
            continue
        for side in [node.left, *node.comparators]:
            values = (
                [side]
                if isinstance(side, ast.Constant)
                else list(side.elts)
                if isinstance(side, ast.Tuple | ast.List | ast.Set)
                else []
            )
            if any(isinstance(v, ast.Constant) and v.value in NAMES for v in values):
                lines.append(node.lineno)
                break
    return lines


def name_branches() -> list[str]:
    """``file:line`` of each comparison (==, !=, in, not in) of a string constant naming a
    protocol or an iou_type outside :data:`NAMES_ALLOWED`."""
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if any(fnmatch.fnmatch(rel, pattern) for pattern in NAMES_ALLOWED):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found.extend(f"{rel}:{line}" for line in _compared_names(tree))
    return found


def test_protocol_and_iou_type_names_are_compared_only_in_the_registries() -> None:
    found = name_branches()
    # from 162; the front end (cli/, io/) reads ioukit.io.formats and the registry;
    # distributed.py asks the protocols (can_shard, shard_match, shard_summarize): 122 -> 108;
    # cli/ asks protocol_has, similarity_input and FileFormat: 108 -> 95;
    # compat/ reads pycocotools' iouType records (compat/iou_types.py): 95 -> 66; the rest
    # asks the registry's capability queries (protocol_traits, similarity_reads): -> 12
    assert len(found) <= 12, "\n".join(found)


def test_what_counts_as_a_name_branch() -> None:
    source = (
        "if p == 'coco': pass\n"  # 1: counted
        "if t in ('segm', 'bbox'): pass\n"  # 2: counted
        "x = 'yolo'\n"  # 3: an assignment, not a branch
        "if f == 'auto': pass\n"  # 4: not a protocol name
        "if 'lvis' != q and r: pass\n"  # 5: counted
    )
    assert _compared_names(ast.parse(source)) == [1, 2, 5]
