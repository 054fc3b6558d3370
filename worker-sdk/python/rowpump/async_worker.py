"""The asyncio worker: ``async def`` handlers on ``redis.asyncio``, ``concurrency`` of them
at once, each task taken one at a time (BLMOVE) and reported with the complete script.

It follows the same protocol as ``Worker``: the heartbeat, waiting for the queue, checking
success values, setting malformed messages aside, giving back tasks after a lost fetch reply
and after a failover. Past a task's deadline its coroutine is cancelled."""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from typing import Any, Awaitable, Callable, List, Optional, Set

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from .details.async_route import AsyncRoute
from .details import incarnation
from .details.backoff import Backoff
from .details.deadline import task_deadline_ms
from .details.held_tasks import ORPHAN_AGE
from .details.membership import QUEUE_POLL, is_outage, queue_announced, unknown_queue
from .details.options import validated
from .details.reporter import refused_text, tasks_text
from .details.worker_log import LogSink, WorkerLog, log_text
from .errors import ConnectionError, Error
from .outcome import Outcome, retry
from .protocol import scripts
from .protocol.duration import Seconds, to_millis
from .protocol.keys import Keys
from .protocol.messages import MalformedMessage, format_done, parse_ready, ready_message
from .protocol.outcome_check import DeclaredValues, checked_done_message
from .protocol.worker_info import format_worker_info
from .redis_address import RedisAddress, as_address
from .signals import STOP_SIGNALS
from .task import Task
from .worker import COMMAND_TIMEOUT

AsyncHandler = Callable[[Task], Awaitable[Outcome]]


