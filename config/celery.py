"""The Celery app ("spectacular"): the deadline sweeper and periodic jobs, when REDIS_URL is set.

Start a worker with ``celery -A config worker -P threads`` (and ``celery -A
config beat`` for the periodic jobs). Configuration comes from Django settings
named ``CELERY_*``; tasks are found in each app's ``tasks.py``.

Every worker process also runs the deadline sweeper (``matches.clock.sweeper``) on a
thread of its own, from start to shutdown (:class:`SweeperStep`): deadlines
live in the database, so a worker that was killed loses nothing, and its
successor resolves whatever fell due meanwhile at its first pass.
"""

import os
from typing import Any

from celery import Celery, bootsteps

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("spectacular")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


class SweeperStep(bootsteps.StartStopStep):
    """Runs ``matches.clock.sweeper.SweeperThread`` for the life of the worker."""

    requires = {"celery.worker.components:Timer"}

    def start(self, worker: Any) -> None:
        from matches.clock import sweeper

        sweeper.start_thread()

    def stop(self, worker: Any) -> None:
        from matches.clock import sweeper

        sweeper.stop_thread()


app.steps["worker"].add(SweeperStep)
