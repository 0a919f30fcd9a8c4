"""The Celery app ("spectacular"): deadline backstops and sweeps run here when REDIS_URL is set.

Start a worker with ``celery -A config worker`` (and ``celery -A config beat`` for
periodic tasks). Configuration comes from Django settings named ``CELERY_*``;
tasks are found in each app's ``tasks.py``.
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("spectacular")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
