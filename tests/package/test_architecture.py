"""Imports point down the layers (docs/architecture.md): a module may import its own
layer and the layers below it, never one above; inside the engine, the same for its
sub-layers (``ENGINE_LAYERS``).

Every import statement of every module is read (with ``ast``: imports inside functions
and under ``TYPE_CHECKING`` count), and so is every attribute read off the package
itself (``import gradcheck as mg; mg.verify``), which the lazy exports resolve to a
module. A module of the package that no layer claims fails the test too, so that a new
module is given its place. No module imports another that imports it back, counting
the imports inside functions (``test_no_import_cycle_counting_imports_inside_functions``);
the few modules loaded by name (``importlib``) are listed with their reasons
(``LOADED_BY_NAME``), and so are the modules that import inside functions
(``IMPORTS_INSIDE_FUNCTIONS``). docs/architecture.md names every module.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import gradcheck

ROOT = Path(gradcheck.__file__).parent

# Lowest first. A module belongs to the layer of the longest prefix that names it.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("foundation", ("gradcheck.errors", "gradcheck.defaults")),
    # the autodiff engine, in one folder (MyGrad's paths, gradcheck.tensor_base and the
    # like, are aliases of its modules: gradcheck.ENGINE_MODULES)
    ("engine", ("gradcheck.engine",)),
    # The finite differences and the result types know nothing of targets.
    (
        "checking: numerics",
        (
            "gradcheck.checking.numerical",
            "gradcheck.checking.levels",
            "gradcheck.checking.level_scores",
            "gradcheck.checking.forward_rounding",
            "gradcheck.checking.computed_in",
            "gradcheck.checking.probes",
            "gradcheck.checking.compare",
            "gradcheck.checking.longer_steps",
            # the verdict's thresholds and the tolerance object, which compute nothing
            "gradcheck.checking.thresholds",
            "gradcheck.checking.tolerance",
            "gradcheck.checking.result",
            "gradcheck.checking.vocabulary",
            # the text of a result, which str(result) gives: it reads results only
            "gradcheck.frontend.report",
        ),
    ),
    ("checking", ("gradcheck.checking",)),
    ("search", ("gradcheck.search", "gradcheck.strategies")),
    (
        "front ends",
        (
            "gradcheck.frontend",
            "gradcheck.testing",
            "gradcheck.builtin_targets",
            "gradcheck.schemas",
            "gradcheck.__main__",
            # the two entry points: the command and the pytest plugin
            "gradcheck.cli",
            "gradcheck.pytest_plugin",
            # old paths, aliases of modules of the layers (imported by name only)
            "gradcheck.adapters",
            "gradcheck.diagnostics",
        ),
    ),
]
# The package's __init__ is the facade: it names every layer's public names (lazily).
FACADE = "gradcheck"


def layer_of(module: str, layers: list[tuple[str, tuple[str, ...]]] | None = None) -> int | None:
    best, found = -1, None
    for rank, (_, prefixes) in enumerate(LAYERS if layers is None else layers):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, found = len(prefix), rank
    return found


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_module(name: str) -> bool:
    rel = Path(*name.split("."))
    return (ROOT.parent / rel).with_suffix(".py").is_file() or (
        ROOT.parent / rel / "__init__.py"
    ).is_file()


def facade_attribute(name: str) -> str:
    """The module ``gradcheck.<name>`` comes from."""
    if is_module(f"gradcheck.{name}"):
        return f"gradcheck.{name}"
    if name in gradcheck.ENGINE_MODULES:  # an old path of an engine module
        return f"gradcheck.engine.{name}"
    if name in gradcheck._EXPORTS:
        return gradcheck._EXPORTS[name]
    if not name.startswith("_") and name in gradcheck._ops_names():
        return "gradcheck.engine.ops"
    return FACADE  # __version__ and the like


def imported_modules(source: str, me: str, is_package: bool = False) -> list[tuple[int, str]]:
    """(line, module) for every gradcheck module that the source of module ``me``
    imports."""
    tree = ast.parse(source, me)
    package = me if is_package else me.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    facade_names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == FACADE or (alias.asname is None and "." in alias.name):
                    # `import gradcheck [as mg]`, `import gradcheck.x` bind the package
                    facade_names.add(alias.asname or FACADE)
                if alias.name != FACADE:
                    found.append((node.lineno, alias.name))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *filter(None, [base])])
            for alias in node.names:
                if base == FACADE:
                    found.append((node.lineno, facade_attribute(alias.name)))
                elif is_module(f"{base}.{alias.name}"):
                    found.append((node.lineno, f"{base}.{alias.name}"))
                else:
                    found.append((node.lineno, base))
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in facade_names
        ):
            found.append((node.lineno, facade_attribute(node.attr)))
    found = list(dict.fromkeys(found))
    return [(line, m) for line, m in found if m == FACADE or m.startswith(FACADE + ".")]


def modules() -> list[Path]:
    return sorted(p for p in ROOT.rglob("*.py") if "__pycache__" not in p.parts)


def upward_imports(
    layers: list[tuple[str, tuple[str, ...]]] | None = None, *, running_only: bool = False
) -> list[str]:
    """The imports that point up ``layers``; with ``running_only``, not counting the
    names imported for annotations alone (under ``if TYPE_CHECKING:``)."""
    layers = LAYERS if layers is None else layers
    wrong = []
    for path in modules():
        me = module_name(path)
        if me == FACADE:
            continue
        mine = layer_of(me, layers)
        source = path.read_text()
        if running_only:
            running = _every_import(ast.parse(source))
            source = ast.unparse(ast.Module(body=running, type_ignores=[]))  # type: ignore[arg-type]
        for line, target in imported_modules(source, me, path.name == "__init__.py"):
            theirs = layer_of(target, layers) if target != FACADE else None
            if theirs is not None and mine is not None and theirs > mine:
                wrong.append(
                    f"{path.relative_to(ROOT.parent)}:{line}: {me} ({layers[mine][0]}) "
                    f"imports {target} ({layers[theirs][0]})"
                )
    return wrong


def _run_at_import(body: list[ast.stmt]) -> list[ast.Import | ast.ImportFrom]:
    """The import statements that run when a module's body runs: not those inside
    functions, nor under ``if TYPE_CHECKING:`` (class bodies do run)."""
    found: list[ast.Import | ast.ImportFrom] = []
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        elif isinstance(node, ast.If):
            if "TYPE_CHECKING" not in ast.unparse(node.test):
                found += _run_at_import(node.body)
            found += _run_at_import(node.orelse)
        elif isinstance(node, (ast.Try, ast.With, ast.ClassDef)):
            for block in ("body", "orelse", "finalbody"):
                found += _run_at_import(getattr(node, block, []))
            for handler in getattr(node, "handlers", []):
                found += _run_at_import(handler.body)
    return found


def import_time_needs(source: str, me: str, is_package: bool) -> set[str]:
    """The gradcheck modules that importing module ``me`` (of ``source``) runs first:
    its module-level imports, each with the packages above it (``import gradcheck.a.b``
    runs ``gradcheck.a`` first), except ``me``'s own packages, which are running
    already when it is imported."""
    return _needs(source, me, is_package, lambda tree: _run_at_import(tree.body))


def _needs(source: str, me: str, is_package: bool, select) -> set[str]:
    """The gradcheck modules the import statements ``select(tree)`` of module ``me``
    run, each with the packages above it, but ``me``'s own packages."""
    tree = ast.parse(source, me)
    statements = "\n".join(ast.unparse(node) for node in select(tree))
    needs: set[str] = set()
    for _, target in imported_modules(statements, me, is_package):
        parts = target.split(".")
        for end in range(1, len(parts) + 1):
            module = ".".join(parts[:end])
            if not (me == module or me.startswith(module + ".")):
                needs.add(module)
    return needs


