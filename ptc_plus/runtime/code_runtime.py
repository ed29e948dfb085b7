"""The runtime service: runs programs, tracks live runs, refuses work after shutdown.

One :class:`CodeRuntime` per plugin instance. :meth:`CodeRuntime.aclose`
(plugin unload / host shutdown) aborts live runs, awaits them, discards the
warm spare, and makes every later :meth:`CodeRuntime.run` raise
:class:`~ptc_plus.runtime.errors.RuntimeClosed`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from ptc_plus.runtime.discovery import DiscoverySource
from ptc_plus.runtime.errors import DiscoveryUnavailable, RuntimeClosed
from ptc_plus.runtime.kernel.cells import KernelCell, KernelRuntime, Recovery
from ptc_plus.runtime.lane import Lane
from ptc_plus.runtime.launcher import Launcher
from ptc_plus.runtime.ledger import OutputObserver
from ptc_plus.runtime.outcome import RunOutcome
from ptc_plus.runtime.protected import protected_paths
from ptc_plus.runtime.repositories import Census, census, sweep
from ptc_plus.runtime.run import ProgramRun, RunRequest
from ptc_plus.runtime.run_limits import ResolvedTimeout, RunLimits
from ptc_plus.sandbox_policy import SandboxPolicy


class CodeRuntime:
    """Runs programs under ``limits``.

    ``owner_paths`` are where the runtime's owner keeps its own state in every
    workspace (the plugin hands in its ``.ptc-plus``): relative to the
    workspace, protected like the host's ``protected_paths`` on every run. The
    runtime knows no config of its own (ADR 0057).

    ``observer`` sees every run's output as it arrives, exactly the text the
    outcome's logs will hold (``ptc-plus exec`` streams it to a terminal,
    ADR 0064); what a run returns is the same with or without one.
    """

    def __init__(
        self,
        limits: RunLimits | None = None,
        *,
        owner_paths: Sequence[str] = (),
        observer: OutputObserver | None = None,
    ) -> None:
        self.limits = limits or RunLimits()
        self.owner_paths = tuple(owner_paths)
        self.observer = observer
        self._launcher = Launcher(self.limits)
        self._kernels = KernelRuntime(self._launcher)
        self._recoveries: dict[str, Recovery] = {}
        self._live: dict[asyncio.Event, asyncio.Future[None]] = {}
        self._closed = False
        self._protected: dict[Path, tuple[Path, ...]] = {}

    async def run(
        self,
        code: str,
        *,
        workspace: Path,
        timeout: ResolvedTimeout | None = None,
        tool_names: tuple[str, ...] = (),
        off_names: tuple[str, ...] = (),
        lane: Lane | None = None,
        cancelled: asyncio.Event | None = None,
        discovery: DiscoverySource | None = None,
        protected: Sequence[Path] = (),
        kernel: KernelCell | None = None,
    ) -> RunOutcome:
        """Run ``code``; a program's failure is in the outcome, never raised.

        ``discovery`` is what the program's ``capabilities.*`` answer from (see
        :mod:`ptc_plus.runtime.discovery`); ``None``: discovery is unavailable.
        Under a confined policy each of the owner's paths and each of ``protected``
        inside the workspace (the host's ``protected_paths``) are read-only to the
        program; under ``workspace-write`` missing ones are created as empty
        directories first (ADR 0040). Repositories found anywhere in the workspace
        are read-only too, and under ``workspace-write`` any repository the
        program planted is disarmed when the run has settled (ADR 0088).

        :raises RuntimeClosed: after :meth:`aclose`.
        :raises ValueError: ``workspace`` is not an absolute directory.
        """
        if self._closed:
            raise RuntimeClosed()
        workspace = Path(workspace)
        if not workspace.is_absolute() or not workspace.is_dir():
            raise ValueError(f"workspace must be an absolute directory: {workspace}")
        workspace = workspace.resolve()
        before: Census | None = None
        if self.limits.policy.confined:
            create = self.limits.policy is SandboxPolicy.WORKSPACE_WRITE
            if create:  # a read-only program can change no repository: the whole workspace is bound read-only
                before = await asyncio.to_thread(census, workspace)
            self._protected[workspace] = protected_paths(
                workspace,
                [*self.owner_paths, *protected],
                create=create,
                repositories=before.paths if before is not None else (),
            )
        abort = asyncio.Event()
        finished: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._live[abort] = finished
        watcher = asyncio.ensure_future(_forward(cancelled, abort)) if cancelled is not None else None
        try:
            request = RunRequest(
                code=code,
                workspace=workspace,
                tool_names=tool_names,
                off_names=off_names,
                timeout=timeout or ResolvedTimeout(seconds=self.limits.timeout_s),
                protected=self._protected.get(workspace, ()),
                discovery=DiscoveryUnavailable() if discovery is None else discovery,
                observer=self.observer,
            )
            if kernel is None:
                return await ProgramRun(request, self._launcher, lane, abort).execute()
            outcome, recovery = await self._kernels.run_cell(request, lane, abort, kernel)
            self._recoveries[kernel.session] = recovery
            return outcome
        finally:
            if watcher is not None:
                watcher.cancel()
            try:
                if before is not None:
                    # The run has settled: its processes are gone (a kernel's stays: ADR 0088 says what that leaves).
                    await asyncio.to_thread(sweep, workspace, before)
            finally:
                del self._live[abort]
                finished.set_result(None)
                if not self._closed:
                    self._launcher.prepare_spare(workspace, self._protected.get(workspace, ()))

    def recovery(self, session: str) -> Recovery | None:
        """What the last cell of kernel ``session`` needed before it ran (``None``: no cell ran yet)."""
        return self._recoveries.get(session)

    def kernel_pid(self, session: str) -> int | None:
        """The process id of kernel ``session``'s worker while it waits for the next cell (``None``: no live
        kernel). For operators and tests: killing it loses nothing, the next cell recovers from the journal."""
        return self._kernels.pool.pid(session)

    def prewarm(self, workspace: Path) -> None:
        """Start a spare child for runs in ``workspace`` now (call from a running loop)."""
        if not self._closed:
            resolved = Path(workspace).resolve()
            self._launcher.prepare_spare(resolved, self._protected.get(resolved, ()))

    def close_nowait(self) -> None:
        """For synchronous shutdown hooks: refuse new runs, abort live ones (they settle on their own
        shortly after) and kill the spare. Prefer :meth:`aclose` where the caller can await."""
        self._closed = True
        for abort in list(self._live):
            abort.set()
        self._launcher.kill_spare()
        self._kernels.kill_now()

    async def aclose(self) -> None:
        """Abort and await live runs, drop the spare, refuse new runs. Idempotent."""
        self._closed = True
        for abort in list(self._live):
            abort.set()
        if self._live:
            await asyncio.gather(*self._live.values())
        await self._kernels.aclose()
        await self._launcher.aclose()


async def _forward(source: asyncio.Event, target: asyncio.Event) -> None:
    await source.wait()
    target.set()