class AsyncWorker:
    """A worker on one queue for asyncio programs: ``await worker.run(handler)``.

    The settings are ``Worker``'s, with ``concurrency`` (handlers running at once) in place
    of ``threads`` and no ``batch`` (one task per round trip).
    """

    def __init__(
        self,
        queue: str,
        redis: "RedisAddress | str | None" = None,
        *,
        concurrency: int = 1,
        worker_id: Optional[str] = None,
        heartbeat_ttl: Seconds = 10.0,
        queue_wait: Seconds = 30.0,
        fetch_timeout: Seconds = 1.0,
        timeout: Optional[Seconds] = None,
        log: Optional[LogSink] = None,
    ) -> None:
        address = as_address(redis)
        self._options = validated(queue, address, worker_id, concurrency, 1, heartbeat_ttl,
                                  queue_wait, fetch_timeout, timeout)
        self._keys = Keys.of(queue)
        self._processing = self._keys.processing(self._options.worker_id)
        self._heartbeat_key = self._keys.heartbeat(self._options.worker_id)
        self._done = 0  # reports the done list took, for the heartbeat's worker info
        self._log = WorkerLog(log, self._options.worker_id)
        self._declared = DeclaredValues(queue)
        self._address = address
        self._route: Optional[AsyncRoute] = None
        self._stop = threading.Event()  # set from signal handlers and other threads alike
        self._held: Set[str] = set()
        self._reply_lost = False
        self._suspects: Optional[Set[str]] = None
        self._suspects_at = 0.0
        self._looking = False  # a coroutine is looking for orphans
        self._beat_on = ""
        self._incarnation = ""  # chosen at each run, in the process that runs
        self._superseded = ""  # why this process gave the worker id up while serving
        self._beat_quit = False  # run() is done with the heartbeat
        self.bad_messages = 0

    @property
    def worker_id(self) -> str:
        return self._options.worker_id

    def stop(self) -> None:
        """Asks ``run()`` to drain and return. Safe from any thread and signal handler."""
        self._stop.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def _routed(self) -> AsyncRoute:
        if self._route is None:  # created inside the running event loop
            self._route = AsyncRoute(self._address, self._keys.ready,
                                     self._options.longest_block + COMMAND_TIMEOUT)
        return self._route

    async def run(self, handler: AsyncHandler, *, handle_signals: bool = True) -> None:
        """Runs ``handler`` on up to ``concurrency`` tasks at once until ``stop()``, then
        drains. With ``handle_signals`` on the main thread, SIGTERM and SIGINT call ``stop()``."""
        loop = asyncio.get_running_loop()
        installed: List[signal.Signals] = []
        if handle_signals and threading.current_thread() is threading.main_thread():
            for number in STOP_SIGNALS:
                loop.add_signal_handler(number, self._on_signal)
                installed.append(number)
        try:
            if not await self._join():
                return
            self._beat_quit = False
            beating = asyncio.ensure_future(self._beat_loop())
            try:
                results = await asyncio.gather(
                    *(self._serve_until_error(handler) for _ in range(self._options.threads)),
                    return_exceptions=True,
                )
            finally:
                self._beat_quit = True  # should the cancellation be lost in redis-py
                beating.cancel()
                await asyncio.gather(beating, return_exceptions=True)
                await self._leave()
            for result in results:
                if isinstance(result, BaseException):
                    raise result
            if self._superseded:
                raise Error(self._superseded)
        finally:
            for number in installed:
                loop.remove_signal_handler(number)
            await self._routed().close()
            self._route = None

    def _on_signal(self) -> None:
        # A second signal acts as it did before run() (by default it ends the process).
        loop = asyncio.get_running_loop()
        for number in STOP_SIGNALS:
            loop.remove_signal_handler(number)
        self.stop()

    async def _sleep_unless_stopped(self, seconds: float) -> None:
        until = time.monotonic() + seconds
        while not self._stop.is_set() and time.monotonic() < until:
            await asyncio.sleep(min(0.05, seconds))

    # --- membership -------------------------------------------------------------------

    async def _join(self) -> bool:
        deadline = time.monotonic() + self._options.queue_wait_ms / 1000
        backoff = Backoff()
        self._incarnation = incarnation.new_incarnation()
        while True:
            try:
                if not await self._wait_for_queue(deadline):
                    return False
                other = await self._beat(first=True)
                return other is None or await self._take_over(other)
            except RedisError as e:
                if not is_outage(e):
                    raise Error(f"redis {self._address.describe()}: {e}") from e
                self._log.redis_failed(e)
            await self._sleep_unless_stopped(backoff.next())
            if self._stop.is_set():
                return False

    async def _wait_for_queue(self, deadline: float) -> bool:
        while True:
            async def look(c: Any) -> Any:
                pipe = c.pipeline(transaction=False)
                pipe.exists(self._keys.meta)
                pipe.hget(self._keys.meta, "values")
                pipe.hget(self._keys.meta, "protocol")
                return await pipe.execute()

            if queue_announced(self._options, self._declared, *await self._routed().run(look)):
                return True
            now = time.monotonic()
            if now >= deadline:
                raise unknown_queue(self._options, self._keys)
            if self._stop.is_set():
                return False
            await asyncio.sleep(min(QUEUE_POLL, deadline - now))

    async def _beat(self, first: bool = False) -> Optional[str]:
        """beat.lua: None when the beat went through, else the heartbeat's value (another
        incarnation's)."""
        route = self._routed()
        replicated = self._address.replicated
        node = await route.node() if replicated else ""
        if replicated and self._beat_on and node != self._beat_on:
            given = await route.run(lambda c: scripts.GIVE_BACK.call_async(
                c, [self._processing, self._keys.ready], []))
            if given:
                self._log.line(f"Redis failed over: gave {given} task(s) in hand back to the "
                               "ready list; they run again")

        keys = incarnation.beat_keys(self._keys, self._options.worker_id)
        args = incarnation.beat_args(
            self._options.worker_id, format_worker_info(self._done, self._options.heartbeat_ttl_ms),
            self._options.heartbeat_ttl_ms, self._incarnation, first)
        reply = await route.run(lambda c: scripts.BEAT.call_async(c, keys, args))
        other = incarnation.beat_reply(reply)
        if other is not None:
            return other
        left = incarnation.left_tasks(reply)
        if left:
            self._log.line(f"gave {left} task(s) left in {self._processing} by an earlier process "
                           f"of worker id '{self._options.worker_id}' back as retries")
        values = await route.run(lambda c: c.hget(self._keys.meta, "values"))
        if values is not None:
            self._declared.update(values)
        self._log.redis_ok()
        self._beat_on = node
        return None

    async def _take_over(self, other: str) -> bool:
        """After the first beat found ``other`` in the heartbeat: waits until it lapses (then
        beats) or is renewed (then raises Error). False when stop came first."""
        self._log.line(f"worker id '{self._options.worker_id}' has a heartbeat of another "
                       "process; starting once it lapses")
        route = self._routed()

        async def look(c: Any) -> Any:
            pipe = c.pipeline(transaction=False)
            pipe.get(self._heartbeat_key)
            pipe.pttl(self._heartbeat_key)
            return await pipe.execute()

        last_ttl = await route.run(lambda c: c.pttl(self._heartbeat_key))
        while True:
            why = incarnation.renewed(other, last_ttl, other, last_ttl)
            if why:
                raise incarnation.in_use(self._options.worker_id, self._heartbeat_key, other, why)
            await self._sleep_unless_stopped(incarnation.TAKE_OVER_POLL)
            if self._stop.is_set():
                return False
            value, ttl = await route.run(look)
            if value is None:  # it lapsed or its process stopped: ours, unless another came first
                again = await self._beat(first=True)
                if again is None:
                    return True
                other = again
                last_ttl = await route.run(lambda c: c.pttl(self._heartbeat_key))
                continue
            if isinstance(value, bytes):
                value = value.decode("utf-8", "replace")
            why = incarnation.renewed(other, last_ttl, value, ttl)
            if why:
                raise incarnation.in_use(self._options.worker_id, self._heartbeat_key, other, why)
            last_ttl = ttl

    async def _beat_loop(self) -> None:
        interval = self._options.heartbeat_interval_ms / 1000
        backoff = Backoff()
        wait = interval
        while True:
            # In short sleeps that look at _beat_quit: redis-py (4.3 with async_timeout 4.0)
            # can swallow the cancellation of a beat that is in a command at that moment.
            until = time.monotonic() + wait
            while time.monotonic() < until:
                if self._beat_quit:
                    return
                await asyncio.sleep(min(0.05, wait))
            try:
                other = await self._beat()
                if other is not None:
                    # Ours lapsed and another process took the worker id over (and gave back
                    # what we held): stop taking tasks into a list that is no longer ours.
                    self._superseded = incarnation.taken_over(
                        self._options.worker_id, self._heartbeat_key, other)
                    self._log.line(self._superseded)
                    self._stop.set()
                    return
                backoff.reset()
                wait = interval
            except RedisError as e:
                self._log.redis_failed(e)
                wait = min(backoff.next(), interval)

    async def _leave(self) -> None:
        keys = [self._heartbeat_key, self._processing, self._keys.workers]
        backoff = Backoff()
        for attempt in (1, 2, 3):
            try:
                left = await self._routed().run(lambda c: scripts.LEAVE.call_async(
                    c, keys, [self._options.worker_id, self._incarnation]))
                if left == -1:
                    self._log.line("left the heartbeat alone: another process holds worker id "
                                   f"'{self._options.worker_id}'")
                elif left:
                    self._log.line(f"{left} task(s) left in {self._processing}; "
                                   "the dispatcher takes them back")
                return
            except RedisError as e:
                if attempt == 3:
                    self._log.line(f"could not sign off ({e}); the heartbeat lapses on its own")
                    return
            await asyncio.sleep(backoff.next())

    # --- serving ----------------------------------------------------------------------

    async def _serve_until_error(self, handler: AsyncHandler) -> None:
        """A failure of the worker itself (a bug) stops the other coroutines too; they drain."""
        try:
            await self._serve(handler)
        except BaseException:
            self._stop.set()
            raise

    async def _serve(self, handler: AsyncHandler) -> None:
        backoff = Backoff()
        while not self._stop.is_set():
            try:
                task = await self._fetch(self._options.fetch_timeout_ms / 1000)
                backoff.reset()
                self._log.redis_ok()
            except RedisError as e:
                self._log.redis_failed(e)
                await self._sleep_unless_stopped(backoff.next())
                continue
            if task is None:
                continue
            try:
                started = time.monotonic()
                outcome = await self._handle(handler, task)
                handled = time.monotonic() - started
                await self._report(task, checked_done_message(task, outcome, self._declared,
                                                              handled))
            finally:
                self._held.discard(task.message)

    async def _handle(self, handler: AsyncHandler, task: Task) -> Outcome:
        deadline = task_deadline_ms(task, self._options.timeout_ms, self._log)
        try:
            if deadline is None:
                outcome = await handler(task)
            else:
                outcome = await asyncio.wait_for(handler(task), deadline / 1000)
        except asyncio.TimeoutError:
            task.cancelled.set()
            return retry("timeout")
        except Exception as e:
            return retry(str(e) or type(e).__name__)
        if not isinstance(outcome, Outcome):
            return retry(f"the handler returned {type(outcome).__name__}, not a rowpump Outcome")
        return outcome

    async def _fetch(self, timeout: float) -> Optional[Task]:
        route = self._routed()
        deadline = time.monotonic() + timeout
        while True:
            await self._give_back_orphans()
            left = deadline - time.monotonic()
            block = max(0.001, min(left, self._options.longest_block))
            try:
                message = await route.run(lambda c: c.blmove(
                    self._keys.ready, self._processing, f"{block:.3f}", "LEFT", "RIGHT"))
            except (RedisConnectionError, RedisTimeoutError):
                self._reply_lost = True
                raise
            if message is None:
                if block < left and not self._stop.is_set():
                    continue
                return None
            try:
                task = parse_ready(message)
            except MalformedMessage as e:
                await route.run(lambda c: scripts.COMPLETE.call_async(
                    c, [self._processing, self._keys.bad], [message, message]))
                self.bad_messages += 1
                self._log.line(f"malformed ready message '{log_text(message)}' "
                               f"({log_text(str(e))}) moved to {self._keys.bad}")
                continue
            self._held.add(message)
            return task

    async def _give_back_orphans(self) -> None:
        """HeldTasks.give_back_orphans for coroutines: one looks at a time (the others go on
        fetching), and a look that fails is tried again."""
        if self._looking or (not self._reply_lost and self._suspects is None):
            return
        self._looking = True
        try:
            await self._look_for_orphans()
        finally:
            self._looking = False

    async def _look_for_orphans(self) -> None:
        route = self._routed()
        now = time.monotonic()
        suspects = self._suspects
        if suspects is None:
            self._reply_lost = False  # a reply lost from now on starts a look of its own
            try:
                listed = await route.run(lambda c: c.lrange(self._processing, 0, -1))
            except BaseException:
                self._reply_lost = True
                raise
            self._suspects = {m for m in listed if m not in self._held} or None
            self._suspects_at = now
            return
        if now - self._suspects_at < ORPHAN_AGE:
            return
        listed = await route.run(lambda c: c.lrange(self._processing, 0, -1))
        args = [m for m in sorted(set(listed) & suspects) if m not in self._held
                for _ in (0, 1)]
        moved = 0
        if args:
            moved = await route.run(lambda c: scripts.COMPLETE.call_async(
                c, [self._processing, self._keys.ready], args))
        self._suspects = None  # only now: a look that failed is tried again
        if moved:
            self._log.line(f"gave back {moved} task(s) that a fetch had moved into "
                           f"{self._processing} but whose reply was lost")

    async def _report(self, task: Task, done: str) -> None:
        reports = [(task, done)]
        backoff = Backoff()
        failing_since: Optional[float] = None
        keys = [self._processing, self._keys.done]
        while True:
            try:
                accepted = await self._routed().run(lambda c: scripts.COMPLETE.call_async(
                    c, keys, [ready_message(task), done]))
                self._done += int(accepted)
                text = refused_text(reports, int(accepted))
                if text and failing_since is None:
                    self._log.line(text)
                self._log.redis_ok()
                return
            except RedisError as e:
                self._log.redis_failed(e)
                now = time.monotonic()
                if failing_since is None:
                    failing_since = now
                    self._log.line(f"report on {tasks_text(reports)} failed ({e}); retrying")
                if self._stop.is_set() and now - failing_since >= self._options.heartbeat_ttl_ms / 1000:
                    self._log.line(f"gave up reporting on {tasks_text(reports)}; it stays in "
                                   f"{self._processing} until the dispatcher takes it back")
                    return
            await asyncio.sleep(backoff.next())

    async def extend(self, task: Task, lease: Seconds) -> None:
        """Keeps the claim for ``lease`` from now; the task stays in hand."""
        lease_ms = to_millis(lease)
        if lease_ms <= 0:
            raise Error("extend: the lease must be positive")
        text = format_done(task, "extend", lease_ms=lease_ms)
        try:
            await self._routed().run(lambda c: c.rpush(self._keys.done, text))
        except RedisError as e:
            raise ConnectionError(f"extend: {e}") from e