def _graph(needs) -> dict[str, set[str]]:
    return {
        module_name(path): needs(path.read_text(), module_name(path), path.name == "__init__.py")
        for path in modules()
    }


def import_time_graph() -> dict[str, set[str]]:
    return _graph(import_time_needs)


def import_cycles(graph: dict[str, set[str]]) -> list[str]:
    """Every cycle found depth first, as ``a -> b -> a`` from its smallest name."""
    cycles: set[str] = set()
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> None:
        if module in path:
            loop = path[path.index(module) :]
            start = loop.index(min(loop))
            loop = loop[start:] + loop[:start]
            cycles.add(" -> ".join([*loop, loop[0]]))
            return
        if module in done:
            return
        for needed in sorted(graph.get(module, ())):
            visit(needed, [*path, module])
        done.add(module)

    for module in sorted(graph):
        visit(module, [])
    return sorted(cycles)


def test_no_import_cycle():
    # A module that needs, to be imported, another that needs it back works only in
    # one import order (the engine had one: tensor_base imported the ops, which
    # import tensor_base, 17 modules). MyGrad's layout has none, nor has ours now: the
    # op rules (gradcheck.engine.ops._rules) import nothing above gradcheck.engine.operation,
    # tensor_base applies them, the documented functions above it call execute_op.
    assert import_cycles(import_time_graph()) == []


