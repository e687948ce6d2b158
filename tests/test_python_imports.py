"""What a task's test imports from outside its project: the warm worker's preload candidates."""

from __future__ import annotations

from pathlib import Path

from codereval.runners.python_imports import ImportClosure, puts_root_first, shadowing_names


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    files = {
        "app/__init__.py": "",
        "app/core.py": "import json\nfrom app import helpers\nfrom .models import Thing\n",
        "app/helpers.py": "import email.mime.text\nfrom oslo_config import cfg\n"
                          "from typing import Any, cast\n",
        "app/models.py": "from . import store\nimport xml.etree.ElementTree as ET\n",
        "app/store.py": "import typing\nif typing.TYPE_CHECKING:\n    import decimal\nelse:\n"
                        "    import fractions\ntry:\n    import ujson\nexcept ImportError:\n"
                        "    ujson = None\nclass Store:\n    import shelve\n"
                        "    def load(self):\n        import sqlite3\n        return sqlite3\n",
        "app/unused.py": "import tkinter\n",
        "app/broken.py": "def (:\n",
        "tools/script.py": "import sibling\nimport argparse\n",
        "tools/sibling.py": "import csv\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_the_closure_follows_the_projects_own_modules_and_lists_only_the_rest(
    tmp_path: Path,
) -> None:
    project = _project(tmp_path)
    closure = ImportClosure(project)
    closure.add_file(project / "app" / "core.py")
    modules = closure.modules()
    # Reached through helpers, models (relative import) and store; what runs when a module is
    # imported: module level, if/else and try blocks, class bodies.
    assert set(modules) == {"json", "email.mime.text", "oslo_config", "oslo_config.cfg",
                            "typing", "typing.cast", "xml.etree.ElementTree", "fractions",
                            "ujson", "shelve"}
    # Never the project's own modules, nor what no reached file imports, nor what only runs
    # when a function is called or never runs (TYPE_CHECKING).
    assert "app" not in modules and "tkinter" not in modules
    assert "sqlite3" not in modules and "decimal" not in modules
    # ``from typing import Any`` names a class, not a module (modules are lower case).
    assert "typing.Any" not in modules


def test_a_test_kept_outside_the_project_is_read_where_it_runs(tmp_path: Path) -> None:
    """CoderEval's official test modules live in the tests tree and run at a path inside the
    project: their relative and sibling imports resolve there."""
    project = _project(tmp_path)
    elsewhere = tmp_path / "tests" / "core_passk_validte.py"
    elsewhere.parent.mkdir()
    elsewhere.write_text("from .models import Thing\nimport core\nimport pytz\n")
    closure = ImportClosure(project)
    closure.add_file(elsewhere, rel="app/core_passk_validte.py")
    assert set(closure.modules()) == {"pytz", "xml.etree.ElementTree", "json", "fractions",
                                      "ujson", "shelve", "email.mime.text", "oslo_config",
                                      "oslo_config.cfg", "typing", "typing.cast"}


def test_scripts_import_their_siblings_and_bad_files_are_skipped(tmp_path: Path) -> None:
    project = _project(tmp_path)
    closure = ImportClosure(project)
    closure.add_file(project / "tools" / "script.py")
    closure.add_file(project / "app" / "broken.py")
    closure.add_file(project / "missing.py")
    assert closure.modules() == ["argparse", "csv"]


def test_a_file_on_its_own_lists_every_import(tmp_path: Path) -> None:
    alone = tmp_path / "standalone.py"
    alone.write_text("import re\nfrom . import nothing\nfrom requests import adapters\n")
    closure = ImportClosure(None)
    closure.add_file(alone)
    assert closure.modules() == ["re", "requests", "requests.adapters"]


def test_names_a_folder_holds_shadow_modules_of_that_name(tmp_path: Path) -> None:
    project = _project(tmp_path)
    (project / "tools" / "django.py").write_text("")
    (project / "tools" / "notes.txt").write_text("")
    assert shadowing_names([project / "tools", project]) == {
        "script", "sibling", "django", "app", "tools"}


def _graph(tmp_path: Path) -> Path:
    """A project where the sample goes into ``shop/cart.py`` and the test is
    ``shop/cart_test.py``: modules that reach the cart in each way there is, and some that
    do not."""
    root = tmp_path / "graph"
    files = {
        "shop/__init__.py": "",
        "shop/cart.py": "from shop import prices\n",
        "shop/cart_test.py": "from shop import cart, report, lazy, dynamic\nimport billing.tax\n",
        "shop/prices.py": "import decimal\n",  # clean: only the stdlib
        "shop/report.py": "from shop.cart import total\n",  # imports the cart: never
        "shop/deep.py": "from shop import report\n",  # through another: never
        "shop/lazy.py": "def f():\n    from shop import cart\n    return cart\n",  # lazily: fine
        "shop/dynamic.py": "import importlib\ncart = importlib.import_module('shop.cart')\n",
        "billing/__init__.py": "from shop.cart import total\n",  # a package __init__: never
        "billing/tax.py": "RATE = 2\n",  # its package imports the cart: never
        "audit/__init__.py": "",
        "audit/log.py": "from audit import sink\n",
        "audit/sink.py": "from audit import log\n",  # a cycle, clean
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_the_projects_modules_that_cannot_reach_what_samples_change_are_named(
    tmp_path: Path,
) -> None:
    project = _graph(tmp_path)
    closure = ImportClosure(project)
    closure.add_file(project / "shop" / "cart_test.py")
    closure.add_file(project / "audit" / "log.py")
    own, banned = closure.own_modules([project / "shop" / "cart.py",
                                       project / "shop" / "cart_test.py"])
    assert banned == ["shop.cart", "shop.cart_test"]
    # Packages first; the lazy importer and the dynamic one are the probe's to judge (the
    # graph cannot see importlib); the cycle is followed once.
    assert set(own[:2]) == {"shop", "audit"}
    assert set(own) == {"shop", "audit", "shop.prices", "shop.lazy", "shop.dynamic",
                        "audit.log", "audit.sink"}
    for never in ("shop.cart", "shop.report", "shop.deep", "billing", "billing.tax"):
        assert never not in own


def test_a_test_that_puts_the_projects_root_on_the_path_first_is_told_apart() -> None:
    """Only then does a fresh interpreter import the project's modules from that root, as a
    worker that preloaded them from there has them."""
    root = "/home/travis/builds/repos/acme---shop"
    first = f'import sys\nsys.path.append("{root}/")\nfrom shop import cart\n'
    inserted = f'import os, sys\nsys.path.insert(0, "{root}")\nimport shop.cart\n'
    late = f'import sys\nfrom shop import cart\nsys.path.append("{root}")\n'
    elsewhere = 'import sys\nsys.path.append("..")\nfrom shop import cart\n'
    assert puts_root_first(first, root, {"shop"}) and puts_root_first(inserted, root, {"shop"})
    assert not puts_root_first(late, root, {"shop"})
    assert not puts_root_first(elsewhere, root, {"shop"})
    assert not puts_root_first("def (:", root, {"shop"})
