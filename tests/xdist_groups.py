"""`pytest -n N --dist loadgroup` that works with pytest 9: a group of tests is one unit of work for one worker.

pytest-xdist 3.8 tells its scheduler a test's group by appending `@group` to the test's node id
(``item._nodeid``); pytest 9 computes node ids from another attribute, so the suffix never appears and every
test is scheduled alone. Here the workers write each test's group (its ``xdist_group`` mark) to a file when
they have collected, and the controller's scheduler, given the node ids only, reads it back:

  controller, pytest_configure: a folder for the files, named in $LIS_TEST_GROUPS_DIR (the workers inherit it)
  each worker, pytest_collection_modifyitems: <folder>/<worker id>.json = {node id: group}
  controller, scheduling: GroupScheduling, xdist's load-scope scheduling with the group as the scope

Units go to the workers largest first (by number of tests), except ``first``: that group starts first, so that
the longest unit of work (the tests that train) is not left for the end; and ``last``, which waits for
something ``first`` builds.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from xdist.scheduler.loadscope import LoadScopeScheduling

GROUPS_ENV = "LIS_TEST_GROUPS_DIR"


def controller_setup() -> None:
    """On the controller, before the workers start: the folder the workers write their groups into."""
    if not os.environ.get(GROUPS_ENV):
        os.environ[GROUPS_ENV] = tempfile.mkdtemp(prefix="lis-test-groups-")


def controller_teardown() -> None:
    """On the controller, at the end: the folder removed."""
    folder = os.environ.pop(GROUPS_ENV, None)
    if folder:
        shutil.rmtree(folder, ignore_errors=True)


def record(worker_id: str, items) -> None:
    """On a worker, once it has collected: each test's group (its last xdist_group mark), by node id."""
    folder = os.environ.get(GROUPS_ENV)
    if not folder:
        return
    groups = {}
    for item in items:
        mark = item.get_closest_marker("xdist_group")
        if mark is not None:
            groups[item.nodeid] = str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
    path = Path(folder) / f"{worker_id}.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(groups))
    tmp.replace(path)


class GroupScheduling(LoadScopeScheduling):
    """Load-scope scheduling whose scope is the test's group (a test without one is its own unit)."""

    first: str | None = None
    last: str | None = None

    def __init__(self, config, log=None):
        super().__init__(config, log)
        self._groups: dict[str, str] | None = None

    def _group_of(self) -> dict[str, str]:
        if self._groups is None:
            folder = Path(os.environ[GROUPS_ENV])
            files = sorted(folder.glob("*.json"))
            if not files:
                raise RuntimeError(f"no worker wrote its test groups into {folder}")
            self._groups = json.loads(files[0].read_text())
        return self._groups

    def _split_scope(self, nodeid: str) -> str:
        return self._group_of().get(nodeid, nodeid)

    def schedule(self) -> None:
        """xdist's LoadScopeScheduling.schedule with one change: the order of the units (``first``, then the
        largest first)."""
        assert self.collection_is_completed
        if self.collection is not None:  # the initial distribution happened: reschedule every node
            for node in self.nodes:
                self._reschedule(node)
            return
        if not self._check_nodes_have_same_collection():
            self.log("**Different tests collected, aborting run**")
            return
        self.collection = list(next(iter(self.registered_collections.values())))
        if not self.collection:
            return
        units: dict[str, dict[str, bool]] = {}
        for nodeid in self.collection:
            units.setdefault(self._split_scope(nodeid), {})[nodeid] = False
        for scope, nodeids in sorted(units.items(), key=lambda kv: (kv[0] != self.first, kv[0] == self.last, -len(kv[1]))):
            self.workqueue[scope] = nodeids
        for _ in range(len(self.nodes) - len(self.workqueue)):  # more workers than units
            unused, _assigned = self.assigned_work.popitem()
            unused.shutdown()
        for node in self.nodes:
            self._assign_work_unit(node)
        for node in self.nodes:
            self._reschedule(node)
        if not self.workqueue:
            for node in self.nodes:
                node.shutdown()