def _every_import(node: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement under ``node``, inside functions too, except those under
    ``if TYPE_CHECKING:`` (which never run)."""
    found: list[ast.Import | ast.ImportFrom] = []
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            found.append(child)
        elif isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
            for other in child.orelse:
                found += _every_import(other) if not isinstance(other, ast.Import) else [other]
        else:
            found += _every_import(child)
    return found


def every_import_needs(source: str, me: str, is_package: bool) -> set[str]:
    """The gradcheck modules that module ``me`` imports at some time, at import or
    inside a function, each with the packages above it (as :func:`import_time_needs`)."""
    return _needs(source, me, is_package, _every_import)


def every_import_graph() -> dict[str, set[str]]:
    return _graph(every_import_needs)


def test_no_import_cycle_counting_imports_inside_functions():
    # An import inside a function hides a cycle from the import-time test above, not
    # from the reader: the engine had one of 13 modules (graph, operation, tensor_base,
    # the view bookkeeping, interop, the ufunc creators, 7 rule modules), the checking
    # layer one of 3 (adapters, target, signature) and one of 2 (a result and its
    # text). Now the view bookkeeping builds no tensor (tensor_base builds them), the
    # op families register their NumPy overrides (gradcheck.engine._utils.overrides, below
    # tensor_base), and target resolution is one module above adapters and target.
    cycles = import_cycles(every_import_graph())
    assert cycles == [], "import cycles, counting imports inside functions:\n" + "\n".join(cycles)


def test_the_full_graph_sees_imports_inside_functions_but_not_type_checking():
    source = (
        "from typing import TYPE_CHECKING\n"
        "from gradcheck.engine.graph import Node\n"
        "if TYPE_CHECKING:\n"
        "    from gradcheck.checking.checker import check\n"
        "class A:\n"
        "    def f(self):\n"
        "        if True:\n"
        "            from gradcheck.engine.ops._rules.shape import Reshape\n"
    )
    assert every_import_needs(source, "gradcheck.engine._utils.views", False) == {
        "gradcheck.engine.graph",
        "gradcheck.engine.ops",
        "gradcheck.engine.ops._rules",
        "gradcheck.engine.ops._rules.shape",
    }
    graph = {
        "gradcheck.engine.graph": every_import_needs(
            "def f():\n    from gradcheck.engine.tensor_base import Tensor\n",
            "gradcheck.engine.graph",
            False,
        ),
        "gradcheck.engine.tensor_base": {"gradcheck.engine.graph"},
    }
    assert import_cycles(graph) == [
        "gradcheck.engine.graph -> gradcheck.engine.tensor_base -> gradcheck.engine.graph"
    ]


# The engine's own layers, lowest first (docs/architecture.md, "inside it, from the
# bottom"): a module may import its own sub-layer and those below, never one above.
ENGINE_LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "memory guarding, NumPy's names",
        (
            "gradcheck.engine",  # (the folder's package, which imports nothing)
            "gradcheck.engine._utils",  # (the package, and lock_management)
            "gradcheck.engine._utils.lock_management",
            "gradcheck.engine._dtype_mirrors",
            "gradcheck.engine.constants",
            "gradcheck.engine.no_grad_funcs",
            "gradcheck.engine.typing",
        ),
    ),
    ("graph", ("gradcheck.engine.graph", "gradcheck.engine._utils.graph_tracking")),
    ("operation", ("gradcheck.engine.operation",)),
    ("rules", ("gradcheck.engine.ops._rules",)),
    # what tensor_base keeps its books in, building no tensor: the view relations and
    # the NumPy dispatch tables (which the op families fill)
    ("the tensor's books", ("gradcheck.engine._utils.views", "gradcheck.engine._utils.overrides")),
    # the parts of Tensor below the module that defines it: the per-op forward path
    # (handed the class by tensor_base), the writes to tensors and views, the operators
    # and the methods that apply rules (TensorMethods, a base of Tensor)
    ("execution", ("gradcheck.engine.execution",)),
    ("the tensor's writes", ("gradcheck.engine.tensor_writes",)),
    ("the tensor's methods", ("gradcheck.engine.tensor_methods",)),
    ("tensor_base", ("gradcheck.engine.tensor_base",)),
    ("ufuncs", ("gradcheck.engine.ufuncs",)),
    ("functions", ("gradcheck.engine.ops", "gradcheck.engine.interop")),
    (
        "above the functions",
        (
            "gradcheck.engine.nnet",
            "gradcheck.engine.linalg",
            "gradcheck.engine.random",
            "gradcheck.engine._io",
        ),
    ),
]


def test_every_engine_module_has_a_sublayer():
    engine = [module_name(p) for p in modules() if layer_of(module_name(p)) == 1]
    assert [m for m in engine if layer_of(m, ENGINE_LAYERS) is None] == []


def test_engine_imports_point_down_its_sublayers():
    # e.g. graph imported tensor_base (for isinstance) and the view bookkeeping (which
    # imports graph); tensor_base imported interop, which imports tensor_base. (A name
    # imported for annotations alone, under TYPE_CHECKING, may name a type above: the
    # rules annotate their inputs as tensors.)
    assert upward_imports(ENGINE_LAYERS, running_only=True) == []


# Modules that import gradcheck modules inside functions, and why. Such an import
# must still point down the layers and make no cycle (the tests above); this list
# makes a new one say why it is not at the top of its module.
IMPORTS_INSIDE_FUNCTIONS = {
    # `gradcheck --help` and every command's start import no NumPy, Hypothesis or
    # engine: each command imports what it runs
    "gradcheck.cli": "import time of the command",
    # the options of `gradcheck verify`, built when the command is defined: their values'
    # checks import NumPy when an option is given
    "gradcheck.frontend.options": "import time of the command",
    # pytest imports the plugin in every test run of everyone who installed gradcheck
    "gradcheck.pytest_plugin": "import time of every pytest run",
    # the coordinator process of a run imports no engine; its workers do
    "gradcheck.frontend.runner": "import time of the command (the coordinator)",
    # the runner's parts, which the coordinator imports too
    "gradcheck.frontend.jobs": "import time of the command (the coordinator)",
    "gradcheck.frontend.unfinished": "import time of the command (the coordinator)",
    "gradcheck.frontend.worker": "import time of the command (the coordinator)",
    # the early zygote: forked before the command imports anything of its own, it
    # imports what a zygote needs once forked (the command never does)
    "gradcheck.frontend.early": "import time of the command (the early zygote)",
    "gradcheck.__main__": "import time of the command (the early zygote forked first)",
    # the command's parts (gradcheck.cli's reason)
    "gradcheck.frontend.outputs": "import time of the command",
    "gradcheck.frontend.plan": "import time of the command (loading targets)",
    "gradcheck.frontend.verify_run": "import time of the command",
    "gradcheck.frontend.baseline": "import time of the command",
    "gradcheck.frontend.ci_report": "import time of the command",
    "gradcheck.frontend.config": "import time of the command (Hypothesis for one key)",
    "gradcheck.frontend.discovery": "import time of the command (listing targets)",
    "gradcheck.frontend.formats": "import time of the command (--format's table)",
    "gradcheck.frontend.html_report": "import time of the command (--html only)",
    "gradcheck.frontend.loading": "import time of the command (loading targets)",
    "gradcheck.frontend.render": "import time of the command (a result's text)",
    # verify's search imports the checker and Hypothesis's strategies when it runs,
    # so that `import gradcheck.search.verifier` (VerifyResult, DEFAULTS) stays light
    "gradcheck.search.example_check": "import time of the coordinator and the plugin",
    "gradcheck.search.examples": "import time of the coordinator and the plugin",
    "gradcheck.search.reporting": "import time of the coordinator and the plugin",
    "gradcheck.search.results": "import time of the coordinator and the plugin",
    "gradcheck.search.description": "import time of @describe in users' modules",
    "gradcheck.search.validators": "import time of @describe in users' modules",
    "gradcheck.search.domain": "import time of @describe in users' modules",
    "gradcheck.checking.diagnostics": "import time of `gradcheck plot` (matplotlib)",
    # torch.func's vmap, for the batched check of an order-1 torch target only
    "gradcheck.checking.adapters._torch": "an optional framework's part (torch.func)",
    # the command reads the table of frameworks when it has targets to preload
    "gradcheck.frontend.preload": "import time of the command",
    "gradcheck.testing.suite": "import time of the mutation suite's listing",
}


def inside_functions() -> dict[str, list[str]]:
    """Module -> the gradcheck modules it imports inside functions only."""
    found: dict[str, list[str]] = {}
    for path in modules():
        me = module_name(path)
        tree = ast.parse(path.read_text())
        at_import = set(map(id, _run_at_import(tree.body)))
        later = [n for n in _every_import(tree) if id(n) not in at_import]
        names = ast.unparse(ast.Module(body=later, type_ignores=[]))  # type: ignore[arg-type]
        targets = [t for _, t in imported_modules(names, me, path.name == "__init__.py")]
        if targets:
            found[me] = sorted(set(targets))
    return found


def test_imports_inside_functions_say_why():
    found = inside_functions()
    assert sorted(m for m in found if m not in IMPORTS_INSIDE_FUNCTIONS) == []
    # and the list holds no module that no longer needs its place in it
    assert sorted(m for m in IMPORTS_INSIDE_FUNCTIONS if m not in found) == []
    # the engine and the checker's core import at the top of the module: their
    # imports inside functions were the hidden cycle
    engine = {m for m in found if layer_of(m) in (1, 2)}
    assert engine == set()


# Modules loaded by name (``importlib.import_module``), which the import reader cannot
# follow: each call, as (module, its argument), and why.
LOADED_BY_NAME = {
    # the facade: every public name loads its module on first use (PEP 562)
    ("gradcheck", "'gradcheck.engine.ops'"): "the facade's names of the ops",
    ("gradcheck", "_EXPORTS[name]"): "the facade's public names",
    ("gradcheck", "f'gradcheck.{name}'"): "the facade's subpackages",
    ("gradcheck", "f'{_ENGINE}.{name}'"): "the engine's modules, by their old paths",
    # MyGrad's paths of the engine's modules (gradcheck.tensor_base...), each the module
    # of gradcheck.engine it names (the alias finder of the facade)
    ("gradcheck", "spec.loader_state"): "an old path of an engine module",
    # the op families load on first use of a name of gradcheck.engine.ops (they import
    # tensor_base, whose rules are imported through this package)
    ("gradcheck.engine.ops", "f'{__name__}.{name}'"): "the op families, on first use",
    # the graphs' and indices' strategies load on first use (a search needs neither)
    ("gradcheck.strategies", "f'gradcheck.strategies.{module}'"): "the strategies, on first use",
    # the one reach up of the engine: a NumPy function called on a tensor loads the
    # families that registered no override yet (a program may import tensor_base alone)
    ("gradcheck.engine._utils.overrides", "FAMILIES_PACKAGE"): "the op families' NumPy overrides",
    # old paths, each the module it names now
    ("gradcheck.adapters", "'gradcheck.checking.adapters'"): "old path",
    ("gradcheck.diagnostics", "'gradcheck.checking.diagnostics'"): "old path",
    ("gradcheck.checking.adapters", "_MOVED[name]"): "old path of bridge_target",
    ("gradcheck.checking.target", "_MOVED[name]"): "old path of resolve_target",
    # optional frameworks: a framework's adapter module, and the framework itself
    ("gradcheck.checking.frameworks", "self.adapter"): "a framework's adapter (the table)",
    # the frameworks a run's targets import, imported early (frontend.preload)
    ("gradcheck.frontend.worker", "name"): "optional frameworks, preloaded",
    ("gradcheck.checking.adapters", "module"): "an optional framework (require)",
    # the user's modules, named on the command line or in the settings
    ("gradcheck.frontend.loading", "module"): "the user's targets",
    ("gradcheck.checking.reference", "module_name"): "the user's reference function",
    ("gradcheck.checking.outside", "module"): "the user's modules named in settings",
}


def loaded_by_name() -> set[tuple[str, str]]:
    found = set()
    for path in modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "import_module"
                and node.args
            ):
                found.add((module_name(path), ast.unparse(node.args[0])))
    return found


def test_modules_loaded_by_name_are_listed_with_why():
    assert loaded_by_name() == set(LOADED_BY_NAME)


def named_in(doc: str) -> set[str]:
    """The module paths (relative to ``gradcheck/``) that ``doc`` names in backticks:
    ``checking/target.py`` (or ``gradcheck/checking/target.py``), with
    ``ops/{shape,tiling}.py`` for several; a package is named by its folder
    (``ops/``) or its ``__init__.py``."""
    found: set[str] = set()
    for span in re.findall(r"`([^`]+)`", doc):
        for word in span.split():
            word = word.removeprefix("gradcheck/").rstrip(",;:")
            brace = re.fullmatch(r"([\w/]*)\{([\w,]+)\}([\w/.]*)", word)
            names = (
                [brace[1] + part + brace[3] for part in brace[2].split(",")] if brace else [word]
            )
            for name in names:
                if name.endswith("/"):
                    found.add(name + "__init__.py")
                elif name.endswith(".py"):
                    found.add(name)
    return found


def test_architecture_md_names_every_module():
    doc = (ROOT.parent / "docs" / "architecture.md").read_text()
    every = {p.relative_to(ROOT).as_posix() for p in modules()}
    assert sorted(every - named_in(doc) - {"__init__.py"}) == []


def test_the_doc_reader_expands_braces_and_folders():
    doc = "see `gradcheck/ops/{shape,tiling}.py` and `frontend/` then `cli.py`, not cli.py"
    assert named_in(doc) == {"ops/shape.py", "ops/tiling.py", "frontend/__init__.py", "cli.py"}


def test_the_cycle_finder_sees_packages_and_skips_functions_and_type_checking():
    # the shape of the old engine: rules imported from inside the package of the
    # functions, whose __init__ imports the functions
    sources = {
        "gradcheck.engine.ops": "from gradcheck.engine.ops import arithmetic\n",
        "gradcheck.engine.ops.arithmetic": "from gradcheck.engine.tensor_base import execute_op\n",
        "gradcheck.engine.tensor_base": (
            "from typing import TYPE_CHECKING\n"
            "from gradcheck.engine.ops._rules.arithmetic import Add\n"
            "if TYPE_CHECKING:\n"
            "    from gradcheck.checking.checker import check\n"
            "def later():\n"
            "    from gradcheck import interop\n"
        ),
        "gradcheck.engine.ops._rules.arithmetic": (
            "from gradcheck.engine.operation import Operation\n"
        ),
        "gradcheck.engine.interop": "from gradcheck.engine.tensor_base import Tensor\n",
        "gradcheck.checking.checker": "from gradcheck.engine.tensor_base import Tensor\n",
    }
    graph = {
        me: import_time_needs(src, me, me == "gradcheck.engine.ops") for me, src in sources.items()
    }
    assert import_cycles(graph) == [
        "gradcheck.engine.ops -> gradcheck.engine.ops.arithmetic"
        " -> gradcheck.engine.tensor_base -> gradcheck.engine.ops"
    ]


def test_every_module_has_a_layer():
    assert [module_name(p) for p in modules() if layer_of(module_name(p)) is None] == [FACADE]


def test_imports_point_down_only():
    assert upward_imports() == []


def test_the_package_imports_the_engine_by_its_own_paths():
    # gradcheck.tensor_base and the like are MyGrad's paths, kept for users (aliases of
    # gradcheck.engine's modules); the package itself imports the real ones
    old = []
    for path in modules():
        me = module_name(path)
        for node in _every_import(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            old += [f"{me}:{node.lineno}: {n}" for n in names if gradcheck.engine_path(n)]
        # and no module name in a string (sys.modules.get("gradcheck.graph") finds
        # nothing where the engine was imported by its own paths)
        tree = ast.parse(path.read_text())
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef)
            and node.body
            and isinstance(node.body[0], ast.Expr)
        }
        old += [
            f"{me}:{node.lineno}: {node.value!r}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
            and re.fullmatch(r"gradcheck(\.\w+)+", node.value)
            and gradcheck.engine_path(node.value)
        ]
    assert old == []


def test_the_reader_sees_imports_inside_functions_relative_and_through_the_facade():
    source = (
        "import gradcheck as mg\n"
        "from . import compare\n"
        "def f():\n"
        "    from gradcheck.frontend.loading import load_targets\n"
        "    return mg.verify, mg.add, mg.__version__\n"
    )
    found = {m for _, m in imported_modules(source, "gradcheck.checking.example")}
    assert found == {
        "gradcheck.checking.compare",
        "gradcheck.frontend.loading",
        gradcheck._EXPORTS["verify"],
        "gradcheck.engine.ops",
        FACADE,
    }


def test_every_exception_class_is_defined_in_errors():
    import importlib
    import pkgutil

    import gradcheck.errors as errors

    elsewhere = []
    for info in pkgutil.walk_packages(gradcheck.__path__, "gradcheck."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (
                isinstance(value, type)
                and issubclass(value, BaseException)
                and value.__module__ == module.__name__
                and module is not errors
                and not name.startswith("_")  # a private signal that never leaves its module
            ):
                elsewhere.append(f"{module.__name__}.{name}")
    assert elsewhere == []
    for name in errors.__all__:
        cls = getattr(errors, name)
        if issubclass(cls, errors.GradcheckError):
            assert "exit_code" in vars(cls), f"{name} does not say its exit code"


# Where the exceptions were defined before gradcheck.errors held them all.
OLD_HOMES = {
    "gradcheck.checking.target": ("NotATarget", "TargetRaised"),
    "gradcheck.checking.numerical": ("ComplexStepUnsupported",),
    "gradcheck.checking.checker": ("CheckUsageError",),
    "gradcheck.checking.adapters": ("MissingExtra",),
    "gradcheck.adapters": ("MissingExtra",),
    "gradcheck.frontend.config": ("ConfigError",),
    "gradcheck.frontend.baseline": ("BaselineError",),
    "gradcheck.frontend.runner": ("RemoteError",),
    "gradcheck.pytest_plugin": ("GradcheckFailure",),
}


def test_exceptions_are_still_importable_where_they_were_defined():
    import importlib

    import gradcheck.errors as errors

    for module, names in OLD_HOMES.items():
        for name in names:
            assert getattr(importlib.import_module(module), name) is getattr(errors, name)
    assert issubclass(errors.ComplexStepUnsupported, errors.GradcheckError)
    assert issubclass(errors.ComplexStepUnsupported, ValueError)  # as before


def test_verdicts_kinds_and_modes_are_spelled_only_in_the_vocabulary():
    # String literals in code (docstrings and messages aside) equal to one of the
    # words: each must be a name from gradcheck.checking.vocabulary instead.
    from gradcheck.checking import vocabulary as v

    words = {*v.FAILURE_KINDS, *v.MODES, v.Verdict.FAILED, v.Verdict.NOT_DIFFERENTIABLE}
    words |= {v.Verdict.INCONCLUSIVE, v.Verdict.TIMED_OUT, v.Verdict.NOT_RUN, *v.RUN_FAILURE_KINDS}
    # "passed" is also a JSON field name, "full" an op (gradcheck.full).
    # The same words in other vocabularies: --color auto, a pytest report's outcome.
    elsewhere = {("gradcheck.frontend.progress", "auto"), ("gradcheck.pytest_plugin", "failed")}
    spelled = []
    for path in modules():
        me = module_name(path)
        if me == "gradcheck.checking.vocabulary" or me.startswith("gradcheck.engine.ops"):
            continue
        tree = ast.parse(path.read_text())
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef)
            and node.body
            and isinstance(node.body[0], ast.Expr)
        }
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and node.value in words
                and id(node) not in docstrings
                and (me, node.value) not in elsewhere
            ):
                spelled.append(f"{path.relative_to(ROOT.parent)}:{node.lineno}: {node.value!r}")
    assert spelled == []
